/*
 * compile.c: one compilation from a loaded source file to the requested
 * output, phase by phase; it stops at the first phase that fails. The driver
 * and the tests both call compile_file, so tests run exactly what the
 * command line runs.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "tir.h"

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

/* The module name: the file's stem made into a C identifier. */
const char *module_name_from_path(Ctx *cx, const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	const char *dot = strrchr(base, '.');
	size_t n = dot && dot != base ? (size_t)(dot - base) : strlen(base);
	char *name = ctx_alloc(cx, n + 2);
	size_t j = 0;
	if (n == 0 || isdigit((unsigned char)base[0]))
		name[j++] = '_';
	for (size_t i = 0; i < n; i++)
		name[j++] = isalnum((unsigned char)base[i]) ? base[i] : '_';
	return name;
}

/* Runs `print(cx, stream, arg)` into a memory buffer owned by the arena. */
static char *capture(Ctx *cx, void (*print)(Ctx *, FILE *, void *), void *arg)
{
	MemStream ms;
	if (!ctx_stream_open(cx, &ms))
		return NULL;
	print(cx, ms.f, arg);
	return ctx_stream_close(cx, &ms);
}

static void print_tokens(Ctx *cx, FILE *out, void *fid)
{
	lex_dump(cx, *(int *)fid, out);
}

static void print_ast(Ctx *cx, FILE *out, void *fid)
{
	ast_print(cx, out, cx->files[*(int *)fid]->items);
}

static void print_tir(Ctx *cx, FILE *out, void *m)
{
	tir_print_module(cx, out, m);
}

static void record_deps(Ctx *cx, Output *out)
{
	out->ndeps = cx->nfiles;
	out->deps = ctx_alloc(cx, (size_t)(cx->nfiles + 1) * sizeof(char *));
	for (int i = 0; i < cx->nfiles; i++)
		out->deps[i] = cx->files[i]->path;
}

static bool has_kernel(TirModule *m)
{
	for (int i = 0; i < m->nfuncs; i++)
		if (m->funcs[i]->is_kernel)
			return true;
	return false;
}

static bool finish_binary(Ctx *cx, int fid, Emit emit, TirModule *m, const Options *opt,
			  Output *out)
{
	CodegenOut cg;
	bool want_ptx = emit != EMIT_LL && emit != EMIT_META && emit != EMIT_HEADER;
	if (!codegen_module(cx, m, emit == EMIT_LL, want_ptx, opt->lineinfo, &cg))
		return false;
	const char *name = opt->module_name ? opt->module_name
					    : module_name_from_path(cx, cx->files[fid]->path);
	if (emit == EMIT_LL || emit == EMIT_PTX) {
		out->text = emit == EMIT_LL ? cg.ll : cg.ptx;
		return true;
	}
	if (emit != EMIT_CUBIN && strlen(name) > TILE_MAX_NAME_LEN) {
		/* a long file stem: the runtime could not load the module's metadata */
		diag_error(cx, (Loc){-1, 0, 0}, E_NAME_TOO_LONG, "module name", name, strlen(name),
			   TILE_MAX_NAME_LEN);
		return false;
	}
	if (emit == EMIT_META || emit == EMIT_HEADER) {
		char *meta = meta_text(cx, m, name);
		out->text = meta && emit == EMIT_HEADER ? embed_c_header(cx, name, meta) : meta;
		if (out->text && opt->want_header)
			out->header = embed_c_header(cx, name, meta);
		return out->text != NULL && (!opt->want_header || out->header != NULL);
	}
	char *log = NULL;
	/* embed carries a cubin when a ptxas is at hand, and must have one when
	 * $TILEC_PTXAS names one: a broken setting is an error, not a silent skip */
	const char *env = getenv("TILEC_PTXAS");
	bool want_cubin = emit == EMIT_CUBIN || (env && *env) || cubin_find_ptxas(cx) != NULL;
	if (want_cubin && !cubin_from_ptx(cx, cg.ptx, opt->lineinfo, &out->bytes, &out->size, &log))
		return false;
	if (emit == EMIT_CUBIN)
		return true;
	char *meta = meta_text(cx, m, name);
	out->text = meta ? embed_c_source(cx, name, cg.ptx, out->bytes, out->size, meta) : NULL;
	out->bytes = NULL;
	if (out->text && opt->want_header)
		out->header = embed_c_header(cx, name, meta);
	return out->text != NULL && (!opt->want_header || out->header != NULL);
}

bool compile_file(Ctx *cx, int fid, Emit emit, const Options *opt, Output *out)
{
	memset(out, 0, sizeof *out);
	if (emit == EMIT_TOKENS) {
		out->text = capture(cx, print_tokens, &fid);
		return !ctx_failed(cx);
	}
	bool ok = import_program(cx, fid);
	record_deps(cx, out);
	for (int i = 0; i < cx->ndefines; i++)
		if (!cx->defines[i].used) {
			/* the command line's fault, not a line of the file's */
			diag_error(cx, (Loc){-1, 0, 0}, E_UNUSED_DEFINE, cx->defines[i].text ? cx->defines[i].text : cx->defines[i].name,
				   cx->defines[i].is_type ? "type alias" : "constant");
			ok = false;
		}
	if (!ok)
		return false;
	if (emit == EMIT_AST) {
		out->text = capture(cx, print_ast, &fid);
		return true;
	}
	if (!pipeline_run_ast(cx, opt))
		return false;
	if (pipeline_stops_before_sema(opt)) {
		/* no TIR yet: the output is the rewritten program */
		out->text = capture(cx, print_ast, &fid);
		return !ctx_failed(cx);
	}
	/* errors of the AST passes are the program's too: sema adds its own first */
	if (!sema_check(cx) || ctx_failed(cx))
		return false;
	TirModule *m = lower_program(cx);
	if (!m || !pipeline_run(cx, m, opt))
		return false;
	if (emit == EMIT_TIR) {
		out->text = capture(cx, print_tir, m);
		return true;
	}
	if (!has_kernel(m)) {
		diag_error(cx, (Loc){fid, 1, 1}, E_NO_KERNEL, base_name(cx->files[fid]->path));
		return false;
	}
	return finish_binary(cx, fid, emit, m, opt, out);
}
