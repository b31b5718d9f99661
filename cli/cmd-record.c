/* cmd-record.c — `proff record` (placeholder until the command lands). */
#include <stdio.h>

#include "cmds.h"

int cmd_record(int argc, char **argv)
{
	(void)argc; (void)argv;
	cli_errorf("'record' is not implemented yet");
	return 1;
}
