/* SPDX-License-Identifier: MIT */
/*
 * test_sim.c - 'hrt sim': the multi-CPU model (tools/sim.c).
 *
 * Determinism (same seed, same result, field for field), the model's
 * invariants (no timer runs early or late, migrations bounded by thread
 * wake-ups, measured utilisation near the target), the theorem the
 * documentation leans on (one slack for all timers: greedy finds nothing,
 * so idle and off are identical), and the command line: bad options exit
 * 2, the CSV has one row per load and policy, the SVG is well-formed.
 * Simulated durations are short so the test takes well under a second.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include "unit.h"

#include "hrt.h"
#include "../tools/sim.h"
#include "../tools/svg.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_deterministic),
		cmocka_unit_test(test_invariants),
		cmocka_unit_test(test_uniform_slack),
		cmocka_unit_test(test_bad_config),
		cmocka_unit_test(test_cli_bad),
		cmocka_unit_test(test_cli_output),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
