/* SPDX-License-Identifier: MIT */
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
#include "unit.h"

#include "../tools/trace/convert.h"
#include "../tools/replay/replay.h"
#include "../tools/common/text.h"

static int replay_str(const char *text, enum replay_idle idle, struct replay_result *res)
{
	struct trace_reader *r;
	int k;

	assert_int_equal(trace_open_mem(&r, text, strlen(text), "t", 0, TRACE_AUTO), 0);
	k = replay_trace(r, &(const struct replay_opts){ RP_ALL, idle, 0, NULL, NULL }, res);
	if (k)
		fprintf(stderr, "%s\n", trace_error(r));
	trace_close(r);
	return k;
}

/*
 * The article's timers, the set of `hrt demo` (tools/demo/demo.c), all armed at 0
 * (times in ns, µs * 1000; * = soft expiry reconstructed, not in the article):
 *   A [5, 10]  B [7.5, 20]  C [25*, 30]  D [7.5, 40]  E [35*, 50]
 *   F [42.5*, 60]  G [45*, 70]
 * Optimum (sort by hard, stab at the first unstabbed hard): 10 hits A B D,
 * 30 hits C, 50 hits E F G: 3.
 * off: at 10 runs A, B and stops at C (soft 25); at 30 C, D, stops at E; at
 * 50 E, F, G: 3 wake-ups, 7 expiries.  always: at 10 A, B and (greedy) D;
 * 30 C; 50 E F G: 3 - with everything armed at once and nothing
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
	"0 0 start 6 42500 60000\n" \
	"0 0 start 7 45000 70000\n"

static void test_article_static(void **state)
{
	struct replay_result res;

	(void)state;
	assert_int_equal(replay_str(ARTICLE "100000 0 idle\n", RP_IDLE_TRACE, &res), 0);
	assert_int_equal(res.optimal_wakeups, 3);
	assert_int_equal(res.pol[RP_ALWAYS].wakeups, 3);
	assert_int_equal(res.pol[RP_OFF].wakeups, 3);
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
 *        42.5 > 40 stops); 60 (F, G): 3 wake-ups.
 *   always: 10 (A, B, D); 50 (E, F, G): 2 - greedy saves one.
 *   optimum: C's window [25, 30] is not required (cancelled at 15 < 30);
 *        10 hits A B D, 50 hits E F G: 2.
 *   idle with the CPU busy throughout: like off, 3.
 */
static void test_article_cancel_c(void **state)
{
	struct replay_result res;
	const char *t = ARTICLE "15000 0 cancel 3\n100000 0 idle\n";
	const char *busy = "# hrt-trace v1\n0 0 busy\n" ARTICLE + 15;

	(void)state;
	assert_int_equal(replay_str(t, RP_IDLE_TRACE, &res), 0);
	assert_int_equal(res.optimal_wakeups, 2);
	assert_int_equal(res.pol[RP_ALWAYS].wakeups, 2);
	assert_int_equal(res.pol[RP_IDLE].wakeups, 2);      /* idle before any switch */
	assert_int_equal(res.pol[RP_OFF].wakeups, 3);
	assert_int_equal(res.pol[RP_OFF].expired, 6);
	assert_int_equal(res.cancels, 1);

	/* the same with the CPU busy: "0 0 busy" first, then the starts */
	{
		char buf[1024];

		snprintf(buf, sizeof(buf), "%s15000 0 cancel 3\n100000 0 idle\n", busy);
		assert_int_equal(replay_str(buf, RP_IDLE_TRACE, &res), 0);
		assert_int_equal(res.pol[RP_IDLE].wakeups, 3);
		assert_int_equal(res.pol[RP_IDLE].expired_busy, 6);
		assert_int_equal(res.pol[RP_ALWAYS].wakeups, 2);
		assert_int_equal(replay_str(buf, RP_IDLE_ALWAYS, &res), 0);
		assert_int_equal(res.pol[RP_IDLE].wakeups, 2);
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
	assert_int_equal(replay_trace(r, REPLAY_ALL, &a), 0);
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
	assert_int_equal(replay_trace(r, REPLAY_ALL, &b), 0);
	trace_close(r);
	assert_int_equal(b.format, TRACE_V1);
	assert_int_equal(b.optimal_wakeups, a.optimal_wakeups);
	for (int p = 0; p < RP_NPOL; p++)
		assert_memory_equal(&a.pol[p], &b.pol[p], sizeof(a.pol[p]));
	free(v1);
}

/*
 * Processes on a hand-written perf trace (times after 1 s, in ns):
 *   sleeper 100 arms A [1.001, 1.001] (hrtimer_wakeup), poller 200 arms
 *   D [1.0005, 1.003], swapper arms the tick C [1.002, 1.0025], cancelled
 *   at 1.0015; "Web Content" 300 arms two timerfds [1.010] and [1.011]
 *   whose expiries the trace lost; CPU 1's tick [1.020] expires.
 *   off: 1.001 A (stops at C), 1.003 D, 1.010, 1.011, CPU 1 1.020: 5.
 *   always: 1.001 A and greedy D, 1.010, 1.011, 1.020: 4 - poller's wake-up
 *   is the one saved.  idle: the CPU is idle until the switch at 1.030: 4.
 *   kernel: A, D, CPU 1's tick: 3, incomplete (2 timerfd armings lost).
 */
static const char procs[] =
	"  sleeper   100 [000] 1.000000000: timer:hrtimer_start: hrtimer=0xa function=hrtimer_wakeup expires=1001000000 softexpires=1001000000 mode=0x1\n"
	"   poller 200/201 [000] 1.000000100: timer:hrtimer_start: hrtimer=0xd function=hrtimer_wakeup expires=1003000000 softexpires=1000500000 mode=0x1\n"
	"  swapper     0 [000] 1.000000200: timer:hrtimer_start: hrtimer=0xc function=tick_nohz_handler expires=1002500000 softexpires=1002000000 mode=0x0\n"
	"  swapper     0 [000] 1.001000100: timer:hrtimer_expire_entry: hrtimer=0xa function=hrtimer_wakeup now=1001000050\n"
	"  swapper     0 [000] 1.001500000: timer:hrtimer_cancel: hrtimer=0xc\n"
	"  swapper     0 [000] 1.003000100: timer:hrtimer_expire_entry: hrtimer=0xd function=hrtimer_wakeup now=1003000050\n"
	"  Web Content 300 [000] 1.004000000: timer:hrtimer_start: hrtimer=0xf function=timerfd_tmrproc expires=1010000000 softexpires=1010000000 mode=0x0\n"
	"  Web Content 300 [000] 1.004000100: timer:hrtimer_start: hrtimer=0x10 function=timerfd_tmrproc expires=1011000000 softexpires=1011000000 mode=0x0\n"
	"  swapper     0 [001] 1.005000000: timer:hrtimer_start: hrtimer=0x20 function=tick_nohz_handler expires=1020000000 softexpires=1020000000 mode=0x0\n"
	"  swapper     0 [001] 1.020000100: timer:hrtimer_expire_entry: hrtimer=0x20 function=tick_nohz_handler now=1020000050\n"
	"  sleeper   100 [000] 1.030000000: sched:sched_switch: prev_comm=sleeper prev_pid=100 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120\n";

static const struct replay_group *group(const struct replay_by *by, const char *name)
{
	for (int i = 0; i < by->ntop; i++)
		if (!strcmp(by->top[i].name, name))
			return &by->top[i];
	fail_msg("no group '%s'", name);
	return NULL;
}

static void test_by_process(void **state)
{
	struct replay_result res;
	const struct replay_by *bp = &res.by[RP_BY_PROCESS], *bc = &res.by[RP_BY_CPU];
	const struct replay_group *g;
	uint64_t sum[RP_NPOL + 1] = { 0 };

	(void)state;
	assert_int_equal(replay_str(procs, RP_IDLE_TRACE, &res), 0);
	assert_int_equal(res.pol[RP_OFF].wakeups, 5);
	assert_int_equal(res.pol[RP_ALWAYS].wakeups, 4);
	assert_int_equal(res.pol[RP_IDLE].wakeups, 4);
	assert_int_equal(res.kernel.wakeups, 3);
	assert_int_equal(res.optimal_wakeups, 4);
	assert_int_equal(bp->ngroups, 4);
	g = group(bp, "sleeper 100");
	assert_int_equal(g->w[RP_OFF], 1);
	assert_int_equal(g->w[RP_ALWAYS], 1);
	assert_int_equal(g->w[RP_NPOL], 1);
	g = group(bp, "poller 200");
	assert_int_equal(g->w[RP_OFF], 1);
	assert_int_equal(g->w[RP_ALWAYS], 0);
	assert_int_equal(g->w[RP_NPOL], 1);
	g = group(bp, "Web Content 300");
	assert_int_equal(g->w[RP_OFF], 2);
	assert_int_equal(g->w[RP_ALWAYS], 2);
	assert_int_equal(g->w[RP_NPOL], 0);
	g = group(bp, "[kernel] tick_nohz_handler");     /* CPU 1's; CPU 0's was cancelled */
	assert_int_equal(g->w[RP_OFF], 1);
	assert_int_equal(g->w[RP_NPOL], 1);
	/* Every wake-up is someone's. */
	for (int i = 0; i < bp->ntop; i++)
		for (int p = 0; p <= RP_NPOL; p++)
			sum[p] += bp->top[i].w[p];
	for (int p = 0; p < RP_NPOL; p++)
		assert_int_equal(sum[p], res.pol[p].wakeups);
	assert_int_equal(sum[RP_NPOL], res.kernel.wakeups);
	assert_int_equal(bp->nsaved, 1);
	assert_string_equal(bp->saved[0].name, "poller 200");
	assert_int_equal(group(bc, "CPU 0")->w[RP_OFF], 4);
	assert_int_equal(group(bc, "CPU 1")->w[RP_OFF], 1);
	assert_int_equal(group(bc, "CPU 0")->w[RP_NPOL], 2);
	assert_int_equal(group(&res.by[RP_BY_FUNCTION], "hrtimer_wakeup")->w[RP_ALWAYS], 1);
}

/*
 * Processes, not threads: tracefs text with the kernel's record-tgid column.
 * Process 500 ("main") has threads 500 and 501 ("worker", seen first); each
 * sleeps alone (1 ms apart: two wake-ups each); "(-------)" is a task whose
 * process was not recorded: it stays a thread of its own.  By process: main
 * 500 has all four, named as its main thread; by thread: two each.
 */
static const char tgids[] =
	"  worker-501 (    500) [000] d..1. 1.000000: hrtimer_start: hrtimer=0xb function=hrtimer_wakeup expires=1002000000 softexpires=1002000000 mode=REL\n"
	"    main-500 (    500) [000] d..1. 1.000001: hrtimer_start: hrtimer=0xa function=hrtimer_wakeup expires=1001000000 softexpires=1001000000 mode=REL\n"
	"  lonely-700 (-------) [000] d..1. 1.000002: hrtimer_start: hrtimer=0xc function=hrtimer_wakeup expires=1004500000 softexpires=1004500000 mode=REL\n"
	"    main-500 (    500) [000] d..1. 1.001100: hrtimer_start: hrtimer=0xa function=hrtimer_wakeup expires=1003000000 softexpires=1003000000 mode=REL\n"
	"  worker-501 (    500) [000] d..1. 1.002100: hrtimer_start: hrtimer=0xb function=hrtimer_wakeup expires=1004000000 softexpires=1004000000 mode=REL\n"
	"    main-500 (    500) [000] d..1. 1.010000: hrtimer_start: hrtimer=0xd function=tick_nohz_handler expires=1020000000 softexpires=1020000000 mode=ABS\n";

static void test_process_is_the_thread_group_threads_on_request(void **state)
{
	struct replay_result res;
	const struct replay_by *bp = &res.by[RP_BY_PROCESS], *bt = &res.by[RP_BY_THREAD];

	(void)state;
	assert_int_equal(replay_str(tgids, RP_IDLE_TRACE, &res), 0);
	assert_int_equal(res.pol[RP_OFF].wakeups, 5);
	assert_int_equal(group(bp, "main 500")->w[RP_OFF], 4);
	assert_int_equal(group(bp, "lonely 700")->w[RP_OFF], 1);
	assert_int_equal(bp->ngroups, 2);
	assert_int_equal(group(bt, "main 500")->w[RP_OFF], 2);
	assert_int_equal(group(bt, "worker 501")->w[RP_OFF], 2);
	assert_int_equal(group(bt, "lonely 700")->w[RP_OFF], 1);
	assert_int_equal(bt->ngroups, 3);
	replay_result_free(&res);
}

/* perf script -F pid,tid prints PID/TID: the process, then the thread. */
static void test_perf_pid_slash_tid_is_process_and_thread(void **state)
{
	static const char t[] =
		"  worker 500/501 [000] 1.000000000: timer:hrtimer_start: hrtimer=0xb function=hrtimer_wakeup expires=1002000000 softexpires=1002000000 mode=0x1\n"
		"    main 500/500 [000] 1.000001000: timer:hrtimer_start: hrtimer=0xa function=hrtimer_wakeup expires=1001000000 softexpires=1001000000 mode=0x1\n"
		"    main 500/500 [000] 1.010000000: timer:hrtimer_start: hrtimer=0xd function=tick_nohz_handler expires=1020000000 softexpires=1020000000 mode=0x0\n";
	struct replay_result res;

	(void)state;
	assert_int_equal(replay_str(t, RP_IDLE_TRACE, &res), 0);
	assert_int_equal(group(&res.by[RP_BY_PROCESS], "main 500")->w[RP_OFF], 2);
	assert_int_equal(group(&res.by[RP_BY_THREAD], "worker 501")->w[RP_OFF], 1);
	assert_int_equal(group(&res.by[RP_BY_THREAD], "main 500")->w[RP_OFF], 1);
	replay_result_free(&res);
}

/* Lost expiries: the kernel row says it is incomplete, where, and has no
 * vs_opt figure. */
static void test_kernel_incomplete(void **state)
{
	struct replay_result res;
	char *out = NULL, *line;
	size_t len = 0;
	FILE *f;

	(void)state;
	assert_int_equal(replay_str(procs, RP_IDLE_TRACE, &res), 0);
	assert_int_equal(res.armings, 6);
	assert_int_equal(res.armings_unresolved, 2);
	assert_true(res.kernel_incomplete);
	assert_int_equal(res.unresolved_cpu, 0);
	assert_int_equal(res.unresolved_on_cpu, 2);
	assert_string_equal(res.unresolved_fn, "timerfd_tmrproc");
	assert_non_null(f = open_memstream(&out, &len));
	replay_print_table(f, "t", &res, RP_BY_PROCESS);
	assert_int_equal(fclose(f), 0);
	assert_non_null(line = strstr(out, "\nkernel*  "));
	assert_non_null(strstr(line, " n/a "));
	assert_true(strstr(line, " n/a ") < strchr(line + 1, '\n'));
	assert_non_null(strstr(out, "* kernel row incomplete: 2 of 6 armings (33 %)"));
	assert_non_null(strstr(out, "2 of them on CPU 0 and 2 with function timerfd_tmrproc"));
	assert_non_null(strstr(out, "vs_opt: wakeups / optimum"));       /* the legend */
	free(out);
	/* Complete when every arming is resolved. */
	assert_int_equal(replay_str("  a 1 [000] 1.0: timer:hrtimer_start: hrtimer=0xa function=f "
				    "expires=1000010000 softexpires=1000005000 mode=0x0\n"
				    "  a 1 [000] 1.00002: timer:hrtimer_expire_entry: hrtimer=0xa "
				    "function=f now=1000010050\n", RP_IDLE_TRACE, &res), 0);
	assert_false(res.kernel_incomplete);
}

/* The verdict's figures are the table's: read both back from the text. */
static void test_verdict_matches_table(void **state)
{
	struct replay_result res;
	char *out = NULL, *v;
	size_t len = 0;
	unsigned long long w[RP_NPOL], opt = 0, vopt = 0, sv = 0, busy = 0, obusy = 0, gr = 0;
	double pc;
	FILE *f;

	(void)state;
	assert_int_equal(replay_str(procs, RP_IDLE_TRACE, &res), 0);
	assert_non_null(f = open_memstream(&out, &len));
	replay_print_table(f, "t", &res, RP_BY_PROCESS);
	assert_int_equal(fclose(f), 0);
	/* The verdict comes before the table. */
	assert_non_null(v = strstr(out, "verdict: "));
	assert_true(v < strstr(out, "\npolicy "));
	assert_int_equal(sscanf(v, "verdict: this trace needs %llu wake-ups with greedy off, "
				"%llu wake-ups with greedy idle, %llu wake-ups with greedy always; "
				"the optimum is %llu.", &w[0], &w[1], &w[2], &vopt), 4);
	for (int p = 0; p < RP_NPOL; p++) {
		char key[16], *row;
		unsigned long long rw, rexp, rgr, rbusy;

		snprintf(key, sizeof(key), "\n%-8s ", replay_policy_names[p]);
		assert_non_null(row = strstr(out, key));
		assert_int_equal(sscanf(row + 1, "%*s %llu %*f %llu %llu %llu", &rw, &rexp, &rgr,
					&rbusy), 4);
		assert_int_equal(w[p], rw);
		if (p == RP_OFF) {
			obusy = rbusy;
			continue;
		}
		snprintf(key, sizeof(key), "  %s saves ", replay_policy_names[p]);
		assert_non_null(v = strstr(out, key));
		assert_int_equal(sscanf(v + strlen(key), "%llu wake-ups (%lf %%) and runs %llu timers "
					"in busy time against off's %llu (%*d moved out of busy "
					"time); %llu of its runs", &sv, &pc, &busy, &opt, &gr), 5);
		assert_int_equal(sv, w[RP_OFF] - rw);
		assert_true(pc > 100.0 * (double)sv / (double)w[RP_OFF] - 0.05 &&
			    pc < 100.0 * (double)sv / (double)w[RP_OFF] + 0.05);
		assert_int_equal(busy, rbusy);
		assert_int_equal(opt, obusy);
		assert_int_equal(gr, rgr);
	}
	assert_non_null(v = strstr(out, "\noptimum "));
	assert_int_equal(sscanf(v + 1, "optimum %llu", &opt), 1);
	assert_int_equal(opt, vopt);
	assert_int_equal(w[RP_OFF] - w[RP_ALWAYS], 1);          /* the trace's point */
	free(out);
}

/* The table of a trace given as text, printed into a malloc'ed string. */
static char *table_of(const char *trace)
{
	struct replay_result res;
	char *out = NULL;
	size_t len = 0;
	FILE *f;

	assert_int_equal(replay_str(trace, RP_IDLE_TRACE, &res), 0);
	assert_non_null(f = open_memstream(&out, &len));
	replay_print_table(f, "t", &res, RP_BY_PROCESS);
	assert_int_equal(fclose(f), 0);
	replay_result_free(&res);
	return out;
}

/* Greedy can run more timers in busy time than off (it runs them early,
 * in a pass while the CPU is busy): the verdict says so in words, never
 * "-1 moved out of busy time". */
static void test_verdict_more_in_busy_time_is_said_not_negative(void **state)
{
	char *out;

	(void)state;
	/* A due at 10 us while busy; the walk stops at C (25..30), so off runs
	 * D (8..40) at 30 us, idle; always runs it at 10 us, busy */
	out = table_of("# hrt-trace v1\n0 0 busy\n1 0 start 1 5000 10000\n"
		       "2 0 start 2 8000 40000\n3 0 start 3 25000 30000\n12000 0 idle\n"
		       "50000 0 idle\n");
	assert_non_null(strstr(out, "always saves 0 wake-ups (0.0 %) and runs 2 timers in busy "
				    "time against off's 1 (1 more: run early, in passes while the "
				    "CPU was busy anyway)"));
	assert_null(strstr(out, "(-"));
	free(out);
}

/* The kernel can need fewer wake-ups than the optimum only by running
 * timers late: the table says so under it. */
static void test_kernel_below_optimum_is_explained(void **state)
{
	char *out;

	(void)state;
	out = table_of(" a-1 [000] d..1. 5.000000: hrtimer_start: hrtimer=0x1 function=f "
		       "expires=5000100000 softexpires=5000050000 mode=ABS\n"
		       " a-1 [000] d..1. 5.000010: hrtimer_start: hrtimer=0x3 function=f "
		       "expires=5000400000 softexpires=5000300000 mode=ABS\n"
		       " <idle>-0 [000] d.h1. 5.000501: hrtimer_expire_entry: hrtimer=0x1 "
		       "function=f now=5000500000\n"
		       " <idle>-0 [000] d.h1. 5.000502: hrtimer_expire_entry: hrtimer=0x3 "
		       "function=f now=5000500000\n");
	assert_non_null(strstr(out, "\nkernel           1   0.500 "));
	assert_non_null(strstr(out, "kernel below the optimum (vs_opt < 1): the kernel ran "
				    "timers after their hard expiry (late_max 450000 ns)"));
	assert_non_null(strstr(out, "early_p50: hard expiry - run\ntime (ns; negative: the run "
				    "came after its hard expiry"));
	free(out);
}

/* JSON strings: control characters, quotes, backslashes escaped; bytes
 * that are not UTF-8 (stray continuation, truncated, overlong, surrogate)
 * become U+FFFD; valid multi-byte characters pass. */
static void test_json_escape(void **state)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	assert_non_null(f = open_memstream(&out, &len));
	text_json_str(f, "a\"b\\c\n\x01\x7f \xc2\xb5s \xe2\x82\xac \xf0\x9f\x98\x80 "
			"\x80 \xc3 \xc0\xaf \xed\xa0\x80 \xff\xfe end\xe2\x82");
	assert_int_equal(fclose(f), 0);
	assert_string_equal(out, "\"a\\\"b\\\\c\\u000a\\u0001\\u007f \xc2\xb5s \xe2\x82\xac "
			    "\xf0\x9f\x98\x80 \\ufffd \\ufffd \\ufffd\\ufffd "
			    "\\ufffd\\ufffd\\ufffd \\ufffd\\ufffd end\\ufffd\\ufffd\"");
	free(out);
}

/* CPUs are independent: a trace over many CPUs replays to the sums of its
 * per-CPU parts (checks the device heap against 64 one-CPU replays). */
static void test_many_cpus(void **state)
{
	enum { NC = 64, NE = 3000 };
	char *all = malloc(NE * 64), *one = malloc(NE * 64);
	long ts[NE];
	int cpu[NE], id[NE];
	long soft[NE], hard[NE];
	struct replay_result res, part;
	uint64_t w[RP_NPOL] = { 0 }, opt = 0, greedy[RP_NPOL] = { 0 };
	static char started[NC * 1000];
	int n = 0;
	long t = 0;

	(void)state;
	for (int i = 0; i < NE; i++) {
		t += (long)(rnd() % 50);
		ts[i] = t;
		cpu[i] = (int)(rnd() % NC);
		id[i] = cpu[i] * 1000 + (int)(rnd() % 8);   /* timers stay on their CPU */
		soft[i] = t + (long)(rnd() % 4000);
		hard[i] = soft[i] + (long)(rnd() % 3000);
		if (rnd() % 4 == 0 && started[id[i]])
			soft[i] = -1;                       /* a cancel */
		started[id[i]] = 1;
	}
	n = sprintf(all, "# hrt-trace v1\n");
	for (int i = 0; i < NE; i++)
		n += soft[i] < 0 ? sprintf(all + n, "%ld %d cancel %d\n", ts[i], cpu[i], id[i])
				 : sprintf(all + n, "%ld %d start %d %ld %ld\n", ts[i], cpu[i], id[i],
					   soft[i], hard[i]);
	sprintf(all + n, "%ld 0 idle\n", t + 100000);
	assert_int_equal(replay_str(all, RP_IDLE_ALWAYS, &res), 0);
	for (int c = 0; c < NC; c++) {
		n = sprintf(one, "# hrt-trace v1\n");
		for (int i = 0; i < NE; i++) {
			if (cpu[i] != c)
				continue;
			n += soft[i] < 0 ? sprintf(one + n, "%ld 0 cancel %d\n", ts[i], id[i])
					 : sprintf(one + n, "%ld 0 start %d %ld %ld\n", ts[i], id[i],
						   soft[i], hard[i]);
		}
		sprintf(one + n, "%ld 0 idle\n", t + 100000);
		assert_int_equal(replay_str(one, RP_IDLE_ALWAYS, &part), 0);
		for (int p = 0; p < RP_NPOL; p++) {
			w[p] += part.pol[p].wakeups;
			greedy[p] += part.pol[p].expired_greedy;
		}
		opt += part.optimal_wakeups;
	}
	for (int p = 0; p < RP_NPOL; p++) {
		assert_int_equal(res.pol[p].wakeups, w[p]);
		assert_int_equal(res.pol[p].expired_greedy, greedy[p]);
	}
	assert_int_equal(res.optimal_wakeups, opt);
	assert_true(res.pol[RP_OFF].wakeups > res.pol[RP_ALWAYS].wakeups);   /* not trivial */
	free(all);
	free(one);
}

/*
 * A shell loop (`while :; do sleep 0.001 & sleep 0.0008; done`, its
 * background sleepers): bash 500 starts a child every 0.8 ms for 1.6 s
 * (sched_process_fork), each child - a new PID - sleeps 1 ms once and is
 * gone; and at the start it also starts svc 9000,
 * which sleeps 100 ms at a time for 2.5 s.  A process's wake-ups in its
 * first second count for the process that started it: bash's row has the
 * 2000 sleeps and svc's first 10, svc its last 15, and no child has a row
 * of its own (d4ebe1c: 2000 one-wake-up rows "sleep 6xx", none for bash).
 */
struct line {
	long long t;
	int seq;
	char s[200];
};

static int line_cmp(const void *x, const void *y)
{
	const struct line *a = x, *b = y;

	return a->t != b->t ? (a->t < b->t ? -1 : 1) : a->seq - b->seq;
}

static char *shell_loop(void)
{
	const long long T = 1000000000LL, step = 800000, n = 2000, end = T + 2500000000LL;
	struct line *l = calloc(3 * n + 64, sizeof(*l));
	size_t nl = 0, len = 0, cap = (3 * n + 64) * 200;
	char *t = malloc(cap);

	assert_non_null(l);
	assert_non_null(t);
#define LINE(at, ...) (l[nl].t = (at), l[nl].seq = (int)nl, \
		       snprintf(l[nl].s, sizeof(l[nl].s), __VA_ARGS__), nl++)
	LINE(T, "  bash 500/500 [000] 1.000000000: sched:sched_process_fork: comm=bash pid=500 "
	     "child_comm=bash child_pid=9000\n");
	for (long long d = T, k = 0; d + 100000000 <= end; d += 100000000, k++) {
		LINE(d, "  svc 9000/9000 [000] %lld.%09lld: timer:hrtimer_start: hrtimer=0x%llx "
		     "function=hrtimer_wakeup expires=%lld softexpires=%lld mode=ABS\n", d / T, d % T,
		     0x90000 + k, d + 100000000, d + 100000000);
		LINE(d + 100000000, "  swapper 0/0 [000] %lld.%09lld: timer:hrtimer_expire_entry: "
		     "hrtimer=0x%llx function=hrtimer_wakeup now=%lld\n", (d + 100000000) / T,
		     (d + 100000000) % T, 0x90000 + k, d + 100000000);
	}
	for (long long k = 0; k < n; k++) {
		long long f = T + 1000 + k * step, a = f + 100000, e = a + 1000000;

		LINE(f, "  bash 500/500 [000] %lld.%09lld: sched:sched_process_fork: comm=bash pid=500 "
		     "child_comm=bash child_pid=%lld\n", f / T, f % T, 600 + k);
		LINE(a, "  sleep %lld/%lld [000] %lld.%09lld: timer:hrtimer_start: hrtimer=0x%llx "
		     "function=hrtimer_wakeup expires=%lld softexpires=%lld mode=REL\n", 600 + k,
		     600 + k, a / T, a % T, 0x1000 + k, e, e);
		LINE(e, "  swapper 0/0 [000] %lld.%09lld: timer:hrtimer_expire_entry: hrtimer=0x%llx "
		     "function=hrtimer_wakeup now=%lld\n", e / T, e % T, 0x1000 + k, e);
	}
#undef LINE
	qsort(l, nl, sizeof(*l), line_cmp);
	t[0] = 0;
	for (size_t i = 0; i < nl; i++)
		len += (size_t)snprintf(t + len, cap - len, "%s", l[i].s);
	free(l);
	return t;
}

static void test_short_lived_children_count_for_their_parent(void **state)
{
	struct replay_result res;
	const struct replay_by *bp = &res.by[RP_BY_PROCESS];
	char *t = shell_loop();

	(void)state;
	assert_int_equal(replay_str(t, RP_IDLE_TRACE, &res), 0);
	assert_int_equal(res.kernel.wakeups, 2000 + 25);
	assert_int_equal(group(bp, "bash 500")->w[RP_NPOL], 2000 + 10);
	assert_int_equal(group(bp, "bash 500")->w[RP_OFF], 2000 + 10);
	assert_int_equal(group(bp, "svc 9000")->w[RP_NPOL], 15);
	assert_int_equal(bp->ngroups, 2);
	/* threads are still threads: each child is one */
	assert_int_equal(res.by[RP_BY_THREAD].ngroups, 2000 + 1);
	replay_result_free(&res);
	/* with 1 ms of slack (the children's windows overlap then) the
	 * verdict's advice names the parent, whose slack its next children
	 * inherit */
	{
		struct trace_reader *r;
		struct slack sl;
		char why[200], *v = NULL;
		size_t vlen = 0;
		FILE *m;

		memset(&sl, 0, sizeof(sl));
		assert_int_equal(slack_parse(&sl, "1ms", why, sizeof(why)), 0);
		assert_int_equal(trace_open_mem(&r, t, strlen(t), "t", 0, TRACE_AUTO), 0);
		assert_int_equal(replay_trace(r, &(const struct replay_opts){ RP_ALL, RP_IDLE_TRACE,
							0, &sl, NULL }, &res), 0);
		trace_close(r);
		assert_non_null(m = open_memstream(&v, &vlen));
		replay_print_verdict(m, &res);
		assert_int_equal(fclose(m), 0);
		if (!strstr(v, "; most: hrt slack 1ms 500 (bash 500; what it starts from then on "
			    "inherits it)."))
			fail_msg("the advice does not name bash 500: %s", v);
		free(v);
		replay_result_free(&res);
		slack_free(&sl);
	}
	free(t);
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
		cmocka_unit_test(test_by_process),
		cmocka_unit_test(test_process_is_the_thread_group_threads_on_request),
		cmocka_unit_test(test_perf_pid_slash_tid_is_process_and_thread),
		cmocka_unit_test(test_kernel_incomplete),
		cmocka_unit_test(test_verdict_matches_table),
		cmocka_unit_test(test_verdict_more_in_busy_time_is_said_not_negative),
		cmocka_unit_test(test_kernel_below_optimum_is_explained),
		cmocka_unit_test(test_json_escape),
		cmocka_unit_test(test_many_cpus),
		cmocka_unit_test(test_short_lived_children_count_for_their_parent),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
