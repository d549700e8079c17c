/* SPDX-License-Identifier: MIT */
/*
 * record.h - what the two recorders of `hrt record` share (internal to
 * the hrt tool): cmd_record.c drives perf, record_tracefs.c a private tracefs
 * instance.
 */
#ifndef HRT_TOOLS_RECORD_H
#define HRT_TOOLS_RECORD_H

#include <stdio.h>

#include "../trace/trace.h"

/* Records the hrtimer and sched_switch events as tracefs text into f while
 * ARGV runs (NULL: none) or for SECONDS (0: as long as ARGV runs), or until
 * SIGINT/SIGTERM/SIGHUP.  0, or -1 after saying why on stderr; ARGV's exit
 * status in *child_status. */
int record_tracefs(char *const *argv, double seconds, FILE *f, int *child_status);
/* One event as record_tracefs() writes it, the task named COMM and the
 * timer function FN: a line the tracefs reader reads back as that event,
 * whatever COMM holds (its first 15 bytes, as the kernel's comm, with
 * control characters as '?'; fuzz/fuzz_tracefs.c checks it). */
void record_tracefs_line(FILE *f, const struct trace_event *ev, const char *comm, const char *fn);

#endif
