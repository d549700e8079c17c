/* SPDX-License-Identifier: MIT */
/*
 * cmd_demo.c - the 'hrt demo' command: options, then the model (demo.c),
 * its text (demo_text.c) and its pictures (demo_svg.c).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "../demo/demo.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: hrt demo [--out DIR] [--no-files] [--brief]\n\n"
		"The LWN article's seven range timers A-G (hard expiry 10, 20, ... 70 us).\n"
		"Prints the augmented tree (hard expiry, subtree minimum soft expiry,\n"
		"colour), the expiry pass at 10 us under policy off, idle (CPU busy and\n"
		"CPU idle) and always - which timers ran, nodes the greedy search visited,\n"
		"where it pruned - and the wake-ups that follow, with C kept and with C\n"
		"cancelled after the first pass.\n\n"
		"  --out DIR    write demo-timeline.svg, demo-tree.dot and (with Graphviz\n"
		"               dot installed) demo-tree.svg into DIR (default: .)\n"
		"  --no-files   print only, write no files\n"
		"  --brief      only the timers and the wake-ups with C cancelled under\n"
		"               off and always (make demo); writes no files\n"
		"  -h, --help   this text\n");
}

enum { OPT_OUT = 256, OPT_NO_FILES, OPT_BRIEF };

int hrt_cmd_demo(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "out", required_argument, NULL, OPT_OUT },
		{ "no-files", no_argument, NULL, OPT_NO_FILES },
		{ "brief", no_argument, NULL, OPT_BRIEF },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct demo_result *r;
	const char *dir = NULL;
	int files = 1, brief = 0, err, c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case OPT_OUT: dir = optarg; break;
		case OPT_NO_FILES: files = 0; break;
		case OPT_BRIEF: brief = 1; files = 0; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "hrt demo: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return 2;
	}
	if (dir && !*dir) {
		fprintf(stderr, "hrt demo: --out needs a directory\n");
		return 2;
	}
	r = malloc(sizeof(*r));
	if (!r) {
		fprintf(stderr, "hrt demo: out of memory\n");
		return 1;
	}
	err = demo_run(r);
	if (err) {
		fprintf(stderr, "hrt demo: libhrt failed: %s\n", strerror(-err));
		free(r);
		return 1;
	}
	if (brief)
		demo_print_brief(r);
	else
		demo_print(r);
	err = files ? demo_write_files(r, dir) : 0;
	free(r);
	return err ? 1 : 0;
}
