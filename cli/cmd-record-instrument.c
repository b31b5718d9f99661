/* cmd-record-instrument.c — `proff record-instrument` (placeholder until the command lands). */
#include <stdio.h>

#include "cmds.h"

int cmd_record_instrument(int argc, char **argv)
{
	(void)argc; (void)argv;
	cli_errorf("'record-instrument' is not implemented yet");
	return 1;
}
