/* SPDX-License-Identifier: MIT */
/*
 * fuzz_fd.c - drives the wake-up device (timerfd.c) from a byte stream:
 * starts, cancels and passes on two real-clock bases with their fds, and
 * dispatches whose timerfd read and settime results the input chooses
 * through its devices' system-call tables (fired, EAGAIN, ECANCELED, EBADF; settime failing).
 *
 * The fakes never touch a real fd, so the only outside input is the clock.
 * After every operation the device contract is checked and any break
 * aborts (the finding):
 *  - the lazy re-arm (wakeup.c): with a timer queued, the last successful
 *    settime armed the fd at or before next_event (1 ns for instants <=
 *    0), with CANCEL_ON_SET on CLOCK_REALTIME only; after a dispatch or a
 *    pass of the base it is exactly what next_event asks for, disarmed
 *    when nothing is queued;
 *  - unless the last settime failed: then dispatch returns the error, and
 *    once settime works again a dispatch must have retried;
 *  - successful settime calls equal stats.reprograms; the tree checks out.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <time.h>

#include "hrt.h"
#include "base.h"
#include "timerfd.h"

#define NT 12

struct dev {                    /* what the seams saw for one fd */
	int fd;
	int armed;              /* the last successful settime armed it */
	hrt_time_t at;
	int flags;
	uint64_t sets;          /* successful settime calls */
	int failed;             /* the last settime call failed */
};

struct ft {
	struct hrt_timer t;
	uint8_t plan;
};

static struct ft timers[NT];
static struct hrt_base *bases[2];
static struct dev devs[2];
static const uint8_t *in;
static size_t left;
static int read_result;         /* 0 fired, else the errno to fail with */
static int settime_fail;        /* errno for the next settime calls, 0: none */

static uint8_t byte(void)
{
	if (!left)
		return 0;
	left--;
	return *in++;
}

static struct dev *dev_of(int fd)
{
	for (int i = 0; i < 2; i++)
		if (devs[i].fd == fd)
			return &devs[i];
	abort();                /* the library used an fd it does not own */
}

/* A read that finds the fd fired: a one-shot timerfd is disarmed then,
 * whatever settime failed before (the base knows that state again). */
static ssize_t fake_read(int fd, void *buf, size_t len)
{
	struct dev *d = dev_of(fd);
	uint64_t one = 1;

	if (read_result) {
		errno = read_result;
		return -1;
	}
	if (len < sizeof(one))
		abort();
	memcpy(buf, &one, sizeof(one));
	d->armed = 0;
	d->failed = 0;
	return sizeof(one);
}

static int fake_settime(int fd, int flags, const struct itimerspec *v, struct itimerspec *old)
{
	struct dev *d = dev_of(fd);

	(void)old;
	if (settime_fail) {
		d->failed = 1;
		errno = settime_fail;
		return -1;
	}
	d->failed = 0;
	if (v->it_interval.tv_sec || v->it_interval.tv_nsec || v->it_value.tv_nsec < 0 ||
	    v->it_value.tv_nsec >= 1000000000 || v->it_value.tv_sec < 0)
		abort();
	d->armed = v->it_value.tv_sec || v->it_value.tv_nsec;
	d->at = (hrt_time_t)v->it_value.tv_sec * 1000000000 + v->it_value.tv_nsec;
	d->flags = flags;
	d->sets++;
	return 0;
}

static enum hrt_restart cb(struct hrt_timer *t, hrt_time_t now)
{
	struct ft *f = (struct ft *)t;
	struct ft *o = &timers[f->plan % NT];

	switch (f->plan >> 5) {
	case 1: hrt_timer_start(&o->t, bases[f->plan & 1], 1000, HRT_MODE_REL); break;
	case 2: hrt_timer_cancel(&o->t); break;
	case 3: hrt_timer_forward(t, now, 5000); return HRT_RESTART;
	case 4: {
		struct hrt_base *b = NULL;

		hrt_timer_get_base(t, &b);
		hrt_base_stop(b);
		break;
	}
	}
	return HRT_NORESTART;
}

static void check(int i, int exact)
{
	struct hrt_base *b = bases[i];
	struct dev *d = &devs[i];
	hrt_time_t next = HRT_TIME_MAX;
	struct hrt_stats st;
	clockid_t clock = (clockid_t)-1;
	int rt;

	if (hrt_base_next_event(b, &next) < 0 || hrt_base_get_clock(b, &clock) ||
	    hrt_base_check(b, NULL, 0) || hrt_base_get_stats(b, &st, sizeof(st)))
		abort();
	rt = clock == CLOCK_REALTIME;
	if (st.reprograms != d->sets)
		abort();
	if (d->failed)
		return;                 /* retried by the next update or dispatch */
	if (next == HRT_TIME_MAX) {
		if (exact && d->armed)
			abort();
	} else if (!d->armed || d->at > (next > 0 ? next : 1) ||
		   (exact && d->at != (next > 0 ? next : 1)) ||
		   d->flags != (TFD_TIMER_ABSTIME | (rt ? TFD_TIMER_CANCEL_ON_SET : 0))) {
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const int errs[] = { 0, EAGAIN, ECANCELED, EBADF, EINTR };
	static const clockid_t clocks[] = { CLOCK_MONOTONIC, CLOCK_REALTIME, CLOCK_BOOTTIME };
	static const struct hrt_timerfd_sys fake_sys = { fake_read, fake_settime };

	in = data;
	left = size;
	read_result = settime_fail = 0;
	for (int i = 0; i < 2; i++) {
		if (hrt_base_new(&bases[i], clocks[byte() % 3], 0))
			abort();
		memset(&devs[i], 0, sizeof(devs[i]));
		/* Empty, so creating the fd arms nothing (check() verifies). */
		devs[i].fd = hrt_base_fd(bases[i]);
		if (devs[i].fd < 0)
			abort();
		/* Each base's device makes its system calls through the fakes. */
		hrt__timerfd_set_sys(hrt__base_device(bases[i]), &fake_sys);
		check(i, 1);
	}
	for (int i = 0; i < NT; i++)
		hrt_timer_init(&timers[i].t, cb);
	while (left) {
		uint8_t op = byte(), a = byte(), c = byte();
		struct ft *f = &timers[a % NT];
		int bi = (a >> 4) & 1;
		struct hrt_base *b = bases[bi];
		hrt_time_t now = 0, soft;
		int exact = 0;          /* bi's fd was just updated exactly */
		ssize_t r;

		hrt_base_now(b, &now);
		/* Offsets around now: past (runs at once), near, far. */
		soft = now + (hrt_time_t)(int8_t)c * ((hrt_time_t)1000 << (op >> 5));

		switch (op & 7) {
		case 0:
			f->plan = c;
			hrt_timer_start_range(&f->t, b, soft, (hrt_time_t)(a >> 5) * 10000, HRT_MODE_ABS);
			break;
		case 1:
			hrt_timer_start(&f->t, b, (hrt_time_t)c * 1000, HRT_MODE_REL);
			break;
		case 2:
			hrt_timer_cancel(&f->t);
			break;
		case 3:
			hrt_timer_try_cancel(&f->t);
			break;
		case 4:
			read_result = errs[c % 5];
			r = hrt_base_dispatch(b, c & 8);
			if (read_result == EBADF && r != -EBADF)
				abort();
			if (r < 0 && r != -EBADF && r != -settime_fail)
				abort();
			/* Unless its read failed, dispatch retries a failed arm. */
			if (read_result != EBADF && !settime_fail && devs[bi].failed)
				abort();
			exact = read_result != EBADF;
			read_result = 0;
			break;
		case 5:
			hrt_base_run(b, now, c & 1);
			exact = 1;
			break;
		case 6:
			settime_fail = c & 1 ? (c & 2 ? ENOMEM : EINVAL) : 0;
			break;
		case 7:
			hrt_base_stop(b);
			break;
		}
		check(0, exact && bi == 0);
		check(1, exact && bi == 1);
	}
	settime_fail = 0;
	for (int i = 0; i < NT; i++)
		hrt_timer_cancel(&timers[i].t);
	for (int i = 0; i < 2; i++) {
		check(i, 0);
		hrt_base_free(bases[i]);
	}
	return 0;
}
