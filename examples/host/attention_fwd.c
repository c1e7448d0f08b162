/*
 * attention_fwd.c: causal attention O = softmax(Q K^T / sqrt(D) + causal mask) V with the
 * warp-specialized kernel of examples/attention_fwd.tile: q, k, v, o bf16 [BH, T, 128]. T is
 * not a multiple of the 128-row blocks, so the ragged last block and the key mask past T are
 * exercised. Reference: fp64 on the CPU from the same bf16 inputs.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "harness.h"
#include "tile_examples.h"

enum { D = 128 };

/* One row of causal attention in fp64: out[D], and sum_j p_j |v_j| per column in mag. */
static void reference_row(const float *q, const float *k, const float *v, int t, int row,
	double *out, double *mag)
{
	double *s = malloc((size_t)(row + 1) * sizeof *s), mx = -INFINITY, sum = 0.0;

	for (int j = 0; j <= row && j < t; j++) {
		double dot = 0.0;
		for (int d = 0; d < D; d++)
			dot += (double)q[(size_t)row * D + d] * k[(size_t)j * D + d];
		s[j] = dot / sqrt((double)D);
		mx = s[j] > mx ? s[j] : mx;
	}
	for (int j = 0; j <= row; j++)
		sum += (s[j] = exp(s[j] - mx));
	for (int d = 0; d < D; d++) {
		double acc = 0.0, m = 0.0;
		for (int j = 0; j <= row; j++) {
			acc += s[j] / sum * v[(size_t)j * D + d];
			m += s[j] / sum * fabs(v[(size_t)j * D + d]);
		}
		out[d] = acc;
		mag[d] = m;
	}
	free(s);
}

int main(int argc, char **argv)
{
	const int bh = 3, t = 300;
	const size_t n = (size_t)bh * t * D;
	example ex;
	int rc = example_open(&ex, argc, argv, &tile_module_attention_fwd, "attention_fwd");

	if (rc)
		return rc;
	float *qf, *kf, *vf, *o = malloc(n * sizeof *o);
	uint16_t *q = example_random_bf16(&ex, n, -2.0f, 2.0f, &qf);
	uint16_t *k = example_random_bf16(&ex, n, -2.0f, 2.0f, &kf);
	uint16_t *v = example_random_bf16(&ex, n, -2.0f, 2.0f, &vf), *o16 = malloc(n * sizeof *o16);
	double *want = malloc(n * sizeof *want), *tol = malloc(n * sizeof *tol);
	uint64_t dq = example_upload(&ex, q, n * 2), dk = example_upload(&ex, k, n * 2);
	uint64_t dv = example_upload(&ex, v, n * 2), dout = example_poisoned_bf16(&ex, n);
	tile_arg args[] = {tile_arg_ptr(dq), tile_arg_ptr(dk), tile_arg_ptr(dv), tile_arg_ptr(dout),
		tile_arg_i32(bh), tile_arg_i32(t), tile_arg_f32((float)(M_LOG2E / sqrt((double)D)))};

	example_launch(&ex, args, 7);
	example_download(&ex, o16, dout, n * 2);
	for (size_t i = 0; i < n; i++)
		o[i] = example_bf16_to_f32(o16[i]);
	for (int h = 0; h < bh; h++) {
		size_t base = (size_t)h * t * D;
		for (int row = 0; row < t; row++) {
			size_t at = base + (size_t)row * D;
			double mag[D];
			reference_row(qf + base, kf + base, vf + base, t, row, want + at, mag);
			/* P is rounded to bf16 before P V (2^-8 relative per weight, so up to
			 * 2^-8 sum p|v|); exp2/rcp approximations and f32 sums add about
			 * 2^-20 relative; O is rounded to bf16 (2^-8 |o|). Allow twice that. */
			for (int d = 0; d < D; d++)
				tol[at + d] = 2.0 * (0x1p-8 * mag[d] + 0x1p-8 * fabs(want[at + d])) + 1e-6;
		}
	}
	rc = example_check(&ex, "O", o, want, tol, n, 1.0);
	example_close(&ex);
	free(q), free(k), free(v), free(qf), free(kf), free(vf), free(o), free(o16);
	free(want), free(tol);
	return rc;
}
