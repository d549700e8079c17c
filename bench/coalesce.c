/* SPDX-License-Identifier: MIT */
/*
 * bench/coalesce.c - does the kernel coalesce hrt's wake-ups?
 *
 * On one CPU: a background child sleeping exactly (clock_nanosleep
 * TIMER_ABSTIME, thread slack 1 ns) at BG Hz, and an hrt_base_loop thread
 * whose N range timers re-arm themselves (soft 2-8 ms ahead, 2 ms range).
 * Timer interrupts on that CPU are counted with perf_event_open on the
 * irq_vectors:local_timer_entry tracepoint (no perf binary needed).  For
 * coalesce off and on: extra interrupts per hrt wake-up = (interrupts with
 * both - interrupts of the background alone) / hrt wake-ups, and callbacks
 * run past their hard expiry.  Also hrt alone (no background): wake-ups
 * on against off.  Prints SKIP and exits 0 if the counter is unavailable.
 *
 *   bench/coalesce [--full] [--seconds S] [--cpu C] [--uv]
 * default: N = 1, BG = 1 kHz, 1 s per run; --full: N = 1, 100, 10000 and
 * BG = 1000, 250, 100 Hz.  --uv (built with libuv only): the host is a
 * libuv loop instead of hrt_base_loop - a uv_poll_t on hrt_base_fd, and
 * with coalescing examples/uv_coalesce.h's ranged path; its wake-ups
 * column counts passes (a coalesced wake-up is a pass, not a timerfd read).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hrt.h"
#ifdef HRT_BENCH_UV
#include "../examples/uv_coalesce.h"
#endif

#define MS 1000000LL
#define SEC 1000000000LL

static int cpu;
static double seconds = 1.0;
static int use_uv;

static void pin(int c)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(c, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static long tracepoint_id(void)
{
	const char *p = "/sys/kernel/tracing/events/irq_vectors/local_timer_entry/id";
	long id = -1;
	FILE *f = fopen(p, "r");

	if (!f) {       /* tracefs not mounted yet: try (root only) */
		mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL);
		f = fopen(p, "r");
	}
	if (f) {
		if (fscanf(f, "%ld", &id) != 1)
			id = -1;
		fclose(f);
	}
	return id;
}

static int counter_open(long id)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_TRACEPOINT;
	a.config = (unsigned long long)id;
	a.disabled = 1;
	return (int)syscall(SYS_perf_event_open, &a, -1, cpu, -1, 0);
}

static long long count_read(int fd)
{
	long long v = 0;

	if (read(fd, &v, sizeof(v)) != sizeof(v))
		return -1;
	return v;
}

/* The background: exact periodic sleeps until killed. */
static pid_t background(int hz)
{
	pid_t p = fork();

	if (p == 0) {
		struct timespec t;
		long period = (long)(SEC / hz);

		pin(cpu);
		prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
		clock_gettime(CLOCK_MONOTONIC, &t);
		for (;;) {
			t.tv_nsec += period;
			while (t.tv_nsec >= SEC) {
				t.tv_nsec -= SEC;
				t.tv_sec++;
			}
			clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL);
		}
	}
	return p;
}

struct job {
	struct hrt_base *b;
	struct hrt_timer *ts;
	struct hrt_timer stop;
	int n, coalesce;
	unsigned seed;
	long late, fired;
	struct hrt_stats st;
};

static struct job *job;

static enum hrt_restart rearm(struct hrt_timer *t, hrt_time_t now)
{
	hrt_time_t hard;

	if (hrt_timer_get_hard(t, &hard) == 0 && now > hard)
		job->late++;
	job->fired++;
	hrt_timer_start_range(t, job->b, 2 * MS + (hrt_time_t)(rand_r(&job->seed) % (6 * MS)),
			      2 * MS, HRT_MODE_REL);
	return HRT_NORESTART;
}

#ifdef HRT_BENCH_UV
static uv_loop_t *uv_host;
static struct uv_coalesce uv_co;
static int uv_readable;

static void uv_on_fd(uv_poll_t *h, int status, int events)
{
	(void)h, (void)status, (void)events;
	uv_readable = 1;
}

/* As examples/uv_timers.c: dispatch on the fd, or a pass once the ranged
 * sleep's window opened; nothing else runs here, so idle. */
static void uv_on_check(uv_check_t *h)
{
	hrt_time_t now;

	(void)h;
	if (uv_readable) {
		uv_readable = 0;
		hrt_base_dispatch(job->b, 1);
	} else if (hrt_base_now(job->b, &now) == 0 && uv_coalesce_due(&uv_co, now)) {
		hrt_base_run(job->b, now, 1);
	}
}

static void uv_close_one(uv_handle_t *h, void *arg)
{
	(void)arg;
	if (!uv_is_closing(h))
		uv_close(h, NULL);
}

static void uv_host_loop(struct hrt_base *b)
{
	uv_loop_t loop;
	uv_poll_t poll;
	uv_check_t check;

	uv_loop_init(&loop);
	uv_host = &loop;
	uv_readable = 0;
	uv_poll_init(&loop, &poll, hrt_base_fd(b));
	uv_poll_start(&poll, UV_READABLE, uv_on_fd);
	uv_check_init(&loop, &check);
	uv_check_start(&check, uv_on_check);
	uv_coalesce_init(&uv_co, &loop, b);
	uv_run(&loop, UV_RUN_DEFAULT);          /* until stop() */
	uv_coalesce_done(&uv_co);
	uv_walk(&loop, uv_close_one, NULL);
	uv_run(&loop, UV_RUN_DEFAULT);
	uv_loop_close(&loop);
	uv_host = NULL;
}
#endif

static enum hrt_restart stop(struct hrt_timer *t, hrt_time_t now)
{
	(void)t;
	(void)now;
#ifdef HRT_BENCH_UV
	if (uv_host) {
		uv_stop(uv_host);
		return HRT_NORESTART;
	}
#endif
	hrt_base_stop(job->b);
	return HRT_NORESTART;
}

static void *hrt_main(void *arg)
{
	struct job *j = arg;
	int i;

	pin(cpu);
	if (hrt_base_new(&j->b, CLOCK_MONOTONIC, HRT_BASE_ENV)) {
		fprintf(stderr, "coalesce: hrt_base_new failed\n");
		exit(1);
	}
	hrt_base_set_coalesce(j->b, j->coalesce);
	for (i = 0; i < j->n; i++) {
		hrt_timer_init(&j->ts[i], rearm);
		hrt_timer_start_range(&j->ts[i], j->b,
				      2 * MS + (hrt_time_t)(rand_r(&j->seed) % (6 * MS)),
				      2 * MS, HRT_MODE_REL);
	}
	hrt_timer_init(&j->stop, stop);
	hrt_timer_start_range(&j->stop, j->b, (hrt_time_t)(seconds * SEC), 0, HRT_MODE_REL);
	hrt_base_reset_stats(j->b);
#ifdef HRT_BENCH_UV
	if (use_uv)
		uv_host_loop(j->b);
	else
#endif
		hrt_base_loop(j->b);
	hrt_base_get_stats(j->b, &j->st, sizeof(j->st));
	if (use_uv)
		j->st.wakeups = j->st.passes;
	for (i = 0; i < j->n; i++)
		hrt_timer_cancel(&j->ts[i]);
	hrt_base_free(j->b);
	return NULL;
}

/* Interrupts on the CPU during one run: the background (if hz) and, if n,
 * the hrt loop for `seconds`; else just the background for as long. */
static long long run(int fd, int hz, int n, int co, struct job *j)
{
	struct timespec d = { (time_t)seconds, (long)((seconds - (long)seconds) * SEC) };
	pid_t bg = hz ? background(hz) : 0;
	long long c;
	pthread_t th;

	nanosleep(&(struct timespec){ 0, 100 * MS }, NULL);    /* settle */
	ioctl(fd, PERF_EVENT_IOC_RESET, 0);
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	if (n) {
		memset(j, 0, sizeof(*j));
		j->n = n;
		j->coalesce = co;
		j->seed = 12345;
		j->ts = calloc((size_t)n, sizeof(*j->ts));
		job = j;
		pthread_create(&th, NULL, hrt_main, j);
		pthread_join(th, NULL);
		free(j->ts);
	} else {
		nanosleep(&d, NULL);
	}
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	c = count_read(fd);
	if (bg) {
		kill(bg, SIGKILL);
		waitpid(bg, NULL, 0);
	}
	return c;
}

static void row(int fd, int hz, int n)
{
	struct job j;
	long long base = hz ? run(fd, hz, 0, 0, &j) : 0;
	int co;

	for (co = 0; co < 2; co++) {
		long long c = run(fd, hz, n, co, &j);
		double extra = j.st.wakeups ? (double)(c - base) / (double)j.st.wakeups : 0;

		printf("%6d %5d %-4s %9llu %9lld %9lld %8.2f %8ld %8.1f%%\n", n, hz, co ? "on" : "off",
		       (unsigned long long)j.st.wakeups, base, c, extra, j.late,
		       j.fired ? 100.0 * (double)j.late / (double)j.fired : 0);
	}
}

int main(int argc, char **argv)
{
	static const int ns[] = { 1, 100, 10000 }, hzs[] = { 1000, 250, 100 };
	int full = 0, i, k, fd;
	long id;

	cpu = (int)sysconf(_SC_NPROCESSORS_ONLN) - 1;
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--full"))
			full = 1;
		else if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
			seconds = atof(argv[++i]);
		else if (!strcmp(argv[i], "--cpu") && i + 1 < argc)
			cpu = atoi(argv[++i]);
#ifdef HRT_BENCH_UV
		else if (!strcmp(argv[i], "--uv"))
			use_uv = 1;
#endif
		else {
			fprintf(stderr, "usage: %s [--full] [--seconds S] [--cpu C] [--uv]\n", argv[0]);
			return 2;
		}
	}
	if (seconds <= 0 || seconds > 600 || cpu < 0) {
		fprintf(stderr, "hrt bench/coalesce: bad --seconds or --cpu\n");
		return 2;
	}
	id = tracepoint_id();
	if (id < 0) {
		printf("SKIP: timer interrupt counter (irq_vectors:local_timer_entry not readable: tracefs, root)\n");
		return 0;
	}
	fd = counter_open(id);
	if (fd < 0) {
		printf("SKIP: perf_event_open on local_timer_entry: %s (perf_event_paranoid, root)\n",
		       strerror(errno));
		return 0;
	}
	printf("CPU %d, %.1f s per run, host %s; extra = (irqs - background irqs) / hrt wake-ups\n",
	       cpu, seconds, use_uv ? "libuv (wake-ups: passes)" : "hrt_base_loop");
	printf("%6s %5s %-4s %9s %9s %9s %8s %8s %9s\n", "timers", "bg_hz", "co", "wakeups",
	       "bg_irqs", "irqs", "extra", "late", "late%");
	for (i = 0; i < (full ? 3 : 1); i++)
		for (k = 0; k < (full ? 3 : 1); k++)
			row(fd, hzs[k], ns[i]);
	row(fd, 0, 1);          /* no other program: wake-ups on vs off */
	if (full) {
		row(fd, 0, 100);
		row(fd, 0, 10000);
	}
	close(fd);
	return 0;
}
