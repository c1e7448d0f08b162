/*
 * ref_metric.c - FLA's comparison metric and dtype rounding.
 *
 * Metric (spec §7.1, fla.utils.assert_close with err_atol = 1e-6):
 *   abs_err = max |ref - got|; pass at once if abs_err <= 1e-6;
 *   otherwise fail on any NaN, else pass iff
 *   RMS(ref - got) / (RMS(ref) + 1e-8) < ratio.
 * A NaN anywhere makes abs_err NaN (as torch's max does), so the shortcut
 * never hides it. FLA's warning-only mode and FLA_CI_ENV relaxation are
 * left to the caller (ref_tols.dA_warn_only says where FLA uses them).
 * The worst element (largest |ref - got|, NaN first) is reported for
 * messages, as our style asks.
 *
 * Rounding: round-to-nearest-even into bf16 (8-bit significand, fp32
 * exponent range) and fp16 (11-bit significand, subnormals below 2^-14,
 * overflow to inf at 65520), returned as float.
 */
#include <math.h>
#include <string.h>

#include "ref_internal.h"

typedef double (*getter)(const void *a, size_t i);

static double get64(const void *a, size_t i)
{
	return ((const double *)a)[i];
}

static double get32(const void *a, size_t i)
{
	return ((const float *)a)[i];
}

static bool compare(const void *ref, getter gr, const void *got, getter gg,
		    size_t n, double ratio, ref_cmp *c)
{
	ref_cmp r = {0};
	double se = 0, sr = 0, worst = -1;
	for (size_t i = 0; i < n; i++) {
		double a = gr(ref, i), b = gg(got, i), e = fabs(a - b);
		if (isnan(a) || isnan(b))
			r.has_nan = true;
		if (isnan(e) ? worst == -1 || !isnan(worst) : e > worst) {
			worst = e;
			r.worst = i;
			r.worst_ref = a;
			r.worst_got = b;
		}
		se += (a - b) * (a - b);
		sr += a * a;
	}
	r.abs_err = n ? (r.has_nan ? NAN : worst) : 0;
	r.ratio_err = n ? sqrt(se / n) / (sqrt(sr / n) + 1e-8) : 0;
	if (r.abs_err <= 1e-6)
		r.pass = true;
	else
		r.pass = !r.has_nan && r.ratio_err < ratio;
	if (c)
		*c = r;
	return r.pass;
}

bool ref_compare_f64(const double *ref, const double *got, size_t n,
		     double ratio, ref_cmp *c)
{
	return compare(ref, get64, got, get64, n, ratio, c);
}

bool ref_compare_f32(const float *ref, const float *got, size_t n,
		     double ratio, ref_cmp *c)
{
	return compare(ref, get32, got, get32, n, ratio, c);
}

bool ref_compare_f64_f32(const double *ref, const float *got, size_t n,
			 double ratio, ref_cmp *c)
{
	return compare(ref, get64, got, get32, n, ratio, c);
}

static float round_bf16(float x)
{
	uint32_t u;
	memcpy(&u, &x, sizeof(u));
	if ((u & 0x7f800000u) == 0x7f800000u)
		return x; /* inf and NaN pass through */
	u += 0x7fffu + ((u >> 16) & 1u);
	u &= 0xffff0000u;
	memcpy(&x, &u, sizeof(u));
	return x;
}

static float round_f16(float x)
{
	if (!isfinite(x) || x == 0)
		return x;
	float a = fabsf(x);
	if (a >= 65520.0f)
		return copysignf(INFINITY, x);
	int e;
	frexpf(a, &e);                 /* a = m 2^e, m in [0.5, 1) */
	int ulp = e - 1 >= -14 ? e - 11 : -24;
	float m = nearbyintf(ldexpf(a, -ulp)); /* exact scaling, then RNE */
	return copysignf(ldexpf(m, ulp), x);
}

float ref_round(float x, ref_dtype dt)
{
	switch (dt) {
	case REF_BF16: return round_bf16(x);
	case REF_F16: return round_f16(x);
	case REF_F32: break;
	}
	return x;
}

void ref_round_array(float *x, size_t n, ref_dtype dt)
{
	if (!x || dt == REF_F32)
		return;
	for (size_t i = 0; i < n; i++)
		x[i] = ref_round(x[i], dt);
}
