/* SPDX-License-Identifier: MIT */
/*
 * bench/server/server_uv.c - the benchmark's libuv server (proto.h): a
 * framed echo server on 127.0.0.1, one thread, each connection with an
 * idle timeout re-armed on every request and a heartbeat each second.
 *
 * Built three times (the Makefile's bench-server block):
 *   server-libuv  the timers are uv_timer_t: the idle timeout repeats
 *                 every IDLE and a request calls uv_timer_again (libuv's
 *                 idiom), the heartbeat repeats every HB; uv_run.
 *   server-hrt    (TIMERS_HRT) the timers are hrt range timers
 *                 (timers_hrt.h: idle window 1 s, heartbeat window
 *                 100 ms) on one base, and libuv runs inside
 *                 hrt_base_loop_host through examples/uv_host.h.
 *   server-hrt-plan (TIMERS_HRT, HOST_PLAN) the same timers; libuv sleeps
 *                 in its own uv_run and hrt plans the sleep (examples/uv_plan.h:
 *                 one epoll call per wake-up).
 * Everything else - I/O, framing, counting, shutdown - is the same code.
 *
 *   server-{libuv,hrt,hrt-plan} [--conns N] [--port P] [--iters FILE]
 * prints "port P" when it listens (P = 0: a free port), serves until
 * SIGTERM or SIGINT, closes every connection, and prints one line of
 * counts (server=... accepted=... closed_idle=... loop_iterations=...).
 * --conns N raises RLIMIT_NOFILE for N connections first (exit 1 if it
 * cannot); --iters FILE keeps the loop's iteration count in FILE, where
 * the client reads it (proto.h).
 * Exit 0, or 1 with what failed and where on stderr.
 */
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uv.h>

#include "proto.h"

#if defined TIMERS_HRT && defined HOST_PLAN
#define SERVER_NAME "hrt-plan"
#include "timers_hrt.h"
#include "../../examples/uv_plan.h"
static struct uv_plan plan_host;
#elif defined TIMERS_HRT
#define SERVER_NAME "hrt"
#include "timers_hrt.h"
#include "../../examples/uv_host.h"
#else
#define SERVER_NAME "libuv"
struct conn_timers {
	uv_timer_t idle;
	uv_timer_t hb;
};
#endif

struct conn {
	uv_tcp_t tcp;
	struct conn_timers tm;
	struct framer in;
	uint64_t hb_seq;
	struct conn *prev, *next;       /* the open connections, for shutdown */
	int closing;
	int handles;                    /* libuv handles to close before free */
};

static uv_loop_t loop;
static uv_tcp_t listener;
static uv_signal_t sig_term, sig_int;
static uv_prepare_t iter_prep;          /* counts the loop's iterations */
static struct conn *conns;              /* open connections */
static int failed;                      /* an error ended the server */

static struct {
	unsigned long long accepted, open, closed_peer, closed_idle, closed_slow,
		closed_error, closed_shutdown, heartbeats, requests;
} count;

static void fail_uv(const char *where, int err)
{
	fprintf(stderr, "server-%s: %s: %s\n", SERVER_NAME, where, uv_strerror(err));
	failed = 1;
}

/* err: a negative errno (hrt's, or libuv's: the same on Linux). */
static void fail_err(const char *where, int err)
{
	fprintf(stderr, "server-%s: %s: %s\n", SERVER_NAME, where, strerror(-err));
	failed = 1;
}

static struct conn *conn_of(struct conn_timers *tm)
{
	return (struct conn *)((char *)tm - offsetof(struct conn, tm));
}

static void conn_close(struct conn *c, unsigned long long *reason);

/* --- the timers, libuv's own (server-libuv) ---------------------------- */
#ifndef TIMERS_HRT
static int tm_heartbeat_due(struct conn_timers *tm);
static void tm_idle_due(struct conn_timers *tm);

static void on_idle(uv_timer_t *t)
{
	tm_idle_due(&((struct conn *)t->data)->tm);
}

static void on_hb(uv_timer_t *t)
{
	tm_heartbeat_due(&((struct conn *)t->data)->tm);   /* repeats; a close stops it */
}

static int tm_start(struct conn_timers *tm)
{
	int err;

	uv_timer_init(&loop, &tm->idle);        /* cannot fail */
	uv_timer_init(&loop, &tm->hb);
	tm->idle.data = tm->hb.data = conn_of(tm);     /* on_handle_closed's */
	conn_of(tm)->handles += 2;
	err = uv_timer_start(&tm->idle, on_idle, IDLE_NS / NS_PER_MS, IDLE_NS / NS_PER_MS);
	if (err == 0)
		err = uv_timer_start(&tm->hb, on_hb, HB_NS / NS_PER_MS, HB_NS / NS_PER_MS);
	return err;
}

static int tm_idle_again(struct conn_timers *tm)
{
	return uv_timer_again(&tm->idle);
}

static void on_handle_closed(uv_handle_t *h);

static void tm_stop(struct conn_timers *tm)
{
	uv_close((uv_handle_t *)&tm->idle, on_handle_closed);
	uv_close((uv_handle_t *)&tm->hb, on_handle_closed);
}

static void tm_print_stats(FILE *f)
{
	(void)f;
}
#endif

/* --- connections --------------------------------------------------------- */

/* Freed when the last of its handles has closed. */
static void on_handle_closed(uv_handle_t *h)
{
	struct conn *c = h->data;

	if (--c->handles == 0)
		free(c);
}

/* Closes c once, counting why; its timers stop now, its memory goes when
 * libuv has closed its handles (never inside a timer callback). */
static void conn_close(struct conn *c, unsigned long long *reason)
{
	if (c->closing)
		return;
	c->closing = 1;
	(*reason)++;
	count.open--;
	if (c->prev)
		c->prev->next = c->next;
	else
		conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	tm_stop(&c->tm);
	uv_close((uv_handle_t *)&c->tcp, on_handle_closed);
}

/* One whole message to the peer, or the connection closed: 0 or -1. */
static int conn_send(struct conn *c, const struct msg *m)
{
	uv_buf_t b = uv_buf_init((char *)m, MSG_SIZE);
	int n = uv_try_write((uv_stream_t *)&c->tcp, &b, 1);

	if (n == MSG_SIZE)
		return 0;
	if (n >= 0 || n == UV_EAGAIN)
		conn_close(c, &count.closed_slow);      /* proto.h: no queueing */
	else if (n == UV_EPIPE || n == UV_ECONNRESET)
		conn_close(c, &count.closed_peer);
	else
		conn_close(c, &count.closed_error);
	return -1;
}

#include "handlers.h"

/* One buffer for every read: the loop has one thread, and libuv calls
 * alloc right before the read that fills it. */
static char rbuf[65536];

static void on_alloc(uv_handle_t *h, size_t hint, uv_buf_t *b)
{
	(void)h;
	(void)hint;
	*b = uv_buf_init(rbuf, sizeof(rbuf));
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b)
{
	struct conn *c = s->data;

	if (n > 0)
		framer_feed(&c->in, (const unsigned char *)b->base, (size_t)n, on_msg, c);
	else if (n == UV_EOF || n == UV_ECONNRESET)
		conn_close(c, &count.closed_peer);
	else if (n < 0)
		conn_close(c, &count.closed_error);
}

static void on_connection(uv_stream_t *l, int status)
{
	struct conn *c;
	int err;

	if (status < 0) {
		fail_uv("accepting a connection", status);     /* EMFILE: --conns */
		return;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		fprintf(stderr, "server-%s: out of memory for a connection\n", SERVER_NAME);
		failed = 1;
		return;
	}
	uv_tcp_init(&loop, &c->tcp);
	c->tcp.data = c;
	c->handles = 1;
	err = uv_accept(l, (uv_stream_t *)&c->tcp);
	if (err < 0) {
		fail_uv("uv_accept", err);
		uv_close((uv_handle_t *)&c->tcp, on_handle_closed);
		return;
	}
	count.accepted++;
	count.open++;
	c->next = conns;
	if (conns)
		conns->prev = c;
	conns = c;
	err = tm_start(&c->tm);         /* first: conn_close stops the timers */
	if (err == 0)
		err = uv_tcp_nodelay(&c->tcp, 1);
	if (err == 0)
		err = uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read);
	if (err < 0) {
		fail_uv("setting up a connection", err);
		conn_close(c, &count.closed_error);
	}
}

/* --- the server ------------------------------------------------------------ */

/* libuv runs its prepare handles once per iteration, before it polls; in
 * server-hrt, hrt_base_loop_host runs one libuv iteration (UV_RUN_NOWAIT)
 * per iteration of its own, so this counts the loop's iterations in all
 * three.  A plain store: no system call. */
static void on_iteration(uv_prepare_t *p)
{
	(void)p;
	(*iters)++;
}

/* SIGTERM, SIGINT: every handle closes, so uv_run returns (and hrt's loop
 * is stopped). */
static void on_signal(uv_signal_t *s, int signum)
{
	static int stopping;

	(void)s;
	(void)signum;
	if (stopping++)
		return;
	uv_close((uv_handle_t *)&listener, NULL);
	uv_close((uv_handle_t *)&iter_prep, NULL);
	uv_close((uv_handle_t *)&sig_term, NULL);
	uv_close((uv_handle_t *)&sig_int, NULL);
	while (conns)
		conn_close(conns, &count.closed_shutdown);
#if defined TIMERS_HRT && defined HOST_PLAN
	int err = uv_plan_stop(&plan_host);

	if (err < 0) {
		fprintf(stderr, "server-%s: the plan: %s\n", SERVER_NAME, strerror(-err));
		failed = 1;
	}
#elif defined TIMERS_HRT
	int err = tm_base_stop();

	if (err < 0) {
		fprintf(stderr, "server-%s: hrt_base_stop: %s\n", SERVER_NAME, strerror(-err));
		failed = 1;
	}
#endif
}

int main(int argc, char **argv)
{
	struct sockaddr_in addr;
	struct sockaddr_storage bound;
	int len = sizeof(bound), err, port;

	if ((err = server_args(argc, argv, &port)))
		return err;
	signal(SIGPIPE, SIG_IGN);       /* a write to a closed peer: EPIPE */
#ifdef TIMERS_HRT
	err = tm_base_new();
	if (err < 0) {
		fprintf(stderr, "server-%s: hrt_base_new: %s\n", SERVER_NAME, strerror(-err));
		return 1;
	}
#endif
	err = uv_loop_init(&loop);
	if (err < 0) {
		fail_uv("uv_loop_init", err);
		return 1;
	}
	uv_prepare_init(&loop, &iter_prep);
	uv_prepare_start(&iter_prep, on_iteration);
	uv_unref((uv_handle_t *)&iter_prep);    /* keeps no loop alive */
	uv_tcp_init(&loop, &listener);
	uv_signal_init(&loop, &sig_term);
	uv_signal_init(&loop, &sig_int);
	err = uv_ip4_addr("127.0.0.1", port, &addr);
	if (err == 0)
		err = uv_tcp_bind(&listener, (const struct sockaddr *)&addr, 0);
	if (err == 0)
		err = uv_listen((uv_stream_t *)&listener, 4096, on_connection);
	if (err == 0)
		err = uv_tcp_getsockname(&listener, (struct sockaddr *)&bound, &len);
	if (err == 0)
		err = uv_signal_start(&sig_term, on_signal, SIGTERM);
	if (err == 0)
		err = uv_signal_start(&sig_int, on_signal, SIGINT);
	if (err < 0) {
		fail_uv("listening on 127.0.0.1", err);
		on_signal(NULL, 0);
	} else {
		printf("port %d\n", ntohs(((struct sockaddr_in *)&bound)->sin_port));
		fflush(stdout);
#if defined TIMERS_HRT && defined HOST_PLAN
		err = uv_plan_start(&plan_host, &loop, srv_base);  /* uv_run below serves */
		if (err < 0) {
			fprintf(stderr, "server-%s: uv_plan_start: %s\n", SERVER_NAME,
				strerror(-err));
			failed = 1;
			on_signal(NULL, 0);
		}
#elif defined TIMERS_HRT
		err = uv_host_run(&loop, srv_base);     /* until on_signal */
		if (err < 0) {
			fprintf(stderr, "server-%s: hrt_base_loop_host: %s\n", SERVER_NAME,
				strerror(-err));
			failed = 1;
			on_signal(NULL, 0);
		}
#endif
	}
	uv_run(&loop, UV_RUN_DEFAULT);  /* serves (libuv), or runs the closes */
#if defined TIMERS_HRT && defined HOST_PLAN
	if (plan_host.err) {            /* uv_stop by the plan: close and end */
		on_signal(NULL, 0);     /* says what failed */
		uv_run(&loop, UV_RUN_DEFAULT);
	}
#endif
	print_counts();
	err = uv_loop_close(&loop);
	if (err < 0)
		fail_uv("uv_loop_close", err);
#ifdef TIMERS_HRT
	err = tm_base_free();
	if (err < 0) {
		fprintf(stderr, "server-%s: hrt_base_free: %s\n", SERVER_NAME, strerror(-err));
		failed = 1;
	}
#endif
	return failed;
}
