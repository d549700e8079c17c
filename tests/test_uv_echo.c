/* SPDX-License-Identifier: MIT */
/*
 * test_uv_echo.c - the client of examples/uv_echo.c (the libuv echo server
 * ported to hrt): each test starts the server with short timers
 * (--idle-ms, --heartbeat-ms), talks to it over 127.0.0.1 and stops it
 * with SIGTERM; the server must then exit 0, which it does only when every
 * connection was closed and freed and no timer was left queued
 * (hrt_base_free), and under ASan+UBSan only without a use after free (a
 * freed connection whose timer stayed queued) or a leak.
 *
 * The rules checked:
 *  - every message comes back, byte for byte, and heartbeats arrive;
 *  - a connection is never closed sooner than the idle timeout after the
 *    server's last read from it (so reads push the timeout back: without
 *    hrt_repeat_again a connection that keeps talking is closed early);
 *  - an idle connection is closed inside its window: never before the
 *    timeout (from the client's last send, or connect for one that never
 *    sent), and not later than its window's end plus LATE_MAX_MS (a stuck
 *    wake-up, not a busy machine's jitter: speed is not asserted here);
 *  - SIGTERM closes every connection, and the server exits 0.
 *
 * The server is $O/examples/uv_echo (O: the build directory, as make test
 * sets it), or HRT_UV_ECHO.  Without it (no libuv1-dev) the test skips by
 * name.
 *
 * Measuring, not testing (docs/PORTING.md's figures; never run by make
 * test):
 *   test_uv_echo --hold N [--seconds S]
 * runs bench-server's heartbeat rows' workload against the server with its
 * own timers (uv_echo's defaults: idle 10 s, heartbeat 1 s; HRT_UV_ECHO may
 * name a bench/server server, which takes the same --port 0): N
 * connections over 1 s, 2 s warm-up, S s measured (default 6, before the
 * idle timeouts), nothing sent; then prints the server's wake-ups a second
 * (its threads' voluntary context switches) and CPU % (utime+stime, and
 * the schedstat run time), as bench/server/client.c counts them.  The
 * client runs at nice +10 after starting the server at its own nice.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "unit.h"
#include "../bench/procstat.h"

#define NS_PER_MS 1000000LL
#define IDLE_MS 300             /* the short timers of the brief's run */
#define HEARTBEAT_MS 50
#define WINDOW_MS (IDLE_MS / 10) /* uv_echo's: a tenth of the delay */
#define LATE_MAX_MS 500         /* past the window: stuck, not jitter */
#define PEERS 20
#define LINE_MAX 128

struct peer {
	int fd;                         /* -1: closed by the server */
	char in[LINE_MAX];              /* the line being received */
	size_t have;
	char want[64];                  /* the echo awaited ("" none) */
	int echoes, heartbeats;
	int64_t t_from, t_to;           /* the server's last read: in [from, to] */
	int64_t t_eof;
};

static char server_path[512];
static pid_t server_pid = -1;
static int server_port;

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Starts uv_echo with these timers and reads the port it printed. */
static void server_start(int idle_ms, int heartbeat_ms)
{
	char idle[16], hb[16], line[64];
	int out[2];
	size_t have = 0;
	int64_t until = now_ns() + 10000 * NS_PER_MS;   /* ASan starts slowly */

	if (access(server_path, X_OK) != 0) {
		print_message("SKIP: uv_echo (install libuv1-dev)\n");
		skip();
	}
	snprintf(idle, sizeof(idle), "%d", idle_ms);
	snprintf(hb, sizeof(hb), "%d", heartbeat_ms);
	fflush(stdout);
	assert_int_equal(pipe(out), 0);
	server_pid = fork();
	assert_true(server_pid >= 0);
	if (server_pid == 0) {
		dup2(out[1], 1);
		close(out[0]);
		close(out[1]);
		if (idle_ms > 0)
			execl(server_path, server_path, "--port", "0", "--idle-ms", idle,
			      "--heartbeat-ms", hb, (char *)NULL);
		else            /* its own timers (--hold) */
			execl(server_path, server_path, "--port", "0", (char *)NULL);
		_exit(127);
	}
	close(out[1]);
	while (have < sizeof(line) - 1 && !memchr(line, '\n', have)) {
		struct pollfd p = { .fd = out[0], .events = POLLIN };
		ssize_t n;

		if (now_ns() > until || poll(&p, 1, 100) < 0)
			break;
		n = read(out[0], line + have, sizeof(line) - 1 - have);
		if (n <= 0 && !(n < 0 && errno == EINTR))
			break;
		have += n > 0 ? (size_t)n : 0;
	}
	close(out[0]);
	line[have] = '\0';
	if (sscanf(line, "port %d", &server_port) != 1)
		fail_msg("%s did not print its port (it printed \"%s\")", server_path, line);
}

/* SIGTERM; the exit status (-1: did not stop in 10 s, killed). */
static int server_stop(void)
{
	int64_t until = now_ns() + 10000 * NS_PER_MS;
	int status;
	pid_t pid = server_pid;

	server_pid = -1;
	kill(pid, SIGTERM);
	while (waitpid(pid, &status, WNOHANG) == 0) {
		if (now_ns() > until) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			return -1;
		}
		usleep(1000);
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void assert_server_exits_0(void)
{
	int st = server_stop();

	if (st != 0)
		fail_msg("uv_echo exited %d on SIGTERM, want 0 (every connection closed and freed,"
			 " no timer queued; 128+N: signal N, -1: did not stop)", st);
}

static int stop_after_failure(void **state)
{
	(void)state;
	if (server_pid > 0)
		server_stop();
	return 0;
}

static void peer_open(struct peer *p)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)server_port) };
	int one = 1;

	memset(p, 0, sizeof(*p));
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	p->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(p->fd >= 0);
	p->t_from = now_ns();           /* the accept, the first read: later */
	assert_int_equal(connect(p->fd, (struct sockaddr *)&a, sizeof(a)), 0);
	p->t_to = now_ns();
	assert_int_equal(setsockopt(p->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)), 0);
	assert_int_equal(fcntl(p->fd, F_SETFL, O_NONBLOCK), 0);
}

static void peer_close(struct peer *p)
{
	if (p->fd >= 0)
		close(p->fd);
	p->fd = -1;
}

/* One line; its echo is awaited.  The server's read of it comes after the
 * send, so the idle timeout starts again at t_from or later. */
static void peer_send(struct peer *p, int i, int k)
{
	size_t len;

	assert_true(p->fd >= 0);
	assert_string_equal(p->want, "");       /* one at a time */
	len = (size_t)snprintf(p->want, sizeof(p->want), "peer %d message %d", i, k);
	p->want[len] = '\n';
	p->t_from = now_ns();
	assert_int_equal(send(p->fd, p->want, len + 1, MSG_NOSIGNAL), (ssize_t)len + 1);
	p->want[len] = '\0';
}

static void peer_line(struct peer *p, const char *line)
{
	if (strcmp(line, "hb") == 0) {
		p->heartbeats++;
		return;
	}
	if (p->want[0] == '\0' || strcmp(line, p->want) != 0)
		fail_msg("got \"%s\", want the echo \"%s\"", line, p->want);
	p->want[0] = '\0';
	p->echoes++;
	p->t_to = now_ns();             /* the server had read it by now */
}

static void peer_readable(struct peer *p, int64_t t)
{
	char buf[512];
	ssize_t n, i;

	while ((n = recv(p->fd, buf, sizeof(buf), 0)) > 0) {
		for (i = 0; i < n; i++) {
			if (buf[i] != '\n') {
				assert_true(p->have < sizeof(p->in) - 1);
				p->in[p->have++] = buf[i];
				continue;
			}
			p->in[p->have] = '\0';
			p->have = 0;
			peer_line(p, p->in);
		}
	}
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n < 0 && errno != ECONNRESET)
		fail_msg("recv: %s", strerror(errno));
	p->t_eof = t;                   /* closed by the server */
	peer_close(p);
}

/* Reads every open peer until `until` (ns) or until done(peers) holds. */
static void pump(struct peer *ps, int n, int64_t until, int (*done)(struct peer *, int))
{
	struct pollfd pf[PEERS];
	int i, k, idx[PEERS];

	while (!(done && done(ps, n))) {
		int64_t left = until - now_ns();
		int64_t t;

		if (left <= 0)
			return;
		for (i = k = 0; i < n; i++) {
			if (ps[i].fd < 0)
				continue;
			pf[k].fd = ps[i].fd;
			pf[k].events = POLLIN;
			idx[k++] = i;
		}
		if (k == 0)
			return;
		if (poll(pf, (nfds_t)k, (int)((left + NS_PER_MS - 1) / NS_PER_MS)) < 0) {
			assert_int_equal(errno, EINTR);
			continue;
		}
		t = now_ns();
		for (i = 0; i < k; i++)
			if (pf[i].revents)
				peer_readable(&ps[idx[i]], t);
	}
}

static int echoes_back(struct peer *ps, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (ps[i].fd < 0 || ps[i].want[0])
			return 0;
	return 1;
}

static int all_closed(struct peer *ps, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (ps[i].fd >= 0)
			return 0;
	return 1;
}

/* A close by the server is never sooner than the idle timeout after its
 * last read of the connection, which came at t_from or later. */
static void assert_not_early(const struct peer *p, int i, int idle_ms)
{
	int64_t after = p->t_eof - p->t_from;

	if (after < idle_ms * NS_PER_MS)
		fail_msg("peer %d closed %.3f ms after its last send, before the idle timeout"
			 " of %d ms", i, after / 1e6, idle_ms);
}

static void test_every_message_echoed_and_heartbeats_arrive(void **state)
{
	struct peer ps[PEERS];
	int i, k, hb_min = -1;
	int64_t until;

	(void)state;
	server_start(5000, HEARTBEAT_MS);       /* no idle close in this test */
	for (i = 0; i < PEERS; i++)
		peer_open(&ps[i]);
	for (k = 0; k < 5; k++) {
		for (i = 0; i < PEERS; i++)
			peer_send(&ps[i], i, k);
		pump(ps, PEERS, now_ns() + 4000 * NS_PER_MS, echoes_back);
		for (i = 0; i < PEERS; i++)
			if (ps[i].fd < 0 || ps[i].want[0])
				fail_msg("peer %d: no echo of \"%s\" in 4 s%s", i, ps[i].want,
					 ps[i].fd < 0 ? " (closed by the server)" : "");
	}
	/* three heartbeat periods or more, counted on every connection */
	until = now_ns() + 4000 * NS_PER_MS;
	for (;;) {
		pump(ps, PEERS, now_ns() + HEARTBEAT_MS * NS_PER_MS, NULL);
		for (i = 0, hb_min = -1; i < PEERS; i++)
			if (hb_min < 0 || ps[i].heartbeats < hb_min)
				hb_min = ps[i].heartbeats;
		if (hb_min >= 3 || now_ns() > until)
			break;
	}
	for (i = 0; i < PEERS; i++) {
		assert_int_equal(ps[i].echoes, 5);
		assert_true(ps[i].fd >= 0);
		if (ps[i].heartbeats < 3)
			fail_msg("peer %d: %d heartbeats in 4 s, every %d ms wanted", i,
				 ps[i].heartbeats, HEARTBEAT_MS);
		peer_close(&ps[i]);
	}
	print_message("%d peers: 5 echoes each, >= %d heartbeats each\n", PEERS, hb_min);
	assert_server_exits_0();
}

/* Sends every IDLE_MS / 4 for four idle timeouts: the connections stay
 * open as long as the reads push the timeout back.  A close that comes
 * anyway (a client stalled for longer than the timeout on a busy machine
 * is closed, rightly) must still not be early. */
static void test_reads_push_the_idle_timeout_back(void **state)
{
	struct peer ps[PEERS];
	int i, k, open = 0;

	(void)state;
	server_start(IDLE_MS, HEARTBEAT_MS);
	for (i = 0; i < PEERS; i++)
		peer_open(&ps[i]);
	for (k = 0; k < 16; k++) {
		for (i = 0; i < PEERS; i++)
			if (ps[i].fd >= 0 && !ps[i].want[0])
				peer_send(&ps[i], i, k);
		pump(ps, PEERS, now_ns() + IDLE_MS / 4 * NS_PER_MS, NULL);
	}
	for (i = 0; i < PEERS; i++) {
		if (ps[i].fd < 0)
			assert_not_early(&ps[i], i, IDLE_MS);
		else
			open++;
		peer_close(&ps[i]);
	}
	print_message("%d of %d peers open after %d ms of a send every %d ms (idle %d ms)\n",
		      open, PEERS, 16 * IDLE_MS / 4, IDLE_MS / 4, IDLE_MS);
	assert_server_exits_0();
}

/* Half the peers send one line and go quiet, half never send: each must
 * be closed inside [timeout, timeout + window] from the server's last
 * read (or its accept), as the client sees it: never before the timeout
 * from its last send (or its connect), and not past the window's end plus
 * LATE_MAX_MS from the echo (or connect's return). */
static void test_idle_connection_closed_inside_its_window_never_early(void **state)
{
	struct peer ps[PEERS];
	int64_t late_max = INT64_MIN;
	int i;

	(void)state;
	server_start(IDLE_MS, HEARTBEAT_MS);
	for (i = 0; i < PEERS; i++)
		peer_open(&ps[i]);
	for (i = 0; i < PEERS; i += 2)
		peer_send(&ps[i], i, 0);
	pump(ps, PEERS, now_ns() + 4 * (IDLE_MS + LATE_MAX_MS) * NS_PER_MS, all_closed);
	for (i = 0; i < PEERS; i++) {
		int64_t late;

		if (ps[i].fd >= 0)
			fail_msg("peer %d: still open %d ms after it went idle (timeout %d ms)", i,
				 4 * (IDLE_MS + LATE_MAX_MS), IDLE_MS);
		if (i % 2 == 0)
			assert_int_equal(ps[i].echoes, 1);
		assert_not_early(&ps[i], i, IDLE_MS);
		late = ps[i].t_eof - ps[i].t_to - (IDLE_MS + WINDOW_MS) * NS_PER_MS;
		if (late > LATE_MAX_MS * NS_PER_MS)
			fail_msg("peer %d closed %.1f ms past its window's end (idle %d ms, window"
				 " %d ms): a stuck wake-up", i, late / 1e6, IDLE_MS, WINDOW_MS);
		if (late > late_max)
			late_max = late;
	}
	print_message("%d idle peers closed, none early; latest %.3f ms %s the window's end\n",
		      PEERS, (late_max < 0 ? -late_max : late_max) / 1e6,
		      late_max < 0 ? "before" : "after");
	assert_server_exits_0();
}

/* SIGTERM with connections open, some of them with an echo in flight. */
static void test_sigterm_closes_and_frees_every_connection(void **state)
{
	struct peer ps[PEERS];
	int i, st;

	(void)state;
	server_start(5000, HEARTBEAT_MS);
	for (i = 0; i < PEERS; i++)
		peer_open(&ps[i]);
	pump(ps, PEERS, now_ns() + 2 * HEARTBEAT_MS * NS_PER_MS, NULL);
	for (i = 0; i < PEERS; i += 3)
		peer_send(&ps[i], i, 0);
	st = server_stop();
	if (st != 0)
		fail_msg("uv_echo exited %d on SIGTERM with %d connections open, want 0", st, PEERS);
	pump(ps, PEERS, now_ns() + 4000 * NS_PER_MS, all_closed);
	for (i = 0; i < PEERS; i++)
		if (ps[i].fd >= 0)
			fail_msg("peer %d: still open after the server exited", i);
}

/* The server's voluntary context switches, run time (ns) and utime+stime
 * (ticks). */
static void sample(unsigned long long *vcs, unsigned long long *run, unsigned long long *ticks)
{
	char path[64], buf[1024], *p;
	unsigned long long ut = 0, st = 0;
	FILE *f;

	*vcs = *run = 0;
	procstat_tasks(server_pid, vcs, NULL, run);
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)server_pid);
	f = fopen(path, "r");
	if (f && fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')))
		/* after the name: state ppid pgrp session tty tpgid flags minflt
		 * cminflt majflt cmajflt utime stime */
		sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st);
	if (f)
		fclose(f);
	*ticks = ut + st;
}

static int hold(int n, double seconds)
{
	struct peer *ps = calloc((size_t)n, sizeof(*ps));
	unsigned long long v0, r0, t0, v1, r1, t1;
	double hz = (double)sysconf(_SC_CLK_TCK);
	int64_t start, m0, m1;
	int i, closed = 0;

	if (!ps || access(server_path, X_OK) != 0) {
		fprintf(stderr, "test_uv_echo --hold: no %s\n", server_path);
		return 1;
	}
	server_start(0, 0);
	if (setpriority(PRIO_PROCESS, 0, 10) < 0)
		perror("test_uv_echo --hold: nice +10");
	start = now_ns();
	for (i = 0; i < n; i++) {       /* spread over 1 s, as bench-server's ramp */
		int64_t at = start + (int64_t)i * 1000 * NS_PER_MS / n, d = at - now_ns();

		if (d > 0)
			usleep((useconds_t)(d / 1000));
		peer_open(&ps[i]);
	}
	m0 = start + 3000 * NS_PER_MS;  /* 1 s ramp, 2 s warm-up */
	while (now_ns() < m0)
		usleep(10000);
	sample(&v0, &r0, &t0);
	m1 = now_ns() + (int64_t)(seconds * 1e9);
	while (now_ns() < m1)
		usleep(10000);
	sample(&v1, &r1, &t1);
	seconds = (double)(now_ns() - m0) / 1e9;
	for (i = 0; i < n; i++) {       /* the heartbeats read now: closed? */
		char buf[4096];
		ssize_t r;

		while ((r = recv(ps[i].fd, buf, sizeof(buf), 0)) > 0)
			;
		closed += r == 0;
		peer_close(&ps[i]);
	}
	printf("server=%s conns=%d seconds=%.2f wakeups_per_s=%.1f cpu_pct=%.2f run_pct=%.2f"
	       " closed_early=%d exit=%d\n", server_path, n, seconds, (v1 - v0) / seconds,
	       100.0 * (double)(t1 - t0) / hz / seconds, 100.0 * (double)(r1 - r0) / 1e9 / seconds,
	       closed, server_stop());
	free(ps);
	return closed != 0;
}

int main(int argc, char **argv)
{
	const char *o = getenv("O"), *path = getenv("HRT_UV_ECHO");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_every_message_echoed_and_heartbeats_arrive,
					  stop_after_failure),
		cmocka_unit_test_teardown(test_reads_push_the_idle_timeout_back, stop_after_failure),
		cmocka_unit_test_teardown(test_idle_connection_closed_inside_its_window_never_early,
					  stop_after_failure),
		cmocka_unit_test_teardown(test_sigterm_closes_and_frees_every_connection,
					  stop_after_failure),
	};

	if (path)
		snprintf(server_path, sizeof(server_path), "%s", path);
	else
		snprintf(server_path, sizeof(server_path), "%s/examples/uv_echo", o ? o : "build");
	signal(SIGPIPE, SIG_IGN);
	if (argc >= 3 && strcmp(argv[1], "--hold") == 0)
		return hold(atoi(argv[2]), argc >= 5 && strcmp(argv[3], "--seconds") == 0 ?
			    atof(argv[4]) : 6);
	if (argc > 1) {
		fprintf(stderr, "usage: test_uv_echo [--hold N [--seconds S]]\n");
		return 2;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
