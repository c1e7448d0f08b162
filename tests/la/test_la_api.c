/*
 * test_la_api.c: the argument validation of the GDN/KDA forward and backward API, one test per
 * rule, each checking the status and that the message names the argument, every output's
 * aliasing against every other buffer of both calls; plus the workspace query and the
 * handle's options. No device is needed: tile_la_fwd_check runs the same checks the
 * forward calls run before launching anything, and the workspace queries take a handle made
 * over the fake driver (tests/runtime/fake_cuda.c: an H200's 132 SMs).
 */
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fake_cuda.h"
#include "tile.h"
#include "tile_la.h"

/* The handle the workspace queries take: the fake driver's device (group_setup). */
static tile_la *LA;
static tile_rt *RT;

static int group_setup(void **state)
{
	(void)state;
	tile_rt_options opt;
	memset(&opt, 0, sizeof opt);
	opt.driver_path = FAKE_CUDA_PATH;
	void *lib = dlopen(FAKE_CUDA_PATH, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
	if (!lib)
		return -1;
	/* the library's real cubins load on the fake (never run) */
	fake_cuda_state_fn state_fn;
	void *sym = dlsym(lib, "fake_cuda_state");
	memcpy(&state_fn, &sym, sizeof state_fn);
	state_fn()->any_image = 1;
	if (tile_rt_create_ex(&opt, &RT) != TILE_OK || tile_la_create_with(RT, &LA) != TILE_OK)
		return -1;
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	tile_la_destroy(LA);
	tile_rt_destroy(RT);
	return 0;
}

/* Fake device addresses: only their alignment and extents are looked at; 2^44 apart, so
 * that no test's buffers overlap (the largest, a workspace, stays below 2^44 bytes). */
#define ADDR(n) ((void *)((uintptr_t)(n) << 44))

static tile_la_fwd_args valid_args(void)
{
	tile_la_fwd_args a;
	memset(&a, 0, sizeof a);
	a.batch = 2;
	a.seq_len = 100;
	a.num_heads = 2;
	a.num_v_heads = 4;
	a.head_dim = 128;
	a.dtype = TILE_LA_BF16;
	a.q = ADDR(1);
	a.k = ADDR(2);
	a.v = ADDR(3);
	a.g = ADDR(4);
	a.beta = ADDR(5);
	a.o = ADDR(6);
	a.workspace = ADDR(7);
	size_t ws = 0;
	assert_int_equal(tile_la_kda_fwd_workspace(LA, &a, &ws), TILE_OK);
	a.workspace_size = ws;
	return a;
}

/* The check fails with TILE_ERR_ARG and a message starting with `name`. */
static void expect_bad(const tile_la_fwd_args *a, int kda, const char *name)
{
	char msg[256];
	assert_int_equal(tile_la_fwd_check(a, kda, msg, sizeof msg), TILE_ERR_ARG);
	if (strncmp(msg, name, strlen(name)) != 0)
		fail_msg("expected a message about '%s', got '%s'", name, msg);
}

static void test_valid(void **state)
{
	(void)state;
	tile_la_fwd_args a = valid_args();
	char msg[256] = "x";
	assert_int_equal(tile_la_fwd_check(&a, 1, msg, sizeof msg), TILE_OK);
	assert_string_equal(msg, "");
	assert_int_equal(tile_la_fwd_check(&a, 0, NULL, 0), TILE_OK);
}

static void test_null_args(void **state)
{
	(void)state;
	char msg[64];
	assert_int_equal(tile_la_fwd_check(NULL, 1, msg, sizeof msg), TILE_ERR_ARG);
	assert_string_equal(msg, "args: NULL");
	size_t ws;
	assert_int_equal(tile_la_gdn_fwd_workspace(LA, NULL, &ws), TILE_ERR_ARG);
	tile_la_fwd_args a = valid_args();
	assert_int_equal(tile_la_gdn_fwd_workspace(LA, &a, NULL), TILE_ERR_ARG);
	assert_int_equal(tile_la_kda_fwd(NULL, &a), TILE_ERR_ARG);
	tile_la_destroy(NULL);
	assert_int_equal(tile_la_create_with(NULL, NULL), TILE_ERR_ARG);
}

static void test_shapes(void **state)
{
	(void)state;
	tile_la_fwd_args a = valid_args();
	a.dtype = 0;
	expect_bad(&a, 1, "dtype");
	a = valid_args();
	a.head_dim = 96;
	expect_bad(&a, 1, "head_dim");
	a = valid_args();
	a.batch = 0;
	expect_bad(&a, 1, "batch");
	a = valid_args();
	a.seq_len = -1;
	expect_bad(&a, 1, "seq_len");
	a = valid_args();
	a.num_heads = 0;
	expect_bad(&a, 1, "num_heads");
	a = valid_args();
	a.num_v_heads = 5; /* not a multiple of num_heads = 2 */
	expect_bad(&a, 1, "num_v_heads");
	a = valid_args();
	a.batch = 65536;
	a.seq_len = 65536;
	expect_bad(&a, 1, "seq_len");
	/* few tokens but so many sequences that 64 rows per chunk slot overflow 32 bits */
	a = valid_args();
	a.batch = 40000000;
	a.seq_len = 1;
	expect_bad(&a, 0, "batch");
	expect_bad(&a, 1, "batch");
	/* tokens x heads fit 32 bits, but one CTA per chunk slot, head, value slice and map
	 * does not (2^20 one-token sequences, 512 heads) */
	a = valid_args();
	a.batch = 1 << 20;
	a.seq_len = 1;
	a.num_heads = a.num_v_heads = 512;
	expect_bad(&a, 0, "num_v_heads");
	expect_bad(&a, 1, "num_v_heads");
	a.num_heads = a.num_v_heads = 64;   /* 2^20 x 64 x 6 < 2^31: accepted */
	size_t ws = 0;
	assert_int_equal(tile_la_kda_fwd_workspace(LA, &a, &ws), TILE_OK);
	a.workspace_size = ws;
	assert_int_equal(tile_la_fwd_check(&a, 1, NULL, 0), TILE_OK);
}

static void test_varlen(void **state)
{
	(void)state;
	tile_la_fwd_args a = valid_args();
	a.cu_seqlens = ADDR(8);
	a.num_seqs = 3;
	expect_bad(&a, 1, "batch"); /* cu_seqlens needs batch 1 */
	a.batch = 1;
	size_t ws;
	assert_int_equal(tile_la_kda_fwd_workspace(LA, &a, &ws), TILE_OK);
	a.workspace_size = ws;
	assert_int_equal(tile_la_fwd_check(&a, 1, NULL, 0), TILE_OK);
	a.num_seqs = 0;
	expect_bad(&a, 1, "num_seqs");
}

static void test_options(void **state)
{
	(void)state;
	tile_la_fwd_args a = valid_args();
	a.scale = 1.0f / 0.0f;
	expect_bad(&a, 1, "scale");
	a = valid_args();
	a.allow_neg_eigval = 1;
	expect_bad(&a, 1, "allow_neg_eigval");
	a.use_beta_sigmoid_in_kernel = 1;
	assert_int_equal(tile_la_fwd_check(&a, 1, NULL, 0), TILE_OK);
	a = valid_args();
	a.use_lower_bound = 1;
	a.lower_bound = -5.0f;
	expect_bad(&a, 0, "use_lower_bound"); /* GDN has no lower-bound gate */
	assert_int_equal(tile_la_fwd_check(&a, 1, NULL, 0), TILE_OK);
	a.lower_bound = 0.5f;
	expect_bad(&a, 1, "lower_bound");
	a = valid_args();
	a.use_gate_in_kernel = 1;
	expect_bad(&a, 1, "A_log"); /* the softplus form needs A_log */
	a.use_lower_bound = 1;
	a.lower_bound = -5.0f;
	assert_int_equal(tile_la_fwd_check(&a, 1, NULL, 0), TILE_OK);
	expect_bad(&a, 0, "use_lower_bound");
	a = valid_args();
	a.num_chunk_states = -1;
	expect_bad(&a, 1, "num_chunk_states");
	a = valid_args();
	a.chunk_states = ADDR(9);
	expect_bad(&a, 1, "num_chunk_states");
}

static void test_pointers(void **state)
{
	(void)state;
	static const char *const required[] = {"q", "k", "v", "o", "g", "beta", "workspace"};
	for (size_t i = 0; i < sizeof required / sizeof required[0]; i++) {
		tile_la_fwd_args a = valid_args();
		const void **slots[] = {&a.q, &a.k, &a.v, (const void **)&a.o,
					(const void **)&a.g, (const void **)&a.beta,
					(const void **)&a.workspace};
		*slots[i] = NULL;
		expect_bad(&a, 1, required[i]);
		*slots[i] = (const char *)ADDR(10) + 2; /* misaligned */
		expect_bad(&a, 1, required[i]);
	}
	tile_la_fwd_args a = valid_args();
	a.initial_state = (const float *)((const char *)ADDR(11) + 2);
	expect_bad(&a, 1, "initial_state");
	a = valid_args();
	a.workspace_size -= 1;
	expect_bad(&a, 1, "workspace_size");
}

/* g's dtype: TILE_LA_F32 (0, so zeroed arguments are f32) or the call's input dtype; any
 * other value is refused by name before anything else reads it, the workspace query too */
static void test_gate_dtype(void **state)
{
	(void)state;
	tile_la_fwd_args a = valid_args();
	assert_int_equal(a.gate_dtype, TILE_LA_F32);
	a.gate_dtype = TILE_LA_BF16;
	assert_int_equal(tile_la_fwd_check(&a, 1, NULL, 0), TILE_OK);
	assert_int_equal(tile_la_fwd_check(&a, 0, NULL, 0), TILE_OK);
	char msg[256];
	a.gate_dtype = TILE_LA_F16; /* a 16-bit dtype other than q's */
	assert_int_equal(tile_la_fwd_check(&a, 1, msg, sizeof msg), TILE_ERR_ARG);
	assert_string_equal(msg, "gate_dtype: TILE_LA_F16 is neither TILE_LA_F32 nor dtype "
			    "(TILE_LA_BF16)");
	expect_bad(&a, 0, "gate_dtype");
	size_t ws = 7;
	assert_int_equal(tile_la_kda_fwd_workspace(LA, &a, &ws), TILE_ERR_ARG);
	assert_int_equal(ws, 0);
	assert_non_null(strstr(tile_la_error(LA), "gate_dtype"));
	a.gate_dtype = (tile_la_dtype)7;
	assert_int_equal(tile_la_fwd_check(&a, 0, msg, sizeof msg), TILE_ERR_ARG);
	assert_string_equal(msg, "gate_dtype: 7 is neither TILE_LA_F32 nor dtype (TILE_LA_BF16)");
	/* 2-byte elements: GDN's g needs 2-byte alignment, KDA's stays 16 (a TMA tensor) */
	a = valid_args();
	a.gate_dtype = TILE_LA_BF16;
	a.g = (const char *)ADDR(4) + 2;
	assert_int_equal(tile_la_fwd_check(&a, 0, NULL, 0), TILE_OK);
	expect_bad(&a, 1, "g");
	a.g = (const char *)ADDR(4) + 1;
	expect_bad(&a, 0, "g");
}

/* beta's dtype, the same way, chosen apart from g's (FLA's callers pass f32 g, bf16 beta) */
static void test_beta_dtype(void **state)
{
	(void)state;
	tile_la_fwd_args a = valid_args();
	a.dtype = TILE_LA_F16;
	a.beta_dtype = TILE_LA_F16;
	assert_int_equal(tile_la_fwd_check(&a, 1, NULL, 0), TILE_OK);
	a.gate_dtype = TILE_LA_F16;
	assert_int_equal(tile_la_fwd_check(&a, 0, NULL, 0), TILE_OK);
	char msg[256];
	a.beta_dtype = TILE_LA_BF16;
	assert_int_equal(tile_la_fwd_check(&a, 1, msg, sizeof msg), TILE_ERR_ARG);
	assert_string_equal(msg, "beta_dtype: TILE_LA_BF16 is neither TILE_LA_F32 nor dtype "
			    "(TILE_LA_F16)");
	a.beta_dtype = (tile_la_dtype)-1;
	expect_bad(&a, 0, "beta_dtype");
	size_t ws = 7;
	assert_int_equal(tile_la_gdn_fwd_workspace(LA, &a, &ws), TILE_ERR_ARG);
	assert_non_null(strstr(tile_la_error(LA), "beta_dtype"));
	/* 2-byte elements, 2-byte alignment; f32 beta keeps 4 */
	a = valid_args();
	a.beta_dtype = TILE_LA_BF16;
	a.beta = (const char *)ADDR(5) + 2;
	assert_int_equal(tile_la_fwd_check(&a, 1, NULL, 0), TILE_OK);
	a.beta = (const char *)ADDR(5) + 1;
	expect_bad(&a, 1, "beta");
	a.beta_dtype = TILE_LA_F32;
	a.beta = (const char *)ADDR(5) + 2;
	expect_bad(&a, 1, "beta");
}

static void test_workspace(void **state)
{
	(void)state;
	tile_la_fwd_args a = valid_args();
	size_t kda = 0, gdn = 0, small = 0;
	assert_int_equal(tile_la_kda_fwd_workspace(LA, &a, &kda), TILE_OK);
	assert_int_equal(tile_la_gdn_fwd_workspace(LA, &a, &gdn), TILE_OK);
	/* GDN: the chunks' A and AQK (200 rows x 4 heads x 64 x 2 bytes each), then 1/|q| and
	 * 1/|k| (2 heads x
	 * 64 rows per chunk slot x 4 bytes; slots = cdiv(200, 64) + 2 sequences = 6), then Gamma
	 * and beta (4 value heads x 6 x 64 x 4 bytes), each array aligned to 256; sequences of 2
	 * chunks are never cut, so no transfer slots */
	assert_int_equal(gdn, 2 * ((size_t)200 * 4 * 64 * 2) + 2 * (2 * 6 * 64 * 4) +
				      2 * (4 * 6 * 64 * 4));
	/* so a GDN call may pass a smaller workspace than KDA's */
	a.workspace_size = gdn;
	char err[256];
	assert_int_equal(tile_la_fwd_check(&a, 0, err, sizeof err), TILE_OK);
	assert_int_equal(tile_la_fwd_check(&a, 1, err, sizeof err), TILE_ERR_ARG);
	assert_non_null(strstr(err, "workspace"));
	a = valid_args();
	/* no tokens: GDN only copies the state, with no workspace */
	a.seq_len = 0;
	assert_int_equal(tile_la_gdn_fwd_workspace(LA, &a, &gdn), TILE_OK);
	assert_int_equal(gdn, 0);
	a = valid_args();
	/* W, U, QG, KG (64 rows per chunk slot x 4 heads x 128 x 2 bytes each), AQK (200 rows x
	 * 4 heads x 64 x 2), DEC (slots x 4 x 128 x 4), then the state maps' bounds (f32, 4 x
	 * slots): each 256-byte aligned; no transfer maps without the in-kernel l2norm (no
	 * context parallelism) */
	size_t rows = 200 * 4, slots = 4 + 2;
	size_t want = 4 * (slots * 64 * 4 * 128 * 2) + rows * 64 * 2 +
		      ((slots * 4 * 128 * 4 + 255) / 256 * 256) + ((4 * slots * 4 + 255) / 256 * 256);
	assert_int_equal(kda, want);
	/* 2 x 8192 tokens at 4 value heads (8 units, 2 x 8 x 3 <= 132 SMs): the chained path cuts
	 * them, with or without the l2norm (nothing is bounded), into 9 segments of 15 chunks
	 * each (la_chained_cost): 18 + 2 segment slots, as many transfer slots of f32 B_j and P_j
	 * hi and lo (4 + 2 + 2 bytes per element of [20, 4, 128, 128]) after the bounds; XB's 20
	 * slots hold the split's 3 x 2 starts too. Segments off: only those starts. */
	a.seq_len = 8192;
	size_t segs = 0, l2 = 0, off = 0, shorter = 0;
	assert_int_equal(tile_la_kda_fwd_workspace(LA, &a, &segs), TILE_OK);
	size_t slots8k = 256 + 2, bounds = ((4 * slots8k * 4 + 255) / 256) * 256;
	size_t head = 4 * (slots8k * 64 * 4 * 128 * 2) + 2 * 8192 * 4 * 64 * 2 +
		      ((slots8k * 4 * 128 * 4 + 255) / 256 * 256) + bounds;
	size_t slot_bytes = (size_t)4 * 128 * 128 * (4 + 2 + 2);
	assert_int_equal(segs, head + 20 * slot_bytes);
	a.use_qk_l2norm_in_kernel = 1;
	assert_int_equal(tile_la_kda_fwd_workspace(LA, &a, &l2), TILE_OK);
	assert_int_equal(l2, segs);
	tile_la_options o = {.kda_segments = TILE_LA_OFF};
	assert_int_equal(tile_la_set_options(LA, &o), TILE_OK);
	assert_int_equal(tile_la_kda_fwd_workspace(LA, &a, &off), TILE_OK);
	o.kda_segments = TILE_LA_AUTO;
	assert_int_equal(tile_la_set_options(LA, &o), TILE_OK);
	assert_int_equal(off, head + (size_t)6 * 4 * 128 * 128 * 4);
	/* 2 x 1984 tokens (31 chunks, too short for the split): segments of 4 chunks, 16 + 2
	 * slots */
	a.seq_len = 31 * 64;
	assert_int_equal(tile_la_kda_fwd_workspace(LA, &a, &shorter), TILE_OK);
	size_t slots31 = 62 + 2;
	assert_int_equal(shorter, 4 * (slots31 * 64 * 4 * 128 * 2) + 2 * 31 * 64 * 4 * 64 * 2 +
					  ((slots31 * 4 * 128 * 4 + 255) / 256 * 256) +
					  ((4 * slots31 * 4 + 255) / 256 * 256) + 18 * slot_bytes);
	/* GDN's grows by its transfer slots as well: 20 of f32 B_j and P_j hi and lo (without
	 * them: A and AQK, the norms, Gamma and beta) */
	size_t g_segs = 0, g_off = 0;
	a = valid_args();
	a.seq_len = 8192;
	assert_int_equal(tile_la_gdn_fwd_workspace(LA, &a, &g_segs), TILE_OK);
	o.gdn_segments = TILE_LA_OFF;
	assert_int_equal(tile_la_set_options(LA, &o), TILE_OK);
	assert_int_equal(tile_la_gdn_fwd_workspace(LA, &a, &g_off), TILE_OK);
	o.gdn_segments = TILE_LA_AUTO;
	assert_int_equal(tile_la_set_options(LA, &o), TILE_OK);
	assert_int_equal(g_segs - g_off, 20 * slot_bytes);
	assert_int_equal(g_off, (size_t)2 * (2 * 8192 * 4 * 64 * 2) + 2 * (2 * slots8k * 64 * 4) +
					2 * (4 * slots8k * 64 * 4));
	/* a varlen batch at 64 value heads: never cut without chunk states (128 units x 4
	 * sequences x 3 > 132); with them (the warmups' rule) cut into segments of 512 / 8 = 64
	 * chunks (12 transfer slots) only while its lengths are unknown: a host copy of equal
	 * lengths runs whole, and so does this one of unequal lengths by the replay */
	a = valid_args();
	a.batch = 1, a.seq_len = 32768, a.num_seqs = 4, a.num_heads = a.num_v_heads = 64;
	a.cu_seqlens = ADDR(8), a.use_qk_l2norm_in_kernel = 1;
	static const int32_t equal[5] = {0, 8192, 16384, 24576, 32768};
	static const int32_t unequal[5] = {0, 100, 8192, 16384, 32768};
	for (int cs = 0; cs < 2; cs++) {
		a.chunk_states = cs ? ADDR(9) : NULL;
		a.num_chunk_states = cs ? 512 + 4 : 0;
		size_t unknown = 0, eq = 0, uneq = 0;
		a.cu_seqlens_host = NULL;
		assert_int_equal(tile_la_kda_fwd_workspace(LA, &a, &unknown), TILE_OK);
		a.cu_seqlens_host = equal;
		assert_int_equal(tile_la_kda_fwd_workspace(LA, &a, &eq), TILE_OK);
		a.cu_seqlens_host = unequal;
		assert_int_equal(tile_la_kda_fwd_workspace(LA, &a, &uneq), TILE_OK);
		assert_int_equal(uneq, eq);
		assert_int_equal(unknown - eq, cs ? (size_t)12 * 64 * 128 * 128 * (4 + 2 + 2) : 0);
	}
	a = valid_args();
	a.head_dim = 64;
	assert_int_equal(tile_la_kda_fwd_workspace(LA, &a, &small), TILE_OK);
	assert_true(small < kda);
	a.head_dim = 100;
	size_t bad = 7;
	assert_int_equal(tile_la_kda_fwd_workspace(LA, &a, &bad), TILE_ERR_ARG);
	assert_int_equal(bad, 0);
	/* no tokens: still a valid call (final state = initial state) */
	a = valid_args();
	a.seq_len = 0;
	assert_int_equal(tile_la_kda_fwd_workspace(LA, &a, &small), TILE_OK);
	a.workspace_size = small;
	a.q = a.k = a.v = NULL;
	a.o = NULL;
	a.g = a.beta = NULL;
	assert_int_equal(tile_la_fwd_check(&a, 1, NULL, 0), TILE_OK);
	a.workspace = NULL;
	expect_bad(&a, 1, "workspace");
}

/* ---- aliasing: no output may share a byte with an input or another output ----------- */

/* The call's device buffers, outputs first (the order of the library's messages). */
enum { B_O, B_HT, B_CS, B_WS, B_Q, B_K, B_V, B_G, B_BETA, B_H0, B_CU, B_ALOG, B_DTB, NBUF,
       NOUT = B_WS + 1 };
static const char *const buf_name[NBUF] = {
	"o", "final_state", "chunk_states", "workspace", "q", "k", "v", "g", "beta",
	"initial_state", "cu_seqlens", "A_log", "dt_bias"};

static void set_buf(tile_la_fwd_args *a, int b, uintptr_t p)
{
	void *v = (void *)p;
	switch (b) {
	case B_O: a->o = v; break;
	case B_HT: a->final_state = v; break;
	case B_CS: a->chunk_states = v; break;
	case B_WS: a->workspace = v; break;
	case B_Q: a->q = v; break;
	case B_K: a->k = v; break;
	case B_V: a->v = v; break;
	case B_G: a->g = v; break;
	case B_BETA: a->beta = v; break;
	case B_H0: a->initial_state = v; break;
	case B_CU: a->cu_seqlens = v; break;
	case B_ALOG: a->A_log = v; break;
	case B_DTB: a->dt_bias = v; break;
	default: fail();
	}
}

/* Every buffer given: 256 tokens in 3 sequences, H 2, HV 4, D 64, bf16, 8 chunk states; g and
 * beta in f32, or in bf16 with s16. */
static tile_la_fwd_args full_args(int kda, size_t ext[NBUF], size_t align[NBUF], int s16)
{
	tile_la_fwd_args a;
	memset(&a, 0, sizeof a);
	a.batch = 1, a.seq_len = 256, a.num_heads = 2, a.num_v_heads = 4, a.head_dim = 64;
	a.dtype = TILE_LA_BF16;
	a.gate_dtype = a.beta_dtype = s16 ? TILE_LA_BF16 : TILE_LA_F32;
	size_t es = s16 ? 2 : 4; /* g's and beta's element */
	a.num_seqs = 3, a.num_chunk_states = 8, a.use_gate_in_kernel = 1;
	for (int b = 0; b < NBUF; b++)
		set_buf(&a, b, (uintptr_t)ADDR(b + 1));
	size_t ws = 0;
	assert_int_equal((kda ? tile_la_kda_fwd_workspace : tile_la_gdn_fwd_workspace)(LA, &a, &ws),
			 TILE_OK);
	a.workspace_size = ws;
	/* the extents tile_la.h gives, in bytes (T 256, N 3) */
	size_t state = 4 * 64 * 64;
	size_t e[NBUF] = {
		[B_O] = 256 * 4 * 64 * 2, [B_HT] = 3 * state * 4, [B_CS] = 8 * state * 2,
		[B_WS] = ws, [B_Q] = 256 * 2 * 64 * 2, [B_K] = 256 * 2 * 64 * 2,
		[B_V] = 256 * 4 * 64 * 2, [B_G] = 256 * 4 * (kda ? 64 : 1) * es,
		[B_BETA] = 256 * 4 * es, [B_H0] = 3 * state * 4, [B_CU] = 4 * 4, [B_ALOG] = 4 * 4,
		[B_DTB] = 4 * (kda ? 64 : 1) * 4};
	size_t al[NBUF] = {16, 4, 16, 256, 16, 16, 16, kda ? 16 : es, es, 4, 4, 4, 4};
	memcpy(ext, e, sizeof e);
	memcpy(align, al, sizeof al);
	assert_int_equal(tile_la_fwd_check(&a, kda, NULL, 0), TILE_OK);
	return a;
}

/* A check's refusal naming both: `first` (an output) at the start, `second` after it. */
static void expect_overlap_message(tile_status st, const char *msg, const char *first,
				   const char *second)
{
	char want[64];
	assert_int_equal(st, TILE_ERR_ARG);
	snprintf(want, sizeof want, "%s's ", second);
	if (strncmp(msg, first, strlen(first)) != 0 || msg[strlen(first)] != ':' ||
	    !strstr(msg, want))
		fail_msg("expected '%s: ... %s...', got '%s'", first, want, msg);
}

static void expect_overlap(const tile_la_fwd_args *a, int kda, const char *first,
			   const char *second)
{
	char msg[512];
	tile_status st = tile_la_fwd_check(a, kda, msg, sizeof msg);
	expect_overlap_message(st, msg, first, second);
}

/* Each output against each other buffer, on both sides of it: one aligned unit of overlap is
 * refused naming both, the neighbouring placement is accepted; so the extents are exact, with
 * g and beta in f32 and in bf16. */
static void test_overlap_every_pair(void **state)
{
	(void)state;
	for (int v = 0; v < 4; v++)
		for (int i = 0; i < NOUT; i++)
			for (int j = 0; j < NBUF; j++) {
				int kda = v & 1, s16 = v >> 1;
				if (j == i)
					continue;
				size_t ext[NBUF], al[NBUF];
				tile_la_fwd_args a = full_args(kda, ext, al, s16);
				uintptr_t p = (uintptr_t)ADDR(30);
				const char *first = buf_name[j < i ? j : i];
				const char *second = buf_name[j < i ? i : j];
				set_buf(&a, i, p);
				set_buf(&a, j, p + ext[i] - al[j]); /* j's first bytes on i's last */
				expect_overlap(&a, kda, first, second);
				set_buf(&a, j, p + ext[i]);
				assert_int_equal(tile_la_fwd_check(&a, kda, NULL, 0), TILE_OK);
				set_buf(&a, j, p - ext[j] + al[j]); /* j's last bytes on i's first */
				expect_overlap(&a, kda, first, second);
				set_buf(&a, j, p - ext[j]);
				assert_int_equal(tile_la_fwd_check(&a, kda, NULL, 0), TILE_OK);
			}
}

static void test_overlap_cases(void **state)
{
	(void)state;
	size_t ext[NBUF], al[NBUF];
	for (int kda = 0; kda < 2; kda++) {
		/* in place: the state update serving would like, and o over v */
		tile_la_fwd_args a = full_args(kda, ext, al, 0);
		a.final_state = (float *)a.initial_state;
		expect_overlap(&a, kda, "final_state", "initial_state");
		a = full_args(kda, ext, al, 0);
		a.o = (void *)a.v;
		expect_overlap(&a, kda, "o", "v");
		/* inputs may share memory (q = k) */
		a = full_args(kda, ext, al, 0);
		a.k = a.q;
		assert_int_equal(tile_la_fwd_check(&a, kda, NULL, 0), TILE_OK);
		/* no tokens: only the states are touched, and still not in place */
		a = full_args(kda, ext, al, 0);
		a.seq_len = 0;
		a.chunk_states = NULL, a.num_chunk_states = 0;
		assert_int_equal((kda ? tile_la_kda_fwd_workspace : tile_la_gdn_fwd_workspace)(
					 LA, &a, &a.workspace_size), TILE_OK);
		a.q = a.k = a.v = NULL, a.o = NULL, a.g = a.beta = NULL;
		assert_int_equal(tile_la_fwd_check(&a, kda, NULL, 0), TILE_OK);
		a.final_state = (float *)a.initial_state;
		expect_overlap(&a, kda, "final_state", "initial_state");
		/* an output running past the end of the address space */
		a = full_args(kda, ext, al, 0);
		a.o = (void *)(UINTPTR_MAX & ~(uintptr_t)0xffff);
		expect_bad(&a, kda, "o");
	}
	/* buffers given but unused (chunk_states with no capacity is refused anyway) are
	 * still buffers: A_log over o without the gate in kernel */
	tile_la_fwd_args a = full_args(1, ext, al, 0);
	a.use_gate_in_kernel = 0;
	a.A_log = (const float *)a.o;
	expect_overlap(&a, 1, "o", "A_log");
}

/* ---- cu_seqlens_host, num_seqs, batch ----------------------------------------------- */

static void test_cu_seqlens_host(void **state)
{
	(void)state;
	static const int32_t host[6] = {0, 64, 128, 192, 256, 0};
	tile_la_fwd_args a = valid_args();
	a.batch = 1, a.seq_len = 256, a.cu_seqlens = ADDR(8), a.num_seqs = 4;
	a.workspace_size = (size_t)1 << 40;
	/* a pointer near NULL: refused before it is read (it used to crash the query) */
	a.cu_seqlens_host = (const int32_t *)(uintptr_t)0x10;
	size_t ws = 7;
	assert_int_equal(tile_la_kda_fwd_workspace(LA, &a, &ws), TILE_ERR_ARG);
	assert_int_equal(ws, 0);
	assert_int_equal(tile_la_gdn_fwd_workspace(LA, &a, &ws), TILE_ERR_ARG);
	expect_bad(&a, 1, "cu_seqlens_host");
	expect_bad(&a, 0, "cu_seqlens_host");
	a.cu_seqlens_host = (const int32_t *)(const void *)((const char *)host + 2);
	expect_bad(&a, 1, "cu_seqlens_host");
	a.cu_seqlens_host = host;
	assert_int_equal(tile_la_kda_fwd_workspace(LA, &a, &ws), TILE_OK);
	assert_int_equal(tile_la_fwd_check(&a, 1, NULL, 0), TILE_OK);
	/* without cu_seqlens it is never read, so never checked */
	a.cu_seqlens = NULL, a.num_seqs = 0;
	a.cu_seqlens_host = (const int32_t *)(uintptr_t)0x10;
	assert_int_equal(tile_la_kda_fwd_workspace(LA, &a, &ws), TILE_OK);
}

static void test_sequence_bounds(void **state)
{
	(void)state;
	char msg[256];
	size_t ws = 7;
	tile_la_fwd_args a = valid_args();
	a.batch = 1, a.cu_seqlens = ADDR(8), a.num_seqs = INT_MAX;
	assert_int_equal(tile_la_kda_fwd_workspace(LA, &a, &ws), TILE_ERR_ARG);
	assert_int_equal(ws, 0);
	expect_bad(&a, 1, "num_seqs");
	expect_bad(&a, 0, "num_seqs");
	/* the bound is 2^31 / 64 - 1: one 64-row chunk slot per sequence in 32 bits */
	a.seq_len = 0;
	a.num_seqs = INT32_MAX / 64 + 1;
	assert_int_equal(tile_la_fwd_check(&a, 0, msg, sizeof msg), TILE_ERR_ARG);
	assert_string_equal(msg, "num_seqs: 33554432 with cu_seqlens (at most 33554431)");
	a.num_seqs = INT32_MAX / 64;
	assert_int_equal(tile_la_gdn_fwd_workspace(LA, &a, &ws), TILE_OK);
	/* tokens beside them push the chunk slots over: still num_seqs */
	a.seq_len = 64;
	expect_bad(&a, 0, "num_seqs");
	a = valid_args();
	a.batch = INT_MAX, a.seq_len = 0;
	expect_bad(&a, 1, "batch");
	assert_int_equal(tile_la_gdn_fwd_workspace(LA, &a, &ws), TILE_ERR_ARG);
}

/* ---- the handle: options, the workspace query, the plan's text ------------------------- */

/* tile_la_set_options refuses `bad`, naming its field */
static void expect_option_refused(const tile_la_options *bad, const char *field)
{
	assert_int_equal(tile_la_set_options(LA, bad), TILE_ERR_ARG);
	assert_non_null(strstr(tile_la_error(LA), field));
}

static void test_handle_options(void **state)
{
	(void)state;
	tile_la_options o, got;
	memset(&o, 0, sizeof o);
	assert_int_equal(tile_la_get_options(LA, &got), TILE_OK);
	assert_memory_equal(&got, &o, sizeof o); /* all TILE_LA_AUTO after create */
	o.kda_wide = TILE_LA_ON, o.kda_split = 96, o.gdn_segments = TILE_LA_OFF;
	assert_int_equal(tile_la_set_options(LA, &o), TILE_OK);
	assert_int_equal(tile_la_get_options(LA, &got), TILE_OK);
	assert_memory_equal(&got, &o, sizeof o);
	/* out of range: refused by name, nothing changes */
	tile_la_options bad = o;
	bad.kda_prep_nocb = 2;
	expect_option_refused(&bad, "options.kda_prep_nocb");
	bad = o, bad.bwd_wide = -2;
	expect_option_refused(&bad, "options.bwd_wide");
	bad = o, bad.exact_state = 2;
	expect_option_refused(&bad, "options.exact_state");
	bad = o, bad.kda_segments = -2;
	expect_option_refused(&bad, "options.kda_segments");
	bad = o, bad.first_segment = -2;
	expect_option_refused(&bad, "options.first_segment");
	bad = o, bad.gdn_kkt_two_ctas = 2;
	expect_option_refused(&bad, "options.gdn_kkt_two_ctas");
	assert_int_equal(tile_la_get_options(LA, &got), TILE_OK);
	assert_memory_equal(&got, &o, sizeof o);
	assert_int_equal(tile_la_set_options(LA, NULL), TILE_ERR_ARG);
	assert_int_equal(tile_la_set_options(NULL, &o), TILE_ERR_ARG);
	assert_int_equal(tile_la_get_options(LA, NULL), TILE_ERR_ARG);
	memset(&o, 0, sizeof o);
	assert_int_equal(tile_la_set_options(LA, &o), TILE_OK);
}

/* The workspace depends on the handle: the transfer slots (KDA's and GDN's) exist for calls
 * the handle's plan cuts into segments (the options included); without a handle, fwd_check
 * asks for the least any handle needs and the forward for its plan's. */
static void test_workspace_of_the_handle(void **state)
{
	(void)state;
	tile_la_fwd_args a = valid_args();
	a.seq_len = 8192, a.use_qk_l2norm_in_kernel = 1;
	size_t maps = 0, off = 0, ws = 7;
	assert_int_equal(tile_la_kda_fwd_workspace(NULL, &a, &ws), TILE_ERR_ARG);
	assert_int_equal(ws, 0);
	assert_int_equal(tile_la_kda_fwd_workspace(LA, &a, &maps), TILE_OK);
	tile_la_options o;
	memset(&o, 0, sizeof o);
	o.kda_segments = TILE_LA_OFF;
	assert_int_equal(tile_la_set_options(LA, &o), TILE_OK);
	assert_int_equal(tile_la_kda_fwd_workspace(LA, &a, &off), TILE_OK);
	/* 20 transfer slots (segments of 15 chunks: 18 + 2) of f32 B_j, P_j hi and lo ([20, 4,
	 * 128, 128]); without them XB keeps the split's 3 x 2 segment starts */
	assert_int_equal(maps - off, (size_t)(20 * (4 + 2 + 2) - 6 * 4) * 4 * 128 * 128);
	/* GDN's: a KDA option leaves it alone; gdn_segments OFF takes its 20 slots away */
	size_t g1 = 0, g2 = 0, g0 = 0;
	assert_int_equal(tile_la_gdn_fwd_workspace(LA, &a, &g1), TILE_OK);
	memset(&o, 0, sizeof o);
	assert_int_equal(tile_la_set_options(LA, &o), TILE_OK);
	assert_int_equal(tile_la_gdn_fwd_workspace(LA, &a, &g2), TILE_OK);
	assert_int_equal(g1, g2);
	o.gdn_segments = TILE_LA_OFF;
	assert_int_equal(tile_la_set_options(LA, &o), TILE_OK);
	assert_int_equal(tile_la_gdn_fwd_workspace(LA, &a, &g0), TILE_OK);
	memset(&o, 0, sizeof o);
	assert_int_equal(tile_la_set_options(LA, &o), TILE_OK);
	assert_int_equal(g2 - g0, (size_t)20 * (4 + 2 + 2) * 4 * 128 * 128);
	/* the check without a handle takes the smaller workspace; the forward does not */
	a.workspace_size = off;
	assert_int_equal(tile_la_fwd_check(&a, 1, NULL, 0), TILE_OK);
	assert_int_equal(tile_la_kda_fwd(LA, &a), TILE_ERR_ARG);
	assert_non_null(strstr(tile_la_error(LA), "workspace_size"));
	a.workspace_size = g0;
	assert_int_equal(tile_la_fwd_check(&a, 0, NULL, 0), TILE_OK);
	assert_int_equal(tile_la_gdn_fwd(LA, &a), TILE_ERR_ARG);
	assert_non_null(strstr(tile_la_error(LA), "workspace_size"));
	a.workspace_size = g0 - 1;
	expect_bad(&a, 0, "workspace_size");
	/* a bad argument of the query is named on the handle */
	a.head_dim = 100;
	assert_int_equal(tile_la_kda_fwd_workspace(LA, &a, &ws), TILE_ERR_ARG);
	assert_int_equal(ws, 0);
	assert_non_null(strstr(tile_la_error(LA), "head_dim"));
}

static void test_describe_plan(void **state)
{
	(void)state;
	tile_la_fwd_args a = valid_args();
	a.seq_len = 8192, a.use_qk_l2norm_in_kernel = 1;
	char text[2048], tiny[16];
	assert_int_equal(tile_la_describe_plan(LA, &a, 1, text, sizeof text), TILE_OK);
	if (!strstr(text, "KDA plan: 132 SMs") || !strstr(text, "chunk_prep") ||
	    !strstr(text, "workspace"))
		fail_msg("plan text: %s", text);
	assert_int_equal(tile_la_describe_plan(LA, &a, 0, text, sizeof text), TILE_OK);
	/* 2 x 8192 tokens at 4 value heads: the chained path */
	if (!strstr(text, "GDN plan: 132 SMs") || !strstr(text, "gdn_kkt") ||
	    !strstr(text, "gdn_fused mode 1") || !strstr(text, "gdn_map_t") ||
	    !strstr(text, "chunk_chain_t") || !strstr(text, "transfer slots 20, chained 1"))
		fail_msg("plan text: %s", text);
	/* cut to fit, NUL-terminated */
	assert_int_equal(tile_la_describe_plan(LA, &a, 1, tiny, sizeof tiny), TILE_OK);
	assert_int_equal(strlen(tiny), sizeof tiny - 1);
	assert_int_equal(tile_la_describe_plan(LA, &a, 1, NULL, 0), TILE_ERR_ARG);
	a.num_heads = 3;
	assert_int_equal(tile_la_describe_plan(LA, &a, 1, text, sizeof text), TILE_ERR_ARG);
	assert_string_equal(text, "");
	assert_non_null(strstr(tile_la_error(LA), "num_v_heads"));
}

/* ---- the reason a create failed ----------------------------------------------------- */

static void *read_error(void *out)
{
	snprintf(out, 64, "%s", tile_la_error(NULL));
	return NULL;
}

static void test_create_error(void **state)
{
	(void)state;
	tile_la *la = (tile_la *)&la;
	assert_int_equal(tile_la_create_with(NULL, &la), TILE_ERR_ARG);
	assert_null(la);
	assert_string_equal(tile_la_error(NULL), "rt: NULL");
	/* per thread: another thread's last create (none) is its own */
	char other[64] = "x";
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, read_error, other), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_string_equal(other, "");
	assert_string_equal(tile_la_error(NULL), "rt: NULL");
	assert_int_equal(tile_la_create(0, NULL), TILE_ERR_ARG);
	assert_string_equal(tile_la_error(NULL), "out: NULL");
	/* without a GPU the runtime's reason is kept; with one the create succeeds and clears it */
	tile_status st = tile_la_create(0, &la);
	if (st == TILE_OK) {
		assert_string_equal(tile_la_error(NULL), "");
		tile_la_destroy(la);
	} else {
		assert_null(la);
		if (strlen(tile_la_error(NULL)) == 0)
			fail_msg("tile_la_create: %s with no reason kept", tile_status_str(st));
		print_message("tile_la_create(0) without a GPU: %s: %s\n", tile_status_str(st),
			      tile_la_error(NULL));
	}
}

/* ---- the KDA backward's checks ------------------------------------------------------------ */

static tile_la_bwd_args valid_bwd(void)
{
	tile_la_bwd_args b;
	memset(&b, 0, sizeof b);
	b.fwd = valid_args();
	b.fwd.o = NULL;                      /* the forward's outputs are not read */
	b.fwd.workspace = NULL;
	b.fwd.workspace_size = 0;
	b.dout = ADDR(20);
	b.dq = ADDR(21), b.dk = ADDR(22), b.dv = ADDR(23), b.dg = ADDR(24), b.dbeta = ADDR(25);
	b.workspace = ADDR(26);
	size_t ws = 0;
	assert_int_equal(tile_la_kda_bwd_workspace(LA, &b, &ws), TILE_OK);
	b.workspace_size = ws;
	return b;
}

static void expect_bad_bwd(const tile_la_bwd_args *b, const char *name)
{
	char msg[256];
	assert_int_equal(tile_la_kda_bwd_check(b, msg, sizeof msg), TILE_ERR_ARG);
	if (strncmp(msg, name, strlen(name)) != 0)
		fail_msg("expected a message about '%s', got '%s'", name, msg);
}

/* Each of the backward's own diagnostics, once; the forward's shapes are check_shapes',
 * tested above (one of them here, to show the backward runs them). */
static void test_bwd_checks(void **state)
{
	(void)state;
	tile_la_bwd_args b = valid_bwd(), x;
	char msg[256] = "x";
	assert_int_equal(tile_la_kda_bwd_check(&b, msg, sizeof msg), TILE_OK);
	assert_string_equal(msg, "");
	assert_int_equal(tile_la_kda_bwd_check(NULL, msg, sizeof msg), TILE_ERR_ARG);
	x = b, x.fwd.head_dim = 96;
	expect_bad_bwd(&x, "head_dim");
	x = b, x.dout = NULL;
	expect_bad_bwd(&x, "dout: NULL");
	x = b, x.dg = NULL;
	expect_bad_bwd(&x, "dg: NULL");
	x = b, x.dq = (char *)b.dq + 1;
	expect_bad_bwd(&x, "dq: ");
	x = b, x.workspace = NULL;
	expect_bad_bwd(&x, "workspace: NULL");
	x = b, x.workspace_size -= 1;
	expect_bad_bwd(&x, "workspace_size");
	x = b, x.dA_log = ADDR(27);
	expect_bad_bwd(&x, "dA_log: given without");
	x = b, x.ddt_bias = ADDR(27);
	x.fwd.use_gate_in_kernel = 1, x.fwd.A_log = ADDR(28);
	expect_bad_bwd(&x, "ddt_bias: given without");
	x = b, x.fwd.use_gate_in_kernel = 1;
	expect_bad_bwd(&x, "A_log: NULL");
	/* aliasing: a gradient on an input, two gradients on each other */
	x = b, x.dv = (void *)b.fwd.v;
	expect_bad_bwd(&x, "dv: ");
	x = b, x.dbeta = b.dg;
	expect_bad_bwd(&x, "dg: ");
	x = b, x.dh0 = ADDR(27), x.dht = ADDR(27);
	expect_bad_bwd(&x, "dh0: ");
	/* no tokens: the token tensors may be NULL */
	x = b, x.fwd.seq_len = 0;
	x.fwd.q = x.fwd.k = x.fwd.v = x.fwd.g = x.fwd.beta = NULL;
	x.dout = x.dq = x.dk = x.dv = x.dg = x.dbeta = NULL;
	assert_int_equal(tile_la_kda_bwd_check(&x, NULL, 0), TILE_OK);
	/* the forward's workspace (disable_recompute): a workspace of the forward's size is
	 * enough, and the backward's own shrinks by the chunk-parallel products it holds */
	size_t fwd_ws = 0, saved_ws = 0;
	tile_la_fwd_args fa = valid_args();
	assert_int_equal(tile_la_kda_fwd_workspace(LA, &fa, &fwd_ws), TILE_OK);
	x = b, x.fwd_workspace = ADDR(30), x.fwd_workspace_size = fwd_ws;
	assert_int_equal(tile_la_kda_bwd_workspace(LA, &x, &saved_ws), TILE_OK);
	assert_true(saved_ws > 0 && saved_ws < b.workspace_size);
	assert_int_equal(tile_la_kda_bwd_check(&x, msg, sizeof msg), TILE_OK);
	x.workspace_size = saved_ws;
	assert_int_equal(tile_la_kda_bwd_check(&x, msg, sizeof msg), TILE_OK);
	x.workspace_size = saved_ws - 1;
	expect_bad_bwd(&x, "workspace_size");
	x = b, x.fwd_workspace = (char *)ADDR(30) + 128, x.fwd_workspace_size = fwd_ws;
	expect_bad_bwd(&x, "fwd_workspace: ");
	x = b, x.fwd_workspace = ADDR(30), x.fwd_workspace_size = 256;
	expect_bad_bwd(&x, "fwd_workspace_size");
	/* read only, but apart from every output */
	x = b, x.fwd_workspace = (char *)b.dk - 256, x.fwd_workspace_size = fwd_ws;
	assert_int_equal(tile_la_kda_bwd_check(&x, msg, sizeof msg), TILE_ERR_ARG);
	if (strncmp(msg, "dk: ", 4) != 0 || !strstr(msg, "fwd_workspace"))
		fail_msg("%s", msg);
	x = b, x.fwd_workspace = b.fwd.q, x.fwd_workspace_size = fwd_ws;
	assert_int_equal(tile_la_kda_bwd_check(&x, msg, sizeof msg), TILE_OK);
}

static size_t up256(size_t n)
{
	return (n + 255) / 256 * 256;
}

/* The GDN backward's own sizes: the gate's and ddt_bias's extents per head (not per channel),
 * dg's parts in its workspace (the gate itself is read as given: no copy over the channels),
 * gdn_kkt_lo's outputs (A and AQK in two terms per slot, W, the row vectors) in place of
 * chunk_prep's, the chunk states S and dS in one IN term (no lo halves), and no hand-over between per-chunk
 * kernels (gdn_bwd_chunk keeps v_new, dX, dAQK and dL in shared memory). */
static void test_gdn_bwd_checks(void **state)
{
	(void)state;
	tile_la_bwd_args b = valid_bwd(), x;
	size_t ws = 0;
	assert_int_equal(tile_la_gdn_bwd_workspace(LA, &b, &ws), TILE_OK);
	/* 200 tokens, 6 chunk slots (384 rows), 2 key heads, 4 value heads, D = 128, each region
	 * 256-aligned: A (IN [200, 4, 64]), 1/|q|, 1/|k| (f32 [2, 384]), Gamma, beta (f32 [4,
	 * 384]), W (IN [384, 4, 128]), S and dS (IN [6, 4, 128, 128]), A and AQK per slot
	 * (IN [6, 4, 2, 64, 64]), dq^,
	 * dk^ (f32 [200, 4, 128]), dbeta's parts (f32 [200, 4, 3]), dA_log's and ddt_bias's slot
	 * sums (f32 [6, 2, 4], [6, 4, 128]), dg's parts per key slab (f32 [200, 4, 2]); no maps
	 * without a handle */
	size_t expected = up256(200 * 4 * 64 * 2) + 2 * up256(2 * 384 * 4) +
			  2 * up256(4 * 384 * 4) + up256((size_t)384 * 4 * 128 * 2) +
			  2 * up256((size_t)6 * 4 * 128 * 128 * 2) +
			  2 * up256((size_t)6 * 4 * 2 * 64 * 64 * 2) + 2 * up256(200 * 4 * 128 * 4) +
			  up256(200 * 4 * 3 * 4) + up256(6 * 2 * 4 * 4) + up256(6 * 4 * 128 * 4) +
			  up256(200 * 4 * 2 * 4);
	if (ws != expected)
		fail_msg("the GDN backward's workspace: %zu bytes, expected %zu", ws, expected);
	char msg[256] = "x";
	b.workspace_size = ws - 1;
	assert_int_equal(tile_la_gdn_bwd_check(&b, msg, sizeof msg), TILE_ERR_ARG);
	assert_non_null(strstr(msg, "workspace_size"));
	b.workspace_size = ws;
	assert_int_equal(tile_la_gdn_bwd_check(&b, msg, sizeof msg), TILE_OK);
	assert_string_equal(msg, "");
	/* dt_bias [HV] f32: a ddt_bias right after it does not overlap it (for KDA it would) */
	x = b, x.fwd.use_gate_in_kernel = 1, x.fwd.A_log = ADDR(28), x.fwd.dt_bias = ADDR(29);
	x.ddt_bias = (float *)ADDR(29) + 4;
	assert_int_equal(tile_la_gdn_bwd_check(&x, msg, sizeof msg), TILE_OK);
	x.ddt_bias = (float *)ADDR(29) + 3;
	assert_int_equal(tile_la_gdn_bwd_check(&x, msg, sizeof msg), TILE_ERR_ARG);
	assert_non_null(strstr(msg, "ddt_bias"));
	/* g [B, T, HV] f32: a dg ending where g begins is fine */
	x = b, x.dg = (char *)b.fwd.g - 200 * 4 * 4;
	if (tile_la_gdn_bwd_check(&x, msg, sizeof msg) != TILE_OK)
		fail_msg("%s", msg);
	x.dg = (char *)b.fwd.g - 200 * 4 * 4 + 4;
	assert_int_equal(tile_la_gdn_bwd_check(&x, msg, sizeof msg), TILE_ERR_ARG);
	/* a forward's workspace kept with save_for_backward: gdn_kkt_lo's regions are read from
	 * it (A, AQK, 1/|q|, 1/|k|, Gamma, beta as the forward's layout has them, then W, A and
	 * AQK per slot in two terms), the backward's own workspace holds the rest */
	size_t kept = up256(200 * 4 * 64 * 2) * 2 + 2 * up256(2 * 384 * 4) +
		      2 * up256(4 * 384 * 4) + up256((size_t)384 * 4 * 128 * 2) +
		      2 * up256((size_t)6 * 4 * 2 * 64 * 64 * 2);
	size_t own = 0;
	x = b, x.fwd_workspace = ADDR(40), x.fwd_workspace_size = kept;
	assert_int_equal(tile_la_gdn_bwd_workspace(LA, &x, &own), TILE_OK);
	size_t recomputed = up256(200 * 4 * 64 * 2) + 2 * up256(2 * 384 * 4) +
			    2 * up256(4 * 384 * 4) + up256((size_t)384 * 4 * 128 * 2) +
			    2 * up256((size_t)6 * 4 * 2 * 64 * 64 * 2);
	if (own != ws - recomputed)
		fail_msg("the GDN backward's workspace beside a kept one: %zu bytes, expected %zu",
			 own, ws - recomputed);
	x.workspace_size = own;
	if (tile_la_gdn_bwd_check(&x, msg, sizeof msg) != TILE_OK)
		fail_msg("%s", msg);
	x.fwd_workspace_size = kept - 1;
	assert_int_equal(tile_la_gdn_bwd_check(&x, msg, sizeof msg), TILE_ERR_ARG);
	if (!strstr(msg, "fwd_workspace_size") || !strstr(msg, "1402880"))
		fail_msg("%s", msg);
	x.fwd_workspace_size = kept, x.fwd_workspace = (char *)ADDR(40) + 16;
	assert_int_equal(tile_la_gdn_bwd_check(&x, msg, sizeof msg), TILE_ERR_ARG);
	assert_non_null(strstr(msg, "fwd_workspace"));
	/* ... and never one of the gradients */
	x.fwd_workspace = ADDR(40), x.dq = (char *)ADDR(40) + kept - 256;
	assert_int_equal(tile_la_gdn_bwd_check(&x, msg, sizeof msg), TILE_ERR_ARG);
	assert_non_null(strstr(msg, "fwd_workspace"));
}

/* ---- the backward's aliasing: no gradient may share a byte with an input or another output */

/* The backward's device buffers, outputs first (the order of the library's messages); the
 * last the forward's kept products: fwd_workspace, or KDA's fwd.saved_setup. */
enum { G_DQ, G_DK, G_DV, G_DG, G_DBETA, G_DH0, G_DALOG, G_DDTB, G_WS, G_Q, G_K, G_V, G_G,
       G_BETA, G_DOUT, G_H0, G_DHT, G_CU, G_ALOG, G_DTB, G_KEPT, NGBUF, NGOUT = G_WS + 1 };
enum { KEPT_NONE, KEPT_FWD_WS, KEPT_SAVED_SETUP };
static const char *const gbuf_name[NGBUF] = {
	"dq", "dk", "dv", "dg", "dbeta", "dh0", "dA_log", "ddt_bias", "workspace", "q", "k", "v",
	"g", "beta", "dout", "initial_state", "dht", "cu_seqlens", "A_log", "dt_bias", NULL};

static const char *kept_name(int kept)
{
	return kept == KEPT_SAVED_SETUP ? "fwd.saved_setup" : "fwd_workspace";
}

static void set_gbuf(tile_la_bwd_args *b, int kept, int i, uintptr_t p)
{
	void *v = (void *)p;
	switch (i) {
	case G_DQ: b->dq = v; break;
	case G_DK: b->dk = v; break;
	case G_DV: b->dv = v; break;
	case G_DG: b->dg = v; break;
	case G_DBETA: b->dbeta = v; break;
	case G_DH0: b->dh0 = v; break;
	case G_DALOG: b->dA_log = v; break;
	case G_DDTB: b->ddt_bias = v; break;
	case G_WS: b->workspace = v; break;
	case G_Q: b->fwd.q = v; break;
	case G_K: b->fwd.k = v; break;
	case G_V: b->fwd.v = v; break;
	case G_G: b->fwd.g = v; break;
	case G_BETA: b->fwd.beta = v; break;
	case G_DOUT: b->dout = v; break;
	case G_H0: b->fwd.initial_state = v; break;
	case G_DHT: b->dht = v; break;
	case G_CU: b->fwd.cu_seqlens = v; break;
	case G_ALOG: b->fwd.A_log = v; break;
	case G_DTB: b->fwd.dt_bias = v; break;
	case G_KEPT:
		if (kept == KEPT_SAVED_SETUP)
			b->fwd.saved_setup = v;
		else
			b->fwd_workspace = v;
		break;
	default: fail();
	}
}

static tile_status bwd_check_of(const tile_la_bwd_args *b, int kda, char *msg, size_t size)
{
	return (kda ? tile_la_kda_bwd_check : tile_la_gdn_bwd_check)(b, msg, size);
}

/* The bytes the check asks of a size field left at 0: the number after "needs" or "at
 * least" in its message. */
static size_t needed_bytes(const tile_la_bwd_args *b, int kda)
{
	char msg[512];
	assert_int_equal(bwd_check_of(b, kda, msg, sizeof msg), TILE_ERR_ARG);
	const char *at = strstr(msg, "needs ");
	at = at ? at + 6 : strstr(msg, "at least ");
	if (!at)
		fail_msg("no size in '%s'", msg);
	if (*at == 'a')
		at += 9;
	return (size_t)strtoull(at, NULL, 10);
}

/* Every buffer given: 256 tokens in 3 sequences, H 2, HV 4, D 64, bf16, the gate in kernel
 * (A_log, dt_bias and their gradients), h0, dht and dh0; g and beta (and dg, dbeta) in f32,
 * or in bf16 with s16; the forward's products kept as `kept` says. ext: each buffer's bytes
 * as tile_la.h gives its shape (the kept ones and the workspace as the check asks them). */
static tile_la_bwd_args full_bwd(int kda, int s16, int kept, size_t ext[NGBUF],
				 size_t align[NGBUF])
{
	tile_la_bwd_args b;
	memset(&b, 0, sizeof b);
	tile_la_fwd_args *a = &b.fwd;
	a->batch = 1, a->seq_len = 256, a->num_heads = 2, a->num_v_heads = 4, a->head_dim = 64;
	a->dtype = TILE_LA_BF16;
	a->gate_dtype = a->beta_dtype = s16 ? TILE_LA_BF16 : TILE_LA_F32;
	a->num_seqs = 3, a->use_gate_in_kernel = 1;
	for (int i = 0; i < NGBUF; i++)
		set_gbuf(&b, kept, i, (uintptr_t)ADDR(i + 1));
	if (kept == KEPT_NONE)
		b.fwd_workspace = NULL;
	size_t es = s16 ? 2 : 4, gd = kda ? 64 : 1, state = 4 * 64 * 64 * 4;
	size_t ws = 0;
	assert_int_equal((kda ? tile_la_kda_bwd_workspace : tile_la_gdn_bwd_workspace)(LA, &b, &ws),
			 TILE_OK);
	b.workspace_size = ws;
	size_t kb = 0;
	if (kept == KEPT_FWD_WS)
		kb = needed_bytes(&b, kda), b.fwd_workspace_size = kb;
	else if (kept == KEPT_SAVED_SETUP)
		kb = needed_bytes(&b, kda), a->saved_setup_size = kb;
	size_t e[NGBUF] = {
		[G_DQ] = 256 * 2 * 64 * 2, [G_DK] = 256 * 2 * 64 * 2, [G_DV] = 256 * 4 * 64 * 2,
		[G_DG] = 256 * 4 * gd * es, [G_DBETA] = 256 * 4 * es, [G_DH0] = 3 * state,
		[G_DALOG] = 4 * 4, [G_DDTB] = 4 * gd * 4, [G_WS] = ws,
		[G_Q] = 256 * 2 * 64 * 2, [G_K] = 256 * 2 * 64 * 2, [G_V] = 256 * 4 * 64 * 2,
		[G_G] = 256 * 4 * gd * es, [G_BETA] = 256 * 4 * es, [G_DOUT] = 256 * 4 * 64 * 2,
		[G_H0] = 3 * state, [G_DHT] = 3 * state, [G_CU] = 4 * 4, [G_ALOG] = 4 * 4,
		[G_DTB] = 4 * gd * 4, [G_KEPT] = kb};
	size_t al[NGBUF] = {2, 2, 2, es, es, 4, 4, 4, 256, 2, 2, 2, es, es, 2, 4, 4, 4, 4, 4, 256};
	memcpy(ext, e, sizeof e);
	memcpy(align, al, sizeof al);
	char msg[512];
	if (bwd_check_of(&b, kda, msg, sizeof msg) != TILE_OK)
		fail_msg("full_bwd: %s", msg);
	return b;
}

static void expect_bwd_overlap(const tile_la_bwd_args *b, int kda, const char *first,
			       const char *second)
{
	char msg[512];
	tile_status st = bwd_check_of(b, kda, msg, sizeof msg);
	expect_overlap_message(st, msg, first, second);
}

static size_t round_down(size_t n, size_t a)
{
	return n / a * a;
}

/* Each gradient (and the workspace) against each other buffer, on both sides of it, for both
 * ops, g and beta in f32 and bf16, the forward's products recomputed or kept (KDA both ways):
 * one aligned unit of overlap is refused naming both, the neighbouring placement accepted; so
 * the extents the check uses are tile_la.h's shapes, exactly. */
static void test_bwd_overlap_every_pair(void **state)
{
	(void)state;
	for (int v = 0; v < 12; v++) {
		int kda = v & 1, s16 = v >> 1 & 1, kept = v >> 2;
		if (kept == KEPT_SAVED_SETUP && !kda)
			continue;
		for (int i = 0; i < NGOUT; i++)
			for (int j = 0; j < NGBUF; j++) {
				if (j == i || (j == G_KEPT && kept == KEPT_NONE))
					continue;
				size_t ext[NGBUF], al[NGBUF];
				tile_la_bwd_args b = full_bwd(kda, s16, kept, ext, al);
				uintptr_t p = (uintptr_t)ADDR(40);
				/* (reported from the side the library lists first) */
				const char *nj = j == G_KEPT ? kept_name(kept) : gbuf_name[j];
				const char *first = j < i ? nj : gbuf_name[i];
				const char *second = j < i ? gbuf_name[i] : nj;
				set_gbuf(&b, kept, i, p);
				/* j's first bytes on i's last, then right after i */
				set_gbuf(&b, kept, j, p + round_down(ext[i] - 1, al[j]));
				expect_bwd_overlap(&b, kda, first, second);
				set_gbuf(&b, kept, j, p + round_down(ext[i] + al[j] - 1, al[j]));
				assert_int_equal(bwd_check_of(&b, kda, NULL, 0), TILE_OK);
				/* j's last bytes on i's first, then right before i */
				set_gbuf(&b, kept, j, p - ext[j] + al[j]);
				expect_bwd_overlap(&b, kda, first, second);
				set_gbuf(&b, kept, j, p - ext[j]);
				assert_int_equal(bwd_check_of(&b, kda, NULL, 0), TILE_OK);
			}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid),    cmocka_unit_test(test_null_args),
		cmocka_unit_test(test_shapes),   cmocka_unit_test(test_varlen),
		cmocka_unit_test(test_options),  cmocka_unit_test(test_pointers),
		cmocka_unit_test(test_gate_dtype), cmocka_unit_test(test_beta_dtype),
		cmocka_unit_test(test_workspace),
		cmocka_unit_test(test_overlap_every_pair), cmocka_unit_test(test_overlap_cases),
		cmocka_unit_test(test_cu_seqlens_host), cmocka_unit_test(test_sequence_bounds),
		cmocka_unit_test(test_handle_options), cmocka_unit_test(test_workspace_of_the_handle),
		cmocka_unit_test(test_describe_plan), cmocka_unit_test(test_bwd_checks),
		cmocka_unit_test(test_gdn_bwd_checks),
		cmocka_unit_test(test_bwd_overlap_every_pair), cmocka_unit_test(test_create_error),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
