/* SPDX-License-Identifier: MIT */
/*
 * replay.h - replay of a timer trace against libhrt's policies and the
 * offline optimum (internal to the hrt tool; the model is in docs/REPLAY.md).
 */
#ifndef HRT_TOOLS_REPLAY_H
#define HRT_TOOLS_REPLAY_H

#include <stdint.h>
#include <stdio.h>

#include "../trace/progress.h"
#include "slack.h"
#include "../trace/trace.h"

enum { RP_OFF, RP_IDLE, RP_ALWAYS, RP_NPOL };
#define RP_ALL ((1u << RP_NPOL) - 1)
enum replay_idle { RP_IDLE_TRACE, RP_IDLE_ALWAYS, RP_IDLE_NEVER };
#define RP_TOP 10

extern const char *const replay_policy_names[RP_NPOL];

struct replay_row {
	uint64_t wakeups, expired, expired_greedy, expired_busy;
	uint64_t samples;                       /* lateness samples */
	int64_t late_p50, late_p99, late_max;   /* run time - soft, ns */
	int64_t early_p50;                      /* hard - run time, ns */
};

/* Wake-ups attributed to who armed the timer that the pass ran first:
 * the process ("NAME TGID", named as its main thread is; or "[kernel]
 * FUNCTION" for kernel timers), the timer function, the CPU, or the thread
 * ("COMM TID") (docs/REPLAY.md).  A trace that does not record processes
 * (perf text, tracefs text without the (TGID) column) has threads only:
 * its process rows are its threads. */
enum { RP_BY_PROCESS, RP_BY_FUNCTION, RP_BY_CPU, RP_BY_THREAD, RP_NBY };
extern const char *const replay_by_names[RP_NBY];

/* --slack: the saving split by what can act on it, from the function of
 * the windows the optimum stabs: timer slack reaches sleeps, poll, select,
 * epoll and futex timeouts (hrtimer_wakeup: hrt run --slack, hrt slack);
 * timerfd, POSIX timers and setitimer need range timers in the program
 * (timerfd_tmrproc, posix_timer_fn, it_real_fn); the rest are the kernel's
 * own timers (or of no known function: hrt-trace v1). */
enum { RP_ACT_SLACK, RP_ACT_CODE, RP_ACT_OTHER, RP_NACT };
extern const char *const replay_act_names[RP_NACT];    /* "slack", "code", "other" */
int replay_fn_act(const char *fn);                     /* RP_ACT_* of a function */

struct replay_group {
	char name[80];
	uint64_t w[RP_NPOL + 1];                /* wake-ups; [RP_NPOL]: kernel */
	uint64_t opt;                           /* the optimum (optimal_wakeups) of
						 * the group's windows: the lowest
						 * of the policies' */
	uint64_t opt_rec;                       /* the optimum of its windows as
						 * recorded */
	int64_t saved_act[RP_NACT];             /* --slack: opt_rec - opt, split */
	int32_t pid;                            /* a process row of a trace with
						 * processes: its PID (else 0) */
};

struct replay_by {
	uint64_t ngroups;                       /* with at least one wake-up */
	int ntop, nsaved;
	struct replay_group top[RP_TOP];        /* most wake-ups (kernel, off, ...) */
	struct replay_group saved[RP_TOP];      /* most saved by always, then idle;
						 * with --slack, by slack first */
};

/* Where in its window [soft, hard] each timer ran: RP_POSB equal bins of
 * (run - soft) / (hard - soft), then one for zero-width windows and one
 * for runs after hard (the kernel only). */
#define RP_POSB 10
#define RP_POS_ZERO RP_POSB
#define RP_POS_LATE (RP_POSB + 1)

/* Wake-up instants kept for the --svg raster (replay_opts.keep_wakes). */
struct replay_wakes {
	hrt_time_t *t;                          /* sorted, every CPU */
	size_t n, cap;
};

struct replay_result {
	enum trace_format format;
	unsigned policies;                      /* RP_* bit mask replayed */
	int idle_mode;                          /* enum replay_idle */
	int idle_fallback;                      /* no scheduler events: idle always */
	uint64_t events, ignored, bad_lines, pairs_merged;
	uint64_t cpus, timers, armings, cancels;
	/* The optimum the policies are held against: for each policy the
	 * fewest wake-ups that run, each inside its window, the timers it ran
	 * (with --slack: widened, and a sleep chain's sleeps where its runs
	 * moved them), optimal_by_policy; the lowest of those (of policy
	 * optimal_policy), at most every policy's wake-ups.  Without --slack
	 * every policy runs the recorded windows: all three are
	 * optimal_wakeups_recorded (replay_optimum.c). */
	uint64_t optimal_wakeups, optimal_by_policy[RP_NPOL];
	int optimal_policy;
	uint64_t armings_unresolved;            /* perf input only */
	int unresolved_cpu;                     /* CPU with most of them */
	uint64_t unresolved_on_cpu;
	char unresolved_fn[64];                 /* function with most of them */
	uint64_t unresolved_on_fn;
	int has_kernel;                         /* perf input with expiries */
	int kernel_incomplete;                  /* armings_unresolved > 0 */
	hrt_time_t first, last;                 /* event times */
	struct replay_row kernel;
	struct replay_row pol[RP_NPOL];
	uint64_t pos[RP_NPOL + 1][RP_POSB + 2]; /* [RP_NPOL]: kernel */
	struct replay_by by[RP_NBY];
	struct replay_wakes wakes[RP_NPOL];     /* only when kept */
	/* --slack: every figure above is of the widened windows. */
	const struct slack *slack;              /* NULL: windows as recorded */
	uint64_t optimal_wakeups_recorded;      /* the optimum of the windows as
						 * recorded (without --slack's
						 * widening and sleep chains) */
	uint64_t armings_widened;               /* armings whose window grew */
	int64_t saved_act[RP_NACT];             /* the optimum's saving, split */
	int slack_blind;                        /* v1 and --slack-for user or names:
						 * nothing could be selected */
};

/* Everything a replay can be asked for. */
struct replay_opts {
	unsigned policies;
	enum replay_idle idle;
	int keep_wakes;                 /* record every policy wake-up in
					 * res->wakes (memory grows with the
					 * trace; for --svg) */
	const struct slack *slack;      /* NULL: none; must outlive res */
	struct progress *progress;      /* NULL: none */
};
/* Every policy, idle from the trace, nothing else. */
#define REPLAY_ALL (&(const struct replay_opts){ RP_ALL, RP_IDLE_TRACE, 0, NULL, NULL })

/* Replays the whole trace: the one entry point.  0, or -1 with the
 * message in trace_error(r) (bad input) or, for -2, out of memory.  Free
 * res with replay_result_free either way. */
int replay_trace(struct trace_reader *r, const struct replay_opts *o, struct replay_result *res);
void replay_result_free(struct replay_result *res);

/*
 * The same model fed event by event, for a live trace (`hrt top`):
 * replay_trace() is new, feed every event, end, free.  Events must
 * come in time order (a cancel+expire pair already merged, as the reader
 * does).  NAME turns the events' fn and comm indices into strings (for a
 * reader, trace_fn_name); TASKS: the events carry processes and functions
 * (perf and tracefs input, not v1).  res must outlive the model; its
 * verdict figures are filled by replay_model_end().
 */
struct replay;
typedef const char *(*replay_name_fn)(const void *src, uint32_t i);
int replay_model_new(struct replay **out, const struct replay_opts *o, replay_name_fn name,
		     const void *src, int tasks, struct replay_result *res);
/* 0, or -ENOMEM (the model is then unusable: free it). */
int replay_model_feed(struct replay *rp, const struct trace_event *ev);

/* One group's wake-ups so far, counted since the model began. */
struct replay_tally {
	uint64_t key;                           /* replay_model_group_name() */
	uint64_t w[RP_NPOL + 1];                /* [RP_NPOL]: the kernel's */
	uint64_t opt_rec;                       /* the optimum, recorded windows */
	uint64_t optp[RP_NPOL];                 /* the optimum of the windows policy
						 * p ran (replay_result) */
	uint64_t opt_rec_act[RP_NACT], optp_act[RP_NPOL][RP_NACT];     /* split
						 * (RP_ACT_*) */
	uint64_t unresolved;                    /* armings that ended with neither a
						 * traced expiry nor a cancel (lost
						 * events): w[RP_NPOL] is short */
};
/* A copy of every group of table BY (index = the group's number, which
 * never changes, so two copies subtract index by index); free(*out).  0 or
 * -ENOMEM. */
int replay_model_groups(const struct replay *rp, int by, struct replay_tally **out, size_t *n);
void replay_model_group_name(const struct replay *rp, int by, uint64_t key, char *buf,
			     size_t len);
/* Fills res as replay_trace() does at the end of a trace. */
void replay_model_end(struct replay *rp, const struct trace_counts *tc, enum trace_format format);
void replay_model_free(struct replay *rp);

/* The verdict: a few sentences with the figures of the table. */
void replay_print_verdict(FILE *f, const struct replay_result *res);
void replay_print_table(FILE *f, const char *name, const struct replay_result *res, int by);
void replay_print_json(FILE *f, const char *name, const struct replay_result *res, int by);
/* CSV: one row per policy; with by >= 0, one row per group instead. */
void replay_print_csv_header(FILE *f, int by, const struct slack *slack);
void replay_print_csv(FILE *f, const char *name, const struct replay_result *res, int by);
/* The --svg picture: wake-up raster per policy and lateness-in-window
 * histogram.  0, or -1 (errno set) if writing failed. */
int replay_write_svg(FILE *f, const char *name, const struct replay_result *res);

#endif
