/* proff/config.h — proff's config file: ~/.proffconfig, or $PROFF_CONFIG,
 * in git-config syntax:
 *     [report]
 *         children = false
 *     [diff]
 *         order = 1
 *         compute = ratio
 *     [hist]
 *         percentage = relative
 * Keys are "section.name", case-insensitive.
 *
 * A config is an object its owner (the CLI) loads and passes to what reads
 * it: the library keeps no parsed config of its own. A NULL config reads as
 * an empty one.
 */
#ifndef PROFF_CONFIG_H
#define PROFF_CONFIG_H

#include <stdbool.h>
#include "proff/error.h"

typedef struct proff_config proff_config;

/* An empty config; NULL when out of memory. */
proff_config *pf_config_new(void);
void pf_config_free(proff_config *c);
/* Load from path, replacing what c held. A path that does not exist is an
 * empty config, not an error. On error c keeps the keys read before the bad
 * line. */
int pf_config_load(proff_config *c, const char *path, proff_error *err);
/* Load the user's file: $PROFF_CONFIG, else ~/.proffconfig (none without $HOME). */
int pf_config_load_default(proff_config *c, proff_error *err);
/* Value of key, or NULL if unset. */
const char *pf_config_get(const proff_config *c, const char *key);
/* Boolean value (true/yes/on/1, false/no/off/0); returns def if unset or invalid. */
bool pf_config_bool(const proff_config *c, const char *key, bool def);

#endif
