/* SPDX-License-Identifier: MIT */
/*
 * workload.h - the one workload generator and harness every peer program
 * shares.  A program defines LIB_NAME, includes this header, and defines the
 * adapter functions declared below with its library's public API; main() is
 * here, so every library runs the same code with the same seed, the same
 * expiry distribution and the same timing.  The adapter calls are static and
 * defined in the same file, so the compiler inlines them: no indirect call
 * sits between the harness and the library.
 *
 * Usage: prog N [workloads]  (comma-separated from start_cancel, rearm,
 *                              timeout, tail, memory, expiry, range,
 *                              loop_rearm, loop_lru, loop_iter; default
 *                              all but tail; the loop_ ones only in a
 *                              program that defines LIB_LOOP)
 *        prog N ops K WORKLOAD  set up N, run K ops of start_cancel, rearm
 *                               or timeout once, print nothing (for
 *                               valgrind/perf)
 * Environment (the op workloads and tail; every program reads the same):
 *   DIST=10ms-1s|1s-10s|10s-70s  where the expiries fall (default 10s-70s),
 *                                with the timeout's constant duration
 *                                (1 s, 5 s, 30 s)
 *   WINDOW=0|50us|1%|10%|100%    each timer's window (hard - soft), a
 *                                constant or a share of its delay; a
 *                                library without windows gets the soft
 *                                expiry as its deadline
 * Output: CSV lines  library,workload,n,metric,median,min,max,reps
 *
 * Times are int64 nanoseconds from the instant lib_begin() was called; each
 * adapter converts to its library's unit (rounding up, so nothing is early).
 */
#ifndef PEERS_WORKLOAD_H
#define PEERS_WORKLOAD_H

#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define NS_MS 1000000LL
#define NS_S 1000000000LL

/* Workload parameters: one place, the same for every library. */
#define SEED 0x6872745f70656572ULL     /* "hrt_peer" */
#define OPS_BASE (10 * NS_S)            /* op workloads: expiry in          */
#define OPS_SPAN (60 * NS_S)            /*   [10 s, 70 s) from now, uniform */
#define EXP_BASE (1 * NS_MS)            /* expiry: [1 ms, 51 ms)            */
#define EXP_SPAN (50 * NS_MS)
#define RANGE_BASE (5 * NS_MS)          /* range: soft in [B, B + span),    */
#define RANGE_SPAN (400 * NS_MS)        /*   span 400 ms per 10^5 timers (at */
#define RANGE_PER 100000                /*   least 400 ms): <= 250k timers/s */
#define SLACK_MIN (10 * NS_MS)          /*   slack in [10 ms, 20 ms)        */
#define SLACK_SPAN (10 * NS_MS)
#define TMO_OFF (30 * NS_S)             /* timeout: re-arm to now + 30 s */
#define OPS_K 100000                    /* ops per timed repetition */
#define OPS_PASS 64                     /* a loop iteration (lib_pass) every 64 ops */
#define OPS_REPS 7                      /* after one untimed warm-up */
#define EXP_REPS 5
#define EXP_MAX_CALLS 100000            /* a library that fires one timer per
					   dispatch call is timed on its first
					   100000 (sd-event at N = 10^6) */
#define RANGE_REPS 5
#define MAXREPS 16

/* The expiry distribution and the windows of the op workloads (DIST,
 * WINDOW: set in main, the same for every library). */
static int64_t ops_base = OPS_BASE, ops_span = OPS_SPAN, tmo_off = TMO_OFF;
static int64_t win_abs;         /* a constant window, ns */
static int64_t win_permille;    /* or a share of the delay */

static int64_t window_for(int64_t delay)
{
	return win_abs + delay / 1000 * win_permille;
}

/* The adapter: each program defines these. ------------------------------ */
static void lib_loop_new(void);
static void lib_loop_free(void);
static void lib_timers_new(size_t n);  /* n + 1 timers; index n is "the extra" */
static void lib_timers_free(size_t n);
static void lib_begin(void);           /* refresh the library's now; offsets count from here */
/* Arm timer i (not armed) for [off, off + slack]; libraries without ranges
 * take a deadline at off. */
static void lib_arm(size_t i, int64_t off, int64_t slack);
static void lib_rearm(size_t i, int64_t off, int64_t slack);  /* timer i is armed */
/* Timer i is armed: re-arm it to the library's now (as of the last
 * lib_begin) + off, where off is always TMO_OFF: the idle-connection
 * timeout, whose keys only grow.  A library with a structure for one
 * constant duration uses it here (libevent's common timeouts). */
static void lib_timeout(size_t i, int64_t off, int64_t slack);
static void lib_cancel(size_t i);
static void lib_dispatch_nowait(void); /* one non-blocking pass of the library's loop */
/* What a loop iteration with nothing due does to the timer structure: work
 * a library defers from its calls to its next pass (hrt moves timers
 * started since the last pass into its tree) is charged to the op
 * workloads here.  No system calls: those are not the timer structure's. */
static void lib_pass(void);
static void lib_run_until(size_t target); /* the library's blocking loop until fired >= target */
static size_t lib_struct_size(void);   /* bytes of the per-timer struct the user embeds/allocates */
#ifdef LIB_LOOP
/* The loop workloads (run_loop): the library's own loop runs, and each of
 * its iterations calls loop_step() once from the loop's thread, as a
 * server's handlers re-arm timers: libev from an ev_idle, libuv from a
 * uv_idle_t, hrt_base_loop from a timer due at every pass, the fd path
 * from the host loop's code after its epoll_wait (and dispatch).  Runs
 * until loop_step() returns 0. */
static int loop_step(void);
static void lib_loop_drive(void);
/* The library's wake-up device re-arms so far (hrt: stats.reprograms), or
 * -1 where it has no such count. */
static long lib_rearms(void);
#endif

/* Callbacks count here. */
static size_t fired;
/* A simulated-time adapter sets this to the wake-ups it counted itself;
 * otherwise the range workload counts the thread's voluntary switches. */
static long sim_wakeups = -1;

/* A fast PRNG (splitmix64) and uniform draws. ---------------------------- */
static uint64_t rng_state;

static inline uint64_t rng_next(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static inline uint64_t rng_below(uint64_t n)
{
	return (uint64_t)(((unsigned __int128)rng_next() * n) >> 64);
}

static inline int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * NS_S + ts.tv_nsec;
}

static inline int64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * NS_S + ts.tv_nsec;
}

static void sleep_until(int64_t t)
{
	struct timespec ts = { (time_t)(t / NS_S), (long)(t % NS_S) };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL))
		;
}

static long vol_switches(void)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	return ru.ru_nvcsw;
}

static size_t heap_in_use(void)
{
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n);

	if (!p) {
		fprintf(stderr, "%s: out of memory\n", LIB_NAME);
		exit(1);
	}
	return p;
}

static void die(const char *what, int err)
{
	fprintf(stderr, "%s: %s failed (%d)\n", LIB_NAME, what, err);
	exit(1);
}

/* Results ----------------------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void report(const char *workload, size_t n, const char *metric, double *v, int reps)
{
	qsort(v, (size_t)reps, sizeof(*v), cmp_double);
	printf("%s,%s,%zu,%s,%.2f,%.2f,%.2f,%d\n", LIB_NAME, workload, n, metric,
	       reps % 2 ? v[reps / 2] : (v[reps / 2 - 1] + v[reps / 2]) / 2, v[0], v[reps - 1],
	       reps);
	fflush(stdout);
}

/* The workloads ----------------------------------------------------------- */

/* The op stream: the same K (index, offset) pairs for every library. */
static size_t *ops_idx;
static int64_t *ops_off, *ops_slack;

static void make_ops(size_t n, size_t k)
{
	size_t j;

	ops_idx = xmalloc(k * sizeof(*ops_idx));
	ops_off = xmalloc(k * sizeof(*ops_off));
	ops_slack = xmalloc(k * sizeof(*ops_slack));
	for (j = 0; j < k; j++) {
		ops_idx[j] = (size_t)rng_below(n);
		ops_off[j] = ops_base + (int64_t)rng_below((uint64_t)ops_span);
		ops_slack[j] = window_for(ops_off[j]);
	}
}

static void arm_all(size_t n, int64_t base, int64_t span, int64_t smin, int64_t sspan)
{
	size_t i;

	rng_state = SEED;
	lib_begin();
	for (i = 0; i < n; i++) {
		int64_t off = base + (int64_t)rng_below((uint64_t)span);
		int64_t slack = sspan ? smin + (int64_t)rng_below((uint64_t)sspan) : smin;

		if (smin < 0)           /* the op workloads' window */
			slack = window_for(off);

		lib_arm(i, off, slack);
	}
	lib_pass();     /* deferred insertion belongs to the untimed set-up */
}

/* Not inlined, so a profiler can count exactly these loops
 * (valgrind --toggle-collect=op_start_cancel). */
__attribute__((noinline)) static void op_start_cancel(size_t n, size_t k)
{
	size_t j;

	for (j = 0; j < k; j++) {
		lib_arm(n, ops_off[j], ops_slack[j]);
		lib_cancel(n);
		if (j % OPS_PASS == OPS_PASS - 1)
			lib_pass();
	}
}

__attribute__((noinline)) static void op_rearm(size_t n, size_t k)
{
	size_t j;

	(void)n;
	for (j = 0; j < k; j++) {
		lib_rearm(ops_idx[j], ops_off[j], ops_slack[j]);
		if (j % OPS_PASS == OPS_PASS - 1)
			lib_pass();
	}
}

/*
 * The idle-connection timeout: a random armed timer is re-armed to now +
 * TMO_OFF, so every new key is at or after every key set before it.  Each
 * loop iteration (every OPS_PASS ops) first refreshes the library's now
 * (lib_begin: ev_now_update, uv_update_time, a clock read) and then runs
 * the pass, so now advances with real time as in a running loop.  Nothing
 * can fire: every key is at least 10 s (DIST=1s-10s: 1 s) after the last
 * refresh; with DIST=10ms-1s every timer is first re-armed from a fresh
 * now to 2-3 s ahead, untimed (run_ops), and the run is shorter than that.
 */
__attribute__((noinline)) static void op_timeout(size_t n, size_t k)
{
	const int64_t slack = window_for(tmo_off);
	size_t j;

	(void)n;
	for (j = 0; j < k; j++) {
		lib_timeout(ops_idx[j], tmo_off, slack);
		if (j % OPS_PASS == OPS_PASS - 1) {
			lib_begin();
			lib_pass();
		}
	}
}

/* The op workloads, in the order they run. */
static const struct {
	const char *name;
	void (*run)(size_t n, size_t k);
} op_workloads[] = {
	{ "start_cancel", op_start_cancel },
	{ "rearm", op_rearm },
	{ "timeout", op_timeout },
};
#define N_OP_WORKLOADS (sizeof(op_workloads) / sizeof(op_workloads[0]))

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

static long invol_switches(void)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	return ru.ru_nivcsw;
}

/*
 * The tail of one operation: OPS_REPS * OPS_K re-arms of random timers
 * (a start of a queued timer), each timed alone with two clock reads (their
 * own cost, about 20 ns here, included), passes every OPS_PASS ops untimed.
 * Reports the 50th, 99th, 99.9th percentile and the maximum in ns, how many
 * took over 50 us, of those how many were not preempted (no involuntary
 * context switch since the count was last read, at most 256 ops before:
 * a system call per op would disturb what it measures), and the
 * involuntary switches during the run.
 */
static void run_tail(size_t n)
{
	size_t k = (size_t)OPS_REPS * OPS_K, j;
	int64_t *lat = xmalloc(k * sizeof(*lat));
	double v[1];
	long over = 0, alone = 0, sw, base, now;

	sw = base = invol_switches();
	for (j = 0; j < k; j++) {
		size_t q = j % OPS_K;
		int64_t t0 = now_ns();

		lib_rearm(ops_idx[q], ops_off[q], ops_slack[q]);
		lat[j] = now_ns() - t0;
		if (lat[j] > 50000) {
			now = invol_switches();
			alone += now == base;
			base = now;
		}
		if (j % OPS_PASS == OPS_PASS - 1)
			lib_pass();
		if (j % 256 == 255)
			base = invol_switches();
	}
	sw = invol_switches() - sw;
	qsort(lat, k, sizeof(*lat), cmp_i64);
	for (j = 0; j < k; j++)
		over += lat[j] > 50000;
#define TAIL(metric, x) (v[0] = (double)(x), report("tail", n, metric, v, 1))
	TAIL("p50_ns", lat[k / 2]);
	TAIL("p99_ns", lat[k - k / 100]);
	TAIL("p999_ns", lat[k - k / 1000]);
	TAIL("max_ns", lat[k - 1]);
	TAIL("over_50us", over);
	TAIL("over_50us_alone", alone);
	TAIL("invol_switches", sw);
#undef TAIL
	free(lat);
}

static int wants(const char *list, const char *w)
{
	size_t l = strlen(w);
	const char *p;

	if (!strcmp(list, "all"))
		return 1;
	for (p = list; (p = strstr(p, w)); p += l)
		if ((p == list || p[-1] == ',') && (p[l] == ',' || p[l] == 0))
			return 1;
	return 0;
}

/*
 * N armed timers; each wanted op workload in turn (one untimed warm-up,
 * then OPS_REPS timed repetitions of OPS_K ops); memory per armed timer.
 * start_cancel and rearm keep the keys' distribution; timeout runs last,
 * as it moves the keys it touches to now + TMO_OFF.
 */
static void run_ops(size_t n, const char *list)
{
	double v[MAXREPS], mem[1];
	size_t before, w;
	int r;

	lib_loop_new();
	before = heap_in_use();
	lib_timers_new(n);
	arm_all(n, ops_base, ops_span, -1, 0);
	mem[0] = (double)(heap_in_use() - before) / (double)n;
	rng_state = SEED ^ 0x5c;
	make_ops(n, OPS_K);
	fired = 0;
	for (w = 0; w < N_OP_WORKLOADS; w++) {
		if (!wants(list, op_workloads[w].name))
			continue;
		if (op_workloads[w].run == op_timeout && ops_base < NS_S) {
			/* The time since arming has passed most keys of
			 * 10ms-1s: every timer re-armed from a fresh now to
			 * [2 s, 3 s), untimed, so none is due before the
			 * re-arming and the run have lasted 2 s. */
			size_t i;

			lib_begin();
			for (i = 0; i < n; i++) {
				int64_t off = 2 * tmo_off + (int64_t)rng_below((uint64_t)ops_span);

				lib_rearm(i, off, window_for(off));
			}
			lib_pass();
		}
		for (r = -1; r < OPS_REPS; r++) {
			int64_t t0 = now_ns();

			op_workloads[w].run(n, OPS_K);
			if (r >= 0)
				v[r] = (double)(now_ns() - t0) / OPS_K;
		}
		if (fired) {
			fprintf(stderr, "%s: %zu timers fired during %s\n", LIB_NAME, fired,
				op_workloads[w].name);
			exit(1);
		}
		report(op_workloads[w].name, n, "ns_per_op", v, OPS_REPS);
	}
	if (strstr(list, "tail"))      /* only when named: "all" leaves it out */
		run_tail(n);
	if (wants(list, "memory")) {
		report("memory", n, "bytes_per_timer", mem, 1);
		mem[0] = (double)lib_struct_size();
		report("memory", n, "struct_bytes", mem, 1);
	}
	free(ops_idx);
	free(ops_off);
	free(ops_slack);
	lib_timers_free(n);
	lib_loop_free();
}

/* All N due: ns per timer fired through the library's own dispatch. */
static void run_expiry(size_t n)
{
	double ns[MAXREPS], calls[MAXREPS], timed[MAXREPS];
	int r;

	for (r = 0; r < EXP_REPS; r++) {
		int64_t t0, t1;
		size_t c = 0;

		lib_loop_new();
		lib_timers_new(n);
		arm_all(n, EXP_BASE, EXP_SPAN, -1, 0);         /* with WINDOW's windows */
		/* Every deadline counted from the last arm, plus 2 ms of margin
		 * for libraries with millisecond clocks. */
		sleep_until(now_ns() + EXP_BASE + EXP_SPAN + 2 * NS_MS);
		fired = 0;
		t0 = now_ns();
		while (fired < n && c < EXP_MAX_CALLS) {
			lib_dispatch_nowait();
			c++;
		}
		t1 = now_ns();
		ns[r] = (double)(t1 - t0) / (double)fired;
		calls[r] = (double)c;
		timed[r] = (double)fired;
		lib_timers_free(n);
		lib_loop_free();
	}
	report("expiry", n, "ns_per_timer", ns, EXP_REPS);
	report("expiry", n, "dispatch_calls", calls, EXP_REPS);
	report("expiry", n, "timers_timed", timed, EXP_REPS);
}

/*
 * Range timers in real time: soft expiries spread over RANGE_SPAN, each with
 * a slack; the library's own blocking loop runs until all fired.  Wake-ups
 * are the voluntary context switches of the thread (each blocking wait that
 * slept); ns per timer is the thread's CPU time over the run.  Arming N
 * timers can take longer than the span, so a first, untimed arming measures
 * this library's setup time S and the soft expiries start at
 * max(B, 1.25 S + 5 ms): every library starts its loop before its first
 * timer is due, and sees the same spread of instants.  The span grows with
 * N so the rate stays at most 250k timers/s; busy_pct is CPU time over the
 * loop's wall time: near 100 the library could not keep up, never slept,
 * and its wake-up count says nothing.
 */
static void run_range(size_t n)
{
	double ns[MAXREPS], wk[MAXREPS], busy[MAXREPS];
	int64_t span = RANGE_SPAN * (int64_t)(n > RANGE_PER ? n / RANGE_PER : 1);
	int64_t base, t;
	int r;

	lib_loop_new();
	lib_timers_new(n);
	t = now_ns();
	arm_all(n, 1000 * NS_S, span, SLACK_MIN, SLACK_SPAN);
	t = now_ns() - t;
	lib_timers_free(n);
	lib_loop_free();
	base = t + t / 4 + 5 * NS_MS;
	if (base < RANGE_BASE)
		base = RANGE_BASE;

	for (r = 0; r < RANGE_REPS; r++) {
		int64_t c0, w0;
		long v0;

		lib_loop_new();
		lib_timers_new(n);
		arm_all(n, base, span, SLACK_MIN, SLACK_SPAN);
		fired = 0;
		sim_wakeups = -1;
		v0 = vol_switches();
		w0 = now_ns();
		c0 = thread_cpu_ns();
		lib_run_until(n);
		c0 = thread_cpu_ns() - c0;
		w0 = now_ns() - w0;
		ns[r] = (double)c0 / (double)n;
		busy[r] = 100.0 * (double)c0 / (double)(w0 > 0 ? w0 : 1);
		wk[r] = (double)(sim_wakeups >= 0 ? sim_wakeups : vol_switches() - v0);
		lib_timers_free(n);
		lib_loop_free();
	}
	report("range", n, "ns_per_timer", ns, RANGE_REPS);
	report("range", n, "wakeups", wk, RANGE_REPS);
	report("range", n, "busy_pct", busy, RANGE_REPS);
}

#ifdef LIB_LOOP
/*
 * The op workloads from inside the library's running loop (LIB_LOOP): each
 * loop iteration (its poll, with a timeout of 0 since work is pending, and
 * its timer check) calls loop_step, which refreshes the library's now
 * (lib_begin) and makes OPS_PASS ops:
 *   loop_rearm  a random armed timer re-armed to a random expiry (rearm's
 *               op stream);
 *   loop_lru    the timer due first re-armed to now + TMO_OFF (a keep-alive
 *               pushed on; the set first re-armed once in order, so the
 *               timer due first is always the next in index order);
 *   loop_iter   no ops: what an iteration of the loop costs by itself.
 * hrt's programs also report the timerfd re-arms (stats.reprograms) per
 * million ops of loop_rearm and loop_lru, warm-up included.
 * A repetition is the iterations that make OPS_K ops (OPS_K / OPS_PASS
 * rounded up), timed from the first iteration's loop_step to the first of
 * the next: the loop's own work between them is in it.  One warm-up, then
 * OPS_REPS.  loop_iter's repetitions are LOOP_ITERS iterations each.
 */
#define LOOP_ITERS 4096

static struct {
	int lru, empty;
	size_t n, oldest;
	size_t j;               /* ops (loop_iter: iterations) so far */
	size_t next;            /* where the current repetition ends */
	size_t per;             /* ops (iterations) a repetition */
	int rep;                /* -2: not started; -1: the warm-up */
	int64_t mark;           /* when the current repetition began */
	size_t mark_j;
	double v[MAXREPS];
} drv;

static int loop_step(void)
{
	size_t e;

	if (drv.rep == -2) {
		drv.rep = -1;
		drv.mark = now_ns();
		drv.mark_j = drv.j;
		drv.next = drv.j + drv.per;
	}
	if (drv.j >= drv.next) {
		int64_t t = now_ns();

		if (drv.rep >= 0)
			drv.v[drv.rep] = (double)(t - drv.mark) / (double)(drv.j - drv.mark_j);
		if (++drv.rep == OPS_REPS)
			return 0;
		drv.mark = t;
		drv.mark_j = drv.j;
		drv.next = drv.j + drv.per;
	}
	if (drv.empty) {
		drv.j++;
		return 1;
	}
	lib_begin();
	for (e = 0; e < OPS_PASS; e++, drv.j++) {
		if (drv.lru) {
			lib_timeout(drv.oldest, tmo_off, window_for(tmo_off));
			drv.oldest = drv.oldest + 1 == drv.n ? 0 : drv.oldest + 1;
		} else {
			size_t q = drv.j % OPS_K;

			lib_rearm(ops_idx[q], ops_off[q], ops_slack[q]);
		}
	}
	return 1;
}

static void drive(size_t n, int lru, int empty)
{
	memset(&drv, 0, sizeof(drv));
	drv.n = n;
	drv.lru = lru;
	drv.empty = empty;
	drv.per = empty ? LOOP_ITERS : (OPS_K + OPS_PASS - 1) / OPS_PASS * OPS_PASS;
	drv.rep = -2;
	lib_loop_drive();
}

static void run_loop(size_t n, const char *list)
{
	double v[1];
	long r0;
	size_t i;

	lib_loop_new();
	lib_timers_new(n);
	arm_all(n, ops_base, ops_span, -1, 0);
	rng_state = SEED ^ 0x5c;
	make_ops(n, OPS_K);
	fired = 0;
	if (wants(list, "loop_rearm")) {
		r0 = lib_rearms();
		drive(n, 0, 0);
		if (fired) {
			fprintf(stderr, "%s: %zu timers fired during loop_rearm\n", LIB_NAME, fired);
			exit(1);
		}
		report("loop_rearm", n, "ns_per_op", drv.v, OPS_REPS);
		if (r0 >= 0) {
			v[0] = 1e6 * (double)(lib_rearms() - r0) / (double)drv.j;
			report("loop_rearm", n, "rearms_per_1m_ops", v, 1);
		}
	}
	if (wants(list, "loop_lru")) {
		/* Every timer re-armed once, in index order, to now + TMO_OFF:
		 * the timer due first is then always the next index. */
		lib_begin();
		for (i = 0; i < n; i++) {
			lib_timeout(i, tmo_off, window_for(tmo_off));
			if (i % OPS_PASS == OPS_PASS - 1) {
				lib_begin();
				lib_pass();
			}
		}
		lib_pass();
		r0 = lib_rearms();
		drive(n, 1, 0);
		if (fired) {
			fprintf(stderr, "%s: %zu timers fired during loop_lru\n", LIB_NAME, fired);
			exit(1);
		}
		report("loop_lru", n, "ns_per_op", drv.v, OPS_REPS);
		if (r0 >= 0) {
			v[0] = 1e6 * (double)(lib_rearms() - r0) / (double)drv.j;
			report("loop_lru", n, "rearms_per_1m_ops", v, 1);
		}
	}
	if (wants(list, "loop_iter")) {
		drive(n, 0, 1);
		report("loop_iter", n, "ns_per_iter", drv.v, OPS_REPS);
	}
	free(ops_idx);
	free(ops_off);
	free(ops_slack);
	lib_timers_free(n);
	lib_loop_free();
}
#endif

/* DIST and WINDOW (see the top of this file); exits 2 on a bad value. */
static void read_env(void)
{
	const char *d = getenv("DIST"), *win = getenv("WINDOW");
	char *end;
	double x;

	if (d && *d && strcmp(d, "10s-70s")) {
		if (!strcmp(d, "1s-10s")) {
			ops_base = NS_S, ops_span = 9 * NS_S, tmo_off = 5 * NS_S;
		} else if (!strcmp(d, "10ms-1s")) {
			ops_base = 10 * NS_MS, ops_span = 990 * NS_MS, tmo_off = NS_S;
		} else {
			fprintf(stderr, "%s: DIST=%s: not 10ms-1s, 1s-10s or 10s-70s\n", LIB_NAME, d);
			exit(2);
		}
	}
	if (!win || !*win)
		return;
	x = strtod(win, &end);
	if (end == win || x < 0 || (strcmp(end, "%") && strcmp(end, "us") && *end) ||
	    (!strcmp(end, "%") && x > 1000)) {
		fprintf(stderr, "%s: WINDOW=%s: not NUMBER, NUMBERus or NUMBER%%\n", LIB_NAME, win);
		exit(2);
	}
	if (!strcmp(end, "%"))
		win_permille = (int64_t)(x * 10);
	else
		win_abs = (int64_t)(!strcmp(end, "us") ? x * 1000 : x);
}

int main(int argc, char **argv)
{
	size_t n;
	const char *w = argc > 2 ? argv[2] : "all";

	read_env();
	if (argc < 2 || (n = (size_t)strtoull(argv[1], NULL, 10)) == 0) {
		fprintf(stderr, "usage: %s N [all|start_cancel,rearm,timeout,tail,memory,expiry,range,\n"
				"       loop_rearm,loop_lru,loop_iter]\n"
				"       %s N ops K start_cancel|rearm|timeout\n", argv[0], argv[0]);
		return 2;
	}
	if (!strcmp(w, "ops") && argc > 4) {
		size_t k = (size_t)strtoull(argv[3], NULL, 10), j;

		for (j = 0; j < N_OP_WORKLOADS && strcmp(argv[4], op_workloads[j].name); j++)
			;
		if (j == N_OP_WORKLOADS) {
			fprintf(stderr, "%s: unknown op workload %s\n", argv[0], argv[4]);
			return 2;
		}
		lib_loop_new();
		lib_timers_new(n);
		arm_all(n, ops_base, ops_span, -1, 0);
		rng_state = SEED ^ 0x5c;
		make_ops(n, k ? k : 1);
		op_workloads[j].run(n, k);
		return 0;
	}
	if (wants(w, "start_cancel") || wants(w, "rearm") || wants(w, "timeout") ||
	    wants(w, "memory") || strstr(w, "tail"))
		run_ops(n, w);
#ifdef LIB_LOOP
	if (wants(w, "loop_rearm") || wants(w, "loop_lru") || wants(w, "loop_iter"))
		run_loop(n, w);
#endif
	if (wants(w, "expiry"))
		run_expiry(n);
	if (wants(w, "range"))
		run_range(n);
	return 0;
}

#endif /* PEERS_WORKLOAD_H */
