/*
 * fake_cuda.c: a fake libcuda for the CPU tests (see fake_cuda.h for images and controls).
 *
 * It exports, under the exact versioned names the runtime resolves, every entry point of
 * runtime/src/cu.h, with the same signatures (it uses cu.h's types). Each injectable call first
 * asks `inject()` whether the test wants it to fail, by symbol (fail_symbol/fail_after) or by
 * position among all injectable calls (fail_nth). Calls on the teardown path (unload, primary
 * context release, free, context pop) and error-text lookups are not injectable: the runtime
 * ignores their failures, and a sweep over every call must still find no leak.
 *
 * Records: balances (retained contexts, push depth, live modules, functions and allocations)
 * that the tests check return to zero, the last launch with a copy of every parameter's bytes
 * (sizes from the image), and the arguments of every cuTensorMapEncodeTiled call.
 * Built twice: FAKE_CUDA_OLD leaves out cuTensorMapEncodeTiled, like a pre-12.0 driver.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu.h"
#include "fake_cuda.h"

static fake_cuda st;

typedef struct fake_func {
	char name[64];
	const void *image; /* its module's */
	int nparams;
	size_t sizes[FAKE_MAX_PARAMS];
	struct fake_func *next;
} fake_func;

/* The text of a module loaded from an image the fake does not parse (any_image). */
static const char ANY_IMAGE[] = "ANY";

typedef struct fake_mod {
	char *text;
	const void *image; /* as loaded */
	fake_func *funcs;
} fake_mod;

fake_cuda *fake_cuda_state(void)
{
	return &st;
}

void fake_cuda_reset(void)
{
	memset(&st, 0, sizeof st);
	st.driver_version = 13000;
	st.device_count = 1;
	st.fail_nth = -1;
	st.fail_result = TCU_ERROR_OUT_OF_MEMORY;
	st.func_max_threads = 1024;
	st.func_num_regs = 32;
	st.set_max_dyn_smem = -1;
	st.set_nonportable = -1;
	st.dev_attr[TCU_DEV_MAX_THREADS_PER_BLOCK] = 1024;
	st.dev_attr[TCU_DEV_MAX_BLOCK_DIM_X] = 1024;
	st.dev_attr[TCU_DEV_MAX_BLOCK_DIM_Y] = 1024;
	st.dev_attr[TCU_DEV_MAX_BLOCK_DIM_Z] = 64;
	st.dev_attr[TCU_DEV_MAX_GRID_DIM_X] = 2147483647;
	st.dev_attr[TCU_DEV_MAX_GRID_DIM_Y] = 65535;
	st.dev_attr[TCU_DEV_MAX_GRID_DIM_Z] = 65535;
	st.dev_attr[TCU_DEV_MULTIPROCESSOR_COUNT] = 132;
	st.dev_attr[TCU_DEV_COMPUTE_CAPABILITY_MAJOR] = 9;
	st.dev_attr[TCU_DEV_COMPUTE_CAPABILITY_MINOR] = 0;
	st.dev_attr[TCU_DEV_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN] = 232448;
}

/* FAKE_CUDA_ANY_IMAGE=1: any cubin loads from the start, for a process that cannot reach
 * fake_cuda_state (a Python test's handle of libtilela). */
__attribute__((constructor)) static void fake_cuda_init(void)
{
	const char *any = getenv("FAKE_CUDA_ANY_IMAGE");
	fake_cuda_reset();
	st.any_image = any && strcmp(any, "1") == 0;
}

static tcu_result inject(const char *symbol)
{
	if (st.fail_nth >= 0 && st.calls++ == st.fail_nth)
		return st.fail_result;
	if (st.fail_symbol && strcmp(st.fail_symbol, symbol) == 0 && st.fail_after-- == 0)
		return st.fail_result;
	return TCU_SUCCESS;
}

#define INJECT(symbol)                            \
	do {                                      \
		tcu_result r_ = inject(symbol);   \
		if (r_ != TCU_SUCCESS)            \
			return r_;                \
	} while (0)

/* --- init, errors, devices ---------------------------------------------------------------- */
tcu_result cuInit(unsigned int flags)
{
	INJECT("cuInit");
	if (flags != 0)
		return TCU_ERROR_INVALID_VALUE;
	st.inits++;
	return st.init_result;
}

tcu_result cuDriverGetVersion(int *v)
{
	INJECT("cuDriverGetVersion");
	*v = st.driver_version;
	return TCU_SUCCESS;
}

static const struct {
	int code;
	const char *name, *text;
} errors[] = {
	{TCU_SUCCESS, "CUDA_SUCCESS", "no error"},
	{TCU_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
	{TCU_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
	{TCU_ERROR_STUB_LIBRARY, "CUDA_ERROR_STUB_LIBRARY", "CUDA driver is a stub library"},
	{TCU_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
	{TCU_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
	{TCU_ERROR_NO_BINARY_FOR_GPU, "CUDA_ERROR_NO_BINARY_FOR_GPU",
	 "no kernel image is available for execution on the device"},
	{TCU_ERROR_INVALID_PTX, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"},
	{TCU_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
	{201, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
	{801, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported"},
};

static tcu_result error_text(tcu_result e, const char **s, int which)
{
	for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++) {
		if (errors[i].code == e) {
			*s = which ? errors[i].text : errors[i].name;
			return TCU_SUCCESS;
		}
	}
	*s = NULL;
	return TCU_ERROR_INVALID_VALUE;
}

tcu_result cuGetErrorName(tcu_result e, const char **s)
{
	return error_text(e, s, 0);
}

tcu_result cuGetErrorString(tcu_result e, const char **s)
{
	return error_text(e, s, 1);
}

tcu_result cuDeviceGetCount(int *n)
{
	INJECT("cuDeviceGetCount");
	*n = st.device_count;
	return TCU_SUCCESS;
}

tcu_result cuDeviceGet(tcu_device *d, int ordinal)
{
	INJECT("cuDeviceGet");
	if (ordinal < 0 || ordinal >= st.device_count)
		return TCU_ERROR_INVALID_DEVICE;
	*d = ordinal;
	return TCU_SUCCESS;
}

tcu_result cuDeviceGetName(char *name, int len, tcu_device d)
{
	INJECT("cuDeviceGetName");
	(void)d;
	strncpy(name, "Fake H100 (tests/runtime/fake_cuda.c)", (size_t)len);
	return TCU_SUCCESS;
}

tcu_result cuDeviceGetAttribute(int *v, int attr, tcu_device d)
{
	INJECT("cuDeviceGetAttribute");
	if (attr < 0 || attr >= FAKE_ATTRS || d < 0 || d >= st.device_count)
		return TCU_ERROR_INVALID_VALUE;
	*v = st.dev_attr[attr];
	return TCU_SUCCESS;
}

/* --- contexts ----------------------------------------------------------------------------- */
tcu_result cuDevicePrimaryCtxRetain(tcu_context *ctx, tcu_device d)
{
	INJECT("cuDevicePrimaryCtxRetain");
	*ctx = (tcu_context)(uintptr_t)(0x1000 + d);
	st.retained++;
	return TCU_SUCCESS;
}

tcu_result cuDevicePrimaryCtxRelease_v2(tcu_device d)
{
	(void)d;
	st.retained--;
	return TCU_SUCCESS;
}

tcu_result cuCtxPushCurrent_v2(tcu_context ctx)
{
	INJECT("cuCtxPushCurrent_v2");
	if (!ctx)
		return 201;
	st.ctx_depth++;
	return TCU_SUCCESS;
}

tcu_result cuCtxPopCurrent_v2(tcu_context *ctx)
{
	if (st.ctx_depth == 0)
		return 201;
	st.ctx_depth--;
	if (ctx)
		*ctx = NULL;
	return TCU_SUCCESS;
}

tcu_result cuCtxGetDevice(tcu_device *d)
{
	INJECT("cuCtxGetDevice");
	if (st.ctx_depth == 0)
		return 201;
	*d = 0;
	return TCU_SUCCESS;
}

/* --- modules and functions ---------------------------------------------------------------- */
static tcu_result new_module(tcu_module *out, const char *text, const void *image)
{
	fake_mod *m = calloc(1, sizeof *m);

	if (!m || !(m->text = strdup(text))) {
		free(m);
		return TCU_ERROR_OUT_OF_MEMORY;
	}
	m->image = image;
	st.modules++;
	*out = (tcu_module)m;
	return TCU_SUCCESS;
}

tcu_result cuModuleLoadData(tcu_module *mod, const void *image)
{
	INJECT("cuModuleLoadData");
	if (st.ctx_depth == 0)
		return 201;
	if (st.cubin_result)
		return st.cubin_result;
	if (strncmp(image, "FAKE-CUBIN", 10) != 0 && !st.any_image)
		return TCU_ERROR_INVALID_IMAGE;
	st.loads_cubin++;
	return new_module(mod, strncmp(image, "FAKE-CUBIN", 10) == 0 ? image : ANY_IMAGE, image);
}

static void jit_log(unsigned int n, tcu_jit_option *opts, void **vals, const char *msg)
{
	char *buf = NULL;
	size_t cap = 0;

	for (unsigned int i = 0; i < n; i++) {
		if (opts[i] == TCU_JIT_ERROR_LOG_BUFFER)
			buf = vals[i];
		if (opts[i] == TCU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
			cap = (size_t)(uintptr_t)vals[i];
	}
	if (buf && cap) {
		strncpy(buf, msg, cap - 1);
		buf[cap - 1] = '\0';
	}
}

tcu_result cuModuleLoadDataEx(tcu_module *mod, const void *image, unsigned int n,
	tcu_jit_option *opts, void **vals)
{
	INJECT("cuModuleLoadDataEx");
	if (st.ctx_depth == 0)
		return 201;
	if (strncmp(image, "// FAKE-PTX", 11) != 0)
		return TCU_ERROR_INVALID_PTX;
	if (strstr(image, "SYNTAX-ERROR")) {
		jit_log(n, opts, vals, "ptxas fatal   : fake.ptx, line 3; syntax error");
		return TCU_ERROR_INVALID_PTX;
	}
	st.loads_ptx++;
	return new_module(mod, image, image);
}

tcu_result cuModuleUnload(tcu_module mod)
{
	fake_mod *m = (fake_mod *)mod;

	while (m->funcs) {
		fake_func *f = m->funcs;
		m->funcs = f->next;
		free(f);
		st.functions--;
	}
	free(m->text);
	free(m);
	st.modules--;
	return TCU_SUCCESS;
}

/* Parses "name:8,8,4" out of the image text into f; false when the kernel is absent. */
static int find_kernel(const char *text, const char *name, fake_func *f)
{
	size_t n = strlen(name);

	for (const char *p = strstr(text, name); p; p = strstr(p + 1, name)) {
		if ((p != text && p[-1] != ' ') || p[n] != ':')
			continue;
		snprintf(f->name, sizeof f->name, "%s", name);
		for (p += n + 1; f->nparams < FAKE_MAX_PARAMS && *p >= '0' && *p <= '9';) {
			char *end;
			f->sizes[f->nparams++] = strtoul(p, &end, 10);
			p = *end == ',' ? end + 1 : end;
		}
		return 1;
	}
	return 0;
}

tcu_result cuModuleGetFunction(tcu_function *fn, tcu_module mod, const char *name)
{
	fake_mod *m = (fake_mod *)mod;
	fake_func *f;

	INJECT("cuModuleGetFunction");
	f = calloc(1, sizeof *f);
	if (!f)
		return TCU_ERROR_OUT_OF_MEMORY;
	if (strcmp(m->text, ANY_IMAGE) == 0) {
		snprintf(f->name, sizeof f->name, "%s", name);
		f->nparams = -1; /* unknown */
	} else if (!find_kernel(m->text, name, f)) {
		free(f);
		return TCU_ERROR_NOT_FOUND;
	}
	f->image = m->image;
	f->next = m->funcs;
	m->funcs = f;
	st.functions++;
	*fn = (tcu_function)f;
	return TCU_SUCCESS;
}

tcu_result cuFuncGetAttribute(int *v, int attr, tcu_function fn)
{
	INJECT("cuFuncGetAttribute");
	(void)fn;
	switch (attr) {
	case TCU_FUNC_MAX_THREADS_PER_BLOCK: *v = st.func_max_threads; return TCU_SUCCESS;
	case TCU_FUNC_SHARED_SIZE_BYTES: *v = st.func_static_smem; return TCU_SUCCESS;
	case TCU_FUNC_NUM_REGS: *v = st.func_num_regs; return TCU_SUCCESS;
	default: return TCU_ERROR_INVALID_VALUE;
	}
}

tcu_result cuFuncSetAttribute(tcu_function fn, int attr, int value)
{
	INJECT("cuFuncSetAttribute");
	(void)fn;
	if (attr == TCU_FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES) {
		int optin = st.dev_attr[TCU_DEV_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN];
		if (value > optin - st.func_static_smem)
			return TCU_ERROR_INVALID_VALUE;
		st.set_max_dyn_smem = value;
		return TCU_SUCCESS;
	}
	if (attr == TCU_FUNC_NON_PORTABLE_CLUSTER_SIZE_ALLOWED) {
		st.set_nonportable = value;
		return TCU_SUCCESS;
	}
	return TCU_ERROR_INVALID_VALUE;
}

#ifndef FAKE_CUDA_OLD
tcu_result cuFuncGetParamInfo(tcu_function fn, size_t index, size_t *offset, size_t *size)
{
	fake_func *f = (fake_func *)fn;
	size_t off = 0;

	INJECT("cuFuncGetParamInfo");
	if (st.param_info_result)
		return st.param_info_result;
	if (f->nparams < 0)
		return 801; /* CUDA_ERROR_NOT_SUPPORTED: the runtime then skips its check */
	if (index >= (size_t)f->nparams)
		return TCU_ERROR_INVALID_VALUE;
	for (size_t i = 0; i <= index; i++) {
		size_t a = f->sizes[i] >= 64 ? 64 : f->sizes[i];
		off = (off + a - 1) / a * a;
		if (i < index)
			off += f->sizes[i];
	}
	*offset = off;
	*size = f->sizes[index];
	return TCU_SUCCESS;
}
#endif

/* --- launches ----------------------------------------------------------------------------- */
static void record(tcu_function fn, const unsigned int g[3], const unsigned int b[3],
	unsigned int smem, tcu_stream stream, void **params)
{
	fake_func *f = (fake_func *)fn;
	fake_launch *l = &st.last;

	memset(l, 0, sizeof *l);
	snprintf(l->kernel, sizeof l->kernel, "%s", f->name);
	memcpy(l->grid, g, sizeof l->grid);
	memcpy(l->block, b, sizeof l->block);
	l->smem = smem;
	l->stream = stream;
	l->nparams = f->nparams > 0 ? f->nparams : 0;
	if (st.launches < FAKE_LOG) {
		fake_launch_brief *brief = &st.log[st.launches];
		snprintf(brief->kernel, sizeof brief->kernel, "%s", f->name);
		memcpy(brief->grid, g, sizeof brief->grid);
		brief->early_start = 0; /* (cuLaunchKernelEx sets both after) */
		brief->cluster = 1;
		brief->image = f->image;
		brief->stream = stream;
	}
	for (int i = 0; i < f->nparams; i++) {
		l->param_size[i] = f->sizes[i];
		memcpy(l->param[i], params[i], f->sizes[i] < FAKE_PARAM_BYTES ? f->sizes[i]
									   : FAKE_PARAM_BYTES);
	}
	st.launches++;
}

tcu_result cuLaunchKernel(tcu_function fn, unsigned int gx, unsigned int gy, unsigned int gz,
	unsigned int bx, unsigned int by, unsigned int bz, unsigned int smem, tcu_stream stream,
	void **params, void **extra)
{
	unsigned int g[3] = {gx, gy, gz}, b[3] = {bx, by, bz};

	INJECT("cuLaunchKernel");
	if (st.ctx_depth == 0 || extra || !params)
		return TCU_ERROR_INVALID_VALUE;
	record(fn, g, b, smem, stream, params);
	return TCU_SUCCESS;
}

tcu_result cuLaunchKernelEx(const tcu_launch_config *c, tcu_function fn, void **params,
	void **extra)
{
	unsigned int g[3] = {c->grid_x, c->grid_y, c->grid_z};
	unsigned int b[3] = {c->block_x, c->block_y, c->block_z};

	INJECT("cuLaunchKernelEx");
	if (st.ctx_depth == 0 || extra || !params)
		return TCU_ERROR_INVALID_VALUE;
	record(fn, g, b, c->shared_bytes, c->stream, params);
	st.last.ex = 1;
	st.last.nattrs = (int)c->num_attrs;
	for (unsigned int i = 0; i < c->num_attrs; i++) {
		if (c->attrs[i].id == TCU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION) {
			st.last.early_start = c->attrs[i].value.programmatic_serialization_allowed;
			if (st.launches <= FAKE_LOG)
				st.log[st.launches - 1].early_start = st.last.early_start;
		}
		if (c->attrs[i].id != TCU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION)
			continue;
		st.last.cluster[0] = c->attrs[i].value.cluster_dim.x;
		if (st.launches <= FAKE_LOG)
			st.log[st.launches - 1].cluster = st.last.cluster[0];
		st.last.cluster[1] = c->attrs[i].value.cluster_dim.y;
		st.last.cluster[2] = c->attrs[i].value.cluster_dim.z;
	}
	return TCU_SUCCESS;
}

#ifndef FAKE_CUDA_OLD
tcu_result cuTensorMapEncodeTiled(tcu_tensor_map *map, int dtype, uint32_t rank, void *gaddr,
	const uint64_t *dims, const uint64_t *strides, const uint32_t *box,
	const uint32_t *elem_strides, int interleave, int swizzle, int l2, int oob)
{
	fake_encode *e;

	INJECT("cuTensorMapEncodeTiled");
	if ((uintptr_t)map % 64 != 0 || rank < 1 || rank > 5)
		return TCU_ERROR_INVALID_VALUE;
	e = &st.enc[st.encodes < 16 ? st.encodes : 15];
	memset(e, 0, sizeof *e);
	*e = (fake_encode){dtype, rank, (uint64_t)(uintptr_t)gaddr, {0}, {0}, {0}, {0},
		interleave, swizzle, l2, oob};
	memcpy(e->dims, dims, rank * sizeof *dims);
	memcpy(e->strides, strides, (rank - 1) * sizeof *strides);
	memcpy(e->box, box, rank * sizeof *box);
	memcpy(e->elem_strides, elem_strides, rank * sizeof *elem_strides);
	memset(map, 0, sizeof *map);
	map->opaque[0] = 0x7e45a9u;                    /* "tensor map" marker */
	map->opaque[1] = (uint64_t)(uintptr_t)gaddr;
	map->opaque[15] = (uint64_t)st.encodes;        /* which encode produced it */
	st.encodes++;
	return TCU_SUCCESS;
}
#endif

/* --- memory and streams ------------------------------------------------------------------- */
tcu_result cuMemAlloc_v2(tcu_deviceptr *p, size_t bytes)
{
	void *m;

	INJECT("cuMemAlloc_v2");
	if (st.ctx_depth == 0)
		return 201;
	m = malloc(bytes);
	if (!m)
		return TCU_ERROR_OUT_OF_MEMORY;
	st.mem_live++;
	*p = (tcu_deviceptr)(uintptr_t)m;
	return TCU_SUCCESS;
}

tcu_result cuMemFree_v2(tcu_deviceptr p)
{
	free((void *)(uintptr_t)p);
	st.mem_live--;
	return TCU_SUCCESS;
}

tcu_result cuMemcpyHtoD_v2(tcu_deviceptr dst, const void *src, size_t n)
{
	INJECT("cuMemcpyHtoD_v2");
	memcpy((void *)(uintptr_t)dst, src, n);
	return TCU_SUCCESS;
}

tcu_result cuMemcpyDtoH_v2(void *dst, tcu_deviceptr src, size_t n)
{
	INJECT("cuMemcpyDtoH_v2");
	memcpy(dst, (const void *)(uintptr_t)src, n);
	return TCU_SUCCESS;
}

tcu_result cuMemsetD32_v2(tcu_deviceptr dst, unsigned int v, size_t n)
{
	uint32_t *p = (uint32_t *)(uintptr_t)dst;

	INJECT("cuMemsetD32_v2");
	for (size_t i = 0; i < n; i++)
		p[i] = v;
	return TCU_SUCCESS;
}

tcu_result cuMemsetD32Async(tcu_deviceptr dst, unsigned int v, size_t n, tcu_stream s)
{
	INJECT("cuMemsetD32Async");
	(void)s;
	if (st.ctx_depth == 0)
		return 201;
	uint32_t *p = (uint32_t *)(uintptr_t)dst;
	for (size_t i = 0; i < n; i++)
		p[i] = v;
	return TCU_SUCCESS;
}

tcu_result cuStreamSynchronize(tcu_stream s)
{
	INJECT("cuStreamSynchronize");
	(void)s;
	if (st.ctx_depth == 0)
		return 201;
	st.syncs++;
	return TCU_SUCCESS;
}
