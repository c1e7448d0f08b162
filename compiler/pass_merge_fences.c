/*
 * pass_merge_fences.c: removes the fence.proxy.async ops a later fence makes redundant.
 *
 * Lowering ends every shared-memory frag.store with a fence (what reads a tile next is
 * usually wgmma or TMA, the async proxy), and kernels write their own before a barrier, so
 * a tile written in two halves and handed to wgmma carried three. ptxas emits each as
 * MEMBAR.ALL.CTA + FENCE.VIEW.ASYNC.S, and the MEMBAR waits for every memory operation
 * the thread has in flight, global stores included.
 *
 * A fence orders the thread's earlier shared-memory accesses before its later async-proxy
 * ones, and, through a barrier, before other threads'. It is redundant when another fence
 * follows it with nothing in between that synchronises with other threads, accesses memory
 * through the async proxy, waits on an mbarrier or leaves straight-line code: the later fence
 * orders all the earlier one did, before everything that could tell them apart. Between the
 * two may lie plain arithmetic, plain loads and stores (shared or global), fragment, row and
 * column loads and stores, shuffles, variables, and ifs whose branches hold only those; a
 * fence that ends an if's branch looks on past the if.
 *
 * requires: tir_verify passes
 * ensures:  every barrier, mbarrier op, async-proxy op, call, loop and role is preceded by a
 *           fence wherever it was before; only fences with a later fence ahead of them in
 *           straight-line code are removed
 */
#include "tir.h"

/* An op that may lie between two fences: no synchronisation, async proxy or control flow. */
static bool plain_op(const Op *op)
{
	if (tir_op_flags(op->code) & F_PURE)
		return true;
	switch (op->code) {
	case OP_LOAD: case OP_STORE: case OP_LD: case OP_ST:
		return op->attr[0] == MO_PLAIN;
	case OP_SHFL: case OP_VAR: case OP_VAR_GET: case OP_VAR_SET:
	case OP_FRAG_STORE: case OP_FRAG_LOAD: case OP_ROW_LOAD: case OP_COL_LOAD:
	case OP_ROW_STORE: case OP_COL_STORE: case OP_ROW_REDUCE:
		return true;
	default:
		return false;
	}
}

static bool plain_block(const Block *b);

/* An op a scan for the next fence may pass over (a fence inside an if included). */
static bool passable(const Op *op)
{
	if (op->code == OP_FENCE_ASYNC || plain_op(op))
		return true;
	return op->code == OP_IF && plain_block(op->blocks[0]) &&
	       (!op->blocks[1] || plain_block(op->blocks[1]));
}

static bool plain_block(const Block *b)
{
	for (int i = 0; i < b->nops; i++)
		if (!passable(b->ops[i]))
			return false;
	return true;
}

/* Where a scan that reaches a block's end goes on: past the if whose branch the block is. */
typedef struct Cont {
	const Block *b;
	int at;
	const struct Cont *up;
} Cont;

/* Whether a fence is reached from ops[at] on, through passable ops only. */
static bool fence_ahead(const Block *b, int at, const Cont *up)
{
	for (int i = at; i < b->nops; i++) {
		const Op *op = b->ops[i];
		if (op->code == OP_FENCE_ASYNC)
			return true;
		if (!passable(op))
			return false;
	}
	return up && fence_ahead(up->b, up->at, up->up);
}

/* Removes the redundant fences of a block (and of the blocks nested in it). */
static int merge_block(Block *b, const Cont *up)
{
	int removed = 0, n = 0;
	for (int i = 0; i < b->nops; i++) {
		Op *op = b->ops[i];
		if (op->code == OP_FENCE_ASYNC && fence_ahead(b, i + 1, up)) {
			removed++;
			continue;
		}
		/* an if's branches go on past it; loops and roles are their own scopes */
		Cont past = {b, i + 1, up};
		for (int k = 0; k < 2; k++)
			if (op->blocks[k])
				removed += merge_block(op->blocks[k], op->code == OP_IF ? &past : NULL);
		b->ops[n++] = op;
	}
	b->nops = n;
	return removed;
}

bool pass_merge_fences(Ctx *cx, TirModule *m)
{
	(void)cx;
	for (int i = 0; i < m->nfuncs; i++)
		merge_block(m->funcs[i]->body, NULL);
	return true;
}
