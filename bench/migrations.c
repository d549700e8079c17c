/* SPDX-License-Identifier: MIT */
/*
 * bench/migrations.c - the article's migration benchmark on real threads,
 * beside `hrt sim`'s model (docs/SIMULATION.md).
 *
 * One hrt base per CPU, its hrt_base_loop thread pinned there (the base is
 * the CPU's timer device, as in the model).  2 x CPUs worker threads, NOT
 * pinned: each alternates a busy burst and a sleep on a range timer started
 * on the base of the CPU it is on (sched_getcpu), and blocks on a semaphore
 * the callback posts.  What "migration" means here: the scheduler moving a
 * worker between CPUs, counted per worker by the kernel's software counter
 * (perf_event_open PERF_COUNT_SW_CPU_MIGRATIONS on the thread) - the pinned
 * loop threads cannot migrate and are not counted.  Per policy (off, idle,
 * always; in hrt_base_loop every wake-up is idle, so idle acts as always):
 * measured utilisation, hrt wake-ups, migrations, and timer interrupts
 * (local_timer_entry on every CPU, whole machine, if readable).  Workers'
 * slacks differ (50 us or 1 ms), else greedy has nothing to do.
 *
 *   bench/migrations [--seconds S]        (default 0.5 s per point)
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "hrt.h"

#define US 1000LL
#define MS 1000000LL
#define SEC 1000000000LL
#define PERIOD (2 * MS)
#define MAXCPU 64

static int ncpu, nthr;
static double seconds = 0.5;
static struct hrt_base *bases[MAXCPU];
static pthread_t loops[MAXCPU];

struct worker {
	struct hrt_timer t;
	sem_t sem;
	pthread_t th;
	hrt_time_t work, sleep, slack, end, busy;
	unsigned seed;
	long long migrations;
};

static hrt_time_t mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * SEC + ts.tv_nsec;
}

static long perf_open(unsigned type, unsigned long long config, int pid, int cpu)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = type;
	a.config = config;
	return syscall(SYS_perf_event_open, &a, pid, cpu, -1, 0);
}

static long long perf_read(long fd)
{
	long long v = 0;

	if (fd < 0 || read((int)fd, &v, sizeof(v)) != sizeof(v))
		return 0;
	return v;
}

static enum hrt_restart wake(struct hrt_timer *t, hrt_time_t now)
{
	struct worker *w = HRT_CONTAINER_OF(t, struct worker, t);

	(void)now;
	sem_post(&w->sem);
	return HRT_NORESTART;
}

/* Exponential draw with mean m (the model's burst and sleep lengths). */
static hrt_time_t expo(unsigned *seed, hrt_time_t m)
{
	double u = (rand_r(seed) + 1.0) / ((double)RAND_MAX + 2.0);
	double x = -(double)m * __builtin_log(u);

	return (hrt_time_t)(x > 20.0 * (double)m ? 20.0 * (double)m : x);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	long fd = perf_open(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, 0, -1);
	long long m0 = perf_read(fd);

	while (mono() < w->end) {
		hrt_time_t t0 = mono(), stop = t0 + expo(&w->seed, w->work);
		int c;

		while (mono() < stop)
			;
		w->busy += mono() - t0;
		c = sched_getcpu();
		if (c < 0 || c >= ncpu)
			c = 0;
		hrt_timer_start_range(&w->t, bases[c], expo(&w->seed, w->sleep), w->slack,
				      HRT_MODE_REL);
		while (sem_wait(&w->sem) < 0 && errno == EINTR)
			;
	}
	w->migrations = perf_read(fd) - m0;
	if (fd >= 0)
		close((int)fd);
	return NULL;
}

static void *loop_main(void *arg)
{
	hrt_base_loop(arg);
	return NULL;
}

struct point {
	double util;
	unsigned long long wakeups, migrations, irqs;
};

static int point(int busy, enum hrt_greedy g, long tp_id, struct point *p)
{
	struct worker *ws = calloc((size_t)nthr, sizeof(*ws));
	long irq_fd[MAXCPU];
	hrt_time_t start, duty_work;
	int i;

	if (!ws)
		return -ENOMEM;
	memset(p, 0, sizeof(*p));
	for (i = 0; i < ncpu; i++) {
		hrt_base_set_greedy(bases[i], g);
		hrt_base_reset_stats(bases[i]);
		irq_fd[i] = tp_id >= 0 ? perf_open(PERF_TYPE_TRACEPOINT, (unsigned long long)tp_id, -1, i) : -1;
	}
	/* duty = busy x C / T of a PERIOD: work, then sleep the rest. */
	duty_work = (hrt_time_t)((double)PERIOD * busy / 100.0 * ncpu / nthr);
	start = mono();
	for (i = 0; i < nthr; i++) {
		struct worker *w = &ws[i];

		hrt_timer_init(&w->t, wake);
		sem_init(&w->sem, 0, 0);
		w->seed = 1000u + (unsigned)i;
		w->slack = i & 1 ? MS : 50 * US;
		w->work = duty_work;
		w->sleep = PERIOD - duty_work - w->slack;
		if (w->sleep < 10 * US)
			w->sleep = 10 * US;
		w->end = start + (hrt_time_t)(seconds * SEC);
		pthread_create(&w->th, NULL, worker_main, w);
	}
	for (i = 0; i < nthr; i++) {
		pthread_join(ws[i].th, NULL);
		hrt_timer_cancel(&ws[i].t);
		sem_destroy(&ws[i].sem);
		p->util += (double)ws[i].busy;
		p->migrations += (unsigned long long)ws[i].migrations;
	}
	p->util /= (double)(mono() - start) * ncpu;
	for (i = 0; i < ncpu; i++) {
		struct hrt_stats s;

		hrt_base_get_stats(bases[i], &s, sizeof(s));
		p->wakeups += s.wakeups;
		p->irqs += (unsigned long long)perf_read(irq_fd[i]);
		if (irq_fd[i] >= 0)
			close((int)irq_fd[i]);
	}
	free(ws);
	return 0;
}

static double ratio(unsigned long long a, unsigned long long b)
{
	return b ? (double)a / (double)b : 0;
}

int main(int argc, char **argv)
{
	static const int loads[] = { 20, 50, 80, 95 };
	struct point r[3];
	long tp_id = -1;
	FILE *f;
	int i, k;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--seconds") && i + 1 < argc) {
			seconds = atof(argv[++i]);
		} else {
			fprintf(stderr, "usage: %s [--seconds S]\n", argv[0]);
			return 2;
		}
	}
	if (seconds <= 0 || seconds > 600) {
		fprintf(stderr, "hrt bench/migrations: bad --seconds\n");
		return 2;
	}
	ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (ncpu > MAXCPU)
		ncpu = MAXCPU;
	nthr = 2 * ncpu;
	i = (int)perf_open(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, 0, -1);
	if (i < 0) {
		printf("SKIP: perf_event_open(PERF_COUNT_SW_CPU_MIGRATIONS): %s (perf_event_paranoid)\n",
		       strerror(errno));
		return 0;
	}
	close(i);
	f = fopen("/sys/kernel/tracing/events/irq_vectors/local_timer_entry/id", "r");
	if (f) {
		if (fscanf(f, "%ld", &tp_id) != 1)
			tp_id = -1;
		fclose(f);
	}
	for (i = 0; i < ncpu; i++) {
		cpu_set_t set;

		if (hrt_base_new(&bases[i], CLOCK_MONOTONIC, HRT_BASE_ENV)) {
			fprintf(stderr, "migrations: hrt_base_new failed\n");
			return 1;
		}
		pthread_create(&loops[i], NULL, loop_main, bases[i]);
		CPU_ZERO(&set);
		CPU_SET(i, &set);
		pthread_setaffinity_np(loops[i], sizeof(set), &set);
	}
	printf("bench/migrations: %d CPUs, %d unpinned threads, slack 50 us / 1 ms, period %.1f us, "
	       "%.3f s per point%s\n\n", ncpu, nthr, (double)PERIOD / 1000, seconds,
	       tp_id < 0 ? " (timer interrupts: not readable)" : "");
	printf("       util %%             wake-ups                  migrations"
	       "          idle/off   timer irqs (whole machine)\n");
	printf("busy%%  off  idle always   off    idle   always     off   idle always"
	       "   migr  wake     off    idle  always\n");
	for (i = 0; i < 4; i++) {
		for (k = 0; k < 3; k++)
			point(loads[i], (enum hrt_greedy)k, tp_id, &r[k]);
		printf("%4d  %4.1f %4.1f %5.1f  %6llu %6llu %6llu  %6llu %6llu %6llu  %5.3f %5.3f  %6llu %6llu %6llu\n",
		       loads[i], 100 * r[0].util, 100 * r[1].util, 100 * r[2].util,
		       r[0].wakeups, r[1].wakeups, r[2].wakeups, r[0].migrations,
		       r[1].migrations, r[2].migrations, ratio(r[1].migrations, r[0].migrations),
		       ratio(r[1].wakeups, r[0].wakeups), r[0].irqs, r[1].irqs, r[2].irqs);
	}
	for (i = 0; i < ncpu; i++) {
		hrt_base_stop(bases[i]);
		pthread_join(loops[i], NULL);
		hrt_base_free(bases[i]);
	}
	return 0;
}
