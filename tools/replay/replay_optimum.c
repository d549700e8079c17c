/* SPDX-License-Identifier: MIT */
/*
 * replay_optimum.c - the offline optimum of the replay (docs/REPLAY.md): the
 * fewest wake-ups that run a set of windows, each inside its window, by
 * interval stabbing per CPU - a stab at the end of the earliest-ending
 * window not yet stabbed runs every window open then.  The windows come in
 * window-end order, as the passes of a libhrt base (policy off, soft = hard
 * = the window's end) run them, so each per-CPU stab point only moves
 * forward (invariant (2) of replay_model.c).  Two sets of windows:
 *
 *  - as recorded: every arming's window as the trace has it (the opt timer
 *    of struct live).  What --slack saves is counted against this one
 *    (optimal_wakeups_recorded, a group's opt_rec).
 *  - as each policy ran them: the windows of the timers policy p ran, each
 *    inside the window p gave it - with --slack the widened one, and a
 *    sleep chain's sleeps where p's own runs moved them.  The greedy
 *    stabbing of a set of windows needs no more wake-ups than any schedule
 *    that runs them all in their windows, p's included, at every instant
 *    (it stays behind p's count); so the lowest of the policies' optima is
 *    at most every policy's wake-ups: the optimum the table holds them
 *    against (optimal_wakeups, a group's opt).  Without --slack every
 *    policy runs the recorded windows and the two sets are one.
 *
 * A window of a policy's run is a struct owin, allocated at the run (the
 * run is never after the window's end, which the stabbing needs: a run
 * past the end - a timer armed already expired - stretches its window to
 * the run) and freed when it is stabbed or passed.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "replay_impl.h"

/*
 * The opt timer of an arming: first its window end - a required window, in
 * window-end order (2), for classic interval stabbing; then, for perf input
 * still waiting for the kernel's expiry, GRACE later: the arming is
 * unresolved and its memory can go.
 */
enum hrt_restart cb_opt(struct hrt_timer *t, hrt_time_t now)
{
	struct live *l = HRT_CONTAINER_OF(t, struct live, opt);
	struct rcpu *cs = &l->rp->cpu[l->cpu];

	(void)now;
	if (l->flags & L_GRACE) {
		l->flags &= ~L_GRACE;
		unresolved(l);
		maybe_free(l);
		return HRT_NORESTART;
	}
	if (!cs->stabbed || l->soft_eff > cs->stab) {
		cs->stab = l->hard_rec;
		cs->stabbed = 1;
		l->rp->res->optimal_wakeups_recorded++;
		l->rp->opt_rec_act[l->act]++;
		for (int b = 0; b < RP_NBY; b++) {
			l->rp->gt[b].g[l->grp[b]].opt_rec++;
			l->rp->gt[b].g[l->grp[b]].opt_rec_act[l->act]++;
		}
	}
	if (l->rp->perf && (l->flags & L_ARMED) && !(l->flags & L_KDONE)) {
		l->flags |= L_GRACE;
		hrt_timer_start_range(&l->opt, l->rp->optbase,
				      l->hard_rec > HRT_TIME_MAX - GRACE ? HRT_TIME_MAX :
				      l->hard_rec + GRACE, 0, HRT_MODE_ABS);
		return HRT_NORESTART;
	}
	maybe_free(l);
	return HRT_NORESTART;
}

/* A window one policy ran (above). */
struct owin {
	struct hrt_timer t;                     /* at the window's end, on obase[p] */
	struct replay *rp;
	hrt_time_t soft, hard;
	uint32_t grp[RP_NBY];
	int cpu, p, act;
	struct owin *next;                      /* the free list, or all windows */
};

#define OWIN_BLOCK 256

static void owin_put(struct owin *w)
{
	struct replay *rp = w->rp;

	w->next = rp->owin_free;
	rp->owin_free = w;
}

static enum hrt_restart cb_owin(struct hrt_timer *t, hrt_time_t now)
{
	struct owin *w = HRT_CONTAINER_OF(t, struct owin, t);
	struct replay *rp = w->rp;
	struct rcpu *cs = &rp->cpu[w->cpu];
	int p = w->p;

	(void)now;
	if (!cs->stabbedp[p] || w->soft > cs->stabp[p]) {
		cs->stabp[p] = w->hard;
		cs->stabbedp[p] = 1;
		rp->optp[p]++;
		rp->optp_act[p][w->act]++;
		for (int b = 0; b < RP_NBY; b++) {
			rp->gt[b].g[w->grp[b]].optp[p]++;
			rp->gt[b].g[w->grp[b]].optp_act[p][w->act]++;
		}
	}
	owin_put(w);
	return HRT_NORESTART;
}

/* A fresh window from the free list, the list refilled a block at a time
 * (each block remembered for opt_free); NULL on ENOMEM. */
static struct owin *owin_get(struct replay *rp)
{
	struct owin *w;

	if (!rp->owin_free) {
		struct owin *blk = calloc(OWIN_BLOCK + 1, sizeof(*blk));

		if (!blk)
			return NULL;
		/* blk[0] links the blocks; the rest are windows */
		blk[0].next = rp->owin_blocks;
		rp->owin_blocks = blk;
		for (int i = 1; i <= OWIN_BLOCK; i++) {
			blk[i].rp = rp;
			hrt_timer_init(&blk[i].t, cb_owin);
			owin_put(&blk[i]);
		}
	}
	w = rp->owin_free;
	rp->owin_free = w->next;
	return w;
}

int opt_run(struct replay *rp, int p, hrt_time_t soft, hrt_time_t hard, const uint32_t grp[RP_NBY],
	    int act, hrt_time_t now)
{
	struct owin *w = owin_get(rp);

	if (!w)
		return -ENOMEM;
	w->soft = soft < now ? soft : now;
	w->hard = hard > now ? hard : now;
	memcpy(w->grp, grp, sizeof(w->grp));
	w->cpu = rp->cur_cpu;
	w->p = p;
	w->act = act;
	hrt_timer_start_range(&w->t, rp->obase[p], w->hard, 0, HRT_MODE_ABS);
	return 0;
}

void opt_until(struct replay *rp, int p, hrt_time_t T)
{
	hrt_time_t next;

	if (hrt_base_next_event(rp->obase[p], &next) > 0 && next <= T)
		hrt_base_run(rp->obase[p], T, 0);
}

int opt_new(struct replay *rp)
{
	int e = hrt_base_new(&rp->optbase, CLOCK_MONOTONIC, HRT_BASE_VIRTUAL);

	if (e)
		return e;
	hrt_base_set_greedy(rp->optbase, HRT_GREEDY_OFF);
	for (int p = 0; p < RP_NPOL; p++) {
		if ((e = hrt_base_new(&rp->obase[p], CLOCK_MONOTONIC, HRT_BASE_VIRTUAL)))
			return e;
		hrt_base_set_greedy(rp->obase[p], HRT_GREEDY_OFF);
	}
	return 0;
}

void opt_end(struct replay *rp)
{
	struct replay_result *res = rp->res;
	int best = -1;

	for (int p = 0; p < RP_NPOL; p++) {
		res->optimal_by_policy[p] = rp->optp[p];
		if ((rp->pol & (1u << p)) && (best < 0 || rp->optp[p] < rp->optp[best]))
			best = p;
	}
	res->optimal_policy = best;
	res->optimal_wakeups = best >= 0 ? rp->optp[best] : 0;
	for (int a = 0; a < RP_NACT; a++)
		res->saved_act[a] = (int64_t)rp->opt_rec_act[a] -
				    (int64_t)(best >= 0 ? rp->optp_act[best][a] : 0);
}

int opt_of_group(const struct replay *rp, const struct group *g)
{
	int best = -1;

	for (int p = 0; p < RP_NPOL; p++)
		if ((rp->pol & (1u << p)) && (best < 0 || g->optp[p] < g->optp[best]))
			best = p;
	return best;
}

void opt_free(struct replay *rp)
{
	/* a base with queued timers is not freed (-EBUSY): cancel them first */
	for (struct owin *blk = rp->owin_blocks; blk; blk = blk[0].next)
		for (int i = 1; i <= OWIN_BLOCK; i++)
			hrt_timer_cancel(&blk[i].t);
	for (int p = 0; p < RP_NPOL; p++)
		hrt_base_free(rp->obase[p]);
	hrt_base_free(rp->optbase);
	while (rp->owin_blocks) {
		struct owin *blk = rp->owin_blocks;

		rp->owin_blocks = blk[0].next;
		free(blk);
	}
}
