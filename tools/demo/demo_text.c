/* SPDX-License-Identifier: MIT */
/*
 * demo_text.c - the text of 'hrt demo': the timers, the augmented tree,
 * the pass at 10 us under each scenario with where its searches pruned,
 * and the wake-ups with C kept and cancelled; --brief keeps the lines
 * that make the article's point.
 */
#include <stdio.h>

#include "demo.h"

static void print_subtree(const struct demo_result *r, const struct demo_tree *tr, int timer,
			  const char *prefix, const char *branch, int last)
{
	const struct demo_node *n = demo_tree_node(tr, timer);
	char sub[64];

	if (!n)
		return;
	printf("%s%s%c  hard %4.1f  soft %4.1f  min %4.1f  %s\n", prefix, branch,
	       demo_name[timer], demo_us(r->hard[timer]), demo_us(r->soft[timer]),
	       demo_us(n->subtree_soft), n->red ? "red" : "black");
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
	const struct demo_node *n = demo_tree_node(&r->before, timer);

	if (!n)
		return;
	if (n->subtree_soft > now) {
		printf("%s%c (min %.1f)", *any ? ", " : " ", demo_name[timer], demo_us(n->subtree_soft));
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
			       j + 1, demo_name[q->pruned[0]], demo_us(q->pruned_min[0]));
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
			       demo_us(q->pruned_min[k]));
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
		printf(" %.1f(", demo_us(w->at[i]));
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

void demo_print(const struct demo_result *r)
{
	int any = 0;

	printf("hrt demo: the article's seven range timers (times in us)\n\n");
	printf("  timer  soft  hard\n");
	for (int i = 0; i < DEMO_NT; i++)
		printf("  %c     %4.1f%s %4.1f\n", demo_name[i], demo_us(r->soft[i]),
		       demo_reconstructed(i) ? "*" : " ", demo_us(r->hard[i]));
	printf("  the article states A [5, 10], B [7.5, 20], D [7.5, 40] and hard expiries\n"
	       "  every 10 us; * soft expiries reconstructed to give its tree and prune\n");
	printf("  started in the order");
	for (int i = 0; i < DEMO_NT; i++)
		printf(" %c", demo_name[demo_insert_order[i]]);
	printf(" (gives the article's tree)\n\n");
	printf("augmented tree (key hard expiry; min = earliest soft expiry in the subtree):\n");
	print_subtree(r, &r->before, r->before.root, "  ", "", 1);
	printf("\nat %.1f us the subtrees with no due timer are", demo_us(r->now));
	print_static_prune(r, r->before.root, r->now, &any);
	printf(":\na greedy search never enters them.\n\n");
	printf("pass at %.1f us:\n", demo_us(r->now));
	for (int s = 0; s < DEMO_NS; s++)
		print_pass(r, s);
	print_pictured(r);
	printf("\nwake-ups (device fires at hrt_base_next_event until empty), C kept:\n");
	for (int s = 0; s < DEMO_NS; s++)
		print_wakeups(r, &r->kept[s], s);
	printf("\nC cancelled right after the pass at %.1f us:\n", demo_us(r->now));
	for (int s = 0; s < DEMO_NS; s++)
		print_wakeups(r, &r->cancelled[s], s);
	printf("\n");
}

void demo_print_brief(const struct demo_result *r)
{
	printf(" ");
	for (int i = 0; i < DEMO_NT; i++)
		printf(" %c %g-%g", demo_name[i], demo_us(r->soft[i]), demo_us(r->hard[i]));
	printf(" us (soft-hard)\n  C cancelled right after the pass at %.1f us:\n",
	       demo_us(r->now));
	for (int s = 0; s < DEMO_NS; s++)
		if (r->sc[s].policy != HRT_GREEDY_IDLE)
			print_wakeups(r, &r->cancelled[s], s);
}
