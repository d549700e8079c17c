/* SPDX-License-Identifier: MIT */
/*
 * bench/server/timers_hrt.h - a connection's two timers as hrt range
 * timers, for both hrt servers (server_uv.c and server_sd.c built with
 * TIMERS_HRT).  Every line of the servers that calls hrt's timer API is in
 * this file, between the "hrt API" markers: what a libuv user porting
 * uv_timer_t writes.  The heartbeat is a periodic range timer
 * (hrt_repeat_start with an interval: libuv's repeat), whose callback only
 * sends and returns HRT_RESTART; the idle timeout is re-armed on each
 * request with hrt_repeat_again (uv_timer_again), which needs neither the
 * base nor the numbers; a close cancels both from anywhere, from the
 * heartbeat's own callback too (a send that failed): the cancel wins over
 * that callback's HRT_RESTART (hrt.h, since 1.2), so the connection may be
 * freed right after.  The host loops' glue is beside it
 * (examples/uv_host.h, examples/uv_plan.h, sd_host.h).
 *
 * The includer embeds a struct conn_timers in its connection and defines
 * the two calls declared below, which find the connection from its timers
 * (HRT_CONTAINER_OF): tm_heartbeat_due sends one heartbeat and returns < 0
 * when that closed the connection (tm_stop has been called then);
 * tm_idle_due closes it.  The servers name no hrt call themselves: they
 * call the tm_ functions, and the host glue's *_host_run.
 *
 * One base for the process (srv_base), made by tm_base_new on
 * CLOCK_MONOTONIC with HRT_BASE_ENV, so HRT_COALESCE=off or HRT_GREEDY=...
 * can be tried without a rebuild; unset, the defaults.
 */
#ifndef HRT_BENCH_SERVER_TIMERS_HRT_H
#define HRT_BENCH_SERVER_TIMERS_HRT_H

#include "hrt.h"
#include "proto.h"

struct conn_timers {
	struct hrt_repeat idle;
	struct hrt_repeat hb;
};

static struct hrt_base *srv_base;

static int tm_heartbeat_due(struct conn_timers *tm);
static void tm_idle_due(struct conn_timers *tm);

/* ==== hrt API: begin ==================================================== */

static enum hrt_restart on_idle(struct hrt_timer *t, hrt_time_t now)
{
	(void)now;
	tm_idle_due(HRT_CONTAINER_OF(t, struct conn_timers, idle.timer));
	return HRT_NORESTART;
}

/* Once per period, wherever in its window the pass ran it.  A send that
 * closed the connection cancelled this timer (tm_stop) from its own
 * callback: that cancel wins over the HRT_RESTART, and the library
 * touches the timer no more. */
static enum hrt_restart on_hb(struct hrt_timer *t, hrt_time_t now)
{
	(void)now;
	tm_heartbeat_due(HRT_CONTAINER_OF(t, struct conn_timers, hb.timer));
	return HRT_RESTART;
}

/* 0 or -errno. */
static int tm_base_new(void)
{
	int err = hrt_base_new(&srv_base, CLOCK_MONOTONIC, HRT_BASE_ENV);

#ifdef PASS_LIMIT_NS
	if (err == 0 && PASS_LIMIT_NS > 0)
		err = hrt_base_set_pass_limit(srv_base, 0, PASS_LIMIT_NS);
#endif
	return err;
}

/* Frees the base (every connection closed first): 0 or -errno. */
static int tm_base_free(void)
{
	int err = hrt_base_free(srv_base);

	srv_base = NULL;
	return err;
}

/* Ends the host loop (hrt_base_loop_host) after this iteration (inline:
 * server-hrt-plan has no host loop to end): 0 or
 * -errno. */
static inline int tm_base_stop(void)
{
	return hrt_base_stop(srv_base);
}

/* A new connection's timers: idle in IDLE (window IDLE_WINDOW), the
 * heartbeat every HB from HB on (window HB_WINDOW).  0 or -errno. */
static int tm_start(struct conn_timers *tm)
{
	int err;

	hrt_repeat_init(&tm->idle, on_idle);
	hrt_repeat_init(&tm->hb, on_hb);
	err = hrt_repeat_start(&tm->idle, srv_base, IDLE_NS, 0, IDLE_WINDOW_NS, HRT_MODE_REL);
	if (err == 0)
		err = hrt_repeat_start(&tm->hb, srv_base, HB_NS, HB_NS, HB_WINDOW_NS, HRT_MODE_REL);
	if (err < 0)
		hrt_timer_cancel(&tm->idle.timer);
	return err;
}

/* A request: the idle timeout starts again (uv_timer_again). */
static int tm_idle_again(struct conn_timers *tm)
{
	return hrt_repeat_again(&tm->idle);
}

/* Closing: both timers off the queue, from anywhere - their own callbacks
 * too (a cancel from there returns at once). */
static void tm_stop(struct conn_timers *tm)
{
	hrt_timer_cancel(&tm->idle.timer);
	hrt_timer_cancel(&tm->hb.timer);
}

/* The base's counters for the server's last line. */
static void tm_print_stats(FILE *f)
{
	struct hrt_stats st;

	if (hrt_base_get_stats(srv_base, &st, sizeof(st)) < 0)
		return;
	fprintf(f, " hrt_wakeups=%llu hrt_passes=%llu hrt_expired=%llu hrt_greedy=%llu"
		" hrt_late=%llu hrt_late_max_us=%llu",
		(unsigned long long)st.wakeups, (unsigned long long)st.passes,
		(unsigned long long)st.expired, (unsigned long long)st.expired_greedy,
		(unsigned long long)st.late, (unsigned long long)(st.late_max_ns / 1000));
}

/* ==== hrt API: end ====================================================== */

#endif /* HRT_BENCH_SERVER_TIMERS_HRT_H */
