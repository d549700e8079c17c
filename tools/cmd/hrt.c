/* SPDX-License-Identifier: MIT */
/*
 * hrt.c - main() of the hrt command: dispatches to the subcommands, then
 * checks that stdout was written (a full disk or a closed stdout is exit
 * status 1 with "hrt CMD: stdout: ...", for every subcommand).
 */
#include <stdio.h>
#include <string.h>

#include "cmds.h"
#include "hrt.h"
#include "../common/outfile.h"

#ifndef HRT_VERSION_FULL
#define HRT_VERSION_FULL HRT_VERSION_STRING
#endif

static const struct {
	const char *name;
	int (*fn)(int, char **);
	const char *what;
} cmds[] = {
	{ "demo",    hrt_cmd_demo,    "the article's seven timers: tree, passes, wake-ups" },
	{ "top",     hrt_cmd_top,     "live: who wakes the CPUs, and what range timers would save" },
	{ "record",  hrt_cmd_record,  "record kernel hrtimer traffic (perf or tracefs)" },
	{ "replay",  hrt_cmd_replay,  "replay a timer trace under each policy vs the optimum" },
	{ "convert", hrt_cmd_convert, "convert perf script text to hrt-trace v1" },
	{ "run",     hrt_cmd_run,     "run a command with timer slack (apply what replay --slack saves)" },
	{ "slack",   hrt_cmd_slack,   "set the timer slack of running processes (root)" },
	{ "sim",     hrt_cmd_sim,     "the article's multi-CPU benchmark as a simulation" },
};

static void usage(FILE *f)
{
	fprintf(f, "hrt: who wakes your CPUs, and how many wake-ups range timers (libhrt) would save.\n\n"
		   "usage: hrt COMMAND [OPTIONS] [ARGS]\n"
		   "       hrt --help | --version | -V\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(f, "  %-8s %s\n", cmds[i].name, cmds[i].what);
	fprintf(f, "\n'hrt COMMAND --help' describes a command's options.\n"
		   "Exit status: 0 success, 1 runtime or output error, 2 bad input or usage.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return tool_close_stdout(NULL);
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("hrt %s\n", HRT_VERSION_FULL);
		return tool_close_stdout(NULL);
	}
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name)) {
			int st = cmds[i].fn(argc - 1, argv + 1);

			/* also covers a subcommand's --help */
			if (tool_close_stdout(cmds[i].name) && !st)
				st = 1;
			return st;
		}
	fprintf(stderr, "hrt: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
