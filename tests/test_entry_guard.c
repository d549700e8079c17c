/* SPDX-License-Identifier: MIT */
/*
 * test_entry_guard.c - what every call of hrt.h returns when it is made
 * from a situation the entry checks must catch, and one reproducer for
 * each way those checks have gone wrong.
 *
 * The table.  One row per public function: a small adapter calls it with
 * prepared arguments and returns its result as a long long.  One column
 * per situation:
 *
 *   owner    the owner thread, outside any callback (the control column)
 *   NULL b   NULL for the base argument
 *   NULL t   NULL for the timer argument
 *   NULL p   NULL for the other pointer (out, fn, soft/hard, why)
 *   fork     a child forked after the base was made and its timers started
 *   foreign  another thread, on an HRT_BASE_UNLOCKED base (the base, and a
 *            timer queued on it)
 *   walk     inside a hrt_base_walk_tree callback of the same base
 *   pass     inside a timer callback of a hrt_base_run pass of the same base
 *   loop     inside a timer callback of hrt_base_loop on the same base
 *
 * The prepared world of every cell: base b (CLOCK_MONOTONIC with its fd
 * made, or HRT_BASE_VIRTUAL for the rows that need it), greedy ALWAYS,
 * coalescing on; timer t queued on b with soft 2, hard 3 (both long past,
 * so any pass runs it); timer u started the same way and cancelled (its
 * base is b, not queued); in the pass and loop columns, timer cb with
 * soft = hard = 1, whose callback makes the call (before t runs).
 *
 * Every cell runs in a child process of its own, so a call that corrupts,
 * crashes or hangs spoils only its cell: the runner waits a bounded time,
 * kills a child that hangs and records "hang".  In the fork column the
 * runner makes the base before the fork; in the others the child does.
 *
 * The expected values are what include/hrt.h says; a cell marked OURS is
 * one hrt.h does not settle (silent, or two rules disagree), with the value
 * this test chose.  Every call returns 0 or more, or a negative errno; an
 * adapter reports the errno as it is, and on success what the call
 * answered: the out-parameter's value (get_clock, next_event, get_soft,
 * get_hard), or 1 for "a real answer" where the exact value cannot be
 * known in advance (hrt_base_new: a base made; hrt_base_now: a time;
 * hrt_base_fd: an fd; hrt_base_get_stats: the counters copied;
 * hrt_base_reset_stats: the counters zero afterwards).
 *
 * The focused tests after the table each reproduce one broken rule with a
 * deadline, so a defect fails the test instead of hanging the program.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "unit.h"

#include "hrt.h"
#include "hrt_values.h"

#define MS 1000000LL

/* How long a child may take before it counts as hung.  No call hangs when
 * the rules hold, so the deadline costs nothing in a green run; it is wide
 * because a loaded shared machine once took 300 ms over one cell. */
#define CELL_MS 2000
#define FOCUS_MS 1000
/* How long a child may take to start running. */
#define FORK_MS 5000

static hrt_time_t mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (hrt_time_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void pause_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * MS };

	nanosleep(&ts, NULL);
}

/* Spins (politely) until *flag is set or `ms` pass; whether it was set. */
static int wait_flag(atomic_int *flag, long ms)
{
	hrt_time_t end = mono() + ms * MS;

	while (!atomic_load(flag)) {
		if (mono() > end)
			return 0;
		sched_yield();
	}
	return 1;
}

static enum hrt_restart noop(struct hrt_timer *t, hrt_time_t now)
{
	(void)t;
	(void)now;
	return HRT_NORESTART;
}

static enum hrt_restart stop_own_base(struct hrt_timer *t, hrt_time_t now)
{
	struct hrt_base *b = NULL;

	(void)now;
	hrt_timer_get_base(t, &b);
	hrt_base_stop(b);
	return HRT_NORESTART;
}

/* Running a function in a child process ---------------------------------- */

#define NV 8

struct outcome {
	int got;                /* the child wrote its results */
	int hung;               /* killed after the deadline */
	int status;             /* waitpid status */
	long long v[NV];
};

/*
 * Forks; the child writes one byte once it runs, then runs fn(arg, v),
 * writes v[] to a pipe and _exits.  The parent waits at most `ms` for the
 * results from that byte on (a fork under TSan, on a loaded machine, may
 * take longer than a call), then kills the child.  A result written
 * before a crash or a sanitizer's exit code still counts as got; the
 * status tells the rest.
 */
static struct outcome in_child(void (*fn)(void *arg, long long *v), void *arg, int ms)
{
	struct outcome o;
	hrt_time_t end;
	int p[2];
	size_t have = 0;
	pid_t pid;

	memset(&o, 0, sizeof(o));
	fflush(stdout);
	fflush(stderr);
	if (pipe(p) != 0) {
		o.status = -1;
		return o;
	}
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		o.status = -1;
		return o;
	}
	if (pid == 0) {
		long long v[NV] = { 0 };

		close(p[0]);
		alarm((unsigned)(ms / 1000 + 10));     /* if the parent is gone */
		if (write(p[1], "", 1) != 1)
			_exit(121);
		fn(arg, v);
		if (write(p[1], v, sizeof(v)) != (ssize_t)sizeof(v))
			_exit(120);
		_exit(0);
	}
	close(p[1]);
	end = mono() + (hrt_time_t)(ms + FORK_MS) * MS;
	while (have < sizeof(o.v) + 1) {
		struct pollfd pf = { .fd = p[0], .events = POLLIN };
		hrt_time_t left = end - mono();
		ssize_t n;
		int r;

		if (left <= 0) {
			o.hung = 1;
			break;
		}
		r = poll(&pf, 1, (int)((left + MS - 1) / MS));
		if (r < 0 && errno == EINTR)
			continue;
		if (r == 0) {
			o.hung = 1;
			break;
		}
		if (have == 0) {
			char c;

			n = read(p[0], &c, 1);
			if (n == 1)     /* it runs: now the call's deadline */
				end = mono() + (hrt_time_t)ms * MS;
		} else {
			n = read(p[0], (char *)o.v + have - 1, sizeof(o.v) + 1 - have);
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;          /* died before writing */
		have += (size_t)n;
	}
	o.got = have == sizeof(o.v) + 1;
	if (o.hung)
		kill(pid, SIGKILL);
	while (waitpid(pid, &o.status, 0) < 0 && errno == EINTR)
		;
	close(p[0]);
	return o;
}

/* Ends the test unless the child finished and exited cleanly. */
#define assert_child_finished(o, what) do { \
	if ((o).hung) \
		fail_msg("%s: still blocked after %d ms (killed)", (what), FOCUS_MS); \
	if (!(o).got) \
		fail_msg("%s: the child died (status %#x)", (what), (o).status); \
} while (0)

#define assert_child_exited_cleanly(o, what) do { \
	if (!WIFEXITED((o).status) || WEXITSTATUS((o).status) != 0) \
		fail_msg("%s: the child's exit status is %#x (a sanitizer report?)", \
			 (what), (o).status); \
} while (0)

/* The table -------------------------------------------------------------- */

enum sit { S_OWNER, S_NULL_BASE, S_NULL_TIMER, S_NULL_PTR, S_FORK, S_FOREIGN, S_WALK,
	   S_PASS, S_LOOP, S_N };

static const char *const sit_name[S_N] = {
	"owner", "NULL b", "NULL t", "NULL p", "fork", "foreign", "walk", "pass", "loop",
};

/* Cell results that are not a return value. */
#define R_HANG      (LLONG_MIN + 1)    /* no answer before the deadline */
#define R_DIED      (LLONG_MIN + 2)    /* the child died without answering */
#define R_NOCALL    (LLONG_MIN + 3)    /* the situation never made the call */
#define R_NOSETUP   (LLONG_MIN + 4)    /* the prepared world could not be made */
#define R_EXIT      (LLONG_MIN + 5)    /* answered, then exited non-zero */

struct cell {
	long long v;
	char how;       /* 'd': hrt.h says so; 'c': hrt.h does not settle it; 0: no cell */
};
#define DOC(x) { (x), 'd' }
#define OURS(x) { (x), 'c' }
#define NA { 0, 0 }

struct ctx;

#define F_VIRT  1u      /* b is HRT_BASE_VIRTUAL, else CLOCK_MONOTONIC */
#define F_ERRNO 2u      /* a negative result is an errno (every row now) */

struct row {
	const char *name;
	long long (*call)(struct ctx *c);
	/* If set, the result: read on the owner thread, outside any callback,
	 * once the situation is over (the effect of a void call). */
	long long (*after)(struct ctx *c);
	unsigned flags;         /* F_* */
	struct cell want[S_N];
};

struct ctx {
	const struct row *row;
	enum sit sit;
	struct hrt_base *b;
	struct hrt_timer t;             /* queued on b: soft 2, hard 3 */
	struct hrt_timer u;             /* last started on b, cancelled */
	struct hrt_timer cb;            /* pass, loop: makes the call */
	struct hrt_timer fresh;         /* for hrt_timer_init */
	struct hrt_timer stopper;       /* stops the loop the loop row starts */
	struct hrt_repeat r;            /* last started on b (10 ms, relative), cancelled */
	struct hrt_repeat rfresh;       /* for hrt_repeat_init */
	int called, freed;
	long long ret;
};

/* The arguments, NULL in the column that asks for it. */
static struct hrt_base *B(const struct ctx *c)
{
	return c->sit == S_NULL_BASE ? NULL : c->b;
}

static struct hrt_timer *T(struct ctx *c, struct hrt_timer *t)
{
	return c->sit == S_NULL_TIMER ? NULL : t;
}

#define P(c, p) ((c)->sit == S_NULL_PTR ? NULL : (p))

/* Adapters: one per function of hrt.h, in the header's order. */

/* 1 if a base was made (and freed again), else the errno. */
static long long made(struct ctx *c, unsigned flags)
{
	struct hrt_base *nb = NULL;
	int r = hrt_base_new(P(c, &nb), CLOCK_MONOTONIC, flags);

	if (r)
		return r;
	hrt_base_free(nb);      /* refused in a walk callback: the child exits anyway */
	return 1;
}

static long long do_version(struct ctx *c)
{
	(void)c;
	return strcmp(hrt_version(), HRT_VERSION_STRING) == 0;
}

static long long do_new(struct ctx *c)
{
	return made(c, 0);
}

static long long do_new_unlocked(struct ctx *c)
{
	return made(c, HRT_BASE_UNLOCKED);
}

/* Frees b once t is off it (a base with queued timers is always -EBUSY). */
static long long do_free(struct ctx *c)
{
	int r;

	if (B(c))
		hrt_timer_try_cancel(&c->t);
	r = hrt_base_free(B(c));
	if (r == 0 && B(c))
		c->freed = 1;
	return r;
}

static long long do_set_greedy(struct ctx *c)
{
	return hrt_base_set_greedy(B(c), HRT_GREEDY_IDLE);
}

static long long do_get_greedy(struct ctx *c)
{
	return hrt_base_get_greedy(B(c));
}

static long long do_get_clock(struct ctx *c)
{
	clockid_t clk;
	int r = hrt_base_get_clock(B(c), P(c, &clk));

	return r ? r : clk;
}

/* 1: a time (a CLOCK_MONOTONIC reading is never 0). */
static long long do_now(struct ctx *c)
{
	hrt_time_t t = 0;
	int r = hrt_base_now(B(c), P(c, &t));

	return r ? r : t != 0;
}

static long long do_set_time(struct ctx *c)
{
	return hrt_base_set_time(B(c), 2000);
}

/* The instant; -1000 if the result and the instant disagree. */
static long long do_next_event(struct ctx *c)
{
	hrt_time_t when = 0;
	int r = hrt_base_next_event(B(c), P(c, &when));

	if (r < 0)
		return r;
	return r == (when != HRT_TIME_MAX) ? when : -1000;
}

static long long do_count(struct ctx *c)
{
	return hrt_base_count(B(c));
}

static long long do_run(struct ctx *c)
{
	return hrt_base_run(B(c), 1000, 0);
}

/* 1 if the counters were copied. */
static long long do_get_stats(struct ctx *c)
{
	struct hrt_stats st;
	int r;

	memset(&st, 0xa5, sizeof(st));
	r = hrt_base_get_stats(B(c), P(c, &st), sizeof(st));
	return r ? r : st.starts != 0xa5a5a5a5a5a5a5a5ULL;
}

/* 1 if the counters are zero afterwards (the prepared world started t
 * and u); -1000 if it said it zeroed them and did not. */
static long long do_reset_stats(struct ctx *c)
{
	struct hrt_stats st;
	int r = hrt_base_reset_stats(B(c));

	if (r)
		return r;
	memset(&st, 0xa5, sizeof(st));
	hrt_base_get_stats(c->b, &st, sizeof(st));
	return st.starts == 0 ? 1 : -1000;
}

static long long do_init(struct ctx *c)
{
	return hrt_timer_init(T(c, &c->fresh), c->sit == S_NULL_PTR ? NULL : noop);
}

static long long do_start_range(struct ctx *c)
{
	return hrt_timer_start_range(T(c, &c->t), B(c), 5, 1, HRT_MODE_ABS);
}

static long long do_start(struct ctx *c)
{
	return hrt_timer_start(T(c, &c->t), B(c), 5, HRT_MODE_ABS);
}

static long long do_cancel(struct ctx *c)
{
	return hrt_timer_cancel(T(c, &c->t));
}

static long long do_try_cancel(struct ctx *c)
{
	return hrt_timer_try_cancel(T(c, &c->t));
}

/* u: hard 3, not queued: forward to after 1000 by 100s is 10 intervals. */
static long long do_forward(struct ctx *c)
{
	return hrt_timer_forward(T(c, &c->u), 1000, 100);
}

static long long do_is_queued(struct ctx *c)
{
	return hrt_timer_is_queued(T(c, &c->t));
}

static long long do_is_running(struct ctx *c)
{
	return hrt_timer_is_running(T(c, &c->t));
}

static long long do_get_soft(struct ctx *c)
{
	hrt_time_t v;
	int r = hrt_timer_get_soft(T(c, &c->t), P(c, &v));

	return r ? r : v;
}

static long long do_get_hard(struct ctx *c)
{
	hrt_time_t v;
	int r = hrt_timer_get_hard(T(c, &c->t), P(c, &v));

	return r ? r : v;
}

/* 1: b, 2: another base. */
static long long do_get_base(struct ctx *c)
{
	struct hrt_base *got;
	int r = hrt_timer_get_base(T(c, &c->t), P(c, &got));

	return r ? r : got == c->b ? 1 : 2;
}

static void count_node(const struct hrt_tree_node *n, void *ctx)
{
	(void)n;
	(*(int *)ctx)++;
}

static long long do_walk_tree(struct ctx *c)
{
	int n = 0;

	return hrt_base_walk_tree(B(c), P(c, count_node), &n);
}

static long long do_check(struct ctx *c)
{
	char why[128];

	return hrt_base_check(B(c), P(c, why), sizeof(why));
}

/* 1: an fd. */
static long long do_fd(struct ctx *c)
{
	int fd = hrt_base_fd(B(c));

	return fd >= 0 ? 1 : fd;
}

static long long do_dispatch(struct ctx *c)
{
	return hrt_base_dispatch(B(c), 0);
}

/* A due timer on b stops the loop once it runs (the loop would run for
 * ever otherwise); where the start is refused, so is the loop. */
static long long do_loop(struct ctx *c)
{
	if (B(c))
		hrt_timer_start(&c->stopper, c->b, 4, HRT_MODE_ABS);
	return hrt_base_loop(B(c));
}

static long long do_stop(struct ctx *c)
{
	return hrt_base_stop(B(c));
}

static long long do_set_coalesce(struct ctx *c)
{
	return hrt_base_set_coalesce(B(c), 0);
}

static long long do_get_coalesce(struct ctx *c)
{
	return hrt_base_get_coalesce(B(c));
}

static long long do_wait_window(struct ctx *c)
{
	hrt_time_t s, h;

	return hrt_base_wait_window(B(c), P(c, &s), P(c, &h));
}

static long long do_set_pass_limit(struct ctx *c)
{
	return hrt_base_set_pass_limit(B(c), 10, 0);
}

/* The callbacks bound (0: off, the default). */
static long long do_get_pass_limit(struct ctx *c)
{
	unsigned n = 7;
	hrt_time_t ns = 7;
	int r = hrt_base_get_pass_limit(B(c), P(c, &n), &ns);

	return r ? r : (long long)n + ns;
}

static long long do_repeat_init(struct ctx *c)
{
	return hrt_repeat_init(c->sit == S_NULL_TIMER ? NULL : &c->rfresh,
			       c->sit == S_NULL_PTR ? NULL : noop);
}

static long long do_repeat_start(struct ctx *c)
{
	return hrt_repeat_start(c->sit == S_NULL_TIMER ? NULL : &c->r, B(c), 5, 100, 1,
				HRT_MODE_ABS);
}

static long long do_repeat_again(struct ctx *c)
{
	return hrt_repeat_again(c->sit == S_NULL_TIMER ? NULL : &c->r);
}

/* r was started once (interval 0, 10 ms from the base's now) and
 * cancelled: due by the middle of time, one period. */
static long long do_repeat_periods(struct ctx *c)
{
	return hrt_repeat_periods(c->sit == S_NULL_TIMER ? NULL : &c->r, HRT_TIME_MAX / 2);
}

/* The host's part of hrt_base_loop_host: no deadline, nothing to run. */
static hrt_time_t host_timeout(void *arg)
{
	(void)arg;
	return -1;
}

static int host_run(void *arg)
{
	(void)arg;
	return 0;
}

/* As do_loop, with a pipe for the host's fd. */
static long long do_loop_host(struct ctx *c)
{
	int p[2], r;

	if (pipe(p))
		return R_NOSETUP;
	if (B(c))
		hrt_timer_start(&c->stopper, c->b, 4, HRT_MODE_ABS);
	r = hrt_base_loop_host(B(c), p[0], P(c, host_timeout), host_run, NULL);
	close(p[0]);
	close(p[1]);
	return r;
}

static long long do_hold_fd(struct ctx *c)
{
	return hrt_base_hold_fd(B(c), 1);
}

/* The plan runs t (due), then nothing is queued: 0, the timerfd path. */
static long long do_plan_sleep(struct ctx *c)
{
	hrt_time_t delay;

	return hrt_base_plan_sleep(B(c), 1000000, P(c, &delay));
}

/* Planned first (as the planner would be), in the same situation. */
static long long do_plan_wake(struct ctx *c)
{
	hrt_time_t delay;

	hrt_base_plan_sleep(B(c), 1000000, &delay);
	return hrt_base_plan_wake(B(c));
}

static long long do_plan_done(struct ctx *c)
{
	hrt_time_t delay;

	hrt_base_plan_sleep(B(c), 1000000, &delay);
	return hrt_base_plan_done(B(c));
}

#define EDEADLK_ (-(long long)EDEADLK)
#define EINVAL_ (-(long long)EINVAL)
#define EPERM_ (-(long long)EPERM)
#define EBUSY_ (-(long long)EBUSY)
#define ECHILD_ (-(long long)ECHILD)
#define MAX_ ((long long)HRT_TIME_MAX)
#define MONO_ ((long long)CLOCK_MONOTONIC)

/*
 * Expected results.  The owner column is the control: what the call does
 * in the prepared world with no situation in the way.  hrt.h's conventions
 * settle almost every cell: NULL is -EINVAL first, a foreign thread -EPERM,
 * a change from a walk callback -EDEADLK, a pass of the base's own -EBUSY.
 * Where hrt.h says nothing, the values chosen (OURS) follow these rules:
 *  - calls that touch no existing base (hrt_version, hrt_base_new,
 *    hrt_timer_init of a fresh timer) work everywhere;
 *  - the walk callback: queries of the walked base answer (hrt.h names
 *    count, next_event, get_stats, is_running, check and walk; the other
 *    getters are queries too);
 *  - a callback of a pass may change its base's settings, clock and stats
 *    and take its fd (hrt.h forbids only free, a pass, and waits).
 */
static const struct row rows[] = {
/*	  name, adapter, after, flags,
 *	  owner      NULL b       NULL t       NULL p       fork          foreign        walk             pass          loop */
	{ "hrt_version", do_version, NULL, 0,
	{ DOC(1),    NA,          NA,          NA,          DOC(1),       DOC(1),        OURS(1),         OURS(1),      OURS(1) } },
	{ "hrt_base_new", do_new, NULL, F_ERRNO,
	{ DOC(1),    NA,          NA,          DOC(EINVAL_), DOC(1),      DOC(1),        OURS(1),         OURS(1),      OURS(1) } },
	{ "hrt_base_new UNLOCKED", do_new_unlocked, NULL, F_ERRNO,
	{ DOC(1),    NA,          NA,          DOC(EINVAL_), DOC(1),      DOC(1),        OURS(1),         OURS(1),      OURS(1) } },
	{ "hrt_base_free", do_free, NULL, F_ERRNO,
	{ DOC(0),    DOC(EINVAL_), NA,         NA,          DOC(0),       DOC(EPERM_),   DOC(EBUSY_),     DOC(EBUSY_),  DOC(EBUSY_) } },
	{ "hrt_base_set_greedy", do_set_greedy, NULL, F_ERRNO,
	{ DOC(0),    DOC(EINVAL_), NA,         NA,          DOC(0),       DOC(EPERM_),   DOC(EDEADLK_),   OURS(0),      OURS(0) } },
	{ "hrt_base_get_greedy", do_get_greedy, NULL, F_ERRNO,
	{ DOC(2),    DOC(EINVAL_), NA,         NA,          DOC(2),       DOC(EPERM_),   OURS(2),         DOC(2),       DOC(2) } },
	{ "hrt_base_get_clock", do_get_clock, NULL, F_ERRNO,
	{ DOC(MONO_), DOC(EINVAL_), NA,        DOC(EINVAL_), DOC(MONO_),  DOC(EPERM_),   OURS(MONO_),     DOC(MONO_),   DOC(MONO_) } },
	{ "hrt_base_now", do_now, NULL, F_ERRNO,
	{ DOC(1),    DOC(EINVAL_), NA,         DOC(EINVAL_), DOC(1),      DOC(EPERM_),   OURS(1),         DOC(1),       DOC(1) } },
	{ "hrt_base_set_time", do_set_time, NULL, F_VIRT | F_ERRNO,
	{ DOC(0),    DOC(EINVAL_), NA,         NA,          DOC(0),       DOC(EPERM_),   DOC(EDEADLK_),   OURS(0),      NA } },
	{ "hrt_base_next_event", do_next_event, NULL, F_ERRNO,
	{ DOC(3),    DOC(EINVAL_), NA,         DOC(EINVAL_), DOC(3),      DOC(EPERM_),   DOC(3),          DOC(3),       DOC(3) } },
	{ "hrt_base_count", do_count, NULL, F_ERRNO,
	{ DOC(1),    DOC(EINVAL_), NA,         NA,          DOC(1),       DOC(EPERM_),   DOC(1),          DOC(1),       DOC(1) } },
	{ "hrt_base_run", do_run, NULL, F_ERRNO,
	{ DOC(1),    DOC(EINVAL_), NA,         NA,          DOC(1),       DOC(EPERM_),   DOC(EDEADLK_),   DOC(EBUSY_),  DOC(EBUSY_) } },
	{ "hrt_base_get_stats", do_get_stats, NULL, F_ERRNO,
	{ DOC(1),    DOC(EINVAL_), NA,         DOC(EINVAL_), DOC(1),      DOC(EPERM_),   DOC(1),          DOC(1),       DOC(1) } },
	{ "hrt_base_reset_stats", do_reset_stats, NULL, F_ERRNO,
	{ DOC(1),    DOC(EINVAL_), NA,         NA,          DOC(1),       DOC(EPERM_),   DOC(EDEADLK_),   OURS(1),      OURS(1) } },
	{ "hrt_timer_init", do_init, NULL, F_ERRNO,
	{ DOC(0),    NA,          DOC(EINVAL_), DOC(EINVAL_), DOC(0),     DOC(0),        OURS(0),         OURS(0),      OURS(0) } },
	{ "hrt_timer_start_range", do_start_range, NULL, F_ERRNO,
	{ DOC(0),    DOC(EINVAL_), DOC(EINVAL_), NA,        DOC(0),       DOC(EPERM_),   DOC(EDEADLK_),   DOC(0),       DOC(0) } },
	{ "hrt_timer_start", do_start, NULL, F_ERRNO,
	{ DOC(0),    DOC(EINVAL_), DOC(EINVAL_), NA,        DOC(0),       DOC(EPERM_),   DOC(EDEADLK_),   DOC(0),       DOC(0) } },
	{ "hrt_timer_cancel", do_cancel, NULL, F_ERRNO,
	{ DOC(1),    NA,          DOC(EINVAL_), NA,         DOC(1),       DOC(EPERM_),   DOC(EDEADLK_),   DOC(1),       DOC(1) } },
	{ "hrt_timer_try_cancel", do_try_cancel, NULL, F_ERRNO,
	{ DOC(1),    NA,          DOC(EINVAL_), NA,         DOC(1),       DOC(EPERM_),   DOC(EDEADLK_),   DOC(1),       DOC(1) } },
	{ "hrt_timer_forward", do_forward, NULL, F_ERRNO,
	{ DOC(10),   NA,          DOC(EINVAL_), NA,         DOC(10),      DOC(EPERM_),   DOC(EDEADLK_),   DOC(10),      DOC(10) } },
	{ "hrt_timer_is_queued", do_is_queued, NULL, F_ERRNO,
	{ DOC(1),    NA,          DOC(EINVAL_), NA,         DOC(1),       DOC(EPERM_),   OURS(1),         DOC(1),       DOC(1) } },
	{ "hrt_timer_is_running", do_is_running, NULL, F_ERRNO,
	{ DOC(0),    NA,          DOC(EINVAL_), NA,         DOC(0),       DOC(EPERM_),   DOC(0),          DOC(0),       DOC(0) } },
	{ "hrt_timer_get_soft", do_get_soft, NULL, F_ERRNO,
	{ DOC(2),    NA,          DOC(EINVAL_), DOC(EINVAL_), DOC(2),     DOC(EPERM_),   OURS(2),         DOC(2),       DOC(2) } },
	{ "hrt_timer_get_hard", do_get_hard, NULL, F_ERRNO,
	{ DOC(3),    NA,          DOC(EINVAL_), DOC(EINVAL_), DOC(3),     DOC(EPERM_),   OURS(3),         DOC(3),       DOC(3) } },
	{ "hrt_timer_get_base", do_get_base, NULL, F_ERRNO,
	{ DOC(1),    NA,          DOC(EINVAL_), DOC(EINVAL_), DOC(1),     DOC(EPERM_),   OURS(1),         DOC(1),       DOC(1) } },
	{ "hrt_base_walk_tree", do_walk_tree, NULL, F_ERRNO,
	{ DOC(1),    DOC(EINVAL_), NA,         DOC(EINVAL_), DOC(1),      DOC(EPERM_),   DOC(1),          DOC(1),       DOC(1) } },
	{ "hrt_base_check", do_check, NULL, F_ERRNO,
	{ DOC(0),    DOC(EINVAL_), NA,         DOC(0),      DOC(0),       DOC(EPERM_),   DOC(0),          DOC(0),       DOC(0) } },
	{ "hrt_base_fd", do_fd, NULL, F_ERRNO,
	{ DOC(1),    DOC(EINVAL_), NA,         NA,          DOC(ECHILD_), DOC(EPERM_),   DOC(EDEADLK_),   OURS(1),      OURS(1) } },
	{ "hrt_base_dispatch", do_dispatch, NULL, F_ERRNO,
	{ DOC(1),    DOC(EINVAL_), NA,         NA,          DOC(ECHILD_), DOC(EPERM_),   DOC(EDEADLK_),   DOC(EBUSY_),  DOC(EBUSY_) } },
	{ "hrt_base_loop", do_loop, NULL, F_ERRNO,
	{ DOC(0),    DOC(EINVAL_), NA,         NA,          DOC(ECHILD_), DOC(EPERM_),   DOC(EDEADLK_),   DOC(EBUSY_),  DOC(EBUSY_) } },
	{ "hrt_base_stop", do_stop, NULL, F_ERRNO,
	{ DOC(0),    DOC(EINVAL_), NA,         NA,          DOC(ECHILD_), DOC(EPERM_),   DOC(EDEADLK_),   DOC(0),       DOC(0) } },
	{ "hrt_base_set_coalesce", do_set_coalesce, NULL, F_ERRNO,
	{ DOC(0),    DOC(EINVAL_), NA,         NA,          DOC(0),       DOC(EPERM_),   DOC(EDEADLK_),   OURS(0),      OURS(0) } },
	{ "hrt_base_get_coalesce", do_get_coalesce, NULL, F_ERRNO,
	{ DOC(1),    DOC(EINVAL_), NA,         NA,          DOC(1),       DOC(EPERM_),   OURS(1),         DOC(1),       DOC(1) } },
	{ "hrt_base_wait_window", do_wait_window, NULL, F_ERRNO,
	{ DOC(1),    DOC(EINVAL_), NA,         DOC(EINVAL_), DOC(1),      DOC(EPERM_),   DOC(EDEADLK_),   DOC(1),       DOC(1) } },
	/* Since 1.1. */
	{ "hrt_base_loop_host", do_loop_host, NULL, F_ERRNO,
	{ DOC(0),    DOC(EINVAL_), NA,         DOC(EINVAL_), DOC(ECHILD_), DOC(EPERM_),  DOC(EDEADLK_),   DOC(EBUSY_),  DOC(EBUSY_) } },
	{ "hrt_base_hold_fd", do_hold_fd, NULL, F_ERRNO,
	{ DOC(0),    DOC(EINVAL_), NA,         NA,          DOC(ECHILD_), DOC(EPERM_),   DOC(EDEADLK_),   OURS(0),      DOC(EBUSY_) } },
	{ "hrt_base_plan_sleep", do_plan_sleep, NULL, F_ERRNO,
	{ DOC(0),    DOC(EINVAL_), NA,         DOC(EINVAL_), DOC(ECHILD_), DOC(EPERM_),  DOC(EDEADLK_),   DOC(EBUSY_),  DOC(EBUSY_) } },
	{ "hrt_base_plan_done", do_plan_done, NULL, F_ERRNO,
	{ DOC(0),    DOC(EINVAL_), NA,         NA,          DOC(ECHILD_), DOC(EPERM_),   DOC(EDEADLK_),   DOC(EPERM_),  DOC(EPERM_) } },
	/* Since 1.2. */
	{ "hrt_base_plan_wake", do_plan_wake, NULL, F_ERRNO,
	{ DOC(0),    DOC(EINVAL_), NA,         NA,          DOC(ECHILD_), DOC(EPERM_),   DOC(EDEADLK_),   DOC(EPERM_),  DOC(EPERM_) } },
	{ "hrt_base_set_pass_limit", do_set_pass_limit, NULL, F_ERRNO,
	{ DOC(0),    DOC(EINVAL_), NA,         NA,          DOC(0),       DOC(EPERM_),   DOC(EDEADLK_),   DOC(0),       DOC(0) } },
	{ "hrt_base_get_pass_limit", do_get_pass_limit, NULL, F_ERRNO,
	{ DOC(0),    DOC(EINVAL_), NA,         DOC(EINVAL_), DOC(0),      DOC(EPERM_),   OURS(0),         DOC(0),       DOC(0) } },
	{ "hrt_repeat_init", do_repeat_init, NULL, F_ERRNO,
	{ DOC(0),    NA,          DOC(EINVAL_), DOC(EINVAL_), DOC(0),     DOC(0),        OURS(0),         OURS(0),      OURS(0) } },
	{ "hrt_repeat_start", do_repeat_start, NULL, F_ERRNO,
	{ DOC(0),    DOC(EINVAL_), DOC(EINVAL_), NA,        DOC(0),       DOC(EPERM_),   DOC(EDEADLK_),   DOC(0),       DOC(0) } },
	{ "hrt_repeat_again", do_repeat_again, NULL, F_ERRNO,
	{ DOC(0),    NA,          DOC(EINVAL_), NA,         DOC(0),       DOC(EPERM_),   DOC(EDEADLK_),   DOC(0),       DOC(0) } },
	/* Since 1.3. */
	{ "hrt_repeat_periods", do_repeat_periods, NULL, F_ERRNO,
	{ DOC(1),    NA,          DOC(EINVAL_), NA,         DOC(1),       DOC(EPERM_),   OURS(1),         DOC(1),       DOC(1) } },
};

#define NROWS (sizeof(rows) / sizeof(rows[0]))

static long long got[NROWS][S_N];
static int done[NROWS][S_N];

static void call_row(struct ctx *c)
{
	if (c->called++)
		return;
	c->ret = c->row->call(c);
}

static void walk_fn(const struct hrt_tree_node *n, void *arg)
{
	(void)n;
	call_row(arg);
}

static enum hrt_restart cb_fn(struct hrt_timer *t, hrt_time_t now)
{
	struct ctx *c = HRT_CONTAINER_OF(t, struct ctx, cb);

	(void)now;
	call_row(c);
	if (c->sit == S_LOOP && !c->freed)
		hrt_base_stop(c->b);
	return HRT_NORESTART;
}

static void *foreign_fn(void *arg)
{
	call_row(arg);
	return NULL;
}

static int prepare(struct ctx *c)
{
	if (hrt_base_new(&c->b, CLOCK_MONOTONIC, ((c->row->flags & F_VIRT) ? HRT_BASE_VIRTUAL : 0) |
			 (c->sit == S_FOREIGN ? HRT_BASE_UNLOCKED : 0)))
		return -1;
	if (hrt_base_set_greedy(c->b, HRT_GREEDY_ALWAYS) || hrt_base_set_coalesce(c->b, 1))
		return -1;
	if (!(c->row->flags & F_VIRT) && hrt_base_fd(c->b) < 0)
		return -1;
	hrt_timer_init(&c->t, noop);
	hrt_timer_init(&c->u, noop);
	hrt_timer_init(&c->cb, cb_fn);
	hrt_timer_init(&c->stopper, stop_own_base);
	hrt_repeat_init(&c->r, noop);
	if (hrt_repeat_start(&c->r, c->b, 10 * MS, 0, 0, HRT_MODE_REL) ||
	    hrt_timer_cancel(&c->r.timer) != 1)
		return -1;
	if (hrt_timer_start_range(&c->u, c->b, 2, 1, HRT_MODE_ABS) || hrt_timer_cancel(&c->u) != 1 ||
	    hrt_timer_start_range(&c->t, c->b, 2, 1, HRT_MODE_ABS))
		return -1;
	if ((c->sit == S_PASS || c->sit == S_LOOP) &&
	    hrt_timer_start(&c->cb, c->b, 1, HRT_MODE_ABS))
		return -1;
	return 0;
}

/* In the child: the situation around the call. */
static void cell_child(void *arg, long long *v)
{
	struct ctx *c = arg;
	pthread_t th;

	if (c->sit != S_FORK && prepare(c)) {
		v[0] = R_NOSETUP;
		return;
	}
	switch (c->sit) {
	case S_FOREIGN:
		if (pthread_create(&th, NULL, foreign_fn, c) == 0)
			pthread_join(th, NULL);
		break;
	case S_WALK:
		hrt_base_walk_tree(c->b, walk_fn, c);
		break;
	case S_PASS:
		hrt_base_run(c->b, 1000, 0);
		break;
	case S_LOOP:
		hrt_base_loop(c->b);
		break;
	default:
		call_row(c);
		break;
	}
	if (!c->called)
		v[0] = R_NOCALL;
	else if (c->row->after && !c->freed)
		v[0] = c->row->after(c);
	else
		v[0] = c->ret;
}

static long long run_cell(const struct row *r, enum sit s)
{
	struct ctx c;
	struct outcome o;

	memset(&c, 0, sizeof(c));
	c.row = r;
	c.sit = s;
	if (s == S_FORK && prepare(&c))
		return R_NOSETUP;
	o = in_child(cell_child, &c, CELL_MS);
	if (s == S_FORK) {
		hrt_timer_cancel(&c.t);
		hrt_base_free(c.b);
	}
	if (o.hung)
		return R_HANG;
	if (!o.got)
		return R_DIED;
	if (!WIFEXITED(o.status) || WEXITSTATUS(o.status) != 0)
		return R_EXIT;
	return o.v[0];
}

/* A result as the table prints it: errno names only where the call
 * returns an errno (hrt_base_get_clock's -1 is not -EPERM). */
static const char *show(long long v, unsigned flags, char *buf, size_t len)
{
	static const struct { long long v; unsigned need; const char *s; } names[] = {
		{ R_HANG, 0, "hang" }, { R_DIED, 0, "died" }, { R_NOCALL, 0, "not-called" },
		{ R_NOSETUP, 0, "no-setup" }, { R_EXIT, 0, "exit!=0" }, { MAX_, 0, "MAX" },
		{ EINVAL_, F_ERRNO, "-EINVAL" }, { EPERM_, F_ERRNO, "-EPERM" },
		{ EDEADLK_, F_ERRNO, "-EDEADLK" }, { EBUSY_, F_ERRNO, "-EBUSY" },
		{ ECHILD_, F_ERRNO, "-ECHILD" },
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].v == v && (names[i].need & flags) == names[i].need)
			return names[i].s;
	snprintf(buf, len, "%lld", v);
	return buf;
}

/* Runs one column; prints every cell that differs, then fails if any did. */
static void check_column(enum sit s)
{
	unsigned bad = 0;

	for (size_t i = 0; i < NROWS; i++) {
		const struct cell *w = &rows[i].want[s];
		char a[32], b[32];

		if (!w->how)
			continue;
		got[i][s] = run_cell(&rows[i], s);
		done[i][s] = 1;
		if (got[i][s] == w->v)
			continue;
		bad++;
		print_message("    %-22s %-8s returns %s, hrt.h %s %s\n", rows[i].name, sit_name[s],
			      show(got[i][s], rows[i].flags, a, sizeof(a)),
			      w->how == 'd' ? "says" : "is silent; this test wants",
			      show(w->v, rows[i].flags, b, sizeof(b)));
	}
	if (bad)
		fail_msg("%u call(s) %s answer otherwise than hrt.h says", bad, sit_name[s]);
}

static void test_owner_calls_give_their_plain_results(void **state)
{
	(void)state;
	check_column(S_OWNER);
}

static void test_null_base_gets_the_documented_null_answer(void **state)
{
	(void)state;
	check_column(S_NULL_BASE);
}

static void test_null_timer_gets_the_documented_null_answer(void **state)
{
	(void)state;
	check_column(S_NULL_TIMER);
}

static void test_null_out_or_callback_pointer_gets_the_documented_answer(void **state)
{
	(void)state;
	check_column(S_NULL_PTR);
}

static void test_forked_child_gets_echild_from_the_fd_calls_and_the_rest_works(void **state)
{
	(void)state;
	check_column(S_FORK);
}

static void test_foreign_thread_on_unlocked_base_gets_eperm(void **state)
{
	(void)state;
	check_column(S_FOREIGN);
}

static void test_walk_callback_may_query_its_base_but_not_change_it(void **state)
{
	(void)state;
	check_column(S_WALK);
}

static void test_pass_callback_may_not_run_a_pass_of_its_own_base(void **state)
{
	(void)state;
	check_column(S_PASS);
}

static void test_loop_callback_may_not_run_a_pass_or_loop_of_its_own_base(void **state)
{
	(void)state;
	check_column(S_LOOP);
}

/* The whole table as it ran: "got" per cell, "got!want" where they differ,
 * "~" after a value hrt.h does not settle. */
static int print_table(void **state)
{
	(void)state;
	print_message("\n%-22s", "call \\ situation");
	for (int s = 0; s < S_N; s++)
		print_message(" %-12s", sit_name[s]);
	print_message("\n");
	for (size_t i = 0; i < NROWS; i++) {
		print_message("%-22s", rows[i].name);
		for (int s = 0; s < S_N; s++) {
			const struct cell *w = &rows[i].want[s];
			char a[32], b[32], out[80];

			if (!w->how || !done[i][s]) {
				print_message(" %-12s", w->how ? "(not run)" : "-");
				continue;
			}
			if (got[i][s] == w->v)
				snprintf(out, sizeof(out), "%s%s", show(w->v, rows[i].flags, a, sizeof(a)),
					 w->how == 'c' ? "~" : "");
			else
				snprintf(out, sizeof(out), "%s!%s%s", show(got[i][s], rows[i].flags, a, sizeof(a)),
					 show(w->v, rows[i].flags, b, sizeof(b)), w->how == 'c' ? "~" : "");
			print_message(" %-12s", out);
		}
		print_message("\n");
	}
	print_message("(1 for hrt_base_now, hrt_base_fd: a real time, an fd; "
		      "get_base: 1 = b; got!want where they differ; "
		      "~: hrt.h does not settle it)\n\n");
	return 0;
}

/* Every HRT_EXTERN function of include/hrt.h (found beside this file, or
 * from the tree's top, where make test runs) has a row: a call added
 * without one is a call whose entry checks nobody tested. */
static void test_table_has_a_row_for_every_call_of_hrt_h(void **state)
{
	char path[4096], line[512];
	const char *slash = strrchr(__FILE__, '/');
	unsigned calls = 0, missing = 0;
	FILE *f;

	(void)state;
	snprintf(path, sizeof(path), "%.*s/../include/hrt.h",
		 slash ? (int)(slash - __FILE__) : 1, slash ? __FILE__ : ".");
	if (!(f = fopen(path, "r")) && !(f = fopen("include/hrt.h", "r")))
		fail_msg("include/hrt.h: cannot open it (from %s or the tree's top)", path);
	while (fgets(line, sizeof(line), f)) {
		char *open = strchr(line, '('), *p;
		size_t len, i;

		if (strncmp(line, "HRT_EXTERN ", 11) != 0 || !open)
			continue;
		for (p = open; p > line && (p[-1] == '_' || isalnum((unsigned char)p[-1])); p--)
			;
		len = (size_t)(open - p);
		calls++;
		for (i = 0; i < NROWS; i++)
			if (strncmp(rows[i].name, p, len) == 0 &&
			    (rows[i].name[len] == 0 || rows[i].name[len] == ' '))
				break;
		if (i == NROWS) {
			print_message("    %.*s: no row in the table\n", (int)len, p);
			missing++;
		}
	}
	fclose(f);
	if (calls < 40)
		fail_msg("include/hrt.h: only %u HRT_EXTERN calls found: the reader is broken", calls);
	if (missing)
		fail_msg("%u call(s) of hrt.h have no row", missing);
}

/* A query that waits for the walk's own lock ----------------------------- */

struct walk_window {
	struct hrt_base *b;
	int calls;
	long long r;
};

static void window_in_walk(const struct hrt_tree_node *n, void *arg)
{
	struct walk_window *w = arg;
	hrt_time_t s, h;

	(void)n;
	if (w->calls++ == 0)
		w->r = hrt_base_wait_window(w->b, &s, &h);
}

static void wait_window_in_walk(void *arg, long long *v)
{
	struct walk_window w = { .b = tv_virtual(0) };
	struct hrt_timer t;

	(void)arg;
	hrt_timer_init(&t, noop);
	hrt_timer_start_range(&t, w.b, 10, 5, HRT_MODE_ABS);
	v[1] = hrt_base_walk_tree(w.b, window_in_walk, &w);
	v[0] = w.r;
}

static void test_wait_window_from_walk_callback_returns_edeadlk(void **state)
{
	struct outcome o;

	(void)state;
	o = in_child(wait_window_in_walk, NULL, FOCUS_MS);
	assert_child_finished(o, "hrt_base_wait_window from a walk callback of its base "
			      "(it waits for the lock the walk holds)");
	assert_int_equal(o.v[0], -EDEADLK);
	assert_int_equal(o.v[1], 1);
}

/* Another thread on an unlocked base: settings and queries --------------- */

struct foreign_view {
	struct hrt_base *b;
	struct hrt_timer *t;
	long long set_greedy, set_coalesce, now, greedy, clock, coalesce;
	long long queued, soft, hard, base_is_b, untouched;
};

static void *foreign_settings(void *arg)
{
	struct foreign_view *f = arg;

	f->set_greedy = hrt_base_set_greedy(f->b, HRT_GREEDY_OFF);
	f->set_coalesce = hrt_base_set_coalesce(f->b, false);
	return NULL;
}

static void *foreign_queries(void *arg)
{
	struct foreign_view *f = arg;

	hrt_time_t v = 0;
	clockid_t clk = 0;
	struct hrt_base *got = NULL;

	f->now = hrt_base_now(f->b, &v);
	f->greedy = hrt_base_get_greedy(f->b);
	f->clock = hrt_base_get_clock(f->b, &clk);
	f->coalesce = hrt_base_get_coalesce(f->b);
	f->queued = hrt_timer_is_queued(f->t);
	f->soft = hrt_timer_get_soft(f->t, &v);
	f->hard = hrt_timer_get_hard(f->t, &v);
	f->base_is_b = hrt_timer_get_base(f->t, &got);
	f->untouched = v == 0 && clk == 0 && got == NULL;
	return NULL;
}

static struct hrt_base *unlocked_with_timer(struct hrt_timer *t)
{
	struct hrt_base *b = tv_new(CLOCK_MONOTONIC, HRT_BASE_UNLOCKED);

	assert_non_null(b);
	assert_int_equal(hrt_base_set_greedy(b, HRT_GREEDY_ALWAYS), 0);
	assert_int_equal(hrt_base_set_coalesce(b, true), 0);
	hrt_timer_init(t, noop);
	assert_int_equal(hrt_timer_start_range(t, b, 60000 * MS, MS, HRT_MODE_REL), 0);
	return b;
}

static void test_foreign_thread_cannot_change_unlocked_base_settings(void **state)
{
	struct hrt_timer t;
	struct hrt_base *b = unlocked_with_timer(&t);
	struct foreign_view f = { .b = b, .t = &t };
	pthread_t th;
	int greedy, coalesce;

	(void)state;
	assert_int_equal(pthread_create(&th, NULL, foreign_settings, &f), 0);
	pthread_join(th, NULL);
	greedy = hrt_base_get_greedy(b);
	coalesce = hrt_base_get_coalesce(b);
	hrt_timer_cancel(&t);
	assert_int_equal(hrt_base_free(b), 0);
	assert_int_equal(f.set_greedy, -EPERM);
	assert_int_equal(f.set_coalesce, -EPERM);
	assert_int_equal(greedy, HRT_GREEDY_ALWAYS);    /* the owner's settings stand */
	assert_int_equal(coalesce, 1);
}

static void test_foreign_thread_gets_eperm_from_unlocked_base_queries(void **state)
{
	struct hrt_timer t;
	struct hrt_base *b = unlocked_with_timer(&t);
	struct foreign_view f = { .b = b, .t = &t };
	pthread_t th;

	(void)state;
	assert_int_equal(pthread_create(&th, NULL, foreign_queries, &f), 0);
	pthread_join(th, NULL);
	hrt_timer_cancel(&t);
	assert_int_equal(hrt_base_free(b), 0);
	assert_int_equal(f.now, -EPERM);
	assert_int_equal(f.greedy, -EPERM);
	assert_int_equal(f.clock, -EPERM);
	assert_int_equal(f.coalesce, -EPERM);
	assert_int_equal(f.queued, -EPERM);
	assert_int_equal(f.soft, -EPERM);
	assert_int_equal(f.hard, -EPERM);
	assert_int_equal(f.base_is_b, -EPERM);
	assert_true(f.untouched);               /* out-parameters only on success */
}

/* A start that follows a timer onto an unlocked base --------------------- */

/*
 * Locked bases L < M (addresses), unlocked base U of the child's main
 * thread O; timer T queued on M.  Thread W holds L's lock (a walk callback
 * that waits).  Thread F, not U's owner, starts T on L: T is on M, a locked
 * base, so the entry check lets it in, and F blocks on L's lock.  Now O
 * moves T from M onto U (allowed: O owns U) and lets W go.  F gets L, finds
 * T moved, and must now be refused (-EPERM) and leave T on U.  Meanwhile O
 * keeps using U, as its owner may: a start that went on would edit U's
 * tree with no lock, which TSan reports and hrt_base_check may catch.
 */
struct steal {
	struct hrt_base *L, *M, *U;
	struct hrt_timer T, on_l, on_u[8];
	atomic_int walking, release, calling;
	atomic_long f_tid;
	int f_ret;
};

static void hold_walk(const struct hrt_tree_node *n, void *arg)
{
	struct steal *s = arg;

	(void)n;
	atomic_store(&s->walking, 1);
	wait_flag(&s->release, 2000);
}

static void *walker(void *arg)
{
	struct steal *s = arg;

	hrt_base_walk_tree(s->L, hold_walk, s);
	return NULL;
}

static void *starter(void *arg)
{
	struct steal *s = arg;

	atomic_store(&s->f_tid, (long)syscall(SYS_gettid));
	atomic_store(&s->calling, 1);
	s->f_ret = hrt_timer_start(&s->T, s->L, 50, HRT_MODE_ABS);
	return NULL;
}

/* Whether thread tid of this process sleeps (here: blocked on a lock). */
static int thread_sleeps(long tid)
{
	char path[64], buf[256], *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/self/task/%ld/stat", tid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && (p[2] == 'S' || p[2] == 'D');
}

static void steal_child(void *arg, long long *v)
{
	struct steal *s = arg;
	pthread_t w, f;
	hrt_time_t end;
	int blocked = 0;

	s->L = tv_virtual(0);
	s->M = tv_virtual(0);
	s->U = tv_virtual(HRT_BASE_UNLOCKED);
	if (s->M < s->L) {      /* F must wait for L before it takes M */
		struct hrt_base *x = s->L;

		s->L = s->M;
		s->M = x;
	}
	hrt_timer_init(&s->T, noop);
	hrt_timer_init(&s->on_l, noop);
	hrt_timer_start(&s->on_l, s->L, 10, HRT_MODE_ABS);     /* the walk's one node */
	hrt_timer_start(&s->T, s->M, 20, HRT_MODE_ABS);
	for (int i = 0; i < 8; i++) {
		hrt_timer_init(&s->on_u[i], noop);
		hrt_timer_start(&s->on_u[i], s->U, 100 + i, HRT_MODE_ABS);
	}
	pthread_create(&w, NULL, walker, s);
	wait_flag(&s->walking, 2000);
	pthread_create(&f, NULL, starter, s);
	wait_flag(&s->calling, 2000);
	end = mono() + 1000 * MS;
	while (!(blocked = thread_sleeps(atomic_load(&s->f_tid))) && mono() < end)
		sched_yield();
	pause_ms(2);
	v[2] = hrt_timer_start(&s->T, s->U, 30, HRT_MODE_ABS);     /* the owner moves it */
	atomic_store(&s->release, 1);
	for (int i = 0; i < 20000; i++)         /* the owner goes on using U */
		hrt_timer_start(&s->on_u[i & 7], s->U, 100 + (i * 7919) % 1000, HRT_MODE_ABS);
	pthread_join(f, NULL);
	pthread_join(w, NULL);
	v[0] = s->f_ret;
	v[1] = tv_base(&s->T) == s->U ? 1 : tv_base(&s->T) == s->L ? 2 : 0;
	v[3] = hrt_base_check(s->U, NULL, 0);
	v[4] = blocked;
	v[5] = (long long)hrt_base_count(s->U);
}

static void test_start_from_non_owner_never_follows_timer_onto_unlocked_base(void **state)
{
	static struct steal s;
	struct outcome o;

	(void)state;
	for (int attempt = 0; attempt < 3; attempt++) {        /* until F was seen blocked */
		memset(&s, 0, sizeof(s));
		o = in_child(steal_child, &s, 3000);
		assert_child_finished(o, "start racing a move onto an unlocked base");
		if (o.v[4])
			break;
		print_message("    (the starting thread was not seen blocked on the lock)\n");
	}
	assert_int_equal(o.v[2], 0);            /* the owner's move */
	if (o.v[0] == 0)
		fail_msg("a thread that does not own the unlocked base took the timer off it "
			 "(start returned 0, timer now on %s; U's check %lld)",
			 o.v[1] == 2 ? "L" : o.v[1] == 1 ? "U" : "?", o.v[3]);
	assert_int_equal(o.v[0], -EPERM);
	assert_int_equal(o.v[1], 1);            /* still on U */
	assert_int_equal(o.v[3], 0);
	assert_int_equal(o.v[5], 9);
	assert_child_exited_cleanly(o, "start racing a move onto an unlocked base");
}

/* Ownership outlives the owner thread ------------------------------------ */

struct heir {
	struct hrt_base *b;
	long long r;
};

static void *make_unlocked(void *arg)
{
	struct heir *h = arg;

	h->b = tv_virtual(HRT_BASE_UNLOCKED);
	return NULL;
}

static void *try_base(void *arg)
{
	struct heir *h = arg;

	h->r = hrt_base_check(h->b, NULL, 0);
	return NULL;
}

/*
 * An unlocked base belongs to the thread that made it, and to no thread
 * made after that one exited, even one that reuses its stack and TLS
 * block.  (The other way out, hrt.h naming who may free such a base once
 * its creator is gone, would change what the later threads expect here.)
 * In a child: no thread can free the base once its creator is gone, so
 * the child's exit takes it.  NV - 1 later threads each try it; v[i] is
 * what each got, v[NV - 1] the count of threads accepted.
 */
static void heir_child(void *arg, long long *v)
{
	struct heir h = { 0 };
	pthread_t th;

	(void)arg;
	pthread_create(&th, NULL, make_unlocked, &h);
	pthread_join(th, NULL);
	if (!h.b) {
		v[NV - 1] = -1;
		return;
	}
	for (int i = 0; i < NV - 1; i++) {
		h.r = 1;
		pthread_create(&th, NULL, try_base, &h);
		pthread_join(th, NULL);
		v[i] = h.r;
		v[NV - 1] += h.r == 0;
	}
}

static void test_unlocked_base_owner_is_not_a_later_thread_with_the_same_tls(void **state)
{
	struct outcome o;

	(void)state;
	o = in_child(heir_child, NULL, FOCUS_MS);
	assert_child_finished(o, "threads after the owner of an unlocked base");
	assert_int_not_equal(o.v[NV - 1], -1);
	if (o.v[NV - 1])
		fail_msg("%lld of %d threads started after the creator of an unlocked base "
			 "exited were accepted as its owner", o.v[NV - 1], NV - 1);
	for (int i = 0; i < NV - 1; i++)
		assert_int_equal(o.v[i], -EPERM);
}

/* A loop of a base from a callback of its own pass ----------------------- */

struct nested_loop {
	struct hrt_base *b;
	struct hrt_timer a, due;
	long long r, ns;
	int due_ran;
};

static enum hrt_restart loop_from_callback(struct hrt_timer *t, hrt_time_t now)
{
	struct nested_loop *n = HRT_CONTAINER_OF(t, struct nested_loop, a);
	hrt_time_t t0 = mono();

	(void)now;
	n->r = hrt_base_loop(n->b);
	n->ns = mono() - t0;
	return HRT_NORESTART;
}

static enum hrt_restart count_due(struct hrt_timer *t, hrt_time_t now)
{
	struct nested_loop *n = HRT_CONTAINER_OF(t, struct nested_loop, due);

	(void)now;
	n->due_ran++;
	return HRT_NORESTART;
}

static void nested_loop_child(void *arg, long long *v)
{
	struct nested_loop n = { .b = tv_new(CLOCK_MONOTONIC, 0) };

	hrt_base_set_coalesce(n.b, *(const bool *)arg);
	hrt_base_fd(n.b);
	hrt_timer_init(&n.a, loop_from_callback);
	hrt_timer_init(&n.due, count_due);
	hrt_timer_start(&n.a, n.b, 1, HRT_MODE_ABS);
	hrt_timer_start(&n.due, n.b, 2, HRT_MODE_ABS);
	v[2] = (long long)hrt_base_run(n.b, tv_now(n.b), 0);
	v[0] = n.r;
	v[1] = n.ns;
	v[3] = n.due_ran;
}

static void nested_loop(bool coalesce)
{
	struct outcome o = in_child(nested_loop_child, &coalesce, FOCUS_MS);

	assert_child_finished(o, coalesce ? "hrt_base_loop from a callback of its base's pass"
				 : "hrt_base_loop from a callback of its base's pass, no coalescing");
	assert_int_equal(o.v[0], -EBUSY);       /* a pass of its own base runs */
	assert_true(o.v[1] < 100 * MS);         /* at once */
	assert_int_equal(o.v[2], 2);            /* and the due timer ran in that pass */
	assert_int_equal(o.v[3], 1);
}

static void test_loop_from_own_pass_callback_returns_at_once(void **state)
{
	(void)state;
	nested_loop(true);
}

static void test_loop_from_own_pass_callback_returns_at_once_without_coalescing(void **state)
{
	(void)state;
	nested_loop(false);
}

/* fork() while another thread is inside a call ---------------------------- */

struct hammer {
	struct hrt_base *b;
	struct hrt_timer t;
	atomic_int stop;
};

static void *hammer_fn(void *arg)
{
	struct hammer *h = arg;

	while (!atomic_load(&h->stop)) {
		hrt_timer_start(&h->t, h->b, 60000 * MS, HRT_MODE_REL);
		hrt_base_count(h->b);
		hrt_timer_cancel(&h->t);
	}
	return NULL;
}

/* Forks while the thread is inside a call; each catches it holding the
 * base lock about half the time. */
#define FORKS 50

static void forked_calls(void *arg, long long *v)
{
	struct hammer *h = arg;
	struct hrt_timer t;

	hrt_timer_init(&t, noop);
	v[0] = (long long)hrt_base_run(h->b, mono(), 0);
	v[1] = hrt_timer_start(&t, h->b, 60000 * MS, HRT_MODE_REL);
	v[2] = hrt_timer_cancel(&t);
	v[3] = 1;
}

static void test_fork_during_a_call_leaves_child_calls_working_or_echild(void **state)
{
	struct hammer h;
	struct outcome o;
	pthread_t th;
	int i;

	(void)state;
	memset(&h, 0, sizeof(h));
	h.b = tv_new(CLOCK_MONOTONIC, 0);
	assert_non_null(h.b);
	hrt_timer_init(&h.t, noop);
	assert_int_equal(pthread_create(&th, NULL, hammer_fn, &h), 0);
	for (i = 0; i < FORKS; i++) {
		o = in_child(forked_calls, &h, FOCUS_MS);
		if (!o.got || o.hung)
			break;
		/* Works, or refuses at once with -ECHILD; never half of each. */
		if (!((o.v[0] == 0 && o.v[1] == 0 && o.v[2] == 1) ||
		      ((size_t)o.v[0] == (size_t)-ECHILD && o.v[1] == -ECHILD &&
		       o.v[2] == -ECHILD)))
			break;
	}
	atomic_store(&h.stop, 1);
	pthread_join(th, NULL);
	hrt_timer_cancel(&h.t);
	assert_int_equal(hrt_base_free(h.b), 0);
	if (i < FORKS && o.hung)
		fail_msg("fork %d: the child's hrt_base_run blocked (its copy of the base "
			 "lock was held by the thread that made a call at the fork)", i + 1);
	if (i < FORKS && !o.got)
		fail_msg("fork %d: the child died (status %#x)", i + 1, o.status);
	if (i < FORKS)
		fail_msg("fork %d: the child got run %lld, start %lld, cancel %lld: neither "
			 "working calls nor -ECHILD", i + 1, o.v[0], o.v[1], o.v[2]);
}

/* A walk from a pass callback after many restarts ------------------------ */

#define RESTARTS 17     /* one more than the pass remembers in place */

struct restarts {
	struct hrt_base *b;
	struct hrt_timer per[RESTARTS], walker, far;
	int far_shown, walk_ret;
};

static enum hrt_restart restart_later(struct hrt_timer *t, hrt_time_t now)
{
	hrt_timer_forward(t, now, 1000);
	return HRT_RESTART;
}

static void find_far(const struct hrt_tree_node *n, void *arg)
{
	struct restarts *r = arg;

	if (n->timer == &r->far)
		r->far_shown = 1;
}

static struct restarts *restarts_of;

static enum hrt_restart walk_now(struct hrt_timer *t, hrt_time_t now)
{
	(void)t;
	(void)now;
	restarts_of->walk_ret = hrt_base_walk_tree(restarts_of->b, find_far, restarts_of);
	return HRT_NORESTART;
}

static void test_walk_from_pass_callback_shows_far_timers_after_many_restarts(void **state)
{
	static struct restarts r;

	(void)state;
	memset(&r, 0, sizeof(r));
	restarts_of = &r;
	r.b = tv_virtual(0);
	assert_non_null(r.b);
	for (int i = 0; i < RESTARTS; i++) {
		hrt_timer_init(&r.per[i], restart_later);
		assert_int_equal(hrt_timer_start(&r.per[i], r.b, 10 + i, HRT_MODE_ABS), 0);
	}
	hrt_timer_init(&r.walker, walk_now);
	assert_int_equal(hrt_timer_start(&r.walker, r.b, 50, HRT_MODE_ABS), 0);
	hrt_timer_init(&r.far, noop);
	assert_int_equal(hrt_timer_start(&r.far, r.b, 10000 * MS, HRT_MODE_ABS), 0);
	assert_int_equal(hrt_base_run(r.b, 100, 0), RESTARTS + 1);
	for (int i = 0; i < RESTARTS; i++)
		hrt_timer_cancel(&r.per[i]);
	hrt_timer_cancel(&r.far);
	assert_int_equal(hrt_base_check(r.b, NULL, 0), 0);
	assert_int_equal(hrt_base_free(r.b), 0);
	if (!r.far_shown)
		fail_msg("the walk from a callback after %d restarts did not show the far timer "
			 "(returned %d)", RESTARTS, r.walk_ret);
	assert_int_equal(r.walk_ret, 1);        /* the far timer; the restarted ones are hidden */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table_has_a_row_for_every_call_of_hrt_h),
		cmocka_unit_test(test_owner_calls_give_their_plain_results),
		cmocka_unit_test(test_null_base_gets_the_documented_null_answer),
		cmocka_unit_test(test_null_timer_gets_the_documented_null_answer),
		cmocka_unit_test(test_null_out_or_callback_pointer_gets_the_documented_answer),
		cmocka_unit_test(test_forked_child_gets_echild_from_the_fd_calls_and_the_rest_works),
		cmocka_unit_test(test_foreign_thread_on_unlocked_base_gets_eperm),
		cmocka_unit_test(test_walk_callback_may_query_its_base_but_not_change_it),
		cmocka_unit_test(test_pass_callback_may_not_run_a_pass_of_its_own_base),
		cmocka_unit_test(test_loop_callback_may_not_run_a_pass_or_loop_of_its_own_base),
		cmocka_unit_test(test_wait_window_from_walk_callback_returns_edeadlk),
		cmocka_unit_test(test_foreign_thread_cannot_change_unlocked_base_settings),
		cmocka_unit_test(test_foreign_thread_gets_eperm_from_unlocked_base_queries),
		cmocka_unit_test(test_start_from_non_owner_never_follows_timer_onto_unlocked_base),
		cmocka_unit_test(test_unlocked_base_owner_is_not_a_later_thread_with_the_same_tls),
		cmocka_unit_test(test_loop_from_own_pass_callback_returns_at_once),
		cmocka_unit_test(test_loop_from_own_pass_callback_returns_at_once_without_coalescing),
		cmocka_unit_test(test_fork_during_a_call_leaves_child_calls_working_or_echild),
		cmocka_unit_test(test_walk_from_pass_callback_shows_far_timers_after_many_restarts),
	};

	signal(SIGPIPE, SIG_IGN);
	alarm(30);              /* every wait has a deadline; this is the last resort */
	return cmocka_run_group_tests(tests, NULL, print_table);
}
