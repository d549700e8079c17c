/* SPDX-License-Identifier: MIT */
/*
 * sim.c - 'hrt sim': the greedy-expiry patch's benchmark (migrations on a
 * loaded multi-CPU machine) as a deterministic discrete-event model; its
 * text is in sim_text.c, its picture in sim_svg.c, the command in
 * cmd_sim.c.
 *
 * Model (docs/SIMULATION.md has the why):
 *  1. C CPUs, each owning one virtual libhrt base with the policy under
 *     test.  Its device fires at hrt_base_next_event(); each firing is one
 *     hrt_base_run(base, t, idle) with idle = "no thread runs on the CPU".
 *  2. T threads, each alternating a work burst and a sleep on a range
 *     timer [now + s, now + s + slack] queued on the CPU it ran on.  Burst
 *     and sleep lengths come from a per-thread seeded PRNG, so every policy
 *     sees the same sequence per thread.
 *  3. A woken thread runs on the CPU its timer fired on if it is idle, else
 *     on another idle CPU (a migration), else waits on that CPU's run queue.
 *  4. A CPU finishing a burst takes the head of its own run queue, else the
 *     head of the longest other queue (a steal - also a migration), else
 *     idles.
 *  5. Events at the same time: burst ends before device firings, lower CPU
 *     numbers first.  Nothing else is random.
 * The timer engine is libhrt's; this file only moves threads around.
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

struct sim;

struct sim_thread {
	struct hrt_timer timer;
	struct sim *sim;
	uint64_t rng;
	hrt_time_t slack, sleep_mean;
	hrt_time_t woke;                /* when its timer ran */
};

struct sim_cpu {
	struct hrt_base *base;
	struct hrt_timer bg;            /* background timer, if configured */
	struct sim *sim;
	hrt_time_t next;                /* cached hrt_base_next_event */
	int cur;                        /* running thread, -1: idle */
	hrt_time_t busy_until;
	int *rq, rq_head, rq_len;       /* FIFO ring of waiting threads */
};

struct sim {
	const struct sim_config *cfg;
	struct sim_result *res;
	struct sim_cpu *cpu;
	struct sim_thread *th;
	int *woken, nwoken;             /* threads woken by the current pass */
	hrt_time_t work_mean;
	double busy_ns, wait_ns;
};

static uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Exponentially distributed with the given mean, at least 1 ns. */
static hrt_time_t draw_exp(uint64_t *s, hrt_time_t mean)
{
	double u = ((double)(splitmix(s) >> 11) + 0.5) / 9007199254740992.0;
	double v = -log(u) * (double)mean;

	return v < 1 ? 1 : v > 1e15 ? (hrt_time_t)1e15 : (hrt_time_t)v;
}

void sim_defaults(struct sim_config *c)
{
	memset(c, 0, sizeof(*c));       /* every field not named here: 0 (none) */
	c->cpus = 4;
	c->threads = 8;
	c->slack[0] = 50000;
	c->nslack = 1;
	c->period = 200000;
	c->duration = 5000000000;
	c->busy = 0.8;
	c->seed = 1;
	c->policy = HRT_GREEDY_OFF;
}

const char *sim_config_error(const struct sim_config *c)
{
	double duty;

	if (c->cpus < 1 || c->cpus > 1024)
		return "--cpus must be 1..1024";
	if (c->threads < 1 || c->threads > 100000)
		return "--threads must be 1..100000";
	if (c->nslack < 1 || c->nslack > SIM_MAXSLACK)
		return "--slack takes 1 to 8 values";
	for (int i = 0; i < c->nslack; i++)
		if (c->slack[i] < 0)
			return "--slack must be >= 0";
	if (c->duration <= 0)
		return "--duration must be > 0";
	if (c->background < 0)
		return "--background must be >= 0";
	if (!(c->busy > 0 && c->busy < 1))
		return "--busy must be between 0 and 100 (exclusive)";
	duty = c->busy * c->cpus / c->threads;
	if (duty >= 1)
		return "too few threads for that load: need threads > busy x cpus";
	for (int i = 0; i < c->nslack; i++)
		if (c->period <= 0 || (double)c->period * (1 - duty) <= (double)c->slack[i])
			return "--period too short for that load and slack";
	return NULL;
}

/* Thread i starts a burst on CPU c at t. */
static void run_on(struct sim *s, int c, int i, hrt_time_t t)
{
	struct sim_cpu *cpu = &s->cpu[c];
	hrt_time_t w = draw_exp(&s->th[i].rng, s->work_mean);
	hrt_time_t end = t + w;

	cpu->cur = i;
	cpu->busy_until = end;
	s->busy_ns += (double)((end < s->cfg->duration ? end : s->cfg->duration) - t);
	s->wait_ns += (double)(t - s->th[i].woke);
	s->res->bursts++;
}

static void rq_push(struct sim_cpu *cpu, int n, int i)
{
	cpu->rq[(cpu->rq_head + cpu->rq_len++) % n] = i;
}

static int rq_pop(struct sim_cpu *cpu, int n)
{
	int i = cpu->rq[cpu->rq_head];

	cpu->rq_head = (cpu->rq_head + 1) % n;
	cpu->rq_len--;
	return i;
}

/* First idle CPU after c, cyclically; -1 if none. */
static int find_idle(const struct sim *s, int c)
{
	for (int k = 1; k < s->cfg->cpus; k++) {
		int d = (c + k) % s->cfg->cpus;

		if (s->cpu[d].cur < 0)
			return d;
	}
	return -1;
}

static enum hrt_restart wake_cb(struct hrt_timer *t, hrt_time_t now)
{
	struct sim_thread *th = HRT_CONTAINER_OF(t, struct sim_thread, timer);
	struct sim *s = th->sim;
	hrt_time_t soft = 0, hard = 0;

	hrt_timer_get_soft(t, &soft);
	hrt_timer_get_hard(t, &hard);
	if (now < soft)
		s->res->early++;
	if (now > hard)
		s->res->late++;
	th->woke = now;
	s->woken[s->nwoken++] = (int)(th - s->th);
	s->res->timer_runs++;
	return HRT_NORESTART;
}

static enum hrt_restart bg_cb(struct hrt_timer *t, hrt_time_t now)
{
	struct sim_cpu *cpu = HRT_CONTAINER_OF(t, struct sim_cpu, bg);

	cpu->sim->res->background_runs++;
	hrt_timer_forward(t, now, cpu->sim->cfg->background);
	return HRT_RESTART;
}

static void fire(struct sim *s, int c, hrt_time_t t)
{
	struct sim_cpu *cpu = &s->cpu[c];
	int n = s->cfg->threads;

	s->res->wakeups++;
	s->nwoken = 0;
	hrt_base_run(cpu->base, t, cpu->cur < 0);
	hrt_base_next_event(cpu->base, &cpu->next);
	for (int k = 0; k < s->nwoken; k++) {
		int i = s->woken[k], d;

		if (cpu->cur < 0) {
			run_on(s, c, i, t);
		} else if ((d = find_idle(s, c)) >= 0) {
			s->res->wake_migrations++;
			run_on(s, d, i, t);
		} else {
			s->res->waits++;
			rq_push(cpu, n, i);
		}
	}
}

static int burst_end(struct sim *s, int c, hrt_time_t t)
{
	struct sim_cpu *cpu = &s->cpu[c];
	struct sim_thread *th = &s->th[cpu->cur];
	int n = s->cfg->threads, from = -1, err;

	err = hrt_timer_start_range(&th->timer, cpu->base, t + draw_exp(&th->rng, th->sleep_mean),
				    th->slack, HRT_MODE_ABS);
	if (err)
		return err;
	hrt_base_next_event(cpu->base, &cpu->next);
	cpu->cur = -1;
	if (cpu->rq_len) {
		run_on(s, c, rq_pop(cpu, n), t);
		return 0;
	}
	for (int k = 1; k < s->cfg->cpus; k++) {
		int d = (c + k) % s->cfg->cpus;

		if (s->cpu[d].rq_len && (from < 0 || s->cpu[d].rq_len > s->cpu[from].rq_len))
			from = d;
	}
	if (from >= 0) {
		s->res->steals++;
		run_on(s, c, rq_pop(&s->cpu[from], n), t);
	}
	return 0;
}

static int setup(struct sim *s)
{
	const struct sim_config *c = s->cfg;
	double duty = c->busy * c->cpus / c->threads;

	s->cpu = calloc((size_t)c->cpus, sizeof(*s->cpu));
	s->th = calloc((size_t)c->threads, sizeof(*s->th));
	s->woken = calloc((size_t)c->threads, sizeof(*s->woken));
	if (!s->cpu || !s->th || !s->woken)
		return -ENOMEM;
	/* Cycle = work + sleep + lateness, taken as the whole slack (policy
	 * off mostly wakes a timer at its hard expiry). */
	s->work_mean = (hrt_time_t)(duty * (double)c->period);
	for (int k = 0; k < c->cpus; k++) {
		struct sim_cpu *cpu = &s->cpu[k];

		cpu->cur = -1;
		int err = hrt_base_new(&cpu->base, CLOCK_MONOTONIC, HRT_BASE_VIRTUAL);

		if (err)
			return err;
		cpu->rq = calloc((size_t)c->threads, sizeof(int));
		if (!cpu->rq)
			return -ENOMEM;
		if (hrt_base_set_greedy(cpu->base, c->policy))
			return -EINVAL;
		cpu->sim = s;
		if (c->background > 0) {
			/* Phases spread so the CPUs' ticks do not coincide. */
			hrt_timer_init(&cpu->bg, bg_cb);
			if (hrt_timer_start(&cpu->bg, cpu->base,
					    c->background * (k + 1) / c->cpus, HRT_MODE_ABS))
				return -EINVAL;
		}
	}
	for (int i = 0; i < c->threads; i++) {
		struct sim_thread *th = &s->th[i];
		struct sim_cpu *cpu = &s->cpu[i % c->cpus];
		int err;

		th->sim = s;
		th->slack = c->slack[i % c->nslack];
		th->sleep_mean = c->period - s->work_mean - th->slack;
		th->rng = c->seed * 0x100000001b3ull + (uint64_t)i;
		splitmix(&th->rng);
		hrt_timer_init(&th->timer, wake_cb);
		/* All threads start asleep, phases spread over one period. */
		err = hrt_timer_start_range(&th->timer, cpu->base,
					    (hrt_time_t)(splitmix(&th->rng) % (uint64_t)c->period),
					    th->slack, HRT_MODE_ABS);
		if (err)
			return err;
		hrt_base_next_event(cpu->base, &cpu->next);
	}
	return 0;
}

static void teardown(struct sim *s)
{
	for (int i = 0; s->th && i < s->cfg->threads; i++)
		hrt_timer_cancel(&s->th[i].timer);      /* free refuses queued timers */
	if (s->cpu)
		for (int k = 0; k < s->cfg->cpus; k++) {
			hrt_timer_cancel(&s->cpu[k].bg);
			hrt_base_free(s->cpu[k].base);
			free(s->cpu[k].rq);
		}
	free(s->cpu);
	free(s->th);
	free(s->woken);
}

int sim_run(const struct sim_config *c, struct sim_result *r)
{
	struct sim s = { .cfg = c, .res = r };
	int err;

	memset(r, 0, sizeof(*r));
	if (sim_config_error(c))
		return -EINVAL;
	err = setup(&s);
	while (!err) {
		hrt_time_t t = HRT_TIME_MAX;
		int cpu = -1, end = 0;

		/* Earliest event; ties: burst ends first, then lower CPU. */
		for (int k = 0; k < c->cpus; k++)
			if (s.cpu[k].cur >= 0 && (s.cpu[k].busy_until < t ||
						  (s.cpu[k].busy_until == t && !end))) {
				t = s.cpu[k].busy_until;
				cpu = k;
				end = 1;
			}
		for (int k = 0; k < c->cpus; k++)
			if (s.cpu[k].next < t) {
				t = s.cpu[k].next;
				cpu = k;
				end = 0;
			}
		if (cpu < 0 || t > c->duration)
			break;
		if (end)
			err = burst_end(&s, cpu, t);
		else
			fire(&s, cpu, t);
	}
	if (!err) {
		struct hrt_stats st;

		for (int k = 0; k < c->cpus; k++) {
			hrt_base_get_stats(s.cpu[k].base, &st, sizeof(st));
			r->expired_greedy += st.expired_greedy;
			r->greedy_walks += st.greedy_walks;
			if (hrt_base_check(s.cpu[k].base, NULL, 0))
				err = -EUCLEAN;
		}
		r->migrations = r->wake_migrations + r->steals;
		r->util = s.busy_ns / ((double)c->cpus * (double)c->duration);
		r->mean_wait_us = r->bursts ? s.wait_ns / (double)r->bursts / 1000 : 0;
	}
	teardown(&s);
	return err;
}
