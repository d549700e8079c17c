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
 * on against off.  Wake-ups are the loop's sleeps that ended
 * (stats.wakeups); passes adds the passes the coalesced loop ran without
 * sleeping (its window was open already: no interrupt).  Prints SKIP and
 * exits 0 if the counter is unavailable.
 *
 *   bench/coalesce [--full] [--seconds S] [--repeat R] [--cpu C] [--uv | --ev]
 * default: N = 1, BG = 1 kHz, 1 s per run; --full: N = 1, 100, 10000 and
 * BG = 1000, 250, 100 Hz.  --repeat R (default 1: one line per run, as
 * always): each row runs R rounds - the background alone, then off and on
 * (on first in every other round, so drift favours neither), each for S -
 * and prints the medians over the rounds: wake-ups, the background's
 * interrupts, the interrupts hrt adds (irqs - that round's background),
 * late %, and the median (min to max) of the per-round ratio added on /
 * added off, over the rounds where added off > 0.  Then a summary: each
 * target (added on/off <= 0.15 against 1 kHz, <= 0.5 against 250 Hz; late
 * % on <= off + 1; alone, wake-ups on within +-2 % of off) met or not by
 * the median; the ratio is judged only where added off > 0 in more than
 * half the rounds, else the row says "on <= off" where the median added on
 * is at most added off, "not judged" where it is not.  A single
 * round cannot judge them: the background's count alone moves by 20 %
 * between runs.  --uv (built with libuv only): the host is a libuv loop
 * run inside hrt_base_loop_host by examples/uv_host.h (one epoll_pwait2 on
 * libuv's fd and hrt's, the window as slack; coalescing off, the timerfd
 * ends it), its wake-ups stats.wakeups as hrt_base_loop's; --ev (built
 * with libev only): a libev loop with examples/ev_host.h (an ev_prepare
 * plans each sleep with hrt_base_plan_sleep: an ev_timer at the window's
 * start rounded up to the millisecond; the timerfd path an ev_io on
 * hrt_base_fd), its wake-ups the timerfd's (stats.wakeups) plus the
 * ev_timer's.
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
#include "../examples/uv_host.h"
#endif
#ifdef HRT_BENCH_EV
#include "../examples/ev_host.h"
#endif

#define MS 1000000LL
#define SEC 1000000000LL

#define MAX_ROUNDS 100

static int cpu;
static double seconds = 1.0;
static int repeat = 1;
static int use_uv, use_ev;
/* A host's coalesced wake-ups: passes after a sleep that could block. */
static unsigned long long host_wakeups;

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
/* As examples/uv_timers.c, with no handles of libuv's own; stop() is
 * hrt_base_stop, as for hrt_base_loop. */
static void uv_host_loop(struct hrt_base *b)
{
	uv_loop_t loop;

	uv_loop_init(&loop);
	if (uv_host_run(&loop, b) < 0)
		fprintf(stderr, "coalesce: uv_host_run failed\n");
	uv_run(&loop, UV_RUN_DEFAULT);
	uv_loop_close(&loop);
}
#endif

#ifdef HRT_BENCH_EV
static struct ev_loop *ev_loop_running;

/* ev_host.h's timer, counted when it ended a sleep that could block (a
 * plan of 0 ns is a poll: no wake-up, as hrt_base_loop's passes without a
 * sleep): those are the coalesced wake-ups. */
static int ev_planned_sleep;

static void ev_count_plan(struct ev_loop *loop, ev_prepare *w, int revents)
{
	struct ev_host *h = HRT_CONTAINER_OF(w, struct ev_host, prepare);

	ev_host_plan(loop, w, revents);
	ev_planned_sleep = ev_is_active(&h->timer) && ev_timer_remaining(loop, &h->timer) > 0;
}

static void ev_count_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop, (void)w, (void)revents;
	host_wakeups += ev_planned_sleep;
}

static void ev_host_loop(struct hrt_base *b)
{
	struct ev_host host;
	int err;

	ev_loop_running = ev_loop_new(EVFLAG_AUTO);
	if (!ev_loop_running) {
		fprintf(stderr, "coalesce: ev_loop_new failed\n");
		exit(1);
	}
	ev_host_start(&host, ev_loop_running, b);
	ev_set_cb(&host.prepare, ev_count_plan);
	ev_set_cb(&host.timer, ev_count_timer);
	ev_run(ev_loop_running, 0);             /* until stop() */
	if ((err = ev_host_stop(&host, ev_loop_running)) < 0)
		fprintf(stderr, "coalesce: hrt_base_plan_sleep: %s\n", strerror(-err));
	ev_loop_destroy(ev_loop_running);
	ev_loop_running = NULL;
}
#endif

static enum hrt_restart stop(struct hrt_timer *t, hrt_time_t now)
{
	(void)t;
	(void)now;
#ifdef HRT_BENCH_EV
	if (ev_loop_running) {
		ev_break(ev_loop_running, EVBREAK_ALL);
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
	host_wakeups = 0;
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
#ifdef HRT_BENCH_EV
	if (use_ev)
		ev_host_loop(j->b);
	else
#endif
		hrt_base_loop(j->b);
	hrt_base_get_stats(j->b, &j->st, sizeof(j->st));
	j->st.wakeups += host_wakeups;         /* the libev host's timer */
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

/* One run of the hrt loop beside the background: its cost and its work. */
struct res {
	long long irqs;
	unsigned long long wakeups;     /* sleeps that ended */
	unsigned long long passes;      /* those and the passes run without sleeping */
	long late, fired;
};

/* One round of a row: the background alone, then coalescing off and on. */
struct round {
	long long bg;           /* 0 with no background */
	struct res r[2];        /* [co] */
};

/* The median, min and max of n values; n = 0: none. */
struct spread {
	double med, min, max;
	int n;
};

/* What the summary judges of one row (--repeat R > 1). */
struct cell {
	int n, hz;
	struct spread ratio;    /* added on / added off, rounds with added off > 0 */
	struct spread late;     /* late % on - late % off, in points */
	struct spread wake;     /* wake-ups on against off, % */
	double added_off, added_on;     /* medians */
};

static struct cell cells[12];   /* --full: 9 rows with a background, 3 alone */
static int ncells;

/* Round k of a row: the background alone (measured once, for both runs),
 * then off and on - on first in odd rounds, so drift favours neither. */
static void one_round(int fd, int hz, int n, int k, struct round *rd)
{
	struct job j;
	int i;

	rd->bg = hz ? run(fd, hz, 0, 0, &j) : 0;
	for (i = 0; i < 2; i++) {
		int co = i ^ (k & 1);
		struct res *r = &rd->r[co];

		r->irqs = run(fd, hz, n, co, &j);
		r->wakeups = j.st.wakeups;
		r->passes = j.st.passes;
		r->late = j.late;
		r->fired = j.fired;
	}
}

static double pct(double part, double whole)
{
	return whole ? 100.0 * part / whole : 0;
}

/* --repeat 1: a line per run, as the benchmark always printed. */
static void print_run(int hz, int n, int co, long long bg, const struct res *r)
{
	double extra = r->wakeups ? (double)(r->irqs - bg) / (double)r->wakeups : 0;

	printf("%6d %5d %-4s %9llu %9lld %9lld %8.2f %8ld %8.1f%% %8llu\n", n, hz, co ? "on" : "off",
	       r->wakeups, bg, r->irqs, extra, r->late, pct((double)r->late, (double)r->fired),
	       r->passes);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Sorts v[0..n). */
static struct spread spread(double *v, int n)
{
	struct spread s = { 0, 0, 0, n };

	if (n == 0)
		return s;
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	s.med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	s.min = v[0];
	s.max = v[n - 1];
	return s;
}

/* --repeat R > 1: one line of medians per row, and the row's cell. */
static void print_rounds(int hz, int n, const struct round *rd)
{
	enum { WAKE_OFF, WAKE_ON, PASS_OFF, PASS_ON, BG, ADD_OFF, ADD_ON, LATE_OFF, LATE_ON, LATE_D,
	       WAKE_CH, RATIO, NV };
	static double v[NV][MAX_ROUNDS];
	struct spread s[NV];
	int k, i, nr = 0, nw = 0;
	struct cell *c = &cells[ncells++];

	for (k = 0; k < repeat; k++) {
		const struct res *off = &rd[k].r[0], *on = &rd[k].r[1];

		v[WAKE_OFF][k] = (double)off->wakeups;
		v[WAKE_ON][k] = (double)on->wakeups;
		v[PASS_OFF][k] = (double)off->passes;
		v[PASS_ON][k] = (double)on->passes;
		v[BG][k] = (double)rd[k].bg;
		v[ADD_OFF][k] = (double)(off->irqs - rd[k].bg);
		v[ADD_ON][k] = (double)(on->irqs - rd[k].bg);
		v[LATE_OFF][k] = pct((double)off->late, (double)off->fired);
		v[LATE_ON][k] = pct((double)on->late, (double)on->fired);
		v[LATE_D][k] = v[LATE_ON][k] - v[LATE_OFF][k];
		if (off->wakeups)
			v[WAKE_CH][nw++] = pct(v[WAKE_ON][k] - v[WAKE_OFF][k], v[WAKE_OFF][k]);
		if (v[ADD_OFF][k] > 0)
			v[RATIO][nr++] = v[ADD_ON][k] / v[ADD_OFF][k];
	}
	for (i = 0; i < NV; i++)
		s[i] = spread(v[i], i == RATIO ? nr : i == WAKE_CH ? nw : repeat);
	printf("%6d %5d %9.0f %9.0f %9.0f %9.0f %9.0f %9.0f %9.0f %8.1f%% %8.1f%% ", n, hz,
	       s[WAKE_OFF].med, s[WAKE_ON].med, s[PASS_OFF].med, s[PASS_ON].med, s[BG].med,
	       s[ADD_OFF].med, s[ADD_ON].med, s[LATE_OFF].med, s[LATE_ON].med);
	if (nr)
		printf("%6.2f (%.2f to %.2f, %d of %d)\n", s[RATIO].med, s[RATIO].min, s[RATIO].max,
		       nr, repeat);
	else
		printf("%6s (added off <= 0 in every round)\n", "-");
	fflush(stdout);
	*c = (struct cell){ n, hz, s[RATIO], s[LATE_D], s[WAKE_CH], s[ADD_OFF].med, s[ADD_ON].med };
}

static void row(int fd, int hz, int n)
{
	static struct round rd[MAX_ROUNDS];
	int k;

	for (k = 0; k < repeat; k++)
		one_round(fd, hz, n, k, &rd[k]);
	if (repeat > 1) {
		print_rounds(hz, n, rd);
		return;
	}
	print_run(hz, n, 0, rd[0].bg, &rd[0].r[0]);
	print_run(hz, n, 1, rd[0].bg, &rd[0].r[1]);
	fflush(stdout);
}

static const char *verdict(int met)
{
	return met ? "met" : "not met";
}

/* Each target cell, judged by the medians of the rows printed. */
static void summary(void)
{
	const struct cell *c;

	printf("\nsummary: medians over %d rounds (min to max)\n", repeat);
	for (c = cells; c < cells + ncells; c++) {
		double target = c->hz == 1000 ? 0.15 : 0.5;

		if (c->hz != 1000 && c->hz != 250)
			continue;
		printf("irqs  %d timer%s, %d Hz: ", c->n, c->n == 1 ? "" : "s", c->hz);
		if (2 * c->ratio.n > repeat)
			printf("added on/off median %.2f (%.2f to %.2f, %d of %d rounds) <= %.2g: %s\n",
			       c->ratio.med, c->ratio.min, c->ratio.max, c->ratio.n, repeat, target,
			       verdict(c->ratio.med <= target));
		else
			printf("added off <= 0 in %d of %d rounds, median added on %.0f, off %.0f: %s\n",
			       repeat - c->ratio.n, repeat, c->added_on, c->added_off,
			       c->added_on <= c->added_off ? "on <= off" : "not judged");
	}
	for (c = cells; c < cells + ncells; c++) {
		printf("late  %d timer%s, ", c->n, c->n == 1 ? "" : "s");
		if (c->hz)
			printf("%d Hz", c->hz);
		else
			printf("alone");
		printf(": past hard on - off median %+.1f (%+.1f to %+.1f) points <= +1: %s\n",
		       c->late.med, c->late.min, c->late.max, verdict(c->late.med <= 1));
	}
	for (c = cells; c < cells + ncells; c++) {
		if (c->hz)
			continue;
		printf("alone %d timer%s: wake-ups on vs off ", c->n, c->n == 1 ? "" : "s");
		if (c->wake.n)
			printf("median %+.1f %% (%+.1f to %+.1f) within +-2 %%: %s\n", c->wake.med,
			       c->wake.min, c->wake.max, verdict(c->wake.med >= -2 && c->wake.med <= 2));
		else
			printf("no wake-ups off: not judged\n");
	}
}

static const char *host_name(void)
{
	return use_uv ? "libuv" : use_ev ? "libev" :
	       "hrt_base_loop";
}

#if defined(HRT_BENCH_UV) && defined(HRT_BENCH_EV)
#define HOST_USAGE " [--uv | --ev]"
#elif defined(HRT_BENCH_UV)
#define HOST_USAGE " [--uv]"
#elif defined(HRT_BENCH_EV)
#define HOST_USAGE " [--ev]"
#else
#define HOST_USAGE ""
#endif

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
		else if (!strcmp(argv[i], "--repeat") && i + 1 < argc)
			repeat = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--cpu") && i + 1 < argc)
			cpu = atoi(argv[++i]);
#ifdef HRT_BENCH_UV
		else if (!strcmp(argv[i], "--uv") && !use_ev)
			use_uv = 1;
#endif
#ifdef HRT_BENCH_EV
		else if (!strcmp(argv[i], "--ev") && !use_uv)
			use_ev = 1;
#endif
		else {
			/* Only the hosts this build has: a test reads the usage to
			 * skip the others by name. */
			fprintf(stderr, "usage: %s [--full] [--seconds S] [--repeat R] [--cpu C]%s\n",
				argv[0], HOST_USAGE);
			return 2;
		}
	}
	if (seconds <= 0 || seconds > 600 || cpu < 0 || repeat < 1 || repeat > MAX_ROUNDS) {
		fprintf(stderr, "hrt bench/coalesce: bad --seconds, --repeat (1-%d) or --cpu\n",
			MAX_ROUNDS);
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
	if (repeat == 1) {
		printf("CPU %d, %.1f s per run, host %s; extra = (irqs - background irqs) / hrt wake-ups\n",
		       cpu, seconds, host_name());
		printf("%6s %5s %-4s %9s %9s %9s %8s %8s %9s %8s\n", "timers", "bg_hz", "co", "wakeups",
		       "bg_irqs", "irqs", "extra", "late", "late%", "passes");
	} else {
		printf("CPU %d, %.1f s per run, host %s; %d rounds a row (background alone, then off\n"
		       "and on, on first in odd rounds); medians of the rounds; added = irqs - that round's\n"
		       "bg_irqs; ratio = added on / added off, median (min to max) over the rounds where\n"
		       "added off > 0\n", cpu, seconds,
		       host_name(), repeat);
		printf("%6s %5s %9s %9s %9s %9s %9s %9s %9s %9s %9s %6s\n", "timers", "bg_hz",
		       "wake_off", "wake_on", "pass_off", "pass_on", "bg_irqs", "added_off", "added_on",
		       "late%off", "late%on", "ratio");
	}
	for (i = 0; i < (full ? 3 : 1); i++)
		for (k = 0; k < (full ? 3 : 1); k++)
			row(fd, hzs[k], ns[i]);
	row(fd, 0, 1);          /* no other program: wake-ups on vs off */
	if (full) {
		row(fd, 0, 100);
		row(fd, 0, 10000);
	}
	if (repeat > 1)
		summary();
	close(fd);
	return 0;
}
