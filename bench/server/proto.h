/* SPDX-License-Identifier: MIT */
/*
 * bench/server/proto.h - what the benchmark servers and their client share:
 * the wire format, the timers' lengths and windows, and small helpers.
 *
 * The protocol.  Every message is MSG_SIZE bytes: a type byte, padding,
 * and a 64-bit stamp in the sender's byte order (one machine).  The client
 * sends MSG_REQUEST with its send time in the stamp; the server echoes the
 * message unchanged and re-arms the connection's idle timeout.  Every
 * HB_PERIOD the server sends MSG_HEARTBEAT (the stamp counts heartbeats of
 * that connection).  Both sides frame: bytes are echoed a whole message at
 * a time, so a heartbeat never lands inside an echoed request.
 *
 * Timers per connection (all four servers): an idle timeout of IDLE_NS,
 * re-armed on every request, that closes the connection, and a heartbeat
 * every HB_NS.  Where the timer has a window (hrt; sd-event's accuracy),
 * the idle timeout's is IDLE_WINDOW_NS and the heartbeat's HB_WINDOW_NS.
 *
 * A peer whose socket buffer is full (the kernel takes less than a whole
 * message) is closed as a slow consumer: no server queues output, so none
 * allocates per write.  On loopback with a client that reads all the time
 * this does not happen; the servers count it (closed_slow) if it does.
 */
#ifndef HRT_BENCH_SERVER_PROTO_H
#define HRT_BENCH_SERVER_PROTO_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define MSG_SIZE 16
#define MSG_REQUEST 'R'
#define MSG_HEARTBEAT 'H'

#define NS_PER_MS 1000000LL
#define NS_PER_S 1000000000LL

#define IDLE_NS (10 * NS_PER_S)
#define IDLE_WINDOW_NS (1 * NS_PER_S)
#define HB_NS (1 * NS_PER_S)
#define HB_WINDOW_NS (100 * NS_PER_MS)

/* One message, as it travels. */
struct msg {
	char type;
	char pad[7];
	uint64_t stamp;
};
_Static_assert(sizeof(struct msg) == MSG_SIZE, "struct msg is the wire format");

/* A connection's partial message: bytes come in any split; a whole
 * message is handled when its last byte arrives. */
struct framer {
	unsigned char buf[MSG_SIZE];
	size_t have;
};

/* CLOCK_MONOTONIC in ns (the clock every timer here runs on). */
static inline int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * NS_PER_S + ts.tv_nsec;
}

/* Calls fn(arg, msg) for each whole message in data[0..len), keeping a
 * trailing part in f.  Stops early, returning fn's negative result, when
 * fn returns < 0 (the connection was closed). */
static inline int framer_feed(struct framer *f, const unsigned char *data, size_t len,
			      int (*fn)(void *arg, const struct msg *m), void *arg)
{
	while (len > 0) {
		size_t take = MSG_SIZE - f->have;
		struct msg m;
		int r;

		if (take > len)
			take = len;
		memcpy(f->buf + f->have, data, take);
		f->have += take;
		data += take;
		len -= take;
		if (f->have < MSG_SIZE)
			break;
		f->have = 0;
		memcpy(&m, f->buf, sizeof(m));
		r = fn(arg, &m);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Raises the soft RLIMIT_NOFILE to at least want (the hard limit too, if
 * the process may); 0, or -errno with a line on stderr naming who and the
 * limits, so a run at 10,000 connections says why it cannot start. */
static inline int raise_nofile(const char *who, rlim_t want)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0) {
		fprintf(stderr, "%s: getrlimit(RLIMIT_NOFILE): %s\n", who, strerror(errno));
		return -errno;
	}
	if (rl.rlim_cur >= want)
		return 0;
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < want)
		rl.rlim_max = want;     /* root may raise it; others get EPERM */
	rl.rlim_cur = want;
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0) {
		int err = errno;

		getrlimit(RLIMIT_NOFILE, &rl);
		fprintf(stderr, "%s: cannot raise RLIMIT_NOFILE to %llu (soft %llu, hard %llu): %s\n",
			who, (unsigned long long)want, (unsigned long long)rl.rlim_cur,
			(unsigned long long)rl.rlim_max, strerror(err));
		return -err;
	}
	return 0;
}

/* The server's loop iterations, counted in a file both map (--iters FILE):
 * the server adds one per iteration of its loop with a plain store into
 * the shared page (no system call), the client reads it at the
 * measurement's edges.  write: the server's side, which creates the file.
 * The counter, or NULL with errno set. */
static inline volatile uint64_t *iters_map(const char *path, int write)
{
	int fd = open(path, write ? O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC : O_RDONLY | O_CLOEXEC,
		      0600);
	void *p;
	int err;

	if (fd < 0)
		return NULL;
	if (write && ftruncate(fd, sizeof(uint64_t)) < 0) {
		err = errno;
		close(fd);
		errno = err;
		return NULL;
	}
	p = mmap(NULL, sizeof(uint64_t), write ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED,
		 fd, 0);
	err = errno;
	close(fd);
	errno = err;
	return p == MAP_FAILED ? NULL : p;
}

#endif /* HRT_BENCH_SERVER_PROTO_H */
