/*
 * la_plan.h: the launch plan of one GDN or KDA forward call, a plain struct that la_plan_make
 * computes from the call's arguments, the device's properties and the handle's options, with
 * no side effects and no CUDA call (tests/la/test_la_plan.c runs it on the CPU). la.c executes
 * a plan and nothing else decides: which kernels, their grids' NX / NZ / modes, segment
 * lengths, the split in time, the transfer maps, the chained path, chunk_prep's CB-free build
 * and the workspace's layout. The rules themselves are la_segments.h's; the top of la.c says
 * what each schedule runs.
 */
#ifndef LA_PLAN_H
#define LA_PLAN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "la_segments.h"
#include "tile_la.h"

/* The kernels of one variant (dtype, head dim). */
typedef enum la_kernel {
	LA_K_PREP,      /* chunk_prep */
	LA_K_PREP_NOCB, /* chunk_prep built with CB_OUT = 0 (D = 128 only) */
	LA_K_RECUR,     /* chunk_recur */
	LA_K_FUSED,     /* gdn_fused */
	LA_K_KKT,       /* gdn_kkt */
	LA_K_RECUR_T,   /* chunk_recur_t */
	LA_K_RECUR_W,   /* chunk_recur_w (D = 128 only) */
	LA_K_MAP_T,     /* chunk_map_t */
	LA_K_CHAIN_T,   /* chunk_chain_t */
	LA_K_MAP_G,     /* gdn_map_t */
	LA_K_BWD_RECUR, /* kda_bwd_recur: the KDA backward's state walks */
	LA_K_BWD_CHUNK, /* kda_bwd_chunk: the KDA backward's state-dependent gradients per chunk */
	LA_K_BWD_FINISH, /* kda_bwd_finish (module kda_bwd) */
	LA_K_BWD_INTRA, /* kda_bwd_intra: the KDA backward's intra-chunk pairs and dg */
	LA_K_BWD_WY,    /* kda_bwd_wy: the KDA backward's per-chunk setup (module kda_bwd) */
	LA_K_GDN_BWD_CHUNK, /* gdn_bwd_chunk: GDN's backward per chunk, every gradient */
	LA_K_GDN_WALKS, /* kda_bwd_recur's GDN build: GDN's walks from gdn_kkt's outputs (module gdn_bwd_walks) */
	LA_K_GDN_WALKS_W, /* ... with both value slices of a head in one CTA (D = 128 only) */
	LA_K_KKT_LO,    /* gdn_kkt built with LO_OUT = 1: GDN's backward (module gdn_kkt_lo) */
	LA_K_GDN_BWD_CHUNK_DQK, /* gdn_bwd_chunk built with DQK_FINAL = 1: H = HV, dq and dk
	                           complete in it (module gdn_bwd_chunk_dqk) */
	LA_K_PREP_BWD,  /* chunk_prep built with BWD_OUT = 1 (chunk_prep_nocb's at D = 128): the
	                   KDA backward's recompute, kda_bwd_wy's outputs too (module chunk_prep_bwd) */
	LA_K_BWD_RECUR_W, /* kda_bwd_recur with both value slices of a head in one CTA (D = 128
	                     only; module kda_bwd_recur_w) */
	LA_K_PREP_FROMA, /* chunk_prep built with FROM_A = 1 (without CB at D = 128): the KDA
	                    backward's setup from the forward's kept A and AQK (module
	                    chunk_prep_froma) */
	LA_K_KKT2,      /* gdn_kkt built with CTAS = 2: two CTAs per SM (module gdn_kkt2) */
	LA_K_PREP_QGL,  /* chunk_prep built with QGL_OUT = 1 (chunk_prep_nocb's at D = 128): a KDA
	                   forward keeping its workspace for a backward's dh0, QG's lo term too
	                   (la_kda_keeps_qgl; module chunk_prep_qgl) */
	LA_K_PREP_BWD_QGL, /* chunk_prep_bwd built with QGL_OUT = 1: the KDA backward's recompute
	                      when dh0 is asked for (module chunk_prep_bwd_qgl) */
	LA_NKERNELS
} la_kernel;

/* The kernel's name in its module (every chunk_prep build's is chunk_prep's, GDN's walks
 * and KDA's _w walks kda_bwd_recur's, gdn_kkt_lo's gdn_kkt's, gdn_bwd_chunk_dqk's
 * gdn_bwd_chunk's), and the
 * stem of its modules: "<stem>_<dtype>_d<D>" (kda_bwd_wy and kda_bwd_finish share the
 * modules kda_bwd_*). */
const char *la_kernel_name(la_kernel k);
const char *la_kernel_stem(la_kernel k);

/* The device's properties, from tile_rt_device_info at tile_la_create. */
typedef struct la_device {
	int sm_count;          /* the waves, the split, the backward's wide walks */
	size_t smem_per_block; /* the most dynamic shared memory one block may opt in to; no rule
	                          reads it yet (each kernel's is fixed by its build, and the
	                          runtime refuses a launch the device cannot hold) */
} la_device;

/* The call's shape (after check_shapes: every product fits its type). */
typedef struct la_shapes {
	int64_t tokens; /* TT = B * T */
	int64_t nseq;   /* N */
	int64_t slots;  /* chunk slots: cdiv(TT, 64) + N (kernels/common/seq.tile) */
	size_t es;      /* bytes per element of dtype */
} la_shapes;

la_shapes la_shapes_of(const tile_la_fwd_args *a);

/* The KDA workspace (la_plan.c says what each region holds); byte offsets, in order. */
typedef struct la_kda_layout {
	size_t w, u, qg, kg, qgl, aqk, dec, cb, xb, xph, xpl, total;
	int qg_lo;   /* QG's lo term has its region (qgl; else that region is empty) */
	int64_t xs;  /* transfer slots: the segment slots, 0 without segments */
	int64_t xbs; /* slots of XB: the transfer slots, or the split's (la_split_slots) */
} la_kda_layout;

/* The GDN workspace; none without tokens. */
typedef struct la_gdn_layout {
	size_t a, aqk, rq, rk, gam, bet;
	size_t w, ah, aqh;      /* save_for_backward: gdn_kkt_lo's W, A and AQK (else empty) */
	size_t xb, xph, xpl, total;
	int64_t xs; /* transfer slots: the segment slots, 0 without segments */
} la_gdn_layout;

/* One launch: the kernel and the arguments that differ between launches of one call (every
 * other argument follows from the call and the layout), the grid's CTAs and early start. */
typedef struct la_launch {
	la_kernel kernel;
	int32_t mode;    /* chunk_recur: mode; chunk_recur_t, gdn_fused: part; chunk_map_t: chained */
	int32_t seg_len; /* segment length in chunks (chunk_recur, gdn_fused: 1 for whole) */
	int32_t first_len; /* a sequence's first segment's (>= seg_len; seg_len but on the
	                      chained path, la_first_len_chained) */
	int32_t nx;      /* NX: sequences or segment slots (chunk_prep: NG, its chunks) */
	int32_t nz;      /* chunk_recur's NZ: CTAs per slot and head */
	int32_t c0, nc;  /* chunk_prep: its chunks c0 .. c0 + nc - 1 of each sequence (nc 0: all) */
	int64_t ctas;    /* the grid's CTAs, as the kernel's metadata computes them */
	int early_start; /* TILE_LAUNCH_EARLY_START */
} la_launch;

enum { LA_MAX_LAUNCHES = 6 };

typedef struct la_plan {
	int kda;
	la_shapes s;
	la_device dev;
	int64_t units;          /* the recurrence's CTAs per sequence: HV x D/64 */
	int32_t seg_len;        /* context parallelism's segment length in chunks (0: whole) */
	int32_t seg_slots;      /* their segment slots: cdiv(TT, 64 seg_len) + N (0 without) */
	int32_t first_len;      /* the chained path's first segment in chunks (>= seg_len) */
	int32_t split;          /* KDA: the split in time's first part in chunks (0: none) */
	int32_t split_slots;    /* its second launch's segment slots */
	int64_t seq_chunks;     /* each sequence's chunks when one count for all is known, else 0 */
	la_kernel recur;        /* KDA: chunk_recur, chunk_recur_t or chunk_recur_w */
	la_kernel prep;         /* KDA: chunk_prep, chunk_prep_nocb, or a build keeping more for
	                           the backward (chunk_prep_bwd, chunk_prep_qgl) */
	int transposed_allowed; /* chunk_recur_t may run (no chunk states, tokens, option) */
	int map_kernel;         /* KDA warmups: the maps by chunk_map_t (else chunk_recur's own) */
	int chained;            /* the chained path: every segment's start from the maps */
	int needs_cb;           /* some warmup reads chunk_prep's CB */
	int exact_state;        /* the recurrences' _x builds (the state's operands in two terms) */
	la_kda_layout kl;
	la_gdn_layout gl;
	size_t workspace;       /* bytes: the layout's total */
	int nlaunches;
	la_launch launch[LA_MAX_LAUNCHES];
} la_plan;

/* The backward's segment length in chunks (kda_bwd_recur's walks over segments: la_segments.h's
 * la_segment_len_bwd on the device's SMs, the op's segments option its override), or 0 for
 * whole walks, for a call whose shapes check_shapes accepted; 0 where the maps' rows (D per
 * segment slot) would not fit the kernels' 32-bit row counts. wy_beside: KDA's kda_bwd_wy runs
 * beside the walks (a kept forward workspace; the recompute's chunk_prep_bwd leaves its
 * outputs before them). */
int32_t la_bwd_segment_len(const tile_la_fwd_args *a, int kda, int wy_beside,
			   const la_device *dev, const tile_la_options *opt);

/* Segment slots of seg_len-chunk segments: cdiv(T, 64 seg_len) + N (0 without segments). */
int64_t la_segment_slots(const tile_la_fwd_args *a, int32_t seg_len);

/* The plan of a call whose shapes check_shapes accepted (kda: KDA, else GDN). Pure: no CUDA,
 * no globals. TILE_ERR_ARG for a NULL argument or a device without SMs. */
tile_status la_plan_make(const tile_la_fwd_args *a, int kda, const la_device *dev,
			 const tile_la_options *opt, la_plan *out);

/* chunk_prep's regions alone (W .. CB, no transfer slots; qg_lo: with QG's lo term): the KDA
 * backward's recompute, or the kept forward workspace it reads. */
la_kda_layout la_kda_prep_layout(const tile_la_fwd_args *a, int qg_lo);
/* Whether a KDA forward keeps QG's lo term in its workspace (chunk_prep_qgl): with
 * save_for_backward and an initial state, no saved_setup. A backward given that workspace
 * reads it there for dh0; the layouts of both calls follow this one rule. */
int la_kda_keeps_qgl(const tile_la_fwd_args *a);
/* A KDA forward's saved_setup: A's and then AQK's two terms per chunk slot ([slots, HV, 2, 64,
 * 64] in dtype each); la_kda_saved_aqh is AQK's offset. */
size_t la_kda_saved_bytes(const tile_la_fwd_args *a);
size_t la_kda_saved_aqh(const tile_la_fwd_args *a);

/* gdn_kkt's regions alone (A .. beta, no transfer slots, no AQK: gdn_kkt_lo stores it per
 * slot): the GDN backward's recompute. */
la_gdn_layout la_gdn_prep_layout(const tile_la_fwd_args *a);

/* The regions a GDN forward with save_for_backward keeps (A .. AQK per slot, at the start of
 * its workspace, their end at `xb`): what the backward reads from its fwd_workspace. */
la_gdn_layout la_gdn_saved_layout(const tile_la_fwd_args *a);

/* The workspace bytes every device and option set needs at least: the plan's without
 * segments (tile_la_fwd_check, which has no handle). */
size_t la_workspace_min(const tile_la_fwd_args *a, int kda);

/* Whether an options struct holds only values the library knows; else its field's name. */
const char *la_options_bad_field(const tile_la_options *opt);

/* The plan as text: one line of decisions, then one line per launch. snprintf's contract:
 * returns the length it would have written. */
int la_plan_describe(const la_plan *p, char *buf, size_t size);

#endif
