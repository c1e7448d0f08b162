/*
 * lower_tile.c: the Hopper tile constructs to Tile IR.
 *
 * Input: statements and calls that sema_tile.c accepted. Output:
 *   mbarrier decl   -> a shared buffer of 8-byte barriers + mbarrier.init
 *   role            -> a role region (warpgroup test + setmaxnreg in llvm)
 *   frag decl       -> a fragment variable filled with its initial value
 *   tile views      -> element offsets into a shared buffer (i32) or the
 *                      coordinates of a TMA box (one i32 per dimension)
 *   tile calls      -> tma.load, tma.store, mbarrier.*, wgmma, frag.store, ...
 * Shapes (box, K, N) are already checked; here they become op attributes.
 */
#include "lower.h"

/* ---- views ------------------------------------------------------------------- */

/* The start of dimension d of a view: a scalar index, a window's start, or
 * 0 for ':' and missing trailing indices. */
static int view_start(Lower *L, Node *ix, Loc loc)
{
	if (!ix || ix->kind == N_FULL)
		return lower_const_int(L, DT_I32, 0, loc);
	return lower_expr(L, ix->kind == N_RANGE ? ix->a : ix);
}

static Node *view_index(Node *v, int d)
{
	Node *ix = v->kind == N_INDEX ? v->list : NULL;
	while (ix && d-- > 0)
		ix = ix->next;
	return ix;
}

/* Element offset of a shared-tile view: sum of start_d * stride_d, with
 * row-major strides from the buffer's constant extents. */
static int shared_offset(Lower *L, Node *v)
{
	const Type *t = &v->sym->ty;
	int off = lower_const_int(L, DT_I32, 0, v->loc);
	int64_t stride = 1;
	for (int d = t->rank - 1; d >= 0; d--) {
		int start = view_start(L, view_index(v, d), v->loc);
		int scaled = lower_arith(L, OPK_MUL, DT_I32, start,
					 lower_const_int(L, DT_I32, stride, v->loc), v->loc);
		off = lower_arith(L, OPK_ADD, DT_I32, off, scaled, v->loc);
		stride *= t->dims[d].value;
	}
	return off;
}

/* Whether a shared view's element offset (shared_offset) is a multiple of 8 elements, the 16
 * bytes ldmatrix addresses a row by: each dimension's start a constant or its stride a
 * multiple of 8. */
static bool view_aligned8(Node *v)
{
	const Type *t = &v->sym->ty;
	int64_t stride = 1;
	for (int d = t->rank - 1; d >= 0; d--) {
		Node *ix = view_index(v, d);
		Node *start = !ix || ix->kind == N_FULL ? NULL : ix->kind == N_RANGE ? ix->a : ix;
		if (start && stride % 8 != 0 &&
		    !(start->is_const && start->const_ival * stride % 8 == 0))
			return false;
		stride *= t->dims[d].value;
	}
	return true;
}

static int buffer_of(const Node *v)
{
	return v->sym->ir;
}

/* The mbarrier index of 'bar' or 'bar[i]'. */
static int mbar_index(Lower *L, Node *b)
{
	if (b->kind == N_INDEX)
		return lower_expr(L, b->list);
	return lower_const_int(L, DT_I32, 0, b->loc);
}

/* ---- statements --------------------------------------------------------------- */

static void lower_mbarrier(Lower *L, Node *st)
{
	Symbol *s = st->sym;
	s->ir = tir_add_buffer(L->cx, L->f, s->name, s->ty, -1, st->loc);
	Op *op = lower_emit(L, OP_MBAR_INIT, DT_VOID, st->loc, NULL, 0);
	op->buf = s->ir;
	op->attr[0] = s->cluster_init;
}

static void lower_role(Lower *L, Node *st)
{
	Op *op = lower_region(L, OP_ROLE, st->loc, NULL, 0);
	op->imm = st->a->const_ival;
	op->attr[0] = st->b ? st->b->const_ival : op->imm + 1;
	op->attr[1] = st->c ? st->c->const_ival : 0;
	op->attr[2] = ++L->nroles; /* its named barrier id (0 is bar.sync 0) */
	st->sym->ir = (int)op->attr[2];
	if (op->attr[1])
		L->f->has_regs = true;
	Node *saved = L->role;
	L->role = st;
	lower_in_block(L, op->blocks[0], lower_block, st->d);
	L->role = saved;
}

static void lower_frag(Lower *L, Node *st)
{
	Symbol *s = st->sym;
	int cols = s->ty.rank == 1 ? -1 : (int)s->ty.dims[1].value;
	Op *var = lower_emit(L, OP_VAR, DT_F32, st->loc, NULL, 0);
	L->f->vcols[var->result] = cols;
	int init = lower_expr(L, st->b);
	Op *fill = lower_emit(L, OP_FRAG_FILL, DT_F32, st->loc, &init, 1);
	L->f->vcols[fill->result] = cols;
	lower_var_set(L, var->result, fill->result, st->loc);
	s->ir = var->result;
}

void lower_tile_stmt(Lower *L, Node *st)
{
	switch (st->kind) {
	case N_MBARRIER: lower_mbarrier(L, st); break;
	case N_ROLE: lower_role(L, st); break;
	default: lower_frag(L, st); break;
	}
}

/* ---- calls -------------------------------------------------------------------- */

/* tma_prefetch(tensor[...]): the box's coordinates */
static void lower_tma_prefetch(Lower *L, Node *e)
{
	Node *tensor = e->list;
	int rank = tensor->sym->ty.rank;
	int args[TILEC_MAX_RANK];
	for (int d = 0; d < rank; d++)
		args[d] = view_start(L, view_index(tensor, d), e->loc);
	Op *op = lower_emit(L, OP_TMA_PREFETCH, DT_VOID, e->loc, args, rank);
	op->attr[0] = buffer_of(tensor);
}

/* tma_load(tile, tensor[...], bar) / tma_store(tensor[...], tile) */
static void lower_tma(Lower *L, Node *e, bool load)
{
	Node *tile = ast_nth(e->list, load ? 0 : 1), *tensor = ast_nth(e->list, load ? 1 : 0);
	int rank = tensor->sym->ty.rank;
	Node *ctas = load ? ast_nth(e->list, 3) : NULL;
	int args[3 + TILEC_MAX_RANK], n = 0;
	args[n++] = shared_offset(L, tile);
	if (load)
		args[n++] = mbar_index(L, ast_nth(e->list, 2));
	for (int d = 0; d < rank; d++)
		args[n++] = view_start(L, view_index(tensor, d), e->loc);
	if (ctas)
		args[n++] = lower_expr(L, ctas);
	Op *op = lower_emit(L, load ? OP_TMA_LOAD : OP_TMA_STORE, tile->ty.dt, e->loc, args, n);
	op->buf = buffer_of(tile);
	op->attr[0] = buffer_of(tensor);
	if (load)
		op->attr[1] = buffer_of(ast_nth(e->list, 2));
	op->attr[2] = ctas != NULL;   /* multicast: the CTA mask after the coordinates */
}

static void lower_mbar_op(Lower *L, Node *e, OpCode code)
{
	Node *b = ast_nth(e->list, 0);
	int args[2] = {mbar_index(L, b), 0};
	int n = 1;
	if (code == OP_MBAR_ARRIVE && ast_count(e->list) == 2)
		code = OP_MBAR_ARRIVE_PEER;   /* arrive(bar, rank) */
	if (code == OP_MBAR_WAIT || code == OP_MBAR_ARRIVE_PEER)
		args[n++] = lower_expr(L, ast_nth(e->list, 1));
	Op *op = lower_emit(L, code, DT_VOID, e->loc, args, n);
	op->buf = buffer_of(b);
	op->imm = e->ival; /* arrive_expect: the bytes sema counted */
}

/* Bytes between the slabs of a rank-3 operand view: the extent of the
 * buffer below the slab dimension (the view may take a window of rows). */
static int64_t slab_stride(const Node *v)
{
	const Type *t = &v->sym->ty;
	return t->dims[t->rank - 2].value * t->dims[t->rank - 1].value * dtype_bytes(t->dt);
}

/* mma(acc, a, b): acc = wgmma(acc, a, b), the accumulator threaded through;
 * A is a shared tile view, or a fragment in registers (RS) */
static void lower_mma(Lower *L, Node *e)
{
	Node *acc = ast_nth(e->list, 0), *a = ast_nth(e->list, 1), *b = ast_nth(e->list, 2);
	Node *bv = b->kind == N_CALL && b->builtin == B_TRANSPOSE ? b->list : b;
	bool ta = e->ival >> 1 & 1;
	/* (a register A may be any fragment expression, frag_cols(...) included) */
	a = a->kind == N_CALL && a->builtin == B_TRANSPOSE ? a->list : a;
	bool rs = a->ty.space == SP_FRAG;
	Symbol *f = acc->sym;
	int cols = (int)f->ty.dims[1].value;
	int args[3] = {lower_var_get(L, f->ir, e->loc), rs ? lower_expr(L, a) : shared_offset(L, a),
		       shared_offset(L, bv)};
	Op *op = lower_emit(L, OP_MMA, DT_F32, e->loc, args, 3);
	L->f->vcols[op->result] = cols;
	op->buf = rs ? -1 : buffer_of(a);
	op->attr[0] = buffer_of(bv);
	op->attr[1] = rs ? a->ty.dims[1].value
		      : ta ? a->ty.dims[a->ty.rank - 2].value
		      : (a->ty.rank == 3 ? a->ty.dims[0].value : 1) * a->ty.dims[a->ty.rank - 1].value;
	op->attr[2] = e->ival;                 /* bit 0: B is K-major; bit 1: A is M-major */
	op->attr[3] = cols;                    /* N */
	op->attr[4] = !rs && a->ty.rank == 3 ? slab_stride(a) : 0;
	op->attr[5] = bv->ty.rank == 3 ? slab_stride(bv) : 0;
	op->imm = e->builtin == B_MMA_ASYNC;
	lower_var_set(L, f->ir, op->result, e->loc);
}

/* mma_wait(acc, n): acc = wait_group n (acc) */
static void lower_mma_wait(Lower *L, Node *e)
{
	Symbol *f = e->list->sym;
	int acc = lower_var_get(L, f->ir, e->loc);
	Op *op = lower_emit(L, OP_MMA_WAIT, DT_F32, e->loc, &acc, 1);
	L->f->vcols[op->result] = L->f->vcols[acc];
	op->imm = e->ival;
	lower_var_set(L, f->ir, op->result, e->loc);
}

/* rowmax / rowsum: fragment -> row vector; rows / cols: coordinates */
static int lower_frag_fn(Lower *L, Node *e)
{
	bool coord = e->builtin == B_ROWS || e->builtin == B_COLS;
	int cols = (int)e->list->ty.dims[1].value;
	int v = coord ? -1 : lower_expr(L, e->list);
	Op *op = coord ? lower_emit(L, OP_FRAG_COORD, DT_I32, e->loc, NULL, 0)
		       : lower_emit(L, OP_ROW_REDUCE, DT_F32, e->loc, &v, 1);
	op->imm = e->builtin == B_ROWMAX || e->builtin == B_ROWS ? 0 : 1;
	L->f->vcols[op->result] = coord ? cols : -1;
	return op->result;
}

/* frag_cols: the slice's columns from e->ival; frag_join: both operands */
static int lower_frag_cols(Lower *L, Node *e)
{
	int args[2] = {lower_expr(L, e->list), -1};
	bool join = e->builtin == B_FRAG_JOIN;
	if (join)
		args[1] = lower_expr(L, e->list->next);
	Op *op = lower_emit(L, join ? OP_FRAG_JOIN : OP_FRAG_SLICE, e->ty.dt, e->loc, args,
			    join ? 2 : 1);
	op->imm = e->ival;
	L->f->vcols[op->result] = (int)e->ty.dims[1].value;
	return op->result;
}

/* Extent d of a tensor as an i64 value. */
static int extent_i64(Lower *L, const Type *t, int d, Loc loc)
{
	if (t->dims[d].param < 0)
		return lower_const_int(L, DT_I64, t->dims[d].value, loc);
	int p = t->dims[d].param;
	Op *op = lower_emit(L, OP_PARAM, L->f->params[p].ty.dt, loc, NULL, 0);
	op->imm = p;
	int v = op->result;
	return L->f->vtypes[v] == DT_I64 ? v : lower_emit_value(L, OP_CAST, DT_I64, loc, &v, 1);
}

/* The i64 element offset where the trailing `kept` dimensions of a global
 * view start: its first rank - kept (indexed) dimensions, row-major, times
 * the extents of the kept ones. */
static int global_base(Lower *L, Node *v, int kept)
{
	const Type *t = &v->sym->ty;
	int off = lower_const_int(L, DT_I64, 0, v->loc);
	for (int d = 0; d < t->rank - kept; d++) {
		int idx = view_start(L, view_index(v, d), v->loc);
		idx = lower_emit_value(L, OP_CAST, DT_I64, v->loc, &idx, 1);
		off = lower_arith(L, OPK_MUL, DT_I64, off, extent_i64(L, t, d, v->loc), v->loc);
		off = lower_arith(L, OPK_ADD, DT_I64, off, idx, v->loc);
	}
	int ext[TILEC_MAX_RANK];
	for (int d = t->rank - kept; d < t->rank; d++)
		ext[d] = extent_i64(L, t, d, v->loc);
	for (int d = t->rank - kept; d < t->rank; d++)
		off = lower_arith(L, OPK_MUL, DT_I64, off, ext[d], v->loc);
	return off;
}

static bool windowed(Node *ix)
{
	return !ix || ix->kind == N_FULL || ix->kind == N_RANGE;
}

/* A global [64, N] window whose rows are tensor dimension dr and whose
 * columns are the last one, the other dimensions indexed: args get the
 * element offset of the indexed dimensions, the window's row and column
 * starts, the row stride (elements) and the row extent, all but the starts
 * in i64. */
static int global_window(Lower *L, Node *v, int *args)
{
	const Type *t = &v->sym->ty;
	int r = t->rank, dr = r - 2;
	while (dr > 0 && !windowed(view_index(v, dr)))
		dr--;
	int off = lower_const_int(L, DT_I64, 0, v->loc);
	int stride = lower_const_int(L, DT_I64, 1, v->loc), row_stride = stride;
	for (int d = r - 1; d >= 0; d--) {
		if (d == dr)
			row_stride = stride;
		if (!windowed(view_index(v, d))) {
			int idx = view_start(L, view_index(v, d), v->loc);
			idx = lower_emit_value(L, OP_CAST, DT_I64, v->loc, &idx, 1);
			off = lower_arith(L, OPK_ADD, DT_I64, off,
					  lower_arith(L, OPK_MUL, DT_I64, idx, stride, v->loc), v->loc);
		}
		stride = lower_arith(L, OPK_MUL, DT_I64, stride, extent_i64(L, t, d, v->loc), v->loc);
	}
	args[0] = off;
	args[1] = view_start(L, view_index(v, dr), v->loc);
	args[2] = view_start(L, view_index(v, r - 1), v->loc);
	args[3] = row_stride;
	args[4] = extent_i64(L, t, dr, v->loc);
	return 5;
}

static void lower_frag_store(Lower *L, Node *e)
{
	Node *dst = ast_nth(e->list, 0), *src = ast_nth(e->list, 1);
	Node *limit = ast_nth(e->list, 2);
	bool transposed = dst->kind == N_CALL;   /* frag_store(transpose(t), f) */
	if (transposed)
		dst = dst->list;
	int args[7], n = 0;
	args[n++] = lower_expr(L, src);
	if (dst->sym->ty.space == SP_SHARED) {
		args[n++] = shared_offset(L, dst);
	} else {
		n += global_window(L, dst, args + n);
		if (limit)
			args[n++] = lower_expr(L, limit);
	}
	Op *op = lower_emit(L, OP_FRAG_STORE, dst->ty.dt, e->loc, args, n);
	op->buf = buffer_of(dst);
	op->imm = transposed;
	/* what reads a shared tile next is usually wgmma or TMA (the async proxy); merge-fences
	 * drops the fences a later one covers */
	if (dst->sym->ty.space == SP_SHARED)
		lower_emit(L, OP_FENCE_ASYNC, DT_VOID, e->loc, NULL, 0);
}

/* shared: the tile's element offset; global: the window (global_window) */
static int lower_frag_load(Lower *L, Node *e)
{
	int args[5], n = 1;
	bool transposed = e->list->kind == N_CALL;   /* frag_load(transpose(t)) */
	Node *v = transposed ? e->list->list : e->list;
	if (v->sym->ty.space == SP_SHARED)
		args[0] = shared_offset(L, v);
	else
		n = global_window(L, v, args);
	Op *op = lower_emit(L, OP_FRAG_LOAD, DT_F32, e->loc, args, n);
	op->buf = buffer_of(v);
	op->imm = transposed;
	op->attr[0] = v->sym->ty.space == SP_SHARED && view_aligned8(v);
	L->f->vcols[op->result] = (int)e->ty.dims[1].value;
	return op->result;
}

static int role_threads(const Symbol *r)
{
	const Node *d = r->decl;
	return 128 * (int)(d->b ? d->b->const_ival - d->a->const_ival : 1);
}

/* signal(a, b) -> bar.arrive, sync(a, b) -> bar.sync, on the pair's named
 * barrier: ids after the roles' own (1 .. roles), in order of first use. */
static int lower_pair_barrier(Lower *L, Node *e)
{
	Symbol *a = e->list->sym, *b = e->list->next->sym;
	int i = 0;
	while (i < L->npairs && !((L->pairs[i][0] == a && L->pairs[i][1] == b) ||
				  (L->pairs[i][0] == b && L->pairs[i][1] == a)))
		i++;
	if (i == L->npairs && L->npairs < 16) {
		L->pairs[i][0] = a;
		L->pairs[i][1] = b;
		L->npairs++;
	}
	Op *op = lower_emit(L, OP_NAMED_SYNC, DT_VOID, e->loc, NULL, 0);
	op->imm = L->role_count + 1 + i;
	op->attr[0] = role_threads(a) + role_threads(b);
	op->attr[1] = e->builtin == B_SIGNAL; /* bar.arrive: do not wait */
	return -1;
}

/* col_load(view): shared -> [element offset]; global -> [base of the leading
 * (indexed) dimensions in i64, start of the window in the last one] */
static int lower_col_load(Lower *L, Node *e)
{
	Node *v = e->list;
	const Type *t = &v->sym->ty;
	int args[2], n = 0;
	if (t->space == SP_SHARED) {
		args[n++] = shared_offset(L, v);
	} else {
		args[n++] = global_base(L, v, 1);
		args[n++] = view_start(L, view_index(v, t->rank - 1), v->loc);
	}
	Op *op = lower_emit(L, e->builtin == B_ROW_LOAD ? OP_ROW_LOAD : OP_COL_LOAD, DT_F32,
			    e->loc, args, n);
	op->buf = buffer_of(v);
	L->f->vcols[op->result] = lower_shape(e);
	return op->result;
}

/* row_store / col_store(view, v): [v, shared offset] or [v, global base, start] */
static void lower_vec_store(Lower *L, Node *e)
{
	Node *v = e->list;
	const Type *t = &v->sym->ty;
	int args[3], n = 0;
	args[n++] = lower_expr(L, e->list->next);
	if (t->space == SP_SHARED) {
		args[n++] = shared_offset(L, v);
	} else {
		args[n++] = global_base(L, v, 1);
		args[n++] = view_start(L, view_index(v, t->rank - 1), v->loc);
	}
	Op *op = lower_emit(L, e->builtin == B_ROW_STORE ? OP_ROW_STORE : OP_COL_STORE,
			    v->ty.dt, e->loc, args, n);
	op->buf = buffer_of(v);
}

/* load_acquire / store_release / atomic_add: a load or store of one element (indices as a
 * plain access; the lower-index pass keeps the order in attr0), atomic_add a load whose last
 * operand is the addend. */
static int lower_flag_access(Lower *L, Node *e)
{
	Node *at = e->list;
	bool store = e->builtin == B_STORE_RELEASE, add = e->builtin == B_ATOMIC_ADD;
	int args[2 + TILEC_MAX_RANK], n = store ? 1 : 0;
	if (store)
		args[0] = lower_expr(L, at->next);
	for (Node *i = at->list; i; i = i->next)
		args[n++] = lower_expr(L, i);
	if (add)
		args[n++] = lower_expr(L, at->next);
	Op *op = lower_emit(L, store ? OP_STORE : OP_LOAD, DT_I32, e->loc, args, n);
	op->buf = at->a->sym->ir;
	op->attr[0] = store ? MO_RELEASE : add ? MO_ADD : MO_ACQUIRE;
	return store ? -1 : op->result;
}

/* cluster_load(T[i, ...], rank): a load of T's element, the rank after the indices */
static int lower_cluster_load(Lower *L, Node *e)
{
	Node *at = e->list;
	int args[1 + TILEC_MAX_RANK], n = 0;
	for (Node *i = at->list; i; i = i->next)
		args[n++] = lower_expr(L, i);
	args[n++] = lower_expr(L, at->next);
	Op *op = lower_emit(L, OP_LOAD, at->ty.dt, e->loc, args, n);
	op->buf = at->a->sym->ir;
	op->attr[0] = MO_PEER;
	return op->result;
}

int lower_tile_call(Lower *L, Node *e)
{
	Op *op;
	switch (e->builtin) {
	case B_TMA_LOAD: lower_tma(L, e, true); return -1;
	case B_TMA_STORE: lower_tma(L, e, false); return -1;
	case B_TMA_PREFETCH: lower_tma_prefetch(L, e); return -1;
	case B_TMA_STORE_WAIT: lower_emit(L, OP_TMA_WAIT, DT_VOID, e->loc, NULL, 0); return -1;
	case B_TMA_STORE_WAIT_READ:
		lower_emit(L, OP_TMA_WAIT_READ, DT_VOID, e->loc, NULL, 0);
		return -1;
	case B_FENCE_ASYNC: lower_emit(L, OP_FENCE_ASYNC, DT_VOID, e->loc, NULL, 0); return -1;
	case B_SYNC_WARP: lower_emit(L, OP_WARP_SYNC, DT_VOID, e->loc, NULL, 0); return -1;
	case B_FENCE_PROXY_GLOBAL:
		lower_emit(L, OP_FENCE_PROXY_GLOBAL, DT_VOID, e->loc, NULL, 0);
		return -1;
	case B_LAUNCH_DEPENDENTS:
		lower_emit(L, OP_LAUNCH_DEPENDENTS, DT_VOID, e->loc, NULL, 0);
		return -1;
	case B_WAIT_PREREQUISITES:
		lower_emit(L, OP_WAIT_PREREQUISITES, DT_VOID, e->loc, NULL, 0);
		return -1;
	case B_NANOSLEEP: {
		int ns = lower_expr(L, e->list);
		lower_emit(L, OP_NANOSLEEP, DT_VOID, e->loc, &ns, 1);
		return -1;
	}
	case B_LOAD_ACQUIRE: case B_STORE_RELEASE: case B_ATOMIC_ADD:
		return lower_flag_access(L, e);
	case B_ARRIVE: lower_mbar_op(L, e, OP_MBAR_ARRIVE); return -1;
	case B_ARRIVE_EXPECT: lower_mbar_op(L, e, OP_MBAR_EXPECT); return -1;
	case B_WAIT: lower_mbar_op(L, e, OP_MBAR_WAIT); return -1;
	case B_CLUSTER_SYNC: case B_CLUSTER_ARRIVE: case B_CLUSTER_WAIT:
		op = lower_emit(L, OP_CLUSTER_SYNC, DT_VOID, e->loc, NULL, 0);
		op->imm = e->builtin == B_CLUSTER_SYNC ? CLUSTER_SYNC
			  : e->builtin == B_CLUSTER_ARRIVE ? CLUSTER_ARRIVE : CLUSTER_WAIT;
		return -1;
	case B_CLUSTER_LOAD: return lower_cluster_load(L, e);
	case B_ELECT_ONE: return lower_emit_value(L, OP_ELECT, DT_BOOL, e->loc, NULL, 0);
	case B_MMA: case B_MMA_ASYNC: lower_mma(L, e); return -1;
	case B_MMA_WAIT: lower_mma_wait(L, e); return -1;
	case B_FRAG_STORE: lower_frag_store(L, e); return -1;
	case B_FRAG_LOAD: return lower_frag_load(L, e);
	case B_ROWMAX: case B_ROWSUM: case B_ROWS: case B_COLS: return lower_frag_fn(L, e);
	case B_FRAG_COLS: case B_FRAG_JOIN: return lower_frag_cols(L, e);
	case B_COL_LOAD: case B_ROW_LOAD: return lower_col_load(L, e);
	case B_COL_STORE: case B_ROW_STORE: lower_vec_store(L, e); return -1;
	case B_SYNC: case B_SIGNAL:
		if (e->list->next)
			return lower_pair_barrier(L, e);
		op = lower_emit(L, OP_NAMED_SYNC, DT_VOID, e->loc, NULL, 0);
		op->imm = e->list->sym->ir;
		op->attr[0] = role_threads(e->list->sym);
		return -1;
	default:
		diag_internal(L->cx, "lower", "tile builtin '%s' has no lowering",
			      builtin_name((Builtin)e->builtin));
		return -1;
	}
}
