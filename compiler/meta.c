/*
 * meta.c: the launch metadata of a module, in the text format that
 * dsl/metadata.md specifies and runtime/src/meta.c reads: per kernel its
 * block shape, grid rule, dynamic shared memory, cluster shape and the ABI
 * of every parameter. Built in memory, owned by the arena.
 */
#include <stdlib.h>
#include <string.h>

#include "tir.h"

static void print_param(FILE *out, const TirFunc *f, int i)
{
	const TirParam *p = &f->params[i];
	fprintf(out, "  param %d %s ", i, p->name);
	if (p->ty.space == SP_SCALAR) {
		fprintf(out, "scalar %s\n", dtype_name(p->ty.dt));
		return;
	}
	bool tma = p->ty.space == SP_TMA;
	fprintf(out, "%s %s %d", tma ? "tma" : "ptr", dtype_name(p->ty.dt), p->ty.rank);
	for (int d = 0; d < p->ty.rank; d++) {
		const Dim *dim = &p->ty.dims[d];
		if (dim->param >= 0)
			fprintf(out, " %s", dim->name);
		else
			fprintf(out, " %lld", (long long)dim->value);
	}
	if (tma) {
		fprintf(out, " box");
		for (int d = 0; d < p->ty.rank; d++)
			fprintf(out, " %d", p->ty.box[d]);
		if (p->ty.swizzle)
			fprintf(out, " swizzle %d", p->ty.swizzle);
		else
			fprintf(out, " swizzle none");
	}
	fputc('\n', out);
}

static void print_kernel(FILE *out, const TirFunc *f)
{
	fprintf(out, "kernel %s\n", f->name);
	fprintf(out, "  threads %d %d %d\n", f->threads[0], f->threads[1], f->threads[2]);
	fprintf(out, "  grid ");
	for (int i = 0; i < 3; i++) {
		if (i)
			fputc(' ', out);
		tir_print_grid(out, f, f->grid[i]);
	}
	fprintf(out, "\n  smem %lld\n", (long long)f->smem_bytes);
	fprintf(out, "  cluster ");
	if (f->cluster_rule)
		tir_print_grid(out, f, f->cluster_rule);
	else
		fprintf(out, "%d", f->cluster > 0 ? f->cluster : 1);
	fprintf(out, " 1 1\n");
	for (int i = 0; i < f->nparams; i++)
		print_param(out, f, i);
	fprintf(out, "end\n");
}

char *meta_text(Ctx *cx, TirModule *m, const char *module_name)
{
	MemStream ms;
	if (!ctx_stream_open(cx, &ms))
		return NULL;
	fprintf(ms.f, "tilec-meta 1\nmodule %s\n", module_name);
	for (int i = 0; i < m->nfuncs; i++)
		if (m->funcs[i]->is_kernel)
			print_kernel(ms.f, m->funcs[i]);
	return ctx_stream_close(cx, &ms);
}
