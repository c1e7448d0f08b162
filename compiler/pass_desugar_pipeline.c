/*
 * pass_desugar_pipeline.c: the desugar-pipeline pass, the easy path. It runs
 * on the AST between import and sema. A kernel without roles may run one
 * loop as 'for k in lo .. hi pipeline(S) { ... }' whose body starts with
 *
 *   let A = load(TensorA[...k...]);   // one TMA box per iteration
 *
 * bindings. This rewrites the kernel, before it is type-checked, into the
 * explicit form an expert writes (examples/gemm.tile):
 *
 *   shared A.ring: T[S, box...] swizzle(...);  one ring per load
 *   mbarrier pipeline.full[S](1);              producer's arrive_expect
 *   mbarrier pipeline.empty[S](threads);       every consumer thread
 *   role pipeline.producer = warpgroup(0) regs(P) {
 *     <the kernel's leading 'let's>
 *     if elect_one() { for k ... { wait empty; arrive_expect full; tma_load... } }
 *   }
 *   role pipeline.consumer = warpgroup(1 .. 1 + threads/128) regs(C) {
 *     <statements before the loop>
 *     for k ... { wait full; <body, A meaning A.ring[stage]>; arrive empty }
 *     <statements after the loop>
 *   }
 *
 * so every check of the explicit form (arrive counts, register budgets,
 * tile shapes) applies to the generated code. The block grows by the
 * producer's warpgroup: the kernel's threads(...) are the consumers.
 * Generated names contain a '.', which source names cannot.
 *
 * Sema has not run: the constants the rewrite needs (stages, threads, box
 * and window widths, swizzle) are folded here from the AST, and the tma
 * tensors are the kernel's parameters declared 'tma'. Stages and windows that
 * do not fold refuse the rewrite with its own error; threads(...) and tma
 * parameters that do not are left to sema's checks of them, which report why.
 */
#include <string.h>

#include "pass_desugar_pipeline.h"

/* A tma parameter as the rewrite needs it: sema checks it in full. */
typedef struct Tensor {
	const char *name;
	DType dt;
	int rank;
	int box[TILEC_MAX_RANK];
	int swizzle;
} Tensor;

typedef struct Load {
	Node *let;       /* let NAME = load(view) */
	Node *view;      /* the tensor window */
	Tensor tensor;   /* its tma parameter */
	const char *ring;
} Load;

#define MAX_LOADS 8

/* An integer, boolean or float constant; V_NONE when the expression is not
 * one (a run-time value, an unknown name, an overflow: sema says which). */
typedef struct Val {
	enum { V_NONE, V_INT, V_BOOL, V_FLOAT } k;
	int64_t i;
	double f;
} Val;

/* A top-level constant folded once: a chain of constants that each use the
 * previous one twice must not be folded again at every use. */
typedef struct ConstVal {
	const char *name;
	Val v;
	bool busy;  /* being folded: a cycle is not constant */
} ConstVal;

typedef struct Pipe {
	Ctx *cx;
	ConstVal *consts;
	int nconsts, cap_consts;
	Node *kernel, *loop;
	Load loads[MAX_LOADS];
	int nloads;
	int stages;      /* S of pipeline(S) */
	int consumers;   /* consumer threads (the kernel's declared threads) */
	Loc loc;
} Pipe;

/* ---- small AST builders ------------------------------------------------------ */

static Node *node(Pipe *P, NodeKind k)
{
	return ast_new(P->cx, k, P->loc);
}

static Node *ident(Pipe *P, const char *name)
{
	Node *n = node(P, N_IDENT);
	n->name = name;
	return n;
}

static Node *num(Pipe *P, int64_t v)
{
	Node *n = node(P, N_INT);
	n->ival = v;
	return n;
}

static Node *bin(Pipe *P, OpKind op, Node *a, Node *b)
{
	Node *n = node(P, N_BINARY);
	n->op = op;
	n->a = a;
	n->b = b;
	return n;
}

static Node *call(Pipe *P, const char *fn, Node *args)
{
	Node *n = node(P, N_CALL);
	n->name = fn;
	n->list = args;
	n->op = CALL_MADE;
	return n;
}

static Node *stmt(Pipe *P, Node *e)
{
	Node *n = node(P, N_EXPR_STMT);
	n->a = e;
	return n;
}

static Node *index1(Pipe *P, const char *base, Node *i)
{
	Node *n = node(P, N_INDEX);
	n->a = ident(P, base);
	n->list = i;
	return n;
}

static Node *let(Pipe *P, const char *name, Node *value)
{
	Node *n = node(P, N_LET);
	n->name = name;
	n->b = value;
	return n;
}

static Node *list2(Node *a, Node *b)
{
	a->next = b;
	return a;
}

static Node *block(Pipe *P, Node *stmts)
{
	Node *n = node(P, N_BLOCK);
	n->list = stmts;
	return n;
}

/* ---- constants, folded from the AST ------------------------------------------ */

static Val fold(Pipe *P, const Node *e, const Node *kernel, int depth);

/* The top-level 'const' named `name`, in sema's order (files, then items). */
static const Node *find_const(Ctx *cx, const char *name)
{
	for (int f = 0; f < cx->nfiles; f++)
		for (const Node *it = cx->files[f]->items; it; it = it->next)
			if (it->kind != N_IMPORT && it->name && !strcmp(it->name, name))
				return it->kind == N_CONST ? it : NULL;
	return NULL;
}

/* A name: a constant unless a parameter of `kernel` hides it (NULL: only
 * top-level names are seen, as in a constant's value or a window's width). */
static Val fold_name(Pipe *P, const Node *e, const Node *kernel, int depth)
{
	Val none = {V_NONE, 0, 0};
	for (const Node *p = kernel ? kernel->list : NULL; p; p = p->next)
		if (!strcmp(p->name, e->name))
			return none;
	for (int i = 0; i < P->nconsts; i++)
		if (!strcmp(P->consts[i].name, e->name))
			return P->consts[i].busy ? none : P->consts[i].v;
	const Node *c = find_const(P->cx, e->name);
	if (!c)
		return none;
	if (P->nconsts == P->cap_consts) {
		int cap = P->cap_consts ? 2 * P->cap_consts : 16;
		ConstVal *grown = ctx_alloc(P->cx, (size_t)cap * sizeof *grown);
		if (P->nconsts)
			memcpy(grown, P->consts, (size_t)P->nconsts * sizeof *grown);
		P->consts = grown;
		P->cap_consts = cap;
	}
	int slot = P->nconsts++;
	P->consts[slot] = (ConstVal){c->name, none, true};
	Val v = fold(P, c->b, NULL, depth + 1);
	/* a typed constant takes its declared type */
	bool same = (dtype_is_int(c->a ? c->a->dtype : DT_I64) && v.k == V_INT) ||
		    (c->a && c->a->dtype == DT_BOOL && v.k == V_BOOL);
	if (c->a && v.k != V_NONE && !same)
		v = dtype_is_float(c->a->dtype) && v.k != V_BOOL
		    ? (Val){V_FLOAT, 0, v.k == V_INT ? (double)v.i : v.f} : none;
	P->consts[slot] = (ConstVal){c->name, v, false};
	return v;
}

static bool fold_int_op(OpKind op, int64_t a, int64_t b, int64_t *r)
{
	switch (op) {
	case OPK_ADD: return !__builtin_add_overflow(a, b, r);
	case OPK_SUB: return !__builtin_sub_overflow(a, b, r);
	case OPK_MUL: return !__builtin_mul_overflow(a, b, r);
	case OPK_DIV: case OPK_REM:
		if (b == 0 || (a == INT64_MIN && b == -1))
			return false;
		*r = op == OPK_DIV ? a / b : a % b;
		return true;
	case OPK_AND: *r = a & b; return true;
	case OPK_OR: *r = a | b; return true;
	case OPK_XOR: *r = a ^ b; return true;
	case OPK_SHL: *r = (b < 0 || b > 63) ? 0 : (int64_t)((uint64_t)a << b); return true;
	case OPK_SHR: *r = (b < 0 || b > 63) ? (a < 0 ? -1 : 0) : a >> b; return true;
	default: return false;
	}
}

static Val fold_binary(OpKind op, Val a, Val b)
{
	Val none = {V_NONE, 0, 0};
	if (a.k == V_NONE || b.k == V_NONE)
		return none;
	bool cmp = op >= OPK_EQ && op <= OPK_GE;
	if (op == OPK_LAND || op == OPK_LOR) {
		if (a.k != V_BOOL || b.k != V_BOOL)
			return none;
		return (Val){V_BOOL, op == OPK_LAND ? a.i && b.i : a.i || b.i, 0};
	}
	if (a.k == V_FLOAT || b.k == V_FLOAT) {
		if (a.k == V_BOOL || b.k == V_BOOL)
			return none;
		double x = a.k == V_FLOAT ? a.f : (double)a.i, y = b.k == V_FLOAT ? b.f : (double)b.i;
		switch (op) {
		case OPK_ADD: return (Val){V_FLOAT, 0, x + y};
		case OPK_SUB: return (Val){V_FLOAT, 0, x - y};
		case OPK_MUL: return (Val){V_FLOAT, 0, x * y};
		case OPK_DIV: return (Val){V_FLOAT, 0, x / y};
		case OPK_EQ: return (Val){V_BOOL, x == y, 0};
		case OPK_NE: return (Val){V_BOOL, x != y, 0};
		case OPK_LT: return (Val){V_BOOL, x < y, 0};
		case OPK_LE: return (Val){V_BOOL, x <= y, 0};
		case OPK_GT: return (Val){V_BOOL, x > y, 0};
		case OPK_GE: return (Val){V_BOOL, x >= y, 0};
		default: return none;
		}
	}
	if (cmp) {
		int64_t x = a.i, y = b.i;
		bool r = op == OPK_EQ ? x == y : op == OPK_NE ? x != y : op == OPK_LT ? x < y
		       : op == OPK_LE ? x <= y : op == OPK_GT ? x > y : x >= y;
		return (Val){V_BOOL, r, 0};
	}
	int64_t r;
	if (a.k != V_INT || b.k != V_INT || !fold_int_op(op, a.i, b.i, &r))
		return none;
	return (Val){V_INT, r, 0};
}

/* cdiv, min and max of integer constants (the builtins sema folds; a cast is
 * not a constant to sema, nor here) */
static Val fold_call(Pipe *P, const Node *e, const Node *kernel, int depth)
{
	Val none = {V_NONE, 0, 0};
	Builtin b = builtin_lookup(e->name);
	int n = ast_count(e->list);
	if ((b != B_CDIV && b != B_MIN && b != B_MAX) || n != 2)
		return none;
	Val x = fold(P, e->list, kernel, depth + 1), y = fold(P, e->list->next, kernel, depth + 1);
	if (x.k != V_INT || y.k != V_INT)
		return none;
	int64_t p = x.i, q = y.i;
	if (b == B_CDIV) {
		if (q == 0 || (p == INT64_MIN && q == -1))
			return none;
		return (Val){V_INT, p / q + ((p % q != 0) && ((p < 0) == (q < 0))), 0};
	}
	return (Val){V_INT, b == B_MIN ? (p < q ? p : q) : (p > q ? p : q), 0};
}

static Val fold(Pipe *P, const Node *e, const Node *kernel, int depth)
{
	Val none = {V_NONE, 0, 0};
	if (!e || depth > TILEC_MAX_NESTING) /* deeper chains: sema refuses them */
		return none;
	switch (e->kind) {
	case N_INT: return (Val){V_INT, e->ival, 0};
	case N_BOOL: return (Val){V_BOOL, e->ival != 0, 0};
	case N_FLOAT: return (Val){V_FLOAT, 0, e->fval};
	case N_IDENT: return fold_name(P, e, kernel, depth);
	case N_CALL: return fold_call(P, e, kernel, depth);
	case N_BINARY:
		return fold_binary(e->op, fold(P, e->a, kernel, depth + 1),
				   fold(P, e->b, kernel, depth + 1));
	case N_UNARY: {
		Val x = fold(P, e->a, kernel, depth + 1);
		if (e->op == OPK_NEG && x.k == V_INT && x.i != INT64_MIN)
			return (Val){V_INT, -x.i, 0};
		if (e->op == OPK_NEG && x.k == V_FLOAT)
			return (Val){V_FLOAT, 0, -x.f};
		if (e->op == OPK_NOT && x.k == V_BOOL)
			return (Val){V_BOOL, !x.i, 0};
		if (e->op == OPK_BITNOT && x.k == V_INT)
			return (Val){V_INT, ~x.i, 0};
		return none;
	}
	default: return none;
	}
}

/* An integer constant: true and *v, else false. */
static bool const_int(Pipe *P, const Node *e, const Node *kernel, int64_t *v)
{
	Val x = fold(P, e, kernel, 0);
	if (x.k != V_INT)
		return false;
	*v = x.i;
	return true;
}

/* One extent of a tensor as sema accepts it: an i32/i64 parameter of the
 * kernel, or a positive constant. */
static bool dim_ok(Pipe *P, const Node *d)
{
	if (d->kind == N_IDENT)
		for (const Node *p = P->kernel->list; p; p = p->next)
			if (!strcmp(p->name, d->name) && p->a->space == SP_SCALAR &&
			    (p->a->dtype == DT_I32 || p->a->dtype == DT_I64))
				return true;
	int64_t v;
	return const_int(P, d, NULL, &v) && v > 0;
}

/* The kernel's parameter `name` when it is a tma tensor sema accepts (the
 * rules of sema_tma_param_type: sema reports what is wrong with one). */
static bool tma_param(Pipe *P, const char *name, Tensor *t)
{
	const Node *p = P->kernel->list;
	while (p && strcmp(p->name, name))
		p = p->next;
	if (!p || p->a->space != SP_TMA || p->a->dtype == DT_BOOL)
		return false;
	const Node *ty = p->a;
	*t = (Tensor){.name = p->name, .dt = ty->dtype, .rank = ast_count(ty->list)};
	if (t->rank < 1 || t->rank > TILEC_MAX_RANK || ast_count(ty->a) != t->rank)
		return false;
	for (const Node *d = ty->list; d; d = d->next)
		if (!dim_ok(P, d))
			return false;
	int64_t sw = 0;
	if (ty->b && (!const_int(P, ty->b, NULL, &sw) || (sw != 32 && sw != 64 && sw != 128)))
		return false;
	t->swizzle = (int)sw;
	int i = 0;
	for (const Node *b = ty->a; b; b = b->next, i++) {
		int64_t v;
		if (!const_int(P, b, NULL, &v) || v < 1 || v > 256)
			return false;
		t->box[i] = (int)v;
	}
	int inner = t->box[t->rank - 1] * dtype_bytes(t->dt);
	return inner % 16 == 0 && (!t->swizzle || inner == t->swizzle);
}

/* ---- finding the loop and its loads -------------------------------------------- */

static bool is_load_let(const Node *st)
{
	return st->kind == N_LET && !st->a && st->b && st->b->kind == N_CALL &&
	       !strcmp(st->b->name, "load");
}

/* Empties the loop, so its body (which only makes sense desugared) adds no
 * further errors, and marks the kernel as missing the rewrite's roles. */
static bool give_up(Pipe *P)
{
	P->loop->d->list = NULL;
	P->loop->list = NULL;
	P->kernel->op = KERNEL_PIPELINE_REFUSED;
	return false;
}

static bool fail(Pipe *P, Loc at, const char *why)
{
	diag_error(P->cx, at, E_PIPELINE, why);
	return give_up(P);
}

/* The window of a load is one TMA box of its tensor: its ring stage is shaped
 * after the window, so a mismatch is reported here, in the user's names,
 * not later on the generated ring and copy. */
static bool window_is_box(Pipe *P, Node *load, Node *v, const Tensor *t)
{
	int n = ast_count(v->list);
	if (n != t->rank) {
		diag_error(P->cx, v->loc, E_VIEW, t->name, ctx_printf(P->cx,
			   "'load' takes one index or window per dimension of '%s' (%d), found %d",
			   t->name, t->rank, n));
		return false;
	}
	int d = 0;
	for (Node *ix = v->list; ix; ix = ix->next, d++) {
		int64_t width = 1;
		if (ix->kind == N_FULL) {
			width = -1;
		} else if (ix->kind == N_RANGE) {
			/* widths are constants: only top-level names */
			if (!const_int(P, ix->b, NULL, &width)) {
				diag_error(P->cx, ix->b->loc, E_VIEW, t->name,
					   "the width after '+:' is a positive constant within the extent");
				return false;
			}
		}
		if (width != t->box[d]) {
			diag_error(P->cx, ix->kind == N_RANGE ? ix->b->loc : ix->loc, E_TILE_MISMATCH,
				   load->name, ctx_printf(P->cx,
				   "dimension %d of '%s' is copied in boxes of %d, the window takes %s",
				   d, t->name, t->box[d], width < 0 ? "':' (the whole extent)"
				   : ctx_printf(P->cx, "%lld", (long long)width)));
			return false;
		}
	}
	return true;
}

/* Loads: 'let NAME = load(tma-param[...])' statements of the loop body. */
static bool collect_loads(Pipe *P)
{
	for (Node *st = P->loop->d->list; st; st = st->next) {
		if (!is_load_let(st))
			continue;
		Node *v = st->b->list;
		Tensor t;
		if (!v || v->next || v->kind != N_INDEX || v->a->kind != N_IDENT ||
		    !tma_param(P, v->a->name, &t))
			return fail(P, st->b->loc, "'load' takes one window of a 'tma' parameter");
		if (!window_is_box(P, st->b, v, &t))
			return give_up(P);
		if (P->nloads == MAX_LOADS)
			return fail(P, st->loc, "at most 8 loads per pipelined loop");
		P->loads[P->nloads++] = (Load){st, v, t, ctx_printf(P->cx, "%s.ring", st->name)};
	}
	if (!P->nloads)
		return fail(P, P->loop->loc, "the body loads nothing: start it with "
				      "'let NAME = load(tensor[...]);'");
	return true;
}

/* Statements a pipelined body may not contain: a skipped 'arrive' would
 * leave the producer waiting forever. */
static bool body_ok(Pipe *P, Node *n)
{
	for (; n; n = n->next) {
		if (n->kind == N_BREAK || n->kind == N_CONTINUE || n->kind == N_RETURN)
			return fail(P, n->loc, "'break', 'continue' and 'return' would skip the "
				    "release of the stage");
		if ((n->kind == N_FOR && n->list) || n->kind == N_ROLE)
			return fail(P, n->loc, "no roles or pipelined loops inside a pipelined loop");
		Node *kids[] = {n->a, n->b, n->c, n->d};
		for (int i = 0; i < 4; i++)
			if (kids[i] && (kids[i]->kind == N_BLOCK || kids[i]->kind == N_IF) &&
			    !body_ok(P, kids[i]->kind == N_BLOCK ? kids[i]->list : kids[i]))
				return false;
	}
	return true;
}

/* ---- the rewrite ------------------------------------------------------------------ */

/* 'A' -> 'A.ring[pipeline.s]' and 'A[i, j]' -> 'A.ring[pipeline.s, i, j]'
 * for every load A, in the consumer's loop body. */
static void substitute(Pipe *P, Node *n)
{
	for (; n; n = n->next) {
		for (int i = 0; i < P->nloads; i++) {
			const char *name = P->loads[i].let->name;
			if (n->kind == N_INDEX && n->a->kind == N_IDENT && !strcmp(n->a->name, name)) {
				Node *s = ident(P, "pipeline.s");
				s->next = n->list;
				n->list = s;
				n->a->name = P->loads[i].ring;
			} else if (n->kind == N_IDENT && !strcmp(n->name, name)) {
				n->kind = N_INDEX;
				n->a = ident(P, P->loads[i].ring);
				n->list = ident(P, "pipeline.s");
				n->name = NULL;
			}
		}
		if (n->kind != N_INDEX || n->a->kind != N_IDENT)
			substitute(P, n->a);
		substitute(P, n->b);
		substitute(P, n->c);
		substitute(P, n->d);
		substitute(P, n->list);
	}
}

/* let pipeline.n = cast<i32>((k - lo) / step); let pipeline.s = pipeline.n % S
 * (i32 whatever the loop's type: stages and parities index barriers and tiles) */
static Node *stage_lets(Pipe *P)
{
	Node *lo = ast_clone(P->cx, P->loop->a);
	Node *it = bin(P, OPK_SUB, ident(P, P->loop->name), lo);
	if (P->loop->c)
		it = bin(P, OPK_DIV, it, ast_clone(P->cx, P->loop->c));
	Node *cast = node(P, N_CAST);
	cast->dtype = DT_I32;
	cast->a = it;
	it = cast;
	Node *s = bin(P, OPK_REM, ident(P, "pipeline.n"), ast_clone(P->cx, P->loop->list));
	return list2(let(P, "pipeline.n", it), let(P, "pipeline.s", s));
}

/* (pipeline.n / S) & 1, flipped for the producer's wait on 'empty' */
static Node *parity(Pipe *P, bool producer)
{
	Node *p = bin(P, OPK_AND, bin(P, OPK_DIV, ident(P, "pipeline.n"),
				      ast_clone(P->cx, P->loop->list)), num(P, 1));
	return producer ? bin(P, OPK_XOR, p, num(P, 1)) : p;
}

static Node *wait_on(Pipe *P, const char *bar, bool producer)
{
	return stmt(P, call(P, "wait", list2(index1(P, bar, ident(P, "pipeline.s")),
					      parity(P, producer))));
}

static Node *ring_at_stage(Pipe *P, const Load *l)
{
	return index1(P, l->ring, ident(P, "pipeline.s"));
}

/* The producer's loop: wait for a free stage, expect its bytes, load. */
static Node *producer_loop(Pipe *P)
{
	Node *body = stage_lets(P);
	ast_append(body, wait_on(P, "pipeline.empty", true));
	Node *tiles = index1(P, "pipeline.full", ident(P, "pipeline.s"));
	for (int i = 0; i < P->nloads; i++)
		ast_append(tiles, ring_at_stage(P, &P->loads[i]));
	ast_append(body, stmt(P, call(P, "arrive_expect", tiles)));
	for (int i = 0; i < P->nloads; i++) {
		Node *args = ring_at_stage(P, &P->loads[i]);
		ast_append(args, ast_clone(P->cx, P->loads[i].view));
		ast_append(args, index1(P, "pipeline.full", ident(P, "pipeline.s")));
		ast_append(body, stmt(P, call(P, "tma_load", args)));
	}
	Node *f = ast_clone(P->cx, P->loop);
	f->list = NULL;
	f->d = block(P, body);
	return f;
}

static Node *role(Pipe *P, const char *name, int lo, int hi, int regs, Node *body)
{
	Node *r = node(P, N_ROLE);
	r->name = name;
	r->a = num(P, lo);
	r->b = num(P, hi);
	r->c = regs ? num(P, regs) : NULL;
	r->d = block(P, body);
	return r;
}

/* Register budgets: the producer keeps few; consumers split the rest,
 * rounded down to a multiple of 8 and at most 240. With one consumer
 * warpgroup the entry allocation (248) is already enough: no setmaxnreg. */
static void budgets(int consumers, int *prod, int *cons)
{
	int wgs = consumers / 128;
	*prod = *cons = 0;
	if (wgs < 1) /* refused before the rewrite; no division by zero regardless */
		return;
	*prod = wgs >= 3 ? 24 : 40;
	*cons = ((target_sm90a.regs_per_sm - 128 * *prod) / (128 * wgs)) & ~7;
	if (*cons > 240)
		*cons = 240;
	if (wgs == 1)
		*prod = *cons = 0;
}

/* shared NAME.ring: T[S, widths of the view's windows] swizzle(tensor's) */
static Node *ring_decl(Pipe *P, const Load *l)
{
	Node *ty = node(P, N_TYPE);
	ty->space = SP_SHARED;
	ty->dtype = l->tensor.dt;
	ty->list = ast_clone(P->cx, P->loop->list);
	for (Node *ix = l->view->list; ix; ix = ix->next)
		if (ix->kind == N_RANGE)
			ast_append(ty->list, ast_clone(P->cx, ix->b));
	if (l->tensor.swizzle)
		ty->b = num(P, l->tensor.swizzle);
	Node *d = node(P, N_SHARED);
	d->name = l->ring;
	d->a = ty;
	return d;
}

static Node *mbarrier(Pipe *P, const char *name, int count)
{
	Node *m = node(P, N_MBARRIER);
	m->name = name;
	m->a = num(P, count);
	m->b = ast_clone(P->cx, P->loop->list);
	return m;
}

static bool is_call_stmt(const Node *st, const char *fn)
{
	return st->kind == N_EXPR_STMT && st->a->kind == N_CALL && !strcmp(st->a->name, fn);
}

/* Counts the mma_async calls anywhere below `n`. */
static int count_async(const Node *n)
{
	int c = 0;
	for (; n; n = n->next) {
		c += n->kind == N_CALL && n->name && !strcmp(n->name, "mma_async");
		c += count_async(n->a) + count_async(n->b) + count_async(n->c) +
		     count_async(n->d) + count_async(n->list);
	}
	return c;
}

/* The wgmma groups one iteration of the body leaves in flight: every mma_async
 * of the body commits one. *acc is the accumulator of the last; *groups is -1
 * when the count is not fixed (an mma_async under a branch or an inner loop). */
static void async_groups(const Node *body, const char **acc, int *groups)
{
	int top = 0;
	*acc = NULL;
	for (const Node *st = body; st; st = st->next)
		if (is_call_stmt(st, "mma_async")) {
			top++;
			const Node *a = st->a->list;
			*acc = a && a->kind == N_IDENT ? a->name : NULL;
		}
	*groups = count_async(body) == top ? top : -1;
}

/* The consumer's loop body: wait for the stage's data, run the body without
 * its loads, release the stage. A stage is released only once no wgmma reads
 * it: when the body leaves mma_async groups in flight, a wait for them comes
 * first. With a fixed count G of groups per iteration (and S >= 2) the wait
 * keeps this iteration's G in flight and releases the previous stage, whose
 * groups are older; the last stage is never released, as no load waits for it
 * (the producer's last wait is for iteration N - 1 - S). Otherwise all groups
 * are waited for and this iteration's stage is released. */
static void consumer_loop(Pipe *P)
{
	Node *body = stage_lets(P);
	ast_append(body, wait_on(P, "pipeline.full", false));
	for (Node *st = P->loop->d->list, *next; st; st = next) {
		next = st->next;
		st->next = NULL;
		if (!is_load_let(st))
			ast_append(body, st);
	}
	substitute(P, body);
	const char *acc;
	int groups, stages = P->stages;
	async_groups(body, &acc, &groups);
	bool defer = acc && groups >= 1 && groups <= 7 && stages >= 2;
	if (acc)
		ast_append(body, stmt(P, call(P, "mma_wait",
					       list2(ident(P, acc), num(P, defer ? groups : 0)))));
	if (defer) {
		/* if pipeline.n > 0 { arrive(pipeline.empty[(pipeline.s + S - 1) % S]); } */
		Node *prev = bin(P, OPK_REM, bin(P, OPK_ADD, ident(P, "pipeline.s"),
						 num(P, stages - 1)), num(P, stages));
		Node *rel = node(P, N_IF);
		rel->a = bin(P, OPK_GT, ident(P, "pipeline.n"), num(P, 0));
		rel->b = block(P, stmt(P, call(P, "arrive", index1(P, "pipeline.empty", prev))));
		ast_append(body, rel);
	} else {
		ast_append(body, stmt(P, call(P, "arrive",
					       index1(P, "pipeline.empty", ident(P, "pipeline.s")))));
	}
	P->loop->d->list = body;
	P->loop->list = NULL;
}

/* Whether a 'let' the loads may need can also run in the producer: plain
 * scalar arithmetic, no tile operations or helper calls. */
static bool scalar_only(const Node *e)
{
	if (!e)
		return true;
	if (e->kind == N_CALL) {
		Builtin b = builtin_lookup(e->name);
		if (b != B_CDIV && b != B_MIN && b != B_MAX && b != B_ABS)
			return false;
	}
	if (e->kind == N_INDEX || e->kind == N_RANGE || e->kind == N_FULL)
		return false;
	for (const Node *c = e->list; c; c = c->next)
		if (!scalar_only(c))
			return false;
	return scalar_only(e->a) && scalar_only(e->b);
}

static void rewrite(Pipe *P)
{
	Node *top = NULL, *lets = NULL, *cons = NULL;
	int prod_regs, cons_regs;
	budgets(P->consumers, &prod_regs, &cons_regs);
	for (int i = 0; i < P->nloads; i++)
		top = ast_append(top, ring_decl(P, &P->loads[i]));
	top = ast_append(top, mbarrier(P, "pipeline.full", 1));
	top = ast_append(top, mbarrier(P, "pipeline.empty", P->consumers));
	for (Node *st = P->kernel->b->list, *next; st; st = next) {
		next = st->next;
		st->next = NULL;
		if (st->kind == N_SHARED || st->kind == N_MBARRIER)
			top = ast_append(top, st);
		else
			cons = ast_append(cons, st);
		if (st->kind == N_LET && scalar_only(st->b))
			lets = ast_append(lets, ast_clone(P->cx, st));
	}
	Node *elect = node(P, N_IF);
	elect->a = call(P, "elect_one", NULL);
	elect->b = block(P, NULL);
	/* the producer's loop comes from the loop before the consumer's rewrite */
	elect->b->list = producer_loop(P);
	consumer_loop(P);
	lets = ast_append(lets, elect);
	top = ast_append(top, role(P, "pipeline.producer", 0, 1, prod_regs, lets));
	top = ast_append(top, role(P, "pipeline.consumer", 1, 1 + P->consumers / 128, cons_regs,
				   cons));
	P->kernel->b->list = top;
}

static Node *find_loop(Node *st)
{
	for (; st; st = st->next)
		if (st->kind == N_FOR && st->list)
			return st;
	return NULL;
}

/* A second pipelined loop is reported at itself, with a note at the first,
 * and emptied (its loads make sense only desugared); the first is kept. */
static void extra_loops(Pipe *P)
{
	for (Node *l = find_loop(P->loop->next); l; l = find_loop(l->next)) {
		diag_error(P->cx, l->loc, E_PIPELINE, "one pipelined loop per kernel");
		diag_note(P->cx, P->loop->loc, "the kernel's first pipelined loop is here");
		l->d->list = NULL;
		l->list = NULL;
	}
}

/* The kernel's first threads(...) item (a second is sema's error), or NULL. */
static Node *threads_item(Node *kernel)
{
	Node *l = kernel->c;
	while (l && l->op != LAUNCH_THREADS)
		l = l->next;
	return l;
}

/* The consumer threads: threads(x) of whole warpgroups, with room for the
 * producer's in the 1024 of a block. 0 after an error, reported here unless
 * sema's launch check reports it (missing, not constant, out of 1..1024). */
static int consumer_threads(Pipe *P)
{
	Node *l = threads_item(P->kernel);
	int n = l ? ast_count(l->list) : 0;
	if (n < 1 || n > 3)
		return 0;
	int64_t first = 0;
	for (Node *e = l->list; e; e = e->next) {
		int64_t v;
		if (!const_int(P, e, P->kernel, &v) || v < 1 || v > 1024)
			return 0;
		if (e == l->list)
			first = v;
	}
	if (n == 1 && first % 128 == 0 && first <= 1024 - 128)
		return (int)first;
	const char *found = n > 1 ? ctx_printf(P->cx, "%d dimensions", n)
		: ctx_printf(P->cx, "%lld", (long long)first);
	diag_error(P->cx, l->loc, E_PIPELINE, ctx_printf(P->cx, "the kernel's threads(...) are "
		   "its consumers: one dimension, a multiple of 128 from 128 to 896 (the compiler "
		   "adds the producer's warpgroup); found %s", found));
	return 0;
}

/* Whether an item before `kernel` (in sema's order) has its name: sema checks
 * only the first of the name, so the rewrite leaves a redefinition alone. */
static bool redefined(Ctx *cx, const Node *kernel)
{
	for (int f = 0; f < cx->nfiles; f++)
		for (const Node *it = cx->files[f]->items; it; it = it->next) {
			if (it == kernel)
				return false;
			if (it->kind != N_IMPORT && it->name && !strcmp(it->name, kernel->name))
				return true;
		}
	return false;
}

/* Rewrites `kernel` when it has a pipelined loop; false after an error. */
static bool desugar_kernel(Ctx *cx, Node *kernel)
{
	Pipe P = {.cx = cx, .kernel = kernel, .loop = find_loop(kernel->b->list)};
	if (!P.loop || redefined(cx, kernel))
		return true;
	P.loc = P.loop->loc;
	extra_loops(&P);
	for (Node *st = kernel->b->list; st; st = st->next)
		if (st->kind == N_ROLE)
			return fail(&P, st->loc, "a kernel with a pipelined loop gets its roles from "
				    "the compiler; write roles or a pipelined loop, not both");
	int64_t stages = 0;
	if (!const_int(&P, P.loop->list, kernel, &stages) || stages < 1 || stages > 16)
		return fail(&P, P.loop->list->loc, "pipeline(S) takes a constant from 1 to 16");
	P.stages = (int)stages;
	P.consumers = consumer_threads(&P);
	if (!P.consumers)
		return give_up(&P);
	if (!body_ok(&P, P.loop->d->list) || !collect_loads(&P))
		return false;
	rewrite(&P);
	/* the block is the consumers and the producer's warpgroup */
	Node *threads = threads_item(kernel);
	Node *block_threads = num(&P, P.consumers + 128);
	block_threads->loc = threads->list->loc;
	threads->list = block_threads;
	kernel->op = KERNEL_PIPELINED;
	return true;
}

bool pass_desugar_pipeline(Ctx *cx)
{
	for (int f = 0; f < cx->nfiles; f++)
		for (Node *it = cx->files[f]->items; it; it = it->next)
			if (it->kind == N_KERNEL && it->b)
				desugar_kernel(cx, it);
	return !cx->internal_error;
}
