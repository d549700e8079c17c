/* SPDX-License-Identifier: MIT */
/*
 * test_timerfd.c - the wake-up device (src/timerfd.c, src/loop.c) on real
 * clocks: hrt_base_fd's fd and its flags, when it is armed and disarmed and
 * for which instant, the reprogram contract (a start that does not become
 * the earliest and a cancel of a later timer cost no system call), timers
 * firing through poll + hrt_base_dispatch and through hrt_base_loop, the
 * settime flags per clock, ECANCELED (a wall-clock change) and EAGAIN
 * (a spurious wake) from read, other read errors, and failures of
 * timerfd_settime: dispatch returns the arm's error and retries, nothing
 * is lost, hrt_base_loop rides out a short failure and returns the error
 * of a lasting one rather than blocking forever.  hrt_base_dispatch
 * without an fd (or base) is -EINVAL.
 *
 * Read and settime failures are injected through the library's two seams
 * (hidden-visibility function pointers in timerfd.c, reachable because the
 * test links the static library); every sub-test puts the real functions
 * back (the teardown of every test, however it ends).  Nothing here
 * touches the machine's clock.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "unit.h"

#include "hrt.h"
#include "hrt_values.h"
#include "base.h"
#include "timerfd.h"

#define MS 1000000LL
#define SEC 1000000000LL

static const clockid_t clocks[3] = { CLOCK_MONOTONIC, CLOCK_BOOTTIME, CLOCK_REALTIME };
static const char *const clock_names[3] = { "CLOCK_MONOTONIC", "CLOCK_BOOTTIME",
					    "CLOCK_REALTIME" };

static hrt_time_t clk_now(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (hrt_time_t)ts.tv_sec * SEC + ts.tv_nsec;
}

static hrt_time_t ts_ns(const struct timespec *ts)
{
	return (hrt_time_t)ts->tv_sec * SEC + ts->tv_nsec;
}

/* Seams --------------------------------------------------------------------- */

/* Counting/injecting system calls for one base's timerfd device
 * (install_seams).  Touched only by the thread that uses the library at the
 * time (the loop sub-tests hand them over with the thread's creation and
 * take them back with its join). */
static long n_read, n_settime;
static int read_inject;                 /* errno for the next read, once; 0: none */
static int settime_fail;                /* errno for every settime; 0: pass through */
static int settime_ecanceled;           /* next settime: arm, then say ECANCELED */
static hrt_time_t fail_until;           /* if set: settime_fail only until then (MONOTONIC) */
static int last_flags;
static struct itimerspec last_its;

static ssize_t fake_read(int fd, void *buf, size_t len)
{
	n_read++;
	if (read_inject) {
		errno = read_inject;
		read_inject = 0;
		return -1;
	}
	return read(fd, buf, len);
}

static int fake_settime(int fd, int flags, const struct itimerspec *nv, struct itimerspec *ov)
{
	n_settime++;
	last_flags = flags;
	last_its = *nv;
	if (settime_fail && (!fail_until || clk_now(CLOCK_MONOTONIC) < fail_until)) {
		errno = settime_fail;
		return -1;
	}
	if (settime_ecanceled && timerfd_settime(fd, flags, nv, ov) == 0) {
		/* timerfd_settime(2): armed, but a wall-clock change that was
		 * not read yet is reported (and consumed) as ECANCELED. */
		settime_ecanceled = 0;
		errno = ECANCELED;
		return -1;
	}
	return timerfd_settime(fd, flags, nv, ov);
}

static const struct hrt_timerfd_sys fake_sys = { fake_read, fake_settime };

/* b's device (made now if b has none: the base is empty there, so that
 * arms nothing) makes its system calls through the fakes. */
static void install_seams(struct hrt_base *b)
{
	assert_true(hrt_base_fd(b) >= 0);
	hrt__timerfd_set_sys(hrt__base_device(b), &fake_sys);
	n_read = n_settime = 0;
	read_inject = settime_fail = settime_ecanceled = 0;
	fail_until = 0;
	last_flags = -1;
	memset(&last_its, 0, sizeof(last_its));
}

static void restore_seams(void)
{
	read_inject = settime_fail = settime_ecanceled = 0;
	fail_until = 0;
}

/* Timers -------------------------------------------------------------------- */

struct tt {
	struct hrt_timer t;
	clockid_t clk;
	int fired;
	hrt_time_t now_arg;     /* `now` the pass gave */
	hrt_time_t clk_at;      /* the clock read inside the callback */
	struct hrt_base *stop;  /* hrt_base_stop this base when run */
	int fail_settime;       /* from now on every settime fails with this */
};

static enum hrt_restart tt_cb(struct hrt_timer *t, hrt_time_t now)
{
	struct tt *x = (struct tt *)((char *)t - offsetof(struct tt, t));

	x->clk_at = clk_now(x->clk);
	x->now_arg = now;
	x->fired++;
	if (x->fail_settime)
		settime_fail = x->fail_settime;
	if (x->stop)
		hrt_base_stop(x->stop);
	return HRT_NORESTART;
}

static void tt_init(struct tt *x, clockid_t clk)
{
	memset(x, 0, sizeof(*x));
	hrt_timer_init(&x->t, tt_cb);
	x->clk = clk;
}

static struct hrt_stats stats(struct hrt_base *b)
{
	struct hrt_stats s;

	hrt_base_get_stats(b, &s, sizeof(s));
	return s;
}

/* 1 if fd is disarmed. */
static int disarmed(int fd)
{
	struct itimerspec cur;

	if (timerfd_gettime(fd, &cur) < 0)
		return 0;
	return cur.it_value.tv_sec == 0 && cur.it_value.tv_nsec == 0;
}

/* 1 if fd is armed (one-shot) for the absolute instant `when` on clk: the
 * remaining time timerfd_gettime reports lies between when - (clock after)
 * and when - (clock before), give or take the tolerance.  If `when` has
 * passed already (a slow machine), the fd must have fired: readable. */
static int armed_at(int fd, clockid_t clk, hrt_time_t when)
{
	struct itimerspec cur;
	hrt_time_t before, after, rem;
	const hrt_time_t tol = 1 * MS;

	before = clk_now(clk);
	if (timerfd_gettime(fd, &cur) < 0)
		return 0;
	after = clk_now(clk);
	rem = ts_ns(&cur.it_value);
	if (rem == 0 && when <= after) {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		if (poll(&p, 1, 0) == 1)
			return 1;
	}
	if (rem == 0 || cur.it_interval.tv_sec || cur.it_interval.tv_nsec) {
		fprintf(stderr, "  fd %d: not armed one-shot (remaining %lld)\n", fd, (long long)rem);
		return 0;
	}
	if (rem < when - after - tol || rem > when - before + tol) {
		fprintf(stderr, "  fd %d: remaining %lld ns, want %lld..%lld\n", fd, (long long)rem,
			(long long)(when - after), (long long)(when - before));
		return 0;
	}
	return 1;
}

/* Polls fd and dispatches until x fired or `ms` passed.  Returns the number of
 * dispatches that found the fd readable. */
static int poll_until_fired(struct hrt_base *b, int fd, struct tt *x, int ms)
{
	hrt_time_t end = clk_now(CLOCK_MONOTONIC) + ms * MS;
	int n = 0;

	while (!x->fired && clk_now(CLOCK_MONOTONIC) < end) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int r = poll(&p, 1, 50);

		if (r > 0 && (p.revents & POLLIN)) {
			hrt_base_dispatch(b, 0);
			n++;
		}
	}
	return n;
}

/* hrt_base_loop in a thread, with a deadline ------------------------------- */

struct looper {
	struct hrt_base *b;
	int rc;
	int done;               /* atomic */
};

static void *looper_main(void *arg)
{
	struct looper *l = arg;

	l->rc = hrt_base_loop(l->b);
	__atomic_store_n(&l->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Runs hrt_base_loop(b) in a thread.  Returns 1 if it returned by itself
 * within `ms` (its result in *rc), 0 if it had to be stopped. */
static int loop_with_deadline(struct hrt_base *b, int ms, int *rc)
{
	struct looper l = { .b = b, .rc = 1, .done = 0 };
	hrt_time_t end = clk_now(CLOCK_MONOTONIC) + ms * MS;
	struct timespec nap = { 0, 2 * MS };
	pthread_t th;
	int in_time = 1;

	if (pthread_create(&th, NULL, looper_main, &l)) {
		fail_msg("pthread_create failed");
	}
	while (!__atomic_load_n(&l.done, __ATOMIC_ACQUIRE)) {
		if (clk_now(CLOCK_MONOTONIC) >= end) {
			in_time = 0;
			hrt_base_stop(b);
			break;
		}
		nanosleep(&nap, NULL);
	}
	if (!in_time) {
		/* The stop must get it out; give it a second before giving up. */
		end = clk_now(CLOCK_MONOTONIC) + 1000 * MS;
		while (!__atomic_load_n(&l.done, __ATOMIC_ACQUIRE)) {
			if (clk_now(CLOCK_MONOTONIC) >= end) {
				fprintf(stderr, "  hrt_base_loop ignores hrt_base_stop\n");
				_exit(1);
			}
			nanosleep(&nap, NULL);
		}
	}
	pthread_join(th, NULL);
	*rc = l.rc;
	return in_time;
}

/* Sub-tests ------------------------------------------------------------------ */

static void test_fd_per_real_clock_none_for_virtual(void **state)
{
	struct hrt_base *vb = tv_virtual(0);

	(void)state;
	assert_non_null(vb);
	assert_int_equal(hrt_base_fd(vb), -EOPNOTSUPP);
	assert_int_equal(hrt_base_dispatch(vb, 0), -EOPNOTSUPP);
	assert_int_equal(hrt_base_loop(vb), -EOPNOTSUPP);
	assert_int_equal(hrt_base_fd(NULL), -EINVAL);
	assert_int_equal(hrt_base_free(vb), 0);

	for (int c = 0; c < 3; c++) {
		struct hrt_base *b = tv_new(clocks[c], HRT_BASE_ENV);
		int fd, fl, fdf;

		assert_non_null(b);
		if (!b)
			continue;
		fd = hrt_base_fd(b);
		assert_true(fd >= 0);
		fl = fcntl(fd, F_GETFL);
		fdf = fcntl(fd, F_GETFD);
		assert_true(fl >= 0 && (fl & O_NONBLOCK));
		assert_true(fdf >= 0 && (fdf & FD_CLOEXEC));
		assert_int_equal(hrt_base_fd(b), fd);
		assert_int_equal(hrt_base_fd(b), fd);
		assert_true(disarmed(fd));
		assert_int_equal(hrt_base_free(b), 0);
	}
}

/* Armed at the hard expiry of a start that becomes the earliest; a cancel
 * leaves the fd alone (lazy re-arm: hrt.h, hrt_base_fd), and the next
 * dispatch, fired or not, re-arms it at the earliest hard expiry exactly,
 * or disarms it when nothing is queued.  On every clock, and for timers
 * started before the fd existed. */
static void test_armed_at_earliest_hard_lazily_exact_at_dispatch(void **state)
{
	(void)state;
	for (int c = 0; c < 3; c++) {
		clockid_t clk = clocks[c];
		struct hrt_base *b = tv_new(clk, HRT_BASE_ENV);
		struct tt a, e;
		hrt_time_t now;
		int fd;

		tt_init(&a, clk);
		tt_init(&e, clk);
		fd = hrt_base_fd(b);
		assert_true(fd >= 0);
		assert_true(disarmed(fd));
		now = clk_now(clk);
		assert_int_equal(hrt_timer_start_range(&a.t, b, now + 8 * SEC, 2 * SEC, HRT_MODE_ABS), 0);
		assert_true(armed_at(fd, clk, now + 10 * SEC));
		assert_int_equal(hrt_timer_cancel(&a.t), 1);
		assert_true(armed_at(fd, clk, now + 10 * SEC));        /* lazy */
		assert_int_equal(hrt_base_dispatch(b, 1), 0);
		assert_true(disarmed(fd));
		/* Relative start: armed at base-now + soft + slack. */
		now = clk_now(clk);
		assert_int_equal(hrt_timer_start_range(&a.t, b, 5 * SEC, 1 * SEC, HRT_MODE_REL), 0);
		assert_true(armed_at(fd, clk, tv_hard(&a.t)));
		assert_true(tv_hard(&a.t) >= now + 6 * SEC);
		assert_int_equal(hrt_timer_cancel(&a.t), 1);
		assert_int_equal(hrt_base_dispatch(b, 1), 0);
		assert_true(disarmed(fd));
		assert_int_equal(hrt_base_free(b), 0);

		/* Timers queued before the fd is created: armed at creation.  (A
		 * timer remembers its last base, freed now: initialise again.) */
		b = tv_new(clk, HRT_BASE_ENV);
		tt_init(&a, clk);
		now = clk_now(clk);
		hrt_timer_start_range(&a.t, b, now + 7 * SEC, 0, HRT_MODE_ABS);
		hrt_timer_start_range(&e.t, b, now + 3 * SEC, 1 * SEC, HRT_MODE_ABS);
		fd = hrt_base_fd(b);
		assert_true(fd >= 0);
		assert_true(armed_at(fd, clk, now + 4 * SEC));
		assert_int_equal(hrt_timer_cancel(&e.t), 1);
		assert_true(armed_at(fd, clk, now + 4 * SEC));
		assert_int_equal(hrt_base_dispatch(b, 1), 0);
		assert_true(armed_at(fd, clk, now + 7 * SEC));
		assert_int_equal(hrt_timer_cancel(&a.t), 1);
		assert_int_equal(hrt_base_dispatch(b, 1), 0);
		assert_true(disarmed(fd));
		assert_int_equal(a.fired + e.fired, 0);
		assert_int_equal(hrt_base_free(b), 0);
	}
}

/* stats.reprograms counts exactly the settime calls; only a start that
 * moves the earliest hard expiry earlier causes one, never a cancel or a
 * move later (lazy re-arm); a dispatch re-arms exactly. */
static void test_reprogram_only_when_a_start_moves_the_earliest_earlier(void **state)
{
	struct hrt_base *b = tv_new(CLOCK_MONOTONIC, HRT_BASE_ENV);
	struct tt a, l1, l2, e;
	struct hrt_stats s0;
	long n0;
	hrt_time_t now = clk_now(CLOCK_MONOTONIC);
	int fd;

	(void)state;
	install_seams(b);
	tt_init(&a, CLOCK_MONOTONIC);
	tt_init(&l1, CLOCK_MONOTONIC);
	tt_init(&l2, CLOCK_MONOTONIC);
	tt_init(&e, CLOCK_MONOTONIC);
	fd = hrt_base_fd(b);
	assert_true(fd >= 0);
	assert_int_equal(n_settime, 0);                 /* new fd on an empty base: no arm */
	s0 = stats(b);
	n0 = n_settime;

#define REPROGRAMS() ((long long)(stats(b).reprograms - s0.reprograms))
#define SETTIMES() ((long long)(n_settime - n0))

	/* Becomes the earliest: +1. */
	hrt_timer_start_range(&a.t, b, now + 10 * SEC, 0, HRT_MODE_ABS);
	assert_int_equal(REPROGRAMS(), 1);
	assert_int_equal(SETTIMES(), 1);
	/* Later ones: +0. */
	hrt_timer_start_range(&l1.t, b, now + 20 * SEC, 0, HRT_MODE_ABS);
	hrt_timer_start_range(&l2.t, b, now + 25 * SEC, 5 * SEC, HRT_MODE_ABS);
	assert_int_equal(REPROGRAMS(), 1);
	assert_int_equal(SETTIMES(), 1);
	/* Same hard expiry as the earliest: not earlier, +0. */
	hrt_timer_start_range(&e.t, b, now + 9 * SEC, 1 * SEC, HRT_MODE_ABS);
	assert_int_equal(REPROGRAMS(), 1);
	assert_int_equal(hrt_timer_cancel(&e.t), 1);    /* a tie left: still armed there */
	assert_int_equal(REPROGRAMS(), 1);
	assert_true(armed_at(fd, CLOCK_MONOTONIC, now + 10 * SEC));
	/* Cancel of a later timer: +0. */
	assert_int_equal(hrt_timer_cancel(&l1.t), 1);
	assert_int_equal(REPROGRAMS(), 1);
	assert_int_equal(SETTIMES(), 1);
	/* A start that becomes the earliest: +1. */
	hrt_timer_start_range(&e.t, b, now + 5 * SEC, 0, HRT_MODE_ABS);
	assert_int_equal(REPROGRAMS(), 2);
	assert_int_equal(SETTIMES(), 2);
	assert_true(armed_at(fd, CLOCK_MONOTONIC, now + 5 * SEC));
	/* Cancel of the earliest: +0, the fd stays armed at it (lazy). */
	assert_int_equal(hrt_timer_cancel(&e.t), 1);
	assert_int_equal(REPROGRAMS(), 2);
	assert_int_equal(SETTIMES(), 2);
	assert_true(armed_at(fd, CLOCK_MONOTONIC, now + 5 * SEC));
	/* A cancel of a timer that is not queued: +0. */
	assert_int_equal(hrt_timer_cancel(&e.t), 0);
	assert_int_equal(REPROGRAMS(), 2);
	/* A start before the armed instant: +1, though not before the
	 * earliest queued hard expiry the fd was armed for. */
	hrt_timer_start_range(&e.t, b, now + 4 * SEC, 0, HRT_MODE_ABS);
	assert_int_equal(REPROGRAMS(), 3);
	assert_true(armed_at(fd, CLOCK_MONOTONIC, now + 4 * SEC));
	/* Moving the earliest later, and cancelling: +0 each. */
	hrt_timer_start_range(&e.t, b, now + 40 * SEC, 0, HRT_MODE_ABS);
	hrt_timer_start_range(&a.t, b, now + 15 * SEC, 0, HRT_MODE_ABS);
	assert_int_equal(REPROGRAMS(), 3);
	assert_int_equal(hrt_timer_cancel(&e.t), 1);
	assert_int_equal(REPROGRAMS(), 3);
	assert_true(armed_at(fd, CLOCK_MONOTONIC, now + 4 * SEC));
	/* A dispatch (nothing read) re-arms at the earliest hard expiry: +1. */
	assert_int_equal(hrt_base_dispatch(b, 1), 0);
	assert_int_equal(REPROGRAMS(), 4);
	assert_true(armed_at(fd, CLOCK_MONOTONIC, now + 15 * SEC));
	/* Cancel the rest: +0; the next dispatch disarms: +1. */
	assert_int_equal(hrt_timer_cancel(&a.t), 1);
	assert_int_equal(hrt_timer_cancel(&l2.t), 1);
	assert_int_equal(REPROGRAMS(), 4);
	assert_int_equal(hrt_base_dispatch(b, 1), 0);
	assert_int_equal(REPROGRAMS(), 5);
	assert_true(disarmed(fd));
	assert_int_equal(last_flags, 0);
	assert_int_equal(last_its.it_value.tv_sec, 0);
	assert_int_equal(last_its.it_value.tv_nsec, 0);
	assert_int_equal(SETTIMES(), REPROGRAMS());
	assert_int_equal(n_read, 2);
#undef REPROGRAMS
#undef SETTIMES
	restore_seams();
	assert_int_equal(hrt_base_free(b), 0);
}

/* Settime flags per clock: CLOCK_REALTIME arms with CANCEL_ON_SET|ABSTIME,
 * the others with ABSTIME only; the armed value is the hard expiry. */
static void test_settime_flags_per_clock(void **state)
{
	(void)state;
	for (int c = 0; c < 3; c++) {
		clockid_t clk = clocks[c];
		struct hrt_base *b = tv_new(clk, HRT_BASE_ENV);
		int want = TFD_TIMER_ABSTIME | (clk == CLOCK_REALTIME ? TFD_TIMER_CANCEL_ON_SET : 0);
		hrt_time_t hard = clk_now(clk) + 10 * SEC + 123456789;
		struct tt a;

		install_seams(b);
		tt_init(&a, clk);
		assert_true(hrt_base_fd(b) >= 0);
		hrt_timer_start_range(&a.t, b, hard - 2 * SEC, 2 * SEC, HRT_MODE_ABS);
		assert_int_equal(n_settime, 1);
		if (last_flags != want)
			fprintf(stderr, "  %s: flags %#x, want %#x\n", clock_names[c], last_flags, want);
		assert_int_equal(last_flags, want);
		assert_int_equal(ts_ns(&last_its.it_value), hard);
		assert_int_equal(last_its.it_value.tv_nsec, hard % SEC);
		assert_int_equal(ts_ns(&last_its.it_interval), 0);
		hrt_timer_cancel(&a.t);
		assert_int_equal(n_settime, 1);         /* lazy */
		assert_int_equal(hrt_base_dispatch(b, 1), 0);
		assert_int_equal(n_settime, 2);
		assert_int_equal(ts_ns(&last_its.it_value), 0);
		restore_seams();
		assert_int_equal(hrt_base_free(b), 0);
	}
}

/* A timer a few ms away fires, through poll + dispatch and through
 * hrt_base_loop, never before its soft expiry, on every clock. */
static void test_timer_fires_never_before_soft(void **state)
{
	(void)state;
	for (int c = 0; c < 3; c++) {
		clockid_t clk = clocks[c];
		struct hrt_base *b = tv_new(clk, HRT_BASE_ENV);
		struct hrt_stats s0;
		hrt_time_t soft, hard;
		struct tt a;
		int fd, rc;

		print_message("  %s\n", clock_names[c]);

		tt_init(&a, clk);
		fd = hrt_base_fd(b);
		s0 = stats(b);
		soft = clk_now(clk) + 3 * MS;
		hard = soft + 2 * MS;
		hrt_timer_start_range(&a.t, b, soft, hard - soft, HRT_MODE_ABS);
		poll_until_fired(b, fd, &a, 2000);
		assert_int_equal(a.fired, 1);
		if (a.fired) {
			assert_true(a.clk_at >= soft);
			assert_true(a.now_arg >= soft);
			/* The pass that ran it was woken by the fd, armed at the
			 * hard expiry, and read the clock after that. */
			assert_true(a.now_arg >= hard);
			assert_true(a.clk_at >= a.now_arg);
		}
		assert_int_equal(stats(b).wakeups - s0.wakeups, 1);
		assert_int_equal(stats(b).expired - s0.expired, 1);
		assert_true(disarmed(fd));
		assert_int_equal(hrt_base_count(b), 0);

		/* The same through hrt_base_loop; the callback stops it. */
		tt_init(&a, clk);
		a.stop = b;
		soft = clk_now(clk) + 4 * MS;
		hard = soft + 1 * MS;
		hrt_timer_start_range(&a.t, b, soft, hard - soft, HRT_MODE_ABS);
		assert_true(loop_with_deadline(b, 3000, &rc));
		assert_int_equal(rc, 0);
		assert_int_equal(a.fired, 1);
		if (a.fired) {
			assert_true(a.clk_at >= soft);
			assert_true(a.now_arg >= soft);
			assert_true(a.now_arg >= hard);
		}
		assert_true(disarmed(fd));
		assert_int_equal(hrt_base_free(b), 0);
	}
}

/* ECANCELED from read (what a wall-clock change gives a CANCEL_ON_SET
 * timerfd), injected: counted as a clock jump, what is due at the freshly
 * read clock runs, what is not does not, and the fd is re-armed. */
static void test_read_ecanceled_counts_clock_jump_and_rearms(void **state)
{
	const int want = TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET;
	struct hrt_base *b = tv_new(CLOCK_REALTIME, HRT_BASE_ENV);
	struct hrt_stats s0, s1;
	struct tt past, future;
	hrt_time_t now0, before, after;
	long nst;
	ssize_t n;
	int fd;

	(void)state;
	tt_init(&past, CLOCK_REALTIME);
	tt_init(&future, CLOCK_REALTIME);
	fd = hrt_base_fd(b);
	install_seams(b);
	now0 = clk_now(CLOCK_REALTIME);
	/* Soft expiry already passed (as after a forward jump), hard far. */
	hrt_timer_start_range(&past.t, b, now0 - 1 * MS, 10 * SEC + 1 * MS, HRT_MODE_ABS);
	hrt_timer_start_range(&future.t, b, now0 + 5 * SEC, 15 * SEC, HRT_MODE_ABS);
	assert_true(armed_at(fd, CLOCK_REALTIME, now0 + 10 * SEC));
	s0 = stats(b);
	nst = n_settime;
	read_inject = ECANCELED;
	before = clk_now(CLOCK_REALTIME);
	n = hrt_base_dispatch(b, 0);
	after = clk_now(CLOCK_REALTIME);
	s1 = stats(b);
	assert_int_equal(read_inject, 0);               /* the read seam was used */
	assert_int_equal(n, 1);
	assert_int_equal(past.fired, 1);
	assert_int_equal(future.fired, 0);
	assert_true(past.now_arg >= before && past.now_arg <= after);
	assert_int_equal(s1.clock_jumps - s0.clock_jumps, 1);
	assert_int_equal(s1.wakeups - s0.wakeups, 0);
	assert_int_equal(s1.passes - s0.passes, 1);
	assert_true(n_settime > nst);                 /* re-armed */
	assert_int_equal(last_flags, want);
	assert_int_equal(ts_ns(&last_its.it_value), now0 + 20 * SEC);
	assert_true(armed_at(fd, CLOCK_REALTIME, now0 + 20 * SEC));
	assert_int_equal(hrt_base_count(b), 1);

	/* Again with nothing due: still re-armed (CANCEL_ON_SET is renewed by
	 * arming), though the instant did not change; nothing runs. */
	s0 = stats(b);
	nst = n_settime;
	read_inject = ECANCELED;
	n = hrt_base_dispatch(b, 0);
	s1 = stats(b);
	assert_int_equal(n, 0);
	assert_int_equal(future.fired, 0);
	assert_int_equal(s1.clock_jumps - s0.clock_jumps, 1);
	assert_int_equal(n_settime - nst, 1);
	assert_int_equal(last_flags, want);
	assert_int_equal(ts_ns(&last_its.it_value), now0 + 20 * SEC);
	assert_true(armed_at(fd, CLOCK_REALTIME, now0 + 20 * SEC));
	assert_int_equal(hrt_timer_cancel(&future.t), 1);
	assert_int_equal(hrt_base_dispatch(b, 0), 0);
	assert_true(disarmed(fd));
	restore_seams();
	assert_int_equal(hrt_base_free(b), 0);
}

/* EAGAIN from read (a spurious wake) with nothing due: no pass, nothing
 * runs, no system call but the read.  With something hard-due it runs. */
static void test_read_eagain_runs_nothing_not_due(void **state)
{
	struct hrt_base *b = tv_new(CLOCK_MONOTONIC, HRT_BASE_ENV);
	struct hrt_stats s0, s1;
	struct tt a, d;
	hrt_time_t now;
	int fd;

	(void)state;
	tt_init(&a, CLOCK_MONOTONIC);
	tt_init(&d, CLOCK_MONOTONIC);
	fd = hrt_base_fd(b);
	now = clk_now(CLOCK_MONOTONIC);
	/* Soft expiry passed, hard not: runs only in a pass, and none is due. */
	hrt_timer_start_range(&a.t, b, now - 1 * MS, 10 * SEC, HRT_MODE_ABS);
	install_seams(b);
	s0 = stats(b);
	/* The real read of an fd that has not fired. */
	assert_int_equal(hrt_base_dispatch(b, 1), 0);
	assert_int_equal(n_read, 1);
	/* The same injected. */
	read_inject = EAGAIN;
	assert_int_equal(hrt_base_dispatch(b, 1), 0);
	assert_int_equal(n_read, 2);
	assert_int_equal(read_inject, 0);
	s1 = stats(b);
	assert_int_equal(s1.passes - s0.passes, 0);
	assert_int_equal(s1.wakeups - s0.wakeups, 0);
	assert_int_equal(s1.expired - s0.expired, 0);
	assert_int_equal(n_settime, 0);
	assert_int_equal(a.fired, 0);
	assert_true(armed_at(fd, CLOCK_MONOTONIC, now - 1 * MS + 10 * SEC));

	/* EAGAIN while something is hard-due (its expiry was missed, say the
	 * fd was drained by someone else): the pass runs. */
	hrt_timer_start_range(&d.t, b, now - 2 * MS, 1 * MS, HRT_MODE_ABS);
	read_inject = EAGAIN;
	assert_int_equal(hrt_base_dispatch(b, 1), 2);   /* d, then a (soft-expired, next in order) */
	assert_int_equal(d.fired, 1);
	assert_int_equal(a.fired, 1);
	assert_true(disarmed(fd));
	restore_seams();
	assert_int_equal(hrt_base_free(b), 0);
}

/* timerfd_settime failing (ENOMEM, EINVAL): nothing is lost, every next
 * operation or dispatch tries again, and once settime works the fd is armed
 * right and the timer fires. */
static void test_settime_failure_loses_nothing_and_retries(void **state)
{
	static const int errs[2] = { ENOMEM, EINVAL };

	(void)state;
	for (int k = 0; k < 2; k++) {
		struct hrt_base *b = tv_new(CLOCK_MONOTONIC, HRT_BASE_ENV);
		struct hrt_stats s0, s1;
		struct tt a, l, c;
		hrt_time_t now, hard_a;
		long nst;
		int fd;

		print_message("  errno %d\n", errs[k]);

		tt_init(&a, CLOCK_MONOTONIC);
		tt_init(&l, CLOCK_MONOTONIC);
		tt_init(&c, CLOCK_MONOTONIC);
		fd = hrt_base_fd(b);
		install_seams(b);
		settime_fail = errs[k];
		s0 = stats(b);
		now = clk_now(CLOCK_MONOTONIC);
		hard_a = now + 160 * MS;        /* far enough not to be due meanwhile */
		assert_int_equal(hrt_timer_start_range(&a.t, b, now + 150 * MS, 10 * MS, HRT_MODE_ABS), 0);
		assert_int_equal(n_settime, 1);
		assert_int_equal(stats(b).reprograms - s0.reprograms, 0);   /* failed: not counted */
		assert_int_equal(hrt_base_count(b), 1);
		assert_true(disarmed(fd));
		/* The next operation tries again, although it does not change the
		 * earliest expiry. */
		assert_int_equal(hrt_timer_start_range(&l.t, b, now + 10 * SEC, 0, HRT_MODE_ABS), 0);
		assert_int_equal(n_settime, 2);
		assert_int_equal(hrt_base_count(b), 2);
		/* A dispatch (nothing read) tries again too, running a pass, and
		 * returns the arm's error. */
		nst = n_settime;
		assert_int_equal(hrt_base_dispatch(b, 0), -errs[k]);
		assert_true(n_settime > nst);
		s1 = stats(b);
		assert_int_equal(s1.reprograms - s0.reprograms, 0);
		assert_int_equal(s1.expired - s0.expired, 0);
		assert_int_equal(hrt_base_count(b), 2);
		assert_int_equal(hrt_base_check(b, NULL, 0), 0);

		/* settime works again: the next dispatch arms at a's hard expiry. */
		settime_fail = 0;
		nst = n_settime;
		assert_int_equal(hrt_base_dispatch(b, 0), 0);
		assert_int_equal(n_settime - nst, 1);
		assert_int_equal(stats(b).reprograms - s0.reprograms, 1);
		assert_true(armed_at(fd, CLOCK_MONOTONIC, hard_a));
		assert_int_equal(a.fired, 0);
		restore_seams();
		poll_until_fired(b, fd, &a, 2000);
		assert_int_equal(a.fired, 1);
		assert_true(a.fired && a.clk_at >= hard_a - 10 * MS && a.now_arg >= hard_a);
		assert_true(armed_at(fd, CLOCK_MONOTONIC, now + 10 * SEC));
		assert_int_equal(hrt_base_count(b), 1);

		/* A failed re-arm in between operations: the next start fixes
		 * it, although it does not need an earlier wake-up itself; a
		 * cancel leaves the fd alone.  Start an earlier timer while
		 * settime fails, then cancel the later one and start another
		 * later one with settime back. */
		install_seams(b);
		settime_fail = errs[k];
		now = clk_now(CLOCK_MONOTONIC);
		hrt_timer_start_range(&c.t, b, now + 5 * SEC, 0, HRT_MODE_ABS);
		assert_int_equal(n_settime, 1);
		settime_fail = 0;
		assert_int_equal(hrt_timer_cancel(&l.t), 1);
		assert_int_equal(n_settime, 1);
		hrt_timer_start_range(&l.t, b, now + 10 * SEC, 0, HRT_MODE_ABS);
		assert_int_equal(n_settime, 2);
		assert_true(armed_at(fd, CLOCK_MONOTONIC, now + 5 * SEC));
		assert_int_equal(hrt_timer_cancel(&l.t), 1);

		/* A failed disarm: the fd still fires at the old instant; that
		 * wake-up runs nothing and disarms. */
		settime_fail = 0;
		now = clk_now(CLOCK_MONOTONIC);
		hrt_timer_start_range(&c.t, b, now + 20 * MS, 0, HRT_MODE_ABS);
		assert_true(armed_at(fd, CLOCK_MONOTONIC, now + 20 * MS));
		settime_fail = errs[k];
		assert_int_equal(hrt_timer_cancel(&c.t), 1);
		assert_int_equal(hrt_base_count(b), 0);
		settime_fail = 0;
		restore_seams();
		{
			struct pollfd p = { .fd = fd, .events = POLLIN };

			assert_int_equal(poll(&p, 1, 2000), 1);
		}
		s0 = stats(b);
		assert_int_equal(hrt_base_dispatch(b, 0), 0);
		s1 = stats(b);
		assert_int_equal(s1.wakeups - s0.wakeups, 1);
		assert_int_equal(c.fired, 0);
		assert_true(disarmed(fd));
		assert_int_equal(hrt_base_check(b, NULL, 0), 0);
		assert_int_equal(hrt_base_free(b), 0);
	}
}

/* Hosted (hrt_base_loop_host, the timerfd path), a settime that keeps
 * failing is retried as long as without a host - the backoff's half second
 * - however often the host's deadline (every ms here) wakes the loop, then
 * its error is returned and no timer is lost. */
static hrt_time_t every_ms(void *arg)
{
	(void)arg;
	return MS;
}

static int host_idle(void *arg)
{
	(*(long *)arg)++;
	return 0;
}

static void test_hosted_loop_gives_up_on_settime_by_time_not_host_wakeups(void **state)
{
	struct hrt_base *b = tv_new(CLOCK_MONOTONIC, 0);
	int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	hrt_time_t t0, took;
	long runs = 0;
	struct tt l;
	int rc;

	(void)state;
	assert_true(efd >= 0);
	assert_int_equal(hrt_base_set_coalesce(b, 0), 0);
	install_seams(b);
	tt_init(&l, CLOCK_MONOTONIC);
	settime_fail = ENOMEM;
	t0 = clk_now(CLOCK_MONOTONIC);
	hrt_timer_start_range(&l.t, b, t0 + 5 * SEC, 0, HRT_MODE_ABS);
	rc = hrt_base_loop_host(b, efd, every_ms, host_idle, &runs);
	took = clk_now(CLOCK_MONOTONIC) - t0;
	printf("     returned %d after %.1f ms, %ld host runs, %ld settime calls\n", rc,
	       (double)took / MS, runs, n_settime);
	assert_int_equal(rc, -ENOMEM);
	assert_true(took >= 300 * MS);          /* the backoff: 1 + 2 + ... + 64 ms, 12 times */
	assert_true(runs > 12);                 /* the host woke it more often than that */
	assert_int_equal(l.fired, 0);
	assert_int_equal(hrt_base_count(b), 1);
	restore_seams();
	hrt_timer_cancel(&l.t);
	close(efd);
	assert_int_equal(hrt_base_free(b), 0);
}

/* hrt_base_loop with settime failing for good: it must return the error
 * (a negative errno) instead of waiting forever on an fd that will never
 * fire, and lose no timer.  Two ways in: the fd cannot be armed at all, and
 * the re-arm at the end of a pass fails (the earlier timer's callback breaks
 * settime).  The timer left is far (5 s), so the loop's retries - which run
 * passes at the clock they read - cannot run it before giving up. */
static void test_loop_returns_lasting_settime_error(void **state)
{
	(void)state;
	for (int way = 0; way < 2; way++) {
		struct hrt_base *b = tv_new(CLOCK_MONOTONIC, HRT_BASE_ENV);
		struct tt a, l;
		hrt_time_t now, took;
		int rc = 1, in_time, fd;

		tt_init(&a, CLOCK_MONOTONIC);
		tt_init(&l, CLOCK_MONOTONIC);
		install_seams(b);
		now = clk_now(CLOCK_MONOTONIC);
		if (way == 0) {
			settime_fail = ENOMEM;
			hrt_timer_start_range(&l.t, b, now + 5 * SEC, 0, HRT_MODE_ABS);
		} else {
			a.fail_settime = ENOMEM;
			assert_true(hrt_base_fd(b) >= 0);
			hrt_timer_start_range(&a.t, b, now + 5 * MS, 0, HRT_MODE_ABS);
			hrt_timer_start_range(&l.t, b, now + 5 * SEC, 0, HRT_MODE_ABS);
		}
		in_time = loop_with_deadline(b, 4000, &rc);
		took = clk_now(CLOCK_MONOTONIC) - now;
		printf("     way %d: hrt_base_loop returned %d after %.1f ms, %ld settime calls\n",
		       way, rc, (double)took / MS, n_settime);
		if (!in_time)
			fprintf(stderr, "  way %d: hrt_base_loop had to be stopped (would block"
				" forever)\n", way);
		assert_true(in_time);
		assert_int_equal(rc, -ENOMEM);
		assert_true(n_settime >= 2);                  /* it did retry */
		assert_int_equal(a.fired, way == 1);
		assert_int_equal(l.fired, 0);
		assert_int_equal(hrt_base_count(b), 1);         /* l is not lost */

		/* settime works again: the next dispatch arms the fd for l, and
		 * the loop runs it (moved closer, to keep the test short). */
		settime_fail = 0;
		restore_seams();
		fd = hrt_base_fd(b);
		assert_int_equal(hrt_base_dispatch(b, 0), 0);
		assert_true(armed_at(fd, CLOCK_MONOTONIC, now + 5 * SEC));
		l.stop = b;
		hrt_timer_start_range(&l.t, b, 10 * MS, 0, HRT_MODE_REL);
		assert_true(loop_with_deadline(b, 3000, &rc));
		assert_int_equal(rc, 0);
		assert_int_equal(l.fired, 1);
		assert_true(l.fired && l.clk_at >= tv_soft(&l.t));
		assert_int_equal(hrt_base_count(b), 0);
		assert_int_equal(hrt_base_free(b), 0);
	}
}

/* hrt_base_loop with settime failing for 100 ms only (a transient ENOMEM):
 * hrt.h says the loop gives up after about half a second of failures, so it
 * must ride this out - keep running what is due meanwhile, arm again once
 * settime works, run everything, and return 0 at the stop. */
static void test_loop_rides_out_transient_settime_failure(void **state)
{
	struct hrt_base *b = tv_new(CLOCK_MONOTONIC, HRT_BASE_ENV);
	hrt_time_t now, t_ret;
	struct tt x, y;
	int rc = 1, in_time;

	(void)state;
	tt_init(&x, CLOCK_MONOTONIC);
	tt_init(&y, CLOCK_MONOTONIC);
	assert_true(hrt_base_fd(b) >= 0);
	install_seams(b);
	now = clk_now(CLOCK_MONOTONIC);
	y.stop = b;
	settime_fail = ENOMEM;
	fail_until = now + 100 * MS;
	hrt_timer_start_range(&x.t, b, now + 20 * MS, 0, HRT_MODE_ABS);   /* due while failing */
	hrt_timer_start_range(&y.t, b, now + 200 * MS, 0, HRT_MODE_ABS);  /* due after */
	in_time = loop_with_deadline(b, 3000, &rc);
	t_ret = clk_now(CLOCK_MONOTONIC);
	if (rc != 0)
		fprintf(stderr, "  hrt_base_loop returned %d after %.3f ms, %ld settime calls"
			" (failing for 100 ms)\n", rc, (double)(t_ret - now) / MS, n_settime);
	assert_true(in_time);
	assert_int_equal(rc, 0);
	assert_int_equal(x.fired, 1);
	assert_int_equal(y.fired, 1);
	assert_true(x.fired && x.clk_at >= now + 20 * MS);
	assert_true(y.fired && y.now_arg >= now + 200 * MS);
	assert_true(n_settime >= 2);
	restore_seams();
	assert_int_equal(hrt_base_count(b), 0);
	assert_int_equal(hrt_base_free(b), 0);
}


/* Regressions from review ---------------------------------------------------- */

struct slow {
	struct hrt_timer t;
	int entered, runs;      /* atomic */
	hrt_time_t sleep;
	struct hrt_base *stop_after;    /* stop this base after `stop_runs` runs */
	int stop_runs;
};

static enum hrt_restart slow_cb(struct hrt_timer *t, hrt_time_t now)
{
	struct slow *x = (struct slow *)t;
	struct timespec ts = { (time_t)(x->sleep / SEC), (long)(x->sleep % SEC) };
	int runs = __atomic_add_fetch(&x->runs, 1, __ATOMIC_ACQ_REL);

	(void)now;
	__atomic_store_n(&x->entered, 1, __ATOMIC_RELEASE);
	if (x->sleep)
		nanosleep(&ts, NULL);
	if (x->stop_after && runs >= x->stop_runs) {
		hrt_base_stop(x->stop_after);
		return HRT_NORESTART;
	}
	return x->stop_after ? HRT_RESTART : HRT_NORESTART;  /* same instant again */
}

struct runner {
	struct hrt_base *b;
	hrt_time_t now;
};

static void *runner_main(void *arg)
{
	struct runner *r = arg;

	hrt_base_run(r->b, r->now, 0);
	return NULL;
}

/*
 * The fd fires while another thread runs a long pass: the loop's dispatch
 * finds the pass busy and cannot re-arm, and must wait for that pass to
 * re-arm at its end - not count it as a failed arm and give up (it used to
 * return -EIO after about half a second, leaving the rest queued).
 */
static void test_loop_waits_for_long_pass_to_rearm(void **state)
{
	struct hrt_base *b = tv_new(CLOCK_MONOTONIC, HRT_BASE_ENV);
	struct slow a = { .sleep = 800 * MS };
	struct runner r = { .b = b };
	struct timespec nap = { 0, 1 * MS };
	pthread_t th;
	hrt_time_t now;
	struct tt y;
	int rc = 1;

	(void)state;
	hrt_timer_init(&a.t, slow_cb);
	tt_init(&y, CLOCK_MONOTONIC);
	y.stop = b;
	assert_true(hrt_base_fd(b) >= 0);
	now = clk_now(CLOCK_MONOTONIC);
	hrt_timer_start_range(&a.t, b, now - 1 * MS, 0, HRT_MODE_ABS);   /* fd readable now */
	hrt_timer_start_range(&y.t, b, now + 30 * MS, 0, HRT_MODE_ABS);
	r.now = now;
	assert_int_equal(pthread_create(&th, NULL, runner_main, &r), 0);
	while (!__atomic_load_n(&a.entered, __ATOMIC_ACQUIRE))
		nanosleep(&nap, NULL);
	/* a's callback sleeps in the runner's pass; now the loop starts. */
	assert_true(loop_with_deadline(b, 4000, &rc));
	pthread_join(th, NULL);
	assert_int_equal(rc, 0);
	assert_int_equal(__atomic_load_n(&a.runs, __ATOMIC_ACQUIRE), 1);
	assert_int_equal(y.fired, 1);
	assert_int_equal(hrt_base_count(b), 0);
	assert_int_equal(hrt_base_free(b), 0);
}

/* An expiry equal to the "fired" marker the device keeps internally
 * (-HRT_TIME_MAX) must still be armed (it used to be taken for "armed
 * already", and the loop gave up with -EIO). */
static void test_expiry_at_fired_marker_is_armed(void **state)
{
	struct hrt_base *b = tv_new(CLOCK_MONOTONIC, HRT_BASE_ENV);
	struct slow a = { .stop_runs = 50 };
	int rc = 1;

	(void)state;
	a.stop_after = b;
	hrt_timer_init(&a.t, slow_cb);
	assert_true(hrt_base_fd(b) >= 0);
	assert_int_equal(hrt_timer_start_range(&a.t, b, -HRT_TIME_MAX, 0, HRT_MODE_ABS), 0);
	assert_true(loop_with_deadline(b, 3000, &rc));
	assert_int_equal(rc, 0);
	assert_int_equal(__atomic_load_n(&a.runs, __ATOMIC_ACQUIRE), 50);
	assert_int_equal(hrt_base_free(b), 0);
}

/* settime's ECANCELED (a wall-clock change not read yet) is an arm that
 * worked: counted as a clock jump and a reprogram, no error, fd armed. */
static void test_settime_ecanceled_is_a_working_arm(void **state)
{
	struct hrt_base *b = tv_new(CLOCK_REALTIME, HRT_BASE_ENV);
	struct hrt_stats s;
	hrt_time_t when;
	struct tt x;
	int fd = hrt_base_fd(b);

	(void)state;
	assert_true(fd >= 0);
	tt_init(&x, CLOCK_REALTIME);
	install_seams(b);
	settime_ecanceled = 1;
	when = clk_now(CLOCK_REALTIME) + 10 * SEC;
	assert_int_equal(hrt_timer_start_range(&x.t, b, when, 0, HRT_MODE_ABS), 0);
	s = stats(b);
	assert_int_equal(s.clock_jumps, 1);
	assert_int_equal(s.reprograms, 1);
	assert_int_equal(n_settime, 1);
	assert_true(armed_at(fd, CLOCK_REALTIME, when));
	assert_int_equal(hrt_base_dispatch(b, 1), 0);   /* not fired: EAGAIN, no error */
	assert_int_equal(n_settime, 1);                 /* and nothing to retry */
	assert_int_equal(x.fired, 0);
	hrt_timer_cancel(&x.t);
	assert_int_equal(hrt_base_dispatch(b, 1), 0);
	assert_true(disarmed(fd));
	restore_seams();
	assert_int_equal(hrt_base_free(b), 0);
}

/* A dispatch whose pass ran callbacks but whose re-arm failed returns the
 * arm's error; the callbacks did run, the rest stays queued, and the next
 * dispatch retries. */
static void test_dispatch_returns_rearm_error_after_callbacks(void **state)
{
	struct hrt_base *b = tv_new(CLOCK_MONOTONIC, HRT_BASE_ENV);
	struct pollfd p;
	struct tt d, l;
	hrt_time_t now;
	int fd;

	(void)state;
	tt_init(&d, CLOCK_MONOTONIC);
	tt_init(&l, CLOCK_MONOTONIC);
	fd = hrt_base_fd(b);
	now = clk_now(CLOCK_MONOTONIC);
	hrt_timer_start_range(&l.t, b, now + 10 * SEC, 0, HRT_MODE_ABS);
	hrt_timer_start_range(&d.t, b, now + 2 * MS, 0, HRT_MODE_ABS);
	p.fd = fd;
	p.events = POLLIN;
	assert_int_equal(poll(&p, 1, 2000), 1);
	install_seams(b);
	settime_fail = ENOMEM;
	assert_int_equal(hrt_base_dispatch(b, 0), -ENOMEM);
	assert_int_equal(d.fired, 1);
	assert_int_equal(l.fired, 0);
	assert_int_equal(hrt_base_count(b), 1);
	assert_int_equal(stats(b).wakeups, 1);
	settime_fail = 0;
	assert_int_equal(hrt_base_dispatch(b, 0), 0);
	assert_true(armed_at(fd, CLOCK_MONOTONIC, now + 10 * SEC));
	restore_seams();
	hrt_timer_cancel(&l.t);                 /* free refuses queued timers */
	assert_int_equal(hrt_base_free(b), 0);
}

/* A read error other than EAGAIN/ECANCELED (EBADF, EIO): dispatch returns
 * it and runs nothing; hrt_base_loop returns it; no timer is lost. */
static void test_read_error_returned_and_nothing_lost(void **state)
{
	struct hrt_base *b = tv_new(CLOCK_MONOTONIC, HRT_BASE_ENV);
	struct hrt_stats s0;
	struct pollfd p;
	struct tt d;
	hrt_time_t now;
	int fd, rc = 1;

	(void)state;
	tt_init(&d, CLOCK_MONOTONIC);
	fd = hrt_base_fd(b);
	now = clk_now(CLOCK_MONOTONIC);
	hrt_timer_start_range(&d.t, b, now + 2 * MS, 0, HRT_MODE_ABS);
	p.fd = fd;
	p.events = POLLIN;
	assert_int_equal(poll(&p, 1, 2000), 1);
	install_seams(b);
	s0 = stats(b);
	read_inject = EBADF;
	assert_int_equal(hrt_base_dispatch(b, 0), -EBADF);
	assert_int_equal(d.fired, 0);
	assert_int_equal(stats(b).passes - s0.passes, 0);
	assert_int_equal(hrt_base_count(b), 1);
	/* The loop: the fd is still readable, its read fails: the error. */
	read_inject = EIO;
	assert_true(loop_with_deadline(b, 3000, &rc));
	assert_int_equal(rc, -EIO);
	assert_int_equal(d.fired, 0);
	assert_int_equal(hrt_base_count(b), 1);
	/* Reads work again: it runs. */
	d.stop = b;
	assert_true(loop_with_deadline(b, 3000, &rc));
	assert_int_equal(rc, 0);
	assert_int_equal(d.fired, 1);
	assert_true(d.fired && d.now_arg >= now + 2 * MS);
	restore_seams();
	assert_int_equal(hrt_base_free(b), 0);
}

/* No fd yet (or no base): -EINVAL, nothing runs. */
static void test_dispatch_without_fd_is_einval(void **state)
{
	struct hrt_base *b = tv_new(CLOCK_MONOTONIC, HRT_BASE_ENV);
	struct tt a;

	(void)state;
	tt_init(&a, CLOCK_MONOTONIC);
	assert_int_equal(hrt_base_dispatch(b, 1), -EINVAL);
	assert_int_equal(hrt_base_dispatch(NULL, 1), -EINVAL);
	/* Even with a timer due: without an fd there is nothing to dispatch. */
	hrt_timer_start_range(&a.t, b, clk_now(CLOCK_MONOTONIC) - 1 * MS, 0, HRT_MODE_ABS);
	assert_int_equal(hrt_base_dispatch(b, 1), -EINVAL);
	assert_int_equal(a.fired, 0);
	assert_int_equal(stats(b).passes, 0);
	assert_int_equal(hrt_base_count(b), 1);
	hrt_timer_cancel(&a.t);                 /* free refuses queued timers */
	assert_int_equal(hrt_base_free(b), 0);
}

/* Every test puts the real system calls back, however it ended. */
static int put_seams_back(void **state)
{
	(void)state;
	restore_seams();
	return 0;
}

int main(void)
{
	static const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_fd_per_real_clock_none_for_virtual, put_seams_back),
		cmocka_unit_test_teardown(test_armed_at_earliest_hard_lazily_exact_at_dispatch, put_seams_back),
		cmocka_unit_test_teardown(test_reprogram_only_when_a_start_moves_the_earliest_earlier, put_seams_back),
		cmocka_unit_test_teardown(test_settime_flags_per_clock, put_seams_back),
		cmocka_unit_test_teardown(test_timer_fires_never_before_soft, put_seams_back),
		cmocka_unit_test_teardown(test_read_ecanceled_counts_clock_jump_and_rearms, put_seams_back),
		cmocka_unit_test_teardown(test_read_eagain_runs_nothing_not_due, put_seams_back),
		cmocka_unit_test_teardown(test_settime_failure_loses_nothing_and_retries, put_seams_back),
		cmocka_unit_test_teardown(test_loop_returns_lasting_settime_error, put_seams_back),
		cmocka_unit_test_teardown(test_hosted_loop_gives_up_on_settime_by_time_not_host_wakeups,
					  put_seams_back),
		cmocka_unit_test_teardown(test_loop_rides_out_transient_settime_failure, put_seams_back),
		cmocka_unit_test_teardown(test_dispatch_returns_rearm_error_after_callbacks, put_seams_back),
		cmocka_unit_test_teardown(test_read_error_returned_and_nothing_lost, put_seams_back),
		cmocka_unit_test_teardown(test_dispatch_without_fd_is_einval, put_seams_back),
		cmocka_unit_test_teardown(test_loop_waits_for_long_pass_to_rearm, put_seams_back),
		cmocka_unit_test_teardown(test_expiry_at_fired_marker_is_armed, put_seams_back),
		cmocka_unit_test_teardown(test_settime_ecanceled_is_a_working_arm, put_seams_back),
	};

	setvbuf(stdout, NULL, _IOLBF, 0);
	/* hrt_base_loop here is the timerfd path (test_coalesce: the other);
	 * every base is made with HRT_BASE_ENV, so it reads this. */
	setenv("HRT_COALESCE", "off", 1);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
