/*
 * test_runtime_alloc.c: cleanup on every error path. One scenario (create a runtime on the fake
 * driver, load two modules, look up and launch a plain and a tensor-map kernel, use the memory
 * helpers, tear down) runs again and again:
 *   - with an allocator that fails the Nth host allocation, N = 1, 2, ... until a run makes no
 *     failing allocation: each run must return TILE_ERR_NOMEM (or succeed, at the end) and leave
 *     no live allocation and no driver object behind;
 *   - with the fake driver failing its Nth call, N = 0, 1, ..., likewise (teardown itself runs
 *     with injection off: its failures are ignored by design, see fake_cuda.c).
 * Run under valgrind too (CTest: *_valgrind), which also sees leaks the counters cannot.
 */
#include <string.h>

#include "support.h"

static const char tma_meta[] =
	"tilec-meta 1\nmodule t\nkernel k\n"
	"  threads 128 1 1\n  grid (cdiv m 64) 1 1\n  smem 100000\n"
	"  param 0 a tma bf16 2 m k box 64 64 swizzle 128\n"
	"  param 1 out ptr f32 2 m k\n  param 2 m scalar i32\n  param 3 k scalar i32\nend\n";

static tile_status work(tile_rt *rt, tile_module **m1, tile_module **m2, uint64_t *d)
{
	static tile_embedded_module em1, em2;
	tile_kernel *k1, *k2;
	tile_arg a1[4] = {tile_arg_ptr(0x1000), tile_arg_ptr(0x2000), tile_arg_ptr(0x3000),
		tile_arg_i32(1000)};
	tile_arg a2[4] = {tile_arg_ptr(0x10000), tile_arg_ptr(0x20000), tile_arg_i32(100),
		tile_arg_i32(256)};
	tile_status st;

	em1 = fake_module("vector_add", vector_add_meta, "not a cubin", vector_add_ptx);
	em2 = fake_module("t", tma_meta, "FAKE-CUBIN k:128,8,4,4", NULL);
	if ((st = tile_module_create(rt, &em1, m1)) || (st = tile_module_create(rt, &em2, m2)) ||
	    (st = tile_kernel_get(*m1, "vector_add", &k1)) || (st = tile_kernel_get(*m2, "k", &k2)))
		return st;
	if ((st = tile_kernel_launch(k1, a1, 4, NULL)) ||
	    (st = tile_kernel_launch(k2, a2, 4, NULL)))
		return st;
	if ((st = tile_mem_alloc(rt, 64, d)) || (st = tile_mem_set32(rt, *d, 0, 16)))
		return st;
	return tile_stream_sync(rt, NULL);
}

/* The whole scenario; returns the first failure. Module 1 is destroyed explicitly, module 2
 * by tile_rt_destroy, so both teardown paths run. */
static tile_status scenario(const tile_allocator *a, fake_cuda *f)
{
	tile_rt *rt = NULL;
	tile_module *m1 = NULL, *m2 = NULL;
	uint64_t d = 0;
	tile_status st = fake_rt_try(a, &rt);

	if (st)
		return st;
	st = work(rt, &m1, &m2, &d);
	f->fail_nth = -1;
	assert_int_equal(tile_mem_free(rt, d), TILE_OK);
	tile_module_destroy(m1);
	tile_rt_destroy(rt);
	return st;
}

static void assert_clean(const fake_cuda *f, const counting_alloc *c)
{
	assert_int_equal(c->live, 0);
	assert_int_equal(f->retained, 0);
	assert_int_equal(f->ctx_depth, 0);
	assert_int_equal(f->modules, 0);
	assert_int_equal(f->functions, 0);
	assert_int_equal(f->mem_live, 0);
}

static void test_every_failing_allocation_is_nomem_and_cleans_up(void **state)
{
	long n;
	(void)state;

	for (n = 1;; n++) {
		fake_cuda *f = fake_reset();
		counting_alloc c = {.fail_at = n};
		tile_allocator a = counting_allocator(&c);
		tile_status st = scenario(&a, f);
		assert_clean(f, &c);
		if (!c.failed) {
			assert_int_equal(st, TILE_OK);
			break;
		}
		if (st != TILE_ERR_NOMEM)
			fail_msg("allocation %ld failed, status %s", n, tile_status_str(st));
	}
	print_message("swept %ld host allocations\n", n - 1);
	assert_true(n > 5); /* rt, metadata and kernels of two modules */
}

static void test_every_failing_driver_call_cleans_up(void **state)
{
	long n, errors = 0;
	(void)state;

	for (n = 0;; n++) {
		fake_cuda *f = fake_reset();
		counting_alloc c = {0};
		tile_allocator a = counting_allocator(&c);
		tile_status st;
		f->fail_nth = n;
		f->fail_result = TCU_ERROR_OUT_OF_MEMORY;
		st = scenario(&a, f);
		assert_clean(f, &c);
		if (f->calls <= n) { /* the Nth call never came: nothing was injected */
			assert_int_equal(st, TILE_OK);
			break;
		}
		errors += st != TILE_OK;
	}
	print_message("swept %ld driver calls, %ld surfaced as errors\n", n, errors);
	assert_true(n > 30);
	assert_true(errors > 25); /* a few failures are absorbed: the cubin's, param info */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_failing_allocation_is_nomem_and_cleans_up),
		cmocka_unit_test(test_every_failing_driver_call_cleans_up),
	};
	return cmocka_run_group_tests_name("runtime_alloc", tests, NULL, NULL);
}
