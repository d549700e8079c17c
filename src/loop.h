/* SPDX-License-Identifier: MIT */
/*
 * loop.h - hrt_base_loop's state (internal; loop.c owns it).  Opaque
 * outside loop.c: lifecycle.c makes one per base and frees it, so a stop
 * asked before the loop starts, the epoll and eventfd, and what the loop
 * learnt (no epoll_pwait2) outlive one loop; the base itself only keeps
 * the pointer (base.h, hrt__base_loop) and never calls the loop.
 *
 * While it runs, the loop has the base's wake-up device (base.h,
 * hrt__wake_take): in NOTE mode while it coalesces (it plans its sleeps,
 * a start that needs an earlier one pokes its eventfd), in ARM mode on
 * the timerfd path.  Its own lock is innermost: the loop never holds it
 * while it calls into the base.
 */
#ifndef HRT_LOOP_H
#define HRT_LOOP_H

#include "hrt.h"

struct epoll_event;
/* The coalesced sleep's wait: epoll_pwait2 for `timeout` ns from `now`, as
 * the loop read it.  Replaceable per base for the tests. */
typedef int (*hrt__pwait2_fn)(void *ctx, int epfd, struct epoll_event *evs, int n,
			      hrt_time_t now, hrt_time_t timeout);

struct hrt_loop;

/* A new loop state for a base (unlocked: HRT_BASE_UNLOCKED), or NULL. */
struct hrt_loop *hrt__loop_new(int unlocked);
void hrt__loop_free(struct hrt_loop *l);
/* A hrt_base_loop runs on it. */
int hrt__loop_busy(struct hrt_loop *l);

/* Test seam: the wait a coalesced sleep uses; NULL restores the system call. */
void hrt__loop_set_pwait2(struct hrt_base *b, hrt__pwait2_fn fn, void *ctx);
int hrt__pwait2_sys(void *ctx, int epfd, struct epoll_event *evs, int n,
		    hrt_time_t now, hrt_time_t timeout);

#endif /* HRT_LOOP_H */
