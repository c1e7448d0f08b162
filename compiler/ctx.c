/*
 * ctx.c: the compilation context. Owns an arena (every allocation of a
 * compilation is freed by ctx_destroy at once), the table of source files and
 * the include directories. Allocation failure is the one condition we do not
 * turn into a diagnostic: without memory we cannot report anything, so the
 * arena reports it on stderr and the caller sees a NULL-safe failure path
 * through ctx_failed (internal error).
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "tilec.h"

#define ARENA_BLOCK_SIZE (64 * 1024)

struct ArenaBlock {
	ArenaBlock *next;
	size_t used, cap;
	_Alignas(16) unsigned char data[];
};

Ctx *ctx_create(void)
{
	return calloc(1, sizeof(Ctx));
}

void ctx_destroy(Ctx *cx)
{
	if (!cx)
		return;
	for (ArenaBlock *b = cx->arena, *next; b; b = next) {
		next = b->next;
		free(b);
	}
	free(cx->files);
	free(cx->include_dirs);
	free(cx);
}

static ArenaBlock *arena_grow(Ctx *cx, size_t need)
{
	size_t cap = need > ARENA_BLOCK_SIZE ? need : ARENA_BLOCK_SIZE;
	ArenaBlock *b = malloc(sizeof(ArenaBlock) + cap);
	if (!b)
		return NULL;
	b->used = 0;
	b->cap = cap;
	b->next = cx->arena;
	cx->arena = b;
	return b;
}

void *ctx_alloc(Ctx *cx, size_t size)
{
	size = (size + 15) & ~(size_t)15;
	ArenaBlock *b = cx->arena;
	if (!b || b->cap - b->used < size)
		b = arena_grow(cx, size);
	if (!b) {
		fprintf(stderr, "tilec: out of memory\n");
		exit(3); /* the one exit outside driver.c: nothing can go on */
	}
	void *p = b->data + b->used;
	b->used += size;
	memset(p, 0, size);
	return p;
}

char *ctx_strndup(Ctx *cx, const char *s, size_t n)
{
	char *p = ctx_alloc(cx, n + 1);
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *ctx_strdup(Ctx *cx, const char *s)
{
	return ctx_strndup(cx, s, strlen(s));
}

char *ctx_printf(Ctx *cx, const char *fmt, ...)
{
	va_list ap, ap2;
	va_start(ap, fmt);
	va_copy(ap2, ap);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	char *p = ctx_alloc(cx, (size_t)(n < 0 ? 0 : n) + 1);
	if (n >= 0)
		vsnprintf(p, (size_t)n + 1, fmt, ap2);
	va_end(ap2);
	return p;
}

/* Grows a malloc'd array of pointers; the arena is not used so the table
 * can be resized. */
static bool grow_ptrs(void **arr, int *cap, int need, size_t elem)
{
	if (need <= *cap)
		return true;
	int ncap = *cap ? *cap * 2 : 8;
	while (ncap < need)
		ncap *= 2;
	void *p = realloc(*arr, (size_t)ncap * elem);
	if (!p)
		return false;
	*arr = p;
	*cap = ncap;
	return true;
}

void ctx_add_include_dir(Ctx *cx, const char *dir)
{
	int cap = cx->ninclude_dirs;
	void *arr = cx->include_dirs;
	if (!grow_ptrs(&arr, &cap, cx->ninclude_dirs + 1, sizeof(char *)))
		return;
	cx->include_dirs = arr;
	cx->include_dirs[cx->ninclude_dirs++] = ctx_strdup(cx, dir);
}

int ctx_add_source(Ctx *cx, const char *path, const char *text, size_t len)
{
	void *arr = cx->files;
	if (!grow_ptrs(&arr, &cx->cap_files, cx->nfiles + 1, sizeof(SourceFile *))) {
		diag_internal(cx, "ctx_add_source", "out of memory");
		return -1;
	}
	cx->files = arr;
	SourceFile *f = ctx_alloc(cx, sizeof(SourceFile));
	f->path = ctx_strdup(cx, path);
	f->text = ctx_strndup(cx, text, len);
	f->len = len;
	cx->files[cx->nfiles] = f;
	int fid = cx->nfiles++;
	if (memchr(text, '\0', len))
		diag_error(cx, (Loc){fid, 1, 1}, E_FILE_NUL);
	return fid;
}

int ctx_load_file(Ctx *cx, const char *path, Loc from)
{
	FILE *fp = fopen(path, "rb");
	if (!fp) {
		diag_error(cx, from, E_FILE_READ, path, strerror(errno));
		return -1;
	}
	char *buf = NULL;
	size_t len = 0, cap = 0;
	for (;;) {
		if (len == cap) {
			cap = cap ? cap * 2 : 4096;
			char *nb = realloc(buf, cap);
			if (!nb)
				break;
			buf = nb;
		}
		size_t n = fread(buf + len, 1, cap - len, fp);
		len += n;
		if (n == 0)
			break;
	}
	int err = ferror(fp) ? errno : 0;
	bool bad = err || !buf;
	fclose(fp);
	if (bad) {
		free(buf);
		diag_error(cx, from, E_FILE_READ, path, err ? strerror(err) : "out of memory");
		return -1;
	}
	int fid = ctx_add_source(cx, path, buf, len);
	free(buf);
	return fid;
}

FILE *ctx_stream_open(Ctx *cx, MemStream *ms)
{
	ms->buf = NULL;
	ms->len = 0;
	ms->f = open_memstream(&ms->buf, &ms->len);
	if (!ms->f)
		diag_internal(cx, "output", "cannot open a memory stream");
	return ms->f;
}

char *ctx_stream_close(Ctx *cx, MemStream *ms)
{
	fclose(ms->f);
	char *s = ctx_strndup(cx, ms->buf, ms->len);
	free(ms->buf);
	return s;
}

Define *ctx_find_define(Ctx *cx, const char *name)
{
	for (int i = 0; i < cx->ndefines; i++)
		if (!strcmp(cx->defines[i].name, name))
			return &cx->defines[i];
	return NULL;
}

static bool is_identifier(const char *s, size_t n)
{
	if (n == 0 || !(isalpha((unsigned char)s[0]) || s[0] == '_'))
		return false;
	for (size_t i = 1; i < n; i++)
		if (!(isalnum((unsigned char)s[i]) || s[i] == '_'))
			return false;
	return true;
}

bool ctx_add_define(Ctx *cx, const char *text, const char **why)
{
	const char *eq = strchr(text, '=');
	if (!eq || !is_identifier(text, (size_t)(eq - text))) {
		*why = "expected NAME=VALUE with NAME an identifier";
		return false;
	}
	if ((size_t)(eq - text) > TILE_MAX_NAME_LEN) {
		/* the same limit as names in the source (runtime/include/tile_limits.h) */
		*why = "NAME is longer than " TILE_MAX_NAME_STR " characters";
		return false;
	}
	if (cx->ndefines == TILEC_MAX_DEFINES) {
		*why = "too many -D options (at most 32)";
		return false;
	}
	Define d = {.name = ctx_strndup(cx, text, (size_t)(eq - text)),
		    .text = ctx_strdup(cx, text)};
	const char *v = eq + 1;
	int dt = dtype_from_name(v);
	char *end = NULL;
	errno = 0;
	long long x = strtoll(v, &end, 0);
	if (dt >= 0) {
		d.is_type = true;
		d.dtype = dt;
	} else if (*v && end && !*end && errno == 0) {
		d.value = x;
	} else {
		*why = "VALUE must be an integer or a type name (bf16, f16, f32, i32, i64, bool)";
		return false;
	}
	Define *old = ctx_find_define(cx, d.name);
	if (old)
		*old = d;
	else
		cx->defines[cx->ndefines++] = d;
	return true;
}
