/* PLACEHOLDER - replaced by the real implementation of 'hrt demo'. */
#include <stdio.h>
#include "cmds.h"

int hrt_cmd_demo(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "hrt demo: not implemented yet\n");
	return 1;
}
