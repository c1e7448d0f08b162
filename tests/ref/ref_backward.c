/*
 * ref_backward.c - reverse mode through the naive recurrence of spec §1, in
 * fp64, derived by hand. Loss L = sum(o * dout) + sum(ht * dht). With
 * a_d = exp(g_t[d]) (GDN: one scalar), S' = a ⊙ S_{t-1}, r = v - S'^T k,
 * u = beta r, S_t = S' + k u^T, o_t = s S_t^T q, and dS the gradient of
 * S_t flowing back from later steps (dht at the end), one step is:
 *
 *   dS  += s q do^T                dq  = s S_t do
 *   du   = dS^T k                  dk  = dS u
 *   dbeta = du . r    dv = beta du  dp = -beta du   (p = S'^T k)
 *   dS' = dS + k dp^T              dk += S' dp
 *   dg_d = sum_v dS'[d,v] S'[d,v]  (GDN: also summed over d)
 *   dS_{t-1} = a ⊙ dS'
 *
 * States S_{t-1}, S_t are recomputed from checkpoints taken every SEG
 * steps, so memory stays O(T/SEG K V) per (sequence, head). dq and dk are
 * formed per value head and summed over each GVA group (spec §5); then
 * the l2norm, sigmoid and gate backward of spec §2 map them to the raw
 * inputs. After the last step, dS is dh0 (so an empty sequence has
 * dh0 = dht).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ref_internal.h"

enum { SEG = 64 }; /* checkpoint interval in steps */

typedef struct bwd_ctx {
	const ref_problem *p;
	const ref_prep64 *x;
	const double *h0, *dout, *dht;
	double *dq_v, *dk_v;      /* [B,T,HV,K]: per value head */
	double *dv, *dbeta, *dg;  /* wrt v, effective beta, per-step g */
	double *dh0;              /* may be NULL */
} bwd_ctx;

typedef struct bwd_ws {
	double *ckpt; /* nseg states: the state before each segment */
	double *seg;  /* SEG + 1 states of the current segment */
	double *dS;
	double *vec;  /* r, du, dp (V each) and the decay a (K) */
} bwd_ws;

static void ws_free(bwd_ws *w)
{
	free(w->ckpt);
	free(w->seg);
	free(w->dS);
	free(w->vec);
}

static ref_status ws_alloc(const ref_problem *p, int nseg, bwd_ws *w)
{
	size_t kv = (size_t)p->K * p->V;
	w->ckpt = ref_alloc((size_t)(nseg ? nseg : 1) * kv, sizeof(double));
	w->seg = ref_alloc((SEG + 1) * kv, sizeof(double));
	w->dS = ref_alloc(kv, sizeof(double));
	w->vec = ref_alloc(3 * (size_t)p->V + p->K, sizeof(double));
	if (w->ckpt && w->seg && w->dS && w->vec)
		return REF_OK;
	ws_free(w);
	return REF_ERR_NOMEM;
}

/* dS += s q do^T and dq = s S_t do (the output read, o = s S_t^T q). */
static void bwd_output(const bwd_ctx *c, int t, int hv, const double *St,
		       double *dS)
{
	const ref_problem *p = c->p;
	int K = p->K, V = p->V;
	double s = ref_scale(p);
	const double *q = c->x->q + ref_ix_qk(p, t, hv);
	const double *dout = c->dout + ref_ix_v(p, t, hv);
	double *dq = c->dq_v + ref_ix_kv(p, t, hv);
	for (int a = 0; a < K; a++) {
		double acc = 0;
		for (int b = 0; b < V; b++) {
			acc += St[a * V + b] * dout[b];
			dS[a * V + b] += s * q[a] * dout[b];
		}
		dq[a] = s * acc;
	}
}

/* Residual r = v - S'^T k (S' = a ⊙ Sprev), then du, dk, dbeta, dv, dp. */
static void bwd_write(const bwd_ctx *c, int t, int hv, const double *Sprev,
		      const double *dS, double *vec)
{
	const ref_problem *p = c->p;
	int K = p->K, V = p->V;
	const double *k = c->x->k + ref_ix_qk(p, t, hv);
	const double *v = c->x->v + ref_ix_v(p, t, hv);
	double beta = c->x->beta[(size_t)t * p->HV + hv], dbeta = 0;
	double *r = vec, *du = vec + V, *dp = vec + 2 * V, *a = vec + 3 * V;
	double *dk = c->dk_v + ref_ix_kv(p, t, hv);
	for (int b = 0; b < V; b++) {
		r[b] = v[b];
		du[b] = 0;
	}
	for (int i = 0; i < K; i++)
		for (int b = 0; b < V; b++) {
			r[b] -= a[i] * Sprev[i * V + b] * k[i];
			du[b] += dS[i * V + b] * k[i];
		}
	for (int i = 0; i < K; i++) {
		double acc = 0;
		for (int b = 0; b < V; b++)
			acc += dS[i * V + b] * beta * r[b];
		dk[i] = acc;
	}
	double *dv = c->dv + ref_ix_v(p, t, hv);
	for (int b = 0; b < V; b++) {
		dbeta += du[b] * r[b];
		dv[b] = beta * du[b];
		dp[b] = -beta * du[b];
	}
	c->dbeta[(size_t)t * p->HV + hv] = dbeta;
}

/* dS' = dS + k dp^T; dk += S' dp; dg; then dS <- a ⊙ dS' (= dS_{t-1}). */
static void bwd_decay(const bwd_ctx *c, int t, int hv, const double *Sprev,
		      double *dS, const double *vec)
{
	const ref_problem *p = c->p;
	int K = p->K, V = p->V;
	const double *k = c->x->k + ref_ix_qk(p, t, hv);
	const double *dp = vec + 2 * V, *a = vec + 3 * V;
	double *dk = c->dk_v + ref_ix_kv(p, t, hv);
	double *dg = c->dg + ref_ix_g(p, t, hv);
	double dg_sum = 0;
	for (int i = 0; i < K; i++) {
		double acc_k = 0, acc_g = 0;
		for (int b = 0; b < V; b++) {
			dS[i * V + b] += k[i] * dp[b];
			acc_k += Sprev[i * V + b] * dp[b];
			acc_g += dS[i * V + b] * Sprev[i * V + b];
			dS[i * V + b] *= a[i];
		}
		dk[i] += a[i] * acc_k;
		if (p->op == REF_KDA)
			dg[i] = a[i] * acc_g;
		else
			dg_sum += a[i] * acc_g;
	}
	if (p->op == REF_GDN)
		dg[0] = dg_sum;
}

static void bwd_step(const bwd_ctx *c, int t, int hv, const double *Sprev,
		     const double *St, bwd_ws *w)
{
	const ref_problem *p = c->p;
	const double *g = c->x->g + ref_ix_g(p, t, hv);
	double *a = w->vec + 3 * p->V;
	for (int i = 0; i < p->K; i++)
		a[i] = exp(p->op == REF_KDA ? g[i] : g[0]);
	bwd_output(c, t, hv, St, w->dS);
	bwd_write(c, t, hv, Sprev, w->dS, w->vec);
	bwd_decay(c, t, hv, Sprev, w->dS, w->vec);
}

/* Recomputes the states of segment [t0, t1) from its checkpoint, then
 * runs the backward steps of the segment in reverse. */
static void bwd_segment(const bwd_ctx *c, int hv, int t0, int t1,
			const double *ckpt, bwd_ws *w)
{
	const ref_problem *p = c->p;
	size_t kv = (size_t)p->K * p->V;
	double *res = w->vec; /* scratch; overwritten by bwd_write later */
	memcpy(w->seg, ckpt, kv * sizeof(double));
	for (int t = t0; t < t1; t++) {
		double *S = w->seg + (size_t)(t - t0 + 1) * kv;
		memcpy(S, S - kv, kv * sizeof(double));
		ref_rec_step(p, c->x, t, hv, S, res);
	}
	for (int t = t1 - 1; t >= t0; t--) {
		const double *Sprev = w->seg + (size_t)(t - t0) * kv;
		bwd_step(c, t, hv, Sprev, Sprev + kv, w);
	}
}

static void fwd_checkpoints(const bwd_ctx *c, int n, int hv, int bos,
			    int eos, bwd_ws *w)
{
	const ref_problem *p = c->p;
	size_t kv = (size_t)p->K * p->V;
	double *S = w->dS, *res = w->vec; /* both free until the backward */
	ref_state_load(p, c->h0 ? c->h0 + ref_ix_state(p, n, hv) : NULL, S);
	for (int t = bos; t < eos; t++) {
		if ((t - bos) % SEG == 0)
			memcpy(w->ckpt + (size_t)((t - bos) / SEG) * kv, S,
			       kv * sizeof(double));
		ref_rec_step(p, c->x, t, hv, S, res);
	}
}

static ref_status bwd_task(void *vctx, int task)
{
	const bwd_ctx *c = vctx;
	const ref_problem *p = c->p;
	int n = task / p->HV, hv = task % p->HV, bos, eos;
	ref_seq_range(p, n, &bos, &eos);
	int nseg = (eos - bos + SEG - 1) / SEG;
	size_t kv = (size_t)p->K * p->V;
	bwd_ws w;
	if (ws_alloc(p, nseg, &w) != REF_OK)
		return REF_ERR_NOMEM;
	fwd_checkpoints(c, n, hv, bos, eos, &w);
	ref_state_load(p, c->dht ? c->dht + ref_ix_state(p, n, hv) : NULL,
		       w.dS);
	for (int sg = nseg - 1; sg >= 0; sg--) {
		int t0 = bos + sg * SEG;
		int t1 = t0 + SEG < eos ? t0 + SEG : eos;
		bwd_segment(c, hv, t0, t1, w.ckpt + (size_t)sg * kv, &w);
	}
	if (c->dh0)
		ref_state_store(p, w.dS, c->dh0 + ref_ix_state(p, n, hv));
	ws_free(&w);
	return REF_OK;
}

/* dq[t,h] = sum over the G value heads of group h, then the l2norm bwd. */
static void reduce_qk(const ref_problem *p, const double *d_v,
		      const double *x_raw, double *sum, double *out)
{
	int G = p->HV / p->H, K = p->K;
	size_t rows = (size_t)p->B * p->T * p->H;
	for (size_t r = 0; r < rows; r++) {
		size_t t = r / p->H, h = r % p->H;
		for (int d = 0; d < K; d++) {
			double acc = 0;
			for (int j = 0; j < G; j++)
				acc += d_v[((t * p->HV) + h * G + j) * K + d];
			sum[r * K + d] = acc;
		}
	}
	if (p->opts.use_qk_l2norm_in_kernel)
		ref_l2norm_bwd(x_raw, sum, rows, K, out);
	else
		memcpy(out, sum, rows * K * sizeof(double));
}

static ref_status finish(const bwd_ctx *c, const ref_in64 *in,
			 ref_grads64 *gr, double *tmp)
{
	const ref_problem *p = c->p;
	ref_sizes sz;
	ref_problem_sizes(p, &sz);
	if (gr->dq)
		reduce_qk(p, c->dq_v, in->q, tmp, gr->dq);
	if (gr->dk)
		reduce_qk(p, c->dk_v, in->k, tmp, gr->dk);
	if (gr->dv)
		memcpy(gr->dv, c->dv, sz.v * sizeof(double));
	if (gr->dbeta)
		ref_beta_bwd64(p, in->beta, c->dbeta, gr->dbeta);
	return ref_gate_bwd(p, in->g, in->A_log, in->dt_bias, c->dg, gr->dg,
			    gr->dA_log, gr->ddt_bias);
}

ref_status ref_recurrent_bwd(const ref_problem *p, const ref_in64 *in,
			     const double *dout, const double *dht,
			     ref_grads64 *gr)
{
	if (!in || !gr || !dout)
		return REF_ERR_ARG;
	ref_status s = ref_check_in(p, in->q, in->k, in->v, in->g, in->beta,
				    in->A_log);
	ref_sizes sz;
	if (s != REF_OK || (s = ref_problem_sizes(p, &sz)) != REF_OK)
		return s;
	size_t nkv = sz.beta * p->K; /* a K-vector per (token, value head) */
	double *buf = ref_alloc(3 * nkv + sz.v + sz.beta + sz.g,
				sizeof(double));
	ref_prep64 x;
	if (!buf || (s = ref_prep64_init(p, in, &x)) != REF_OK) {
		free(buf);
		return buf ? s : REF_ERR_NOMEM;
	}
	bwd_ctx c = {.p = p, .x = &x, .h0 = in->h0, .dout = dout, .dht = dht,
		     .dq_v = buf, .dk_v = buf + nkv, .dv = buf + 3 * nkv,
		     .dh0 = gr->dh0};
	c.dbeta = c.dv + sz.v;
	c.dg = c.dbeta + sz.beta;
	s = ref_parallel_for(sz.n_seqs * p->HV, p->opts.threads, bwd_task,
			     &c);
	if (s == REF_OK)
		s = finish(&c, in, gr, buf + 2 * nkv);
	ref_prep64_free(&x);
	free(buf);
	return s;
}
