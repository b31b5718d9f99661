/* config.c — reading proff's git-config-style file (see proff/config.h). */
#include "proff/config.h"
#include "proff/util.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct kv { char *key, *val; };
static struct kv *cfg;
static size_t ncfg, capcfg;
static bool loaded;
static proff_error load_err;

static void cfg_clear(void)
{
	for (size_t i = 0; i < ncfg; i++) {
		free(cfg[i].key);
		free(cfg[i].val);
	}
	free(cfg);
	cfg = NULL;
	ncfg = capcfg = 0;
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

static int cfg_set(const char *section, const char *name, const char *val)
{
	char key[256];
	snprintf(key, sizeof(key), "%s.%s", section, name);
	for (char *p = key; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	for (size_t i = 0; i < ncfg; i++) {
		if (!strcmp(cfg[i].key, key)) {     /* last one wins, as in git */
			char *v = strdup(val);
			if (!v)
				return -1;
			free(cfg[i].val);
			cfg[i].val = v;
			return 0;
		}
	}
	if (PF_GROW(cfg, capcfg, ncfg + 1) < 0)
		return -1;
	cfg[ncfg].key = strdup(key);
	cfg[ncfg].val = strdup(val);
	if (!cfg[ncfg].key || !cfg[ncfg].val)
		return -1;
	ncfg++;
	return 0;
}

int pf_config_load(const char *path, proff_error *err)
{
	cfg_clear();
	loaded = true;
	FILE *f = fopen(path, "r");
	if (!f) {
		if (errno == ENOENT)
			return 0;
		return proff_err_sys(err, PROFF_EIO, path, "cannot read config");
	}
	char line[1024], section[128] = "";
	unsigned lineno = 0;
	uint64_t off = 0;
	int rc = 0;
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		uint64_t this_off = off;
		off += strlen(line);
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
			snprintf(section, sizeof(section), "%s", trim(s + 1));
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
		/* strip a trailing comment and surrounding quotes */
		char vbuf[1024];
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
		if (cfg_set(section, name, v) < 0) {
			rc = proff_err_set(err, PROFF_ENOMEM, path, this_off, "out of memory");
			break;
		}
	}
	fclose(f);
	return rc;
}

static void autoload(void)
{
	if (loaded)
		return;
	proff_err_clear(&load_err);
	const char *p = getenv("PROFF_CONFIG");
	char buf[4096];
	if (!p) {
		const char *home = getenv("HOME");
		if (!home) {
			loaded = true;
			return;
		}
		snprintf(buf, sizeof(buf), "%s/.proffconfig", home);
		p = buf;
	}
	pf_config_load(p, &load_err);
}

const char *pf_config_get(const char *key)
{
	autoload();
	for (size_t i = 0; i < ncfg; i++)
		if (!strcasecmp(cfg[i].key, key))
			return cfg[i].val;
	return NULL;
}

bool pf_config_bool(const char *key, bool def)
{
	const char *v = pf_config_get(key);
	if (!v)
		return def;
	if (!strcasecmp(v, "true") || !strcasecmp(v, "yes") || !strcasecmp(v, "on") || !strcmp(v, "1"))
		return true;
	if (!strcasecmp(v, "false") || !strcasecmp(v, "no") || !strcasecmp(v, "off") || !strcmp(v, "0"))
		return false;
	return def;
}

const proff_error *pf_config_error(void)
{
	autoload();
	return &load_err;
}
