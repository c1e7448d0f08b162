/* test_lexer.c: the scanner: tokens, locations, literals and lexical errors. */
#include <stdio.h>
#include <stdlib.h>

#include "unit.h"

static char *dump(Ctx *cx, bool *ok)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	*ok = lex_dump(cx, 0, f);
	fclose(f);
	return buf;
}

static void test_lexer_tokens_and_locations(void **state)
{
	(void)state;
	Ctx *cx = unit_ctx("let x = 1 .. n;\n  a += 0x1F;");
	bool ok;
	char *s = dump(cx, &ok);
	assert_true(ok);
	assert_string_equal(s, "1:1 let\n1:5 identifier 'x'\n1:7 '='\n1:9 integer 1\n"
			       "1:11 ..\n1:14 identifier 'n'\n1:15 ';'\n2:3 identifier 'a'\n"
			       "2:5 compound assignment\n2:8 integer 31\n2:12 ';'\n");
	free(s);
	ctx_destroy(cx);
}

static void test_lexer_float_forms(void **state)
{
	(void)state;
	Ctx *cx = unit_ctx("1.5 2e3 1.25e-2 7");
	bool ok;
	char *s = dump(cx, &ok);
	assert_true(ok);
	assert_string_equal(s, "1:1 float 1.5\n1:5 float 2000\n1:9 float 0.0125\n"
			       "1:17 integer 7\n");
	free(s);
	ctx_destroy(cx);
}

static void test_lexer_comments_skipped(void **state)
{
	(void)state;
	Ctx *cx = unit_ctx("// line\n/* block\n comment */ kernel");
	bool ok;
	char *s = dump(cx, &ok);
	assert_true(ok);
	assert_string_equal(s, "3:13 kernel\n");
	free(s);
	ctx_destroy(cx);
}

static void test_lexer_reports_every_bad_char(void **state)
{
	(void)state;
	Ctx *cx = unit_ctx("a $ b # c");
	bool ok;
	char *s = dump(cx, &ok);
	assert_false(ok);
	assert_int_equal(cx->nerrors, 2);
	assert_int_equal(cx->diags[0].loc.col, 3);
	assert_int_equal(cx->diags[1].loc.col, 7);
	assert_true(unit_has_error(cx, E_BAD_CHAR));
	free(s);
	ctx_destroy(cx);
}

static void test_lexer_int_overflow(void **state)
{
	(void)state;
	Ctx *cx = unit_ctx("9223372036854775807 9223372036854775808");
	bool ok;
	char *s = dump(cx, &ok);
	assert_false(ok);
	assert_int_equal(cx->nerrors, 1);
	assert_int_equal(cx->diags[0].loc.col, 21);
	free(s);
	ctx_destroy(cx);
}

static void test_lexer_tab_and_utf8_columns(void **state)
{
	(void)state;
	/* columns count bytes; the caret printer expands tabs */
	Ctx *cx = unit_ctx("\tx");
	bool ok;
	char *s = dump(cx, &ok);
	assert_string_equal(s, "1:2 identifier 'x'\n");
	free(s);
	ctx_destroy(cx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lexer_tokens_and_locations),
		cmocka_unit_test(test_lexer_float_forms),
		cmocka_unit_test(test_lexer_comments_skipped),
		cmocka_unit_test(test_lexer_reports_every_bad_char),
		cmocka_unit_test(test_lexer_int_overflow),
		cmocka_unit_test(test_lexer_tab_and_utf8_columns),
	};
	return cmocka_run_group_tests_name("lexer", tests, NULL, NULL);
}
