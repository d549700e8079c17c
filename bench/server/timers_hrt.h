/* SPDX-License-Identifier: MIT */
/*
 * bench/server/timers_hrt.h - a connection's two timers as hrt range
 * timers, for both hrt servers (server_uv.c and server_sd.c built with
 * TIMERS_HRT).  Every line of the servers that calls hrt's timer API is in
 * this file, between the "hrt API" markers: when the library gains a
 * periodic start and an "again" re-arm (issue 42), only tm_start,
 * tm_idle_again and on_hb change.  The host loops' glue is beside it
 * (examples/uv_host.h, sd_host.h).
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
	struct hrt_timer idle;
	struct hrt_timer hb;
};

static struct hrt_base *srv_base;

static int tm_heartbeat_due(struct conn_timers *tm);
static void tm_idle_due(struct conn_timers *tm);

/* ==== hrt API: begin ==================================================== */

static enum hrt_restart on_idle(struct hrt_timer *t, hrt_time_t now)
{
	(void)now;
	tm_idle_due(HRT_CONTAINER_OF(t, struct conn_timers, idle));
	return HRT_NORESTART;
}

/* The periodic idiom: forward to the next window and restart.  A send
 * that closed the connection cancelled this timer from its own callback,
 * which HRT_RESTART would undo (issue 42, item 1: the connection is freed
 * next), so then the timer is not touched again. */
static enum hrt_restart on_hb(struct hrt_timer *t, hrt_time_t now)
{
	if (tm_heartbeat_due(HRT_CONTAINER_OF(t, struct conn_timers, hb)) < 0)
		return HRT_NORESTART;
	hrt_timer_forward(t, now, HB_NS);
	return HRT_RESTART;
}

/* 0 or -errno. */
static int tm_base_new(void)
{
	return hrt_base_new(&srv_base, CLOCK_MONOTONIC, HRT_BASE_ENV);
}

/* Frees the base (every connection closed first): 0 or -errno. */
static int tm_base_free(void)
{
	int err = hrt_base_free(srv_base);

	srv_base = NULL;
	return err;
}

/* Ends the host loop (hrt_base_loop_host) after this iteration: 0 or
 * -errno. */
static int tm_base_stop(void)
{
	return hrt_base_stop(srv_base);
}

/* A new connection's timers: idle in IDLE (window IDLE_WINDOW), the first
 * heartbeat in HB (window HB_WINDOW).  0 or -errno. */
static int tm_start(struct conn_timers *tm)
{
	int err;

	hrt_timer_init(&tm->idle, on_idle);
	hrt_timer_init(&tm->hb, on_hb);
	err = hrt_timer_start_range(&tm->idle, srv_base, IDLE_NS, IDLE_WINDOW_NS, HRT_MODE_REL);
	if (err == 0)
		err = hrt_timer_start_range(&tm->hb, srv_base, HB_NS, HB_WINDOW_NS, HRT_MODE_REL);
	if (err < 0)
		hrt_timer_cancel(&tm->idle);
	return err;
}

/* A request: the idle timeout starts again (uv_timer_again's job). */
static int tm_idle_again(struct conn_timers *tm)
{
	return hrt_timer_start_range(&tm->idle, srv_base, IDLE_NS, IDLE_WINDOW_NS, HRT_MODE_REL);
}

/* Closing: both timers off the queue; from their own callbacks too. */
static void tm_stop(struct conn_timers *tm)
{
	hrt_timer_cancel(&tm->idle);
	hrt_timer_cancel(&tm->hb);
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
