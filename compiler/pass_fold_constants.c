/*
 * pass_fold_constants.c: folds integer arithmetic on constants and removes
 * the identities that index lowering produces (x * 1, x + 0, 0 * x), then
 * drops pure ops whose results are unused.
 *
 * requires: tir_verify passes
 * ensures:  no pure integer op has only constant operands; no value is
 *           used that is not defined; the IR's meaning is unchanged
 *           (i32 arithmetic wraps as the GPU's does)
 *
 * LLVM would fold these too; doing it here keeps --emit=tir readable and the
 * golden files small.
 */
#include <string.h>

#include "tir.h"

typedef struct Fold {
	Ctx *cx;
	TirFunc *f;
	Op **def;       /* defining op of each value */
	int *subst;     /* value -> replacement value (itself if none) */
	int *uses;
} Fold;

static bool const_int(Fold *F, int v, int64_t *out)
{
	Op *d = F->def[v];
	if (!d || d->code != OP_CONST || !dtype_is_int(d->ty))
		return false;
	*out = d->imm;
	return true;
}

static int64_t wrap(DType t, int64_t v)
{
	return t == DT_I32 ? (int64_t)(int32_t)(uint32_t)v : v;
}

/* Folds a op b for integer constants; false when not foldable here. */
static bool fold_values(OpCode c, DType t, int64_t a, int64_t b, int64_t *r)
{
	uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
	int bits = t == DT_I32 ? 32 : 64;
	switch (c) {
	case OP_ADD: *r = (int64_t)(ua + ub); break;
	case OP_SUB: *r = (int64_t)(ua - ub); break;
	case OP_MUL: *r = (int64_t)(ua * ub); break;
	case OP_DIV: case OP_REM:
		if (b == 0 || (b == -1 && a == (t == DT_I32 ? INT32_MIN : INT64_MIN)))
			return false; /* leave the run-time behaviour alone */
		*r = c == OP_DIV ? a / b : a % b;
		break;
	case OP_AND: *r = a & b; break;
	case OP_OR: *r = a | b; break;
	case OP_XOR: *r = a ^ b; break;
	case OP_MIN: *r = a < b ? a : b; break;
	case OP_MAX: *r = a > b ? a : b; break;
	case OP_SHL: case OP_SHR:
		if (b < 0 || b >= bits)
			return false;
		*r = c == OP_SHL ? (int64_t)(ua << b) : a >> b;
		break;
	default: return false;
	}
	*r = wrap(t, *r);
	return true;
}

static void make_const(Op *op, int64_t v)
{
	op->code = OP_CONST;
	op->imm = v;
	op->nargs = 0;
}

/* x*1, 1*x, x+0, 0+x, x-0 -> x;  x*0, 0*x -> 0 */
static bool simplify_identity(Fold *F, Op *op, int64_t *zero)
{
	int64_t a = 0, b = 0;
	bool ca = const_int(F, op->args[0], &a), cb = const_int(F, op->args[1], &b);
	int x = op->args[0], y = op->args[1];
	if (op->code == OP_MUL && ((ca && a == 0) || (cb && b == 0))) {
		*zero = 1;
		return true;
	}
	int keep = -1;
	if (op->code == OP_MUL)
		keep = cb && b == 1 ? x : ca && a == 1 ? y : -1;
	else if (op->code == OP_ADD)
		keep = cb && b == 0 ? x : ca && a == 0 ? y : -1;
	else if (op->code == OP_SUB)
		keep = cb && b == 0 ? x : -1;
	if (keep < 0)
		return false;
	F->subst[op->result] = keep;
	return true;
}

static void fold_op(Fold *F, Op *op)
{
	for (int i = 0; i < op->nargs; i++)
		op->args[i] = F->subst[op->args[i]];
	if (op->result >= 0)
		F->def[op->result] = op;
	if (!(tir_op_flags(op->code) & F_PURE) || op->nargs != 2 ||
	    !dtype_is_int(op->ty))
		return;
	int64_t a, b, r;
	if (const_int(F, op->args[0], &a) && const_int(F, op->args[1], &b) &&
	    fold_values(op->code, op->ty, a, b, &r)) {
		make_const(op, r);
		return;
	}
	int64_t zero = 0;
	if (simplify_identity(F, op, &zero) && zero)
		make_const(op, 0);
}

static void fold_block(Fold *F, Block *b)
{
	for (int i = 0; i < b->nops; i++) {
		fold_op(F, b->ops[i]);
		for (int k = 0; k < 2; k++)
			if (b->ops[i]->blocks[k])
				fold_block(F, b->ops[i]->blocks[k]);
	}
}

static void count_uses(Fold *F, Block *b)
{
	for (int i = 0; i < b->nops; i++) {
		Op *op = b->ops[i];
		for (int a = 0; a < op->nargs; a++)
			F->uses[op->args[a]]++;
		for (int k = 0; k < 2; k++)
			if (op->blocks[k])
				count_uses(F, op->blocks[k]);
	}
}

/* Removes unused pure ops, last to first, so chains die in one sweep. */
static void remove_dead(Fold *F, Block *b)
{
	int n = 0;
	for (int i = b->nops - 1; i >= 0; i--) {
		Op *op = b->ops[i];
		for (int k = 0; k < 2; k++)
			if (op->blocks[k])
				remove_dead(F, op->blocks[k]);
		bool dead = (tir_op_flags(op->code) & F_PURE) && op->result >= 0 &&
			    F->uses[op->result] == 0;
		if (dead) {
			for (int a = 0; a < op->nargs; a++)
				F->uses[op->args[a]]--;
			b->ops[i] = NULL;
		}
	}
	for (int i = 0; i < b->nops; i++)
		if (b->ops[i])
			b->ops[n++] = b->ops[i];
	b->nops = n;
}

bool pass_fold_constants(Ctx *cx, TirModule *m)
{
	for (int i = 0; i < m->nfuncs; i++) {
		TirFunc *f = m->funcs[i];
		size_t n = (size_t)f->nvalues + 1;
		Fold F = {cx, f, ctx_alloc(cx, n * sizeof(Op *)),
			  ctx_alloc(cx, n * sizeof(int)), ctx_alloc(cx, n * sizeof(int))};
		for (int v = 0; v < f->nvalues; v++)
			F.subst[v] = v;
		fold_block(&F, f->body);
		count_uses(&F, f->body);
		remove_dead(&F, f->body);
	}
	return true;
}
