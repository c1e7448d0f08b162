/*
 * ref.h - CPU reference for Gated DeltaNet (GDN) and Kimi Delta Attention
 * (KDA), forward and backward. Test infrastructure only, never shipped.
 * "spec §N" refers to /work/shared/docs/spec-gdn-kda.md.
 *
 *   naive recurrence (fp64)   ref_recurrent_fwd, ref_recurrent_bwd
 *   chunked forward  (fp32)   ref_chunk_forward, or stage by stage
 *   FLA's metric              ref_compare_*
 *   FLA's test cases          ref_kda_cases, ref_gdn_cases, ref_case_generate
 *
 * A GPU test, in outline:
 *
 *   size_t n; const ref_case *cs = ref_kda_cases(&n);
 *   ref_case_data d;    ref_case_generate(&cs[i], 42, &d);
 *   ... run the kernel on d.q, d.k, ... (floats holding values of the case
 *       dtype; convert to bf16/fp16 bit patterns exactly) ...
 *   ref_tensors64 t;    ref_case_to_f64(&d, &t);
 *   ref_fwd64 out = { .o = o64, .ht = ht64 };
 *   ref_recurrent_fwd(&d.p, &t.in, &out);
 *   ref_cmp c; ref_compare_f64_f32(o64, gpu_o, n_o, cs[i].tol.o, &c);
 *   ref_tensors64_free(&t); ref_case_data_free(&d);
 *
 * Layouts: every tensor is a dense row-major array, last index fastest.
 *   q, k            [B,T,H,K]        v, o, v_new, u   [B,T,HV,V]
 *   beta            [B,T,HV]         g, Γ    GDN [B,T,HV]   KDA [B,T,HV,K]
 *   A_log           [HV]             dt_bias GDN [HV]       KDA [HV,K]
 *   h0, ht, dht,    [N,HV,K,V], or [N,HV,V,K] with state_v_first
 *   dh0
 *   chunk states h  [NT,HV,K,V] (V-first: [NT,HV,V,K]); NT counts the chunks
 *                   of all sequences, sequence-major (spec §5)
 *   L, A, Aqk       [B,T,HV,C]: row t holds its chunk row, column j is the
 *                   token chunk_start + j; entries j > row are 0
 *   w, kg, qg       [B,T,HV,K]
 * With cu_seqlens, B = 1, T is the packed length and N = number of
 * sequences; otherwise N = B. Value head hv reads q/k head hv / (HV/H).
 * Every function that takes shapes validates them and returns a status; no
 * function exits, aborts or writes outside the buffers it is given.
 */
#ifndef TILEC_REF_H
#define TILEC_REF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum ref_status {
	REF_OK = 0,
	REF_ERR_ARG,   /* NULL where a tensor is required, or bad option */
	REF_ERR_SHAPE, /* bad dimension or cu_seqlens */
	REF_ERR_NOMEM,
} ref_status;

const char *ref_status_str(ref_status s);

typedef enum ref_op { REF_GDN = 0, REF_KDA = 1 } ref_op;

/* Storage dtype of FLA's intermediates (spec §3.6); REF_F32 = no rounding. */
typedef enum ref_dtype { REF_F32 = 0, REF_BF16, REF_F16 } ref_dtype;

/*
 * Options, mirroring the keyword arguments of chunk_kda and
 * chunk_gated_delta_rule (spec §6).
 */
typedef struct ref_opts {
	double scale;                    /* 0 means FLA's default K^-1/2 */
	bool use_qk_l2norm_in_kernel;    /* spec §2.1, eps 1e-6 */
	bool use_beta_sigmoid_in_kernel; /* spec §2.2 */
	bool allow_neg_eigval;           /* beta = 2 sigmoid; needs the above */
	bool use_gate_in_kernel;         /* g is the raw gate input, §2.3-4 */
	bool has_lower_bound;            /* KDA only: lower_bound is not None */
	double lower_bound;              /* KDA form (b), spec §2.4 */
	bool safe_gate;                  /* recorded; no effect on the math */
	bool state_v_first;              /* states stored [V,K], spec §1 */
	int chunk_size;                  /* 0 -> 64; GDN 16/32/64, KDA 32/64 */
	ref_dtype dtype;                 /* chunked path: FLA's rounding */
	int threads;                     /* worker threads; <= 1 runs inline */
} ref_opts;

typedef struct ref_problem {
	ref_op op;
	int B, T, H, HV, K, V;
	const int64_t *cu_seqlens; /* NULL, or n_seqs + 1 offsets (B == 1) */
	int n_seqs;
	ref_opts opts;
} ref_problem;

/* Element counts of every tensor of a problem (N = n_seqs, NT = chunks). */
typedef struct ref_sizes {
	int n_seqs, n_chunks, chunk_size;
	size_t qk, v, beta, g, state, A_log, dt_bias, h, mat;
} ref_sizes;

/* Checks shapes, cu_seqlens and option consistency. */
ref_status ref_problem_check(const ref_problem *p);
ref_status ref_problem_sizes(const ref_problem *p, ref_sizes *s);

/* ---- fp64 naive recurrence (spec §1, §2) ------------------------------ */

typedef struct ref_in64 {
	const double *q, *k, *v; /* required */
	const double *g;         /* log decay, or raw input if gate in kernel */
	const double *beta;      /* raw logits if beta sigmoid in kernel */
	const double *A_log;     /* [HV]; needed by the softplus gates */
	const double *dt_bias;   /* optional */
	const double *h0;        /* optional (zero state) */
} ref_in64;

typedef struct ref_fwd64 {   /* every field optional (NULL: not written) */
	double *o;
	double *ht;
	double *h;     /* states at each chunk start, chunk = opts.chunk_size */
	double *v_new; /* residual beta (v - S'^T k) = the chunked v_new */
} ref_fwd64;

typedef struct ref_grads64 { /* every field optional (NULL: not written) */
	double *dq, *dk;  /* wrt q, k as passed (before in-kernel l2norm) */
	double *dv;
	double *dg;       /* wrt g as passed (raw gate if gate in kernel) */
	double *dbeta;    /* wrt beta as passed (raw if beta sigmoid) */
	double *dA_log;   /* zeros unless the gate is in kernel with A_log */
	double *ddt_bias; /* zeros unless the gate is in kernel */
	double *dh0;      /* same layout as h0, written even if h0 is NULL */
} ref_grads64;

ref_status ref_recurrent_fwd(const ref_problem *p, const ref_in64 *in,
			     ref_fwd64 *out);
/* Gradients of L = sum(o * dout) + sum(ht * dht); dht may be NULL (0).
 * Memory: O(T/64 K V) per (sequence, head) task (states are recomputed
 * from checkpoints every 64 steps). */
ref_status ref_recurrent_bwd(const ref_problem *p, const ref_in64 *in,
			     const double *dout, const double *dht,
			     ref_grads64 *grads);

/* ---- gates and input transforms, fp64 (spec §2) ------------------------ */

double ref_softplus(double x); /* x if x > 20, else log(1 + e^x) */
double ref_sigmoid(double x);
/* Per-step natural-log gate g [.., HV(,K)] from the raw input (§2.3/2.4). */
ref_status ref_gate_fwd(const ref_problem *p, const double *g_raw,
			const double *A_log, const double *dt_bias, double *g);
/* dg is dL/d(per-step g); outputs may be NULL. dA_log and ddt_bias are
 * overwritten with the sums over all tokens (zeros if the gate is not in
 * kernel). The softplus derivative is sigmoid(x) also above the
 * threshold, as in FLA's gate backward. */
ref_status ref_gate_bwd(const ref_problem *p, const double *g_raw,
			const double *A_log, const double *dt_bias,
			const double *dg, double *dg_raw, double *dA_log,
			double *ddt_bias);
/* y = x / sqrt(sum x^2 + 1e-6) per row of K; and its backward (§2.1). */
void ref_l2norm_fwd(const double *x, size_t rows, int K, double *y);
void ref_l2norm_bwd(const double *x, const double *dy, size_t rows, int K,
		    double *dx);

/* ---- fp32 chunked forward (spec §3) ------------------------------------ */

/* As ref_in64; with opts.dtype set, q, k, v should already hold values
 * of that dtype (as ref_case_generate makes them). */
typedef struct ref_in32 {
	const float *q, *k, *v, *g, *beta, *A_log, *dt_bias, *h0;
} ref_in32;

/*
 * Every intermediate of the chunked forward, fp32 buffers owned by the
 * struct (ref_chunk_alloc / ref_chunk_free). Each stage reads the fields
 * named in its comment and writes its own, so a GPU test can replace a
 * stage's inputs with the GPU's values and test that stage alone. Values
 * are rounded to opts.dtype where FLA stores them in that dtype (spec §9.8).
 */
typedef struct ref_chunk {
	ref_sizes sz;
	float *q, *k;    /* [B,T,H,K] after in-kernel l2norm */
	float *beta;     /* [B,T,HV] after in-kernel sigmoid */
	float *g;        /* per-step natural-log gate, shape of g */
	float *gcum;     /* Γ = RCP_LN2 * chunk-local cumsum(g) (log2 units) */
	float *L;        /* beta_i <k_i,k_j>_γ, i > j (fp32, never rounded) */
	float *A;        /* (I + L)^-1, rounded as FLA stores it */
	float *Aqk;      /* s <q_i,k_j>_γ, i >= j (GDN: fp32, FLA has no
			    such buffer and rounds P = Aqk / s in fwd_o) */
	float *w, *u;    /* w = A (beta e^γ k), u = A (beta v) */
	float *kg, *qg;  /* KDA only (else NULL): k e^(γ_last - γ), q e^γ */
	float *h;        /* chunk-start states */
	float *v_new;    /* u - w h_c, un-decayed */
	float *o;
	float *ht;       /* final states, fp32, layout of h0 */
} ref_chunk;

ref_status ref_chunk_alloc(const ref_problem *p, ref_chunk *r);
void ref_chunk_free(ref_chunk *r); /* NULL-safe, idempotent */
/* in -> q, k, beta, g, gcum (l2norm, sigmoid, gate, cumsum: §2, §2.5) */
ref_status ref_chunk_prepare(const ref_problem *p, const ref_in32 *in,
			     ref_chunk *r);
/* q, k, beta, gcum -> L, A, Aqk (§3.0, §3.4) */
ref_status ref_chunk_intra(const ref_problem *p, ref_chunk *r);
/* A, k, q, beta, gcum, in->v -> w, u (+ kg, qg for KDA) (§3.1.3, §3.2.3) */
ref_status ref_chunk_wu(const ref_problem *p, const float *v, ref_chunk *r);
/* w, u, k or kg, gcum, h0 -> h, v_new, ht (§3.5) */
ref_status ref_chunk_fwd_h(const ref_problem *p, const float *h0,
			   ref_chunk *r);
/* GDN: q, k, gcum, h, v_new -> o; KDA: qg, Aqk, h, v_new -> o
 * (§3.1.5, §3.2.5) */
ref_status ref_chunk_fwd_o(const ref_problem *p, ref_chunk *r);
/* All stages in order; r must come from ref_chunk_alloc. */
ref_status ref_chunk_forward(const ref_problem *p, const ref_in32 *in,
			     ref_chunk *r);

/* ---- rounding and FLA's metric (spec §7.1) ----------------------------- */

float ref_round(float x, ref_dtype dt); /* round to nearest even */
void ref_round_array(float *x, size_t n, ref_dtype dt);

typedef struct ref_cmp {
	double abs_err;    /* max |ref - got| (NaN if any NaN) */
	double ratio_err;  /* RMS(ref - got) / (RMS(ref) + 1e-8) */
	size_t worst;      /* index of the largest |ref - got| */
	double worst_ref, worst_got;
	bool has_nan;
	bool pass;         /* abs_err <= 1e-6, or no NaN and ratio < ratio */
} ref_cmp;

bool ref_compare_f64(const double *ref, const double *got, size_t n,
		     double ratio, ref_cmp *c);
bool ref_compare_f32(const float *ref, const float *got, size_t n,
		     double ratio, ref_cmp *c);
bool ref_compare_f64_f32(const double *ref, const float *got, size_t n,
			 double ratio, ref_cmp *c);

/* ---- seeded PRNG: xoshiro256** seeded by splitmix64 -------------------- */

typedef struct ref_rng {
	uint64_t s[4];
	double spare;    /* second Box-Muller normal */
	bool has_spare;
} ref_rng;

/* Independent stream per (seed, stream); same numbers on every machine. */
void ref_rng_seed(ref_rng *r, uint64_t seed, uint64_t stream);
uint64_t ref_rng_next(ref_rng *r);
double ref_rng_uniform(ref_rng *r); /* [0, 1), 53 bits */
double ref_rng_normal(ref_rng *r);  /* N(0, 1), Box-Muller */

/* ---- FLA's test cases (spec §7.2, §7.3) -------------------------------- */

typedef struct ref_tols {  /* FLA's assert_close ratios per output */
	double o, ht, dq, dk, dv, dg, db, dh0, dA, dbias;
	bool dA_warn_only; /* FLA only warns on dA */
	double self;       /* 0, or the ratio FLA uses between two runs of its
			      own op (state_v_first vs K-first, sigmoid) */
} ref_tols;

typedef struct ref_case {
	const char *name;   /* unique; encodes the FLA parameter row */
	const char *suite;  /* FLA test function, e.g. "test_chunk_varlen" */
	ref_op op;
	int B, T, H, HV, D; /* K = V = D; varlen: B = 1, T = cu[n_cu-1] */
	double scale;       /* 0 = default */
	double gate_norm;   /* gate_logit_normalizer */
	double mask_p;
	bool l2norm_in_kernel, gate_in_kernel, safe_gate, disable_recompute;
	bool state_v_first, beta_sigmoid, neg_eigval;
	bool varlen;        /* inputs drawn as in FLA's varlen tests */
	bool heavy;         /* too large for the CPU reference in CI */
	ref_dtype dtype;    /* dtype of q, k, v (and of beta for KDA) */
	int chunk_size;
	int n_cu;
	int64_t cu[8];
	ref_tols tol;
} ref_case;

const ref_case *ref_kda_cases(size_t *n);
const ref_case *ref_gdn_cases(size_t *n);

/*
 * One generated case. Every array holds values exactly representable in
 * the dtype FLA gives that tensor, stored as float (NULL where the case
 * has no such tensor: A_log and dt_bias without the gate in kernel). p is
 * ready to pass to the reference, with opts.threads = 1 (raise it at
 * will); its cu_seqlens points into this struct, so a copy of the struct
 * must not outlive the original.
 */
typedef struct ref_case_data {
	ref_problem p;
	int64_t cu[8];
	float *q, *k, *v, *g, *beta, *A_log, *dt_bias, *h0;
	float *dout, *dht; /* the loss projections do and dht */
	ref_sizes sz;
} ref_case_data;

ref_status ref_case_generate(const ref_case *c, uint64_t seed,
			     ref_case_data *d);
void ref_case_data_free(ref_case_data *d);
ref_in32 ref_case_in32(const ref_case_data *d);

/* fp64 copies of a case's tensors (NULL where the case has none). */
typedef struct ref_tensors64 {
	double *q, *k, *v, *g, *beta, *A_log, *dt_bias, *h0, *dout, *dht;
	ref_in64 in; /* view of the inputs above */
} ref_tensors64;

ref_status ref_case_to_f64(const ref_case_data *d, ref_tensors64 *t);
void ref_tensors64_free(ref_tensors64 *t);

#endif
