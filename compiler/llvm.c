/*
 * llvm.c: Tile IR to LLVM IR through the LLVM-C API, for the NVPTX target.
 *
 * requires: the pipeline ran (indices lowered, shared memory planned)
 * ensures:  one LLVM module per compilation, in its own LLVMContext, that
 *           LLVMVerifyModule accepts: kernels are `ptx_kernel` functions with
 *           their launch bounds in !nvvm.annotations (so .maxntid appears in
 *           the PTX); helpers are internal and always inlined; shared arrays
 *           are offsets into the one `extern .shared` arena `tile_smem`
 *
 * Structured control flow maps to basic blocks directly; variables and loop
 * counters are allocas in the entry block that mem2reg turns into registers.
 * Where LLVM 19 has no intrinsic the PTX needs, the op goes through the
 * inline-PTX table (none are needed by the SIMT subset yet).
 */
#include <string.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/Core.h>
#include <llvm-c/DebugInfo.h>

#include "llvm_gen.h"

#define NVPTX_ADDRSPACE_GLOBAL 1
#define NVPTX_ADDRSPACE_SHARED 3
#define TILEC_MAX_PARAMS 64


LLVMTypeRef gen_type(Gen *G, DType dt)
{
	switch (dt) {
	case DT_BOOL: return LLVMInt1TypeInContext(G->C);
	case DT_I32: return LLVMInt32TypeInContext(G->C);
	case DT_I64: return LLVMInt64TypeInContext(G->C);
	case DT_F16: return LLVMHalfTypeInContext(G->C);
	case DT_BF16: return LLVMBFloatTypeInContext(G->C);
	case DT_F32: case DT_TF32: return LLVMFloatTypeInContext(G->C);
	default: return LLVMVoidTypeInContext(G->C);
	}
}

static LLVMTypeRef i32_type(Gen *G) { return LLVMInt32TypeInContext(G->C); }
static LLVMTypeRef i64_type(Gen *G) { return LLVMInt64TypeInContext(G->C); }

static LLVMValueRef const_i32(Gen *G, int64_t v)
{
	return LLVMConstInt(i32_type(G), (unsigned long long)v, 1);
}

/* Declares (once) and calls an intrinsic or external function by name. */
LLVMValueRef gen_call_named(Gen *G, const char *name, LLVMTypeRef ret,
			    LLVMValueRef *args, unsigned n)
{
	LLVMTypeRef tys[4];
	for (unsigned i = 0; i < n; i++)
		tys[i] = LLVMTypeOf(args[i]);
	LLVMTypeRef fty = LLVMFunctionType(ret, tys, n, 0);
	LLVMValueRef fn = LLVMGetNamedFunction(G->M, name);
	if (!fn)
		fn = LLVMAddFunction(G->M, name, fty);
	return LLVMBuildCall2(G->B, fty, fn, args, n, "");
}

static bool is_float(DType dt)
{
	return dt == DT_F16 || dt == DT_BF16 || dt == DT_F32;
}

/* The LLVM type of a TIR value: a scalar, or a fragment's float array. */
static LLVMTypeRef value_type(Gen *G, int v)
{
	int cols = G->f->vcols[v];
	return cols ? gen_frag_type(G, G->f->vtypes[v], cols) : gen_type(G, G->f->vtypes[v]);
}

static LLVMValueRef val(Gen *G, int v)
{
	return G->vals[v];
}

/* A basic block is open when it has no terminator yet. */
static bool block_open(Gen *G)
{
	return LLVMGetBasicBlockTerminator(LLVMGetInsertBlock(G->B)) == NULL;
}

static LLVMBasicBlockRef new_bb(Gen *G, const char *name)
{
	return LLVMAppendBasicBlockInContext(G->C, G->fn, name);
}

static void branch_if_open(Gen *G, LLVMBasicBlockRef to)
{
	if (block_open(G))
		LLVMBuildBr(G->B, to);
}

/* After break/continue/return the rest of the block is unreachable; keep
 * emitting into a fresh block with no predecessors (LLVM removes it). */
static void jump_away(Gen *G, LLVMBasicBlockRef to)
{
	LLVMBuildBr(G->B, to);
	LLVMPositionBuilderAtEnd(G->B, new_bb(G, "dead"));
}

LLVMValueRef gen_entry_alloca(Gen *G, LLVMTypeRef ty)
{
	LLVMBuilderRef b = LLVMCreateBuilderInContext(G->C);
	LLVMBasicBlockRef entry = LLVMGetEntryBasicBlock(G->fn);
	LLVMValueRef first = LLVMGetFirstInstruction(entry);
	if (first)
		LLVMPositionBuilderBefore(b, first);
	else
		LLVMPositionBuilderAtEnd(b, entry);
	LLVMValueRef a = LLVMBuildAlloca(b, ty, "");
	LLVMDisposeBuilder(b);
	return a;
}

/* ---- arithmetic ------------------------------------------------------------- */

static LLVMValueRef emit_shift(Gen *G, const Op *op, LLVMValueRef a, LLVMValueRef b)
{
	/* shift counts are taken modulo the width (LLVM would make an
	 * out-of-range count poison) */
	int bits = op->ty == DT_I64 ? 64 : 32;
	LLVMValueRef mask = LLVMConstInt(gen_type(G, op->ty), (unsigned)(bits - 1), 0);
	b = LLVMBuildAnd(G->B, b, mask, "");
	return op->code == OP_SHL ? LLVMBuildShl(G->B, a, b, "")
				  : LLVMBuildAShr(G->B, a, b, "");
}

static LLVMValueRef emit_minmax(Gen *G, const Op *op, LLVMValueRef a, LLVMValueRef b)
{
	LLVMValueRef args[2] = {a, b};
	bool mn = op->code == OP_MIN;
	const char *name;
	switch (op->ty) {
	case DT_F32: name = mn ? "llvm.minnum.f32" : "llvm.maxnum.f32"; break;
	case DT_I64: name = mn ? "llvm.smin.i64" : "llvm.smax.i64"; break;
	default: name = mn ? "llvm.smin.i32" : "llvm.smax.i32"; break;
	}
	return gen_call_named(G, name, gen_type(G, op->ty), args, 2);
}

/* Float +, - and * may contract into fma (a * b + c with one rounding), as nvcc does by
 * default (--fmad=true): the NVPTX back end fuses only operations flagged `contract`. */
static LLVMValueRef contractable(LLVMValueRef v)
{
	if (LLVMIsAInstruction(v))
		LLVMSetFastMathFlags(v, LLVMFastMathAllowContract);
	return v;
}

static LLVMValueRef emit_binary(Gen *G, const Op *op)
{
	LLVMValueRef a = val(G, op->args[0]), b = val(G, op->args[1]);
	LLVMBuilderRef B = G->B;
	bool f = is_float(op->ty);
	switch (op->code) {
	case OP_ADD: return f ? contractable(LLVMBuildFAdd(B, a, b, "")) : LLVMBuildAdd(B, a, b, "");
	case OP_SUB: return f ? contractable(LLVMBuildFSub(B, a, b, "")) : LLVMBuildSub(B, a, b, "");
	case OP_MUL: return f ? contractable(LLVMBuildFMul(B, a, b, "")) : LLVMBuildMul(B, a, b, "");
	case OP_DIV: return f ? LLVMBuildFDiv(B, a, b, "") : LLVMBuildSDiv(B, a, b, "");
	case OP_REM: return LLVMBuildSRem(B, a, b, "");
	case OP_AND: return LLVMBuildAnd(B, a, b, "");
	case OP_OR: return LLVMBuildOr(B, a, b, "");
	case OP_XOR: return LLVMBuildXor(B, a, b, "");
	case OP_SHL: case OP_SHR: return emit_shift(G, op, a, b);
	default: return emit_minmax(G, op, a, b);
	}
}

static LLVMValueRef emit_compare(Gen *G, const Op *op)
{
	LLVMValueRef a = val(G, op->args[0]), b = val(G, op->args[1]);
	DType t = G->f->vtypes[op->args[0]];
	static const LLVMIntPredicate ip[] = {LLVMIntEQ, LLVMIntNE, LLVMIntSLT,
					      LLVMIntSLE, LLVMIntSGT, LLVMIntSGE};
	/* ordered compares, except '!=' which is true for NaN (as in C) */
	static const LLVMRealPredicate fp[] = {LLVMRealOEQ, LLVMRealUNE, LLVMRealOLT,
					       LLVMRealOLE, LLVMRealOGT, LLVMRealOGE};
	int k = op->code - OP_EQ;
	if (is_float(t))
		return LLVMBuildFCmp(G->B, fp[k], a, b, "");
	return LLVMBuildICmp(G->B, ip[k], a, b, "");
}

static LLVMValueRef emit_unary(Gen *G, const Op *op)
{
	LLVMValueRef a = val(G, op->args[0]);
	if (op->code == OP_NEG)
		return is_float(op->ty) ? LLVMBuildFNeg(G->B, a, "")
					: LLVMBuildNeg(G->B, a, "");
	return LLVMBuildNot(G->B, a, "");
}

static LLVMValueRef emit_abs(Gen *G, const Op *op)
{
	LLVMValueRef a = val(G, op->args[0]);
	if (op->ty == DT_F32)
		return gen_call_named(G, "llvm.fabs.f32", gen_type(G, op->ty), &a, 1);
	LLVMValueRef args[2] = {a, LLVMConstInt(LLVMInt1TypeInContext(G->C), 0, 0)};
	return gen_call_named(G, op->ty == DT_I64 ? "llvm.abs.i64" : "llvm.abs.i32",
			      gen_type(G, op->ty), args, 2);
}

/* f32 math: the PTX approximate instructions where the language promises
 * them (ex2, lg2, rcp, rsqrt), IEEE sqrt; exp and log through ex2/lg2
 * (LLVM 19 NVPTX has no libcall for llvm.exp2/llvm.log2). ex2 flushes
 * subnormal results to 0 (.ftz): without it every ex2 carries a range test
 * and a rescale (four more instructions), for results below 2^-126 that
 * no kernel of ours can tell from 0. */
static LLVMValueRef emit_math(Gen *G, const Op *op)
{
	LLVMTypeRef f32 = gen_type(G, DT_F32);
	LLVMValueRef a = val(G, op->args[0]);
	const double log2e = 1.4426950408889634, ln2 = 0.6931471805599453;
	switch (op->code) {
	case OP_EXP2: return gen_call_named(G, "llvm.nvvm.ex2.approx.ftz.f", f32, &a, 1);
	case OP_LOG2: return gen_call_named(G, "llvm.nvvm.lg2.approx.f", f32, &a, 1);
	case OP_RCP: return gen_call_named(G, "llvm.nvvm.rcp.approx.ftz.f", f32, &a, 1);
	case OP_RSQRT: return gen_call_named(G, "llvm.nvvm.rsqrt.approx.f", f32, &a, 1);
	case OP_SQRT: return gen_call_named(G, "llvm.sqrt.f32", f32, &a, 1);
	case OP_EXP: {
		LLVMValueRef x = LLVMBuildFMul(G->B, a, LLVMConstReal(f32, log2e), "");
		return gen_call_named(G, "llvm.nvvm.ex2.approx.ftz.f", f32, &x, 1);
	}
	default: {
		LLVMValueRef l = gen_call_named(G, "llvm.nvvm.lg2.approx.f", f32, &a, 1);
		return LLVMBuildFMul(G->B, l, LLVMConstReal(f32, ln2), "");
	}
	}
}

static LLVMValueRef emit_fma(Gen *G, const Op *op)
{
	LLVMValueRef args[3] = {val(G, op->args[0]), val(G, op->args[1]),
				val(G, op->args[2])};
	return gen_call_named(G, "llvm.fma.f32", gen_type(G, DT_F32), args, 3);
}

/* Two f32 values rounded to a <2 x bf16 or f16> in one instruction
 * (cvt.rn.bf16x2.f32 / cvt.rn.f16x2.f32, the same rounding as two scalar
 * cvt.rn): LLVM 19 splits a vector fptrunc into scalar cvts, each of which
 * ptxas turns into its own conversion and then packs the halves apart. The
 * instruction takes the high element first. */
LLVMValueRef gen_round_pair(Gen *G, LLVMValueRef lo, LLVMValueRef hi, DType dt)
{
	LLVMValueRef args[2] = {hi, lo};
	return gen_call_named(G, dt == DT_BF16 ? "llvm.nvvm.ff2bf16x2.rn" : "llvm.nvvm.ff2f16x2.rn",
			      LLVMVectorType(gen_type(G, dt), 2), args, 2);
}

/* The two 16-bit floats of a 32-bit register (element 0 in the low half) as f32: a bf16 by
 * moving its bits into place (exact, bf16 being f32's high half: one shift or mask instead of
 * a byte permute and a conversion per element), an f16 by conversion. */
void gen_unpack_pair(Gen *G, LLVMValueRef r, DType dt, LLVMValueRef out[2])
{
	LLVMTypeRef f32 = LLVMFloatTypeInContext(G->C), i32 = LLVMInt32TypeInContext(G->C);
	if (dt == DT_BF16) {
		LLVMValueRef lo = LLVMBuildShl(G->B, r, LLVMConstInt(i32, 16, 0), "");
		LLVMValueRef hi = LLVMBuildAnd(G->B, r, LLVMConstInt(i32, 0xffff0000u, 0), "");
		out[0] = LLVMBuildBitCast(G->B, lo, f32, "");
		out[1] = LLVMBuildBitCast(G->B, hi, f32, "");
		return;
	}
	LLVMValueRef v = LLVMBuildBitCast(G->B, r, LLVMVectorType(gen_type(G, dt), 2), "");
	for (int j = 0; j < 2; j++)
		out[j] = LLVMBuildFPExt(G->B, LLVMBuildExtractElement(G->B, v,
					LLVMConstInt(i32, (unsigned)j, 0), ""), f32, "");
}

/* A float value in another float type: fpext or fptrunc, and between bf16 and f16 (the same
 * width, which neither instruction takes) through f32, where bf16 and f16 values are exact,
 * so the one rounding is to the target. */
LLVMValueRef gen_fp_convert(Gen *G, LLVMValueRef x, LLVMTypeRef to)
{
	LLVMTypeRef from = LLVMTypeOf(x);
	if (from == to)
		return x;
	LLVMTypeKind fk = LLVMGetTypeKind(from), tk = LLVMGetTypeKind(to);
	bool half_from = fk == LLVMHalfTypeKind || fk == LLVMBFloatTypeKind;
	bool half_to = tk == LLVMHalfTypeKind || tk == LLVMBFloatTypeKind;
	if (half_from && half_to)
		x = LLVMBuildFPExt(G->B, x, LLVMFloatTypeInContext(G->C), "");
	return LLVMBuildFPCast(G->B, x, to, "");
}

/* Casts: integers sign-extend or truncate; float to integer saturates (NaN
 * gives 0) instead of LLVM's poison; bool converts to 0/1 and from x != 0. */
static LLVMValueRef emit_cast(Gen *G, const Op *op)
{
	LLVMValueRef a = val(G, op->args[0]);
	DType from = G->f->vtypes[op->args[0]], to = op->ty;
	LLVMTypeRef tt = gen_type(G, to);
	if (to == DT_BOOL)
		return LLVMBuildICmp(G->B, LLVMIntNE, a, LLVMConstNull(LLVMTypeOf(a)), "");
	if (from == DT_BOOL)
		return LLVMBuildZExt(G->B, a, tt, "");
	if (!is_float(from) && !is_float(to))
		return LLVMBuildIntCast2(G->B, a, tt, 1, "");
	if (!is_float(from))
		return LLVMBuildSIToFP(G->B, a, tt, "");
	if (!is_float(to)) {
		char name[48];
		snprintf(name, sizeof name, "llvm.fptosi.sat.%s.%s",
			 to == DT_I64 ? "i64" : "i32",
			 from == DT_F32 ? "f32" : from == DT_F16 ? "f16" : "bf16");
		return gen_call_named(G, name, tt, &a, 1);
	}
	return gen_fp_convert(G, a, tt);
}

/* ---- special registers, shuffles, barriers ---------------------------------- */

static LLVMValueRef emit_sreg(Gen *G, Sreg s)
{
	char name[64];
	snprintf(name, sizeof name, "llvm.nvvm.read.ptx.sreg.%s", tir_sreg_name(s));
	return gen_call_named(G, name, i32_type(G), NULL, 0);
}

static LLVMValueRef emit_shfl(Gen *G, const Op *op)
{
	static const char *const mode[] = {"bfly", "down", "up", "idx"};
	char name[64];
	snprintf(name, sizeof name, "llvm.nvvm.shfl.sync.%s.%s", mode[op->imm],
		 op->ty == DT_F32 ? "f32" : "i32");
	/* c operand: 0x1f clamps to the warp for bfly/down/idx; up uses 0 */
	LLVMValueRef args[4] = {const_i32(G, -1), val(G, op->args[0]),
				val(G, op->args[1]),
				const_i32(G, op->imm == SHFL_UP ? 0 : 0x1f)};
	LLVMValueRef call = gen_call_named(G, name, gen_type(G, op->ty), args, 4);
	gen_mark_convergent(G, call);
	return call;
}

void gen_mark_convergent(Gen *G, LLVMValueRef call)
{
	unsigned kind = LLVMGetEnumAttributeKindForName("convergent", 10);
	LLVMAddCallSiteAttribute(call, LLVMAttributeFunctionIndex,
				 LLVMCreateEnumAttribute(G->C, kind, 0));
}

static void emit_barrier(Gen *G)
{
	gen_mark_convergent(G, gen_call_named(G, "llvm.nvvm.barrier0",
					      LLVMVoidTypeInContext(G->C), NULL, 0));
}

/* ---- memory ------------------------------------------------------------------ */

/* The address of element `off` of buffer `bi`. */
static LLVMValueRef element_ptr(Gen *G, int bi, LLVMValueRef off)
{
	const TirBuffer *b = &G->f->bufs[bi];
	LLVMTypeRef et = gen_type(G, b->ty.dt);
	LLVMValueRef base;
	if (b->ty.space == SP_GLOBAL) {
		base = LLVMGetParam(G->fn, (unsigned)b->param);
	} else if (b->ty.space == SP_LOCAL) {
		base = G->locals[bi];
	} else {
		LLVMValueRef at = LLVMConstInt(i64_type(G), (unsigned long long)b->offset, 0);
		base = LLVMBuildGEP2(G->B, LLVMInt8TypeInContext(G->C), G->smem_base, &at, 1, "");
	}
	return LLVMBuildGEP2(G->B, et, base, &off, 1, "");
}

static LLVMValueRef emit_load(Gen *G, const Op *op)
{
	LLVMValueRef p = element_ptr(G, op->buf, val(G, op->args[0]));
	if (op->attr[0] != MO_PLAIN)
		return gen_ordered_access(G, op, p);
	LLVMValueRef v = LLVMBuildLoad2(G->B, gen_type(G, op->ty), p, "");
	LLVMSetAlignment(v, (unsigned)dtype_bytes(op->ty));
	return v;
}

static void emit_store(Gen *G, const Op *op)
{
	LLVMValueRef p = element_ptr(G, op->buf, val(G, op->args[0]));
	if (op->attr[0] != MO_PLAIN) {
		gen_ordered_access(G, op, p);
		return;
	}
	LLVMValueRef s = LLVMBuildStore(G->B, val(G, op->args[1]), p);
	LLVMSetAlignment(s, (unsigned)dtype_bytes(op->ty));
}

/* ---- control flow ------------------------------------------------------------ */

static void emit_if(Gen *G, const Op *op)
{
	LLVMBasicBlockRef then_bb = new_bb(G, "then"), else_bb = new_bb(G, "else");
	LLVMBasicBlockRef merge = new_bb(G, "endif");
	LLVMBuildCondBr(G->B, val(G, op->args[0]), then_bb, else_bb);
	LLVMPositionBuilderAtEnd(G->B, then_bb);
	gen_block(G, op->blocks[0]);
	branch_if_open(G, merge);
	LLVMPositionBuilderAtEnd(G->B, else_bb);
	if (op->blocks[1])
		gen_block(G, op->blocks[1]);
	branch_if_open(G, merge);
	LLVMPositionBuilderAtEnd(G->B, merge);
}

/* Runs a loop body with break/continue targets set. */
static void emit_loop_body(Gen *G, const Block *body, LLVMBasicBlockRef brk,
			   LLVMBasicBlockRef cont)
{
	LLVMBasicBlockRef sb = G->break_bb, sc = G->cont_bb;
	G->break_bb = brk;
	G->cont_bb = cont;
	gen_block(G, body);
	branch_if_open(G, cont);
	G->break_bb = sb;
	G->cont_bb = sc;
}

/* A for loop's flags (LOOP_*) as the loop's metadata on its back edge, !llvm.loop !{self,
 * !{property}, ...} (a loop ID refers to itself: built on a temporary node, then replaced).
 * 'unroll': "llvm.loop.unroll.full": LLVM unrolls the loop when its trip count is a constant,
 * possibly only once enclosing loops have unrolled. 'nounroll': "llvm.loop.unroll.disable",
 * so that the loop stays one copy of its body (code size: a kernel run once per CTA is bound
 * by its instruction fetches). 'nohoist': "llvm.licm.disable", so that loop-invariant code
 * stays in the body (a persistent kernel's loop around a whole chunk's work: hoisted, its
 * shared-memory addresses and compares stayed live across it and spilled). */
static void mark_loop(Gen *G, LLVMValueRef branch, int64_t flags)
{
	const char *props[2];
	int n = 0;
	if (flags & LOOP_UNROLL)
		props[n++] = "llvm.loop.unroll.full";
	else if (flags & LOOP_NOUNROLL)
		props[n++] = "llvm.loop.unroll.disable";
	if (flags & LOOP_NOHOIST)
		props[n++] = "llvm.licm.disable";
	if (n == 0)
		return;
	LLVMMetadataRef tmp = LLVMTemporaryMDNode(G->C, NULL, 0);
	LLVMMetadataRef ops[3] = {tmp};
	for (int i = 0; i < n; i++) {
		LLVMMetadataRef s = LLVMMDStringInContext2(G->C, props[i], strlen(props[i]));
		ops[1 + i] = LLVMMDNodeInContext2(G->C, &s, 1);
	}
	LLVMMetadataRef loop = LLVMMDNodeInContext2(G->C, ops, (size_t)(1 + n));
	LLVMMetadataReplaceAllUsesWith(tmp, loop);
	unsigned kind = LLVMGetMDKindIDInContext(G->C, "llvm.loop", 9);
	LLVMSetMetadata(branch, kind, LLVMMetadataAsValue(G->C, loop));
}

/* for iv in lo .. hi step s: the bounds were evaluated once, before the op */
static void emit_for(Gen *G, const Op *op)
{
	LLVMTypeRef t = gen_type(G, op->ty);
	LLVMValueRef slot = gen_entry_alloca(G, t);
	LLVMBuildStore(G->B, val(G, op->args[0]), slot);
	LLVMBasicBlockRef head = new_bb(G, "for.head"), body = new_bb(G, "for.body");
	LLVMBasicBlockRef latch = new_bb(G, "for.next"), done = new_bb(G, "for.end");
	LLVMBuildBr(G->B, head);
	LLVMPositionBuilderAtEnd(G->B, head);
	LLVMValueRef iv = LLVMBuildLoad2(G->B, t, slot, "");
	LLVMValueRef more = LLVMBuildICmp(G->B, LLVMIntSLT, iv, val(G, op->args[1]), "");
	LLVMBuildCondBr(G->B, more, body, done);
	LLVMPositionBuilderAtEnd(G->B, body);
	G->vals[op->result] = iv;
	emit_loop_body(G, op->blocks[0], done, latch);
	LLVMPositionBuilderAtEnd(G->B, latch);
	LLVMValueRef next = LLVMBuildAdd(G->B, iv, val(G, op->args[2]), "");
	LLVMBuildStore(G->B, next, slot);
	LLVMValueRef back = LLVMBuildBr(G->B, head);
	mark_loop(G, back, op->imm);
	LLVMPositionBuilderAtEnd(G->B, done);
}

static void emit_while(Gen *G, const Op *op)
{
	LLVMBasicBlockRef head = new_bb(G, "while.head"), body = new_bb(G, "while.body");
	LLVMBasicBlockRef done = new_bb(G, "while.end");
	LLVMBuildBr(G->B, head);
	LLVMPositionBuilderAtEnd(G->B, head);
	G->cond_true = body;
	G->cond_false = done;
	gen_block(G, op->blocks[0]); /* ends in 'condition' */
	LLVMPositionBuilderAtEnd(G->B, body);
	emit_loop_body(G, op->blocks[1], done, head);
	LLVMPositionBuilderAtEnd(G->B, done);
}

static void emit_return(Gen *G, const Op *op)
{
	if (op->nargs)
		LLVMBuildStore(G->B, val(G, op->args[0]), G->ret_slot);
	jump_away(G, G->exit_bb);
}

static LLVMValueRef emit_call(Gen *G, const Op *op)
{
	LLVMValueRef fn = G->funcs[op->imm];
	LLVMValueRef args[16];
	LLVMValueRef *a = op->nargs <= 16 ? args
			  : ctx_alloc(G->cx, (size_t)op->nargs * sizeof(LLVMValueRef));
	for (int i = 0; i < op->nargs; i++)
		a[i] = val(G, op->args[i]);
	return LLVMBuildCall2(G->B, LLVMGlobalGetValueType(fn), fn, a,
			      (unsigned)op->nargs, "");
}

static LLVMValueRef emit_const(Gen *G, const Op *op)
{
	LLVMTypeRef t = gen_type(G, op->ty);
	if (is_float(op->ty))
		return LLVMConstReal(t, op->fimm);
	return LLVMConstInt(t, (unsigned long long)op->imm, 1);
}

static void emit_op(Gen *G, const Op *op);

static bool is_elementwise(OpCode c)
{
	return (c >= OP_ADD && c <= OP_RSQRT) || (c >= OP_EQ && c <= OP_CAST);
}

/* An elementwise op over fragments: the scalar op once per element, with the
 * operands' elements standing in for the operands (they share the result's
 * shape: lowering broadcast them). */
static void emit_elementwise(Gen *G, const Op *op)
{
	int n = gen_frag_elems(G->f->vcols[op->result]);
	LLVMValueRef saved[3], agg = LLVMGetUndef(value_type(G, op->result));
	if (op->code == OP_CAST && G->f->vtypes[op->args[0]] == DT_F32 &&
	    (op->ty == DT_BF16 || op->ty == DT_F16) && n % 2 == 0) {
		/* f32 -> bf16 / f16: rounded in pairs */
		LLVMValueRef a = G->vals[op->args[0]];
		for (int i = 0; i < n; i += 2) {
			LLVMValueRef v = gen_round_pair(G,
				LLVMBuildExtractValue(G->B, a, (unsigned)i, ""),
				LLVMBuildExtractValue(G->B, a, (unsigned)i + 1, ""), op->ty);
			for (int j = 0; j < 2; j++)
				agg = LLVMBuildInsertValue(G->B, agg,
					LLVMBuildExtractElement(G->B, v, const_i32(G, j), ""),
					(unsigned)(i + j), "");
		}
		G->vals[op->result] = agg;
		return;
	}
	if (op->code == OP_CAST && G->f->vtypes[op->args[0]] == DT_BF16 && op->ty == DT_F32 &&
	    n % 2 == 0) {
		/* bf16 -> f32: in pairs, as the packed register they usually came from */
		LLVMValueRef a = G->vals[op->args[0]];
		LLVMTypeRef vt = LLVMVectorType(gen_type(G, DT_BF16), 2);
		for (int i = 0; i < n; i += 2) {
			LLVMValueRef v = LLVMGetUndef(vt), x[2];
			for (int j = 0; j < 2; j++)
				v = LLVMBuildInsertElement(G->B, v,
					LLVMBuildExtractValue(G->B, a, (unsigned)(i + j), ""),
					const_i32(G, j), "");
			gen_unpack_pair(G, LLVMBuildBitCast(G->B, v, LLVMInt32TypeInContext(G->C), ""),
					DT_BF16, x);
			for (int j = 0; j < 2; j++)
				agg = LLVMBuildInsertValue(G->B, agg, x[j], (unsigned)(i + j), "");
		}
		G->vals[op->result] = agg;
		return;
	}
	for (int a = 0; a < op->nargs; a++)
		saved[a] = G->vals[op->args[a]];
	int cols = G->f->vcols[op->result];
	G->f->vcols[op->result] = 0;
	for (int i = 0; i < n; i++) {
		for (int a = 0; a < op->nargs; a++)
			G->vals[op->args[a]] = LLVMBuildExtractValue(G->B, saved[a], (unsigned)i, "");
		emit_op(G, op);
		agg = LLVMBuildInsertValue(G->B, agg, G->vals[op->result], (unsigned)i, "");
	}
	G->f->vcols[op->result] = cols;
	for (int a = 0; a < op->nargs; a++)
		G->vals[op->args[a]] = saved[a];
	G->vals[op->result] = agg;
}

/* The one long function: a dispatch over ops.def, each case one call. */
static void emit_op(Gen *G, const Op *op)
{
	gen_debug_at(G, op->loc);
	if (op->result >= 0 && G->f->vcols[op->result] && is_elementwise(op->code)) {
		emit_elementwise(G, op);
		return;
	}
	LLVMValueRef r = NULL;
	switch (op->code) {
	case OP_CONST: r = emit_const(G, op); break;
	case OP_PARAM: r = LLVMGetParam(G->fn, (unsigned)op->imm); break;
	case OP_SREG: r = emit_sreg(G, (Sreg)op->imm); break;
	case OP_ADD: case OP_SUB: case OP_MUL: case OP_DIV: case OP_REM:
	case OP_AND: case OP_OR: case OP_XOR: case OP_SHL: case OP_SHR:
	case OP_MIN: case OP_MAX:
		r = emit_binary(G, op); break;
	case OP_NEG: case OP_NOT: r = emit_unary(G, op); break;
	case OP_ABS: r = emit_abs(G, op); break;
	case OP_FMA: r = emit_fma(G, op); break;
	case OP_EXP2: case OP_LOG2: case OP_EXP: case OP_LOG: case OP_RCP:
	case OP_SQRT: case OP_RSQRT:
		r = emit_math(G, op); break;
	case OP_EQ: case OP_NE: case OP_LT: case OP_LE: case OP_GT: case OP_GE:
		r = emit_compare(G, op); break;
	case OP_SELECT:
		r = LLVMBuildSelect(G->B, val(G, op->args[0]), val(G, op->args[1]),
				    val(G, op->args[2]), "");
		break;
	case OP_CAST: r = emit_cast(G, op); break;
	case OP_SHFL: r = emit_shfl(G, op); break;
	case OP_BARRIER: emit_barrier(G); break;
	case OP_VAR: r = gen_entry_alloca(G, value_type(G, op->result)); break;
	case OP_VAR_GET:
		r = LLVMBuildLoad2(G->B, value_type(G, op->result), val(G, op->args[0]), "");
		break;
	case OP_VAR_SET: LLVMBuildStore(G->B, val(G, op->args[1]), val(G, op->args[0])); break;
	case OP_LD: r = emit_load(G, op); break;
	case OP_ST: emit_store(G, op); break;
	case OP_IF: emit_if(G, op); break;
	case OP_FOR: emit_for(G, op); break;
	case OP_WHILE: emit_while(G, op); break;
	case OP_CONDITION:
		LLVMBuildCondBr(G->B, val(G, op->args[0]), G->cond_true, G->cond_false);
		break;
	case OP_BREAK: jump_away(G, G->break_bb); break;
	case OP_CONTINUE: jump_away(G, G->cont_bb); break;
	case OP_RETURN: emit_return(G, op); break;
	case OP_CALL: r = emit_call(G, op); break;
	case OP_MBAR_INIT: case OP_MBAR_ARRIVE: case OP_MBAR_ARRIVE_PEER: case OP_MBAR_EXPECT:
	case OP_MBAR_WAIT:
	case OP_TMA_LOAD: case OP_TMA_STORE: case OP_TMA_PREFETCH: case OP_TMA_WAIT:
	case OP_TMA_WAIT_READ: case OP_FENCE_ASYNC:
	case OP_FENCE_PROXY_GLOBAL: case OP_LAUNCH_DEPENDENTS: case OP_WAIT_PREREQUISITES:
	case OP_CLUSTER_SYNC: case OP_WARP_SYNC:
	case OP_NANOSLEEP:
	case OP_ELECT: case OP_NAMED_SYNC: case OP_ROLE: case OP_FRAG_FILL: case OP_MMA:
	case OP_FRAG_SLICE: case OP_FRAG_JOIN:
	case OP_FRAG_STORE: case OP_ROW_BCAST: case OP_ROW_REDUCE: case OP_FRAG_COORD:
	case OP_MMA_WAIT: case OP_FRAG_LOAD: case OP_COL_BCAST: case OP_COL_LOAD: case OP_ROW_LOAD:
	case OP_COL_STORE: case OP_ROW_STORE:
		r = gen_tile_op(G, op);
		break;
	case OP_LOAD: case OP_STORE: case OP_COUNT:
		diag_internal(G->cx, "llvm", "op '%s' reached code generation",
			      tir_op_name(op->code));
		break;
	}
	if (op->result >= 0 && op->code != OP_FOR)
		G->vals[op->result] = r;
}

void gen_block(Gen *G, const Block *b)
{
	for (int i = 0; i < b->nops && !G->cx->internal_error; i++)
		emit_op(G, b->ops[i]);
}

/* ---- functions ----------------------------------------------------------------- */

static LLVMTypeRef tensor_map_type(Gen *G)
{
	LLVMTypeRef t = LLVMGetTypeByName2(G->C, "struct.CUtensorMap");
	if (!t) {
		t = LLVMStructCreateNamed(G->C, "struct.CUtensorMap");
		LLVMTypeRef body = LLVMArrayType2(LLVMInt64TypeInContext(G->C), 16);
		LLVMStructSetBody(t, &body, 1, 0);
	}
	return t;
}

/* A tma parameter is the 128-byte CUtensorMap itself, passed by value and
 * marked grid_constant so its address is the parameter's, which TMA needs
 * (without it LLVM copies it to local memory: hopper.md C.4). All of a
 * kernel's grid constants go in one annotation: LLVM 19 reads only the
 * first "grid_constant" entry of a function. */
static void mark_tensor_map_params(Gen *G, LLVMValueRef fn, const TirFunc *f)
{
	unsigned byval = LLVMGetEnumAttributeKindForName("byval", 5);
	unsigned align = LLVMGetEnumAttributeKindForName("align", 5);
	LLVMMetadataRef idx[TILEC_MAX_PARAMS];
	unsigned n = 0;
	for (int i = 0; i < f->nparams; i++) {
		if (f->params[i].ty.space != SP_TMA)
			continue;
		unsigned at = (unsigned)i + 1;
		LLVMAddAttributeAtIndex(fn, at, LLVMCreateTypeAttribute(G->C, byval, tensor_map_type(G)));
		LLVMAddAttributeAtIndex(fn, at, LLVMCreateEnumAttribute(G->C, align, 64));
		if (n < TILEC_MAX_PARAMS)
			idx[n++] = LLVMValueAsMetadata(LLVMConstInt(LLVMInt32TypeInContext(G->C), at, 0));
	}
	if (!n)
		return;
	LLVMMetadataRef ops[3] = {LLVMValueAsMetadata(fn),
				  LLVMMDStringInContext2(G->C, "grid_constant", 13),
				  LLVMMDNodeInContext2(G->C, idx, n)};
	LLVMAddNamedMetadataOperand(G->M, "nvvm.annotations",
				    LLVMMetadataAsValue(G->C, LLVMMDNodeInContext2(G->C, ops, 3)));
}

static LLVMTypeRef param_type(Gen *G, const TirParam *p)
{
	if (p->ty.space == SP_TMA)
		return LLVMPointerTypeInContext(G->C, 0);
	if (p->ty.space == SP_GLOBAL)
		return LLVMPointerTypeInContext(G->C, NVPTX_ADDRSPACE_GLOBAL);
	return gen_type(G, p->ty.dt);
}

static LLVMValueRef declare_function(Gen *G, const TirFunc *f)
{
	LLVMTypeRef *ps = ctx_alloc(G->cx, (size_t)(f->nparams + 1) * sizeof(LLVMTypeRef));
	for (int i = 0; i < f->nparams; i++)
		ps[i] = param_type(G, &f->params[i]);
	LLVMTypeRef fty = LLVMFunctionType(gen_type(G, f->ret), ps,
					   (unsigned)f->nparams, 0);
	LLVMValueRef fn = LLVMAddFunction(G->M, f->name, fty);
	if (f->is_kernel) {
		LLVMSetFunctionCallConv(fn, LLVMPTXKernelCallConv);
		gen_annotate_kernel(G, fn, f);
	} else {
		LLVMSetLinkage(fn, LLVMInternalLinkage);
		unsigned k = LLVMGetEnumAttributeKindForName("alwaysinline", 12);
		LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
					LLVMCreateEnumAttribute(G->C, k, 0));
	}
	for (int i = 0; i < f->nparams; i++)
		LLVMSetValueName2(LLVMGetParam(fn, (unsigned)i), f->params[i].name,
				  strlen(f->params[i].name));
	if (f->is_kernel)
		mark_tensor_map_params(G, fn, f);
	return fn;
}

/* The arena's start rounded up to `align` bytes (plan-smem reserved the
 * slack): tile_smem + ((-addr) & (align - 1)). */
static LLVMValueRef aligned_smem(Gen *G, int align)
{
	if (align <= 16)
		return G->smem;
	LLVMTypeRef i32 = LLVMInt32TypeInContext(G->C);
	LLVMValueRef addr = LLVMBuildPtrToInt(G->B, G->smem, i32, "");
	LLVMValueRef pad = LLVMBuildAnd(G->B, LLVMBuildNeg(G->B, addr, ""),
					LLVMConstInt(i32, (unsigned)align - 1, 0), "");
	return LLVMBuildGEP2(G->B, LLVMInt8TypeInContext(G->C), G->smem, &pad, 1, "smem.base");
}

/* Each local array is an alloca of its elements in the entry block: SROA keeps it in
 * registers when every access has a constant index. */
static void declare_locals(Gen *G, const TirFunc *f)
{
	G->locals = ctx_alloc(G->cx, ((size_t)f->nbufs + 1) * sizeof *G->locals);
	for (int i = 0; i < f->nbufs; i++) {
		const TirBuffer *b = &f->bufs[i];
		if (b->ty.space != SP_LOCAL)
			continue;
		uint64_t n = 1;
		for (int d = 0; d < b->ty.rank; d++)
			n *= (uint64_t)b->ty.dims[d].value;
		G->locals[i] = gen_entry_alloca(G, LLVMArrayType2(gen_type(G, b->ty.dt), n));
	}
}

static void define_function(Gen *G, TirFunc *f, LLVMValueRef fn)
{
	G->f = f;
	G->fn = fn;
	G->vals = ctx_alloc(G->cx, ((size_t)f->nvalues + 1) * sizeof(LLVMValueRef));
	LLVMBasicBlockRef entry = new_bb(G, "entry");
	G->exit_bb = new_bb(G, "exit");
	LLVMPositionBuilderAtEnd(G->B, entry);
	gen_debug_function(G, f, fn);
	G->ret_slot = f->ret != DT_VOID ? gen_entry_alloca(G, gen_type(G, f->ret)) : NULL;
	G->smem_base = aligned_smem(G, f->smem_align);
	declare_locals(G, f);
	gen_block(G, f->body);
	if (block_open(G)) {
		if (f->ret == DT_VOID)
			LLVMBuildBr(G->B, G->exit_bb);
		else
			LLVMBuildUnreachable(G->B); /* sema proved every path returns */
	}
	LLVMPositionBuilderAtEnd(G->B, G->exit_bb);
	if (f->ret == DT_VOID)
		LLVMBuildRetVoid(G->B);
	else
		LLVMBuildRet(G->B, LLVMBuildLoad2(G->B, gen_type(G, f->ret), G->ret_slot, ""));
	gen_debug_end_function(G);
}

static void declare_smem(Gen *G)
{
	G->smem = LLVMAddGlobalInAddressSpace(G->M, LLVMArrayType2(LLVMInt8TypeInContext(G->C), 0),
					      "tile_smem", NVPTX_ADDRSPACE_SHARED);
	LLVMSetLinkage(G->smem, LLVMExternalLinkage);
	LLVMSetAlignment(G->smem, 1024);
}

bool gen_module(Gen *G, TirModule *m)
{
	G->tm = m;
	G->B = LLVMCreateBuilderInContext(G->C);
	G->funcs = ctx_alloc(G->cx, ((size_t)m->nfuncs + 1) * sizeof(LLVMValueRef));
	declare_smem(G);
	gen_debug_begin(G);
	for (int i = 0; i < m->nfuncs; i++)
		G->funcs[i] = declare_function(G, m->funcs[i]);
	for (int i = 0; i < m->nfuncs && !G->cx->internal_error; i++)
		define_function(G, m->funcs[i], G->funcs[i]);
	gen_debug_finish(G);
	LLVMDisposeBuilder(G->B);
	G->B = NULL;
	char *msg = NULL;
	bool bad = LLVMVerifyModule(G->M, LLVMReturnStatusAction, &msg);
	if (bad && !G->cx->internal_error)
		diag_internal(G->cx, "llvm", "module does not verify: %s", msg ? msg : "");
	LLVMDisposeMessage(msg);
	return !G->cx->internal_error;
}
