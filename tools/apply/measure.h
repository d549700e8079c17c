/* SPDX-License-Identifier: MIT */
/*
 * measure.h - `hrt slack D --measure S`: what a slack saved, predicted and
 * measured (internal to the hrt tool).
 *
 * Traces S seconds in a private tracefs instance (live.h), applies the
 * slack (the caller's apply()), traces S seconds more, removes the
 * instance, then replays both windows through the replay model
 * (replay.h):
 *   before     the kernel's wake-ups in the first window (its expiries);
 *   predicted  the first window replayed with --slack D on the processes
 *              given (their hrtimer_wakeup timers; sleep chains followed):
 *              policy off on the widened windows is the kernel's own walk,
 *              so its drop against off on the recorded windows, applied to
 *              `before`, is the prediction;
 *   measured   the kernel's wake-ups in the second window.
 * Rows: each CPU with wake-ups, all CPUs, each process given and their
 * sum.  Then whether prediction and measurement agree (within 20 % of the
 * predicted drop), and if not, what else changed.
 */
#ifndef HRT_TOOLS_MEASURE_H
#define HRT_TOOLS_MEASURE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define MEASURE_AGREE 0.20      /* |measured - predicted| drop, of the predicted */

/* The processes the slack is applied to. */
struct measure_target {
	int32_t pid;
	const char *comm;
};

/* 0 done (the report on out), 1 failed (a message on stderr; when tracing
 * could not start, apply() was not called).  apply() returns 0, or the
 * exit status to end with. */
int slack_measure(const struct measure_target *t, size_t n, uint64_t ns, double seconds,
		  int (*apply)(void *ctx), void *ctx, FILE *out);

#endif
