/*
 * pass_plan_smem.c: places every shared array of a kernel in one dynamic
 * shared-memory arena.
 *
 * requires: shared buffers have constant extents (sema)
 * ensures:  each shared buffer has a byte offset aligned to what it needs:
 *           16 bytes (128-bit vector access), 8 per mbarrier, 128 for a
 *           tile that a TMA copy reads or writes (the engine's base
 *           alignment without swizzle), and for swizzled tiles the
 *           swizzle's repeat (8 lines: 1024 bytes for 128-byte swizzle),
 *           because TMA and wgmma apply the XOR to absolute addresses;
 *           smem_bytes is the arena size plus, when more than 16-byte
 *           alignment is needed, that alignment as slack (the
 *           kernel rounds the arena's start up at run time: the launch does
 *           not promise more than 16); the arena fits the Hopper per-CTA
 *           limit (227 KiB = 232448 bytes, opt-in), else a located error;
 *           an overlay(BASE) array starts where BASE does, and BASE's slot
 *           is as large and as aligned as the largest and most aligned of
 *           the arrays sharing it
 */
#include "tir.h"


static int64_t buffer_bytes(const TirBuffer *b)
{
	int64_t n = dtype_bytes(b->ty.dt);
	for (int d = 0; d < b->ty.rank; d++)
		if (__builtin_mul_overflow(n, b->ty.dims[d].value, &n))
			return INT64_MAX / 2; /* far above any limit */
	return n;
}

static int64_t buffer_align(const TirBuffer *b, bool tma)
{
	if (b->ty.space == SP_MBAR)
		return 8;
	if (b->ty.swizzle)
		return 8 * b->ty.swizzle;
	return tma ? 128 : 16;
}

/* Marks in `tma` the shared buffers that a TMA copy in `blk` (or below) uses. */
static void mark_tma(const Block *blk, bool *tma, int nbufs)
{
	if (!blk)
		return;
	for (int i = 0; i < blk->nops; i++) {
		const Op *op = blk->ops[i];
		if ((op->code == OP_TMA_LOAD || op->code == OP_TMA_STORE) && op->buf >= 0 &&
		    op->buf < nbufs)
			tma[op->buf] = true;
		mark_tma(op->blocks[0], tma, nbufs);
		mark_tma(op->blocks[1], tma, nbufs);
	}
}

/* The bytes and alignment of buffer `base`'s slot: its own, or the largest
 * of the arrays that overlay it. */
static void slot_needs(const TirFunc *f, const bool *tma, int base, int64_t *bytes,
		       int64_t *align)
{
	const TirBuffer *b = &f->bufs[base];
	*align = buffer_align(b, tma[base]);
	*bytes = b->ty.space == SP_MBAR ? 8 * (b->ty.rank ? b->ty.dims[0].value : 1)
					: buffer_bytes(b);
	for (int i = 0; i < f->nbufs; i++) {
		if (f->bufs[i].overlay != base)
			continue;
		int64_t a = buffer_align(&f->bufs[i], tma[i]), n = buffer_bytes(&f->bufs[i]);
		*align = a > *align ? a : *align;
		*bytes = n > *bytes ? n : *bytes;
	}
}

static bool plan_kernel(Ctx *cx, TirFunc *f)
{
	int64_t at = 0, align = 16;
	bool *tma = ctx_alloc(cx, (size_t)(f->nbufs > 0 ? f->nbufs : 1) * sizeof *tma); /* zeroed */
	mark_tma(f->body, tma, f->nbufs);
	for (int i = 0; i < f->nbufs; i++) {
		TirBuffer *b = &f->bufs[i];
		if ((b->ty.space != SP_SHARED && b->ty.space != SP_MBAR) || b->overlay >= 0)
			continue;
		int64_t a, bytes;
		slot_needs(f, tma, i, &bytes, &a);
		align = a > align ? a : align;
		at = (at + a - 1) & ~(a - 1);
		b->offset = at;
		at += bytes;
		if (at + (align > 16 ? align : 0) > target_sm90a.smem_per_cta) {
			diag_error(cx, b->loc, E_SHARED_TOO_LARGE, f->name,
				   (long long)(at + (align > 16 ? align : 0)));
			return false;
		}
	}
	for (int i = 0; i < f->nbufs; i++)
		if (f->bufs[i].overlay >= 0)
			f->bufs[i].offset = f->bufs[f->bufs[i].overlay].offset;
	int64_t need = at + (align > 16 ? align : 0);
	if (f->ctas_per_sm > 1 && f->ctas_per_sm * (need + 1024) > target_sm90a.smem_per_sm) {
		diag_error(cx, f->loc, E_SHARED_PER_SM, f->name, f->ctas_per_sm,
			   (long long)(f->ctas_per_sm * (need + 1024)));
		return false;
	}
	f->smem_align = (int)align;
	f->smem_bytes = need;
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
