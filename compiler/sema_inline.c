/*
 * sema_inline.c: helpers with tile parameters.
 *
 * A helper that takes a tensor, a shared array or view, a fragment, an
 * mbarrier or a role by reference, returns a fragment, or uses a warpgroup operation is
 * a tile helper: sema inlines it at each call site. The body is copied, each
 * parameter bound to its argument, and the copy checked where it lands, in the
 * caller's role, branches and loops, so every rule of a kernel body (role
 * context, uniform branches, arrive counts, pending accumulators) holds inside
 * the helper at each call site. The call node keeps the checked copy (N_CALL.b)
 * and its result (N_CALL.c); lower.c emits them in place of a call.
 *
 * Binding, for `fn f(t: shared bf16, n: i32)` called as `f(As[s, r0 +: 64, :], 2 * k)`:
 *   - a by-reference parameter becomes an alias of the argument's symbol, so
 *     the helper's `t` names `As` (a fragment's pending wgmma, a barrier's
 *     arrivals are the caller's);
 *   - a view's indices are evaluated once at the call (constants stay literal,
 *     names keep the caller's symbol under a hidden name, other expressions
 *     become hidden 'let's), and the helper's uses of `t` are rewritten to
 *     views of `As` through them: `t[i, j]` is `As[s, r0 + i, j]`; a constant
 *     index or window past the view's window is an error;
 *   - a role parameter names the caller's role, for sync(r) and signal(r, s);
 *   - a scalar parameter is a 'let' of its argument, or a constant when the
 *     argument is one (so it may size the helper's fragments).
 * The helper's body sees its parameters, its own locals and top-level names,
 * never the caller's locals.
 *
 * A function of scalar parameters called with fragments (elementwise) is expanded the same
 * way, its arguments already checked by the caller: an f32 parameter binds a fragment by value
 * (a 'let'), and the result may be a fragment.
 */
#include <string.h>

#include "sema.h"

bool sema_is_ref_type(const Node *type)
{
	return type && type->kind == N_TYPE && type->ival == 1;
}

/* ---- which helpers are tile helpers ---------------------------------------------- */

static bool uses_tile_ops(Sema *S, const Node *n)
{
	for (; n; n = n->next) {
		if (n->kind == N_CALL || n->kind == N_IDENT) {
			Symbol *s = n->kind == N_CALL ? sema_lookup(S, n->name) : NULL;
			if (s && s->kind == SYM_FN && s->tile_helper)
				return true;
			if (!s && sema_is_tile_builtin(builtin_lookup(n->name)))
				return true;
			if (n->kind == N_IDENT && builtin_lookup(n->name) == B_WG_RANK)
				return true;
		}
		if (n->kind == N_FRAG || n->kind == N_MBARRIER || n->kind == N_ROLE)
			return true;
		if (uses_tile_ops(S, n->a) || uses_tile_ops(S, n->b) || uses_tile_ops(S, n->c) ||
		    uses_tile_ops(S, n->d) || uses_tile_ops(S, n->list))
			return true;
	}
	return false;
}

static bool has_ref_signature(const Node *fn)
{
	if (sema_is_ref_type(fn->a))
		return true;
	for (const Node *p = fn->list; p; p = p->next)
		if (sema_is_ref_type(p->a))
			return true;
	return false;
}

/* Marks every tile helper: a by-reference signature, or a body with warpgroup
 * operations or calls of tile helpers (to a fixed point over the helpers). */
void sema_mark_tile_helpers(Sema *S, Node **items, int nitems)
{
	for (int i = 0; i < nitems; i++)
		if (items[i]->sym && has_ref_signature(items[i]))
			items[i]->sym->tile_helper = true;
	for (bool changed = true; changed;) {
		changed = false;
		for (int i = 0; i < nitems; i++) {
			Symbol *s = items[i]->sym;
			if (s && !s->tile_helper && uses_tile_ops(S, items[i]->b)) {
				s->tile_helper = true;
				changed = true;
			}
		}
	}
}

/* ---- binding the arguments ------------------------------------------------------- */

typedef struct Binding {
	Node *param;
	Node *arg;
	Symbol *target;  /* by reference: the argument's symbol */
	Node *view;      /* by reference to a view: its index list, hoisted */
	bool constant;   /* a scalar parameter bound to a constant */
} Binding;

typedef struct Inline {
	Sema *S;
	Node *call;
	Symbol *fn;
	Binding *b;
	int nb;
	Node *hoisted;   /* the hidden 'let's of view indices and values, in order */
	int nhoisted;
	Node *renamed;   /* hidden names for a view index that is a name: N_IDENT, sym = its symbol */
	bool elementwise; /* a scalar function applied to fragments: its arguments are checked */
	DType tparam[TILEC_MAX_TYPE_PARAMS];  /* the type parameters' bound types (DT_VOID: none yet) */
	int tparam_at[TILEC_MAX_TYPE_PARAMS]; /* ... and the argument that bound each */
} Inline;

static Node *new_node(Inline *I, NodeKind k, Loc loc)
{
	return ast_new(I->S->cx, k, loc);
}

static Node *int_literal(Inline *I, int64_t v, Loc loc)
{
	Node *n = new_node(I, N_INT, loc);
	n->ival = v;
	return n;
}

/* A hidden 'let' of a checked expression, declared with the helper's names;
 * its name has a '.', which source names cannot. */
static Node *hoist(Inline *I, Node *value, const char *name)
{
	Node *let = new_node(I, N_LET, value->loc);
	let->name = name ? name : ctx_printf(I->S->cx, "%s.%d", I->fn->name, I->nhoisted);
	let->b = value;
	I->nhoisted++;
	I->hoisted = ast_append(I->hoisted, let);
	return let;
}

static Node *ident_of(Inline *I, Node *let, Loc loc)
{
	Node *n = new_node(I, N_IDENT, loc);
	n->name = let->name;
	return n;
}

/* A view's index, evaluated once at the call: a literal when constant; a name stays the
 * caller's symbol under a hidden name (nothing in the helper can assign it), so views of
 * one stage passed apart still index alike (the stage-release check compares symbols). */
static Node *hoist_index(Inline *I, Node *ix)
{
	if (ix->is_const)
		return int_literal(I, ix->const_ival, ix->loc);
	if (ix->kind == N_IDENT && ix->sym) {
		Node *r = new_node(I, N_IDENT, ix->loc);
		r->name = ctx_printf(I->S->cx, "%s.%d", I->fn->name, I->nhoisted++);
		r->sym = ix->sym;
		I->renamed = ast_append(I->renamed, r);
		return ident_of(I, r, ix->loc);
	}
	return ident_of(I, hoist(I, ix, NULL), ix->loc);
}

static Node *hoist_view(Inline *I, Node *list)
{
	Node *out = NULL;
	for (Node *ix = list; ix; ix = ix->next) {
		Node *c;
		if (ix->kind == N_FULL) {
			c = new_node(I, N_FULL, ix->loc);
		} else if (ix->kind == N_RANGE) {
			c = new_node(I, N_RANGE, ix->loc);
			c->a = hoist_index(I, ix->a);
			c->b = int_literal(I, ix->b->const_ival, ix->b->loc);
		} else {
			c = hoist_index(I, ix);
		}
		out = ast_append(out, c);
	}
	return out;
}

static const char *space_name(Space sp)
{
	switch (sp) {
	case SP_GLOBAL: return "a global tensor";
	case SP_TMA: return "a tma tensor";
	case SP_SHARED: return "a shared array or view";
	case SP_FRAG: return "a fragment";
	case SP_MBAR: return "an mbarrier";
	case SP_ROLE: return "a role";
	default: return "a value";
	}
}

static bool arg_error(Inline *I, Node *arg, int i, const char *want, const char *found)
{
	diag_error(I->S->cx, arg->loc, E_ARG_TYPE, i, I->fn->name, want, found);
	return false;
}

static const char *wanted(Inline *I, const Node *pt)
{
	if (pt->space == SP_MBAR || pt->space == SP_ROLE)
		return space_name(pt->space);
	if (pt->dtype == DT_VOID)
		return space_name(pt->space);
	return ctx_printf(I->S->cx, "%s of %s", space_name(pt->space), dtype_name(pt->dtype));
}

/* A parameter whose element type is a type parameter: the first argument binds it, every
 * later one must have the same element type. */
static bool bind_type_param(Inline *I, Binding *b, int i, DType got)
{
	int k = b->param->a->tvar - 1;
	if (k < 0)
		return true;
	if (I->tparam[k] == DT_VOID) {
		I->tparam[k] = got;
		I->tparam_at[k] = i;
		return true;
	}
	if (I->tparam[k] == got)
		return true;
	diag_error(I->S->cx, b->arg->loc, E_TYPE_PARAM_BOUND, i, I->fn->name,
		   b->param->a->name, dtype_name(got), dtype_name(I->tparam[k]));
	return false;
}

/* The parameter's dims ('_' any; others constants) against the argument's shape. */
static bool shape_matches(Inline *I, Binding *b, int i, const Type *t)
{
	Node *pt = b->param->a;
	if (!pt->list)
		return true;
	Sema *S = I->S;
	int n = ast_count(pt->list);
	bool ok = n == t->rank;
	int d = 0;
	for (Node *x = pt->list; x && ok; x = x->next, d++) {
		if (x->kind == N_IDENT && strcmp(x->name, "_") == 0)
			continue;
		S->locals_hidden++;
		sema_expr(S, x);
		S->locals_hidden--;
		if (!x->is_const || !dtype_is_int(x->ty.dt)) {
			diag_error(S->cx, x->loc, E_NOT_CONSTANT, "an extent of a parameter");
			return false;
		}
		ok = t->dims[d].param < 0 && t->dims[d].value == x->const_ival;
	}
	if (!ok)
		diag_error(S->cx, b->arg->loc, E_ARG_SHAPE, i, I->fn->name,
			   type_str(S->cx, t), b->param->name);
	return ok;
}

/* A scalar parameter: a scalar argument, or, applied elementwise, an f32 parameter may take
 * a fragment (its elements are f32), bound by value like any fragment expression. */
static bool bind_scalar(Inline *I, Binding *b, int i)
{
	Sema *S = I->S;
	Node *a = b->arg;
	DType pt = b->param->a->dtype;
	DType got = I->elementwise ? a->ty.dt : sema_expr(S, a);
	if (got == DT_ERROR)
		return false;
	if (I->elementwise && sema_is_frag(a)) {
		if (pt != DT_F32)
			return arg_error(I, a, i, ctx_printf(S->cx, "'%s'", dtype_name(pt)),
					 "frag f32");
		hoist(I, a, b->param->name);
		return true;
	}
	if (!sema_scalar(S, a, "an argument of a function"))
		return false;
	sema_coerce(S, a, pt);
	if (a->ty.dt != pt && a->ty.dt != DT_ERROR)
		return arg_error(I, a, i, ctx_printf(S->cx, "'%s'", dtype_name(pt)),
				 dtype_name(a->ty.dt));
	b->constant = a->is_const;
	if (!b->constant)
		hoist(I, a, b->param->name);
	return true;
}

/* A fragment argument: a fragment's name binds by reference (the helper may
 * assign it or run wgmma into it); any other fragment expression by value. */
static bool bind_frag(Inline *I, Binding *b, int i)
{
	Sema *S = I->S;
	Node *a = b->arg, *pt = b->param->a;
	Symbol *s = a->kind == N_IDENT ? sema_lookup(S, a->name) : NULL;
	const Type *t;
	if (s && (s->kind == SYM_FRAG || s->kind == SYM_LET) && s->ty.space == SP_FRAG) {
		a->sym = s;
		b->target = s;
		t = &s->ty;
	} else {
		if (sema_expr(S, a) == DT_ERROR)
			return false;
		if (a->ty.space != SP_FRAG)
			return arg_error(I, a, i, wanted(I, pt), dtype_name(a->ty.dt));
		hoist(I, a, b->param->name);
		t = &a->ty;
	}
	if (pt->dtype != DT_VOID && t->dt != pt->dtype)
		return arg_error(I, a, i, wanted(I, pt),
				 ctx_printf(S->cx, "a fragment of %s", dtype_name(t->dt)));
	return bind_type_param(I, b, i, t->dt) && shape_matches(I, b, i, t);
}

/* A tensor, shared array or mbarrier: its name, or a view of it. */
static bool bind_ref(Inline *I, Binding *b, int i)
{
	Sema *S = I->S;
	Node *a = b->arg, *pt = b->param->a;
	Node *base = a->kind == N_INDEX ? a->a : a;
	Symbol *s = base->kind == N_IDENT ? sema_lookup(S, base->name) : NULL;
	if (!s) {
		if (base->kind == N_IDENT && !builtin_lookup(base->name))
			diag_error(S->cx, base->loc, E_UNDEFINED, base->name);
		else
			arg_error(I, a, i, wanted(I, pt), "an expression");
		return false;
	}
	bool kind_ok = pt->space == SP_MBAR ? s->kind == SYM_MBAR
		       : pt->space == SP_ROLE ? s->kind == SYM_ROLE && a->kind == N_IDENT
		       : s->ty.space == pt->space && s->kind != SYM_MBAR && s->kind != SYM_ROLE;
	if (!kind_ok)
		return arg_error(I, a, i, wanted(I, pt),
				 ctx_printf(S->cx, "%s %s", sema_sym_kind_name(s->kind), s->name));
	if (s->ty.dt == DT_ERROR)
		return false; /* its declaration was reported */
	if (pt->dtype != DT_VOID && s->ty.dt != pt->dtype)
		return arg_error(I, a, i, wanted(I, pt),
				 ctx_printf(S->cx, "%s of %s", space_name(s->ty.space),
					    dtype_name(s->ty.dt)));
	if (!bind_type_param(I, b, i, s->ty.dt))
		return false;
	base->sym = s;
	b->target = s;
	if (a->kind != N_INDEX)
		return shape_matches(I, b, i, &s->ty);
	if (pt->space == SP_MBAR) {
		if (!sema_mbar_ref(S, a, I->fn->name))
			return false;
	} else if (!sema_view(S, a, s->ty.space == SP_SHARED ? SP_SHARED : SP_GLOBAL)) {
		return false;
	}
	b->view = hoist_view(I, a->list);
	return pt->space == SP_MBAR || shape_matches(I, b, i, &a->ty);
}

static bool bind(Inline *I, Binding *b, int i)
{
	Node *pt = b->param->a;
	if (!sema_is_ref_type(pt))
		return bind_scalar(I, b, i);
	if (pt->space == SP_FRAG)
		return bind_frag(I, b, i);
	return bind_ref(I, b, i);
}

/* ---- rewriting the copy's uses of views ----------------------------------------- */

static Node *add(Inline *I, Node *x, Node *y)
{
	if (x->kind == N_INT && x->ival == 0)
		return y;
	Node *n = new_node(I, N_BINARY, y->loc);
	n->op = OPK_ADD;
	n->a = ast_clone(I->S->cx, x);
	n->b = y;
	return n;
}

/* Reports the helper's index u (a literal, or a window of literals) when it leaves a
 * window of width w of the argument's view; other indices are not known here. */
static void inside_window(Inline *I, Node *u, int64_t w, const char *param)
{
	int64_t end = -1;
	if (u->kind == N_INT)
		end = u->ival + 1;
	else if (u->kind == N_RANGE && u->a->kind == N_INT && u->b->kind == N_INT)
		end = u->a->ival + u->b->ival;
	if (end > w)
		diag_error(I->S->cx, u->loc, E_VIEW, param,
			   ctx_printf(I->S->cx, "this index reaches past the window of width %lld "
				      "that the argument's view keeps", (long long)w));
}

/* The view's index list with the helper's indices `use` applied to its kept
 * dimensions: a window start adds, ':' passes the helper's index through. */
static Node *compose(Inline *I, Node *view, Node *use, const char *param)
{
	Ctx *cx = I->S->cx;
	Node *out = NULL;
	for (Node *v = view; v; v = v->next) {
		Node *c;
		if (v->kind != N_RANGE && v->kind != N_FULL) {
			c = ast_clone(cx, v);
		} else if (!use) {
			c = ast_clone(cx, v);
		} else {
			Node *u = use;
			use = use->next;
			u->next = NULL;
			if (v->kind == N_FULL || u->kind == N_FULL) {
				c = v->kind == N_FULL ? u : ast_clone(cx, v);
			} else if (u->kind == N_RANGE) {
				inside_window(I, u, v->b->ival, param);
				c = u;
				c->a = add(I, v->a, u->a);
			} else {
				inside_window(I, u, v->b->ival, param);
				c = add(I, v->a, u);
			}
		}
		out = ast_append(out, c);
	}
	return ast_append(out, use); /* the dimensions the view did not index */
}

static Binding *view_binding(Inline *I, const char *name)
{
	for (int i = 0; i < I->nb; i++)
		if (I->b[i].view && strcmp(I->b[i].param->name, name) == 0)
			return &I->b[i];
	return NULL;
}

static Binding *ref_binding(Inline *I, const char *name)
{
	for (int i = 0; i < I->nb; i++)
		if (sema_is_ref_type(I->b[i].param->a) && strcmp(I->b[i].param->name, name) == 0)
			return &I->b[i];
	return NULL;
}

static bool declares(const Node *n)
{
	switch (n->kind) {
	case N_LET: case N_VAR: case N_FRAG: case N_FOR: case N_SHARED: case N_MBARRIER:
		return true;
	default:
		return false;
	}
}

/* Rewrites every use of a parameter bound to a view in the copied body; a
 * local that would hide a by-reference parameter is refused (the rewrite is
 * by name). */
static void rewrite(Inline *I, Node *n)
{
	for (; n; n = n->next) {
		if (declares(n) && n->name) {
			Binding *b = ref_binding(I, n->name);
			if (b) {
				diag_error(I->S->cx, n->loc, E_REDEFINED, n->name);
				diag_note(I->S->cx, b->param->loc, "'%s' was declared here", n->name);
			}
		}
		if (n->kind == N_INDEX && n->a->kind == N_IDENT) {
			Binding *b = view_binding(I, n->a->name);
			rewrite(I, n->list);
			if (b)
				n->list = compose(I, b->view, n->list, b->param->name);
			continue;
		}
		if (n->kind == N_CAST && n->tvar) {   /* cast<T>: the type T is bound to here */
			n->dtype = I->tparam[n->tvar - 1];
			n->tvar = 0;
			n->name = NULL;
		}
		if (n->kind == N_IDENT) {
			Binding *b = view_binding(I, n->name);
			if (b) {
				Node *base = new_node(I, N_IDENT, n->loc);
				base->name = n->name;
				n->kind = N_INDEX;
				n->a = base;
				n->list = compose(I, b->view, NULL, b->param->name);
			}
			continue;
		}
		rewrite(I, n->a);
		rewrite(I, n->b);
		rewrite(I, n->c);
		rewrite(I, n->d);
		rewrite(I, n->list);
	}
}

/* ---- the expansion ---------------------------------------------------------------- */

static void declare_bindings(Inline *I, Symbol *mark)
{
	Sema *S = I->S;
	for (Node *let = I->hoisted; let; let = let->next) {
		Symbol *s = sema_declare(S, SYM_LET, let, mark);
		s->ty = let->b->ty;
		s->varying = let->b->varying;
	}
	for (Node *r = I->renamed; r; r = r->next) {
		Symbol *s = sema_new_symbol(S, SYM_ALIAS, r->name, r);
		s->alias = r->sym;
		s->ty = r->sym->ty;
		sema_push(S, s);
	}
	for (int i = 0; i < I->nb; i++) {
		Binding *b = &I->b[i];
		Symbol *s = NULL;
		if (b->target) {
			s = sema_new_symbol(S, SYM_ALIAS, b->param->name, b->param);
			s->alias = b->target;
			s->ty = b->target->ty;
		} else if (b->constant) {
			s = sema_new_symbol(S, SYM_CONST, b->param->name, b->param);
			s->ty = b->arg->ty;
			s->is_const = true;
			s->index = 2; /* checked */
			s->ival = b->arg->const_ival;
			s->fval = b->arg->const_fval;
		}
		if (s)
			sema_push(S, s);
	}
}

/* The last statement, when it is the helper's 'return'. */
static Node *split_return(Node *body)
{
	Node **link = &body->list;
	while (*link && (*link)->next)
		link = &(*link)->next;
	Node *last = *link;
	if (!last || last->kind != N_RETURN)
		return NULL;
	*link = NULL;
	return last;
}

static bool result_ok(Inline *I, Node *ret)
{
	Sema *S = I->S;
	Node *rt = I->fn->decl->a;
	Node *v = ret->a;
	DType got = sema_expr(S, v);
	if (got == DT_ERROR)
		return false;
	if (!sema_is_ref_type(rt)) {
		if (I->elementwise && sema_is_frag(v) && rt->dtype == DT_F32)
			return true;   /* the elementwise result: a fragment of f32 */
		if (!sema_scalar(S, v, "a return value"))
			return false;
		sema_coerce(S, v, rt->dtype);
		if (v->ty.dt != rt->dtype && v->ty.dt != DT_ERROR) {
			diag_error(S->cx, v->loc, E_RETURN_TYPE, I->fn->name, dtype_name(rt->dtype),
				   dtype_name(v->ty.dt));
			return false;
		}
		return true;
	}
	bool ok = v->ty.space == SP_FRAG && v->ty.dt == rt->dtype &&
		  v->ty.rank == ast_count(rt->list);
	int d = 0;
	for (Node *x = rt->list; x && ok; x = x->next, d++) {
		if (x->kind == N_IDENT && strcmp(x->name, "_") == 0)
			continue;
		sema_expr(S, x);
		ok = x->is_const && v->ty.dims[d].value == x->const_ival;
	}
	if (!ok)
		diag_error(S->cx, v->loc, E_RETURN_TYPE, I->fn->name,
			   ctx_printf(S->cx, "frag %s[...]", dtype_name(rt->dtype)),
			   type_str(S->cx, &v->ty));
	return ok;
}

static bool may_expand(Sema *S, Node *e, Symbol *fn, bool at_stmt, bool elementwise)
{
	if (!at_stmt) {
		diag_error(S->cx, e->loc, elementwise ? E_ELEMENTWISE_CONTEXT : E_HELPER_CONTEXT,
			   fn->name, fn->name, fn->name);
		return false;
	}
	for (int i = 0; i < S->ninlining; i++)
		if (S->inlining[i] == fn) {
			diag_error(S->cx, e->loc, E_RECURSION, fn->name);
			return false;
		}
	if (S->ninlining == TILEC_MAX_INLINE_DEPTH) {
		diag_error(S->cx, e->loc, E_CALL_DEPTH, fn->name, S->ninlining + 1,
			   TILEC_MAX_INLINE_DEPTH);
		return false;
	}
	if (++S->inline_count > TILEC_MAX_INLINED_CALLS) {
		diag_error(S->cx, e->loc, E_INLINED_CALLS, fn->name, TILEC_MAX_INLINED_CALLS);
		return false;
	}
	int want = ast_count(fn->decl->list), got = ast_count(e->list);
	if (want != got) {
		diag_error(S->cx, e->loc, E_ARG_COUNT, e->name, want, got);
		return false;
	}
	return true;
}

/* Checks the copied body where the call is. Its locals begin above the
 * caller's (hidden), its 'break'/'continue' cannot reach the caller's loops. */
static DType expand(Inline *I, Node *body, Node *ret)
{
	Sema *S = I->S;
	Node *e = I->call;
	int floor = S->local_floor, loop_floor = S->loop_floor;
	int errors = S->cx->nerrors, diags = S->cx->ndiags;
	Symbol *mark = S->scope;
	S->local_floor = S->nseq;
	S->loop_floor = S->loop_depth;
	S->inlining[S->ninlining++] = I->fn;
	declare_bindings(I, mark);
	S->block_depth++;
	Symbol *inner = S->scope;
	for (Node *st = body->list; st; st = st->next)
		sema_stmt(S, st, inner);
	bool ok = !ret || result_ok(I, ret);
	S->block_depth--;
	S->ninlining--;
	sema_pop_scope(S, mark);
	S->local_floor = floor;
	S->loop_floor = loop_floor;
	if (S->cx->nerrors > errors || S->cx->ndiags > diags)
		diag_note(S->cx, e->loc, "in '%s', inlined here", I->fn->name);
	body->list = ast_append(I->hoisted, body->list);
	e->b = body;
	e->c = ret ? ret->a : NULL;
	if (!ok || S->cx->nerrors > errors)
		return DT_ERROR;
	if (!ret) {
		sema_set_scalar(e, DT_VOID);
		return DT_VOID;
	}
	e->ty = ret->a->ty;
	e->varying = ret->a->varying;
	return e->ty.dt;
}

/* A call of a tile helper, or (elementwise) of a scalar function with fragment arguments,
 * whose arguments the caller has checked: allowed as a statement, as `let x = f(...)` and as
 * `x = f(...)` (sema.c marks such calls in S->stmt_call). */
static DType inline_call(Sema *S, Node *e, Symbol *fn, bool elementwise)
{
	bool at_stmt = S->stmt_call == e;
	S->stmt_call = NULL;
	e->sym = fn;
	if (!may_expand(S, e, fn, at_stmt, elementwise))
		return DT_ERROR;
	int n = ast_count(e->list);
	Inline I = {.S = S, .call = e, .fn = fn, .elementwise = elementwise,
		    .b = ctx_alloc(S->cx, (size_t)(n + 1) * sizeof(Binding)), .nb = n};
	bool ok = true;
	int i = 0;
	for (Node *a = e->list, *p = fn->decl->list; a && p; a = a->next, p = p->next, i++) {
		I.b[i] = (Binding){.param = p, .arg = a};
		ok = bind(&I, &I.b[i], i + 1) && ok;
	}
	if (!ok)
		return DT_ERROR;
	Node *body = ast_clone(S->cx, fn->decl->b);
	Node *ret = split_return(body);
	if (!fn->decl->a && ret && ret->a) {
		body->list = ast_append(body->list, ret); /* 'return x;' in a void helper: sema says so */
		ret = NULL;
	} else if (!fn->decl->a && ret) {
		ret = NULL; /* a trailing 'return;' ends the helper where it ends anyway */
	}
	if (fn->decl->a && !ret) {
		diag_error(S->cx, fn->decl->loc, E_MISSING_RETURN, fn->name);
		diag_note(S->cx, e->loc, "in '%s', inlined here", fn->name);
		return DT_ERROR;
	}
	rewrite(&I, body->list);
	if (ret)
		rewrite(&I, ret->a);
	return expand(&I, body, ret);
}

DType sema_inline_call(Sema *S, Node *e, Symbol *fn)
{
	return inline_call(S, e, fn, false);
}

/* A scalar function called with fragment arguments (already checked): its body expanded
 * where it is called with those parameters bound to the fragments, so that every operation
 * on them applies to each element and the result is a fragment. */
DType sema_inline_elementwise(Sema *S, Node *e, Symbol *fn)
{
	return inline_call(S, e, fn, true);
}
