/*
 * vector_add.c: c = a + b with the embedded kernel of examples/vector_add.tile
 * (grid cdiv(n, 256), 256 threads; the runtime reads both from the kernel's metadata).
 * n = 1000003 is not a multiple of the block, so the ragged last block is exercised.
 */
#include <stdlib.h>

#include "harness.h"
#include "tile_examples.h"

int main(int argc, char **argv)
{
	const int n = 1000003;
	example ex;
	int rc = example_open(&ex, argc, argv, &tile_module_vector_add, "vector_add");

	if (rc)
		return rc;
	float *a = example_random(&ex, n, -1.0f, 1.0f), *b = example_random(&ex, n, -1.0f, 1.0f);
	float *c = malloc(n * sizeof *c);
	double *want = malloc(n * sizeof *want);
	uint64_t da = example_upload(&ex, a, n * 4), db = example_upload(&ex, b, n * 4);
	uint64_t dc = example_poisoned(&ex, n);

	tile_arg args[] = {tile_arg_ptr(da), tile_arg_ptr(db), tile_arg_ptr(dc), tile_arg_i32(n)};
	example_launch(&ex, args, 4);
	example_download(&ex, c, dc, n * 4);

	for (int i = 0; i < n; i++)
		want[i] = (double)a[i] + (double)b[i]; /* exact: two f32 fit a double */
	/* One f32 addition, correctly rounded: within half an ulp, 2^-24 of |a + b|. */
	rc = example_check(&ex, "c", c, want, NULL, n, 0x1p-24);
	example_close(&ex);
	free(a), free(b), free(c), free(want);
	return rc;
}
