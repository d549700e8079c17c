/* SPDX-License-Identifier: MIT */
/*
 * trace.h - streaming readers for kernel hrtimer traces (internal to the
 * hrt tool).
 *
 * Three input formats, auto-detected from the first event line:
 *  - `perf script` text (with or without --ns) of timer:hrtimer_start,
 *    timer:hrtimer_cancel, timer:hrtimer_expire_entry and sched:sched_switch;
 *    other events are ignored and counted;
 *  - the kernel's own trace text (/sys/kernel/tracing/trace, trace_pipe,
 *    `trace-cmd report`) of the same events: "COMM-PID [CPU] FLAGS
 *    SECS.USEC: hrtimer_start: ...", microsecond timestamps; it must have
 *    been recorded with trace_clock mono (trace_clock_suspect());
 *  - `hrt-trace v1`: one event per line, `#` comments,
 *        T CPU start ID SOFT HARD | T CPU cancel ID | T CPU idle | T CPU busy
 *    (times in ns, at most INT64_MAX; ID an opaque token: any run of
 *    non-blank characters, `A`, `conn42`, `0xffff8880...`; `1` and `0x1`
 *    are two timers).  v1 ids are interned: trace_event.id is a dense
 *    index and trace_id_name() gives the token back.
 * Input comes from a file, `-` (stdin, named `<stdin>` in messages), a
 * memory buffer, or xz/gzip data read through a `xz -dc`/`gzip -dc` child
 * (detected by magic bytes, on stdin too).
 *
 * The reader delivers events in time order, one at a time: memory grows
 * with the number of distinct timer ids, never with the trace length.  A
 * perf `hrtimer_cancel` immediately followed (on the same CPU) by
 * `hrtimer_expire_entry` of the same timer is the kernel's expiry, not a
 * cancellation: the cancel is dropped (counted in `pairs_merged`).
 *
 * Bad input - malformed lines, unknown events, time going backwards, soft
 * after hard, ids used inconsistently, binary bytes, a truncated last line,
 * no events at all - makes trace_next() fail with r->err set to
 * "FILE:LINE: what was expected" (v1: "field N (NAME) 'TEXT': expected
 * ...").  In lenient mode bad lines, over-long ones included, are skipped
 * and counted instead (`bad_lines`).
 */
#ifndef HRT_TOOLS_TRACE_H
#define HRT_TOOLS_TRACE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "hrt.h"
#include "idmap.h"

#define TRACE_MAX_CPUS 4096     /* higher CPU numbers are a bad line */
#define TRACE_MAX_IDS 4194304   /* distinct timer ids; one more is a bad line */
#define TRACE_NO_FN UINT32_MAX
#define TRACE_STDIN "<stdin>"   /* the name of `-` in messages */

enum trace_format { TRACE_AUTO = 0, TRACE_PERF, TRACE_V1, TRACE_TRACEFS };

/* TEV_FORK: sched:sched_process_fork - the task (pid, tgid, comm) started
 * the task whose TID is in id (a process or a thread; perf and tracefs
 * input, and live). */
enum trace_kind { TEV_START, TEV_CANCEL, TEV_EXPIRE, TEV_IDLE, TEV_BUSY, TEV_FORK };

struct trace_event {
	enum trace_kind kind;
	int cpu;
	hrt_time_t t;           /* event time, ns */
	uint64_t id;            /* start, cancel, expire; fork: the child's TID */
	hrt_time_t soft, hard;  /* start */
	int rel;                /* start: armed relative to its time (mode=REL;
				 * a sleep's next arming follows its wake-up) */
	hrt_time_t now;         /* expire: the kernel's now= */
	uint32_t fn;            /* start, expire (perf): function index, or TRACE_NO_FN */
	int32_t pid;            /* perf: the task on the CPU (its TID), -1: unreadable */
	int32_t tgid;           /* its process (thread-group id); 0: not recorded
				 * (perf PID/TID, tracefs text with record-tgid,
				 * live) */
	uint32_t comm;          /* perf: its name (trace_comm_name), or TRACE_NO_FN;
				 * v1 input has neither (both 0) */
	int known;              /* cancel, expire: an earlier start used this id */
	long line;
};

/* Counters, valid at any time. */
struct trace_counts {
	uint64_t lines;
	uint64_t events;         /* recognised events delivered or merged */
	uint64_t ignored;        /* perf events of other kinds */
	uint64_t bad_lines;      /* lenient mode: skipped lines */
	uint64_t pairs_merged;   /* cancel+expire pairs read as an expiry */
	uint64_t sched_events;   /* sched_switch / idle / busy */
	uint64_t expire_events;
	uint64_t clock_suspect;  /* expiries whose timestamp is not just after
				  * their now= (trace_clock_suspect) */
	uint64_t timers;         /* distinct ids in start events */
};

struct trace_reader;

/* Opens PATH ("-" = stdin).  0, or -errno with the message in *err (static
 * storage of the reader is not available yet, so err points to a static
 * buffer).  `lenient`: skip bad lines.  `format`: TRACE_AUTO normally. */
int trace_open(struct trace_reader **out, const char *path, int lenient,
	       enum trace_format format, const char **err);
/* Reads from memory; NAME is used in messages.  The buffer must outlive the
 * reader. */
int trace_open_mem(struct trace_reader **out, const void *buf, size_t len,
		   const char *name, int lenient, enum trace_format format);
/* 1: *ev filled; 0: end of trace; -1: error (trace_error()). */
int trace_next(struct trace_reader *r, struct trace_event *ev);
/* Closes; also reaps a decompressor child.  Returns 0, or -1 if the child
 * failed and no earlier error was reported (the message is then in
 * trace_error() before the reader is freed: use trace_finish()). */
void trace_close(struct trace_reader *r);
/* After trace_next() returned 0: checks the decompressor's exit status and
 * that the trace had events.  0 or -1 (trace_error()). */
int trace_finish(struct trace_reader *r);

/* How far the input has been read: *done bytes of *total (0: the size is
 * not known - a pipe).  For compressed files both count the compressed
 * bytes. */
void trace_progress(const struct trace_reader *r, uint64_t *done, uint64_t *total);

/* Whether the timestamps look like another clock than the timers'
 * CLOCK_MONOTONIC: more than a tenth of the expiries are stamped over
 * 1 ms before or 100 ms after their now=.  Then expiries and timestamps
 * are not comparable (tracefs: trace_clock is not mono; perf: recorded
 * without -k CLOCK_MONOTONIC) and the replay's figures mean little. */
int trace_clock_suspect(const struct trace_reader *r);
/* Prints the warning of trace_clock_suspect() as "hrt CMD: warning: ...". */
void trace_warn_clock(const struct trace_reader *r, FILE *f, const char *cmd);

const char *trace_error(const struct trace_reader *r);
/* After a failure: 1 if it was for lack of memory (exit status 1, never
 * skipped by lenient mode), 0 if the input was bad (exit status 2). */
int trace_error_is_oom(const struct trace_reader *r);
const char *trace_name(const struct trace_reader *r);
enum trace_format trace_get_format(const struct trace_reader *r);
const struct trace_counts *trace_get_counts(const struct trace_reader *r);
/* Function names (perf input).  Always valid UTF-8: a byte that is not
 * part of valid UTF-8 is written as the four characters \xNN (so `"` and
 * `\` are the only characters a JSON writer still has to escape). */
uint32_t trace_fn_count(const struct trace_reader *r);
const char *trace_fn_name(const struct trace_reader *r, uint32_t fn);
/* Task names (perf input): interned in the same table as function names. */
const char *trace_comm_name(const struct trace_reader *r, uint32_t comm);
/* A timer id for display: the v1 token (valid UTF-8 as above), or 0xHEX
 * of a perf address (in a buffer of r, valid until the next call). */
const char *trace_id_name(struct trace_reader *r, uint64_t id);

#endif
