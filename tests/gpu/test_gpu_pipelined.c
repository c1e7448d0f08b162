/*
 * test_gpu_pipelined.c: the pipelined loop with mma_async (tests/gpu/pipelined_mma_async.tile)
 * against the CPU. Each k-step's stage must stay unreleased until the wgmma reading it has
 * completed; released early, the producer's next TMA load overwrites it under the wgmma and
 * the sums go wrong. Many k-steps through two or three stages, over many CTAs, give that
 * race many chances. Exit 77 ("skipped") without a Hopper GPU.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "harness.h"
#include "tile_gpu_pipelined.h"

/* C = A * B^T for one shape with the kernel in ex->kernel; 0 when every element is within
 * f32 accumulation's error bound. */
static int run(example *ex, const char *kernel, int m, int n, int k)
{
	example_must(ex, tile_kernel_get(ex->mod, kernel, &ex->kernel), "tile_kernel_get");
	float *af, *bf;
	uint16_t *a = example_random_bf16(ex, (size_t)m * k, -1.0f, 1.0f, &af);
	uint16_t *b = example_random_bf16(ex, (size_t)n * k, -1.0f, 1.0f, &bf);
	float *c = malloc((size_t)m * n * sizeof *c);
	double *want = malloc((size_t)m * n * sizeof *want), *tol = malloc((size_t)m * n * sizeof *tol);
	uint64_t da = example_upload(ex, a, (size_t)m * k * 2);
	uint64_t db = example_upload(ex, b, (size_t)n * k * 2);
	uint64_t dc = example_poisoned(ex, (size_t)m * n);
	tile_arg args[] = {tile_arg_ptr(da), tile_arg_ptr(db), tile_arg_ptr(dc), tile_arg_i32(m),
		tile_arg_i32(n), tile_arg_i32(k)};
	example_launch(ex, args, 6);
	example_download(ex, c, dc, (size_t)m * n * sizeof *c);
	for (int i = 0; i < m; i++)
		for (int j = 0; j < n; j++) {
			double s = 0.0, mag = 0.0;
			for (int p = 0; p < k; p++) {
				double t = (double)af[(size_t)i * k + p] * bf[(size_t)j * k + p];
				s += t;
				mag += fabs(t);
			}
			/* k exact bf16 products summed in f32: at most k u sum|ab| (u = 2^-24);
			 * a stage overwritten mid-wgmma changes sums by O(1) per element */
			want[(size_t)i * n + j] = s;
			tol[(size_t)i * n + j] = k * 0x1p-24 * mag + 1e-30;
		}
	printf("%s: M=%d N=%d K=%d (%d k-steps)\n", kernel, m, n, k, (k + 63) / 64);
	int rc = example_check(ex, "C", c, want, tol, (size_t)m * n, 1.0);
	free(a), free(b), free(af), free(bf), free(c), free(want), free(tol);
	return rc;
}

int main(int argc, char **argv)
{
	example ex;
	int rc = example_open(&ex, argc, argv, &tile_module_pipelined_mma_async, "mma_async_s2");
	if (rc)
		return rc;
	/* 132 SMs: 4 x 8 = 32 CTAs of 128 k-steps each, then a ragged shape */
	static const char *const kernels[] = {"mma_async_s2", "mma_async_two_groups"};
	for (int i = 0; i < 2; i++) {
		rc |= run(&ex, kernels[i], 512, 2048, 8192);
		rc |= run(&ex, kernels[i], 200, 520, 1000);
	}
	example_close(&ex);
	return rc;
}
