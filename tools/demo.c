/* SPDX-License-Identifier: MIT */
/*
 * demo.c - 'hrt demo': the LWN article's seven range timers A..G.
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
#include <limits.h>
#include <spawn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmds.h"
#include "demo.h"
#include "outfile.h"
#include "svg.h"

extern char **environ;

#define US 1000                 /* ns per microsecond */
const char demo_name[DEMO_NT] = { 'A', 'B', 'C', 'D', 'E', 'F', 'G' };

/* The article fixes hard = 10, 20, ... 70 us, A's soft 5 us, B's and D's
 * 7.5 us.  C's soft (25 us) lies after 10 us so the stock pass stops at C;
 * E, F, G (35, 42.5, 45 us) keep F's subtree 25 us or more in the future at
 * 10 us, so a search prunes there, as in the article. */
static const hrt_time_t soft_ns[DEMO_NT] = {
	5000, 7500, 25000, 7500, 35000, 42500, 45000
};
/* The soft expiries the article does not state (C, E, F, G), marked '*'. */
static int reconstructed(int i)
{
	return i == 2 || i >= 4;
}
/* Insertion order that yields the article's tree: D at the root, B and F
 * below it, A C E G as leaves. */
static const int insert_order[DEMO_NT] = { 3, 1, 5, 0, 2, 4, 6 };
#define DEMO_NOW (10 * US)

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

static const struct demo_node *tree_node(const struct demo_tree *tr, int timer)
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
	const struct demo_node *n = tree_node(tr, tr->root);

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
		const struct demo_node *l = n->left >= 0 ? tree_node(tr, n->left) : NULL;

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
		n = n->right >= 0 ? tree_node(tr, n->right) : NULL;
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
	c->base = hrt_base_new(HRT_CLOCK_VIRTUAL);
	if (!c->base) {
		err = -errno;
		goto out_free;
	}
	if ((err = hrt_base_set_greedy(c->base, sc->policy)))
		goto out_base;
	for (int i = 0; i < DEMO_NT; i++) {
		int k = insert_order[i];

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
		hrt_base_get_stats(c->base, &s0);
		hrt_base_run(c->base, t, sc->idle);
		hrt_base_get_stats(c->base, &s1);
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
		t = hrt_base_next_event(c->base);
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
		r->hard[i] = (hrt_time_t)(i + 1) * 10 * US;
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

/* Printing ---------------------------------------------------------------- */

static double us(hrt_time_t t)
{
	return (double)t / US;
}

static void print_subtree(const struct demo_result *r, const struct demo_tree *tr, int timer,
			  const char *prefix, const char *branch, int last)
{
	const struct demo_node *n = tree_node(tr, timer);
	char sub[64];

	if (!n)
		return;
	printf("%s%s%c  hard %4.1f  soft %4.1f  min %4.1f  %s\n", prefix, branch,
	       demo_name[timer], us(r->hard[timer]), us(r->soft[timer]),
	       us(n->subtree_soft), n->red ? "red" : "black");
	snprintf(sub, sizeof(sub), "%s%s", prefix, *branch ? (last ? "    " : "|   ") : "");
	if (n->left >= 0)
		print_subtree(r, tr, n->left, sub, n->right >= 0 ? "|-- " : "`-- ", n->right < 0);
	if (n->right >= 0)
		print_subtree(r, tr, n->right, sub, "`-- ", 1);
}

static void print_names(const int *idx, int n)
{
	if (!n)
		printf("-");
	for (int i = 0; i < n; i++)
		printf("%s%c", i ? "," : "", demo_name[idx[i]]);
}

/* Maximal subtrees with no due timer: where any greedy search stops. */
static void print_static_prune(const struct demo_result *r, int timer, hrt_time_t now, int *any)
{
	const struct demo_node *n = tree_node(&r->before, timer);

	if (!n)
		return;
	if (n->subtree_soft > now) {
		printf("%s%c (min %.1f)", *any ? ", " : " ", demo_name[timer], us(n->subtree_soft));
		*any = 1;
		return;
	}
	if (n->left >= 0)
		print_static_prune(r, n->left, now, any);
	if (n->right >= 0)
		print_static_prune(r, n->right, now, any);
}

static void print_pass(const struct demo_result *r, int s)
{
	const struct demo_pass *p = &r->pass[s];

	printf("  %-15s ran ", r->sc[s].name);
	print_names(p->ran, p->nran);
	printf("%*s greedy %d, nodes visited %llu\n", 8 - 2 * p->nran, "",
	       (int)p->st.expired_greedy, (unsigned long long)p->st.nodes_visited);
	if (!p->st.greedy_walks) {
		printf("      no greedy walk (%s)\n", r->sc[s].policy == HRT_GREEDY_OFF ?
		       "policy off" : "policy idle, CPU busy");
		return;
	}
	for (int j = 0; j < p->nsearch; j++) {
		const struct demo_search *q = &p->search[j];

		if (!q->npath && q->npruned) {
			printf("      search %d: root %c has min %.1f > now: nothing due, stops\n",
			       j + 1, demo_name[q->pruned[0]], us(q->pruned_min[0]));
			continue;
		}
		printf("      search %d: visits ", j + 1);
		print_names(q->path, q->npath);
		if (q->found >= 0)
			printf(", finds %c", demo_name[q->found]);
		else
			printf(", finds nothing");
		for (int k = 0; k < q->npruned; k++)
			printf("%s%c (min %.1f)", k ? ", " : "; pruned at ", demo_name[q->pruned[k]],
			       us(q->pruned_min[k]));
		printf("\n");
	}
	printf("      derived visits %llu %s stats.nodes_visited %llu\n",
	       (unsigned long long)p->derived_visits,
	       p->derived_visits == p->st.nodes_visited ? "==" : "!=",
	       (unsigned long long)p->st.nodes_visited);
}

static void print_wakeups(const struct demo_result *r, const struct demo_wakeups *w, int s)
{
	printf("  %-15s %d wake-ups:", r->sc[s].name, w->n);
	for (int i = 0; i < w->n; i++) {
		printf(" %.1f(", us(w->at[i]));
		print_names(w->ran[i], w->nran[i]);
		printf(")");
	}
	printf("\n");
}

/* The tree the picture draws, so text and picture show the same tree. */
static void print_pictured(const struct demo_result *r)
{
	int s, j;
	const struct demo_search *q = demo_pictured(r, &s, &j);

	if (!q)
		return;
	printf("\nsearch %d under %s ran on this tree (after ", j + 1, r->sc[s].name);
	print_names(r->pass[s].ran, q->nran_before);
	printf(" ran; demo-tree.dot draws it):\n");
	print_subtree(r, &q->tree, q->tree.root, "  ", "", 1);
}

static void print_result(const struct demo_result *r)
{
	int any = 0;

	printf("hrt demo: the article's seven range timers (times in us)\n\n");
	printf("  timer  soft  hard\n");
	for (int i = 0; i < DEMO_NT; i++)
		printf("  %c     %4.1f%s %4.1f\n", demo_name[i], us(r->soft[i]),
		       reconstructed(i) ? "*" : " ", us(r->hard[i]));
	printf("  the article states A [5, 10], B [7.5, 20], D [7.5, 40] and hard expiries\n"
	       "  every 10 us; * soft expiries reconstructed to give its tree and prune\n");
	printf("  started in the order");
	for (int i = 0; i < DEMO_NT; i++)
		printf(" %c", demo_name[insert_order[i]]);
	printf(" (gives the article's tree)\n\n");
	printf("augmented tree (key hard expiry; min = earliest soft expiry in the subtree):\n");
	print_subtree(r, &r->before, r->before.root, "  ", "", 1);
	printf("\nat %.1f us the subtrees with no due timer are", us(r->now));
	print_static_prune(r, r->before.root, r->now, &any);
	printf(":\na greedy search never enters them.\n\n");
	printf("pass at %.1f us:\n", us(r->now));
	for (int s = 0; s < DEMO_NS; s++)
		print_pass(r, s);
	print_pictured(r);
	printf("\nwake-ups (device fires at hrt_base_next_event until empty), C kept:\n");
	for (int s = 0; s < DEMO_NS; s++)
		print_wakeups(r, &r->kept[s], s);
	printf("\nC cancelled right after the pass at %.1f us:\n", us(r->now));
	for (int s = 0; s < DEMO_NS; s++)
		print_wakeups(r, &r->cancelled[s], s);
	printf("\n");
}

/* Files ------------------------------------------------------------------- */

#define TL_LEFT 190.0           /* x of time 0 */
#define TL_SCALE 8.8            /* px per us */
#define TL_ROW 16.0
#define TL_PANEL (30.0 + DEMO_NT * TL_ROW + 14.0)
#define TL_TOP 56.0
#define TL_TMAX 75

static double tl_x(hrt_time_t t)
{
	return TL_LEFT + us(t) * TL_SCALE;
}

static void timeline_panel(FILE *f, const struct demo_result *r, int s, double y0)
{
	const struct demo_wakeups *w = &r->cancelled[s];
	double top = y0 + 26, bottom = y0 + 26 + DEMO_NT * TL_ROW;
	char buf[160];
	int len;

	len = snprintf(buf, sizeof(buf), "%s: %d wake-ups at", r->sc[s].name, w->n);
	for (int i = 0; i < w->n && len < (int)sizeof(buf) - 12; i++)
		len += snprintf(buf + len, sizeof(buf) - (size_t)len, "%s %.1f",
				i ? "," : "", us(w->at[i]));
	snprintf(buf + len, sizeof(buf) - (size_t)len, " \xc2\xb5s");
	svg_text(f, 10, y0 + 16, 14, "start", "#111", buf);
	for (int t = 0; t <= TL_TMAX; t += 10)
		svg_line(f, tl_x(t * US), top, tl_x(t * US), bottom, "#ddd", 1, NULL);
	for (int i = 0; i < DEMO_NT; i++) {
		double y = top + i * TL_ROW;
		int cancelled = i == 2;

		snprintf(buf, sizeof(buf), "%c [%.1f%s, %.1f]%s", demo_name[i], us(r->soft[i]),
			 reconstructed(i) ? "*" : "", us(r->hard[i]), cancelled ? " cancelled" : "");
		svg_text(f, TL_LEFT - 8, y + 12, 12, "end", cancelled ? "#888" : "#111", buf);
		svg_rect(f, tl_x(r->soft[i]), y + 3, tl_x(r->hard[i]) - tl_x(r->soft[i]),
			 TL_ROW - 6, cancelled ? "#eeeeee" : "#9ecae1",
			 cancelled ? "#999999" : "#4292c6");
		if (w->ran_at[i] >= 0)
			svg_circle(f, tl_x(w->ran_at[i]), y + TL_ROW / 2, 4, "#08306b");
	}
	for (int i = 0; i < w->n; i++)
		svg_line(f, tl_x(w->at[i]), top - 4, tl_x(w->at[i]), bottom + 2, "#d62728", 2, NULL);
}

static int write_timeline(const struct demo_result *r, const char *dir)
{
	double h = TL_TOP + DEMO_NS * TL_PANEL + 40;
	char buf[64];
	struct outfile o;
	FILE *f;

	if (outfile_open_in(&o, dir, "demo-timeline.svg")) {
		outfile_report(&o, "demo");
		return -1;
	}
	f = o.f;
	svg_begin(f, TL_LEFT + TL_TMAX * TL_SCALE + 40, h, "hrt demo: timers A-G, C cancelled");
	svg_text(f, 10, 22, 16, "start", "#111",
		 "Timers A\xe2\x80\x93G (bar: soft to hard expiry), C cancelled after the pass at 10 \xc2\xb5s");
	svg_text(f, 10, 42, 12, "start", "#444",
		 "red line: a wake-up (device fires at the earliest hard expiry); dot: when the timer "
		 "ran; * soft expiry reconstructed (not in the article)");
	for (int s = 0; s < DEMO_NS; s++)
		timeline_panel(f, r, s, TL_TOP + s * TL_PANEL);
	for (int t = 0; t <= TL_TMAX; t += 10) {
		snprintf(buf, sizeof(buf), "%d \xc2\xb5s", t);
		svg_text(f, tl_x(t * US), h - 20, 11, "middle", "#444", buf);
	}
	svg_end(f);
	if (outfile_commit(&o)) {
		outfile_report(&o, "demo");
		return -1;
	}
	printf("wrote %s\n", outfile_path(&o));
	return 0;
}

const struct demo_search *demo_pictured(const struct demo_result *r, int *scenario, int *search)
{
	for (int s = 0; s < DEMO_NS; s++)
		for (int j = 0; j < r->pass[s].nsearch; j++)
			if (r->pass[s].search[j].found >= 0) {
				*scenario = s;
				*search = j;
				return &r->pass[s].search[j];
			}
	return NULL;
}

static int in_list(const int *list, int n, int timer)
{
	for (int i = 0; i < n; i++)
		if (list[i] == timer)
			return 1;
	return 0;
}

/* Node classes (path, found, pruned) come from the search itself, so the
 * picture shows what the printed search did; tests read them back. */
static void dot_node(FILE *f, const struct demo_result *r, const struct demo_search *q,
		     const struct demo_node *n)
{
	int i = n->timer, due = r->soft[i] <= r->now;
	int path = in_list(q->path, q->npath, i), found = q->found == i;
	int pruned = in_list(q->pruned, q->npruned, i);
	const char *cls = found ? "path found" : path ? "path" : pruned ? "pruned" : "";

	fprintf(f, "  %c [label=\"%c\\nhard %.1f \xc2\xb5s  soft %.1f%s \xc2\xb5s\\n"
		   "subtree min soft %.1f \xc2\xb5s%s%s\", fillcolor=\"%s\"",
		demo_name[i], demo_name[i], us(r->hard[i]), us(r->soft[i]),
		reconstructed(i) ? "*" : "", us(n->subtree_soft),
		found ? "\\nthe search finds it" : path ? "\\nthe search visits it" : "",
		pruned ? "\\nmin > now: the search prunes here" : "",
		n->red ? "#c0392b" : "#222222");
	if (*cls)
		fprintf(f, ", class=\"%s\"", cls);
	if (path)
		fprintf(f, ", color=\"#ff7f0e\", penwidth=5");
	else if (pruned)
		fprintf(f, ", style=\"filled,dashed\", color=\"#1f77b4\", penwidth=3");
	else if (due)
		fprintf(f, ", color=\"#2ca02c\", penwidth=4");
	fprintf(f, "];\n");
}

static void dot_edge(FILE *f, const struct demo_search *q, int from, int to, const char *side)
{
	int on_path = 0;

	for (int k = 0; k + 1 < q->npath; k++)
		on_path |= q->path[k] == from && q->path[k + 1] == to;
	fprintf(f, "  %c -> %c [label=\"%s\"%s];\n", demo_name[from], demo_name[to], side,
		on_path ? ", class=\"path\", color=\"#ff7f0e\", penwidth=5" : "");
}

int demo_write_dot(FILE *f, const struct demo_result *r)
{
	int s, j;
	const struct demo_search *q = demo_pictured(r, &s, &j);
	const struct demo_tree *tr;
	char ran[3 * DEMO_NT + 1] = "";
	int other_due = 0;

	if (!q)
		return -1;
	tr = &q->tree;
	for (int k = 0; k < tr->n; k++)
		other_due |= r->soft[tr->node[k].timer] <= r->now &&
			     !in_list(q->path, q->npath, tr->node[k].timer);
	for (int k = 0; k < q->nran_before; k++)
		snprintf(ran + strlen(ran), sizeof(ran) - strlen(ran), "%s%c", k ? ", " : "",
			 demo_name[r->pass[s].ran[k]]);
	fprintf(f, "// hrt demo: the augmented tree greedy search %d of the pass at %.1f us\n"
		   "// (policy %s) ran on, as dumped by hrt_base_walk_tree\n"
		   "digraph hrt_tree {\n"
		   "  label=\"The tree greedy search %d of the pass at %.0f \xc2\xb5s (policy %s) runs on, "
		   "after %s ran.\\n"
		   "Key: hard expiry; augmented value: earliest soft expiry in the subtree; "
		   "* soft expiry reconstructed (not in the article).\\n"
		   "Orange: the search's path to %c. Dashed blue: subtree it prunes (min soft > now).%s\";\n"
		   "  labelloc=b; fontname=\"sans-serif\";\n"
		   "  node [shape=box, style=filled, fontname=\"sans-serif\", fontcolor=white];\n"
		   "  edge [arrowhead=none];\n",
		j + 1, us(r->now), r->sc[s].name, j + 1, us(r->now), r->sc[s].name,
		*ran ? ran : "nothing", demo_name[q->found],
		other_due ? " Green border: another timer due (soft <= now)." : "");
	for (int k = 0; k < tr->n; k++)
		dot_node(f, r, q, &tr->node[k]);
	for (int k = 0; k < tr->n; k++) {
		const struct demo_node *n = &tr->node[k];

		if (n->left >= 0)
			dot_edge(f, q, n->timer, n->left, "L");
		if (n->right >= 0)
			dot_edge(f, q, n->timer, n->right, "R");
	}
	fprintf(f, "}\n");
	return ferror(f) ? -1 : 0;
}

/* The tree as Graphviz source into dir; its path in dotpath[len]. */
static int write_dot(const struct demo_result *r, const char *dir, char *dotpath, size_t len)
{
	struct outfile o;

	if (outfile_open_in(&o, dir, "demo-tree.dot")) {
		outfile_report(&o, "demo");
		return -1;
	}
	demo_write_dot(o.f, r);
	if (outfile_commit(&o)) {
		outfile_report(&o, "demo");
		return -1;
	}
	snprintf(dotpath, len, "%s", outfile_path(&o));
	printf("wrote %s\n", dotpath);
	return 0;
}

/* Renders dot's SVG through the same output path as every other file
 * (dot writes to our stdout-less descriptor, so a FIFO or a device at the
 * path is written through and a regular file replaced only when dot
 * succeeds); a missing Graphviz is a note, not an error. */
static int render_dot(const char *dir, const char *dotpath)
{
	char *argv[] = { "dot", "-Tsvg", (char *)dotpath, NULL };
	posix_spawn_file_actions_t fa;
	struct outfile o;
	pid_t pid;
	int st, err;

	if (outfile_open_in(&o, dir, "demo-tree.svg")) {
		outfile_report(&o, "demo");
		return -1;
	}
	fflush(o.f);
	if ((err = posix_spawn_file_actions_init(&fa)) ||
	    (err = posix_spawn_file_actions_adddup2(&fa, outfile_fd(&o), STDOUT_FILENO))) {
		outfile_abort(&o);
		fprintf(stderr, "hrt demo: %s\n", strerror(err));
		return -1;
	}
	err = posix_spawnp(&pid, "dot", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (err) {
		outfile_abort(&o);
		printf("Graphviz dot not found (%s): demo-tree.svg not rendered\n", strerror(err));
		return 0;
	}
	if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
		outfile_abort(&o);
		fprintf(stderr, "hrt demo: dot failed to render %s\n", outfile_path(&o));
		return -1;
	}
	if (outfile_commit(&o)) {
		outfile_report(&o, "demo");
		return -1;
	}
	printf("wrote %s (Graphviz dot)\n", outfile_path(&o));
	return 0;
}

int demo_write_files(const struct demo_result *r, const char *dir)
{
	char dotpath[PATH_MAX];

	if (dir && mkdir(dir, 0777) && errno != EEXIST) {
		fprintf(stderr, "hrt demo: cannot create %s: %s\n", dir, strerror(errno));
		return -1;
	}
	if (write_timeline(r, dir) || write_dot(r, dir, dotpath, sizeof(dotpath)))
		return -1;
	return render_dot(dir, dotpath);
}

/* Command ----------------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: hrt demo [--out DIR] [--no-files]\n\n"
		"The LWN article's seven range timers A-G (hard expiry 10, 20, ... 70 us).\n"
		"Prints the augmented tree (hard expiry, subtree minimum soft expiry,\n"
		"colour), the expiry pass at 10 us under policy off, idle (CPU busy and\n"
		"CPU idle) and always - which timers ran, nodes the greedy search visited,\n"
		"where it pruned - and the wake-ups that follow, with C kept and with C\n"
		"cancelled after the first pass.\n\n"
		"  --out DIR    write demo-timeline.svg, demo-tree.dot and (with Graphviz\n"
		"               dot installed) demo-tree.svg into DIR (default: .)\n"
		"  --no-files   print only, write no files\n"
		"  -h, --help   this text\n");
}

int hrt_cmd_demo(int argc, char **argv)
{
	struct demo_result *r;
	const char *dir = NULL;
	int files = 1, err;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(argv[i], "--out") && i + 1 < argc) {
			dir = argv[++i];
		} else if (!strncmp(argv[i], "--out=", 6)) {
			dir = argv[i] + 6;
		} else if (!strcmp(argv[i], "--no-files")) {
			files = 0;
		} else {
			fprintf(stderr, "hrt demo: %s '%s'\n", !strcmp(argv[i], "--out") ?
				"option needs an argument:" : "unknown option", argv[i]);
			usage(stderr);
			return 2;
		}
	}
	if (dir && !*dir) {
		fprintf(stderr, "hrt demo: --out needs a directory\n");
		return 2;
	}
	r = malloc(sizeof(*r));
	if (!r) {
		fprintf(stderr, "hrt demo: out of memory\n");
		return 1;
	}
	err = demo_run(r);
	if (err) {
		fprintf(stderr, "hrt demo: libhrt failed: %s\n", strerror(-err));
		free(r);
		return 1;
	}
	print_result(r);
	err = files ? demo_write_files(r, dir) : 0;
	free(r);
	return err ? 1 : 0;
}
