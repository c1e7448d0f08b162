/*
 * ref_testutil.h - helpers shared by the test_ref_* executables (not part
 * of the tileref library): random fp64 inputs for small problems, the
 * projection loss L = sum(o * dout) + sum(ht * dht) that FLA's tests
 * backpropagate, and conversions between float and double arrays.
 */
#ifndef TILEC_REF_TESTUTIL_H
#define TILEC_REF_TESTUTIL_H

#include "ref.h"

/* A small problem with seeded fp64 inputs; `in` views the arrays. */
typedef struct tu_data {
	ref_problem p;
	ref_sizes sz;
	int64_t cu[16];
	double *q, *k, *v, *g, *beta, *A_log, *dt_bias, *h0, *dout, *dht;
	ref_in64 in;
} tu_data;

enum { TU_H0 = 1, TU_A_LOG = 2, TU_DT_BIAS = 4 };

/* Copies p (and its cu_seqlens) and draws inputs; flags pick optional
 * tensors. Returns REF_OK or the problem's error. */
ref_status tu_make(tu_data *d, const ref_problem *p, uint64_t seed,
		   unsigned flags);
void tu_free(tu_data *d);
/* L for the current inputs (NAN on error). */
double tu_loss(const tu_data *d);

double *tu_f64(const float *x, size_t n);
float *tu_f32(const double *x, size_t n);
double *tu_zeros(size_t n);
/* max |a - b| / (max |b| + tiny) */
double tu_rel_max(const double *a, const double *b, size_t n);
double tu_max_abs_diff(const double *a, const double *b, size_t n);
/* |a - b| <= tol, printing both on failure (cmocka 1.1 has no
 * assert_double_equal). Needs cmocka.h included first. */
#define tu_assert_near(a, b, tol)                                            \
	do {                                                                 \
		double tu_a_ = (a), tu_b_ = (b);                             \
		if (!(fabs(tu_a_ - tu_b_) <= (tol)))                         \
			print_error("%s = %.17g, expected %.17g\n", #a, tu_a_, \
				    tu_b_);                                  \
		assert_true(fabs(tu_a_ - tu_b_) <= (tol));                   \
	} while (0)

/* Threads for the tests: TILEREF_THREADS, default 2. */
int tu_threads(void);
/* Runs only the tests matching TILEREF_FILTER (cmocka wildcards * and ?),
 * if set; call before running the group. */
void tu_filter(void);

#endif
