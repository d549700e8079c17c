/* SPDX-License-Identifier: MIT */
/*
 * percore_timers.c - one timer base per CPU, the kernel's per-CPU hrtimer
 * bases in user space.
 *
 * Each CPU the process may run on gets a thread pinned to it
 * (pthread_setaffinity_np) that owns one CLOCK_MONOTONIC base and runs
 * hrt_base_loop() on it.  Work arms its timers on the base of the thread it
 * runs on, so a base's lock is only ever taken by its own thread: no
 * contention, and callbacks run on the CPU whose caches hold their data.
 * Any thread may still start or cancel a timer on any base; that is only
 * slower, never wrong.
 *
 * Self-check: every timer fires exactly once, never before its soft expiry,
 * on its own base's thread (and CPU, when pinning worked).  Exit 0 only then.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <hrt.h>

#define TIMERS_PER_CORE 2000
#define MAX_CORES 64

struct core;

struct job {
	struct hrt_timer timer;        /* first member: the callback casts back */
	struct core *core;
	hrt_time_t soft;
	int fired;
	int wrong_thread;
	int early;
};

struct core {
	int cpu;
	int pinned;
	pthread_t thread;
	struct hrt_base *base;
	struct hrt_timer setup;        /* arms the jobs from the core's own thread */
	struct job jobs[TIMERS_PER_CORE];
	int fired;
	int err;
};

static hrt_time_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (hrt_time_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static enum hrt_restart job_fire(struct hrt_timer *t, hrt_time_t now)
{
	struct job *j = (struct job *)t;
	struct core *c = j->core;

	(void)now;
	j->fired++;
	j->early |= now_ns() < j->soft;
	j->wrong_thread |= !pthread_equal(pthread_self(), c->thread) ||
			   (c->pinned && sched_getcpu() != c->cpu);
	if (++c->fired == TIMERS_PER_CORE)
		hrt_base_stop(c->base);
	return HRT_NORESTART;
}

/* Runs on the core's thread, inside its loop: the jobs go on this base. */
static enum hrt_restart setup_fire(struct hrt_timer *t, hrt_time_t now)
{
	struct core *c = HRT_CONTAINER_OF(t, struct core, setup);
	unsigned seed = (unsigned)c->cpu + 1;
	int i, err;

	for (i = 0; i < TIMERS_PER_CORE; i++) {
		struct job *j = &c->jobs[i];
		hrt_time_t slack = rand_r(&seed) % 5000000;     /* up to 5 ms */

		j->core = c;
		j->soft = now + 10000000 + rand_r(&seed) % 300000000;
		hrt_timer_init(&j->timer, job_fire);
		err = hrt_timer_start_range(&j->timer, c->base, j->soft, slack, HRT_MODE_ABS);
		if (err && !c->err)
			c->err = err;
	}
	return HRT_NORESTART;
}

static void *core_main(void *arg)
{
	struct core *c = arg;
	cpu_set_t set;
	int err;

	CPU_ZERO(&set);
	CPU_SET(c->cpu, &set);
	c->pinned = pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0;
	hrt_timer_init(&c->setup, setup_fire);
	err = hrt_timer_start(&c->setup, c->base, 0, HRT_MODE_REL);
	if (!err)
		err = hrt_base_loop(c->base);
	if (err && !c->err)
		c->err = err;
	return NULL;
}

/* Watchdog: a bug must fail the example, not hang it. */
static void *watchdog(void *arg)
{
	(void)arg;
	struct timespec ts = { 10, 0 };

	nanosleep(&ts, NULL);
	fprintf(stderr, "percore_timers: FAIL: not done after 10 s\n");
	exit(1);
}

int main(void)
{
	static struct core cores[MAX_CORES];
	pthread_t wd;
	cpu_set_t allowed;
	int ncores = 0, cpu, i, k, bad = 0;

	if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) {
		perror("percore_timers: sched_getaffinity");
		return 1;
	}
	for (cpu = 0; cpu < CPU_SETSIZE && ncores < MAX_CORES; cpu++)
		if (CPU_ISSET(cpu, &allowed))
			cores[ncores++].cpu = cpu;
	if (pthread_create(&wd, NULL, watchdog, NULL) != 0) {
		fprintf(stderr, "percore_timers: cannot start the watchdog\n");
		return 1;
	}
	for (i = 0; i < ncores; i++) {
		int err = hrt_base_new(&cores[i].base, CLOCK_MONOTONIC, 0);

		if (err) {
			fprintf(stderr, "percore_timers: hrt_base_new: %s\n", strerror(-err));
			return 1;
		}
	}
	for (i = 0; i < ncores; i++)
		if (pthread_create(&cores[i].thread, NULL, core_main, &cores[i]) != 0) {
			fprintf(stderr, "percore_timers: cannot start thread %d\n", i);
			return 1;
		}
	for (i = 0; i < ncores; i++) {
		struct core *c = &cores[i];
		struct hrt_stats st;
		int once = 0, early = 0, wrong = 0;

		pthread_join(c->thread, NULL);
		for (k = 0; k < TIMERS_PER_CORE; k++) {
			once += c->jobs[k].fired == 1;
			early += c->jobs[k].early;
			wrong += c->jobs[k].wrong_thread;
		}
		hrt_base_get_stats(c->base, &st, sizeof(st));
		printf("cpu %d%s: %d/%d fired once, %d early, %d on another thread; "
		       "%llu wake-ups, %llu greedy\n", c->cpu, c->pinned ? "" : " (not pinned)",
		       once, TIMERS_PER_CORE, early, wrong,
		       (unsigned long long)st.wakeups, (unsigned long long)st.expired_greedy);
		if (c->err) {
			fprintf(stderr, "percore_timers: cpu %d: %s\n", c->cpu, strerror(-c->err));
			bad = 1;
		}
		bad |= once != TIMERS_PER_CORE || early || wrong;
		hrt_base_free(c->base);
	}
	printf("percore_timers: %s\n", bad ? "FAIL" : "ok");
	return bad;
}
