/*
 * test_la_segments.c: the segment numbering of GDN's context parallelism, on the CPU.
 *
 * gdn_fused.tile (mode 1) runs one CTA per segment slot: segment j of sequence n (segments of
 * L chunks) is slot bos(n) / (64 L) + n + j, the grid has cdiv(T, 64 L) + N slots, and a CTA
 * finds its sequence by binary search; mode 2 reads the flags of segments 1 .. of each
 * sequence. This file restates that prologue in C (keep the two in step) and checks, over
 * many random varlen batches (empty and short sequences included), what the kernel relies on:
 * every chunk's outputs come from exactly one CTA, every sequence's final state from exactly
 * one, every slot and flag index stays inside the grid and the flag array (chunk slots:
 * cdiv(T, 64) + N), and every flag mode 2 reads was written by mode 1.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

enum { BT = 64, MAX_SEQ = 9, MAX_CHUNKS = 64 };

static int cdiv(int a, int b)
{
	return (a + b - 1) / b;
}

typedef struct batch {
	int nseq, tt;
	int cu[MAX_SEQ + 1];
} batch;

/* One CTA of mode 1, as gdn_fused.tile's prologue computes it. */
typedef struct cta {
	int n, c_begin, c_end, owns_end, live;
} cta;

static cta mode1_cta(const batch *b, int x, int seg_len)
{
	int seg_rows = BT * seg_len, lo = 0, hi = b->nseq - 1;
	while (lo < hi) {
		int mid = (lo + hi + 1) / 2;
		if (b->cu[mid] / seg_rows + mid <= x)
			lo = mid;
		else
			hi = mid - 1;
	}
	cta c = {lo, 0, 0, 0, 0};
	int bos = b->cu[lo], nchunks = cdiv(b->cu[lo + 1] - bos, BT);
	int seg0 = bos / seg_rows + lo;
	c.c_begin = (x - seg0) * seg_len;
	c.c_end = c.c_begin + seg_len < nchunks ? c.c_begin + seg_len : nchunks;
	c.owns_end = c.c_end == nchunks && (c.c_begin < nchunks || c.c_begin == 0);
	c.live = c.c_begin < nchunks; /* it writes a flag and outputs */
	return c;
}

static void random_batch(batch *b, unsigned *seed)
{
	b->nseq = 1 + rand_r(seed) % MAX_SEQ;
	b->cu[0] = 0;
	for (int n = 0; n < b->nseq; n++) {
		int r = rand_r(seed) % 4;
		int len = r == 0 ? 0 : r == 1 ? 1 + rand_r(seed) % 100
			: 1 + rand_r(seed) % (BT * MAX_CHUNKS / MAX_SEQ);
		b->cu[n + 1] = b->cu[n] + len;
	}
	b->tt = b->cu[b->nseq];
}

static void check_batch(const batch *b, int seg_len)
{
	int nx = cdiv(b->tt, BT * seg_len) + b->nseq;
	int nslot = cdiv(b->tt, BT) + b->nseq; /* the flag array's row length */
	int out_owner[MAX_SEQ][MAX_CHUNKS], end_owners[MAX_SEQ] = {0};
	char flag_written[MAX_SEQ * MAX_CHUNKS + MAX_SEQ + 1] = {0};
	memset(out_owner, 0, sizeof out_owner);
	assert_true(nx <= nslot);
	for (int x = 0; x < nx; x++) {
		cta c = mode1_cta(b, x, seg_len);
		assert_true(c.n >= 0 && c.n < b->nseq);
		for (int ch = c.c_begin; ch < c.c_end; ch++)
			out_owner[c.n][ch]++;
		end_owners[c.n] += c.owns_end;
		if (c.live)
			flag_written[x] = 1;
	}
	for (int n = 0; n < b->nseq; n++) {
		int bos = b->cu[n], nchunks = cdiv(b->cu[n + 1] - bos, BT);
		int seg0 = bos / (BT * seg_len) + n;
		assert_int_equal(end_owners[n], 1);
		for (int ch = 0; ch < nchunks; ch++)
			assert_int_equal(out_owner[n][ch], 1);
		for (int j = 0; j < cdiv(nchunks, seg_len); j++) {
			assert_true(seg0 + j < nx);
			assert_true(flag_written[seg0 + j]); /* mode 2 reads j >= 1 */
			/* the slot maps back to this sequence and segment */
			cta c = mode1_cta(b, seg0 + j, seg_len);
			assert_int_equal(c.n, n);
			assert_int_equal(c.c_begin, j * seg_len);
		}
	}
}

static void test_random_batches(void **state)
{
	(void)state;
	unsigned seed = 12345;
	for (int it = 0; it < 20000; it++) {
		batch b;
		random_batch(&b, &seed);
		check_batch(&b, 1 + rand_r(&seed) % 12);
	}
}

/* The shapes the library picks at bench.md's sizes: one sequence, equal sequences, and a
 * long sequence beside a short one, segment lengths around the sequences' chunk counts. */
static void test_edges(void **state)
{
	(void)state;
	static const int lens[][4] = {{4096, -1}, {1024, 1024, 1024, 1024}, {3584, 512, -1},
				      {0, 64, 0, -1}, {63, 65, 1, -1}, {0, -1}};
	for (size_t t = 0; t < sizeof lens / sizeof lens[0]; t++) {
		batch b = {0, 0, {0}};
		for (int n = 0; n < 4 && lens[t][n] >= 0; n++) {
			b.cu[n + 1] = b.cu[n] + lens[t][n];
			b.nseq = n + 1;
		}
		b.tt = b.cu[b.nseq];
		for (int seg_len = 1; seg_len <= MAX_CHUNKS; seg_len++)
			check_batch(&b, seg_len);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_batches),
		cmocka_unit_test(test_edges),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
