/* test_passes.c: each pass on its own: desugar-pipeline, lower-index,
 * fold-constants, merge-fences, plan-smem, and the pipeline's order,
 * --print-after and --stop-after behaviour. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pass_desugar_pipeline.h"
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

/* ---- merge-fences ----------------------------------------------------------------- */

#define FENCES(body)                                                                      \
	"kernel k(n: i32) grid(1) threads(128) {\n"                                      \
	"  shared t: bf16[2, 64, 64] swizzle(128);\n"                                    \
	"  role w = warpgroup(0) {\n  frag a: f32[64, 64] = 1.0;\n" body "  }\n}\n"

/* The body of the first function's (last) role. */
static const Block *role_body(const TirModule *m)
{
	const Block *b = NULL;
	for (int i = 0; i < m->funcs[0]->body->nops; i++)
		if (m->funcs[0]->body->ops[i]->code == OP_ROLE)
			b = m->funcs[0]->body->ops[i]->blocks[0];
	assert_non_null(b);
	return b;
}

/* The role's ops after lowering and merge-fences, one letter each: S a shared frag.store,
 * F a fence, B a barrier, I an if, L a loop, M a wgmma; others skipped. */
static void fence_shape(const char *src, char *out, int *fences_in_ifs)
{
	Ctx *cx = unit_ctx(src);
	TirModule *m = unit_lower(cx, false);
	assert_non_null(m);
	assert_true(pass_merge_fences(cx, m));
	assert_true(tir_verify(cx, m));
	const Block *b = role_body(m);
	int n = 0, nested = 0;
	for (int i = 0; i < b->nops; i++) {
		const Op *op = b->ops[i];
		char c = op->code == OP_FRAG_STORE ? 'S' : op->code == OP_FENCE_ASYNC ? 'F' :
			 op->code == OP_NAMED_SYNC ? 'B' : op->code == OP_IF ? 'I' :
			 op->code == OP_FOR ? 'L' : op->code == OP_MMA ? 'M' : 0;
		if (c)
			out[n++] = c;
		for (int k = 0; k < 2; k++)
			if (op->blocks[k])
				nested += count_ops(op->blocks[k], OP_FENCE_ASYNC);
	}
	out[n] = 0;
	*fences_in_ifs = nested;
	ctx_destroy(cx);
}

/* frag_store(transpose(t), f) lowers to the tile's frag.store marked transposed (imm 1), a
 * plain one to imm 0; each followed by its fence */
static void test_lower_frag_store_transposed(void **state)
{
	(void)state;
	Ctx *cx = unit_ctx("kernel k() grid(1) threads(128) {\n"
			   "  shared t: tf32[2, 64, 32] swizzle(128);\n"
			   "  role w = warpgroup(0) {\n  frag a: f32[64, 64] = 1.0;\n"
			   "    frag_store(transpose(t), a);\n    frag_store(t, a);\n  }\n}\n");
	TirModule *m = unit_lower(cx, false);
	assert_non_null(m);
	assert_true(tir_verify(cx, m));
	const Block *b = role_body(m);
	int64_t imm[2] = {-1, -1};
	int bufs[2] = {-1, -1}, n = 0;
	for (int i = 0; i < b->nops; i++)
		if (b->ops[i]->code == OP_FRAG_STORE && n < 2) {
			imm[n] = b->ops[i]->imm;
			bufs[n++] = b->ops[i]->buf;
		}
	assert_int_equal(n, 2);
	assert_int_equal(imm[0], 1);
	assert_int_equal(imm[1], 0);
	assert_int_equal(bufs[0], bufs[1]);
	assert_true(bufs[0] >= 0);
	assert_int_equal(count_ops(b, OP_FENCE_ASYNC), 2);
	ctx_destroy(cx);
}

static void test_pass_merge_fences(void **state)
{
	(void)state;
	static const struct {
		const char *body, *shape;
		int nested;
	} cases[] = {
		/* a tile in two halves, then the kernel's own fence: one fence, before the barrier */
		{"  frag_store(t[0], a);\n  frag_store(t[1], a);\n  fence_async();\n  sync(w);\n",
		 "SSFB", 0},
		/* a barrier between two stores: each keeps its fence */
		{"  frag_store(t[0], a);\n  sync(w);\n  frag_store(t[1], a);\n", "SFBSF", 0},
		/* an if's branch ending in a fence, a fence after the if: the branch's goes */
		{"  if n > 0 {\n    frag_store(t[0], a);\n  }\n  fence_async();\n  sync(w);\n",
		 "IFB", 0},
		/* a fence before the if (passed over: its branch holds plain ops and a fence) goes */
		{"  frag_store(t[0], a);\n  if n > 0 {\n    frag_store(t[1], a);\n  }\n"
		 "  fence_async();\n", "SIF", 0},
		/* an if holding a barrier is not passed over */
		{"  frag_store(t[0], a);\n  if n > 0 {\n    sync(w);\n  }\n  fence_async();\n",
		 "SFIF", 0},
		/* nor a wgmma, nor a loop */
		{"  frag_store(t[0], a);\n  frag c: f32[64, 64] = 0.0;\n  mma_async(c, t[0], t[1]);\n"
		 "  mma_wait(c, 0);\n  fence_async();\n", "SFMF", 0},
		{"  frag_store(t[0], a);\n  for i in 0 .. n {\n    fence_async();\n  }\n", "SFL", 1},
		/* with no fence after it, a branch's fence stays */
		{"  if n > 0 {\n    frag_store(t[0], a);\n  }\n  sync(w);\n", "IB", 1},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char src[1024], shape[32];
		int nested = -1;
		snprintf(src, sizeof src, FENCES("%s"), cases[i].body);
		fence_shape(src, shape, &nested);
		if (strcmp(shape, cases[i].shape) != 0 || nested != cases[i].nested)
			fail_msg("case %zu: %s with %d fences in branches, expected %s with %d", i,
				 shape, nested, cases[i].shape, cases[i].nested);
	}
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

/* ---- desugar-pipeline ------------------------------------------------------------ */

#define PIPELINED(threads, stages)                                                        \
	"const S: i32 = " stages ";\n"                                                    \
	"kernel k(A: tma bf16[M, K] box(64, 64) swizzle(128), C: global f32[M, 64],"      \
	" M: i32, K: i32)\n  grid(1) threads(" threads ")\n{\n"                           \
	"  let m0 = block_id.x * 64;\n  frag acc: f32[64, 64] = 0.0;\n"                   \
	"  for k in 0 .. cdiv(K, 64) pipeline(S) {\n"                                     \
	"    let a = load(A[m0 +: 64, k * 64 +: 64]);\n"                                  \
	"    mma_async(acc, a, transpose(a));\n  }\n"                                      \
	"  mma_wait(acc, 0);\n  frag_store(C[m0 +: 64, :], acc);\n}\n"

/* Parses `src` and runs the pass alone: no Sema exists yet. */
static Node *desugar(Ctx *cx)
{
	cx->files[0]->is_main = true;
	assert_true(parse_file(cx, 0));
	assert_true(pass_desugar_pipeline(cx));
	Node *k = cx->files[0]->items;
	while (k && k->kind != N_KERNEL)
		k = k->next;
	assert_non_null(k);
	return k;
}

static bool calls(const Node *n, const char *fn)
{
	for (; n; n = n->next)
		if ((n->kind == N_CALL && !strcmp(n->name, fn)) || calls(n->a, fn) ||
		    calls(n->b, fn) || calls(n->c, fn) || calls(n->d, fn) || calls(n->list, fn))
			return true;
	return false;
}

static void test_pass_desugar_pipeline_writes_roles(void **state)
{
	(void)state;
	Ctx *cx = unit_ctx(PIPELINED("128", "1 + 1"));
	Node *k = desugar(cx);
	assert_false(ctx_failed(cx));
	assert_int_equal(k->op, KERNEL_PIPELINED);
	/* the block is the consumers and the producer's warpgroup */
	assert_int_equal(k->c->next->op, LAUNCH_THREADS);
	assert_int_equal(k->c->next->list->ival, 256);
	const char *want[] = {"a.ring", "pipeline.full", "pipeline.empty", "pipeline.producer",
			      "pipeline.consumer"};
	const NodeKind kinds[] = {N_SHARED, N_MBARRIER, N_MBARRIER, N_ROLE, N_ROLE};
	Node *st = k->b->list;
	for (int i = 0; i < 5; i++, st = st->next) {
		assert_non_null(st);
		assert_int_equal(st->kind, kinds[i]);
		assert_string_equal(st->name, want[i]);
	}
	assert_null(st);
	Node *ring = k->b->list, *full = ring->next, *empty = full->next;
	Node *prod = empty->next, *cons = prod->next;
	/* the ring: S stages of the window's box, the tensor's swizzle */
	assert_int_equal(ring->a->dtype, DT_BF16);
	assert_int_equal(ast_count(ring->a->list), 3);
	assert_int_equal(ring->a->b->ival, 128);
	assert_int_equal(full->a->ival, 1);
	assert_int_equal(empty->a->ival, 128);
	/* warpgroup 0 produces, 1 consumes; one consumer warpgroup needs no budgets */
	assert_int_equal(prod->a->ival, 0);
	assert_int_equal(prod->b->ival, 1);
	assert_null(prod->c);
	assert_int_equal(cons->a->ival, 1);
	assert_int_equal(cons->b->ival, 2);
	assert_true(calls(prod->d, "tma_load") && calls(prod->d, "elect_one"));
	assert_false(calls(k->b, "load"));
	/* S = 2 folded from the constant: one group stays in flight, the previous
	 * stage is released */
	assert_true(calls(cons->d, "mma_wait"));
	assert_true(sema_check(cx));
	assert_false(ctx_failed(cx));
	ctx_destroy(cx);
}

static void test_pass_desugar_pipeline_budgets(void **state)
{
	(void)state;
	/* three consumer warpgroups: the producer keeps 24 registers, the consumers
	 * split the rest, (65536 - 128 x 24) / 384 rounded down to a multiple of 8 */
	Ctx *cx = unit_ctx(PIPELINED("384", "3"));
	Node *k = desugar(cx);
	assert_int_equal(k->op, KERNEL_PIPELINED);
	assert_int_equal(k->c->next->list->ival, 512);
	Node *prod = k->b->list->next->next->next, *cons = prod->next;
	assert_int_equal(prod->c->ival, 24);
	assert_int_equal(cons->c->ival, 160);
	assert_int_equal(cons->b->ival, 4);
	ctx_destroy(cx);
}

static void test_pass_desugar_pipeline_refuses(void **state)
{
	(void)state;
	/* refused at threads(...): the loop is emptied and the kernel marked, so
	 * sema reports nothing more about the roles it lacks */
	Ctx *cx = unit_ctx(PIPELINED("100", "2"));
	Node *k = desugar(cx);
	assert_true(unit_has_error(cx, E_PIPELINE));
	assert_int_equal(cx->nerrors, 1);
	assert_int_equal(k->op, KERNEL_PIPELINE_REFUSED);
	assert_false(calls(k->b, "load"));
	assert_true(sema_check(cx));
	assert_int_equal(cx->nerrors, 1);
	ctx_destroy(cx);
}

static void test_pass_desugar_pipeline_leaves_plain_kernels(void **state)
{
	(void)state;
	Ctx *cx = unit_ctx(KERNEL_HEAD "  for i in 0 .. n { a[i] = 1.0; }\n}\n");
	Node *k = desugar(cx);
	assert_int_equal(k->op, KERNEL_PLAIN);
	assert_int_equal(k->c->next->list->ival, 32);
	assert_int_equal(k->b->list->kind, N_FOR);
	ctx_destroy(cx);
}

/* --print-after and --stop-after name the AST pass like any other. */
static void test_pass_desugar_pipeline_print_and_stop(void **state)
{
	(void)state;
	int n;
	const Pass *p = pipeline_passes(&n);
	assert_string_equal(p[0].name, "desugar-pipeline");
	assert_int_equal(p[0].kind, PASS_AST);
	assert_string_equal(p[1].name, "lower");
	for (int i = 2; i < n; i++)
		assert_int_equal(p[i].kind, PASS_TIR);
	/* a helper sema would refuse: stopping after the pass, sema does not run */
	Ctx *cx = unit_ctx("fn f() -> i32 { return nope; }\n" PIPELINED("128", "2"));
	char *buf = NULL;
	size_t len = 0;
	FILE *dump = open_memstream(&buf, &len);
	Options opt = {.print_after = "desugar-pipeline", .stop_after = "desugar-pipeline",
		       .dump = dump};
	Output out;
	assert_true(compile_file(cx, 0, EMIT_PTX, &opt, &out));
	fclose(dump);
	assert_non_null(strstr(buf, "; ast after desugar-pipeline\n"));
	assert_non_null(strstr(buf, "role pipeline.producer"));
	assert_null(strstr(buf, "; tir after"));
	assert_non_null(out.text);
	assert_non_null(strstr(out.text, "role pipeline.consumer"));
	assert_int_equal(cx->nerrors, 0);
	free(buf);
	ctx_destroy(cx);
}

static void test_pass_pipeline_stop_after(void **state)
{
	(void)state;
	Ctx *cx = unit_ctx("kernel k(x: global f32[n], n: i32) grid(1) threads(32) { x[0] = 1.0; }");
	cx->files[0]->is_main = true;
	assert_true(parse_file(cx, 0) && pipeline_run_ast(cx, &(Options){0}) && sema_check(cx));
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
		cmocka_unit_test(test_lower_frag_store_transposed),
		cmocka_unit_test(test_pass_merge_fences),
		cmocka_unit_test(test_pass_plan_smem_offsets),
		cmocka_unit_test(test_pass_plan_smem_tma_alignment),
		cmocka_unit_test(test_pass_plan_smem_overlay),
		cmocka_unit_test(test_pass_plan_smem_limit),
		cmocka_unit_test(test_pass_pipeline_stop_after),
		cmocka_unit_test(test_pass_desugar_pipeline_writes_roles),
		cmocka_unit_test(test_pass_desugar_pipeline_budgets),
		cmocka_unit_test(test_pass_desugar_pipeline_refuses),
		cmocka_unit_test(test_pass_desugar_pipeline_leaves_plain_kernels),
		cmocka_unit_test(test_pass_desugar_pipeline_print_and_stop),
	};
	return cmocka_run_group_tests_name("passes", tests, NULL, NULL);
}
