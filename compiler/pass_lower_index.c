/*
 * pass_lower_index.c: multi-dimensional tensor accesses to linear offsets.
 *
 * requires: tir_verify passes; loads/stores use one index per dimension
 * ensures:  every load/store is an 'ld'/'st' with one element offset:
 *           i64 for global tensors (which may exceed 2^31 elements), i32 for
 *           shared arrays (at most 227 KiB); the tensor layout is row-major,
 *           so offset = ((i0 * d1 + i1) * d2 + i2) ...; symbolic extents are
 *           read from their scalar parameters; in a swizzled shared tile the
 *           offset goes through the same XOR that TMA and wgmma use (the
 *           16-byte chunk index within a row XORed with the row's position in
 *           the swizzle repeat), so SIMT code sees the tile's logical layout
 */
#include "tir.h"

typedef struct IndexLowering {
	Ctx *cx;
	TirFunc *f;
	Block *out;   /* the block being rebuilt */
} IndexLowering;

static int add_op(IndexLowering *X, OpCode code, DType ty, Loc loc,
		  const int *args, int n, int64_t imm)
{
	Op *op = tir_op_new(X->cx, code, ty, loc);
	tir_op_set_args(X->cx, op, args, n);
	op->imm = imm;
	op->result = tir_new_value(X->cx, X->f, ty);
	tir_block_append(X->cx, X->out, op);
	return op->result;
}

static int convert(IndexLowering *X, int v, DType to, Loc loc)
{
	if (X->f->vtypes[v] == to)
		return v;
	return add_op(X, OP_CAST, to, loc, &v, 1, 0);
}

/* The extent of dimension `d` of `b` as a value of type `t`. */
static int extent(IndexLowering *X, const TirBuffer *b, int d, DType t, Loc loc)
{
	const Dim *dim = &b->ty.dims[d];
	if (dim->param < 0)
		return add_op(X, OP_CONST, t, loc, NULL, 0, dim->value);
	DType pt = X->f->params[dim->param].ty.dt;
	int p = add_op(X, OP_PARAM, pt, loc, NULL, 0, dim->param);
	return convert(X, p, t, loc);
}

static int linear_offset(IndexLowering *X, const Op *op, const int *idx, int n)
{
	const TirBuffer *b = &X->f->bufs[op->buf];
	DType t = b->ty.space == SP_GLOBAL ? DT_I64 : DT_I32;
	int off = convert(X, idx[0], t, op->loc);
	for (int d = 1; d < n; d++) {
		int args[2] = {off, extent(X, b, d, t, op->loc)};
		off = add_op(X, OP_MUL, t, op->loc, args, 2, 0);
		args[0] = off;
		args[1] = convert(X, idx[d], t, op->loc);
		off = add_op(X, OP_ADD, t, op->loc, args, 2, 0);
	}
	return off;
}

static int constant(IndexLowering *X, int64_t v, Loc loc)
{
	return add_op(X, OP_CONST, DT_I32, loc, NULL, 0, v);
}

static int binary(IndexLowering *X, OpCode code, int a, int b, Loc loc)
{
	int args[2] = {a, b};
	return add_op(X, code, DT_I32, loc, args, 2, 0);
}

/* Element offset -> swizzled element offset. Swizzled tiles start on a
 * swizzle-repeat boundary (plan-smem aligns them to 1024 bytes), so the
 * buffer-relative offset has the same low bits as the arena's. The XOR (the
 * 16-byte chunk index within a 128-byte line, with the line's place in the
 * repeat) is formed on the element offset itself, on its chunk bits only:
 * accesses to one chunk then share the XOR and differ by a constant that the
 * back end folds into the load's immediate (through bytes, with a division
 * back to elements, every access had its own: ~12 integer operations each in
 * kda_bwd_wy's per-channel loop). */
static int swizzle_offset(IndexLowering *X, const TirBuffer *b, int off, Loc loc)
{
	int lg = 0;
	while ((1 << lg) < dtype_bytes(b->ty.dt))
		lg++;
	int per_chunk = 16 >> lg;
	int line = binary(X, OP_AND, binary(X, OP_SHR, off, constant(X, 7 - lg, loc), loc),
			  constant(X, b->ty.swizzle / 16 - 1, loc), loc);
	int chunk = binary(X, OP_AND, off, constant(X, -per_chunk, loc), loc);
	int within = binary(X, OP_AND, off, constant(X, per_chunk - 1, loc), loc);
	chunk = binary(X, OP_XOR, chunk, binary(X, OP_SHL, line, constant(X, 4 - lg, loc), loc), loc);
	return binary(X, OP_OR, chunk, within, loc);
}

static void rewrite_access(IndexLowering *X, Op *op)
{
	bool store = op->code == OP_STORE, extra = mo_extra_operand(op->attr[0]);
	int first = store ? 1 : 0;
	int off = linear_offset(X, op, op->args + first, op->nargs - first - extra);
	const TirBuffer *b = &X->f->bufs[op->buf];
	if (b->ty.space == SP_SHARED && b->ty.swizzle)
		off = swizzle_offset(X, b, off, op->loc);
	int args[2] = {off, store ? op->args[0] : extra ? op->args[op->nargs - 1] : 0};
	op->code = store ? OP_ST : OP_LD;
	tir_op_set_args(X->cx, op, args, store || extra ? 2 : 1);
}

static void lower_block(IndexLowering *X, Block *b)
{
	Block *saved = X->out;
	X->out = tir_block_new(X->cx);
	for (int i = 0; i < b->nops; i++) {
		Op *op = b->ops[i];
		if (op->code == OP_LOAD || op->code == OP_STORE)
			rewrite_access(X, op);
		for (int k = 0; k < 2; k++)
			if (op->blocks[k])
				lower_block(X, op->blocks[k]);
		tir_block_append(X->cx, X->out, op);
	}
	*b = *X->out;
	X->out = saved;
}

bool pass_lower_index(Ctx *cx, TirModule *m)
{
	for (int i = 0; i < m->nfuncs; i++) {
		IndexLowering X = {.cx = cx, .f = m->funcs[i]};
		lower_block(&X, X.f->body);
		X.f->indices_lowered = true;
	}
	return true;
}
