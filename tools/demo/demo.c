/* SPDX-License-Identifier: MIT */
/*
 * demo.c - 'hrt demo': the LWN article's seven range timers A..G, the
 * model (demo_text.c prints it, demo_svg.c draws it, cmd_demo.c is the
 * command).
 *
 * Everything runs through libhrt's public API on virtual-clock bases: the
 * augmented tree comes from hrt_base_walk_tree, the passes from
 * hrt_base_run, the wake-ups from firing at hrt_base_next_event until the
 * base is empty.  Where a greedy search pruned is derived from the tree as
 * dumped right before that search (a snapshot taken in the callback that
 * precedes it), and checked against the library's nodes_visited counter.
 * The tree picture draws the tree of the first search that finds a timer,
 * with that search's path and prunes, so picture and text cannot disagree.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "demo.h"

const char demo_name[DEMO_NT] = { 'A', 'B', 'C', 'D', 'E', 'F', 'G' };

/* The article fixes hard = 10, 20, ... 70 us, A's soft 5 us, B's and D's
 * 7.5 us.  C's soft (25 us) lies after 10 us so the stock pass stops at C;
 * E, F, G (35, 42.5, 45 us) keep F's subtree 25 us or more in the future at
 * 10 us, so a search prunes there, as in the article. */
static const hrt_time_t soft_ns[DEMO_NT] = {
	5000, 7500, 25000, 7500, 35000, 42500, 45000
};
int demo_reconstructed(int i)
{
	return i == 2 || i >= 4;
}
/* D at the root, B and F below it, A C E G as leaves: the article's tree. */
const int demo_insert_order[DEMO_NT] = { 3, 1, 5, 0, 2, 4, 6 };
#define DEMO_NOW (10 * DEMO_US)

struct demo_ctx;
struct demo_timer {
	struct hrt_timer t;
	int idx;
	struct demo_ctx *ctx;
};

struct demo_ctx {
	struct hrt_base *base;
	struct demo_timer tm[DEMO_NT];
	int log[DEMO_NT], nlog;         /* timers run in the current pass */
	int snap;                       /* snapshot the tree in callbacks */
	struct demo_tree snaps[DEMO_NT];        /* after callback i */
	hrt_time_t ran_at[DEMO_NT];
};

static void snap_fn(const struct hrt_tree_node *n, void *arg)
{
	struct demo_tree *tr = arg;
	struct demo_node *d = &tr->node[tr->n++];

	d->timer = HRT_CONTAINER_OF(n->timer, struct demo_timer, t)->idx;
	d->left = n->left ? HRT_CONTAINER_OF(n->left, struct demo_timer, t)->idx : -1;
	d->right = n->right ? HRT_CONTAINER_OF(n->right, struct demo_timer, t)->idx : -1;
	d->depth = n->depth;
	d->red = n->red;
	d->subtree_soft = n->subtree_soft;
	if (n->depth == 0)
		tr->root = d->timer;
}

static void snapshot(struct hrt_base *b, struct demo_tree *tr)
{
	memset(tr, 0, sizeof(*tr));
	tr->root = -1;
	hrt_base_walk_tree(b, snap_fn, tr);
}

static enum hrt_restart demo_cb(struct hrt_timer *t, hrt_time_t now)
{
	struct demo_timer *dt = HRT_CONTAINER_OF(t, struct demo_timer, t);
	struct demo_ctx *c = dt->ctx;

	if (c->nlog < DEMO_NT) {
		/* The callback runs with the base unlocked and the timer
		 * already dequeued: this is the tree the next search sees. */
		if (c->snap)
			snapshot(c->base, &c->snaps[c->nlog]);
		c->log[c->nlog++] = dt->idx;
	}
	c->ran_at[dt->idx] = now;
	return HRT_NORESTART;
}

const struct demo_node *demo_tree_node(const struct demo_tree *tr, int timer)
{
	for (int i = 0; i < tr->n; i++)
		if (tr->node[i].timer == timer)
			return &tr->node[i];
	return NULL;
}

/*
 * The greedy search for the first due timer in hard order, replayed on a
 * snapshot: prefer the left subtree if its minimum soft expiry is due, else
 * the node itself, else the right subtree.  A subtree whose minimum is in
 * the future is pruned - never entered.
 */
static void derive_search(const struct demo_tree *tr, hrt_time_t now, struct demo_search *s)
{
	const struct demo_node *n = demo_tree_node(tr, tr->root);

	memset(s, 0, sizeof(*s));
	s->tree = *tr;
	s->found = -1;
	if (!n)
		return;
	if (n->subtree_soft > now) {
		s->pruned_min[s->npruned] = n->subtree_soft;
		s->pruned[s->npruned++] = n->timer;
		return;
	}
	while (n && s->npath < DEMO_NT) {
		const struct demo_node *l = n->left >= 0 ? demo_tree_node(tr, n->left) : NULL;

		s->path[s->npath++] = n->timer;
		if (l && l->subtree_soft <= now) {
			n = l;
			continue;
		}
		if (l) {
			s->pruned_min[s->npruned] = l->subtree_soft;
			s->pruned[s->npruned++] = l->timer;
		}
		if (soft_ns[n->timer] <= now) {
			s->found = n->timer;
			return;
		}
		n = n->right >= 0 ? demo_tree_node(tr, n->right) : NULL;
	}
}

static void stats_delta(struct hrt_stats *d, const struct hrt_stats *a, const struct hrt_stats *b)
{
	d->passes = b->passes - a->passes;
	d->expired = b->expired - a->expired;
	d->expired_greedy = b->expired_greedy - a->expired_greedy;
	d->greedy_walks = b->greedy_walks - a->greedy_walks;
	d->nodes_visited = b->nodes_visited - a->nodes_visited;
}

static void fill_pass(const struct demo_ctx *c, const struct demo_tree *before,
		      const struct hrt_stats *d, struct demo_pass *p)
{
	memcpy(p->ran, c->log, sizeof(p->ran));
	p->nran = c->nlog;
	p->st = *d;
	p->nleftmost = c->nlog - (int)d->expired_greedy;
	p->nsearch = 0;
	p->derived_visits = 0;
	if (!d->greedy_walks)
		return;
	/* Search j follows callback nleftmost-1+j (or starts the greedy walk
	 * on the untouched tree if the leftmost run ran nothing). */
	for (int j = 0; j <= (int)d->expired_greedy && j < DEMO_MAXSEARCH; j++) {
		int k = p->nleftmost - 1 + j;
		const struct demo_tree *tr = k >= 0 ? &c->snaps[k] : before;

		derive_search(tr, DEMO_NOW, &p->search[j]);
		p->search[j].nran_before = k + 1;
		p->derived_visits += (uint64_t)p->search[j].npath;
		p->nsearch++;
	}
}

/* One scenario: tree, pass at 10 us, optional cancel of C, then wake-ups. */
static int run_scenario(struct demo_result *r, const struct demo_scenario *sc, int cancel,
			struct demo_wakeups *w, struct demo_pass *p)
{
	struct demo_ctx *c = calloc(1, sizeof(*c));
	struct demo_tree before;
	struct hrt_stats s0, s1, d;
	hrt_time_t t = DEMO_NOW;
	int err = 0;

	if (!c)
		return -ENOMEM;
	err = hrt_base_new(&c->base, CLOCK_MONOTONIC, HRT_BASE_VIRTUAL);
	if (err)
		goto out_free;
	if ((err = hrt_base_set_greedy(c->base, sc->policy)))
		goto out_base;
	for (int i = 0; i < DEMO_NT; i++) {
		int k = demo_insert_order[i];

		c->tm[k].idx = k;
		c->tm[k].ctx = c;
		c->ran_at[k] = -1;
		hrt_timer_init(&c->tm[k].t, demo_cb);
		err = hrt_timer_start_range(&c->tm[k].t, c->base, r->soft[k],
					    r->hard[k] - r->soft[k], HRT_MODE_ABS);
		if (err)
			goto out_base;
	}
	snapshot(c->base, &before);
	if (p)
		r->before = before;
	memset(w, 0, sizeof(*w));
	c->snap = p != NULL;
	while (t != HRT_TIME_MAX && w->n < DEMO_MAXW) {
		c->nlog = 0;
		hrt_base_get_stats(c->base, &s0, sizeof(s0));
		hrt_base_run(c->base, t, sc->idle);
		hrt_base_get_stats(c->base, &s1, sizeof(s1));
		w->at[w->n] = t;
		memcpy(w->ran[w->n], c->log, sizeof(c->log));
		w->nran[w->n] = c->nlog;
		if (w->n++ == 0) {
			if (p) {
				stats_delta(&d, &s0, &s1);
				fill_pass(c, &before, &d, p);
			}
			if (cancel)
				hrt_timer_cancel(&c->tm[2].t);
			c->snap = 0;
		}
		hrt_base_next_event(c->base, &t);
	}
	memcpy(w->ran_at, c->ran_at, sizeof(w->ran_at));
	if (hrt_base_check(c->base, NULL, 0) || hrt_base_count(c->base))
		err = -EUCLEAN;
out_base:
	for (int i = 0; i < DEMO_NT; i++)       /* free refuses queued timers */
		hrt_timer_cancel(&c->tm[i].t);
	hrt_base_free(c->base);
out_free:
	free(c);
	return err;
}

int demo_run(struct demo_result *r)
{
	static const struct demo_scenario sc[DEMO_NS] = {
		{ "off", HRT_GREEDY_OFF, 1 },
		{ "idle, CPU busy", HRT_GREEDY_IDLE, 0 },
		{ "idle, CPU idle", HRT_GREEDY_IDLE, 1 },
		{ "always", HRT_GREEDY_ALWAYS, 1 },
	};
	int err;

	memset(r, 0, sizeof(*r));
	r->now = DEMO_NOW;
	for (int i = 0; i < DEMO_NT; i++) {
		r->soft[i] = soft_ns[i];
		r->hard[i] = (hrt_time_t)(i + 1) * 10 * DEMO_US;
	}
	for (int s = 0; s < DEMO_NS; s++) {
		r->sc[s] = sc[s];
		if ((err = run_scenario(r, &sc[s], 0, &r->kept[s], &r->pass[s])))
			return err;
		if ((err = run_scenario(r, &sc[s], 1, &r->cancelled[s], NULL)))
			return err;
	}
	return 0;
}
