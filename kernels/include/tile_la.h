/*
 * tile_la.h: the prebuilt Gated DeltaNet (GDN) and Kimi Delta Attention (KDA) kernels, chunked
 * prefill forward (and KDA's backward, at the end), for Hopper (sm_90a). Plain C over
 * libtilert; link tilela (or tilela_static) and tilert.
 *
 *   tile_la *la;
 *   if (tile_la_create(0, &la) != TILE_OK) ...            // driver, device, modules
 *   tile_la_fwd_args a = {0};                              // zero, then set what you use
 *   a.batch = 1; a.seq_len = T; a.num_heads = H; a.num_v_heads = HV; a.head_dim = 128;
 *   a.dtype = TILE_LA_BF16; a.q = q; a.k = k; a.v = v; a.g = g; a.beta = beta; a.o = o;
 *   size_t ws; tile_la_kda_fwd_workspace(la, &a, &ws);     // then allocate ws bytes
 *   a.workspace = buf; a.workspace_size = ws; a.stream = stream;
 *   if (tile_la_kda_fwd(la, &a) != TILE_OK) fprintf(stderr, "%s\n", tile_la_error(la));
 *
 * The arguments mirror FLA's chunk_kda / chunk_gated_delta_rule keyword arguments. Every
 * argument is checked before anything is launched; a bad one returns TILE_ERR_ARG, names the
 * argument in tile_la_error() and writes nothing. Nothing runs in place: an output (o,
 * final_state, chunk_states, the workspace's first query-size bytes) that shares any byte with
 * an input (q, k, v, g, beta, initial_state, cu_seqlens, A_log, dt_bias) or with another
 * output is refused with TILE_ERR_ARG naming both, final_state == initial_state included (to
 * update a state, alternate between two buffers); extents follow from the shapes and dtypes
 * below (chunk_states: num_chunk_states chunks). The calls enqueue work on the caller's
 * stream and never synchronise, so they can be captured in a CUDA graph (the workspace
 * belongs to the call until the stream has passed it).
 *
 * Layouts (row-major, last index fastest; B = 1 and T = total tokens with cu_seqlens):
 *   q, k        [B, T, H, D]       dtype          v, o        [B, T, HV, D]   dtype
 *   g  GDN      [B, T, HV]         gate_dtype     g  KDA      [B, T, HV, D]   gate_dtype
 *   beta        [B, T, HV]         beta_dtype     A_log       [HV]            f32
 *   dt_bias     GDN [HV], KDA [HV, D]  f32
 *   initial_state, final_state  [N, HV, D, D] f32 (keys first; values first with
 *                               state_v_first), N = number of sequences
 *   chunk_states [num_chunk_states, HV, D, D] dtype, keys first: the state at the start of
 *               every chunk, sequence-major (FLA's return_intermediate_states)
 * Device pointers of q, k, v, o, chunk_states and (KDA) g must be 16-byte aligned, the
 * workspace 256-byte aligned, the others aligned to their element; with no tokens
 * (batch x seq_len = 0) q, k, v, o, g and beta may be NULL. The workspace sizes differ: KDA
 * needs about 1.2 KB per token and value head (D = 128; part of it is laid out in whole
 * 64-token chunks per sequence, so a batch of many short sequences needs more), GDN about 140
 * bytes, both plus the transfer maps when the call runs context-parallel; a query that returns
 * 0 bytes (GDN with no tokens) allows a NULL workspace. The size depends on the handle (its
 * device's SM count and its options): query it with the handle that runs the call, after
 * setting its options.
 *
 * GDN and KDA with few sequences x value heads run context-parallel: long sequences are cut
 * into segments run side by side, each started from its exact start state, chained from the
 * segments' transfer maps (S_end = P S_start + B), whatever the gates (KDA with chunk states
 * starts a segment from a warmup where the gates bound what it drops to 2^-32 of the state,
 * else from the maps); kernels/README.md says how. The workspace then holds a map per segment
 * and value head (B in f32, P as two dtype terms: 8 D^2 bytes, 128 KB at D = 128). KDA whose
 * whole sequences would leave half of the SMs idle (one length, known on the host) runs each
 * sequence in two parts, the second part's chunk-parallel stage beside the first part's
 * recurrence; the workspace query already counts what it needs (192 KB per sequence and value
 * head, only for calls of at most 64 sequences x value heads). Each call's schedule is a plan
 * computed from its arguments, the device's SM count (read at tile_la_create) and the handle's
 * options (tile_la_options, which force or turn off each rule); tile_la_describe_plan prints
 * it. The library reads no environment variable.
 */
#ifndef TILE_LA_H
#define TILE_LA_H

#include <stddef.h>
#include <stdint.h>

#include "tile.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tile_la tile_la; /* the runtime, one device, and the loaded kernel modules */

typedef enum tile_la_dtype {
	TILE_LA_F32 = 0,  /* g and beta only (never dtype, so a zeroed struct is still caught):
	                     zeroed arguments keep them f32 */
	TILE_LA_BF16 = 1,
	TILE_LA_F16 = 2,
} tile_la_dtype;

typedef struct tile_la_fwd_args {
	/* shapes */
	int batch;          /* B; 1 with cu_seqlens */
	int seq_len;        /* T per sequence (total tokens with cu_seqlens); 0 is allowed */
	int num_heads;      /* H: q and k heads */
	int num_v_heads;    /* HV: v heads, a multiple of H (GVA: value head i reads q/k head
	                       i / (HV / H)) */
	int head_dim;       /* K = V: 64 or 128 */
	tile_la_dtype dtype; /* of q, k, v, o and chunk_states: TILE_LA_BF16 or TILE_LA_F16 */
	/* g's and beta's each: TILE_LA_F32 (0) or dtype. The kernels read them as given (no
	 * conversion pass), so bf16 gates from a model go in as they are */
	tile_la_dtype gate_dtype;
	tile_la_dtype beta_dtype;

	/* tensors (device pointers) */
	const void *q, *k, *v;
	const void *g;      /* log decay (natural log, <= 0), or the raw gate input with
	                       use_gate_in_kernel; gate_dtype */
	const void *beta;   /* beta, or its logits with use_beta_sigmoid_in_kernel; beta_dtype */
	void *o;

	float scale;        /* finite; 0: head_dim^-1/2 */
	const float *initial_state;  /* NULL: zero */
	float *final_state;          /* NULL: not returned (output_final_state = False) */

	/* variable length: cu_seqlens [num_seqs + 1] int32 on the device, non-decreasing,
	 * cu_seqlens[0] = 0, cu_seqlens[num_seqs] = seq_len. Read only on the device (no
	 * synchronisation); offsets outside [0, seq_len] are clamped, never followed. */
	const int32_t *cu_seqlens;
	int num_seqs;
	/* optional: the same num_seqs + 1 offsets in host memory (FLA's cu_seqlens_cpu). Used
	 * only to schedule (whether long sequences are cut into segments) and to size the KDA
	 * workspace, never to address device memory: values that differ from cu_seqlens cost
	 * speed, not correctness (the call checks workspace_size against what they need). NULL: the
	 * library assumes nothing about the lengths. With cu_seqlens given, all num_seqs + 1
	 * values are read on the calling thread by the workspace queries, tile_la_fwd_check and
	 * both forwards; it must be 4-byte aligned and not in the first 4 KB (checked first). */
	const int32_t *cu_seqlens_host;

	/* options, as FLA's keyword arguments */
	int use_qk_l2norm_in_kernel;     /* q, k / sqrt(sum x^2 + 1e-6), rounded to dtype */
	int use_beta_sigmoid_in_kernel;  /* beta = sigmoid(beta) */
	int allow_neg_eigval;            /* beta = 2 sigmoid(beta); needs the above */
	int use_gate_in_kernel;          /* g is raw: GDN and KDA -exp(A_log) softplus(g + dt_bias);
	                                    KDA with use_lower_bound: lower_bound *
	                                    sigmoid(exp(A_log) (g + dt_bias)) */
	const float *A_log;              /* [HV]; required by the softplus form; optional with
	                                    the lower bound (then exp(A_log) is taken as 1) */
	const float *dt_bias;            /* optional */
	int use_lower_bound;             /* KDA only: lower_bound is not None */
	float lower_bound;               /* finite and < 0 */
	int state_v_first;               /* initial/final states stored [V, K] */
	int save_for_backward;           /* the workspace is kept for a backward given it as
					    fwd_workspace (disable_recompute). GDN: it also keeps
					    what the backward would recompute (gdn_kkt's A and AQK
					    in two terms and W; the workspace grows). KDA's always
					    holds its products; with an initial state (and no
					    saved_setup) it also keeps QG's lo term, so that the
					    backward's dh0 takes QG in two terms (the workspace
					    grows by QG's size; at D = 128 with chunk_states the
					    forward runs whole sequences) */
	/* KDA: NULL, or tile_la_kda_saved_setup_size() bytes, 256-byte aligned, where the
	 * forward also leaves each chunk's A = (I + L)^-1 and AQK in two 16-bit terms: 32 KB per
	 * chunk slot (ceil(T / 64) + N) and value head, 512 bytes per token and value head for
	 * long sequences (FLA's forward keeps its Akk and Aqk and g's cumsum, 776 at D = 128).
	 * Every byte is written (slots of no chunk: zeros). A backward given the same arguments
	 * forms the rest of its setup from them instead of recomputing every chunk's gated
	 * products and inverse. With chunk_states at D = 128 the forward then runs whole
	 * sequences (no warmup segments). GDN: must be NULL. */
	void *saved_setup;
	size_t saved_setup_size;

	void *chunk_states;              /* NULL, or the per-chunk states (see above) */
	int num_chunk_states;            /* its capacity in chunks; states of chunks past it are
	                                    not written. sum over sequences of ceil(len / 64)
	                                    (<= ceil(T / 64) + N) fills it exactly */

	void *workspace;                 /* tile_la_*_fwd_workspace() bytes, 256-byte aligned */
	size_t workspace_size;
	void *stream;                    /* a CUstream; NULL: the default stream */
} tile_la_fwd_args;

/* Options of a handle: how its forward calls schedule their kernels. Every field's zero,
 * TILE_LA_AUTO, is the library's rule and the default; the others are for tests, comparisons
 * and tuning, and never change results beyond rounding. Counts take TILE_LA_AUTO, TILE_LA_OFF
 * or n > 0 (forces n); switches take TILE_LA_AUTO, TILE_LA_ON or TILE_LA_OFF. */
enum { TILE_LA_AUTO = 0, TILE_LA_ON = 1, TILE_LA_OFF = -1 };

typedef struct tile_la_options {
	int gdn_segments;      /* GDN context parallelism (count), the forward's and the
	                          backward's walks: OFF runs whole sequences, n segments of n
	                          chunks (whole sequences when n is not below the batch's
	                          chunks) */
	int kda_segments;      /* the same for KDA (with chunk states segments need the
	                          in-kernel l2norm: their warmups' bound assumes |k| <= 1) */
	int kda_split;         /* KDA's split in time (count): OFF never, n puts n chunks in the
	                          first part where the rule allows a split and n is in
	                          [ceil(chunks / 2), chunks) */
	int kda_transposed;    /* KDA whole sequences without chunk states on chunk_recur_t (AUTO,
	                          ON); OFF keeps chunk_recur */
	int kda_wide;          /* whole sequences on chunk_recur_w (both value slices of a head in
	                          one CTA, D = 128) where ON; AUTO and OFF take chunk_recur_t
	                          (as fast or faster on every grid measured) */
	int kda_map_kernel;    /* segments with warmups (chunk states, or kda_transposed OFF):
	                          the transfer maps by chunk_map_t (ON) or by chunk_recur's own
	                          CTAs (OFF); AUTO: chunk_map_t with the lower-bound gate */
	int kda_prep_nocb;     /* chunk_prep without the state maps' bounds where nothing reads
	                          them (AUTO, ON; D = 128); OFF always writes them */
	int bwd_wide;          /* the backward: whole state walks with both value slices of a
	                          head in one CTA (D = 128): AUTO where the rule takes it, ON or
	                          OFF forces the choice */
	int exact_state;       /* ON: the forward recurrences take the state-dependent operands of
	                          their products in two terms (bf16 or fp16 hi + lo, ~16 bits),
	                          so that segments and whole sequences agree to ~1e-5 of the
	                          final state even on heads that never forget (one term: ~3e-3,
	                          FLA's rounding); it costs GDN's forward ~30-45% and KDA's
	                          ~2-9% (H200). AUTO is OFF (one term) */
	int first_segment;     /* the chained path's first segment (count; both ops): AUTO
	                          lengthens it where it runs beside the other segments' transfer
	                          maps (sequences of one length, the segment rule's own length),
	                          OFF keeps it as long as the others, n forces max(n, their
	                          length) chunks */
	int gdn_kkt_two_ctas;  /* GDN's chunk-parallel kernel at two CTAs per SM (gdn_kkt2, up to
	                          255 registers) instead of three (gdn_kkt, 168): AUTO on grids
	                          of at most three waves of two, ON or OFF forces the choice */
} tile_la_options;

TILE_API tile_status tile_la_create(int device, tile_la **out);
/* Uses a runtime the caller created (and keeps owning); the modules are loaded into it. */
TILE_API tile_status tile_la_create_with(tile_rt *rt, tile_la **out);
TILE_API void tile_la_destroy(tile_la *la); /* NULL is fine */
/* The last failure of a call on la: the bad argument and why, or the runtime's error; ""
 * before any. With la NULL: why the calling thread's last tile_la_create or
 * tile_la_create_with failed ("" when it succeeded, or before any); per thread, valid until
 * the thread's next create. */
TILE_API const char *tile_la_error(const tile_la *la);

/* The handle's options (all TILE_LA_AUTO after create). Set: a value outside its field's range
 * is refused with TILE_ERR_ARG naming the field, and nothing changes. They apply to the calls
 * that follow, the workspace queries included. */
TILE_API tile_status tile_la_set_options(tile_la *la, const tile_la_options *opt);
TILE_API tile_status tile_la_get_options(const tile_la *la, tile_la_options *out);

/* Workspace bytes for these arguments on this handle (its device and options). Read: the
 * shapes, dtypes and options, whether cu_seqlens, chunk_states and saved_setup are NULL, and
 * cu_seqlens_host's values (see there); no device memory and no other pointer's target.
 * batch (or num_seqs with cu_seqlens) is at most 2^31 / 64 - 1. A bad argument is named in
 * tile_la_error(la). */
TILE_API tile_status tile_la_gdn_fwd_workspace(tile_la *la, const tile_la_fwd_args *a,
					       size_t *bytes);
TILE_API tile_status tile_la_kda_fwd_workspace(tile_la *la, const tile_la_fwd_args *a,
					       size_t *bytes);
/* Bytes of a KDA forward's saved_setup for these shapes (0 without tokens); reads the shapes
 * (and cu_seqlens' NULL-ness and num_seqs) only. */
TILE_API tile_status tile_la_kda_saved_setup_size(const tile_la_fwd_args *a, size_t *bytes);

/* The plan the call would run on this handle, as text (kda selects KDA): its decisions on one
 * line (segment length, recurrence kernel, split, transfer maps, workspace bytes), then one
 * line per launch (kernel, its mode, segment length and NX, CTAs, early start). Checks the
 * shapes as the workspace query does, launches nothing; the text is cut to fit `size` bytes
 * (NUL-terminated). Benchmarks log it. */
TILE_API tile_status tile_la_describe_plan(tile_la *la, const tile_la_fwd_args *a, int kda,
					   char *buf, size_t size);

/* o (and final_state, chunk_states when given) for GDN (scalar gate per token and v head)
 * and KDA (a gate per key channel). Exact for any gate magnitude: no exponent above 0 is
 * ever formed. */
TILE_API tile_status tile_la_gdn_fwd(tile_la *la, const tile_la_fwd_args *a);
TILE_API tile_status tile_la_kda_fwd(tile_la *la, const tile_la_fwd_args *a);

/* The same checks without a device or a launch (the argument validation alone, for tests
 * and bindings): kda selects KDA's rules; the message naming a bad argument goes to
 * error (error_size bytes, NUL-terminated) when error is not NULL. Without a handle the
 * workspace is checked against the least any device needs (the transfer maps of context
 * parallelism depend on the handle's device and options: the forward calls check those). */
TILE_API tile_status tile_la_fwd_check(const tile_la_fwd_args *a, int kda, char *error,
				       size_t error_size);

/* ---- the backward (KDA and GDN) ----------------------------------------------------------
 *
 * The gradients of L(o, final_state) for chunk_kda or chunk_gated_delta_rule, from dL/do and
 * dL/dfinal_state, with every option of the forward (fwd: its shapes, inputs and options, as
 * the forward call that produced o took them; its outputs, chunk_states and workspace are not
 * read; KDA's saved_setup is: what that forward left there). The chunk states are
 * recomputed. Layouts are the forward's: dq, dk as q, k; dv and dout as v; dg as g
 * (gate_dtype: the gradient with respect to g as given, the raw gate with
 * use_gate_in_kernel); dbeta as beta (beta_dtype; with respect to the logits with
 * use_beta_sigmoid_in_kernel); dht, dh0 as the states (f32, state_v_first's layout); dA_log
 * [HV] and ddt_bias (KDA [HV, D], GDN [HV]) f32. Results are deterministic: every sum runs in a
 * fixed order (no atomics).
 *
 * kernels/README.md "KDA backward" says how it runs; GDN's runs KDA's kernels in builds
 * for its one gate per token. The workspace holds every chunk's start state and end-state
 * gradient (2 x 4 D^2 bytes per chunk slot and value head, as 16-bit hi + lo terms), the
 * forward's chunk-parallel outputs and three f32 copies of the per-token gradients (GDN:
 * two). With few sequences x value heads the state walks run over segments, chained from
 * transfer maps as the forward's (exact for any gate); the workspace then also holds 16 D^2
 * bytes per segment slot and value head, and its size depends on the handle's device and
 * options as the forward's does.
 */
typedef struct tile_la_bwd_args {
	tile_la_fwd_args fwd;      /* the forward's arguments (outputs, workspace, stream ignored;
	                              saved_setup read) */
	const void *dout;          /* dL/do [B, T, HV, D], dtype; required with tokens */
	const float *dht;          /* dL/dfinal_state; NULL: 0 */
	/* gradients, written by the call: dq, dk, dv, dg and dbeta are required with tokens */
	void *dq, *dk, *dv;        /* dtype */
	void *dg;                  /* gate_dtype */
	void *dbeta;               /* beta_dtype */
	float *dh0;                /* NULL: not written (written also without initial_state) */
	float *dA_log;             /* NULL, or with use_gate_in_kernel and A_log */
	float *ddt_bias;           /* NULL, or with use_gate_in_kernel and dt_bias */
	void *workspace;           /* tile_la_{kda,gdn}_bwd_workspace() bytes, 256-aligned */
	size_t workspace_size;
	void *stream;              /* a CUstream; NULL: the default stream */
	/* FLA's disable_recompute: the workspace of the forward call made with these same
	 * arguments, as that call left it (a call with save_for_backward; KDA's without it still
	 * keeps its products, but not QG's lo term).
	 * The backward reads the forward's chunk-parallel products there (KDA: W, U, QG, KG, AQK,
	 * the chunk decays, QG's lo term where kept; GDN: gdn_kkt's A, AQK, row scales, Gamma, beta and its two-term A and
	 * AQK and W) instead of recomputing them, and its own workspace is smaller by them. NULL:
	 * recomputed. */
	const void *fwd_workspace;
	size_t fwd_workspace_size;
} tile_la_bwd_args;

/* Workspace bytes of a backward call (reads the shapes, the handle's device and options and
 * whether fwd_workspace is given). */
TILE_API tile_status tile_la_kda_bwd_workspace(tile_la *la, const tile_la_bwd_args *b,
					       size_t *bytes);
/* Every argument is checked before the first launch (aliasing included: no gradient may share
 * memory with an input or another output); a bad one is named in tile_la_error(la). */
TILE_API tile_status tile_la_kda_bwd(tile_la *la, const tile_la_bwd_args *b);
/* The same checks without a device or a launch (the workspace against the least any device
 * needs: whole walks). */
TILE_API tile_status tile_la_kda_bwd_check(const tile_la_bwd_args *b, char *error,
					   size_t error_size);

/* The same three for chunk_gated_delta_rule (g [B, T, HV], dt_bias and ddt_bias [HV]). */
TILE_API tile_status tile_la_gdn_bwd_workspace(tile_la *la, const tile_la_bwd_args *b,
					       size_t *bytes);
TILE_API tile_status tile_la_gdn_bwd(tile_la *la, const tile_la_bwd_args *b);
TILE_API tile_status tile_la_gdn_bwd_check(const tile_la_bwd_args *b, char *error,
					   size_t error_size);

#ifdef __cplusplus
}
#endif

#endif
