/*
 * tilec_check.c: the file-driven test runner (golden IR, PTX expectations,
 * diagnostics, ptxas). Each .tile test file carries its expectations in
 * comments, so the test and its input are one file:
 *
 *   // expect-error: LINE:COL: message       (diag mode: exactly these errors)
 *   // expect-warning: LINE:COL: message     (diag mode: exactly these warnings; a
 *                                             file with warnings only must compile)
 *   // expect-ptx: substring                 (in order, each on a later line)
 *   // expect-ptx-not: substring             (nowhere in the PTX)
 *   // expect-ptx-count: N substring         (on exactly N lines of the PTX)
 *   // golden: PASS                          (compare the TIR after PASS with
 *                                             NAME.PASS.tir next to the file; the
 *                                             AST after an AST pass, NAME.PASS.ast)
 *   // define: NAME=VALUE                    (as tilec -D NAME=VALUE; in an .expect
 *                                             file, applied to its source)
 *   // same-ptx-as: RELATIVE-PATH            (the PTX equals that file's, byte for
 *                                             byte but LLVM's callseq comments: code
 *                                             written with helpers against the same
 *                                             code written out)
 *
 * Modes:
 *   tilec_check golden FILE      golden TIR and PTX expectations
 *   tilec_check diag FILE        the file's diagnostics, exactly
 *   tilec_check coverage DIR     every diagnostic of diag.def fires for some
 *                                file in DIR
 *   tilec_check ptxas FILE [-I DIR] [-D NAME=VALUE]...
 *                                ptxas assembles the PTX for sm_90a, no spills, no
 *                                warnings, no serialized wgmma pipeline
 *                                (-I, -D as for tilec: one variant of a shipped kernel)
 *
 * Prints [PASS]/[FAIL] lines and exits 0 on success, 1 on failure and 77
 * (CTest's skip code) when ptxas is not installed. TILEC_UPDATE_GOLDEN=1
 * rewrites the golden files for review in the diff.
 */
#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "tilec.h"

#define SKIP 77

static char *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);
	size_t got;
	while (buf && (got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
		n += got;
		if (cap - n - 1 == 0) {
			char *nb = realloc(buf, cap *= 2);
			if (!nb) {
				free(buf);
				buf = NULL;
			}
			buf = nb;
		}
	}
	fclose(f);
	if (buf)
		buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

/* Calls fn(value, arg) for each "// KEY: value" line of the source. */
static int for_each_directive(const char *src, const char *key,
			      void (*fn)(const char *, size_t, void *), void *arg)
{
	char pat[64];
	snprintf(pat, sizeof pat, "// %s: ", key);
	int count = 0;
	for (const char *p = strstr(src, pat); p; p = strstr(p + 1, pat)) {
		const char *v = p + strlen(pat);
		const char *e = strchr(v, '\n');
		size_t n = e ? (size_t)(e - v) : strlen(v);
		while (n && (v[n - 1] == ' ' || v[n - 1] == '\r'))
			n--;
		fn(v, n, arg);
		count++;
	}
	return count;
}

static void add_define(const char *v, size_t n, void *arg)
{
	char text[256];
	const char *why = NULL;
	snprintf(text, sizeof text, "%.*s", (int)n, v);
	if (!ctx_add_define(arg, text, &why))
		printf("[FAIL] bad '// define: %s': %s\n", text, why);
}

/* -I and -D options given after the file (ptxas mode), applied to every context. */
static char **extra_opts;
static int n_extra_opts;
static const char *expect_text; /* an .expect file's text while its source is checked */

/* A context holding the file, with the file's `// define:` lines (and those of the .expect
 * file that names it as its source) and the command line's -I / -D options applied. */
static Ctx *load(const char *path, int *fid)
{
	Ctx *cx = ctx_create();
	for (int i = 0; i + 1 < n_extra_opts; i += 2) {
		if (!strcmp(extra_opts[i], "-I"))
			ctx_add_include_dir(cx, extra_opts[i + 1]);
		else
			add_define(extra_opts[i + 1], strlen(extra_opts[i + 1]), cx);
	}
	char *src = read_all(path, NULL);
	if (src)
		for_each_directive(src, "define", add_define, cx);
	if (expect_text)
		for_each_directive(expect_text, "define", add_define, cx);
	free(src);
	*fid = ctx_load_file(cx, path, (Loc){-1, 0, 0});
	return cx;
}

/* ---- diagnostics ------------------------------------------------------------ */

typedef struct Expected {
	char lines[TILEC_MAX_DIAGS][512];
	int n;
} Expected;

static void collect_line(const char *v, size_t n, void *arg)
{
	Expected *e = arg;
	if (e->n < TILEC_MAX_DIAGS)
		snprintf(e->lines[e->n++], sizeof e->lines[0], "%.*s", (int)n, v);
}

/* Replaces the test file's directory in a message by "$DIR", so expected
 * messages do not depend on where the checkout lives. */
static void hide_dir(const char *path, char *line, size_t size)
{
	char dir[4096], real[4096];
	snprintf(dir, sizeof dir, "%s", path);
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	else
		snprintf(dir, sizeof dir, ".");
	if (!realpath(dir, real))
		return;
	char *hit = strstr(line, real);
	if (!hit)
		return;
	char rest[1024];
	snprintf(rest, sizeof rest, "%s", hit + strlen(real));
	snprintf(hit, size - (size_t)(hit - line), "$DIR%s", rest);
}

/* Compares the diagnostics of one severity with the expected lines, in order. */
static int compare_diags(const char *path, Ctx *cx, Severity sev, const Expected *want)
{
	const char *what = sev == SEV_ERROR ? "error" : "warning";
	int got = 0, fails = 0;
	for (int i = 0; i < cx->ndiags; i++) {
		Diag *d = &cx->diags[i];
		if (d->sev != sev)
			continue;
		char line[600];
		snprintf(line, sizeof line, "%d:%d: %s", d->loc.line, d->loc.col, d->msg);
		hide_dir(path, line, sizeof line);
		if (got >= want->n || strcmp(line, want->lines[got]) != 0) {
			printf("[FAIL] %s: %s %d is\n    %s\n  expected\n    %s\n", path, what,
			       got + 1, line, got < want->n ? want->lines[got] : "(none)");
			fails++;
		}
		got++;
	}
	if (got < want->n) {
		printf("[FAIL] %s: %d %ss, expected %d\n", path, got, what, want->n);
		fails++;
	}
	return fails;
}

static int run_diag(const char *path, bool *fired)
{
	size_t len;
	char *src = read_all(path, &len);
	if (!src) {
		printf("[FAIL] %s: cannot read\n", path);
		return 1;
	}
	Expected want = {0}, want_warn = {0};
	for_each_directive(src, "expect-error", collect_line, &want);
	for_each_directive(src, "expect-warning", collect_line, &want_warn);
	int fid;
	Ctx *cx = load(path, &fid);
	Output out;
	bool ok = fid >= 0 && compile_file(cx, fid, EMIT_META, &(Options){0}, &out);
	int fails = 0;
	/* expected errors: the compile fails; expected warnings only: it succeeds */
	if (want.n + want_warn.n == 0) {
		printf("[FAIL] %s: no expect-error or expect-warning lines\n", path);
		fails++;
	} else if (ok != (want.n == 0)) {
		printf("[FAIL] %s: %s\n", path, ok ? "compiled without errors" : "did not compile");
		fails++;
	}
	if (cx->internal_error) {
		printf("[FAIL] %s: %s\n", path, cx->internal_msg);
		fails++;
	}
	fails += compare_diags(path, cx, SEV_ERROR, &want);
	fails += compare_diags(path, cx, SEV_WARNING, &want_warn);
	/* a diagnostic counts as tested only where its file's expectations hold */
	if (fired && !fails)
		for (int i = 0; i < DIAG_COUNT; i++)
			fired[i] |= cx->diag_fired[i];
	ctx_destroy(cx);
	free(src);
	if (!fails)
		printf("[PASS] %s\n", path);
	return fails ? 1 : 0;
}

static int run_coverage(const char *dir)
{
	bool fired[DIAG_COUNT] = {0};
	DIR *d = opendir(dir);
	if (!d) {
		printf("[FAIL] cannot open %s\n", dir);
		return 1;
	}
	struct dirent *e;
	while ((e = readdir(d))) {
		size_t n = strlen(e->d_name);
		if (n > 5 && strcmp(e->d_name + n - 5, ".tile") == 0) {
			char path[4096];
			snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
			run_diag(path, fired);
		}
	}
	closedir(d);
	int missing = 0;
	for (int i = 0; i < DIAG_COUNT; i++)
		if (!fired[i]) {
			printf("[FAIL] diagnostic %s has no test in %s\n", diag_id_name(i), dir);
			missing++;
		}
	printf("%d of %d diagnostics covered\n", DIAG_COUNT - missing, DIAG_COUNT);
	return missing ? 1 : 0;
}

/* ---- golden TIR and PTX expectations ----------------------------------------- */

typedef struct PtxCheck {
	const char *ptx;
	const char *at;     /* where the next expect-ptx search starts */
	const char *path;
	int fails;
} PtxCheck;

static void expect_ptx(const char *v, size_t n, void *arg)
{
	PtxCheck *c = arg;
	char want[512];
	snprintf(want, sizeof want, "%.*s", (int)n, v);
	const char *hit = strstr(c->at, want);
	if (!hit) {
		printf("[FAIL] %s: expected PTX '%s' (in order) not found\n", c->path, want);
		c->fails++;
		return;
	}
	const char *eol = strchr(hit, '\n');
	c->at = eol ? eol + 1 : hit + strlen(hit);
}

static void expect_ptx_not(const char *v, size_t n, void *arg)
{
	PtxCheck *c = arg;
	char bad[512];
	snprintf(bad, sizeof bad, "%.*s", (int)n, v);
	if (strstr(c->ptx, bad)) {
		printf("[FAIL] %s: PTX contains '%s'\n", c->path, bad);
		c->fails++;
	}
}

static void expect_ptx_count(const char *v, size_t n, void *arg)
{
	PtxCheck *c = arg;
	char what[512];
	snprintf(what, sizeof what, "%.*s", (int)n, v);
	char *end;
	long want = strtol(what, &end, 10);
	while (*end == ' ')
		end++;
	if (end == what || !*end) {
		printf("[FAIL] %s: expect-ptx-count needs 'N substring', got '%s'\n", c->path, what);
		c->fails++;
		return;
	}
	long got = 0;
	for (const char *at = strstr(c->ptx, end); at; at = strstr(at, end)) {
		got++;
		const char *eol = strchr(at, '\n');
		at = eol ? eol + 1 : at + strlen(at);
	}
	if (got != want) {
		printf("[FAIL] %s: PTX has '%s' on %ld lines, expected %ld\n", c->path, end, got, want);
		c->fails++;
	}
}

static char *compile_text(const char *path, Emit emit, Options *opt, char **err)
{
	int fid;
	Ctx *cx = load(path, &fid);
	Output out;
	char *text = NULL;
	if (fid >= 0 && compile_file(cx, fid, emit, opt, &out) && out.text)
		text = strdup(out.text);
	if (!text) {
		char *buf = NULL;
		size_t len = 0;
		FILE *m = open_memstream(&buf, &len);
		diag_print_all(cx, m);
		fclose(m);
		*err = buf;
	}
	ctx_destroy(cx);
	return text;
}

static int check_golden_pass(const char *path, const char *gold_base, const char *pass)
{
	char *buf = NULL, *err = NULL;
	size_t len = 0;
	FILE *dump = open_memstream(&buf, &len);
	Options opt = {.print_after = pass, .stop_after = pass, .dump = dump,
		       .verify_each = true};
	char *tir = compile_text(path, EMIT_TIR, &opt, &err);
	fclose(dump);
	free(tir);
	int fail = 0;
	char gold[4096];
	const char *dot = strrchr(gold_base, '.');
	int stem = dot ? (int)(dot - gold_base) : (int)strlen(gold_base);
	/* an AST pass prints the AST: its golden is a .ast file */
	const Pass *p = pipeline_find_pass(pass);
	snprintf(gold, sizeof gold, "%.*s.%s.%s", stem, gold_base, pass,
		 p && p->kind == PASS_AST ? "ast" : "tir");
	if (err) {
		printf("[FAIL] %s: does not compile:\n%s", path, err);
		fail = 1;
	} else if (getenv("TILEC_UPDATE_GOLDEN")) {
		FILE *g = fopen(gold, "w");
		fail = !g || fputs(buf, g) < 0;
		if (g)
			fclose(g);
	} else {
		char *want = read_all(gold, NULL);
		if (!want || strcmp(want, buf) != 0) {
			printf("[FAIL] %s: output after %s differs from %s\n--- got:\n%s", path,
			       pass, gold, buf);
			fail = 1;
		}
		free(want);
	}
	free(buf);
	free(err);
	return fail;
}

typedef struct GoldenRun {
	int fails;
	const char *path;       /* the source compiled */
	const char *gold_base;  /* the test file: goldens are named after it */
} GoldenRun;

static void golden_pass(const char *v, size_t n, void *arg)
{
	char pass[128];
	snprintf(pass, sizeof pass, "%.*s", (int)n, v);
	GoldenRun *g = arg;
	g->fails += check_golden_pass(g->path, g->gold_base, pass);
}

static int run_golden_on(const char *path, char *src, const char *source);

/* A path named in a directive, relative to the directory of `path`. */
static char *relative_to(const char *path, const char *rel, size_t n)
{
	const char *slash = strrchr(path, '/');
	int dir = slash ? (int)(slash - path) : 1;
	char *out = malloc((size_t)dir + n + 2);
	sprintf(out, "%.*s/%.*s", dir, slash ? path : ".", (int)n, rel);
	return out;
}

typedef struct SamePtx {
	const char *path;
	const char *ptx;
	int fails;
} SamePtx;

/* The first line where two texts differ, with its number: what a failed same-ptx-as names. */
static void print_first_difference(const char *a, const char *b)
{
	int line = 1;
	while (*a && *a == *b) {
		line += *a == '\n';
		a++, b++;
	}
	while (line > 1 && a[-1] != '\n')
		a--, b--;
	printf("       first difference, line %d:\n       < %.*s\n       > %.*s\n", line,
	       (int)strcspn(a, "\n"), a, (int)strcspn(b, "\n"), b);
}

/* ptx without LLVM's "// callseq N, M" comments: NVPTX numbers a module's call sequences
 * with a counter that lives as long as the process, so the second of two compiles in one
 * process (as here) numbers them on from the first. */
static char *without_callseq(const char *ptx)
{
	char *out = malloc(strlen(ptx) + 1), *o = out;
	for (const char *p = ptx; *p;) {
		if (strncmp(p, " // callseq ", 12) == 0)
			p += strcspn(p, "\n");
		else
			*o++ = *p++;
	}
	*o = 0;
	return out;
}

static void same_ptx_as(const char *v, size_t n, void *arg)
{
	SamePtx *c = arg;
	char *other = relative_to(c->path, v, n), *err = NULL;
	char *ptx = compile_text(other, EMIT_PTX, &(Options){0}, &err);
	char *mine = without_callseq(c->ptx), *theirs = ptx ? without_callseq(ptx) : NULL;
	if (!ptx || strcmp(theirs, mine) != 0) {
		printf("[FAIL] %s: PTX differs from %s's%s%s\n", c->path, other,
		       err ? ":\n" : "", err ? err : "");
		if (ptx)
			print_first_difference(mine, theirs);
		c->fails++;
	}
	free(mine);
	free(theirs);
	free(ptx);
	free(err);
	free(other);
}

/* An .expect file holds the expectations for a source kept elsewhere (an
 * example that should read as a tutorial): "// source: RELATIVE-PATH". */
static char *expect_source(const char *path, const char *src)
{
	const char *p = strstr(src, "// source: ");
	if (!p)
		return NULL;
	p += strlen("// source: ");
	return relative_to(path, p, strcspn(p, "\r\n"));
}

static int run_golden(const char *path)
{
	char *src = read_all(path, NULL);
	if (!src) {
		printf("[FAIL] %s: cannot read\n", path);
		return 1;
	}
	char *other = expect_source(path, src);
	if (other) {
		expect_text = src;
		int rc = run_golden_on(path, src, other);
		expect_text = NULL;
		free(other);
		free(src);
		return rc;
	}
	int rc = run_golden_on(path, src, path);
	free(src);
	return rc;
}

static int run_golden_on(const char *path, char *src, const char *source)
{
	GoldenRun g = {0, source, path};
	int npasses = for_each_directive(src, "golden", golden_pass, &g);
	char *err = NULL;
	char *ptx = compile_text(source, EMIT_PTX, &(Options){0}, &err);
	PtxCheck c = {ptx ? ptx : "", ptx ? ptx : "", path, g.fails};
	if (!ptx) {
		printf("[FAIL] %s: no PTX:\n%s", path, err ? err : "");
		c.fails++;
	}
	int nexp = for_each_directive(src, "expect-ptx", expect_ptx, &c);
	for_each_directive(src, "expect-ptx-not", expect_ptx_not, &c);
	for_each_directive(src, "expect-ptx-count", expect_ptx_count, &c);
	SamePtx same = {path, ptx ? ptx : "", 0};
	nexp += for_each_directive(src, "same-ptx-as", same_ptx_as, &same);
	c.fails += same.fails;
	if (npasses + nexp == 0) {
		printf("[FAIL] %s: no golden or expect-ptx lines\n", path);
		c.fails++;
	}
	if (!c.fails)
		printf("[PASS] %s (%d golden, %d ptx expectations)\n", path, npasses, nexp);
	free(ptx);
	free(err);
	return c.fails ? 1 : 0;
}

/* ---- ptxas -------------------------------------------------------------------- */

/* The largest "N bytes spill stores" of ptxas's log (every function's), 0 without. */
static long most_spill_stores(const char *log)
{
	long most = 0;
	for (const char *p = log; (p = strstr(p, " bytes spill stores")) != NULL; p++) {
		const char *q = p;
		while (q > log && q[-1] >= '0' && q[-1] <= '9')
			q--;
		long n = strtol(q, NULL, 10);
		most = n > most ? n : most;
	}
	return most;
}

static int run_ptxas(const char *path)
{
	int fid;
	Ctx *cx = load(path, &fid);
	if (!cubin_find_ptxas(cx)) {
		printf("skipped: ptxas not found (install the CUDA toolkit or set TILEC_PTXAS)\n");
		ctx_destroy(cx);
		return SKIP;
	}
	Output out;
	bool ok = fid >= 0 && compile_file(cx, fid, EMIT_PTX, &(Options){0}, &out);
	unsigned char *cubin = NULL;
	size_t size = 0;
	char *log = NULL;
	ok = ok && cubin_from_ptx(cx, out.text, false, &cubin, &size, &log);
	int fail = !ok;
	if (!ok) {
		diag_print_all(cx, stdout);
		if (cx->tool_error) /* ptxas missing or failing: what was tried and its output */
			printf("[FAIL] %s: %s\n", path, cx->tool_error);
	}
	if (log && most_spill_stores(log) > 0) {
		printf("[FAIL] %s: ptxas reports register spills:\n%s", path, log);
		fail = 1;
	}
	if (log && strstr(log, "warning")) {
		printf("[FAIL] %s: ptxas warnings:\n%s", path, log);
		fail = 1;
	}
	/* an info, not a warning, and invisible in the PTX: every wgmma of the kernel serialized
	 * (C7511, C7518, ...), which cost whole kernels up to 45% (docs/performance.md) */
	if (log && strstr(log, "are serialized")) {
		printf("[FAIL] %s: ptxas serializes the wgmma pipeline:\n%s", path, log);
		fail = 1;
	}
	if (!fail)
		printf("[PASS] %s: ptxas sm_90a, %zu-byte cubin\n%s", path, size, log ? log : "");
	ctx_destroy(cx);
	return fail;
}

int main(int argc, char **argv)
{
	bool opts_ok = argc >= 3 && (argc - 3) % 2 == 0 && (argc == 3 || !strcmp(argv[1], "ptxas"));
	for (int i = 3; opts_ok && i < argc; i += 2)
		opts_ok = !strcmp(argv[i], "-I") || !strcmp(argv[i], "-D");
	if (!opts_ok) {
		fprintf(stderr, "usage: tilec_check golden|diag|coverage PATH\n"
				"       tilec_check ptxas PATH [-I DIR] [-D NAME=VALUE]...\n");
		return 2;
	}
	extra_opts = argv + 3;
	n_extra_opts = argc - 3;
	if (!strcmp(argv[1], "golden"))
		return run_golden(argv[2]);
	if (!strcmp(argv[1], "diag"))
		return run_diag(argv[2], NULL);
	if (!strcmp(argv[1], "coverage"))
		return run_coverage(argv[2]);
	if (!strcmp(argv[1], "ptxas"))
		return run_ptxas(argv[2]);
	fprintf(stderr, "tilec_check: unknown mode '%s'\n", argv[1]);
	return 2;
}
