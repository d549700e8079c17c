/* SPDX-License-Identifier: MIT */
/*
 * test_baselock.c - the default base's biased lock under stress.  One
 * thread, the owner, creates a virtual base and hammers it (start, cancel,
 * re-arm, passes) so that it holds the bias; FOREIGN threads make every
 * cross-thread call hrt.h allows at random moments, with random pauses so
 * that the owner claims the bias back between them:
 *   - start, re-arm and cancel of their own far timers (exact model);
 *   - start then cancel / try_cancel of their own near timers, which the
 *     owner's passes run: the cancel often meets the callback running (the
 *     wait on `done`), and must return with it neither queued nor running;
 *   - queries: count, next_event, get_stats, is_queued, is_running,
 *     get_soft, get_base, and hrt_base_check (a walk of the whole set
 *     under the lock: a second holder inside would show as corruption).
 * Every QUIET steps the owner stops the others at a barrier and checks:
 * hrt_base_count equals the sum of the models, hrt_base_check is 0, and
 * each thread's timers are queued exactly as its model says.  The same
 * run with the library's policy, with a bias never revoked (so every
 * foreign call fences against an owner at full speed), and with the
 * fallback (no bias: the mutex alone); the biased runs must have fenced
 * (the path under test ran).
 *
 *     build/tests/test_baselock [SEED [STEPS]]
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "unit.h"

#include "hrt.h"

/* The library's test seam and counter (baselock.c). */
void hrt__baselock_test_mode(int mode);    /* 1 fallback, 2 sticky bias */
uint64_t hrt__baselock_test_fences(void);

#define FOREIGN  3
#define NOWN     256            /* owner's timers */
#define NFAR     32             /* per foreign thread, never due */
#define NNEAR    8              /* per foreign thread, run by the owner */
#define QUIET    65536          /* owner steps between barriers */
#define FAR      ((hrt_time_t)1 << 50)

struct near {
	struct hrt_timer t;
	atomic_int running;     /* set by its callback while it runs */
	atomic_int dead;        /* a callback ran after cancel returned */
	atomic_int cancelled;
};

struct foreign {
	pthread_t th;
	uint64_t rng;
	struct hrt_timer far[NFAR];
	int far_q[NFAR];
	struct near near[NNEAR];
	atomic_int parked;
};

static struct hrt_base *B;
static struct hrt_timer own[NOWN];
static hrt_time_t own_at[NOWN];         /* expiry if queued, else -1 */
static hrt_time_t vnow;
static struct foreign F[FOREIGN];
static atomic_int park, done_flag;
static atomic_long fired_own;

static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static enum hrt_restart own_cb(struct hrt_timer *t, hrt_time_t now)
{
	(void)t;
	(void)now;
	atomic_fetch_add(&fired_own, 1);
	return HRT_NORESTART;
}

static enum hrt_restart near_cb(struct hrt_timer *t, hrt_time_t now)
{
	struct near *n = HRT_CONTAINER_OF(t, struct near, t);

	(void)now;
	if (atomic_load(&n->cancelled))
		atomic_store(&n->dead, 1);
	atomic_store(&n->running, 1);
	for (volatile int i = 0; i < 2000; i++)  /* a window for cancel to meet */
		;
	atomic_store(&n->running, 0);
	return HRT_NORESTART;
}

static enum hrt_restart far_cb(struct hrt_timer *t, hrt_time_t now)
{
	(void)t;
	(void)now;
	return HRT_NORESTART;   /* never due */
}

static void queries(struct foreign *f, uint64_t r)
{
	struct hrt_stats st;
	hrt_time_t w;
	struct hrt_base *bb;
	char why[128];
	struct hrt_timer *t = &own[r % NOWN];

	switch ((r >> 8) % 6) {
	case 0:
		assert_true(hrt_base_count(B) >= 0);
		break;
	case 1:
		assert_true(hrt_base_next_event(B, &w) >= 0);
		break;
	case 2:
		assert_int_equal(hrt_base_get_stats(B, &st, sizeof(st)), 0);
		break;
	case 3:
		assert_true(hrt_timer_is_queued(t) >= 0);
		assert_true(hrt_timer_is_running(t) >= 0);
		break;
	case 4:
		assert_int_equal(hrt_timer_get_soft(&f->far[0], &w), 0);
		assert_true(hrt_timer_get_base(t, &bb) == 0 || hrt_timer_get_base(t, &bb) == -ENOENT);
		break;
	default:
		if (hrt_base_check(B, why, sizeof(why)) != 0)
			fail_msg("foreign check: %s", why);
	}
}

static void near_op(struct foreign *f, uint64_t r)
{
	struct near *n = &f->near[r % NNEAR];
	int ret;

	atomic_store(&n->cancelled, 0);
	assert_int_equal(hrt_timer_start(&n->t, B, 1 + (hrt_time_t)(r >> 40) % 64,
					 HRT_MODE_REL), 0);
	for (volatile unsigned i = 0; i < (r >> 20) % 4096; i++)
		;
	ret = (r >> 12) & 1 ? hrt_timer_try_cancel(&n->t) : hrt_timer_cancel(&n->t);
	if (ret == -EBUSY) {            /* try_cancel met the callback */
		ret = hrt_timer_cancel(&n->t);
	}
	assert_true(ret == 0 || ret == 1);
	atomic_store(&n->cancelled, 1);
	assert_int_equal(hrt_timer_is_queued(&n->t), 0);
	assert_int_equal(hrt_timer_is_running(&n->t), 0);
	assert_int_equal(atomic_load(&n->running), 0);
}

static void *foreign_main(void *arg)
{
	struct foreign *f = arg;

	while (!atomic_load(&done_flag)) {
		uint64_t r = rng_next(&f->rng);
		unsigned i = r % NFAR;

		if (atomic_load(&park)) {
			atomic_store(&f->parked, 1);
			while (atomic_load(&park) && !atomic_load(&done_flag))
				sched_yield();
			atomic_store(&f->parked, 0);
			continue;
		}
		switch ((r >> 4) % 4) {
		case 0:
			assert_int_equal(hrt_timer_start(&f->far[i], B, FAR + (hrt_time_t)(r >> 30),
							 HRT_MODE_ABS), 0);
			f->far_q[i] = 1;
			break;
		case 1:
			assert_int_equal(hrt_timer_cancel(&f->far[i]), f->far_q[i]);
			f->far_q[i] = 0;
			break;
		case 2:
			near_op(f, r);
			break;
		default:
			queries(f, r);
		}
		if ((r >> 50) % 2 != 0) {       /* let the owner claim the bias back */
			for (volatile unsigned k = 0; k < (r >> 32) % 20000; k++)
				;
		}
	}
	atomic_store(&f->parked, 1);
	return NULL;
}

/* All foreign threads parked: the models must match the base exactly. */
static void quiet_check(void)
{
	long q = 0;
	char why[128];

	atomic_store(&park, 1);
	for (int k = 0; k < FOREIGN; k++)
		while (!atomic_load(&F[k].parked))
			sched_yield();
	for (int i = 0; i < NOWN; i++) {
		assert_int_equal(hrt_timer_is_queued(&own[i]), own_at[i] >= 0);
		q += own_at[i] >= 0;
	}
	for (int k = 0; k < FOREIGN; k++) {
		for (int i = 0; i < NFAR; i++) {
			assert_int_equal(hrt_timer_is_queued(&F[k].far[i]), F[k].far_q[i]);
			q += F[k].far_q[i];
		}
		for (int i = 0; i < NNEAR; i++)
			assert_int_equal(atomic_load(&F[k].near[i].dead), 0);
	}
	assert_int_equal(hrt_base_count(B), q);
	if (hrt_base_check(B, why, sizeof(why)) != 0)
		fail_msg("check: %s", why);
	atomic_store(&park, 0);
}

/* One owner step on its own timers. */
static void owner_step(void)
{
	uint64_t r = unit_rng();
	unsigned i = r % NOWN;
	hrt_time_t at;

	switch ((r >> 16) % 8) {
	case 0: case 1: case 2:         /* start or re-arm */
		at = vnow + 1 + (hrt_time_t)((r >> 24) % 1000);
		assert_int_equal(hrt_timer_start(&own[i], B, at, HRT_MODE_ABS), 0);
		own_at[i] = at;
		break;
	case 3: case 4:
		assert_int_equal(hrt_timer_cancel(&own[i]), own_at[i] >= 0);
		own_at[i] = -1;
		break;
	case 5:
		assert_int_equal(hrt_timer_try_cancel(&own[i]), own_at[i] >= 0);
		own_at[i] = -1;
		break;
	default:                        /* a pass: whatever is due runs */
		vnow += (hrt_time_t)((r >> 24) % 8);
		assert_true(hrt_base_run(B, vnow, 0) >= 0);
		for (int k = 0; k < NOWN; k++)
			if (own_at[k] >= 0 && own_at[k] <= vnow)
				own_at[k] = -1;
	}
}

static void stress(int mode)
{
	uint64_t fences = hrt__baselock_test_fences();

	hrt__baselock_test_mode(mode);
	unit_rng_state = unit_seed;
	vnow = 0;
	atomic_store(&park, 0);
	atomic_store(&done_flag, 0);
	assert_int_equal(hrt_base_new(&B, CLOCK_MONOTONIC, HRT_BASE_VIRTUAL), 0);
	for (int i = 0; i < NOWN; i++) {
		hrt_timer_init(&own[i], own_cb);
		own_at[i] = -1;
	}
	for (int k = 0; k < FOREIGN; k++) {
		F[k].rng = unit_seed * 31 + (uint64_t)k;
		atomic_store(&F[k].parked, 0);
		for (int i = 0; i < NFAR; i++) {
			hrt_timer_init(&F[k].far[i], far_cb);
			F[k].far_q[i] = 0;
		}
		for (int i = 0; i < NNEAR; i++) {
			hrt_timer_init(&F[k].near[i].t, near_cb);
			atomic_store(&F[k].near[i].dead, 0);
		}
	}
	for (int i = 0; i < 64; i++)    /* the owner claims the bias */
		owner_step();
	for (int k = 0; k < FOREIGN; k++)
		assert_int_equal(pthread_create(&F[k].th, NULL, foreign_main, &F[k]), 0);
	for (unit_step = 0; unit_step < unit_steps; unit_step++) {
		owner_step();
		if (unit_step % QUIET == QUIET - 1)
			quiet_check();
	}
	quiet_check();
	atomic_store(&done_flag, 1);
	for (int k = 0; k < FOREIGN; k++)
		pthread_join(F[k].th, NULL);
	quiet_check();
	for (int i = 0; i < NOWN; i++)
		hrt_timer_cancel(&own[i]);
	for (int k = 0; k < FOREIGN; k++)
		for (int i = 0; i < NFAR; i++)
			hrt_timer_cancel(&F[k].far[i]);
	assert_int_equal(hrt_base_free(B), 0);
	print_message("%s: %llu heavy fences\n", mode == 1 ? "fallback" : mode ? "sticky" : "policy",
		      (unsigned long long)(hrt__baselock_test_fences() - fences));
	if (mode == 1)
		assert_true(hrt__baselock_test_fences() == fences);
	else
		assert_true(hrt__baselock_test_fences() > fences);
	hrt__baselock_test_mode(0);
}

static void test_policy(void **state)
{
	(void)state;
	stress(0);
}

static void test_sticky(void **state)
{
	(void)state;
	stress(2);
}

static void test_fallback(void **state)
{
	(void)state;
	stress(1);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_policy),
		cmocka_unit_test(test_sticky),
		cmocka_unit_test(test_fallback),
	};

	return cmocka_run_seeded_tests(tests, argc, argv, 1000000);
}
