/* cmd-calibrate.c — `proff calibrate` (placeholder until the command lands). */
#include <stdio.h>

#include "cmds.h"

int cmd_calibrate(int argc, char **argv)
{
	(void)argc; (void)argv;
	cli_errorf("'calibrate' is not implemented yet");
	return 1;
}
