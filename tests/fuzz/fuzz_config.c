/* fuzz_config.c — libFuzzer target for the config-file parser
 * (lib/util/config.c, pf_config_load): the input is written to a memfd and
 * loaded by path (/proc/self/fd/N) into a config object, a few keys are read
 * back, then loading a path that does not exist must empty it, and it is
 * freed, so that nothing stays allocated between inputs. An error must name the file and say
 * what is wrong. Any crash, hang, leak or sanitizer report is a bug. Built and
 * run by tests/fuzz/run.sh.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "proff/config.h"

static int fd = -1;
static char path[64];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (fd < 0) {
		fd = memfd_create("fuzz-config", 0);
		if (fd < 0)
			abort();
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) < 0 || (size && pwrite(fd, data, size, 0) != (ssize_t)size))
		abort();
	proff_config *c = pf_config_new();
	if (!c)
		abort();
	proff_error e;
	memset(&e, 0, sizeof(e));
	if (pf_config_load(c, path, &e) < 0) {
		if (!e.code || !e.msg[0] || strcmp(e.file, path))
			abort();
	}
	static const char *keys[] = { "report.children", "diff.order", "diff.compute", "hist.percentage",
				      "a.b", "" };
	size_t acc = 0;
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		const char *v = pf_config_get(c, keys[i]);
		acc += v ? strlen(v) : 0;
		acc += pf_config_bool(c, keys[i], false);
	}
	(void)acc;
	if (pf_config_load(c, "/nonexistent/proff-fuzz-config", &e) != 0)
		abort();
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (pf_config_get(c, keys[i]))
			abort();
	pf_config_free(c);
	return 0;
}
