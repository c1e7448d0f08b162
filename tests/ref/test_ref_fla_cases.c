/*
 * test_ref_fla_cases.c - every case of FLA's tables (spec §7.2, §7.3) at
 * full size, with FLA's metric:
 *
 *   fwd: the fp64 naive recurrence against the fp32 chunked forward
 *        (tol 2e-5 + 2^-24 max|Γ|: fp32 accumulation plus the fp32
 *        storage of Γ, see test_ref_chunked.c) for every case; and, for
 *        cases whose size B T HV K V is at most BUDGET, against the
 *        chunked forward with the case dtype's rounding at FLA's points
 *        (tol: FLA's own o and ht ratios for the case).
 *   bwd: for cases within BUDGET, the fp64 backward against central
 *        directional derivatives of the fp64 forward, one random
 *        direction per input tensor. Larger cases rely on the small-shape
 *        finite-difference tests of test_ref_backward.c: checking them
 *        too would triple this test's time (about 20 s more on two cores
 *        for their backward alone, plus 16 forwards each).
 *
 * Heavy rows (8192 x 96 heads) are skipped. One test per case and
 * direction, named test_ref_fla_{fwd,bwd}_<case name>; each prints its
 * errors and time. TILEREF_THREADS sets the thread count (default 2).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "ref_testutil.h"

static const double BUDGET = 3.5e7; /* B T HV K V */

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

typedef struct fixture {
	ref_case_data d;
	ref_tensors64 t;
	double *o, *ht; /* naive outputs */
} fixture;

static void fixture_make(const ref_case *c, fixture *f)
{
	memset(f, 0, sizeof(*f));
	assert_int_equal(ref_case_generate(c, 42, &f->d), REF_OK);
	f->d.p.opts.threads = tu_threads();
	assert_int_equal(ref_case_to_f64(&f->d, &f->t), REF_OK);
	f->o = tu_zeros(f->d.sz.v);
	f->ht = tu_zeros(f->d.sz.state);
}

static void fixture_free(fixture *f)
{
	free(f->o);
	free(f->ht);
	ref_tensors64_free(&f->t);
	ref_case_data_free(&f->d);
}

static double loss(fixture *f)
{
	ref_fwd64 out = {.o = f->o, .ht = f->ht};
	assert_int_equal(ref_recurrent_fwd(&f->d.p, &f->t.in, &out), REF_OK);
	double L = 0;
	for (size_t i = 0; i < f->d.sz.v; i++)
		L += f->o[i] * f->t.dout[i];
	for (size_t i = 0; i < f->d.sz.state; i++)
		L += f->ht[i] * f->t.dht[i];
	return L;
}

static double max_abs_f(const float *x, size_t n)
{
	double m = 0;
	for (size_t i = 0; i < n; i++)
		m = fmax(m, fabs(x[i]));
	return m;
}

/* Chunked forward with dtype dt against the naive o and ht. */
static void chunk_check(fixture *f, ref_dtype dt, double tol_o,
			double tol_ht, double *ratio)
{
	ref_problem p = f->d.p;
	p.opts.dtype = dt;
	ref_chunk r;
	ref_in32 in = ref_case_in32(&f->d);
	assert_int_equal(ref_chunk_alloc(&p, &r), REF_OK);
	assert_int_equal(ref_chunk_forward(&p, &in, &r), REF_OK);
	if (tol_o <= 0) /* fp32: derived from Γ's fp32 storage */
		tol_o = tol_ht = 2e-5 + max_abs_f(r.gcum, r.sz.g) * 0x1.0p-24;
	ref_cmp co, ch;
	bool ok = ref_compare_f64_f32(f->o, r.o, r.sz.v, tol_o, &co);
	ok &= ref_compare_f64_f32(f->ht, r.ht, r.sz.state, tol_ht, &ch);
	if (!ok)
		print_error("dtype %d: o ratio %.3g (tol %.3g), ht ratio %.3g"
			    " (tol %.3g)\n", dt, co.ratio_err, tol_o,
			    ch.ratio_err, tol_ht);
	ratio[0] = co.ratio_err, ratio[1] = ch.ratio_err;
	ref_chunk_free(&r);
	assert_true(ok);
}

static double cost(const ref_case *c)
{
	return (double)c->B * c->T * c->HV * c->D * c->D;
}

static void test_fwd(void **state)
{
	const ref_case *c = *state;
	if (c->heavy)
		skip();
	double t0 = now(), r32[2], rdt[2];
	fixture f;
	fixture_make(c, &f);
	loss(&f);
	chunk_check(&f, REF_F32, 0, 0, r32);
	if (cost(c) <= BUDGET)
		chunk_check(&f, c->dtype, c->tol.o, c->tol.ht, rdt);
	else
		rdt[0] = rdt[1] = NAN; /* printed as "nan": not run */
	print_message("  %s: fp32 o %.2e ht %.2e | dtype o %.2e ht %.2e"
		      " | %.2f s\n", c->name, r32[0], r32[1], rdt[0], rdt[1],
		      now() - t0);
	fixture_free(&f);
}

/* Directional derivative of L along u (u_i = z_i (|x_i| + 0.05), z ~ N)
 * by central differences with step 1e-4, against sum grad_i u_i. The
 * error of the difference is ~1e-8 relative (truncation, relative
 * perturbation 1e-4) plus ~1e-9 |L| / step (cancellation); the tolerance
 * 1e-5 sum |grad_i u_i| is far above both and far below any wrong term. */
static void dir_check(fixture *f, const char *name, double *x, size_t n,
		      const double *grad, uint64_t stream)
{
	if (!x || n == 0)
		return;
	ref_rng r;
	ref_rng_seed(&r, 7, stream);
	double *u = tu_zeros(n), *x0 = tu_zeros(n), an = 0, mag = 0;
	const double eps = 1e-4;
	memcpy(x0, x, n * sizeof(double));
	for (size_t i = 0; i < n; i++) {
		u[i] = ref_rng_normal(&r) * (fabs(x[i]) + 0.05);
		an += grad[i] * u[i];
		mag += fabs(grad[i] * u[i]);
	}
	for (size_t i = 0; i < n; i++)
		x[i] = x0[i] + eps * u[i];
	double lp = loss(f);
	for (size_t i = 0; i < n; i++)
		x[i] = x0[i] - eps * u[i];
	double lm = loss(f);
	memcpy(x, x0, n * sizeof(double));
	double fd = (lp - lm) / (2 * eps), err = fabs(fd - an);
	if (!(err <= 1e-5 * mag + 1e-9))
		print_error("d%s: directional fd %.12g, backward %.12g"
			    " (scale %.3g)\n", name, fd, an, mag);
	assert_true(err <= 1e-5 * mag + 1e-9);
	free(u);
	free(x0);
}

static void test_bwd(void **state)
{
	const ref_case *c = *state;
	if (c->heavy || cost(c) > BUDGET)
		skip();
	double t0 = now();
	fixture f;
	fixture_make(c, &f);
	const ref_sizes *z = &f.d.sz;
	double *buf = tu_zeros(2 * z->qk + z->v + z->g + z->beta + z->A_log +
			       z->dt_bias + z->state), *b = buf;
	ref_grads64 g;
	g.dq = b, b += z->qk;
	g.dk = b, b += z->qk;
	g.dv = b, b += z->v;
	g.dg = b, b += z->g;
	g.dbeta = b, b += z->beta;
	g.dA_log = b, b += z->A_log;
	g.ddt_bias = b, b += z->dt_bias;
	g.dh0 = b;
	ref_tensors64 *t = &f.t;
	assert_int_equal(ref_recurrent_bwd(&f.d.p, &t->in, t->dout, t->dht,
					   &g), REF_OK);
	dir_check(&f, "q", t->q, z->qk, g.dq, 1);
	dir_check(&f, "k", t->k, z->qk, g.dk, 2);
	dir_check(&f, "v", t->v, z->v, g.dv, 3);
	dir_check(&f, "g", t->g, z->g, g.dg, 4);
	dir_check(&f, "beta", t->beta, z->beta, g.dbeta, 5);
	dir_check(&f, "h0", t->h0, z->state, g.dh0, 6);
	dir_check(&f, "A_log", t->A_log, z->A_log, g.dA_log, 7);
	dir_check(&f, "dt_bias", t->dt_bias, z->dt_bias, g.ddt_bias, 8);
	print_message("  %s: backward checked | %.2f s\n", c->name,
		      now() - t0);
	free(buf);
	fixture_free(&f);
}

static char *test_name(const char *kind, const char *name)
{
	size_t n = strlen(kind) + strlen(name) + 16;
	char *s = malloc(n);
	if (s)
		snprintf(s, n, "test_ref_fla_%s_%s", kind, name);
	return s;
}

int main(void)
{
	size_t nk, ng;
	const ref_case *kc = ref_kda_cases(&nk), *gc = ref_gdn_cases(&ng);
	size_t n = 2 * (nk + ng);
	struct CMUnitTest *tests = calloc(n, sizeof(*tests));
	if (!tests)
		return 1;
	for (size_t i = 0; i < nk + ng; i++) {
		const ref_case *c = i < nk ? &kc[i] : &gc[i - nk];
		tests[2 * i] = (struct CMUnitTest){
			.name = test_name("fwd", c->name),
			.test_func = test_fwd, .initial_state = (void *)c};
		tests[2 * i + 1] = (struct CMUnitTest){
			.name = test_name("bwd", c->name),
			.test_func = test_bwd, .initial_state = (void *)c};
	}
	tu_filter();
	/* the table is built at run time, so call the function behind
	 * cmocka_run_group_tests_name, which needs a fixed-size array */
	int rc = _cmocka_run_group_tests("ref_fla_cases", tests, n, NULL, NULL);
	for (size_t i = 0; i < n; i++)
		free((void *)tests[i].name);
	free(tests);
	return rc;
}
