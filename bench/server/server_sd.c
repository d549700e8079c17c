/* SPDX-License-Identifier: MIT */
/*
 * bench/server/server_sd.c - the benchmark's server (proto.h) on sd-event:
 * the same framed echo server as server_uv.c, its I/O as sd-event sources.
 *
 * Built twice (the Makefile's bench-server block):
 *   server-sd-event  the timers are sd-event time sources with an
 *                    accuracy equal to hrt's windows (idle 1 s, heartbeat
 *                    100 ms): sd-event's own range timers, which it
 *                    coalesces itself (it picks a wake-up inside the
 *                    accuracy, then arms a timerfd there); a request moves
 *                    the idle source (sd_event_source_set_time_relative),
 *                    the heartbeat re-arms at its last time + 1 s, so it
 *                    does not drift; sd_event_loop.
 *   server-sd-hrt    (TIMERS_HRT) the timers are hrt range timers
 *                    (timers_hrt.h), and sd-event runs inside
 *                    hrt_base_loop_host through sd_host.h.
 *
 *   server-{sd-event,sd-hrt} [--conns N] [--port P] [--iters FILE]
 * as server_uv.c: prints "port P", serves until SIGTERM or SIGINT, prints
 * one line of counts; an iteration is one of sd-event's (a prepare
 * callback of the listener's source: sd_event_prepare runs it once per
 * iteration).  Exit 0, or 1 with what failed and where on stderr.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <systemd/sd-event.h>

#include "proto.h"

#ifdef TIMERS_HRT
#define SERVER_NAME "sd-hrt"
#include "timers_hrt.h"
#include "sd_host.h"
#else
#define SERVER_NAME "sd-event"
struct conn_timers {
	sd_event_source *idle;
	sd_event_source *hb;
};
#endif

struct conn {
	int fd;
	sd_event_source *io;
	struct conn_timers tm;
	struct framer in;
	uint64_t hb_seq;
	struct conn *prev, *next;       /* the open connections, for shutdown */
};

static sd_event *ev;
static sd_event_source *listen_src, *sig_term, *sig_int;
static int listen_fd = -1;
static struct conn *conns;
static int failed;

static struct {
	unsigned long long accepted, open, closed_peer, closed_idle, closed_slow,
		closed_error, closed_shutdown, heartbeats, requests;
} count;

static void fail_err(const char *where, int err)       /* err: a negative errno */
{
	fprintf(stderr, "server-%s: %s: %s\n", SERVER_NAME, where, strerror(-err));
	failed = 1;
}

static struct conn *conn_of(struct conn_timers *tm)
{
	return (struct conn *)((char *)tm - offsetof(struct conn, tm));
}

/* --- the timers, sd-event's own (server-sd-event) ------------------------- */
#ifndef TIMERS_HRT
#define US(ns) ((uint64_t)(ns) / 1000)

static int tm_heartbeat_due(struct conn_timers *tm);
static void tm_idle_due(struct conn_timers *tm);

static int on_idle(sd_event_source *s, uint64_t usec, void *tm)
{
	(void)s;
	(void)usec;
	tm_idle_due(tm);
	return 0;
}

/* usec is the time the source was set to: the next one is a period on,
 * skipping the periods a late run missed (hrt_timer_forward's rule; one
 * period on alone would fire a late heartbeat again at once). */
static int on_hb(sd_event_source *s, uint64_t usec, void *tm)
{
	uint64_t now;
	int err;

	if (tm_heartbeat_due(tm) < 0)
		return 0;               /* closed: the source is gone */
	err = sd_event_now(ev, CLOCK_MONOTONIC, &now);
	usec += US(HB_NS);
	if (err >= 0 && usec <= now)
		usec += (now - usec) / US(HB_NS) * US(HB_NS) + US(HB_NS);
	if (err >= 0)
		err = sd_event_source_set_time(s, usec);
	if (err >= 0)
		err = sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
	if (err < 0)
		fail_err("re-arming a heartbeat", err);
	return 0;
}

static int tm_start(struct conn_timers *tm)
{
	int err = sd_event_add_time_relative(ev, &tm->idle, CLOCK_MONOTONIC, US(IDLE_NS),
					     US(IDLE_WINDOW_NS), on_idle, tm);

	if (err >= 0)
		err = sd_event_add_time_relative(ev, &tm->hb, CLOCK_MONOTONIC, US(HB_NS),
						 US(HB_WINDOW_NS), on_hb, tm);
	return err < 0 ? err : 0;
}

static int tm_idle_again(struct conn_timers *tm)
{
	int err = sd_event_source_set_time_relative(tm->idle, US(IDLE_NS));

	return err < 0 ? err : 0;
}

static void tm_stop(struct conn_timers *tm)
{
	tm->idle = sd_event_source_disable_unref(tm->idle);
	tm->hb = sd_event_source_disable_unref(tm->hb);
}

static void tm_print_stats(FILE *f)
{
	(void)f;
}
#endif

/* --- connections --------------------------------------------------------- */

/* Closes c once, counting why, and frees it: from its own callbacks too
 * (sd-event keeps a dispatching source until its callback returns; hrt
 * lets a callback free its own timer). */
static void conn_close(struct conn *c, unsigned long long *reason)
{
	(*reason)++;
	count.open--;
	if (c->prev)
		c->prev->next = c->next;
	else
		conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	tm_stop(&c->tm);
	sd_event_source_disable_unref(c->io);
	close(c->fd);
	free(c);
}

/* One whole message to the peer, or the connection closed: 0 or -1. */
static int conn_send(struct conn *c, const struct msg *m)
{
	ssize_t n = send(c->fd, m, MSG_SIZE, MSG_NOSIGNAL | MSG_DONTWAIT);

	if (n == MSG_SIZE)
		return 0;
	if (n >= 0 || errno == EAGAIN)
		conn_close(c, &count.closed_slow);      /* proto.h: no queueing */
	else if (errno == EPIPE || errno == ECONNRESET)
		conn_close(c, &count.closed_peer);
	else
		conn_close(c, &count.closed_error);
	return -1;
}

#include "handlers.h"

/* Reads until a read comes back short (drained, as libuv judges it). */
static int on_io(sd_event_source *s, int fd, uint32_t revents, void *arg)
{
	static unsigned char buf[65536];
	struct conn *c = arg;

	(void)s;
	(void)revents;
	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);

		if (n > 0) {
			if (framer_feed(&c->in, buf, (size_t)n, on_msg, c) < 0)
				return 0;       /* closed */
			if ((size_t)n < sizeof(buf))
				return 0;
		} else if (n < 0 && errno == EINTR) {
			continue;
		} else if (n < 0 && errno == EAGAIN) {
			return 0;
		} else {
			conn_close(c, n == 0 || errno == ECONNRESET ? &count.closed_peer
				   : &count.closed_error);
			return 0;
		}
	}
}

static void conn_new(int fd)
{
	struct conn *c = calloc(1, sizeof(*c));
	int one = 1, err;

	if (!c) {
		fprintf(stderr, "server-%s: out of memory for a connection\n", SERVER_NAME);
		failed = 1;
		close(fd);
		return;
	}
	c->fd = fd;
	count.accepted++;
	count.open++;
	c->next = conns;
	if (conns)
		conns->prev = c;
	conns = c;
	err = tm_start(&c->tm);
	if (err == 0 && setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) < 0)
		err = -errno;
	if (err == 0)
		err = sd_event_add_io(ev, &c->io, fd, EPOLLIN, on_io, c);
	if (err < 0) {
		fail_err("setting up a connection", err);
		conn_close(c, &count.closed_error);
	}
}

static int on_accept(sd_event_source *s, int fd, uint32_t revents, void *arg)
{
	(void)s;
	(void)revents;
	(void)arg;
	for (;;) {
		int c = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (c >= 0)
			conn_new(c);
		else if (errno == EINTR || errno == ECONNABORTED)
			continue;
		else if (errno == EAGAIN)
			return 0;
		else {
			fail_err("accept4 (EMFILE: --conns)", -errno);
			return 0;
		}
	}
}

/* --- the server ------------------------------------------------------------ */

static void shutdown_all(void)
{
	static int stopping;

	if (stopping++)
		return;
	listen_src = sd_event_source_disable_unref(listen_src);
	sig_term = sd_event_source_disable_unref(sig_term);
	sig_int = sd_event_source_disable_unref(sig_int);
	while (conns)
		conn_close(conns, &count.closed_shutdown);
#ifdef TIMERS_HRT
	int err = tm_base_stop();

	if (err < 0)
		fail_err("hrt_base_stop", err);
#else
	sd_event_exit(ev, 0);
#endif
}

static int on_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *arg)
{
	(void)s;
	(void)si;
	(void)arg;
	shutdown_all();
	return 0;
}

/* The listening socket on 127.0.0.1:port; prints the port.  0 or -errno. */
static int listen_on(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	socklen_t len = sizeof(a);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (listen_fd < 0 || bind(listen_fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    listen(listen_fd, 4096) < 0 || getsockname(listen_fd, (struct sockaddr *)&a, &len) < 0)
		return -errno;
	printf("port %d\n", ntohs(a.sin_port));
	fflush(stdout);
	return 0;
}

/* sd_event_prepare calls it once an iteration: a plain store, no system
 * call. */
static int on_iteration(sd_event_source *s, void *arg)
{
	(void)s;
	(void)arg;
	(*iters)++;
	return 0;
}

int main(int argc, char **argv)
{
	sigset_t mask;
	int err, port;

	if ((err = server_args(argc, argv, &port)))
		return err;
	/* sd-event takes signals through a signalfd: they must be blocked. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
#ifdef TIMERS_HRT
	err = tm_base_new();
	if (err < 0) {
		fail_err("hrt_base_new", err);
		return 1;
	}
#endif
	err = sd_event_new(&ev);
	if (err < 0) {
		fail_err("sd_event_new", err);
		return 1;
	}
	err = listen_on(port);
	if (err < 0)
		fail_err("listening on 127.0.0.1", err);
	if (err == 0)
		err = sd_event_add_io(ev, &listen_src, listen_fd, EPOLLIN, on_accept, NULL);
	if (err >= 0)
		err = sd_event_source_set_prepare(listen_src, on_iteration);
	if (err >= 0)
		err = sd_event_add_signal(ev, &sig_term, SIGTERM, on_signal, NULL);
	if (err >= 0)
		err = sd_event_add_signal(ev, &sig_int, SIGINT, on_signal, NULL);
	if (err < 0) {
		if (!failed)
			fail_err("adding the server's sources", err);
	} else {
#ifdef TIMERS_HRT
		err = sd_host_run(ev, srv_base);        /* until shutdown_all */
		if (err < 0)
			fail_err("hrt_base_loop_host", err);
#else
		err = sd_event_loop(ev);
		if (err < 0)
			fail_err("sd_event_loop", err);
#endif
	}
	shutdown_all();                 /* nothing left after a normal stop */
	print_counts();
	if (listen_fd >= 0)
		close(listen_fd);
	sd_event_unref(ev);
#ifdef TIMERS_HRT
	err = tm_base_free();
	if (err < 0)
		fail_err("hrt_base_free", err);
#endif
	return failed;
}
