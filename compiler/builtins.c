/*
 * builtins.c: lookup in the builtin table (builtins.def). The typing rule of
 * each builtin lives in sema.c, its lowering in lower.c.
 */
#include <string.h>

#include "tilec.h"

static const struct {
	const char *name;
	BuiltinKind kind;
} table[] = {
	[B_NONE] = {"", BK_VALUE},
#define BUILTIN(id, name, kind) [id] = {name, kind},
#include "builtins.def"
#undef BUILTIN
};

Builtin builtin_lookup(const char *name)
{
	for (int b = 1; b < B_COUNT; b++)
		if (strcmp(table[b].name, name) == 0)
			return (Builtin)b;
	return B_NONE;
}

const char *builtin_name(Builtin b)
{
	return (unsigned)b < B_COUNT ? table[b].name : "?";
}

BuiltinKind builtin_kind(Builtin b)
{
	return (unsigned)b < B_COUNT ? table[b].kind : BK_VALUE;
}
