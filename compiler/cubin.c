/*
 * cubin.c: PTX to cubin through NVIDIA's ptxas, run as a child process.
 *
 * ptxas is found through $TILEC_PTXAS, then the path CMake found at build
 * time, then PATH. The PTX goes through a private temporary directory; the
 * cubin and ptxas's messages (registers, spills, warnings) come back in
 * memory. ptxas rejecting our PTX is a compiler bug, so it is reported as an
 * internal error with ptxas's own message.
 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tilec.h"

#ifndef TILEC_PTXAS_PATH
#define TILEC_PTXAS_PATH ""
#endif

extern char **environ;

static bool executable(const char *p)
{
	return p && *p && access(p, X_OK) == 0;
}

static const char *search_path(Ctx *cx, const char *name)
{
	const char *path = getenv("PATH");
	if (!path)
		return NULL;
	char *copy = ctx_strdup(cx, path);
	for (char *dir = strtok(copy, ":"); dir; dir = strtok(NULL, ":")) {
		char *p = ctx_printf(cx, "%s/%s", dir, name);
		if (executable(p))
			return p;
	}
	return NULL;
}

const char *cubin_find_ptxas(Ctx *cx)
{
	const char *env = getenv("TILEC_PTXAS");
	if (env && *env)
		return executable(env) ? env : NULL;
	if (executable(TILEC_PTXAS_PATH))
		return TILEC_PTXAS_PATH;
	return search_path(cx, "ptxas");
}

static bool write_file(const char *path, const void *data, size_t n)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		return false;
	bool ok = fwrite(data, 1, n, f) == n;
	return fclose(f) == 0 && ok;
}

static bool read_file(Ctx *cx, const char *path, unsigned char **data, size_t *n)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return false;
	struct stat st;
	bool ok = fstat(fileno(f), &st) == 0;
	if (ok) {
		*n = (size_t)st.st_size;
		*data = ctx_alloc(cx, *n + 1);
		ok = fread(*data, 1, *n, f) == *n;
	}
	fclose(f);
	return ok;
}

static int run_ptxas(const char *ptxas, const char *in, const char *out,
		     const char *log)
{
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	posix_spawn_file_actions_adddup2(&fa, 1, 2);
	char *argv[] = {(char *)ptxas, "-arch=sm_90a", "-O3", "-v", "--warn-on-spills",
			"-o", (char *)out, (char *)in, NULL};
	pid_t pid;
	int rc = posix_spawn(&pid, ptxas, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc != 0)
		return -1;
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void remove_tmp(const char *dir, const char *in, const char *out,
		       const char *log)
{
	unlink(in);
	unlink(out);
	unlink(log);
	rmdir(dir);
}

bool cubin_from_ptx(Ctx *cx, const char *ptx, unsigned char **cubin,
		    size_t *size, char **log)
{
	*log = NULL;
	const char *ptxas = cubin_find_ptxas(cx);
	if (!ptxas) {
		diag_internal(cx, "cubin", "ptxas not found: install the CUDA toolkit "
			      "or set TILEC_PTXAS (PTX output still works: --emit=ptx)");
		return false;
	}
	const char *tmp = getenv("TMPDIR");
	char *dir = ctx_printf(cx, "%s/tilec-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		diag_internal(cx, "cubin", "cannot create a temporary directory: %s",
			      strerror(errno));
		return false;
	}
	char *in = ctx_printf(cx, "%s/k.ptx", dir), *out = ctx_printf(cx, "%s/k.cubin", dir);
	char *lg = ctx_printf(cx, "%s/ptxas.log", dir);
	bool ok = write_file(in, ptx, strlen(ptx));
	int rc = ok ? run_ptxas(ptxas, in, out, lg) : -1;
	unsigned char *text = NULL;
	size_t tn = 0;
	if (read_file(cx, lg, &text, &tn))
		*log = (char *)text;
	ok = rc == 0 && read_file(cx, out, cubin, size);
	if (!ok)
		diag_internal(cx, "cubin", "ptxas failed (status %d): %s", rc,
			      *log ? *log : "no message");
	remove_tmp(dir, in, out, lg);
	return ok;
}
