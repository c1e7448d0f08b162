/*
 * cu.h: the subset of the CUDA driver API that libtilert calls, declared here so the runtime
 * builds without a CUDA toolkit. Nothing in this file comes from cuda.h; the values and layouts
 * are copied from CUDA 13.0's cuda.h, and tests/runtime/test_cu_abi.c checks every one of them
 * against cuda.h whenever a toolkit is found at configure time.
 *
 * Names: tcu_* types and TCU_* constants ("tile's CUDA"), so that the ABI test can include both
 * this header and cuda.h. Each function-pointer typedef carries the exact signature of the
 * versioned symbol that cuda.h maps the call to (the symbol names live in driver.c's table).
 *
 * Invariant: nothing here allocates or holds state; the table of resolved entry points is the
 * tcu_api struct, one per tile_rt.
 */
#ifndef TILE_CU_H
#define TILE_CU_H

#include <stddef.h>
#include <stdint.h>

typedef int tcu_result;                 /* CUresult */
typedef int tcu_device;                 /* CUdevice (CUdevice_v1) */
typedef unsigned long long tcu_deviceptr; /* CUdeviceptr (CUdeviceptr_v2) */
typedef struct tcu_ctx_st *tcu_context;
typedef struct tcu_mod_st *tcu_module;
typedef struct tcu_func_st *tcu_function;
typedef struct tcu_stream_st *tcu_stream;

/* CUresult values the runtime tells apart (cudaError_enum). */
enum {
	TCU_SUCCESS = 0,
	TCU_ERROR_INVALID_VALUE = 1,
	TCU_ERROR_OUT_OF_MEMORY = 2,
	TCU_ERROR_NOT_INITIALIZED = 3,
	TCU_ERROR_STUB_LIBRARY = 34,
	TCU_ERROR_NO_DEVICE = 100,
	TCU_ERROR_INVALID_DEVICE = 101,
	TCU_ERROR_INVALID_IMAGE = 200,
	TCU_ERROR_NO_BINARY_FOR_GPU = 209,
	TCU_ERROR_INVALID_PTX = 218,
	TCU_ERROR_NOT_FOUND = 500,
	TCU_ERROR_SYSTEM_DRIVER_MISMATCH = 803,
	TCU_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE = 804,
};

/* CUdevice_attribute */
enum {
	TCU_DEV_MAX_THREADS_PER_BLOCK = 1,
	TCU_DEV_MAX_BLOCK_DIM_X = 2,
	TCU_DEV_MAX_BLOCK_DIM_Y = 3,
	TCU_DEV_MAX_BLOCK_DIM_Z = 4,
	TCU_DEV_MAX_GRID_DIM_X = 5,
	TCU_DEV_MAX_GRID_DIM_Y = 6,
	TCU_DEV_MAX_GRID_DIM_Z = 7,
	TCU_DEV_MULTIPROCESSOR_COUNT = 16,
	TCU_DEV_COMPUTE_CAPABILITY_MAJOR = 75,
	TCU_DEV_COMPUTE_CAPABILITY_MINOR = 76,
	TCU_DEV_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
};

/* CUfunction_attribute */
enum {
	TCU_FUNC_MAX_THREADS_PER_BLOCK = 0,
	TCU_FUNC_SHARED_SIZE_BYTES = 1,
	TCU_FUNC_NUM_REGS = 4,
	TCU_FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
	TCU_FUNC_NON_PORTABLE_CLUSTER_SIZE_ALLOWED = 14,
};

/* CUjit_option */
enum {
	TCU_JIT_INFO_LOG_BUFFER = 3,
	TCU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
	TCU_JIT_ERROR_LOG_BUFFER = 5,
	TCU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
};
typedef int tcu_jit_option;

/* CUlaunchAttributeID */
enum {
	TCU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = 4,
	TCU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION = 6,
};

/* CUtensorMapDataType, CUtensorMapInterleave, CUtensorMapSwizzle, CUtensorMapL2promotion,
 * CUtensorMapFloatOOBfill */
enum {
	TCU_TENSOR_MAP_DATA_TYPE_INT32 = 3,
	TCU_TENSOR_MAP_DATA_TYPE_INT64 = 5,
	TCU_TENSOR_MAP_DATA_TYPE_FLOAT16 = 6,
	TCU_TENSOR_MAP_DATA_TYPE_FLOAT32 = 7,
	TCU_TENSOR_MAP_DATA_TYPE_BFLOAT16 = 9,
};
enum {
	TCU_TENSOR_MAP_INTERLEAVE_NONE = 0,
	TCU_TENSOR_MAP_INTERLEAVE_32B = 2,
};
enum {
	TCU_TENSOR_MAP_SWIZZLE_NONE = 0,
	TCU_TENSOR_MAP_SWIZZLE_32B = 1,
	TCU_TENSOR_MAP_SWIZZLE_64B = 2,
	TCU_TENSOR_MAP_SWIZZLE_128B = 3,
};
enum { TCU_TENSOR_MAP_L2_PROMOTION_L2_128B = 2 };
enum { TCU_TENSOR_MAP_FLOAT_OOB_FILL_NONE = 0 };

/* CUtensorMap: 128 bytes, 128-byte aligned (CUDA 13 declares _Alignas(128); the kernel
 * parameter itself only needs 64). */
typedef struct tcu_tensor_map {
	_Alignas(128) uint64_t opaque[16];
} tcu_tensor_map;

/* CUlaunchAttributeValue: a 64-byte union; clusterDim and
 * programmaticStreamSerializationAllowed are used here. The pointer member
 * gives the union the alignment cuda.h's version has (it holds CUevent handles). */
typedef union tcu_launch_attr_value {
	char pad[64];
	struct {
		unsigned int x, y, z;
	} cluster_dim;
	int programmatic_serialization_allowed;
	void *align_as_pointer;
} tcu_launch_attr_value;

/* CUlaunchAttribute */
typedef struct tcu_launch_attr {
	int id;
	char pad[8 - sizeof(int)];
	tcu_launch_attr_value value;
} tcu_launch_attr;

/* CUlaunchConfig */
typedef struct tcu_launch_config {
	unsigned int grid_x, grid_y, grid_z;
	unsigned int block_x, block_y, block_z;
	unsigned int shared_bytes;
	tcu_stream stream;
	tcu_launch_attr *attrs;
	unsigned int num_attrs;
} tcu_launch_config;

/* Entry points, one typedef per versioned symbol (driver.c names the symbols). */
typedef tcu_result (*tcu_pfn_init)(unsigned int flags);
typedef tcu_result (*tcu_pfn_driver_get_version)(int *version);
typedef tcu_result (*tcu_pfn_get_error_text)(tcu_result err, const char **str);
typedef tcu_result (*tcu_pfn_device_get_count)(int *count);
typedef tcu_result (*tcu_pfn_device_get)(tcu_device *dev, int ordinal);
typedef tcu_result (*tcu_pfn_device_get_name)(char *name, int len, tcu_device dev);
typedef tcu_result (*tcu_pfn_device_get_attribute)(int *value, int attr, tcu_device dev);
typedef tcu_result (*tcu_pfn_primary_ctx_retain)(tcu_context *ctx, tcu_device dev);
typedef tcu_result (*tcu_pfn_primary_ctx_release)(tcu_device dev);
typedef tcu_result (*tcu_pfn_ctx_push)(tcu_context ctx);
typedef tcu_result (*tcu_pfn_ctx_pop)(tcu_context *ctx);
typedef tcu_result (*tcu_pfn_ctx_get_device)(tcu_device *dev);
typedef tcu_result (*tcu_pfn_module_load_data)(tcu_module *mod, const void *image);
typedef tcu_result (*tcu_pfn_module_load_data_ex)(tcu_module *mod, const void *image,
	unsigned int nopts, tcu_jit_option *opts, void **vals);
typedef tcu_result (*tcu_pfn_module_unload)(tcu_module mod);
typedef tcu_result (*tcu_pfn_module_get_function)(tcu_function *fn, tcu_module mod,
	const char *name);
typedef tcu_result (*tcu_pfn_func_get_attribute)(int *value, int attr, tcu_function fn);
typedef tcu_result (*tcu_pfn_func_set_attribute)(tcu_function fn, int attr, int value);
typedef tcu_result (*tcu_pfn_func_get_param_info)(tcu_function fn, size_t index,
	size_t *offset, size_t *size);
typedef tcu_result (*tcu_pfn_launch_kernel)(tcu_function fn, unsigned int gx, unsigned int gy,
	unsigned int gz, unsigned int bx, unsigned int by, unsigned int bz, unsigned int smem,
	tcu_stream stream, void **params, void **extra);
typedef tcu_result (*tcu_pfn_launch_kernel_ex)(const tcu_launch_config *cfg, tcu_function fn,
	void **params, void **extra);
typedef tcu_result (*tcu_pfn_tensor_map_encode_tiled)(tcu_tensor_map *map, int dtype,
	uint32_t rank, void *gaddr, const uint64_t *dims, const uint64_t *strides,
	const uint32_t *box, const uint32_t *elem_strides, int interleave, int swizzle,
	int l2_promotion, int oob_fill);
typedef tcu_result (*tcu_pfn_mem_alloc)(tcu_deviceptr *ptr, size_t bytes);
typedef tcu_result (*tcu_pfn_mem_free)(tcu_deviceptr ptr);
typedef tcu_result (*tcu_pfn_memcpy_htod)(tcu_deviceptr dst, const void *src, size_t bytes);
typedef tcu_result (*tcu_pfn_memcpy_dtoh)(void *dst, tcu_deviceptr src, size_t bytes);
typedef tcu_result (*tcu_pfn_memset_d32)(tcu_deviceptr dst, unsigned int value, size_t count);
typedef tcu_result (*tcu_pfn_memset_d32_async)(tcu_deviceptr dst, unsigned int value,
	size_t count, tcu_stream stream);
typedef tcu_result (*tcu_pfn_stream_synchronize)(tcu_stream stream);

/* The resolved entry points. Fields are named after the cuda.h call they implement. */
typedef struct tcu_api {
	tcu_pfn_init cuInit;
	tcu_pfn_driver_get_version cuDriverGetVersion;
	tcu_pfn_get_error_text cuGetErrorName;
	tcu_pfn_get_error_text cuGetErrorString;
	tcu_pfn_device_get_count cuDeviceGetCount;
	tcu_pfn_device_get cuDeviceGet;
	tcu_pfn_device_get_name cuDeviceGetName;
	tcu_pfn_device_get_attribute cuDeviceGetAttribute;
	tcu_pfn_primary_ctx_retain cuDevicePrimaryCtxRetain;
	tcu_pfn_primary_ctx_release cuDevicePrimaryCtxRelease;
	tcu_pfn_ctx_push cuCtxPushCurrent;
	tcu_pfn_ctx_pop cuCtxPopCurrent;
	tcu_pfn_ctx_get_device cuCtxGetDevice;
	tcu_pfn_module_load_data cuModuleLoadData;
	tcu_pfn_module_load_data_ex cuModuleLoadDataEx;
	tcu_pfn_module_unload cuModuleUnload;
	tcu_pfn_module_get_function cuModuleGetFunction;
	tcu_pfn_func_get_attribute cuFuncGetAttribute;
	tcu_pfn_func_set_attribute cuFuncSetAttribute;
	tcu_pfn_func_get_param_info cuFuncGetParamInfo; /* optional: CUDA 12.4+, else NULL */
	tcu_pfn_launch_kernel cuLaunchKernel;
	tcu_pfn_launch_kernel_ex cuLaunchKernelEx;
	tcu_pfn_tensor_map_encode_tiled cuTensorMapEncodeTiled;
	tcu_pfn_mem_alloc cuMemAlloc;
	tcu_pfn_mem_free cuMemFree;
	tcu_pfn_memcpy_htod cuMemcpyHtoD;
	tcu_pfn_memcpy_dtoh cuMemcpyDtoH;
	tcu_pfn_memset_d32 cuMemsetD32;
	tcu_pfn_memset_d32_async cuMemsetD32Async;
	tcu_pfn_stream_synchronize cuStreamSynchronize;
} tcu_api;

#endif /* TILE_CU_H */
