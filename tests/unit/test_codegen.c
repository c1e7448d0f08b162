/* test_codegen.c: LLVM IR, PTX, metadata, embedding and cubin output. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"

static const char *vadd =
	"kernel vadd(a: global f32[n], b: global bf16[n, 2], n: i64, s: f32)\n"
	"  grid(cdiv(n, 128), 2) threads(128) {\n"
	"  shared t: f32[128];\n"
	"  let i = cast<i64>(block_id.x * 128 + thread_id.x);\n"
	"  if i < n { t[thread_id.x] = a[i] * s; a[i] = t[thread_id.x] + cast<f32>(b[i, 1]); }\n}";

static void test_codegen_ll_is_kernel(void **state)
{
	(void)state;
	Ctx *cx = unit_ctx(vadd);
	char *ll = unit_compile(cx, EMIT_LL);
	assert_non_null(ll);
	assert_non_null(strstr(ll, "define ptx_kernel void @vadd(ptr addrspace(1) "));
	assert_non_null(strstr(ll, "@tile_smem = external local_unnamed_addr addrspace(3) global [0 x i8], align 1024"));
	assert_non_null(strstr(ll, "!\"maxntidx\", i32 128"));
	ctx_destroy(cx);
}

/* The loop flags as the loop's metadata: 'nohoist' keeps the loop-invariant square root in the
 * body (LLVM's LICM moves it out of a plain loop), 'nounroll' keeps one copy of the body. */
static const char *flagged_loop =
	"kernel scale_rows(x: global f32[n, m], n: i32, m: i32, s: f32)\n"
	"  grid(cdiv(n, 128)) threads(128) {\n"
	"  let r = block_id.x * 128 + thread_id.x;\n"
	"  if r < n {\n"
	"    for i in 0 .. m FLAGS {\n"
	"      x[r, i] = x[r, i] * sqrt(s + cast<f32>(r));\n"
	"    }\n"
	"  }\n}";

static char *loop_ll(Ctx **cx, const char *flags)
{
	static char src[1024];
	const char *at = strstr(flagged_loop, "FLAGS");
	snprintf(src, sizeof src, "%.*s%s%s", (int)(at - flagged_loop), flagged_loop, flags,
		 at + strlen("FLAGS"));
	*cx = unit_ctx(src);
	return unit_compile(*cx, EMIT_LL);
}

static void test_codegen_loop_flags(void **state)
{
	(void)state;
	Ctx *cx;
	char *ll = loop_ll(&cx, "nounroll nohoist");
	assert_non_null(ll);
	assert_non_null(strstr(ll, "!{!\"llvm.loop.unroll.disable\"}"));
	assert_non_null(strstr(ll, "!{!\"llvm.licm.disable\"}"));
	const char *body = strstr(ll, "\nfor.body:");
	const char *root = strstr(ll, "@llvm.sqrt.f32(float");
	assert_non_null(body);
	assert_non_null(root);
	assert_true(root > body);   /* in the loop */
	ctx_destroy(cx);
	ll = loop_ll(&cx, "nounroll");
	assert_non_null(ll);
	assert_null(strstr(ll, "llvm.licm.disable"));
	body = strstr(ll, "\nfor.body:");
	root = strstr(ll, "@llvm.sqrt.f32(float");
	assert_non_null(body);
	assert_non_null(root);
	assert_true(root < body);   /* hoisted before it */
	ctx_destroy(cx);
	/* 'unroll' with 'nohoist' (the unroll request is spent by LLVM's unroller, which cannot
	 * meet it here: the trip count is not a constant) */
	ll = loop_ll(&cx, "unroll nohoist");
	assert_non_null(ll);
	assert_non_null(strstr(ll, "!{!\"llvm.licm.disable\"}"));
	ctx_destroy(cx);
}

static void test_codegen_ptx_header_and_params(void **state)
{
	(void)state;
	Ctx *cx = unit_ctx(vadd);
	char *ptx = unit_compile(cx, EMIT_PTX);
	assert_non_null(ptx);
	assert_non_null(strstr(ptx, ".version 8.3"));
	assert_non_null(strstr(ptx, ".target sm_90a"));
	assert_non_null(strstr(ptx, ".param .u64 vadd_param_0"));
	assert_non_null(strstr(ptx, ".param .u64 vadd_param_2"));
	assert_non_null(strstr(ptx, ".param .f32 vadd_param_3"));
	assert_non_null(strstr(ptx, ".extern .shared .align 1024 .b8 tile_smem[]"));
	assert_non_null(strstr(ptx, ".maxntid 128, 1, 1"));
	ctx_destroy(cx);
}

static void test_codegen_meta_text(void **state)
{
	(void)state;
	Ctx *cx = unit_ctx(vadd);
	char *meta = unit_compile(cx, EMIT_META);
	assert_non_null(meta);
	assert_string_equal(meta,
		"tilec-meta 1\nmodule test\nkernel vadd\n"
		"  threads 128 1 1\n  grid (cdiv n 128) 2 1\n  smem 512\n  cluster 1 1 1\n"
		"  param 0 a ptr f32 1 n\n  param 1 b ptr bf16 2 n 2\n"
		"  param 2 n scalar i64\n  param 3 s scalar f32\nend\n");
	ctx_destroy(cx);
}

/* cluster(N): the launch metadata's cluster shape (the runtime launches with it) */
static void test_codegen_meta_cluster(void **state)
{
	(void)state;
	Ctx *cx = unit_ctx("kernel k(a: global f32[n], n: i32) grid(cdiv(n, 128)) threads(128) cluster(2) {\n"
			   "  a[block_id.x * 128 + thread_id.x] = 0.0;\n}");
	char *meta = unit_compile(cx, EMIT_META);
	assert_non_null(meta);
	assert_non_null(strstr(meta, "  smem 0\n  cluster 2 1 1\n"));
	ctx_destroy(cx);
}

/* cluster(expr): an expression of the scalar parameters, printed as grid's, evaluated at launch */
static void test_codegen_meta_cluster_rule(void **state)
{
	(void)state;
	Ctx *cx = unit_ctx("kernel k(a: global f32[n], n: i32, h: i32, hv: i32) grid(n) threads(128)\n"
			   "  cluster(hv / h) {\n  a[block_id.x] = 0.0;\n}");
	char *meta = unit_compile(cx, EMIT_META);
	assert_non_null(meta);
	assert_non_null(strstr(meta, "  smem 0\n  cluster (/ hv h) 1 1\n"));
	ctx_destroy(cx);
}

static void test_codegen_embed_source(void **state)
{
	(void)state;
	Ctx *cx = unit_ctx(vadd);
	char *c = unit_compile(cx, EMIT_EMBED);
	assert_non_null(c);
	assert_non_null(strstr(c, "#include \"tile_embed.h\""));
	assert_non_null(strstr(c, "const tile_embedded_module tile_module_test = {"));
	assert_non_null(strstr(c, "static const char meta[] = {"));
	ctx_destroy(cx);
}

/* the typed launch header: a struct with a field per parameter, its C type from the kind */
static void test_codegen_header(void **state)
{
	(void)state;
	Ctx *cx = unit_ctx(vadd);
	char *h = unit_compile(cx, EMIT_HEADER);
	assert_non_null(h);
	assert_non_null(strstr(h, "typedef struct tile_args_vadd {\n\tuint64_t a; /* ptr, rank 1 */\n"
				  "\tuint64_t b; /* ptr, rank 2 */\n\tint64_t n; /* i64 */\n"
				  "\tfloat s; /* f32 */\n} tile_args_vadd;\n"));
	assert_non_null(strstr(h, "{\"n\", \"i64\", tile_arg_i64(a->n)},"));
	assert_non_null(strstr(h, "return tile_kernel_launch_named(k, args, 4, stream, flags);"));
	assert_non_null(strstr(h, "extern const tile_embedded_module tile_module_test;"));
	ctx_destroy(cx);
}

static void test_codegen_cubin_through_ptxas(void **state)
{
	(void)state;
	Ctx *cx = unit_ctx(vadd);
	if (!cubin_find_ptxas(cx)) {
		ctx_destroy(cx);
		skip();
	}
	Output out;
	assert_true(compile_file(cx, 0, EMIT_CUBIN, &(Options){0}, &out));
	assert_true(out.size > 64);
	/* an ELF image */
	assert_memory_equal(out.bytes, "\x7f" "ELF", 4);
	ctx_destroy(cx);
}

/* --lineinfo: each instruction carries its .tile line (.loc), an inlined helper's its own, and
 * nothing else changes: the PTX without the directives is the PTX without --lineinfo. */
static const char *located =
	"fn root(x: f32) -> f32 {\n"
	"  return sqrt(x);\n"                                          /* line 2 */
	"}\n"
	"kernel k(a: global f32[n], n: i32) grid(cdiv(n, 128)) threads(128) {\n"
	"  let i = block_id.x * 128 + thread_id.x;\n"
	"  if i < n {\n"
	"    a[i] = root(a[i]) + cast<f32>(i);\n"                      /* line 7 */
	"  }\n}";

static char *ptx_of(const char *src, bool lineinfo)
{
	Ctx *cx = unit_ctx(src);
	Output out;
	Options opt = {.lineinfo = lineinfo};
	char *ptx = compile_file(cx, 0, EMIT_PTX, &opt, &out) ? strdup(out.text) : NULL;
	ctx_destroy(cx);
	return ptx;
}

/* The PTX's lines without the line-table directives and the labels they use. */
static char *without_line_tables(const char *ptx)
{
	char *out = calloc(strlen(ptx) + 1, 1);
	size_t n = 0;
	for (const char *p = ptx; *p;) {
		const char *end = strchr(p, '\n');
		size_t len = end ? (size_t)(end - p) + 1 : strlen(p);
		const char *t = p;
		while (*t == ' ' || *t == '\t')
			t++;
		bool drop = !strncmp(t, ".loc", 4) || !strncmp(t, ".file", 5) ||
			    !strncmp(t, "$L__", 4) || !strncmp(t, ".section", 8) || *t == '\n';
		if (!drop) {
			memcpy(out + n, p, len);
			n += len;
		}
		p += len;
	}
	return out;
}

static void test_codegen_lineinfo(void **state)
{
	(void)state;
	char *plain = ptx_of(located, false), *lined = ptx_of(located, true);
	assert_non_null(plain);
	assert_non_null(lined);
	assert_null(strstr(plain, ".loc"));
	assert_non_null(strstr(lined, ".file\t1 \""));
	assert_non_null(strstr(lined, "test.tile\""));
	/* the square root at the helper's line (LLVM inlined it), the add at the kernel's */
	const char *loc = NULL, *root = strstr(lined, "sqrt.rn.f32"), *add = strstr(lined, "add.rn.f32");
	assert_non_null(root);
	assert_non_null(add);
	for (const char *p = strstr(lined, ".loc"); p && p < root; p = strstr(p + 1, ".loc"))
		loc = p;
	assert_non_null(loc);
	assert_true(!strncmp(loc, ".loc\t1 2 ", 9));
	for (const char *p = strstr(lined, ".loc"); p && p < add; p = strstr(p + 1, ".loc"))
		loc = p;
	assert_true(!strncmp(loc, ".loc\t1 7 ", 9));
	char *a = without_line_tables(plain), *b = without_line_tables(lined);
	assert_string_equal(a, b);
	free(a);
	free(b);
	free(plain);
	free(lined);
}

/* ... and ptxas keeps the line tables in the cubin (-lineinfo): its SASS line section */
static void test_codegen_lineinfo_cubin(void **state)
{
	(void)state;
	for (int lineinfo = 0; lineinfo < 2; lineinfo++) {
		Ctx *cx = unit_ctx(located);
		if (!cubin_find_ptxas(cx)) {
			ctx_destroy(cx);
			skip();
		}
		Output out;
		assert_true(compile_file(cx, 0, EMIT_CUBIN, &(Options){.lineinfo = lineinfo}, &out));
		const char *name = ".nv_debug_line_sass";
		bool found = false;
		for (size_t i = 0; i + strlen(name) <= out.size && !found; i++)
			found = !memcmp(out.bytes + i, name, strlen(name));
		assert_int_equal(found, lineinfo);
		ctx_destroy(cx);
	}
}

/* frag_cols and frag_join move whole column groups: columns 32 .. 63 of a [64, 64] fragment
 * are the [64, 32] fragment loaded from those columns, and two [64, 32] halves side by side are
 * the [64, 64] fragment (the same PTX); columns 0 .. 31 are not (the test can fail). */
static char *cols_kernel(const char *body)
{
	static char src[1024];
	snprintf(src, sizeof src,
		 "kernel k(a: global f32[64]) grid(1) threads(128) {\n"
		 "  shared S: f32[64, 64];\n"
		 "  shared R: f32[64, 64];\n"
		 "  role all = warpgroup(0) {\n"
		 "    %s\n"
		 "    sync(all);\n"
		 "    a[thread_id.x %% 64] = R[thread_id.x %% 64, 5] + R[thread_id.x %% 64, 40];\n"
		 "  }\n}",
		 body);
	return ptx_of(src, false);
}

static void test_codegen_frag_cols(void **state)
{
	(void)state;
	char *slice = cols_kernel("frag_store(R[:, 0 +: 32], frag_cols(frag_load(S[:, 0 +: 64]), 32, 32));");
	char *window = cols_kernel("frag_store(R[:, 0 +: 32], frag_load(S[:, 32 +: 32]));");
	char *first = cols_kernel("frag_store(R[:, 0 +: 32], frag_cols(frag_load(S[:, 0 +: 64]), 0, 32));");
	char *join = cols_kernel("frag_store(R[:, 0 +: 64], frag_join(frag_load(S[:, 0 +: 32]), "
				 "frag_load(S[:, 32 +: 32])));");
	char *whole = cols_kernel("frag_store(R[:, 0 +: 64], frag_load(S[:, 0 +: 64]));");
	assert_non_null(slice);
	assert_non_null(window);
	assert_non_null(first);
	assert_non_null(join);
	assert_non_null(whole);
	assert_string_equal(slice, window);
	assert_string_equal(join, whole);
	assert_string_not_equal(first, window);
	free(slice);
	free(window);
	free(first);
	free(join);
	free(whole);
}

static void test_codegen_one_context_per_compilation(void **state)
{
	(void)state;
	/* many compilations in one process: no state leaks between them */
	for (int i = 0; i < 3; i++) {
		Ctx *cx = unit_ctx(vadd);
		assert_non_null(unit_compile(cx, EMIT_PTX));
		ctx_destroy(cx);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_codegen_ll_is_kernel),
		cmocka_unit_test(test_codegen_loop_flags),
		cmocka_unit_test(test_codegen_ptx_header_and_params),
		cmocka_unit_test(test_codegen_meta_text),
		cmocka_unit_test(test_codegen_meta_cluster),
		cmocka_unit_test(test_codegen_meta_cluster_rule),
		cmocka_unit_test(test_codegen_embed_source),
		cmocka_unit_test(test_codegen_header),
		cmocka_unit_test(test_codegen_cubin_through_ptxas),
		cmocka_unit_test(test_codegen_lineinfo),
		cmocka_unit_test(test_codegen_lineinfo_cubin),
		cmocka_unit_test(test_codegen_frag_cols),
		cmocka_unit_test(test_codegen_one_context_per_compilation),
	};
	return cmocka_run_group_tests_name("codegen", tests, NULL, NULL);
}
