/*
 * test_la_segments.c: the segment numbering of context parallelism, on the CPU.
 *
 * Segment j of sequence n (segments of L chunks) is slot bos(n) / (64 L) + n + j; grids over
 * segment slots have cdiv(T, 64 L) + N of them and a CTA finds its sequence by binary search
 * (kernels/common/seq.tile). This file restates two schedules' prologues in C (keep them in
 * step with the kernels) and checks, over many random varlen batches (empty and short
 * sequences, tokens before the first sequence), what the kernels rely on:
 *   - the chained path (GDN; KDA without chunk states): part 1 of gdn_fused / chunk_recur_t
 *     over sequences, the maps (gdn_map_t, chunk_map_t chained) over segment slots beside it,
 *     chunk_chain_t, then part 2 over segment slots. Every chunk's outputs and every
 *     sequence's final state come from exactly one CTA; part 1 and the maps never write the
 *     same slot of XB; the chain reads exactly the maps and S_1 of its own sequence; part 2
 *     starts each segment from that segment's exact start; every slot is a transfer slot.
 *   - chunk_recur's warmups (KDA with chunk states): mode 1, its map CTAs, then mode 3 over
 *     the failed segments.
 * It also checks the host's rules (kernels/src/la_segments.h) on the shapes that decided them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "la_segments.h"

enum { BT = 64, MAX_SEQ = 9, MAX_CHUNKS = 64, MAX_LEAD = 300 };

static int cdiv(int a, int b)
{
	return (a + b - 1) / b;
}

/* cu[0] > 0 leaves tokens before the first sequence (the kernels clamp any cu_seqlens);
 * tt is the tensor's tokens, cu[nseq] */
typedef struct batch {
	int nseq, tt;
	int cu[MAX_SEQ + 1];
} batch;

/* Slots of every grid over segment slots: cdiv(T, 64 L) + N, and the flag, XB and map arrays
 * in them (the workspace's transfer slots are the segment slots) */
enum { MAX_SLOTS = MAX_CHUNKS + (MAX_LEAD + BT - 1) / BT + MAX_SEQ + 1 };

/* The sequence of a segment slot: seq.tile's seq_of_slot (the last n whose first segment
 * slot is at or before x) */
static int seq_of_slot(const batch *b, int x, int seg_len)
{
	int seg_rows = BT * seg_len, lo = 0, hi = b->nseq - 1;
	while (lo < hi) {
		int mid = (lo + hi + 1) / 2;
		if (b->cu[mid] / seg_rows + mid <= x)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

static int seg0_of(const batch *b, int n, int seg_len)
{
	return b->cu[n] / (BT * seg_len) + n;
}

static int chunks_of(const batch *b, int n)
{
	return cdiv(b->cu[n + 1] - b->cu[n], BT);
}

/* One CTA of chunk_recur's mode 1 (KDA with chunk states), as its prologue computes it. */
typedef struct cta {
	int n, c_begin, c_end, owns_end, live;
} cta;

static cta mode1_cta(const batch *b, int x, int seg_len)
{
	cta c = {seq_of_slot(b, x, seg_len), 0, 0, 0, 0};
	int nchunks = chunks_of(b, c.n);
	c.c_begin = (x - seg0_of(b, c.n, seg_len)) * seg_len;
	c.c_end = c.c_begin + seg_len < nchunks ? c.c_begin + seg_len : nchunks;
	c.owns_end = c.c_end == nchunks && (c.c_begin < nchunks || c.c_begin == 0);
	c.live = c.c_begin < nchunks; /* it writes outputs */
	return c;
}

/* lead: at most this many tokens before the first sequence */
static void random_batch(batch *b, unsigned *seed, int lead)
{
	b->nseq = 1 + rand_r(seed) % MAX_SEQ;
	b->cu[0] = lead > 0 && rand_r(seed) % 2 ? rand_r(seed) % (lead + 1) : 0;
	for (int n = 0; n < b->nseq; n++) {
		int r = rand_r(seed) % 4;
		int len = r == 0 ? 0 : r == 1 ? 1 + rand_r(seed) % 100
			: 1 + rand_r(seed) % (BT * MAX_CHUNKS / MAX_SEQ);
		b->cu[n + 1] = b->cu[n] + len;
	}
	b->tt = b->cu[b->nseq];
}

/* chunk_recur's mode 1: every chunk's outputs from one CTA, every final state from one, and
 * every slot of every sequence's segments inside the grid, mapping back to its segment. */
static void check_batch(const batch *b, int seg_len)
{
	int nx = cdiv(b->tt, BT * seg_len) + b->nseq;
	int nslot = cdiv(b->tt, BT) + b->nseq; /* the chunk slots */
	int out_owner[MAX_SEQ][MAX_CHUNKS], end_owners[MAX_SEQ] = {0};
	char written[MAX_SLOTS] = {0};
	memset(out_owner, 0, sizeof out_owner);
	assert_true(nx <= nslot && nx <= MAX_SLOTS);
	for (int x = 0; x < nx; x++) {
		cta c = mode1_cta(b, x, seg_len);
		assert_true(c.n >= 0 && c.n < b->nseq);
		for (int ch = c.c_begin; ch < c.c_end; ch++)
			out_owner[c.n][ch]++;
		end_owners[c.n] += c.owns_end;
		if (c.live)
			written[x] = 1;
	}
	for (int n = 0; n < b->nseq; n++) {
		int nchunks = chunks_of(b, n), seg0 = seg0_of(b, n, seg_len);
		assert_int_equal(end_owners[n], 1);
		for (int ch = 0; ch < nchunks; ch++)
			assert_int_equal(out_owner[n][ch], 1);
		for (int j = 0; j < cdiv(nchunks, seg_len); j++) {
			assert_true(seg0 + j < nx);
			assert_true(written[seg0 + j]);
			/* the slot maps back to this sequence and segment */
			cta c = mode1_cta(b, seg0 + j, seg_len);
			assert_int_equal(c.n, n);
			assert_int_equal(c.c_begin, j * seg_len);
		}
	}
}

/* KDA's transfer maps with warmups (chunk_recur.tile): segments fail their warmup at random
 * (a function of the gates; segment 0 of a sequence never fails). Checks: the map CTAs of the
 * first launch (mode 1, z >= NSL) map exactly the segments before their sequence's last
 * failed one, in slots of that sequence; the second launch (mode 3) runs exactly the failed
 * segments, each after chaining the maps of all the segments before it in its sequence, which
 * the first launch wrote; every slot is inside XB and the maps, whose transfer slots are the
 * segment slots. */
static void check_transfer(const batch *b, int seg_len, unsigned *seed)
{
	int nx = cdiv(b->tt, BT * seg_len) + b->nseq;
	char failed[MAX_SLOTS] = {0}, mapped[MAX_SLOTS] = {0};
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
		int jseg = c.c_begin / seg_len, seg0 = seg0_of(b, c.n, seg_len);
		nfailed += failed[x];
		if (!failed[x])
			continue;
		runs++;
		assert_int_equal(seg0 + jseg, x);
		for (int j = 0; j < jseg; j++) {
			assert_true(seg0 + j < nx); /* a transfer slot */
			assert_true(mapped[seg0 + j]);
			assert_int_equal(mode1_cta(b, seg0 + j, seg_len).n, c.n);
		}
	}
	assert_int_equal(runs, nfailed);
}

/*
 * The chained path, as its kernels compute it (gdn_fused.tile and chunk_recur_t.tile parts 1
 * and 2, gdn_map_t.tile and chunk_map_t.tile with `chained`, chunk_chain_t.tile). What XB's
 * slots hold is tracked as (sequence, kind, j): S_j, a segment's start, or B_j, its map's
 * state term (P_j, in XPH / XPL, is tracked apart). Part 1 and the maps run side by side, so
 * no slot may have two writers among them; the chain runs after both, part 2 after it.
 */
typedef struct xval {
	int n, kind, j; /* kind: 0 nothing, 1 S_j, 2 B_j */
} xval;

enum { X_NONE, X_START, X_MAP };

static void check_chained(const batch *b, int seg_len)
{
	int nx = cdiv(b->tt, BT * seg_len) + b->nseq; /* XS: the transfer slots */
	int out_owner[MAX_SEQ][MAX_CHUNKS], end_owners[MAX_SEQ] = {0}, chains[MAX_SEQ] = {0};
	xval xb[MAX_SLOTS], xp[MAX_SLOTS];
	char used[MAX_SLOTS] = {0}; /* maps the chain read */
	memset(out_owner, 0, sizeof out_owner);
	memset(xb, 0, sizeof xb);
	memset(xp, 0, sizeof xp);
	assert_true(nx <= cdiv(b->tt, BT) + b->nseq && nx <= MAX_SLOTS);
	/* part 1: one CTA per sequence, its first segment from h0; S_1 to its first slot */
	for (int n = 0; n < b->nseq; n++) {
		int nchunks = chunks_of(b, n), seg0 = seg0_of(b, n, seg_len);
		int nrun = seg_len < nchunks ? seg_len : nchunks;
		for (int ch = 0; ch < nrun; ch++)
			out_owner[n][ch]++;
		if (nrun == nchunks) {
			end_owners[n]++;
			continue;
		}
		assert_true(seg0 >= 0 && seg0 < nx);
		assert_int_equal(xb[seg0].kind, X_NONE);
		xb[seg0] = (xval){n, X_START, 1};
	}
	/* the maps: segments 1 .. last - 1 of every sequence, beside part 1 */
	for (int x = 0; x < nx; x++) {
		int n = seq_of_slot(b, x, seg_len), jseg = x - seg0_of(b, n, seg_len);
		int last = cdiv(chunks_of(b, n), seg_len) - 1;
		if (jseg < 1 || jseg >= last)
			continue;
		assert_int_equal(xb[x].kind, X_NONE); /* not part 1's S_1, nor another map */
		xb[x] = (xval){n, X_MAP, jseg};
		xp[x] = (xval){n, X_MAP, jseg};
	}
	/* chunk_chain_t: the CTA of each sequence's last segment chains S_j+1 = P_j S_j + B_j
	 * over B_j's slot, j = 1 .. last - 1 */
	for (int x = 0; x < nx; x++) {
		int n = seq_of_slot(b, x, seg_len), seg0 = seg0_of(b, n, seg_len);
		int jseg = x - seg0, last = cdiv(chunks_of(b, n), seg_len) - 1;
		if (jseg != last || last < 2)
			continue;
		chains[n]++;
		assert_true(xb[seg0].n == n && xb[seg0].kind == X_START && xb[seg0].j == 1);
		for (int j = 1; j < last; j++) {
			xval *bj = &xb[seg0 + j], *pj = &xp[seg0 + j];
			assert_true(bj->n == n && bj->kind == X_MAP && bj->j == j);
			assert_true(pj->n == n && pj->kind == X_MAP && pj->j == j);
			*bj = (xval){n, X_START, j + 1};
			used[seg0 + j] = 1;
		}
	}
	/* part 2: segments k >= 1 from S_k, in segment k - 1's slot */
	for (int x = 0; x < nx; x++) {
		int n = seq_of_slot(b, x, seg_len), nchunks = chunks_of(b, n);
		int k = x - seg0_of(b, n, seg_len), c_first = k * seg_len;
		if (c_first <= 0 || c_first >= nchunks)
			continue;
		assert_true(xb[x - 1].n == n && xb[x - 1].kind == X_START && xb[x - 1].j == k);
		int c_end = c_first + seg_len < nchunks ? c_first + seg_len : nchunks;
		for (int ch = c_first; ch < c_end; ch++)
			out_owner[n][ch]++;
		end_owners[n] += c_end == nchunks;
	}
	for (int n = 0; n < b->nseq; n++) {
		int nchunks = chunks_of(b, n);
		assert_int_equal(end_owners[n], 1);
		assert_int_equal(chains[n], cdiv(nchunks, seg_len) >= 3);
		for (int ch = 0; ch < nchunks; ch++)
			assert_int_equal(out_owner[n][ch], 1);
	}
	for (int x = 0; x < nx; x++) /* no map CTA works for nothing */
		assert_true(xp[x].kind == X_NONE || used[x]);
}

static void test_random_batches(void **state)
{
	(void)state;
	unsigned seed = 12345;
	for (int it = 0; it < 20000; it++) {
		batch b;
		random_batch(&b, &seed, 0);
		int seg_len = 1 + rand_r(&seed) % 12;
		check_batch(&b, seg_len);
		check_transfer(&b, seg_len, &seed);
		check_chained(&b, seg_len);
		random_batch(&b, &seed, MAX_LEAD); /* (chunk_recur's mode 1 assumes cu[0] = 0) */
		check_chained(&b, 1 + rand_r(&seed) % 12);
	}
}

/* A case worked by hand: sequences of 300 and 400 tokens (5 and 7 chunks), segments of 2
 * chunks: 8 slots; sequence 0 in slots 0 .. 2 (its map in 1, its chain's CTA in 2), sequence
 * 1 from slot 300 / 128 + 1 = 3 (maps in 4 and 5, the chain in 6); slot 7 is past both. */
static void test_chained_by_hand(void **state)
{
	(void)state;
	batch b = {2, 700, {0, 300, 700}};
	static const int seq[8] = {0, 0, 0, 1, 1, 1, 1, 1};
	assert_int_equal(cdiv(b.tt, BT * 2) + b.nseq, 8);
	for (int x = 0; x < 8; x++)
		assert_int_equal(seq_of_slot(&b, x, 2), seq[x]);
	assert_int_equal(seg0_of(&b, 0, 2), 0);
	assert_int_equal(seg0_of(&b, 1, 2), 3);
	assert_int_equal(cdiv(chunks_of(&b, 0), 2) - 1, 2); /* the last segments: 2 and 3 */
	assert_int_equal(cdiv(chunks_of(&b, 1), 2) - 1, 3);
	check_chained(&b, 2);
	/* segments of 3: sequence 1's first slot 300 / 192 + 1 = 2, right after sequence 0's
	 * two segments */
	assert_int_equal(seg0_of(&b, 1, 3), 2);
	assert_int_equal(seq_of_slot(&b, 1, 3), 0);
	assert_int_equal(seq_of_slot(&b, 2, 3), 1);
	check_chained(&b, 3);
}

/* The shapes the library picks at the benchmark's sizes: one sequence, equal sequences, and a
 * long sequence beside a short one, segment lengths around the sequences' chunk counts; and
 * tokens before the first sequence (a slot before its first segment). */
static void test_edges(void **state)
{
	(void)state;
	static const int lens[][5] = {{0, 4096, -1}, {0, 1024, 1024, 1024, 1024},
				      {0, 3584, 512, -1}, {0, 0, 64, 0, -1}, {0, 63, 65, 1, -1},
				      {0, 0, -1}, {200, 4096, -1}, {640, 0, 129, -1}};
	for (size_t t = 0; t < sizeof lens / sizeof lens[0]; t++) {
		batch b = {0, 0, {lens[t][0]}};
		for (int n = 0; n < 4 && lens[t][n + 1] >= 0; n++) {
			b.cu[n + 1] = b.cu[n] + lens[t][n + 1];
			b.nseq = n + 1;
		}
		b.tt = b.cu[b.nseq];
		for (int seg_len = 1; seg_len <= MAX_CHUNKS; seg_len++) {
			if (b.cu[0] == 0)
				check_batch(&b, seg_len);
			check_chained(&b, seg_len);
		}
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

/* The chained path (GDN; KDA without chunk states). Sequences of one length: the segment
 * length of least la_chained_cost (part 1 beside the maps, then part 2, chain steps and
 * launches), taken only below LA_CHAINED_GAIN of whole sequences' cost; unknown lengths: only
 * while units x N x 3 <= SMs, then la_segment_len's (no l2norm condition: nothing is
 * bounded). The override forces a length below the batch's chunks, OFF none. */
static int32_t chained(int sms, int64_t units, int64_t tokens, int64_t nseq, int has_cu,
		       int override)
{
	return la_segment_len_chained(sms, units, tokens, nseq, has_cu, override);
}

/* The cost model on cases worked by hand (132 SMs): a CTA per SM, two map CTAs per SM */
static void test_chained_cost(void **state)
{
	(void)state;
	/* whole: chunks x waves */
	assert_int_equal(la_chained_cost(SMS, 16, 1, 512, 512), 512);
	assert_int_equal(la_chained_cost(SMS, 128, 2, 100, 100), 200);   /* 256 CTAs: 2 waves */
	assert_int_equal(la_chained_cost(SMS, 16, 1, 512, 1000), 512);   /* one segment */
	/* 16 units, 512 chunks in 9 segments of 57: part 1 (16 CTAs) and 8 x 32 map CTAs in
	 * one wave of 2 x 132, part 2's 128 CTAs in one: 57 x 2 + 9 chain steps + 4 */
	assert_int_equal(la_chained_cost(SMS, 16, 1, 512, 57), 127);
	/* 8 of 64: 64 x 2 + 8 + 4 */
	assert_int_equal(la_chained_cost(SMS, 16, 1, 512, 64), 140);
	/* 10 of 52: part 2's 144 CTAs and the maps' 288 take two waves each */
	assert_int_equal(la_chained_cost(SMS, 16, 1, 512, 52), 52 * 4 + 10 + 4);
	/* 4 sequences of 128 chunks at 16 units in 3 segments of 43: 64 CTAs a segment */
	assert_int_equal(la_chained_cost(SMS, 16, 4, 128, 43), 43 * 2 + 3 + 4);
}

/* The chained path's first segment (la_first_len_chained), by hand on 132 SMs, then its
 * definition over a sweep: S unchanged, the first at least as long as the others, part 1 and
 * the maps in one wave, else the equal length. */
static void test_first_len(void **state)
{
	(void)state;
	/* units, sequences, chunks, the segment rule's length; the first, the others' length */
	static const struct { int64_t units, nseq, chunks; int32_t len, first, after; } hand[] = {
		/* 3 of 43 (64 part-1 CTAs, 128 maps): cdiv(8 x 128, 8 x 2 + 9) = 41 after 46 */
		{16, 4, 128, 43, 46, 41},
		{32, 1, 512, 103, 112, 100},   /* 5 of 103: 100 after 112 */
		/* 9 of 57: cdiv(8 x 512, 73) = 57 leaves the first 56, not longer: equal */
		{16, 1, 512, 57, 57, 57},
		{16, 1, 128, 64, 64, 64},      /* two segments: no maps beside part 1 */
		{200, 1, 128, 43, 43, 43},     /* part 1 in two waves */
		{64, 1, 128, 20, 20, 20},      /* the maps beyond one wave */
		{16, 1, 128, 0, 0, 0},         /* nothing to cut */
	};
	for (size_t i = 0; i < sizeof hand / sizeof hand[0]; i++) {
		int32_t L = hand[i].len;
		assert_int_equal(la_first_len_chained(SMS, hand[i].units, hand[i].nseq,
						      hand[i].chunks, &L), hand[i].first);
		assert_int_equal(L, hand[i].after);
	}

	for (int64_t units = 2; units <= 128; units *= 2)
		for (int64_t nseq = 1; nseq <= 8; nseq *= 2)
			for (int64_t chunks = 1; chunks <= 600; chunks += 7)
				for (int32_t len = 1; len <= chunks; len += 1 + len / 4) {
					int32_t l2 = len;
					int32_t first = la_first_len_chained(SMS, units, nseq, chunks,
									     &l2);
					int64_t segs = (chunks + len - 1) / len;
					int64_t ctas = units * nseq;
					assert_true(first >= l2 && l2 <= len && l2 > 0);
					if (l2 == len) {
						assert_int_equal(first, len);   /* unchanged */
						continue;
					}
					/* the same segments, the first longer, in one wave */
					assert_true(segs >= 3 && ctas <= SMS &&
						    2 * ctas * (segs - 1) <= 2 * SMS);
					assert_int_equal(first + (segs - 1) * l2, chunks);
					assert_int_equal(1 + (chunks - first + l2 - 1) / l2, segs);
					assert_true(l2 >= LA_CP_MIN_LEN && first > l2);
					/* about the maps' 9/8 of the others: within a chunk's rounding */
					assert_true(8 * first <= 9 * l2 + 8 * (segs - 1));
					assert_true(8 * first + 8 * (segs - 1) >= 9 * (l2 - 1));
				}
}

/* gdn_kkt2 (two CTAs per SM) on grids of at most three waves of two, on 132 SMs: 792 CTAs */
static void test_use_kkt2(void **state)
{
	(void)state;
	assert_true(la_use_kkt2(SMS, 258, LA_OPT_AUTO));    /* 2/8 1x8192 */
	assert_true(la_use_kkt2(SMS, 272, LA_OPT_AUTO));    /* 2/8 1024x8 */
	assert_true(la_use_kkt2(SMS, 544, LA_OPT_AUTO));    /* 4/16 1024x8 */
	assert_true(la_use_kkt2(SMS, 792, LA_OPT_AUTO));
	assert_false(la_use_kkt2(SMS, 793, LA_OPT_AUTO));
	assert_false(la_use_kkt2(SMS, 1032, LA_OPT_AUTO));  /* 8/24 1x8192 */
	assert_true(la_use_kkt2(SMS, 1032, LA_OPT_ON));
	assert_false(la_use_kkt2(SMS, 258, LA_OPT_OFF));
	assert_true(la_use_kkt2(SMS, 1, LA_OPT_AUTO));
}

/* One case against the rule's definition. Overrides: exact below the batch's chunks, else
 * none. Unknown lengths: the 3x condition, then la_segment_len. One length: the candidate
 * cdiv(C, s) (s <= LA_CHAINED_MAX_SEGS, at least LA_CP_MIN_LEN chunks) of least cost, the
 * fewest segments among equals, when below LA_CHAINED_GAIN of whole sequences'; else 0. */
static void check_chained_rule(int sms, int64_t units, int64_t tokens, int64_t nseq, int has_cu,
			       int o)
{
	int32_t got = chained(sms, units, tokens, nseq, has_cu, o);
	int64_t chunks = (tokens + 63) / 64;
	assert_true(got >= 0 && got < (chunks > 1 ? chunks : 1));
	if (o != LA_OPT_AUTO) {
		assert_int_equal(got, o > 0 && o < chunks ? o : 0);
		return;
	}
	if (tokens == 0)
		assert_int_equal(got, 0);
	if (tokens == 0 || (has_cu && nseq > 1)) {
		if (tokens > 0)
			assert_int_equal(got, units * nseq * 3 > sms ? 0 :
					 la_segment_len(sms, units, tokens, nseq, has_cu, 1, o));
		return;
	}
	int64_t per = ((tokens + nseq - 1) / nseq + 63) / 64;
	int64_t whole = la_chained_cost(sms, units, nseq, per, per), best = whole, best_len = 0;
	for (int64_t s = 2; s <= LA_CHAINED_MAX_SEGS; s++) {
		int64_t len = (per + s - 1) / s;
		if (len < LA_CP_MIN_LEN)
			break;
		int64_t cost = la_chained_cost(sms, units, nseq, per, len);
		if (cost < best) /* ties: the fewest segments */
			best = cost, best_len = len;
	}
	if ((double)best >= LA_CHAINED_GAIN * (double)whole)
		assert_int_equal(got, 0);
	else
		assert_int_equal(got, best_len);
}

/* The backward's walks (la_bwd_walks_cost, by hand, 132 SMs; 2/8 at D = 128: 16 units, 128
 * chunks; kda_bwd_wy's SM time 32 walk chunks per chunk, 4096 in all) */
static void test_bwd_walks_cost(void **state)
{
	(void)state;
	/* whole: 32 walks, one wave: the path, 128, over the spread (4096 + 4096) / 132 */
	assert_int_equal(la_bwd_walks_cost(SMS, 16, 1, 128, 0, 32), 128);
	assert_int_equal(la_bwd_walks_cost(SMS, 16, 1, 128, 128, 32), 128);
	/* 4 segments of 32: parts 1 and 2 of 96 slots, one wave each: 64 + 4 steps + 4; SM time
	 * 4096 + 32 x 32 x 2 offsets and maps + 4096 for kda_bwd_wy: cdiv(10240, 132) = 78 */
	assert_int_equal(la_bwd_walks_cost(SMS, 16, 1, 128, 32, 32), 78);
	/* 16 of 8: 480 slots, four waves a part: 64 + 16 + 4 = 84; spread cdiv(4096 + 32 x 8 x
	 * 14 + 4096, 132) = 90 */
	assert_int_equal(la_bwd_walks_cost(SMS, 16, 1, 128, 8, 32), 90);
	/* 128 walks (16/32), a wave; whole: the spread (16384 + 16384) / 132 = 249 over 128 */
	assert_int_equal(la_bwd_walks_cost(SMS, 64, 1, 128, 0, 128), 249);
}

/* The backward's rule: one length, the least cost below LA_CHAINED_GAIN of whole walks';
 * unequal lengths whole; the override as the forward's. kda_bwd_wy's cost per value head:
 * KDA's (GDN runs none: 0). */
static void test_len_bwd(void **state)
{
	(void)state;
	const int64_t g = 0, k = LA_BWD_WY_KDA;
	/* GDN 2/8 (16 units): whole walks 128 chunks; 5 segments of 26 (measured best of 26, 32,
	 * 43 at 1x8192), 4 of 103 at 1x32768 (of 103, 128, 171) */
	assert_int_equal(la_segment_len_bwd(SMS, 16, 8 * g, 8192, 1, 0, LA_OPT_AUTO), 26);
	assert_int_equal(la_segment_len_bwd(SMS, 16, 8 * g, 32768, 1, 0, LA_OPT_AUTO), 103);
	/* GDN 4/16 (32 units): 3 segments of 43 and 171 (measured better than whole walks) */
	assert_int_equal(la_segment_len_bwd(SMS, 32, 16 * g, 8192, 1, 0, LA_OPT_AUTO), 43);
	assert_int_equal(la_segment_len_bwd(SMS, 32, 16 * g, 32768, 1, 0, LA_OPT_AUTO), 171);
	/* KDA 16/16 (32 units): recomputing, with no kda_bwd_wy beside the walks, 3 segments of
	 * 43 as GDN 4/16; over a kept forward workspace kda_bwd_wy's SM time keeps them whole */
	assert_int_equal(la_segment_len_bwd(SMS, 32, 16 * k, 8192, 1, 0, LA_OPT_AUTO), 0);
	/* KDA 8/8: kda_bwd_wy beside the walks; 5 segments of 26 (measured best of 64, 43, 32,
	 * 26, 22 at 1x8192); KDA 16/32, GDN 16/32 and 2/8 8192x4: the walks fill the SMs */
	assert_int_equal(la_segment_len_bwd(SMS, 16, 8 * k, 8192, 1, 0, LA_OPT_AUTO), 26);
	assert_int_equal(la_segment_len_bwd(SMS, 16, 8 * k, 32768, 1, 0, LA_OPT_AUTO), 103);
	assert_int_equal(la_segment_len_bwd(SMS, 64, 32 * k, 8192, 1, 0, LA_OPT_AUTO), 0);
	assert_int_equal(la_segment_len_bwd(SMS, 64, 32 * g, 8192, 1, 0, LA_OPT_AUTO), 0);
	assert_int_equal(la_segment_len_bwd(SMS, 16, 8 * g, 32768, 4, 0, LA_OPT_AUTO), 0);
	/* lengths unknown or unequal: whole */
	assert_int_equal(la_segment_len_bwd(SMS, 16, 8 * g, 32768, 2, 1, LA_OPT_AUTO), 0);
	/* overrides: below the batch's chunks, else whole; OFF whole */
	assert_int_equal(la_segment_len_bwd(SMS, 64, 32 * g, 8192, 1, 0, 3), 3);
	assert_int_equal(la_segment_len_bwd(SMS, 16, 8 * g, 8192, 2, 1, 1), 1);
	assert_int_equal(la_segment_len_bwd(SMS, 16, 8 * g, 8192, 1, 0, 128), 0);
	assert_int_equal(la_segment_len_bwd(SMS, 16, 8 * g, 8192, 1, 0, LA_OPT_OFF), 0);
	assert_int_equal(la_segment_len_bwd(SMS, 16, 8 * g, 0, 1, 0, 3), 0);
	/* the result against the definition on a sweep of shapes */
	for (int64_t units = 1; units <= 256; units *= 2)
		for (int64_t tokens = 64; tokens <= (1 << 20); tokens *= 4)
			for (int64_t n = 1; n <= 4; n *= 2) {
				int64_t wy = (units / 2 + 1) * (units % 4 == 0 ? k : g);
				int32_t got = la_segment_len_bwd(SMS, units, wy, tokens, n, 0, LA_OPT_AUTO);
				int64_t per = (tokens / n + 63) / 64;
				assert_true(got == 0 || (got >= LA_CP_MIN_LEN && got < per));
				if (got > 0)
					assert_true(la_bwd_walks_cost(SMS, units, n, per, got, wy) <
						    LA_CHAINED_GAIN *
							    la_bwd_walks_cost(SMS, units, n, per, 0, wy));
			}
}

static void test_len_chained(void **state)
{
	(void)state;
	/* one length: 8/8 1x32768 (16 units) in 9 segments of 57 (cost 127), not 8 of 64 (140);
	 * 1x8192 in 9 of 15 (43; 8 of 16: 44); 8192x4 in 3 of 43 (93 against 128 whole); 16/16
	 * 1x32768 in 5 of 103 */
	assert_int_equal(chained(SMS, 16, 32768, 1, 0, LA_OPT_AUTO), 57);
	assert_int_equal(chained(SMS, 16, 8192, 1, 0, LA_OPT_AUTO), 15);
	assert_int_equal(chained(SMS, 16, 32768, 4, 0, LA_OPT_AUTO), 43);
	assert_int_equal(chained(SMS, 32, 32768, 1, 0, LA_OPT_AUTO), 103);
	assert_int_equal(chained(SMS, 16, 32768, 1, 1, LA_OPT_AUTO), 57);  /* cu, one sequence */
	/* whole where segments only add waves: 64/64 (128 units), 16/16 8192x4, 8/8 8192x8 */
	assert_int_equal(chained(SMS, 128, 32768, 1, 0, LA_OPT_AUTO), 0);
	assert_int_equal(chained(SMS, 32, 32768, 4, 0, LA_OPT_AUTO), 0);
	assert_int_equal(chained(SMS, 16, 65536, 8, 0, LA_OPT_AUTO), 0);
	/* the margin: 18 chunks at 2 units cost 17 in 5 segments of 4, against 18 whole: not
	 * below 0.85 x 18, so whole */
	assert_int_equal(la_chained_cost(SMS, 2, 1, 18, 4), 17);
	assert_int_equal(chained(SMS, 2, 18 * 64, 1, 0, LA_OPT_AUTO), 0);
	/* unknown lengths: the 3x condition (44 x 3 = 132 may cut, 45 not; two sequences at 22
	 * units the same), then 1/8 of the batch's chunks */
	assert_int_equal(chained(SMS, 16, 32768, 4, 1, LA_OPT_AUTO), 0);   /* 192 > 132 */
	assert_int_equal(chained(SMS, 16, 32768, 2, 1, LA_OPT_AUTO), 64);  /* 28672+4096 */
	assert_int_equal(chained(SMS, 16, 8192, 2, 1, LA_OPT_AUTO), 16);   /* 1024+7168 */
	assert_int_equal(chained(SMS, 22, 65536, 2, 1, LA_OPT_AUTO), 128);
	assert_int_equal(chained(SMS, 22, 65536, 3, 1, LA_OPT_AUTO), 0);
	assert_int_equal(chained(SMS, 23, 65536, 2, 1, LA_OPT_AUTO), 0);
	/* the other devices: 8/8 1x8192 in 9 segments of 16 on 114 SMs, 5 of 26 on 78 */
	assert_int_equal(chained(114, 16, 8192, 1, 0, LA_OPT_AUTO), 16);
	assert_int_equal(chained(78, 16, 8192, 1, 0, LA_OPT_AUTO), 26);
	assert_int_equal(chained(78, 16, 32768, 2, 1, LA_OPT_AUTO), 0);    /* 96 > 78 */
	/* no l2norm condition: where la_segment_len without it cuts nothing, this one cuts */
	assert_int_equal(la_segment_len(SMS, 16, 8192, 2, 1, 0, LA_OPT_AUTO), 0);
	assert_int_equal(chained(SMS, 16, 8192, 2, 1, LA_OPT_AUTO),
			 la_segment_len(SMS, 16, 8192, 2, 1, 1, LA_OPT_AUTO));
	/* too few chunks, or none */
	assert_int_equal(chained(SMS, 2, 200, 1, 0, LA_OPT_AUTO), 0);     /* 4 chunks */
	assert_int_equal(chained(SMS, 16, 0, 1, 0, LA_OPT_AUTO), 0);
	assert_int_equal(chained(SMS, 16, 0, 2, 1, LA_OPT_AUTO), 0);
	/* forced lengths, whatever the rule; OFF, lengths not below the batch's chunks and
	 * other values: none */
	assert_int_equal(chained(SMS, 128, 32768, 1, 0, 8), 8);
	assert_int_equal(chained(SMS, 128, 32768, 4, 1, 1), 1);
	assert_int_equal(chained(SMS, 16, 8192, 1, 0, 2), 2);
	assert_int_equal(chained(SMS, 16, 8192, 1, 0, 7), 7);
	assert_int_equal(chained(SMS, 16, 8192, 1, 0, 127), 127);
	assert_int_equal(chained(SMS, 16, 8192, 1, 0, 128), 0);
	assert_int_equal(chained(SMS, 16, 8192, 1, 0, LA_OPT_OFF), 0);
	assert_int_equal(chained(SMS, 16, 8192, 1, 0, -3), 0);
	assert_int_equal(chained(SMS, 16, 64, 1, 0, 1), 0);               /* one chunk */
	assert_int_equal(chained(SMS, 16, 0, 1, 0, 4), 0);
	/* the rule against its definition, over devices, units, batches and overrides */
	static const int sms[] = {132, 114, 78, 1};
	static const int ovr[] = {LA_OPT_AUTO, LA_OPT_OFF, 1, 4, 7, 100, 1000, -3};
	for (size_t si = 0; si < sizeof sms / sizeof sms[0]; si++)
		for (int64_t units = 1; units <= 256; units *= 2)
			for (int64_t tokens = 0; tokens < 70000; tokens += 4999)
				for (int v = 0; v < 8 * 2 * 8; v++) /* N, has_cu, override */
					check_chained_rule(sms[si], units, tokens, 1 + v % 8,
							   v / 8 % 2, ovr[v / 16]);
}

/* The chained path over known, unequal lengths: la_chained_known_cost replays part 1 beside
 * the maps on two slots per SM, the chain and part 2; a length only below
 * LA_CHAINED_KNOWN_GAIN of whole sequences' replay. */
static void test_len_chained_known(void **state)
{
	(void)state;
	int32_t long_short[] = {0, 28672, 32768}, short_long[] = {0, 1024, 8192};
	int64_t chunks[] = {448, 64};
	/* 32 units (GDN 4/16, KDA 16/16), 28672+4096: whole, the long sequence's 448 chunks (and
	 * a CTA's prologue); 4 segments of 112: part 1 (64 CTAs of 65 and 113 chunks, 128 of the
	 * 264 slots) beside the maps of 2 segments (128 CTAs on the other 136 slots), 113; 4
	 * chain steps, 4 for the launches; part 2's 96 CTAs in one wave, 113. 5 segments of 90:
	 * 192 maps, 136 of them at once, the rest from 65 (the short sequence's part 1 ended),
	 * 65 + 91; the maps and part 1 no longer replayed as if each had the machine */
	assert_int_equal(la_dispatch(SMS, 32, chunks, 2, 0), 449);
	assert_int_equal(la_chained_known_cost(SMS, 32, chunks, 2, 112), 113 + 4 + 4 + 113);
	assert_int_equal(la_chained_known_cost(SMS, 32, chunks, 2, 90), 65 + 91 + 5 + 4 + 91);
	assert_int_equal(la_segment_len_chained_known(SMS, 32, long_short, 2, 32768), 112);
	assert_int_equal(la_segment_len_chained_known(SMS, 32, short_long, 2, 8192), 28);
	/* as one length would: 8/8 (16 units) like 1x32768's 57, 16/32 (64) like its 171 */
	assert_int_equal(la_segment_len_chained_known(SMS, 16, long_short, 2, 32768), 56);
	assert_int_equal(la_segment_len_chained_known(SMS, 64, long_short, 2, 32768), 150);
	assert_int_equal(la_segment_len_chained_known(SMS, 64, short_long, 2, 8192), 38);
	/* whole where the work fills the machine: 128 units (GDN 16/64, KDA 64/64) */
	assert_int_equal(la_segment_len_chained_known(SMS, 128, long_short, 2, 32768), 0);
	assert_int_equal(la_segment_len_chained_known(SMS, 128, short_long, 2, 8192), 0);
	/* empty sequences, offsets past the tokens or going back: some length, never a crash */
	int32_t empties[] = {0, 0, 20000, 20000, 20000};
	int32_t len = la_segment_len_chained_known(SMS, 16, empties, 4, 20000);
	assert_true(len > 0 && len < 313);
	int32_t garbage[] = {0, 50000, 100, -7};
	len = la_segment_len_chained_known(SMS, 16, garbage, 3, 8192);
	assert_true(len >= 0 && len < 128);
	/* no tokens, no units, too many sequences for the replay: whole */
	assert_int_equal(la_segment_len_chained_known(SMS, 16, long_short, 2, 0), 0);
	assert_int_equal(la_segment_len_chained_known(SMS, 0, long_short, 2, 32768), 0);
	int32_t many[LA_CP_KNOWN_MAX + 2];
	for (int i = 0; i < LA_CP_KNOWN_MAX + 2; i++)
		many[i] = 6400 * i;
	assert_int_equal(la_segment_len_chained_known(SMS, 16, many, LA_CP_KNOWN_MAX + 1,
						      6400 * (LA_CP_KNOWN_MAX + 1)), 0);
	/* over devices, units and random batches: 0 or a length below the longest sequence's
	 * chunks whose replayed cost is below the margin of whole sequences' */
	static const int sms[] = {132, 114, 78, 1};
	unsigned seed = 7;
	for (int trial = 0; trial < 400; trial++) {
		int32_t cu[9] = {0};
		int nseq = 2 + trial % 7;
		for (int n = 0; n < nseq; n++)
			cu[n + 1] = cu[n] + (int32_t)(rand_r(&seed) % 20000);
		int64_t units = 1 << (trial % 8), c[8];
		int s = sms[trial % 4];
		int64_t longest = la_seq_chunks(cu, nseq, cu[nseq], c);
		len = la_segment_len_chained_known(s, units, cu, nseq, cu[nseq]);
		if (len == 0)
			continue;
		assert_true(len >= LA_CP_MIN_LEN && len < longest);
		int64_t whole = la_dispatch(s, units, c, nseq, 0);
		assert_true((double)la_chained_known_cost(s, units, c, nseq, len) <
			    LA_CHAINED_KNOWN_GAIN * (double)whole);
	}
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

/* chunk_prep's CB: written only where a warmup reads it (chunk_recur's segments, with chunk
 * states); whole sequences, the chained path and the split pass 0 */
static void test_prep_needs_cb(void **state)
{
	(void)state;
	assert_false(la_prep_needs_cb(0));
	assert_true(la_prep_needs_cb(1));
	assert_true(la_prep_needs_cb(2));
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
		cmocka_unit_test(test_chained_by_hand),
		cmocka_unit_test(test_edges),
		cmocka_unit_test(test_len_one_length),
		cmocka_unit_test(test_len_varlen),
		cmocka_unit_test(test_len_off_and_override),
		cmocka_unit_test(test_dispatch),
		cmocka_unit_test(test_len_known),
		cmocka_unit_test(test_chained_cost),
		cmocka_unit_test(test_len_chained),
		cmocka_unit_test(test_len_chained_known),
		cmocka_unit_test(test_bwd_walks_cost),
		cmocka_unit_test(test_len_bwd),
		cmocka_unit_test(test_use_wide),
		cmocka_unit_test(test_split_len),
		cmocka_unit_test(test_first_len),
		cmocka_unit_test(test_use_kkt2),
		cmocka_unit_test(test_prep_needs_cb),
		cmocka_unit_test(test_use_prep_nocb),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
