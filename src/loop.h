/* SPDX-License-Identifier: MIT */
/*
 * loop.h - hrt_base_loop's state (internal), shared by the two files of
 * the loop: loop.c makes it, sets it up and runs the public calls;
 * loop_sleep.c runs the iterations (the host's turn, one sleep, its pass).
 * lifecycle.c makes one per base and frees it, so a stop asked before the
 * loop starts, the epoll and eventfd, and what the loop learnt (no
 * epoll_pwait2) outlive one loop; the base itself only keeps the pointer
 * (base.h, hrt__base_loop) and never calls the loop.
 *
 * While it runs, the loop has the base's wake-up device (base.h,
 * hrt__wake_take): in NOTE mode while it coalesces (it plans its sleeps,
 * a start that needs an earlier one pokes its eventfd), in ARM mode on
 * the timerfd path.  Its own lock is innermost: the loop never holds it
 * while it calls into the base.
 */
#ifndef HRT_LOOP_H
#define HRT_LOOP_H

#include <pthread.h>
#include "hrt.h"

struct epoll_event;
/* The coalesced sleep's wait: epoll_pwait2 for `timeout` ns from `now`, as
 * the loop read it.  Replaceable per base for the tests. */
typedef int (*hrt__pwait2_fn)(void *ctx, int epfd, struct epoll_event *evs, int n,
			      hrt_time_t now, hrt_time_t timeout);

/* Another event loop run inside this one (hrt_base_loop_host): its fd
 * shares the epoll, its iteration runs between sleeps, its deadline cuts
 * them.  Set before the loop starts and cleared after it ends, by the
 * loop's thread: no lock. */
struct hrt_loop_host {
	int fd;
	hrt_time_t (*timeout)(void *arg);
	int (*run)(void *arg);
	void *arg;
};

struct hrt_loop {
	pthread_mutex_t lock;           /* stop, looping, nosys, the seam; not
					 * taken if unlocked */
	int unlocked;                   /* the base is HRT_BASE_UNLOCKED */
	int epfd, efd;                  /* -1 until the first loop */
	int stop;                       /* hrt_base_stop asked */
	int looping;                    /* a loop runs (a second: -EBUSY) */
	int nosys;                      /* epoll_pwait2 said ENOSYS */
	hrt__pwait2_fn pwait2;          /* test seam; NULL: the system call */
	void *pwait2_ctx;
	struct hrt_loop_host host;      /* hrt_base_loop_host's; fd -1: none */
};

static inline void loop_lock(struct hrt_loop *l)
{
	if (!l->unlocked)
		pthread_mutex_lock(&l->lock);
}

static inline void loop_unlock(struct hrt_loop *l)
{
	if (!l->unlocked)
		pthread_mutex_unlock(&l->lock);
}

/* loop.c.  A new loop state for a base (unlocked: HRT_BASE_UNLOCKED), or
 * NULL; its free; whether a hrt_base_loop runs on it. */
struct hrt_loop *hrt__loop_new(int unlocked);
void hrt__loop_free(struct hrt_loop *l);
int hrt__loop_busy(struct hrt_loop *l);
/* Test seam: the wait a coalesced sleep uses; NULL restores the system call. */
void hrt__loop_set_pwait2(struct hrt_base *b, hrt__pwait2_fn fn, void *ctx);

/* loop_sleep.c.  The two ways to sleep, each until a stop (0), an error
 * (-errno) or, for the coalesced one, a reason to go on with the timerfd
 * path (1: no epoll_pwait2, or the fd could not be set).  The hook the
 * loop hands the base (base.h), and the system call behind the seam. */
int hrt__loop_coalesced(struct hrt_base *b, struct hrt_loop *l, int tfd);
int hrt__loop_timerfd(struct hrt_base *b, struct hrt_loop *l, int tfd);
hrt_time_t hrt__loop_kick(void *ctx, hrt_time_t when);
int hrt__pwait2_sys(void *ctx, int epfd, struct epoll_event *evs, int n,
		    hrt_time_t now, hrt_time_t timeout);

#endif /* HRT_LOOP_H */
