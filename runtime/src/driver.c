/*
 * driver.c: opens the CUDA driver with dlopen and fills the tcu_api table.
 *
 * Each entry is resolved by the exact versioned symbol that cuda.h (13.0) maps the call to
 * (cuMemAlloc -> cuMemAlloc_v2, cuCtxPushCurrent -> cuCtxPushCurrent_v2, ...), so the
 * signature in cu.h is the one the symbol has. Looking up those names with dlsym gives the same
 * pointers as cuGetProcAddress would for a per-entry CUDA version, and works on every driver
 * the runtime supports (CUDA 12.0+, the first with cuTensorMapEncodeTiled and
 * cuLaunchKernelEx). The legacy default stream is used (no _ptsz/_ptds variants).
 *
 * A missing library or required symbol is TILE_ERR_NO_DRIVER; optional entries stay NULL.
 * The library is opened RTLD_NODELETE: the driver starts threads of its own, so its code is
 * never unmapped, even after the last tile_rt closes it.
 */
#include <dlfcn.h>
#include <stddef.h>
#include <string.h>

#include "internal.h"

typedef struct entry {
	const char *call;     /* the name a cuda.h user writes */
	const char *symbol;   /* the versioned symbol cuda.h maps it to */
	size_t offset;   /* of the field in tcu_api */
	bool required;
} entry;

#define E(field, symbol) {#field, symbol, offsetof(tcu_api, field), true}
#define OPTIONAL(field, symbol) {#field, symbol, offsetof(tcu_api, field), false}

static const entry entries[] = {
	E(cuInit, "cuInit"),
	E(cuDriverGetVersion, "cuDriverGetVersion"),
	E(cuGetErrorName, "cuGetErrorName"),
	E(cuGetErrorString, "cuGetErrorString"),
	E(cuDeviceGetCount, "cuDeviceGetCount"),
	E(cuDeviceGet, "cuDeviceGet"),
	E(cuDeviceGetName, "cuDeviceGetName"),
	E(cuDeviceGetAttribute, "cuDeviceGetAttribute"),
	E(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain"),
	E(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2"),
	E(cuCtxPushCurrent, "cuCtxPushCurrent_v2"),
	E(cuCtxPopCurrent, "cuCtxPopCurrent_v2"),
	E(cuCtxGetDevice, "cuCtxGetDevice"),
	E(cuModuleLoadData, "cuModuleLoadData"),
	E(cuModuleLoadDataEx, "cuModuleLoadDataEx"),
	E(cuModuleUnload, "cuModuleUnload"),
	E(cuModuleGetFunction, "cuModuleGetFunction"),
	E(cuFuncGetAttribute, "cuFuncGetAttribute"),
	E(cuFuncSetAttribute, "cuFuncSetAttribute"),
	OPTIONAL(cuFuncGetParamInfo, "cuFuncGetParamInfo"),
	E(cuLaunchKernel, "cuLaunchKernel"),
	E(cuLaunchKernelEx, "cuLaunchKernelEx"),
	E(cuTensorMapEncodeTiled, "cuTensorMapEncodeTiled"),
	E(cuMemAlloc, "cuMemAlloc_v2"),
	E(cuMemFree, "cuMemFree_v2"),
	E(cuMemcpyHtoD, "cuMemcpyHtoD_v2"),
	E(cuMemcpyDtoH, "cuMemcpyDtoH_v2"),
	E(cuMemsetD32, "cuMemsetD32_v2"),
	E(cuMemsetD32Async, "cuMemsetD32Async"),
	E(cuStreamSynchronize, "cuStreamSynchronize"),
};

tile_status tile_driver_open(tcu_api *api, void **lib, const char *path, tile_err *e)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);

	memset(api, 0, sizeof *api);
	*lib = NULL;
	if (!h) {
		const char *why = dlerror();
		return tile_err_set(e, TILE_ERR_NO_DRIVER, "cannot load the CUDA driver '%s': %s",
			path, why ? why : "unknown dlopen error");
	}
	for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++) {
		void *sym = dlsym(h, entries[i].symbol);
		if (!sym && entries[i].required) {
			dlclose(h);
			return tile_err_set(e, TILE_ERR_NO_DRIVER, "the CUDA driver '%s' has "
				"no %s: libtilert needs a driver for CUDA 12.0 or newer", path,
				entries[i].symbol);
		}
		memcpy((char *)api + entries[i].offset, &sym, sizeof sym);
	}
	*lib = h;
	return TILE_OK;
}

const char *tile_driver_symbol(const char *call)
{
	for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++)
		if (strcmp(entries[i].call, call) == 0)
			return entries[i].symbol;
	return NULL;
}

void tile_driver_close(void *lib)
{
	if (lib)
		dlclose(lib);
}
