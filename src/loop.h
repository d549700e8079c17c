/* SPDX-License-Identifier: MIT */
/*
 * loop.h - the state of hrt_base_loop (internal; loop.c).  A base embeds
 * one, as it embeds its wheel, so a stop asked before the loop starts, the
 * epoll and eventfd, and what the loop learnt (no epoll_pwait2) outlive one
 * loop; base.c only initialises, frees and asks whether a loop runs.
 *
 * While it runs, the loop is the base's device (device.h), stacked on the
 * timerfd below it: on the timerfd path it forwards every arm and pokes
 * itself when one fails (so it can retry); while coalescing it only notes
 * the instant, and pokes the sleep it is in when the instant comes before
 * that sleep's end.  Its lock nests inside the base's (arm() is called
 * under the base lock); the loop never holds it while calling the base.
 */
#ifndef HRT_LOOP_H
#define HRT_LOOP_H

#include <pthread.h>
#include "device.h"

struct epoll_event;
/* The coalesced sleep's wait: epoll_pwait2 for `timeout` ns from `now`, as
 * the loop read it.  Replaceable per base for the tests. */
typedef int (*hrt__pwait2_fn)(void *ctx, int epfd, struct epoll_event *evs, int n,
			      hrt_time_t now, hrt_time_t timeout);

struct hrt_loop {
	struct hrt_device dev;          /* installed while the loop runs */
	struct hrt_device *below;       /* the timerfd device under it */
	pthread_mutex_t lock;           /* everything below; not taken if unlocked */
	int unlocked;                   /* the base is HRT_BASE_UNLOCKED */
	int epfd, efd;                  /* -1 until the first loop */
	int stop;                       /* hrt_base_stop asked */
	int looping;                    /* a loop runs (a second: -EBUSY) */
	int arm_failed;                 /* the last forwarded arm failed */
	int coalescing;                 /* the ranged-sleep path runs */
	int sleeping;                   /* in a sleep ending by sleep_hard (or
					 * planning one): an earlier arm pokes */
	int nosys;                      /* epoll_pwait2 said ENOSYS */
	hrt_time_t sleep_hard;
	hrt_time_t tfd_at;              /* coalescing: what the timerfd holds
					 * (1: unknown) */
	hrt__pwait2_fn pwait2;          /* test seam; NULL: the system call */
	void *pwait2_ctx;
};

int hrt__loop_init(struct hrt_loop *l, int unlocked);
void hrt__loop_fini(struct hrt_loop *l);
int hrt__loop_busy(struct hrt_loop *l);

/* Test seam: the wait a coalesced sleep uses; NULL restores the system call. */
void hrt__base_set_pwait2(struct hrt_base *b, hrt__pwait2_fn fn, void *ctx);
int hrt__pwait2_sys(void *ctx, int epfd, struct epoll_event *evs, int n,
		    hrt_time_t now, hrt_time_t timeout);

#endif /* HRT_LOOP_H */
