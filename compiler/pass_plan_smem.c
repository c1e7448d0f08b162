/*
 * pass_plan_smem.c: places every shared array of a kernel in one dynamic
 * shared-memory arena.
 *
 * requires: shared buffers have constant extents (sema)
 * ensures:  each shared buffer has a byte offset aligned to 16 bytes (enough
 *           for 128-bit vector access; swizzled tiles will need 1024), the
 *           kernel's smem_bytes is the arena size, and the arena fits the
 *           Hopper per-CTA limit (227 KiB = 232448 bytes, opt-in), else a
 *           located error at the array that does not fit
 */
#include "tir.h"

#define HOPPER_SMEM_PER_CTA 232448

static int64_t buffer_bytes(const TirBuffer *b)
{
	int64_t n = dtype_bytes(b->ty.dt);
	for (int d = 0; d < b->ty.rank; d++)
		if (__builtin_mul_overflow(n, b->ty.dims[d].value, &n))
			return INT64_MAX / 2; /* far above any limit */
	return n;
}

static bool plan_kernel(Ctx *cx, TirFunc *f)
{
	int64_t at = 0;
	for (int i = 0; i < f->nbufs; i++) {
		TirBuffer *b = &f->bufs[i];
		if (b->ty.space != SP_SHARED)
			continue;
		at = (at + 15) & ~(int64_t)15;
		b->offset = at;
		at += buffer_bytes(b);
		if (at > HOPPER_SMEM_PER_CTA) {
			diag_error(cx, b->loc, E_SHARED_TOO_LARGE, f->name, (long long)at);
			return false;
		}
	}
	f->smem_bytes = at;
	f->smem_planned = true;
	return true;
}

bool pass_plan_smem(Ctx *cx, TirModule *m)
{
	bool ok = true;
	for (int i = 0; i < m->nfuncs; i++)
		if (m->funcs[i]->is_kernel)
			ok = plan_kernel(cx, m->funcs[i]) && ok;
	return ok;
}
