/*
 * test_gpu_tiles.c: the tile layouts of tests/gpu/tiles.tile against the CPU, on fresh random
 * inputs with NaN-poisoned outputs: fragment <-> swizzled shared tile both ways, fragment
 * coordinates and row reductions, TMA store of a fragment-written tile, and an f16 wgmma with
 * an N-major B. Exit 77 ("skipped") without a Hopper GPU.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "harness.h"
#include "tile_gpu_tiles.h"

enum { N = 64 };

/* k / 1024 for an integer |k| <= 1024 is exact in f16 (11-bit significand, all normal):
 * returns its bits and its value. */
static uint16_t f16_exact(example *ex, float *value)
{
	int k = (int)floorf(example_uniform(ex, -1024.0f, 1025.0f));
	k = k > 1024 ? 1024 : k;
	*value = (float)k / 1024.0f;
	if (k == 0)
		return 0;
	int e;
	float frac = frexpf(fabsf(*value), &e);            /* |v| = frac * 2^e, frac in [0.5, 1) */
	uint16_t mant = (uint16_t)((frac * 2.0f - 1.0f) * 1024.0f);
	return (uint16_t)((k < 0 ? 0x8000 : 0) | (uint16_t)(e - 1 + 15) << 10 | mant);
}

static int frag_layouts(example *ex)
{
	uint16_t x[N * N], z[N * N];
	float xf[N * N], y[N * N], w[N * N], m[N * N], zf[N * N];
	double want_y[N * N], want_w[N * N], want_m[N * N], want_z[N * N];
	for (int i = 0; i < N * N; i++) {
		x[i] = example_bf16(example_uniform(ex, -4.0f, 4.0f));
		xf[i] = example_bf16_to_f32(x[i]);
	}
	uint64_t dx = example_upload(ex, x, sizeof x), dz = example_poisoned_bf16(ex, N * N);
	uint64_t dy = example_poisoned(ex, N * N), dw = example_poisoned(ex, N * N);
	uint64_t dm = example_poisoned(ex, N * N);
	tile_arg args[] = {tile_arg_ptr(dx), tile_arg_ptr(dy), tile_arg_ptr(dw), tile_arg_ptr(dm),
		tile_arg_ptr(dz), tile_arg_i32(N), tile_arg_i32(N)};
	example_launch(ex, args, 7);
	example_download(ex, y, dy, sizeof y);
	example_download(ex, w, dw, sizeof w);
	example_download(ex, m, dm, sizeof m);
	example_download(ex, z, dz, sizeof z);
	for (int r = 0; r < N; r++) {
		double mx = -INFINITY, sum = 0.0;
		for (int c = 0; c < N; c++) {
			mx = fmax(mx, xf[r * N + c]);
			sum += xf[r * N + c];
		}
		for (int c = 0; c < N; c++) {
			int i = r * N + c;
			want_y[i] = want_z[i] = xf[i];
			want_w[i] = xf[i] + r * 1000.0 + c;
			want_m[i] = mx - sum;
			zf[i] = example_bf16_to_f32(z[i]);
		}
	}
	/* copies are exact; w adds an integer below 2^16 to a bf16 value in one f32 add
	 * (one rounding: 2^-24 |w|); the row sum of 64 values in f32 errs by at most
	 * 64 * 2^-24 * sum|x| <= 2^-10 * 4 */
	int rc = example_check(ex, "frag_load -> global", y, want_y, NULL, N * N, 0.0);
	rc |= example_check(ex, "coordinates", w, want_w, NULL, N * N, 0x1p-24);
	rc |= example_check(ex, "rowmax - rowsum", m, want_m, NULL, N * N, 1e-5);
	rc |= example_check(ex, "frag_store -> swizzled tile -> TMA store", zf, want_z, NULL,
			    N * N, 0.0);
	return rc;
}

static int mma_f16(example *ex)
{
	uint16_t a[N * N], b[N * N];
	float af[N * N], bf[N * N], c[N * N];
	double want[N * N], mag[N * N];
	for (int i = 0; i < N * N; i++) {
		a[i] = f16_exact(ex, &af[i]);
		b[i] = f16_exact(ex, &bf[i]);
	}
	uint64_t da = example_upload(ex, a, sizeof a), db = example_upload(ex, b, sizeof b);
	uint64_t dc = example_poisoned(ex, N * N);
	tile_arg args[] = {tile_arg_ptr(da), tile_arg_ptr(db), tile_arg_ptr(dc), tile_arg_i32(N),
		tile_arg_i32(N), tile_arg_i32(N)};
	example_launch(ex, args, 6);
	example_download(ex, c, dc, sizeof c);
	for (int i = 0; i < N; i++)
		for (int j = 0; j < N; j++) {
			double s = 0.0, sa = 0.0;
			for (int k = 0; k < N; k++) {
				s += (double)af[i * N + k] * bf[k * N + j];
				sa += fabs((double)af[i * N + k] * bf[k * N + j]);
			}
			want[i * N + j] = s;
			mag[i * N + j] = sa;
		}
	/* f16 products are exact in f32 (11-bit significands); f32 sums of 64: 64 u sum|ab| */
	return example_check(ex, "f16 wgmma, N-major B", c, want, mag, N * N, 64 * 0x1p-24);
}

int main(int argc, char **argv)
{
	example ex;
	int rc = example_open(&ex, argc, argv, &tile_module_tiles, "frag_layouts");
	if (rc)
		return rc;
	rc = frag_layouts(&ex);
	example_must(&ex, tile_kernel_get(ex.mod, "mma_f16_nmajor", &ex.kernel), "tile_kernel_get");
	rc |= mma_f16(&ex);
	example_close(&ex);
	return rc;
}
