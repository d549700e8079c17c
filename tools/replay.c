/* PLACEHOLDER - replaced by the real implementation of 'hrt replay'. */
#include <stdio.h>
#include "cmds.h"

int hrt_cmd_replay(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "hrt replay: not implemented yet\n");
	return 1;
}
