/* SPDX-License-Identifier: MIT */
/*
 * epoll_timers.c - hrt range timers in a hand-written epoll loop.
 *
 * The base's timerfd (hrt_base_fd) is one more fd in the epoll set.  One
 * epoll_wait returns everything that is ready at once, so the rule is exact:
 *
 *     idle = 1  if the hrt fd is the only fd in the batch,
 *     idle = 0  if other fds are ready with it (work waiting behind us).
 *
 * Due timers run either way (the leftmost run); the greedy walk, which runs
 * soft-expired timers early, is kept for wake-ups with nothing else to do.
 * The loop's own timer (the host tick) is the epoll_wait timeout, as in most
 * hand-written loops.
 *
 * The workload and the self-check live in example.h; here only the loop.
 */
#include <sys/epoll.h>

#include "example.h"

static int watch(int epfd, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };

	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) < 0 ? -errno : 0;
}

int main(void)
{
	struct hrt_base *base;
	struct epoll_event evs[8];
	hrt_time_t now, next_tick;
	int epfd = -1, hrt_fd, n, i;

	base = ex_start("epoll_timers");
	if (!base)
		return ex_finish();
	EX_TRY(hrt_fd = hrt_base_fd(base));
	epfd = epoll_create1(EPOLL_CLOEXEC);
	EX_TRY(epfd < 0 ? -errno : 0);
	EX_TRY(watch(epfd, hrt_fd));
	EX_TRY(watch(epfd, ex.pipe[0]));

	next_tick = ex_now() + EX_TICK_MS * 1000000;
	while (!ex_all_fired() && !ex.failed) {
		now = ex_now();
		if (now >= next_tick) {                 /* the host's own timer */
			if (ex_overdue())
				break;
			ex_host_tick();
			next_tick += EX_TICK_MS * 1000000;
			continue;
		}
		n = epoll_wait(epfd, evs, 8, (int)((next_tick - now + 999999) / 1000000));
		if (n < 0 && errno == EINTR)
			continue;
		EX_TRY(n < 0 ? -errno : 0);
		for (i = 0; i < n; i++) {
			if (evs[i].data.fd == hrt_fd) {
				int idle = n == 1;      /* nothing else in this batch */

				ex_dispatched(idle, hrt_base_dispatch(base, idle));
			} else {
				ex_host_readable();
			}
		}
	}
out:
	if (epfd >= 0)
		close(epfd);
	return ex_finish();
}
