/*
 * gemm.c: C = A * B^T with A bf16[M, K], B bf16[N, K], C bf16[M, N], all row-major, with the
 * warp-specialized TMA + wgmma kernel of examples/gemm.tile. The tensor maps of A, B and C are
 * built by the runtime from the kernel's metadata: the host passes plain device pointers.
 * Shapes: one exact tile, and two that are not multiples of the 128 x 256 x 64 tiling (K and
 * N stay multiples of 8: TMA needs 16-byte row strides). Then the same shapes with the
 * easy-path kernel of examples/gemm_pipelined.tile.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "harness.h"
#include "tile_examples.h"

/* Runs one shape; returns 0 when every element is within tolerance. */
static int run(example *ex, int m, int n, int k)
{
	float *af, *bf;
	uint16_t *a = example_random_bf16(ex, (size_t)m * k, -1.0f, 1.0f, &af);
	uint16_t *b = example_random_bf16(ex, (size_t)n * k, -1.0f, 1.0f, &bf);
	uint16_t *c16 = malloc((size_t)m * n * sizeof *c16);
	float *c = malloc((size_t)m * n * sizeof *c);
	double *want = malloc((size_t)m * n * sizeof *want), *tol = malloc((size_t)m * n * sizeof *tol);
	uint64_t da = example_upload(ex, a, (size_t)m * k * 2);
	uint64_t db = example_upload(ex, b, (size_t)n * k * 2);
	uint64_t dc = example_poisoned_bf16(ex, (size_t)m * n);
	tile_arg args[] = {tile_arg_ptr(da), tile_arg_ptr(db), tile_arg_ptr(dc), tile_arg_i32(m),
		tile_arg_i32(n), tile_arg_i32(k)};

	example_launch(ex, args, 6);
	example_download(ex, c16, dc, (size_t)m * n * 2);
	for (size_t i = 0; i < (size_t)m * n; i++)
		c[i] = example_bf16_to_f32(c16[i]);
	for (int i = 0; i < m; i++) {
		for (int j = 0; j < n; j++) {
			double s = 0.0, mag = 0.0;
			for (int p = 0; p < k; p++) {
				double t = (double)af[(size_t)i * k + p] * bf[(size_t)j * k + p];
				s += t;
				mag += fabs(t);
			}
			/* f32 accumulation of k exact bf16 products errs by at most
			 * k u sum|ab| (u = 2^-24); rounding C to bf16 (8-bit
			 * significand, unit roundoff 2^-8) adds up to 2^-8 |c| */
			want[(size_t)i * n + j] = s;
			tol[(size_t)i * n + j] = k * 0x1p-24 * mag + 0x1p-8 * fabs(s) + 1e-30;
		}
	}
	printf("gemm: M=%d N=%d K=%d\n", m, n, k);
	int rc = example_check(ex, "C", c, want, tol, (size_t)m * n, 1.0);
	free(a), free(b), free(af), free(bf), free(c16), free(c), free(want), free(tol);
	return rc;
}

int main(int argc, char **argv)
{
	example ex;
	int rc = example_open(&ex, argc, argv, &tile_module_gemm, "gemm");

	if (rc)
		return rc;
	rc |= run(&ex, 128, 128, 64);
	rc |= run(&ex, 257, 392, 200);
	rc |= run(&ex, 1000, 520, 1000);

	/* the same GEMM on the easy path (examples/gemm_pipelined.tile) */
	tile_module *easy;
	example_must(&ex, tile_module_create(ex.rt, &tile_module_gemm_pipelined, &easy),
		     "tile_module_create");
	example_must(&ex, tile_kernel_get(easy, "gemm_pipelined", &ex.kernel), "tile_kernel_get");
	printf("gemm: the easy path (gemm_pipelined)\n");
	rc |= run(&ex, 128, 128, 64);
	rc |= run(&ex, 257, 392, 200);
	rc |= run(&ex, 1000, 520, 1000);
	tile_module_destroy(easy);
	example_close(&ex);
	return rc;
}
