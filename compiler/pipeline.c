/*
 * pipeline.c: the pass table. The order of compilation is this table, read
 * top to bottom; each row says why the pass sits where it does. The table
 * also gives --print-after=NAME, --stop-after=NAME and --verify-each.
 */
#include <string.h>

#include "tir.h"

static const Pass passes[] = {
	/* catch lowering bugs before any pass relies on the IR's shape */
	{"verify", tir_verify},
	/* turn indices into offsets first: later passes see plain arithmetic */
	{"lower-index", pass_lower_index},
	/* fold the constant strides and identities lower-index produced */
	{"fold-constants", pass_fold_constants},
	/* lay out shared memory last: the final buffer set is known */
	{"plan-smem", pass_plan_smem},
};

const Pass *pipeline_passes(int *count)
{
	*count = (int)(sizeof passes / sizeof passes[0]);
	return passes;
}

bool pipeline_has_pass(const char *name)
{
	for (size_t i = 0; i < sizeof passes / sizeof passes[0]; i++)
		if (strcmp(passes[i].name, name) == 0)
			return true;
	return strcmp(name, "all") == 0 || strcmp(name, "lower") == 0;
}

static void dump(Ctx *cx, TirModule *m, const Options *opt, const char *name)
{
	if (!opt->print_after || !opt->dump)
		return;
	if (strcmp(opt->print_after, name) && strcmp(opt->print_after, "all"))
		return;
	fprintf(opt->dump, "; tir after %s\n", name);
	tir_print_module(cx, opt->dump, m);
}

bool pipeline_run(Ctx *cx, TirModule *m, const Options *opt)
{
	dump(cx, m, opt, "lower");
	if (opt->stop_after && strcmp(opt->stop_after, "lower") == 0)
		return true;
	for (size_t i = 0; i < sizeof passes / sizeof passes[0]; i++) {
		const Pass *p = &passes[i];
		if (!p->run(cx, m) || ctx_failed(cx))
			return false;
		if (opt->verify_each && !tir_verify(cx, m))
			return false;
		dump(cx, m, opt, p->name);
		if (opt->stop_after && strcmp(opt->stop_after, p->name) == 0)
			return true;
	}
	return tir_verify(cx, m);
}
