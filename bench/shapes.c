/* SPDX-License-Identifier: MIT */
/*
 * bench/shapes.c - what one operation costs in the shapes servers make
 * (issue 41), on a virtual base (no clock, no fd) and on a real one with
 * its timerfd (hrt_base_fd: every start then also decides whether the
 * wake-up moves, and the loop polls the fd and dispatches).  The default
 * (thread-safe) base throughout.  Three sections:
 *
 *  1. first: the timer due first re-armed to now + D (D = 500 ms, no
 *     slack), N = 1 to 10^6: ns per op on each base, the fd path over the
 *     virtual base, and what reached the kernel: stats.reprograms per op
 *     (timerfd re-arms), timerfd_settime calls per op (counted by wrapping
 *     the call: -Wl,--wrap=timerfd_settime) and stats.early_wakeups.  Ops
 *     run in batches of 64, each batch timed; between batches, untimed, a
 *     loop iteration (virtual: a pass at the real time elapsed; fd: a
 *     poll of the fd, hrt_base_dispatch if it is readable).  Each base
 *     runs for --secs (1.5 s) per round, after the timers were armed far
 *     and re-armed once in order, so the lazily armed fd fires early
 *     about 1.5 s / 500 ms times.  Median over --rounds (5) rounds, the
 *     two bases alternating (who goes first alternates too); the ratio
 *     is the median of the rounds' ratios.  Targets: fd <= 2x virtual,
 *     <= 1 % of ops reaching the kernel.
 *  2. shapes: one op timed alone (two clock reads around it, included),
 *     --ops (700,000) ops a cell, for
 *       random  a random timer re-armed to now + a random delay of DIST
 *               (no slack; a timer that comes due stays idle until an
 *               op picks it);
 *       fifo    N timeouts of one length D (DIST's: 1 s, 5 s, 30 s) with
 *               a window of D / 10, started in order; the op cancels the
 *               oldest (its replacement, started at now + D, is untimed);
 *       jitter  N timeouts of D plus 0 to 2D / 15 (30 s + 0-4 s: issue 47),
 *               windows D / 10; the op pushes the one due first on to now
 *               + D + jitter, then asks hrt_base_next_event (both timed);
 *       lru     the same timeouts; the op re-arms the oldest, the one due
 *               first, to now + D (a keep-alive pushed on);
 *     at N = 10^5 and 10^6, each DIST, each base.  Every 64 ops a loop
 *     iteration, timed on its own ("it" columns): virtual, a pass at the
 *     real time elapsed; fd, poll of the fd and a dispatch if readable;
 *     both then hrt_base_next_event (what a loop that plans its sleep
 *     asks).  Two rows measure the machine, timed the same way: none (the
 *     clock reads alone) and touch (a store into a random one of N
 *     timers' 64 bytes, no call: random access to that memory, the floor
 *     of the random shape).  Ops run in batches of 256 with
 *     getrusage(RUSAGE_THREAD)'s ru_nivcsw read between batches (outside
 *     the timing): "np" figures
 *     leave out every batch in which the thread was switched out
 *     involuntarily (a preemption the thread can see; a hypervisor's is
 *     invisible).  Targets: p99.9 <= 2 us, max not preempted <= 50 us (the
 *     op; the iteration's max is shown and judged beside it).
 *  3. periodic: one pass over N / 10 due timers, whose windows reach past
 *     a far slot (soft at D, D / 10 windows) holding the other 9N / 10,
 *     with and without a periodic timer (forward + HRT_RESTART, the
 *     README's idiom) whose restart lands in that slot as its earliest
 *     hard expiry (as tests/test_shapes.c).  ns per timer run (each
 *     callback reads the clock once: the steps below), with over without
 *     (median of the rounds' ratios, target <= 2), and each step of the
 *     pass with the periodic timer (callback to callback) as an op.
 *     Virtual base: hrt_base_run at the instant all are due; fd: the same
 *     pass at the real time (hrt_base_run on the real base, which re-arms
 *     the fd at its end), the base having run a pass just before the
 *     timers were armed, as a running loop's base has.
 *
 * Prints a table per section, each target met / not met; --csv FILE also
 * writes shape,dist,n,base,metric,value lines (docs/perf/shapes.csv,
 * which README and docs/PERFORMANCE.md quote).
 *
 *   build/bench/shapes [--quick] [--sections first,shapes,periodic]
 *       [--ns N,...] [--first-ns N,...] [--dists D,...] [--ops K]
 *       [--rounds R] [--secs S] [--cpu C] [--csv FILE] [--label TEXT]
 * --quick: N = 2,000 (first: 1, 10, 1,000), 20,000 ops, one round of
 * 0.05 s: the output's shape in a few seconds (tests/test_bench_shapes.sh).
 */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/timerfd.h>
#include <time.h>

#include "hrt.h"

#define MS 1000000LL
#define SEC 1000000000LL
#define MAXN 8
#define OVER_NS 50000            /* "max not preempted <= 50 us" */
#define P999_NS 2000             /* "p99.9 <= 2 us" */
#define ITER_EVERY 64            /* a loop iteration every 64 ops */
#define BATCH 256                /* ops between two ru_nivcsw reads */
#define FIRST_D (500 * MS)       /* section 1: re-armed to now + 500 ms */

/* timerfd_settime calls, through -Wl,--wrap=timerfd_settime. */
static unsigned long long settimes;
int __real_timerfd_settime(int fd, int flags, const struct itimerspec *nv, struct itimerspec *ov);
int __wrap_timerfd_settime(int fd, int flags, const struct itimerspec *nv, struct itimerspec *ov);
int __wrap_timerfd_settime(int fd, int flags, const struct itimerspec *nv, struct itimerspec *ov)
{
	settimes++;
	return __real_timerfd_settime(fd, flags, nv, ov);
}

/* Options ----------------------------------------------------------------- */

struct dist {
	const char *name;
	int64_t base, span;     /* random: delay in [base, base + span) */
	int64_t tmo;            /* fifo, lru, periodic: the one length D */
};

static const struct dist dists_all[] = {
	{ "10ms-1s", 10 * MS, 990 * MS, 1 * SEC },
	{ "1s-10s", 1 * SEC, 9 * SEC, 5 * SEC },
	{ "10s-70s", 10 * SEC, 60 * SEC, 30 * SEC },
};
#define NDISTS (sizeof(dists_all) / sizeof(dists_all[0]))

static size_t shape_ns[MAXN] = { 100000, 1000000 }, n_shape_ns = 2;
static size_t first_ns[MAXN] = { 1, 10, 1000, 100000, 1000000 }, n_first_ns = 5;
static int dist_on[NDISTS] = { 1, 1, 1 };
static size_t ops_k = 700000;
static int rounds = 5;
static double secs = 1.5;
static int cpu = -1;
static const char *csv_path, *label = "";
static FILE *csv;
static int do_first = 1, do_shapes = 1, do_periodic = 1;

static void die(const char *what, long err)
{
	fprintf(stderr, "shapes: %s failed (%ld)\n", what, err);
	exit(1);
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		die("malloc", -ENOMEM);
	return p;
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * SEC + ts.tv_nsec;
}

/* Involuntary context switches of this thread so far (a system call). */
static long invol(void)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	return ru.ru_nivcsw;
}

static uint64_t rng_state = 0x6872745f73686170ULL;     /* "hrt_shap" */

static uint64_t rng_next(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t rng_below(uint64_t n)
{
	return (uint64_t)(((unsigned __int128)rng_next() * n) >> 64);
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_d);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void csv_line(const char *shape, const char *dist, size_t n, const char *base,
		     const char *metric, double value)
{
	if (csv)
		fprintf(csv, "%s,%s,%zu,%s,%s,%.*f\n", shape, dist, n, base, metric,
			value == (double)(long long)value ? 0 : value < 0.001 ? 10 : value < 1 ? 6
			: value < 10 ? 4 : 2,
			value);
}

static const char *verdict(int met)
{
	return met ? "met" : "not met";
}

/* One cell's base, timers and loop ---------------------------------------- */

enum shape { S_RANDOM, S_FIFO, S_LRU, S_JITTER, S_NONE, S_TOUCH };
static const char *const shape_names[] = { "random", "fifo", "lru", "jitter", "none", "touch" };

struct item {
	struct hrt_timer t;
};

static struct {
	struct hrt_base *b;
	struct item *it;
	size_t n;
	int real, fd;
	enum shape shape;
	const struct dist *d;
	int64_t len, slack;     /* fifo, lru: D and its window */
	hrt_time_t now;         /* the loop's now, refreshed every iteration */
	int64_t real0;          /* virtual: the real instant of its time 0 */
	size_t oldest;          /* fifo, lru: the timer due first */
	long fired;             /* timers that came due (and re-armed themselves) */
	/* jitter: a min-heap of the timers by hard expiry (heap[0] is due
	 * first), pos[i] where timer i is in it, hard[i] its hard expiry. */
	size_t *heap, *pos;
	hrt_time_t *hard;
} C;

/* jitter: D plus 0 to 2D/15 (30 s + 0-4 s, issue 47's idle timeouts). */
static int64_t jitter_delay(void)
{
	return C.len + (int64_t)rng_below((uint64_t)(2 * C.len / 15));
}

static void heap_swap(size_t a, size_t b)
{
	size_t t = C.heap[a];

	C.heap[a] = C.heap[b];
	C.heap[b] = t;
	C.pos[C.heap[a]] = a;
	C.pos[C.heap[b]] = b;
}

/* Entry k of the heap, whose key grew, down to its place. */
static void heap_down(size_t k)
{
	for (;;) {
		size_t l = 2 * k + 1, m = k;

		if (l < C.n && C.hard[C.heap[l]] < C.hard[C.heap[m]])
			m = l;
		if (l + 1 < C.n && C.hard[C.heap[l + 1]] < C.hard[C.heap[m]])
			m = l + 1;
		if (m == k)
			return;
		heap_swap(k, m);
		k = m;
	}
}

/* A timer that came due is counted and left: the next op that picks it
 * starts it again.  (Re-armed from here, 10^6 timers of 10 ms-1 s would
 * fire faster than a pass runs them.) */
static enum hrt_restart on_fire(struct hrt_timer *t, hrt_time_t now)
{
	(void)t;
	(void)now;
	C.fired++;
	return HRT_NORESTART;
}

static void cell_open(int real, size_t n, enum shape shape, const struct dist *d, int64_t len,
		      int64_t slack)
{
	int err = hrt_base_new(&C.b, CLOCK_MONOTONIC, real ? 0 : HRT_BASE_VIRTUAL);
	size_t i;

	if (err)
		die("hrt_base_new", err);
	C.real = real;
	C.fd = -1;
	if (real && (C.fd = hrt_base_fd(C.b)) < 0)
		die("hrt_base_fd", C.fd);
	C.n = n;
	C.shape = shape;
	C.d = d;
	C.len = len;
	C.slack = slack;
	C.oldest = 0;
	C.fired = 0;
	C.it = xmalloc(n * sizeof(*C.it));
	C.heap = C.pos = NULL;
	C.hard = NULL;
	if (shape == S_JITTER) {
		C.heap = xmalloc(n * sizeof(*C.heap));
		C.pos = xmalloc(n * sizeof(*C.pos));
		C.hard = xmalloc(n * sizeof(*C.hard));
	}
	for (i = 0; i < n; i++)
		hrt_timer_init(&C.it[i].t, on_fire);
	C.real0 = now_ns();
	C.now = 0;
	if (real)
		hrt_base_now(C.b, &C.now);
}

static void cell_close(void)
{
	size_t i;
	int err;

	for (i = 0; i < C.n; i++)
		hrt_timer_cancel(&C.it[i].t);
	if ((err = hrt_base_free(C.b)))
		die("hrt_base_free", err);
	free(C.it);
	free(C.heap);
	free(C.pos);
	free(C.hard);
	C.it = NULL;
}

/* A loop iteration: virtual, a pass at the real time elapsed (never back);
 * fd, the fd polled and dispatched if readable.  Then the loop's now. */
static void iteration(int ask_next)
{
	hrt_time_t when;
	ssize_t r;

	if (!C.real) {
		hrt_time_t v = now_ns() - C.real0;

		if (v < C.now)
			v = C.now;
		if ((r = hrt_base_run(C.b, v, 0)) < 0)
			die("hrt_base_run", r);
		C.now = v;
	} else {
		struct pollfd p = { .fd = C.fd, .events = POLLIN };

		if (poll(&p, 1, 0) > 0 && (r = hrt_base_dispatch(C.b, 0)) < 0)
			die("hrt_base_dispatch", r);
		hrt_base_now(C.b, &C.now);
	}
	if (ask_next)
		hrt_base_next_event(C.b, &when);
}

static void start_or_die(size_t i, hrt_time_t soft, hrt_time_t slack)
{
	int err = hrt_timer_start_range(&C.it[i].t, C.b, soft, slack, HRT_MODE_ABS);

	if (err)
		die("hrt_timer_start_range", err);
}

/* The shape's timers, armed; fifo and lru in order, at now + D. */
static void cell_arm(int ask_next)
{
	size_t i;

	for (i = 0; i < C.n && C.shape < S_NONE; i++) {
		if (C.shape == S_RANDOM) {
			start_or_die(i, C.now + C.d->base + (int64_t)rng_below((uint64_t)C.d->span), 0);
		} else if (C.shape == S_JITTER) {
			hrt_time_t soft = C.now + jitter_delay();

			start_or_die(i, soft, C.slack);
			C.hard[i] = soft + C.slack;
			C.heap[i] = C.pos[i] = i;
		} else {
			start_or_die(i, C.now + C.len, C.slack);
		}
		if (i % ITER_EVERY == ITER_EVERY - 1)
			iteration(ask_next);
	}
	for (i = C.n / 2; C.shape == S_JITTER && i-- > 0;)
		heap_down(i);
	iteration(ask_next);
}

/* jitter's op: the timer due first pushed on to now + D + jitter, then
 * the next event (what a loop asks before it sleeps). */
static void jitter_op(void)
{
	size_t i = C.heap[0];
	hrt_time_t soft = C.now + jitter_delay(), when;

	start_or_die(i, soft, C.slack);
	hrt_base_next_event(C.b, &when);
	C.hard[i] = soft + C.slack;
	heap_down(0);
}

/* Section 1: the timer due first, re-armed ------------------------------ */

struct first_res {
	double ns;              /* per op */
	unsigned long long ops, reprograms, settimes, early;
	long fired;
	int64_t gap;            /* the longest time from one batch to the next */
};

static void get_stats(struct hrt_stats *s)
{
	int err = hrt_base_get_stats(C.b, s, sizeof(*s));

	if (err)
		die("hrt_base_get_stats", err);
}

static void first_run(size_t n, int real, double run_secs, struct first_res *r)
{
	static const struct dist d = { "-", 0, 0, FIRST_D };
	struct hrt_stats s0, s1;
	unsigned long long st0;
	int64_t t_end, tot = 0, min_ops = 64 * 64;
	size_t k, j;

	/* Armed far (1000 s) first: on a loaded machine arming 10^6 timers can
	 * take longer than D.  Then one untimed round of the shape: every
	 * key at now + D, in order. */
	cell_open(real, n, S_LRU, &d, 1000 * SEC, 0);
	cell_arm(0);
	C.len = FIRST_D;
	for (k = 0; k < n || k < 64 * 64; k++) {
		start_or_die(C.oldest, C.now + C.len, 0);
		C.oldest = C.oldest + 1 == n ? 0 : C.oldest + 1;
		if (k % ITER_EVERY == ITER_EVERY - 1)
			iteration(0);
	}
	get_stats(&s0);
	st0 = settimes;
	r->ops = 0;
	t_end = now_ns() + (int64_t)(run_secs * 1e9);
	r->gap = 0;
	for (int64_t prev = -1;;) {
		int64_t t0 = now_ns(), t1;

		if (prev >= 0 && t0 - prev > r->gap)
			r->gap = t0 - prev;
		prev = t0;

		for (j = 0; j < ITER_EVERY; j++) {
			hrt_timer_start_range(&C.it[C.oldest].t, C.b, C.now + FIRST_D, 0, HRT_MODE_ABS);
			C.oldest = C.oldest + 1 == n ? 0 : C.oldest + 1;
		}
		t1 = now_ns();
		tot += t1 - t0;
		r->ops += ITER_EVERY;
		iteration(0);
		if (t1 >= t_end && (int64_t)r->ops >= min_ops)
			break;
	}
	get_stats(&s1);
	r->ns = (double)tot / (double)r->ops;
	r->reprograms = s1.reprograms - s0.reprograms;
	r->settimes = settimes - st0;
	r->early = s1.early_wakeups - s0.early_wakeups;
	r->fired = C.fired;
	cell_close();
}

static void section_first(void)
{
	size_t i;

	printf("\n== 1. the timer due first re-armed to now + 500 ms (no "
	       "slack), ns per op, batches of 64 ops\n"
	       "timed, a loop iteration between them (virtual: a "
	       "pass; fd: poll, dispatch if readable);\n"
	       "%.2g s per base and round, median of %d round%s "
	       "(fd/virt: median of the rounds' ratios);\n"
	       "what reached the kernel on the fd path, all rounds: "
	       "Mops (millions of ops), re-arms\n"
	       "(stats.reprograms), settime (timerfd_settime calls, "
	       "counted at the call), settime per op,\n"
	       "early (the fd's early wake-ups, stats.early_wakeups); "
	       "fired: timers that came due (none\n"
	       "should: each is re-armed long before, unless the "
	       "thread stood still for 500 ms: gap, the\n"
	       "longest time from one batch to the next, in ms)\n",
	       secs, rounds, rounds == 1 ? "" : "s");
	printf("%-8s %8s %8s %7s %8s %8s %8s %9s %6s %6s %6s  %-16s %-16s\n", "N", "virtual", "fd",
	       "fd/virt", "Mops", "re-arms", "settime", "per op", "early", "fired", "gap",
	       "fd <= 2x virtual", "kernel <= 1 %");
	for (i = 0; i < n_first_ns; i++) {
		double v[64], f[64], q[64];
		unsigned long long ops = 0, rep = 0, st = 0, early = 0;
		long fired = 0;
		int64_t gap = 0;
		size_t n = first_ns[i];
		int r;

		for (r = 0; r < rounds; r++) {
			struct first_res a, b;

			if (r % 2) {
				first_run(n, 1, secs, &b);
				first_run(n, 0, secs, &a);
			} else {
				first_run(n, 0, secs, &a);
				first_run(n, 1, secs, &b);
			}
			v[r] = a.ns;
			f[r] = b.ns;
			q[r] = b.ns / a.ns;
			ops += b.ops;
			rep += b.reprograms;
			st += b.settimes;
			early += b.early;
			fired += a.fired + b.fired;
			if (a.gap > gap)
				gap = a.gap;
			if (b.gap > gap)
				gap = b.gap;
		}
		{
			double mv = median(v, rounds), mf = median(f, rounds), mq = median(q, rounds);
			double kop = (double)rep / (double)ops, sop = (double)st / (double)ops;

			printf("%-8zu %8.1f %8.1f %7.2f %8.1f %8llu %8llu %9.1e "
			       "%6llu %6ld %6.1f  %-16s %-16s\n",
			       n, mv, mf, mq, (double)ops / 1e6, rep, st, sop, early, fired, (double)gap / 1e6,
			       verdict(mq <= 2.0), verdict(kop <= 0.01 && sop <= 0.01));
			csv_line("first", "-", n, "virtual", "ns_per_op", mv);
			csv_line("first", "-", n, "fd", "ns_per_op", mf);
			csv_line("first", "-", n, "fd", "ratio", mq);
			csv_line("first", "-", n, "fd", "reprograms_per_op", kop);
			csv_line("first", "-", n, "fd", "settime_per_op", sop);
			csv_line("first", "-", n, "fd", "early_wakeups", (double)early);
			csv_line("first", "-", n, "fd", "ops", (double)ops);
			csv_line("first", "-", n, "fd", "reprograms", (double)rep);
			csv_line("first", "-", n, "fd", "settimes", (double)st);
			csv_line("first", "-", n, "both", "fired", (double)fired);
			csv_line("first", "-", n, "both", "max_gap_ms", (double)gap / 1e6);
		}
		fflush(stdout);
	}
}

/* Section 2: one op per shape, each timed alone ------------------------- */

struct tail {
	int64_t p50, p99, p999, max, max_np;
	long over_np;                   /* ops over 50 us in batches not preempted */
};

static struct tail tail_of(int64_t *lat, size_t k, const int64_t *np_max, long over_np)
{
	struct tail t;

	qsort(lat, k, sizeof(*lat), cmp_i64);
	t.p50 = lat[k / 2];
	t.p99 = lat[k - 1 - k / 100];
	t.p999 = lat[k - 1 - k / 1000];
	t.max = lat[k - 1];
	t.max_np = *np_max;
	t.over_np = over_np;
	return t;
}

static void shape_cell(enum shape shape, const struct dist *d, size_t n, int real)
{
	size_t k = ops_k, nit = ops_k / ITER_EVERY + 1, j, it = 0, warm;
	int64_t *lat = xmalloc(k * sizeof(*lat)), *itl = xmalloc(nit * sizeof(*itl));
	int64_t op_np = 0, it_np = 0;
	long over_np = 0, it_over_np = 0, batches = 0, preempted = 0;
	struct hrt_stats s0, s1;
	struct tail ot, itt;
	const char *dn;
	char nm[16];

	cell_open(real, n, shape, d, d->tmo, d->tmo / 10);
	cell_arm(1);
	/* Warm-up, untimed: a tenth of the ops (fifo and lru: the keys of a
	 * round of the shape, at most). */
	warm = shape >= S_NONE ? 0 : k / 10;
	for (j = 0; j < warm; j++) {
		size_t i = C.oldest;

		if (shape == S_RANDOM) {
			i = (size_t)rng_below(n);
			start_or_die(i, C.now + d->base + (int64_t)rng_below((uint64_t)d->span), 0);
		} else if (shape == S_JITTER) {
			jitter_op();
		} else {
			if (shape == S_FIFO)
				hrt_timer_cancel(&C.it[i].t);
			start_or_die(i, C.now + C.len, C.slack);
			C.oldest = i + 1 == n ? 0 : i + 1;
		}
		if (j % ITER_EVERY == ITER_EVERY - 1)
			iteration(1);
	}
	get_stats(&s0);
	for (j = 0; j < k;) {
		size_t end = j + BATCH < k ? j + BATCH : k;
		int64_t bmax = 0, bit = 0;
		long bover = 0, bitover = 0, sw = invol();

		for (; j < end; j++) {
			size_t i;
			int64_t t0, t1, soft;

			if (shape == S_NONE) {
				t0 = now_ns();
				t1 = now_ns();
			} else if (shape == S_TOUCH) {
				i = (size_t)rng_below(n);
				t0 = now_ns();
				((volatile uint64_t *)&C.it[i])[7]++;    /* its callback's word */
				t1 = now_ns();
			} else if (shape == S_RANDOM) {
				i = (size_t)rng_below(n);
				soft = C.now + d->base + (int64_t)rng_below((uint64_t)d->span);
				t0 = now_ns();
				hrt_timer_start_range(&C.it[i].t, C.b, soft, 0, HRT_MODE_ABS);
				t1 = now_ns();
			} else if (shape == S_JITTER) {
				t0 = now_ns();
				jitter_op();
				t1 = now_ns();
			} else {
				i = C.oldest;
				soft = C.now + C.len;
				if (shape == S_FIFO) {
					t0 = now_ns();
					hrt_timer_cancel(&C.it[i].t);
					t1 = now_ns();
					hrt_timer_start_range(&C.it[i].t, C.b, soft, C.slack, HRT_MODE_ABS);
				} else {
					t0 = now_ns();
					hrt_timer_start_range(&C.it[i].t, C.b, soft, C.slack, HRT_MODE_ABS);
					t1 = now_ns();
				}
				C.oldest = i + 1 == n ? 0 : i + 1;
			}
			lat[j] = t1 - t0;
			if (lat[j] > bmax)
				bmax = lat[j];
			bover += lat[j] > OVER_NS;
			if (j % ITER_EVERY == ITER_EVERY - 1) {
				t0 = now_ns();
				iteration(1);
				itl[it] = now_ns() - t0;
				if (itl[it] > bit)
					bit = itl[it];
				bitover += itl[it] > OVER_NS;
				it++;
			}
		}
		batches++;
		if (invol() != sw) {
			preempted++;
		} else {
			if (bmax > op_np)
				op_np = bmax;
			if (bit > it_np)
				it_np = bit;
			over_np += bover;
			it_over_np += bitover;
		}
	}
	get_stats(&s1);
	ot = tail_of(lat, k, &op_np, over_np);
	itt = tail_of(itl, it, &it_np, it_over_np);
	snprintf(nm, sizeof(nm), "%s", shape_names[shape]);
	dn = shape >= S_NONE ? "-" : d->name;
	printf("%-7s %-8s %8zu %-7s %6lld %6lld %6lld %8lld %8lld %5ld %6lld "
	       "%8lld %5ld/%-5ld %8llu %5ld  %-8s %-8s %-8s\n",
	       nm, dn, n, real ? "fd" : "virtual", (long long)ot.p50, (long long)ot.p99,
	       (long long)ot.p999, (long long)ot.max, (long long)ot.max_np, ot.over_np,
	       (long long)itt.p99, (long long)itt.max_np, preempted, batches,
	       (unsigned long long)(s1.wheel_scanned - s0.wheel_scanned), C.fired,
	       verdict(ot.p999 <= P999_NS), verdict(ot.max_np <= OVER_NS), verdict(itt.max_np <= OVER_NS));
	fflush(stdout);
	{
		const char *b = real ? "fd" : "virtual";

		csv_line(nm, dn, n, b, "p50_ns", (double)ot.p50);
		csv_line(nm, dn, n, b, "p99_ns", (double)ot.p99);
		csv_line(nm, dn, n, b, "p999_ns", (double)ot.p999);
		csv_line(nm, dn, n, b, "max_ns", (double)ot.max);
		csv_line(nm, dn, n, b, "max_np_ns", (double)ot.max_np);
		csv_line(nm, dn, n, b, "over_50us_np", (double)ot.over_np);
		csv_line(nm, dn, n, b, "iter_p99_ns", (double)itt.p99);
		csv_line(nm, dn, n, b, "iter_max_np_ns", (double)itt.max_np);
		csv_line(nm, dn, n, b, "batches_preempted", (double)preempted);
		csv_line(nm, dn, n, b, "wheel_scanned", (double)(s1.wheel_scanned - s0.wheel_scanned));
		csv_line(nm, dn, n, b, "reprograms", (double)(s1.reprograms - s0.reprograms));
	}
	free(lat);
	free(itl);
	cell_close();
}

static void section_shapes(void)
{
	size_t i, di;
	int s, real;

	printf("\n== 2. one op per shape, each timed alone (ns, its two "
	       "clock reads included), %zu ops a cell;\n"
	       "a loop iteration every 64 ops, timed on its own (it: "
	       "virtual, a pass; fd, poll and dispatch\n"
	       "if readable; both next_event); np: leaving out batches "
	       "of 256 ops in which the thread was\n"
	       "switched out involuntarily (ru_nivcsw); >50us: such ops "
	       "over 50 us; pre: batches preempted;\n"
	       "scanned: far timers visited to find a slot's earliest "
	       "again (stats.wheel_scanned).  Two\n"
	       "rows measure the machine: none, the two clock reads "
	       "alone; touch, a store into a random\n"
	       "one of N timers' memory (no call, nothing queued): "
	       "random access to 64 bytes a timer\n",
	       ops_k);
	printf("%-7s %-8s %8s %-7s %6s %6s %6s %8s %8s %5s %6s "
	       "%8s %11s %8s %5s  %-8s %-8s %-8s\n", "shape",
	       "dist", "N", "base", "p50", "p99", "p99.9", "max", "max np", ">50us", "it p99",
	       "it max np", "pre/batches", "scanned", "fired", "p99.9<=2us", "max np<=50us",
	       "it max np<=50us");
	/* The measurement alone (two clock reads, nothing queued), and a
	 * store into a random one of N timers' memory (no call): what random
	 * access to it costs on this machine, timed the same way. */
	shape_cell(S_NONE, &dists_all[NDISTS - 1], 0, 0);
	for (i = 0; i < n_shape_ns; i++)
		shape_cell(S_TOUCH, &dists_all[NDISTS - 1], shape_ns[i], 0);
	for (s = S_RANDOM; s <= S_JITTER; s++)
		for (di = 0; di < NDISTS; di++)
			for (i = 0; i < n_shape_ns; i++)
				for (real = 0; real < 2; real++)
					if (dist_on[di])
						shape_cell((enum shape)s, &dists_all[di], shape_ns[i], real);
}

/* Section 3: a periodic restart into a big slot ------------------------- */

static struct {
	int64_t *step;          /* callback to callback, ns */
	size_t nstep, cap;
	int64_t prev;
	long sw;
	int64_t np_max;         /* the largest step of a batch not preempted */
	int64_t bmax;
	long over_np, bover;
	hrt_time_t period;
	long periodic_runs;
} P;

/* A step ends: record it; every BATCH steps, note whether the batch was
 * preempted, the getrusage outside every step. */
static void step(void)
{
	int64_t t = now_ns(), s = t - P.prev;

	if (P.nstep < P.cap)
		P.step[P.nstep++] = s;
	if (s > P.bmax)
		P.bmax = s;
	P.bover += s > OVER_NS;
	P.prev = t;
	if (P.nstep % BATCH == 0) {
		long sw = invol();

		if (sw == P.sw) {
			if (P.bmax > P.np_max)
				P.np_max = P.bmax;
			P.over_np += P.bover;
		}
		P.bmax = 0;
		P.bover = 0;
		P.sw = sw;
		P.prev = now_ns();
	}
}

static enum hrt_restart due_cb(struct hrt_timer *t, hrt_time_t now)
{
	(void)t;
	(void)now;
	step();
	return HRT_NORESTART;
}

static enum hrt_restart periodic_cb(struct hrt_timer *t, hrt_time_t now)
{
	step();
	P.periodic_runs++;
	hrt_timer_forward(t, now, P.period);
	return HRT_RESTART;
}

/* One pass; returns ns per timer run and its runs in *runs. */
static double periodic_pass(const struct dist *d, size_t n, int real, int with, ssize_t *runs)
{
	size_t due = n / 10, far = n - due, i;
	struct hrt_timer *pt;
	hrt_time_t t0, at, f, until;
	int64_t a, b;
	ssize_t r;
	int err;

	cell_open(real, n + 1, S_LRU, d, d->tmo, d->tmo / 10);
	for (i = 0; i < n + 1; i++)
		hrt_timer_init(&C.it[i].t, due_cb);
	if (real) {
		/* A pass now, as a running loop's last: the far-timer wheel's
		 * horizon follows the passes, and a base made and filled some
		 * milliseconds ago would send the due timers to the wheel. */
		hrt_base_now(C.b, &C.now);
		if ((r = hrt_base_run(C.b, C.now, 0)) < 0)
			die("hrt_base_run", r);
	}
	t0 = C.now;
	at = t0 + 10 * MS;
	f = t0 + d->tmo;
	for (i = 0; i < due; i++)               /* hard: past the far slot's start */
		start_or_die(i, at + (hrt_time_t)i, f + d->tmo / 30 - at - (hrt_time_t)i);
	for (i = 0; i < far; i++)               /* one slot, D ahead, in order */
		start_or_die(due + i, f + (hrt_time_t)i, d->tmo / 10);
	P.period = f + MS - (at - 1);           /* its restart: f + 1 ms, exact */
	P.periodic_runs = 0;
	pt = &C.it[n].t;
	if (with) {
		hrt_timer_init(pt, periodic_cb);
		start_or_die(n, at - 1, 0);
	}
	until = at + (hrt_time_t)due + MS;
	if (real) {
		struct timespec ts;

		/* The real time at which all are due (arming took longer,
		 * mostly). */
		for (;;) {
			hrt_base_now(C.b, &C.now);
			if (C.now >= until)
				break;
			ts.tv_sec = 0;
			ts.tv_nsec = (long)(until - C.now);
			nanosleep(&ts, NULL);
		}
		until = C.now;
	}
	P.nstep = 0;
	P.np_max = P.bmax = 0;
	P.over_np = P.bover = 0;
	P.sw = invol();
	P.prev = a = now_ns();
	r = hrt_base_run(C.b, until, 0);
	b = now_ns();
	if (r < 0)
		die("hrt_base_run", r);
	if (invol() == P.sw) {                  /* the last, partial batch */
		if (P.bmax > P.np_max)
			P.np_max = P.bmax;
		P.over_np += P.bover;
	}
	if ((size_t)r != due + (size_t)with || P.periodic_runs != with) {
		fprintf(stderr, "shapes: periodic pass ran %zd of %zu due (periodic %ld)\n", r,
			due + (size_t)with, P.periodic_runs);
		exit(1);
	}
	if (with && (err = hrt_timer_cancel(pt)) != 1)
		die("hrt_timer_cancel (periodic)", err);
	cell_close();
	*runs = r;
	return (double)(b - a) / (double)r;
}

static void section_periodic(void)
{
	size_t i, di;
	int real;

	printf("\n== 3. one pass over N/10 due timers whose windows "
	       "reach past a far slot of the other 9N/10,\n"
	       "without and with a periodic timer (forward + "
	       "HRT_RESTART) restarted into that slot as its\n"
	       "earliest hard expiry; ns per timer run (median of %d "
	       "round%s; with/without: median of the\n"
	       "rounds' ratios); steps: callback to callback in the "
	       "passes with it (ns; np as in 2.)\n",
	       rounds, rounds == 1 ? "" : "s");
	printf("%-8s %8s %-7s %8s %8s %8s %6s %6s %6s %8s "
	       "%8s %5s  %-16s %-8s %-8s\n", "dist", "N", "base",
	       "without", "with", "with/w.o", "p50", "p99", "p99.9", "max", "max np", ">50us",
	       "with <= 2x w.o.", "p99.9<=2us", "max np<=50us");
	for (di = 0; di < NDISTS; di++) {
		if (!dist_on[di])
			continue;
		for (i = 0; i < n_shape_ns; i++) {
			for (real = 0; real < 2; real++) {
				const struct dist *d = &dists_all[di];
				size_t n = shape_ns[i], total = 0, cap = (size_t)rounds * (n / 10 + 1);
				double wo[64], wi[64], q[64], mwo, mwi, mq;
				int64_t *all = xmalloc(cap * sizeof(*all)), np_max = 0;
				long over_np = 0;
				int r;
				struct tail t;
				const char *b = real ? "fd" : "virtual";

				P.cap = n / 10 + 1;
				P.step = xmalloc(P.cap * sizeof(*P.step));
				for (r = 0; r < rounds; r++) {
					ssize_t runs;

					if (r % 2) {
						wi[r] = periodic_pass(d, n, real, 1, &runs);
						memcpy(all + total, P.step, P.nstep * sizeof(*all));
						total += P.nstep;
						if (P.np_max > np_max)
							np_max = P.np_max;
						over_np += P.over_np;
						wo[r] = periodic_pass(d, n, real, 0, &runs);
					} else {
						wo[r] = periodic_pass(d, n, real, 0, &runs);
						wi[r] = periodic_pass(d, n, real, 1, &runs);
						memcpy(all + total, P.step, P.nstep * sizeof(*all));
						total += P.nstep;
						if (P.np_max > np_max)
							np_max = P.np_max;
						over_np += P.over_np;
					}
					q[r] = wi[r] / wo[r];
				}
				mwo = median(wo, rounds);
				mwi = median(wi, rounds);
				mq = median(q, rounds);
				t = tail_of(all, total, &np_max, over_np);
				printf("%-8s %8zu %-7s %8.1f %8.1f %8.2f %6lld %6lld %6lld "
				       "%8lld %8lld %5ld  %-16s %-8s %-8s\n",
				       d->name, n, b, mwo, mwi, mq, (long long)t.p50, (long long)t.p99,
				       (long long)t.p999, (long long)t.max, (long long)t.max_np, t.over_np,
				       verdict(mq <= 2.0), verdict(t.p999 <= P999_NS),
				       verdict(t.max_np <= OVER_NS));
				fflush(stdout);
				csv_line("periodic", d->name, n, b, "ns_per_timer_without", mwo);
				csv_line("periodic", d->name, n, b, "ns_per_timer_with", mwi);
				csv_line("periodic", d->name, n, b, "ratio", mq);
				csv_line("periodic", d->name, n, b, "step_p50_ns", (double)t.p50);
				csv_line("periodic", d->name, n, b, "step_p99_ns", (double)t.p99);
				csv_line("periodic", d->name, n, b, "step_p999_ns", (double)t.p999);
				csv_line("periodic", d->name, n, b, "step_max_ns", (double)t.max);
				csv_line("periodic", d->name, n, b, "step_max_np_ns", (double)t.max_np);
				free(P.step);
				P.step = NULL;
				free(all);
			}
		}
	}
}

/* Main -------------------------------------------------------------------- */

static size_t parse_list(const char *s, size_t *out)
{
	size_t k = 0;
	char *end;

	while (*s && k < MAXN) {
		unsigned long long v = strtoull(s, &end, 10);

		if (end == s || v == 0) {
			fprintf(stderr, "shapes: bad N list at \"%s\"\n", s);
			exit(2);
		}
		out[k++] = (size_t)v;
		s = *end == ',' ? end + 1 : end;
		if (*end && *end != ',') {
			fprintf(stderr, "shapes: bad N list at \"%s\"\n", end);
			exit(2);
		}
	}
	return k;
}

static void usage(void)
{
	fprintf(stderr, "usage: shapes [--quick] [--sections first,shapes,periodic] [--ns N,...]\n"
			"       [--first-ns N,...] [--dists "
			"10ms-1s,1s-10s,10s-70s] [--ops K] [--rounds R]\n"
			"       [--secs S] [--cpu C] [--csv FILE] [--label TEXT]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--quick")) {
			shape_ns[0] = 2000;
			n_shape_ns = 1;
			first_ns[0] = 1, first_ns[1] = 10, first_ns[2] = 1000;
			n_first_ns = 3;
			ops_k = 20000;
			rounds = 1;
			secs = 0.05;
			continue;
		}
		if (!v)
			usage();
		i++;
		if (!strcmp(a, "--sections")) {
			do_first = strstr(v, "first") != NULL;
			do_shapes = strstr(v, "shapes") != NULL;
			do_periodic = strstr(v, "periodic") != NULL;
		} else if (!strcmp(a, "--ns")) {
			n_shape_ns = parse_list(v, shape_ns);
		} else if (!strcmp(a, "--first-ns")) {
			n_first_ns = parse_list(v, first_ns);
		} else if (!strcmp(a, "--dists")) {
			size_t d;

			for (d = 0; d < NDISTS; d++)
				dist_on[d] = strstr(v, dists_all[d].name) != NULL;
		} else if (!strcmp(a, "--ops")) {
			ops_k = (size_t)strtoull(v, NULL, 10);
			if (ops_k < BATCH)
				usage();
		} else if (!strcmp(a, "--rounds")) {
			rounds = atoi(v);
			if (rounds < 1 || rounds > 64)
				usage();
		} else if (!strcmp(a, "--secs")) {
			secs = atof(v);
			if (!(secs > 0))
				usage();
		} else if (!strcmp(a, "--cpu")) {
			cpu = atoi(v);
		} else if (!strcmp(a, "--csv")) {
			csv_path = v;
		} else if (!strcmp(a, "--label")) {
			label = v;
		} else {
			usage();
		}
	}
	if (cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set)) {
			fprintf(stderr, "shapes: cannot pin to CPU %d: %s\n", cpu, strerror(errno));
			return 1;
		}
	}
	if (csv_path && !(csv = fopen(csv_path, "w"))) {
		fprintf(stderr, "shapes: %s: %s\n", csv_path, strerror(errno));
		return 1;
	}
	if (csv)
		fprintf(csv, "shape,dist,n,base,metric,value\n");
	setvbuf(stdout, NULL, _IOLBF, 0);
	{
		time_t t = time(NULL);
		char when[32];

		strftime(when, sizeof(when), "%Y-%m-%dT%H:%MZ", gmtime(&t));
		printf("== bench/shapes: hrt %s%s%s, %s, %s; the default "
		       "base, virtual or with its fd\n",
		       hrt_version(), *label ? " at " : "", label, when,
		       cpu >= 0 ? "pinned to one CPU" : "not pinned");
	}
	if (do_first)
		section_first();
	if (do_shapes)
		section_shapes();
	if (do_periodic)
		section_periodic();
	if (csv && fclose(csv)) {
		fprintf(stderr, "shapes: %s: %s\n", csv_path, strerror(errno));
		return 1;
	}
	return 0;
}
