/*
 * ast.c: constructors and the --emit=ast printer for the syntax tree.
 *
 * The parser's grammar actions call only these constructors; they never
 * check types or emit IR. The printer writes one node per line, indented by
 * depth, as "kind [detail] @line:col"; golden tests compare it.
 */
#include <string.h>

#include "tilec.h"

Node *ast_new(Ctx *cx, NodeKind kind, Loc loc)
{
	Node *n = ctx_alloc(cx, sizeof(Node));
	n->kind = kind;
	n->loc = loc;
	return n;
}

static Node *clone_list(Ctx *cx, const Node *list)
{
	Node *head = NULL, **link = &head;
	for (; list; list = list->next) {
		*link = ast_clone(cx, list);
		link = &(*link)->next;
	}
	return head;
}

Node *ast_clone(Ctx *cx, const Node *n)
{
	if (!n)
		return NULL;
	Node *c = ctx_alloc(cx, sizeof(Node));
	*c = *n;
	c->next = NULL;
	c->a = n->kind == N_TYPE ? clone_list(cx, n->a) : ast_clone(cx, n->a);
	c->b = ast_clone(cx, n->b);
	c->c = n->kind == N_KERNEL ? clone_list(cx, n->c) : ast_clone(cx, n->c);
	c->d = ast_clone(cx, n->d);
	c->list = clone_list(cx, n->list);
	return c;
}

/* Walks to the end of the list: meant for short lists built after parsing.
 * The parser keeps a tail (NodeList in parse_state.h), so long lists stay linear. */
Node *ast_append(Node *list, Node *item)
{
	if (!list)
		return item;
	Node *p = list;
	while (p->next)
		p = p->next;
	p->next = item;
	return list;
}

int ast_count(const Node *list)
{
	int n = 0;
	for (; list; list = list->next)
		n++;
	return n;
}

Node *ast_nth(Node *list, int i)
{
	while (i-- > 0 && list)
		list = list->next;
	return list;
}

const char *ast_kind_name(NodeKind k)
{
	static const char *const names[] = {
		[N_IMPORT] = "import", [N_CONST] = "const", [N_FN] = "fn",
		[N_KERNEL] = "kernel", [N_PARAM] = "param", [N_LAUNCH] = "launch",
		[N_TYPE] = "type", [N_BLOCK] = "block", [N_LET] = "let",
		[N_VAR] = "var", [N_SHARED] = "shared", [N_ASSIGN] = "assign",
		[N_IF] = "if", [N_FOR] = "for", [N_WHILE] = "while",
		[N_BREAK] = "break", [N_CONTINUE] = "continue",
		[N_RETURN] = "return", [N_EXPR_STMT] = "expr",
		[N_INT] = "int", [N_FLOAT] = "float", [N_BOOL] = "bool",
		[N_IDENT] = "ident", [N_UNARY] = "unary", [N_BINARY] = "binary",
		[N_CALL] = "call", [N_INDEX] = "index", [N_MEMBER] = "member",
		[N_CAST] = "cast", [N_MBARRIER] = "mbarrier", [N_ROLE] = "role",
		[N_FRAG] = "frag", [N_RANGE] = "range", [N_FULL] = "full",
	};
	return (unsigned)k < sizeof names / sizeof names[0] ? names[k] : "?";
}

const char *ast_op_str(OpKind op)
{
	static const char *const s[] = {
		[OPK_NONE] = "", [OPK_ADD] = "+", [OPK_SUB] = "-", [OPK_MUL] = "*",
		[OPK_DIV] = "/", [OPK_REM] = "%", [OPK_AND] = "&", [OPK_OR] = "|",
		[OPK_XOR] = "^", [OPK_SHL] = "<<", [OPK_SHR] = ">>",
		[OPK_EQ] = "==", [OPK_NE] = "!=", [OPK_LT] = "<", [OPK_LE] = "<=",
		[OPK_GT] = ">", [OPK_GE] = ">=", [OPK_LAND] = "&&",
		[OPK_LOR] = "||", [OPK_NEG] = "-", [OPK_NOT] = "!",
		[OPK_BITNOT] = "~",
	};
	return (unsigned)op < sizeof s / sizeof s[0] ? s[op] : "?";
}

static void print_node(Ctx *cx, FILE *out, const Node *n, int depth);

static void print_list(Ctx *cx, FILE *out, const Node *list, int depth)
{
	for (; list; list = list->next)
		print_node(cx, out, list, depth);
}

/* The one-line detail of a node: its name, value, operator or type. */
static void print_detail(FILE *out, const Node *n)
{
	switch (n->kind) {
	case N_INT: fprintf(out, " %lld", (long long)n->ival); break;
	case N_FLOAT: fprintf(out, " %g", n->fval); break;
	case N_BOOL: fprintf(out, " %s", n->ival ? "true" : "false"); break;
	case N_UNARY: case N_BINARY: fprintf(out, " '%s'", ast_op_str(n->op)); break;
	case N_ASSIGN:
		if (n->op)
			fprintf(out, " '%s='", ast_op_str(n->op));
		break;
	case N_LAUNCH:
		fprintf(out, " %s", n->op == LAUNCH_GRID ? "grid"
				    : n->op == LAUNCH_THREADS ? "threads"
				    : n->op == LAUNCH_CTAS ? "ctas_per_sm" : "cluster");
		break;
	case N_TYPE:
		fprintf(out, " %s%s", n->space == SP_GLOBAL ? "global "
				      : n->space == SP_TMA ? "tma " : "",
			n->tvar ? "type parameter" : dtype_name(n->dtype));
		break;
	case N_CAST:
		if (!n->tvar)
			fprintf(out, " %s", dtype_name(n->dtype));
		break;
	default: break;
	}
	if (n->name)
		fprintf(out, " %s", n->name);
}

/* Indentation stops growing here; deeper lines show their depth as "|N ", so
 * the dump grows linearly with the input, not with the square of its depth. */
enum { AST_MAX_INDENT = 32 };

static void print_node(Ctx *cx, FILE *out, const Node *n, int depth)
{
	if (depth <= AST_MAX_INDENT)
		fprintf(out, "%*s", depth * 2, "");
	else
		fprintf(out, "%*s|%d ", AST_MAX_INDENT * 2, "", depth);
	fputs(ast_kind_name(n->kind), out);
	print_detail(out, n);
	fprintf(out, " @%d:%d\n", n->loc.line, n->loc.col);
	const Node *kids[] = {n->a, n->b, n->c, n->d};
	if (n->kind == N_KERNEL) {
		/* params, launch items, then the body: source order */
		print_list(cx, out, n->list, depth + 1);
		print_list(cx, out, n->c, depth + 1);
		print_node(cx, out, n->b, depth + 1);
		return;
	}
	print_list(cx, out, n->list, depth + 1);
	for (int i = 0; i < 4; i++)
		if (kids[i])
			print_node(cx, out, kids[i], depth + 1);
}

void ast_print(Ctx *cx, FILE *out, Node *items)
{
	print_list(cx, out, items, 0);
}
