/*
 * ref_testutil.c - see ref_testutil.h. Inputs of the small problems are
 * drawn so every option stays well conditioned: q, k, v, h0 ~ N(0,1);
 * pre-gated g = logsigmoid(N) - 0.05 (strictly negative); raw gate input,
 * A_log and dt_bias ~ N(0, 0.5^2); beta ~ U(0.1, 1), or N as the raw
 * input of the in-kernel sigmoid; dout, dht ~ N.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "ref_testutil.h"

static double *draw(ref_rng *r, size_t n, double (*f)(ref_rng *))
{
	double *x = malloc((n ? n : 1) * sizeof(double));
	for (size_t i = 0; x && i < n; i++)
		x[i] = f(r);
	return x;
}

static double f_normal(ref_rng *r) { return ref_rng_normal(r); }
static double f_half(ref_rng *r) { return 0.5 * ref_rng_normal(r); }
static double f_beta(ref_rng *r) { return 0.1 + 0.9 * ref_rng_uniform(r); }
static double f_logsig(ref_rng *r)
{
	return -ref_softplus(-ref_rng_normal(r)) - 0.05;
}

static void set_view(tu_data *d)
{
	d->in = (ref_in64){.q = d->q, .k = d->k, .v = d->v, .g = d->g,
			   .beta = d->beta, .A_log = d->A_log,
			   .dt_bias = d->dt_bias, .h0 = d->h0};
}

ref_status tu_make(tu_data *d, const ref_problem *p, uint64_t seed,
		   unsigned flags)
{
	memset(d, 0, sizeof(*d));
	d->p = *p;
	if (p->cu_seqlens && p->n_seqs >= 0 && p->n_seqs < 16) {
		memcpy(d->cu, p->cu_seqlens, (p->n_seqs + 1) * sizeof(int64_t));
		d->p.cu_seqlens = d->cu;
	}
	ref_status s = ref_problem_sizes(&d->p, &d->sz);
	if (s != REF_OK)
		return s;
	const ref_sizes *z = &d->sz;
	const ref_opts *o = &p->opts;
	ref_rng r;
	ref_rng_seed(&r, seed, 0);
	d->q = draw(&r, z->qk, f_normal), d->k = draw(&r, z->qk, f_normal);
	d->v = draw(&r, z->v, f_normal), d->dout = draw(&r, z->v, f_normal);
	d->g = draw(&r, z->g, o->use_gate_in_kernel ? f_half : f_logsig);
	d->beta = draw(&r, z->beta,
		       o->use_beta_sigmoid_in_kernel ? f_normal : f_beta);
	d->dht = draw(&r, z->state, f_normal);
	if (flags & TU_H0)
		d->h0 = draw(&r, z->state, f_normal);
	if (flags & TU_A_LOG)
		d->A_log = draw(&r, z->A_log, f_half);
	if (flags & TU_DT_BIAS)
		d->dt_bias = draw(&r, z->dt_bias, f_half);
	set_view(d);
	return REF_OK;
}

void tu_free(tu_data *d)
{
	double *all[] = {d->q, d->k, d->v, d->g, d->beta, d->A_log,
			 d->dt_bias, d->h0, d->dout, d->dht};
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		free(all[i]);
	memset(d, 0, sizeof(*d));
}

double tu_loss(const tu_data *d)
{
	double *o = calloc(d->sz.v + 1, sizeof(double));
	double *ht = calloc(d->sz.state + 1, sizeof(double));
	ref_fwd64 out = {.o = o, .ht = ht};
	double L = NAN;
	if (o && ht && ref_recurrent_fwd(&d->p, &d->in, &out) == REF_OK) {
		L = 0;
		for (size_t i = 0; i < d->sz.v; i++)
			L += o[i] * d->dout[i];
		for (size_t i = 0; i < d->sz.state; i++)
			L += ht[i] * d->dht[i];
	}
	free(o);
	free(ht);
	return L;
}

double *tu_f64(const float *x, size_t n)
{
	double *y = malloc((n ? n : 1) * sizeof(double));
	for (size_t i = 0; y && i < n; i++)
		y[i] = x[i];
	return y;
}

float *tu_f32(const double *x, size_t n)
{
	float *y = malloc((n ? n : 1) * sizeof(float));
	for (size_t i = 0; y && i < n; i++)
		y[i] = (float)x[i];
	return y;
}

double *tu_zeros(size_t n)
{
	return calloc(n ? n : 1, sizeof(double));
}

double tu_max_abs_diff(const double *a, const double *b, size_t n)
{
	double m = 0;
	for (size_t i = 0; i < n; i++) {
		double e = fabs(a[i] - b[i]);
		if (!(e <= m))
			m = e; /* also propagates NaN */
	}
	return m;
}

double tu_rel_max(const double *a, const double *b, size_t n)
{
	double mb = 0;
	for (size_t i = 0; i < n; i++)
		mb = fmax(mb, fabs(b[i]));
	return tu_max_abs_diff(a, b, n) / (mb + 1e-300);
}

int tu_threads(void)
{
	const char *s = getenv("TILEREF_THREADS");
	int n = s ? atoi(s) : 2;
	return n >= 1 ? n : 1;
}

void tu_filter(void)
{
	const char *f = getenv("TILEREF_FILTER");
	if (f && *f)
		cmocka_set_test_filter(f);
}
