/*
 * pipeline.c: the pass table. The order of compilation is this table, read
 * top to bottom; each row says why the pass sits where it does. AST passes
 * rewrite the program between import and sema, the "lower" row stands for
 * sema and lowering, TIR passes follow. The table also gives
 * --print-after=NAME, --stop-after=NAME, --list-passes and --verify-each.
 */
#include <string.h>

#include "pass_desugar_pipeline.h"
#include "tir.h"

static const Pass passes[] = {
	/* before sema: the roles, rings and mbarriers it writes are then checked
	 * like the explicit form an expert writes */
	{"desugar-pipeline", PASS_AST, pass_desugar_pipeline, NULL},
	/* sema checks the rewritten program and lower.c turns it into TIR: AST
	 * passes sit above this row, TIR passes below */
	{"lower", PASS_LOWER, NULL, NULL},
	/* catch lowering bugs before any pass relies on the IR's shape */
	{"verify", PASS_TIR, NULL, tir_verify},
	/* turn indices into offsets first: later passes see plain arithmetic */
	{"lower-index", PASS_TIR, NULL, pass_lower_index},
	/* fold the constant strides and identities lower-index produced */
	{"fold-constants", PASS_TIR, NULL, pass_fold_constants},
	/* one fence where a tile's stores had one each (any point after lowering serves) */
	{"merge-fences", PASS_TIR, NULL, pass_merge_fences},
	/* lay out shared memory last: the final buffer set is known */
	{"plan-smem", PASS_TIR, NULL, pass_plan_smem},
};

enum { NPASSES = (int)(sizeof passes / sizeof passes[0]) };

const Pass *pipeline_passes(int *count)
{
	*count = NPASSES;
	return passes;
}

const Pass *pipeline_find_pass(const char *name)
{
	for (int i = 0; i < NPASSES; i++)
		if (strcmp(passes[i].name, name) == 0)
			return &passes[i];
	return NULL;
}

bool pipeline_has_pass(const char *name)
{
	return pipeline_find_pass(name) || strcmp(name, "all") == 0;
}

static bool prints_after(const Options *opt, const char *name)
{
	return opt->print_after && opt->dump &&
	       (!strcmp(opt->print_after, name) || !strcmp(opt->print_after, "all"));
}

static bool stops_after(const Options *opt, const char *name)
{
	return opt->stop_after && strcmp(opt->stop_after, name) == 0;
}

/* The main file's AST, as --emit=ast prints it. */
static void dump_ast(Ctx *cx, const Options *opt, const char *name)
{
	if (!prints_after(opt, name))
		return;
	fprintf(opt->dump, "; ast after %s\n", name);
	for (int f = 0; f < cx->nfiles; f++)
		if (cx->files[f]->is_main)
			ast_print(cx, opt->dump, cx->files[f]->items);
}

static void dump_tir(Ctx *cx, TirModule *m, const Options *opt, const char *name)
{
	if (!prints_after(opt, name))
		return;
	fprintf(opt->dump, "; tir after %s\n", name);
	tir_print_module(cx, opt->dump, m);
}

bool pipeline_stops_before_sema(const Options *opt)
{
	const Pass *p = opt->stop_after ? pipeline_find_pass(opt->stop_after) : NULL;
	return p && p->kind == PASS_AST;
}

bool pipeline_run_ast(Ctx *cx, const Options *opt)
{
	for (int i = 0; i < NPASSES && passes[i].kind == PASS_AST; i++) {
		if (!passes[i].run_ast(cx))
			return false;
		dump_ast(cx, opt, passes[i].name);
		if (stops_after(opt, passes[i].name))
			return true;
	}
	return true;
}

bool pipeline_run(Ctx *cx, TirModule *m, const Options *opt)
{
	for (int i = 0; i < NPASSES; i++) {
		const Pass *p = &passes[i];
		if (p->kind == PASS_AST)
			continue;
		if (p->kind == PASS_TIR) {
			if (!p->run(cx, m) || ctx_failed(cx))
				return false;
			if (opt->verify_each && !tir_verify(cx, m))
				return false;
		}
		dump_tir(cx, m, opt, p->name);
		if (stops_after(opt, p->name))
			return true;
	}
	return tir_verify(cx, m);
}
