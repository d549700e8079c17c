/* SPDX-License-Identifier: MIT */
/*
 * demo.h - the article's seven timers as data, for 'hrt demo' and tests.
 *
 * demo_run() builds the tree on virtual bases, runs the pass at 10 us under
 * each scenario (policy and idle flag), then lets the device fire at
 * hrt_base_next_event() until the base is empty, once with C kept and once
 * with C cancelled right after the first pass.  It fills a result struct;
 * printing and file output are separate.  The tree picture draws the tree
 * one printed search ran on (demo_pictured), with its path and prunes.
 */
#ifndef HRT_TOOLS_DEMO_H
#define HRT_TOOLS_DEMO_H

#include <stdio.h>

#include "hrt.h"

#define DEMO_NT 7               /* timers A..G */
#define DEMO_NS 4               /* scenarios */
#define DEMO_MAXW 16            /* wake-ups recorded per run */
#define DEMO_MAXSEARCH 8        /* greedy searches recorded per pass */
#define DEMO_US 1000            /* ns per microsecond */

struct demo_node {              /* one node of a tree snapshot */
	int timer;              /* 0..6 = A..G */
	int left, right;        /* timer index of the children, -1 if none */
	int depth, red;
	hrt_time_t subtree_soft;
};

struct demo_tree {
	int n, root;            /* root: timer index, -1 if empty */
	struct demo_node node[DEMO_NT];         /* in key order */
};

/* One greedy search as derived from the tree it ran on. */
struct demo_search {
	struct demo_tree tree;          /* the tree it ran on */
	int nran_before;                /* timers of the pass run before it */
	int path[DEMO_NT], npath;       /* nodes visited, root first */
	int found;                      /* timer found, -1: none */
	int pruned[DEMO_NT], npruned;   /* subtrees skipped: min soft > now */
	hrt_time_t pruned_min[DEMO_NT]; /* their minimum soft expiry */
};

struct demo_pass {
	int ran[DEMO_NT], nran;         /* timers run, in order */
	int nleftmost;                  /* of those, by the leftmost run */
	struct hrt_stats st;            /* stats delta of the pass */
	struct demo_search search[DEMO_MAXSEARCH];
	int nsearch;
	uint64_t derived_visits;        /* sum of the searches' path lengths */
};

struct demo_wakeups {
	hrt_time_t at[DEMO_MAXW];
	int ran[DEMO_MAXW][DEMO_NT], nran[DEMO_MAXW];
	int n;                          /* wake-ups, the pass at 10 us included */
	hrt_time_t ran_at[DEMO_NT];     /* when each timer ran, -1: never */
};

struct demo_scenario {
	const char *name;
	enum hrt_greedy policy;
	int idle;
};

struct demo_result {
	hrt_time_t soft[DEMO_NT], hard[DEMO_NT];
	hrt_time_t now;                 /* time of the first pass */
	struct demo_tree before;        /* tree before the first pass */
	struct demo_scenario sc[DEMO_NS];
	struct demo_pass pass[DEMO_NS];
	struct demo_wakeups kept[DEMO_NS], cancelled[DEMO_NS];
};

extern const char demo_name[DEMO_NT];
static inline double demo_us(hrt_time_t t)
{
	return (double)t / DEMO_US;
}
/* The order the timers are started in (it gives the article's tree). */
extern const int demo_insert_order[DEMO_NT];
/* Whether timer i's soft expiry is ours, not the article's (C, E, F, G). */
int demo_reconstructed(int i);
/* Timer's node in a snapshot, NULL if it is not in the tree. */
const struct demo_node *demo_tree_node(const struct demo_tree *tr, int timer);
/* 0, or a negative errno from libhrt. */
int demo_run(struct demo_result *r);
/* The search the tree picture draws: the first one that finds a timer.
 * Sets *scenario and *search; NULL if no pass had one. */
const struct demo_search *demo_pictured(const struct demo_result *r, int *scenario, int *search);
/* The text on stdout: everything, or (brief) the timers and the wake-ups
 * with C cancelled under off and always - the article's point. */
void demo_print(const struct demo_result *r);
void demo_print_brief(const struct demo_result *r);
/* The Graphviz source of the tree picture.  0, or -1 on a write error. */
int demo_write_dot(FILE *f, const struct demo_result *r);
/* Writes demo-timeline.svg and demo-tree.dot into dir (NULL: current
 * directory) and renders demo-tree.svg if Graphviz dot is found.  0 or -1. */
int demo_write_files(const struct demo_result *r, const char *dir);

#endif
