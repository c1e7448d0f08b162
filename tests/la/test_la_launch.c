/*
 * test_la_launch.c: the launch plans of the GDN/KDA forward on the fake driver
 * (tests/runtime/fake_cuda.c with `any_image`: the library's real cubins load, their kernels
 * are never run). Each call's kernels, grids and early-start flags are checked against what
 * kernels/src/la.c means to launch, and every launch passes the runtime's argument checks
 * against the kernels' real metadata: a list of arguments out of step with a kernel's
 * parameters fails here, on the CPU, not only on a GPU. Each call's plan (la_plan.h) is checked
 * against what ran, its CTA counts against the grids of the real metadata. The typed launches'
 * arguments are recorded by name (the link wraps tile_kernel_launch_named), so the chained
 * path's are checked too: the parts, the segment slots, the workspace regions of each op.
 */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fake_cuda.h"
#include "la_plan.h"
#include "tile.h"
#include "tile_la.h"
#include "tile_la_kernels.h"

/* Fake device addresses (the fake never touches them): 2^44 apart, so aligned and apart. */
#define ADDR(n) ((void *)((uintptr_t)(n) << 44))

static fake_cuda *fake(int reset)
{
	static void *lib;
	if (!lib)
		lib = dlopen(FAKE_CUDA_PATH, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
	if (!lib)
		fail_msg("cannot open the fake driver %s: %s", FAKE_CUDA_PATH, dlerror());
	void *sym = dlsym(lib, reset ? "fake_cuda_reset" : "fake_cuda_state");
	if (reset) {
		fake_cuda_reset_fn fn;
		memcpy(&fn, &sym, sizeof fn);
		fn();
		sym = dlsym(lib, "fake_cuda_state");
	}
	fake_cuda_state_fn st;
	memcpy(&st, &sym, sizeof st);
	return st();
}

typedef struct fixture {
	tile_rt *rt;
	tile_la *la;
} fixture;

/* The handle of the group's fixture: the workspace queries take it. */
static tile_la *the_la;

/* Sets the handle's options (`o`, the rest TILE_LA_AUTO). */
static void set_options(tile_la_options o)
{
	if (tile_la_set_options(the_la, &o) != TILE_OK)
		fail_msg("tile_la_set_options: %s", tile_la_error(the_la));
}

static void default_options(void)
{
	set_options((tile_la_options){0});
}

/* ---- the typed launches' arguments, by name ---------------------------------------------- */

/* Every typed launch since the counters were cleared (la.c launches each kernel through
 * tile_kernel_launch_named: its arguments by name, the generated headers' string literals). */
enum { NAMED_LOG = 16, NAMED_MAX = 64 };

typedef struct named_launch {
	char kernel[64];
	int nargs;
	const char *name[NAMED_MAX];
	tile_arg arg[NAMED_MAX];
} named_launch;

static named_launch named_log[NAMED_LOG];
static int named_count;

tile_status __real_tile_kernel_launch_named(tile_kernel *k, const tile_named_arg *args,
					    int nargs, void *stream, unsigned flags);
tile_status __wrap_tile_kernel_launch_named(tile_kernel *k, const tile_named_arg *args,
					    int nargs, void *stream, unsigned flags);

tile_status __wrap_tile_kernel_launch_named(tile_kernel *k, const tile_named_arg *args,
					    int nargs, void *stream, unsigned flags)
{
	if (named_count < NAMED_LOG) {
		named_launch *l = &named_log[named_count];
		tile_kernel_info info;
		memset(l, 0, sizeof *l);
		if (k && tile_kernel_get_info(k, &info) == TILE_OK)
			snprintf(l->kernel, sizeof l->kernel, "%s", info.name);
		l->nargs = nargs < NAMED_MAX ? nargs : NAMED_MAX;
		for (int i = 0; i < l->nargs && args; i++)
			l->name[i] = args[i].name, l->arg[i] = args[i].arg;
	}
	named_count++;
	return __real_tile_kernel_launch_named(k, args, nargs, stream, flags);
}

static void clear_launches(void)
{
	fake(0)->launches = 0;
	named_count = 0;
}

/* Launch i's argument `name`, of the kind expected (the runtime has checked it against the
 * metadata already: this is the value la.c gave it). */
static tile_arg arg_of(int i, const char *kernel, const char *name, tile_arg_kind kind)
{
	if (i >= named_count || i >= NAMED_LOG)
		fail_msg("no typed launch %d (%d recorded)", i, named_count);
	const named_launch *l = &named_log[i];
	if (strcmp(l->kernel, kernel) != 0)
		fail_msg("launch %d is %s, expected %s", i, l->kernel, kernel);
	for (int j = 0; j < l->nargs; j++)
		if (l->name[j] && strcmp(l->name[j], name) == 0) {
			if (l->arg[j].kind != kind)
				fail_msg("launch %d (%s): %s of kind %d", i, kernel, name,
					 (int)l->arg[j].kind);
			return l->arg[j];
		}
	fail_msg("launch %d (%s) has no argument %s", i, kernel, name);
	return tile_arg_i32(0);
}

static void expect_i32(int i, const char *kernel, const char *name, int32_t want)
{
	int32_t got = arg_of(i, kernel, name, TILE_ARG_I32).u.i32;
	if (got != want)
		fail_msg("launch %d (%s): %s = %d, expected %d", i, kernel, name, got, want);
}

static void expect_ptr(int i, const char *kernel, const char *name, uint64_t want)
{
	uint64_t got = arg_of(i, kernel, name, TILE_ARG_PTR).u.ptr;
	if (got != want)
		fail_msg("launch %d (%s): %s = %#llx, expected %#llx", i, kernel, name,
			 (unsigned long long)got, (unsigned long long)want);
}

static uint64_t ptr_of(int i, const char *kernel, const char *name)
{
	return arg_of(i, kernel, name, TILE_ARG_PTR).u.ptr;
}

static int setup(void **state)
{
	fake_cuda *f = fake(1);
	f->any_image = 1;
	tile_rt_options opt;
	memset(&opt, 0, sizeof opt);
	opt.driver_path = FAKE_CUDA_PATH;
	fixture *x = calloc(1, sizeof *x);
	if (!x || tile_rt_create_ex(&opt, &x->rt) != TILE_OK ||
	    tile_la_create_with(x->rt, &x->la) != TILE_OK) {
		free(x);
		return -1;
	}
	the_la = x->la;
	*state = x;
	return 0;
}

static int teardown(void **state)
{
	fixture *x = *state;
	tile_la_destroy(x->la);
	tile_rt_destroy(x->rt);
	free(x);
	return 0;
}

/* the benchmark's KDA call: K = V = 128, bf16, l2norm in kernel, h0 given, ht requested */
static tile_la_fwd_args kda_args(int batch, int seq_len, int heads)
{
	tile_la_fwd_args a;
	memset(&a, 0, sizeof a);
	a.batch = batch;
	a.seq_len = seq_len;
	a.num_heads = heads;
	a.num_v_heads = heads;
	a.head_dim = 128;
	a.dtype = TILE_LA_BF16;
	a.q = ADDR(1);
	a.k = ADDR(2);
	a.v = ADDR(3);
	a.g = ADDR(4);
	a.beta = ADDR(5);
	a.o = ADDR(6);
	a.initial_state = ADDR(8);
	a.final_state = ADDR(9);
	a.use_qk_l2norm_in_kernel = 1;
	a.workspace = ADDR(16);
	size_t ws = 0;
	assert_int_equal(tile_la_kda_fwd_workspace(the_la, &a, &ws), TILE_OK);
	a.workspace_size = ws;
	return a;
}

/* the lower-bound gate in kernel (the benchmark's KDA 8/8 row) */
static void lower_bound_gate(tile_la_fwd_args *a)
{
	a->use_gate_in_kernel = 1;
	a->use_lower_bound = 1;
	a->lower_bound = -5.0f;
	a->A_log = ADDR(10);
	a->dt_bias = ADDR(11);
	size_t ws = 0;
	assert_int_equal(tile_la_kda_fwd_workspace(the_la, a, &ws), TILE_OK);
	a->workspace_size = ws;
}

/* The launches since the fake's counters were cleared: kernel, grid x, early start; and
 * chunk_recur_t's in clusters of 2 (a head's two value slices on one TPC at D = 128), every
 * other kernel's without a cluster. */
typedef struct want {
	const char *kernel;
	unsigned int grid;
	int early_start;
} want;

static void expect_launches(const want *w, int n)
{
	fake_cuda *f = fake(0);
	if (getenv("TEST_LA_LAUNCH_PRINT"))
		for (int i = 0; i < f->launches && i < FAKE_LOG; i++)
			print_message("launch %d: %s grid %u early %d\n", i, f->log[i].kernel,
				      f->log[i].grid[0], f->log[i].early_start);
	if (f->launches != n)
		fail_msg("%d launches, expected %d (the first: %s)", f->launches, n,
			 f->launches ? f->log[0].kernel : "none");
	for (int i = 0; i < n; i++) {
		if (strcmp(f->log[i].kernel, w[i].kernel) != 0 || f->log[i].grid[0] != w[i].grid ||
		    f->log[i].early_start != w[i].early_start)
			fail_msg("launch %d: %s grid %u early %d, expected %s grid %u early %d", i,
				 f->log[i].kernel, f->log[i].grid[0], f->log[i].early_start,
				 w[i].kernel, w[i].grid, w[i].early_start);
		unsigned int cluster = strcmp(w[i].kernel, "chunk_recur_t") == 0 ? 2 : 1;
		if (f->log[i].cluster != cluster)
			fail_msg("launch %d: %s in clusters of %u, expected %u", i, w[i].kernel,
				 f->log[i].cluster, cluster);
	}
}

/* The workspace's address */
static uint64_t ws_of(const tile_la_fwd_args *a)
{
	return (uint64_t)(uintptr_t)a->workspace;
}

/* Launch i's arguments that the plan's launch fixes: its mode (chunk_recur), part
 * (chunk_recur_t, gdn_fused) or chained flag (chunk_map_t), segment length, NX, NZ, chunk
 * range, and the transfer slots of the workspace it indexes (XS, XR: the layout's, 1 without
 * any). */
static void expect_args_follow_plan(int i, const la_plan *p, const tile_la_fwd_args *a)
{
	const la_launch *l = &p->launch[i];
	const char *k = la_kernel_name(l->kernel);
	int32_t kxs = p->kl.xs > 0 ? (int32_t)p->kl.xs : 1;
	int32_t gxs = p->gl.xs > 0 ? (int32_t)p->gl.xs : 1;
	int32_t D = a->head_dim;
	switch (l->kernel) {
	case LA_K_PREP:
	case LA_K_PREP_NOCB:
	case LA_K_PREP_BWD:   /* (the forward keeping A and AQK: saved_setup) */
	case LA_K_PREP_QGL:   /* (the forward keeping QG's lo term: la_kda_keeps_qgl) */
		expect_i32(i, k, "GC", D);   /* KDA's gate per channel */
		expect_i32(i, k, "c0", l->c0);
		expect_i32(i, k, "nc", l->nc);
		expect_i32(i, k, "NG", l->nx);
		return;
	case LA_K_KKT:
	case LA_K_KKT2: return;
	case LA_K_RECUR:
		expect_i32(i, k, "mode", l->mode);
		expect_i32(i, k, "NZ", l->nz);
		expect_i32(i, k, "XS", kxs);
		expect_i32(i, k, "XR", kxs * D);
		break;
	case LA_K_RECUR_T:
		expect_i32(i, k, "part", l->mode);
		expect_i32(i, k, "XS", p->kl.xbs > 0 ? (int32_t)p->kl.xbs : 1);
		break;
	case LA_K_RECUR_W: /* whole sequences only: no segment length */
		assert_int_equal(l->seg_len, 0);
		expect_i32(i, k, "NX", l->nx);
		return;
	case LA_K_MAP_T:
		expect_i32(i, k, "chained", l->mode);
		expect_i32(i, k, "XS", kxs);
		expect_i32(i, k, "XR", kxs * D);
		expect_i32(i, k, "with_back", 0);   /* the forward's: no P_j^T */
		break;
	case LA_K_CHAIN_T:
		expect_i32(i, k, "with_back", 0);
		expect_i32(i, k, "XS", p->kda ? kxs : gxs);
		expect_i32(i, k, "XR", (p->kda ? kxs : gxs) * D);
		expect_ptr(i, k, "XB", ws_of(a) + (p->kda ? p->kl.xb : p->gl.xb));
		break;
	case LA_K_FUSED:
		expect_i32(i, k, "part", l->mode);
		expect_i32(i, k, "XS", gxs);
		break;
	case LA_K_MAP_G:
		expect_i32(i, k, "XS", gxs);
		expect_i32(i, k, "XR", gxs * D);
		expect_ptr(i, k, "XB", ws_of(a) + p->gl.xb);
		break;
	case LA_K_BWD_RECUR:
	case LA_K_BWD_CHUNK:
	case LA_K_BWD_FINISH:
	case LA_K_BWD_INTRA:
	case LA_K_BWD_WY:
	case LA_K_GDN_BWD_CHUNK:
	case LA_K_GDN_WALKS:
	case LA_K_GDN_WALKS_W:
	case LA_K_KKT_LO:
	case LA_K_GDN_BWD_CHUNK_DQK:
	case LA_K_PREP_FROMA:
	case LA_K_PREP_BWD_QGL:
	case LA_K_BWD_RECUR_W:
	case LA_NKERNELS: fail_msg("launch %d: no forward kernel", i);
	}
	expect_i32(i, k, "seg_len", l->seg_len);
	if (l->kernel != LA_K_RECUR)   /* chunk_recur's segments are equal */
		expect_i32(i, k, "first_len", l->first_len);
	expect_i32(i, k, "NX", l->nx);
}

/* The plan the handle makes of a call, on the fake's 132 SMs and with its options. */
static la_plan plan_of(const tile_la_fwd_args *a, int kda)
{
	la_device dev = {132, 232448};
	tile_la_options opt;
	la_plan p;
	assert_int_equal(tile_la_get_options(the_la, &opt), TILE_OK);
	assert_int_equal(la_plan_make(a, kda, &dev, &opt, &p), TILE_OK);
	return p;
}

/* The call's plan (la_plan_make, on the fake's 132 SMs and the handle's options) is what ran:
 * its kernels in order, its early starts, and its CTA counts equal to the grids the kernels'
 * real metadata gave (gdn_kkt's: slots x H, a 2-D grid). Returns the plan (its workspace
 * layout for the arguments' checks). */
static la_plan expect_plan_ran(const tile_la_fwd_args *a, int kda)
{
	fake_cuda *f = fake(0);
	la_plan p = plan_of(a, kda);
	assert_int_equal(f->launches, p.nlaunches);
	assert_int_equal(named_count, p.nlaunches);
	for (int i = 0; i < p.nlaunches && i < FAKE_LOG; i++) {
		const la_launch *l = &p.launch[i];
		uint64_t grid = (uint64_t)f->log[i].grid[0] * f->log[i].grid[1] * f->log[i].grid[2];
		if (strcmp(f->log[i].kernel, la_kernel_name(l->kernel)) != 0 ||
		    grid != (uint64_t)l->ctas || f->log[i].early_start != l->early_start)
			fail_msg("launch %d: %s grid %llu early %d; the plan: %s %lld CTAs early %d", i,
				 f->log[i].kernel, (unsigned long long)grid, f->log[i].early_start,
				 la_kernel_name(l->kernel), (long long)l->ctas, l->early_start);
		expect_args_follow_plan(i, &p, a);
	}
	return p;
}

static la_plan run_kda(fixture *x, const tile_la_fwd_args *a)
{
	clear_launches();
	tile_status st = tile_la_kda_fwd(x->la, a);
	if (st != TILE_OK)
		fail_msg("tile_la_kda_fwd: %s: %s", tile_status_str(st), tile_la_error(x->la));
	return expect_plan_ran(a, 1);
}

/* GDN's call with its workspace query on the handle (its options) */
static la_plan run_gdn(fixture *x, tile_la_fwd_args *a)
{
	size_t ws = 0;
	assert_int_equal(tile_la_gdn_fwd_workspace(the_la, a, &ws), TILE_OK);
	a->workspace_size = ws;
	clear_launches();
	tile_status st = tile_la_gdn_fwd(x->la, a);
	if (st != TILE_OK)
		fail_msg("tile_la_gdn_fwd: %s: %s", tile_status_str(st), tile_la_error(x->la));
	la_plan p = expect_plan_ran(a, 0);
	assert_int_equal(p.workspace, ws);
	return p;
}

/* that [off, off + bytes) lies inside the workspace */
static void expect_inside(const tile_la_fwd_args *a, size_t off, size_t bytes)
{
	if (off + bytes > a->workspace_size)
		fail_msg("region [%zu, %zu) past the workspace's %zu bytes", off, off + bytes,
			 a->workspace_size);
}

/* chunk_chain_t (launch i) over `xs` transfer slots in the regions at xb, xph and xpl: the
 * maps' P_j (hi, lo) and B_j, chained into S_k in place */
static void expect_chain_args(int i, const tile_la_fwd_args *a, size_t xb, size_t xph, size_t xpl,
			      int32_t xs, int32_t seg_len, int32_t nx)
{
	uint64_t ws = ws_of(a);
	expect_ptr(i, "chunk_chain_t", "XPH", ws + xph);
	expect_ptr(i, "chunk_chain_t", "XPL", ws + xpl);
	expect_ptr(i, "chunk_chain_t", "XBT", ws + xb);
	expect_ptr(i, "chunk_chain_t", "XB", ws + xb);
	expect_i32(i, "chunk_chain_t", "XS", xs);
	expect_i32(i, "chunk_chain_t", "XR", xs * a->head_dim);
	expect_i32(i, "chunk_chain_t", "HV", a->num_v_heads);
	expect_i32(i, "chunk_chain_t", "seg_len", seg_len);
	expect_i32(i, "chunk_chain_t", "NX", nx);
	size_t map = (size_t)xs * a->num_v_heads * a->head_dim * a->head_dim;
	expect_inside(a, xb, map * 4);
	expect_inside(a, xph, map * 2);
	expect_inside(a, xpl, map * 2);
}

/* KDA 8/8 1x8192, lower-bound gate: segments of 15 chunks (10 segment slots), every segment
 * after the first chained from the maps: chunk_recur_t over the first segments (a CTA per
 * sequence, head and value slice), chunk_map_t beside it with early start (4 per slot and
 * head: B_j's two slices, P_j's two), chunk_chain_t (the starts, chained once per sequence,
 * head and slice), chunk_recur_t over the later segments; every launch after chunk_prep with
 * early start (each waits for the one before it) */
static void test_kda_lower_bound_maps(void **state)
{
	fixture *x = *state;
	tile_la_fwd_args a = kda_args(1, 8192, 8);
	lower_bound_gate(&a);
	la_plan p = run_kda(x, &a);
	const want w[] = {{"chunk_prep", 129 * 8, 0}, {"chunk_recur_t", 1 * 8 * 2, 1},
			  {"chunk_map_t", 10 * 8 * 4, 1}, {"chunk_chain_t", 10 * 8 * 2, 1},
			  {"chunk_recur_t", 10 * 8 * 2, 1}};
	expect_launches(w, 5);
	/* the arguments: parts 1 and 2, the maps chained, the chain over KDA's regions, 10
	 * transfer slots */
	const la_kda_layout *k = &p.kl;
	uint64_t ws = ws_of(&a);
	assert_int_equal(k->xs, 10);
	expect_i32(1, "chunk_recur_t", "part", 1);
	expect_i32(1, "chunk_recur_t", "seg_len", 15);
	expect_i32(1, "chunk_recur_t", "NX", 1);
	expect_ptr(1, "chunk_recur_t", "XB", ws + k->xb);
	expect_i32(1, "chunk_recur_t", "XS", (int32_t)k->xbs);
	expect_i32(2, "chunk_map_t", "chained", 1);
	expect_i32(2, "chunk_map_t", "NX", 10);
	expect_i32(2, "chunk_map_t", "XS", 10);
	expect_i32(2, "chunk_map_t", "XR", 10 * 128);
	expect_ptr(2, "chunk_map_t", "XB", ws + k->xb);
	expect_ptr(2, "chunk_map_t", "XPH", ws + k->xph);
	expect_ptr(2, "chunk_map_t", "XPL", ws + k->xpl);
	expect_chain_args(3, &a, k->xb, k->xph, k->xpl, 10, 15, 10);
	expect_i32(4, "chunk_recur_t", "part", 2);
	expect_i32(4, "chunk_recur_t", "NX", 10);
	expect_ptr(4, "chunk_recur_t", "XB", ws + k->xb);
	/* kda_map_kernel concerns chunk_recur's warmups only: the same launches */
	set_options((tile_la_options){.kda_map_kernel = TILE_LA_OFF});
	run_kda(x, &a);
	expect_launches(w, 5);
	/* kda_transposed OFF: chunk_recur's warmups (la_segment_len: 8 segments of 16, 9
	 * slots), mode 1, chunk_map_t beside it (the lower-bound gate), mode 3 after it with
	 * early start; 9 transfer slots */
	set_options((tile_la_options){.kda_transposed = TILE_LA_OFF});
	p = run_kda(x, &a);
	const want wt[] = {{"chunk_prep", 129 * 8, 0}, {"chunk_recur", 9 * 8 * 2, 1},
			   {"chunk_map_t", 9 * 8 * 4, 1}, {"chunk_recur", 9 * 8 * 2, 1}};
	expect_launches(wt, 4);
	expect_i32(1, "chunk_recur", "mode", 1);
	expect_i32(1, "chunk_recur", "XS", 9);
	expect_i32(2, "chunk_map_t", "chained", 0);
	expect_i32(3, "chunk_recur", "mode", 3);
	expect_i32(3, "chunk_recur", "NZ", 2);
	/* ... and kda_map_kernel OFF: chunk_recur's own map CTAs, in mode 1's grid (3 slices per
	 * slice), then mode 3 without early start */
	set_options((tile_la_options){.kda_transposed = TILE_LA_OFF,
				      .kda_map_kernel = TILE_LA_OFF});
	run_kda(x, &a);
	default_options();
	const want w0[] = {{"chunk_prep", 129 * 8, 0}, {"chunk_recur", 9 * 8 * 6, 1},
			   {"chunk_recur", 9 * 8 * 2, 0}};
	expect_launches(w0, 3);
	expect_i32(1, "chunk_recur", "NZ", 6);
	expect_i32(2, "chunk_recur", "mode", 3);
}

/* KDA 8/8 1x8192 with the log-space and the softplus gates: the chained path as with the
 * lower-bound gate (nothing depends on how fast the gates decay), chunk_prep without CB */
static void test_kda_chained_any_gate(void **state)
{
	fixture *x = *state;
	const want w[] = {{"chunk_prep", 129 * 8, 0}, {"chunk_recur_t", 1 * 8 * 2, 1},
			  {"chunk_map_t", 10 * 8 * 4, 1}, {"chunk_chain_t", 10 * 8 * 2, 1},
			  {"chunk_recur_t", 10 * 8 * 2, 1}};
	for (int gate = 0; gate < 2; gate++) {
		tile_la_fwd_args a = kda_args(1, 8192, 8);
		if (gate) {
			a.use_gate_in_kernel = 1, a.A_log = ADDR(10), a.dt_bias = ADDR(11);
		}
		la_plan p = run_kda(x, &a);
		expect_launches(w, 5);
		assert_int_equal(p.prep, LA_K_PREP_NOCB);
		expect_i32(0, "chunk_prep", "gate_mode", gate);
		expect_i32(2, "chunk_map_t", "chained", 1);
		expect_chain_args(3, &a, p.kl.xb, p.kl.xph, p.kl.xpl, 10, 15, 10);
		/* without the in-kernel l2norm too: nothing is bounded */
		a.use_qk_l2norm_in_kernel = 0;
		run_kda(x, &a);
		expect_launches(w, 5);
	}
}

/* KDA 8/8 8192x4, lower-bound gate: 64 CTAs on whole sequences (segments would triple the
 * work on more than a third of the SMs), which leave half of the SMs idle: the split in time
 * (la_split_len: 107 of 128 chunks first). chunk_prep over chunks 0 .. 106 of each sequence,
 * chunk_recur_t's part 1 over them, chunk_prep over chunks 107 .. 127 beside it, chunk_recur_t's
 * part 3 over the second segments (9 segment slots: cdiv(32768, 64 x 107) + 4), every launch
 * after the first with early start. The same packed with cu_seqlens and its host copy (the benchmark's
 * passes the batch so); without the host copy the lengths are unknown: whole sequences, as with
 * kda_split OFF. */
static void test_kda_lower_bound_whole(void **state)
{
	fixture *x = *state;
	tile_la_fwd_args a = kda_args(4, 8192, 8);
	lower_bound_gate(&a);
	la_plan p = run_kda(x, &a);
	const want w[] = {{"chunk_prep", 4 * 107 * 8, 0}, {"chunk_recur_t", 4 * 8 * 2, 1},
			  {"chunk_prep", 4 * 21 * 8, 1}, {"chunk_recur_t", 9 * 8 * 2, 1}};
	expect_launches(w, 4);
	expect_i32(1, "chunk_recur_t", "part", 1);
	expect_i32(3, "chunk_recur_t", "part", 3);
	expect_i32(3, "chunk_recur_t", "XS", 12); /* the split's 3 x 4 starts, no transfer slots */
	assert_int_equal(p.kl.xs, 0);
	set_options((tile_la_options){.kda_split = 96});
	run_kda(x, &a);
	const want w96[] = {{"chunk_prep", 4 * 96 * 8, 0}, {"chunk_recur_t", 4 * 8 * 2, 1},
			    {"chunk_prep", 4 * 32 * 8, 1}, {"chunk_recur_t", (6 + 4) * 8 * 2, 1}};
	expect_launches(w96, 4);
	set_options((tile_la_options){.kda_split = TILE_LA_OFF});
	run_kda(x, &a);
	default_options();
	const want w0[] = {{"chunk_prep", (512 + 4) * 8, 0}, {"chunk_recur_t", 4 * 8 * 2, 1}};
	expect_launches(w0, 2);

	static const int32_t cu[5] = {0, 8192, 16384, 24576, 32768};
	tile_la_fwd_args q = kda_args(1, 32768, 8);
	q.cu_seqlens = (const int32_t *)ADDR(12);
	q.cu_seqlens_host = cu;
	q.num_seqs = 4;
	lower_bound_gate(&q);
	run_kda(x, &q);
	expect_launches(w, 4);
	/* a host copy whose equal lengths do not fit the tokens is not believed */
	static const int32_t too_long[5] = {0, 16384, 32768, 49152, 65536};
	q.cu_seqlens_host = too_long;
	run_kda(x, &q);
	expect_launches(w0, 2);
	q.cu_seqlens_host = NULL;
	size_t ws = 0;
	assert_int_equal(tile_la_kda_fwd_workspace(the_la, &q, &ws), TILE_OK);
	q.workspace_size = ws;
	run_kda(x, &q);
	expect_launches(w0, 2);
}

/* KDA 16/32 8192x4, the fast regime's gates: chunk_recur_t's 256 CTAs (two waves); with
 * kda_wide ON both value slices of a head in one CTA (chunk_recur_w, 128 CTAs) */
static void test_kda_wide(void **state)
{
	fixture *x = *state;
	tile_la_fwd_args a = kda_args(4, 8192, 32);
	a.num_heads = 16;
	run_kda(x, &a);
	const want t[] = {{"chunk_prep", (512 + 4) * 32, 0}, {"chunk_recur_t", 4 * 32 * 2, 1}};
	expect_launches(t, 2);
	set_options((tile_la_options){.kda_wide = TILE_LA_ON});
	run_kda(x, &a);
	const want w[] = {{"chunk_prep", (512 + 4) * 32, 0}, {"chunk_recur_w", 4 * 32, 1}};
	expect_launches(w, 2);
	default_options();
}

/* chunk states requested, the fast regime's gates, 2 x 1000 tokens at 4 heads: chunk_recur's
 * warmups (chunk_recur_t writes no chunk states) over 10 segment slots, the transfer maps as
 * chunk_recur's own CTAs in mode 1's grid (failed warmups are not expected: no launch of
 * chunk_map_t), then mode 3; the maps' 10 transfer slots; kda_map_kernel ON forces chunk_map_t */
static void test_kda_chunk_states(void **state)
{
	fixture *x = *state;
	tile_la_fwd_args a = kda_args(2, 1000, 4);
	a.chunk_states = ADDR(12);
	a.num_chunk_states = 2 * 16;
	size_t ws = 0;
	assert_int_equal(tile_la_kda_fwd_workspace(the_la, &a, &ws), TILE_OK);
	a.workspace_size = ws;
	la_plan p = run_kda(x, &a);
	const want w[] = {{"chunk_prep", (32 + 2) * 4, 0}, {"chunk_recur", 10 * 4 * 6, 1},
			  {"chunk_recur", 10 * 4 * 2, 0}};
	expect_launches(w, 3);
	uint64_t wsa = ws_of(&a);
	for (int i = 1; i < 3; i++) {
		expect_i32(i, "chunk_recur", "mode", i == 1 ? 1 : 3);
		expect_i32(i, "chunk_recur", "seg_len", 4);
		expect_i32(i, "chunk_recur", "NX", 10);
		expect_i32(i, "chunk_recur", "XS", 10);
		expect_i32(i, "chunk_recur", "XR", 10 * 128);
		expect_ptr(i, "chunk_recur", "XB", wsa + p.kl.xb);
		expect_ptr(i, "chunk_recur", "XPH", wsa + p.kl.xph);
		expect_ptr(i, "chunk_recur", "XPL", wsa + p.kl.xpl);
		expect_ptr(i, "chunk_recur", "HS", (uint64_t)(uintptr_t)ADDR(12));
	}
	expect_inside(&a, p.kl.xpl, (size_t)10 * 4 * 128 * 128 * 2);
	set_options((tile_la_options){.kda_map_kernel = TILE_LA_ON});
	run_kda(x, &a);
	default_options();
	const want w1[] = {{"chunk_prep", (32 + 2) * 4, 0}, {"chunk_recur", 10 * 4 * 2, 1},
			   {"chunk_map_t", 10 * 4 * 4, 1}, {"chunk_recur", 10 * 4 * 2, 1}};
	expect_launches(w1, 4);
	expect_i32(2, "chunk_map_t", "chained", 0);
	/* without the in-kernel l2norm no segments (the bound needs |k| <= 1): mode 0 */
	a.use_qk_l2norm_in_kernel = 0;
	run_kda(x, &a);
	const want w0[] = {{"chunk_prep", (32 + 2) * 4, 0}, {"chunk_recur", 2 * 4 * 2, 1}};
	expect_launches(w0, 2);
	expect_i32(1, "chunk_recur", "mode", 0);
}

/* KDA 8/8 1024+7168 (the benchmark's varlen cell), lower-bound gate, the lengths known on the
 * host (FLA's cu_seqlens_cpu): the chained rule's 1/8 of the batch's chunks, 10 segment
 * slots; the same plan as 1x8192 otherwise */
static void test_kda_lower_bound_varlen(void **state)
{
	fixture *x = *state;
	static const int32_t cu[3] = {0, 1024, 8192};
	tile_la_fwd_args a = kda_args(1, 8192, 8);
	a.cu_seqlens = (const int32_t *)ADDR(12);
	a.cu_seqlens_host = cu;
	a.num_seqs = 2;
	lower_bound_gate(&a);
	la_plan p = run_kda(x, &a);
	const want w[] = {{"chunk_prep", 130 * 8, 0}, {"chunk_recur_t", 2 * 8 * 2, 1},
			  {"chunk_map_t", 10 * 8 * 4, 1}, {"chunk_chain_t", 10 * 8 * 2, 1},
			  {"chunk_recur_t", 10 * 8 * 2, 1}};
	expect_launches(w, 5);
	expect_chain_args(3, &a, p.kl.xb, p.kl.xph, p.kl.xpl, 10, 16, 10);
	expect_i32(3, "chunk_chain_t", "has_cu", 1);
	expect_i32(3, "chunk_chain_t", "nseq", 2);
	expect_i32(3, "chunk_chain_t", "NCU", 3);
	expect_ptr(3, "chunk_chain_t", "Cu", (uint64_t)(uintptr_t)ADDR(12));
}

/* T = 0 with h0 and ht: no chunk_prep, so the recurrence (which copies h0 to ht) follows the
 * caller's last kernel, and takes no early start */
static void test_kda_no_tokens(void **state)
{
	fixture *x = *state;
	tile_la_fwd_args a = kda_args(1, 0, 8);
	run_kda(x, &a);
	const want w[] = {{"chunk_recur", 1 * 8 * 2, 0}};
	expect_launches(w, 1);
}

/* GDN 8/8 1x8192 (scalar gates): gdn_kkt (grid x the chunk slots), then the chained path over
 * segments of 15 chunks: gdn_fused's part 1 over the sequence (its first segment from h0, S_1
 * to XB), gdn_map_t beside it over the 10 segment slots (4 CTAs per slot and head: B_j's two
 * value slices, P_j's two), chunk_chain_t over GDN's regions, gdn_fused's part 2 over the
 * segment slots from their starts; every launch after gdn_kkt with early start */
static void test_gdn_chained(void **state)
{
	fixture *x = *state;
	tile_la_fwd_args a = kda_args(1, 8192, 8);
	la_plan p = run_gdn(x, &a);
	const want w[] = {{"gdn_kkt", 129, 0}, {"gdn_fused", 1 * 8 * 2, 1},
			  {"gdn_map_t", 10 * 8 * 4, 1}, {"chunk_chain_t", 10 * 8 * 2, 1},
			  {"gdn_fused", 10 * 8 * 2, 1}};
	expect_launches(w, 5);
	const la_gdn_layout *g = &p.gl;
	uint64_t ws = ws_of(&a);
	assert_int_equal(g->xs, 10);
	/* gdn_kkt's outputs, which gdn_map_t reads, and AQK for the one-term gdn_fused (both
	 * parts) */
	expect_ptr(0, "gdn_kkt", "A", ws + g->a);
	expect_ptr(0, "gdn_kkt", "AQ", ws + g->aqk);
	expect_ptr(0, "gdn_kkt", "AQt", ws + g->aqk);
	expect_i32(0, "gdn_kkt", "aqk_out", 1);
	expect_ptr(1, "gdn_fused", "AQg", ws + g->aqk);
	expect_ptr(4, "gdn_fused", "AQg", ws + g->aqk);
	size_t a_bytes = (size_t)8192 * 8 * 64 * 2;   /* A's and AQK's [TT, HV, 64] bf16 */
	assert_true(g->aqk >= g->a + a_bytes && g->rq >= g->aqk + a_bytes);
	expect_ptr(0, "gdn_kkt", "GamO", ws + g->gam);
	expect_ptr(0, "gdn_kkt", "BetO", ws + g->bet);
	expect_ptr(0, "gdn_kkt", "RK", ws + g->rk);
	/* part 1: the sequences, S_1 into XB */
	expect_i32(1, "gdn_fused", "part", 1);
	expect_i32(1, "gdn_fused", "seg_len", 15);
	expect_i32(1, "gdn_fused", "NX", 1);
	expect_ptr(1, "gdn_fused", "XB", ws + g->xb);
	expect_i32(1, "gdn_fused", "XS", 10);
	/* the maps, every argument */
	expect_ptr(2, "gdn_map_t", "Kt", (uint64_t)(uintptr_t)ADDR(2));
	expect_ptr(2, "gdn_map_t", "Vt", (uint64_t)(uintptr_t)ADDR(3));
	expect_ptr(2, "gdn_map_t", "Ag", ws + g->a);
	expect_ptr(2, "gdn_map_t", "Gm", ws + g->gam);
	expect_ptr(2, "gdn_map_t", "Bt", ws + g->bet);
	expect_ptr(2, "gdn_map_t", "RK", ws + g->rk);
	expect_ptr(2, "gdn_map_t", "XB", ws + g->xb);
	expect_ptr(2, "gdn_map_t", "XPH", ws + g->xph);
	expect_ptr(2, "gdn_map_t", "XPL", ws + g->xpl);
	expect_ptr(2, "gdn_map_t", "Cu", ws); /* unread without cu_seqlens */
	expect_i32(2, "gdn_map_t", "TT", 8192);
	expect_i32(2, "gdn_map_t", "TP", 129 * 64);
	expect_i32(2, "gdn_map_t", "H", 8);
	expect_i32(2, "gdn_map_t", "HV", 8);
	expect_i32(2, "gdn_map_t", "XS", 10);
	expect_i32(2, "gdn_map_t", "XR", 10 * 128);
	expect_i32(2, "gdn_map_t", "NCU", 1);
	expect_i32(2, "gdn_map_t", "nseq", 1);
	expect_i32(2, "gdn_map_t", "seqlen", 8192);
	expect_i32(2, "gdn_map_t", "has_cu", 0);
	expect_i32(2, "gdn_map_t", "seg_len", 15);
	expect_i32(2, "gdn_map_t", "NX", 10);
	/* the chain over GDN's regions (not KDA's: the plan has none) */
	expect_chain_args(3, &a, g->xb, g->xph, g->xpl, 10, 15, 10);
	expect_i32(3, "chunk_chain_t", "TT", 8192);
	expect_i32(3, "chunk_chain_t", "nseq", 1);
	expect_i32(3, "chunk_chain_t", "seqlen", 8192);
	/* part 2: the segment slots from XB */
	expect_i32(4, "gdn_fused", "part", 2);
	expect_i32(4, "gdn_fused", "seg_len", 15);
	expect_i32(4, "gdn_fused", "NX", 10);
	expect_ptr(4, "gdn_fused", "XB", ws + g->xb);
	expect_i32(4, "gdn_fused", "XS", 10);
	/* the regions in order inside the workspace: A, norms, Gamma, beta, then the maps */
	assert_true(g->a < g->rq && g->rq < g->rk && g->rk < g->gam && g->gam < g->bet &&
		    g->bet < g->xb && g->xb < g->xph && g->xph < g->xpl);
	expect_inside(&a, g->xb, (size_t)10 * 8 * 128 * 128 * 4);

	/* whole sequences (gdn_segments OFF): part 0, no transfer slots: XB is the handle's
	 * dummy (outside the workspace) and XS 1 */
	set_options((tile_la_options){.gdn_segments = TILE_LA_OFF});
	p = run_gdn(x, &a);
	default_options();
	const want w0[] = {{"gdn_kkt", 129, 0}, {"gdn_fused", 1 * 8 * 2, 1}};
	expect_launches(w0, 2);
	assert_int_equal(p.gl.xs, 0);
	expect_i32(1, "gdn_fused", "part", 0);
	expect_i32(1, "gdn_fused", "seg_len", 1);
	expect_i32(1, "gdn_fused", "XS", 1);
	uint64_t xb = ptr_of(1, "gdn_fused", "XB");
	assert_true(xb < ws || xb >= ws + a.workspace_size);

	/* chunk states and the softplus gate: the same launches; part 2 writes the chunk states
	 * of its segments */
	a.chunk_states = ADDR(13);
	a.num_chunk_states = 128;
	a.use_gate_in_kernel = 1, a.A_log = ADDR(10), a.dt_bias = ADDR(11);
	run_gdn(x, &a);
	expect_launches(w, 5);
	expect_i32(4, "gdn_fused", "has_hs", 1);
	expect_ptr(4, "gdn_fused", "HS", (uint64_t)(uintptr_t)ADDR(13));
	expect_i32(0, "gdn_kkt", "gate_mode", 1);
}

/* GDN with forced segments of 1, 2 and 7 chunks (1x1000 at 8/8: 16 chunks, 17, 9 and 4
 * segment slots) and a varlen batch (1024+7168 with its host copy: the chained rule's 16
 * chunks, 10 slots): the launches, the slots in every argument that counts them */
static void test_gdn_forced_and_varlen(void **state)
{
	fixture *x = *state;
	static const struct { int32_t len, slots; } forced[] = {{1, 17}, {2, 9}, {7, 4}};
	for (size_t i = 0; i < 3; i++) {
		int32_t L = forced[i].len, S = forced[i].slots;
		tile_la_fwd_args a = kda_args(1, 1000, 8);
		set_options((tile_la_options){.gdn_segments = L});
		la_plan p = run_gdn(x, &a);
		const want w[] = {{"gdn_kkt", 17, 0}, {"gdn_fused", 1 * 8 * 2, 1},
				  {"gdn_map_t", (unsigned)S * 8 * 4, 1},
				  {"chunk_chain_t", (unsigned)S * 8 * 2, 1},
				  {"gdn_fused", (unsigned)S * 8 * 2, 1}};
		expect_launches(w, 5);
		expect_i32(1, "gdn_fused", "seg_len", L);
		expect_i32(2, "gdn_map_t", "XS", S);
		expect_i32(2, "gdn_map_t", "seg_len", L);
		expect_chain_args(3, &a, p.gl.xb, p.gl.xph, p.gl.xpl, S, L, S);
		expect_i32(4, "gdn_fused", "XS", S);
		expect_i32(4, "gdn_fused", "NX", S);
	}
	default_options();
	static const int32_t cu[3] = {0, 1024, 8192};
	tile_la_fwd_args a = kda_args(1, 8192, 8);
	a.cu_seqlens = (const int32_t *)ADDR(12);
	a.cu_seqlens_host = cu;
	a.num_seqs = 2;
	la_plan p = run_gdn(x, &a);
	const want w[] = {{"gdn_kkt", 130, 0}, {"gdn_fused", 2 * 8 * 2, 1},
			  {"gdn_map_t", 10 * 8 * 4, 1}, {"chunk_chain_t", 10 * 8 * 2, 1},
			  {"gdn_fused", 10 * 8 * 2, 1}};
	expect_launches(w, 5);
	expect_i32(2, "gdn_map_t", "has_cu", 1);
	expect_i32(2, "gdn_map_t", "nseq", 2);
	expect_i32(2, "gdn_map_t", "NCU", 3);
	expect_i32(2, "gdn_map_t", "seqlen", 0);
	expect_i32(2, "gdn_map_t", "TP", 130 * 64);
	expect_ptr(2, "gdn_map_t", "Cu", (uint64_t)(uintptr_t)ADDR(12));
	expect_chain_args(3, &a, p.gl.xb, p.gl.xph, p.gl.xpl, 10, 16, 10);
}

/* A call of the table below: fixed length (cu NULL) or varlen */
typedef struct table_call {
	int batch, T, nseq;
	const int32_t *cu;
} table_call;

/* A call of the table at H / HV heads and D; v's bits: the in-kernel l2norm, the lower-bound
 * gate (else log-space gates) with the host's copy of cu_seqlens, chunk states */
static tile_la_fwd_args table_args(const table_call *c, int H, int HV, int D, int v)
{
	tile_la_fwd_args a = kda_args(c->batch, c->T, 1);
	a.num_heads = H, a.num_v_heads = HV;
	a.head_dim = D, a.use_qk_l2norm_in_kernel = v & 1;
	if (c->cu) {
		a.cu_seqlens = (const int32_t *)ADDR(12);
		a.num_seqs = c->nseq;
		a.cu_seqlens_host = v & 2 ? c->cu : NULL;
	}
	if (v & 4) {
		a.chunk_states = ADDR(13);
		a.num_chunk_states = c->T / 64 + 8;
	}
	if (v & 2)
		lower_bound_gate(&a);
	size_t ws = 0;
	assert_int_equal(tile_la_kda_fwd_workspace(the_la, &a, &ws), TILE_OK);
	a.workspace_size = ws;
	return a;
}

/* KDA's call, then GDN's (without the lower-bound gate); the kernels they launched counted */
static void run_both(fixture *x, tile_la_fwd_args *a, int kinds[LA_NKERNELS])
{
	la_plan p = run_kda(x, a);
	for (int i = 0; i < p.nlaunches; i++)
		kinds[p.launch[i].kernel]++;
	a->use_lower_bound = 0, a->lower_bound = 0.0f;
	p = run_gdn(x, a);
	for (int i = 0; i < p.nlaunches; i++)
		kinds[p.launch[i].kernel]++;
}

/* Over a table of calls (fixed and varlen lengths, head counts, D, l2norm, chunk states, the
 * lower-bound gate; GDN and KDA) and option sets (the rules, forced segments, chunk_recur_t
 * off, chunk_recur_w on) every plan's kernels and CTA counts are those of the launches made,
 * grids from the kernels' real metadata, so the plan's grid arithmetic (la_plan.c's `add`)
 * cannot drift from the kernels'; and each launch's mode, part, segments and slots are the
 * plan's. */
static void test_plans_match_the_metadata(void **state)
{
	fixture *x = *state;
	static const int32_t uneq[] = {0, 1024, 8192}, many[] = {0, 500, 1000, 1600, 2000, 4096};
	static const table_call calls[] = {
		{1, 1000, 0, NULL}, {1, 8192, 0, NULL}, {4, 8192, 0, NULL}, {2, 300, 0, NULL},
		{1, 0, 0, NULL}, {1, 8192, 2, uneq}, {1, 4096, 5, many},
	};
	static const int heads[][2] = {{1, 1}, {2, 8}, {8, 8}, {16, 32}, {64, 64}};
	static const tile_la_options opts[] = {
		{0}, {.gdn_segments = 7, .kda_segments = 7},
		{.gdn_segments = 1, .kda_segments = 2, .kda_transposed = TILE_LA_OFF},
		{.kda_wide = TILE_LA_ON},
	};
	int n = 0, kinds[LA_NKERNELS] = {0};
	for (size_t oi = 0; oi < sizeof opts / sizeof opts[0]; oi++) {
		set_options(opts[oi]);
		for (size_t ci = 0; ci < sizeof calls / sizeof calls[0]; ci++)
			for (size_t hi = 0; hi < sizeof heads / sizeof heads[0]; hi++)
				for (int v = 0; v < 16; v++) {
					int H = heads[hi][0], HV = heads[hi][1], D = v & 8 ? 128 : 64;
					tile_la_fwd_args a = table_args(&calls[ci], H, HV, D, v);
					run_both(x, &a, kinds);
					n += 2;
				}
	}
	default_options();
	/* every forward kernel ran somewhere in the table */
	for (int k = 0; k < LA_K_BWD_RECUR; k++)
		if (kinds[k] == 0)
			fail_msg("no call of the table launched %s", la_kernel_stem((la_kernel)k));
	print_message("%d calls: plans, launches and their arguments agree\n", n);
}

/* A backward call of 2 sequences of 100 and 200 tokens, GVA 2/8, D = 64, the in-kernel gate
 * with A_log and dt_bias, every gradient and dht given (the workspace's size left to ask). */
static tile_la_bwd_args bwd_call(void)
{
	static const int32_t cu[] = {0, 100, 300};
	tile_la_bwd_args b;
	memset(&b, 0, sizeof b);
	tile_la_fwd_args *a = &b.fwd;
	*a = kda_args(1, 300, 2);
	a->num_v_heads = 8;
	a->head_dim = 64;
	a->o = a->final_state = NULL;
	a->cu_seqlens = ADDR(10);
	a->num_seqs = 2;
	a->cu_seqlens_host = cu;
	a->use_gate_in_kernel = 1;
	a->A_log = ADDR(11);
	a->dt_bias = ADDR(12);
	b.dout = ADDR(20);
	b.dht = ADDR(21);
	b.dq = ADDR(22), b.dk = ADDR(23), b.dv = ADDR(24), b.dg = ADDR(25), b.dbeta = ADDR(26);
	b.dh0 = ADDR(27), b.dA_log = ADDR(28), b.ddt_bias = ADDR(29);
	b.workspace = ADDR(30);
	b.stream = ADDR(50);
	b.fwd.stream = ADDR(51);   /* the forward's: no launch of the backward may use it */
	return b;
}

/* Launch i came from module <stem>_<dtype>_d<D> of call a. */
/* Launch i came from module "<stem>_<dtype>_d<D><suffix>" */
static void expect_module_build(int i, const tile_la_fwd_args *a, const char *stem,
				const char *suffix)
{
	char name[64];
	snprintf(name, sizeof name, "%s_%s_d%d%s", stem, a->dtype == TILE_LA_F16 ? "f16" : "bf16",
		 a->head_dim, suffix);
	const tile_embedded_module *em = tile_la_kernels_find(name);
	assert_non_null(em);
	const void *image = em->cubin ? (const void *)em->cubin : (const void *)em->ptx;
	if (fake(0)->log[i].image != image)
		fail_msg("launch %d (%s): not from module %s", i, fake(0)->log[i].kernel, name);
}

static void expect_module(int i, const tile_la_fwd_args *a, const char *stem)
{
	expect_module_build(i, a, stem, "");
}

/* exact_state ON: the forward recurrences and maps from their _x builds (TERMS = 2), the
 * other kernels as without it; GDN's and KDA's chained paths, KDA's whole sequences on
 * chunk_recur_t and (kda_wide ON) chunk_recur_w; OFF and AUTO: the one-term builds */
static void test_exact_state_builds(void **state)
{
	fixture *x = *state;
	for (int on = 0; on < 2; on++) {
		const char *sx = on ? "_x" : "";
		set_options((tile_la_options){.exact_state = on ? TILE_LA_ON : TILE_LA_AUTO,
					      .kda_wide = TILE_LA_ON});
		tile_la_fwd_args a = kda_args(1, 8192, 8);
		run_gdn(x, &a);
		expect_module(0, &a, "gdn_kkt");
		/* AQK only for the one-term gdn_fused (the _x build forms it itself) */
		expect_i32(0, "gdn_kkt", "aqk_out", !on);
		expect_module_build(1, &a, "gdn_fused", sx);
		expect_module_build(2, &a, "gdn_map_t", sx);
		expect_module(3, &a, "chunk_chain_t");
		expect_module_build(4, &a, "gdn_fused", sx);
		a = kda_args(1, 8192, 8);   /* (run_gdn sized the workspace for GDN) */
		run_kda(x, &a);
		assert_string_equal(fake(0)->log[1].kernel, "chunk_recur_t");
		expect_module_build(1, &a, "chunk_recur_t", sx);
		expect_module_build(2, &a, "chunk_map_t", sx);
		expect_module(3, &a, "chunk_chain_t");
		expect_module_build(4, &a, "chunk_recur_t", sx);
		a = kda_args(4, 8192, 32);
		a.num_heads = 16;
		run_kda(x, &a);
		assert_string_equal(fake(0)->log[1].kernel, "chunk_recur_w");
		expect_module_build(1, &a, "chunk_recur_w", sx);
	}
	default_options();
}

/* GDN's chunk-parallel kernel: gdn_kkt2 (two CTAs per SM) on grids of at most three waves of
 * two (2 heads x 129 slots = 258 CTAs on the fake's 132 SMs), gdn_kkt (three) above (8 x 129
 * = 1032); gdn_kkt_two_ctas forces either; a forward keeping its setup runs gdn_kkt_lo */
static void test_gdn_kkt_builds(void **state)
{
	fixture *x = *state;
	static const struct { int heads, option; const char *stem; } runs[] = {
		{2, TILE_LA_AUTO, "gdn_kkt2"}, {8, TILE_LA_AUTO, "gdn_kkt"},
		{2, TILE_LA_OFF, "gdn_kkt"}, {8, TILE_LA_ON, "gdn_kkt2"},
	};
	for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
		set_options((tile_la_options){.gdn_kkt_two_ctas = runs[i].option});
		tile_la_fwd_args a = kda_args(1, 8192, runs[i].heads);
		la_plan p = run_gdn(x, &a);
		assert_string_equal(fake(0)->log[0].kernel, "gdn_kkt");
		expect_module(0, &a, runs[i].stem);
		assert_int_equal(p.launch[0].kernel,
				 strcmp(runs[i].stem, "gdn_kkt2") == 0 ? LA_K_KKT2 : LA_K_KKT);
	}
	default_options();
}

/* The first n launches all went to `stream`. */
static void expect_stream(int n, void *stream)
{
	for (int i = 0; i < n && i < FAKE_LOG; i++)
		if (fake(0)->log[i].stream != stream)
			fail_msg("launch %d (%s) on stream %p, expected %p", i, fake(0)->log[i].kernel,
				 fake(0)->log[i].stream, stream);
}

/* A KDA backward call with the workspace it asks for, its launches logged afresh. */
static void run_kda_bwd(fixture *x, tile_la_bwd_args *b)
{
	size_t ws = 0;
	assert_int_equal(tile_la_kda_bwd_workspace(x->la, b, &ws), TILE_OK);
	b->workspace_size = ws;
	clear_launches();
	tile_status st = tile_la_kda_bwd(x->la, b);
	if (st != TILE_OK)
		fail_msg("tile_la_kda_bwd: %s: %s", tile_status_str(st), tile_la_error(x->la));
}

/* test_kda_bwd's shape (7 chunk slots, 8 value heads, 2 sequences): the backward's launches
 * when it forms its setup itself, chunk_prep first (from scratch, or from a kept A and AQK) */
static const want kda_bwd_setup_first[] = {
	{"chunk_prep", 7 * 8, 0}, {"kda_bwd_recur", 2 * 2 * 8 * 1, 0}, {"kda_bwd_chunk", 7 * 8, 0},
	{"kda_bwd_intra", 7 * 8 * 1, 0}, {"kda_bwd_finish", 19 * 2 + 8, 0}};

/* The KDA backward (2 sequences of 100 and 200 tokens, GVA 2/8, D = 64, the softplus gate with
 * dt_bias, beta logits): chunk_prep over chunk slots x heads (the forward's recompute, at the
 * workspace's start, in its _bwd build: kda_bwd_wy's outputs too), kda_bwd_recur over two
 * walks x sequences x heads x value slices, kda_bwd_chunk over chunk slots x heads,
 * kda_bwd_intra over chunk slots x heads x key slabs, kda_bwd_finish over 16-token blocks x q/k
 * heads plus one CTA per value head; each argument where the call puts it, the workspace's
 * regions inside it and apart. */
static void test_kda_bwd(void **state)
{
	fixture *x = *state;
	tile_la_bwd_args b = bwd_call();
	tile_la_fwd_args *a = &b.fwd;
	a->use_beta_sigmoid_in_kernel = 1;
	a->allow_neg_eigval = 1;
	size_t ws = 0;
	assert_int_equal(tile_la_kda_bwd_workspace(x->la, &b, &ws), TILE_OK);
	/* slots: cdiv(300, 64) + 2 = 7; chunk_prep's outputs (W, U, QG, KG at 64 rows per slot,
	 * AQK per token, DEC, CB), S and dS per slot and head (IN, one term), A and AQK (IN hi +
	 * lo) and Gamma (f32) per slot, dA and dAQK (f32) per slot, per-token gradients, dbeta's
	 * three parts per token, the row scales per slot, the gate sums */
	la_kda_layout prep = la_kda_prep_layout(a, 1);   /* (QG's lo term: W, U, QG, KG, QGL) */
	size_t mat = 7 * 64 * 8 * 64 * 2, aqk = 300 * 8 * 64 * 2, dec = 7 * 8 * 64 * 4;
	assert_true(prep.total >= 5 * mat + aqk + dec + 8 * 7 * 4);
	assert_true(prep.total <= 5 * mat + aqk + dec + 8 * 7 * 4 + 7 * 256);
	size_t state_bytes = 7 * 8 * 64 * 64 * 2, tok = 300 * 8 * 64 * 4;
	size_t tile = 7 * 8 * 64 * 64 * 4;   /* a 64 x 64 f32 (or IN hi + lo) per slot and head */
	size_t rest = 2 * state_bytes + 5 * tile + 3 * tok + 300 * 8 * 3 * 4 +
		      7 * 8 * 3 * 64 * 4 + 7 * 8 * 4 + 7 * 8 * 64 * 4;
	assert_true(ws >= prep.total + rest);
	assert_true(ws <= prep.total + rest + 12 * 256);
	run_kda_bwd(x, &b);
	expect_launches(kda_bwd_setup_first, 5);
	expect_stream(5, b.stream);
	/* no kda_bwd_wy: its outputs come from here; QG's lo term for dh0 too */
	expect_module(0, a, "chunk_prep_bwd_qgl");
	expect_module(2, a, "kda_bwd_chunk");
	expect_module(3, a, "kda_bwd_intra");
	expect_module(4, a, "kda_bwd");
	uint64_t base = (uint64_t)(uintptr_t)b.workspace;
	expect_ptr(0, "chunk_prep", "W", base + prep.w);
	expect_ptr(0, "chunk_prep", "AQK", base + prep.aqk);
	expect_ptr(0, "chunk_prep", "AQKt", base + prep.aqk);   /* (whole chunks' TMA stores) */
	expect_i32(0, "chunk_prep", "NG", 7);
	expect_i32(0, "chunk_prep", "nc", 0);
	expect_i32(0, "chunk_prep", "setup_rows", 1);   /* (the recompute writes Gamma, NRW) */
	expect_i32(0, "chunk_prep", "gate_mode", 1);
	expect_ptr(1, "kda_bwd_recur", "W", base + prep.w);
	expect_ptr(1, "kda_bwd_recur", "QG", base + prep.qg);
	expect_ptr(1, "kda_bwd_recur", "DEC", base + prep.dec);
	expect_ptr(1, "kda_bwd_recur", "SH", base + prep.total);
	expect_ptr(1, "kda_bwd_recur", "DOt", (uint64_t)(uintptr_t)b.dout);
	expect_ptr(1, "kda_bwd_recur", "DHT", (uint64_t)(uintptr_t)b.dht);
	expect_ptr(1, "kda_bwd_recur", "DH0", (uint64_t)(uintptr_t)b.dh0);
	expect_i32(1, "kda_bwd_recur", "NSLOT", 7);
	expect_i32(1, "kda_bwd_recur", "TS", 7 * 64);
	expect_i32(1, "kda_bwd_recur", "has_cu", 1);
	expect_i32(1, "kda_bwd_recur", "has_dht", 1);
	expect_i32(1, "kda_bwd_recur", "has_dh0", 1);
	expect_i32(1, "kda_bwd_recur", "qg_lo", 1);
	expect_ptr(0, "chunk_prep", "QGL", base + prep.qgl);
	expect_ptr(1, "kda_bwd_recur", "QGL", base + prep.qgl);
	expect_i32(0, "chunk_prep", "qgl_out", 1);
	uint64_t db = ptr_of(1, "kda_bwd_recur", "DBH");
	assert_true(db >= base + prep.total + state_bytes);
	/* chunk_prep_bwd's setup (A and AQK as IN hi + lo, Gamma per slot; the row scales) for
	 * kda_bwd_chunk, in the workspace past the states */
	uint64_t ah = ptr_of(0, "chunk_prep", "AH"), aqh = ptr_of(0, "chunk_prep", "AQH");
	uint64_t pg = ptr_of(0, "chunk_prep", "PG");
	assert_true(ah >= db + state_bytes && aqh >= ah + tile && pg >= aqh + tile);
	expect_ptr(2, "kda_bwd_chunk", "AH", ah);
	expect_ptr(2, "kda_bwd_chunk", "AQH", aqh);
	expect_ptr(2, "kda_bwd_chunk", "PG", pg);
	expect_ptr(2, "kda_bwd_chunk", "PGt", pg);
	expect_ptr(2, "kda_bwd_chunk", "PGl", pg);
	expect_ptr(2, "kda_bwd_chunk", "NRW", ptr_of(0, "chunk_prep", "NRW"));
	expect_ptr(2, "kda_bwd_chunk", "SH", base + prep.total);
	expect_ptr(2, "kda_bwd_chunk", "DBH", db);
	expect_ptr(2, "kda_bwd_chunk", "DV", (uint64_t)(uintptr_t)b.dv);
	expect_ptr(2, "kda_bwd_chunk", "DVt", (uint64_t)(uintptr_t)b.dv);
	expect_ptr(2, "kda_bwd_chunk", "DOt", (uint64_t)(uintptr_t)b.dout);
	expect_ptr(2, "kda_bwd_chunk", "Vt", (uint64_t)(uintptr_t)b.fwd.v);
	expect_ptr(2, "kda_bwd_chunk", "Kt", (uint64_t)(uintptr_t)b.fwd.k);
	expect_ptr(2, "kda_bwd_chunk", "Qt", (uint64_t)(uintptr_t)b.fwd.q);
	expect_i32(2, "kda_bwd_chunk", "NSLOT", 7);
	uint64_t pa = ptr_of(2, "kda_bwd_chunk", "PA"), paq = ptr_of(2, "kda_bwd_chunk", "PAQ");
	uint64_t dqw = ptr_of(2, "kda_bwd_chunk", "DQW");
	assert_true(pa >= pg + 7 * 8 * 64 * 64 * 4 && paq >= pa + tile && dqw >= paq + tile);
	expect_ptr(2, "kda_bwd_chunk", "DKW", dqw + tok);
	expect_ptr(2, "kda_bwd_chunk", "DGW", dqw + 2 * tok);
	assert_true(dqw + 3 * tok <= base + ws);
	uint64_t dbw = ptr_of(2, "kda_bwd_chunk", "DBW");
	/* kda_bwd_intra reads dAQK and dL where kda_bwd_chunk leaves them, Gamma where
	 * kda_bwd_chunk reads it */
	expect_ptr(3, "kda_bwd_intra", "PQ", paq);
	expect_ptr(3, "kda_bwd_intra", "PL", pa);
	expect_ptr(3, "kda_bwd_intra", "PG", pg);
	expect_i32(3, "kda_bwd_intra", "PW", 64);
	expect_ptr(3, "kda_bwd_intra", "Q", (uint64_t)(uintptr_t)b.fwd.q);
	expect_ptr(3, "kda_bwd_intra", "K", (uint64_t)(uintptr_t)b.fwd.k);
	expect_ptr(3, "kda_bwd_intra", "NRW", ptr_of(0, "chunk_prep", "NRW"));
	expect_ptr(3, "kda_bwd_intra", "DQW", dqw);
	expect_ptr(3, "kda_bwd_intra", "DGW", dqw + 2 * tok);
	expect_ptr(3, "kda_bwd_intra", "DBW", dbw);
	expect_ptr(3, "kda_bwd_intra", "DG", (uint64_t)(uintptr_t)b.dg);
	expect_i32(3, "kda_bwd_intra", "gate_mode", 1);
	expect_i32(3, "kda_bwd_intra", "has_bias", 1);
	expect_i32(3, "kda_bwd_intra", "NSLOT", 7);
	expect_i32(3, "kda_bwd_intra", "GC", 64);
	uint64_t ddt = ptr_of(3, "kda_bwd_intra", "DDT");
	assert_true(ddt + 7 * 8 * 64 * 4 <= base + ws);
	assert_true(ptr_of(3, "kda_bwd_intra", "DAL") + 7 * 8 * 4 <= base + ws);
	expect_ptr(4, "kda_bwd_finish", "DQ", (uint64_t)(uintptr_t)b.dq);
	expect_ptr(4, "kda_bwd_finish", "DK", (uint64_t)(uintptr_t)b.dk);
	expect_ptr(4, "kda_bwd_finish", "DQW", dqw);
	expect_ptr(4, "kda_bwd_finish", "DBeta", (uint64_t)(uintptr_t)b.dbeta);
	expect_ptr(4, "kda_bwd_finish", "DBW", dbw);
	expect_ptr(4, "kda_bwd_finish", "DDT", ddt);
	expect_i32(4, "kda_bwd_finish", "beta_sigmoid", 1);
	expect_i32(4, "kda_bwd_finish", "want_dalog", 1);
	expect_i32(4, "kda_bwd_finish", "want_ddt", 1);
	expect_i32(4, "kda_bwd_finish", "NTB", 19);
	expect_i32(4, "kda_bwd_finish", "GC", 64);   /* dg is kda_bwd_intra's */
	expect_ptr(4, "kda_bwd_finish", "DDtBias", (uint64_t)(uintptr_t)b.ddt_bias);
	/* one bad argument: nothing launches */
	clear_launches();
	b.dq = b.dk;
	assert_int_equal(tile_la_kda_bwd(x->la, &b), TILE_ERR_ARG);
	assert_non_null(strstr(tile_la_error(x->la), "dq"));
	assert_int_equal(fake(0)->launches, 0);
}

/* The KDA backward with the forward's workspace (disable_recompute): the forward's chunk_prep
 * writes W, U, QG, KG, AQK and DEC where kda_bwd_recur then reads them, no chunk_prep runs,
 * and the backward's own regions start at its workspace's start. */
static void test_kda_bwd_saved(void **state)
{
	fixture *x = *state;
	tile_la_bwd_args b = bwd_call();
	tile_la_fwd_args fa = b.fwd;
	fa.o = ADDR(31);
	fa.workspace = ADDR(40);
	assert_int_equal(tile_la_kda_fwd_workspace(x->la, &fa, &fa.workspace_size), TILE_OK);
	clear_launches();
	assert_int_equal(tile_la_kda_fwd(x->la, &fa), TILE_OK);
	assert_string_equal(fake(0)->log[0].kernel, "chunk_prep");
	static const char *const products[] = {"W", "U", "QG", "KG", "AQK", "DEC"};
	uint64_t fwd_ptr[6];
	for (int i = 0; i < 6; i++)
		fwd_ptr[i] = ptr_of(0, "chunk_prep", products[i]);
	expect_i32(0, "chunk_prep", "qgl_out", 0);
	expect_ptr(0, "chunk_prep", "QGL", fwd_ptr[2]);   /* (a TMA tensor never stored to) */

	size_t ws = 0, ws_recompute = 0;
	assert_int_equal(tile_la_kda_bwd_workspace(x->la, &b, &ws_recompute), TILE_OK);
	b.fwd_workspace = fa.workspace;
	b.fwd_workspace_size = fa.workspace_size;
	assert_int_equal(tile_la_kda_bwd_workspace(x->la, &b, &ws), TILE_OK);
	/* (the recompute's chunk_prep_bwd_qgl leaves QG's lo term too) */
	assert_int_equal(ws, ws_recompute - la_kda_prep_layout(&b.fwd, 1).total);
	run_kda_bwd(x, &b);
	const want w[] = {{"kda_bwd_recur", 2 * 2 * 8 * 1, 0}, {"kda_bwd_wy", 7 * 8, 1},
			  {"kda_bwd_chunk", 7 * 8, 0}, {"kda_bwd_intra", 7 * 8 * 1, 0},
			  {"kda_bwd_finish", 19 * 2 + 8, 0}};
	expect_launches(w, 5);
	expect_stream(5, b.stream);
	for (int i = 0; i < 6; i++)
		expect_ptr(0, "kda_bwd_recur", products[i], fwd_ptr[i]);
	uint64_t base = (uint64_t)(uintptr_t)b.workspace;
	expect_ptr(0, "kda_bwd_recur", "SH", base);
	assert_true(ptr_of(3, "kda_bwd_intra", "DDT") + 7 * 8 * 64 * 4 <= base + ws);
	/* a forward without an initial state keeps no lo term of QG: dh0 from QG alone */
	expect_i32(0, "kda_bwd_recur", "qg_lo", 0);
	expect_ptr(0, "kda_bwd_recur", "QGL", fwd_ptr[2]);   /* (never loaded then) */
}

/* A KDA forward keeping its workspace (save_for_backward) with an initial state runs
 * chunk_prep_qgl, which also leaves QG's lo term there (its workspace grows by it); a backward
 * given that workspace reads it in its walks for dh0 (not without dh0). At D = 128 with chunk
 * states the forward's segments would take warmups, which read CB: whole sequences then. */
static void test_kda_bwd_saved_qg_lo(void **state)
{
	fixture *x = *state;
	tile_la_bwd_args b = bwd_call();
	tile_la_fwd_args fa = b.fwd;
	fa.o = ADDR(31);
	fa.workspace = ADDR(40);
	fa.initial_state = ADDR(8);
	size_t plain = 0;
	assert_int_equal(tile_la_kda_fwd_workspace(x->la, &fa, &plain), TILE_OK);
	fa.save_for_backward = 1;
	assert_int_equal(tile_la_kda_fwd_workspace(x->la, &fa, &fa.workspace_size), TILE_OK);
	assert_int_equal(fa.workspace_size, plain + 7 * 64 * 8 * 64 * 2);
	clear_launches();
	assert_int_equal(tile_la_kda_fwd(x->la, &fa), TILE_OK);
	expect_module(0, &fa, "chunk_prep_qgl");
	la_kda_layout prep = la_kda_prep_layout(&fa, 1);
	uint64_t kept = (uint64_t)(uintptr_t)fa.workspace;
	expect_ptr(0, "chunk_prep", "QGL", kept + prep.qgl);
	expect_ptr(0, "chunk_prep", "AQK", kept + prep.aqk);
	expect_ptr(0, "chunk_prep", "AQKt", kept + prep.aqk);
	expect_i32(0, "chunk_prep", "qgl_out", 1);

	b.fwd = fa;
	b.fwd.o = NULL, b.fwd.workspace = NULL, b.fwd.workspace_size = 0;
	b.fwd_workspace = fa.workspace;
	b.fwd_workspace_size = fa.workspace_size;
	run_kda_bwd(x, &b);
	assert_string_equal(fake(0)->log[0].kernel, "kda_bwd_recur");
	expect_ptr(0, "kda_bwd_recur", "QG", kept + prep.qg);
	expect_ptr(0, "kda_bwd_recur", "QGL", kept + prep.qgl);
	expect_ptr(0, "kda_bwd_recur", "AQK", kept + prep.aqk);
	expect_i32(0, "kda_bwd_recur", "qg_lo", 1);
	b.dh0 = NULL;
	run_kda_bwd(x, &b);
	expect_i32(0, "kda_bwd_recur", "qg_lo", 0);
	/* a kept workspace too small for the lo term's region is refused */
	b.fwd_workspace_size = prep.total - 1;
	clear_launches();
	assert_int_equal(tile_la_kda_bwd(x->la, &b), TILE_ERR_ARG);
	assert_non_null(strstr(tile_la_error(x->la), "fwd_workspace_size"));
	assert_int_equal(fake(0)->launches, 0);

	tile_la_fwd_args a = kda_args(1, 8192, 8);
	a.head_dim = 128;
	a.chunk_states = ADDR(60);
	a.num_chunk_states = 128;
	assert_non_null(a.initial_state);
	la_plan p = plan_of(&a, 1);
	assert_true(p.seg_len > 0);   /* (not kept: warmups) */
	a.save_for_backward = 1;
	a.initial_state = NULL;
	p = plan_of(&a, 1);
	assert_true(p.seg_len > 0);   /* (no initial state: nothing more kept) */
	assert_int_not_equal(p.prep, LA_K_PREP_QGL);
	a.initial_state = ADDR(8);
	p = plan_of(&a, 1);
	assert_int_equal(p.seg_len, 0);
	assert_int_equal(p.prep, LA_K_PREP_QGL);
	assert_true(p.kl.qg_lo);

	/* chunk_prep_qgl's build of the call's dtype, head dim and gate dtype, on the plan */
	for (int v = 0; v < 8; v++) {
		tile_la_fwd_args q = kda_args(1, 300, 2);
		q.dtype = v & 1 ? TILE_LA_F16 : TILE_LA_BF16;
		q.gate_dtype = v & 2 ? q.dtype : TILE_LA_F32;
		q.head_dim = v & 4 ? 128 : 64;
		q.save_for_backward = 1;
		assert_int_equal(tile_la_kda_fwd_workspace(x->la, &q, &q.workspace_size), TILE_OK);
		run_kda(x, &q);
		expect_module_build(0, &q, "chunk_prep_qgl", v & 2 ? "_g16" : "");
		expect_i32(0, "chunk_prep", "qgl_out", 1);
	}
}

/* The KDA forward keeping A and AQK (saved_setup): its chunk_prep is the _bwd build, writing
 * them there (A's two terms, then AQK's, 7 slots x 8 heads of 64 x 64 IN pairs each) and not
 * Gamma or the row vectors (setup_rows 0; its workspace as without); the backward given the
 * same arguments runs
 * chunk_prep's _froma build on them instead of the recompute, and its other kernels read A and
 * AQK there; its workspace is smaller by them. chunk_prep_froma also leaves QG's lo term, which
 * the walks read (qg_lo) when dh0 is asked for. Bad sizes, GDN, both kept buffers at once and
 * an overlap with an output are refused before any launch. */
static void test_kda_saved_setup(void **state)
{
	fixture *x = *state;
	tile_la_bwd_args b = bwd_call();
	tile_la_fwd_args fa = b.fwd;
	size_t half = 7 * 8 * 2 * 64 * 64 * 2, saved = 0;
	assert_int_equal(tile_la_kda_saved_setup_size(&fa, &saved), TILE_OK);
	assert_int_equal(saved, 2 * half);
	size_t ws_plain = 0;
	fa.o = ADDR(31);
	fa.workspace = ADDR(40);
	assert_int_equal(tile_la_kda_fwd_workspace(x->la, &fa, &ws_plain), TILE_OK);
	fa.saved_setup = ADDR(41);
	fa.saved_setup_size = saved;
	assert_int_equal(tile_la_kda_fwd_workspace(x->la, &fa, &fa.workspace_size), TILE_OK);
	assert_int_equal(fa.workspace_size, ws_plain);
	clear_launches();
	tile_status st = tile_la_kda_fwd(x->la, &fa);
	if (st != TILE_OK)
		fail_msg("tile_la_kda_fwd: %s: %s", tile_status_str(st), tile_la_error(x->la));
	expect_module(0, &fa, "chunk_prep_bwd");
	uint64_t sv = (uint64_t)(uintptr_t)fa.saved_setup;
	expect_ptr(0, "chunk_prep", "AH", sv);
	expect_ptr(0, "chunk_prep", "AQH", sv + half);
	expect_i32(0, "chunk_prep", "setup_rows", 0);

	size_t ws_recompute = 0, ws = 0;
	assert_int_equal(tile_la_kda_bwd_workspace(x->la, &b, &ws_recompute), TILE_OK);
	b.fwd.saved_setup = fa.saved_setup;
	b.fwd.saved_setup_size = saved;
	assert_int_equal(tile_la_kda_bwd_workspace(x->la, &b, &ws), TILE_OK);
	/* no A or AQK of its own; QG's lo term (7 slots x 64 rows x 8 heads x 64, IN) */
	assert_true(ws + 2 * 7 * 8 * 64 * 64 * 4 <= ws_recompute + 7 * 64 * 8 * 64 * 2);
	run_kda_bwd(x, &b);
	expect_launches(kda_bwd_setup_first, 5);
	expect_module(0, &b.fwd, "chunk_prep_froma");
	expect_ptr(0, "chunk_prep", "AHg", sv);
	expect_ptr(0, "chunk_prep", "AQHg", sv + half);
	uint64_t base = (uint64_t)(uintptr_t)b.workspace;
	uint64_t bpg = ptr_of(0, "chunk_prep", "PG");
	assert_true(bpg >= base && bpg + 7 * 8 * 64 * 64 * 4 <= base + ws);
	expect_i32(0, "chunk_prep", "setup_rows", 1);
	expect_ptr(1, "kda_bwd_recur", "AH", sv);
	expect_ptr(1, "kda_bwd_recur", "AQH", sv + half);
	expect_ptr(2, "kda_bwd_chunk", "AH", sv);
	expect_ptr(2, "kda_bwd_chunk", "AQH", sv + half);
	expect_ptr(2, "kda_bwd_chunk", "PG", bpg);
	expect_ptr(3, "kda_bwd_intra", "PG", bpg);
	la_kda_layout prep = la_kda_prep_layout(&b.fwd, 1);
	assert_int_equal(prep.qgl, prep.kg + 7 * 64 * 8 * 64 * 2);
	expect_ptr(0, "chunk_prep", "QGL", base + prep.qgl);
	expect_ptr(1, "kda_bwd_recur", "QGL", base + prep.qgl);
	expect_ptr(1, "kda_bwd_recur", "AQK", base + prep.aqk);
	expect_i32(0, "chunk_prep", "qgl_out", 1);
	expect_i32(1, "kda_bwd_recur", "qg_lo", 1);
	/* without dh0: no lo term */
	b.dh0 = NULL;
	run_kda_bwd(x, &b);
	expect_i32(0, "chunk_prep", "qgl_out", 0);
	expect_i32(1, "kda_bwd_recur", "qg_lo", 0);
	b.dh0 = ADDR(27);

	/* refused, nothing launched: too small, misaligned, with a kept workspace too, GDN's,
	 * overlapping an output */
	clear_launches();
	b.fwd.saved_setup_size = saved - 1;
	assert_int_equal(tile_la_kda_bwd(x->la, &b), TILE_ERR_ARG);
	assert_non_null(strstr(tile_la_error(x->la), "saved_setup_size"));
	b.fwd.saved_setup_size = saved;
	b.fwd.saved_setup = (char *)ADDR(41) + 16;
	assert_int_equal(tile_la_kda_bwd(x->la, &b), TILE_ERR_ARG);
	assert_non_null(strstr(tile_la_error(x->la), "aligned"));
	b.fwd.saved_setup = ADDR(41);
	b.fwd_workspace = fa.workspace, b.fwd_workspace_size = fa.workspace_size;
	assert_int_equal(tile_la_kda_bwd(x->la, &b), TILE_ERR_ARG);
	assert_non_null(strstr(tile_la_error(x->la), "both given"));
	b.fwd_workspace = NULL, b.fwd_workspace_size = 0;
	b.fwd.saved_setup = b.dq;
	assert_int_equal(tile_la_kda_bwd(x->la, &b), TILE_ERR_ARG);
	assert_non_null(strstr(tile_la_error(x->la), "saved_setup"));
	fa.saved_setup_size = saved - 1;
	assert_int_equal(tile_la_kda_fwd(x->la, &fa), TILE_ERR_ARG);
	assert_non_null(strstr(tile_la_error(x->la), "saved_setup_size"));
	fa.saved_setup_size = saved;
	fa.saved_setup = fa.o;
	assert_int_equal(tile_la_kda_fwd(x->la, &fa), TILE_ERR_ARG);
	assert_non_null(strstr(tile_la_error(x->la), "saved_setup"));
	fa.saved_setup = ADDR(41);
	assert_int_equal(tile_la_gdn_fwd(x->la, &fa), TILE_ERR_ARG);
	assert_non_null(strstr(tile_la_error(x->la), "KDA only"));
	assert_int_equal(fake(0)->launches, 0);
}

/* With chunk_states at D = 128 the forward's segments would take warmups, whose chunk_prep
 * build writes CB; keeping A and AQK takes chunk_prep_bwd (without CB there): whole
 * sequences then. */
static void test_kda_saved_setup_no_warmups(void **state)
{
	(void)state;
	tile_la_fwd_args a = kda_args(1, 8192, 8);
	a.head_dim = 128;
	a.chunk_states = ADDR(60);
	a.num_chunk_states = 128;
	la_plan p = plan_of(&a, 1);
	assert_true(p.seg_len > 0);   /* (without saved_setup: segments with warmups) */
	a.saved_setup = ADDR(41);
	p = plan_of(&a, 1);
	assert_int_equal(p.seg_len, 0);
	assert_int_equal(p.prep, LA_K_PREP_BWD);
	assert_int_equal(p.launch[0].kernel, LA_K_PREP_BWD);
}

/* bwd_call's sequences lengthened to 100 and 1000 tokens (16 chunks: segments of 3 chunks
 * give 8 segment slots). */
static tile_la_bwd_args segmented_bwd_call(void)
{
	static const int32_t cu[] = {0, 100, 1100};
	tile_la_bwd_args b = bwd_call();
	b.fwd.seq_len = 1100;
	b.fwd.cu_seqlens_host = cu;
	return b;
}

/* Launches 1 and 4 are the walks' parts 1 and 2 over 3-chunk segments in 8 slots. */
static void expect_walk_parts(void)
{
	expect_i32(1, "kda_bwd_recur", "part", 1);
	expect_i32(4, "kda_bwd_recur", "part", 2);
	for (int i = 1; i <= 4; i += 3) {
		expect_i32(i, "kda_bwd_recur", "seg_len", 3);
		expect_i32(i, "kda_bwd_recur", "NX", 8);
		expect_i32(i, "kda_bwd_recur", "XS", 8);
	}
}

/* KDA 16/16 at 1x8192, D = 128 (32 units, 64 walks). Recomputing, chunk_prep_bwd leaves
 * kda_bwd_wy's outputs before the walks, which take the SMs alone and run over segments of 43
 * chunks (la_segment_len_bwd without kda_bwd_wy's SM time); over a kept forward workspace
 * kda_bwd_wy runs beside them, and the rule with its cost keeps the walks whole. */
static void test_kda_bwd_segments_without_wy(void **state)
{
	fixture *x = *state;
	tile_la_bwd_args b = bwd_call();
	tile_la_fwd_args *a = &b.fwd;
	*a = kda_args(1, 8192, 16);
	a->o = a->final_state = NULL;
	b.dA_log = b.ddt_bias = NULL;   /* (no in-kernel gate) */
	assert_int_equal(la_segment_len_bwd(132, 32, 16 * LA_BWD_WY_KDA, 8192, 1, 0, LA_OPT_AUTO),
			 0);
	for (int kept = 0; kept < 2; kept++) {
		b.fwd_workspace = kept ? ADDR(40) : NULL;
		b.fwd_workspace_size = kept ? la_kda_prep_layout(a, 0).total : 0;
		run_kda_bwd(x, &b);
		int w = kept ? 0 : 1;   /* the walks' first launch */
		if (!kept)
			expect_module(0, a, "chunk_prep_bwd_qgl");   /* (bwd_call asks for dh0) */
		assert_string_equal(fake(0)->log[w].kernel, "kda_bwd_recur");
		expect_i32(w, "kda_bwd_recur", "seg_len", kept ? 0 : 43);
		assert_string_equal(fake(0)->log[w + 1].kernel, kept ? "kda_bwd_wy" : "chunk_map_t");
	}
}

/* The backward's walks over segments (kda_segments forced to 3 chunks; 2 sequences of 100 and
 * 1000 tokens, 2 and 16 chunks: one and six segments; chunk slots cdiv(1100, 64) + 2 = 20,
 * segment slots cdiv(1100, 192) + 2 = 8):
 * part 1 over the segment slots with no early start (after chunk_prep), chunk_map_t's
 * chained maps beside it and chunk_chain_t's two chains (the backward's too), part 2 (each
 * with early start). The transfer maps lie in the backward's
 * workspace past its other regions, which keep their sizes; chunk_map_t reads chunk_prep's
 * outputs; forcing the segments off (or the check without a handle) drops them. */
static void test_bwd_segments(void **state)
{
	fixture *x = *state;
	tile_la_bwd_args b = segmented_bwd_call();
	tile_la_fwd_args *a = &b.fwd;
	size_t whole = 0, ws = 0;
	set_options((tile_la_options){.kda_segments = TILE_LA_OFF});
	assert_int_equal(tile_la_kda_bwd_workspace(x->la, &b, &whole), TILE_OK);
	set_options((tile_la_options){.kda_segments = 3});
	assert_int_equal(tile_la_kda_bwd_workspace(x->la, &b, &ws), TILE_OK);
	/* B_j^T and Bb_j^T in f32, P_j and P_j^T as two 16-bit terms each: 8 slots x 8 heads x
	 * 64 x 64 each */
	size_t maps = 8 * 8 * 64 * 64;
	assert_true(ws >= whole + 2 * maps * 4 + 4 * maps * 2);
	assert_true(ws <= whole + 2 * maps * 4 + 4 * maps * 2 + 6 * 256);
	b.workspace_size = whole;
	assert_int_equal(tile_la_kda_bwd(x->la, &b), TILE_ERR_ARG);   /* the maps' bytes missing */
	assert_non_null(strstr(tile_la_error(x->la), "workspace_size"));
	char err[256];
	assert_int_equal(tile_la_kda_bwd_check(&b, err, sizeof err), TILE_OK);   /* the least */
	b.workspace_size = ws;
	clear_launches();
	tile_status st = tile_la_kda_bwd(x->la, &b);
	default_options();
	if (st != TILE_OK)
		fail_msg("tile_la_kda_bwd: %s: %s", tile_status_str(st), tile_la_error(x->la));
	const want w[] = {{"chunk_prep", 20 * 8, 0}, {"kda_bwd_recur", 2 * 8 * 8, 0},
			  {"chunk_map_t", 8 * 8 * 2, 1}, {"chunk_chain_t", 8 * 8, 1},
			  {"kda_bwd_recur", 2 * 8 * 8, 1},
			  {"kda_bwd_chunk", 20 * 8, 0}, {"kda_bwd_intra", 20 * 8, 0},
			  {"kda_bwd_finish", 69 * 2 + 8, 0}};
	expect_launches(w, 8);
	expect_stream(8, b.stream);
	uint64_t base = (uint64_t)(uintptr_t)b.workspace;
	la_kda_layout prep = la_kda_prep_layout(a, 0);
	expect_walk_parts();
	uint64_t xb = ptr_of(1, "kda_bwd_recur", "XB"), xbb = ptr_of(1, "kda_bwd_recur", "XBB");
	assert_true(xb >= base + whole - 256 && xbb >= xb + maps * 4);
	assert_true(xbb + maps * 4 <= base + ws);
	expect_ptr(4, "kda_bwd_recur", "XB", xb);
	expect_ptr(4, "kda_bwd_recur", "XBB", xbb);
	expect_ptr(2, "chunk_map_t", "W", base + prep.w);
	expect_ptr(2, "chunk_map_t", "U", base + prep.u);
	expect_ptr(2, "chunk_map_t", "XB", xb);
	expect_i32(2, "chunk_map_t", "chained", 1);
	expect_i32(2, "chunk_map_t", "seg_len", 3);
	expect_i32(2, "chunk_map_t", "XS", 8);
	expect_i32(2, "chunk_map_t", "XR", 8 * 64);
	uint64_t xph = ptr_of(2, "chunk_map_t", "XPH"), xpl = ptr_of(2, "chunk_map_t", "XPL");
	assert_true(xph >= xbb + maps * 4 && xpl >= xph + maps * 2 && xpl + maps * 2 <= base + ws);
	uint64_t xth = ptr_of(2, "chunk_map_t", "XTH"), xtl = ptr_of(2, "chunk_map_t", "XTL");
	assert_true(xth >= xpl + maps * 2 && xtl >= xth + maps * 2 && xtl + maps * 2 <= base + ws);
	expect_i32(2, "chunk_map_t", "with_back", 1);
	expect_ptr(3, "chunk_chain_t", "XTH", xth);
	expect_ptr(3, "chunk_chain_t", "XTL", xtl);
	expect_ptr(3, "chunk_chain_t", "XPH", xph);
	expect_ptr(3, "chunk_chain_t", "XPL", xpl);
	expect_ptr(3, "chunk_chain_t", "XB", xb);
	expect_ptr(3, "chunk_chain_t", "XBB", xbb);
	expect_ptr(3, "chunk_chain_t", "XBBT", xbb);
	expect_i32(3, "chunk_chain_t", "with_back", 1);
	expect_i32(3, "chunk_chain_t", "NX", 8);
}

/* The GDN backward over segments (the same call and forced length as test_bwd_segments):
 * gdn_kkt_lo, the walks' part 1 (kda_bwd_recur's GDN build), beside it gdn_map_t's maps in
 * their two-term build with P_j^T for the reverse chain (early start, reading gdn_kkt's
 * outputs), chunk_chain_t's two chains, part 2, then gdn_bwd_chunk and kda_bwd_finish. */
static void test_gdn_bwd_segments(void **state)
{
	fixture *x = *state;
	tile_la_bwd_args b = segmented_bwd_call();
	tile_la_fwd_args *a = &b.fwd;
	size_t ws = 0;
	set_options((tile_la_options){.gdn_segments = 3});
	assert_int_equal(tile_la_gdn_bwd_workspace(x->la, &b, &ws), TILE_OK);
	b.workspace_size = ws;
	clear_launches();
	tile_status st = tile_la_gdn_bwd(x->la, &b);
	default_options();
	if (st != TILE_OK)
		fail_msg("tile_la_gdn_bwd: %s: %s", tile_status_str(st), tile_la_error(x->la));
	const want w[] = {{"gdn_kkt", 20, 0}, {"kda_bwd_recur", 2 * 8 * 8, 0},
			  {"gdn_map_t", 8 * 8 * 2, 1}, {"chunk_chain_t", 8 * 8, 1},
			  {"kda_bwd_recur", 2 * 8 * 8, 1}, {"gdn_bwd_chunk", 20 * 8, 0},
			  {"kda_bwd_finish", 69 * 2 + 8, 0}};
	expect_launches(w, 7);
	expect_stream(7, b.stream);
	expect_module(0, a, "gdn_kkt_lo");
	expect_module(1, a, "gdn_bwd_walks");
	expect_module_build(2, a, "gdn_map_t", "_x");
	expect_module(4, a, "gdn_bwd_walks");
	expect_walk_parts();
	uint64_t xb = ptr_of(1, "kda_bwd_recur", "XB"), xbb = ptr_of(1, "kda_bwd_recur", "XBB");
	expect_ptr(2, "gdn_map_t", "XB", xb);
	expect_ptr(2, "gdn_map_t", "Ag", ptr_of(0, "gdn_kkt", "A"));
	expect_ptr(2, "gdn_map_t", "Gm", ptr_of(0, "gdn_kkt", "GamO"));
	expect_ptr(2, "gdn_map_t", "Bt", ptr_of(0, "gdn_kkt", "BetO"));
	expect_ptr(2, "gdn_map_t", "RK", ptr_of(0, "gdn_kkt", "RK"));
	expect_i32(2, "gdn_map_t", "seg_len", 3);
	expect_i32(2, "gdn_map_t", "XS", 8);
	expect_i32(2, "gdn_map_t", "XR", 8 * 64);
	expect_i32(2, "gdn_map_t", "with_back", 1);
	static const char *const maps[] = {"XPH", "XPL", "XTH", "XTL"};
	for (int i = 0; i < 4; i++) {
		uint64_t p = ptr_of(2, "gdn_map_t", maps[i]);
		assert_true(p > xbb);
		for (int j = 0; j < i; j++)
			assert_true(p >= ptr_of(2, "gdn_map_t", maps[j]) + 8 * 64 * 8 * 64 * 2);
		expect_ptr(3, "chunk_chain_t", maps[i], p);
	}
	expect_ptr(3, "chunk_chain_t", "XB", xb);
	expect_ptr(3, "chunk_chain_t", "XBB", xbb);
	expect_i32(3, "chunk_chain_t", "with_back", 1);
	expect_ptr(4, "kda_bwd_recur", "XB", xb);
	expect_ptr(4, "kda_bwd_recur", "XBB", xbb);
}

/* The backward's whole walks at D = 128: with both value slices of a head in one CTA
 * (gdn_bwd_walks_w, KDA's kda_bwd_recur_w, 2 x N x HV CTAs) where a CTA per slice would take
 * more than one wave (2 x 2 sequences x 64 heads x 2 slices = 512 > 132 SMs), a CTA per slice
 * in one wave (8 heads: 64) or where bwd_wide is OFF; never over segments; bwd_wide ON forces
 * it. */
static void test_bwd_wide_walks(void **state)
{
	fixture *x = *state;
	static const struct {
		int kda, hv, opt, segments;
		const char *stem;
		unsigned int ctas;
	} cases[] = {
		{0, 64, TILE_LA_AUTO, TILE_LA_AUTO, "gdn_bwd_walks_w", 2 * 2 * 64},
		{0, 64, TILE_LA_OFF, TILE_LA_AUTO, "gdn_bwd_walks", 2 * 2 * 64 * 2},
		{0, 8, TILE_LA_AUTO, TILE_LA_OFF, "gdn_bwd_walks", 2 * 2 * 8 * 2},
		{0, 8, TILE_LA_ON, TILE_LA_OFF, "gdn_bwd_walks_w", 2 * 2 * 8},
		/* part 1 over segments: 5 segment slots (300 rows in segments of 128, one more per
		 * sequence) */
		{0, 8, TILE_LA_ON, 2, "gdn_bwd_walks", 2 * 5 * 8 * 2},
		{1, 64, TILE_LA_AUTO, TILE_LA_AUTO, "kda_bwd_recur_w", 2 * 2 * 64},
		{1, 64, TILE_LA_OFF, TILE_LA_AUTO, "kda_bwd_recur", 2 * 2 * 64 * 2},
		{1, 8, TILE_LA_AUTO, TILE_LA_OFF, "kda_bwd_recur", 2 * 2 * 8 * 2},
		{1, 8, TILE_LA_ON, TILE_LA_OFF, "kda_bwd_recur_w", 2 * 2 * 8},
		{1, 8, TILE_LA_ON, 2, "kda_bwd_recur", 2 * 5 * 8 * 2},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		tile_la_bwd_args b = bwd_call();
		tile_la_fwd_args *a = &b.fwd;
		a->head_dim = 128;
		a->num_v_heads = cases[i].hv;
		int kda = cases[i].kda;
		tile_la_options o = {.bwd_wide = cases[i].opt};
		if (kda)
			o.kda_segments = cases[i].segments;
		else
			o.gdn_segments = cases[i].segments;
		set_options(o);
		size_t ws = 0;
		assert_int_equal((kda ? tile_la_kda_bwd_workspace : tile_la_gdn_bwd_workspace)(
					 x->la, &b, &ws), TILE_OK);
		b.workspace_size = ws;
		clear_launches();
		tile_status st = (kda ? tile_la_kda_bwd : tile_la_gdn_bwd)(x->la, &b);
		if (st != TILE_OK)
			fail_msg("case %zu: %s: %s", i, tile_status_str(st), tile_la_error(x->la));
		assert_string_equal(fake(0)->log[1].kernel, "kda_bwd_recur");
		expect_module(1, a, cases[i].stem);
		if (fake(0)->log[1].grid[0] != cases[i].ctas)
			fail_msg("case %zu: the walks in %u CTAs, expected %u", i,
				 fake(0)->log[1].grid[0], cases[i].ctas);
		/* every other launch as without the option */
		assert_string_equal(fake(0)->log[2].kernel,
				    cases[i].segments > 0 ? (kda ? "chunk_map_t" : "gdn_map_t") :
				    kda ? "kda_bwd_chunk" : "gdn_bwd_chunk");
	}
	set_options((tile_la_options){0});
}

/* The GDN backward (2 sequences of 100 and 200 tokens, GVA 2/8, D = 64, the in-kernel gate with
 * dt_bias, g in bf16): gdn_kkt (the forward's, with AQK and the lo terms of A and AQK); the walks
 * (kda_bwd_recur's GDN build) reading its outputs and the inputs, publishing S and dS in one
 * term; gdn_bwd_chunk, every gradient of a chunk; kda_bwd_finish summing dg's parts per key slab
 * into dg and ddt_bias over the channels. */
static size_t up256(size_t n)
{
	return (n + 255) / 256 * 256;
}

static void test_gdn_bwd(void **state)
{
	fixture *x = *state;
	tile_la_bwd_args b = bwd_call();
	tile_la_fwd_args *a = &b.fwd;
	a->gate_dtype = TILE_LA_BF16;
	size_t ws = 0;
	assert_int_equal(tile_la_gdn_bwd_workspace(x->la, &b, &ws), TILE_OK);
	/* 300 tokens, 7 chunk slots (448 rows), 2 key heads, 8 value heads, D = 64, IN 2 bytes:
	 * gdn_kkt's A (IN [300, 8, 64]; no token-major AQK), 1/|q|, 1/|k| (f32 [2, 448]), Gamma,
	 * beta (f32 [8, 448]); gdn_kkt_lo's W (IN [448, 8, 64]); S and dS in one term (IN [7, 8,
	 * 64, 64] each); A and AQK per slot
	 * (IN [7, 8, 2, 64, 64] each); dq^, dk^ (f32 [300, 8, 64] each); dbeta's parts (f32 [300,
	 * 8, 3]); dA_log's and ddt_bias's slot sums (f32 [7, 1, 8], [7, 8, 64]); dg's parts (f32
	 * [300, 8, 1]); no maps (whole walks) */
	size_t tok = (size_t)300 * 8 * 64, state_hi = (size_t)7 * 8 * 64 * 64 * 2;
	size_t slot_mats = (size_t)7 * 8 * 2 * 64 * 64 * 2;
	size_t slot_rows = (size_t)448 * 8 * 64 * 2;
	size_t expected = up256(tok * 2) + 2 * up256(2 * 448 * 4) + 2 * up256(8 * 448 * 4) +
		      up256(slot_rows) + 2 * up256(state_hi) + 2 * up256(slot_mats) + 2 * up256(tok * 4) +
		      up256(300 * 8 * 3 * 4) + up256(7 * 8 * 4) + up256(7 * 8 * 64 * 4) +
		      up256(300 * 8 * 4);
	if (ws != expected)
		fail_msg("the GDN backward's workspace: %zu bytes, expected %zu", ws, expected);
	b.workspace_size = ws;
	clear_launches();
	tile_status st = tile_la_gdn_bwd(x->la, &b);
	if (st != TILE_OK)
		fail_msg("tile_la_gdn_bwd: %s: %s", tile_status_str(st), tile_la_error(x->la));
	/* no kda_bwd_wy (gdn_kkt leaves its outputs); one kernel per chunk and value head */
	const want w[] = {{"gdn_kkt", 7, 0}, {"kda_bwd_recur", 2 * 2 * 8 * 1, 0},
			  {"gdn_bwd_chunk", 7 * 8, 0}, {"kda_bwd_finish", 19 * 2 + 8, 0}};
	expect_launches(w, 4);
	expect_stream(4, b.stream);
	expect_module(0, a, "gdn_kkt_lo");   /* its build with the lo terms */
	expect_module(1, a, "gdn_bwd_walks");   /* S and dS in one term */
	expect_module(2, a, "gdn_bwd_chunk");
	expect_module(3, a, "kda_bwd");      /* (the gate does not reach it) */
	uint64_t base = (uint64_t)(uintptr_t)b.workspace;
	/* gdn_kkt reads g (bf16, its flag) and dt_bias as given, and leaves A and AQK per slot
	 * (no token-major AQK) */
	expect_ptr(0, "gdn_kkt", "G16", (uint64_t)(uintptr_t)a->g);
	expect_i32(0, "gdn_kkt", "g16", 1);
	expect_ptr(0, "gdn_kkt", "DtBias", (uint64_t)(uintptr_t)a->dt_bias);
	expect_i32(0, "gdn_kkt", "has_bias", 1);
	expect_i32(0, "gdn_kkt", "aqk_out", 0);
	uint64_t ah = ptr_of(0, "gdn_kkt", "AH"), aqh = ptr_of(0, "gdn_kkt", "AQH");
	assert_true(ah > base && aqh >= ah + slot_mats && aqh + slot_mats <= base + ws);
	assert_true(ptr_of(0, "gdn_kkt", "A") + tok * 2 <= ah);
	/* the walks and gdn_bwd_chunk read them, the row vectors where gdn_kkt left them, and
	 * the inputs */
	expect_ptr(1, "kda_bwd_recur", "AH", ah);
	expect_ptr(1, "kda_bwd_recur", "AQH", aqh);
	/* ... and the backward walk's W */
	uint64_t wg = ptr_of(0, "gdn_kkt", "WG");
	assert_true(wg > base && wg + slot_rows <= base + ws);
	expect_ptr(1, "kda_bwd_recur", "W", wg);
	expect_ptr(1, "kda_bwd_recur", "Qt", (uint64_t)(uintptr_t)a->q);
	expect_ptr(2, "gdn_bwd_chunk", "AH", ah);
	expect_ptr(2, "gdn_bwd_chunk", "AQH", aqh);
	static const char *const rows_out[] = {"GamO", "BetO", "RQ", "RK"};
	static const char *const rows_in[] = {"Gm", "Bt", "RQ", "RK"};
	for (int i = 0; i < 4; i++) {
		expect_ptr(1, "kda_bwd_recur", rows_in[i], ptr_of(0, "gdn_kkt", rows_out[i]));
		expect_ptr(2, "gdn_bwd_chunk", rows_in[i], ptr_of(0, "gdn_kkt", rows_out[i]));
	}
	expect_ptr(1, "kda_bwd_recur", "Kt", (uint64_t)(uintptr_t)a->k);
	expect_ptr(1, "kda_bwd_recur", "Vt", (uint64_t)(uintptr_t)a->v);
	expect_ptr(1, "kda_bwd_recur", "DOt", (uint64_t)(uintptr_t)b.dout);
	expect_i32(1, "kda_bwd_recur", "TP", 7 * 64);
	expect_i32(2, "gdn_bwd_chunk", "TP", 7 * 64);
	/* the walks' S and dS, one term each */
	uint64_t sh = ptr_of(1, "kda_bwd_recur", "SH");
	expect_ptr(1, "kda_bwd_recur", "DBH", sh + state_hi);
	expect_ptr(2, "gdn_bwd_chunk", "SH", sh);
	expect_ptr(2, "gdn_bwd_chunk", "DBH", sh + state_hi);
	/* the inputs as given: q, k, v, do, g and dt_bias */
	expect_ptr(2, "gdn_bwd_chunk", "Qt", (uint64_t)(uintptr_t)a->q);
	expect_ptr(2, "gdn_bwd_chunk", "Kt", (uint64_t)(uintptr_t)a->k);
	expect_ptr(2, "gdn_bwd_chunk", "Vt", (uint64_t)(uintptr_t)a->v);
	expect_ptr(2, "gdn_bwd_chunk", "DOt", (uint64_t)(uintptr_t)b.dout);
	expect_ptr(2, "gdn_bwd_chunk", "G16", (uint64_t)(uintptr_t)a->g);
	expect_ptr(2, "gdn_bwd_chunk", "DtBias", (uint64_t)(uintptr_t)a->dt_bias);
	expect_ptr(2, "gdn_bwd_chunk", "DV", (uint64_t)(uintptr_t)b.dv);
	expect_ptr(2, "gdn_bwd_chunk", "DVt", (uint64_t)(uintptr_t)b.dv);   /* whole chunks' */
	expect_i32(2, "gdn_bwd_chunk", "g16", 1);
	expect_i32(2, "gdn_bwd_chunk", "GC", 1);
	expect_i32(2, "gdn_bwd_chunk", "gate_mode", 1);
	expect_i32(2, "gdn_bwd_chunk", "has_bias", 1);
	/* dbeta's parts, dg's part per key slab (one at D = 64), then summed by kda_bwd_finish;
	 * the gate parameters' per-slot sums; dq^ and dk^ per value head */
	uint64_t dgp = ptr_of(2, "gdn_bwd_chunk", "DGP");
	assert_true(dgp > base && dgp + 300 * 8 * 1 * 4 <= base + ws);
	expect_ptr(3, "kda_bwd_finish", "DGP", dgp);
	static const char *const parts[] = {"DBW", "DAL", "DDT", "DQW", "DKW"};
	for (int i = 0; i < 5; i++) {
		uint64_t p = ptr_of(2, "gdn_bwd_chunk", parts[i]);
		assert_true(p > base && p < base + ws);
		expect_ptr(3, "kda_bwd_finish", parts[i], p);
	}
	expect_ptr(3, "kda_bwd_finish", "DG16", (uint64_t)(uintptr_t)b.dg);
	expect_i32(3, "kda_bwd_finish", "g16", 1);
	expect_i32(3, "kda_bwd_finish", "GC", 1);
	expect_ptr(3, "kda_bwd_finish", "DDtBias", (uint64_t)(uintptr_t)b.ddt_bias);
	expect_ptr(3, "kda_bwd_finish", "DALog", (uint64_t)(uintptr_t)b.dA_log);
	expect_i32(3, "kda_bwd_finish", "want_ddt", 1);
	/* four value heads a q/k head: kda_bwd_finish sums dq^ and dk^ and writes dq and dk */
	expect_i32(3, "kda_bwd_finish", "dqk_done", 0);
	/* one bad argument: nothing launches */
	clear_launches();
	b.ddt_bias = (float *)(uintptr_t)a->dt_bias;
	assert_int_equal(tile_la_gdn_bwd(x->la, &b), TILE_ERR_ARG);
	assert_int_equal(fake(0)->launches, 0);
}

/* GDN with one value head per q/k head (2/2): gdn_bwd_chunk's DQK_FINAL build writes dq and dk
 * itself (the l2norm's backward in it) and kda_bwd_finish skips them. */
static void test_gdn_bwd_dqk_final(void **state)
{
	fixture *x = *state;
	tile_la_bwd_args b = bwd_call();
	tile_la_fwd_args *a = &b.fwd;
	a->num_v_heads = 2;
	a->use_qk_l2norm_in_kernel = 1;
	size_t ws = 0;
	assert_int_equal(tile_la_gdn_bwd_workspace(x->la, &b, &ws), TILE_OK);
	b.workspace_size = ws;
	clear_launches();
	tile_status st = tile_la_gdn_bwd(x->la, &b);
	if (st != TILE_OK)
		fail_msg("tile_la_gdn_bwd: %s: %s", tile_status_str(st), tile_la_error(x->la));
	const want w[] = {{"gdn_kkt", 7, 0}, {"kda_bwd_recur", 2 * 2 * 2 * 1, 0},
			  {"gdn_bwd_chunk", 7 * 2, 0}, {"kda_bwd_finish", 19 * 2 + 2, 0}};
	expect_launches(w, 4);
	expect_module(2, a, "gdn_bwd_chunk_dqk");
	expect_i32(2, "gdn_bwd_chunk", "l2norm", 1);
	expect_i32(3, "kda_bwd_finish", "dqk_done", 1);
	static const char *const outs[] = {"DQ", "DQt", "DK", "DKt"};   /* (t: whole chunks') */
	for (int i = 0; i < 4; i++)
		expect_ptr(2, "gdn_bwd_chunk", outs[i],
			   (uint64_t)(uintptr_t)(i < 2 ? b.dq : b.dk));
	/* no f32 dq^, dk^ regions in its workspace: both empty, where dbeta's parts begin */
	uint64_t dbw = ptr_of(2, "gdn_bwd_chunk", "DBW");
	expect_ptr(2, "gdn_bwd_chunk", "DQW", dbw);
	expect_ptr(2, "gdn_bwd_chunk", "DKW", dbw);
	/* without the l2norm dq and dk are dq^ and dk^ as they are */
	a->use_qk_l2norm_in_kernel = 0;
	clear_launches();
	assert_int_equal(tile_la_gdn_bwd(x->la, &b), TILE_OK);
	expect_i32(2, "gdn_bwd_chunk", "l2norm", 0);
}

/* A GDN forward with save_for_backward (the backward call's shapes: 2 sequences of 100 and 200
 * tokens, GVA 2/8, D = 64): its gdn_kkt is the _lo build (AQK token-major for gdn_fused too)
 * leaving W, A and AQK in two terms after gdn_kkt's regions, where la_gdn_saved_layout says;
 * the backward given that workspace launches no gdn_kkt and reads all of them from it, its own
 * workspace smaller by what it no longer recomputes. */
static void test_gdn_save_for_backward(void **state)
{
	fixture *x = *state;
	tile_la_bwd_args b = bwd_call();
	tile_la_fwd_args *a = &b.fwd;
	a->o = ADDR(6);
	a->workspace = ADDR(40);
	size_t plain = 0, kept = 0, own = 0, recomputing = 0;
	assert_int_equal(tile_la_gdn_fwd_workspace(x->la, a, &plain), TILE_OK);
	a->save_for_backward = 1;
	/* W [448, 8, 64], A and AQK per slot [7, 8, 2, 64, 64], bf16 */
	size_t extra = up256((size_t)448 * 8 * 64 * 2) + 2 * up256((size_t)7 * 8 * 2 * 64 * 64 * 2);
	la_plan p = run_gdn(x, a);
	kept = a->workspace_size;
	if (kept != plain + extra)
		fail_msg("the forward's workspace with save_for_backward: %zu bytes, expected %zu",
			 kept, plain + extra);
	expect_module(0, a, "gdn_kkt_lo");
	expect_i32(0, "gdn_kkt", "aqk_out", 1);
	la_gdn_layout s = la_gdn_saved_layout(a);
	const la_gdn_layout *g = &p.gl;
	assert_true(s.a == g->a && s.aqk == g->aqk && s.rq == g->rq && s.rk == g->rk &&
		    s.gam == g->gam && s.bet == g->bet && s.w == g->w && s.ah == g->ah &&
		    s.aqh == g->aqh && s.xb <= g->xb);
	uint64_t fw = ws_of(a);
	expect_ptr(0, "gdn_kkt", "AQt", fw + s.aqk);
	expect_ptr(0, "gdn_kkt", "AH", fw + s.ah);
	expect_ptr(0, "gdn_kkt", "AQH", fw + s.aqh);
	expect_ptr(0, "gdn_kkt", "WG", fw + s.w);
	assert_true(s.ah >= s.w + (size_t)448 * 8 * 64 * 2 && s.xb <= kept);

	/* the backward over the kept workspace */
	a->save_for_backward = 0;   /* (the backward reads only fwd_workspace) */
	assert_int_equal(tile_la_gdn_bwd_workspace(x->la, &b, &recomputing), TILE_OK);
	b.fwd_workspace = a->workspace, b.fwd_workspace_size = kept;
	assert_int_equal(tile_la_gdn_bwd_workspace(x->la, &b, &own), TILE_OK);
	size_t gprep = up256((size_t)300 * 8 * 64 * 2) + 2 * up256(2 * 448 * 4) +
		       2 * up256(8 * 448 * 4);
	if (own != recomputing - gprep - extra)
		fail_msg("the backward's own workspace: %zu bytes, expected %zu", own,
			 recomputing - gprep - extra);
	b.workspace_size = own;
	clear_launches();
	tile_status st = tile_la_gdn_bwd(x->la, &b);
	if (st != TILE_OK)
		fail_msg("tile_la_gdn_bwd: %s: %s", tile_status_str(st), tile_la_error(x->la));
	const want w[] = {{"kda_bwd_recur", 2 * 2 * 8 * 1, 0}, {"gdn_bwd_chunk", 7 * 8, 0},
			  {"kda_bwd_finish", 19 * 2 + 8, 0}};
	expect_launches(w, 3);
	static const char *const rows[] = {"Gm", "Bt", "RQ", "RK"};
	const size_t at[] = {s.gam, s.bet, s.rq, s.rk};
	for (int i = 0; i < 4; i++) {
		expect_ptr(0, "kda_bwd_recur", rows[i], fw + at[i]);
		expect_ptr(1, "gdn_bwd_chunk", rows[i], fw + at[i]);
	}
	expect_ptr(0, "kda_bwd_recur", "W", fw + s.w);
	expect_ptr(0, "kda_bwd_recur", "AH", fw + s.ah);
	expect_ptr(0, "kda_bwd_recur", "AQH", fw + s.aqh);
	expect_ptr(1, "gdn_bwd_chunk", "AH", fw + s.ah);
	expect_ptr(1, "gdn_bwd_chunk", "AQH", fw + s.aqh);
	/* what the backward writes stays in its own workspace */
	uint64_t bw = (uint64_t)(uintptr_t)b.workspace;
	uint64_t sh = ptr_of(0, "kda_bwd_recur", "SH");
	assert_true(sh >= bw && sh < bw + own);
	uint64_t dbw = ptr_of(1, "gdn_bwd_chunk", "DBW");
	assert_true(dbw >= bw && dbw < bw + own);
}

/* The module each launch of the last call came from is "<stem>_<dtype>_d<D>", with "_g16"
 * for chunk_prep's builds that read g in the input dtype (KDA's g comes by TMA in the dtype
 * its build was made for; beta and GDN's g are read in either by a flag, one build). */
static int nocb_seen; /* chunk_prep_nocb launches checked (the test covers both builds) */

static void expect_modules(const tile_la_fwd_args *a, int kda)
{
	fake_cuda *f = fake(0);
	la_plan p = plan_of(a, kda);
	for (int i = 0; i < p.nlaunches && i < FAKE_LOG; i++) {
		la_kernel k = p.launch[i].kernel;
		int g16 = a->gate_dtype != TILE_LA_F32 && (k == LA_K_PREP || k == LA_K_PREP_NOCB);
		nocb_seen += k == LA_K_PREP_NOCB;
		char name[64];
		snprintf(name, sizeof name, "%s_%s_d%d%s", la_kernel_stem(k),
			 a->dtype == TILE_LA_F16 ? "f16" : "bf16", a->head_dim, g16 ? "_g16" : "");
		const tile_embedded_module *em = tile_la_kernels_find(name);
		assert_non_null(em);
		const void *image = em->cubin ? (const void *)em->cubin : (const void *)em->ptx;
		if (f->log[i].image != image)
			fail_msg("launch %d (%s): not from module %s", i, f->log[i].kernel, name);
	}
}

/* g and beta each in f32 or the input dtype: the same plans, chunk_prep and chunk_prep_nocb
 * from their _g16 builds exactly when g is 16-bit; over segments (chunk_prep), whole sequences
 * without the l2norm (chunk_prep_nocb at D = 128), chunk states and GDN, both dtypes and head
 * dims */
static void test_gate_dtype_modules(void **state)
{
	fixture *x = *state;
	for (int v = 0; v < 48; v++) {
		int g16 = v & 1, b16 = v >> 1 & 1, f16 = v >> 2 & 1, d64 = v >> 3 & 1, plan = v >> 4;
		tile_la_fwd_args a = kda_args(2, 1000, 4);
		a.dtype = f16 ? TILE_LA_F16 : TILE_LA_BF16;
		a.gate_dtype = g16 ? a.dtype : TILE_LA_F32;
		a.beta_dtype = b16 ? a.dtype : TILE_LA_F32;
		a.head_dim = d64 ? 64 : 128;
		a.use_qk_l2norm_in_kernel = plan != 1;
		if (plan == 2) {
			a.chunk_states = ADDR(12);
			a.num_chunk_states = 2 * 16;
		}
		size_t ws = 0;
		assert_int_equal(tile_la_kda_fwd_workspace(the_la, &a, &ws), TILE_OK);
		a.workspace_size = ws;
		run_kda(x, &a);
		expect_modules(&a, 1);
		assert_int_equal(tile_la_gdn_fwd_workspace(the_la, &a, &ws), TILE_OK);
		a.workspace_size = ws;
		clear_launches();
		assert_int_equal(tile_la_gdn_fwd(x->la, &a), TILE_OK);
		expect_plan_ran(&a, 0);
		expect_modules(&a, 0);
	}
	assert_true(nocb_seen > 0);
}

/* The KDA backward's recompute from chunk_prep_bwd's build of the call's dtype, head dim and
 * gate dtype ("chunk_prep_bwd_<dtype>_d<D>", "_g16" for g in the input dtype), its _qgl build
 * (QG's lo term too) when dh0 is asked for. */
static void test_kda_bwd_prep_modules(void **state)
{
	fixture *x = *state;
	for (int v = 0; v < 8; v++) {
		tile_la_bwd_args b = bwd_call();
		tile_la_fwd_args *a = &b.fwd;
		a->dtype = v & 1 ? TILE_LA_F16 : TILE_LA_BF16;
		a->gate_dtype = v & 2 ? a->dtype : TILE_LA_F32;
		a->head_dim = v & 4 ? 128 : 64;
		run_kda_bwd(x, &b);
		expect_module_build(0, a, "chunk_prep_bwd_qgl", v & 2 ? "_g16" : "");
		assert_string_equal(fake(0)->log[2].kernel, "kda_bwd_chunk");   /* no kda_bwd_wy */
		b.dh0 = NULL;
		run_kda_bwd(x, &b);
		expect_module_build(0, a, "chunk_prep_bwd", v & 2 ? "_g16" : "");
	}
}

/* A create that fails on the fake driver (a module it will not load) keeps its reason for
 * tile_la_error(NULL); the next successful create clears it. */
static void test_create_error_kept(void **state)
{
	(void)state;
	fake_cuda *f = fake(0);
	tile_rt_options opt;
	memset(&opt, 0, sizeof opt);
	opt.driver_path = FAKE_CUDA_PATH;
	tile_rt *rt = NULL;
	tile_la *la = NULL;
	assert_int_equal(tile_rt_create_ex(&opt, &rt), TILE_OK);
	f->any_image = 0;
	tile_status st = tile_la_create_with(rt, &la);
	f->any_image = 1;
	assert_int_not_equal(st, TILE_OK);
	assert_null(la);
	if (!strstr(tile_la_error(NULL), "loading chunk_prep_bf16_d64"))
		fail_msg("tile_la_error(NULL) after a failed create: '%s'", tile_la_error(NULL));
	assert_int_equal(tile_la_create_with(rt, &la), TILE_OK);
	assert_string_equal(tile_la_error(NULL), "");
	tile_la_destroy(la);
	tile_rt_destroy(rt);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kda_lower_bound_maps),
		cmocka_unit_test(test_kda_lower_bound_whole),
		cmocka_unit_test(test_kda_wide),
		cmocka_unit_test(test_exact_state_builds),
		cmocka_unit_test(test_gdn_kkt_builds),
		cmocka_unit_test(test_kda_chunk_states),
		cmocka_unit_test(test_kda_no_tokens),
		cmocka_unit_test(test_kda_lower_bound_varlen),
		cmocka_unit_test(test_kda_chained_any_gate),
		cmocka_unit_test(test_gdn_chained),
		cmocka_unit_test(test_gdn_forced_and_varlen),
		cmocka_unit_test(test_plans_match_the_metadata),
		cmocka_unit_test(test_kda_bwd),
		cmocka_unit_test(test_kda_bwd_saved),
		cmocka_unit_test(test_kda_bwd_saved_qg_lo),
		cmocka_unit_test(test_kda_saved_setup),
		cmocka_unit_test(test_kda_saved_setup_no_warmups),
		cmocka_unit_test(test_bwd_segments),
		cmocka_unit_test(test_gdn_bwd_segments),
		cmocka_unit_test(test_gdn_bwd),
		cmocka_unit_test(test_gdn_bwd_dqk_final),
		cmocka_unit_test(test_gdn_save_for_backward),
		cmocka_unit_test(test_kda_bwd_segments_without_wy),
		cmocka_unit_test(test_kda_bwd_prep_modules),
		cmocka_unit_test(test_bwd_wide_walks),
		cmocka_unit_test(test_gate_dtype_modules),
		cmocka_unit_test(test_create_error_kept),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
