/* SPDX-License-Identifier: MIT */
/*
 * replay_chains.c - sleep chains (--slack only): a task that sleeps again
 * after a wake-up arms its next sleep relative to it (hrtimer_start
 * mode=REL), so a policy that runs a wake-up d later than the kernel did
 * gets the next sleep d later too.  Such re-arms are not armed where
 * recorded: each task keeps them in a queue (struct task), and under each
 * policy a timer of the task runs them one after the other, each `gap`
 * after the policy's run of the sleep before (gap: the recorded start minus
 * the kernel's run).  What the task has not reached when the trace ends it
 * would not have slept in it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../common/grow.h"
#include "replay_impl.h"

struct task *task_find(const struct replay *rp, int32_t tid)
{
	void **v = idmap_get(&rp->tasks, (uint64_t)tid);

	return v ? *v : NULL;
}

/* Policy p ran the task's sleep at now: it starts the next queued re-arm,
 * or waits for one. */
static void task_ran(struct task *tk, int p, hrt_time_t now)
{
	const struct sleep *e;
	hrt_time_t start;

	if (tk->head[p] == tk->n) {
		tk->busy[p] = 0;
		tk->run[p] = now;
		return;
	}
	e = &tk->q[tk->head[p]++];
	start = now + e->gap;
	tk->psoft[p] = start + e->dsoft;
	tk->phard[p] = start + e->dhard;
	memcpy(tk->grp[p], e->grp, sizeof(tk->grp[p]));
	tk->busy[p] = 1;
	hrt_timer_start_range(&tk->t[p], tk->rp->cpu[tk->cpu].base[p], tk->psoft[p],
			      tk->phard[p] - tk->psoft[p], HRT_MODE_ABS);
}

/* The live timer of the sleep a chain began with ran under policy p. */
void chain_root_ran(struct replay *rp, const struct live *l, int p, hrt_time_t now)
{
	struct task *tk = task_find(rp, l->tid);

	if (tk && tk->root == l->id)
		task_ran(tk, p, now);
}

static void on_task_expire(struct task *tk, int p, hrt_time_t now)
{
	count_run(tk->rp, p, tk->psoft[p], tk->phard[p], tk->grp[p], RP_ACT_SLACK, now);
	task_ran(tk, p, now);
}

POLICY_CB(task_cb, struct task, on_task_expire, 0)
POLICY_CB(task_cb, struct task, on_task_expire, 1)
POLICY_CB(task_cb, struct task, on_task_expire, 2)
static const hrt_callback task_cb[RP_NPOL] = { task_cb_0, task_cb_1, task_cb_2 };

/* The chain state of task tid, created on first use; NULL on ENOMEM. */
static struct task *task_get(struct replay *rp, int32_t tid)
{
	int fresh;
	void **v = idmap_put(&rp->tasks, (uint64_t)tid, &fresh);
	struct task *tk;

	if (!v)
		return NULL;
	if (!fresh)
		return *v;
	if (!(tk = calloc(1, sizeof(*tk)))) {
		idmap_del(&rp->tasks, (uint64_t)tid);
		return NULL;
	}
	tk->rp = rp;
	tk->tid = tid;
	for (int p = 0; p < RP_NPOL; p++)
		hrt_timer_init(&tk->t[p], task_cb[p]);
	*v = tk;
	return tk;
}

/* Drops what every policy has read, so the queue holds what one of them
 * still has to run, not the whole trace. */
static void task_trim(struct task *tk)
{
	size_t lo = tk->n;

	for (int p = 0; p < RP_NPOL; p++)
		if (tk->head[p] < lo)
			lo = tk->head[p];
	if (lo < 1024 || lo < tk->n / 2)
		return;
	memmove(tk->q, tk->q + lo, (tk->n - lo) * sizeof(*tk->q));
	tk->n -= lo;
	for (int p = 0; p < RP_NPOL; p++)
		tk->head[p] -= lo;
}

/* A chained re-arm: queued, and started at once by each policy that has
 * run the sleep before already (gap after its run).  -ENOMEM. */
static int chain_push(struct replay *rp, struct task *tk, const struct trace_event *ev,
		      hrt_time_t hard, const uint32_t grp[RP_NBY])
{
	struct sleep *e;
	void *q;

	task_trim(tk);
	if (!(q = grow_one(tk->q, tk->n, &tk->cap, sizeof(*tk->q), 16)))
		return -ENOMEM;
	tk->q = q;
	e = &tk->q[tk->n++];
	*e = (struct sleep){ ev->t - tk->krun, ev->soft - ev->t, hard - ev->t, { 0 } };
	memcpy(e->grp, grp, sizeof(e->grp));
	for (int p = 0; p < RP_NPOL; p++)
		if ((rp->pol & (1u << p)) && !tk->busy[p]) {
			task_ran(tk, p, tk->run[p]);
			dev_update(rp, tk->cpu, p);
		}
	return 0;
}

/* A sleep the chain begins with (armed where recorded): the policies drop
 * what they had of the task. */
static void chain_restart(struct replay *rp, struct task *tk, const struct trace_event *ev)
{
	tk->root = ev->id;
	tk->cpu = ev->cpu;
	for (int p = 0; p < RP_NPOL; p++) {
		if (hrt_timer_cancel(&tk->t[p]) == 1)
			dev_update(rp, ev->cpu, p);
		tk->head[p] = tk->n;
		tk->busy[p] = 1;
	}
	task_trim(tk);
}

/*
 * Whether ev, an arming of live l, is a sleep of a task (--slack,
 * hrtimer_wakeup, a task known): then l->tid is set, and *chained says
 * whether it re-arms relatively after a wake-up the kernel ran on the same
 * CPU (queued: chain_push) or begins a chain (armed where recorded).
 * -ENOMEM.
 */
int chain_start(struct replay *rp, struct live *l, const struct trace_event *ev,
		       hrt_time_t hard, int *chained)
{
	struct task *tk;

	*chained = 0;
	l->tid = 0;
	if (!rp->slack || !rp->perf || ev->pid <= 0 || l->act != RP_ACT_SLACK)
		return 0;
	if (!(tk = task_get(rp, ev->pid)))
		return -ENOMEM;
	l->tid = ev->pid;
	*chained = ev->rel && tk->kran && tk->root && tk->cpu == ev->cpu;
	tk->last = ev->id;
	tk->kran = 0;
	if (*chained)
		return chain_push(rp, tk, ev, hard, l->grp);
	chain_restart(rp, tk, ev);
	return 0;
}
