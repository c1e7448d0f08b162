/*
 * tir.h: the Tile IR.
 *
 * A module holds functions: kernels (emitted as PTX entries) and helper
 * functions (always inlined). A function body is a tree of blocks: each block
 * is a list of ops, and region ops (if, for, while) own nested blocks, so the
 * control flow stays structured until LLVM. Values are numbered per function
 * (%0, %1, ...); an op defines at most one. A value may be used in the block
 * that defines it (after the definition) and in blocks nested there.
 *
 * Memory is named by buffers: global tensors (kernel parameters) and shared
 * arrays; loads and stores name a buffer and either one index per dimension
 * (before the lower-index pass) or a linear element offset (after it).
 *
 * Glossary: smem = shared memory, gmem = global memory, sreg = special
 * register (thread and block indices), iv = induction value.
 */
#ifndef TIR_H
#define TIR_H

#include "tilec.h"

typedef enum OpCode {
#define OP(id, name, nargs, result, flags) id,
#include "ops.def"
#undef OP
	OP_COUNT
} OpCode;

enum OpFlags {
	F_PURE = 1, F_REGION = 2, F_TERM = 4, F_CONV = 8, F_HIGH = 16, F_LOW = 32,
};

typedef enum Sreg {
	SREG_TID_X, SREG_TID_Y, SREG_TID_Z,
	SREG_CTAID_X, SREG_CTAID_Y, SREG_CTAID_Z,
	SREG_NTID_X, SREG_NTID_Y, SREG_NTID_Z,
	SREG_NCTAID_X, SREG_NCTAID_Y, SREG_NCTAID_Z,
	SREG_LANEID, SREG_WARPID,
	SREG_CLUSTER_CTARANK,
	SREG_COUNT
} Sreg;

typedef enum ShflMode { SHFL_BFLY, SHFL_DOWN, SHFL_UP, SHFL_IDX } ShflMode;

/* The memory order of a load or store (attr0 of OP_LOAD/OP_STORE/OP_LD/OP_ST): plain, a
 * flag access between grids at GPU scope (ld.acquire.gpu, st.release.gpu), a load of a
 * shared element in another CTA of the cluster (MO_PEER: the last operand is its rank), or an
 * atomic add at GPU scope, acquire and release, whose result is the old value (MO_ADD, a
 * load: the last operand is the addend). */
typedef enum MemOrder { MO_PLAIN, MO_ACQUIRE, MO_RELEASE, MO_PEER, MO_ADD } MemOrder;

/* The loads that carry one operand after the element's indices (or offset). */
static inline int mo_extra_operand(int attr0)
{
	return attr0 == MO_PEER || attr0 == MO_ADD;
}

/* The phases of a cluster barrier (imm of OP_CLUSTER_SYNC): both, or the arrival alone and
 * the wait alone, so that independent work can run between them. */
typedef enum ClusterPhase { CLUSTER_SYNC, CLUSTER_ARRIVE, CLUSTER_WAIT } ClusterPhase;

typedef struct Op Op;
typedef struct Block {
	Op **ops;
	int nops, cap;
} Block;

struct Op {
	OpCode code;
	DType ty;        /* result type (or the stored/compared type) */
	int result;      /* value id, or -1 */
	int *args;
	int nargs;
	int64_t imm;
	double fimm;
	int buf;         /* buffer index for memory ops, -1 otherwise */
	int64_t attr[6]; /* per-op extras, named in ops.def */
	Block *blocks[2];
	Loc loc;
};

typedef struct TirBuffer {
	const char *name;
	Type ty;          /* SP_GLOBAL or SP_SHARED, with extents */
	int param;        /* SP_GLOBAL: the kernel parameter index */
	int64_t offset;   /* SP_SHARED: byte offset in the arena (plan-smem) */
	Loc loc;
	int overlay;      /* SP_SHARED: the buffer whose bytes it shares, or -1 */
} TirBuffer;

typedef struct TirParam {
	const char *name;
	Type ty;
	int buf;          /* tensors: their buffer; scalars: -1 */
} TirParam;

/* A grid dimension: an integer expression over scalar parameters. */
typedef enum GridKind { GRID_CONST, GRID_PARAM, GRID_OP } GridKind;
typedef struct GridExpr GridExpr;
struct GridExpr {
	GridKind kind;
	int64_t value;     /* GRID_CONST */
	int param;         /* GRID_PARAM */
	const char *op;    /* GRID_OP: + - * / % cdiv min max */
	GridExpr *a, *b;
};

typedef struct TirFunc {
	const char *name;
	bool is_kernel;
	Loc loc;
	TirParam *params;
	int nparams;
	DType ret;             /* helpers; DT_VOID for kernels */
	Block *body;
	DType *vtypes;         /* type of each value */
	int *vcols;            /* fragments: N of a [64, N] tile; -1: a [64] row vector; 0: scalars */
	int nvalues, cap_values;
	TirBuffer *bufs;
	int nbufs, cap_bufs;
	/* kernels only */
	int threads[3];
	GridExpr *grid[3];
	int64_t smem_bytes;    /* dynamic shared memory, set by plan-smem */
	bool smem_planned;
	bool indices_lowered;  /* set by lower-index */
	int smem_align;        /* largest shared alignment needed (plan-smem) */
	bool has_regs;         /* a role sets its register budget (setmaxnreg) */
	int ctas_per_sm;       /* ctas_per_sm(N), 0 when not given */
	int cluster;           /* cluster(N): CTAs per cluster along x, 0 when not given */
	GridExpr *cluster_rule; /* cluster(expr) of the scalar parameters; NULL when constant */
} TirFunc;

struct TirModule {
	TirFunc **funcs;
	int nfuncs, cap;
};

/* tir.c: construction */
TirModule *tir_module_new(Ctx *cx);
TirFunc *tir_func_new(Ctx *cx, TirModule *m, const char *name, bool is_kernel);
int tir_new_value(Ctx *cx, TirFunc *f, DType ty);
int tir_new_frag(Ctx *cx, TirFunc *f, int cols);
int tir_add_buffer(Ctx *cx, TirFunc *f, const char *name, Type ty, int param, Loc loc);
Block *tir_block_new(Ctx *cx);
Op *tir_op_new(Ctx *cx, OpCode code, DType ty, Loc loc);
void tir_op_set_args(Ctx *cx, Op *op, const int *args, int n);
void tir_block_append(Ctx *cx, Block *b, Op *op);
const char *tir_op_name(OpCode code);
int tir_op_nargs(OpCode code);
int tir_op_result(OpCode code);
unsigned tir_op_flags(OpCode code);
const char *tir_sreg_name(Sreg s);
const char *tir_shfl_name(ShflMode m);

/* lower_tile.c: the Hopper tile statements and calls (called by lower.c) */
typedef struct Lower Lower;
void lower_tile_stmt(Lower *L, Node *st);
int lower_tile_call(Lower *L, Node *e);

/* tir_print.c */
void tir_print_module(Ctx *cx, FILE *out, TirModule *m);
void tir_print_grid(FILE *out, const TirFunc *f, const GridExpr *g);

/* tir_verify.c: structural checks; a failure is an internal error */
bool tir_verify(Ctx *cx, TirModule *m);

/* passes, one file each (pipeline.c runs them in order) */
bool pass_lower_index(Ctx *cx, TirModule *m);
bool pass_plan_smem(Ctx *cx, TirModule *m);
bool pass_fold_constants(Ctx *cx, TirModule *m);
bool pass_merge_fences(Ctx *cx, TirModule *m);

#endif
