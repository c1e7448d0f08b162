/*
 * unit.h: helpers shared by the CMocka unit tests: compile a source string
 * held in memory through the same entry points the driver uses, and look at
 * the diagnostics.
 */
#ifndef UNIT_H
#define UNIT_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "tir.h"

/* A context with `src` loaded as "test.tile" (file 0). */
static inline Ctx *unit_ctx(const char *src)
{
	Ctx *cx = ctx_create();
	assert_non_null(cx);
	assert_int_equal(ctx_add_source(cx, "test.tile", src, strlen(src)), 0);
	return cx;
}

/* Compiles `src` to `emit`; returns the output text or NULL. */
static inline char *unit_compile(Ctx *cx, Emit emit)
{
	Output out;
	Options opt = {0};
	if (!compile_file(cx, 0, emit, &opt, &out))
		return NULL;
	return out.text;
}

/* Parses, runs the AST passes, checks and lowers; the module after the whole
 * pipeline, or NULL. */
static inline TirModule *unit_lower(Ctx *cx, bool run_pipeline)
{
	cx->files[0]->is_main = true;
	if (!parse_file(cx, 0) || !pipeline_run_ast(cx, &(Options){0}) || !sema_check(cx) ||
	    ctx_failed(cx))
		return NULL;
	TirModule *m = lower_program(cx);
	if (m && run_pipeline && !pipeline_run(cx, m, &(Options){0}))
		return NULL;
	return m;
}

/* True if an error with this id was reported. */
static inline bool unit_has_error(const Ctx *cx, DiagId id)
{
	return cx->diag_fired[id];
}

#define KERNEL_HEAD "kernel k(a: global f32[n], n: i32) grid(1) threads(32) {\n"

#endif
