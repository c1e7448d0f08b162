/*
 * test_la_plan.c: la_plan_make (kernels/src/la_plan.c) on the CPU, no driver.
 *   - The plans of a table of calls (GDN and KDA; fixed length and varlen with and without
 *     host lengths; few and many heads; D 64 and 128; l2norm on and off; the gate forms;
 *     chunk states; no tokens) on devices of 132, 114 and 78 SMs hold the invariants every
 *     plan must: the grids cover every chunk, segment slots stay within the chunk slots and
 *     the workspace's slots, the workspace holds every region the launches use, modes follow
 *     each other as the kernels expect.
 *   - Each option forces what tile_la.h says it does.
 *   - On 132 SMs (H200), the plans of named calls equal what la.c chose before the plan
 *     existed: the expected values are worked out from that code's rules in the comments.
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
	tile_la_options o;
	memset(&o, 0, sizeof o);
	return plan_of(a, kda, sms, o);
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

static const la_launch *first_of(const la_plan *p, la_kernel k)
{
	for (int i = 0; i < p->nlaunches; i++)
		if (p->launch[i].kernel == k)
			return &p->launch[i];
	return NULL;
}

/* Workspace regions: every region fits before the next and the total holds the last. */
static void check_kda_layout(const la_plan *p, const tile_la_fwd_args *a)
{
	const la_kda_layout *l = &p->kl;
	size_t hv = (size_t)a->num_v_heads, d = (size_t)a->head_dim;
	size_t srows = p->s.tokens > 0 ? (size_t)p->s.slots * 64 * hv : 0;
	size_t mat = srows * d * 2;
	REQUIRE(p, l->w == 0 && l->u >= l->w + mat && l->qg >= l->u + mat);
	REQUIRE(p, l->kg >= l->qg + mat && l->aqk >= l->kg + mat);
	REQUIRE(p, l->dec >= l->aqk + (size_t)p->s.tokens * hv * 64 * 2);
	REQUIRE(p, l->cb >= l->dec + (size_t)p->s.slots * hv * d * 4);
	REQUIRE(p, l->xb >= l->cb + hv * (size_t)p->s.slots * 4);
	REQUIRE(p, l->xph >= l->xb + (size_t)l->xbs * hv * d * d * 4);
	REQUIRE(p, l->xpl >= l->xph + (size_t)l->xs * hv * d * d * 2);
	REQUIRE(p, l->total >= l->xpl + (size_t)l->xs * hv * d * d * 2);
	REQUIRE(p, l->xbs >= l->xs && p->workspace == l->total);
	size_t offs[] = {l->w, l->u, l->qg, l->kg, l->aqk, l->dec, l->cb, l->xb, l->xph, l->xpl,
			 l->total};
	for (size_t i = 0; i < sizeof offs / sizeof offs[0]; i++)
		REQUIRE(p, offs[i] % 256 == 0);
}

static void check_gdn_layout(const la_plan *p, const tile_la_fwd_args *a)
{
	const la_gdn_layout *l = &p->gl;
	size_t tp = (size_t)p->s.slots * 64, hv = (size_t)a->num_v_heads;
	if (p->s.tokens == 0) {
		REQUIRE(p, l->total == 0 && p->workspace == 0);
		return;
	}
	REQUIRE(p, l->rq >= (size_t)p->s.tokens * hv * 64 * 2);
	REQUIRE(p, l->rk >= l->rq + (size_t)a->num_heads * tp * 4);
	REQUIRE(p, l->gam >= l->rk + (size_t)a->num_heads * tp * 4);
	REQUIRE(p, l->bet >= l->gam + hv * tp * 4 && l->cb >= l->bet + hv * tp * 4);
	REQUIRE(p, l->fl >= l->cb + hv * (size_t)p->s.slots * 4);
	REQUIRE(p, l->total >= l->fl + hv * (size_t)p->s.slots * 4 && p->workspace == l->total);
}

/* Segments of L chunks: at most the chunk slots (GDN's flags and KDA's bounds are per chunk
 * slot), at least the segments of every sequence (equal lengths: N cdiv(C, L); any: the
 * bound cdiv(TT, 64 L) + N). */
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

static void check_invariants(const la_plan *p, const tile_la_fwd_args *a, int kda)
{
	int32_t nseq = (int32_t)p->s.nseq, nsl = a->head_dim / 64;
	int tokens = p->s.tokens > 0;
	REQUIRE(p, p->nlaunches >= 1 && p->nlaunches < LA_MAX_LAUNCHES);
	for (int i = 0; i < p->nlaunches; i++) {
		const la_launch *l = &p->launch[i];
		REQUIRE(p, l->ctas > 0 && l->ctas <= INT32_MAX);
		/* early start only after a kernel of this call (the first follows the caller's) */
		REQUIRE(p, !(i == 0 && l->early_start));
	}
	check_segments(p, p->seg_len, p->seg_slots);
	if (!kda) {
		check_gdn_layout(p, a);
		REQUIRE(p, count_of(p, LA_K_KKT) == tokens && p->launch[0].kernel ==
			(tokens ? LA_K_KKT : LA_K_FUSED));
		const la_launch *f = first_of(p, LA_K_FUSED);
		REQUIRE(p, f && f->early_start == tokens);
		if (p->seg_len == 0) {
			REQUIRE(p, count_of(p, LA_K_FUSED) == 1 && f->mode == 0 && f->nx == nseq &&
				   f->seg_len == 1);
		} else {
			const la_launch *f2 = f + 1;
			REQUIRE(p, count_of(p, LA_K_FUSED) == 2 && f->mode == 1 &&
				   f->nx == p->seg_slots && f2->mode == 2 && f2->nx == nseq);
			REQUIRE(p, a->use_qk_l2norm_in_kernel); /* the warmup's bound needs it */
		}
		return;
	}
	check_kda_layout(p, a);
	int preps = count_of(p, LA_K_PREP) + count_of(p, LA_K_PREP_NOCB);
	REQUIRE(p, p->prep == LA_K_PREP || (a->head_dim == 128 && !p->needs_cb));
	if (p->split > 0) {
		/* two chunk_prep launches over complementary chunk ranges of every sequence */
		const la_launch *l = p->launch;
		REQUIRE(p, p->nlaunches == 4 && preps == 2 && p->recur == LA_K_RECUR_T);
		REQUIRE(p, p->seq_chunks > 0 && 2 * p->split >= p->seq_chunks &&
			   p->split < p->seq_chunks);
		REQUIRE(p, l[0].c0 == 0 && l[0].nc == p->split && l[0].nx == nseq * p->split);
		REQUIRE(p, l[2].c0 == p->split && l[2].c0 + l[2].nc == p->seq_chunks &&
			   l[2].nx == nseq * l[2].nc);
		REQUIRE(p, l[1].kernel == LA_K_RECUR_T && l[1].mode == 1 && l[1].nx == nseq);
		REQUIRE(p, l[3].kernel == LA_K_RECUR_T && l[3].mode == 3 &&
			   l[3].nx == p->split_slots);
		REQUIRE(p, p->split_slots <= p->kl.xbs && !p->needs_cb);
		REQUIRE(p, nseq * p->seq_chunks * 64 >= p->s.tokens);
		return;
	}
	/* chunk_prep over every chunk slot, unless there are no tokens */
	REQUIRE(p, preps == tokens);
	if (tokens)
		REQUIRE(p, p->launch[0].nx == p->s.slots && p->launch[0].nc == 0);
	if (p->transfer)
		REQUIRE(p, p->seg_len > 0 && p->seg_slots <= p->kl.xs);
	REQUIRE(p, !p->chained || (p->transfer && p->map_kernel && p->transposed_allowed));
	REQUIRE(p, !p->transposed_allowed || (!a->chunk_states && tokens));
	if (p->recur == LA_K_RECUR_T || p->recur == LA_K_RECUR_W)
		REQUIRE(p, !a->chunk_states && tokens);
	if (p->recur == LA_K_RECUR_W)
		REQUIRE(p, a->head_dim == 128);
	const la_launch *r = p->launch + tokens;
	if (p->recur == LA_K_RECUR && p->seg_len == 0) {
		REQUIRE(p, r->kernel == LA_K_RECUR && r->mode == 0 && r->nx == nseq && r->nz == nsl);
	} else if (p->chained) {
		REQUIRE(p, r[0].kernel == LA_K_RECUR_T && r[0].mode == 1 && r[0].nx == nseq);
		REQUIRE(p, r[1].kernel == LA_K_MAP_T && r[1].mode == 1 && r[1].nx == p->seg_slots);
		REQUIRE(p, r[2].kernel == LA_K_CHAIN_T && r[2].nx == p->seg_slots);
		REQUIRE(p, r[3].kernel == LA_K_RECUR_T && r[3].mode == 2 && r[3].nx == p->seg_slots);
		REQUIRE(p, !p->needs_cb);
	} else if (p->recur == LA_K_RECUR) {
		/* segments with warmups (which read CB), then the failed ones */
		REQUIRE(p, r->kernel == LA_K_RECUR && r->mode == 1 && r->nx == p->seg_slots);
		REQUIRE(p, r->nz == (p->transfer && !p->map_kernel ? 3 : 1) * nsl && p->needs_cb);
		const la_launch *last = &p->launch[p->nlaunches - 1];
		REQUIRE(p, last->kernel == LA_K_RECUR && last->mode == (p->transfer ? 3 : 2));
		REQUIRE(p, last->nx == (p->transfer ? p->seg_slots : nseq));
		REQUIRE(p, count_of(p, LA_K_MAP_T) == (p->transfer && p->map_kernel));
	} else if (p->seg_w > 0) {
		/* chunk_recur_w's segments, then chunk_recur's mode 2 for failed warmups */
		check_segments(p, p->seg_w, r->nx);
		REQUIRE(p, r->kernel == LA_K_RECUR_W && r->seg_len == p->seg_w && p->needs_cb);
		REQUIRE(p, r[1].kernel == LA_K_RECUR && r[1].mode == 2 && r[1].nx == nseq);
	} else {
		REQUIRE(p, r->kernel == p->recur && r->mode == 0 && r->nx == nseq &&
			   r->seg_len == 0 && !p->needs_cb);
	}
}

/* Every call of the table, every head count, D, l2norm, gate form and chunk states, on
 * every device size. */
static void test_invariants(void **state)
{
	(void)state;
	int n = 0;
	for (size_t ci = 0; ci < sizeof calls / sizeof calls[0]; ci++)
		for (size_t hi = 0; hi < sizeof heads / sizeof heads[0]; hi++)
			for (int D = 64; D <= 128; D += 64)
				for (int l2 = 0; l2 < 2; l2++)
					for (int kda = 0; kda < 2; kda++)
						for (int gate = 0; gate < (kda ? 3 : 2); gate++)
							for (int cs = 0; cs < 2; cs++)
								for (size_t si = 0; si < 3; si++) {
									tile_la_fwd_args a = make_args(
										&calls[ci], heads[hi][0],
										heads[hi][1], D, l2, gate, cs);
									la_plan p = plan_default(&a, kda, SMS[si]);
									check_invariants(&p, &a, kda);
									n++;
								}
	print_message("%d plans checked\n", n);
}

/* The options force what tile_la.h says, on every device size. */
static void test_options(void **state)
{
	(void)state;
	for (size_t si = 0; si < 3; si++) {
		int sms = SMS[si];
		tile_la_fwd_args a = make_args(&calls[4], 8, 8, 128, 1, 0, 0); /* 1x32768 */
		/* segments forced, on GDN exactly; KDA's at least as long (fitted to the maps) and
		 * exactly without the maps */
		la_plan p = plan_of(&a, 0, sms, (tile_la_options){.gdn_segments = 8});
		REQUIRE(&p, p.seg_len == 8);
		check_invariants(&p, &a, 0);
		p = plan_of(&a, 0, sms, (tile_la_options){.gdn_segments = TILE_LA_OFF});
		REQUIRE(&p, p.seg_len == 0);
		p = plan_of(&a, 0, sms, (tile_la_options){.gdn_segments = 512}); /* not below 512 */
		REQUIRE(&p, p.seg_len == 0);
		p = plan_of(&a, 1, sms, (tile_la_options){.kda_segments = 8});
		REQUIRE(&p, p.seg_len >= 8 && p.transfer);
		check_invariants(&p, &a, 1);
		p = plan_of(&a, 1, sms, (tile_la_options){.kda_segments = 8,
							  .kda_transfer_maps = TILE_LA_OFF});
		REQUIRE(&p, p.seg_len == 8 && !p.transfer && count_of(&p, LA_K_MAP_T) == 0);
		check_invariants(&p, &a, 1);
		p = plan_of(&a, 1, sms, (tile_la_options){.kda_segments = TILE_LA_OFF});
		REQUIRE(&p, p.seg_len == 0 && p.kl.xs == 0);
		/* the map kernel: on, off */
		p = plan_of(&a, 1, sms, (tile_la_options){.kda_segments = 8,
							  .kda_map_kernel = TILE_LA_ON});
		REQUIRE(&p, p.chained && count_of(&p, LA_K_MAP_T) == 1);
		p = plan_of(&a, 1, sms, (tile_la_options){.kda_segments = 8,
							  .kda_map_kernel = TILE_LA_OFF});
		REQUIRE(&p, !p.chained && count_of(&p, LA_K_MAP_T) == 0 && p.launch[1].nz == 6);
		/* chunk_recur_t off: chunk_recur, whole sequences */
		p = plan_of(&a, 1, sms, (tile_la_options){.kda_segments = TILE_LA_OFF,
							  .kda_transposed = TILE_LA_OFF});
		REQUIRE(&p, p.recur == LA_K_RECUR && count_of(&p, LA_K_RECUR_T) == 0);
		/* chunk_recur_w forced on and off over whole sequences */
		p = plan_of(&a, 1, sms, (tile_la_options){.kda_segments = TILE_LA_OFF,
							  .kda_wide = TILE_LA_ON});
		REQUIRE(&p, p.recur == LA_K_RECUR_W);
		p = plan_of(&a, 1, sms, (tile_la_options){.kda_segments = TILE_LA_OFF,
							  .kda_wide = TILE_LA_OFF});
		REQUIRE(&p, p.recur == LA_K_RECUR_T);
		/* chunk_prep_nocb off: chunk_prep even where nothing reads CB */
		p = plan_of(&a, 1, sms, (tile_la_options){.kda_segments = TILE_LA_OFF,
							  .kda_prep_nocb = TILE_LA_OFF});
		REQUIRE(&p, p.prep == LA_K_PREP && !p.needs_cb);
		p = plan_of(&a, 1, sms, (tile_la_options){.kda_segments = TILE_LA_OFF});
		REQUIRE(&p, p.prep == LA_K_PREP_NOCB);
		/* the split: off, and forced to a valid first part (8/8 4x8192, lower-bound gate) */
		tile_la_fwd_args b = make_args(&calls[5], 8, 8, 128, 1, 2, 0);
		p = plan_of(&b, 1, sms, (tile_la_options){.kda_split = TILE_LA_OFF});
		REQUIRE(&p, p.split == 0);
		p = plan_of(&b, 1, sms, (tile_la_options){.kda_split = 96});
		if (sms == 132)
			REQUIRE(&p, p.split == 96 && p.split_slots == cdiv(32768, 64 * 96) + 4);
		else /* 64 chunk_recur_t CTAs leave less than half of 114 or 78 SMs: no split */
			REQUIRE(&p, p.split == 0);
		check_invariants(&p, &b, 1);
		p = plan_of(&b, 1, sms, (tile_la_options){.kda_split = 63}); /* below C / 2 */
		REQUIRE(&p, p.split == 0);
		/* every option at once still makes a valid plan */
		tile_la_options all = {4, 4, 96, TILE_LA_OFF, TILE_LA_OFF, TILE_LA_ON, TILE_LA_ON,
				       TILE_LA_OFF};
		for (int kda = 0; kda < 2; kda++) {
			p = plan_of(&b, kda, sms, all);
			check_invariants(&p, &b, kda);
		}
	}
	tile_la_options bad;
	memset(&bad, 0, sizeof bad);
	assert_null(la_options_bad_field(&bad));
	bad.kda_wide = 2;
	assert_string_equal(la_options_bad_field(&bad), "kda_wide");
	bad.kda_wide = 0, bad.gdn_segments = -2;
	assert_string_equal(la_options_bad_field(&bad), "gdn_segments");
	bad.gdn_segments = 1 << 30;
	assert_null(la_options_bad_field(&bad));
}

/* What a launch is expected to be: kernel, mode (part, chained), seg_len, NX, NZ, early. */
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
			snprintf(what, sizeof what, "launch %d differs from what la.c chose", i);
			fail_plan(p, what);
		}
	}
}

/*
 * The plans la.c chose before the plan existed, on 132 SMs; each worked out from its rules:
 * la_segment_len_equal's cost is waves x (L + 2) (1 wave of 132 CTAs: units x N x segments
 * <= 132), transfer slots cdiv(TT, 512) + 16 where the plain rule cuts, the chained path for
 * the lower-bound gate without chunk states, chunk_prep_nocb at D = 128 where nothing reads CB.
 */
static void test_h200_plans(void **state)
{
	(void)state;
	/* KDA 8/8 1x8192, lower-bound gate: units 16, 16 x 3 <= 132 so segments may pay; one wave
	 * holds 8 segments of 16 chunks (cost 18, against 128 whole): L = 16, 9 segment slots,
	 * 32 transfer slots; the chained path (CB unread: chunk_prep_nocb) */
	tile_la_fwd_args a = make_args(&calls[3], 8, 8, 128, 1, 2, 0);
	la_plan p = plan_default(&a, 1, 132);
	REQUIRE(&p, p.seg_len == 16 && p.seg_slots == 9 && p.kl.xs == 32 && p.chained);
	const want w1[] = {{LA_K_PREP_NOCB, 0, 0, 129, 0, 0}, {LA_K_RECUR_T, 1, 16, 1, 0, 1},
			   {LA_K_MAP_T, 1, 16, 9, 0, 1}, {LA_K_CHAIN_T, 0, 16, 9, 0, 1},
			   {LA_K_RECUR_T, 2, 16, 9, 0, 1}};
	expect_launches(&p, w1, 5);
	REQUIRE(&p, p.launch[1].ctas == 16 && p.launch[2].ctas == 9 * 8 * 4);

	/* KDA 8/8 4x8192, lower-bound gate: 16 x 4 x 3 > 132, whole sequences on chunk_recur_t
	 * (64 CTAs: not chunk_recur_w), which leave half of the SMs idle: the split at 107
	 * (la_split_len), its second part over cdiv(32768, 64 x 107) + 4 = 9 slots */
	a = make_args(&calls[5], 8, 8, 128, 1, 2, 0);
	p = plan_default(&a, 1, 132);
	const want w2[] = {{LA_K_PREP_NOCB, 0, 107, 4 * 107, 0, 0}, {LA_K_RECUR_T, 1, 107, 4, 0, 1},
			   {LA_K_PREP_NOCB, 107, 21, 4 * 21, 0, 1}, {LA_K_RECUR_T, 3, 107, 9, 0, 1}};
	expect_launches(&p, w2, 4);
	/* its transfer slots: the plain rule cuts 4 x 128 chunks at 16 units into halves (two
	 * segments of 64 fill 128 of 132 SMs: cost 66 against 128), so 64 + 16 = 80 */
	REQUIRE(&p, p.kl.xs == 80 && p.kl.xbs == 80);

	/* KDA 16/32 4x8192, log-space gates: units 64; whole sequences are 2 waves (256 CTAs,
	 * cost 256), halves 4 waves (264): whole, on chunk_recur_w (256 chunk_recur_t CTAs are
	 * more than the SMs); no transfer slots */
	a = make_args(&calls[5], 16, 32, 128, 1, 0, 0);
	p = plan_default(&a, 1, 132);
	const want w3[] = {{LA_K_PREP_NOCB, 0, 0, 512 + 4, 0, 0}, {LA_K_RECUR_W, 0, 0, 4, 0, 1}};
	expect_launches(&p, w3, 2);
	REQUIRE(&p, p.kl.xs == 0 && p.launch[1].ctas == 128);

	/* KDA 4/4 2x1000 with chunk states, log-space gates: 16 chunks a sequence, units 8;
	 * segments of 4 (64 CTAs, cost 6) win; 10 segment slots of cdiv(2000, 512) + 16 = 20;
	 * no chunk_map_t (failed warmups not expected): chunk_recur's own map CTAs (NZ 6), then
	 * mode 3 without early start; CB read (chunk_prep) */
	a = make_args(&calls[2], 4, 4, 128, 1, 0, 1);
	p = plan_default(&a, 1, 132);
	const want w4[] = {{LA_K_PREP, 0, 0, 32 + 2, 0, 0}, {LA_K_RECUR, 1, 4, 10, 6, 1},
			   {LA_K_RECUR, 3, 4, 10, 2, 0}};
	expect_launches(&p, w4, 3);
	REQUIRE(&p, p.kl.xs == 20);

	/* KDA 8/8 1024+7168 with host lengths, lower-bound gate: the failing rule goes first
	 * (16 x 2 x 3 <= 132), unequal lengths: cdiv(128, max(132 / 16, 8)) = 16; transfer
	 * slots 16 + 16 = 32; 10 segment slots; chained */
	a = make_args(&calls[12], 8, 8, 128, 1, 2, 0);
	p = plan_default(&a, 1, 132);
	const want w5[] = {{LA_K_PREP_NOCB, 0, 0, 128 + 2, 0, 0}, {LA_K_RECUR_T, 1, 16, 2, 0, 1},
			   {LA_K_MAP_T, 1, 16, 10, 0, 1}, {LA_K_CHAIN_T, 0, 16, 10, 0, 1},
			   {LA_K_RECUR_T, 2, 16, 10, 0, 1}};
	expect_launches(&p, w5, 5);

	/* KDA, no tokens (1x0, 8 heads): chunk_recur alone over the one sequence, no early
	 * start (the grid before it is the caller's) */
	a = make_args(&calls[8], 8, 8, 128, 1, 0, 0);
	p = plan_default(&a, 1, 132);
	const want w6[] = {{LA_K_RECUR, 0, 1, 1, 2, 0}};
	expect_launches(&p, w6, 1);

	/* GDN 8/8 1x8192: units 16, as the first: segments of 16 (mode 1 over 9 slots, early),
	 * then mode 2 over the sequence */
	a = make_args(&calls[3], 8, 8, 128, 1, 0, 0);
	p = plan_default(&a, 0, 132);
	const want w7[] = {{LA_K_KKT, 0, 0, 0, 0, 0}, {LA_K_FUSED, 1, 16, 9, 0, 1},
			   {LA_K_FUSED, 2, 16, 1, 0, 0}};
	expect_launches(&p, w7, 3);
	REQUIRE(&p, p.launch[0].ctas == 129 * 8);

	/* GDN 64/64 1x32768: units 128, whole is one wave (cost 512), halves two (516): whole */
	a = make_args(&calls[4], 64, 64, 128, 1, 0, 0);
	p = plan_default(&a, 0, 132);
	const want w8[] = {{LA_K_KKT, 0, 0, 0, 0, 0}, {LA_K_FUSED, 0, 1, 1, 0, 1}};
	expect_launches(&p, w8, 2);

	/* without the l2norm nothing is cut (the warmup's bound needs |k| <= 1) */
	a = make_args(&calls[3], 8, 8, 128, 0, 0, 0);
	p = plan_default(&a, 0, 132);
	REQUIRE(&p, p.seg_len == 0);
}

/* The plan follows the device: what 132 SMs run whole, fewer SMs cut (and the workspace has
 * the transfer maps for it); segment lengths follow the waves. */
static void test_device_sizes(void **state)
{
	(void)state;
	/* KDA 64/64 1x32768: 128 CTAs, one wave on 132 SMs (whole, no maps), two on 114 and 78 */
	tile_la_fwd_args a = make_args(&calls[4], 64, 64, 128, 1, 0, 0);
	la_plan p = plan_default(&a, 1, 132);
	REQUIRE(&p, p.seg_len == 0 && p.kl.xs == 0);
	for (size_t si = 1; si < 3; si++) {
		p = plan_default(&a, 1, SMS[si]);
		REQUIRE(&p, p.seg_len > 0 && p.kl.xs == 64 + 16 && p.transfer);
		check_invariants(&p, &a, 1);
	}
	/* KDA 8/8 1x8192, lower-bound gate, on 78 SMs: one wave holds 4 segments of 32 chunks
	 * (cost 34; 8 of 16 would be two waves, 36): L = 32, 5 segment slots */
	a = make_args(&calls[3], 8, 8, 128, 1, 2, 0);
	p = plan_default(&a, 1, 78);
	REQUIRE(&p, p.seg_len == 32 && p.seg_slots == 5 && p.chained);
	/* the workspace query and the plan agree: the plan's workspace is its layout's total */
	REQUIRE(&p, p.workspace == p.kl.total);
}

static void test_describe(void **state)
{
	(void)state;
	tile_la_fwd_args a = make_args(&calls[3], 8, 8, 128, 1, 2, 0);
	la_plan p = plan_default(&a, 1, 132);
	char text[2048];
	int n = la_plan_describe(&p, text, sizeof text);
	assert_int_equal((size_t)n, strlen(text));
	if (!strstr(text, "KDA plan: 132 SMs, 8192 tokens, 1 sequences, 129 chunk slots; "
			  "segments 16 (9 slots), recurrence chunk_recur, prep chunk_prep_nocb") ||
	    !strstr(text, "  2: chunk_map_t mode 1 seg_len 16 NX 9: 288 CTAs, early start\n"))
		fail_msg("%s", text);
	/* cut to fit: the length it would have written, a NUL within the buffer */
	char small[20];
	assert_int_equal(la_plan_describe(&p, small, sizeof small), n);
	assert_int_equal(strlen(small), sizeof small - 1);
	assert_int_equal(la_plan_describe(&p, NULL, 0), n);
}

static void test_bad_inputs(void **state)
{
	(void)state;
	tile_la_fwd_args a = make_args(&calls[3], 8, 8, 128, 1, 0, 0);
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
	/* the least workspace (no transfer maps) is no more than any plan's */
	for (size_t si = 0; si < 3; si++) {
		dev.sm_count = SMS[si];
		assert_int_equal(la_plan_make(&a, 1, &dev, &o, &p), TILE_OK);
		assert_true(la_workspace_min(&a, 1) <= p.workspace);
		assert_int_equal(la_plan_make(&a, 0, &dev, &o, &p), TILE_OK);
		assert_int_equal(la_workspace_min(&a, 0), p.workspace);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_invariants), cmocka_unit_test(test_options),
		cmocka_unit_test(test_h200_plans), cmocka_unit_test(test_device_sizes),
		cmocka_unit_test(test_describe),   cmocka_unit_test(test_bad_inputs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
