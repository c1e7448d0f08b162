/*
 * desugar_pipeline.c: the easy path. A kernel without roles may run one
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
 */
#include <string.h>

#include "sema.h"

typedef struct Load {
	Node *let;       /* let NAME = load(view) */
	Node *view;      /* the tensor window */
	Symbol *tensor;  /* its tma parameter */
	const char *ring;
} Load;

#define MAX_LOADS 8

typedef struct Pipe {
	Sema *S;
	Ctx *cx;
	Node *kernel, *loop;
	Load loads[MAX_LOADS];
	int nloads;
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
	P->S->pipeline_failed = true;
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
static bool window_is_box(Pipe *P, Node *load, Node *v, const Symbol *t)
{
	int n = ast_count(v->list);
	if (n != t->ty.rank) {
		diag_error(P->cx, v->loc, E_VIEW, t->name, ctx_printf(P->cx,
			   "'load' takes one index or window per dimension of '%s' (%d), found %d",
			   t->name, t->ty.rank, n));
		return false;
	}
	P->S->locals_hidden++; /* widths are constants: only top-level names */
	int d = 0;
	bool ok = true;
	for (Node *ix = v->list; ix && ok; ix = ix->next, d++) {
		int64_t width = 1;
		if (ix->kind == N_FULL) {
			width = -1;
		} else if (ix->kind == N_RANGE) {
			/* a copy: the loop's own windows are checked again in the rewrite */
			Node *w = ast_clone(P->cx, ix->b);
			DType wt = sema_expr(P->S, w);
			if (wt == DT_ERROR || !w->is_const || !dtype_is_int(wt)) {
				if (wt != DT_ERROR)
					diag_error(P->cx, ix->b->loc, E_VIEW, t->name,
						   "the width after '+:' is a positive constant within the extent");
				ok = false;
				break;
			}
			width = w->const_ival;
		}
		if (width != t->ty.box[d]) {
			diag_error(P->cx, ix->kind == N_RANGE ? ix->b->loc : ix->loc, E_TILE_MISMATCH,
				   load->name, ctx_printf(P->cx,
				   "dimension %d of '%s' is copied in boxes of %d, the window takes %s",
				   d, t->name, t->ty.box[d], width < 0 ? "':' (the whole extent)"
				   : ctx_printf(P->cx, "%lld", (long long)width)));
			ok = false;
		}
	}
	P->S->locals_hidden--;
	return ok;
}

/* Loads: 'let NAME = load(tma-param[...])' statements of the loop body. */
static bool collect_loads(Pipe *P)
{
	for (Node *st = P->loop->d->list; st; st = st->next) {
		if (!is_load_let(st))
			continue;
		Node *v = st->b->list;
		Symbol *t = v && !v->next && v->kind == N_INDEX && v->a->kind == N_IDENT
				    ? sema_lookup(P->S, v->a->name) : NULL;
		if (!t || t->ty.space != SP_TMA)
			return fail(P, st->b->loc, "'load' takes one window of a 'tma' parameter");
		if (!window_is_box(P, st->b, v, t))
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
	ty->dtype = l->tensor->ty.dt;
	ty->list = ast_clone(P->cx, P->loop->list);
	for (Node *ix = l->view->list; ix; ix = ix->next)
		if (ix->kind == N_RANGE)
			ast_append(ty->list, ast_clone(P->cx, ix->b));
	if (l->tensor->ty.swizzle)
		ty->b = num(P, l->tensor->ty.swizzle);
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
	int groups, stages = (int)P->loop->list->const_ival;
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

/* The consumer threads: threads(x) of whole warpgroups, with room for the
 * producer's in the 1024 of a block. 0 after an error, reported here unless
 * the launch check has reported it (missing, not constant, out of 1..1024). */
static int consumer_threads(Pipe *P)
{
	Node *l = P->kernel->c;
	while (l && l->op != LAUNCH_THREADS)
		l = l->next;
	int n = l ? ast_count(l->list) : 0;
	if (n < 1 || n > 3)
		return 0;
	for (Node *e = l->list; e; e = e->next)
		if (!e->is_const || e->const_ival < 1 || e->const_ival > 1024)
			return 0;
	if (n == 1 && l->list->const_ival % 128 == 0 && l->list->const_ival <= 1024 - 128)
		return (int)l->list->const_ival;
	const char *found = n > 1 ? ctx_printf(P->cx, "%d dimensions", n)
		: ctx_printf(P->cx, "%lld", (long long)l->list->const_ival);
	diag_error(P->cx, l->loc, E_PIPELINE, ctx_printf(P->cx, "the kernel's threads(...) are "
		   "its consumers: one dimension, a multiple of 128 from 128 to 896 (the compiler "
		   "adds the producer's warpgroup); found %s", found));
	return 0;
}

/* Rewrites `kernel` when it has a pipelined loop; false after an error.
 * Called with the launch checked, before the body is. */
bool sema_desugar_pipeline(Sema *S, Node *kernel)
{
	Pipe P = {.S = S, .cx = S->cx, .kernel = kernel, .loop = find_loop(kernel->b->list)};
	if (!P.loop)
		return true;
	S->pipelined = true;
	P.loc = P.loop->loc;
	extra_loops(&P);
	for (Node *st = kernel->b->list; st; st = st->next)
		if (st->kind == N_ROLE)
			return fail(&P, st->loc, "a kernel with a pipelined loop gets its roles from "
				    "the compiler; write roles or a pipelined loop, not both");
	int64_t stages = 0;
	if (sema_expr(S, P.loop->list) == DT_ERROR || !P.loop->list->is_const ||
	    (stages = P.loop->list->const_ival) < 1 || stages > 16)
		return fail(&P, P.loop->list->loc, "pipeline(S) takes a constant from 1 to 16");
	P.consumers = consumer_threads(&P);
	if (!P.consumers)
		return give_up(&P);
	if (!body_ok(&P, P.loop->d->list) || !collect_loads(&P))
		return false;
	rewrite(&P);
	for (Node *l = kernel->c; l; l = l->next)
		if (l->op == LAUNCH_THREADS) {
			l->list->const_ival += 128;
			break;
		}
	S->block_threads += 128;
	return true;
}
