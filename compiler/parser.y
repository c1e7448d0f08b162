/*
 * parser.y: the grammar of .tile files (a pure, reentrant bison parser).
 *
 * Every action is one AST constructor call (through the small helpers in the
 * prologue); no action checks types or emits IR. Syntax errors become located
 * diagnostics; recovery happens at statement and item level so one typo does
 * not hide the next. The grammar in words is dsl/reference.md.
 */
%define api.pure full
%define api.prefix {tile_yy}
%define parse.error detailed
%locations
%param {void *scanner}
%parse-param {ParseState *ps}

%code requires {
#include "parse_state.h"
}

%union {
	Node *node;
	char *str;
	int64_t ival;
	double fval;
	int dtype;
	NodeList list;
}

%code {
#include <string.h>

int tile_yylex(TILE_YYSTYPE *lval, TILE_YYLTYPE *lloc, void *scanner);
static void tile_yyerror(TILE_YYLTYPE *lloc, void *scanner, ParseState *ps,
			 const char *msg);

/* Deep nesting is a user error, never a stack overflow in later phases: the
 * parser's stack bounds right-nested forms (blocks, parentheses, unary
 * operators) and expr_depth() below bounds left-nested ones (a + b + c...). */
#define YYMAXDEPTH (2 * TILEC_MAX_NESTING)

static Loc L(ParseState *ps, TILE_YYLTYPE l)
{
	return (Loc){ps->fid, l.first_line, l.first_column};
}

static Node *mk(ParseState *ps, NodeKind k, TILE_YYLTYPE l)
{
	return ast_new(ps->cx, k, L(ps, l));
}

static int max_depth(int d, const Node *n)
{
	return n && n->depth > d ? n->depth : d;
}

/* Records an expression node's nesting depth. Left-associative chains never
 * deepen the parser's stack, yet sema, lowering and the printers recurse on
 * them, so they count toward the same limit as blocks. */
static Node *expr_depth(ParseState *ps, Node *n)
{
	int d = 0;
	d = max_depth(d, n->a);
	d = max_depth(d, n->b);
	d = max_depth(d, n->c);
	d = max_depth(d, n->d);
	for (const Node *c = n->list; c; c = c->next)
		d = max_depth(d, c);
	n->depth = d + 1;
	if (n->depth > TILEC_MAX_NESTING && !ps->too_deep) {
		ps->too_deep = true;
		diag_error(ps->cx, n->loc, E_NESTING_TOO_DEEP, TILEC_MAX_NESTING);
	}
	return n;
}

static NodeList list_one(Node *item)
{
	return (NodeList){item, item};
}

static NodeList list_push(NodeList l, Node *item)
{
	if (!item)
		return l;
	if (!l.head)
		return list_one(item);
	l.tail->next = item;
	l.tail = item;
	return l;
}

static Node *mk_named(ParseState *ps, NodeKind k, TILE_YYLTYPE l,
		      const char *name, Node *a, Node *b)
{
	Node *n = mk(ps, k, l);
	n->name = name;
	n->a = a;
	n->b = b;
	return n;
}

static Node *mk_binary(ParseState *ps, int op, Node *a, Node *b, TILE_YYLTYPE l)
{
	Node *n = mk(ps, N_BINARY, l);
	n->op = op;
	n->a = a;
	n->b = b;
	return expr_depth(ps, n);
}

static Node *mk_unary(ParseState *ps, int op, Node *a, TILE_YYLTYPE l)
{
	Node *n = mk(ps, N_UNARY, l);
	n->op = op;
	n->a = a;
	return expr_depth(ps, n);
}

static Node *mk_type(ParseState *ps, TILE_YYLTYPE l, int dtype, Space space,
		     Node *dims)
{
	Node *n = mk(ps, N_TYPE, l);
	/* (a shared array's type, SP_SHARED, also declares frags: sema_frag checks those) */
	if (dtype == DT_TF32 && space != SP_SHARED)
		diag_error(ps->cx, L(ps, l), E_TF32_TYPE);
	n->dtype = dtype;
	n->space = space;
	n->list = dims;
	return n;
}

/* The helper's type parameter `name` (1-based), or 0. */
static int type_param(ParseState *ps, const char *name)
{
	for (int i = 0; i < ps->ntparams; i++)
		if (strcmp(ps->tparams[i].name, name) == 0)
			return i + 1;
	return 0;
}

/* '_' as a by-reference parameter's element type: any (DT_VOID); a type parameter of the
 * helper: any, the same at each of its uses (DT_VOID, and -k for the parameter k); another
 * name is a type that was never declared. */
static int wildcard_type(ParseState *ps, TILE_YYLTYPE l, const char *name)
{
	int k = type_param(ps, name);
	if (k) {
		ps->tparams[k - 1].used = true;
		return -k;
	}
	if (strcmp(name, "_") != 0)
		diag_error(ps->cx, L(ps, l), E_SYNTAX,
			   ctx_printf(ps->cx, "'%s' is not a type name (a parameter's element type, a type parameter, or '_' for any)", name));
	return DT_VOID;
}

/* `fn f<T, U>`: the names a helper's parameters and casts may use as element types. */
static void declare_type_param(ParseState *ps, TILE_YYLTYPE l, const char *name)
{
	if (strcmp(name, "_") == 0 || type_param(ps, name))
		diag_error(ps->cx, L(ps, l), E_TYPE_PARAM,
			   ctx_printf(ps->cx, strcmp(name, "_") == 0
				      ? "'_' cannot name a type parameter"
				      : "type parameter '%s' declared twice", name));
	else if (ps->ntparams == TILEC_MAX_TYPE_PARAMS)
		diag_error(ps->cx, L(ps, l), E_TYPE_PARAM,
			   ctx_printf(ps->cx, "more than %d type parameters", TILEC_MAX_TYPE_PARAMS));
	else {
		ps->tparams[ps->ntparams].name = name;
		ps->tparams[ps->ntparams].loc = L(ps, l);
		ps->tparams[ps->ntparams++].used = false;
	}
}

/* A helper's by-reference parameter type (and a fragment result): ival = 1. */
static Node *mk_ref_type(ParseState *ps, TILE_YYLTYPE l, int dtype, Space space, Node *dims)
{
	Node *n = mk_type(ps, l, dtype < 0 ? DT_VOID : dtype, space, dims);
	n->ival = 1;
	if (dtype < 0) {   /* a type parameter (wildcard_type) */
		n->tvar = -dtype;
		n->name = ps->tparams[-dtype - 1].name;
	}
	return n;
}

static Node *mk_tile_type(ParseState *ps, TILE_YYLTYPE l, int dtype, Node *dims,
			  Node *swizzle)
{
	Node *n = mk_type(ps, l, dtype, SP_SHARED, dims);
	n->b = swizzle;
	return n;
}

static Node *mk_tma_type(ParseState *ps, TILE_YYLTYPE l, int dtype, Node *dims,
			 Node *box, Node *swizzle)
{
	Node *n = mk_type(ps, l, dtype, SP_TMA, dims);
	n->a = box;
	n->b = swizzle;
	return n;
}

static Node *mk_role(ParseState *ps, TILE_YYLTYPE l, const char *name, Node *lo,
		     Node *hi, Node *regs, Node *body)
{
	Node *n = mk_named(ps, N_ROLE, l, name, lo, hi);
	n->c = regs;
	n->d = body;
	return n;
}

static Node *mk_kernel(ParseState *ps, TILE_YYLTYPE l, const char *name,
		       Node *params, Node *launch, Node *body)
{
	Node *n = mk_named(ps, N_KERNEL, l, name, NULL, body);
	n->list = params;
	n->c = launch;
	return n;
}

static Node *mk_fn(ParseState *ps, TILE_YYLTYPE l, const char *name,
		   Node *params, Node *ret, Node *body)
{
	Node *n = mk_named(ps, N_FN, l, name, ret, body);
	n->list = params;
	for (int i = 0; i < ps->ntparams; i++)
		if (!ps->tparams[i].used)
			diag_error(ps->cx, ps->tparams[i].loc, E_TYPE_PARAM_UNUSED,
				   ps->tparams[i].name, name);
	ps->ntparams = 0;
	return n;
}

static Node *mk_list_node(ParseState *ps, NodeKind k, TILE_YYLTYPE l, Node *list)
{
	Node *n = mk(ps, k, l);
	n->list = list;
	return n;
}

static Node *mk_launch(ParseState *ps, TILE_YYLTYPE l, LaunchKind kind,
		       Node *exprs)
{
	Node *n = mk_list_node(ps, N_LAUNCH, l, exprs);
	n->op = kind;
	return n;
}

static Node *mk_if(ParseState *ps, TILE_YYLTYPE l, Node *c, Node *t, Node *e)
{
	Node *n = mk_named(ps, N_IF, l, NULL, c, t);
	n->c = e;
	return n;
}

static Node *mk_for(ParseState *ps, TILE_YYLTYPE l, const char *var, Node *lo,
		    Node *hi, Node *step, Node *body)
{
	Node *n = mk_named(ps, N_FOR, l, var, lo, hi);
	n->c = step;
	n->d = body;
	return n;
}

/* for ... pipeline(S): the stages ride in the for node's list */
static Node *mk_pipelined(ParseState *ps, TILE_YYLTYPE l, const char *var, Node *lo,
			  Node *hi, Node *step, Node *stages, Node *body)
{
	Node *n = mk_for(ps, l, var, lo, hi, step, body);
	n->list = stages;
	return n;
}

static Node *mk_assign(ParseState *ps, TILE_YYLTYPE l, int op, Node *a, Node *b)
{
	Node *n = mk_named(ps, N_ASSIGN, l, NULL, a, b);
	n->op = op;
	return n;
}

static Node *mk_int(ParseState *ps, TILE_YYLTYPE l, NodeKind k, int64_t v)
{
	Node *n = mk(ps, k, l);
	n->ival = v;
	return n;
}

static Node *mk_float(ParseState *ps, TILE_YYLTYPE l, double v)
{
	Node *n = mk(ps, N_FLOAT, l);
	n->fval = v;
	return n;
}

/* `type NAME = T;`: the scanner turns NAME into T from here on. */
static void add_alias(ParseState *ps, TILE_YYLTYPE l, char *name, int dtype)
{
	if (ps->naliases == (int)(sizeof ps->aliases / sizeof ps->aliases[0])) {
		diag_error(ps->cx, L(ps, l), E_TYPE_ALIASES, 16);
		return;
	}
	ps->aliases[ps->naliases].name = name;
	ps->aliases[ps->naliases++].dtype = dtype;
}

/* `type NAME = T;` where NAME is already a type: set by -D (which wins),
 * or declared twice. */
static void alias_again(ParseState *ps, TILE_YYLTYPE l)
{
	Define *d = ps->alias_name ? ctx_find_define(ps->cx, ps->alias_name) : NULL;
	if (d && d->is_type)
		d->used = true;
	else
		diag_error(ps->cx, L(ps, l), E_REDEFINED, ps->alias_name ? ps->alias_name : "type");
}

/* A constant's value, or the -D NAME=INT given for it. */
static Node *defined_value(ParseState *ps, TILE_YYLTYPE l, const char *name, Node *e)
{
	Define *d = ctx_find_define(ps->cx, name);
	if (!d || d->is_type)
		return e;
	d->used = true;
	return mk_int(ps, l, N_INT, d->value);
}

static Node *mk_cast(ParseState *ps, TILE_YYLTYPE l, int dtype, Node *a)
{
	Node *n = mk_named(ps, N_CAST, l, NULL, a, NULL);
	n->dtype = dtype;
	return expr_depth(ps, n);
}

/* cast<T>(a) with T a type parameter of the helper: its type is bound where it is inlined. */
static Node *mk_param_cast(ParseState *ps, TILE_YYLTYPE l, TILE_YYLTYPE tl, const char *name,
			   Node *a)
{
	Node *n = mk_cast(ps, l, DT_VOID, a);
	n->tvar = type_param(ps, name);
	n->name = name;
	if (!n->tvar)
		diag_error(ps->cx, L(ps, tl), E_SYNTAX,
			   ctx_printf(ps->cx, "'%s' is not a type name or a type parameter of this helper", name));
	return n;
}

static Node *mk_call(ParseState *ps, TILE_YYLTYPE l, const char *name,
		     Node *args)
{
	Node *n = mk_list_node(ps, N_CALL, l, args);
	n->name = name;
	return expr_depth(ps, n);
}

static Node *mk_index(ParseState *ps, TILE_YYLTYPE l, Node *base, Node *idx)
{
	Node *n = mk_list_node(ps, N_INDEX, l, idx);
	n->a = base;
	return expr_depth(ps, n);
}
}

%token KW_IMPORT "import" KW_CONST "const" KW_FN "fn" KW_KERNEL "kernel"
%token KW_LET "let" KW_VAR "var" KW_SHARED "shared" KW_GLOBAL "global"
%token KW_IF "if" KW_ELSE "else" KW_FOR "for" KW_IN "in" KW_STEP "step"
%token KW_UNROLL "unroll" KW_NOUNROLL "nounroll" KW_NOHOIST "nohoist"
%token KW_WHILE "while" KW_BREAK "break" KW_CONTINUE "continue"
%token KW_RETURN "return" KW_GRID "grid" KW_THREADS "threads" KW_CTAS_PER_SM "ctas_per_sm" KW_CLUSTER "cluster" KW_CAST "cast"
%token KW_TMA "tma" KW_BOX "box" KW_SWIZZLE "swizzle" KW_OVERLAY "overlay" KW_MBARRIER "mbarrier"
%token KW_ROLE "role" KW_WARPGROUP "warpgroup" KW_REGS "regs" KW_FRAG "frag"
%token KW_TYPE "type"
%token PLUSCOLON "+:" KW_PIPELINE "pipeline"
%token DOTDOT ".." ARROW "->" SHL "<<" SHR ">>" LE "<=" GE ">=" EQ "=="
%token NE "!=" LAND "&&" LOR "||"
%token <ival> ASSIGN_OP "compound assignment" INT "integer" BOOL_LIT "boolean"
%token <fval> FLOAT "float"
%token <str> IDENT "identifier" STRING "string"
%token <dtype> TYPE "type name"

%type <node> item import type_decl const_decl fn_decl kernel_decl
%type <node> param type ref_type launch block
%type <dtype> elem_type
%type <node> stmt simple_stmt if_stmt else_part expr opt_type opt_ret
%type <node> opt_step args opt_swizzle opt_overlay index opt_regs role_stmt
%type <ival> loop_flags opt_unroll
%type <list> items params param_list dims launches exprs stmts indices

%left LOR
%left LAND
%left '|'
%left '^'
%left '&'
%left EQ NE
%left '<' LE '>' GE
%left SHL SHR
%left '+' '-'
%left '*' '/' '%'
%precedence UNARY
%precedence '.' '['

%%

program
	: items                 { ps->items = $1.head; }
	;

items
	: %empty                { $$ = (NodeList){0}; }
	| items item            { $$ = list_push($1, $2); }
	;

item
	: import
	| type_decl
	| const_decl
	| fn_decl
	| kernel_decl
	| error ';'             { $$ = NULL; }
	| error '}'             { $$ = NULL; }
	;

/* import = "import" STRING ";" */
import
	: KW_IMPORT STRING ';'  { $$ = mk_named(ps, N_IMPORT, @2, $2, NULL, NULL); }
	;

/* type-decl = "type" IDENT "=" TYPE ";"  (an alias; -D NAME=TYPE overrides it) */
type_decl
	: KW_TYPE IDENT '=' TYPE ';'
				{ $$ = NULL; add_alias(ps, @2, $2, $4); }
	| KW_TYPE TYPE '=' TYPE ';'
				{ $$ = NULL; alias_again(ps, @2); }
	;

/* const-decl = "const" IDENT [":" TYPE] "=" expr ";"  (-D NAME=INT overrides
 * the value) */
const_decl
	: KW_CONST IDENT opt_type '=' expr ';'
				{ $$ = mk_named(ps, N_CONST, @2, $2, $3, defined_value(ps, @5, $2, $5)); }
	;

opt_type
	: %empty                { $$ = NULL; }
	| ':' type              { $$ = $2; }
	;

/* fn-decl = "fn" IDENT type-params "(" params ")" ["->" TYPE] block */
fn_decl
	: KW_FN IDENT type_params '(' params ')' opt_ret block
				{ $$ = mk_fn(ps, @2, $2, $5.head, $7, $8); }
	;

/* type-params = ["<" IDENT {"," IDENT} ">"]: element types a helper's by-reference
 * parameters share and its casts name (bound where it is inlined) */
type_params
	: %empty                { ps->ntparams = 0; }
	| '<' type_param_list '>'
	;

type_param_list
	: IDENT                 { ps->ntparams = 0; declare_type_param(ps, @1, $1); }
	| type_param_list ',' IDENT { declare_type_param(ps, @3, $3); }
	;

opt_ret
	: %empty                { $$ = NULL; }
	| ARROW TYPE            { $$ = mk_type(ps, @2, $2, SP_SCALAR, NULL); }
	| ARROW KW_FRAG TYPE '[' dims ']'
				{ $$ = mk_ref_type(ps, @3, $3, SP_FRAG, $5.head); }
	;

/* kernel-decl = "kernel" IDENT "(" params ")" launch* block */
kernel_decl
	: KW_KERNEL IDENT '(' params ')' launches block
				{ $$ = mk_kernel(ps, @2, $2, $4.head, $6.head, $7); }
	;

launches
	: %empty                { $$ = (NodeList){0}; }
	| launches launch       { $$ = list_push($1, $2); }
	;

/* launch = ("grid" | "threads" | "ctas_per_sm" | "cluster") "(" expr {"," expr} ")" */
launch
	: KW_GRID '(' exprs ')'    { $$ = mk_launch(ps, @1, LAUNCH_GRID, $3.head); }
	| KW_THREADS '(' exprs ')' { $$ = mk_launch(ps, @1, LAUNCH_THREADS, $3.head); }
	| KW_CTAS_PER_SM '(' exprs ')' { $$ = mk_launch(ps, @1, LAUNCH_CTAS, $3.head); }
	| KW_CLUSTER '(' exprs ')' { $$ = mk_launch(ps, @1, LAUNCH_CLUSTER, $3.head); }
	;

params
	: %empty                { $$ = (NodeList){0}; }
	| param_list
	| param_list ','        { $$ = $1; }
	;

param_list
	: param                 { $$ = list_one($1); }
	| param_list ',' param  { $$ = list_push($1, $3); }
	;

/* param = IDENT ":" (type | ref-type) */
param
	: IDENT ':' type        { $$ = mk_named(ps, N_PARAM, @1, $1, $3, NULL); }
	| IDENT ':' ref_type    { $$ = mk_named(ps, N_PARAM, @1, $1, $3, NULL); }
	;

/* ref-type = "global" TYPE | "tma" TYPE | ("shared" | "frag") TYPE ["[" dims "]"]
 *          | "mbarrier" | "role": a helper's parameter bound by reference to its argument,
 *          whose shape it takes ('_' in dims: any extent) */
ref_type
	: KW_GLOBAL elem_type   { $$ = mk_ref_type(ps, @2, $2, SP_GLOBAL, NULL); }
	| KW_TMA elem_type      { $$ = mk_ref_type(ps, @2, $2, SP_TMA, NULL); }
	| KW_SHARED elem_type   { $$ = mk_ref_type(ps, @2, $2, SP_SHARED, NULL); }
	| KW_SHARED elem_type '[' dims ']'
				{ $$ = mk_ref_type(ps, @2, $2, SP_SHARED, $4.head); }
	| KW_FRAG elem_type     { $$ = mk_ref_type(ps, @2, $2, SP_FRAG, NULL); }
	| KW_FRAG elem_type '[' dims ']'
				{ $$ = mk_ref_type(ps, @2, $2, SP_FRAG, $4.head); }
	| KW_MBARRIER           { $$ = mk_ref_type(ps, @1, DT_VOID, SP_MBAR, NULL); }
	| KW_ROLE               { $$ = mk_ref_type(ps, @1, DT_VOID, SP_ROLE, NULL); }
	;

/* elem-type = TYPE | "_": '_' takes the argument's element type (DT_VOID) */
elem_type
	: TYPE
	| IDENT                 { $$ = wildcard_type(ps, @1, $1); }
	;

/* type = TYPE | "global" TYPE "[" dims "]"
 *      | "tma" TYPE "[" dims "]" "box" "(" exprs ")" ["swizzle" "(" expr ")"]
 *      | TYPE "[" dims "]" ["swizzle" "(" expr ")"]      (shared arrays, frags) */
type
	: TYPE                  { $$ = mk_type(ps, @1, $1, SP_SCALAR, NULL); }
	| KW_GLOBAL TYPE '[' dims ']'
				{ $$ = mk_type(ps, @2, $2, SP_GLOBAL, $4.head); }
	| KW_TMA TYPE '[' dims ']' KW_BOX '(' exprs ')' opt_swizzle
				{ $$ = mk_tma_type(ps, @2, $2, $4.head, $8.head, $10); }
	| TYPE '[' dims ']' opt_swizzle
				{ $$ = mk_tile_type(ps, @1, $1, $3.head, $5); }
	;

opt_swizzle
	: %empty                { $$ = NULL; }
	| KW_SWIZZLE '(' expr ')' { $$ = $3; }
	;

/* "overlay" "(" IDENT ")": a shared array that shares another's bytes */
opt_overlay
	: %empty                { $$ = NULL; }
	| KW_OVERLAY '(' IDENT ')' { $$ = mk_named(ps, N_IDENT, @3, $3, NULL, NULL); }
	;

dims
	: exprs
	;

exprs
	: expr                  { $$ = list_one($1); }
	| exprs ',' expr        { $$ = list_push($1, $3); }
	;

block
	: '{' stmts '}'         { $$ = mk_list_node(ps, N_BLOCK, @1, $2.head); }
	;

stmts
	: %empty                { $$ = (NodeList){0}; }
	| stmts stmt            { $$ = list_push($1, $2); }
	;

stmt
	: simple_stmt ';'
	| if_stmt
	| KW_FOR IDENT KW_IN expr DOTDOT expr opt_step loop_flags block
				{ $$ = mk_for(ps, @1, $2, $4, $6, $7, $9); $$->ival = $8; }
	| KW_FOR IDENT KW_IN expr DOTDOT expr opt_step KW_PIPELINE '(' expr ')' block
				{ $$ = mk_pipelined(ps, @1, $2, $4, $6, $7, $10, $12); }
	| KW_WHILE expr block   { $$ = mk_named(ps, N_WHILE, @1, NULL, $2, $3); }
	| role_stmt
	| block
	| error ';'             { $$ = NULL; }
	;

/* a for loop's flags (Node.ival, LOOP_* in tilec.h): "unroll" or "nounroll", then "nohoist" */
loop_flags
	: opt_unroll            { $$ = $1; }
	| opt_unroll KW_NOHOIST { $$ = $1 | LOOP_NOHOIST; }
	;

opt_unroll
	: %empty                { $$ = 0; }
	| KW_UNROLL             { $$ = LOOP_UNROLL; }
	| KW_NOUNROLL           { $$ = LOOP_NOUNROLL; }
	;

/* role = "role" IDENT "=" "warpgroup" "(" expr [".." expr] ")" ["regs" "(" expr ")"] block */
role_stmt
	: KW_ROLE IDENT '=' KW_WARPGROUP '(' expr ')' opt_regs block
				{ $$ = mk_role(ps, @2, $2, $6, NULL, $8, $9); }
	| KW_ROLE IDENT '=' KW_WARPGROUP '(' expr DOTDOT expr ')' opt_regs block
				{ $$ = mk_role(ps, @2, $2, $6, $8, $10, $11); }
	;

opt_regs
	: %empty                { $$ = NULL; }
	| KW_REGS '(' expr ')'  { $$ = $3; }
	;

opt_step
	: %empty                { $$ = NULL; }
	| KW_STEP expr          { $$ = $2; }
	;

simple_stmt
	: KW_LET IDENT opt_type '=' expr
				{ $$ = mk_named(ps, N_LET, @2, $2, $3, $5); }
	| KW_VAR IDENT opt_type '=' expr
				{ $$ = mk_named(ps, N_VAR, @2, $2, $3, $5); }
	| KW_VAR IDENT ':' type { $$ = mk_named(ps, N_VAR, @2, $2, $4, NULL); }
	| KW_SHARED IDENT ':' type opt_overlay
				{ $$ = mk_named(ps, N_SHARED, @2, $2, $4, $5); }
	| KW_MBARRIER IDENT '(' expr ')'
				{ $$ = mk_named(ps, N_MBARRIER, @2, $2, $4, NULL); }
	| KW_MBARRIER IDENT '[' expr ']' '(' expr ')'
				{ $$ = mk_named(ps, N_MBARRIER, @2, $2, $7, $4); }
	| KW_FRAG IDENT ':' type '=' expr
				{ $$ = mk_named(ps, N_FRAG, @2, $2, $4, $6); }
	| expr '=' expr         { $$ = mk_assign(ps, @2, OPK_NONE, $1, $3); }
	| expr ASSIGN_OP expr   { $$ = mk_assign(ps, @2, (int)$2, $1, $3); }
	| KW_BREAK              { $$ = mk(ps, N_BREAK, @1); }
	| KW_CONTINUE           { $$ = mk(ps, N_CONTINUE, @1); }
	| KW_RETURN             { $$ = mk(ps, N_RETURN, @1); }
	| KW_RETURN expr        { $$ = mk_named(ps, N_RETURN, @1, NULL, $2, NULL); }
	| expr                  { $$ = mk_named(ps, N_EXPR_STMT, @1, NULL, $1, NULL); }
	;

/* if-stmt = "if" expr block ["else" (block | if-stmt)] */
if_stmt
	: KW_IF expr block else_part { $$ = mk_if(ps, @1, $2, $3, $4); }
	;

else_part
	: %empty                { $$ = NULL; }
	| KW_ELSE block         { $$ = $2; }
	| KW_ELSE if_stmt       { $$ = $2; }
	;

expr
	: INT                   { $$ = mk_int(ps, @1, N_INT, $1); }
	| FLOAT                 { $$ = mk_float(ps, @1, $1); }
	| BOOL_LIT              { $$ = mk_int(ps, @1, N_BOOL, $1); }
	| IDENT                 { $$ = mk_named(ps, N_IDENT, @1, $1, NULL, NULL); }
	| '(' expr ')'          { $$ = $2; }
	| KW_CAST '<' TYPE '>' '(' expr ')' { $$ = mk_cast(ps, @1, $3, $6); }
	| KW_CAST '<' IDENT '>' '(' expr ')' { $$ = mk_param_cast(ps, @1, @3, $3, $6); }
	| IDENT '(' args ')'    { $$ = mk_call(ps, @1, $1, $3); }
	| expr '[' indices ']'  { $$ = mk_index(ps, @2, $1, $3.head); }
	| expr '.' IDENT        { $$ = expr_depth(ps, mk_named(ps, N_MEMBER, @3, $3, $1, NULL)); }
	| '-' expr %prec UNARY  { $$ = mk_unary(ps, OPK_NEG, $2, @1); }
	| '!' expr %prec UNARY  { $$ = mk_unary(ps, OPK_NOT, $2, @1); }
	| '~' expr %prec UNARY  { $$ = mk_unary(ps, OPK_BITNOT, $2, @1); }
	| expr '*' expr         { $$ = mk_binary(ps, OPK_MUL, $1, $3, @2); }
	| expr '/' expr         { $$ = mk_binary(ps, OPK_DIV, $1, $3, @2); }
	| expr '%' expr         { $$ = mk_binary(ps, OPK_REM, $1, $3, @2); }
	| expr '+' expr         { $$ = mk_binary(ps, OPK_ADD, $1, $3, @2); }
	| expr '-' expr         { $$ = mk_binary(ps, OPK_SUB, $1, $3, @2); }
	| expr SHL expr         { $$ = mk_binary(ps, OPK_SHL, $1, $3, @2); }
	| expr SHR expr         { $$ = mk_binary(ps, OPK_SHR, $1, $3, @2); }
	| expr '<' expr         { $$ = mk_binary(ps, OPK_LT, $1, $3, @2); }
	| expr LE expr          { $$ = mk_binary(ps, OPK_LE, $1, $3, @2); }
	| expr '>' expr         { $$ = mk_binary(ps, OPK_GT, $1, $3, @2); }
	| expr GE expr          { $$ = mk_binary(ps, OPK_GE, $1, $3, @2); }
	| expr EQ expr          { $$ = mk_binary(ps, OPK_EQ, $1, $3, @2); }
	| expr NE expr          { $$ = mk_binary(ps, OPK_NE, $1, $3, @2); }
	| expr '&' expr         { $$ = mk_binary(ps, OPK_AND, $1, $3, @2); }
	| expr '^' expr         { $$ = mk_binary(ps, OPK_XOR, $1, $3, @2); }
	| expr '|' expr         { $$ = mk_binary(ps, OPK_OR, $1, $3, @2); }
	| expr LAND expr        { $$ = mk_binary(ps, OPK_LAND, $1, $3, @2); }
	| expr LOR expr         { $$ = mk_binary(ps, OPK_LOR, $1, $3, @2); }
	;

args
	: %empty                { $$ = NULL; }
	| exprs                 { $$ = $1.head; }
	;

/* index = expr | expr "+:" expr (start and constant width) | ":" (whole) */
indices
	: index                 { $$ = list_one($1); }
	| indices ',' index     { $$ = list_push($1, $3); }
	;

index
	: expr
	| expr PLUSCOLON expr   { $$ = expr_depth(ps, mk_named(ps, N_RANGE, @2, NULL, $1, $3)); }
	| ':'                   { $$ = mk(ps, N_FULL, @1); }
	;

%%

static void tile_yyerror(TILE_YYLTYPE *lloc, void *scanner, ParseState *ps,
			 const char *msg)
{
	(void)scanner;
	Loc loc = L(ps, *lloc);
	if (strcmp(msg, "memory exhausted") == 0)
		diag_error(ps->cx, loc, E_NESTING_TOO_DEEP, TILEC_MAX_NESTING);
	else
		diag_error(ps->cx, loc, E_SYNTAX, msg);
}

/* The printable name of a token kind, for --emit=tokens. */
const char *parser_token_name(int token);
const char *parser_token_name(int token)
{
	return yysymbol_name(YYTRANSLATE(token));
}
