/* cmd-dprofpp.c — `proff dprofpp` (placeholder until the command lands). */
#include <stdio.h>

#include "cmds.h"

int cmd_dprofpp(int argc, char **argv)
{
	(void)argc; (void)argv;
	cli_errorf("'dprofpp' is not implemented yet");
	return 1;
}
