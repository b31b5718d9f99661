/* config.c — reading proff's git-config-style file, and the sections of
 * perf's that proff knows (see proff/config.h). Every value keeps the file
 * and line it came from, for "bad config value" messages. */
#include "proff/config.h"
#include "proff/util.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define CONFIG_LINE_MAX 1023   /* bytes per line, newline excluded */
#define CONFIG_KEY_MAX  255    /* "section.name" */
#define CONFIG_FILE_MAX (1 << 20)

struct kv { char *key, *val, *file; unsigned line; };
struct proff_config {
	struct kv *kv;             /* in load order, one per key (the last value wins) */
	size_t n, cap;
	char perf_note[600];       /* perf's file could not be read: why ("" if it could) */
};

proff_config *pf_config_new(void)
{
	return calloc(1, sizeof(proff_config));
}

static void cfg_clear(proff_config *c)
{
	for (size_t i = 0; i < c->n; i++) {
		free(c->kv[i].key);
		free(c->kv[i].val);
		free(c->kv[i].file);
	}
	free(c->kv);
	c->kv = NULL;
	c->n = c->cap = 0;
}

void pf_config_free(proff_config *c)
{
	if (!c)
		return;
	cfg_clear(c);
	free(c);
}

/* perf's sections that proff reads from perf's file */
static bool perf_section(const char *section)
{
	static const char *const known[] = { "report", "diff", "call-graph", "hist" };
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (!strcasecmp(section, known[i]))
			return true;
	return false;
}

static char *trim(char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	char *e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

static int cfg_set(proff_config *c, const char *section, const char *name, const char *val, const char *file, unsigned line)
{
	char key[CONFIG_KEY_MAX + 1];
	snprintf(key, sizeof(key), "%s.%s", section, name);   /* length checked by the caller */
	for (char *p = key; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	for (size_t i = 0; i < c->n; i++) {
		if (!strcmp(c->kv[i].key, key)) {     /* last one wins, as in git */
			char *v = strdup(val), *f = strdup(file);
			if (!v || !f) {
				free(v);
				free(f);
				return -1;
			}
			free(c->kv[i].val);
			free(c->kv[i].file);
			c->kv[i].val = v;
			c->kv[i].file = f;
			c->kv[i].line = line;
			return 0;
		}
	}
	if (PF_GROW(c->kv, c->cap, c->n + 1) < 0)
		return -1;
	char *k = strdup(key), *v = strdup(val), *f = strdup(file);
	if (!k || !v || !f) {
		free(k);
		free(v);
		free(f);
		return -1;
	}
	c->kv[c->n] = (struct kv){ k, v, f, line };
	c->n++;
	return 0;
}

/* Add path's keys (only perf's sections proff knows, with perf_only) to
 * what is loaded; a later file's key wins. */
static int load_file(proff_config *c, const char *path, bool perf_only, proff_error *err)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		if (errno == ENOENT)
			return 0;
		return proff_err_sys(err, PROFF_EIO, path, "cannot read config");
	}
	/* the whole file (size-limited), then line by line with exact offsets */
	size_t cap = 4096, size = 0;
	char *buf = malloc(cap);
	int rc = 0;
	while (buf) {
		if (size == cap) {
			if (cap > CONFIG_FILE_MAX)
				break;
			size_t nc = cap * 2 > CONFIG_FILE_MAX + 1 ? CONFIG_FILE_MAX + 1 : cap * 2;
			char *nb = realloc(buf, nc);
			if (!nb) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
			cap = nc;
		}
		size_t r = fread(buf + size, 1, cap - size, f);
		size += r;
		if (size < cap)
			break;             /* end of file or error */
	}
	if (!buf)
		rc = proff_err_set(err, PROFF_ENOMEM, path, PROFF_NO_OFFSET, "out of memory");
	else if (ferror(f))
		rc = proff_err_sys(err, PROFF_EIO, path, "cannot read config");
	else if (size > CONFIG_FILE_MAX)
		rc = proff_err_set(err, PROFF_EFORMAT, path, CONFIG_FILE_MAX, "config file larger than %d bytes",
				   CONFIG_FILE_MAX);
	fclose(f);
	char line[CONFIG_LINE_MAX + 1], section[128] = "";
	unsigned lineno = 0;
	for (size_t pos = 0; !rc && pos < size;) {
		lineno++;
		uint64_t this_off = pos;
		const char *nl = memchr(buf + pos, '\n', size - pos);
		size_t ll = nl ? (size_t)(nl - (buf + pos)) : size - pos;
		if (ll > CONFIG_LINE_MAX) {
			rc = proff_err_set(err, PROFF_EFORMAT, path, this_off,
					   "line %u: longer than %d bytes", lineno, CONFIG_LINE_MAX);
			break;
		}
		if (memchr(buf + pos, 0, ll)) {
			rc = proff_err_set(err, PROFF_EFORMAT, path, this_off, "line %u: NUL byte", lineno);
			break;
		}
		memcpy(line, buf + pos, ll);
		line[ll] = '\0';
		pos += ll + (nl != NULL);
		char *s = trim(line);
		if (!*s || *s == '#' || *s == ';')
			continue;
		if (*s == '[') {
			char *e = strchr(s, ']');
			if (!e) {
				rc = proff_err_set(err, PROFF_EFORMAT, path, this_off,
						   "line %u: missing ']' in section header", lineno);
				break;
			}
			*e = '\0';
			const char *sec = trim(s + 1);
			if (strlen(sec) >= sizeof(section)) {
				rc = proff_err_set(err, PROFF_EFORMAT, path, this_off,
						   "line %u: section name longer than %zu bytes", lineno,
						   sizeof(section) - 1);
				break;
			}
			snprintf(section, sizeof(section), "%s", sec);
			continue;
		}
		if (!section[0]) {
			rc = proff_err_set(err, PROFF_EFORMAT, path, this_off,
					   "line %u: key outside of a [section]", lineno);
			break;
		}
		char *eq = strchr(s, '=');
		const char *val = "true";
		if (eq) {
			*eq = '\0';
			val = trim(eq + 1);
		}
		char *name = trim(s);
		if (strlen(section) + 1 + strlen(name) > CONFIG_KEY_MAX) {
			rc = proff_err_set(err, PROFF_EFORMAT, path, this_off,
					   "line %u: key '%s.%.40s...' longer than %d bytes", lineno, section, name,
					   CONFIG_KEY_MAX);
			break;
		}
		/* strip a trailing comment and surrounding quotes */
		char vbuf[CONFIG_LINE_MAX + 1];
		snprintf(vbuf, sizeof(vbuf), "%s", val);
		char *hash = strpbrk(vbuf, "#;");
		if (hash)
			*hash = '\0';
		char *v = trim(vbuf);
		size_t vl = strlen(v);
		if (vl >= 2 && v[0] == '"' && v[vl - 1] == '"') {
			v[vl - 1] = '\0';
			v++;
		}
		if (perf_only && !perf_section(section))
			continue;
		if (cfg_set(c, section, name, v, path, lineno) < 0) {
			rc = proff_err_set(err, PROFF_ENOMEM, path, this_off, "out of memory");
			break;
		}
	}
	free(buf);
	return rc;
}

int pf_config_load(proff_config *c, const char *path, proff_error *err)
{
	cfg_clear(c);
	c->perf_note[0] = 0;
	return load_file(c, path, false, err);
}

/* $VAR, else ~/NAME, into buf; NULL if neither */
static const char *config_path(const char *var, const char *name, char *buf, size_t len)
{
	const char *p = getenv(var);
	if (p)
		return p;
	const char *home = getenv("HOME");
	if (!home)
		return NULL;
	snprintf(buf, len, "%s/%s", home, name);
	return buf;
}

/* perf's file first ($PERF_CONFIG or ~/.perfconfig: the sections proff
 * knows), then proff's ($PROFF_CONFIG or ~/.proffconfig), whose keys win. */
int pf_config_load_default(proff_config *c, proff_error *err)
{
	cfg_clear(c);
	c->perf_note[0] = 0;
	char buf[4096];
	const char *perf = config_path("PERF_CONFIG", ".perfconfig", buf, sizeof(buf));
	if (perf) {
		proff_error e;
		proff_err_clear(&e);
		if (load_file(c, perf, true, &e) < 0) {
			/* perf's file is perf's: a line proff cannot read leaves it
			 * out, said once (pf_config_note) */
			char eb[512];
			snprintf(c->perf_note, sizeof(c->perf_note), "%s; perf's config file ignored",
				 proff_err_str(&e, eb, sizeof(eb)));
			cfg_clear(c);
		}
	}
	const char *own = config_path("PROFF_CONFIG", ".proffconfig", buf, sizeof(buf));
	return own ? load_file(c, own, false, err) : 0;
}

static const struct kv *cfg_find(const proff_config *c, const char *key)
{
	if (!c)
		return NULL;
	for (size_t i = 0; i < c->n; i++)
		if (!strcasecmp(c->kv[i].key, key))
			return &c->kv[i];
	return NULL;
}

const char *pf_config_get(const proff_config *c, const char *key)
{
	const struct kv *kv = cfg_find(c, key);
	return kv ? kv->val : NULL;
}

bool pf_config_bool(const proff_config *c, const char *key, bool def)
{
	const char *v = pf_config_get(c, key);
	int b = v ? pf_config_parse_bool(v) : -1;
	return b < 0 ? def : b;
}

const char *pf_config_note(const proff_config *c)
{
	return c && c->perf_note[0] ? c->perf_note : NULL;
}

bool pf_config_where(const proff_config *c, const char *key, const char **file, unsigned *line)
{
	const struct kv *kv = cfg_find(c, key);
	if (!kv)
		return false;
	*file = kv->file;
	*line = kv->line;
	return true;
}

int pf_config_parse_bool(const char *v)
{
	if (!strcasecmp(v, "true") || !strcasecmp(v, "yes") || !strcasecmp(v, "on") || !strcmp(v, "1"))
		return 1;
	if (!strcasecmp(v, "false") || !strcasecmp(v, "no") || !strcasecmp(v, "off") || !strcmp(v, "0"))
		return 0;
	return -1;
}
