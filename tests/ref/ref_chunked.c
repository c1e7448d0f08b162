/*
 * ref_chunked.c - the chunked forward of spec §3 in fp32, stage by stage,
 * keeping every intermediate FLA produces so each GPU stage kernel can be
 * checked alone. Chunks of C rows start at each sequence's bos (spec §5);
 * rows past the sequence end simply do not exist here, so no masking is
 * needed. Stages, each over (sequence, value head) tasks:
 *
 *   prepare  l2norm, beta sigmoid, gate, Γ = RCP_LN2 cumsum   (§2, §2.5)
 *   intra    L, A = (I+L)^-1 (forward substitution), Aqk      (§3.0, §3.4)
 *   wu       w, u (and KDA's kg, qg)                          (§3.1, §3.2)
 *   fwd_h    chunk-start states h, v_new, final state         (§3.5)
 *   fwd_o    o                                          (§3.1.5, §3.2.5)
 *
 * Every exponent is exp2(Γ_a - Γ_b) with a at or after b within a chunk,
 * so it is <= 0 and never overflows, even with g = -1000 (spec §9.3, §9.7).
 * Accumulation is fp32. With opts.dtype != REF_F32, values are rounded at
 * FLA's storage and operand points (spec §9.8): l2norm output, A, KDA Aqk,
 * the beta v and beta e^γ k operands, w, u, kg, qg, h, v_new, the decayed
 * v_new, GDN's P, and o. L, Γ, beta, the carried state and ht stay fp32.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ref_internal.h"

void ref_chunk_free(ref_chunk *r)
{
	if (!r)
		return;
	float **all[] = {&r->q, &r->k, &r->beta, &r->g, &r->gcum, &r->L,
			 &r->A, &r->Aqk, &r->w, &r->u, &r->kg, &r->qg,
			 &r->h, &r->v_new, &r->o, &r->ht};
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		free(*all[i]);
		*all[i] = NULL;
	}
}

ref_status ref_chunk_alloc(const ref_problem *p, ref_chunk *r)
{
	if (!r)
		return REF_ERR_ARG;
	memset(r, 0, sizeof(*r));
	ref_status s = ref_problem_sizes(p, &r->sz);
	if (s != REF_OK)
		return s;
	const ref_sizes *z = &r->sz;
	size_t nk = z->beta * p->K, fs = sizeof(float);
	bool kda = p->op == REF_KDA;
	r->q = ref_alloc(z->qk, fs), r->k = ref_alloc(z->qk, fs);
	r->beta = ref_alloc(z->beta, fs);
	r->g = ref_alloc(z->g, fs), r->gcum = ref_alloc(z->g, fs);
	r->L = ref_alloc(z->mat, fs), r->A = ref_alloc(z->mat, fs);
	r->Aqk = ref_alloc(z->mat, fs);
	r->w = ref_alloc(nk, fs), r->u = ref_alloc(z->v, fs);
	r->kg = kda ? ref_alloc(nk, fs) : NULL;
	r->qg = kda ? ref_alloc(nk, fs) : NULL;
	r->h = ref_alloc(z->h, fs), r->v_new = ref_alloc(z->v, fs);
	r->o = ref_alloc(z->v, fs), r->ht = ref_alloc(z->state, fs);
	bool ok = r->q && r->k && r->beta && r->g && r->gcum && r->L &&
		  r->A && r->Aqk && r->w && r->u && r->h && r->v_new &&
		  r->o && r->ht && (!kda || (r->kg && r->qg));
	if (ok)
		return REF_OK;
	ref_chunk_free(r);
	return REF_ERR_NOMEM;
}

/* The stage may run only on buffers allocated for this very problem. */
static ref_status check_chunk(const ref_problem *p, const ref_chunk *r)
{
	ref_sizes z;
	ref_status s = ref_problem_sizes(p, &z);
	if (s != REF_OK)
		return s;
	if (!r || !r->q || z.qk != r->sz.qk || z.v != r->sz.v ||
	    z.g != r->sz.g || z.h != r->sz.h || z.mat != r->sz.mat ||
	    z.state != r->sz.state || z.n_chunks != r->sz.n_chunks ||
	    (p->op == REF_KDA && !r->kg))
		return REF_ERR_ARG;
	return REF_OK;
}

/* ---- prepare (spec §2, §2.5) ------------------------------------------ */

static void prep_qk(const ref_problem *p, const float *x, float *y)
{
	size_t rows = (size_t)p->B * p->T * p->H;
	int K = p->K;
	for (size_t r = 0; r < rows; r++) {
		const float *xr = x + r * K;
		if (!p->opts.use_qk_l2norm_in_kernel) {
			memcpy(y + r * K, xr, K * sizeof(float));
			continue;
		}
		float ss = 0;
		for (int d = 0; d < K; d++)
			ss += xr[d] * xr[d];
		float rstd = 1.0f / sqrtf(ss + (float)REF_L2NORM_EPS);
		for (int d = 0; d < K; d++)
			y[r * K + d] = ref_round(xr[d] * rstd, p->opts.dtype);
	}
}

static void prep_beta(const ref_problem *p, const float *b, float *out)
{
	size_t n = (size_t)p->B * p->T * p->HV;
	double m = p->opts.allow_neg_eigval ? 2.0 : 1.0;
	for (size_t i = 0; i < n; i++)
		out[i] = p->opts.use_beta_sigmoid_in_kernel
				 ? (float)(m * ref_sigmoid(b[i]))
				 : b[i];
}

static double *to64(const float *x, size_t n)
{
	if (!x)
		return NULL;
	double *y = ref_alloc(n, sizeof(double));
	for (size_t i = 0; y && i < n; i++)
		y[i] = x[i];
	return y;
}

/* The gate is evaluated in fp64 by ref_gate_fwd and stored as fp32. */
static ref_status prep_gate(const ref_problem *p, const ref_in32 *in,
			    ref_chunk *r)
{
	const ref_sizes *z = &r->sz;
	if (!p->opts.use_gate_in_kernel) {
		memcpy(r->g, in->g, z->g * sizeof(float));
		return REF_OK;
	}
	double *g = to64(in->g, z->g), *out = ref_alloc(z->g, sizeof(double));
	double *A = to64(in->A_log, z->A_log);
	double *bias = to64(in->dt_bias, z->dt_bias);
	ref_status s = REF_ERR_NOMEM;
	if (g && out && (A || !in->A_log) && (bias || !in->dt_bias))
		s = ref_gate_fwd(p, g, A, bias, out);
	for (size_t i = 0; s == REF_OK && i < z->g; i++)
		r->g[i] = (float)out[i];
	free(g), free(out), free(A), free(bias);
	return s;
}

/* Γ: inclusive fp32 cumsum inside each chunk, scaled after (spec §2.5). */
static void prep_cumsum(const ref_problem *p, ref_chunk *r)
{
	int C = ref_chunk_len(p), W = ref_gate_width(p);
	for (int n = 0; n < r->sz.n_seqs; n++) {
		int bos, eos;
		ref_seq_range(p, n, &bos, &eos);
		for (int hv = 0; hv < p->HV; hv++)
			for (int d = 0; d < W; d++) {
				float acc = 0;
				for (int t = bos; t < eos; t++) {
					size_t i = ref_ix_g(p, t, hv) + d;
					acc = (t - bos) % C ? acc + r->g[i]
							    : r->g[i];
					r->gcum[i] = acc * REF_RCP_LN2;
				}
			}
	}
}

ref_status ref_chunk_prepare(const ref_problem *p, const ref_in32 *in,
			     ref_chunk *r)
{
	ref_status s = check_chunk(p, r);
	if (s != REF_OK || !in)
		return s != REF_OK ? s : REF_ERR_ARG;
	s = ref_check_in(p, in->q, in->k, in->v, in->g, in->beta, in->A_log);
	if (s != REF_OK)
		return s;
	prep_qk(p, in->q, r->q);
	prep_qk(p, in->k, r->k);
	prep_beta(p, in->beta, r->beta);
	if ((s = prep_gate(p, in, r)) != REF_OK)
		return s;
	prep_cumsum(p, r);
	return REF_OK;
}

/* ---- stage plumbing ----------------------------------------------------- */

typedef struct stage stage;
typedef void (*chunk_fn)(const stage *s, int hv, int c0, int nr, int ci,
			 float *scr);
struct stage {
	const ref_problem *p;
	ref_chunk *r;
	const float *v, *h0;
	chunk_fn fn;
	size_t scratch; /* floats per task */
};

/* Runs s->fn on every chunk of one (sequence, value head) task. */
static ref_status stage_task(void *vs, int task)
{
	const stage *s = vs;
	const ref_problem *p = s->p;
	int n = task / p->HV, hv = task % p->HV, C = ref_chunk_len(p);
	int bos, eos, ci = ref_chunk_offset(p, n);
	float *scr = ref_alloc(s->scratch, sizeof(float));
	if (!scr)
		return REF_ERR_NOMEM;
	ref_seq_range(p, n, &bos, &eos);
	for (int c0 = bos; c0 < eos; c0 += C, ci++)
		s->fn(s, hv, c0, eos - c0 < C ? eos - c0 : C, ci, scr);
	free(scr);
	return REF_OK;
}

static ref_status run_stage(stage *s, ref_task_fn task)
{
	return ref_parallel_for(s->r->sz.n_seqs * s->p->HV,
				s->p->opts.threads, task, s);
}

static size_t ix_mat(const ref_problem *p, int t, int hv)
{
	return ((size_t)t * p->HV + hv) * ref_chunk_len(p);
}

/* Γ of (t, hv) in channel d (GDN: the scalar). */
static float gam(const ref_problem *p, const ref_chunk *r, int t, int hv,
		 int d)
{
	return r->gcum[ref_ix_g(p, t, hv) + (p->op == REF_KDA ? d : 0)];
}

static float rnd(const ref_problem *p, float x)
{
	return p->opts.dtype == REF_F32 ? x : ref_round(x, p->opts.dtype);
}

/* ---- intra: L, A, Aqk (spec §3.0, §3.4) ------------------------------- */

/* <q_i,k_j>_γ and <k_i,k_j>_γ for j <= i; exponents are <= 0. */
static void gated_dots(const ref_problem *p, const ref_chunk *r, int hv,
		       int ti, int tj, float *qk, float *kk)
{
	const float *qi = r->q + ref_ix_qk(p, ti, hv);
	const float *ki = r->k + ref_ix_qk(p, ti, hv);
	const float *kj = r->k + ref_ix_qk(p, tj, hv);
	float aq = 0, ak = 0;
	for (int d = 0; d < p->K; d++) {
		float e = p->op == REF_KDA ? exp2f(gam(p, r, ti, hv, d) -
						   gam(p, r, tj, hv, d))
					   : 1.0f;
		aq += qi[d] * kj[d] * e;
		ak += ki[d] * kj[d] * e;
	}
	if (p->op == REF_GDN) { /* scalar gate applied after the dot, §3.1 */
		float e = exp2f(gam(p, r, ti, hv, 0) - gam(p, r, tj, hv, 0));
		aq *= e;
		ak *= e;
	}
	*qk = aq;
	*kk = ak;
}

/* A = (I + L)^-1 by forward substitution, X_i = e_i - sum L_im X_m. */
static void invert(const ref_problem *p, ref_chunk *r, int hv, int c0,
		   int nr, float *X)
{
	int C = ref_chunk_len(p);
	for (int i = 0; i < nr; i++) {
		const float *Li = r->L + ix_mat(p, c0 + i, hv);
		for (int j = 0; j < i; j++) {
			float acc = 0;
			for (int m = j; m < i; m++)
				acc += Li[m] * X[m * C + j];
			X[i * C + j] = -acc;
		}
		X[i * C + i] = 1;
		float *Ai = r->A + ix_mat(p, c0 + i, hv);
		for (int j = 0; j < C; j++)
			Ai[j] = j <= i ? rnd(p, X[i * C + j]) : 0;
	}
}

static void intra_chunk(const stage *s, int hv, int c0, int nr, int ci,
			float *scr)
{
	const ref_problem *p = s->p;
	ref_chunk *r = s->r;
	int C = ref_chunk_len(p);
	float sc = (float)ref_scale(p);
	(void)ci;
	for (int i = 0; i < nr; i++) {
		size_t m = ix_mat(p, c0 + i, hv);
		float beta = r->beta[(size_t)(c0 + i) * p->HV + hv];
		for (int j = 0; j < C; j++) {
			float qk = 0, kk = 0;
			if (j <= i)
				gated_dots(p, r, hv, c0 + i, c0 + j, &qk, &kk);
			/* KDA stores Aqk in k.dtype; GDN has no Aqk buffer */
			r->Aqk[m + j] = p->op == REF_KDA ? rnd(p, sc * qk)
							 : sc * qk;
			r->L[m + j] = j < i ? beta * kk : 0;
		}
	}
	invert(p, r, hv, c0, nr, scr);
}

ref_status ref_chunk_intra(const ref_problem *p, ref_chunk *r)
{
	ref_status st = check_chunk(p, r);
	if (st != REF_OK)
		return st;
	int C = ref_chunk_len(p);
	stage s = {.p = p, .r = r, .fn = intra_chunk,
		   .scratch = (size_t)C * C};
	return run_stage(&s, stage_task);
}

/* ---- wu: w, u, kg, qg (spec §3.1 step 3, §3.2 step 3) ----------------- */

/* bv = rnd(beta v), bk = rnd(beta e^γ k) for the rows of one chunk. */
static void wu_operands(const stage *s, int hv, int c0, int nr, float *bv,
			float *bk)
{
	const ref_problem *p = s->p;
	const ref_chunk *r = s->r;
	int K = p->K, V = p->V;
	for (int j = 0; j < nr; j++) {
		int t = c0 + j;
		float b = r->beta[(size_t)t * p->HV + hv];
		const float *v = s->v + ref_ix_v(p, t, hv);
		const float *k = r->k + ref_ix_qk(p, t, hv);
		for (int e = 0; e < V; e++)
			bv[j * V + e] = rnd(p, b * v[e]);
		for (int d = 0; d < K; d++)
			bk[j * K + d] =
				rnd(p, b * exp2f(gam(p, r, t, hv, d)) * k[d]);
	}
}

static void kg_qg(const stage *s, int hv, int c0, int nr)
{
	const ref_problem *p = s->p;
	ref_chunk *r = s->r;
	int last = c0 + nr - 1;
	for (int i = 0; i < nr; i++) {
		int t = c0 + i;
		const float *k = r->k + ref_ix_qk(p, t, hv);
		const float *q = r->q + ref_ix_qk(p, t, hv);
		float *kg = r->kg + ref_ix_kv(p, t, hv);
		float *qg = r->qg + ref_ix_kv(p, t, hv);
		for (int d = 0; d < p->K; d++) {
			float G = gam(p, r, t, hv, d);
			float GL = gam(p, r, last, hv, d);
			kg[d] = rnd(p, k[d] * exp2f(GL - G));
			qg[d] = rnd(p, q[d] * exp2f(G));
		}
	}
}

/* out_i = rnd(sum_{j <= i} A_ij x_j) for rows of width n. */
static void apply_A(const ref_problem *p, const ref_chunk *r, int hv,
		    int c0, int nr, const float *x, int n, float *out,
		    size_t (*ix)(const ref_problem *, int, int))
{
	for (int i = 0; i < nr; i++) {
		const float *Ai = r->A + ix_mat(p, c0 + i, hv);
		float *oi = out + ix(p, c0 + i, hv);
		for (int e = 0; e < n; e++)
			oi[e] = 0;
		for (int j = 0; j <= i; j++)
			for (int e = 0; e < n; e++)
				oi[e] += Ai[j] * x[j * n + e];
		for (int e = 0; e < n; e++)
			oi[e] = rnd(p, oi[e]);
	}
}

static size_t ix_v_fn(const ref_problem *p, int t, int hv)
{
	return ref_ix_v(p, t, hv);
}

static size_t ix_kv_fn(const ref_problem *p, int t, int hv)
{
	return ref_ix_kv(p, t, hv);
}

static void wu_chunk(const stage *s, int hv, int c0, int nr, int ci,
		     float *scr)
{
	const ref_problem *p = s->p;
	float *bv = scr, *bk = scr + (size_t)ref_chunk_len(p) * p->V;
	(void)ci;
	wu_operands(s, hv, c0, nr, bv, bk);
	apply_A(p, s->r, hv, c0, nr, bv, p->V, s->r->u, ix_v_fn);
	apply_A(p, s->r, hv, c0, nr, bk, p->K, s->r->w, ix_kv_fn);
	if (p->op == REF_KDA)
		kg_qg(s, hv, c0, nr);
}

ref_status ref_chunk_wu(const ref_problem *p, const float *v, ref_chunk *r)
{
	ref_status st = check_chunk(p, r);
	if (st != REF_OK || !v)
		return st != REF_OK ? st : REF_ERR_ARG;
	size_t C = ref_chunk_len(p);
	stage s = {.p = p, .r = r, .v = v, .fn = wu_chunk,
		   .scratch = C * (p->K + p->V)};
	return run_stage(&s, stage_task);
}

/* ---- fwd_h: chunk-start states, v_new, final state (spec §3.5) ---------- */

static void state_load32(const ref_problem *p, const float *src, float *S)
{
	int K = p->K, V = p->V;
	for (int a = 0; a < K; a++)
		for (int b = 0; b < V; b++)
			S[a * V + b] = !src ? 0
				       : p->opts.state_v_first ? src[b * K + a]
							       : src[a * V + b];
}

static void state_store32(const ref_problem *p, const float *S, float *dst)
{
	int K = p->K, V = p->V;
	for (int a = 0; a < K; a++)
		for (int b = 0; b < V; b++)
			dst[p->opts.state_v_first ? b * K + a : a * V + b] =
				S[a * V + b];
}

/* v_new = u - w rnd(h); vd = rnd(v_new decayed to the chunk end (GDN) or
 * as is (KDA, whose kg already carries the decay). */
static void fwd_h_vnew(const stage *s, int hv, int c0, int nr,
		       const float *hb, float *vd)
{
	const ref_problem *p = s->p;
	ref_chunk *r = s->r;
	int K = p->K, V = p->V, last = c0 + nr - 1;
	for (int i = 0; i < nr; i++) {
		int t = c0 + i;
		const float *w = r->w + ref_ix_kv(p, t, hv);
		const float *u = r->u + ref_ix_v(p, t, hv);
		float *vn = r->v_new + ref_ix_v(p, t, hv), *vdi = vd + i * V;
		for (int e = 0; e < V; e++)
			vdi[e] = u[e];
		for (int a = 0; a < K; a++)
			for (int e = 0; e < V; e++)
				vdi[e] -= w[a] * hb[a * V + e];
		float f = p->op == REF_GDN
				  ? exp2f(gam(p, r, last, hv, 0) -
					  gam(p, r, t, hv, 0))
				  : 1.0f;
		for (int e = 0; e < V; e++) {
			vn[e] = rnd(p, vdi[e]);
			vdi[e] = rnd(p, vdi[e] * f);
		}
	}
}

/* h <- Λ h + k_c^T vd, with k_c = k (GDN) or kg (KDA). */
static void fwd_h_update(const stage *s, int hv, int c0, int nr, float *h,
			 const float *vd)
{
	const ref_problem *p = s->p;
	const ref_chunk *r = s->r;
	int K = p->K, V = p->V, last = c0 + nr - 1;
	for (int a = 0; a < K; a++) {
		float e = exp2f(gam(p, r, last, hv, a));
		for (int b = 0; b < V; b++)
			h[a * V + b] *= e;
	}
	for (int i = 0; i < nr; i++) {
		int t = c0 + i;
		const float *k = p->op == REF_KDA ? r->kg + ref_ix_kv(p, t, hv)
						  : r->k + ref_ix_qk(p, t, hv);
		for (int a = 0; a < K; a++)
			for (int b = 0; b < V; b++)
				h[a * V + b] += k[a] * vd[i * V + b];
	}
}

static ref_status fwd_h_task(void *vs, int task)
{
	const stage *s = vs;
	const ref_problem *p = s->p;
	int n = task / p->HV, hv = task % p->HV, C = ref_chunk_len(p);
	int bos, eos, ci = ref_chunk_offset(p, n);
	size_t kv = (size_t)p->K * p->V;
	float *h = ref_alloc(2 * kv + (size_t)C * p->V, sizeof(float));
	if (!h)
		return REF_ERR_NOMEM;
	float *hb = h + kv, *vd = hb + kv;
	ref_seq_range(p, n, &bos, &eos);
	state_load32(p, s->h0 ? s->h0 + ref_ix_state(p, n, hv) : NULL, h);
	for (int c0 = bos; c0 < eos; c0 += C, ci++) {
		int nr = eos - c0 < C ? eos - c0 : C;
		for (size_t i = 0; i < kv; i++)
			hb[i] = rnd(p, h[i]);
		state_store32(p, hb, s->r->h + ref_ix_state(p, ci, hv));
		fwd_h_vnew(s, hv, c0, nr, hb, vd);
		fwd_h_update(s, hv, c0, nr, h, vd);
	}
	state_store32(p, h, s->r->ht + ref_ix_state(p, n, hv));
	free(h);
	return REF_OK;
}

ref_status ref_chunk_fwd_h(const ref_problem *p, const float *h0,
			   ref_chunk *r)
{
	ref_status st = check_chunk(p, r);
	if (st != REF_OK)
		return st;
	stage s = {.p = p, .r = r, .h0 = h0};
	return run_stage(&s, fwd_h_task);
}

/* ---- fwd_o (spec §3.1 step 5, §3.2 step 5) ---------------------------- */

/* s (q_i e^γ_i) h_c: GDN gates after the dot, KDA uses qg (rounded). */
static void o_inter(const ref_problem *p, const ref_chunk *r, int hv, int t,
		    const float *hb, float *o)
{
	int K = p->K, V = p->V;
	const float *q = p->op == REF_KDA ? r->qg + ref_ix_kv(p, t, hv)
					  : r->q + ref_ix_qk(p, t, hv);
	float sc = (float)ref_scale(p);
	for (int e = 0; e < V; e++)
		o[e] = 0;
	for (int a = 0; a < K; a++)
		for (int e = 0; e < V; e++)
			o[e] += q[a] * hb[a * V + e];
	float f = p->op == REF_GDN ? exp2f(gam(p, r, t, hv, 0)) : 1.0f;
	for (int e = 0; e < V; e++)
		o[e] *= sc * f;
}

/* Intra-chunk weight of v_new_j in o_i: KDA Aqk, GDN s rnd(P_ij). */
static float o_weight(const ref_problem *p, const ref_chunk *r, int hv,
		      int ti, int tj, int j)
{
	if (p->op == REF_KDA)
		return r->Aqk[ix_mat(p, ti, hv) + j];
	float qk, kk;
	gated_dots(p, r, hv, ti, tj, &qk, &kk);
	return (float)ref_scale(p) * rnd(p, qk);
}

static void fwd_o_chunk(const stage *s, int hv, int c0, int nr, int ci,
			float *scr)
{
	const ref_problem *p = s->p;
	ref_chunk *r = s->r;
	int V = p->V;
	float *hb = scr, *o = scr + (size_t)p->K * V;
	state_load32(p, r->h + ref_ix_state(p, ci, hv), hb);
	for (int i = 0; i < nr; i++) {
		int t = c0 + i;
		o_inter(p, r, hv, t, hb, o);
		for (int j = 0; j <= i; j++) {
			float a = o_weight(p, r, hv, t, c0 + j, j);
			const float *vn = r->v_new + ref_ix_v(p, c0 + j, hv);
			for (int e = 0; e < V; e++)
				o[e] += a * vn[e];
		}
		float *out = r->o + ref_ix_v(p, t, hv);
		for (int e = 0; e < V; e++)
			out[e] = rnd(p, o[e]);
	}
}

ref_status ref_chunk_fwd_o(const ref_problem *p, ref_chunk *r)
{
	ref_status st = check_chunk(p, r);
	if (st != REF_OK)
		return st;
	stage s = {.p = p, .r = r, .fn = fwd_o_chunk,
		   .scratch = (size_t)p->K * p->V + p->V};
	return run_stage(&s, stage_task);
}

ref_status ref_chunk_forward(const ref_problem *p, const ref_in32 *in,
			     ref_chunk *r)
{
	ref_status s = ref_chunk_prepare(p, in, r);
	if (s == REF_OK)
		s = ref_chunk_intra(p, r);
	if (s == REF_OK)
		s = ref_chunk_wu(p, in->v, r);
	if (s == REF_OK)
		s = ref_chunk_fwd_h(p, in->h0, r);
	if (s == REF_OK)
		s = ref_chunk_fwd_o(p, r);
	return s;
}
