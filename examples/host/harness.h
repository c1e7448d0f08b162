/*
 * harness.h: the plumbing the example programs share, so that each example shows only what a
 * user writes for a kernel: its inputs, its tile_kernel_launch call and its CPU reference.
 *
 * example_open: seed (argv[1], else $TILE_TEST_SEED, else the time; printed), runtime on
 * device 0, the embedded module and kernel. It returns 77 after printing "skipped: ..." when
 * there is no driver, no GPU or no Hopper GPU (the kernels are sm_90a), 1 on any other
 * failure, else 0. The device helpers print the runtime's error and exit(1) on failure (these
 * are programs, not the library); device buffers are freed by example_close. example_check
 * compares with an fp64 reference and reports the worst element.
 */
#ifndef TILE_EXAMPLE_HARNESS_H
#define TILE_EXAMPLE_HARNESS_H

#include <stddef.h>
#include <stdint.h>

#include "tile.h"

enum { EXAMPLE_MAX_BUFFERS = 64 };

typedef struct example {
	const char *name;
	tile_rt *rt;
	tile_module *mod;
	tile_kernel *kernel;
	uint64_t seed, rng;
	uint64_t buffers[EXAMPLE_MAX_BUFFERS];
	int nbuffers;
} example;

/* module NULL: only the seed and the runtime (programs that load a library's modules). */
int example_open(example *ex, int argc, char **argv, const tile_embedded_module *module,
	const char *kernel);
void example_close(example *ex);

/* Prints what failed (with tile_rt_error) and exits 1 unless st is TILE_OK. */
void example_must(example *ex, tile_status st, const char *what);

/* Uniform in [lo, hi), from the example's seeded generator (splitmix64). */
float example_uniform(example *ex, float lo, float hi);
float *example_random(example *ex, size_t n, float lo, float hi); /* malloc'd */
/* n random bf16 values uniform in [lo, hi) (malloc'd); *exact gets each one widened back to
 * f32 (malloc'd), the values a CPU reference must use. */
uint16_t *example_random_bf16(example *ex, size_t n, float lo, float hi, float **exact);
/* The same, with each row of `row` values scaled to unit norm before rounding (row > 0; the
 * l2-normalised q and k of the linear-attention examples). */
uint16_t *example_random_bf16_rows(example *ex, size_t n, float lo, float hi, int row,
				   float **exact);

/* Device buffers: a copy of host data, or n words poisoned with NaN (0x7fc00000). */
uint64_t example_upload(example *ex, const void *host, size_t bytes);
uint64_t example_poisoned(example *ex, size_t words);
uint64_t example_poisoned_bf16(example *ex, size_t count); /* count bf16 NaNs */
void example_download(example *ex, void *host, uint64_t dev, size_t bytes);

/* Launches the example's kernel on the default stream and waits for it. */
void example_launch(example *ex, const tile_arg *args, int nargs);

/* bf16: round to nearest even, and back. */
uint16_t example_bf16(float x);
float example_bf16_to_f32(uint16_t x);

/* Element i passes when |got - want| <= tol * scale[i] (scale NULL: |want[i]|); NaN fails.
 * Prints the worst element (index, got, expected) and PASS or FAIL; returns 0 or 1. */
/* FLA's metric (spec-gdn-kda.md 7.1): max abs error <= 1e-6, or RMS(got - want) /
 * (RMS(want) + 1e-8) < tol; NaN or inf anywhere fails. Prints the result; 0 on PASS. */
int example_check_rms(example *ex, const char *what, const float *got, const double *want,
		      size_t n, double tol);
int example_check(example *ex, const char *what, const float *got, const double *want,
	const double *scale, size_t n, double tol);

#endif /* TILE_EXAMPLE_HARNESS_H */
