/* SPDX-License-Identifier: MIT */
/*
 * measure.c - `hrt slack D --measure S` (the contract is in measure.h):
 * two windows of a live trace around the change, each replayed through
 * the replay model, and the report that puts the prediction beside the
 * measurement.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../common/grow.h"
#include "../live/live.h"
#include "measure.h"
#include "../replay/replay.h"

struct evbuf {
	struct trace_event *ev;
	size_t n, cap;
	int oom;
};

/* One group of a window: its name, the kernel's and policy off's wake-ups. */
struct row {
	char name[80];
	uint64_t k, off;
};

struct rows {
	struct row *r;
	size_t n;
};

/* [0] by CPU, [1] by process. */
struct window {
	struct rows by[2];
};

static const int by_table[2] = { RP_BY_CPU, RP_BY_PROCESS };

static double mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int collect(void *ctx, const struct trace_event *ev)
{
	struct evbuf *b = ctx;

	void *p = grow_one(b->ev, b->n, &b->cap, sizeof(*b->ev), 65536);

	if (!p) {
		b->oom = 1;
		return -ENOMEM;
	}
	b->ev = p;
	b->ev[b->n++] = *ev;
	return 0;
}

/* Traces until `until` (monotonic seconds) or a signal.  0 or -errno. */
static int trace_until(struct live_trace *lt, struct evbuf *b, double until)
{
	struct timespec tick = { 0, 100000000 };
	int e;

	while (!live_stop && mono_now() < until) {
		if ((e = live_poll(lt, 0, collect, b)))
			return e;
		nanosleep(&tick, NULL);
	}
	return live_stop ? -EINTR : 0;
}

static void window_free(struct window *w)
{
	for (int i = 0; i < 2; i++)
		free(w->by[i].r);
	memset(w, 0, sizeof(*w));
}

/* Replays ev[0, n) (with slack sl, or as recorded) into w.  0 or -ENOMEM. */
static int replay_window(struct live_trace *lt, const struct trace_event *ev, size_t n,
			 const struct slack *sl, struct window *w)
{
	const struct replay_opts o = { 1u << RP_OFF, RP_IDLE_TRACE, 0, sl, NULL };
	struct replay_result res;
	struct replay *rp;
	int e = 0;

	memset(w, 0, sizeof(*w));
	if (replay_model_new(&rp, &o, live_name, lt, 1, &res))
		return -ENOMEM;
	for (size_t i = 0; i < n && !e; i++)
		e = replay_model_feed(rp, &ev[i]);
	for (int i = 0; i < 2 && !e; i++) {
		struct replay_tally *g;
		size_t ng;

		if ((e = replay_model_groups(rp, by_table[i], &g, &ng)))
			break;
		if (!(w->by[i].r = calloc(ng ? ng : 1, sizeof(struct row)))) {
			free(g);
			e = -ENOMEM;
			break;
		}
		for (size_t k = 0; k < ng; k++) {
			struct row *r = &w->by[i].r[k];

			replay_model_group_name(rp, by_table[i], g[k].key, r->name, sizeof(r->name));
			r->k = g[k].w[RP_NPOL];
			r->off = g[k].w[RP_OFF];
		}
		w->by[i].n = ng;
		free(g);
	}
	replay_model_free(rp);
	replay_result_free(&res);
	if (e)
		window_free(w);
	return e ? -ENOMEM : 0;
}

static const struct row *find(const struct rows *rs, const char *name)
{
	for (size_t i = 0; i < rs->n; i++)
		if (!strcmp(rs->r[i].name, name))
			return &rs->r[i];
	return NULL;
}

/* The process a row of the process table is ("NAME TGID"), or 0. */
static int32_t row_pid(const char *name)
{
	const char *sp = strrchr(name, ' ');

	return name[0] == '[' || !sp ? 0 : (int32_t)strtol(sp + 1, NULL, 10);
}

static int is_target(const struct measure_target *t, size_t n, int32_t pid)
{
	for (size_t i = 0; i < n; i++)
		if (t[i].pid == pid)
			return 1;
	return 0;
}

/* The figures of one row of the report. */
struct fig {
	uint64_t k0, off0, offw, k1;    /* before: kernel, off; widened off; after: kernel */
};

static double drop(double from, double to)
{
	return from > 0 ? (to - from) / from : 0;
}

static void print_row(FILE *f, const char *name, const struct fig *x, double s0, double s1)
{
	double pd = drop((double)x->off0, (double)x->offw), md = drop((double)x->k0, (double)x->k1);

	fprintf(f, "%-30.30s %9.1f %11.1f %10.1f %8.1f %% %8.1f %%\n", name, (double)x->k0 / s0,
		(double)x->k0 / s0 * (1 + pd), (double)x->k1 / s1, 100 * pd, 100 * md);
}

static void add(struct fig *a, const struct fig *b)
{
	a->k0 += b->k0;
	a->off0 += b->off0;
	a->offw += b->offw;
	a->k1 += b->k1;
}

/* The figures of group `name` of table i in the three windows. */
static struct fig fig_of(const struct window w[3], int i, const char *name)
{
	const struct row *a = find(&w[0].by[i], name), *b = find(&w[1].by[i], name),
			 *c = find(&w[2].by[i], name);

	return (struct fig){ a ? a->k : 0, a ? a->off : 0, b ? b->off : 0, c ? c->k : 0 };
}

/* Every group of table i in any window, once: the union's names. */
static int names_of(const struct window w[3], int i, struct rows *u)
{
	size_t cap = w[0].by[i].n + w[2].by[i].n;

	u->n = 0;
	if (!(u->r = calloc(cap ? cap : 1, sizeof(*u->r))))
		return -ENOMEM;
	for (int k = 0; k < 3; k += 2)
		for (size_t j = 0; j < w[k].by[i].n; j++)
			if (!find(u, w[k].by[i].r[j].name))
				u->r[u->n++] = w[k].by[i].r[j];
	return 0;
}

/* The report: CPUs, all CPUs, the processes and their sum, the verdict. */
static int report(FILE *f, const struct measure_target *t, size_t n, const struct window w[3],
		  double s0, double s1, uint64_t lost)
{
	struct rows cpus, procs;
	struct fig all = { 0 }, tg = { 0 }, x;
	char name[96];
	int agree = 0, judged = 0;

	if (names_of(w, 0, &cpus))
		return -ENOMEM;
	if (names_of(w, 1, &procs)) {
		free(cpus.r);
		return -ENOMEM;
	}
	fprintf(f, "%-30s %9s %11s %10s %10s %10s\n", "wake-ups", "before/s", "predicted/s",
		"measured/s", "predicted", "measured");
	for (size_t i = 0; i < cpus.n; i++) {
		x = fig_of(w, 0, cpus.r[i].name);
		add(&all, &x);
		print_row(f, cpus.r[i].name, &x, s0, s1);
		if (drop((double)x.off0, (double)x.offw) <= -0.05) {
			double pd = drop((double)x.off0, (double)x.offw), md = drop((double)x.k0,
									(double)x.k1);

			judged++;
			agree += md - pd <= MEASURE_AGREE * -pd && pd - md <= MEASURE_AGREE * -pd;
		}
	}
	print_row(f, "all CPUs", &all, s0, s1);
	for (size_t i = 0; i < procs.n; i++)
		if (is_target(t, n, row_pid(procs.r[i].name))) {
			x = fig_of(w, 1, procs.r[i].name);
			add(&tg, &x);
			print_row(f, procs.r[i].name, &x, s0, s1);
		}
	snprintf(name, sizeof(name), "the %zu process%s", n, n == 1 ? "" : "es");
	print_row(f, name, &tg, s0, s1);
	if (!judged)
		fprintf(f, "verdict: the model predicts no CPU a drop of 5 %% or more: nothing to "
			"compare.\n");
	else if (agree == judged)
		fprintf(f, "verdict: predicted and measured drops agree on %s CPU%s that should "
			"save 5 %% or more (within %.0f %% of the prediction).\n",
			judged == 1 ? "the" : "every", judged == 1 ? "" : "s", 100 * MEASURE_AGREE);
	else
		fprintf(f, "verdict: predicted and measured drops differ by more than %.0f %% of "
			"the prediction on %d of the %d CPU%s predicted to save 5 %% or more (of %zu "
			"in the table).\n", 100 * MEASURE_AGREE, judged - agree, judged,
			judged == 1 ? "" : "s", cpus.n);
	{
		double o0 = (double)(all.k0 - tg.k0) / s0, o1 = (double)(all.k1 - tg.k1) / s1;

		if (o1 > o0 * 1.1 + 20 || o1 < o0 * 0.9 - 20)
			fprintf(f, "  the other processes' wake-ups changed meanwhile, from %.1f/s "
				"to %.1f/s: that is not the slack's doing.\n", o0, o1);
	}
	if (lost)
		fprintf(f, "  the kernel dropped %" PRIu64 " events (buffer full): the counts are "
			"low.\n", lost);
	free(cpus.r);
	free(procs.r);
	return 0;
}

/* --slack D on the targets' hrtimer_wakeup timers (slack.h, tgids). */
static int target_slack(const struct measure_target *t, size_t n, uint64_t ns,
			struct slack *sl, int32_t *pids)
{
	char why[200], spec[32];

	memset(sl, 0, sizeof(*sl));
	snprintf(spec, sizeof(spec), "%lluns", (unsigned long long)ns);
	if (slack_parse(sl, spec, why, sizeof(why)) || slack_parse_for(sl, "all", why, sizeof(why)))
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		pids[i] = t[i].pid;
	sl->tgids = pids;
	sl->ntgids = n;
	return 0;
}

int slack_measure(const struct measure_target *t, size_t n, uint64_t ns, double seconds,
		  int (*apply)(void *ctx), void *ctx, FILE *out)
{
	struct live_trace *lt = NULL;
	struct evbuf b = { 0 };
	struct window w[3];
	struct slack sl;
	int32_t *pids = calloc(n ? n : 1, sizeof(*pids));
	char err[512];
	double t0, t1, t2;
	size_t split;
	int e, st = 1;

	memset(w, 0, sizeof(w));
	memset(&sl, 0, sizeof(sl));
	live_stop = 0;
	live_catch_signals();
	if (!pids || target_slack(t, n, ns, &sl, pids)) {
		fprintf(stderr, "hrt slack: --measure: out of memory; nothing changed\n");
		goto out;
	}
	if ((e = live_open(&lt, 1, "slack", err, sizeof(err)))) {
		fprintf(stderr, "hrt slack: --measure: %s; nothing changed\n", err);
		goto out;
	}
	t0 = live_started(lt);
	if ((e = trace_until(lt, &b, mono_now() + seconds))) {
		fprintf(stderr, "hrt slack: --measure: %s; nothing changed\n",
			e == -EINTR ? "interrupted" : strerror(-e));
		goto out;
	}
	t1 = mono_now();
	if ((st = apply(ctx)))
		goto out;
	st = 1;
	if ((e = trace_until(lt, &b, t1 + seconds)) || (e = live_poll(lt, 1, collect, &b))) {
		fprintf(stderr, "hrt slack: --measure: the slack was set, but measuring after it "
			"failed: %s\n", e == -EINTR ? "interrupted" : strerror(-e));
		goto out;
	}
	t2 = mono_now();
	for (split = 0; split < b.n && b.ev[split].t < (hrt_time_t)(t1 * 1e9); split++)
		;
	while (b.n && b.ev[b.n - 1].t >= (hrt_time_t)(t2 * 1e9))
		b.n--;
	if (replay_window(lt, b.ev, split, NULL, &w[0]) ||
	    replay_window(lt, b.ev, split, &sl, &w[1]) ||
	    replay_window(lt, b.ev + split, b.n - split, NULL, &w[2]) ||
	    (fprintf(out, "\nmeasured %.1f s before and %.1f s after; predicted: the before "
		     "window replayed with that slack (policy off, sleep chains followed)\n",
		     t1 - t0, t2 - t1),
	     report(out, t, n, w, t1 - t0, t2 - t1, live_lost(lt)))) {
		fprintf(stderr, "hrt slack: --measure: out of memory\n");
		goto out;
	}
	st = 0;
out:
	for (int i = 0; i < 3; i++)
		window_free(&w[i]);
	live_close(lt);
	slack_free(&sl);
	free(pids);
	free(b.ev);
	return st;
}
