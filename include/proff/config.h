/* proff/config.h — proff's config file: ~/.proffconfig, or $PROFF_CONFIG,
 * in git-config syntax:
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
/* Boolean value (true/yes/on/1, false/no/off/0); returns def if unset or invalid. */
bool pf_config_bool(const char *key, bool def);
/* Load from an explicit path (tests); replaces the cached config. */
int pf_config_load(const char *path, proff_error *err);
/* Error from the automatic load, if the file was malformed (code 0 if none). */
const proff_error *pf_config_error(void);

#endif
