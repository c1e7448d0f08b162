/*
 * test_ref_gates.c - the input transforms of spec §2 (ref_gates.c):
 *   - softplus and sigmoid at values derivable by hand, and at extremes;
 *   - every gate form against its formula written out here (GDN softplus,
 *     KDA softplus, KDA lower bound with and without A_log and dt_bias);
 *   - the gate backward (dg_raw, dA_log, ddt_bias) against central
 *     differences of the gate forward, with g = 10 randn as FLA's
 *     test_gate draws it;
 *   - l2norm forward by hand and backward by finite differences;
 *   - in-kernel gate and beta sigmoid equal the same transforms applied
 *     outside the op (FLA's test_chunk_use_beta_sigmoid_in_kernel and
 *     gate-in-kernel tests), forward and backward.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ref_testutil.h"

static void test_ref_softplus_and_sigmoid_by_hand(void **state)
{
	(void)state;
	tu_assert_near(ref_softplus(0), log(2.0), 1e-16);
	tu_assert_near(ref_softplus(1), log(1 + exp(1.0)), 1e-15);
	tu_assert_near(ref_softplus(20.5), 20.5, 0);  /* threshold: x */
	tu_assert_near(ref_softplus(-40), exp(-40.0), 1e-30);
	tu_assert_near(ref_softplus(1000), 1000, 0);
	tu_assert_near(ref_sigmoid(0), 0.5, 0);
	tu_assert_near(ref_sigmoid(2) + ref_sigmoid(-2), 1, 3e-16);
	tu_assert_near(ref_sigmoid(1000), 1, 0);
	tu_assert_near(ref_sigmoid(-1000), 0, 0);
	tu_assert_near(ref_sigmoid(-745), exp(-745.0), 1e-320);
}

static ref_problem gate_problem(ref_op op, bool lb)
{
	ref_problem p = {.op = op, .B = 2, .T = 5, .H = 1, .HV = 3, .K = 4,
			 .V = 2};
	p.opts.use_gate_in_kernel = true;
	p.opts.has_lower_bound = lb;
	p.opts.lower_bound = -5;
	return p;
}

/* The gate formulas of spec §2.3 and §2.4, written out independently. */
static double gate_formula(const ref_problem *p, double x, const double *A,
			   int hv)
{
	if (p->op == REF_KDA && p->opts.has_lower_bound) {
		double a = A ? exp(A[hv]) : 1;
		return p->opts.lower_bound / (1 + exp(-a * x));
	}
	double sp = x > 20 ? x : log(1 + exp(x));
	return -exp(A[hv]) * sp;
}

static void gate_vs_formula(ref_op op, bool lb, bool with_A, bool with_b)
{
	ref_problem p = gate_problem(op, lb);
	tu_data d;
	unsigned f = (with_A ? TU_A_LOG : 0) | (with_b ? TU_DT_BIAS : 0);
	assert_int_equal(tu_make(&d, &p, 1, f), REF_OK);
	int W = op == REF_KDA ? p.K : 1;
	for (size_t i = 0; i < d.sz.g; i++)
		d.g[i] *= 20; /* g ~ 10 randn, FLA's test_gate */
	double *g = tu_zeros(d.sz.g);
	assert_int_equal(ref_gate_fwd(&p, d.g, d.A_log, d.dt_bias, g), REF_OK);
	for (size_t i = 0; i < d.sz.g; i++) {
		int hv = (int)(i / W % p.HV), c = (int)(i % W);
		double b = d.dt_bias ? d.dt_bias[hv * W + c] : 0;
		double want = gate_formula(&p, d.g[i] + b, d.A_log, hv);
		tu_assert_near(g[i], want, 1e-13 * (1 + fabs(want)));
	}
	free(g);
	tu_free(&d);
}

static void test_ref_gates_match_formulas(void **state)
{
	(void)state;
	gate_vs_formula(REF_GDN, false, true, true);
	gate_vs_formula(REF_GDN, false, true, false);
	gate_vs_formula(REF_KDA, false, true, true);
	gate_vs_formula(REF_KDA, false, true, false);
	gate_vs_formula(REF_KDA, true, true, true);
	gate_vs_formula(REF_KDA, true, false, true);
	gate_vs_formula(REF_KDA, true, false, false);
}

/* L = sum w_i g_i(g_raw, A_log, dt_bias) for fixed random weights w. */
static double gate_loss(const ref_problem *p, const tu_data *d,
			const double *w, double *g)
{
	assert_int_equal(ref_gate_fwd(p, d->g, d->A_log, d->dt_bias, g),
			 REF_OK);
	double L = 0;
	for (size_t i = 0; i < d->sz.g; i++)
		L += w[i] * g[i];
	return L;
}

static void fd_param(const ref_problem *p, tu_data *d, const double *w,
		     double *x, size_t n, const double *grad)
{
	double *g = tu_zeros(d->sz.g), h = 1e-6;
	for (size_t i = 0; x && i < n; i++) {
		double x0 = x[i];
		x[i] = x0 + h;
		double lp = gate_loss(p, d, w, g);
		x[i] = x0 - h;
		double lm = gate_loss(p, d, w, g);
		x[i] = x0;
		double fd = (lp - lm) / (2 * h);
		tu_assert_near(fd, grad[i], 1e-6 * (1 + fabs(grad[i])));
	}
	free(g);
}

static void gate_bwd_vs_fd(ref_op op, bool lb, unsigned flags)
{
	ref_problem p = gate_problem(op, lb);
	tu_data d;
	assert_int_equal(tu_make(&d, &p, 2, flags), REF_OK);
	for (size_t i = 0; i < d.sz.g; i++)
		d.g[i] *= 6; /* spread over the softplus and sigmoid ranges */
	double *dg_raw = tu_zeros(d.sz.g), *dA = tu_zeros(p.HV);
	double *db = tu_zeros(d.sz.dt_bias), *w = tu_zeros(d.sz.g);
	ref_rng r;
	ref_rng_seed(&r, 3, 0);
	for (size_t i = 0; i < d.sz.g; i++)
		w[i] = ref_rng_normal(&r); /* w = dL/dg */
	assert_int_equal(ref_gate_bwd(&p, d.g, d.A_log, d.dt_bias, w, dg_raw,
				      dA, db), REF_OK);
	fd_param(&p, &d, w, d.g, d.sz.g, dg_raw);
	fd_param(&p, &d, w, d.A_log, p.HV, dA);
	fd_param(&p, &d, w, d.dt_bias, d.sz.dt_bias, db);
	if (!d.A_log)
		assert_true(dA[0] == 0 && dA[1] == 0 && dA[2] == 0);
	free(dg_raw), free(dA), free(db), free(w);
	tu_free(&d);
}

static void test_ref_gate_bwd_matches_fd(void **state)
{
	(void)state;
	gate_bwd_vs_fd(REF_GDN, false, TU_A_LOG | TU_DT_BIAS);
	gate_bwd_vs_fd(REF_KDA, false, TU_A_LOG | TU_DT_BIAS);
	gate_bwd_vs_fd(REF_KDA, true, TU_A_LOG | TU_DT_BIAS);
	gate_bwd_vs_fd(REF_KDA, true, TU_DT_BIAS);
	gate_bwd_vs_fd(REF_KDA, true, 0);
}

/* Without use_gate_in_kernel, g passes through (chunk_kda ignores A_log
 * and dt_bias then, spec §2.4) and the parameter gradients are zero. */
static void test_ref_gate_off_is_identity(void **state)
{
	(void)state;
	ref_problem p = gate_problem(REF_KDA, false);
	p.opts.use_gate_in_kernel = false;
	tu_data d;
	assert_int_equal(tu_make(&d, &p, 3, TU_A_LOG | TU_DT_BIAS), REF_OK);
	double *g = tu_zeros(d.sz.g), *dg = tu_zeros(d.sz.g);
	double *up = tu_zeros(d.sz.g), dA[3] = {1, 1, 1};
	for (size_t i = 0; i < d.sz.g; i++)
		up[i] = 0.5 + (double)i; /* an upstream dL/dg */
	assert_int_equal(ref_gate_fwd(&p, d.g, d.A_log, d.dt_bias, g), REF_OK);
	assert_memory_equal(g, d.g, d.sz.g * sizeof(double));
	assert_int_equal(ref_gate_bwd(&p, d.g, d.A_log, d.dt_bias, up, dg,
				      dA, NULL), REF_OK);
	assert_memory_equal(dg, up, d.sz.g * sizeof(double));
	assert_true(dA[0] == 0 && dA[1] == 0 && dA[2] == 0);
	p.op = REF_GDN, p.opts.use_gate_in_kernel = true;
	assert_int_equal(ref_gate_fwd(&p, d.g, NULL, NULL, g), REF_ERR_ARG);
	free(g), free(dg), free(up);
	tu_free(&d);
}

/* x = (3, 4): y = x / sqrt(25 + 1e-6) (eps on the sum of squares). */
static void test_ref_l2norm_by_hand(void **state)
{
	(void)state;
	double x[2] = {3, 4}, y[2];
	ref_l2norm_fwd(x, 1, 2, y);
	tu_assert_near(y[0], 3 / sqrt(25.000001), 1e-16);
	tu_assert_near(y[1], 4 / sqrt(25.000001), 1e-16);
	double z[3] = {0, 0, 0}, yz[3];
	ref_l2norm_fwd(z, 1, 3, yz); /* zero row stays zero, no NaN */
	assert_true(yz[0] == 0 && yz[1] == 0 && yz[2] == 0);
}

static void test_ref_l2norm_bwd_matches_fd(void **state)
{
	(void)state;
	ref_rng r;
	ref_rng_seed(&r, 4, 0);
	enum { ROWS = 3, K = 5 };
	double x[ROWS * K], w[ROWS * K], dx[ROWS * K], y[ROWS * K];
	for (int i = 0; i < ROWS * K; i++)
		x[i] = ref_rng_normal(&r) * (i < K ? 1e-3 : 1),
		w[i] = ref_rng_normal(&r);
	ref_l2norm_bwd(x, w, ROWS, K, dx);
	for (int i = 0; i < ROWS * K; i++) {
		double x0 = x[i], h = 1e-7, lp = 0, lm = 0;
		x[i] = x0 + h;
		ref_l2norm_fwd(x, ROWS, K, y);
		for (int j = 0; j < ROWS * K; j++)
			lp += w[j] * y[j];
		x[i] = x0 - h;
		ref_l2norm_fwd(x, ROWS, K, y);
		for (int j = 0; j < ROWS * K; j++)
			lm += w[j] * y[j];
		x[i] = x0;
		tu_assert_near((lp - lm) / (2 * h), dx[i],
			       1e-5 * (1 + fabs(dx[i])));
	}
}

typedef struct run {
	double *o, *ht, *buf;
	ref_grads64 g;
} run;

static run run_both(const ref_problem *p, const tu_data *d,
		    const ref_in64 *in)
{
	const ref_sizes *z = &d->sz;
	run r = {tu_zeros(z->v), tu_zeros(z->state), NULL, {0}};
	ref_fwd64 out = {.o = r.o, .ht = r.ht};
	assert_int_equal(ref_recurrent_fwd(p, in, &out), REF_OK);
	r.buf = tu_zeros(z->g + z->beta + z->A_log + z->dt_bias);
	r.g.dg = r.buf;
	r.g.dbeta = r.buf + z->g;
	r.g.dA_log = r.g.dbeta + z->beta;
	r.g.ddt_bias = r.g.dA_log + z->A_log;
	assert_int_equal(ref_recurrent_bwd(p, in, d->dout, d->dht, &r.g),
			 REF_OK);
	return r;
}

static void run_free(run *r)
{
	free(r->o), free(r->ht), free(r->buf);
}

/* beta sigmoid in kernel = sigmoid applied outside; db_raw = db m s(1-s). */
static void test_ref_beta_sigmoid_in_kernel_equals_outside(void **state)
{
	(void)state;
	for (int neg = 0; neg <= 1; neg++) {
		ref_problem p = gate_problem(REF_KDA, false);
		p.opts.use_gate_in_kernel = false;
		p.opts.use_beta_sigmoid_in_kernel = true;
		p.opts.allow_neg_eigval = neg;
		tu_data d;
		assert_int_equal(tu_make(&d, &p, 5, TU_H0), REF_OK);
		double *beta = tu_zeros(d.sz.beta), m = neg ? 2 : 1;
		for (size_t i = 0; i < d.sz.beta; i++)
			beta[i] = m / (1 + exp(-d.beta[i]));
		ref_problem q = p;
		q.opts.use_beta_sigmoid_in_kernel = false;
		q.opts.allow_neg_eigval = false;
		ref_in64 in = d.in;
		in.beta = beta;
		run a = run_both(&p, &d, &d.in), b = run_both(&q, &d, &in);
		assert_true(tu_rel_max(a.o, b.o, d.sz.v) < 1e-14);
		for (size_t i = 0; i < d.sz.beta; i++) {
			double s = beta[i] / m;
			double want = b.g.dbeta[i] * m * s * (1 - s);
			tu_assert_near(a.g.dbeta[i], want, 1e-13);
		}
		run_free(&a), run_free(&b), free(beta);
		tu_free(&d);
	}
}

/* Gate in kernel = the same gate applied outside (pre-gated g). */
static void test_ref_gate_in_kernel_equals_outside(void **state)
{
	(void)state;
	for (int lb = 0; lb <= 1; lb++) {
		ref_problem p = gate_problem(REF_KDA, lb);
		tu_data d;
		unsigned fl = TU_H0 | TU_A_LOG | TU_DT_BIAS;
		assert_int_equal(tu_make(&d, &p, 6, fl), REF_OK);
		double *g = tu_zeros(d.sz.g);
		assert_int_equal(ref_gate_fwd(&p, d.g, d.A_log, d.dt_bias, g),
				 REF_OK);
		ref_problem q = p;
		q.opts.use_gate_in_kernel = false;
		ref_in64 in = d.in;
		in.g = g;
		run a = run_both(&p, &d, &d.in), b = run_both(&q, &d, &in);
		assert_memory_equal(a.o, b.o, d.sz.v * sizeof(double));
		assert_memory_equal(a.ht, b.ht, d.sz.state * sizeof(double));
		double *dg_raw = tu_zeros(d.sz.g);
		assert_int_equal(ref_gate_bwd(&p, d.g, d.A_log, d.dt_bias,
					      b.g.dg, dg_raw, NULL, NULL),
				 REF_OK);
		assert_memory_equal(a.g.dg, dg_raw, d.sz.g * sizeof(double));
		run_free(&a), run_free(&b), free(g), free(dg_raw);
		tu_free(&d);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ref_softplus_and_sigmoid_by_hand),
		cmocka_unit_test(test_ref_gates_match_formulas),
		cmocka_unit_test(test_ref_gate_bwd_matches_fd),
		cmocka_unit_test(test_ref_gate_off_is_identity),
		cmocka_unit_test(test_ref_l2norm_by_hand),
		cmocka_unit_test(test_ref_l2norm_bwd_matches_fd),
		cmocka_unit_test(
			test_ref_beta_sigmoid_in_kernel_equals_outside),
		cmocka_unit_test(test_ref_gate_in_kernel_equals_outside),
	};
	tu_filter();
	return cmocka_run_group_tests_name("ref_gates", tests, NULL, NULL);
}
