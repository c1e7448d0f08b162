/*
 * test_la_launch.c: the launch plans of the GDN/KDA forward on the fake driver
 * (tests/runtime/fake_cuda.c with `any_image`: the library's real cubins load, their kernels
 * are never run). Each call's kernels, grids and early-start flags are checked against what
 * kernels/src/la.c means to launch, and every launch passes the runtime's argument checks
 * against the kernels' real metadata: a list of arguments out of step with a kernel's
 * parameters fails here, on the CPU, not only on a GPU. Each call's plan (la_plan.h) is checked
 * against what ran, its CTA counts against the grids of the real metadata.
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

/* The call's plan (la_plan_make, on the fake's 132 SMs and the handle's options) is what ran:
 * its kernels in order, its early starts, and its CTA counts equal to the grids the kernels'
 * real metadata gave (gdn_kkt's: slots x H, a 2-D grid). */
static void expect_plan_ran(const tile_la_fwd_args *a, int kda)
{
	fake_cuda *f = fake(0);
	la_device dev = {132, 232448};
	tile_la_options opt;
	la_plan p;
	assert_int_equal(tile_la_get_options(the_la, &opt), TILE_OK);
	assert_int_equal(la_plan_make(a, kda, &dev, &opt, &p), TILE_OK);
	assert_int_equal(f->launches, p.nlaunches);
	for (int i = 0; i < p.nlaunches && i < FAKE_LOG; i++) {
		const la_launch *l = &p.launch[i];
		uint64_t grid = (uint64_t)f->log[i].grid[0] * f->log[i].grid[1] * f->log[i].grid[2];
		if (strcmp(f->log[i].kernel, la_kernel_name(l->kernel)) != 0 ||
		    grid != (uint64_t)l->ctas || f->log[i].early_start != l->early_start)
			fail_msg("launch %d: %s grid %llu early %d; the plan: %s %lld CTAs early %d", i,
				 f->log[i].kernel, (unsigned long long)grid, f->log[i].early_start,
				 la_kernel_name(l->kernel), (long long)l->ctas, l->early_start);
	}
}

static void run_kda(fixture *x, const tile_la_fwd_args *a)
{
	fake(0)->launches = 0;
	tile_status st = tile_la_kda_fwd(x->la, a);
	if (st != TILE_OK)
		fail_msg("tile_la_kda_fwd: %s: %s", tile_status_str(st), tile_la_error(x->la));
	expect_plan_ran(a, 1);
}

/* KDA 8/8 1x8192, lower-bound gate: segments of 16 chunks (9 segment slots), every warmup
 * expected to fail, so every segment after the first is chained: chunk_recur_t over the
 * first segments (a CTA per sequence, head and value slice), chunk_map_t beside it with
 * early start (4 per slot and head: B_j's two slices, P_j's two), chunk_chain_t (the starts,
 * chained once per sequence, head and slice), chunk_recur_t over the later segments; every
 * launch after chunk_prep with early start (each waits for the one before it) */
static void test_kda_lower_bound_maps(void **state)
{
	fixture *x = *state;
	tile_la_fwd_args a = kda_args(1, 8192, 8);
	lower_bound_gate(&a);
	run_kda(x, &a);
	const want w[] = {{"chunk_prep", 129 * 8, 0}, {"chunk_recur_t", 1 * 8 * 2, 1},
			  {"chunk_map_t", 9 * 8 * 4, 1}, {"chunk_chain_t", 9 * 8 * 2, 1},
			  {"chunk_recur_t", 9 * 8 * 2, 1}};
	expect_launches(w, 5);
	/* kda_map_kernel OFF: chunk_recur's own map CTAs, in mode 1's grid (3 slices per slice),
	 * then mode 3 (each failed segment chains its start) without early start */
	set_options((tile_la_options){.kda_map_kernel = TILE_LA_OFF});
	run_kda(x, &a);
	default_options();
	const want w0[] = {{"chunk_prep", 129 * 8, 0}, {"chunk_recur", 9 * 8 * 6, 1},
			   {"chunk_recur", 9 * 8 * 2, 0}};
	expect_launches(w0, 3);
	/* kda_transposed OFF: chunk_recur's mode 3 after chunk_map_t, with early start */
	set_options((tile_la_options){.kda_transposed = TILE_LA_OFF});
	run_kda(x, &a);
	default_options();
	const want wt[] = {{"chunk_prep", 129 * 8, 0}, {"chunk_recur", 9 * 8 * 2, 1},
			   {"chunk_map_t", 9 * 8 * 4, 1}, {"chunk_recur", 9 * 8 * 2, 1}};
	expect_launches(wt, 4);
	/* kda_transfer_maps OFF: no maps; mode 2 reruns the sequences with a failed segment */
	set_options((tile_la_options){.kda_transfer_maps = TILE_LA_OFF});
	run_kda(x, &a);
	default_options();
	const want w2[] = {{"chunk_prep", 129 * 8, 0}, {"chunk_recur", 9 * 8 * 2, 1},
			   {"chunk_recur", 1 * 8 * 2, 0}};
	expect_launches(w2, 3);
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
	run_kda(x, &a);
	const want w[] = {{"chunk_prep", 4 * 107 * 8, 0}, {"chunk_recur_t", 4 * 8 * 2, 1},
			  {"chunk_prep", 4 * 21 * 8, 1}, {"chunk_recur_t", 9 * 8 * 2, 1}};
	expect_launches(w, 4);
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
	tile_la_fwd_args p = kda_args(1, 32768, 8);
	p.cu_seqlens = (const int32_t *)ADDR(12);
	p.cu_seqlens_host = cu;
	p.num_seqs = 4;
	lower_bound_gate(&p);
	run_kda(x, &p);
	expect_launches(w, 4);
	/* a host copy whose equal lengths do not fit the tokens is not believed */
	static const int32_t too_long[5] = {0, 16384, 32768, 49152, 65536};
	p.cu_seqlens_host = too_long;
	run_kda(x, &p);
	expect_launches(w0, 2);
	p.cu_seqlens_host = NULL;
	size_t ws = 0;
	assert_int_equal(tile_la_kda_fwd_workspace(the_la, &p, &ws), TILE_OK);
	p.workspace_size = ws;
	run_kda(x, &p);
	expect_launches(w0, 2);
}

/* KDA 16/32 8192x4, the fast regime's gates: 256 chunk_recur_t CTAs would be two waves, so both
 * value slices of a head in one CTA (chunk_recur_w, 128 CTAs) */
static void test_kda_wide(void **state)
{
	fixture *x = *state;
	tile_la_fwd_args a = kda_args(4, 8192, 32);
	a.num_heads = 16;
	run_kda(x, &a);
	const want w[] = {{"chunk_prep", (512 + 4) * 32, 0}, {"chunk_recur_w", 4 * 32, 1}};
	expect_launches(w, 2);
}

/* chunk states requested, the fast regime's gates, 2 x 1000 tokens at 4 heads: context parallelism
 * in chunk_recur (10 segment slots), the transfer maps as chunk_recur's own CTAs in mode 1's
 * grid (failed warmups are not expected: no launch of chunk_map_t), then mode 3 (chunk_recur_t
 * writes no chunk states); kda_map_kernel ON forces chunk_map_t */
static void test_kda_chunk_states(void **state)
{
	fixture *x = *state;
	tile_la_fwd_args a = kda_args(2, 1000, 4);
	a.chunk_states = ADDR(12);
	a.num_chunk_states = 2 * 16;
	size_t ws = 0;
	assert_int_equal(tile_la_kda_fwd_workspace(the_la, &a, &ws), TILE_OK);
	a.workspace_size = ws;
	run_kda(x, &a);
	const want w[] = {{"chunk_prep", (32 + 2) * 4, 0}, {"chunk_recur", 10 * 4 * 6, 1},
			  {"chunk_recur", 10 * 4 * 2, 0}};
	expect_launches(w, 3);
	set_options((tile_la_options){.kda_map_kernel = TILE_LA_ON});
	run_kda(x, &a);
	default_options();
	const want w1[] = {{"chunk_prep", (32 + 2) * 4, 0}, {"chunk_recur", 10 * 4 * 2, 1},
			   {"chunk_map_t", 10 * 4 * 4, 1}, {"chunk_recur", 10 * 4 * 2, 1}};
	expect_launches(w1, 4);
	/* without the in-kernel l2norm no segments (the bound needs |k| <= 1): mode 0 */
	a.use_qk_l2norm_in_kernel = 0;
	run_kda(x, &a);
	const want w0[] = {{"chunk_prep", (32 + 2) * 4, 0}, {"chunk_recur", 2 * 4 * 2, 1}};
	expect_launches(w0, 2);
}

/* KDA 8/8 1024+7168 (the benchmark's varlen cell), lower-bound gate, the lengths known on the
 * host (FLA's cu_seqlens_cpu): the segment length from la_dispatch's replay; the same plan as
 * 1x8192 otherwise */
static void test_kda_lower_bound_varlen(void **state)
{
	fixture *x = *state;
	static const int32_t cu[3] = {0, 1024, 8192};
	tile_la_fwd_args a = kda_args(1, 8192, 8);
	a.cu_seqlens = (const int32_t *)ADDR(12);
	a.cu_seqlens_host = cu;
	a.num_seqs = 2;
	lower_bound_gate(&a);
	run_kda(x, &a);
	const want w[] = {{"chunk_prep", 130 * 8, 0}, {"chunk_recur_t", 2 * 8 * 2, 1},
			  {"chunk_map_t", 10 * 8 * 4, 1}, {"chunk_chain_t", 10 * 8 * 2, 1},
			  {"chunk_recur_t", 10 * 8 * 2, 1}};
	expect_launches(w, 5);
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

/* GDN 8/8 1x8192 (scalar gates): gdn_kkt (grid x the chunk slots), then gdn_fused over
 * segments of 16 chunks (mode 1: 9 slots x heads x slices) and once more over sequences
 * (mode 2: only those with a failed warmup run) */
static void test_gdn_segments(void **state)
{
	fixture *x = *state;
	tile_la_fwd_args a = kda_args(1, 8192, 8);
	size_t ws = 0;
	assert_int_equal(tile_la_gdn_fwd_workspace(the_la, &a, &ws), TILE_OK);
	a.workspace_size = ws;
	fake(0)->launches = 0;
	tile_status st = tile_la_gdn_fwd(x->la, &a);
	if (st != TILE_OK)
		fail_msg("tile_la_gdn_fwd: %s: %s", tile_status_str(st), tile_la_error(x->la));
	expect_plan_ran(&a, 0);
	const want w[] = {{"gdn_kkt", 129, 0}, {"gdn_fused", 9 * 8 * 2, 1},
			  {"gdn_fused", 1 * 8 * 2, 0}};
	expect_launches(w, 3);
}

/* Over a table of calls (fixed and varlen lengths, head counts, D, l2norm, chunk
 * states, the lower-bound gate; GDN and KDA) every plan's kernels and CTA counts are those of the launches made,
 * grids from the kernels' real metadata, so the plan's grid arithmetic (la_plan.c's `add`)
 * cannot drift from the kernels'. */
static void test_plans_match_the_metadata(void **state)
{
	fixture *x = *state;
	static const int32_t uneq[] = {0, 1024, 8192}, many[] = {0, 500, 1000, 1600, 2000, 4096};
	static const struct { int batch, T, nseq; const int32_t *cu; } calls[] = {
		{1, 1000, 0, NULL}, {1, 8192, 0, NULL}, {4, 8192, 0, NULL}, {2, 300, 0, NULL},
		{1, 0, 0, NULL}, {1, 8192, 2, uneq}, {1, 4096, 5, many},
	};
	static const int heads[][2] = {{1, 1}, {2, 8}, {8, 8}, {16, 32}, {64, 64}};
	int n = 0;
	for (size_t ci = 0; ci < sizeof calls / sizeof calls[0]; ci++)
		for (size_t hi = 0; hi < sizeof heads / sizeof heads[0]; hi++)
			for (int D = 64; D <= 128; D += 64)
				for (int v = 0; v < 8; v++) {
					int l2 = v & 1, gate = v >> 1 & 1, cs = v >> 2 & 1;
					tile_la_fwd_args a = kda_args(calls[ci].batch, calls[ci].T, 1);
					a.num_heads = heads[hi][0], a.num_v_heads = heads[hi][1];
					a.head_dim = D, a.use_qk_l2norm_in_kernel = l2;
					if (calls[ci].cu) {
						a.cu_seqlens = (const int32_t *)ADDR(12);
						a.num_seqs = calls[ci].nseq;
						a.cu_seqlens_host = v & 2 ? calls[ci].cu : NULL;
					}
					if (cs) {
						a.chunk_states = ADDR(13);
						a.num_chunk_states = calls[ci].T / 64 + 8;
					}
					if (gate) /* else log-space gates */
						lower_bound_gate(&a);
					size_t ws = 0;
					assert_int_equal(tile_la_kda_fwd_workspace(the_la, &a, &ws), TILE_OK);
					a.workspace_size = ws;
					run_kda(x, &a);
					a.use_lower_bound = 0, a.lower_bound = 0.0f; /* GDN has none */
					assert_int_equal(tile_la_gdn_fwd_workspace(the_la, &a, &ws), TILE_OK);
					a.workspace_size = ws;
					fake(0)->launches = 0;
					tile_status st = tile_la_gdn_fwd(x->la, &a);
					if (st != TILE_OK)
						fail_msg("tile_la_gdn_fwd: %s", tile_la_error(x->la));
					expect_plan_ran(&a, 0);
					n += 2;
				}
	print_message("%d calls: plans and launches agree\n", n);
}

/* The module each launch of the last call came from is "<stem>_<dtype>_d<D>", with "_g16"
 * for chunk_prep's builds that read g in the input dtype (KDA's g comes by TMA in the dtype
 * its build was made for; beta and GDN's g are read in either by a flag, one build). */
static int nocb_seen; /* chunk_prep_nocb launches checked (the test covers both builds) */

static void expect_modules(const tile_la_fwd_args *a, int kda)
{
	fake_cuda *f = fake(0);
	la_device dev = {132, 232448};
	tile_la_options opt;
	la_plan p;
	assert_int_equal(tile_la_get_options(the_la, &opt), TILE_OK);
	assert_int_equal(la_plan_make(a, kda, &dev, &opt, &p), TILE_OK);
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
		fake(0)->launches = 0;
		assert_int_equal(tile_la_gdn_fwd(x->la, &a), TILE_OK);
		expect_plan_ran(&a, 0);
		expect_modules(&a, 0);
	}
	assert_true(nocb_seen > 0);
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
		cmocka_unit_test(test_kda_chunk_states),
		cmocka_unit_test(test_kda_no_tokens),
		cmocka_unit_test(test_kda_lower_bound_varlen),
		cmocka_unit_test(test_gdn_segments),
		cmocka_unit_test(test_plans_match_the_metadata),
		cmocka_unit_test(test_gate_dtype_modules),
		cmocka_unit_test(test_create_error_kept),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
