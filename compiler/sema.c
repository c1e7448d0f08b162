/*
 * sema.c: name resolution and type checking of statements and
 * declarations; expressions are typed in sema_expr.c, the Hopper tile
 * constructs in sema_tile.c.
 *
 * Input: the parsed files of a program. Output: the same AST, annotated in
 * place: every expression has a Type (Node.ty), identifiers point at their
 * Symbol, builtin calls carry their Builtin id, and compile-time constants
 * carry their value (Node.is_const, const_ival/const_fval).
 *
 * Kernel-level rules (launch shape, parameter ABI, symbolic tensor extents)
 * are checked here too; the shared-memory budget is checked by plan-smem,
 * where the layout is decided.
 */
#include <stdarg.h>
#include <string.h>

#include "sema.h"

/* ---- symbols ------------------------------------------------------------- */

/*
 * Names resolve through a hash table: each name's entry holds its global
 * symbol and the innermost local of that name (locals of the same name are
 * stacked through Symbol.shadowed and popped when their block ends), so a
 * lookup or a redefinition check costs the same with 10 names in scope as
 * with 100k. S->scope still chains the locals in declaration order: blocks
 * pop back to it, and Symbol.seq orders them for the redefinition check.
 */
struct SymEntry {
	const char *name;
	Symbol *local;  /* innermost local in scope, or NULL */
	Symbol *global;
};

static unsigned name_hash(const char *name)
{
	unsigned h = 2166136261u; /* FNV-1a */
	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		h = (h ^ *p) * 16777619u;
	return h;
}

/* The entry of `name`; created (zeroed) when absent and `add`, else NULL. */
static SymEntry *entry_of(Sema *S, const char *name, bool add)
{
	if (add && 2 * (S->nentries + 1) > S->cap_entries) {
		/* grown in the arena: the old tables are at most as large as the last */
		int cap = S->cap_entries ? 2 * S->cap_entries : 256;
		SymEntry *t = ctx_alloc(S->cx, (size_t)cap * sizeof(SymEntry));
		for (int i = 0; i < S->cap_entries; i++) {
			if (!S->entries[i].name)
				continue;
			unsigned j = name_hash(S->entries[i].name) & (unsigned)(cap - 1);
			while (t[j].name)
				j = (j + 1) & (unsigned)(cap - 1);
			t[j] = S->entries[i];
		}
		S->entries = t;
		S->cap_entries = cap;
	}
	if (!S->cap_entries)
		return NULL;
	unsigned mask = (unsigned)(S->cap_entries - 1);
	for (unsigned j = name_hash(name) & mask;; j = (j + 1) & mask) {
		SymEntry *e = &S->entries[j];
		if (!e->name) {
			if (!add)
				return NULL;
			e->name = name;
			S->nentries++;
			return e;
		}
		if (strcmp(e->name, name) == 0)
			return e;
	}
}

/* A local is seen unless constants are being checked or it is a caller's,
 * below the floor of an inlined helper's body; a helper's parameter names
 * the caller's symbol. */
Symbol *sema_lookup(Sema *S, const char *name)
{
	SymEntry *e = entry_of(S, name, false);
	if (!e)
		return NULL;
	Symbol *s = e->local && !S->locals_hidden && e->local->seq > S->local_floor
		    ? e->local : e->global;
	return s && s->kind == SYM_ALIAS ? s->alias : s;
}

/* Brings a local into scope, innermost. */
void sema_push(Sema *S, Symbol *s)
{
	SymEntry *e = entry_of(S, s->name, true);
	s->shadowed = e->local;
	e->local = s;
	s->seq = ++S->nseq;
	s->next = S->scope;
	S->scope = s;
	if (s->kind == SYM_FRAG) {
		s->next_frag = S->frags;
		S->frags = s;
	}
}

/* Ends the scope of every local declared after `mark` (a scope S->scope held). */
void sema_pop_scope(Sema *S, Symbol *mark)
{
	while (S->scope && S->scope != mark) {
		Symbol *s = S->scope;
		entry_of(S, s->name, false)->local = s->shadowed;
		if (s == S->frags)
			S->frags = s->next_frag;
		S->scope = s->next;
	}
}

Symbol *sema_new_symbol(Sema *S, SymKind kind, const char *name, Node *decl)
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
	SymEntry *e = entry_of(S, decl->name, false);
	Symbol *old = e && !S->locals_hidden ? e->local : NULL;
	if (old && old->seq > (mark ? mark->seq : 0)) {
		diag_error(S->cx, decl->loc, E_REDEFINED, decl->name);
		diag_note(S->cx, old->decl->loc, "'%s' was declared here", old->name);
	}
	Symbol *s = sema_new_symbol(S, kind, decl->name, decl);
	sema_push(S, s);
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
	case SYM_LOCAL: return "local array";
	case SYM_LOOPVAR: return "loop variable";
	case SYM_MBAR: return "mbarrier";
	case SYM_ROLE: return "role";
	case SYM_FRAG: return "fragment";
	case SYM_ALIAS: return "parameter";
	}
	return "name";
}

#define DIAG(id, fmt) fmt,
static const char *const warning_formats[] = {
#include "diag.def"
};
#undef DIAG

/* A warning: kept in order with the errors but not failing the compile, and
 * marked fired so the coverage test counts it (diag.c adds errors and notes only). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
void sema_warn(Sema *S, Loc loc, DiagId id, ...)
{
	Ctx *cx = S->cx;
	cx->diag_fired[id] = true;
	if (cx->ndiags >= TILEC_MAX_DIAGS)
		return;
	char buf[1024];
	va_list ap;
	va_start(ap, id);
	vsnprintf(buf, sizeof buf, warning_formats[id], ap);
	va_end(ap);
	cx->diags[cx->ndiags++] = (Diag){SEV_WARNING, id, loc, ctx_strdup(cx, buf)};
}
#pragma GCC diagnostic pop

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

enum { LOCAL_ARRAY_MAX = 256 };

/* var-stmt = "var" IDENT ":" TYPE "[" dims "]": a thread's own array, zeros where declared.
 * Small (it is meant for registers), of a 32- or 64-bit scalar type, constant extents. Its
 * values count as varying between threads (what was stored is not tracked). */
static void check_local_array(Sema *S, Node *st, Symbol *mark)
{
	Symbol *s = sema_declare(S, SYM_LOCAL, st, mark);
	s->ty = type_scalar(DT_ERROR);
	s->varying = VARY_LANE;
	Node *ty = st->a;
	Type t = type_scalar(ty->dtype);
	t.space = SP_LOCAL;
	long long n = 1;
	bool ok = !st->b && !ty->b &&
		  (ty->dtype == DT_I32 || ty->dtype == DT_I64 || ty->dtype == DT_F32);
	for (Node *d = ty->list; d; d = d->next) {
		sema_expr(S, d);
		if (!d->is_const || !dtype_is_int(d->ty.dt) || d->const_ival <= 0 ||
		    d->const_ival > LOCAL_ARRAY_MAX || t.rank == 2) {
			ok = false;
			break;
		}
		n *= d->const_ival;
		t.dims[t.rank++] = (Dim){d->const_ival, -1, NULL};
	}
	if (!ok || n > LOCAL_ARRAY_MAX) {
		diag_error(S->cx, ty->loc, E_LOCAL_ARRAY, st->name);
		return;
	}
	s->ty = t;
}

/* let-stmt = "let" IDENT [":" TYPE] "=" expr;  var-stmt likewise, or
 * "var" IDENT ":" TYPE (zero-initialised) */
static void check_binding(Sema *S, Node *st, Symbol *mark)
{
	if (st->kind == N_VAR && st->a && st->a->space == SP_SHARED) {
		check_local_array(S, st, mark);
		return;
	}
	DType want = st->a ? declared_scalar(S, st->a, st->name) : DT_VOID;
	S->stmt_call = st->b;
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
	s->varying = st->b ? st->b->varying : VARY_NONE;
	if (st->b && st->b->ty.space == SP_FRAG) {
		if (st->kind == N_VAR || st->a)
			sema_scalar(S, st->b, st->kind == N_VAR
				    ? "the value of a 'var' (declare mutable fragments with 'frag')"
				    : "the value of a typed 'let'");
		else
			s->ty = st->b->ty; /* let p = exp2(s * c): an immutable fragment */
	}
}

/* shared NAME: T overlay(BASE): BASE must be a shared array declared
 * earlier in the kernel (an overlay of an overlay shares the first one's
 * bytes). Who uses the bytes when is the kernel's business, as in CUDA. */
static void check_overlay(Sema *S, Node *st)
{
	Node *base = st->b;
	Symbol *b = sema_lookup(S, base->name);
	if (!b || b->kind != SYM_SHARED || b->decl == st) {
		const char *what = !b ? "undeclared" : b->decl == st ? "the array itself"
			: ctx_printf(S->cx, "a %s", sema_sym_kind_name(b->kind));
		diag_error(S->cx, base->loc, E_SHARED_OVERLAY, base->name, base->name, what,
			   st->name);
		return;
	}
	base->sym = b;
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
	if (st->b)
		check_overlay(S, st);
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
	if (s->kind == SYM_LOCAL || s->kind == SYM_SHARED) {
		diag_error(S->cx, target->loc, E_ASSIGN_ARRAY, target->name,
			   sema_sym_kind_name(s->kind), target->name);
		sema_set_scalar(target, DT_ERROR);
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

/* A variable assigned under a branch varies as the branch's condition does, whatever the value. */
static void mark_varying(Sema *S, Node *t, const Node *v)
{
	if (t->kind != N_IDENT || !t->sym)
		return;
	Vary under = S->lane_divergent ? VARY_LANE : S->divergent ? VARY_WARP : VARY_NONE;
	t->sym->varying = vary_max(t->sym->varying, vary_max(v->varying, under));
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
		OperandClass c = sema_operand_class(st->op);
		if (!sema_class_accepts(c, v->ty.dt) || !sema_class_accepts(c, saved)) {
			Node *bad = sema_class_accepts(c, saved) ? v : t;
			diag_error(S->cx, bad->loc, E_OPERAND_TYPE, ast_op_str(st->op),
				   sema_class_name(c), dtype_name(bad->ty.dt));
			return;
		}
		mark_varying(S, t, v);
		if (sema_unify(S, &tmp, ast_op_str(st->op), t, v) != DT_ERROR)
			assign_shape_ok(S, t, v);
		return;
	}
	S->stmt_call = v;
	DType vt = sema_expr(S, v);
	mark_varying(S, t, v);
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
	bool div = st->a->varying != VARY_NONE, el = elects(st->a);
	bool lanes = st->a->varying == VARY_LANE;
	S->divergent += div;
	S->lane_divergent += lanes;
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
	S->lane_divergent -= lanes;
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
		    (t = sema_unify(S, st, "..", st->a, st->b)) == DT_ERROR) {
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
	Vary vary = vary_max(st->a->varying, st->b->varying);
	bool div = vary != VARY_NONE, lanes = vary == VARY_LANE;
	iv->varying = vary;
	S->divergent += div;
	S->lane_divergent += lanes;
	S->loop_depth++;
	sema_block(S, st->d);
	sema_check_rs_loop(S, S->loop_depth);
	S->loop_depth--;
	S->divergent -= div;
	S->lane_divergent -= lanes;
	sema_pop_scope(S, mark);
}

static void check_return(Sema *S, Node *st)
{
	Node *fn = S->fn->decl;
	if (S->ninlining) {
		Symbol *h = S->inlining[S->ninlining - 1];
		if (st->a && !h->decl->a && st->next == NULL)
			diag_error(S->cx, st->a->loc, E_RETURN_TYPE, h->name, "void",
				   dtype_name(sema_expr(S, st->a)));
		else
			diag_error(S->cx, st->loc, E_HELPER_RETURN, h->name);
		return;
	}
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

/* A builtin called for its value alone: its result must be used (atomic_add's need not be:
 * the add is its effect). */
static bool is_pure_builtin(Builtin b)
{
	return b != B_BARRIER && b != B_NONE && b != B_ATOMIC_ADD;
}

static void check_expr_stmt(Sema *S, Node *st)
{
	Node *e = st->a;
	if (e->kind != N_CALL) {
		sema_expr(S, e);
		diag_error(S->cx, e->loc, E_STMT_NO_EFFECT);
		return;
	}
	S->stmt_call = e;
	DType t = sema_expr(S, e);
	if (t != DT_ERROR && t != DT_VOID && is_pure_builtin(e->builtin))
		diag_error(S->cx, e->loc, E_CALL_RESULT_UNUSED, e->name);
}

void sema_stmt(Sema *S, Node *st, Symbol *mark)
{
	switch (st->kind) {
	case N_LET: case N_VAR: check_binding(S, st, mark); break;
	case N_SHARED: check_shared(S, st, mark); break;
	case N_ASSIGN: check_assign(S, st); break;
	case N_IF: check_if(S, st); break;
	case N_FOR: check_for(S, st); break;
	case N_WHILE:
		check_cond(S, st->a);
		S->divergent += st->a->varying != VARY_NONE;
		S->lane_divergent += st->a->varying == VARY_LANE;
		S->loop_depth++;
		sema_block(S, st->b);
		sema_check_rs_loop(S, S->loop_depth);
		S->loop_depth--;
		S->divergent -= st->a->varying != VARY_NONE;
		S->lane_divergent -= st->a->varying == VARY_LANE;
		break;
	case N_MBARRIER: sema_mbarrier(S, st, mark); break;
	case N_ROLE: sema_role(S, st); break;
	case N_FRAG: sema_frag(S, st, mark); break;
	case N_BREAK: case N_CONTINUE:
		if (S->loop_depth == S->loop_floor)
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
		sema_stmt(S, st, mark);
	S->block_depth--;
	sema_pop_scope(S, mark);
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
void sema_const_decl(Sema *S, Symbol *sym)
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
	/* a constant's value is checked where it is first used, inside the value
	 * of the constant using it: the levels of such a chain add up on the stack */
	int levels = d->b->depth > 1 ? d->b->depth : 1;
	if (S->const_levels + levels > TILEC_MAX_NESTING) {
		diag_error(S->cx, d->loc, E_CONST_CHAIN, d->name, TILEC_MAX_NESTING);
		diag_note(S->cx, S->const_root->decl->loc, "'%s' is defined through it",
			  S->const_root->name);
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
	if (!S->const_levels)
		S->const_root = sym;
	S->const_levels += levels;
	S->locals_hidden++; /* a constant sees only top-level names */
	DType t = sema_expr(S, d->b);
	S->locals_hidden--;
	S->const_levels -= levels;
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
	S->locals_hidden++;
	bool named = d->kind == N_IDENT && !sema_lookup(S, d->name);
	DType t = named ? DT_ERROR : sema_expr(S, d);
	S->locals_hidden--;
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
	if (sema_is_ref_type(ty)) {
		/* the argument's symbol stands for it where the helper is inlined */
		if (owner->kind == N_KERNEL) {
			diag_error(S->cx, ty->loc, E_REF_PARAM_IN_KERNEL, p->name, owner->name);
			return type_scalar(DT_ERROR);
		}
		t.space = ty->space;
		return t;
	}
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
		Symbol *s = sema_new_symbol(S, SYM_PARAM, p->name, p);
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

static void check_threads(Sema *S, Node *launch)
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

/* A launch item of one integer constant: its value in *n, or false with what was found instead
 * in `found` (nothing when the expression's own error was reported). */
static bool one_int_const(Sema *S, Node *launch, long long *n, char *found, size_t size)
{
	Node *e = launch->list;
	found[0] = 0;
	if (!e || e->next) {
		snprintf(found, size, "%d values", ast_count(e));
		return false;
	}
	DType t = sema_expr(S, e);
	if (t == DT_ERROR)
		return false;
	if (!e->is_const || !dtype_is_int(t)) {
		snprintf(found, size, "a value that is not an integer constant");
		return false;
	}
	*n = e->const_ival;
	return true;
}

/* ctas_per_sm(N): one constant, N CTAs of the block's threads fitting an SM (32 CTAs, 2048
 * threads) */
static void check_ctas(Sema *S, Node *launch)
{
	char found[96];
	long long n;
	if (one_int_const(S, launch, &n, found, sizeof found)) {
		if (n >= 1 && n <= 32 && n * S->block_threads <= 2048) {
			S->ctas_per_sm = n;
			return;
		}
		snprintf(found, sizeof found, "%lld CTAs of %d threads", n, S->block_threads);
	}
	if (found[0])
		diag_error(S->cx, launch->loc, E_CTAS_PER_SM, found);
}

/* cluster(N): a portable cluster size (the CTAs of a cluster are co-scheduled on one GPC),
 * a constant or an expression of the scalar parameters as grid's (the runtime checks its
 * value at launch) */
static void check_cluster(Sema *S, Node *launch)
{
	char found[96];
	Node *e = launch->list;
	if (!e || e->next) {
		snprintf(found, sizeof found, "%d values", ast_count(e));
	} else {
		DType t = sema_expr(S, e);
		if (t == DT_ERROR)
			return;
		if (!dtype_is_int(t) || (!e->is_const && !grid_expr_ok(S, e))) {
			snprintf(found, sizeof found, "an expression outside grid's set");
		} else if (!e->is_const) {
			sema_concrete(S, e);
			return;
		} else if (e->const_ival >= 1 && e->const_ival <= 8) {
			return;
		} else {
			snprintf(found, sizeof found, "%lld", (long long)e->const_ival);
		}
	}
	diag_error(S->cx, launch->loc, E_CLUSTER, found);
}

/* kernel launch items: exactly one grid(...) and one threads(...), ctas_per_sm(...) and
 * cluster(...) at most once each */
static void check_launch(Sema *S, Node *k)
{
	Node *seen[4] = {NULL, NULL, NULL, NULL};
	static const char *const names[4] = {"grid", "threads", "ctas_per_sm", "cluster"};
	for (Node *l = k->c; l; l = l->next) {
		if (seen[l->op]) {
			diag_error(S->cx, l->loc, E_LAUNCH_DUP, names[l->op], k->name);
			continue;
		}
		seen[l->op] = l;
		if (l->op == LAUNCH_CTAS)
			continue; /* checked once the block's threads are known */
		if (l->op == LAUNCH_CLUSTER) {
			check_cluster(S, l);
			continue;
		}
		int n = ast_count(l->list);
		if (n < 1 || n > 3) {
			diag_error(S->cx, l->loc, E_LAUNCH_ARITY, names[l->op], n);
			continue;
		}
		if (l->op == LAUNCH_THREADS)
			check_threads(S, l);
		else
			check_grid(S, l);
	}
	for (int i = 0; i < 2; i++)
		if (!seen[i])
			diag_error(S->cx, k->loc, E_LAUNCH_MISSING, k->name, names[i]);
}

static bool same_diag(const Diag *a, const Diag *b)
{
	return a->sev == b->sev && a->loc.file == b->loc.file && a->loc.line == b->loc.line &&
	       a->loc.col == b->loc.col && !strcmp(a->msg, b->msg);
}

/* The pipeline rewrite copies the user's loop bounds, windows and scalar lets
 * into both roles: an error in them is reported once, with its notes. */
static void drop_repeated_diags(Sema *S)
{
	Ctx *cx = S->cx;
	int kept = S->kernel_diags;
	bool dropping = false;
	for (int i = S->kernel_diags; i < cx->ndiags; i++) {
		Diag *d = &cx->diags[i];
		if (d->sev != SEV_NOTE) {
			dropping = false;
			for (int j = S->kernel_diags; j < kept && !dropping; j++)
				dropping = same_diag(&cx->diags[j], d);
		}
		if (dropping) {
			cx->nerrors -= d->sev == SEV_ERROR;
			continue;
		}
		cx->diags[kept++] = *d;
	}
	cx->ndiags = kept;
}

static void check_body(Sema *S, Symbol *fsym)
{
	Node *f = fsym->decl;
	S->fn = fsym;
	sema_pop_scope(S, NULL);
	for (Node *p = f->list; p; p = p->next)
		if (p->sym)
			sema_push(S, p->sym);
	if (fsym->kind == SYM_KERNEL) {
		S->kernel_diags = S->cx->ndiags;
		S->kernel_errors = S->cx->nerrors;
		check_launch(S, f);
		sema_kernel_begin(S, f);
		for (Node *l = f->c; l; l = l->next)
			if (l->op == LAUNCH_CTAS) {
				check_ctas(S, l);
				break; /* a second one is reported by check_launch */
			}
	}
	S->block_depth = 0;
	sema_block(S, f->b);
	if (fsym->kind == SYM_KERNEL)
		sema_kernel_end(S, f);
	if (fsym->kind == SYM_KERNEL && S->pipelined)
		drop_repeated_diags(S);
	if (fsym->kind == SYM_FN && f->a && !always_returns(f->b))
		diag_error(S->cx, f->loc, E_MISSING_RETURN, f->name);
	sema_pop_scope(S, NULL);
}

static void register_global(Sema *S, Node *it)
{
	SymKind k = it->kind == N_CONST ? SYM_CONST
		    : it->kind == N_FN ? SYM_FN : SYM_KERNEL;
	SymEntry *e = entry_of(S, it->name, true);
	Symbol *old = e->global;
	if (old) {
		diag_error(S->cx, it->loc, E_REDEFINED, it->name);
		diag_note(S->cx, old->decl->loc, "'%s' was declared here", old->name);
		return;
	}
	Symbol *s = sema_new_symbol(S, k, it->name, it);
	it->sym = s;
	e->global = s;
}

/*
 * The call graph: a call inside a cycle is recursion, and helpers are inlined
 * into their callers, so a chain of nested helper calls deeper than the nesting
 * limit is refused too. Tarjan's strongly connected components, with explicit
 * stacks (a chain of 20k helpers must not recurse 20k deep), number each
 * function's component; components complete callees first, so the depth of a
 * function's deepest chain of calls is known when its component completes.
 */
static void check_calls(Sema *S)
{
	Ctx *cx = S->cx;
	int n = 0;
	for (int f = 0; f < cx->nfiles; f++)
		for (Node *it = cx->files[f]->items; it; it = it->next)
			if (it->sym && (it->sym->kind == SYM_FN || it->sym->kind == SYM_KERNEL))
				it->sym->index = n++;
	if (!S->nedges)
		return;
	size_t ints = (size_t)n + 1;
	int *first = ctx_alloc(cx, ints * sizeof(int));  /* callee edges of v: adj[first[v]..] */
	int *adj = ctx_alloc(cx, (size_t)S->nedges * sizeof(int));
	int *order = ctx_alloc(cx, ints * sizeof(int));  /* Tarjan's numbering, 0 = unvisited */
	int *low = ctx_alloc(cx, ints * sizeof(int));
	int *comp = ctx_alloc(cx, ints * sizeof(int));   /* component + 1, 0 while open */
	int *depth = ctx_alloc(cx, ints * sizeof(int));  /* helpers in the deepest chain from v */
	int64_t *inlined = ctx_alloc(cx, ints * sizeof(int64_t)); /* calls v expands to, capped */
	int *stack = ctx_alloc(cx, ints * sizeof(int));  /* Tarjan's stack of open functions */
	int *path = ctx_alloc(cx, ints * sizeof(int));   /* the DFS path ... */
	int *cursor = ctx_alloc(cx, ints * sizeof(int)); /* ... and the next edge of each */
	for (int i = 0; i < S->nedges; i++)
		first[S->edges[i].caller->index + 1]++;
	for (int v = 0; v < n; v++)
		first[v + 1] += first[v];
	for (int i = 0; i < S->nedges; i++)
		adj[cursor[S->edges[i].caller->index]++ + first[S->edges[i].caller->index]] = i;
	int counter = 0, ncomp = 0, sp = 0;
	for (int root = 0; root < n; root++) {
		if (order[root])
			continue;
		int top = 0;
		path[0] = root;
		cursor[root] = first[root];
		order[root] = low[root] = ++counter;
		stack[sp++] = root;
		while (top >= 0) {
			int v = path[top];
			if (cursor[v] < first[v + 1]) {
				int w = S->edges[adj[cursor[v]++]].callee->index;
				if (!order[w]) {
					order[w] = low[w] = ++counter;
					stack[sp++] = w;
					cursor[w] = first[w];
					path[++top] = w;
				} else if (!comp[w] && order[w] < low[v]) {
					low[v] = order[w];
				}
				continue;
			}
			if (low[v] == order[v]) {
				ncomp++;
				int w;
				do {
					w = stack[--sp];
					comp[w] = ncomp;
				} while (w != v);
			}
			int d = 0;
			int64_t calls = 0;
			for (int j = first[v]; j < first[v + 1]; j++) {
				int w = S->edges[adj[j]].callee->index;
				d = depth[w] > d ? depth[w] : d;
				calls += 1 + inlined[w];
				if (calls > TILEC_MAX_INLINED_CALLS)
					calls = TILEC_MAX_INLINED_CALLS + 1; /* capped: no overflow */
			}
			depth[v] = d + 1;
			inlined[v] = calls;
			if (--top >= 0 && low[v] < low[path[top]])
				low[path[top]] = low[v];
		}
	}
	for (int i = 0; i < S->nedges; i++) {
		CallEdge *e = &S->edges[i];
		if (e->caller->kind == SYM_FN && comp[e->caller->index] == comp[e->callee->index]) {
			diag_error(cx, e->loc, E_RECURSION, e->caller->name);
			return;
		}
	}
	for (int i = 0; i < S->nedges; i++) {
		CallEdge *e = &S->edges[i];
		int chain = depth[e->callee->index] + (e->caller->kind == SYM_FN);
		if (chain > TILEC_MAX_NESTING) {
			diag_error(cx, e->loc, E_CALL_DEPTH, e->callee->name, chain,
				   TILEC_MAX_NESTING);
			return;
		}
	}
	/* a shallow tree of helpers can still expand exponentially when inlined
	 * (each calling the next twice): code generation would not finish */
	for (int i = 0; i < S->nedges; i++) {
		CallEdge *e = &S->edges[i];
		if (inlined[e->callee->index] >= TILEC_MAX_INLINED_CALLS) {
			diag_error(cx, e->loc, E_INLINED_CALLS, e->callee->name,
				   TILEC_MAX_INLINED_CALLS);
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
		sema_const_decl(S, it->sym);
	else if (it->kind == N_KERNEL || !it->sym->tile_helper)
		check_body(S, it->sym); /* a tile helper is checked where it is inlined */
}

/* The tile helpers among all functions (sema_inline.c), before any body is checked. */
static void mark_tile_helpers(Sema *S)
{
	int n = 0;
	for (int f = 0; f < S->cx->nfiles; f++)
		for (Node *it = S->cx->files[f]->items; it; it = it->next)
			n += it->kind == N_FN && it->sym;
	Node **fns = ctx_alloc(S->cx, (size_t)(n + 1) * sizeof(Node *));
	n = 0;
	for (int f = 0; f < S->cx->nfiles; f++)
		for (Node *it = S->cx->files[f]->items; it; it = it->next)
			if (it->kind == N_FN && it->sym)
				fns[n++] = it;
	sema_mark_tile_helpers(S, fns, n);
}

bool sema_check(Ctx *cx)
{
	Sema S = {.cx = cx};
	int before = cx->nerrors;
	for_each_item(&S, pass_register);
	mark_tile_helpers(&S);
	for_each_item(&S, pass_signatures);
	for_each_item(&S, pass_bodies);
	check_calls(&S);
	return cx->nerrors == before && !cx->internal_error;
}
