/* SPDX-License-Identifier: MIT */
/*
 * cmd_demo.c - the 'hrt demo' command: options, then the model (demo.c),
 * its text (demo_text.c) and its pictures (demo_svg.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "../common/opt.h"
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

struct demo_opts {
	const char *dir;
	int files, brief;
};

static int on_opt(void *ctx, int c, const char *arg)
{
	struct demo_opts *o = ctx;

	switch (c) {
	case OPT_OUT: o->dir = arg; break;
	case OPT_NO_FILES: o->files = 0; break;
	case OPT_BRIEF: o->brief = 1; o->files = 0; break;
	}
	return -1;
}

int hrt_cmd_demo(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "out", required_argument, NULL, OPT_OUT },
		{ "no-files", no_argument, NULL, OPT_NO_FILES },
		{ "brief", no_argument, NULL, OPT_BRIEF },
		{ NULL, 0, NULL, 0 },
	};
	static const struct opt_cmd cmd = { "demo", "", opts, usage, on_opt, 0 };
	struct demo_opts o = { NULL, 1, 0 };
	struct demo_result *r;
	const char *dir;
	int files, brief, err;

	if ((err = opt_parse(&cmd, argc, argv, &o)) >= 0)
		return err;
	dir = o.dir;
	files = o.files;
	brief = o.brief;
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
