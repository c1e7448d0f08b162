/*
 * fake_cuda.h: the control and record block of the fake CUDA driver (fake_cuda.c), a shared
 * library that exports the driver entry points libtilert resolves, so the CPU tests can load it
 * through tile_rt_options.driver_path and exercise every path without a GPU.
 *
 * Tests reach the block with dlopen(FAKE_CUDA_PATH) + dlsym("fake_cuda_state") (the same
 * library instance the runtime opened) and reset it with fake_cuda_reset() before each case.
 *
 * Images: a "cubin" is text starting with "FAKE-CUBIN", a PTX text starts with "// FAKE-PTX";
 * both then list kernels as `name:size,size,...` (parameter sizes in bytes), e.g.
 * "FAKE-CUBIN vector_add:8,8,8,4". A PTX text containing "SYNTAX-ERROR" fails to JIT with a
 * log. Device memory is host memory (malloc), so copies and fills really move bytes. With
 * `any_image` set any other cubin loads too (a real one: tests of a kernel library's launch
 * plans), its kernels found by any name, their parameters unknown to the fake (not recorded;
 * cuFuncGetParamInfo answers "not supported").
 */
#ifndef FAKE_CUDA_H
#define FAKE_CUDA_H

#include <stddef.h>
#include <stdint.h>

enum { FAKE_MAX_PARAMS = 64, FAKE_PARAM_BYTES = 128, FAKE_ATTRS = 128, FAKE_LOG = 16 };

/* A launch in brief, for the log of launches. */
typedef struct fake_launch_brief {
	char kernel[64];
	unsigned int grid[3];
	int early_start;
	unsigned int cluster;  /* the cluster-dimension attribute's x (1 without one) */
	const void *image;     /* what its module was loaded from (which build of a kernel) */
	void *stream;
} fake_launch_brief;

typedef struct fake_launch {
	char kernel[64];
	unsigned int grid[3], block[3], smem;
	void *stream;
	int ex;                  /* 1: cuLaunchKernelEx */
	unsigned int cluster[3]; /* from the cluster-dimension attribute (Ex only) */
	int nattrs;
	int early_start;         /* from the programmatic-stream-serialization attribute */
	int nparams;
	size_t param_size[FAKE_MAX_PARAMS];
	unsigned char param[FAKE_MAX_PARAMS][FAKE_PARAM_BYTES] __attribute__((aligned(64)));
} fake_launch;

typedef struct fake_encode {
	int dtype;
	uint32_t rank;
	uint64_t gaddr;
	uint64_t dims[5], strides[5];
	uint32_t box[5], elem_strides[5];
	int interleave, swizzle, l2, oob;
} fake_encode;

typedef struct fake_cuda {
	/* controls */
	int init_result;          /* what cuInit returns */
	int driver_version;       /* 13000 */
	int device_count;         /* 1 */
	int dev_attr[FAKE_ATTRS]; /* cuDeviceGetAttribute values, by attribute id */
	const char *fail_symbol;  /* fail a call of this entry point (symbol name) ... */
	int fail_after;           /* ... after this many successful calls of it */
	long fail_nth;            /* fail the Nth injectable call overall (0-based); -1: off */
	int fail_result;          /* the CUresult of an injected failure */
	int cubin_result;         /* nonzero: cuModuleLoadData fails with it */
	int func_max_threads, func_static_smem, func_num_regs;
	int param_info_result;    /* nonzero: cuFuncGetParamInfo fails with it */
	int any_image;            /* nonzero: any cubin loads (see the top) */
	/* records */
	long calls;               /* injectable calls so far */
	int inits, retained, ctx_depth, modules, functions, mem_live;
	int loads_cubin, loads_ptx, launches, encodes, syncs;
	int set_max_dyn_smem;     /* last value set, -1 if never */
	int set_nonportable;      /* last value set, -1 if never */
	fake_launch last;
	fake_launch_brief log[FAKE_LOG]; /* every launch since the last reset (first FAKE_LOG) */
	fake_encode enc[16];      /* in encode order since the last reset (first 16) */
} fake_cuda;

typedef fake_cuda *(*fake_cuda_state_fn)(void);
typedef void (*fake_cuda_reset_fn)(void);

#endif /* FAKE_CUDA_H */
