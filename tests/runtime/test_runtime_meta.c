/*
 * test_runtime_meta.c: the metadata parser (runtime/src/meta.c) and grid evaluation, on inline
 * texts: the example of dsl/metadata.md, every item and param kind, forward references, one
 * case per parse error (each must name its line), every grid operator, the grid errors
 * (division by zero, overflow, results below 1), and cluster dims given by expressions
 * (parsed like the grid's, evaluated and bounded at launch). No driver involved.
 */
#include <stdio.h>
#include <string.h>

#include "support.h"

static const tile_allocator *mallocator(void)
{
	static counting_alloc c;
	static tile_allocator a;

	a = counting_allocator(&c);
	return &a;
}

static void test_meta_parses_the_documented_example(void **state)
{
	tile_meta m;
	tile_err e;
	const tile_kernel_meta *k;
	(void)state;

	assert_int_equal(tile_meta_parse(mallocator(), vector_add_meta, &m, &e), TILE_OK);
	assert_string_equal(m.module, "vector_add");
	assert_int_equal(m.nkernels, 1);
	k = tile_meta_find(&m, "vector_add");
	assert_non_null(k);
	assert_null(tile_meta_find(&m, "nope"));
	assert_int_equal(k->threads[0], 256);
	assert_int_equal(k->threads[1], 1);
	assert_int_equal(k->smem, 0);
	assert_int_equal(k->cluster[0] * k->cluster[1] * k->cluster[2], 1);
	assert_int_equal(k->nparams, 4);
	assert_string_equal(k->params[0].name, "a");
	assert_int_equal(k->params[0].kind, TILE_PARAM_PTR);
	assert_int_equal(k->params[0].type, TILE_F32);
	assert_int_equal(k->params[0].rank, 1);
	assert_int_equal(k->params[0].dims[0].param, 3); /* forward reference to n */
	assert_int_equal(k->params[3].kind, TILE_PARAM_SCALAR);
	assert_int_equal(k->params[3].type, TILE_I32);
	tile_meta_free(mallocator(), &m);
}

static const char two_kernels[] =
	"tilec-meta 1\n"
	"# a comment\n"
	"module gemm\n"
	"\n"
	"kernel gemm_tma\n"
	"  threads 384 1 1\n"
	"  grid (cdiv n 128) (cdiv m 128) 1\n"
	"  smem 164928\n"
	"  cluster 2 1 1\n"
	"  param 0 a tma bf16 2 m k box 128 64 swizzle 128\n"
	"  param 1 b tma bf16 2 n k box 128 64 swizzle 128\n"
	"  param 2 c ptr f32 2 m n\n"
	"  param 3 m scalar i32\n"
	"  param 4 n scalar i64\n"
	"  param 5 k scalar i32\n"
	"  param 6 alpha scalar f32\n"
	"end\n"
	"kernel fill\n"
	"  threads 32 4 2\n"
	"  grid 7 1 1\n"
	"  param 0 x ptr i64 3 2 3 4\n"
	"end\n";

static void test_meta_parses_tma_clusters_and_two_kernels(void **state)
{
	tile_meta m;
	tile_err e;
	const tile_kernel_meta *k;
	const tile_param *a;
	(void)state;

	assert_int_equal(tile_meta_parse(mallocator(), two_kernels, &m, &e), TILE_OK);
	assert_int_equal(m.nkernels, 2);
	k = tile_meta_find(&m, "gemm_tma");
	assert_int_equal(k->smem, 164928);
	assert_int_equal(k->cluster[0], 2);
	assert_int_equal(k->nparams, 7);
	a = &k->params[0];
	assert_int_equal(a->kind, TILE_PARAM_TMA);
	assert_int_equal(a->type, TILE_BF16);
	assert_int_equal(a->rank, 2);
	assert_int_equal(a->dims[0].param, 3);
	assert_int_equal(a->dims[1].param, 5);
	assert_int_equal(a->box[0], 128);
	assert_int_equal(a->box[1], 64);
	assert_int_equal(a->swizzle, 128);
	assert_int_equal(k->params[4].type, TILE_I64);
	assert_int_equal(k->params[6].type, TILE_F32);
	k = tile_meta_find(&m, "fill");
	assert_int_equal(k->threads[2], 2);
	assert_int_equal(k->smem, 0);
	assert_int_equal(k->cluster[1], 1);
	assert_int_equal(k->params[0].dims[2].param, -1);
	assert_int_equal(k->params[0].dims[2].value, 4);
	tile_meta_free(mallocator(), &m);
}

/* One broken text per rule; the message must contain `want`. */
typedef struct bad_case {
	const char *text, *want;
} bad_case;

#define HEAD "tilec-meta 1\nmodule m\n"
#define K "kernel k\n  threads 32 1 1\n  grid 1 1 1\n"

static const bad_case bad[] = {
	{"", "does not start with 'tilec-meta 1'"},
	{"tilec-meta 2\nmodule m\n", "line 1: unsupported metadata version '2'"},
	{"tilec-meta 1\n", "expected a 'module NAME' line"},
	{"tilec-meta 1\nmodule 9m\n", "line 2: expected a name (module name)"},
	{HEAD "kernel k\n  threads 32 1 1\n  grid 1 1 1\n", "kernel 'k' has no 'end' line"},
	{HEAD "kernel k\n  grid 1 1 1\nend\n", "line 5: kernel needs a 'threads' and a 'grid'"},
	{HEAD K "  threads 32 1 1\nend\n", "line 6: duplicate 'threads' line"},
	{HEAD K "  threads2 1\nend\n", "line 6: unknown item 'threads2 1'"},
	{HEAD "kernel k\n  threads 0 1 1\n  grid 1 1 1\nend\n", "line 4: threads 0 out of range"},
	{HEAD "kernel k\n  threads 32 1\n  grid 1 1 1\nend\n", "line 4: expected an integer"},
	{HEAD "kernel k\n  threads 32 1 1 1\n  grid 1 1 1\nend\n", "line 4: unexpected text"},
	{HEAD K "  smem -1\nend\n", "line 6: smem bytes -1 out of range"},
	/* a cluster's CTAs in 64 bits: 6700417 x 641 is 2^32 + 1, which 32 bits wrap to 1 */
	{HEAD K "  cluster 6700417 641 1\nend\n",
	 "line 6: cluster 6700417 641 1 makes more than 16 CTAs"},
	{HEAD K "  cluster 1073741824 1073741824 1073741824\nend\n", "more than 16 CTAs"},
	{HEAD K "  cluster 1 1 17\nend\n", "line 6: cluster 1 1 17 makes more than 16 CTAs"},
	{HEAD K "  cluster 0 1 1\nend\n", "line 6: cluster 0 out of range [1, 1073741824]"},
	{HEAD K "  cluster 2 1\nend\n", "line 6: cluster needs three expressions (x y z)"},
	{HEAD K "  cluster 2 1 1 1\nend\n", "line 6: unexpected text"},
	/* cluster expressions: names as in the grid, the constant dims still bounded */
	{HEAD K "  cluster CL 1 1\nend\n", "line 6: 'CL' is not a parameter of this kernel"},
	{HEAD K "  cluster (/ HV H) 1 1\n  param 0 HV scalar i32\nend\n",
	 "line 6: 'H' is not a parameter of this kernel"},
	{HEAD K "  cluster s 1 1\n  param 0 s scalar f32\nend\n",
	 "line 6: 's' is not an integer scalar parameter"},
	{HEAD K "  cluster 1 (* p 2) 1\n  param 0 p ptr f32 1 4\nend\n",
	 "line 6: 'p' is not an integer scalar parameter"},
	{HEAD K "  cluster (+ c) 1 1\n  param 0 c scalar i32\nend\n",
	 "line 6: expected ' ' and an operand"},
	{HEAD K "  cluster (^ c 2) 1 1\n  param 0 c scalar i32\nend\n", "unknown operator '^'"},
	{HEAD K "  cluster c 9 2\n  param 0 c scalar i32\nend\n",
	 "line 6: cluster c 9 2 makes more than 16 CTAs"},
	{HEAD K "  cluster c 1 1\n  cluster 1 1 1\n  param 0 c scalar i32\nend\n",
	 "line 7: duplicate 'cluster' line"},
	{HEAD K "  param 1 x scalar i32\nend\n", "line 6: param index 1 out of order"},
	{HEAD K "  param 0 x scalar i32\n  param 1 x scalar i32\nend\n",
	 "line 7: duplicate parameter 'x'"},
	{HEAD K "  param 0 x vector f32\nend\n", "line 6: unknown param kind 'vector'"},
	{HEAD K "  param 0 x scalar bf16\nend\n", "line 6: unknown scalar type 'bf16'"},
	{HEAD K "  param 0 x ptr f64 1 4\nend\n", "line 6: unknown element type 'f64'"},
	{HEAD K "  param 0 x ptr f32 1 n\nend\n", "line 6: 'n' is not a parameter"},
	{HEAD K "  param 0 x ptr f32 1 s\n  param 1 s scalar f32\nend\n",
	 "line 6: 's' is not an integer scalar parameter"},
	{HEAD K "  param 0 x ptr f32 9 1 1 1 1 1 1 1 1 1\nend\n", "rank 9 out of range"},
	{HEAD K "  param 0 x tma f32 6 1 1 1 1 1 1 box 1 1 1 1 1 1 swizzle none\nend\n",
	 "rank 6 out of range"},
	{HEAD K "  param 0 x tma f32 1 64\nend\n", "expected 'box'"},
	{HEAD K "  param 0 x tma f32 1 64 box 4\nend\n", "expected 'swizzle'"},
	{HEAD K "  param 0 x tma f32 1 64 box 4 swizzle 48\nend\n", "unknown swizzle '48'"},
	{HEAD K "  param 0 x tma f32 1 64 box 512 swizzle none\nend\n",
	 "line 6: box dim 0 (innermost first) is 512, must be in [1, 256]"},
	{HEAD K "  param 0 x tma bf16 1 64 box 6 swizzle none\nend\n",
	 "inner box is 12 bytes, must be a multiple of 16"},
	{HEAD K "  param 0 x tma f32 2 64 64 box 8 64 swizzle 128\nend\n",
	 "inner box is 256 bytes, more than the 128-byte swizzle span"},
	{HEAD "kernel k\n  threads 1 1 1\n  grid (^ 1 2) 1 1\nend\n", "unknown operator '^'"},
	{HEAD "kernel k\n  threads 1 1 1\n  grid (+ 1 2 1 1\nend\n", "expected ')'"},
	{HEAD "kernel k\n  threads 1 1 1\n  grid (+ 1) 1 1\nend\n", "expected ' ' and an operand"},
	{HEAD "kernel k\n  threads 1 1 1\n  grid 1 1\nend\n", "grid needs three expressions"},
	{HEAD "kernel k\n  threads 1 1 1\n  grid p 1 1\n  param 0 p ptr f32 1 4\nend\n",
	 "line 5: 'p' is not an integer scalar parameter"},
	{HEAD K "end\n" K "end\n", "duplicate kernel 'k'"},
	{HEAD "module m2\n", "expected 'kernel NAME', saw 'module m2'"},
	{HEAD K "end trailing\n", "unexpected text"},
};

static void test_meta_rejects_each_broken_rule_with_its_line(void **state)
{
	counting_alloc c = {0};
	tile_allocator a = counting_allocator(&c);
	(void)state;

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		tile_meta m;
		tile_err e;
		tile_status st = tile_meta_parse(&a, bad[i].text, &m, &e);
		if (st != TILE_ERR_META)
			fail_msg("case %zu parsed with status %s", i, tile_status_str(st));
		assert_error_text(e.msg, bad[i].want);
		assert_int_equal(c.live, 0);
		assert_null(m.kernels);
	}
}

/* The largest cluster, 16 CTAs, in any shape. */
static void test_meta_accepts_clusters_of_16(void **state)
{
	tile_meta m;
	tile_err e;
	(void)state;

	assert_int_equal(tile_meta_parse(mallocator(), HEAD K "  cluster 2 2 4\nend\n", &m, &e),
		TILE_OK);
	assert_int_equal(m.kernels[0].cluster[0] * m.kernels[0].cluster[1] *
		m.kernels[0].cluster[2], 16);
	tile_meta_free(mallocator(), &m);
}

/* 9 CTAs is a non-portable size, still accepted as a constant (module.c allows it). */
static void test_meta_accepts_a_constant_cluster_of_9(void **state)
{
	tile_meta m;
	tile_err e;
	(void)state;

	assert_int_equal(tile_meta_parse(mallocator(), HEAD K "  cluster 9 1 1\nend\n", &m, &e),
		TILE_OK);
	assert_int_equal(m.kernels[0].cluster[0], 9);
	assert_false(tile_cluster_has_expr(&m.kernels[0]));
	tile_meta_free(mallocator(), &m);
}

/* A constant cluster is all literals (cluster_expr -1, no nodes); any other dim keeps its
 * expression (cluster 0 there), in either order with the grid line. */
static void test_meta_parses_cluster_expressions(void **state)
{
	tile_meta m;
	tile_err e;
	const tile_kernel_meta *k;
	char text[160];
	(void)state;

	assert_int_equal(tile_meta_parse(mallocator(), two_kernels, &m, &e), TILE_OK);
	k = tile_meta_find(&m, "gemm_tma");
	for (int d = 0; d < 3; d++)
		assert_int_equal(k->cluster_expr[d], -1);
	assert_int_equal(k->nexpr, 7); /* the grid's nodes only */
	tile_meta_free(mallocator(), &m);

	assert_int_equal(tile_meta_parse(mallocator(), HEAD "kernel k\n  threads 1 1 1\n"
		"  cluster (/ HV H) 1 CL\n  grid (cdiv n 4) 1 1\n  param 0 n scalar i32\n"
		"  param 1 HV scalar i64\n  param 2 H scalar i32\n  param 3 CL scalar i32\nend\n",
		&m, &e), TILE_OK);
	k = &m.kernels[0];
	assert_true(tile_cluster_has_expr(k));
	assert_int_equal(k->cluster[0], 0);
	assert_int_equal(k->cluster[1], 1);
	assert_int_equal(k->cluster[2], 0);
	assert_int_equal(k->cluster_expr[0], 0);
	assert_int_equal(k->cluster_expr[1], -1);
	assert_int_equal(k->cluster_expr[2], 3);
	assert_int_equal(k->grid[0], 4); /* after the cluster's nodes */
	tile_expr_text(k, k->cluster_expr[0], text, sizeof text);
	assert_string_equal(text, "(/ HV H)");
	tile_expr_text(k, k->grid[0], text, sizeof text);
	assert_string_equal(text, "(cdiv n 4)");
	tile_meta_free(mallocator(), &m);
}

/* Names of 127 characters load, of 128 are refused saying so (tilec's limit is the same). */
static void test_meta_name_length_limit(void **state)
{
	char name[200], text[600];
	tile_meta m;
	tile_err e;
	(void)state;

	memset(name, 'a', 127);
	name[127] = '\0';
	snprintf(text, sizeof text, HEAD "kernel %s\n  threads 1 1 1\n  grid 1 1 1\n"
		"  param 0 %s scalar i32\nend\n", name, name);
	assert_int_equal(tile_meta_parse(mallocator(), text, &m, &e), TILE_OK);
	assert_non_null(tile_meta_find(&m, name));
	tile_meta_free(mallocator(), &m);
	strcat(name, "b");
	snprintf(text, sizeof text, HEAD "kernel %s\n  threads 1 1 1\n  grid 1 1 1\nend\n",
		name);
	assert_int_equal(tile_meta_parse(mallocator(), text, &m, &e), TILE_ERR_META);
	assert_error_text(e.msg, "line 3: kernel name of 128 characters (at most 127)");
	snprintf(text, sizeof text, "tilec-meta 1\nmodule %s\n", name);
	assert_int_equal(tile_meta_parse(mallocator(), text, &m, &e), TILE_ERR_META);
	assert_error_text(e.msg, "line 2: module name of 128 characters (at most 127)");
	snprintf(text, sizeof text, HEAD K "  param 0 %s scalar i32\nend\n", name);
	assert_int_equal(tile_meta_parse(mallocator(), text, &m, &e), TILE_ERR_META);
	assert_error_text(e.msg, "line 6: param name of 128 characters (at most 127)");
}

static void test_meta_rejects_grids_longer_than_the_node_cap(void **state)
{
	char text[4096] = HEAD "kernel k\n  threads 1 1 1\n  grid ";
	tile_meta m;
	tile_err e;
	(void)state;

	for (int i = 0; i < 30; i++)
		strcat(text, "(+ 1 ");
	strcat(text, "1");
	for (int i = 0; i < 30; i++)
		strcat(text, ")");
	strcat(text, " 1 1\nend\n");
	assert_int_equal(tile_meta_parse(mallocator(), text, &m, &e), TILE_ERR_META);
	assert_error_text(e.msg, "line 5:");
}

/* Grid and cluster expressions share the node pool; constant cluster dims take no node. */
static void test_meta_cluster_expressions_share_the_node_cap(void **state)
{
	char grid[512] = "", text[1024];
	tile_meta m;
	tile_err e;
	(void)state;

	/* x: 15 nested additions (31 nodes), y: 7 (15 nodes), z: 1; 47 nodes, within the
	 * nesting limit */
	for (int dim = 0, nest = 15; dim < 2; dim++, nest = 7) {
		for (int i = 0; i < nest; i++)
			strcat(grid, "(+ 1 ");
		strcat(grid, "1");
		for (int i = 0; i < nest; i++)
			strcat(grid, ")");
		strcat(grid, " ");
	}
	strcat(grid, "1");
	snprintf(text, sizeof text, HEAD "kernel k\n  threads 1 1 1\n  grid %s\n"
		"  cluster 2 1 1\n  param 0 c scalar i32\nend\n", grid);
	assert_int_equal(tile_meta_parse(mallocator(), text, &m, &e), TILE_OK);
	assert_int_equal(m.kernels[0].nexpr, 47);
	tile_meta_free(mallocator(), &m);
	snprintf(text, sizeof text, HEAD "kernel k\n  threads 1 1 1\n  grid %s\n"
		"  cluster c 1 1\n  param 0 c scalar i32\nend\n", grid);
	assert_int_equal(tile_meta_parse(mallocator(), text, &m, &e), TILE_OK);
	tile_meta_free(mallocator(), &m);
	snprintf(text, sizeof text, HEAD "kernel k\n  threads 1 1 1\n  grid %s\n"
		"  cluster (* c 1) 1 1\n  param 0 c scalar i32\nend\n", grid);
	assert_int_equal(tile_meta_parse(mallocator(), text, &m, &e), TILE_ERR_META);
	assert_error_text(e.msg, "line 6: grid and cluster expressions too long (more than 48");
}

static void test_meta_reports_allocation_failure(void **state)
{
	(void)state;
	for (long n = 1; n <= 2; n++) {
		counting_alloc c = {.fail_at = n};
		tile_allocator a = counting_allocator(&c);
		tile_meta m;
		tile_err e;
		assert_int_equal(tile_meta_parse(&a, vector_add_meta, &m, &e), TILE_ERR_NOMEM);
		assert_int_equal(c.live, 0);
	}
}

/* --- grid evaluation ---------------------------------------------------------------------- */
static tile_status eval_grid(const char *grid, const int64_t *scalars, int64_t out[3],
	tile_err *e)
{
	char text[512];
	tile_meta m;
	tile_status st;

	snprintf(text, sizeof text, HEAD "kernel k\n  threads 1 1 1\n  grid %s\n"
		"  param 0 a scalar i64\n  param 1 b scalar i32\nend\n", grid);
	st = tile_meta_parse(mallocator(), text, &m, e);
	if (st)
		fail_msg("grid '%s' did not parse: %s", grid, e->msg);
	st = tile_grid_eval(&m.kernels[0], scalars, out, e);
	tile_meta_free(mallocator(), &m);
	return st;
}

static void test_grid_evaluates_every_operator(void **state)
{
	const struct {
		const char *grid;
		int64_t a, b, x, y, z;
	} cases[] = {
		{"(cdiv a 256) 1 1", 1000, 0, 4, 1, 1},
		{"(cdiv a 256) 1 1", 1024, 0, 4, 1, 1},
		{"(+ a b) (- a b) (* a b)", 7, 3, 10, 4, 21},
		{"(/ a b) (% a b) (min a b)", 7, 3, 2, 1, 3},
		{"(max a b) (cdiv (* a 3) (+ b 1)) 5", 7, 3, 7, 6, 5},
		{"(max (- 0 a) 1) a b", 9, 2, 1, 9, 2},
	};
	(void)state;

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		int64_t s[2] = {cases[i].a, cases[i].b}, g[3];
		tile_err e;
		assert_int_equal(eval_grid(cases[i].grid, s, g, &e), TILE_OK);
		assert_int_equal(g[0], cases[i].x);
		assert_int_equal(g[1], cases[i].y);
		assert_int_equal(g[2], cases[i].z);
	}
}

static void test_grid_errors_are_launch_errors_naming_the_expression(void **state)
{
	const struct {
		const char *grid;
		int64_t a, b;
		const char *want;
	} cases[] = {
		{"(cdiv a 256) 1 1", 0, 0, "grid x = (cdiv a 256) is 0, must be at least 1"},
		{"1 (/ a b) 1", 5, 0, "grid y = (/ a b) divides by zero or overflows"},
		{"1 1 (% a b)", 5, 0, "grid z = (% a b) divides by zero"},
		{"(cdiv a b) 1 1", 5, 0, "divides by zero"},
		{"(cdiv a b) 1 1", 5, -1, "divides by zero"},
		{"(* a a) 1 1", INT64_MAX, 0, "overflows"},
		{"(- a b) 1 1", 3, 5, "is -2, must be at least 1"},
	};
	(void)state;

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		int64_t s[2] = {cases[i].a, cases[i].b}, g[3];
		tile_err e;
		assert_int_equal(eval_grid(cases[i].grid, s, g, &e), TILE_ERR_LAUNCH);
		assert_error_text(e.msg, cases[i].want);
		assert_error_text(e.msg, "kernel 'k'");
	}
}

/* --- cluster evaluation ------------------------------------------------------------------- */
static tile_status eval_cluster(const char *cluster, const int64_t *scalars,
	unsigned int out[3], tile_err *e)
{
	char text[512];
	tile_meta m;
	tile_status st;

	snprintf(text, sizeof text, HEAD "kernel k\n  threads 1 1 1\n  grid 1 1 1\n"
		"  cluster %s\n  param 0 a scalar i64\n  param 1 b scalar i32\nend\n", cluster);
	st = tile_meta_parse(mallocator(), text, &m, e);
	if (st)
		fail_msg("cluster '%s' did not parse: %s", cluster, e->msg);
	st = tile_cluster_eval(&m.kernels[0], scalars, out, e);
	tile_meta_free(mallocator(), &m);
	return st;
}

static void test_cluster_evaluates_over_the_scalars(void **state)
{
	const struct {
		const char *cluster;
		int64_t a, b;
		unsigned int x, y, z;
	} cases[] = {
		{"1 1 1", 0, 0, 1, 1, 1},
		{"2 2 4", 0, 0, 2, 2, 4},
		{"b 1 1", 0, 2, 2, 1, 1},
		{"(/ a b) 1 1", 16, 4, 4, 1, 1},
		{"1 (cdiv a b) 2", 7, 2, 1, 4, 2},
		{"a b 1", 4, 4, 4, 4, 1},
		{"b 1 1", 0, 16, 16, 1, 1},
		{"b 1 1", 0, 9, 9, 1, 1},
	};
	(void)state;

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		int64_t s[2] = {cases[i].a, cases[i].b};
		unsigned int c[3];
		tile_err e;
		if (eval_cluster(cases[i].cluster, s, c, &e))
			fail_msg("case %zu: %s", i, e.msg);
		assert_int_equal(c[0], cases[i].x);
		assert_int_equal(c[1], cases[i].y);
		assert_int_equal(c[2], cases[i].z);
	}
}

static void test_cluster_errors_are_launch_errors_naming_the_expression(void **state)
{
	const struct {
		const char *cluster;
		int64_t a, b;
		const char *want;
	} cases[] = {
		{"b 1 1", 0, 0, "kernel 'k': cluster x = b is 0, must be at least 1"},
		{"1 (- b 3) 1", 0, 1, "cluster y = (- b 3) is -2, must be at least 1"},
		{"1 1 (/ a b)", 5, 0, "cluster z = (/ a b) divides by zero or overflows"},
		{"(* a a) 1 1", INT64_MAX, 0, "overflows"},
		{"b 1 1", 0, 17, "kernel 'k': cluster x = b is 17: 17x1x1 is more than 16 CTAs"},
		{"a b 1", 4, 8, "cluster x = a is 4, y = b is 8: 4x8x1 is more than 16 CTAs"},
		{"a 4 1", 5, 0, "cluster x = a is 5: 5x4x1 is more than 16 CTAs"},
		{"a a a", INT64_MAX, 0, "is more than 16 CTAs"},
	};
	(void)state;

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		int64_t s[2] = {cases[i].a, cases[i].b};
		unsigned int c[3];
		tile_err e;
		assert_int_equal(eval_cluster(cases[i].cluster, s, c, &e), TILE_ERR_LAUNCH);
		assert_error_text(e.msg, cases[i].want);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_meta_parses_the_documented_example),
		cmocka_unit_test(test_meta_parses_tma_clusters_and_two_kernels),
		cmocka_unit_test(test_meta_rejects_each_broken_rule_with_its_line),
		cmocka_unit_test(test_meta_accepts_clusters_of_16),
		cmocka_unit_test(test_meta_accepts_a_constant_cluster_of_9),
		cmocka_unit_test(test_meta_parses_cluster_expressions),
		cmocka_unit_test(test_meta_cluster_expressions_share_the_node_cap),
		cmocka_unit_test(test_meta_name_length_limit),
		cmocka_unit_test(test_meta_rejects_grids_longer_than_the_node_cap),
		cmocka_unit_test(test_meta_reports_allocation_failure),
		cmocka_unit_test(test_grid_evaluates_every_operator),
		cmocka_unit_test(test_grid_errors_are_launch_errors_naming_the_expression),
		cmocka_unit_test(test_cluster_evaluates_over_the_scalars),
		cmocka_unit_test(test_cluster_errors_are_launch_errors_naming_the_expression),
	};
	return cmocka_run_group_tests_name("runtime_meta", tests, NULL, NULL);
}
