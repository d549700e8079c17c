/*
 * test_wakeups.c - measured real wake-ups against the virtual-clock engine.
 *
 * 1,000 range timers on CLOCK_MONOTONIC with overlapping ranges (soft
 * expiries t0 + LEAD + [0, SPREAD), slack drawn from [0, MAX_SLACK], from a
 * seeded RNG; the seed is printed, argv[1] replays it) run through
 * hrt_base_loop; the callback of the last one stops the loop, and a
 * watchdog thread stops it at a deadline so the test cannot hang.  For
 * HRT_GREEDY_OFF and HRT_GREEDY_IDLE it checks:
 *   - no callback ran before its soft expiry (clock_gettime inside it, and
 *     the `now` the pass passed);
 *   - every timer ran exactly once;
 *   - stats.wakeups <= P + ALLOWANCE, where P is the number of passes the
 *     virtual engine needs for the same timers (HRT_CLOCK_VIRTUAL base, the
 *     same offsets relative to 0, the same policy, started in the same
 *     order, driven by hrt_base_run(vb, hrt_base_next_event(vb), 1) until
 *     empty; idle = 1 because hrt_base_loop always dispatches with idle = 1).
 *
 * Why ALLOWANCE is 0.  Notation: timers are totally ordered by (hard expiry,
 * start order) - the queue's order, the same on both bases since both start
 * them in the same order, and shifting every expiry by t0 changes nothing.
 * A pass at time t on a set S runs (src/base.c, no callback here starts or
 * cancels anything):
 *   OFF:  the longest prefix of S in that order whose soft expiries are all
 *         <= t (the leftmost run), so x in S runs iff every y <= x in S has
 *         soft(y) <= t;
 *   IDLE (idle = 1): the leftmost run, then the greedy walk: every x in S
 *         with soft(x) <= t.
 * Virtual engine: pass k runs at v_k = the least hard expiry left, so its
 * first timer always runs (soft <= hard = v_k); under either policy a pass
 * at v_k removes every timer with hard <= v_k (they head the order and their
 * soft expiries are <= v_k), so v_1 < v_2 < ... < v_P and every timer runs
 * at some v_k <= its hard expiry.
 * (a) Real pass at r on the remaining set R (any R): if x in R was run by
 *     the virtual engine at some v_k <= r, the real pass runs it.  IDLE:
 *     soft(x) <= v_k <= r.  OFF: every y <= x has soft(y) <= r (y ran in
 *     the virtual run at or before v_k, or was still queued at v_k and
 *     preceded x there; either way soft(y) <= v_k), so the real prefix
 *     reaches x.  Hence after a real pass at r, every timer left is one the
 *     virtual engine had not run by r.
 * (b) Real wake-up j, whose pass runs at r_j: let r' be the last real pass
 *     before it (r' = -infinity for the first; r' >= r_{j-1}).  After r'
 *     (or after the starts) the fd is armed at the least hard expiry a_j of
 *     the set R left, and nothing changes R until it fires (only this
 *     thread touches the base).  The timerfd never fires before a_j and
 *     dispatch reads the clock after the read, so r_j >= a_j.  The first
 *     timer x of R (hard a_j) had not run virtually by r' (by (a)) and runs
 *     virtually at some v_k <= a_j: some virtual pass lies in (r', r_j],
 *     hence in (r_{j-1}, r_j].
 * Those intervals are disjoint for different wake-ups, so wake-ups map one
 * to one onto virtual passes: wakeups <= P, allowance 0.  The argument
 * assumes every timerfd_settime succeeds (a failed arm makes the loop poll
 * and dispatch with a backoff, passes that are not wake-ups: the test
 * checks passes == wakeups) and that the clock the pass reads is the
 * timerfd's (both CLOCK_MONOTONIC).
 *
 * A corollary it also checks: the virtual engine needs the same number of
 * passes under OFF and IDLE.  The first timer y the leftmost run leaves has
 * soft(y) > v_k, so the greedy walk leaves it too; IDLE's remaining set is a
 * subset of OFF's (it removes a superset at the same instants), both hold
 * y, which heads OFF's: the next event is hard(y) under both, and by
 * induction the pass instants coincide.  When passes happen only at the
 * next hard expiry, the greedy walk runs timers earlier but cannot save a
 * wake-up; it saves them only when passes also happen at other instants.
 *
 * Prints, per policy: real wake-ups, real passes, virtual passes.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hrt.h"

static int failures;

#define CHECK(c)                                                                   \
	do {                                                                       \
		if (!(c)) {                                                        \
			fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__,     \
				__LINE__, #c);                                     \
			failures++;                                                \
		}                                                                  \
	} while (0)

#define MS 1000000LL
#define NT 1000
#define LEAD (30 * MS)          /* t0 to the earliest soft expiry: time to start them */
#define SPREAD (400 * MS)       /* soft expiries spread over this */
#define MAX_SLACK (20 * MS)
#define DEADLINE (3000 * MS)    /* after t0; the watchdog stops the loop then */
#define ALLOWANCE 0             /* see the argument above */

static uint64_t rng;

static uint64_t rnd(void)
{
	/* xorshift64* */
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545f4914f6cdd1dull;
}

static hrt_time_t mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (hrt_time_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

struct wt {
	struct hrt_timer t;
	hrt_time_t soft;
	int fired;
};

static hrt_time_t soft_off[NT], slack[NT];
static struct wt timers[NT];
static struct hrt_base *rbase;
static int nfired, early;

static enum hrt_restart real_cb(struct hrt_timer *t, hrt_time_t now)
{
	struct wt *w = (struct wt *)t;
	hrt_time_t clk = mono_now();

	if (clk < w->soft || now < w->soft) {
		if (early++ < 5)
			fprintf(stderr, "timer %d ran %lld ns before its soft expiry\n",
				(int)(w - timers), (long long)(w->soft - (clk < now ? clk : now)));
	}
	w->fired++;
	if (++nfired == NT)
		hrt_base_stop(rbase);
	return HRT_NORESTART;
}

static enum hrt_restart nop_cb(struct hrt_timer *t, hrt_time_t now)
{
	(void)t;
	(void)now;
	return HRT_NORESTART;
}

/* Passes the virtual engine needs for the timers, driven the way the loop
 * drives a real base: one pass at each next event, idle = 1. */
static uint64_t virtual_passes(enum hrt_greedy policy)
{
	static struct hrt_timer vt[NT];
	struct hrt_base *vb = hrt_base_new(HRT_CLOCK_VIRTUAL);
	struct hrt_stats st;
	size_t ran = 0;

	CHECK(vb != NULL);
	CHECK(hrt_base_set_greedy(vb, policy) == 0);
	for (int i = 0; i < NT; i++) {
		hrt_timer_init(&vt[i], nop_cb);
		CHECK(hrt_timer_start_range(&vt[i], vb, soft_off[i], slack[i], HRT_MODE_ABS) == 0);
	}
	while (hrt_base_count(vb) > 0)
		ran += hrt_base_run(vb, hrt_base_next_event(vb), 1);
	CHECK(ran == NT);
	hrt_base_get_stats(vb, &st);
	hrt_base_free(vb);
	return st.passes;
}

struct watchdog {
	hrt_time_t deadline;
	int done;       /* atomic: the loop returned */
	int fired;      /* atomic: the watchdog had to stop it */
};

static void *watchdog_main(void *arg)
{
	struct watchdog *w = arg;
	struct timespec nap = { 0, 5 * MS };

	while (!__atomic_load_n(&w->done, __ATOMIC_ACQUIRE)) {
		if (mono_now() >= w->deadline) {
			__atomic_store_n(&w->fired, 1, __ATOMIC_RELEASE);
			hrt_base_stop(rbase);
			break;
		}
		nanosleep(&nap, NULL);
	}
	return NULL;
}

static void run_policy(enum hrt_greedy policy, const char *name, uint64_t vpasses)
{
	struct watchdog wd = { 0, 0, 0 };
	struct hrt_stats st;
	hrt_time_t t0, started;
	pthread_t th;
	int rc, once = 0, never = 0, more = 0;

	rbase = hrt_base_new(CLOCK_MONOTONIC);
	CHECK(rbase != NULL);
	CHECK(hrt_base_set_greedy(rbase, policy) == 0);
	CHECK(hrt_base_fd(rbase) >= 0);
	nfired = early = 0;
	t0 = mono_now();
	for (int i = 0; i < NT; i++) {
		hrt_timer_init(&timers[i].t, real_cb);
		timers[i].soft = t0 + soft_off[i];
		timers[i].fired = 0;
		CHECK(hrt_timer_start_range(&timers[i].t, rbase, timers[i].soft, slack[i],
					    HRT_MODE_ABS) == 0);
	}
	started = mono_now();
	wd.deadline = t0 + DEADLINE;
	CHECK(pthread_create(&th, NULL, watchdog_main, &wd) == 0);
	rc = hrt_base_loop(rbase);
	__atomic_store_n(&wd.done, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);

	hrt_base_get_stats(rbase, &st);
	for (int i = 0; i < NT; i++) {
		once += timers[i].fired == 1;
		never += timers[i].fired == 0;
		more += timers[i].fired > 1;
	}
	printf("%-5s real wakeups %4" PRIu64 ", real passes %4" PRIu64 ", virtual passes %4" PRIu64
	       " (allowance %d); %d timers, %d ran once, %d never, %d more than once, %d early;"
	       " started in %.1f ms, %" PRIu64 " reprograms\n",
	       name, st.wakeups, st.passes, vpasses, ALLOWANCE, NT, once, never, more, early,
	       (double)(started - t0) / MS, st.reprograms);
	if (__atomic_load_n(&wd.fired, __ATOMIC_ACQUIRE))
		fprintf(stderr, "%s: the watchdog had to stop the loop\n", name);
	CHECK(!__atomic_load_n(&wd.fired, __ATOMIC_ACQUIRE));
	CHECK(rc == 0);
	CHECK(early == 0);
	CHECK(once == NT);
	CHECK(st.expired == NT);
	CHECK(hrt_base_count(rbase) == 0);
	/* The argument's premises: every arm worked, each pass was a wake-up. */
	CHECK(st.passes == st.wakeups);
	CHECK(st.clock_jumps == 0);
	CHECK(st.wakeups >= 1);
	CHECK(st.wakeups <= vpasses + ALLOWANCE);
	hrt_base_free(rbase);
	rbase = NULL;
}

int main(int argc, char **argv)
{
	uint64_t seed, voff, vidle;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 1) {
		char *end;

		errno = 0;
		seed = strtoull(argv[1], &end, 0);
		if (errno || *end || end == argv[1]) {
			fprintf(stderr, "usage: %s [seed]\n", argv[0]);
			return 2;
		}
	} else {
		seed = (uint64_t)mono_now() ^ ((uint64_t)getpid() << 32);
	}
	printf("seed %" PRIu64 " (replay: %s %" PRIu64 ")\n", seed, argv[0], seed);
	rng = seed ? seed : 1;
	for (int i = 0; i < NT; i++) {
		soft_off[i] = LEAD + (hrt_time_t)(rnd() % (uint64_t)SPREAD);
		slack[i] = (hrt_time_t)(rnd() % (uint64_t)(MAX_SLACK + 1));
	}
	voff = virtual_passes(HRT_GREEDY_OFF);
	vidle = virtual_passes(HRT_GREEDY_IDLE);
	/* See the header: with passes only at the next event, greedy cannot
	 * save one. */
	CHECK(voff == vidle);
	run_policy(HRT_GREEDY_OFF, "off", voff);
	run_policy(HRT_GREEDY_IDLE, "idle", vidle);
	if (failures)
		printf("%d check(s) failed (seed %" PRIu64 ")\n", failures, seed);
	return failures ? 1 : 0;
}
