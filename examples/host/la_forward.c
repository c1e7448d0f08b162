/*
 * la_forward.c: the prebuilt GDN and KDA forward (kernels/include/tile_la.h) on a small input,
 * timed, beside the CPU fp64 recurrence of tests/ref: what `./tile run` shows on a GPU machine.
 *
 * One sequence of T tokens (default 1024; argv[2]), 2 q/k heads shared by 4 value heads, head
 * dim 128, bf16 inputs with unit-norm q and k rows, log-decay gates (GDN: one per token and
 * head; KDA: one per key channel), the final state returned. Prints a table: the GPU time per
 * call (the mean over repeated calls on one stream), the reference's time, and FLA's relative
 * RMS error of o and of the final state (tolerance 0.005). Exit 0 when both pass, 1 when not,
 * 77 ("skipped") without a driver or Hopper GPU. Seed: argv[1], else the time.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "ref.h"
#include "tile_la.h"

enum { H = 2, HV = 4, D = 128 };
static const double TOL = 0.005;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The values a float input holds, as doubles for the fp64 reference. */
static double *widen(const float *f, size_t n)
{
	double *d = malloc(n * sizeof *d);
	for (size_t i = 0; i < n; i++)
		d[i] = f[i];
	return d;
}

/* n bf16 values uniform in [lo, hi), rows of `row` at unit norm when row > 0: the bits to
 * upload, and (in *exact) the values the reference must use. */
static uint16_t *bf16_input(example *ex, size_t n, float lo, float hi, int row, double **exact)
{
	float *x;
	uint16_t *bits = example_random_bf16_rows(ex, n, lo, hi, row, &x);
	*exact = widen(x, n);
	free(x);
	return bits;
}

static double *f32_input(example *ex, size_t n, float lo, float hi, float **f)
{
	*f = example_random(ex, n, lo, hi);
	return widen(*f, n);
}

/* One op: run it on the GPU, time it, run the reference, print a row; 0 when it passes. */
static int run_op(example *ex, tile_la *la, int kda, int T)
{
	size_t nqk = (size_t)T * H * D, nv = (size_t)T * HV * D, nb = (size_t)T * HV;
	size_t ng = kda ? nv : nb, nh = (size_t)HV * D * D;
	double *q, *k, *v;
	float *g32, *beta32;
	uint16_t *qb = bf16_input(ex, nqk, -1.0f, 1.0f, D, &q);
	uint16_t *kb = bf16_input(ex, nqk, -1.0f, 1.0f, D, &k);
	uint16_t *vb = bf16_input(ex, nv, -1.0f, 1.0f, 0, &v);
	double *g = f32_input(ex, ng, kda ? -0.5f : -0.3f, kda ? 0.0f : -0.01f, &g32);
	double *beta = f32_input(ex, nb, 0.1f, 0.9f, &beta32);

	tile_la_fwd_args a;
	memset(&a, 0, sizeof a);
	a.batch = 1;
	a.seq_len = T;
	a.num_heads = H;
	a.num_v_heads = HV;
	a.head_dim = D;
	a.dtype = TILE_LA_BF16;
	a.q = (void *)(uintptr_t)example_upload(ex, qb, nqk * 2);
	a.k = (void *)(uintptr_t)example_upload(ex, kb, nqk * 2);
	a.v = (void *)(uintptr_t)example_upload(ex, vb, nv * 2);
	a.g = (const void *)(uintptr_t)example_upload(ex, g32, ng * 4);
	a.beta = (const void *)(uintptr_t)example_upload(ex, beta32, nb * 4);
	uint64_t o_dev = example_poisoned_bf16(ex, nv), ht_dev = example_poisoned(ex, nh);
	a.o = (void *)(uintptr_t)o_dev;
	a.final_state = (float *)(uintptr_t)ht_dev;
	size_t ws = 0;
	example_must(ex, kda ? tile_la_kda_fwd_workspace(la, &a, &ws)
			     : tile_la_gdn_fwd_workspace(la, &a, &ws), "workspace query");
	a.workspace = (void *)(uintptr_t)example_poisoned(ex, (ws + 3) / 4);
	a.workspace_size = ws;

	/* the first call loads nothing more (modules are loaded at create), but warms the
	 * caches and clocks; then as many calls as fit in about 0.2 s, timed together */
	double t_gpu = 0.0;
	int reps = 0;
	for (int round = 0; round < 2; round++) {
		int n = round == 0 ? 3 : reps;
		double t0 = now_s();
		for (int i = 0; i < n; i++)
			if ((kda ? tile_la_kda_fwd(la, &a) : tile_la_gdn_fwd(la, &a)) != TILE_OK) {
				fprintf(stderr, "%s forward: %s\n", kda ? "KDA" : "GDN", tile_la_error(la));
				exit(1);
			}
		example_must(ex, tile_stream_sync(ex->rt, NULL), "tile_stream_sync");
		double dt = (now_s() - t0) / n;
		reps = dt > 0 ? (int)fmin(1000.0, fmax(10.0, 0.2 / dt)) : 1000;
		t_gpu = dt;
	}

	size_t no = nv;
	uint16_t *ob = malloc(no * 2);
	float *o = malloc(no * 4), *ht = malloc(nh * 4);
	example_download(ex, ob, o_dev, no * 2);
	example_download(ex, ht, ht_dev, nh * 4);
	for (size_t i = 0; i < no; i++)
		o[i] = example_bf16_to_f32(ob[i]);

	ref_problem p;
	memset(&p, 0, sizeof p);
	p.op = kda ? REF_KDA : REF_GDN;
	p.B = 1, p.T = T, p.H = H, p.HV = HV, p.K = D, p.V = D;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	p.opts.threads = ncpu < 1 ? 1 : ncpu < HV ? (int)ncpu : HV;
	ref_in64 in = {.q = q, .k = k, .v = v, .g = g, .beta = beta};
	double *o_ref = malloc(no * 8), *ht_ref = malloc(nh * 8);
	ref_fwd64 out = {.o = o_ref, .ht = ht_ref};
	double t0 = now_s();
	ref_status rs = ref_recurrent_fwd(&p, &in, &out);
	double t_cpu = now_s() - t0;
	if (rs != REF_OK) {
		fprintf(stderr, "reference: %s\n", ref_status_str(rs));
		exit(1);
	}
	ref_cmp co, ch;
	bool ok = ref_compare_f64_f32(o_ref, o, no, TOL, &co);
	ok &= ref_compare_f64_f32(ht_ref, ht, nh, TOL, &ch);
	printf("%-4s %10.1f %12.1f %10.3g %10.3g %12.3g  %s\n", kda ? "KDA" : "GDN", t_gpu * 1e6,
	       t_cpu * 1e3, co.ratio_err, co.abs_err, ch.ratio_err, ok ? "PASS" : "FAIL");

	free(qb), free(kb), free(vb), free(q), free(k), free(v), free(g), free(g32), free(beta);
	free(beta32), free(ob), free(o), free(ht), free(o_ref), free(ht_ref);
	return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
	example ex;
	int rc = example_open(&ex, argc > 1 ? 2 : 1, argv, NULL, NULL);
	if (rc)
		return rc;
	int T = argc > 2 ? atoi(argv[2]) : 1024;
	if (T < 1 || T > (1 << 20)) {
		fprintf(stderr, "usage: %s [SEED [TOKENS]] (1 to 1048576 tokens)\n", argv[0]);
		return 2;
	}
	tile_la *la;
	example_must(&ex, tile_la_create_with(ex.rt, &la), "tile_la_create_with");
	printf("forward, bf16, %d tokens, %d q/k heads, %d v heads, head dim %d; error: FLA's\n"
	       "relative RMS against the fp64 CPU reference (pass below %g)\n", T, H, HV, D, TOL);
	printf("%-4s %10s %12s %10s %10s %12s  %s\n", "op", "GPU (us)", "CPU ref (ms)", "o rms err",
	       "o max err", "state rms err", "result");
	rc = run_op(&ex, la, 0, T);
	rc |= run_op(&ex, la, 1, T);
	tile_la_destroy(la);
	example_close(&ex);
	return rc;
}
