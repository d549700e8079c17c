/* SPDX-License-Identifier: MIT */
/*
 * replay_groups.c - who a wake-up counts for (docs/REPLAY.md): the
 * attribution groups of the four tables (process, function, CPU, thread),
 * their keys and names, and the top tables of a result (most wake-ups,
 * most saved).  A wake-up counts for the group of the first timer its pass
 * ran, so each table's columns sum to the row's wake-ups.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "replay_impl.h"

/* Timers a task arms for itself (sleeps, poll/epoll timeouts, timerfd,
 * itimers, POSIX timers): the task that armed them owns them.  Every other
 * function, and anything armed by the idle task, is the kernel's. */
static int task_fn(const char *fn)
{
	static const char *const tf[] = {
		"hrtimer_wakeup", "timerfd_tmrproc", "it_real_fn", "posix_timer_fn",
		"alarmtimer_fired", "io_timeout_fn", "io_link_timeout_fn",
	};

	for (size_t i = 0; i < sizeof(tf) / sizeof(tf[0]); i++)
		if (!strcmp(fn, tf[i]))
			return 1;
	return 0;
}

/* Forks ------------------------------------------------------------------- */

static int learn_pname(struct replay *rp, const struct trace_event *ev);

/* The fork that started TID less than FORK_YOUNG before T, or NULL. */
static const struct fork *fork_young(const struct replay *rp, int32_t tid, hrt_time_t t)
{
	void **v = idmap_get(&rp->forks, (uint64_t)(uint32_t)tid);
	const struct fork *f;
	uint64_t seq;

	if (!v)
		return NULL;
	seq = (uint64_t)(uintptr_t)*v - 1;
	if (seq < rp->fork_head)
		return NULL;
	f = &rp->fork[seq % rp->fork_cap];
	return f->child == tid && t - f->t < FORK_YOUNG ? f : NULL;
}

/* Drops the forks older than FORK_YOUNG before T from the ring's head. */
static void fork_expire(struct replay *rp, hrt_time_t t)
{
	while (rp->fork_head < rp->fork_tail) {
		const struct fork *f = &rp->fork[rp->fork_head % rp->fork_cap];
		void **v = idmap_get(&rp->forks, (uint64_t)(uint32_t)f->child);

		if (t - f->t < FORK_YOUNG)
			break;
		if (v && (uint64_t)(uintptr_t)*v - 1 == rp->fork_head)
			idmap_del(&rp->forks, (uint64_t)(uint32_t)f->child);
		rp->fork_head++;
	}
}

int fork_seen(struct replay *rp, const struct trace_event *ev)
{
	int fresh;
	void **v;

	if (ev->pid <= 0 || ev->id == 0 || ev->id > INT32_MAX)
		return 0;
	fork_expire(rp, ev->t);
	if (rp->fork_tail - rp->fork_head == rp->fork_cap) {     /* full: twice as large */
		uint64_t nc = rp->fork_cap ? rp->fork_cap * 2 : 256;
		struct fork *n = malloc(nc * sizeof(*n));

		if (!n)
			return -ENOMEM;
		for (uint64_t s = rp->fork_head; s < rp->fork_tail; s++)
			n[s % nc] = rp->fork[s % rp->fork_cap];
		free(rp->fork);
		rp->fork = n;
		rp->fork_cap = nc;
	}
	if (!(v = idmap_put(&rp->forks, ev->id, &fresh)))
		return -ENOMEM;
	*v = (void *)(uintptr_t)(rp->fork_tail + 1);
	rp->fork[rp->fork_tail % rp->fork_cap] = (struct fork){
		(int32_t)ev->id, ev->tgid > 0 ? ev->tgid : ev->pid, ev->comm, ev->tgid > 0, ev->t,
	};
	rp->fork_tail++;
	/* the parent may arm nothing itself (a shell waiting): its name */
	return learn_pname(rp, ev);
}

void fork_free(struct replay *rp)
{
	idmap_free(&rp->forks);
	free(rp->fork);
}

/*
 * Who a task's process row is: its process (TGID, or its TID without
 * one) - or, while that is younger than FORK_YOUNG, the process that
 * started it, and so on up (a shell's subshell's child): a loop that keeps
 * starting short-lived children is one row, its own (docs/REPLAY.md).
 */
static uint64_t process_key(const struct replay *rp, const struct trace_event *ev)
{
	int32_t who = ev->tgid > 0 ? ev->tgid : ev->pid;
	uint32_t comm = ev->comm;
	int tg = ev->tgid > 0;
	const struct fork *f;

	for (int up = 0; up < 8 && (f = fork_young(rp, who, ev->t)); up++) {
		who = f->parent;
		comm = f->pcomm;
		tg = f->ptgid;
	}
	return tg ? G_TGID | (uint32_t)who : (uint64_t)comm << 32 | (uint32_t)who;
}

static uint64_t group_key(const struct replay *rp, int by, const struct trace_event *ev,
			  int cpu)
{
	if (by == RP_BY_CPU)
		return (uint64_t)cpu;
	if (by == RP_BY_FUNCTION)
		return ev->fn;
	if (!rp->perf)
		return G_NONE;
	if (ev->pid <= 0 || ev->comm == TRACE_NO_FN || ev->fn == TRACE_NO_FN ||
	    !task_fn(rp->name(rp->src, ev->fn)))
		return G_KERNEL | ev->fn;
	if (by == RP_BY_PROCESS)
		return process_key(rp, ev);
	return (uint64_t)ev->comm << 32 | (uint32_t)ev->pid;
}

/* A process is named as its main thread (pid == tgid) is; until that
 * thread is seen, as the first of its threads seen.  -ENOMEM. */
static int learn_pname(struct replay *rp, const struct trace_event *ev)
{
	int fresh;
	void **v;

	if (ev->tgid <= 0 || ev->comm == TRACE_NO_FN)
		return 0;
	if (!(v = idmap_put(&rp->pname, (uint64_t)ev->tgid, &fresh)))
		return -ENOMEM;
	if (fresh || ev->pid == ev->tgid)
		*v = (void *)((uintptr_t)ev->comm + 1);
	return 0;
}

/* The group's index, created on first use; UINT32_MAX on ENOMEM. */
uint32_t group_get(struct gtab *t, uint64_t key)
{
	int fresh;
	void **v = idmap_put(&t->map, key, &fresh);

	if (!v)
		return UINT32_MAX;
	if (!fresh)
		return (uint32_t)((uintptr_t)*v - 1);
	if (t->n == t->cap) {
		uint32_t nc = t->cap ? t->cap * 2 : 64;
		void *p = realloc(t->g, nc * sizeof(*t->g));

		if (!p) {
			idmap_del(&t->map, key);
			return UINT32_MAX;
		}
		t->g = p;
		t->cap = nc;
	}
	memset(&t->g[t->n], 0, sizeof(t->g[t->n]));
	t->g[t->n].key = key;
	*v = (void *)(uintptr_t)(t->n + 1);
	return t->n++;
}

/* Looks up an event's groups into grp[]; -ENOMEM. */
int groups_of(struct replay *rp, const struct trace_event *ev, int cpu,
		     uint32_t grp[RP_NBY])
{
	if (learn_pname(rp, ev))
		return -ENOMEM;
	for (int b = 0; b < RP_NBY; b++)
		if ((grp[b] = group_get(&rp->gt[b], group_key(rp, b, ev, cpu))) == UINT32_MAX)
			return -ENOMEM;
	return 0;
}

void count_wake(struct replay *rp, const uint32_t grp[RP_NBY], int col)
{
	for (int b = 0; b < RP_NBY; b++)
		rp->gt[b].g[grp[b]].w[col]++;
}

static int64_t saved(const struct group *g, int p)
{
	return (int64_t)g->w[RP_OFF] - (int64_t)g->w[p];
}

/* Most wake-ups: kernel, then off, idle, always, then the key - a total
 * order, so results reproduce.  <0: a first. */
static int cmp_wake(const struct group *a, const struct group *b)
{
	static const int order[] = { RP_NPOL, RP_OFF, RP_IDLE, RP_ALWAYS };

	for (int k = 0; k <= RP_NPOL; k++)
		if (a->w[order[k]] != b->w[order[k]])
			return a->w[order[k]] > b->w[order[k]] ? -1 : 1;
	return a->key < b->key ? -1 : a->key > b->key;
}

/* Most saved by always, then by idle, then most wake-ups. */
static int cmp_saved(const struct group *a, const struct group *b)
{
	if (saved(a, RP_ALWAYS) != saved(b, RP_ALWAYS))
		return saved(a, RP_ALWAYS) > saved(b, RP_ALWAYS) ? -1 : 1;
	if (saved(a, RP_IDLE) != saved(b, RP_IDLE))
		return saved(a, RP_IDLE) > saved(b, RP_IDLE) ? -1 : 1;
	return cmp_wake(a, b);
}

static int64_t saved_slack(const struct group *g)
{
	return (int64_t)g->opt_rec - (int64_t)g->opt;
}

/* With --slack: most saved by the widening (who should add slack), then
 * as cmp_saved. */
static int cmp_slack(const struct group *a, const struct group *b)
{
	if (saved_slack(a) != saved_slack(b))
		return saved_slack(a) > saved_slack(b) ? -1 : 1;
	return cmp_saved(a, b);
}

void group_name(const struct replay *rp, int by, uint64_t key, char *buf, size_t len)
{
	if (by == RP_BY_CPU)
		snprintf(buf, len, "CPU %llu", (unsigned long long)key);
	else if (by == RP_BY_FUNCTION)
		snprintf(buf, len, "%s", key == TRACE_NO_FN ? "(no function in trace)" :
			 rp->name(rp->src, (uint32_t)key));
	else if (key == G_NONE)
		snprintf(buf, len, "(no process in trace)");
	else if (key & G_KERNEL)
		snprintf(buf, len, "[kernel] %s", (uint32_t)key == TRACE_NO_FN ? "?" :
			 rp->name(rp->src, (uint32_t)key));
	else if (key & G_TGID) {
		void **v = idmap_get(&rp->pname, (uint32_t)key);

		snprintf(buf, len, "%s %u", v ? rp->name(rp->src, (uint32_t)((uintptr_t)*v - 1)) :
			 "?", (unsigned)(uint32_t)key);
	}
	else
		snprintf(buf, len, "%s %u", rp->name(rp->src, (uint32_t)(key >> 32)),
			 (unsigned)(uint32_t)key);
}

/* Keeps the RP_TOP first of the groups with a wake-up (or, for `sv`, with
 * a positive saving) in the order cmp, by insertion. */
static int select_top(const struct gtab *t, int sv, uint32_t pick[RP_TOP],
		      int (*cmp)(const struct group *, const struct group *))
{
	int n = 0;

	for (uint32_t k = 0; k < t->n; k++) {
		const struct group *g = &t->g[k];
		uint64_t sum = 0;
		int i;

		for (int p = 0; p <= RP_NPOL; p++)
			sum += g->w[p];
		sum += g->opt_rec;      /* --slack: a group whose windows all widened
					 * may run only in others' passes */
		if (!sum || (sv && saved(g, RP_ALWAYS) <= 0 && saved(g, RP_IDLE) <= 0 &&
			     saved_slack(g) <= 0))
			continue;
		if (n == RP_TOP && cmp(g, &t->g[pick[n - 1]]) > 0)
			continue;
		i = n < RP_TOP ? n++ : n - 1;
		while (i > 0 && cmp(g, &t->g[pick[i - 1]]) < 0) {
			pick[i] = pick[i - 1];
			i--;
		}
		pick[i] = k;
	}
	return n;
}

static void fill_group(const struct replay *rp, int by, struct replay_group *out,
		       const struct group *g)
{
	group_name(rp, by, g->key, out->name, sizeof(out->name));
	out->pid = by == RP_BY_PROCESS && !(g->key & (G_KERNEL | G_NONE)) && (g->key & G_TGID) ?
		   (int32_t)(uint32_t)g->key : 0;
	memcpy(out->w, g->w, sizeof(out->w));
	out->opt = g->opt;
	out->opt_rec = g->opt_rec;
	for (int a = 0; a < RP_NACT; a++)
		out->saved_act[a] = (int64_t)g->opt_rec_act[a] -
				    (int64_t)(g->optbest >= 0 ? g->optp_act[g->optbest][a] : 0);
}

void fill_by(struct replay *rp)
{
	for (int b = 0; b < RP_NBY; b++) {
		struct replay_by *by = &rp->res->by[b];
		const struct gtab *t = &rp->gt[b];
		uint32_t pick[RP_TOP];

		/* The group's optimum: its policies' lowest, and at most what
		 * each policy counted for it.  A wake-up counts for one group,
		 * the pass's first timer's or the stab's window's: where the two
		 * differ a group can count more stabs than a policy's passes
		 * (not a CPU, nor the whole trace: replay_optimum.c). */
		for (uint32_t k = 0; k < t->n; k++) {
			struct group *g = &rp->gt[b].g[k];

			g->optbest = opt_of_group(rp, g);
			g->opt = g->optbest >= 0 ? g->optp[g->optbest] : 0;
			for (int p = 0; p < RP_NPOL; p++)
				if ((rp->pol & (1u << p)) && g->w[p] < g->opt)
					g->opt = g->w[p];
		}
		for (uint32_t k = 0; k < t->n; k++)
			for (int p = 0; p <= RP_NPOL; p++)
				if (t->g[k].w[p]) {
					by->ngroups++;
					break;
				}
		by->ntop = select_top(t, 0, pick, cmp_wake);
		for (int i = 0; i < by->ntop; i++)
			fill_group(rp, b, &by->top[i], &t->g[pick[i]]);
		by->nsaved = select_top(t, 1, pick, rp->slack ? cmp_slack : cmp_saved);
		for (int i = 0; i < by->nsaved; i++)
			fill_group(rp, b, &by->saved[i], &t->g[pick[i]]);
	}
	/* The function most unresolved armings belong to. */
	for (uint32_t k = 0; k < rp->gt[RP_BY_FUNCTION].n; k++) {
		const struct group *g = &rp->gt[RP_BY_FUNCTION].g[k];

		if (g->unresolved > rp->res->unresolved_on_fn) {
			rp->res->unresolved_on_fn = g->unresolved;
			group_name(rp, RP_BY_FUNCTION, g->key, rp->res->unresolved_fn,
				   sizeof(rp->res->unresolved_fn));
		}
	}
}

int replay_model_groups(const struct replay *rp, int by, struct replay_tally **out, size_t *n)
{
	const struct gtab *t = &rp->gt[by];
	struct replay_tally *a = calloc(t->n ? t->n : 1, sizeof(*a));

	if (!a)
		return -ENOMEM;
	for (uint32_t k = 0; k < t->n; k++) {
		const struct group *g = &t->g[k];

		a[k].key = g->key;
		memcpy(a[k].w, g->w, sizeof(a[k].w));
		a[k].opt_rec = g->opt_rec;
		memcpy(a[k].optp, g->optp, sizeof(a[k].optp));
		a[k].unresolved = g->unresolved;
		memcpy(a[k].optp_act, g->optp_act, sizeof(a[k].optp_act));
		memcpy(a[k].opt_rec_act, g->opt_rec_act, sizeof(a[k].opt_rec_act));
	}
	*out = a;
	*n = t->n;
	return 0;
}

void replay_model_group_name(const struct replay *rp, int by, uint64_t key, char *buf,
			     size_t len)
{
	group_name(rp, by, key, buf, len);
}
