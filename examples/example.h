/* SPDX-License-Identifier: MIT */
/*
 * example.h - the workload the four event-loop examples share, so that each
 * examples/<loop>_timers.c shows only how hrt plugs into that loop.
 *
 *  - EX_TIMERS range timers on one CLOCK_MONOTONIC base, each embedded in a
 *    user struct (struct ex_job) and recovered with HRT_CONTAINER_OF.  Soft
 *    expiries are spread over 0.3-1.0 s from the start, slack is 0-3 ms, so
 *    the ranges overlap and the greedy walk has timers to merge.
 *  - The host loop's own I/O: a pipe.  A repeating host-loop timer (every
 *    EX_TICK_MS) starts a burst of EX_BURST messages through the pipe; the
 *    loop reads one message per readable callback, spends EX_WORK_US of
 *    simulated work on it and writes the next one.  While a burst runs the
 *    pipe is ready at every poll, so some hrt wake-ups arrive together with
 *    other work (idle = 0) and others alone (idle = 1).
 *  - Two struct hrt_repeat timers, as a server keeps per connection: a
 *    heartbeat every EX_BEAT_MS in an EX_BEAT_WINDOW_MS window
 *    (hrt_repeat_start with an interval: its callback only returns
 *    HRT_RESTART), and an idle timeout of EX_IDLE_MS that each host
 *    message pushes back (hrt_repeat_again, libuv's uv_timer_again).
 *  - ex_finish(): the self-check and a one-line summary; its result is the
 *    exit status.  EX_DEADLINE_MS bounds the run so a bug fails, not hangs.
 *
 * Single-threaded: everything here runs on the host loop's thread.
 */
#ifndef EXAMPLE_H
#define EXAMPLE_H

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <hrt.h>

#define EX_TIMERS       3000
#define EX_FIRST_MS     300     /* soft expiries in [EX_FIRST_MS, EX_LAST_MS) */
#define EX_LAST_MS      1000
#define EX_SLACK_MAX_US 3000
#define EX_TICK_MS      5       /* host timer period: one burst per tick */
#define EX_BURST        8       /* messages per burst */
#define EX_WORK_US      40      /* simulated work per message */
#ifndef EX_DEADLINE_MS
#define EX_DEADLINE_MS  10000   /* whole run (-D to test the failure path) */
#endif
#define EX_LATE_MAX_MS  500     /* past hard: a stuck wake-up, not jitter */
#define EX_BEAT_MS      50      /* the heartbeat's period */
#define EX_BEAT_WINDOW_MS 10    /* and its window */
#define EX_BEAT_MAX     1000    /* beats recorded */
#define EX_IDLE_MS      300     /* the idle timeout: pushed back on each message */

/* For calls that return a negative error code (hrt, libuv, sd-event). */
#define EX_TRY(call) do { \
	int ex_err_ = (call); \
	if (ex_err_ < 0) { \
		ex_error(#call, ex_err_); \
		goto out; \
	} \
} while (0)

/* The user's struct; the timer is deliberately not the first member. */
struct ex_job {
	unsigned id;
	struct hrt_timer timer;
	hrt_time_t soft, hard;          /* as started */
	hrt_time_t fired_at;            /* clock_gettime in the callback */
	unsigned fired;
};

static struct {
	const char *name;
	struct hrt_base *base;
	struct ex_job *jobs;
	size_t fired;                   /* callbacks run, all jobs */
	hrt_time_t deadline;
	uint64_t dispatches[2];         /* hrt_base_dispatch calls by idle */
	int pipe[2];                    /* host I/O: read end, write end */
	unsigned burst_left;
	uint64_t host_msgs;             /* host messages read and worked on */
	int failed;                     /* setup/loop error or deadline */
	struct hrt_repeat beat, idle;   /* the heartbeat, the idle timeout */
	hrt_time_t beat_first;          /* the heartbeat's first soft expiry */
	hrt_time_t beat_at[EX_BEAT_MAX]; /* the pass's now of each beat */
	size_t beats, idle_fired;
	hrt_time_t pushed_at;           /* the clock just before the last again */
} ex = { .pipe = { -1, -1 } };

static inline hrt_time_t ex_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (hrt_time_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A setup or loop call failed: err is a negative errno (or libuv) code. */
static inline void ex_error(const char *what, int err)
{
	fprintf(stderr, "%s: FAIL: %s: %s (%d)\n", ex.name, what, strerror(-err), err);
	ex.failed = 1;
}

static inline uint64_t ex_rand(void)        /* xorshift64*, fixed seed */
{
	static uint64_t x = 0x9e3779b97f4a7c15u;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	return x * 0x2545f4914f6cdd1du;
}

static enum hrt_restart ex_job_fire(struct hrt_timer *t, hrt_time_t now)
{
	struct ex_job *job = HRT_CONTAINER_OF(t, struct ex_job, timer);

	(void)now;
	job->fired_at = ex_now();
	job->fired++;
	ex.fired++;
	return HRT_NORESTART;
}

/* The heartbeat: periodic, so it only records and asks for the next. */
static enum hrt_restart ex_beat(struct hrt_timer *t, hrt_time_t now)
{
	(void)t;
	if (ex.beats < EX_BEAT_MAX)
		ex.beat_at[ex.beats] = now;
	ex.beats++;
	return HRT_RESTART;
}

/* The idle timeout: the host sent nothing for EX_IDLE_MS (it never should
 * while bursts run; counted, as a loaded machine may stall that long). */
static enum hrt_restart ex_idle(struct hrt_timer *t, hrt_time_t now)
{
	(void)t;
	(void)now;
	ex.idle_fired++;
	return HRT_NORESTART;
}

/* Creates the base, starts the timers, opens the host pipe.  NULL on error. */
static inline struct hrt_base *ex_start(const char *name)
{
	hrt_time_t t0;
	size_t i;
	int err;

	ex.name = name;
	/* The greedy policy stays the default, idle (HRT_BASE_ENV: then
	 * HRT_GREEDY=off|always in the environment changes it): it is what
	 * reads dispatch's idle. */
	err = hrt_base_new(&ex.base, CLOCK_MONOTONIC, HRT_BASE_ENV);
	if (err) {
		ex_error("hrt_base_new", err);
		return NULL;
	}
	if (pipe2(ex.pipe, O_NONBLOCK | O_CLOEXEC) < 0) {
		err = -errno;
		goto fail;
	}
	ex.jobs = calloc(EX_TIMERS, sizeof(*ex.jobs));
	if (!ex.jobs) {
		err = -ENOMEM;
		goto fail;
	}
	t0 = ex_now();
	ex.deadline = t0 + (hrt_time_t)EX_DEADLINE_MS * 1000000;
	for (i = 0; i < EX_TIMERS; i++) {
		struct ex_job *job = &ex.jobs[i];
		hrt_time_t span = (hrt_time_t)(EX_LAST_MS - EX_FIRST_MS) * 1000000;
		hrt_time_t slack = (hrt_time_t)(ex_rand() % (EX_SLACK_MAX_US + 1)) * 1000;

		if (i % 10 == 0)
			slack = 0;              /* some plain timers too */
		job->id = (unsigned)i;
		job->soft = t0 + (hrt_time_t)EX_FIRST_MS * 1000000 +
			    (hrt_time_t)(ex_rand() % (uint64_t)span);
		job->hard = job->soft + slack;
		hrt_timer_init(&job->timer, ex_job_fire);
		err = hrt_timer_start_range(&job->timer, ex.base, job->soft, slack, HRT_MODE_ABS);
		if (err < 0)
			goto fail;
	}
	hrt_repeat_init(&ex.beat, ex_beat);
	ex.beat_first = t0 + (hrt_time_t)EX_BEAT_MS * 1000000;
	err = hrt_repeat_start(&ex.beat, ex.base, ex.beat_first, (hrt_time_t)EX_BEAT_MS * 1000000,
			       (hrt_time_t)EX_BEAT_WINDOW_MS * 1000000, HRT_MODE_ABS);
	if (err < 0)
		goto fail;
	hrt_repeat_init(&ex.idle, ex_idle);
	ex.pushed_at = ex_now();
	err = hrt_repeat_start(&ex.idle, ex.base, (hrt_time_t)EX_IDLE_MS * 1000000, 0,
			       (hrt_time_t)EX_IDLE_MS * 100000, HRT_MODE_REL);
	if (err < 0)
		goto fail;
	return ex.base;
fail:
	ex_error("ex_start", err);
	return NULL;
}

static inline int ex_all_fired(void)
{
	return ex.fired >= EX_TIMERS;
}

/* For the host timer: 1 once the run is over time (and marks it failed). */
static inline int ex_overdue(void)
{
	if (ex_now() < ex.deadline)
		return 0;
	if (!ex.failed)
		fprintf(stderr, "%s: FAIL: deadline: %zu of %d timers fired in %d ms\n",
			ex.name, ex.fired, EX_TIMERS, EX_DEADLINE_MS);
	ex.failed = 1;
	return 1;
}

/* One call per hrt_base_dispatch with what it returned (< 0: an error).
 * A self-check fails on any error; a real program would retry an arm error
 * (dispatch again from a short host timer) and stop only on a read error. */
static inline void ex_dispatched(int idle, ssize_t ret)
{
	if (ret < 0)
		ex_error("hrt_base_dispatch", (int)ret);
	ex.dispatches[idle != 0]++;
}

static inline void ex_host_send(void)
{
	char c = 'm';

	if (write(ex.pipe[1], &c, 1) != 1)
		ex_error("write(pipe)", -errno);
}

/* The host timer's work: start a burst unless one is running. */
static inline void ex_host_tick(void)
{
	if (ex.burst_left == 0) {
		ex.burst_left = EX_BURST;
		ex_host_send();
	}
}

/* The pipe is readable: take one message, work on it, send the next. */
static inline void ex_host_readable(void)
{
	hrt_time_t until;
	char c;
	ssize_t r = read(ex.pipe[0], &c, 1);

	if (r < 0 && errno == EAGAIN)
		return;
	if (r != 1) {
		ex_error("read(pipe)", r < 0 ? -errno : -EPIPE);
		return;
	}
	ex.host_msgs++;
	ex.pushed_at = ex_now();
	r = hrt_repeat_again(&ex.idle); /* a message: the idle timeout starts over */
	if (r < 0)
		ex_error("hrt_repeat_again", (int)r);
	until = ex_now() + EX_WORK_US * 1000;
	while (ex_now() < until)
		;                       /* the host's own work */
	if (ex.burst_left && --ex.burst_left)
		ex_host_send();
}

static inline const char *ex_policy_name(enum hrt_greedy p)
{
	return p == HRT_GREEDY_OFF ? "off" : p == HRT_GREEDY_ALWAYS ? "always" : "idle";
}

/* The heartbeat ran in its periods' windows, never before one opened and
 * never twice in one (a late beat skips nothing it could still make), at
 * least every other period; the idle timeout's soft expiry is the last
 * message's push plus EX_IDLE_MS.  1 if not. */
static inline int ex_check_repeats(void)
{
	hrt_time_t period = (hrt_time_t)EX_BEAT_MS * 1000000, soft;
	size_t n = ex.beats < EX_BEAT_MAX ? ex.beats : EX_BEAT_MAX, k, seen = 0;
	int bad = 0;

	for (k = 0; k < n; k++) {
		hrt_time_t since = ex.beat_at[k] - ex.beat_first;
		size_t period_k = since < 0 ? 0 : (size_t)(since / period);

		if (since < 0 || (k > 0 && period_k < seen)) {
			fprintf(stderr, "%s: FAIL: heartbeat %zu ran %.3f ms after the first "
				"window opened: %s\n", ex.name, k, (double)since / 1e6,
				since < 0 ? "before it" : "twice in one period");
			bad = 1;
			break;
		}
		seen = period_k + 1;
	}
	if (n == 0 || seen > 2 * n + 1) {
		fprintf(stderr, "%s: FAIL: %zu heartbeats in %zu periods\n", ex.name, n, seen);
		bad = 1;
	}
	if (hrt_timer_get_soft(&ex.idle.timer, &soft) ||
	    soft < ex.pushed_at + (hrt_time_t)EX_IDLE_MS * 1000000) {
		fprintf(stderr, "%s: FAIL: the idle timeout's soft expiry is not %d ms after "
			"the last message\n", ex.name, EX_IDLE_MS);
		bad = 1;
	}
	return bad;
}

/*
 * Self-check and summary; frees everything.  Returns main's exit status:
 * 0 only if every timer fired exactly once, none before its soft expiry,
 * none absurdly late, and the host's own I/O happened.
 */
static inline int ex_finish(void)
{
	struct hrt_stats st;
	hrt_time_t late_max = INT64_MIN, early_min = INT64_MAX;
	size_t i, never = 0, twice = 0, early = 0, past_hard = 0;
	int bad = ex.failed;

	if (!ex.base)
		return 1;
	bad |= ex_check_repeats();
	hrt_timer_cancel(&ex.beat.timer);
	hrt_timer_cancel(&ex.idle.timer);
	hrt_base_get_stats(ex.base, &st, sizeof(st));
	for (i = 0; ex.jobs && i < EX_TIMERS; i++) {
		const struct ex_job *job = &ex.jobs[i];

		if (job->fired == 0) {
			never++;
			continue;
		}
		twice += job->fired > 1;
		if (job->fired_at < job->soft) {
			early++;
			if (job->fired_at - job->soft < early_min)
				early_min = job->fired_at - job->soft;
		}
		past_hard += job->fired_at > job->hard;
		if (job->fired_at - job->hard > late_max)
			late_max = job->fired_at - job->hard;
	}
	if (!ex.jobs || never || twice) {
		fprintf(stderr, "%s: FAIL: %zu timers never fired, %zu more than once\n",
			ex.name, never, twice);
		bad = 1;
	}
	if (early) {
		fprintf(stderr, "%s: FAIL: %zu timers fired before their soft expiry "
			"(worst by %lld ns)\n", ex.name, early, (long long)-early_min);
		bad = 1;
	}
	if (late_max > (hrt_time_t)EX_LATE_MAX_MS * 1000000) {
		fprintf(stderr, "%s: FAIL: a timer fired %.3f ms past its hard expiry\n",
			ex.name, (double)late_max / 1e6);
		bad = 1;
	}
	if (st.expired != ex.fired + ex.beats + ex.idle_fired || hrt_base_count(ex.base) != 0) {
		fprintf(stderr, "%s: FAIL: stats.expired %llu, callbacks %zu, queued %zd\n",
			ex.name, (unsigned long long)st.expired, ex.fired + ex.beats + ex.idle_fired,
			hrt_base_count(ex.base));
		bad = 1;
	}
	if (ex.host_msgs == 0) {
		fprintf(stderr, "%s: FAIL: the host loop's own I/O never ran\n", ex.name);
		bad = 1;
	}
	printf("%s: %d timers, greedy %s; wakeups %llu, passes %llu, expired_greedy %llu, "
	       "reprograms %llu; lateness max %.3f ms past hard (%zu past hard); ",
	       ex.name, EX_TIMERS, ex_policy_name(hrt_base_get_greedy(ex.base)),
	       (unsigned long long)st.wakeups,
	       (unsigned long long)st.passes, (unsigned long long)st.expired_greedy,
	       (unsigned long long)st.reprograms, late_max == INT64_MIN ? 0.0 : (double)late_max / 1e6,
	       past_hard);
	if (ex.dispatches[0] + ex.dispatches[1])        /* the loops that dispatch */
		printf("dispatches idle=0 %llu, idle=1 %llu; ", (unsigned long long)ex.dispatches[0],
		       (unsigned long long)ex.dispatches[1]);
	printf("host messages %llu; heartbeats %zu, idle timeouts %zu\n",
	       (unsigned long long)ex.host_msgs, ex.beats, ex.idle_fired);
	hrt_base_free(ex.base);
	free(ex.jobs);
	close(ex.pipe[0]);
	close(ex.pipe[1]);
	printf("%s: %s\n", ex.name, bad ? "FAIL" : "ok");
	return bad ? 1 : 0;
}

#endif /* EXAMPLE_H */
