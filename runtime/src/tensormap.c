/*
 * tensormap.c: turns a `tma` parameter's recipe (metadata) plus the caller's pointer, extents
 * and strides into the exact arguments of cuTensorMapEncodeTiled, and checks every rule of
 * that call first, so a bad tensor is reported by name instead of as CUDA_ERROR_INVALID_VALUE.
 *
 * Order: metadata lists dims outermost first (D0 slowest); the driver wants innermost first
 * (dim 0 contiguous) and rank - 1 byte strides for dims 1..rank-1. tile_tmap_plan reverses.
 *
 * Rules (CUDA driver API, cuTensorMapEncodeTiled; hopper.md B.4): rank 1..5; global address
 * 16-byte aligned (32 with 32-byte interleave); every global dim in [1, 2^32]; every stride a
 * multiple of 16 (32 with 32-byte interleave) and below 2^40; box dims in [1, 256]; inner box
 * bytes a multiple of 16 without interleave, and at most the swizzle span (32/64/128 B) when
 * swizzled; element strides in [1, 8] (we always pass 1); 32-byte interleave needs 32-byte
 * swizzle. Recipe errors are TILE_ERR_META, errors of the caller's tensor TILE_ERR_ARG.
 */
#include <inttypes.h>
#include <string.h>

#include "internal.h"

static const uint64_t dim_max = (uint64_t)1 << 32;
static const uint64_t stride_limit = (uint64_t)1 << 40;

static int cu_dtype(tile_dtype t)
{
	switch (t) {
	case TILE_F32: return TCU_TENSOR_MAP_DATA_TYPE_FLOAT32;
	case TILE_F16: return TCU_TENSOR_MAP_DATA_TYPE_FLOAT16;
	case TILE_BF16: return TCU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
	case TILE_I32: return TCU_TENSOR_MAP_DATA_TYPE_INT32;
	case TILE_I64: return TCU_TENSOR_MAP_DATA_TYPE_INT64;
	}
	return -1;
}

static int cu_swizzle(int bytes)
{
	switch (bytes) {
	case 32: return TCU_TENSOR_MAP_SWIZZLE_32B;
	case 64: return TCU_TENSOR_MAP_SWIZZLE_64B;
	case 128: return TCU_TENSOR_MAP_SWIZZLE_128B;
	default: return TCU_TENSOR_MAP_SWIZZLE_NONE;
	}
}

static uint32_t swizzle_span(int cu)
{
	switch (cu) {
	case TCU_TENSOR_MAP_SWIZZLE_32B: return 32;
	case TCU_TENSOR_MAP_SWIZZLE_64B: return 64;
	case TCU_TENSOR_MAP_SWIZZLE_128B: return 128;
	default: return 0;
	}
}

/* Box rules, shared by the recipe check (metadata) and the full check (driver arguments). */
static tile_status check_box(const uint32_t *box, int rank, size_t esize, int swizzle_cu,
	bool interleaved, tile_status st, tile_err *e)
{
	uint64_t inner = (uint64_t)box[0] * esize;
	uint32_t span = swizzle_span(swizzle_cu);

	for (int i = 0; i < rank; i++)
		if (box[i] < 1 || box[i] > 256)
			return tile_err_set(e, st, "box dim %d (innermost first) is %" PRIu32
				", must be in [1, 256]", i, box[i]);
	if (!interleaved && inner % 16 != 0)
		return tile_err_set(e, st,
			"inner box is %" PRIu64 " bytes, must be a multiple of 16", inner);
	if (!interleaved && span && inner > span)
		return tile_err_set(e, st, "inner box is %" PRIu64 " bytes, more than the %" PRIu32
			"-byte swizzle span", inner, span);
	return TILE_OK;
}

tile_status tile_tmap_recipe_check(const tile_param *p, tile_err *e)
{
	uint32_t box[TILE_TMA_MAX_RANK];

	if (p->rank < 1 || p->rank > TILE_TMA_MAX_RANK)
		return tile_err_set(e, TILE_ERR_META, "tma rank %d, must be in [1, 5]", p->rank);
	if (p->swizzle != 0 && p->swizzle != 32 && p->swizzle != 64 && p->swizzle != 128)
		return tile_err_set(e, TILE_ERR_META, "swizzle %d, must be none, 32, 64 or 128",
			p->swizzle);
	for (int i = 0; i < p->rank; i++)
		box[i] = p->box[p->rank - 1 - i];
	return check_box(box, p->rank, tile_dtype_size(p->type), cu_swizzle(p->swizzle), false,
		TILE_ERR_META, e);
}

tile_status tile_tmap_check(const tile_tmap_args *t, size_t esize, tile_err *e)
{
	bool il32 = t->interleave == TCU_TENSOR_MAP_INTERLEAVE_32B;
	uint64_t align = il32 ? 32 : 16;

	if (t->rank < 1 || t->rank > TILE_TMA_MAX_RANK || (t->interleave && t->rank < 3))
		return tile_err_set(e, TILE_ERR_ARG,
			"rank %" PRIu32 ", must be in [1, 5] (>= 3 when interleaved)", t->rank);
	if (t->gaddr % align != 0)
		return tile_err_set(e, TILE_ERR_ARG,
			"global address 0x%" PRIx64 " is not %" PRIu64 "-byte aligned", t->gaddr,
			align);
	for (uint32_t i = 0; i < t->rank; i++)
		if (t->dims[i] < 1 || t->dims[i] > dim_max)
			return tile_err_set(e, TILE_ERR_ARG, "dim %" PRIu32 " (innermost first) "
				"is %" PRIu64 ", must be in [1, 2^32]", i, t->dims[i]);
	for (uint32_t i = 0; i + 1 < t->rank; i++)
		if (t->strides[i] % align != 0 || t->strides[i] >= stride_limit)
			return tile_err_set(e, TILE_ERR_ARG, "stride of dim %" PRIu32
				" (innermost first) is %" PRIu64 " bytes, must be a multiple of %"
				PRIu64 " and below 2^40", i + 1, t->strides[i], align);
	for (uint32_t i = 0; i < t->rank; i++)
		if (t->elem_strides[i] < 1 || t->elem_strides[i] > 8)
			return tile_err_set(e, TILE_ERR_ARG,
				"element stride %" PRIu32 " must be in [1, 8]", i);
	if (il32 && t->swizzle != TCU_TENSOR_MAP_SWIZZLE_32B)
		return tile_err_set(e, TILE_ERR_ARG, "32-byte interleave needs 32-byte swizzle");
	return check_box(t->box, (int)t->rank, esize, t->swizzle, t->interleave != 0,
		TILE_ERR_ARG, e);
}

static tile_status extent(const tile_param *p, int i, const int64_t *scalars, uint64_t *out,
	tile_err *e)
{
	const tile_dim *d = &p->dims[i];
	int64_t v = d->param >= 0 ? scalars[d->param] : d->value;

	if (v < 1 || (uint64_t)v > dim_max)
		return tile_err_set(e, TILE_ERR_ARG, "extent D%d (%s) is %" PRId64
			", must be in [1, 2^32]", i,
			d->param >= 0 ? "a scalar argument" : "a literal", v);
	*out = (uint64_t)v;
	return TILE_OK;
}

static tile_status plan_strides(const tile_param *p, const uint64_t *strides, int nstrides,
	tile_tmap_args *t, tile_err *e)
{
	int r = p->rank;
	uint64_t s = tile_dtype_size(p->type);

	if (strides) {
		if (nstrides != r - 1)
			return tile_err_set(e, TILE_ERR_ARG, "%d strides given, a rank-%d tensor "
				"takes %d (outermost first, the innermost dim is contiguous)",
				nstrides, r, r - 1);
		for (int i = 1; i < r; i++)
			t->strides[i - 1] = strides[r - 1 - i];
		return TILE_OK;
	}
	if (nstrides != 0)
		return tile_err_set(e, TILE_ERR_ARG, "nstrides is %d but strides is NULL",
			nstrides);
	for (int i = 1; i < r; i++) {
		if (__builtin_mul_overflow(s, t->dims[i - 1], &s))
			return tile_err_set(e, TILE_ERR_ARG, "row-major strides overflow");
		t->strides[i - 1] = s;
	}
	return TILE_OK;
}

tile_status tile_tmap_plan(const tile_param *p, uint64_t gaddr, const int64_t *scalars,
	const uint64_t *strides, int nstrides, tile_tmap_args *out, tile_err *e)
{
	int r = p->rank;
	tile_status st;

	memset(out, 0, sizeof *out);
	out->dtype = cu_dtype(p->type);
	out->rank = (uint32_t)r;
	out->gaddr = gaddr;
	for (int i = 0; i < r; i++) {
		if ((st = extent(p, r - 1 - i, scalars, &out->dims[i], e)))
			return st;
		out->box[i] = p->box[r - 1 - i];
		out->elem_strides[i] = 1;
	}
	if ((st = plan_strides(p, strides, nstrides, out, e)))
		return st;
	out->interleave = TCU_TENSOR_MAP_INTERLEAVE_NONE;
	out->swizzle = cu_swizzle(p->swizzle);
	out->l2_promotion = TCU_TENSOR_MAP_L2_PROMOTION_L2_128B;
	out->oob_fill = TCU_TENSOR_MAP_FLOAT_OOB_FILL_NONE;
	return tile_tmap_check(out, tile_dtype_size(p->type), e);
}
