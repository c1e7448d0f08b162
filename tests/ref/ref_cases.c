/*
 * ref_cases.c - FLA's test-case tables as data (spec §7.2 KDA, §7.3 GDN)
 * and seeded generators that reproduce FLA's input distributions.
 *
 * Each row is copied from the spec in FLA's parameter order; its name is
 * built from the same tokens, so a failing GPU test names the FLA row.
 * Besides FLA's test_chunk and test_chunk_varlen tables, the KDA list
 * holds test_chunk_state_v_first and test_chunk_use_beta_sigmoid_in_kernel
 * and the GDN list test_chunk_with_chunk_size. Rows marked heavy (the
 * 8192 x 96-head beta-sigmoid shape) are too large for the CPU reference
 * in CI.
 *
 * Generators (ref_case_generate) draw each tensor from its own PRNG
 * stream (ref_rng.c), round it to the dtype FLA gives it, and return
 * floats; see gen_* below for the distribution of each suite and the
 * choices made where the spec is silent (marked "inferred").
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ref_internal.h"

enum { F = 0, T = 1 }; /* the spec's table notation */
enum { DT_fp16 = REF_F16, DT_bf16 = REF_BF16, DT_fp32 = REF_F32 };

#define TOL_KDA_CHUNK                                                        \
	{ .o = .005, .ht = .005, .dq = .008, .dk = .008, .dv = .008,         \
	  .dg = .02, .db = .02, .dh0 = .008, .dA = .003, .dbias = .008,      \
	  .dA_warn_only = true }
#define TOL_KDA_VARLEN                                                       \
	{ .o = .005, .ht = .005, .dq = .007, .dk = .008, .dv = .007,         \
	  .dg = .015, .db = .015, .dh0 = .007, .dA = .008, .dbias = .005,    \
	  .dA_warn_only = true }
#define TOL_KDA_SELF                                                         \
	{ .o = .005, .ht = .005, .dq = .008, .dk = .008, .dv = .008,         \
	  .dg = .02, .db = .02, .dh0 = .008, .dA = .003, .dbias = .008,      \
	  .dA_warn_only = true, .self = 1e-4 }
#define TOL_GDN_CHUNK                                                        \
	{ .o = .005, .ht = .005, .dq = .008, .dk = .008, .dv = .008,         \
	  .dg = .02, .db = .02, .dh0 = .008 }
#define TOL_GDN_VARLEN                                                       \
	{ .o = .005, .ht = .005, .dq = .007, .dk = .008, .dv = .007,         \
	  .dg = .015, .db = .015, .dh0 = .007 }
#define TOL_GDN_CSIZE                                                        \
	{ .o = .005, .ht = .005, .dq = .005, .dk = .005, .dv = .005,         \
	  .dg = .01, .db = .01, .dh0 = .005 }

/* KDA test_chunk: (B,T,H,HV,D,scale,norm,mask_p,l2norm_in_kernel,
 * gate_in_kernel,dtype,safe_gate,disable_recompute,C), spec §7.2. */
#define KC(b, t, h, hv, d, sc, nm, mp, l2, gk, dt, sg, dr, cs)               \
	{ .name = "kda_chunk_B" #b "_T" #t "_H" #h "_HV" #hv "_D" #d "_s" #sc \
		  "_n" #nm "_m" #mp "_l2" #l2 "_gk" #gk "_" #dt "_sg" #sg     \
		  "_dr" #dr "_C" #cs,                                         \
	  .suite = "test_chunk", .op = REF_KDA, .B = b, .T = t, .H = h,      \
	  .HV = hv, .D = d, .scale = sc, .gate_norm = nm, .mask_p = mp,      \
	  .l2norm_in_kernel = l2, .gate_in_kernel = gk,                      \
	  .dtype = (ref_dtype)DT_##dt, .safe_gate = sg,                      \
	  .disable_recompute = dr, .chunk_size = cs, .tol = TOL_KDA_CHUNK }

/* KDA test_chunk_varlen: (H,D,mask_p,cu,gate_in_kernel,safe_gate,
 * disable_recompute,C), HV = H, fp16; tt = cu[last], ncu = len(cu). */
#define KV(h, d, mp, gk, sg, dr, cs, tt, ncu, ...)                           \
	{ .name = "kda_varlen_H" #h "_D" #d "_m" #mp "_gk" #gk "_sg" #sg      \
		  "_dr" #dr "_C" #cs "_cu" #__VA_ARGS__,                      \
	  .suite = "test_chunk_varlen", .op = REF_KDA, .B = 1, .T = tt,      \
	  .H = h, .HV = h, .D = d, .gate_norm = 1, .mask_p = mp,             \
	  .gate_in_kernel = gk, .safe_gate = sg, .disable_recompute = dr,    \
	  .chunk_size = cs, .dtype = REF_F16, .varlen = true, .n_cu = ncu,   \
	  .cu = {__VA_ARGS__}, .tol = TOL_KDA_VARLEN }

/* KDA test_chunk_state_v_first: (B,T,H,D), fp16; other flags inferred
 * as FLA's defaults. */
#define KS(b, t, h, d)                                                       \
	{ .name = "kda_state_v_first_B" #b "_T" #t "_H" #h "_D" #d,          \
	  .suite = "test_chunk_state_v_first", .op = REF_KDA, .B = b,        \
	  .T = t, .H = h, .HV = h, .D = d, .gate_norm = 1,                   \
	  .state_v_first = true, .dtype = REF_F16, .chunk_size = 64,         \
	  .tol = TOL_KDA_SELF }

/* KDA test_chunk_use_beta_sigmoid_in_kernel: (B,T,H,D,dtype,neg-eig). */
#define KB(b, t, h, d, dt, ne, hvy)                                          \
	{ .name = "kda_beta_sigmoid_B" #b "_T" #t "_H" #h "_D" #d "_" #dt     \
		  "_neg" #ne,                                                 \
	  .suite = "test_chunk_use_beta_sigmoid_in_kernel", .op = REF_KDA,   \
	  .B = b, .T = t, .H = h, .HV = h, .D = d, .gate_norm = 1,           \
	  .beta_sigmoid = true, .neg_eigval = ne, .heavy = hvy,              \
	  .dtype = (ref_dtype)DT_##dt, .chunk_size = 64, .tol = TOL_KDA_SELF }

static const ref_case kda_cases[] = {
	KC(1, 63, 1, 1, 64, 1, 1, 0, F, F, fp16, T, F, 64),
	KC(2, 500, 3, 3, 60, 1, 1, 0, F, F, fp16, T, T, 64),
	KC(2, 1000, 3, 3, 64, 0.1, 1, 0.5, F, F, fp16, F, T, 64),
	KC(3, 1024, 4, 4, 100, 1, 0.1, 0, F, F, fp16, F, F, 64),
	KC(4, 1024, 4, 4, 128, 0.1, 1, 0, F, F, fp16, T, T, 64),
	KC(4, 1024, 4, 4, 128, 0.1, 1, 0, T, F, fp16, T, F, 64),
	KC(2, 1500, 4, 4, 128, 0.1, 10, 0, F, T, fp16, F, T, 64),
	KC(4, 2048, 8, 8, 64, 0.1, 1, 0, F, T, fp16, T, T, 64),
	KC(2, 1024, 2, 4, 64, 0.1, 1, 0, F, F, fp16, F, F, 64),
	KC(2, 1024, 2, 8, 64, 0.1, 1, 0, F, T, fp16, F, F, 64),
	KC(2, 1024, 4, 8, 128, 0.1, 1, 0, T, T, fp16, F, F, 64),
	KC(2, 160, 2, 4, 64, 0.1, 1, 0, F, T, fp16, T, T, 32),
	KC(2, 1024, 2, 4, 64, 0.1, 1, 0, T, T, bf16, T, F, 64),
	KC(2, 1024, 2, 4, 64, 0.1, 1, 0, F, T, bf16, F, F, 64),
	KC(2, 160, 2, 4, 64, 0.1, 1, 0, F, T, bf16, T, T, 32),
	KC(2, 1024, 2, 8, 128, 0.1, 1, 0, T, T, bf16, F, F, 64),
	KV(4, 60, 0.1, T, F, F, 64, 15, 2, 0,15),
	KV(4, 64, 0.9, T, F, F, 64, 1000, 4, 0,256,500,1000),
	KV(4, 128, 0.5, F, F, F, 64, 1000, 4, 0,256,500,1000),
	KV(4, 100, 0, T, F, F, 64, 2000, 6, 0,15,100,300,1200,2000),
	KV(4, 256, 0, F, T, T, 64, 4096, 6, 0,100,300,1200,3000,4096),
	KV(4, 60, 0.1, T, F, T, 32, 160, 4, 0,31,96,160),
	KS(1, 63, 1, 64),
	KS(2, 500, 3, 60),
	KS(3, 1024, 4, 128),
	KS(4, 2048, 8, 64),
	KB(1, 8192, 96, 128, bf16, F, true),
	KB(1, 8192, 96, 128, bf16, T, true),
	KB(2, 96, 2, 64, fp16, T, false),
};

/* GDN test_chunk: (B,T,H,HV,D,scale,norm,mask_p,l2norm_in_kernel), fp16,
 * spec §7.3. */
#define GC(b, t, h, hv, d, sc, nm, mp, l2)                                   \
	{ .name = "gdn_chunk_B" #b "_T" #t "_H" #h "_HV" #hv "_D" #d "_s" #sc \
		  "_n" #nm "_m" #mp "_l2" #l2,                                \
	  .suite = "test_chunk", .op = REF_GDN, .B = b, .T = t, .H = h,      \
	  .HV = hv, .D = d, .scale = sc, .gate_norm = nm, .mask_p = mp,      \
	  .l2norm_in_kernel = l2, .dtype = REF_F16, .chunk_size = 64,        \
	  .tol = TOL_GDN_CHUNK }

/* GDN test_chunk_varlen: (H,HV,D,mask_p,cu), fp16. */
#define GV(h, hv, d, mp, tt, ncu, ...)                                       \
	{ .name = "gdn_varlen_H" #h "_HV" #hv "_D" #d "_m" #mp                \
		  "_cu" #__VA_ARGS__,                                         \
	  .suite = "test_chunk_varlen", .op = REF_GDN, .B = 1, .T = tt,      \
	  .H = h, .HV = hv, .D = d, .gate_norm = 1, .mask_p = mp,            \
	  .dtype = REF_F16, .chunk_size = 64, .varlen = true, .n_cu = ncu,   \
	  .cu = {__VA_ARGS__}, .tol = TOL_GDN_VARLEN }

/* GDN test_chunk_with_chunk_size: (1,64,2,4,32), fp32, C in {16,32,64}. */
#define GS(cs)                                                               \
	{ .name = "gdn_chunk_size_B1_T64_H2_HV4_D32_C" #cs,                  \
	  .suite = "test_chunk_with_chunk_size", .op = REF_GDN, .B = 1,      \
	  .T = 64, .H = 2, .HV = 4, .D = 32, .gate_norm = 1,                 \
	  .dtype = REF_F32, .chunk_size = cs, .tol = TOL_GDN_CSIZE }

static const ref_case gdn_cases[] = {
	GC(4, 1024, 4, 4, 128, 0.1, 1, 1.0, F),
	GC(2, 75, 4, 4, 64, 1, 0.01, 0, F),
	GC(2, 500, 3, 3, 60, 1, 1, 0, F),
	GC(2, 1000, 3, 3, 64, 0.1, 1, 0.5, F),
	GC(3, 1024, 4, 4, 100, 1, 0.1, 0, F),
	GC(4, 1024, 4, 4, 128, 0.1, 1, 0, T),
	GC(2, 1500, 4, 4, 128, 0.1, 10, 0, F),
	GC(4, 2048, 8, 8, 64, 0.1, 1, 0, F),
	GC(2, 256, 2, 4, 64, 1, 1, 0, F),
	GC(2, 512, 2, 8, 64, 1, 0.1, 0, T),
	GC(2, 1024, 4, 8, 128, 0.1, 1, 0, F),
	GV(4, 4, 60, 0, 15, 2, 0,15),
	GV(4, 4, 64, 0, 1000, 4, 0,256,500,1000),
	GV(4, 4, 64, 0.5, 1000, 4, 0,256,500,1000),
	GV(4, 4, 100, 0, 2000, 6, 0,15,100,300,1200,2000),
	GV(2, 4, 64, 0, 1000, 4, 0,256,500,1000),
	GV(2, 8, 64, 0, 1000, 4, 0,256,500,1000),
	GS(16),
	GS(32),
	GS(64),
};

const ref_case *ref_kda_cases(size_t *n)
{
	if (n)
		*n = sizeof(kda_cases) / sizeof(kda_cases[0]);
	return kda_cases;
}

const ref_case *ref_gdn_cases(size_t *n)
{
	if (n)
		*n = sizeof(gdn_cases) / sizeof(gdn_cases[0]);
	return gdn_cases;
}
