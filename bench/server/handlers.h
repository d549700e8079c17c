/* SPDX-License-Identifier: MIT */
/*
 * bench/server/handlers.h - what both servers do when a connection's timer
 * comes due or its message arrives, whatever the loop: a heartbeat is
 * sent, an idle timeout closes the connection, a request is echoed and
 * re-arms the idle timeout; anything else is a protocol error; and the
 * command line both take.  Included
 * by server_uv.c and server_sd.c after their struct conn, count, conn_of,
 * conn_send, conn_close and fail_err (err: a negative errno), which differ
 * by loop.
 */
#ifndef HRT_BENCH_SERVER_HANDLERS_H
#define HRT_BENCH_SERVER_HANDLERS_H

static int tm_heartbeat_due(struct conn_timers *tm)
{
	struct conn *c = conn_of(tm);
	struct msg m = { .type = MSG_HEARTBEAT, .stamp = ++c->hb_seq };

	if (conn_send(c, &m) < 0)
		return -1;
	count.heartbeats++;
	return 0;
}

static void tm_idle_due(struct conn_timers *tm)
{
	conn_close(conn_of(tm), &count.closed_idle);
}

/* A whole message from the peer. */
static int on_msg(void *arg, const struct msg *m)
{
	struct conn *c = arg;
	int err;

	if (m->type != MSG_REQUEST) {
		conn_close(c, &count.closed_error);
		return -1;
	}
	if (conn_send(c, m) < 0)
		return -1;
	count.requests++;
	err = tm_idle_again(&c->tm);
	if (err < 0) {
		fail_err("re-arming an idle timeout", err);
		conn_close(c, &count.closed_error);
		return -1;
	}
	return 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: server-%s [--conns N] [--port P]\n", SERVER_NAME);
	return 2;
}

/* The command line both servers take: *port, and RLIMIT_NOFILE raised for
 * --conns N.  0, 1 (the limit could not be raised: said) or 2 (usage). */
static int server_args(int argc, char **argv, int *port)
{
	long want = 0;
	int i;

	*port = 0;
	for (i = 1; i < argc; i++) {
		if (i + 1 < argc && strcmp(argv[i], "--conns") == 0)
			want = atol(argv[++i]);
		else if (i + 1 < argc && strcmp(argv[i], "--port") == 0)
			*port = atoi(argv[++i]);
		else
			return usage();
	}
	if (want < 0 || *port < 0 || *port > 65535)
		return usage();
	if (want > 0 && raise_nofile("server-" SERVER_NAME, (rlim_t)want + 64) < 0)
		return 1;
	return 0;
}

#endif /* HRT_BENCH_SERVER_HANDLERS_H */
