/*
 * ref_internal.h - helpers shared by the reference's source files and not
 * part of its public interface: tensor indexing (layouts as documented in
 * ref.h), sequence ranges for fixed and variable length (spec §5), state
 * layout conversion (spec §1, state_v_first), a tiny parallel-for over
 * independent tasks, and the fp64 input preparation used by both the naive
 * forward and backward (spec §2).
 *
 * Invariant: every helper assumes ref_problem_check(p) returned REF_OK.
 */
#ifndef TILEC_REF_INTERNAL_H
#define TILEC_REF_INTERNAL_H

#include "ref.h"

#define REF_RCP_LN2 1.4426950216f /* FLA constant.py, spec §0 */
#define REF_L2NORM_EPS 1e-6       /* added to the sum of squares, §2.1 */

/* q/k head read by value head hv (spec §0: eta(hv) = hv / (HV/H)). */
static inline int ref_qk_head(const ref_problem *p, int hv)
{
	return hv / (p->HV / p->H);
}

static inline size_t ref_ix_qk(const ref_problem *p, int t, int hv)
{
	return ((size_t)t * p->H + ref_qk_head(p, hv)) * p->K;
}

static inline size_t ref_ix_v(const ref_problem *p, int t, int hv)
{
	return ((size_t)t * p->HV + hv) * p->V;
}

/* K-vector per value head: w, kg, qg, and KDA's g. */
static inline size_t ref_ix_kv(const ref_problem *p, int t, int hv)
{
	return ((size_t)t * p->HV + hv) * p->K;
}

/* Start of the gate of (t, hv): a scalar (GDN) or K channels (KDA). */
static inline size_t ref_ix_g(const ref_problem *p, int t, int hv)
{
	return p->op == REF_KDA ? ref_ix_kv(p, t, hv)
				: (size_t)t * p->HV + hv;
}

static inline int ref_gate_width(const ref_problem *p)
{
	return p->op == REF_KDA ? p->K : 1;
}

static inline size_t ref_ix_state(const ref_problem *p, int n, int hv)
{
	return ((size_t)n * p->HV + hv) * p->K * p->V;
}

int ref_n_seqs(const ref_problem *p);
int ref_chunk_len(const ref_problem *p);
double ref_scale(const ref_problem *p);
void ref_seq_range(const ref_problem *p, int n, int *bos, int *eos);
/* Index of sequence n's first chunk among all chunks (spec §5). */
int ref_chunk_offset(const ref_problem *p, int n);
ref_status ref_check_in(const ref_problem *p, const void *q, const void *k,
			const void *v, const void *g, const void *beta,
			const void *A_log);

/* K-first S[K*V] <-> a state in the problem's layout. */
void ref_state_load(const ref_problem *p, const double *src, double *S);
void ref_state_store(const ref_problem *p, const double *S, double *dst);

typedef ref_status (*ref_task_fn)(void *ctx, int task);
/* Runs fn(ctx, 0..n-1) on up to `threads` threads; tasks must not share
 * outputs. Returns the first failing status. */
ref_status ref_parallel_for(int n, int threads, ref_task_fn fn, void *ctx);

/* fp64 inputs after l2norm, beta sigmoid and gate (spec §2). */
typedef struct ref_prep64 {
	const double *q, *k, *v, *beta, *g;
	double *own[4]; /* buffers allocated by ref_prep64_init */
} ref_prep64;

ref_status ref_prep64_init(const ref_problem *p, const ref_in64 *in,
			   ref_prep64 *x);
void ref_prep64_free(ref_prep64 *x);

/* dbeta_raw from dbeta through the optional sigmoid (spec §2.2). */
void ref_beta_bwd64(const ref_problem *p, const double *beta_raw,
		    const double *dbeta, double *dbeta_raw);

/* One step of spec §1 at token t, value head hv, on the K-first state S:
 * S = decay(S); res = beta (v - S^T k); S += k res^T. */
void ref_rec_step(const ref_problem *p, const ref_prep64 *x, int t, int hv,
		  double *S, double *res);

void *ref_alloc(size_t n, size_t elem); /* zeroed; NULL on overflow */

#endif
