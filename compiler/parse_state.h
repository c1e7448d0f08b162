/*
 * parse_state.h: what the reentrant scanner and the pure parser share. One
 * ParseState per parsed file, reached as yyextra in the scanner and as a
 * %param in the parser; there is no global state.
 */
#ifndef PARSE_STATE_H
#define PARSE_STATE_H

#include "tilec.h"

typedef struct ParseState {
	Ctx *cx;
	int fid;
	Node *items;
	int line, col;   /* scanner position: start of the next token */
	Loc comment_at;  /* where an open block comment started */
	/* `type NAME = dtype;` aliases of this file, seen by the scanner */
	struct { const char *name; int dtype; } aliases[16];
	int naliases;
	const char *alias_name; /* the identifier behind the last alias TYPE token */
	bool too_deep;   /* E_NESTING_TOO_DEEP reported: once per file is enough */
	/* the type parameters of the helper being parsed (`fn f<T, U>(...)`), and whether a
	 * parameter's element type names each */
	struct { const char *name; Loc loc; bool used; } tparams[TILEC_MAX_TYPE_PARAMS];
	int ntparams;
} ParseState;

/* A list under construction: the tail makes each append O(1), so long
 * statement and argument lists parse in linear time. */
typedef struct NodeList {
	Node *head, *tail;
} NodeList;

/* The dtype an identifier names as a type alias (-D first), or -1. */
int parse_alias(ParseState *ps, const char *name);

typedef struct TokenValue {
	Node *node;
	char *str;
	int64_t ival;
	double fval;
	int dtype;
} TokenValue;

#endif
