/*
 * kda_forward.c: calling the prebuilt KDA forward from C (kernels/include/tile_la.h).
 *
 * Two sequences of 120 and 80 tokens packed with cu_seqlens, 2 q/k heads shared by 4 value
 * heads (GVA), head dim 64, bf16 inputs, a per-channel log-decay gate, an initial state, the
 * final state returned. The output is checked against a plain fp64 recurrence on the CPU
 * (FLA's relative RMS metric, tolerance 0.005). Prints PASS or FAIL; "skipped" (exit 77)
 * without a driver or GPU. Seed: argv[1], else the time.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"
#include "tile_la.h"

enum { T = 200, H = 2, HV = 4, D = 64, N = 2 };
static const int32_t cu[N + 1] = {0, 120, 200};

/* S <- diag(exp(g)) S; v' = beta (v - S^T k); S += k v'^T; o = S^T (scale q), per value head
 * (spec-gdn-kda.md section 1), in fp64. */
static void reference(const float *q, const float *k, const float *v, const float *g,
		      const float *beta, const float *h0, double *o, double *ht)
{
	double *S = malloc(sizeof(double) * D * D), vp[D];
	double scale = 1.0 / sqrt((double)D);
	for (int n = 0; n < N; n++)
		for (int hv = 0; hv < HV; hv++) {
			int hq = hv / (HV / H);
			for (int i = 0; i < D * D; i++)
				S[i] = h0[(size_t)(n * HV + hv) * D * D + i];
			for (int t = cu[n]; t < cu[n + 1]; t++) {
				const float *qt = q + ((size_t)t * H + hq) * D, *kt = k + ((size_t)t * H + hq) * D;
				const float *vt = v + ((size_t)t * HV + hv) * D, *gt = g + ((size_t)t * HV + hv) * D;
				for (int a = 0; a < D; a++)
					for (int b = 0; b < D; b++)
						S[a * D + b] *= exp((double)gt[a]);
				for (int b = 0; b < D; b++) {
					double sk = 0.0;
					for (int a = 0; a < D; a++)
						sk += S[a * D + b] * kt[a];
					vp[b] = beta[t * HV + hv] * (vt[b] - sk);
				}
				for (int a = 0; a < D; a++)
					for (int b = 0; b < D; b++)
						S[a * D + b] += kt[a] * vp[b];
				for (int b = 0; b < D; b++) {
					double acc = 0.0;
					for (int a = 0; a < D; a++)
						acc += S[a * D + b] * qt[a] * scale;
					o[((size_t)t * HV + hv) * D + b] = acc;
				}
			}
			for (int i = 0; i < D * D; i++)
				ht[(size_t)(n * HV + hv) * D * D + i] = S[i];
		}
	free(S);
}

int main(int argc, char **argv)
{
	example ex;
	int rc = example_open(&ex, argc, argv, NULL, NULL);
	if (rc)
		return rc;
	tile_la *la;
	example_must(&ex, tile_la_create_with(ex.rt, &la), "tile_la_create_with");

	float *q, *k, *v;
	uint16_t *qb = example_random_bf16_rows(&ex, (size_t)T * H * D, -1.0f, 1.0f, D, &q);
	uint16_t *kb = example_random_bf16_rows(&ex, (size_t)T * H * D, -1.0f, 1.0f, D, &k);
	uint16_t *vb = example_random_bf16_rows(&ex, (size_t)T * HV * D, -1.0f, 1.0f, 0, &v);
	float *g = example_random(&ex, (size_t)T * HV * D, -0.5f, 0.0f);      /* log decay */
	float *beta = example_random(&ex, (size_t)T * HV, 0.1f, 0.9f);
	float *h0 = example_random(&ex, (size_t)N * HV * D * D, -1.0f, 1.0f);

	tile_la_fwd_args a;
	memset(&a, 0, sizeof a);
	a.batch = 1;
	a.seq_len = T;
	a.num_heads = H;
	a.num_v_heads = HV;
	a.head_dim = D;
	a.dtype = TILE_LA_BF16;
	a.q = (void *)(uintptr_t)example_upload(&ex, qb, (size_t)T * H * D * 2);
	a.k = (void *)(uintptr_t)example_upload(&ex, kb, (size_t)T * H * D * 2);
	a.v = (void *)(uintptr_t)example_upload(&ex, vb, (size_t)T * HV * D * 2);
	a.g = (const void *)(uintptr_t)example_upload(&ex, g, (size_t)T * HV * D * 4);
	a.beta = (const void *)(uintptr_t)example_upload(&ex, beta, (size_t)T * HV * 4);
	a.initial_state = (const float *)(uintptr_t)example_upload(&ex, h0, (size_t)N * HV * D * D * 4);
	a.cu_seqlens = (const int32_t *)(uintptr_t)example_upload(&ex, cu, sizeof cu);
	a.num_seqs = N;
	uint64_t o_dev = example_poisoned_bf16(&ex, (size_t)T * HV * D);
	uint64_t ht_dev = example_poisoned(&ex, (size_t)N * HV * D * D);
	a.o = (void *)(uintptr_t)o_dev;
	a.final_state = (float *)(uintptr_t)ht_dev;
	size_t ws = 0;
	example_must(&ex, tile_la_kda_fwd_workspace(la, &a, &ws), "tile_la_kda_fwd_workspace");
	a.workspace = (void *)(uintptr_t)example_poisoned(&ex, (ws + 3) / 4);
	a.workspace_size = ws;
	if (tile_la_kda_fwd(la, &a) != TILE_OK) {
		fprintf(stderr, "tile_la_kda_fwd: %s\n", tile_la_error(la));
		return 1;
	}
	example_must(&ex, tile_stream_sync(ex.rt, NULL), "tile_stream_sync");

	size_t no = (size_t)T * HV * D, nh = (size_t)N * HV * D * D;
	uint16_t *ob = malloc(no * 2);
	float *o = malloc(no * 4), *ht = malloc(nh * 4);
	double *o_ref = malloc(no * 8), *ht_ref = malloc(nh * 8);
	example_download(&ex, ob, o_dev, no * 2);
	example_download(&ex, ht, ht_dev, nh * 4);
	for (size_t i = 0; i < no; i++)
		o[i] = example_bf16_to_f32(ob[i]);
	reference(q, k, v, g, beta, h0, o_ref, ht_ref);
	rc = example_check_rms(&ex, "o", o, o_ref, no, 0.005);
	rc |= example_check_rms(&ex, "final state", ht, ht_ref, nh, 0.005);

	free(qb), free(kb), free(vb), free(q), free(k), free(v), free(g), free(beta), free(h0);
	free(ob), free(o), free(ht), free(o_ref), free(ht_ref);
	tile_la_destroy(la);
	example_close(&ex);
	return rc;
}
