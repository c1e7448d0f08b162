/*
 * tir_print.c: the textual form of Tile IR (--emit=tir, --print-after).
 * Golden tests compare it, so it is deterministic and stable:
 *
 *   kernel @vector_add(%a: global f32[n], ..., n: i32) threads(256, 1, 1) grid((cdiv n 256), 1, 1) smem(0)
 *     buffer #0 a: global f32[n] = param 0
 *     %0 = sreg tid.x : i32
 *     %3 = load #0[%2] : f32
 *     if %5 {
 *       ...
 *     }
 */
#include "tir.h"

void tir_print_grid(FILE *out, const TirFunc *f, const GridExpr *g)
{
	switch (g->kind) {
	case GRID_CONST: fprintf(out, "%lld", (long long)g->value); break;
	case GRID_PARAM: fprintf(out, "%s", f->params[g->param].name); break;
	case GRID_OP:
		fprintf(out, "(%s ", g->op);
		tir_print_grid(out, f, g->a);
		fputc(' ', out);
		tir_print_grid(out, f, g->b);
		fputc(')', out);
		break;
	}
}

static void print_block(Ctx *cx, FILE *out, const TirFunc *f, const Block *b,
			int depth);

static void print_args(FILE *out, const Op *op, int from)
{
	for (int i = from; i < op->nargs; i++)
		fprintf(out, "%s%%%d", i > from ? ", " : "", op->args[i]);
}

static void print_const(FILE *out, const Op *op)
{
	if (dtype_is_float(op->ty))
		fprintf(out, " %.9g", op->fimm);
	else
		fprintf(out, " %lld", (long long)op->imm);
}

/* The operands and immediates of an op, after its name. */
static void print_operands(FILE *out, const TirFunc *f, const Op *op)
{
	switch (op->code) {
	case OP_CONST: print_const(out, op); return;
	case OP_PARAM: fprintf(out, " %s", f->params[op->imm].name); return;
	case OP_SREG: fprintf(out, " %s", tir_sreg_name((Sreg)op->imm)); return;
	case OP_SHFL: fprintf(out, ".%s ", tir_shfl_name((ShflMode)op->imm)); break;
	case OP_LOAD: case OP_LD:
		if (op->attr[0] == MO_ACQUIRE)
			fputs(".acquire", out);
		if (mo_extra_operand(op->attr[0])) {   /* the CTA's rank or the addend: last */
			fprintf(out, ".%s %%%d #%d[", op->attr[0] == MO_PEER ? "peer" : "add",
				op->args[op->nargs - 1], op->buf);
			for (int i = 0; i < op->nargs - 1; i++)
				fprintf(out, "%s%%%d", i ? ", " : "", op->args[i]);
			fputc(']', out);
			return;
		}
		fprintf(out, " #%d[", op->buf);
		print_args(out, op, 0);
		fputc(']', out);
		return;
	case OP_STORE:
		if (op->attr[0] == MO_RELEASE)
			fputs(".release", out);
		fprintf(out, " #%d[", op->buf);
		print_args(out, op, 1);
		fprintf(out, "], %%%d", op->args[0]);
		return;
	case OP_ST:
		if (op->attr[0] == MO_RELEASE)
			fputs(".release", out);
		fprintf(out, " #%d[%%%d], %%%d", op->buf, op->args[0], op->args[1]);
		return;
	case OP_CALL: fprintf(out, " @%lld(", (long long)op->imm); print_args(out, op, 0); fputc(')', out); return;
	default:
		if (op->nargs)
			fputc(' ', out);
		break;
	}
	print_args(out, op, 0);
}

/* The buffers and shapes tile ops carry besides their operands. */
static void print_attrs(FILE *out, const Op *op)
{
	switch (op->code) {
	case OP_MBAR_ARRIVE: case OP_MBAR_ARRIVE_PEER: case OP_MBAR_WAIT: case OP_FENCE_ASYNC:
	case OP_FENCE_PROXY_GLOBAL: case OP_LAUNCH_DEPENDENTS: case OP_WAIT_PREREQUISITES:
		break;
	case OP_MBAR_INIT: fputs(op->attr[0] ? " cluster" : "", out); break;
	case OP_MBAR_EXPECT: fprintf(out, " bytes %lld", (long long)op->imm); break;
	case OP_TMA_LOAD:
		fprintf(out, " tensor #%lld bar #%lld%s", (long long)op->attr[0],
			(long long)op->attr[1], op->attr[2] ? " multicast" : "");
		break;
	case OP_TMA_STORE: case OP_TMA_PREFETCH:
		fprintf(out, " tensor #%lld", (long long)op->attr[0]);
		break;
	case OP_CLUSTER_SYNC:
		fputs(op->imm == CLUSTER_ARRIVE ? " arrive" : op->imm == CLUSTER_WAIT ? " wait" : "", out);
		break;
	case OP_NAMED_SYNC:
		fprintf(out, " id %lld threads %lld%s", (long long)op->imm, (long long)op->attr[0],
			op->attr[1] ? " arrive" : "");
		break;
	case OP_MMA:
		fprintf(out, " a #%d b #%lld k %lld n %lld%s%s%s", op->buf, (long long)op->attr[0],
			(long long)op->attr[1], (long long)op->attr[3],
			op->attr[2] & 2 ? " a-m-major" : "",
			op->attr[2] & 1 ? " b-k-major" : " b-n-major", op->imm ? " async" : "");
		break;
	case OP_MMA_WAIT: fprintf(out, " groups %lld", (long long)op->imm); break;
	case OP_FRAG_SLICE: fprintf(out, " from column %lld", (long long)op->imm); break;
	case OP_FRAG_LOAD: case OP_FRAG_STORE: fputs(op->imm ? " transposed" : "", out); return;
	default: return;
	}
	if (op->buf >= 0 && op->code != OP_MMA)
		fprintf(out, " #%d", op->buf);
}

static void print_op(Ctx *cx, FILE *out, const TirFunc *f, const Op *op, int depth)
{
	fprintf(out, "%*s", depth * 2, "");
	if (op->result >= 0)
		fprintf(out, "%%%d = ", op->result);
	fprintf(out, "%s", tir_op_name(op->code));
	if (op->code == OP_FOR) {
		fprintf(out, " %%%d to %%%d step %%%d%s%s {\n", op->args[0], op->args[1], op->args[2],
			op->imm & LOOP_UNROLL ? " unroll" : op->imm & LOOP_NOUNROLL ? " nounroll" : "",
			op->imm & LOOP_NOHOIST ? " nohoist" : "");
		print_block(cx, out, f, op->blocks[0], depth + 1);
		fprintf(out, "%*s}\n", depth * 2, "");
		return;
	}
	if (op->code == OP_IF || op->code == OP_WHILE) {
		if (op->code == OP_IF)
			fprintf(out, " %%%d", op->args[0]);
		fprintf(out, " {\n");
		print_block(cx, out, f, op->blocks[0], depth + 1);
		if (op->blocks[1] && (op->code == OP_WHILE || op->blocks[1]->nops)) {
			fprintf(out, "%*s} %s {\n", depth * 2, "",
				op->code == OP_IF ? "else" : "do");
			print_block(cx, out, f, op->blocks[1], depth + 1);
		}
		fprintf(out, "%*s}\n", depth * 2, "");
		return;
	}
	if (op->code == OP_ROLE) {
		fprintf(out, " warpgroups %lld..%lld regs %lld barrier %lld {\n", (long long)op->imm,
			(long long)op->attr[0], (long long)op->attr[1], (long long)op->attr[2]);
		print_block(cx, out, f, op->blocks[0], depth + 1);
		fprintf(out, "%*s}\n", depth * 2, "");
		return;
	}
	print_operands(out, f, op);
	print_attrs(out, op);
	if (op->result >= 0 && f->vcols[op->result])
		fprintf(out, " : frag %s[64, %d]", dtype_name(op->ty), f->vcols[op->result]);
	else if (op->result >= 0 || op->code == OP_STORE || op->code == OP_ST)
		fprintf(out, " : %s", dtype_name(op->ty));
	fputc('\n', out);
}

static void print_block(Ctx *cx, FILE *out, const TirFunc *f, const Block *b,
			int depth)
{
	for (int i = 0; i < b->nops; i++)
		print_op(cx, out, f, b->ops[i], depth);
}

static void print_header(Ctx *cx, FILE *out, const TirFunc *f)
{
	fprintf(out, "%s @%s(", f->is_kernel ? "kernel" : "func", f->name);
	for (int i = 0; i < f->nparams; i++)
		fprintf(out, "%s%s: %s", i ? ", " : "", f->params[i].name,
			type_str(cx, &f->params[i].ty));
	fputc(')', out);
	if (!f->is_kernel) {
		fprintf(out, " -> %s\n", dtype_name(f->ret));
		return;
	}
	fprintf(out, " threads(%d, %d, %d) grid(", f->threads[0], f->threads[1],
		f->threads[2]);
	for (int i = 0; i < 3; i++) {
		if (i)
			fprintf(out, ", ");
		tir_print_grid(out, f, f->grid[i]);
	}
	fprintf(out, ")");
	if (f->smem_planned)
		fprintf(out, " smem(%lld)", (long long)f->smem_bytes);
	fputc('\n', out);
}

static void print_buffers(Ctx *cx, FILE *out, const TirFunc *f)
{
	for (int i = 0; i < f->nbufs; i++) {
		const TirBuffer *b = &f->bufs[i];
		fprintf(out, "  buffer #%d %s: %s", i, b->name, type_str(cx, &b->ty));
		if (b->ty.space == SP_GLOBAL)
			fprintf(out, " = param %d\n", b->param);
		else if (b->ty.space == SP_TMA)
			fprintf(out, " = param %d (tensor map)\n", b->param);
		else {
			if (f->smem_planned)
				fprintf(out, " at smem+%lld", (long long)b->offset);
			if (b->overlay >= 0)
				fprintf(out, " overlay #%d", b->overlay);
			fputc('\n', out);
		}
	}
}

void tir_print_module(Ctx *cx, FILE *out, TirModule *m)
{
	for (int i = 0; i < m->nfuncs; i++) {
		TirFunc *f = m->funcs[i];
		if (i)
			fputc('\n', out);
		print_header(cx, out, f);
		print_buffers(cx, out, f);
		print_block(cx, out, f, f->body, 1);
	}
}
