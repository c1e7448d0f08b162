/*
 * test_ref_backward.c - the hand-derived fp64 backward (ref_backward.c)
 * against central finite differences of the fp64 forward, for every
 * gradient (dq, dk, dv, dg, dbeta, dA_log, ddt_bias, dh0) and every
 * option: pre-gated g; GDN softplus gate; KDA softplus and lower-bound
 * gates (with and without dt_bias, lower bound with and without A_log);
 * beta sigmoid with and without allow_neg_eigval; in-kernel l2norm; GVA;
 * varlen with an empty and a length-1 sequence; state_v_first; a custom
 * scale; and everything at once. The loss is FLA's random projection
 * L = sum(o * dout) + sum(ht * dht).
 *
 * Tolerance: with step h = 1e-6 the central difference has truncation
 * error ~h^2 |L'''| ~ 1e-12 and cancellation error ~1e-16 |L| / h ~ 1e-9
 * for |L| ~ 10, so |fd - grad| <= 1e-6 (1 + |grad|) leaves a wide margin
 * while any wrong term (an O(1) relative error) fails.
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

enum {
	O_GATE = 1 << 0,   /* use_gate_in_kernel (softplus form) */
	O_BIAS = 1 << 1,   /* with dt_bias */
	O_LB = 1 << 2,     /* KDA lower-bound form, lb = -2.5 */
	O_NO_A = 1 << 3,   /* A_log absent */
	O_SIG = 1 << 4,    /* beta sigmoid in kernel */
	O_NEG = 1 << 5,    /* allow_neg_eigval */
	O_L2 = 1 << 6,     /* q/k l2norm in kernel */
	O_GVA = 1 << 7,    /* H = 1, HV = 3 */
	O_VARLEN = 1 << 8, /* cu = {0, 3, 3, 4, 9}: lengths 3, 0, 1, 5 */
	O_VFIRST = 1 << 9, /* state_v_first */
	O_SCALE = 1 << 10, /* scale = 0.7 */
	O_ALL = O_GATE | O_BIAS | O_SIG | O_NEG | O_L2 | O_GVA | O_VARLEN |
		O_VFIRST | O_SCALE,
};

static const int64_t fd_cu[] = {0, 3, 3, 4, 9};
static const double FD_STEP = 1e-6, FD_TOL = 1e-6;

static ref_problem fd_problem(ref_op op, unsigned o)
{
	ref_problem p = {.op = op, .B = 2, .T = 7, .H = 2, .HV = 2, .K = 3,
			 .V = 4};
	if (o & O_GVA)
		p.H = 1, p.HV = 3;
	if (o & O_VARLEN)
		p.B = 1, p.T = 9, p.cu_seqlens = fd_cu, p.n_seqs = 4;
	p.opts.use_gate_in_kernel = o & O_GATE;
	p.opts.has_lower_bound = o & O_LB;
	p.opts.lower_bound = -2.5;
	p.opts.use_beta_sigmoid_in_kernel = o & O_SIG;
	p.opts.allow_neg_eigval = o & O_NEG;
	p.opts.use_qk_l2norm_in_kernel = o & O_L2;
	p.opts.state_v_first = o & O_VFIRST;
	p.opts.scale = (o & O_SCALE) ? 0.7 : 0;
	p.opts.threads = 1;
	return p;
}

/* Central differences of L wrt every element of x, against grad. */
static void fd_tensor(tu_data *d, const char *name, double *x, size_t n,
		      const double *grad)
{
	double worst = 0;
	size_t wi = 0;
	double wfd = 0;
	for (size_t i = 0; i < n; i++) {
		double x0 = x[i];
		x[i] = x0 + FD_STEP;
		double lp = tu_loss(d);
		x[i] = x0 - FD_STEP;
		double lm = tu_loss(d);
		x[i] = x0;
		double fd = (lp - lm) / (2 * FD_STEP);
		double err = fabs(fd - grad[i]) / (1 + fabs(grad[i]));
		if (!(err <= worst))
			worst = err, wi = i, wfd = fd;
	}
	if (!(worst <= FD_TOL))
		print_error("d%s[%zu]: finite difference %.9g, backward %.9g"
			    " (err %.3g)\n", name, wi, wfd, grad[wi], worst);
	assert_true(worst <= FD_TOL);
}

typedef struct grads {
	ref_grads64 g;
	double *buf;
} grads;

static void grads_alloc(const tu_data *d, grads *gr)
{
	const ref_sizes *z = &d->sz;
	size_t n = 2 * z->qk + z->v + z->g + z->beta + z->A_log +
		   z->dt_bias + z->state;
	gr->buf = tu_zeros(n);
	assert_non_null(gr->buf);
	double *b = gr->buf;
	gr->g.dq = b, b += z->qk;
	gr->g.dk = b, b += z->qk;
	gr->g.dv = b, b += z->v;
	gr->g.dg = b, b += z->g;
	gr->g.dbeta = b, b += z->beta;
	gr->g.dA_log = b, b += z->A_log;
	gr->g.ddt_bias = b, b += z->dt_bias;
	gr->g.dh0 = b;
}

static void fd_case(ref_op op, unsigned o)
{
	ref_problem p = fd_problem(op, o);
	unsigned flags = TU_H0 | (o & O_BIAS ? TU_DT_BIAS : 0) |
			 ((o & O_GATE) && !(o & O_NO_A) ? TU_A_LOG : 0);
	tu_data d;
	assert_int_equal(tu_make(&d, &p, 1234 + o, flags), REF_OK);
	grads gr;
	grads_alloc(&d, &gr);
	assert_int_equal(ref_recurrent_bwd(&d.p, &d.in, d.dout, d.dht, &gr.g),
			 REF_OK);
	const ref_sizes *z = &d.sz;
	fd_tensor(&d, "q", d.q, z->qk, gr.g.dq);
	fd_tensor(&d, "k", d.k, z->qk, gr.g.dk);
	fd_tensor(&d, "v", d.v, z->v, gr.g.dv);
	fd_tensor(&d, "g", d.g, z->g, gr.g.dg);
	fd_tensor(&d, "beta", d.beta, z->beta, gr.g.dbeta);
	fd_tensor(&d, "h0", d.h0, z->state, gr.g.dh0);
	if (d.A_log)
		fd_tensor(&d, "A_log", d.A_log, z->A_log, gr.g.dA_log);
	if (d.dt_bias)
		fd_tensor(&d, "dt_bias", d.dt_bias, z->dt_bias, gr.g.ddt_bias);
	free(gr.buf);
	tu_free(&d);
}

#define FD_TEST(name, op, opts)                                              \
	static void test_ref_bwd_fd_##name(void **state)                     \
	{                                                                    \
		(void)state;                                                 \
		fd_case(op, opts);                                           \
	}

FD_TEST(gdn_pregated, REF_GDN, 0)
FD_TEST(gdn_gate_softplus, REF_GDN, O_GATE | O_BIAS)
FD_TEST(gdn_gate_softplus_no_bias, REF_GDN, O_GATE)
FD_TEST(gdn_beta_sigmoid, REF_GDN, O_SIG)
FD_TEST(gdn_beta_sigmoid_neg_eigval, REF_GDN, O_SIG | O_NEG)
FD_TEST(gdn_l2norm, REF_GDN, O_L2)
FD_TEST(gdn_gva, REF_GDN, O_GVA)
FD_TEST(gdn_varlen, REF_GDN, O_VARLEN)
FD_TEST(gdn_state_v_first, REF_GDN, O_VFIRST)
FD_TEST(gdn_scale, REF_GDN, O_SCALE)
FD_TEST(gdn_all_options, REF_GDN, O_ALL)
FD_TEST(kda_pregated, REF_KDA, 0)
FD_TEST(kda_gate_softplus, REF_KDA, O_GATE | O_BIAS)
FD_TEST(kda_gate_softplus_no_bias, REF_KDA, O_GATE)
FD_TEST(kda_gate_lower_bound, REF_KDA, O_GATE | O_BIAS | O_LB)
FD_TEST(kda_gate_lower_bound_no_A_log, REF_KDA, O_GATE | O_BIAS | O_LB |
	O_NO_A)
FD_TEST(kda_gate_lower_bound_no_bias, REF_KDA, O_GATE | O_LB)
FD_TEST(kda_beta_sigmoid, REF_KDA, O_SIG)
FD_TEST(kda_beta_sigmoid_neg_eigval, REF_KDA, O_SIG | O_NEG)
FD_TEST(kda_l2norm, REF_KDA, O_L2)
FD_TEST(kda_gva, REF_KDA, O_GVA)
FD_TEST(kda_varlen, REF_KDA, O_VARLEN)
FD_TEST(kda_state_v_first, REF_KDA, O_VFIRST)
FD_TEST(kda_scale, REF_KDA, O_SCALE)
FD_TEST(kda_all_options_softplus, REF_KDA, O_ALL)
FD_TEST(kda_all_options_lower_bound, REF_KDA, O_ALL | O_LB | O_NO_A)

/* Spec §9.5: an empty sequence has no steps, so dh0 = dht exactly. */
static void test_ref_bwd_empty_sequence_gives_dh0_eq_dht(void **state)
{
	(void)state;
	for (int op = REF_GDN; op <= REF_KDA; op++) {
		ref_problem p = fd_problem((ref_op)op, O_VARLEN | O_GATE);
		tu_data d;
		assert_int_equal(tu_make(&d, &p, 5, TU_H0 | TU_A_LOG), REF_OK);
		grads gr;
		grads_alloc(&d, &gr);
		assert_int_equal(ref_recurrent_bwd(&d.p, &d.in, d.dout, d.dht,
						   &gr.g), REF_OK);
		size_t per = (size_t)p.HV * p.K * p.V; /* sequence 1 is empty */
		assert_memory_equal(gr.g.dh0 + per, d.dht + per,
				    per * sizeof(double));
		free(gr.buf);
		tu_free(&d);
	}
}

/* With T = 0 nothing runs: dh0 = dht and every other gradient is 0. */
static void test_ref_bwd_zero_length_batch(void **state)
{
	(void)state;
	ref_problem p = fd_problem(REF_KDA, O_GATE | O_LB);
	p.T = 0;
	tu_data d;
	assert_int_equal(tu_make(&d, &p, 6, TU_H0 | TU_A_LOG), REF_OK);
	grads gr;
	grads_alloc(&d, &gr);
	assert_int_equal(ref_recurrent_bwd(&d.p, &d.in, d.dout, d.dht, &gr.g),
			 REF_OK);
	assert_memory_equal(gr.g.dh0, d.dht, d.sz.state * sizeof(double));
	for (size_t i = 0; i < d.sz.A_log; i++)
		assert_true(gr.g.dA_log[i] == 0);
	free(gr.buf);
	tu_free(&d);
}

/* dht = NULL means zero; h0 = NULL means a zero state (spec §4). */
static void test_ref_bwd_null_dht_and_h0_mean_zero(void **state)
{
	(void)state;
	ref_problem p = fd_problem(REF_GDN, O_GVA);
	tu_data d;
	assert_int_equal(tu_make(&d, &p, 8, 0), REF_OK);
	grads a, b;
	grads_alloc(&d, &a);
	grads_alloc(&d, &b);
	assert_int_equal(ref_recurrent_bwd(&d.p, &d.in, d.dout, NULL, &a.g),
			 REF_OK);
	double *zero = tu_zeros(d.sz.state);
	d.in.h0 = zero;
	assert_int_equal(ref_recurrent_bwd(&d.p, &d.in, d.dout, zero, &b.g),
			 REF_OK);
	assert_memory_equal(a.buf, b.buf,
			    (2 * d.sz.qk + d.sz.v + d.sz.g + d.sz.beta +
			     d.sz.A_log + d.sz.dt_bias + d.sz.state) *
				    sizeof(double));
	free(zero);
	free(a.buf);
	free(b.buf);
	tu_free(&d);
}

/* Tasks write disjoint outputs and reductions are serial: results are
 * bitwise independent of the thread count. */
static void test_ref_bwd_threads_do_not_change_results(void **state)
{
	(void)state;
	ref_problem p = fd_problem(REF_KDA, O_ALL);
	tu_data d;
	assert_int_equal(tu_make(&d, &p, 9, TU_H0 | TU_A_LOG | TU_DT_BIAS),
			 REF_OK);
	grads a, b;
	grads_alloc(&d, &a);
	grads_alloc(&d, &b);
	assert_int_equal(ref_recurrent_bwd(&d.p, &d.in, d.dout, d.dht, &a.g),
			 REF_OK);
	d.p.opts.threads = 3;
	assert_int_equal(ref_recurrent_bwd(&d.p, &d.in, d.dout, d.dht, &b.g),
			 REF_OK);
	size_t n = 2 * d.sz.qk + d.sz.v + d.sz.g + d.sz.beta + d.sz.A_log +
		   d.sz.dt_bias + d.sz.state;
	assert_memory_equal(a.buf, b.buf, n * sizeof(double));
	free(a.buf);
	free(b.buf);
	tu_free(&d);
}

/* A sequence longer than the checkpoint interval (64 steps) exercises
 * the segment recomputation; checked on a sample of elements. */
static void test_ref_bwd_fd_long_sequence_checkpoints(void **state)
{
	(void)state;
	ref_problem p = fd_problem(REF_KDA, O_GATE | O_BIAS);
	p.B = 1, p.T = 150, p.H = 1, p.HV = 1;
	tu_data d;
	assert_int_equal(tu_make(&d, &p, 10, TU_H0 | TU_A_LOG | TU_DT_BIAS),
			 REF_OK);
	grads gr;
	grads_alloc(&d, &gr);
	assert_int_equal(ref_recurrent_bwd(&d.p, &d.in, d.dout, d.dht, &gr.g),
			 REF_OK);
	fd_tensor(&d, "h0", d.h0, d.sz.state, gr.g.dh0);
	fd_tensor(&d, "A_log", d.A_log, d.sz.A_log, gr.g.dA_log);
	size_t K = p.K; /* tokens 0, 63, 64, 65, 149: segment edges */
	static const int toks[] = {0, 63, 64, 65, 149};
	for (size_t i = 0; i < sizeof(toks) / sizeof(toks[0]); i++) {
		fd_tensor(&d, "k", d.k + toks[i] * K, K, gr.g.dk + toks[i] * K);
		fd_tensor(&d, "g", d.g + toks[i] * K, K, gr.g.dg + toks[i] * K);
	}
	free(gr.buf);
	tu_free(&d);
}

static void test_ref_bwd_rejects_bad_arguments(void **state)
{
	(void)state;
	ref_problem p = fd_problem(REF_GDN, O_GATE);
	tu_data d;
	assert_int_equal(tu_make(&d, &p, 11, 0), REF_OK); /* no A_log */
	ref_grads64 g = {0};
	assert_int_equal(ref_recurrent_bwd(&d.p, &d.in, d.dout, d.dht, &g),
			 REF_ERR_ARG);
	d.p.opts.use_gate_in_kernel = false;
	assert_int_equal(ref_recurrent_bwd(&d.p, &d.in, NULL, d.dht, &g),
			 REF_ERR_ARG);
	d.p.HV = 3; /* HV % H != 0 */
	assert_int_equal(ref_recurrent_bwd(&d.p, &d.in, d.dout, d.dht, &g),
			 REF_ERR_SHAPE);
	tu_free(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ref_bwd_fd_gdn_pregated),
		cmocka_unit_test(test_ref_bwd_fd_gdn_gate_softplus),
		cmocka_unit_test(test_ref_bwd_fd_gdn_gate_softplus_no_bias),
		cmocka_unit_test(test_ref_bwd_fd_gdn_beta_sigmoid),
		cmocka_unit_test(test_ref_bwd_fd_gdn_beta_sigmoid_neg_eigval),
		cmocka_unit_test(test_ref_bwd_fd_gdn_l2norm),
		cmocka_unit_test(test_ref_bwd_fd_gdn_gva),
		cmocka_unit_test(test_ref_bwd_fd_gdn_varlen),
		cmocka_unit_test(test_ref_bwd_fd_gdn_state_v_first),
		cmocka_unit_test(test_ref_bwd_fd_gdn_scale),
		cmocka_unit_test(test_ref_bwd_fd_gdn_all_options),
		cmocka_unit_test(test_ref_bwd_fd_kda_pregated),
		cmocka_unit_test(test_ref_bwd_fd_kda_gate_softplus),
		cmocka_unit_test(test_ref_bwd_fd_kda_gate_softplus_no_bias),
		cmocka_unit_test(test_ref_bwd_fd_kda_gate_lower_bound),
		cmocka_unit_test(test_ref_bwd_fd_kda_gate_lower_bound_no_A_log),
		cmocka_unit_test(test_ref_bwd_fd_kda_gate_lower_bound_no_bias),
		cmocka_unit_test(test_ref_bwd_fd_kda_beta_sigmoid),
		cmocka_unit_test(test_ref_bwd_fd_kda_beta_sigmoid_neg_eigval),
		cmocka_unit_test(test_ref_bwd_fd_kda_l2norm),
		cmocka_unit_test(test_ref_bwd_fd_kda_gva),
		cmocka_unit_test(test_ref_bwd_fd_kda_varlen),
		cmocka_unit_test(test_ref_bwd_fd_kda_state_v_first),
		cmocka_unit_test(test_ref_bwd_fd_kda_scale),
		cmocka_unit_test(test_ref_bwd_fd_kda_all_options_softplus),
		cmocka_unit_test(test_ref_bwd_fd_kda_all_options_lower_bound),
		cmocka_unit_test(test_ref_bwd_fd_long_sequence_checkpoints),
		cmocka_unit_test(test_ref_bwd_empty_sequence_gives_dh0_eq_dht),
		cmocka_unit_test(test_ref_bwd_zero_length_batch),
		cmocka_unit_test(test_ref_bwd_null_dht_and_h0_mean_zero),
		cmocka_unit_test(test_ref_bwd_threads_do_not_change_results),
		cmocka_unit_test(test_ref_bwd_rejects_bad_arguments),
	};
	tu_filter();
	return cmocka_run_group_tests_name("ref_backward", tests, NULL, NULL);
}
