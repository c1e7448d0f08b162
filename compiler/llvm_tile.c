/*
 * llvm_tile.c: LLVM IR for the Hopper tile ops: mbarriers, TMA, wgmma,
 * fragments, roles, named barriers.
 *
 * LLVM 19 has no intrinsics for most of these, so they are inline PTX. Every
 * PTX string lives in the table below, with the PTX ISA instruction it
 * encodes. Collective instructions are marked convergent. The wgmma fence and
 * wait take the accumulator registers as tied operands (hopper.md C.7): that
 * is what keeps LLVM from moving accumulator reads or writes across them.
 *
 * Addresses: shared buffers live in the arena `tile_smem`, rounded up at run
 * time to the largest alignment a buffer needs (G->smem_base); the asm
 * operands want 32-bit shared-window addresses, the ld/st ops pointers.
 * Fragment values are LLVM arrays of N/2 floats, the wgmma accumulator of one
 * thread (hopper.md B.3 gives the layout).
 */
#include <string.h>

#include <llvm-c/Core.h>

#include "llvm_gen.h"

/* ---- the inline-PTX table ------------------------------------------------------ */

/* PTX ISA, mbarrier.init: count arrivals per phase */
#define PTX_MBAR_INIT "mbarrier.init.shared::cta.b64 [$0], $1;"
/* PTX ISA, fence.mbarrier_init: makes the inits visible before first use */
#define PTX_MBAR_INIT_FENCE "fence.mbarrier_init.release.cluster;"
/* PTX ISA, mbarrier.arrive */
#define PTX_MBAR_ARRIVE "mbarrier.arrive.shared::cta.b64 _, [$0];"
/* PTX ISA, mapa + mbarrier.arrive .release.cluster .shared::cluster: an arrival on the
 * barrier at the same offset in the cluster's CTA $1 */
#define PTX_MBAR_ARRIVE_PEER \
	"{ .reg .b32 ra;\n\tmapa.shared::cluster.u32 ra, $0, $1;\n\t" \
	"mbarrier.arrive.release.cluster.shared::cluster.b64 _, [ra]; }"
/* PTX ISA, mbarrier.arrive.expect_tx: add tx bytes, then arrive */
#define PTX_MBAR_EXPECT "mbarrier.arrive.expect_tx.shared::cta.b64 _, [$0], $1;"
/* PTX ISA, mbarrier.try_wait.parity, spun until the phase completes */
#define PTX_MBAR_WAIT \
	"{ .reg .pred P; TILE_WAIT_${:uid}: " \
	"mbarrier.try_wait.parity.shared::cta.b64 P, [$0], $1; " \
	"@!P bra TILE_WAIT_${:uid}; }"
/* PTX ISA, cp.async.bulk.tensor (load): .shared::cluster destination, the
 * spelling PTX 8.3 has for a CTA's own shared memory */
#define PTX_TMA_LOAD \
	"cp.async.bulk.tensor.%dd.shared::cluster.global.mbarrier::complete_tx::bytes " \
	"[$0], [$1, {%s}], [$2];"
/* ... multicast: the box to the same offset in each CTA of the 16-bit mask $%d, each one's
 * barrier at the same offset receiving its bytes */
#define PTX_TMA_LOAD_MULTICAST \
	"cp.async.bulk.tensor.%dd.shared::cluster.global.mbarrier::complete_tx::bytes" \
	".multicast::cluster [$0], [$1, {%s}], [$2], $%d;"
/* PTX ISA, cp.async.bulk.tensor (store) + cp.async.bulk.commit_group */
#define PTX_TMA_STORE \
	"cp.async.bulk.tensor.%dd.global.shared::cta.bulk_group [$0, {%s}], [$1]; " \
	"cp.async.bulk.commit_group;"
/* PTX ISA, cp.async.bulk.prefetch.tensor: a box into L2, no completion to wait for */
#define PTX_TMA_PREFETCH "cp.async.bulk.prefetch.tensor.%dd.L2.global.tile [$0, {%s}];"
/* PTX ISA, cp.async.bulk.wait_group: all bulk stores of this thread done */
#define PTX_TMA_WAIT "cp.async.bulk.wait_group 0;"
/* ... until their shared-memory source has been read (it may be reused, or the CTA
 * may exit: the writes still complete) */
#define PTX_TMA_WAIT_READ "cp.async.bulk.wait_group.read 0;"
/* PTX ISA, fence.proxy.async: generic-proxy smem writes visible to TMA/wgmma */
#define PTX_FENCE_ASYNC "fence.proxy.async.shared::cta;"
/* PTX ISA, fence.proxy.async: orders generic-proxy accesses to global memory (a flag's
 * acquire) before async-proxy ones (the TMA loads of the data it guards) */
#define PTX_FENCE_PROXY_GLOBAL "fence.proxy.async.global;"
/* PTX ISA, ld / st with .acquire / .release at GPU scope: a flag between grids */
#define PTX_LD_ACQUIRE "ld.acquire.gpu.global.b32 $0, [$1];"
/* Every thread of the cluster arrives (its shared and global writes released) and waits
 * (acquiring the others'), the cluster's CTAs' shared memory alive past it. */
#define PTX_CLUSTER_ARRIVE "barrier.cluster.arrive.release.aligned;"
#define PTX_CLUSTER_WAIT "barrier.cluster.wait.acquire.aligned;"
#define PTX_CLUSTER_SYNC PTX_CLUSTER_ARRIVE "\n\t" PTX_CLUSTER_WAIT
#define PTX_ST_RELEASE "st.release.gpu.global.b32 [$0], $1;"
/* PTX ISA, atom with .acq_rel at GPU scope: adds $2 to a global i32, $0 the old value (the
 * CTA's writes released before it when a barrier ordered them, the others' acquired) */
#define PTX_ATOM_ADD "atom.acq_rel.gpu.global.add.u32 $0, [$1], $2;"
/* PTX ISA, nanosleep: suspend the warp for about $0 ns (a polling loop's backoff) */
#define PTX_NANOSLEEP "nanosleep.u32 $0;"
/* PTX ISA, griddepcontrol.launch_dependents: a grid launched after this one with
 * programmatic stream serialization may start once every CTA has run this (or exited) */
#define PTX_LAUNCH_DEPENDENTS "griddepcontrol.launch_dependents;"
/* PTX ISA, griddepcontrol.wait: wait until the grids this one depends on (the one before it,
 * when this one was launched with programmatic stream serialization) have completed and
 * their memory operations are visible; without such a launch it returns at once */
#define PTX_WAIT_PREREQUISITES "griddepcontrol.wait;"
/* PTX ISA, bar.arrive: count this warp at barrier $0 of $1 threads, no wait */
#define PTX_BAR_ARRIVE "bar.arrive $0, $1;"
/* PTX ISA, elect.sync: one lane of the warp */
#define PTX_ELECT "{ .reg .pred P; elect.sync _|P, 0xffffffff; selp.u32 $0, 1, 0, P; }"
/* PTX ISA, wgmma.fence / commit_group / wait_group */
#define PTX_WGMMA_FENCE "wgmma.fence.sync.aligned;"
#define PTX_WGMMA_COMMIT "wgmma.commit_group.sync.aligned;"
#define PTX_WGMMA_WAIT "wgmma.wait_group.sync.aligned %d;"
/* PTX ISA, wgmma.mma_async m64nNk16, f32 += A(desc) * B(desc), scale-d 1. The
 * descriptors are the operands' first k-step's plus this step's offset (16-byte units),
 * added inside the asm: as separate values LLVM hoisted one 64-bit descriptor per k-step
 * and operand out of loops (16 registers for a 128-deep SS product), and ptxas kept them */
#define PTX_WGMMA "{ .reg .b64 da, db; add.s64 da, $%d, %llu; add.s64 db, $%d, %llu; " \
	"wgmma.mma_async.sync.aligned.m64n%dk16.f32.%s.%s {%s}, da, db, 1, 1, 1, %d, %d; }"
/* the same with A in registers (RS): no transpose flag for A */
#define PTX_WGMMA_RS "{ .reg .b64 db; add.s64 db, $%d, %llu; " \
	"wgmma.mma_async.sync.aligned.m64n%dk16.f32.%s.%s {%s}, " \
	"{$%d, $%d, $%d, $%d}, db, 1, 1, 1, %d; }"
/* m64nNk8 with tf32 operands, both K-major (tf32 has no transpose flags) */
#define PTX_WGMMA_TF32 "{ .reg .b64 da, db; add.s64 da, $%d, %llu; add.s64 db, $%d, %llu; " \
	"wgmma.mma_async.sync.aligned.m64n%dk8.f32.tf32.tf32 {%s}, da, db, 1, 1, 1; }"
#define PTX_WGMMA_TF32_RS "{ .reg .b64 db; add.s64 db, $%d, %llu; " \
	"wgmma.mma_async.sync.aligned.m64n%dk8.f32.tf32.tf32 {%s}, " \
	"{$%d, $%d, $%d, $%d}, db, 1, 1, 1; }"

/* ---- helpers ---------------------------------------------------------------------- */

static LLVMTypeRef i32t(Gen *G) { return LLVMInt32TypeInContext(G->C); }
static LLVMTypeRef i64t(Gen *G) { return LLVMInt64TypeInContext(G->C); }
static LLVMTypeRef f32t(Gen *G) { return LLVMFloatTypeInContext(G->C); }

static LLVMValueRef c32(Gen *G, int64_t v)
{
	return LLVMConstInt(i32t(G), (unsigned long long)v, 1);
}

static LLVMValueRef c64(Gen *G, uint64_t v)
{
	return LLVMConstInt(i64t(G), v, 0);
}

/* Calls inline PTX; `ret` void or the output type. */
static LLVMValueRef gen_asm(Gen *G, const char *text, const char *cons, LLVMTypeRef ret,
			    LLVMValueRef *args, unsigned n)
{
	LLVMTypeRef tys[160];
	for (unsigned i = 0; i < n; i++)
		tys[i] = LLVMTypeOf(args[i]);
	LLVMTypeRef fty = LLVMFunctionType(ret, tys, n, 0);
	LLVMValueRef fn = LLVMGetInlineAsm(fty, text, strlen(text), cons, strlen(cons), 1, 0,
					   LLVMInlineAsmDialectATT, 0);
	LLVMValueRef call = LLVMBuildCall2(G->B, fty, fn, args, n, "");
	gen_mark_convergent(G, call);
	return call;
}

static LLVMValueRef asm0(Gen *G, const char *text)
{
	return gen_asm(G, text, "~{memory}", LLVMVoidTypeInContext(G->C), NULL, 0);
}

static const TirBuffer *buf(Gen *G, int64_t b)
{
	return &G->f->bufs[b];
}

/* The 32-bit shared address of byte `byte_off` (i32) of buffer `b`. */
static LLVMValueRef smem_addr(Gen *G, int64_t b, LLVMValueRef byte_off)
{
	LLVMValueRef off = LLVMBuildAdd(G->B, c32(G, buf(G, b)->offset), byte_off, "");
	LLVMValueRef p = LLVMBuildGEP2(G->B, LLVMInt8TypeInContext(G->C), G->smem_base, &off, 1, "");
	return LLVMBuildPtrToInt(G->B, p, i32t(G), "");
}

static LLVMValueRef elem_bytes(Gen *G, LLVMValueRef elems, DType dt)
{
	return LLVMBuildMul(G->B, elems, c32(G, dtype_bytes(dt)), "");
}

static LLVMValueRef mbar_addr(Gen *G, int64_t b, LLVMValueRef index)
{
	return smem_addr(G, b, LLVMBuildMul(G->B, index, c32(G, 8), ""));
}

static LLVMValueRef thread_x(Gen *G)
{
	return gen_call_named(G, "llvm.nvvm.read.ptx.sreg.tid.x", i32t(G), NULL, 0);
}

/* ---- mbarriers ---------------------------------------------------------------------- */

/* Thread 0 initialises every barrier of the buffer; all threads wait. */
static void emit_mbar_init(Gen *G, const Op *op)
{
	const TirBuffer *b = buf(G, op->buf);
	int n = b->ty.rank ? (int)b->ty.dims[0].value : 1;
	LLVMBasicBlockRef init = LLVMAppendBasicBlockInContext(G->C, G->fn, "mbar.init");
	LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(G->C, G->fn, "mbar.ready");
	LLVMValueRef first = LLVMBuildICmp(G->B, LLVMIntEQ, thread_x(G), c32(G, 0), "");
	LLVMBuildCondBr(G->B, first, init, done);
	LLVMPositionBuilderAtEnd(G->B, init);
	for (int i = 0; i < n; i++) {
		LLVMValueRef args[2] = {mbar_addr(G, op->buf, c32(G, i)), c32(G, b->ty.count)};
		gen_asm(G, PTX_MBAR_INIT, "r,r,~{memory}", LLVMVoidTypeInContext(G->C), args, 2);
	}
	asm0(G, PTX_MBAR_INIT_FENCE);
	LLVMBuildBr(G->B, done);
	LLVMPositionBuilderAtEnd(G->B, done);
	if (op->attr[0]) {   /* other CTAs reach these barriers: every CTA has initialised */
		asm0(G, PTX_CLUSTER_SYNC);
		return;
	}
	gen_mark_convergent(G, gen_call_named(G, "llvm.nvvm.barrier0",
					      LLVMVoidTypeInContext(G->C), NULL, 0));
}

static void emit_mbar(Gen *G, const Op *op)
{
	LLVMValueRef a = mbar_addr(G, op->buf, G->vals[op->args[0]]);
	LLVMTypeRef v = LLVMVoidTypeInContext(G->C);
	if (op->code == OP_MBAR_ARRIVE) {
		gen_asm(G, PTX_MBAR_ARRIVE, "r,~{memory}", v, &a, 1);
	} else if (op->code == OP_MBAR_ARRIVE_PEER) {
		LLVMValueRef args[2] = {a, G->vals[op->args[1]]};
		gen_asm(G, PTX_MBAR_ARRIVE_PEER, "r,r,~{memory}", v, args, 2);
	} else if (op->code == OP_MBAR_EXPECT) {
		LLVMValueRef args[2] = {a, c32(G, op->imm)};
		gen_asm(G, PTX_MBAR_EXPECT, "r,r,~{memory}", v, args, 2);
	} else {
		LLVMValueRef args[2] = {a, G->vals[op->args[1]]};
		gen_asm(G, PTX_MBAR_WAIT, "r,r,~{memory}", v, args, 2);
	}
}

/* ---- TMA ------------------------------------------------------------------------------ */

/* The generic address of a tensor-map parameter (a byval grid constant). */
static LLVMValueRef tensor_map(Gen *G, int64_t b)
{
	LLVMValueRef p = LLVMGetParam(G->fn, (unsigned)buf(G, b)->param);
	return LLVMBuildPtrToInt(G->B, p, i64t(G), "");
}

/* "{$first+rank-1, ..., $first}": TMA coordinates are innermost first. */
static char *coord_list(Gen *G, int rank, int first)
{
	char *s = ctx_strdup(G->cx, "");
	for (int d = rank - 1; d >= 0; d--)
		s = ctx_printf(G->cx, "%s%s$%d", s, d == rank - 1 ? "" : ", ", first + d);
	return s;
}

static void emit_tma(Gen *G, const Op *op)
{
	bool load = op->code == OP_TMA_LOAD;
	bool multicast = load && op->attr[2];
	int first = load ? 2 : 1;                    /* operands before the coordinates */
	int rank = op->nargs - first - multicast;
	LLVMValueRef args[9];
	int n = 0;
	LLVMValueRef tile = smem_addr(G, op->buf, elem_bytes(G, G->vals[op->args[0]], op->ty));
	if (load) {
		args[n++] = tile;
		args[n++] = tensor_map(G, op->attr[0]);
		args[n++] = mbar_addr(G, op->attr[1], G->vals[op->args[1]]);
	} else {
		args[n++] = tensor_map(G, op->attr[0]);
		args[n++] = tile;
	}
	for (int d = 0; d < rank; d++)
		args[n++] = G->vals[op->args[first + d]];
	char *coords = coord_list(G, rank, load ? 3 : 2);
	char *text = multicast
		? ctx_printf(G->cx, PTX_TMA_LOAD_MULTICAST, rank, coords, 3 + rank)
		: ctx_printf(G->cx, load ? PTX_TMA_LOAD : PTX_TMA_STORE, rank, coords);
	char *cons = load ? ctx_strdup(G->cx, "r,l,r") : ctx_strdup(G->cx, "l,r");
	for (int d = 0; d < rank; d++)
		cons = ctx_printf(G->cx, "%s,r", cons);
	if (multicast) {   /* the mask, a 16-bit register */
		args[n++] = LLVMBuildTrunc(G->B, G->vals[op->args[first + rank]],
					   LLVMInt16TypeInContext(G->C), "");
		cons = ctx_printf(G->cx, "%s,h", cons);
	}
	cons = ctx_printf(G->cx, "%s,~{memory}", cons);
	gen_asm(G, text, cons, LLVMVoidTypeInContext(G->C), args, (unsigned)n);
}

static void emit_tma_prefetch(Gen *G, const Op *op)
{
	int rank = op->nargs;
	LLVMValueRef args[1 + TILEC_MAX_RANK];
	args[0] = tensor_map(G, op->attr[0]);
	for (int d = 0; d < rank; d++)
		args[1 + d] = G->vals[op->args[d]];
	char *cons = ctx_strdup(G->cx, "l");
	for (int d = 0; d < rank; d++)
		cons = ctx_printf(G->cx, "%s,r", cons);
	cons = ctx_printf(G->cx, "%s,~{memory}", cons);
	gen_asm(G, ctx_printf(G->cx, PTX_TMA_PREFETCH, rank, coord_list(G, rank, 1)), cons,
		LLVMVoidTypeInContext(G->C), args, (unsigned)(1 + rank));
}

/* ---- election, named barriers, roles ---------------------------------------------------- */

/* One thread per warpgroup: warp 0 of the warpgroup, the lane elect.sync picks. */
static LLVMValueRef emit_elect(Gen *G)
{
	LLVMValueRef lane = gen_asm(G, PTX_ELECT, "=r", i32t(G), NULL, 0);
	LLVMValueRef warp = LLVMBuildAnd(G->B, LLVMBuildLShr(G->B, thread_x(G), c32(G, 5), ""),
					 c32(G, 3), "");
	LLVMValueRef w0 = LLVMBuildICmp(G->B, LLVMIntEQ, warp, c32(G, 0), "");
	LLVMValueRef l1 = LLVMBuildICmp(G->B, LLVMIntNE, lane, c32(G, 0), "");
	return LLVMBuildAnd(G->B, w0, l1, "");
}

/* bar.sync id, n (wait) or, for signal, bar.arrive id, n (PTX ISA, bar) */
static void emit_named_sync(Gen *G, const Op *op)
{
	LLVMValueRef args[2] = {c32(G, op->imm), c32(G, op->attr[0])};
	if (op->attr[1]) {
		gen_asm(G, PTX_BAR_ARRIVE, "r,r,~{memory}", LLVMVoidTypeInContext(G->C), args, 2);
		return;
	}
	gen_mark_convergent(G, gen_call_named(G, "llvm.nvvm.barrier.sync.cnt",
					      LLVMVoidTypeInContext(G->C), args, 2));
}

/* role: if (lo <= tid.x / 128 < hi) { setmaxnreg; body } */
static void emit_role(Gen *G, const Op *op)
{
	LLVMValueRef wg = LLVMBuildLShr(G->B, thread_x(G), c32(G, 7), "");
	LLVMValueRef ge = LLVMBuildICmp(G->B, LLVMIntUGE, wg, c32(G, op->imm), "");
	LLVMValueRef lt = LLVMBuildICmp(G->B, LLVMIntULT, wg, c32(G, op->attr[0]), "");
	LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(G->C, G->fn, "role");
	LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(G->C, G->fn, "role.end");
	LLVMBuildCondBr(G->B, LLVMBuildAnd(G->B, ge, lt, ""), body, done);
	LLVMPositionBuilderAtEnd(G->B, body);
	int regs = (int)op->attr[1], entry = target_entry_regs(G->f->threads[0] *
		G->f->threads[1] * G->f->threads[2]);
	if (regs && regs != entry) {
		LLVMValueRef r = c32(G, regs);
		gen_mark_convergent(G, gen_call_named(G, regs > entry
			? "llvm.nvvm.setmaxnreg.inc.sync.aligned.u32"
			: "llvm.nvvm.setmaxnreg.dec.sync.aligned.u32",
			LLVMVoidTypeInContext(G->C), &r, 1));
	}
	gen_block(G, op->blocks[0]);
	if (!LLVMGetBasicBlockTerminator(LLVMGetInsertBlock(G->B)))
		LLVMBuildBr(G->B, done);
	LLVMPositionBuilderAtEnd(G->B, done);
}

/* ---- fragments and wgmma ------------------------------------------------------------------ */

/* Elements per thread: N/2 of a [64, N] fragment, 2 of a [64] row vector
 * (rows lane/4 and lane/4 + 8 of the thread's warp), N/4 of an [N] column
 * vector (element j: column 8 (j >> 1) + 2 (lane & 3) + (j & 1)). */
int gen_frag_elems(int cols)
{
	return cols > 0 ? cols / 2 : cols == -1 ? 2 : -cols / 4;
}

LLVMTypeRef gen_frag_type(Gen *G, DType dt, int cols)
{
	return LLVMArrayType2(gen_type(G, dt), (uint64_t)gen_frag_elems(cols));
}

static LLVMValueRef splat(Gen *G, DType dt, int cols, LLVMValueRef x)
{
	LLVMValueRef agg = LLVMGetUndef(gen_frag_type(G, dt, cols));
	for (int i = 0; i < gen_frag_elems(cols); i++)
		agg = LLVMBuildInsertValue(G->B, agg, x, (unsigned)i, "");
	return agg;
}

/* A fragment's elements lie four to a group of 8 columns (emit_col_bcast), so columns
 * c .. c + n - 1 are elements c / 2 .. (c + n) / 2 - 1, and two fragments side by side are
 * their elements one after the other. */
static LLVMValueRef emit_frag_slice(Gen *G, const Op *op)
{
	int cols = G->f->vcols[op->result];
	LLVMValueRef src = G->vals[op->args[0]];
	LLVMValueRef agg = LLVMGetUndef(gen_frag_type(G, op->ty, cols));
	for (int i = 0; i < gen_frag_elems(cols); i++)
		agg = LLVMBuildInsertValue(
			G->B, agg, LLVMBuildExtractValue(G->B, src, (unsigned)(op->imm / 2 + i), ""),
			(unsigned)i, "");
	return agg;
}

static LLVMValueRef emit_frag_join(Gen *G, const Op *op)
{
	int cols = G->f->vcols[op->result], first = gen_frag_elems(G->f->vcols[op->args[0]]);
	LLVMValueRef agg = LLVMGetUndef(gen_frag_type(G, op->ty, cols));
	for (int i = 0; i < gen_frag_elems(cols); i++) {
		LLVMValueRef src = G->vals[op->args[i < first ? 0 : 1]];
		agg = LLVMBuildInsertValue(
			G->B, agg, LLVMBuildExtractValue(G->B, src, (unsigned)(i < first ? i : i - first), ""),
			(unsigned)i, "");
	}
	return agg;
}

static LLVMValueRef emit_frag_fill(Gen *G, const Op *op)
{
	return splat(G, op->ty, G->f->vcols[op->result], G->vals[op->args[0]]);
}

/* Element i of a fragment lies in row half (i >> 1) & 1: the row vector's
 * element for that row. */
static LLVMValueRef emit_row_bcast(Gen *G, const Op *op)
{
	int cols = G->f->vcols[op->result];
	LLVMValueRef rv = G->vals[op->args[0]], agg = LLVMGetUndef(gen_frag_type(G, op->ty, cols));
	for (int i = 0; i < gen_frag_elems(cols); i++)
		agg = LLVMBuildInsertValue(G->B, agg,
					   LLVMBuildExtractValue(G->B, rv, (unsigned)((i >> 1) & 1), ""),
					   (unsigned)i, "");
	return agg;
}

/* Element i of a fragment lies in column 8 (i >> 2) + 2 (lane & 3) + (i & 1):
 * column-vector element 2 (i >> 2) + (i & 1). */
static LLVMValueRef emit_col_bcast(Gen *G, const Op *op)
{
	int cols = G->f->vcols[op->result];
	LLVMValueRef cv = G->vals[op->args[0]], agg = LLVMGetUndef(gen_frag_type(G, op->ty, cols));
	for (int i = 0; i < gen_frag_elems(cols); i++)
		agg = LLVMBuildInsertValue(G->B, agg,
			LLVMBuildExtractValue(G->B, cv, (unsigned)(2 * (i >> 2) + (i & 1)), ""),
			(unsigned)i, "");
	return agg;
}

static LLVMValueRef combine(Gen *G, bool max, LLVMValueRef a, LLVMValueRef b)
{
	if (!max)
		return LLVMBuildFAdd(G->B, a, b, "");
	LLVMValueRef args[2] = {a, b};
	return gen_call_named(G, "llvm.maxnum.f32", f32t(G), args, 2);
}

/* rowmax / rowsum: a thread reduces its elements of each of its two rows,
 * then the 4 lanes that share a row (lane ^ 1, lane ^ 2) combine. */
static LLVMValueRef emit_row_reduce(Gen *G, const Op *op)
{
	bool max = op->imm == 0;
	LLVMValueRef f = G->vals[op->args[0]], out = LLVMGetUndef(gen_frag_type(G, DT_F32, -1));
	int n = gen_frag_elems(G->f->vcols[op->args[0]]);
	for (int r = 0; r < 2; r++) {
		LLVMValueRef acc = NULL;
		for (int i = 0; i < n; i++) {
			if (((i >> 1) & 1) != r)
				continue;
			LLVMValueRef x = LLVMBuildExtractValue(G->B, f, (unsigned)i, "");
			acc = acc ? combine(G, max, acc, x) : x;
		}
		for (int mask = 1; mask <= 2; mask <<= 1) {
			LLVMValueRef args[4] = {c32(G, -1), acc, c32(G, mask), c32(G, 0x1f)};
			LLVMValueRef other = gen_call_named(G, "llvm.nvvm.shfl.sync.bfly.f32", f32t(G),
							    args, 4);
			gen_mark_convergent(G, other);
			acc = combine(G, max, acc, other);
		}
		out = LLVMBuildInsertValue(G->B, out, acc, (unsigned)r, "");
	}
	return out;
}

static void frag_coord(Gen *G, int i, LLVMValueRef *row, LLVMValueRef *col);

static LLVMValueRef emit_frag_coord(Gen *G, const Op *op)
{
	int cols = G->f->vcols[op->result];
	LLVMValueRef agg = LLVMGetUndef(gen_frag_type(G, DT_I32, cols));
	for (int i = 0; i < gen_frag_elems(cols); i++) {
		LLVMValueRef row, col;
		frag_coord(G, i, &row, &col);
		agg = LLVMBuildInsertValue(G->B, agg, op->imm == 0 ? row : col, (unsigned)i, "");
	}
	return agg;
}

/* Runs an asm that takes the accumulator registers tied in and out (plus
 * `extra` further inputs) and returns the new accumulator array. */
static LLVMValueRef acc_asm(Gen *G, const char *text, LLVMValueRef acc, int n,
			    LLVMValueRef *extra, int nextra, const char *extra_cons)
{
	LLVMValueRef args[160];
	LLVMTypeRef fields[128];
	char *cons = ctx_strdup(G->cx, "");
	for (int i = 0; i < n; i++) {
		fields[i] = f32t(G);
		cons = ctx_printf(G->cx, "%s%s=f", cons, i ? "," : "");
	}
	for (int i = 0; i < n; i++) {
		args[i] = LLVMBuildExtractValue(G->B, acc, (unsigned)i, "");
		cons = ctx_printf(G->cx, "%s,%d", cons, i);
	}
	for (int i = 0; i < nextra; i++)
		args[n + i] = extra[i];
	cons = ctx_printf(G->cx, "%s%s,~{memory}", cons, extra_cons);
	LLVMTypeRef st = LLVMStructTypeInContext(G->C, fields, (unsigned)n, 0);
	LLVMValueRef r = gen_asm(G, text, cons, st, args, (unsigned)(n + nextra));
	LLVMValueRef out = LLVMGetUndef(gen_frag_type(G, DT_F32, 2 * n));
	for (int i = 0; i < n; i++)
		out = LLVMBuildInsertValue(G->B, out, LLVMBuildExtractValue(G->B, r, (unsigned)i, ""),
					   (unsigned)i, "");
	return out;
}

/* wgmma.fence with the accumulator and the RS A registers tied through, so
 * the A registers are written before the fence (hopper.md B.1: a fence
 * separates register writes from the wgmma that reads them). */
static LLVMValueRef fence_with_a(Gen *G, LLVMValueRef acc, int n, LLVMValueRef *a, int na)
{
	LLVMValueRef args[264];
	LLVMTypeRef fields[264];
	char *cons = ctx_strdup(G->cx, "");
	for (int i = 0; i < n + na; i++) {
		fields[i] = i < n ? f32t(G) : i32t(G);
		cons = ctx_printf(G->cx, "%s%s=%s", cons, i ? "," : "", i < n ? "f" : "r");
	}
	for (int i = 0; i < n + na; i++) {
		args[i] = i < n ? LLVMBuildExtractValue(G->B, acc, (unsigned)i, "") : a[i - n];
		cons = ctx_printf(G->cx, "%s,%d", cons, i);
	}
	cons = ctx_printf(G->cx, "%s,~{memory}", cons);
	LLVMTypeRef st = LLVMStructTypeInContext(G->C, fields, (unsigned)(n + na), 0);
	LLVMValueRef r = gen_asm(G, PTX_WGMMA_FENCE, cons, st, args, (unsigned)(n + na));
	LLVMValueRef out = LLVMGetUndef(gen_frag_type(G, DT_F32, 2 * n));
	for (int i = 0; i < n; i++)
		out = LLVMBuildInsertValue(G->B, out, LLVMBuildExtractValue(G->B, r, (unsigned)i, ""),
					   (unsigned)i, "");
	for (int i = 0; i < na; i++)
		a[i] = LLVMBuildExtractValue(G->B, r, (unsigned)(n + i), "");
	return out;
}

/* The RS A operand registers: for k16 step j, register r packs elements
 * 8j + 2r (low half) and 8j + 2r + 1 (high) of the bf16/f16 fragment. */
static void pack_a(Gen *G, LLVMValueRef frag, DType dt, int k, LLVMValueRef *regs)
{
	LLVMTypeRef vt = LLVMVectorType(gen_type(G, dt), 2);
	for (int r = 0; r < k / 4; r++) {
		LLVMValueRef v = LLVMGetUndef(vt);
		for (int h = 0; h < 2; h++)
			v = LLVMBuildInsertElement(G->B, v,
				LLVMBuildExtractValue(G->B, frag, (unsigned)(2 * r + h), ""), c32(G, h), "");
		regs[r] = LLVMBuildBitCast(G->B, v, i32t(G), "");
	}
}

/* f32 -> tf32, rounded to nearest (ties away), as the bits of an f32 */
static LLVMValueRef round_tf32(Gen *G, LLVMValueRef x)
{
	return gen_call_named(G, "llvm.nvvm.f2tf32.rna", i32t(G), &x, 1);
}

/* The RS A operand registers of a tf32 product: for k8 step j, a0 .. a3 hold rows g, g + 8,
 * g, g + 8 and the step's k = t, t, t + 4, t + 4 (g = lane / 4, t = lane % 4). The fragment's
 * elements 4 j .. 4 j + 3 are columns 8 j + 2 t, + 1 of rows g and g + 8, so k = t is column
 * 8 j + 2 t and k = t + 4 column 8 j + 2 t + 1: the order a tf32 tile stores (pair_ptr). */
static void pack_a_tf32(Gen *G, LLVMValueRef frag, int k, LLVMValueRef *regs)
{
	static const int elem[4] = {0, 2, 1, 3};
	for (int r = 0; r < k / 2; r++)
		regs[r] = round_tf32(G, LLVMBuildExtractValue(G->B, frag,
							      (unsigned)(r / 4 * 4 + elem[r % 4]), ""));
}

/* The 64-bit shared-memory matrix descriptor (hopper.md B.2) of a swizzled
 * tile starting at `addr`: LBO and SBO in 16-byte units, layout type from
 * the swizzle (128 -> 1, 64 -> 2, 32 -> 3). */
static LLVMValueRef descriptor(Gen *G, LLVMValueRef addr, int swizzle, uint64_t lbo,
			       uint64_t sbo)
{
	uint64_t type = swizzle == 128 ? 1 : swizzle == 64 ? 2 : 3;
	uint64_t high = (lbo & 0x3FFF) << 16 | (sbo & 0x3FFF) << 32 | type << 62;
	LLVMValueRef a = LLVMBuildZExt(G->B, LLVMBuildLShr(G->B, addr, c32(G, 4), ""), i64t(G), "");
	a = LLVMBuildAnd(G->B, a, c64(G, 0x3FFF), "");
	return LLVMBuildOr(G->B, a, c64(G, high), "");
}

static char *out_list(Gen *G, int n)
{
	char *s = ctx_strdup(G->cx, "");
	for (int i = 0; i < n; i++)
		s = ctx_printf(G->cx, "%s%s$%d", s, i ? ", " : "", i);
	return s;
}

/* Byte offset of k16 step kk inside a K-major operand whose rows are
 * `row` bytes: 32 bytes per step within a row, then the next slab. */
static uint64_t kmajor_step(int kk, uint64_t row, uint64_t slab)
{
	int per_row = (int)(row / 32);
	return (uint64_t)(kk / per_row) * slab + (uint64_t)(kk % per_row) * 32;
}

/* The wgmma instruction text of one k-step: SS (A by descriptor) or RS (A in 4
 * registers); aoff and boff are the step's descriptor offsets (16-byte units). */
static char *wgmma_text(Gen *G, int n, DType dt, bool rs, bool a_mmajor, bool b_kmajor,
			uint64_t aoff, uint64_t boff)
{
	const char *ty = dt == DT_BF16 ? "bf16" : "f16";
	int a0 = 2 * n;
	if (dt == DT_TF32)
		return rs ? ctx_printf(G->cx, PTX_WGMMA_TF32_RS, a0 + 4, (unsigned long long)boff,
				       n * 2, out_list(G, n), a0, a0 + 1, a0 + 2, a0 + 3)
			  : ctx_printf(G->cx, PTX_WGMMA_TF32, a0, (unsigned long long)aoff, a0 + 1,
				       (unsigned long long)boff, n * 2, out_list(G, n));
	if (!rs)
		return ctx_printf(G->cx, PTX_WGMMA, a0, (unsigned long long)aoff, a0 + 1,
				  (unsigned long long)boff, n * 2, ty, ty, out_list(G, n),
				  a_mmajor ? 1 : 0, b_kmajor ? 0 : 1);
	return ctx_printf(G->cx, PTX_WGMMA_RS, a0 + 4, (unsigned long long)boff, n * 2, ty, ty,
			  out_list(G, n), a0, a0 + 1, a0 + 2, a0 + 3, b_kmajor ? 0 : 1);
}

/* acc = wgmma(acc, A, B): fence, K/16 wgmma instructions (K/8 with tf32), commit, wait 0.
 * K-major operands step 32 bytes per k16 inside a swizzle row and jump to
 * the next slab after a row; B N-major ([K][N], N in slabs of one swizzle
 * row) steps 16 rows per k16, and LBO is the slab stride. SBO = 8 rows (one
 * swizzle repeat). A M-major ([K][M], transpose(A)) is addressed like an
 * N-major B. RS: A comes from a bf16/f16 fragment in registers, or an f32 one rounded to
 * tf32 (pack_a_tf32) when B is a tf32 tile; a tf32 k8 step is 32 bytes too. */
static LLVMValueRef emit_mma(Gen *G, const Op *op)
{
	bool rs = op->buf < 0, b_kmajor = op->attr[2] & 1, a_mmajor = op->attr[2] >> 1 & 1;
	const TirBuffer *B = buf(G, op->attr[0]);
	int n = (int)op->attr[3] / 2, k = (int)op->attr[1];
	DType dt = B->ty.dt;
	uint64_t b_row = (uint64_t)B->ty.swizzle, b_slab = (uint64_t)op->attr[5];
	LLVMValueRef b_addr = smem_addr(G, op->attr[0], elem_bytes(G, G->vals[op->args[2]], dt));
	LLVMValueRef db = descriptor(G, b_addr, B->ty.swizzle, b_kmajor ? 1 : b_slab >> 4,
				     8 * b_row >> 4);
	LLVMValueRef da = NULL, a_regs[128];
	uint64_t a_row = 0, a_slab = (uint64_t)op->attr[4];
	bool tf32 = dt == DT_TF32;
	int kstep = tf32 ? 8 : 16, nregs = tf32 ? k / 2 : k / 4;
	if (rs && tf32) {
		pack_a_tf32(G, G->vals[op->args[1]], k, a_regs);
	} else if (rs) {
		pack_a(G, G->vals[op->args[1]], dt, k, a_regs);
	} else {
		const TirBuffer *A = buf(G, op->buf);
		a_row = (uint64_t)A->ty.swizzle;
		LLVMValueRef a_addr = smem_addr(G, op->buf, elem_bytes(G, G->vals[op->args[1]], dt));
		da = descriptor(G, a_addr, A->ty.swizzle, a_mmajor ? a_slab >> 4 : 1, 8 * a_row >> 4);
	}
	LLVMValueRef acc = rs ? fence_with_a(G, G->vals[op->args[0]], n, a_regs, nregs)
			      : acc_asm(G, PTX_WGMMA_FENCE, G->vals[op->args[0]], n, NULL, 0, "");
	for (int kk = 0; kk < k / kstep; kk++) {
		uint64_t boff = b_kmajor ? kmajor_step(kk, b_row, b_slab) : 16 * b_row * (uint64_t)kk;
		if (rs) {
			LLVMValueRef ops[5] = {a_regs[4 * kk], a_regs[4 * kk + 1], a_regs[4 * kk + 2],
					       a_regs[4 * kk + 3], db};
			char *text = wgmma_text(G, n, dt, rs, a_mmajor, b_kmajor, 0, boff >> 4);
			acc = acc_asm(G, text, acc, n, ops, 5, ",r,r,r,r,l");
		} else {
			uint64_t aoff = a_mmajor ? 16 * a_row * (uint64_t)kk
						 : kmajor_step(kk, a_row, a_slab);
			LLVMValueRef ops[2] = {da, db};
			char *text = wgmma_text(G, n, dt, rs, a_mmajor, b_kmajor, aoff >> 4, boff >> 4);
			acc = acc_asm(G, text, acc, n, ops, 2, ",l,l");
		}
	}
	asm0(G, PTX_WGMMA_COMMIT);
	if (op->imm) /* mma_async: the group stays in flight until an mma_wait */
		return acc;
	return acc_asm(G, ctx_printf(G->cx, PTX_WGMMA_WAIT, 0), acc, n, NULL, 0, "");
}

static LLVMValueRef emit_mma_wait(Gen *G, const Op *op)
{
	int n = G->f->vcols[op->args[0]] / 2;
	return acc_asm(G, ctx_printf(G->cx, PTX_WGMMA_WAIT, (int)op->imm), G->vals[op->args[0]],
		       n, NULL, 0, "");
}

/* Row and column of element i of this thread's accumulator (hopper.md B.3). */
static void frag_coord(Gen *G, int i, LLVMValueRef *row, LLVMValueRef *col)
{
	LLVMValueRef t = LLVMBuildAnd(G->B, thread_x(G), c32(G, 127), "");
	LLVMValueRef w = LLVMBuildLShr(G->B, t, c32(G, 5), "");
	LLVMValueRef lane = LLVMBuildAnd(G->B, t, c32(G, 31), "");
	LLVMValueRef r = LLVMBuildAdd(G->B, LLVMBuildMul(G->B, w, c32(G, 16), ""),
				      LLVMBuildLShr(G->B, lane, c32(G, 2), ""), "");
	*row = LLVMBuildAdd(G->B, r, c32(G, 8 * ((i >> 1) & 1)), "");
	LLVMValueRef c = LLVMBuildMul(G->B, LLVMBuildAnd(G->B, lane, c32(G, 3), ""), c32(G, 2), "");
	*col = LLVMBuildAdd(G->B, c, c32(G, 8 * (i >> 2) + (i & 1)), "");
}

/* Two adjacent elements of the fragment as the destination's dtype. */
static LLVMValueRef pair(Gen *G, LLVMValueRef frag, int i, DType dt)
{
	LLVMTypeRef et = gen_type(G, dt);
	LLVMTypeRef vt = LLVMVectorType(et, 2);
	LLVMValueRef v = LLVMGetUndef(vt);
	if ((dt == DT_BF16 || dt == DT_F16) &&
	    LLVMGetTypeKind(LLVMGetElementType(LLVMTypeOf(frag))) == LLVMFloatTypeKind)
		return gen_round_pair(G, LLVMBuildExtractValue(G->B, frag, (unsigned)i, ""),
				      LLVMBuildExtractValue(G->B, frag, (unsigned)i + 1, ""), dt);
	for (int j = 0; j < 2; j++) {
		LLVMValueRef x = LLVMBuildExtractValue(G->B, frag, (unsigned)(i + j), "");
		if (dt == DT_BF16 || dt == DT_F16)
			x = gen_fp_convert(G, x, et);
		else if (dt == DT_I32 || dt == DT_I64)
			x = LLVMBuildFPToSI(G->B, x, et, "");
		v = LLVMBuildInsertElement(G->B, v, x, c32(G, j), "");
	}
	return v;
}

/* A shared-memory byte offset through the swizzle: the 16-byte chunk index XORed with the
 * 128-byte line within the swizzle's repeat (as TMA writes and wgmma reads). */
static LLVMValueRef swizzled(Gen *G, LLVMValueRef off, int swizzle)
{
	if (!swizzle)
		return off;
	LLVMValueRef line = LLVMBuildAnd(G->B, LLVMBuildLShr(G->B, off, c32(G, 7), ""),
					 c32(G, swizzle / 16 - 1), "");
	return LLVMBuildXor(G->B, off, LLVMBuildShl(G->B, line, c32(G, 4), ""), "");
}

/* The arena pointer of byte thread + pre + konst of tile b (pre and konst constants): pre goes
 * through the swizzle's XOR with the per-thread part; konst, where it is a whole number of the
 * XOR's repeats (swizzle / 16 lines of 128 bytes), is added after it, a second GEP the back end
 * folds into the access's immediate. Without a swizzle both are added there. */
static LLVMValueRef swizzled_ptr(Gen *G, const TirBuffer *b, LLVMValueRef thread, int64_t pre,
				 int64_t konst)
{
	LLVMValueRef off;
	if (b->ty.swizzle) {
		if (konst % (b->ty.swizzle / 16 * 128) != 0) {
			pre += konst;
			konst = 0;
		}
		off = swizzled(G, LLVMBuildAdd(G->B, thread, c32(G, pre), ""), b->ty.swizzle);
	} else {
		off = thread;
		konst += pre;
	}
	LLVMTypeRef i8 = LLVMInt8TypeInContext(G->C);
	LLVMValueRef p = LLVMBuildGEP2(G->B, i8, G->smem_base, &off, 1, "");
	if (konst == 0)
		return p;
	LLVMValueRef k = c64(G, (uint64_t)konst);
	return LLVMBuildGEP2(G->B, i8, p, &k, 1, "");
}

/* The arena pointer of the element pair (i, i+1) of this thread's fragment
 * in a shared tile: row-major, with the 16-byte chunk index XORed by the row
 * within the swizzle repeat for swizzled tiles (as TMA and wgmma address).
 * The address is built as a per-thread part (the same for every pair, so it
 * is computed once) plus a per-pair constant byte offset in a second GEP,
 * which the back end folds into the load's or store's immediate: one
 * address register per tile instead of one per pair (the i32 sum's sign
 * extension kept LLVM from splitting off the constant). With a swizzle only
 * row constants that are whole swizzle repeats (8 rows of 128 bytes, whole
 * slabs) move out; the column constants go through the XOR. */
static LLVMValueRef pair_ptr(Gen *G, const TirBuffer *b, LLVMValueRef base, int i)
{
	int eb = dtype_bytes(b->ty.dt);
	int64_t width = b->ty.dims[b->ty.rank - 1].value;
	int64_t row_bytes = width * eb;
	LLVMValueRef row, col;
	frag_coord(G, 0, &row, &col);   /* this thread's (row, column) of pair 0 */
	/* a tf32 tile: element i alone, column 8 j + 2 t + h at 8 j + t + 4 h (pack_a_tf32) */
	bool tf32 = b->ty.dt == DT_TF32;
	if (tf32)
		col = LLVMBuildLShr(G->B, col, c32(G, 1), "");
	int64_t row_c = 8 * ((i >> 1) & 1), col_c = 8 * (i >> 2) + (tf32 ? 4 : 1) * (i & 1);
	/* a fragment wider than the tile's rows lies in slabs of whole rows:
	 * the slab is fixed per element (the lane adds less than 8 columns) */
	int64_t slab = 8 * (i >> 2) / width, konst = 0;
	if (slab) {
		konst += slab * b->ty.dims[b->ty.rank - 2].value * row_bytes;
		col_c -= slab * width;
	}
	konst += row_c * row_bytes;
	LLVMValueRef thread = LLVMBuildAdd(G->B, base, LLVMBuildAdd(G->B,
		LLVMBuildMul(G->B, row, c32(G, row_bytes), ""),
		LLVMBuildMul(G->B, col, c32(G, eb), ""), ""), "");
	return swizzled_ptr(G, b, thread, col_c * eb, konst);
}

static LLVMValueRef tile_base(Gen *G, const Op *op, int arg)
{
	const TirBuffer *b = buf(G, op->buf);
	return LLVMBuildAdd(G->B, c32(G, b->offset),
			    elem_bytes(G, G->vals[op->args[arg]], b->ty.dt), "");
}

/* Whether a [64, cols] fragment loads from a 16-bit shared tile by ldmatrix: every 8 x 8
 * matrix row 16 aligned bytes of one slab (lowering sets attr0 where the view's element offset
 * is a multiple of 8). */
static bool matrix_path(const TirBuffer *b, const Op *op, int cols)
{
	int64_t width = b->ty.dims[b->ty.rank - 1].value;
	return dtype_bytes(b->ty.dt) == 2 && op->attr[0] && width % 16 == 0 && cols % 16 == 0;
}

/* The shared pointer this lane gives ldmatrix (.x4, non-transposed) for columns
 * 16 s16 .. 16 s16 + 15 of a fragment: lanes 8 m .. 8 m + 7 address the rows of matrix m,
 * the 8-column group 2 s16 + m / 2 of row half m % 2 of the warp's 16 rows, whose registers
 * are the accumulator layout's pairs (insert_matrices). Slabs and the swizzle as pair_ptr. */
static LLVMValueRef matrix_row_ptr(Gen *G, const TirBuffer *b, LLVMValueRef base, int s16)
{
	int64_t width = b->ty.dims[b->ty.rank - 1].value, row_bytes = width * 2;
	LLVMValueRef t = LLVMBuildAnd(G->B, thread_x(G), c32(G, 127), "");
	LLVMValueRef w = LLVMBuildLShr(G->B, t, c32(G, 5), "");
	LLVMValueRef lane = LLVMBuildAnd(G->B, t, c32(G, 31), "");
	LLVMValueRef m = LLVMBuildLShr(G->B, lane, c32(G, 3), "");
	LLVMValueRef row = LLVMBuildAdd(G->B, LLVMBuildMul(G->B, w, c32(G, 16), ""),
		LLVMBuildAdd(G->B, LLVMBuildMul(G->B, LLVMBuildAnd(G->B, m, c32(G, 1), ""),
						c32(G, 8), ""),
			     LLVMBuildAnd(G->B, lane, c32(G, 7), ""), ""), "");
	LLVMValueRef col = LLVMBuildMul(G->B, LLVMBuildLShr(G->B, m, c32(G, 1), ""), c32(G, 8), "");
	LLVMValueRef thread = LLVMBuildAdd(G->B, base, LLVMBuildAdd(G->B,
		LLVMBuildMul(G->B, row, c32(G, row_bytes), ""),
		LLVMBuildMul(G->B, col, c32(G, 2), ""), ""), "");
	int64_t slab = 16 * s16 / width, konst = 0;
	if (slab)
		konst = slab * b->ty.dims[b->ty.rank - 2].value * row_bytes;
	return swizzled_ptr(G, b, thread, 16 * s16 % width * 2, konst);
}

/* ldmatrix .x4's four registers r for columns 16 s16 .. as f32 fragment elements of agg:
 * register q holds the pair of column group 2 s16 + q / 2, row half q % 2 (frag_coord) */
static LLVMValueRef insert_matrices(Gen *G, LLVMValueRef agg, LLVMValueRef r, int s16, DType dt)
{
	for (int q = 0; q < 4; q++) {
		LLVMValueRef x[2];
		gen_unpack_pair(G, LLVMBuildExtractValue(G->B, r, (unsigned)q, ""), dt, x);
		for (int j = 0; j < 2; j++)
			agg = LLVMBuildInsertValue(G->B, agg, x[j],
						   (unsigned)(4 * (2 * s16 + q / 2) + 2 * (q % 2) + j), "");
	}
	return agg;
}

/* frag_store(transpose(t), f): f [64, N] (f32) into the tf32 tile t [2, N, 32] as f^T. Element
 * (r, c) goes to slab r / 32, row c, column r % 32, whose 8-column group keeps pair_ptr's order
 * (column 8 g + p at 8 g + p / 2 + 4 (p % 2)): K-major with the k order of a tf32 tile. A lane's
 * rows r = 16 w + l / 4 (+ 8) sit at one position p = l / 4 of their groups; its columns c = 2
 * (l % 4) (+ 1, + 8 j) are rows of t, so the swizzle's XOR differs across the lanes of a store and
 * its 32 words fall in distinct banks. */
static void frag_store_shared_t(Gen *G, const Op *op, LLVMValueRef base)
{
	const TirBuffer *b = buf(G, op->buf);
	int cols = G->f->vcols[op->args[0]];
	int64_t slab_bytes = b->ty.dims[1].value * 128;
	LLVMValueRef t = LLVMBuildAnd(G->B, thread_x(G), c32(G, 127), "");
	LLVMValueRef w = LLVMBuildLShr(G->B, t, c32(G, 5), "");
	LLVMValueRef lane = LLVMBuildAnd(G->B, t, c32(G, 31), "");
	LLVMValueRef p = LLVMBuildLShr(G->B, lane, c32(G, 2), "");
	/* slab w / 2, row 2 (l % 4), column 16 (w % 2) + p / 2 + 4 (p % 2) */
	LLVMValueRef col = LLVMBuildAdd(G->B,
		LLVMBuildMul(G->B, LLVMBuildAnd(G->B, w, c32(G, 1), ""), c32(G, 16), ""),
		LLVMBuildAdd(G->B, LLVMBuildLShr(G->B, p, c32(G, 1), ""),
			     LLVMBuildMul(G->B, LLVMBuildAnd(G->B, p, c32(G, 1), ""), c32(G, 4), ""),
			     ""), "");
	LLVMValueRef row = LLVMBuildMul(G->B, LLVMBuildAnd(G->B, lane, c32(G, 3), ""), c32(G, 2), "");
	LLVMValueRef thread = LLVMBuildAdd(G->B, base, LLVMBuildAdd(G->B,
		LLVMBuildMul(G->B, LLVMBuildLShr(G->B, w, c32(G, 1), ""), c32(G, (int)slab_bytes), ""),
		LLVMBuildAdd(G->B, LLVMBuildMul(G->B, row, c32(G, 128), ""),
			     LLVMBuildMul(G->B, col, c32(G, 4), ""), ""), ""), "");
	LLVMTypeRef i8 = LLVMInt8TypeInContext(G->C);
	for (int i = 0; i < cols / 2; i++) {
		/* element i: row + 8 ((i >> 1) & 1) of f (column + 8 of t), column 8 (i >> 2) + (i & 1)
		 * (row of t); whole 8-row swizzle repeats (1024 bytes) after the XOR */
		int64_t pre = (i & 1) * 128 + ((i >> 1) & 1) * 32, konst = (int64_t)(i >> 2) * 1024;
		LLVMValueRef off = swizzled(G, LLVMBuildAdd(G->B, thread, c32(G, (int)pre), ""),
					    b->ty.swizzle);
		LLVMValueRef ptr = LLVMBuildGEP2(G->B, i8, G->smem_base, &off, 1, "");
		LLVMValueRef k = c64(G, (uint64_t)konst);
		ptr = LLVMBuildGEP2(G->B, i8, ptr, &k, 1, "");
		LLVMValueRef x = LLVMBuildExtractValue(G->B, G->vals[op->args[0]], (unsigned)i, "");
		LLVMValueRef st = LLVMBuildStore(G->B, round_tf32(G, x), ptr);
		LLVMSetAlignment(st, 4);
	}
}

/* frag -> shared tile: each thread writes its element pairs (lowering puts a
 * fence.proxy.async after it). */
static void frag_store_shared(Gen *G, const Op *op)
{
	const TirBuffer *b = buf(G, op->buf);
	int cols = G->f->vcols[op->args[0]];
	LLVMValueRef base = tile_base(G, op, 1);
	if (op->imm) {
		frag_store_shared_t(G, op, base);
		return;
	}
	if (b->ty.dt == DT_TF32) {
		for (int i = 0; i < cols / 2; i++) {
			LLVMValueRef x = LLVMBuildExtractValue(G->B, G->vals[op->args[0]], (unsigned)i, "");
			LLVMValueRef st = LLVMBuildStore(G->B, round_tf32(G, x), pair_ptr(G, b, base, i));
			LLVMSetAlignment(st, 4);
		}
		return;
	}
	for (int i = 0; i < cols / 2; i += 2) {
		LLVMValueRef st = LLVMBuildStore(G->B, pair(G, G->vals[op->args[0]], i, op->ty),
						 pair_ptr(G, b, base, i));
		LLVMSetAlignment(st, (unsigned)(2 * dtype_bytes(op->ty)));
	}
}

/* frag_load(transpose(t)): t [K, 64] (16-bit, 64-element rows) -> the f32 fragment t^T [64, K].
 * Fragment element pair (r, c), (r, c + 1) is t[c][r], t[c + 1][r]: row r of an 8 x 8 block of
 * t transposed, which ldmatrix.trans gives each lane in the accumulator layout. Per 16 columns
 * of the fragment one ldmatrix.x4: matrix m (lanes 8 m .. 8 m + 7 address its rows) is the
 * 8-column group 2 s + m / 2 of the fragment's row half m % 2 of the warp's 16 rows. */
static LLVMValueRef frag_load_shared_t(Gen *G, const Op *op)
{
	const TirBuffer *b = buf(G, op->buf);
	DType dt = b->ty.dt;
	int cols = G->f->vcols[op->result];
	LLVMValueRef base = tile_base(G, op, 0), agg = LLVMGetUndef(gen_frag_type(G, DT_F32, cols));
	LLVMValueRef t = thread_x(G);
	LLVMValueRef lane = LLVMBuildAnd(G->B, t, c32(G, 31), "");
	LLVMValueRef warp = LLVMBuildAnd(G->B, LLVMBuildLShr(G->B, t, c32(G, 5), ""), c32(G, 3), "");
	LLVMValueRef m = LLVMBuildLShr(G->B, lane, c32(G, 3), "");
	/* this lane's row of t (within 16) and byte column: 16 w + 8 (m % 2) elements */
	LLVMValueRef row = LLVMBuildAdd(G->B, LLVMBuildMul(G->B, LLVMBuildLShr(G->B, m, c32(G, 1), ""),
							   c32(G, 8), ""),
					LLVMBuildAnd(G->B, lane, c32(G, 7), ""), "");
	LLVMValueRef col = LLVMBuildAdd(G->B, LLVMBuildMul(G->B, warp, c32(G, 32), ""),
					LLVMBuildMul(G->B, LLVMBuildAnd(G->B, m, c32(G, 1), ""),
						     c32(G, 16), ""), "");
	LLVMTypeRef i32 = i32t(G);
	LLVMTypeRef four[4] = {i32, i32, i32, i32};
	LLVMTypeRef rt = LLVMStructTypeInContext(G->C, four, 4, 0);
	for (int s16 = 0; s16 < cols / 16; s16++) {
		/* byte offset of the lane's row in the tile, the swizzle's XOR on its 16-byte chunk
		 * (as TMA wrote it; rows are 128 bytes, so the row is the swizzle line) */
		LLVMValueRef off = LLVMBuildAdd(G->B, base, LLVMBuildAdd(G->B,
			LLVMBuildMul(G->B, LLVMBuildAdd(G->B, row, c32(G, 16 * s16), ""), c32(G, 128), ""),
			col, ""), "");
		off = swizzled(G, off, b->ty.swizzle);
		LLVMValueRef p = LLVMBuildGEP2(G->B, LLVMInt8TypeInContext(G->C), G->smem_base, &off, 1,
					       "");
		LLVMValueRef addr = LLVMBuildPtrToInt(G->B, p, i32, "");
		LLVMValueRef r = gen_asm(G, "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 "
					 "{$0, $1, $2, $3}, [$4];", "=r,=r,=r,=r,r,~{memory}", rt,
					 &addr, 1);
		agg = insert_matrices(G, agg, r, s16, dt);
	}
	return agg;
}

/* shared tile -> f32 fragment, the inverse of frag_store_shared */
static LLVMValueRef frag_load_shared(Gen *G, const Op *op)
{
	const TirBuffer *b = buf(G, op->buf);
	DType dt = b->ty.dt;
	int cols = G->f->vcols[op->result];
	if (op->imm)
		return frag_load_shared_t(G, op);
	LLVMTypeRef vt = LLVMVectorType(gen_type(G, dt), 2);
	LLVMValueRef base = tile_base(G, op, 0), agg = LLVMGetUndef(gen_frag_type(G, DT_F32, cols));
	if (dt == DT_TF32) {
		for (int i = 0; i < cols / 2; i++) {
			LLVMValueRef v = LLVMBuildLoad2(G->B, f32t(G), pair_ptr(G, b, base, i), "");
			LLVMSetAlignment(v, 4);
			agg = LLVMBuildInsertValue(G->B, agg, v, (unsigned)i, "");
		}
		return agg;
	}
	if (matrix_path(b, op, cols)) {
		/* four 8 x 8 matrices an ldmatrix (the intrinsic: LLVM sees a load of shared memory).
		 * A lane reads rows other lanes of its warp write by element pairs (the fragment's
		 * frag_store, or an in-place update after this load): warp barriers order those
		 * accesses, as each thread's own program order did for the pairs */
		asm0(G, "bar.warp.sync -1;");
		LLVMTypeRef i32 = i32t(G);
		LLVMTypeRef four[4] = {i32, i32, i32, i32};
		LLVMTypeRef rt = LLVMStructTypeInContext(G->C, four, 4, 0);
		for (int s16 = 0; s16 < cols / 16; s16++) {
			LLVMValueRef p = matrix_row_ptr(G, b, base, s16);
			LLVMValueRef r = gen_call_named(G, "llvm.nvvm.ldmatrix.sync.aligned.m8n8.x4.b16.p3",
							rt, &p, 1);
			gen_mark_convergent(G, r);
			agg = insert_matrices(G, agg, r, s16, dt);
		}
		asm0(G, "bar.warp.sync -1;");
		return agg;
	}
	for (int i = 0; i < cols / 2; i += 2) {
		LLVMValueRef v = LLVMBuildLoad2(G->B, vt, pair_ptr(G, b, base, i), "");
		LLVMSetAlignment(v, (unsigned)(2 * dtype_bytes(dt)));
		if (dtype_bytes(dt) == 2) {
			LLVMValueRef x[2];
			gen_unpack_pair(G, LLVMBuildBitCast(G->B, v, i32t(G), ""), dt, x);
			for (int j = 0; j < 2; j++)
				agg = LLVMBuildInsertValue(G->B, agg, x[j], (unsigned)(i + j), "");
			continue;
		}
		for (int j = 0; j < 2; j++) {
			LLVMValueRef x = LLVMBuildExtractElement(G->B, v, c32(G, j), "");
			if (dt == DT_I32 || dt == DT_I64)
				x = LLVMBuildSIToFP(G->B, x, f32t(G), "");
			agg = LLVMBuildInsertValue(G->B, agg, x, (unsigned)(i + j), "");
		}
	}
	return agg;
}

static LLVMValueRef to_f32(Gen *G, LLVMValueRef x, DType dt)
{
	if (dt == DT_BF16 || dt == DT_F16)
		return LLVMBuildFPExt(G->B, x, f32t(G), "");
	if (dt == DT_I32 || dt == DT_I64)
		return LLVMBuildSIToFP(G->B, x, f32t(G), "");
	return x;
}

/* The column of column-vector element j of this thread. */
static LLVMValueRef col_of(Gen *G, int j)
{
	LLVMValueRef lane = LLVMBuildAnd(G->B, thread_x(G), c32(G, 3), "");
	return LLVMBuildAdd(G->B, LLVMBuildMul(G->B, lane, c32(G, 2), ""),
			    c32(G, 8 * (j >> 1) + (j & 1)), "");
}

static LLVMValueRef param_i64(Gen *G, const Dim *d);

/* The row of row-vector element j (0 or 1) of this thread: the row of fragment
 * element 2 j (elements 0-1 lie in row r, 2-3 in row r + 8). */
static LLVMValueRef row_of(Gen *G, int j)
{
	LLVMValueRef row, col;
	frag_coord(G, 2 * j, &row, &col);
	return row;
}

/* col_load: each thread loads the N/4 columns its fragment elements use;
 * from a global tensor, columns past its extent read 0. row_load: the two
 * rows of the thread's row-vector elements, the same way. */
static LLVMValueRef emit_col_load(Gen *G, const Op *op)
{
	const TirBuffer *b = buf(G, op->buf);
	DType dt = b->ty.dt;
	bool row = op->code == OP_ROW_LOAD;
	int cols = G->f->vcols[op->result], n = row ? 2 : gen_frag_elems(cols);
	LLVMValueRef agg = LLVMGetUndef(gen_frag_type(G, DT_F32, cols));
	LLVMTypeRef et = gen_type(G, dt);
	for (int j = 0; j < n; j++) {
		LLVMValueRef x;
		if (b->ty.space == SP_SHARED) {
			/* the thread's part (element 0's) once, element j's constant
			 * offset as a second GEP: an immediate (see pair_ptr) */
			LLVMValueRef c0 = row ? row_of(G, 0) : col_of(G, 0);
			int64_t k = row ? 8 * j : 8 * (j >> 1) + (j & 1);
			LLVMValueRef off = LLVMBuildAdd(G->B, LLVMBuildAdd(G->B, c32(G, b->offset),
				elem_bytes(G, G->vals[op->args[0]], dt), ""), elem_bytes(G, c0, dt), "");
			LLVMTypeRef i8 = LLVMInt8TypeInContext(G->C);
			LLVMValueRef p = LLVMBuildGEP2(G->B, i8, G->smem_base, &off, 1, "");
			LLVMValueRef kb = c64(G, (uint64_t)(k * dtype_bytes(dt)));
			p = LLVMBuildGEP2(G->B, i8, p, &kb, 1, "");
			x = LLVMBuildLoad2(G->B, et, p, "");
		} else {
			LLVMValueRef c = row ? row_of(G, j) : col_of(G, j);
			LLVMValueRef at = LLVMBuildAdd(G->B, G->vals[op->args[1]], c, "");
			LLVMValueRef ext = param_i64(G, &b->ty.dims[b->ty.rank - 1]);
			LLVMValueRef at64 = LLVMBuildSExt(G->B, at, i64t(G), "");
			LLVMValueRef in = LLVMBuildICmp(G->B, LLVMIntSLT, at64, ext, "");
			LLVMValueRef safe = LLVMBuildSelect(G->B, in, at64, c64(G, 0), "");
			LLVMValueRef idx = LLVMBuildAdd(G->B, G->vals[op->args[0]], safe, "");
			LLVMValueRef p = LLVMBuildGEP2(G->B, et, LLVMGetParam(G->fn, (unsigned)b->param),
						       &idx, 1, "");
			x = LLVMBuildSelect(G->B, in, LLVMBuildLoad2(G->B, et, p, ""),
					    LLVMConstNull(et), "");
		}
		agg = LLVMBuildInsertValue(G->B, agg, to_f32(G, x, dt), (unsigned)j, "");
	}
	return agg;
}

/* row_store / col_store: every element is held by several threads (a row's
 * value by the four lanes of its quad, a column's by every row), so one copy
 * stores: lanes 0 mod 4 for a row vector, lanes 0-3 of the warpgroup's first
 * warp for a column vector. A global view's elements past its extent are
 * dropped. */
static void emit_vec_store(Gen *G, const Op *op)
{
	const TirBuffer *b = buf(G, op->buf);
	DType dt = op->ty;
	bool row = op->code == OP_ROW_STORE;
	LLVMValueRef vec = G->vals[op->args[0]];
	int n = row ? 2 : gen_frag_elems(G->f->vcols[op->args[0]]);
	LLVMValueRef tid = thread_x(G);
	LLVMValueRef who = row ? LLVMBuildAnd(G->B, tid, c32(G, 3), "")
			       : LLVMBuildAnd(G->B, tid, c32(G, 127 & ~3), "");
	LLVMBasicBlockRef yes = LLVMAppendBasicBlockInContext(G->C, G->fn, "vec.st");
	LLVMBasicBlockRef next = LLVMAppendBasicBlockInContext(G->C, G->fn, "vec.next");
	LLVMBuildCondBr(G->B, LLVMBuildICmp(G->B, LLVMIntEQ, who, c32(G, 0), ""), yes, next);
	LLVMPositionBuilderAtEnd(G->B, yes);
	LLVMTypeRef et = gen_type(G, dt);
	for (int j = 0; j < n; j++) {
		LLVMValueRef x = LLVMBuildExtractValue(G->B, vec, (unsigned)j, "");
		if (dt != DT_F32)
			x = gen_fp_convert(G, x, et);
		LLVMValueRef c = row ? row_of(G, j) : col_of(G, j);
		if (b->ty.space == SP_SHARED) {
			LLVMValueRef off = LLVMBuildAdd(G->B, LLVMBuildAdd(G->B, c32(G, b->offset),
				elem_bytes(G, G->vals[op->args[1]], dt), ""), elem_bytes(G, c, dt), "");
			LLVMTypeRef i8 = LLVMInt8TypeInContext(G->C);
			LLVMValueRef p = LLVMBuildGEP2(G->B, i8, G->smem_base, &off, 1, "");
			LLVMBuildStore(G->B, x, p);
			continue;
		}
		LLVMValueRef at = LLVMBuildAdd(G->B, G->vals[op->args[2]], c, "");
		LLVMValueRef at64 = LLVMBuildSExt(G->B, at, i64t(G), "");
		LLVMValueRef ext = param_i64(G, &b->ty.dims[b->ty.rank - 1]);
		LLVMBasicBlockRef st = LLVMAppendBasicBlockInContext(G->C, G->fn, "vec.in");
		LLVMBasicBlockRef after = LLVMAppendBasicBlockInContext(G->C, G->fn, "vec.after");
		LLVMBuildCondBr(G->B, LLVMBuildICmp(G->B, LLVMIntSLT, at64, ext, ""), st, after);
		LLVMPositionBuilderAtEnd(G->B, st);
		LLVMValueRef idx = LLVMBuildAdd(G->B, G->vals[op->args[1]], at64, "");
		LLVMValueRef p = LLVMBuildGEP2(G->B, et, LLVMGetParam(G->fn, (unsigned)b->param),
					       &idx, 1, "");
		LLVMBuildStore(G->B, x, p);
		LLVMBuildBr(G->B, after);
		LLVMPositionBuilderAtEnd(G->B, after);
	}
	LLVMBuildBr(G->B, next);
	LLVMPositionBuilderAtEnd(G->B, next);
}

static LLVMValueRef param_i64(Gen *G, const Dim *d)
{
	if (d->param < 0)
		return c64(G, (uint64_t)d->value);
	LLVMValueRef v = LLVMGetParam(G->fn, (unsigned)d->param);
	return LLVMTypeOf(v) == i64t(G) ? v : LLVMBuildSExt(G->B, v, i64t(G), "");
}

/* Stores one element if (r, c) lies inside the rows x cols matrix whose rows are
 * `stride` elements apart. */
static void store_if_inside(Gen *G, LLVMValueRef base, LLVMValueRef r, LLVMValueRef c,
			    LLVMValueRef rows, LLVMValueRef cols, LLVMValueRef stride,
			    LLVMValueRef x, DType dt)
{
	LLVMValueRef in = LLVMBuildAnd(G->B, LLVMBuildICmp(G->B, LLVMIntSLT, r, rows, ""),
				       LLVMBuildICmp(G->B, LLVMIntSLT, c, cols, ""), "");
	LLVMBasicBlockRef yes = LLVMAppendBasicBlockInContext(G->C, G->fn, "frag.st");
	LLVMBasicBlockRef next = LLVMAppendBasicBlockInContext(G->C, G->fn, "frag.next");
	LLVMBuildCondBr(G->B, in, yes, next);
	LLVMPositionBuilderAtEnd(G->B, yes);
	LLVMValueRef idx = LLVMBuildAdd(G->B, base, LLVMBuildAdd(G->B,
		LLVMBuildMul(G->B, r, stride, ""), c, ""), "");
	LLVMValueRef p = LLVMBuildGEP2(G->B, gen_type(G, dt), G->ptr_base, &idx, 1, "");
	LLVMValueRef st = LLVMBuildStore(G->B, x, p);
	LLVMSetAlignment(st, (unsigned)dtype_bytes(dt));
	LLVMBuildBr(G->B, next);
	LLVMPositionBuilderAtEnd(G->B, next);
}

/* Whether a [64, cols_n] window of a global tensor (elements of dt from `ptr`, starting at
 * element base + c0 of row r0, rows `stride` elements apart) lies inside its first row_end
 * rows and `cols` columns with every element pair aligned for one vector access: the uniform
 * test that picks the vector path of frag_store_global and frag_load_global. */
static LLVMValueRef window_whole_aligned(Gen *G, LLVMValueRef ptr, LLVMValueRef base,
					 LLVMValueRef r0, LLVMValueRef c0, LLVMValueRef row_end,
					 LLVMValueRef cols, LLVMValueRef stride, int cols_n, DType dt)
{
	LLVMValueRef inside = LLVMBuildAnd(G->B,
		LLVMBuildICmp(G->B, LLVMIntSLE, LLVMBuildAdd(G->B, r0, c64(G, 64), ""), row_end, ""),
		LLVMBuildICmp(G->B, LLVMIntSLE, LLVMBuildAdd(G->B, c0, c64(G, (uint64_t)cols_n), ""),
			      cols, ""), "");
	uint64_t eb = (uint64_t)dtype_bytes(dt);
	LLVMValueRef first = LLVMBuildAdd(G->B, LLVMBuildPtrToInt(G->B, ptr, i64t(G), ""),
		LLVMBuildMul(G->B, LLVMBuildAdd(G->B, base, c0, ""), c64(G, eb), ""), "");
	LLVMValueRef bits = LLVMBuildOr(G->B, LLVMBuildAnd(G->B, first, c64(G, 2 * eb - 1), ""),
					LLVMBuildAnd(G->B, stride, c64(G, 1), ""), "");
	return LLVMBuildAnd(G->B, inside, LLVMBuildICmp(G->B, LLVMIntEQ, bits, c64(G, 0), ""), "");
}

/* The element index of this thread's fragment element i in a window at row r0, column c0
 * (rows `stride` elements apart, from element `base`). */
static LLVMValueRef window_index(Gen *G, int i, LLVMValueRef base, LLVMValueRef r0,
				 LLVMValueRef c0, LLVMValueRef stride)
{
	LLVMValueRef row, col;
	frag_coord(G, i, &row, &col);
	LLVMValueRef r = LLVMBuildAdd(G->B, r0, LLVMBuildZExt(G->B, row, i64t(G), ""), "");
	LLVMValueRef c = LLVMBuildAdd(G->B, c0, LLVMBuildZExt(G->B, col, i64t(G), ""), "");
	return LLVMBuildAdd(G->B, base, LLVMBuildAdd(G->B, LLVMBuildMul(G->B, r, stride, ""), c, ""),
			    "");
}

/* frag -> a [64, N] window of a global tensor (args: frag, base, row start, column start,
 * row stride, row extent[, limit]), clipped to its extents and to the window's first
 * `limit` rows: vector stores of element pairs when the window is whole and aligned (a
 * uniform test), else one guarded store per element. */
static void frag_store_global(Gen *G, const Op *op)
{
	const TirBuffer *b = buf(G, op->buf);
	DType dt = op->ty;
	int cols_n = G->f->vcols[op->args[0]];
	LLVMValueRef frag = G->vals[op->args[0]];
	LLVMValueRef rows = G->vals[op->args[5]];
	LLVMValueRef stride = G->vals[op->args[4]];
	LLVMValueRef cols = param_i64(G, &b->ty.dims[b->ty.rank - 1]);
	LLVMValueRef r0 = LLVMBuildSExt(G->B, G->vals[op->args[2]], i64t(G), "");
	LLVMValueRef c0 = LLVMBuildSExt(G->B, G->vals[op->args[3]], i64t(G), "");
	LLVMValueRef row_end = rows;
	if (op->nargs == 7) {
		LLVMValueRef lim = LLVMBuildAdd(G->B, r0, LLVMBuildSExt(G->B, G->vals[op->args[6]],
							 i64t(G), ""), "");
		row_end = LLVMBuildSelect(G->B, LLVMBuildICmp(G->B, LLVMIntSLT, lim, rows, ""),
					  lim, rows, "");
	}
	G->ptr_base = LLVMGetParam(G->fn, (unsigned)b->param);
	LLVMValueRef base = G->vals[op->args[1]];
	/* The common case, taken uniformly: the whole window inside and every element pair
	 * aligned for one vector store, so no branch per element. */
	uint64_t eb = (uint64_t)dtype_bytes(dt);
	LLVMValueRef fast = window_whole_aligned(G, G->ptr_base, base, r0, c0, row_end, cols,
						 stride, cols_n, dt);
	LLVMBasicBlockRef vec = LLVMAppendBasicBlockInContext(G->C, G->fn, "frag.st.vec");
	LLVMBasicBlockRef each = LLVMAppendBasicBlockInContext(G->C, G->fn, "frag.st.each");
	LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(G->C, G->fn, "frag.st.done");
	LLVMBuildCondBr(G->B, fast, vec, each);
	LLVMPositionBuilderAtEnd(G->B, vec);
	for (int i = 0; i < cols_n / 2; i += 2) {
		LLVMValueRef idx = window_index(G, i, base, r0, c0, stride);
		LLVMValueRef p = LLVMBuildGEP2(G->B, gen_type(G, dt), G->ptr_base, &idx, 1, "");
		LLVMValueRef st = LLVMBuildStore(G->B, pair(G, frag, i, dt), p);
		LLVMSetAlignment(st, (unsigned)(2 * eb));
	}
	LLVMBuildBr(G->B, done);
	LLVMPositionBuilderAtEnd(G->B, each);
	for (int i = 0; i < cols_n / 2; i++) {
		LLVMValueRef row, col;
		frag_coord(G, i, &row, &col);
		LLVMValueRef r = LLVMBuildAdd(G->B, r0, LLVMBuildZExt(G->B, row, i64t(G), ""), "");
		LLVMValueRef c = LLVMBuildAdd(G->B, c0, LLVMBuildZExt(G->B, col, i64t(G), ""), "");
		LLVMValueRef x = LLVMBuildExtractElement(G->B, pair(G, frag, i & ~1, dt),
							  c32(G, i & 1), "");
		store_if_inside(G, base, r, c, row_end, cols, stride, x, dt);
	}
	LLVMBuildBr(G->B, done);
	LLVMPositionBuilderAtEnd(G->B, done);
}

/* One aligned element pair at global address p into x[0], x[1]. 4- and 2-byte elements by
 * one vector load in inline PTX: as an LLVM load, InstCombine split the pair into scalar
 * loads, and SimplifyCFG then merged frag_load_global's two paths into one of clamped scalar
 * loads (kda_bwd_chunk: 582 scalar loads against 64 vector ones, a third of its issue slots
 * in address arithmetic). */
static void load_pair(Gen *G, LLVMValueRef p, DType dt, LLVMValueRef x[2])
{
	LLVMTypeRef et = gen_type(G, dt);
	uint64_t eb = (uint64_t)dtype_bytes(dt);
	LLVMValueRef addr = LLVMBuildPtrToInt(G->B, p, i64t(G), "");
	if (eb == 4) {
		LLVMTypeRef two[2] = {i32t(G), i32t(G)};
		LLVMValueRef v = gen_asm(G, "ld.global.v2.b32 {$0, $1}, [$2];", "=r,=r,l,~{memory}",
					 LLVMStructTypeInContext(G->C, two, 2, 0), &addr, 1);
		for (int j = 0; j < 2; j++)
			x[j] = LLVMBuildBitCast(G->B, LLVMBuildExtractValue(G->B, v, (unsigned)j, ""),
						et, "");
		return;
	}
	if (eb == 2) {
		LLVMValueRef v = gen_asm(G, "ld.global.b32 $0, [$1];", "=r,l,~{memory}", i32t(G),
					 &addr, 1);
		LLVMTypeRef i16 = LLVMInt16TypeInContext(G->C);
		x[0] = LLVMBuildBitCast(G->B, LLVMBuildTrunc(G->B, v, i16, ""), et, "");
		x[1] = LLVMBuildBitCast(G->B, LLVMBuildTrunc(G->B,
			LLVMBuildLShr(G->B, v, LLVMConstInt(i32t(G), 16, 0), ""), i16, ""), et, "");
		return;
	}
	LLVMValueRef v = LLVMBuildLoad2(G->B, LLVMVectorType(et, 2), p, "");
	LLVMSetAlignment(v, (unsigned)(2 * eb));
	for (int j = 0; j < 2; j++)
		x[j] = LLVMBuildExtractElement(G->B, v, c32(G, j), "");
}

/* frag_load_global's other path (a window partly outside its tensor, or pairs not aligned):
 * one clamped load per element, 0 past the extents, returned as the f32 fragment, by a
 * function of its own that is never inlined. Inline, its loads' addresses and results took registers from the
 * whole kernel (ptxas allocates over both paths: kda_bwd_chunk spilled 2.8 KB with it, 0.1 KB
 * without); called, its registers are the callee's and its spills only happen when it runs. */
static LLVMValueRef frag_load_each_fn(Gen *G, DType dt, int cols_n, LLVMTypeRef ptr_ty)
{
	char name[64];
	snprintf(name, sizeof name, "tile_frag_load_each_%s_%d", dtype_name(dt), cols_n);
	LLVMValueRef fn = LLVMGetNamedFunction(G->M, name);
	if (fn)
		return fn;
	LLVMTypeRef i64 = i64t(G);
	LLVMTypeRef params[7] = {ptr_ty, i64, i64, i64, i64, i64, i64};
	LLVMTypeRef ft = gen_frag_type(G, DT_F32, cols_n);
	fn = LLVMAddFunction(G->M, name, LLVMFunctionType(ft, params, 7, 0));
	LLVMSetLinkage(fn, LLVMInternalLinkage);
	unsigned noinline = LLVMGetEnumAttributeKindForName("noinline", 8);
	LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
				LLVMCreateEnumAttribute(G->C, noinline, 0));
	LLVMBasicBlockRef back = LLVMGetInsertBlock(G->B);
	LLVMValueRef caller = G->fn;
	G->fn = fn;
	LLVMPositionBuilderAtEnd(G->B, LLVMAppendBasicBlockInContext(G->C, fn, "entry"));
	LLVMValueRef ptr = LLVMGetParam(fn, 0), base = LLVMGetParam(fn, 1);
	LLVMValueRef r0 = LLVMGetParam(fn, 2), c0 = LLVMGetParam(fn, 3);
	LLVMValueRef stride = LLVMGetParam(fn, 4), rows = LLVMGetParam(fn, 5);
	LLVMValueRef cols = LLVMGetParam(fn, 6);
	LLVMTypeRef et = gen_type(G, dt);
	LLVMValueRef agg = LLVMGetUndef(ft);
	for (int i = 0; i < cols_n / 2; i++) {
		LLVMValueRef row, col;
		frag_coord(G, i, &row, &col);
		LLVMValueRef r = LLVMBuildAdd(G->B, r0, LLVMBuildZExt(G->B, row, i64, ""), "");
		LLVMValueRef c = LLVMBuildAdd(G->B, c0, LLVMBuildZExt(G->B, col, i64, ""), "");
		/* a clamped address and a select: no branch per element */
		LLVMValueRef in = LLVMBuildAnd(G->B, LLVMBuildICmp(G->B, LLVMIntSLT, r, rows, ""),
					       LLVMBuildICmp(G->B, LLVMIntSLT, c, cols, ""), "");
		LLVMValueRef idx = LLVMBuildAdd(G->B, base, LLVMBuildAdd(G->B,
			LLVMBuildMul(G->B, r, stride, ""), c, ""), "");
		idx = LLVMBuildSelect(G->B, in, idx, c64(G, 0), "");
		LLVMValueRef p = LLVMBuildGEP2(G->B, et, ptr, &idx, 1, "");
		LLVMValueRef x = LLVMBuildLoad2(G->B, et, p, "");
		LLVMSetAlignment(x, (unsigned)dtype_bytes(dt));
		x = LLVMBuildSelect(G->B, in, x, LLVMConstNull(et), "");
		agg = LLVMBuildInsertValue(G->B, agg, to_f32(G, x, dt), (unsigned)i, "");
	}
	LLVMBuildRet(G->B, agg);
	G->fn = caller;
	LLVMPositionBuilderAtEnd(G->B, back);
	return fn;
}

/* A [64, N] window of a global tensor -> f32 fragment (args: base, row start, column start,
 * row stride, row extent), the inverse of frag_store_global: element pairs as vector loads
 * when the window is whole and aligned (a uniform test), else one clamped load per element
 * (frag_load_each_fn, out of line), reading 0 past the tensor's extents. */
static LLVMValueRef frag_load_global(Gen *G, const Op *op)
{
	const TirBuffer *b = buf(G, op->buf);
	DType dt = b->ty.dt;
	LLVMTypeRef et = gen_type(G, dt);
	int cols_n = G->f->vcols[op->result];
	LLVMValueRef base = G->vals[op->args[0]];
	LLVMValueRef r0 = LLVMBuildSExt(G->B, G->vals[op->args[1]], i64t(G), "");
	LLVMValueRef c0 = LLVMBuildSExt(G->B, G->vals[op->args[2]], i64t(G), "");
	LLVMValueRef stride = G->vals[op->args[3]], rows = G->vals[op->args[4]];
	LLVMValueRef cols = param_i64(G, &b->ty.dims[b->ty.rank - 1]);
	LLVMValueRef ptr = LLVMGetParam(G->fn, (unsigned)b->param);
	LLVMValueRef fast = window_whole_aligned(G, ptr, base, r0, c0, rows, cols, stride, cols_n,
						 dt);
	LLVMBasicBlockRef vec = LLVMAppendBasicBlockInContext(G->C, G->fn, "frag.ld.vec");
	LLVMBasicBlockRef each = LLVMAppendBasicBlockInContext(G->C, G->fn, "frag.ld.each");
	LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(G->C, G->fn, "frag.ld.done");
	LLVMTypeRef ft = gen_frag_type(G, DT_F32, cols_n);
	LLVMBuildCondBr(G->B, fast, vec, each);
	LLVMValueRef aggs[2] = {LLVMGetUndef(ft), LLVMGetUndef(ft)};
	LLVMBasicBlockRef from[2];
	/* the element pairs (i, i + 1), adjacent columns, one vector load each */
	LLVMPositionBuilderAtEnd(G->B, vec);
	for (int i = 0; i < cols_n / 2; i += 2) {
		LLVMValueRef idx = window_index(G, i, base, r0, c0, stride);
		LLVMValueRef x[2];
		load_pair(G, LLVMBuildGEP2(G->B, et, ptr, &idx, 1, ""), dt, x);
		for (int j = 0; j < 2; j++)
			aggs[0] = LLVMBuildInsertValue(G->B, aggs[0], to_f32(G, x[j], dt),
						       (unsigned)(i + j), "");
	}
	from[0] = LLVMGetInsertBlock(G->B);
	LLVMBuildBr(G->B, done);
	/* else the clamped loads, out of line */
	LLVMPositionBuilderAtEnd(G->B, each);
	LLVMValueRef fn = frag_load_each_fn(G, dt, cols_n, LLVMTypeOf(ptr));
	LLVMValueRef args[7] = {ptr, base, r0, c0, stride, rows, cols};
	aggs[1] = LLVMBuildCall2(G->B, LLVMGlobalGetValueType(fn), fn, args, 7, "");
	from[1] = LLVMGetInsertBlock(G->B);
	LLVMBuildBr(G->B, done);
	LLVMPositionBuilderAtEnd(G->B, done);
	LLVMValueRef phi = LLVMBuildPhi(G->B, ft, "");
	LLVMAddIncoming(phi, aggs, from, 2);
	return phi;
}

/* A shared element of the cluster's CTA `rank` (mapa, then ld.shared::cluster): `p` its
 * address in this CTA. The asm is volatile without a memory clobber, so it stays after the
 * cluster_sync before it and other loads may still move around it. */
static LLVMValueRef peer_load(Gen *G, const Op *op, LLVMValueRef p)
{
	static const char *const text[4] = {
		"ld.shared::cluster.u8 $0, [$1];", "ld.shared::cluster.b16 $0, [$1];",
		"ld.shared::cluster.b32 $0, [$1];", "ld.shared::cluster.b64 $0, [$1];"};
	static const char *const cons[4] = {"=r,l", "=h,l", "=r,l", "=l,l"};
	int bytes = dtype_bytes(op->ty), k = bytes == 1 ? 0 : bytes == 2 ? 1 : bytes == 4 ? 2 : 3;
	LLVMValueRef args[2] = {p, G->vals[op->args[1]]};
	LLVMValueRef remote = gen_call_named(G, "llvm.nvvm.mapa.shared.cluster", LLVMTypeOf(p),
					     args, 2);
	LLVMValueRef addr = LLVMBuildPtrToInt(G->B, remote, i64t(G), "");
	LLVMTypeRef raw = LLVMIntTypeInContext(G->C, k == 0 ? 32 : (unsigned)(8 * bytes));
	LLVMValueRef v = gen_asm(G, text[k], cons[k], raw, &addr, 1);
	LLVMTypeRef want = gen_type(G, op->ty);
	if (k == 0)
		return LLVMBuildTrunc(G->B, v, want, "");
	return LLVMTypeOf(v) == want ? v : LLVMBuildBitCast(G->B, v, want, "");
}

/* A load (acquire) or store (release) of a global flag, or a load of another CTA's shared
 * element: `p` its address. */
LLVMValueRef gen_ordered_access(Gen *G, const Op *op, LLVMValueRef p)
{
	if (op->attr[0] == MO_PEER)
		return peer_load(G, op, p);
	LLVMValueRef addr = LLVMBuildPtrToInt(G->B, p, i64t(G), "");
	if (op->code == OP_LD && op->attr[0] == MO_ADD) {
		LLVMValueRef args[2] = {addr, G->vals[op->args[1]]};
		return gen_asm(G, PTX_ATOM_ADD, "=r,l,r,~{memory}", i32t(G), args, 2);
	}
	if (op->code == OP_LD)
		return gen_asm(G, PTX_LD_ACQUIRE, "=r,l,~{memory}", i32t(G), &addr, 1);
	LLVMValueRef args[2] = {addr, G->vals[op->args[1]]};
	gen_asm(G, PTX_ST_RELEASE, "l,r,~{memory}", LLVMVoidTypeInContext(G->C), args, 2);
	return NULL;
}

LLVMValueRef gen_tile_op(Gen *G, const Op *op)
{
	switch (op->code) {
	case OP_MBAR_INIT: emit_mbar_init(G, op); return NULL;
	case OP_MBAR_ARRIVE: case OP_MBAR_ARRIVE_PEER: case OP_MBAR_EXPECT: case OP_MBAR_WAIT:
		emit_mbar(G, op);
		return NULL;
	case OP_TMA_LOAD: case OP_TMA_STORE: emit_tma(G, op); return NULL;
	case OP_TMA_PREFETCH: emit_tma_prefetch(G, op); return NULL;
	case OP_TMA_WAIT: asm0(G, PTX_TMA_WAIT); return NULL;
	case OP_TMA_WAIT_READ: asm0(G, PTX_TMA_WAIT_READ); return NULL;
	case OP_FENCE_ASYNC: asm0(G, PTX_FENCE_ASYNC); return NULL;
	case OP_WARP_SYNC: asm0(G, "bar.warp.sync -1;"); return NULL;
	case OP_CLUSTER_SYNC:
		asm0(G, op->imm == CLUSTER_ARRIVE ? PTX_CLUSTER_ARRIVE
			: op->imm == CLUSTER_WAIT ? PTX_CLUSTER_WAIT : PTX_CLUSTER_SYNC);
		return NULL;
	case OP_FENCE_PROXY_GLOBAL: asm0(G, PTX_FENCE_PROXY_GLOBAL); return NULL;
	case OP_LAUNCH_DEPENDENTS: asm0(G, PTX_LAUNCH_DEPENDENTS); return NULL;
	case OP_WAIT_PREREQUISITES: asm0(G, PTX_WAIT_PREREQUISITES); return NULL;
	case OP_NANOSLEEP: {
		LLVMValueRef ns = G->vals[op->args[0]];
		gen_asm(G, PTX_NANOSLEEP, "r,~{memory}", LLVMVoidTypeInContext(G->C), &ns, 1);
		return NULL;
	}
	case OP_ELECT: return emit_elect(G);
	case OP_NAMED_SYNC: emit_named_sync(G, op); return NULL;
	case OP_ROLE: emit_role(G, op); return NULL;
	case OP_FRAG_FILL: return emit_frag_fill(G, op);
	case OP_FRAG_SLICE: return emit_frag_slice(G, op);
	case OP_FRAG_JOIN: return emit_frag_join(G, op);
	case OP_ROW_BCAST: return emit_row_bcast(G, op);
	case OP_COL_BCAST: return emit_col_bcast(G, op);
	case OP_COL_LOAD: case OP_ROW_LOAD: return emit_col_load(G, op);
	case OP_COL_STORE: case OP_ROW_STORE: emit_vec_store(G, op); return NULL;
	case OP_ROW_REDUCE: return emit_row_reduce(G, op);
	case OP_FRAG_COORD: return emit_frag_coord(G, op);
	case OP_MMA: return emit_mma(G, op);
	case OP_MMA_WAIT: return emit_mma_wait(G, op);
	case OP_FRAG_LOAD:
		return op->nargs == 1 ? frag_load_shared(G, op) : frag_load_global(G, op);
	default:
		if (op->nargs == 2)
			frag_store_shared(G, op);
		else
			frag_store_global(G, op);
		return NULL;
	}
}
