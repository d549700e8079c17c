/*
 * replay_sim.c - the replay model (docs/REPLAY.md): one virtual libhrt base
 * per CPU and policy, driven by the trace's start and cancel events; each
 * CPU's device fires at hrt_base_next_event() (never before the last event
 * applied to it); the kernel row from the recorded expiries; the offline
 * optimum by interval stabbing.  No second timer engine: the policies are
 * libhrt's, and the optimum's "windows in hard order" queue is a libhrt
 * base too (policy off, soft = hard = the window's end).
 *
 * Streaming: one struct live per timer that is armed somewhere or whose
 * kernel expiry is still expected; freed as soon as neither holds.
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

#include "replay.h"

const char *const replay_policy_names[RP_NPOL] = { "off", "idle", "always" };

/* Histograms of signed ns: exact below 512, then 8 bits below the leading
 * one (relative error < 1/256); a reported percentile is its bucket's
 * value nearest zero, the max is exact. */
#define HB 14592

struct hist {
	uint64_t *pos, *neg;
	uint64_t n;
	int64_t max;
};

static int hidx(uint64_t v)
{
	int e;

	if (v < 512)
		return (int)v;
	e = 63 - __builtin_clzll(v);
	return 512 + (e - 9) * 256 + (int)((v >> (e - 8)) & 255);
}

static uint64_t hval(int i)
{
	if (i < 512)
		return (uint64_t)i;
	return (uint64_t)(256 + (i - 512) % 256) << ((i - 512) / 256 + 1);
}

static int hist_init(struct hist *h)
{
	h->pos = calloc(HB, sizeof(*h->pos));
	h->neg = calloc(HB, sizeof(*h->neg));
	h->n = 0;
	h->max = INT64_MIN;
	return h->pos && h->neg ? 0 : -ENOMEM;
}

static void hist_free(struct hist *h)
{
	free(h->pos);
	free(h->neg);
}

static void hist_add(struct hist *h, int64_t v)
{
	if (v >= 0)
		h->pos[hidx((uint64_t)v)]++;
	else
		h->neg[hidx(v == INT64_MIN ? (uint64_t)INT64_MAX : (uint64_t)-v)]++;
	h->n++;
	if (v > h->max)
		h->max = v;
}

/* The value at rank ceil(q * n / 100), 1-based. */
static int64_t hist_pct(const struct hist *h, unsigned q)
{
	uint64_t rank = (h->n * q + 99) / 100, seen = 0;

	if (!h->n)
		return 0;
	if (!rank)
		rank = 1;
	for (int i = HB - 1; i >= 0; i--)
		if ((seen += h->neg[i]) >= rank)
			return -(int64_t)hval(i);
	for (int i = 0; i < HB; i++)
		if ((seen += h->pos[i]) >= rank) {
			int64_t v = (int64_t)hval(i);

			return v > h->max ? h->max : v;
		}
	return h->max;
}

/* State ------------------------------------------------------------------- */

#define L_ARMED  1u     /* an arming is open (no cancel yet, no later start) */
#define L_KDONE  2u     /* the kernel expired or cancelled this arming */
#define L_STARTED 4u    /* l->cpu is valid */
#define L_GRACE  8u     /* opt timer: waiting GRACE for the kernel's expiry */
#define GRACE    1000000000LL

struct replay;

struct live {
	struct hrt_timer t[RP_NPOL];
	struct hrt_timer opt;                   /* the arming's window end */
	struct replay *rp;
	uint64_t id;
	hrt_time_t soft_eff, hard_eff;          /* max(soft, start), max(hard, start) */
	uint32_t fn;
	int cpu;
	unsigned flags;
	struct live *next_free;
};

struct rcpu {
	int seen, idle;                         /* idle from the trace */
	hrt_time_t floor;                       /* last event applied */
	struct hrt_base *base[RP_NPOL];
	hrt_time_t dev[RP_NPOL];                /* device due time, MAX: none */
	hrt_time_t stab;                        /* optimum: last stab point */
	int stabbed;
	int kwake_valid;
	hrt_time_t kwake_now;                   /* kernel row: last now= */
	uint64_t unresolved;
};

struct replay {
	struct trace_reader *r;
	struct replay_result *res;
	unsigned pol;
	enum replay_idle idle_mode;
	int perf;
	struct rcpu *cpu;
	int ncpu;
	hrt_time_t min_dev[RP_NPOL];
	int min_cpu[RP_NPOL];
	struct idmap live;
	struct live *free_list;
	struct hrt_base *optbase;
	struct hist late[RP_NPOL + 1], early[RP_NPOL + 1];    /* [RP_NPOL]: kernel */
	uint64_t (*fncnt)[RP_NPOL + 1];
	uint32_t nfn;
	/* The pass in progress. */
	int cur_idle, cur_first;
};

static int cpu_idle(const struct replay *rp, const struct rcpu *c)
{
	if (rp->idle_mode == RP_IDLE_ALWAYS)
		return 1;
	if (rp->idle_mode == RP_IDLE_NEVER)
		return 0;
	return c->idle;
}

static int fn_slot(struct replay *rp, uint32_t fn)
{
	if (fn == TRACE_NO_FN)
		return -1;
	if (fn >= rp->nfn) {
		uint32_t n = fn + 64;
		void *p = realloc(rp->fncnt, n * sizeof(*rp->fncnt));

		if (!p)
			return -1;
		rp->fncnt = p;
		memset(rp->fncnt + rp->nfn, 0, (n - rp->nfn) * sizeof(*rp->fncnt));
		rp->nfn = n;
	}
	return (int)fn;
}

/* Devices ----------------------------------------------------------------- */

static void dev_update(struct replay *rp, int c, int p)
{
	struct rcpu *cs = &rp->cpu[c];
	hrt_time_t d = hrt_base_next_event(cs->base[p]);

	if (d != HRT_TIME_MAX && d < cs->floor)
		d = cs->floor;
	cs->dev[p] = d;
	if (d < rp->min_dev[p]) {
		rp->min_dev[p] = d;
		rp->min_cpu[p] = c;
	} else if (rp->min_cpu[p] == c) {
		rp->min_dev[p] = HRT_TIME_MAX;
		for (int i = 0; i < rp->ncpu; i++)
			if (rp->cpu[i].seen && rp->cpu[i].dev[p] < rp->min_dev[p]) {
				rp->min_dev[p] = rp->cpu[i].dev[p];
				rp->min_cpu[p] = i;
			}
	}
}

/* Passes run at HRT_TIME_MAX - 2 at the latest (hrt.h), so a device set
 * later can never fire: without the cap a trace with a saturated expiry and
 * an event at the end of time would spin here for ever. */
#define DEV_LAST (HRT_TIME_MAX - 2)

/* Fires every device of policy p due at or before T, in time order. */
static void fire_until(struct replay *rp, int p, hrt_time_t T)
{
	if (T > DEV_LAST)
		T = DEV_LAST;
	while (rp->min_dev[p] <= T) {
		int c = rp->min_cpu[p];
		struct rcpu *cs = &rp->cpu[c];
		hrt_time_t t = rp->min_dev[p];

		rp->cur_idle = cpu_idle(rp, cs);
		rp->cur_first = 1;
		hrt_base_run(cs->base[p], t, rp->cur_idle);
		rp->res->pol[p].wakeups++;
		dev_update(rp, c, p);
	}
}

/* Live timers ------------------------------------------------------------- */

static void maybe_free(struct live *l)
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

static void on_expire(struct live *l, int p, hrt_time_t now)
{
	struct replay *rp = l->rp;
	struct replay_row *row = &rp->res->pol[p];

	row->expired++;
	row->expired_busy += !rp->cur_idle;
	hist_add(&rp->late[p], now - l->soft_eff);
	hist_add(&rp->early[p], l->hard_eff - now);
	if (rp->cur_first) {
		int s = fn_slot(rp, l->fn);

		if (s >= 0)
			rp->fncnt[s][p]++;
		rp->cur_first = 0;
	}
	maybe_free(l);
}

#define POLICY_CB(P) \
	static enum hrt_restart cb_##P(struct hrt_timer *t, hrt_time_t now) \
	{ \
		on_expire(HRT_CONTAINER_OF(t, struct live, t[P]), P, now); \
		return HRT_NORESTART; \
	}
POLICY_CB(0)
POLICY_CB(1)
POLICY_CB(2)
static const hrt_callback policy_cb[RP_NPOL] = { cb_0, cb_1, cb_2 };

static void unresolved(struct live *l)
{
	l->rp->res->armings_unresolved++;
	l->rp->cpu[l->cpu].unresolved++;
	l->flags &= ~L_ARMED;
}

/*
 * The opt timer of an arming: first its window end - a required window, in
 * window-end order (2), for classic interval stabbing; then, for perf input
 * still waiting for the kernel's expiry, GRACE later: the arming is
 * unresolved and its memory can go.
 */
static enum hrt_restart cb_opt(struct hrt_timer *t, hrt_time_t now)
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
		cs->stab = l->hard_eff;
		cs->stabbed = 1;
		l->rp->res->optimal_wakeups++;
	}
	if (l->rp->perf && (l->flags & L_ARMED) && !(l->flags & L_KDONE)) {
		l->flags |= L_GRACE;
		hrt_timer_start_range(&l->opt, l->rp->optbase,
				      l->hard_eff > HRT_TIME_MAX - GRACE ? HRT_TIME_MAX :
				      l->hard_eff + GRACE, 0, HRT_MODE_ABS);
		return HRT_NORESTART;
	}
	maybe_free(l);
	return HRT_NORESTART;
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
		cs->base[p] = hrt_base_new(HRT_CLOCK_VIRTUAL);
		if (!cs->base[p])
			return -ENOMEM;
		hrt_base_set_greedy(cs->base[p], p == RP_OFF ? HRT_GREEDY_OFF :
				    p == RP_IDLE ? HRT_GREEDY_IDLE : HRT_GREEDY_ALWAYS);
		cs->dev[p] = HRT_TIME_MAX;
	}
	cs->seen = 1;
	cs->idle = 1;           /* idle before its first switch */
	cs->floor = INT64_MIN;
	rp->res->cpus++;
	return 0;
}

/* Events ------------------------------------------------------------------ */

static int apply_start(struct replay *rp, const struct trace_event *ev)
{
	struct live *l = live_get(rp, ev->id, 1);
	int old;

	if (!l)
		return -ENOMEM;
	if (l->flags & L_ARMED) {       /* the previous arming ends here */
		if (rp->perf && !(l->flags & L_KDONE) && ev->t >= l->hard_eff)
			unresolved(l);
		hrt_timer_cancel(&l->opt);
	}
	old = l->flags & L_STARTED ? l->cpu : -1;
	rp->res->armings++;
	l->soft_eff = ev->soft > ev->t ? ev->soft : ev->t;
	l->hard_eff = ev->hard > ev->t ? ev->hard : ev->t;
	l->fn = ev->fn;
	l->cpu = ev->cpu;
	l->flags = L_ARMED | L_STARTED;
	for (int p = 0; p < RP_NPOL; p++) {
		if (!(rp->pol & (1u << p)))
			continue;
		hrt_timer_start_range(&l->t[p], rp->cpu[ev->cpu].base[p], ev->soft,
				      ev->hard - ev->soft, HRT_MODE_ABS);
		dev_update(rp, ev->cpu, p);
		if (old >= 0 && old != ev->cpu)
			dev_update(rp, old, p);
	}
	hrt_timer_start_range(&l->opt, rp->optbase, l->hard_eff, 0, HRT_MODE_ABS);
	return 0;
}

static void apply_cancel(struct replay *rp, const struct trace_event *ev)
{
	struct live *l = live_get(rp, ev->id, 0);

	rp->res->cancels++;
	if (!l)
		return;
	for (int p = 0; p < RP_NPOL; p++)
		if (hrt_timer_cancel(&l->t[p]) == 1)
			dev_update(rp, l->cpu, p);
	hrt_timer_cancel(&l->opt);
	l->flags = (l->flags & ~(L_ARMED | L_GRACE)) | L_KDONE;
	maybe_free(l);
}

static void apply_expire(struct replay *rp, const struct trace_event *ev)
{
	struct rcpu *cs = &rp->cpu[ev->cpu];
	struct replay_row *k = &rp->res->kernel;
	struct live *l = live_get(rp, ev->id, 0);

	k->expired++;
	k->expired_busy += !cs->idle;
	if (!cs->kwake_valid || cs->kwake_now != ev->now) {
		int s = fn_slot(rp, ev->fn);

		k->wakeups++;
		cs->kwake_valid = 1;
		cs->kwake_now = ev->now;
		if (s >= 0)
			rp->fncnt[s][RP_NPOL]++;
	}
	if (l && (l->flags & L_ARMED) && !(l->flags & L_KDONE)) {
		hist_add(&rp->late[RP_NPOL], ev->now - l->soft_eff);
		hist_add(&rp->early[RP_NPOL], l->hard_eff - ev->now);
	}
	if (l) {
		l->flags |= L_KDONE;
		if (l->flags & L_GRACE) {
			hrt_timer_cancel(&l->opt);
			l->flags &= ~L_GRACE;
		}
		maybe_free(l);
	}
}

static int apply(struct replay *rp, const struct trace_event *ev)
{
	int e = cpu_get(rp, ev->cpu);

	if (e)
		return e;
	/* (1): devices and required windows due by T first. */
	if (hrt_base_next_event(rp->optbase) <= ev->t)
		hrt_base_run(rp->optbase, ev->t, 0);
	for (int p = 0; p < RP_NPOL; p++)
		if (rp->pol & (1u << p))
			fire_until(rp, p, ev->t);
	rp->cpu[ev->cpu].floor = ev->t;
	switch (ev->kind) {
	case TEV_START:
		return apply_start(rp, ev);
	case TEV_CANCEL:
		apply_cancel(rp, ev);
		break;
	case TEV_EXPIRE:
		apply_expire(rp, ev);
		break;
	case TEV_IDLE:
	case TEV_BUSY:
		rp->cpu[ev->cpu].idle = ev->kind == TEV_IDLE;
		break;
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

static int fn_cmp_key(const struct replay *rp, uint32_t a, uint32_t b)
{
	static const int order[] = { RP_NPOL, RP_OFF, RP_IDLE, RP_ALWAYS };

	for (int k = 0; k <= RP_NPOL; k++) {
		int col = order[k];

		if (rp->fncnt[a][col] != rp->fncnt[b][col])
			return rp->fncnt[a][col] > rp->fncnt[b][col] ? -1 : 1;
	}
	return strcmp(trace_fn_name(rp->r, a), trace_fn_name(rp->r, b));
}

static void fill_top(struct replay *rp)
{
	struct replay_result *res = rp->res;
	uint32_t pick[RP_TOP];
	int n = 0;

	/* Selection of the RP_TOP largest: kernel wake-ups first, then off,
	 * idle, always, then name - a total order, so results reproduce. */
	for (uint32_t f = 0; f < rp->nfn && f < trace_fn_count(rp->r); f++) {
		uint64_t sum = rp->fncnt[f][RP_NPOL];
		int i;

		for (int p = 0; p < RP_NPOL; p++)
			sum += rp->fncnt[f][p];
		if (!sum)
			continue;
		if (n == RP_TOP && fn_cmp_key(rp, f, pick[n - 1]) > 0)
			continue;
		i = n < RP_TOP ? n++ : n - 1;
		while (i > 0 && fn_cmp_key(rp, f, pick[i - 1]) < 0) {
			pick[i] = pick[i - 1];
			i--;
		}
		pick[i] = f;
	}
	res->ntop = n;
	for (int i = 0; i < n; i++) {
		snprintf(res->top[i].name, sizeof(res->top[i].name), "%s",
			 trace_fn_name(rp->r, pick[i]));
		res->top[i].kernel = rp->fncnt[pick[i]][RP_NPOL];
		for (int p = 0; p < RP_NPOL; p++)
			res->top[i].pol[p] = rp->fncnt[pick[i]][p];
	}
}

/* At the end: perf armings past their hard expiry with no expiry or cancel. */
static void count_open(struct replay *rp, hrt_time_t end)
{
	for (size_t i = 0; i < rp->live.cap; i++) {
		struct live *l = rp->live.vals[i];

		if (l && rp->perf && (l->flags & L_ARMED) && !(l->flags & L_KDONE) &&
		    l->hard_eff <= end)
			unresolved(l);
	}
}

static void finish(struct replay *rp)
{
	struct replay_result *res = rp->res;
	const struct trace_counts *tc = trace_get_counts(rp->r);

	res->format = trace_get_format(rp->r);
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
			hrt_base_get_stats(rp->cpu[c].base[p], &st);
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
	fill_top(rp);
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
	for (int c = 0; c < rp->ncpu; c++)
		for (int p = 0; p < RP_NPOL; p++)
			hrt_base_free(rp->cpu[c].base[p]);
	hrt_base_free(rp->optbase);
	for (size_t i = 0; i < rp->live.cap; i++)
		if (rp->live.vals[i])
			free(rp->live.vals[i]);
	idmap_free(&rp->live);
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
	free(rp->fncnt);
}

int replay_trace(struct trace_reader *r, unsigned policies, enum replay_idle idle,
		 struct replay_result *res)
{
	struct replay rp;
	struct trace_event ev;
	hrt_time_t end = 0;
	int k, ret = 0;

	memset(res, 0, sizeof(*res));
	memset(&rp, 0, sizeof(rp));
	res->policies = policies & RP_ALL;
	res->idle_mode = idle;
	rp.r = r;
	rp.res = res;
	rp.pol = res->policies;
	rp.idle_mode = idle;
	for (int p = 0; p < RP_NPOL; p++)
		rp.min_dev[p] = HRT_TIME_MAX;
	rp.optbase = hrt_base_new(HRT_CLOCK_VIRTUAL);
	if (!rp.optbase)
		ret = -2;
	else
		hrt_base_set_greedy(rp.optbase, HRT_GREEDY_OFF);
	for (int p = 0; p <= RP_NPOL && !ret; p++)
		if (hist_init(&rp.late[p]) || hist_init(&rp.early[p]))
			ret = -2;
	while (!ret && (k = trace_next(r, &ev)) > 0) {
		if (!rp.perf && trace_get_format(r) == TRACE_PERF)
			rp.perf = 1;
		if (apply(&rp, &ev))
			ret = -2;
		end = ev.t;
	}
	if (!ret && (k < 0 || trace_finish(r)))
		ret = -1;
	if (!ret) {
		count_open(&rp, end);
		finish(&rp);
	}
	cleanup(&rp);
	return ret;
}
