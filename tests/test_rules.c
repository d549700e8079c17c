/* SPDX-License-Identifier: MIT */
/*
 * test_rules.c - the rules hrt.h states for misuse and edge values, each
 * as the documented behaviour:
 *
 *  1. forward vs start: a callback forwards its timer and returns
 *     HRT_RESTART while another thread keeps re-starting it; hrt_base_check
 *     must hold throughout (forward used to re-key a timer start had just
 *     queued: "soft after hard" in the tree, and a TSan report).
 *  2. forward and slack at the edges: from hard = INT64_MIN to now =
 *     HRT_TIME_MAX; a slack of HRT_TIME_MAX still arms a wake-up and the
 *     pass at the cap runs the timer.
 *  3. two callbacks on two bases try_cancel each other's running timer:
 *     both get -EBUSY at once (hrt_timer_cancel would wait for ever).
 *  4. queries from a hrt_base_walk_tree callback answer; changes are
 *     refused (-EDEADLK, free -EBUSY).
 *  5. hrt_base_free: -EBUSY with queued timers and from its own callback.
 *  6. init after cancel, the documented way to re-initialise.
 *  7. fork: the child gets -ECHILD from the fd calls, and its cancel does
 *     not disarm the parent's timerfd.
 *  8. a second hrt_base_loop on a base returns -EBUSY.
 *  9. the timerfd closed and its number reused by a pipe: dispatch returns
 *     -EBADF, neither reading the pipe's data nor blocking.
 *  - stats.late / late_max_ns count callbacks run after their hard expiry.
 *  - HRT_BASE_UNLOCKED: the owner thread uses it as any base; every call
 *     from another thread is refused (-EPERM or the "nothing" value) and
 *     changes nothing, also for a timer queued on it or a locked base's
 *     timer moved onto it.
 *
 * Every wait has a deadline, so a regression fails instead of hanging;
 * alarm() ends the program if something blocks anyway.
 *
 *     build/tests/test_rules [SEED [PATTERN]]   (PATTERN: the tests whose
 *                                               name matches, as fnmatch)
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "unit.h"

#include "hrt.h"
#include "hrt_values.h"

#define MS 1000000LL
#define SEC 1000000000LL

static unsigned long long seed = 1;

static hrt_time_t mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (hrt_time_t)ts.tv_sec * SEC + ts.tv_nsec;
}

static void pause_us(long us)
{
	struct timespec ts = { 0, us * 1000 };

	nanosleep(&ts, NULL);
}

/* Spins until *flag is set or `ms` pass; returns whether it was set. */
static int wait_flag(atomic_int *flag, long ms)
{
	hrt_time_t end = mono() + ms * MS;

	while (!atomic_load(flag))
		if (mono() > end)
			return 0;
	return 1;
}

static uint64_t rng(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static enum hrt_restart noop(struct hrt_timer *t, hrt_time_t now)
{
	(void)t;
	(void)now;
	return HRT_NORESTART;
}

/* forward vs start ----------------------------------------------------- */

#define RACE_TIMERS 4

static struct hrt_base *race_base;
static struct hrt_timer race_t[RACE_TIMERS];
static atomic_int race_stop, race_broken;
static char race_why[128];

/* Forward by far more than the spread of the other timers' keys, then
 * check at once: a start that landed between forward's "not queued" test
 * and its update leaves a queued timer re-keyed past its neighbours (the
 * pass re-sorts its pending queue at its end, so only a check during the
 * pass sees it). */
static enum hrt_restart race_cb(struct hrt_timer *t, hrt_time_t now)
{
	char why[128];

	hrt_timer_forward(t, now, 1000 + (hrt_time_t)(t - race_t));
	if (hrt_base_check(race_base, why, sizeof(why)) && !atomic_exchange(&race_broken, 1))
		memcpy(race_why, why, sizeof(why));
	return HRT_RESTART;
}

static void *race_starter(void *arg)
{
	uint64_t s = seed * 2654435761u + 1;

	(void)arg;
	while (!atomic_load(&race_stop)) {
		struct hrt_timer *t = &race_t[rng(&s) % RACE_TIMERS];
		hrt_time_t now = tv_now(race_base);

		/* Due at once (hard <= now at the next pass), so the callback's
		 * forward has something to move. */
		hrt_timer_start_range(t, race_base, now - (hrt_time_t)(rng(&s) % 4),
				      (hrt_time_t)(rng(&s) % 3), HRT_MODE_ABS);
	}
	return NULL;
}

static void test_forward_in_callback_against_start_keeps_tree_valid(void **state)
{
	pthread_t th;
	hrt_time_t now = 1000, end = mono() + 1500 * MS;
	uint64_t passes = 0;

	(void)state;
	race_base = tv_virtual(0);
	hrt_base_set_greedy(race_base, HRT_GREEDY_ALWAYS);
	hrt_base_set_time(race_base, now);
	for (int i = 0; i < RACE_TIMERS; i++)
		hrt_timer_init(&race_t[i], race_cb);
	atomic_store(&race_stop, 0);
	pthread_create(&th, NULL, race_starter, NULL);
	while (mono() < end && !atomic_load(&race_broken)) {
		hrt_base_run(race_base, ++now, 0);
		passes++;
	}
	atomic_store(&race_stop, 1);
	pthread_join(th, NULL);
	if (!atomic_load(&race_broken) && hrt_base_check(race_base, race_why, sizeof(race_why)))
		atomic_store(&race_broken, 1);
	printf("forward vs start: %" PRIu64 " passes\n", passes);
	if (atomic_load(&race_broken))
		fprintf(stderr, "forward vs start: base broken after %" PRIu64 " passes: %s\n",
			passes, race_why);
	assert_false(atomic_load(&race_broken));
	for (int i = 0; i < RACE_TIMERS; i++)
		hrt_timer_cancel(&race_t[i]);
	assert_int_equal(hrt_base_free(race_base), 0);
}

/* edge values ---------------------------------------------------------- */

static int ran_edge;

static enum hrt_restart edge_cb(struct hrt_timer *t, hrt_time_t now)
{
	(void)t;
	(void)now;
	ran_edge++;
	return HRT_NORESTART;
}

static void test_forward_and_slack_hold_at_time_limits(void **state)
{
	struct hrt_base *vb = tv_virtual(0);
	struct hrt_base *rb = tv_new(CLOCK_MONOTONIC, 0);
	struct itimerspec its;
	struct hrt_timer t;
	int64_t n;

	(void)state;
	/* Forward from the most negative hard to the end of time. */
	hrt_timer_init(&t, edge_cb);
	hrt_timer_start_range(&t, vb, INT64_MIN, 0, HRT_MODE_ABS);
	hrt_timer_cancel(&t);
	assert_int_equal(tv_hard(&t), INT64_MIN);
	n = hrt_timer_forward(&t, HRT_TIME_MAX, 1);
	assert_int_equal(n, INT64_MAX);         /* the count saturates */
	assert_int_equal(tv_hard(&t), HRT_TIME_MAX);      /* not in the past */
	/* Negative hard, a count that fits: exact. */
	hrt_timer_start_range(&t, vb, -10, 5, HRT_MODE_ABS);
	hrt_timer_cancel(&t);
	n = hrt_timer_forward(&t, 100, 7);               /* -5 + 16 * 7 = 107 */
	assert_int_equal(n, 16);
	assert_int_equal(tv_hard(&t), 107);
	assert_int_equal(tv_soft(&t), 102);
	n = hrt_timer_forward(&t, HRT_TIME_MAX - 100, HRT_TIME_MAX / 2);
	assert_true(n >= 1);
	assert_true(tv_hard(&t) >= HRT_TIME_MAX - 2);

	/* A slack of HRT_TIME_MAX: hard at the pass cap, a wake-up armed. */
	assert_int_equal(hrt_timer_start_range(&t, vb, 50, HRT_TIME_MAX, HRT_MODE_ABS), 0);
	assert_int_equal(tv_hard(&t), HRT_TIME_MAX - 2);
	assert_int_equal(tv_next(vb), HRT_TIME_MAX - 2);
	ran_edge = 0;
	hrt_base_set_greedy(vb, HRT_GREEDY_OFF);
	hrt_base_run(vb, HRT_TIME_MAX, 0);
	assert_int_equal(ran_edge, 1);
	/* Past the cap a timer never runs, and keeps its hard. */
	assert_int_equal(hrt_timer_start_range(&t, vb, HRT_TIME_MAX - 1, 1, HRT_MODE_ABS), 0);
	assert_int_equal(tv_hard(&t), HRT_TIME_MAX);
	hrt_timer_cancel(&t);

	if (rb && hrt_base_fd(rb) >= 0) {
		assert_int_equal(hrt_timer_start_range(&t, rb, 1 * MS, HRT_TIME_MAX, HRT_MODE_REL), 0);
		assert_int_equal(timerfd_gettime(hrt_base_fd(rb), &its), 0);
		assert_true(its.it_value.tv_sec != 0 || its.it_value.tv_nsec != 0);   /* armed */
		hrt_timer_cancel(&t);
	} else {
		assert_true(!"no real base");
	}
	assert_int_equal(hrt_base_free(vb), 0);
	assert_int_equal(hrt_base_free(rb), 0);
}

/* mutual try_cancel across bases --------------------------------------- */

struct side {
	struct hrt_base *base;
	struct hrt_timer t;
	atomic_int running, tried;
	int res;
	struct side *other;
};

static struct side sides[2];

static enum hrt_restart mutual_cb(struct hrt_timer *t, hrt_time_t now)
{
	struct side *me = HRT_CONTAINER_OF(t, struct side, t);

	(void)now;
	atomic_store(&me->running, 1);
	if (!wait_flag(&me->other->running, 3000)) {
		me->res = -1000;
		return HRT_NORESTART;
	}
	me->res = hrt_timer_try_cancel(&me->other->t);
	atomic_store(&me->tried, 1);
	wait_flag(&me->other->tried, 3000);
	return HRT_NORESTART;
}

static void *mutual_thread(void *arg)
{
	struct side *s = arg;

	hrt_base_run(s->base, 10, 0);
	return NULL;
}

static void test_try_cancel_of_running_timer_is_ebusy_across_bases(void **state)
{
	pthread_t th[2];

	(void)state;
	for (int i = 0; i < 2; i++) {
		sides[i].base = tv_virtual(0);
		sides[i].other = &sides[1 - i];
		sides[i].res = 0;
		atomic_store(&sides[i].running, 0);
		atomic_store(&sides[i].tried, 0);
		hrt_timer_init(&sides[i].t, mutual_cb);
		hrt_timer_start(&sides[i].t, sides[i].base, 5, HRT_MODE_ABS);
	}
	for (int i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, mutual_thread, &sides[i]);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(sides[i].res, -EBUSY);
		assert_int_equal(hrt_base_free(sides[i].base), 0);
	}
}

/* queries from a walk callback ----------------------------------------- */

struct walk_ctx {
	struct hrt_base *base, *other;
	struct hrt_timer *t;
	int calls, bad;
};

static void count_fn(const struct hrt_tree_node *n, void *ctx)
{
	(void)n;
	(*(int *)ctx)++;
}

static void walk_fn(const struct hrt_tree_node *n, void *arg)
{
	struct walk_ctx *c = arg;
	struct hrt_stats st;
	char why[64];
	int inner = 0;

	(void)n;
	if (c->calls++)
		return;
	c->bad |= (hrt_base_count(c->base) != 3) << 0;
	c->bad |= (tv_next(c->base) != 10) << 1;
	hrt_base_get_stats(c->base, &st, sizeof(st));
	c->bad |= (st.starts != 3) << 2;
	c->bad |= (hrt_timer_is_running(c->t) != 0) << 3;
	c->bad |= (hrt_base_check(c->base, why, sizeof(why)) != 0) << 4;
	c->bad |= (hrt_base_walk_tree(c->base, count_fn, &inner) != 3 || inner != 3) << 5;
	c->bad |= (hrt_timer_start(c->t, c->base, 99, HRT_MODE_ABS) != -EDEADLK) << 6;
	c->bad |= (hrt_timer_cancel(c->t) != -EDEADLK) << 7;
	c->bad |= (hrt_timer_try_cancel(c->t) != -EDEADLK) << 8;
	c->bad |= (hrt_base_free(c->base) != -EBUSY) << 9;
	c->bad |= (hrt_base_run(c->base, 1000, 1) != -EDEADLK) << 10;
	c->bad |= (hrt_base_set_time(c->base, 5) != -EDEADLK) << 11;
	c->bad |= (hrt_base_walk_tree(c->other, count_fn, &inner) != -EDEADLK) << 12;
	c->bad |= (hrt_base_stop(c->base) != -EDEADLK) << 13;
}

static void test_walk_callback_may_query_not_change(void **state)
{
	struct hrt_base *b = tv_virtual(0);
	struct hrt_base *o = tv_virtual(0);
	struct hrt_timer t[3];
	struct walk_ctx c = { .base = b, .other = o, .t = &t[0] };

	(void)state;
	for (int i = 0; i < 3; i++) {
		hrt_timer_init(&t[i], noop);
		hrt_timer_start(&t[i], b, 10 * (i + 1), HRT_MODE_ABS);
	}
	assert_int_equal(hrt_base_walk_tree(b, walk_fn, &c), 3);
	assert_int_equal(c.calls, 3);
	if (c.bad)
		fprintf(stderr, "walk: failed query bits %#x\n", c.bad);
	assert_int_equal(c.bad, 0);
	/* Nothing of it changed the base, and the lock is free again. */
	assert_int_equal(hrt_base_count(b), 3);
	assert_int_equal(hrt_base_check(b, NULL, 0), 0);
	assert_int_equal(hrt_base_run(b, 100, 0), 3);
	assert_int_equal(hrt_base_free(b), 0);
	assert_int_equal(hrt_base_free(o), 0);
}

/* hrt_base_free refusals, init after cancel ---------------------------- */

static int free_res = 1;

static enum hrt_restart free_cb(struct hrt_timer *t, hrt_time_t now)
{
	(void)now;
	free_res = hrt_base_free(tv_base(t));
	return HRT_NORESTART;
}

static void test_free_refuses_busy_base_and_init_follows_cancel(void **state)
{
	struct hrt_base *b = tv_virtual(0);
	struct hrt_timer t;
	char why[64] = "";

	(void)state;
	assert_int_equal(hrt_base_free(NULL), -EINVAL);
	hrt_timer_init(&t, free_cb);
	hrt_timer_start(&t, b, 10, HRT_MODE_ABS);
	assert_int_equal(hrt_base_free(b), -EBUSY);             /* queued: nothing freed */
	assert_int_equal(hrt_base_count(b), 1);
	assert_int_equal(hrt_base_run(b, 10, 0), 1);            /* the callback frees: */
	assert_int_equal(free_res, -EBUSY);                     /* refused, still usable */
	assert_int_equal(hrt_base_check(b, why, sizeof(why)), 0);

	/* The documented way to re-initialise: cancel, init, start. */
	hrt_timer_start(&t, b, 20, HRT_MODE_ABS);
	assert_int_equal(hrt_timer_cancel(&t), 1);
	hrt_timer_init(&t, noop);
	assert_int_equal(hrt_timer_start(&t, b, 30, HRT_MODE_ABS), 0);
	assert_int_equal(hrt_base_check(b, why, sizeof(why)), 0);
	assert_int_equal(hrt_base_run(b, 30, 0), 1);
	assert_int_equal(hrt_base_free(b), 0);
}

/* fork ----------------------------------------------------------------- */

static void test_fork_child_gets_echild_and_keeps_parent_timer(void **state)
{
	struct hrt_base *b = tv_new(CLOCK_MONOTONIC, 0);
	struct itimerspec its;
	struct hrt_timer t;
	int fd, status = -1;
	pid_t pid;

	(void)state;
	hrt_timer_init(&t, noop);
	fd = hrt_base_fd(b);
	assert_true(fd >= 0);
	hrt_timer_start(&t, b, 60 * SEC, HRT_MODE_REL);
	fflush(stderr);
	pid = fork();
	if (pid == 0) {
		int bad = 0;

		alarm(10);      /* the old child's loop never returned */
		bad |= hrt_base_fd(b) != -ECHILD;
		bad |= hrt_base_dispatch(b, 1) != -ECHILD;
		bad |= hrt_base_loop(b) != -ECHILD;
		bad |= hrt_base_stop(b) != -ECHILD;
		bad |= (hrt_timer_cancel(&t) != 1) << 1;        /* timers still work */
		bad |= (hrt_base_free(b) != 0) << 2;
		_exit(bad);
	}
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		fprintf(stderr, "fork: child status %#x\n", status);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	/* The child's cancel did not disarm the shared timerfd. */
	assert_int_equal(timerfd_gettime(fd, &its), 0);
	assert_true(its.it_value.tv_sec != 0 || its.it_value.tv_nsec != 0);
	assert_int_equal(hrt_base_count(b), 1);
	hrt_timer_cancel(&t);
	assert_int_equal(hrt_base_free(b), 0);
}

/* two loops ------------------------------------------------------------ */

static atomic_int loop_in, second_done;
static int first_res = 1, second_res = 1;

static enum hrt_restart loop_cb(struct hrt_timer *t, hrt_time_t now)
{
	(void)t;
	(void)now;
	atomic_store(&loop_in, 1);
	return HRT_NORESTART;
}

static void *first_loop(void *arg)
{
	first_res = hrt_base_loop(arg);
	return NULL;
}

static void *second_loop(void *arg)
{
	second_res = hrt_base_loop(arg);
	atomic_store(&second_done, 1);
	return NULL;
}

static void test_second_loop_on_base_is_ebusy(void **state)
{
	struct hrt_base *b = tv_new(CLOCK_MONOTONIC, 0);
	struct hrt_timer t;
	pthread_t th[2];

	(void)state;
	hrt_timer_init(&t, loop_cb);
	hrt_timer_start(&t, b, 1 * MS, HRT_MODE_REL);
	pthread_create(&th[0], NULL, first_loop, b);
	assert_true(wait_flag(&loop_in, 3000));               /* the first loop runs */
	pthread_create(&th[1], NULL, second_loop, b);
	assert_true(wait_flag(&second_done, 3000));
	assert_int_equal(second_res, -EBUSY);
	hrt_base_stop(b);
	if (!atomic_load(&second_done)) {               /* old behaviour: two loops */
		pause_us(100000);
		hrt_base_stop(b);
	}
	pthread_join(th[0], NULL);
	pthread_join(th[1], NULL);
	assert_int_equal(first_res, 0);
	assert_int_equal(hrt_base_free(b), 0);
}

/* the timerfd closed behind our back, its number reused ---------------- */

static void test_dispatch_on_reused_fd_is_ebadf(void **state)
{
	struct hrt_base *b = tv_new(CLOCK_MONOTONIC, 0);
	struct hrt_timer t;
	char buf[16] = "user's data";
	int fd, p[2];

	(void)state;
	hrt_timer_init(&t, noop);
	fd = hrt_base_fd(b);
	hrt_timer_start(&t, b, 60 * SEC, HRT_MODE_REL);
	assert_int_equal(pipe(p), 0);
	close(fd);
	assert_int_equal(dup2(p[0], fd), fd);                    /* blocking read end */
	/* Blocking and empty: the old dispatch blocked here (alarm ends it). */
	assert_int_equal(hrt_base_dispatch(b, 1), -EBADF);
	assert_int_equal(write(p[1], buf, 8), 8);
	assert_int_equal(hrt_base_dispatch(b, 1), -EBADF);
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	memset(buf, 0, sizeof(buf));
	assert_int_equal(read(p[0], buf, sizeof(buf)), 8);       /* the data is still there */
	assert_false(strncmp(buf, "user's d", 8));
	hrt_timer_cancel(&t);
	assert_int_equal(hrt_base_free(b), 0);                  /* closes fd (the dup) */
	close(p[0]);
	close(p[1]);
}

/* lateness in the stats ------------------------------------------------ */

static void test_stats_count_callbacks_past_hard(void **state)
{
	struct hrt_base *b = tv_virtual(0);
	struct hrt_timer t[3];
	struct hrt_stats st;

	(void)state;
	for (int i = 0; i < 3; i++)
		hrt_timer_init(&t[i], noop);
	hrt_timer_start_range(&t[0], b, 100, 0, HRT_MODE_ABS);     /* hard 100 */
	hrt_timer_start_range(&t[1], b, 100, 30, HRT_MODE_ABS);    /* hard 130 */
	hrt_timer_start_range(&t[2], b, 100, 500, HRT_MODE_ABS);   /* hard 600 */
	assert_int_equal(hrt_base_run(b, 150, 0), 3);
	hrt_base_get_stats(b, &st, sizeof(st));
	assert_int_equal(st.late, 2);
	assert_int_equal(st.late_max_ns, 50);
	hrt_timer_start_range(&t[0], b, 200, 0, HRT_MODE_ABS);
	assert_int_equal(hrt_base_run(b, 200, 0), 1);                      /* on time */
	hrt_base_get_stats(b, &st, sizeof(st));
	assert_int_equal(st.late, 2);
	hrt_base_reset_stats(b);
	hrt_base_get_stats(b, &st, sizeof(st));
	assert_int_equal(st.late + st.late_max_ns, 0);
	assert_int_equal(hrt_base_free(b), 0);
}

/* HRT_BASE_UNLOCKED ---------------------------------------------------- */

static struct hrt_base *ub, *lb;
static struct hrt_timer ut, lt_;

static void *foreign_calls(void *arg)
{
	struct hrt_stats st;
	hrt_time_t s, h;

	(void)arg;
	assert_int_equal(hrt_timer_start(&ut, ub, 5, HRT_MODE_ABS), -EPERM);     /* its timer */
	assert_int_equal(hrt_timer_start(&lt_, ub, 5, HRT_MODE_ABS), -EPERM);    /* onto it */
	assert_int_equal(hrt_timer_start_range(&ut, lb, 5, 1, HRT_MODE_ABS), -EPERM); /* off it */
	assert_int_equal(hrt_timer_cancel(&ut), -EPERM);
	assert_int_equal(hrt_timer_try_cancel(&ut), -EPERM);
	assert_int_equal(hrt_timer_forward(&ut, 1000, 10), -EPERM);
	assert_int_equal(hrt_timer_is_running(&ut), -EPERM);
	assert_int_equal(hrt_base_run(ub, 1000, 1), -EPERM);
	assert_int_equal(hrt_base_next_event(ub, &s), -EPERM);
	assert_int_equal(hrt_base_count(ub), -EPERM);
	memset(&st, 0xa5, sizeof(st));
	assert_int_equal(hrt_base_get_stats(ub, &st, sizeof(st)), -EPERM);
	assert_int_equal(st.starts, 0xa5a5a5a5a5a5a5a5ULL);     /* nothing copied */
	assert_int_equal(hrt_base_reset_stats(ub), -EPERM);
	assert_int_equal(hrt_base_set_time(ub, 500), -EPERM);
	assert_int_equal(hrt_base_walk_tree(ub, NULL, NULL), -EINVAL);
	assert_int_equal(hrt_base_check(ub, NULL, 0), -EPERM);
	assert_int_equal(hrt_base_wait_window(ub, &s, &h), -EPERM);
	assert_int_equal(hrt_base_free(ub), -EPERM);
	/* The base's kind (virtual: no fd) is looked at only once the guard
	 * let the call in: the foreign thread learns nothing of it. */
	assert_int_equal(hrt_base_fd(ub), -EPERM);
	assert_int_equal(hrt_base_dispatch(ub, 1), -EPERM);
	assert_int_equal(hrt_base_loop(ub), -EPERM);
	assert_int_equal(hrt_base_stop(ub), -EPERM);
	return NULL;
}

static int unlocked_ran;

static enum hrt_restart unlocked_cb(struct hrt_timer *t, hrt_time_t now)
{
	(void)t, (void)now;
	unlocked_ran++;
	return HRT_NORESTART;
}

static void test_unlocked_base_refuses_other_threads(void **state)
{
	struct hrt_stats st;
	pthread_t th;

	(void)state;
	assert_null(tv_virtual(64u));           /* an unknown flag */
	ub = tv_virtual(HRT_BASE_UNLOCKED);
	lb = tv_virtual(0);
	assert_non_null(ub);
	assert_non_null(lb);
	hrt_timer_init(&ut, unlocked_cb);
	hrt_timer_init(&lt_, unlocked_cb);
	assert_int_equal(hrt_timer_start_range(&ut, ub, 100, 10, HRT_MODE_ABS), 0);
	assert_int_equal(hrt_timer_start(&lt_, lb, 50, HRT_MODE_ABS), 0);
	assert_int_equal(pthread_create(&th, NULL, foreign_calls, NULL), 0);
	pthread_join(th, NULL);
	/* Nothing changed. */
	assert_int_equal(hrt_base_count(ub), 1);
	assert_int_equal(tv_next(ub), 110);
	assert_ptr_equal(tv_base(&lt_), lb);
	assert_int_equal(hrt_base_check(ub, NULL, 0), 0);
	hrt_base_get_stats(ub, &st, sizeof(st));
	assert_int_equal(st.starts, 1);
	/* The owner moves timers on and off it and runs it. */
	assert_int_equal(hrt_timer_start(&lt_, ub, 60, HRT_MODE_ABS), 0);
	assert_int_equal(hrt_base_count(lb), 0);
	assert_int_equal(hrt_base_run(ub, 200, 0), 2);
	assert_int_equal(unlocked_ran, 2);
	assert_int_equal(hrt_timer_start(&ut, lb, 300, HRT_MODE_ABS), 0);
	assert_int_equal(hrt_timer_cancel(&ut), 1);
	assert_int_equal(hrt_base_free(ub), 0);
	assert_int_equal(hrt_base_free(lb), 0);
}

/* test_rules [SEED [PATTERN]]: all tests, or those matching PATTERN. */
int main(int argc, char **argv)
{
	static const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unlocked_base_refuses_other_threads),
		/* Early: few other threads have run yet. */
		cmocka_unit_test(test_fork_child_gets_echild_and_keeps_parent_timer),
		cmocka_unit_test(test_forward_and_slack_hold_at_time_limits),
		cmocka_unit_test(test_try_cancel_of_running_timer_is_ebusy_across_bases),
		cmocka_unit_test(test_walk_callback_may_query_not_change),
		cmocka_unit_test(test_free_refuses_busy_base_and_init_follows_cancel),
		cmocka_unit_test(test_second_loop_on_base_is_ebusy),
		cmocka_unit_test(test_dispatch_on_reused_fd_is_ebadf),
		cmocka_unit_test(test_stats_count_callbacks_past_hard),
		cmocka_unit_test(test_forward_in_callback_against_start_keeps_tree_valid),
	};

	if (argc > 1)
		seed = strtoull(argv[1], NULL, 0);
	if (argc > 2)
		cmocka_set_test_filter(argv[2]);
	printf("seed %llu\n", seed);
	signal(SIGPIPE, SIG_IGN);
	alarm(60);              /* a regression that blocks fails, not hangs */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
