/*
 * lower.c: typed AST to Tile IR.
 *
 * Input: an AST that sema_check accepted. Output: a TirModule with one
 * function per helper function of the program and one kernel per kernel of
 * the main file (kernels of imported files are library code, not emitted).
 *
 * Mapping: scalar parameters become 'param' values, 'let' bindings and loop
 * variables become plain values, 'var' bindings become variable slots
 * (var/var.get/var.set), tensors and shared arrays become buffers. '&&' and
 * '||' short-circuit through a bool variable and an 'if', so 'i < n && a[i]'
 * never loads out of bounds. Compile-time constants become 'const' ops.
 */
#include <string.h>

#include "lower.h"


/* ---- emission helpers ------------------------------------------------------ */

Op *lower_emit(Lower *L, OpCode code, DType ty, Loc loc, const int *args,
		int nargs)
{
	Op *op = tir_op_new(L->cx, code, ty, loc);
	tir_op_set_args(L->cx, op, args, nargs);
	if (tir_op_result(code) == 1 || (code == OP_CALL && ty != DT_VOID))
		op->result = tir_new_value(L->cx, L->f, ty);
	tir_block_append(L->cx, L->cur, op);
	return op;
}

int lower_emit_value(Lower *L, OpCode code, DType ty, Loc loc, const int *args,
		      int nargs)
{
	return lower_emit(L, code, ty, loc, args, nargs)->result;
}

int lower_const_int(Lower *L, DType ty, int64_t v, Loc loc)
{
	Op *op = lower_emit(L, OP_CONST, ty, loc, NULL, 0);
	op->imm = v;
	return op->result;
}

static DType concrete_dt(DType dt)
{
	return dt == DT_UNTYPED_INT ? DT_I32 : dt == DT_UNTYPED_FLOAT ? DT_F32 : dt;
}

static int emit_const(Lower *L, Node *e)
{
	DType dt = concrete_dt(e->ty.dt);
	Op *op = lower_emit(L, OP_CONST, dt, e->loc, NULL, 0);
	if (dtype_is_float(dt))
		op->fimm = e->const_fval;
	else if (dt == DT_I32)
		op->imm = (int32_t)e->const_ival;
	else
		op->imm = e->const_ival;
	return op->result;
}

int lower_sreg(Lower *L, Sreg s, Loc loc)
{
	Op *op = lower_emit(L, OP_SREG, DT_I32, loc, NULL, 0);
	op->imm = s;
	return op->result;
}

Op *lower_region(Lower *L, OpCode code, Loc loc, const int *args, int n)
{
	Op *op = lower_emit(L, code, DT_VOID, loc, args, n);
	op->blocks[0] = tir_block_new(L->cx);
	op->blocks[1] = tir_block_new(L->cx);
	return op;
}

/* Runs `fn(L, arg)` with `b` as the current block. */
void lower_in_block(Lower *L, Block *b, void (*fn)(Lower *, Node *), Node *arg)
{
	Block *saved = L->cur;
	L->cur = b;
	fn(L, arg);
	L->cur = saved;
}

/* ---- expressions ------------------------------------------------------------ */

static OpCode binary_opcode(OpKind k)
{
	switch (k) {
	case OPK_ADD: return OP_ADD;
	case OPK_SUB: return OP_SUB;
	case OPK_MUL: return OP_MUL;
	case OPK_DIV: return OP_DIV;
	case OPK_REM: return OP_REM;
	case OPK_AND: return OP_AND;
	case OPK_OR: return OP_OR;
	case OPK_XOR: return OP_XOR;
	case OPK_SHL: return OP_SHL;
	case OPK_SHR: return OP_SHR;
	case OPK_EQ: return OP_EQ;
	case OPK_NE: return OP_NE;
	case OPK_LT: return OP_LT;
	case OPK_LE: return OP_LE;
	case OPK_GT: return OP_GT;
	default: return OP_GE;
	}
}

int lower_new_var(Lower *L, DType ty, Loc loc)
{
	return lower_emit_value(L, OP_VAR, ty, loc, NULL, 0);
}

void lower_var_set(Lower *L, int var, int value, Loc loc)
{
	int args[2] = {var, value};
	lower_emit(L, OP_VAR_SET, L->f->vtypes[var], loc, args, 2);
}

int lower_var_get(Lower *L, int var, Loc loc)
{
	int v = lower_emit_value(L, OP_VAR_GET, L->f->vtypes[var], loc, &var, 1);
	L->f->vcols[v] = L->f->vcols[var]; /* a fragment variable reads a fragment */
	return v;
}

/* a && b  ==>  t = false; if a { t = b }     a || b  ==>  t = true; if !a { t = b } */
static int lower_short_circuit(Lower *L, Node *e)
{
	int t = lower_new_var(L, DT_BOOL, e->loc);
	int a = lower_expr(L, e->a);
	if (e->op == OPK_LOR)
		a = lower_emit_value(L, OP_NOT, DT_BOOL, e->loc, &a, 1);
	lower_var_set(L, t, lower_const_int(L, DT_BOOL, e->op == OPK_LOR, e->loc), e->loc);
	Op *branch = lower_region(L, OP_IF, e->loc, &a, 1);
	Block *saved = L->cur;
	L->cur = branch->blocks[0];
	lower_var_set(L, t, lower_expr(L, e->b), e->loc);
	L->cur = saved;
	return lower_var_get(L, t, e->loc);
}

int lower_arith(Lower *L, OpKind k, DType ty, int a, int b, Loc loc)
{
	int args[2] = {a, b};
	OpCode code = binary_opcode(k);
	bool cmp = code >= OP_EQ && code <= OP_GE;
	return lower_emit_value(L, code, cmp ? DT_BOOL : ty, loc, args, 2);
}

/* ---- fragments: elementwise expressions -------------------------------------- */

/* The TIR shape of an expression: vcols of a fragment [64, N] is N, of a row
 * vector [64] it is -1, of a column vector [N] it is -N, of a scalar 0. */
int lower_shape(const Node *e)
{
	if (e->ty.space != SP_FRAG)
		return 0;
	if (e->ty.rank == 1)
		return e->ty.colvec ? -(int)e->ty.dims[0].value : -1;
	return (int)e->ty.dims[1].value;
}

/* Brings value v to shape `cols`: scalars are filled, row vectors broadcast
 * along the rows of a fragment, column vectors down its columns. */
int lower_broadcast(Lower *L, int v, int cols, Loc loc)
{
	int have = L->f->vcols[v];
	if (have == cols || cols == 0)
		return v;
	OpCode code = have == 0 ? OP_FRAG_FILL : have == -1 ? OP_ROW_BCAST : OP_COL_BCAST;
	Op *op = lower_emit(L, code, L->f->vtypes[v], loc, &v, 1);
	L->f->vcols[op->result] = cols;
	return op->result;
}

/* Emits an elementwise op whose operands are brought to the result's shape. */
static int lower_elementwise(Lower *L, OpCode code, DType ty, Node *e, int *args, int n)
{
	int cols = lower_shape(e);
	for (int i = 0; i < n; i++)
		args[i] = lower_broadcast(L, args[i], cols, e->loc);
	int r = lower_emit_value(L, code, ty, e->loc, args, n);
	L->f->vcols[r] = cols;
	return r;
}

static int lower_binary(Lower *L, Node *e)
{
	bool frag = e->ty.space == SP_FRAG;
	if ((e->op == OPK_LAND || e->op == OPK_LOR) && !frag)
		return lower_short_circuit(L, e);
	int args[2] = {lower_expr(L, e->a), lower_expr(L, e->b)};
	if (!frag)
		return lower_arith(L, e->op, L->f->vtypes[args[0]], args[0], args[1], e->loc);
	/* on bool fragments && and || are elementwise and / or: no side effects */
	OpKind k = e->op == OPK_LAND ? OPK_AND : e->op == OPK_LOR ? OPK_OR : (OpKind)e->op;
	OpCode code = binary_opcode(k);
	bool cmp = code >= OP_EQ && code <= OP_GE;
	return lower_elementwise(L, code, cmp ? DT_BOOL : L->f->vtypes[args[0]], e, args, 2);
}

static int lower_unary(Lower *L, Node *e)
{
	int a = lower_expr(L, e->a);
	OpCode code = e->op == OPK_NEG ? OP_NEG : OP_NOT;
	return lower_elementwise(L, code, e->ty.dt, e, &a, 1);
}

/* warp_id = linear thread index / 32. (PTX's %warpid is the hardware slot,
 * which may change during execution, so it is not what a program wants.) */
static int lower_warp_id(Lower *L, Loc loc)
{
	int args[2];
	args[0] = lower_sreg(L, SREG_NTID_Y, loc);
	args[1] = lower_sreg(L, SREG_TID_Z, loc);
	int t = lower_emit_value(L, OP_MUL, DT_I32, loc, args, 2);
	args[0] = t;
	args[1] = lower_sreg(L, SREG_TID_Y, loc);
	t = lower_emit_value(L, OP_ADD, DT_I32, loc, args, 2);
	args[0] = t;
	args[1] = lower_sreg(L, SREG_NTID_X, loc);
	t = lower_emit_value(L, OP_MUL, DT_I32, loc, args, 2);
	args[0] = t;
	args[1] = lower_sreg(L, SREG_TID_X, loc);
	t = lower_emit_value(L, OP_ADD, DT_I32, loc, args, 2);
	args[0] = t;
	args[1] = lower_const_int(L, DT_I32, 5, loc);
	return lower_emit_value(L, OP_SHR, DT_I32, loc, args, 2);
}

static int lower_ident(Lower *L, Node *e)
{
	if (e->builtin == B_LANE_ID)
		return lower_sreg(L, SREG_LANEID, e->loc);
	if (e->builtin == B_CLUSTER_RANK)
		return lower_sreg(L, SREG_CLUSTER_CTARANK, e->loc);
	if (e->builtin == B_WARP_ID)
		return lower_warp_id(L, e->loc);
	if (e->builtin == B_WG_RANK) {
		/* the warpgroup's index within its role: tid.x / 128 - first */
		int args[2] = {lower_sreg(L, SREG_TID_X, e->loc),
			       lower_const_int(L, DT_I32, 7, e->loc)};
		int wg = lower_emit_value(L, OP_SHR, DT_I32, e->loc, args, 2);
		int first = lower_const_int(L, DT_I32, L->role->a->const_ival, e->loc);
		return lower_arith(L, OPK_SUB, DT_I32, wg, first, e->loc);
	}
	Symbol *s = e->sym;
	if (s->kind == SYM_VAR || s->kind == SYM_FRAG)
		return lower_var_get(L, s->ir, e->loc);
	return s->ir;
}

static int lower_member(Lower *L, Node *e)
{
	int base = e->builtin == B_THREAD_ID ? SREG_TID_X
		   : e->builtin == B_BLOCK_ID ? SREG_CTAID_X
		   : e->builtin == B_BLOCK_DIM ? SREG_NTID_X : SREG_NCTAID_X;
	return lower_sreg(L, (Sreg)(base + e->ival), e->loc);
}

static int lower_index_args(Lower *L, Node *e, int *args, int first)
{
	int n = first;
	for (Node *i = e->list; i; i = i->next)
		args[n++] = lower_expr(L, i);
	return n;
}

static int lower_load(Lower *L, Node *e)
{
	int args[TILEC_MAX_RANK];
	int n = lower_index_args(L, e, args, 0);
	Op *op = lower_emit(L, OP_LOAD, e->ty.dt, e->loc, args, n);
	op->buf = e->a->sym->ir;
	return op->result;
}

static int lower_cast(Lower *L, Node *e)
{
	int a = lower_expr(L, e->a);
	if (L->f->vtypes[a] == e->ty.dt)
		return a;
	return lower_elementwise(L, OP_CAST, e->ty.dt, e, &a, 1);
}

/* cdiv(a, b) = (a + b - 1) / b, the form the grid rule documents for b > 0 */
static int lower_cdiv(Lower *L, Node *e, int a, int b)
{
	DType t = e->ty.dt;
	int one = lower_const_int(L, t, 1, e->loc);
	int sum = lower_arith(L, OPK_ADD, t, a, b, e->loc);
	int num = lower_arith(L, OPK_SUB, t, sum, one, e->loc);
	return lower_arith(L, OPK_DIV, t, num, b, e->loc);
}

static OpCode math_opcode(Builtin b)
{
	switch (b) {
	case B_EXP2: return OP_EXP2;
	case B_LOG2: return OP_LOG2;
	case B_EXP: return OP_EXP;
	case B_LOG: return OP_LOG;
	case B_RCP: return OP_RCP;
	case B_SQRT: return OP_SQRT;
	case B_RSQRT: return OP_RSQRT;
	case B_ABS: return OP_ABS;
	case B_FMA: return OP_FMA;
	case B_MIN: return OP_MIN;
	case B_MAX: return OP_MAX;
	case B_WHERE: return OP_SELECT;
	default: return OP_SHFL;
	}
}

static int lower_builtin_call(Lower *L, Node *e)
{
	if (e->builtin >= B_TMA_LOAD)
		return lower_tile_call(L, e);
	int args[3] = {0, 0, 0};
	int n = 0;
	for (Node *a = e->list; a && n < 3; a = a->next)
		args[n++] = lower_expr(L, a);
	Builtin b = e->builtin;
	if (b == B_BARRIER) {
		lower_emit(L, OP_BARRIER, DT_VOID, e->loc, NULL, 0);
		return -1;
	}
	if (b == B_CDIV)
		return lower_cdiv(L, e, args[0], args[1]);
	if (e->ty.space == SP_FRAG)
		return lower_elementwise(L, math_opcode(b), e->ty.dt, e, args, n);
	Op *op = lower_emit(L, math_opcode(b), e->ty.dt, e->loc, args, n);
	if (op->code == OP_SHFL)
		op->imm = b == B_SHFL_XOR ? SHFL_BFLY : b == B_SHFL_DOWN ? SHFL_DOWN
			  : b == B_SHFL_UP ? SHFL_UP : SHFL_IDX;
	return op->result;
}

static int lower_call(Lower *L, Node *e)
{
	if (e->builtin != B_NONE)
		return lower_builtin_call(L, e);
	if (e->sym->tile_helper || e->b) {
		/* inlined by sema (a tile helper, or a scalar function applied to fragments): its
		 * checked body, then its result */
		lower_block(L, e->b);
		return e->c ? lower_expr(L, e->c) : -1;
	}
	int n = ast_count(e->list);
	int *args = ctx_alloc(L->cx, (size_t)(n + 1) * sizeof(int));
	int i = 0;
	for (Node *a = e->list; a; a = a->next)
		args[i++] = lower_expr(L, a);
	Op *op = lower_emit(L, OP_CALL, e->ty.dt, e->loc, args, n);
	op->imm = e->sym->ir;
	return op->result;
}

int lower_expr(Lower *L, Node *e)
{
	if (e->is_const && e->ty.space == SP_SCALAR)
		return emit_const(L, e);
	switch (e->kind) {
	case N_IDENT: return lower_ident(L, e);
	case N_MEMBER: return lower_member(L, e);
	case N_BINARY: return lower_binary(L, e);
	case N_UNARY: return lower_unary(L, e);
	case N_INDEX: return lower_load(L, e);
	case N_CAST: return lower_cast(L, e);
	case N_CALL: return lower_call(L, e);
	default:
		diag_internal(L->cx, "lower", "unexpected %s expression",
			      ast_kind_name(e->kind));
		return lower_const_int(L, DT_I32, 0, e->loc);
	}
}

/* ---- statements ------------------------------------------------------------ */

/* var x: T[n (, m)]: a buffer of the thread's own, then a zero stored to every element (with
 * constant indices: nothing stands in the way of keeping it in registers) */
static void lower_local_array(Lower *L, Node *st)
{
	Symbol *s = st->sym;
	s->ir = tir_add_buffer(L->cx, L->f, s->name, s->ty, -1, st->loc);
	int rows = s->ty.rank == 2 ? (int)s->ty.dims[0].value : 1;
	int cols = (int)s->ty.dims[s->ty.rank - 1].value;
	Op *z = lower_emit(L, OP_CONST, s->ty.dt, st->loc, NULL, 0);
	for (int r = 0; r < rows; r++)
		for (int c = 0; c < cols; c++) {
			int args[3] = {z->result, 0, 0}, n = 1;
			if (s->ty.rank == 2)
				args[n++] = lower_const_int(L, DT_I32, r, st->loc);
			args[n++] = lower_const_int(L, DT_I32, c, st->loc);
			Op *op = lower_emit(L, OP_STORE, s->ty.dt, st->loc, args, n);
			op->buf = s->ir;
		}
}

static void lower_binding(Lower *L, Node *st)
{
	Symbol *s = st->sym;
	DType t = s->ty.dt;
	if (s->ty.space == SP_LOCAL) {
		lower_local_array(L, st);
		return;
	}
	if (st->kind == N_LET) {
		int v = lower_expr(L, st->b);
		s->ir = v;
		return;
	}
	int var = lower_new_var(L, t, st->loc);
	int init;
	if (st->b) {
		init = lower_expr(L, st->b);
	} else {
		Op *z = lower_emit(L, OP_CONST, t, st->loc, NULL, 0);
		init = z->result; /* imm and fimm are zero */
	}
	lower_var_set(L, var, init, st->loc);
	s->ir = var;
}

static void lower_shared(Lower *L, Node *st)
{
	Symbol *s = st->sym;
	s->ir = tir_add_buffer(L->cx, L->f, s->name, s->ty, -1, st->loc);
	if (st->b) { /* overlay(BASE): share the bytes of BASE's first base */
		int base = st->b->sym->ir;
		while (L->f->bufs[base].overlay >= 0)
			base = L->f->bufs[base].overlay;
		L->f->bufs[s->ir].overlay = base;
	}
}

/* x = v;  x op= v;  t[i] = v;  t[i] op= v (the indices are evaluated once) */
static void lower_assign(Lower *L, Node *st)
{
	Node *t = st->a;
	int v = lower_expr(L, st->b);
	if (t->kind == N_IDENT) {
		int cols = lower_shape(t);
		v = lower_broadcast(L, v, cols, st->loc);
		if (st->op != OPK_NONE) {
			int args[2] = {lower_ident(L, t), v};
			v = cols ? lower_elementwise(L, binary_opcode(st->op), t->ty.dt, t, args, 2)
				 : lower_arith(L, st->op, t->ty.dt, args[0], args[1], st->loc);
		}
		lower_var_set(L, t->sym->ir, v, st->loc);
		return;
	}
	int args[1 + TILEC_MAX_RANK];
	int n = lower_index_args(L, t, args, 1);
	int buf = t->a->sym->ir;
	if (st->op != OPK_NONE) {
		Op *old = lower_emit(L, OP_LOAD, t->ty.dt, t->loc, args + 1, n - 1);
		old->buf = buf;
		v = lower_arith(L, st->op, t->ty.dt, old->result, v, st->loc);
	}
	args[0] = v;
	Op *op = lower_emit(L, OP_STORE, t->ty.dt, st->loc, args, n);
	op->buf = buf;
}

static void lower_stmt(Lower *L, Node *st);

static void lower_else(Lower *L, Node *e)
{
	if (e->kind == N_IF)
		lower_stmt(L, e);
	else
		lower_block(L, e);
}

static void lower_if(Lower *L, Node *st)
{
	int c = lower_expr(L, st->a);
	Op *op = lower_region(L, OP_IF, st->loc, &c, 1);
	lower_in_block(L, op->blocks[0], lower_block, st->b);
	if (st->c)
		lower_in_block(L, op->blocks[1], lower_else, st->c);
}

static void lower_for(Lower *L, Node *st)
{
	DType t = st->sym->ty.dt;
	int args[3];
	args[0] = lower_expr(L, st->a);
	args[1] = lower_expr(L, st->b);
	args[2] = st->c ? lower_expr(L, st->c) : lower_const_int(L, t, 1, st->loc);
	Op *op = lower_emit(L, OP_FOR, t, st->loc, args, 3);
	op->imm = st->ival; /* LOOP_* flags */
	op->blocks[0] = tir_block_new(L->cx);
	st->sym->ir = op->result;
	lower_in_block(L, op->blocks[0], lower_block, st->d);
}

static void lower_condition(Lower *L, Node *cond)
{
	int c = lower_expr(L, cond);
	lower_emit(L, OP_CONDITION, DT_VOID, cond->loc, &c, 1);
}

static void lower_while(Lower *L, Node *st)
{
	Op *op = lower_region(L, OP_WHILE, st->loc, NULL, 0);
	lower_in_block(L, op->blocks[0], lower_condition, st->a);
	lower_in_block(L, op->blocks[1], lower_block, st->b);
}

static void lower_return(Lower *L, Node *st)
{
	if (st->a) {
		int v = lower_expr(L, st->a);
		lower_emit(L, OP_RETURN, L->f->vtypes[v], st->loc, &v, 1);
	} else {
		lower_emit(L, OP_RETURN, DT_VOID, st->loc, NULL, 0);
	}
}

static void lower_stmt(Lower *L, Node *st)
{
	switch (st->kind) {
	case N_LET: case N_VAR: lower_binding(L, st); break;
	case N_SHARED: lower_shared(L, st); break;
	case N_ASSIGN: lower_assign(L, st); break;
	case N_IF: lower_if(L, st); break;
	case N_FOR: lower_for(L, st); break;
	case N_WHILE: lower_while(L, st); break;
	case N_BREAK: lower_emit(L, OP_BREAK, DT_VOID, st->loc, NULL, 0); break;
	case N_CONTINUE: lower_emit(L, OP_CONTINUE, DT_VOID, st->loc, NULL, 0); break;
	case N_RETURN: lower_return(L, st); break;
	case N_EXPR_STMT: lower_expr(L, st->a); break;
	case N_BLOCK: lower_block(L, st); break;
	case N_MBARRIER: case N_ROLE: case N_FRAG: lower_tile_stmt(L, st); break;
	default:
		diag_internal(L->cx, "lower", "unexpected %s statement",
			      ast_kind_name(st->kind));
	}
}

void lower_block(Lower *L, Node *block)
{
	for (Node *st = block->list; st; st = st->next)
		lower_stmt(L, st);
}

/* ---- functions and kernels ------------------------------------------------- */

static GridExpr *lower_grid(Lower *L, Node *e)
{
	GridExpr *g = ctx_alloc(L->cx, sizeof(GridExpr));
	if (e->is_const) {
		g->kind = GRID_CONST;
		g->value = e->const_ival;
	} else if (e->kind == N_IDENT) {
		g->kind = GRID_PARAM;
		g->param = e->sym->index;
	} else if (e->kind == N_BINARY) {
		g->kind = GRID_OP;
		g->op = ast_op_str(e->op);
		g->a = lower_grid(L, e->a);
		g->b = lower_grid(L, e->b);
	} else {
		g->kind = GRID_OP;
		g->op = builtin_name(e->builtin);
		g->a = lower_grid(L, e->list);
		g->b = lower_grid(L, e->list->next);
	}
	return g;
}

static void lower_launch(Lower *L, Node *k)
{
	TirFunc *f = L->f;
	for (int i = 0; i < 3; i++) {
		f->grid[i] = ctx_alloc(L->cx, sizeof(GridExpr));
		f->grid[i]->kind = GRID_CONST;
		f->grid[i]->value = 1;
	}
	for (Node *l = k->c; l; l = l->next) {
		int i = 0;
		for (Node *e = l->list; e && i < 3; e = e->next, i++) {
			if (l->op == LAUNCH_THREADS)
				f->threads[i] = (int)e->const_ival;
			else if (l->op == LAUNCH_CTAS)
				f->ctas_per_sm = (int)e->const_ival;
			else if (l->op == LAUNCH_CLUSTER && e->is_const)
				f->cluster = (int)e->const_ival;
			else if (l->op == LAUNCH_CLUSTER)
				f->cluster_rule = lower_grid(L, e);
			else
				f->grid[i] = lower_grid(L, e);
		}
	}
}

static void lower_params(Lower *L, Node *fn)
{
	TirFunc *f = L->f;
	f->nparams = ast_count(fn->list);
	f->params = ctx_alloc(L->cx, (size_t)(f->nparams + 1) * sizeof(TirParam));
	int i = 0;
	for (Node *p = fn->list; p; p = p->next, i++) {
		Symbol *s = p->sym;
		f->params[i] = (TirParam){s->name, s->ty, -1};
		if (s->ty.space == SP_GLOBAL || s->ty.space == SP_TMA) {
			s->ir = tir_add_buffer(L->cx, f, s->name, s->ty, i, p->loc);
			f->params[i].buf = s->ir;
		} else {
			Op *op = lower_emit(L, OP_PARAM, s->ty.dt, p->loc, NULL, 0);
			op->imm = i;
			s->ir = op->result;
		}
	}
}

static void lower_function(Lower *L, Node *fn, TirFunc *f)
{
	L->f = f;
	L->cur = f->body;
	L->role = NULL;
	L->nroles = 0;
	L->npairs = 0;
	L->role_count = 0;
	if (fn->kind == N_KERNEL)
		for (Node *st = fn->b->list; st; st = st->next)
			L->role_count += st->kind == N_ROLE;
	f->loc = fn->loc;
	lower_params(L, fn);
	if (fn->kind == N_KERNEL)
		lower_launch(L, fn);
	else
		f->ret = fn->a ? fn->a->dtype : DT_VOID;
	lower_block(L, fn->b);
}

static bool emitted(Ctx *cx, int file, Node *it)
{
	if (it->kind == N_FN)
		return !it->sym->tile_helper; /* inlined where it is called */
	return it->kind == N_KERNEL && cx->files[file]->is_main;
}

TirModule *lower_program(Ctx *cx)
{
	Lower L = {.cx = cx, .m = tir_module_new(cx)};
	/* create every function first, so calls can name their index */
	for (int fi = 0; fi < cx->nfiles; fi++)
		for (Node *it = cx->files[fi]->items; it; it = it->next)
			if (emitted(cx, fi, it)) {
				tir_func_new(cx, L.m, it->name, it->kind == N_KERNEL);
				it->sym->ir = L.m->nfuncs - 1;
			}
	for (int fi = 0; fi < cx->nfiles; fi++)
		for (Node *it = cx->files[fi]->items; it; it = it->next)
			if (emitted(cx, fi, it))
				lower_function(&L, it, L.m->funcs[it->sym->ir]);
	return cx->internal_error ? NULL : L.m;
}
