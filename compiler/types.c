/*
 * types.c: scalar dtypes and tensor types. A Type is a dtype plus, for
 * tensors, a memory space and up to TILEC_MAX_RANK extents. Extents are
 * constants or scalar kernel parameters (symbolic dims).
 */
#include <string.h>

#include "tilec.h"

const char *dtype_name(DType dt)
{
	switch (dt) {
	case DT_VOID: return "void";
	case DT_BOOL: return "bool";
	case DT_I32: return "i32";
	case DT_I64: return "i64";
	case DT_F16: return "f16";
	case DT_BF16: return "bf16";
	case DT_F32: return "f32";
	case DT_TF32: return "tf32";
	case DT_UNTYPED_INT: return "integer literal";
	case DT_UNTYPED_FLOAT: return "float literal";
	case DT_ERROR: return "<error>";
	}
	return "?";
}

/* The dtype a type name spells, or -1. */
int dtype_from_name(const char *s)
{
	static const DType names[] = {DT_BOOL, DT_I32, DT_I64, DT_F16, DT_BF16, DT_F32};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (!strcmp(s, dtype_name(names[i])))
			return (int)names[i];
	return -1;
}

int dtype_bytes(DType dt)
{
	switch (dt) {
	case DT_BOOL: return 1;
	case DT_F16: case DT_BF16: return 2;
	case DT_I32: case DT_F32: case DT_TF32: return 4;
	case DT_I64: return 8;
	default: return 0;
	}
}

bool dtype_is_int(DType dt)
{
	return dt == DT_I32 || dt == DT_I64 || dt == DT_UNTYPED_INT;
}

bool dtype_is_float(DType dt)
{
	return dt == DT_F16 || dt == DT_BF16 || dt == DT_F32 ||
	       dt == DT_UNTYPED_FLOAT;
}

bool dtype_is_numeric(DType dt)
{
	return dtype_is_int(dt) || dtype_is_float(dt);
}

Type type_scalar(DType dt)
{
	Type t;
	memset(&t, 0, sizeof t);
	t.dt = dt;
	t.space = SP_SCALAR;
	return t;
}

char *type_str(Ctx *cx, const Type *t)
{
	if (t->space == SP_SCALAR)
		return ctx_strdup(cx, dtype_name(t->dt));
	static const char *const space[] = {"", "global", "shared", "tma", "mbarrier", "frag",
					    "local"};
	char *s = ctx_printf(cx, "%s %s[", space[t->space], dtype_name(t->dt));
	for (int i = 0; i < t->rank; i++) {
		const Dim *d = &t->dims[i];
		s = d->param >= 0 ? ctx_printf(cx, "%s%s%s", s, i ? ", " : "", d->name)
				  : ctx_printf(cx, "%s%s%lld", s, i ? ", " : "",
					       (long long)d->value);
	}
	s = ctx_printf(cx, "%s]", s);
	if (t->space == SP_TMA) {
		s = ctx_printf(cx, "%s box(", s);
		for (int i = 0; i < t->rank; i++)
			s = ctx_printf(cx, "%s%s%d", s, i ? ", " : "", t->box[i]);
		s = ctx_printf(cx, "%s)", s);
	}
	if (t->swizzle)
		s = ctx_printf(cx, "%s swizzle(%d)", s, t->swizzle);
	if (t->space == SP_MBAR)
		s = ctx_printf(cx, "%s arrive(%d)", s, t->count);
	if (t->space == SP_FRAG && t->rank == 1)
		s = ctx_printf(cx, "%s (%s)", s, t->colvec ? "columns" : "rows");
	return s;
}
