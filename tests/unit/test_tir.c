/* test_tir.c: IR construction, the printer, and the verifier catching
 * malformed IR (which lowering never produces, so it is built by hand). */
#include <stdio.h>
#include <stdlib.h>

#include "unit.h"

typedef struct Fixture {
	Ctx *cx;
	TirModule *m;
	TirFunc *f;
} Fixture;

static int setup(void **state)
{
	Fixture *fx = calloc(1, sizeof *fx);
	fx->cx = ctx_create();
	fx->m = tir_module_new(fx->cx);
	fx->f = tir_func_new(fx->cx, fx->m, "k", true);
	for (int i = 0; i < 3; i++) {
		fx->f->grid[i] = ctx_alloc(fx->cx, sizeof(GridExpr));
		fx->f->grid[i]->value = 1;
	}
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	Fixture *fx = *state;
	ctx_destroy(fx->cx);
	free(fx);
	return 0;
}

static Op *add(Fixture *fx, Block *b, OpCode c, DType t, int *args, int n)
{
	Op *op = tir_op_new(fx->cx, c, t, (Loc){0, 1, 1});
	tir_op_set_args(fx->cx, op, args, n);
	if (tir_op_result(c) == 1)
		op->result = tir_new_value(fx->cx, fx->f, t);
	tir_block_append(fx->cx, b, op);
	return op;
}

static void test_tir_verify_accepts_well_formed(void **state)
{
	Fixture *fx = *state;
	int a = add(fx, fx->f->body, OP_CONST, DT_I32, NULL, 0)->result;
	int args[2] = {a, a};
	add(fx, fx->f->body, OP_ADD, DT_I32, args, 2);
	assert_true(tir_verify(fx->cx, fx->m));
	assert_false(fx->cx->internal_error);
}

static void test_tir_verify_rejects_use_before_def(void **state)
{
	Fixture *fx = *state;
	int later = tir_new_value(fx->cx, fx->f, DT_I32);
	int args[2] = {later, later};
	add(fx, fx->f->body, OP_ADD, DT_I32, args, 2);
	assert_false(tir_verify(fx->cx, fx->m));
	assert_non_null(strstr(fx->cx->internal_msg, "before its definition"));
}

static void test_tir_verify_rejects_escaping_value(void **state)
{
	Fixture *fx = *state;
	int c = add(fx, fx->f->body, OP_CONST, DT_BOOL, NULL, 0)->result;
	Op *iff = add(fx, fx->f->body, OP_IF, DT_VOID, &c, 1);
	iff->blocks[0] = tir_block_new(fx->cx);
	int inner = add(fx, iff->blocks[0], OP_CONST, DT_I32, NULL, 0)->result;
	int args[2] = {inner, inner};
	add(fx, fx->f->body, OP_MUL, DT_I32, args, 2); /* outside the if */
	assert_false(tir_verify(fx->cx, fx->m));
}

static void test_tir_verify_rejects_type_mismatch(void **state)
{
	Fixture *fx = *state;
	int a = add(fx, fx->f->body, OP_CONST, DT_I32, NULL, 0)->result;
	int b = add(fx, fx->f->body, OP_CONST, DT_F32, NULL, 0)->result;
	int args[2] = {a, b};
	add(fx, fx->f->body, OP_ADD, DT_I32, args, 2);
	assert_false(tir_verify(fx->cx, fx->m));
	assert_non_null(strstr(fx->cx->internal_msg, "operand types"));
}

static void test_tir_verify_rejects_break_outside_loop(void **state)
{
	Fixture *fx = *state;
	add(fx, fx->f->body, OP_BREAK, DT_VOID, NULL, 0);
	assert_false(tir_verify(fx->cx, fx->m));
}

static void test_tir_verify_rejects_wrong_arity(void **state)
{
	Fixture *fx = *state;
	int a = add(fx, fx->f->body, OP_CONST, DT_I32, NULL, 0)->result;
	add(fx, fx->f->body, OP_NEG, DT_I32, (int[]){a, a}, 2);
	assert_false(tir_verify(fx->cx, fx->m));
	assert_non_null(strstr(fx->cx->internal_msg, "number of operands"));
}

static void test_tir_printer_format(void **state)
{
	Fixture *fx = *state;
	Op *c = add(fx, fx->f->body, OP_CONST, DT_F32, NULL, 0);
	c->fimm = 0.5;
	Op *s = add(fx, fx->f->body, OP_SREG, DT_I32, NULL, 0);
	s->imm = SREG_TID_X;
	add(fx, fx->f->body, OP_BARRIER, DT_VOID, NULL, 0);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	tir_print_module(fx->cx, f, fx->m);
	fclose(f);
	assert_string_equal(buf, "kernel @k() threads(1, 1, 1) grid(1, 1, 1)\n"
				 "  %0 = const 0.5 : f32\n"
				 "  %1 = sreg tid.x : i32\n"
				 "  bar.sync\n");
	free(buf);
}

static void test_tir_op_table_consistent(void **state)
{
	(void)state;
	/* every op has a name, and region ops are the only ones with blocks */
	for (int c = 0; c < OP_COUNT; c++) {
		assert_non_null(tir_op_name((OpCode)c));
		assert_true(strlen(tir_op_name((OpCode)c)) > 0);
	}
	assert_true(tir_op_flags(OP_IF) & F_REGION);
	assert_true(tir_op_flags(OP_BARRIER) & F_CONV);
	assert_false(tir_op_flags(OP_LD) & F_PURE);
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_tir_verify_accepts_well_formed),
		T(test_tir_verify_rejects_use_before_def),
		T(test_tir_verify_rejects_escaping_value),
		T(test_tir_verify_rejects_type_mismatch),
		T(test_tir_verify_rejects_break_outside_loop),
		T(test_tir_verify_rejects_wrong_arity),
		T(test_tir_printer_format),
		cmocka_unit_test(test_tir_op_table_consistent),
	};
	return cmocka_run_group_tests_name("tir", tests, NULL, NULL);
}
