/* record-cli.h — the recording helpers of cli/cmd-record.c that `proff ab`
 * (cli/cmd-ab.c) runs too: one recording with its summary lines, the signal
 * handlers that end a recording cleanly, the sampling frequency as the kernel
 * allows it. */
#ifndef PROFF_CLI_RECORD_CLI_H
#define PROFF_CLI_RECORD_CLI_H

#include <stdbool.h>
#include <stdint.h>

#include "proff/record.h"

/* SIGINT, SIGTERM, SIGHUP end the current recording (file completed) */
void cli_record_signals(void);
/* one of them arrived */
bool cli_record_stopped(void);
/* -F as the kernel allows it (a notice when throttled); 0: the default */
uint64_t cli_record_freq(uint64_t freq);
/* Record o (its stop and notice fields are set here); summary lines on
 * stderr unless quiet. Returns the exit status as `proff record` has it. */
int cli_record_once(rec_opts *o, bool quiet);

#endif
