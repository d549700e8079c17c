/* SPDX-License-Identifier: MIT */
/*
 * sim.h - the article's benchmark as a deterministic discrete-event model
 * (see docs/SIMULATION.md).  C CPUs, each with one virtual libhrt base;
 * T threads alternating a work burst and a sleep on a range timer queued on
 * the CPU they slept on.  sim_run() simulates one (load, policy) point.
 */
#ifndef HRT_TOOLS_SIM_H
#define HRT_TOOLS_SIM_H

#include <stddef.h>
#include <stdint.h>
#include "hrt.h"

#define SIM_MAXSLACK 8

struct sim_config {
	int cpus, threads;
	/* Timer slack, ns: thread i uses slack[i % nslack].  With one value
	 * soft and hard order agree and greedy expiry can find nothing. */
	hrt_time_t slack[SIM_MAXSLACK];
	int nslack;
	hrt_time_t period;              /* mean work + sleep + slack of a thread, ns */
	hrt_time_t duration;            /* simulated time, ns */
	hrt_time_t background;          /* period of a per-CPU kernel timer that
					 * wakes no thread (tick stand-in); 0: none */
	double busy;                    /* target utilisation, 0 < busy < 1 */
	uint64_t seed;
	enum hrt_greedy policy;
};

struct sim_result {
	uint64_t wakeups;               /* device firings = hrt_base_run calls */
	uint64_t migrations;            /* wake_migrations + steals */
	uint64_t wake_migrations;       /* woken on a busy CPU, ran on an idle one */
	uint64_t steals;                /* idle CPU took a waiting thread of another */
	uint64_t waits;                 /* woken with no idle CPU: run queue */
	uint64_t timer_runs;            /* timer callbacks = thread wake-ups */
	uint64_t expired_greedy, greedy_walks;
	uint64_t early, late;           /* callbacks before soft / after hard: 0 */
	uint64_t bursts;                /* work bursts started */
	uint64_t background_runs;       /* background timer callbacks */
	double util;                    /* measured busy fraction of all CPUs */
	double mean_wait_us;            /* mean wake-to-run delay */
};

/* Sets the defaults (4 CPUs, 8 threads, 50 us slack, 200 us period, ...). */
void sim_defaults(struct sim_config *c);
/* 0, -EINVAL for an impossible configuration (see sim_config_error), or a
 * negative errno from libhrt. */
int sim_run(const struct sim_config *c, struct sim_result *r);
/* NULL if c is valid, else why not. */
const char *sim_config_error(const struct sim_config *c);

/* One target load, simulated under each policy. */
struct sim_point {
	int load;                       /* target, percent */
	struct sim_result r[3];         /* off, idle, always */
};
extern const char *const sim_policy_name[3];

static inline double sim_ratio(uint64_t a, uint64_t b)
{
	return b ? (double)a / (double)b : 0;
}

/* "50 us" or "50,1000 us" (unit: "us" or UTF-8 "\xc2\xb5s"). */
void sim_slack_str(const struct sim_config *c, char *buf, size_t n, const char *unit);
/* The table, or CSV, of n points on stdout (sim_text.c). */
void sim_print_table(const struct sim_config *c, const struct sim_point *p, int n);
void sim_print_csv(const struct sim_point *p, int n);
/* The plot into path through outfile.h ('-': stdout); 0, or -1 after one
 * line (sim_svg.c). */
int sim_write_plot(const char *path, const struct sim_config *c, const struct sim_point *p,
		   int n);

#endif
