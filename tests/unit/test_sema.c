/* test_sema.c: typing rules, constant folding, symbol resolution. Every
 * diagnostic also has a file in tests/diag; these test the accepting side
 * and the values sema computes. */
#include <stdlib.h>

#include "unit.h"

static Ctx *check(const char *src, bool expect_ok)
{
	Ctx *cx = unit_ctx(src);
	cx->files[0]->is_main = true;
	/* the AST passes first, as compile_file runs them: pipelined loops are rewritten */
	bool ok = parse_file(cx, 0) && pipeline_run_ast(cx, &(Options){0}) && sema_check(cx) &&
		  !ctx_failed(cx);
	if (ok != expect_ok)
		diag_print_all(cx, stderr);
	assert_int_equal(ok, expect_ok);
	return cx;
}

static Node *find_const(Ctx *cx, const char *name)
{
	for (Node *it = cx->files[0]->items; it; it = it->next)
		if (it->kind == N_CONST && !strcmp(it->name, name))
			return it;
	fail();
	return NULL;
}

static void test_sema_folds_constants(void **state)
{
	(void)state;
	Ctx *cx = check("const A = 3 * (4 + 1);\nconst B = cdiv(A, 4);\n"
			"const C = max(B, 2) << 2;\nconst D: f32 = A / 2;\n"
			"const E = 1.5 * 2;", true);
	assert_int_equal(find_const(cx, "A")->sym->ival, 15);
	assert_int_equal(find_const(cx, "B")->sym->ival, 4);
	assert_int_equal(find_const(cx, "C")->sym->ival, 16);
	/* integer division happens before the f32 conversion: 15 / 2 = 7 */
	assert_true(find_const(cx, "D")->sym->fval == 7.0);
	assert_int_equal(find_const(cx, "D")->sym->ty.dt, DT_F32);
	assert_true(find_const(cx, "E")->sym->fval == 3.0);
	ctx_destroy(cx);
}

static void test_sema_constants_in_any_order(void **state)
{
	(void)state;
	Ctx *cx = check("const A = B + 1;\nconst B = 41;", true);
	assert_int_equal(find_const(cx, "A")->sym->ival, 42);
	ctx_destroy(cx);
	cx = check("const A = B;\nconst B = A;", false);
	assert_true(unit_has_error(cx, E_NOT_CONSTANT));
	ctx_destroy(cx);
}

static void test_sema_literals_take_context_type(void **state)
{
	(void)state;
	Ctx *cx = check(KERNEL_HEAD
			"  let x = a[0] * 2;\n"        /* 2 becomes f32 */
			"  let y: i64 = 5000000000;\n"  /* fits i64 */
			"  let z = cast<i64>(n) + 1;\n"
			"  let w = 1 << 3;\n"
			"}", true);
	ctx_destroy(cx);
}

static void test_sema_strict_mixing(void **state)
{
	(void)state;
	Ctx *cx = check(KERNEL_HEAD "  let x = a[0] + n;\n}", false);
	assert_true(unit_has_error(cx, E_TYPE_MISMATCH));
	assert_int_equal(cx->nerrors, 1);
	ctx_destroy(cx);
}

static void test_sema_one_error_per_mistake(void **state)
{
	(void)state;
	/* the undefined name poisons the expression: no cascade of errors */
	Ctx *cx = check(KERNEL_HEAD "  let x = (y + 1) * 2.0 + a[0];\n  a[0] = x;\n}", false);
	assert_int_equal(cx->nerrors, 1);
	assert_true(unit_has_error(cx, E_UNDEFINED));
	ctx_destroy(cx);
}

static void test_sema_scopes_and_shadowing(void **state)
{
	(void)state;
	Ctx *cx = check(KERNEL_HEAD
			"  let x = 1;\n"
			"  if n > 0 { let x = 2.0; a[0] = x; }\n"
			"  for i in 0 .. n { let x = i; }\n"
			"}", true);
	ctx_destroy(cx);
	cx = check(KERNEL_HEAD "  if n > 0 { let y = 1; }\n  let z = y;\n}", false);
	assert_true(unit_has_error(cx, E_UNDEFINED));
	ctx_destroy(cx);
}

/* Names resolve through sema's hash table: the innermost local, the outer one again once
 * its block ends, globals under locals, and top-level names only inside a constant. */
static void test_sema_names_resolve_innermost_first(void **state)
{
	(void)state;
	Ctx *cx = check("const c = 1;\n" KERNEL_HEAD
			"  let x = 1;\n"
			"  if n > 0 { let x = 2.0; a[0] = x; let c = 3.0; a[1] = c; }\n"
			"  let y: i32 = x + c;\n"  /* both i32 again */
			"  let n = 2.5;\n"          /* a parameter may be shadowed at the top */
			"  a[2] = n;\n}", true);
	ctx_destroy(cx);
	/* one block: a redefinition, with a note at the first */
	cx = check(KERNEL_HEAD "  let x = 1;\n  if n > 0 { let z = 1; }\n  let x = 2;\n}", false);
	assert_int_equal(cx->nerrors, 1);
	assert_true(unit_has_error(cx, E_REDEFINED));
	assert_int_equal(cx->diags[0].loc.line, 4);
	assert_int_equal(cx->diags[1].sev, SEV_NOTE);
	assert_int_equal(cx->diags[1].loc.line, 2);
	ctx_destroy(cx);
	/* a constant checked from a body does not see the body's locals */
	cx = check("const A = x + 1;\n" KERNEL_HEAD "  let x = 1;\n  a[0] = cast<f32>(A);\n}", false);
	assert_int_equal(cx->nerrors, 1);
	assert_true(unit_has_error(cx, E_UNDEFINED));
	ctx_destroy(cx);
}

/* Many names in one scope: each lookup and redefinition check stays exact. */
static void test_sema_many_names_in_one_scope(void **state)
{
	(void)state;
	enum { N = 5000 };
	char *src = malloc(N * 40 + 256);
	int len = sprintf(src, KERNEL_HEAD "  var acc = 0;\n");
	for (int i = 0; i < N; i++)
		len += sprintf(src + len, "  let v%d = %d;\n  acc += v%d;\n", i, i, i / 2);
	sprintf(src + len, "  let v17 = 0;\n  a[0] = cast<f32>(acc);\n}");
	Ctx *cx = check(src, false);
	assert_int_equal(cx->nerrors, 1);
	assert_true(unit_has_error(cx, E_REDEFINED));
	assert_int_equal(cx->diags[0].loc.line, 2 + 2 * N + 1);
	assert_int_equal(cx->diags[1].loc.line, 2 + 2 * 17 + 1);
	ctx_destroy(cx);
	free(src);
}

/* A call in a constant is not constant, wherever the constant stands: one error, no edge
 * of the call graph (it once crashed before any body was checked and, after one, read as
 * the last function calling itself). */
static void test_sema_call_in_constant(void **state)
{
	(void)state;
	const char *srcs[] = {
		"const c = f(1);\nfn f(x: i32) -> i32 { return x; }\n" KERNEL_HEAD "  let m = c;\n}",
		"fn f(x: i32) -> i32 { return x; }\nconst c = f(1);\n" KERNEL_HEAD "  let m = c;\n}",
	};
	for (int i = 0; i < 2; i++) {
		Ctx *cx = check(srcs[i], false);
		assert_true(unit_has_error(cx, E_NOT_CONSTANT));
		assert_false(unit_has_error(cx, E_RECURSION));
		ctx_destroy(cx);
	}
}

/* Chains of constants and of helper calls are followed without recursing along them,
 * up to the nesting limit. */
static void test_sema_chains_up_to_the_limit(void **state)
{
	(void)state;
	char *src = malloc(64 * 1000 + 256);
	int len = 0;
	/* 299 constants, each one level deeper than the next: the limit is not passed */
	for (int i = 0; i < 299; i++)
		len += sprintf(src + len, "const c%d = c%d;\n", i, i + 1);
	sprintf(src + len, "const c299 = 7;\n" KERNEL_HEAD "  a[0] = cast<f32>(c0);\n}");
	Ctx *cx = check(src, true);
	assert_int_equal(find_const(cx, "c0")->sym->ival, 7);
	ctx_destroy(cx);
	/* 300 nested helpers below the kernel: accepted; one more is refused */
	for (int extra = 0; extra < 2; extra++) {
		len = 0;
		int n = 300 + extra;
		for (int i = 0; i < n - 1; i++)
			len += sprintf(src + len, "fn h%d(x: i32) -> i32 { return h%d(x) + 1; }\n", i, i + 1);
		sprintf(src + len, "fn h%d(x: i32) -> i32 { return x; }\n" KERNEL_HEAD
			"  a[0] = cast<f32>(h0(n));\n}", n - 1);
		cx = check(src, !extra);
		if (extra) {
			assert_int_equal(cx->nerrors, 1);
			assert_true(unit_has_error(cx, E_CALL_DEPTH));
		}
		ctx_destroy(cx);
	}
	free(src);
}

static void test_sema_symbolic_dims_resolve_to_params(void **state)
{
	(void)state;
	Ctx *cx = check("kernel k(x: global bf16[m, 64], m: i64) grid(1) threads(32) { }", true);
	Node *k = cx->files[0]->items;
	Symbol *x = k->list->sym;
	assert_int_equal(x->ty.rank, 2);
	assert_int_equal(x->ty.dims[0].param, 1);
	assert_int_equal(x->ty.dims[1].param, -1);
	assert_int_equal(x->ty.dims[1].value, 64);
	ctx_destroy(cx);
}

static void test_sema_helper_calls_and_returns(void **state)
{
	(void)state;
	Ctx *cx = check("fn sq(x: f32) -> f32 { return x * x; }\n"
			"fn pick(c: bool, x: i32) -> i32 { if c { return x; } else { return 0; } }\n"
			KERNEL_HEAD "  a[0] = sq(a[1]) + cast<f32>(pick(n > 1, 3));\n}", true);
	ctx_destroy(cx);
	cx = check("fn f(x: f32) -> f32 { return x; }\n" KERNEL_HEAD "  a[0] = f(n);\n}", false);
	assert_true(unit_has_error(cx, E_ARG_TYPE));
	ctx_destroy(cx);
}

static void test_sema_indirect_recursion(void **state)
{
	(void)state;
	Ctx *cx = check("fn a1(x: i32) -> i32 { return b1(x); }\n"
			"fn b1(x: i32) -> i32 { return c1(x); }\n"
			"fn c1(x: i32) -> i32 { return a1(x); }\n"
			"kernel k(n: i32) grid(1) threads(1) { }", false);
	assert_true(unit_has_error(cx, E_RECURSION));
	ctx_destroy(cx);
}

static void test_sema_mma_wait_zero_releases_every_accumulator(void **state)
{
	(void)state;
	/* wgmma.wait_group 0 finishes every group in flight: after waiting on b,
	 * a may be read too (a wait of 1 would not release it: a's group is the
	 * newest) */
	const char *body = "kernel k(n: i32) grid(1) threads(128) {\n"
			   "  shared As: bf16[64, 64] swizzle(128);\n  shared Xs: f32[64, 64];\n"
			   "  role r = warpgroup(0) {\n"
			   "    frag a: f32[64, 64] = 0.0;\n    frag b: f32[64, 64] = 0.0;\n"
			   "    mma_async(b, As, transpose(As));\n    mma_async(a, As, transpose(As));\n"
			   "    mma_wait(b, %d);\n    frag_store(Xs, a);\n  }\n}";
	char src[1024];
	snprintf(src, sizeof src, body, 0);
	ctx_destroy(check(src, true));
	snprintf(src, sizeof src, body, 1);
	Ctx *cx = check(src, false);
	assert_true(unit_has_error(cx, E_FRAG_PENDING));
	ctx_destroy(cx);
}

static void test_sema_mma_wait_n_releases_older_groups(void **state)
{
	(void)state;
	/* wgmma.wait_group 1 after a's group and then b's: a's has finished (a
	 * may be read), b's may not have (b may not) */
	const char *body = "kernel k(n: i32) grid(1) threads(128) {\n"
			   "  shared As: bf16[64, 64] swizzle(128);\n  shared Xs: f32[64, 64];\n"
			   "  role r = warpgroup(0) {\n"
			   "    frag a: f32[64, 64] = 0.0;\n    frag b: f32[64, 64] = 0.0;\n"
			   "    mma_async(a, As, transpose(As));\n    mma_async(b, As, transpose(As));\n"
			   "    mma_wait(a, 1);\n    frag_store(Xs, %s);\n  }\n}";
	char src[1024];
	snprintf(src, sizeof src, body, "a");
	ctx_destroy(check(src, true));
	snprintf(src, sizeof src, body, "b");
	Ctx *cx = check(src, false);
	assert_true(unit_has_error(cx, E_FRAG_PENDING));
	ctx_destroy(cx);
}

static void test_sema_sync_mma_operand_still_pending(void **state)
{
	(void)state;
	/* mma (not _async) waits for every group only after it is issued: its
	 * register operand may not come from an accumulator still in flight */
	Ctx *cx = check("kernel k(n: i32) grid(1) threads(128) {\n"
			"  shared As: bf16[64, 64] swizzle(128);\n"
			"  role r = warpgroup(0) {\n"
			"    frag a: f32[64, 64] = 0.0;\n    frag b: f32[64, 64] = 0.0;\n"
			"    mma_async(a, As, transpose(As));\n"
			"    mma(b, cast<bf16>(a), transpose(As));\n  }\n}", false);
	assert_true(unit_has_error(cx, E_FRAG_PENDING));
	ctx_destroy(cx);
}

static void test_sema_rs_loop_wants_its_own_group_waited(void **state)
{
	(void)state;
	/* In a loop, an RS group finished by a wait of 1 (a newer SS group into
	 * the same accumulator still in flight) is fine; with the RS group the
	 * newest one, that wait leaves it in flight: an error */
	const char *body = "kernel k(n: i32) grid(1) threads(128) {\n"
			   "  shared As: bf16[64, 64] swizzle(128);\n"
			   "  role r = warpgroup(0) {\n"
			   "    frag acc: f32[64, 64] = 0.0;\n"
			   "    for i in 0 .. n {\n"
			   "      let a = cast<bf16>(acc);\n"
			   "      %s\n"
			   "    }\n    mma_wait(acc, 0);\n  }\n}";
	char src[1024];
	snprintf(src, sizeof src, body,
		 "mma_async(acc, a, transpose(As)); mma_async(acc, As, transpose(As)); mma_wait(acc, 1);");
	ctx_destroy(check(src, true));
	snprintf(src, sizeof src, body,
		 "mma_async(acc, As, transpose(As)); mma_async(acc, a, transpose(As)); mma_wait(acc, 1);");
	Ctx *cx = check(src, false);
	assert_true(unit_has_error(cx, E_MMA_RS_LOOP));
	ctx_destroy(cx);
}

/* The warnings of one id in cx, with the location of the last. */
static int warnings(Ctx *cx, DiagId id, Loc *at)
{
	int n = 0;
	for (int i = 0; i < cx->ndiags; i++)
		if (cx->diags[i].sev == SEV_WARNING && cx->diags[i].id == id) {
			n++;
			*at = cx->diags[i].loc;
		}
	return n;
}

/* A consumer of a hand-written ring whose loop body is `body` (stage s of As). */
static const char *const ring_kernel =
	"kernel k(A: tma bf16[M, K] box(64, 64) swizzle(128), C: global f32[M, 64], M: i32, K: i32)\n"
	"  grid(1) threads(256)\n{\n"
	"  shared As: bf16[2, 64, 64] swizzle(128);\n"
	"  mbarrier full[2](1);\n  mbarrier empty[2](128);\n"
	"  role producer = warpgroup(0) {\n    if elect_one() {\n"
	"      for k in 0 .. cdiv(K, 64) {\n        let s = k %% 2;\n"
	"        wait(empty[s], ((k / 2) & 1) ^ 1);\n        arrive_expect(full[s], As[s]);\n"
	"        tma_load(As[s], A[0 +: 64, k * 64 +: 64], full[s]);\n      }\n    }\n  }\n"
	"  role consumer = warpgroup(1) {\n    frag acc: f32[64, 64] = 0.0;\n"
	"    for k in 0 .. cdiv(K, 64) {\n      let s = k %% 2;\n      wait(full[s], (k / 2) & 1);\n"
	"%s"
	"    }\n    mma_wait(acc, 0);\n    frag_store(C[0 +: 64, :], acc);\n  }\n}\n";

static void test_sema_warns_stage_released_in_flight(void **state)
{
	(void)state;
	char src[2048];
	Loc at = {0};
	/* released right after the mma_async reading it: a warning at the arrive (line 23) */
	snprintf(src, sizeof src, ring_kernel,
		 "      mma_async(acc, As[s], transpose(As[s]));\n      arrive(empty[s]);\n");
	Ctx *cx = check(src, true);
	assert_int_equal(warnings(cx, W_MMA_STAGE_RELEASE, &at), 1);
	assert_int_equal(at.line, 23);
	assert_int_equal(at.col, 7);
	ctx_destroy(cx);
	/* a wait of 1 leaves this step's group reading As[s] in flight: still a warning */
	snprintf(src, sizeof src, ring_kernel,
		 "      mma_async(acc, As[s], transpose(As[s]));\n      mma_wait(acc, 1);\n"
		 "      arrive(empty[s]);\n");
	cx = check(src, true);
	assert_int_equal(warnings(cx, W_MMA_STAGE_RELEASE, &at), 1);
	ctx_destroy(cx);
	/* waited for, or the previous stage released after a wait of 1: no warning */
	snprintf(src, sizeof src, ring_kernel,
		 "      mma_async(acc, As[s], transpose(As[s]));\n      mma_wait(acc, 0);\n"
		 "      arrive(empty[s]);\n");
	cx = check(src, true);
	assert_int_equal(warnings(cx, W_MMA_STAGE_RELEASE, &at), 0);
	ctx_destroy(cx);
	snprintf(src, sizeof src, ring_kernel,
		 "      mma_async(acc, As[s], transpose(As[s]));\n      mma_wait(acc, 1);\n"
		 "      if k > 0 {\n        arrive(empty[(k - 1) % 2]);\n      }\n");
	cx = check(src, true);
	assert_int_equal(warnings(cx, W_MMA_STAGE_RELEASE, &at), 0);
	ctx_destroy(cx);
}

static void test_sema_pipelined_mma_async_releases_after_wait(void **state)
{
	(void)state;
	/* the easy path with mma_async: accepted, and its own releases raise no warning */
	Ctx *cx = check(
		"kernel k(A: tma bf16[M, K] box(64, 64) swizzle(128), C: global f32[M, 64], M: i32, K: i32)\n"
		"  grid(1) threads(128)\n{\n  frag acc: f32[64, 64] = 0.0;\n"
		"  for k in 0 .. cdiv(K, 64) pipeline(2) {\n"
		"    let a = load(A[0 +: 64, k * 64 +: 64]);\n"
		"    mma_async(acc, a, transpose(a));\n  }\n"
		"  mma_wait(acc, 0);\n  frag_store(C[0 +: 64, :], acc);\n}\n", true);
	Loc at;
	assert_int_equal(warnings(cx, W_MMA_STAGE_RELEASE, &at), 0);
	ctx_destroy(cx);
}

static void test_sema_second_pipelined_loop_notes_the_first(void **state)
{
	(void)state;
	Ctx *cx = check(
		"kernel k(A: tma bf16[M, K] box(64, 64) swizzle(128), M: i32, K: i32) grid(1) threads(128) {\n"
		"  for i in 0 .. K pipeline(2) {\n    let a = load(A[0 +: 64, i * 64 +: 64]);\n  }\n"
		"  for j in 0 .. K pipeline(2) {\n    let b = load(A[0 +: 64, j * 64 +: 64]);\n  }\n}\n",
		false);
	assert_int_equal(cx->nerrors, 1);
	assert_int_equal(cx->ndiags, 2);
	assert_int_equal(cx->diags[0].loc.line, 5);
	assert_int_equal(cx->diags[1].sev, SEV_NOTE);
	assert_int_equal(cx->diags[1].loc.line, 2);
	ctx_destroy(cx);
}

static Node *find_fn(Ctx *cx, const char *name)
{
	for (Node *it = cx->files[0]->items; it; it = it->next)
		if ((it->kind == N_FN || it->kind == N_KERNEL) && !strcmp(it->name, name))
			return it;
	fail();
	return NULL;
}

/* The kernel statement of kind `kind` named `name` (NULL: the first of that kind). */
static Node *find_stmt(Node *kernel, NodeKind kind, const char *name)
{
	for (Node *st = kernel->b->list; st; st = st->next)
		if (st->kind == kind && (!name || !strcmp(st->name, name)))
			return st;
	fail();
	return NULL;
}

/* A helper is a tile helper through its signature, its body's warpgroup
 * operations, or a call of another tile helper; scalar helpers stay calls. */
static void test_sema_marks_tile_helpers(void **state)
{
	(void)state;
	Ctx *cx = check("fn twice(x: f32) -> f32 { return 2.0 * x; }\n"
			"fn by_ref(t: shared f32) { t[0] = 1.0; }\n"
			"fn wg() -> i32 { return wg_rank; }\n"
			"fn via(t: i32) { let r = wg(); }\n"
			KERNEL_HEAD "  let y = twice(a[0]);\n}\n", true);
	assert_false(find_fn(cx, "twice")->sym->tile_helper);
	assert_true(find_fn(cx, "by_ref")->sym->tile_helper);
	assert_true(find_fn(cx, "wg")->sym->tile_helper);
	assert_true(find_fn(cx, "via")->sym->tile_helper);
	ctx_destroy(cx);
}

/* A void helper may end in 'return;'; 'return x;' there is a type error, not an early return. */
static void test_sema_helper_trailing_return(void **state)
{
	(void)state;
	Ctx *cx = check("fn put(t: shared f32[64]) {\n  t[0] = 1.0;\n  return;\n}\n"
			KERNEL_HEAD "  shared T: f32[64];\n  put(T);\n}\n", true);
	ctx_destroy(cx);
	cx = check("fn put(t: shared f32[64]) {\n  t[0] = 1.0;\n  return 2;\n}\n"
		   KERNEL_HEAD "  shared T: f32[64];\n  put(T);\n}\n", false);
	assert_true(unit_has_error(cx, E_RETURN_TYPE));
	assert_false(unit_has_error(cx, E_HELPER_RETURN));
	ctx_destroy(cx);
}

/* The call keeps the checked copy of the body and its result; the helper's
 * names resolve to the caller's symbols and to fresh locals per call. */
static void test_sema_inlines_tile_helper_calls(void **state)
{
	(void)state;
	Ctx *cx = check("fn put(t: shared f32[64], i: i32, v: f32) -> f32 {\n"
			"  let old = t[i];\n  t[i] = v;\n  return old;\n}\n"
			KERNEL_HEAD "  shared T: f32[2, 64];\n"
			"  let x = put(T[1], 3, 1.0);\n  let y = put(T[0], thread_id.x, x);\n}\n", true);
	Node *k = find_fn(cx, "k");
	Node *x = k->b->list->next, *y = x->next;
	Node *cx_call = x->b, *cy_call = y->b;
	assert_int_equal(cx_call->kind, N_CALL);
	assert_non_null(cx_call->b);
	assert_non_null(cx_call->c);
	assert_int_equal(cx_call->ty.dt, DT_F32);
	/* constant arguments bind as constants; the others as hidden lets */
	Node *old1 = cx_call->b->list, *second = cy_call->b->list;
	assert_string_equal(second->name, "i");
	assert_string_equal(second->next->name, "v");
	/* 'old' is a new symbol in each copy; both read T */
	Node *old2 = second->next->next;
	assert_string_equal(old1->name, "old");
	assert_string_equal(old2->name, "old");
	assert_ptr_not_equal(old1->sym, old2->sym);
	assert_ptr_equal(old1->b->a->sym, old2->b->a->sym);
	assert_string_equal(old1->b->a->sym->name, "T");
	assert_false(x->sym->varying);
	assert_true(y->sym->varying); /* the value written back depends on thread_id */
	ctx_destroy(cx);
}

/* A binding of the kernel's body by name. */
static Symbol *binding(Node *k, const char *name)
{
	for (Node *st = k->b->list; st; st = st->next)
		if ((st->kind == N_LET || st->kind == N_VAR) && !strcmp(st->name, name))
			return st->sym;
	fail();
	return NULL;
}

/* How much a value varies between threads: warp_id between warps, lane_id between lanes, an
 * expression as its most varying operand, and a variable assigned (= or op=) under a branch at
 * least as the branch's condition, whatever the value assigned. */
static void test_sema_vary_levels(void **state)
{
	(void)state;
	Ctx *cx = check(KERNEL_HEAD
			"  let u = n * 2;\n  let w = warp_id * 16 + u;\n  let l = w + lane_id;\n"
			"  var bw: i32 = 0;\n  if warp_id < 2 {\n    bw = 1;\n  }\n"
			"  var bl: i32 = 0;\n  if lane_id == 0 {\n    bl = u;\n  }\n"
			"  var aw: i32 = 0;\n  aw += w;\n"
			"  var al: i32 = 0;\n  if l > 3 {\n    al += 1;\n  }\n}\n", true);
	Node *k = find_fn(cx, "k");
	assert_int_equal(binding(k, "u")->varying, VARY_NONE);
	assert_int_equal(binding(k, "w")->varying, VARY_WARP);
	assert_int_equal(binding(k, "l")->varying, VARY_LANE);
	assert_int_equal(binding(k, "bw")->varying, VARY_WARP);
	assert_int_equal(binding(k, "bl")->varying, VARY_LANE);
	assert_int_equal(binding(k, "aw")->varying, VARY_WARP);
	assert_int_equal(binding(k, "al")->varying, VARY_LANE);
	ctx_destroy(cx);
}

/* frag_load(transpose(t)) of rows [K, 64] of a 16-bit tile is an f32 fragment [64, K] */
static void test_sema_frag_load_transposed_shape(void **state)
{
	(void)state;
	Ctx *cx = check("kernel k() grid(1) threads(128) {\n"
			"  shared B: bf16[2, 64, 64] swizzle(128);\n"
			"  role all = warpgroup(0) {\n"
			"    let t = frag_load(transpose(B[1, 16 +: 32, :]));\n"
			"    let u = frag_load(transpose(B[0]));\n  }\n}\n", true);
	Node *role = find_stmt(find_fn(cx, "k"), N_ROLE, NULL);
	int64_t want[2] = {32, 64};
	int i = 0;
	for (Node *st = role->d->list; st; st = st->next, i++) {
		const Type *t = &st->sym->ty;
		assert_int_equal(t->space, SP_FRAG);
		assert_int_equal(t->dt, DT_F32);
		assert_int_equal(t->rank, 2);
		assert_int_equal(t->dims[0].value, 64);
		assert_int_equal(t->dims[1].value, want[i]);
	}
	assert_int_equal(i, 2);
	ctx_destroy(cx);
}

/* A tf32 tile is 4 bytes an element; frag_load reads it as an f32 fragment, and an f32
 * fragment with a tf32 B (transposed) is a product. */
static void test_sema_tf32_tile(void **state)
{
	(void)state;
	Ctx *cx = check("kernel k() grid(1) threads(128) {\n"
			"  shared T: tf32[2, 64, 32] swizzle(128);\n"
			"  role all = warpgroup(0) {\n"
			"    frag acc: f32[64, 64] = 0.0;\n"
			"    let a = frag_load(T);\n"
			"    mma(acc, a, transpose(T));\n  }\n}\n", true);
	Node *k = find_fn(cx, "k");
	Node *role = find_stmt(k, N_ROLE, NULL), *tile = find_stmt(k, N_SHARED, "T");
	assert_int_equal(tile->sym->ty.dt, DT_TF32);
	assert_int_equal(tile->sym->ty.swizzle, 128);
	assert_int_equal(dtype_bytes(DT_TF32), 4);
	Node *load = role->d->list->next;
	assert_int_equal(load->sym->ty.space, SP_FRAG);
	assert_int_equal(load->sym->ty.dt, DT_F32);
	assert_int_equal(load->sym->ty.dims[1].value, 64);
	ctx_destroy(cx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sema_folds_constants),
		cmocka_unit_test(test_sema_marks_tile_helpers),
		cmocka_unit_test(test_sema_inlines_tile_helper_calls),
		cmocka_unit_test(test_sema_vary_levels),
		cmocka_unit_test(test_sema_frag_load_transposed_shape),
		cmocka_unit_test(test_sema_tf32_tile),
		cmocka_unit_test(test_sema_helper_trailing_return),
		cmocka_unit_test(test_sema_constants_in_any_order),
		cmocka_unit_test(test_sema_literals_take_context_type),
		cmocka_unit_test(test_sema_strict_mixing),
		cmocka_unit_test(test_sema_one_error_per_mistake),
		cmocka_unit_test(test_sema_scopes_and_shadowing),
		cmocka_unit_test(test_sema_names_resolve_innermost_first),
		cmocka_unit_test(test_sema_many_names_in_one_scope),
		cmocka_unit_test(test_sema_call_in_constant),
		cmocka_unit_test(test_sema_chains_up_to_the_limit),
		cmocka_unit_test(test_sema_symbolic_dims_resolve_to_params),
		cmocka_unit_test(test_sema_helper_calls_and_returns),
		cmocka_unit_test(test_sema_indirect_recursion),
		cmocka_unit_test(test_sema_mma_wait_zero_releases_every_accumulator),
		cmocka_unit_test(test_sema_mma_wait_n_releases_older_groups),
		cmocka_unit_test(test_sema_rs_loop_wants_its_own_group_waited),
		cmocka_unit_test(test_sema_sync_mma_operand_still_pending),
		cmocka_unit_test(test_sema_warns_stage_released_in_flight),
		cmocka_unit_test(test_sema_pipelined_mma_async_releases_after_wait),
		cmocka_unit_test(test_sema_second_pipelined_loop_notes_the_first),
	};
	return cmocka_run_group_tests_name("sema", tests, NULL, NULL);
}
