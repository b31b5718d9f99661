/* stream-main.c — runs `proff diff --stream|-c cycles` through cmd_diff_stream
 * directly, for tests while `proff diff` does not dispatch there yet:
 *   stream-main diff --stream old.data new.data */
#include <stdio.h>

#include "../../cli/cmds.h"

int main(int argc, char **argv)
{
	if (argc < 2)
		return 129;
	int rc = cmd_diff_stream(argc - 1, argv + 1);
	if (fflush(stdout) != 0)
		return rc ? rc : 1;
	return rc;
}
