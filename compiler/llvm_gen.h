/*
 * llvm_gen.h: the code generator's state, shared by llvm.c (IR building)
 * and ptx.c (target machine, kernel annotations, PTX emission).
 */
#ifndef LLVM_GEN_H
#define LLVM_GEN_H

#include <llvm-c/Core.h>
#include <llvm-c/DebugInfo.h>

#include "tir.h"

typedef struct Gen {
	Ctx *cx;
	LLVMContextRef C;
	LLVMModuleRef M;
	LLVMBuilderRef B;
	TirModule *tm;
	TirFunc *f;               /* function being emitted */
	LLVMValueRef fn;
	LLVMValueRef *vals;       /* TIR value id -> LLVM value */
	LLVMValueRef *funcs;      /* TIR function index -> LLVM function */
	LLVMValueRef smem;        /* the dynamic shared-memory arena */
	LLVMValueRef smem_base;   /* the arena rounded up to the kernel's alignment */
	LLVMValueRef *locals;     /* per buffer: a local array's alloca, else NULL */
	LLVMValueRef ptr_base;    /* scratch: a global tensor being stored to */
	LLVMValueRef ret_slot;
	LLVMBasicBlockRef exit_bb, break_bb, cont_bb, cond_true, cond_false;
	/* llvm_debug.c: line tables (--lineinfo) */
	bool lineinfo;
	LLVMDIBuilderRef dib;           /* NULL without line tables */
	LLVMMetadataRef dbg_sp;         /* the function's subprogram */
	LLVMMetadataRef *dbg_files;     /* per source file: its DIFile, made when first used */
	LLVMMetadataRef *dbg_scopes;    /* per source file: its scope in the current function */
	int dbg_file;                   /* the last location given */
	unsigned dbg_line;
} Gen;

LLVMTypeRef gen_type(Gen *G, DType dt);
/* An alloca in the current function's entry block (a fixed slot, not a dynamic one). */
LLVMValueRef gen_entry_alloca(Gen *G, LLVMTypeRef ty);
LLVMValueRef gen_call_named(Gen *G, const char *name, LLVMTypeRef ret,
			    LLVMValueRef *args, unsigned n);
void gen_mark_convergent(Gen *G, LLVMValueRef call);
LLVMValueRef gen_round_pair(Gen *G, LLVMValueRef lo, LLVMValueRef hi, DType dt);
LLVMValueRef gen_fp_convert(Gen *G, LLVMValueRef x, LLVMTypeRef to);
void gen_unpack_pair(Gen *G, LLVMValueRef r, DType dt, LLVMValueRef out[2]);
bool gen_module(Gen *G, TirModule *m);
void gen_block(Gen *G, const Block *b);
/* llvm_tile.c: the Hopper tile ops */
LLVMValueRef gen_tile_op(Gen *G, const Op *op);
LLVMValueRef gen_ordered_access(Gen *G, const Op *op, LLVMValueRef p);
LLVMTypeRef gen_frag_type(Gen *G, DType dt, int cols);
int gen_frag_elems(int cols);
/* llvm_debug.c: line tables, each a no-op without --lineinfo */
void gen_debug_begin(Gen *G);
void gen_debug_function(Gen *G, const TirFunc *f, LLVMValueRef fn);
void gen_debug_at(Gen *G, Loc loc);
void gen_debug_end_function(Gen *G);
void gen_debug_finish(Gen *G);
/* ptx.c: !nvvm.annotations for a kernel (kernel flag, launch bounds) */
void gen_annotate_kernel(Gen *G, LLVMValueRef fn, const TirFunc *f);

#endif
