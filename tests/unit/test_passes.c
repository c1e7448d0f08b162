/* test_passes.c: each pass on its own: lower-index, fold-constants,
 * plan-smem, and the pipeline's --stop-after behaviour. */
#include <stdlib.h>
#include <string.h>

#include "unit.h"

static int count_ops(const Block *b, OpCode code)
{
	int n = 0;
	for (int i = 0; i < b->nops; i++) {
		n += b->ops[i]->code == code;
		for (int k = 0; k < 2; k++)
			if (b->ops[i]->blocks[k])
				n += count_ops(b->ops[i]->blocks[k], code);
	}
	return n;
}

static void test_pass_lower_index_linearizes(void **state)
{
	(void)state;
	Ctx *cx = unit_ctx("kernel k(x: global f32[m, 8], m: i32) grid(1) threads(32) {\n"
			   "  shared s: f32[4, 4];\n"
			   "  s[1, 2] = x[thread_id.x, 3];\n}");
	TirModule *m = unit_lower(cx, false);
	assert_non_null(m);
	TirFunc *f = m->funcs[0];
	assert_int_equal(count_ops(f->body, OP_LOAD), 1);
	assert_true(pass_lower_index(cx, m));
	assert_int_equal(count_ops(f->body, OP_LOAD), 0);
	assert_int_equal(count_ops(f->body, OP_STORE), 0);
	assert_int_equal(count_ops(f->body, OP_LD), 1);
	assert_int_equal(count_ops(f->body, OP_ST), 1);
	assert_true(tir_verify(cx, m));
	/* global offsets are i64, shared offsets i32 */
	for (int i = 0; i < f->body->nops; i++) {
		Op *op = f->body->ops[i];
		if (op->code == OP_LD)
			assert_int_equal(f->vtypes[op->args[0]], DT_I64);
		if (op->code == OP_ST)
			assert_int_equal(f->vtypes[op->args[0]], DT_I32);
	}
	ctx_destroy(cx);
}

static void test_pass_fold_constants_folds_strides(void **state)
{
	(void)state;
	Ctx *cx = unit_ctx("kernel k(n: i32) grid(1) threads(32) {\n"
			   "  shared s: f32[4, 4];\n  s[1, 2] = 0.0;\n}");
	TirModule *m = unit_lower(cx, false);
	assert_true(pass_lower_index(cx, m));
	assert_true(pass_fold_constants(cx, m));
	assert_true(tir_verify(cx, m));
	TirFunc *f = m->funcs[0];
	/* 1 * 4 + 2 folds to the constant 6; no arithmetic remains */
	assert_int_equal(count_ops(f->body, OP_MUL), 0);
	assert_int_equal(count_ops(f->body, OP_ADD), 0);
	Op *st = NULL;
	for (int i = 0; i < f->body->nops; i++)
		if (f->body->ops[i]->code == OP_ST)
			st = f->body->ops[i];
	assert_non_null(st);
	for (int i = 0; i < f->body->nops; i++)
		if (f->body->ops[i]->result == st->args[0])
			assert_int_equal(f->body->ops[i]->imm, 6);
	ctx_destroy(cx);
}

static void test_pass_fold_keeps_division_by_zero(void **state)
{
	(void)state;
	Ctx *cx = unit_ctx("kernel k(o: global i32[n], n: i32) grid(1) threads(1) {\n"
			   "  let z = n - n;\n  o[0] = 7 / (0 * n);\n}");
	TirModule *m = unit_lower(cx, true);
	assert_non_null(m);
	/* 0 * n folds to 0, but 7 / 0 is left for run time */
	assert_int_equal(count_ops(m->funcs[0]->body, OP_DIV), 1);
	ctx_destroy(cx);
}

static void test_pass_plan_smem_offsets(void **state)
{
	(void)state;
	Ctx *cx = unit_ctx("kernel k(n: i32) grid(1) threads(32) {\n"
			   "  shared a: bf16[3];\n  shared b: f32[4];\n  shared c: i64[2];\n}");
	TirModule *m = unit_lower(cx, true);
	assert_non_null(m);
	TirFunc *f = m->funcs[0];
	assert_int_equal(f->nbufs, 3);
	assert_int_equal(f->bufs[0].offset, 0);
	assert_int_equal(f->bufs[1].offset, 16);   /* 6 bytes, aligned to 16 */
	assert_int_equal(f->bufs[2].offset, 32);
	assert_int_equal(f->smem_bytes, 48);
	ctx_destroy(cx);
}

static void test_pass_plan_smem_tma_alignment(void **state)
{
	(void)state;
	/* a tile that a TMA copy writes starts at 128 bytes (the engine's base alignment
	 * without swizzle), a plain shared array after it at 16 */
	Ctx *cx = unit_ctx("kernel k(g: tma f32[n, 64] box(1, 64), n: i32) grid(1) threads(128) {\n"
			   "  shared a: f32[5];\n  shared t: f32[2, 64];\n  shared c: f32[3];\n"
			   "  mbarrier bar(1);\n"
			   "  if elect_one() {\n    arrive_expect(bar, t[1]);\n"
			   "    tma_load(t[1], g[0, 0 +: 64], bar);\n  }\n  wait(bar, 0);\n}");
	TirModule *m = unit_lower(cx, true);
	assert_non_null(m);
	TirFunc *f = m->funcs[0];
	int a = -1, t = -1, c = -1;
	for (int i = 0; i < f->nbufs; i++) {
		if (!strcmp(f->bufs[i].name, "a"))
			a = i;
		if (!strcmp(f->bufs[i].name, "t"))
			t = i;
		if (!strcmp(f->bufs[i].name, "c"))
			c = i;
	}
	assert_true(a >= 0 && t >= 0 && c >= 0);
	assert_int_equal(f->bufs[a].offset, 0);
	assert_int_equal(f->bufs[t].offset, 128);  /* 20 bytes of a, then up to 128 */
	assert_int_equal(f->bufs[c].offset, 128 + 512);
	assert_int_equal(f->smem_align, 128);
	ctx_destroy(cx);
}

static void test_pass_plan_smem_overlay(void **state)
{
	(void)state;
	/* an overlay starts at its base; the slot takes the larger size and the
	 * stricter alignment (the swizzled overlay's 1024); an overlay of an
	 * overlay shares the first base */
	Ctx *cx = unit_ctx("kernel k(n: i32) grid(1) threads(128) {\n"
			   "  shared a: f32[3];\n  shared g: f32[64, 8];\n"
			   "  shared s: bf16[64, 64] swizzle(128) overlay(g);\n"
			   "  shared t: f32[4] overlay(s);\n  shared c: f32[2];\n}");
	TirModule *m = unit_lower(cx, true);
	assert_non_null(m);
	TirFunc *f = m->funcs[0];
	assert_int_equal(f->nbufs, 5);
	assert_int_equal(f->bufs[0].offset, 0);
	assert_int_equal(f->bufs[1].offset, 1024);
	assert_int_equal(f->bufs[2].offset, 1024);
	assert_int_equal(f->bufs[3].offset, 1024);
	assert_int_equal(f->bufs[3].overlay, 1);
	assert_int_equal(f->bufs[4].offset, 1024 + 8192); /* after the larger overlay */
	assert_int_equal(f->smem_align, 1024);
	assert_int_equal(f->smem_bytes, 1024 + 8192 + 8 + 1024); /* + the slack */
	ctx_destroy(cx);
}

static void test_pass_plan_smem_limit(void **state)
{
	(void)state;
	Ctx *cx = unit_ctx("kernel k(n: i32) grid(1) threads(32) {\n"
			   "  shared a: f32[58112];\n}"); /* exactly 232448 bytes */
	assert_non_null(unit_lower(cx, true));
	ctx_destroy(cx);
	cx = unit_ctx("kernel k(n: i32) grid(1) threads(32) {\n  shared a: f32[58113];\n}");
	assert_null(unit_lower(cx, true));
	assert_true(unit_has_error(cx, E_SHARED_TOO_LARGE));
	ctx_destroy(cx);
}

static void test_pass_pipeline_stop_after(void **state)
{
	(void)state;
	Ctx *cx = unit_ctx("kernel k(x: global f32[n], n: i32) grid(1) threads(32) { x[0] = 1.0; }");
	cx->files[0]->is_main = true;
	assert_true(parse_file(cx, 0) && sema_check(cx));
	TirModule *m = lower_program(cx);
	Options opt = {.stop_after = "verify"};
	assert_true(pipeline_run(cx, m, &opt));
	assert_false(m->funcs[0]->indices_lowered);
	ctx_destroy(cx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pass_lower_index_linearizes),
		cmocka_unit_test(test_pass_fold_constants_folds_strides),
		cmocka_unit_test(test_pass_fold_keeps_division_by_zero),
		cmocka_unit_test(test_pass_plan_smem_offsets),
		cmocka_unit_test(test_pass_plan_smem_tma_alignment),
		cmocka_unit_test(test_pass_plan_smem_overlay),
		cmocka_unit_test(test_pass_plan_smem_limit),
		cmocka_unit_test(test_pass_pipeline_stop_after),
	};
	return cmocka_run_group_tests_name("passes", tests, NULL, NULL);
}
