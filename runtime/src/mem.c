/*
 * mem.c: device memory helpers (alloc, free, copies, fill) and stream synchronisation, through
 * the same dlopen'd driver, so that examples and tests need neither cuda.h nor libcudart.
 *
 * Each call makes the rt's context current for its duration (push/pop). Copies are the
 * synchronous cuMemcpyHtoD/DtoH (ordered after all work on the legacy default stream);
 * tile_mem_set32 fills `count` 32-bit words (a NaN pattern poisons an f32 output);
 * tile_mem_set32_async the same in stream order (graph-capturable). Device
 * pointers are CUdeviceptr values carried as uint64_t; 0 is never a valid allocation.
 */
#include "internal.h"

tile_status tile_mem_alloc(tile_rt *rt, size_t bytes, uint64_t *out)
{
	tcu_deviceptr p = 0;
	tile_status st;

	if (!rt)
		return TILE_ERR_ARG; /* no handle to put the detail on */
	if (!out || bytes == 0)
		return tile_err_set(&rt->err, TILE_ERR_ARG, "tile_mem_alloc: %s",
			out ? "zero bytes requested" : "NULL out");
	*out = 0;
	if ((st = tile_ctx_enter(rt)))
		return st;
	st = TILE_CU(rt, cuMemAlloc, (&p, bytes));
	tile_ctx_leave(rt);
	if (!st)
		*out = (uint64_t)p;
	return st;
}

tile_status tile_mem_free(tile_rt *rt, uint64_t ptr)
{
	tile_status st;

	if (!rt)
		return TILE_ERR_ARG; /* no handle to put the detail on */
	if (ptr == 0)
		return TILE_OK;
	if ((st = tile_ctx_enter(rt)))
		return st;
	st = TILE_CU(rt, cuMemFree, ((tcu_deviceptr)ptr));
	tile_ctx_leave(rt);
	return st;
}

tile_status tile_mem_copy_htod(tile_rt *rt, uint64_t dst, const void *src, size_t bytes)
{
	tile_status st;

	if (!rt)
		return TILE_ERR_ARG; /* no handle to put the detail on */
	if ((!src || !dst) && bytes)
		return tile_err_set(&rt->err, TILE_ERR_ARG, "tile_mem_copy_htod: NULL pointer");
	if (bytes == 0)
		return TILE_OK;
	if ((st = tile_ctx_enter(rt)))
		return st;
	st = TILE_CU(rt, cuMemcpyHtoD, ((tcu_deviceptr)dst, src, bytes));
	tile_ctx_leave(rt);
	return st;
}

tile_status tile_mem_copy_dtoh(tile_rt *rt, void *dst, uint64_t src, size_t bytes)
{
	tile_status st;

	if (!rt)
		return TILE_ERR_ARG; /* no handle to put the detail on */
	if ((!src || !dst) && bytes)
		return tile_err_set(&rt->err, TILE_ERR_ARG, "tile_mem_copy_dtoh: NULL pointer");
	if (bytes == 0)
		return TILE_OK;
	if ((st = tile_ctx_enter(rt)))
		return st;
	st = TILE_CU(rt, cuMemcpyDtoH, (dst, (tcu_deviceptr)src, bytes));
	tile_ctx_leave(rt);
	return st;
}

static tile_status set32(tile_rt *rt, uint64_t dst, uint32_t value, size_t count, int async,
	void *stream)
{
	const char *name = async ? "tile_mem_set32_async" : "tile_mem_set32";
	tile_status st;

	if (!rt)
		return TILE_ERR_ARG; /* no handle to put the detail on */
	if (!dst && count)
		return tile_err_set(&rt->err, TILE_ERR_ARG, "%s: NULL pointer", name);
	if (dst % 4 != 0)
		return tile_err_set(&rt->err, TILE_ERR_ARG, "%s: pointer not 4-byte aligned", name);
	if (count == 0)
		return TILE_OK;
	if ((st = tile_ctx_enter(rt)))
		return st;
	if (async)
		st = TILE_CU(rt, cuMemsetD32Async, ((tcu_deviceptr)dst, value, count,
			(tcu_stream)stream));
	else
		st = TILE_CU(rt, cuMemsetD32, ((tcu_deviceptr)dst, value, count));
	tile_ctx_leave(rt);
	return st;
}

tile_status tile_mem_set32(tile_rt *rt, uint64_t dst, uint32_t value, size_t count)
{
	return set32(rt, dst, value, count, 0, NULL);
}

tile_status tile_mem_set32_async(tile_rt *rt, uint64_t dst, uint32_t value, size_t count,
	void *stream)
{
	return set32(rt, dst, value, count, 1, stream);
}

tile_status tile_stream_sync(tile_rt *rt, void *stream)
{
	tile_status st;

	if (!rt)
		return TILE_ERR_ARG; /* no handle to put the detail on */
	if ((st = tile_ctx_enter(rt)))
		return st;
	st = TILE_CU(rt, cuStreamSynchronize, ((tcu_stream)stream));
	tile_ctx_leave(rt);
	return st;
}
