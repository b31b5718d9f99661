/* workload.h — the profiled command, forked stopped (see workload.c). */
#ifndef PROFF_REC_WORKLOAD_H
#define PROFF_REC_WORKLOAD_H

#include <sys/types.h>

#include "proff/error.h"

struct rec_workload {
	pid_t pid;
	int go_fd;      /* write one byte: exec */
	int err_fd;     /* exec result */
	int pidfd;      /* readable when the child exits (-1 if unsupported) */
};

int rec_workload_prepare(char *const argv[], struct rec_workload *wl, proff_error *err);
/* Let the child exec; 0 when exec succeeded, else -1 with *exec_errno. */
int rec_workload_start(struct rec_workload *wl, int *exec_errno);
/* Child never started: close the pipes (it exits 127) and reap it. */
void rec_workload_abort(struct rec_workload *wl);

#endif
