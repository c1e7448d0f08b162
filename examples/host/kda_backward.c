/*
 * kda_backward.c: calling the prebuilt KDA backward from C (kernels/include/tile_la.h).
 *
 * The forward call of kda_forward.c (two sequences of 120 and 80 tokens packed with
 * cu_seqlens, GVA 2/4, head dim 64, bf16, a per-channel log-decay gate, an initial state), with
 * the in-kernel q/k l2norm: the gradients of sum(o dout) + sum(final_state dht) with respect to
 * q, k, v, g, beta and the initial state, checked against the fp64 recurrence's backward of
 * tests/ref (FLA's relative RMS metric and test_kda's tolerances). Prints PASS or FAIL;
 * "skipped" (exit 77) without a driver or GPU. Seed: argv[1], else the time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "ref.h"
#include "tile_la.h"

enum { T = 200, H = 2, HV = 4, D = 64, N = 2 };
static const int32_t cu[N + 1] = {0, 120, 200};
static const int64_t cu64[N + 1] = {0, 120, 200};

static void *dev(uint64_t p)
{
	return (void *)(uintptr_t)p;
}

static double *widen(const float *x, size_t n)
{
	double *y = malloc(n * sizeof *y);
	for (size_t i = 0; i < n; i++)
		y[i] = x[i];
	return y;
}

/* A bf16 device gradient of n elements, as f32 on the host. */
static float *download_bf16(example *ex, uint64_t p, size_t n)
{
	uint16_t *b = malloc(n * 2);
	float *f = malloc(n * 4);
	example_download(ex, b, p, n * 2);
	for (size_t i = 0; i < n; i++)
		f[i] = example_bf16_to_f32(b[i]);
	free(b);
	return f;
}

int main(int argc, char **argv)
{
	example ex;
	int rc = example_open(&ex, argc, argv, NULL, NULL);
	if (rc)
		return rc;
	tile_la *la;
	example_must(&ex, tile_la_create_with(ex.rt, &la), "tile_la_create_with");

	size_t nqk = (size_t)T * H * D, nv = (size_t)T * HV * D, nb = (size_t)T * HV;
	size_t ns = (size_t)N * HV * D * D;
	float *q, *k, *v, *dout;
	uint16_t *qb = example_random_bf16_rows(&ex, nqk, -1.0f, 1.0f, 0, &q);
	uint16_t *kb = example_random_bf16_rows(&ex, nqk, -1.0f, 1.0f, 0, &k);
	uint16_t *vb = example_random_bf16_rows(&ex, nv, -1.0f, 1.0f, 0, &v);
	uint16_t *dob = example_random_bf16_rows(&ex, nv, -1.0f, 1.0f, 0, &dout);
	float *g = example_random(&ex, nv, -0.5f, 0.0f);      /* log decay */
	float *beta = example_random(&ex, nb, 0.1f, 0.9f);
	float *h0 = example_random(&ex, ns, -1.0f, 1.0f);
	float *dht = example_random(&ex, ns, -1.0f, 1.0f);

	/* the forward's arguments (its outputs and workspace are not read by the backward) */
	tile_la_bwd_args b;
	memset(&b, 0, sizeof b);
	tile_la_fwd_args *a = &b.fwd;
	a->batch = 1;
	a->seq_len = T;
	a->num_heads = H;
	a->num_v_heads = HV;
	a->head_dim = D;
	a->dtype = TILE_LA_BF16;
	a->use_qk_l2norm_in_kernel = 1;
	a->q = dev(example_upload(&ex, qb, nqk * 2));
	a->k = dev(example_upload(&ex, kb, nqk * 2));
	a->v = dev(example_upload(&ex, vb, nv * 2));
	a->g = dev(example_upload(&ex, g, nv * 4));
	a->beta = dev(example_upload(&ex, beta, nb * 4));
	a->initial_state = dev(example_upload(&ex, h0, ns * 4));
	a->cu_seqlens = dev(example_upload(&ex, cu, sizeof cu));
	a->num_seqs = N;
	b.dout = dev(example_upload(&ex, dob, nv * 2));
	b.dht = dev(example_upload(&ex, dht, ns * 4));
	/* the gradients, NaN-filled: anything not written fails the check */
	uint64_t dq = example_poisoned_bf16(&ex, nqk), dk = example_poisoned_bf16(&ex, nqk);
	uint64_t dv = example_poisoned_bf16(&ex, nv), dg = example_poisoned(&ex, nv);
	uint64_t dbeta = example_poisoned(&ex, nb), dh0 = example_poisoned(&ex, ns);
	b.dq = dev(dq), b.dk = dev(dk), b.dv = dev(dv), b.dg = dev(dg), b.dbeta = dev(dbeta);
	b.dh0 = dev(dh0);
	size_t ws = 0;
	example_must(&ex, tile_la_kda_bwd_workspace(la, &b, &ws), "tile_la_kda_bwd_workspace");
	b.workspace = dev(example_poisoned(&ex, (ws + 3) / 4));
	b.workspace_size = ws;
	if (tile_la_kda_bwd(la, &b) != TILE_OK) {
		fprintf(stderr, "tile_la_kda_bwd: %s\n", tile_la_error(la));
		return 1;
	}
	example_must(&ex, tile_stream_sync(ex.rt, NULL), "tile_stream_sync");

	/* the fp64 reference on the same (bf16-rounded) inputs */
	ref_problem p;
	memset(&p, 0, sizeof p);
	p.op = REF_KDA, p.B = 1, p.T = T, p.H = H, p.HV = HV, p.K = D, p.V = D;
	p.cu_seqlens = cu64, p.n_seqs = N;
	p.opts.chunk_size = 64, p.opts.use_qk_l2norm_in_kernel = true;
	double *q64 = widen(q, nqk), *k64 = widen(k, nqk), *v64 = widen(v, nv), *g64 = widen(g, nv);
	double *b64 = widen(beta, nb), *h064 = widen(h0, ns), *do64 = widen(dout, nv);
	double *dht64 = widen(dht, ns);
	ref_in64 in = {.q = q64, .k = k64, .v = v64, .g = g64, .beta = b64, .h0 = h064};
	double *want[6];
	size_t count[6] = {nqk, nqk, nv, nv, nb, ns};
	for (int i = 0; i < 6; i++)
		want[i] = calloc(count[i], sizeof(double));
	ref_grads64 gr = {.dq = want[0], .dk = want[1], .dv = want[2], .dg = want[3],
			  .dbeta = want[4], .dh0 = want[5]};
	if (ref_recurrent_bwd(&p, &in, do64, dht64, &gr) != REF_OK) {
		fprintf(stderr, "ref_recurrent_bwd failed\n");
		return 1;
	}
	float *got[6] = {download_bf16(&ex, dq, nqk), download_bf16(&ex, dk, nqk),
			 download_bf16(&ex, dv, nv), malloc(nv * 4), malloc(nb * 4), malloc(ns * 4)};
	example_download(&ex, got[3], dg, nv * 4);
	example_download(&ex, got[4], dbeta, nb * 4);
	example_download(&ex, got[5], dh0, ns * 4);
	static const char *const names[6] = {"dq", "dk", "dv", "dg", "dbeta", "dh0"};
	static const double tol[6] = {0.008, 0.008, 0.008, 0.02, 0.02, 0.008};
	rc = 0;
	for (int i = 0; i < 6; i++) {
		rc |= example_check_rms(&ex, names[i], got[i], want[i], count[i], tol[i]);
		free(got[i]), free(want[i]);
	}

	free(qb), free(kb), free(vb), free(dob), free(q), free(k), free(v), free(dout);
	free(g), free(beta), free(h0), free(dht);
	free(q64), free(k64), free(v64), free(g64), free(b64), free(h064), free(do64), free(dht64);
	tile_la_destroy(la);
	example_close(&ex);
	return rc;
}
