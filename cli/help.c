/* help.c — `proff help CMD` and `proff CMD --help`: the manual page, as git
 * opens its own. The page is the installed one (PREFIX/share/man, found
 * through the proff binary's own prefix as the runtime is) or the one
 * `make doc` built beside the binary; man shows it on a terminal. Without a
 * terminal or a page, the caller prints the -h usage instead. */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmds.h"

/* Where the page of `name` ("proff-report", "proff") is: 0 and its path in
 * out, -1 if none. */
static int find_page(const char *page, char *out, size_t len)
{
	char self[PATH_MAX - 64];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return -1;
	self[n] = 0;
	char *slash = strrchr(self, '/');
	if (!slash)
		return -1;
	*slash = 0;
	static const char *const rel[] = { "../share/man/man1", "man/man1" };
	for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		if ((size_t)snprintf(out, len, "%s/%s/%s.1", self, rel[i], page) >= len)
			continue;
		if (access(out, R_OK) == 0)
			return 0;
	}
	return -1;
}

int cli_manual_path(const char *cmd, char *out, size_t len)
{
	char page[64];
	/* "record --instrument" is in proff-record(1) */
	snprintf(page, sizeof(page), cmd ? "proff-%.*s" : "proff", cmd ? (int)strcspn(cmd, " ") : 0, cmd);
	return find_page(page, out, len);
}

int cli_show_manual(const char *cmd)
{
	char path[PATH_MAX];
	if (!isatty(STDOUT_FILENO) || cli_manual_path(cmd, path, sizeof(path)) < 0)
		return -1;
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		execlp("man", "man", "-l", path, (char *)NULL);
		_exit(127);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0)
		;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}
