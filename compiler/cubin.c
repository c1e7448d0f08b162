/*
 * cubin.c: PTX to cubin through NVIDIA's ptxas, run as a child process.
 *
 * ptxas is found through $TILEC_PTXAS, then the path CMake found at build
 * time, then PATH. The PTX goes through a private temporary directory; the
 * cubin and ptxas's messages (registers, spills, warnings) come back in
 * memory. A ptxas that is missing, cannot run or fails is a set-up error
 * (cx->tool_error: exit 1) that names the ptxas tried, shows its output and
 * says how to point tilec at another; only our own broken invariants are
 * internal errors.
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

/* How to choose a ptxas, appended to every ptxas error. */
static const char hint[] =
	"set TILEC_PTXAS=/path/to/ptxas (CUDA 12.0 or newer, for sm_90a) or put the "
	"CUDA toolkit's bin directory on PATH; --emit=ptx needs no ptxas";

/* Exit status of ptxas, or -1 with *spawn_err set when it could not be
 * started, or -2 - signal when a signal ended it. */
static int run_ptxas(const char *ptxas, const char *in, const char *out,
		     const char *log, bool lineinfo, int *spawn_err)
{
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	posix_spawn_file_actions_adddup2(&fa, 1, 2);
	char *argv[] = {(char *)ptxas, "-arch=sm_90a", "-O3", "-v", "--warn-on-spills",
			"-o", (char *)out, (char *)in, lineinfo ? "-lineinfo" : NULL, NULL};
	pid_t pid;
	int rc = posix_spawn(&pid, ptxas, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc != 0) {
		*spawn_err = rc;
		return -1;
	}
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			*spawn_err = errno;
			return -1;
		}
	if (WIFSIGNALED(status))
		return -2 - WTERMSIG(status);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Which ptxas files were tried, for "not found". */
static char *tried(Ctx *cx)
{
	const char *env = getenv("TILEC_PTXAS");
	if (env && *env)
		return ctx_printf(cx, "TILEC_PTXAS='%s' is not an executable file", env);
	return ctx_printf(cx, "TILEC_PTXAS is not set, %s%s%s and there is no 'ptxas' on PATH",
			  *TILEC_PTXAS_PATH ? "the build's ptxas '" : "the build found no ptxas",
			  TILEC_PTXAS_PATH, *TILEC_PTXAS_PATH ? "' is gone" : "");
}

/* A ptxas that ran and failed: its status and output. Output that points
 * at a line of our PTX may also be a compiler bug, so that case says so. */
static void ptxas_failed(Ctx *cx, const char *ptxas, int rc, const char *in,
			 const char *log)
{
	char *status = rc <= -2 ? ctx_printf(cx, "was killed by signal %d", -2 - rc)
				: ctx_printf(cx, "exited with status %d", rc);
	bool names_line = log && strstr(log, in) && strstr(log, ", line ");
	size_t n = log ? strlen(log) : 0;
	const char *nl = n && log[n - 1] != '\n' ? "\n" : "";
	cx->tool_error = ctx_printf(
		cx, "ptxas '%s' %s while assembling the PTX for sm_90a%s\n%s%s%s%s",
		ptxas, status,
		names_line ? " (if this ptxas is CUDA 12.0 or newer, this is a compiler bug: "
			     "please report it with the PTX from --emit=ptx)" : "",
		log && *log ? "ptxas output:\n" : "ptxas printed nothing\n",
		n ? log : "", nl, hint);
}

static void remove_tmp(const char *dir, const char *in, const char *out,
		       const char *log)
{
	unlink(in);
	unlink(out);
	unlink(log);
	rmdir(dir);
}

bool cubin_from_ptx(Ctx *cx, const char *ptx, bool lineinfo, unsigned char **cubin,
		    size_t *size, char **log)
{
	*log = NULL;
	const char *ptxas = cubin_find_ptxas(cx);
	if (!ptxas) {
		cx->tool_error = ctx_printf(cx, "cannot find ptxas, needed for a cubin: %s\n%s",
					    tried(cx), hint);
		return false;
	}
	const char *tmp = getenv("TMPDIR");
	char *dir = ctx_printf(cx, "%s/tilec-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		/* $TMPDIR is the set-up's, not the compiler's */
		cx->tool_error = ctx_printf(cx, "cannot create a temporary directory for ptxas "
					    "in '%s': %s", tmp && *tmp ? tmp : "/tmp", strerror(errno));
		return false;
	}
	char *in = ctx_printf(cx, "%s/k.ptx", dir), *out = ctx_printf(cx, "%s/k.cubin", dir);
	char *lg = ctx_printf(cx, "%s/ptxas.log", dir);
	if (!write_file(in, ptx, strlen(ptx))) {
		cx->tool_error = ctx_printf(cx, "cannot write the PTX for ptxas to '%s': %s", in,
					    strerror(errno));
		remove_tmp(dir, in, out, lg);
		return false;
	}
	int spawn_err = 0;
	int rc = run_ptxas(ptxas, in, out, lg, lineinfo, &spawn_err);
	unsigned char *text = NULL;
	size_t tn = 0;
	if (read_file(cx, lg, &text, &tn))
		*log = (char *)text;
	bool ok = rc == 0 && read_file(cx, out, cubin, size);
	if (rc == -1)
		cx->tool_error = ctx_printf(cx, "cannot run ptxas '%s': %s\n%s", ptxas,
					    strerror(spawn_err), hint);
	else if (rc != 0)
		ptxas_failed(cx, ptxas, rc, in, *log);
	else if (!ok)
		cx->tool_error = ctx_printf(cx, "ptxas '%s' reported success but wrote no "
					    "cubin%s%s\n%s", ptxas, *log && **log ? "; its output:\n" : "",
					    *log ? *log : "", hint);
	remove_tmp(dir, in, out, lg);
	return ok;
}
