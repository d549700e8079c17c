/* SPDX-License-Identifier: MIT */
/*
 * fuzz_api.c - drives the public API from a byte stream: each op byte picks
 * start/start_range/cancel/try_cancel/forward/pass/set_greedy/set_time, and
 * since 1.2 hrt_repeat_start/hrt_repeat_again/re-initialisation (plain or
 * struct hrt_repeat)/hrt_base_set_pass_limit and bursts of passes, on a few
 * timers and two virtual bases, with operands from the following bytes
 * (including hostile ones: negative slack, intervals and bounds, huge
 * times, bad enums); the second base is HRT_BASE_UNLOCKED for an input of
 * odd length.  Callbacks start, cancel and forward timers, restart,
 * cancel themselves before HRT_RESTART (and start themselves after the
 * cancel), re-arm struct hrt_repeat timers, set pass limits and
 * re-initialise themselves.  Every pass and every new call re-checks the
 * trees, a pass never runs more callbacks than its limit, and a limit set
 * reads back; any inconsistency aborts, which is the finding.  The
 * corpus's v12-* inputs are written by hand for the 1.2 calls: periodic
 * timers under a pass limit, self-cancels before HRT_RESTART (on a
 * single-thread base too), limits, agains and re-initialisations from
 * callbacks, and the edges (the end of time, negative arguments).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hrt.h"

#define NT 16

/* Every timer is a struct hrt_repeat; a plain one (rep 0) uses only its
 * timer.  The repeat calls are made only on the ones hrt_repeat_init made. */
struct ft {
	struct hrt_repeat r;
	uint8_t plan, rep;
};

static struct ft timers[NT];
static struct hrt_base *bases[2];
static const uint8_t *in;
static size_t left;

static enum hrt_restart cb(struct hrt_timer *t, hrt_time_t now);

static uint8_t byte(void)
{
	if (!left)
		return 0;
	left--;
	return *in++;
}

static int64_t num(void)
{
	uint8_t k = byte();
	uint64_t v = 0;

	switch (k & 3) {
	case 0: return (int64_t)(k >> 2) * 10;                /* small */
	case 1: return -(int64_t)(k >> 2);                    /* negative */
	case 2: return HRT_TIME_MAX - (k >> 2);               /* huge */
	}
	for (int i = 0; i < 8; i++)
		v = (v << 8) | byte();
	return (int64_t)v;      /* any bit pattern, negative ones too */
}

static struct ft *ft_of(struct hrt_timer *t)
{
	return HRT_CONTAINER_OF(HRT_CONTAINER_OF(t, struct hrt_repeat, timer), struct ft, r);
}

/* A timer made anew (not queued, not running, or its own callback). */
static void make(struct ft *f, int rep)
{
	f->rep = (uint8_t)rep;
	if (rep ? hrt_repeat_init(&f->r, cb) : hrt_timer_init(&f->r.timer, cb))
		abort();
}

static enum hrt_restart cb(struct hrt_timer *t, hrt_time_t now)
{
	struct ft *f = ft_of(t);
	struct ft *o = &timers[f->plan % NT];
	struct hrt_base *ob = bases[f->plan & 1];
	unsigned lim;
	hrt_time_t ns;

	switch (f->plan >> 4) {
	case 1: hrt_timer_start(&o->r.timer, ob, 5, HRT_MODE_REL); break;
	case 2: hrt_timer_cancel(&o->r.timer); break;
	case 3: hrt_timer_forward(t, now, 7); return HRT_RESTART;
	case 4: return HRT_RESTART;
	case 5: hrt_timer_start_range(t, bases[(f->plan >> 1) & 1], 3, 3, HRT_MODE_REL); break;
	/* Since 1.2: the self-cancel wins over HRT_RESTART, a start after it
	 * wins over the cancel. */
	case 6:
		if (f->plan & 2 ? hrt_timer_try_cancel(t) : hrt_timer_cancel(t))
			abort();        /* not queued while it runs: 0 */
		return HRT_RESTART;
	case 7:
		hrt_timer_cancel(t);
		hrt_timer_start(t, ob, f->plan & 4 ? 0 : 9, HRT_MODE_REL);
		return HRT_RESTART;
	case 8:
		hrt_timer_try_cancel(t);
		if (f->rep)
			hrt_repeat_again(&f->r);
		return HRT_RESTART;
	case 9:
		if (o->rep)
			hrt_repeat_again(&o->r);
		return f->plan & 2 ? HRT_RESTART : HRT_NORESTART;
	case 10:
		if (o->rep)
			hrt_repeat_start(&o->r, ob, (f->plan >> 1) & 7, f->plan & 2 ? 0 : 11,
					 f->plan & 4 ? 0 : 4, HRT_MODE_REL);
		return HRT_RESTART;
	case 11:
		if (hrt_base_set_pass_limit(ob, (f->plan >> 1) & 3, 0) ||
		    hrt_base_get_pass_limit(ob, &lim, &ns) || lim != ((f->plan >> 1) & 3u) || ns)
			abort();
		return HRT_RESTART;
	case 12:        /* hrt.h: then HRT_NORESTART, and touch it no more */
		make(f, f->plan & 1);
		return HRT_NORESTART;
	case 13:
		if (hrt_base_check(ob, NULL, 0))
			abort();
		return HRT_RESTART;
	}
	return HRT_NORESTART;
}

static void check(void)
{
	for (int b = 0; b < 2; b++)
		if (hrt_base_check(bases[b], NULL, 0))
			abort();
}

/* A pass that may not run more callbacks than the limit it began with. */
static void run(struct hrt_base *b, hrt_time_t now, int idle)
{
	unsigned lim = 0;
	hrt_time_t ns = 0;
	ssize_t n;

	if (hrt_base_get_pass_limit(b, &lim, &ns))
		abort();
	n = hrt_base_run(b, now, idle);
	if (n < 0 || (lim && n > (ssize_t)lim))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	in = data;
	left = size;
	/* An input of odd length makes the second base a single-thread one
	 * (its own fast paths: the cancel that marks its running timer). */
	if (hrt_base_new(&bases[0], CLOCK_MONOTONIC, HRT_BASE_VIRTUAL) ||
	    hrt_base_new(&bases[1], CLOCK_MONOTONIC,
			 HRT_BASE_VIRTUAL | (size & 1 ? HRT_BASE_UNLOCKED : 0)))
		abort();
	for (int i = 0; i < NT; i++) {
		make(&timers[i], i & 1);
		timers[i].plan = (uint8_t)(i * 37);
	}
	while (left) {
		uint8_t op = byte();
		struct ft *f = &timers[byte() % NT];
		struct hrt_base *b = bases[op & 1];

		switch ((op >> 1) % 14) {
		case 0: f->plan = byte(); hrt_timer_start(&f->r.timer, b, num(), (enum hrt_mode)(byte() % 3)); break;
		case 1: f->plan = byte(); hrt_timer_start_range(&f->r.timer, b, num(), num(), (enum hrt_mode)(byte() % 3)); break;
		case 2: hrt_timer_cancel(&f->r.timer); break;
		case 3: hrt_timer_try_cancel(&f->r.timer); break;
		case 4: hrt_timer_forward(&f->r.timer, num(), num()); break;
		case 5: {
			hrt_time_t now = 0, d = num() & 0xffff;

			hrt_base_now(b, &now);

			run(b, now > HRT_TIME_MAX - d ? HRT_TIME_MAX : now + d, byte() & 1);
			check();
			break;
		}
		case 6: hrt_base_set_greedy(b, (enum hrt_greedy)(byte() % 4)); break;
		case 7: hrt_base_set_time(b, num()); break;
		case 8: {
			hrt_time_t t;

			if (hrt_base_next_event(b, &t) > 0 && t != HRT_TIME_MAX)
				run(b, t, byte() & 1);
			check();
			break;
		}
		case 9: {       /* hrt_repeat_start: first, interval, window, mode */
			hrt_time_t first, iv, win;
			int mode;

			f->plan = byte();
			first = num();
			iv = num();
			win = num();
			mode = byte() % 3;
			if (f->rep)
				hrt_repeat_start(&f->r, b, first, iv, win, (enum hrt_mode)mode);
			check();
			break;
		}
		case 10:
			if (f->rep)
				hrt_repeat_again(&f->r);
			check();
			break;
		case 11:        /* init only a timer that is not queued (hrt.h) */
			if (hrt_timer_is_queued(&f->r.timer) == 0 &&
			    hrt_timer_is_running(&f->r.timer) == 0)
				make(f, byte() & 1);
			check();
			break;
		case 12: {      /* a pass limit: callbacks, and rarely a time bound */
			uint8_t k = byte();
			unsigned lim;
			hrt_time_t ns = k & 0x80 ? num() : 0, rns;

			if (hrt_base_set_pass_limit(b, k & 0x7f, ns) == 0 &&
			    (hrt_base_get_pass_limit(b, &lim, &rns) || lim != (k & 0x7fu) || rns != ns))
				abort();
			break;
		}
		case 13: {      /* passes at one instant until nothing runs (or 64) */
			hrt_time_t now = 0;
			int idle = byte() & 1;

			hrt_base_now(b, &now);
			for (int k = 0; k < 64; k++) {
				unsigned lim = 0;
				hrt_time_t ns;
				ssize_t n;

				hrt_base_get_pass_limit(b, &lim, &ns);
				n = hrt_base_run(b, now, idle);
				if (n < 0 || (lim && n > (ssize_t)lim))
					abort();
				if (n == 0)
					break;
			}
			check();
			break;
		}
		}
	}
	check();
	/* A base with queued timers is not freed (-EBUSY): cancel them all. */
	for (int i = 0; i < NT; i++)
		hrt_timer_cancel(&timers[i].r.timer);
	if (hrt_base_free(bases[0]) || hrt_base_free(bases[1]))
		abort();
	return 0;
}
