/*
 * test_ref_chunked.c - the fp32 chunked forward (ref_chunked.c):
 *   - o, ht, chunk-start states h and v_new against the fp64 naive
 *     recurrence, for GDN and KDA, C = 16/32/64, partial last chunks,
 *     every gate form, l2norm, beta sigmoid, GVA, state_v_first, varlen
 *     with empty, length-1 and chunk-aligned sequences;
 *   - every intermediate against its definition (spec §3.0), computed
 *     here in fp64 from fp64 gates: Γ, L, (I+L)A = I, Aqk, w and u as
 *     solutions of (I+L)x = rhs, kg, qg;
 *   - varlen equals each sequence alone; stages read only their inputs;
 *   - dtype rounding is applied and stays within FLA's tolerance;
 *   - g = -1000 and the GDN normalizer-0.01 gates stay finite.
 * Tolerance (FLA metric, relative RMS): fp32 accumulation over K, C and
 * the chunk recurrence gives errors ~1e-6 (measured up to 2e-6); Γ is
 * stored in fp32 (spec §2.5), adding up to 2^-24 max|Γ| relative error
 * through exp2(Γ_i - Γ_j). So tol = 2e-5 + 2^-24 max|Γ|.
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

/* The same inputs as doubles (naive) and floats (chunked). */
typedef struct pair {
	tu_data d;
	float *f[8]; /* q k v g beta A_log dt_bias h0 */
	ref_in32 in;
} pair;

static float *to_float(double *x, size_t n)
{
	if (!x)
		return NULL;
	float *f = tu_f32(x, n);
	for (size_t i = 0; i < n; i++)
		x[i] = f[i]; /* the doubles hold the float values */
	return f;
}

static void pair_make(pair *pr, const ref_problem *p, uint64_t seed,
		      unsigned flags)
{
	tu_data *d = &pr->d;
	assert_int_equal(tu_make(d, p, seed, flags), REF_OK);
	const ref_sizes *z = &d->sz;
	if (!p->opts.use_qk_l2norm_in_kernel) { /* unit keys, as in FLA */
		ref_l2norm_fwd(d->q, z->qk / p->K, p->K, d->q);
		ref_l2norm_fwd(d->k, z->qk / p->K, p->K, d->k);
	}
	double *src[8] = {d->q, d->k, d->v, d->g, d->beta, d->A_log,
			  d->dt_bias, d->h0};
	size_t n[8] = {z->qk, z->qk, z->v, z->g, z->beta, z->A_log,
		       z->dt_bias, z->state};
	for (int i = 0; i < 8; i++)
		pr->f[i] = to_float(src[i], n[i]);
	pr->in = (ref_in32){pr->f[0], pr->f[1], pr->f[2], pr->f[3],
			    pr->f[4], pr->f[5], pr->f[6], pr->f[7]};
}

static void pair_free(pair *pr)
{
	for (int i = 0; i < 8; i++)
		free(pr->f[i]);
	tu_free(&pr->d);
}

static double gamma_tol(const ref_chunk *r)
{
	double m = 0;
	for (size_t i = 0; i < r->sz.g; i++)
		m = fmax(m, fabs(r->gcum[i]));
	return 2e-5 + m * 0x1.0p-24;
}

static void expect_close(const char *what, const double *ref,
			 const float *got, size_t n, double tol)
{
	ref_cmp c;
	bool ok = ref_compare_f64_f32(ref, got, n, tol, &c);
	if (getenv("TILEREF_VERBOSE"))
		printf("  %-6s ratio %.3g (tol %.3g)\n", what, c.ratio_err,
		       tol);
	if (!ok)
		print_error("%s: ratio %.3g (tol %.3g), worst [%zu] ref %.9g"
			    " got %.9g\n", what, c.ratio_err, tol, c.worst,
			    c.worst_ref, c.worst_got);
	assert_true(c.pass);
}

typedef struct naive {
	double *o, *ht, *h, *v_new;
} naive;

static naive run_naive(const tu_data *d)
{
	naive nv = {tu_zeros(d->sz.v), tu_zeros(d->sz.state),
		    tu_zeros(d->sz.h), tu_zeros(d->sz.v)};
	ref_fwd64 out = {nv.o, nv.ht, nv.h, nv.v_new};
	assert_int_equal(ref_recurrent_fwd(&d->p, &d->in, &out), REF_OK);
	return nv;
}

static void naive_free(naive *nv)
{
	free(nv->o), free(nv->ht), free(nv->h), free(nv->v_new);
}

static void chunk_vs_naive(const ref_problem *p, unsigned flags)
{
	pair pr;
	pair_make(&pr, p, 21, flags);
	ref_chunk r;
	assert_int_equal(ref_chunk_alloc(&pr.d.p, &r), REF_OK);
	assert_int_equal(ref_chunk_forward(&pr.d.p, &pr.in, &r), REF_OK);
	naive nv = run_naive(&pr.d);
	double tol = gamma_tol(&r);
	expect_close("o", nv.o, r.o, r.sz.v, tol);
	expect_close("ht", nv.ht, r.ht, r.sz.state, tol);
	expect_close("h", nv.h, r.h, r.sz.h, tol);
	expect_close("v_new", nv.v_new, r.v_new, r.sz.v, tol);
	naive_free(&nv);
	ref_chunk_free(&r);
	pair_free(&pr);
}

static const int64_t cu_mix[] = {0, 0, 1, 65, 129, 129, 200};

static ref_problem mid(ref_op op, int C)
{
	ref_problem p = {.op = op, .B = 2, .T = 75, .H = 2, .HV = 2,
			 .K = 16, .V = 12};
	p.opts.chunk_size = C;
	p.opts.threads = tu_threads();
	return p;
}

static void varlen_gva(ref_problem *p)
{
	p->B = 1, p->T = 200, p->cu_seqlens = cu_mix, p->n_seqs = 6;
	p->H = 1, p->HV = 3;
}

static void test_ref_chunk_gdn_matches_naive(void **state)
{
	(void)state;
	static const int sizes[] = {16, 32, 64};
	for (int i = 0; i < 3; i++) {
		ref_problem p = mid(REF_GDN, sizes[i]);
		chunk_vs_naive(&p, TU_H0);
		varlen_gva(&p);
		chunk_vs_naive(&p, TU_H0);
	}
}

static void test_ref_chunk_kda_matches_naive(void **state)
{
	(void)state;
	for (int C = 32; C <= 64; C *= 2) {
		ref_problem p = mid(REF_KDA, C);
		chunk_vs_naive(&p, TU_H0);
		varlen_gva(&p);
		chunk_vs_naive(&p, TU_H0);
	}
}

static void test_ref_chunk_options_match_naive(void **state)
{
	(void)state;
	for (int op = REF_GDN; op <= REF_KDA; op++) {
		ref_problem p = mid((ref_op)op, 64);
		p.opts.use_gate_in_kernel = true;
		chunk_vs_naive(&p, TU_H0 | TU_A_LOG | TU_DT_BIAS);
		p.opts.use_qk_l2norm_in_kernel = true;
		p.opts.use_beta_sigmoid_in_kernel = true;
		p.opts.allow_neg_eigval = true;
		p.opts.state_v_first = true;
		p.opts.scale = 0.3;
		varlen_gva(&p);
		chunk_vs_naive(&p, TU_H0 | TU_A_LOG);
		if (op == REF_KDA) {
			p.opts.has_lower_bound = true;
			p.opts.lower_bound = -5;
			chunk_vs_naive(&p, TU_H0 | TU_DT_BIAS); /* no A_log */
		}
	}
}

/* ---- intermediates against their definitions (spec §3.0) -------------- */

/* fp64 inputs after §2, the chunk-local cumsum γ (natural log), and the
 * definition of every intermediate, laid out as in ref_chunk. */
typedef struct defs {
	const ref_problem *p;
	const tu_data *d;
	const ref_chunk *r;
	double *q, *k, *beta, *g, *gam;
	double *L, *Aqk, *w, *u, *kg, *qg;
	double inv_residual; /* worst relative residual of (I + L) A - I */
} defs;

static void defs_make(const tu_data *d, const ref_chunk *r, defs *x)
{
	const ref_problem *p = &d->p;
	const ref_sizes *z = &d->sz;
	size_t nk = z->beta * p->K;
	*x = (defs){.p = p, .d = d, .r = r};
	x->q = tu_zeros(z->qk), x->k = tu_zeros(z->qk);
	x->beta = tu_zeros(z->beta), x->g = tu_zeros(z->g);
	x->gam = tu_zeros(z->g), x->L = tu_zeros(z->mat);
	x->Aqk = tu_zeros(z->mat), x->w = tu_zeros(nk), x->u = tu_zeros(z->v);
	x->kg = tu_zeros(nk), x->qg = tu_zeros(nk);
	memcpy(x->q, d->q, z->qk * sizeof(double));
	memcpy(x->k, d->k, z->qk * sizeof(double));
	if (p->opts.use_qk_l2norm_in_kernel) {
		ref_l2norm_fwd(d->q, z->qk / p->K, p->K, x->q);
		ref_l2norm_fwd(d->k, z->qk / p->K, p->K, x->k);
	}
	double m = p->opts.allow_neg_eigval ? 2 : 1;
	for (size_t i = 0; i < z->beta; i++)
		x->beta[i] = p->opts.use_beta_sigmoid_in_kernel
				     ? m * ref_sigmoid(d->beta[i])
				     : d->beta[i];
	assert_int_equal(ref_gate_fwd(p, d->g, d->A_log, d->dt_bias, x->g),
			 REF_OK);
}

static void defs_free(defs *x)
{
	double *all[] = {x->q, x->k, x->beta, x->g, x->gam, x->L, x->Aqk,
			 x->w, x->u, x->kg, x->qg};
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		free(all[i]);
}

static int chunk_len(const ref_problem *p)
{
	return p->opts.chunk_size ? p->opts.chunk_size : 64;
}

typedef void (*chunk_cb)(defs *x, int hv, int c0, int nr);

/* Calls fn on every chunk (value head hv, first token c0, nr rows). */
static void each_chunk(defs *x, chunk_cb fn)
{
	const ref_problem *p = x->p;
	int C = chunk_len(p), N = p->cu_seqlens ? p->n_seqs : p->B;
	for (int hv = 0; hv < p->HV; hv++)
		for (int n = 0; n < N; n++) {
			const int64_t *cu = p->cu_seqlens;
			int b = cu ? (int)cu[n] : n * p->T;
			int e = cu ? (int)cu[n + 1] : b + p->T;
			for (int c0 = b; c0 < e; c0 += C)
				fn(x, hv, c0, e - c0 < C ? e - c0 : C);
		}
}

/* Index of (t, hv) in a [B,T,HV,w] array. */
static size_t ix(const ref_problem *p, int t, int hv, int w)
{
	return ((size_t)t * p->HV + hv) * w;
}

/* γ of (t, hv) in channel a (GDN: the scalar). */
static double gam(const defs *x, int t, int hv, int a)
{
	const ref_problem *p = x->p;
	return p->op == REF_KDA ? x->gam[ix(p, t, hv, p->K) + a]
				: x->gam[ix(p, t, hv, 1)];
}

static const double *qk_row(const defs *x, const double *base, int t,
			    int hv)
{
	const ref_problem *p = x->p;
	return base + ((size_t)t * p->H + hv / (p->HV / p->H)) * p->K;
}

/* γ_t = sum of g over the chunk up to t (spec §2.5, natural units). */
static void def_gamma(defs *x, int hv, int c0, int nr)
{
	int W = x->p->op == REF_KDA ? x->p->K : 1;
	for (int a = 0; a < W; a++) {
		double acc = 0;
		for (int i = 0; i < nr; i++) {
			size_t j = ix(x->p, c0 + i, hv, W) + a;
			acc += x->g[j];
			x->gam[j] = acc;
		}
	}
}

/* <a, b>_γ(i, j) = sum_d a_d b_d e^(γ_i,d - γ_j,d) */
static double gdot(const defs *x, const double *a, const double *b, int ti,
		   int tj, int hv)
{
	double s = 0;
	for (int d = 0; d < x->p->K; d++)
		s += a[d] * b[d] * exp(gam(x, ti, hv, d) - gam(x, tj, hv, d));
	return s;
}

/* L_ij = beta_i <k_i, k_j>_γ (i > j); Aqk_ij = s <q_i, k_j>_γ (i >= j). */
static void def_L_Aqk(defs *x, int hv, int c0, int nr)
{
	const ref_problem *p = x->p;
	int C = chunk_len(p);
	double s = p->opts.scale ? p->opts.scale : 1 / sqrt(p->K);
	for (int i = 0; i < nr; i++) {
		int ti = c0 + i;
		size_t m = ix(p, ti, hv, C);
		const double *qi = qk_row(x, x->q, ti, hv);
		const double *ki = qk_row(x, x->k, ti, hv);
		double bi = x->beta[ix(p, ti, hv, 1)];
		for (int j = 0; j <= i; j++) {
			const double *kj = qk_row(x, x->k, c0 + j, hv);
			if (j < i)
				x->L[m + j] = bi * gdot(x, ki, kj, ti, c0 + j,
							hv);
			x->Aqk[m + j] = s * gdot(x, qi, kj, ti, c0 + j, hv);
		}
	}
}

/* Solves (I + L) X = X in place per chunk (forward substitution, fp64);
 * X has rows of width n in a [B,T,HV,n] array. */
static void solve_chunk(const defs *x, int hv, int c0, int nr, double *X,
			int n)
{
	const ref_problem *p = x->p;
	int C = chunk_len(p);
	for (int i = 0; i < nr; i++) {
		double *xi = X + ix(p, c0 + i, hv, n);
		const double *Li = x->L + ix(p, c0 + i, hv, C);
		for (int j = 0; j < i; j++) {
			const double *xj = X + ix(p, c0 + j, hv, n);
			for (int e = 0; e < n; e++)
				xi[e] -= Li[j] * xj[e];
		}
	}
}

/* (I + L) w = beta e^γ k and (I + L) u = beta v, so w = A(beta e^γ k)
 * and u = A(beta v) without forming A; kg = k e^(γ_last - γ), qg = q e^γ
 * (compared for KDA only). */
static void def_wu(defs *x, int hv, int c0, int nr)
{
	const ref_problem *p = x->p;
	int K = p->K, V = p->V, last = c0 + nr - 1;
	for (int i = 0; i < nr; i++) {
		int t = c0 + i;
		double b = x->beta[ix(p, t, hv, 1)];
		const double *k = qk_row(x, x->k, t, hv);
		const double *q = qk_row(x, x->q, t, hv);
		for (int a = 0; a < K; a++) {
			double G = gam(x, t, hv, a), GL = gam(x, last, hv, a);
			x->w[ix(p, t, hv, K) + a] = b * exp(G) * k[a];
			x->kg[ix(p, t, hv, K) + a] = k[a] * exp(GL - G);
			x->qg[ix(p, t, hv, K) + a] = q[a] * exp(G);
		}
		for (int e = 0; e < V; e++)
			x->u[ix(p, t, hv, V) + e] =
				b * x->d->v[ix(p, t, hv, V) + e];
	}
	solve_chunk(x, hv, c0, nr, x->w, K);
	solve_chunk(x, hv, c0, nr, x->u, V);
}

/* A is unit lower triangular with exact zeros above and (I + L) A = I.
 * The residual is taken relative to sum |L_im| |A_mj|, the scale of the
 * rounding in the product: a stable fp32 substitution gives ~C 2^-24. */
static void check_inverse(defs *x, int hv, int c0, int nr)
{
	const ref_problem *p = x->p;
	int C = chunk_len(p);
	for (int i = 0; i < nr; i++) {
		const float *Li = x->r->L + ix(p, c0 + i, hv, C);
		const float *Ai = x->r->A + ix(p, c0 + i, hv, C);
		assert_true(Ai[i] == 1.0f);
		for (int j = i + 1; j < C; j++)
			assert_true(Ai[j] == 0.0f);
		for (int j = 0; j < i; j++) {
			double e = Ai[j], mag = fabs(Ai[j]);
			for (int m = j; m < i; m++) {
				double Amj = x->r->A[ix(p, c0 + m, hv, C) + j];
				e += Li[m] * Amj;
				mag += fabs(Li[m] * Amj);
			}
			x->inv_residual = fmax(x->inv_residual,
					       fabs(e) / (mag + 1e-30));
		}
	}
}

static void intermediates(const ref_problem *p, unsigned flags)
{
	pair pr;
	pair_make(&pr, p, 31, flags);
	ref_chunk r;
	assert_int_equal(ref_chunk_alloc(&pr.d.p, &r), REF_OK);
	assert_int_equal(ref_chunk_forward(&pr.d.p, &pr.in, &r), REF_OK);
	defs x;
	defs_make(&pr.d, &r, &x);
	each_chunk(&x, def_gamma);
	each_chunk(&x, def_L_Aqk);
	each_chunk(&x, def_wu);
	each_chunk(&x, check_inverse);
	assert_true(x.inv_residual < 1e-5);
	const ref_sizes *z = &r.sz;
	size_t nk = z->beta * p->K;
	for (size_t i = 0; i < z->g; i++)
		x.gam[i] /= log(2.0); /* Γ is in log2 units */
	double tol = gamma_tol(&r);
	expect_close("gcum", x.gam, r.gcum, z->g, 1e-6);
	expect_close("L", x.L, r.L, z->mat, tol);
	expect_close("Aqk", x.Aqk, r.Aqk, z->mat, tol);
	expect_close("w", x.w, r.w, nk, tol);
	expect_close("u", x.u, r.u, z->v, tol);
	if (p->op == REF_KDA) {
		expect_close("kg", x.kg, r.kg, nk, tol);
		expect_close("qg", x.qg, r.qg, nk, tol);
	}
	defs_free(&x);
	ref_chunk_free(&r);
	pair_free(&pr);
}

static void test_ref_chunk_intermediates_match_definitions(void **state)
{
	(void)state;
	for (int op = REF_GDN; op <= REF_KDA; op++)
		for (int C = 32; C <= 64; C *= 2) {
			ref_problem p = mid((ref_op)op, C);
			intermediates(&p, TU_H0);
			p.opts.use_gate_in_kernel = true;
			p.opts.use_qk_l2norm_in_kernel = true;
			p.opts.use_beta_sigmoid_in_kernel = true;
			varlen_gva(&p);
			intermediates(&p, TU_H0 | TU_A_LOG | TU_DT_BIAS);
		}
}

/* ---- structure ----------------------------------------------------------- */

/* Field sizes of a ref_chunk, in the order of the struct. */
static void field_list(ref_chunk *r, int K, float **f[16], size_t n[16])
{
	const ref_sizes *z = &r->sz;
	float **p[16] = {&r->q, &r->k, &r->beta, &r->g, &r->gcum, &r->L,
			 &r->A, &r->Aqk, &r->w, &r->u, &r->kg, &r->qg, &r->h,
			 &r->v_new, &r->o, &r->ht};
	size_t m[16] = {z->qk, z->qk, z->beta, z->g, z->g, z->mat, z->mat,
			z->mat, z->beta * K, z->v, z->beta * K, z->beta * K,
			z->h, z->v, z->v, z->state};
	for (int i = 0; i < 16; i++)
		f[i] = p[i], n[i] = m[i];
}

enum { F_Q, F_K, F_BETA, F_G, F_GCUM, F_L, F_A, F_AQK, F_W, F_U, F_KG, F_QG,
       F_H, F_VNEW, F_O, F_HT };

/* Fills the fields in `poison` with NaN, reruns one stage and checks the
 * fields in `out` are bitwise what the full forward produced. */
static void stage_contract(const pair *pr, ref_chunk *r, unsigned poison,
			   unsigned out, int stage)
{
	const ref_problem *p = &pr->d.p;
	float **f[16];
	size_t n[16];
	float *save[16] = {0};
	assert_int_equal(ref_chunk_forward(p, &pr->in, r), REF_OK);
	field_list(r, p->K, f, n);
	for (int i = 0; i < 16; i++)
		if ((out >> i & 1) && *f[i]) {
			save[i] = malloc(n[i] * sizeof(float) + 1);
			memcpy(save[i], *f[i], n[i] * sizeof(float));
		}
	for (int i = 0; i < 16; i++)
		for (size_t j = 0; (poison >> i & 1) && *f[i] && j < n[i]; j++)
			(*f[i])[j] = NAN;
	ref_status s = stage == 0   ? ref_chunk_intra(p, r)
		       : stage == 1 ? ref_chunk_wu(p, pr->in.v, r)
		       : stage == 2 ? ref_chunk_fwd_h(p, pr->in.h0, r)
				    : ref_chunk_fwd_o(p, r);
	assert_int_equal(s, REF_OK);
	for (int i = 0; i < 16; i++) {
		size_t bytes = n[i] * sizeof(float);
		if (save[i] && memcmp(save[i], *f[i], bytes))
			print_error("stage %d changed field %d\n", stage, i);
		if (save[i])
			assert_memory_equal(save[i], *f[i], bytes);
		free(save[i]);
	}
}

#define B_(x) (1u << (x))

/* Each stage reads only the fields its comment in ref.h names. */
static void test_ref_chunk_stages_read_only_their_inputs(void **state)
{
	(void)state;
	for (int op = REF_GDN; op <= REF_KDA; op++) {
		ref_problem p = mid((ref_op)op, 32);
		varlen_gva(&p);
		pair pr;
		pair_make(&pr, &p, 41, TU_H0);
		ref_chunk r;
		assert_int_equal(ref_chunk_alloc(&pr.d.p, &r), REF_OK);
		unsigned intra_out = B_(F_L) | B_(F_A) | B_(F_AQK);
		unsigned wu_out = B_(F_W) | B_(F_U) | B_(F_KG) | B_(F_QG);
		unsigned h_out = B_(F_H) | B_(F_VNEW) | B_(F_HT);
		unsigned o_in = B_(F_GCUM) | B_(F_H) | B_(F_VNEW) |
				(op == REF_KDA ? B_(F_QG) | B_(F_AQK)
					       : B_(F_Q) | B_(F_K));
		stage_contract(&pr, &r, 0xffffu & ~(B_(F_Q) | B_(F_K) |
			       B_(F_BETA) | B_(F_GCUM)), intra_out, 0);
		stage_contract(&pr, &r, 0xffffu & ~(B_(F_Q) | B_(F_K) |
			       B_(F_BETA) | B_(F_GCUM) | B_(F_A)), wu_out, 1);
		unsigned h_in = B_(F_W) | B_(F_U) | B_(F_GCUM) |
				(op == REF_KDA ? B_(F_KG) : B_(F_K));
		stage_contract(&pr, &r, 0xffffu & ~h_in, h_out, 2);
		stage_contract(&pr, &r, 0xffffu & ~o_in, B_(F_O), 3);
		ref_chunk_free(&r);
		pair_free(&pr);
	}
}

static void chunk_run(const ref_problem *p, const ref_in32 *in,
		      ref_chunk *r)
{
	assert_int_equal(ref_chunk_alloc(p, r), REF_OK);
	assert_int_equal(ref_chunk_forward(p, in, r), REF_OK);
}

/* Sequence n of the packed run `all` against a B = 1 run of it alone. */
static void sequence_alone(const pair *pr, const ref_chunk *all, int n)
{
	const ref_problem *p = &pr->d.p;
	int HV = p->HV, K = p->K, V = p->V, C = 64;
	int W = p->op == REF_KDA ? K : 1;
	int b = (int)p->cu_seqlens[n], len = (int)p->cu_seqlens[n + 1] - b;
	size_t st = (size_t)HV * K * V, bv = (size_t)b * HV;
	ref_problem q = *p;
	q.cu_seqlens = NULL, q.n_seqs = 0, q.T = len;
	ref_in32 in = {pr->f[0] + (size_t)b * p->H * K,
		       pr->f[1] + (size_t)b * p->H * K, pr->f[2] + bv * V,
		       pr->f[3] + bv * W, pr->f[4] + bv, pr->f[5], NULL,
		       pr->f[7] + n * st};
	ref_chunk one;
	chunk_run(&q, &in, &one);
	size_t nv = (size_t)len * HV * V * sizeof(float);
	assert_memory_equal(one.o, all->o + bv * V, nv);
	assert_memory_equal(one.ht, all->ht + n * st, st * sizeof(float));
	assert_memory_equal(one.A, all->A + bv * C,
			    (size_t)len * HV * C * sizeof(float));
	ref_chunk_free(&one);
}

/* A packed batch gives bitwise the per-sequence results. */
static void test_ref_chunk_varlen_equals_sequences_alone(void **state)
{
	(void)state;
	for (int op = REF_GDN; op <= REF_KDA; op++) {
		ref_problem p = mid((ref_op)op, 64);
		varlen_gva(&p);
		p.opts.use_gate_in_kernel = true;
		pair pr;
		pair_make(&pr, &p, 51, TU_H0 | TU_A_LOG);
		ref_chunk all;
		chunk_run(&pr.d.p, &pr.in, &all);
		for (int n = 0; n < p.n_seqs; n++)
			sequence_alone(&pr, &all, n);
		ref_chunk_free(&all);
		pair_free(&pr);
	}
}

static void rounding_case(ref_op op, ref_dtype dt)
{
	ref_problem p = mid(op, 64);
	p.K = p.V = 32, p.T = 150;
	pair pr;
	pair_make(&pr, &p, 61, TU_H0);
	ref_problem q = pr.d.p;
	q.opts.dtype = dt;
	ref_chunk r, r32;
	chunk_run(&q, &pr.in, &r);
	chunk_run(&pr.d.p, &pr.in, &r32);
	for (size_t j = 0; j < r.sz.mat; j++)
		assert_true(ref_round(r.A[j], dt) == r.A[j]);
	naive nv = run_naive(&pr.d);
	expect_close("o", nv.o, r.o, r.sz.v, 0.005);
	expect_close("ht", nv.ht, r.ht, r.sz.state, 0.005);
	ref_cmp c;
	ref_compare_f32(r32.o, r.o, r.sz.v, 1, &c);
	assert_true(c.ratio_err > 1e-4);
	naive_free(&nv);
	ref_chunk_free(&r), ref_chunk_free(&r32);
	pair_free(&pr);
}

/* FLA's rounding points: A is representable in the dtype, o lands within
 * FLA's tolerance of the fp64 naive and visibly away from fp32. */
static void test_ref_chunk_dtype_rounding(void **state)
{
	(void)state;
	for (int op = REF_GDN; op <= REF_KDA; op++) {
		rounding_case((ref_op)op, REF_BF16);
		rounding_case((ref_op)op, REF_F16);
	}
}

/* KDA: every third g is -1000, as in FLA's KDA varlen stress rows.
 * GDN: g in [-65.2, -31], like the normalizer-0.01 row. */
static void extreme_case(ref_op op)
{
	ref_problem p = mid(op, 64);
	pair pr;
	pair_make(&pr, &p, 71, TU_H0);
	for (size_t i = 0; i < pr.d.sz.g; i++) {
		double g = op == REF_KDA ? (i % 3 == 0 ? -1000 : -0.3)
					 : -31 - 3.8 * (double)((i * 7) % 10);
		pr.d.g[i] = pr.f[3][i] = (float)g;
	}
	ref_chunk r;
	chunk_run(&pr.d.p, &pr.in, &r);
	for (size_t i = 0; i < r.sz.v; i++)
		assert_true(isfinite(r.o[i]));
	naive nv = run_naive(&pr.d);
	expect_close("o", nv.o, r.o, r.sz.v, gamma_tol(&r));
	expect_close("ht", nv.ht, r.ht, r.sz.state, gamma_tol(&r));
	naive_free(&nv);
	ref_chunk_free(&r);
	pair_free(&pr);
}

/* Every exponent stays <= 0: results finite and close to the naive. */
static void test_ref_chunk_extreme_gates(void **state)
{
	(void)state;
	extreme_case(REF_GDN);
	extreme_case(REF_KDA);
}

/* Spec §9.5: no chunks for an empty sequence, so ht = h0 exactly. */
static void test_ref_chunk_empty_sequence_gives_ht_eq_h0(void **state)
{
	(void)state;
	ref_problem p = mid(REF_KDA, 32);
	varlen_gva(&p); /* sequences 0 and 4 are empty */
	pair pr;
	pair_make(&pr, &p, 81, TU_H0);
	ref_chunk r;
	assert_int_equal(ref_chunk_alloc(&pr.d.p, &r), REF_OK);
	assert_int_equal(ref_chunk_forward(&pr.d.p, &pr.in, &r), REF_OK);
	size_t st = (size_t)p.HV * p.K * p.V;
	assert_memory_equal(r.ht, pr.f[7], st * sizeof(float));
	assert_memory_equal(r.ht + 4 * st, pr.f[7] + 4 * st,
			    st * sizeof(float));
	assert_int_equal(r.sz.n_chunks, 0 + 1 + 2 + 2 + 0 + 3);
	ref_chunk_free(&r);
	pair_free(&pr);
}

static void test_ref_chunk_rejects_bad_arguments(void **state)
{
	(void)state;
	ref_problem p = mid(REF_KDA, 64), q = p;
	q.T = 80;
	ref_chunk r;
	assert_int_equal(ref_chunk_alloc(&p, &r), REF_OK);
	assert_int_equal(ref_chunk_intra(&q, &r), REF_ERR_ARG);
	assert_int_equal(ref_chunk_fwd_o(&q, &r), REF_ERR_ARG);
	assert_int_equal(ref_chunk_wu(&p, NULL, &r), REF_ERR_ARG);
	assert_int_equal(ref_chunk_prepare(&p, NULL, &r), REF_ERR_ARG);
	q = p, q.op = REF_GDN; /* GDN buffers have no kg/qg */
	ref_chunk_free(&r);
	assert_int_equal(ref_chunk_alloc(&q, &r), REF_OK);
	assert_null(r.kg);
	assert_int_equal(ref_chunk_intra(&p, &r), REF_ERR_ARG);
	ref_chunk_free(&r);
	ref_chunk_free(&r); /* idempotent */
	p.opts.chunk_size = 16;
	assert_int_equal(ref_chunk_alloc(&p, &r), REF_ERR_ARG);
	assert_int_equal(ref_chunk_alloc(&p, NULL), REF_ERR_ARG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ref_chunk_gdn_matches_naive),
		cmocka_unit_test(test_ref_chunk_kda_matches_naive),
		cmocka_unit_test(test_ref_chunk_options_match_naive),
		cmocka_unit_test(
			test_ref_chunk_intermediates_match_definitions),
		cmocka_unit_test(test_ref_chunk_stages_read_only_their_inputs),
		cmocka_unit_test(test_ref_chunk_varlen_equals_sequences_alone),
		cmocka_unit_test(test_ref_chunk_dtype_rounding),
		cmocka_unit_test(test_ref_chunk_extreme_gates),
		cmocka_unit_test(test_ref_chunk_empty_sequence_gives_ht_eq_h0),
		cmocka_unit_test(test_ref_chunk_rejects_bad_arguments),
	};
	tu_filter();
	return cmocka_run_group_tests_name("ref_chunked", tests, NULL, NULL);
}
