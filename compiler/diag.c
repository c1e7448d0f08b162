/*
 * diag.c: diagnostics in clang's form.
 *
 *   file:line:col: error: message
 *      14 |     acc = mma(a, b, acc);
 *         |               ^
 *
 * Phases append diagnostics to the context and return; at most
 * TILEC_MAX_DIAGS are kept (the rest are counted), and the driver prints them
 * in order. Every user-facing message comes from diag.def by id, so the test
 * suite can prove each one is produced by some input. Internal errors (broken
 * invariants) take their own path and are never shown as the user's fault.
 */
#include <stdarg.h>
#include <string.h>

#include "tilec.h"

#define DIAG(id, fmt) fmt,
static const char *const diag_formats[] = {
#include "diag.def"
};
#undef DIAG

#define DIAG(id, fmt) #id,
static const char *const diag_names[] = {
#include "diag.def"
};
#undef DIAG

const char *diag_id_name(DiagId id)
{
	return (unsigned)id < DIAG_COUNT ? diag_names[id] : "?";
}

bool ctx_failed(const Ctx *cx)
{
	return cx->nerrors > 0 || cx->internal_error;
}

static void add(Ctx *cx, Severity sev, DiagId id, Loc loc, const char *fmt,
		va_list ap)
{
	if (sev == SEV_ERROR) {
		cx->nerrors++;
		cx->diag_fired[id] = true;
	}
	if (cx->ndiags >= TILEC_MAX_DIAGS)
		return;
	char buf[1024];
	vsnprintf(buf, sizeof buf, fmt, ap);
	Diag *d = &cx->diags[cx->ndiags++];
	d->sev = sev;
	d->id = id;
	d->loc = loc;
	d->msg = ctx_strdup(cx, buf);
}

/* Formats come from diag.def, not from callers, so a non-literal format is
 * intended here. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
void diag_error(Ctx *cx, Loc loc, DiagId id, ...)
{
	va_list ap;
	va_start(ap, id);
	add(cx, SEV_ERROR, id, loc, diag_formats[id], ap);
	va_end(ap);
}

void diag_note(Ctx *cx, Loc loc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	add(cx, SEV_NOTE, DIAG_COUNT, loc, fmt, ap); /* notes have no id */
	va_end(ap);
}
#pragma GCC diagnostic pop

void diag_internal(Ctx *cx, const char *where, const char *fmt, ...)
{
	if (cx->internal_error)
		return; /* keep the first: later ones are usually consequences */
	cx->internal_error = true;
	char msg[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	snprintf(cx->internal_msg, sizeof cx->internal_msg,
		 "tilec: internal error in %s: %s (this is a compiler bug)",
		 where, msg);
}

/* Returns the start of line `line` of file text, or NULL. */
static const char *line_start(const SourceFile *f, int line)
{
	const char *p = f->text, *end = f->text + f->len;
	for (int l = 1; l < line; l++) {
		p = memchr(p, '\n', (size_t)(end - p));
		if (!p)
			return NULL;
		p++;
	}
	return p;
}

/* Prints the source line (tabs expanded) and a caret under column `col`. */
static void print_excerpt(FILE *out, const SourceFile *f, int line, int col)
{
	const char *s = line_start(f, line);
	if (!s)
		return;
	const char *end = f->text + f->len;
	const char *e = memchr(s, '\n', (size_t)(end - s));
	if (!e)
		e = end;
	fprintf(out, "%5d | ", line);
	int width = 0, caret = -1;
	for (const char *p = s; p < e; p++) {
		if (p - s == col - 1)
			caret = width;
		int w = *p == '\t' ? 8 - width % 8 : 1;
		for (int i = 0; i < w; i++)
			fputc(*p == '\t' || (unsigned char)*p < 32 ? ' ' : *p, out);
		width += w;
	}
	if (caret < 0)
		caret = width;
	fprintf(out, "\n      | %*s^\n", caret, "");
}

static const char *sev_name(Severity s)
{
	return s == SEV_ERROR ? "error" : s == SEV_WARNING ? "warning" : "note";
}

void diag_print_all(Ctx *cx, FILE *out)
{
	for (int i = 0; i < cx->ndiags; i++) {
		const Diag *d = &cx->diags[i];
		if (d->loc.file >= 0 && d->loc.file < cx->nfiles) {
			const SourceFile *f = cx->files[d->loc.file];
			fprintf(out, "%s:%d:%d: %s: %s\n", f->path, d->loc.line,
				d->loc.col, sev_name(d->sev), d->msg);
			print_excerpt(out, f, d->loc.line, d->loc.col);
		} else {
			fprintf(out, "tilec: %s: %s\n", sev_name(d->sev), d->msg);
		}
	}
	if (cx->nerrors > cx->ndiags)
		fprintf(out, "tilec: %d more errors not shown\n",
			cx->nerrors - cx->ndiags);
	if (cx->internal_error)
		fprintf(out, "%s\n", cx->internal_msg);
}
