/*
 * lower.h: what lower.c (the scalar language) and lower_tile.c (the Hopper
 * tile constructs) share while turning the typed AST into Tile IR.
 */
#ifndef LOWER_H
#define LOWER_H

#include "tir.h"

struct Lower {
	Ctx *cx;
	TirModule *m;
	TirFunc *f;
	Block *cur;
	Node *role;       /* the role being lowered (wg_rank is relative to it) */
	int nroles;       /* roles seen in this kernel: named barrier ids */
	int role_count;   /* roles of this kernel: pair barriers are numbered after */
	Symbol *pairs[16][2];
	int npairs;
};

Op *lower_emit(Lower *L, OpCode code, DType ty, Loc loc, const int *args, int nargs);
int lower_emit_value(Lower *L, OpCode code, DType ty, Loc loc, const int *args, int nargs);
int lower_const_int(Lower *L, DType ty, int64_t v, Loc loc);
int lower_sreg(Lower *L, Sreg s, Loc loc);
int lower_new_var(Lower *L, DType ty, Loc loc);
void lower_var_set(Lower *L, int var, int value, Loc loc);
int lower_var_get(Lower *L, int var, Loc loc);
int lower_arith(Lower *L, OpKind k, DType ty, int a, int b, Loc loc);
Op *lower_region(Lower *L, OpCode code, Loc loc, const int *args, int n);
void lower_in_block(Lower *L, Block *b, void (*fn)(Lower *, Node *), Node *arg);
int lower_expr(Lower *L, Node *e);
int lower_shape(const Node *e);
int lower_broadcast(Lower *L, int v, int cols, Loc loc);
void lower_block(Lower *L, Node *block);

#endif
