/*
 * la.c: the C API of the prebuilt GDN/KDA forward kernels (include/tile_la.h).
 *
 * GDN is two launches on the caller's stream:
 *   gdn_kkt     (slots x H CTAs)       per chunk and value head: gates, cumsum, beta, the
 *                                      l2norm's norms, the gated WY inverse A and the gated
 *                                      Q K^T (AQK), to the workspace (64 values per token and
 *                                      head each, plus Gamma, beta and the norms per chunk slot)
 *   gdn_fused   (N x HV x D/64 CTAs)   per chunk: the state update with the output
 * KDA is two:
 *   chunk_prep  (slots x HV CTAs)      gates + cumsum, the l2norm's norms, beta, the gated
 *                                      K K^T / Q K^T, the WY inverse; writes W, U, QG, KG,
 *                                      AQK, DEC (and the state maps' bounds) to the workspace
 *   chunk_recur (N x HV x D/64 CTAs)   the state recurrence and the output; for whole
 *                                      sequences without chunk states chunk_recur_t, the
 *                                      same with the state transposed (S^T in one
 *                                      warpgroup's registers, gdn_fused's layout; its
 *                                      chunk_recur_w, both value slices of a head in one
 *                                      CTA, where the kda_wide option forces it)
 * With few sequences x heads both run context-parallel on the chained path, exact for any
 * gate: each sequence's first segment from h0 (gdn_fused or chunk_recur_t, part 1), the
 * transfer maps of the segments after it beside it (gdn_map_t or chunk_map_t), their chain
 * into every later segment's start (chunk_chain_t), the later segments (part 2): see
 * la_plan.c and kernels/README.md. KDA with chunk states runs chunk_recur over segments with
 * warmups whose bound holds per segment and head, the others started from the chained maps
 * (modes 1 and 3). Where chunk_recur_t's whole sequences would leave half of the SMs idle,
 * KDA's split in time: chunk_prep and chunk_recur_t each over the first part of every
 * sequence, then over the rest, the second chunk_prep beside the first chunk_recur_t.
 * Which of these a call runs is its plan (la_plan.h): la_plan_make decides from the call, the
 * device's SM count (read at create) and the handle's options; this file validates the call,
 * then launches the plan's kernels in order, each kernel's arguments filled by name into the
 * struct its generated header declares (tile_args_<kernel>: tilec --emit=header), so that
 * libtilert checks every name and kind against the loaded module.
 * Every argument is validated before the first launch; nothing is written on a bad one.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "la_plan.h"
#include "tile_la.h"
#include "tile_la_kernels.h"
#include "tile_la_kernels_launch.h"

enum { CHUNK = LA_CHUNK, WS_ALIGN = 256, NVARIANTS = 4 };

/* The most sequences (batch, or num_seqs with cu_seqlens): 64 rows per chunk slot, one
 * slot per sequence at least, must stay countable in 32 bits. */
enum { LA_MAX_SEQS = INT32_MAX / LA_CHUNK };

/* No host mapping lies in the first page (Linux's mmap_min_addr is at least 4096): a
 * cu_seqlens_host below it is a NULL-based pointer, refused rather than read. */
#define LA_HOST_MIN_ADDR ((uintptr_t)4096)

/* Each kernel's modules are "<stem>_<dtype>_d<D>" (la_kernel_stem; chunk_prep_nocb: chunk_prep
 * built with CB_OUT = 0), each holding the kernel la_kernel_name; chunk_prep's and
 * chunk_prep_nocb's also "<stem>_<dtype>_d<D>_g16", built to read KDA's g in the input dtype
 * (G16 = 1: g comes by TMA, so its dtype is the build's; beta and GDN's g are per-token
 * scalars that every kernel reads in either dtype, as a flag says). la_kernel's order is the
 * load order (chunk_prep first: see load_all). */
/* chunk_recur_w and gdn_bwd_walks_w hold both 64-wide value slices of a head in one CTA,
 * chunk_prep_nocb fuses the gate's activation with one thread per channel: built at D = 128
 * only */
static int kernel_built(la_kernel k, int d)
{
	return (k != LA_K_RECUR_W && k != LA_K_PREP_NOCB && k != LA_K_GDN_WALKS_W &&
		k != LA_K_BWD_RECUR_W) || d == 128;
}

typedef struct variant {
	tile_module *mod[LA_NKERNELS];
	tile_kernel *k[LA_NKERNELS];
	tile_module *mod16[LA_NKERNELS]; /* the _g16 builds (chunk_prep's and chunk_prep_nocb's) */
	tile_kernel *k16[LA_NKERNELS];
	tile_module *modx[LA_NKERNELS];  /* the _x builds (exact_state: has_exact_build) */
	tile_kernel *kx[LA_NKERNELS];
} variant;

/* The forward recurrences built with the state's operands in two terms ("<stem>_<dtype>_d<D>_x",
 * TERMS = 2), which tile_la_options' exact_state selects. chunk_recur (chunk states) has none. */
static int has_exact_build(la_kernel k)
{
	return k == LA_K_RECUR_T || k == LA_K_RECUR_W || k == LA_K_MAP_T || k == LA_K_FUSED ||
	       k == LA_K_MAP_G;
}

struct tile_la {
	tile_rt *rt;
	int owns_rt;
	uint64_t dummy;       /* 256 device bytes: the tensor maps' address when there are no tokens */
	la_device dev;        /* read at create: the plans fill its SMs */
	tile_la_options opt;  /* tile_la_set_options; all TILE_LA_AUTO at create */
	variant v[NVARIANTS]; /* [dtype f16][head dim 128] */
	char error[512];
};

/* Where a failure's message goes: a handle's buffer, a caller's, or nowhere. */
typedef struct sink {
	char *buf;
	size_t size;
} sink;

static tile_status report(sink out, tile_status st, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static tile_status report(sink out, tile_status st, const char *fmt, ...)
{
	if (out.buf && out.size) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(out.buf, out.size, fmt, ap);
		va_end(ap);
	}
	return st;
}

static sink sink_of(tile_la *la)
{
	return la ? (sink){la->error, sizeof la->error} : (sink){NULL, 0};
}

#define fail(la, st, ...) report(sink_of(la), st, __VA_ARGS__)

static int variant_index(tile_la_dtype dt, int d)
{
	return (dt == TILE_LA_F16) * 2 + (d == 128);
}

static tile_status load_kernel(tile_la *la, const char *module, const char *kernel,
			       tile_module **mod, tile_kernel **k)
{
	const tile_embedded_module *em = tile_la_kernels_find(module);
	if (!em)
		return fail(la, TILE_ERR_NOT_FOUND, "module %s is not in the library", module);
	tile_status st = tile_module_create(la->rt, em, mod);
	if (st == TILE_OK)
		st = tile_kernel_get(*mod, kernel, k);
	if (st != TILE_OK)
		return fail(la, st, "loading %s: %s", module, tile_rt_error(la->rt));
	return TILE_OK;
}

/* The variants of kernel k (its _g16 builds with g16, its _x builds with x), each dtype and
 * head dim built. */
static tile_status load_variants(tile_la *la, la_kernel k, int g16, int x)
{
	static const char *const dts[2] = {"bf16", "f16"};
	static const int ds[2] = {64, 128};
	for (int t = 0; t < 2; t++)
		for (int j = 0; j < 2; j++) {
			variant *v = &la->v[t * 2 + j];
			if (!kernel_built(k, ds[j]))
				continue;
			char name[64];
			snprintf(name, sizeof name, "%s_%s_d%d%s", la_kernel_stem(k), dts[t], ds[j],
				 g16 ? "_g16" : x ? "_x" : "");
			tile_status st = load_kernel(la, name, la_kernel_name(k),
						     g16 ? &v->mod16[k] : x ? &v->modx[k] : &v->mod[k],
						     g16 ? &v->k16[k] : x ? &v->kx[k] : &v->k[k]);
			if (st != TILE_OK)
				return st;
		}
	return TILE_OK;
}

/* Modules load kernel by kernel (each kernel's four variants together), chunk_prep's first,
 * so that where a kernel's code lands in the device's code memory does not move when another
 * kernel's code changes size. chunk_prep (~100 KB of code, paced by instruction fetch:
 * docs/performance.md) measured up to 5% apart between load orders with the
 * same cubins (H200: 8/8 8192x4 0.319 ms loaded this way, 0.331-0.356 with the
 * variants loaded one after another); GDN's kernels within 0.5% either way. The _g16 builds
 * follow chunk_prep_nocb's (la_kernel's second), before every other kernel, so that they do
 * not move either and chunk_prep's f32-gate builds stay where they were. */
static tile_status load_all(tile_la *la)
{
	_Static_assert(LA_K_PREP == 0 && LA_K_PREP_NOCB == 1, "chunk_prep's kernels load first");
	for (int k = 0; k < LA_NKERNELS; k++) {
		tile_status st = load_variants(la, (la_kernel)k, 0, 0);
		if (st == TILE_OK && k == LA_K_PREP_NOCB)
			st = load_variants(la, LA_K_PREP, 1, 0);
		if (st == TILE_OK && k == LA_K_PREP_NOCB)
			st = load_variants(la, LA_K_PREP_NOCB, 1, 0);
		if (st == TILE_OK && (k == LA_K_PREP_BWD || k == LA_K_PREP_FROMA ||
				      k == LA_K_PREP_QGL || k == LA_K_PREP_BWD_QGL))
			st = load_variants(la, (la_kernel)k, 1, 0);
		if (st != TILE_OK)
			return st;
	}
	/* the _x builds last, so that the others' code stays where it was */
	for (int k = 0; k < LA_NKERNELS; k++) {
		tile_status st = has_exact_build((la_kernel)k) ?
					 load_variants(la, (la_kernel)k, 0, 1) : TILE_OK;
		if (st != TILE_OK)
			return st;
	}
	tile_device_info info;
	tile_status st = tile_rt_device_info(la->rt, &info);
	if (st != TILE_OK)
		return fail(la, st, "device info: %s", tile_rt_error(la->rt));
	la->dev.sm_count = info.sm_count > 0 ? info.sm_count : 1;
	la->dev.smem_per_block = info.smem_optin;
	st = tile_mem_alloc(la->rt, 256, &la->dummy);
	if (st != TILE_OK)
		return fail(la, st, "allocating 256 bytes: %s", tile_rt_error(la->rt));
	return TILE_OK;
}

/* Why this thread's last tile_la_create(_with) failed ("" after a success): there is no
 * handle to keep it on, and a per-thread buffer keeps concurrent creates apart. */
static _Thread_local char create_error[512];

#define create_fail(st, ...) report((sink){create_error, sizeof create_error}, st, __VA_ARGS__)

tile_status tile_la_create_with(tile_rt *rt, tile_la **out)
{
	create_error[0] = '\0';
	if (!out)
		return create_fail(TILE_ERR_ARG, "out: NULL");
	*out = NULL;
	if (!rt)
		return create_fail(TILE_ERR_ARG, "rt: NULL");
	tile_la *la = calloc(1, sizeof *la);
	if (!la)
		return create_fail(TILE_ERR_NOMEM, "allocating the tile_la handle: out of memory");
	la->rt = rt;
	tile_status st = load_all(la);
	if (st != TILE_OK) {
		create_fail(st, "%s", la->error);
		tile_la_destroy(la);
		return st;
	}
	*out = la;
	return TILE_OK;
}

tile_status tile_la_create(int device, tile_la **out)
{
	create_error[0] = '\0';
	if (!out)
		return create_fail(TILE_ERR_ARG, "out: NULL");
	*out = NULL;
	/* the runtime's reason goes straight into create_error */
	tile_rt_options opt;
	memset(&opt, 0, sizeof opt);
	opt.device = device;
	opt.error = create_error;
	opt.error_size = sizeof create_error;
	tile_rt *rt = NULL;
	tile_status st = tile_rt_create_ex(&opt, &rt);
	if (st != TILE_OK) {
		if (!create_error[0])
			create_fail(st, "tile_rt_create(%d): %s", device, tile_status_str(st));
		return st;
	}
	st = tile_la_create_with(rt, out);
	if (st != TILE_OK) {
		tile_rt_destroy(rt);
		return st;
	}
	(*out)->owns_rt = 1;
	return TILE_OK;
}

void tile_la_destroy(tile_la *la)
{
	if (!la)
		return;
	for (int i = 0; i < NVARIANTS; i++)
		for (int k = 0; k < LA_NKERNELS; k++) {
			tile_module_destroy(la->v[i].mod[k]);
			tile_module_destroy(la->v[i].mod16[k]);
			tile_module_destroy(la->v[i].modx[k]);
		}
	if (la->dummy)
		tile_mem_free(la->rt, la->dummy);
	if (la->owns_rt)
		tile_rt_destroy(la->rt);
	free(la);
}

const char *tile_la_error(const tile_la *la)
{
	return la ? la->error : create_error;
}

/* ---- validation --------------------------------------------------------------------- */

static int misaligned(const void *p, uintptr_t n)
{
	return ((uintptr_t)p & (n - 1)) != 0;
}

/* A tile_la_dtype's name ("TILE_LA_BF16"), or its number in buf. */
static const char *dtype_name(tile_la_dtype dt, char buf[16])
{
	switch (dt) {
	case TILE_LA_F32: return "TILE_LA_F32";
	case TILE_LA_BF16: return "TILE_LA_BF16";
	case TILE_LA_F16: return "TILE_LA_F16";
	}
	snprintf(buf, 16, "%d", (int)dt);
	return buf;
}

/* g's or beta's dtype (`field`): f32, or the call's input dtype. */
static tile_status check_scalar_dtype(sink la, const tile_la_fwd_args *a, tile_la_dtype dt,
				      const char *field)
{
	char b1[16], b2[16];
	if (dt == TILE_LA_F32 || dt == a->dtype)
		return TILE_OK;
	return report(la, TILE_ERR_ARG, "%s: %s is neither TILE_LA_F32 nor dtype (%s)", field,
		      dtype_name(dt, b1), dtype_name(a->dtype, b2));
}

/* Bytes per element of g or beta. */
static uint64_t scalar_bytes(tile_la_dtype dt)
{
	return dt == TILE_LA_F32 ? 4 : 2;
}

/* Shapes, dtypes and options; pointers are checked separately (the workspace query reads
 * only these). */
static tile_status check_shapes(sink la, const tile_la_fwd_args *a, int kda)
{
	if (!a)
		return report(la, TILE_ERR_ARG, "args: NULL");
	if (a->dtype != TILE_LA_BF16 && a->dtype != TILE_LA_F16)
		return report(la, TILE_ERR_ARG, "dtype: %d is neither TILE_LA_BF16 nor TILE_LA_F16",
			    (int)a->dtype);
	tile_status st = check_scalar_dtype(la, a, a->gate_dtype, "gate_dtype");
	if (st == TILE_OK)
		st = check_scalar_dtype(la, a, a->beta_dtype, "beta_dtype");
	if (st != TILE_OK)
		return st;
	if (a->head_dim != 64 && a->head_dim != 128)
		return report(la, TILE_ERR_ARG, "head_dim: %d (supported: 64, 128)", a->head_dim);
	if (a->batch < 1)
		return report(la, TILE_ERR_ARG, "batch: %d (must be >= 1)", a->batch);
	if (a->seq_len < 0)
		return report(la, TILE_ERR_ARG, "seq_len: %d (must be >= 0)", a->seq_len);
	if (a->num_heads < 1)
		return report(la, TILE_ERR_ARG, "num_heads: %d (must be >= 1)", a->num_heads);
	if (a->num_v_heads < 1 || a->num_v_heads % a->num_heads)
		return report(la, TILE_ERR_ARG, "num_v_heads: %d (must be a positive multiple of "
			    "num_heads = %d)", a->num_v_heads, a->num_heads);
	if (a->num_v_heads > 65535)
		return report(la, TILE_ERR_ARG, "num_v_heads: %d (at most 65535)", a->num_v_heads);
	if (a->cu_seqlens && a->batch != 1)
		return report(la, TILE_ERR_ARG, "batch: %d with cu_seqlens (must be 1, the sequences "
			    "packed along seq_len)", a->batch);
	if (a->cu_seqlens && a->num_seqs < 1)
		return report(la, TILE_ERR_ARG, "num_seqs: %d with cu_seqlens (must be >= 1)",
			    a->num_seqs);
	/* each sequence takes a chunk slot of 64 rows, counted in 32 bits (slot_row_len) */
	if (a->cu_seqlens && a->num_seqs > LA_MAX_SEQS)
		return report(la, TILE_ERR_ARG, "num_seqs: %d with cu_seqlens (at most %d)",
			    a->num_seqs, LA_MAX_SEQS);
	if (!a->cu_seqlens && a->batch > LA_MAX_SEQS)
		return report(la, TILE_ERR_ARG, "batch: %d (at most %d)", a->batch, LA_MAX_SEQS);
	/* the host copy is read here (workspace query) and by the forwards: a pointer that
	 * cannot hold int32 values is refused before that read */
	if (a->cu_seqlens && a->cu_seqlens_host &&
	    ((uintptr_t)a->cu_seqlens_host < LA_HOST_MIN_ADDR || misaligned(a->cu_seqlens_host, 4)))
		return report(la, TILE_ERR_ARG, "cu_seqlens_host: %p is not a 4-byte aligned host "
			    "address", (const void *)a->cu_seqlens_host);
	la_shapes s = la_shapes_of(a);
	if (s.tokens > INT32_MAX / 2)
		return report(la, TILE_ERR_ARG, "seq_len: batch x seq_len = %lld tokens is too many",
			    (long long)s.tokens);
	if (s.slots > INT32_MAX / CHUNK)
		return report(la, TILE_ERR_ARG, "%s: %lld chunk slots (tokens / 64 + sequences) exceed "
			    "2^31 / 64", a->cu_seqlens ? "num_seqs" : "batch", (long long)s.slots);
	if ((int64_t)a->num_v_heads * s.tokens > INT32_MAX)
		return report(la, TILE_ERR_ARG, "num_v_heads: tokens x num_v_heads = %lld rows exceeds "
			    "2^31 - 1", (long long)(a->num_v_heads * s.tokens));
	/* the largest grid, one dimension: chunk_recur's, a CTA per (segment) slot, head and
	 * 64-wide value slice, three times with the transfer maps (chunk_prep: slots x heads) */
	if ((int64_t)s.slots * a->num_v_heads * 3 * (a->head_dim / 64) > INT32_MAX)
		return report(la, TILE_ERR_ARG, "num_v_heads: %lld chunk slots x %d heads make a grid "
			    "of more than 2^31 - 1 CTAs", (long long)s.slots, a->num_v_heads);
	if (!isfinite(a->scale))
		return report(la, TILE_ERR_ARG, "scale: %g (must be finite; 0: head_dim^-1/2)",
			    (double)a->scale);
	if (a->allow_neg_eigval && !a->use_beta_sigmoid_in_kernel)
		return report(la, TILE_ERR_ARG, "allow_neg_eigval: requires use_beta_sigmoid_in_kernel");
	if (a->use_lower_bound && !kda)
		return report(la, TILE_ERR_ARG, "use_lower_bound: GDN has no lower-bound gate");
	if (a->use_lower_bound && (!isfinite(a->lower_bound) || a->lower_bound >= 0.0f))
		return report(la, TILE_ERR_ARG, "lower_bound: %g (must be finite and < 0)",
			    (double)a->lower_bound);
	if (a->num_chunk_states < 0)
		return report(la, TILE_ERR_ARG, "num_chunk_states: %d (must be >= 0)",
			    a->num_chunk_states);
	return TILE_OK;
}

/* A device buffer of the call: its bytes [p, p + bytes) and whether the call writes it. */
typedef struct extent {
	const char *name;
	uintptr_t p;
	uint64_t bytes;
	int out;
} extent;

/* Extents e[0 .. ne) with the outputs first: no output may share a byte with another extent. */
static tile_status check_extents(sink la, extent *e, size_t ne)
{
	for (size_t i = 0; i < ne; i++) {
		if (!e[i].p)
			e[i].bytes = 0;
		if (e[i].bytes > UINTPTR_MAX - e[i].p)
			return report(la, TILE_ERR_ARG, "%s: %llu bytes from %p pass the end of the "
				    "address space", e[i].name, (unsigned long long)e[i].bytes,
				    (void *)e[i].p);
	}
	for (size_t i = 0; i < ne && e[i].out; i++)
		for (size_t j = i + 1; j < ne; j++) {
			if (!e[i].bytes || !e[j].bytes || e[i].p >= e[j].p + e[j].bytes ||
			    e[j].p >= e[i].p + e[i].bytes)
				continue;
			return report(la, TILE_ERR_ARG, "%s: its %llu bytes at %p overlap %s's %llu "
				    "bytes at %p (an output may share no memory with an input or "
				    "another output; in place is not supported)", e[i].name,
				    (unsigned long long)e[i].bytes, (void *)e[i].p, e[j].name,
				    (unsigned long long)e[j].bytes, (void *)e[j].p);
		}
	return TILE_OK;
}

/*
 * No output may share a byte with an input or another output: the kernels read inputs
 * (h0 among them, also in reruns) while other CTAs write outputs, so in place would be wrong
 * under some schedule (GDN with o == v was, on an H200). Extents come from the shapes (each
 * < 2^63 after check_shapes); the workspace counts its first `need` bytes, the only ones used.
 */
static tile_status check_overlaps(sink la, const tile_la_fwd_args *a, int kda, size_t need)
{
	la_shapes s = la_shapes_of(a);
	uint64_t tt = (uint64_t)s.tokens, n = (uint64_t)s.nseq;
	uint64_t h = (uint64_t)a->num_heads, hv = (uint64_t)a->num_v_heads;
	uint64_t d = (uint64_t)a->head_dim, state = hv * d * d;
	uint64_t ncs = a->chunk_states ? (uint64_t)a->num_chunk_states : 0;
	extent e[] = {
		/* outputs first: each pair is reported once, from the output's side */
		{"o", (uintptr_t)a->o, tt * hv * d * s.es, 1},
		{"final_state", (uintptr_t)a->final_state, n * state * 4, 1},
		{"chunk_states", (uintptr_t)a->chunk_states, ncs * state * s.es, 1},
		{"workspace", (uintptr_t)a->workspace, need, 1},
		{"saved_setup", (uintptr_t)a->saved_setup, kda ? la_kda_saved_bytes(a) : 0, 1},
		{"q", (uintptr_t)a->q, tt * h * d * s.es, 0},
		{"k", (uintptr_t)a->k, tt * h * d * s.es, 0},
		{"v", (uintptr_t)a->v, tt * hv * d * s.es, 0},
		{"g", (uintptr_t)a->g, tt * hv * (kda ? d : 1) * scalar_bytes(a->gate_dtype), 0},
		{"beta", (uintptr_t)a->beta, tt * hv * scalar_bytes(a->beta_dtype), 0},
		{"initial_state", (uintptr_t)a->initial_state, n * state * 4, 0},
		{"cu_seqlens", (uintptr_t)a->cu_seqlens,
		 a->cu_seqlens ? ((uint64_t)a->num_seqs + 1) * 4 : 0, 0},
		{"A_log", (uintptr_t)a->A_log, hv * 4, 0},
		{"dt_bias", (uintptr_t)a->dt_bias, hv * (kda ? d : 1) * 4, 0},
	};
	return check_extents(la, e, sizeof e / sizeof e[0]);
}

/* `need`: the workspace bytes the call uses (its plan's, or la_workspace_min without one). */
static tile_status check_pointers(sink la, const tile_la_fwd_args *a, int kda, size_t need)
{
	struct { const void *p; const char *name; int required; uintptr_t align; } ptrs[] = {
		{a->q, "q", 1, 16}, {a->k, "k", 1, 16}, {a->v, "v", 1, 16}, {a->o, "o", 1, 16},
		{a->g, "g", 1, kda ? 16 : scalar_bytes(a->gate_dtype)},
		{a->beta, "beta", 1, scalar_bytes(a->beta_dtype)},
		{a->initial_state, "initial_state", 0, 4}, {a->final_state, "final_state", 0, 4},
		{a->cu_seqlens, "cu_seqlens", 0, 4}, {a->A_log, "A_log", 0, 4},
		{a->dt_bias, "dt_bias", 0, 4}, {a->chunk_states, "chunk_states", 0, 16},
		{a->saved_setup, "saved_setup", 0, WS_ALIGN},
		{a->workspace, "workspace", 1, WS_ALIGN},
	};
	/* with no tokens there is nothing to read or write in the token tensors; a workspace
	 * of 0 bytes may be NULL (the last entry of ptrs) */
	int tokens = la_shapes_of(a).tokens > 0;
	ptrs[sizeof ptrs / sizeof ptrs[0] - 1].required = need > 0;
	for (size_t i = 0; i < sizeof ptrs / sizeof ptrs[0]; i++) {
		if (!ptrs[i].p && ptrs[i].required && (tokens || i >= 6))
			return report(la, TILE_ERR_ARG, "%s: NULL (required)", ptrs[i].name);
		if (ptrs[i].p && misaligned(ptrs[i].p, ptrs[i].align))
			return report(la, TILE_ERR_ARG, "%s: %p is not %u-byte aligned", ptrs[i].name,
				    ptrs[i].p, (unsigned)ptrs[i].align);
	}
	if (a->use_gate_in_kernel && !a->A_log && !(kda && a->use_lower_bound))
		return report(la, TILE_ERR_ARG, "A_log: NULL with use_gate_in_kernel (required unless "
			    "the KDA lower-bound gate is used)");
	if (a->chunk_states && a->num_chunk_states == 0)
		return report(la, TILE_ERR_ARG, "num_chunk_states: 0 with chunk_states given");
	if (a->saved_setup && !kda)
		return report(la, TILE_ERR_ARG, "saved_setup: given to GDN (KDA only)");
	if (a->saved_setup && a->saved_setup_size < la_kda_saved_bytes(a))
		return report(la, TILE_ERR_ARG, "saved_setup_size: %zu bytes (needs %zu)",
			    a->saved_setup_size, la_kda_saved_bytes(a));
	if (a->workspace_size < need)
		return report(la, TILE_ERR_ARG, "workspace_size: %zu bytes (needs %zu)",
			    a->workspace_size, need);
	return check_overlaps(la, a, kda, need);
}

tile_status tile_la_fwd_check(const tile_la_fwd_args *a, int kda, char *error,
			      size_t error_size)
{
	if (error && error_size)
		error[0] = '\0';
	sink out = {error, error_size};
	tile_status st = check_shapes(out, a, kda);
	return st != TILE_OK ? st : check_pointers(out, a, kda, la_workspace_min(a, kda));
}

/* ---- options, workspace, plan ------------------------------------------------------------ */

tile_status tile_la_set_options(tile_la *la, const tile_la_options *opt)
{
	if (!la)
		return TILE_ERR_ARG;
	la->error[0] = '\0';
	if (!opt)
		return fail(la, TILE_ERR_ARG, "options: NULL");
	const char *bad = la_options_bad_field(opt);
	if (bad)
		return fail(la, TILE_ERR_ARG, "options.%s: out of its range (TILE_LA_AUTO, TILE_LA_ON, "
			    "TILE_LA_OFF, or a count n > 0 where it takes one)", bad);
	la->opt = *opt;
	return TILE_OK;
}

tile_status tile_la_get_options(const tile_la *la, tile_la_options *out)
{
	if (!la || !out)
		return TILE_ERR_ARG;
	*out = la->opt;
	return TILE_OK;
}

/* The call's shapes checked (a bad one named on the handle), then its plan. */
static tile_status plan_call(tile_la *la, const tile_la_fwd_args *a, int kda, la_plan *p)
{
	tile_status st = check_shapes(sink_of(la), a, kda);
	if (st != TILE_OK)
		return st;
	return la_plan_make(a, kda, &la->dev, &la->opt, p);
}

static tile_status workspace(tile_la *la, const tile_la_fwd_args *a, size_t *bytes, int kda)
{
	if (bytes)
		*bytes = 0;
	if (!la || !bytes)
		return TILE_ERR_ARG;
	la->error[0] = '\0';
	la_plan p;
	tile_status st = plan_call(la, a, kda, &p);
	if (st == TILE_OK)
		*bytes = p.workspace;
	return st;
}

tile_status tile_la_gdn_fwd_workspace(tile_la *la, const tile_la_fwd_args *a, size_t *bytes)
{
	return workspace(la, a, bytes, 0);
}

tile_status tile_la_kda_fwd_workspace(tile_la *la, const tile_la_fwd_args *a, size_t *bytes)
{
	return workspace(la, a, bytes, 1);
}

tile_status tile_la_kda_saved_setup_size(const tile_la_fwd_args *a, size_t *bytes)
{
	if (bytes)
		*bytes = 0;
	if (!a || !bytes)
		return TILE_ERR_ARG;
	tile_status st = check_shapes((sink){NULL, 0}, a, 1);
	if (st == TILE_OK)
		*bytes = la_kda_saved_bytes(a);
	return st;
}

tile_status tile_la_describe_plan(tile_la *la, const tile_la_fwd_args *a, int kda, char *buf,
				  size_t size)
{
	if (!la || !buf || !size)
		return TILE_ERR_ARG;
	buf[0] = '\0';
	la->error[0] = '\0';
	la_plan p;
	tile_status st = plan_call(la, a, kda, &p);
	if (st == TILE_OK)
		la_plan_describe(&p, buf, size);
	return st;
}

/* ---- launch: the plan's launches, each kernel's arguments filled by name ------------------ */

static uint64_t dptr(const void *p)
{
	return (uint64_t)(uintptr_t)p;
}

/* A valid device address for pointer parameters the kernel never reads (their flags are
 * off): KDA's workspace, GDN's 256-byte dummy buffer of the handle. */
static uint64_t or_else(const void *p, uint64_t unused)
{
	return p ? dptr(p) : unused;
}

/* A tensor's leading extent, at least 1: the kernels' tensor parameters need a row even when
 * nothing reads them (no transfer slots without segments). */
static int32_t at_least_one(int64_t n)
{
	return n > 0 ? (int32_t)n : 1;
}

/* What every launch of a call shares: the arguments, the plan, the kernels, the workspace. */
/* The backward's per-slot setup: where gdn_kkt_lo (GDN) or chunk_prep_bwd (KDA) leaves A and
 * AQK (IN hi + lo), GDN's W, KDA's Gamma and row vectors. */
typedef struct bwd_setup {
	uint64_t ah, aqh, w, pg, nrw;
} bwd_setup;

typedef struct call {
	tile_la *la;
	const tile_la_fwd_args *a;
	const la_plan *p;
	const variant *v;
	uint64_t ws;      /* the workspace's address */
	uint64_t prep_ws; /* chunk_prep's outputs' (the backward may read the forward's) */
	int32_t ncu;      /* cu_seqlens' entries (1 without) */
	int32_t seqlen;   /* T per sequence (0 with cu_seqlens) */
	int32_t nseq;
	int32_t tt_rows;  /* TT, at least 1: TMA needs a tensor of a row (never loaded from then) */
	int32_t ts_rows;  /* 64 rows per chunk slot; 1 without tokens */
	float scale;
	const bwd_setup *setup; /* the backward's (or a GDN forward keeping its setup,
				   save_for_backward): gdn_kkt_lo's or chunk_prep_bwd's extra
				   outputs; else NULL */
	int qgl_out;            /* KDA: QG's lo term is wanted (the backward: dh0 is asked for; a
				   forward keeping it): chunk_prep's QGL_OUT builds write it and
				   the walks read it (where the layout has its region) */
} call;

static unsigned flags_of(const la_launch *l)
{
	return l->early_start ? TILE_LAUNCH_EARLY_START : 0;
}

/* QGL's offset: QG's lo term, or without one QG's region, a buffer of its shape for the TMA
 * tensor that nothing then stores to or loads from. */
static size_t qgl_region(const la_kda_layout *k)
{
	return k->qg_lo ? k->qgl : k->qg;
}

static tile_status launch_prep(const call *c, const la_launch *l)
{
	const tile_la_fwd_args *a = c->a;
	const la_kda_layout *k = &c->p->kl;
	tile_args_chunk_prep x = {
		.Q = dptr(a->q), .Kt = dptr(a->k), .Vt = dptr(a->v),
		/* g as a [TT, HV * D] TMA tensor, in both dtypes: the build reads one */
		.Gt = dptr(a->g), .Gt16 = dptr(a->g),
		.Beta = dptr(a->beta), .Beta16 = dptr(a->beta), .ALog = or_else(a->A_log, c->ws),
		.DtBias = or_else(a->dt_bias, c->ws), .GC = a->head_dim,
		.Cu = or_else(a->cu_seqlens, c->ws),
		.W = c->ws + k->w, .U = c->ws + k->u, .QG = c->ws + k->qg, .KG = c->ws + k->kg,
		.QGL = c->ws + qgl_region(k), .qgl_out = k->qg_lo && c->qgl_out,
		.AQK = c->ws + k->aqk, .AQKt = c->ws + k->aqk,
		.DEC = c->ws + k->dec, .CB = c->ws + k->cb,
		.TT = (int32_t)c->p->s.tokens, .TS = c->ts_rows, .H = a->num_heads,
		.HV = a->num_v_heads, .GW = a->num_v_heads * a->head_dim, .NCU = c->ncu,
		.NSLOT = (int32_t)c->p->s.slots, .nseq = c->nseq, .seqlen = c->seqlen,
		.has_cu = a->cu_seqlens != NULL,
		.gate_mode = !a->use_gate_in_kernel ? 0 : a->use_lower_bound ? 2 : 1,
		.has_bias = a->dt_bias != NULL && a->use_gate_in_kernel,
		.has_alog = a->A_log != NULL, .l2norm = a->use_qk_l2norm_in_kernel != 0,
		.beta_sigmoid = a->use_beta_sigmoid_in_kernel != 0,
		.beta16 = a->beta_dtype != TILE_LA_F32, .beta_mult = a->allow_neg_eigval ? 2.0f : 1.0f,
		.lower_bound = a->use_lower_bound ? a->lower_bound : 0.0f, .scale = c->scale,
		.c0 = l->c0, .nc = l->nc, .NG = l->nx,
	};
	uint64_t unused = c->la->dummy;   /* (the forward's builds read none of them) */
	x.AH = c->setup ? c->setup->ah : unused;
	x.AQH = c->setup ? c->setup->aqh : unused;
	x.AHg = x.AH;   /* (chunk_prep_froma reads A and AQK there) */
	x.AQHg = x.AQH;
	x.PG = c->setup && c->setup->pg ? c->setup->pg : unused;
	x.NRW = c->setup && c->setup->nrw ? c->setup->nrw : unused;
	x.setup_rows = c->setup && c->setup->pg;   /* (none in a forward keeping A and AQK) */
	/* g is read in the dtype its build was made for */
	const variant *v = c->v;
	tile_kernel *kern = a->gate_dtype != TILE_LA_F32 ? v->k16[l->kernel] : v->k[l->kernel];
	return tile_launch_chunk_prep(kern, &x, a->stream, flags_of(l));
}

/* A forward recurrence or map kernel: its _x build where the plan asks for exact_state */
static tile_kernel *recurrence(const call *c, la_kernel k)
{
	return c->p->exact_state && has_exact_build(k) ? c->v->kx[k] : c->v->k[k];
}

static tile_status launch_recur(const call *c, const la_launch *l)
{
	const tile_la_fwd_args *a = c->a;
	const la_kda_layout *k = &c->p->kl;
	int32_t xs = at_least_one(k->xs); /* a slot's rows at least for the maps */
	tile_args_chunk_recur x = {
		.W = c->ws + k->w, .U = c->ws + k->u, .QG = c->ws + k->qg, .KG = c->ws + k->kg,
		.AQK = c->ws + k->aqk, .DEC = c->ws + k->dec, .CB = c->ws + k->cb,
		.XB = c->ws + k->xb, .XPH = c->ws + k->xph, .XPL = c->ws + k->xpl,
		.XPHs = c->ws + k->xph, .XPLs = c->ws + k->xpl,
		.H0 = or_else(a->initial_state, c->ws), .HT = or_else(a->final_state, c->ws),
		.HS = or_else(a->chunk_states, c->ws), .O = dptr(a->o),
		.Ot = c->p->s.tokens > 0 ? dptr(a->o) : c->la->dummy, /* O as a TMA tensor */
		.Cu = or_else(a->cu_seqlens, c->ws),
		.TT = c->tt_rows, .TS = c->ts_rows, .HV = a->num_v_heads,
		.NSLOT = (int32_t)c->p->s.slots, .XS = xs, .XR = xs * a->head_dim, .NH0 = c->nseq,
		.NHS = a->chunk_states ? a->num_chunk_states : 1, .NCU = c->ncu, .nseq = c->nseq,
		.seqlen = c->seqlen, .has_cu = a->cu_seqlens != NULL,
		.has_h0 = a->initial_state != NULL, .has_ht = a->final_state != NULL,
		.has_hs = a->chunk_states != NULL, .state_v_first = a->state_v_first != 0,
		.mode = l->mode, .seg_len = l->seg_len, .NX = l->nx, .NZ = l->nz,
	};
	return tile_launch_chunk_recur(c->v->k[LA_K_RECUR], &x, a->stream, flags_of(l));
}

static tile_status launch_recur_t(const call *c, const la_launch *l)
{
	const tile_la_fwd_args *a = c->a;
	const la_kda_layout *k = &c->p->kl;
	tile_args_chunk_recur_t x = {
		.W = c->ws + k->w, .U = c->ws + k->u, .QG = c->ws + k->qg, .KG = c->ws + k->kg,
		.AQK = c->ws + k->aqk, .DEC = c->ws + k->dec, .XB = c->ws + k->xb,
		.H0 = or_else(a->initial_state, c->ws), .HT = or_else(a->final_state, c->ws),
		.O = dptr(a->o), .Ot = dptr(a->o), .Cu = or_else(a->cu_seqlens, c->ws),
		.TT = (int32_t)c->p->s.tokens, .TS = c->ts_rows, .HV = a->num_v_heads,
		.NSLOT = (int32_t)c->p->s.slots, .XS = at_least_one(k->xbs),
		.NH0 = c->nseq, .NCU = c->ncu, .nseq = c->nseq, .seqlen = c->seqlen,
		.has_cu = a->cu_seqlens != NULL, .has_h0 = a->initial_state != NULL,
		.has_ht = a->final_state != NULL, .state_v_first = a->state_v_first != 0,
		.part = l->mode, .seg_len = l->seg_len, .first_len = l->first_len, .NX = l->nx,
	};
	return tile_launch_chunk_recur_t(recurrence(c, LA_K_RECUR_T), &x, a->stream, flags_of(l));
}

static tile_status launch_recur_w(const call *c, const la_launch *l)
{
	const tile_la_fwd_args *a = c->a;
	const la_kda_layout *k = &c->p->kl;
	tile_args_chunk_recur_w x = {
		.W = c->ws + k->w, .U = c->ws + k->u, .QG = c->ws + k->qg, .KG = c->ws + k->kg,
		.AQK = c->ws + k->aqk, .DEC = c->ws + k->dec,
		.H0 = or_else(a->initial_state, c->ws), .HT = or_else(a->final_state, c->ws),
		.O = dptr(a->o), .Ot = dptr(a->o), .Cu = or_else(a->cu_seqlens, c->ws),
		.TT = (int32_t)c->p->s.tokens, .TS = c->ts_rows, .HV = a->num_v_heads,
		.NSLOT = (int32_t)c->p->s.slots, .NH0 = c->nseq, .NCU = c->ncu, .nseq = c->nseq,
		.seqlen = c->seqlen, .has_cu = a->cu_seqlens != NULL,
		.has_h0 = a->initial_state != NULL, .has_ht = a->final_state != NULL,
		.state_v_first = a->state_v_first != 0, .NX = l->nx,
	};
	return tile_launch_chunk_recur_w(recurrence(c, LA_K_RECUR_W), &x, a->stream, flags_of(l));
}

/* xt: the backward's P_j^T hi term, its lo term xt_lo (0: the forward's call, no P_j^T) */
static tile_status launch_map(const call *c, const la_launch *l, uint64_t xt, uint64_t xt_lo)
{
	const tile_la_fwd_args *a = c->a;
	const la_kda_layout *k = &c->p->kl;
	int32_t xs = at_least_one(k->xs);
	tile_args_chunk_map_t x = {
		.W = c->prep_ws + k->w, .U = c->prep_ws + k->u, .KG = c->prep_ws + k->kg,
		.DEC = c->prep_ws + k->dec, .CB = c->prep_ws + k->cb, .XB = c->ws + k->xb,
		.XPH = c->ws + k->xph, .XPL = c->ws + k->xpl, .XTH = xt ? xt : c->ws + k->xph,
		.XTL = xt ? xt_lo : c->ws + k->xpl, .H0 = or_else(a->initial_state, c->ws),
		.Cu = or_else(a->cu_seqlens, c->ws),
		.TT = c->tt_rows, .TS = c->ts_rows, .HV = a->num_v_heads,
		.NSLOT = (int32_t)c->p->s.slots, .XS = xs, .XR = xs * a->head_dim, .NH0 = c->nseq,
		.NCU = c->ncu, .nseq = c->nseq, .seqlen = c->seqlen,
		.has_cu = a->cu_seqlens != NULL, .has_h0 = a->initial_state != NULL,
		.state_v_first = a->state_v_first != 0,
		.chained = l->mode, .seg_len = l->seg_len, .first_len = l->first_len, .NX = l->nx,
		.with_back = xt != 0,
	};
	return tile_launch_chunk_map_t(recurrence(c, LA_K_MAP_T), &x, a->stream, flags_of(l));
}

/* The chain of either op's maps: KDA's or GDN's workspace regions (the same layout); with
 * the backward's offsets at xbb (not 0) and its P_j^T at xt, xt_lo, its reverse chain too. */
static tile_status launch_chain(const call *c, const la_launch *l, uint64_t xbb, uint64_t xt,
				uint64_t xt_lo)
{
	const tile_la_fwd_args *a = c->a;
	const la_plan *p = c->p;
	int64_t slots = p->kda ? p->kl.xs : p->gl.xs;
	size_t xb = p->kda ? p->kl.xb : p->gl.xb, xph = p->kda ? p->kl.xph : p->gl.xph;
	size_t xpl = p->kda ? p->kl.xpl : p->gl.xpl;
	int32_t xs = at_least_one(slots);
	tile_args_chunk_chain_t x = {
		.XPH = c->ws + xph, .XPL = c->ws + xpl, .XBT = c->ws + xb,
		.XB = c->ws + xb, .XBBT = xbb ? xbb : c->ws + xb, .XBB = xbb ? xbb : c->ws + xb,
		.XTH = xbb ? xt : c->ws + xph, .XTL = xbb ? xt_lo : c->ws + xpl,
		.Cu = or_else(a->cu_seqlens, c->ws),
		.TT = c->tt_rows, .HV = a->num_v_heads, .XS = xs, .XR = xs * a->head_dim,
		.NCU = c->ncu, .nseq = c->nseq, .seqlen = c->seqlen,
		.has_cu = a->cu_seqlens != NULL, .seg_len = l->seg_len, .first_len = l->first_len,
		.NX = l->nx, .with_back = xbb != 0,
	};
	return tile_launch_chunk_chain_t(c->v->k[LA_K_CHAIN_T], &x, a->stream, flags_of(l));
}

/* GDN's gdn_kkt regions (in the forward's workspace where the backward reads a kept one), or
 * the handle's dummy buffer without tokens (no workspace then: the tensor maps are one row
 * that nothing loads). */
static uint64_t gdn_ws(const call *c, size_t offset)
{
	return c->p->s.tokens > 0 ? c->prep_ws + offset : c->la->dummy;
}

static tile_status launch_kkt(const call *c, const la_launch *l)
{
	const tile_la_fwd_args *a = c->a;
	const la_gdn_layout *g = &c->p->gl;
	uint64_t unused = c->la->dummy;
	tile_args_gdn_kkt x = {
		.Q = dptr(a->q), .Kt = dptr(a->k), .G = dptr(a->g), .G16 = dptr(a->g),
		.Beta = dptr(a->beta), .Beta16 = dptr(a->beta),
		.ALog = or_else(a->A_log, unused), .DtBias = or_else(a->dt_bias, unused),
		.Cu = or_else(a->cu_seqlens, unused), .A = gdn_ws(c, g->a), .At = gdn_ws(c, g->a),
		.AQ = gdn_ws(c, g->aqk), .AQt = gdn_ws(c, g->aqk), .RQ = gdn_ws(c, g->rq),
		.RK = gdn_ws(c, g->rk), .GamO = gdn_ws(c, g->gam), .BetO = gdn_ws(c, g->bet),
		.TT = (int32_t)c->p->s.tokens, .TP = (int32_t)(c->p->s.slots * CHUNK),
		.H = a->num_heads, .HV = a->num_v_heads, .NCU = c->ncu,
		.NSLOT = (int32_t)c->p->s.slots, .nseq = c->nseq, .seqlen = c->seqlen,
		.has_cu = a->cu_seqlens != NULL, .gate_mode = a->use_gate_in_kernel ? 1 : 0,
		.has_bias = a->dt_bias != NULL && a->use_gate_in_kernel,
		.has_alog = a->A_log != NULL, .l2norm = a->use_qk_l2norm_in_kernel != 0,
		.beta_sigmoid = a->use_beta_sigmoid_in_kernel != 0,
		.g16 = a->gate_dtype != TILE_LA_F32, .beta16 = a->beta_dtype != TILE_LA_F32,
		.beta_mult = a->allow_neg_eigval ? 2.0f : 1.0f,
		/* the one-term gdn_fused reads AQK (the two-term build forms it itself; the
		 * backward's plan takes that one: its _lo build stores AQK per slot alone) */
		.aqk_out = recurrence(c, LA_K_FUSED) == c->v->k[LA_K_FUSED],
		.scale = c->scale,
	};
	x.AH = c->setup ? c->setup->ah : unused;
	x.AQH = c->setup ? c->setup->aqh : unused;
	x.WG = c->setup ? c->setup->w : unused;
	return tile_launch_gdn_kkt(c->v->k[c->setup ? LA_K_KKT_LO : l->kernel], &x, a->stream,
				   flags_of(l));
}

static tile_status launch_fused(const call *c, const la_launch *l)
{
	const tile_la_fwd_args *a = c->a;
	const la_gdn_layout *g = &c->p->gl;
	uint64_t unused = c->la->dummy;
	int tokens = c->p->s.tokens > 0;
	tile_args_gdn_fused x = {
		.Q = tokens ? dptr(a->q) : unused, .Kt = tokens ? dptr(a->k) : unused,
		.Vt = tokens ? dptr(a->v) : unused, .Ag = gdn_ws(c, g->a), .AQg = gdn_ws(c, g->aqk),
		.Gm = gdn_ws(c, g->gam),
		.Bt = gdn_ws(c, g->bet), .RQ = gdn_ws(c, g->rq), .RK = gdn_ws(c, g->rk),
		.XB = g->xs > 0 ? c->ws + g->xb : unused,
		.H0 = or_else(a->initial_state, unused), .HT = or_else(a->final_state, unused),
		.HS = or_else(a->chunk_states, unused), .O = tokens ? dptr(a->o) : unused,
		.Ot = tokens ? dptr(a->o) : unused, /* O, and O as a TMA tensor */
		.Cu = or_else(a->cu_seqlens, unused),
		.TT = c->tt_rows, .TP = (int32_t)(c->p->s.slots * CHUNK), .H = a->num_heads,
		.HV = a->num_v_heads, .NH0 = c->nseq,
		.NHS = a->chunk_states ? a->num_chunk_states : 1, .NCU = c->ncu,
		.XS = at_least_one(g->xs), .nseq = c->nseq, .seqlen = c->seqlen,
		.has_cu = a->cu_seqlens != NULL, .has_h0 = a->initial_state != NULL,
		.has_ht = a->final_state != NULL, .has_hs = a->chunk_states != NULL,
		.state_v_first = a->state_v_first != 0, .scale = c->scale,
		.part = l->mode, .seg_len = l->seg_len, .first_len = l->first_len, .NX = l->nx,
	};
	return tile_launch_gdn_fused(recurrence(c, LA_K_FUSED), &x, a->stream, flags_of(l));
}

/* xt, xt_lo: as launch_map's */
static tile_status launch_map_g(const call *c, const la_launch *l, uint64_t xt, uint64_t xt_lo)
{
	const tile_la_fwd_args *a = c->a;
	const la_gdn_layout *g = &c->p->gl;
	int32_t xs = at_least_one(g->xs);
	tile_args_gdn_map_t x = {
		.Kt = dptr(a->k), .Vt = dptr(a->v), .Ag = c->prep_ws + g->a,
		.Gm = c->prep_ws + g->gam, .Bt = c->prep_ws + g->bet, .RK = c->prep_ws + g->rk,
		.XB = c->ws + g->xb,
		.XPH = c->ws + g->xph, .XPL = c->ws + g->xpl, .XTH = xt ? xt : c->ws + g->xph,
		.XTL = xt ? xt_lo : c->ws + g->xpl, .Cu = or_else(a->cu_seqlens, c->ws),
		.TT = c->tt_rows, .TP = (int32_t)(c->p->s.slots * CHUNK), .H = a->num_heads,
		.HV = a->num_v_heads, .XS = xs, .XR = xs * a->head_dim, .NCU = c->ncu,
		.nseq = c->nseq, .seqlen = c->seqlen, .has_cu = a->cu_seqlens != NULL,
		.seg_len = l->seg_len, .first_len = l->first_len, .NX = l->nx,
		.with_back = xt != 0,
	};
	return tile_launch_gdn_map_t(recurrence(c, LA_K_MAP_G), &x, a->stream, flags_of(l));
}

static tile_status launch_one(const call *c, const la_launch *l)
{
	switch (l->kernel) {
	case LA_K_PREP:
	case LA_K_PREP_NOCB:
	case LA_K_PREP_BWD:
	case LA_K_PREP_FROMA:
	case LA_K_PREP_QGL:
	case LA_K_PREP_BWD_QGL: return launch_prep(c, l);
	case LA_K_RECUR: return launch_recur(c, l);
	case LA_K_RECUR_T: return launch_recur_t(c, l);
	case LA_K_RECUR_W: return launch_recur_w(c, l);
	case LA_K_MAP_T: return launch_map(c, l, 0, 0);
	case LA_K_CHAIN_T: return launch_chain(c, l, 0, 0, 0);
	case LA_K_KKT:
	case LA_K_KKT2: return launch_kkt(c, l);
	case LA_K_FUSED: return launch_fused(c, l);
	case LA_K_MAP_G: return launch_map_g(c, l, 0, 0);
	case LA_K_BWD_RECUR: /* the backward's kernels are never in a forward plan */
	case LA_K_BWD_CHUNK:
	case LA_K_BWD_FINISH:
	case LA_K_BWD_INTRA:
	case LA_K_BWD_WY:
	case LA_K_GDN_BWD_CHUNK:
	case LA_K_GDN_WALKS:
	case LA_K_GDN_WALKS_W:
	case LA_K_KKT_LO:
	case LA_K_GDN_BWD_CHUNK_DQK:
	case LA_K_BWD_RECUR_W:
	case LA_NKERNELS: break;
	}
	return TILE_ERR_ARG;
}

/* What the launches of call a with plan p share, over the workspace at ws. */
static call call_of(tile_la *la, const tile_la_fwd_args *a, const la_plan *p, const void *ws)
{
	call c = {la, a, p, &la->v[variant_index(a->dtype, a->head_dim)], dptr(ws), dptr(ws),
		  a->cu_seqlens ? a->num_seqs + 1 : 1, a->cu_seqlens ? 0 : a->seq_len,
		  (int32_t)p->s.nseq, at_least_one(p->s.tokens),
		  p->s.tokens > 0 ? (int32_t)(p->s.slots * CHUNK) : 1,
		  a->scale != 0.0f ? a->scale : 1.0f / sqrtf((float)a->head_dim), NULL, 0};
	return c;
}

/* The plan's launches in order on the caller's stream; the first failure is reported. */
static tile_status run_plan(tile_la *la, const tile_la_fwd_args *a, const la_plan *p)
{
	call c = call_of(la, a, p, a->workspace);
	c.qgl_out = p->kda && p->kl.qg_lo;   /* (chunk_prep_qgl) */
	/* GDN's save_for_backward: gdn_kkt's _lo build also leaves W, A and AQK in two terms */
	const la_gdn_layout *g = &p->gl;
	const bwd_setup keep = {c.ws + g->ah, c.ws + g->aqh, c.ws + g->w, 0, 0};
	if (!p->kda && a->save_for_backward && p->s.tokens > 0)
		c.setup = &keep;
	/* KDA's saved_setup: chunk_prep_bwd leaves A and AQK there (and not Gamma or the row
	 * vectors, which the backward forms again) */
	uint64_t sv = dptr(a->saved_setup);
	const bwd_setup kept = {sv, sv + la_kda_saved_aqh(a), 0, 0, 0};
	if (p->kda && a->saved_setup && p->s.tokens > 0)
		c.setup = &kept;
	for (int i = 0; i < p->nlaunches; i++) {
		tile_status st = launch_one(&c, &p->launch[i]);
		if (st != TILE_OK)
			return fail(la, st, "%s launch: %s", la_kernel_stem(p->launch[i].kernel),
				    tile_rt_error(la->rt));
	}
	return TILE_OK;
}

static tile_status forward(tile_la *la, const tile_la_fwd_args *a, int kda)
{
	if (!la)
		return TILE_ERR_ARG;
	la->error[0] = '\0';
	la_plan p;
	tile_status st = plan_call(la, a, kda, &p);
	if (st == TILE_OK)
		st = check_pointers(sink_of(la), a, kda, p.workspace);
	if (st != TILE_OK)
		return st;
	if (p.s.tokens == 0 && !a->final_state)
		return TILE_OK;
	return run_plan(la, a, &p);
}

tile_status tile_la_gdn_fwd(tile_la *la, const tile_la_fwd_args *a)
{
	return forward(la, a, 0);
}

tile_status tile_la_kda_fwd(tile_la *la, const tile_la_fwd_args *a)
{
	return forward(la, a, 1);
}

/* ---- the backward (kernels/kda_bwd_recur.tile, kda_bwd.tile, kda_bwd_intra.tile) ----------- */

/* The backward's workspace, byte offsets in order: KDA's chunk_prep outputs (the forward's, as
 * its layout places them from 0: `prep`; none when the forward's workspace is given), or GDN's
 * gdn_kkt outputs (its forward layout's A .. beta from 0, without AQK: `gprep`) and
 * gdn_kkt_lo's W (IN [slots x 64, HV, D]); every
 * chunk slot's start state S^T and end-state gradient dS^T (IN, [slots, HV, D, D] each: one
 * term, where FLA rounds them too), A and AQK (IN hi + lo, [slots, HV, 2, 64, 64]:
 * chunk_prep_bwd's or kda_bwd_wy's, GDN's gdn_kkt_lo's), KDA's Gamma (f32, [slots, HV, 64, D]),
 * KDA's kda_bwd_chunk's dL and dAQK (f32, [slots, HV, 64, 64]; GDN's gdn_bwd_chunk keeps them in
 * shared memory), the per-value-head dq^, dk^ and kda_bwd_chunk's part of dg before the gate
 * (f32, [TT, HV, D]; GDN: no dg part, gdn_bwd_chunk sums dg per row), dbeta's parts (f32,
 * [TT, HV, 3]: the value term, the L term per key slab), the row scales and beta (f32,
 * [slots, HV, 3, 64]) per slot, the gate
 * parameters' per-slot sums (dA_log [slots, D / 64, HV], ddt_bias [slots, HV, D]); for GDN then
 * dg's part per key slab (f32 [TT, HV, D / 64]). With segments (seg_len > 0, xs segment slots)
 * then the walks' transfer maps: the forward's starts B_j^T and the backward's Bb_j^T (f32 [xs,
 * HV, D, D] each), P_j and P_j^T as IN hi and lo terms ([xs D, HV, D] each, four arrays). 0 total:
 * too large for size_t. */
typedef struct bwd_layout {
	la_kda_layout prep;
	la_gdn_layout gprep;
	int gdn_saved;             /* GDN with fwd_workspace: gprep, gw, ah and aqh are offsets
				      in the forward's workspace (la_gdn_saved_layout) */
	size_t gw;                 /* GDN: gdn_kkt_lo's W */
	size_t ss, db, ah, aqh, pg, pa, paq, dqw, dkw, dgw, dbw, nrw, dal, ddt;
	size_t dgp;                /* GDN's */
	int32_t seg_len;           /* the walks' segments (chunks; 0: whole sequences) */
	int64_t xs;                /* their slots */
	size_t xb, xbb, xph, xpl, xth, xtl;  /* their maps */
	size_t total;
} bwd_layout;

/* Where gdn_kkt's outputs (gprep, gw, ah, aqh) lie: the forward's workspace that kept them, or
 * the backward's own; KDA's ah and aqh: the forward's saved_setup where it kept them, else the
 * backward's (chunk_prep_bwd's or kda_bwd_wy's). */
static uint64_t bwd_setup_base(const tile_la_bwd_args *b, const bwd_layout *l)
{
	if (b->fwd.saved_setup)
		return dptr(b->fwd.saved_setup);
	return dptr(l->gdn_saved ? b->fwd_workspace : b->workspace);
}

static size_t bwd_region(size_t *at, uint64_t bytes, int *overflow)
{
	size_t start = *at;
	uint64_t end = (uint64_t)start + bytes + WS_ALIGN - 1;
	if (bytes > SIZE_MAX / 2 || end > SIZE_MAX / 2)
		*overflow = 1;
	else
		*at = (size_t)(end / WS_ALIGN * WS_ALIGN);
	return start;
}

/* KDA's kda_bwd_wy runs beside the walks only over a kept forward workspace: the recompute's
 * chunk_prep_bwd leaves its outputs before them. */
static int kda_wy_beside(const tile_la_bwd_args *b, int kda)
{
	return kda && b->fwd_workspace;
}

/* GDN with one value head per q/k head: gdn_bwd_chunk's DQK_FINAL build writes dq and dk (no
 * sum over value heads, so no f32 round trip through the workspace). */
static int gdn_dqk_final(const tile_la_fwd_args *a)
{
	return a->num_heads == a->num_v_heads;
}

static bwd_layout bwd_layout_of(const tile_la_bwd_args *b, int kda, int32_t seg_len)
{
	const tile_la_fwd_args *a = &b->fwd;
	la_shapes s = la_shapes_of(a);
	uint64_t hv = (uint64_t)a->num_v_heads, d = (uint64_t)a->head_dim;
	uint64_t slots = (uint64_t)s.slots, tt = (uint64_t)s.tokens;
	/* slots x hv < 2^31 and d^2 <= 2^14 (check_shapes): no product below wraps */
	uint64_t state = slots * hv * d * d * 2, tok = tt * hv * d * 4;
	bwd_layout l;
	memset(&l, 0, sizeof l);
	size_t at = 0;
	int overflow = 0;
	if (kda) {
		/* QG's lo term (dh0's alone: the walks publish dS_c+1 rounded): chunk_prep_froma's
		 * or chunk_prep_bwd_qgl's (written when dh0 is asked for), or where the forward
		 * kept it in its workspace */
		l.prep = la_kda_prep_layout(a, b->fwd_workspace ? la_kda_keeps_qgl(a) : 1);
		at = b->fwd_workspace ? 0 : l.prep.total;
	} else if (b->fwd_workspace) {
		l.gdn_saved = 1;
		l.gprep = la_gdn_saved_layout(a);
		l.gw = l.gprep.w;
	} else {
		l.gprep = la_gdn_prep_layout(a);
		at = l.gprep.total;
		l.gw = bwd_region(&at, slots * 64 * hv * d * 2, &overflow);
	}
	l.ss = bwd_region(&at, state, &overflow);
	l.db = bwd_region(&at, state, &overflow);
	uint64_t setup = kda ? slots * hv : 0;   /* GDN's row vectors are gdn_kkt's */
	if (l.gdn_saved) {
		l.ah = l.gprep.ah, l.aqh = l.gprep.aqh;
	} else if (kda && a->saved_setup) {
		l.ah = 0, l.aqh = la_kda_saved_aqh(a);   /* offsets in the forward's saved_setup */
	} else {
		l.ah = bwd_region(&at, slots * hv * 2 * 64 * 64 * 2, &overflow);
		l.aqh = bwd_region(&at, slots * hv * 2 * 64 * 64 * 2, &overflow);
	}
	l.pg = bwd_region(&at, setup * 64 * d * 4, &overflow);
	l.pa = bwd_region(&at, kda ? slots * hv * 64 * 64 * 4 : 0, &overflow);
	l.paq = bwd_region(&at, kda ? slots * hv * 64 * 64 * 4 : 0, &overflow);
	/* dq^ and dk^ per value head, f32, for kda_bwd_finish's sums (none: gdn_dqk_final) */
	uint64_t dqk = kda || !gdn_dqk_final(a) ? tok : 0;
	l.dqw = bwd_region(&at, dqk, &overflow);
	l.dkw = bwd_region(&at, dqk, &overflow);
	/* dg's part per channel (GDN's gdn_bwd_chunk sums dg per row) */
	l.dgw = bwd_region(&at, kda ? tok : 0, &overflow);
	l.dbw = bwd_region(&at, tt * hv * 3 * 4, &overflow);
	l.nrw = bwd_region(&at, setup * 3 * 64 * 4, &overflow);
	l.dal = bwd_region(&at, slots * (d / 64) * hv * 4, &overflow);
	l.ddt = bwd_region(&at, slots * hv * d * 4, &overflow);
	l.dgp = at;
	if (!kda)
		l.dgp = bwd_region(&at, tt * hv * (d / 64) * 4, &overflow);
	l.seg_len = seg_len;
	l.xs = la_segment_slots(a, seg_len);
	uint64_t maps = (uint64_t)l.xs * hv * d * d;
	l.xb = bwd_region(&at, maps * 4, &overflow);
	l.xbb = bwd_region(&at, maps * 4, &overflow);
	l.xph = bwd_region(&at, maps * 2, &overflow);
	l.xpl = bwd_region(&at, maps * 2, &overflow);
	l.xth = bwd_region(&at, maps * 2, &overflow);
	l.xtl = bwd_region(&at, maps * 2, &overflow);
	l.total = overflow ? 0 : at;
	return l;
}

/* Shapes and options (check_shapes), then the workspace's size: the plan's on the handle's
 * device and options (`on`), or without one the least any device needs (whole walks). */
static tile_status bwd_shapes(sink la, const tile_la_bwd_args *b, int kda, const tile_la *on,
			      bwd_layout *l)
{
	if (!b)
		return report(la, TILE_ERR_ARG, "args: NULL");
	tile_status st = check_shapes(la, &b->fwd, kda);
	if (st != TILE_OK)
		return st;
	*l = bwd_layout_of(b, kda, on ? la_bwd_segment_len(&b->fwd, kda, kda_wy_beside(b, kda),
							   &on->dev, &on->opt) : 0);
	if (!l->total)
		return report(la, TILE_ERR_ARG, "seq_len: the workspace of %lld tokens x %d value "
			    "heads exceeds the address space", (long long)la_shapes_of(&b->fwd).tokens,
			    b->fwd.num_v_heads);
	return TILE_OK;
}

static tile_status bwd_pointers(sink la, const tile_la_bwd_args *b, int kda, size_t need)
{
	const tile_la_fwd_args *a = &b->fwd;
	uintptr_t es = 2, gs = scalar_bytes(a->gate_dtype), bs = scalar_bytes(a->beta_dtype);
	struct { const void *p; const char *name; int with_tokens; uintptr_t align; } ptrs[] = {
		{a->q, "q", 1, es}, {a->k, "k", 1, es}, {a->v, "v", 1, es}, {a->g, "g", 1, gs},
		{a->beta, "beta", 1, bs}, {b->dout, "dout", 1, es}, {b->dq, "dq", 1, es},
		{b->dk, "dk", 1, es}, {b->dv, "dv", 1, es}, {b->dg, "dg", 1, gs},
		{b->dbeta, "dbeta", 1, bs},
		{a->initial_state, "initial_state", 0, 4}, {a->cu_seqlens, "cu_seqlens", 0, 4},
		{a->A_log, "A_log", 0, 4}, {a->dt_bias, "dt_bias", 0, 4}, {b->dht, "dht", 0, 4},
		{b->dh0, "dh0", 0, 4}, {b->dA_log, "dA_log", 0, 4}, {b->ddt_bias, "ddt_bias", 0, 4},
		{b->workspace, "workspace", 0, WS_ALIGN},
	};
	la_shapes s = la_shapes_of(a);
	for (size_t i = 0; i < sizeof ptrs / sizeof ptrs[0]; i++) {
		if (!ptrs[i].p && ptrs[i].with_tokens && s.tokens > 0)
			return report(la, TILE_ERR_ARG, "%s: NULL (required)", ptrs[i].name);
		if (ptrs[i].p && misaligned(ptrs[i].p, ptrs[i].align))
			return report(la, TILE_ERR_ARG, "%s: %p is not %u-byte aligned", ptrs[i].name,
				    ptrs[i].p, (unsigned)ptrs[i].align);
	}
	if (!b->workspace)
		return report(la, TILE_ERR_ARG, "workspace: NULL (required)");
	if (a->use_gate_in_kernel && !a->A_log && !a->use_lower_bound)
		return report(la, TILE_ERR_ARG, "A_log: NULL with use_gate_in_kernel (required unless "
			    "the KDA lower-bound gate is used)");
	if (b->dA_log && !(a->use_gate_in_kernel && a->A_log))
		return report(la, TILE_ERR_ARG, "dA_log: given without use_gate_in_kernel and A_log "
			    "(there is no such parameter)");
	if (b->ddt_bias && !(a->use_gate_in_kernel && a->dt_bias))
		return report(la, TILE_ERR_ARG, "ddt_bias: given without use_gate_in_kernel and "
			    "dt_bias (there is no such parameter)");
	if (b->workspace_size < need)
		return report(la, TILE_ERR_ARG, "workspace_size: %zu bytes (needs %zu)",
			    b->workspace_size, need);
	/* the forward's kept regions: KDA's chunk_prep outputs, GDN's (save_for_backward)
	 * gdn_kkt_lo outputs */
	size_t saved = !b->fwd_workspace || s.tokens == 0 ? 0 :
		       kda ? la_kda_prep_layout(a, la_kda_keeps_qgl(a)).total :
			     la_gdn_saved_layout(a).xb;
	if (a->saved_setup && !kda)
		return report(la, TILE_ERR_ARG, "fwd.saved_setup: given to GDN (KDA only)");
	if (a->saved_setup && b->fwd_workspace)
		return report(la, TILE_ERR_ARG, "fwd.saved_setup and fwd_workspace: both given (the "
			    "forward keeps one or the other)");
	if (a->saved_setup && misaligned(a->saved_setup, WS_ALIGN))
		return report(la, TILE_ERR_ARG, "fwd.saved_setup: %p is not %u-byte aligned",
			    a->saved_setup, (unsigned)WS_ALIGN);
	size_t kept = a->saved_setup ? la_kda_saved_bytes(a) : 0;
	if (a->saved_setup && a->saved_setup_size < kept)
		return report(la, TILE_ERR_ARG, "fwd.saved_setup_size: %zu bytes (needs %zu)",
			    a->saved_setup_size, kept);
	if (b->fwd_workspace && misaligned(b->fwd_workspace, WS_ALIGN))
		return report(la, TILE_ERR_ARG, "fwd_workspace: %p is not %u-byte aligned",
			    b->fwd_workspace, (unsigned)WS_ALIGN);
	if (b->fwd_workspace && b->fwd_workspace_size < saved)
		return report(la, TILE_ERR_ARG, "fwd_workspace_size: %zu bytes (the forward's "
			    "workspace holds at least %zu)", b->fwd_workspace_size, saved);
	uint64_t tt = (uint64_t)s.tokens, n = (uint64_t)s.nseq, h = (uint64_t)a->num_heads;
	uint64_t hv = (uint64_t)a->num_v_heads, d = (uint64_t)a->head_dim, state = hv * d * d * 4;
	uint64_t gd = kda ? d : 1; /* KDA's gate and dt_bias per channel, GDN's per head */
	uint64_t qk = tt * h * d * es, vv = tt * hv * d * es, gg = tt * hv * gd * gs;
	uint64_t bb = tt * hv * bs;
	extent e[] = {
		{"dq", (uintptr_t)b->dq, qk, 1}, {"dk", (uintptr_t)b->dk, qk, 1},
		{"dv", (uintptr_t)b->dv, vv, 1}, {"dg", (uintptr_t)b->dg, gg, 1},
		{"dbeta", (uintptr_t)b->dbeta, bb, 1}, {"dh0", (uintptr_t)b->dh0, n * state, 1},
		{"dA_log", (uintptr_t)b->dA_log, hv * 4, 1},
		{"ddt_bias", (uintptr_t)b->ddt_bias, hv * gd * 4, 1},
		{"workspace", (uintptr_t)b->workspace, need, 1},
		{"q", (uintptr_t)a->q, qk, 0}, {"k", (uintptr_t)a->k, qk, 0},
		{"v", (uintptr_t)a->v, vv, 0}, {"g", (uintptr_t)a->g, gg, 0},
		{"beta", (uintptr_t)a->beta, bb, 0}, {"dout", (uintptr_t)b->dout, vv, 0},
		{"initial_state", (uintptr_t)a->initial_state, n * state, 0},
		{"dht", (uintptr_t)b->dht, n * state, 0},
		{"cu_seqlens", (uintptr_t)a->cu_seqlens,
		 a->cu_seqlens ? ((uint64_t)a->num_seqs + 1) * 4 : 0, 0},
		{"A_log", (uintptr_t)a->A_log, hv * 4, 0},
		{"dt_bias", (uintptr_t)a->dt_bias, hv * gd * 4, 0},
		{"fwd_workspace", (uintptr_t)b->fwd_workspace, saved, 0},
		{"fwd.saved_setup", (uintptr_t)a->saved_setup, kept, 0},
	};
	return check_extents(la, e, sizeof e / sizeof e[0]);
}

static tile_status bwd_workspace(tile_la *la, const tile_la_bwd_args *b, int kda,
				 size_t *bytes)
{
	if (bytes)
		*bytes = 0;
	if (!la || !bytes)
		return TILE_ERR_ARG;
	la->error[0] = '\0';
	bwd_layout l;
	tile_status st = bwd_shapes(sink_of(la), b, kda, la, &l);
	if (st == TILE_OK)
		*bytes = l.total;
	return st;
}

static tile_status bwd_check(const tile_la_bwd_args *b, int kda, char *error, size_t error_size)
{
	if (error && error_size)
		error[0] = '\0';
	sink out = {error, error_size};
	bwd_layout l;
	tile_status st = bwd_shapes(out, b, kda, NULL, &l);
	return st != TILE_OK ? st : bwd_pointers(out, b, kda, l.total);
}

tile_status tile_la_kda_bwd_workspace(tile_la *la, const tile_la_bwd_args *b, size_t *bytes)
{
	return bwd_workspace(la, b, 1, bytes);
}

tile_status tile_la_gdn_bwd_workspace(tile_la *la, const tile_la_bwd_args *b, size_t *bytes)
{
	return bwd_workspace(la, b, 0, bytes);
}

tile_status tile_la_kda_bwd_check(const tile_la_bwd_args *b, char *error, size_t error_size)
{
	return bwd_check(b, 1, error, error_size);
}

tile_status tile_la_gdn_bwd_check(const tile_la_bwd_args *b, char *error, size_t error_size)
{
	return bwd_check(b, 0, error, error_size);
}

/* Whether whole walks take kda_bwd_recur's _w builds (both value slices of a head in one CTA,
 * D = 128), by la_use_wide's rule over the walks' CTAs (two directions x sequences x heads x 2
 * slices), or as the option bwd_wide forces. */
static int bwd_walks_wide(const call *c)
{
	return la_use_wide(c->la->dev.sm_count, c->a->head_dim, c->nseq,
			   2 * (int64_t)c->a->num_v_heads, c->la->opt.bwd_wide);
}

/* kda_bwd_recur's walks: whole sequences (part 0), or over segments (kernels/kda_bwd_recur.tile):
 * part 1 (each sequence's end segments and the backward offsets of those between), beside it
 * the maps and forward offsets (chunk_map_t, GDN's gdn_map_t; early start), chunk_chain_t's two
 * chains (early start), part 2 (early start; it waits for the chains). KDA's walks read
 * chunk_prep's outputs, GDN's (its own build) gdn_kkt's and the inputs. */
static tile_status launch_walks(const call *c, const tile_la_bwd_args *b, const bwd_layout *l,
				int kda)
{
	const tile_la_fwd_args *a = &b->fwd;
	const la_kda_layout *k = &l->prep;
	const la_gdn_layout *g = &c->p->gl;
	tile_la *la = c->la;
	uint64_t ws = c->ws, pw = c->prep_ws;
	uint64_t sb = bwd_setup_base(b, l);   /* A and AQK in two terms, GDN's W */
	int32_t xs = at_least_one(l->xs), segs = (int32_t)l->xs;
	int tokens = c->p->s.tokens > 0;
	/* TMA tensors of a row when there are no tokens (nothing loads them then) */
	uint64_t kk = tokens ? dptr(a->k) : la->dummy;
	tile_args_kda_bwd_recur x = {
		.W = kda ? pw + k->w : sb + l->gw, .U = pw + k->u,
		.QG = pw + k->qg, .KG = pw + k->kg,
		.QGL = pw + qgl_region(k),
		.AQK = pw + k->aqk, .DEC = pw + k->dec,
		.DOt = tokens ? dptr(b->dout) : la->dummy,
		.Kt = kk, .Qt = tokens ? dptr(a->q) : la->dummy, .Vt = tokens ? dptr(a->v) : la->dummy,
		.AH = sb + l->ah, .AQH = sb + l->aqh, .Gm = kda ? ws : gdn_ws(c, g->gam),
		.Bt = kda ? ws : gdn_ws(c, g->bet), .RQ = kda ? ws : gdn_ws(c, g->rq),
		.RK = kda ? ws : gdn_ws(c, g->rk),
		.H0 = or_else(a->initial_state, ws), .DHT = or_else(b->dht, ws),
		.DH0 = or_else(b->dh0, ws), .SH = ws + l->ss, .DBH = ws + l->db,
		.XB = ws + l->xb, .XBB = ws + l->xbb, .Cu = or_else(a->cu_seqlens, ws),
		.TT = c->tt_rows, .TS = c->ts_rows, .TP = c->ts_rows, .H = a->num_heads,
		.HV = a->num_v_heads, .NSLOT = (int32_t)c->p->s.slots, .NH0 = c->nseq, .NCU = c->ncu,
		.XS = xs, .nseq = c->nseq, .seqlen = c->seqlen, .has_cu = a->cu_seqlens != NULL,
		.has_h0 = a->initial_state != NULL, .has_dht = b->dht != NULL,
		.has_dh0 = b->dh0 != NULL, .state_v_first = a->state_v_first != 0,
		.scale = c->scale, .qg_lo = kda && k->qg_lo && c->qgl_out, .part = 0,
		.seg_len = l->seg_len, .NX = c->nseq,
	};
	tile_kernel *walks = c->v->k[kda ? LA_K_BWD_RECUR : LA_K_GDN_WALKS];
	if (l->seg_len <= 0) {
		if (bwd_walks_wide(c))
			walks = c->v->k[kda ? LA_K_BWD_RECUR_W : LA_K_GDN_WALKS_W];
		return tile_launch_kda_bwd_recur(walks, &x, b->stream, 0);
	}
	x.part = 1;
	x.NX = segs;
	tile_status st = tile_launch_kda_bwd_recur(walks, &x, b->stream, 0);
	la_launch maps = {.kernel = kda ? LA_K_MAP_T : LA_K_MAP_G, .mode = 1,
			  .seg_len = l->seg_len, .first_len = l->seg_len, .nx = segs,
			  .early_start = 1};
	if (st == TILE_OK)
		st = kda ? launch_map(c, &maps, ws + l->xth, ws + l->xtl) :
			   launch_map_g(c, &maps, ws + l->xth, ws + l->xtl);
	la_launch chain = maps;
	chain.kernel = LA_K_CHAIN_T;
	if (st == TILE_OK)
		st = launch_chain(c, &chain, ws + l->xbb, ws + l->xth, ws + l->xtl);
	x.part = 2;
	if (st == TILE_OK)
		st = tile_launch_kda_bwd_recur(walks, &x, b->stream, TILE_LAUNCH_EARLY_START);
	return st;
}

/* The forward's setup again (KDA: chunk_prep over every chunk, W, U, QG, KG, AQK, DEC, read
 * from the forward's workspace instead when it is given; GDN: gdn_kkt with AQK and the lo
 * terms), then both state walks. */
static tile_status bwd_launch_walks(tile_la *la, const tile_la_bwd_args *b, const bwd_layout *l,
				    int kda)
{
	const tile_la_fwd_args *a = &b->fwd;
	la_plan p;
	memset(&p, 0, sizeof p);
	p.s = la_shapes_of(a);
	p.kda = kda;
	/* the maps' regions are the backward's, in its workspace */
	p.kl = l->prep;
	p.kl.xs = p.kl.xbs = l->xs;
	p.kl.xb = l->xb;
	p.kl.xph = l->xph;
	p.kl.xpl = l->xpl;
	p.gl = l->gprep;
	/* GDN's maps in their two-term build: with one, segments of 1 and 2 chunks left dg's error
	 * 2.2x the whole walks' (median of 4 draws; KDA's chunk_map_t has v_new in two terms) */
	p.exact_state = !kda;
	p.gl.xs = l->xs;
	p.gl.xb = l->xb;
	p.gl.xph = l->xph;
	p.gl.xpl = l->xpl;
	call c = call_of(la, a, &p, b->workspace);
	c.qgl_out = b->dh0 != NULL;
	uint64_t ws = dptr(b->workspace);
	/* where gdn_kkt_lo or chunk_prep_bwd leaves them when it runs here (no kept workspace);
	 * KDA's A and AQK where its forward kept them (saved_setup), chunk_prep_froma forming the
	 * rest from them */
	int kept = kda && a->saved_setup;
	uint64_t sb = bwd_setup_base(b, l);
	const bwd_setup setup = {sb + l->ah, sb + l->aqh, ws + l->gw, ws + l->pg, ws + l->nrw};
	c.setup = &setup;
	if (p.s.tokens > 0 && !b->fwd_workspace) {
		la_kernel recompute = c.qgl_out ? LA_K_PREP_BWD_QGL : LA_K_PREP_BWD;
		la_launch prep = {.kernel = !kda ? LA_K_KKT : kept ? LA_K_PREP_FROMA : recompute,
				  .nx = (int32_t)p.s.slots};
		tile_status st = launch_one(&c, &prep);
		if (st != TILE_OK)
			return fail(la, st, "%s launch: %s", kda ? "chunk_prep" : "gdn_kkt",
				    tile_rt_error(la->rt));
	}
	if (b->fwd_workspace)
		c.prep_ws = dptr(b->fwd_workspace);
	tile_status st = launch_walks(&c, b, l, kda);
	if (st != TILE_OK)
		return fail(la, st, "kda_bwd_recur's walks: %s", tile_rt_error(la->rt));
	return TILE_OK;
}

/* The launches of a checked call: chunk_prep_bwd (or, over a kept workspace, kda_bwd_wy beside
 * the walks), kda_bwd_recur, kda_bwd_chunk, kda_bwd_intra, kda_bwd_finish (kda 0:
 * gdn_kkt, kda_bwd_recur's GDN builds, gdn_bwd_chunk and kda_bwd_finish). */
static tile_status bwd_launch(tile_la *la, const tile_la_bwd_args *b, const bwd_layout *l,
			      int kda)
{
	const tile_la_fwd_args *a = &b->fwd;
	const variant *v = &la->v[variant_index(a->dtype, a->head_dim)];
	la_shapes s = la_shapes_of(a);
	uint64_t ws = dptr(b->workspace);
	uint64_t sb = bwd_setup_base(b, l);   /* A and AQK in two terms; GDN: gdn_kkt's outputs */
	int32_t tt = at_least_one(s.tokens), ncu = a->cu_seqlens ? a->num_seqs + 1 : 1;
	int32_t nseq = (int32_t)s.nseq, slots = (int32_t)s.slots;
	int32_t ts = s.tokens > 0 ? (int32_t)(s.slots * CHUNK) : 1;   /* 64 rows per chunk slot */
	int32_t seqlen = a->cu_seqlens ? 0 : a->seq_len;
	int32_t gate_mode = !a->use_gate_in_kernel ? 0 : a->use_lower_bound ? 2 : 1;
	int32_t has_bias = a->dt_bias != NULL && a->use_gate_in_kernel;
	int32_t g16 = a->gate_dtype != TILE_LA_F32, beta16 = a->beta_dtype != TILE_LA_F32;
	float scale = a->scale != 0.0f ? a->scale : 1.0f / sqrtf((float)a->head_dim);
	float beta_mult = a->allow_neg_eigval ? 2.0f : 1.0f;
	float lower_bound = a->use_lower_bound ? a->lower_bound : 0.0f;
	uint64_t cu = or_else(a->cu_seqlens, ws), alog = or_else(a->A_log, ws);
	uint64_t bias = or_else(a->dt_bias, ws);
	/* GDN: gdn_bwd_chunk and kda_bwd_finish read g and dt_bias as given, one channel (GC = 1) */
	int32_t gc = kda ? a->head_dim : 1;
	tile_status st = bwd_launch_walks(la, b, l, kda);
	if (st != TILE_OK)
		return st;
	tile_args_kda_bwd_wy xw = {
		.Q = dptr(a->q), .K = dptr(a->k), .G = or_else(a->g, ws), .G16 = or_else(a->g, ws),
		.Beta = or_else(a->beta, ws), .Beta16 = or_else(a->beta, ws), .ALog = alog,
		.DtBias = bias, .Cu = cu,
		.AH = sb + l->ah, .AQH = sb + l->aqh, .PG = ws + l->pg, .NRW = ws + l->nrw,
		.TT = tt, .H = a->num_heads, .HV = a->num_v_heads, .GC = gc, .NCU = ncu,
		.NSLOT = slots, .nseq = nseq, .seqlen = seqlen, .has_cu = a->cu_seqlens != NULL,
		.l2norm = a->use_qk_l2norm_in_kernel != 0, .gate_mode = gate_mode,
		.has_alog = a->A_log != NULL, .has_bias = has_bias, .g16 = g16,
		.beta_sigmoid = a->use_beta_sigmoid_in_kernel != 0, .beta16 = beta16,
		.beta_mult = beta_mult, .lower_bound = lower_bound, .scale = scale,
	};
	/* TMA tensors of a row when there are no tokens */
	uint64_t q = s.tokens > 0 ? xw.Q : la->dummy, k = s.tokens > 0 ? xw.K : la->dummy;
	uint64_t v_in = s.tokens > 0 ? dptr(a->v) : la->dummy;
	uint64_t dout = s.tokens > 0 ? dptr(b->dout) : la->dummy;
	uint64_t dv_t = s.tokens > 0 ? dptr(b->dv) : la->dummy;
	uint64_t sh = ws + l->ss, dbh = ws + l->db;
	if (kda) {
		/* beside kda_bwd_recur's few walks (kernels/kda_bwd.tile) */
		if (kda_wy_beside(b, kda)) {
			st = tile_launch_kda_bwd_wy(v->k[LA_K_BWD_WY], &xw, b->stream,
						    TILE_LAUNCH_EARLY_START);
			if (st != TILE_OK)
				return fail(la, st, "kda_bwd_wy launch: %s", tile_rt_error(la->rt));
		}
		tile_args_kda_bwd_chunk x2 = {
			.Cu = cu, .Qt = q, .Kt = k, .Vt = v_in, .DOt = dout,
			.AH = xw.AH, .AQH = xw.AQH, .SH = sh, .DBH = dbh, .PG = xw.PG, .PGt = xw.PG,
			.PGl = xw.PG, .NRW = xw.NRW,
			.PA = ws + l->pa, .PAQ = ws + l->paq, .DV = or_else(b->dv, ws), .DVt = dv_t,
			.DQW = ws + l->dqw, .DKW = ws + l->dkw, .DGW = ws + l->dgw, .DBW = ws + l->dbw,
			.TT = tt, .H = a->num_heads, .HV = a->num_v_heads, .NCU = ncu,
			.NSLOT = slots, .nseq = nseq, .seqlen = seqlen, .has_cu = xw.has_cu,
			.scale = scale,
		};
		st = tile_launch_kda_bwd_chunk(v->k[LA_K_BWD_CHUNK], &x2, b->stream, 0);
		if (st != TILE_OK)
			return fail(la, st, "kda_bwd_chunk launch: %s", tile_rt_error(la->rt));
		tile_args_kda_bwd_intra xi = {
			.Q = q, .K = k, .ALog = alog, .Cu = cu, .PQ = x2.PAQ, .PL = x2.PA, .PW = CHUNK,
			.PG = xw.PG, .NRW = xw.NRW,
			.DQW = x2.DQW, .DKW = x2.DKW, .DGW = x2.DGW,
			.DG = or_else(b->dg, ws), .DG16 = or_else(b->dg, ws), .DBW = x2.DBW,
			.DAL = ws + l->dal, .DDT = ws + l->ddt,
			.TT = tt, .H = a->num_heads, .HV = a->num_v_heads, .GC = gc, .NCU = ncu,
			.NSLOT = slots, .nseq = nseq, .seqlen = seqlen, .has_cu = xw.has_cu,
			.gate_mode = gate_mode, .has_alog = xw.has_alog, .has_bias = has_bias,
			.g16 = g16, .lower_bound = lower_bound, .scale = scale,
		};
		st = tile_launch_kda_bwd_intra(v->k[LA_K_BWD_INTRA], &xi, b->stream, 0);
		if (st != TILE_OK)
			return fail(la, st, "kda_bwd_intra launch: %s", tile_rt_error(la->rt));
	} else {
		/* GDN's gate is the same on every channel: gdn_kkt_lo left kda_bwd_wy's outputs (A
		 * and AQK in two terms, the row vectors), and one kernel forms every gradient of a
		 * chunk (kernels/gdn_bwd_chunk.tile) */
		const la_gdn_layout *g = &l->gprep;
		uint64_t dq = dptr(b->dq), dk = dptr(b->dk);   /* required (bwd_check) */
		tile_args_gdn_bwd_chunk xg = {
			.Cu = cu, .Qt = q, .Kt = k, .Vt = v_in, .DOt = dout,
			.AH = xw.AH, .AQH = xw.AQH, .SH = sh, .DBH = dbh,
			.Gm = sb + g->gam, .Bt = sb + g->bet, .RQ = sb + g->rq, .RK = sb + g->rk,
			.G = xw.G, .G16 = xw.G16, .ALog = alog, .DtBias = bias,
			.DV = or_else(b->dv, ws), .DVt = dv_t, .DQW = ws + l->dqw, .DKW = ws + l->dkw,
			.DQ = dq, .DK = dk, .DQt = s.tokens > 0 ? dq : la->dummy,
			.DKt = s.tokens > 0 ? dk : la->dummy,
			.DGP = ws + l->dgp, .DBW = ws + l->dbw, .DAL = ws + l->dal, .DDT = ws + l->ddt,
			.TT = tt, .TP = ts, .H = a->num_heads, .HV = a->num_v_heads, .GC = gc,
			.NCU = ncu, .NSLOT = slots, .nseq = nseq, .seqlen = seqlen, .has_cu = xw.has_cu,
			.scale = scale, .gate_mode = gate_mode, .has_alog = xw.has_alog,
			.has_bias = has_bias, .g16 = g16, .lower_bound = lower_bound,
			.l2norm = xw.l2norm,
		};
		st = tile_launch_gdn_bwd_chunk(v->k[gdn_dqk_final(a) ? LA_K_GDN_BWD_CHUNK_DQK :
							       LA_K_GDN_BWD_CHUNK],
					       &xg, b->stream, 0);
		if (st != TILE_OK)
			return fail(la, st, "gdn_bwd_chunk launch: %s", tile_rt_error(la->rt));
	}
	tile_args_kda_bwd_finish x3 = {
		.Q = xw.Q, .K = xw.K, .Beta = xw.Beta, .Beta16 = xw.Beta16, .DQW = ws + l->dqw,
		.DKW = ws + l->dkw, .DBW = ws + l->dbw, .DGP = ws + l->dgp, .DAL = ws + l->dal,
		.DDT = ws + l->ddt,
		.DQ = or_else(b->dq, ws), .DK = or_else(b->dk, ws),
		.DBeta = or_else(b->dbeta, ws), .DBeta16 = or_else(b->dbeta, ws),
		.DG = or_else(b->dg, ws), .DG16 = or_else(b->dg, ws),
		.DALog = or_else(b->dA_log, ws), .DDtBias = or_else(b->ddt_bias, ws),
		.TT = tt, .H = a->num_heads, .HV = a->num_v_heads, .GC = gc, .NSLOT = slots,
		.NTB = (int32_t)la_cdiv(s.tokens, 16), .l2norm = xw.l2norm,
		.beta_sigmoid = xw.beta_sigmoid, .beta16 = beta16, .beta_mult = beta_mult,
		.g16 = g16, .dqk_done = !kda && gdn_dqk_final(a),
		.want_dalog = b->dA_log != NULL, .want_ddt = b->ddt_bias != NULL,
	};
	st = tile_launch_kda_bwd_finish(v->k[LA_K_BWD_FINISH], &x3, b->stream, 0);
	if (st != TILE_OK)
		return fail(la, st, "kda_bwd_finish launch: %s", tile_rt_error(la->rt));
	return TILE_OK;
}

static tile_status backward(tile_la *la, const tile_la_bwd_args *b, int kda)
{
	if (!la)
		return TILE_ERR_ARG;
	la->error[0] = '\0';
	bwd_layout l;
	tile_status st = bwd_shapes(sink_of(la), b, kda, la, &l);
	if (st == TILE_OK)
		st = bwd_pointers(sink_of(la), b, kda, l.total);
	if (st != TILE_OK)
		return st;
	/* every launch on the call's stream: the launches shared with the forward (chunk_prep)
	 * read fwd.stream, which is the forward call's */
	tile_la_bwd_args on_stream = *b;
	on_stream.fwd.stream = b->stream;
	return bwd_launch(la, &on_stream, &l, kda);
}

tile_status tile_la_kda_bwd(tile_la *la, const tile_la_bwd_args *b)
{
	return backward(la, b, 1);
}

tile_status tile_la_gdn_bwd(tile_la *la, const tile_la_bwd_args *b)
{
	return backward(la, b, 0);
}
