/*
 * la_segments.h: the segment length of context parallelism (gdn_fused, chunk_recur), a pure
 * function of the call's shape so that tests/la/test_la_segments.c can check the rule; la.c
 * calls it with the device's SM count and the environment override.
 *
 * One CTA runs one segment: HV x D/64 CTAs ("units") per segment slot, one CTA per SM.
 * - Sequences of one length (no cu_seqlens, one sequence, or a host copy of cu_seqlens whose
 *   lengths are equal): each sequence in s segments of L = cdiv(chunks, s), the s with the
 *   least waves x (L + LA_CP_WARM) (a CTA's chunks, a warmup's included), counting waves of
 *   units x N x s CTAs, one per SM; s = 1 is whole sequences. (Session 9: the old rule, one
 *   wave's worth of the batch's chunks, cut GDN 8/24 8192x4 into 2 waves of whole
 *   sequences: 0.457 -> 0.579 ms against 3 waves of halves.)
 * - cu_seqlens with several sequences: the host does not read their lengths, so a long
 *   sequence beside short ones would run alone for most of the call. Segments of at most 1/8
 *   of the batch's chunks let the CTA scheduler balance the waves (measured on the H200,
 *   session 7: GDN 8/32 28672+4096 1.21 -> 0.96 ms, 1024+7168 0.346 -> 0.285; equal
 *   sequences pay 1-2% for the extra warmups). With many units this also cuts a batch that
 *   would run whole.
 * Segments are at least 4 chunks, so that a warmup chunk stays a small share, and shorter
 * than the batch (else 0: whole sequences). Needs the in-kernel l2norm (the warmup's bound
 * assumes |k| <= 1). An override (TILE_LA_GDN_CP / TILE_LA_KDA_CP): "0" turns it off, "n"
 * forces segments of n chunks (tests, tuning); anything not a positive count below the
 * batch's chunks means whole sequences.
 */
#ifndef LA_SEGMENTS_H
#define LA_SEGMENTS_H

#include <stdint.h>
#include <stdlib.h>

enum {
	LA_CHUNK = 64, LA_CP_MIN_LEN = 4, LA_CP_SPLITS_VARLEN = 8, LA_CP_WARM = 2,
	LA_XFER_TOKENS = 512, LA_XFER_EXTRA = 16, LA_XFER_SMS = 132
};

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

/* Segment length in chunks, or 0 for whole sequences. `units` = HV x D/64; `override` is the
 * environment variable's value (NULL or "" when unset). */
static inline int32_t la_segment_len(int sm_count, int64_t units, int64_t tokens, int64_t nseq,
				     int has_cu, int l2norm, const char *override)
{
	int64_t chunks = (tokens + LA_CHUNK - 1) / LA_CHUNK, len;
	int64_t splits = units > 0 ? sm_count / units : 0;
	if (tokens <= 0 || !l2norm)
		return 0;
	if (override && override[0]) {
		len = strtol(override, NULL, 10);
		return len > 0 && len < chunks ? (int32_t)len : 0;
	}
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
 * KDA's segments whose warmup fails its bound (gates that barely decay: the lower-bound gate,
 * channels a dt_bias keeps near 0) run through their transfer maps (chunk_recur.tile): per
 * segment slot and value head a D x D f32 state and a D x D map (hi + lo in dtype), in the
 * workspace. Its size cannot depend on the device (the workspace query has no handle), so the
 * workspace holds a fixed number of segment slots, one per 512 tokens plus 16 (at D = 128 256
 * bytes per token and head beside chunk_prep's ~1.2 KB), and only for calls that a GPU of
 * LA_XFER_SMS SMs (H100 SXM, H200) would cut into segments. A call whose
 * segment slots (cdiv(T, 64 L) + N) do not fit lengthens its segments until they do
 * (la_fit_transfer); only with N > cdiv(T, 512) + 14 sequences may they never fit, and then
 * (or on a GPU that cuts a call the workspace has no slots for) the sequences with a failed
 * warmup rerun whole instead.
 */
static inline int64_t la_transfer_slots(int64_t units, int64_t tokens, int64_t nseq, int has_cu,
					int l2norm, const char *override)
{
	if (la_segment_len(LA_XFER_SMS, units, tokens, nseq, has_cu, l2norm, override) <= 0)
		return 0;
	return (tokens + LA_XFER_TOKENS - 1) / LA_XFER_TOKENS + LA_XFER_EXTRA;
}

/* The segment length KDA runs with: `seg_len` (la_segment_len's), lengthened until the
 * segment slots fit the transfer slots if they can; unchanged when they cannot or when
 * seg_len is 0. */
static inline int32_t la_fit_transfer(int32_t seg_len, int64_t tokens, int64_t nseq,
				      int64_t xfer_slots)
{
	int64_t chunks = (tokens + LA_CHUNK - 1) / LA_CHUNK;
	if (seg_len <= 0 || nseq + 2 > xfer_slots)
		return seg_len;
	for (int64_t len = seg_len; len < chunks; len++)
		if ((tokens + LA_CHUNK * len - 1) / (LA_CHUNK * len) + nseq <= xfer_slots)
			return (int32_t)len;
	return seg_len;
}

/*
 * When most warmups are expected to fail (KDA's lower-bound gate in kernel: channels whose
 * dt_bias keeps them near 0 never decay), segments cost about three times the recurrence's
 * work (the maps B_j and P_j, at D = V two value slices' worth, then the segment again), so
 * they pay only while whole sequences would leave two thirds of the SMs idle: units x N x 3
 * <= sm_count (measured on the H200, KDA 8/8: 1x32768 1.03 -> 0.33 ms with segments; 8192x4
 * 0.24 ms whole against 0.31 with them). The override still forces them.
 */
static inline int32_t la_segment_len_failing(int sm_count, int64_t units, int64_t tokens,
					     int64_t nseq, int has_cu, int l2norm,
					     const char *override)
{
	if (!(override && override[0]) && units * nseq * 3 > sm_count)
		return 0;
	return la_segment_len(sm_count, units, tokens, nseq, has_cu, l2norm, override);
}

/* Whether the segments whose warmup fails, in a call with `segs` segment slots, run through
 * transfer maps (1) or rerun their sequences whole (0). `override`: TILE_LA_KDA_XFER, "0"
 * forces the rerun (tests). */
static inline int la_transfer_off(const char *override)
{
	return override && override[0] == '0' && override[1] == 0;
}

static inline int la_use_transfer(int64_t segs, int64_t xfer_slots, const char *override)
{
	return !la_transfer_off(override) && segs > 0 && segs <= xfer_slots;
}

#endif
