/* SPDX-License-Identifier: MIT */
/*
 * timerset.c - the queued timers of one base: the tree side of add, the
 * pass's searches and its end, the earliest hard expiry, the coalescing
 * window, the walk and the checker (timerset.h states the rules S1-S3).
 * No locking, no callbacks: the base serialises and runs them.
 */
#include <limits.h>

#include "timerset.h"

static void enqueue_tree(struct hrt_tset *ts, struct hrt_timer *t);

/* Every insert into and erase from a tree, counted (stats.tree_ops). */
static inline void tree_add(struct hrt_tset *ts, struct hrt_queue *q, struct hrt_timer *t,
			    int excluded)
{
	ts->tree_ops++;
	hrt__queue_add(q, t, excluded);
}

static inline void tree_del(struct hrt_tset *ts, struct hrt_queue *q, struct hrt_timer *t)
{
	ts->tree_ops++;
	hrt__queue_del(q, t);
}

void hrt__tset_init(struct hrt_tset *ts, hrt_time_t now)
{
	hrt__queue_init(&ts->queue);
	hrt__queue_init(&ts->pend);
	ts->ran_n = 0;
	ts->in_pass = 0;
	ts->pass_id = 0;
	ts->tree_ops = 0;
	ts->wheel_moves = 0;
	hrt__wheel_init(&ts->wheel, now);
}

/* The first timer of the main queue that this pass may still run: the
 * leftmost, past at most ran_n excluded ones. */
static inline struct hrt_timer *first_live(const struct hrt_tset *ts)
{
	const struct hrt_rb_node *n = ts->queue.leftmost;

	while (n && hrt__queue_is_excluded(hrt__queue_timer(n)))
		n = hrt__rb_next(n);
	return hrt__queue_timer(n);
}

/* Of two candidates, the first in queue order; full ties go to the main
 * queue, whose timers were all queued before the pending ones (S1). */
static inline struct hrt_timer *earlier(struct hrt_timer *q, struct hrt_timer *p)
{
	return p && (!q || hrt__queue_before(p, q)) ? p : q;
}

/* The first timer in queue order not taken in this pass, whatever its soft
 * expiry; NULL if none. */
static struct hrt_timer *first_untaken(const struct hrt_tset *ts)
{
	struct hrt_timer *t = first_live(ts);

	if (ts->pend.count)     /* first pending timer that has not run */
		t = earlier(t, hrt__queue_next_due(&ts->pend, HRT_QUEUE_NOW_MAX + 1,
						   &(uint64_t){ 0 }));
	return t;
}

void hrt__tset_ran_forget(struct hrt_tset *ts, const struct hrt_timer *t)
{
	unsigned i;

	for (i = 0; i < ts->ran_n; i++) {
		if (ts->ran[i] == t) {
			ts->ran[i] = ts->ran[--ts->ran_n];
			return;
		}
	}
}

/* The timers the wheel put on out (each hrt__ran_pass valid) into the
 * trees, in list order. */
void hrt__tset_add_out(struct hrt_tset *ts, struct hrt_list_node *out)
{
	while (!hrt__list_empty(out)) {
		ts->wheel_moves++;
		enqueue_tree(ts, hrt__wheel_out_take(&ts->wheel, out));
	}
}

void hrt__tset_add_tree(struct hrt_tset *ts, struct hrt_timer *t)
{
	enqueue_tree(ts, t);
}

/* t is on no structure and its hrt__ran_pass is valid. */
static void enqueue_tree(struct hrt_tset *ts, struct hrt_timer *t)
{
	if (ts->in_pass) {
		int ran = t->hrt__ran_pass == ts->pass_id;

		if (ran && !ts->pend.count && ts->ran_n < HRT_TSET_RAN_MAX) {
			tree_add(ts, &ts->queue, t, 1);         /* the restart path */
			ts->ran[ts->ran_n++] = t;
			hrt__tset_mark(t, ts, HRT_TS_QUEUED);
			return;
		}
		/* Behind a pending timer, or marks full: S1 needs `pend`. */
		if (ran || ts->pend.count) {
			tree_add(ts, &ts->pend, t, ran);
			hrt__tset_mark(t, ts, HRT_TS_QUEUED | HRT_TS_PENDING);
			return;
		}
	}
	tree_add(ts, &ts->queue, t, 0);         /* may still run in this pass */
	hrt__tset_mark(t, ts, HRT_TS_QUEUED);
}

void hrt__tset_gather(struct hrt_tset *ts)
{
	struct hrt_list_node out;

	hrt__list_init(&out);
	hrt__wheel_take_all(&ts->wheel, &out);
	hrt__tset_add_out(ts, &out);
}

/* The trees' first timer in queue order, whether or not taken (outside a
 * pass nothing is). */
static struct hrt_timer *tree_first(const struct hrt_tset *ts)
{
	return earlier(hrt__queue_first(&ts->queue), hrt__queue_first(&ts->pend));
}

hrt_time_t hrt__tset_next(struct hrt_tset *ts)
{
	struct hrt_timer *t = tree_first(ts);
	hrt_time_t next = t ? t->hrt__hard : HRT_TIME_MAX;
	int key;

	/* Each lowers next if it has earlier: a timer's hard expiry, or a
	 * slot's bound (W5: early, never late). */
	hrt__wheel_min_within(&ts->wheel, &next, &key);
	hrt__wheel_park_min_within(&ts->wheel, &next, &key);
	return next;
}

/* The pass ------------------------------------------------------------- */

void hrt__tset_pass_begin(struct hrt_tset *ts, uint64_t id, hrt_time_t now)
{
	struct hrt_list_node out;

	ts->in_pass = 1;
	hrt__wheel_fast(&ts->wheel, 0);        /* a restart goes to the park */
	ts->pass_id = id;
	ts->pass_now = now;
	/* S3: every timer a search at now may return is in a tree (W1). */
	hrt__list_init(&out);
	hrt__wheel_advance(&ts->wheel, hrt__wheel_hz_for(now), &out);
	hrt__tset_add_out(ts, &out);
}

struct hrt_timer *hrt__tset_first_due(struct hrt_tset *ts, hrt_time_t now, hrt_time_t *ends)
{
	struct hrt_timer *t = first_untaken(ts), *w;
	hrt_time_t hard = t ? t->hrt__hard : HRT_TIME_MAX;
	int key;

	/* Without ends: nothing due in the trees is the answer (no wheel
	 * timer is soft-expired: S3), and the wheel need not be searched. */
	if (!ends && (!t || t->hrt__soft > now))
		return NULL;
	/* A wheel timer with an earlier hard expiry comes first and is not
	 * due (S3), which ends the run; so does a slot's bound below t's
	 * (W5: its unknown least may come first; t, if due, runs by its
	 * hard expiry all the same, since the wake-up comes at the bound).
	 * The restarted ones wait in the park, which the run passes over
	 * (S2).  One with an equal hard expiry has a later soft expiry than
	 * a due t (> now), so comes after it. */
	w = hrt__wheel_min_within(&ts->wheel, &hard, &key);
	if (ends)
		*ends = hard;
	return !w && key < 0 && t && t->hrt__soft <= now ? t : NULL;
}

struct hrt_timer *hrt__tset_next_due(struct hrt_tset *ts, hrt_time_t now, uint64_t *visited)
{
	struct hrt_timer *t = hrt__queue_next_due(&ts->queue, now, visited);

	if (ts->pend.count)
		t = earlier(t, hrt__queue_next_due(&ts->pend, now, visited));
	return t;
}

void hrt__tset_pass_end(struct hrt_tset *ts)
{
	struct hrt_list_node out;
	struct hrt_timer *t;

	while (ts->ran_n)
		hrt__queue_unexclude(ts->ran[--ts->ran_n]);
	while ((t = hrt__queue_first(&ts->pend))) {
		tree_del(ts, &ts->pend, t);
		tree_add(ts, &ts->queue, t, 0);
		hrt__tset_mark(t, ts, HRT_TS_QUEUED);
	}
	ts->in_pass = 0;
	hrt__wheel_fast(&ts->wheel, 1);
	/* The park's timers to their slots: O(1) each, once per restart. */
	hrt__list_init(&out);
	hrt__wheel_unpark(&ts->wheel, &out);
	hrt__tset_add_out(ts, &out);
}

/* The coalescing window ------------------------------------------------ */

/* The earliest soft expiry below *soft in the subtree at n, of a timer this
 * pass may still run, pruning subtrees whose least soft expiry (excluded
 * timers included) is not below it; visits at most *budget nodes, so the
 * window costs O(1) whatever is queued (every value found is some runnable
 * timer's soft expiry, so a cut-off search still gives a valid window, only
 * a narrower one). */
static void window_walk(const struct hrt_rb_node *n, hrt_time_t *soft,
			unsigned *budget)
{
	while (n && *budget) {
		const struct hrt_timer *t = hrt__queue_timer(n);

		if (t->hrt__subtree_soft >= *soft)
			return;
		--*budget;
		if (!hrt__queue_is_excluded(t) && t->hrt__soft < *soft)
			*soft = t->hrt__soft;
		window_walk(n->hrt__left, soft, budget);
		n = n->hrt__right;
	}
}

#define HRT_WINDOW_VISITS 64

int hrt__tset_window(struct hrt_tset *ts, int greedy, hrt_time_t *owner,
		     hrt_time_t *soft, hrt_time_t *hard)
{
	unsigned budget = HRT_WINDOW_VISITS;
	struct hrt_timer *t, *w;
	hrt_time_t h;
	int key;

	/* The first in queue order may be a wheel timer: one with an earlier
	 * hard expiry, or an equal one and an earlier soft expiry (a tree
	 * timer can have a far soft expiry: a walk gathered it). */
	t = first_untaken(ts);
	h = t ? t->hrt__hard : HRT_TIME_MAX;
	if (h < HRT_TIME_MAX)
		h++;
	w = hrt__wheel_min_within(&ts->wheel, &h, &key);
	if (key >= 0) {
		/* A slot's bound (W5) stands for its unknown least: a window
		 * from the slot's start to the bound, early, never late. */
		*owner = *soft = hrt__wheel_slot_time(&ts->wheel, (unsigned)key);
		*hard = h;
	} else {
		if (w && (!t || hrt__queue_before(w, t)))
			t = w;
		else if (!t)    /* every timer's hard expiry is "never": by soft, W1 */
			t = hrt__wheel_least_soft(&ts->wheel, HRT_TIME_MAX, UINT_MAX);
		if (!t)
			return 0;
		*owner = *soft = t->hrt__soft;
		*hard = t->hrt__hard;
	}
	/* The wheel's soft expiries are all past the trees' (W1), and a
	 * bounded search may give an upper bound: the trees suffice. */
	if (!greedy)
		return 1;
	window_walk(ts->queue.root.node, soft, &budget);
	window_walk(ts->pend.root.node, soft, &budget);
	/* The trees' soft expiries are before the wheel's (W1) but for
	 * gathered timers; the wheel's least is in its first slot. */
	if ((w = hrt__wheel_least_soft(&ts->wheel, *soft, budget)) && w->hrt__soft < *soft)
		*soft = w->hrt__soft;
	return 1;
}

/* Introspection -------------------------------------------------------- */

static int node_depth(const struct hrt_rb_node *n)
{
	int d = 0;

	while ((n = hrt__rb_parent(n)))
		d++;
	return d;
}

/*
 * Both trees in queue order (`pend` during a pass holds timers queued
 * late in it, a walk's gathered far timers among them: they are queued
 * too), each node with its place in its own tree; the timers re-queued by
 * this pass are left out, wherever they are.
 */
size_t hrt__tset_walk(const struct hrt_tset *ts,
		      void (*fn)(const struct hrt_tree_node *n, void *ctx), void *ctx)
{
	const struct hrt_rb_node *q = ts->queue.leftmost, *p = ts->pend.leftmost, *n;
	struct hrt_tree_node info;
	size_t shown = 0;

	while (q || p) {
		/* Full ties to the main queue, as earlier() (S1). */
		if (p && (!q || hrt__queue_before(hrt__queue_timer(p), hrt__queue_timer(q)))) {
			n = p;
			p = hrt__rb_next(p);
		} else {
			n = q;
			q = hrt__rb_next(q);
		}
		info.timer = hrt__queue_timer(n);
		if (hrt__queue_is_excluded(info.timer))        /* re-queued by this pass */
			continue;
		info.left = hrt__queue_timer(n->hrt__left);
		info.right = hrt__queue_timer(n->hrt__right);
		info.subtree_soft = info.timer->hrt__subtree_soft;
		info.depth = node_depth(n);
		info.red = !hrt__rb_is_black(n);
		fn(&info, ctx);
		shown++;
	}
	return shown;
}

/* t is one of the restart marks. */
static int marked(const struct hrt_tset *ts, const struct hrt_timer *t)
{
	for (unsigned i = 0; i < ts->ran_n; i++)
		if (ts->ran[i] == t)
			return 1;
	return 0;
}

/* The main queue's state words, and its excluded timers: exactly the
 * restart marks, only in a pass. */
static const char *check_main(const struct hrt_tset *ts)
{
	const uintptr_t me = (uintptr_t)ts;
	const struct hrt_rb_node *n;
	unsigned excluded = 0, i;

	for (n = ts->queue.leftmost; n; n = hrt__rb_next(n)) {
		const struct hrt_timer *t = hrt__queue_timer(n);

		if (hrt__tset_state(t) != (me | HRT_TS_QUEUED))
			return "queued timer with a wrong state word";
		if (!hrt__queue_is_excluded(t))
			continue;
		if (!marked(ts, t))
			return "an excluded timer in the main queue is not among the restart marks";
		excluded++;
	}
	if (excluded != ts->ran_n || (ts->ran_n && !ts->in_pass))
		return "excluded timers in the main queue not the re-queued ones";
	for (i = 0; i < ts->ran_n; i++)
		if (hrt__tset_state(ts->ran[i]) != (me | HRT_TS_QUEUED) ||
		    !hrt__queue_is_excluded(ts->ran[i]))
			return "a re-queued timer is not excluded in the main queue";
	return NULL;
}

/* What a wheel timer's words must say: its state word, and a pass number
 * no later than the set's (ran_pass <= pass_id).  `why` names which. */
struct wheel_rules {
	const struct hrt_tset *ts;
	const char **why;
};

static int wheel_timer_bad(const struct hrt_timer *t, const void *ctx)
{
	const struct wheel_rules *r = ctx;
	int parked = hrt__wheel_key_of(t) == HRT_WHEEL_PARK;

	if (hrt__tset_state(t) != ((uintptr_t)r->ts | HRT_TS_QUEUED | HRT_TS_WHEEL))
		*r->why = "wheel timer with a wrong state word";
	else if (t->hrt__ran_pass > r->ts->pass_id)
		*r->why = "wheel timer ran in a pass after the set's current one";
	else if (parked && !hrt__tset_ran(r->ts, t))
		*r->why = "parked timer did not run in the current pass";
	else if (!parked && hrt__tset_ran(r->ts, t))
		*r->why = "wheel slot holds a timer that ran in the current pass";
	else
		return 0;
	return 1;
}

/* The rules of the table in timerset.h that the set can see. */
const char *hrt__tset_check(const struct hrt_tset *ts)
{
	const char *why = NULL, *err_wheel;
	struct wheel_rules rules = { ts, &why };
	const struct hrt_rb_node *n;
	int err;

	if (ts->ran_n > HRT_TSET_RAN_MAX)
		return "more restart marks than ran[] holds";
	if (ts->in_pass && !ts->pass_id)
		return "a pass numbered 0";
	if (ts->in_pass != !ts->wheel.seq_fast)
		return "the wheel's fast re-arm open in a pass, or shut outside one";
	if ((err = hrt__queue_check(&ts->queue)) || (err = hrt__queue_check(&ts->pend)))
		return hrt__rb_strerror(err);
	if ((why = check_main(ts)))
		return why;
	for (n = ts->pend.leftmost; n; n = hrt__rb_next(n))
		if (hrt__tset_state(hrt__queue_timer(n)) !=
		    ((uintptr_t)ts | HRT_TS_QUEUED | HRT_TS_PENDING))
			return "pending timer with a wrong state word";
	if (!ts->in_pass && ts->pend.count)
		return "pending timers outside a pass";
	err_wheel = hrt__wheel_check(&ts->wheel, wheel_timer_bad, &rules);
	return why ? why : err_wheel;
}

void hrt__tset_get_stats(const struct hrt_tset *ts, struct hrt_stats *out)
{
	out->tree_ops += ts->tree_ops;
	out->wheel_moves += ts->wheel_moves;
	out->wheel_cascades += ts->wheel.cascades;
	out->wheel_scanned += ts->wheel.scanned;
}

void hrt__tset_reset_stats(struct hrt_tset *ts)
{
	ts->tree_ops = 0;
	ts->wheel_moves = 0;
	ts->wheel.cascades = 0;
	ts->wheel.scanned = 0;
}
