/*
 * sema_expr.c: typing of expressions: literal coercion, constant folding,
 * operators, identifiers, indexing, casts and calls (user functions and the
 * scalar builtins; the tile builtins are in sema_tile.c).
 *
 * Typing is strict: operands of one operator have one type, and conversion
 * is explicit (cast<T>(x)). Literals are "untyped" and take the type their
 * context needs. An expression that fails gets DT_ERROR, which silences
 * further errors about it: one mistake, one message.
 */
#include <math.h>
#include <string.h>

#include "sema.h"

/* ---- literal coercion and constant folding -------------------------------- */

void sema_set_scalar(Node *e, DType dt)
{
	e->ty = type_scalar(dt);
}

static bool is_error(const Node *e)
{
	return e->ty.dt == DT_ERROR;
}

static bool int_fits(int64_t v, DType dt)
{
	return dt != DT_I32 || (v >= INT32_MIN && v <= INT32_MAX);
}

/* Gives an untyped literal expression the type `want`; typed expressions are
 * left alone. False (with a diagnostic) when the literal cannot take it. */
bool sema_coerce(Sema *S, Node *e, DType want)
{
	DType dt = e->ty.dt;
	if (dt == DT_ERROR || want == DT_ERROR || want == DT_UNTYPED_INT ||
	    want == DT_UNTYPED_FLOAT)
		return true;
	if (dt == DT_UNTYPED_INT && dtype_is_int(want)) {
		if (!int_fits(e->const_ival, want)) {
			diag_error(S->cx, e->loc, E_LITERAL_RANGE,
				   (long long)e->const_ival, dtype_name(want));
			sema_set_scalar(e, DT_ERROR);
			return false;
		}
		sema_set_scalar(e, want);
		return true;
	}
	if (dt == DT_UNTYPED_INT && dtype_is_float(want)) {
		e->const_fval = (double)e->const_ival;
		sema_set_scalar(e, want);
		return true;
	}
	if (dt == DT_UNTYPED_FLOAT && dtype_is_float(want)) {
		sema_set_scalar(e, want);
		return true;
	}
	if (dt == DT_UNTYPED_FLOAT && dtype_is_int(want)) {
		diag_error(S->cx, e->loc, E_FLOAT_TO_INT_LITERAL, dtype_name(want));
		sema_set_scalar(e, DT_ERROR);
		return false;
	}
	return true;
}

/* The default type of an untyped expression that needs a sema_concrete one. */
DType sema_concrete(Sema *S, Node *e)
{
	if (e->ty.dt == DT_UNTYPED_INT)
		sema_coerce(S, e, DT_I32);
	else if (e->ty.dt == DT_UNTYPED_FLOAT)
		sema_coerce(S, e, DT_F32);
	return e->ty.dt;
}

static bool add_overflows(int64_t a, int64_t b, int64_t *r)
{
	return __builtin_add_overflow(a, b, r);
}

/* Folds an integer operator over constants; false on an error. */
static bool fold_int(Sema *S, Node *e, OpKind op, int64_t a, int64_t b,
		     int64_t *r)
{
	bool ovf = false;
	switch (op) {
	case OPK_ADD: ovf = add_overflows(a, b, r); break;
	case OPK_SUB: ovf = __builtin_sub_overflow(a, b, r); break;
	case OPK_MUL: ovf = __builtin_mul_overflow(a, b, r); break;
	case OPK_DIV: case OPK_REM:
		if (b == 0) {
			diag_error(S->cx, e->loc, E_CONST_DIV_ZERO);
			return false;
		}
		if (a == INT64_MIN && b == -1) {
			ovf = true;
			break;
		}
		*r = op == OPK_DIV ? a / b : a % b;
		break;
	case OPK_AND: *r = a & b; break;
	case OPK_OR: *r = a | b; break;
	case OPK_XOR: *r = a ^ b; break;
	case OPK_SHL: *r = (b < 0 || b > 63) ? 0 : (int64_t)((uint64_t)a << b); break;
	case OPK_SHR: *r = (b < 0 || b > 63) ? (a < 0 ? -1 : 0) : a >> b; break;
	case OPK_EQ: *r = a == b; break;
	case OPK_NE: *r = a != b; break;
	case OPK_LT: *r = a < b; break;
	case OPK_LE: *r = a <= b; break;
	case OPK_GT: *r = a > b; break;
	case OPK_GE: *r = a >= b; break;
	case OPK_LAND: *r = a && b; break;
	case OPK_LOR: *r = a || b; break;
	default: *r = 0; break;
	}
	if (ovf) {
		diag_error(S->cx, e->loc, E_CONST_OVERFLOW);
		return false;
	}
	return true;
}

static double fold_float(OpKind op, double a, double b)
{
	switch (op) {
	case OPK_ADD: return a + b;
	case OPK_SUB: return a - b;
	case OPK_MUL: return a * b;
	case OPK_DIV: return a / b;
	case OPK_EQ: return a == b;
	case OPK_NE: return a != b;
	case OPK_LT: return a < b;
	case OPK_LE: return a <= b;
	case OPK_GT: return a > b;
	case OPK_GE: return a >= b;
	default: return 0;
	}
}

static double const_as_float(const Node *e)
{
	return dtype_is_int(e->ty.dt) || e->ty.dt == DT_BOOL ? (double)e->const_ival
							     : e->const_fval;
}

static bool is_compare(OpKind op)
{
	return op >= OPK_EQ && op <= OPK_GE;
}

/* Folds e = a op b when both operands are constants. */
static void fold_binary(Sema *S, Node *e, OpKind op, Node *a, Node *b)
{
	if (!a->is_const || !b->is_const || is_error(e))
		return;
	DType dt = a->ty.dt;
	if (dtype_is_float(dt)) {
		double r = fold_float(op, const_as_float(a), const_as_float(b));
		if (is_compare(op))
			e->const_ival = (int64_t)r;
		else
			e->const_fval = r;
		e->is_const = true;
		return;
	}
	int64_t r;
	if (!fold_int(S, e, op, a->const_ival, b->const_ival, &r)) {
		sema_set_scalar(e, DT_ERROR);
		return;
	}
	e->const_ival = r;
	e->is_const = true;
}

/* ---- expressions ------------------------------------------------------------ */

/* Unifies the types of two operands (coercing untyped literals). Returns the
 * common type, or DT_ERROR after a diagnostic naming `what`. */
DType sema_unify(Sema *S, Node *at, const char *what, Node *a, Node *b)
{
	DType x = a->ty.dt, y = b->ty.dt;
	if (x == DT_ERROR || y == DT_ERROR)
		return DT_ERROR;
	bool ux = x == DT_UNTYPED_INT || x == DT_UNTYPED_FLOAT;
	bool uy = y == DT_UNTYPED_INT || y == DT_UNTYPED_FLOAT;
	if (ux && uy)
		return (x == DT_UNTYPED_FLOAT || y == DT_UNTYPED_FLOAT)
			       ? DT_UNTYPED_FLOAT : DT_UNTYPED_INT;
	if (ux)
		return sema_coerce(S, a, y) ? y : DT_ERROR;
	if (uy)
		return sema_coerce(S, b, x) ? x : DT_ERROR;
	if (x != y) {
		diag_error(S->cx, at->loc, E_TYPE_MISMATCH, what, dtype_name(x),
			   dtype_name(y));
		return DT_ERROR;
	}
	return x;
}

/* Promotes untyped-int operands to untyped float when the other is float. */
static void promote_untyped(Node *a, Node *b)
{
	if (a->ty.dt == DT_UNTYPED_INT && b->ty.dt == DT_UNTYPED_FLOAT) {
		a->const_fval = (double)a->const_ival;
		a->ty.dt = DT_UNTYPED_FLOAT;
	}
}


OperandClass sema_operand_class(OpKind op)
{
	switch (op) {
	case OPK_REM: case OPK_SHL: case OPK_SHR: case OPK_BITNOT: return OC_INT;
	case OPK_AND: case OPK_OR: case OPK_XOR: return OC_INT_OR_BOOL;
	case OPK_LAND: case OPK_LOR: case OPK_NOT: return OC_BOOL;
	case OPK_EQ: case OPK_NE: return OC_ANY;
	default: return OC_NUMERIC;
	}
}

bool sema_class_accepts(OperandClass c, DType dt)
{
	switch (c) {
	case OC_NUMERIC: return dtype_is_numeric(dt);
	case OC_INT: return dtype_is_int(dt);
	case OC_BOOL: return dt == DT_BOOL;
	case OC_INT_OR_BOOL: return dtype_is_int(dt) || dt == DT_BOOL;
	case OC_ANY: return dt != DT_VOID;
	}
	return false;
}

const char *sema_class_name(OperandClass c)
{
	switch (c) {
	case OC_NUMERIC: return "numeric";
	case OC_INT: return "integer";
	case OC_BOOL: return "'bool'";
	case OC_INT_OR_BOOL: return "integer or 'bool'";
	case OC_ANY: return "value";
	}
	return "";
}

static DType check_binary(Sema *S, Node *e)
{
	DType a = sema_expr(S, e->a), b = sema_expr(S, e->b);
	if (a == DT_ERROR || b == DT_ERROR)
		return DT_ERROR;
	OpKind op = e->op;
	OperandClass c = sema_operand_class(op);
	Node *bad = !sema_class_accepts(c, a) ? e->a : !sema_class_accepts(c, b) ? e->b : NULL;
	if (bad) {
		diag_error(S->cx, bad->loc, E_OPERAND_TYPE, ast_op_str(op),
			   sema_class_name(c), dtype_name(bad->ty.dt));
		return DT_ERROR;
	}
	promote_untyped(e->a, e->b);
	promote_untyped(e->b, e->a);
	DType t = sema_unify(S, e, ast_op_str(op), e->a, e->b);
	if (t == DT_ERROR)
		return DT_ERROR;
	sema_set_scalar(e, is_compare(op) ? DT_BOOL : t);
	fold_binary(S, e, op, e->a, e->b);
	return e->ty.dt;
}

static DType check_unary(Sema *S, Node *e)
{
	DType a = sema_expr(S, e->a);
	if (a == DT_ERROR)
		return DT_ERROR;
	OperandClass c = sema_operand_class(e->op);
	if (!sema_class_accepts(c, a)) {
		diag_error(S->cx, e->a->loc, E_OPERAND_TYPE, ast_op_str(e->op),
			   sema_class_name(c), dtype_name(a));
		return DT_ERROR;
	}
	sema_set_scalar(e, a);
	if (e->a->is_const) {
		e->is_const = true;
		if (e->op == OPK_NEG && dtype_is_float(a))
			e->const_fval = -e->a->const_fval;
		else if (e->op == OPK_NEG)
			e->const_ival = -e->a->const_ival;
		else if (e->op == OPK_NOT)
			e->const_ival = !e->a->const_ival;
		else
			e->const_ival = ~e->a->const_ival;
	}
	return a;
}


static DType check_ident_symbol(Sema *S, Node *e, Symbol *s)
{
	e->sym = s;
	switch (s->kind) {
	case SYM_CONST:
		sema_const_decl(S, s);
		e->ty = s->ty;
		e->is_const = s->is_const;
		e->const_ival = s->ival;
		e->const_fval = s->fval;
		return e->ty.dt;
	case SYM_FN: case SYM_KERNEL: case SYM_MBAR: case SYM_ROLE:
		diag_error(S->cx, e->loc, E_NOT_A_VALUE, e->name, sema_sym_kind_name(s->kind));
		return DT_ERROR;
	default:
		break;
	}
	if (s->ty.space != SP_SCALAR && s->ty.space != SP_FRAG) {
		diag_error(S->cx, e->loc, E_TENSOR_AS_VALUE, e->name, e->name);
		return DT_ERROR;
	}
	if (s->kind == SYM_FRAG && s->pending) {
		diag_error(S->cx, e->loc, E_FRAG_PENDING, s->name, s->name);
		return DT_ERROR;
	}
	e->ty = s->ty;
	return e->ty.dt;
}

static DType check_ident(Sema *S, Node *e)
{
	Symbol *s = sema_lookup(S, e->name);
	if (s)
		return check_ident_symbol(S, e, s);
	Builtin b = builtin_lookup(e->name);
	if (b != B_NONE && builtin_kind(b) == BK_VALUE) {
		e->builtin = b;
		if (b == B_INF) {
			e->is_const = true;
			e->const_fval = INFINITY;
			sema_set_scalar(e, DT_F32);
		} else if (b == B_WG_RANK && !sema_in_role(S, e->loc, e->name)) {
			return DT_ERROR;
		} else if (b == B_CLUSTER_RANK && !sema_cluster_ok(S, e, e->name)) {
			return DT_ERROR;
		} else {
			sema_set_scalar(e, DT_I32);
		}
		return e->ty.dt;
	}
	if (b != B_NONE) {
		diag_error(S->cx, e->loc, E_BUILTIN_AS_VALUE, e->name);
		return DT_ERROR;
	}
	diag_error(S->cx, e->loc, E_UNDEFINED, e->name);
	return DT_ERROR;
}

/* member = sreg-builtin "." ("x" | "y" | "z") */
static DType check_member(Sema *S, Node *e)
{
	Node *base = e->a;
	const char *m = e->name;
	bool xyz = strcmp(m, "x") == 0 || strcmp(m, "y") == 0 || strcmp(m, "z") == 0;
	if (base->kind == N_IDENT && !sema_lookup(S, base->name)) {
		Builtin b = builtin_lookup(base->name);
		if (b != B_NONE && builtin_kind(b) == BK_SREG3 && xyz) {
			e->builtin = b;
			e->ival = m[0] - 'x';
			sema_set_scalar(e, DT_I32);
			return DT_I32;
		}
		if (b == B_NONE) {
			diag_error(S->cx, base->loc, E_UNDEFINED, base->name);
			return DT_ERROR;
		}
	}
	diag_error(S->cx, e->loc, E_UNKNOWN_MEMBER,
		   base->kind == N_IDENT ? base->name : "expression", m);
	return DT_ERROR;
}

/* index = tensor "[" expr {"," expr} "]" */
static DType check_index(Sema *S, Node *e)
{
	Node *base = e->a;
	Symbol *s = base->kind == N_IDENT ? sema_lookup(S, base->name) : NULL;
	bool ok = true;
	for (Node *i = e->list; i; i = i->next) {
		if (i->kind == N_RANGE || i->kind == N_FULL) {
			diag_error(S->cx, i->loc, E_VIEW, base->kind == N_IDENT ? base->name : "expression",
				   "windows ('+:', ':') are arguments of tile operations, not values");
			return DT_ERROR;
		}
		DType t = sema_expr(S, i);
		if (t == DT_UNTYPED_INT)
			t = sema_concrete(S, i);
		if (t != DT_ERROR && !sema_scalar(S, i, "an index"))
			t = DT_ERROR;
		if (t != DT_ERROR && t != DT_I32 && t != DT_I64) {
			diag_error(S->cx, i->loc, E_INDEX_TYPE, dtype_name(t));
			ok = false;
		}
		ok = ok && t != DT_ERROR;
	}
	if (!s) {
		if (base->kind == N_IDENT && !builtin_lookup(base->name))
			diag_error(S->cx, base->loc, E_UNDEFINED, base->name);
		else
			diag_error(S->cx, base->loc, E_NOT_INDEXABLE,
				   base->kind == N_IDENT ? base->name : "expression");
		return DT_ERROR;
	}
	base->sym = s;
	if (s->ty.dt == DT_ERROR)
		return DT_ERROR; /* its declaration was reported */
	if (s->ty.space == SP_SCALAR || s->ty.space == SP_TMA || s->ty.space == SP_MBAR ||
	    s->ty.space == SP_FRAG || s->kind == SYM_FN || s->kind == SYM_KERNEL) {
		diag_error(S->cx, base->loc, E_NOT_INDEXABLE, base->name);
		return DT_ERROR;
	}
	if (s->ty.dt == DT_TF32) {
		diag_error(S->cx, base->loc, E_TF32_ELEMENT, base->name, "an element access");
		return DT_ERROR;
	}
	base->ty = s->ty;
	int n = ast_count(e->list);
	if (n != s->ty.rank) {
		diag_error(S->cx, e->loc, E_INDEX_COUNT, base->name, s->ty.rank, n);
		return DT_ERROR;
	}
	if (!ok)
		return DT_ERROR;
	sema_set_scalar(e, s->ty.dt);
	return e->ty.dt;
}

static bool legal_cast(DType from, DType to)
{
	bool f = dtype_is_numeric(from) || from == DT_BOOL;
	bool t = dtype_is_numeric(to) || to == DT_BOOL;
	/* bool converts to and from integers only: 'x != 0' is clearer for floats */
	if ((from == DT_BOOL && dtype_is_float(to)) ||
	    (to == DT_BOOL && dtype_is_float(from)))
		return false;
	return f && t;
}

static DType check_cast(Sema *S, Node *e)
{
	DType from = sema_expr(S, e->a);
	if (from == DT_ERROR)
		return DT_ERROR;
	if (from == DT_UNTYPED_INT || from == DT_UNTYPED_FLOAT) {
		if (from == DT_UNTYPED_FLOAT && dtype_is_int(e->dtype)) {
			e->a->const_ival = (int64_t)e->a->const_fval;
			sema_set_scalar(e->a, DT_UNTYPED_INT);
		}
		if (!sema_coerce(S, e->a, e->dtype))
			return DT_ERROR;
		from = e->a->ty.dt;
	}
	if (!legal_cast(from, e->dtype)) {
		diag_error(S->cx, e->loc, E_BAD_CAST, dtype_name(from),
			   dtype_name(e->dtype));
		return DT_ERROR;
	}
	sema_set_scalar(e, e->dtype);
	return e->dtype;
}


/* ---- calls ------------------------------------------------------------------ */

bool sema_expect_args(Sema *S, Node *e, int n)
{
	int got = ast_count(e->list);
	if (got != n) {
		diag_error(S->cx, e->loc, E_ARG_COUNT, e->name, n, got);
		return false;
	}
	return true;
}

/* Checks every argument; false if any failed. */
bool sema_check_args(Sema *S, Node *e)
{
	bool ok = true;
	for (Node *a = e->list; a; a = a->next)
		ok = sema_expr(S, a) != DT_ERROR && ok;
	return ok;
}

/* exp2(x) and friends: f32 in, f32 out (the PTX approximate instructions). */
static DType check_math1(Sema *S, Node *e)
{
	Node *x = ast_nth(e->list, 0);
	sema_coerce(S, x, DT_F32);
	if (x->ty.dt != DT_F32) {
		diag_error(S->cx, x->loc, E_MATH_TYPE, e->name, "'f32'",
			   dtype_name(x->ty.dt),
			   "; convert with cast<f32>(...)");
		return DT_ERROR;
	}
	sema_set_scalar(e, DT_F32);
	return DT_F32;
}

static DType check_fma(Sema *S, Node *e)
{
	for (int i = 0; i < 3; i++) {
		Node *x = ast_nth(e->list, i);
		sema_coerce(S, x, DT_F32);
		if (x->ty.dt != DT_F32) {
			diag_error(S->cx, x->loc, E_MATH_TYPE, e->name, "'f32'",
				   dtype_name(x->ty.dt), "");
			return DT_ERROR;
		}
	}
	sema_set_scalar(e, DT_F32);
	return DT_F32;
}

static bool minmax_type(DType t)
{
	return t == DT_I32 || t == DT_I64 || t == DT_F32 ||
	       t == DT_UNTYPED_INT || t == DT_UNTYPED_FLOAT;
}

/* min(a, b), max(a, b), cdiv(a, b): operands unify like a binary operator. */
static DType check_pair(Sema *S, Node *e, Builtin b)
{
	Node *x = ast_nth(e->list, 0), *y = ast_nth(e->list, 1);
	promote_untyped(x, y);
	promote_untyped(y, x);
	DType t = sema_unify(S, e, e->name, x, y);
	if (t == DT_ERROR)
		return DT_ERROR;
	bool ok = b == B_CDIV ? dtype_is_int(t) : minmax_type(t);
	if (!ok) {
		diag_error(S->cx, e->loc, E_MATH_TYPE, e->name,
			   b == B_CDIV ? "integers" : "'i32', 'i64' or 'f32'",
			   dtype_name(t), "");
		return DT_ERROR;
	}
	sema_set_scalar(e, t);
	if (x->is_const && y->is_const) {
		e->is_const = true;
		if (dtype_is_float(t)) {
			double p = const_as_float(x), q = const_as_float(y);
			e->const_fval = b == B_MIN ? fmin(p, q) : fmax(p, q);
		} else if (b == B_CDIV) {
			int64_t q = y->const_ival, p = x->const_ival;
			if (q == 0) {
				diag_error(S->cx, e->loc, E_CONST_DIV_ZERO);
				return DT_ERROR;
			}
			if (p == INT64_MIN && q == -1) { /* the quotient overflows (and traps on x86) */
				diag_error(S->cx, e->loc, E_CONST_OVERFLOW);
				return DT_ERROR;
			}
			e->const_ival = p / q + ((p % q != 0) && ((p < 0) == (q < 0)));
		} else {
			int64_t p = x->const_ival, q = y->const_ival;
			e->const_ival = b == B_MIN ? (p < q ? p : q) : (p > q ? p : q);
		}
	}
	return t;
}

static DType check_abs(Sema *S, Node *e)
{
	Node *x = ast_nth(e->list, 0);
	DType t = sema_concrete(S, x);
	if (t != DT_I32 && t != DT_I64 && t != DT_F32) {
		diag_error(S->cx, x->loc, E_MATH_TYPE, e->name,
			   "'i32', 'i64' or 'f32'", dtype_name(t), "");
		return DT_ERROR;
	}
	sema_set_scalar(e, t);
	return t;
}

static DType check_where(Sema *S, Node *e)
{
	Node *c = ast_nth(e->list, 0);
	if (c->ty.dt != DT_BOOL) {
		diag_error(S->cx, c->loc, E_ARG_TYPE, 1, e->name, "'bool'",
			   dtype_name(c->ty.dt));
		return DT_ERROR;
	}
	Node *x = ast_nth(e->list, 1), *y = ast_nth(e->list, 2);
	promote_untyped(x, y);
	promote_untyped(y, x);
	DType t = sema_unify(S, e, e->name, x, y);
	if (t == DT_ERROR)
		return DT_ERROR;
	if (t == DT_UNTYPED_INT || t == DT_UNTYPED_FLOAT) {
		t = sema_concrete(S, x);
		sema_coerce(S, y, t);
	}
	sema_set_scalar(e, t);
	return t;
}

/* shfl_xor(v, lane_mask), shfl_down(v, delta), shfl_up, shfl_idx(v, lane) */
static DType check_shfl(Sema *S, Node *e)
{
	Node *v = ast_nth(e->list, 0), *n = ast_nth(e->list, 1);
	if (!sema_scalar(S, v, "an argument of a shuffle") || !sema_scalar(S, n, "a lane"))
		return DT_ERROR;
	DType t = sema_concrete(S, v);
	if (t != DT_I32 && t != DT_F32) {
		diag_error(S->cx, v->loc, E_SHFL_TYPE, e->name, dtype_name(t));
		return DT_ERROR;
	}
	sema_coerce(S, n, DT_I32);
	if (n->ty.dt != DT_I32) {
		diag_error(S->cx, n->loc, E_ARG_TYPE, 2, e->name, "'i32'",
			   dtype_name(n->ty.dt));
		return DT_ERROR;
	}
	sema_set_scalar(e, t);
	return t;
}

static int builtin_arity(Builtin b)
{
	switch (b) {
	case B_BARRIER: return 0;
	case B_FMA: case B_WHERE: return 3;
	case B_MIN: case B_MAX: case B_CDIV: case B_SHFL_XOR: case B_SHFL_DOWN:
	case B_SHFL_UP: case B_SHFL_IDX: return 2;
	default: return 1;
	}
}

static DType check_builtin_call(Sema *S, Node *e, Builtin b)
{
	e->builtin = b;
	if (sema_is_tile_builtin(b))
		return sema_tile_call(S, e, b);
	bool count_ok = sema_expect_args(S, e, builtin_arity(b));
	bool args_ok = sema_check_args(S, e); /* always: reports errors in the args too */
	if (!count_ok || !args_ok)
		return DT_ERROR;
	switch (b) {
	case B_BARRIER:
		if (S->role) {
			diag_error(S->cx, e->loc, E_BARRIER_IN_ROLE, S->role->name, S->role->name);
			return DT_ERROR;
		}
		sema_set_scalar(e, DT_VOID);
		return DT_VOID;
	case B_FMA: return check_fma(S, e);
	case B_MIN: case B_MAX: case B_CDIV: return check_pair(S, e, b);
	case B_ABS: return check_abs(S, e);
	case B_WHERE: return check_where(S, e);
	case B_SHFL_XOR: case B_SHFL_DOWN: case B_SHFL_UP: case B_SHFL_IDX:
		return check_shfl(S, e);
	default: return check_math1(S, e);
	}
}

static void record_call(Sema *S, Symbol *callee, Loc loc)
{
	/* in a constant, a tensor extent or a window width (no function's code, and
	 * S->fn may be the last function checked or none) the call is refused as not
	 * constant: it is no edge of the call graph */
	if (!S->fn || S->locals_hidden)
		return;
	if (S->nedges == S->cap_edges) {
		int cap = S->cap_edges ? S->cap_edges * 2 : 16;
		CallEdge *ne = ctx_alloc(S->cx, (size_t)cap * sizeof(CallEdge));
		if (S->nedges)
			memcpy(ne, S->edges, (size_t)S->nedges * sizeof(CallEdge));
		S->edges = ne;
		S->cap_edges = cap;
	}
	S->edges[S->nedges++] = (CallEdge){S->fn, callee, loc};
}

static bool any_frag(const Node *list)
{
	for (const Node *a = list; a; a = a->next)
		if (sema_is_frag(a))
			return true;
	return false;
}

static DType check_user_call(Sema *S, Node *e, Symbol *fn)
{
	if (fn->tile_helper)
		return sema_inline_call(S, e, fn);
	bool at_stmt = S->stmt_call == e;
	e->sym = fn;
	Node *decl = fn->decl;
	bool ok = sema_check_args(S, e);
	if (ok && decl->a && any_frag(e->list)) {
		/* a scalar function applied to fragments, element by element */
		S->stmt_call = at_stmt ? e : NULL;
		return sema_inline_elementwise(S, e, fn);
	}
	int want = ast_count(decl->list), got = ast_count(e->list);
	if (want != got) {
		diag_error(S->cx, e->loc, E_ARG_COUNT, e->name, want, got);
		return DT_ERROR;
	}
	int i = 1;
	for (Node *a = e->list, *p = decl->list; a && p; a = a->next, p = p->next, i++) {
		DType pt = p->sym ? p->sym->ty.dt : DT_ERROR;
		if (ok && a->ty.dt != DT_ERROR && !sema_scalar(S, a, "an argument of a function"))
			ok = false;
		sema_coerce(S, a, pt);
		if (ok && a->ty.dt != pt && a->ty.dt != DT_ERROR && pt != DT_ERROR) {
			diag_error(S->cx, a->loc, E_ARG_TYPE, i, e->name,
				   ctx_printf(S->cx, "'%s'", dtype_name(pt)),
				   dtype_name(a->ty.dt));
			ok = false;
		}
	}
	record_call(S, fn, e->loc);
	sema_set_scalar(e, decl->a ? decl->a->dtype : DT_VOID);
	return ok ? e->ty.dt : DT_ERROR;
}

/* The arguments of a call to an undeclared name: their own errors are reported, but not a
 * tensor, shared array or mbarrier passed by name (what a helper would take: the undeclared
 * name is the one error there). */
static void check_args_of_unknown(Sema *S, Node *e)
{
	for (Node *a = e->list; a; a = a->next) {
		Symbol *s = a->kind == N_IDENT ? sema_lookup(S, a->name) : NULL;
		if (s && (s->kind == SYM_MBAR || (s->ty.space != SP_SCALAR && s->ty.space != SP_FRAG)))
			continue;
		sema_expr(S, a);
	}
}

/* call = IDENT "(" [expr {"," expr}] ")": a helper function or a builtin */
static DType check_call(Sema *S, Node *e)
{
	Symbol *s = sema_lookup(S, e->name);
	if (s && s->kind == SYM_FN)
		return check_user_call(S, e, s);
	if (s && s->kind == SYM_KERNEL) {
		diag_error(S->cx, e->loc, E_KERNEL_CALL, e->name);
		return DT_ERROR;
	}
	if (s) {
		diag_error(S->cx, e->loc, E_NOT_CALLABLE, e->name);
		return DT_ERROR;
	}
	Builtin b = builtin_lookup(e->name);
	if (b != B_NONE && builtin_kind(b) == BK_CALL)
		return check_builtin_call(S, e, b);
	if (b != B_NONE) {
		diag_error(S->cx, e->loc, E_NOT_CALLABLE, e->name);
		return DT_ERROR;
	}
	diag_error(S->cx, e->loc, E_UNDEFINED, e->name);
	check_args_of_unknown(S, e);
	return DT_ERROR;
}

/* Whether an expression's value may differ between the threads of a
 * warpgroup: warp_id between warps; thread and lane indices, shuffles,
 * elect_one between lanes; anything computed from them as the most varying
 * of its operands. Loads count as uniform when their indices are. */
static Vary expr_varying(const Node *e)
{
	Vary v = VARY_NONE;
	switch (e->kind) {
	case N_IDENT:
		if (e->sym)
			return e->sym->varying;
		return e->builtin == B_LANE_ID ? VARY_LANE
		       : e->builtin == B_WARP_ID ? VARY_WARP : VARY_NONE;
	case N_MEMBER: return e->builtin == B_THREAD_ID ? VARY_LANE : VARY_NONE;
	case N_CALL:
		if (e->builtin >= B_SHFL_XOR && e->builtin <= B_SHFL_IDX)
			return VARY_LANE;
		break;
	default: break;
	}
	for (const Node *c = e->list; c; c = c->next)
		v = vary_max(v, c->varying);
	const Node *kids[] = {e->a, e->b, e->c};
	for (int i = 0; i < 3; i++)
		if (kids[i])
			v = vary_max(v, kids[i]->kind == N_IDENT ? expr_varying(kids[i])
								 : kids[i]->varying);
	return v;
}

DType sema_expr(Sema *S, Node *e)
{
	DType t = DT_ERROR;
	switch (e->kind) {
	case N_INT:
		e->is_const = true;
		e->const_ival = e->ival;
		sema_set_scalar(e, DT_UNTYPED_INT);
		return DT_UNTYPED_INT;
	case N_FLOAT:
		e->is_const = true;
		e->const_fval = e->fval;
		sema_set_scalar(e, DT_UNTYPED_FLOAT);
		return DT_UNTYPED_FLOAT;
	case N_BOOL:
		e->is_const = true;
		e->const_ival = e->ival;
		sema_set_scalar(e, DT_BOOL);
		return DT_BOOL;
	case N_IDENT: t = check_ident(S, e); break;
	case N_UNARY: t = check_unary(S, e); break;
	case N_BINARY: t = check_binary(S, e); break;
	case N_CALL: t = check_call(S, e); break;
	case N_INDEX: t = check_index(S, e); break;
	case N_MEMBER: t = check_member(S, e); break;
	case N_CAST: t = check_cast(S, e); break;
	case N_RANGE: case N_FULL:
		/* windows belong to tile views: an index list that reached here
		 * is not one (e.g. an mbarrier's index) */
		diag_error(S->cx, e->loc, E_VIEW, "expression",
			   "windows ('+:', ':') are arguments of tile operations, not values");
		break;
	default:
		diag_internal(S->cx, "sema", "unexpected %s in an expression",
			      ast_kind_name(e->kind));
		break;
	}
	if (t != DT_ERROR && !sema_frag_shape(S, e))
		t = DT_ERROR;
	if (t == DT_ERROR)
		sema_set_scalar(e, DT_ERROR);
	e->varying = vary_max(e->varying, expr_varying(e));
	return e->ty.dt;
}


