/*
 * test_la_api.c: the argument validation of the GDN/KDA forward API, one test per rule, each
 * checking the status and that the message names the argument; plus the workspace query.
 * No device is needed: tile_la_fwd_check runs the same checks the forward calls run before
 * launching anything.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tile_la.h"

/* Fake device addresses: only their alignment is ever looked at. */
#define ADDR(n) ((void *)(uintptr_t)(0x100000u * (n)))

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
	assert_int_equal(tile_la_kda_fwd_workspace(&a, &ws), TILE_OK);
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
	assert_int_equal(tile_la_gdn_fwd_workspace(NULL, &ws), TILE_ERR_ARG);
	tile_la_fwd_args a = valid_args();
	assert_int_equal(tile_la_gdn_fwd_workspace(&a, NULL), TILE_ERR_ARG);
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
	assert_int_equal(tile_la_kda_fwd_workspace(&a, &ws), TILE_OK);
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
	assert_int_equal(tile_la_kda_fwd_workspace(&a, &ws), TILE_OK);
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

static void test_workspace(void **state)
{
	(void)state;
	tile_la_fwd_args a = valid_args();
	size_t kda = 0, gdn = 0, small = 0;
	assert_int_equal(tile_la_kda_fwd_workspace(&a, &kda), TILE_OK);
	assert_int_equal(tile_la_gdn_fwd_workspace(&a, &gdn), TILE_OK);
	/* GDN: the chunks' A (200 rows x 4 heads x 64 x 2 bytes), then 1/|q| and 1/|k| (2 heads x
	 * 64 rows per chunk slot x 4 bytes; slots = cdiv(200, 64) + 2 sequences = 6), then Gamma
	 * and beta (4 value heads x 6 x 64 x 4 bytes), then a bound and a flag per value head
	 * and chunk slot (4 x 6 x 4 bytes, each array aligned to 256) */
	assert_int_equal(gdn, (size_t)200 * 4 * 64 * 2 + 2 * (2 * 6 * 64 * 4) + 2 * (4 * 6 * 64 * 4) +
				      2 * 256);
	/* so a GDN call may pass a smaller workspace than KDA's */
	a.workspace_size = gdn;
	char err[256];
	assert_int_equal(tile_la_fwd_check(&a, 0, err, sizeof err), TILE_OK);
	assert_int_equal(tile_la_fwd_check(&a, 1, err, sizeof err), TILE_ERR_ARG);
	assert_non_null(strstr(err, "workspace"));
	a = valid_args();
	/* no tokens: GDN only copies the state, with no workspace */
	a.seq_len = 0;
	assert_int_equal(tile_la_gdn_fwd_workspace(&a, &gdn), TILE_OK);
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
	/* 2 x 8192 tokens at 4 value heads without the l2norm: whole sequences of 128 chunks that
	 * the split in time may take, so 3 x 2 segment starts (f32 [6, 4, 128, 128]) after the
	 * bounds; 2 x 1984 tokens (31 chunks) are too short for it */
	a.seq_len = 8192;
	size_t base = 0, maps = 0, shorter = 0;
	assert_int_equal(tile_la_kda_fwd_workspace(&a, &base), TILE_OK);
	size_t slots8k = 256 + 2, bounds = ((4 * slots8k * 4 + 255) / 256) * 256;
	size_t head = 4 * (slots8k * 64 * 4 * 128 * 2) + 2 * 8192 * 4 * 64 * 2 +
		      ((slots8k * 4 * 128 * 4 + 255) / 256 * 256) + bounds;
	assert_int_equal(base, head + (size_t)6 * 4 * 128 * 128 * 4);
	a.seq_len = 31 * 64;
	assert_int_equal(tile_la_kda_fwd_workspace(&a, &shorter), TILE_OK);
	size_t slots31 = 62 + 2;
	assert_int_equal(shorter, 4 * (slots31 * 64 * 4 * 128 * 2) + 2 * 31 * 64 * 4 * 64 * 2 +
					  ((slots31 * 4 * 128 * 4 + 255) / 256 * 256) +
					  ((4 * slots31 * 4 + 255) / 256 * 256));
	/* with it, segments on a GPU of 132 SMs, so the transfer maps of cdiv(16384, 512) + 16 =
	 * 48 segment slots (f32 B_j, P_j hi and lo: 4 + 2 + 2 bytes per element of [48, 4, 128,
	 * 128]), the split's 6 starts among them */
	a.seq_len = 8192;
	a.use_qk_l2norm_in_kernel = 1;
	assert_int_equal(tile_la_kda_fwd_workspace(&a, &maps), TILE_OK);
	assert_int_equal(maps - head, (size_t)48 * 4 * 128 * 128 * (4 + 2 + 2));
	/* a varlen batch at 64 value heads: cut into segments (and given transfer slots) only
	 * while its lengths may differ; a host copy of equal lengths lets it run whole */
	a = valid_args();
	a.batch = 1, a.seq_len = 32768, a.num_seqs = 4, a.num_heads = a.num_v_heads = 64;
	a.cu_seqlens = ADDR(8), a.use_qk_l2norm_in_kernel = 1;
	static const int32_t equal[5] = {0, 8192, 16384, 24576, 32768};
	static const int32_t unequal[5] = {0, 100, 8192, 16384, 32768};
	size_t unknown = 0, eq = 0, uneq = 0;
	assert_int_equal(tile_la_kda_fwd_workspace(&a, &unknown), TILE_OK);
	a.cu_seqlens_host = equal;
	assert_int_equal(tile_la_kda_fwd_workspace(&a, &eq), TILE_OK);
	a.cu_seqlens_host = unequal;
	assert_int_equal(tile_la_kda_fwd_workspace(&a, &uneq), TILE_OK);
	assert_int_equal(unknown, uneq);
	assert_int_equal(uneq - eq, (size_t)(64 + 16) * 64 * 128 * 128 * (4 + 2 + 2));
	a = valid_args();
	a.head_dim = 64;
	assert_int_equal(tile_la_kda_fwd_workspace(&a, &small), TILE_OK);
	assert_true(small < kda);
	a.head_dim = 100;
	size_t bad = 7;
	assert_int_equal(tile_la_kda_fwd_workspace(&a, &bad), TILE_ERR_ARG);
	assert_int_equal(bad, 0);
	/* no tokens: still a valid call (final state = initial state) */
	a = valid_args();
	a.seq_len = 0;
	assert_int_equal(tile_la_kda_fwd_workspace(&a, &small), TILE_OK);
	a.workspace_size = small;
	a.q = a.k = a.v = NULL;
	a.o = NULL;
	a.g = a.beta = NULL;
	assert_int_equal(tile_la_fwd_check(&a, 1, NULL, 0), TILE_OK);
	a.workspace = NULL;
	expect_bad(&a, 1, "workspace");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid),    cmocka_unit_test(test_null_args),
		cmocka_unit_test(test_shapes),   cmocka_unit_test(test_varlen),
		cmocka_unit_test(test_options),  cmocka_unit_test(test_pointers),
		cmocka_unit_test(test_workspace),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
