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
} ParseState;

typedef struct TokenValue {
	Node *node;
	char *str;
	int64_t ival;
	double fval;
	int dtype;
} TokenValue;

#endif
