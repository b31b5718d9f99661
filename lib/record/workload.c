/* workload.c — start the profiled command stopped, like perf's "workload
 * prepare": the child is forked at once and blocks reading a pipe; the
 * sampling events are opened on its pid (enable_on_exec), then one byte on
 * the pipe lets it exec. A second, close-on-exec pipe tells the parent
 * whether exec worked (EOF) or failed (the child writes errno, exits 127). */
#include "rec-int.h"
#include "workload.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

int rec_workload_prepare(char *const argv[], struct rec_workload *wl, proff_error *err)
{
	int go[2], ep[2];
	memset(wl, 0, sizeof(*wl));
	wl->pid = -1;
	wl->go_fd = wl->err_fd = wl->pidfd = -1;
	if (pipe2(go, O_CLOEXEC))
		return proff_err_sys(err, PROFF_EIO, NULL, "pipe");
	if (pipe2(ep, O_CLOEXEC)) {
		close(go[0]);
		close(go[1]);
		return proff_err_sys(err, PROFF_EIO, NULL, "pipe");
	}
	pid_t pid = fork();
	if (pid < 0) {
		close(go[0]); close(go[1]); close(ep[0]); close(ep[1]);
		return proff_err_sys(err, PROFF_EIO, NULL, "fork");
	}
	if (pid == 0) {
		static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGXFSZ, SIGCHLD, SIGUSR1, SIGUSR2 };
		for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
			signal(sigs[i], SIG_DFL);
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		close(go[1]);
		close(ep[0]);
		char c;
		ssize_t n;
		do
			n = read(go[0], &c, 1);
		while (n < 0 && errno == EINTR);
		if (n != 1)
			_exit(127);   /* the recorder gave up before starting us */
		close(go[0]);
		execvp(argv[0], argv);
		int e = errno;
		if (write(ep[1], &e, sizeof(e)) < 0) { /* nothing more to do */ }
		_exit(127);
	}
	close(go[0]);
	close(ep[1]);
	wl->pid = pid;
	wl->go_fd = go[1];
	wl->err_fd = ep[0];
#ifdef SYS_pidfd_open
	wl->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
#endif
	return 0;
}

int rec_workload_start(struct rec_workload *wl, int *exec_errno)
{
	*exec_errno = 0;
	char c = 'g';
	if (write(wl->go_fd, &c, 1) != 1)
		*exec_errno = errno ? errno : EPIPE;
	close(wl->go_fd);
	wl->go_fd = -1;
	int e = 0;
	ssize_t n;
	do
		n = read(wl->err_fd, &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close(wl->err_fd);
	wl->err_fd = -1;
	if (n == (ssize_t)sizeof(e))
		*exec_errno = e ? e : ENOEXEC;
	return *exec_errno ? -1 : 0;
}

void rec_workload_abort(struct rec_workload *wl)
{
	if (wl->go_fd >= 0)
		close(wl->go_fd);      /* the child reads EOF and exits 127 */
	if (wl->err_fd >= 0)
		close(wl->err_fd);
	wl->go_fd = wl->err_fd = -1;
	if (wl->pid > 0) {
		int st;
		while (waitpid(wl->pid, &st, 0) < 0 && errno == EINTR)
			;
		wl->pid = -1;
	}
	if (wl->pidfd >= 0)
		close(wl->pidfd);
	wl->pidfd = -1;
}
