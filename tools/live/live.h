/* SPDX-License-Identifier: MIT */
/*
 * live.h - live hrtimer tracing in a private tracefs instance, for
 * `hrt top` and `hrt record --tracefs` (internal to the hrt tool).
 *
 * live_open() creates instances/hrt-PID (another name if taken) with
 * trace_clock mono and only timer:hrtimer_start, timer:hrtimer_cancel,
 * timer:hrtimer_expire_entry, sched:sched_switch and sched:sched_process_fork
 * (who started whom: a child's first second counts for its parent) enabled; the machine's
 * own tracing (the top instance, other instances) is not touched.
 * Instances that an hrt killed by SIGKILL (or a crash) left behind are
 * removed first and reported on stderr as "hrt WHO: ..." (live_stale.c).
 * live_close() removes the instance: call it on every path out, Ctrl-C
 * included (live_catch_signals() turns SIGINT/SIGTERM/SIGHUP into
 * live_stop, which the callers' loops check).
 *
 * Records are read from the per-CPU ring buffers as binary records and
 * decoded by libtraceevent from the events' format files (libtracefs,
 * libtraceevent); nothing parses text.  Events come out as the trace
 * reader's struct trace_event, in time order: each poll sorts what it
 * read and holds back the last LIVE_LAG_NS, so that a CPU whose buffer is
 * read later cannot deliver an earlier event after a later one.
 *
 * Built without libtracefs/libtraceevent, live_open() fails with -ENOSYS
 * and a message naming the packages.
 */
#ifndef HRT_TOOLS_LIVE_H
#define HRT_TOOLS_LIVE_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../trace/trace.h"

#define LIVE_LAG_NS 50000000LL  /* 50 ms */
#define LIVE_PACKAGES "libtracefs-dev and libtraceevent-dev"

struct live_trace;

extern volatile sig_atomic_t live_stop;
/* SIGINT, SIGTERM, SIGHUP set live_stop (no SA_RESTART: a blocking call
 * returns EINTR); SIGPIPE is ignored so a closed output is a write error. */
void live_catch_signals(void);

/* MERGE: a cancel followed on its CPU by the expiry of the same timer is
 * the kernel's expiry and is dropped, as the trace reader does (top);
 * without it every event is delivered (record, whose text the reader
 * merges).  0, or -errno with err[len] saying what failed and what to do:
 * -ENOSYS built without the libraries, -EACCES/-EPERM not allowed (root or
 * tracefs permissions), -ENOENT no tracefs or no hrtimer events. */
int live_open(struct live_trace **out, int merge, const char *who, char *err, size_t len);
/* Reads what the ring buffers hold (a sched_switch event, TEV_IDLE or
 * TEV_BUSY, carries its next_pid in ev->id) and calls cb for each event due
 * (older than LIVE_LAG_NS before the newest; FLUSH: every event).  0, a
 * callback's non-zero return, or -errno. */
int live_poll(struct live_trace *lt, int flush,
	      int (*cb)(void *ctx, const struct trace_event *ev), void *ctx);
/* Names of the events' fn and comm indices (a replay_name_fn). */
const char *live_name(const void *lt, uint32_t i);
const char *live_instance(const struct live_trace *lt);
/* When tracing began (CLOCK_MONOTONIC seconds): the start of the first
 * window. */
double live_started(const struct live_trace *lt);
/* Events the kernel dropped because the buffer was full. */
uint64_t live_lost(const struct live_trace *lt);
/* Removes the instances under INSTANCES (a tracefs instances directory)
 * named hrt-PID or hrt-PID-N whose PID is gone or is not an hrt (its comm
 * is not "hrt"), each reported on REPORT as "hrt WHO: removed ..." (or why
 * it could not be); live_open() calls it first (live_stale.c).  The number
 * removed. */
int live_remove_stale(const char *instances, const char *who, FILE *report);
/* Removes the instance; NULL is fine. */
void live_close(struct live_trace *lt);

#endif
