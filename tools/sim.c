/* SPDX-License-Identifier: MIT */
/*
 * sim.c - 'hrt sim': the greedy-expiry patch's benchmark (migrations on a
 * loaded multi-CPU machine) as a deterministic discrete-event model.
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

#include "cmds.h"
#include "outfile.h"
#include "sim.h"
#include "svg.h"

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

	if (now < hrt_timer_get_soft(t))
		s->res->early++;
	if (now > hrt_timer_get_hard(t))
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
	cpu->next = hrt_base_next_event(cpu->base);
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
	cpu->next = hrt_base_next_event(cpu->base);
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
		cpu->base = hrt_base_new(HRT_CLOCK_VIRTUAL);
		cpu->rq = calloc((size_t)c->threads, sizeof(int));
		if (!cpu->base || !cpu->rq)
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
		cpu->next = hrt_base_next_event(cpu->base);
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
			hrt_base_get_stats(s.cpu[k].base, &st);
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

/* Command ----------------------------------------------------------------- */

static const int sweep_loads[] = { 10, 20, 30, 40, 50, 60, 70, 80, 90, 95 };
static const int short_loads[] = { 20, 50, 80, 95 };
static const char *const policy_name[3] = { "off", "idle", "always" };

struct sim_point {
	int load;                       /* target, percent */
	struct sim_result r[3];         /* off, idle, always */
};

static double ratio(uint64_t a, uint64_t b)
{
	return b ? (double)a / (double)b : 0;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: hrt sim [--cpus C] [--threads T] [--slack NS[,NS...]] [--period NS]\n"
		"               [--busy PCT | --sweep] [--seed S] [--duration NS] [--short]\n"
		"               [--csv] [--svg FILE | --no-svg]\n\n"
		"The greedy-expiry patch's benchmark as a deterministic model: C CPUs with\n"
		"one virtual libhrt base each, T threads alternating a work burst and a\n"
		"sleep on a range timer.  Reports, per policy off/idle/always, timer\n"
		"wake-ups (device firings) and thread migrations, and the ratio idle/off.\n\n"
		"  --cpus C        CPUs (default 4)\n"
		"  --threads T     threads (default 8; must exceed busy x cpus)\n"
		"  --slack NS[,NS...]  timer slack: hard = soft + NS (default 50us, the\n"
		"                  kernel's); several values are dealt to the threads in turn\n"
		"  --period NS     mean cycle of a thread: work + sleep + slack (default 200us)\n"
		"  --background NS  a per-CPU periodic kernel timer (no slack) that wakes\n"
		"                  no thread: the tick and housekeeping timers (default 0: none)\n"
		"  --busy PCT      one target utilisation, 0 < PCT < 100\n"
		"  --sweep         targets 10,20,...,90,95 %% (the default)\n"
		"  --short         targets 20,50,80,95 %% and --duration 1s (make demo)\n"
		"  --seed S        PRNG seed (default 1); same seed, same output\n"
		"  --duration NS   simulated time per point (default 5s)\n"
		"  --csv           CSV, one row per target and policy, instead of the table\n"
		"  --svg FILE      plot file (default demo-sim.svg; '-' for stdout)\n"
		"  --no-svg        write no plot\n"
		"  -h, --help      this text\n"
		"NS values take an optional suffix ns, us, ms or s.\n");
}

/* Integer with an optional time suffix; -1 on error. */
static long long parse_num(const char *s, int time)
{
	static const struct { const char *sfx; long long mul; } sfx[] = {
		{ "", 1 }, { "ns", 1 }, { "us", 1000 }, { "ms", 1000000 }, { "s", 1000000000 },
	};
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || end == s || v < 0)
		return -1;
	for (size_t i = 0; i < sizeof(sfx) / sizeof(sfx[0]); i++)
		if (!strcmp(end, sfx[i].sfx) && (time || !i))
			return v > INT64_MAX / sfx[i].mul ? -1 : v * sfx[i].mul;
	return -1;
}

/* "50 us" or "50,1000 us" (unit: "us" or UTF-8 "\xc2\xb5s"). */
static void slack_str(const struct sim_config *c, char *buf, size_t n, const char *unit)
{
	size_t len = 0;

	buf[0] = 0;
	for (int i = 0; i < c->nslack && len + 24 < n; i++)
		len += (size_t)snprintf(buf + len, n - len, "%s%g", i ? "," : "",
					(double)c->slack[i] / 1000);
	snprintf(buf + len, n - len, " %s", unit);
}

static void print_table(const struct sim_config *c, const struct sim_point *p, int n)
{
	char sl[200];

	slack_str(c, sl, sizeof(sl), "us");
	printf("hrt sim: %d CPUs, %d threads, slack %s, period %.1f us, "
	       "%.3f s per point, seed %llu\n\n", c->cpus, c->threads, sl,
	       (double)c->period / 1000, (double)c->duration / 1e9, (unsigned long long)c->seed);
	printf("       util %%             wake-ups                  migrations"
	       "          idle/off\n");
	printf("busy%%  off  idle always   off    idle   always     off   idle always"
	       "   migr  wake\n");
	for (int i = 0; i < n; i++) {
		const struct sim_result *r = p[i].r;

		printf("%4d  %4.1f %4.1f %5.1f  %6llu %6llu %6llu  %6llu %6llu %6llu  %5.3f %5.3f\n",
		       p[i].load, 100 * r[0].util, 100 * r[1].util, 100 * r[2].util,
		       (unsigned long long)r[0].wakeups, (unsigned long long)r[1].wakeups,
		       (unsigned long long)r[2].wakeups, (unsigned long long)r[0].migrations,
		       (unsigned long long)r[1].migrations, (unsigned long long)r[2].migrations,
		       ratio(r[1].migrations, r[0].migrations), ratio(r[1].wakeups, r[0].wakeups));
	}
}

static void print_csv(const struct sim_point *p, int n)
{
	printf("busy_target,policy,util,wakeups,migrations,wake_migrations,steals,waits,"
	       "timer_runs,expired_greedy,greedy_walks,early,late,mean_wait_us\n");
	for (int i = 0; i < n; i++)
		for (int k = 0; k < 3; k++) {
			const struct sim_result *r = &p[i].r[k];

			printf("%d,%s,%.4f,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%.3f\n",
			       p[i].load, policy_name[k], r->util,
			       (unsigned long long)r->wakeups, (unsigned long long)r->migrations,
			       (unsigned long long)r->wake_migrations, (unsigned long long)r->steals,
			       (unsigned long long)r->waits, (unsigned long long)r->timer_runs,
			       (unsigned long long)r->expired_greedy,
			       (unsigned long long)r->greedy_walks, (unsigned long long)r->early,
			       (unsigned long long)r->late, r->mean_wait_us);
		}
}

/* Plot ---------------------------------------------------------------------- */

#define PL_X0 70.0
#define PL_W 600.0
#define PL_H 220.0
#define PL_TICKS 5              /* at most, per y axis */
#define LG_X (PL_X0 + PL_W + 20)        /* legends: right of the plots */
#define LG_W 220.0

static double px(int load)
{
	return PL_X0 + PL_W * load / 100.0;
}

/* A frame, grid and labels for 0..top in steps of step. */
static void axes(FILE *f, double y0, double top, double step, int decimals, const char *ylabel)
{
	char buf[64];
	int nt = (int)(top / step + 0.5);

	svg_rect(f, PL_X0, y0, PL_W, PL_H, "none", "#888");
	for (int l = 0; l <= 100; l += 10) {
		svg_line(f, px(l), y0, px(l), y0 + PL_H, "#eee", 1, NULL);
		snprintf(buf, sizeof(buf), "%d", l);
		svg_text(f, px(l), y0 + PL_H + 14, 11, "middle", "#444", buf);
	}
	for (int k = 0; k <= nt; k++) {
		double y = y0 + PL_H - PL_H * k / nt;

		if (k && k < nt)
			svg_line(f, PL_X0, y, PL_X0 + PL_W, y, "#eee", 1, NULL);
		snprintf(buf, sizeof(buf), "%.*f", decimals, step * k);
		svg_text(f, PL_X0 - 6, y + 4, 11, "end", "#444", buf);
	}
	svg_text(f, PL_X0 + PL_W / 2, y0 + PL_H + 30, 12, "middle", "#111",
		 "target utilisation (busy %)");
	svg_text(f, PL_X0, y0 - 8, 13, "start", "#111", ylabel);
}

static void series(FILE *f, const struct sim_point *p, int n, double y0, double ymax,
		   double (*val)(const struct sim_point *, int), int which,
		   const char *colour, const char *dash)
{
	double xs[16], ys[16];

	for (int i = 0; i < n && i < 16; i++) {
		double v = val(&p[i], which);

		xs[i] = px(p[i].load);
		ys[i] = y0 + PL_H - PL_H * (v > ymax ? ymax : v) / ymax;
		svg_circle(f, xs[i], ys[i], 3, colour);
	}
	svg_polyline(f, xs, ys, n < 16 ? n : 16, colour, 2, dash);
}

static double v_migr(const struct sim_point *p, int k)
{
	return (double)p->r[k].migrations;
}

static double v_ratio(const struct sim_point *p, int k)
{
	return k ? ratio(p->r[1].wakeups, p->r[0].wakeups)
		 : ratio(p->r[1].migrations, p->r[0].migrations);
}

/* Entry i of a legend whose first line is at y. */
static void legend(FILE *f, double y, int i, const char *colour, const char *dash,
		   const char *text)
{
	y += 18 * i;
	svg_line(f, LG_X, y - 4, LG_X + 24, y - 4, colour, 2, dash);
	svg_text(f, LG_X + 30, y, 11, "start", "#111", text);
}

/* The picture: migrations and the wake-up ratio per point. */
static void draw_plot(FILE *f, const struct sim_config *c, const struct sim_point *p, int n)
{
	static const char *const col[3] = { "#d62728", "#1f77b4", "#2ca02c" };
	double mmax = 1, rmax = 1.25, y1 = 70, y2 = 70 + PL_H + 80, mstep, rstep;
	char buf[300], sl[200];
	int mdec, rdec;

	for (int i = 0; i < n; i++)
		for (int k = 0; k < 3; k++) {
			if (v_migr(&p[i], k) > mmax)
				mmax = v_migr(&p[i], k);
			if (v_ratio(&p[i], k > 1 ? 1 : k) > rmax)
				rmax = v_ratio(&p[i], k > 1 ? 1 : k);
		}
	mstep = svg_nice_axis(mmax, PL_TICKS, &mmax, &mdec);
	rstep = svg_nice_axis(rmax, PL_TICKS, &rmax, &rdec);
	if (mstep < 1) {        /* migrations are counts: no 0.5 ticks */
		mstep = 1;
		mdec = 0;
		mmax = mmax < 1 ? 1 : mmax;
	}
	svg_begin(f, LG_X + LG_W, y2 + PL_H + 50, "hrt sim: migrations and wake-ups by policy");
	slack_str(c, sl, sizeof(sl), "\xc2\xb5s");
	snprintf(buf, sizeof(buf), "hrt sim: %d CPUs, %d threads, slack %s, "
		 "period %.0f \xc2\xb5s, %.2f s per point, seed %llu", c->cpus, c->threads, sl, (double)c->period / 1000, (double)c->duration / 1e9,
		 (unsigned long long)c->seed);
	svg_text(f, 10, 22, 14, "start", "#111", buf);
	/* Equal slack orders soft expiries as hard ones: the walk that stops at
	 * the first timer not yet due has left nothing due behind it. */
	if (c->nslack == 1)
		svg_text(f, 10, 42, 12, "start", "#a00",
			 "one slack for every timer: soft order = hard order, so greedy finds "
			 "nothing the stock walk leaves (a no-op); use --slack A,B for mixed slack");
	axes(f, y1, mmax, mstep, mdec, "thread migrations per point");
	for (int k = 0; k < 3; k++)
		series(f, p, n, y1, mmax, v_migr, k, col[k], k == 2 ? "6,3" : NULL);
	svg_group_begin(f, "legend");
	for (int k = 0; k < 3; k++)
		legend(f, y1 + 10, k, col[k], k == 2 ? "6,3" : NULL, policy_name[k]);
	svg_group_end(f);
	axes(f, y2, rmax, rstep, rdec, "ratio idle / off");
	svg_line(f, PL_X0, y2 + PL_H - PL_H / rmax, PL_X0 + PL_W, y2 + PL_H - PL_H / rmax,
		 "#888", 1, "4,4");
	series(f, p, n, y2, rmax, v_ratio, 0, col[1], NULL);
	series(f, p, n, y2, rmax, v_ratio, 1, "#9467bd", "6,3");
	/* The article's data point: migrations "just over half" at 80 % busy. */
	svg_rect(f, px(80) - 4, y2 + PL_H - PL_H * 0.55 / rmax - 4, 8, 8, "#000", NULL);
	svg_group_begin(f, "legend");
	legend(f, y2 + 10, 0, col[1], NULL, "migrations");
	legend(f, y2 + 10, 1, "#9467bd", "6,3", "wake-ups");
	svg_line(f, LG_X, y2 + 42 - 4, LG_X + 24, y2 + 42 - 4, "#888", 1, "4,4");
	svg_text(f, LG_X + 30, y2 + 46, 11, "start", "#111", "ratio 1: no change");
	svg_rect(f, LG_X + 8, y2 + 56, 8, 8, "#000", NULL);
	svg_text(f, LG_X + 30, y2 + 64, 11, "start", "#111", "article: migrations just");
	svg_text(f, LG_X + 30, y2 + 78, 11, "start", "#111", "over half at 80 % busy");
	svg_group_end(f);
	svg_end(f);
}

/* The plot into path (outfile.h: '-' is stdout); 0, or -1 after one line. */
static int write_plot(const char *path, const struct sim_config *c,
		      const struct sim_point *p, int n)
{
	struct outfile o;

	if (outfile_open(&o, path)) {
		outfile_report(&o, "sim");
		return -1;
	}
	draw_plot(o.f, c, p, n);
	if (outfile_commit(&o)) {
		outfile_report(&o, "sim");
		return -1;
	}
	return 0;
}

/* "NS[,NS...]" into c->slack; 0 or -1. */
static int parse_slack(const char *v, struct sim_config *c)
{
	char buf[256], *save = NULL, *tok;
	int n = 0;

	if (strlen(v) >= sizeof(buf))
		return -1;
	strcpy(buf, v);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		long long x = parse_num(tok, 1);

		if (x < 0 || n == SIM_MAXSLACK)
			return -1;
		c->slack[n++] = x;
	}
	if (!n)
		return -1;
	c->nslack = n;
	return 0;
}

struct sim_opts {
	struct sim_config cfg;
	int busy_pct, sweep, shortrun, csv, duration_set;
	const char *svg;
};

/* 0, or 2 after printing why. */
static int parse_args(int argc, char **argv, struct sim_opts *o)
{
	static const char *const valued[] = {
		"--cpus", "--threads", "--slack", "--period", "--busy", "--seed", "--duration", "--svg",
		"--background",
	};

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = NULL, *eq = strchr(a, '=');
		char name[32];
		long long x = 0;
		size_t len = eq ? (size_t)(eq - a) : strlen(a);
		int k, nv = (int)(sizeof(valued) / sizeof(valued[0]));

		snprintf(name, sizeof(name), "%.*s", (int)(len < 31 ? len : 31), a);
		for (k = 0; k < nv && strcmp(name, valued[k]); k++)
			;
		if (k < nv) {
			if (eq)
				v = eq + 1;
			else if (i + 1 < argc)
				v = argv[++i];
			else {
				fprintf(stderr, "hrt sim: option %s needs a value\n", name);
				return 2;
			}
			if (k != 2 && k != 7 && (x = parse_num(v, k == 3 || k == 6 || k == 8)) < 0) {
				fprintf(stderr, "hrt sim: bad value '%s' for %s\n", v, name);
				return 2;
			}
		}
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			exit(0);
		} else if (k == 0) {
			o->cfg.cpus = x > 1024 ? 1025 : (int)x;
		} else if (k == 1) {
			o->cfg.threads = x > 100000 ? 100001 : (int)x;
		} else if (k == 2) {
			if (parse_slack(v, &o->cfg)) {
				fprintf(stderr, "hrt sim: bad value '%s' for --slack "
					"(1 to 8 comma-separated times)\n", v);
				return 2;
			}
		} else if (k == 3) {
			o->cfg.period = x;
		} else if (k == 4) {
			if (x <= 0 || x >= 100) {
				fprintf(stderr, "hrt sim: --busy must be between 0 and 100, not %s\n", v);
				return 2;
			}
			o->busy_pct = (int)x;
		} else if (k == 5) {
			o->cfg.seed = (uint64_t)x;
		} else if (k == 6) {
			o->cfg.duration = x;
			o->duration_set = 1;
		} else if (k == 7) {
			o->svg = *v ? v : NULL;
		} else if (k == 8) {
			o->cfg.background = x;
		} else if (!strcmp(a, "--sweep")) {
			o->sweep = 1;
		} else if (!strcmp(a, "--short")) {
			o->shortrun = 1;
		} else if (!strcmp(a, "--csv")) {
			o->csv = 1;
		} else if (!strcmp(a, "--no-svg")) {
			o->svg = NULL;
		} else {
			fprintf(stderr, "hrt sim: unknown option '%s' (try hrt sim --help)\n", a);
			return 2;
		}
	}
	if (o->busy_pct && (o->sweep || o->shortrun)) {
		fprintf(stderr, "hrt sim: --busy excludes --sweep and --short\n");
		return 2;
	}
	return 0;
}

int hrt_cmd_sim(int argc, char **argv)
{
	struct sim_opts o = { .svg = "demo-sim.svg" };
	struct sim_point pts[16];
	const int *loads = sweep_loads;
	int n = (int)(sizeof(sweep_loads) / sizeof(sweep_loads[0])), single = 0, err;
	const char *why;

	sim_defaults(&o.cfg);
	if ((err = parse_args(argc, argv, &o)))
		return err;
	if (o.shortrun) {
		loads = short_loads;
		n = (int)(sizeof(short_loads) / sizeof(short_loads[0]));
		if (!o.duration_set)
			o.cfg.duration = 1000000000;
	}
	if (o.busy_pct) {
		single = o.busy_pct;
		loads = &single;
		n = 1;
	}
	for (int i = 0; i < n; i++) {
		o.cfg.busy = loads[i] / 100.0;
		if ((why = sim_config_error(&o.cfg))) {
			fprintf(stderr, "hrt sim: at %d %% busy: %s\n", loads[i], why);
			return 2;
		}
	}
	for (int i = 0; i < n; i++) {
		pts[i].load = loads[i];
		o.cfg.busy = loads[i] / 100.0;
		for (int k = 0; k < 3; k++) {
			o.cfg.policy = (enum hrt_greedy)k;
			if ((err = sim_run(&o.cfg, &pts[i].r[k]))) {
				fprintf(stderr, "hrt sim: simulation failed: %s\n", strerror(-err));
				return 1;
			}
		}
	}
	if (o.csv)
		print_csv(pts, n);
	else
		print_table(&o.cfg, pts, n);
	if (o.svg && (!o.csv || strcmp(o.svg, "-"))) {
		if (write_plot(o.svg, &o.cfg, pts, n))
			return 1;
		if (!o.csv && strcmp(o.svg, "-"))
			printf("\nwrote %s\n", o.svg);
	}
	return 0;
}
