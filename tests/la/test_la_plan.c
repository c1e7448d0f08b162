/*
 * test_la_plan.c: la_plan_make (kernels/src/la_plan.c) on the CPU, no driver.
 *   - The plans of a table of calls (GDN and KDA; fixed length and varlen with and without
 *     host lengths; few and many heads; D 64 and 128; l2norm on and off; the gate forms;
 *     chunk states; no tokens) under several option sets, on devices of 132, 114 and 78 SMs,
 *     hold the invariants every plan must: the segment length is its rule's (the chained
 *     path's for GDN and KDA without chunk states, the warmups' for KDA with them), the grids
 *     cover every chunk, the launches come in the order, with the modes (parts), grids and
 *     early starts the kernels expect, the workspace's regions are 256-byte aligned, in order
 *     and apart, with one transfer slot per segment slot; no plan runs chunk_recur's mode 2
 *     or chunk_recur_w over segments.
 *   - Each option forces what tile_la.h says it does.
 *   - Named calls on 132, 114 and 78 SMs: their plans, worked out by hand from la_segments.h's
 *     rules in the comments.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "la_plan.h"

#define ADDR(n) ((void *)((uintptr_t)(n) << 44))

static const int SMS[] = {132, 114, 78};

static int64_t cdiv(int64_t a, int64_t b)
{
	return (a + b - 1) / b;
}

static size_t align256(size_t x)
{
	return (x + 255) / 256 * 256;
}

typedef struct call {
	const char *label;
	int batch, T, nseq;
	const int32_t *cu; /* NULL: fixed length */
	int host;          /* cu_seqlens_host given */
} call;

static const int32_t cu_eq4[] = {0, 8192, 16384, 24576, 32768};
static const int32_t cu_1024_7168[] = {0, 1024, 8192};
static const int32_t cu_long_short[] = {0, 28672, 32768};
static const int32_t cu_many[] = {0, 500, 1000, 1600, 2000, 2100, 2200, 4000, 4096};
static const int32_t cu_empty[] = {0, 0, 3000, 3000, 9000};

static const call calls[] = {
	{"1x64", 1, 64, 0, NULL, 0},          {"1x1000", 1, 1000, 0, NULL, 0},
	{"2x1000", 2, 1000, 0, NULL, 0},      {"1x8192", 1, 8192, 0, NULL, 0},
	{"1x32768", 1, 32768, 0, NULL, 0},    {"4x8192", 4, 8192, 0, NULL, 0},
	{"8x2048", 8, 2048, 0, NULL, 0},      {"64x512", 64, 512, 0, NULL, 0},
	{"1x0", 1, 0, 0, NULL, 0},            {"3x0", 3, 0, 0, NULL, 0},
	{"eq4 host", 1, 32768, 4, cu_eq4, 1}, {"eq4", 1, 32768, 4, cu_eq4, 0},
	{"1024+7168 host", 1, 8192, 2, cu_1024_7168, 1}, {"1024+7168", 1, 8192, 2, cu_1024_7168, 0},
	{"28672+4096 host", 1, 32768, 2, cu_long_short, 1},
	{"many host", 1, 4096, 8, cu_many, 1}, {"many", 1, 4096, 8, cu_many, 0},
	{"empty seqs host", 1, 9000, 4, cu_empty, 1}, {"one seq", 1, 8192, 1, cu_eq4, 0},
};
enum { C_1x64, C_1x1000, C_2x1000, C_1x8192, C_1x32768, C_4x8192, C_8x2048, C_64x512, C_1x0,
       C_3x0, C_EQ4_HOST, C_EQ4, C_UNEQ_HOST, C_UNEQ, C_LONG_SHORT_HOST, C_MANY_HOST, C_MANY,
       C_EMPTY_HOST, C_ONE_SEQ };
static const int heads[][2] = {{1, 1}, {2, 8}, {4, 4}, {8, 8}, {16, 32}, {32, 32}, {64, 64}};

/* gate: 0 log-space g, 1 softplus in kernel, 2 the lower-bound gate (KDA) */
static tile_la_fwd_args make_args(const call *c, int H, int HV, int D, int l2, int gate, int cs)
{
	tile_la_fwd_args a;
	memset(&a, 0, sizeof a);
	a.batch = c->batch, a.seq_len = c->T, a.num_heads = H, a.num_v_heads = HV;
	a.head_dim = D, a.dtype = TILE_LA_BF16;
	a.q = ADDR(1), a.k = ADDR(2), a.v = ADDR(3), a.g = ADDR(4), a.beta = ADDR(5);
	a.o = ADDR(6), a.initial_state = ADDR(7), a.final_state = ADDR(8);
	if (c->cu) {
		a.cu_seqlens = (const int32_t *)ADDR(9);
		a.num_seqs = c->nseq;
		a.cu_seqlens_host = c->host ? c->cu : NULL;
	}
	a.use_qk_l2norm_in_kernel = l2;
	if (gate) {
		a.use_gate_in_kernel = 1, a.A_log = ADDR(10), a.dt_bias = ADDR(11);
		if (gate == 2)
			a.use_lower_bound = 1, a.lower_bound = -5.0f;
	}
	if (cs) {
		a.chunk_states = ADDR(12);
		a.num_chunk_states = c->T / 64 + (c->cu ? c->nseq : c->batch);
	}
	a.workspace = ADDR(13);
	return a;
}

static la_plan plan_of(const tile_la_fwd_args *a, int kda, int sms, tile_la_options o)
{
	la_device dev = {sms, 232448};
	la_plan p;
	assert_int_equal(la_plan_make(a, kda, &dev, &o, &p), TILE_OK);
	return p;
}

static la_plan plan_default(const tile_la_fwd_args *a, int kda, int sms)
{
	return plan_of(a, kda, sms, (tile_la_options){0});
}

/* A failed invariant names the plan. */
static void fail_plan(const la_plan *p, const char *what)
{
	char text[4096];
	la_plan_describe(p, text, sizeof text);
	fail_msg("%s\n%s", what, text);
}

#define REQUIRE(p, cond) ((cond) ? (void)0 : fail_plan((p), "violated: " #cond))

static int count_of(const la_plan *p, la_kernel k)
{
	int n = 0;
	for (int i = 0; i < p->nlaunches; i++)
		n += p->launch[i].kernel == k;
	return n;
}

/* ---- the rules, restated from the call (which rule with which inputs) ------------------- */

/* Lengths the segment rule must treat as unknown or unequal: cu_seqlens over several
 * sequences without a host copy, or a host copy whose lengths differ. */
static int varlen_of(const tile_la_fwd_args *a)
{
	if (!a->cu_seqlens || a->num_seqs <= 1)
		return 0;
	if (!a->cu_seqlens_host)
		return 1;
	for (int n = 1; n < a->num_seqs; n++)
		if (a->cu_seqlens_host[n + 1] - a->cu_seqlens_host[n] !=
		    a->cu_seqlens_host[1] - a->cu_seqlens_host[0])
			return 1;
	return 0;
}

/* Whether KDA's recurrence may run transposed: no chunk states, tokens, not turned off. The
 * chained path and its rule follow from it. */
static int kda_transposed(const tile_la_fwd_args *a, const la_plan *p, const tile_la_options *o)
{
	return !a->chunk_states && p->s.tokens > 0 && o->kda_transposed != TILE_LA_OFF;
}

/* The segment length the call must get: the chained path's rule (GDN; KDA without chunk
 * states): the host's unequal lengths replayed where units x N x 3 > SMs (there the unknown
 * lengths' rule cuts nothing), else (KDA: only while units x N x 3 <= SMs, the split in time
 * it gives up hides chunk_prep) la_segment_len_chained; else the warmups' (KDA with chunk
 * states: the in-kernel l2norm, the host's lengths replayed when known). */
static int32_t rule_seg_len(const la_plan *p, const tile_la_fwd_args *a, int kda,
			    const tile_la_options *o)
{
	int sms = p->dev.sm_count, vl = varlen_of(a);
	int64_t units = (int64_t)a->num_v_heads * (a->head_dim / 64);
	int64_t tokens = p->s.tokens, nseq = p->s.nseq;
	int ovr = kda ? o->kda_segments : o->gdn_segments;
	if (tokens == 0)
		return 0;
	if ((!kda || kda_transposed(a, p, o)) && vl && a->cu_seqlens_host &&
	    nseq <= LA_CP_KNOWN_MAX && ovr == TILE_LA_AUTO && units * nseq * 3 > sms)
		return la_segment_len_chained_known(sms, units, a->cu_seqlens_host, nseq, tokens);
	if (!kda)
		return la_segment_len_chained(sms, units, tokens, nseq, vl, o->gdn_segments);
	if (kda_transposed(a, p, o))
		return o->kda_segments == TILE_LA_AUTO && units * nseq * 3 > sms ? 0 :
		       la_segment_len_chained(sms, units, tokens, nseq, vl, o->kda_segments);
	/* warmups: the lower-bound gate's are expected to fail, so the chained path's 3x rule */
	if (a->use_gate_in_kernel && a->use_lower_bound && o->kda_segments == TILE_LA_AUTO &&
	    units * nseq * 3 > sms)
		return 0;
	if (vl && a->cu_seqlens_host && nseq <= LA_CP_KNOWN_MAX && a->use_qk_l2norm_in_kernel &&
	    o->kda_segments == TILE_LA_AUTO)
		return la_segment_len_known(sms, units, a->cu_seqlens_host, nseq, tokens);
	return la_segment_len(sms, units, tokens, nseq, vl, a->use_qk_l2norm_in_kernel,
			      o->kda_segments);
}

/* The chained path's first segment, and the length the others then take (*L, the segment
 * rule's on entry): first_segment's n forces max(n, L); under the rules (both options AUTO)
 * sequences of one length known to the host take la_first_len_chained; else L. */
static int32_t rule_first_len(const la_plan *p, const tile_la_fwd_args *a, int kda,
			      const tile_la_options *o, int32_t *L)
{
	int ovr = kda ? o->kda_segments : o->gdn_segments;
	int64_t nseq = p->s.nseq, chunks = 0;
	if (*L <= 0)
		return *L;
	if (o->first_segment > 0)
		return o->first_segment > *L ? o->first_segment : *L;
	if (o->first_segment != TILE_LA_AUTO || ovr != TILE_LA_AUTO || varlen_of(a))
		return *L;
	if (!a->cu_seqlens)
		chunks = cdiv(a->seq_len, 64);
	else if (!a->cu_seqlens_host)
		chunks = cdiv(p->s.tokens, 64);
	else
		chunks = cdiv(a->cu_seqlens_host[1] - a->cu_seqlens_host[0], 64);
	return la_first_len_chained(p->dev.sm_count, (int64_t)a->num_v_heads * (a->head_dim / 64),
				    nseq, chunks, L);
}

/* ---- the workspace ------------------------------------------------------------------------ */

/* Every region at least its size after the one before it, every offset 256-byte aligned (TMA
 * and the kernels' vector stores); the transfer slots are the segment slots: B_j / S_k in f32
 * and P_j's hi and lo terms in dtype, [slots, HV, D, D] each, at the end. */
static void check_kda_layout(const la_plan *p, const tile_la_fwd_args *a)
{
	const la_kda_layout *l = &p->kl;
	size_t hv = (size_t)a->num_v_heads, d = (size_t)a->head_dim;
	size_t srows = p->s.tokens > 0 ? (size_t)p->s.slots * 64 * hv : 0;
	size_t mat = srows * d * 2, map = hv * d * d;
	REQUIRE(p, l->xs == p->seg_slots);
	REQUIRE(p, l->w == 0 && l->u >= l->w + mat && l->qg >= l->u + mat);
	REQUIRE(p, l->kg >= l->qg + mat && l->aqk >= l->kg + mat);
	REQUIRE(p, l->dec >= l->aqk + (size_t)p->s.tokens * hv * 64 * 2);
	REQUIRE(p, l->cb >= l->dec + (size_t)p->s.slots * hv * d * 4);
	REQUIRE(p, l->xb >= l->cb + hv * (size_t)p->s.slots * 4);
	/* the tail exactly: XB's slots (the split's starts too), P_j hi, P_j lo */
	REQUIRE(p, l->xph == l->xb + align256((size_t)l->xbs * map * 4));
	REQUIRE(p, l->xpl == l->xph + align256((size_t)l->xs * map * 2));
	REQUIRE(p, l->total == l->xpl + align256((size_t)l->xs * map * 2));
	REQUIRE(p, l->xbs >= l->xs && p->workspace == l->total);
	if (a->chunk_states || a->head_dim != 128)
		REQUIRE(p, l->xbs == l->xs); /* no split possible: no starts of its own */
	size_t offs[] = {l->w, l->u, l->qg, l->kg, l->aqk, l->dec, l->cb, l->xb, l->xph, l->xpl,
			 l->total};
	for (size_t i = 0; i < sizeof offs / sizeof offs[0]; i++)
		REQUIRE(p, offs[i] % 256 == 0);
	/* the least workspace (tile_la_fwd_check's) differs only by the transfer slots */
	REQUIRE(p, la_workspace_min(a, 1) <= p->workspace);
	if (l->xs == 0)
		REQUIRE(p, la_workspace_min(a, 1) == p->workspace);
}

static void check_gdn_layout(const la_plan *p, const tile_la_fwd_args *a)
{
	const la_gdn_layout *l = &p->gl;
	size_t tp = (size_t)p->s.slots * 64, hv = (size_t)a->num_v_heads, d = (size_t)a->head_dim;
	size_t maps = (size_t)l->xs * hv * d * d;
	if (p->s.tokens == 0) {
		REQUIRE(p, l->total == 0 && l->xs == 0 && p->workspace == 0);
		return;
	}
	REQUIRE(p, l->xs == p->seg_slots);
	REQUIRE(p, l->a == 0 && l->rq >= (size_t)p->s.tokens * hv * 64 * 2);
	REQUIRE(p, l->rk >= l->rq + (size_t)a->num_heads * tp * 4);
	REQUIRE(p, l->gam >= l->rk + (size_t)a->num_heads * tp * 4);
	REQUIRE(p, l->bet >= l->gam + hv * tp * 4 && l->xb >= l->bet + hv * tp * 4);
	REQUIRE(p, l->xph == l->xb + align256(maps * 4));
	REQUIRE(p, l->xpl == l->xph + align256(maps * 2));
	REQUIRE(p, l->total == l->xpl + align256(maps * 2) && p->workspace == l->total);
	size_t offs[] = {l->a, l->rq, l->rk, l->gam, l->bet, l->xb, l->xph, l->xpl, l->total};
	for (size_t i = 0; i < sizeof offs / sizeof offs[0]; i++)
		REQUIRE(p, offs[i] % 256 == 0);
	/* it grows with the segments by the transfer slots alone */
	REQUIRE(p, p->workspace == la_workspace_min(a, 0) + align256(maps * 4) +
				   2 * align256(maps * 2));
}

/* ---- the launches ------------------------------------------------------------------------- */

/* Segments of L chunks: at most the chunk slots, at least the segments of every sequence
 * (equal lengths: N cdiv(C, L); any: the bound cdiv(TT, 64 L) + N). */
static void check_segments(const la_plan *p, int32_t L, int32_t slots)
{
	if (L == 0) {
		REQUIRE(p, slots == 0);
		return;
	}
	int64_t chunks = cdiv(p->s.tokens, 64);
	REQUIRE(p, L > 0 && L < chunks);
	REQUIRE(p, slots == cdiv(p->s.tokens, 64 * (int64_t)L) + p->s.nseq);
	REQUIRE(p, slots <= p->s.slots);
	if (p->seq_chunks > 0)
		REQUIRE(p, p->s.nseq * cdiv(p->seq_chunks, L) <= slots);
}

/* The chained path from `r` on, the plan's last four launches: the recurrence's part 1 over
 * sequences (early start after the chunk-parallel kernel), the maps (mode 1: chained) and
 * chunk_chain_t over the segment slots, part 2 over them; each with early start. */
static void check_chained_path(const la_plan *p, const tile_la_fwd_args *a, const la_launch *r,
			       la_kernel recur, la_kernel map)
{
	int64_t nseq = p->s.nseq, hv = a->num_v_heads, nsl = a->head_dim / 64;
	int32_t L = p->seg_len, S = p->seg_slots;
	REQUIRE(p, p->chained && L > 0 && r + 4 == p->launch + p->nlaunches);
	/* a longer first segment: the slots of L-chunk segments still bound every sequence's */
	REQUIRE(p, p->first_len >= L);
	for (int i = 0; i < 4; i++)
		REQUIRE(p, r[i].first_len == p->first_len);
	REQUIRE(p, r[0].kernel == recur && r[0].mode == 1 && r[0].seg_len == L &&
		   r[0].nx == nseq && r[0].early_start && r[0].ctas == nseq * hv * nsl);
	REQUIRE(p, r[1].kernel == map && r[1].mode == 1 && r[1].seg_len == L && r[1].nx == S &&
		   r[1].early_start && r[1].ctas == S * hv * 2 * nsl);
	REQUIRE(p, r[2].kernel == LA_K_CHAIN_T && r[2].mode == 0 && r[2].seg_len == L &&
		   r[2].nx == S && r[2].early_start && r[2].ctas == S * hv * nsl);
	REQUIRE(p, r[3].kernel == recur && r[3].mode == 2 && r[3].seg_len == L && r[3].nx == S &&
		   r[3].early_start && r[3].ctas == S * hv * nsl);
}

static void check_gdn(const la_plan *p, const tile_la_fwd_args *a, const tile_la_options *o)
{
	int64_t nseq = p->s.nseq, hv = a->num_v_heads, nsl = a->head_dim / 64;
	int tokens = p->s.tokens > 0;
	check_gdn_layout(p, a);
	REQUIRE(p, p->chained == (p->seg_len > 0) && (!p->chained || tokens));
	/* gdn_kkt2 on grids of at most three waves of two CTAs per SM (or as forced) */
	int64_t kkt_ctas = p->s.slots * a->num_heads, sms = p->dev.sm_count;
	int two = o->gdn_kkt_two_ctas == TILE_LA_AUTO ? kkt_ctas <= 3 * 2 * sms :
							o->gdn_kkt_two_ctas == TILE_LA_ON;
	la_kernel kkt = two ? LA_K_KKT2 : LA_K_KKT;
	REQUIRE(p, count_of(p, kkt) == tokens && count_of(p, two ? LA_K_KKT : LA_K_KKT2) == 0 &&
		   p->launch[0].kernel == (tokens ? kkt : LA_K_FUSED));
	if (tokens)
		REQUIRE(p, p->launch[0].ctas == p->s.slots * a->num_heads);
	const la_launch *f = p->launch + tokens;
	REQUIRE(p, count_of(p, LA_K_MAP_T) == 0 && count_of(p, LA_K_PREP) == 0 &&
		   count_of(p, LA_K_RECUR) == 0 && count_of(p, LA_K_RECUR_T) == 0);
	if (p->chained) {
		check_chained_path(p, a, f, LA_K_FUSED, LA_K_MAP_G);
		return;
	}
	REQUIRE(p, p->nlaunches == 1 + tokens && count_of(p, LA_K_MAP_G) == 0 &&
		   count_of(p, LA_K_CHAIN_T) == 0);
	REQUIRE(p, f->kernel == LA_K_FUSED && f->mode == 0 && f->nx == nseq && f->seg_len == 1 &&
		   f->early_start == tokens && f->ctas == nseq * hv * nsl);
}

static void check_kda(const la_plan *p, const tile_la_fwd_args *a, const tile_la_options *o)
{
	int32_t nseq = (int32_t)p->s.nseq, nsl = a->head_dim / 64;
	int tokens = p->s.tokens > 0;
	check_kda_layout(p, a);
	REQUIRE(p, p->transposed_allowed == kda_transposed(a, p, o));
	REQUIRE(p, p->chained == (p->seg_len > 0 && p->transposed_allowed));
	REQUIRE(p, count_of(p, LA_K_KKT) == 0 && count_of(p, LA_K_FUSED) == 0 &&
		   count_of(p, LA_K_MAP_G) == 0);
	/* CB only where a warmup reads it; chunk_prep_nocb (D = 128) wherever none does */
	REQUIRE(p, p->needs_cb == (p->seg_len > 0 && !p->chained));
	REQUIRE(p, p->prep == (a->head_dim == 128 && !p->needs_cb &&
			       o->kda_prep_nocb != TILE_LA_OFF ? LA_K_PREP_NOCB : LA_K_PREP));
	int preps = count_of(p, LA_K_PREP) + count_of(p, LA_K_PREP_NOCB);
	if (p->split > 0) {
		/* two chunk_prep launches over complementary chunk ranges of every sequence */
		const la_launch *l = p->launch;
		REQUIRE(p, p->seg_len == 0 && !p->chained && p->kl.xs == 0);
		REQUIRE(p, p->nlaunches == 4 && preps == 2 && p->recur == LA_K_RECUR_T);
		REQUIRE(p, a->head_dim == 128 && !p->needs_cb);
		REQUIRE(p, p->seq_chunks > 0 && 2 * p->split >= p->seq_chunks &&
			   p->split < p->seq_chunks);
		REQUIRE(p, l[0].c0 == 0 && l[0].nc == p->split && l[0].nx == nseq * p->split &&
			   !l[0].early_start);
		REQUIRE(p, l[2].c0 == p->split && l[2].c0 + l[2].nc == p->seq_chunks &&
			   l[2].nx == nseq * l[2].nc && l[2].early_start);
		REQUIRE(p, l[1].kernel == LA_K_RECUR_T && l[1].mode == 1 && l[1].nx == nseq &&
			   l[1].early_start);
		REQUIRE(p, l[3].kernel == LA_K_RECUR_T && l[3].mode == 3 &&
			   l[3].nx == p->split_slots && l[3].early_start);
		REQUIRE(p, p->split_slots == cdiv(p->s.tokens, 64 * (int64_t)p->split) + nseq);
		REQUIRE(p, p->split_slots <= p->kl.xbs);
		REQUIRE(p, nseq * p->seq_chunks * 64 >= p->s.tokens);
		return;
	}
	REQUIRE(p, p->split_slots == 0);
	/* chunk_prep over every chunk slot, unless there are no tokens */
	REQUIRE(p, preps == tokens);
	if (tokens)
		REQUIRE(p, p->launch[0].nx == p->s.slots && p->launch[0].nc == 0 &&
			   p->launch[0].c0 == 0 && !p->launch[0].early_start &&
			   p->launch[0].ctas == p->s.slots * a->num_v_heads);
	const la_launch *r = p->launch + tokens;
	if (p->chained) {
		REQUIRE(p, p->recur == LA_K_RECUR_T && !p->map_kernel);
		check_chained_path(p, a, r, LA_K_RECUR_T, LA_K_MAP_T);
		return;
	}
	REQUIRE(p, count_of(p, LA_K_CHAIN_T) == 0 && count_of(p, LA_K_RECUR_T) <= 1);
	if (p->seg_len > 0) {
		/* chunk_recur's warmups (chunk states or chunk_recur_t off): they need the bound's
		 * l2norm; mode 1 beside the maps (chunk_map_t, or its own map CTAs: NZ 3 x NSL),
		 * then mode 3 over the failed segments */
		int ov = la_override01(o->kda_map_kernel);
		int maps = ov >= 0 ? ov : a->use_gate_in_kernel && a->use_lower_bound;
		int32_t L = p->seg_len, S = p->seg_slots;
		REQUIRE(p, !p->transposed_allowed && a->use_qk_l2norm_in_kernel);
		REQUIRE(p, p->recur == LA_K_RECUR && p->map_kernel == maps && p->needs_cb);
		REQUIRE(p, p->nlaunches == 1 + 2 + maps);
		REQUIRE(p, r[0].kernel == LA_K_RECUR && r[0].mode == 1 && r[0].seg_len == L &&
			   r[0].nx == S && r[0].nz == (maps ? 1 : 3) * nsl && r[0].early_start);
		if (maps)
			REQUIRE(p, r[1].kernel == LA_K_MAP_T && r[1].mode == 0 &&
				   r[1].seg_len == L && r[1].nx == S && r[1].early_start &&
				   r[1].ctas == (int64_t)S * a->num_v_heads * 2 * nsl);
		const la_launch *m3 = &r[1 + maps];
		REQUIRE(p, m3->kernel == LA_K_RECUR && m3->mode == 3 && m3->seg_len == L &&
			   m3->nx == S && m3->nz == nsl && m3->early_start == maps);
		return;
	}
	/* whole sequences: chunk_recur (mode 0), or without chunk states chunk_recur_t, or
	 * chunk_recur_w where kda_wide forces it (D = 128) */
	la_kernel want = !p->transposed_allowed ? LA_K_RECUR :
			 o->kda_wide == TILE_LA_ON && a->head_dim == 128 ? LA_K_RECUR_W :
									  LA_K_RECUR_T;
	REQUIRE(p, p->recur == want && p->nlaunches == 1 + tokens && !p->map_kernel);
	REQUIRE(p, r->kernel == want && r->mode == 0 && r->nx == nseq &&
		   r->seg_len == (want == LA_K_RECUR) && r->nz == (want == LA_K_RECUR ? nsl : 0) &&
		   r->early_start == tokens);
}

static void check_invariants(const la_plan *p, const tile_la_fwd_args *a, int kda,
			     const tile_la_options *o)
{
	REQUIRE(p, p->nlaunches >= 1 && p->nlaunches < LA_MAX_LAUNCHES);
	for (int i = 0; i < p->nlaunches; i++) {
		const la_launch *l = &p->launch[i];
		REQUIRE(p, l->ctas > 0 && l->ctas <= INT32_MAX);
		/* early start only after a kernel of this call (the first follows the caller's) */
		REQUIRE(p, !(i == 0 && l->early_start));
		/* nothing reruns a whole sequence, nor runs chunk_recur_w over segments */
		REQUIRE(p, !(l->kernel == LA_K_RECUR && l->mode == 2));
		REQUIRE(p, !(l->kernel == LA_K_RECUR_W && (p->seg_len > 0 || l->seg_len > 0)));
	}
	int32_t L = rule_seg_len(p, a, kda, o);
	int32_t first = !kda || kda_transposed(a, p, o) ? rule_first_len(p, a, kda, o, &L) : L;
	REQUIRE(p, p->seg_len == L);
	if (p->chained)
		REQUIRE(p, p->first_len == first);
	check_segments(p, p->seg_len, p->seg_slots);
	if (kda)
		check_kda(p, a, o);
	else
		check_gdn(p, a, o);
}

/* Option sets the table runs under: the rules, forced segment lengths (1, 2, 7 chunks: the
 * smallest, a power of two, and one that divides nothing), segments off, and the switches. */
static const tile_la_options option_sets[] = {
	{0},
	{.gdn_segments = 1, .kda_segments = 1},
	{.gdn_segments = 2, .kda_segments = 2},
	{.gdn_segments = 7, .kda_segments = 7},
	{.gdn_segments = 2, .kda_segments = 2, .first_segment = 5},
	{.first_segment = TILE_LA_OFF},
	{.first_segment = 1000},
	{.gdn_kkt_two_ctas = TILE_LA_ON},
	{.gdn_kkt_two_ctas = TILE_LA_OFF},
	{.gdn_segments = TILE_LA_OFF, .kda_segments = TILE_LA_OFF},
	{.kda_transposed = TILE_LA_OFF},
	{.kda_map_kernel = TILE_LA_ON, .kda_wide = TILE_LA_ON, .kda_segments = 4},
	{.kda_map_kernel = TILE_LA_OFF, .kda_prep_nocb = TILE_LA_OFF, .kda_split = TILE_LA_OFF},
};
enum { NOPTS = sizeof option_sets / sizeof option_sets[0] };

/* Counts of the schedules the table reached */
typedef struct reach {
	int plans, chained, warmups;
} reach;

/* One call of the table under every option set on every device size */
static void check_call(const tile_la_fwd_args *a, int kda, reach *r)
{
	for (size_t oi = 0; oi < NOPTS; oi++)
		for (size_t si = 0; si < 3; si++) {
			const tile_la_options *o = &option_sets[oi];
			la_plan p = plan_of(a, kda, SMS[si], *o);
			check_invariants(&p, a, kda, o);
			r->plans++;
			r->chained += p.chained;
			r->warmups += p.seg_len > 0 && !p.chained;
		}
}

/* Every call of the table, every head count, D, l2norm, gate form and chunk states, under
 * every option set, on every device size. */
static void test_invariants(void **state)
{
	(void)state;
	reach r = {0, 0, 0};
	for (size_t ci = 0; ci < sizeof calls / sizeof calls[0]; ci++)
		for (size_t hi = 0; hi < sizeof heads / sizeof heads[0]; hi++)
			for (int v = 0; v < 2 * 2 * 2 * 2 * 3; v++) {
				/* D, l2norm, chunk states, GDN or KDA, the gate (GDN has no lower
				 * bound) */
				int D = v & 1 ? 128 : 64, l2 = v >> 1 & 1, cs = v >> 2 & 1;
				int kda = v >> 3 & 1, gate = v >> 4;
				if (!kda && gate == 2)
					continue;
				tile_la_fwd_args a = make_args(&calls[ci], heads[hi][0],
							       heads[hi][1], D, l2, gate, cs);
				check_call(&a, kda, &r);
			}
	print_message("%d plans checked: %d chained, %d with warmups\n", r.plans, r.chained,
		      r.warmups);
	/* the table reaches every schedule */
	assert_true(r.chained > 1000 && r.warmups > 1000);
}

/* ---- options ------------------------------------------------------------------------------ */

/* Field by field: la_launch has padding */
static int same_launches(const la_plan *p, const la_plan *q)
{
	if (p->nlaunches != q->nlaunches)
		return 0;
	for (int i = 0; i < p->nlaunches; i++) {
		const la_launch *a = &p->launch[i], *b = &q->launch[i];
		if (a->kernel != b->kernel || a->mode != b->mode || a->seg_len != b->seg_len ||
		    a->nx != b->nx || a->nz != b->nz || a->c0 != b->c0 || a->nc != b->nc ||
		    a->ctas != b->ctas || a->early_start != b->early_start)
			return 0;
	}
	return 1;
}

/* The options force what tile_la.h says, on every device size. */
static void test_options(void **state)
{
	(void)state;
	for (size_t si = 0; si < 3; si++) {
		int sms = SMS[si];
		tile_la_options o;
		/* 8/8 1x32768, log-space gates */
		tile_la_fwd_args a = make_args(&calls[C_1x32768], 8, 8, 128, 1, 0, 0);
		/* GDN: segments forced exactly (1 chunk: as many segment slots as chunk slots),
		 * off, or not below the batch's 512 chunks: whole */
		static const int32_t forced[] = {1, 2, 7, 8, 511};
		for (size_t i = 0; i < sizeof forced / sizeof forced[0]; i++) {
			o = (tile_la_options){.gdn_segments = forced[i]};
			la_plan p = plan_of(&a, 0, sms, o);
			REQUIRE(&p, p.seg_len == forced[i] && p.chained &&
				   p.seg_slots == cdiv(32768, 64 * forced[i]) + 1 &&
				   p.gl.xs == p.seg_slots);
			check_invariants(&p, &a, 0, &o);
		}
		la_plan p = plan_of(&a, 0, sms, (tile_la_options){.gdn_segments = 1});
		REQUIRE(&p, p.seg_slots == p.s.slots);
		p = plan_of(&a, 0, sms, (tile_la_options){.gdn_segments = TILE_LA_OFF});
		REQUIRE(&p, p.seg_len == 0 && !p.chained && p.gl.xs == 0);
		p = plan_of(&a, 0, sms, (tile_la_options){.gdn_segments = 512});
		REQUIRE(&p, p.seg_len == 0 && p.nlaunches == 2);
		/* GDN takes no KDA option */
		la_plan g = plan_default(&a, 0, sms);
		p = plan_of(&a, 0, sms, (tile_la_options){.kda_segments = TILE_LA_OFF,
							  .kda_transposed = TILE_LA_OFF});
		REQUIRE(&p, same_launches(&p, &g) && p.workspace == g.workspace);

		/* KDA without chunk states: forced segments take the chained path, exactly */
		o = (tile_la_options){.kda_segments = 8};
		p = plan_of(&a, 1, sms, o);
		REQUIRE(&p, p.seg_len == 8 && p.chained && p.kl.xs == 64 + 1);
		check_invariants(&p, &a, 1, &o);
		p = plan_of(&a, 1, sms, (tile_la_options){.kda_segments = TILE_LA_OFF});
		REQUIRE(&p, p.seg_len == 0 && p.kl.xs == 0 && !p.chained);
		/* kda_map_kernel and kda_wide do not touch the chained path */
		la_plan k = plan_of(&a, 1, sms, (tile_la_options){.kda_segments = 8});
		p = plan_of(&a, 1, sms, (tile_la_options){.kda_segments = 8,
							  .kda_map_kernel = TILE_LA_OFF});
		REQUIRE(&p, same_launches(&p, &k));
		p = plan_of(&a, 1, sms, (tile_la_options){.kda_segments = 8,
							  .kda_map_kernel = TILE_LA_ON,
							  .kda_wide = TILE_LA_ON});
		REQUIRE(&p, same_launches(&p, &k) && count_of(&p, LA_K_RECUR_W) == 0);
		/* chunk_recur_t off: chunk_recur's warmups (mode 1, then mode 3), or whole */
		o = (tile_la_options){.kda_segments = 8, .kda_transposed = TILE_LA_OFF};
		p = plan_of(&a, 1, sms, o);
		REQUIRE(&p, !p.chained && p.seg_len == 8 && p.recur == LA_K_RECUR &&
			   count_of(&p, LA_K_RECUR_T) == 0 && count_of(&p, LA_K_CHAIN_T) == 0 &&
			   p.needs_cb && p.prep == LA_K_PREP && p.kl.xs == p.seg_slots);
		check_invariants(&p, &a, 1, &o);
		p = plan_of(&a, 1, sms, (tile_la_options){.kda_segments = TILE_LA_OFF,
							  .kda_transposed = TILE_LA_OFF});
		REQUIRE(&p, p.recur == LA_K_RECUR && count_of(&p, LA_K_RECUR_T) == 0 &&
			   p.launch[1].mode == 0);
		/* chunk_recur_w forced on and off over whole sequences */
		p = plan_of(&a, 1, sms, (tile_la_options){.kda_segments = TILE_LA_OFF,
							  .kda_wide = TILE_LA_ON});
		REQUIRE(&p, p.recur == LA_K_RECUR_W);
		p = plan_of(&a, 1, sms, (tile_la_options){.kda_segments = TILE_LA_OFF,
							  .kda_wide = TILE_LA_OFF});
		REQUIRE(&p, p.recur == LA_K_RECUR_T);
		/* chunk_prep_nocb off: chunk_prep even where nothing reads CB */
		p = plan_of(&a, 1, sms, (tile_la_options){.kda_prep_nocb = TILE_LA_OFF});
		REQUIRE(&p, p.prep == LA_K_PREP && !p.needs_cb && p.chained);
		p = plan_of(&a, 1, sms, (tile_la_options){.kda_segments = TILE_LA_OFF});
		REQUIRE(&p, p.prep == LA_K_PREP_NOCB);

		/* KDA with chunk states: the warmups' rule; the maps by chunk_map_t (ON) or by
		 * chunk_recur's own CTAs (OFF, NZ 3 x 2) */
		tile_la_fwd_args c = make_args(&calls[C_1x32768], 8, 8, 128, 1, 0, 1);
		o = (tile_la_options){.kda_segments = 8, .kda_map_kernel = TILE_LA_ON};
		p = plan_of(&c, 1, sms, o);
		REQUIRE(&p, !p.chained && p.map_kernel && count_of(&p, LA_K_MAP_T) == 1 &&
			   p.launch[1].nz == 2 && p.launch[3].early_start);
		check_invariants(&p, &c, 1, &o);
		o = (tile_la_options){.kda_segments = 8, .kda_map_kernel = TILE_LA_OFF};
		p = plan_of(&c, 1, sms, o);
		REQUIRE(&p, !p.map_kernel && count_of(&p, LA_K_MAP_T) == 0 && p.launch[1].nz == 6 &&
			   !p.launch[2].early_start);
		check_invariants(&p, &c, 1, &o);
		/* ... which still need the in-kernel l2norm, forced or not */
		c.use_qk_l2norm_in_kernel = 0;
		p = plan_of(&c, 1, sms, (tile_la_options){.kda_segments = 8});
		REQUIRE(&p, p.seg_len == 0 && p.kl.xs == 0);

		/* the split: off, and forced to a valid first part (8/8 4x8192, lower-bound
		 * gate) */
		tile_la_fwd_args b = make_args(&calls[C_4x8192], 8, 8, 128, 1, 2, 0);
		p = plan_of(&b, 1, sms, (tile_la_options){.kda_split = TILE_LA_OFF});
		REQUIRE(&p, p.split == 0);
		o = (tile_la_options){.kda_split = 96};
		p = plan_of(&b, 1, sms, o);
		if (sms == 132)
			REQUIRE(&p, p.split == 96 && p.split_slots == cdiv(32768, 64 * 96) + 4);
		else /* 64 chunk_recur_t CTAs leave less than half of 114 or 78 SMs: no split */
			REQUIRE(&p, p.split == 0);
		check_invariants(&p, &b, 1, &o);
		p = plan_of(&b, 1, sms, (tile_la_options){.kda_split = 63}); /* below C / 2 */
		REQUIRE(&p, p.split == 0);
		/* forced segments take the chained path, not the split */
		p = plan_of(&b, 1, sms, (tile_la_options){.kda_segments = 16, .kda_split = 96});
		REQUIRE(&p, p.split == 0 && p.chained && p.seg_slots == 32 + 4);
		/* every option at once still makes a valid plan */
		tile_la_options all = {.gdn_segments = 4, .kda_segments = 4, .kda_split = 96,
				       .kda_transposed = TILE_LA_OFF, .kda_wide = TILE_LA_ON,
				       .kda_map_kernel = TILE_LA_ON, .kda_prep_nocb = TILE_LA_OFF};
		for (int kda = 0; kda < 2; kda++) {
			p = plan_of(&b, kda, sms, all);
			check_invariants(&p, &b, kda, &all);
		}
	}
	tile_la_options bad;
	memset(&bad, 0, sizeof bad);
	assert_null(la_options_bad_field(&bad));
	bad.kda_wide = 2;
	assert_string_equal(la_options_bad_field(&bad), "kda_wide");
	bad.kda_wide = 0, bad.kda_map_kernel = -2;
	assert_string_equal(la_options_bad_field(&bad), "kda_map_kernel");
	bad.kda_map_kernel = 0, bad.gdn_segments = -2;
	assert_string_equal(la_options_bad_field(&bad), "gdn_segments");
	bad.gdn_segments = 1 << 30;
	assert_null(la_options_bad_field(&bad));
}

/* ---- named plans -------------------------------------------------------------------------- */

/* What a launch is expected to be: kernel, mode (part, chained; chunk_prep: c0), seg_len
 * (chunk_prep: nc), NX, NZ, early start. */
typedef struct want {
	la_kernel k;
	int32_t mode, seg_len, nx, nz;
	int early;
} want;

static void expect_launches(const la_plan *p, const want *w, int n)
{
	REQUIRE(p, p->nlaunches == n);
	for (int i = 0; i < n; i++) {
		const la_launch *l = &p->launch[i];
		int prep = w[i].k == LA_K_PREP || w[i].k == LA_K_PREP_NOCB;
		if (l->kernel != w[i].k || l->early_start != w[i].early || l->nx != w[i].nx ||
		    (!prep && (l->mode != w[i].mode || l->seg_len != w[i].seg_len)) ||
		    (prep && (l->c0 != w[i].mode || l->nc != w[i].seg_len)) ||
		    (l->kernel == LA_K_RECUR && l->nz != w[i].nz)) {
			char what[128];
			snprintf(what, sizeof what, "launch %d differs from the expected plan", i);
			fail_plan(p, what);
		}
	}
}

/*
 * GDN on 132 SMs. la_segment_len_chained (units = HV x D/64): sequences of one length take
 * the length of least la_chained_cost, len x (waves of part 1 beside the maps + waves of part
 * 2) + a chain step per segment + 4, when below 0.85 of whole sequences' chunks x waves;
 * unknown lengths only while units x N x 3 <= 132, then 1/8 of the batch's chunks (at least
 * 4). No l2norm needed, no replay of known lengths. The chained path: gdn_kkt, gdn_fused part
 * 1 over the sequences, gdn_map_t and chunk_chain_t over the segment slots, gdn_fused part 2.
 */
static void test_gdn_plans(void **state)
{
	(void)state;
	/* 8/8 1x8192: units 16, 128 chunks; 9 segments of 15 cost 15 x 2 + 9 + 4 = 43 (part 2's
	 * 128 CTAs one wave), 8 of 16 44, 10 of 13 (two waves) 66, whole 128: 10 segment slots =
	 * 10 transfer slots */
	tile_la_fwd_args a = make_args(&calls[C_1x8192], 8, 8, 128, 1, 0, 0);
	la_plan p = plan_default(&a, 0, 132);
	const want w1[] = {{LA_K_KKT, 0, 0, 0, 0, 0}, {LA_K_FUSED, 1, 15, 1, 0, 1},
			   {LA_K_MAP_G, 1, 15, 10, 0, 1}, {LA_K_CHAIN_T, 0, 15, 10, 0, 1},
			   {LA_K_FUSED, 2, 15, 10, 0, 1}};
	expect_launches(&p, w1, 5);
	REQUIRE(&p, p.chained && p.gl.xs == 10);
	REQUIRE(&p, p.launch[0].ctas == 129 * 8 && p.launch[1].ctas == 16 &&
		   p.launch[2].ctas == 10 * 8 * 4 && p.launch[3].ctas == 10 * 8 * 2 &&
		   p.launch[4].ctas == 10 * 8 * 2);
	/* its workspace by hand: A, AQK 8192 x 8 x 64 bf16; 1/|q|, 1/|k|, Gamma, beta f32 [8,
	 * 129 x 64]; XB f32 [10, 8, 128, 128]; XPH, XPL bf16 */
	REQUIRE(&p, p.gl.aqk == 8388608 && p.gl.rq == 2 * 8388608 &&
		   p.gl.rk == 2 * 8388608 + 264192 && p.gl.gam == 2 * 8388608 + 2 * 264192 &&
		   p.gl.bet == 2 * 8388608 + 3 * 264192 && p.gl.xb == 2 * 8388608 + 4 * 264192);
	REQUIRE(&p, p.gl.xph == p.gl.xb + 10 * 8 * 128 * 128 * 4 &&
		   p.gl.xpl == p.gl.xph + 10 * 8 * 128 * 128 * 2 &&
		   p.gl.total == p.gl.xpl + 10 * 8 * 128 * 128 * 2 && p.workspace == 19935488 - 4352 + 8388608);

	/* the same without the in-kernel l2norm (nothing is bounded any more), with the
	 * softplus gate, and with chunk states (part 2 writes those of its segments) */
	la_plan q = p;
	a.use_qk_l2norm_in_kernel = 0;
	p = plan_default(&a, 0, 132);
	REQUIRE(&p, same_launches(&p, &q) && p.workspace == q.workspace);
	a = make_args(&calls[C_1x8192], 8, 8, 128, 1, 1, 1);
	p = plan_default(&a, 0, 132);
	REQUIRE(&p, same_launches(&p, &q) && p.workspace == q.workspace);

	/* 8/8 4x8192: 64 CTAs a segment; 3 segments of 43 cost 43 x 2 + 3 + 4 = 93 against 128
	 * whole (2 of 64: 134; 4 of 32, two waves: 136). Part 1 and the maps of segment 1 share
	 * one wave, so the first segment grows to the maps' 9/8: cdiv(8 x 128, 8 x 2 + 9) = 41
	 * a segment after a first of 128 - 82 = 46: cdiv(32768, 64 x 41) + 4 = 17 slots */
	a = make_args(&calls[C_4x8192], 8, 8, 128, 1, 0, 0);
	p = plan_default(&a, 0, 132);
	const want w2[] = {{LA_K_KKT, 0, 0, 0, 0, 0}, {LA_K_FUSED, 1, 41, 4, 0, 1},
			   {LA_K_MAP_G, 1, 41, 17, 0, 1}, {LA_K_CHAIN_T, 0, 41, 17, 0, 1},
			   {LA_K_FUSED, 2, 41, 17, 0, 1}};
	expect_launches(&p, w2, 5);
	REQUIRE(&p, p.gl.xs == 17 && p.first_len == 46);
	/* first_segment OFF: three of 43 as before; forced to 60: 60, then 43 */
	p = plan_of(&a, 0, 132, (tile_la_options){.first_segment = TILE_LA_OFF});
	REQUIRE(&p, p.seg_len == 43 && p.first_len == 43 && p.gl.xs == 16);
	p = plan_of(&a, 0, 132, (tile_la_options){.first_segment = 60});
	REQUIRE(&p, p.seg_len == 43 && p.first_len == 60 && p.gl.xs == 16);
	/* 16/16 8192x4 (128 CTAs whole, one wave): segments only add waves */
	a = make_args(&calls[C_4x8192], 16, 16, 128, 1, 0, 0);
	p = plan_default(&a, 0, 132);
	REQUIRE(&p, p.seg_len == 0 && p.nlaunches == 2 && p.gl.xs == 0 &&
		   p.workspace == la_workspace_min(&a, 0));

	/* 64/64 1x32768: units 128, whole */
	a = make_args(&calls[C_1x32768], 64, 64, 128, 1, 0, 0);
	p = plan_default(&a, 0, 132);
	const want w3[] = {{LA_K_KKT, 0, 0, 0, 0, 0}, {LA_K_FUSED, 0, 1, 1, 0, 1}};
	expect_launches(&p, w3, 2);

	/* varlen 8/8 1024+7168, with or without the host's lengths: 1/8 of 128 chunks = 16, 8
	 * segment slots of the batch plus one per sequence */
	for (int host = 0; host < 2; host++) {
		a = make_args(&calls[host ? C_UNEQ_HOST : C_UNEQ], 8, 8, 128, 1, 0, 0);
		p = plan_default(&a, 0, 132);
		const want w4[] = {{LA_K_KKT, 0, 0, 0, 0, 0}, {LA_K_FUSED, 1, 16, 2, 0, 1},
				   {LA_K_MAP_G, 1, 16, 10, 0, 1}, {LA_K_CHAIN_T, 0, 16, 10, 0, 1},
				   {LA_K_FUSED, 2, 16, 10, 0, 1}};
		expect_launches(&p, w4, 5);
	}
	/* 8 sequences in 4096 tokens at 1/1 (2 units): 132 / 2 = 66 splits of 64 chunks, at
	 * least 4 chunks: 16 + 8 slots; 4 sequences (two empty) in 9000 tokens: 141 chunks, 4 a
	 * segment, 36 + 4 slots */
	a = make_args(&calls[C_MANY_HOST], 1, 1, 128, 1, 0, 0);
	p = plan_default(&a, 0, 132);
	REQUIRE(&p, p.seg_len == 4 && p.seg_slots == 24 && p.gl.xs == 24);
	a = make_args(&calls[C_EMPTY_HOST], 1, 1, 128, 1, 0, 0);
	p = plan_default(&a, 0, 132);
	REQUIRE(&p, p.seg_len == 4 && p.seg_slots == 40 && p.launch[1].nx == 4);
	/* 28672+4096 with the host's lengths at 4/16 (32 units: 32 x 2 x 3 > 132, where the
	 * unknown lengths' rule cuts nothing): the replay's 4 segments of 112 (cost 234 against
	 * 449 whole), cdiv(32768, 64 x 112) + 2 = 7 slots; GDN and KDA alike; at 16/64 (128
	 * units) whole */
	for (int kda = 0; kda < 2; kda++) {
		a = make_args(&calls[C_LONG_SHORT_HOST], 4, 16, 128, 1, 0, 0);
		p = plan_default(&a, kda, 132);
		REQUIRE(&p, p.seg_len == 112 && p.seg_slots == 7 && p.chained);
		a = make_args(&calls[C_LONG_SHORT_HOST], 16, 64, 128, 1, 0, 0);
		p = plan_default(&a, kda, 132);
		REQUIRE(&p, p.seg_len == 0 && !p.chained);
	}
	/* 4 sequences of 8192 at 8/8: with the host's equal lengths as 4x8192 (2 segments of 41
	 * after 46, 17 slots); unknown lengths: 16 x 4 x 3 > 132, whole */
	a = make_args(&calls[C_EQ4_HOST], 8, 8, 128, 1, 0, 0);
	p = plan_default(&a, 0, 132);
	REQUIRE(&p, p.seg_len == 41 && p.seg_slots == 17 && p.first_len == 46 && p.chained);
	a = make_args(&calls[C_EQ4], 8, 8, 128, 1, 0, 0);
	p = plan_default(&a, 0, 132);
	REQUIRE(&p, p.seg_len == 0 && p.nlaunches == 2);

	/* forced segments of 1, 2 and 7 chunks: 1x1000 (16 chunks) at 8/8 gets 16 + 1, 8 + 1 and
	 * 3 + 1 segment slots; the varlen batch of 8 sequences (4096 tokens) 64 + 8, 32 + 8 and
	 * 10 + 8; 64/64, whole by the rule, is cut too (74 + 1) */
	static const struct { int ci, H, len, slots; } forced[] = {
		{C_1x1000, 8, 1, 17}, {C_1x1000, 8, 2, 9}, {C_1x1000, 8, 7, 4},
		{C_MANY_HOST, 8, 1, 72}, {C_MANY, 8, 2, 40}, {C_MANY_HOST, 8, 7, 18},
		{C_1x32768, 64, 7, 75}, {C_2x1000, 8, 7, 7},
	};
	for (size_t i = 0; i < sizeof forced / sizeof forced[0]; i++) {
		int32_t L = forced[i].len, S = forced[i].slots;
		a = make_args(&calls[forced[i].ci], forced[i].H, forced[i].H, 128, 1, 0, 0);
		tile_la_options o = {.gdn_segments = L};
		p = plan_of(&a, 0, 132, o);
		/* gdn_kkt2 on grids of at most three waves of two CTAs per SM (792 CTAs) */
		la_kernel k = p.s.slots * forced[i].H <= 792 ? LA_K_KKT2 : LA_K_KKT;
		const want wf[] = {{k, 0, 0, 0, 0, 0},
				   {LA_K_FUSED, 1, L, (int32_t)p.s.nseq, 0, 1},
				   {LA_K_MAP_G, 1, L, S, 0, 1}, {LA_K_CHAIN_T, 0, L, S, 0, 1},
				   {LA_K_FUSED, 2, L, S, 0, 1}};
		expect_launches(&p, wf, 5);
		REQUIRE(&p, p.gl.xs == S);
		check_invariants(&p, &a, 0, &o);
	}
	/* one chunk: nothing to cut, even forced */
	a = make_args(&calls[C_1x64], 8, 8, 128, 1, 0, 0);
	p = plan_of(&a, 0, 132, (tile_la_options){.gdn_segments = 1});
	REQUIRE(&p, p.seg_len == 0 && p.nlaunches == 2 && p.gl.xs == 0);

	/* no tokens (3x0): gdn_fused alone copies h0 to ht, no early start, no workspace */
	a = make_args(&calls[C_3x0], 8, 8, 128, 1, 0, 0);
	p = plan_of(&a, 0, 132, (tile_la_options){.gdn_segments = 1});
	const want w5[] = {{LA_K_FUSED, 0, 1, 3, 0, 0}};
	expect_launches(&p, w5, 1);
	REQUIRE(&p, p.workspace == 0);
}

/*
 * KDA on 132 SMs. Without chunk states the chained path's launches, whatever the gate, where
 * units x N x 3 <= 132 and the chained rule cuts: chunk_prep (chunk_prep_nocb at D = 128:
 * nothing reads CB), chunk_recur_t part 1, chunk_map_t chained, chunk_chain_t, chunk_recur_t
 * part 2. With chunk states chunk_recur's warmups (la_segment_len, the in-kernel l2norm):
 * mode 1 beside the maps, then mode 3.
 */
static void test_kda_plans(void **state)
{
	(void)state;
	/* 8/8 1x8192, each gate form: as GDN's, L = 15, 10 segment slots, 10 transfer slots */
	for (int gate = 0; gate < 3; gate++) {
		tile_la_fwd_args a = make_args(&calls[C_1x8192], 8, 8, 128, 1, gate, 0);
		la_plan p = plan_default(&a, 1, 132);
		const want w[] = {{LA_K_PREP_NOCB, 0, 0, 129, 0, 0}, {LA_K_RECUR_T, 1, 15, 1, 0, 1},
				  {LA_K_MAP_T, 1, 15, 10, 0, 1}, {LA_K_CHAIN_T, 0, 15, 10, 0, 1},
				  {LA_K_RECUR_T, 2, 15, 10, 0, 1}};
		expect_launches(&p, w, 5);
		REQUIRE(&p, p.chained && p.recur == LA_K_RECUR_T && !p.needs_cb && !p.map_kernel);
		REQUIRE(&p, p.kl.xs == 10 && p.kl.xbs == 10);
		REQUIRE(&p, p.launch[1].ctas == 16 && p.launch[2].ctas == 10 * 8 * 4 &&
			   p.launch[3].ctas == 10 * 8 * 2 && p.launch[4].ctas == 10 * 8 * 2);
		/* D = 64: chunk_prep (no CB-free build), 8 units: 16 segments of 8 (cost 8 x 2 +
		 * 16 + 4 = 36), 17 slots */
		a.head_dim = 64;
		p = plan_default(&a, 1, 132);
		const want w64[] = {{LA_K_PREP, 0, 0, 129, 0, 0}, {LA_K_RECUR_T, 1, 8, 1, 0, 1},
				    {LA_K_MAP_T, 1, 8, 17, 0, 1}, {LA_K_CHAIN_T, 0, 8, 17, 0, 1},
				    {LA_K_RECUR_T, 2, 8, 17, 0, 1}};
		expect_launches(&p, w64, 5);
		REQUIRE(&p, p.kl.xs == 17 && !p.needs_cb);
	}

	/* 8/8 4x8192, lower-bound gate: 16 x 4 x 3 > 132 (GDN's 3 segments of 43 are not
	 * taken), whole sequences on chunk_recur_t (64 CTAs: not chunk_recur_w), which leave half
	 * of the SMs idle: the split at 107 (la_split_len), its second part over cdiv(32768, 64 x
	 * 107) + 4 = 9 slots; no transfer slots, XB the split's 3 x 4 starts */
	tile_la_fwd_args a = make_args(&calls[C_4x8192], 8, 8, 128, 1, 2, 0);
	la_plan p = plan_default(&a, 1, 132);
	const want w2[] = {{LA_K_PREP_NOCB, 0, 107, 4 * 107, 0, 0},
			   {LA_K_RECUR_T, 1, 107, 4, 0, 1},
			   {LA_K_PREP_NOCB, 107, 21, 4 * 21, 0, 1},
			   {LA_K_RECUR_T, 3, 107, 9, 0, 1}};
	expect_launches(&p, w2, 4);
	REQUIRE(&p, p.kl.xs == 0 && p.kl.xbs == 12);

	/* 16/32 4x8192, log-space gates: units 64, whole; chunk_recur_t's 256 CTAs (two waves)
	 * and not chunk_recur_w (only where kda_wide forces it) */
	a = make_args(&calls[C_4x8192], 16, 32, 128, 1, 0, 0);
	p = plan_default(&a, 1, 132);
	const want w3[] = {{LA_K_PREP_NOCB, 0, 0, 512 + 4, 0, 0}, {LA_K_RECUR_T, 0, 0, 4, 0, 1}};
	expect_launches(&p, w3, 2);
	REQUIRE(&p, p.kl.xs == 0 && p.launch[1].ctas == 256 && p.split == 0);

	/* 4/4 2x1000 with chunk states, log-space gates: 16 chunks a sequence, units 8;
	 * segments of 4 (64 CTAs, cost 6) win: 10 segment slots, as many transfer slots; no
	 * chunk_map_t (failed warmups not expected): chunk_recur's own map CTAs (NZ 6), then
	 * mode 3 without early start; CB read (chunk_prep) */
	a = make_args(&calls[C_2x1000], 4, 4, 128, 1, 0, 1);
	p = plan_default(&a, 1, 132);
	const want w4[] = {{LA_K_PREP, 0, 0, 32 + 2, 0, 0}, {LA_K_RECUR, 1, 4, 10, 6, 1},
			   {LA_K_RECUR, 3, 4, 10, 2, 0}};
	expect_launches(&p, w4, 3);
	REQUIRE(&p, p.kl.xs == 10 && p.needs_cb && !p.chained);
	/* the lower-bound gate: chunk_map_t beside mode 1, mode 3 after it with early start */
	a = make_args(&calls[C_2x1000], 4, 4, 128, 1, 2, 1);
	p = plan_default(&a, 1, 132);
	const want w4b[] = {{LA_K_PREP, 0, 0, 32 + 2, 0, 0}, {LA_K_RECUR, 1, 4, 10, 2, 1},
			    {LA_K_MAP_T, 0, 4, 10, 0, 1}, {LA_K_RECUR, 3, 4, 10, 2, 1}};
	expect_launches(&p, w4b, 4);
	REQUIRE(&p, p.kl.xs == 10 && p.map_kernel);
	/* without the in-kernel l2norm no warmup is bounded: whole, chunk_recur mode 0 */
	a.use_qk_l2norm_in_kernel = 0;
	p = plan_default(&a, 1, 132);
	const want w4c[] = {{LA_K_PREP_NOCB, 0, 0, 32 + 2, 0, 0}, {LA_K_RECUR, 0, 1, 2, 2, 1}};
	expect_launches(&p, w4c, 2);
	REQUIRE(&p, p.kl.xs == 0 && !p.needs_cb);

	/* 8/8 1024+7168 with host lengths, lower-bound gate: the chained rule (96 <= 132), 1/8
	 * of 128 chunks: 16, 10 segment slots */
	a = make_args(&calls[C_UNEQ_HOST], 8, 8, 128, 1, 2, 0);
	p = plan_default(&a, 1, 132);
	const want w5[] = {{LA_K_PREP_NOCB, 0, 0, 128 + 2, 0, 0}, {LA_K_RECUR_T, 1, 16, 2, 0, 1},
			   {LA_K_MAP_T, 1, 16, 10, 0, 1}, {LA_K_CHAIN_T, 0, 16, 10, 0, 1},
			   {LA_K_RECUR_T, 2, 16, 10, 0, 1}};
	expect_launches(&p, w5, 5);
	REQUIRE(&p, p.kl.xs == 10);
	/* with chunk states the warmups' rule replays the known lengths (la_segment_len_known) */
	a = make_args(&calls[C_UNEQ_HOST], 8, 8, 128, 1, 2, 1);
	p = plan_default(&a, 1, 132);
	int32_t known = la_segment_len_known(132, 16, cu_1024_7168, 2, 8192);
	REQUIRE(&p, known > 0 && p.seg_len == known && !p.chained && p.kl.xs == p.seg_slots &&
		   p.seg_slots == cdiv(8192, 64 * known) + 2);

	/* no tokens (1x0, 8 heads): chunk_recur alone over the one sequence, no early start (the
	 * grid before it is the caller's) */
	a = make_args(&calls[C_1x0], 8, 8, 128, 1, 0, 0);
	p = plan_default(&a, 1, 132);
	const want w6[] = {{LA_K_RECUR, 0, 1, 1, 2, 0}};
	expect_launches(&p, w6, 1);
}

/* The plan follows the device: the chained cost's waves on 132, 114 and 78 SMs, and KDA's 3x
 * condition. */
static void test_device_sizes(void **state)
{
	(void)state;
	/* GDN 8/8 1x8192: 9 segments of 15 on 132 SMs; on 114 part 2's 128 CTAs of 9 segments
	 * would be two waves: 8 of 16 (cost 44); on 78 5 of 26 (part 2's 64 CTAs, cost 61), then
	 * the first segment the maps' 9/8: 4 of cdiv(8 x 128, 8 x 4 + 9) = 25 after 28. (On 132
	 * and 114 that rounds to equal segments: 15 after 8 x 15 and 16 after 7 x 16.) */
	static const struct { int sms, L, S, F; } g8[] = {
		{132, 15, 10, 15}, {114, 16, 9, 16}, {78, 25, 7, 28}};
	for (size_t i = 0; i < 3; i++) {
		tile_la_fwd_args a = make_args(&calls[C_1x8192], 8, 8, 128, 1, 0, 0);
		la_plan p = plan_default(&a, 0, g8[i].sms);
		int32_t L = g8[i].L, S = g8[i].S;
		REQUIRE(&p, p.first_len == g8[i].F);
		const want w[] = {{LA_K_KKT, 0, 0, 0, 0, 0}, {LA_K_FUSED, 1, L, 1, 0, 1},
				  {LA_K_MAP_G, 1, L, S, 0, 1}, {LA_K_CHAIN_T, 0, L, S, 0, 1},
				  {LA_K_FUSED, 2, L, S, 0, 1}};
		expect_launches(&p, w, 5);
		REQUIRE(&p, p.gl.xs == S);
		/* KDA the same, whatever the gate */
		a = make_args(&calls[C_1x8192], 8, 8, 128, 1, 2, 0);
		p = plan_default(&a, 1, g8[i].sms);
		REQUIRE(&p, p.chained && p.seg_len == L && p.seg_slots == S && p.kl.xs == S &&
			   p.first_len == g8[i].F);
	}
	/* 16/16 1x8192 (32 units): part 2's segments in one wave: 5 of 26 on 132 SMs (4 x 32 =
	 * 128 CTAs), 4 of 32 on 114 (3 x 32), 3 of 43 on 78 (2 x 32); then the first segment: 4
	 * of 25 after 28 on 132, 2 of 41 after 46 on 78, equal on 114 (3 of 32 after 32); KDA's
	 * too on 132 and 114 (96 <= 114), not on 78: whole, on chunk_recur_t */
	static const struct { int sms, L, S, F; } g16[] = {
		{132, 25, 7, 28}, {114, 32, 5, 32}, {78, 41, 5, 46}};
	tile_la_fwd_args a = make_args(&calls[C_1x8192], 16, 16, 128, 1, 0, 0);
	la_plan p;
	for (size_t i = 0; i < 3; i++) {
		p = plan_default(&a, 0, g16[i].sms);
		REQUIRE(&p, p.seg_len == g16[i].L && p.seg_slots == g16[i].S && p.chained &&
			   p.first_len == g16[i].F);
		p = plan_default(&a, 1, g16[i].sms);
		if (g16[i].sms == 78)
			REQUIRE(&p, p.seg_len == 0 && p.kl.xs == 0 && p.recur == LA_K_RECUR_T);
		else
			REQUIRE(&p, p.seg_len == g16[i].L && p.kl.xs == g16[i].S && p.chained &&
				   p.first_len == g16[i].F);
	}
	/* KDA 64/64 1x32768: 128 units, never cut; chunk_recur_t's 128 CTAs, one wave on 132
	 * SMs, more on 114 and 78 */
	a = make_args(&calls[C_1x32768], 64, 64, 128, 1, 0, 0);
	for (size_t si = 0; si < 3; si++) {
		p = plan_default(&a, 1, SMS[si]);
		REQUIRE(&p, p.seg_len == 0 && p.kl.xs == 0 && p.recur == LA_K_RECUR_T &&
			   p.split == 0);
		check_invariants(&p, &a, 1, &option_sets[0]);
		p = plan_default(&a, 0, SMS[si]);
		REQUIRE(&p, p.seg_len == 0 && p.gl.xs == 0);
	}
	/* with chunk states the warmups' rule cuts it where 128 CTAs are two waves (114, 78) */
	a = make_args(&calls[C_1x32768], 64, 64, 128, 1, 0, 1);
	p = plan_default(&a, 1, 132);
	REQUIRE(&p, p.seg_len == 0 && p.kl.xs == 0);
	for (size_t si = 1; si < 3; si++) {
		p = plan_default(&a, 1, SMS[si]);
		REQUIRE(&p, p.seg_len > 0 && !p.chained && p.kl.xs == p.seg_slots);
		check_invariants(&p, &a, 1, &option_sets[0]);
	}
}

static void test_describe(void **state)
{
	(void)state;
	tile_la_fwd_args a = make_args(&calls[C_1x8192], 8, 8, 128, 1, 2, 0);
	la_plan p = plan_default(&a, 1, 132);
	char text[2048];
	int n = la_plan_describe(&p, text, sizeof text);
	assert_int_equal((size_t)n, strlen(text));
	if (!strstr(text, "KDA plan: 132 SMs, 8192 tokens, 1 sequences, 129 chunk slots; "
			  "segments 15 (10 slots), first segment 15, recurrence chunk_recur_t, "
			  "prep chunk_prep_nocb, "
			  "split 0 (0 slots), transfer slots 10, chained 1, warmups' maps by chunk_map_t 0, "
			  "CB 0; exact state 0; workspace ") ||
	    !strstr(text, "  2: chunk_map_t mode 1 seg_len 15 NX 10: 320 CTAs, early start\n") ||
	    !strstr(text, "  4: chunk_recur_t mode 2 seg_len 15 NX 10: 160 CTAs, early start\n"))
		fail_msg("%s", text);
	/* cut to fit: the length it would have written, a NUL within the buffer */
	char small[20];
	assert_int_equal(la_plan_describe(&p, small, sizeof small), n);
	assert_int_equal(strlen(small), sizeof small - 1);
	assert_int_equal(la_plan_describe(&p, NULL, 0), n);
	/* GDN: its transfer slots and the chained path */
	p = plan_default(&a, 0, 132);
	la_plan_describe(&p, text, sizeof text);
	if (!strstr(text, "GDN plan: 132 SMs, 8192 tokens, 1 sequences, 129 chunk slots; "
			  "segments 15 (10 slots), first segment 15, transfer slots 10, chained 1; "
			  "exact state 0; workspace 28319744 bytes\n") ||
	    !strstr(text, "  0: gdn_kkt: 1032 CTAs\n") ||
	    !strstr(text, "  1: gdn_fused mode 1 seg_len 15 NX 1: 16 CTAs, early start\n") ||
	    !strstr(text, "  2: gdn_map_t mode 1 seg_len 15 NX 10: 320 CTAs, early start\n") ||
	    !strstr(text, "  3: chunk_chain_t mode 0 seg_len 15 NX 10: 160 CTAs, early start\n") ||
	    !strstr(text, "  4: gdn_fused mode 2 seg_len 15 NX 10: 160 CTAs, early start\n"))
		fail_msg("%s", text);
	/* 16/16: a first segment longer than the others, on each launch of the chained path */
	a = make_args(&calls[C_1x8192], 16, 16, 128, 1, 0, 0);
	p = plan_default(&a, 0, 132);
	la_plan_describe(&p, text, sizeof text);
	if (!strstr(text, "segments 25 (7 slots), first segment 28, transfer slots 7") ||
	    !strstr(text, "  1: gdn_fused mode 1 seg_len 25 first_len 28 NX 1: 32 CTAs") ||
	    !strstr(text, "  2: gdn_map_t mode 1 seg_len 25 first_len 28 NX 7: 448 CTAs") ||
	    !strstr(text, "  3: chunk_chain_t mode 0 seg_len 25 first_len 28 NX 7: 224 CTAs") ||
	    !strstr(text, "  4: gdn_fused mode 2 seg_len 25 first_len 28 NX 7: 224 CTAs"))
		fail_msg("%s", text);
}

static void test_bad_inputs(void **state)
{
	(void)state;
	tile_la_fwd_args a = make_args(&calls[C_1x8192], 8, 8, 128, 1, 0, 0);
	tile_la_options o;
	memset(&o, 0, sizeof o);
	la_device dev = {0, 0};
	la_plan p;
	assert_int_equal(la_plan_make(&a, 1, &dev, &o, &p), TILE_ERR_ARG);
	dev.sm_count = 132;
	assert_int_equal(la_plan_make(NULL, 1, &dev, &o, &p), TILE_ERR_ARG);
	assert_int_equal(la_plan_make(&a, 1, NULL, &o, &p), TILE_ERR_ARG);
	assert_int_equal(la_plan_make(&a, 1, &dev, NULL, &p), TILE_ERR_ARG);
	assert_int_equal(la_plan_make(&a, 1, &dev, &o, NULL), TILE_ERR_ARG);
	/* the least workspace (no transfer slots) is no more than any plan's, and exactly the
	 * plan's without segments */
	for (size_t si = 0; si < 3; si++) {
		dev.sm_count = SMS[si];
		for (int kda = 0; kda < 2; kda++) {
			o.gdn_segments = o.kda_segments = TILE_LA_AUTO;
			assert_int_equal(la_plan_make(&a, kda, &dev, &o, &p), TILE_OK);
			assert_true(p.seg_len > 0 && la_workspace_min(&a, kda) < p.workspace);
			o.gdn_segments = o.kda_segments = TILE_LA_OFF;
			assert_int_equal(la_plan_make(&a, kda, &dev, &o, &p), TILE_OK);
			assert_int_equal(la_workspace_min(&a, kda), p.workspace);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_invariants), cmocka_unit_test(test_options),
		cmocka_unit_test(test_gdn_plans),  cmocka_unit_test(test_kda_plans),
		cmocka_unit_test(test_device_sizes), cmocka_unit_test(test_describe),
		cmocka_unit_test(test_bad_inputs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
