/* SPDX-License-Identifier: MIT */
/*
 * fuzz_api.c - drives the public API from a byte stream: each op byte picks
 * start/start_range/cancel/try_cancel/forward/pass/set_greedy/set_time on a
 * few timers and two virtual bases, with operands from the following bytes
 * (including hostile ones: negative slack, huge times, bad enums).  Every
 * pass re-checks the trees; any inconsistency aborts, which is the finding.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hrt.h"

#define NT 16

struct ft {
	struct hrt_timer t;
	uint8_t plan;
};

static struct ft timers[NT];
static struct hrt_base *bases[2];
static const uint8_t *in;
static size_t left;

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

static enum hrt_restart cb(struct hrt_timer *t, hrt_time_t now)
{
	struct ft *f = (struct ft *)t;
	struct ft *o = &timers[f->plan % NT];

	switch (f->plan >> 4) {
	case 1: hrt_timer_start(&o->t, bases[f->plan & 1], 5, HRT_MODE_REL); break;
	case 2: hrt_timer_cancel(&o->t); break;
	case 3: hrt_timer_forward(t, now, 7); return HRT_RESTART;
	case 4: return HRT_RESTART;
	case 5: hrt_timer_start_range(t, bases[(f->plan >> 1) & 1], 3, 3, HRT_MODE_REL); break;
	}
	return HRT_NORESTART;
}

static void check(void)
{
	for (int b = 0; b < 2; b++)
		if (hrt_base_check(bases[b], NULL, 0))
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	in = data;
	left = size;
	if (hrt_base_new(&bases[0], CLOCK_MONOTONIC, HRT_BASE_VIRTUAL) ||
	    hrt_base_new(&bases[1], CLOCK_MONOTONIC, HRT_BASE_VIRTUAL))
		abort();
	for (int i = 0; i < NT; i++) {
		hrt_timer_init(&timers[i].t, cb);
		timers[i].plan = (uint8_t)(i * 37);
	}
	while (left) {
		uint8_t op = byte();
		struct ft *f = &timers[byte() % NT];
		struct hrt_base *b = bases[op & 1];

		switch ((op >> 1) % 9) {
		case 0: f->plan = byte(); hrt_timer_start(&f->t, b, num(), (enum hrt_mode)(byte() % 3)); break;
		case 1: f->plan = byte(); hrt_timer_start_range(&f->t, b, num(), num(), (enum hrt_mode)(byte() % 3)); break;
		case 2: hrt_timer_cancel(&f->t); break;
		case 3: hrt_timer_try_cancel(&f->t); break;
		case 4: hrt_timer_forward(&f->t, num(), num()); break;
		case 5: {
			hrt_time_t now = 0, d = num() & 0xffff;

			hrt_base_now(b, &now);

			hrt_base_run(b, now > HRT_TIME_MAX - d ? HRT_TIME_MAX : now + d, byte() & 1);
			check();
			break;
		}
		case 6: hrt_base_set_greedy(b, (enum hrt_greedy)(byte() % 4)); break;
		case 7: hrt_base_set_time(b, num()); break;
		case 8: {
			hrt_time_t t;

			if (hrt_base_next_event(b, &t) > 0 && t != HRT_TIME_MAX)
				hrt_base_run(b, t, byte() & 1);
			check();
			break;
		}
		}
	}
	check();
	/* A base with queued timers is not freed (-EBUSY): cancel them all. */
	for (int i = 0; i < NT; i++)
		hrt_timer_cancel(&timers[i].t);
	if (hrt_base_free(bases[0]) || hrt_base_free(bases[1]))
		abort();
	return 0;
}
