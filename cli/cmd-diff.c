/* cmd-diff.c — `proff diff` (placeholder until the command lands). */
#include <stdio.h>

#include "cmds.h"

int cmd_diff(int argc, char **argv)
{
	(void)argc; (void)argv;
	cli_errorf("'diff' is not implemented yet");
	return 1;
}
