/*
 * sema.c: name resolution and type checking.
 *
 * Input: the parsed files of a program. Output: the same AST, annotated in
 * place: every expression has a Type (Node.ty), identifiers point at their
 * Symbol, builtin calls carry their Builtin id, and compile-time constants
 * carry their value (Node.is_const, const_ival/const_fval).
 *
 * Typing is strict: operands of one operator have one type, and conversion
 * is explicit (cast<T>(x)). Literals are "untyped" and take the type their
 * context needs, so 'x * 2' works for any numeric x. An expression that fails
 * gets DT_ERROR, which silences further errors about it: one mistake, one
 * message.
 *
 * Kernel-level rules (launch shape, parameter ABI, symbolic tensor extents)
 * are checked here too; the shared-memory budget is checked by plan-smem,
 * where the layout is decided.
 */
#include <math.h>
#include <string.h>

#include "sema.h"


/* ---- symbols ------------------------------------------------------------- */

static Symbol *find_in(Symbol *list, const char *name, Symbol *stop)
{
	for (Symbol *s = list; s && s != stop; s = s->next)
		if (strcmp(s->name, name) == 0)
			return s;
	return NULL;
}

Symbol *sema_lookup(Sema *S, const char *name)
{
	Symbol *s = find_in(S->scope, name, NULL);
	return s ? s : find_in(S->globals, name, NULL);
}

static Symbol *new_symbol(Sema *S, SymKind kind, const char *name, Node *decl)
{
	Symbol *s = ctx_alloc(S->cx, sizeof(Symbol));
	s->kind = kind;
	s->name = name;
	s->decl = decl;
	s->ir = -1;
	return s;
}

/* Declares a local in the current scope; `mark` is the scope at block entry,
 * so a redefinition is only reported within one block. */
Symbol *sema_declare(Sema *S, SymKind kind, Node *decl, Symbol *mark)
{
	Symbol *old = find_in(S->scope, decl->name, mark);
	if (old) {
		diag_error(S->cx, decl->loc, E_REDEFINED, decl->name);
		diag_note(S->cx, old->decl->loc, "'%s' was declared here", old->name);
	}
	Symbol *s = new_symbol(S, kind, decl->name, decl);
	s->next = S->scope;
	S->scope = s;
	decl->sym = s;
	return s;
}

const char *sema_sym_kind_name(SymKind k)
{
	switch (k) {
	case SYM_CONST: return "constant";
	case SYM_FN: return "function";
	case SYM_KERNEL: return "kernel";
	case SYM_PARAM: return "parameter";
	case SYM_LET: return "'let' binding";
	case SYM_VAR: return "variable";
	case SYM_SHARED: return "shared array";
	case SYM_LOOPVAR: return "loop variable";
	case SYM_MBAR: return "mbarrier";
	case SYM_ROLE: return "role";
	case SYM_FRAG: return "fragment";
	}
	return "name";
}

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
static DType unify(Sema *S, Node *at, const char *what, Node *a, Node *b)
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

typedef enum OperandClass { OC_NUMERIC, OC_INT, OC_BOOL, OC_INT_OR_BOOL, OC_ANY } OperandClass;

static OperandClass operand_class(OpKind op)
{
	switch (op) {
	case OPK_REM: case OPK_SHL: case OPK_SHR: case OPK_BITNOT: return OC_INT;
	case OPK_AND: case OPK_OR: case OPK_XOR: return OC_INT_OR_BOOL;
	case OPK_LAND: case OPK_LOR: case OPK_NOT: return OC_BOOL;
	case OPK_EQ: case OPK_NE: return OC_ANY;
	default: return OC_NUMERIC;
	}
}

static bool class_accepts(OperandClass c, DType dt)
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

static const char *class_name(OperandClass c)
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
	OperandClass c = operand_class(op);
	Node *bad = !class_accepts(c, a) ? e->a : !class_accepts(c, b) ? e->b : NULL;
	if (bad) {
		diag_error(S->cx, bad->loc, E_OPERAND_TYPE, ast_op_str(op),
			   class_name(c), dtype_name(bad->ty.dt));
		return DT_ERROR;
	}
	promote_untyped(e->a, e->b);
	promote_untyped(e->b, e->a);
	DType t = unify(S, e, ast_op_str(op), e->a, e->b);
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
	OperandClass c = operand_class(e->op);
	if (!class_accepts(c, a)) {
		diag_error(S->cx, e->a->loc, E_OPERAND_TYPE, ast_op_str(e->op),
			   class_name(c), dtype_name(a));
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

static void check_const_decl(Sema *S, Symbol *sym);

static DType check_ident_symbol(Sema *S, Node *e, Symbol *s)
{
	e->sym = s;
	switch (s->kind) {
	case SYM_CONST:
		check_const_decl(S, s);
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
		} else if (b == B_WG_RANK && !S->role) {
			diag_error(S->cx, e->loc, E_OUTSIDE_ROLE, e->name);
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
	if (s->ty.space == SP_SCALAR || s->ty.space == SP_TMA || s->ty.space == SP_MBAR ||
	    s->ty.space == SP_FRAG || s->kind == SYM_FN || s->kind == SYM_KERNEL) {
		diag_error(S->cx, base->loc, E_NOT_INDEXABLE, base->name);
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

Node *sema_arg(Node *e, int i)
{
	Node *a = e->list;
	while (i-- > 0 && a)
		a = a->next;
	return a;
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
	Node *x = sema_arg(e, 0);
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
		Node *x = sema_arg(e, i);
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
	Node *x = sema_arg(e, 0), *y = sema_arg(e, 1);
	promote_untyped(x, y);
	promote_untyped(y, x);
	DType t = unify(S, e, e->name, x, y);
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
	Node *x = sema_arg(e, 0);
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
	Node *c = sema_arg(e, 0);
	if (c->ty.dt != DT_BOOL) {
		diag_error(S->cx, c->loc, E_ARG_TYPE, 1, e->name, "'bool'",
			   dtype_name(c->ty.dt));
		return DT_ERROR;
	}
	Node *x = sema_arg(e, 1), *y = sema_arg(e, 2);
	promote_untyped(x, y);
	promote_untyped(y, x);
	DType t = unify(S, e, e->name, x, y);
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
	Node *v = sema_arg(e, 0), *n = sema_arg(e, 1);
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
	case B_BARRIER: sema_set_scalar(e, DT_VOID); return DT_VOID;
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

static DType check_user_call(Sema *S, Node *e, Symbol *fn)
{
	e->sym = fn;
	Node *decl = fn->decl;
	bool ok = sema_check_args(S, e);
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
	sema_check_args(S, e);
	return DT_ERROR;
}

/* Whether an expression's value may differ between the threads of a
 * warpgroup: thread and lane indices, shuffles, elect_one, and anything
 * computed from them. Loads count as uniform when their indices are. */
static bool expr_varying(const Node *e)
{
	bool v = false;
	switch (e->kind) {
	case N_IDENT:
		return e->sym ? e->sym->varying
			      : e->builtin == B_LANE_ID || e->builtin == B_WARP_ID;
	case N_MEMBER: return e->builtin == B_THREAD_ID;
	case N_CALL:
		if (e->builtin >= B_SHFL_XOR && e->builtin <= B_SHFL_IDX)
			return true;
		break;
	default: break;
	}
	for (const Node *c = e->list; c; c = c->next)
		v = v || c->varying;
	const Node *kids[] = {e->a, e->b, e->c};
	for (int i = 0; i < 3; i++)
		v = v || (kids[i] && kids[i]->kind != N_IDENT && kids[i]->varying) ||
		    (kids[i] && kids[i]->kind == N_IDENT && expr_varying(kids[i]));
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
	e->varying = e->varying || expr_varying(e);
	return e->ty.dt;
}


/* ---- statements ---------------------------------------------------------- */

/* A declared scalar type: 'let x: T', 'var x: T', a return type. */
static DType declared_scalar(Sema *S, Node *type, const char *name)
{
	if (type->space != SP_SCALAR) {
		diag_error(S->cx, type->loc, E_TENSOR_LOCAL, name);
		return DT_ERROR;
	}
	return type->dtype;
}

/* let-stmt = "let" IDENT [":" TYPE] "=" expr;  var-stmt likewise, or
 * "var" IDENT ":" TYPE (zero-initialised) */
static void check_binding(Sema *S, Node *st, Symbol *mark)
{
	DType want = st->a ? declared_scalar(S, st->a, st->name) : DT_VOID;
	DType got = st->b ? sema_expr(S, st->b) : want;
	if (st->b && got == DT_VOID) {
		diag_error(S->cx, st->b->loc, E_VOID_VALUE, st->b->name);
		got = DT_ERROR;
	}
	DType t = want;
	if (!st->a) {
		t = st->b ? sema_concrete(S, st->b) : DT_ERROR;
	} else if (st->b && got != DT_ERROR && want != DT_ERROR) {
		sema_coerce(S, st->b, want);
		if (st->b->ty.dt != want && st->b->ty.dt != DT_ERROR)
			diag_error(S->cx, st->b->loc, E_INIT_TYPE, st->name,
				   dtype_name(st->b->ty.dt), dtype_name(want));
	}
	Symbol *s = sema_declare(S, st->kind == N_LET ? SYM_LET : SYM_VAR, st, mark);
	s->ty = type_scalar(t);
	s->varying = st->b && st->b->varying;
	if (st->b && st->b->ty.space == SP_FRAG) {
		if (st->kind == N_VAR || st->a)
			sema_scalar(S, st->b, st->kind == N_VAR
				    ? "the value of a 'var' (declare mutable fragments with 'frag')"
				    : "the value of a typed 'let'");
		else
			s->ty = st->b->ty; /* let p = exp2(s * c): an immutable fragment */
	}
}

static void check_shared(Sema *S, Node *st, Symbol *mark)
{
	Symbol *s = sema_declare(S, SYM_SHARED, st, mark);
	s->ty = type_scalar(DT_ERROR);
	if (S->fn->kind != SYM_KERNEL || S->block_depth != 1) {
		diag_error(S->cx, st->loc, E_SHARED_OUTSIDE_KERNEL, st->name);
		return;
	}
	Node *ty = st->a;
	if (ty->space != SP_SHARED) {
		diag_error(S->cx, ty->loc, E_SHARED_DIM);
		return;
	}
	Type t = type_scalar(ty->dtype);
	t.space = SP_SHARED;
	for (Node *d = ty->list; d; d = d->next) {
		sema_expr(S, d);
		if (!d->is_const || !dtype_is_int(d->ty.dt) || d->const_ival <= 0 ||
		    d->const_ival > INT32_MAX) {
			diag_error(S->cx, d->loc, E_SHARED_DIM);
			return;
		}
		if (t.rank == TILEC_MAX_RANK) {
			diag_error(S->cx, d->loc, E_TENSOR_RANK, TILEC_MAX_RANK,
				   ast_count(ty->list));
			return;
		}
		t.dims[t.rank++] = (Dim){d->const_ival, -1, NULL};
	}
	if (sema_tile_swizzle(S, ty, &t))
		s->ty = t;
}

static void check_assign_ident(Sema *S, Node *target)
{
	Symbol *s = sema_lookup(S, target->name);
	if (!s && builtin_lookup(target->name) != B_NONE) {
		/* 'inf = 1.0', 'lane_id = 0': builtins are not variables */
		diag_error(S->cx, target->loc, E_NOT_ASSIGNABLE);
		sema_set_scalar(target, DT_ERROR);
		return;
	}
	if (!s) {
		sema_expr(S, target);
		return;
	}
	if (s->kind != SYM_VAR && s->kind != SYM_FRAG) {
		diag_error(S->cx, target->loc, E_ASSIGN_IMMUTABLE, target->name,
			   ctx_printf(S->cx, "a %s", sema_sym_kind_name(s->kind)));
		sema_set_scalar(target, DT_ERROR);
		return;
	}
	sema_expr(S, target);
}

/* A fragment target takes a scalar (filled), a row vector (broadcast along
 * rows) or a fragment of its shape; a scalar target takes no fragment. */
static bool assign_shape_ok(Sema *S, Node *t, Node *v)
{
	if (v->ty.space != SP_FRAG)
		return true;
	if (t->ty.space != SP_FRAG)
		return sema_scalar(S, v, "the value of a scalar or tensor element");
	bool row = v->ty.rank == 1, same = v->ty.rank == t->ty.rank &&
		v->ty.dims[v->ty.rank - 1].value == t->ty.dims[t->ty.rank - 1].value;
	if (same || (row && t->ty.rank == 2))
		return true;
	diag_error(S->cx, v->loc, E_FRAG_LAYOUT, type_str(S->cx, &t->ty), type_str(S->cx, &v->ty));
	return false;
}

/* assign = target ("=" | op "=") expr, target = IDENT | tensor "[" ... "]" */
static void check_assign(Sema *S, Node *st)
{
	Node *t = st->a, *v = st->b;
	if (t->kind == N_IDENT)
		check_assign_ident(S, t);
	else if (t->kind == N_INDEX)
		sema_expr(S, t);
	else {
		diag_error(S->cx, t->loc, E_NOT_ASSIGNABLE);
		sema_set_scalar(t, DT_ERROR);
	}
	if (st->op != OPK_NONE) {
		/* x op= v is checked as x = x op v; lower.c builds the same */
		Node tmp = *st;
		tmp.kind = N_BINARY;
		tmp.a = t;
		tmp.b = v;
		DType saved = t->ty.dt;
		sema_expr(S, v);
		if (saved == DT_ERROR || v->ty.dt == DT_ERROR)
			return;
		OperandClass c = operand_class(st->op);
		if (!class_accepts(c, v->ty.dt) || !class_accepts(c, saved)) {
			Node *bad = class_accepts(c, saved) ? v : t;
			diag_error(S->cx, bad->loc, E_OPERAND_TYPE, ast_op_str(st->op),
				   class_name(c), dtype_name(bad->ty.dt));
			return;
		}
		if (unify(S, &tmp, ast_op_str(st->op), t, v) != DT_ERROR)
			assign_shape_ok(S, t, v);
		return;
	}
	DType vt = sema_expr(S, v);
	if (t->kind == N_IDENT && t->sym && v->varying)
		t->sym->varying = true;
	if (vt != DT_ERROR && t->ty.dt != DT_ERROR && !assign_shape_ok(S, t, v))
		return;
	if (vt == DT_VOID) {
		diag_error(S->cx, v->loc, E_VOID_VALUE, v->name);
		return;
	}
	if (t->ty.dt == DT_ERROR || vt == DT_ERROR)
		return;
	sema_coerce(S, v, t->ty.dt);
	if (v->ty.dt != t->ty.dt && v->ty.dt != DT_ERROR)
		diag_error(S->cx, v->loc, E_ASSIGN_TYPE, dtype_name(v->ty.dt),
			   t->kind == N_IDENT ? t->name : "tensor element",
			   dtype_name(t->ty.dt));
}

static void check_cond(Sema *S, Node *c)
{
	DType t = sema_expr(S, c);
	if (t != DT_ERROR && !sema_scalar(S, c, "a condition"))
		return;
	if (t != DT_BOOL && t != DT_ERROR)
		diag_error(S->cx, c->loc, E_COND_NOT_BOOL, dtype_name(t));
}

/* 'if elect_one()' and 'if ... && elect_one()' run on one thread per
 * warpgroup: arrive counts know how many threads arrive there. */
static bool elects(const Node *c)
{
	if (c->kind == N_CALL && c->builtin == B_ELECT_ONE)
		return true;
	return c->kind == N_BINARY && c->op == OPK_LAND && (elects(c->a) || elects(c->b));
}

static void check_if(Sema *S, Node *st)
{
	check_cond(S, st->a);
	bool div = st->a->varying, el = elects(st->a);
	S->divergent += div;
	S->elected += el;
	S->conditional += !el;
	sema_block(S, st->b);
	S->elected -= el;
	S->conditional -= !el;
	S->conditional++;
	if (st->c && st->c->kind == N_IF)
		check_if(S, st->c);
	else if (st->c)
		sema_block(S, st->c);
	S->conditional--;
	S->divergent -= div;
}

/* for-stmt = "for" IDENT "in" expr ".." expr ["step" expr] block */
static void check_for(Sema *S, Node *st)
{
	DType lo = sema_expr(S, st->a), hi = sema_expr(S, st->b);
	if ((lo != DT_ERROR && !sema_scalar(S, st->a, "a loop bound")) ||
	    (hi != DT_ERROR && !sema_scalar(S, st->b, "a loop bound")))
		lo = hi = DT_ERROR;
	DType t = DT_ERROR;
	if (lo != DT_ERROR && hi != DT_ERROR) {
		if (!dtype_is_int(lo) || !dtype_is_int(hi) ||
		    (t = unify(S, st, "..", st->a, st->b)) == DT_ERROR) {
			diag_error(S->cx, st->a->loc, E_FOR_TYPE, dtype_name(lo),
				   dtype_name(hi));
			t = DT_ERROR;
		} else if (t == DT_UNTYPED_INT) {
			t = sema_concrete(S, st->a);
			sema_coerce(S, st->b, t);
		}
	}
	if (st->c) {
		sema_expr(S, st->c);
		if (!st->c->is_const || !dtype_is_int(st->c->ty.dt) ||
		    st->c->const_ival <= 0)
			diag_error(S->cx, st->c->loc, E_FOR_STEP,
				   st->c->is_const ? "a value that is not a positive integer"
						   : "a run-time value");
		else
			sema_coerce(S, st->c, t);
	}
	Symbol *mark = S->scope;
	Symbol *iv = sema_declare(S, SYM_LOOPVAR, st, mark);
	iv->ty = type_scalar(t);
	bool div = st->a->varying || st->b->varying;
	iv->varying = div;
	S->divergent += div;
	S->loop_depth++;
	sema_block(S, st->d);
	S->loop_depth--;
	S->divergent -= div;
	S->scope = mark;
}

static void check_return(Sema *S, Node *st)
{
	Node *fn = S->fn->decl;
	if (S->fn->kind == SYM_KERNEL) {
		if (st->a) {
			sema_expr(S, st->a);
			diag_error(S->cx, st->a->loc, E_RETURN_VALUE_KERNEL);
		}
		return;
	}
	DType want = fn->a ? fn->a->dtype : DT_VOID;
	if (!st->a) {
		if (want != DT_VOID)
			diag_error(S->cx, st->loc, E_RETURN_MISSING, fn->name,
				   dtype_name(want));
		return;
	}
	DType got = sema_expr(S, st->a);
	if (got == DT_ERROR || !sema_scalar(S, st->a, "a return value"))
		return;
	sema_coerce(S, st->a, want);
	if (st->a->ty.dt != want && st->a->ty.dt != DT_ERROR)
		diag_error(S->cx, st->a->loc, E_RETURN_TYPE, fn->name,
			   dtype_name(want), dtype_name(st->a->ty.dt));
}

static bool is_pure_builtin(Builtin b)
{
	return b != B_BARRIER && b != B_NONE;
}

static void check_expr_stmt(Sema *S, Node *st)
{
	Node *e = st->a;
	if (e->kind != N_CALL) {
		sema_expr(S, e);
		diag_error(S->cx, e->loc, E_STMT_NO_EFFECT);
		return;
	}
	DType t = sema_expr(S, e);
	if (t != DT_ERROR && t != DT_VOID && is_pure_builtin(e->builtin))
		diag_error(S->cx, e->loc, E_CALL_RESULT_UNUSED, e->name);
}

static void check_stmt(Sema *S, Node *st, Symbol *mark)
{
	switch (st->kind) {
	case N_LET: case N_VAR: check_binding(S, st, mark); break;
	case N_SHARED: check_shared(S, st, mark); break;
	case N_ASSIGN: check_assign(S, st); break;
	case N_IF: check_if(S, st); break;
	case N_FOR: check_for(S, st); break;
	case N_WHILE:
		check_cond(S, st->a);
		S->divergent += st->a->varying;
		S->loop_depth++;
		sema_block(S, st->b);
		S->loop_depth--;
		S->divergent -= st->a->varying;
		break;
	case N_MBARRIER: sema_mbarrier(S, st, mark); break;
	case N_ROLE: sema_role(S, st); break;
	case N_FRAG: sema_frag(S, st, mark); break;
	case N_BREAK: case N_CONTINUE:
		if (S->loop_depth == 0)
			diag_error(S->cx, st->loc, E_BREAK_OUTSIDE_LOOP,
				   st->kind == N_BREAK ? "break" : "continue");
		break;
	case N_RETURN: check_return(S, st); break;
	case N_EXPR_STMT: check_expr_stmt(S, st); break;
	case N_BLOCK: sema_block(S, st); break;
	default:
		diag_internal(S->cx, "sema", "unexpected %s statement",
			      ast_kind_name(st->kind));
	}
}

void sema_block(Sema *S, Node *block)
{
	Symbol *mark = S->scope;
	S->block_depth++;
	for (Node *st = block->list; st; st = st->next)
		check_stmt(S, st, mark);
	S->block_depth--;
	S->scope = mark;
}

/* Whether every path through the statement ends in 'return'. Loops are not
 * trusted to run, so they never count. */
static bool always_returns(const Node *st)
{
	if (!st)
		return false;
	switch (st->kind) {
	case N_RETURN: return true;
	case N_BLOCK:
		for (const Node *s = st->list; s; s = s->next)
			if (always_returns(s))
				return true;
		return false;
	case N_IF: return always_returns(st->b) && always_returns(st->c);
	default: return false;
	}
}

/* ---- declarations ---------------------------------------------------------- */

/* const-decl = "const" IDENT [":" TYPE] "=" expr ";" (checked on first use
 * or in file order, whichever comes first; a cycle is not constant) */
static void check_const_decl(Sema *S, Symbol *sym)
{
	if (sym->index == 2)
		return;
	Node *d = sym->decl;
	if (sym->index == 1) {
		diag_error(S->cx, d->loc, E_NOT_CONSTANT,
			   ctx_printf(S->cx, "'%s' (it depends on itself and)", d->name));
		sym->ty = type_scalar(DT_ERROR);
		sym->index = 2;
		return;
	}
	sym->index = 1;
	if (d->a && declared_scalar(S, d->a, d->name) == DT_ERROR) {
		sym->ty = type_scalar(DT_ERROR);
		sym->index = 2;
		return;
	}
	Symbol *saved = S->scope;
	S->scope = NULL; /* a constant sees only top-level names */
	DType t = sema_expr(S, d->b);
	S->scope = saved;
	if (t != DT_ERROR && !d->b->is_const) {
		diag_error(S->cx, d->b->loc, E_NOT_CONSTANT,
			   ctx_printf(S->cx, "the value of '%s'", d->name));
		t = DT_ERROR;
	}
	if (t != DT_ERROR && d->a) {
		sema_coerce(S, d->b, d->a->dtype);
		if (d->b->ty.dt != d->a->dtype && d->b->ty.dt != DT_ERROR)
			diag_error(S->cx, d->b->loc, E_INIT_TYPE, d->name,
				   dtype_name(d->b->ty.dt), dtype_name(d->a->dtype));
		t = d->b->ty.dt;
	}
	sym->ty = type_scalar(t);
	sym->is_const = t != DT_ERROR;
	sym->ival = d->b->const_ival;
	sym->fval = d->b->const_fval;
	if (dtype_is_float(t) && !dtype_is_float(d->b->ty.dt))
		sym->fval = (double)d->b->const_ival;
	sym->index = 2;
}

static bool scalar_param_type(DType dt)
{
	return dt == DT_I32 || dt == DT_I64 || dt == DT_F32;
}

/* Resolves one extent of a global tensor: a positive constant, or an i32/i64
 * scalar parameter of the same kernel. */
bool sema_resolve_dim(Sema *S, Node *kernel, Node *d, Dim *out)
{
	if (d->kind == N_IDENT) {
		int i = 0;
		for (Node *p = kernel->list; p; p = p->next, i++) {
			if (strcmp(p->name, d->name) == 0 && p->a->space == SP_SCALAR &&
			    (p->a->dtype == DT_I32 || p->a->dtype == DT_I64)) {
				*out = (Dim){0, i, p->name};
				return true;
			}
		}
	}
	Symbol *saved = S->scope;
	S->scope = NULL;
	bool named = d->kind == N_IDENT && !sema_lookup(S, d->name);
	DType t = named ? DT_ERROR : sema_expr(S, d);
	S->scope = saved;
	if (named || t == DT_ERROR || !d->is_const || !dtype_is_int(t)) {
		diag_error(S->cx, d->loc, E_DIM_NOT_PARAM,
			   d->kind == N_IDENT ? d->name : "expression");
		return false;
	}
	if (d->const_ival <= 0) {
		diag_error(S->cx, d->loc, E_DIM_NOT_POSITIVE, (long long)d->const_ival);
		return false;
	}
	*out = (Dim){d->const_ival, -1, NULL};
	return true;
}

static Type param_type(Sema *S, Node *owner, Node *p)
{
	Node *ty = p->a;
	if (ty->space == SP_SCALAR)
		return type_scalar(ty->dtype);
	Type t = type_scalar(ty->dtype);
	if (owner->kind == N_FN) {
		diag_error(S->cx, p->loc, E_TENSOR_PARAM_IN_FN, p->name, owner->name);
		return type_scalar(DT_ERROR);
	}
	if (ty->space == SP_TMA)
		return sema_tma_param_type(S, owner, p);
	if (ty->space != SP_GLOBAL) {
		diag_error(S->cx, ty->loc, E_PARAM_TYPE, p->name,
			   ctx_printf(S->cx, "%s[...]", dtype_name(ty->dtype)));
		return type_scalar(DT_ERROR);
	}
	if (ty->dtype == DT_BOOL) {
		diag_error(S->cx, ty->loc, E_GLOBAL_BOOL);
		return type_scalar(DT_ERROR);
	}
	int n = ast_count(ty->list);
	if (n > TILEC_MAX_RANK) {
		diag_error(S->cx, ty->loc, E_TENSOR_RANK, TILEC_MAX_RANK, n);
		return type_scalar(DT_ERROR);
	}
	t.space = SP_GLOBAL;
	for (Node *d = ty->list; d; d = d->next)
		if (!sema_resolve_dim(S, owner, d, &t.dims[t.rank++]))
			return type_scalar(DT_ERROR);
	return t;
}

/* Creates the parameter symbols of a function or kernel (not yet in scope). */
static void declare_params(Sema *S, Node *owner)
{
	int i = 0;
	for (Node *p = owner->list; p; p = p->next, i++) {
		for (Node *q = owner->list; q != p; q = q->next)
			if (strcmp(q->name, p->name) == 0)
				diag_error(S->cx, p->loc, E_REDEFINED, p->name);
		Symbol *s = new_symbol(S, SYM_PARAM, p->name, p);
		s->index = i;
		s->ty = param_type(S, owner, p);
		p->sym = s;
		DType dt = s->ty.dt;
		bool ok = s->ty.space != SP_SCALAR || dt == DT_ERROR ||
			  (owner->kind == N_FN ? dt != DT_VOID : scalar_param_type(dt));
		if (!ok)
			diag_error(S->cx, p->a->loc, E_PARAM_TYPE, p->name, dtype_name(dt));
	}
}

/* grid-expr = INT | const | int-param | grid-expr op grid-expr
 *           | ("cdiv" | "min" | "max") "(" grid-expr "," grid-expr ")" */
static bool grid_expr_ok(Sema *S, Node *e)
{
	switch (e->kind) {
	case N_INT: return true;
	case N_IDENT: {
		Symbol *s = sema_lookup(S, e->name);
		return s && ((s->kind == SYM_PARAM && s->ty.space == SP_SCALAR &&
			      dtype_is_int(s->ty.dt)) || s->kind == SYM_CONST);
	}
	case N_BINARY:
		return e->op >= OPK_ADD && e->op <= OPK_REM &&
		       grid_expr_ok(S, e->a) && grid_expr_ok(S, e->b);
	case N_CALL:
		return (e->builtin == B_CDIV || e->builtin == B_MIN ||
			e->builtin == B_MAX) && ast_count(e->list) == 2 &&
		       grid_expr_ok(S, e->list) && grid_expr_ok(S, e->list->next);
	default: return false;
	}
}

static void check_threads(Sema *S, Node *k, Node *launch)
{
	long long v[3] = {1, 1, 1};
	int i = 0;
	for (Node *e = launch->list; e && i < 3; e = e->next, i++) {
		DType t = sema_expr(S, e);
		if (t == DT_ERROR)
			return;
		if (!e->is_const || !dtype_is_int(t)) {
			diag_error(S->cx, e->loc, E_NOT_CONSTANT, "a 'threads' dimension");
			return;
		}
		v[i] = e->const_ival;
	}
	if (v[0] < 1 || v[1] < 1 || v[2] < 1 || v[0] > 1024 || v[1] > 1024 ||
	    v[2] > 64 || v[0] * v[1] * v[2] > 1024)
		diag_error(S->cx, launch->loc, E_THREADS_RANGE, v[0], v[1], v[2]);
	(void)k;
}

static void check_grid(Sema *S, Node *launch)
{
	for (Node *e = launch->list; e; e = e->next) {
		DType t = sema_expr(S, e);
		if (t == DT_ERROR)
			continue;
		if (!dtype_is_int(t) || !grid_expr_ok(S, e))
			diag_error(S->cx, e->loc, E_GRID_EXPR,
				   "an expression outside that set");
		else
			sema_concrete(S, e);
	}
}

/* kernel launch items: exactly one grid(...) and one threads(...) */
static void check_launch(Sema *S, Node *k)
{
	Node *seen[2] = {NULL, NULL};
	static const char *const names[2] = {"grid", "threads"};
	for (Node *l = k->c; l; l = l->next) {
		if (seen[l->op]) {
			diag_error(S->cx, l->loc, E_LAUNCH_DUP, names[l->op], k->name);
			continue;
		}
		seen[l->op] = l;
		int n = ast_count(l->list);
		if (n < 1 || n > 3) {
			diag_error(S->cx, l->loc, E_LAUNCH_ARITY, names[l->op], n);
			continue;
		}
		if (l->op == LAUNCH_THREADS)
			check_threads(S, k, l);
		else
			check_grid(S, l);
	}
	for (int i = 0; i < 2; i++)
		if (!seen[i])
			diag_error(S->cx, k->loc, E_LAUNCH_MISSING, k->name, names[i]);
}

/* The x extent of threads(...) when it is the only one, else NULL. */
static Node *threads_expr(Node *kernel)
{
	for (Node *l = kernel->c; l; l = l->next)
		if (l->op == LAUNCH_THREADS)
			return l->list && !l->list->next && l->list->is_const ? l->list : NULL;
	return NULL;
}

static void check_body(Sema *S, Symbol *fsym)
{
	Node *f = fsym->decl;
	S->fn = fsym;
	S->scope = NULL;
	for (Node *p = f->list; p; p = p->next) {
		if (!p->sym)
			continue;
		p->sym->next = S->scope;
		S->scope = p->sym;
	}
	if (fsym->kind == SYM_KERNEL) {
		check_launch(S, f);
		sema_kernel_begin(S, f);
		sema_desugar_pipeline(S, f, threads_expr(f));
	}
	S->block_depth = 0;
	sema_block(S, f->b);
	if (fsym->kind == SYM_KERNEL)
		sema_kernel_end(S, f);
	if (fsym->kind == SYM_FN && f->a && !always_returns(f->b))
		diag_error(S->cx, f->loc, E_MISSING_RETURN, f->name);
	S->scope = NULL;
}

static void register_global(Sema *S, Node *it)
{
	SymKind k = it->kind == N_CONST ? SYM_CONST
		    : it->kind == N_FN ? SYM_FN : SYM_KERNEL;
	Symbol *old = find_in(S->globals, it->name, NULL);
	if (old) {
		diag_error(S->cx, it->loc, E_REDEFINED, it->name);
		diag_note(S->cx, old->decl->loc, "'%s' was declared here", old->name);
		return;
	}
	Symbol *s = new_symbol(S, k, it->name, it);
	it->sym = s;
	s->next = S->globals;
	S->globals = s;
}

/* True when `to` is reachable from `from` along call edges; `seen` marks
 * the functions already explored, so each is visited once. */
static bool reaches(Sema *S, Symbol *from, Symbol *to, Symbol **seen, int *nseen)
{
	if (from == to)
		return true;
	for (int i = 0; i < *nseen; i++)
		if (seen[i] == from)
			return false;
	seen[(*nseen)++] = from;
	for (int i = 0; i < S->nedges; i++)
		if (S->edges[i].caller == from &&
		    reaches(S, S->edges[i].callee, to, seen, nseen))
			return true;
	return false;
}

static void check_recursion(Sema *S)
{
	Symbol **seen = ctx_alloc(S->cx, ((size_t)S->nedges + 1) * sizeof(Symbol *));
	for (int i = 0; i < S->nedges; i++) {
		CallEdge *e = &S->edges[i];
		int nseen = 0;
		if (e->caller->kind == SYM_FN && reaches(S, e->callee, e->caller, seen, &nseen)) {
			diag_error(S->cx, e->loc, E_RECURSION, e->caller->name);
			return;
		}
	}
}

typedef void (*ItemFn)(Sema *S, Node *it);

static void for_each_item(Sema *S, ItemFn fn)
{
	for (int f = 0; f < S->cx->nfiles; f++)
		for (Node *it = S->cx->files[f]->items; it; it = it->next)
			fn(S, it);
}

static void pass_register(Sema *S, Node *it)
{
	if (it->kind != N_IMPORT)
		register_global(S, it);
}

static void pass_signatures(Sema *S, Node *it)
{
	if (it->kind == N_FN || it->kind == N_KERNEL)
		declare_params(S, it);
}

static void pass_bodies(Sema *S, Node *it)
{
	if (!it->sym)
		return;
	if (it->kind == N_CONST)
		check_const_decl(S, it->sym);
	else if (it->kind == N_FN || it->kind == N_KERNEL)
		check_body(S, it->sym);
}

bool sema_check(Ctx *cx)
{
	Sema S = {.cx = cx};
	int before = cx->nerrors;
	for_each_item(&S, pass_register);
	for_each_item(&S, pass_signatures);
	for_each_item(&S, pass_bodies);
	check_recursion(&S);
	return cx->nerrors == before && !cx->internal_error;
}
