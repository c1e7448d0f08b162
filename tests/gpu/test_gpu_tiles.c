/*
 * test_gpu_tiles.c: the tile layouts of tests/gpu/tiles.tile against the CPU, on fresh random
 * inputs with NaN-poisoned outputs: fragment <-> swizzled shared tile both ways, fragment
 * coordinates and row reductions, TMA store of a fragment-written tile, an f16 wgmma with an
 * N-major B, a named barrier between two roles, column vectors (from global memory, clipped,
 * and from shared memory), 64- and 32-byte swizzles, an M-major A (transpose(A)) with a row
 * vector and a row-limited store, SIMT indexing of a swizzled tile, wgmma over run-time
 * K = 16 slices of K-major and M-major A tiles, fragments loaded from global windows
 * (whole, clipped, misaligned bf16), tf32 products and tiles (fragments stored transposed
 * too), and a ring that a cluster's two CTAs share by TMA multicast. Exit 77 ("skipped")
 * without a Hopper GPU.
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

static int named_handoff(example *ex)
{
	enum { n = 100 };
	int32_t out[n];
	float got[n];
	double want[n];
	uint64_t dout = example_poisoned(ex, n);
	tile_arg args[] = {tile_arg_ptr(dout), tile_arg_i32(n)};
	example_launch(ex, args, 2);
	example_download(ex, out, dout, sizeof out);
	for (int i = 0; i < n; i++) {
		got[i] = (float)out[i];
		want[i] = (127 - i) * 3 + 1;
	}
	return example_check(ex, "signal/sync between roles", got, want, NULL, n, 0.0);
}

static int column_vectors(example *ex)
{
	enum { ng = 50 };
	uint16_t x[N * N];
	float xf[N * N], g[ng], o1[N * N], o2[N * N];
	double w1[N * N], w2[N * N];
	for (int i = 0; i < N * N; i++) {
		x[i] = example_bf16(example_uniform(ex, -4.0f, 4.0f));
		xf[i] = example_bf16_to_f32(x[i]);
	}
	for (int i = 0; i < ng; i++)
		g[i] = (float)(int)example_uniform(ex, -100.0f, 100.0f);
	uint64_t dx = example_upload(ex, x, sizeof x), dg = example_upload(ex, g, sizeof g);
	uint64_t d1 = example_poisoned(ex, N * N), d2 = example_poisoned(ex, N * N);
	tile_arg args[] = {tile_arg_ptr(dx), tile_arg_ptr(dg), tile_arg_ptr(d1), tile_arg_ptr(d2),
		tile_arg_i32(N), tile_arg_i32(N), tile_arg_i32(ng)};
	example_launch(ex, args, 7);
	example_download(ex, o1, d1, sizeof o1);
	example_download(ex, o2, d2, sizeof o2);
	for (int r = 0; r < N; r++) {
		double mx = -INFINITY;
		for (int c = 0; c < N; c++)
			mx = fmax(mx, xf[r * N + c]);
		for (int c = 0; c < N; c++) {
			double gc = c < ng ? g[c] : 0.0; /* past the extent: 0 */
			w1[r * N + c] = r * 1000.0 + gc - c * 0.5;
			w2[r * N + c] = mx + gc;
		}
	}
	/* integers and halves below 2^17, and one bf16 plus an integer: exact in f32 */
	int rc = example_check(ex, "column vectors (global, clipped; shared)", o1, w1, NULL,
			       N * N, 0.0);
	return rc | example_check(ex, "row vector + column vector", o2, w2, NULL, N * N, 0.0);
}

static int vector_stores(example *ex)
{
	enum { nc = 50 }; /* cols_out's extent: its last 14 of 64 words stay poisoned */
	float g[N], rows[N], cols[N], both[2 * N], bf[N];
	uint16_t rb[N];
	double want_rows[N], want_cols[N], want_both[2 * N];
	for (int i = 0; i < N; i++)
		g[i] = (float)(int)example_uniform(ex, -100.0f, 100.0f);
	uint64_t dg = example_upload(ex, g, sizeof g);
	uint64_t dr = example_poisoned(ex, N), dc = example_poisoned(ex, N);
	uint64_t ds = example_poisoned(ex, 2 * N), db = example_poisoned_bf16(ex, N);
	tile_arg args[] = {tile_arg_ptr(dg), tile_arg_ptr(dr), tile_arg_ptr(db), tile_arg_ptr(dc),
		tile_arg_ptr(ds), tile_arg_i32(N), tile_arg_i32(N), tile_arg_i32(nc), tile_arg_i32(2)};
	example_launch(ex, args, 9);
	example_download(ex, rows, dr, sizeof rows);
	example_download(ex, cols, dc, sizeof cols);
	example_download(ex, both, ds, sizeof both);
	example_download(ex, rb, db, sizeof rb);
	for (int i = 0; i < N; i++) {
		want_rows[i] = 2.0 * i + 1.0;
		want_cols[i] = 3.0 * g[i];
		want_both[i] = want_rows[i];
		want_both[N + i] = want_cols[i];
		bf[i] = example_bf16_to_f32(rb[i]);
	}
	/* small integers: exact in f32 and bf16 */
	int rc = example_check(ex, "row_store to global", rows, want_rows, NULL, N, 0.0);
	rc |= example_check(ex, "row_store to global bf16", bf, want_rows, NULL, N, 0.0);
	rc |= example_check(ex, "col_store to global (clipped)", cols, want_cols, NULL, nc, 0.0);
	for (int i = nc; i < N; i++)
		if (!isnan(cols[i])) {
			fprintf(stderr, "col_store wrote element %d past the extent %d\n", i, nc);
			rc = 1;
		}
	return rc | example_check(ex, "row_store, col_store to shared", both, want_both, NULL,
				  2 * N, 0.0);
}

static int swizzles(example *ex)
{
	uint16_t x[N * N];
	float xf[N * N], o64[N * N], o32[N * N];
	double w64[N * N], w32[N * N];
	for (int i = 0; i < N * N; i++) {
		x[i] = example_bf16(example_uniform(ex, -4.0f, 4.0f));
		xf[i] = example_bf16_to_f32(x[i]);
	}
	uint64_t dx = example_upload(ex, x, sizeof x);
	uint64_t d64 = example_poisoned(ex, N * N), d32 = example_poisoned(ex, N * N);
	tile_arg args[] = {tile_arg_ptr(dx), tile_arg_ptr(dx), tile_arg_ptr(d64), tile_arg_ptr(d32),
		tile_arg_i32(N), tile_arg_i32(N)};
	example_launch(ex, args, 6);
	example_download(ex, o64, d64, sizeof o64);
	example_download(ex, o32, d32, sizeof o32);
	/* the kernel writes columns 0..31 of out64 and 0..15 of out32: compare those */
	float g64[N * 32], g32[N * 16];
	for (int r = 0; r < N; r++)
		for (int c = 0; c < 32; c++) {
			g64[r * 32 + c] = o64[r * N + c];
			w64[r * 32 + c] = xf[r * N + c];
			if (c < 16) {
				g32[r * 16 + c] = o32[r * N + c];
				w32[r * 16 + c] = xf[r * N + c];
			}
		}
	int rc = example_check(ex, "swizzle(64)", g64, w64, NULL, N * 32, 0.0);
	return rc | example_check(ex, "swizzle(32)", g32, w32, NULL, N * 16, 0.0);
}

/* C1 = sum_b 2^(3 - b) A_b B_b over the K = 16 slices b of a K-major A ([M][K]) against B
 * ([K][N]); C2 the same with an M-major A (given as A^T, [K][M]). */
static int mma_k_slices(example *ex)
{
	float *af, *atf, *bf;
	uint16_t *a = example_random_bf16(ex, N * N, -2.0f, 2.0f, &af);
	uint16_t *at = example_random_bf16(ex, N * N, -2.0f, 2.0f, &atf);
	uint16_t *b = example_random_bf16(ex, N * N, -2.0f, 2.0f, &bf);
	float c1[N * N], c2[N * N];
	double want1[N * N], want2[N * N], size1[N * N], size2[N * N];
	/* slice s (columns or rows 16 s .. 16 s + 15) weighted 2^(3 - s): Horner's doublings. Each
	 * sum is judged against the sum of its terms' sizes (f32 accumulation), not its own size,
	 * which cancellation may make arbitrarily small */
	for (int m = 0; m < N; m++)
		for (int n = 0; n < N; n++) {
			double s1 = 0.0, s2 = 0.0, z1 = 0.0, z2 = 0.0;
			for (int k = 0; k < N; k++) {
				double w = (double)(1 << (3 - k / 16));
				s1 += w * af[m * N + k] * bf[k * N + n];
				s2 += w * atf[k * N + m] * bf[k * N + n];
				z1 += fabs(w * af[m * N + k] * bf[k * N + n]);
				z2 += fabs(w * atf[k * N + m] * bf[k * N + n]);
			}
			want1[m * N + n] = s1;
			want2[m * N + n] = s2;
			size1[m * N + n] = z1;
			size2[m * N + n] = z2;
		}
	size_t bytes = N * N * sizeof *a;
	uint64_t da = example_upload(ex, a, bytes), dat = example_upload(ex, at, bytes);
	uint64_t db = example_upload(ex, b, bytes);
	free(a), free(af), free(at), free(atf), free(b), free(bf);
	uint64_t dc1 = example_poisoned(ex, N * N), dc2 = example_poisoned(ex, N * N);
	tile_arg args[] = {tile_arg_ptr(da), tile_arg_ptr(dat), tile_arg_ptr(db), tile_arg_ptr(dc1),
		tile_arg_ptr(dc2), tile_arg_i32(N), tile_arg_i32(N), tile_arg_i32(N)};
	example_launch(ex, args, 8);
	example_download(ex, c1, dc1, sizeof c1);
	example_download(ex, c2, dc2, sizeof c2);
	return example_check(ex, "K = 16 slices of a K-major A, Horner-weighted", c1, want1, size1,
			     N * N, 64 * 0x1p-24) |
	       example_check(ex, "K = 16 slices of an M-major A, Horner-weighted", c2, want2, size2,
			     N * N, 64 * 0x1p-24);
}

static int mma_at_rows(example *ex)
{
	enum { LIM = 37 };
	uint16_t at[N * N], b[N * N];
	float atf[N * N], bf[N * N], r[N], c[N * N], s[N * N];
	double want_c[N * N], want_s[N * N];
	for (int i = 0; i < N * N; i++) {
		at[i] = example_bf16(example_uniform(ex, -2.0f, 2.0f));
		atf[i] = example_bf16_to_f32(at[i]);
		b[i] = example_bf16(example_uniform(ex, -2.0f, 2.0f));
		bf[i] = example_bf16_to_f32(b[i]);
		want_s[i] = atf[i];
	}
	for (int i = 0; i < N; i++)
		r[i] = example_uniform(ex, -1.0f, 1.0f);
	for (int m = 0; m < N; m++)
		for (int n = 0; n < N; n++) {
			double acc = 0.0;
			for (int k = 0; k < N; k++)
				acc += (double)atf[k * N + m] * bf[n * N + k];
			want_c[m * N + n] = m < LIM ? acc * r[m] : NAN;
		}
	uint64_t dat = example_upload(ex, at, sizeof at), db = example_upload(ex, b, sizeof b);
	uint64_t dr = example_upload(ex, r, sizeof r);
	uint64_t dc = example_poisoned(ex, N * N), ds = example_poisoned(ex, N * N);
	tile_arg args[] = {tile_arg_ptr(dat), tile_arg_ptr(db), tile_arg_ptr(dr), tile_arg_ptr(dc),
		tile_arg_ptr(ds), tile_arg_i32(N), tile_arg_i32(N), tile_arg_i32(N),
		tile_arg_i32(LIM)};
	example_launch(ex, args, 9);
	example_download(ex, c, dc, sizeof c);
	example_download(ex, s, ds, sizeof s);
	int rc = example_check(ex, "transpose(A) mma * row_load, rows < lim", c, want_c, NULL,
			       LIM * N, 1e-3);
	for (int i = LIM * N; i < N * N; i++)
		if (!isnan(c[i])) {
			fprintf(stderr, "FAIL frag_store wrote row %d past its limit %d\n", i / N, LIM);
			rc = 1;
			break;
		}
	return rc | example_check(ex, "SIMT read of a swizzled tile", s, want_s, NULL, N * N, 0.0);
}

/* frag_load from global tensors of RG x CG elements: three windows (see tiles.tile) */
static int frag_load_global(example *ex)
{
	enum { RG = 100, CG = 100 };
	static float x[RG * CG], yf[RG * CG], o[3][N * N];
	static uint16_t y[RG * CG];
	static double want[3][N * N];
	for (int i = 0; i < RG * CG; i++) {
		x[i] = example_uniform(ex, -4.0f, 4.0f);
		y[i] = example_bf16(example_uniform(ex, -4.0f, 4.0f));
		yf[i] = example_bf16_to_f32(y[i]);
	}
	uint64_t dx = example_upload(ex, x, sizeof x), dy = example_upload(ex, y, sizeof y);
	uint64_t d[3];
	for (int k = 0; k < 3; k++)
		d[k] = example_poisoned(ex, N * N);
	tile_arg args[] = {tile_arg_ptr(dx), tile_arg_ptr(dy), tile_arg_ptr(d[0]), tile_arg_ptr(d[1]),
		tile_arg_ptr(d[2]), tile_arg_i32(RG), tile_arg_i32(CG)};
	example_launch(ex, args, 7);
	for (int k = 0; k < 3; k++)
		example_download(ex, o[k], d[k], sizeof o[k]);
	for (int r = 0; r < N; r++)
		for (int c = 0; c < N; c++) {
			int r1 = RG - 40 + r, c1 = CG - 24 + c;
			want[0][r * N + c] = x[r * CG + c];
			want[1][r * N + c] = r1 < RG && c1 < CG ? x[r1 * CG + c1] : 0.0;
			want[2][r * N + c] = yf[(5 + r) * CG + 3 + c];
		}
	int rc = example_check(ex, "frag_load global, whole window", o[0], want[0], NULL, N * N, 0.0);
	rc |= example_check(ex, "frag_load global, past the extents (0)", o[1], want[1], NULL, N * N,
			    0.0);
	return rc | example_check(ex, "frag_load global, bf16 at an odd column", o[2], want[2], NULL,
				  N * N, 0.0);
}

/* cluster_multicast: both CTAs' copies of A's four chunks, each loaded half by each CTA. */
static int cluster_multicast(example *ex)
{
	enum { T = 4 * N, C = 2 * N };
	static uint16_t a[T * C];
	static float o[2 * T * C];
	static double want[2 * T * C];
	for (int i = 0; i < T * C; i++) {
		a[i] = example_bf16(example_uniform(ex, -4.0f, 4.0f));
		want[i] = want[T * C + i] = example_bf16_to_f32(a[i]);
	}
	uint64_t da = example_upload(ex, a, sizeof a), dout = example_poisoned(ex, 2 * T * C);
	tile_arg args[] = {tile_arg_ptr(da), tile_arg_ptr(dout), tile_arg_i32(T),
		tile_arg_i32(2 * T)};
	example_launch(ex, args, 4);
	example_download(ex, o, dout, sizeof o);
	return example_check(ex, "TMA multicast in a cluster of two, both CTAs' copies", o, want,
			     NULL, 2 * T * C, 0.0);
}

/* frag_load(transpose(t)): T0 = (X's rows 64 .. 127)^T, T1 = (X's rows 16 .. 47)^T, T2 = F^T
 * with F[r][c] = 16 r + c in f16 (integers below 2048: exact) */
static int frag_load_transposed(example *ex)
{
	enum { R = 128 };
	uint16_t x[R * N];
	float xf[R * N], t0[N * N], t1[N * 32], t2[N * N];
	double w0[N * N], w1[N * 32], w2[N * N];
	for (int i = 0; i < R * N; i++) {
		x[i] = example_bf16(example_uniform(ex, -4.0f, 4.0f));
		xf[i] = example_bf16_to_f32(x[i]);
	}
	uint64_t dx = example_upload(ex, x, sizeof x), d0 = example_poisoned(ex, N * N);
	uint64_t d1 = example_poisoned(ex, N * 32), d2 = example_poisoned(ex, N * N);
	tile_arg args[] = {tile_arg_ptr(dx), tile_arg_ptr(d0), tile_arg_ptr(d1), tile_arg_ptr(d2),
		tile_arg_i32(R), tile_arg_i32(N)};
	example_launch(ex, args, 6);
	example_download(ex, t0, d0, sizeof t0);
	example_download(ex, t1, d1, sizeof t1);
	example_download(ex, t2, d2, sizeof t2);
	for (int r = 0; r < N; r++)
		for (int c = 0; c < N; c++) {
			w0[r * N + c] = xf[(64 + c) * N + r];
			w2[r * N + c] = 16.0 * c + r;
			if (c < 32)
				w1[r * 32 + c] = xf[(16 + c) * N + r];
		}
	int rc = example_check(ex, "frag_load(transpose(swizzled stage))", t0, w0, NULL, N * N,
			       0.0);
	rc |= example_check(ex, "frag_load(transpose(rows 16 .. 47))", t1, w1, NULL, N * 32, 0.0);
	rc |= example_check(ex, "frag_load(transpose(f16 tile))", t2, w2, NULL, N * N, 0.0);
	return rc;
}

/* f32 -> tf32 as cvt.rna.tf32.f32 rounds: to nearest, ties away from zero (finite inputs) */
static float tf32_rna(float x)
{
	union { float f; uint32_t u; } v = {x};
	v.u = (v.u + 0x1000u) & ~0x1fffu;
	return v.f;
}

/* mma_tf32: C0 = C1 = tf32(X) tf32(Y)^T (K = 128), C2 = tf32(X), C3 = C0's columns 32 .. 63,
 * C4 the same product over k = 32 .. 63 alone. Products of tf32 values are exact in double;
 * the tensor cores sum 128 of them in f32. */
static int mma_tf32(example *ex)
{
	enum { K = 128 };
	float x[N * K], y[N * K], c0[N * N], c1[N * N], c2[N * K], c3[N * 32], c4[N * N];
	double want[N * N], mag[N * N], w2[N * K], w3[N * 32], m3[N * 32], w4[N * N], m4[N * N];
	for (int i = 0; i < N * K; i++) {
		x[i] = example_uniform(ex, -2.0f, 2.0f);
		y[i] = example_uniform(ex, -2.0f, 2.0f);
		w2[i] = tf32_rna(x[i]);
	}
	uint64_t dx = example_upload(ex, x, sizeof x), dy = example_upload(ex, y, sizeof y);
	uint64_t d0 = example_poisoned(ex, N * N), d1 = example_poisoned(ex, N * N);
	uint64_t d2 = example_poisoned(ex, N * K), d3 = example_poisoned(ex, N * 32);
	uint64_t d4 = example_poisoned(ex, N * N);
	tile_arg args[] = {tile_arg_ptr(dx), tile_arg_ptr(dy), tile_arg_ptr(d0), tile_arg_ptr(d1),
		tile_arg_ptr(d2), tile_arg_ptr(d3), tile_arg_ptr(d4), tile_arg_i32(N),
		tile_arg_i32(K)};
	example_launch(ex, args, 9);
	example_download(ex, c0, d0, sizeof c0);
	example_download(ex, c1, d1, sizeof c1);
	example_download(ex, c2, d2, sizeof c2);
	example_download(ex, c3, d3, sizeof c3);
	example_download(ex, c4, d4, sizeof c4);
	for (int i = 0; i < N; i++)
		for (int j = 0; j < N; j++) {
			double s = 0.0, sa = 0.0;
			w4[i * N + j] = m4[i * N + j] = 0.0;
			for (int k = 0; k < K; k++) {
				double p = (double)tf32_rna(x[i * K + k]) * tf32_rna(y[j * K + k]);
				s += p;
				sa += fabs(p);
				if (k >= 32 && k < 64) {
					w4[i * N + j] += p;
					m4[i * N + j] += fabs(p);
				}
			}
			want[i * N + j] = s;
			mag[i * N + j] = sa;
			if (j >= 32) {
				w3[i * 32 + j - 32] = s;
				m3[i * 32 + j - 32] = sa;
			}
		}
	int rc = example_check(ex, "tf32 wgmma, A from registers", c0, want, mag, N * N,
			       K * 0x1p-24);
	rc |= example_check(ex, "tf32 wgmma, A from a tf32 tile", c1, want, mag, N * N,
			    K * 0x1p-24);
	rc |= example_check(ex, "f32 fragment -> tf32 tile -> fragment", c2, w2, NULL, N * K, 0.0);
	rc |= example_check(ex, "tf32 wgmma, m64n32 over B's rows 32 .. 63", c3, w3, m3, N * 32,
			    K * 0x1p-24);
	rc |= example_check(ex, "tf32 wgmma, K = 32: frag_cols(A) with one slab of B", c4, w4, m4,
			    N * N, 32 * 0x1p-24);
	return rc;
}

/* tf32_transposed: x, y [64, 64] stored transposed into tf32 tiles. C0 = tf32(x)^T; C1 = tf32(y)
 * tf32(x); C2 the same over k = 32 .. 63; C3 = C1's columns 0 .. 31; C4 = tf32(y)^T tf32(x). */
static int tf32_transposed(example *ex)
{
	float x[N * N], y[N * N], c0[N * N], c1[N * N], c2[N * N], c3[N * 32], c4[N * N];
	double w0[N * N], w1[N * N], m1[N * N], w2[N * N], m2[N * N], w3[N * 32], m3[N * 32];
	double w4[N * N], m4[N * N];
	for (int i = 0; i < N * N; i++) {
		x[i] = example_uniform(ex, -2.0f, 2.0f);
		y[i] = example_uniform(ex, -2.0f, 2.0f);
	}
	for (int i = 0; i < N; i++)
		for (int j = 0; j < N; j++)
			w0[i * N + j] = tf32_rna(x[j * N + i]);
	uint64_t dx = example_upload(ex, x, sizeof x), dy = example_upload(ex, y, sizeof y);
	uint64_t d[5];
	size_t sizes[5] = {N * N, N * N, N * N, N * 32, N * N};
	for (int i = 0; i < 5; i++)
		d[i] = example_poisoned(ex, sizes[i]);
	tile_arg args[] = {tile_arg_ptr(dx), tile_arg_ptr(dy), tile_arg_ptr(d[0]),
		tile_arg_ptr(d[1]), tile_arg_ptr(d[2]), tile_arg_ptr(d[3]), tile_arg_ptr(d[4]),
		tile_arg_i32(N)};
	example_launch(ex, args, 8);
	example_download(ex, c0, d[0], sizeof c0);
	example_download(ex, c1, d[1], sizeof c1);
	example_download(ex, c2, d[2], sizeof c2);
	example_download(ex, c3, d[3], sizeof c3);
	example_download(ex, c4, d[4], sizeof c4);
	for (int i = 0; i < N; i++)
		for (int j = 0; j < N; j++) {
			double s = 0.0, sa = 0.0, s2 = 0.0, sa2 = 0.0, s4 = 0.0, sa4 = 0.0;
			for (int k = 0; k < N; k++) {
				double p = (double)tf32_rna(y[i * N + k]) * tf32_rna(x[k * N + j]);
				double q = (double)tf32_rna(y[k * N + i]) * tf32_rna(x[k * N + j]);
				s += p;
				sa += fabs(p);
				s4 += q;
				sa4 += fabs(q);
				if (k >= 32) {
					s2 += p;
					sa2 += fabs(p);
				}
			}
			w1[i * N + j] = s, m1[i * N + j] = sa;
			w2[i * N + j] = s2, m2[i * N + j] = sa2;
			w4[i * N + j] = s4, m4[i * N + j] = sa4;
			if (j < 32)
				w3[i * 32 + j] = s, m3[i * 32 + j] = sa;
		}
	int rc = example_check(ex, "f32 fragment -> tf32 tile transposed -> fragment", c0, w0,
			       NULL, N * N, 0.0);
	rc |= example_check(ex, "tf32 wgmma, B stored transposed", c1, w1, m1, N * N, N * 0x1p-24);
	rc |= example_check(ex, "tf32 wgmma, B stored transposed, K = 32: one slab", c2, w2, m2,
			    N * N, 32 * 0x1p-24);
	rc |= example_check(ex, "tf32 wgmma, B stored transposed, m64n32 over its rows 0 .. 31", c3,
			    w3, m3, N * 32, N * 0x1p-24);
	rc |= example_check(ex, "tf32 wgmma, A and B stored transposed", c4, w4, m4, N * N,
			    N * 0x1p-24);
	return rc;
}

static void use_kernel(example *ex, const char *name)
{
	example_must(ex, tile_kernel_get(ex->mod, name, &ex->kernel), "tile_kernel_get");
}

int main(int argc, char **argv)
{
	example ex;
	int rc = example_open(&ex, argc, argv, &tile_module_tiles, "frag_layouts");
	if (rc)
		return rc;
	rc = frag_layouts(&ex);
	use_kernel(&ex, "mma_f16_nmajor");
	rc |= mma_f16(&ex);
	use_kernel(&ex, "named_handoff");
	rc |= named_handoff(&ex);
	use_kernel(&ex, "column_vectors");
	rc |= column_vectors(&ex);
	use_kernel(&ex, "vector_stores");
	rc |= vector_stores(&ex);
	use_kernel(&ex, "swizzle_64_32");
	rc |= swizzles(&ex);
	use_kernel(&ex, "mma_at_rows");
	rc |= mma_at_rows(&ex);
	use_kernel(&ex, "mma_k_slices");
	rc |= mma_k_slices(&ex);
	use_kernel(&ex, "frag_load_global");
	rc |= frag_load_global(&ex);
	use_kernel(&ex, "frag_load_transposed");
	rc |= frag_load_transposed(&ex);
	use_kernel(&ex, "mma_tf32");
	rc |= mma_tf32(&ex);
	use_kernel(&ex, "tf32_transposed");
	rc |= tf32_transposed(&ex);
	use_kernel(&ex, "cluster_multicast");
	rc |= cluster_multicast(&ex);
	example_close(&ex);
	return rc;
}
