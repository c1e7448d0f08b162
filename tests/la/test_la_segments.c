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
 * cdiv(T, 64) + N), and every flag mode 2 reads was written by mode 1. It also checks the
 * host's choice of the segment length (kernels/src/la_segments.h) on the shapes that
 * decided it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "la_segments.h"

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

/* KDA's transfer maps (chunk_recur.tile): segments fail their warmup at random (a function of
 * the gates; segment 0 of a sequence never fails). Checks: the map CTAs of the first launch
 * (mode 1, z >= NSL) map exactly the segments before their sequence's last failed one, in
 * slots of that sequence; the second launch (mode 3) runs exactly the failed segments, each
 * after chaining the maps of all the segments before it in its sequence, which the first
 * launch wrote; with the segment slots within the transfer slots, every slot is inside XB. */
static void check_transfer(const batch *b, int seg_len, unsigned *seed)
{
	int nx = cdiv(b->tt, BT * seg_len) + b->nseq;
	char failed[MAX_SEQ * MAX_CHUNKS + MAX_SEQ + 1] = {0};
	char mapped[MAX_SEQ * MAX_CHUNKS + MAX_SEQ + 1] = {0};
	int last_fail[MAX_SEQ] = {0};
	for (int x = 0; x < nx; x++) {
		cta c = mode1_cta(b, x, seg_len);
		if (c.live && c.c_begin > 0 && rand_r(seed) % 3 == 0) {
			failed[x] = 1;
			last_fail[c.n] = c.c_begin / seg_len;
		}
	}
	for (int x = 0; x < nx; x++) { /* launch 1, map CTAs */
		cta c = mode1_cta(b, x, seg_len);
		if (c.c_begin / seg_len < last_fail[c.n]) {
			assert_true(c.live);
			mapped[x] = 1;
		}
	}
	int runs = 0, nfailed = 0;
	for (int x = 0; x < nx; x++) { /* launch 2, mode 3 */
		cta c = mode1_cta(b, x, seg_len);
		int jseg = c.c_begin / seg_len, seg0 = b->cu[c.n] / (BT * seg_len) + c.n;
		nfailed += failed[x];
		if (!failed[x])
			continue;
		runs++;
		assert_int_equal(seg0 + jseg, x);
		for (int j = 0; j < jseg; j++) {
			assert_true(mapped[seg0 + j]);
			assert_int_equal(mode1_cta(b, seg0 + j, seg_len).n, c.n);
		}
	}
	assert_int_equal(runs, nfailed);
	/* the host's length, lengthened to fit the transfer slots, always fits them when
	 * the batch has room (N + 2 <= XS): then no failed segment reruns whole */
	int64_t xs = la_transfer_slots(132, 2, b->tt, b->nseq, 1, 1, 1);
	int32_t fit = la_fit_transfer(seg_len, b->tt, b->nseq, xs);
	if (xs > 0 && b->nseq + 2 <= xs && fit < cdiv(b->tt, BT))
		assert_true(la_use_transfer(cdiv(b->tt, BT * fit) + b->nseq, xs, LA_OPT_AUTO));
}

static void test_random_batches(void **state)
{
	(void)state;
	unsigned seed = 12345;
	for (int it = 0; it < 20000; it++) {
		batch b;
		random_batch(&b, &seed);
		int seg_len = 1 + rand_r(&seed) % 12;
		check_batch(&b, seg_len);
		check_transfer(&b, seg_len, &seed);
	}
}

/* The shapes the library picks at the benchmark's sizes: one sequence, equal sequences, and a
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

/* la_segment_len on an H200 (132 SMs), K = V = 128 (units = 2 HV). */
enum { SMS = 132 };

static int32_t seg(int hv, int64_t tokens, int64_t nseq, int has_cu)
{
	return la_segment_len(SMS, 2 * hv, tokens, nseq, has_cu, 1, LA_OPT_AUTO);
}

/* One sequence (or sequences of one length): one wave of CTAs, none when one segment slot
 * already fills half of the SMs. */
static void test_len_one_length(void **state)
{
	(void)state;
	assert_int_equal(seg(8, 32768, 1, 0), 64);      /* 16 units: 8 segments of 512 chunks */
	assert_int_equal(seg(32, 32768, 1, 0), 256);    /* 64 units: 2 segments */
	assert_int_equal(seg(64, 32768, 1, 0), 0);      /* 128 units: one wave already */
	assert_int_equal(seg(8, 32768, 4, 0), 64);      /* batch of 4 equal sequences, no cu */
	assert_int_equal(seg(32, 32768, 1, 1), 256);    /* cu_seqlens with one sequence */
	assert_int_equal(seg(2, 1024, 1, 0), 4);        /* 16 chunks / 33: at least 4 */
	assert_int_equal(seg(2, 200, 1, 0), 0);         /* 4 chunks: not shorter than the batch */
	/* 8192x4 (equal lengths): waves x (L + warmup) */
	assert_int_equal(seg(24, 32768, 4, 0), 64);     /* 48 units: 3 waves of halves, not 2
							   of wholes (GDN 8/24) */
	assert_int_equal(seg(64, 32768, 4, 0), 0);      /* 512 CTAs whole: 4 waves of 128 */
	assert_int_equal(seg(16, 32768, 4, 0), 0);      /* 128 CTAs: one wave already */
	assert_int_equal(seg(4, 32768, 4, 0), 32);      /* 32 CTAs: quarters fill one wave */
	assert_int_equal(seg(8, 4 * 4100, 4, 0), 33);   /* 65 chunks each (not 257 / 4) */
}

/* cu_seqlens with several sequences: at most 1/8 of the batch's chunks, whatever the units. */
static void test_len_varlen(void **state)
{
	(void)state;
	assert_int_equal(seg(32, 32768, 2, 1), 64);     /* 28672+4096 at 8/32: 256 before */
	assert_int_equal(seg(64, 32768, 2, 1), 64);     /* 16/64: whole sequences before */
	assert_int_equal(seg(32, 8192, 2, 1), 16);      /* 1024+7168 */
	assert_int_equal(seg(8, 32768, 4, 1), 64);      /* 16 units already give 8 splits */
	assert_int_equal(seg(2, 32768, 4, 1), 16);      /* 4 units: 33 splits, finer still */
	assert_int_equal(seg(64, 2048, 3, 1), 4);       /* 32 chunks / 8: at least 4 */
	assert_int_equal(seg(64, 256, 2, 1), 0);        /* 4 chunks */
}

/* No tokens, no in-kernel l2norm (the warmup's bound needs |k| <= 1), and the override. */
static void test_len_off_and_override(void **state)
{
	(void)state;
	assert_int_equal(seg(8, 0, 1, 0), 0);
	assert_int_equal(la_segment_len(SMS, 16, 32768, 1, 0, 0, LA_OPT_AUTO), 0);
	assert_int_equal(la_segment_len(SMS, 16, 32768, 2, 1, 0, LA_OPT_AUTO), 0);
	assert_int_equal(la_segment_len(SMS, 16, 32768, 1, 0, 1, LA_OPT_AUTO), 64);
	assert_int_equal(la_segment_len(SMS, 16, 32768, 1, 0, 1, LA_OPT_OFF), 0);
	assert_int_equal(la_segment_len(SMS, 256, 32768, 1, 0, 1, 2), 2);   /* forced */
	assert_int_equal(la_segment_len(SMS, 16, 32768, 1, 0, 1, 512), 0);  /* the whole batch */
	assert_int_equal(la_segment_len(SMS, 16, 32768, 1, 0, 1, -3), 0);
	assert_int_equal(la_segment_len(SMS, 16, 32768, 1, 0, 1, -2), 0);
	assert_int_equal(la_segment_len(SMS, 16, 32768, 1, 0, 0, 2), 0);    /* still no l2norm */
}

/* The dispatch replay on a case worked by hand: 4 SMs, sequences of 10 and 2 chunks. */
static void test_dispatch(void **state)
{
	(void)state;
	static const int32_t cu[3] = {0, 640, 768};
	int64_t chunks[2];
	assert_int_equal(la_seq_chunks(cu, 2, 768, chunks), 10);
	assert_int_equal(chunks[1], 2);
	/* 2 units: (10 + 1) on two SMs, (2 + 1) on the two free ones */
	assert_int_equal(la_dispatch(4, 2, chunks, 2, 0), 11);
	/* 3 units: one short CTA on the free SM, two after the long ones */
	assert_int_equal(la_dispatch(4, 3, chunks, 2, 0), 14);
	/* segments of 4: 4 + 1, then 4 + 2 + 1 and 2 + 2 + 1 with warmups, then 2 + 1; one
	 * unit: the SMs run them side by side, the last from 0 */
	assert_int_equal(la_dispatch(4, 1, chunks, 2, 4), 7);
	/* more units than SMs: two rounds of each batch */
	assert_int_equal(la_dispatch(4, 8, chunks, 2, 0), 11 + 11 + 3 + 3);
	/* more distinct end times than the replay keeps: -1 */
	int64_t many[600];
	for (int i = 0; i < 600; i++)
		many[i] = i + 1;   /* lengths 1, 2, ..., 600 chunks */
	assert_int_equal(la_dispatch(700, 1, many, 600, 0), -1);
	/* offsets out of order or past the tokens: clamped, never negative */
	static const int32_t bad[4] = {500, -7, 1 << 30, 3};
	int64_t c3[3];
	assert_int_equal(la_seq_chunks(bad, 3, 8192, c3), 121);   /* [500, 8192) */
	assert_int_equal(c3[0], 0);
	assert_int_equal(c3[2], 0);
}

/* Known unequal lengths (a host copy of cu_seqlens): the replay's best length. Picks checked
 * on the H200 against forced lengths (within 1% of the best of 0, 16, ..., 256
 * on each of these). */
static void test_len_known(void **state)
{
	(void)state;
	static const int32_t short_long[3] = {0, 1024, 8192};    /* 16 + 112 chunks */
	static const int32_t long_short[3] = {0, 28672, 32768};  /* 448 + 64 */
	static const int32_t garbage[4] = {500, -7, 1 << 30, 3};  /* clamped: one 8192-token run */
	/* GDN 16/64 (128 units): whole sequences (the short ones' SMs free after 16 chunks) */
	assert_int_equal(la_segment_len_known(SMS, 128, short_long, 2, 8192), 0);
	/* GDN 8/24 (48 units): segments of 64 (150, the max(longest, work / SMs) choice, ran 192
	 * CTAs in two waves) */
	assert_int_equal(la_segment_len_known(SMS, 48, long_short, 2, 32768), 64);
	/* GDN 4/16, KDA 16/16 (32 units): short segments */
	int32_t len = la_segment_len_known(SMS, 32, short_long, 2, 8192);
	assert_true(len >= 16 && len <= 32);
	len = la_segment_len_known(SMS, 16, garbage, 3, 8192);
	assert_true(len >= 0 && len < 128);
	/* more sequences than the replay takes: whole (the caller uses the 1/8 rule then) */
	int32_t many[LA_CP_KNOWN_MAX + 2];
	for (int i = 0; i < LA_CP_KNOWN_MAX + 2; i++)
		many[i] = 64 * i;
	assert_int_equal(la_segment_len_known(SMS, 16, many, LA_CP_KNOWN_MAX + 1,
					      64 * (LA_CP_KNOWN_MAX + 1)), 0);
}

/* Expected failures (KDA's lower-bound gate): segments only while units x N x 3 <= SMs. */
static void test_len_failing(void **state)
{
	(void)state;
	assert_int_equal(la_segment_len_failing(SMS, 16, 32768, 1, 0, 1, LA_OPT_AUTO), 64);  /* 8/8 */
	assert_int_equal(la_segment_len_failing(SMS, 32, 32768, 1, 0, 1, LA_OPT_AUTO), 128); /* 16/16 */
	assert_int_equal(la_segment_len_failing(SMS, 16, 32768, 4, 1, 1, LA_OPT_AUTO), 0);   /* 8192x4 */
	assert_int_equal(la_segment_len_failing(SMS, 16, 32768, 2, 1, 1, LA_OPT_AUTO), 64);  /* 28672+4096 */
	assert_int_equal(la_segment_len_failing(SMS, 64, 32768, 1, 0, 1, LA_OPT_AUTO), 0);   /* 32/32 */
	assert_int_equal(la_segment_len_failing(SMS, 64, 32768, 1, 0, 1, 8), 8);    /* forced */
}

/* Transfer slots: one per 512 tokens plus 16; segments lengthened until their slots fit. */
static void test_transfer_slots(void **state)
{
	(void)state;
	assert_int_equal(la_transfer_slots(SMS, 16, 0, 1, 0, 1, LA_OPT_AUTO), 0);
	assert_int_equal(la_transfer_slots(SMS, 16, 32768, 1, 0, 0, LA_OPT_AUTO), 0); /* no l2norm: no segments */
	assert_int_equal(la_transfer_slots(SMS, 16, 32768, 1, 0, 1, LA_OPT_AUTO), 64 + 16);   /* 8/8 */
	assert_int_equal(la_transfer_slots(SMS, 64, 32768, 1, 0, 1, LA_OPT_AUTO), 64 + 16);   /* 32/32 */
	assert_int_equal(la_transfer_slots(SMS, 128, 32768, 1, 0, 1, LA_OPT_AUTO), 0);   /* 64/64: never cut */
	assert_int_equal(la_transfer_slots(SMS, 128, 32768, 4, 1, 1, LA_OPT_AUTO), 64 + 16);  /* varlen */
	assert_int_equal(la_transfer_slots(SMS, 128, 32768, 1, 0, 1, 4), 64 + 16);   /* forced */
	assert_int_equal(la_transfer_slots(SMS, 2, 64, 1, 0, 1, 2), 0);  /* one chunk: no segments */
	/* 8/8 1x32768: 8 segments of 64 chunks, 9 slots: unchanged */
	assert_int_equal(la_fit_transfer(64, 32768, 1, 80), 64);
	/* 2 units at 1x8192: 4-chunk segments are 33 slots > 32: 5 chunks, 27 slots */
	assert_int_equal(la_fit_transfer(4, 8192, 1, la_transfer_slots(SMS, 4, 8192, 1, 0, 1, LA_OPT_AUTO)), 5);
	/* too many sequences to ever fit: unchanged (their failed warmups rerun whole) */
	assert_int_equal(la_fit_transfer(4, 8192, 31, 32), 4);
	assert_int_equal(la_fit_transfer(0, 8192, 1, 32), 0);
	for (int64_t tokens = 1; tokens < 40000; tokens += 997)
		for (int64_t nseq = 1; nseq < 40; nseq += 3)
			for (int32_t len = 1; len < 40; len += 5) {
				int64_t xs = la_transfer_slots(SMS, 2, tokens, nseq, 1, 1, 1);
				int32_t fit = la_fit_transfer(len, tokens, nseq, xs);
				int64_t segs = (tokens + 64 * (int64_t)fit - 1) / (64 * fit) + nseq;
				assert_true(fit >= len);
				if (nseq + 2 <= xs && fit < (tokens + 63) / 64)
					assert_true(segs <= xs);
			}
	assert_false(la_use_transfer(10, 9, LA_OPT_AUTO));
	assert_true(la_use_transfer(9, 9, LA_OPT_AUTO));
	assert_false(la_use_transfer(9, 9, LA_OPT_OFF));
	assert_true(la_use_transfer(9, 9, LA_OPT_ON));
	assert_false(la_use_transfer(0, 9, LA_OPT_AUTO));
}

/* chunk_recur_w (both value slices in one CTA) where chunk_recur_t would take more than one
 * wave, at D = 128 only; the kda_wide option overrides it there */
static void test_use_wide(void **state)
{
	(void)state;
	/* 16/32 8192x4 on 132 SMs: 256 slices, two waves */
	assert_true(la_use_wide(132, 128, 4, 32, LA_OPT_AUTO));
	/* 64/64 1x8192 and 16/16 8192x4: 128 slices, one wave */
	assert_false(la_use_wide(132, 128, 1, 64, LA_OPT_AUTO));
	assert_false(la_use_wide(132, 128, 4, 16, LA_OPT_AUTO));
	/* the edge: 66 heads fill 132 SMs exactly, 67 do not */
	assert_false(la_use_wide(132, 128, 1, 66, LA_OPT_AUTO));
	assert_true(la_use_wide(132, 128, 1, 67, LA_OPT_AUTO));
	/* D = 64: a head is one slice, whatever the grid or the override */
	assert_false(la_use_wide(132, 64, 64, 64, LA_OPT_AUTO));
	assert_false(la_use_wide(132, 64, 1, 1, LA_OPT_ON));
	/* the override, and what it ignores */
	assert_true(la_use_wide(132, 128, 1, 1, LA_OPT_ON));
	assert_false(la_use_wide(132, 128, 64, 64, LA_OPT_OFF));
	assert_true(la_use_wide(132, 128, 64, 64, LA_OPT_AUTO));
	assert_true(la_use_wide(132, 128, 64, 64, 10));
	assert_false(la_use_wide(132, 128, 1, 1, 5));
	/* no overflow with large grids */
	assert_true(la_use_wide(132, 128, 1 << 20, 1 << 12, LA_OPT_AUTO));
}

/* chunk_recur_w over segments where they are at least LA_WIDE_CP_MIN_LEN chunks long */
/* The split in time: the smallest L whose second chunk_prep hides under part 1, its limits,
 * the slots it needs, the override. */
static void test_split_len(void **state)
{
	(void)state;
	/* KDA 8/8 8192x4 on 132 SMs: 64 recurrence CTAs leave 136 chunk_prep slots; L = 107:
	 * 32 x 21 = 672 CTAs, 5 waves of 20 chunks <= 107; L = 106: 704 CTAs, 6 waves > 106 */
	assert_int_equal(la_split_len(132, 16, 8, 4, 128, LA_OPT_AUTO), 107);
	assert_true(la_split_hides(32, 136, 128, 107) && !la_split_hides(32, 136, 128, 106));
	/* 8/8 1x8192 without the l2norm: 16 CTAs leave 232 slots; L = 64 (half): 8 x 64 = 512
	 * CTAs, 3 waves <= 64 */
	assert_int_equal(la_split_len(132, 16, 8, 1, 128, LA_OPT_AUTO), 64);
	/* 4/4 8192x4 without the l2norm: 32 CTAs leave 200 slots; L = 80: 768 CTAs, 4 waves */
	assert_int_equal(la_split_len(132, 8, 4, 4, 128, LA_OPT_AUTO), 80);
	/* at least half the chunks (no chain: two segments), fewer than all of them */
	assert_int_equal(la_split_len(132, 8, 4, 1, 128, LA_OPT_AUTO), 64);
	/* chunk_prep in one wave (1 x 1 x 128 <= 264 CTAs): whole, unless forced */
	assert_int_equal(la_split_len(132, 2, 1, 1, 128, LA_OPT_AUTO), 0);
	assert_int_equal(la_split_len(132, 2, 2, 1, 132, LA_OPT_AUTO), 0);
	assert_true(la_split_len(132, 2, 2, 1, 133, LA_OPT_AUTO) > 0);
	assert_int_equal(la_split_len(132, 2, 1, 1, 128, 64), 64);
	assert_int_equal(la_split_len(132, 2, 1000, 1, 40, LA_OPT_AUTO), 39);
	/* whole sequences: fewer than LA_SPLIT_MIN_CHUNKS chunks, or more than half the SMs
	 * busy (66 of 132 is half: allowed) */
	assert_int_equal(la_split_len(132, 16, 8, 4, LA_SPLIT_MIN_CHUNKS - 1, LA_OPT_AUTO), 0);
	assert_true(la_split_len(132, 16, 8, 4, LA_SPLIT_MIN_CHUNKS, LA_OPT_AUTO) > 0);
	assert_true(la_split_len(132, 22, 11, 3, 128, LA_OPT_AUTO) > 0);
	assert_int_equal(la_split_len(132, 32, 16, 4, 128, LA_OPT_AUTO), 0);   /* 16/16 8192x4 */
	assert_int_equal(la_split_len(132, 2, 1, 67, 128, LA_OPT_AUTO), 0);
	assert_int_equal(la_split_len(300, 2, 1, 65, 128, LA_OPT_AUTO), 0);    /* > LA_SPLIT_MAX_CTAS */
	assert_int_equal(la_split_len(0, 16, 8, 4, 128, LA_OPT_AUTO), 0);
	assert_int_equal(la_split_len(132, 16, 8, 0, 128, LA_OPT_AUTO), 0);
	/* every result is in [cdiv(C, 2), C), and the smallest there that hides the second
	 * chunk_prep (unless that is below cdiv(C, 2) or no L below C does) */
	for (int64_t c = LA_SPLIT_MIN_CHUNKS; c < 400; c += 13)
		for (int64_t h = 1; h <= 16; h *= 2)
			for (int64_t n = 1; n <= 4; n++) {
				int64_t len = la_split_len(132, 2 * h, h, n, c, LA_OPT_AUTO);
				/* more than half of the SMs busy, or chunk_prep in one wave */
				if (4 * h * n > 132 || n * h * c <= 264) {
					assert_int_equal(len, 0);
					continue;
				}
				int64_t slots = 2 * (132 - 2 * h * n);
				assert_true(len >= (c + 1) / 2 && len < c);
				assert_true(len == c - 1 || la_split_hides(n * h, slots, c, len));
				assert_true(len == (c + 1) / 2 ||
					    !la_split_hides(n * h, slots, c, len - 1));
			}
	/* long sequences: the same rule, its walk bounded (at most LA_SPLIT_PREP_CHUNKS + 1 steps) */
	int64_t big = (int64_t)1 << 25;
	int64_t lb = la_split_len(132, 16, 8, 4, big, LA_OPT_AUTO);
	assert_true(la_split_hides(32, 136, big, lb) && !la_split_hides(32, 136, big, lb - 1));
	/* the override: off, a valid L, and lengths out of [cdiv(C, 2), C) ignored */
	assert_int_equal(la_split_len(132, 16, 8, 4, 128, LA_OPT_OFF), 0);
	assert_int_equal(la_split_len(132, 16, 8, 4, 128, 96), 96);
	assert_int_equal(la_split_len(132, 16, 8, 4, 127, 64), 64);
	assert_int_equal(la_split_len(132, 16, 8, 4, 127, 63), 0);
	assert_int_equal(la_split_len(132, 16, 8, 4, 128, 128), 0);
	assert_int_equal(la_split_len(132, 16, 8, 4, 128, -2), 0);
	/* it does not make a split the rule refuses */
	assert_int_equal(la_split_len(132, 32, 16, 4, 128, 96), 0);
	/* the slots: 3 N covers cdiv(T, 64 L) + N for every L >= C / 2 */
	for (int64_t c = LA_SPLIT_MIN_CHUNKS; c < 300; c += 7)
		for (int64_t n = 1; n <= 8; n++)
			for (int64_t len = (c + 1) / 2; len < c; len++)
				assert_true((n * c * 64 + 64 * len - 1) / (64 * len) + n <=
					    la_split_slots(16, n, c));
	assert_int_equal(la_split_slots(16, 4, LA_SPLIT_MIN_CHUNKS - 1), 0);
	assert_int_equal(la_split_slots(2, LA_SPLIT_MAX_CTAS / 2 + 1, 128), 0);
}

static void test_use_wide_segments(void **state)
{
	(void)state;
	/* the lengths la_segment_len gives for a CTA per head at the benchmark's shapes (132 SMs) */
	assert_int_equal(la_segment_len(132, 32, 8192, 1, 0, 1, LA_OPT_AUTO), 32);   /* 16/32 1x8192 */
	assert_int_equal(la_segment_len(132, 16, 8192, 1, 0, 1, LA_OPT_AUTO), 16);   /* 16/16 1x8192 */
	assert_int_equal(la_segment_len(132, 8, 8192, 1, 0, 1, LA_OPT_AUTO), 8);     /* 8/8 1x8192 */
	assert_true(la_use_wide_segments(32, LA_OPT_AUTO));
	assert_true(la_use_wide_segments(16, LA_OPT_AUTO));
	assert_false(la_use_wide_segments(8, LA_OPT_AUTO));
	assert_false(la_use_wide_segments(LA_WIDE_CP_MIN_LEN - 1, LA_OPT_AUTO));
	/* no segments: nothing to run */
	assert_false(la_use_wide_segments(0, LA_OPT_AUTO));
	assert_false(la_use_wide_segments(0, LA_OPT_ON));
	/* the override */
	assert_true(la_use_wide_segments(2, LA_OPT_ON));
	assert_false(la_use_wide_segments(64, LA_OPT_OFF));
	assert_true(la_use_wide_segments(64, 7));
}

/* chunk_prep's CB: written only where a segment's warmup reads it */
static void test_prep_needs_cb(void **state)
{
	(void)state;
	assert_false(la_prep_needs_cb(0, 0, 0, 0));   /* whole sequences */
	assert_true(la_prep_needs_cb(16, 0, 0, 0));   /* chunk_recur's segments, warmups */
	assert_false(la_prep_needs_cb(16, 0, 1, 0));  /* the chained path: exact starts */
	assert_true(la_prep_needs_cb(0, 32, 0, 0));   /* chunk_recur_w's segments */
	assert_false(la_prep_needs_cb(0, 0, 0, 1));   /* the split in time */
	assert_false(la_prep_needs_cb(16, 32, 0, 1));
}

/* chunk_prep_nocb: D = 128 where nothing reads CB (or chunk_prep by the override) */
static void test_use_prep_nocb(void **state)
{
	(void)state;
	assert_true(la_use_prep_nocb(128, 0, LA_OPT_AUTO));
	assert_false(la_use_prep_nocb(128, 1, LA_OPT_AUTO));   /* CB read */
	assert_false(la_use_prep_nocb(64, 0, LA_OPT_AUTO));    /* not built */
	assert_false(la_use_prep_nocb(128, 0, LA_OPT_OFF));
	assert_true(la_use_prep_nocb(128, 0, LA_OPT_ON));
	assert_true(la_use_prep_nocb(128, 0, -2));
	assert_false(la_use_prep_nocb(128, 1, LA_OPT_ON));    /* never where CB is read */
	assert_false(la_use_prep_nocb(64, 0, LA_OPT_ON));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_batches),
		cmocka_unit_test(test_edges),
		cmocka_unit_test(test_len_one_length),
		cmocka_unit_test(test_len_varlen),
		cmocka_unit_test(test_len_off_and_override),
		cmocka_unit_test(test_dispatch),
		cmocka_unit_test(test_len_known),
		cmocka_unit_test(test_len_failing),
		cmocka_unit_test(test_transfer_slots),
		cmocka_unit_test(test_use_wide),
		cmocka_unit_test(test_use_wide_segments),
		cmocka_unit_test(test_split_len),
		cmocka_unit_test(test_prep_needs_cb),
		cmocka_unit_test(test_use_prep_nocb),
	};
	return cmocka_run_group_tests(tests, NULL, LA_OPT_AUTO);
}
