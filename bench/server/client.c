/* SPDX-License-Identifier: MIT */
/*
 * bench/server/client.c - the load and the measuring instrument of the
 * server benchmark (run.sh): one thread, epoll, the protocol of proto.h.
 *
 *   client --port P --conns N [--rate R] [--ramp S] [--warmup S]
 *          [--seconds S] [--drain S] [--pid PID] [--cpu C] [--iters FILE]
 *          [--lat-out FILE] [--perf-ctl FIFO --perf-ack FIFO]
 *
 * Phases, from its start t0:
 *   ramp     N connections to 127.0.0.1:P, evenly spread over S seconds
 *            (default 1), so the servers' heartbeats, which start at each
 *            accept, are spread over the second as a real server's are;
 *   warm-up  (default 2 s) the load runs, nothing is counted;
 *   measure  (--seconds, default 5) what the output reports;
 *   drain    up to --drain seconds (default 2) for echoes still out, then
 *            every connection is reset (SO_LINGER 0: no TIME_WAIT, so
 *            back-to-back rounds of 10,000 connections keep finding ports).
 * Load: --rate R requests per second from the end of the ramp to the end
 * of the measurement, request k at ramp_end + k / R on connection k mod N
 * (evenly spread over time and connections; the run's own clock slack is
 * 1 ns so they go out when scheduled); R = 0: none, the servers only send
 * heartbeats.  A request carries its send time; its latency is echo
 * received - sent, for requests sent during the measurement.
 * Heartbeat jitter: for each heartbeat that arrives during the
 * measurement, |its arrival - the connection's previous heartbeat's
 * arrival - 1 s|, so a window the server may use, and any lateness, show
 * as jitter; measured here, at the receiver, as a peer sees it.  Arrival
 * is the clock read when epoll returned that connection's event.
 *
 * With --pid, the server process is sampled at the measurement's start and
 * end (the window the client knows exactly): wake-ups = voluntary context
 * switches of all its threads (/proc/PID/task/TID/status; a thread that
 * blocks in epoll switches out voluntarily once per sleep, and each sleep
 * ends in a wake-up, so on a single-thread server that does no other
 * blocking call the two counts are equal), CPU = utime + stime
 * (/proc/PID/stat, USER_HZ ticks) and its run time in ns
 * (/proc/PID/task/TID/schedstat, exact); with --cpu C the local timer
 * interrupts of CPU C (/proc/interrupts, row LOC: every interrupt of that
 * CPU's timer, whoever armed it), "n/a" where the file cannot be read.
 * With --iters FILE (the file the server counts its loop iterations in:
 * proto.h), the iterations in the window too.  With --perf-ctl and
 * --perf-ack (the control and ack FIFOs of a `perf stat --control
 * fifo:CTL,ACK -D -1` attached to the server), the counting is enabled
 * just before the first sample and disabled just after the last, each
 * acknowledged before the client goes on: perf counts the window the
 * iterations were counted in (and the moments the commands take).
 * --lat-out FILE: every latency sample of the window, ns, one a line
 * (run.sh pools the rounds' samples).
 *
 * Output: one line of key=value (run.sh reads it); exit 0, or 1 with what
 * failed and where on stderr (a connection refused or reset during the
 * run is counted, not fatal: closed_by_server=), or 3 if the client itself
 * fell so far behind (a busy machine) that the measurement had ended
 * before it began.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "proto.h"
#include "../procstat.h"

struct cconn {
	int fd;                 /* -1: not connected, or closed */
	struct framer in;
	int64_t last_hb;        /* arrival of the previous heartbeat, 0: none */
	int hb_in_window;       /* heartbeats that arrived while measuring */
};

/* A growing array of samples (ns). */
struct samples {
	int64_t *v;
	size_t n, cap;
};

/* The server's counters at one instant. */
struct srv_sample {
	int64_t t;
	unsigned long long vcs, nvcs, ticks, run_ns;
	long long loc;          /* -1: unknown */
	unsigned long long iters;       /* the server's loop iterations */
};

static struct {
	int port, conns, pid, cpu;
	double rate, ramp, warmup, seconds, drain;
	const char *iters, *lat_out, *perf_ctl, *perf_ack;
} opt = { .cpu = -1, .ramp = 1, .warmup = 2, .seconds = 5, .drain = 2 };

static volatile uint64_t *srv_iters;    /* --iters: the server's counter */
static int perf_ctl = -1, perf_ack = -1;

static struct cconn *cc;
static int epfd = -1;
static struct samples lat, jit;
static unsigned long long connected, closed_by_server, sent, answered, sent_in_window,
	skipped;
static int measuring;
static int64_t t_meas0, t_meas1;

static void die(const char *what, int err)
{
	fprintf(stderr, "client: %s: %s\n", what, strerror(err));
	exit(1);
}

static void add_sample(struct samples *s, int64_t v)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 4096;
		int64_t *v2 = realloc(s->v, cap * sizeof(*v2));

		if (!v2)
			die("keeping samples", ENOMEM);
		s->v = v2;
		s->cap = cap;
	}
	s->v[s->n++] = v;
}

static int cmp64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* Nearest-rank percentile p (0-100) of the sorted samples, -1 if none. */
static int64_t pct(const struct samples *s, double p)
{
	size_t k;

	if (s->n == 0)
		return -1;
	k = (size_t)(p / 100.0 * (double)s->n + 0.999999);
	return s->v[k == 0 ? 0 : k - 1];
}

/* --- the server's counters from /proc ------------------------------------- */

static void sample_server(struct srv_sample *s)
{
	char path[64], buf[1024];
	FILE *f;

	memset(s, 0, sizeof(*s));
	s->t = mono_ns();
	s->iters = srv_iters ? *srv_iters : 0;
	s->loc = procstat_loc(opt.cpu);
	if (procstat_tasks(opt.pid, &s->vcs, &s->nvcs, &s->run_ns))
		die("reading the server's /proc/PID/task (is --pid right?)", errno);
	/* utime and stime: fields 14 and 15, counted after the ")" that ends
	 * the command name (which may hold spaces); the process's total. */
	snprintf(path, sizeof(path), "/proc/%d/stat", opt.pid);
	if ((f = fopen(path, "r"))) {
		size_t n = fread(buf, 1, sizeof(buf) - 1, f);
		char *p;
		unsigned long long ut, st;

		buf[n] = 0;
		p = strrchr(buf, ')');
		if (p && sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
				&ut, &st) == 2)
			s->ticks = ut + st;
		fclose(f);
	}
}

/* --- perf stat's control (--perf-ctl, --perf-ack) ------------------------- */

/* Opens both FIFOs without waiting for perf (O_RDWR never blocks on a
 * FIFO); perf reads the commands when it is ready. */
static void perf_open(void)
{
	if (!opt.perf_ctl)
		return;
	perf_ctl = open(opt.perf_ctl, O_RDWR | O_CLOEXEC);
	if (perf_ctl < 0)
		die(opt.perf_ctl, errno);
	perf_ack = open(opt.perf_ack, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (perf_ack < 0)
		die(opt.perf_ack, errno);
}

/* Sends "enable" or "disable" and waits (up to 20 s: perf opens one
 * event per system call first) for perf's "ack". */
static void perf_command(const char *cmd)
{
	char buf[64];
	size_t len = strlen(cmd), got = 0;
	struct pollfd p = { .fd = perf_ack, .events = POLLIN };

	if (perf_ctl < 0)
		return;
	if (write(perf_ctl, cmd, len) != (ssize_t)len || write(perf_ctl, "\n", 1) != 1)
		die("writing to perf's control FIFO", errno);
	while (got < 4) {
		ssize_t n;

		if (poll(&p, 1, 20000) != 1) {
			fprintf(stderr, "client: perf did not acknowledge \"%s\" within 20 s\n", cmd);
			exit(1);
		}
		n = read(perf_ack, buf + got, sizeof(buf) - 1 - got);
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			die("reading perf's ack FIFO", errno);
		if (n > 0)
			got += (size_t)n;
	}
	buf[got] = 0;
	if (strncmp(buf, "ack\n", 4) != 0) {
		fprintf(stderr, "client: perf answered \"%s\" to \"%s\"\n", buf, cmd);
		exit(1);
	}
}

/* --- connections ------------------------------------------------------------ */

static void conn_open(int i)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)opt.port) };
	struct epoll_event ev = { .events = EPOLLIN };
	int one = 1, fd;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		die("socket (RLIMIT_NOFILE?)", errno);
	/* Blocking: on loopback the handshake completes inside connect. */
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		char what[64];

		snprintf(what, sizeof(what), "connection %d to 127.0.0.1:%d", i, opt.port);
		die(what, errno);
	}
	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) < 0)
		die("TCP_NODELAY", errno);
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0)
		die("O_NONBLOCK", errno);
	ev.data.u32 = (uint32_t)i;
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
		die("epoll_ctl(ADD)", errno);
	cc[i].fd = fd;
	connected++;
}

/* Closes with a reset: no TIME_WAIT left behind. */
static void conn_reset(struct cconn *c)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };

	if (c->fd < 0)
		return;
	setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	close(c->fd);
	c->fd = -1;
}

static void send_request(int i)
{
	struct msg m = { .type = MSG_REQUEST };
	ssize_t n;

	if (cc[i].fd < 0) {
		skipped++;              /* closed by the server: counted there */
		return;
	}
	m.stamp = (uint64_t)mono_ns();
	n = send(cc[i].fd, &m, sizeof(m), MSG_NOSIGNAL);
	if (n != (ssize_t)sizeof(m)) {
		/* a full socket buffer here would break the framing: the
		 * server stopped reading, which the run must not hide */
		if (n < 0 && (errno == EPIPE || errno == ECONNRESET)) {
			skipped++;
			return;
		}
		die("sending a request", n < 0 ? errno : EAGAIN);
	}
	sent++;
	if (measuring)
		sent_in_window++;
}

/* Arrival time of the message being handled (set per event). */
static int64_t t_arrival;

static int on_msg(void *arg, const struct msg *m)
{
	struct cconn *c = arg;

	if (m->type == MSG_REQUEST) {
		int64_t s = (int64_t)m->stamp;

		answered++;
		if (s >= t_meas0 && s < t_meas1)
			add_sample(&lat, t_arrival - s);
	} else if (m->type == MSG_HEARTBEAT) {
		if (measuring) {
			if (c->last_hb) {
				int64_t d = t_arrival - c->last_hb - HB_NS;

				add_sample(&jit, d < 0 ? -d : d);
			}
			c->hb_in_window++;
		}
		c->last_hb = t_arrival;
	} else {
		fprintf(stderr, "client: a message of unknown type %d\n", m->type);
		exit(1);
	}
	return 0;
}

static void on_readable(struct cconn *c)
{
	unsigned char buf[4096];

	for (;;) {
		ssize_t n = recv(c->fd, buf, sizeof(buf), 0);

		if (n > 0) {
			framer_feed(&c->in, buf, (size_t)n, on_msg, c);
			continue;
		}
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n < 0 && errno != ECONNRESET)
			die("recv", errno);
		closed_by_server++;     /* EOF or reset: an idle timeout, a crash */
		close(c->fd);
		c->fd = -1;
		return;
	}
}

/* Waits for events until `until` (ns, CLOCK_MONOTONIC) and handles them. */
static void poll_until(int64_t until)
{
	struct epoll_event ev[256];
	int64_t d = until - mono_ns();
	struct timespec ts;
	int n, i;

	if (d < 0)
		d = 0;
	ts.tv_sec = d / NS_PER_S;
	ts.tv_nsec = d % NS_PER_S;
	n = epoll_pwait2(epfd, ev, 256, &ts, NULL);
	if (n < 0 && errno == ENOSYS)   /* before Linux 5.11: milliseconds */
		n = epoll_wait(epfd, ev, 256, (int)((d + NS_PER_MS - 1) / NS_PER_MS));
	if (n < 0) {
		if (errno == EINTR)
			return;
		die("epoll_pwait2", errno);
	}
	for (i = 0; i < n; i++) {
		struct cconn *c = &cc[ev[i].data.u32];

		t_arrival = mono_ns();
		if (c->fd >= 0)
			on_readable(c);
	}
}

/* --- the run ----------------------------------------------------------------- */

static double num(const char *s, const char *name)
{
	char *end;
	double v = strtod(s, &end);

	if (*s == 0 || *end != 0 || v < 0) {
		fprintf(stderr, "client: %s: not a number >= 0: %s\n", name, s);
		exit(2);
	}
	return v;
}

static void parse(int argc, char **argv)
{
	int i;

	for (i = 1; i + 1 < argc; i += 2) {
		const char *k = argv[i], *v = argv[i + 1];

		if (strcmp(k, "--port") == 0)
			opt.port = (int)num(v, k);
		else if (strcmp(k, "--conns") == 0)
			opt.conns = (int)num(v, k);
		else if (strcmp(k, "--rate") == 0)
			opt.rate = num(v, k);
		else if (strcmp(k, "--ramp") == 0)
			opt.ramp = num(v, k);
		else if (strcmp(k, "--warmup") == 0)
			opt.warmup = num(v, k);
		else if (strcmp(k, "--seconds") == 0)
			opt.seconds = num(v, k);
		else if (strcmp(k, "--drain") == 0)
			opt.drain = num(v, k);
		else if (strcmp(k, "--pid") == 0)
			opt.pid = (int)num(v, k);
		else if (strcmp(k, "--cpu") == 0)
			opt.cpu = (int)num(v, k);
		else if (strcmp(k, "--iters") == 0)
			opt.iters = v;
		else if (strcmp(k, "--lat-out") == 0)
			opt.lat_out = v;
		else if (strcmp(k, "--perf-ctl") == 0)
			opt.perf_ctl = v;
		else if (strcmp(k, "--perf-ack") == 0)
			opt.perf_ack = v;
		else
			break;
	}
	if (i != argc || opt.port <= 0 || opt.port > 65535 || opt.conns <= 0 || opt.seconds <= 0 ||
	    !opt.perf_ctl != !opt.perf_ack || ((opt.perf_ctl || opt.iters) && !opt.pid)) {
		fprintf(stderr, "usage: client --port P --conns N [--rate R] [--ramp S] [--warmup S]"
			" [--seconds S] [--drain S] [--pid PID] [--cpu C] [--iters FILE]"
			" [--lat-out FILE] [--perf-ctl FIFO --perf-ack FIFO]\n"
			"  (--iters and --perf-ctl need --pid; --perf-ctl needs --perf-ack)\n");
		exit(2);
	}
}

/* Every sample, ns, one a line. */
static void write_samples(const char *path, const struct samples *s)
{
	FILE *f = fopen(path, "w");
	size_t i;

	if (!f)
		die(path, errno);
	for (i = 0; i < s->n; i++)
		fprintf(f, "%lld\n", (long long)s->v[i]);
	if (fclose(f) != 0)
		die(path, errno);
}

static void print_ms(const char *key, int64_t ns)
{
	if (ns < 0)
		printf(" %s=n/a", key);
	else
		printf(" %s=%.3f", key, (double)ns / 1e6);
}

static void print_us(const char *key, int64_t ns)
{
	if (ns < 0)
		printf(" %s=n/a", key);
	else
		printf(" %s=%.1f", key, (double)ns / 1e3);
}

int main(int argc, char **argv)
{
	struct srv_sample s0, s1;
	int64_t t0, t_ramp, now, next, dt, t_late = 0;
	unsigned long long k = 0, hb_conns = 0;
	int i, next_conn = 0, behind;
	double secs;

	parse(argc, argv);
	if (raise_nofile("client", (rlim_t)opt.conns + 64) < 0)
		return 1;
	cc = calloc((size_t)opt.conns, sizeof(*cc));
	if (!cc)
		die("allocating connections", ENOMEM);
	for (i = 0; i < opt.conns; i++)
		cc[i].fd = -1;
	epfd = epoll_create1(EPOLL_CLOEXEC);
	if (epfd < 0)
		die("epoll_create1", errno);
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);  /* requests go out on time */
	if (opt.iters && !(srv_iters = iters_map(opt.iters, 0)))
		die(opt.iters, errno);
	perf_open();

	t0 = mono_ns();
	t_ramp = t0 + (int64_t)(opt.ramp * NS_PER_S);
	t_meas0 = t_ramp + (int64_t)(opt.warmup * NS_PER_S);
	t_meas1 = t_meas0 + (int64_t)(opt.seconds * NS_PER_S);
	dt = opt.rate > 0 ? (int64_t)(NS_PER_S / opt.rate) : 0;
	if (opt.rate > 0 && dt < 1)
		dt = 1;
	for (;;) {
		now = mono_ns();
		while (next_conn < opt.conns &&
		       t0 + (int64_t)((double)(t_ramp - t0) * next_conn / opt.conns) <= now)
			conn_open(next_conn++);
		if (!measuring && now >= t_meas0 && now < t_meas1) {
			perf_command("enable");
			if (opt.pid)
				sample_server(&s0);
			measuring = 1;
		}
		if (now >= t_meas1) {
			t_late = now;
			break;
		}
		while (dt && next_conn == opt.conns && t_ramp + (int64_t)k * dt <= now) {
			send_request((int)(k % (unsigned long long)opt.conns));
			k++;
		}
		next = measuring ? t_meas1 : t_meas0;
		if (next_conn < opt.conns) {
			int64_t c = t0 + (int64_t)((double)(t_ramp - t0) * next_conn / opt.conns);

			if (c < next)
				next = c;
		}
		if (dt && next_conn == opt.conns && t_ramp + (int64_t)k * dt < next)
			next = t_ramp + (int64_t)k * dt;
		poll_until(next);
	}
	/* Late by more than the whole measurement (a machine too busy for
	 * this client): nothing was measured (exit 3, after the resets). */
	behind = !measuring;
	if (opt.pid && !behind)
		sample_server(&s1);
	if (!behind)
		perf_command("disable");
	measuring = 0;
	for (i = 0; i < opt.conns; i++)
		hb_conns += cc[i].hb_in_window > 0;
	/* Echoes still on their way: wait for them, then reset everything. */
	next = t_meas1 + (int64_t)(opt.drain * NS_PER_S);
	while (answered < sent && mono_ns() < next)
		poll_until(next);
	for (i = 0; i < opt.conns; i++)
		conn_reset(&cc[i]);
	close(epfd);
	if (behind) {
		fprintf(stderr, "client: %.1f s behind its schedule, past the whole measurement:"
			" nothing measured\n", (double)(t_late - t_meas0) / 1e9);
		return 3;
	}

	if (lat.n)                      /* qsort(NULL, 0) is undefined */
		qsort(lat.v, lat.n, sizeof(*lat.v), cmp64);
	if (opt.lat_out)
		write_samples(opt.lat_out, &lat);
	if (jit.n)
		qsort(jit.v, jit.n, sizeof(*jit.v), cmp64);
	printf("conns=%d connected=%llu closed_by_server=%llu measure_s=%.3f rate=%.1f"
	       " req_sent=%llu req_answered=%llu req_lost=%llu req_skipped=%llu lat_n=%zu",
	       opt.conns, connected, closed_by_server, opt.seconds, opt.rate, sent, answered,
	       sent - answered, skipped, lat.n);
	print_us("lat_p50_us", pct(&lat, 50));
	print_us("lat_p99_us", pct(&lat, 99));
	print_us("lat_p999_us", pct(&lat, 99.9));
	printf(" hb_n=%zu hb_conns=%llu", jit.n, hb_conns);
	print_ms("hb_jit_p50_ms", pct(&jit, 50));
	print_ms("hb_jit_p99_ms", pct(&jit, 99));
	if (opt.pid) {
		secs = (double)(s1.t - s0.t) / 1e9;
		printf(" srv_s=%.3f srv_wakeups_per_s=%.1f srv_nvcs_per_s=%.1f srv_cpu_s=%.3f"
		       " srv_run_s=%.4f", secs, (double)(s1.vcs - s0.vcs) / secs,
		       (double)(s1.nvcs - s0.nvcs) / secs,
		       (double)(s1.ticks - s0.ticks) / (double)sysconf(_SC_CLK_TCK),
		       (double)(s1.run_ns - s0.run_ns) / 1e9);
		if (srv_iters)
			printf(" srv_iters=%llu srv_iters_per_s=%.1f", s1.iters - s0.iters,
			       (double)(s1.iters - s0.iters) / secs);
		if (s0.loc >= 0 && s1.loc >= 0)
			printf(" srv_cpu_loc_per_s=%.1f", (double)(s1.loc - s0.loc) / secs);
		else
			printf(" srv_cpu_loc_per_s=n/a");
	}
	printf("\n");
	free(cc);
	free(lat.v);
	free(jit.v);
	return 0;
}
