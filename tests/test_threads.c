/* SPDX-License-Identifier: MIT */
/*
 * test_threads.c - the library under real threads, through the public API.
 *
 *  1. Stress: two CLOCK_MONOTONIC bases, each driven by hrt_base_loop in its
 *     own thread; four workers start (absolute and relative), re-arm (start
 *     on a queued timer, often onto the other base) and cancel (cancel and
 *     try_cancel) 100,000 timers with expiries of a few ms.  Worker w owns
 *     timers i with i % 4 == w, so the model needs no locking.  Besides
 *     these, periodic timers restart themselves (hrt_timer_forward +
 *     HRT_RESTART) until a worker cancels them, and a small "chaos" set is
 *     started and cancelled by every worker at once.
 *  2. Focused tests, each with deadlines so that a bug fails instead of
 *     hanging: cancel waits for a running callback (try_cancel: -EBUSY and
 *     nothing done); callbacks that cancel themselves, another timer of
 *     their base, or a timer whose callback runs on the other base; a start
 *     from another thread that becomes the earliest wakes the loop, a
 *     cancel of the earliest runs nothing early; hrt_base_stop.
 *
 * How a callback knows which start it answers.  Each start of a main timer
 * gets the next generation g of that timer, encoded in the slack
 * (slack % GMAX == g).  A start may re-queue a timer whose callback has
 * already been dequeued and is about to run, and it overwrites soft/hard,
 * so the callback reads soft and hard, then takes the base lock
 * (hrt_timer_is_running) and looks whether the timer is queued again.  While
 * a callback runs its timer cannot leave the queue (cancel waits, no pass
 * runs it twice), so "not queued" proves no start came after the dequeue:
 * soft/hard, hence g, are those of the start being answered, exactly.  A
 * callback that finds its timer queued again counts as "ambiguous": it
 * answers some superseded start, never the last one of the timer (nothing
 * re-queues it after that), nor one a cancel found queued.
 *
 * Checks (all exact): no callback runs after a cancel of its timer returned
 * (a per-timer state word the worker sets after cancel, read at callback
 * entry); cancel returns only once the callback has returned; never two
 * callbacks of one timer at once; each start fires at most once; a start
 * that a cancel found queued never fires, one it found not queued fired
 * exactly once (and that callback had returned); the last start of every
 * timer that was not cancelled fires exactly once; every periodic timer
 * fires exactly KP times unless cancelled, and cancel returned 0 iff it had;
 * hrt_base_check holds during and after the run; the bases' stats (expired,
 * starts, cancels, restarts) equal what the test counted.
 *
 * A third of the operations go to 1,024 "hot" timers, some of whose
 * callbacks sleep 20 us, so re-arms and cancels meet running callbacks
 * (try_cancel -EBUSY, cancel waiting, "ambiguous" callbacks).  A timer out
 * of generations is verified and its model renewed right after a cancel
 * (nothing of it can run then).
 *
 *     build/tests/test_threads [SEED]
 *
 * The seed fixes every thread's sequence of operations; the interleaving of
 * the threads, hence a failure, may still take a few runs to reproduce.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "unit.h"

#include "hrt.h"
#include "hrt_values.h"

#if defined(__SANITIZE_THREAD__)
#define UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define UNDER_TSAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

#if defined(UNDER_TSAN)
#define OPS_TOTAL 160000        /* TSan is 5-15x slower */
#define CHECK_EVERY_MS 300
#elif defined(UNDER_ASAN)
#define OPS_TOTAL 800000
#define CHECK_EVERY_MS 100
#else
#define OPS_TOTAL 800000
#define CHECK_EVERY_MS 50
#endif

#define US ((hrt_time_t)1000)
#define MS ((hrt_time_t)1000000)
#define SEC ((hrt_time_t)1000000000)

#define NT 100000       /* main timers */
#define NW 4            /* workers */
#define GMAX 32         /* generations per main timer (slack % GMAX) */
#define NP 256          /* periodic timers */
#define KP 8            /* fires of an uncancelled periodic timer */
#define NC 512          /* chaos timers, shared by all workers */
#define NHOT 1024       /* main timers 0..NHOT-1 get a third of the operations */

/* ------------------------------------------------------------------------ */

static unsigned long long seed;

static hrt_time_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (hrt_time_t)ts.tv_sec * SEC + ts.tv_nsec;
}

static void sleep_ns(hrt_time_t ns)
{
	struct timespec ts = { (time_t)(ns / SEC), (long)(ns % SEC) };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* 1 once *f != 0, 0 if the timeout passed first. */
static int wait_set(atomic_int *f, hrt_time_t timeout)
{
	hrt_time_t end = now_ns() + timeout;

	while (!atomic_load(f)) {
		if (now_ns() > end)
			return 0;
		sleep_ns(200 * US);
	}
	return 1;
}

static uint64_t rnd(uint64_t *s)       /* splitmix64 */
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* A thread running hrt_base_loop. */
struct loop {
	struct hrt_base *b;
	pthread_t th;
	atomic_int done;
	int ret;
};

static void *loop_main(void *p)
{
	struct loop *l = p;

	l->ret = hrt_base_loop(l->b);
	atomic_store(&l->done, 1);
	return NULL;
}

static void loop_start(struct loop *l, struct hrt_base *b)
{
	l->b = b;
	l->ret = -1;
	atomic_store(&l->done, 0);
	if (pthread_create(&l->th, NULL, loop_main, l)) {
		perror("pthread_create");
		exit(2);
	}
}

/* Waits for the loop to return (after a stop if `stop`); 1 if it did and
 * was joined.  0: it hangs - the base must then not be freed. */
static int loop_finish(struct loop *l, int stop)
{
	if (stop)
		assert_int_equal(hrt_base_stop(l->b), 0);
	if (!wait_set(&l->done, 5 * SEC)) {
		fail_msg("hrt_base_loop did not return within 5 s of hrt_base_stop");
		return 0;
	}
	pthread_join(l->th, NULL);
	if (l->ret != 0)
		fail_msg("hrt_base_loop returned %d", l->ret);
	return 1;
}

/* A call made in a helper thread, so that a call that blocks by mistake is
 * a failure, not a hang. */
struct call {
	pthread_t th;
	void (*fn)(struct call *c);
	void *arg;
	int ret;
	int seen;               /* whatever fn wants to record */
	atomic_int done;
};

static void *call_main(void *p)
{
	struct call *c = p;

	c->fn(c);
	atomic_store(&c->done, 1);
	return NULL;
}

static void call_spawn(struct call *c, void (*fn)(struct call *), void *arg)
{
	c->fn = fn;
	c->arg = arg;
	c->ret = c->seen = 0;
	atomic_store(&c->done, 0);
	if (pthread_create(&c->th, NULL, call_main, c)) {
		perror("pthread_create");
		exit(2);
	}
}

static int call_join(struct call *c, hrt_time_t timeout)
{
	if (!wait_set(&c->done, timeout))
		return 0;
	pthread_join(c->th, NULL);
	return 1;
}

/* ------------------------------------------------------------------------ */
/* 1. The stress test */

struct mt {
	struct hrt_timer t;
	_Atomic uint32_t state;         /* gen << 1 | 1 once a cancel returned */
	atomic_int in_cb;
	atomic_int ambiguous;
	_Atomic uint16_t fires[GMAX];   /* per generation */
	/* The owning worker's model (main reads it after the join). */
	uint8_t gen, armed;             /* armed: last operation was a start */
	uint32_t dequeued;              /* gens a cancel found queued */
	uint32_t consumed;              /* gens a cancel found fired */
};

struct pt {                             /* periodic */
	struct hrt_timer t;
	hrt_time_t interval;
	atomic_int fires, in_cb, cancelled, restarts;
	struct hrt_base *base;
	int will_cancel;
	hrt_time_t cancel_at;           /* set by the worker when it starts it */
	int cancel_ret;
};

struct ct {                             /* chaos */
	struct hrt_timer t;
	atomic_int in_cb, final, fires;
};

struct wstats {
	long starts, rearms, cancels, cancel_hits, try_ebusy, try_done, retired;
	long pcancel_hits, pcancel_miss;
	long cstarts, ccancel_hits, cebusy;
	long fires, ambiguous, last_fired;      /* of verified main timers */
};

struct worker {
	int id;
	pthread_t th;
	uint64_t rng;
	long ops;
	struct pt *pstart[NP];          /* periodic timers it starts */
	struct pt *pcancel[NP];         /* and cancels, by time */
	int npstart, npcancel;
	struct wstats st;
};

static struct hrt_base *B[2];
static struct mt *M;
static struct pt P[NP];
static struct ct C[NC];
static atomic_long main_cbs, ambig_cbs, periodic_cbs, chaos_cbs;
static atomic_int workers_done;

static enum hrt_restart mt_cb(struct hrt_timer *t, hrt_time_t now)
{
	struct mt *x = (struct mt *)t;
	long idx = x - M;
	hrt_time_t clk = now_ns(), soft, hard;
	struct hrt_base *b = tv_base(t);
	uint32_t s;

	if (atomic_exchange(&x->in_cb, 1))
		fail_msg("timer %ld: two callbacks at once", idx);
	s = atomic_load(&x->state);
	if (s & 1)
		fail_msg("timer %ld: callback ran after hrt_timer_cancel (gen %u) returned",
		         idx, s >> 1);
	soft = tv_soft(t);
	hard = tv_hard(t);
	if (!hrt_timer_is_running(t))
		fail_msg("timer %ld: not running in its callback", idx);
	assert_true(b == B[0] || b == B[1]);
	if (!hrt_timer_is_queued(t)) {
		/* No start since the dequeue: soft/hard are the answered start's. */
		unsigned g = (unsigned)((hard - soft) % GMAX);

		if (!(g >= 1 && ((s >> 1) == g || (s >> 1) == g + 1)))
			fail_msg("timer %ld: callback for gen %u but the worker is at gen %u", idx, g, s >> 1);
		if (soft > now)
			fail_msg("timer %ld gen %u: ran at %" PRId64 " before its soft expiry %"
			         PRId64, idx, g, now, soft);
		atomic_fetch_add(&x->fires[g], 1);
	} else {
		atomic_fetch_add(&x->ambiguous, 1);
		atomic_fetch_add(&ambig_cbs, 1);
	}
	if (now > clk)
		fail_msg("callback's now %" PRId64 " is after the clock %" PRId64, now, clk);
	if (idx % 128 == 0 || (idx < NHOT && idx % 4 == 0))
		sleep_ns(20 * US);      /* widen the windows: cancel waits, -EBUSY */
	atomic_fetch_add(&main_cbs, 1);
	atomic_store(&x->in_cb, 0);
	return HRT_NORESTART;
}

static enum hrt_restart pt_cb(struct hrt_timer *t, hrt_time_t now)
{
	struct pt *p = (struct pt *)t;
	long idx = p - P;
	hrt_time_t hard = tv_hard(t), soft = tv_soft(t);
	int f;

	if (atomic_exchange(&p->in_cb, 1))
		fail_msg("periodic %ld: two callbacks at once", idx);
	if (atomic_load(&p->cancelled))
		fail_msg("periodic %ld: ran after its cancel returned", idx);
	if (hrt_timer_is_queued(t))
		fail_msg("periodic %ld: queued in its callback", idx);
	if (tv_soft(t) > now)
		fail_msg("periodic %ld: ran before its soft expiry", idx);
	f = atomic_fetch_add(&p->fires, 1) + 1;
	if (f > KP)
		fail_msg("periodic %ld: fire %d of %d", idx, f, KP);
	atomic_fetch_add(&periodic_cbs, 1);
	if (f < KP) {
		uint64_t n = hrt_timer_forward(t, now, p->interval);

		/* It runs at or past soft, so forward moves it one window on at
		 * least: to the first soft expiry past now. */
		if (!(n >= 1 && tv_soft(t) == soft + (hrt_time_t)n * p->interval &&
		      tv_hard(t) == hard + (hrt_time_t)n * p->interval &&
		      tv_soft(t) > now && tv_soft(t) - p->interval <= now))
			fail_msg("periodic %ld: forward by %" PRIu64 " from %" PRId64 " at %" PRId64,
			         idx, n, soft, now);
		atomic_fetch_add(&p->restarts, 1);
		atomic_store(&p->in_cb, 0);
		return HRT_RESTART;
	}
	atomic_store(&p->in_cb, 0);
	return HRT_NORESTART;
}

static enum hrt_restart ct_cb(struct hrt_timer *t, hrt_time_t now)
{
	struct ct *c = (struct ct *)t;

	(void)now;
	if (atomic_exchange(&c->in_cb, 1))
		fail_msg("chaos %ld: two callbacks at once", (long)(c - C));
	if (atomic_load(&c->final))
		fail_msg("chaos %ld: ran after its final cancel", (long)(c - C));
	atomic_fetch_add(&c->fires, 1);
	atomic_fetch_add(&chaos_cbs, 1);
	atomic_store(&c->in_cb, 0);
	return HRT_NORESTART;
}

/* A short expiry: mostly 0-3 ms, some already past, some 5-30 ms. */
static hrt_time_t pick_delay(uint64_t *r)
{
	uint64_t k = rnd(r) % 16;

	if (k == 0)
		return -(hrt_time_t)(rnd(r) % MS);
	if (k == 1)
		return 5 * MS + (hrt_time_t)(rnd(r) % (25 * MS));
	return (hrt_time_t)(rnd(r) % (3 * MS));
}

static int start_some(struct hrt_timer *t, uint64_t *r, hrt_time_t slack)
{
	struct hrt_base *b = B[rnd(r) & 1];
	hrt_time_t d = pick_delay(r);

	if (rnd(r) & 1)
		return hrt_timer_start_range(t, b, now_ns() + d, slack, HRT_MODE_ABS);
	return hrt_timer_start_range(t, b, d, slack, HRT_MODE_REL);
}

static void mt_start(struct worker *w, struct mt *x)
{
	unsigned g = ++x->gen;
	hrt_time_t slack = (hrt_time_t)(rnd(&w->rng) % (2 * MS));
	int ret;

	slack = slack - slack % GMAX + g;
	if (x->armed)
		w->st.rearms++;
	atomic_store(&x->state, g << 1);
	ret = start_some(&x->t, &w->rng, slack);
	if (ret != 0)
		fail_msg("start returned %d", ret);
	x->armed = 1;
	w->st.starts++;
}

/*
 * The exact per-generation model of one main timer; no callback of it may be
 * running or come (its last operation was a cancel, or the loops stopped).
 */
static void mt_verify(struct mt *x, struct wstats *st)
{
	long idx = x - M;
	unsigned total = (unsigned)atomic_load(&x->ambiguous);

	for (unsigned g = 0; g < GMAX; g++) {
		unsigned f = atomic_load(&x->fires[g]);

		total += f;
		st->fires += f;
		if (f > 1)
			fail_msg("timer %ld gen %u fired %u times", idx, g, f);
		if (!(g >= 1 && g <= x->gen ? 1 : f == 0))
			fail_msg("timer %ld: fire for gen %u, never started", idx, g);
		if (x->dequeued & (1u << g))
			if (f != 0)
				fail_msg("timer %ld gen %u: fired though cancel dequeued it", idx, g);
		if (x->consumed & (1u << g))
			if (f != 1)
				fail_msg("timer %ld gen %u: cancel found it fired, %u fires", idx, g, f);
	}
	if (x->armed) {
		st->last_fired++;
		if (atomic_load(&x->fires[x->gen]) != 1)
			fail_msg("timer %ld: last start (gen %u) fired %u times", idx, x->gen,
			         (unsigned)atomic_load(&x->fires[x->gen]));
	}
	if (total > x->gen)
		fail_msg("timer %ld: %u fires for %u starts", idx, total, x->gen);
	if (hrt_timer_is_queued(&x->t))
		fail_msg("timer %ld still queued", idx);
	st->ambiguous += atomic_load(&x->ambiguous);
}

/* Out of generations: verify, then start the model of this timer afresh.
 * Only after a cancel returned: nothing of it runs or can run. */
static void mt_retire(struct worker *w, struct mt *x)
{
	mt_verify(x, &w->st);
	for (unsigned g = 0; g < GMAX; g++)
		atomic_store(&x->fires[g], 0);
	atomic_store(&x->ambiguous, 0);
	x->gen = 0;
	x->dequeued = x->consumed = 0;
	atomic_store(&x->state, 1);
	w->st.retired++;
}

static void mt_cancel(struct worker *w, struct mt *x, int try)
{
	long idx = x - M;
	unsigned g = x->gen;
	int r = try ? hrt_timer_try_cancel(&x->t) : hrt_timer_cancel(&x->t);

	if (r == -EBUSY) {
		if (!try)
			fail_msg("timer %ld: hrt_timer_cancel returned -EBUSY", idx);
		w->st.try_ebusy++;
		return;         /* nothing done: the model stays as it is */
	}
	w->st.cancels++;
	if (try)
		w->st.try_done++;
	if (!(r == 0 || r == 1))
		fail_msg("timer %ld: cancel returned %d", idx, r);
	if (x->armed) {
		if (r == 1) {
			x->dequeued |= 1u << g;
			w->st.cancel_hits++;
		} else {
			unsigned f = atomic_load(&x->fires[g]);

			x->consumed |= 1u << g;
			if (f != 1)
				fail_msg("timer %ld gen %u: cancel found it not queued, %u fires recorded",
				         idx, g, f);
		}
	} else {
		if (r != 0)
			fail_msg("timer %ld: cancel of a timer not queued returned %d", idx, r);
	}
	x->armed = 0;
	atomic_store(&x->state, (g << 1) | 1);
	if (atomic_load(&x->in_cb))
		fail_msg("timer %ld: callback still running after cancel returned",
		         idx);
	if (hrt_timer_is_queued(&x->t))
		fail_msg("timer %ld: queued after cancel", idx);
	if (hrt_timer_is_running(&x->t))
		fail_msg("timer %ld: running after cancel", idx);
	if (x->gen == GMAX - 1)
		mt_retire(w, x);
}

static void pt_cancel(struct worker *w, struct pt *p)
{
	int r = hrt_timer_cancel(&p->t);
	int f = atomic_load(&p->fires);

	p->cancel_ret = r;
	if (r == 1) {
		w->st.pcancel_hits++;
		if (f >= KP)
			fail_msg("periodic %ld: cancel dequeued it after %d fires", (long)(p - P), f);
	} else {
		w->st.pcancel_miss++;
		if (!(r == 0 && f == KP))
			fail_msg("periodic %ld: cancel returned %d after %d of %d fires",
			         (long)(p - P), r, f, KP);
	}
	atomic_store(&p->cancelled, 1);
	if (atomic_load(&p->in_cb))
		fail_msg("periodic %ld: callback running after cancel returned",
		         (long)(p - P));
}

static void chaos_op(struct worker *w)
{
	struct ct *c = &C[rnd(&w->rng) % NC];
	uint64_t k = rnd(&w->rng) % 20;
	int r;

	if (k < 12) {
		r = start_some(&c->t, &w->rng, (hrt_time_t)(rnd(&w->rng) % MS));
		if (r != 0)
			fail_msg("chaos start returned %d", r);
		w->st.cstarts++;
	} else if (k < 17) {
		r = hrt_timer_cancel(&c->t);
		if (!(r == 0 || r == 1))
			fail_msg("chaos cancel returned %d", r);
		w->st.ccancel_hits += r == 1;
	} else {
		r = hrt_timer_try_cancel(&c->t);
		if (!(r == 0 || r == 1 || r == -EBUSY))
			fail_msg("chaos try_cancel returned %d", r);
		w->st.ccancel_hits += r == 1;
		w->st.cebusy += r == -EBUSY;
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	int pc = 0;

	/* Every timer of this worker gets started once... */
	for (long i = w->id; i < NT; i += NW)
		mt_start(w, &M[i]);
	/* Its periodic timers, the cancels spread over 0-150 ms from now: the
	 * timers live 16-80 ms (if the loops keep up), so some cancels come
	 * while they are queued (or running) and some after the last fire. */
	{
		hrt_time_t t0 = now_ns();

		for (int j = 0; j < w->npstart; j++) {
			struct pt *x = w->pstart[j];
			hrt_time_t first = now_ns() + x->interval;

			assert_int_equal(hrt_timer_start_range(&x->t, x->base, first - x->interval / 2,
						    x->interval / 2, HRT_MODE_ABS), 0);
		}
		for (int j = 0; j < w->npcancel; j++)
			w->pcancel[j]->cancel_at = t0 + 1 + (hrt_time_t)j * (150 * MS) / w->npcancel;
	}
	/* ...then random operations on random ones. */
	for (long op = 0; op < w->ops; op++) {
		/* A third of the operations hit the NHOT "hot" timers, which are
		 * firing all the time: re-arms and cancels meet running callbacks. */
		long span = rnd(&w->rng) % 3 ? NT / NW : NHOT / NW;
		struct mt *x = &M[w->id + NW * (long)(rnd(&w->rng) % span)];
		uint64_t k = rnd(&w->rng) % 100;

		if (k < 8)
			chaos_op(w);
		else if (x->gen == GMAX - 1 || k < 30)
			mt_cancel(w, x, 0);
		else if (k < 42)
			mt_cancel(w, x, 1);
		else
			mt_start(w, x);
		if ((op & 127) == 0) {
			/* Leave the loops some CPU on a small machine, so that they
			 * run while the workers do, not mostly after. */
			sleep_ns(20 * US);
			if (pc < w->npcancel && now_ns() >= w->pcancel[pc]->cancel_at)
				pt_cancel(w, w->pcancel[pc++]);
		}
	}
	for (; pc < w->npcancel; pc++) {
		hrt_time_t d = w->pcancel[pc]->cancel_at - now_ns();

		if (d > 0)
			sleep_ns(d);
		pt_cancel(w, w->pcancel[pc]);
	}
	atomic_fetch_add(&workers_done, 1);
	return NULL;
}

/* Everything the loops still owe has run. */
static int all_fired(long *missing)
{
	long m = 0;

	for (long i = 0; i < NT; i++)
		if (M[i].armed && atomic_load(&M[i].fires[M[i].gen]) == 0)
			m++;
	for (int p = 0; p < NP; p++)
		if (!P[p].will_cancel && atomic_load(&P[p].fires) < KP)
			m++;
	*missing = m;
	return m == 0;
}

static void test_concurrent_start_rearm_cancel_match_model(void **state)
{
	static struct worker W[NW];
	struct loop L[2];
	struct hrt_stats st[2];
	struct wstats sum = { 0 };
	hrt_time_t t0 = now_ns(), t_ops, t_end;
	uint64_t r = seed ^ 0x5eed;
	long missing = 0, checks = 0, total_cancel_hits, total_starts, pcancelled = 0;
	long fires_sum = 0, must_fire = 0, nambig = 0;
	int joined[2];

	(void)state;
	M = calloc(NT, sizeof(*M));
	if (!M) {
		perror("calloc");
		exit(2);
	}
	for (int i = 0; i < 2; i++) {
		B[i] = tv_new(CLOCK_MONOTONIC, 0);
		assert_non_null(B[i]);
		if (!B[i])
			return;
	}
	/* The loop passes idle = 1: IDLE walks greedily like ALWAYS; OFF does not. */
	assert_int_equal(hrt_base_set_greedy(B[0], HRT_GREEDY_OFF), 0);
	assert_int_equal(hrt_base_set_greedy(B[1], HRT_GREEDY_ALWAYS), 0);
	for (long i = 0; i < NT; i++)
		hrt_timer_init(&M[i].t, mt_cb);
	for (int i = 0; i < NC; i++)
		hrt_timer_init(&C[i].t, ct_cb);
	for (int i = 0; i < NW; i++) {
		W[i].id = i;
		W[i].rng = seed * 0x100000001b3ull + (uint64_t)i * 0x9e3779b97f4a7c15ull + 1;
		W[i].ops = OPS_TOTAL / NW;
	}
	loop_start(&L[0], B[0]);
	loop_start(&L[1], B[1]);

	/* Periodic timers: interval 2-10 ms, a window of half an interval,
	 * started by their worker once it started all its main timers; half of
	 * them it cancels later. */
	for (int p = 0; p < NP; p++) {
		struct pt *x = &P[p];
		struct worker *w = &W[p % NW];

		hrt_timer_init(&x->t, pt_cb);
		x->interval = 2 * MS + (hrt_time_t)(rnd(&r) % (8 * MS));
		x->base = B[rnd(&r) & 1];
		w->pstart[w->npstart++] = x;
		x->will_cancel = (p / NW) % 2 == 0;
		if (x->will_cancel)
			w->pcancel[w->npcancel++] = x;
	}

	for (int i = 0; i < NW; i++)
		if (pthread_create(&W[i].th, NULL, worker_main, &W[i])) {
			perror("pthread_create");
			exit(2);
		}
	/* Meanwhile: the tree checker and the read-only calls, concurrently. */
	while (atomic_load(&workers_done) < NW) {
		for (int i = 0; i < 2; i++) {
			struct hrt_stats s;

			if (hrt_base_check(B[i], NULL, 0) != 0)
				fail_msg("base %d inconsistent during the run", i);
			(void)hrt_base_count(B[i]);
			(void)tv_next(B[i]);
			hrt_base_get_stats(B[i], &s, sizeof(s));
		}
		checks++;
		/* Each check walks 100,000 nodes holding the lock: not too often. */
		for (int k = 0; k < CHECK_EVERY_MS && atomic_load(&workers_done) < NW; k++)
			sleep_ns(MS);
	}
	for (int i = 0; i < NW; i++)
		pthread_join(W[i].th, NULL);
	t_ops = now_ns();

	/* The chaos timers get a last cancel; after it none may run. */
	for (int i = 0; i < NC; i++) {
		int ret = hrt_timer_cancel(&C[i].t);

		assert_true(ret == 0 || ret == 1);
		sum.ccancel_hits += ret == 1;
		atomic_store(&C[i].final, 1);
		assert_false(atomic_load(&C[i].in_cb));
		assert_false(hrt_timer_is_queued(&C[i].t));
		assert_false(hrt_timer_is_running(&C[i].t));
	}

	/* Whatever is still armed must fire; 10 s is far beyond any expiry. */
	{
		hrt_time_t end = now_ns() + 10 * SEC;

		while (!all_fired(&missing) && now_ns() < end)
			sleep_ns(5 * MS);
		if (missing != 0)
			fail_msg("%ld timers armed at the end never fired", missing);
	}
	t_end = now_ns();
	/* Anything late (a second fire) would show up in the checks below. */
	sleep_ns(10 * MS);
	joined[0] = loop_finish(&L[0], 1);
	joined[1] = loop_finish(&L[1], 1);
	if (!joined[0] || !joined[1])
		return;         /* a loop hangs: leave everything alone */

	for (int i = 0; i < NW; i++) {
		struct wstats *s = &W[i].st;

		sum.starts += s->starts;
		sum.rearms += s->rearms;
		sum.cancels += s->cancels;
		sum.cancel_hits += s->cancel_hits;
		sum.try_ebusy += s->try_ebusy;
		sum.try_done += s->try_done;
		sum.pcancel_hits += s->pcancel_hits;
		sum.pcancel_miss += s->pcancel_miss;
		sum.cstarts += s->cstarts;
		sum.ccancel_hits += s->ccancel_hits;
		sum.cebusy += s->cebusy;
		sum.retired += s->retired;
		sum.fires += s->fires;
		sum.ambiguous += s->ambiguous;
		sum.last_fired += s->last_fired;
	}

	/* The exact per-generation model. */
	for (long i = 0; i < NT; i++)
		mt_verify(&M[i], &sum);
	fires_sum = sum.fires;
	nambig = sum.ambiguous;
	must_fire = sum.last_fired;
	for (int p = 0; p < NP; p++) {
		struct pt *x = &P[p];
		int f = atomic_load(&x->fires);

		if (x->will_cancel) {
			pcancelled++;
			if (!(f == KP || (x->cancel_ret == 1 && f < KP)))
				fail_msg("periodic %d: cancel %d, %d fires", p, x->cancel_ret, f);
		} else {
			if (f != KP)
				fail_msg("periodic %d (never cancelled) fired %d of %d times", p, f, KP);
		}
		assert_int_equal(atomic_load(&x->restarts), (f < KP ? f : KP - 1));
		assert_false(hrt_timer_is_queued(&x->t));
	}

	/* The bases' own accounting must agree with ours. */
	total_cancel_hits = sum.cancel_hits + sum.pcancel_hits + sum.ccancel_hits;
	total_starts = sum.starts + NP + sum.cstarts;
	for (int i = 0; i < 2; i++) {
		if (hrt_base_check(B[i], NULL, 0) != 0)
			fail_msg("base %d inconsistent at the end", i);
		if (hrt_base_count(B[i]) != 0)
			fail_msg("base %d: %zu timers left", i, hrt_base_count(B[i]));
		assert_int_equal(tv_next(B[i]), HRT_TIME_MAX);
		hrt_base_get_stats(B[i], &st[i], sizeof(st[i]));
	}
	{
		long expired = (long)(st[0].expired + st[1].expired);
		long counted = atomic_load(&main_cbs) + atomic_load(&periodic_cbs) +
			       atomic_load(&chaos_cbs);
		long restarts = 0;

		for (int p = 0; p < NP; p++)
			restarts += atomic_load(&P[p].restarts);
		if (expired != counted)
			fail_msg("stats.expired %ld, callbacks run %ld", expired, counted);
		if ((long)(st[0].starts + st[1].starts) != total_starts)
			fail_msg("stats.starts %" PRIu64 ", successful starts %ld",
			         st[0].starts + st[1].starts, total_starts);
		if ((long)(st[0].cancels + st[1].cancels) != total_cancel_hits)
			fail_msg("stats.cancels %" PRIu64 ", cancels that returned 1 %ld",
			         st[0].cancels + st[1].cancels, total_cancel_hits);
		if ((long)(st[0].restarts + st[1].restarts) != restarts)
			fail_msg("stats.restarts %" PRIu64 ", HRT_RESTART returned %ld",
			         st[0].restarts + st[1].restarts, restarts);
		assert_int_equal(fires_sum + nambig, atomic_load(&main_cbs));
	}
	printf("stress: %d ops by %d workers on %d timers in %.2f s, all fired %.2f s later"
	       " (%ld tree checks meanwhile)\n",
	       OPS_TOTAL, NW, NT, (double)(t_ops - t0) / SEC, (double)(t_end - t_ops) / SEC, checks);
	printf("  starts %ld (re-arms of an armed timer %ld), cancels %ld (dequeued %ld),"
	       " try_cancel -EBUSY %ld, models renewed %ld\n",
	       sum.starts, sum.rearms, sum.cancels, sum.cancel_hits, sum.try_ebusy, sum.retired);
	printf("  main callbacks %ld (answer known exactly %ld, re-armed meanwhile %ld),"
	       " last starts fired %ld\n",
	       atomic_load(&main_cbs), fires_sum, nambig, must_fire);
	printf("  periodic: %ld callbacks, %ld cancelled (%ld while queued); chaos: %ld starts,"
	       " %ld callbacks, %ld -EBUSY\n",
	       atomic_load(&periodic_cbs), pcancelled, sum.pcancel_hits, sum.cstarts,
	       atomic_load(&chaos_cbs), sum.cebusy);
	printf("  bases: passes %" PRIu64 "+%" PRIu64 ", wakeups %" PRIu64 "+%" PRIu64
	       ", greedy runs %" PRIu64 "+%" PRIu64 ", reprograms %" PRIu64 "+%" PRIu64 "\n",
	       st[0].passes, st[1].passes, st[0].wakeups, st[1].wakeups, st[0].expired_greedy,
	       st[1].expired_greedy, st[0].reprograms, st[1].reprograms);
	assert_int_equal(hrt_base_free(B[0]), 0);
	assert_int_equal(hrt_base_free(B[1]), 0);
	free(M);
}

/* ------------------------------------------------------------------------ */
/* 2. Focused tests */

/* A timer whose callback blocks until released. */
struct bt {
	struct hrt_timer t;
	atomic_int entered, release, returned, runs;
	atomic_int stop_base;           /* call hrt_base_stop on its base first */
	atomic_int restart;             /* forward 10 s and return HRT_RESTART */
	hrt_time_t soft_seen, now_seen, clock_seen;
};

static enum hrt_restart bt_cb(struct hrt_timer *t, hrt_time_t now)
{
	struct bt *x = (struct bt *)t;
	hrt_time_t end = now_ns() + 10 * SEC;

	x->soft_seen = tv_soft(t);
	x->now_seen = now;
	x->clock_seen = now_ns();
	atomic_fetch_add(&x->runs, 1);
	if (atomic_load(&x->stop_base))
		assert_int_equal(hrt_base_stop(tv_base(t)), 0);
	atomic_store(&x->returned, 0);
	atomic_store(&x->entered, 1);
	while (!atomic_load(&x->release)) {
		if (now_ns() > end) {
			fail_msg("blocked callback never released");
			break;
		}
		sleep_ns(200 * US);
	}
	if (atomic_load(&x->restart)) {
		assert_true(hrt_timer_forward(t, now, 10 * SEC) >= 1);
		atomic_store(&x->returned, 1);
		return HRT_RESTART;
	}
	atomic_store(&x->returned, 1);          /* just before returning */
	return HRT_NORESTART;
}

static void bt_init(struct bt *x)
{
	memset(x, 0, sizeof(*x));
	hrt_timer_init(&x->t, bt_cb);
}

static void bt_rearm(struct bt *x)
{
	atomic_store(&x->entered, 0);
	atomic_store(&x->release, 0);
	atomic_store(&x->returned, 0);
}

static void do_cancel(struct call *c)
{
	struct bt *x = c->arg;

	c->ret = hrt_timer_cancel(&x->t);
	c->seen = atomic_load(&x->returned);    /* had the callback returned? */
}

/*
 * x's callback is blocked (x->entered, not released): a cancel from another
 * thread must still be waiting 50 ms later, return only once the callback
 * has, and dequeue what the callback or another start re-queued (1).
 * Releases the callback.  Returns 0 if the cancel never returned.  The call
 * is static: a cancel stuck past the deadline must not point into a dead
 * stack frame.
 */
static int cancel_waits(struct bt *x, const char *what)
{
	static struct call c;

	call_spawn(&c, do_cancel, x);
	sleep_ns(50 * MS);
	if (atomic_load(&c.done))
		fail_msg("hrt_timer_cancel returned while the callback ran");
	atomic_store(&x->release, 1);
	if (!call_join(&c, 5 * SEC)) {
		fail_msg("hrt_timer_cancel never returned");
		return 0;
	}
	if (c.seen != 1)
		fail_msg("cancel returned before the callback did");
	if (c.ret != 1)
		fail_msg("cancel of %s returned %d", what, c.ret);
	assert_false(hrt_timer_is_queued(&x->t));
	return 1;
}

/* Far enough that it cannot come due before the cancel below takes it back
 * (once the callback returned, a due re-start may legally run first). */
static void do_start_far(struct call *c)
{
	struct bt *x = c->arg;

	c->ret = hrt_timer_start(&x->t, tv_base(&x->t), 10 * SEC, HRT_MODE_REL);
}

/* cancel from another thread waits for the running callback; try_cancel is
 * -EBUSY then and does nothing; start does not wait. */
static void test_cancel_waits_for_running_callback(void **state)
{
	struct hrt_base *b = tv_new(CLOCK_MONOTONIC, 0);
	struct loop l;
	struct bt x;
	struct call s;
	int ok = 1;

	(void)state;
	bt_init(&x);
	loop_start(&l, b);
	assert_int_equal(hrt_timer_start(&x.t, b, 1 * MS, HRT_MODE_REL), 0);
	if (!wait_set(&x.entered, 5 * SEC)) {
		fail_msg("timer never fired");
		ok = 0;
	}
	if (ok) {
		assert_int_equal(hrt_timer_is_running(&x.t), 1);
		assert_false(hrt_timer_is_queued(&x.t));
		assert_int_equal(hrt_timer_try_cancel(&x.t), -EBUSY);
		assert_false(atomic_load(&x.returned));

		/* A start while the callback runs returns at once and queues it. */
		call_spawn(&s, do_start_far, &x);
		if (!call_join(&s, 5 * SEC)) {
			fail_msg("hrt_timer_start waited for the running callback");
			atomic_store(&x.release, 1);
			call_join(&s, 5 * SEC);
		}
		assert_int_equal(s.ret, 0);
		assert_true(hrt_timer_is_queued(&x.t));
		assert_int_equal(hrt_timer_try_cancel(&x.t), -EBUSY);     /* still running */
		assert_true(hrt_timer_is_queued(&x.t));                /* and nothing done */

		/* cancel must wait for the callback, then dequeue the re-start. */
		if (!cancel_waits(&x, "the re-started timer")) {
			ok = 0;
		} else {
			assert_false(hrt_timer_is_running(&x.t));
			sleep_ns(30 * MS);
			if (atomic_load(&x.runs) != 1)
				fail_msg("cancelled timer ran (%d runs)",
				         atomic_load(&x.runs));
		}
	}
	if (ok) {
		/* try_cancel during the callback leaves the re-start queued: it runs. */
		bt_rearm(&x);
		assert_int_equal(hrt_timer_start(&x.t, b, 1 * MS, HRT_MODE_REL), 0);
		ok = wait_set(&x.entered, 5 * SEC);
		if (!ok)
			fail_msg("timer never fired");
		if (ok) {
			assert_int_equal(hrt_timer_start(&x.t, b, 2 * MS, HRT_MODE_REL), 0);
			assert_int_equal(hrt_timer_try_cancel(&x.t), -EBUSY);
			assert_int_equal(hrt_timer_try_cancel(&x.t), -EBUSY);
			atomic_store(&x.release, 1);
			{
				hrt_time_t end = now_ns() + 5 * SEC;

				while (atomic_load(&x.runs) < 3 && now_ns() < end)
					sleep_ns(200 * US);
			}
			if (atomic_load(&x.runs) != 3)
				fail_msg("the start try_cancel refused to cancel never ran (%d runs)",
				         atomic_load(&x.runs));
			/* Now not running: try_cancel does cancel (nothing queued). */
			while (!atomic_load(&x.returned))
				sleep_ns(200 * US);
			hrt_time_t end = now_ns() + 5 * SEC;
			int r;

			while ((r = hrt_timer_try_cancel(&x.t)) == -EBUSY && now_ns() < end)
				sleep_ns(200 * US);
			assert_int_equal(r, 0);
		}
	}
	if (ok) {
		/* A callback that returns HRT_RESTART while a cancel waits for it:
		 * the cancel takes the restart back (1), nothing runs after it. */
		int runs;

		bt_rearm(&x);
		atomic_store(&x.restart, 1);
		assert_int_equal(hrt_timer_start(&x.t, b, 1 * MS, HRT_MODE_REL), 0);
		ok = wait_set(&x.entered, 5 * SEC);
		if (!ok)
			fail_msg("timer never fired");
		if (ok) {
			runs = atomic_load(&x.runs);
			if (cancel_waits(&x, "a timer its callback restarted")) {
				assert_int_equal(hrt_base_count(b), 0);
				sleep_ns(20 * MS);
				assert_int_equal(atomic_load(&x.runs), runs);
			}
		}
	}
	atomic_store(&x.release, 1);
	if (loop_finish(&l, 1))
		assert_int_equal(hrt_base_free(b), 0);
}

/* Callbacks that cancel: themselves, another timer of their base, a timer
 * whose callback is running on the other base (waits for it). */
struct cx {
	struct hrt_timer t;
	int mode;
	struct hrt_timer *other;
	struct bt *blocked;
	atomic_int entered, done, runs;
	int r1, r2, r3, r4, seen_before, seen_after, other_runs;
};

enum { CX_SELF, CX_SELF_RESTARTED, CX_OTHERS, CX_CROSS };

static struct cx *cx_others[2];

static enum hrt_restart cx_cb(struct hrt_timer *t, hrt_time_t now)
{
	struct cx *x = (struct cx *)t;

	(void)now;
	atomic_fetch_add(&x->runs, 1);
	atomic_store(&x->entered, 1);
	switch (x->mode) {
	case CX_SELF:
		x->r1 = hrt_timer_cancel(t);            /* not queued: 0, no wait */
		x->r2 = hrt_timer_try_cancel(t);        /* its own callback: not -EBUSY */
		x->r3 = hrt_timer_start(t, tv_base(t), 3600 * SEC, HRT_MODE_REL);
		x->r4 = hrt_timer_cancel(t);            /* now queued: 1 */
		break;
	case CX_SELF_RESTARTED: {
		/* Blocks until the main thread re-started it, then cancels that. */
		hrt_time_t end = now_ns() + 10 * SEC;

		while (!hrt_timer_is_queued(t) && now_ns() < end)
			sleep_ns(200 * US);
		x->r1 = hrt_timer_cancel(t);
		break;
	}
	case CX_OTHERS:
		x->other_runs = atomic_load(&cx_others[0]->runs);
		x->r1 = hrt_timer_cancel(&cx_others[0]->t);  /* due in this very pass */
		x->r2 = hrt_timer_cancel(&cx_others[1]->t);  /* far */
		x->r3 = hrt_timer_cancel(&cx_others[1]->t);  /* again: 0 */
		break;
	case CX_CROSS:
		x->seen_before = atomic_load(&x->blocked->returned);
		x->r1 = hrt_timer_cancel(&x->blocked->t);
		x->seen_after = atomic_load(&x->blocked->returned);
		break;
	}
	atomic_store(&x->done, 1);
	return HRT_NORESTART;
}

static void cx_init(struct cx *x, int mode)
{
	memset(x, 0, sizeof(*x));
	x->mode = mode;
	hrt_timer_init(&x->t, cx_cb);
}

static void test_callback_cancels_itself_and_others(void **state)
{
	struct hrt_base *a = tv_new(CLOCK_MONOTONIC, 0), *b = tv_new(CLOCK_MONOTONIC, 0);
	struct loop la, lb;
	struct cx s, sr, o, y, z, cr;
	struct bt blk;
	int ok;

	(void)state;
	loop_start(&la, a);
	loop_start(&lb, b);

	/* Its own timer: returns (no deadlock), 0 then 1 after a re-start. */
	cx_init(&s, CX_SELF);
	assert_int_equal(hrt_timer_start(&s.t, a, 1 * MS, HRT_MODE_REL), 0);
	ok = wait_set(&s.done, 5 * SEC);
	if (!ok)
		fail_msg("a callback cancelling its own timer never finished");
	if (ok) {
		if (s.r1 != 0)
			fail_msg("self cancel returned %d", s.r1);
		if (s.r2 != 0)
			fail_msg("self try_cancel returned %d", s.r2);
		assert_int_equal(s.r3, 0);
		if (s.r4 != 1)
			fail_msg("self cancel after self start returned %d", s.r4);
		sleep_ns(10 * MS);
		assert_false(hrt_timer_is_queued(&s.t));
		assert_int_equal(hrt_base_count(a), 0);
		assert_int_equal(atomic_load(&s.runs), 1);
	}

	/* Its own timer re-started by another thread meanwhile: cancel takes
	 * that start back, without waiting for itself. */
	cx_init(&sr, CX_SELF_RESTARTED);
	assert_int_equal(hrt_timer_start(&sr.t, a, 1 * MS, HRT_MODE_REL), 0);
	ok = wait_set(&sr.entered, 5 * SEC);
	if (!ok)
		fail_msg("timer never fired");
	if (ok) {
		assert_int_equal(hrt_timer_start(&sr.t, b, 2 * MS, HRT_MODE_REL), 0);  /* other base */
		ok = wait_set(&sr.done, 5 * SEC);
		if (!ok)
			fail_msg("self cancel of a re-started timer never returned");
		if (ok) {
			if (sr.r1 != 1)
				fail_msg("self cancel of the re-start returned %d", sr.r1);
			sleep_ns(20 * MS);
			assert_int_equal(atomic_load(&sr.runs), 1);
			assert_false(hrt_timer_is_queued(&sr.t));
		}
	}

	/* Other timers of its base, one due in the same pass right after it. */
	cx_init(&o, CX_OTHERS);
	cx_init(&y, CX_SELF);
	cx_init(&z, CX_SELF);
	cx_others[0] = &y;
	cx_others[1] = &z;
	{
		/* y is started first; it can run before o only if this thread was
		 * held up past y's expiry before starting o (then o sees it ran). */
		hrt_time_t at = now_ns() + 5 * MS;

		assert_int_equal(hrt_timer_start(&z.t, a, 3600 * SEC, HRT_MODE_REL), 0);
		assert_int_equal(hrt_timer_start(&y.t, a, at + 1, HRT_MODE_ABS), 0);
		assert_int_equal(hrt_timer_start(&o.t, a, at, HRT_MODE_ABS), 0);
	}
	ok = wait_set(&o.done, 5 * SEC);
	if (!ok)
		fail_msg("a callback cancelling other timers never finished");
	if (ok && o.other_runs) {
		printf("cancel_in_callback: preempted, the later timer ran first (legal)\n");
		assert_int_equal(o.r1, 0);
		assert_int_equal(o.r2, 1);
	} else if (ok) {
		if (o.r1 != 1)
			fail_msg("cancel of the next due timer from a callback returned %d", o.r1);
		if (o.r2 != 1)
			fail_msg("cancel of a far timer from a callback returned %d", o.r2);
		assert_int_equal(o.r3, 0);
		sleep_ns(20 * MS);
		if (atomic_load(&y.runs) != 0)
			fail_msg("timer cancelled by a callback ran");
		assert_int_equal(atomic_load(&z.runs), 0);
		assert_int_equal(hrt_base_count(a), 0);
	}

	/* A timer whose callback runs (blocked) on base b, cancelled from a
	 * callback on base a: the cancel waits until that callback returned. */
	bt_init(&blk);
	cx_init(&cr, CX_CROSS);
	cr.blocked = &blk;
	assert_int_equal(hrt_timer_start(&blk.t, b, 1 * MS, HRT_MODE_REL), 0);
	ok = wait_set(&blk.entered, 5 * SEC);
	if (!ok)
		fail_msg("timer never fired");
	if (ok) {
		assert_int_equal(hrt_timer_start(&cr.t, a, 1 * MS, HRT_MODE_REL), 0);
		ok = wait_set(&cr.entered, 5 * SEC);
		if (!ok)
			fail_msg("timer never fired");
		sleep_ns(50 * MS);
		if (atomic_load(&cr.done))
			fail_msg("cancel from a callback did not wait for the other base's callback");
		atomic_store(&blk.release, 1);
		ok = ok && wait_set(&cr.done, 5 * SEC);
		if (!ok)
			fail_msg("cross-base cancel from a callback never returned");
		if (ok) {
			assert_int_equal(cr.seen_before, 0);
			if (cr.seen_after != 1)
				fail_msg("cancel returned before the callback it waited for");
			assert_int_equal(cr.r1, 0);
		}
	}
	atomic_store(&blk.release, 1);
	if (loop_finish(&la, 1) & loop_finish(&lb, 1)) {
		assert_int_equal(hrt_base_free(a), 0);
		assert_int_equal(hrt_base_free(b), 0);
	}
}

/* A timer that records when it ran. */
struct rt {
	struct hrt_timer t;
	atomic_int runs;
	hrt_time_t soft, now_seen, clock_seen;
	struct hrt_base *base_seen;
};

static enum hrt_restart rt_cb(struct hrt_timer *t, hrt_time_t now)
{
	struct rt *x = (struct rt *)t;

	x->soft = tv_soft(t);
	x->now_seen = now;
	x->clock_seen = now_ns();
	x->base_seen = tv_base(t);
	atomic_fetch_add(&x->runs, 1);
	return HRT_NORESTART;
}

static void rt_init(struct rt *x)
{
	memset(x, 0, sizeof(*x));
	hrt_timer_init(&x->t, rt_cb);
}

static void do_start_near(struct call *c)
{
	struct rt *x = c->arg;

	c->ret = hrt_timer_start(&x->t, x->base_seen, 20 * MS, HRT_MODE_REL);
}

/* A start from another thread that becomes the earliest wakes the loop:
 * fires within 2 s, not at the 10 s of what was queued before. */
static int woken(struct rt *near, struct hrt_base *b, const char *what)
{
	struct call c;
	hrt_time_t t0;
	int ok;

	near->base_seen = b;            /* where do_start_near starts it */
	sleep_ns(30 * MS);              /* let the loop block */
	t0 = now_ns();
	call_spawn(&c, do_start_near, near);
	ok = call_join(&c, 5 * SEC);
	if (!(ok && c.ret == 0))
		fail_msg("%s: start failed or blocked", what);
	ok = ok && wait_set(&near->runs, 2 * SEC);
	if (!ok)
		fail_msg("%s: a start 20 ms away from another thread did not wake the loop "
		         "within 2 s", what);
	if (ok) {
		assert_true(near->clock_seen >= near->soft && near->now_seen >= near->soft);
		assert_true(near->soft >= t0 + 20 * MS);
		assert_ptr_equal(near->base_seen, b);
	}
	return ok;
}

static void test_earlier_start_wakes_loop_cancel_runs_nothing_early(void **state)
{
	struct hrt_base *a = tv_new(CLOCK_MONOTONIC, 0), *b = tv_new(CLOCK_MONOTONIC, 0);
	struct loop la, lb;
	struct rt far, near, e, m, lt;
	int tries;

	(void)state;
	loop_start(&la, a);
	loop_start(&lb, b);

	/* Nothing queued (device disarmed), then a start. */
	rt_init(&near);
	woken(&near, a, "empty base");

	/* A timer 10 s away, then a nearer start. */
	rt_init(&far);
	rt_init(&near);
	assert_int_equal(hrt_timer_start(&far.t, a, 10 * SEC, HRT_MODE_REL), 0);
	woken(&near, a, "new earliest timer");
	assert_int_equal(atomic_load(&far.runs), 0);

	/* The 10 s timer itself re-started 20 ms away... */
	woken(&far, a, "re-armed earlier");
	/* ...and, queued 10 s away on a, moved 20 ms away onto b. */
	rt_init(&far);
	assert_int_equal(hrt_timer_start(&far.t, a, 10 * SEC, HRT_MODE_REL), 0);
	woken(&far, b, "moved to the other base");
	assert_int_equal(hrt_base_count(a), 0);

	/* The converse: cancelling the earliest runs nothing early.  e is
	 * cancelled at once; l and m (a range) must not run before their soft
	 * expiry.  A stall of 150 ms could let e fire first: that is legal,
	 * so retry then. */
	for (tries = 0; tries < 3; tries++) {
		hrt_time_t t0 = now_ns();
		int r;

		rt_init(&e);
		rt_init(&m);
		rt_init(&lt);
		assert_int_equal(hrt_timer_start(&e.t, a, t0 + 150 * MS, HRT_MODE_ABS), 0);
		assert_int_equal(hrt_timer_start_range(&m.t, a, t0 + 250 * MS, 100 * MS, HRT_MODE_ABS), 0);
		assert_int_equal(hrt_timer_start(&lt.t, a, t0 + 300 * MS, HRT_MODE_ABS), 0);
		assert_int_equal(tv_next(a), t0 + 150 * MS);
		r = hrt_timer_cancel(&e.t);
		if (r == 0) {
			assert_int_equal(atomic_load(&e.runs), 1);
			hrt_timer_cancel(&m.t);
			hrt_timer_cancel(&lt.t);
			continue;
		}
		assert_int_equal(r, 1);
		assert_int_equal(tv_next(a), t0 + 300 * MS);     /* lt: earliest hard */
		if (!wait_set(&lt.runs, 5 * SEC) || !wait_set(&m.runs, 5 * SEC))
			fail_msg("timers after a cancelled earliest never ran");
		assert_int_equal(atomic_load(&e.runs), 0);
		if (!(m.clock_seen >= t0 + 250 * MS && m.now_seen >= t0 + 250 * MS))
			fail_msg("range timer ran %" PRId64 " ns before its soft expiry",
			         t0 + 250 * MS - m.clock_seen);
		if (!(lt.clock_seen >= t0 + 300 * MS && lt.now_seen >= t0 + 300 * MS))
			fail_msg("timer ran %" PRId64 " ns before its expiry", t0 + 300 * MS - lt.clock_seen);
		break;
	}
	if (tries == 3)
		printf("wakeups: the cancel-earliest case was preempted 3 times, not checked\n");
	if (loop_finish(&la, 1) & loop_finish(&lb, 1)) {
		assert_int_equal(hrt_base_free(a), 0);
		assert_int_equal(hrt_base_free(b), 0);
	}
}

static void test_base_stop_ends_loop(void **state)
{
	struct hrt_base *b = tv_new(CLOCK_MONOTONIC, 0), *c = tv_new(CLOCK_MONOTONIC, 0);
	struct loop l;
	struct rt x;
	struct bt blk;
	int ok;

	(void)state;
	/* From another thread, the loop idle. */
	loop_start(&l, b);
	sleep_ns(20 * MS);
	assert_false(atomic_load(&l.done));
	if (!loop_finish(&l, 1))
		return;

	/* Run again on the same base: timers still fire, stop again. */
	loop_start(&l, b);
	rt_init(&x);
	assert_int_equal(hrt_timer_start(&x.t, b, 2 * MS, HRT_MODE_REL), 0);
	if (!wait_set(&x.runs, 5 * SEC))
		fail_msg("timer did not fire in a restarted loop");
	if (!loop_finish(&l, 1))
		return;

	/* Before the loop starts (a base whose loop never ran, and this one). */
	assert_int_equal(hrt_base_stop(c), 0);
	loop_start(&l, c);
	ok = loop_finish(&l, 0);
	if (!ok)
		fail_msg("hrt_base_loop did not return after a stop made before it started");
	if (!ok)
		return;
	assert_int_equal(hrt_base_stop(b), 0);
	loop_start(&l, b);
	if (!loop_finish(&l, 0))
		return;

	/* From another thread while a callback runs: returns once it has. */
	bt_init(&blk);
	loop_start(&l, b);
	assert_int_equal(hrt_timer_start(&blk.t, b, 1 * MS, HRT_MODE_REL), 0);
	ok = wait_set(&blk.entered, 5 * SEC);
	if (!ok)
		fail_msg("timer never fired");
	assert_int_equal(hrt_base_stop(b), 0);
	sleep_ns(10 * MS);
	assert_false(atomic_load(&l.done));
	atomic_store(&blk.release, 1);
	if (!loop_finish(&l, 0))
		return;

	/* From a callback. */
	bt_init(&blk);
	atomic_store(&blk.stop_base, 1);
	atomic_store(&blk.release, 1);
	loop_start(&l, b);
	assert_int_equal(hrt_timer_start(&blk.t, b, 1 * MS, HRT_MODE_REL), 0);
	if (!wait_set(&blk.returned, 5 * SEC))
		fail_msg("timer never fired");
	if (!loop_finish(&l, 0))
		return;
	assert_int_equal(atomic_load(&blk.runs), 1);
	assert_int_equal(hrt_base_free(b), 0);
	assert_int_equal(hrt_base_free(c), 0);
}

int main(int argc, char **argv)
{
	static const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cancel_waits_for_running_callback),
		cmocka_unit_test(test_callback_cancels_itself_and_others),
		cmocka_unit_test(test_earlier_start_wakes_loop_cancel_runs_nothing_early),
		cmocka_unit_test(test_base_stop_ends_loop),
		cmocka_unit_test(test_concurrent_start_rearm_cancel_match_model),
	};
	hrt_time_t t_all = now_ns();
	int failed;

	if (argc > 1) {
		seed = strtoull(argv[1], NULL, 0);
	} else {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		seed = (unsigned long long)ts.tv_sec * 1000003u + (unsigned long long)ts.tv_nsec;
		seed %= 1000000000ull;
	}
	printf("test_threads seed %llu (replay: %s %llu), %d ops%s\n", seed, argv[0], seed,
	       OPS_TOTAL,
#if defined(UNDER_TSAN)
	       " (TSan build)"
#elif defined(UNDER_ASAN)
	       " (ASan build)"
#else
	       ""
#endif
	);
	setvbuf(stdout, NULL, _IOLBF, 0);
	failed = cmocka_run_group_tests(tests, NULL, NULL);
	printf("%s: %d failed test(s), %.2f s, seed %llu\n", failed ? "FAILED" : "passed", failed,
	       (double)(now_ns() - t_all) / SEC, seed);
	return failed ? 1 : 0;
}
