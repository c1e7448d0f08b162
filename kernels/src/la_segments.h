/*
 * la_segments.h: the segment length of context parallelism (gdn_fused, chunk_recur), a pure
 * function of the call's shape so that tests/la/test_la_segments.c can check the rule; la.c
 * calls it with the device's SM count and the environment override.
 *
 * One CTA runs one segment: HV x D/64 CTAs ("units") per segment slot, one CTA per SM.
 * - Sequences of one length (no cu_seqlens, or one sequence): segments pay off when one
 *   segment slot would leave half of the SMs idle or more; the length aims at one wave of
 *   CTAs (the batch's chunks into sm_count / units segments).
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

enum { LA_CHUNK = 64, LA_CP_MIN_LEN = 4, LA_CP_SPLITS_VARLEN = 8 };

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
	if (has_cu && nseq > 1 && splits < LA_CP_SPLITS_VARLEN)
		splits = LA_CP_SPLITS_VARLEN;
	if (splits < 2)
		return 0;
	len = (chunks + splits - 1) / splits;
	if (len < LA_CP_MIN_LEN)
		len = LA_CP_MIN_LEN;
	return len < chunks ? (int32_t)len : 0;
}

#endif
