/* SPDX-License-Identifier: MIT */
/*
 * test_baselock_wait_fork.c - the biased lock where test_baselock's
 * stress does not go: an owner that must wait, a fork, a free.
 *
 *  - The owner (a bias never revoked) cancels timers whose callbacks run
 *    in passes on another thread, so its cancel waits on `done` (the
 *    owner's branch of the wait), while a third thread starts and cancels:
 *    after each cancel the timer is neither queued nor running and the
 *    base checks clean.
 *  - The same traffic while the owner forks (100 times): each child uses
 *    the base (start, cancel, run, check) without hanging (the fork
 *    handler shut the owner out and the child forgets owners that are
 *    gone).
 *  - hrt_base_free from the owner while a foreign thread is inside waits
 *    for it (the free takes the full lock), and the base then frees.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "unit.h"
#include "hrt.h"

void hrt__baselock_test_mode(int mode);
uint64_t hrt__baselock_test_fences(void);

#define NEAR 16
#define OWN  256
#define FAR  ((hrt_time_t)1 << 50)

static struct hrt_base *B;
static struct hrt_timer near_t[NEAR], foreign_t[NEAR], own_t[OWN];
static atomic_int running[NEAR], stop;
static atomic_long vclock;

static unsigned next_rand(unsigned *s)
{
	*s = *s * 1103515245u + 12345u;
	return *s >> 8;
}

static enum hrt_restart slow_cb(struct hrt_timer *t, hrt_time_t now)
{
	static _Thread_local unsigned s = 5;
	int i = (int)(t - near_t);

	(void)now;
	atomic_store(&running[i], 1);
	for (volatile int k = 0; k < 2000; k++)
		;
	if (next_rand(&s) % 8 == 0)
		sched_yield();
	atomic_store(&running[i], 0);
	return HRT_NORESTART;
}

static enum hrt_restart nop_cb(struct hrt_timer *t, hrt_time_t now)
{
	(void)t;
	(void)now;
	return HRT_NORESTART;
}

static void *passer(void *arg)          /* runs the passes: not the owner */
{
	(void)arg;
	while (!atomic_load(&stop))
		hrt_base_run(B, atomic_fetch_add(&vclock, 10) + 10, 0);
	return NULL;
}

static void *foreign(void *arg)
{
	unsigned s = (unsigned)unit_seed * 7u + 1u;

	(void)arg;
	while (!atomic_load(&stop)) {
		int i = (int)(next_rand(&s) % NEAR);

		if (next_rand(&s) & 1)
			hrt_timer_start(&foreign_t[i], B, FAR, HRT_MODE_ABS);
		else
			hrt_timer_cancel(&foreign_t[i]);
		if (next_rand(&s) % 64 == 0)
			usleep(50);
	}
	return NULL;
}

/* n owner steps; the number of broken promises seen. */
static long owner_steps(long n, unsigned *s)
{
	char why[128];
	long bad = 0;

	for (long k = 0; k < n; k++) {
		int i = (int)(next_rand(s) % NEAR), j = (int)(next_rand(s) % OWN);

		unit_step = k;
		hrt_timer_start(&own_t[j], B, FAR + j, HRT_MODE_ABS);
		hrt_timer_cancel(&own_t[(j + 7) % OWN]);
		if (k % 4 == 0) {
			hrt_timer_start(&near_t[i], B, atomic_load(&vclock) + 5, HRT_MODE_ABS);
			usleep(1);
			if (hrt_timer_cancel(&near_t[i]) < 0)
				bad++;
			if (hrt_timer_is_queued(&near_t[i]) != 0 || atomic_load(&running[i])) {
				if (bad++ < 5)
					print_message("after cancel: queued %d running %d\n",
						      hrt_timer_is_queued(&near_t[i]),
						      atomic_load(&running[i]));
			}
		}
		if (k % 4096 == 0 && hrt_base_check(B, why, sizeof(why)) != 0 && bad++ < 5)
			print_message("check: %s\n", why);
	}
	return bad;
}

static void setup_base(void)
{
	assert_int_equal(hrt_base_new(&B, CLOCK_MONOTONIC, HRT_BASE_VIRTUAL), 0);
	for (int i = 0; i < NEAR; i++) {
		hrt_timer_init(&near_t[i], slow_cb);
		hrt_timer_init(&foreign_t[i], nop_cb);
	}
	for (int i = 0; i < OWN; i++)
		hrt_timer_init(&own_t[i], nop_cb);
	atomic_store(&stop, 0);
	atomic_store(&vclock, 0);
}

static void teardown_base(void)
{
	for (int i = 0; i < NEAR; i++) {
		hrt_timer_cancel(&near_t[i]);
		hrt_timer_cancel(&foreign_t[i]);
	}
	for (int i = 0; i < OWN; i++)
		hrt_timer_cancel(&own_t[i]);
	assert_int_equal(hrt_base_free(B), 0);
}

static void test_owner_cancel_waits_for_a_callback_on_another_thread(void **state)
{
	unsigned s = (unsigned)unit_seed;
	uint64_t f0 = hrt__baselock_test_fences();
	pthread_t p, f;
	long bad;

	(void)state;
	hrt__baselock_test_mode(2);
	setup_base();
	owner_steps(2000, &s);                  /* claim the bias first */
	assert_int_equal(pthread_create(&p, NULL, passer, NULL), 0);
	assert_int_equal(pthread_create(&f, NULL, foreign, NULL), 0);
	bad = owner_steps(unit_steps, &s);
	atomic_store(&stop, 1);
	pthread_join(p, NULL);
	pthread_join(f, NULL);
	teardown_base();
	hrt__baselock_test_mode(0);
	assert_int_equal(bad, 0);
	assert_true(hrt__baselock_test_fences() > f0);  /* the bias was there */
}

/* Each iteration waits for its child while the passer and the foreign
 * thread run: 100 of them take about 3 s here.  (The minutes this test
 * took in CI were the first test's owner steps: see main.) */
#define FORKS 100

static void test_fork_child_can_use_a_biased_base(void **state)
{
	unsigned s = (unsigned)unit_seed + 1u;
	int hung = 0, failed = 0;
	pthread_t p, f;

	(void)state;
	setup_base();
	owner_steps(2000, &s);
	assert_int_equal(pthread_create(&p, NULL, passer, NULL), 0);
	assert_int_equal(pthread_create(&f, NULL, foreign, NULL), 0);
	for (int r = 0; r < FORKS; r++) {
		pid_t c = fork();

		if (c == 0) {
			struct hrt_timer t;
			char why[128];

			hrt_timer_init(&t, nop_cb);
			for (int k = 0; k < 1000; k++) {
				hrt_timer_start(&t, B, FAR + k, HRT_MODE_ABS);
				hrt_timer_cancel(&t);
				hrt_timer_cancel(&near_t[k % NEAR]);
			}
			hrt_base_run(B, atomic_load(&vclock) + 1000, 0);
			_exit(hrt_base_check(B, why, sizeof(why)) ? 2 : 0);
		}
		assert_true(c > 0);
		owner_steps(200, &s);
		for (int w = 0;; w++) {
			int st;
			pid_t x = waitpid(c, &st, WNOHANG);

			if (x == c) {
				if (!WIFEXITED(st) || WEXITSTATUS(st))
					failed++;
				break;
			}
			if (w > 5000) {         /* 5 s: hung */
				hung++;
				kill(c, SIGKILL);
				waitpid(c, &st, 0);
				break;
			}
			usleep(1000);
		}
	}
	atomic_store(&stop, 1);
	pthread_join(p, NULL);
	pthread_join(f, NULL);
	teardown_base();
	assert_int_equal(hung, 0);
	assert_int_equal(failed, 0);
}

/* A foreign caller inside a long walk holds the base; the owner's free
 * must wait for it rather than free under it. */
static atomic_int walking, walked;

static void slow_walk(const struct hrt_tree_node *n, void *ctx)
{
	(void)n;
	(void)ctx;
	atomic_store(&walking, 1);
	usleep(20000);
	atomic_store(&walked, 1);
}

static void *walker(void *arg)
{
	(void)arg;
	hrt_base_walk_tree(B, slow_walk, NULL);
	return NULL;
}

static void test_free_waits_for_a_call_in_progress(void **state)
{
	struct hrt_timer t;
	unsigned s = (unsigned)unit_seed + 2u;
	pthread_t w;

	(void)state;
	setup_base();
	owner_steps(2000, &s);
	hrt_timer_init(&t, nop_cb);
	assert_int_equal(hrt_timer_start(&t, B, FAR, HRT_MODE_ABS), 0);
	assert_int_equal(pthread_create(&w, NULL, walker, NULL), 0);
	while (!atomic_load(&walking))
		usleep(100);
	/* The walk's timer is queued: the free refuses, but only after the
	 * walk let go of the base. */
	assert_int_equal(hrt_base_free(B), -EBUSY);
	assert_int_equal(atomic_load(&walked), 1);
	pthread_join(w, NULL);
	assert_int_equal(hrt_timer_cancel(&t), 1);
	teardown_base();
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_owner_cancel_waits_for_a_callback_on_another_thread),
		cmocka_unit_test(test_fork_child_can_use_a_biased_base),
		cmocka_unit_test(test_free_waits_for_a_call_in_progress),
	};

	/* 20,000 owner steps (5,000 cancels of a near timer): each costs a
	 * sleeping CPU's wake-up or two (the cancel's wait on `done`, the
	 * usleep), 1.7-2.3 ms on this VM when nothing else runs, so 100,000
	 * took 183-235 s of each suite; more: build/tests/test_baselock_wait_fork
	 * SEED STEPS. */
	return cmocka_run_seeded_tests(tests, argc, argv, 20000);
}
