/* SPDX-License-Identifier: MIT */
/*
 * uv_echo.c - a libuv TCP echo server whose timers are hrt range timers:
 * what a libuv program looks like after the port (docs/PORTING.md).  Each
 * connection has an idle timeout, pushed back by every read, that closes
 * it, and a heartbeat ("hb\n") every period.  libuv keeps its own uv_run;
 * uv_plan.h lets hrt plan libuv's sleep.
 *
 *   uv_echo [--port P] [--idle-ms MS] [--heartbeat-ms MS]
 *
 * Listens on 127.0.0.1:P (default 7000; 0: a free one), prints "port P",
 * serves until SIGINT or SIGTERM, then closes every connection and exits
 * 0 (1 with what failed on stderr).  Idle 10 s and heartbeat 1 s unless
 * told; each timer may run up to a tenth of its delay late (its window),
 * never early.  What the port changed, from uv_timer_t:
 *
 *   uv_timer_init, uv_timer_start   hrt_repeat_init, hrt_repeat_start
 *   uv_timer_again on a read        hrt_repeat_again
 *   uv_close of each timer          hrt_timer_cancel, before the close
 *                                   that frees the connection
 *   uv_run                          uv_plan_start, then uv_run as before
 *
 * Run by tests/test_uv_echo.c (make test) with short timeouts.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uv.h>
#include <hrt.h>

#include "uv_plan.h"

#define MS 1000000              /* hrt counts nanoseconds */

struct conn {
	uv_tcp_t tcp;                   /* data: this struct */
	struct hrt_repeat idle;         /* closes the connection */
	struct hrt_repeat heartbeat;    /* sends "hb\n" */
};

struct echo {                           /* one echo being written */
	uv_write_t req;
	uv_buf_t buf;
};

static uv_loop_t loop;
static uv_tcp_t server;
static uv_signal_t sigint, sigterm;
static struct hrt_base *base;
static struct uv_plan plan;
static int plan_err;                    /* uv_plan_stop's */
static hrt_time_t idle_ns = 10000 * (hrt_time_t)MS, heartbeat_ns = 1000 * (hrt_time_t)MS;

static void on_closed(uv_handle_t *h)
{
	free(h->data);
}

/* The order that matters: cancel each timer, then let the memory go.  A
 * cancel returns with the timer neither queued nor running; a freed timer
 * still queued would be written to at its expiry.  From the timer's own
 * callback the cancel returns at once and wins over its HRT_RESTART. */
static void conn_close(struct conn *c)
{
	if (uv_is_closing((uv_handle_t *)&c->tcp))
		return;
	hrt_timer_cancel(&c->idle.timer);
	hrt_timer_cancel(&c->heartbeat.timer);
	uv_close((uv_handle_t *)&c->tcp, on_closed);    /* frees c */
}

static enum hrt_restart on_idle(struct hrt_timer *t, hrt_time_t now)
{
	(void)now;
	conn_close(HRT_CONTAINER_OF(t, struct conn, idle.timer));
	return HRT_NORESTART;
}

/* Once a period.  uv_try_write: a heartbeat never waits behind an echo
 * (UV_EAGAIN: skipped); a peer that is gone or reads nothing is closed. */
static enum hrt_restart on_heartbeat(struct hrt_timer *t, hrt_time_t now)
{
	static char hb[] = "hb\n";
	struct conn *c = HRT_CONTAINER_OF(t, struct conn, heartbeat.timer);
	uv_buf_t b = uv_buf_init(hb, sizeof(hb) - 1);
	int r = uv_try_write((uv_stream_t *)&c->tcp, &b, 1);

	(void)now;
	if (r != (int)b.len && r != UV_EAGAIN)
		conn_close(c);
	return HRT_RESTART;
}

static void on_alloc(uv_handle_t *h, size_t hint, uv_buf_t *b)
{
	(void)h;
	b->base = malloc(hint);
	b->len = b->base ? hint : 0;    /* 0: libuv reports UV_ENOBUFS */
}

static void on_written(uv_write_t *w, int status)
{
	struct echo *e = (struct echo *)w;

	(void)status;                   /* a failed write: on_read sees it */
	free(e->buf.base);
	free(e);
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b)
{
	struct conn *c = s->data;
	struct echo *e;

	if (n > 0) {
		hrt_repeat_again(&c->idle);     /* uv_timer_again */
		e = malloc(sizeof(*e));
		if (e) {
			e->buf = uv_buf_init(b->base, (unsigned int)n);
			if (uv_write(&e->req, s, &e->buf, 1, on_written) == 0)
				return;         /* on_written frees both */
			free(e);
		}
	}
	free(b->base);
	if (n != 0)                     /* EOF, an error, or no echo */
		conn_close(c);
}

static void on_connection(uv_stream_t *srv, int status)
{
	struct conn *c = status < 0 ? NULL : calloc(1, sizeof(*c));

	if (!c)                         /* status: libuv's error (it handles EMFILE) */
		return;                 /* out of memory: left unaccepted */
	uv_tcp_init(&loop, &c->tcp);
	c->tcp.data = c;
	hrt_repeat_init(&c->idle, on_idle);
	hrt_repeat_init(&c->heartbeat, on_heartbeat);
	if (uv_accept(srv, (uv_stream_t *)&c->tcp) < 0 ||
	    hrt_repeat_start(&c->idle, base, idle_ns, 0, idle_ns / 10, HRT_MODE_REL) < 0 ||
	    hrt_repeat_start(&c->heartbeat, base, heartbeat_ns, heartbeat_ns, heartbeat_ns / 10,
			     HRT_MODE_REL) < 0 ||
	    uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read) < 0)
		conn_close(c);
}

static void close_handle(uv_handle_t *h, void *arg)
{
	(void)arg;
	if (h->type == UV_TCP && h != (uv_handle_t *)&server)
		conn_close(h->data);
	else if (!uv_is_closing(h))
		uv_close(h, NULL);
}

/* Every handle closed, so uv_run returns: the glue's first (it closes its
 * own), then the connections, the server and the signals. */
static void stop(void)
{
	static int stopped;

	if (stopped++)
		return;
	plan_err = uv_plan_stop(&plan);
	uv_walk(&loop, close_handle, NULL);
}

static void on_signal(uv_signal_t *s, int signum)
{
	(void)s;
	(void)signum;
	stop();
}

static int fail(const char *what, int err)
{
	fprintf(stderr, "uv_echo: %s: %s\n", what, strerror(-err));
	return 1;
}

int main(int argc, char **argv)
{
	struct sockaddr_in addr;
	struct sockaddr_storage bound;
	int len = sizeof(bound), port = 7000, i, err;

	for (i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--port") == 0)
			port = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--idle-ms") == 0)
			idle_ns = atoll(argv[i + 1]) * MS;
		else if (strcmp(argv[i], "--heartbeat-ms") == 0)
			heartbeat_ns = atoll(argv[i + 1]) * MS;
		else
			break;
	}
	if (i != argc || idle_ns <= 0 || heartbeat_ns <= 0 || port < 0 || port > 65535) {
		fprintf(stderr, "usage: uv_echo [--port P] [--idle-ms MS] [--heartbeat-ms MS]\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);       /* a write to a closed peer: EPIPE */
	if ((err = hrt_base_new(&base, CLOCK_MONOTONIC, 0)) < 0)
		return fail("hrt_base_new", err);
	if ((err = uv_loop_init(&loop)) < 0)
		return fail("uv_loop_init", err);
	uv_tcp_init(&loop, &server);
	uv_signal_init(&loop, &sigint);
	uv_signal_init(&loop, &sigterm);
	if ((err = uv_ip4_addr("127.0.0.1", port, &addr)) < 0 ||
	    (err = uv_tcp_bind(&server, (const struct sockaddr *)&addr, 0)) < 0 ||
	    (err = uv_listen((uv_stream_t *)&server, SOMAXCONN, on_connection)) < 0 ||
	    (err = uv_tcp_getsockname(&server, (struct sockaddr *)&bound, &len)) < 0 ||
	    (err = uv_signal_start(&sigint, on_signal, SIGINT)) < 0 ||
	    (err = uv_signal_start(&sigterm, on_signal, SIGTERM)) < 0 ||
	    (err = uv_plan_start(&plan, &loop, base)) < 0)
		return fail("starting", err);
	printf("port %d\n", ntohs(((struct sockaddr_in *)&bound)->sin_port));
	fflush(stdout);

	uv_run(&loop, UV_RUN_DEFAULT);  /* until stop(), or the glue's uv_stop */
	stop();                         /* after a uv_stop: close what is left */
	uv_run(&loop, UV_RUN_DEFAULT);  /* runs the closes: frees each conn */
	if (plan_err < 0)
		return fail("the plan", plan_err);
	if ((err = uv_loop_close(&loop)) < 0)
		return fail("uv_loop_close", err);
	if ((err = hrt_base_free(base)) < 0)    /* -EBUSY: a timer still queued */
		return fail("hrt_base_free", err);
	return 0;
}
