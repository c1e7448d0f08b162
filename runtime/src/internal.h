/*
 * internal.h: libtilert's private declarations, one section per source file (chibicc.h style).
 *
 * Object model: a tile_rt owns the driver (dlopen handle + tcu_api table), one device and its
 * context, the host allocator, the error detail and a list of loaded modules. A tile_module
 * owns its parsed metadata (tile_meta), its CUmodule and an array of tile_kernel, one per
 * kernel in the metadata; a tile_kernel resolves its CUfunction on first tile_kernel_get().
 *
 * Invariants: every host allocation goes through tile_host_alloc/tile_host_free with the
 * rt's allocator; every driver call goes through TILE_CU, which records the failing call and
 * its error name on the rt and turns the CUresult into a tile_status (it never returns from
 * the caller, so cleanup paths stay explicit); calls that need a context bracket themselves
 * with tile_ctx_enter/tile_ctx_leave.
 */
#ifndef TILE_INTERNAL_H
#define TILE_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cu.h"
#include "tile.h"
#include "tile_limits.h"

/* --- limits ------------------------------------------------------------------------------- */
enum {
	TILE_ERR_CAP = 1024,   /* bytes of error detail kept on a tile_rt */
	TILE_MAX_PARAMS = 64,  /* kernel parameters (launch packs them on the stack) */
	TILE_MAX_RANK = 8,     /* dims of a `ptr` parameter */
	TILE_TMA_MAX_RANK = 5, /* dims of a `tma` parameter (cuTensorMapEncodeTiled) */
	TILE_MAX_TMA = 24,     /* `tma` parameters per kernel (128 B each on the stack and in the
	                          kernel's parameters: 3 KB of sm_90's 4 KB at most) */
	TILE_EXPR_CAP = 48,    /* nodes of a kernel's grid and cluster expressions, together */
	TILE_NAME_CAP = TILE_MAX_NAME_LEN + 1, /* bytes of a name: the limit tilec enforces */
	TILE_MAX_CLUSTER = 16, /* CTAs of a cluster: Hopper's largest (non-portable) one */
};

/* --- status.c ----------------------------------------------------------------------------- */
typedef struct tile_err {
	char msg[TILE_ERR_CAP];
} tile_err;

tile_status tile_err_set(tile_err *e, tile_status st, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void tile_err_clear(tile_err *e);

/* --- meta.c: the metadata of dsl/metadata.md ---------------------------------------------- */
typedef enum tile_dtype { TILE_F32, TILE_F16, TILE_BF16, TILE_I32, TILE_I64 } tile_dtype;
typedef enum tile_param_kind { TILE_PARAM_SCALAR, TILE_PARAM_PTR, TILE_PARAM_TMA } tile_param_kind;

typedef enum tile_expr_op {
	TILE_EXPR_INT, TILE_EXPR_PARAM, TILE_EXPR_ADD, TILE_EXPR_SUB, TILE_EXPR_MUL,
	TILE_EXPR_DIV, TILE_EXPR_MOD, TILE_EXPR_CDIV, TILE_EXPR_MIN, TILE_EXPR_MAX,
} tile_expr_op;

typedef struct tile_expr {  /* one node of a prefix expression */
	tile_expr_op op;
	int64_t value;          /* TILE_EXPR_INT: the literal; TILE_EXPR_PARAM: its index */
} tile_expr;

typedef struct tile_dim {   /* one extent: a literal, or the value of a scalar parameter */
	int param;              /* parameter index, or -1 for a literal */
	int64_t value;
} tile_dim;

typedef struct tile_param {
	char name[TILE_NAME_CAP];
	tile_param_kind kind;
	tile_dtype type;             /* scalar type, or element type of ptr/tma */
	int rank;                    /* ptr/tma */
	tile_dim dims[TILE_MAX_RANK];/* outermost first */
	uint32_t box[TILE_TMA_MAX_RANK]; /* tma: elements, outermost first */
	int swizzle;                 /* tma: 0 (none), 32, 64 or 128 bytes */
} tile_param;

typedef struct tile_kernel_meta {
	char name[TILE_NAME_CAP];
	unsigned int threads[3];
	tile_expr expr[TILE_EXPR_CAP];  /* the grid and cluster expressions, back to back */
	int nexpr;                      /* nodes of expr in use */
	int grid[3];                    /* index in expr where grid dim i starts */
	uint32_t smem;
	unsigned int cluster[3];        /* constant cluster dims; 0 where cluster_expr has one */
	int cluster_expr[3];            /* index in expr of cluster dim i, -1 for a constant */
	int nparams;
	tile_param *params;             /* slice of tile_meta.params */
} tile_kernel_meta;

typedef struct tile_meta {
	char module[TILE_NAME_CAP];
	int nkernels;
	tile_kernel_meta *kernels;
	int nparams;                    /* all kernels together */
	tile_param *params;
} tile_meta;

tile_status tile_meta_parse(const tile_allocator *a, const char *text, tile_meta *out,
	tile_err *e);
void tile_meta_free(const tile_allocator *a, tile_meta *m);
const tile_kernel_meta *tile_meta_find(const tile_meta *m, const char *name);
size_t tile_dtype_size(tile_dtype t);
const char *tile_dtype_name(tile_dtype t);
/* scalars[i]: the integer value of parameter i (only scalar integer params are read). */
tile_status tile_grid_eval(const tile_kernel_meta *k, const int64_t *scalars, int64_t grid[3],
	tile_err *e);
/* The cluster dims at launch: constants as parsed, expressions evaluated over the same
 * scalars; each at least 1, at most TILE_MAX_CLUSTER CTAs together (else TILE_ERR_LAUNCH). */
tile_status tile_cluster_eval(const tile_kernel_meta *k, const int64_t *scalars,
	unsigned int cluster[3], tile_err *e);
bool tile_cluster_has_expr(const tile_kernel_meta *k);
/* The text of the expression starting at expr[i], as the metadata writes it (for messages). */
void tile_expr_text(const tile_kernel_meta *k, int i, char *buf, size_t cap);

/* --- tensormap.c: the rules of cuTensorMapEncodeTiled, checked before the driver sees them --- */
typedef struct tile_tmap_args {  /* exactly what reaches cuTensorMapEncodeTiled */
	int dtype;
	uint32_t rank;
	uint64_t gaddr;
	uint64_t dims[TILE_TMA_MAX_RANK];     /* innermost first */
	uint64_t strides[TILE_TMA_MAX_RANK];  /* rank - 1 entries: byte strides of dims 1.. */
	uint32_t box[TILE_TMA_MAX_RANK];      /* innermost first */
	uint32_t elem_strides[TILE_TMA_MAX_RANK];
	int interleave, swizzle, l2_promotion, oob_fill;
} tile_tmap_args;

tile_status tile_tmap_recipe_check(const tile_param *p, tile_err *e);
tile_status tile_tmap_plan(const tile_param *p, uint64_t gaddr, const int64_t *scalars,
	const uint64_t *strides, int nstrides, tile_tmap_args *out, tile_err *e);
tile_status tile_tmap_check(const tile_tmap_args *t, size_t elem_size, tile_err *e);

/* --- driver.c: dlopen and the entry-point table ------------------------------------------- */
tile_status tile_driver_open(tcu_api *api, void **lib, const char *path, tile_err *e);
void tile_driver_close(void *lib);
/* The symbol resolved for a call ("cuMemAlloc" -> "cuMemAlloc_v2"); NULL if not used. */
const char *tile_driver_symbol(const char *call);

/* --- rt.c --------------------------------------------------------------------------------- */
typedef struct tile_limits {
	int max_threads, max_block[3], max_grid[3];
	int smem_optin, sm_count, cc_major, cc_minor;
} tile_limits;

struct tile_rt {
	tile_allocator alloc;
	void *lib;                 /* dlopen handle of the driver */
	tcu_api cu;
	int driver_version;
	tcu_device device;
	tcu_context ctx;
	bool owns_primary;         /* ctx is the retained primary context of device */
	tile_limits lim;
	tile_module *modules;      /* loaded modules, destroyed with the rt */
	tile_err err;
};

void *tile_host_alloc(const tile_allocator *a, size_t size); /* zeroed */
void tile_host_free(const tile_allocator *a, void *p);
tile_status tile_ctx_enter(tile_rt *rt);
void tile_ctx_leave(tile_rt *rt);
tile_status tile_cu_check(tile_rt *rt, tcu_result r, const char *call, const char *file,
	int line);

/* The one helper for driver calls: TILE_CU(rt, cuMemAlloc, (&p, n)) calls rt->cu.cuMemAlloc
 * and evaluates to TILE_OK or TILE_ERR_CUDA, with the detail recorded on rt. */
#define TILE_CU(rt, fn, args) tile_cu_check((rt), (rt)->cu.fn args, #fn, __FILE__, __LINE__)

/* --- module.c ----------------------------------------------------------------------------- */
struct tile_kernel {
	const tile_kernel_meta *meta;
	tile_module *mod;
	tcu_function fn;           /* NULL until tile_kernel_get resolves it */
	int static_smem, num_regs;
};

struct tile_module {
	tile_rt *rt;
	tile_module *next, *prev;  /* in rt->modules */
	const tile_embedded_module *em;
	tile_meta meta;
	tcu_module mod;
	bool from_ptx;             /* the cubin was missing or did not load */
	tile_kernel *kernels;      /* meta.nkernels of them */
};

#endif /* TILE_INTERNAL_H */
