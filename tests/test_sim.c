/* SPDX-License-Identifier: MIT */
/*
 * test_sim.c - 'hrt sim': the multi-CPU model (tools/sim/sim.c).
 *
 * Determinism (same seed, same result, field for field), the model's
 * invariants (no timer runs early or late, migrations bounded by thread
 * wake-ups, measured utilisation near the target), the theorem the
 * documentation leans on (one slack for all timers: greedy finds nothing,
 * so idle and off are identical), and the command line: bad options exit
 * 2, the CSV has one row per load and policy, the SVG is well-formed;
 * the plot's y ticks are round and its legends lie outside the plot frames.
 * Simulated durations are short so the test takes well under a second.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <unistd.h>
#include <sys/wait.h>
#include "unit.h"

#include "hrt.h"
#include "../tools/cmd/cmds.h"
#include "../tools/sim/sim.h"
#include "../tools/common/svg.h"

static void mixed(struct sim_config *c)
{
	sim_defaults(c);
	c->threads = 16;
	c->slack[0] = 50000;
	c->slack[1] = 1000000;
	c->nslack = 2;
	c->period = 2000000;
	c->background = 1000000;
	c->duration = 200000000;
}

static void test_deterministic(void **state)
{
	struct sim_config c;
	struct sim_result a, b;

	(void)state;
	mixed(&c);
	c.policy = HRT_GREEDY_IDLE;
	assert_int_equal(sim_run(&c, &a), 0);
	assert_int_equal(sim_run(&c, &b), 0);
	assert_memory_equal(&a, &b, sizeof(a));
	c.seed = 2;
	assert_int_equal(sim_run(&c, &b), 0);
	assert_true(a.wakeups != b.wakeups || a.migrations != b.migrations ||
		    a.timer_runs != b.timer_runs);
}

static void check_invariants(const struct sim_config *c, const struct sim_result *r)
{
	if (r->early || r->late)
		fail_msg("policy %d busy %.2f: %llu early, %llu late", c->policy, c->busy,
			 (unsigned long long)r->early, (unsigned long long)r->late);
	/* Each thread wake-up causes at most one migration (at the wake-up or
	 * a later steal from the run queue). */
	assert_true(r->migrations <= r->timer_runs);
	assert_int_equal(r->migrations, r->wake_migrations + r->steals);
	/* Every device firing runs at least its due timer. */
	assert_true(r->wakeups <= r->timer_runs + r->background_runs);
	assert_true(r->wakeups > 0 && r->bursts > 0);
	if (c->policy == HRT_GREEDY_OFF)
		assert_int_equal(r->expired_greedy, 0);
	assert_true(r->util > 0 && r->util <= 1);
}

static void test_invariants(void **state)
{
	static const double loads[] = { 0.2, 0.5, 0.8, 0.95 };
	struct sim_config c;
	struct sim_result r;

	(void)state;
	for (int cfg = 0; cfg < 2; cfg++)
		for (size_t l = 0; l < sizeof(loads) / sizeof(loads[0]); l++)
			for (int p = 0; p < 3; p++) {
				if (cfg) {
					mixed(&c);
				} else {
					sim_defaults(&c);
					c.duration = 100000000;
				}
				c.busy = loads[l];
				c.policy = (enum hrt_greedy)p;
				assert_int_equal(sim_run(&c, &r), 0);
				check_invariants(&c, &r);
				/* One slack, no contention to speak of: the measured
				 * utilisation is near the target up to 80 %. */
				if (!cfg && loads[l] <= 0.8 && (r.util < loads[l] - 0.05 ||
								r.util > loads[l] + 0.05))
					fail_msg("busy %.2f: measured %.3f", loads[l], r.util);
				/* Mixed slack: greedy passes find work. */
				if (cfg && p)
					assert_true(r.expired_greedy > 0 && r.greedy_walks > 0);
			}
}

/* One slack for everyone: soft order is hard order, so the leftmost run
 * already runs every soft-expired timer and greedy changes nothing. */
static void test_uniform_slack(void **state)
{
	struct sim_config c;
	struct sim_result off, idle;

	(void)state;
	sim_defaults(&c);
	c.duration = 100000000;
	for (int l = 3; l <= 9; l += 3) {
		c.busy = l / 10.0;
		c.policy = HRT_GREEDY_OFF;
		assert_int_equal(sim_run(&c, &off), 0);
		c.policy = HRT_GREEDY_IDLE;
		assert_int_equal(sim_run(&c, &idle), 0);
		assert_int_equal(idle.expired_greedy, 0);
		assert_true(idle.greedy_walks > 0);
		assert_int_equal(idle.wakeups, off.wakeups);
		assert_int_equal(idle.migrations, off.migrations);
		assert_int_equal(idle.timer_runs, off.timer_runs);
	}
}

static void test_bad_config(void **state)
{
	struct sim_config c;
	struct sim_result r;

	(void)state;
	sim_defaults(&c);
	assert_null(sim_config_error(&c));
	c.threads = 3;          /* 0.8 x 4 CPUs needs more than 3.2 threads */
	assert_non_null(sim_config_error(&c));
	assert_int_equal(sim_run(&c, &r), -EINVAL);
	sim_defaults(&c);
	c.busy = 1.0;
	assert_non_null(sim_config_error(&c));
	sim_defaults(&c);
	c.period = 60000;       /* shorter than work + slack */
	assert_non_null(sim_config_error(&c));
	sim_defaults(&c);
	c.nslack = 0;
	assert_non_null(sim_config_error(&c));
}

/* `$HRT args` with stdout to out (or /dev/null); exit status. */
static int run_hrt(const char *args, const char *out)
{
	const char *hrt = getenv("HRT");
	char cmd[700];
	int st;

	if (!hrt)
		skip();
	snprintf(cmd, sizeof(cmd), "%s %s >%s 2>/dev/null", hrt, args, out ? out : "/dev/null");
	st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_cli_bad(void **state)
{
	static const char *const bad[] = {
		"sim --bogus", "sim --busy", "sim --busy 0", "sim --busy 100", "sim --busy abc",
		"sim --cpus 0", "sim --threads 2 --busy 90", "sim --slack -5", "sim --slack 1,x",
		"sim --duration 0", "sim --seed", "sim --busy 50 --sweep", "sim --period 1us",
		"sim --slack 1,2,3,4,5,6,7,8,9",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (run_hrt(bad[i], NULL) != 2)
			fail_msg("'%s' did not exit 2", bad[i]);
	assert_int_equal(run_hrt("sim --help", NULL), 0);
}

static long count_lines(const char *path)
{
	FILE *f = fopen(path, "r");
	long n = 0;
	int ch;

	assert_non_null(f);
	while ((ch = fgetc(f)) != EOF)
		n += ch == '\n';
	fclose(f);
	return n;
}

static void test_cli_output(void **state)
{
	char dir[] = "/tmp/hrt-test-sim-XXXXXX", a[64], b[64], svg[64], args[400], why[200];

	(void)state;
	if (!getenv("HRT"))
		skip();
	assert_non_null(mkdtemp(dir));
	snprintf(a, sizeof(a), "%s/a.txt", dir);
	snprintf(b, sizeof(b), "%s/b.txt", dir);
	snprintf(svg, sizeof(svg), "%s/sim.svg", dir);
	snprintf(args, sizeof(args), "sim --short --duration 20ms --seed 7 --svg %s", svg);
	assert_int_equal(run_hrt(args, a), 0);
	assert_int_equal(run_hrt("sim --short --duration 20ms --seed 7 --no-svg", b), 0);
	if (xml_check_file(svg, why, sizeof(why)))
		fail_msg("%s: %s", svg, why);
	/* Same seed, same table (the --svg run adds one "wrote" line). */
	snprintf(args, sizeof(args), "head -n %ld %s | cmp -s - %s", count_lines(b), a, b);
	assert_int_equal(system(args), 0);
	assert_int_equal(run_hrt("sim --short --duration 20ms --csv --no-svg", a), 0);
	assert_int_equal(count_lines(a), 1 + 4 * 3);
	assert_int_equal(run_hrt("sim --busy 80 --duration 20ms --csv --no-svg "
				 "--slack 50us,1ms --period 2ms --threads 16", a), 0);
	assert_int_equal(count_lines(a), 1 + 3);
	snprintf(args, sizeof(args), "rm -rf %s", dir);
	assert_int_equal(system(args), 0);
}

/* step is 1, 2 or 5 times a power of ten. */
static int nice_step(double step)
{
	double m = step / pow(10, floor(log10(step) + 1e-9));

	return fabs(m - 1) < 1e-6 || fabs(m - 2) < 1e-6 || fabs(m - 5) < 1e-6;
}

static void test_nice_axis(void **state)
{
	static const double max[] = { 0.03, 0.3, 1, 1.25, 1.3, 7, 99, 100, 495, 3456, 1e6 + 1 };
	char buf[64];

	(void)state;
	for (size_t i = 0; i < sizeof(max) / sizeof(max[0]); i++) {
		double top, step = 0;
		int dec = -1;

		step = svg_nice_axis(max[i], 5, &top, &dec);
		assert_true(nice_step(step));
		assert_true(top >= max[i]);
		assert_true(top - step < max[i]);               /* no spare interval */
		assert_true(top / step <= 5 + 1e-9);
		assert_true(fabs(top / step - round(top / step)) < 1e-9);
		/* the labels show the step exactly */
		snprintf(buf, sizeof(buf), "%.*f", dec, step);
		assert_true(fabs(atof(buf) - step) < 1e-12 * step);
	}
}

static double attr(const char *line, const char *name)
{
	char key[16];
	const char *p;

	snprintf(key, sizeof(key), " %s=\"", name);
	p = strstr(line, key);
	return p ? atof(p + strlen(key)) : NAN;
}

/*
 * Writes the plot in-process and reads it back: every element of a
 * <g class="legend"> lies outside both plot frames (the rects with
 * fill="none"), and each axis's tick labels run 0, s, 2s, ... with a round
 * step s.
 */
static void test_plot_layout(void **state)
{
	char dir[] = "/tmp/hrt-test-sim-XXXXXX", svg[64], line[1000];
	char *argv[] = { "sim", "--short", "--duration", "20ms", "--seed", "7", "--svg", svg, NULL };
	double fx[2], fy[2], fw[2], fh[2], tick[2][16];
	int nframe = 0, nlegend = 0, in_legend = 0, ntick[2] = { 0, 0 }, out, nul, st;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(svg, sizeof(svg), "%s/sim.svg", dir);
	fflush(stdout);
	out = dup(1);
	nul = open("/dev/null", O_WRONLY);
	assert_true(out >= 0 && nul >= 0);
	dup2(nul, 1);
	close(nul);
	st = hrt_cmd_sim(8, argv);
	fflush(stdout);
	dup2(out, 1);
	close(out);
	assert_int_equal(st, 0);
	/* Frames first (each precedes its legend), then the legends. */
	f = fopen(svg, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "<rect", 5) && strstr(line, "fill=\"none\"")) {
			assert_true(nframe < 2);
			fx[nframe] = attr(line, "x");
			fy[nframe] = attr(line, "y");
			fw[nframe] = attr(line, "width");
			fh[nframe++] = attr(line, "height");
		} else if (strstr(line, "<g class=\"legend\">")) {
			in_legend = 1;
		} else if (!strncmp(line, "</g>", 4)) {
			in_legend = 0;
		} else if (in_legend) {
			double x = attr(line, strncmp(line, "<line", 5) ? "x" : "x1");
			double y = attr(line, strncmp(line, "<line", 5) ? "y" : "y1");

			assert_false(isnan(x) || isnan(y));
			for (int k = 0; k < nframe; k++)
				assert_false(x >= fx[k] && x <= fx[k] + fw[k] &&
					     y >= fy[k] && y <= fy[k] + fh[k]);
			nlegend++;
		} else if (nframe && strstr(line, "text-anchor=\"end\"") &&
			   ntick[nframe - 1] < 16) {
			/* y tick label, left of the current frame */
			tick[nframe - 1][ntick[nframe - 1]++] = atof(strchr(line, '>') + 1);
		}
	}
	fclose(f);
	assert_int_equal(nframe, 2);
	assert_true(nlegend >= 2 * (3 + 2));    /* policies; migrations, wake-ups */
	for (int k = 0; k < 2; k++) {
		double step;

		assert_true(ntick[k] >= 3);
		step = tick[k][1] - tick[k][0];
		assert_true(tick[k][0] == 0);
		assert_true(nice_step(step));
		for (int i = 2; i < ntick[k]; i++)
			assert_true(fabs(tick[k][i] - tick[k][i - 1] - step) < 1e-9 * (step + 1));
	}
	snprintf(line, sizeof(line), "rm -rf %s", dir);
	assert_int_equal(system(line), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_deterministic),
		cmocka_unit_test(test_invariants),
		cmocka_unit_test(test_uniform_slack),
		cmocka_unit_test(test_bad_config),
		cmocka_unit_test(test_cli_bad),
		cmocka_unit_test(test_cli_output),
		cmocka_unit_test(test_nice_axis),
		cmocka_unit_test(test_plot_layout),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
