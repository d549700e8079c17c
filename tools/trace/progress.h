/* SPDX-License-Identifier: MIT */
/*
 * progress.h - a progress line on stderr for long reads (`hrt replay`,
 * `hrt convert`; internal to the hrt tool).  Shown only when stderr is a
 * terminal and not --quiet, a few times a second, and erased at the end,
 * so pipes, logs and tests never see it.
 */
#ifndef HRT_TOOLS_PROGRESS_H
#define HRT_TOOLS_PROGRESS_H

#include <stddef.h>
#include <stdint.h>

#include "trace.h"

struct progress {
	int on;                 /* stderr is a terminal, not --quiet */
	int shown;              /* a line is on the screen */
	const char *cmd;
	char name[40];
	double t0, next;        /* start, time of the next update (s) */
	uint32_t calls;         /* ticks since the clock was last read */
};

void progress_start(struct progress *p, const char *cmd, const char *name, int quiet);
/* Called per event; reads the clock every few thousand calls. */
void progress_tick(struct progress *p, const struct trace_reader *r, uint64_t events);
/* Erases the line, if one is shown. */
void progress_end(struct progress *p);
/* The line's text: "45 % of 1.2 GB, 3.4 M events, 25.0 MB/s, 12 s left"
 * (without a known total: "120 MB, 3.4 M events, 25.0 MB/s"). */
void progress_format(char *buf, size_t len, uint64_t done, uint64_t total, uint64_t events,
		     double elapsed);

#endif
