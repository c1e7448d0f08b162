/*
 * tile.h: libtilert, the runtime that loads and launches kernels compiled by tilec.
 *
 *   #include "tile.h"
 *   extern const tile_embedded_module tile_module_vector_add;  // from tile_add_kernel_library
 *
 *   tile_rt *rt; tile_module *mod; tile_kernel *k; uint64_t a, b, c;
 *   if (tile_rt_create(0, &rt) != TILE_OK) return 77;          // no driver or no GPU
 *   tile_module_create(rt, &tile_module_vector_add, &mod);     // cubin, else PTX
 *   tile_kernel_get(mod, "vector_add", &k);                    // threads, smem, grid: metadata
 *   tile_mem_alloc(rt, n * 4, &a); ... tile_mem_copy_htod(rt, a, host_a, n * 4); ...
 *   tile_arg args[] = {tile_arg_ptr(a), tile_arg_ptr(b), tile_arg_ptr(c), tile_arg_i32(n)};
 *   if (tile_kernel_launch(k, args, 4, NULL) != TILE_OK)       // NULL: the default stream
 *           fprintf(stderr, "%s\n", tile_rt_error(rt));        // failing call, error name
 *   tile_stream_sync(rt, NULL); tile_mem_copy_dtoh(rt, host_c, c, n * 4);
 *   tile_mem_free(rt, a); ...; tile_module_destroy(mod); tile_rt_destroy(rt);
 *
 * Every call that can fail returns a tile_status; results come back through out-parameters.
 * The detail of the last failure (the failing driver call and its error name, or the broken
 * rule) is kept on the tile_rt: tile_rt_error(). Destroy functions accept NULL. The library
 * holds no global state, never exits or aborts, and needs no CUDA headers: it opens
 * libcuda.so.1 at run time, so it links and its CPU tests run on machines without a GPU.
 *
 * Threads: a tile_rt, and the modules and kernels made from it, are used by one thread at a
 * time (the error detail lives on the tile_rt). Use one tile_rt per thread, or lock.
 */
#ifndef TILE_H
#define TILE_H

#include <stddef.h>
#include <stdint.h>

#include "tile_embed.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define TILE_API __attribute__((visibility("default")))
#else
#define TILE_API
#endif

typedef struct tile_rt tile_rt;         /* the driver, one device and its context */
typedef struct tile_module tile_module; /* one loaded module (cubin or PTX) and its metadata */
typedef struct tile_kernel tile_kernel; /* a kernel of a module; lives as long as the module */

typedef enum tile_status {
	TILE_OK = 0,
	TILE_ERR_ARG,       /* bad argument: NULL handle, wrong count or kind, tensor-map rule */
	TILE_ERR_NOMEM,     /* a host allocation failed */
	TILE_ERR_NO_DRIVER, /* libcuda.so.1 missing, a stub, or older than CUDA 12.0 */
	TILE_ERR_NO_DEVICE, /* no CUDA device, or no device of that ordinal */
	TILE_ERR_CUDA,      /* a driver call failed; tile_rt_error() names it */
	TILE_ERR_NOT_FOUND, /* no kernel of that name in the module */
	TILE_ERR_META,      /* kernel metadata malformed, or disagreeing with the binary */
	TILE_ERR_LAUNCH,    /* launch shape invalid: grid, threads, smem, cluster vs the device */
} tile_status;

/* Host memory hook (lua_newstate-style): every host allocation of the runtime goes through
 * it. alloc returns NULL to fail; free is never called with NULL. */
typedef struct tile_allocator {
	void *(*alloc)(void *user, size_t size);
	void (*free)(void *user, void *ptr);
	void *user;
} tile_allocator;

/* Options for tile_rt_create_ex; zero-initialize, then set what you need. */
typedef struct tile_rt_options {
	int device;                      /* device ordinal; ignored when context is set */
	void *context;                   /* a CUcontext the caller owns, or NULL: the device's
	                                    primary context (retained, released on destroy) */
	const tile_allocator *allocator; /* NULL: malloc and free */
	const char *driver_path;         /* NULL: "libcuda.so.1" (tests load a fake driver) */
	char *error;                     /* optional: receives the detail when creation fails */
	size_t error_size;
} tile_rt_options;

typedef struct tile_device_info {
	char name[128];
	int cc_major, cc_minor;  /* compute capability: 9.0 for Hopper */
	int sm_count;
	int driver_version;      /* e.g. 13000 for CUDA 13.0 */
	size_t smem_optin;       /* most shared memory one block may opt in to, bytes */
} tile_device_info;

typedef struct tile_kernel_info {
	const char *name;
	unsigned int threads[3]; /* block dims (metadata) */
	unsigned int cluster[3]; /* cluster dims, 1 1 1 when none (metadata); 0: given by an
	                            expression of the arguments, evaluated at launch */
	size_t smem;             /* dynamic shared memory bytes (metadata) */
	size_t static_smem;      /* static shared memory bytes (driver) */
	int num_regs;            /* registers per thread (driver) */
	int nparams;
} tile_kernel_info;

/* Launch arguments: one per kernel parameter, in the order of the metadata's `param` lines.
 * Scalars must match the parameter's type exactly (i32, i64, f32). `ptr` parameters take a
 * device pointer. `tma` parameters take a device pointer too; the runtime encodes the tensor
 * map from it, the extents (other scalar arguments) and the compiler's recipe, with row-major
 * strides unless `strides` gives rank - 1 byte strides, outermost first (the stride of dims
 * D0 .. D(rank-2); the innermost dim is always contiguous). */
typedef enum tile_arg_kind {
	TILE_ARG_I32 = 1, /* 0 is left invalid so a zeroed tile_arg is caught */
	TILE_ARG_I64,
	TILE_ARG_F32,
	TILE_ARG_PTR,
} tile_arg_kind;

typedef struct tile_arg {
	tile_arg_kind kind;
	int nstrides;             /* entries in strides; 0 for row-major or non-tma */
	const uint64_t *strides;  /* byte strides, outermost first (tma parameters only) */
	union {
		int32_t i32;
		int64_t i64;
		float f32;
		uint64_t ptr;     /* a CUdeviceptr */
	} u;
} tile_arg;

static inline tile_arg tile_arg_i32(int32_t v)
{
	tile_arg a = {TILE_ARG_I32, 0, NULL, {0}};
	a.u.i32 = v;
	return a;
}

static inline tile_arg tile_arg_i64(int64_t v)
{
	tile_arg a = {TILE_ARG_I64, 0, NULL, {0}};
	a.u.i64 = v;
	return a;
}

static inline tile_arg tile_arg_f32(float v)
{
	tile_arg a = {TILE_ARG_F32, 0, NULL, {0}};
	a.u.f32 = v;
	return a;
}

static inline tile_arg tile_arg_ptr(uint64_t p)
{
	tile_arg a = {TILE_ARG_PTR, 0, NULL, {0}};
	a.u.ptr = p;
	return a;
}

/* A tma parameter's tensor with explicit byte strides (rank - 1 of them, outermost first). */
static inline tile_arg tile_arg_strided(uint64_t p, const uint64_t *strides, int nstrides)
{
	tile_arg a = {TILE_ARG_PTR, nstrides, strides, {0}};
	a.u.ptr = p;
	return a;
}

/* --- the runtime: driver, device, context ------------------------------------------------- */
TILE_API tile_status tile_rt_create(int device, tile_rt **out);
TILE_API tile_status tile_rt_create_ex(const tile_rt_options *opt, tile_rt **out);
TILE_API void tile_rt_destroy(tile_rt *rt); /* also destroys modules still loaded */
TILE_API const char *tile_rt_error(const tile_rt *rt); /* the last failure; "" before any */
TILE_API tile_status tile_rt_device_info(tile_rt *rt, tile_device_info *out);
TILE_API const char *tile_status_str(tile_status s); /* "TILE_ERR_ARG", ... */

/* --- modules and kernels ------------------------------------------------------------------ */
/* `em` must outlive the module (the structs tile_add_kernel_library embeds are static). */
TILE_API tile_status tile_module_create(tile_rt *rt, const tile_embedded_module *em,
	tile_module **out);
TILE_API void tile_module_destroy(tile_module *mod);
TILE_API tile_status tile_kernel_get(tile_module *mod, const char *name, tile_kernel **out);
TILE_API tile_status tile_kernel_get_info(const tile_kernel *k, tile_kernel_info *out);
TILE_API tile_status tile_kernel_launch(tile_kernel *k, const tile_arg *args, int nargs,
	void *stream /* a CUstream, NULL for the default stream */);
/* Launch flags. TILE_LAUNCH_EARLY_START: programmatic stream serialization (sm_90+): the
 * kernel may start before the kernel launched before it on the stream has finished, once
 * every CTA of that one has run launch_dependents() or exited; it then reads nothing that
 * kernel writes without synchronizing itself (flags: load_acquire / store_release). The
 * driver may still start it only at the end, so it must not wait for that kernel to
 * make progress unless every CTA of that kernel has started (which launch_dependents()
 * in every CTA guarantees). */
enum { TILE_LAUNCH_EARLY_START = 1 };
TILE_API tile_status tile_kernel_launch_ex(tile_kernel *k, const tile_arg *args, int nargs,
	void *stream, unsigned flags);

/* A typed launch: each argument with the name and kind of the parameter it was generated for
 * (tilec --emit=header, dsl/metadata.md): kind "i32", "i64", "f32", "ptr" or "tma". The runtime
 * checks the count, then each name and kind in order against the module's metadata, and
 * refuses a mismatch with TILE_ERR_ARG naming the parameter (a header of one build used with
 * a module of another); then it launches as tile_kernel_launch_ex. */
typedef struct tile_named_arg {
	const char *name;
	const char *kind;
	tile_arg arg;
} tile_named_arg;
TILE_API tile_status tile_kernel_launch_named(tile_kernel *k, const tile_named_arg *args,
	int nargs, void *stream, unsigned flags);

/* --- device memory, through the same driver (no cuda.h, no libcudart) --------------------- */
TILE_API tile_status tile_mem_alloc(tile_rt *rt, size_t bytes, uint64_t *out);
TILE_API tile_status tile_mem_free(tile_rt *rt, uint64_t ptr); /* 0 is a no-op */
TILE_API tile_status tile_mem_copy_htod(tile_rt *rt, uint64_t dst, const void *src,
	size_t bytes);
TILE_API tile_status tile_mem_copy_dtoh(tile_rt *rt, void *dst, uint64_t src, size_t bytes);
TILE_API tile_status tile_mem_set32(tile_rt *rt, uint64_t dst, uint32_t value, size_t count);
TILE_API tile_status tile_mem_set32_async(tile_rt *rt, uint64_t dst, uint32_t value,
	size_t count, void *stream /* a CUstream, NULL for the default stream */);
TILE_API tile_status tile_stream_sync(tile_rt *rt, void *stream);

#ifdef __cplusplus
}
#endif

#endif /* TILE_H */
