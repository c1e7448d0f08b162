/*
 * test_cu_abi.c: runtime/src/cu.h against the CUDA toolkit's cuda.h, when one was found at
 * configure time (else CMake builds this file with TILE_NO_CUDA_H and the test reports
 * "skipped"). Enum values, type sizes and struct layouts are compile-time checks: a mismatch
 * fails the build of this test. The versioned symbol names that driver.c resolves are checked
 * at run time against the names cuda.h maps each call to (cuMemAlloc -> cuMemAlloc_v2).
 */
#include <stdio.h>
#include <string.h>

#ifdef TILE_NO_CUDA_H
int main(void)
{
	puts("skipped: cuda.h was not found at configure time (set CUDA_HOME to check cu.h)");
	return 77;
}
#else

#include <stddef.h>
#include <cuda.h>

#include "cu.h"
#include "internal.h"

#define SAME(a, b) _Static_assert((long long)(a) == (long long)(b), #a " != " #b)
#define SAME_SIZE(a, b) _Static_assert(sizeof(a) == sizeof(b), "sizeof " #a " != " #b); \
	_Static_assert(_Alignof(a) == _Alignof(b), "alignof " #a " != " #b)
#define SAME_OFFSET(ta, fa, tb, fb) \
	_Static_assert(offsetof(ta, fa) == offsetof(tb, fb), "offsetof " #ta "." #fa)

SAME(TCU_SUCCESS, CUDA_SUCCESS);
SAME(TCU_ERROR_INVALID_VALUE, CUDA_ERROR_INVALID_VALUE);
SAME(TCU_ERROR_OUT_OF_MEMORY, CUDA_ERROR_OUT_OF_MEMORY);
SAME(TCU_ERROR_NOT_INITIALIZED, CUDA_ERROR_NOT_INITIALIZED);
SAME(TCU_ERROR_STUB_LIBRARY, CUDA_ERROR_STUB_LIBRARY);
SAME(TCU_ERROR_NO_DEVICE, CUDA_ERROR_NO_DEVICE);
SAME(TCU_ERROR_INVALID_DEVICE, CUDA_ERROR_INVALID_DEVICE);
SAME(TCU_ERROR_INVALID_IMAGE, CUDA_ERROR_INVALID_IMAGE);
SAME(TCU_ERROR_NO_BINARY_FOR_GPU, CUDA_ERROR_NO_BINARY_FOR_GPU);
SAME(TCU_ERROR_INVALID_PTX, CUDA_ERROR_INVALID_PTX);
SAME(TCU_ERROR_NOT_FOUND, CUDA_ERROR_NOT_FOUND);
SAME(TCU_ERROR_SYSTEM_DRIVER_MISMATCH, CUDA_ERROR_SYSTEM_DRIVER_MISMATCH);
SAME(TCU_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE, CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE);

SAME(TCU_DEV_MAX_THREADS_PER_BLOCK, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
SAME(TCU_DEV_MAX_BLOCK_DIM_X, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X);
SAME(TCU_DEV_MAX_BLOCK_DIM_Y, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y);
SAME(TCU_DEV_MAX_BLOCK_DIM_Z, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z);
SAME(TCU_DEV_MAX_GRID_DIM_X, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X);
SAME(TCU_DEV_MAX_GRID_DIM_Y, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y);
SAME(TCU_DEV_MAX_GRID_DIM_Z, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z);
SAME(TCU_DEV_MULTIPROCESSOR_COUNT, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
SAME(TCU_DEV_COMPUTE_CAPABILITY_MAJOR, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
SAME(TCU_DEV_COMPUTE_CAPABILITY_MINOR, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
SAME(TCU_DEV_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
	CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);

SAME(TCU_FUNC_MAX_THREADS_PER_BLOCK, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
SAME(TCU_FUNC_SHARED_SIZE_BYTES, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
SAME(TCU_FUNC_NUM_REGS, CU_FUNC_ATTRIBUTE_NUM_REGS);
SAME(TCU_FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES);
SAME(TCU_FUNC_NON_PORTABLE_CLUSTER_SIZE_ALLOWED,
	CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED);

SAME(TCU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER);
SAME(TCU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES);
SAME(TCU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER);
SAME(TCU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES);
SAME(TCU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION, CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION);
SAME(TCU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION,
	CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION);

SAME(TCU_TENSOR_MAP_DATA_TYPE_INT32, CU_TENSOR_MAP_DATA_TYPE_INT32);
SAME(TCU_TENSOR_MAP_DATA_TYPE_INT64, CU_TENSOR_MAP_DATA_TYPE_INT64);
SAME(TCU_TENSOR_MAP_DATA_TYPE_FLOAT16, CU_TENSOR_MAP_DATA_TYPE_FLOAT16);
SAME(TCU_TENSOR_MAP_DATA_TYPE_FLOAT32, CU_TENSOR_MAP_DATA_TYPE_FLOAT32);
SAME(TCU_TENSOR_MAP_DATA_TYPE_BFLOAT16, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16);
SAME(TCU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_INTERLEAVE_NONE);
SAME(TCU_TENSOR_MAP_INTERLEAVE_32B, CU_TENSOR_MAP_INTERLEAVE_32B);
SAME(TCU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE);
SAME(TCU_TENSOR_MAP_SWIZZLE_32B, CU_TENSOR_MAP_SWIZZLE_32B);
SAME(TCU_TENSOR_MAP_SWIZZLE_64B, CU_TENSOR_MAP_SWIZZLE_64B);
SAME(TCU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_SWIZZLE_128B);
SAME(TCU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_128B);
SAME(TCU_TENSOR_MAP_FLOAT_OOB_FILL_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);

SAME_SIZE(tcu_result, CUresult);
SAME_SIZE(tcu_device, CUdevice);
SAME_SIZE(tcu_deviceptr, CUdeviceptr);
SAME_SIZE(tcu_context, CUcontext);
SAME_SIZE(tcu_stream, CUstream);
SAME_SIZE(tcu_jit_option, CUjit_option);
SAME_SIZE(tcu_tensor_map, CUtensorMap);
SAME_SIZE(tcu_launch_attr_value, CUlaunchAttributeValue);
SAME_SIZE(tcu_launch_attr, CUlaunchAttribute);
SAME_SIZE(tcu_launch_config, CUlaunchConfig);
SAME_OFFSET(tcu_launch_attr_value, cluster_dim.z, CUlaunchAttributeValue, clusterDim.z);
SAME_OFFSET(tcu_launch_attr_value, programmatic_serialization_allowed, CUlaunchAttributeValue,
	programmaticStreamSerializationAllowed);
SAME_OFFSET(tcu_launch_attr, value, CUlaunchAttribute, value);
SAME_OFFSET(tcu_launch_config, grid_x, CUlaunchConfig, gridDimX);
SAME_OFFSET(tcu_launch_config, block_z, CUlaunchConfig, blockDimZ);
SAME_OFFSET(tcu_launch_config, shared_bytes, CUlaunchConfig, sharedMemBytes);
SAME_OFFSET(tcu_launch_config, stream, CUlaunchConfig, hStream);
SAME_OFFSET(tcu_launch_config, attrs, CUlaunchConfig, attrs);
SAME_OFFSET(tcu_launch_config, num_attrs, CUlaunchConfig, numAttrs);

#define STR_(x) #x
#define STR(x) STR_(x) /* the name cuda.h maps a call to, after macro expansion */

static int check(const char *call, const char *mapped)
{
	const char *ours = tile_driver_symbol(call);

	if (ours && strcmp(ours, mapped) == 0)
		return 0;
	printf("FAIL: %s: driver.c resolves %s, cuda.h calls %s\n", call, ours ? ours : "nothing",
		mapped);
	return 1;
}

int main(void)
{
	int bad = 0;

	bad += check("cuInit", STR(cuInit));
	bad += check("cuDriverGetVersion", STR(cuDriverGetVersion));
	bad += check("cuGetErrorName", STR(cuGetErrorName));
	bad += check("cuGetErrorString", STR(cuGetErrorString));
	bad += check("cuDeviceGetCount", STR(cuDeviceGetCount));
	bad += check("cuDeviceGet", STR(cuDeviceGet));
	bad += check("cuDeviceGetName", STR(cuDeviceGetName));
	bad += check("cuDeviceGetAttribute", STR(cuDeviceGetAttribute));
	bad += check("cuDevicePrimaryCtxRetain", STR(cuDevicePrimaryCtxRetain));
	bad += check("cuDevicePrimaryCtxRelease", STR(cuDevicePrimaryCtxRelease));
	bad += check("cuCtxPushCurrent", STR(cuCtxPushCurrent));
	bad += check("cuCtxPopCurrent", STR(cuCtxPopCurrent));
	bad += check("cuCtxGetDevice", STR(cuCtxGetDevice));
	bad += check("cuModuleLoadData", STR(cuModuleLoadData));
	bad += check("cuModuleLoadDataEx", STR(cuModuleLoadDataEx));
	bad += check("cuModuleUnload", STR(cuModuleUnload));
	bad += check("cuModuleGetFunction", STR(cuModuleGetFunction));
	bad += check("cuFuncGetAttribute", STR(cuFuncGetAttribute));
	bad += check("cuFuncSetAttribute", STR(cuFuncSetAttribute));
	bad += check("cuFuncGetParamInfo", STR(cuFuncGetParamInfo));
	bad += check("cuLaunchKernel", STR(cuLaunchKernel));
	bad += check("cuLaunchKernelEx", STR(cuLaunchKernelEx));
	bad += check("cuTensorMapEncodeTiled", STR(cuTensorMapEncodeTiled));
	bad += check("cuMemAlloc", STR(cuMemAlloc));
	bad += check("cuMemFree", STR(cuMemFree));
	bad += check("cuMemcpyHtoD", STR(cuMemcpyHtoD));
	bad += check("cuMemcpyDtoH", STR(cuMemcpyDtoH));
	bad += check("cuMemsetD32", STR(cuMemsetD32));
	bad += check("cuMemsetD32Async", STR(cuMemsetD32Async));
	bad += check("cuStreamSynchronize", STR(cuStreamSynchronize));
	printf("%s: cu.h and driver.c agree with cuda.h %d\n", bad ? "FAIL" : "ok", CUDA_VERSION);
	return bad ? 1 : 0;
}
#endif
