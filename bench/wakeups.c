/* SPDX-License-Identifier: MIT */
/*
 * wakeups.c - real wake-ups of hrt_base_loop on CLOCK_MONOTONIC, against
 * the virtual-clock engine's count for the same timers, with the system
 * calls each wake-up costs and how late the callbacks run.
 *
 * Workload (tests/wakeups.h, the one test_wakeups.c asserts on): N range
 * timers with overlapping ranges - soft expiries t0 + 30 ms + [0, 400 ms),
 * slack drawn from [0, 20 ms], from a fixed seed (one
 * timer set per N, repeated REPS times and used for both policies) - run
 * through hrt_base_loop until the last one has fired (its callback stops
 * the loop; a watchdog thread stops it at a deadline).  Each run takes
 * about 0.45 s; the default N = 1000 and 10000, 3 repetitions, policies
 * off and idle: about 6 s; then the re-arming workload below, about 8 s.
 *
 * Columns, per N and policy (medians over the repetitions unless said):
 *   wakeups     stats.wakeups: timerfd reads that returned an expiration;
 *               min..max over the repetitions after the median
 *   passes      stats.passes (a pass without a wake-up would be a dispatch
 *               that found the fd empty, or an arm retry)
 *   virtual     passes of the virtual engine for the same set, same policy,
 *               idle = 1 (hrt_base_loop dispatches with idle = 1), driven at
 *               each next event: the lower bound to compare wakeups with.
 *               tests/test_wakeups.c argues wakeups <= virtual always holds
 *               (a late wake-up can only merge passes); wakeups < virtual
 *               means scheduling delay merged some.  virtual is the same
 *               for off and idle (same file: with passes only at the next
 *               hard expiry the greedy walk cannot save one); greedy shows
 *               in the lateness instead - it runs soft-expired timers early
 *   w/virt      wakeups / virtual
 *   rd st ep    system calls per wake-up during the loop, totals over the
 *               repetitions / total wake-ups: timerfd read, timerfd_settime
 *               (counted through the library's two seams) and epoll_wait
 *               (counted with -Wl,--wrap=epoll_wait: "-" when the binary was
 *               linked without it); sys = their sum
 *   soft us     fire time - soft expiry (clock_gettime in the callback),
 *               p50 / p99 / max over every timer of every repetition, in
 *               microseconds; never negative (that would be a bug)
 *   hard us     fire time - hard expiry; negative = before the deadline,
 *               positive = past it (scheduling, the pass's own work)
 * Settime calls made while starting the timers are not in "st"; --csv
 * gives them per run (start_settime).
 *
 *     build/bench/wakeups [--csv] [--reps R] [--seed S] [N ...]
 *
 * Needs BENCH_LDFLAGS_wakeups = -Wl,--wrap=epoll_wait for the epoll_wait
 * count; without it the rest is measured the same.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "hrt.h"
#include "base.h"
#include "timerfd.h"
#include "../tests/wakeups.h"   /* the workload, shared with tests/test_wakeups.c */

#define MS WK_MS
#define GRACE (3000 * MS)       /* past the last hard expiry: the watchdog stops the loop */
#define MAX_REPS 20
#define MAX_N 1000000

/* With -Wl,--wrap=epoll_wait every epoll_wait call (the library's included)
 * comes here and __real_epoll_wait is the libc one; without it nothing
 * calls this and the weak reference stays NULL. */
extern int __real_epoll_wait(int epfd, struct epoll_event *ev, int max, int timeout)
	__attribute__((weak));
int __wrap_epoll_wait(int epfd, struct epoll_event *ev, int max, int timeout);

static uint64_t n_read, n_settime, n_epoll;

static ssize_t count_read(int fd, void *buf, size_t len)
{
	n_read++;
	return read(fd, buf, len);
}

static int count_settime(int fd, int flags, const struct itimerspec *nv, struct itimerspec *ov)
{
	n_settime++;
	return timerfd_settime(fd, flags, nv, ov);
}

/* The base's timerfd device counts its system calls (src/timerfd.h). */
static const struct hrt_timerfd_sys count_sys = { count_read, count_settime };

int __wrap_epoll_wait(int epfd, struct epoll_event *ev, int max, int timeout)
{
	n_epoll++;
	return __real_epoll_wait(epfd, ev, max, timeout);
}

static int have_epoll_count(void)
{
	return &__real_epoll_wait != NULL;
}

struct run {
	uint64_t wakeups, passes, reads, settimes, epolls, start_settimes;
	size_t early, missing, nlate;   /* nlate: lateness figures appended */
	int rc, timed_out;
};

/* One run; appends the lateness of every timer that ran to late_soft/late_hard. */
static struct run run_once(struct wk_set *set, enum hrt_greedy policy, double *late_soft,
			   double *late_hard)
{
	struct hrt_base *b = NULL;
	struct run r;
	struct hrt_stats st;
	hrt_time_t t0;

	memset(&r, 0, sizeof(r));
	if (hrt_base_new(&b, CLOCK_MONOTONIC, HRT_BASE_ENV) || hrt_base_set_greedy(b, policy) ||
	    hrt_base_fd(b) < 0) {
		fprintf(stderr, "cannot set up a CLOCK_MONOTONIC base\n");
		exit(1);
	}
	hrt__timerfd_set_sys(hrt__base_device(b), &count_sys);
	n_read = n_settime = n_epoll = 0;
	t0 = wk_now();
	if (wk_start(set, b, t0)) {
		fprintf(stderr, "cannot start the timers\n");
		exit(1);
	}
	r.start_settimes = n_settime;
	n_read = n_settime = n_epoll = 0;
	r.rc = wk_loop(b, t0 + WK_LEAD + WK_SPREAD + WK_MAX_SLACK + GRACE, &r.timed_out);
	r.reads = n_read;
	r.settimes = n_settime;
	r.epolls = n_epoll;
	hrt_base_get_stats(b, &st, sizeof(st));
	r.wakeups = st.wakeups;
	r.passes = st.passes;
	for (size_t i = 0; i < set->n; i++) {
		const struct wk_timer *w = &set->timers[i];

		if (w->fired != 1) {
			r.missing++;
			continue;
		}
		if (w->fired_at < w->soft)
			r.early++;
		late_soft[r.nlate] = (double)(w->fired_at - w->soft) / 1000.0;
		late_hard[r.nlate] = (double)(w->fired_at - w->hard) / 1000.0;
		r.nlate++;
	}
	hrt_base_free(b);
	return r;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* Nearest rank. */
static double pct(const double *sorted, size_t n, double q)
{
	size_t k = (size_t)ceil(q * (double)n);

	if (k < 1)
		k = 1;
	if (k > n)
		k = n;
	return sorted[k - 1];
}

struct row {
	size_t n;
	const char *policy;
	int reps;
	uint64_t wk_med, wk_min, wk_max, passes_med, vpasses, start_settime_med;
	double rd, st, ep, sys;         /* per wake-up; ep < 0: not counted */
	double soft[3], hard[3];        /* p50 p99 max, us */
	size_t early, missing;
	int failed;
};

static uint64_t median_u64(uint64_t *v, int n, uint64_t *min, uint64_t *max)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_u64);
	if (min)
		*min = v[0];
	if (max)
		*max = v[n - 1];
	return v[n / 2];
}

static struct row measure(struct wk_set *set, enum hrt_greedy policy, const char *name, int reps)
{
	size_t n = set->n, ran;
	double *ls = malloc(n * (size_t)reps * sizeof(double));
	double *lh = malloc(n * (size_t)reps * sizeof(double));
	uint64_t wk[MAX_REPS], ps[MAX_REPS], ss[MAX_REPS];
	uint64_t tw = 0, trd = 0, tst = 0, tep = 0;
	size_t nl = 0;
	struct row row;

	if (!ls || !lh) {
		fprintf(stderr, "out of memory\n");
		exit(1);
	}
	memset(&row, 0, sizeof(row));
	row.n = n;
	row.policy = name;
	row.reps = reps;
	row.vpasses = wk_virtual_passes(set, policy, &ran);
	if (ran != n) {
		fprintf(stderr, "N=%zu %s: the virtual engine ran %zu timers\n", n, name, ran);
		row.failed = 1;
	}
	for (int k = 0; k < reps; k++) {
		struct run r = run_once(set, policy, ls + nl, lh + nl);

		if (r.timed_out || r.rc != 0 || r.missing || r.early) {
			fprintf(stderr, "N=%zu %s rep %d: %s rc=%d, %zu timers not run once, %zu early\n",
				n, name, k, r.timed_out ? "TIMED OUT (watchdog stopped the loop)," : "",
				r.rc, r.missing, r.early);
			row.failed = 1;
		}
		row.early += r.early;
		row.missing += r.missing;
		nl += r.nlate;
		wk[k] = r.wakeups;
		ps[k] = r.passes;
		ss[k] = r.start_settimes;
		tw += r.wakeups;
		trd += r.reads;
		tst += r.settimes;
		tep += r.epolls;
	}
	row.wk_med = median_u64(wk, reps, &row.wk_min, &row.wk_max);
	row.passes_med = median_u64(ps, reps, NULL, NULL);
	row.start_settime_med = median_u64(ss, reps, NULL, NULL);
	if (tw) {
		row.rd = (double)trd / (double)tw;
		row.st = (double)tst / (double)tw;
		row.ep = have_epoll_count() ? (double)tep / (double)tw : -1;
		row.sys = row.rd + row.st + (row.ep > 0 ? row.ep : 0);
	}
	if (nl) {
		qsort(ls, nl, sizeof(double), cmp_d);
		qsort(lh, nl, sizeof(double), cmp_d);
		row.soft[0] = pct(ls, nl, 0.50);
		row.soft[1] = pct(ls, nl, 0.99);
		row.soft[2] = ls[nl - 1];
		row.hard[0] = pct(lh, nl, 0.50);
		row.hard[1] = pct(lh, nl, 0.99);
		row.hard[2] = lh[nl - 1];
	}
	free(ls);
	free(lh);
	return row;
}

static void print_table_header(int reps, uint64_t seed)
{
	printf("hrt_base_loop on CLOCK_MONOTONIC: N timers, soft t0+30ms+[0,400ms), slack [0,20ms],\n"
	       "seed %" PRIu64 ", %d repetitions; medians, syscalls per wake-up, lateness in us\n\n",
	       seed, reps);
	printf("%6s %-6s %16s %6s %7s %6s | %5s %5s %5s %5s | %21s | %21s\n", "", "", "", "", "",
	       "", "", "", "", "", "fire - soft (us)", "fire - hard (us)");
	printf("%6s %-6s %16s %6s %7s %6s | %5s %5s %5s %5s | %6s %7s %6s | %6s %7s %6s\n", "N",
	       "policy", "wakeups (range)", "passes", "virtual", "w/virt", "rd", "st", "ep", "sys",
	       "p50", "p99", "max", "p50", "p99", "max");
}

static void print_table_row(const struct row *r)
{
	char wk[32], ep[16];

	snprintf(wk, sizeof(wk), "%" PRIu64 " (%" PRIu64 "..%" PRIu64 ")", r->wk_med, r->wk_min,
		 r->wk_max);
	if (r->ep >= 0)
		snprintf(ep, sizeof(ep), "%.2f", r->ep);
	else
		snprintf(ep, sizeof(ep), "-");
	printf("%6zu %-6s %16s %6" PRIu64 " %7" PRIu64 " %6.3f | %5.2f %5.2f %5s %5.2f | %6.0f %7.0f %6.0f"
	       " | %6.0f %7.0f %6.0f%s\n",
	       r->n, r->policy, wk, r->passes_med, r->vpasses,
	       r->vpasses ? (double)r->wk_med / (double)r->vpasses : 0.0, r->rd, r->st, ep, r->sys,
	       r->soft[0], r->soft[1], r->soft[2], r->hard[0], r->hard[1], r->hard[2],
	       r->failed ? "  FAILED" : "");
}

static void print_csv_header(void)
{
	printf("n,policy,reps,seed,wakeups_median,wakeups_min,wakeups_max,passes_median,"
	       "virtual_passes,wakeups_per_virtual,reads_per_wakeup,settime_per_wakeup,"
	       "epoll_wait_per_wakeup,syscalls_per_wakeup,start_settime_median,"
	       "late_soft_p50_us,late_soft_p99_us,late_soft_max_us,"
	       "late_hard_p50_us,late_hard_p99_us,late_hard_max_us,early,missing\n");
}

static void print_csv_row(const struct row *r, uint64_t seed)
{
	printf("%zu,%s,%d,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
	       ",%.4f,%.4f,%.4f,",
	       r->n, r->policy, r->reps, seed, r->wk_med, r->wk_min, r->wk_max, r->passes_med,
	       r->vpasses, r->vpasses ? (double)r->wk_med / (double)r->vpasses : 0.0, r->rd, r->st);
	if (r->ep >= 0)
		printf("%.4f", r->ep);
	printf(",%.4f,%" PRIu64 ",%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,%zu,%zu\n", r->sys,
	       r->start_settime_med, r->soft[0], r->soft[1], r->soft[2], r->hard[0], r->hard[1],
	       r->hard[2], r->early, r->missing);
}

/* Re-arming workload ------------------------------------------------------
 *
 * One-shot timers cannot show greedy saving wake-ups (see `virtual` above).
 * Timers that re-arm relative to when they ran can: run early, their next
 * expiry moves earlier and lines up with the others'.  RA_TIMERS timers,
 * each re-armed RA_RUNS times from its own callback, REL, period uniform in
 * [20, 40) ms, slack uniform in [0, S] for S = 5 and 20 ms; real
 * (hrt_base_loop) and virtual (a pass at every next event, idle = 1) for
 * each policy.  No bound holds between the two here: a real callback re-arms
 * from a later instant than the virtual one.
 */
#define RA_TIMERS 200
#define RA_RUNS 15

struct ra {
	struct hrt_timer t;
	hrt_time_t period, slack;
	int left;
};

static size_t ra_done;

static enum hrt_restart ra_cb(struct hrt_timer *t, hrt_time_t now)
{
	struct ra *r = (struct ra *)t;
	struct hrt_base *b = NULL;

	(void)now;
	hrt_timer_get_base(t, &b);
	if (--r->left > 0)
		hrt_timer_start_range(t, b, r->period, r->slack, HRT_MODE_REL);
	else if (++ra_done == RA_TIMERS)
		hrt_base_stop(b);
	return HRT_NORESTART;
}

/* Wake-ups (real clock) or passes (virtual) for the whole workload; -1 if
 * the real run did not finish. */
static int64_t ra_run(enum hrt_greedy policy, int real, hrt_time_t max_slack, uint64_t seed)
{
	static struct ra rs[RA_TIMERS];
	struct hrt_base *b = NULL;
	struct hrt_stats st;
	int64_t res;
	int rc = 0, timed_out = 0;

	if (hrt_base_new(&b, CLOCK_MONOTONIC, (real ? 0 : HRT_BASE_VIRTUAL) | HRT_BASE_ENV) ||
	    hrt_base_set_greedy(b, policy) || (real && hrt_base_fd(b) < 0)) {
		fprintf(stderr, "cannot set up a base\n");
		exit(1);
	}
	wk_rng = seed ? seed : 1;
	ra_done = 0;
	for (size_t i = 0; i < RA_TIMERS; i++) {
		rs[i].period = 20 * MS + (hrt_time_t)(wk_rnd() % (uint64_t)(20 * MS));
		rs[i].slack = (hrt_time_t)(wk_rnd() % (uint64_t)(max_slack + 1));
		rs[i].left = RA_RUNS;
		hrt_timer_init(&rs[i].t, ra_cb);
		hrt_timer_start_range(&rs[i].t, b, rs[i].period, rs[i].slack, HRT_MODE_REL);
	}
	if (real)
		rc = wk_loop(b, wk_now() + RA_RUNS * 50 * MS + GRACE, &timed_out);
	else
		wk_drive_virtual(b);
	hrt_base_get_stats(b, &st, sizeof(st));
	res = real ? (int64_t)st.wakeups : (int64_t)st.passes;
	if (rc || timed_out || ra_done != RA_TIMERS ||
	    st.expired != (uint64_t)RA_TIMERS * RA_RUNS)
		res = -1;
	hrt_base_free(b);
	return res;
}

/* The re-arming table (or CSV block); returns 1 if a run failed. */
static int ra_report(int csv, int reps, hrt_time_t max_slack, uint64_t seed)
{
	static const enum hrt_greedy pol[2] = { HRT_GREEDY_OFF, HRT_GREEDY_IDLE };
	static const char *const name[2] = { "off", "idle" };
	uint64_t med[2], vpass[2];
	int failed = 0;

	if (!csv)
		printf("\nre-arming: %d timers, each re-armed %d times from its callback relative to"
		       " now\n(period [20,40) ms, slack [0,%lld] ms); %d repetitions\n\n"
		       "policy  wakeups (range)    virtual\n", RA_TIMERS, RA_RUNS,
		       (long long)(max_slack / MS), reps);
	for (int p = 0; p < 2; p++) {
		uint64_t v[MAX_REPS], mn, mx;
		int64_t vp = ra_run(pol[p], 0, max_slack, seed);

		for (int r = 0; r < reps; r++) {
			int64_t w = ra_run(pol[p], 1, max_slack, seed);

			failed |= w < 0;
			v[r] = w < 0 ? 0 : (uint64_t)w;
		}
		med[p] = median_u64(v, reps, &mn, &mx);
		vpass[p] = vp < 0 ? 0 : (uint64_t)vp;
		failed |= vp < 0;
		if (csv)
			printf("rearm,%s,%d,%d,%lld,%d,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
			       ",%" PRIu64 "\n", name[p], RA_TIMERS, RA_RUNS, (long long)(max_slack / MS),
			       reps, seed, med[p], mn, mx, vpass[p]);
		else
			printf("%-6s %8" PRIu64 " (%" PRIu64 "..%" PRIu64 ") %8" PRIu64 "\n", name[p],
			       med[p], mn, mx, vpass[p]);
	}
	if (!csv && med[0] && vpass[0])
		printf("idle/off: wakeups %.3f, virtual %.3f\n", (double)med[1] / (double)med[0],
		       (double)vpass[1] / (double)vpass[0]);
	if (failed)
		fprintf(stderr, "re-arming workload: a run did not finish\n");
	return failed;
}

static void usage(const char *argv0)
{
	fprintf(stderr, "usage: %s [--csv] [--reps R] [--seed S] [N ...]\n", argv0);
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct {
		enum hrt_greedy policy;
		const char *name;
	} policies[2] = { { HRT_GREEDY_OFF, "off" }, { HRT_GREEDY_IDLE, "idle" } };
	size_t ns[16], nn = 0;
	uint64_t seed = 0x68727431ull;
	int csv = 0, reps = 3, failed = 0;

	for (int i = 1; i < argc; i++) {
		char *end;

		if (!strcmp(argv[i], "--csv")) {
			csv = 1;
		} else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
			reps = (int)strtol(argv[++i], &end, 10);
			if (*end || reps < 1 || reps > MAX_REPS)
				usage(argv[0]);
		} else if (!strcmp(argv[i], "--seed") && i + 1 < argc) {
			seed = strtoull(argv[++i], &end, 0);
			if (*end)
				usage(argv[0]);
		} else {
			unsigned long v = strtoul(argv[i], &end, 10);

			if (*end || v < 1 || v > MAX_N || nn == sizeof(ns) / sizeof(ns[0]))
				usage(argv[0]);
			ns[nn++] = v;
		}
	}
	if (!nn) {
		ns[nn++] = 1000;
		ns[nn++] = 10000;
	}
	if (csv)
		print_csv_header();
	else
		print_table_header(reps, seed);
	for (size_t i = 0; i < nn; i++) {
		struct wk_set set;
		uint64_t draw = seed ^ (0x9e3779b97f4a7c15ull * (ns[i] + 1));

		if (wk_set_init(&set, ns[i], draw)) {
			fprintf(stderr, "out of memory\n");
			return 1;
		}
		for (int p = 0; p < 2; p++) {
			struct row r = measure(&set, policies[p].policy, policies[p].name, reps);

			if (csv)
				print_csv_row(&r, seed);
			else
				print_table_row(&r);
			fflush(stdout);
			failed |= r.failed;
		}
		wk_set_free(&set);
	}
	if (csv)
		printf("\nworkload,policy,timers,runs_each,max_slack_ms,reps,seed,wakeups_median,"
		       "wakeups_min,wakeups_max,virtual_passes\n");
	failed |= ra_report(csv, reps, 5 * MS, seed);
	failed |= ra_report(csv, reps, 20 * MS, seed);
	if (!csv && !have_epoll_count())
		printf("\nep: not counted (link with -Wl,--wrap=epoll_wait)\n");
	return failed;
}
