/*
 * ptx.c: the NVPTX target. Creates the sm_90a target machine, marks kernels
 * and their launch bounds, optimizes (the new pass manager's default<O3>)
 * and writes PTX into memory.
 *
 * Target facts (PTX ISA; LLVM 19 NVPTX): CPU "sm_90a" enables the Hopper
 * architecture-specific instructions (wgmma, setmaxnreg); "+ptx83" emits
 * PTX ISA 8.3, which CUDA 12.3+ ptxas accepts. LLVM 19 reads launch bounds
 * only from !nvvm.annotations (maxntidx/y/z -> .maxntid).
 */
#include <string.h>

#include <llvm-c/Core.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include "llvm_gen.h"

#define NVPTX_TRIPLE "nvptx64-nvidia-cuda"
#define NVPTX_CPU "sm_90a"
#define NVPTX_FEATURES "+ptx83"

static void annotate(Gen *G, LLVMValueRef fn, const char *key, int value)
{
	LLVMMetadataRef ops[3] = {
		LLVMValueAsMetadata(fn),
		LLVMMDStringInContext2(G->C, key, strlen(key)),
		LLVMValueAsMetadata(LLVMConstInt(LLVMInt32TypeInContext(G->C),
						 (unsigned)value, 0)),
	};
	LLVMAddNamedMetadataOperand(G->M, "nvvm.annotations",
				    LLVMMetadataAsValue(G->C, LLVMMDNodeInContext2(G->C, ops, 3)));
}

void gen_annotate_kernel(Gen *G, LLVMValueRef fn, const TirFunc *f)
{
	annotate(G, fn, "kernel", 1);
	annotate(G, fn, "maxntidx", f->threads[0]);
	annotate(G, fn, "maxntidy", f->threads[1]);
	annotate(G, fn, "maxntidz", f->threads[2]);
	/* setmaxnreg needs a register count fixed at entry: .maxntid with
	 * .minnctapersm 1 (else ptxas ignores it, warning C7508); ctas_per_sm(N)
	 * (never with register budgets: sema) is .minnctapersm N */
	if (f->has_regs)
		annotate(G, fn, "minctasm", 1);
	else if (f->ctas_per_sm > 0)
		annotate(G, fn, "minctasm", f->ctas_per_sm);
}

static LLVMTargetMachineRef create_target_machine(Ctx *cx)
{
	LLVMInitializeNVPTXTargetInfo();
	LLVMInitializeNVPTXTarget();
	LLVMInitializeNVPTXTargetMC();
	LLVMInitializeNVPTXAsmPrinter();
	LLVMTargetRef target;
	char *err = NULL;
	if (LLVMGetTargetFromTriple(NVPTX_TRIPLE, &target, &err)) {
		diag_internal(cx, "ptx", "no NVPTX target in this LLVM: %s", err ? err : "");
		LLVMDisposeMessage(err);
		return NULL;
	}
	return LLVMCreateTargetMachine(target, NVPTX_TRIPLE, NVPTX_CPU, NVPTX_FEATURES,
				       LLVMCodeGenLevelAggressive, LLVMRelocDefault,
				       LLVMCodeModelDefault);
}

static bool optimize(Ctx *cx, LLVMModuleRef M, LLVMTargetMachineRef tm)
{
	LLVMPassBuilderOptionsRef opts = LLVMCreatePassBuilderOptions();
	LLVMErrorRef err = LLVMRunPasses(M, "default<O3>", tm, opts);
	LLVMDisposePassBuilderOptions(opts);
	if (err) {
		char *msg = LLVMGetErrorMessage(err);
		diag_internal(cx, "ptx", "LLVM optimization failed: %s", msg);
		LLVMDisposeErrorMessage(msg);
		return false;
	}
	return true;
}

static char *emit_ptx(Ctx *cx, LLVMModuleRef M, LLVMTargetMachineRef tm)
{
	LLVMMemoryBufferRef buf = NULL;
	char *err = NULL;
	if (LLVMTargetMachineEmitToMemoryBuffer(tm, M, LLVMAssemblyFile, &err, &buf)) {
		diag_internal(cx, "ptx", "PTX emission failed: %s", err ? err : "");
		LLVMDisposeMessage(err);
		return NULL;
	}
	char *ptx = ctx_strndup(cx, LLVMGetBufferStart(buf), LLVMGetBufferSize(buf));
	LLVMDisposeMemoryBuffer(buf);
	return ptx;
}

static bool lower_to_text(Gen *G, LLVMTargetMachineRef tm, bool want_ll,
			  bool want_ptx, CodegenOut *out)
{
	LLVMSetTarget(G->M, NVPTX_TRIPLE);
	LLVMTargetDataRef dl = LLVMCreateTargetDataLayout(tm);
	LLVMSetModuleDataLayout(G->M, dl);
	LLVMDisposeTargetData(dl);
	if (!gen_module(G, G->tm) || !optimize(G->cx, G->M, tm))
		return false;
	if (want_ll) {
		char *s = LLVMPrintModuleToString(G->M);
		out->ll = ctx_strdup(G->cx, s);
		LLVMDisposeMessage(s);
	}
	if (want_ptx && !(out->ptx = emit_ptx(G->cx, G->M, tm)))
		return false;
	return true;
}

bool codegen_module(Ctx *cx, TirModule *m, bool want_ll, bool want_ptx, bool lineinfo,
		    CodegenOut *out)
{
	memset(out, 0, sizeof *out);
	LLVMTargetMachineRef tm = create_target_machine(cx);
	if (!tm)
		return false;
	Gen G = {.cx = cx, .tm = m, .lineinfo = lineinfo};
	G.C = LLVMContextCreate();
	G.M = LLVMModuleCreateWithNameInContext("tile", G.C);
	bool ok = lower_to_text(&G, tm, want_ll, want_ptx, out);
	LLVMDisposeModule(G.M);
	LLVMContextDispose(G.C);
	LLVMDisposeTargetMachine(tm);
	return ok;
}
