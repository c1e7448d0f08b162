/*
 * import.c: loads a program: the main file and, depth first, every file it
 * imports. An import names a path resolved next to the importing file, then
 * in each -I directory, in order, then in the standard prelude (prelude_dir).
 * Each file is parsed once (by canonical path); importing a file that is still
 * being loaded is a cycle, reported at the import. All top-level names of all
 * files share one namespace (sema).
 */
#define _GNU_SOURCE /* program_invocation_name: argv[0] without driver.c's help */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tilec.h"

/* The prelude relative to the directory of the tilec executable (the install layout,
 * <bindir>/../share/tilec/prelude), and the source tree's copy with the build tree it
 * serves; compiler/CMakeLists.txt sets all three. */
#ifndef TILEC_PRELUDE_REL
#define TILEC_PRELUDE_REL "../share/tilec/prelude"
#endif
#ifndef TILEC_PRELUDE_DIR
#define TILEC_PRELUDE_DIR ""
#endif
#ifndef TILEC_BUILD_DIR
#define TILEC_BUILD_DIR ""
#endif

static bool is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The running executable's canonical path: /proc/self/exe, else argv[0] (searched on PATH
 * when it has no slash). */
static bool self_path(char out[PATH_MAX])
{
	ssize_t n = readlink("/proc/self/exe", out, PATH_MAX - 1);
	if (n > 0) {
		out[n] = '\0';
		return true;
	}
	const char *arg0 = program_invocation_name;
	if (!arg0 || !*arg0)
		return false;
	if (strchr(arg0, '/'))
		return realpath(arg0, out) != NULL;
	const char *path = getenv("PATH");
	for (const char *p = path; p && *p;) {
		const char *end = strchr(p, ':');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		char cand[PATH_MAX];
		if (len && len + strlen(arg0) + 2 <= sizeof cand) {
			memcpy(cand, p, len);
			cand[len] = '/';
			strcpy(cand + len + 1, arg0);
			if (access(cand, X_OK) == 0 && realpath(cand, out))
				return true;
		}
		p = end ? end + 1 : NULL;
	}
	return false;
}

/* Whether path lies under dir (both canonical). */
static bool under(const char *path, const char *dir)
{
	char canon[PATH_MAX];
	if (!*dir || !realpath(dir, canon))
		return false;
	size_t n = strlen(canon);
	return strncmp(path, canon, n) == 0 && path[n] == '/';
}

/*
 * The standard prelude, or NULL: found from the executable's own location, so an installed
 * or moved prefix needs no configuration. Only a program run from inside the build tree
 * (tilec itself, the tests) falls back to the source tree, so that an install missing its
 * prelude fails here rather than only where the sources are gone.
 */
static const char *prelude_dir(void)
{
	static char dir[PATH_MAX];
	static bool done;
	if (done)
		return dir[0] ? dir : NULL;
	done = true;
	char exe[PATH_MAX];
	if (!self_path(exe))
		return NULL;
	char *slash = strrchr(exe, '/');
	if (slash) {
		*slash = '\0';
		char cand[PATH_MAX];
		int n = snprintf(cand, sizeof cand, "%s/%s", exe, TILEC_PRELUDE_REL);
		if (n > 0 && (size_t)n < sizeof cand && is_dir(cand) && realpath(cand, dir))
			return dir;
		*slash = '/';
	}
	if (under(exe, TILEC_BUILD_DIR) && is_dir(TILEC_PRELUDE_DIR) &&
	    strlen(TILEC_PRELUDE_DIR) < sizeof dir) {
		strcpy(dir, TILEC_PRELUDE_DIR);
		return dir;
	}
	dir[0] = '\0';
	return NULL;
}

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
	const char *prelude = prelude_dir();
	if (!prelude)
		return NULL;
	p = ctx_printf(cx, "%s/%s", prelude, name);
	return access(p, R_OK) == 0 ? canonical(cx, p) : NULL;
}

/* The file already loaded under this canonical path, or -1. Each file's
 * canonical path is resolved once: realpath per file and import made a
 * program of many files quadratic in system calls. */
static int find_loaded(Ctx *cx, const char *canon)
{
	for (int i = 0; i < cx->nfiles; i++) {
		SourceFile *f = cx->files[i];
		if (!f->canon_done) {
			f->canon = canonical(cx, f->path);
			f->canon_done = true;
		}
		if (f->canon && strcmp(f->canon, canon) == 0)
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
	if (other < 0)
		return false;
	cx->files[other]->canon = path; /* resolve() made it canonical */
	cx->files[other]->canon_done = true;
	return load_tree(cx, other);
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
