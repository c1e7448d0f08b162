/*
 * sema_tile.c: the Hopper tile constructs: TMA tensor parameters, swizzled
 * shared tiles, mbarriers, roles with register budgets, fragments, and the
 * tile operations (tma_load/tma_store, arrive/wait, mma, frag_store, ...).
 *
 * The rules checked here are the ones that make a kernel hang or compute
 * garbage on Hopper instead of failing to compile: box and swizzle agreement
 * between TMA and the tiles it fills, wgmma shapes and dtypes, register
 * budgets that fit the register file, warpgroup operations executed by whole
 * warpgroups, and mbarrier arrive counts equal to the arrivals that happen.
 *
 * Tile views (arguments of tile operations) are written with the indexing
 * syntax: a scalar index drops a dimension, 'start +: width' keeps a window
 * of constant width, ':' keeps a whole (constant) dimension, and missing
 * trailing indices mean ':'. A view node gets is_view and, as its type, the
 * buffer's space and dtype with the kept widths as dims.
 */
#include <string.h>

#include "sema.h"

#define MAX_MBAR_COUNT (target_sm90a.max_mbar_count)

static bool const_int(Sema *S, Node *e, int64_t *v)
{
	DType t = sema_expr(S, e);
	if (t == DT_ERROR || !e->is_const || !dtype_is_int(t))
		return false;
	*v = e->const_ival;
	return true;
}

/* ---- declarations ---------------------------------------------------------- */

static bool valid_swizzle(int64_t v)
{
	return v == 32 || v == 64 || v == 128;
}

/* swizzle(N) on a tile type: N in 32/64/128 and rows of exactly N bytes, so
 * one row is one swizzle line, as TMA writes it and wgmma reads it. */
bool sema_tile_swizzle(Sema *S, Node *tn, Type *t)
{
	if (!tn->b)
		return true;
	int64_t v = 0;
	if (!const_int(S, tn->b, &v) || !valid_swizzle(v)) {
		diag_error(S->cx, tn->b->loc, E_SWIZZLE, (long long)v);
		return false;
	}
	int row = t->rank ? (int)t->dims[t->rank - 1].value * dtype_bytes(t->dt) : 0;
	if (row != v) {
		diag_error(S->cx, tn->loc, E_SWIZZLE_ROW, (int)v, (int)v, type_str(S->cx, t),
			   row, (int)v);
		return false;
	}
	t->swizzle = (int)v;
	return true;
}

static bool tma_box_error(Sema *S, Node *p, Loc at, const char *why)
{
	diag_error(S->cx, at, E_TMA_BOX, p->name, why);
	return false;
}

/* The box of a tma parameter: one constant per dimension, each 1..256, the
 * inner row a multiple of 16 bytes and, when swizzled, exactly the swizzle
 * span (cuTensorMapEncodeTiled's rules, checked before the driver sees them). */
static bool check_box(Sema *S, Node *p, Type *t)
{
	Node *ty = p->a;
	int n = ast_count(ty->a);
	if (n != t->rank)
		return tma_box_error(S, p, ty->loc, ctx_printf(S->cx,
			"the box has %d dimensions, the tensor %d", n, t->rank));
	int i = 0;
	for (Node *b = ty->a; b; b = b->next, i++) {
		int64_t v;
		if (!const_int(S, b, &v) || v < 1 || v > 256)
			return tma_box_error(S, p, b->loc, "each box dimension is a constant from 1 to 256");
		t->box[i] = (int)v;
	}
	int inner = t->box[t->rank - 1] * dtype_bytes(t->dt);
	if (inner % 16)
		return tma_box_error(S, p, ty->loc, ctx_printf(S->cx,
			"the inner box dimension is %d bytes, not a multiple of 16", inner));
	if (t->swizzle && inner != t->swizzle)
		return tma_box_error(S, p, ty->loc, ctx_printf(S->cx,
			"with swizzle(%d) the inner box dimension must be %d bytes, found %d",
			t->swizzle, t->swizzle, inner));
	return true;
}

Type sema_tma_param_type(Sema *S, Node *kernel, Node *p)
{
	Node *ty = p->a;
	Type t = type_scalar(ty->dtype);
	Type bad = type_scalar(DT_ERROR);
	t.space = SP_TMA;
	if (ty->dtype == DT_BOOL) {
		diag_error(S->cx, ty->loc, E_GLOBAL_BOOL);
		return bad;
	}
	int n = ast_count(ty->list);
	if (n > TILEC_MAX_RANK) {
		diag_error(S->cx, ty->loc, E_TENSOR_RANK, TILEC_MAX_RANK, n);
		return bad;
	}
	for (Node *d = ty->list; d; d = d->next)
		if (!sema_resolve_dim(S, kernel, d, &t.dims[t.rank++]))
			return bad;
	if (ty->b) {
		int64_t v = 0;
		if (!const_int(S, ty->b, &v) || !valid_swizzle(v)) {
			diag_error(S->cx, ty->b->loc, E_SWIZZLE, (long long)v);
			return bad;
		}
		t.swizzle = (int)v;
	}
	return check_box(S, p, &t) ? t : bad;
}

/* Whether a warpgroup operation may run here: inside a role, or in a kernel
 * whose pipelined loop was refused (the roles would have come from the rewrite:
 * an 'outside a role' error for each statement would only repeat that error). */
bool sema_in_role(Sema *S, Loc at, const char *what)
{
	if (S->role || S->pipeline_failed)
		return true;
	diag_error(S->cx, at, E_OUTSIDE_ROLE, what);
	return false;
}

static bool at_kernel_top(Sema *S)
{
	return S->fn->kind == SYM_KERNEL && S->block_depth == 1 && !S->role;
}

/* mbarrier NAME [ "[" N "]" ] "(" arrive-count ")" */
void sema_mbarrier(Sema *S, Node *st, Symbol *mark)
{
	Symbol *s = sema_declare(S, SYM_MBAR, st, mark);
	s->ty = type_scalar(DT_ERROR);
	if (!at_kernel_top(S)) {
		diag_error(S->cx, st->loc, E_MBAR_DECL, st->name,
			   "declare mbarriers at the top level of a kernel body");
		return;
	}
	int64_t count = 0, n = 1;
	if (!const_int(S, st->a, &count) || count < 1 || count > MAX_MBAR_COUNT) {
		diag_error(S->cx, st->a->loc, E_MBAR_DECL, st->name,
			   "the arrive count is a constant from 1 to 1048575");
		return;
	}
	if (st->b && (!const_int(S, st->b, &n) || n < 1 || n > 64)) {
		diag_error(S->cx, st->b->loc, E_MBAR_DECL, st->name,
			   "the number of barriers is a constant from 1 to 64");
		return;
	}
	Type t = type_scalar(DT_I64);
	t.space = SP_MBAR;
	t.rank = st->b ? 1 : 0;
	t.dims[0] = (Dim){n, -1, NULL};
	t.count = (int)count;
	s->ty = t;
}

/* frag NAME ":" f32 "[" 64 "," N "]" "=" expr */
void sema_frag(Sema *S, Node *st, Symbol *mark)
{
	Symbol *s = sema_declare(S, SYM_FRAG, st, mark);
	s->ty = type_scalar(DT_ERROR);
	if (!sema_in_role(S, st->loc, "frag"))
		return;
	Node *ty = st->a;
	Type t = type_scalar(ty->dtype);
	t.space = SP_FRAG;
	int64_t d[2] = {0, 0};
	int rank = ast_count(ty->list);
	bool ok = ty->space == SP_SHARED && !ty->b && (rank == 1 || rank == 2) &&
		  const_int(S, ty->list, &d[0]) &&
		  (rank == 1 || const_int(S, ty->list->next, &d[1]));
	if (ok && rank == 1 && ty->dtype == DT_F32 && d[0] == 64) {
		/* a row vector: one value per row of the warpgroup's 64 rows */
		t.rank = 1;
		t.dims[0] = (Dim){64, -1, NULL};
		s->ty = t;
		goto init;
	}
	if (!ok || rank != 2 || ty->dtype != DT_F32 || d[0] != 64 || d[1] < 8 || d[1] > 256 ||
	    d[1] % 8) {
		diag_error(S->cx, ty->loc, E_FRAG_SHAPE, st->name,
			   ty->space == SP_SCALAR ? dtype_name(ty->dtype)
			   : ctx_printf(S->cx, "%s[%lld, %lld]", dtype_name(ty->dtype),
					(long long)d[0], (long long)d[1]));
		return;
	}
	t.rank = 2;
	t.dims[0] = (Dim){64, -1, NULL};
	t.dims[1] = (Dim){d[1], -1, NULL};
	s->ty = t;
init:;
	DType it = sema_expr(S, st->b);
	if (it != DT_ERROR && st->b->ty.space == SP_FRAG) {
		diag_error(S->cx, st->b->loc, E_FRAG_SCALAR,
			   "the initial value of a fragment (give a scalar; assign fragments after)");
		return;
	}
	if (it != DT_ERROR) {
		sema_coerce(S, st->b, DT_F32);
		if (st->b->ty.dt != DT_F32 && st->b->ty.dt != DT_ERROR)
			diag_error(S->cx, st->b->loc, E_INIT_TYPE, st->name,
				   dtype_name(st->b->ty.dt), "f32");
	}
}

/* ---- roles ------------------------------------------------------------------ */

static int role_lo(const Node *r) { return (int)r->a->const_ival; }
static int role_hi(const Node *r) { return r->b ? (int)r->b->const_ival : role_lo(r) + 1; }

static bool check_role_range(Sema *S, Node *st)
{
	int64_t lo = 0, hi = 0;
	if (!const_int(S, st->a, &lo) || (st->b && !const_int(S, st->b, &hi))) {
		diag_error(S->cx, st->a->loc, E_NOT_CONSTANT, "a warpgroup index");
		return false;
	}
	if (!st->b)
		hi = lo + 1;
	int wgs = S->block_threads / 128;
	if (S->block_threads % 128 || lo < 0 || hi <= lo || hi > wgs) {
		diag_error(S->cx, st->loc, E_ROLE_WARPGROUPS, st->name, (long long)lo,
			   (long long)hi - 1, S->block_threads, wgs);
		return false;
	}
	for (int i = 0; i < S->nroles; i++) {
		Node *o = S->roles[i];
		if (lo < role_hi(o) && role_lo(o) < hi) {
			int shared = (int)(lo > role_lo(o) ? lo : role_lo(o));
			diag_error(S->cx, st->loc, E_ROLE_OVERLAP, st->name, shared, o->name);
			return false;
		}
	}
	return true;
}

static bool check_regs(Sema *S, Node *st)
{
	int64_t r = 0;
	if (!st->c)
		return true;
	if (!const_int(S, st->c, &r) || r < 24 || r > 256 || r % 8) {
		diag_error(S->cx, st->c->loc, E_REGS_VALUE, (long long)r);
		return false;
	}
	return true;
}

/* role NAME "=" "warpgroup" "(" lo [".." hi] ")" ["regs" "(" R ")"] block */
void sema_role(Sema *S, Node *st)
{
	if (!at_kernel_top(S)) {
		diag_error(S->cx, st->loc, E_ROLE_PLACEMENT, st->name);
		return;
	}
	/* declared up front by sema_kernel_begin, so roles can name each other */
	Symbol *s = st->sym ? st->sym : sema_declare(S, SYM_ROLE, st, NULL);
	s->ty = type_scalar(DT_VOID);
	bool range_ok = check_role_range(S, st);
	bool regs_ok = check_regs(S, st); /* checked even when the range is bad */
	bool ok = range_ok && regs_ok;
	if (ok && S->nroles < (int)(sizeof S->roles / sizeof S->roles[0]))
		S->roles[S->nroles++] = st;
	S->role = ok ? st : NULL;
	int saved_depth = S->block_depth;
	sema_block(S, st->d);
	S->block_depth = saved_depth;
	S->role = NULL;
}

static void check_budget(Sema *S)
{
	if (S->block_threads <= 0 || S->block_threads % 128)
		return;
	int wgs = S->block_threads / 128;
	long long total = 0;
	for (int wg = 0; wg < wgs; wg++) {
		int regs = target_entry_regs(S->block_threads);
		for (int i = 0; i < S->nroles; i++)
			if (wg >= role_lo(S->roles[i]) && wg < role_hi(S->roles[i]) &&
			    S->roles[i]->c)
				regs = (int)S->roles[i]->c->const_ival;
		total += 128LL * regs;
	}
	if (total > target_sm90a.regs_per_sm)
		diag_error(S->cx, S->roles[0]->loc, E_REGS_BUDGET, total);
}

/* ---- mbarrier arrivals -------------------------------------------------------- */

static int role_threads(const Node *r)
{
	return 128 * (role_hi(r) - role_lo(r));
}

/* How many threads run an arrive here each time: the role's threads, one
 * per warpgroup under 'if elect_one()', unknown under other branches that
 * depend on the thread. */
static int arriving_threads(Sema *S)
{
	int wgs = S->role ? role_threads(S->role) / 128 : S->block_threads / 128;
	if (S->conditional)
		return -1; /* which iterations or cases arrive is data: not counted */
	if (S->elected)
		return S->divergent > S->elected ? -1 : (wgs ? wgs : 1);
	if (S->divergent)
		return -1;
	return S->role ? role_threads(S->role) : S->block_threads;
}

/* `threads`: how many arrive at this site (arriving_threads), or -1 when unknown */
static void record_arrive(Sema *S, Symbol *bar, Loc loc, int threads)
{
	if (S->nsites == S->cap_sites) {
		int cap = S->cap_sites ? S->cap_sites * 2 : 16;
		ArriveSite *n = ctx_alloc(S->cx, (size_t)cap * sizeof(ArriveSite));
		if (S->nsites)
			memcpy(n, S->sites, (size_t)S->nsites * sizeof(ArriveSite));
		S->sites = n;
		S->cap_sites = cap;
	}
	S->sites[S->nsites++] = (ArriveSite){bar, threads, loc};
}

/* Every mbarrier whose arrive sites are all known must see exactly its
 * count per phase; otherwise the phase never completes (a hang) or
 * completes early (a race). A barrier nobody arrives at is an error only
 * when somebody waits on it. */
static void check_arrivals(Sema *S, Node *kernel, int errors_before)
{
	for (Node *st = kernel->b->list; st; st = st->next) {
		if (st->kind != N_MBARRIER || !st->sym || st->sym->ty.space != SP_MBAR)
			continue;
		int total = 0;
		bool known = true;
		for (int i = 0; i < S->nsites; i++) {
			if (S->sites[i].bar != st->sym)
				continue;
			known = known && S->sites[i].threads >= 0;
			total += S->sites[i].threads;
		}
		bool unused = total == 0 && known && !st->sym->waits;
		/* the pipeline's barriers are right by construction: a mismatch means a
		 * generated arrive did not type-check, after an error in the user's code */
		bool made = strchr(st->name, '.') && S->cx->nerrors > errors_before;
		if (known && !unused && !made && total != st->sym->ty.count)
			diag_error(S->cx, st->loc, E_MBAR_ARRIVALS, st->name,
				   st->sym->ty.count, total,
				   total ? "" : " (nothing arrives: waiting on it hangs)");
	}
}

void sema_kernel_begin(Sema *S, Node *kernel)
{
	/* in 64 bits: threads(...) out of range (reported by the launch check) must
	 * not overflow; such a block counts as 0 threads */
	long long threads = 1;
	S->ctas_per_sm = 0;
	S->has_cluster = false;
	S->peer_mbar = false;
	for (Node *l = kernel->c; l; l = l->next)
		S->has_cluster |= l->op == LAUNCH_CLUSTER;
	for (Node *l = kernel->c; l; l = l->next)
		if (l->op == LAUNCH_THREADS)
			for (Node *e = l->list; e; e = e->next)
				if (e->is_const && threads) {
					threads = e->const_ival < 0 || e->const_ival > INT32_MAX
						  ? 0 : threads * e->const_ival;
					threads = threads > INT32_MAX ? 0 : threads;
				}
	S->block_threads = (int)threads;
	S->pipelined = kernel->op != KERNEL_PLAIN;
	S->pipeline_failed = kernel->op == KERNEL_PIPELINE_REFUSED;
	S->nstage_reads = 0;
	S->nroles = 0;
	S->npairs = 0;
	S->nsites = 0;
	for (Node *st = kernel->b->list; st; st = st->next)
		if (st->kind == N_ROLE)
			sema_declare(S, SYM_ROLE, st, NULL);
	S->divergent = S->lane_divergent = S->elected = 0;
	S->role = NULL;
}

/* The kernel's last mbarrier declaration: its init ends in a cluster barrier (peer_mbar). */
static void mark_cluster_init(Node *kernel)
{
	Symbol *last = NULL;
	for (Node *st = kernel->b->list; st; st = st->next)
		if (st->kind == N_MBARRIER && st->sym && st->sym->ty.space == SP_MBAR)
			last = st->sym;
	if (last)
		last->cluster_init = true;
}

void sema_kernel_end(Sema *S, Node *kernel)
{
	if (S->nroles)
		check_budget(S);
	for (int i = 0; i < S->nroles && S->ctas_per_sm > 1; i++)
		if (S->roles[i]->c) {
			diag_error(S->cx, S->roles[i]->c->loc, E_CTAS_PER_SM_REGS, S->ctas_per_sm);
			break;
		}
	check_arrivals(S, kernel, S->kernel_errors);
	if (S->peer_mbar)
		mark_cluster_init(kernel);
}

/* ---- views --------------------------------------------------------------------- */

static bool view_error(Sema *S, Node *at, const char *name, const char *why)
{
	diag_error(S->cx, at->loc, E_VIEW, name, why);
	return false;
}

/* One element of a view's index list, for dimension `d` of `t`; appends the
 * kept width to `out` when the dimension is kept. */
static bool view_dim(Sema *S, Node *view, Node *ix, const char *name, const Type *t, int d,
		     Type *out)
{
	if (ix && ix->kind != N_RANGE && ix->kind != N_FULL) {
		DType it = sema_expr(S, ix);
		if (it == DT_UNTYPED_INT)
			it = sema_concrete(S, ix);
		if (it != DT_I32 && it != DT_ERROR)
			return view_error(S, ix, name, "indices of tile views are i32");
		return it != DT_ERROR;
	}
	int64_t width;
	if (!ix || ix->kind == N_FULL) {
		if (t->dims[d].param >= 0)
			return view_error(S, ix ? ix : view, name,
					  "':' (or a missing index) needs a constant extent; write "
					  "'start +: width'");
		width = t->dims[d].value;
	} else {
		DType st = sema_expr(S, ix->a);
		if (st == DT_UNTYPED_INT)
			st = sema_concrete(S, ix->a);
		if (st != DT_I32 && st != DT_ERROR)
			return view_error(S, ix->a, name, "indices of tile views are i32");
		if (!const_int(S, ix->b, &width) || width < 1 ||
		    (t->dims[d].param < 0 && width > t->dims[d].value))
			return view_error(S, ix->b, name,
					  "the width after '+:' is a positive constant within the extent");
	}
	out->dims[out->rank++] = (Dim){width, -1, NULL};
	return true;
}

/* A tile view: a shared array, a tma/global tensor, indexed as above. */
bool sema_view(Sema *S, Node *e, Space want)
{
	Node *base = e->kind == N_INDEX ? e->a : e;
	Symbol *s = base->kind == N_IDENT ? sema_lookup(S, base->name) : NULL;
	const char *name = base->kind == N_IDENT ? base->name : "expression";
	if (!s || (s->ty.space != SP_SHARED && s->ty.space != SP_TMA &&
		   s->ty.space != SP_GLOBAL)) {
		if (s && s->ty.dt == DT_ERROR)
			return false; /* a value whose own error was reported where it was made */
		if (!s && base->kind == N_IDENT)
			diag_error(S->cx, base->loc, E_UNDEFINED, base->name);
		else
			view_error(S, base, name, "not a shared array or global tensor");
		return false;
	}
	base->sym = s;
	e->sym = s;
	const Type *t = &s->ty;
	if ((want == SP_SHARED) != (t->space == SP_SHARED)) {
		return view_error(S, base, name, want == SP_SHARED ? "this operand is a shared tile"
							  : "this operand is a global tensor");
	}
	Node *ix = e->kind == N_INDEX ? e->list : NULL;
	if (ast_count(ix) > t->rank)
		return view_error(S, e, name, "more indices than dimensions");
	Type v = type_scalar(t->dt);
	v.space = t->space;
	v.swizzle = t->swizzle;
	for (int d = 0; d < t->rank; d++, ix = ix ? ix->next : NULL)
		if (!view_dim(S, e, ix, name, t, d, &v))
			return false;
	e->ty = v;
	e->is_view = true;
	return true;
}

/* A view of a shared tile that TMA or wgmma addresses as a whole: leading
 * dimensions indexed (a stage), trailing dimensions complete. */
static bool whole_rows(Sema *S, Node *e)
{
	const Type *t = &e->sym->ty;
	Node *ix = e->kind == N_INDEX ? e->list : NULL;
	for (int d = 0; ix; d++, ix = ix->next)
		if (ix->kind == N_RANGE && d >= t->rank - 1)
			return view_error(S, ix, e->sym->name,
					  "TMA and swizzled tiles are addressed by whole rows");
	return true;
}

Symbol *sema_mbar_ref(Sema *S, Node *e, const char *op)
{
	Node *base = e->kind == N_INDEX ? e->a : e;
	Symbol *s = base->kind == N_IDENT ? sema_lookup(S, base->name) : NULL;
	if (!s || s->kind != SYM_MBAR) {
		diag_error(S->cx, e->loc, E_NOT_MBARRIER, op,
			   s ? ctx_printf(S->cx, "'%s'", s->name) : "an expression");
		return NULL;
	}
	base->sym = s;
	e->sym = s;
	int n = e->kind == N_INDEX ? ast_count(e->list) : 0;
	if (n != s->ty.rank) {
		diag_error(S->cx, e->loc, E_INDEX_COUNT, s->name, s->ty.rank, n);
		return NULL;
	}
	if (n) {
		DType t = sema_expr(S, e->list);
		if (t == DT_UNTYPED_INT)
			t = sema_concrete(S, e->list);
		if (t != DT_I32 && t != DT_ERROR) {
			diag_error(S->cx, e->list->loc, E_INDEX_TYPE, dtype_name(t));
			return NULL;
		}
	}
	e->is_view = true;
	return s;
}

/* ---- tile operations --------------------------------------------------------- */

/* Whether an operation may run here: under no branch whose condition varies more than
 * `may_vary` between the threads of its warpgroup. Warpgroup operations (mma, sync, ...) take
 * VARY_NONE; frag_store, frag_load and sync_warp, which move or wait for each warp's own rows
 * and lanes, VARY_WARP (a branch on warp_id may take them, one on the lane may not). */
static bool runs_here(Sema *S, Node *e, Vary may_vary)
{
	if (!sema_in_role(S, e->loc, e->name))
		return false;
	if (!S->role)
		return true;
	if (may_vary == VARY_NONE && S->divergent) {
		diag_error(S->cx, e->loc, E_DIVERGENT, e->name, S->role->name);
		return false;
	}
	if (may_vary == VARY_WARP && S->lane_divergent) {
		diag_error(S->cx, e->loc, E_LANE_DIVERGENT, e->name, S->role->name);
		return false;
	}
	return true;
}

static bool collective(Sema *S, Node *e)
{
	return runs_here(S, e, VARY_NONE);
}

static bool same_shape(const Type *a, const Type *b)
{
	if (a->rank != b->rank)
		return false;
	for (int i = 0; i < a->rank; i++)
		if (a->dims[i].value != b->dims[i].value)
			return false;
	return true;
}

/* A shared view holding a [64, N] fragment: [64, N] itself, or [S, 64, W]
 * with S W = N, slabs of whole rows of the tile side by side (a row wider
 * than one swizzle line, as mma operands are stored). */
static bool frag_view_shape(Sema *S, const Node *view, int64_t n)
{
	const Type *v = &view->ty;
	if (v->rank == 2)
		return v->dims[0].value == 64 && v->dims[1].value == n;
	const Node *base = view->kind == N_INDEX ? view->a : view;
	const Symbol *b = base->kind == N_IDENT ? sema_lookup(S, base->name) : NULL;
	int64_t width = b ? b->ty.dims[b->ty.rank - 1].value : -1;
	return v->rank == 3 && v->dims[1].value == 64 && v->dims[2].value == width &&
	       width % 8 == 0 && v->dims[0].value * width == n;
}

static char *shape_str(Sema *S, const Type *t)
{
	char *s = ctx_printf(S->cx, "%s[", dtype_name(t->dt));
	for (int i = 0; i < t->rank; i++)
		s = ctx_printf(S->cx, "%s%s%lld", s, i ? ", " : "", (long long)t->dims[i].value);
	return ctx_printf(S->cx, "%s]", s);
}

/* The tensor side of a TMA copy: one scalar index (box extent 1) or one
 * 'start +: box' window per dimension. */
static bool tma_side(Sema *S, Node *e, Node *op)
{
	if (!sema_view(S, e, SP_TMA))
		return false;
	const Type *t = &e->sym->ty;
	if (t->space != SP_TMA)
		return view_error(S, e, e->sym->name, "TMA needs a 'tma' parameter");
	Node *ix = e->kind == N_INDEX ? e->list : NULL;
	if (ast_count(ix) != t->rank)
		return view_error(S, e, e->sym->name, "index every dimension of a TMA tensor");
	for (int d = 0; ix; d++, ix = ix->next) {
		int width = ix->kind == N_RANGE ? (int)ix->b->const_ival : 1;
		if (ix->kind == N_FULL || width != t->box[d]) {
			diag_error(S->cx, ix->loc, E_TILE_MISMATCH, op->name, ctx_printf(S->cx,
				"dimension %d of '%s' is copied in boxes of %d, the view takes %d",
				d, e->sym->name, t->box[d], width));
			return false;
		}
	}
	return true;
}

/* An i32 scalar argument (a CTA rank or mask of the cluster) of a cluster builtin: argument
 * `pos` (1-based) of `e`; the kernel must be launched in clusters. */
static bool cluster_scalar_arg(Sema *S, Node *e, Node *arg, int pos, const char *what)
{
	if (!sema_cluster_ok(S, e, e->name))
		return false;
	DType t = sema_expr(S, arg);
	if (t == DT_UNTYPED_INT)
		t = sema_concrete(S, arg);
	if (t == DT_ERROR || !sema_scalar(S, arg, what))
		return false;
	if (t != DT_I32) {
		diag_error(S->cx, arg->loc, E_ARG_TYPE, pos, e->name, "'i32'", dtype_name(t));
		return false;
	}
	S->peer_mbar = true;
	return true;
}

/* tma_load(tile, tensor-window, mbarrier[, ctas]), tma_store(tensor-window, tile). With ctas
 * (a mask of the cluster's CTA ranks) the box lands at the tile's offset in each of those
 * CTAs and their barrier of the same name and index receives its bytes (multicast). */
static DType check_tma_copy(Sema *S, Node *e, bool load)
{
	Node *tile = ast_nth(e->list, load ? 0 : 1), *tensor = ast_nth(e->list, load ? 1 : 0);
	if (!sema_view(S, tile, SP_SHARED) || !whole_rows(S, tile) || !tma_side(S, tensor, e))
		return DT_ERROR;
	if (load && !sema_mbar_ref(S, ast_nth(e->list, 2), e->name))
		return DT_ERROR;
	Node *ctas = load ? ast_nth(e->list, 3) : NULL;
	if (ctas && !cluster_scalar_arg(S, e, ctas, 4, "a mask of CTA ranks"))
		return DT_ERROR;
	const Type *a = &tile->ty, *b = &tensor->ty, *tt = &tensor->sym->ty;
	const char *why = NULL;
	if (a->dt != b->dt)
		why = ctx_printf(S->cx, "the tile is %s, the tensor %s", dtype_name(a->dt),
				 dtype_name(b->dt));
	else if (!same_shape(a, b))
		why = ctx_printf(S->cx, "the tile is %s, the box %s", shape_str(S, a), shape_str(S, b));
	else if (a->swizzle != tt->swizzle)
		why = ctx_printf(S->cx, "the tile has swizzle %d, the tensor map %d", a->swizzle,
				 tt->swizzle);
	if (why) {
		diag_error(S->cx, e->loc, E_TILE_MISMATCH, e->name, why);
		return DT_ERROR;
	}
	sema_set_scalar(e, DT_VOID);
	return DT_VOID;
}

static int64_t view_bytes(const Type *t)
{
	int64_t n = dtype_bytes(t->dt);
	for (int i = 0; i < t->rank; i++)
		n *= t->dims[i].value;
	return n;
}

/* arrive_expect(mbarrier, tile...): one arrival plus the bytes the listed
 * tiles will receive by TMA, counted by the compiler. */
static DType check_arrive_expect(Sema *S, Node *e)
{
	int n = ast_count(e->list);
	if (n < 2) {
		diag_error(S->cx, e->loc, E_ARG_COUNT, e->name, 2, n);
		return DT_ERROR;
	}
	Symbol *bar = sema_mbar_ref(S, e->list, e->name);
	int64_t bytes = 0;
	for (Node *t = e->list->next; t; t = t->next) {
		if (!sema_view(S, t, SP_SHARED))
			return DT_ERROR;
		bytes += view_bytes(&t->ty);
	}
	if (!bar)
		return DT_ERROR;
	if (bytes > MAX_MBAR_COUNT) {
		diag_error(S->cx, e->loc, E_MBAR_DECL, bar->name,
			   "one phase expects at most 1048575 bytes");
		return DT_ERROR;
	}
	e->ival = bytes;
	record_arrive(S, bar, e->loc, arriving_threads(S));
	sema_set_scalar(e, DT_VOID);
	return DT_VOID;
}

static void check_stage_release(Sema *S, Node *arrive);

/* wait(bar, parity); arrive(bar), or arrive(bar, rank): on the barrier of the same name and
 * index in the cluster's CTA `rank`. Such an arrival counts toward another CTA's barrier, which
 * this kernel's text does not tell: its barrier's count is not checked. */
static DType check_arrive_or_wait(Sema *S, Node *e, bool wait)
{
	int n = ast_count(e->list), want = wait ? 2 : 1;
	bool peer = !wait && n == 2;
	if (n != want && !peer) {
		if (wait)
			diag_error(S->cx, e->loc, E_ARG_COUNT, e->name, want, n);
		else
			diag_error(S->cx, e->loc, E_ARG_COUNT_CLUSTER, e->name, 1, 2, "a CTA rank", n);
		return DT_ERROR;
	}
	Symbol *bar = sema_mbar_ref(S, e->list, e->name);
	if (!bar)
		return DT_ERROR;
	if (peer) {
		if (!cluster_scalar_arg(S, e, e->list->next, 2, "a CTA rank"))
			return DT_ERROR;
		record_arrive(S, bar, e->loc, -1);
	} else if (wait) {
		bar->waits++;
		Node *p = e->list->next;
		DType t = sema_expr(S, p);
		sema_coerce(S, p, DT_I32);
		if (p->ty.dt != DT_I32 && t != DT_ERROR) {
			diag_error(S->cx, p->loc, E_ARG_TYPE, 2, e->name, "'i32'", dtype_name(p->ty.dt));
			return DT_ERROR;
		}
	} else {
		record_arrive(S, bar, e->loc, arriving_threads(S));
		if (e->op != CALL_MADE) /* the rewrite releases only finished stages */
			check_stage_release(S, e);
	}
	sema_set_scalar(e, DT_VOID);
	return DT_VOID;
}

/* A views' base names a buffer; anything else is checked as an expression
 * and is an RS operand when it is a fragment. */
static bool sema_expr_is_frag(Sema *S, Node *v)
{
	Node *base = v->kind == N_INDEX ? v->a : v;
	if (base->kind == N_IDENT) {
		Symbol *s = sema_lookup(S, base->name);
		if (s && (s->ty.space == SP_SHARED || s->ty.space == SP_GLOBAL ||
			  s->ty.space == SP_TMA))
			return false;
	}
	return sema_expr(S, v) != DT_ERROR && v->ty.space == SP_FRAG;
}

/* An mma operand: a swizzled shared tile view of rank 2 (or 3, slabs), or
 * transpose(...) of one: B stored [N][K], or A stored [K][M] (M-major A,
 * shared memory only). Returns the view node. */
static Node *mma_operand(Sema *S, Node *e, int index, bool *transposed)
{
	Node *v = e;
	*transposed = false;
	if (e->kind == N_CALL && !strcmp(e->name, "transpose") && (index == 2 || index == 3)) {
		if (ast_count(e->list) != 1) {
			diag_error(S->cx, e->loc, E_ARG_COUNT, "transpose", 1, ast_count(e->list));
			return NULL;
		}
		e->builtin = B_TRANSPOSE;
		v = e->list;
		*transposed = true;
	}
	if (index == 2 && sema_expr_is_frag(S, v)) {
		if (*transposed) {
			diag_error(S->cx, e->loc, E_MMA_OPERAND, index,
				   "a shared tile when transposed (a register A is [64, K])");
			return NULL;
		}
		/* A from registers (RS wgmma): a bf16/f16 fragment [64, K], or an f32 one for
		 * a tf32 product (check_mma) */
		if (v->ty.rank != 2 ||
		    (v->ty.dt != DT_BF16 && v->ty.dt != DT_F16 && v->ty.dt != DT_F32)) {
			diag_error(S->cx, v->loc, E_MMA_OPERAND, index,
				   "a bf16 or f16 fragment [64, K] (cast<bf16>(...) of an f32 one), "
				   "or an f32 one with a tf32 B");
			return NULL;
		}
		return v;
	}
	if (!sema_view(S, v, SP_SHARED))
		return NULL;
	const char *why = NULL;
	if (v->ty.rank != 2 && v->ty.rank != 3)
		why = ctx_printf(S->cx, "a 2-D tile view, or 3-D with 128-byte-row slabs first, "
				 "found %s", shape_str(S, &v->ty));
	else if (v->ty.dt != DT_BF16 && v->ty.dt != DT_F16 && v->ty.dt != DT_TF32)
		why = ctx_printf(S->cx, "bf16, f16 or tf32 (wgmma with f32 accumulation), found %s",
				 dtype_name(v->ty.dt));
	else if (!v->ty.swizzle)
		why = "a swizzled shared tile (wgmma reads canonical swizzled layouts)";
	if (why) {
		diag_error(S->cx, v->loc, E_MMA_OPERAND, index, why);
		return NULL;
	}
	e->is_view = true;
	return v;
}

/* The extents of an mma operand view: rank 2 [rows, cols], or rank 3
 * [slabs, rows, cols] whose slabs extend the contiguous dimension (a
 * 128-byte swizzle row holds 64 bf16; wider K or N is stored slab after
 * slab, as TMA writes box after box). */
static void operand_mk(const Node *a, bool mmajor, int64_t *m, int64_t *k)
{
	const Type *t = &a->ty;
	int64_t slabs = t->rank == 3 ? t->dims[0].value : 1;
	int64_t rows = t->dims[t->rank - 2].value, cols = slabs * t->dims[t->rank - 1].value;
	*m = mmajor ? cols : rows;
	*k = mmajor ? rows : cols;
}

/* B: K-major (transposed, stored [N][K]) or N-major (stored [K][N]). */
static void operand_bkn(const Node *b, bool kmajor, int64_t *k, int64_t *n)
{
	const Type *t = &b->ty;
	int64_t slabs = t->rank == 3 ? t->dims[0].value : 1;
	int64_t rows = t->dims[t->rank - 2].value, cols = slabs * t->dims[t->rank - 1].value;
	*k = kmajor ? cols : rows;
	*n = kmajor ? rows : cols;
}

/* A tf32 product (B a tf32 tile): A an f32 fragment or a tf32 tile, both read K-major as
 * wgmma's tf32 form requires (B transposed, stored [N][K]; A stored [64][K]). An f32
 * fragment is a tf32 product's A only. */
static bool tf32_operands(Sema *S, const Node *a, bool ta, const Node *b, bool tb)
{
	bool tf32 = b->ty.dt == DT_TF32;
	const char *why = NULL;
	if (!tf32 && (a->ty.dt == DT_F32 || a->ty.dt == DT_TF32))
		why = ctx_printf(S->cx, "A is %s and B is %s: a tf32 product reads B from a tf32 "
				 "tile", a->ty.space == SP_FRAG ? "an f32 fragment" : "tf32",
				 dtype_name(b->ty.dt));
	else if (tf32 && a->ty.dt != DT_F32 && a->ty.dt != DT_TF32)
		why = ctx_printf(S->cx, "A is %s and B is tf32: a tf32 product takes an f32 "
				 "fragment or a tf32 tile as A", dtype_name(a->ty.dt));
	else if (tf32 && !tb)
		why = "B is a tf32 tile stored [K][N]: tf32 products read B K-major, "
		      "transpose(t) of a tile stored [N][K]";
	else if (tf32 && ta)
		why = "A is a tf32 tile stored [K][64]: tf32 products read A K-major, stored [64][K]";
	if (why)
		diag_error(S->cx, b->loc, E_MMA_SHAPE, why);
	return !why;
}

/* wgmma.wait_group n: every group but the n newest has finished (groups
 * counted in program order, as the code runs them when it runs straight
 * through), so their accumulators may be read and their RS operands
 * rewritten. */
static void finish_mma_groups(Sema *S, int n)
{
	for (Symbol *x = S->frags; x; x = x->next_frag)
		if (x->pending && S->mma_groups - x->mma_group >= n)
			x->pending = false;
	for (int i = 0; i < S->nrs_async; i++)
		if (S->mma_groups - S->rs_async[i].group >= n)
			S->rs_async[i].waited = true;
	int keep = 0;
	for (int i = 0; i < S->nstage_reads; i++)
		if (S->mma_groups - S->stage_reads[i].group < n)
			S->stage_reads[keep++] = S->stage_reads[i];
	S->nstage_reads = keep;
}

/* An SS mma_async operand that reads one stage of a shared array: its first
 * index is a run-time scalar (As[s], As[s, rows...]). Remembered until a wait
 * finishes its group. */
static void note_stage_read(Sema *S, Node *call, Symbol *acc, Node *view)
{
	Node *ix = view->kind == N_INDEX ? view->list : NULL;
	if (!ix || ix->kind == N_RANGE || ix->kind == N_FULL || ix->is_const ||
	    view->ty.space != SP_SHARED ||
	    S->nstage_reads == (int)(sizeof S->stage_reads / sizeof S->stage_reads[0]))
		return;
	S->stage_reads[S->nstage_reads++].stage = ix;
	S->stage_reads[S->nstage_reads - 1].call = call;
	S->stage_reads[S->nstage_reads - 1].acc = acc;
	S->stage_reads[S->nstage_reads - 1].group = acc->mma_group;
}

/* Two checked index expressions that compute the same value: the same names
 * (by symbol), constants and operators. */
static bool same_index(const Node *a, const Node *b)
{
	if (!a || !b)
		return a == b;
	if (a->is_const && b->is_const)
		return a->const_ival == b->const_ival;
	if (a->kind != b->kind)
		return false;
	switch (a->kind) {
	case N_IDENT: return a->sym && a->sym == b->sym;
	case N_UNARY: return a->op == b->op && same_index(a->a, b->a);
	case N_BINARY: return a->op == b->op && same_index(a->a, b->a) && same_index(a->b, b->b);
	case N_CAST: return a->dtype == b->dtype && same_index(a->a, b->a);
	default: return false;
	}
}

/* arrive(bar[i]) while an mma_async reading stage i of a shared array is in
 * flight: whoever waits on the barrier may refill the stage under the wgmma. */
static void check_stage_release(Sema *S, Node *arrive)
{
	Node *bar_ref = arrive->list;
	if (bar_ref->kind != N_INDEX || !bar_ref->list || bar_ref->list->next)
		return;
	for (int i = 0; i < S->nstage_reads; i++) {
		if (!same_index(S->stage_reads[i].stage, bar_ref->list))
			continue;
		const char *acc = S->stage_reads[i].acc->name;
		sema_warn(S, arrive->loc, W_MMA_STAGE_RELEASE, bar_ref->a->name,
			  S->stage_reads[i].call->loc.line, acc, acc);
		S->stage_reads[i] = S->stage_reads[--S->nstage_reads];
		return;
	}
}

/* mma(acc, a, b): acc[64, N] += a[64, K] * b[K, N]; b given as transpose(t)
 * when stored [N, K] (K contiguous, wgmma's K-major B). */
static DType check_mma(Sema *S, Node *e)
{
	if (!sema_expect_args(S, e, 3) || !collective(S, e))
		return DT_ERROR;
	Node *acc = ast_nth(e->list, 0);
	Symbol *f = acc->kind == N_IDENT ? sema_lookup(S, acc->name) : NULL;
	if (!f || f->kind != SYM_FRAG || f->ty.space != SP_FRAG || f->ty.rank != 2) {
		diag_error(S->cx, acc->loc, E_MMA_OPERAND, 1, "a fragment declared with 'frag'");
		return DT_ERROR;
	}
	acc->sym = f;
	/* wgmma chains on an accumulator in flight */
	if (e->builtin == B_MMA_ASYNC) {
		f->pending = true;
		f->mma_group = ++S->mma_groups;
	}
	bool ta, tb;
	Node *a = mma_operand(S, ast_nth(e->list, 1), 2, &ta);
	Node *b = mma_operand(S, ast_nth(e->list, 2), 3, &tb);
	if (!a || !b)
		return DT_ERROR;
	if (!tf32_operands(S, a, ta, b, tb))
		return DT_ERROR;
	int64_t m, k, kb, n;
	operand_mk(a, ta, &m, &k);
	operand_bkn(b, tb, &kb, &n);
	int kstep = b->ty.dt == DT_TF32 ? 8 : 16;   /* wgmma's K per instruction */
	const char *why = NULL;
	if (m != 64)
		why = ctx_printf(S->cx, "A has %lld rows; a warpgroup's wgmma has M = 64", (long long)m);
	else if (k % kstep || k != kb)
		why = ctx_printf(S->cx, "K is %lld for A and %lld for B; it must agree and be a "
				 "multiple of %d", (long long)k, (long long)kb, kstep);
	else if (n != f->ty.dims[1].value)
		why = ctx_printf(S->cx, "B has N = %lld, the fragment '%s' %lld columns",
				 (long long)n, f->name, (long long)f->ty.dims[1].value);
	else if (a->ty.dt != b->ty.dt && b->ty.dt != DT_TF32)
		why = ctx_printf(S->cx, "A is %s and B is %s", dtype_name(a->ty.dt),
				 dtype_name(b->ty.dt));
	if (why) {
		diag_error(S->cx, e->loc, E_MMA_SHAPE, why);
		return DT_ERROR;
	}
	if (!tb && b->ty.rank == 3 && b->ty.dims[2].value * dtype_bytes(b->ty.dt) != b->ty.swizzle) {
		diag_error(S->cx, b->loc, E_MMA_OPERAND, 3, "slabs of whole swizzle rows");
		return DT_ERROR;
	}
	if (ta && a->ty.rank == 3 && a->ty.dims[2].value * dtype_bytes(a->ty.dt) != a->ty.swizzle) {
		diag_error(S->cx, a->loc, E_MMA_OPERAND, 2, "slabs of whole swizzle rows");
		return DT_ERROR;
	}
	if (e->builtin == B_MMA_ASYNC) {
		if (a->ty.space != SP_FRAG)
			note_stage_read(S, e, f, a);
		note_stage_read(S, e, f, b);
	}
	if (e->builtin == B_MMA_ASYNC && a->ty.space == SP_FRAG && S->loop_depth > 0 &&
	    S->nrs_async < (int)(sizeof S->rs_async / sizeof S->rs_async[0])) {
		S->rs_async[S->nrs_async].acc = f;
		S->rs_async[S->nrs_async].call = e;
		S->rs_async[S->nrs_async].group = f->mma_group;
		S->rs_async[S->nrs_async].waited = false;
		S->rs_async[S->nrs_async++].depth = S->loop_depth;
	}
	/* mma (not _async) ends with wait_group 0: afterwards nothing is pending
	 * (its operands were checked above, before that wait) */
	if (e->builtin != B_MMA_ASYNC)
		finish_mma_groups(S, 0);
	e->ival = tb | ta << 1; /* bit 0: B K-major (stored [N, K]); bit 1: A M-major */
	sema_set_scalar(e, DT_VOID);
	return DT_VOID;
}

/* At the end of a loop body (loop depth `depth`): an RS mma_async issued in
 * it whose accumulator is still in flight would have its register operand
 * overwritten by the next iteration (PTX: undefined behaviour; seen as
 * garbage on the GPU). */
void sema_check_rs_loop(Sema *S, int depth)
{
	int keep = 0;
	for (int i = 0; i < S->nrs_async; i++) {
		if (S->rs_async[i].depth < depth) {
			S->rs_async[keep++] = S->rs_async[i];
			continue;
		}
		if (!S->rs_async[i].waited)
			diag_error(S->cx, S->rs_async[i].call->loc, E_MMA_RS_LOOP,
				   S->rs_async[i].acc->name);
	}
	S->nrs_async = keep;
}

/* mma_wait(acc, n): wgmma.wait_group n, the accumulator threaded through;
 * every group but the n newest has finished (with n = 0 every one). */
static DType check_mma_wait(Sema *S, Node *e)
{
	Node *acc = e->list;
	Symbol *f = acc && acc->kind == N_IDENT ? sema_lookup(S, acc->name) : NULL;
	bool usable = f && f->kind == SYM_FRAG && f->ty.rank == 2;
	/* the rewrite's wait names the accumulator of the user's mma_async: when
	 * that one is wrong, its own error says so */
	if (e->op == CALL_MADE && (!usable || S->divergent))
		return DT_ERROR;
	if (!sema_expect_args(S, e, 2) || !collective(S, e))
		return DT_ERROR;
	Node *n = e->list->next;
	int64_t v = -1;
	if (!usable) {
		diag_error(S->cx, acc->loc, E_MMA_OPERAND, 1, "a fragment declared with 'frag'");
		return DT_ERROR;
	}
	if (!const_int(S, n, &v) || v < 0 || v > 7) {
		diag_error(S->cx, n->loc, E_NOT_CONSTANT, "the number of wgmma groups left in flight (0 to 7)");
		return DT_ERROR;
	}
	acc->sym = f;
	finish_mma_groups(S, (int)v);
	e->ival = v;
	sema_set_scalar(e, DT_VOID);
	return DT_VOID;
}

/* A global window that a fragment is stored into or loaded from: 2-D, its
 * columns a window of the tensor's last dimension. */
static bool global_frag_window(Sema *S, Node *v, const Symbol *bs)
{
	if (v->ty.rank != 2) {
		view_error(S, v, bs->name, "a fragment is a 2-D window (rows, columns)");
		return false;
	}
	Node *last = v->kind == N_INDEX ? ast_nth(v->list, bs->ty.rank - 1) : NULL;
	if (last && last->kind != N_RANGE && last->kind != N_FULL) {
		view_error(S, v, bs->name, "a fragment's columns are a window of the last dimension");
		return false;
	}
	return true;
}

/* The view inside transpose(view) (one argument), checked as a shared tile's view; NULL after
 * a diagnostic. */
static Node *transposed_view(Sema *S, Node *tr)
{
	if (ast_count(tr->list) != 1) {
		diag_error(S->cx, tr->loc, E_ARG_COUNT, "transpose", 1, ast_count(tr->list));
		return NULL;
	}
	tr->builtin = B_TRANSPOSE;
	return sema_view(S, tr->list, SP_SHARED) ? tr->list : NULL;
}

/* frag_store(transpose(t), f): the f32 fragment f [64, N] rounded into a tf32 tile as f^T,
 * stored [N][64] in two 32-column slabs (t viewed as [2, N, 32]): K-major, as wgmma reads a
 * tf32 B (B = f, K = 64 its rows) or a tf32 A (A = f^T). tf32 has no transposed operand forms,
 * so a product over a fragment's rows stages it this way. */
static DType check_frag_store_transposed(Sema *S, Node *e, Node *tr, const Type *ft, Node *limit)
{
	Node *v = transposed_view(S, tr);
	if (!v)
		return DT_ERROR;
	if (limit) {
		diag_error(S->cx, limit->loc, E_ARG_TYPE, 3, e->name,
			   "an i32 row count (for a global destination)", "a shared destination");
		return DT_ERROR;
	}
	const Type *t = &v->ty, *tile = &v->sym->ty;   /* sema_view: a shared tile's view */
	int64_t n = ft->dims[1].value;
	if (t->dt != DT_TF32 || ft->dt != DT_F32 || t->rank != 3 || tile->rank != 3 ||
	    t->dims[0].value != 2 || t->dims[1].value != n || t->dims[2].value != 32 ||
	    tile->dims[2].value != 32) {
		diag_error(S->cx, e->loc, E_TILE_MISMATCH, e->name, ctx_printf(S->cx,
			"a transposed store writes an f32 fragment [64, N] into a tf32 shared tile "
			"viewed as [2, N, 32] (its 64 rows as two slabs of 32 columns); the fragment "
			"is %s, the view %s of %s", shape_str(S, ft), shape_str(S, t),
			shape_str(S, tile)));
		return DT_ERROR;
	}
	tr->ty = *t;
	sema_set_scalar(e, DT_VOID);
	return DT_VOID;
}

/* frag_store(view, frag[, rows]): the fragment, converted to the view's
 * dtype, into a [64, N] window of a shared tile or of a global tensor (rows
 * and columns past the tensor's extents are not written; with `rows`, an
 * i32, neither are the window's rows from `rows` on: a ragged tail whose
 * next rows belong to someone else). */
static DType check_frag_store(Sema *S, Node *e)
{
	if (!sema_expect_args(S, e, ast_count(e->list) == 3 ? 3 : 2) ||
	    !runs_here(S, e, VARY_WARP))
		return DT_ERROR;
	Node *dst = ast_nth(e->list, 0), *src = ast_nth(e->list, 1);
	Node *limit = ast_nth(e->list, 2);
	DType st = sema_expr(S, src); /* reports a pending accumulator */
	if (st == DT_ERROR)
		return DT_ERROR;
	if (src->ty.space != SP_FRAG || src->ty.rank != 2) {
		diag_error(S->cx, src->loc, E_ARG_TYPE, 2, e->name, "a fragment [64, N]",
			   type_str(S->cx, &src->ty));
		return DT_ERROR;
	}
	const Type *ft = &src->ty;
	if (dst->kind == N_CALL && !strcmp(dst->name, "transpose"))
		return check_frag_store_transposed(S, e, dst, ft, limit);
	Node *base = dst->kind == N_INDEX ? dst->a : dst;
	Symbol *bs = base->kind == N_IDENT ? sema_lookup(S, base->name) : NULL;
	Space sp = bs && bs->ty.space == SP_GLOBAL ? SP_GLOBAL : SP_SHARED;
	if (!sema_view(S, dst, sp))
		return DT_ERROR;
	if (sp == SP_GLOBAL && !global_frag_window(S, dst, bs))
		return DT_ERROR;
	if (limit) {
		DType lt = sema_expr(S, limit);
		if (lt == DT_ERROR || !sema_scalar(S, limit, "a row count"))
			return DT_ERROR;
		if (lt == DT_UNTYPED_INT) {
			if (!sema_coerce(S, limit, DT_I32))
				return DT_ERROR;
			lt = DT_I32;
		}
		if (lt != DT_I32 || sp != SP_GLOBAL) {
			diag_error(S->cx, limit->loc, E_ARG_TYPE, 3, e->name,
				   "an i32 row count (for a global destination)",
				   sp != SP_GLOBAL ? "a shared destination" : dtype_name(lt));
			return DT_ERROR;
		}
	}
	if (dst->ty.dt == DT_TF32 && ft->dt != DT_F32) {
		diag_error(S->cx, e->loc, E_TILE_MISMATCH, e->name, ctx_printf(S->cx,
			"a tf32 tile takes an f32 fragment, found %s", shape_str(S, ft)));
		return DT_ERROR;
	}
	bool shape_ok = sp == SP_SHARED ? frag_view_shape(S, dst, ft->dims[1].value)
					: same_shape(&dst->ty, ft);
	if (!shape_ok || dst->ty.dt == DT_BOOL) {
		diag_error(S->cx, e->loc, E_TILE_MISMATCH, e->name, ctx_printf(S->cx,
			"the fragment is %s, the destination %s", shape_str(S, ft),
			shape_str(S, &dst->ty)));
		return DT_ERROR;
	}
	sema_set_scalar(e, DT_VOID);
	return DT_VOID;
}

/* e's type: an f32 fragment [64, n] */
static DType frag_f32_result(Node *e, int64_t n)
{
	e->ty = type_scalar(DT_F32);
	e->ty.space = SP_FRAG;
	e->ty.rank = 2;
	e->ty.dims[0] = (Dim){64, -1, NULL};
	e->ty.dims[1] = (Dim){n, -1, NULL};
	return DT_F32;
}

/* frag_load(transpose(t)): a 16-bit shared tile [K, 64] (whole 64-element rows, K a multiple
 * of 16 up to 256) as the f32 fragment t^T [64, K], read by ldmatrix.trans: a transpose
 * without a product on the tensor cores (I t^T) or a round trip through another tile. */
static DType check_frag_load_transposed(Sema *S, Node *e, Node *tr)
{
	Node *v = transposed_view(S, tr);
	if (!v)
		return DT_ERROR;
	const Type *t = &v->ty, *tile = &v->sym->ty;   /* sema_view: a shared tile's view */
	int64_t k = t->rank == 2 ? t->dims[0].value : 0;
	if ((t->dt != DT_BF16 && t->dt != DT_F16) || t->rank != 2 || t->dims[1].value != 64 ||
	    tile->dims[tile->rank - 1].value != 64 || k < 16 || k > 256 || k % 16) {
		diag_error(S->cx, e->loc, E_TILE_MISMATCH, e->name, ctx_printf(S->cx,
			"a transposed load reads rows [K, 64] (K a multiple of 16 up to 256) of a "
			"bf16 or f16 shared tile 64 elements wide; the view is %s of %s",
			shape_str(S, t), shape_str(S, tile)));
		return DT_ERROR;
	}
	return frag_f32_result(e, k);
}

/* frag_load(view): a [64, N] window of a shared tile as an f32 fragment in
 * the accumulator layout (each thread loads its elements; swizzled tiles
 * are read through the same XOR that TMA wrote them with), or of a global
 * tensor (each thread reads its element pairs straight into the layout;
 * elements past the tensor's extents read 0). */
static DType check_frag_load(Sema *S, Node *e)
{
	if (!sema_expect_args(S, e, 1) || !runs_here(S, e, VARY_WARP))
		return DT_ERROR;
	Node *v = e->list;
	if (v->kind == N_CALL && !strcmp(v->name, "transpose"))
		return check_frag_load_transposed(S, e, v);
	Node *base = v->kind == N_INDEX ? v->a : v;
	Symbol *bs = base->kind == N_IDENT ? sema_lookup(S, base->name) : NULL;
	Space sp = bs && bs->ty.space == SP_GLOBAL ? SP_GLOBAL : SP_SHARED;
	if (!sema_view(S, v, sp) || (sp == SP_GLOBAL && !global_frag_window(S, v, bs)))
		return DT_ERROR;
	const Type *t = &v->ty;
	int64_t n = t->rank == 2 ? t->dims[1].value
		    : t->rank == 3 ? t->dims[0].value * t->dims[2].value : 0;
	if (!frag_view_shape(S, v, n) || n < 8 || n > 256 || n % 8 || t->dt == DT_BOOL) {
		diag_error(S->cx, e->loc, E_TILE_MISMATCH, e->name, ctx_printf(S->cx,
			"fragments are [64, N] (or [S, 64, N / S] slabs) with N a multiple of 8 "
			"up to 256, the view is %s",
			shape_str(S, t)));
		return DT_ERROR;
	}
	return frag_f32_result(e, n);
}

static Symbol *role_arg(Sema *S, Node *e, Node *r, int i)
{
	Symbol *s = r->kind == N_IDENT ? sema_lookup(S, r->name) : NULL;
	if (!s || s->kind != SYM_ROLE) {
		diag_error(S->cx, r->loc, E_ARG_TYPE, i, e->name, "a role",
			   r->kind == N_IDENT ? r->name : "an expression");
		return NULL;
	}
	r->sym = s;
	return s;
}

/* signal(a, b) / sync(a, b): a named barrier shared by roles a and b (all
 * their threads take part in each phase): threads of one role signal
 * (bar.arrive, no wait), threads of the other sync (bar.sync, wait). */
static DType check_pair_barrier(Sema *S, Node *e)
{
	Symbol *a = role_arg(S, e, e->list, 1), *b = role_arg(S, e, e->list->next, 2);
	if (!a || !b)
		return DT_ERROR;
	const char *why = NULL;
	if (a == b)
		why = "name two different roles (sync(r) is the barrier of one role)";
	else if (S->role != a->decl && S->role != b->decl)
		why = ctx_printf(S->cx, "call it from role '%s' or '%s'", a->name, b->name);
	int i = 0;
	while (!why && i < S->npairs && !((S->pairs[i][0] == a && S->pairs[i][1] == b) ||
					  (S->pairs[i][0] == b && S->pairs[i][1] == a)))
		i++;
	if (!why && i == S->npairs && S->nroles + S->npairs >= 15)
		why = "a CTA has 16 named barriers; 0 is bar.sync 0 and each role has one";
	if (why) {
		diag_error(S->cx, e->loc, E_NAMED_BARRIER, e->name, a->name, b->name, why);
		return DT_ERROR;
	}
	if (i == S->npairs) {
		S->pairs[i][0] = a;
		S->pairs[i][1] = b;
		S->npairs++;
	}
	if (!collective(S, e))
		return DT_ERROR;
	sema_set_scalar(e, DT_VOID);
	return DT_VOID;
}

/* sync(role): a named barrier over the role's threads. */
static DType check_sync(Sema *S, Node *e)
{
	if (ast_count(e->list) == 2 || e->builtin == B_SIGNAL) {
		if (!sema_expect_args(S, e, 2))
			return DT_ERROR;
		return check_pair_barrier(S, e);
	}
	if (!sema_expect_args(S, e, 1))
		return DT_ERROR;
	Node *r = e->list;
	Symbol *s = r->kind == N_IDENT ? sema_lookup(S, r->name) : NULL;
	if (!s || s->kind != SYM_ROLE) {
		diag_error(S->cx, r->loc, E_ARG_TYPE, 1, e->name, "a role",
			   r->kind == N_IDENT ? r->name : "an expression");
		return DT_ERROR;
	}
	r->sym = s;
	if (S->role != s->decl) {
		diag_error(S->cx, e->loc, E_SYNC_ROLE, s->name, s->name);
		return DT_ERROR;
	}
	if (!collective(S, e))
		return DT_ERROR;
	sema_set_scalar(e, DT_VOID);
	return DT_VOID;
}

/* A kernel that uses the cluster's builtins must be launched in clusters; in a helper the
 * kernel that inlines it is not known here (a launch without clusters is a cluster of one). */
bool sema_cluster_ok(Sema *S, Node *e, const char *what)
{
	if (S->fn && S->fn->kind == SYM_KERNEL && !S->has_cluster) {
		diag_error(S->cx, e->loc, E_CLUSTER_OP, what);
		return false;
	}
	return true;
}

/* cluster_sync(), cluster_arrive(), cluster_wait(): every thread of every CTA of the cluster
 * arrives (release) and waits (acquire), so they are called by a role spanning the whole
 * block or by the kernel's code outside its roles, outside thread-dependent branches */
static DType check_cluster_sync(Sema *S, Node *e)
{
	if (!sema_expect_args(S, e, 0) || !sema_cluster_ok(S, e, e->name))
		return DT_ERROR;
	if (S->fn->kind == SYM_KERNEL && !S->role) {
		if (S->divergent) {
			diag_error(S->cx, e->loc, E_CLUSTER_SYNC_BRANCH, e->name);
			return DT_ERROR;
		}
		sema_set_scalar(e, DT_VOID);
		return DT_VOID;
	}
	if (!collective(S, e))
		return DT_ERROR;
	int threads = 128 * (role_hi(S->role) - role_lo(S->role));
	if (S->fn->kind == SYM_KERNEL && threads != S->block_threads) {
		diag_error(S->cx, e->loc, E_CLUSTER_SYNC_ROLE, e->name, S->role->name, threads,
			   S->block_threads);
		return DT_ERROR;
	}
	sema_set_scalar(e, DT_VOID);
	return DT_VOID;
}

/* cluster_load(T[i, ...], rank): the element of shared array T in the cluster's CTA `rank` */
static DType check_cluster_load(Sema *S, Node *e)
{
	if (!sema_expect_args(S, e, 2) || !sema_cluster_ok(S, e, e->name))
		return DT_ERROR;
	Node *at = e->list, *rank = at->next;
	if (at->kind != N_INDEX) {
		diag_error(S->cx, at->loc, E_CLUSTER_LOAD, "the first argument is not an element");
		return DT_ERROR;
	}
	DType t = sema_expr(S, at);
	if (t == DT_ERROR)
		return DT_ERROR;
	if (at->a->sym->ty.space != SP_SHARED) {
		diag_error(S->cx, at->a->loc, E_CLUSTER_LOAD, "not a shared array");
		return DT_ERROR;
	}
	DType rt = sema_expr(S, rank);
	if (rt == DT_UNTYPED_INT)
		rt = sema_concrete(S, rank);
	if (rt == DT_ERROR || !sema_scalar(S, rank, "a CTA rank"))
		return DT_ERROR;
	if (rt != DT_I32) {
		diag_error(S->cx, rank->loc, E_CLUSTER_LOAD, "the rank is not i32");
		return DT_ERROR;
	}
	e->varying = VARY_LANE;
	sema_set_scalar(e, t);
	return t;
}

static DType no_args(Sema *S, Node *e, DType result)
{
	if (!sema_expect_args(S, e, 0))
		return DT_ERROR;
	sema_set_scalar(e, result);
	return result;
}

/* rowmax(f), rowsum(f): [64, N] -> [64];  rows(f), cols(f): the row and
 * column of each element, an i32 fragment of f's shape. */
static DType check_frag_fn(Sema *S, Node *e, Builtin b)
{
	if (!sema_expect_args(S, e, 1))
		return DT_ERROR;
	Node *f = e->list;
	if (sema_expr(S, f) == DT_ERROR)
		return DT_ERROR;
	if (f->ty.space != SP_FRAG || f->ty.rank != 2) {
		diag_error(S->cx, f->loc, E_ARG_TYPE, 1, e->name, "a fragment [64, N]",
			   type_str(S->cx, &f->ty));
		return DT_ERROR;
	}
	if (!sema_in_role(S, e->loc, e->name))
		return DT_ERROR;
	e->ty = f->ty;
	if (b == B_ROWS || b == B_COLS) {
		e->ty.dt = DT_I32;
		return DT_I32;
	}
	if (f->ty.dt != DT_F32) {
		diag_error(S->cx, f->loc, E_ARG_TYPE, 1, e->name, "an f32 fragment",
			   dtype_name(f->ty.dt));
		return DT_ERROR;
	}
	e->ty.rank = 1;
	return DT_F32;
}

/* The columns of a fragment shape: N of [64, N] and of a column vector [N],
 * 0 for a row vector [64] (it fits any N). */
static int64_t shape_cols(const Type *t)
{
	if (t->rank == 2)
		return t->dims[1].value;
	return t->colvec ? t->dims[0].value : 0;
}

static void set_frag_shape(Type *t, int rank, bool colvec, int64_t n)
{
	t->space = SP_FRAG;
	t->rank = rank;
	t->colvec = colvec;
	t->dims[0] = (Dim){rank == 2 || !colvec ? 64 : n, -1, NULL};
	t->dims[1] = (Dim){n, -1, NULL};
}

/* frag_cols(f, c, n): columns c .. c + n - 1 of a fragment [64, N], a fragment [64, n] (c and
 * n constants, multiples of 8: whole column groups of the accumulator layout);
 * frag_join(a, b): a [64, A] and a [64, B] fragment of one dtype side by side, [64, A + B]. */
static bool frag_arg(Sema *S, Node *e, Node *f, int i)
{
	if (sema_expr(S, f) == DT_ERROR)
		return false;
	if (f->ty.space != SP_FRAG || f->ty.rank != 2) {
		diag_error(S->cx, f->loc, E_ARG_TYPE, i, e->name, "a fragment [64, N]",
			   type_str(S->cx, &f->ty));
		return false;
	}
	return true;
}

static DType check_frag_cols(Sema *S, Node *e)
{
	if (!sema_expect_args(S, e, e->builtin == B_FRAG_COLS ? 3 : 2))
		return DT_ERROR;
	Node *f = e->list, *g = f->next;
	if (!frag_arg(S, e, f, 1) || !sema_in_role(S, e->loc, e->name))
		return DT_ERROR;
	int64_t width = f->ty.dims[1].value, c = 0, n = 0;
	if (e->builtin == B_FRAG_JOIN) {
		if (!frag_arg(S, e, g, 2))
			return DT_ERROR;
		if (g->ty.dt != f->ty.dt) {
			diag_error(S->cx, g->loc, E_ARG_TYPE, 2, e->name, dtype_name(f->ty.dt),
				   dtype_name(g->ty.dt));
			return DT_ERROR;
		}
		n = width + g->ty.dims[1].value;
	} else {
		if (!const_int(S, g, &c) || c < 0 || c % 8 != 0 || c >= width) {
			diag_error(S->cx, g->loc, E_NOT_CONSTANT,
				   "the first column (a multiple of 8 below the fragment's width)");
			return DT_ERROR;
		}
		if (!const_int(S, g->next, &n) || n <= 0 || n % 8 != 0 || c + n > width) {
			diag_error(S->cx, g->next->loc, E_NOT_CONSTANT,
				   "the column count (a multiple of 8 within the fragment)");
			return DT_ERROR;
		}
	}
	e->ival = c;
	e->ty = f->ty;
	set_frag_shape(&e->ty, 2, false, n);
	return f->ty.dt;
}

/* Row and column vectors address a tile's elements, which a tf32 tile keeps in wgmma's k
 * order (E_TF32_ELEMENT). */
static bool vector_view_not_tf32(Sema *S, const Node *v)
{
	if (v->ty.dt != DT_TF32)
		return true;
	diag_error(S->cx, v->loc, E_TF32_ELEMENT, v->sym->name, "a row or column vector");
	return false;
}

/* col_load(view): a [N] window of a shared array or global tensor as a
 * column vector: each thread loads the columns its fragment elements lie in
 * (elements past a global tensor's extent read 0). row_load(view): a [64]
 * window as a row vector, each thread loading its two rows. Each thread's
 * loads are its own (no lane exchanges), so any branch may take them. */
static DType check_col_load(Sema *S, Node *e)
{
	bool row = e->builtin == B_ROW_LOAD;
	if (!sema_expect_args(S, e, 1) || !runs_here(S, e, VARY_LANE))
		return DT_ERROR;
	Node *v = e->list, *base = v->kind == N_INDEX ? v->a : v;
	Symbol *bs = base->kind == N_IDENT ? sema_lookup(S, base->name) : NULL;
	if (!sema_view(S, v, bs && bs->ty.space == SP_GLOBAL ? SP_GLOBAL : SP_SHARED))
		return DT_ERROR;
	if (!vector_view_not_tf32(S, v))
		return DT_ERROR;
	int64_t n = v->ty.rank == 1 ? v->ty.dims[0].value : 0;
	if (row && (v->ty.rank != 1 || n != 64 || v->ty.dt == DT_BOOL)) {
		diag_error(S->cx, e->loc, E_TILE_MISMATCH, e->name, ctx_printf(S->cx,
			"row vectors are [64], the view is %s", shape_str(S, &v->ty)));
		return DT_ERROR;
	}
	if (row) {
		e->ty = type_scalar(DT_F32);
		set_frag_shape(&e->ty, 1, false, 0);
		return DT_F32;
	}
	if (v->ty.rank != 1 || n < 8 || n > 256 || n % 8 || v->ty.dt == DT_BOOL) {
		diag_error(S->cx, e->loc, E_TILE_MISMATCH, e->name, ctx_printf(S->cx,
			"column vectors are [N] with N a multiple of 8 up to 256, the view is %s",
			shape_str(S, &v->ty)));
		return DT_ERROR;
	}
	e->ty = type_scalar(DT_F32);
	set_frag_shape(&e->ty, 1, true, n);
	return DT_F32;
}

/* row_store(view, v) / col_store(view, v): a row vector [64] or a column
 * vector [N] into a 1-D view of as many elements, shared or global. */
static DType check_vec_store(Sema *S, Node *e)
{
	bool row = e->builtin == B_ROW_STORE;
	if (!sema_expect_args(S, e, 2) || !collective(S, e))
		return DT_ERROR;
	Node *v = e->list, *x = e->list->next, *base = v->kind == N_INDEX ? v->a : v;
	Symbol *bs = base->kind == N_IDENT ? sema_lookup(S, base->name) : NULL;
	if (!sema_view(S, v, bs && bs->ty.space == SP_GLOBAL ? SP_GLOBAL : SP_SHARED))
		return DT_ERROR;
	if (!vector_view_not_tf32(S, v))
		return DT_ERROR;
	if (sema_expr(S, x) == DT_ERROR)
		return DT_ERROR;
	bool is_vec = x->ty.space == SP_FRAG && x->ty.rank == 1 && x->ty.colvec == !row;
	int64_t n = v->ty.rank == 1 ? v->ty.dims[0].value : 0;
	int64_t want = is_vec ? x->ty.dims[0].value : 0;
	if (!is_vec || n != want || v->ty.dt == DT_BOOL) {
		diag_error(S->cx, e->loc, E_TILE_MISMATCH, e->name, ctx_printf(S->cx,
			"%s goes into a 1-D view of as many elements, here %s into %s",
			row ? "a row vector [64]" : "a column vector [N]",
			type_str(S->cx, &x->ty), shape_str(S, &v->ty)));
		return DT_ERROR;
	}
	sema_set_scalar(e, DT_VOID);
	return DT_VOID;
}

bool sema_is_frag(const Node *e)
{
	return e->ty.space == SP_FRAG;
}

bool sema_scalar(Sema *S, Node *e, const char *where)
{
	if (e->ty.space != SP_FRAG)
		return true;
	diag_error(S->cx, e->loc, E_FRAG_SCALAR, where);
	return false;
}

static bool elementwise(const Node *e)
{
	if (e->kind == N_BINARY || e->kind == N_UNARY || e->kind == N_CAST)
		return true;
	return e->kind == N_CALL && e->builtin >= B_EXP2 && e->builtin <= B_WHERE;
}

/* Merges the shape of operand `o` into `t`. Fragments [64, N] combine with
 * scalars, with row vectors [64] (broadcast along the rows), with column
 * vectors [N] (broadcast down the columns) and with [64, N]; a row vector
 * with a column vector makes a [64, N] fragment. */
static bool merge_shape(Sema *S, Node *e, Type *t, const Node *o)
{
	if (o->ty.space != SP_FRAG)
		return true;
	if (t->space != SP_FRAG) {
		set_frag_shape(t, o->ty.rank, o->ty.colvec, shape_cols(&o->ty));
		return true;
	}
	int64_t a = shape_cols(t), b = shape_cols(&o->ty);
	if (a && b && a != b) {
		diag_error(S->cx, e->loc, E_FRAG_LAYOUT, type_str(S->cx, t), type_str(S->cx, &o->ty));
		return false;
	}
	bool same_vec = t->rank == 1 && o->ty.rank == 1 && t->colvec == o->ty.colvec;
	if (!same_vec)
		set_frag_shape(t, 2, false, a ? a : b);
	return true;
}

/* The shape of an elementwise expression over fragments (sema_expr calls
 * this after typing the element). */
bool sema_frag_shape(Sema *S, Node *e)
{
	if (!elementwise(e))
		return true;
	Type t = type_scalar(e->ty.dt);
	const Node *kids[] = {e->a, e->b};
	for (int i = 0; i < 2; i++)
		if (kids[i] && !merge_shape(S, e, &t, kids[i]))
			return false;
	for (const Node *a = e->list; a; a = a->next)
		if (!merge_shape(S, e, &t, a))
			return false;
	if (t.space != SP_FRAG)
		return true;
	if (!sema_in_role(S, e->loc, "fragment arithmetic"))
		return false;
	t.dt = e->ty.dt;
	e->ty = t;
	e->is_const = false;
	return true;
}

/* load_acquire(F[i, ...]) and store_release(F[i, ...], v): one element of a
 * global i32 tensor, a flag that one grid sets and another polls; atomic_add(F[i, ...], v):
 * adds v to it and returns the old value (a count that CTAs of a grid share). */
static DType check_flag_access(Sema *S, Node *e, Builtin b)
{
	bool store = b == B_STORE_RELEASE, add = b == B_ATOMIC_ADD;
	const char *name = store ? "store_release" : add ? "atomic_add" : "load_acquire";
	bool value = store || add;
	if (!sema_expect_args(S, e, value ? 2 : 1))
		return DT_ERROR;
	Node *at = e->list;
	if (at->kind != N_INDEX) {
		diag_error(S->cx, at->loc, E_FLAG_ACCESS, name, "the argument is not an element");
		return DT_ERROR;
	}
	DType t = sema_expr(S, at);
	if (t == DT_ERROR)
		return DT_ERROR;
	if (at->a->sym->ty.space != SP_GLOBAL || t != DT_I32) {
		diag_error(S->cx, at->a->loc, E_FLAG_ACCESS, name,
			   at->a->sym->ty.space != SP_GLOBAL ? "not a global tensor" : "not i32");
		return DT_ERROR;
	}
	if (value) {
		Node *v = at->next;
		DType vt = sema_expr(S, v);
		if (vt == DT_UNTYPED_INT)
			vt = sema_concrete(S, v);
		if (vt == DT_ERROR || !sema_scalar(S, v, add ? "an addend" : "a flag value"))
			return DT_ERROR;
		if (vt != DT_I32) {
			diag_error(S->cx, v->loc, E_FLAG_ACCESS, name, "the value is not i32");
			return DT_ERROR;
		}
	}
	e->varying = VARY_LANE;
	sema_set_scalar(e, store ? DT_VOID : DT_I32);
	return store ? DT_VOID : DT_I32;
}

/* nanosleep(ns): an i32 scalar */
static DType check_nanosleep(Sema *S, Node *e)
{
	if (!sema_expect_args(S, e, 1))
		return DT_ERROR;
	DType t = sema_expr(S, e->list);
	if (t == DT_UNTYPED_INT)
		t = sema_concrete(S, e->list);
	if (t == DT_ERROR || !sema_scalar(S, e->list, "a sleep time"))
		return DT_ERROR;
	if (t != DT_I32) {
		diag_error(S->cx, e->list->loc, E_ARG_TYPE, 1, "nanosleep", "'i32'", dtype_name(t));
		return DT_ERROR;
	}
	sema_set_scalar(e, DT_VOID);
	return DT_VOID;
}

bool sema_is_tile_builtin(Builtin b)
{
	return b >= B_TMA_LOAD && b <= B_TRANSPOSE;
}

DType sema_tile_call(Sema *S, Node *e, Builtin b)
{
	e->builtin = b;
	switch (b) {
	case B_TMA_LOAD: case B_TMA_STORE:
		if (b == B_TMA_LOAD && ast_count(e->list) != 3 && ast_count(e->list) != 4) {
			diag_error(S->cx, e->loc, E_ARG_COUNT_CLUSTER, e->name, 3, 4,
				   "a mask of CTA ranks", ast_count(e->list));
			return DT_ERROR;
		}
		if (b == B_TMA_STORE && !sema_expect_args(S, e, 2))
			return DT_ERROR;
		return check_tma_copy(S, e, b == B_TMA_LOAD);
	case B_TMA_STORE_WAIT: case B_TMA_STORE_WAIT_READ: return no_args(S, e, DT_VOID);
	case B_TMA_PREFETCH:
		if (!sema_expect_args(S, e, 1) || !tma_side(S, e->list, e))
			return DT_ERROR;
		sema_set_scalar(e, DT_VOID);
		return DT_VOID;
	case B_FENCE_ASYNC: case B_FENCE_PROXY_GLOBAL: case B_LAUNCH_DEPENDENTS:
	case B_WAIT_PREREQUISITES:
		return no_args(S, e, DT_VOID);
	case B_LOAD_ACQUIRE: case B_STORE_RELEASE: case B_ATOMIC_ADD:
		return check_flag_access(S, e, b);
	case B_NANOSLEEP: return check_nanosleep(S, e);
	case B_ELECT_ONE: e->varying = VARY_LANE; return no_args(S, e, DT_BOOL);
	case B_CLUSTER_SYNC: case B_CLUSTER_ARRIVE: case B_CLUSTER_WAIT:
		return check_cluster_sync(S, e);
	case B_CLUSTER_LOAD: return check_cluster_load(S, e);
	case B_ARRIVE: return check_arrive_or_wait(S, e, false);
	case B_WAIT: return check_arrive_or_wait(S, e, true);
	case B_ARRIVE_EXPECT: return check_arrive_expect(S, e);
	case B_MMA: case B_MMA_ASYNC: return check_mma(S, e);
	case B_MMA_WAIT: return check_mma_wait(S, e);
	case B_FRAG_STORE: return check_frag_store(S, e);
	case B_FRAG_LOAD: return check_frag_load(S, e);
	case B_SYNC: case B_SIGNAL: return check_sync(S, e);
	case B_SYNC_WARP:
		if (!runs_here(S, e, VARY_WARP))
			return DT_ERROR;
		return no_args(S, e, DT_VOID);
	case B_ROWMAX: case B_ROWSUM: case B_ROWS: case B_COLS: return check_frag_fn(S, e, b);
	case B_FRAG_COLS: case B_FRAG_JOIN: return check_frag_cols(S, e);
	case B_COL_LOAD: case B_ROW_LOAD: return check_col_load(S, e);
	case B_COL_STORE: case B_ROW_STORE: return check_vec_store(S, e);
	case B_LOAD:
		/* a 'load' the pipeline desugaring consumed never reaches here */
		diag_error(S->cx, e->loc, E_LOAD_PLACEMENT);
		return DT_ERROR;
	default:
		diag_error(S->cx, e->loc, E_TRANSPOSE_PLACEMENT);
		return DT_ERROR;
	}
}
