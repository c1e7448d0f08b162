/*
 * sema.h: what sema.c (scalar language) and sema_tile.c (the Hopper tile
 * constructs) share: the checker's state and its basic helpers.
 */
#ifndef SEMA_H
#define SEMA_H

#include "tilec.h"

/* The more varying of two values (Vary is ordered). */
static inline Vary vary_max(Vary a, Vary b)
{
	return a > b ? a : b;
}

typedef struct CallEdge {
	Symbol *caller, *callee;
	Loc loc;
} CallEdge;

/* One arrive site of an mbarrier: how many threads arrive each time it
 * runs (-1 when that depends on run-time values). */
typedef struct ArriveSite {
	Symbol *bar;
	int threads;
	Loc loc;
} ArriveSite;

typedef struct SymEntry SymEntry;

typedef struct Sema {
	Ctx *cx;
	SymEntry *entries;    /* names: a hash table, open addressing (sema.c) */
	int nentries, cap_entries;
	int nseq;             /* locals brought into scope so far (Symbol.seq) */
	int locals_hidden;    /* > 0: lookups see top-level names only */
	Symbol *scope;        /* innermost local first */
	Symbol *frags;        /* the fragments in scope, innermost first */
	int const_levels;     /* expression levels of the constants being checked */
	Symbol *const_root;   /* the outermost of them */
	Symbol *fn;           /* the function or kernel being checked */
	int loop_depth;
	int block_depth;      /* 1 = the top level of a body */
	CallEdge *edges;
	int nedges, cap_edges;
	/* tile constructs */
	Node *role;           /* the role being checked, or NULL */
	int block_threads;    /* threads of the kernel's block */
	long long ctas_per_sm; /* ctas_per_sm(N) when given and valid, else 0 */
	bool has_cluster;      /* the kernel has a cluster(...) launch item */
	bool peer_mbar;        /* the kernel reaches another CTA's mbarriers (a multicast
	                        * tma_load, arrive at a rank): its barriers' inits end in a
	                        * cluster barrier */
	int divergent;        /* depth of thread-dependent branches */
	int lane_divergent;   /* ... of those whose lanes of one warp may differ (not warp_id's) */
	int elected;          /* depth of 'if elect_one()' branches */
	int conditional;      /* depth of other branches: arrivals there are not counted */
	ArriveSite *sites;
	int nsites, cap_sites;
	Node *roles[8];       /* roles of the kernel being checked */
	int nroles;
	Symbol *pairs[16][2]; /* role pairs with a named barrier (signal/sync) */
	int npairs;
	/* wgmma groups committed so far, in program order: mma_async commits
	 * one each, so mma_wait(x, n) finishes every group but the n newest */
	int mma_groups;
	/* RS mma_async calls inside loops (their accumulator, the call, the
	 * loop depth, its group, whether a wait has finished it): at the end of
	 * the loop body each must have been waited */
	struct { Symbol *acc; Node *call; int depth; int group; bool waited; } rs_async[32];
	int nrs_async;
	/* SS mma_async groups in flight that read one stage of a shared array (the
	 * stage's index): arriving on a barrier indexed alike before a wait finishes
	 * the group lets a producer refill the stage the wgmma still reads */
	struct { Node *stage; Node *call; Symbol *acc; int group; } stage_reads[16];
	int nstage_reads;
	/* the kernel had a pipelined loop (N_KERNEL.op); pipeline_failed: its rewrite
	 * was refused (the error said why), so the roles it would have made are missing */
	bool pipelined, pipeline_failed;
	int kernel_diags, kernel_errors; /* cx->ndiags, cx->nerrors when the kernel's check began */
	/* tile helpers being inlined (sema_inline.c): the innermost last; locals up to
	 * local_floor (a Symbol.seq) are the callers' and hidden from the helper's body */
	Symbol *inlining[TILEC_MAX_INLINE_DEPTH];
	int ninlining;
	int local_floor;
	int loop_floor;       /* loop_depth where the helper's body began */
	long inline_count;    /* tile helper calls expanded in this kernel */
	Node *stmt_call;      /* the call a statement is made of, where a tile helper may be */
} Sema;

DType sema_expr(Sema *S, Node *e);
void sema_stmt(Sema *S, Node *st, Symbol *mark);
Symbol *sema_new_symbol(Sema *S, SymKind kind, const char *name, Node *decl);
void sema_push(Sema *S, Symbol *s);
void sema_block(Sema *S, Node *block);
Symbol *sema_lookup(Sema *S, const char *name);
void sema_check_rs_loop(Sema *S, int depth);
Symbol *sema_declare(Sema *S, SymKind kind, Node *decl, Symbol *mark);
void sema_pop_scope(Sema *S, Symbol *mark);
bool sema_coerce(Sema *S, Node *e, DType want);
DType sema_concrete(Sema *S, Node *e);
void sema_set_scalar(Node *e, DType dt);
bool sema_resolve_dim(Sema *S, Node *kernel, Node *d, Dim *out);
bool sema_expect_args(Sema *S, Node *e, int n);
bool sema_check_args(Sema *S, Node *e);
const char *sema_sym_kind_name(SymKind k);
void sema_warn(Sema *S, Loc loc, DiagId id, ...);

/* sema_expr.c: operand classes of operators, unification of operand types */
typedef enum OperandClass { OC_NUMERIC, OC_INT, OC_BOOL, OC_INT_OR_BOOL, OC_ANY } OperandClass;
OperandClass sema_operand_class(OpKind op);
bool sema_class_accepts(OperandClass c, DType dt);
const char *sema_class_name(OperandClass c);
DType sema_unify(Sema *S, Node *at, const char *what, Node *a, Node *b);
/* sema.c */
void sema_const_decl(Sema *S, Symbol *sym);

/* sema_inline.c: helpers with tile parameters, inlined where they are called */
void sema_mark_tile_helpers(Sema *S, Node **items, int nitems);
DType sema_inline_call(Sema *S, Node *e, Symbol *fn);
DType sema_inline_elementwise(Sema *S, Node *e, Symbol *fn);
bool sema_is_ref_type(const Node *type);

/* sema_tile.c */
bool sema_view(Sema *S, Node *e, Space want);
Symbol *sema_mbar_ref(Sema *S, Node *e, const char *op);
Type sema_tma_param_type(Sema *S, Node *kernel, Node *p);
bool sema_tile_swizzle(Sema *S, Node *type_node, Type *t);
void sema_mbarrier(Sema *S, Node *st, Symbol *mark);
void sema_role(Sema *S, Node *st);
void sema_frag(Sema *S, Node *st, Symbol *mark);
DType sema_tile_call(Sema *S, Node *e, Builtin b);
void sema_kernel_begin(Sema *S, Node *kernel);
void sema_kernel_end(Sema *S, Node *kernel);
bool sema_is_tile_builtin(Builtin b);
bool sema_in_role(Sema *S, Loc at, const char *what);
bool sema_cluster_ok(Sema *S, Node *e, const char *what);
/* fragments in expressions */
bool sema_scalar(Sema *S, Node *e, const char *where);
bool sema_frag_shape(Sema *S, Node *e);
bool sema_is_frag(const Node *e);

#endif
