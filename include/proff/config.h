/* proff/config.h — proff's config file: ~/.proffconfig, or $PROFF_CONFIG,
 * and the [report], [diff], [call-graph] and [hist] sections of perf's
 * (~/.perfconfig, or $PERF_CONFIG; proff's file wins), in git-config syntax:
 *     [report]
 *         children = false
 *     [diff]
 *         order = 1
 *         compute = ratio
 *     [hist]
 *         percentage = relative
 * Keys are "section.name", case-insensitive. Read once, on first use.
 */
#ifndef PROFF_CONFIG_H
#define PROFF_CONFIG_H

#include <stdbool.h>
#include "proff/error.h"

/* Value of key, or NULL if unset. */
const char *pf_config_get(const char *key);
/* Boolean value (true/yes/on/1, false/no/off/0); returns def if unset or
 * invalid (the CLI says "bad config value" for an invalid one). */
bool pf_config_bool(const char *key, bool def);
/* Load from an explicit path (tests); replaces the cached config. */
int pf_config_load(const char *path, proff_error *err);
/* Error from the automatic load, if proff's file was malformed (code 0 if none). */
const proff_error *pf_config_error(void);
/* Why perf's file was left out (a line proff cannot read), or NULL. */
const char *pf_config_note(void);
/* The file and line that set key; false if unset. */
bool pf_config_where(const char *key, const char **file, unsigned *line);
/* "true/yes/on/1" 1, "false/no/off/0" 0, else -1 */
int pf_config_parse_bool(const char *v);

#endif
