/*
 * chunk_prefix_sum.c: y[i] = x[chunk start] + ... + x[i] over chunks of 64 elements, with the
 * embedded kernel of examples/chunk_prefix_sum.tile (grid cdiv(n, 64), 64 threads).
 * n = 100003 ends in a partial chunk.
 */
#include <math.h>
#include <stdlib.h>

#include "harness.h"
#include "tile_examples.h"

enum { CHUNK = 64 };

int main(int argc, char **argv)
{
	const int n = 100003;
	example ex;
	int rc = example_open(&ex, argc, argv, &tile_module_chunk_prefix_sum, "chunk_prefix_sum");

	if (rc)
		return rc;
	float *x = example_random(&ex, n, -1.0f, 1.0f), *y = malloc(n * sizeof *y);
	double *want = malloc(n * sizeof *want), *mag = malloc(n * sizeof *mag);
	uint64_t dx = example_upload(&ex, x, n * 4), dy = example_poisoned(&ex, n);

	tile_arg args[] = {tile_arg_ptr(dx), tile_arg_ptr(dy), tile_arg_i32(n)};
	example_launch(&ex, args, 3);
	example_download(&ex, y, dy, n * 4);

	for (int i = 0; i < n; i++) {
		int first = i % CHUNK == 0;
		want[i] = (first ? 0.0 : want[i - 1]) + x[i];
		mag[i] = (first ? 0.0 : mag[i - 1]) + fabs(x[i]);
	}
	/* A sum of k <= 64 f32 terms in any order (serial or scan) is within (k - 1) u of the
	 * sum of their magnitudes, u = 2^-24 (Higham, gamma_{k-1}): scale by sum |x|, not by the
	 * result, which cancellation can make small. */
	rc = example_check(&ex, "y", y, want, mag, n, (CHUNK - 1) * 0x1p-24);
	example_close(&ex);
	free(x), free(y), free(want), free(mag);
	return rc;
}
