/* select.c — the selector grammar of store queries: which profiles a
 * report or one side of a diff reads.
 *
 *   selector := term...            (one term per word, all must hold)
 *   term     := KEY OP VALUE
 *   KEY      := a label key, "id" (the profile id) or "time" (unix seconds)
 *   OP       := = | != | =~ | !~   (=~: POSIX extended regex, searched in the value)
 *             | < | <= | > | >=    (time only)
 *
 * A term is matched in C for the local store and turned into a ClickHouse
 * expression for the server: each value becomes an escaped string literal
 * (sbuf_quote), the key one too (labels are parallel arrays of keys and
 * values), so no word of a selector is ever SQL. A profile without the
 * label matches no = or =~ term and every != and !~ term.
 */
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "store-int.h"

void store_sel_free(store_sel *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->terms[i].key);
		free(s->terms[i].value);
		if (s->terms[i].re) {
			regfree(s->terms[i].re);
			free(s->terms[i].re);
		}
	}
	free(s->terms);
	memset(s, 0, sizeof(*s));
}

static bool is_key_char(char c, bool first)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
	       (!first && ((c >= '0' && c <= '9') || c == '.' || c == '-'));
}

/* YYYY-MM-DD[(T| )HH:MM[:SS]] in UTC, or unix seconds */
static int parse_time(const char *v, int64_t *out)
{
	char *end;
	if (*v >= '0' && *v <= '9' && !strchr(v, '-')) {
		long long n = strtoll(v, &end, 10);
		if (*end)
			return -1;
		*out = n;
		return 0;
	}
	struct tm tm;
	memset(&tm, 0, sizeof(tm));
	int y, mo, d, h = 0, mi = 0, s = 0, n = 0;
	if (sscanf(v, "%4d-%2d-%2d%n", &y, &mo, &d, &n) != 3)
		return -1;
	const char *r = v + n;
	if (*r == 'T' || *r == ' ') {
		int m2 = 0;
		if (sscanf(r + 1, "%2d:%2d%n", &h, &mi, &m2) != 2)
			return -1;
		r += 1 + m2;
		if (*r == ':') {
			int m3 = 0;
			if (sscanf(r + 1, "%2d%n", &s, &m3) != 1)
				return -1;
			r += 1 + m3;
		}
	}
	if (*r || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60)
		return -1;
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = s;
	*out = (int64_t)timegm(&tm);
	return 0;
}

static int term_parse(store_term *t, const char *w, proff_error *err)
{
	size_t k = 0;
	while (w[k] && is_key_char(w[k], k == 0))
		k++;
	if (!k)
		return proff_err_set(err, PROFF_EUSAGE, NULL, PROFF_NO_OFFSET,
				     "selector '%.200s': a term starts with a label key (letters, digits, '_', '.', '-')", w);
	if (k > STORE_KEY_MAX)
		return proff_err_set(err, PROFF_EUSAGE, NULL, PROFF_NO_OFFSET,
				     "selector '%.80s...': the key is longer than %d bytes", w, STORE_KEY_MAX);
	static const struct { const char *s; int op; } ops[] = {
		{ "=~", SEL_RE }, { "!~", SEL_NRE }, { "!=", SEL_NE }, { "<=", SEL_LE }, { ">=", SEL_GE },
		{ "=", SEL_EQ }, { "<", SEL_LT }, { ">", SEL_GT },
	};
	const char *o = w + k;
	size_t ol = 0;
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (!strncmp(o, ops[i].s, strlen(ops[i].s))) {
			t->op = ops[i].op;
			ol = strlen(ops[i].s);
			break;
		}
	if (!ol)
		return proff_err_set(err, PROFF_EUSAGE, NULL, PROFF_NO_OFFSET,
				     "selector '%.200s': no operator after the key '%.*s' (at character %zu; =, !=, =~, !~, and <, <=, >, >= for time)",
				     w, (int)k, w, k + 1);
	t->key = strndup(w, k);
	const char *v = o + ol;
	t->value_len = strlen(v);
	t->value = strdup(v);
	if (!t->key || !t->value)
		return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	bool is_time = !strcmp(t->key, "time");
	if (t->op >= SEL_LT && !is_time)
		return proff_err_set(err, PROFF_EUSAGE, NULL, PROFF_NO_OFFSET,
				     "selector '%.200s': <, <=, > and >= compare times only (time>=2026-11-01)", w);
	if (is_time) {
		if (t->op == SEL_RE || t->op == SEL_NRE)
			return proff_err_set(err, PROFF_EUSAGE, NULL, PROFF_NO_OFFSET,
					     "selector '%.200s': time is compared, not matched", w);
		if (parse_time(v, &t->time))
			return proff_err_set(err, PROFF_EUSAGE, NULL, PROFF_NO_OFFSET,
					     "selector '%.200s': '%.100s' is no time (YYYY-MM-DD[THH:MM[:SS]] UTC, or unix seconds)",
					     w, v);
		return 0;
	}
	proff_error le;
	if (strcmp(t->key, "id") && store_label_check(t->key, v, t->value_len, &le))
		return proff_err_set(err, PROFF_EUSAGE, NULL, PROFF_NO_OFFSET, "selector: %s", le.msg);
	if (t->op == SEL_RE || t->op == SEL_NRE) {
		t->re = calloc(1, sizeof(regex_t));
		if (!t->re)
			return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
		int rc = regcomp(t->re, v, REG_EXTENDED | REG_NOSUB);
		if (rc) {
			char eb[128];
			regerror(rc, t->re, eb, sizeof(eb));
			free(t->re);
			t->re = NULL;
			return proff_err_set(err, PROFF_EUSAGE, NULL, PROFF_NO_OFFSET,
					     "selector '%.200s': bad regular expression: %s", w, eb);
		}
	}
	return 0;
}

int store_sel_parse(store_sel *s, char *const *words, size_t nwords, proff_error *err)
{
	memset(s, 0, sizeof(*s));
	s->terms = calloc(nwords ? nwords : 1, sizeof(*s->terms));
	if (!s->terms)
		return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	for (size_t i = 0; i < nwords; i++) {
		s->n++;
		int rc = term_parse(&s->terms[i], words[i], err);
		if (rc) {
			store_sel_free(s);
			return rc;
		}
	}
	return 0;
}

static bool term_match(const store_term *t, const store_prof *sp)
{
	if (!strcmp(t->key, "time")) {
		int64_t v = sp->time;
		switch (t->op) {
		case SEL_EQ: return v == t->time;
		case SEL_NE: return v != t->time;
		case SEL_LT: return v < t->time;
		case SEL_LE: return v <= t->time;
		case SEL_GT: return v > t->time;
		case SEL_GE: return v >= t->time;
		default: return false;
		}
	}
	const char *v = NULL;
	size_t vl = 0;
	if (!strcmp(t->key, "id")) {
		v = sp->id;
		vl = strlen(v);
	} else {
		for (size_t i = 0; i < sp->nr_labels; i++)
			if (!strcmp(pf_strtab_get(&sp->strs, sp->labels[i].key), t->key)) {
				v = pf_strtab_get(&sp->strs, sp->labels[i].value);
				vl = sp->strs.lens[sp->labels[i].value];
			}
	}
	switch (t->op) {
	case SEL_EQ: return v && vl == t->value_len && !memcmp(v, t->value, vl);
	case SEL_NE: return !v || vl != t->value_len || memcmp(v, t->value, vl);
	case SEL_RE: return v && !regexec(t->re, v, 0, NULL, 0);
	case SEL_NRE: return !v || regexec(t->re, v, 0, NULL, 0);
	default: return false;
	}
}

bool store_sel_match(const store_sel *s, const store_prof *sp)
{
	for (size_t i = 0; i < s->n; i++)
		if (!term_match(&s->terms[i], sp))
			return false;
	return true;
}

long store_group_of(const store_query *q, const store_prof *sp)
{
	for (size_t g = 0; g < q->ngroups; g++)
		if (store_sel_match(&q->groups[g], sp))
			return (long)g;
	return -1;
}

/* Over the profiles table's columns: id String, time DateTime,
 * label_keys Array(String), label_values Array(String) */
static void term_sql(sbuf *b, const store_term *t)
{
	static const char *cmp[] = { [SEL_EQ] = "=", [SEL_NE] = "!=", [SEL_LT] = "<", [SEL_LE] = "<=",
				     [SEL_GT] = ">", [SEL_GE] = ">=" };
	if (!strcmp(t->key, "time")) {
		sbuf_printf(b, "toUInt32(time) %s %lld", cmp[t->op], (long long)(t->time < 0 ? 0 : t->time));
		return;
	}
	sbuf v = { 0 };
	if (!strcmp(t->key, "id")) {
		sbuf_puts(&v, "id");
	} else {
		sbuf_puts(&v, "label_values[indexOf(label_keys, ");
		sbuf_quote(&v, t->key, strlen(t->key));
		sbuf_puts(&v, ")]");
	}
	const char *val = v.oom ? "''" : v.p;
	sbuf has = { 0 };
	if (strcmp(t->key, "id")) {
		sbuf_puts(&has, "has(label_keys, ");
		sbuf_quote(&has, t->key, strlen(t->key));
		sbuf_puts(&has, ")");
	} else {
		sbuf_puts(&has, "1");
	}
	const char *h = has.oom ? "0" : has.p;
	switch (t->op) {
	case SEL_EQ:
	case SEL_NE:
		sbuf_printf(b, "%s(%s AND %s = ", t->op == SEL_NE ? "NOT " : "", h, val);
		sbuf_quote(b, t->value, t->value_len);
		sbuf_puts(b, ")");
		break;
	case SEL_RE:
	case SEL_NRE:
		sbuf_printf(b, "%s(%s AND match(%s, ", t->op == SEL_NRE ? "NOT " : "", h, val);
		sbuf_quote(b, t->value, t->value_len);
		sbuf_puts(b, "))");
		break;
	default:
		sbuf_puts(b, "0");
		break;
	}
	sbuf_free(&v);
	sbuf_free(&has);
}

char *store_sel_sql(const store_sel *s)
{
	sbuf b = { 0 };
	sbuf_puts(&b, "(1");
	for (size_t i = 0; i < s->n; i++) {
		sbuf_puts(&b, " AND ");
		term_sql(&b, &s->terms[i]);
	}
	sbuf_puts(&b, ")");
	if (b.oom) {
		sbuf_free(&b);
		return NULL;
	}
	return b.p;
}
