/*
 * test_ref_recurrent.c - the fp64 naive forward (ref_recurrent.c) against
 * values derivable by hand and against itself under transformations that
 * must not change the result:
 *   - one-step GDN and KDA values worked out by hand (spec §1);
 *   - the delta rule stores v: with beta = 1, g = 0, |k| = 1, ht^T k = v;
 *   - varlen equals running each sequence alone (forward and backward);
 *   - GVA equals explicitly repeated q/k heads, hv -> hv / G (spec §5);
 *   - state_v_first equals the default layout transposed (spec §1);
 *   - the lower-bound gate without A_log equals A_log = 0 (spec §2.4);
 *   - empty sequences give ht = h0; chunk-start states equal the final
 *     state of the truncated problem;
 *   - invalid shapes and options return error codes.
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

static ref_problem small(ref_op op)
{
	return (ref_problem){.op = op, .B = 2, .T = 9, .H = 2, .HV = 2,
			     .K = 4, .V = 3, .opts = {.threads = 1}};
}

/* h0 = 2, e^g = 1/2, k = 1, v = 3, beta = 1/2: S' = 1, r = 1, S = 2,
 * o = s S q = 2 with q = 1, s = 1. */
static void test_ref_fwd_gdn_one_step_by_hand(void **state)
{
	(void)state;
	ref_problem p = {.op = REF_GDN, .B = 1, .T = 1, .H = 1, .HV = 1,
			 .K = 1, .V = 1, .opts = {.scale = 1}};
	double q = 1, k = 1, v = 3, g = log(0.5), beta = 0.5, h0 = 2;
	ref_in64 in = {&q, &k, &v, &g, &beta, NULL, NULL, &h0};
	double o = 0, ht = 0, vn = 0;
	ref_fwd64 out = {.o = &o, .ht = &ht, .v_new = &vn};
	assert_int_equal(ref_recurrent_fwd(&p, &in, &out), REF_OK);
	tu_assert_near(o, 2.0, 1e-15);
	tu_assert_near(ht, 2.0, 1e-15);
	tu_assert_near(vn, 1.0, 1e-15);
}

/* KDA, K = 2, V = 1: h0 = (2, 4), e^g = (1/2, 1/4) -> S' = (1, 1);
 * k = (1, 1), v = 5, beta = 1 -> r = 3, S = (4, 4); q = (1, 1/2) -> o = 6. */
static void test_ref_fwd_kda_one_step_by_hand(void **state)
{
	(void)state;
	ref_problem p = {.op = REF_KDA, .B = 1, .T = 1, .H = 1, .HV = 1,
			 .K = 2, .V = 1, .opts = {.scale = 1}};
	double q[] = {1, 0.5}, k[] = {1, 1}, v = 5, beta = 1, h0[] = {2, 4};
	double g[] = {log(0.5), log(0.25)};
	ref_in64 in = {q, k, &v, g, &beta, NULL, NULL, h0};
	double o = 0, ht[2] = {0};
	ref_fwd64 out = {.o = &o, .ht = ht};
	assert_int_equal(ref_recurrent_fwd(&p, &in, &out), REF_OK);
	tu_assert_near(o, 6.0, 1e-14);
	tu_assert_near(ht[0], 4.0, 1e-14);
	tu_assert_near(ht[1], 4.0, 1e-14);
}

/* With beta = 1 and no decay the last write makes S^T k_T = v_T. */
static void test_ref_fwd_delta_rule_stores_value(void **state)
{
	(void)state;
	for (int op = REF_GDN; op <= REF_KDA; op++) {
		ref_problem p = small((ref_op)op);
		p.B = 1, p.H = p.HV = 1;
		tu_data d;
		assert_int_equal(tu_make(&d, &p, 3, TU_H0), REF_OK);
		for (int t = 0; t < p.T; t++) { /* exact unit keys */
			double *k = d.k + t * p.K, ss = 0;
			for (int a = 0; a < p.K; a++)
				ss += k[a] * k[a];
			for (int a = 0; a < p.K; a++)
				k[a] /= sqrt(ss);
		}
		for (size_t i = 0; i < d.sz.g; i++)
			d.g[i] = 0;
		for (size_t i = 0; i < d.sz.beta; i++)
			d.beta[i] = 1;
		double *ht = tu_zeros(d.sz.state);
		ref_fwd64 out = {.ht = ht};
		assert_int_equal(ref_recurrent_fwd(&d.p, &d.in, &out), REF_OK);
		const double *kT = d.k + (p.T - 1) * p.K;
		const double *vT = d.v + (p.T - 1) * p.V;
		for (int b = 0; b < p.V; b++) {
			double s = 0;
			for (int a = 0; a < p.K; a++)
				s += ht[a * p.V + b] * kT[a];
			tu_assert_near(s, vT[b], 1e-12);
		}
		free(ht);
		tu_free(&d);
	}
}

typedef struct fwd_res {
	double *o, *ht, *h;
} fwd_res;

static fwd_res run_fwd(const ref_problem *p, const ref_in64 *in)
{
	ref_sizes z;
	assert_int_equal(ref_problem_sizes(p, &z), REF_OK);
	fwd_res r = {tu_zeros(z.v), tu_zeros(z.state), tu_zeros(z.h)};
	ref_fwd64 out = {.o = r.o, .ht = r.ht, .h = r.h};
	assert_int_equal(ref_recurrent_fwd(p, in, &out), REF_OK);
	return r;
}

static void free_res(fwd_res *r)
{
	free(r->o);
	free(r->ht);
	free(r->h);
}

static ref_in64 shift_in(const ref_problem *p, const tu_data *d, int bos,
			 int n)
{
	size_t W = p->op == REF_KDA ? p->K : 1;
	size_t st = (size_t)p->HV * p->K * p->V;
	ref_in64 in = {d->q + (size_t)bos * p->H * p->K,
		       d->k + (size_t)bos * p->H * p->K,
		       d->v + (size_t)bos * p->HV * p->V,
		       d->g + (size_t)bos * p->HV * W,
		       d->beta + (size_t)bos * p->HV,
		       d->A_log, d->dt_bias, d->h0 + n * st};
	return in;
}

static const int64_t var_cu[] = {0, 5, 5, 6, 13, 20};

/* Sequence n of a packed batch equals a B = 1 problem of its length. */
static void varlen_vs_alone(ref_op op)
{
	ref_problem p = small(op);
	p.B = 1, p.T = 20, p.cu_seqlens = var_cu, p.n_seqs = 5;
	p.opts.use_gate_in_kernel = true, p.opts.threads = 2;
	tu_data d;
	assert_int_equal(tu_make(&d, &p, 4, TU_H0 | TU_A_LOG | TU_DT_BIAS),
			 REF_OK);
	fwd_res all = run_fwd(&d.p, &d.in);
	for (int n = 0; n < 5; n++) {
		int bos = (int)var_cu[n], len = (int)(var_cu[n + 1] - bos);
		ref_problem q = d.p;
		q.cu_seqlens = NULL, q.n_seqs = 0, q.T = len;
		ref_in64 in = shift_in(&p, &d, bos, n);
		fwd_res one = run_fwd(&q, &in);
		size_t nv = (size_t)len * p.HV * p.V, st = d.sz.state / 5;
		assert_memory_equal(one.o, all.o + (size_t)bos * p.HV * p.V,
				    nv * sizeof(double));
		assert_memory_equal(one.ht, all.ht + n * st,
				    st * sizeof(double));
		free_res(&one);
	}
	free_res(&all);
	tu_free(&d);
}

static void test_ref_fwd_varlen_equals_sequences_alone(void **state)
{
	(void)state;
	varlen_vs_alone(REF_GDN);
	varlen_vs_alone(REF_KDA);
}

/* Backward: per-token and per-state gradients match exactly; dA_log and
 * ddt_bias are sums over the sequences. */
static void bwd_one(const ref_problem *p, const ref_in64 *in,
		    const double *dout, const double *dht, double *buf,
		    ref_grads64 *g)
{
	ref_sizes z;
	assert_int_equal(ref_problem_sizes(p, &z), REF_OK);
	g->dq = buf, buf += z.qk;
	g->dk = buf, buf += z.qk;
	g->dv = buf, buf += z.v;
	g->dg = buf, buf += z.g;
	g->dbeta = buf, buf += z.beta;
	g->dA_log = buf, buf += z.A_log;
	g->ddt_bias = buf, buf += z.dt_bias;
	g->dh0 = buf;
	assert_int_equal(ref_recurrent_bwd(p, in, dout, dht, g), REF_OK);
}

static void test_ref_bwd_varlen_equals_sequences_alone(void **state)
{
	(void)state;
	ref_problem p = small(REF_KDA);
	p.B = 1, p.T = 20, p.cu_seqlens = var_cu, p.n_seqs = 5;
	p.opts.use_gate_in_kernel = true, p.opts.has_lower_bound = true;
	p.opts.lower_bound = -3;
	tu_data d;
	assert_int_equal(tu_make(&d, &p, 5, TU_H0 | TU_A_LOG | TU_DT_BIAS),
			 REF_OK);
	double *ball = tu_zeros(100000), *bone = tu_zeros(100000);
	double sumA[2] = {0}, sumb[8] = {0};
	ref_grads64 ga, go;
	bwd_one(&d.p, &d.in, d.dout, d.dht, ball, &ga);
	size_t st = d.sz.state / 5;
	for (int n = 0; n < 5; n++) {
		int bos = (int)var_cu[n], len = (int)(var_cu[n + 1] - bos);
		ref_problem q = d.p;
		q.cu_seqlens = NULL, q.n_seqs = 0, q.T = len;
		ref_in64 in = shift_in(&p, &d, bos, n);
		bwd_one(&q, &in, d.dout + (size_t)bos * p.HV * p.V,
			d.dht + n * st, bone, &go);
		size_t nk = (size_t)len * p.H * p.K, ng = nk; /* H = HV */
		assert_memory_equal(go.dq, ga.dq + (size_t)bos * p.H * p.K,
				    nk * sizeof(double));
		assert_memory_equal(go.dg, ga.dg + (size_t)bos * p.HV * p.K,
				    ng * sizeof(double));
		assert_memory_equal(go.dh0, ga.dh0 + n * st,
				    st * sizeof(double));
		for (int i = 0; i < 2; i++)
			sumA[i] += go.dA_log[i];
		for (int i = 0; i < 8; i++)
			sumb[i] += go.ddt_bias[i];
	}
	assert_true(tu_rel_max(sumA, ga.dA_log, 2) < 1e-13);
	assert_true(tu_rel_max(sumb, ga.ddt_bias, 8) < 1e-13);
	free(ball);
	free(bone);
	tu_free(&d);
}

/* GVA (H = 2, HV = 6) equals H = HV = 6 with q/k head hv / 3 repeated. */
static void gva_vs_repeat(ref_op op)
{
	ref_problem p = small(op);
	p.H = 2, p.HV = 6, p.opts.use_qk_l2norm_in_kernel = true;
	tu_data d;
	assert_int_equal(tu_make(&d, &p, 6, TU_H0), REF_OK);
	ref_problem r = d.p;
	r.H = 6;
	size_t rows = (size_t)p.B * p.T;
	double *q6 = tu_zeros(rows * 6 * p.K), *k6 = tu_zeros(rows * 6 * p.K);
	for (size_t t = 0; t < rows; t++)
		for (int hv = 0; hv < 6; hv++)
			for (int a = 0; a < p.K; a++) {
				size_t src = (t * 2 + hv / 3) * p.K + a;
				q6[(t * 6 + hv) * p.K + a] = d.q[src];
				k6[(t * 6 + hv) * p.K + a] = d.k[src];
			}
	ref_in64 in6 = d.in;
	in6.q = q6, in6.k = k6;
	fwd_res a = run_fwd(&d.p, &d.in), b = run_fwd(&r, &in6);
	assert_memory_equal(a.o, b.o, d.sz.v * sizeof(double));
	assert_memory_equal(a.ht, b.ht, d.sz.state * sizeof(double));
	double *ga = tu_zeros(100000), *gb = tu_zeros(100000), *sum;
	ref_grads64 gra, grb;
	bwd_one(&d.p, &d.in, d.dout, d.dht, ga, &gra);
	bwd_one(&r, &in6, d.dout, d.dht, gb, &grb);
	sum = tu_zeros(d.sz.qk);
	for (size_t t = 0; t < rows; t++)
		for (int hv = 0; hv < 6; hv++)
			for (int x = 0; x < p.K; x++)
				sum[(t * 2 + hv / 3) * p.K + x] +=
					grb.dq[(t * 6 + hv) * p.K + x];
	assert_true(tu_rel_max(sum, gra.dq, d.sz.qk) < 1e-12);
	assert_memory_equal(gra.dv, grb.dv, d.sz.v * sizeof(double));
	free_res(&a), free_res(&b), free(q6), free(k6);
	free(ga), free(gb), free(sum);
	tu_free(&d);
}

static void test_ref_gva_equals_repeated_heads(void **state)
{
	(void)state;
	gva_vs_repeat(REF_GDN);
	gva_vs_repeat(REF_KDA);
}

static void transpose_states(const ref_problem *p, const double *src,
			     double *dst, size_t nstates)
{
	int K = p->K, V = p->V;
	for (size_t s = 0; s < nstates; s++)
		for (int a = 0; a < K; a++)
			for (int b = 0; b < V; b++)
				dst[s * K * V + b * K + a] =
					src[s * K * V + a * V + b];
}

/* state_v_first stores S^T: with h0 transposed, ht, dh0 and the chunk
 * states come out transposed and everything else is identical. */
static void test_ref_state_v_first_equals_transposed(void **state)
{
	(void)state;
	for (int op = REF_GDN; op <= REF_KDA; op++) {
		ref_problem p = small((ref_op)op);
		p.opts.chunk_size = 32, p.T = 70;
		tu_data d;
		assert_int_equal(tu_make(&d, &p, 7, TU_H0), REF_OK);
		ref_problem pv = d.p;
		pv.opts.state_v_first = true;
		size_t ns = d.sz.state / (p.K * p.V);
		double *h0t = tu_zeros(d.sz.state);
		double *dhtt = tu_zeros(d.sz.state);
		double *x = tu_zeros(d.sz.h + 1);
		transpose_states(&p, d.h0, h0t, ns);
		transpose_states(&p, d.dht, dhtt, ns);
		ref_in64 inv = d.in;
		inv.h0 = h0t;
		fwd_res a = run_fwd(&d.p, &d.in), b = run_fwd(&pv, &inv);
		assert_memory_equal(a.o, b.o, d.sz.v * sizeof(double));
		transpose_states(&p, a.ht, x, ns);
		assert_memory_equal(x, b.ht, d.sz.state * sizeof(double));
		transpose_states(&p, a.h, x, d.sz.h / (p.K * p.V));
		assert_memory_equal(x, b.h, d.sz.h * sizeof(double));
		double *ga = tu_zeros(100000), *gb = tu_zeros(100000);
		ref_grads64 gra, grb;
		bwd_one(&d.p, &d.in, d.dout, d.dht, ga, &gra);
		bwd_one(&pv, &inv, d.dout, dhtt, gb, &grb);
		transpose_states(&p, gra.dh0, x, ns);
		assert_memory_equal(x, grb.dh0, d.sz.state * sizeof(double));
		assert_memory_equal(gra.dq, grb.dq, d.sz.qk * sizeof(double));
		assert_memory_equal(gra.dg, grb.dg, d.sz.g * sizeof(double));
		free_res(&a), free_res(&b), free(h0t), free(dhtt), free(x);
		free(ga), free(gb);
		tu_free(&d);
	}
}

/* Lower-bound gate: a = exp(A_log) or 1 without A_log, so A_log = 0
 * (exp(0) = 1 exactly) must give bitwise the same outputs. */
static void test_ref_lower_bound_without_A_log_equals_zero_A_log(void **state)
{
	(void)state;
	ref_problem p = small(REF_KDA);
	p.opts.use_gate_in_kernel = true, p.opts.has_lower_bound = true;
	p.opts.lower_bound = -5;
	tu_data d;
	assert_int_equal(tu_make(&d, &p, 8, TU_H0 | TU_DT_BIAS), REF_OK);
	double zero[2] = {0, 0};
	ref_in64 inz = d.in;
	inz.A_log = zero;
	fwd_res a = run_fwd(&d.p, &d.in), b = run_fwd(&d.p, &inz);
	assert_memory_equal(a.o, b.o, d.sz.v * sizeof(double));
	assert_memory_equal(a.ht, b.ht, d.sz.state * sizeof(double));
	double *ga = tu_zeros(100000), *gb = tu_zeros(100000);
	ref_grads64 gra, grb;
	bwd_one(&d.p, &d.in, d.dout, d.dht, ga, &gra);
	bwd_one(&d.p, &inz, d.dout, d.dht, gb, &grb);
	assert_memory_equal(gra.dg, grb.dg, d.sz.g * sizeof(double));
	assert_memory_equal(gra.ddt_bias, grb.ddt_bias,
			    d.sz.dt_bias * sizeof(double));
	assert_true(gra.dA_log[0] == 0 && gra.dA_log[1] == 0);
	assert_true(grb.dA_log[0] != 0); /* defined when A_log is given */
	free_res(&a), free_res(&b), free(ga), free(gb);
	tu_free(&d);
}

/* Spec §9.5: an empty sequence gives ht = h0 and writes no output. */
static void test_ref_fwd_empty_sequence_gives_ht_eq_h0(void **state)
{
	(void)state;
	static const int64_t cu[] = {0, 4, 4, 5};
	for (int op = REF_GDN; op <= REF_KDA; op++) {
		ref_problem p = small((ref_op)op);
		p.B = 1, p.T = 5, p.cu_seqlens = cu, p.n_seqs = 3;
		tu_data d;
		assert_int_equal(tu_make(&d, &p, 9, TU_H0), REF_OK);
		fwd_res a = run_fwd(&d.p, &d.in);
		size_t st = d.sz.state / 3;
		assert_memory_equal(a.ht + st, d.h0 + st, st * sizeof(double));
		assert_true(memcmp(a.ht, d.h0, st * sizeof(double)) != 0);
		assert_int_equal(d.sz.n_chunks, 2);
		free_res(&a);
		tu_free(&d);
	}
}

/* h[c] (state at chunk c's start) = ht of the first c C tokens. */
static void test_ref_fwd_chunk_states_are_prefix_states(void **state)
{
	(void)state;
	ref_problem p = small(REF_KDA);
	p.B = 1, p.T = 80, p.opts.chunk_size = 32;
	tu_data d;
	assert_int_equal(tu_make(&d, &p, 10, TU_H0), REF_OK);
	fwd_res a = run_fwd(&d.p, &d.in);
	assert_int_equal(d.sz.n_chunks, 3);
	for (int c = 0; c < 3; c++) {
		ref_problem q = d.p;
		q.T = 32 * c;
		fwd_res b = run_fwd(&q, &d.in);
		assert_memory_equal(a.h + c * d.sz.state, b.ht,
				    d.sz.state * sizeof(double));
		free_res(&b);
	}
	free_res(&a);
	tu_free(&d);
}

static void want_status(ref_problem p, ref_status want)
{
	assert_int_equal(ref_problem_check(&p), want);
}

static void test_ref_rejects_bad_shapes_and_options(void **state)
{
	(void)state;
	static const int64_t up[] = {0, 5, 3, 9}, short_cu[] = {0, 5, 8};
	ref_problem p = small(REF_KDA), q;
	want_status(p, REF_OK);
	q = p, q.HV = 3;                    want_status(q, REF_ERR_SHAPE);
	q = p, q.K = 257;                   want_status(q, REF_ERR_SHAPE);
	q = p, q.T = -1;                    want_status(q, REF_ERR_SHAPE);
	q = p, q.B = 1, q.T = 9, q.cu_seqlens = up, q.n_seqs = 3;
	want_status(q, REF_ERR_SHAPE);     /* not monotone */
	q.cu_seqlens = short_cu, q.n_seqs = 2;
	want_status(q, REF_ERR_SHAPE);     /* cu[N] != T */
	q.T = 8, q.B = 2;
	want_status(q, REF_ERR_SHAPE);     /* varlen needs B = 1 */
	q = p, q.opts.chunk_size = 16;      want_status(q, REF_ERR_ARG);
	q.op = REF_GDN;                     want_status(q, REF_OK);
	q = p, q.opts.allow_neg_eigval = true; want_status(q, REF_ERR_ARG);
	q = p, q.op = REF_GDN, q.opts.has_lower_bound = true;
	want_status(q, REF_ERR_ARG);       /* GDN has no lower bound */
	q = p, q.opts.safe_gate = q.opts.use_gate_in_kernel = true;
	want_status(q, REF_ERR_ARG);       /* safe_gate needs lb */
	q.opts.has_lower_bound = true, q.opts.lower_bound = -6;
	want_status(q, REF_ERR_ARG);
	q.opts.lower_bound = -5;            want_status(q, REF_OK);
	assert_int_equal(ref_problem_check(NULL), REF_ERR_ARG);
}

static void test_ref_fwd_rejects_missing_inputs(void **state)
{
	(void)state;
	ref_problem p = small(REF_KDA);
	p.opts.use_gate_in_kernel = true;
	tu_data d;
	assert_int_equal(tu_make(&d, &p, 11, 0), REF_OK);
	ref_fwd64 out = {0};
	assert_int_equal(ref_recurrent_fwd(&d.p, &d.in, &out), REF_ERR_ARG);
	d.p.opts.has_lower_bound = true, d.p.opts.lower_bound = -1;
	assert_int_equal(ref_recurrent_fwd(&d.p, &d.in, &out), REF_OK);
	d.in.v = NULL;
	assert_int_equal(ref_recurrent_fwd(&d.p, &d.in, &out), REF_ERR_ARG);
	assert_int_equal(ref_recurrent_fwd(&d.p, NULL, &out), REF_ERR_ARG);
	tu_free(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ref_fwd_gdn_one_step_by_hand),
		cmocka_unit_test(test_ref_fwd_kda_one_step_by_hand),
		cmocka_unit_test(test_ref_fwd_delta_rule_stores_value),
		cmocka_unit_test(test_ref_fwd_varlen_equals_sequences_alone),
		cmocka_unit_test(test_ref_bwd_varlen_equals_sequences_alone),
		cmocka_unit_test(test_ref_gva_equals_repeated_heads),
		cmocka_unit_test(test_ref_state_v_first_equals_transposed),
		cmocka_unit_test(
			test_ref_lower_bound_without_A_log_equals_zero_A_log),
		cmocka_unit_test(test_ref_fwd_empty_sequence_gives_ht_eq_h0),
		cmocka_unit_test(test_ref_fwd_chunk_states_are_prefix_states),
		cmocka_unit_test(test_ref_rejects_bad_shapes_and_options),
		cmocka_unit_test(test_ref_fwd_rejects_missing_inputs),
	};
	tu_filter();
	return cmocka_run_group_tests_name("ref_recurrent", tests, NULL, NULL);
}
