/* PLACEHOLDER - replaced by the real implementation of 'hrt record'. */
#include <stdio.h>
#include "cmds.h"

int hrt_cmd_record(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "hrt record: not implemented yet\n");
	return 1;
}
