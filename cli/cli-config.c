/* cli-config.c — the CLI's config: perf's and proff's config files (proff/config.h),
 * owned here and passed to what reads it. Loaded on first use, so that a
 * command which reads no key never opens the file (a malformed file then
 * fails only the commands that read it, as before the library stopped
 * keeping it). */
#include <stdbool.h>

#include "cmds.h"

static proff_config *config;     /* this process's, for its whole life */
static proff_error config_err;   /* from loading it (code 0 if none) */
static bool config_loaded;

const proff_config *cli_config(void)
{
	if (!config_loaded) {
		config_loaded = true;
		config = pf_config_new();
		if (!config)
			proff_err_set(&config_err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
		else
			pf_config_load_default(config, &config_err);
	}
	return config;
}

const proff_error *cli_config_load_error(void)
{
	cli_config();
	return &config_err;
}
