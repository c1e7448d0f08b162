/*
 * test_ref_cases.c - FLA's case tables and the seeded generators
 * (ref_cases.c, ref_generate.c):
 *   - the tables hold the rows of spec §7.2 and §7.3 (counts per suite,
 *     unique names, consistent varlen offsets, FLA's tolerances);
 *   - every non-heavy case generates a problem that ref_problem_check
 *     accepts, with every value representable in the dtype FLA uses;
 *   - the distributions are FLA's: normalized q/k rows, U[0,1) and
 *     sigmoid ranges, mask_p fractions (zeros, or -1000 in KDA varlen),
 *     safe_gate clamping, the (-69, -31] gates of normalizer 0.01, zero
 *     GDN h0, A_log = log U(1, 16);
 *   - generation is deterministic per seed.
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

static int count_suite(const ref_case *c, size_t n, const char *suite)
{
	int k = 0;
	for (size_t i = 0; i < n; i++)
		k += strcmp(c[i].suite, suite) == 0;
	return k;
}

static void test_ref_cases_tables_match_spec(void **state)
{
	(void)state;
	size_t nk, ng;
	const ref_case *k = ref_kda_cases(&nk), *g = ref_gdn_cases(&ng);
	assert_int_equal(count_suite(k, nk, "test_chunk"), 16);
	assert_int_equal(count_suite(k, nk, "test_chunk_varlen"), 6);
	assert_int_equal(count_suite(k, nk, "test_chunk_state_v_first"), 4);
	assert_int_equal(
		count_suite(k, nk, "test_chunk_use_beta_sigmoid_in_kernel"), 3);
	assert_int_equal(count_suite(g, ng, "test_chunk"), 11);
	assert_int_equal(count_suite(g, ng, "test_chunk_varlen"), 6);
	assert_int_equal(count_suite(g, ng, "test_chunk_with_chunk_size"), 3);
	assert_int_equal(nk, 29);
	assert_int_equal(ng, 20);
	for (size_t i = 0; i < nk; i++)
		assert_true(k[i].op == REF_KDA &&
			    !strncmp(k[i].name, "kda_", 4));
	for (size_t i = 0; i < ng; i++)
		assert_true(g[i].op == REF_GDN &&
			    !strncmp(g[i].name, "gdn_", 4));
}

static void test_ref_cases_names_unique_and_fields_consistent(void **state)
{
	(void)state;
	size_t nk, ng;
	const ref_case *k = ref_kda_cases(&nk), *g = ref_gdn_cases(&ng);
	for (size_t i = 0; i < nk + ng; i++) {
		const ref_case *a = i < nk ? &k[i] : &g[i - nk];
		for (size_t j = i + 1; j < nk + ng; j++) {
			const ref_case *b = j < nk ? &k[j] : &g[j - nk];
			assert_true(strcmp(a->name, b->name) != 0);
		}
		assert_true(a->HV % a->H == 0 && a->D >= 1 && a->D <= 256);
		assert_true(a->tol.o > 0 && a->tol.ht > 0 && a->tol.dq > 0);
		if (a->varlen)
			assert_true(a->B == 1 && a->n_cu >= 2 &&
				    a->cu[0] == 0 &&
				    a->cu[a->n_cu - 1] == a->T);
	}
}

/* The tolerances of spec §7.2 / §7.3 for a few suites. */
static void test_ref_cases_tolerances(void **state)
{
	(void)state;
	size_t nk, ng;
	const ref_case *k = ref_kda_cases(&nk), *g = ref_gdn_cases(&ng);
	assert_true(k[0].tol.dg == 0.02 && k[0].tol.dA == 0.003 &&
		    k[0].tol.dA_warn_only && k[0].tol.dbias == 0.008);
	assert_true(k[16].tol.dq == 0.007 && k[16].tol.dg == 0.015 &&
		    k[16].tol.dbias == 0.005);
	assert_true(k[22].tol.self == 1e-4);
	assert_true(g[0].tol.db == 0.02 && g[11].tol.dk == 0.008);
	assert_true(g[17].tol.dg == 0.01 && g[17].tol.o == 0.005);
}

static bool representable(const float *x, size_t n, ref_dtype dt)
{
	for (size_t i = 0; x && i < n; i++)
		if (ref_round(x[i], dt) != x[i])
			return false;
	return true;
}

static double row_norm_err(const float *x, size_t rows, int K)
{
	double worst = 0;
	for (size_t r = 0; r < rows; r++) {
		double s = 0;
		for (int d = 0; d < K; d++)
			s += (double)x[r * K + d] * x[r * K + d];
		worst = fmax(worst, fabs(sqrt(s) - 1));
	}
	return worst;
}

static double frac_eq(const float *x, size_t n, float v)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		k += x[i] == v;
	return (double)k / (double)n;
}

static void range(const float *x, size_t n, double *lo, double *hi)
{
	*lo = INFINITY, *hi = -INFINITY;
	for (size_t i = 0; i < n; i++)
		*lo = fmin(*lo, x[i]), *hi = fmax(*hi, x[i]);
}

/* Checks common to every case. */
static void check_common(const ref_case *c, const ref_case_data *d)
{
	const ref_sizes *z = &d->sz;
	assert_int_equal(ref_problem_check(&d->p), REF_OK);
	assert_true(representable(d->q, z->qk, c->dtype));
	assert_true(representable(d->k, z->qk, c->dtype));
	assert_true(representable(d->v, z->v, c->dtype));
	assert_true(representable(d->dout, z->v, c->dtype));
	double ntol = c->dtype == REF_F32 ? 1e-6 : 1e-2;
	if (c->varlen)
		assert_true(row_norm_err(d->k, z->qk / c->D, c->D) < ntol);
	else if (!c->l2norm_in_kernel)
		assert_true(row_norm_err(d->q, z->qk / c->D, c->D) < ntol &&
			    row_norm_err(d->k, z->qk / c->D, c->D) < ntol);
	assert_true((d->A_log != NULL) == c->gate_in_kernel);
	for (size_t i = 0; !c->gate_in_kernel && i < z->g; i++)
		assert_true(d->g[i] <= 0);
	if (c->safe_gate && !c->gate_in_kernel)
		for (size_t i = 0; i < z->g; i++)
			assert_true(d->g[i] >= -5);
}

static void check_kda(const ref_case *c, const ref_case_data *d)
{
	const ref_sizes *z = &d->sz;
	double lo, hi;
	if (!c->varlen) {
		range(d->v, z->v, &lo, &hi);
		assert_true(lo >= 0 && hi < 1); /* U[0,1) */
	}
	if (!c->beta_sigmoid) {
		range(d->beta, z->beta, &lo, &hi);
		assert_true(lo > 0 && hi < 1);
	}
	if (c->varlen && !c->safe_gate)
		tu_assert_near(frac_eq(d->g, z->g, -1000.0f), c->mask_p, 0.02);
	if (c->varlen && c->gate_in_kernel) {
		range(d->A_log, z->A_log, &lo, &hi);
		assert_true(lo >= 0 && hi < log(16.0));
	}
	if (!c->varlen && !c->gate_in_kernel && c->mask_p > 0)
		assert_true(frac_eq(d->g, z->g, 0.0f) >= c->mask_p - 0.02);
}

static void check_gdn(const ref_case *c, const ref_case_data *d)
{
	const ref_sizes *z = &d->sz;
	double lo, hi;
	range(d->beta, z->beta, &lo, &hi);
	assert_true(lo >= 0.5 && hi < 0.7311); /* sigmoid(U[0,1)) */
	range(d->g, z->g, &lo, &hi);
	if (c->mask_p >= 1)
		assert_true(lo == 0 && hi == 0);
	else if (!c->varlen)
		assert_true(lo > -0.6932 / c->gate_norm &&
			    (c->mask_p > 0 || hi <= -0.3132 / c->gate_norm));
	tu_assert_near(frac_eq(d->g, z->g, 0.0f), c->mask_p, 0.02);
	if (!c->varlen)
		assert_true(frac_eq(d->h0, z->state, 0.0f) == 1.0);
	else
		assert_true(representable(d->h0, z->state, REF_F16) &&
			    representable(d->g, z->g, REF_F16));
}

static void test_ref_cases_generators_reproduce_distributions(void **state)
{
	(void)state;
	size_t nk, ng;
	const ref_case *k = ref_kda_cases(&nk), *g = ref_gdn_cases(&ng);
	for (size_t i = 0; i < nk + ng; i++) {
		const ref_case *c = i < nk ? &k[i] : &g[i - nk];
		if (c->heavy)
			continue; /* 8192 x 96 heads: gigabytes */
		ref_case_data d;
		assert_int_equal(ref_case_generate(c, 42, &d), REF_OK);
		check_common(c, &d);
		if (c->op == REF_KDA)
			check_kda(c, &d);
		else
			check_gdn(c, &d);
		ref_case_data_free(&d);
	}
}

static void test_ref_cases_generation_is_deterministic(void **state)
{
	(void)state;
	size_t nk;
	/* a varlen row with the gate in kernel */
	const ref_case *c = &ref_kda_cases(&nk)[17];
	ref_case_data a, b, e;
	assert_int_equal(ref_case_generate(c, 42, &a), REF_OK);
	assert_int_equal(ref_case_generate(c, 42, &b), REF_OK);
	assert_int_equal(ref_case_generate(c, 43, &e), REF_OK);
	assert_memory_equal(a.q, b.q, a.sz.qk * sizeof(float));
	assert_memory_equal(a.g, b.g, a.sz.g * sizeof(float));
	assert_memory_equal(a.dt_bias, b.dt_bias, a.sz.dt_bias * sizeof(float));
	assert_true(memcmp(a.q, e.q, a.sz.qk * sizeof(float)) != 0);
	ref_tensors64 t;
	assert_int_equal(ref_case_to_f64(&a, &t), REF_OK);
	for (size_t i = 0; i < a.sz.v; i++)
		assert_true(t.v[i] == a.v[i] && t.in.v[i] == a.v[i]);
	assert_true(t.in.A_log == t.A_log && t.dht != NULL);
	ref_tensors64_free(&t);
	ref_case_data_free(&a), ref_case_data_free(&b), ref_case_data_free(&e);
	ref_case_data_free(&a); /* idempotent */
}

static void test_ref_cases_reject_bad_input(void **state)
{
	(void)state;
	ref_case bad = ref_gdn_cases(NULL)[11];
	ref_case_data d;
	bad.n_cu = 9;
	assert_int_equal(ref_case_generate(&bad, 1, &d), REF_ERR_SHAPE);
	bad.n_cu = 2; /* cu[1] = 15 != T */
	bad.T = 16;
	assert_int_equal(ref_case_generate(&bad, 1, &d), REF_ERR_SHAPE);
	assert_int_equal(ref_case_generate(NULL, 1, &d), REF_ERR_ARG);
	ref_case_data_free(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ref_cases_tables_match_spec),
		cmocka_unit_test(
			test_ref_cases_names_unique_and_fields_consistent),
		cmocka_unit_test(test_ref_cases_tolerances),
		cmocka_unit_test(
			test_ref_cases_generators_reproduce_distributions),
		cmocka_unit_test(test_ref_cases_generation_is_deterministic),
		cmocka_unit_test(test_ref_cases_reject_bad_input),
	};
	tu_filter();
	return cmocka_run_group_tests_name("ref_cases", tests, NULL, NULL);
}
