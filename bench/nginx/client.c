/* SPDX-License-Identifier: MIT */
/*
 * bench/nginx/client.c - the load and the instrument of `make bench-nginx`
 * (run.sh): HTTP/1.1 keep-alive connections to an nginx on 127.0.0.1, one
 * thread, epoll.
 *
 *   nginx-client --port P --conns N --path /F [--rate R] [--ramp S]
 *                [--measure-at S] [--seconds S] [--pid PID] [--cpu C]
 *
 * From its start t0: N connections evenly over --ramp S seconds, each
 * sending one GET for F and reading the answer, then idle (nginx's
 * keep-alive timer now runs on each).  --rate R > 0: from the end of the
 * ramp, request k at ramp_end + k / R on connection k mod N (one in
 * flight per connection: a request due on a busy one is counted skipped);
 * its latency is answer complete - sent, for those sent while measuring.
 * The measurement is [t0 + --measure-at, + --seconds] (default: from the
 * end of the ramp); with --pid the server process is sampled at both ends
 * from /proc: wake-ups (voluntary context switches of its threads: one per
 * sleep of a single-thread server), CPU (its threads' run time, schedstat,
 * ns), and with --cpu the local timer interrupts of CPU C (/proc/interrupts,
 * LOC).  A connection the server closes is counted (closed=); idle rounds
 * measure across the keep-alive timeouts, which close them all.
 * Output: one line of key=value.  Exit 0, 1 with what failed, 2 for usage.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../procstat.h"

#define NS_PER_S 1000000000LL

struct conn {
	int fd;                 /* -1: closed */
	int64_t sent;           /* the request in flight: its send time, 0: none */
	size_t have;            /* bytes of the answer read */
	size_t need;            /* its whole length, 0: headers not complete */
	char buf[1024];
};

static struct {
	int port, conns, pid, cpu;
	double rate, ramp, measure_at, seconds;
	const char *path;
} opt = { .cpu = -1, .ramp = 1, .measure_at = -1, .seconds = 5 };

static struct conn *cs;
static int ep;
static int64_t *lat;
static size_t nlat, caplat;
static unsigned long long closed, answered, sent, skipped;
static int64_t m0, m1;          /* the measurement */
static char req[256];
static size_t reqlen;

static void die(const char *what, int err)
{
	fprintf(stderr, "nginx-client: %s: %s\n", what, strerror(err));
	exit(1);
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * NS_PER_S + ts.tv_nsec;
}

/* --- the server's counters ------------------------------------------------- */

struct sample {
	int64_t t;
	unsigned long long vcs, run_ns;
	long long loc;
};

static void sample(struct sample *s)
{
	memset(s, 0, sizeof(*s));
	s->t = now_ns();
	s->loc = procstat_loc(opt.cpu);
	if (procstat_tasks(opt.pid, &s->vcs, NULL, &s->run_ns))
		die("reading the server's /proc/PID/task (--pid)", errno);
}

/* --- HTTP ---------------------------------------------------------------------- */

static void send_req(int i)
{
	struct conn *c = &cs[i];
	ssize_t n;

	if (c->fd < 0 || c->sent) {
		skipped++;
		return;
	}
	c->sent = now_ns();
	n = send(c->fd, req, reqlen, MSG_NOSIGNAL);
	if (n != (ssize_t)reqlen)
		die("sending a request", n < 0 ? errno : EAGAIN);
	sent++;
}

static void conn_open(int i)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)opt.port) };
	struct epoll_event ev = { .events = EPOLLIN };
	int one = 1, fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0)
		die("socket (RLIMIT_NOFILE?)", errno);
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
		die("connecting to 127.0.0.1", errno);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0)
		die("O_NONBLOCK", errno);
	ev.data.u32 = (uint32_t)i;
	if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0)
		die("epoll_ctl", errno);
	cs[i].fd = fd;
	send_req(i);
}

/* The answer's length once its headers are in, 0 before. */
static size_t answer_len(const struct conn *c)
{
	const char *end = memmem(c->buf, c->have, "\r\n\r\n", 4), *cl;

	if (!end)
		return 0;
	cl = memmem(c->buf, (size_t)(end - c->buf), "Content-Length: ", 16);
	if (!cl) {
		fprintf(stderr, "nginx-client: an answer without Content-Length:\n%.*s\n",
			(int)c->have, c->buf);
		exit(1);
	}
	return (size_t)(end - c->buf) + 4 + strtoul(cl + 16, NULL, 10);
}

static void on_readable(struct conn *c)
{
	for (;;) {
		ssize_t n = recv(c->fd, c->buf + c->have, sizeof(c->buf) - c->have, 0);

		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n <= 0) {           /* the keep-alive timeout, or a reset */
			closed++;
			close(c->fd);
			c->fd = -1;
			return;
		}
		c->have += (size_t)n;
		if (!c->need)
			c->need = answer_len(c);
		if (c->need > sizeof(c->buf))
			die("an answer longer than the buffer (use a small file)", EMSGSIZE);
		if (c->need && c->have >= c->need) {
			int64_t t = now_ns();

			if (c->have > c->need)
				die("more than one answer", EPROTO);
			if (c->sent >= m0 && c->sent < m1) {
				if (nlat == caplat) {
					caplat = caplat ? caplat * 2 : 65536;
					if (!(lat = realloc(lat, caplat * sizeof(*lat))))
						die("keeping samples", ENOMEM);
				}
				lat[nlat++] = t - c->sent;
			}
			answered++;
			c->sent = 0;
			c->have = c->need = 0;
		}
	}
}

static void poll_until(int64_t until)
{
	struct epoll_event ev[256];
	int64_t d = until - now_ns();
	struct timespec ts;
	int n, i;

	if (d < 0)
		d = 0;
	ts.tv_sec = d / NS_PER_S;
	ts.tv_nsec = d % NS_PER_S;
	n = epoll_pwait2(ep, ev, 256, &ts, NULL);
	if (n < 0 && errno != EINTR)
		die("epoll_pwait2", errno);
	for (i = 0; i < n; i++)
		if (cs[ev[i].data.u32].fd >= 0)
			on_readable(&cs[ev[i].data.u32]);
}

/* --- the run ------------------------------------------------------------------- */

static int cmp64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

static double pct_us(double p)
{
	size_t k = (size_t)(p / 100.0 * (double)nlat + 0.999999);

	return nlat ? (double)lat[k == 0 ? 0 : k - 1] / 1e3 : -1;
}

static void usage(void)
{
	fprintf(stderr, "usage: nginx-client --port P --conns N --path /F [--rate R] [--ramp S]"
		" [--measure-at S] [--seconds S] [--pid PID] [--cpu C]\n");
	exit(2);
}

static double num(const char *k, const char *s)
{
	char *end;
	double v = strtod(s, &end);

	if (*s == 0 || *end != 0 || v < 0) {
		fprintf(stderr, "nginx-client: %s: not a number >= 0: %s\n", k, s);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	struct sample s0, s1;
	struct rlimit rl;
	int64_t t0, t_ramp, dt = 0, next, now;
	unsigned long long k = 0;
	int i, opened = 0, measuring = 0;

	for (i = 1; i + 1 < argc; i += 2) {
		const char *key = argv[i], *v = argv[i + 1];

		if (!strcmp(key, "--path"))
			opt.path = v;
		else if (!strcmp(key, "--port"))
			opt.port = (int)num(key, v);
		else if (!strcmp(key, "--conns"))
			opt.conns = (int)num(key, v);
		else if (!strcmp(key, "--rate"))
			opt.rate = num(key, v);
		else if (!strcmp(key, "--ramp"))
			opt.ramp = num(key, v);
		else if (!strcmp(key, "--measure-at"))
			opt.measure_at = num(key, v);
		else if (!strcmp(key, "--seconds"))
			opt.seconds = num(key, v);
		else if (!strcmp(key, "--pid"))
			opt.pid = (int)num(key, v);
		else if (!strcmp(key, "--cpu"))
			opt.cpu = (int)num(key, v);
		else
			usage();
	}
	if (i != argc || opt.port <= 0 || opt.port > 65535 || opt.conns <= 0 || !opt.path ||
	    opt.path[0] != '/' || strlen(opt.path) > 100 || opt.seconds <= 0)
		usage();
	reqlen = (size_t)snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: localhost\r\n\r\n",
				  opt.path);
	rl.rlim_cur = rl.rlim_max = (rlim_t)opt.conns + 64;
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0 && (getrlimit(RLIMIT_NOFILE, &rl) < 0 ||
						  rl.rlim_cur < (rlim_t)opt.conns + 64))
		die("raising RLIMIT_NOFILE for the connections", errno);
	if (!(cs = calloc((size_t)opt.conns, sizeof(*cs))))
		die("allocating connections", ENOMEM);
	if ((ep = epoll_create1(EPOLL_CLOEXEC)) < 0)
		die("epoll_create1", errno);
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);  /* requests leave on time */

	t0 = now_ns();
	t_ramp = t0 + (int64_t)(opt.ramp * NS_PER_S);
	m0 = opt.measure_at >= 0 ? t0 + (int64_t)(opt.measure_at * NS_PER_S) : t_ramp;
	m1 = m0 + (int64_t)(opt.seconds * NS_PER_S);
	if (opt.rate > 0)
		dt = (int64_t)(NS_PER_S / opt.rate) > 0 ? (int64_t)(NS_PER_S / opt.rate) : 1;
	for (;;) {
		now = now_ns();
		while (opened < opt.conns && t0 + (int64_t)((double)(t_ramp - t0) * opened / opt.conns) <= now)
			conn_open(opened++);
		if (!measuring && now >= m0) {
			if (opt.pid)
				sample(&s0);
			measuring = 1;
		}
		if (now >= m1)
			break;
		while (dt && opened == opt.conns && t_ramp + (int64_t)k * dt <= now) {
			send_req((int)(k % (unsigned long long)opt.conns));
			k++;
		}
		next = measuring ? m1 : m0;
		if (opened < opt.conns) {
			int64_t c = t0 + (int64_t)((double)(t_ramp - t0) * opened / opt.conns);

			next = c < next ? c : next;
		}
		if (dt && opened == opt.conns && t_ramp + (int64_t)k * dt < next)
			next = t_ramp + (int64_t)k * dt;
		poll_until(next);
	}
	if (opt.pid)
		sample(&s1);
	if (nlat)
		qsort(lat, nlat, sizeof(*lat), cmp64);
	printf("conns=%d rate=%.0f sent=%llu answered=%llu skipped=%llu closed=%llu lat_n=%zu"
	       " lat_p50_us=%.1f lat_p99_us=%.1f lat_p999_us=%.1f",
	       opt.conns, opt.rate, sent, answered, skipped, closed, nlat, pct_us(50), pct_us(99),
	       pct_us(99.9));
	if (opt.pid) {
		double secs = (double)(s1.t - s0.t) / 1e9;

		printf(" srv_s=%.3f srv_wakeups_per_s=%.1f srv_cpu=%.5f", secs,
		       (double)(s1.vcs - s0.vcs) / secs, (double)(s1.run_ns - s0.run_ns) / 1e9 / secs);
		if (s0.loc >= 0 && s1.loc >= 0)
			printf(" srv_cpu_loc_per_s=%.1f", (double)(s1.loc - s0.loc) / secs);
		else
			printf(" srv_cpu_loc_per_s=n/a");
	}
	printf("\n");
	for (i = 0; i < opt.conns; i++)
		if (cs[i].fd >= 0) {
			struct linger lg = { .l_onoff = 1, .l_linger = 0 };

			setsockopt(cs[i].fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
			close(cs[i].fd);
		}
	free(cs);
	free(lat);
	return 0;
}
