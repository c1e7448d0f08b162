/*
 * tilec.h: the compiler's shared declarations, one section per file.
 *
 * tilec turns .tile source into PTX and cubin for Hopper (sm_90a):
 *
 *   source --lexer.l/parser.y--> AST --AST passes--> AST --sema.c--> typed AST
 *          --lower.c--> TIR --TIR passes--> lowered TIR --llvm.c--> LLVM IR
 *          --ptx.c--> PTX --cubin.c (ptxas)--> cubin;
 *   meta.c: launch metadata; embed.c: C source. pipeline.c's pass table lists
 *   the AST and TIR passes in the order they run.
 *
 * Every phase runs inside one Ctx: it owns all memory (an arena freed at once
 * by ctx_destroy) and collects diagnostics. Phases report failure by returning
 * false; only driver.c decides the exit status. Nothing here exits or aborts.
 *
 * The IR proper lives in tir.h.
 */
#ifndef TILEC_H
#define TILEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../runtime/include/tile_limits.h"

#define TILEC_VERSION "0.1.0"
#define TILEC_MAX_RANK 5
/* Nesting of blocks and expressions (binary chains included) at most: every
 * phase walks trees recursively, so deeper input is refused, not overflowed. */
#define TILEC_MAX_NESTING 300
/* Helper calls that one call may expand to once helpers are inlined. */
#define TILEC_MAX_INLINED_CALLS 65536
/* Nested calls of helpers with tile parameters, which sema inlines one in another. */
#define TILEC_MAX_INLINE_DEPTH 64
/* Type parameters of one helper (`fn f<T>(x: shared T[64, 64], ...)`). */
#define TILEC_MAX_TYPE_PARAMS 4

typedef struct Ctx Ctx;
typedef struct Node Node;
typedef struct Symbol Symbol;
typedef struct TirModule TirModule;

/* ---- ctx.c: the compilation context, arena, files ----------------------- */

typedef struct Loc {
	int file;  /* index into Ctx.files; -1 for no location */
	int line;  /* 1-based */
	int col;   /* 1-based, in bytes */
} Loc;

typedef struct SourceFile {
	char *path;      /* as given or resolved */
	char *text;      /* NUL-terminated contents */
	size_t len;
	bool is_main;    /* kernels of the main file are emitted */
	bool loading;    /* true while its imports are being resolved */
	char *canon;     /* import.c: its canonical path (NULL when it has none) */
	bool canon_done; /* canon was resolved */
	Node *items;     /* top-level items after parsing */
} SourceFile;

typedef struct ArenaBlock ArenaBlock;

typedef enum Severity { SEV_ERROR, SEV_WARNING, SEV_NOTE } Severity;

#define DIAG(id, fmt) id,
typedef enum DiagId {
#include "diag.def"
	DIAG_COUNT
} DiagId;
#undef DIAG

typedef struct Diag {
	Severity sev;
	DiagId id;
	Loc loc;
	char *msg;
} Diag;

#define TILEC_MAX_DIAGS 20

/* -D NAME=VALUE: specialises a program at compile time. A dtype value
 * (bf16, f16, f32, i32, ...) sets the type alias NAME (`type NAME = ...;`
 * in the source gives the default); an integer sets the constant NAME. */
typedef struct Define {
	const char *name;
	bool is_type;
	int dtype;        /* DType when is_type */
	int64_t value;    /* otherwise */
	bool used;        /* a declaration took it */
	const char *text; /* NAME=VALUE as given, for messages */
} Define;

#define TILEC_MAX_DEFINES 32

struct Ctx {
	ArenaBlock *arena;
	Define defines[TILEC_MAX_DEFINES];
	int ndefines;
	SourceFile **files;
	int nfiles, cap_files;
	const char **include_dirs;
	int ninclude_dirs;
	Diag diags[TILEC_MAX_DIAGS];
	int ndiags;
	int nerrors;          /* counts all errors, also those beyond the cap */
	bool internal_error;  /* an invariant broke: a compiler bug, not the user's */
	char internal_msg[512];
	bool diag_fired[DIAG_COUNT]; /* which diagnostics fired (tests read it) */
	/* A tool tilec runs (ptxas) is missing or failed: a set-up error, neither
	 * the source's nor the compiler's; the driver prints it and exits 1. */
	char *tool_error;     /* arena: what was tried, how to fix it, the tool's output */
};

Ctx *ctx_create(void);
void ctx_destroy(Ctx *cx);
void *ctx_alloc(Ctx *cx, size_t size);                 /* zeroed */
char *ctx_strdup(Ctx *cx, const char *s);
char *ctx_strndup(Ctx *cx, const char *s, size_t n);
char *ctx_printf(Ctx *cx, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void ctx_add_include_dir(Ctx *cx, const char *dir);
/* Parses "NAME=VALUE" into a define; false (and *why) when it is not one. */
bool ctx_add_define(Ctx *cx, const char *text, const char **why);
Define *ctx_find_define(Ctx *cx, const char *name);
/* Adds a source held in memory (tests, fuzzing); returns its file index. */
int ctx_add_source(Ctx *cx, const char *path, const char *text, size_t len);
/* Reads a file from disk; -1 and a diagnostic at `from` on failure. */
int ctx_load_file(Ctx *cx, const char *path, Loc from);
/* Text built with stdio in memory: open (NULL and an internal error when the
 * stream cannot be made), write to ms.f, close into an arena string. */
typedef struct MemStream {
	FILE *f;
	char *buf;
	size_t len;
} MemStream;
FILE *ctx_stream_open(Ctx *cx, MemStream *ms);
char *ctx_stream_close(Ctx *cx, MemStream *ms);

/* ---- diag.c: diagnostics -------------------------------------------------- */

void diag_error(Ctx *cx, Loc loc, DiagId id, ...);
void diag_note(Ctx *cx, Loc loc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* An internal invariant failed: reported as a compiler bug. */
void diag_internal(Ctx *cx, const char *where, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void diag_print_all(Ctx *cx, FILE *out);
const char *diag_id_name(DiagId id);
bool ctx_failed(const Ctx *cx);

/* ---- types.c: scalar and tensor types ------------------------------------- */

typedef enum DType {
	DT_VOID, DT_BOOL, DT_I32, DT_I64, DT_F16, DT_BF16, DT_F32,
	DT_TF32,           /* shared tiles only: f32 rounded to tf32, wgmma's tf32 operands */
	DT_UNTYPED_INT,    /* an integer literal that takes its context's type */
	DT_UNTYPED_FLOAT,  /* likewise for a float literal */
	DT_ERROR,          /* after a reported error: suppresses cascades */
} DType;

typedef enum Space {
	SP_SCALAR,  /* a register value */
	SP_GLOBAL,  /* global-memory tensor (kernel parameter) */
	SP_SHARED,  /* shared-memory array */
	SP_TMA,     /* global tensor read and written by TMA (a CUtensorMap parameter) */
	SP_MBAR,    /* an array of mbarriers in shared memory */
	SP_FRAG,    /* a register tile of a warpgroup in the wgmma accumulator layout */
	SP_LOCAL,   /* a thread's own array ('var x: f32[16]'): registers when every index is a
		     * constant once loops unroll, else local memory */
	SP_ROLE,    /* a role, as a helper's by-reference parameter ('r: role') */
} Space;

/* One extent of a tensor: a constant, or a scalar kernel parameter. */
typedef struct Dim {
	int64_t value;     /* when param < 0 */
	int param;         /* kernel parameter index holding the extent, or -1 */
	const char *name;  /* the parameter's name, for printing */
} Dim;

typedef struct Type {
	DType dt;
	Space space;
	int rank;                  /* 0 for scalars */
	Dim dims[TILEC_MAX_RANK];  /* outermost first */
	int swizzle;               /* shared tiles and TMA: 0 (none), 32, 64, 128 bytes */
	int box[TILEC_MAX_RANK];   /* SP_TMA: the box, outermost first */
	int count;                 /* SP_MBAR: arrive count */
	bool colvec;               /* SP_FRAG of rank 1: a column vector [N] (else a
				      row vector [64]) */
} Type;

const char *dtype_name(DType dt);
int dtype_from_name(const char *s);
int dtype_bytes(DType dt);
bool dtype_is_int(DType dt);    /* i32 i64 and untyped int */
bool dtype_is_float(DType dt);  /* f16 bf16 f32 and untyped float */
bool dtype_is_numeric(DType dt);
Type type_scalar(DType dt);
char *type_str(Ctx *cx, const Type *t);

/* ---- target.c: facts of sm_90a ----------------------------------------------- */

typedef struct TargetFacts {
	int regs_per_sm;       /* 32-bit registers of an SM (and of one CTA at most) */
	int smem_per_cta;      /* dynamic shared memory a CTA may use, bytes */
	int smem_per_sm;       /* shared memory of an SM, the CTAs' reserved 1 KiB included */
	int max_threads;       /* threads per block */
	int max_mbar_count;    /* mbarrier arrive count and tx bytes per phase */
} TargetFacts;

extern const TargetFacts target_sm90a;
/* The registers each thread has at kernel entry under .maxntid + .minnctapersm 1:
 * the register file divided by the block, in units of 8, at most 248. */
int target_entry_regs(int threads);

/* ---- ast.c: the syntax tree ------------------------------------------------ */

typedef enum NodeKind {
	/* top level */
	N_IMPORT, N_CONST, N_FN, N_KERNEL, N_PARAM, N_LAUNCH,
	/* types */
	N_TYPE,
	/* statements */
	N_BLOCK, N_LET, N_VAR, N_SHARED, N_ASSIGN, N_IF, N_FOR, N_WHILE,
	N_BREAK, N_CONTINUE, N_RETURN, N_EXPR_STMT,
	N_MBARRIER, N_ROLE, N_FRAG,
	/* expressions */
	N_INT, N_FLOAT, N_BOOL, N_IDENT, N_UNARY, N_BINARY, N_CALL, N_INDEX,
	N_MEMBER, N_CAST, N_RANGE, N_FULL,
} NodeKind;

/* Operators of N_UNARY/N_BINARY and compound assignment (N_ASSIGN.op). */
typedef enum OpKind {
	OPK_NONE,
	OPK_ADD, OPK_SUB, OPK_MUL, OPK_DIV, OPK_REM,
	OPK_AND, OPK_OR, OPK_XOR, OPK_SHL, OPK_SHR,
	OPK_EQ, OPK_NE, OPK_LT, OPK_LE, OPK_GT, OPK_GE,
	OPK_LAND, OPK_LOR,
	OPK_NEG, OPK_NOT, OPK_BITNOT,
} OpKind;

/* grid(...), threads(...), ctas_per_sm(N): at least N CTAs resident per SM (PTX
 * .minnctapersm N: ptxas keeps each thread within 65536 / (N x threads) registers), and
 * cluster(N): launched in clusters of N CTAs along x (the launch metadata's cluster shape) */
typedef enum LaunchKind { LAUNCH_GRID, LAUNCH_THREADS, LAUNCH_CTAS, LAUNCH_CLUSTER } LaunchKind;

/* Whether a value may differ between threads (sema): the same in every thread of the
 * warpgroup; the same in every lane of a warp (warp_id and what follows from it and uniform
 * values); or different between lanes. Ordered: a value computed from several is their max. */
typedef enum Vary { VARY_NONE, VARY_WARP, VARY_LANE } Vary;

/* N_KERNEL.op: the desugar-pipeline pass rewrote the kernel's pipelined loop,
 * or refused it after an error (the roles it would have made are missing: sema
 * does not report statements outside a role then, nor the rewrite's repeats) */
typedef enum KernelPipeline { KERNEL_PLAIN, KERNEL_PIPELINED, KERNEL_PIPELINE_REFUSED } KernelPipeline;

/* N_FOR.ival and its OP_FOR's imm: 'unroll' (LLVM unrolls the loop fully), 'nounroll' (one
 * copy of the body), 'nohoist' (nothing leaves the loop as loop-invariant: LLVM's LICM kept a
 * big body's addresses and compares live across the loop, past the registers) */
enum { LOOP_UNROLL = 1, LOOP_NOUNROLL = 2, LOOP_NOHOIST = 4 };

/* N_CALL.op of a call the pipeline rewrite made (calls have no operator): it is
 * checked like the user's, but stays quiet where only the user's code is wrong */
enum { CALL_MADE = 1 };

/*
 * One flat node for every construct (chibicc's style). Field use per kind:
 *   N_IMPORT   name = path
 *   N_CONST    name, a = type or NULL, b = value
 *   N_FN       name, list = params, a = return type or NULL, b = body
 *   N_KERNEL   name, list = params, c = launch items, b = body,
 *              op = KernelPipeline (what desugar-pipeline did)
 *   N_PARAM    name, a = type
 *   N_LAUNCH   op = LaunchKind, list = exprs
 *   N_TYPE     dtype, space, list = dim exprs; b = swizzle or NULL;
 *              SP_TMA: a = box exprs; ival = 1: a helper's by-reference
 *              parameter or fragment result (shape from the argument, '_' any)
 *   N_MBARRIER name, a = arrive count, b = number of barriers or NULL
 *   N_ROLE     name, a = first warpgroup, b = last + 1 or NULL, c = regs or
 *              NULL, d = body
 *   N_FRAG     name, a = type, b = initial value
 *   N_RANGE    a = start, b = width (in an index list: start +: width)
 *   N_FULL     ':' in an index list (the whole dimension)
 *   N_LET/N_VAR name, a = type or NULL, b = init
 *   N_SHARED   name, a = type, b = the N_IDENT of overlay(NAME) or NULL
 *   N_ASSIGN   a = target, b = value, op = compound operator or OPK_NONE
 *   N_IF       a = cond, b = then block, c = else (block, N_IF or NULL)
 *   N_FOR      name = induction var, a = lo, b = hi, c = step or NULL, d = body,
 *              list = stages of a 'pipeline(S)' loop or NULL, ival = LOOP_* flags
 *   N_WHILE    a = cond, b = body
 *   N_RETURN   a = value or NULL
 *   N_EXPR_STMT a = expr
 *   N_BLOCK    list = statements
 *   N_INT/N_FLOAT/N_BOOL ival/fval
 *   N_IDENT    name
 *   N_UNARY    op, a;   N_BINARY op, a, b
 *   N_CALL     name = callee, list = args; a call of a tile helper after sema:
 *              b = the inlined body (N_BLOCK), c = the result expression or NULL
 *   N_INDEX    a = base, list = indices
 *   N_MEMBER   a = base, name = member
 *   N_CAST     dtype = target, a = operand
 */
struct Node {
	NodeKind kind;
	Loc loc;
	Node *next;               /* next sibling in a list */
	Node *a, *b, *c, *d;
	Node *list;
	const char *name;
	int64_t ival;
	double fval;
	int op;
	DType dtype;
	Space space;
	/* filled by sema */
	Type ty;
	Symbol *sym;
	int builtin;              /* Builtin id for calls and builtin idents */
	bool is_const;            /* expression has a compile-time value */
	Vary varying;             /* whether its value may differ between threads */
	bool is_view;             /* a tile view (tile-op argument), ty = its shape */
	int64_t const_ival;
	double const_fval;
	int depth;                /* parser: expression nesting, 1 for a leaf */
	int tvar;                 /* a helper's type parameter (1-based) standing for this
	                           * N_TYPE's element type or N_CAST's target; 0: none */
};

Node *ast_new(Ctx *cx, NodeKind kind, Loc loc);
Node *ast_clone(Ctx *cx, const Node *n);   /* deep copy of an unchecked tree */
Node *ast_append(Node *list, Node *item);  /* returns the list's head */
int ast_count(const Node *list);
Node *ast_nth(Node *list, int i);          /* element i of a list, or NULL */
const char *ast_kind_name(NodeKind k);
const char *ast_op_str(OpKind op);
void ast_print(Ctx *cx, FILE *out, Node *items);

/* ---- parse.c (lexer.l + parser.y): source to AST ---------------------------- */

/* Parses file `fid`; sets files[fid]->items. False on syntax errors. */
bool parse_file(Ctx *cx, int fid);
/* Writes one line per token (kind, location, text) for --emit=tokens. */
bool lex_dump(Ctx *cx, int fid, FILE *out);

/* ---- import.c: loading a program and its imports -------------------------- */

/* Parses file `fid` and, recursively, every file it imports. */
bool import_program(Ctx *cx, int main_fid);

/* ---- sema.c: names, types, Hopper rules ------------------------------------ */

typedef enum SymKind {
	SYM_CONST, SYM_FN, SYM_KERNEL, SYM_PARAM, SYM_LET, SYM_VAR, SYM_SHARED,
	SYM_LOOPVAR, SYM_MBAR, SYM_ROLE, SYM_FRAG, SYM_LOCAL,
	SYM_ALIAS,        /* an inlined helper's by-reference parameter: lookups give `alias` */
} SymKind;

struct Symbol {
	SymKind kind;
	const char *name;
	Node *decl;
	Type ty;
	int index;        /* parameter index; SYM_CONST: 0 unchecked, 1 busy, 2 done;
			     SYM_FN, SYM_KERNEL: its number in sema's call graph */
	int ir;           /* lower.c: the TIR variable or value standing for it */
	bool is_const;    /* SYM_CONST: value below */
	Vary varying;     /* whether its value may differ between threads */
	int waits;        /* SYM_MBAR: wait sites seen */
	bool pending;     /* SYM_FRAG: an mma_async into it may be in flight */
	int mma_group;    /* SYM_FRAG: the number of its last mma_async's group */
	int64_t ival;
	double fval;
	Symbol *next;     /* scope chain */
	/* sema.c's name table: the local of the same name this one hides, its
	 * order of entering scope, the next fragment in scope */
	Symbol *shadowed;
	int seq;
	Symbol *next_frag;
	Symbol *alias;    /* SYM_ALIAS: the caller's symbol the parameter names */
	bool tile_helper; /* SYM_FN: inlined by sema at each call site (sema_inline.c) */
	bool cluster_init; /* SYM_MBAR: the last barriers declared in a kernel whose barriers
			      other CTAs of its cluster reach: their init ends in a cluster
			      barrier, so none is reached before every CTA has initialised */
};

/* Type-checks every file of the program; annotates the AST in place. */
bool sema_check(Ctx *cx);

/* ---- builtins.c: the table of builtin functions and values ---------------- */

typedef enum Builtin {
	B_NONE,
#define BUILTIN(id, name, kind) id,
#include "builtins.def"
#undef BUILTIN
	B_COUNT
} Builtin;

typedef enum BuiltinKind { BK_VALUE, BK_SREG3, BK_CALL } BuiltinKind;

Builtin builtin_lookup(const char *name);
const char *builtin_name(Builtin b);
BuiltinKind builtin_kind(Builtin b);

/* ---- lower.c: typed AST to TIR ---------------------------------------------- */

TirModule *lower_program(Ctx *cx);

/* ---- pipeline.c: the pass table ----------------------------------------- */

/* One table, in the order of compilation: AST passes rewrite the program
 * between import and sema, "lower" is sema and lowering to TIR, TIR passes
 * transform the module. */

typedef struct Options {
	const char *print_after;  /* pass name, or "all" */
	const char *stop_after;   /* pass name */
	bool verify_each;
	FILE *dump;               /* where --print-after writes */
	const char *module_name;  /* --module-name: the module's name (default: the file's stem) */
	bool want_header;         /* --header: the typed launch header too (Output.header) */
	bool lineinfo;            /* --lineinfo: .tile line tables in the PTX and the cubin */
} Options;

typedef enum PassKind { PASS_AST, PASS_LOWER, PASS_TIR } PassKind;
typedef bool (*AstPassFn)(Ctx *cx);
typedef bool (*PassFn)(Ctx *cx, TirModule *m);
typedef struct Pass {
	const char *name;
	PassKind kind;
	AstPassFn run_ast;  /* PASS_AST */
	PassFn run;         /* PASS_TIR */
} Pass;

const Pass *pipeline_passes(int *count);
const Pass *pipeline_find_pass(const char *name);  /* NULL when none has the name */
bool pipeline_has_pass(const char *name);          /* a pass of the table, or "all" */
/* The AST passes, on every file: false on an internal error only (errors in
 * the source are reported and left for sema to add to). The main file's AST
 * goes to opt->dump after each pass --print-after names. */
bool pipeline_run_ast(Ctx *cx, const Options *opt);
/* Whether --stop-after names an AST pass: compilation ends before sema. */
bool pipeline_stops_before_sema(const Options *opt);
/* The TIR passes, after lowering. */
bool pipeline_run(Ctx *cx, TirModule *m, const Options *opt);

/* ---- llvm.c + ptx.c: code generation ------------------------------------- */

typedef struct CodegenOut {
	char *ll;    /* LLVM IR text (arena) when asked */
	char *ptx;   /* PTX text (arena) */
} CodegenOut;

/* lineinfo: every instruction located at its .tile line (.loc; llvm_debug.c) */
bool codegen_module(Ctx *cx, TirModule *m, bool want_ll, bool want_ptx, bool lineinfo,
		    CodegenOut *out);

/* ---- cubin.c: PTX to cubin through ptxas ------------------------------------ */

/* The ptxas to use: $TILEC_PTXAS, else the one found at build time, else
 * "ptxas" on PATH. Returns NULL when none can be run. */
const char *cubin_find_ptxas(Ctx *cx);
/* lineinfo: ptxas -lineinfo keeps the PTX's .loc line tables in the cubin */
bool cubin_from_ptx(Ctx *cx, const char *ptx, bool lineinfo, unsigned char **cubin,
		    size_t *size, char **log);

/* ---- meta.c, embed.c: what the runtime reads --------------------------------- */

char *meta_text(Ctx *cx, TirModule *m, const char *module_name);
char *embed_c_source(Ctx *cx, const char *module_name, const char *ptx,
		     const unsigned char *cubin, size_t cubin_size,
		     const char *meta);
/* The typed launch header of a module (dsl/metadata.md, "Typed launches") from its
 * metadata text. */
char *embed_c_header(Ctx *cx, const char *module_name, const char *meta);

/* ---- compile.c: one whole compilation, used by the driver and tests -------- */

typedef enum Emit {
	EMIT_TOKENS, EMIT_AST, EMIT_TIR, EMIT_LL, EMIT_PTX, EMIT_CUBIN,
	EMIT_META, EMIT_EMBED, EMIT_HEADER,
} Emit;

typedef struct Output {
	char *text;            /* for textual emits (arena) */
	unsigned char *bytes;  /* for cubin (arena) */
	size_t size;
	char *header;          /* the typed launch header, when Options.want_header (arena) */
	char **deps;           /* every source file read, main first */
	int ndeps;
} Output;

/* Compiles file `fid` to `emit`. Diagnostics stay on cx. */
bool compile_file(Ctx *cx, int fid, Emit emit, const Options *opt, Output *out);
const char *module_name_from_path(Ctx *cx, const char *path);

#endif
