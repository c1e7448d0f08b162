/*
 * tir.c: building Tile IR. Everything is allocated in the context's arena;
 * the growable arrays (ops of a block, values, buffers, functions) are
 * re-allocated there by doubling, which wastes a little memory and keeps
 * ownership trivial.
 */
#include <string.h>

#include "tir.h"

static const struct {
	const char *name;
	int nargs, result;
	unsigned flags;
} op_table[] = {
#define OP(id, name, nargs, result, flags) [id] = {name, nargs, result, flags},
#include "ops.def"
#undef OP
};

const char *tir_op_name(OpCode c) { return op_table[c].name; }
int tir_op_nargs(OpCode c) { return op_table[c].nargs; }
int tir_op_result(OpCode c) { return op_table[c].result; }
unsigned tir_op_flags(OpCode c) { return op_table[c].flags; }

const char *tir_sreg_name(Sreg s)
{
	static const char *const names[SREG_COUNT] = {
		"tid.x", "tid.y", "tid.z", "ctaid.x", "ctaid.y", "ctaid.z",
		"ntid.x", "ntid.y", "ntid.z", "nctaid.x", "nctaid.y", "nctaid.z",
		"laneid", "warpid", "cluster.ctarank",
	};
	return (unsigned)s < SREG_COUNT ? names[s] : "?";
}

const char *tir_shfl_name(ShflMode m)
{
	static const char *const names[] = {"bfly", "down", "up", "idx"};
	return (unsigned)m < 4 ? names[m] : "?";
}

/* Grows an arena array of `elem`-sized items to hold `need`. */
static void *grow(Ctx *cx, void *arr, int *cap, int need, size_t elem)
{
	if (need <= *cap)
		return arr;
	int ncap = *cap ? *cap * 2 : 8;
	while (ncap < need)
		ncap *= 2;
	void *p = ctx_alloc(cx, (size_t)ncap * elem);
	if (*cap)
		memcpy(p, arr, (size_t)*cap * elem);
	*cap = ncap;
	return p;
}

TirModule *tir_module_new(Ctx *cx)
{
	return ctx_alloc(cx, sizeof(TirModule));
}

TirFunc *tir_func_new(Ctx *cx, TirModule *m, const char *name, bool is_kernel)
{
	TirFunc *f = ctx_alloc(cx, sizeof(TirFunc));
	f->name = name;
	f->is_kernel = is_kernel;
	f->ret = DT_VOID;
	f->body = tir_block_new(cx);
	f->threads[0] = f->threads[1] = f->threads[2] = 1;
	m->funcs = grow(cx, m->funcs, &m->cap, m->nfuncs + 1, sizeof(TirFunc *));
	m->funcs[m->nfuncs++] = f;
	return f;
}

int tir_new_value(Ctx *cx, TirFunc *f, DType ty)
{
	int cap = f->cap_values;
	f->vtypes = grow(cx, f->vtypes, &f->cap_values, f->nvalues + 1, sizeof(DType));
	f->vcols = grow(cx, f->vcols, &cap, f->nvalues + 1, sizeof(int));
	f->vtypes[f->nvalues] = ty;
	f->vcols[f->nvalues] = 0;
	return f->nvalues++;
}

int tir_new_frag(Ctx *cx, TirFunc *f, int cols)
{
	int v = tir_new_value(cx, f, DT_F32);
	f->vcols[v] = cols;
	return v;
}

int tir_add_buffer(Ctx *cx, TirFunc *f, const char *name, Type ty, int param,
		   Loc loc)
{
	f->bufs = grow(cx, f->bufs, &f->cap_bufs, f->nbufs + 1, sizeof(TirBuffer));
	f->bufs[f->nbufs] = (TirBuffer){name, ty, param, 0, loc, -1};
	return f->nbufs++;
}

Block *tir_block_new(Ctx *cx)
{
	return ctx_alloc(cx, sizeof(Block));
}

Op *tir_op_new(Ctx *cx, OpCode code, DType ty, Loc loc)
{
	Op *op = ctx_alloc(cx, sizeof(Op));
	op->code = code;
	op->ty = ty;
	op->result = -1;
	op->buf = -1;
	op->loc = loc;
	return op;
}

void tir_op_set_args(Ctx *cx, Op *op, const int *args, int n)
{
	op->args = ctx_alloc(cx, (size_t)(n ? n : 1) * sizeof(int));
	if (n)
		memcpy(op->args, args, (size_t)n * sizeof(int));
	op->nargs = n;
}

void tir_block_append(Ctx *cx, Block *b, Op *op)
{
	b->ops = grow(cx, b->ops, &b->cap, b->nops + 1, sizeof(Op *));
	b->ops[b->nops++] = op;
}
