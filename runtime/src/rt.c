/*
 * rt.c: the tile_rt handle: driver, device, context, limits, host allocator, error detail.
 *
 * tile_rt_create_ex: allocate the handle -> dlopen the driver (driver.c) -> cuInit -> check the
 * driver is CUDA 12.0+ -> take the caller's context or retain the device's primary context ->
 * read the device limits that launches are checked against. Any failure undoes the steps
 * before it, frees the handle and leaves *out NULL; the detail goes to opt->error if given.
 *
 * Invariants: rt->ctx is valid for the handle's lifetime; owns_primary says whether destroy
 * must release it. Context-dependent work is bracketed by tile_ctx_enter/leave (push/pop), so
 * the calling thread's current context is the same before and after every public call.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static void *default_alloc(void *user, size_t size)
{
	(void)user;
	return malloc(size);
}

static void default_free(void *user, void *ptr)
{
	(void)user;
	free(ptr);
}

void *tile_host_alloc(const tile_allocator *a, size_t size)
{
	void *p = a->alloc(a->user, size ? size : 1);

	if (p)
		memset(p, 0, size);
	return p;
}

void tile_host_free(const tile_allocator *a, void *p)
{
	if (p)
		a->free(a->user, p);
}

tile_status tile_ctx_enter(tile_rt *rt)
{
	return TILE_CU(rt, cuCtxPushCurrent, (rt->ctx));
}

void tile_ctx_leave(tile_rt *rt)
{
	tcu_context popped;

	rt->cu.cuCtxPopCurrent(&popped);
}

/* cuInit's failures that mean "no usable driver" or "no device" rather than a driver error. */
static tile_status init_status(tcu_result r)
{
	switch (r) {
	case TCU_ERROR_NO_DEVICE:
		return TILE_ERR_NO_DEVICE;
	case TCU_ERROR_STUB_LIBRARY:
	case TCU_ERROR_SYSTEM_DRIVER_MISMATCH:
	case TCU_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE:
		return TILE_ERR_NO_DRIVER;
	default:
		return TILE_ERR_CUDA;
	}
}

static tile_status init_driver(tile_rt *rt)
{
	tcu_result r = rt->cu.cuInit(0);
	tile_status st;

	if (r != TCU_SUCCESS) {
		tile_cu_check(rt, r, "cuInit", __FILE__, __LINE__);
		return init_status(r);
	}
	st = TILE_CU(rt, cuDriverGetVersion, (&rt->driver_version));
	if (st)
		return st;
	if (rt->driver_version < 12000)
		return tile_err_set(&rt->err, TILE_ERR_NO_DRIVER,
			"the CUDA driver supports CUDA %d.%d; libtilert needs 12.0 or newer",
			rt->driver_version / 1000, rt->driver_version % 1000 / 10);
	return TILE_OK;
}

static tile_status use_caller_context(tile_rt *rt, void *context)
{
	tile_status st;

	rt->ctx = (tcu_context)context;
	st = tile_ctx_enter(rt);
	if (st)
		return st;
	st = TILE_CU(rt, cuCtxGetDevice, (&rt->device));
	tile_ctx_leave(rt);
	return st;
}

static tile_status retain_primary_context(tile_rt *rt, int ordinal)
{
	int count = 0;
	tile_status st;

	if (ordinal < 0)
		return tile_err_set(&rt->err, TILE_ERR_ARG, "device ordinal %d is negative",
			ordinal);
	st = TILE_CU(rt, cuDeviceGetCount, (&count));
	if (st)
		return st;
	if (ordinal >= count)
		return tile_err_set(&rt->err, TILE_ERR_NO_DEVICE,
			"no CUDA device %d: the driver sees %d device%s", ordinal, count,
			count == 1 ? "" : "s");
	st = TILE_CU(rt, cuDeviceGet, (&rt->device, ordinal));
	if (!st)
		st = TILE_CU(rt, cuDevicePrimaryCtxRetain, (&rt->ctx, rt->device));
	rt->owns_primary = st == TILE_OK;
	return st;
}

static tile_status read_limits(tile_rt *rt)
{
	tile_limits *l = &rt->lim;
	const struct {
		int attr;
		int *dst;
	} q[] = {
		{TCU_DEV_MAX_THREADS_PER_BLOCK, &l->max_threads},
		{TCU_DEV_MAX_BLOCK_DIM_X, &l->max_block[0]},
		{TCU_DEV_MAX_BLOCK_DIM_Y, &l->max_block[1]},
		{TCU_DEV_MAX_BLOCK_DIM_Z, &l->max_block[2]},
		{TCU_DEV_MAX_GRID_DIM_X, &l->max_grid[0]},
		{TCU_DEV_MAX_GRID_DIM_Y, &l->max_grid[1]},
		{TCU_DEV_MAX_GRID_DIM_Z, &l->max_grid[2]},
		{TCU_DEV_MULTIPROCESSOR_COUNT, &l->sm_count},
		{TCU_DEV_COMPUTE_CAPABILITY_MAJOR, &l->cc_major},
		{TCU_DEV_COMPUTE_CAPABILITY_MINOR, &l->cc_minor},
		{TCU_DEV_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, &l->smem_optin},
	};

	for (size_t i = 0; i < sizeof q / sizeof q[0]; i++) {
		tile_status st = TILE_CU(rt, cuDeviceGetAttribute,
			(q[i].dst, q[i].attr, rt->device));
		if (st)
			return st;
	}
	return TILE_OK;
}

static tile_status rt_open(tile_rt *rt, const tile_rt_options *opt)
{
	const char *path = opt->driver_path ? opt->driver_path : "libcuda.so.1";
	tile_status st = tile_driver_open(&rt->cu, &rt->lib, path, &rt->err);

	if (!st)
		st = init_driver(rt);
	if (!st)
		st = opt->context ? use_caller_context(rt, opt->context)
				  : retain_primary_context(rt, opt->device);
	if (!st)
		st = read_limits(rt);
	return st;
}

static void rt_close(tile_rt *rt)
{
	if (rt->owns_primary)
		rt->cu.cuDevicePrimaryCtxRelease(rt->device);
	rt->owns_primary = false;
	tile_driver_close(rt->lib);
	rt->lib = NULL;
}

static tile_status create_fail(const tile_rt_options *opt, tile_status st, const char *msg)
{
	if (opt && opt->error && opt->error_size > 0)
		snprintf(opt->error, opt->error_size, "%s", msg);
	return st;
}

tile_status tile_rt_create(int device, tile_rt **out)
{
	tile_rt_options opt;

	memset(&opt, 0, sizeof opt);
	opt.device = device;
	return tile_rt_create_ex(&opt, out);
}

tile_status tile_rt_create_ex(const tile_rt_options *opt, tile_rt **out)
{
	tile_allocator a = {default_alloc, default_free, NULL};
	tile_rt *rt;
	tile_status st;

	if (!out || !opt)
		return create_fail(opt, TILE_ERR_ARG, "tile_rt_create_ex: NULL options or out");
	*out = NULL;
	if (opt->allocator && (!opt->allocator->alloc || !opt->allocator->free))
		return create_fail(opt, TILE_ERR_ARG,
			"tile_rt_create_ex: allocator lacks alloc or free");
	if (opt->allocator)
		a = *opt->allocator;
	rt = tile_host_alloc(&a, sizeof *rt);
	if (!rt)
		return create_fail(opt, TILE_ERR_NOMEM, "tile_rt_create_ex: out of host memory");
	rt->alloc = a;
	st = rt_open(rt, opt);
	if (st) {
		create_fail(opt, st, rt->err.msg);
		rt_close(rt);
		tile_host_free(&a, rt);
		return st;
	}
	*out = rt;
	return TILE_OK;
}

void tile_rt_destroy(tile_rt *rt)
{
	tile_allocator a;

	if (!rt)
		return;
	while (rt->modules)
		tile_module_destroy(rt->modules);
	rt_close(rt);
	a = rt->alloc;
	tile_host_free(&a, rt);
}

const char *tile_rt_error(const tile_rt *rt)
{
	return rt ? rt->err.msg : "tile_rt_error: NULL tile_rt";
}

tile_status tile_rt_device_info(tile_rt *rt, tile_device_info *out)
{
	tile_status st;

	if (!rt || !out)
		return rt ? tile_err_set(&rt->err, TILE_ERR_ARG, "tile_rt_device_info: NULL out")
			  : TILE_ERR_ARG;
	memset(out, 0, sizeof *out);
	st = TILE_CU(rt, cuDeviceGetName, (out->name, (int)sizeof out->name, rt->device));
	if (st)
		return st;
	out->name[sizeof out->name - 1] = '\0';
	out->cc_major = rt->lim.cc_major;
	out->cc_minor = rt->lim.cc_minor;
	out->sm_count = rt->lim.sm_count;
	out->driver_version = rt->driver_version;
	out->smem_optin = (size_t)rt->lim.smem_optin;
	return TILE_OK;
}
