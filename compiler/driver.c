/*
 * driver.c: the tilec command line. Parses options, runs compile_file, writes
 * the output and chooses the exit status:
 *   0  success
 *   1  user error: bad source (diagnostics printed), bad command line, or a
 *      set-up error (ptxas missing or failing, an unwritable output)
 *   3  internal error: a compiler bug, reported as such
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tilec.h"

enum { EXIT_USER = 1, EXIT_INTERNAL = 3 };

typedef struct Args {
	const char *input, *output, *depfile, *header;
	Emit emit;
	Options opt;
} Args;

static const char usage[] =
	"usage: tilec FILE.tile [options]     (FILE '-': read standard input)\n"
	"  -o FILE, -oFILE      write the output to FILE (default: standard output)\n"
	"  --emit=KIND          tokens | ast | tir | ll | ptx | cubin | meta | embed |\n"
	"                       header (default: ptx; cubin needs ptxas ($TILEC_PTXAS, else\n"
	"                       the CUDA toolkit's or PATH's); embed writes a C file with\n"
	"                       the cubin, PTX and launch metadata; header a C header with\n"
	"                       a typed argument struct and launch function per kernel)\n"
	"  --header FILE        with --emit=embed or meta: also write the header to FILE\n"
	"  -I DIR               search DIR for imported files\n"
	"  --module-name=NAME   name the module NAME (meta, embed; default: the file's\n"
	"                       stem): one source built with several -D sets needs one each\n"
	"  -D NAME=VALUE        set constant NAME (an integer) or type alias NAME\n"
	"                       (bf16, f16, ...): specialises one source per build\n"
	"  --print-after=PASS   print the program after PASS (or 'all') to stderr: the\n"
	"                       AST after an AST pass, the tile IR after a TIR pass\n"
	"  --stop-after=PASS    stop the pass pipeline after PASS (after an AST pass\n"
	"                       the output is the AST)\n"
	"  --verify-each        verify the tile IR after every pass\n"
	"  --lineinfo           line tables: each PTX instruction's .tile line (.loc), kept\n"
	"                       in the cubin (ptxas -lineinfo) for profilers; same code\n"
	"  --depfile FILE       write a Make-style dependency file\n"
	"  --list-passes        print the pass pipeline, in order\n"
	"  --help, --version\n";

static bool parse_emit(const char *s, Emit *e)
{
	static const char *const names[] = {"tokens", "ast", "tir", "ll", "ptx",
					    "cubin", "meta", "embed", "header"};
	for (int i = 0; i < 9; i++)
		if (strcmp(s, names[i]) == 0) {
			*e = (Emit)i;
			return true;
		}
	return false;
}

static int bad_usage(const char *fmt, const char *arg)
{
	fprintf(stderr, "tilec: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n(try 'tilec --help')\n");
	return EXIT_USER;
}

/* The value of "--name=value" or "--name value"; advances *i for the latter. */
static const char *option_value(int argc, char **argv, int *i, const char *name)
{
	size_t n = strlen(name);
	if (strncmp(argv[*i], name, n) != 0)
		return NULL;
	if (argv[*i][n] == '=')
		return argv[*i] + n + 1;
	if (argv[*i][n] == '\0' && *i + 1 < argc)
		return argv[++*i];
	return NULL;
}

static void list_passes(void)
{
	int n;
	const Pass *p = pipeline_passes(&n);
	for (int i = 0; i < n; i++)
		printf("%s\n", p[i].name);
}

/* Returns -1 to go on compiling, else the exit status. */
static int parse_args(int argc, char **argv, Args *a)
{
	a->emit = EMIT_PTX;
	for (int i = 1; i < argc; i++) {
		const char *s = argv[i], *v;
		if (!strcmp(s, "--help") || !strcmp(s, "-h")) {
			fputs(usage, stdout);
			return 0;
		} else if (!strcmp(s, "--version")) {
			printf("tilec %s (LLVM 19 NVPTX, sm_90a)\n", TILEC_VERSION);
			return 0;
		} else if (!strcmp(s, "--list-passes")) {
			list_passes();
			return 0;
		} else if (!strcmp(s, "--verify-each")) {
			a->opt.verify_each = true;
		} else if (!strcmp(s, "--lineinfo")) {
			a->opt.lineinfo = true;
		} else if ((v = option_value(argc, argv, &i, "--emit"))) {
			if (!parse_emit(v, &a->emit))
				return bad_usage("unknown --emit kind '%s'", v);
		} else if ((v = option_value(argc, argv, &i, "--print-after"))) {
			if (!pipeline_has_pass(v))
				return bad_usage("unknown pass '%s' (see --list-passes)", v);
			a->opt.print_after = v;
		} else if ((v = option_value(argc, argv, &i, "--stop-after"))) {
			if (!pipeline_has_pass(v) || !strcmp(v, "all"))
				return bad_usage("unknown pass '%s' (see --list-passes)", v);
			a->opt.stop_after = v;
		} else if ((v = option_value(argc, argv, &i, "--module-name"))) {
			if (!*v)
				return bad_usage("%s", "--module-name needs a name");
			for (const char *c = v; *c; c++)
				if (!(isalnum((unsigned char)*c) || *c == '_') || (c == v && isdigit((unsigned char)*c)))
					return bad_usage("--module-name '%s' is not a C identifier", v);
			/* the runtime's metadata holds names of this length at most */
			if (strlen(v) > TILE_MAX_NAME_LEN)
				return bad_usage("--module-name '%.32s...' is longer than "
						 TILE_MAX_NAME_STR " characters", v);
			a->opt.module_name = v;
		} else if ((v = option_value(argc, argv, &i, "--depfile"))) {
			a->depfile = v;
		} else if ((v = option_value(argc, argv, &i, "--header"))) {
			a->header = v;
			a->opt.want_header = true;
		} else if (!strcmp(s, "-o") && i + 1 < argc) {
			a->output = argv[++i];
		} else if (!strncmp(s, "-o", 2) && s[2]) {
			a->output = s + 2; /* -oFILE, as cc takes it */
		} else if (!strncmp(s, "-D", 2) && (s[2] || i + 1 < argc)) {
			/* collected again in main, after the context exists */
			if (!s[2])
				i++;
		} else if (!strncmp(s, "-I", 2) && (s[2] || i + 1 < argc)) {
			/* collected again in main: keeps the order of -I options */
			if (!s[2])
				i++;
		} else if (!strcmp(s, "-o")) {
			return bad_usage("%s", "-o needs a file name");
		} else if (s[0] == '-' && s[1]) {
			return bad_usage("unknown or incomplete option '%s'", s);
		} else if (a->input) {
			return bad_usage("more than one input file ('%s')", s);
		} else {
			a->input = s;
		}
	}
	if (!a->input)
		return bad_usage("%s", "no input file");
	if (a->header && a->emit != EMIT_EMBED && a->emit != EMIT_META)
		return bad_usage("%s", "--header goes with --emit=embed or --emit=meta");
	bool to_stdout = !a->output || !strcmp(a->output, "-");
	if (a->emit == EMIT_CUBIN && to_stdout && isatty(STDOUT_FILENO))
		return bad_usage("%s", "--emit=cubin writes a binary file: refusing to print it "
			      "on a terminal (give -o FILE or redirect standard output)");
	return -1;
}

static void add_include_dirs(Ctx *cx, int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (strncmp(argv[i], "-I", 2) != 0)
			continue;
		if (argv[i][2])
			ctx_add_include_dir(cx, argv[i] + 2);
		else if (i + 1 < argc)
			ctx_add_include_dir(cx, argv[++i]);
	}
}

/* -D options, in order (a later one for the same name wins). */
static bool add_defines(Ctx *cx, int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (strncmp(argv[i], "-D", 2) != 0)
			continue;
		const char *text = argv[i][2] ? argv[i] + 2 : (i + 1 < argc ? argv[++i] : "");
		const char *why = NULL;
		if (!ctx_add_define(cx, text, &why)) {
			fprintf(stderr, "tilec: error: -D %.200s%s: %s\n", text,
				strlen(text) > 200 ? "..." : "", why);
			return false;
		}
	}
	return true;
}

/* Names the file and the reason, as "tilec: error: cannot write 'x': No space left". */
static void write_error(const char *path, int err)
{
	if (path)
		fprintf(stderr, "tilec: error: cannot write '%s': %s\n", path, strerror(err));
	else
		fprintf(stderr, "tilec: error: cannot write to standard output: %s\n",
			strerror(err));
}

/* Closes f (flushes stdout) and keeps the first errno of the write. */
static bool finish_file(FILE *f, bool ok, int *err)
{
	if (!ok && !*err)
		*err = errno ? errno : EIO;
	int rc = f == stdout ? fflush(f) : fclose(f);
	if (rc != 0 && ok)
		*err = errno ? errno : EIO;
	return ok && rc == 0;
}

static bool write_file(const char *output, const Output *out)
{
	bool binary = out->bytes != NULL;
	const void *data = binary ? (const void *)out->bytes : (const void *)out->text;
	size_t n = binary ? out->size : (out->text ? strlen(out->text) : 0);
	const char *path = output && strcmp(output, "-") ? output : NULL;
	errno = 0;
	FILE *f = path ? fopen(path, "wb") : stdout;
	if (!f) {
		write_error(path, errno);
		return false;
	}
	int err = 0;
	if (!finish_file(f, fwrite(data, 1, n, f) == n, &err)) {
		write_error(path, err);
		return false;
	}
	return true;
}

static bool write_depfile(const Args *a, const Output *out)
{
	errno = 0;
	FILE *f = fopen(a->depfile, "w");
	if (!f) {
		write_error(a->depfile, errno);
		return false;
	}
	fprintf(f, "%s:", a->output ? a->output : "-");
	for (int i = 0; i < out->ndeps; i++)
		fprintf(f, " \\\n  %s", out->deps[i]);
	int err = 0;
	if (!finish_file(f, fputc('\n', f) != EOF && !ferror(f), &err)) {
		write_error(a->depfile, err);
		return false;
	}
	return true;
}

/* "-" reads the source from standard input, named "<stdin>" in messages;
 * imports then resolve from the current directory. */
static int load_input(Ctx *cx, const char *input)
{
	if (strcmp(input, "-") != 0)
		return ctx_load_file(cx, input, (Loc){-1, 0, 0});
	size_t len = 0, cap = 1 << 16;
	char *buf = malloc(cap);
	for (size_t got; buf; len += got) {
		if (len == cap) {
			char *nb = realloc(buf, cap *= 2);
			if (!nb)
				free(buf);
			buf = nb;
			if (!buf)
				break;
		}
		got = fread(buf + len, 1, cap - len, stdin);
		if (got == 0)
			break;
	}
	int err = ferror(stdin) ? errno : 0;
	if (!buf || err) {
		diag_error(cx, (Loc){-1, 0, 0}, E_FILE_READ, "<stdin>",
			   err ? strerror(err) : "out of memory");
		free(buf);
		return -1;
	}
	int fid = ctx_add_source(cx, "<stdin>", buf, len);
	free(buf);
	return fid;
}

int main(int argc, char **argv)
{
	Args a = {0};
	int rc = parse_args(argc, argv, &a);
	if (rc >= 0)
		return rc;
	a.opt.dump = stderr;
	Ctx *cx = ctx_create();
	if (!cx)
		return EXIT_INTERNAL;
	add_include_dirs(cx, argc, argv);
	if (!add_defines(cx, argc, argv)) {
		ctx_destroy(cx);
		return EXIT_USER;
	}
	int fid = load_input(cx, a.input);
	Output out;
	bool ok = fid >= 0 && compile_file(cx, fid, a.emit, &a.opt, &out);
	diag_print_all(cx, stderr);
	int errors = cx->nerrors;
	if (cx->tool_error) {
		fprintf(stderr, "tilec: error: %s\n", cx->tool_error);
		errors++;
	}
	if (ok && !write_file(a.output, &out))
		ok = false, rc = EXIT_USER, errors++;
	if (ok && a.header && !write_file(a.header, &(Output){.text = out.header}))
		ok = false, rc = EXIT_USER, errors++;
	if (ok && a.depfile && !write_depfile(&a, &out))
		ok = false, rc = EXIT_USER, errors++;
	/* the closing count, as clang prints it */
	if (errors)
		fprintf(stderr, "%d error%s generated.\n", errors, errors == 1 ? "" : "s");
	if (!ok && rc < 0)
		rc = cx->internal_error ? EXIT_INTERNAL : EXIT_USER;
	ctx_destroy(cx);
	return ok ? 0 : rc;
}
