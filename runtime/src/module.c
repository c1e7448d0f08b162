/*
 * module.c: modules (an embedded module's code + parsed metadata) and kernel lookup.
 *
 * tile_module_create parses the metadata, then loads the cubin with cuModuleLoadData; when
 * there is no cubin or it does not load (another GPU, a driver too old for it), it JIT-compiles
 * the PTX with cuModuleLoadDataEx, capturing the JIT error log into the error detail.
 *
 * tile_kernel_get resolves a kernel once: cuModuleGetFunction, then checks the metadata against
 * the device and the binary before any launch can fail obscurely: threads per block against the
 * device and the function's register-limited maximum, dynamic + static shared memory against
 * the opt-in limit (raising the function's limit when above 48 KiB), clusters (non-portable
 * sizes above 8 allowed; a cluster given by expressions is checked at launch), and, where the
 * driver has cuFuncGetParamInfo (12.4+), the count and sizes of the parameters. A kernel
 * handle lives as long as its module.
 */
#include <stdio.h>
#include <string.h>

#include "internal.h"

enum { SMEM_DEFAULT_LIMIT = 48 * 1024 }; /* above this a kernel must opt in (cuda.h) */

static void link_module(tile_rt *rt, tile_module *m)
{
	m->next = rt->modules;
	if (rt->modules)
		rt->modules->prev = m;
	rt->modules = m;
}

static void unlink_module(tile_rt *rt, tile_module *m)
{
	if (m->prev)
		m->prev->next = m->next;
	else if (rt->modules == m)
		rt->modules = m->next;
	if (m->next)
		m->next->prev = m->prev;
	m->next = m->prev = NULL;
}

static tile_status load_ptx(tile_module *m, char *log, size_t cap)
{
	tcu_jit_option opts[2] = {TCU_JIT_ERROR_LOG_BUFFER, TCU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
	void *vals[2] = {log, (void *)(uintptr_t)cap};

	log[0] = '\0';
	return TILE_CU(m->rt, cuModuleLoadDataEx, (&m->mod, m->em->ptx, 2, opts, vals));
}

/* cubin first, PTX as the fallback; on failure, one message that says what each gave. */
static tile_status load_code(tile_module *m)
{
	tile_rt *rt = m->rt;
	char cubin_err[TILE_ERR_CAP / 2] = "no cubin embedded", ptx_err[TILE_ERR_CAP / 2];
	char log[2048];
	tile_status st = TILE_ERR_CUDA;

	if (m->em->cubin) {
		st = TILE_CU(rt, cuModuleLoadData, (&m->mod, m->em->cubin));
		if (!st)
			return TILE_OK;
		m->mod = NULL;
		snprintf(cubin_err, sizeof cubin_err, "%.500s", rt->err.msg);
	}
	if (!m->em->ptx)
		return tile_err_set(&rt->err, st, "module '%s': %.500s, and no PTX to fall back on",
			m->em->name, cubin_err);
	st = load_ptx(m, log, sizeof log);
	if (st) {
		m->mod = NULL;
		snprintf(ptx_err, sizeof ptx_err, "%.500s", rt->err.msg);
		return tile_err_set(&rt->err, st, "module '%s': cubin: %s; PTX: %s%s%.300s",
			m->em->name, cubin_err, ptx_err, log[0] ? "; JIT log: " : "", log);
	}
	m->from_ptx = true;
	return TILE_OK;
}

static tile_status module_init(tile_module *m)
{
	tile_rt *rt = m->rt;
	tile_err why;
	tile_status st = tile_meta_parse(&rt->alloc, m->em->meta, &m->meta, &why);

	if (st)
		return tile_err_set(&rt->err, st, "module '%s': %s", m->em->name, why.msg);
	m->kernels = tile_host_alloc(&rt->alloc, (size_t)m->meta.nkernels * sizeof *m->kernels);
	if (!m->kernels)
		return tile_err_set(&rt->err, TILE_ERR_NOMEM, "module '%s': out of host memory",
			m->em->name);
	for (int i = 0; i < m->meta.nkernels; i++) {
		m->kernels[i].meta = &m->meta.kernels[i];
		m->kernels[i].mod = m;
	}
	if ((st = tile_ctx_enter(rt)))
		return st;
	st = load_code(m);
	tile_ctx_leave(rt);
	return st;
}

tile_status tile_module_create(tile_rt *rt, const tile_embedded_module *em, tile_module **out)
{
	tile_module *m;
	tile_status st;

	if (!rt)
		return TILE_ERR_ARG;
	if (!out)
		return tile_err_set(&rt->err, TILE_ERR_ARG, "tile_module_create: NULL out");
	*out = NULL;
	if (!em || !em->name || !em->meta || (!em->cubin && !em->ptx))
		return tile_err_set(&rt->err, TILE_ERR_ARG, "tile_module_create: the embedded "
			"module is NULL or lacks a name, metadata, or both cubin and PTX");
	m = tile_host_alloc(&rt->alloc, sizeof *m);
	if (!m)
		return tile_err_set(&rt->err, TILE_ERR_NOMEM, "module '%s': out of host memory",
			em->name);
	m->rt = rt;
	m->em = em;
	link_module(rt, m);
	st = module_init(m);
	if (st) {
		tile_module_destroy(m);
		return st;
	}
	*out = m;
	return TILE_OK;
}

void tile_module_destroy(tile_module *m)
{
	tile_rt *rt;

	if (!m)
		return;
	rt = m->rt;
	if (m->mod) {
		bool pushed = tile_ctx_enter(rt) == TILE_OK;
		rt->cu.cuModuleUnload(m->mod); /* the handle names its context; try regardless */
		if (pushed)
			tile_ctx_leave(rt);
	}
	unlink_module(rt, m);
	tile_meta_free(&rt->alloc, &m->meta);
	tile_host_free(&rt->alloc, m->kernels);
	tile_host_free(&rt->alloc, m);
}

/* --- kernel resolution -------------------------------------------------------------------- */
static tile_status check_threads(tile_kernel *k, int fn_max_threads)
{
	tile_rt *rt = k->mod->rt;
	const tile_limits *l = &rt->lim;
	const unsigned int *t = k->meta->threads;
	uint64_t n = (uint64_t)t[0] * t[1] * t[2];
	int limit = fn_max_threads < l->max_threads ? fn_max_threads : l->max_threads;

	for (int d = 0; d < 3; d++)
		if (t[d] > (unsigned int)l->max_block[d])
			return tile_err_set(&rt->err, TILE_ERR_LAUNCH,
				"kernel '%s': block dim %c is %u, the device allows %d",
				k->meta->name, "xyz"[d], t[d], l->max_block[d]);
	if (n > (uint64_t)limit)
		return tile_err_set(&rt->err, TILE_ERR_LAUNCH, "kernel '%s': %llu threads per "
			"block (%u %u %u), but at most %d can run (device %d; %d registers per "
			"thread)", k->meta->name, (unsigned long long)n, t[0], t[1], t[2], limit,
			l->max_threads, k->num_regs);
	return TILE_OK;
}

static tile_status set_smem(tile_kernel *k, tcu_function fn)
{
	tile_rt *rt = k->mod->rt;
	uint64_t dyn = k->meta->smem, total = dyn + (uint64_t)k->static_smem;

	if (total > (uint64_t)rt->lim.smem_optin)
		return tile_err_set(&rt->err, TILE_ERR_LAUNCH, "kernel '%s' needs %llu B of "
			"dynamic + %d B of static shared memory; the device allows %d B per block",
			k->meta->name, (unsigned long long)dyn, k->static_smem, rt->lim.smem_optin);
	if (total <= SMEM_DEFAULT_LIMIT)
		return TILE_OK;
	return TILE_CU(rt, cuFuncSetAttribute, (fn, TCU_FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES,
		(int)dyn));
}

static tile_status set_cluster(tile_kernel *k, tcu_function fn)
{
	tile_rt *rt = k->mod->rt;
	const unsigned int *c = k->meta->cluster;
	/* 64 bits: a product in 32 could wrap to 1 (the parser bounds it by TILE_MAX_CLUSTER) */
	uint64_t n = (uint64_t)c[0] * c[1] * c[2];

	/* sized at launch, perhaps above 8: allow that where the device has clusters at all
	 * (the launch refuses a cluster below sm_90, knowing its size then) */
	if (tile_cluster_has_expr(k->meta))
		return rt->lim.cc_major < 9 ? TILE_OK
			: TILE_CU(rt, cuFuncSetAttribute,
				(fn, TCU_FUNC_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1));
	if (n == 1)
		return TILE_OK;
	if (rt->lim.cc_major < 9)
		return tile_err_set(&rt->err, TILE_ERR_LAUNCH, "kernel '%s' asks for a %ux%ux%u "
			"cluster; clusters need compute capability 9.0, the device has %d.%d",
			k->meta->name, c[0], c[1], c[2], rt->lim.cc_major, rt->lim.cc_minor);
	if (n <= 8)
		return TILE_OK;
	return TILE_CU(rt, cuFuncSetAttribute, (fn, TCU_FUNC_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1));
}

static size_t param_size(const tile_param *p)
{
	if (p->kind == TILE_PARAM_TMA)
		return sizeof(tcu_tensor_map);
	if (p->kind == TILE_PARAM_PTR)
		return sizeof(uint64_t);
	return tile_dtype_size(p->type);
}

/* Metadata vs the binary's parameter list, where the driver can tell (CUDA 12.4+). */
static tile_status check_params(tile_kernel *k, tcu_function fn)
{
	tile_rt *rt = k->mod->rt;
	size_t off, size;
	int n = k->meta->nparams;
	tcu_result r;

	if (!rt->cu.cuFuncGetParamInfo)
		return TILE_OK;
	/* Indices 0..n-1 only: probing index n to prove there is no extra
	 * parameter fails by design, and compute-sanitizer reports every failing
	 * driver call as an error. A binary with more parameters than its
	 * metadata cannot come from one tilec run. */
	for (int i = 0; i < n; i++) {
		r = rt->cu.cuFuncGetParamInfo(fn, (size_t)i, &off, &size);
		if (r != TCU_SUCCESS && r != TCU_ERROR_INVALID_VALUE)
			return TILE_OK; /* the driver cannot tell for this function */
		if (r != TCU_SUCCESS)
			return tile_err_set(&rt->err, TILE_ERR_META, "kernel '%s': the metadata "
				"lists %d parameters, the binary's kernel has %d", k->meta->name,
				n, i);
		if (size != param_size(&k->meta->params[i]))
			return tile_err_set(&rt->err, TILE_ERR_META, "kernel '%s': parameter %d "
				"('%s') is %zu bytes in the binary, the metadata says %zu",
				k->meta->name, i, k->meta->params[i].name, size,
				param_size(&k->meta->params[i]));
	}
	return TILE_OK;
}

static tile_status resolve_kernel(tile_kernel *k)
{
	tile_rt *rt = k->mod->rt;
	tcu_function fn = NULL;
	int max_threads = 0;
	tile_status st;

	st = TILE_CU(rt, cuModuleGetFunction, (&fn, k->mod->mod, k->meta->name));
	if (!st)
		st = TILE_CU(rt, cuFuncGetAttribute,
			(&max_threads, TCU_FUNC_MAX_THREADS_PER_BLOCK, fn));
	if (!st)
		st = TILE_CU(rt, cuFuncGetAttribute,
			(&k->static_smem, TCU_FUNC_SHARED_SIZE_BYTES, fn));
	if (!st)
		st = TILE_CU(rt, cuFuncGetAttribute, (&k->num_regs, TCU_FUNC_NUM_REGS, fn));
	if (!st)
		st = check_params(k, fn);
	if (!st)
		st = check_threads(k, max_threads);
	if (!st)
		st = set_smem(k, fn);
	if (!st)
		st = set_cluster(k, fn);
	if (!st)
		k->fn = fn;
	return st;
}

static tile_status not_found(tile_module *m, const char *name)
{
	char have[512] = "";
	size_t len = 0;

	for (int i = 0; i < m->meta.nkernels && len < sizeof have; i++)
		len += (size_t)snprintf(have + len, sizeof have - len, "%s%s", i ? ", " : "",
			m->meta.kernels[i].name);
	return tile_err_set(&m->rt->err, TILE_ERR_NOT_FOUND, "module '%s' has no kernel '%s' "
		"(it has: %s)", m->em->name, name, have[0] ? have : "none");
}

tile_status tile_kernel_get(tile_module *m, const char *name, tile_kernel **out)
{
	tile_kernel *k = NULL;
	tile_status st;

	if (!m)
		return TILE_ERR_ARG;
	if (!name || !out)
		return tile_err_set(&m->rt->err, TILE_ERR_ARG, "tile_kernel_get: NULL name or out");
	*out = NULL;
	for (int i = 0; i < m->meta.nkernels && !k; i++)
		if (strcmp(m->meta.kernels[i].name, name) == 0)
			k = &m->kernels[i];
	if (!k)
		return not_found(m, name);
	if (!k->fn) {
		if ((st = tile_ctx_enter(m->rt)))
			return st;
		st = resolve_kernel(k);
		tile_ctx_leave(m->rt);
		if (st)
			return st;
	}
	*out = k;
	return TILE_OK;
}

tile_status tile_kernel_get_info(const tile_kernel *k, tile_kernel_info *out)
{
	if (!k)
		return TILE_ERR_ARG;
	if (!out)
		return tile_err_set(&k->mod->rt->err, TILE_ERR_ARG,
			"tile_kernel_get_info: NULL out");
	memset(out, 0, sizeof *out);
	out->name = k->meta->name;
	memcpy(out->threads, k->meta->threads, sizeof out->threads);
	memcpy(out->cluster, k->meta->cluster, sizeof out->cluster);
	out->smem = k->meta->smem;
	out->static_smem = (size_t)k->static_smem;
	out->num_regs = k->num_regs;
	out->nparams = k->meta->nparams;
	return TILE_OK;
}
