/*
 * test_kda_plain.c: kernels/kda_plain.tile, the plain chunked KDA forward, against the fp64
 * recurrence of tests/ref with FLA's metric (relative RMS < 5e-3 on o and the final state),
 * over cases that reach every path: two sequences of 120 and 80 tokens packed with cu_seqlens
 * (partial chunks) and an empty third one, GVA (2 q/k heads, 4 value heads), head dims 64 and
 * 128, the l2norm on and off, keys-first and values-first states, and three gate regimes:
 * logsigmoid(randn) per channel, the same / 16 with g = 0 on every fourth value head, and
 * g = -1000 (exp(g) = 0 in every format); and the builds that read g and beta in bf16 (D = 128)
 * or beta alone (D = 64), over the three regimes, the reference given the same rounded values.
 * Outputs are NaN-poisoned; inputs fresh each run.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "ref.h"
#include "tile_la_plain.h"

enum { T = 200, H = 2, HV = 4, NSEQ = 3 };
static const int32_t cu32[NSEQ + 1] = {0, 120, 200, 200};
static const int64_t cu64[NSEQ + 1] = {0, 120, 200, 200};
static const double TOL = 5e-3;

typedef enum gates { GATES_FAST, GATES_SLOW, GATES_HUGE } gates;
static const char *const gate_names[] = {"logsigmoid(randn)", "slow, g = 0 on h % 4 == 3",
					 "g = -1000"};

static double normal(example *ex)
{
	double u1 = example_uniform(ex, 1e-7f, 1.0f), u2 = example_uniform(ex, 0.0f, 1.0f);
	return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

static float gate(example *ex, gates regime, int hv)
{
	if (regime == GATES_HUGE)
		return -1000.0f;
	double x = normal(ex), ls = x < 0 ? x - log1p(exp(x)) : -log1p(exp(-x)); /* logsigmoid */
	if (regime == GATES_SLOW)
		return hv % 4 == 3 ? 0.0f : (float)(ls / 16.0);
	return (float)ls;
}

/* x rounded to bf16 in place (the reference reads what the kernel reads), and its bf16 bits
 * (malloc'd) */
static uint16_t *round_bf16(float *x, size_t n)
{
	uint16_t *b = malloc(n * sizeof *b);
	for (size_t i = 0; i < n; i++) {
		b[i] = example_bf16(x[i]);
		x[i] = example_bf16_to_f32(b[i]);
	}
	return b;
}

/* The build of a case: g and beta in f32 (D = 64, 128), both in bf16 (_gb16, D = 128), beta
 * alone in bf16 (_b16, D = 64). */
static const tile_embedded_module *module_of(int D, bool g16, bool b16)
{
	if (g16)
		return &tile_module_kda_plain_bf16_d128_gb16;
	if (b16)
		return &tile_module_kda_plain_bf16_d64_b16;
	return D == 64 ? &tile_module_kda_plain_bf16_d64 : &tile_module_kda_plain_bf16_d128;
}

static double *widen(const float *x, size_t n)
{
	double *y = malloc(n * sizeof *y);
	for (size_t i = 0; i < n; i++)
		y[i] = x[i];
	return y;
}

/* Device buffers for the largest case (D = 128), reused by every case: the harness holds at
 * most EXAMPLE_MAX_BUFFERS. */
typedef struct buffers {
	uint64_t q, k, v, g, beta, h0, cu, o, ht;
} buffers;

static void put(example *ex, uint64_t dev, const void *host, size_t bytes)
{
	example_must(ex, tile_mem_copy_htod(ex->rt, dev, host, bytes), "tile_mem_copy_htod");
}

/* The output buffers NaN-poisoned again (0x7fc00000 words; bf16 NaN pairs 0x7fc07fc0). */
static void poison(example *ex, uint64_t dev, size_t words, uint32_t pattern)
{
	uint32_t *p = malloc(words * 4);
	for (size_t i = 0; i < words; i++)
		p[i] = pattern;
	put(ex, dev, p, words * 4);
	free(p);
}

static int run_case(example *ex, const buffers *d, int D, bool l2norm, bool v_first,
		    gates regime, bool g16, bool b16)
{
	size_t nqk = (size_t)T * H * D, nv = (size_t)T * HV * D, ng = nv, nb = (size_t)T * HV;
	size_t nh = (size_t)NSEQ * HV * D * D;
	float *q, *k, *v;
	/* without the kernel's l2norm, q and k come normalised (as FLA's callers pass them) */
	uint16_t *qb = example_random_bf16_rows(ex, nqk, -1.0f, 1.0f, l2norm ? 0 : D, &q);
	uint16_t *kb = example_random_bf16_rows(ex, nqk, -1.0f, 1.0f, l2norm ? 0 : D, &k);
	uint16_t *vb = example_random_bf16(ex, nv, -1.0f, 1.0f, &v);
	float *g = malloc(ng * sizeof *g), *beta = example_random(ex, nb, 0.1f, 0.9f);
	for (size_t i = 0; i < ng; i++)
		g[i] = gate(ex, regime, (int)(i / D % HV));
	float *h0 = example_random(ex, nh, -1.0f, 1.0f);
	uint16_t *gb = g16 ? round_bf16(g, ng) : NULL, *betab = b16 ? round_bf16(beta, nb) : NULL;

	tile_kernel *kern;
	tile_module *mod = NULL;
	example_must(ex, tile_module_create(ex->rt, module_of(D, g16, b16), &mod),
		     "tile_module_create");
	example_must(ex, tile_kernel_get(mod, "kda_plain", &kern), "tile_kernel_get");
	put(ex, d->q, qb, nqk * 2), put(ex, d->k, kb, nqk * 2), put(ex, d->v, vb, nv * 2);
	put(ex, d->g, g16 ? (const void *)gb : g, ng * (g16 ? 2 : 4));
	put(ex, d->beta, b16 ? (const void *)betab : beta, nb * (b16 ? 2 : 4));
	put(ex, d->h0, h0, nh * 4);
	poison(ex, d->o, nv / 2, 0x7fc07fc0u), poison(ex, d->ht, nh, 0x7fc00000u);
	tile_arg args[] = {
		tile_arg_ptr(d->q), tile_arg_ptr(d->k), tile_arg_ptr(d->v), tile_arg_ptr(d->g),
		tile_arg_ptr(d->beta), tile_arg_ptr(d->h0), tile_arg_ptr(d->o), tile_arg_ptr(d->ht),
		tile_arg_ptr(d->cu), tile_arg_i32(T), tile_arg_i32(H), tile_arg_i32(HV),
		tile_arg_i32(NSEQ), tile_arg_i32(NSEQ), tile_arg_i32(NSEQ + 1), tile_arg_i32(NSEQ),
		tile_arg_i32(0), tile_arg_i32(1), tile_arg_i32(1), tile_arg_i32(1),
		tile_arg_i32(l2norm), tile_arg_i32(v_first), tile_arg_f32(1.0f / sqrtf((float)D))};
	example_must(ex, tile_kernel_launch(kern, args, (int)(sizeof args / sizeof args[0]), NULL),
		     "tile_kernel_launch");
	example_must(ex, tile_stream_sync(ex->rt, NULL), "tile_stream_sync");
	uint16_t *ob = malloc(nv * 2);
	float *o = malloc(nv * 4), *ht = malloc(nh * 4);
	example_download(ex, ob, d->o, nv * 2);
	example_download(ex, ht, d->ht, nh * 4);
	for (size_t i = 0; i < nv; i++)
		o[i] = example_bf16_to_f32(ob[i]);
	tile_module_destroy(mod);

	ref_problem p;
	memset(&p, 0, sizeof p);
	p.op = REF_KDA;
	p.B = 1, p.T = T, p.H = H, p.HV = HV, p.K = D, p.V = D;
	p.cu_seqlens = cu64, p.n_seqs = NSEQ;
	p.opts.use_qk_l2norm_in_kernel = l2norm;
	p.opts.state_v_first = v_first;
	double *q64 = widen(q, nqk), *k64 = widen(k, nqk), *v64 = widen(v, nv), *g64 = widen(g, ng);
	double *b64 = widen(beta, nb), *h64 = widen(h0, nh);
	ref_in64 in = {.q = q64, .k = k64, .v = v64, .g = g64, .beta = b64, .h0 = h64};
	double *o_ref = malloc(nv * 8), *ht_ref = malloc(nh * 8);
	ref_fwd64 out = {.o = o_ref, .ht = ht_ref};
	ref_status rs = ref_recurrent_fwd(&p, &in, &out);
	if (rs != REF_OK) {
		fprintf(stderr, "reference: %s\n", ref_status_str(rs));
		exit(1);
	}
	ref_cmp co, ch;
	bool ok = ref_compare_f64_f32(o_ref, o, nv, TOL, &co);
	ok &= ref_compare_f64_f32(ht_ref, ht, nh, TOL, &ch);
	printf("D %3d  l2norm %d  v_first %d  %-26s  g %s beta %s  o %.3g  ht %.3g  %s\n", D,
	       l2norm, v_first, gate_names[regime], g16 ? "bf16" : "f32 ", b16 ? "bf16" : "f32 ",
	       co.ratio_err, ch.ratio_err, ok ? "PASS" : "FAIL");
	free(qb), free(kb), free(vb), free(q), free(k), free(v), free(g), free(beta), free(h0);
	free(gb), free(betab);
	free(ob), free(o), free(ht), free(q64), free(k64), free(v64), free(g64), free(b64);
	free(h64), free(o_ref), free(ht_ref);
	return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
	example ex;
	int rc = example_open(&ex, argc, argv, NULL, NULL);
	if (rc)
		return rc;
	enum { DMAX = 128 };
	size_t nqk = (size_t)T * H * DMAX, nv = (size_t)T * HV * DMAX;
	size_t nh = (size_t)NSEQ * HV * DMAX * DMAX;
	buffers d = {
		.q = example_poisoned(&ex, nqk / 2), .k = example_poisoned(&ex, nqk / 2),
		.v = example_poisoned(&ex, nv / 2), .g = example_poisoned(&ex, nv),
		.beta = example_poisoned(&ex, (size_t)T * HV), .h0 = example_poisoned(&ex, nh),
		.cu = example_upload(&ex, cu32, sizeof cu32), .o = example_poisoned(&ex, nv / 2),
		.ht = example_poisoned(&ex, nh)};
	for (int D = 64; D <= DMAX; D *= 2)
		for (int l2 = 0; l2 < 2; l2++)
			for (int regime = GATES_FAST; regime <= GATES_HUGE; regime++)
				rc |= run_case(&ex, &d, D, l2, l2 && regime == GATES_SLOW, regime, false,
					       false);
	/* g and beta in bf16 at D = 128, beta alone at D = 64 */
	for (int regime = GATES_FAST; regime <= GATES_HUGE; regime++) {
		rc |= run_case(&ex, &d, 128, true, regime == GATES_SLOW, regime, true, true);
		rc |= run_case(&ex, &d, 64, false, false, regime, false, true);
	}
	example_close(&ex);
	printf("%s\n", rc ? "FAIL" : "PASS");
	return rc;
}
