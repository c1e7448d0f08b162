/* drive.c (see run.sh): the GDN/KDA forward over a table of calls on the fake driver, each
 * call printed (with lalog.so preloaded, each launch too). -DNEW: the handle's options and
 * workspace query; else the environment variables and the query without a handle. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tile.h"
#include "tile_la.h"

#define ADDR(n) ((void *)((uintptr_t)(n) << 44))

static tile_la *la;

typedef struct envset { const char *name, *value; } envset;

#ifdef NEW
static int count_opt(const char *v)
{
	long n = strtol(v, NULL, 10);
	return n > 0 ? (int)n : TILE_LA_OFF;
}
static int off_opt(const char *v) { return strcmp(v, "0") == 0 ? TILE_LA_OFF : TILE_LA_AUTO; }
static int switch_opt(const char *v)
{
	return strcmp(v, "0") == 0 ? TILE_LA_OFF : strcmp(v, "1") == 0 ? TILE_LA_ON : TILE_LA_AUTO;
}
static void apply(const envset *e)
{
	tile_la_options o;
	memset(&o, 0, sizeof o);
	for (; e && e->name; e++) {
		const char *n = e->name + strlen("TILE_LA_"), *v = e->value;
		if (!strcmp(n, "GDN_CP")) o.gdn_segments = count_opt(v);
		else if (!strcmp(n, "KDA_CP")) o.kda_segments = count_opt(v);
		else if (!strcmp(n, "KDA_SPLIT")) o.kda_split = count_opt(v);
		else if (!strcmp(n, "KDA_T")) o.kda_transposed = off_opt(v);
		else if (!strcmp(n, "KDA_W")) o.kda_wide = switch_opt(v);
		else if (!strcmp(n, "KDA_MAPT")) o.kda_map_kernel = switch_opt(v);
		else if (!strcmp(n, "KDA_NOCB")) o.kda_prep_nocb = off_opt(v);
		else if (!strcmp(n, "BWD_W")) o.bwd_wide = switch_opt(v);
		else if (!strcmp(n, "EXACT_STATE")) o.exact_state = switch_opt(v);
	}
	if (tile_la_set_options(la, &o)) { printf("set_options: %s\n", tile_la_error(la)); exit(1); }
}
static tile_status query(const tile_la_fwd_args *a, int kda, size_t *ws)
{
	return kda ? tile_la_kda_fwd_workspace(la, a, ws) : tile_la_gdn_fwd_workspace(la, a, ws);
}
#else
static const char *const all_env[] = {"TILE_LA_GDN_CP", "TILE_LA_KDA_CP", "TILE_LA_KDA_SPLIT",
	"TILE_LA_KDA_XFER", "TILE_LA_KDA_T", "TILE_LA_KDA_W", "TILE_LA_KDA_MAPT", "TILE_LA_KDA_NOCB"};
static void apply(const envset *e)
{
	for (size_t i = 0; i < sizeof all_env / sizeof all_env[0]; i++)
		unsetenv(all_env[i]);
	for (; e && e->name; e++)
		setenv(e->name, e->value, 1);
}
static tile_status query(const tile_la_fwd_args *a, int kda, size_t *ws)
{
	return kda ? tile_la_kda_fwd_workspace(a, ws) : tile_la_gdn_fwd_workspace(a, ws);
}
#endif

typedef struct shape { const char *label; int batch, T, nseq; const int32_t *cu; int host; } shape;

static const int32_t cu_eq4[] = {0, 8192, 16384, 24576, 32768};
static const int32_t cu_uneq2[] = {0, 1024, 8192};
static const int32_t cu_uneq3[] = {0, 3000, 3100, 9000};
static const int32_t cu_long_short[] = {0, 28672, 32768};
static const int32_t cu_many[] = {0, 500, 1000, 1600, 2000, 2100, 2200, 4000, 4096};
static const int32_t cu_eq2k[] = {0, 2048, 4096, 6144, 8192};

static const shape shapes[] = {
	{"1x64", 1, 64, 0, NULL, 0}, {"1x1000", 1, 1000, 0, NULL, 0}, {"2x1000", 2, 1000, 0, NULL, 0},
	{"1x8192", 1, 8192, 0, NULL, 0}, {"1x32768", 1, 32768, 0, NULL, 0},
	{"4x8192", 4, 8192, 0, NULL, 0}, {"8x2048", 8, 2048, 0, NULL, 0},
	{"2x4096", 2, 4096, 0, NULL, 0}, {"1x0", 1, 0, 0, NULL, 0}, {"3x0", 3, 0, 0, NULL, 0},
	{"cu eq4 host", 1, 32768, 4, cu_eq4, 1}, {"cu eq4 nohost", 1, 32768, 4, cu_eq4, 0},
	{"cu 1024+7168 host", 1, 8192, 2, cu_uneq2, 1}, {"cu 1024+7168 nohost", 1, 8192, 2, cu_uneq2, 0},
	{"cu 3 host", 1, 9000, 3, cu_uneq3, 1},
	{"cu 28672+4096 host", 1, 32768, 2, cu_long_short, 1},
	{"cu 28672+4096 nohost", 1, 32768, 2, cu_long_short, 0},
	{"cu many host", 1, 4096, 8, cu_many, 1}, {"cu many nohost", 1, 4096, 8, cu_many, 0},
	{"cu eq2k host", 1, 8192, 4, cu_eq2k, 1}, {"cu one", 1, 8192, 1, cu_eq2k, 0},
};
static const int heads[][2] = {{1, 1}, {2, 2}, {2, 8}, {4, 4}, {8, 8}, {16, 16}, {16, 32},
			       {32, 32}, {64, 64}};

static void run(int kda, const shape *s, int H, int HV, int D, int l2, int gate, int cs, int h0,
		const envset *env, const char *envlabel)
{
	tile_la_fwd_args a;
	memset(&a, 0, sizeof a);
	a.batch = s->batch, a.seq_len = s->T, a.num_heads = H, a.num_v_heads = HV, a.head_dim = D;
	a.dtype = (D == 64 && HV == 2) ? TILE_LA_F16 : TILE_LA_BF16;
	a.q = ADDR(1), a.k = ADDR(2), a.v = ADDR(3), a.g = ADDR(4), a.beta = ADDR(5), a.o = ADDR(6);
	if (h0)
		a.initial_state = ADDR(8);
	a.final_state = ADDR(9);
	if (s->cu) {
		a.cu_seqlens = (const int32_t *)ADDR(12);
		a.num_seqs = s->nseq;
		if (s->host)
			a.cu_seqlens_host = s->cu;
	}
	a.use_qk_l2norm_in_kernel = l2;
	if (gate) {
		a.use_gate_in_kernel = 1;
		a.A_log = ADDR(10);
		a.dt_bias = ADDR(11);
		if (gate == 2)
			a.use_lower_bound = 1, a.lower_bound = -5.0f;
	}
	if (cs) {
		a.chunk_states = ADDR(13);
		a.num_chunk_states = s->T / 64 + (s->cu ? s->nseq : s->batch) + 1;
	}
	a.use_beta_sigmoid_in_kernel = 1;
	a.scale = 0.0f;
	a.workspace = ADDR(16);
	apply(env);
	size_t ws = 0;
	tile_status st = query(&a, kda, &ws);
	a.workspace_size = ws;
	printf("case %s %s H %d HV %d D %d l2 %d gate %d cs %d h0 %d env %s: ws %zu st %d\n",
	       kda ? "KDA" : "GDN", s->label, H, HV, D, l2, gate, cs, h0, envlabel, ws, st);
	st = kda ? tile_la_kda_fwd(la, &a) : tile_la_gdn_fwd(la, &a);
	if (st)
		printf("  fwd status %d: %s\n", st, tile_la_error(la));
}

int main(int argc, char **argv)
{
	tile_rt_options opt;
	memset(&opt, 0, sizeof opt);
	opt.driver_path = argc > 1 ? argv[1] : NULL;
	tile_rt *rt;
	if (tile_rt_create_ex(&opt, &rt) || tile_la_create_with(rt, &la)) {
		printf("create failed: %s\n", tile_la_error(NULL));
		return 1;
	}
	setvbuf(stdout, NULL, _IOFBF, 1 << 20);
	int nshapes = (int)(sizeof shapes / sizeof shapes[0]);
	int nheads = (int)(sizeof heads / sizeof heads[0]);
	for (int kda = 0; kda < 2; kda++)
		for (int si = 0; si < nshapes; si++)
			for (int hi = 0; hi < nheads; hi++)
				for (int D = 64; D <= 128; D += 64)
					for (int l2 = 0; l2 < 2; l2++)
						for (int gate = 0; gate < (kda ? 3 : 2); gate++)
							for (int cs = 0; cs < 2; cs++)
								run(kda, &shapes[si], heads[hi][0], heads[hi][1], D,
								    l2, gate, cs, (si + hi) % 2, NULL, "-");
	/* the overrides, on a subset */
	static const envset e_cp0[] = {{"TILE_LA_KDA_CP", "0"}, {"TILE_LA_GDN_CP", "0"}, {0, 0}};
	static const envset e_cp4[] = {{"TILE_LA_KDA_CP", "4"}, {"TILE_LA_GDN_CP", "4"}, {0, 0}};
	static const envset e_cp100[] = {{"TILE_LA_KDA_CP", "100"}, {"TILE_LA_GDN_CP", "7"}, {0, 0}};
	static const envset e_cpx[] = {{"TILE_LA_KDA_CP", "-3"}, {"TILE_LA_GDN_CP", "x"}, {0, 0}};
	static const envset e_t0[] = {{"TILE_LA_KDA_T", "0"}, {0, 0}};
	static const envset e_w0[] = {{"TILE_LA_KDA_W", "0"}, {0, 0}};
	static const envset e_w1[] = {{"TILE_LA_KDA_W", "1"}, {0, 0}};
	static const envset e_s0[] = {{"TILE_LA_KDA_SPLIT", "0"}, {0, 0}};
	static const envset e_s96[] = {{"TILE_LA_KDA_SPLIT", "96"}, {0, 0}};
	static const envset e_s20[] = {{"TILE_LA_KDA_SPLIT", "20"}, {0, 0}};
	static const envset e_m0[] = {{"TILE_LA_KDA_MAPT", "0"}, {0, 0}};
	static const envset e_m1[] = {{"TILE_LA_KDA_MAPT", "1"}, {0, 0}};
	static const envset e_n0[] = {{"TILE_LA_KDA_NOCB", "0"}, {0, 0}};
	static const envset e_mix[] = {{"TILE_LA_KDA_CP", "8"}, {"TILE_LA_KDA_MAPT", "1"},
				       {"TILE_LA_KDA_W", "1"}, {0, 0}};
	static const envset e_mix2[] = {{"TILE_LA_KDA_CP", "16"}, {"TILE_LA_KDA_T", "0"},
					{"TILE_LA_KDA_NOCB", "0"}, {0, 0}};
	struct { const envset *e; const char *label; } envs[] = {
		{e_cp0, "cp0"}, {e_cp4, "cp4"}, {e_cp100, "cp100"}, {e_cpx, "cpx"}, {e_t0, "t0"},
		{e_w0, "w0"}, {e_w1, "w1"}, {e_s0, "split0"}, {e_s96, "split96"}, {e_s20, "split20"},
		{e_m0, "mapt0"}, {e_m1, "mapt1"}, {e_n0, "nocb0"}, {e_mix, "mix"}, {e_mix2, "mix2"}};
	static const int sub_shapes[] = {1, 3, 4, 5, 8, 10, 12, 13, 15, 17};
	static const int sub_heads[] = {0, 2, 4, 6, 8};
	for (size_t ei = 0; ei < sizeof envs / sizeof envs[0]; ei++)
		for (int kda = 0; kda < 2; kda++)
			for (size_t si = 0; si < sizeof sub_shapes / sizeof sub_shapes[0]; si++)
				for (size_t hi = 0; hi < sizeof sub_heads / sizeof sub_heads[0]; hi++)
					for (int D = 64; D <= 128; D += 64)
						for (int gate = 0; gate < (kda ? 3 : 2); gate++)
							for (int cs = 0; cs < 2; cs++)
								run(kda, &shapes[sub_shapes[si]],
								    heads[sub_heads[hi]][0], heads[sub_heads[hi]][1],
								    D, 1, gate, cs, 1, envs[ei].e, envs[ei].label);
	apply(NULL);
	tile_la_destroy(la);
	tile_rt_destroy(rt);
	return 0;
}
