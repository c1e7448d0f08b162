/*
 * test_ref_metric.c - FLA's comparison metric (spec §7.1), the bf16/fp16
 * rounding and the PRNG, on values worked out by hand:
 *   - ratio = RMS(ref - got) / (RMS(ref) + 1e-8), strict "<";
 *   - the abs_err <= 1e-6 shortcut passes tiny arrays whatever the ratio;
 *   - NaN anywhere fails, even with the shortcut's magnitudes;
 *   - the worst element is reported;
 *   - round-to-nearest-even ties, overflow and subnormals in bf16/fp16;
 *   - PRNG streams are reproducible and independent, uniforms lie in
 *     [0, 1), and sample moments match U(0,1) and N(0,1).
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

/* ref (3, 4), got (3, 5): RMS(err) = sqrt(1/2), RMS(ref) = sqrt(25/2),
 * ratio = 1/5 (less 1e-8 in the denominator). */
static void test_ref_metric_ratio_by_hand(void **state)
{
	(void)state;
	double ref[2] = {3, 4}, got[2] = {3, 5};
	ref_cmp c;
	assert_true(ref_compare_f64(ref, got, 2, 0.2001, &c));
	tu_assert_near(c.ratio_err, 0.2, 1e-9);
	tu_assert_near(c.abs_err, 1, 0);
	assert_int_equal(c.worst, 1);
	tu_assert_near(c.worst_ref, 4, 0);
	tu_assert_near(c.worst_got, 5, 0);
	assert_false(ref_compare_f64(ref, got, 2, 0.1999, &c));
	float rf[2] = {3, 4}, gf[2] = {3, 5};
	assert_true(ref_compare_f32(rf, gf, 2, 0.2001, &c));
	tu_assert_near(c.ratio_err, 0.2, 1e-9);
	assert_true(ref_compare_f64_f32(ref, gf, 2, 0.2001, NULL));
	assert_true(ref_compare_f64(ref, ref, 2, 0, &c)); /* abs_err 0 */
	assert_true(ref_compare_f64(ref, got, 0, 0, &c)); /* empty */
}

/* ref = 1e-9, got = 2e-9: ratio 1e-9 / (1e-9 + 1e-8) = 1/11, far above
 * 1e-3, but abs_err 1e-9 <= 1e-6 passes. */
static void test_ref_metric_abs_shortcut(void **state)
{
	(void)state;
	double ref[3] = {1e-9, 1e-9, 1e-9}, got[3] = {2e-9, 2e-9, 2e-9};
	ref_cmp c;
	assert_true(ref_compare_f64(ref, got, 3, 1e-3, &c));
	tu_assert_near(c.ratio_err, 1.0 / 11, 1e-12);
	got[1] = 1e-6 + 1e-9 + 1e-12; /* just above the shortcut */
	assert_false(ref_compare_f64(ref, got, 3, 1e-3, &c));
}

static void test_ref_metric_nan_fails(void **state)
{
	(void)state;
	double ref[3] = {1, 2, 3}, got[3] = {1, NAN, 3};
	ref_cmp c;
	assert_false(ref_compare_f64(ref, got, 3, 1e30, &c));
	assert_true(c.has_nan && isnan(c.abs_err));
	assert_int_equal(c.worst, 1);
	double r0[2] = {0, 0}, g0[2] = {0, NAN};
	assert_false(ref_compare_f64(r0, g0, 2, 1, &c)); /* not the shortcut */
	assert_false(ref_compare_f64(got, ref, 3, 1e30, &c)); /* NaN in ref */
	double inf[1] = {INFINITY};
	assert_false(ref_compare_f64(inf, inf, 1, 1, &c)); /* inf - inf */
}

static float bits(uint32_t u)
{
	float f;
	memcpy(&f, &u, sizeof(f));
	return f;
}

static void test_ref_round_bf16_by_hand(void **state)
{
	(void)state;
	float one = 1.0f, ulp = 0x1.0p-7f;
	assert_true(ref_round(one + ulp / 2, REF_BF16) == one); /* tie: even */
	assert_true(ref_round(one + 3 * ulp / 2, REF_BF16) == one + 2 * ulp);
	assert_true(ref_round(one + ulp / 2 + 0x1.0p-20f, REF_BF16) ==
		    one + ulp);
	assert_true(ref_round(-(one + 3 * ulp / 2), REF_BF16) ==
		    -(one + 2 * ulp));
	assert_true(isinf(ref_round(bits(0x7f7fffffu), REF_BF16))); /* max */
	assert_true(isnan(ref_round(NAN, REF_BF16)));
	assert_true(ref_round(0.1f, REF_F32) == 0.1f);
	float v[3] = {1.0f + ulp / 4, 3.0f, -0.0f};
	ref_round_array(v, 3, REF_BF16);
	assert_true(v[0] == 1.0f && v[1] == 3.0f && signbit(v[2]));
}

static void test_ref_round_f16_by_hand(void **state)
{
	(void)state;
	float ulp = 0x1.0p-10f, sub = 0x1.0p-24f;
	assert_true(ref_round(1 + ulp / 2, REF_F16) == 1.0f);
	assert_true(ref_round(1 + 3 * ulp / 2, REF_F16) == 1 + 2 * ulp);
	assert_true(ref_round(65504.0f, REF_F16) == 65504.0f);
	assert_true(ref_round(65519.0f, REF_F16) == 65504.0f);
	assert_true(isinf(ref_round(65520.0f, REF_F16)));
	assert_true(ref_round(-70000.0f, REF_F16) == -INFINITY);
	assert_true(ref_round(0x1.0p-14f, REF_F16) == 0x1.0p-14f);
	assert_true(ref_round(sub, REF_F16) == sub);
	assert_true(ref_round(sub / 2, REF_F16) == 0.0f);   /* tie: even */
	assert_true(ref_round(3 * sub / 4, REF_F16) == sub);
	assert_true(ref_round(3 * sub / 2, REF_F16) == 2 * sub);
	assert_true(ref_round(1e-10f, REF_F16) == 0.0f);
	assert_true(ref_round(0.1f, REF_F16) == 0x1.998p-4f); /* 0.0999755859 */
}

static void test_ref_rng_streams(void **state)
{
	(void)state;
	ref_rng a, b, c;
	ref_rng_seed(&a, 42, 1);
	ref_rng_seed(&b, 42, 1);
	ref_rng_seed(&c, 42, 2);
	int same_c = 0;
	for (int i = 0; i < 1000; i++) {
		uint64_t x = ref_rng_next(&a), y = ref_rng_next(&b);
		assert_true(x == y);
		same_c += ref_rng_next(&c) == x;
	}
	assert_int_equal(same_c, 0);
	ref_rng_seed(&a, 43, 1);
	ref_rng_seed(&b, 42, 1);
	assert_true(ref_rng_next(&a) != ref_rng_next(&b));
}

/* n = 2^18 draws: the standard error of the mean is 2^-9 sigma. */
static void test_ref_rng_moments(void **state)
{
	(void)state;
	enum { N = 1 << 18 };
	ref_rng r;
	ref_rng_seed(&r, 42, 3);
	double su = 0, su2 = 0, sn = 0, sn2 = 0, sn4 = 0;
	for (int i = 0; i < N; i++) {
		double u = ref_rng_uniform(&r), z = ref_rng_normal(&r);
		assert_true(u >= 0 && u < 1 && isfinite(z));
		su += u, su2 += u * u;
		sn += z, sn2 += z * z, sn4 += z * z * z * z;
	}
	tu_assert_near(su / N, 0.5, 0.005);
	tu_assert_near(su2 / N - 0.25, 1.0 / 12, 0.005);
	tu_assert_near(sn / N, 0, 0.01);
	tu_assert_near(sn2 / N, 1, 0.02);
	tu_assert_near(sn4 / N, 3, 0.1); /* kurtosis of a normal */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ref_metric_ratio_by_hand),
		cmocka_unit_test(test_ref_metric_abs_shortcut),
		cmocka_unit_test(test_ref_metric_nan_fails),
		cmocka_unit_test(test_ref_round_bf16_by_hand),
		cmocka_unit_test(test_ref_round_f16_by_hand),
		cmocka_unit_test(test_ref_rng_streams),
		cmocka_unit_test(test_ref_rng_moments),
	};
	tu_filter();
	return cmocka_run_group_tests_name("ref_metric", tests, NULL, NULL);
}
