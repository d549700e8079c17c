/* SPDX-License-Identifier: MIT */
/*
 * bench/server/handlers.h - what both servers do when a connection's timer
 * comes due or its message arrives, whatever the loop: a heartbeat is
 * sent, an idle timeout closes the connection, a request is echoed and
 * re-arms the idle timeout; anything else is a protocol error; and the
 * command line both take, the loop's iteration counter and the counts
 * both print at the end.  Included
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

/* The loop's iterations, one per iteration of the loop that polls (each
 * server says which hook counts them): in the file --iters names, which
 * the client reads (proto.h), else here. */
static uint64_t iters_own;
static volatile uint64_t *iters = &iters_own;

static int usage(void)
{
	fprintf(stderr, "usage: server-%s [--conns N] [--port P] [--iters FILE]\n", SERVER_NAME);
	return 2;
}

/* The command line both servers take: *port, RLIMIT_NOFILE raised for
 * --conns N, the counter mapped for --iters FILE.  0, 1 (the limit could
 * not be raised, or FILE not mapped: said) or 2 (usage). */
static int server_args(int argc, char **argv, int *port)
{
	const char *iters_path = NULL;
	long want = 0;
	int i;

	*port = 0;
	for (i = 1; i < argc; i++) {
		if (i + 1 < argc && strcmp(argv[i], "--conns") == 0)
			want = atol(argv[++i]);
		else if (i + 1 < argc && strcmp(argv[i], "--port") == 0)
			*port = atoi(argv[++i]);
		else if (i + 1 < argc && strcmp(argv[i], "--iters") == 0)
			iters_path = argv[++i];
		else
			return usage();
	}
	if (want < 0 || *port < 0 || *port > 65535)
		return usage();
	if (want > 0 && raise_nofile("server-" SERVER_NAME, (rlim_t)want + 64) < 0)
		return 1;
	if (iters_path && !(iters = iters_map(iters_path, 1))) {
		fprintf(stderr, "server-%s: --iters %s: %s\n", SERVER_NAME, iters_path,
			strerror(errno));
		return 1;
	}
	return 0;
}

/* The server's last line: its counts, the loop's iterations, hrt's. */
static void print_counts(void)
{
	printf("server=%s accepted=%llu closed_peer=%llu closed_idle=%llu closed_slow=%llu"
	       " closed_error=%llu closed_shutdown=%llu heartbeats=%llu requests=%llu"
	       " loop_iterations=%llu",
	       SERVER_NAME, count.accepted, count.closed_peer, count.closed_idle,
	       count.closed_slow, count.closed_error, count.closed_shutdown, count.heartbeats,
	       count.requests, (unsigned long long)*iters);
	tm_print_stats(stdout);
	printf("\n");
}

#endif /* HRT_BENCH_SERVER_HANDLERS_H */
