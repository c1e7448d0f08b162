/*
 * parse.c: runs the reentrant scanner and the pure parser over one file, and
 * dumps tokens for --emit=tokens. All state lives in a ParseState on the
 * stack, so a test process can parse any number of files.
 */
#include "parse_state.h"
#include "parser.h"
#include "lexer.h"

const char *parser_token_name(int token);

static bool scanner_open(ParseState *ps, Ctx *cx, int fid, yyscan_t *sc,
			 YY_BUFFER_STATE *buf)
{
	ps->cx = cx;
	ps->fid = fid;
	ps->line = 1;
	ps->col = 1;
	if (tile_yylex_init_extra(ps, sc) != 0) {
		diag_internal(cx, "parse", "cannot create the scanner");
		return false;
	}
	const SourceFile *f = cx->files[fid];
	*buf = tile_yy_scan_bytes(f->text, (int)f->len, *sc);
	return true;
}

static void scanner_close(yyscan_t sc, YY_BUFFER_STATE buf)
{
	tile_yy_delete_buffer(buf, sc);
	tile_yylex_destroy(sc);
}

int parse_alias(ParseState *ps, const char *name)
{
	Define *d = ctx_find_define(ps->cx, name);
	if (d && d->is_type) {
		d->used = true;
		return d->dtype;
	}
	for (int i = 0; i < ps->naliases; i++)
		if (!strcmp(ps->aliases[i].name, name))
			return ps->aliases[i].dtype;
	return -1;
}

bool parse_file(Ctx *cx, int fid)
{
	ParseState ps = {0};
	yyscan_t sc;
	YY_BUFFER_STATE buf;
	if (!scanner_open(&ps, cx, fid, &sc, &buf))
		return false;
	int before = cx->nerrors;
	int rc = tile_yyparse(sc, &ps);
	scanner_close(sc, buf);
	cx->files[fid]->items = ps.items;
	return rc == 0 && cx->nerrors == before;
}

bool lex_dump(Ctx *cx, int fid, FILE *out)
{
	ParseState ps = {0};
	yyscan_t sc;
	YY_BUFFER_STATE buf;
	if (!scanner_open(&ps, cx, fid, &sc, &buf))
		return false;
	int before = cx->nerrors;
	TILE_YYSTYPE val;
	TILE_YYLTYPE loc;
	int tok;
	while ((tok = tile_yylex(&val, &loc, sc)) != 0) {
		fprintf(out, "%d:%d %s", loc.first_line, loc.first_column,
			parser_token_name(tok));
		if (tok == IDENT || tok == STRING)
			fprintf(out, " '%s'", val.str);
		else if (tok == INT)
			fprintf(out, " %lld", (long long)val.ival);
		else if (tok == FLOAT)
			fprintf(out, " %g", val.fval);
		fputc('\n', out);
	}
	scanner_close(sc, buf);
	return cx->nerrors == before;
}
