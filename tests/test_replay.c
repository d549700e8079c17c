/*
 * test_replay.c - the replay model on hand-written traces whose wake-ups and
 * optimum are worked out below, properties on random traces, and the
 * shipped trace (data/trace.hrt.xz, run from the repository root).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../tools/convert.h"
#include "../tools/replay.h"

static int replay_str(const char *text, enum replay_idle idle, struct replay_result *res)
{
	struct trace_reader *r;
	int k;

	assert_int_equal(trace_open_mem(&r, text, strlen(text), "t", 0, TRACE_AUTO), 0);
	k = replay_trace(r, RP_ALL, idle, res);
	if (k)
		fprintf(stderr, "%s\n", trace_error(r));
	trace_close(r);
	return k;
}

/*
 * The article's timers, all armed at 0 (times in ns, µs * 1000):
 *   A [5, 10]  B [7.5, 20]  C [25, 30]  D [7.5, 40]  E [35, 50]  F [50, 60]
 *   G [65, 70]
 * Optimum (sort by hard, stab at the first unstabbed hard): 10 hits A B D,
 * 30 hits C, 50 hits E F, 70 hits G: 4.
 * off: at 10 runs A, B and stops at C (soft 25); at 30 C, D, stops at E; at
 * 50 E, F; at 70 G: 4 wake-ups, 7 expiries.  always: at 10 A, B and (greedy)
 * D; 30 C; 50 E F; 70 G: 4 - with everything armed at once and nothing
 * cancelled the stock pass is already optimal (each of its wake-ups is at
 * the hard expiry of a timer no earlier wake-up could run), so greedy can
 * only move D earlier, not save a wake-up.
 */
#define ARTICLE \
	"# hrt-trace v1\n" \
	"0 0 start 1 5000 10000\n" \
	"0 0 start 2 7500 20000\n" \
	"0 0 start 3 25000 30000\n" \
	"0 0 start 4 7500 40000\n" \
	"0 0 start 5 35000 50000\n" \
	"0 0 start 6 50000 60000\n" \
	"0 0 start 7 65000 70000\n"

static void test_article_static(void **state)
{
	struct replay_result res;

	(void)state;
	assert_int_equal(replay_str(ARTICLE "100000 0 idle\n", RP_IDLE_TRACE, &res), 0);
	assert_int_equal(res.optimal_wakeups, 4);
	assert_int_equal(res.pol[RP_ALWAYS].wakeups, 4);
	assert_int_equal(res.pol[RP_OFF].wakeups, 4);
	assert_int_equal(res.pol[RP_OFF].expired, 7);
	assert_int_equal(res.pol[RP_OFF].expired_greedy, 0);
	assert_int_equal(res.pol[RP_ALWAYS].expired_greedy, 1);     /* D at 10 */
	assert_int_equal(res.armings, 7);
	assert_int_equal(res.timers, 7);
	assert_int_equal(res.cpus, 1);
	/* Lateness (run - soft): off runs D at 30: 22500 (the max); always runs
	 * D at 10: 2500, so its max is E, run at its hard 50: 15000. */
	assert_int_equal(res.pol[RP_OFF].late_max, 22500);
	assert_int_equal(res.pol[RP_ALWAYS].late_max, 15000);
}

/*
 * Same set, C cancelled at 15 µs (the article's case for greedy):
 *   off: 10 (A, B; stops at C); C gone; 40 (D, and E soft 35 <= 40; F soft
 *        50 > 40 stops); 60 (F; G soft 65 stops); 70 (G): 4 wake-ups.
 *   always: 10 (A, B, D); 50 (E, F); 70 (G): 3.
 *   optimum: C's window [25, 30] is not required (cancelled at 15 < 30);
 *        10 hits A B D, 50 hits E F, 70 hits G: 3.
 *   idle with the CPU busy throughout: like off, 4.
 */
static void test_article_cancel_c(void **state)
{
	struct replay_result res;
	const char *t = ARTICLE "15000 0 cancel 3\n100000 0 idle\n";
	const char *busy = "# hrt-trace v1\n0 0 busy\n" ARTICLE + 15;

	(void)state;
	assert_int_equal(replay_str(t, RP_IDLE_TRACE, &res), 0);
	assert_int_equal(res.optimal_wakeups, 3);
	assert_int_equal(res.pol[RP_ALWAYS].wakeups, 3);
	assert_int_equal(res.pol[RP_IDLE].wakeups, 3);      /* idle before any switch */
	assert_int_equal(res.pol[RP_OFF].wakeups, 4);
	assert_int_equal(res.pol[RP_OFF].expired, 6);
	assert_int_equal(res.cancels, 1);

	/* the same with the CPU busy: "0 0 busy" first, then the starts */
	{
		char buf[1024];

		snprintf(buf, sizeof(buf), "%s15000 0 cancel 3\n100000 0 idle\n", busy);
		assert_int_equal(replay_str(buf, RP_IDLE_TRACE, &res), 0);
		assert_int_equal(res.pol[RP_IDLE].wakeups, 4);
		assert_int_equal(res.pol[RP_IDLE].expired_busy, 6);
		assert_int_equal(res.pol[RP_ALWAYS].wakeups, 3);
		assert_int_equal(replay_str(buf, RP_IDLE_ALWAYS, &res), 0);
		assert_int_equal(res.pol[RP_IDLE].wakeups, 3);
	}
}

/*
 * Two CPUs, a migration, an already expired arming, and the end of trace:
 *   0 cpu0 start X [100, 200]; 50 cpu1 start X [300, 400] (moves X to cpu1,
 *   its first window is not required: restarted at 50 < 200);
 *   500 cpu0 start Y [10, 20] (already expired: window [500, 500], device at
 *   500 -> runs before the next event); 600 cpu0 busy; cpu1 X due at 400.
 *   700 cpu1 start Z [900, 1000]: never due before the last event (800).
 *   Wake-ups: cpu1 at 400 (X), cpu0 at 500 (Y): 2 for every policy;
 *   optimum: X [300,400], Y [500,500] -> 2; Z's window closes after the end.
 */
static void test_two_cpus(void **state)
{
	struct replay_result res;

	(void)state;
	assert_int_equal(replay_str("0 0 start 1 100 200\n50 1 start 1 300 400\n"
				    "500 0 start 2 10 20\n600 0 busy\n700 1 start 3 900 1000\n"
				    "800 1 idle\n", RP_IDLE_TRACE, &res), 0);
	assert_int_equal(res.cpus, 2);
	assert_int_equal(res.optimal_wakeups, 2);
	for (int p = 0; p < RP_NPOL; p++) {
		assert_int_equal(res.pol[p].wakeups, 2);
		assert_int_equal(res.pol[p].expired, 2);
	}
	assert_int_equal(res.pol[RP_OFF].late_max, 100);    /* X at 400, soft 300 */
}

/* perf text: the kernel row counts distinct (CPU, now=) and the cancel just
 * before the expiry of the same timer is an expiry, not a cancel. */
static void test_perf_kernel_row(void **state)
{
	struct replay_result res;
	const char *t =
	"  a 1 [000] 1.000000000: timer:hrtimer_start: hrtimer=0xa function=f expires=1000010000 softexpires=1000005000 mode=0x0\n"
	"  a 1 [000] 1.000000001: timer:hrtimer_start: hrtimer=0xb function=g expires=1000012000 softexpires=1000001000 mode=0x0\n"
	"  a 1 [000] 1.000010100: timer:hrtimer_cancel: hrtimer=0xa\n"
	"  a 1 [000] 1.000010200: timer:hrtimer_expire_entry: hrtimer=0xa function=f now=1000010050\n"
	"  a 1 [000] 1.000010300: timer:hrtimer_expire_entry: hrtimer=0xb function=g now=1000010050\n"
	"  a 1 [000] 1.000020000: timer:hrtimer_expire_exit: hrtimer=0xb\n"
	"  a 1 [000] 1.000030000: sched:sched_switch: prev_comm=a b prev_pid=1 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120\n";

	(void)state;
	assert_int_equal(replay_str(t, RP_IDLE_TRACE, &res), 0);
	assert_int_equal(res.format, TRACE_PERF);
	assert_int_equal(res.has_kernel, 1);
	assert_int_equal(res.kernel.wakeups, 1);    /* one now= */
	assert_int_equal(res.kernel.expired, 2);
	assert_int_equal(res.pairs_merged, 1);
	assert_int_equal(res.cancels, 0);
	assert_int_equal(res.ignored, 1);
	/* the sim: a at its hard 10000 (after 1 s) runs a and b: 1 wake-up */
	assert_int_equal(res.pol[RP_OFF].wakeups, 1);
	assert_int_equal(res.pol[RP_OFF].expired, 2);
	assert_int_equal(res.optimal_wakeups, 1);
	assert_int_equal(res.armings_unresolved, 0);
	assert_int_equal(res.by[RP_BY_FUNCTION].ntop, 1);     /* g never caused a wake-up */
	assert_string_equal(res.by[RP_BY_FUNCTION].top[0].name, "f");
	assert_int_equal(res.by[RP_BY_FUNCTION].top[0].w[RP_NPOL], 1);
}

static uint64_t rng = 88172645463325252ULL;
static uint64_t rnd(void) { rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17; return rng; }

/* Random traces: the optimum is a lower bound for every policy; for static
 * sets (all armed at 0, no cancels) off, always and the optimum agree. */
static void test_random_properties(void **state)
{
	char *buf = malloc(1 << 16);

	(void)state;
	for (int iter = 0; iter < 300; iter++) {
		struct replay_result res;
		int stat = iter % 2, n = 0;
		long t = 0;

		n += sprintf(buf + n, "# hrt-trace v1\n");
		for (int i = 0; i < 60; i++) {
			int cpu = (int)(rnd() % 3), id = (int)(rnd() % 20);
			long soft = (stat ? 0 : t) + (long)(rnd() % 5000), hard = soft + (long)(rnd() % 3000);

			if (!stat)
				t += (long)(rnd() % 300);
			if (!stat && i > 5 && rnd() % 4 == 0)
				n += sprintf(buf + n, "%ld %d cancel %d\n", t, cpu, (int)(rnd() % 5));
			else if (!stat && i >= 5 && rnd() % 5 == 0)
				n += sprintf(buf + n, "%ld %d %s\n", t, cpu, rnd() % 2 ? "idle" : "busy");
			else
				n += sprintf(buf + n, "%ld %d start %d %ld %ld\n", t, stat ? 0 : cpu,
					     stat ? i : (i < 5 ? i : id), soft, hard);
		}
		n += sprintf(buf + n, "%ld 0 idle\n", t + 100000);
		if (replay_str(buf, RP_IDLE_TRACE, &res)) {
			fprintf(stderr, "iter %d:\n%s", iter, buf);
			fail();
		}
		for (int p = 0; p < RP_NPOL; p++)
			if (res.optimal_wakeups > res.pol[p].wakeups) {
				fprintf(stderr, "iter %d policy %d: opt %llu > %llu\n%s", iter, p,
					(unsigned long long)res.optimal_wakeups,
					(unsigned long long)res.pol[p].wakeups, buf);
				fail();
			}
		if (stat) {
			assert_int_equal(res.pol[RP_ALWAYS].wakeups, res.optimal_wakeups);
			assert_int_equal(res.pol[RP_OFF].wakeups, res.optimal_wakeups);
			assert_int_equal(res.pol[RP_OFF].expired, 60);
		}
	}
	free(buf);
}

/* The shipped trace replays; the simulation agrees with its own v1
 * conversion (it never uses the kernel's expiries). */
static void test_shipped_trace(void **state)
{
	struct trace_reader *r;
	struct replay_result a, b;
	const char *err;
	char *v1 = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	assert_int_equal(trace_open(&r, "data/trace.hrt.xz", 0, TRACE_AUTO, &err), 0);
	assert_int_equal(replay_trace(r, RP_ALL, RP_IDLE_TRACE, &a), 0);
	trace_close(r);
	assert_int_equal(a.format, TRACE_PERF);
	assert_true(a.events > 10000);
	assert_true(a.has_kernel);
	assert_true(a.cpus >= 1);
	for (int p = 0; p < RP_NPOL; p++)
		assert_true(a.optimal_wakeups <= a.pol[p].wakeups);
	assert_true(a.pol[RP_ALWAYS].expired_greedy > 0);
	assert_true(a.by[RP_BY_PROCESS].ntop > 0);

	assert_int_equal(trace_open(&r, "data/trace.hrt.xz", 0, TRACE_AUTO, &err), 0);
	assert_non_null(f = open_memstream(&v1, &len));
	assert_int_equal(trace_convert(r, f), 0);
	fclose(f);
	trace_close(r);
	assert_int_equal(trace_open_mem(&r, v1, len, "v1", 0, TRACE_AUTO), 0);
	assert_int_equal(replay_trace(r, RP_ALL, RP_IDLE_TRACE, &b), 0);
	trace_close(r);
	assert_int_equal(b.format, TRACE_V1);
	assert_int_equal(b.optimal_wakeups, a.optimal_wakeups);
	for (int p = 0; p < RP_NPOL; p++)
		assert_memory_equal(&a.pol[p], &b.pol[p], sizeof(a.pol[p]));
	free(v1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_article_static),
		cmocka_unit_test(test_article_cancel_c),
		cmocka_unit_test(test_two_cpus),
		cmocka_unit_test(test_perf_kernel_row),
		cmocka_unit_test(test_random_properties),
		cmocka_unit_test(test_shipped_trace),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
