/*
 * replay.h - replay of a timer trace against libhrt's policies and the
 * offline optimum (internal to the hrt tool; the model is in docs/REPLAY.md).
 */
#ifndef HRT_TOOLS_REPLAY_H
#define HRT_TOOLS_REPLAY_H

#include <stdint.h>
#include <stdio.h>

#include "trace.h"

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

struct replay_fn {
	char name[64];
	uint64_t kernel, pol[RP_NPOL];
};

struct replay_result {
	enum trace_format format;
	unsigned policies;                      /* RP_* bit mask replayed */
	int idle_mode;                          /* enum replay_idle */
	int idle_fallback;                      /* no scheduler events: idle always */
	uint64_t events, ignored, bad_lines, pairs_merged;
	uint64_t cpus, timers, armings, cancels, optimal_wakeups;
	uint64_t armings_unresolved;            /* perf input only */
	int unresolved_cpu;                     /* CPU with most of them */
	uint64_t unresolved_on_cpu;
	int has_kernel;                         /* perf input with expiries */
	struct replay_row kernel;
	struct replay_row pol[RP_NPOL];
	int ntop;
	struct replay_fn top[RP_TOP];           /* wake-ups by timer function */
};

/* Replays the whole trace.  0, or -1 with the message in trace_error(r)
 * (bad input) or, for -2, out of memory. */
int replay_trace(struct trace_reader *r, unsigned policies, enum replay_idle idle,
		 struct replay_result *res);

void replay_print_table(FILE *f, const char *name, const struct replay_result *res);
void replay_print_json(FILE *f, const char *name, const struct replay_result *res);
void replay_print_csv_header(FILE *f);
void replay_print_csv(FILE *f, const char *name, const struct replay_result *res);

#endif
