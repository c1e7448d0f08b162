/*
 * status.c: status names and the error detail kept on a tile_rt.
 *
 * tile_err_set formats a message into a fixed buffer (truncating, never allocating, so it
 * works when an allocation is what failed) and returns the status it was given, which lets
 * callers write `return tile_err_set(e, TILE_ERR_ARG, "...")`. tile_cu_check is the body of
 * the TILE_CU macro: it names the failing driver call, its CUresult name and description
 * (from cuGetErrorName/cuGetErrorString) and the source location.
 */
#include <stdio.h>
#include <string.h>

#include "internal.h"

const char *tile_status_str(tile_status s)
{
	switch (s) {
	case TILE_OK: return "TILE_OK";
	case TILE_ERR_ARG: return "TILE_ERR_ARG";
	case TILE_ERR_NOMEM: return "TILE_ERR_NOMEM";
	case TILE_ERR_NO_DRIVER: return "TILE_ERR_NO_DRIVER";
	case TILE_ERR_NO_DEVICE: return "TILE_ERR_NO_DEVICE";
	case TILE_ERR_CUDA: return "TILE_ERR_CUDA";
	case TILE_ERR_NOT_FOUND: return "TILE_ERR_NOT_FOUND";
	case TILE_ERR_META: return "TILE_ERR_META";
	case TILE_ERR_LAUNCH: return "TILE_ERR_LAUNCH";
	}
	return "TILE_ERR_(unknown)";
}

tile_status tile_err_set(tile_err *e, tile_status st, const char *fmt, ...)
{
	va_list ap;

	if (!e)
		return st;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof e->msg, fmt, ap);
	va_end(ap);
	return st;
}

void tile_err_clear(tile_err *e)
{
	e->msg[0] = '\0';
}

tile_status tile_cu_check(tile_rt *rt, tcu_result r, const char *call, const char *file,
	int line)
{
	const char *name = NULL, *desc = NULL;
	const char *base = strrchr(file, '/');

	if (r == TCU_SUCCESS)
		return TILE_OK;
	if (rt->cu.cuGetErrorName && rt->cu.cuGetErrorName(r, &name) != TCU_SUCCESS)
		name = NULL;
	if (rt->cu.cuGetErrorString && rt->cu.cuGetErrorString(r, &desc) != TCU_SUCCESS)
		desc = NULL;
	return tile_err_set(&rt->err, TILE_ERR_CUDA, "%s failed: %s (%d): %s [%s:%d]", call,
		name ? name : "CUDA_ERROR_?", r, desc ? desc : "no description",
		base ? base + 1 : file, line);
}
