/* config.c — reading proff's git-config-style file (see proff/config.h). */
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

struct kv { char *key, *val; };
struct proff_config {
	struct kv *kv;             /* in file order, one per key (the last value wins) */
	size_t n, cap;
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

static char *trim(char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	char *e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

static int cfg_set(proff_config *c, const char *section, const char *name, const char *val)
{
	char key[CONFIG_KEY_MAX + 1];
	snprintf(key, sizeof(key), "%s.%s", section, name);   /* length checked by the caller */
	for (char *p = key; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	for (size_t i = 0; i < c->n; i++) {
		if (!strcmp(c->kv[i].key, key)) {     /* last one wins, as in git */
			char *v = strdup(val);
			if (!v)
				return -1;
			free(c->kv[i].val);
			c->kv[i].val = v;
			return 0;
		}
	}
	if (PF_GROW(c->kv, c->cap, c->n + 1) < 0)
		return -1;
	char *k = strdup(key), *v = strdup(val);
	if (!k || !v) {
		free(k);
		free(v);
		return -1;
	}
	c->kv[c->n].key = k;
	c->kv[c->n].val = v;
	c->n++;
	return 0;
}

int pf_config_load(proff_config *c, const char *path, proff_error *err)
{
	cfg_clear(c);
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
		if (cfg_set(c, section, name, v) < 0) {
			rc = proff_err_set(err, PROFF_ENOMEM, path, this_off, "out of memory");
			break;
		}
	}
	free(buf);
	return rc;
}

int pf_config_load_default(proff_config *c, proff_error *err)
{
	const char *p = getenv("PROFF_CONFIG");
	char buf[4096];
	if (!p) {
		const char *home = getenv("HOME");
		if (!home) {
			cfg_clear(c);
			return 0;
		}
		snprintf(buf, sizeof(buf), "%s/.proffconfig", home);
		p = buf;
	}
	return pf_config_load(c, p, err);
}

const char *pf_config_get(const proff_config *c, const char *key)
{
	if (!c)
		return NULL;
	for (size_t i = 0; i < c->n; i++)
		if (!strcasecmp(c->kv[i].key, key))
			return c->kv[i].val;
	return NULL;
}

bool pf_config_bool(const proff_config *c, const char *key, bool def)
{
	const char *v = pf_config_get(c, key);
	if (!v)
		return def;
	if (!strcasecmp(v, "true") || !strcasecmp(v, "yes") || !strcasecmp(v, "on") || !strcmp(v, "1"))
		return true;
	if (!strcasecmp(v, "false") || !strcasecmp(v, "no") || !strcasecmp(v, "off") || !strcmp(v, "0"))
		return false;
	return def;
}
