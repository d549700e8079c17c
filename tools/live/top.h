/* SPDX-License-Identifier: MIT */
/*
 * top.h - what the two files of `hrt top` share (internal to the hrt
 * tool): cmd_top.c runs the command (options, the live or recorded source, the
 * frames), top_view.c turns two snapshots of the replay model's per-group
 * counts into rates and prints them (screen, text, CSV).
 *
 * A snapshot is a copy of the model's cumulative counts (replay_tally) of
 * every group in the three tables at one instant; the rates of a frame are
 * the differences between the newest snapshot and the one a window
 * earlier, divided by the time between them.  Group numbers never change,
 * so the two copies subtract index by index (a group new since the older
 * one counts from zero).
 */
#ifndef HRT_TOOLS_TOP_H
#define HRT_TOOLS_TOP_H

#include <stdint.h>
#include <stdio.h>

#include "../replay/replay.h"

struct top_snap {
	double t;                               /* seconds (trace clock) */
	struct replay_tally *g[RP_NBY];
	size_t n[RP_NBY];
};

/* One group's figures over a window. */
struct top_row {
	char name[80];
	uint64_t c[RP_NPOL + 1];                /* wake-ups: policies, [RP_NPOL] kernel */
	uint64_t opt;                           /* the optimum: the lowest of the
						 * policies' (replay.h), at most each
						 * policy's count (top_rows) */
	uint64_t opt_rec;                       /* the optimum of the windows as
						 * recorded */
	int64_t saved_act[RP_NACT];             /* --slack: opt_rec - opt, split */
	uint64_t unresolved;                    /* armings whose end was lost: c[RP_NPOL]
						 * undercounts (marked *) */
	double span;                            /* seconds */
};

struct top_view {
	const struct replay *rp;
	int by;                                 /* RP_BY_* */
	int slack;                              /* --slack given */
	double interval, window;
	uint64_t lost;                          /* events the kernel dropped so far */
};

/* The rows of table BY between snapshots a (older, may be NULL: zero) and
 * b, groups with any wake-up only, most kernel wake-ups first.  *rows is
 * malloc'ed; -ENOMEM. */
int top_rows(const struct top_view *v, int by, const struct top_snap *a,
	     const struct top_snap *b, struct top_row **rows, size_t *n);
/* One frame as text, in 79 columns: a title, the CPUs and their total, the
 * table, and the legend (every frame on a screen, the first one in batch
 * mode).  MAX_LINES >= 0 (a screen): at most that many lines, the rows cut
 * to fit and the cut said in the heads; < 0: every row. */
void top_print_text(FILE *f, const struct top_view *v, long frame, const struct top_snap *a,
		    const struct top_snap *b, int max_lines);
/* The help screen (keys h and ?): every column and key, in 80x24. */
void top_print_help(FILE *f);
/* CSV rows of one frame (top_csv_header once first). */
void top_csv_header(FILE *f, int by);
void top_print_csv(FILE *f, const struct top_view *v, long frame, const struct top_snap *a,
		   const struct top_snap *b);

#endif
