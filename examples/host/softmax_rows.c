/*
 * softmax_rows.c: y = softmax(x) along each row, with the embedded kernel of
 * examples/softmax_rows.tile (one block of 256 threads per row). cols = 1000 is not a
 * multiple of 256 and rows = 37 is arbitrary.
 */
#include <math.h>
#include <stdlib.h>

#include "harness.h"
#include "tile_examples.h"

/* fp64 reference, subtracting the row max as the kernel does. */
static void softmax_ref(const float *x, double *y, int rows, int cols)
{
	for (int r = 0; r < rows; r++) {
		const float *xr = x + (size_t)r * cols;
		double max = xr[0], sum = 0.0;
		for (int c = 1; c < cols; c++)
			max = fmax(max, xr[c]);
		for (int c = 0; c < cols; c++)
			sum += exp((double)xr[c] - max);
		for (int c = 0; c < cols; c++)
			y[(size_t)r * cols + c] = exp((double)xr[c] - max) / sum;
	}
}

int main(int argc, char **argv)
{
	const int rows = 37, cols = 1000;
	const size_t n = (size_t)rows * cols;
	example ex;
	int rc = example_open(&ex, argc, argv, &tile_module_softmax_rows, "softmax_rows");

	if (rc)
		return rc;
	float *x = example_random(&ex, n, -8.0f, 8.0f), *y = malloc(n * sizeof *y);
	double *want = malloc(n * sizeof *want);
	uint64_t dx = example_upload(&ex, x, n * 4), dy = example_poisoned(&ex, n);

	tile_arg args[] = {tile_arg_ptr(dx), tile_arg_ptr(dy), tile_arg_i32(rows),
		tile_arg_i32(cols)};
	example_launch(&ex, args, 4);
	example_download(&ex, y, dy, n * 4);

	softmax_ref(x, want, rows, cols);
	/* Relative to each output, in units of u = 2^-24 (f32): x - max and its scaling by
	 * log2(e) put up to |x - max| * log2(e) * u <= 16 * 1.45 u into the exponent, the exp
	 * itself (ex2.approx) about 2 ulp = 4u, the row sum of `cols` positive terms at most
	 * (cols - 1) u in any order, the division 2 ulp. (cols + 64) u bounds them together. */
	rc = example_check(&ex, "y", y, want, NULL, n, (cols + 64) * 0x1p-24);
	example_close(&ex);
	free(x), free(y), free(want);
	return rc;
}
