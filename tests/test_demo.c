/* SPDX-License-Identifier: MIT */
/*
 * test_demo.c - 'hrt demo': the article's seven timers.
 *
 * demo_run() (tools/demo/demo.c) is checked against the article and against a
 * brute-force model of an expiry pass (linear scans over the seven timers):
 * which timers each pass runs, the wake-ups that follow with C kept and
 * cancelled, the dumped tree's order, colours and augmented values, the
 * greedy search's visit count.  Then the files it writes must be
 * well-formed, the tree picture must show the tree, path and prunes of the
 * search the command prints, and the command must reject bad options with
 * exit 2.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include "unit.h"

#include "hrt.h"
#include "../tools/cmd/cmds.h"
#include "../tools/demo/demo.h"
#include "../tools/common/svg.h"

static struct demo_result R;

static int setup(void **state)
{
	(void)state;
	return demo_run(&R);
}

static int ran(const int *list, int n, int timer)
{
	for (int i = 0; i < n; i++)
		if (list[i] == timer)
			return 1;
	return 0;
}

/* The model: one pass at `now` over the timers still queued (q[]), in hard
 * order (hard expiries are distinct here): the leftmost run while soft <=
 * now, then, if greedy, every other timer with soft <= now. */
static int model_pass(int *q, hrt_time_t now, int greedy, int *out)
{
	int n = 0, stop = 0;

	for (int i = 0; i < DEMO_NT; i++) {
		if (!q[i])
			continue;
		if (!stop && R.soft[i] <= now)
			out[n++] = i;
		else
			stop = 1;
	}
	for (int i = 0; greedy && i < DEMO_NT; i++)
		if (q[i] && R.soft[i] <= now && !ran(out, n, i))
			out[n++] = i;
	for (int k = 0; k < n; k++)
		q[out[k]] = 0;
	return n;
}

static int is_greedy(const struct demo_scenario *sc)
{
	return sc->policy == HRT_GREEDY_ALWAYS || (sc->policy == HRT_GREEDY_IDLE && sc->idle);
}

static void test_pass_at_10(void **state)
{
	(void)state;
	for (int s = 0; s < DEMO_NS; s++) {
		const struct demo_pass *p = &R.pass[s];
		int q[DEMO_NT], exp[DEMO_NT], n;

		for (int i = 0; i < DEMO_NT; i++)
			q[i] = 1;
		n = model_pass(q, R.now, is_greedy(&R.sc[s]), exp);
		assert_int_equal(p->nran, n);
		for (int k = 0; k < n; k++)
			assert_int_equal(p->ran[k], exp[k]);
		/* The article: A and B always; D exactly when greedy. */
		assert_true(ran(p->ran, p->nran, 0) && ran(p->ran, p->nran, 1));
		assert_int_equal(ran(p->ran, p->nran, 3), is_greedy(&R.sc[s]));
		assert_int_equal(p->nran, is_greedy(&R.sc[s]) ? 3 : 2);
		assert_int_equal(p->st.greedy_walks, (uint64_t)is_greedy(&R.sc[s]));
		assert_int_equal(p->st.expired_greedy, (uint64_t)(p->nran - 2));
	}
}

static void test_nodes_visited(void **state)
{
	(void)state;
	for (int s = 0; s < DEMO_NS; s++) {
		const struct demo_pass *p = &R.pass[s];

		/* What the searches visit on the dumped trees is what the
		 * library counted; a search visits at most one path, and each
		 * of the two searches (one finds D, one finds nothing) stays
		 * within the tree's height (3 levels for 7 nodes). */
		assert_int_equal(p->derived_visits, p->st.nodes_visited);
		assert_true(p->st.nodes_visited <= (uint64_t)(3 * p->nsearch));
		if (is_greedy(&R.sc[s])) {
			assert_int_equal(p->nsearch, 2);
			assert_int_equal(p->search[0].found, 3);
			assert_int_equal(p->search[1].found, -1);
			assert_true(p->st.nodes_visited >= 1);
			/* Every pruned subtree really holds no due timer. */
			for (int j = 0; j < p->nsearch; j++)
				for (int k = 0; k < p->search[j].npruned; k++)
					assert_true(p->search[j].pruned_min[k] > R.now);
		} else {
			assert_int_equal(p->st.nodes_visited, 0);
		}
	}
}

static hrt_time_t check_subtree(int timer, int depth, int *black_height, hrt_time_t *last)
{
	const struct demo_node *n = NULL;
	hrt_time_t m;
	int bl = 0, br = 0;

	if (timer < 0) {
		*black_height = 1;
		return HRT_TIME_MAX;
	}
	for (int i = 0; i < R.before.n; i++)
		if (R.before.node[i].timer == timer)
			n = &R.before.node[i];
	assert_non_null(n);
	assert_int_equal(n->depth, depth);
	m = check_subtree(n->left, depth + 1, &bl, last);
	assert_true(R.hard[timer] > *last);     /* in-order: ascending hard */
	*last = R.hard[timer];
	if (R.soft[timer] < m)
		m = R.soft[timer];
	{
		hrt_time_t mr = check_subtree(n->right, depth + 1, &br, last);

		if (mr < m)
			m = mr;
	}
	assert_int_equal(bl, br);
	assert_int_equal(n->subtree_soft, m);   /* augmented value recomputed */
	if (n->red) {
		for (int i = 0; i < R.before.n; i++)
			if (R.before.node[i].timer == n->left || R.before.node[i].timer == n->right)
				assert_false(R.before.node[i].red);
	}
	*black_height = bl + !n->red;
	return m;
}

static void test_tree(void **state)
{
	hrt_time_t last = -1;
	int bh;

	(void)state;
	assert_int_equal(R.before.n, DEMO_NT);
	assert_int_equal(R.before.root, 3);             /* D, as in the article */
	for (int i = 0; i < R.before.n; i++) {
		if (R.before.node[i].timer == 3)
			assert_false(R.before.node[i].red);
	}
	check_subtree(R.before.root, 0, &bh, &last);
	/* The article's example: C's soft after 10 us, F's subtree pruned. */
	assert_true(R.soft[2] > R.now);
	for (int i = 0; i < DEMO_NT; i++) {
		assert_int_equal(R.hard[i], (i + 1) * 10000);
		assert_true(R.soft[i] <= R.hard[i]);
	}
	assert_int_equal(R.soft[0], 5000);
	assert_int_equal(R.soft[1], 7500);
	assert_int_equal(R.soft[3], 7500);
}

/* The model's wake-ups: pass at 10 us, maybe cancel C, then fire at the
 * earliest hard expiry until nothing is left. */
static void check_wakeups(const struct demo_wakeups *w, const struct demo_scenario *sc, int cancel)
{
	int q[DEMO_NT], out[DEMO_NT], n = 0;
	hrt_time_t t = R.now;

	for (int i = 0; i < DEMO_NT; i++)
		q[i] = 1;
	for (;;) {
		int k = model_pass(q, t, is_greedy(sc), out), left = 0;

		assert_true(n < w->n);
		assert_int_equal(w->at[n], t);
		assert_int_equal(w->nran[n], k);
		for (int j = 0; j < k; j++) {
			assert_int_equal(w->ran[n][j], out[j]);
			/* Never early, never late. */
			assert_true(R.soft[out[j]] <= t && t <= R.hard[out[j]]);
			assert_int_equal(w->ran_at[out[j]], t);
		}
		n++;
		if (n == 1 && cancel)
			q[2] = 0;
		t = HRT_TIME_MAX;
		for (int i = 0; i < DEMO_NT; i++)
			if (q[i]) {
				left = 1;
				if (R.hard[i] < t)
					t = R.hard[i];
			}
		if (!left)
			break;
	}
	assert_int_equal(w->n, n);
	if (cancel)
		assert_int_equal(w->ran_at[2], -1);
}

static void test_wakeups(void **state)
{
	(void)state;
	for (int s = 0; s < DEMO_NS; s++) {
		check_wakeups(&R.kept[s], &R.sc[s], 0);
		check_wakeups(&R.cancelled[s], &R.sc[s], 1);
		/* Article: with C kept, running D early saves nothing. */
		assert_int_equal(R.kept[s].n, R.kept[0].n);
		/* C cancelled: the greedy pass saves a wake-up. */
		if (is_greedy(&R.sc[s]))
			assert_true(R.cancelled[s].n < R.cancelled[0].n);
		else
			assert_int_equal(R.cancelled[s].n, R.cancelled[0].n);
	}
}

static void xml_ok(const char *dir, const char *name)
{
	char path[512], why[200];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (xml_check_file(path, why, sizeof(why)))
		fail_msg("%s is not well-formed XML: %s", path, why);
}

static int have(const char *prog)
{
	char cmd[200];

	snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", prog);
	return system(cmd) == 0;
}

static void test_files(void **state)
{
	char dir[] = "/tmp/hrt-test-demo-XXXXXX", path[600], cmd[700], line[300];
	int nodes = 0, edges = 0, s, j;
	const struct demo_search *q = demo_pictured(&R, &s, &j);
	FILE *f;

	(void)state;
	assert_non_null(q);
	assert_non_null(mkdtemp(dir));
	fflush(stdout);
	assert_int_equal(demo_write_files(&R, dir), 0);
	xml_ok(dir, "demo-timeline.svg");
	snprintf(path, sizeof(path), "%s/demo-tree.dot", dir);
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		nodes += strstr(line, "[label=\"") && !strstr(line, "->");
		edges += strstr(line, " -> ") != NULL;
	}
	fclose(f);
	/* the tree the pictured search ran on */
	assert_int_equal(nodes, q->tree.n);
	assert_int_equal(edges, q->tree.n - 1);
	if (have("dot"))
		xml_ok(dir, "demo-tree.svg");
	if (have("xmllint")) {
		snprintf(cmd, sizeof(cmd), "xmllint --noout %s/demo-timeline.svg", dir);
		assert_int_equal(system(cmd), 0);
	}
	/* The checker itself must reject a broken file. */
	snprintf(path, sizeof(path), "%s/bad.svg", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("<svg><g><rect x=\"1\"/></svg>\n", f);
	fclose(f);
	assert_int_not_equal(xml_check_file(path, line, sizeof(line)), 0);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

/* Letters A..G in s up to the first char not in "A-G, " as a bit set. */
static unsigned letters(const char *s)
{
	unsigned set = 0;

	for (; *s && (strchr(", ", *s) || (*s >= 'A' && *s <= 'G')); s++)
		if (*s >= 'A' && *s <= 'G')
			set |= 1u << (*s - 'A');
	return set;
}

static unsigned search_set(const int *list, int n)
{
	unsigned set = 0;

	for (int i = 0; i < n; i++)
		set |= 1u << list[i];
	return set;
}

/*
 * Runs 'hrt demo --out DIR' in-process with stdout to a file, reads which
 * search the text says the picture draws and what that search printed
 * (visits, finds, pruned at), and checks demo-tree.dot against it: the
 * same nodes, the dashed (pruned) nodes, the orange path and its edges.
 */
static void test_tree_picture(void **state)
{
	char dir[] = "/tmp/hrt-test-demo-XXXXXX", path[600], line[600], scen[64] = "";
	char *argv[] = { "demo", "--out", dir, NULL };
	unsigned visits = 0, pruned = 0, tree = 0, found = 0;
	unsigned dot_nodes = 0, dot_pruned = 0, dot_path = 0, dot_found = 0;
	int num = 0, in_tree = 0, in_scen = 0, have_search = 0, path_edges = 0, out, st;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/stdout", dir);
	fflush(stdout);
	out = dup(1);
	f = fopen(path, "w+");
	assert_non_null(f);
	dup2(fileno(f), 1);
	st = hrt_cmd_demo(3, argv);
	fflush(stdout);
	dup2(out, 1);
	close(out);
	assert_int_equal(st, 0);
	/* The picture's search, named by the text, then its printed line. */
	rewind(f);
	while (fgets(line, sizeof(line), f)) {
		char *p, *e = strstr(line, " ran on this tree");
		int at;

		if (e && sscanf(line, "search %d under %n", &num, &at) == 1 && line + at < e &&
		    e - (line + at) < (int)sizeof(scen)) {
			memcpy(scen, line + at, (size_t)(e - (line + at)));
			scen[e - (line + at)] = 0;
			in_tree = 1;
			continue;
		}
		if (in_tree && line[0] == ' ' && (p = strpbrk(line, "ABCDEFG")))
			tree |= 1u << (*p - 'A');
		else
			in_tree = 0;
	}
	assert_int_not_equal(num, 0);
	rewind(f);
	while (fgets(line, sizeof(line), f) && !have_search) {
		char want[32], *p;

		if (!strncmp(line, "  ", 2) && line[2] != ' ')
			in_scen = !strncmp(line + 2, scen, strlen(scen)) &&
				  !strncmp(line + 2 + strlen(scen), "  ", 2);
		snprintf(want, sizeof(want), "search %d: visits ", num);
		if (!in_scen || !(p = strstr(line, want)))
			continue;
		have_search = 1;
		visits = letters(p + strlen(want));
		if ((p = strstr(line, ", finds ")) && p[8] >= 'A' && p[8] <= 'G')
			found = 1u << (p[8] - 'A');
		if ((p = strstr(line, "pruned at ")))
			for (p += 10; *p >= 'A' && *p <= 'G'; p = strstr(p, ", ") ? strstr(p, ", ") + 2 : "")
				pruned |= 1u << (*p - 'A');
	}
	fclose(f);
	assert_true(have_search);
	/* The article's case: the search runs after A and B, finds D. */
	assert_int_equal(found, 1u << 3);
	assert_int_equal(tree & 3u, 0);
	assert_int_not_equal(pruned, 0);
	/* The text is the data: the same search as in the result struct. */
	{
		int s, j;
		const struct demo_search *q = demo_pictured(&R, &s, &j);

		assert_non_null(q);
		assert_int_equal(j + 1, num);
		assert_string_equal(R.sc[s].name, scen);
		assert_int_equal(search_set(q->path, q->npath), visits);
		assert_int_equal(search_set(q->pruned, q->npruned), pruned);
		for (int k = 0; k < q->tree.n; k++)
			assert_true(tree & (1u << q->tree.node[k].timer));
		assert_int_equal(q->tree.n, __builtin_popcount(tree));
	}
	snprintf(path, sizeof(path), "%s/demo-tree.dot", dir);
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		char a, b;

		if (sscanf(line, "  %c -> %c", &a, &b) == 2) {
			if (strstr(line, "#ff7f0e")) {
				/* a path edge joins two path nodes, parent first */
				assert_true(visits & (1u << (a - 'A')));
				assert_true(visits & (1u << (b - 'A')));
				path_edges++;
			}
		} else if (sscanf(line, "  %c [label=", &a) == 1 && a >= 'A' && a <= 'G') {
			dot_nodes |= 1u << (a - 'A');
			if (strstr(line, "dashed"))
				dot_pruned |= 1u << (a - 'A');
			if (strstr(line, "#ff7f0e"))
				dot_path |= 1u << (a - 'A');
			if (strstr(line, "finds it"))
				dot_found |= 1u << (a - 'A');
		}
	}
	fclose(f);
	assert_int_equal(dot_nodes, tree);
	assert_int_equal(dot_pruned, pruned);
	assert_int_equal(dot_path, visits);
	assert_int_equal(dot_found, found);
	assert_int_equal(path_edges, __builtin_popcount(visits) - 1);
	snprintf(line, sizeof(line), "rm -rf %s", dir);
	assert_int_equal(system(line), 0);
}

/* Exit status of `$HRT args`, output to /dev/null; skips without $HRT. */
static int run_hrt(const char *args)
{
	const char *hrt = getenv("HRT");
	char cmd[600];
	int st;

	if (!hrt)
		skip();
	snprintf(cmd, sizeof(cmd), "%s %s >/dev/null 2>&1", hrt, args);
	st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_cli(void **state)
{
	char dir[] = "/tmp/hrt-test-demo-XXXXXX", args[200];

	(void)state;
	assert_int_equal(run_hrt("demo --bogus"), 2);
	assert_int_equal(run_hrt("demo --out"), 2);
	assert_int_equal(run_hrt("demo extra"), 2);
	assert_int_equal(run_hrt("demo --help"), 0);
	assert_int_equal(run_hrt("demo --no-files"), 0);
	assert_non_null(mkdtemp(dir));
	snprintf(args, sizeof(args), "demo --out %s", dir);
	assert_int_equal(run_hrt(args), 0);
	xml_ok(dir, "demo-timeline.svg");
	snprintf(args, sizeof(args), "rm -rf %s", dir);
	assert_int_equal(system(args), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pass_at_10),
		cmocka_unit_test(test_nodes_visited),
		cmocka_unit_test(test_tree),
		cmocka_unit_test(test_wakeups),
		cmocka_unit_test(test_files),
		cmocka_unit_test(test_tree_picture),
		cmocka_unit_test(test_cli),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
