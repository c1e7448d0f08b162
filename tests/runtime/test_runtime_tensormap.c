/*
 * test_runtime_tensormap.c: the tensor-map plan and its rules (runtime/src/tensormap.c):
 * dim order reversal, row-major and explicit strides, and one case per rule of
 * cuTensorMapEncodeTiled (alignment, strides multiple of 16 and below 2^40, box limits, inner
 * box bytes, swizzle span, rank, element strides, interleave), each reported before any driver.
 */
#include <string.h>

#include "support.h"

/* A tma parameter: dims are literals (outermost first), box outermost first. */
static tile_param tma(tile_dtype t, int rank, const int64_t *dims, const uint32_t *box,
	int swizzle)
{
	tile_param p;

	memset(&p, 0, sizeof p);
	strcpy(p.name, "x");
	p.kind = TILE_PARAM_TMA;
	p.type = t;
	p.rank = rank;
	for (int i = 0; i < rank; i++) {
		p.dims[i].param = -1;
		p.dims[i].value = dims[i];
		p.box[i] = box[i];
	}
	p.swizzle = swizzle;
	return p;
}

static void test_tmap_plan_reverses_dims_and_derives_row_major_strides(void **state)
{
	int64_t dims[3] = {5, 100, 256};
	uint32_t box[3] = {1, 64, 64};
	tile_param p = tma(TILE_BF16, 3, dims, box, 128);
	tile_tmap_args t;
	tile_err e;
	(void)state;

	assert_int_equal(tile_tmap_plan(&p, 0x10000, NULL, NULL, 0, &t, &e), TILE_OK);
	assert_int_equal(t.dtype, TCU_TENSOR_MAP_DATA_TYPE_BFLOAT16);
	assert_int_equal(t.rank, 3);
	assert_int_equal(t.dims[0], 256);
	assert_int_equal(t.dims[1], 100);
	assert_int_equal(t.dims[2], 5);
	assert_int_equal(t.strides[0], 256 * 2);
	assert_int_equal(t.strides[1], 256 * 2 * 100);
	assert_int_equal(t.box[0], 64);
	assert_int_equal(t.box[2], 1);
	assert_int_equal(t.elem_strides[0], 1);
	assert_int_equal(t.elem_strides[2], 1);
	assert_int_equal(t.swizzle, TCU_TENSOR_MAP_SWIZZLE_128B);
	assert_int_equal(t.interleave, TCU_TENSOR_MAP_INTERLEAVE_NONE);
	assert_int_equal(t.l2_promotion, TCU_TENSOR_MAP_L2_PROMOTION_L2_128B);
	assert_int_equal(t.oob_fill, TCU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
}

static void test_tmap_plan_takes_extents_from_scalars_and_explicit_strides(void **state)
{
	int64_t dims[2] = {0, 0};
	uint32_t box[2] = {32, 8};
	tile_param p = tma(TILE_F32, 2, dims, box, 0);
	int64_t scalars[3] = {0, 77, 40};
	uint64_t strides[1] = {256}; /* rows padded to 64 floats */
	tile_tmap_args t;
	tile_err e;
	(void)state;

	p.dims[0].param = 1;
	p.dims[1].param = 2;
	assert_int_equal(tile_tmap_plan(&p, 0x20000, scalars, strides, 1, &t, &e), TILE_OK);
	assert_int_equal(t.dims[0], 40);
	assert_int_equal(t.dims[1], 77);
	assert_int_equal(t.strides[0], 256);
	assert_int_equal(t.dtype, TCU_TENSOR_MAP_DATA_TYPE_FLOAT32);
}

typedef struct rule_case {
	tile_dtype type;
	int rank;
	int64_t dims[5];
	uint32_t box[5];
	int swizzle;
	uint64_t gaddr;
	int nstrides;
	uint64_t strides[4];
	const char *want;
} rule_case;

static const rule_case rules[] = {
	{TILE_F32, 2, {64, 64}, {8, 8}, 0, 0x10008, 0, {0},
	 "global address 0x10008 is not 16-byte"},
	{TILE_BF16, 2, {64, 100}, {8, 8}, 0, 0x10000, 0, {0},
	 "stride of dim 1 (innermost first) is 200 bytes, must be a multiple of 16"},
	{TILE_F32, 2, {64, 64}, {8, 8}, 0, 0x10000, 1, {1000}, "is 1000 bytes, must be a multiple"},
	{TILE_F32, 2, {64, 64}, {8, 8}, 0, 0x10000, 1, {(uint64_t)1 << 40}, "below 2^40"},
	{TILE_F32, 2, {64, 64}, {8, 8}, 0, 0x10000, 2, {256, 256}, "2 strides given, a rank-2"},
	{TILE_F32, 2, {64, 64}, {8, 8}, 0, 0x10000, 1, {0}, "nstrides is 1 but strides is NULL"},
	{TILE_F32, 2, {0, 64}, {8, 8}, 0, 0x10000, 0, {0}, "extent D0 (a literal) is 0"},
	{TILE_F32, 1, {((int64_t)1 << 32) + 1}, {8}, 0, 0x10000, 0, {0}, "must be in [1, 2^32]"},
	{TILE_F32, 2, {64, 64}, {300, 8}, 0, 0x10000, 0, {0}, "box dim 1 (innermost first) is 300"},
	{TILE_F32, 2, {64, 64}, {8, 0}, 0, 0x10000, 0, {0}, "box dim 0 (innermost first) is 0"},
	{TILE_F16, 1, {64}, {4}, 0, 0x10000, 0, {0},
	 "inner box is 8 bytes, must be a multiple of 16"},
	{TILE_F32, 1, {64}, {16}, 32, 0x10000, 0, {0},
	 "inner box is 64 bytes, more than the 32-byte"},
	{TILE_I64, 1, {64}, {16}, 64, 0x10000, 0, {0}, "more than the 64-byte swizzle span"},
};

static void test_tmap_rejects_each_rule_before_the_driver(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++) {
		const rule_case *r = &rules[i];
		tile_param p = tma(r->type, r->rank, r->dims, r->box, r->swizzle);
		tile_tmap_args t;
		tile_err e;
		tile_status st = tile_tmap_plan(&p, r->gaddr, NULL,
			r->nstrides && r->strides[0] ? r->strides : NULL, r->nstrides, &t, &e);
		if (st != TILE_ERR_ARG)
			fail_msg("rule case %zu: status %s, expected TILE_ERR_ARG", i,
				tile_status_str(st));
		assert_error_text(e.msg, r->want);
	}
}

static tile_tmap_args valid_args(void)
{
	tile_tmap_args t;

	memset(&t, 0, sizeof t);
	t.dtype = TCU_TENSOR_MAP_DATA_TYPE_FLOAT32;
	t.rank = 3;
	t.gaddr = 0x40000;
	for (int i = 0; i < 3; i++) {
		t.dims[i] = 64;
		t.box[i] = 8;
		t.elem_strides[i] = 1;
	}
	t.strides[0] = 256;
	t.strides[1] = 256 * 64;
	return t;
}

static void test_tmap_check_rank_element_strides_and_interleave(void **state)
{
	tile_tmap_args t = valid_args();
	tile_err e;
	(void)state;

	assert_int_equal(tile_tmap_check(&t, 4, &e), TILE_OK);
	t.rank = 6;
	assert_int_equal(tile_tmap_check(&t, 4, &e), TILE_ERR_ARG);
	assert_error_text(e.msg, "rank 6, must be in [1, 5]");
	t = valid_args();
	t.elem_strides[1] = 9;
	assert_int_equal(tile_tmap_check(&t, 4, &e), TILE_ERR_ARG);
	assert_error_text(e.msg, "element stride 1 must be in [1, 8]");
	t = valid_args();
	t.interleave = TCU_TENSOR_MAP_INTERLEAVE_32B;
	t.swizzle = TCU_TENSOR_MAP_SWIZZLE_32B;
	t.gaddr = 0x40010; /* 16-aligned, not 32 */
	assert_int_equal(tile_tmap_check(&t, 4, &e), TILE_ERR_ARG);
	assert_error_text(e.msg, "is not 32-byte aligned");
	t.gaddr = 0x40000;
	t.strides[0] = 272; /* multiple of 16, not of 32 */
	assert_int_equal(tile_tmap_check(&t, 4, &e), TILE_ERR_ARG);
	assert_error_text(e.msg, "must be a multiple of 32");
	t.strides[0] = 256;
	t.swizzle = TCU_TENSOR_MAP_SWIZZLE_NONE;
	assert_int_equal(tile_tmap_check(&t, 4, &e), TILE_ERR_ARG);
	assert_error_text(e.msg, "32-byte interleave needs 32-byte swizzle");
	t.swizzle = TCU_TENSOR_MAP_SWIZZLE_32B;
	t.rank = 2;
	assert_int_equal(tile_tmap_check(&t, 4, &e), TILE_ERR_ARG);
	assert_error_text(e.msg, ">= 3 when interleaved");
}

static void test_tmap_recipe_errors_are_metadata_errors(void **state)
{
	int64_t dims[1] = {64};
	uint32_t box[1] = {512};
	tile_param p = tma(TILE_F32, 1, dims, box, 0);
	tile_err e;
	(void)state;

	assert_int_equal(tile_tmap_recipe_check(&p, &e), TILE_ERR_META);
	p.box[0] = 32;
	p.swizzle = 128;
	assert_int_equal(tile_tmap_recipe_check(&p, &e), TILE_OK);
	p.swizzle = 16;
	assert_int_equal(tile_tmap_recipe_check(&p, &e), TILE_ERR_META);
	assert_error_text(e.msg, "swizzle 16");
	p.swizzle = 0;
	p.rank = 0;
	assert_int_equal(tile_tmap_recipe_check(&p, &e), TILE_ERR_META);
	assert_error_text(e.msg, "tma rank 0");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tmap_plan_reverses_dims_and_derives_row_major_strides),
		cmocka_unit_test(test_tmap_plan_takes_extents_from_scalars_and_explicit_strides),
		cmocka_unit_test(test_tmap_rejects_each_rule_before_the_driver),
		cmocka_unit_test(test_tmap_check_rank_element_strides_and_interleave),
		cmocka_unit_test(test_tmap_recipe_errors_are_metadata_errors),
	};
	return cmocka_run_group_tests_name("runtime_tensormap", tests, NULL, NULL);
}
