/* test_parser.c: the grammar: AST shapes, precedence, recovery. */
#include <stdio.h>
#include <stdlib.h>

#include "unit.h"

static char *ast_of(const char *src, bool *ok)
{
	Ctx *cx = unit_ctx(src);
	*ok = parse_file(cx, 0);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	ast_print(cx, f, cx->files[0]->items);
	fclose(f);
	ctx_destroy(cx);
	return buf;
}

static void test_parser_precedence(void **state)
{
	(void)state;
	bool ok;
	char *s = ast_of("const C = 1 + 2 * 3 << 1 < 4 && true;", &ok);
	assert_true(ok);
	/* && binds loosest, then <, then <<, then +, then * */
	assert_string_equal(s,
		"const C @1:7\n"
		"  binary '&&' @1:30\n"
		"    binary '<' @1:26\n"
		"      binary '<<' @1:21\n"
		"        binary '+' @1:13\n"
		"          int 1 @1:11\n"
		"          binary '*' @1:17\n"
		"            int 2 @1:15\n"
		"            int 3 @1:19\n"
		"        int 1 @1:24\n"
		"      int 4 @1:28\n"
		"    bool true @1:33\n");
	free(s);
}

static void test_parser_kernel_shape(void **state)
{
	(void)state;
	bool ok;
	char *s = ast_of("kernel k(a: global f32[n, 4], n: i32) grid(n) threads(32, 2) {\n"
			 "  for i in 0 .. n step 2 { a[i, 0] += cast<f32>(i); }\n}", &ok);
	assert_true(ok);
	assert_non_null(strstr(s, "kernel k @1:8\n  param a @1:10\n    type global f32 @1:20\n"));
	assert_non_null(strstr(s, "  launch grid @1:39\n"));
	assert_non_null(strstr(s, "  launch threads @1:47\n"));
	assert_non_null(strstr(s, "for i @2:3\n"));
	assert_non_null(strstr(s, "assign '+=' @2:36\n"));
	assert_non_null(strstr(s, "cast f32 @2:39\n"));
	free(s);
}

static void test_parser_shared_overlay(void **state)
{
	(void)state;
	bool ok;
	char *s = ast_of("kernel k(n: i32) grid(1) threads(32) {\n  shared a: f32[4];\n"
			 "  shared b: bf16[8] overlay(a);\n}", &ok);
	assert_true(ok);
	/* the base array's name is the declaration's second child */
	assert_non_null(strstr(s, "    shared b @3:10\n      type bf16 @3:13\n        int 8 @3:18\n"
				  "      ident a @3:29\n"));
	free(s);
}

static void test_parser_else_if_chain(void **state)
{
	(void)state;
	bool ok;
	char *s = ast_of("fn f(x: i32) -> i32 { if x < 0 { return 0; } else if x < 9 { return 1; }"
			 " else { return 2; } }", &ok);
	assert_true(ok);
	/* the else branch of the first if is itself an if */
	const char *first = strstr(s, "if @");
	assert_non_null(first);
	assert_non_null(strstr(first + 1, "if @"));
	free(s);
}

static void test_parser_recovers_at_statements(void **state)
{
	(void)state;
	Ctx *cx = unit_ctx("fn f() {\n let = 1;\n let y = ;\n}\nfn g() { }");
	assert_false(parse_file(cx, 0));
	assert_int_equal(cx->nerrors, 2);
	assert_int_equal(cx->diags[0].loc.line, 2);
	assert_int_equal(cx->diags[1].loc.line, 3);
	/* g still parsed after the errors */
	Node *it = cx->files[0]->items;
	while (it && it->next)
		it = it->next;
	assert_non_null(it);
	assert_string_equal(it->name, "g");
	ctx_destroy(cx);
}

static void test_parser_deep_nesting_is_an_error(void **state)
{
	(void)state;
	char src[8192] = "const C = ";
	size_t n = strlen(src);
	for (int i = 0; i < 2000; i++)
		src[n++] = '(';
	src[n] = '\0';
	Ctx *cx = unit_ctx(src);
	assert_false(parse_file(cx, 0));
	assert_true(unit_has_error(cx, E_NESTING_TOO_DEEP));
	ctx_destroy(cx);
}

static void test_parser_many_parses_one_process(void **state)
{
	(void)state;
	/* reentrancy: interleave two contexts */
	Ctx *a = unit_ctx("const A = 1;"), *b = unit_ctx("const B = 2;");
	assert_true(parse_file(a, 0));
	assert_true(parse_file(b, 0));
	assert_string_equal(a->files[0]->items->name, "A");
	assert_string_equal(b->files[0]->items->name, "B");
	ctx_destroy(a);
	ctx_destroy(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parser_precedence),
		cmocka_unit_test(test_parser_kernel_shape),
		cmocka_unit_test(test_parser_else_if_chain),
		cmocka_unit_test(test_parser_recovers_at_statements),
		cmocka_unit_test(test_parser_shared_overlay),
		cmocka_unit_test(test_parser_deep_nesting_is_an_error),
		cmocka_unit_test(test_parser_many_parses_one_process),
	};
	return cmocka_run_group_tests_name("parser", tests, NULL, NULL);
}
