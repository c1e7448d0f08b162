/*
 * ref_gates.c - the elementwise input transforms of spec §2 in fp64,
 * forward and backward: q/k l2norm (§2.1), beta sigmoid (§2.2), the GDN
 * softplus gate (§2.3) and the KDA softplus and lower-bound gates (§2.4).
 * Also ref_prep64_init, which applies the forward transforms to a
 * problem's inputs for the naive recurrence.
 *
 * The gate backward takes dL/dg for the per-step natural-log gate g
 * (spec §4.5, after the reverse cumsum) and returns dL/dg_raw plus the
 * parameter gradients, summed serially in token order so the result does
 * not depend on threading. The softplus derivative is sigmoid(x) on both
 * sides of the threshold 20, as FLA's gate backward computes it.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ref_internal.h"

double ref_sigmoid(double x)
{
	if (x >= 0)
		return 1.0 / (1.0 + exp(-x));
	double e = exp(x);
	return e / (1.0 + e);
}

double ref_softplus(double x)
{
	return x > 20 ? x : log1p(exp(x)); /* threshold as F.softplus, §2.3 */
}

/* Gate parameters of one value head. */
typedef struct gate_par {
	bool lb_form;    /* KDA lower-bound form (b) */
	double lb, a;    /* form (b): lb and a = exp(A_log) or 1 */
	double decay;    /* softplus form: exp(A_log) */
} gate_par;

static gate_par gate_params(const ref_problem *p, const double *A_log, int hv)
{
	gate_par gp = {0};
	gp.lb_form = p->op == REF_KDA && p->opts.has_lower_bound;
	gp.lb = p->opts.lower_bound;
	gp.a = A_log ? exp(A_log[hv]) : 1.0;
	gp.decay = gp.a;
	return gp;
}

static double gate_one(const gate_par *gp, double x)
{
	if (gp->lb_form)
		return gp->lb * ref_sigmoid(gp->a * x);  /* §2.4 (b) */
	return -gp->decay * ref_softplus(x);             /* §2.3, §2.4 (a) */
}

static double bias_at(const ref_problem *p, const double *dt_bias, int hv,
		      int d)
{
	if (!dt_bias)
		return 0;
	return p->op == REF_KDA ? dt_bias[hv * p->K + d] : dt_bias[hv];
}

ref_status ref_gate_fwd(const ref_problem *p, const double *g_raw,
			const double *A_log, const double *dt_bias, double *g)
{
	ref_status s = ref_problem_check(p);
	if (s != REF_OK || !g_raw || !g)
		return s != REF_OK ? s : REF_ERR_ARG;
	int W = ref_gate_width(p), BT = p->B * p->T;
	size_t n = (size_t)BT * p->HV * W;
	if (!p->opts.use_gate_in_kernel) {
		memmove(g, g_raw, n * sizeof(double));
		return REF_OK;
	}
	if (!A_log && !(p->op == REF_KDA && p->opts.has_lower_bound))
		return REF_ERR_ARG;
	for (int hv = 0; hv < p->HV; hv++) {
		gate_par gp = gate_params(p, A_log, hv);
		for (int t = 0; t < BT; t++)
			for (int d = 0; d < W; d++) {
				size_t i = ref_ix_g(p, t, hv) + d;
				double x = g_raw[i] +
					   bias_at(p, dt_bias, hv, d);
				g[i] = gate_one(&gp, x);
			}
	}
	return REF_OK;
}

/* d g / d x and d g / d A_log for one element (spec §2.3, §2.4). */
static void gate_grad(const gate_par *gp, double x, bool has_A,
		      double *dg_dx, double *dg_dA)
{
	if (gp->lb_form) {
		double s = ref_sigmoid(gp->a * x);
		*dg_dx = gp->lb * s * (1 - s) * gp->a;
		*dg_dA = has_A ? *dg_dx * x : 0;   /* d(ax)/dA_log = ax */
		return;
	}
	*dg_dx = -gp->decay * ref_sigmoid(x);
	*dg_dA = -gp->decay * ref_softplus(x); /* = g itself */
}

static void zero_if(double *x, size_t n)
{
	if (x)
		memset(x, 0, n * sizeof(double));
}

ref_status ref_gate_bwd(const ref_problem *p, const double *g_raw,
			const double *A_log, const double *dt_bias,
			const double *dg, double *dg_raw, double *dA_log,
			double *ddt_bias)
{
	ref_status s = ref_problem_check(p);
	if (s != REF_OK || !g_raw || !dg)
		return s != REF_OK ? s : REF_ERR_ARG;
	int W = ref_gate_width(p), BT = p->B * p->T;
	zero_if(dA_log, p->HV);
	zero_if(ddt_bias, (size_t)p->HV * W);
	if (!p->opts.use_gate_in_kernel) {
		if (dg_raw)
			memmove(dg_raw, dg,
				(size_t)BT * p->HV * W * sizeof(double));
		return REF_OK;
	}
	if (!A_log && !(p->op == REF_KDA && p->opts.has_lower_bound))
		return REF_ERR_ARG;
	for (int hv = 0; hv < p->HV; hv++) {
		gate_par gp = gate_params(p, A_log, hv);
		for (int t = 0; t < BT; t++)
			for (int d = 0; d < W; d++) {
				size_t i = ref_ix_g(p, t, hv) + d;
				double x = g_raw[i] +
					   bias_at(p, dt_bias, hv, d);
				double dx, dA;
				gate_grad(&gp, x, A_log != NULL, &dx, &dA);
				if (dg_raw)
					dg_raw[i] = dg[i] * dx;
				if (dA_log)
					dA_log[hv] += dg[i] * dA;
				if (ddt_bias)
					ddt_bias[hv * W + d] += dg[i] * dx;
			}
	}
	return REF_OK;
}

void ref_l2norm_fwd(const double *x, size_t rows, int K, double *y)
{
	for (size_t r = 0; r < rows; r++) {
		const double *xr = x + r * K;
		double ss = 0;
		for (int d = 0; d < K; d++)
			ss += xr[d] * xr[d];
		double rstd = 1.0 / sqrt(ss + REF_L2NORM_EPS);
		for (int d = 0; d < K; d++)
			y[r * K + d] = xr[d] * rstd;
	}
}

/* dx = rstd (dy - y (y . dy)), spec §2.1, with y recomputed in fp64. */
void ref_l2norm_bwd(const double *x, const double *dy, size_t rows, int K,
		    double *dx)
{
	for (size_t r = 0; r < rows; r++) {
		const double *xr = x + r * K, *dyr = dy + r * K;
		double ss = 0, ydy = 0;
		for (int d = 0; d < K; d++)
			ss += xr[d] * xr[d];
		double rstd = 1.0 / sqrt(ss + REF_L2NORM_EPS);
		for (int d = 0; d < K; d++)
			ydy += xr[d] * rstd * dyr[d];
		for (int d = 0; d < K; d++)
			dx[r * K + d] = rstd * (dyr[d] - xr[d] * rstd * ydy);
	}
}

/* beta = m sigmoid(beta_raw), m = 2 with allow_neg_eigval (spec §2.2). */
static double beta_mult(const ref_problem *p)
{
	return p->opts.allow_neg_eigval ? 2.0 : 1.0;
}

void ref_beta_bwd64(const ref_problem *p, const double *beta_raw,
		    const double *dbeta, double *dbeta_raw)
{
	size_t n = (size_t)p->B * p->T * p->HV;
	for (size_t i = 0; i < n; i++) {
		if (!p->opts.use_beta_sigmoid_in_kernel) {
			dbeta_raw[i] = dbeta[i];
			continue;
		}
		double s = ref_sigmoid(beta_raw[i]);
		dbeta_raw[i] = dbeta[i] * beta_mult(p) * s * (1 - s);
	}
}

void ref_prep64_free(ref_prep64 *x)
{
	for (int i = 0; i < 4; i++) {
		free(x->own[i]);
		x->own[i] = NULL;
	}
}

static ref_status prep_qk(const ref_problem *p, const ref_in64 *in,
			  ref_prep64 *x, size_t rows)
{
	if (!p->opts.use_qk_l2norm_in_kernel) {
		x->q = in->q;
		x->k = in->k;
		return REF_OK;
	}
	x->own[0] = ref_alloc(rows * p->K, sizeof(double));
	x->own[1] = ref_alloc(rows * p->K, sizeof(double));
	if (!x->own[0] || !x->own[1])
		return REF_ERR_NOMEM;
	ref_l2norm_fwd(in->q, rows, p->K, x->own[0]);
	ref_l2norm_fwd(in->k, rows, p->K, x->own[1]);
	x->q = x->own[0];
	x->k = x->own[1];
	return REF_OK;
}

static ref_status prep_beta_g(const ref_problem *p, const ref_in64 *in,
			      ref_prep64 *x, size_t nb)
{
	x->beta = in->beta;
	x->g = in->g;
	if (p->opts.use_beta_sigmoid_in_kernel) {
		if (!(x->own[2] = ref_alloc(nb, sizeof(double))))
			return REF_ERR_NOMEM;
		for (size_t i = 0; i < nb; i++)
			x->own[2][i] = beta_mult(p) * ref_sigmoid(in->beta[i]);
		x->beta = x->own[2];
	}
	if (p->opts.use_gate_in_kernel) {
		if (!(x->own[3] = ref_alloc(nb * ref_gate_width(p),
					     sizeof(double))))
			return REF_ERR_NOMEM;
		ref_status s = ref_gate_fwd(p, in->g, in->A_log, in->dt_bias,
					    x->own[3]);
		if (s != REF_OK)
			return s;
		x->g = x->own[3];
	}
	return REF_OK;
}

ref_status ref_prep64_init(const ref_problem *p, const ref_in64 *in,
			   ref_prep64 *x)
{
	memset(x, 0, sizeof(*x));
	size_t bt = (size_t)p->B * p->T;
	x->v = in->v;
	ref_status s = prep_qk(p, in, x, bt * p->H);
	if (s == REF_OK)
		s = prep_beta_g(p, in, x, bt * p->HV);
	if (s != REF_OK)
		ref_prep64_free(x);
	return s;
}
