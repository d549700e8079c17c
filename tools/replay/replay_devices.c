/* SPDX-License-Identifier: MIT */
/*
 * replay_devices.c - each CPU's device under each policy (replay_model.c):
 * it fires at hrt_base_next_event() of that CPU's base, never before the
 * last event applied to the CPU; the earliest device of each policy is the
 * top of a binary heap of CPUs, so an update costs O(log CPUs), and
 * fire_until() runs every pass due by an event's time before the event is
 * applied (invariant (1) of replay_model.c).
 */
#include <errno.h>

#include "../common/grow.h"
#include "replay_impl.h"

static int cpu_idle(const struct replay *rp, const struct rcpu *c)
{
	if (rp->idle_mode == RP_IDLE_ALWAYS)
		return 1;
	if (rp->idle_mode == RP_IDLE_NEVER)
		return 0;
	return c->idle;
}

static int keep_wake(struct replay_wakes *w, hrt_time_t t)
{
	void *a = grow_one(w->t, w->n, &w->cap, sizeof(*w->t), 1024);

	if (!a)
		return -ENOMEM;
	w->t = a;
	w->t[w->n++] = t;
	return 0;
}

/* Devices ----------------------------------------------------------------- */

/* The device heap of policy p: a binary min-heap of CPU numbers keyed by
 * their device time (ties by CPU number, so the order is total). */
static int dev_before(const struct replay *rp, int p, int a, int b)
{
	hrt_time_t x = rp->cpu[a].dev[p], y = rp->cpu[b].dev[p];

	return x < y || (x == y && a < b);
}

void heap_set(struct replay *rp, int p, int i, int c)
{
	rp->heap[p][i] = c;
	rp->cpu[c].hpos[p] = i;
}

static void heap_fix(struct replay *rp, int p, int i)
{
	int *h = rp->heap[p], c = h[i];

	while (i > 0 && dev_before(rp, p, c, h[(i - 1) / 2])) {
		heap_set(rp, p, i, h[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
	for (;;) {
		int k = 2 * i + 1;

		if (k >= rp->nheap)
			break;
		if (k + 1 < rp->nheap && dev_before(rp, p, h[k + 1], h[k]))
			k++;
		if (!dev_before(rp, p, h[k], c))
			break;
		heap_set(rp, p, i, h[k]);
		i = k;
	}
	heap_set(rp, p, i, c);
}

static hrt_time_t min_dev(const struct replay *rp, int p)
{
	return rp->nheap ? rp->cpu[rp->heap[p][0]].dev[p] : HRT_TIME_MAX;
}

void dev_update(struct replay *rp, int c, int p)
{
	struct rcpu *cs = &rp->cpu[c];
	hrt_time_t d;

	hrt_base_next_event(cs->base[p], &d);

	if (d != HRT_TIME_MAX && d < cs->floor)
		d = cs->floor;
	cs->dev[p] = d;
	heap_fix(rp, p, cs->hpos[p]);
}

/* Passes run at HRT_TIME_MAX - 2 at the latest (hrt.h), so a device set
 * later can never fire: without the cap a trace with a saturated expiry and
 * an event at the end of time would spin here for ever. */
#define DEV_LAST (HRT_TIME_MAX - 2)

/* Fires every device of policy p due at or before T, in time order. */
void fire_until(struct replay *rp, int p, hrt_time_t T)
{
	if (T > DEV_LAST)
		T = DEV_LAST;
	while (min_dev(rp, p) <= T) {
		int c = rp->heap[p][0];
		struct rcpu *cs = &rp->cpu[c];
		hrt_time_t t = cs->dev[p];

		rp->cur_idle = cpu_idle(rp, cs);
		rp->cur_first = 1;
		rp->cur_cpu = c;
		hrt_base_run(cs->base[p], t, rp->cur_idle);
		rp->res->pol[p].wakeups++;
		if (rp->keep && keep_wake(&rp->res->wakes[p], t))
			rp->oom = 1;
		dev_update(rp, c, p);
	}
}
