/* PLACEHOLDER - replaced by the real implementation of 'hrt convert'. */
#include <stdio.h>
#include "cmds.h"

int hrt_cmd_convert(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "hrt convert: not implemented yet\n");
	return 1;
}
