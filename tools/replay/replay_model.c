/* SPDX-License-Identifier: MIT */
/*
 * replay_model.c - the replay model (docs/REPLAY.md): one virtual libhrt base
 * per CPU and policy, driven by the trace's start and cancel events; each
 * CPU's device fires at hrt_base_next_event() (never before the last event
 * applied to it); the kernel row from the recorded expiries; the offline
 * optimum by interval stabbing.  No second timer engine: the policies are
 * libhrt's, and the optimum's "windows in hard order" queue is a libhrt
 * base too (policy off, soft = hard = the window's end).
 *
 * Streaming: one struct live per timer that is armed somewhere or whose
 * kernel expiry is still expected; freed as soon as neither holds.  The
 * earliest device of each policy is the top of a heap of CPUs, so a device
 * update costs O(log CPUs), not a scan of every CPU.
 *
 * Attribution: a wake-up counts for the group (process, function, CPU) of
 * the first timer its pass ran - for the kernel row, of the first expiry
 * with a new now= - so each table's columns sum to the row's wake-ups.
 *
 * Slack (slack.h): a selected arming's policy timers get the widened
 * window; its "opt" timer keeps the recorded one, so the kernel-row
 * bookkeeping (unresolved armings, GRACE) never depends on --slack.  The
 * optimum the policies are held against is of the windows they ran
 * (replay_optimum.c: each run adds its window to its policy's optimum);
 * the recorded one is what --slack saves against.  Each optimum's wake-up
 * counts for the group of the window it stabs, so the per-group difference
 * (saved_slack) sums to the verdict's.
 *
 * Sleep chains (--slack only): replay_chains.c; the optimum:
 * replay_optimum.c; the groups a wake-up counts for and the tables:
 * replay_groups.c (the state all four share: replay_impl.h).
 *
 * Invariants:
 *  (1) before an event at T is applied, every device due at or before T
 *      has fired, so after it every device is due after T, except one armed
 *      by that event for an already expired timer (its device is at T);
 *  (2) the optimum's callbacks run in window-end order (that base's pass
 *      order), so the per-CPU stab point only moves forward.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../common/grow.h"
#include "replay_impl.h"

const char *const replay_policy_names[RP_NPOL] = { "off", "idle", "always" };
const char *const replay_by_names[RP_NBY] = { "process", "function", "cpu", "thread" };
const char *const replay_act_names[RP_NACT] = { "slack", "code", "other" };

/* Live timers ------------------------------------------------------------- */

void maybe_free(struct live *l)
{
	struct replay *rp = l->rp;

	for (int p = 0; p < RP_NPOL; p++)
		if (hrt_timer_is_queued(&l->t[p]))
			return;
	if (hrt_timer_is_queued(&l->opt))
		return;
	if (rp->perf && (l->flags & L_ARMED) && !(l->flags & L_KDONE))
		return;         /* the kernel row may still need the arming */
	idmap_del(&rp->live, l->id);
	l->next_free = rp->free_list;
	rp->free_list = l;
}

/* Bin of a run at `now` in the window [soft, hard] (RP_POS_*). */
static int pos_bin(hrt_time_t soft, hrt_time_t hard, hrt_time_t now)
{
	long double f;

	if (now > hard)
		return RP_POS_LATE;
	if (hard <= soft)
		return RP_POS_ZERO;
	f = (long double)(now - soft) / (long double)(hard - soft);
	if (f < 0)
		f = 0;
	return f >= 1 ? RP_POSB - 1 : (int)(f * RP_POSB);
}

/* A run under policy p of a window [soft, hard] of groups grp: the row,
 * the histograms, the window for p's optimum, and the wake-up for the
 * first run of a pass. */
void count_run(struct replay *rp, int p, hrt_time_t soft, hrt_time_t hard,
	       const uint32_t grp[RP_NBY], int act, hrt_time_t now)
{
	struct replay_row *row = &rp->res->pol[p];

	row->expired++;
	row->expired_busy += !rp->cur_idle;
	hist_add(&rp->late[p], now - soft);
	hist_add(&rp->early[p], hard - now);
	rp->res->pos[p][pos_bin(soft, hard, now)]++;
	if (opt_run(rp, p, soft, hard, grp, act, now))
		rp->oom = 1;
	if (rp->cur_first) {
		count_wake(rp, grp, p);
		rp->cur_first = 0;
	}
}

static void on_expire(struct live *l, int p, hrt_time_t now)
{
	count_run(l->rp, p, l->soft_eff, l->hard_eff, l->grp, l->act, now);
	if (l->tid)
		chain_root_ran(l->rp, l, p, now);
	maybe_free(l);
}

POLICY_CB(cb, struct live, on_expire, 0)
POLICY_CB(cb, struct live, on_expire, 1)
POLICY_CB(cb, struct live, on_expire, 2)
static const hrt_callback policy_cb[RP_NPOL] = { cb_0, cb_1, cb_2 };

void unresolved(struct live *l)
{
	l->rp->res->armings_unresolved++;
	l->rp->cpu[l->cpu].unresolved++;
	/* every table's group: top marks the rows whose kernel count is short */
	for (int b = 0; b < RP_NBY; b++)
		l->rp->gt[b].g[l->grp[b]].unresolved++;
	l->flags &= ~L_ARMED;
}

static struct live *live_get(struct replay *rp, uint64_t id, int create)
{
	void **v;
	struct live *l;
	int fresh;

	if (!create) {
		v = idmap_get(&rp->live, id);
		return v ? *v : NULL;
	}
	if (!(v = idmap_put(&rp->live, id, &fresh)))
		return NULL;
	if (!fresh)
		return *v;
	if ((l = rp->free_list)) {
		rp->free_list = l->next_free;
	} else if (!(l = malloc(sizeof(*l)))) {
		idmap_del(&rp->live, id);
		return NULL;
	}
	memset(l, 0, sizeof(*l));
	for (int p = 0; p < RP_NPOL; p++)
		hrt_timer_init(&l->t[p], policy_cb[p]);
	hrt_timer_init(&l->opt, cb_opt);
	l->rp = rp;
	l->id = id;
	*v = l;
	return l;
}

static int cpu_get(struct replay *rp, int c)
{
	struct rcpu *cs;

	if (c >= rp->ncpu) {
		int n = c + 1 > rp->ncpu * 2 ? c + 1 : rp->ncpu * 2;
		void *p = realloc(rp->cpu, (size_t)n * sizeof(*rp->cpu));

		if (!p)
			return -ENOMEM;
		rp->cpu = p;
		memset(rp->cpu + rp->ncpu, 0, (size_t)(n - rp->ncpu) * sizeof(*rp->cpu));
		rp->ncpu = n;
	}
	cs = &rp->cpu[c];
	if (cs->seen)
		return 0;
	for (int p = 0; p < RP_NPOL; p++) {
		int err = hrt_base_new(&cs->base[p], CLOCK_MONOTONIC, HRT_BASE_VIRTUAL);

		if (err)
			return err;
		hrt_base_set_greedy(cs->base[p], p == RP_OFF ? HRT_GREEDY_OFF :
				    p == RP_IDLE ? HRT_GREEDY_IDLE : HRT_GREEDY_ALWAYS);
		cs->dev[p] = HRT_TIME_MAX;
	}
	cs->seen = 1;
	cs->idle = 1;           /* idle before its first switch */
	cs->floor = INT64_MIN;
	rp->res->cpus++;
	/* Device heaps: the new CPU (device MAX) goes at the end. */
	for (int p = 0; p < RP_NPOL; p++) {
		void *h = realloc(rp->heap[p], (size_t)(rp->nheap + 1) * sizeof(int));

		if (!h)
			return -ENOMEM;
		rp->heap[p] = h;
	}
	for (int p = 0; p < RP_NPOL; p++)
		heap_set(rp, p, rp->nheap, c);
	rp->nheap++;
	return 0;
}


/* Events ------------------------------------------------------------------ */

static int apply_start(struct replay *rp, const struct trace_event *ev)
{
	struct live *l = live_get(rp, ev->id, 1);
	hrt_time_t hard;
	int old, chained;

	if (!l || widened_hard(rp, ev, &hard))
		return -ENOMEM;
	if (l->flags & L_ARMED) {       /* the previous arming ends here */
		if (rp->perf && !(l->flags & L_KDONE) && ev->t >= l->hard_rec)
			unresolved(l);
		hrt_timer_cancel(&l->opt);
	}
	old = l->flags & L_STARTED ? l->cpu : -1;
	rp->res->armings++;
	l->soft_eff = ev->soft > ev->t ? ev->soft : ev->t;
	l->hard_eff = hard > ev->t ? hard : ev->t;
	l->hard_rec = ev->hard > ev->t ? ev->hard : ev->t;
	l->fn = ev->fn;
	if ((l->act = fn_act(rp, ev->fn)) < 0)
		return -ENOMEM;
	l->cpu = ev->cpu;
	l->flags = L_ARMED | L_STARTED;
	if (groups_of(rp, ev, ev->cpu, l->grp) || chain_start(rp, l, ev, hard, &chained))
		return -ENOMEM;
	for (int p = 0; p < RP_NPOL; p++) {
		if (!(rp->pol & (1u << p)))
			continue;
		if (chained) {  /* the task's timer runs it (chain_push) */
			if (hrt_timer_cancel(&l->t[p]) == 1)
				dev_update(rp, ev->cpu, p);
			if (old >= 0 && old != ev->cpu)
				dev_update(rp, old, p);
			continue;
		}
		hrt_timer_start_range(&l->t[p], rp->cpu[ev->cpu].base[p], ev->soft,
				      hard - ev->soft, HRT_MODE_ABS);
		dev_update(rp, ev->cpu, p);
		if (old >= 0 && old != ev->cpu)
			dev_update(rp, old, p);
	}
	hrt_timer_start_range(&l->opt, rp->optbase, l->hard_rec, 0, HRT_MODE_ABS);
	return 0;
}

static void apply_cancel(struct replay *rp, const struct trace_event *ev)
{
	struct live *l = live_get(rp, ev->id, 0);

	rp->res->cancels++;
	if (!l)
		return;
	if (l->tid) {           /* a sleep cut short: no wake-up for the next to follow */
		struct task *tk = task_find(rp, l->tid);

		if (tk && tk->last == l->id)
			tk->kran = 0;
	}
	for (int p = 0; p < RP_NPOL; p++)
		if (hrt_timer_cancel(&l->t[p]) == 1)
			dev_update(rp, l->cpu, p);
	hrt_timer_cancel(&l->opt);
	l->flags = (l->flags & ~(L_ARMED | L_GRACE)) | L_KDONE;
	maybe_free(l);
}

static int apply_expire(struct replay *rp, const struct trace_event *ev)
{
	struct rcpu *cs = &rp->cpu[ev->cpu];
	struct replay_row *k = &rp->res->kernel;
	struct live *l = live_get(rp, ev->id, 0);

	k->expired++;
	k->expired_busy += !cs->idle;
	if (!cs->kwake_valid || cs->kwake_now != ev->now) {
		uint32_t grp[RP_NBY];

		k->wakeups++;
		cs->kwake_valid = 1;
		cs->kwake_now = ev->now;
		/* Who armed it, when the arming was traced; the expiry's task is
		 * only whoever the interrupt found running. */
		if (l && (l->flags & L_STARTED)) {
			memcpy(grp, l->grp, sizeof(grp));
			grp[RP_BY_CPU] = UINT32_MAX;
		}
		if (!(l && (l->flags & L_STARTED))) {
			struct trace_event kev = *ev;

			kev.pid = 0;    /* unknown arming: the kernel's */
			kev.tgid = 0;
			if (groups_of(rp, &kev, ev->cpu, grp))
				return -ENOMEM;
		} else if ((grp[RP_BY_CPU] = group_get(&rp->gt[RP_BY_CPU], (uint64_t)ev->cpu)) ==
			   UINT32_MAX) {
			return -ENOMEM;
		}
		count_wake(rp, grp, RP_NPOL);
	}
	if (l && (l->flags & L_ARMED) && !(l->flags & L_KDONE)) {
		hist_add(&rp->late[RP_NPOL], ev->now - l->soft_eff);
		hist_add(&rp->early[RP_NPOL], l->hard_eff - ev->now);
		rp->res->pos[RP_NPOL][pos_bin(l->soft_eff, l->hard_eff, ev->now)]++;
	}
	if (l && l->tid && (l->flags & L_ARMED) && !(l->flags & L_KDONE)) {
		struct task *tk = task_find(rp, l->tid);

		if (tk && tk->last == l->id) {  /* the kernel ran the task's last sleep */
			tk->krun = ev->now;
			tk->kran = 1;
		}
	}
	if (l) {
		l->flags |= L_KDONE;
		if (l->flags & L_GRACE) {
			hrt_timer_cancel(&l->opt);
			l->flags &= ~L_GRACE;
		}
		maybe_free(l);
	}
	return 0;
}

static int apply(struct replay *rp, const struct trace_event *ev)
{
	int e = cpu_get(rp, ev->cpu);
	hrt_time_t next;

	if (e)
		return e;
	/* (1): devices and required windows due by T first. */
	if (hrt_base_next_event(rp->optbase, &next) > 0 && next <= ev->t)
		hrt_base_run(rp->optbase, ev->t, 0);
	for (int p = 0; p < RP_NPOL; p++)
		if (rp->pol & (1u << p)) {
			fire_until(rp, p, ev->t);
			opt_until(rp, p, ev->t);        /* after the runs that add to it */
		}
	rp->cpu[ev->cpu].floor = ev->t;
	switch (ev->kind) {
	case TEV_START:
		return apply_start(rp, ev);
	case TEV_CANCEL:
		apply_cancel(rp, ev);
		break;
	case TEV_EXPIRE:
		return apply_expire(rp, ev);
	case TEV_IDLE:
	case TEV_BUSY:
		rp->cpu[ev->cpu].idle = ev->kind == TEV_IDLE;
		break;
	case TEV_FORK:
		return fork_seen(rp, ev);
	}
	return 0;
}

/* Results ----------------------------------------------------------------- */

static void fill_row(struct replay_row *row, const struct hist *late, const struct hist *early)
{
	row->samples = late->n;
	row->late_p50 = hist_pct(late, 50);
	row->late_p99 = hist_pct(late, 99);
	row->late_max = late->n ? late->max : 0;
	row->early_p50 = hist_pct(early, 50);
}

/* At the end: perf armings past their hard expiry with no expiry or cancel. */
static void count_open(struct replay *rp, hrt_time_t end)
{
	for (size_t i = 0; i < rp->live.cap; i++) {
		struct live *l = rp->live.vals[i];

		if (l && rp->perf && (l->flags & L_ARMED) && !(l->flags & L_KDONE) &&
		    l->hard_rec <= end)
			unresolved(l);
	}
}

static void finish(struct replay *rp, const struct trace_counts *tc, enum trace_format format)
{
	struct replay_result *res = rp->res;

	res->format = format;
	res->events = tc->events;
	res->ignored = tc->ignored;
	res->bad_lines = tc->bad_lines;
	res->pairs_merged = tc->pairs_merged;
	res->timers = tc->timers;
	res->has_kernel = tc->expire_events > 0;
	res->idle_fallback = tc->sched_events == 0 && rp->idle_mode == RP_IDLE_TRACE;
	for (int p = 0; p < RP_NPOL; p++) {
		struct hrt_stats st;

		if (!(rp->pol & (1u << p)))
			continue;
		for (int c = 0; c < rp->ncpu; c++) {
			if (!rp->cpu[c].seen)
				continue;
			hrt_base_get_stats(rp->cpu[c].base[p], &st, sizeof(st));
			res->pol[p].expired_greedy += st.expired_greedy;
		}
		fill_row(&res->pol[p], &rp->late[p], &rp->early[p]);
	}
	fill_row(&res->kernel, &rp->late[RP_NPOL], &rp->early[RP_NPOL]);
	res->unresolved_cpu = -1;
	for (int c = 0; c < rp->ncpu; c++)
		if (rp->cpu[c].seen && rp->cpu[c].unresolved > res->unresolved_on_cpu) {
			res->unresolved_on_cpu = rp->cpu[c].unresolved;
			res->unresolved_cpu = c;
		}
	res->kernel_incomplete = res->has_kernel && res->armings_unresolved > 0;
	fill_by(rp);
}

static void cleanup(struct replay *rp)
{
	/* A base with queued timers is not freed (-EBUSY): cancel them first. */
	for (size_t i = 0; i < rp->live.cap; i++) {
		struct live *l = rp->live.vals[i];

		for (int p = 0; l && p < RP_NPOL; p++)
			hrt_timer_cancel(&l->t[p]);
		if (l)
			hrt_timer_cancel(&l->opt);
	}
	for (size_t i = 0; i < rp->tasks.cap; i++) {
		struct task *tk = rp->tasks.vals[i];

		for (int p = 0; tk && p < RP_NPOL; p++)
			hrt_timer_cancel(&tk->t[p]);
	}
	for (int c = 0; c < rp->ncpu; c++)
		for (int p = 0; p < RP_NPOL; p++)
			hrt_base_free(rp->cpu[c].base[p]);
	opt_free(rp);
	free(rp->sel);
	free(rp->act);
	for (size_t i = 0; i < rp->live.cap; i++)
		if (rp->live.vals[i])
			free(rp->live.vals[i]);
	idmap_free(&rp->live);
	idmap_free(&rp->pname);
	fork_free(rp);
	for (size_t i = 0; i < rp->tasks.cap; i++)
		if (rp->tasks.vals[i]) {
			free(((struct task *)rp->tasks.vals[i])->q);
			free(rp->tasks.vals[i]);
		}
	idmap_free(&rp->tasks);
	while (rp->free_list) {
		struct live *l = rp->free_list;

		rp->free_list = l->next_free;
		free(l);
	}
	for (int p = 0; p <= RP_NPOL; p++) {
		hist_free(&rp->late[p]);
		hist_free(&rp->early[p]);
	}
	free(rp->cpu);
	for (int b = 0; b < RP_NBY; b++) {
		idmap_free(&rp->gt[b].map);
		free(rp->gt[b].g);
	}
	for (int p = 0; p < RP_NPOL; p++)
		free(rp->heap[p]);
}

static int cmp_wakes_at(const void *a, const void *b)
{
	const hrt_time_t *x = a, *y = b;

	return *x < *y ? -1 : *x > *y;
}

void replay_result_free(struct replay_result *res)
{
	for (int p = 0; p < RP_NPOL; p++) {
		free(res->wakes[p].t);
		memset(&res->wakes[p], 0, sizeof(res->wakes[p]));
	}
}

/* The model fed event by event ---------------------------------------------- */

int replay_model_new(struct replay **out, const struct replay_opts *o, replay_name_fn name,
		     const void *src, int tasks, struct replay_result *res)
{
	struct replay *rp = calloc(1, sizeof(*rp));
	int ret = 0;

	*out = NULL;
	memset(res, 0, sizeof(*res));
	if (!rp)
		return -ENOMEM;
	res->policies = o->policies & RP_ALL;
	res->idle_mode = o->idle;
	rp->name = name;
	rp->src = src;
	rp->res = res;
	rp->pol = res->policies;
	rp->idle_mode = o->idle;
	rp->keep = o->keep_wakes;
	rp->perf = tasks;
	if (o->slack && o->slack->kind != SLACK_NONE)
		rp->slack = res->slack = o->slack;
	ret = opt_new(rp);
	for (int p = 0; p <= RP_NPOL && !ret; p++)
		if (hist_init(&rp->late[p]) || hist_init(&rp->early[p]))
			ret = -ENOMEM;
	if (ret) {
		replay_model_free(rp);
		return ret;
	}
	*out = rp;
	return 0;
}

int replay_model_feed(struct replay *rp, const struct trace_event *ev)
{
	struct replay_result *res = rp->res;

	if (apply(rp, ev) || rp->oom)
		return -ENOMEM;
	if (!res->events++)
		res->first = ev->t;
	res->last = ev->t;
	return 0;
}

void replay_model_end(struct replay *rp, const struct trace_counts *tc, enum trace_format format)
{
	struct replay_result *res = rp->res;

	res->slack_blind = rp->slack && !rp->perf && rp->slack->who != SLACK_ALL;
	opt_end(rp);
	count_open(rp, res->last);
	finish(rp, tc, format);
	/* Per policy the wake-ups come in time order except across CPUs
	 * firing at one instant; only the instants matter to the raster. */
	for (int p = 0; p < RP_NPOL; p++)
		if (res->wakes[p].n)
			qsort(res->wakes[p].t, res->wakes[p].n, sizeof(hrt_time_t), cmp_wakes_at);
}

void replay_model_free(struct replay *rp)
{
	if (!rp)
		return;
	cleanup(rp);
	free(rp);
}

static const char *reader_name(const void *src, uint32_t i)
{
	return trace_fn_name(src, i);
}

int replay_trace(struct trace_reader *r, const struct replay_opts *o, struct replay_result *res)
{
	struct replay *rp;
	struct trace_event ev;
	int k = 0, ret;

	if (replay_model_new(&rp, o, reader_name, r, 0, res))
		return -2;
	ret = 0;
	while ((k = trace_next(r, &ev)) > 0) {
		if (!rp->perf && trace_get_format(r) != TRACE_V1)
			rp->perf = 1;
		if (replay_model_feed(rp, &ev)) {
			ret = -2;
			break;
		}
		if (o->progress)
			progress_tick(o->progress, r, res->events);
	}
	if (!ret && (k < 0 || trace_finish(r)))
		ret = -1;
	if (!ret)
		replay_model_end(rp, trace_get_counts(r), trace_get_format(r));
	replay_model_free(rp);
	return ret;
}
