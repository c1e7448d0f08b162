/*
 * launch.c: tile_kernel_launch, from typed arguments to cuLaunchKernel(Ex).
 *
 * Steps, each reported by name before the driver sees anything:
 *   1. the argument count and each argument's kind against the metadata's params;
 *   2. the grid and cluster expressions, evaluated over the integer scalar arguments: the
 *      cluster at most TILE_MAX_CLUSTER CTAs, the grid within the device's limits and each
 *      grid dim a multiple of the cluster's;
 *   3. one tensor map per `tma` parameter (tensormap.c checks every rule, then
 *      cuTensorMapEncodeTiled encodes it into a 128-byte CUtensorMap passed by value);
 *   4. kernelParams: one pointer per parameter, to the value (scalars, device pointers) or to
 *      the tensor map; then cuLaunchKernelEx with a cluster-dimension attribute when the
 *      evaluated cluster shape is other than 1 1 1 and a programmatic-stream-serialization
 *      attribute for TILE_LAUNCH_EARLY_START (tile_kernel_launch_ex), else cuLaunchKernel.
 * tile_kernel_launch_named first checks each argument's name and declared kind against the
 * parameter's (a generated header against the loaded module), then does the same.
 * Everything lives on the stack (no allocation per launch), so a launch is CUDA-graph
 * capturable and cannot fail for lack of host memory.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

typedef union value {
	int32_t i32;
	int64_t i64;
	float f32;
	uint64_t ptr;
} value;

typedef struct plan {
	int64_t scalars[TILE_MAX_PARAMS]; /* integer scalar arguments, for grid and extents */
	value vals[TILE_MAX_PARAMS];
	tcu_tensor_map maps[TILE_MAX_TMA];
	void *params[TILE_MAX_PARAMS];
	int64_t grid[3];
	unsigned int cluster[3];          /* evaluated: the metadata's may depend on scalars */
} plan;

static const char *kind_name(tile_arg_kind kind)
{
	switch (kind) {
	case TILE_ARG_I32: return "i32";
	case TILE_ARG_I64: return "i64";
	case TILE_ARG_F32: return "f32";
	case TILE_ARG_PTR: return "a device pointer";
	}
	return "an invalid kind (a zeroed tile_arg?)";
}

static tile_arg_kind expected_kind(const tile_param *p)
{
	if (p->kind != TILE_PARAM_SCALAR)
		return TILE_ARG_PTR;
	if (p->type == TILE_I32)
		return TILE_ARG_I32;
	return p->type == TILE_I64 ? TILE_ARG_I64 : TILE_ARG_F32;
}

static tile_status arg_error(tile_kernel *k, int i, const char *what, const char *detail)
{
	return tile_err_set(&k->mod->rt->err, TILE_ERR_ARG, "kernel '%s', argument %d ('%s'): %s%s",
		k->meta->name, i, k->meta->params[i].name, what, detail);
}

static tile_status check_arg(tile_kernel *k, int i, const tile_arg *a, plan *pl)
{
	const tile_param *p = &k->meta->params[i];
	tile_arg_kind want = expected_kind(p);

	if (a->kind != want) {
		char detail[96];
		snprintf(detail, sizeof detail, "%s, got %s", kind_name(want), kind_name(a->kind));
		return arg_error(k, i, "expected ", detail);
	}
	if (p->kind != TILE_PARAM_TMA && (a->strides || a->nstrides))
		return arg_error(k, i, "strides are only taken by tma parameters", "");
	memcpy(&pl->vals[i], &a->u, sizeof pl->vals[i]);
	if (a->kind == TILE_ARG_I32)
		pl->scalars[i] = a->u.i32;
	else if (a->kind == TILE_ARG_I64)
		pl->scalars[i] = a->u.i64;
	pl->params[i] = &pl->vals[i];
	return TILE_OK;
}

static tile_status check_args(tile_kernel *k, const tile_arg *args, int nargs, plan *pl)
{
	const tile_kernel_meta *m = k->meta;
	tile_status st;

	if (nargs != m->nparams || (nargs > 0 && !args)) {
		char names[512] = "";
		size_t len = 0;
		for (int i = 0; i < m->nparams && len < sizeof names; i++)
			len += (size_t)snprintf(names + len, sizeof names - len, "%s%s",
				i ? ", " : "", m->params[i].name);
		return tile_err_set(&k->mod->rt->err, TILE_ERR_ARG,
			"kernel '%s' takes %d argument%s (%s), got %d%s", m->name, m->nparams,
			m->nparams == 1 ? "" : "s", names, nargs,
			nargs > 0 && !args ? " and a NULL array" : "");
	}
	for (int i = 0; i < nargs; i++)
		if ((st = check_arg(k, i, &args[i], pl)))
			return st;
	return TILE_OK;
}

static tile_status check_grid(tile_kernel *k, plan *pl)
{
	tile_rt *rt = k->mod->rt;
	const tile_kernel_meta *m = k->meta;
	const unsigned int *c = pl->cluster;
	tile_status st = tile_grid_eval(m, pl->scalars, pl->grid, &rt->err);

	if (!st)
		st = tile_cluster_eval(m, pl->scalars, pl->cluster, &rt->err);
	/* a constant cluster was refused at tile_kernel_get already; an expression is known now */
	if (!st && c[0] * c[1] * c[2] != 1 && rt->lim.cc_major < 9)
		return tile_err_set(&rt->err, TILE_ERR_LAUNCH, "kernel '%s' asks for a %ux%ux%u "
			"cluster; clusters need compute capability 9.0, the device has %d.%d",
			m->name, c[0], c[1], c[2], rt->lim.cc_major, rt->lim.cc_minor);
	for (int d = 0; d < 3 && !st; d++) {
		char text[160], where[192] = "";
		if (pl->grid[d] > rt->lim.max_grid[d])
			return tile_err_set(&rt->err, TILE_ERR_LAUNCH,
				"kernel '%s': grid %c is %" PRId64 ", the device allows %d",
				m->name, "xyz"[d], pl->grid[d], rt->lim.max_grid[d]);
		if (pl->grid[d] % c[d] == 0)
			continue;
		if (m->cluster_expr[d] >= 0) {
			tile_expr_text(m, m->cluster_expr[d], text, sizeof text);
			snprintf(where, sizeof where, " (cluster %c = %s)", "xyz"[d], text);
		}
		return tile_err_set(&rt->err, TILE_ERR_LAUNCH, "kernel '%s': grid %c is %" PRId64
			", not a multiple of the cluster's %u%s", m->name, "xyz"[d], pl->grid[d],
			c[d], where);
	}
	return st;
}

static tile_status encode_map(tile_kernel *k, int i, const tile_arg *a, tcu_tensor_map *map,
	plan *pl)
{
	tile_rt *rt = k->mod->rt;
	const tile_param *p = &k->meta->params[i];
	tile_tmap_args t;
	tile_err why;
	tile_status st = tile_tmap_plan(p, a->u.ptr, pl->scalars, a->strides, a->nstrides, &t,
		&why);

	if (st)
		return tile_err_set(&rt->err, st, "kernel '%s', argument %d ('%s', tma %s[%d]): %s",
			k->meta->name, i, p->name, tile_dtype_name(p->type), p->rank, why.msg);
	st = TILE_CU(rt, cuTensorMapEncodeTiled, (map, t.dtype, t.rank, (void *)(uintptr_t)t.gaddr,
		t.dims, t.strides, t.box, t.elem_strides, t.interleave, t.swizzle, t.l2_promotion,
		t.oob_fill));
	pl->params[i] = map;
	return st;
}

static tile_status encode_maps(tile_kernel *k, const tile_arg *args, plan *pl)
{
	int n = 0;
	tile_status st;

	for (int i = 0; i < k->meta->nparams; i++) {
		if (k->meta->params[i].kind != TILE_PARAM_TMA)
			continue;
		if (n >= TILE_MAX_TMA)
			return tile_err_set(&k->mod->rt->err, TILE_ERR_META,
				"kernel '%s': more than %d tma parameters", k->meta->name,
				TILE_MAX_TMA);
		if ((st = encode_map(k, i, &args[i], &pl->maps[n++], pl)))
			return st;
	}
	return TILE_OK;
}

static tile_status launch(tile_kernel *k, plan *pl, tcu_stream stream, unsigned flags)
{
	tile_rt *rt = k->mod->rt;
	const tile_kernel_meta *m = k->meta;
	const unsigned int *c = pl->cluster;
	tcu_launch_attr attrs[2];
	unsigned int nattrs = 0;
	tcu_launch_config cfg;

	if (c[0] * c[1] * c[2] == 1 && !(flags & TILE_LAUNCH_EARLY_START))
		return TILE_CU(rt, cuLaunchKernel, (k->fn, (unsigned int)pl->grid[0],
			(unsigned int)pl->grid[1], (unsigned int)pl->grid[2], m->threads[0],
			m->threads[1], m->threads[2], m->smem, stream, pl->params, NULL));
	memset(attrs, 0, sizeof attrs);
	if (c[0] * c[1] * c[2] != 1) {
		attrs[nattrs].id = TCU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
		attrs[nattrs].value.cluster_dim.x = c[0];
		attrs[nattrs].value.cluster_dim.y = c[1];
		attrs[nattrs].value.cluster_dim.z = c[2];
		nattrs++;
	}
	if (flags & TILE_LAUNCH_EARLY_START) {
		attrs[nattrs].id = TCU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
		attrs[nattrs].value.programmatic_serialization_allowed = 1;
		nattrs++;
	}
	cfg = (tcu_launch_config){(unsigned int)pl->grid[0], (unsigned int)pl->grid[1],
		(unsigned int)pl->grid[2], m->threads[0], m->threads[1], m->threads[2], m->smem,
		stream, attrs, nattrs};
	return TILE_CU(rt, cuLaunchKernelEx, (&cfg, k->fn, pl->params, NULL));
}

tile_status tile_kernel_launch(tile_kernel *k, const tile_arg *args, int nargs, void *stream)
{
	return tile_kernel_launch_ex(k, args, nargs, stream, 0);
}

tile_status tile_kernel_launch_ex(tile_kernel *k, const tile_arg *args, int nargs, void *stream,
	unsigned flags)
{
	plan pl;
	tile_status st;

	if (!k)
		return TILE_ERR_ARG;
	if (flags & ~(unsigned)TILE_LAUNCH_EARLY_START)
		return tile_err_set(&k->mod->rt->err, TILE_ERR_ARG,
			"kernel '%s': unknown launch flags 0x%x", k->meta->name,
			flags & ~(unsigned)TILE_LAUNCH_EARLY_START);
	memset(pl.scalars, 0, sizeof pl.scalars);
	if ((st = check_args(k, args, nargs, &pl)) || (st = check_grid(k, &pl)) ||
	    (st = tile_ctx_enter(k->mod->rt)))
		return st;
	/* inside the context: the driver refuses to encode a tensor map without a
	 * current context (CUDA_ERROR_INVALID_CONTEXT, seen on driver 580) */
	st = encode_maps(k, args, &pl);
	if (!st)
		st = launch(k, &pl, (tcu_stream)stream, flags);
	tile_ctx_leave(k->mod->rt);
	return st;
}

/* The metadata's word for a parameter's kind, as tilec's typed launch header writes it. */
static const char *param_kind_word(const tile_param *p)
{
	if (p->kind == TILE_PARAM_PTR)
		return "ptr";
	if (p->kind == TILE_PARAM_TMA)
		return "tma";
	return p->type == TILE_I32 ? "i32" : p->type == TILE_I64 ? "i64" : "f32";
}

static tile_status check_named(tile_kernel *k, const tile_named_arg *args, int nargs)
{
	const tile_kernel_meta *m = k->meta;
	tile_err *e = &k->mod->rt->err;

	if (nargs != m->nparams || (nargs > 0 && !args))
		return tile_err_set(e, TILE_ERR_ARG, "kernel '%s' takes %d arguments, the typed "
			"launch passes %d%s (a header from another build?)", m->name, m->nparams,
			nargs, nargs > 0 && !args ? " and a NULL array" : "");
	for (int i = 0; i < nargs; i++) {
		const tile_param *p = &m->params[i];
		const char *name = args[i].name ? args[i].name : "(null)";
		const char *kind = args[i].kind ? args[i].kind : "(null)";
		if (strcmp(name, p->name) != 0 || strcmp(kind, param_kind_word(p)) != 0)
			return tile_err_set(e, TILE_ERR_ARG, "kernel '%s', argument %d ('%s', %s): the "
				"typed launch passes '%s' (%s) there (a header from another build?)",
				m->name, i, p->name, param_kind_word(p), name, kind);
	}
	return TILE_OK;
}

tile_status tile_kernel_launch_named(tile_kernel *k, const tile_named_arg *args, int nargs,
	void *stream, unsigned flags)
{
	tile_arg plain[TILE_MAX_PARAMS];
	tile_status st;

	if (!k)
		return TILE_ERR_ARG;
	if ((st = check_named(k, args, nargs)))
		return st;
	for (int i = 0; i < nargs; i++)
		plain[i] = args[i].arg;
	return tile_kernel_launch_ex(k, plain, nargs, stream, flags);
}
