/*
 * la_segments.h: the segment length of context parallelism (gdn_fused, chunk_recur), a pure
 * function of the call's shape so that tests/la/test_la_segments.c can check the rule;
 * la_plan.c calls it with the device's SM count and the handle's options. The chained path's
 * rules (la_segment_len_chained, and la_segment_len_chained_known for unequal lengths the host
 * knows, below) build on it; la_first_len_chained lengthens that path's first segment.
 *
 * One CTA runs one segment: HV x D/64 CTAs ("units") per segment slot, one CTA per SM.
 * - Sequences of one length (no cu_seqlens, one sequence, or a host copy of cu_seqlens whose
 *   lengths are equal): each sequence in s segments of L = cdiv(chunks, s), the s with the
 *   least waves x (L + LA_CP_WARM) (a CTA's chunks, a warmup's included), counting waves of
 *   units x N x s CTAs, one per SM; s = 1 is whole sequences. (The earlier rule, one
 *   wave's worth of the batch's chunks, cut GDN 8/24 8192x4 into 2 waves of whole
 *   sequences: 0.457 -> 0.579 ms against 3 waves of halves.)
 * - A host copy of cu_seqlens with unequal lengths (at most LA_CP_KNOWN_MAX sequences): the
 *   length whose replay of the CTA scheduler's dispatch ends first (la_segment_len_known).
 * - cu_seqlens with several sequences and no host copy (or more than LA_CP_KNOWN_MAX): the
 *   host does not read their lengths, so a long sequence beside short ones would run alone
 *   for most of the call. Segments of at most 1/8
 *   of the batch's chunks let the CTA scheduler balance the waves (measured on the H200,
 *   measured: GDN 8/32 28672+4096 1.21 -> 0.96 ms, 1024+7168 0.346 -> 0.285; equal
 *   sequences pay 1-2% for the extra warmups). With many units this also cuts a batch that
 *   would run whole.
 * Segments are at least 4 chunks, so that a warmup chunk stays a small share, and shorter
 * than the batch (else 0: whole sequences). Needs the in-kernel l2norm (the warmup's bound
 * assumes |k| <= 1). An override (tile_la_options' gdn_segments / kda_segments): LA_OPT_AUTO
 * keeps the rule, n > 0 forces segments of n chunks (tests, tuning), and anything else (or n
 * not below the batch's chunks) means whole sequences.
 */
#ifndef LA_SEGMENTS_H
#define LA_SEGMENTS_H

#include <stdbool.h>
#include <stdint.h>

enum {
	LA_CHUNK = 64, LA_CP_MIN_LEN = 4, LA_CP_SPLITS_VARLEN = 8, LA_CP_WARM = 2,
	LA_CP_KNOWN_MAX = 64
};

/* An option's value (tile_la.h's TILE_LA_AUTO, TILE_LA_ON, TILE_LA_OFF): AUTO lets the rule
 * decide; counts (segments, split) take n > 0 to force n. */
enum { LA_OPT_AUTO = 0, LA_OPT_ON = 1, LA_OPT_OFF = -1 };

/* ceil(a / b) for a >= 0, b > 0 */
static inline int64_t la_cdiv(int64_t a, int64_t b)
{
	return (a + b - 1) / b;
}

/* Sequences of one length (the batch's `tokens` over `nseq` of them): the segment length of
 * the fewest waves x (L + LA_CP_WARM), or 0 when whole sequences are best (see the top). */
static inline int32_t la_segment_len_equal(int sm_count, int64_t units, int64_t tokens,
					   int64_t nseq)
{
	int64_t per_seq = ((nseq > 0 ? tokens / nseq : tokens) + LA_CHUNK - 1) / LA_CHUNK;
	int64_t best_len = 0, best_cost = 0;
	if (units <= 0 || sm_count <= 0)
		return 0;
	for (int64_t s = 1; s <= 1024; s++) {
		int64_t len = (per_seq + s - 1) / s;
		if (s > 1 && (len < LA_CP_MIN_LEN || len >= per_seq))
			break;
		int64_t segs = (per_seq + len - 1) / len;
		int64_t waves = (units * nseq * segs + sm_count - 1) / sm_count;
		int64_t cost = waves * (len + (s > 1 ? LA_CP_WARM : 0));
		if (s == 1 || cost < best_cost)
			best_cost = cost, best_len = s == 1 ? 0 : len;
	}
	return (int32_t)best_len;
}

/*
 * Sequences of known, unequal lengths (a host copy of cu_seqlens, at most LA_CP_KNOWN_MAX of
 * them). The kernels number their CTAs sequence (or segment slot) first, so the CTA scheduler
 * dispatches each segment's `units` CTAs together, in order, each to the SM that frees first.
 * la_dispatch replays that for one segment length and returns when the last CTA ends (in
 * chunks: a CTA costs its chunks, its warmup's LA_CP_WARM if it has one, and LA_CP_CTA for
 * its prologue and states); la_segment_len_known keeps the length with the earliest end
 * among whole sequences, cdiv(longest, s) for s = 2 .. LA_CP_KNOWN_SPLITS and the powers of
 * two. Unlike max(longest CTA, work / SMs), the replay sees wave quantization (measured:
 * that model cut GDN 8/24 28672+4096 into 192 CTAs of 150 chunks, two waves on 132 SMs, and
 * took 0.45 -> 0.64 ms).
 */
typedef struct {
	int64_t t, n;   /* n SMs free from time t on */
} la_sm_group;

enum { LA_CP_KNOWN_SPLITS = 32, LA_CP_KNOWN_BATCHES = 256, LA_CP_CTA = 1, LA_SM_GROUPS = 512 };

/* Dispatches `count` CTAs of `cost` chunks onto the earliest free SMs (g: groups sorted by
 * time, *ng of them); 0, or -1 when the groups would overflow. */
static inline int la_dispatch_batch(la_sm_group *g, int *ng, int64_t count, int64_t cost)
{
	la_sm_group taken[LA_SM_GROUPS], rest[LA_SM_GROUPS];
	int nt = 0, nr = 0, i = 0;
	while (count > 0) {
		nt = nr = 0;
		for (i = 0; i < *ng && count > 0; i++) {   /* the earliest SMs, up to count */
			int64_t k = g[i].n < count ? g[i].n : count;
			taken[nt++] = (la_sm_group){g[i].t + cost, k};
			count -= k;
			if (k < g[i].n)
				rest[nr++] = (la_sm_group){g[i].t, g[i].n - k};
		}
		for (; i < *ng; i++)
			rest[nr++] = g[i];
		if (nt + nr > LA_SM_GROUPS)
			return -1;
		int a = 0, b = 0, n = 0;   /* merge the two sorted lists, equal times coalesced */
		while (a < nt || b < nr) {
			la_sm_group x = b >= nr || (a < nt && taken[a].t <= rest[b].t) ? taken[a++] :
										      rest[b++];
			if (n > 0 && g[n - 1].t == x.t)
				g[n - 1].n += x.n;
			else
				g[n++] = x;
		}
		*ng = n;
	}
	return 0;
}

/* Each sequence's chunks from cu (offsets clamped to [0, tokens] and made non-decreasing:
 * any values give some schedule); returns the longest. */
static inline int64_t la_seq_chunks(const int32_t *cu, int64_t nseq, int64_t tokens,
				    int64_t *chunks)
{
	int64_t longest = 0, prev = 0;
	for (int64_t n = 0; n < nseq; n++) {
		int64_t b = cu[n] < prev ? prev : cu[n] > tokens ? tokens : cu[n];
		int64_t e = cu[n + 1] < b ? b : cu[n + 1] > tokens ? tokens : cu[n + 1];
		chunks[n] = (e - b + LA_CHUNK - 1) / LA_CHUNK;
		longest = chunks[n] > longest ? chunks[n] : longest;
		prev = e;
	}
	return longest;
}

/* When the last CTA ends (in chunks) with segments of len chunks (0: whole sequences), or
 * -1 when the replay does not fit its bounds. */
static inline int64_t la_dispatch(int sm_count, int64_t units, const int64_t *chunks,
				  int64_t nseq, int64_t len)
{
	la_sm_group g[LA_SM_GROUPS] = {{0, sm_count}};
	int ng = 1;
	for (int64_t n = 0; n < nseq; n++) {
		int64_t c = chunks[n];
		for (int64_t c0 = 0; c0 < c; c0 += len > 0 ? len : c) {
			int64_t run = len > 0 && c - c0 > len ? len : c - c0;
			int64_t cost = run + (c0 > 0 ? LA_CP_WARM : 0) + LA_CP_CTA;
			if (la_dispatch_batch(g, &ng, units, cost) != 0)
				return -1;
		}
	}
	return g[ng - 1].t;
}

/* The candidates' replays cost O(segments x SMs) each: lengths that would cut the batch
 * into more than LA_CP_KNOWN_BATCHES segments are not tried (a few ms of host time per call
 * otherwise, with 64 sequences; about 0.06 ms now). */
static inline int32_t la_segment_len_known(int sm_count, int64_t units, const int32_t *cu,
					   int64_t nseq, int64_t tokens)
{
	int64_t chunks[LA_CP_KNOWN_MAX];
	if (units <= 0 || sm_count <= 0 || nseq <= 0 || nseq > LA_CP_KNOWN_MAX)
		return 0;
	int64_t longest = la_seq_chunks(cu, nseq, tokens, chunks);
	int64_t best_len = 0, best_end = la_dispatch(sm_count, units, chunks, nseq, 0);
	for (int64_t i = 2; i <= LA_CP_KNOWN_SPLITS + 16; i++) {
		/* cdiv(longest, i) first, then 4, 8, 16, ... */
		int64_t len = i <= LA_CP_KNOWN_SPLITS ? (longest + i - 1) / i :
			      (int64_t)LA_CP_MIN_LEN << (i - LA_CP_KNOWN_SPLITS - 1);
		int64_t segs = 0;
		if (len < LA_CP_MIN_LEN || len >= longest)
			continue;
		for (int64_t n = 0; n < nseq; n++)
			segs += (chunks[n] + len - 1) / len;
		if (segs > LA_CP_KNOWN_BATCHES)
			continue;
		int64_t end = la_dispatch(sm_count, units, chunks, nseq, len);
		if (end >= 0 && (best_end < 0 || end < best_end))
			best_end = end, best_len = len;
	}
	return (int32_t)best_len;
}

/* Segment length in chunks, or 0 for whole sequences. `units` = HV x D/64; `override` the
 * option (LA_OPT_AUTO: the rule). */
static inline int32_t la_segment_len(int sm_count, int64_t units, int64_t tokens, int64_t nseq,
				     int has_cu, int l2norm, int override)
{
	int64_t chunks = (tokens + LA_CHUNK - 1) / LA_CHUNK, len;
	int64_t splits = units > 0 ? sm_count / units : 0;
	if (tokens <= 0 || !l2norm)
		return 0;
	if (override != LA_OPT_AUTO)
		return override > 0 && override < chunks ? (int32_t)override : 0;
	if (!(has_cu && nseq > 1))
		return la_segment_len_equal(sm_count, units, tokens, nseq);
	if (splits < LA_CP_SPLITS_VARLEN)
		splits = LA_CP_SPLITS_VARLEN;
	len = (chunks + splits - 1) / splits;
	if (len < LA_CP_MIN_LEN)
		len = LA_CP_MIN_LEN;
	return len < chunks ? (int32_t)len : 0;
}

/*
 * The chained path's segment length (GDN, and KDA without chunk states): every segment after
 * a sequence's first starts from its exact start, chained from the transfer maps of the
 * segments before it (kernels/README.md), whatever the gates. Its cost in chunks of the
 * recurrence (la_chained_cost): part 1 (each sequence's first segment, one CTA per SM) with the
 * maps of segments 1 .. S - 2 beside it (two map CTAs per SM, each about as long as a segment),
 * then part 2 (segments 1 .. S - 1) in its waves, plus a chain step per segment and
 * LA_CHAINED_LAUNCHES for the three extra launches. So S - 1 segments may fill part 2's wave:
 * GDN 2/8 1x32768 takes 9 segments of 57 chunks (16 x 8 = 128 CTAs), not 8 of 64.
 * Sequences of one length take the S of least cost when it is below LA_CHAINED_GAIN of whole
 * sequences' (the model's margin); unknown lengths take la_segment_len's (with no l2norm
 * requirement: nothing is bounded) while whole sequences would leave two thirds of the SMs
 * idle, units x N x 3 <= sm_count, the rule measured before the model (H200, KDA's
 * lower-bound gate, whose warmups always failed, 8/8: 1x32768 1.03 -> 0.33 ms with segments;
 * 8192x4 0.24 ms whole against 0.31 with them). The override forces segments.
 */
enum { LA_CHAIN_STEP = 1, LA_CHAINED_LAUNCHES = 4, LA_CHAINED_MAX_SEGS = 64 };
#define LA_CHAINED_GAIN 0.85
#define LA_CHAINED_KNOWN_GAIN 0.95

/* The chained path's cost in recurrence chunks for N sequences of `chunks` chunks cut into
 * segments of `len` (whole sequences when len >= chunks). */
static inline int64_t la_chained_cost(int sm_count, int64_t units, int64_t nseq, int64_t chunks,
				      int64_t len)
{
	int64_t ctas = units * nseq, segs = la_cdiv(chunks, len);
	if (segs <= 1)
		return chunks * la_cdiv(ctas, sm_count);
	int64_t w1 = la_cdiv(ctas, sm_count);
	int64_t wm = la_cdiv(2 * ctas * (segs - 1), 2 * (int64_t)sm_count); /* part 1 + the maps */
	int64_t w2 = la_cdiv(ctas * (segs - 1), sm_count);
	return len * ((w1 > wm ? w1 : wm) + w2) + segs * LA_CHAIN_STEP + LA_CHAINED_LAUNCHES;
}

static inline int32_t la_segment_len_chained(int sm_count, int64_t units, int64_t tokens,
					     int64_t nseq, int has_cu, int override)
{
	int64_t chunks = la_cdiv(tokens, LA_CHUNK);
	if (tokens <= 0 || units <= 0 || sm_count <= 0 || nseq <= 0)
		return 0;
	if (override != LA_OPT_AUTO)
		return override > 0 && override < chunks ? (int32_t)override : 0;
	if (has_cu && nseq > 1) {
		if (units * nseq * 3 > sm_count)
			return 0;
		return la_segment_len(sm_count, units, tokens, nseq, has_cu, 1, override);
	}
	int64_t per_seq = la_cdiv(la_cdiv(tokens, nseq), LA_CHUNK);
	int64_t whole = la_chained_cost(sm_count, units, nseq, per_seq, per_seq);
	int64_t best_len = 0, best_cost = whole;
	for (int64_t s = 2; s <= LA_CHAINED_MAX_SEGS; s++) {
		int64_t len = la_cdiv(per_seq, s);
		if (len < LA_CP_MIN_LEN)
			break;
		int64_t cost = la_chained_cost(sm_count, units, nseq, per_seq, len);
		if (cost < best_cost)
			best_cost = cost, best_len = len;
	}
	if ((double)best_cost >= LA_CHAINED_GAIN * (double)whole)
		return 0;
	return (int32_t)best_len;
}

/*
 * The chained path's first segment (sequences of one length, `chunks` each, cut by
 * la_segment_len_chained into S = cdiv(chunks, len) segments): part 1 runs segment 0 beside
 * the maps of segments 1 .. S - 2, and a map CTA, two to an SM beside another, takes about
 * LA_MAP_RATE of part 1's time a chunk (H200, slow gates, maps against part 1 over equal
 * segments: GDN 8/24 and 32/32 1x8192 1.13 and 1.18, 4/16 1x32768 1.05-1.20, KDA 8/8 1x32768
 * 1.09). So segment 0 is lengthened and the others shortened until both end together
 * (measured -0.5% to -1.9% of the call where S = 3, docs/performance.md):
 * len' = cdiv(chunks, S - 1 + LA_MAP_RATE), first = chunks - (S - 1) len', the same S.
 * Only with maps beside part 1 (S >= 3) and both in one wave (la_chained_cost's w1 and wm),
 * where the model holds; else the equal length (*len unchanged, first = *len). Returns the
 * first segment's length and shortens *len; first >= *len always (the segment slots of
 * *len-chunk segments then bound every sequence's).
 */
enum { LA_MAP_RATE_NUM = 9, LA_MAP_RATE_DEN = 8 };

static inline int32_t la_first_len_chained(int sm_count, int64_t units, int64_t nseq,
					   int64_t chunks, int32_t *len)
{
	int64_t L = *len, ctas = units * nseq;
	if (L <= 0 || chunks <= 0 || units <= 0 || nseq <= 0 || sm_count <= 0)
		return *len;
	int64_t segs = la_cdiv(chunks, L);
	int64_t w1 = la_cdiv(ctas, sm_count), wm = la_cdiv(2 * ctas * (segs - 1), 2 * sm_count);
	if (segs < 3 || w1 != 1 || wm > 1)
		return *len;
	int64_t shorter = la_cdiv(LA_MAP_RATE_DEN * chunks,
				  LA_MAP_RATE_DEN * (segs - 1) + LA_MAP_RATE_NUM);
	int64_t first = chunks - (segs - 1) * shorter;
	if (shorter < LA_CP_MIN_LEN || first <= shorter ||
	    la_cdiv(chunks - first, shorter) != segs - 1)
		return *len;
	*len = (int32_t)shorter;
	return (int32_t)first;
}

/*
 * The chained path over sequences of known, unequal lengths (a host copy of cu_seqlens, at most
 * LA_CP_KNOWN_MAX of them), one segment length L for all, sequence n in S_n = cdiv(c_n, L)
 * segments: la_chained_cost's phases replayed on the CTA scheduler as la_dispatch does. Part 1
 * (each sequence's first segment, `units` CTAs each, one per SM) and the maps of segments 1 ..
 * S_n - 2 (2 units CTAs of about a segment each, two per SM) share the machine: both replay on
 * two slots per SM, a part-1 CTA holding both of its SM's. Then the chain (S_max steps, the
 * sequences side by side), the launches, and part 2 (segments 1 .. S_n - 1) from an idle
 * machine. Whole sequences take la_dispatch's replay. The length of least cost below
 * LA_CHAINED_KNOWN_GAIN of whole sequences', else 0: both sides replayed, a smaller margin than
 * la_chained_cost's (GDN 8/32 .. 32/32 at 1024+7168: predicted 0.90 of whole, measured 0.88 ..
 * 0.92). la_plan.c takes it where units x N x 3 > SMs, where the unknown lengths' rule cuts
 * nothing (H200, whole -> this rule, ms: GDN 4/16 28672+4096 0.935 -> 0.563, 1024+7168 0.243
 * -> 0.157 at 9d4873d's kernels; 8/32, 16/32, 8/24, 32/32 and KDA 16/16 -8% to -16%; KDA 16/32
 * +2-3%). Below it the 1/8 rule measured better on short
 * sequences (GDN 2/8 1024+7168: 0.103 against 0.111 ms in this rule's 13-chunk segments).
 * (Replayed on separate machines, part 1 and the maps had looked free beside each other: GDN
 * 4/16 took 90 and 23 chunks, 0.588 and 0.170 ms, and GDN 8/24 28672+4096's maps ran 1.3x
 * part 1's time.)
 */
static inline int64_t la_chained_known_cost(int sm_count, int64_t units, const int64_t *chunks,
					    int64_t nseq, int64_t len)
{
	la_sm_group slots[LA_SM_GROUPS] = {{0, 2 * sm_count}}, p2[LA_SM_GROUPS] = {{0, sm_count}};
	int ns = 1, n2 = 1;
	int64_t segs_max = 0;
	for (int64_t n = 0; n < nseq; n++) {   /* part 1's grid first: its CTAs dispatch first */
		int64_t c = chunks[n];
		if (c > 0 && la_dispatch_batch(slots, &ns, 2 * units,
					       (c < len ? c : len) + LA_CP_CTA) != 0)
			return -1;
	}
	for (int64_t n = 0; n < nseq; n++) {
		int64_t c = chunks[n], segs = (c + len - 1) / len;
		segs_max = segs > segs_max ? segs : segs_max;
		for (int64_t j = 1; j < segs; j++) {
			int64_t run = c - j * len < len ? c - j * len : len;
			if (j < segs - 1 &&
			    la_dispatch_batch(slots, &ns, 2 * units, len + LA_CP_CTA) != 0)
				return -1;
			if (la_dispatch_batch(p2, &n2, units, run + LA_CP_CTA) != 0)
				return -1;
		}
	}
	return slots[ns - 1].t + segs_max * LA_CHAIN_STEP + LA_CHAINED_LAUNCHES + p2[n2 - 1].t;
}

static inline int32_t la_segment_len_chained_known(int sm_count, int64_t units,
						   const int32_t *cu, int64_t nseq, int64_t tokens)
{
	int64_t chunks[LA_CP_KNOWN_MAX];
	if (units <= 0 || sm_count <= 0 || nseq <= 0 || nseq > LA_CP_KNOWN_MAX || tokens <= 0)
		return 0;
	int64_t longest = la_seq_chunks(cu, nseq, tokens, chunks);
	int64_t whole = la_dispatch(sm_count, units, chunks, nseq, 0);
	int64_t best_len = 0, best_cost = whole;
	for (int64_t s = 2; s <= LA_CHAINED_MAX_SEGS; s++) {
		int64_t len = (longest + s - 1) / s, segs = 0;
		if (len < LA_CP_MIN_LEN)
			break;
		for (int64_t n = 0; n < nseq; n++)
			segs += (chunks[n] + len - 1) / len;
		if (segs > LA_CP_KNOWN_BATCHES)
			break;
		int64_t cost = la_chained_known_cost(sm_count, units, chunks, nseq, len);
		if (cost >= 0 && (best_len == 0 || cost < best_cost))
			best_cost = cost, best_len = len;
	}
	if (best_len == 0 || whole < 0 ||
	    (double)best_cost >= LA_CHAINED_KNOWN_GAIN * (double)whole)
		return 0;
	return (int32_t)best_len;
}

/*
 * The backward's segment length (kda_bwd_recur's walks, both ops; kernels/README.md): its two
 * walks (S_c forward, dS_c backward) are 2 x units CTAs per sequence, one per SM, and (KDA
 * over a kept forward workspace) kda_bwd_wy's chunk-parallel setup runs beside them on the SMs
 * they leave. A model in
 * chunks of the walk: a plan takes the longer of its critical path and its SM time over the
 * SMs. Whole walks: C chunks, SM time 2 units N C. Segments of L (S of them): part 1 (both
 * end segments' walks, the backward offsets of the S - 2 between and their maps, two per SM,
 * 2 units N (S - 1) SM slots), the chains (LA_CHAIN_STEP a step) and part 2 (the other
 * segments' walks, 2 units N (S - 1) CTAs), each part L a wave; SM time 2 units N C plus
 * 2 units N L (S - 2) for the offsets and maps. KDA's kda_bwd_wy adds `wy_cost` walk chunks
 * of SM time per chunk of a sequence: LA_BWD_WY_KDA per value head, in walk chunks of ~2.1 us,
 * fitted to KDA 8/8 1x8192 (H200, slow gates, bwd ms at 8290ce1: whole 0.949, segments of 64
 * 0.968, 43 0.925, 32 0.905, 26 0.888, 22 0.935; 1x32768 whole 3.503, 43 3.262, 103 (the
 * rule's) 3.204); GDN's backward runs none (gdn_kkt_lo, before the walks, leaves its outputs),
 * nor does KDA's recompute (chunk_prep_bwd does), their cost 0.
 * GDN, bwd ms (H200, 9b5112d): 2/8 1x8192 whole 0.810, segments of 26 (the rule's) 0.668, 32
 * 0.687, 43 0.729; 1x32768 whole 3.077, 103 (the rule's) 2.502, 128 2.544, 171 2.716; 4/16
 * 1x8192 whole 1.304, 43 (the rule's) 1.247, 26 1.289; 1x32768 whole 4.988, 171 (the rule's)
 * 4.771, 103 4.872. Only sequences of one length (known on the host) are cut, below
 * LA_CHAINED_GAIN of whole walks; the override forces n-chunk segments.
 */
enum { LA_BWD_WY_KDA = 2 };

static inline int64_t la_bwd_walks_cost(int sm_count, int64_t units, int64_t nseq,
					int64_t chunks, int64_t len, int64_t wy_cost)
{
	int64_t walks = 2 * units * nseq, segs = len > 0 ? la_cdiv(chunks, len) : 1;
	int64_t wy = wy_cost * nseq * chunks;
	int64_t path, busy;
	if (segs <= 1) {
		path = chunks * la_cdiv(walks, sm_count);
		busy = walks * chunks;
	} else {
		int64_t waves = la_cdiv(walks * (segs - 1), sm_count);
		path = 2 * len * waves + segs * LA_CHAIN_STEP + LA_CHAINED_LAUNCHES;
		busy = walks * chunks + walks * len * (segs - 2);
	}
	int64_t spread = la_cdiv(busy + wy, sm_count);
	return path > spread ? path : spread;
}

static inline int32_t la_segment_len_bwd(int sm_count, int64_t units, int64_t wy_cost,
					 int64_t tokens, int64_t nseq, int unequal, int override)
{
	int64_t chunks = la_cdiv(tokens, LA_CHUNK);
	if (tokens <= 0 || units <= 0 || sm_count <= 0 || nseq <= 0)
		return 0;
	if (override != LA_OPT_AUTO)
		return override > 0 && override < chunks ? (int32_t)override : 0;
	if (unequal)
		return 0;
	int64_t per_seq = la_cdiv(la_cdiv(tokens, nseq), LA_CHUNK);
	int64_t whole = la_bwd_walks_cost(sm_count, units, nseq, per_seq, 0, wy_cost);
	int64_t best_len = 0, best_cost = whole;
	for (int64_t s = 2; s <= LA_CHAINED_MAX_SEGS; s++) {
		int64_t len = la_cdiv(per_seq, s);
		if (len < LA_CP_MIN_LEN)
			break;
		int64_t cost = la_bwd_walks_cost(sm_count, units, nseq, per_seq, len, wy_cost);
		if (cost < best_cost)
			best_cost = cost, best_len = len;
	}
	if ((double)best_cost >= LA_CHAINED_GAIN * (double)whole)
		return 0;
	return (int32_t)best_len;
}

/* An override of a yes/no rule (kda_wide, ...): LA_OPT_ON as 1, LA_OPT_OFF as 0, anything
 * else -1 (the rule decides). */
static inline int la_override01(int override)
{
	return override == LA_OPT_ON ? 1 : override == LA_OPT_OFF ? 0 : -1;
}

/* Whether chunk_prep must write CB, KDA's per-chunk bound on the state map: only warmups read
 * it (chunk_recur's segments, with chunk states). Whole sequences, the chained path (every
 * segment's start exact, from the transfer maps) and the split in time (its second part starts
 * from the first's end state) never do. Without it chunk_prep skips each token's channel
 * maximum and, at D = 128, fuses the gate's activation into the cumsum. */
static inline int la_prep_needs_cb(int warmups)
{
	return warmups != 0;
}

/* Whether KDA's chunk_prep runs as chunk_prep_nocb (CB_OUT = 0: no CB, the gate's activation
 * fused into the cumsum; built at D = 128 only): wherever nothing reads CB. H200,
 * against chunk_prep: the lower-bound gate at 8/8 8192x4 0.506 -> 0.484 ms (0.482 with
 * chunk_recur_t's decay off the chain), log-space gates given -0.7% to -2.2% on five
 * whole-sequence cells, +0.6% on one. `override`: kda_prep_nocb, LA_OPT_OFF keeps chunk_prep
 * (comparisons); a call that reads CB never takes it. */
static inline int la_use_prep_nocb(int32_t head_dim, int needs_cb, int override)
{
	if (head_dim != 128 || needs_cb)
		return 0;
	return la_override01(override) != 0;
}

/* Whether the backward's whole walks take their SLICES = 2 builds (gdn_bwd_walks_w,
 * kda_bwd_recur_w: both 64-wide value slices of a head in one CTA, reading the chunk's tiles
 * once for both) rather than a CTA per slice: at D = 128, when the walks' CTAs (two directions
 * x sequences x heads x 2) would be more than the SMs (la.c passes twice the heads).
 * Beyond one wave the walks are bound by their loads, which both slices share; in one wave the
 * chain sets the pace and two chains on one SM only share its tensor cores. `override`:
 * bwd_wide, LA_OPT_ON or LA_OPT_OFF forces the choice at D = 128 (comparisons, tests). */
static inline int la_use_wide(int sm_count, int32_t head_dim, int64_t nseq, int64_t heads,
			      int override)
{
	if (head_dim != 128)
		return 0;
	if (la_override01(override) >= 0)
		return la_override01(override);
	return nseq * heads * 2 > (int64_t)sm_count;
}

/* Whether KDA's forward runs whole sequences on chunk_recur_w (both value slices of a head in
 * one CTA, D = 128) rather than chunk_recur_t: only where the kda_wide option forces it
 * (LA_OPT_ON; comparisons, tests). chunk_recur_w once won beyond one wave of chunk_recur_t's
 * CTAs by loading each chunk once for both slices (H200: 16/32 8192x4 0.442 -> 0.377 ms);
 * chunk_recur_t with its producer warpgroup (issuing its loads as soon as a stage is free),
 * which chunk_recur_w has no registers for, runs as fast or faster on every such grid measured
 * (H200, slow gates, ms, chunk_recur_w -> chunk_recur_t: 16/32 1024x8 0.439 -> 0.435, 32/32
 * 0.443 -> 0.440, 64/64 0.863 -> 0.858, 16/16 0.238 -> 0.236; 16/32 8192x4 1.582 -> 1.576,
 * 32/32 1.595 -> 1.589). */
static inline int la_use_wide_forward(int32_t head_dim, int override)
{
	return head_dim == 128 && la_override01(override) == 1;
}

/* Whether GDN's chunk-parallel kernel runs gdn_kkt2 (two CTAs per SM, up to 255 registers)
 * rather than gdn_kkt (three, 168): while its `ctas` (slots x H) are at most
 * LA_KKT2_WAVES waves of two per SM. gdn_kkt's CTAs run longer (fewer registers, a barrier
 * more), which only its third CTA per SM over many waves repays. Measured (H200, slow gates,
 * the whole forward): gdn_kkt2 -11% at 272 CTAs (GDN 2/8 1024x8), -2.5% to -5% at 516-544,
 * equal at 258; gdn_kkt -2.5% to -4.5% at 1026-1088 (2/8 1x32768 and 8192x4, 8/24 and 8/32
 * 1x8192, 32/32 1x2048, 8/24 1024x8) and at 2064-2176 (16/64).
 * `override`: gdn_kkt_two_ctas, LA_OPT_ON or LA_OPT_OFF forces the choice. */
enum { LA_KKT2_WAVES = 3 };

static inline int la_use_kkt2(int sm_count, int64_t ctas, int override)
{
	if (la_override01(override) >= 0)
		return la_override01(override);
	return ctas <= LA_KKT2_WAVES * 2 * (int64_t)sm_count;
}

/*
 * The split in time, for whole sequences of one length on chunk_recur_t when its
 * CTAs (units x N, one per SM) leave at least half of the SMs idle: chunk_prep over each
 * sequence's first L chunks (all SMs), then chunk_recur_t over them (its part 1, the end state
 * to the workspace) beside chunk_prep over the other C - L chunks on the SMs it leaves, then
 * chunk_recur_t over those (part 3). Without it the recurrence runs after all of chunk_prep, on
 * units x N SMs. L is the smallest that hides the second chunk_prep under part 1: a larger L
 * only moves chunks from the recurrence's last phase (~1.4 us a chunk) to chunk_prep alone
 * (~3.0 us a chunk of every sequence and head at 8/8 8192x4). The second chunk_prep runs
 * cdiv(N heads (C - L), 2 (SMs - units N)) waves of two CTAs per free SM, each as long as
 * LA_SPLIT_PREP_CHUNKS recurrence chunks. Measured (chunk_recur_t in clusters of 2, so
 * that its SMs pair up in TPCs and chunk_prep's keep their instruction cache): the sweep at the
 * lower-bound gate's 8/8 8192x4 (ours, graph-timed, ms) L = 100 0.519, 104 0.528, 107 0.505,
 * 110 0.508, 113 0.517, 116 0.524: five waves hide under 107 chunks, six do not under 104, seven
 * not under 100, so a wave is 17.3 to 21.4 chunks; 20 is taken. (Before the
 * clusters: a CTA beside the recurrence took 42.9 us against 1.37 us a recurrence chunk, the best
 * L 112-116.) L is at least half of C (two segments per sequence: part 3 needs no chain) and less
 * than C; sequences of fewer than LA_SPLIT_MIN_CHUNKS chunks run whole, and so do calls whose
 * chunk_prep is one wave (at most two CTAs per SM: the split would only add launches). `units`
 * is the recurrence's CTAs per sequence, `heads` chunk_prep's per chunk. `override`
 * (kda_split): LA_OPT_AUTO keeps the rule, n > 0 forces L = n where the rule allows a split
 * (one wave or not) and n is a valid L, anything else turns it off.
 */
enum { LA_SPLIT_MIN_CHUNKS = 32, LA_SPLIT_MAX_CTAS = 128 };
#define LA_SPLIT_PREP_CHUNKS 20.0

/* Whether chunk_prep over the last C - L chunks, `slots` CTAs at a time, hides under part 1's L
 * chunks. */
static inline bool la_split_hides(int64_t heads_x_seqs, int64_t slots, int64_t chunks,
				  int64_t len)
{
	int64_t waves = (heads_x_seqs * (chunks - len) + slots - 1) / slots;
	return (double)waves * LA_SPLIT_PREP_CHUNKS <= (double)len;
}

static inline int32_t la_split_len(int sm_count, int64_t units, int64_t heads, int64_t nseq,
				   int64_t chunks, int override)
{
	int64_t ctas = units * nseq;
	if (units <= 0 || heads <= 0 || nseq <= 0 || chunks < LA_SPLIT_MIN_CHUNKS ||
	    ctas > LA_SPLIT_MAX_CTAS || 2 * ctas > (int64_t)sm_count)
		return 0;
	int64_t lo = (chunks + 1) / 2, len;
	if (override != LA_OPT_AUTO)
		return override >= lo && override < chunks ? (int32_t)override : 0;
	if (nseq * heads * chunks <= 2 * (int64_t)sm_count)
		return 0;   /* chunk_prep in one wave: nothing to hide, two launches more */
	/* From below: without the rounding up of the waves, (C - L) k <= L at L = C k / (1 + k);
	 * the rounding adds at most one wave, so at most LA_SPLIT_PREP_CHUNKS + 1 steps up. */
	int64_t slots = 2 * ((int64_t)sm_count - ctas);
	double k = (double)(nseq * heads) * LA_SPLIT_PREP_CHUNKS / (double)slots;
	len = (int64_t)((double)chunks * k / (1.0 + k));
	if (len < lo)
		len = lo;
	while (len < chunks - 1 && !la_split_hides(nseq * heads, slots, chunks, len))
		len++;
	if (len > chunks - 1)
		len = chunks - 1;
	return (int32_t)len;
}

/* The workspace's segment-start slots for the split (cdiv(N C, L) + N, at most 3 N with
 * L >= C / 2), kept for every call that the split may take on some GPU (whatever the SM
 * count and options, so that a forced split always fits); LA_SPLIT_MAX_CTAS bounds them: 3 N x HV x 64 KB at D = 128 with N x HV <=
 * 64, at most 12 MB. */
static inline int64_t la_split_slots(int64_t units, int64_t nseq, int64_t chunks)
{
	if (units <= 0 || nseq <= 0 || chunks < LA_SPLIT_MIN_CHUNKS ||
	    units * nseq > LA_SPLIT_MAX_CTAS)
		return 0;
	return 3 * nseq;
}

#endif
