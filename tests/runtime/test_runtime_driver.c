/*
 * test_runtime_driver.c: libtilert against the fake driver (fake_cuda.c): no driver, old or
 * stub drivers, no device, contexts, module loading (cubin, PTX fallback, JIT log), kernel
 * lookup (shared-memory opt-in, device limits, clusters, parameter cross-check), launches
 * (argument checks, grid, packing, cuLaunchKernelEx for clusters, constant or evaluated from the
 * arguments, tensor maps and what reaches
 * cuTensorMapEncodeTiled), device memory helpers and NULL handles. Every case checks that the
 * fake's balances (retained contexts, push depth, modules, allocations) return to zero.
 */
#include <stdio.h>
#include <string.h>

#include "support.h"

static int setup(void **state)
{
	*state = fake_reset();
	return 0;
}

static int teardown(void **state)
{
	fake_cuda *f = *state;

	assert_int_equal(f->retained, 0);
	assert_int_equal(f->ctx_depth, 0);
	assert_int_equal(f->modules, 0);
	assert_int_equal(f->mem_live, 0);
	return 0;
}

/* --- creation ----------------------------------------------------------------------------- */
static tile_status create_with(const char *path, int device, char *err, size_t cap,
	tile_rt **rt)
{
	tile_rt_options opt;

	memset(&opt, 0, sizeof opt);
	opt.driver_path = path;
	opt.device = device;
	opt.error = err;
	opt.error_size = cap;
	return tile_rt_create_ex(&opt, rt);
}

static void test_rt_reports_no_driver_when_the_library_is_missing(void **state)
{
	char err[256];
	tile_rt *rt = (tile_rt *)&err;
	(void)state;

	assert_int_equal(create_with("/nonexistent/libcuda.so.1", 0, err, sizeof err, &rt),
		TILE_ERR_NO_DRIVER);
	assert_null(rt);
	assert_error_text(err, "cannot load the CUDA driver '/nonexistent/libcuda.so.1'");
}

static void test_rt_default_driver_is_a_status_never_a_crash(void **state)
{
	tile_rt *rt = NULL;
	tile_status st = tile_rt_create(0, &rt);
	(void)state;

	/* CI has no driver (TILE_ERR_NO_DRIVER); a GPU machine may answer anything but crash. */
	assert_true(st == TILE_OK || st == TILE_ERR_NO_DRIVER || st == TILE_ERR_NO_DEVICE ||
		st == TILE_ERR_CUDA);
	assert_true((st == TILE_OK) == (rt != NULL));
	tile_rt_destroy(rt);
}

static void test_rt_rejects_a_driver_without_tensor_maps(void **state)
{
	char err[256];
	tile_rt *rt;
	(void)state;

	assert_int_equal(create_with(FAKE_CUDA_OLD_PATH, 0, err, sizeof err, &rt),
		TILE_ERR_NO_DRIVER);
	assert_error_text(err, "has no cuTensorMapEncodeTiled");
	assert_error_text(err, "CUDA 12.0 or newer");
}

static void test_rt_rejects_old_driver_versions(void **state)
{
	fake_cuda *f = *state;
	char err[256];
	tile_rt *rt;

	f->driver_version = 11080;
	assert_int_equal(create_with(FAKE_CUDA_PATH, 0, err, sizeof err, &rt), TILE_ERR_NO_DRIVER);
	assert_error_text(err, "supports CUDA 11.8; libtilert needs 12.0");
}

static void test_rt_maps_stub_and_no_device_errors(void **state)
{
	fake_cuda *f = *state;
	char err[256];
	tile_rt *rt;

	f->init_result = TCU_ERROR_STUB_LIBRARY;
	assert_int_equal(create_with(FAKE_CUDA_PATH, 0, err, sizeof err, &rt), TILE_ERR_NO_DRIVER);
	assert_error_text(err, "cuInit failed: CUDA_ERROR_STUB_LIBRARY (34)");
	f->init_result = TCU_ERROR_NO_DEVICE;
	assert_int_equal(create_with(FAKE_CUDA_PATH, 0, err, sizeof err, &rt), TILE_ERR_NO_DEVICE);
	assert_error_text(err, "CUDA_ERROR_NO_DEVICE");
	f->init_result = TCU_SUCCESS;
	f->device_count = 0;
	assert_int_equal(create_with(FAKE_CUDA_PATH, 0, err, sizeof err, &rt), TILE_ERR_NO_DEVICE);
	assert_error_text(err, "no CUDA device 0: the driver sees 0 devices");
	f->device_count = 1;
	assert_int_equal(create_with(FAKE_CUDA_PATH, 3, err, sizeof err, &rt), TILE_ERR_NO_DEVICE);
	assert_int_equal(create_with(FAKE_CUDA_PATH, -1, err, sizeof err, &rt), TILE_ERR_ARG);
	assert_error_text(err, "device ordinal -1 is negative");
}

static void test_rt_retains_and_releases_the_primary_context(void **state)
{
	fake_cuda *f = *state;
	tile_rt *rt = fake_rt(NULL);
	tile_device_info info;

	assert_int_equal(f->retained, 1);
	assert_int_equal(f->ctx_depth, 0);
	assert_string_equal(tile_rt_error(rt), "");
	assert_int_equal(tile_rt_device_info(rt, &info), TILE_OK);
	assert_int_equal(info.cc_major, 9);
	assert_int_equal(info.sm_count, 132);
	assert_int_equal(info.driver_version, 13000);
	assert_int_equal(info.smem_optin, 232448);
	assert_error_text(info.name, "Fake H100");
	tile_rt_destroy(rt);
	assert_int_equal(f->retained, 0);
	tile_rt_destroy(NULL);
}

static void test_rt_uses_a_callers_context_without_retaining(void **state)
{
	fake_cuda *f = *state;
	tile_rt_options opt;
	tile_rt *rt;
	uint64_t p;

	memset(&opt, 0, sizeof opt);
	opt.driver_path = FAKE_CUDA_PATH;
	opt.context = (void *)0x2000;
	assert_int_equal(tile_rt_create_ex(&opt, &rt), TILE_OK);
	assert_int_equal(f->retained, 0);
	assert_int_equal(tile_mem_alloc(rt, 64, &p), TILE_OK);
	assert_int_equal(tile_mem_free(rt, p), TILE_OK);
	tile_rt_destroy(rt);
	assert_int_equal(f->retained, 0);
}

static void test_null_handles_and_arguments_are_arg_errors(void **state)
{
	tile_rt_options opt;
	tile_allocator half = {NULL, NULL, NULL};
	tile_rt *rt = fake_rt(NULL), *none = NULL;
	tile_module *m = NULL;
	tile_kernel *k = NULL;
	tile_embedded_module em = fake_module("va", vector_add_meta, vector_add_cubin, NULL);
	uint64_t p;
	char buf[4];
	(void)state;

	memset(&opt, 0, sizeof opt);
	assert_int_equal(tile_rt_create_ex(NULL, &none), TILE_ERR_ARG);
	assert_int_equal(tile_rt_create_ex(&opt, NULL), TILE_ERR_ARG);
	assert_int_equal(tile_rt_create(0, NULL), TILE_ERR_ARG);
	opt.allocator = &half;
	assert_int_equal(tile_rt_create_ex(&opt, &none), TILE_ERR_ARG);
	assert_null(none);
	assert_non_null(tile_rt_error(NULL));
	assert_int_equal(tile_rt_device_info(NULL, NULL), TILE_ERR_ARG);
	assert_int_equal(tile_rt_device_info(rt, NULL), TILE_ERR_ARG);
	assert_int_equal(tile_module_create(NULL, &em, &m), TILE_ERR_ARG);
	assert_int_equal(tile_module_create(rt, NULL, &m), TILE_ERR_ARG);
	assert_int_equal(tile_module_create(rt, &em, NULL), TILE_ERR_ARG);
	em.meta = NULL;
	assert_int_equal(tile_module_create(rt, &em, &m), TILE_ERR_ARG);
	assert_error_text(tile_rt_error(rt), "lacks a name, metadata");
	tile_module_destroy(NULL);
	assert_int_equal(tile_kernel_get(NULL, "x", &k), TILE_ERR_ARG);
	assert_int_equal(tile_kernel_get_info(NULL, NULL), TILE_ERR_ARG);
	assert_int_equal(tile_kernel_launch(NULL, NULL, 0, NULL), TILE_ERR_ARG);
	assert_int_equal(tile_mem_alloc(NULL, 4, &p), TILE_ERR_ARG);
	assert_int_equal(tile_mem_alloc(rt, 0, &p), TILE_ERR_ARG);
	assert_int_equal(tile_mem_alloc(rt, 4, NULL), TILE_ERR_ARG);
	assert_int_equal(tile_mem_free(NULL, 0), TILE_ERR_ARG);
	assert_int_equal(tile_mem_free(rt, 0), TILE_OK);
	assert_int_equal(tile_mem_copy_htod(rt, 0, buf, 4), TILE_ERR_ARG);
	assert_int_equal(tile_mem_copy_dtoh(rt, NULL, 64, 4), TILE_ERR_ARG);
	assert_int_equal(tile_mem_copy_htod(NULL, 64, buf, 4), TILE_ERR_ARG);
	assert_int_equal(tile_mem_copy_dtoh(NULL, buf, 64, 4), TILE_ERR_ARG);
	assert_int_equal(tile_mem_set32(rt, 0, 0, 4), TILE_ERR_ARG);
	assert_int_equal(tile_mem_set32(rt, 66, 0, 4), TILE_ERR_ARG);
	assert_int_equal(tile_mem_set32(NULL, 64, 0, 4), TILE_ERR_ARG);
	assert_int_equal(tile_stream_sync(NULL, NULL), TILE_ERR_ARG);
	for (int s = TILE_OK; s <= TILE_ERR_LAUNCH; s++)
		assert_int_equal(strncmp(tile_status_str((tile_status)s), "TILE_", 5), 0);
	assert_string_equal(tile_status_str((tile_status)99), "TILE_ERR_(unknown)");
	tile_rt_destroy(rt);
}

/* --- modules ------------------------------------------------------------------------------ */
static void test_module_loads_the_cubin(void **state)
{
	fake_cuda *f = *state;
	tile_rt *rt = fake_rt(NULL);
	tile_embedded_module em = fake_module("va", vector_add_meta, vector_add_cubin,
		vector_add_ptx);
	tile_module *m;
	tile_kernel *k;
	tile_kernel_info info;

	assert_int_equal(tile_module_create(rt, &em, &m), TILE_OK);
	assert_int_equal(f->loads_cubin, 1);
	assert_int_equal(f->loads_ptx, 0);
	assert_int_equal(f->ctx_depth, 0);
	assert_int_equal(tile_kernel_get(m, "vector_add", &k), TILE_OK);
	assert_int_equal(tile_kernel_get_info(k, &info), TILE_OK);
	assert_string_equal(info.name, "vector_add");
	assert_int_equal(info.threads[0], 256);
	assert_int_equal(info.nparams, 4);
	assert_int_equal(info.num_regs, 32);
	assert_int_equal(f->set_max_dyn_smem, -1); /* smem 0: no opt-in */
	tile_module_destroy(m);
	tile_rt_destroy(rt);
}

static void test_module_falls_back_to_ptx(void **state)
{
	fake_cuda *f = *state;
	tile_rt *rt = fake_rt(NULL);
	tile_embedded_module em = fake_module("va", vector_add_meta, vector_add_cubin,
		vector_add_ptx);
	tile_embedded_module ptx_only = fake_module("va", vector_add_meta, NULL, vector_add_ptx);
	tile_module *m, *m2;
	tile_kernel *k;

	f->cubin_result = TCU_ERROR_NO_BINARY_FOR_GPU;
	assert_int_equal(tile_module_create(rt, &em, &m), TILE_OK);
	assert_int_equal(f->loads_ptx, 1);
	assert_int_equal(tile_module_create(rt, &ptx_only, &m2), TILE_OK);
	assert_int_equal(f->loads_ptx, 2);
	assert_int_equal(tile_kernel_get(m2, "vector_add", &k), TILE_OK);
	assert_int_equal(f->modules, 2);
	tile_rt_destroy(rt); /* destroys both modules */
}

static void test_module_reports_cubin_error_and_jit_log(void **state)
{
	fake_cuda *f = *state;
	tile_rt *rt = fake_rt(NULL);
	tile_embedded_module em = fake_module("broken", vector_add_meta, vector_add_cubin,
		"// FAKE-PTX vector_add:8,8,8,4 SYNTAX-ERROR");
	tile_module *m = (tile_module *)&em;

	f->cubin_result = TCU_ERROR_NO_BINARY_FOR_GPU;
	assert_int_equal(tile_module_create(rt, &em, &m), TILE_ERR_CUDA);
	assert_null(m);
	assert_error_has(rt, "module 'broken': cubin: cuModuleLoadData failed: "
		"CUDA_ERROR_NO_BINARY_FOR_GPU");
	assert_error_has(rt, "PTX: cuModuleLoadDataEx failed: CUDA_ERROR_INVALID_PTX");
	assert_error_has(rt, "JIT log: ptxas fatal   : fake.ptx, line 3; syntax error");
	em.ptx = NULL;
	assert_int_equal(tile_module_create(rt, &em, &m), TILE_ERR_CUDA);
	assert_error_has(rt, "and no PTX to fall back on");
	tile_rt_destroy(rt);
}

static void test_module_rejects_bad_metadata_with_its_line(void **state)
{
	tile_rt *rt = fake_rt(NULL);
	tile_embedded_module em = fake_module("bad", "tilec-meta 1\nmodule bad\nkernel k\n"
		"  threads 1 1 1\n  grid 1 1 1\n"
		"  param 0 x tma f32 1 64 box 512 swizzle none\nend\n",
		"FAKE-CUBIN k:128", NULL);
	tile_module *m;
	(void)state;

	assert_int_equal(tile_module_create(rt, &em, &m), TILE_ERR_META);
	assert_error_has(rt, "module 'bad': metadata line 6: box dim 0 (innermost first) is 512");
	tile_rt_destroy(rt);
}

/* --- kernels ------------------------------------------------------------------------------ */
/* A module with one kernel `k` of the given threads/smem/cluster and parameter lines. */
static tile_status load_kernel(tile_rt *rt, const char *items, const char *image,
	tile_module **m, tile_kernel **k)
{
	static char meta[2048];
	static tile_embedded_module em;
	tile_status st;

	snprintf(meta, sizeof meta, "tilec-meta 1\nmodule t\nkernel k\n%send\n", items);
	em = fake_module("t", meta, image, NULL);
	*k = NULL;
	if ((st = tile_module_create(rt, &em, m)))
		return st;
	return tile_kernel_get(*m, "k", k);
}

static void test_kernel_not_found_lists_the_kernels(void **state)
{
	tile_rt *rt = fake_rt(NULL);
	tile_embedded_module em = fake_module("va", vector_add_meta, vector_add_cubin, NULL);
	tile_module *m;
	tile_kernel *k;
	(void)state;

	assert_int_equal(tile_module_create(rt, &em, &m), TILE_OK);
	assert_int_equal(tile_kernel_get(m, "vector_sub", &k), TILE_ERR_NOT_FOUND);
	assert_error_has(rt, "module 'va' has no kernel 'vector_sub' (it has: vector_add)");
	tile_rt_destroy(rt);
}

static void test_kernel_raises_the_smem_limit_above_48k(void **state)
{
	fake_cuda *f = *state;
	tile_rt *rt = fake_rt(NULL);
	tile_module *m;
	tile_kernel *k;

	assert_int_equal(load_kernel(rt, "  threads 128 1 1\n  grid 1 1 1\n  smem 49152\n",
		"FAKE-CUBIN k:", &m, &k), TILE_OK);
	assert_int_equal(f->set_max_dyn_smem, -1); /* exactly 48 KiB needs no opt-in */
	tile_module_destroy(m);
	assert_int_equal(load_kernel(rt, "  threads 128 1 1\n  grid 1 1 1\n  smem 164928\n",
		"FAKE-CUBIN k:", &m, &k), TILE_OK);
	assert_int_equal(f->set_max_dyn_smem, 164928);
	tile_module_destroy(m);
	f->set_max_dyn_smem = -1;
	f->func_static_smem = 20000; /* static + dynamic above 48 KiB */
	assert_int_equal(load_kernel(rt, "  threads 128 1 1\n  grid 1 1 1\n  smem 40000\n",
		"FAKE-CUBIN k:", &m, &k), TILE_OK);
	assert_int_equal(f->set_max_dyn_smem, 40000);
	tile_rt_destroy(rt);
}

static void test_kernel_rejects_smem_above_the_device_limit(void **state)
{
	fake_cuda *f = *state;
	tile_rt *rt = fake_rt(NULL);
	tile_module *m;
	tile_kernel *k;

	assert_int_equal(load_kernel(rt, "  threads 128 1 1\n  grid 1 1 1\n  smem 240000\n",
		"FAKE-CUBIN k:", &m, &k), TILE_ERR_LAUNCH);
	assert_null(k);
	assert_error_has(rt, "kernel 'k' needs 240000 B of dynamic + 0 B of static shared memory; "
		"the device allows 232448 B");
	assert_int_equal(f->set_max_dyn_smem, -1);
	tile_rt_destroy(rt);
}

static void test_kernel_rejects_threads_beyond_device_and_registers(void **state)
{
	fake_cuda *f = *state;
	tile_rt *rt = fake_rt(NULL);
	tile_module *m;
	tile_kernel *k;

	f->func_max_threads = 512;
	f->func_num_regs = 128;
	assert_int_equal(load_kernel(rt, "  threads 1024 1 1\n  grid 1 1 1\n", "FAKE-CUBIN k:", &m,
		&k), TILE_ERR_LAUNCH);
	assert_error_has(rt, "1024 threads per block (1024 1 1), but at most 512 can run");
	assert_error_has(rt, "128 registers per thread");
	tile_module_destroy(m);
	assert_int_equal(load_kernel(rt, "  threads 1 1 128\n  grid 1 1 1\n", "FAKE-CUBIN k:", &m,
		&k), TILE_ERR_LAUNCH);
	assert_error_has(rt, "block dim z is 128, the device allows 64");
	tile_rt_destroy(rt);
}

static void test_kernel_checks_params_against_the_binary(void **state)
{
	fake_cuda *f = *state;
	tile_rt *rt = fake_rt(NULL);
	tile_module *m;
	tile_kernel *k;
	const char *items = "  threads 32 1 1\n  grid 1 1 1\n  param 0 x ptr f32 1 n\n"
			    "  param 1 n scalar i32\n";

	/* extra parameters in the binary are not probed (module.c says why) */
	assert_int_equal(load_kernel(rt, items, "FAKE-CUBIN k:8,4,4", &m, &k), TILE_OK);
	tile_module_destroy(m);
	assert_int_equal(load_kernel(rt, items, "FAKE-CUBIN k:8", &m, &k), TILE_ERR_META);
	assert_error_has(rt, "the metadata lists 2 parameters, the binary's kernel has 1");
	tile_module_destroy(m);
	assert_int_equal(load_kernel(rt, items, "FAKE-CUBIN k:8,8", &m, &k), TILE_ERR_META);
	assert_error_has(rt, "parameter 1 ('n') is 8 bytes in the binary, the metadata says 4");
	tile_module_destroy(m);
	f->param_info_result = 801; /* the driver cannot tell: no check */
	assert_int_equal(load_kernel(rt, items, "FAKE-CUBIN k:8,8", &m, &k), TILE_OK);
	tile_rt_destroy(rt);
}

/* --- launches ----------------------------------------------------------------------------- */
static tile_kernel *vector_add(tile_rt *rt)
{
	static tile_embedded_module em;
	tile_module *m;
	tile_kernel *k;

	em = fake_module("vector_add", vector_add_meta, vector_add_cubin, NULL);
	assert_int_equal(tile_module_create(rt, &em, &m), TILE_OK);
	assert_int_equal(tile_kernel_get(m, "vector_add", &k), TILE_OK);
	return k;
}

static void test_launch_packs_arguments_and_evaluates_the_grid(void **state)
{
	fake_cuda *f = *state;
	tile_rt *rt = fake_rt(NULL);
	tile_kernel *k = vector_add(rt);
	tile_arg args[4] = {tile_arg_ptr(0x1000), tile_arg_ptr(0x2000), tile_arg_ptr(0x3000),
		tile_arg_i32(1000)};
	uint64_t p;
	int32_t n;

	assert_int_equal(tile_kernel_launch(k, args, 4, (void *)0x5151), TILE_OK);
	assert_int_equal(f->launches, 1);
	assert_string_equal(f->last.kernel, "vector_add");
	assert_int_equal(f->last.ex, 0);
	assert_int_equal(f->last.grid[0], 4);
	assert_int_equal(f->last.grid[1], 1);
	assert_int_equal(f->last.block[0], 256);
	assert_int_equal(f->last.smem, 0);
	assert_ptr_equal(f->last.stream, (void *)0x5151);
	for (int i = 0; i < 3; i++) {
		memcpy(&p, f->last.param[i], sizeof p);
		assert_int_equal(p, 0x1000 * (i + 1));
	}
	memcpy(&n, f->last.param[3], sizeof n);
	assert_int_equal(n, 1000);
	assert_int_equal(f->ctx_depth, 0);
	tile_rt_destroy(rt);
}

static void test_launch_rejects_wrong_counts_and_kinds(void **state)
{
	fake_cuda *f = *state;
	tile_rt *rt = fake_rt(NULL);
	tile_kernel *k = vector_add(rt);
	uint64_t s[1] = {64};
	tile_arg args[4] = {tile_arg_ptr(0x1000), tile_arg_ptr(0x2000), tile_arg_ptr(0x3000),
		tile_arg_i64(1000)};

	assert_int_equal(tile_kernel_launch(k, args, 3, NULL), TILE_ERR_ARG);
	assert_error_has(rt, "kernel 'vector_add' takes 4 arguments (a, b, c, n), got 3");
	assert_int_equal(tile_kernel_launch(k, NULL, 4, NULL), TILE_ERR_ARG);
	assert_error_has(rt, "got 4 and a NULL array");
	assert_int_equal(tile_kernel_launch(k, args, 4, NULL), TILE_ERR_ARG);
	assert_error_has(rt, "kernel 'vector_add', argument 3 ('n'): expected i32, got i64");
	args[3] = tile_arg_i32(1000);
	args[1] = tile_arg_f32(1.0f);
	assert_int_equal(tile_kernel_launch(k, args, 4, NULL), TILE_ERR_ARG);
	assert_error_has(rt, "argument 1 ('b'): expected a device pointer, got f32");
	memset(&args[1], 0, sizeof args[1]);
	assert_int_equal(tile_kernel_launch(k, args, 4, NULL), TILE_ERR_ARG);
	assert_error_has(rt, "got an invalid kind (a zeroed tile_arg?)");
	args[1] = tile_arg_strided(0x2000, s, 1);
	assert_int_equal(tile_kernel_launch(k, args, 4, NULL), TILE_ERR_ARG);
	assert_error_has(rt, "strides are only taken by tma parameters");
	assert_int_equal(f->launches, 0);
	tile_rt_destroy(rt);
}

static void test_launch_rejects_bad_grids_before_the_driver(void **state)
{
	fake_cuda *f = *state;
	tile_rt *rt = fake_rt(NULL);
	tile_kernel *k = vector_add(rt);
	tile_arg args[4] = {tile_arg_ptr(0x1000), tile_arg_ptr(0x2000), tile_arg_ptr(0x3000),
		tile_arg_i32(0)};
	tile_module *m;

	assert_int_equal(tile_kernel_launch(k, args, 4, NULL), TILE_ERR_LAUNCH);
	assert_error_has(rt, "grid x = (cdiv n 256) is 0, must be at least 1");
	assert_int_equal(load_kernel(rt, "  threads 32 1 1\n  grid 1 n 1\n  param 0 n scalar i32\n",
		"FAKE-CUBIN k:4", &m, &k), TILE_OK);
	args[0] = tile_arg_i32(70000);
	assert_int_equal(tile_kernel_launch(k, args, 1, NULL), TILE_ERR_LAUNCH);
	assert_error_has(rt, "grid y is 70000, the device allows 65535");
	assert_int_equal(f->launches, 0);
	tile_rt_destroy(rt);
}

static void test_launch_uses_launch_kernel_ex_for_clusters(void **state)
{
	fake_cuda *f = *state;
	tile_rt *rt = fake_rt(NULL);
	tile_module *m;
	tile_kernel *k;
	tile_arg args[1] = {tile_arg_i32(8)};
	tile_kernel_info info;

	assert_int_equal(load_kernel(rt, "  threads 128 1 1\n  grid n 2 1\n  smem 65536\n"
		"  cluster 2 1 1\n  param 0 n scalar i32\n", "FAKE-CUBIN k:4", &m, &k), TILE_OK);
	assert_int_equal(f->set_nonportable, -1);
	assert_int_equal(tile_kernel_get_info(k, &info), TILE_OK);
	assert_int_equal(info.cluster[0], 2);
	assert_int_equal(info.cluster[1], 1);
	assert_int_equal(info.cluster[2], 1);
	assert_int_equal(tile_kernel_launch(k, args, 1, NULL), TILE_OK);
	assert_int_equal(f->last.ex, 1);
	assert_int_equal(f->last.nattrs, 1);
	assert_int_equal(f->last.cluster[0], 2);
	assert_int_equal(f->last.cluster[1], 1);
	assert_int_equal(f->last.cluster[2], 1);
	assert_int_equal(f->last.grid[0], 8);
	assert_int_equal(f->last.smem, 65536);
	args[0] = tile_arg_i32(7);
	assert_int_equal(tile_kernel_launch(k, args, 1, NULL), TILE_ERR_LAUNCH);
	assert_error_has(rt, "grid x is 7, not a multiple of the cluster's 2");
	tile_module_destroy(m);
	assert_int_equal(load_kernel(rt, "  threads 128 1 1\n  grid 16 1 1\n  cluster 16 1 1\n",
		"FAKE-CUBIN k:", &m, &k), TILE_OK);
	assert_int_equal(f->set_nonportable, 1);
	tile_rt_destroy(rt);
}

/* A cluster given by expressions: tile_kernel_get_info reports 0 for those dims, the launch
 * evaluates them from the scalar arguments, bounds them and passes the evaluated dims; one
 * that evaluates to 1 1 1 launches as a plain cuLaunchKernel. */
static void test_launch_evaluates_cluster_expressions(void **state)
{
	fake_cuda *f = *state;
	tile_rt *rt = fake_rt(NULL);
	tile_module *m;
	tile_kernel *k;
	tile_kernel_info info;
	tile_arg args[2] = {tile_arg_i32(8), tile_arg_i32(2)};

	assert_int_equal(load_kernel(rt, "  threads 128 1 1\n  grid n 1 1\n  cluster CL 1 1\n"
		"  param 0 n scalar i32\n  param 1 CL scalar i32\n", "FAKE-CUBIN k:4,4", &m, &k),
		TILE_OK);
	assert_int_equal(f->set_nonportable, 1); /* the size is known only at launch */
	assert_int_equal(tile_kernel_get_info(k, &info), TILE_OK);
	assert_int_equal(info.cluster[0], 0);
	assert_int_equal(info.cluster[1], 1);
	assert_int_equal(info.cluster[2], 1);
	assert_int_equal(tile_kernel_launch(k, args, 2, NULL), TILE_OK);
	assert_int_equal(f->last.ex, 1);
	assert_int_equal(f->last.nattrs, 1);
	assert_int_equal(f->last.cluster[0], 2);
	assert_int_equal(f->last.cluster[1], 1);
	assert_int_equal(f->last.cluster[2], 1);
	assert_int_equal(f->last.grid[0], 8);
	assert_int_equal(f->log[0].cluster, 2);
	args[1] = tile_arg_i32(4);
	assert_int_equal(tile_kernel_launch(k, args, 2, NULL), TILE_OK);
	assert_int_equal(f->last.cluster[0], 4);
	args[0] = tile_arg_i32(18);
	args[1] = tile_arg_i32(9); /* non-portable, allowed at lookup */
	assert_int_equal(tile_kernel_launch(k, args, 2, NULL), TILE_OK);
	assert_int_equal(f->last.cluster[0], 9);
	assert_int_equal(f->launches, 3);
	/* refused before the driver, naming the kernel, axis, expression and value */
	args[1] = tile_arg_i32(0);
	assert_int_equal(tile_kernel_launch(k, args, 2, NULL), TILE_ERR_LAUNCH);
	assert_error_has(rt, "kernel 'k': cluster x = CL is 0, must be at least 1");
	args[0] = tile_arg_i32(34);
	args[1] = tile_arg_i32(17);
	assert_int_equal(tile_kernel_launch(k, args, 2, NULL), TILE_ERR_LAUNCH);
	assert_error_has(rt, "kernel 'k': cluster x = CL is 17: 17x1x1 is more than 16 CTAs");
	args[0] = tile_arg_i32(6);
	args[1] = tile_arg_i32(4);
	assert_int_equal(tile_kernel_launch(k, args, 2, NULL), TILE_ERR_LAUNCH);
	assert_error_has(rt, "kernel 'k': grid x is 6, not a multiple of the cluster's 4 "
		"(cluster x = CL)");
	assert_int_equal(f->launches, 3);
	/* 1 1 1 at launch: no cluster attribute, a plain launch */
	args[1] = tile_arg_i32(1);
	assert_int_equal(tile_kernel_launch(k, args, 2, NULL), TILE_OK);
	assert_int_equal(f->last.ex, 0);
	assert_int_equal(f->last.cluster[0], 0);
	assert_int_equal(f->log[3].cluster, 1);
	assert_int_equal(tile_kernel_launch_ex(k, args, 2, NULL, TILE_LAUNCH_EARLY_START), TILE_OK);
	assert_int_equal(f->last.ex, 1);
	assert_int_equal(f->last.nattrs, 1);
	assert_int_equal(f->last.early_start, 1);
	assert_int_equal(f->last.cluster[0], 0);
	assert_int_equal(f->launches, 5);
	tile_rt_destroy(rt);
}

/* The compiler's form `cluster (/ HV H) 1 1` on y, with a grid dim checked against it. */
static void test_launch_checks_the_grid_against_an_evaluated_cluster(void **state)
{
	fake_cuda *f = *state;
	tile_rt *rt = fake_rt(NULL);
	tile_module *m;
	tile_kernel *k;
	tile_arg args[3] = {tile_arg_i32(12), tile_arg_i64(8), tile_arg_i32(2)};

	assert_int_equal(load_kernel(rt, "  threads 128 1 1\n  grid 3 n 1\n"
		"  cluster 1 (/ HV H) 1\n  param 0 n scalar i32\n  param 1 HV scalar i64\n"
		"  param 2 H scalar i32\n", "FAKE-CUBIN k:4,8,4", &m, &k), TILE_OK);
	assert_int_equal(tile_kernel_launch(k, args, 3, NULL), TILE_OK);
	assert_int_equal(f->last.grid[1], 12);
	assert_int_equal(f->last.cluster[0], 1);
	assert_int_equal(f->last.cluster[1], 4);
	assert_int_equal(f->last.cluster[2], 1);
	args[0] = tile_arg_i32(10);
	assert_int_equal(tile_kernel_launch(k, args, 3, NULL), TILE_ERR_LAUNCH);
	assert_error_has(rt, "grid y is 10, not a multiple of the cluster's 4 "
		"(cluster y = (/ HV H))");
	args[2] = tile_arg_i32(0);
	assert_int_equal(tile_kernel_launch(k, args, 3, NULL), TILE_ERR_LAUNCH);
	assert_error_has(rt, "kernel 'k': cluster y = (/ HV H) divides by zero or overflows");
	assert_int_equal(f->launches, 1);
	tile_rt_destroy(rt);
}

/* Below sm_90 an expression cluster loads (it may evaluate to 1 1 1) and sets no attribute;
 * a launch that needs a real cluster is refused then. */
static void test_launch_refuses_an_evaluated_cluster_before_hopper(void **state)
{
	fake_cuda *f = *state;
	tile_rt *rt;
	tile_module *m;
	tile_kernel *k;
	tile_arg args[2] = {tile_arg_i32(4), tile_arg_i32(2)};

	f->dev_attr[TCU_DEV_COMPUTE_CAPABILITY_MAJOR] = 8;
	rt = fake_rt(NULL);
	assert_int_equal(load_kernel(rt, "  threads 128 1 1\n  grid n 1 1\n  cluster CL 1 1\n"
		"  param 0 n scalar i32\n  param 1 CL scalar i32\n", "FAKE-CUBIN k:4,4", &m, &k),
		TILE_OK);
	assert_int_equal(f->set_nonportable, -1);
	assert_int_equal(tile_kernel_launch(k, args, 2, NULL), TILE_ERR_LAUNCH);
	assert_error_has(rt, "kernel 'k' asks for a 2x1x1 cluster; clusters need compute "
		"capability 9.0, the device has 8.0");
	assert_int_equal(f->launches, 0);
	args[1] = tile_arg_i32(1);
	assert_int_equal(tile_kernel_launch(k, args, 2, NULL), TILE_OK);
	assert_int_equal(f->last.ex, 0);
	tile_rt_destroy(rt);
}

/* TILE_LAUNCH_EARLY_START: cuLaunchKernelEx with the programmatic-stream-serialization
 * attribute (beside a cluster's); unknown flags are refused before the driver. */
static void test_launch_early_start(void **state)
{
	fake_cuda *f = *state;
	tile_rt *rt = fake_rt(NULL);
	tile_module *m;
	tile_kernel *k;
	tile_arg args[1] = {tile_arg_i32(8)};

	assert_int_equal(load_kernel(rt, "  threads 128 1 1\n  grid n 1 1\n"
		"  param 0 n scalar i32\n", "FAKE-CUBIN k:4", &m, &k), TILE_OK);
	assert_int_equal(tile_kernel_launch(k, args, 1, NULL), TILE_OK);
	assert_int_equal(f->last.ex, 0);
	assert_int_equal(tile_kernel_launch_ex(k, args, 1, NULL, TILE_LAUNCH_EARLY_START), TILE_OK);
	assert_int_equal(f->last.ex, 1);
	assert_int_equal(f->last.nattrs, 1);
	assert_int_equal(f->last.early_start, 1);
	assert_int_equal(f->last.grid[0], 8);
	int before = f->launches;
	assert_int_equal(tile_kernel_launch_ex(k, args, 1, NULL, 6), TILE_ERR_ARG);
	assert_error_has(rt, "unknown launch flags 0x6");
	assert_int_equal(f->launches, before);
	tile_module_destroy(m);
	assert_int_equal(load_kernel(rt, "  threads 128 1 1\n  grid n 2 1\n"
		"  cluster 2 1 1\n  param 0 n scalar i32\n", "FAKE-CUBIN k:4", &m, &k), TILE_OK);
	f->last.early_start = 0;
	assert_int_equal(tile_kernel_launch_ex(k, args, 1, NULL, TILE_LAUNCH_EARLY_START), TILE_OK);
	assert_int_equal(f->last.nattrs, 2);
	assert_int_equal(f->last.cluster[0], 2);
	assert_int_equal(f->last.early_start, 1);
	tile_rt_destroy(rt);
}

static void test_kernel_rejects_clusters_before_hopper(void **state)
{
	fake_cuda *f = *state;
	tile_rt *rt;
	tile_module *m;
	tile_kernel *k;

	f->dev_attr[TCU_DEV_COMPUTE_CAPABILITY_MAJOR] = 8;
	rt = fake_rt(NULL);
	assert_int_equal(load_kernel(rt, "  threads 128 1 1\n  grid 2 1 1\n  cluster 2 1 1\n",
		"FAKE-CUBIN k:", &m, &k), TILE_ERR_LAUNCH);
	assert_error_has(rt, "clusters need compute capability 9.0, the device has 8.0");
	tile_rt_destroy(rt);
}

/* A kernel takes at most 24 tma parameters (each a 128-byte tensor map on the launch's stack
 * and in its parameter space): 24 encode and launch; with a 25th the launch is refused with
 * its message before any map is encoded. */
static void test_launch_limits_tma_parameters(void **state)
{
	fake_cuda *f = *state;
	for (int n = 24; n <= 25; n++) {
		tile_rt *rt = fake_rt(NULL);
		tile_module *m;
		tile_kernel *k;
		tile_arg args[25];
		char items[1600], image[256];
		int at = snprintf(items, sizeof items, "  threads 128 1 1\n  grid 1 1 1\n");
		int im = snprintf(image, sizeof image, "FAKE-CUBIN k:");
		for (int i = 0; i < n; i++) {
			at += snprintf(items + at, sizeof items - (size_t)at,
				       "  param %d t%d tma bf16 1 64 box 64 swizzle none\n", i, i);
			im += snprintf(image + im, sizeof image - (size_t)im, "%s128", i ? "," : "");
			args[i] = tile_arg_ptr(0x10000 + 0x1000 * (uint64_t)i);
		}
		assert_int_equal(load_kernel(rt, items, image, &m, &k), TILE_OK);
		int launches = f->launches, encodes = f->encodes;
		tile_status st = tile_kernel_launch(k, args, n, NULL);
		if (n == 24) {
			assert_int_equal(st, TILE_OK);
			assert_int_equal(f->encodes, encodes + 24);
			assert_int_equal(f->launches, launches + 1);
		} else {
			assert_int_equal(st, TILE_ERR_META);
			assert_error_has(rt, "kernel 'k': more than 24 tma parameters");
			assert_int_equal(f->launches, launches);
		}
		tile_rt_destroy(rt);
	}
}

static const char tma_items[] =
	"  threads 128 1 1\n"
	"  grid (cdiv m 64) 1 1\n"
	"  param 0 a tma bf16 2 m k box 64 64 swizzle 128\n"
	"  param 1 out ptr f32 2 m k\n"
	"  param 2 m scalar i32\n"
	"  param 3 k scalar i32\n";
static const char tma_image[] = "FAKE-CUBIN k:128,8,4,4";

static void test_launch_encodes_tensor_maps_from_the_recipe(void **state)
{
	fake_cuda *f = *state;
	tile_rt *rt = fake_rt(NULL);
	tile_module *m;
	tile_kernel *k;
	tile_arg args[4] = {tile_arg_ptr(0x10000), tile_arg_ptr(0x20000), tile_arg_i32(100),
		tile_arg_i32(256)};
	uint64_t map[16], strides[1] = {1024};
	fake_encode *e = &f->enc[0];

	assert_int_equal(load_kernel(rt, tma_items, tma_image, &m, &k), TILE_OK);
	assert_int_equal(tile_kernel_launch(k, args, 4, NULL), TILE_OK);
	assert_int_equal(f->encodes, 1);
	assert_int_equal(e->dtype, 9); /* CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 */
	assert_int_equal(e->rank, 2);
	assert_int_equal(e->gaddr, 0x10000);
	assert_int_equal(e->dims[0], 256);
	assert_int_equal(e->dims[1], 100);
	assert_int_equal(e->strides[0], 512);
	assert_int_equal(e->box[0], 64);
	assert_int_equal(e->box[1], 64);
	assert_int_equal(e->elem_strides[0], 1);
	assert_int_equal(e->elem_strides[1], 1);
	assert_int_equal(e->interleave, 0);
	assert_int_equal(e->swizzle, 3); /* CU_TENSOR_MAP_SWIZZLE_128B */
	assert_int_equal(e->l2, 2);      /* CU_TENSOR_MAP_L2_PROMOTION_L2_128B */
	assert_int_equal(e->oob, 0);
	/* the 128-byte map itself is the parameter, by value */
	assert_int_equal(f->last.param_size[0], 128);
	memcpy(map, f->last.param[0], sizeof map);
	assert_int_equal(map[0], 0x7e45a9u);
	assert_int_equal(map[1], 0x10000);
	assert_int_equal(f->last.grid[0], 2);
	args[0] = tile_arg_strided(0x10000, strides, 1);
	assert_int_equal(tile_kernel_launch(k, args, 4, NULL), TILE_OK);
	assert_int_equal(f->enc[1].strides[0], 1024);
	tile_rt_destroy(rt);
}

/* The typed launch (tilec --emit=header): names and kinds must match the metadata's params in
 * order; a mismatch is refused by name before the driver sees anything. */
static void test_named_launch_checks_names_and_kinds(void **state)
{
	fake_cuda *f = *state;
	tile_rt *rt = fake_rt(NULL);
	tile_module *m;
	tile_kernel *k;
	uint64_t strides[1] = {1024};
	tile_named_arg args[4] = {
		{"a", "tma", tile_arg_strided(0x10000, strides, 1)},
		{"out", "ptr", tile_arg_ptr(0x20000)},
		{"m", "i32", tile_arg_i32(100)},
		{"k", "i32", tile_arg_i32(256)},
	};

	assert_int_equal(load_kernel(rt, tma_items, tma_image, &m, &k), TILE_OK);
	assert_int_equal(tile_kernel_launch_named(k, args, 4, NULL, TILE_LAUNCH_EARLY_START),
		TILE_OK);
	assert_int_equal(f->launches, 1);
	assert_int_equal(f->last.grid[0], 2);
	assert_int_equal(f->enc[0].strides[0], 1024);
	/* two i32 swapped: the kinds agree, the names do not */
	args[2].name = "k";
	args[3].name = "m";
	assert_int_equal(tile_kernel_launch_named(k, args, 4, NULL, 0), TILE_ERR_ARG);
	assert_error_has(rt, "kernel 'k', argument 2 ('m', i32): the typed launch passes 'k' (i32)");
	args[2].name = "m";
	args[3].name = "k";
	/* a parameter of another kind under the right name */
	args[1].kind = "tma";
	assert_int_equal(tile_kernel_launch_named(k, args, 4, NULL, 0), TILE_ERR_ARG);
	assert_error_has(rt, "argument 1 ('out', ptr): the typed launch passes 'out' (tma)");
	args[1].kind = NULL;
	assert_int_equal(tile_kernel_launch_named(k, args, 4, NULL, 0), TILE_ERR_ARG);
	assert_error_has(rt, "passes 'out' ((null))");
	args[1].kind = "ptr";
	/* a header with a parameter fewer or more */
	assert_int_equal(tile_kernel_launch_named(k, args, 3, NULL, 0), TILE_ERR_ARG);
	assert_error_has(rt, "kernel 'k' takes 4 arguments, the typed launch passes 3");
	assert_int_equal(tile_kernel_launch_named(k, NULL, 4, NULL, 0), TILE_ERR_ARG);
	assert_error_has(rt, "passes 4 and a NULL array");
	/* the names right, a value of the wrong kind: the plain launch's check still runs */
	args[2].arg = tile_arg_f32(1.0f);
	assert_int_equal(tile_kernel_launch_named(k, args, 4, NULL, 0), TILE_ERR_ARG);
	assert_error_has(rt, "argument 2 ('m'): expected i32, got f32");
	assert_int_equal(tile_kernel_launch_named(NULL, args, 4, NULL, 0), TILE_ERR_ARG);
	assert_int_equal(f->launches, 1);
	tile_rt_destroy(rt);
}

static void test_launch_reports_bad_tensors_before_the_driver(void **state)
{
	fake_cuda *f = *state;
	tile_rt *rt = fake_rt(NULL);
	tile_module *m;
	tile_kernel *k;
	uint64_t s1[1] = {1000}, s2[2] = {1024, 1024};
	tile_arg args[4] = {tile_arg_ptr(0x10008), tile_arg_ptr(0x20000), tile_arg_i32(100),
		tile_arg_i32(256)};

	assert_int_equal(load_kernel(rt, tma_items, tma_image, &m, &k), TILE_OK);
	assert_int_equal(tile_kernel_launch(k, args, 4, NULL), TILE_ERR_ARG);
	assert_error_has(rt, "kernel 'k', argument 0 ('a', tma bf16[2]): global address 0x10008 "
		"is not 16-byte aligned");
	args[0] = tile_arg_ptr(0x10000);
	args[3] = tile_arg_i32(100); /* 100 bf16 = 200-byte rows */
	assert_int_equal(tile_kernel_launch(k, args, 4, NULL), TILE_ERR_ARG);
	assert_error_has(rt, "is 200 bytes, must be a multiple of 16");
	args[3] = tile_arg_i32(256);
	args[0] = tile_arg_strided(0x10000, s1, 1);
	assert_int_equal(tile_kernel_launch(k, args, 4, NULL), TILE_ERR_ARG);
	assert_error_has(rt, "is 1000 bytes, must be a multiple of 16");
	args[0] = tile_arg_strided(0x10000, s2, 2);
	assert_int_equal(tile_kernel_launch(k, args, 4, NULL), TILE_ERR_ARG);
	assert_error_has(rt, "2 strides given, a rank-2 tensor takes 1");
	args[0] = tile_arg_ptr(0x10000);
	args[2] = tile_arg_i32(-5);
	assert_int_equal(tile_kernel_launch(k, args, 4, NULL), TILE_ERR_LAUNCH); /* grid first */
	assert_int_equal(f->encodes, 0);
	assert_int_equal(f->launches, 0);
	tile_rt_destroy(rt);
}

static void test_driver_failures_name_the_call(void **state)
{
	fake_cuda *f = *state;
	tile_rt *rt = fake_rt(NULL);
	tile_kernel *k = vector_add(rt);
	tile_arg args[4] = {tile_arg_ptr(0x1000), tile_arg_ptr(0x2000), tile_arg_ptr(0x3000),
		tile_arg_i32(10)};

	f->fail_symbol = "cuLaunchKernel";
	f->fail_result = TCU_ERROR_INVALID_VALUE;
	assert_int_equal(tile_kernel_launch(k, args, 4, NULL), TILE_ERR_CUDA);
	assert_error_has(rt,
		"cuLaunchKernel failed: CUDA_ERROR_INVALID_VALUE (1): invalid argument");
	assert_error_has(rt, "launch.c:");
	assert_int_equal(f->ctx_depth, 0);
	f->fail_symbol = "cuStreamSynchronize";
	f->fail_after = 0;
	f->fail_result = 700; /* no name in the fake's table */
	assert_int_equal(tile_stream_sync(rt, NULL), TILE_ERR_CUDA);
	assert_error_has(rt, "cuStreamSynchronize failed: CUDA_ERROR_? (700)");
	tile_rt_destroy(rt);
}

static void test_mem_helpers_move_bytes(void **state)
{
	fake_cuda *f = *state;
	tile_rt *rt = fake_rt(NULL);
	uint64_t d;
	float in[8] = {1, 2, 3, 4, 5, 6, 7, 8}, out[8];
	uint32_t bits[8];

	assert_int_equal(tile_mem_alloc(rt, sizeof in, &d), TILE_OK);
	assert_int_equal(f->mem_live, 1);
	assert_int_equal(tile_mem_copy_htod(rt, d, in, sizeof in), TILE_OK);
	assert_int_equal(tile_mem_copy_dtoh(rt, out, d, sizeof out), TILE_OK);
	assert_memory_equal(in, out, sizeof in);
	assert_int_equal(tile_mem_set32(rt, d, 0x7fc00000u, 8), TILE_OK);
	assert_int_equal(tile_mem_copy_dtoh(rt, bits, d, sizeof bits), TILE_OK);
	for (int i = 0; i < 8; i++)
		assert_int_equal(bits[i], 0x7fc00000u);
	assert_int_equal(tile_mem_set32_async(rt, d + 8, 5u, 2, NULL), TILE_OK);
	assert_int_equal(tile_mem_copy_dtoh(rt, bits, d, sizeof bits), TILE_OK);
	for (int i = 0; i < 8; i++)
		assert_int_equal(bits[i], i == 2 || i == 3 ? 5u : 0x7fc00000u);
	assert_int_equal(tile_mem_set32_async(rt, d + 2, 5u, 2, NULL), TILE_ERR_ARG);
	assert_error_has(rt, "tile_mem_set32_async: pointer not 4-byte aligned");
	assert_int_equal(tile_stream_sync(rt, NULL), TILE_OK);
	assert_int_equal(f->syncs, 1);
	assert_int_equal(tile_mem_free(rt, d), TILE_OK);
	assert_int_equal(f->ctx_depth, 0);
	tile_rt_destroy(rt);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_rt_reports_no_driver_when_the_library_is_missing),
		T(test_rt_default_driver_is_a_status_never_a_crash),
		T(test_rt_rejects_a_driver_without_tensor_maps),
		T(test_rt_rejects_old_driver_versions),
		T(test_rt_maps_stub_and_no_device_errors),
		T(test_rt_retains_and_releases_the_primary_context),
		T(test_rt_uses_a_callers_context_without_retaining),
		T(test_null_handles_and_arguments_are_arg_errors),
		T(test_module_loads_the_cubin),
		T(test_module_falls_back_to_ptx),
		T(test_module_reports_cubin_error_and_jit_log),
		T(test_module_rejects_bad_metadata_with_its_line),
		T(test_kernel_not_found_lists_the_kernels),
		T(test_kernel_raises_the_smem_limit_above_48k),
		T(test_kernel_rejects_smem_above_the_device_limit),
		T(test_kernel_rejects_threads_beyond_device_and_registers),
		T(test_kernel_checks_params_against_the_binary),
		T(test_launch_packs_arguments_and_evaluates_the_grid),
		T(test_launch_rejects_wrong_counts_and_kinds),
		T(test_named_launch_checks_names_and_kinds),
		T(test_launch_rejects_bad_grids_before_the_driver),
		T(test_launch_uses_launch_kernel_ex_for_clusters),
		T(test_launch_evaluates_cluster_expressions),
		T(test_launch_checks_the_grid_against_an_evaluated_cluster),
		T(test_launch_refuses_an_evaluated_cluster_before_hopper),
		T(test_launch_early_start),
		T(test_kernel_rejects_clusters_before_hopper),
		T(test_launch_limits_tma_parameters),
		T(test_launch_encodes_tensor_maps_from_the_recipe),
		T(test_launch_reports_bad_tensors_before_the_driver),
		T(test_driver_failures_name_the_call),
		T(test_mem_helpers_move_bytes),
	};
	return cmocka_run_group_tests_name("runtime_driver", tests, NULL, NULL);
}
