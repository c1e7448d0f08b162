/*
 * gemm_simt.c: c = a @ b with a bf16[m, k], b bf16[k, n], c f32[m, n], all row-major, with the
 * embedded kernel of examples/gemm_simt.tile (f32 accumulation). m, n, k = 131, 97, 75: none
 * a multiple of a tile size.
 */
#include <math.h>
#include <stdlib.h>

#include "harness.h"
#include "tile_examples.h"

int main(int argc, char **argv)
{
	const int m = 131, n = 97, k = 75;
	example ex;
	int rc = example_open(&ex, argc, argv, &tile_module_gemm_simt, "gemm_simt");

	if (rc)
		return rc;
	float *af, *bf, *c = malloc((size_t)m * n * sizeof *c);
	uint16_t *a = example_random_bf16(&ex, (size_t)m * k, -1.0f, 1.0f, &af);
	uint16_t *b = example_random_bf16(&ex, (size_t)k * n, -1.0f, 1.0f, &bf);
	double *want = malloc((size_t)m * n * sizeof *want);
	double *mag = malloc((size_t)m * n * sizeof *mag);
	uint64_t da = example_upload(&ex, a, (size_t)m * k * 2);
	uint64_t db = example_upload(&ex, b, (size_t)k * n * 2);
	uint64_t dc = example_poisoned(&ex, (size_t)m * n);

	tile_arg args[] = {tile_arg_ptr(da), tile_arg_ptr(db), tile_arg_ptr(dc), tile_arg_i32(m),
		tile_arg_i32(n), tile_arg_i32(k)};
	example_launch(&ex, args, 6);
	example_download(&ex, c, dc, (size_t)m * n * 4);

	for (int i = 0; i < m; i++) {
		for (int j = 0; j < n; j++) {
			double s = 0.0, s_abs = 0.0;
			for (int p = 0; p < k; p++) {
				double t = (double)af[(size_t)i * k + p] * bf[(size_t)p * n + j];
				s += t;
				s_abs += fabs(t);
			}
			want[(size_t)i * n + j] = s;
			mag[(size_t)i * n + j] = s_abs;
		}
	}
	/* bf16 x bf16 products are exact in f32 (8-bit significands); accumulating k of them in
	 * f32, with or without FMA, in any order, errs by at most k u sum |a b|, u = 2^-24. */
	rc = example_check(&ex, "c", c, want, mag, (size_t)m * n, k * 0x1p-24);
	example_close(&ex);
	free(a), free(b), free(af), free(bf), free(c), free(want), free(mag);
	return rc;
}
