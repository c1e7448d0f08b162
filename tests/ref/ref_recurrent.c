/*
 * ref_recurrent.c - the naive recurrent forward of GDN and KDA in fp64
 * (spec §1). For each (sequence n, value head hv), with S_0 = h0[n, hv]:
 *
 *   S'  = exp(g_t) S_{t-1}        (GDN: scalar; KDA: row d scaled by
 *                                  exp(g_t[d]))
 *   r_t = beta_t (v_t - S'^T k_t)  (delta-rule residual)
 *   S_t = S' + k_t r_t^T
 *   o_t = s S_t^T q_t              (read after the update)
 *
 * Inputs first pass through ref_prep64_init (l2norm, beta sigmoid, gate,
 * spec §2). Optional outputs: the final state, the state at every chunk
 * start (the chunked path's h, spec §3.5) and the residuals r_t (the
 * chunked path's v_new, which equals r_t exactly, spec §3.0). The state is
 * kept K-first internally; state_v_first only changes loads and stores.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ref_internal.h"

static void decay_state(const ref_problem *p, const double *g, double *S)
{
	int K = p->K, V = p->V;
	for (int a = 0; a < K; a++) {
		double e = exp(p->op == REF_KDA ? g[a] : g[0]);
		for (int b = 0; b < V; b++)
			S[a * V + b] *= e;
	}
}

void ref_rec_step(const ref_problem *p, const ref_prep64 *x, int t, int hv,
		  double *S, double *res)
{
	int K = p->K, V = p->V;
	const double *k = x->k + ref_ix_qk(p, t, hv);
	const double *v = x->v + ref_ix_v(p, t, hv);
	double beta = x->beta[(size_t)t * p->HV + hv];
	decay_state(p, x->g + ref_ix_g(p, t, hv), S);
	for (int b = 0; b < V; b++)
		res[b] = 0;
	for (int a = 0; a < K; a++)
		for (int b = 0; b < V; b++)
			res[b] += k[a] * S[a * V + b];
	for (int b = 0; b < V; b++)
		res[b] = beta * (v[b] - res[b]);
	for (int a = 0; a < K; a++)
		for (int b = 0; b < V; b++)
			S[a * V + b] += k[a] * res[b];
}

typedef struct fwd_ctx {
	const ref_problem *p;
	const ref_prep64 *x;
	const double *h0;
	ref_fwd64 *out;
} fwd_ctx;

static void read_out(const ref_problem *p, const double *S, const double *q,
		     double *o)
{
	double s = ref_scale(p);
	for (int b = 0; b < p->V; b++)
		o[b] = 0;
	for (int a = 0; a < p->K; a++)
		for (int b = 0; b < p->V; b++)
			o[b] += s * q[a] * S[a * p->V + b];
}

static void store_chunk_state(const fwd_ctx *c, int n, int hv, int i,
			      const double *S)
{
	const ref_problem *p = c->p;
	int C = ref_chunk_len(p);
	if (!c->out->h || i % C != 0)
		return;
	int ci = ref_chunk_offset(p, n) + i / C;
	ref_state_store(p, S, c->out->h + ref_ix_state(p, ci, hv));
}

static ref_status fwd_task(void *vctx, int task)
{
	const fwd_ctx *c = vctx;
	const ref_problem *p = c->p;
	int n = task / p->HV, hv = task % p->HV, bos, eos;
	double *S = ref_alloc((size_t)p->K * p->V, sizeof(double));
	double *res = ref_alloc(p->V, sizeof(double));
	if (!S || !res) {
		free(S);
		free(res);
		return REF_ERR_NOMEM;
	}
	ref_seq_range(p, n, &bos, &eos);
	ref_state_load(p, c->h0 ? c->h0 + ref_ix_state(p, n, hv) : NULL, S);
	for (int t = bos; t < eos; t++) {
		store_chunk_state(c, n, hv, t - bos, S);
		ref_rec_step(p, c->x, t, hv, S, res);
		if (c->out->v_new)
			memcpy(c->out->v_new + ref_ix_v(p, t, hv), res,
			       sizeof(double) * p->V);
		if (c->out->o)
			read_out(p, S, c->x->q + ref_ix_qk(p, t, hv),
				 c->out->o + ref_ix_v(p, t, hv));
	}
	if (c->out->ht)
		ref_state_store(p, S, c->out->ht + ref_ix_state(p, n, hv));
	free(S);
	free(res);
	return REF_OK;
}

ref_status ref_recurrent_fwd(const ref_problem *p, const ref_in64 *in,
			     ref_fwd64 *out)
{
	if (!in || !out)
		return REF_ERR_ARG;
	ref_status s = ref_check_in(p, in->q, in->k, in->v, in->g, in->beta,
				    in->A_log);
	if (s != REF_OK)
		return s;
	ref_prep64 x;
	if ((s = ref_prep64_init(p, in, &x)) != REF_OK)
		return s;
	fwd_ctx c = {.p = p, .x = &x, .h0 = in->h0, .out = out};
	s = ref_parallel_for(ref_n_seqs(p) * p->HV, p->opts.threads,
			     fwd_task, &c);
	ref_prep64_free(&x);
	return s;
}
