/* SPDX-License-Identifier: MIT */
/*
 * replay_widen.c - which armings --slack widens, and by how much
 * (slack.h's rule): the names --slack-for selects, each function's
 * RP_ACT_* (what can act on a saving: timer slack, code, nothing), both
 * remembered per string index so that a long trace compares each name once.
 */
#include <stdlib.h>
#include <string.h>

#include "replay_impl.h"

/* A per-index byte cache (0: not known yet) grown to hold index i.  0 or -1. */
static int cache_fit(uint8_t **c, size_t *n, uint32_t i)
{
	size_t nn = (size_t)i + 1 > *n * 2 ? (size_t)i + 1 : *n * 2;
	uint8_t *p;

	if (i < *n)
		return 0;
	if (!(p = realloc(*c, nn)))
		return -1;
	memset(p + *n, 0, nn - *n);
	*c = p;
	*n = nn;
	return 0;
}

/* Whether --slack-for takes the string of index i (a function or a task
 * name; which one depends on --slack-for, never both), remembered per
 * index so a long trace compares each name once.  -1: out of memory. */
static int selects_name(struct replay *rp, uint32_t i, const char *fn, const char *comm)
{
	if (i == TRACE_NO_FN)
		return slack_selects(rp->slack, fn, comm);
	if (cache_fit(&rp->sel, &rp->nsel, i))
		return -1;
	if (!rp->sel[i])
		rp->sel[i] = slack_selects(rp->slack, fn, comm) ? 2 : 1;
	return rp->sel[i] == 2;
}

int replay_fn_act(const char *fn)
{
	if (!fn)
		return RP_ACT_OTHER;
	if (!strcmp(fn, "hrtimer_wakeup"))
		return RP_ACT_SLACK;
	if (!strcmp(fn, "timerfd_tmrproc") || !strcmp(fn, "posix_timer_fn") ||
	    !strcmp(fn, "it_real_fn"))
		return RP_ACT_CODE;
	return RP_ACT_OTHER;
}

/* RP_ACT_* of function index fn, remembered per index; -1 out of memory. */
int fn_act(struct replay *rp, uint32_t fn)
{
	if (!rp->perf || fn == TRACE_NO_FN)
		return RP_ACT_OTHER;
	if (cache_fit(&rp->act, &rp->nact, fn))
		return -1;
	if (!rp->act[fn])
		rp->act[fn] = (uint8_t)(replay_fn_act(rp->name(rp->src, fn)) + 1);
	return rp->act[fn] - 1;
}

/* The hard expiry the replay uses for the arming ev: widened when --slack
 * selects it.  -1: out of memory. */
int widened_hard(struct replay *rp, const struct trace_event *ev, hrt_time_t *hard)
{
	const struct slack *sl = rp->slack;
	int k = 0;

	*hard = ev->hard;
	if (!sl)
		return 0;
	if (sl->who == SLACK_ALL)
		k = 1;
	else if (!rp->perf)
		k = 0;          /* v1: no functions, no processes (slack.h) */
	else if (sl->who == SLACK_USER)
		k = selects_name(rp, ev->fn, ev->fn == TRACE_NO_FN ? NULL :
				 rp->name(rp->src, ev->fn), NULL);
	else
		k = selects_name(rp, ev->comm, NULL, ev->comm == TRACE_NO_FN ? NULL :
				 rp->name(rp->src, ev->comm));
	if (k < 0)
		return -1;
	if (k > 0 && sl->tgids) {
		int a = fn_act(rp, ev->fn);

		if (a < 0)
			return -1;
		k = slack_selects_task(sl, ev->pid, ev->tgid) && a == RP_ACT_SLACK;
	}
	if (k)
		*hard = slack_widen(sl, ev->t, ev->soft, ev->hard);
	rp->res->armings_widened += *hard != ev->hard;
	return 0;
}
