/* cmd-report.c — `proff report` (placeholder until the command lands). */
#include <stdio.h>

#include "cmds.h"

int cmd_report(int argc, char **argv)
{
	(void)argc; (void)argv;
	cli_errorf("'report' is not implemented yet");
	return 1;
}
