/* SPDX-License-Identifier: MIT */
/*
 * demo_svg.c - the pictures of 'hrt demo': demo-timeline.svg (each
 * scenario's windows, runs and wake-ups) and demo-tree.dot / demo-tree.svg
 * (the tree one greedy search ran on, its path and prunes).  Every file
 * goes through outfile.h, Graphviz's output too.
 */
#include <errno.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "demo.h"
#include "../common/outfile.h"
#include "../common/svg.h"

extern char **environ;

#define TL_LEFT 190.0           /* x of time 0 */
#define TL_SCALE 8.8            /* px per us */
#define TL_ROW 16.0
#define TL_PANEL (30.0 + DEMO_NT * TL_ROW + 14.0)
#define TL_TOP 56.0
#define TL_TMAX 75

static double tl_x(hrt_time_t t)
{
	return TL_LEFT + demo_us(t) * TL_SCALE;
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
				i ? "," : "", demo_us(w->at[i]));
	snprintf(buf + len, sizeof(buf) - (size_t)len, " \xc2\xb5s");
	svg_text(f, 10, y0 + 16, 14, "start", "#111", buf);
	for (int t = 0; t <= TL_TMAX; t += 10)
		svg_line(f, tl_x(t * DEMO_US), top, tl_x(t * DEMO_US), bottom, "#ddd", 1, NULL);
	for (int i = 0; i < DEMO_NT; i++) {
		double y = top + i * TL_ROW;
		int cancelled = i == 2;

		snprintf(buf, sizeof(buf), "%c [%.1f%s, %.1f]%s", demo_name[i], demo_us(r->soft[i]),
			 demo_reconstructed(i) ? "*" : "", demo_us(r->hard[i]), cancelled ? " cancelled" : "");
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
		svg_text(f, tl_x(t * DEMO_US), h - 20, 11, "middle", "#444", buf);
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
		demo_name[i], demo_name[i], demo_us(r->hard[i]), demo_us(r->soft[i]),
		demo_reconstructed(i) ? "*" : "", demo_us(n->subtree_soft),
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
		   "Black and red fill: each node's colour in the red-black tree (timers by hard "
		   "expiry).\\n"
		   "Orange: the search's path to %c. Dashed blue: subtree it prunes (min soft > now).%s\";\n"
		   "  labelloc=b; fontname=\"sans-serif\";\n"
		   "  node [shape=box, style=filled, fontname=\"sans-serif\", fontcolor=white];\n"
		   "  edge [arrowhead=none];\n",
		j + 1, demo_us(r->now), r->sc[s].name, j + 1, demo_us(r->now), r->sc[s].name,
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
