/*
 * tir_verify.c: structural checks of Tile IR, run after lowering and (with
 * --verify-each) after every pass. A failure is a compiler bug, reported as
 * an internal error naming the function and op.
 *
 * Checked: operand counts and result presence against ops.def; every operand
 * defined before use, in its block or an enclosing one; var.get/var.set name
 * a 'var'; operand types agree with the op's rule; memory ops name a buffer
 * and use the right indexing form for the current stage; 'condition' ends a
 * while's condition block; break/continue sit inside loops.
 */
#include <string.h>

#include "tir.h"

typedef struct Verify {
	Ctx *cx;
	TirFunc *f;
	TirModule *m;
	char *defined;     /* per value: defined and in scope */
	char *is_var;      /* per value: defined by OP_VAR */
	int loop_depth;
	bool ok;
} Verify;

static void fail(Verify *V, const Op *op, const char *what)
{
	if (V->ok)
		diag_internal(V->cx, "tir-verify", "%s: '%s' at %d:%d: %s",
			      V->f->name, tir_op_name(op->code), op->loc.line,
			      op->loc.col, what);
	V->ok = false;
}

static DType vt(Verify *V, int v)
{
	return V->f->vtypes[v];
}

static void check_operands(Verify *V, const Op *op)
{
	int want = tir_op_nargs(op->code);
	if (want >= 0 && op->nargs != want)
		fail(V, op, "wrong number of operands");
	for (int i = 0; i < op->nargs; i++) {
		int v = op->args[i];
		if (v < 0 || v >= V->f->nvalues || !V->defined[v]) {
			fail(V, op, "operand used before its definition or out of scope");
			return;
		}
	}
	int res = tir_op_result(op->code);
	if ((res == 1 && op->result < 0) || (res == 0 && op->result >= 0))
		fail(V, op, "result presence does not match ops.def");
}

static bool same_types(Verify *V, const Op *op, DType t)
{
	for (int i = 0; i < op->nargs; i++)
		if (vt(V, op->args[i]) != t)
			return false;
	return true;
}

static void check_memory(Verify *V, const Op *op)
{
	if (op->buf < 0 || op->buf >= V->f->nbufs) {
		fail(V, op, "memory op names no buffer");
		return;
	}
	bool high = tir_op_flags(op->code) & F_HIGH;
	if (high == V->f->indices_lowered)
		fail(V, op, high ? "multi-dimensional access after lower-index"
				 : "linear access before lower-index");
	int rank = V->f->bufs[op->buf].ty.rank;
	int nidx = op->nargs - (op->code == OP_STORE) - mo_extra_operand(op->attr[0]);
	if (op->code == OP_LOAD || op->code == OP_STORE)
		if (nidx != rank)
			fail(V, op, "index count differs from the buffer's rank");
	if (V->f->bufs[op->buf].ty.dt != op->ty)
		fail(V, op, "element type differs from the buffer's");
}

static void check_types(Verify *V, const Op *op)
{
	OpCode c = op->code;
	if (c >= OP_ADD && c <= OP_RSQRT && !same_types(V, op, op->ty))
		fail(V, op, "operand types differ from the result type");
	if (c >= OP_EQ && c <= OP_GE &&
	    (op->ty != DT_BOOL || vt(V, op->args[0]) != vt(V, op->args[1])))
		fail(V, op, "comparison needs equal operand types and a bool result");
	if ((c == OP_IF || c == OP_CONDITION || c == OP_SELECT) &&
	    vt(V, op->args[0]) != DT_BOOL)
		fail(V, op, "condition is not bool");
	if ((c == OP_VAR_GET || c == OP_VAR_SET) && !V->is_var[op->args[0]])
		fail(V, op, "operand is not a variable");
	if (c == OP_VAR_SET && (vt(V, op->args[1]) != vt(V, op->args[0]) ||
				V->f->vcols[op->args[1]] != V->f->vcols[op->args[0]]))
		fail(V, op, "stored value's type differs from the variable's");
	if (c == OP_MMA && V->f->vcols[op->args[0]] != op->attr[3])
		fail(V, op, "accumulator is not a fragment of the mma's N");
	if (c == OP_FRAG_STORE && !V->f->vcols[op->args[0]])
		fail(V, op, "stores a value that is not a fragment");
	if ((c == OP_ROW_STORE && V->f->vcols[op->args[0]] != -1) ||
	    (c == OP_COL_STORE && V->f->vcols[op->args[0]] >= -1))
		fail(V, op, "row_store/col_store: the value is not a row/column vector");
	if (c == OP_FRAG_LOAD && (op->buf < 0 || op->buf >= V->f->nbufs ||
				  op->nargs != (V->f->bufs[op->buf].ty.space == SP_SHARED ? 1 : 5)))
		fail(V, op, "fragment load: a shared tile takes an offset, a global window five values");
	if (c == OP_CALL && (op->imm < 0 || op->imm >= V->m->nfuncs))
		fail(V, op, "call names no function");
	if (c == OP_LD && op->nargs != 1 + mo_extra_operand(op->attr[0]))
		fail(V, op, "ld takes an offset, and a CTA rank when it reads another CTA's or an "
			    "addend when it adds");
	if (c == OP_LOAD || c == OP_STORE || c == OP_LD || c == OP_ST)
		check_memory(V, op);
}

static void verify_block(Verify *V, const Block *b);

/* Verifies a nested block, then takes its definitions out of scope. */
static void verify_nested(Verify *V, const Block *b)
{
	if (!b)
		return;
	char *saved = ctx_alloc(V->cx, (size_t)V->f->nvalues + 1);
	memcpy(saved, V->defined, (size_t)V->f->nvalues);
	verify_block(V, b);
	memcpy(V->defined, saved, (size_t)V->f->nvalues);
}

static void verify_region(Verify *V, const Op *op)
{
	if (op->code == OP_FOR) {
		V->defined[op->result] = 1;  /* the induction value, body only */
		V->loop_depth++;
		verify_nested(V, op->blocks[0]);
		V->loop_depth--;
		V->defined[op->result] = 0;
		return;
	}
	if (op->code == OP_WHILE) {
		const Block *cb = op->blocks[0];
		if (!cb || cb->nops == 0 || cb->ops[cb->nops - 1]->code != OP_CONDITION)
			fail(V, op, "condition block does not end in 'condition'");
		verify_nested(V, cb);
		V->loop_depth++;
		verify_nested(V, op->blocks[1]);
		V->loop_depth--;
		return;
	}
	verify_nested(V, op->blocks[0]);
	verify_nested(V, op->blocks[1]);
}

static void verify_op(Verify *V, const Op *op, bool last)
{
	check_operands(V, op);
	if (!V->ok)
		return;
	check_types(V, op);
	if ((op->code == OP_BREAK || op->code == OP_CONTINUE) && V->loop_depth == 0)
		fail(V, op, "outside of a loop");
	if (op->code == OP_CONDITION && !last)
		fail(V, op, "'condition' must end its block");
	if (tir_op_flags(op->code) & F_REGION)
		verify_region(V, op);
	if (op->result >= 0 && op->code != OP_FOR) {
		if (op->result >= V->f->nvalues)
			fail(V, op, "result id out of range");
		else if (vt(V, op->result) != op->ty)
			fail(V, op, "result type differs from the value table");
		else
			V->defined[op->result] = 1;
		if (op->code == OP_VAR && op->result < V->f->nvalues)
			V->is_var[op->result] = 1;
	}
}

static void verify_block(Verify *V, const Block *b)
{
	for (int i = 0; i < b->nops && V->ok; i++)
		verify_op(V, b->ops[i], i == b->nops - 1);
}

bool tir_verify(Ctx *cx, TirModule *m)
{
	for (int i = 0; i < m->nfuncs; i++) {
		TirFunc *f = m->funcs[i];
		Verify V = {.cx = cx, .f = f, .m = m, .ok = true};
		V.defined = ctx_alloc(cx, (size_t)f->nvalues + 1);
		V.is_var = ctx_alloc(cx, (size_t)f->nvalues + 1);
		verify_block(&V, f->body);
		if (!V.ok)
			return false;
	}
	return true;
}
