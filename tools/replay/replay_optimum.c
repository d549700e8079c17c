/* SPDX-License-Identifier: MIT */
/*
 * replay_optimum.c - the offline optimum of the replay (docs/REPLAY.md): the
 * fewest wake-ups that run every timer inside its window, by interval
 * stabbing per CPU.  The windows come in window-end order, as the passes
 * of a libhrt base (policy off, soft = hard = the window's end) run them,
 * so the per-CPU stab point only moves forward (invariant (2) of
 * replay_model.c).
 */
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
		for (int b = 0; b < RP_NBY; b++)
			l->rp->gt[b].g[l->grp[b]].opt_all++;
		if (l->rp->slack) {
			l->rp->res->optimal_wakeups_recorded++;
			l->rp->opt_rec_act[l->act]++;
			for (int b = 0; b < RP_NBY; b++) {
				l->rp->gt[b].g[l->grp[b]].opt_rec++;
				l->rp->gt[b].g[l->grp[b]].opt_rec_act[l->act]++;
			}
		} else {
			l->rp->res->optimal_wakeups++;
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

/* The optimum of the widened windows: the same stabbing as cb_opt's. */
enum hrt_restart cb_optw(struct hrt_timer *t, hrt_time_t now)
{
	struct live *l = HRT_CONTAINER_OF(t, struct live, optw);
	struct rcpu *cs = &l->rp->cpu[l->cpu];

	(void)now;
	if (!cs->stabbedw || l->soft_eff > cs->stabw) {
		cs->stabw = l->hard_eff;
		cs->stabbedw = 1;
		l->rp->res->optimal_wakeups++;
		l->rp->opt_act[l->act]++;
		for (int b = 0; b < RP_NBY; b++) {
			l->rp->gt[b].g[l->grp[b]].opt++;
			l->rp->gt[b].g[l->grp[b]].opt_act[l->act]++;
		}
	}
	maybe_free(l);
	return HRT_NORESTART;
}
