/*
 * la_plan.c: la_plan_make, every scheduling decision of a GDN or KDA forward call (la_plan.h),
 * and the workspace layouts those decisions need. The top of la.c says what each schedule
 * runs; la_segments.h holds the rules and their measurements.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <string.h>

#include "la_plan.h"

enum { CHUNK = LA_CHUNK, WS_ALIGN = 256 };

_Static_assert((int)LA_OPT_AUTO == (int)TILE_LA_AUTO && (int)LA_OPT_ON == (int)TILE_LA_ON &&
		       (int)LA_OPT_OFF == (int)TILE_LA_OFF,
	       "la_segments.h's option values are tile_la.h's");

static const char *const kernel_names[LA_NKERNELS] = {
	"chunk_prep", "chunk_prep_nocb", "chunk_recur", "gdn_fused", "gdn_kkt",
	"chunk_recur_t", "chunk_recur_w", "chunk_map_t", "chunk_chain_t", "gdn_map_t",
	"kda_bwd_recur", "kda_bwd_chunk", "kda_bwd_finish",
	"kda_bwd_intra", "kda_bwd_wy", "gdn_bwd_chunk",
	"gdn_bwd_walks", "gdn_bwd_walks_w", "gdn_kkt_lo", "gdn_bwd_chunk_dqk", "chunk_prep_bwd",
	"kda_bwd_recur_w", "chunk_prep_froma", "gdn_kkt2", "chunk_prep_qgl", "chunk_prep_bwd_qgl"};

const char *la_kernel_name(la_kernel k)
{
	if (k == LA_K_PREP_NOCB || k == LA_K_PREP_BWD || k == LA_K_PREP_FROMA ||
	    k == LA_K_PREP_QGL || k == LA_K_PREP_BWD_QGL)
		return "chunk_prep";
	if (k == LA_K_GDN_WALKS || k == LA_K_GDN_WALKS_W || k == LA_K_BWD_RECUR_W)
		return "kda_bwd_recur";
	if (k == LA_K_KKT_LO || k == LA_K_KKT2)
		return "gdn_kkt";
	if (k == LA_K_GDN_BWD_CHUNK_DQK)
		return "gdn_bwd_chunk";
	return k >= 0 && k < LA_NKERNELS ? kernel_names[k] : "?";
}

const char *la_kernel_stem(la_kernel k)
{
	if (k == LA_K_BWD_FINISH || k == LA_K_BWD_WY)
		return "kda_bwd";
	return k >= 0 && k < LA_NKERNELS ? kernel_names[k] : "?";
}

/* ---- shapes ------------------------------------------------------------------------------ */


la_shapes la_shapes_of(const tile_la_fwd_args *a)
{
	la_shapes s;
	s.tokens = (int64_t)a->batch * a->seq_len;
	s.nseq = a->cu_seqlens ? a->num_seqs : a->batch;
	s.slots = la_cdiv(s.tokens, CHUNK) + s.nseq;
	s.es = 2;
	return s;
}

static size_t align_up(size_t x)
{
	return (x + WS_ALIGN - 1) / WS_ALIGN * WS_ALIGN;
}

/* Whether the segment rule must treat the batch as sequences of unknown, possibly unequal
 * lengths: cu_seqlens with several sequences and no host copy, or a host copy whose lengths
 * differ. (Only scheduling depends on it.) */
static int unequal_lengths(const tile_la_fwd_args *a)
{
	if (!a->cu_seqlens || a->num_seqs <= 1)
		return 0;
	if (!a->cu_seqlens_host)
		return 1;
	const int32_t *cu = a->cu_seqlens_host;
	int64_t len0 = (int64_t)cu[1] - cu[0]; /* (64 bits: any values, no overflow) */
	for (int n = 1; n < a->num_seqs; n++)
		if ((int64_t)cu[n + 1] - cu[n] != len0)
			return 1;
	return 0;
}

/* The chunks of each sequence when they are known on the host and one count for all (no
 * cu_seqlens, a host copy of equal lengths, or one sequence: at most cdiv(T, 64)), else 0.
 * A host copy whose sequences do not fit the tokens is not believed (0). */
static int64_t equal_seq_chunks(const tile_la_fwd_args *a, const la_shapes *s)
{
	if (unequal_lengths(a) || s->nseq <= 0 || s->tokens <= 0)
		return 0;
	if (!a->cu_seqlens)
		return la_cdiv(a->seq_len, CHUNK);
	if (!a->cu_seqlens_host)
		return la_cdiv(s->tokens, CHUNK); /* one sequence of unknown length */
	int64_t len = (int64_t)a->cu_seqlens_host[1] - a->cu_seqlens_host[0];
	if (len < 0 || len * s->nseq > s->tokens)
		return 0;
	return la_cdiv(len, CHUNK);
}

/* The row count of per-chunk-slot outputs (gdn_kkt's Gamma, beta and norms; chunk_prep's W,
 * U, QG, KG): 64 rows per chunk slot, so that each chunk's rows are its own (stored and
 * loaded as whole TMA boxes) and f32 boxes start 16-byte aligned (a box at an unaligned
 * inner coordinate is an illegal instruction). */
static size_t slot_rows(const la_shapes *s)
{
	return (size_t)s->slots * CHUNK; /* slots <= INT32_MAX / 64: see check_shapes */
}

/* Segment slots of `seg_len`-chunk segments (0 without segments): cdiv(T, 64 seg_len) + N
 * bounds every sequence's segments, as chunk slots do chunks. */
static int32_t segment_slots(const la_shapes *s, int32_t seg_len)
{
	if (seg_len <= 0)
		return 0;
	return (int32_t)(la_cdiv(s->tokens, (int64_t)CHUNK * seg_len) + s->nseq);
}

/* ---- workspace layouts ------------------------------------------------------------------- */

/* The KDA workspace: W, U, QG, KG [slot rows, HV, D] (chunk_prep stores whole TMA boxes; a
 * chunk's rows past its sequence are its own), with qg_lo QG's lo term (QG - QG rounded, for
 * the backward's dh0: chunk_prep_froma's, chunk_prep_bwd_qgl's, chunk_prep_qgl's) of the same
 * shape, and AQK [TT, HV, 64] in dtype;
 * DEC [slots, HV, D] f32; per chunk slot the state map's norm bound (f32 [HV, slots]); per
 * transfer slot (`xs`: the segment slots) a segment's state B_j (f32 [xbs, HV, D, D]; xbs >= xs
 * also holds the split's segment starts) and its map P_j as hi and lo terms in dtype ([xs D,
 * HV, D] each). Offsets in the order listed. */
static la_kda_layout kda_layout(const tile_la_fwd_args *a, const la_shapes *s, int64_t xs,
				int qg_lo)
{
	size_t hv = (size_t)a->num_v_heads, d = (size_t)a->head_dim;
	size_t rows = (size_t)s->tokens * hv;
	size_t srows = s->tokens > 0 ? slot_rows(s) * hv : 0;
	size_t mat = align_up(srows * d * s->es);
	la_kda_layout l;
	l.w = 0;
	l.u = l.w + mat;
	l.qg = l.u + mat;
	l.kg = l.qg + mat;
	l.qgl = l.kg + mat;
	l.qg_lo = qg_lo != 0;
	l.aqk = l.qgl + (l.qg_lo ? mat : 0);
	l.dec = l.aqk + align_up(rows * CHUNK * s->es);
	l.cb = l.dec + align_up((size_t)s->slots * hv * d * 4);
	l.xs = xs;
	l.xbs = xs;
	if (a->head_dim == 128 && !a->chunk_states) {
		int64_t split = la_split_slots((int64_t)a->num_v_heads * 2, s->nseq,
					       equal_seq_chunks(a, s));
		l.xbs = split > l.xbs ? split : l.xbs;
	}
	size_t maps = (size_t)l.xs * hv * d * d;
	size_t starts = (size_t)l.xbs * hv * d * d;
	l.xb = l.cb + align_up(hv * (size_t)s->slots * 4);
	l.xph = l.xb + align_up(starts * 4);
	l.xpl = l.xph + align_up(maps * s->es);
	l.total = l.xpl + align_up(maps * s->es);
	return l;
}

/* The GDN (fused) workspace: the chunks' A and AQK [TT, HV, 64] in dtype (AQK for the
 * one-term gdn_fused; aqk 0: none), then 1/|q| and 1/|k| as f32 [H, TP] each, then Gamma and
 * beta as f32 [HV, TP] each (TP: 64 rows per chunk slot), then (save: save_for_backward)
 * gdn_kkt_lo's W [TP, HV, D] and A and AQK per slot as hi + lo [slots, HV, 2, 64, 64] each, in
 * dtype, then per transfer slot (`xs`: the segment slots, none without segments) a segment's
 * start or state B_j^T (f32 [xs, HV, D, D]) and its map P_j as hi and lo terms in dtype ([xs D,
 * HV, D] each); none without tokens (only the state is copied then). */
static la_gdn_layout gdn_layout(const tile_la_fwd_args *a, const la_shapes *s, int64_t xs,
				int aqk, int save)
{
	size_t tp = slot_rows(s), hv = (size_t)a->num_v_heads, d = (size_t)a->head_dim;
	size_t norms = align_up((size_t)a->num_heads * tp * 4);
	size_t per_head = align_up(hv * tp * 4);
	size_t maps = (size_t)xs * hv * d * d;
	la_gdn_layout l;
	memset(&l, 0, sizeof l);
	if (s->tokens == 0)
		return l;
	l.xs = xs;
	size_t a_bytes = align_up((size_t)s->tokens * hv * CHUNK * s->es);   /* AQK: the same */
	l.a = 0;
	l.aqk = l.a + a_bytes;
	l.rq = l.aqk + (aqk ? a_bytes : 0);
	l.rk = l.rq + norms;
	l.gam = l.rk + norms;
	l.bet = l.gam + per_head;
	size_t slot_mats = save ? align_up((size_t)s->slots * hv * 2 * CHUNK * CHUNK * s->es) : 0;
	l.w = l.bet + per_head;
	l.ah = l.w + (save ? align_up(tp * hv * d * s->es) : 0);
	l.aqh = l.ah + slot_mats;
	l.xb = l.aqh + slot_mats;
	l.xph = l.xb + align_up(maps * 4);
	l.xpl = l.xph + align_up(maps * s->es);
	l.total = l.xpl + align_up(maps * s->es);
	return l;
}

la_gdn_layout la_gdn_prep_layout(const tile_la_fwd_args *a)
{
	la_shapes s = la_shapes_of(a);
	return gdn_layout(a, &s, 0, 0, 0);
}

la_gdn_layout la_gdn_saved_layout(const tile_la_fwd_args *a)
{
	la_shapes s = la_shapes_of(a);
	return gdn_layout(a, &s, 0, 1, 1);
}

la_kda_layout la_kda_prep_layout(const tile_la_fwd_args *a, int qg_lo)
{
	la_shapes s = la_shapes_of(a);
	la_kda_layout l = kda_layout(a, &s, 0, qg_lo);
	l.xbs = 0;
	l.xph = l.xpl = l.total = l.xb;
	return l;
}

size_t la_kda_saved_aqh(const tile_la_fwd_args *a)
{
	la_shapes s = la_shapes_of(a);
	return s.tokens > 0 ? align_up((size_t)s.slots * a->num_v_heads * 2 * 64 * 64 * s.es) : 0;
}

int la_kda_keeps_qgl(const tile_la_fwd_args *a)
{
	return a->save_for_backward && a->initial_state && !a->saved_setup;
}

size_t la_kda_saved_bytes(const tile_la_fwd_args *a)
{
	return 2 * la_kda_saved_aqh(a);
}

size_t la_workspace_min(const tile_la_fwd_args *a, int kda)
{
	la_shapes s = la_shapes_of(a);
	return kda ? kda_layout(a, &s, 0, la_kda_keeps_qgl(a)).total :
		     gdn_layout(a, &s, 0, 1, a->save_for_backward != 0).total;
}

/* ---- options ----------------------------------------------------------------------------- */

const char *la_options_bad_field(const tile_la_options *o)
{
	/* counts: AUTO, OFF or n > 0; yes/no: AUTO, ON or OFF */
	if (o->gdn_segments < LA_OPT_OFF)
		return "gdn_segments";
	if (o->kda_segments < LA_OPT_OFF)
		return "kda_segments";
	if (o->kda_split < LA_OPT_OFF)
		return "kda_split";
	if (o->first_segment < LA_OPT_OFF)
		return "first_segment";
	const struct { int v; const char *name; } yn[] = {
		{o->kda_transposed, "kda_transposed"},
		{o->kda_wide, "kda_wide"}, {o->kda_map_kernel, "kda_map_kernel"},
		{o->kda_prep_nocb, "kda_prep_nocb"}, {o->bwd_wide, "bwd_wide"},
		{o->exact_state, "exact_state"}, {o->gdn_kkt_two_ctas, "gdn_kkt_two_ctas"},
	};
	for (size_t i = 0; i < sizeof yn / sizeof yn[0]; i++)
		if (yn[i].v < LA_OPT_OFF || yn[i].v > LA_OPT_ON)
			return yn[i].name;
	return NULL;
}

/* ---- decisions --------------------------------------------------------------------------- */

/* Context parallelism (see the top of la.c): the segment length in chunks, or 0 for whole
 * sequences, for `units` CTAs per sequence. `warmups`: chunk_recur's segments, whose starts
 * come from warmups bounded by the gates (they need the in-kernel l2norm; the host knows the
 * lengths' replay there), else the chained path's rule (la_segments.h). */
static int32_t segment_len(const la_plan *p, const tile_la_fwd_args *a, int override,
			   int warmups)
{
	int varlen = unequal_lengths(a), sms = p->dev.sm_count, rule = override == LA_OPT_AUTO;
	int64_t tokens = p->s.tokens, nseq = p->s.nseq;
	/* unequal lengths the host knows (for the rule to replay) */
	int known = rule && varlen && a->cu_seqlens_host && nseq <= LA_CP_KNOWN_MAX && tokens > 0;
	/* whole sequences would fill more than a third of the SMs */
	int crowded = p->units * nseq * 3 > sms;
	if (!warmups) {
		/* lengths known, where the unknown lengths' rule would cut nothing (below that it
		 * measured better on short sequences: GDN 2/8 1024+7168 0.103 ms against 0.111 with
		 * the replay's 13-chunk segments) */
		if (known && crowded)
			return la_segment_len_chained_known(sms, p->units, a->cu_seqlens_host, nseq,
							    tokens);
		/* KDA: chunk_prep's second half runs beside the recurrence in the split in time
		 * (sequences of one length), which the chained path gives up; there segments paid
		 * only while whole sequences left two thirds of the SMs idle (la_segments.h) */
		if (p->kda && rule && crowded)
			return 0;
		return la_segment_len_chained(sms, p->units, tokens, nseq, varlen, override);
	}
	/* the lower-bound gate's warmups are expected to fail: every segment then runs mode 3's
	 * chain, so segments pay only where the chained path's do (la_segments.h) */
	if (p->kda && a->use_gate_in_kernel && a->use_lower_bound && rule && crowded)
		return 0;
	if (known && a->use_qk_l2norm_in_kernel)
		return la_segment_len_known(sms, p->units, a->cu_seqlens_host, nseq, tokens);
	return la_segment_len(sms, p->units, tokens, nseq, varlen, a->use_qk_l2norm_in_kernel != 0,
			      override);
}

/* seg_len, or 0 (whole sequences) where the maps' rows, D per segment slot, would not fit
 * the kernels' 32-bit row counts (XR = slots x D: forced short segments of a huge batch). */
static int32_t maps_fit(const tile_la_fwd_args *a, const la_shapes *s, int32_t seg_len)
{
	return (int64_t)segment_slots(s, seg_len) * a->head_dim > INT32_MAX ? 0 : seg_len;
}

/* Appends a launch; its CTAs by the kernel's grid expression (the metadata: chunk_prep NG x
 * HV, gdn_kkt slots x H, chunk_recur NX x HV x NZ, chunk_recur_w NX x HV, chunk_map_t NX x HV
 * x 2 x D/64, the others NX x HV x D/64). */
static void add(la_plan *p, const tile_la_fwd_args *a, la_launch l)
{
	int64_t hv = a->num_v_heads, nsl = a->head_dim / 64;
	switch (l.kernel) {
	case LA_K_PREP:
	case LA_K_PREP_NOCB:
	case LA_K_PREP_BWD:
	case LA_K_PREP_QGL: l.ctas = (int64_t)l.nx * hv; break;
	case LA_K_KKT:
	case LA_K_KKT2: l.ctas = p->s.slots * a->num_heads; break;
	case LA_K_RECUR: l.ctas = (int64_t)l.nx * hv * l.nz; break;
	case LA_K_RECUR_W: l.ctas = (int64_t)l.nx * hv; break;
	case LA_K_MAP_T:
	case LA_K_MAP_G: l.ctas = (int64_t)l.nx * hv * 2 * nsl; break;
	default: l.ctas = (int64_t)l.nx * hv * nsl; break;
	}
	if (p->nlaunches < LA_MAX_LAUNCHES)
		p->launch[p->nlaunches++] = l;
}

static la_launch launch_of(la_kernel k, int32_t mode, int32_t seg_len, int32_t nx, int32_t nz,
			   int early_start)
{
	la_launch l = {.kernel = k, .mode = mode, .seg_len = seg_len, .first_len = seg_len,
		       .nx = nx, .nz = nz, .early_start = early_start};
	return l;
}

/* chunk_prep over chunks c0 .. c0 + nc - 1 of every sequence, NG of them (nc 0: all) */
static la_launch prep_launch(la_kernel k, int32_t c0, int32_t nc, int32_t ng, int early_start)
{
	la_launch l = {.kernel = k, .nx = ng, .c0 = c0, .nc = nc, .early_start = early_start};
	return l;
}

/* The recurrence that follows the chunk-parallel kernel (chunk_prep, gdn_kkt; launched only
 * with tokens) starts early (programmatic stream serialization), the way chunk_map_t and mode
 * 3 follow the grids before them. Every recurrence kernel (and chunk_map_t) runs
 * wait_prerequisite_grids() before it reads what the grid before it wrote, so each ends after
 * the one before it and the stream keeps its order for the next call. chunk_prep and gdn_kkt
 * do not run launch_dependents(): the recurrence then starts at their end, without the
 * launch's gap (KDA 8/8 1x8192 lower-bound gate: 0.209 -> 0.202 ms with mode 3 early too);
 * with it at chunk_prep's top, the recurrence's waiting CTAs made chunk_prep's last wave
 * slower (+10 us). Without tokens the grid before would be the caller's: no early start. */
static int after_chunk_kernel(const la_plan *p)
{
	return p->s.tokens > 0;
}

/* The chained path's launches after the chunk-parallel kernel (kernels/README.md): the
 * recurrence's part 1 over each sequence's first segment (from h0, its end state S_1 to the
 * workspace; it lets the maps start at its top), the transfer maps of segments 1 .. last - 1
 * beside it (chunk_map_t or gdn_map_t: they read only the chunk-parallel kernel's outputs),
 * chunk_chain_t (the starts S_k, chained once per sequence, head and value slice, ~2 us a
 * step), the recurrence's part 2 over the later segments from S_k. Each launch but the first
 * with early start; each kernel waits for the one before it. */
static void plan_chained(la_plan *p, const tile_la_fwd_args *a, la_kernel recur, la_kernel map)
{
	int32_t L = p->seg_len, segs = p->seg_slots;
	la_launch l[4] = {launch_of(recur, 1, L, (int32_t)p->s.nseq, 0, after_chunk_kernel(p)),
			  launch_of(map, 1, L, segs, 0, 1), launch_of(LA_K_CHAIN_T, 0, L, segs, 0, 1),
			  launch_of(recur, 2, L, segs, 0, 1)};
	for (int i = 0; i < 4; i++) {
		l[i].first_len = p->first_len;
		add(p, a, l[i]);
	}
}

/* The chained path's segment length and first segment (p->seg_len, p->first_len): the
 * segments option's override or the rule's length (`seg_len`), then where the rule decides
 * and every sequence has one length, la_first_len_chained's longer first segment; the
 * first_segment option forces max(n, seg_len) chunks (OFF: seg_len). */
static void chained_lengths(la_plan *p, const tile_la_fwd_args *a, const tile_la_options *o,
			    int seg_override, int32_t seg_len)
{
	int64_t chunks = equal_seq_chunks(a, &p->s);
	p->seg_len = seg_len;
	p->first_len = seg_len;
	if (seg_len <= 0)
		return;
	if (o->first_segment > 0)
		p->first_len = o->first_segment > seg_len ? o->first_segment : seg_len;
	else if (o->first_segment == LA_OPT_AUTO && seg_override == LA_OPT_AUTO && chunks > 0)
		p->first_len = la_first_len_chained(p->dev.sm_count, p->units, p->s.nseq, chunks,
						    &p->seg_len);
}

/* GDN: gdn_kkt, then gdn_fused over whole sequences (part 0) or the chained path. */
static void plan_gdn(la_plan *p, const tile_la_fwd_args *a, const tile_la_options *o)
{
	chained_lengths(p, a, o, o->gdn_segments,
			p->s.tokens > 0 ? segment_len(p, a, o->gdn_segments, 0) : 0);
	p->seg_len = maps_fit(a, &p->s, p->seg_len);
	p->seg_slots = segment_slots(&p->s, p->seg_len);
	p->chained = p->seg_len > 0;
	p->gl = gdn_layout(a, &p->s, p->seg_slots, 1, a->save_for_backward != 0);
	p->workspace = p->gl.total;
	if (p->s.tokens > 0)
		add(p, a, launch_of(la_use_kkt2(p->dev.sm_count, p->s.slots * a->num_heads,
						o->gdn_kkt_two_ctas) ? LA_K_KKT2 : LA_K_KKT,
				    0, 0, 0, 0, 0));
	if (p->chained)
		plan_chained(p, a, LA_K_FUSED, LA_K_MAP_G);
	else
		add(p, a, launch_of(LA_K_FUSED, 0, 1, (int32_t)p->s.nseq, 0,
				    after_chunk_kernel(p)));
}

/* KDA's recurrence kernel for whole sequences: without chunk states the transposed recurrence
 * (chunk_recur_t), chunk_recur_w (both value slices of a head in one CTA, D = 128) only where
 * kda_wide forces it (la_use_wide_forward); chunk_recur with chunk states. */
static la_kernel whole_recur(const la_plan *p, const tile_la_fwd_args *a,
			     const tile_la_options *o)
{
	if (!p->transposed_allowed)
		return LA_K_RECUR;
	return la_use_wide_forward(a->head_dim, o->kda_wide) ? LA_K_RECUR_W : LA_K_RECUR_T;
}

/* chunk_recur's segments (with chunk states): over segment slots with warmups (mode 1) and,
 * beside them, the transfer maps of the segments before one whose warmup fails its bound
 * (gates that barely decay), then the failed segments, each chaining its start from the maps
 * (mode 3); CTAs with nothing to do exit at once. chunk_map_t (kda_map_kernel) runs right
 * after mode 1 with early start, beside its segments (it reads only chunk_prep's outputs);
 * mode 3, also early, waits for chunk_map_t's end, which comes after mode 1's. With
 * chunk_recur's own map CTAs (3 slices per value slice in mode 1's grid) mode 3 follows mode
 * 1 without early start. Nothing is ever run twice over a whole sequence. */
static void plan_warmups(la_plan *p, const tile_la_fwd_args *a)
{
	int32_t nsl = a->head_dim / 64, L = p->seg_len, segs = p->seg_slots;
	add(p, a, launch_of(LA_K_RECUR, 1, L, segs, p->map_kernel ? nsl : 3 * nsl,
			    after_chunk_kernel(p)));
	if (p->map_kernel)
		add(p, a, launch_of(LA_K_MAP_T, 0, L, segs, 0, 1));
	add(p, a, launch_of(LA_K_RECUR, 3, L, segs, nsl, p->map_kernel));
}

/* KDA: chunk_prep, then the recurrence: whole sequences, the chained path (no chunk states),
 * chunk_recur's warmups (chunk states), or the split in time (la_split_len): chunk_prep over
 * each sequence's first `split` chunks, chunk_recur_t's part 1 over them (early start; it lets
 * the next grid start at its top), chunk_prep over the other chunks beside it on the SMs it
 * leaves (early start; its first CTA waits for part 1's end before it exits, so that the next
 * grid's wait covers both), chunk_recur_t's part 3 over each sequence's second segment from
 * part 1's end state (early start; it waits for that chunk_prep at its top). */
static void plan_kda(la_plan *p, const tile_la_fwd_args *a, const tile_la_options *o)
{
	int32_t D = a->head_dim, HV = a->num_v_heads, nseq = (int32_t)p->s.nseq;
	p->transposed_allowed = !a->chunk_states && p->s.tokens > 0 &&
				o->kda_transposed != LA_OPT_OFF;
	/* keeping A and AQK takes chunk_prep_bwd, keeping QG's lo term chunk_prep_qgl, at D = 128
	 * builds without CB, which warmups read: whole sequences there instead */
	int keeps_qgl = la_kda_keeps_qgl(a);
	int warmups_off = (a->saved_setup || keeps_qgl) && D == 128 && !p->transposed_allowed;
	p->seg_len = p->s.tokens > 0 ? segment_len(p, a, warmups_off ? LA_OPT_OFF : o->kda_segments,
						   !p->transposed_allowed) : 0;
	if (p->seg_len > 0 && p->transposed_allowed)
		chained_lengths(p, a, o, o->kda_segments, p->seg_len);
	p->seg_len = maps_fit(a, &p->s, p->seg_len);
	p->seg_slots = segment_slots(&p->s, p->seg_len);
	p->chained = p->seg_len > 0 && p->transposed_allowed;
	p->kl = kda_layout(a, &p->s, p->seg_slots, keeps_qgl);
	p->workspace = p->kl.total;
	p->recur = p->seg_len > 0 ? (p->chained ? LA_K_RECUR_T : LA_K_RECUR) : whole_recur(p, a, o);

	/* chunk_recur_t's whole sequences leaving half of the SMs idle: the split in time, where
	 * the workspace has its segment starts */
	p->seq_chunks = equal_seq_chunks(a, &p->s);
	p->split = 0;
	if (p->seg_len == 0 && p->recur == LA_K_RECUR_T && D == 128)
		p->split = la_split_len(p->dev.sm_count, (int64_t)HV * 2, HV, nseq, p->seq_chunks,
					o->kda_split);
	p->split_slots = segment_slots(&p->s, p->split);
	if (p->split > 0 && p->split_slots > p->kl.xbs)
		p->split = 0, p->split_slots = 0;

	/* chunk_recur's warmups: the maps by chunk_map_t where the host expects failed warmups
	 * (the lower-bound gate, where it was measured); elsewhere they are rarely needed and
	 * chunk_recur's own map CTAs, in mode 1's grid, exit at once without a launch of their
	 * own */
	int map_t = la_override01(o->kda_map_kernel);
	p->map_kernel = !p->chained && p->seg_len > 0 &&
			(map_t >= 0 ? map_t : a->use_gate_in_kernel && a->use_lower_bound);
	/* chunk_prep_nocb (no CB, the gate's activation fused) where no warmup reads CB */
	p->needs_cb = la_prep_needs_cb(p->seg_len > 0 && !p->chained);
	p->prep = la_use_prep_nocb(D, p->needs_cb, o->kda_prep_nocb) ? LA_K_PREP_NOCB : LA_K_PREP;
	if (a->saved_setup)
		p->prep = LA_K_PREP_BWD;
	else if (keeps_qgl)
		p->prep = LA_K_PREP_QGL;

	if (p->split > 0) {
		int32_t rest = (int32_t)p->seq_chunks - p->split;
		add(p, a, prep_launch(p->prep, 0, p->split, nseq * p->split, 0));
		add(p, a, launch_of(LA_K_RECUR_T, 1, p->split, nseq, 0, 1));
		add(p, a, prep_launch(p->prep, p->split, rest, nseq * rest, 1));
		add(p, a, launch_of(LA_K_RECUR_T, 3, p->split, p->split_slots, 0, 1));
		return;
	}
	if (p->s.tokens > 0)
		add(p, a, prep_launch(p->prep, 0, 0, (int32_t)p->s.slots, 0));
	if (p->chained)
		plan_chained(p, a, LA_K_RECUR_T, LA_K_MAP_T);
	else if (p->seg_len > 0)
		plan_warmups(p, a);
	else
		add(p, a, launch_of(p->recur, 0, p->recur == LA_K_RECUR ? 1 : 0, nseq,
				    p->recur == LA_K_RECUR ? D / 64 : 0, after_chunk_kernel(p)));
}

int64_t la_segment_slots(const tile_la_fwd_args *a, int32_t seg_len)
{
	la_shapes s = la_shapes_of(a);
	return segment_slots(&s, seg_len);
}

int32_t la_bwd_segment_len(const tile_la_fwd_args *a, int kda, int wy_beside,
			   const la_device *dev, const tile_la_options *opt)
{
	la_shapes s = la_shapes_of(a);
	int64_t units = (int64_t)a->num_v_heads * (a->head_dim / 64);
	/* kda_bwd_wy beside the walks: KDA's over a kept workspace only (GDN's setup is
	 * gdn_kkt's, KDA's recompute chunk_prep_bwd's, both before them) */
	int64_t wy_cost = kda && wy_beside ? (int64_t)a->num_v_heads * LA_BWD_WY_KDA : 0;
	int32_t len = la_segment_len_bwd(dev->sm_count, units, wy_cost, s.tokens, s.nseq,
					 unequal_lengths(a),
					 kda ? opt->kda_segments : opt->gdn_segments);
	return maps_fit(a, &s, len);
}

tile_status la_plan_make(const tile_la_fwd_args *a, int kda, const la_device *dev,
			 const tile_la_options *opt, la_plan *out)
{
	if (!a || !dev || !opt || !out || dev->sm_count < 1)
		return TILE_ERR_ARG;
	memset(out, 0, sizeof *out);
	out->kda = kda != 0;
	out->s = la_shapes_of(a);
	out->dev = *dev;
	out->units = (int64_t)a->num_v_heads * (a->head_dim / 64);
	out->recur = kda ? LA_K_RECUR : LA_K_FUSED;
	out->prep = kda ? LA_K_PREP : LA_K_KKT;
	out->exact_state = la_override01(opt->exact_state) == 1; /* AUTO: one term (the cost) */
	if (kda)
		plan_kda(out, a, opt);
	else
		plan_gdn(out, a, opt);
	return TILE_OK;
}

/* ---- text ------------------------------------------------------------------------------- */

typedef struct text {
	char *buf;
	size_t size;
	int len;
} text;

static void put(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(text *t, const char *fmt, ...)
{
	size_t at = (size_t)t->len;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(t->buf && at < t->size ? t->buf + at : NULL,
			  t->buf && at < t->size ? t->size - at : 0, fmt, ap);
	va_end(ap);
	if (n > 0)
		t->len += n;
}

int la_plan_describe(const la_plan *p, char *buf, size_t size)
{
	text t = {buf, size, 0};
	if (buf && size)
		buf[0] = '\0';
	put(&t, "%s plan: %d SMs, %" PRId64 " tokens, %" PRId64 " sequences, %" PRId64
		" chunk slots; segments %d (%d slots)", p->kda ? "KDA" : "GDN", p->dev.sm_count,
	    p->s.tokens, p->s.nseq, p->s.slots, p->seg_len, p->seg_slots);
	if (p->chained)
		put(&t, ", first segment %d", p->first_len);
	if (p->kda)
		put(&t, ", recurrence %s, prep %s, split %d (%d slots), transfer slots %" PRId64
			", chained %d, warmups' maps by chunk_map_t %d, CB %d",
		    la_kernel_name(p->recur), kernel_names[p->prep], p->split, p->split_slots,
		    p->kl.xs, p->chained, p->map_kernel, p->needs_cb);
	else
		put(&t, ", transfer slots %" PRId64 ", chained %d", p->gl.xs, p->chained);
	put(&t, "; exact state %d; workspace %zu bytes\n", p->exact_state, p->workspace);
	for (int i = 0; i < p->nlaunches; i++) {
		const la_launch *l = &p->launch[i];
		put(&t, "  %d: %s", i, kernel_names[l->kernel]);
		if (l->kernel == LA_K_PREP || l->kernel == LA_K_PREP_NOCB ||
		    l->kernel == LA_K_PREP_BWD || l->kernel == LA_K_PREP_QGL)
			put(&t, " c0 %d nc %d NG %d", l->c0, l->nc, l->nx);
		else if (l->kernel != LA_K_KKT && l->kernel != LA_K_KKT2) {
			put(&t, " mode %d seg_len %d", l->mode, l->seg_len);
			if (l->first_len != l->seg_len)
				put(&t, " first_len %d", l->first_len);
			put(&t, " NX %d", l->nx);
		}
		if (l->kernel == LA_K_RECUR)
			put(&t, " NZ %d", l->nz);
		put(&t, ": %" PRId64 " CTAs%s\n", l->ctas, l->early_start ? ", early start" : "");
	}
	return t.len;
}
