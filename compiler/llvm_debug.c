/*
 * llvm_debug.c: line tables (tilec --lineinfo). Every instruction gets the
 * .tile line of the TIR op it came from, so that the PTX carries .loc
 * directives, ptxas -lineinfo keeps them in the cubin, and a profiler
 * (Nsight Compute's source view, nvdisasm --print-line-info) attributes each
 * SASS instruction to a line of the kernel or of an imported file.
 *
 * The compile unit's emission kind is DebugDirectivesOnly: .file and .loc,
 * no DWARF sections (what nvcc -lineinfo produces). It changes no code: the
 * optimizer and the backend ignore locations (tests/unit/test_codegen.c checks
 * the PTX without them against the PTX of a build without --lineinfo).
 */
#include <string.h>

#include <llvm-c/Core.h>
#include <llvm-c/DebugInfo.h>

#include "llvm_gen.h"

/* DICompileUnit::DebugDirectivesOnly; LLVM-C's LLVMDWARFEmissionKind names only the first
 * three kinds, and LLVMDIBuilderCreateCompileUnit casts the value through */
enum { EMISSION_DEBUG_DIRECTIVES_ONLY = 3 };

static const char *dir_of(Gen *G, const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? ctx_strndup(G->cx, path, (size_t)(slash - path)) : ".";
}

static const char *base_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

static LLVMMetadataRef file_md(Gen *G, int file)
{
	if (file < 0 || file >= G->cx->nfiles)
		file = 0;
	if (!G->dbg_files[file]) {
		const SourceFile *sf = G->cx->files[file];
		const char *path = sf->canon ? sf->canon : sf->path;
		const char *dir = dir_of(G, path), *base = base_of(path);
		G->dbg_files[file] = LLVMDIBuilderCreateFile(G->dib, base, strlen(base), dir,
							     strlen(dir));
	}
	return G->dbg_files[file];
}

static void add_flag(Gen *G, const char *key, unsigned value)
{
	LLVMMetadataRef v = LLVMValueAsMetadata(
		LLVMConstInt(LLVMInt32TypeInContext(G->C), value, 0));
	LLVMAddModuleFlag(G->M, LLVMModuleFlagBehaviorWarning, key, strlen(key), v);
}

void gen_debug_begin(Gen *G)
{
	if (!G->lineinfo || G->cx->nfiles <= 0)
		return;
	G->dib = LLVMCreateDIBuilder(G->M);
	G->dbg_files = ctx_alloc(G->cx, (size_t)G->cx->nfiles * sizeof *G->dbg_files);
	G->dbg_scopes = ctx_alloc(G->cx, (size_t)G->cx->nfiles * sizeof *G->dbg_scopes);
	add_flag(G, "Debug Info Version", LLVMDebugMetadataVersion());
	add_flag(G, "Dwarf Version", 2);
	LLVMDIBuilderCreateCompileUnit(
		G->dib, LLVMDWARFSourceLanguageC, file_md(G, 0), "tilec", 5, 1, "", 0, 0, "", 0,
		(LLVMDWARFEmissionKind)EMISSION_DEBUG_DIRECTIVES_ONLY, 0, 0, 0, "", 0, "", 0);
}

/* The function's subprogram, in the file and at the line of its declaration; the
 * scopes of the other files are made when an op of theirs comes (imported helpers
 * inlined by sema keep their own lines). */
void gen_debug_function(Gen *G, const TirFunc *f, LLVMValueRef fn)
{
	if (!G->dib)
		return;
	int file = f->loc.file >= 0 ? f->loc.file : 0;
	LLVMMetadataRef fmd = file_md(G, file);
	LLVMMetadataRef type = LLVMDIBuilderCreateSubroutineType(G->dib, fmd, NULL, 0,
								 LLVMDIFlagZero);
	unsigned line = f->loc.line > 0 ? (unsigned)f->loc.line : 0;
	G->dbg_sp = LLVMDIBuilderCreateFunction(G->dib, fmd, f->name, strlen(f->name), f->name,
						strlen(f->name), fmd, line, type, !f->is_kernel, 1,
						line, LLVMDIFlagZero, 1);
	LLVMSetSubprogram(fn, G->dbg_sp);
	memset(G->dbg_scopes, 0, (size_t)G->cx->nfiles * sizeof *G->dbg_scopes);
	G->dbg_file = file;
	G->dbg_scopes[file] = G->dbg_sp;
	G->dbg_line = line;
	gen_debug_at(G, f->loc);
}

/* What the builder's next instructions are attributed to: loc, or (no location) the
 * last op's that had one. */
void gen_debug_at(Gen *G, Loc loc)
{
	if (!G->dib || !G->dbg_sp)
		return;
	int file = G->dbg_file;
	unsigned line = G->dbg_line, col = 0;
	if (loc.file >= 0 && loc.file < G->cx->nfiles && loc.line > 0) {
		file = loc.file;
		line = (unsigned)loc.line;
		col = loc.col > 0 ? (unsigned)loc.col : 0;
	}
	if (!G->dbg_scopes[file])
		G->dbg_scopes[file] = LLVMDIBuilderCreateLexicalBlockFile(G->dib, G->dbg_sp,
									 file_md(G, file), 0);
	G->dbg_file = file;
	G->dbg_line = line;
	LLVMMetadataRef at = LLVMDIBuilderCreateDebugLocation(G->C, line, col, G->dbg_scopes[file],
							      NULL);
	LLVMSetCurrentDebugLocation2(G->B, at);
}

void gen_debug_end_function(Gen *G)
{
	if (!G->dib)
		return;
	LLVMSetCurrentDebugLocation2(G->B, NULL);
	G->dbg_sp = NULL;
}

void gen_debug_finish(Gen *G)
{
	if (!G->dib)
		return;
	LLVMDIBuilderFinalize(G->dib);
	LLVMDisposeDIBuilder(G->dib);
	G->dib = NULL;
}
