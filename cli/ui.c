/* ui.c — proff at home in a terminal, as git and perf are: the pager and
 * colour. Both are decided here, in the CLI; the library's printers only
 * take a colour flag. Nothing changes when stdout is not a terminal: the
 * bytes are the ones a redirect always got.
 *
 * Pager: on a terminal, a command's output goes through $PROFF_PAGER,
 * pager.<cmd> (a command, or false/true), core.pager, $PAGER or `less`,
 * run by the shell as git runs it, with LESS=FRX unless LESS is set;
 * --no-pager / --pager (or `proff --no-pager CMD`) decide first. When the
 * user quits the pager before the end, proff ends quietly with status 0.
 *
 * Colour: --color=auto|always|never, else color.ui (or color.<cmd>) from
 * the config, else auto; NO_COLOR (set, not empty) turns auto off. Auto is
 * on when stdout is a terminal (before the pager takes it) and TERM is not
 * "dumb".
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmds.h"
#include "parse-options.h"
#include "proff/config.h"

static struct {
	int pager_opt;        /* -1 unset, 0 --no-pager, 1 --pager */
	int color_opt;        /* -1 unset, else CLI_COLOR_* */
	int stdout_tty;       /* -1 not yet looked at */
	pid_t pager_pid;      /* 0: no pager */
} ui = { -1, -1, -1, 0 };

static bool stdout_is_tty(void)
{
	if (ui.stdout_tty < 0)
		ui.stdout_tty = isatty(STDOUT_FILENO);
	return ui.stdout_tty;
}

void cli_ui_init(void)
{
	stdout_is_tty();
}

void cli_pager_option(bool on)
{
	ui.pager_opt = on;
}

int cli_color_option(const char *when)
{
	int c = cli_color_parse(when ? when : "always");
	if (c < 0)
		return -1;
	ui.color_opt = c;
	return 0;
}

int cli_color_parse(const char *v)
{
	if (!strcasecmp(v, "auto"))
		return CLI_COLOR_AUTO;
	if (!strcasecmp(v, "always") || !strcasecmp(v, "true") || !strcasecmp(v, "yes") || !strcasecmp(v, "on") ||
	    !strcmp(v, "1"))
		return CLI_COLOR_ALWAYS;
	if (!strcasecmp(v, "never") || !strcasecmp(v, "false") || !strcasecmp(v, "no") || !strcasecmp(v, "off") ||
	    !strcmp(v, "0"))
		return CLI_COLOR_NEVER;
	return -1;
}

bool cli_use_color(const char *cmd)
{
	int c = ui.color_opt;
	char key[64];
	snprintf(key, sizeof(key), "color.%s", cmd ? cmd : "ui");
	for (int k = 0; k < 2 && c < 0; k++) {
		const char *v = pf_config_get(cli_config(), k ? "color.ui" : key);
		if (!v)
			continue;
		c = cli_color_parse(v);
		if (c < 0)
			cli_config_bad(k ? "color.ui" : key, "not auto, always or never");
	}
	if (c < 0)
		c = CLI_COLOR_AUTO;
	if (c == CLI_COLOR_ALWAYS)
		return true;
	if (c == CLI_COLOR_NEVER)
		return false;
	const char *nc = getenv("NO_COLOR"), *term = getenv("TERM");
	if (nc && *nc)
		return false;
	return stdout_is_tty() && (!term || strcmp(term, "dumb"));
}

/* ---- pager --------------------------------------------------------------- */

/* The pager's command, or NULL for none. */
static const char *pager_command(const char *cmd)
{
	if (ui.pager_opt == 0 || !stdout_is_tty())
		return NULL;
	const char *p = getenv("PROFF_PAGER");
	char key[64];
	snprintf(key, sizeof(key), "pager.%s", cmd);
	const char *v = pf_config_get(cli_config(), key);
	if (v && ui.pager_opt < 0) {
		/* pager.<cmd>: a boolean, or the command to page with */
		int b = cli_color_parse(v);
		if (b == CLI_COLOR_NEVER)
			return NULL;
		if (b != CLI_COLOR_ALWAYS && b != CLI_COLOR_AUTO && !p)
			p = v;
	}
	if (!p)
		p = pf_config_get(cli_config(), "core.pager");
	if (!p)
		p = getenv("PAGER");
	if (!p)
		p = "less";
	if (!*p || !strcmp(p, "cat"))
		return NULL;
	return p;
}

/* The user quit the pager: the rest of the output has nowhere to go, and
 * that is no error. */
static void on_sigpipe(int sig)
{
	(void)sig;
	_exit(0);
}

void cli_pager_start(const char *cmd)
{
	if (ui.pager_pid)
		return;
	const char *pager = pager_command(cmd);
	if (!pager)
		return;
	int fd[2];
	if (pipe(fd) < 0)
		return;
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0) {
		close(fd[0]);
		close(fd[1]);
		return;
	}
	if (pid == 0) {
		dup2(fd[0], STDIN_FILENO);
		close(fd[0]);
		close(fd[1]);
		setenv("LESS", getenv("LESS") ? getenv("LESS") : "FRX", 1);
		if (!getenv("LV"))
			setenv("LV", "-c", 1);
		execl("/bin/sh", "sh", "-c", pager, (char *)NULL);
		fprintf(stderr, "proff: cannot run pager '%s': %s\n", pager, strerror(errno));
		_exit(127);
	}
	close(fd[0]);
	dup2(fd[1], STDOUT_FILENO);
	if (isatty(STDERR_FILENO))
		dup2(fd[1], STDERR_FILENO);
	close(fd[1]);
	ui.pager_pid = pid;
	signal(SIGPIPE, on_sigpipe);
}

bool cli_pager_active(void)
{
	return ui.pager_pid != 0;
}

void cli_pager_finish(void)
{
	if (!ui.pager_pid)
		return;
	fflush(stdout);
	fflush(stderr);
	/* the pager sees the end of its input once both ends are closed */
	close(STDOUT_FILENO);
	close(STDERR_FILENO);
	/* ^C is for the pager now: proff waits for it to end */
	signal(SIGINT, SIG_IGN);
	int st;
	while (waitpid(ui.pager_pid, &st, 0) < 0 && errno == EINTR)
		;
	ui.pager_pid = 0;
}

/* ---- the options ------------------------------------------------------- */

int po_opt_pager(po_ctx *ctx, const opt_def *d, const char *arg, bool unset)
{
	cli_pager_option(!unset);
	return 0;
}

int po_opt_color(po_ctx *ctx, const opt_def *d, const char *arg, bool unset)
{
	if (unset)
		return cli_color_option("never"), 0;
	if (cli_color_option(arg) < 0)
		return po_error(ctx->cmd, d, "option `color' expects auto, always or never, not '%s'", arg);
	return 0;
}
