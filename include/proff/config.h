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
/* Load from path (every section), replacing what c held. A path that does
 * not exist is an empty config, not an error. On error c keeps the keys read
 * before the bad line. */
int pf_config_load(proff_config *c, const char *path, proff_error *err);
/* Load the user's files, replacing what c held: perf's ($PERF_CONFIG, else
 * ~/.perfconfig; its [report] [diff] [call-graph] [hist] only), then
 * proff's ($PROFF_CONFIG, else ~/.proffconfig), whose keys win. A perf file
 * proff cannot read is left out (pf_config_note says why); err is proff's
 * file's error. No file without $HOME. */
int pf_config_load_default(proff_config *c, proff_error *err);
/* Value of key, or NULL if unset. */
const char *pf_config_get(const proff_config *c, const char *key);
/* Boolean value (true/yes/on/1, false/no/off/0); returns def if unset or
 * invalid (the CLI says "bad config value" for an invalid one). */
bool pf_config_bool(const proff_config *c, const char *key, bool def);
/* Why perf's file was left out (a line proff cannot read), or NULL. */
const char *pf_config_note(const proff_config *c);
/* The file and line that set key; false if unset. */
bool pf_config_where(const proff_config *c, const char *key, const char **file, unsigned *line);
/* "true/yes/on/1" 1, "false/no/off/0" 0, else -1 */
int pf_config_parse_bool(const char *v);

#endif
