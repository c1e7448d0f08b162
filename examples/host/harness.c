/*
 * harness.c: see harness.h. Everything goes through libtilert (no cuda.h, no libcudart):
 * tile_rt_create, tile_module_create on the embedded module, tile_kernel_get, the tile_mem_*
 * helpers, tile_kernel_launch and tile_stream_sync.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"

void example_must(example *ex, tile_status st, const char *what)
{
	if (st == TILE_OK)
		return;
	printf("%s: FAIL: %s: %s: %s\n", ex->name, what, tile_status_str(st),
		tile_rt_error(ex->rt));
	exit(1);
}

static int skip(example *ex, const char *why)
{
	printf("%s: skipped: %s\n", ex->name, why);
	return 77;
}

static int open_device(example *ex)
{
	tile_device_info info;
	char why[160];
	tile_status st = tile_rt_create(0, &ex->rt);

	if (st == TILE_ERR_NO_DRIVER || st == TILE_ERR_NO_DEVICE)
		return skip(ex, "no CUDA driver/GPU");
	example_must(ex, st, "tile_rt_create");
	example_must(ex, tile_rt_device_info(ex->rt, &info), "tile_rt_device_info");
	printf("%s: device %s (sm_%d%d, %d SMs)\n", ex->name, info.name, info.cc_major,
		info.cc_minor, info.sm_count);
	if (info.cc_major != 9 || info.cc_minor != 0) {
		snprintf(why, sizeof why, "the kernels are built for sm_90a, the device is sm_%d%d",
			info.cc_major, info.cc_minor);
		return skip(ex, why);
	}
	return 0;
}

int example_open(example *ex, int argc, char **argv, const tile_embedded_module *module,
	const char *kernel)
{
	int rc;
	const char *env = getenv("TILE_TEST_SEED");

	memset(ex, 0, sizeof *ex);
	ex->name = kernel ? kernel : (argc > 0 ? argv[0] : "example");
	ex->seed = argc > 1 ? strtoull(argv[1], NULL, 10)
		: env ? strtoull(env, NULL, 10) : (uint64_t)time(NULL);
	ex->rng = ex->seed;
	printf("%s: seed %llu (pass it as the first argument to repeat this run)\n", ex->name,
		(unsigned long long)ex->seed);
	if ((rc = open_device(ex)))
		return rc;
	if (!module) /* a program that loads its modules itself (a library such as tile_la) */
		return 0;
	example_must(ex, tile_module_create(ex->rt, module, &ex->mod), "tile_module_create");
	example_must(ex, tile_kernel_get(ex->mod, kernel, &ex->kernel), "tile_kernel_get");
	return 0;
}

void example_close(example *ex)
{
	for (int i = 0; i < ex->nbuffers; i++)
		tile_mem_free(ex->rt, ex->buffers[i]);
	tile_module_destroy(ex->mod);
	tile_rt_destroy(ex->rt);
	memset(ex, 0, sizeof *ex);
}

float example_uniform(example *ex, float lo, float hi)
{
	uint64_t z = (ex->rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	return lo + (hi - lo) * (float)((double)(z >> 11) * 0x1.0p-53);
}

float *example_random(example *ex, size_t n, float lo, float hi)
{
	float *p = malloc(n * sizeof *p);

	if (!p) {
		printf("%s: FAIL: out of host memory\n", ex->name);
		exit(1);
	}
	for (size_t i = 0; i < n; i++)
		p[i] = example_uniform(ex, lo, hi);
	return p;
}

static uint64_t device_alloc(example *ex, size_t bytes)
{
	uint64_t d = 0;

	if (ex->nbuffers == EXAMPLE_MAX_BUFFERS) {
		printf("%s: FAIL: more than %d device buffers\n", ex->name, EXAMPLE_MAX_BUFFERS);
		exit(1);
	}
	example_must(ex, tile_mem_alloc(ex->rt, bytes, &d), "tile_mem_alloc");
	ex->buffers[ex->nbuffers++] = d;
	return d;
}

uint64_t example_upload(example *ex, const void *host, size_t bytes)
{
	uint64_t d = device_alloc(ex, bytes);

	example_must(ex, tile_mem_copy_htod(ex->rt, d, host, bytes), "tile_mem_copy_htod");
	return d;
}

uint16_t *example_random_bf16(example *ex, size_t n, float lo, float hi, float **exact)
{
	uint16_t *h = malloc(n * sizeof *h);

	*exact = malloc(n * sizeof **exact);
	if (!h || !*exact) {
		printf("%s: FAIL: out of host memory\n", ex->name);
		exit(1);
	}
	for (size_t i = 0; i < n; i++) {
		h[i] = example_bf16(example_uniform(ex, lo, hi));
		(*exact)[i] = example_bf16_to_f32(h[i]);
	}
	return h;
}

uint16_t *example_random_bf16_rows(example *ex, size_t n, float lo, float hi, int row,
				   float **exact)
{
	float *x = example_random(ex, n, lo, hi);
	uint16_t *h = malloc(n * sizeof *h);
	if (!h) {
		printf("%s: FAIL: out of host memory\n", ex->name);
		exit(1);
	}
	for (size_t r = 0; row > 0 && r < n / (size_t)row; r++) {
		double ss = 0.0;
		for (int c = 0; c < row; c++)
			ss += (double)x[r * row + c] * x[r * row + c];
		for (int c = 0; c < row; c++)
			x[r * row + c] = (float)(x[r * row + c] / sqrt(ss));
	}
	for (size_t i = 0; i < n; i++) {
		h[i] = example_bf16(x[i]);
		x[i] = example_bf16_to_f32(h[i]);
	}
	*exact = x;
	return h;
}

uint64_t example_poisoned(example *ex, size_t words)
{
	uint64_t d = device_alloc(ex, words * 4);

	example_must(ex, tile_mem_set32(ex->rt, d, 0x7fc00000u, words), "tile_mem_set32 (NaN)");
	return d;
}

uint64_t example_poisoned_bf16(example *ex, size_t count)
{
	size_t words = (count + 1) / 2;
	uint64_t d = device_alloc(ex, words * 4);

	/* two bf16 NaNs per word: 0x7fc0 in each half */
	example_must(ex, tile_mem_set32(ex->rt, d, 0x7fc07fc0u, words), "tile_mem_set32 (NaN)");
	return d;
}

void example_download(example *ex, void *host, uint64_t dev, size_t bytes)
{
	example_must(ex, tile_mem_copy_dtoh(ex->rt, host, dev, bytes), "tile_mem_copy_dtoh");
}

void example_launch(example *ex, const tile_arg *args, int nargs)
{
	example_must(ex, tile_kernel_launch(ex->kernel, args, nargs, NULL), "tile_kernel_launch");
	example_must(ex, tile_stream_sync(ex->rt, NULL), "tile_stream_sync (the kernel's run)");
}

uint16_t example_bf16(float x)
{
	uint32_t u;

	memcpy(&u, &x, sizeof u);
	if ((u & 0x7fffffffu) > 0x7f800000u)
		return (uint16_t)((u >> 16) | 0x40); /* keep NaN a NaN */
	u += 0x7fffu + ((u >> 16) & 1);         /* round to nearest even */
	return (uint16_t)(u >> 16);
}

float example_bf16_to_f32(uint16_t x)
{
	uint32_t u = (uint32_t)x << 16;
	float f;

	memcpy(&f, &u, sizeof f);
	return f;
}

int example_check(example *ex, const char *what, const float *got, const double *want,
	const double *scale, size_t n, double tol)
{
	size_t worst = 0, nans = 0;
	double worst_ratio = -1.0;

	for (size_t i = 0; i < n; i++) {
		double allowed = tol * (scale ? scale[i] : fabs(want[i]));
		double err = fabs((double)got[i] - want[i]);
		double ratio = isnan(got[i]) ? INFINITY
			: err == 0.0 ? 0.0 : allowed > 0.0 ? err / allowed : INFINITY;
		nans += isnan(got[i]) != 0;
		if (ratio > worst_ratio) {
			worst_ratio = ratio;
			worst = i;
		}
	}
	printf("%s: %s: %zu elements, worst [%zu] got %.9g expected %.9g (error %.3g of the "
		"allowed), %zu NaN\n", ex->name, what, n, worst, (double)got[worst], want[worst],
		worst_ratio, nans);
	printf("%s: %s\n", ex->name, worst_ratio <= 1.0 ? "PASS" : "FAIL");
	return worst_ratio <= 1.0 ? 0 : 1;
}

int example_check_rms(example *ex, const char *what, const float *got, const double *want,
		      size_t n, double tol)
{
	double err2 = 0.0, ref2 = 0.0, max_abs = 0.0;
	size_t nan = 0;
	for (size_t i = 0; i < n; i++) {
		if (isnan(got[i]) || isinf(got[i])) {
			nan++;
			continue;
		}
		double d = got[i] - want[i];
		err2 += d * d;
		ref2 += want[i] * want[i];
		max_abs = fmax(max_abs, fabs(d));
	}
	double rel = sqrt(err2 / (double)n) / (sqrt(ref2 / (double)n) + 1e-8);
	int ok = nan == 0 && (max_abs <= 1e-6 || rel < tol);
	printf("%s: %s: %zu elements, relative RMS error %.3e (tolerance %g), max abs %.3e, "
	       "%zu NaN/inf\n%s: %s\n", ex->name, what, n, rel, tol, max_abs, nan, ex->name,
	       ok ? "PASS" : "FAIL");
	return ok ? 0 : 1;
}
