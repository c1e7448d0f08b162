/*
 * ref_generate.c - seeded inputs for FLA's test cases (spec §7.2, §7.3).
 * Every tensor draws from its own stream (seed, tensor id), so adding a
 * tensor never shifts another's numbers, then is rounded to the dtype FLA
 * creates it in ("dt" = the case dtype, else fp32). FLA seeds torch with
 * 42 per case; we cannot reproduce torch's numbers, only its
 * distributions (U[0,1) in a dtype is drawn as torch.rand does: a
 * multiple of 2^-digits, 11 digits for fp16, 8 for bf16, 24 for fp32):
 *
 *   KDA test_chunk (and the state_v_first / beta-sigmoid suites):
 *     q, k, v ~ U[0,1) dt, q and k F.normalize'd unless l2norm in kernel;
 *     beta = sigmoid(N) dt (raw N dt with beta sigmoid, inferred);
 *     h0 ~ N; gate in kernel: g ~ N dt, A_log ~ N(HV), dt_bias ~ N(HV K);
 *     else g = logsigmoid(N)/norm, 0 where U < mask_p, clamped to [-5, 0]
 *     with safe_gate; do ~ N dt, dht ~ N.
 *   KDA varlen: q ~ N dt, k = normalize(N) dt, v ~ N dt,
 *     beta = sigmoid(U) dt, A_log = log U(1,16), dt_bias ~ N; g ~ N dt
 *     (gate in kernel, inferred) or logsigmoid(N) (inferred); entries with
 *     U < mask_p set to -1000, then the safe_gate clamp; h0 ~ N,
 *     do ~ N dt, dht ~ U.
 *   GDN test_chunk: q, k, v ~ U[0,1) fp16, q and k normalized; beta =
 *     sigmoid(U) fp32; g = logsigmoid(U)/norm, 0 where U < mask_p; h0 = 0;
 *     do ~ N fp16, dht ~ N.
 *   GDN varlen: q ~ N, k = normalize(N), v ~ N (fp16); beta = sigmoid(U)
 *     fp32 (inferred); g = logsigmoid(U) fp16, 0 where U < mask_p
 *     (inferred); h0 ~ N fp16; do ~ N fp16, dht ~ U.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ref_internal.h"

enum stream { S_Q = 1, S_K, S_V, S_G, S_MASK, S_BETA, S_H0, S_ALOG,
	      S_BIAS, S_DO, S_DHT };

typedef double (*draw_fn)(ref_rng *r);

static double uni(ref_rng *r) { return ref_rng_uniform(r); }
static double nrm(ref_rng *r) { return ref_rng_normal(r); }
static double sig_n(ref_rng *r) { return ref_sigmoid(ref_rng_normal(r)); }
static double sig_u(ref_rng *r) { return ref_sigmoid(ref_rng_uniform(r)); }
static double logsig_n(ref_rng *r) { return -ref_softplus(-nrm(r)); }
static double logsig_u(ref_rng *r) { return -ref_softplus(-uni(r)); }
static double log_u16(ref_rng *r) { return log(1.0 + 15.0 * uni(r)); }

typedef struct gen {
	const ref_case *c;
	ref_case_data *d;
	uint64_t seed;
	ref_dtype dt; /* the case dtype */
} gen;

static void fill(const gen *G, float *x, size_t n, int stream, draw_fn f,
		 double div, ref_dtype dt)
{
	ref_rng r;
	ref_rng_seed(&r, G->seed, (uint64_t)stream);
	for (size_t i = 0; i < n; i++)
		x[i] = ref_round((float)(f(&r) / div), dt);
}

/* torch.rand in dtype dt: k 2^-digits, k uniform, so always < 1. */
static void fill_uniform(const gen *G, float *x, size_t n, int stream,
			 ref_dtype dt)
{
	double scale = dt == REF_F16 ? 2048 : dt == REF_BF16 ? 256 : 1 << 24;
	ref_rng r;
	ref_rng_seed(&r, G->seed, (uint64_t)stream);
	for (size_t i = 0; i < n; i++)
		x[i] = (float)(floor(ref_rng_uniform(&r) * scale) / scale);
}

/* F.normalize: x / max(||x||, 1e-12) per row, result in dt. */
static void normalize_rows(float *x, size_t rows, int K, ref_dtype dt)
{
	for (size_t r = 0; r < rows; r++) {
		double ss = 0;
		for (int d = 0; d < K; d++)
			ss += (double)x[r * K + d] * x[r * K + d];
		double nrm2 = fmax(sqrt(ss), 1e-12);
		for (int d = 0; d < K; d++)
			x[r * K + d] = ref_round((float)(x[r * K + d] / nrm2),
						 dt);
	}
}

static void mask_set(const gen *G, float *x, size_t n, double p, float val)
{
	ref_rng r;
	ref_rng_seed(&r, G->seed, S_MASK);
	for (size_t i = 0; i < n; i++)
		if (ref_rng_uniform(&r) < p)
			x[i] = val;
}

static void clamp_gate(const gen *G, float *g, size_t n)
{
	if (!G->c->safe_gate || G->c->gate_in_kernel)
		return;
	for (size_t i = 0; i < n; i++)
		g[i] = fminf(fmaxf(g[i], -5.0f), 0.0f);
}

static void gen_kda_chunk(const gen *G)
{
	const ref_case *c = G->c;
	ref_case_data *d = G->d;
	const ref_sizes *z = &d->sz;
	fill_uniform(G, d->q, z->qk, S_Q, G->dt);
	fill_uniform(G, d->k, z->qk, S_K, G->dt);
	fill_uniform(G, d->v, z->v, S_V, G->dt);
	if (!c->l2norm_in_kernel) {
		normalize_rows(d->q, z->qk / c->D, c->D, G->dt);
		normalize_rows(d->k, z->qk / c->D, c->D, G->dt);
	}
	fill(G, d->beta, z->beta, S_BETA, c->beta_sigmoid ? nrm : sig_n, 1,
	     G->dt);
	fill(G, d->h0, z->state, S_H0, nrm, 1, REF_F32);
	if (c->gate_in_kernel) {
		fill(G, d->g, z->g, S_G, nrm, 1, G->dt);
		fill(G, d->A_log, z->A_log, S_ALOG, nrm, 1, REF_F32);
		fill(G, d->dt_bias, z->dt_bias, S_BIAS, nrm, 1, REF_F32);
	} else {
		fill(G, d->g, z->g, S_G, logsig_n, c->gate_norm, REF_F32);
		mask_set(G, d->g, z->g, c->mask_p, 0.0f);
		clamp_gate(G, d->g, z->g);
	}
	fill(G, d->dout, z->v, S_DO, nrm, 1, G->dt);
	fill(G, d->dht, z->state, S_DHT, nrm, 1, REF_F32);
}

static void gen_kda_varlen(const gen *G)
{
	const ref_case *c = G->c;
	ref_case_data *d = G->d;
	const ref_sizes *z = &d->sz;
	fill(G, d->q, z->qk, S_Q, nrm, 1, G->dt);
	fill(G, d->k, z->qk, S_K, nrm, 1, G->dt);
	normalize_rows(d->k, z->qk / c->D, c->D, G->dt);
	fill(G, d->v, z->v, S_V, nrm, 1, G->dt);
	fill(G, d->beta, z->beta, S_BETA, sig_u, 1, G->dt);
	fill(G, d->h0, z->state, S_H0, nrm, 1, REF_F32);
	if (c->gate_in_kernel) {
		fill(G, d->g, z->g, S_G, nrm, 1, G->dt);
		fill(G, d->A_log, z->A_log, S_ALOG, log_u16, 1, REF_F32);
		fill(G, d->dt_bias, z->dt_bias, S_BIAS, nrm, 1, REF_F32);
	} else {
		fill(G, d->g, z->g, S_G, logsig_n, c->gate_norm, REF_F32);
	}
	mask_set(G, d->g, z->g, c->mask_p, -1000.0f);
	clamp_gate(G, d->g, z->g);
	fill(G, d->dout, z->v, S_DO, nrm, 1, G->dt);
	fill_uniform(G, d->dht, z->state, S_DHT, REF_F32);
}

static void gen_gdn_chunk(const gen *G)
{
	const ref_case *c = G->c;
	ref_case_data *d = G->d;
	const ref_sizes *z = &d->sz;
	fill_uniform(G, d->q, z->qk, S_Q, G->dt);
	fill_uniform(G, d->k, z->qk, S_K, G->dt);
	fill_uniform(G, d->v, z->v, S_V, G->dt);
	if (!c->l2norm_in_kernel) {
		normalize_rows(d->q, z->qk / c->D, c->D, G->dt);
		normalize_rows(d->k, z->qk / c->D, c->D, G->dt);
	}
	fill(G, d->beta, z->beta, S_BETA, sig_u, 1, REF_F32);
	fill(G, d->g, z->g, S_G, logsig_u, c->gate_norm, REF_F32);
	mask_set(G, d->g, z->g, c->mask_p, 0.0f);
	memset(d->h0, 0, z->state * sizeof(float));
	fill(G, d->dout, z->v, S_DO, nrm, 1, G->dt);
	fill(G, d->dht, z->state, S_DHT, nrm, 1, REF_F32);
}

static void gen_gdn_varlen(const gen *G)
{
	const ref_case *c = G->c;
	ref_case_data *d = G->d;
	const ref_sizes *z = &d->sz;
	fill(G, d->q, z->qk, S_Q, nrm, 1, G->dt);
	fill(G, d->k, z->qk, S_K, nrm, 1, G->dt);
	normalize_rows(d->k, z->qk / c->D, c->D, G->dt);
	fill(G, d->v, z->v, S_V, nrm, 1, G->dt);
	fill(G, d->beta, z->beta, S_BETA, sig_u, 1, REF_F32);
	fill(G, d->g, z->g, S_G, logsig_u, c->gate_norm, REF_F16);
	mask_set(G, d->g, z->g, c->mask_p, 0.0f);
	fill(G, d->h0, z->state, S_H0, nrm, 1, REF_F16);
	fill(G, d->dout, z->v, S_DO, nrm, 1, G->dt);
	fill_uniform(G, d->dht, z->state, S_DHT, REF_F32);
}

static void case_problem(const ref_case *c, ref_case_data *d)
{
	ref_problem *p = &d->p;
	*p = (ref_problem){.op = c->op, .B = c->B, .T = c->T, .H = c->H,
			   .HV = c->HV, .K = c->D, .V = c->D};
	if (c->varlen && c->n_cu >= 2 && c->n_cu <= 8) {
		memcpy(d->cu, c->cu, sizeof(int64_t) * c->n_cu);
		p->cu_seqlens = d->cu;
		p->n_seqs = c->n_cu - 1;
	}
	ref_opts *o = &p->opts;
	o->scale = c->scale;
	o->use_qk_l2norm_in_kernel = c->l2norm_in_kernel;
	o->use_beta_sigmoid_in_kernel = c->beta_sigmoid;
	o->allow_neg_eigval = c->neg_eigval;
	o->use_gate_in_kernel = c->gate_in_kernel;
	o->has_lower_bound = c->safe_gate && c->op == REF_KDA;
	o->lower_bound = -5.0; /* spec §7.2: safe_gate tests use lb = -5 */
	o->safe_gate = c->safe_gate;
	o->state_v_first = c->state_v_first;
	o->chunk_size = c->chunk_size;
	o->dtype = c->dtype;
	o->threads = 1;
}

void ref_case_data_free(ref_case_data *d)
{
	if (!d)
		return;
	float **all[] = {&d->q, &d->k, &d->v, &d->g, &d->beta, &d->A_log,
			 &d->dt_bias, &d->h0, &d->dout, &d->dht};
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		free(*all[i]);
		*all[i] = NULL;
	}
}

static ref_status alloc_data(const ref_case *c, ref_case_data *d)
{
	const ref_sizes *z = &d->sz;
	size_t fs = sizeof(float);
	d->q = ref_alloc(z->qk, fs), d->k = ref_alloc(z->qk, fs);
	d->v = ref_alloc(z->v, fs), d->dout = ref_alloc(z->v, fs);
	d->g = ref_alloc(z->g, fs), d->beta = ref_alloc(z->beta, fs);
	d->h0 = ref_alloc(z->state, fs), d->dht = ref_alloc(z->state, fs);
	bool ok = d->q && d->k && d->v && d->dout && d->g && d->beta &&
		  d->h0 && d->dht;
	if (c->gate_in_kernel) {
		d->A_log = ref_alloc(z->A_log, fs);
		d->dt_bias = ref_alloc(z->dt_bias, fs);
		ok = ok && d->A_log && d->dt_bias;
	}
	if (ok)
		return REF_OK;
	ref_case_data_free(d);
	return REF_ERR_NOMEM;
}

ref_status ref_case_generate(const ref_case *c, uint64_t seed,
			     ref_case_data *d)
{
	if (!c || !d)
		return REF_ERR_ARG;
	memset(d, 0, sizeof(*d));
	if (c->D < 1 || (c->varlen && (c->n_cu < 2 || c->n_cu > 8)))
		return REF_ERR_SHAPE;
	case_problem(c, d);
	ref_status s = ref_problem_sizes(&d->p, &d->sz);
	if (s != REF_OK || (s = alloc_data(c, d)) != REF_OK)
		return s;
	gen G = {.c = c, .d = d, .seed = seed, .dt = c->dtype};
	if (c->op == REF_KDA)
		(c->varlen ? gen_kda_varlen : gen_kda_chunk)(&G);
	else
		(c->varlen ? gen_gdn_varlen : gen_gdn_chunk)(&G);
	return REF_OK;
}

ref_in32 ref_case_in32(const ref_case_data *d)
{
	return (ref_in32){.q = d->q, .k = d->k, .v = d->v, .g = d->g,
			  .beta = d->beta, .A_log = d->A_log,
			  .dt_bias = d->dt_bias, .h0 = d->h0};
}

static double *dup64(const float *x, size_t n, bool *ok)
{
	if (!x)
		return NULL;
	double *y = ref_alloc(n, sizeof(double));
	if (!y) {
		*ok = false;
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		y[i] = x[i];
	return y;
}

void ref_tensors64_free(ref_tensors64 *t)
{
	if (!t)
		return;
	double **all[] = {&t->q, &t->k, &t->v, &t->g, &t->beta, &t->A_log,
			  &t->dt_bias, &t->h0, &t->dout, &t->dht};
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		free(*all[i]);
		*all[i] = NULL;
	}
	memset(&t->in, 0, sizeof(t->in));
}

ref_status ref_case_to_f64(const ref_case_data *d, ref_tensors64 *t)
{
	if (!d || !t)
		return REF_ERR_ARG;
	const ref_sizes *z = &d->sz;
	bool ok = true;
	memset(t, 0, sizeof(*t));
	t->q = dup64(d->q, z->qk, &ok), t->k = dup64(d->k, z->qk, &ok);
	t->v = dup64(d->v, z->v, &ok), t->dout = dup64(d->dout, z->v, &ok);
	t->g = dup64(d->g, z->g, &ok), t->beta = dup64(d->beta, z->beta, &ok);
	t->A_log = dup64(d->A_log, z->A_log, &ok);
	t->dt_bias = dup64(d->dt_bias, z->dt_bias, &ok);
	t->h0 = dup64(d->h0, z->state, &ok);
	t->dht = dup64(d->dht, z->state, &ok);
	if (!ok) {
		ref_tensors64_free(t);
		return REF_ERR_NOMEM;
	}
	t->in = (ref_in64){.q = t->q, .k = t->k, .v = t->v, .g = t->g,
			   .beta = t->beta, .A_log = t->A_log,
			   .dt_bias = t->dt_bias, .h0 = t->h0};
	return REF_OK;
}
