/*
 * meta.c: parser for tilec's kernel metadata (dsl/metadata.md, version 1) and the evaluator of
 * its grid expressions.
 *
 * Input: the NUL-terminated text of an embedded module. Output: a tile_meta with one
 * tile_kernel_meta per `kernel` block and one tile_param per `param` line; two allocations
 * (kernels, params), sized by a first pass that counts those lines.
 *
 * Each kernel block is read twice: pass A collects parameter names and kinds, so that pass B
 * can resolve names used before their `param` line (`param 0 a ptr f32 1 n` names `n`, param
 * 3; the grid line comes before every param). Names in dims, grid and cluster expressions
 * must be integer scalar parameters. Every error names the line: "metadata line 7: ...".
 *
 * Invariants after a successful parse: params are in ABI order (index i at position i), every
 * kernel has threads and grid, tma recipes pass tile_tmap_recipe_check, grid and cluster
 * expressions are well formed prefix trees of at most TILE_EXPR_CAP nodes in total, constant
 * cluster dims are at least 1 and make at most TILE_MAX_CLUSTER CTAs together.
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* --- a cursor over one line --------------------------------------------------------------- */
typedef struct line {
	const char *p, *end; /* unread part of the line (no newline) */
	int no;              /* 1-based line number */
	tile_err *e;
} line;

static tile_status fail(line *ln, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static tile_status fail(line *ln, const char *fmt, ...)
{
	char what[TILE_ERR_CAP - 32];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	return tile_err_set(ln->e, TILE_ERR_META, "metadata line %d: %s", ln->no, what);
}

/* Reads the token up to the next space, ')' or end of line into buf. */
static bool word(line *ln, char *buf, size_t cap)
{
	size_t n = 0;

	while (ln->p + n < ln->end && ln->p[n] != ' ' && ln->p[n] != ')')
		n++;
	if (n == 0 || n >= cap)
		return false;
	memcpy(buf, ln->p, n);
	buf[n] = '\0';
	ln->p += n;
	return true;
}

static bool space(line *ln)
{
	if (ln->p < ln->end && *ln->p == ' ') {
		ln->p++;
		return true;
	}
	return false;
}

/* Length of the unread part of the line, capped for messages. */
static int rest(const line *ln)
{
	return ln->end - ln->p > 60 ? 60 : (int)(ln->end - ln->p);
}

static bool at_end(const line *ln)
{
	return ln->p == ln->end;
}

static bool is_name(const char *s)
{
	if (!(isalpha((unsigned char)*s) || *s == '_'))
		return false;
	for (s++; *s; s++)
		if (!(isalnum((unsigned char)*s) || *s == '_'))
			return false;
	return true;
}

static bool parse_int(const char *s, int64_t *out)
{
	int64_t v = 0;
	bool neg = *s == '-';

	if (neg)
		s++;
	if (!isdigit((unsigned char)*s))
		return false;
	for (; *s; s++) {
		if (!isdigit((unsigned char)*s) || v > (INT64_MAX - 9) / 10)
			return false;
		v = v * 10 + (*s - '0');
	}
	*out = neg ? -v : v;
	return true;
}

/* " INT" with lo <= INT <= hi */
static tile_status field_int(line *ln, const char *what, int64_t lo, int64_t hi, int64_t *out)
{
	char tok[32];

	if (!space(ln) || !word(ln, tok, sizeof tok) || !parse_int(tok, out))
		return fail(ln, "expected an integer (%s)", what);
	if (*out < lo || *out > hi)
		return fail(ln, "%s %" PRId64 " out of range [%" PRId64 ", %" PRId64 "]", what,
			*out, lo, hi);
	return TILE_OK;
}

static tile_status field_name(line *ln, const char *what, char *buf)
{
	if (!space(ln))
		return fail(ln, "expected a name (%s)", what);
	/* said apart from a malformed name: tilec refuses longer names with the same limit */
	size_t n = 0;
	while (ln->p + n < ln->end && ln->p[n] != ' ' && ln->p[n] != ')')
		n++;
	if (n >= TILE_NAME_CAP)
		return fail(ln, "%s of %zu characters (at most %d)", what, n, TILE_NAME_CAP - 1);
	if (!word(ln, buf, TILE_NAME_CAP) || !is_name(buf))
		return fail(ln, "expected a name (%s)", what);
	return TILE_OK;
}

static tile_status field_end(line *ln)
{
	return at_end(ln) ? TILE_OK : fail(ln, "unexpected text '%.*s' at end of line", rest(ln),
		ln->p);
}

static size_t print_expr(const tile_kernel_meta *k, int i, char *buf, size_t cap);

/* --- types -------------------------------------------------------------------------------- */
static const char *const dtype_names[] = {"f32", "f16", "bf16", "i32", "i64"};
static const size_t dtype_sizes[] = {4, 2, 2, 4, 8};

size_t tile_dtype_size(tile_dtype t)
{
	return dtype_sizes[t];
}

const char *tile_dtype_name(tile_dtype t)
{
	return dtype_names[t];
}

static tile_status field_dtype(line *ln, bool scalar, tile_dtype *out)
{
	char tok[16];

	if (!space(ln) || !word(ln, tok, sizeof tok))
		return fail(ln, "expected a type");
	for (int t = 0; t < 5; t++) {
		if (strcmp(tok, dtype_names[t]) != 0)
			continue;
		if (scalar && (t == TILE_F16 || t == TILE_BF16))
			break;
		*out = (tile_dtype)t;
		return TILE_OK;
	}
	return fail(ln, scalar ? "unknown scalar type '%s' (i32 i64 f32)"
			       : "unknown element type '%s' (f32 f16 bf16 i32 i64)", tok);
}

/* --- names -------------------------------------------------------------------------------- */
static int find_param(const tile_kernel_meta *k, const char *name)
{
	for (int i = 0; i < k->nparams; i++)
		if (strcmp(k->params[i].name, name) == 0)
			return i;
	return -1;
}

/* A dim or grid name: an integer scalar parameter of the kernel. */
static tile_status resolve(line *ln, const tile_kernel_meta *k, const char *name, int *index)
{
	int i = find_param(k, name);

	if (i < 0)
		return fail(ln, "'%s' is not a parameter of this kernel", name);
	if (k->params[i].kind != TILE_PARAM_SCALAR || k->params[i].type == TILE_F32)
		return fail(ln, "'%s' is not an integer scalar parameter", name);
	*index = i;
	return TILE_OK;
}

/* --- grid expressions: expr = int | NAME | "(" op SP expr SP expr ")" --------------------- */
static const char *const op_names[] = {
	[TILE_EXPR_ADD] = "+", [TILE_EXPR_SUB] = "-", [TILE_EXPR_MUL] = "*",
	[TILE_EXPR_DIV] = "/", [TILE_EXPR_MOD] = "%", [TILE_EXPR_CDIV] = "cdiv",
	[TILE_EXPR_MIN] = "min", [TILE_EXPR_MAX] = "max",
};

static tile_status push_node(line *ln, tile_kernel_meta *k, int *n, tile_expr_op op,
	int64_t value)
{
	if (*n >= TILE_EXPR_CAP)
		return fail(ln, "grid and cluster expressions too long (more than %d nodes)",
			TILE_EXPR_CAP);
	k->expr[*n].op = op;
	k->expr[*n].value = value;
	(*n)++;
	return TILE_OK;
}

static tile_status parse_op(line *ln, tile_expr_op *op)
{
	char tok[8];

	if (!word(ln, tok, sizeof tok))
		return fail(ln, "expected an operator");
	for (int o = TILE_EXPR_ADD; o <= TILE_EXPR_MAX; o++) {
		if (strcmp(tok, op_names[o]) == 0) {
			*op = (tile_expr_op)o;
			return TILE_OK;
		}
	}
	return fail(ln, "unknown operator '%s' (+ - * / %% cdiv min max)", tok);
}

static tile_status parse_expr(line *ln, tile_kernel_meta *k, int *n, int depth)
{
	char tok[TILE_NAME_CAP];
	tile_expr_op op = TILE_EXPR_ADD;
	int64_t v = 0;
	int idx = -1;
	tile_status st;

	if (depth > 16)
		return fail(ln, "grid expression nested too deeply");
	if (ln->p < ln->end && *ln->p == '(') {
		ln->p++;
		if ((st = parse_op(ln, &op)) || (st = push_node(ln, k, n, op, 0)))
			return st;
		for (int side = 0; side < 2; side++) {
			if (!space(ln))
				return fail(ln, "expected ' ' and an operand in a grid expression");
			if ((st = parse_expr(ln, k, n, depth + 1)))
				return st;
		}
		if (ln->p >= ln->end || *ln->p != ')')
			return fail(ln, "expected ')' in a grid expression");
		ln->p++;
		return TILE_OK;
	}
	if (!word(ln, tok, sizeof tok))
		return fail(ln, "expected a grid expression");
	if (parse_int(tok, &v))
		return push_node(ln, k, n, TILE_EXPR_INT, v);
	if (!is_name(tok))
		return fail(ln, "bad token '%s' in a grid expression", tok);
	if ((st = resolve(ln, k, tok, &idx)))
		return st;
	return push_node(ln, k, n, TILE_EXPR_PARAM, idx);
}

static tile_status parse_grid(line *ln, tile_kernel_meta *k)
{
	tile_status st;

	for (int d = 0; d < 3; d++) {
		if (!space(ln))
			return fail(ln, "grid needs three expressions (x y z)");
		k->grid[d] = k->nexpr;
		if ((st = parse_expr(ln, k, &k->nexpr, 0)))
			return st;
	}
	return field_end(ln);
}

/* --- items -------------------------------------------------------------------------------- */
static tile_status parse_dims3(line *ln, const char *what, unsigned int out[3])
{
	int64_t v = 0;
	tile_status st;

	for (int d = 0; d < 3; d++) {
		if ((st = field_int(ln, what, 1, 1 << 30, &v)))
			return st;
		out[d] = (unsigned int)v;
	}
	return field_end(ln);
}

static tile_status parse_dim(line *ln, const tile_kernel_meta *k, tile_dim *d)
{
	char tok[TILE_NAME_CAP];

	if (!space(ln) || !word(ln, tok, sizeof tok))
		return fail(ln, "expected a dim (an integer or a scalar parameter)");
	d->param = -1;
	if (parse_int(tok, &d->value))
		return d->value >= 0 ? TILE_OK : fail(ln, "negative dim %s", tok);
	if (!is_name(tok))
		return fail(ln, "bad dim '%s'", tok);
	return resolve(ln, k, tok, &d->param);
}

static tile_status parse_swizzle(line *ln, tile_param *p)
{
	char tok[16];

	if (!space(ln) || !word(ln, tok, sizeof tok) || strcmp(tok, "swizzle") != 0)
		return fail(ln, "expected 'swizzle' after the box of '%s'", p->name);
	if (!space(ln) || !word(ln, tok, sizeof tok))
		return fail(ln, "expected a swizzle mode (none 32 64 128)");
	if (strcmp(tok, "none") == 0)
		p->swizzle = 0;
	else if (strcmp(tok, "32") == 0 || strcmp(tok, "64") == 0 || strcmp(tok, "128") == 0)
		p->swizzle = (int)strtol(tok, NULL, 10);
	else
		return fail(ln, "unknown swizzle '%s' (none 32 64 128)", tok);
	return TILE_OK;
}

static tile_status parse_box(line *ln, tile_param *p)
{
	char tok[16];
	int64_t v = 0;
	tile_status st;

	if (!space(ln) || !word(ln, tok, sizeof tok) || strcmp(tok, "box") != 0)
		return fail(ln, "expected 'box' after the dims of tma parameter '%s'", p->name);
	for (int i = 0; i < p->rank; i++) {
		if ((st = field_int(ln, "box dim", 0, UINT32_MAX, &v)))
			return st;
		p->box[i] = (uint32_t)v;
	}
	tile_err why;

	if ((st = parse_swizzle(ln, p)))
		return st;
	if (tile_tmap_recipe_check(p, &why))
		return fail(ln, "%s", why.msg);
	return TILE_OK;
}

/* ptr/tma: T RANK D0 .. Dn-1 [box B0 .. Bn-1 swizzle S] */
static tile_status parse_tensor(line *ln, const tile_kernel_meta *k, tile_param *p)
{
	int64_t rank = 0;
	int max = p->kind == TILE_PARAM_TMA ? TILE_TMA_MAX_RANK : TILE_MAX_RANK;
	tile_status st;

	if ((st = field_dtype(ln, false, &p->type)))
		return st;
	if ((st = field_int(ln, "rank", 1, max, &rank)))
		return st;
	p->rank = (int)rank;
	for (int i = 0; i < p->rank; i++)
		if ((st = parse_dim(ln, k, &p->dims[i])))
			return st;
	if (p->kind == TILE_PARAM_TMA && (st = parse_box(ln, p)))
		return st;
	return field_end(ln);
}

/* Pass A: "param I NAME KIND [T]": index, name, kind and scalar type. */
static tile_status parse_param_head(line *ln, tile_kernel_meta *k, tile_param *p)
{
	char kind[16];
	int64_t index = 0;
	tile_status st;

	if ((st = field_int(ln, "param index", 0, TILE_MAX_PARAMS - 1, &index)))
		return st;
	if (index != k->nparams)
		return fail(ln, "param index %" PRId64 " out of order (expected %d)", index,
			k->nparams);
	if ((st = field_name(ln, "param name", p->name)))
		return st;
	if (find_param(k, p->name) >= 0)
		return fail(ln, "duplicate parameter '%s'", p->name);
	if (!space(ln) || !word(ln, kind, sizeof kind))
		return fail(ln, "expected a param kind (scalar ptr tma)");
	if (strcmp(kind, "scalar") == 0)
		p->kind = TILE_PARAM_SCALAR;
	else if (strcmp(kind, "ptr") == 0)
		p->kind = TILE_PARAM_PTR;
	else if (strcmp(kind, "tma") == 0)
		p->kind = TILE_PARAM_TMA;
	else
		return fail(ln, "unknown param kind '%s' (scalar ptr tma)", kind);
	if (p->kind != TILE_PARAM_SCALAR)
		return TILE_OK;
	if ((st = field_dtype(ln, true, &p->type)))
		return st;
	return field_end(ln);
}

/* --- lines and blocks --------------------------------------------------------------------- */
typedef struct reader {
	const char *p;  /* start of the next line */
	int no;         /* number of the next line */
	tile_err *e;
} reader;

/* Next line that is not blank or a comment; false at the end of the text. */
static bool next_line(reader *r, line *ln)
{
	while (*r->p) {
		const char *start = r->p, *nl = strchr(start, '\n');
		const char *end = nl ? nl : start + strlen(start);
		ln->no = r->no++;
		r->p = nl ? nl + 1 : end;
		if (end > start && end[-1] == '\r')
			end--;
		ln->p = start;
		ln->end = end;
		ln->e = r->e;
		while (ln->p < end && *ln->p == ' ')
			ln->p++;
		if (ln->p < end && *ln->p != '#')
			return true;
	}
	return false;
}

static bool keyword(line *ln, const char *kw)
{
	size_t n = strlen(kw);

	if ((size_t)(ln->end - ln->p) < n || memcmp(ln->p, kw, n) != 0)
		return false;
	if (ln->p + n != ln->end && ln->p[n] != ' ')
		return false;
	ln->p += n;
	return true;
}

/* Pass A over one kernel block: parameter heads. Leaves the reader where it was. */
static tile_status scan_params(reader r, tile_kernel_meta *k, int cap)
{
	line ln;
	tile_status st;

	while (next_line(&r, &ln) && !keyword(&ln, "end")) {
		if (!keyword(&ln, "param"))
			continue;
		if (k->nparams >= cap)
			return fail(&ln, "more parameters than counted");
		if ((st = parse_param_head(&ln, k, &k->params[k->nparams])))
			return st;
		k->nparams++;
	}
	return TILE_OK;
}

static void skip_fields(line *ln, int n)
{
	char tok[TILE_NAME_CAP];

	for (int f = 0; f < n; f++)
		if (!space(ln) || !word(ln, tok, sizeof tok))
			return;
}

typedef struct seen {
	bool threads, grid, smem, cluster;
} seen;

static tile_status once(line *ln, bool *flag, const char *item)
{
	if (*flag)
		return fail(ln, "duplicate '%s' line", item);
	*flag = true;
	return TILE_OK;
}

/* "x y z" of a cluster line, constants as numbers and expressions as written. */
static void cluster_text(const tile_kernel_meta *k, char *buf, size_t cap)
{
	size_t len = 0;

	buf[0] = '\0';
	for (int d = 0; d < 3 && len < cap; d++) {
		if (d)
			len += (size_t)snprintf(buf + len, cap - len, " ");
		if (len >= cap)
			break;
		if (k->cluster_expr[d] < 0)
			len += (size_t)snprintf(buf + len, cap - len, "%u", k->cluster[d]);
		else
			len += print_expr(k, k->cluster_expr[d], buf + len, cap - len);
	}
}

/* Integer literals stay constants, checked here as they always were, so that a bad constant
 * cluster fails at load; any other expression is kept in expr and checked at launch. The
 * product of the constants is formed in 64 bits and stops past TILE_MAX_CLUSTER (at most
 * 16 x 2^30), so it wraps neither 32 bits (6700417 x 641 x 1 is 2^32 + 1) nor 64. */
static tile_status parse_cluster(line *ln, tile_kernel_meta *k)
{
	char tok[32], text[200];
	uint64_t ctas = 1;
	tile_status st;

	for (int d = 0; d < 3; d++) {
		const char *at;
		int64_t v = 0;
		if (!space(ln))
			return fail(ln, "cluster needs three expressions (x y z)");
		at = ln->p;
		if (word(ln, tok, sizeof tok) && parse_int(tok, &v)) {
			if (v < 1 || v > 1 << 30)
				return fail(ln, "cluster %" PRId64 " out of range [1, %d]", v,
					1 << 30);
			k->cluster[d] = (unsigned int)v;
			k->cluster_expr[d] = -1;
			continue;
		}
		ln->p = at;
		k->cluster[d] = 0;
		k->cluster_expr[d] = k->nexpr;
		if ((st = parse_expr(ln, k, &k->nexpr, 0)))
			return st;
	}
	if ((st = field_end(ln)))
		return st;
	for (int d = 0; d < 3 && ctas <= TILE_MAX_CLUSTER; d++)
		ctas *= k->cluster_expr[d] < 0 ? k->cluster[d] : 1;
	if (ctas <= TILE_MAX_CLUSTER)
		return TILE_OK;
	cluster_text(k, text, sizeof text);
	return fail(ln, "cluster %s makes more than %d CTAs", text, TILE_MAX_CLUSTER);
}

/* Pass B, one item line. *param counts the param lines seen so far. */
static tile_status parse_item(line *ln, tile_kernel_meta *k, seen *s, int *param)
{
	int64_t v = 0;
	tile_status st;

	if (keyword(ln, "threads"))
		return (st = once(ln, &s->threads, "threads")) ? st
			: parse_dims3(ln, "threads", k->threads);
	if (keyword(ln, "grid"))
		return (st = once(ln, &s->grid, "grid")) ? st : parse_grid(ln, k);
	if (keyword(ln, "cluster"))
		return (st = once(ln, &s->cluster, "cluster")) ? st : parse_cluster(ln, k);
	if (keyword(ln, "smem")) {
		if ((st = once(ln, &s->smem, "smem")) ||
		    (st = field_int(ln, "smem bytes", 0, UINT32_MAX, &v)))
			return st;
		k->smem = (uint32_t)v;
		return field_end(ln);
	}
	if (keyword(ln, "param")) {
		tile_param *p = &k->params[(*param)++];
		skip_fields(ln, 3); /* pass A read index, name, kind (and a scalar's type) */
		return p->kind == TILE_PARAM_SCALAR ? TILE_OK : parse_tensor(ln, k, p);
	}
	return fail(ln, "unknown item '%.*s' (threads grid smem cluster param end)", rest(ln),
		ln->p);
}

static tile_status parse_kernel(reader *r, line *ln, tile_kernel_meta *k, int cap)
{
	seen s = {false, false, false, false};
	int param = 0;
	tile_status st;

	if ((st = field_name(ln, "kernel name", k->name)) || (st = field_end(ln)))
		return st;
	k->cluster[0] = k->cluster[1] = k->cluster[2] = 1;
	k->cluster_expr[0] = k->cluster_expr[1] = k->cluster_expr[2] = -1;
	if ((st = scan_params(*r, k, cap)))
		return st;
	for (;;) {
		if (!next_line(r, ln))
			return tile_err_set(r->e, TILE_ERR_META,
				"metadata: kernel '%s' has no 'end' line", k->name);
		if (keyword(ln, "end"))
			break;
		if ((st = parse_item(ln, k, &s, &param)))
			return st;
	}
	if ((st = field_end(ln)))
		return st;
	if (!s.threads || !s.grid)
		return fail(ln, "kernel needs a 'threads' and a 'grid' line (kernel '%s')",
			k->name);
	return TILE_OK;
}

/* --- the whole text ----------------------------------------------------------------------- */
static tile_status parse_header(reader *r, tile_meta *m)
{
	line ln;
	char version[16] = "";
	tile_status st;

	if (!next_line(r, &ln) || !keyword(&ln, "tilec-meta"))
		return tile_err_set(r->e, TILE_ERR_META,
			"metadata: does not start with 'tilec-meta 1'");
	if (!space(&ln) || !word(&ln, version, sizeof version) || strcmp(version, "1") != 0)
		return fail(&ln, "unsupported metadata version '%s' (this runtime reads 1)",
			version);
	if ((st = field_end(&ln)))
		return st;
	if (!next_line(r, &ln) || !keyword(&ln, "module"))
		return tile_err_set(r->e, TILE_ERR_META, "metadata: expected a 'module NAME' line");
	if ((st = field_name(&ln, "module name", m->module)))
		return st;
	return field_end(&ln);
}

static void count_lines(const char *text, int *kernels, int *params)
{
	reader r = {text, 1, NULL};
	line ln;

	*kernels = *params = 0;
	while (next_line(&r, &ln)) {
		*kernels += keyword(&ln, "kernel");
		*params += keyword(&ln, "param");
	}
}

static tile_status parse_kernels(reader *r, tile_meta *m)
{
	line ln;
	int used = 0;
	tile_status st;

	while (next_line(r, &ln)) {
		tile_kernel_meta *k = &m->kernels[m->nkernels];
		if (!keyword(&ln, "kernel"))
			return fail(&ln, "expected 'kernel NAME', saw '%.*s'", rest(&ln), ln.p);
		k->params = m->params + used;
		if ((st = parse_kernel(r, &ln, k, m->nparams - used)))
			return st;
		for (int i = 0; i < m->nkernels; i++)
			if (strcmp(m->kernels[i].name, k->name) == 0)
				return fail(&ln, "duplicate kernel '%s'", k->name);
		used += k->nparams;
		m->nkernels++;
	}
	return TILE_OK;
}

tile_status tile_meta_parse(const tile_allocator *a, const char *text, tile_meta *out,
	tile_err *e)
{
	reader r = {text, 1, e};
	int nk, np;
	tile_status st;

	memset(out, 0, sizeof *out);
	if (!text)
		return tile_err_set(e, TILE_ERR_META, "metadata: missing (NULL text)");
	count_lines(text, &nk, &np);
	out->kernels = tile_host_alloc(a, (size_t)nk * sizeof *out->kernels);
	out->params = tile_host_alloc(a, (size_t)np * sizeof *out->params);
	out->nparams = np;
	if (!out->kernels || !out->params) {
		tile_meta_free(a, out);
		return tile_err_set(e, TILE_ERR_NOMEM, "metadata: out of host memory");
	}
	st = parse_header(&r, out);
	if (!st)
		st = parse_kernels(&r, out);
	if (st)
		tile_meta_free(a, out);
	return st;
}

void tile_meta_free(const tile_allocator *a, tile_meta *m)
{
	tile_host_free(a, m->kernels);
	tile_host_free(a, m->params);
	memset(m, 0, sizeof *m);
}

const tile_kernel_meta *tile_meta_find(const tile_meta *m, const char *name)
{
	for (int i = 0; i < m->nkernels; i++)
		if (strcmp(m->kernels[i].name, name) == 0)
			return &m->kernels[i];
	return NULL;
}

/* --- evaluation --------------------------------------------------------------------------- */
static int print_node(const tile_kernel_meta *k, int i, char *buf, size_t cap, size_t *len)
{
	const tile_expr *x = &k->expr[i];
	size_t n = *len < cap ? cap - *len : 0;

	if (x->op == TILE_EXPR_INT) {
		*len += (size_t)snprintf(buf + (cap - n), n, "%" PRId64, x->value);
		return i + 1;
	}
	if (x->op == TILE_EXPR_PARAM) {
		*len += (size_t)snprintf(buf + (cap - n), n, "%s", k->params[x->value].name);
		return i + 1;
	}
	*len += (size_t)snprintf(buf + (cap - n), n, "(%s ", op_names[x->op]);
	i = print_node(k, i + 1, buf, cap, len);
	n = *len < cap ? cap - *len : 0;
	*len += (size_t)snprintf(buf + (cap - n), n, " ");
	i = print_node(k, i, buf, cap, len);
	n = *len < cap ? cap - *len : 0;
	*len += (size_t)snprintf(buf + (cap - n), n, ")");
	return i;
}

/* The expression at expr[i] into buf (truncated to cap); its full length, as snprintf. */
static size_t print_expr(const tile_kernel_meta *k, int i, char *buf, size_t cap)
{
	size_t len = 0;

	if (cap)
		buf[0] = '\0';
	print_node(k, i, buf, cap, &len);
	return len;
}

void tile_expr_text(const tile_kernel_meta *k, int i, char *buf, size_t cap)
{
	print_expr(k, i, buf, cap);
}

static bool apply(tile_expr_op op, int64_t a, int64_t b, int64_t *r)
{
	switch (op) {
	case TILE_EXPR_ADD: return !__builtin_add_overflow(a, b, r);
	case TILE_EXPR_SUB: return !__builtin_sub_overflow(a, b, r);
	case TILE_EXPR_MUL: return !__builtin_mul_overflow(a, b, r);
	case TILE_EXPR_MIN: *r = a < b ? a : b; return true;
	case TILE_EXPR_MAX: *r = a > b ? a : b; return true;
	case TILE_EXPR_DIV:
	case TILE_EXPR_MOD:
		if (b == 0 || (a == INT64_MIN && b == -1))
			return false;
		*r = op == TILE_EXPR_DIV ? a / b : a % b;
		return true;
	case TILE_EXPR_CDIV:
		if (b <= 0)
			return false;
		*r = a / b + (a % b != 0 && a > 0);
		return true;
	default:
		return false;
	}
}

/* Evaluates the prefix tree at *i; false on division by zero, cdiv by b <= 0, overflow. */
static bool eval(const tile_kernel_meta *k, int *i, const int64_t *scalars, int64_t *out)
{
	const tile_expr *x = &k->expr[(*i)++];
	int64_t a = 0, b = 0;

	if (x->op == TILE_EXPR_INT) {
		*out = x->value;
		return true;
	}
	if (x->op == TILE_EXPR_PARAM) {
		*out = scalars[x->value];
		return true;
	}
	return eval(k, i, scalars, &a) && eval(k, i, scalars, &b) && apply(x->op, a, b, out);
}

/* Launch dimension d (what: "grid" or "cluster") from expression i into *v; an error names
 * the expression's text, formed only then (this runs on every launch). */
static tile_status eval_dim(const tile_kernel_meta *k, int i, const int64_t *scalars,
	const char *what, int d, int64_t *v, tile_err *e)
{
	static const char axis[] = "xyz";
	int at = i;
	char text[160];
	bool ok = eval(k, &at, scalars, v);
	if (ok && *v >= 1)
		return TILE_OK;
	print_expr(k, i, text, sizeof text);
	if (!ok)
		return tile_err_set(e, TILE_ERR_LAUNCH,
			"kernel '%s': %s %c = %s divides by zero or overflows", k->name, what,
			axis[d], text);
	return tile_err_set(e, TILE_ERR_LAUNCH, "kernel '%s': %s %c = %s is %" PRId64
		", must be at least 1", k->name, what, axis[d], text, *v);
}

tile_status tile_grid_eval(const tile_kernel_meta *k, const int64_t *scalars, int64_t grid[3],
	tile_err *e)
{
	for (int d = 0; d < 3; d++) {
		tile_status st = eval_dim(k, k->grid[d], scalars, "grid", d, &grid[d], e);
		if (st != TILE_OK)
			return st;
	}
	return TILE_OK;
}

bool tile_cluster_has_expr(const tile_kernel_meta *k)
{
	return k->cluster_expr[0] >= 0 || k->cluster_expr[1] >= 0 || k->cluster_expr[2] >= 0;
}

tile_status tile_cluster_eval(const tile_kernel_meta *k, const int64_t *scalars,
	unsigned int cluster[3], tile_err *e)
{
	static const char axis[] = "xyz";
	int64_t v[3];
	uint64_t ctas = 1;
	char named[600] = "", text[160];
	size_t len = 0;

	for (int d = 0; d < 3; d++) {
		tile_status st = TILE_OK;
		if (k->cluster_expr[d] < 0)
			v[d] = k->cluster[d];
		else
			st = eval_dim(k, k->cluster_expr[d], scalars, "cluster", d, &v[d], e);
		if (st != TILE_OK)
			return st;
	}
	/* a dim above the limit counts as TILE_MAX_CLUSTER + 1 and the product stops past
	 * the limit, so it cannot wrap, whatever the expressions gave */
	for (int d = 0; d < 3 && ctas <= TILE_MAX_CLUSTER; d++)
		ctas *= v[d] > TILE_MAX_CLUSTER ? TILE_MAX_CLUSTER + 1 : (uint64_t)v[d];
	if (ctas > TILE_MAX_CLUSTER) {
		for (int d = 0; d < 3 && len < sizeof named; d++) {
			if (k->cluster_expr[d] < 0)
				continue;
			print_expr(k, k->cluster_expr[d], text, sizeof text);
			len += (size_t)snprintf(named + len, sizeof named - len, "%s%c = %s is %"
				PRId64, len ? ", " : "", axis[d], text, v[d]);
		}
		return tile_err_set(e, TILE_ERR_LAUNCH, "kernel '%s': cluster %s: %" PRId64 "x%"
			PRId64 "x%" PRId64 " is more than %d CTAs", k->name, named, v[0], v[1], v[2],
			TILE_MAX_CLUSTER);
	}
	for (int d = 0; d < 3; d++)
		cluster[d] = (unsigned int)v[d];
	return TILE_OK;
}
