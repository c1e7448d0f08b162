/*
 * test_ref_cp.c - the algebra that context parallelism over sequence
 * segments rests on, checked on the fp64 recurrence (ref_recurrent.c).
 *
 * For GDN and KDA the state after a segment is an affine function of the
 * state before it, the same K x K matrix acting on every value column:
 *   S_end = P S_start + B
 * B is the segment run from a zero state; P is the segment run with v = 0
 * from the identity (V = K: column j of the result is P e_j). A long
 * sequence can therefore be cut into segments whose (P, B) are computed in
 * parallel, chained in order (S <- P S + B), and the segments then rerun
 * from their exact start states for the outputs. These tests check that
 * the chained final state and the per-segment outputs equal one run over
 * the whole sequence, to fp64 rounding, with every gate and option form,
 * for cuts at and between chunk boundaries. The backward runs the same
 * maps in reverse: dS_start = P^T dS_end + C, C the segment's gradient with
 * dS_end = 0 (check_reverse_segments). Also the bound that chunk_recur's
 * warmup segments rest on (check_warmup_bound).
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

/* Pointers to token t0 of the inputs of a one-sequence problem (B = 1). */
static ref_in64 slice(const tu_data *d, int t0, const double *v, int v_cols,
		      const double *h0)
{
	const ref_problem *p = &d->p;
	size_t gw = p->op == REF_KDA ? (size_t)p->K : 1;
	ref_in64 in = d->in;
	in.q = d->q + (size_t)t0 * p->H * p->K;
	in.k = d->k + (size_t)t0 * p->H * p->K;
	in.v = v + (size_t)t0 * p->HV * v_cols;
	in.g = d->g + (size_t)t0 * p->HV * gw;
	in.beta = d->beta + (size_t)t0 * p->HV;
	in.h0 = h0;
	return in;
}

/* Runs tokens [t0, t1) of d from state h0 (NULL: zero) with values v of
 * v_cols columns; writes the final state and (if o) the outputs. */
static void run_segment(const tu_data *d, int t0, int t1, const double *v, int v_cols,
			const double *h0, double *ht, double *o)
{
	ref_problem p = d->p;
	p.T = t1 - t0;
	p.V = v_cols;
	ref_in64 in = slice(d, t0, v, v_cols, h0);
	ref_fwd64 out = {.o = o, .ht = ht};
	assert_int_equal(ref_recurrent_fwd(&p, &in, &out), REF_OK);
}

/* The whole sequence, then the same through segments cut at `cuts`. */
static void check_segments(const ref_problem *prob, unsigned flags, const int *cuts,
			   int ncuts)
{
	tu_data d;
	assert_int_equal(tu_make(&d, prob, 11, flags), REF_OK);
	const ref_problem *p = &d.p;
	int K = p->K, V = p->V, HV = p->HV, T = p->T;
	size_t state = (size_t)HV * K * V, tstate = (size_t)HV * K * K;
	double *o_full = tu_zeros((size_t)T * HV * V), *ht_full = tu_zeros(state);
	run_segment(&d, 0, T, d.v, V, d.h0, ht_full, o_full);

	double *zero_v = tu_zeros((size_t)T * HV * K); /* v = 0 for P, V = K columns */
	double *eye = tu_zeros(tstate), *P = tu_zeros(tstate);
	for (int h = 0; h < HV; h++)
		for (int a = 0; a < K; a++)
			eye[((size_t)h * K + a) * K + a] = 1;
	double *S = tu_zeros(state), *Bs = tu_zeros(state), *next = tu_zeros(state);
	double *o_seg = tu_zeros((size_t)T * HV * V);
	if (d.h0)
		memcpy(S, d.h0, state * sizeof *S);
	int t0 = 0;
	for (int s = 0; s <= ncuts; s++) {
		int t1 = s < ncuts ? cuts[s] : T;
		/* the outputs of the segment from its exact start state */
		run_segment(&d, t0, t1, d.v, V, S, next, o_seg + (size_t)t0 * HV * V);
		/* (P, B) of the segment, independent of S, then S <- P S + B */
		run_segment(&d, t0, t1, d.v, V, NULL, Bs, NULL);
		run_segment(&d, t0, t1, zero_v, K, eye, P, NULL);
		for (int h = 0; h < HV; h++)
			for (int a = 0; a < K; a++)
				for (int c = 0; c < V; c++) {
					double acc = Bs[((size_t)h * K + a) * V + c];
					for (int j = 0; j < K; j++)
						acc += P[((size_t)h * K + a) * K + j] *
						       S[((size_t)h * K + j) * V + c];
					next[((size_t)h * K + a) * V + c] = acc;
				}
		memcpy(S, next, state * sizeof *S);
		t0 = t1;
	}
	assert_true(tu_rel_max(S, ht_full, state) < 1e-11);
	assert_true(tu_rel_max(o_seg, o_full, (size_t)T * HV * V) < 1e-11);
	free(o_full), free(ht_full), free(zero_v), free(eye), free(P);
	free(S), free(Bs), free(next), free(o_seg);
	tu_free(&d);
}

/* (P^T X) per head into out: P [HV, K, K] (rows: keys out), X and out [HV, K, V]. */
static void apply_map_t(const double *P, const double *X, double *out, int HV, int K, int V)
{
	for (int h = 0; h < HV; h++)
		for (int a = 0; a < K; a++)
			for (int c = 0; c < V; c++) {
				double acc = 0;
				for (int j = 0; j < K; j++)
					acc += P[((size_t)h * K + j) * K + a] *
					       X[((size_t)h * K + j) * V + c];
				out[((size_t)h * K + a) * V + c] = acc;
			}
}

/* Token rows [t0, t1) of a [T, heads, width] gradient against the whole run's. */
static void expect_rows(const double *seg, const double *full, int t0, int t1, size_t row)
{
	size_t off = (size_t)t0 * row, n = (size_t)(t1 - t0) * row;
	assert_true(tu_rel_max(seg + off, full + off, n) < 1e-10);
}

/*
 * The backward over segments: the state gradient at each segment's start is the transposed
 * map of the one at its end plus the segment's own part, X_j = P_j^T X_j+1 + C_j (C_j: the
 * segment's dh0 with do over it and dht = 0; X at the sequence's end is dht), chained from
 * the last segment down with the forward's maps P_j. Then each segment's backward from its
 * exact start S_j with dht = X_j+1 gives the whole run's gradients on its tokens, and X_0 is
 * the whole run's dh0.
 */
static void check_reverse_segments(const ref_problem *prob, unsigned flags, const int *cuts,
				   int ncuts)
{
	tu_data d;
	assert_int_equal(tu_make(&d, prob, 17, flags), REF_OK);
	const ref_problem *p = &d.p;
	int K = p->K, V = p->V, H = p->H, HV = p->HV, T = p->T, nseg = ncuts + 1;
	int gw = p->op == REF_KDA ? K : 1;
	size_t state = (size_t)HV * K * V, tstate = (size_t)HV * K * K;
	/* slow gates: the last head never decays, the others 16 times slower than drawn */
	for (int t = 0; t < T; t++)
		for (int h = 0; h < HV; h++)
			for (int c = 0; c < gw; c++) {
				double *g = &d.g[((size_t)t * HV + h) * gw + c];
				*g = h == HV - 1 ? 0 : *g / 16;
			}
	ref_rng rng;
	ref_rng_seed(&rng, 29, 0);
	double *dout = tu_zeros((size_t)T * HV * V), *dht = tu_zeros(state);
	for (size_t i = 0; i < (size_t)T * HV * V; i++)
		dout[i] = ref_rng_normal(&rng);
	for (size_t i = 0; i < state; i++)
		dht[i] = ref_rng_normal(&rng);
	ref_grads64 full = {.dq = tu_zeros((size_t)T * H * K), .dk = tu_zeros((size_t)T * H * K),
			    .dv = tu_zeros((size_t)T * HV * V), .dg = tu_zeros((size_t)T * HV * gw),
			    .dbeta = tu_zeros((size_t)T * HV), .dh0 = tu_zeros(state)};
	assert_int_equal(ref_recurrent_bwd(p, &d.in, dout, dht, &full), REF_OK);

	/* the segments' bounds, exact starts S_j (chained forward) and maps P_j */
	int *t0s = malloc((size_t)(nseg + 1) * sizeof *t0s);
	double *S = tu_zeros(state * (size_t)nseg), *P = tu_zeros(tstate * (size_t)nseg);
	double *zero_v = tu_zeros((size_t)T * HV * K), *eye = tu_zeros(tstate);
	for (int h = 0; h < HV; h++)
		for (int a = 0; a < K; a++)
			eye[((size_t)h * K + a) * K + a] = 1;
	t0s[0] = 0;
	for (int s = 0; s < nseg; s++)
		t0s[s + 1] = s < ncuts ? cuts[s] : T;
	if (d.h0)
		memcpy(S, d.h0, state * sizeof *S);
	for (int s = 0; s < nseg; s++) {
		if (s + 1 < nseg)
			run_segment(&d, t0s[s], t0s[s + 1], d.v, V, S + s * state,
				    S + (s + 1) * state, NULL);
		run_segment(&d, t0s[s], t0s[s + 1], zero_v, K, eye, P + s * tstate, NULL);
	}

	/* the reverse chain, X_nseg = dht, then each segment's gradients from X_j+1 */
	double *X = tu_zeros(state * (size_t)(nseg + 1)), *tmp = tu_zeros(state);
	memcpy(X + nseg * state, dht, state * sizeof *X);
	ref_grads64 seg = {.dq = tu_zeros((size_t)T * H * K), .dk = tu_zeros((size_t)T * H * K),
			   .dv = tu_zeros((size_t)T * HV * V), .dg = tu_zeros((size_t)T * HV * gw),
			   .dbeta = tu_zeros((size_t)T * HV), .dh0 = tu_zeros(state)};
	for (int s = nseg - 1; s >= 0; s--) {
		ref_problem ps = *p;
		ps.T = t0s[s + 1] - t0s[s];
		ref_in64 in = slice(&d, t0s[s], d.v, V, S + s * state);
		const double *ds = dout + (size_t)t0s[s] * HV * V;
		ref_grads64 c = {.dh0 = tmp};
		assert_int_equal(ref_recurrent_bwd(&ps, &in, ds, NULL, &c), REF_OK);
		apply_map_t(P + s * tstate, X + (s + 1) * state, X + s * state, HV, K, V);
		for (size_t i = 0; i < state; i++)
			X[s * state + i] += tmp[i];
		/* the segment's own gradients, given its end's */
		ref_grads64 g = {.dq = seg.dq + (size_t)t0s[s] * H * K,
				 .dk = seg.dk + (size_t)t0s[s] * H * K,
				 .dv = seg.dv + (size_t)t0s[s] * HV * V,
				 .dg = seg.dg + (size_t)t0s[s] * HV * gw,
				 .dbeta = seg.dbeta + (size_t)t0s[s] * HV, .dh0 = tmp};
		assert_int_equal(ref_recurrent_bwd(&ps, &in, ds, X + (s + 1) * state, &g), REF_OK);
		assert_true(tu_rel_max(tmp, X + s * state, state) < 1e-10);
	}
	assert_true(tu_rel_max(X, full.dh0, state) < 1e-10);
	for (int s = 0; s < nseg; s++) {
		expect_rows(seg.dq, full.dq, t0s[s], t0s[s + 1], (size_t)H * K);
		expect_rows(seg.dk, full.dk, t0s[s], t0s[s + 1], (size_t)H * K);
		expect_rows(seg.dv, full.dv, t0s[s], t0s[s + 1], (size_t)HV * V);
		expect_rows(seg.dg, full.dg, t0s[s], t0s[s + 1], (size_t)HV * gw);
		expect_rows(seg.dbeta, full.dbeta, t0s[s], t0s[s + 1], (size_t)HV);
	}
	free(dout), free(dht), free(t0s), free(S), free(P), free(zero_v), free(eye), free(X);
	free(tmp);
	double *bufs[] = {full.dq, full.dk, full.dv, full.dg, full.dbeta, full.dh0,
			  seg.dq, seg.dk, seg.dv, seg.dg, seg.dbeta, seg.dh0};
	for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
		free(bufs[i]);
	tu_free(&d);
}

static ref_problem one_sequence(ref_op op)
{
	return (ref_problem){.op = op, .B = 1, .T = 200, .H = 1, .HV = 2,
			     .K = 8, .V = 6, .opts = {.threads = 1}};
}

static const int chunk_cuts[] = {64, 128};      /* at chunk boundaries */
static const int ragged_cuts[] = {1, 37, 150};  /* anywhere, a one-token segment */

/* sqrt of the sum of squares of head h's part of a [HV, K, V] state */
static double head_norm(const double *S, int h, int K, int V)
{
	double acc = 0;
	for (size_t i = 0; i < (size_t)K * V; i++)
		acc += S[(size_t)h * K * V + i] * S[(size_t)h * K * V + i];
	return sqrt(acc);
}

/*
 * The warmup of gdn_fused's context parallelism (gdn_fused.tile): a segment starts from the
 * state chain run from zero over the W tokens before it. What that drops is M S_pre, M the
 * window's state map; each token's map 2^g (I - beta k k^T) has norm at most 2^g max(1,
 * |1 - beta|) when |k| = 1 (the in-kernel l2norm), so |S_true - S_warm| <= 2^bound
 * |S_pre| with bound = sum over the window of g / ln 2 + log2 max(1, |1 - beta|), per
 * value head (gdn_kkt's CB, summed). KDA (chunk_recur.tile) the same with each token's map
 * (I - beta k k^T) diag(2^g), whose norm is at most 2^max_c g max(1, |1 - beta|): the bound
 * takes each token's largest gate over the channels (chunk_prep's CB). Checked with gates
 * weak enough that the dropped part is visible (KDA: channel 0 at g_each, the others 20x
 * faster, so that a bound from the channels' mean instead of their maximum would fail),
 * beta in [0, 2] and beyond it.
 */
static void check_warmup_bound(ref_op op, double g_each, double beta_lo, double beta_hi)
{
	ref_problem prob = one_sequence(op);
	prob.T = 160;
	prob.opts.use_qk_l2norm_in_kernel = true;
	tu_data d;
	assert_int_equal(tu_make(&d, &prob, 23, TU_H0), REF_OK);
	const ref_problem *p = &d.p;
	int K = p->K, V = p->V, HV = p->HV, start = 100, W = 40;
	int gw = op == REF_KDA ? K : 1; /* gates per token and head */
	for (int t = 0; t < p->T; t++)
		for (int h = 0; h < HV; h++) {
			for (int c = 0; c < gw; c++)
				d.g[((size_t)t * HV + h) * gw + c] =
					g_each * (1 + 0.5 * h) * (gw == 1 || c == 0 ? 1 : 20);
			double u = (double)((t * 7 + h * 3) % 11) / 10;
			d.beta[(size_t)t * HV + h] = beta_lo + (beta_hi - beta_lo) * u;
		}
	size_t state = (size_t)HV * K * V;
	double *pre = tu_zeros(state), *truth = tu_zeros(state), *warm = tu_zeros(state);
	run_segment(&d, 0, start - W, d.v, V, d.h0, pre, NULL);
	run_segment(&d, start - W, start, d.v, V, pre, truth, NULL);
	run_segment(&d, start - W, start, d.v, V, NULL, warm, NULL);
	for (int h = 0; h < HV; h++) {
		double bound = 0;
		for (int t = start - W; t < start; t++) {
			double beta = d.beta[(size_t)t * HV + h], gmax = -INFINITY;
			for (int c = 0; c < gw; c++)
				gmax = fmax(gmax, d.g[((size_t)t * HV + h) * gw + c]);
			bound += gmax / log(2.0) + log2(fmax(1, fabs(1 - beta)));
		}
		double *diff = tu_zeros((size_t)K * V);
		for (size_t i = 0; i < (size_t)K * V; i++)
			diff[i] = truth[(size_t)h * K * V + i] - warm[(size_t)h * K * V + i];
		double dropped = head_norm(diff, 0, K, V), limit = exp2(bound) * head_norm(pre, h, K, V);
		assert_true(dropped > 0);   /* the window does not erase the state */
		assert_true(dropped <= limit * (1 + 1e-9) + 1e-12 * head_norm(truth, h, K, V));
		free(diff);
	}
	free(pre), free(truth), free(warm);
	tu_free(&d);
}

static void test_ref_cp_warmup_bound(void **state)
{
	(void)state;
	for (int op = 0; op < 2; op++) {
		ref_op o = op ? REF_KDA : REF_GDN;
		check_warmup_bound(o, -0.02, 0.1, 1.0); /* sigmoid-range beta */
		check_warmup_bound(o, -0.05, 0.0, 2.0); /* allow_neg_eigval's range: |1 - beta| <= 1 */
		check_warmup_bound(o, -0.05, 1.5, 3.0); /* beyond it: the bound grows, still holds */
	}
}

static void test_ref_cp_gdn(void **state)
{
	(void)state;
	ref_problem p = one_sequence(REF_GDN);
	check_segments(&p, TU_H0, chunk_cuts, 2);
	check_segments(&p, 0, ragged_cuts, 3);
}

static void test_ref_cp_gdn_options(void **state)
{
	(void)state;
	ref_problem p = one_sequence(REF_GDN);
	p.HV = 4; /* GVA: 4 value heads on 1 q/k head */
	p.opts.use_qk_l2norm_in_kernel = true;
	p.opts.use_beta_sigmoid_in_kernel = true;
	p.opts.allow_neg_eigval = true;
	p.opts.use_gate_in_kernel = true;
	check_segments(&p, TU_H0 | TU_A_LOG | TU_DT_BIAS, chunk_cuts, 2);
	check_segments(&p, TU_H0 | TU_A_LOG, ragged_cuts, 3);
}

static void test_ref_cp_kda(void **state)
{
	(void)state;
	ref_problem p = one_sequence(REF_KDA);
	p.opts.use_qk_l2norm_in_kernel = true;
	check_segments(&p, TU_H0, chunk_cuts, 2);
	p.opts.use_gate_in_kernel = true;
	p.opts.has_lower_bound = true;
	p.opts.lower_bound = -5;
	check_segments(&p, TU_H0 | TU_A_LOG | TU_DT_BIAS, ragged_cuts, 3);
}

/* The backward's reverse chain over segments, both ops; slow gates with a head that never
 * decays (g = 0), where no truncation could stand in for the maps. */
static void test_ref_cp_reverse(void **state)
{
	(void)state;
	for (int op = 0; op < 2; op++) {
		ref_problem p = one_sequence(op ? REF_KDA : REF_GDN);
		p.opts.use_qk_l2norm_in_kernel = true;
		check_reverse_segments(&p, TU_H0, chunk_cuts, 2);
		check_reverse_segments(&p, 0, ragged_cuts, 3);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ref_cp_reverse),
		cmocka_unit_test(test_ref_cp_gdn),
		cmocka_unit_test(test_ref_cp_gdn_options),
		cmocka_unit_test(test_ref_cp_kda),
		cmocka_unit_test(test_ref_cp_warmup_bound),
	};
	tu_filter();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
