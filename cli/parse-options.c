/* parse-options.c — the one option library of the proff commands: parsing
 * of a command's opt_def table, perf's -h layout and messages, "did you
 * mean" for unknown options. See parse-options.h for the rules. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmds.h"
#include "parse-options.h"

#define USAGE_OPTS_WIDTH 24   /* perf's: options wider than this get their own line */
#define USAGE_GAP 2

void po_strlist_release(po_strlist *l)
{
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

static bool takes_arg(const opt_def *d)
{
	switch (d->kind) {
	case O_STR: case O_STR_NOEMPTY: case O_INT: case O_DOUBLE: case O_STRLIST:
		return true;
	case O_CALLBACK:
		return !(d->flags & PO_NOARG);
	default:
		return false;
	}
}

static bool optional_arg(const opt_def *d)
{
	return d->flags & (PO_OPTARG | PO_OPTARG_NEXT);
}

static bool is_option(const opt_def *d)
{
	return d->kind != O_GROUP && (d->s || d->l);
}

/* ---- -h ----------------------------------------------------------------- */

static void print_opt(const opt_def *d, FILE *f)
{
	char buf[320];
	int n;
	if (d->s && d->l)
		n = snprintf(buf, sizeof(buf), "    -%c, --%s", d->s, d->l);
	else if (d->s)
		n = snprintf(buf, sizeof(buf), "    -%c", d->s);
	else
		n = snprintf(buf, sizeof(buf), "        --%s", d->l);
	if (d->argh && takes_arg(d) && n > 0 && (size_t)n < sizeof(buf))
		n += snprintf(buf + n, sizeof(buf) - (size_t)n, optional_arg(d) ? "[=<%s>]" : " <%s>", d->argh);
	if (n <= USAGE_OPTS_WIDTH)
		fprintf(f, "%-*s%s\n", USAGE_OPTS_WIDTH + USAGE_GAP, buf, d->help);
	else
		fprintf(f, "%s\n%*s%s\n", buf, USAGE_OPTS_WIDTH + USAGE_GAP, "", d->help);
}

static void print_usage_lines(const po_cmd *cmd, FILE *f)
{
	for (size_t i = 0; cmd->usage[i]; i++)
		fprintf(f, "%s proff %s\n", i ? "    or:" : "\n Usage:", cmd->usage[i]);
	fputc('\n', f);
}

void po_usage(const po_cmd *cmd, const opt_def *d, FILE *f)
{
	print_usage_lines(cmd, f);
	if (d) {
		print_opt(d, f);
	} else {
		print_opt(&(opt_def){ 'h', "help", O_BOOL, 0, NULL, "show this help (--help: the manual page)", 0, NULL, 0 }, f);
		for (size_t i = 0; i < cmd->nr; i++) {
			const opt_def *o = &cmd->opts[i];
			if (o->flags & PO_HIDDEN)
				continue;
			if (o->kind == O_GROUP)
				fprintf(f, "\n%s\n", o->help);
			else
				print_opt(o, f);
		}
		if (cmd->help_tail)
			cmd->help_tail(f);
	}
	fputc('\n', f);
}

int po_error(const po_cmd *cmd, const opt_def *d, const char *fmt, ...)
{
	va_list ap;
	fputs("  Error: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	print_usage_lines(cmd, stderr);
	if (d) {
		print_opt(d, stderr);
		fputc('\n', stderr);
	}
	return EXIT_USAGE;
}

void po_list_opts(const po_cmd *cmd, FILE *f)
{
	for (size_t i = 0; i < cmd->nr; i++) {
		const opt_def *d = &cmd->opts[i];
		if (!is_option(d) || (d->flags & PO_HIDDEN))
			continue;
		if (d->l)
			fprintf(f, "--%s%s\n", d->l, takes_arg(d) && !optional_arg(d) ? "=" : "");
		if (d->s)
			fprintf(f, "-%c\n", d->s);
	}
}

/* ---- did you mean -------------------------------------------------------- */

unsigned po_distance(const char *a, const char *b, size_t blen)
{
	size_t alen = strlen(a);
	if (alen > 64 || blen > 64)
		return 99;
	/* three rows of the Damerau-Levenshtein matrix */
	unsigned rows[3][65], *prev2 = rows[0], *prev = rows[1], *cur = rows[2];
	for (size_t j = 0; j <= blen; j++)
		prev[j] = (unsigned)j;
	for (size_t i = 1; i <= alen; i++) {
		cur[0] = (unsigned)i;
		for (size_t j = 1; j <= blen; j++) {
			unsigned cost = a[i - 1] != b[j - 1];
			unsigned v = prev[j - 1] + cost;
			if (prev[j] + 1 < v)
				v = prev[j] + 1;
			if (cur[j - 1] + 1 < v)
				v = cur[j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && prev2[j - 2] + 1 < v)
				v = prev2[j - 2] + 1;
			cur[j] = v;
		}
		unsigned *t = prev2;
		prev2 = prev;
		prev = cur;
		cur = t;
	}
	return prev[blen];
}

bool po_near(const char *typed, size_t len, const char *cand, unsigned best)
{
	(void)cand;
	unsigned limit = len < 5 ? 1 : len < 9 ? 2 : 3;
	return best <= limit;
}

/* The distance from typed to d's long name, or its --no- form (*neg). */
static unsigned opt_distance(const char *typed, size_t len, const opt_def *d, bool *neg)
{
	unsigned dist = po_distance(typed, d->l, strlen(d->l));
	*neg = false;
	if (!(d->flags & PO_NONEG) && len > 3 && !strncmp(typed, "no-", 3)) {
		unsigned dn = po_distance(typed + 3, d->l, strlen(d->l));
		if (dn < dist) {
			dist = dn;
			*neg = true;
		}
	}
	return dist;
}

/* The nearest long names to name[0..len) (negated forms too), printed as
 * perf prints the options of a usage error. Returns how many. */
static size_t suggest(const po_cmd *cmd, const char *name, size_t len, FILE *f)
{
	char typed[80];
	if (len >= sizeof(typed))
		return 0;
	memcpy(typed, name, len);
	typed[len] = 0;
	unsigned best = 99;
	size_t count = 0;
	bool neg;
	for (size_t i = 0; i < cmd->nr; i++) {
		const opt_def *d = &cmd->opts[i];
		if (!is_option(d) || !d->l || (d->flags & PO_HIDDEN))
			continue;
		unsigned dist = opt_distance(typed, len, d, &neg);
		if (dist < best)
			best = dist, count = 0;
		count += dist == best;
	}
	if (!count || !po_near(typed, len, NULL, best))
		return 0;
	for (size_t i = 0; i < cmd->nr && count == 1; i++) {
		const opt_def *d = &cmd->opts[i];
		if (is_option(d) && d->l && !(d->flags & PO_HIDDEN) && opt_distance(typed, len, d, &neg) == best)
			fprintf(f, "  Did you mean --%s%s?\n\n", neg ? "no-" : "", d->l);
	}
	if (count > 1)
		fprintf(f, "  Did you mean one of these?\n\n");
	for (size_t i = 0; i < cmd->nr; i++) {
		const opt_def *d = &cmd->opts[i];
		if (!is_option(d) || !d->l || (d->flags & PO_HIDDEN) || opt_distance(typed, len, d, &neg) != best)
			continue;
		if (neg)
			fprintf(f, "        --no-%s\n", d->l);
		else
			print_opt(d, f);
	}
	return count;
}

static int unknown_long(const po_cmd *cmd, const char *name, size_t len)
{
	/* the nearest options, not the whole usage as perf prints it */
	fprintf(stderr, "  Error: unknown option `%.*s'\n", (int)len, name);
	if (!suggest(cmd, name, len, stderr)) {
		print_usage_lines(cmd, stderr);
		fprintf(stderr, " See 'proff %s -h' for the options.\n", cmd->name);
	}
	fputc('\n', stderr);
	return EXIT_USAGE;
}

/* ---- parsing ------------------------------------------------------------- */

const opt_def *po_find(const po_cmd *cmd, const char *long_name, char short_name)
{
	for (size_t i = 0; i < cmd->nr; i++) {
		const opt_def *d = &cmd->opts[i];
		if (!is_option(d))
			continue;
		if (long_name && d->l && !strcmp(d->l, long_name))
			return d;
		if (!long_name && short_name && d->s == short_name)
			return d;
	}
	return NULL;
}

/* exact name, else a unique abbreviation; *amb[0..1] the first two
 * candidates of an ambiguous one */
static const opt_def *find_long(const po_cmd *cmd, const char *name, size_t len, const opt_def **amb)
{
	const opt_def *hit = NULL;
	amb[0] = amb[1] = NULL;
	for (size_t i = 0; i < cmd->nr; i++) {
		const opt_def *d = &cmd->opts[i];
		if (!is_option(d) || !d->l || strncmp(d->l, name, len))
			continue;
		if (strlen(d->l) == len)
			return d;
		if (hit) {
			amb[0] = hit;
			amb[1] = d;
		}
		hit = d;
	}
	return amb[0] ? NULL : hit;
}

static const char *optname(const opt_def *d, bool as_short, char *buf, size_t len)
{
	if (as_short || !d->l)
		snprintf(buf, len, "switch `%c'", d->s);
	else
		snprintf(buf, len, "option `%s'", d->l);
	return buf;
}

/* Store one option's value. Returns 0 or an exit status. */
static int set_value(po_ctx *ctx, const opt_def *d, const char *arg, bool unset, bool as_short)
{
	char *field = (char *)ctx->obj + d->off;
	char nb[96];
	switch (d->kind) {
	case O_BOOL:
		*(bool *)field = !unset;
		return 0;
	case O_COUNT:
		*(int *)field = unset ? 0 : *(int *)field + 1;
		return 0;
	case O_SET_INT:
		*(int *)field = unset ? 0 : (int)d->defval;
		return 0;
	case O_STR_NOEMPTY:
		if (!unset && (!arg || !*arg))
			return po_error(ctx->cmd, d, "%s requires a non empty argument", optname(d, as_short, nb, sizeof(nb)));
		/* fallthrough */
	case O_STR:
		*(const char **)field = unset ? NULL : arg;
		return 0;
	case O_INT: {
		if (unset) {
			*(int *)field = 0;
			return 0;
		}
		char *end;
		errno = 0;
		long v = strtol(arg, &end, 0);
		if (end == arg || *end || errno || v < -2147483647L - 1 || v > 2147483647L)
			return po_error(ctx->cmd, d, "%s expects a numerical value", optname(d, as_short, nb, sizeof(nb)));
		*(int *)field = (int)v;
		return 0;
	}
	case O_DOUBLE: {
		if (unset) {
			*(double *)field = 0;
			return 0;
		}
		char *end;
		double v = strtod(arg, &end);
		if (end == arg || *end)
			return po_error(ctx->cmd, d, "%s expects a numerical value", optname(d, as_short, nb, sizeof(nb)));
		*(double *)field = v;
		return 0;
	}
	case O_STRLIST: {
		po_strlist *l = (po_strlist *)field;
		if (unset) {
			l->n = 0;
			return 0;
		}
		const char **nv = realloc(l->v, (l->n + 1) * sizeof(*nv));
		if (!nv) {
			cli_errorf("out of memory");
			return 1;
		}
		l->v = nv;
		l->v[l->n++] = arg;
		return 0;
	}
	case O_CALLBACK:
		return d->cb ? d->cb(ctx, d, arg, unset) : 0;
	}
	return 0;
}

int po_set(const po_cmd *cmd, void *obj, const opt_def *d, const char *arg, bool unset)
{
	po_ctx ctx = { cmd, obj, 1 };
	return set_value(&ctx, d, arg, unset, false);
}

static int help(const po_cmd *cmd, bool manual)
{
	if (manual && cli_show_manual(cmd->name) == 0)
		return 0;
	po_usage(cmd, NULL, stdout);
	return cmd->flags & PO_CMD_HELP_EXIT_USAGE ? EXIT_USAGE : 0;
}

/* One long option at argv[*i] ("--" stripped: name). 0 or an exit status;
 * *done: the command is done (-h, --list-opts), with that status. */
static int parse_long(po_ctx *ctx, int argc, char **argv, int *i, const char *name, bool *stop, bool *done)
{
	const po_cmd *cmd = ctx->cmd;
	const char *eq = strchr(name, '=');
	size_t len = eq ? (size_t)(eq - name) : strlen(name);
	bool neg = false;
	const opt_def *amb[2];
	if (!eq && !strcmp(name, "help")) {
		*done = true;
		return help(cmd, true);
	}
	if (!eq && !strcmp(name, "list-opts")) {
		*done = true;
		po_list_opts(cmd, stdout);
		return 0;
	}
	const opt_def *d = find_long(cmd, name, len, amb);
	if (!d && !amb[0] && len > 3 && !strncmp(name, "no-", 3)) {
		d = find_long(cmd, name + 3, len - 3, amb);
		neg = d != NULL;
		if (d && (d->flags & PO_NONEG))
			d = NULL, neg = false;
	}
	if (!d && amb[0]) {
		fprintf(stderr, "  Error: Ambiguous option: %.*s (could be --%s%s or --%s%s)\n", (int)len, name,
			neg ? "no-" : "", amb[0]->l, neg ? "no-" : "", amb[1]->l);
		print_usage_lines(cmd, stderr);
		print_opt(amb[0], stderr);
		print_opt(amb[1], stderr);
		fputc('\n', stderr);
		return EXIT_USAGE;
	}
	if (!d)
		return unknown_long(cmd, name, len);
	ctx->seq++;
	const char *arg = NULL;
	if (neg || !takes_arg(d)) {
		if (eq)
			return po_error(cmd, d, "option `%s%s' takes no value", neg ? "no-" : "", d->l);
	} else if (eq) {
		arg = eq + 1;
	} else if (d->flags & PO_OPTARG_NEXT) {
		if (*i + 1 < argc && argv[*i + 1][0] != '-')
			arg = argv[++*i];
	} else if (!(d->flags & PO_OPTARG)) {
		if (*i + 1 >= argc)
			return po_error(cmd, d, "option `%s' requires a value", d->l);
		arg = argv[++*i];
	}
	*stop = d->flags & PO_STOP;
	return set_value(ctx, d, arg, neg, false);
}

/* The short options bundled in argv[*i] ("-" stripped: s); as parse_long. */
static int parse_short(po_ctx *ctx, int argc, char **argv, int *i, const char *s, bool *stop, bool *done)
{
	const po_cmd *cmd = ctx->cmd;
	for (const char *p = s; *p; p++) {
		const opt_def *d = po_find(cmd, NULL, *p);
		if (!d && *p == 'h') {
			*done = true;
			return help(cmd, false);
		}
		if (!d) {
			fprintf(stderr, "  Error: unknown switch `%c'\n", *p);
			print_usage_lines(cmd, stderr);
			fprintf(stderr, " See 'proff %s -h' for the options.\n\n", cmd->name);
			return EXIT_USAGE;
		}
		ctx->seq++;
		*stop = d->flags & PO_STOP;
		if (!takes_arg(d)) {
			int rc = set_value(ctx, d, NULL, false, true);
			if (rc || *stop)
				return rc;
			continue;
		}
		const char *arg = NULL;
		if (p[1])
			arg = p + 1;
		else if (d->flags & PO_OPTARG_NEXT) {
			if (*i + 1 < argc && argv[*i + 1][0] != '-')
				arg = argv[++*i];
		} else if (!(d->flags & PO_OPTARG)) {
			if (*i + 1 >= argc)
				return po_error(cmd, d, "switch `%c' requires a value", *p);
			arg = argv[++*i];
		}
		return set_value(ctx, d, arg, false, true);
	}
	return 0;
}

bool po_parse(const po_cmd *cmd, void *obj, int argc, char **argv, char **pos, int *npos, int *status)
{
	po_ctx ctx = { .cmd = cmd, .obj = obj, .seq = 0 };
	int n = 0;
	for (int i = 1; i < argc; i++) {
		char *a = argv[i];
		bool stop = false, done = false;
		if (!strcmp(a, "--") && (cmd->flags & PO_CMD_DASHDASH_WORD)) {
			pos[n++] = NULL;
			continue;
		}
		if (!strcmp(a, "--")) {
			while (++i < argc)
				pos[n++] = argv[i];
			break;
		}
		if (a[0] != '-' || !a[1]) {
			if (cmd->flags & PO_CMD_STOP_AT_NON_OPTION) {
				while (i < argc)
					pos[n++] = argv[i++];
				break;
			}
			pos[n++] = a;
			continue;
		}
		int rc = a[1] == '-' ? parse_long(&ctx, argc, argv, &i, a + 2, &stop, &done)
				     : parse_short(&ctx, argc, argv, &i, a + 1, &stop, &done);
		if (rc || done) {
			*status = rc;
			*npos = n;
			return false;
		}
		if (stop) {
			while (++i < argc)
				pos[n++] = argv[i];
			break;
		}
	}
	*npos = n;
	*status = 0;
	return true;
}
