/*
 * test_gpu_runtime.c: libtilert on a real GPU, with the hand-written kernels of selftest.ptx
 * (no tilec needed): cubin and PTX-JIT loading, scalar packing (i32, f32, i64, pointers),
 * dynamic shared memory above 48 KiB, a 2x1x1 cluster launch, a TMA tensor map with row-major
 * and with explicit (padded) strides, the memory helpers, and errors a real driver reports.
 *
 * Without a driver or GPU it prints "skipped: ..." and exits 77 (CTest SKIP_RETURN_CODE), so
 * CI shows it as skipped, never passed. Kernels are sm_90a: other GPUs also skip.
 * Outputs are poisoned with NaN (or 0xffffffff) before every launch; inputs are fresh random
 * values from a seed printed at start (TILE_TEST_SEED overrides it).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "tile.h"

extern const tile_embedded_module tile_module_selftest;

static const uint32_t poison = 0x7fc00000u; /* a quiet NaN as f32, odd as i32 */

typedef struct gpu {
	tile_rt *rt;
	tile_module *mod;
	unsigned int seed;
} gpu;

static gpu g;

#define OK(call) check_ok((call), #call)

static void check_ok(tile_status st, const char *what)
{
	if (st != TILE_OK)
		fail_msg("%s: %s: %s", what, tile_status_str(st), tile_rt_error(g.rt));
}

static tile_kernel *kernel(const char *name)
{
	tile_kernel *k = NULL;

	OK(tile_kernel_get(g.mod, name, &k));
	return k;
}

static uint64_t device_buffer(size_t bytes)
{
	uint64_t p = 0;

	OK(tile_mem_alloc(g.rt, bytes, &p));
	OK(tile_mem_set32(g.rt, p, poison, bytes / 4));
	return p;
}

static float frand(void)
{
	return (float)rand() / (float)RAND_MAX * 2.0f - 1.0f;
}

static void test_gpu_scalars_and_pointers_are_packed(void **state)
{
	const int n = 1000; /* not a multiple of 128 */
	float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
	uint64_t dx = device_buffer(n * 4), dy = device_buffer(n * 4);
	const float alpha = -1.75f;
	const int64_t offset = ((int64_t)1 << 33) + 3; /* needs all 64 bits of the i64 slot */
	(void)state;

	for (int i = 0; i < n; i++)
		x[i] = frand();
	OK(tile_mem_copy_htod(g.rt, dx, x, n * 4));
	tile_arg args[5] = {tile_arg_ptr(dx), tile_arg_ptr(dy), tile_arg_i32(n),
		tile_arg_f32(alpha), tile_arg_i64(offset)};
	OK(tile_kernel_launch(kernel("scale_add"), args, 5, NULL));
	OK(tile_stream_sync(g.rt, NULL));
	OK(tile_mem_copy_dtoh(g.rt, y, dy, n * 4));
	for (int i = 0; i < n; i++) {
		float want = fmaf(alpha, x[i], (float)offset); /* the kernel's fma.rn, exactly */
		if (memcmp(&y[i], &want, 4) != 0)
			fail_msg("scale_add[%d] = %g, expected %g", i, y[i], want);
	}
	OK(tile_mem_free(g.rt, dx));
	OK(tile_mem_free(g.rt, dy));
	free(x);
	free(y);
}

static void test_gpu_dynamic_smem_above_48k(void **state)
{
	const int n = 600; /* 3 blocks, the last one partial */
	uint32_t *out = malloc(n * 4);
	uint64_t d = device_buffer(n * 4);
	tile_kernel_info info;
	tile_kernel *k = kernel("smem_big");
	(void)state;

	OK(tile_kernel_get_info(k, &info));
	assert_int_equal(info.smem, 100000);
	tile_arg args[2] = {tile_arg_ptr(d), tile_arg_i32(n)};
	OK(tile_kernel_launch(k, args, 2, NULL));
	OK(tile_stream_sync(g.rt, NULL));
	OK(tile_mem_copy_dtoh(g.rt, out, d, n * 4));
	for (int i = 0; i < n; i++) {
		uint32_t want = (uint32_t)(24999 - i % 256) * 3 + 1;
		if (out[i] != want)
			fail_msg("smem_big[%d] = %u, expected %u", i, out[i], want);
	}
	OK(tile_mem_free(g.rt, d));
	free(out);
}

static void test_gpu_cluster_launch(void **state)
{
	const int n = 8;
	uint32_t out[8][4];
	uint64_t d = device_buffer(sizeof out);
	tile_arg args[2] = {tile_arg_ptr(d), tile_arg_i32(n)};
	(void)state;

	OK(tile_kernel_launch(kernel("cluster_info"), args, 2, NULL));
	OK(tile_stream_sync(g.rt, NULL));
	OK(tile_mem_copy_dtoh(g.rt, out, d, sizeof out));
	for (int b = 0; b < n; b++) {
		uint32_t want[4] = {(uint32_t)b % 2, 2, (uint32_t)b / 2, (uint32_t)n / 2};
		if (memcmp(out[b], want, sizeof want) != 0)
			fail_msg("block %d: rank %u of %u in cluster %u of %u, expected %u %u %u "
				"%u", b, out[b][0], out[b][1], out[b][2], out[b][3], want[0],
				want[1], want[2], want[3]);
	}
	args[1] = tile_arg_i32(7); /* not a multiple of the cluster */
	assert_int_equal(tile_kernel_launch(kernel("cluster_info"), args, 2, NULL),
		TILE_ERR_LAUNCH);
	OK(tile_mem_free(g.rt, d));
}

/* Copies a rows x cols f32 matrix through TMA boxes; pitch (floats) >= cols lays out src. */
static void tma_round_trip(int rows, int cols, int pitch)
{
	size_t src_bytes = (size_t)rows * pitch * 4, out_bytes = (size_t)rows * cols * 4;
	float *src = malloc(src_bytes), *out = malloc(out_bytes);
	uint64_t dsrc = device_buffer(src_bytes), dout = device_buffer(out_bytes);
	uint64_t strides[1] = {(uint64_t)pitch * 4};
	tile_arg args[4] = {tile_arg_ptr(dsrc), tile_arg_ptr(dout), tile_arg_i32(rows),
		tile_arg_i32(cols)};

	for (size_t i = 0; i < (size_t)rows * pitch; i++)
		src[i] = frand();
	if (pitch != cols)
		args[0] = tile_arg_strided(dsrc, strides, 1);
	OK(tile_mem_copy_htod(g.rt, dsrc, src, src_bytes));
	OK(tile_kernel_launch(kernel("tma_copy"), args, 4, NULL));
	OK(tile_stream_sync(g.rt, NULL));
	OK(tile_mem_copy_dtoh(g.rt, out, dout, out_bytes));
	for (int r = 0; r < rows; r++)
		for (int c = 0; c < cols; c++)
			if (memcmp(&out[r * cols + c], &src[r * pitch + c], 4) != 0)
				fail_msg("tma_copy %dx%d pitch %d: [%d][%d] = %g, expected %g",
					rows, cols, pitch, r, c, out[r * cols + c],
					src[r * pitch + c]);
	OK(tile_mem_free(g.rt, dsrc));
	OK(tile_mem_free(g.rt, dout));
	free(src);
	free(out);
}

static void test_gpu_tma_row_major(void **state)
{
	(void)state;
	tma_round_trip(37, 100, 100); /* ragged in both dims; 400-byte rows */
}

static void test_gpu_tma_explicit_strides(void **state)
{
	(void)state;
	tma_round_trip(50, 70, 96); /* rows padded to 384 bytes */
}

static void test_gpu_tma_rules_stop_bad_tensors(void **state)
{
	uint64_t d = device_buffer(4096);
	tile_arg args[4] = {tile_arg_ptr(d + 4), tile_arg_ptr(d), tile_arg_i32(4),
		tile_arg_i32(32)};
	(void)state;

	assert_int_equal(tile_kernel_launch(kernel("tma_copy"), args, 4, NULL), TILE_ERR_ARG);
	assert_non_null(strstr(tile_rt_error(g.rt), "not 16-byte aligned"));
	args[0] = tile_arg_ptr(d);
	args[3] = tile_arg_i32(30); /* 120-byte rows */
	assert_int_equal(tile_kernel_launch(kernel("tma_copy"), args, 4, NULL), TILE_ERR_ARG);
	OK(tile_mem_free(g.rt, d));
}

static void test_gpu_ptx_jit_and_errors(void **state)
{
	tile_embedded_module ptx_only = tile_module_selftest, garbage = tile_module_selftest;
	tile_embedded_module broken = tile_module_selftest;
	static const unsigned char junk[64] = "not a cubin";
	tile_module *m = NULL;
	tile_kernel *k = NULL;
	(void)state;

	ptx_only.cubin = NULL;
	ptx_only.cubin_size = 0;
	OK(tile_module_create(g.rt, &ptx_only, &m));
	OK(tile_kernel_get(m, "tma_copy", &k));
	tile_module_destroy(m);
	garbage.cubin = junk;
	garbage.cubin_size = sizeof junk;
	OK(tile_module_create(g.rt, &garbage, &m)); /* falls back to PTX */
	tile_module_destroy(m);
	broken.cubin = NULL;
	broken.ptx = ".version 8.0\n.target sm_90a\n.address_size 64\n"
		     ".visible .entry x() { bogus; }";
	assert_int_equal(tile_module_create(g.rt, &broken, &m), TILE_ERR_CUDA);
	printf("# expected JIT failure: %s\n", tile_rt_error(g.rt));
	assert_non_null(strstr(tile_rt_error(g.rt), "cuModuleLoadDataEx"));
	assert_int_equal(tile_kernel_get(g.mod, "no_such_kernel", &k), TILE_ERR_NOT_FOUND);
}

static void print_device(void)
{
	tile_device_info info;

	if (tile_rt_device_info(g.rt, &info) == TILE_OK)
		printf("# device: %s, sm_%d%d, %d SMs, %zu B opt-in smem, driver %d\n", info.name,
			info.cc_major, info.cc_minor, info.sm_count, info.smem_optin,
			info.driver_version);
}

/* 0: ready; 77: skip (printed why). */
static int open_gpu(void)
{
	tile_device_info info;
	tile_status st = tile_rt_create(0, &g.rt);

	if (st == TILE_ERR_NO_DRIVER || st == TILE_ERR_NO_DEVICE) {
		printf("skipped: no CUDA driver/GPU (%s)\n", tile_status_str(st));
		return 77;
	}
	if (st != TILE_OK) {
		printf("FAIL: tile_rt_create: %s\n", tile_status_str(st));
		return 1;
	}
	print_device();
	if (tile_rt_device_info(g.rt, &info) != TILE_OK || info.cc_major != 9 ||
	    info.cc_minor != 0) {
		printf("skipped: the self-test kernels are sm_90a; this device is sm_%d%d\n",
			info.cc_major, info.cc_minor);
		tile_rt_destroy(g.rt);
		return 77;
	}
	if (tile_module_create(g.rt, &tile_module_selftest, &g.mod) != TILE_OK) {
		printf("FAIL: loading the self-test module: %s\n", tile_rt_error(g.rt));
		tile_rt_destroy(g.rt);
		return 1;
	}
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gpu_scalars_and_pointers_are_packed),
		cmocka_unit_test(test_gpu_dynamic_smem_above_48k),
		cmocka_unit_test(test_gpu_cluster_launch),
		cmocka_unit_test(test_gpu_tma_row_major),
		cmocka_unit_test(test_gpu_tma_explicit_strides),
		cmocka_unit_test(test_gpu_tma_rules_stop_bad_tensors),
		cmocka_unit_test(test_gpu_ptx_jit_and_errors),
	};
	const char *seed = getenv("TILE_TEST_SEED");
	int rc = open_gpu();

	if (rc)
		return rc;
	g.seed = seed ? (unsigned int)strtoul(seed, NULL, 10) : (unsigned int)time(NULL);
	printf("# seed %u (TILE_TEST_SEED=%u reproduces)\n", g.seed, g.seed);
	srand(g.seed);
	rc = cmocka_run_group_tests_name("gpu_runtime", tests, NULL, NULL);
	tile_rt_destroy(g.rt); /* also unloads g.mod */
	return rc;
}
