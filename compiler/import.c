/*
 * import.c: loads a program: the main file and, depth first, every file it
 * imports. An import names a path resolved next to the importing file, then
 * in each -I directory, in order, then in the standard prelude (dsl/prelude). Each file is parsed once (by canonical
 * path); importing a file that is still being loaded is a cycle, reported at
 * the import. All top-level names of all files share one namespace (sema).
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tilec.h"

#ifndef TILEC_PRELUDE_DIR
#define TILEC_PRELUDE_DIR "/usr/local/share/tilec/prelude"
#endif

static char *dir_of(Ctx *cx, const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? ctx_strndup(cx, path, (size_t)(slash - path)) : ctx_strdup(cx, ".");
}

/* The canonical name of an existing file, or NULL. */
static char *canonical(Ctx *cx, const char *path)
{
	char buf[PATH_MAX];
	if (!realpath(path, buf))
		return NULL;
	return ctx_strdup(cx, buf);
}

static char *resolve(Ctx *cx, const char *from_path, const char *name)
{
	if (name[0] == '/')
		return access(name, R_OK) == 0 ? canonical(cx, name) : NULL;
	char *p = ctx_printf(cx, "%s/%s", dir_of(cx, from_path), name);
	if (access(p, R_OK) == 0)
		return canonical(cx, p);
	for (int i = 0; i < cx->ninclude_dirs; i++) {
		p = ctx_printf(cx, "%s/%s", cx->include_dirs[i], name);
		if (access(p, R_OK) == 0)
			return canonical(cx, p);
	}
	p = ctx_printf(cx, "%s/%s", TILEC_PRELUDE_DIR, name);
	return access(p, R_OK) == 0 ? canonical(cx, p) : NULL;
}

/* The file already loaded under this canonical path, or -1. */
static int find_loaded(Ctx *cx, const char *canon)
{
	for (int i = 0; i < cx->nfiles; i++) {
		char *c = canonical(cx, cx->files[i]->path);
		if (c && strcmp(c, canon) == 0)
			return i;
	}
	return -1;
}

static bool load_tree(Ctx *cx, int fid);

static bool load_import(Ctx *cx, int fid, Node *imp)
{
	char *path = resolve(cx, cx->files[fid]->path, imp->name);
	if (!path) {
		diag_error(cx, imp->loc, E_IMPORT_NOT_FOUND, imp->name);
		return false;
	}
	int other = find_loaded(cx, path);
	if (other >= 0) {
		if (cx->files[other]->loading) {
			diag_error(cx, imp->loc, E_IMPORT_CYCLE, imp->name);
			return false;
		}
		return true;
	}
	other = ctx_load_file(cx, path, imp->loc);
	return other >= 0 && load_tree(cx, other);
}

static bool load_tree(Ctx *cx, int fid)
{
	SourceFile *f = cx->files[fid];
	if (!parse_file(cx, fid))
		return false;
	f->loading = true;
	bool ok = true;
	for (Node *it = f->items; it; it = it->next)
		if (it->kind == N_IMPORT)
			ok = load_import(cx, fid, it) && ok;
	cx->files[fid]->loading = false;
	return ok;
}

bool import_program(Ctx *cx, int main_fid)
{
	cx->files[main_fid]->is_main = true;
	return load_tree(cx, main_fid);
}
