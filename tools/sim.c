/* PLACEHOLDER - replaced by the real implementation of 'hrt sim'. */
#include <stdio.h>
#include "cmds.h"

int hrt_cmd_sim(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "hrt sim: not implemented yet\n");
	return 1;
}
