/*
 * la.c: the C API of the prebuilt GDN/KDA forward kernels (include/tile_la.h).
 *
 * GDN is two launches on the caller's stream:
 *   gdn_kkt     (slots x H CTAs)       per chunk and value head: gates, cumsum, beta, the
 *                                      l2norm's norms and the gated WY inverse A, to the
 *                                      workspace (64 values per token and head, plus Gamma,
 *                                      beta and the norms per chunk slot)
 *   gdn_fused   (N x HV x D/64 CTAs)   per chunk: Q K^T, and the state update with the output
 *   With few sequences x heads (and the in-kernel l2norm) gdn_fused runs context-parallel
 *   instead: once over sequence segments (each started by a warmup over the chunks before
 *   it, see gdn_fused.tile), then once more over sequences, where only those with a
 *   segment whose warmup failed its bound run again (sequentially).
 * KDA is two (more with context parallelism):
 *   chunk_prep  (slots x HV CTAs)      gates + cumsum, the l2norm's norms, beta, the gated
 *                                      K K^T / Q K^T, the WY inverse; writes W, U, QG, KG,
 *                                      AQK, DEC and the state maps' bounds to the workspace
 *   chunk_recur (N x HV x D/64 CTAs)   the state recurrence and the output; for whole
 *                                      sequences without chunk states chunk_recur_t, the
 *                                      same with the state transposed (S^T in one
 *                                      warpgroup's registers, gdn_fused's layout), or
 *                                      chunk_recur_w (N x HV CTAs, D = 128: both value
 *                                      slices of a head in one CTA) on grids of more than
 *                                      one wave and over long enough segments
 *   With context parallelism chunk_recur runs over segments with warmups as gdn_fused does,
 *   beside them (with the lower-bound gate chunk_map_t, launched with early start, two CTAs
 *   per SM; otherwise map CTAs in chunk_recur's own grid) the transfer maps
 *   of the segments before one whose warmup fails its bound (gates that barely decay), then
 *   runs those segments, each chaining its start from the maps (chunk_recur's mode 3). With
 *   the lower-bound gate (warmups expected to fail) and without chunk states, every segment
 *   after the first is chained instead: chunk_recur_t runs the first segments, chunk_map_t
 *   the maps beside it, chunk_chain_t chains the starts once per sequence, head and value
 *   slice, and chunk_recur_t runs the later segments: see launch_recur, chunk_recur.tile,
 *   chunk_map_t.tile, chunk_chain_t.tile and chunk_recur_t.tile.
 *   Where chunk_recur_t's whole sequences would leave half of the SMs idle, the split in time
 *   (launch_split): chunk_prep and chunk_recur_t each over the first part of every sequence,
 *   then over the rest, the second chunk_prep beside the first chunk_recur_t.
 * Every argument is validated before the first launch; nothing is written on a bad one.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "la_segments.h"
#include "tile_la.h"
#include "tile_la_kernels.h"

enum { CHUNK = LA_CHUNK, WS_ALIGN = 256, NVARIANTS = 4 };

/* The most sequences (batch, or num_seqs with cu_seqlens): 64 rows per chunk slot, one
 * slot per sequence at least, must stay countable in 32 bits. */
enum { LA_MAX_SEQS = INT32_MAX / LA_CHUNK };

/* No host mapping lies in the first page (Linux's mmap_min_addr is at least 4096): a
 * cu_seqlens_host below it is a NULL-based pointer, refused rather than read. */
#define LA_HOST_MIN_ADDR ((uintptr_t)4096)

/* The kernels of one variant (dtype, head dim), by module stem: module "<stem>_<dtype>_d<D>"
 * holds kernel "<stem>" (chunk_prep_nocb: chunk_prep built with CB_OUT = 0). This order is the
 * load order (chunk_prep first: see load_all). */
enum {
	K_PREP,
	K_PREP_NOCB,
	K_RECUR,
	K_FUSED,
	K_KKT,
	K_RECUR_T,
	K_RECUR_W,
	K_MAP_T,
	K_CHAIN_T,
	NKERNELS
};
static const char *const kernel_stems[NKERNELS] = {
	"chunk_prep",	 "chunk_prep_nocb", "chunk_recur",   "gdn_fused",    "gdn_kkt",
	"chunk_recur_t", "chunk_recur_w",   "chunk_map_t", "chunk_chain_t"};

static const char *kernel_name(int k)
{
	return k == K_PREP_NOCB ? "chunk_prep" : kernel_stems[k];
}

/* chunk_recur_w holds both 64-wide value slices of a head in one CTA, chunk_prep_nocb fuses
 * the gate's activation with one thread per channel: built at D = 128 only */
static int kernel_built(int k, int d)
{
	return (k != K_RECUR_W && k != K_PREP_NOCB) || d == 128;
}

typedef struct variant {
	tile_module *mod[NKERNELS];
	tile_kernel *k[NKERNELS];
} variant;

struct tile_la {
	tile_rt *rt;
	int owns_rt;
	uint64_t dummy; /* 256 device bytes: the tensor maps' address when there are no tokens */
	int sm_count;   /* the device's SMs: context parallelism fills them */
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

/* Modules load kernel by kernel (each kernel's four variants together), chunk_prep's first,
 * so that where a kernel's code lands in the device's code memory does not move when another
 * kernel's code changes size. chunk_prep (~100 KB of code, paced by instruction fetch:
 * docs/performance.md) measured up to 5% apart between load orders with the
 * same cubins (H200: 8/8 8192x4 0.319 ms loaded this way, 0.331-0.356 with the
 * variants loaded one after another); GDN's kernels within 0.5% either way. */
static tile_status load_all(tile_la *la)
{
	static const char *const dts[2] = {"bf16", "f16"};
	static const int ds[2] = {64, 128};
	for (int k = 0; k < NKERNELS; k++)
		for (int t = 0; t < 2; t++)
			for (int j = 0; j < 2; j++) {
				variant *v = &la->v[t * 2 + j];
				if (!kernel_built(k, ds[j]))
					continue;
				char name[64];
				snprintf(name, sizeof name, "%s_%s_d%d", kernel_stems[k], dts[t], ds[j]);
				tile_status st = load_kernel(la, name, kernel_name(k), &v->mod[k],
							     &v->k[k]);
				if (st != TILE_OK)
					return st;
			}
	tile_device_info info;
	tile_status st = tile_rt_device_info(la->rt, &info);
	if (st != TILE_OK)
		return fail(la, st, "device info: %s", tile_rt_error(la->rt));
	la->sm_count = info.sm_count > 0 ? info.sm_count : 1;
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
		for (int k = 0; k < NKERNELS; k++)
			tile_module_destroy(la->v[i].mod[k]);
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

/* ---- sizes ---------------------------------------------------------------------------- */

typedef struct shapes {
	int64_t tokens;   /* TT = B * T */
	int64_t nseq;     /* N */
	int64_t slots;    /* cdiv(TT, 64) + N: see kernels/common/seq.tile */
	size_t es;        /* bytes per element of dtype */
} shapes;

static int64_t cdiv64(int64_t a, int64_t b)
{
	return (a + b - 1) / b;
}

static shapes shapes_of(const tile_la_fwd_args *a)
{
	shapes s;
	s.tokens = (int64_t)a->batch * a->seq_len;
	s.nseq = a->cu_seqlens ? a->num_seqs : a->batch;
	s.slots = cdiv64(s.tokens, CHUNK) + s.nseq;
	s.es = 2;
	return s;
}

static size_t align_up(size_t x)
{
	return (x + WS_ALIGN - 1) / WS_ALIGN * WS_ALIGN;
}

/* Whether the segment rule must treat the batch as sequences of unknown, possibly unequal
 * lengths: cu_seqlens with several sequences and no host copy, or a host copy whose lengths
 * differ. (Only scheduling depends on it.) */
static int unequal_lengths(const tile_la_fwd_args *a)
{
	if (!a->cu_seqlens || a->num_seqs <= 1)
		return 0;
	if (!a->cu_seqlens_host)
		return 1;
	const int32_t *cu = a->cu_seqlens_host;
	int64_t len0 = (int64_t)cu[1] - cu[0]; /* (64 bits: any values, no overflow) */
	for (int n = 1; n < a->num_seqs; n++)
		if ((int64_t)cu[n + 1] - cu[n] != len0)
			return 1;
	return 0;
}

/* The chunks of each sequence when they are known on the host and one count for all (no
 * cu_seqlens, a host copy of equal lengths, or one sequence: at most cdiv(T, 64)), else 0.
 * A host copy whose sequences do not fit the tokens is not believed (0). */
static int64_t equal_seq_chunks(const tile_la_fwd_args *a, const shapes *s)
{
	if (unequal_lengths(a) || s->nseq <= 0 || s->tokens <= 0)
		return 0;
	if (!a->cu_seqlens)
		return cdiv64(a->seq_len, CHUNK);
	if (!a->cu_seqlens_host)
		return cdiv64(s->tokens, CHUNK); /* one sequence of unknown length */
	int64_t len = (int64_t)a->cu_seqlens_host[1] - a->cu_seqlens_host[0];
	if (len < 0 || len * s->nseq > s->tokens)
		return 0;
	return cdiv64(len, CHUNK);
}

/* The row count of per-chunk-slot outputs (gdn_kkt's Gamma, beta and norms; chunk_prep's W,
 * U, QG, KG): 64 rows per chunk slot, so that each chunk's rows are its own (stored and
 * loaded as whole TMA boxes) and f32 boxes start 16-byte aligned (a box at an unaligned
 * inner coordinate is an illegal instruction). */
static int32_t slot_row_len(const shapes *s)
{
	return (int32_t)(s->slots * CHUNK); /* slots <= INT32_MAX / 64: see check_shapes */
}

/* The KDA workspace: W, U, QG, KG [slot_row_len, HV, D] (chunk_prep stores whole TMA boxes;
 * a chunk's rows past its sequence are its own) and AQK [TT, HV, 64] in dtype; DEC [slots,
 * HV, D] f32; per chunk slot the state map's norm bound (f32 [HV, slots]); per transfer slot
 * (la_transfer_slots: none for calls that no GPU would cut into segments) a segment's state
 * B_j (f32 [xbs, HV, D, D]; xbs >= xs also holds the split's segment starts) and its map P_j
 * as hi and lo terms in dtype ([xs D, HV, D] each). Offsets in the order listed. */
typedef struct layout {
	size_t w, u, qg, kg, aqk, dec, cb, xb, xph, xpl, total;
	int64_t xs;  /* transfer slots */
	int64_t xbs; /* slots of XB: the transfer slots, or the split's (la_split_slots) */
} layout;

static layout layout_of(const tile_la_fwd_args *a, const shapes *s)
{
	size_t rows = (size_t)s->tokens * (size_t)a->num_v_heads;
	size_t slot_rows = s->tokens > 0 ? (size_t)slot_row_len(s) * (size_t)a->num_v_heads : 0;
	size_t mat = align_up(slot_rows * (size_t)a->head_dim * s->es);
	layout l;
	l.w = 0;
	l.u = l.w + mat;
	l.qg = l.u + mat;
	l.kg = l.qg + mat;
	l.aqk = l.kg + mat;
	l.dec = l.aqk + align_up(rows * CHUNK * s->es);
	l.cb = l.dec + align_up((size_t)s->slots * (size_t)a->num_v_heads * (size_t)a->head_dim * 4);
	l.xs = la_transfer_slots((int64_t)a->num_v_heads * (a->head_dim / 64), s->tokens, s->nseq,
				 unequal_lengths(a), a->use_qk_l2norm_in_kernel != 0,
				 getenv("TILE_LA_KDA_CP"));
	size_t maps = (size_t)l.xs * (size_t)a->num_v_heads * (size_t)a->head_dim *
		      (size_t)a->head_dim;
	l.xbs = l.xs;
	if (a->head_dim == 128 && !a->chunk_states) {
		int64_t split = la_split_slots((int64_t)a->num_v_heads * 2, s->nseq,
					       equal_seq_chunks(a, s));
		l.xbs = split > l.xbs ? split : l.xbs;
	}
	size_t starts = (size_t)l.xbs * (size_t)a->num_v_heads * (size_t)a->head_dim *
			(size_t)a->head_dim;
	l.xb = l.cb + align_up((size_t)a->num_v_heads * (size_t)s->slots * 4);
	l.xph = l.xb + align_up(starts * 4);
	l.xpl = l.xph + align_up(maps * s->es);
	l.total = l.xpl + align_up(maps * s->es);
	return l;
}

/* The GDN (fused) workspace: the chunks' A [TT, HV, 64] in dtype, then 1/|q| and 1/|k| as f32
 * [H, TP] each, then Gamma and beta as f32 [HV, TP] each (TP = slot_row_len: 64 per chunk
 * slot), then per chunk slot the state map's norm bound (f32 [HV, slots]) and the segment
 * flags of context parallelism (i32 [HV, slots]: segment slots never outnumber chunk
 * slots); none without tokens (only the state is copied then). */
typedef struct gdn_layout {
	size_t a, rq, rk, gam, bet, cb, fl, total;
} gdn_layout;

static gdn_layout gdn_layout_of(const tile_la_fwd_args *a, const shapes *s)
{
	size_t tp = (size_t)slot_row_len(s);
	size_t norms = align_up((size_t)a->num_heads * tp * 4);
	size_t per_head = align_up((size_t)a->num_v_heads * tp * 4);
	size_t per_slot = align_up((size_t)a->num_v_heads * (size_t)s->slots * 4);
	gdn_layout l = {0, 0, 0, 0, 0, 0, 0, 0};
	if (s->tokens == 0)
		return l;
	l.a = 0;
	l.rq = align_up((size_t)s->tokens * (size_t)a->num_v_heads * CHUNK * s->es);
	l.rk = l.rq + norms;
	l.gam = l.rk + norms;
	l.bet = l.gam + per_head;
	l.cb = l.bet + per_head;
	l.fl = l.cb + per_slot;
	l.total = l.fl + per_slot;
	return l;
}

/* The workspace a call needs: GDN the layout just above, KDA the one before. */
static size_t workspace_bytes(const tile_la_fwd_args *a, int kda)
{
	shapes s = shapes_of(a);
	if (!kda)
		return gdn_layout_of(a, &s).total;
	return layout_of(a, &s).total;
}

/* ---- validation --------------------------------------------------------------------- */

static int misaligned(const void *p, uintptr_t n)
{
	return ((uintptr_t)p & (n - 1)) != 0;
}

/* Shapes, dtype and options; pointers are checked separately (the workspace query reads
 * only these). */
static tile_status check_shapes(sink la, const tile_la_fwd_args *a, int kda)
{
	if (!a)
		return report(la, TILE_ERR_ARG, "args: NULL");
	if (a->dtype != TILE_LA_BF16 && a->dtype != TILE_LA_F16)
		return report(la, TILE_ERR_ARG, "dtype: %d is neither TILE_LA_BF16 nor TILE_LA_F16",
			    (int)a->dtype);
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
	shapes s = shapes_of(a);
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

/*
 * No output may share a byte with an input or another output: the kernels read inputs
 * (h0 among them, also in reruns) while other CTAs write outputs, so in place would be wrong
 * under some schedule (GDN with o == v was, on an H200). Extents come from the shapes (each
 * < 2^63 after check_shapes); the workspace counts its first `need` bytes, the only ones used.
 */
static tile_status check_overlaps(sink la, const tile_la_fwd_args *a, int kda, size_t need)
{
	shapes s = shapes_of(a);
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
		{"q", (uintptr_t)a->q, tt * h * d * s.es, 0},
		{"k", (uintptr_t)a->k, tt * h * d * s.es, 0},
		{"v", (uintptr_t)a->v, tt * hv * d * s.es, 0},
		{"g", (uintptr_t)a->g, tt * hv * (kda ? d : 1) * 4, 0},
		{"beta", (uintptr_t)a->beta, tt * hv * 4, 0},
		{"initial_state", (uintptr_t)a->initial_state, n * state * 4, 0},
		{"cu_seqlens", (uintptr_t)a->cu_seqlens,
		 a->cu_seqlens ? ((uint64_t)a->num_seqs + 1) * 4 : 0, 0},
		{"A_log", (uintptr_t)a->A_log, hv * 4, 0},
		{"dt_bias", (uintptr_t)a->dt_bias, hv * (kda ? d : 1) * 4, 0},
	};
	size_t ne = sizeof e / sizeof e[0];
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

static tile_status check_pointers(sink la, const tile_la_fwd_args *a, int kda)
{
	struct { const void *p; const char *name; int required; uintptr_t align; } ptrs[] = {
		{a->q, "q", 1, 16}, {a->k, "k", 1, 16}, {a->v, "v", 1, 16}, {a->o, "o", 1, 16},
		{a->g, "g", 1, kda ? 16 : 4}, {a->beta, "beta", 1, 4},
		{a->initial_state, "initial_state", 0, 4}, {a->final_state, "final_state", 0, 4},
		{a->cu_seqlens, "cu_seqlens", 0, 4}, {a->A_log, "A_log", 0, 4},
		{a->dt_bias, "dt_bias", 0, 4}, {a->chunk_states, "chunk_states", 0, 16},
		{a->workspace, "workspace", 1, WS_ALIGN},
	};
	/* with no tokens there is nothing to read or write in the token tensors; a workspace
	 * of 0 bytes may be NULL (the last entry of ptrs) */
	int tokens = shapes_of(a).tokens > 0;
	size_t need = workspace_bytes(a, kda);
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
	if (a->workspace_size < need)
		return report(la, TILE_ERR_ARG, "workspace_size: %zu bytes (needs %zu)",
			    a->workspace_size, need);
	return check_overlaps(la, a, kda, need);
}

static tile_status check_all(sink out, const tile_la_fwd_args *a, int kda)
{
	tile_status st = check_shapes(out, a, kda);
	return st != TILE_OK ? st : check_pointers(out, a, kda);
}

tile_status tile_la_fwd_check(const tile_la_fwd_args *a, int kda, char *error,
			      size_t error_size)
{
	if (error && error_size)
		error[0] = '\0';
	return check_all((sink){error, error_size}, a, kda);
}

static tile_status workspace(const tile_la_fwd_args *a, size_t *bytes, int kda)
{
	if (!bytes)
		return TILE_ERR_ARG;
	*bytes = 0;
	tile_status st = check_shapes((sink){NULL, 0}, a, kda);
	if (st != TILE_OK)
		return st;
	*bytes = workspace_bytes(a, kda);
	return TILE_OK;
}

tile_status tile_la_gdn_fwd_workspace(const tile_la_fwd_args *a, size_t *bytes)
{
	return workspace(a, bytes, 0);
}

tile_status tile_la_kda_fwd_workspace(const tile_la_fwd_args *a, size_t *bytes)
{
	return workspace(a, bytes, 1);
}

/* ---- launch ----------------------------------------------------------------------------- */

static uint64_t dptr(const void *p)
{
	return (uint64_t)(uintptr_t)p;
}

/* A valid device address for pointer parameters the kernel never reads (their flags are
 * off): the workspace. */
static uint64_t or_unused(const void *p, const tile_la_fwd_args *a)
{
	return p ? dptr(p) : dptr(a->workspace);
}

/* Context parallelism in gdn_fused and chunk_recur (see the top of this file): the segment
 * length in chunks, or 0 for whole sequences; the rule is la_segments.h's. */
static int32_t segment_len_units(const tile_la *la, const tile_la_fwd_args *a, const shapes *s,
				 int kda, int64_t units)
{
	const char *override = getenv(kda ? "TILE_LA_KDA_CP" : "TILE_LA_GDN_CP");
	int varlen = unequal_lengths(a);
	if (kda && a->use_gate_in_kernel && a->use_lower_bound) /* warmups expected to fail */
		return la_segment_len_failing(la->sm_count, units, s->tokens, s->nseq, varlen,
					      a->use_qk_l2norm_in_kernel != 0, override);
	if (varlen && a->cu_seqlens_host && s->nseq <= LA_CP_KNOWN_MAX && s->tokens > 0 &&
	    a->use_qk_l2norm_in_kernel && !(override && override[0])) /* lengths known */
		return la_segment_len_known(la->sm_count, units, a->cu_seqlens_host, s->nseq,
					    s->tokens);
	return la_segment_len(la->sm_count, units, s->tokens, s->nseq, varlen,
			      a->use_qk_l2norm_in_kernel != 0, override);
}

/* units: the recurrence's CTAs per sequence (or segment), a value head's 64-wide slices */
static int32_t segment_len(const tile_la *la, const tile_la_fwd_args *a, const shapes *s, int kda)
{
	return segment_len_units(la, a, s, kda, (int64_t)a->num_v_heads * (a->head_dim / 64));
}

/* The launch flags of the recurrence that follows the chunk-parallel kernel (chunk_prep,
 * gdn_kkt; launched only for T > 0): early start (programmatic stream serialization), the
 * way chunk_map_t and mode 3 follow the grids before them. Every recurrence kernel (and
 * chunk_map_t) runs wait_prerequisite_grids() before it reads what the grid before it
 * wrote, so each ends after the one before it and the stream keeps its order for the
 * next call. chunk_prep and gdn_kkt do not run launch_dependents(): the recurrence then
 * starts at their end, without the launch's gap (KDA 8/8 1x8192 lower-bound gate: 0.209
 * -> 0.202 ms with mode 3 early too); with it at chunk_prep's top, the recurrence's
 * waiting CTAs made chunk_prep's last wave slower (+10 us). Without T
 * the grid before would be the caller's: no flag. */
static unsigned after_chunk_kernel(int64_t tokens)
{
	return tokens > 0 ? TILE_LAUNCH_EARLY_START : 0;
}

/* Segment slots of `seg_len`-chunk segments (0 without segments): cdiv(T, 64 seg_len) + N
 * bounds every sequence's segments, as chunk slots do chunks. */
static int32_t segment_slots(const shapes *s, int32_t seg_len)
{
	if (seg_len <= 0)
		return 0;
	return (int32_t)cdiv64(s->tokens, (int64_t)CHUNK * seg_len) + (int32_t)s->nseq;
}

/* gdn_fused's launches (its last three arguments are mode, seg_len and NX, set here): once
 * over whole sequences (seg_len 0, mode 0); or over segment slots (mode 1),
 * then over sequences again (mode 2), where those with a failed warmup rerun whole. The
 * first with `flags` (TILE_LAUNCH_EARLY_START right after gdn_kkt: see after_chunk_kernel). */
static tile_status launch_sequential(tile_kernel *k, tile_arg *args, int nargs, int32_t seg_len,
				     const shapes *s, unsigned flags, void *stream)
{
	int32_t nseq = (int32_t)s->nseq;
	int32_t segs = segment_slots(s, seg_len);
	args[nargs - 3] = tile_arg_i32(seg_len > 0 ? 1 : 0);
	args[nargs - 2] = tile_arg_i32(seg_len > 0 ? seg_len : 1);
	args[nargs - 1] = tile_arg_i32(seg_len > 0 ? segs : nseq);
	tile_status st = tile_kernel_launch_ex(k, args, nargs, stream, flags);
	if (st == TILE_OK && seg_len > 0) {
		args[nargs - 3] = tile_arg_i32(2);
		args[nargs - 1] = tile_arg_i32(nseq);
		st = tile_kernel_launch(k, args, nargs, stream);
	}
	return st;
}

/* The GDN forward: gdn_kkt (the chunks' inverses into the workspace), then gdn_fused. With no
 * tokens only gdn_fused runs (the final state is the initial one, or 0), over one-row tensor
 * maps it never loads from (on a 256-byte dummy buffer of the handle). */
static tile_status gdn_forward(tile_la *la, const tile_la_fwd_args *a, const variant *v,
			       const shapes *s)
{
	int32_t D = a->head_dim, HV = a->num_v_heads, H = a->num_heads;
	int32_t TT = (int32_t)s->tokens, nseq = (int32_t)s->nseq;
	int32_t rows = TT > 0 ? TT : 1;
	uint64_t q = TT > 0 ? dptr(a->q) : la->dummy, k = TT > 0 ? dptr(a->k) : la->dummy;
	uint64_t vv = TT > 0 ? dptr(a->v) : la->dummy;
	uint64_t unused = la->dummy;
	int32_t ncu = a->cu_seqlens ? a->num_seqs + 1 : 1;
	int32_t seqlen = a->cu_seqlens ? 0 : a->seq_len;
	float scale = a->scale != 0.0f ? a->scale : 1.0f / sqrtf((float)D);
	int32_t gate_mode = a->use_gate_in_kernel ? 1 : 0;
	int32_t has_bias = a->dt_bias != NULL && a->use_gate_in_kernel;
	float beta_mult = a->allow_neg_eigval ? 2.0f : 1.0f;
	gdn_layout gl = gdn_layout_of(a, s);
	uint64_t ws = TT > 0 ? dptr(a->workspace) : 0;
	uint64_t amat = TT > 0 ? ws + gl.a : la->dummy, rq = TT > 0 ? ws + gl.rq : la->dummy;
	uint64_t rk = TT > 0 ? ws + gl.rk : la->dummy, gam = TT > 0 ? ws + gl.gam : la->dummy;
	uint64_t bet = TT > 0 ? ws + gl.bet : la->dummy;
	uint64_t cb = TT > 0 ? ws + gl.cb : la->dummy, fl = TT > 0 ? ws + gl.fl : la->dummy;
	int32_t tp = slot_row_len(s), slots = (int32_t)s->slots;
	int32_t seg_len = segment_len(la, a, s, 0);
	if (TT > 0) {
		tile_arg kkt[] = {
			tile_arg_ptr(q), tile_arg_ptr(k), tile_arg_ptr(dptr(a->g)),
			tile_arg_ptr(dptr(a->beta)),
			tile_arg_ptr(a->A_log ? dptr(a->A_log) : unused),
			tile_arg_ptr(a->dt_bias ? dptr(a->dt_bias) : unused),
			tile_arg_ptr(a->cu_seqlens ? dptr(a->cu_seqlens) : unused), tile_arg_ptr(amat),
			tile_arg_ptr(rq), tile_arg_ptr(rk), tile_arg_ptr(gam), tile_arg_ptr(bet),
			tile_arg_ptr(cb), tile_arg_i32(TT), tile_arg_i32(tp),
			tile_arg_i32(H), tile_arg_i32(HV), tile_arg_i32(ncu),
			tile_arg_i32(slots), tile_arg_i32(nseq), tile_arg_i32(seqlen),
			tile_arg_i32(a->cu_seqlens != NULL), tile_arg_i32(gate_mode), tile_arg_i32(has_bias),
			tile_arg_i32(a->A_log != NULL), tile_arg_i32(a->use_qk_l2norm_in_kernel != 0),
			tile_arg_i32(a->use_beta_sigmoid_in_kernel != 0), tile_arg_f32(beta_mult),
		};
		tile_status st = tile_kernel_launch(v->k[K_KKT], kkt, (int)(sizeof kkt / sizeof kkt[0]),
						    a->stream);
		if (st != TILE_OK)
			return fail(la, st, "gdn_kkt launch: %s", tile_rt_error(la->rt));
	}
	tile_arg args[] = {
		tile_arg_ptr(q), tile_arg_ptr(k), tile_arg_ptr(vv), tile_arg_ptr(amat),
		tile_arg_ptr(gam), tile_arg_ptr(bet), tile_arg_ptr(rq), tile_arg_ptr(rk),
		tile_arg_ptr(cb), tile_arg_ptr(fl),
		tile_arg_ptr(a->initial_state ? dptr(a->initial_state) : unused),
		tile_arg_ptr(a->final_state ? dptr(a->final_state) : unused),
		tile_arg_ptr(a->chunk_states ? dptr(a->chunk_states) : unused),
		tile_arg_ptr(TT > 0 ? dptr(a->o) : unused),
		tile_arg_ptr(TT > 0 ? dptr(a->o) : unused), /* O, and O as a TMA tensor */
		tile_arg_ptr(a->cu_seqlens ? dptr(a->cu_seqlens) : unused),
		tile_arg_i32(rows), tile_arg_i32(tp), tile_arg_i32(H), tile_arg_i32(HV),
		tile_arg_i32(nseq),
		tile_arg_i32(a->chunk_states ? a->num_chunk_states : 1), tile_arg_i32(ncu),
		tile_arg_i32(slots), tile_arg_i32(nseq), tile_arg_i32(seqlen),
		tile_arg_i32(a->cu_seqlens != NULL),
		tile_arg_i32(a->initial_state != NULL), tile_arg_i32(a->final_state != NULL),
		tile_arg_i32(a->chunk_states != NULL), tile_arg_i32(a->state_v_first != 0),
		tile_arg_f32(scale),
		tile_arg_i32(0), tile_arg_i32(0), tile_arg_i32(0), /* mode, seg_len, NX */
	};
	tile_status st = launch_sequential(v->k[K_FUSED], args, (int)(sizeof args / sizeof args[0]),
					   seg_len, s, after_chunk_kernel(TT), a->stream);
	if (st != TILE_OK)
		return fail(la, st, "gdn_fused launch: %s", tile_rt_error(la->rt));
	return TILE_OK;
}

/* One launch of chunk_recur: its last four arguments are mode, seg_len (1 for whole
 * sequences), NX and NZ. */
static tile_status launch_recur_step(tile_kernel *k, tile_arg *args, int nargs, int32_t mode,
				     int32_t seg_len, int32_t nx, int32_t nz, unsigned flags,
				     void *stream)
{
	args[nargs - 4] = tile_arg_i32(mode);
	args[nargs - 3] = tile_arg_i32(seg_len > 0 ? seg_len : 1);
	args[nargs - 2] = tile_arg_i32(nx);
	args[nargs - 1] = tile_arg_i32(nz);
	return tile_kernel_launch_ex(k, args, nargs, stream, flags);
}

/* What launch_recur launches, each kernel with its arguments: chunk_recur (the last four,
 * mode, seg_len, NX and NZ, set per launch); the transfer maps' kernel chunk_map_t (the last
 * three, chained, seg_len and NX, set here), or NULL for chunk_recur's own map CTAs in mode
 * 1's grid; chunk_chain_t (the last two, seg_len and NX) and chunk_recur_t (the last three,
 * part, seg_len and NX), `run` NULL where chunk_recur_t may not run (chunk states). */
typedef struct {
	tile_kernel *recur;
	tile_arg *args;
	int nargs;
	tile_kernel *maps;
	tile_arg *map_args;
	int nmap_args;
	tile_kernel *chain;
	tile_arg *chain_args;
	int nchain_args;
	tile_kernel *run;
	tile_arg *run_args;
	int nrun_args;
} recur_plan;

/* A launch whose last two arguments are seg_len and NX. */
static tile_status launch_segments(tile_kernel *k, tile_arg *args, int nargs, int32_t seg_len,
				   int32_t nx, unsigned flags, void *stream)
{
	args[nargs - 2] = tile_arg_i32(seg_len);
	args[nargs - 1] = tile_arg_i32(nx);
	return tile_kernel_launch_ex(k, args, nargs, stream, flags);
}

/* The chained path, where every segment's warmup is expected to fail (the
 * lower-bound gate): chunk_recur_t over each sequence's first segment (part 1, from h0, its
 * end state S_1 to the workspace), chunk_map_t beside it (the maps of the segments in
 * between: no scan, no warmups), chunk_chain_t (the starts S_k, chained once per sequence,
 * head and value slice with the state transposed, ~2 us a step), chunk_recur_t over the
 * later segments (part 2, from S_k). Against chunk_recur's mode 1 / maps / mode 3
 * at 8/8 1x8192: no grid of 144 CTAs that mostly exit before the maps may start, the
 * chain once instead of in every failed segment's CTA (through shared memory and barriers:
 * ~3 us a step), the segments at chunk_recur_t's ~1.34 us a chunk instead of ~1.9. Each
 * launch but the first with early start; each kernel waits for the one before it. */
static tile_status launch_chained(const recur_plan *p, int32_t seg_len, int32_t segs,
				  int32_t nseq, unsigned flags, void *stream)
{
	p->run_args[p->nrun_args - 3] = tile_arg_i32(1);
	tile_status st = launch_segments(p->run, p->run_args, p->nrun_args, seg_len, nseq, flags,
					 stream);
	p->map_args[p->nmap_args - 3] = tile_arg_i32(1);
	if (st == TILE_OK)
		st = launch_segments(p->maps, p->map_args, p->nmap_args, seg_len, segs,
				     TILE_LAUNCH_EARLY_START, stream);
	if (st == TILE_OK)
		st = launch_segments(p->chain, p->chain_args, p->nchain_args, seg_len, segs,
				     TILE_LAUNCH_EARLY_START, stream);
	p->run_args[p->nrun_args - 3] = tile_arg_i32(2);
	if (st == TILE_OK)
		st = launch_segments(p->run, p->run_args, p->nrun_args, seg_len, segs,
				     TILE_LAUNCH_EARLY_START, stream);
	return st;
}

/* chunk_recur's launches (see the top of chunk_recur.tile): once over whole sequences
 * (seg_len 0, mode 0); or over segment slots with warmups and, beside them, the transfer maps
 * of the segments before a failed one, then the failed segments, each chaining its start from
 * the maps (mode 3); or, without room for the maps (or with TILE_LA_KDA_XFER=0), over
 * segments (mode 1) then the sequences with a failed segment whole (mode 2). CTAs with
 * nothing to do exit at once. chunk_map_t is launched right after mode 1 with
 * TILE_LAUNCH_EARLY_START so that it runs beside its segments (it reads only chunk_prep's
 * outputs); mode 3, also with early start, waits for chunk_map_t's end, which comes after
 * mode 1's. With chunk_recur's own map CTAs (where no failed warmup is expected, or
 * TILE_LA_KDA_MAPT=0; 3 slices per value slice, 1 CTA per SM) mode 3 follows mode 1 without
 * early start. With chunk_map_t and `run` (no chunk states): launch_chained instead. The first
 * launch takes `flags` (after_chunk_kernel). */
/* Whether launch_recur takes the chained path: segments, room for their transfer maps, and
 * both chunk_map_t and chunk_recur_t in the plan. kda_forward asks it too, before chunk_prep
 * (the chained path reads no CB), so the two never disagree. */
static int chained_path(int32_t seg_len, int32_t segs, int64_t xfer_slots, int maps, int run)
{
	return seg_len > 0 && maps && run &&
	       la_use_transfer(segs, xfer_slots, getenv("TILE_LA_KDA_XFER"));
}

static tile_status launch_recur(const recur_plan *p, int32_t seg_len, const shapes *s,
				const layout *l, int32_t nsl, unsigned flags, void *stream)
{
	int32_t nseq = (int32_t)s->nseq;
	int32_t segs = segment_slots(s, seg_len);
	int xfer = seg_len > 0 && la_use_transfer(segs, l->xs, getenv("TILE_LA_KDA_XFER"));
	if (seg_len == 0)
		return launch_recur_step(p->recur, p->args, p->nargs, 0, seg_len, nseq, nsl, flags,
					 stream);
	tile_kernel *maps = xfer ? p->maps : NULL;
	if (chained_path(seg_len, segs, l->xs, p->maps != NULL, p->run != NULL))
		return launch_chained(p, seg_len, segs, nseq, flags, stream);
	tile_status st = launch_recur_step(p->recur, p->args, p->nargs, 1, seg_len, segs,
					   xfer && !maps ? 3 * nsl : nsl, flags, stream);
	if (st == TILE_OK && maps) {
		p->map_args[p->nmap_args - 3] = tile_arg_i32(0);
		st = launch_segments(maps, p->map_args, p->nmap_args, seg_len, segs,
				     TILE_LAUNCH_EARLY_START, stream);
	}
	if (st != TILE_OK)
		return st;
	return launch_recur_step(p->recur, p->args, p->nargs, xfer ? 3 : 2, seg_len,
				 xfer ? segs : nseq, nsl, xfer && maps ? TILE_LAUNCH_EARLY_START : 0,
				 stream);
}

/* The arguments of chunk_recur_t (XB, XS and part but no CB), or with `wide` of chunk_recur_w
 * (CB), into `out` (28 at most); returns their count. seg_len and NX come last: seg_w 0 for
 * whole sequences (launch_chained sets part, seg_len and NX for chunk_recur_t's segments). */
static int transposed_args(tile_arg *out, const tile_la_fwd_args *a, const shapes *s,
			   const layout *l, int wide, int32_t seg_w)
{
	uint64_t ws = dptr(a->workspace);
	int32_t nseq = (int32_t)s->nseq;
	int n = 0;
	out[n++] = tile_arg_ptr(ws + l->w);
	out[n++] = tile_arg_ptr(ws + l->u);
	out[n++] = tile_arg_ptr(ws + l->qg);
	out[n++] = tile_arg_ptr(ws + l->kg);
	out[n++] = tile_arg_ptr(ws + l->aqk);
	out[n++] = tile_arg_ptr(ws + l->dec);
	out[n++] = tile_arg_ptr(wide ? ws + l->cb : ws + l->xb);
	out[n++] = tile_arg_ptr(or_unused(a->initial_state, a));
	out[n++] = tile_arg_ptr(or_unused(a->final_state, a));
	out[n++] = tile_arg_ptr(dptr(a->o));
	out[n++] = tile_arg_ptr(dptr(a->o)); /* O as a TMA tensor */
	out[n++] = tile_arg_ptr(or_unused(a->cu_seqlens, a));
	out[n++] = tile_arg_i32((int32_t)s->tokens);
	out[n++] = tile_arg_i32(slot_row_len(s));
	out[n++] = tile_arg_i32(a->num_v_heads);
	out[n++] = tile_arg_i32((int32_t)s->slots);
	if (!wide)
		out[n++] = tile_arg_i32(l->xbs > 0 ? (int32_t)l->xbs : 1);
	out[n++] = tile_arg_i32(nseq);
	out[n++] = tile_arg_i32(a->cu_seqlens ? a->num_seqs + 1 : 1);
	out[n++] = tile_arg_i32(nseq);
	out[n++] = tile_arg_i32(a->cu_seqlens ? 0 : a->seq_len);
	out[n++] = tile_arg_i32(a->cu_seqlens != NULL);
	out[n++] = tile_arg_i32(a->initial_state != NULL);
	out[n++] = tile_arg_i32(a->final_state != NULL);
	out[n++] = tile_arg_i32(a->state_v_first != 0);
	if (!wide)
		out[n++] = tile_arg_i32(0); /* part: whole sequences */
	out[n++] = tile_arg_i32(seg_w);
	out[n++] = tile_arg_i32(seg_w > 0 ? (int32_t)cdiv64(s->tokens, (int64_t)CHUNK * seg_w) + nseq
					  : nseq);
	return n;
}

/* chunk_prep over chunks c0 .. c0 + nc - 1 of each of `nseq` sequences (nc 0: every chunk
 * slot, NG = slots), its last three arguments; a failed launch is reported. */
static tile_status launch_prep(tile_la *la, tile_kernel *k, tile_arg *prep, int nprep,
			       int32_t c0, int32_t nc, int32_t ng, unsigned flags, void *stream)
{
	prep[nprep - 3] = tile_arg_i32(c0);
	prep[nprep - 2] = tile_arg_i32(nc);
	prep[nprep - 1] = tile_arg_i32(ng);
	tile_status st = tile_kernel_launch_ex(k, prep, nprep, stream, flags);
	if (st != TILE_OK)
		return fail(la, st, "chunk_prep launch: %s", tile_rt_error(la->rt));
	return TILE_OK;
}

/* One of the split's chunk_recur_t launches (part, with segments of `split` chunks, over NX
 * sequences or segment slots, early start); a failed launch is reported. */
static tile_status launch_split_part(tile_la *la, const variant *v, tile_arg *run, int nrun,
				     int32_t part, int32_t split, int32_t nx, void *stream)
{
	run[nrun - 3] = tile_arg_i32(part);
	tile_status st = launch_segments(v->k[K_RECUR_T], run, nrun, split, nx,
					 TILE_LAUNCH_EARLY_START, stream);
	if (st != TILE_OK)
		return fail(la, st, "chunk_recur_t launch: %s", tile_rt_error(la->rt));
	return TILE_OK;
}

/* The split in time (la_split_len): chunk_prep over each sequence's first
 * `split` chunks, chunk_recur_t's part 1 over them (early start; it lets the next grid start
 * at its top), chunk_prep over the other chunks beside it on the SMs it leaves (early start;
 * its first CTA waits for part 1's end before it exits, so that the next grid's wait covers
 * both), chunk_recur_t's part 3 over each sequence's second segment from part 1's end state
 * (early start; it waits for that chunk_prep at its top); `segs` segment slots. */
static tile_status launch_split(tile_la *la, const variant *v, tile_kernel *prep_k,
				tile_arg *prep, int nprep, tile_arg *run, int nrun, int32_t split,
				int64_t chunks, int32_t segs, const shapes *s, void *stream)
{
	int32_t nseq = (int32_t)s->nseq, rest = (int32_t)chunks - split;
	tile_status st = launch_prep(la, prep_k, prep, nprep, 0, split, nseq * split, 0, stream);
	if (st == TILE_OK)
		st = launch_split_part(la, v, run, nrun, 1, split, nseq, stream);
	if (st == TILE_OK)
		st = launch_prep(la, prep_k, prep, nprep, split, rest, nseq * rest,
				 TILE_LAUNCH_EARLY_START, stream);
	if (st == TILE_OK)
		st = launch_split_part(la, v, run, nrun, 3, split, segs, stream);
	return st;
}

/* The KDA forward: chunk_prep (W, U, QG, KG, AQK, DEC and the bounds into the workspace), then
 * chunk_recur (once over sequences; or twice over segments, see launch_recur). With no tokens
 * only chunk_recur runs (the final state is the initial one, or 0), over one-row tensor maps
 * it never loads from. */
static tile_status kda_forward(tile_la *la, const tile_la_fwd_args *a, const variant *v,
			       const shapes *s)
{
	layout l = layout_of(a, s);
	uint64_t ws = dptr(a->workspace);
	int32_t D = a->head_dim, HV = a->num_v_heads, H = a->num_heads;
	int32_t TT = (int32_t)s->tokens, nseq = (int32_t)s->nseq, slots = (int32_t)s->slots;
	int32_t ncu = a->cu_seqlens ? a->num_seqs + 1 : 1;
	int32_t seqlen = a->cu_seqlens ? 0 : a->seq_len;
	int32_t gate_mode = !a->use_gate_in_kernel ? 0 : a->use_lower_bound ? 2 : 1;
	float scale = a->scale != 0.0f ? a->scale : 1.0f / sqrtf((float)D);
	int32_t seg_len = segment_len(la, a, s, 1);
	if (!la_transfer_off(getenv("TILE_LA_KDA_XFER")))
		seg_len = la_fit_transfer(seg_len, s->tokens, s->nseq, l.xs);
	/* transfer maps: one slot's rows at least for the tensor maps (never loaded then) */
	int32_t xs = l.xs > 0 ? (int32_t)l.xs : 1;
	/* rows of W, U, QG, KG: 64 per chunk slot (one row for the tensor maps without tokens,
	 * which nothing loads from) */
	int32_t slot_rows = TT > 0 ? slot_row_len(s) : 1;
	tile_status st;

	tile_arg prep[] = {
		tile_arg_ptr(dptr(a->q)), tile_arg_ptr(dptr(a->k)), tile_arg_ptr(dptr(a->v)),
		tile_arg_ptr(dptr(a->g)), /* as a [TT, HV * D] TMA tensor */
		tile_arg_ptr(dptr(a->beta)),
		tile_arg_ptr(or_unused(a->A_log, a)), tile_arg_ptr(or_unused(a->dt_bias, a)),
		tile_arg_ptr(or_unused(a->cu_seqlens, a)),
		tile_arg_ptr(ws + l.w), tile_arg_ptr(ws + l.u), tile_arg_ptr(ws + l.qg),
		tile_arg_ptr(ws + l.kg), tile_arg_ptr(ws + l.aqk), tile_arg_ptr(ws + l.dec),
		tile_arg_ptr(ws + l.cb),
		tile_arg_i32(TT), tile_arg_i32(slot_rows), tile_arg_i32(H), tile_arg_i32(HV),
		tile_arg_i32(HV * D),
		tile_arg_i32(ncu), tile_arg_i32(slots), tile_arg_i32(nseq), tile_arg_i32(seqlen),
		tile_arg_i32(a->cu_seqlens != NULL), tile_arg_i32(gate_mode),
		tile_arg_i32(a->dt_bias != NULL && a->use_gate_in_kernel),
		tile_arg_i32(a->A_log != NULL), tile_arg_i32(a->use_qk_l2norm_in_kernel != 0),
		tile_arg_i32(a->use_beta_sigmoid_in_kernel != 0),
		tile_arg_f32(a->allow_neg_eigval ? 2.0f : 1.0f),
		tile_arg_f32(a->use_lower_bound ? a->lower_bound : 0.0f), tile_arg_f32(scale),
		tile_arg_i32(0), tile_arg_i32(0), tile_arg_i32(0), /* c0, nc, NG: launch_prep's */
	};
	int nprep = (int)(sizeof prep / sizeof prep[0]);
	/* TMA needs a tensor of at least one row: with no tokens the recurrence still runs
	 * (final_state = initial_state, or 0) over one-row tensor maps it never loads from */
	int32_t recur_rows = TT > 0 ? TT : 1;
	int32_t nhs = a->chunk_states ? a->num_chunk_states : 1;
	tile_arg recur[] = {
		tile_arg_ptr(ws + l.w), tile_arg_ptr(ws + l.u), tile_arg_ptr(ws + l.qg),
		tile_arg_ptr(ws + l.kg), tile_arg_ptr(ws + l.aqk), tile_arg_ptr(ws + l.dec),
		tile_arg_ptr(ws + l.cb), tile_arg_ptr(ws + l.xb),
		tile_arg_ptr(ws + l.xph), tile_arg_ptr(ws + l.xpl), tile_arg_ptr(ws + l.xph),
		tile_arg_ptr(ws + l.xpl), tile_arg_ptr(or_unused(a->initial_state, a)),
		tile_arg_ptr(or_unused(a->final_state, a)),
		tile_arg_ptr(or_unused(a->chunk_states, a)), tile_arg_ptr(dptr(a->o)),
		tile_arg_ptr(TT > 0 ? dptr(a->o) : la->dummy), /* O as a TMA tensor */
		tile_arg_ptr(or_unused(a->cu_seqlens, a)),
		tile_arg_i32(recur_rows), tile_arg_i32(slot_rows), tile_arg_i32(HV),
		tile_arg_i32(slots), tile_arg_i32(xs), tile_arg_i32(xs * D), tile_arg_i32(nseq),
		tile_arg_i32(nhs), tile_arg_i32(ncu), tile_arg_i32(nseq), tile_arg_i32(seqlen),
		tile_arg_i32(a->cu_seqlens != NULL), tile_arg_i32(a->initial_state != NULL),
		tile_arg_i32(a->final_state != NULL), tile_arg_i32(a->chunk_states != NULL),
		tile_arg_i32(a->state_v_first != 0),
		tile_arg_i32(0), tile_arg_i32(0), tile_arg_i32(0), tile_arg_i32(0), /* mode .. NZ */
	};
	/* whole sequences without chunk states: the transposed recurrence (chunk_recur_t.tile;
	 * TILE_LA_KDA_T=0 keeps chunk_recur, for comparisons), both value slices of a head in
	 * one CTA where one per slice would take more than one wave (la_use_wide). With
	 * segments and gates the host does not expect to fail their warmups (not the lower-bound
	 * gate), chunk_recur_w runs the segments where they are long enough
	 * (la_use_wide_segments; a segment length for a CTA per head), without transfer maps:
	 * chunk_recur then reruns any sequence with a failed warmup whole (its mode 2). */
	const char *t_env = getenv("TILE_LA_KDA_T");
	const char *w_env = getenv("TILE_LA_KDA_W");
	int t_allowed = !a->chunk_states && TT > 0 && !(t_env && strcmp(t_env, "0") == 0);
	int transposed = seg_len == 0 && t_allowed;
	int32_t seg_w = 0;
	if (seg_len > 0 && D == 128 && !a->chunk_states && TT > 0 &&
	    !(a->use_gate_in_kernel && a->use_lower_bound)) {
		seg_w = segment_len_units(la, a, s, 1, HV);
		if (!la_use_wide_segments(seg_w, w_env))
			seg_w = 0;
	}
	int kt = K_RECUR;
	if (seg_w > 0)
		kt = K_RECUR_W;
	else if (transposed)
		kt = la_use_wide(la->sm_count, D, nseq, HV, w_env) ? K_RECUR_W : K_RECUR_T;
	/* chunk_recur_t's CTAs leaving half of the SMs idle: the split in time (la_split_len),
	 * where the workspace has its segment starts */
	int64_t chunks = equal_seq_chunks(a, s);
	int32_t split = 0;
	if (kt == K_RECUR_T && D == 128)
		split = la_split_len(la->sm_count, (int64_t)HV * 2, HV, nseq, chunks,
				     getenv("TILE_LA_KDA_SPLIT"));
	int32_t split_segs = segment_slots(s, split);
	int use_split = split > 0 && split_segs <= l.xbs;
	/* chunk_recur_t's chained path (launch_recur's choice; see there) */
	int map_t = la_override01(getenv("TILE_LA_KDA_MAPT"));
	if (map_t < 0)
		map_t = a->use_gate_in_kernel && a->use_lower_bound;
	int32_t segs = segment_slots(s, seg_len);
	int chained = kt == K_RECUR && chained_path(seg_len, segs, l.xs, map_t, t_allowed);
	/* chunk_prep_nocb (no CB, the gate's activation fused) where no warmup reads CB */
	int needs_cb = la_prep_needs_cb(kt == K_RECUR ? seg_len : 0, seg_w, chained, use_split);
	tile_kernel *prep_k = v->k[K_PREP];
	if (la_use_prep_nocb(D, needs_cb, getenv("TILE_LA_KDA_NOCB")))
		prep_k = v->k[K_PREP_NOCB];
	if (use_split) {
		tile_arg rt[28];
		int nrt = transposed_args(rt, a, s, &l, 0, 0);
		return launch_split(la, v, prep_k, prep, nprep, rt, nrt, split, chunks, split_segs,
				    s, a->stream);
	}
	if (TT > 0) {
		st = launch_prep(la, prep_k, prep, nprep, 0, 0, slots, 0, a->stream);
		if (st != TILE_OK)
			return st;
	}
	if (kt == K_RECUR) {
		/* the transfer maps' kernel, chunk_map_t (see launch_recur) */
		tile_arg maps[] = {
			tile_arg_ptr(ws + l.w), tile_arg_ptr(ws + l.u), tile_arg_ptr(ws + l.kg),
			tile_arg_ptr(ws + l.dec), tile_arg_ptr(ws + l.cb), tile_arg_ptr(ws + l.xb),
			tile_arg_ptr(ws + l.xph), tile_arg_ptr(ws + l.xpl),
			tile_arg_ptr(or_unused(a->initial_state, a)),
			tile_arg_ptr(or_unused(a->cu_seqlens, a)),
			tile_arg_i32(recur_rows), tile_arg_i32(slot_rows), tile_arg_i32(HV),
			tile_arg_i32(slots), tile_arg_i32(xs), tile_arg_i32(xs * D), tile_arg_i32(nseq),
			tile_arg_i32(ncu), tile_arg_i32(nseq), tile_arg_i32(seqlen),
			tile_arg_i32(a->cu_seqlens != NULL), tile_arg_i32(a->initial_state != NULL),
			tile_arg_i32(a->state_v_first != 0),
			tile_arg_i32(0), tile_arg_i32(0), tile_arg_i32(0), /* chained .. NX: launch_recur's */
		};
		/* chunk_chain_t, the chained path's segment starts (see launch_chained) */
		tile_arg chain[] = {
			tile_arg_ptr(ws + l.xph), tile_arg_ptr(ws + l.xpl), tile_arg_ptr(ws + l.xb),
			tile_arg_ptr(ws + l.xb), tile_arg_ptr(or_unused(a->cu_seqlens, a)),
			tile_arg_i32(recur_rows), tile_arg_i32(HV), tile_arg_i32(xs),
			tile_arg_i32(xs * D), tile_arg_i32(ncu), tile_arg_i32(nseq), tile_arg_i32(seqlen),
			tile_arg_i32(a->cu_seqlens != NULL),
			tile_arg_i32(0), tile_arg_i32(0), /* seg_len, NX: launch_recur's */
		};
		/* chunk_map_t where the host expects failed warmups (map_t above: the lower-bound
		 * gate, where it was measured); elsewhere the maps are rarely needed and
		 * chunk_recur's own map CTAs, in mode 1's grid, exit at once without a launch of
		 * their own */
		/* the chained path, where chunk_recur_t may run (no chunk states) */
		tile_arg run[28];
		recur_plan plan = {v->k[K_RECUR], recur, (int)(sizeof recur / sizeof recur[0]),
				   map_t ? v->k[K_MAP_T] : NULL, maps, (int)(sizeof maps / sizeof maps[0]),
				   v->k[K_CHAIN_T], chain, (int)(sizeof chain / sizeof chain[0]),
				   t_allowed ? v->k[K_RECUR_T] : NULL, run,
				   transposed_args(run, a, s, &l, 0, 0)};
		st = launch_recur(&plan, seg_len, s, &l, D / 64, after_chunk_kernel(TT), a->stream);
	} else {
		tile_arg rt[28];
		int nrt = transposed_args(rt, a, s, &l, kt == K_RECUR_W, seg_w);
		st = tile_kernel_launch_ex(v->k[kt], rt, nrt, a->stream, after_chunk_kernel(TT));
		if (st == TILE_OK && seg_w > 0) { /* chunk_recur's mode 2: failed warmups rerun */
			kt = K_RECUR;
			st = launch_recur_step(v->k[K_RECUR], recur, (int)(sizeof recur / sizeof recur[0]),
					       2, seg_w, nseq, D / 64, 0, a->stream);
		}
	}
	if (st != TILE_OK)
		return fail(la, st, "%s launch: %s", kernel_stems[kt], tile_rt_error(la->rt));
	return TILE_OK;
}

static tile_status forward(tile_la *la, const tile_la_fwd_args *a, int kda)
{
	if (!la)
		return TILE_ERR_ARG;
	la->error[0] = '\0';
	tile_status st = check_all(sink_of(la), a, kda);
	if (st != TILE_OK)
		return st;
	shapes s = shapes_of(a);
	if (s.tokens == 0 && !a->final_state)
		return TILE_OK;
	const variant *v = &la->v[variant_index(a->dtype, a->head_dim)];
	if (!kda)
		return gdn_forward(la, a, v, &s);
	return kda_forward(la, a, v, &s);
}

tile_status tile_la_gdn_fwd(tile_la *la, const tile_la_fwd_args *a)
{
	return forward(la, a, 0);
}

tile_status tile_la_kda_fwd(tile_la *la, const tile_la_fwd_args *a)
{
	return forward(la, a, 1);
}
