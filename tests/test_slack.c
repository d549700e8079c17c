/* SPDX-License-Identifier: MIT */
/*
 * test_slack.c - `hrt replay --slack`: the widening rule, each selector,
 * D and P%, bad values, and every output format on a hand-written perf
 * trace whose optima are worked out below.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "unit.h"

#include "../tools/replay/replay.h"
#include "../tools/apply/persist.h"
#include "../tools/replay/slack.h"

/*
 * Six timers on CPU 0, all armed at T0 = 1 s with zero-width windows
 * (soft = hard), times in ms after T0:
 *   A 10    sleeper 100, hrtimer_wakeup       (user space)
 *   B 10.5  sleeper 100, hrtimer_wakeup       (user space)
 *   C 10.8  swapper 0,   tick_nohz_handler    (kernel)
 *   D 12    fdproc 300,  timerfd_tmrproc      (user space)
 *   E 12.5  worker 400,  my_fn                (kernel: not a user function)
 *   H 12.9  swapper 0,   tick_nohz_handler    (kernel)
 * and a last event at 100 ms (Z, armed far ahead: its window stays open,
 * so it is no required window).  Interval stabbing in window-end order:
 *   as recorded: six distinct instants: 6.
 *   1 ms, user (A [10,11] B [10.5,11.5] D [12,13]): ends C 10.8 (stab; A, B
 *     start by then), E 12.5 (stab), H 12.9 (stab; D starts by then): 3.
 *   1 ms, all: ends A 11 (stab: B, C start by then), D 13 (stab: E 12.5,
 *     H 12.9 start by then): 2.
 *   1 ms, sleeper (A, B only): C 10.8 covers A and B; D, E, H alone: 4.
 *   1 ms, sleeper,fdproc: the user set here: 3.
 *   5 %, user (soft - T0 = 10 ms: A [10,10.5], B [10.5,11.025], D
 *     [12,12.6]): A 10.5 (stab), C 10.8 (stab; covers B), E 12.5 (stab;
 *     covers D), H 12.9: 4.
 * Per process, the optimum's wake-ups as recorded are sleeper 2, fdproc 1,
 * [kernel] tick_nohz_handler 2, [kernel] my_fn 1; with 1 ms on user-space
 * timers, the stabs are C, E and H (kernel windows), so sleeper saves 2 and
 * fdproc 1.
 */
#define T0 1000000000LL
#define MS 1000000LL

static char trace[4096];

static void arm(size_t *n, const char *comm, int pid, const char *id, const char *fn,
		long long t, long long soft, long long hard)
{
	*n += (size_t)snprintf(trace + *n, sizeof(trace) - *n,
			       "  %s %d [000] %lld.%09lld: timer:hrtimer_start: hrtimer=%s "
			       "function=%s expires=%lld softexpires=%lld mode=0x1\n", comm, pid,
			       t / T0, t % T0, id, fn, hard, soft);
}

static const char *six(void)
{
	size_t n = 0;

	arm(&n, "sleeper", 100, "0xa", "hrtimer_wakeup", T0, T0 + 10 * MS, T0 + 10 * MS);
	arm(&n, "sleeper", 100, "0xb", "hrtimer_wakeup", T0, T0 + 10500000, T0 + 10500000);
	arm(&n, "swapper", 0, "0xc", "tick_nohz_handler", T0, T0 + 10800000, T0 + 10800000);
	arm(&n, "fdproc", 300, "0xd", "timerfd_tmrproc", T0, T0 + 12 * MS, T0 + 12 * MS);
	arm(&n, "worker", 400, "0xe", "my_fn", T0, T0 + 12500000, T0 + 12500000);
	arm(&n, "swapper", 0, "0xf", "tick_nohz_handler", T0, T0 + 12900000, T0 + 12900000);
	arm(&n, "swapper", 0, "0x10", "tick_nohz_handler", T0 + 100 * MS, T0 + 500 * MS,
	    T0 + 500 * MS);
	return trace;
}

/* Replays text with --slack spec --slack-for who (spec NULL: none). */
static void replay_with(const char *text, const char *spec, const char *who,
			struct slack *sl, struct replay_result *res)
{
	struct trace_reader *r;
	char why[200];

	memset(sl, 0, sizeof(*sl));
	if (spec)
		assert_int_equal(slack_parse(sl, spec, why, sizeof(why)), 0);
	if (who)
		assert_int_equal(slack_parse_for(sl, who, why, sizeof(why)), 0);
	assert_int_equal(trace_open_mem(&r, text, strlen(text), "t", 0, TRACE_AUTO), 0);
	{
		const struct replay_opts o = { RP_ALL, RP_IDLE_TRACE, 1, spec ? sl : NULL, NULL };

		assert_int_equal(replay_trace(r, &o, res), 0);
	}
	trace_close(r);
}

static void optima_are(const char *spec, const char *who, uint64_t recorded, uint64_t widened)
{
	struct slack sl;
	struct replay_result res;

	replay_with(six(), spec, who, &sl, &res);
	assert_int_equal(res.optimal_wakeups_recorded, recorded);
	assert_int_equal(res.optimal_wakeups, widened);
	/* the stock walk is optimal on zero-width and nested windows alike */
	assert_int_equal(res.pol[RP_OFF].wakeups, widened);
	replay_result_free(&res);
	slack_free(&sl);
}

static void test_rule_user_selects_user_space_functions_only(void **state)
{
	(void)state;
	optima_are("1ms", NULL, 6, 3);         /* user is the default */
	optima_are("1ms", "user", 6, 3);
}

static void test_rule_all_selects_every_arming(void **state)
{
	(void)state;
	optima_are("1ms", "all", 6, 2);
	optima_are("1000us", "all", 6, 2);
	optima_are("0.001s", "all", 6, 2);
}

static void test_rule_comm_list_selects_those_processes(void **state)
{
	(void)state;
	optima_are("1ms", "sleeper", 6, 4);
	optima_are("1ms", "sleeper,fdproc", 6, 3);
	optima_are("1ms", "nobody", 6, 6);
}

static void test_rule_percent_of_timeout(void **state)
{
	(void)state;
	optima_are("5%", "user", 6, 4);
	optima_are("10%", "user", 6, 3);       /* 1 ms, 1.05 ms, 1.2 ms */
}

/* Without --slack nothing changes, and the recorded optimum is not kept. */
static void test_rule_no_slack_no_change(void **state)
{
	struct slack sl;
	struct replay_result res;

	(void)state;
	replay_with(six(), NULL, NULL, &sl, &res);
	assert_int_equal(res.optimal_wakeups, 6);
	/* without --slack the policies run the recorded windows: one optimum */
	assert_int_equal(res.optimal_wakeups_recorded, 6);
	assert_null(res.slack);
	replay_result_free(&res);
	optima_are("0ns", "all", 6, 6);
}

/* hard' = max(hard, soft + D); P%: soft + floor(P/100 (soft - T)). */
static void test_widen_formula(void **state)
{
	struct slack s;
	char why[200];

	(void)state;
	memset(&s, 0, sizeof(s));
	assert_int_equal(slack_parse(&s, "1ms", why, sizeof(why)), 0);
	assert_int_equal(slack_widen(&s, 0, 100, 200), 100 + MS);
	assert_int_equal(slack_widen(&s, 0, 100, 100 + 2 * MS), 100 + 2 * MS);  /* max */
	assert_int_equal(slack_widen(&s, 0, HRT_TIME_MAX - 5, HRT_TIME_MAX - 5), HRT_TIME_MAX);
	assert_int_equal(slack_parse(&s, "50%", why, sizeof(why)), 0);
	assert_int_equal(slack_widen(&s, 10, 13, 13), 14);     /* 1.5 ns rounds down */
	assert_int_equal(slack_widen(&s, 20, 13, 13), 13);     /* soft before T: 0 */
	assert_int_equal(slack_parse(&s, "12.5%", why, sizeof(why)), 0);
	assert_int_equal(slack_widen(&s, 0, 800, 0), 900);
	assert_int_equal(slack_parse(&s, "1.5us", why, sizeof(why)), 0);
	assert_int_equal(s.amount, 1500);
	assert_int_equal(slack_parse(&s, "2s", why, sizeof(why)), 0);
	assert_int_equal(s.amount, 2000000000);
	assert_int_equal(slack_parse(&s, "9223372036854775807ns", why, sizeof(why)), 0);
	assert_int_equal(s.amount, HRT_TIME_MAX);
}

static void bad(const char *arg, const char *says)
{
	struct slack s;
	char why[200];

	memset(&s, 0, sizeof(s));
	assert_int_equal(slack_parse(&s, arg, why, sizeof(why)), -1);
	if (!strstr(why, "--slack") || !strstr(why, says))
		fail_msg("--slack '%s': message '%s' lacks '%s'", arg, why, says);
	assert_int_equal(s.kind, SLACK_NONE);
}

static void test_bad_slack_values_are_refused(void **state)
{
	struct slack s;
	char why[200];

	(void)state;
	bad("-1ms", "expected a duration");
	bad("5x", "expected a unit");
	bad("5", "expected a unit");
	bad("", "expected a duration");
	bad(" 1ms", "expected a duration");
	bad("1e3ms", "expected a unit");
	bad("1.ms", "expected a duration");
	bad("9223372036854775808ns", "past the end of time");
	bad("9223372037s", "past the end of time");
	bad("99999999999999999999999s", "expected a duration");
	bad("1000001%", "at most");
	bad("0.0000001%", "6 decimals");
	memset(&s, 0, sizeof(s));
	assert_int_equal(slack_parse_for(&s, "a,,b", why, sizeof(why)), -1);
	assert_int_equal(slack_parse_for(&s, ",a", why, sizeof(why)), -1);
	assert_int_equal(slack_parse_for(&s, "", why, sizeof(why)), -1);
	assert_non_null(strstr(why, "--slack-for"));
}

/* Text of one output of res (which: 0 table, 1 JSON, 2 CSV, 3 verdict). */
static char *output(const struct replay_result *res, int which, int by)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	assert_non_null(f);
	if (which == 0)
		replay_print_table(f, "t", res, by);
	else if (which == 1)
		replay_print_json(f, "t", res, by);
	else if (which == 2) {
		replay_print_csv_header(f, by, res->slack);
		replay_print_csv(f, "t", res, by);
	} else
		replay_print_verdict(f, res);
	assert_int_equal(fclose(f), 0);
	return out;
}

/* The verdict's first sentence gives the table's two optima and their
 * difference in %. */
static void test_verdict_first_says_what_slack_saves(void **state)
{
	struct slack sl;
	struct replay_result res;
	unsigned long long a, b, ta, tb, nw, na;
	double pc;
	char *out, *row;

	(void)state;
	replay_with(six(), "1ms", NULL, &sl, &res);
	out = output(&res, 0, RP_BY_PROCESS);
	assert_int_equal(sscanf(strstr(out, "verdict: "), "verdict: with 1 ms of slack on user-space "
				"timers, the optimum drops from %llu to %llu wake-ups (-%lf %%); %llu "
				"of %llu armings widened.", &a, &b, &pc, &nw, &na), 5);
	assert_non_null(row = strstr(out, "\noptimum "));
	assert_int_equal(sscanf(row, "\noptimum %llu", &tb), 1);
	assert_non_null(row = strstr(out, "\nrecorded "));
	assert_int_equal(sscanf(row, "\nrecorded %llu", &ta), 1);
	assert_int_equal(a, ta);
	assert_int_equal(b, tb);
	assert_int_equal(a, 6);
	assert_int_equal(b, 3);
	assert_true(pc > 49.95 && pc < 50.05);
	assert_int_equal(nw, 3);                /* A, B, D */
	assert_int_equal(na, 7);
	/* the verdict alone is the table's first lines */
	free(out);
	out = output(&res, 3, -1);
	assert_int_equal(strncmp(out, "verdict: with 1 ms of slack on user-space timers, the "
				 "optimum drops from 6 to 3 wake-ups (-50.0 %)", 71), 0);
	assert_non_null(strstr(out, "\n  on the widened windows this trace needs 3 wake-ups "
			       "with greedy off"));
	free(out);
	replay_result_free(&res);
	slack_free(&sl);
}

/* --by: a saved_slack column; the saved list puts the biggest saver first. */
static void test_by_table_ranks_who_should_add_slack(void **state)
{
	struct slack sl;
	struct replay_result res;
	const struct replay_by *by;
	char *out, *list, *first;

	(void)state;
	replay_with(six(), "1ms", NULL, &sl, &res);
	by = &res.by[RP_BY_PROCESS];
	assert_int_equal(by->nsaved, 2);
	assert_string_equal(by->saved[0].name, "sleeper 100");
	assert_int_equal(by->saved[0].opt_rec - by->saved[0].opt, 2);
	assert_string_equal(by->saved[1].name, "fdproc 300");
	assert_int_equal(by->saved[1].opt_rec - by->saved[1].opt, 1);
	out = output(&res, 0, RP_BY_PROCESS);
	assert_non_null(list = strstr(out, "wake-ups saved by process (top 2 of "));
	assert_non_null(strstr(list, "most saved by slack first:\nprocess "));
	assert_non_null(strstr(out, " saved_slack by_slack  by_code\n"));
	first = strchr(strchr(list, '\n') + 1, '\n') + 1;
	assert_int_equal(strncmp(first, "sleeper 100 ", 12), 0);
	assert_non_null(strstr(first, "           2        2        0\n"));
	free(out);
	replay_result_free(&res);
	slack_free(&sl);
}

static void test_json_and_csv_carry_the_slack(void **state)
{
	struct slack sl;
	struct replay_result res;
	char *out;

	(void)state;
	replay_with(six(), "10%", "sleeper,fdproc", &sl, &res);
	out = output(&res, 1, RP_BY_PROCESS);
	assert_non_null(strstr(out, "\"optimal_wakeups\": 3, \"armings_unresolved\""));
	assert_non_null(strstr(out, "\"optimal_wakeups_recorded\": 6, \"slack\": {\"spec\": "
			       "\"10%\", \"percent\": 10.000000, \"for\": [\"sleeper\", "
			       "\"fdproc\"], \"armings_widened\": 3, \"selectable\": true, \"saved\": "
			       "{\"by_slack\": 2, \"needs_code\": 1, \"kernel\": 0}}"));
	assert_non_null(strstr(out, "{\"name\": \"sleeper 100\""));
	assert_non_null(strstr(out, "\"optimum\": 0, \"optimum_recorded\": 2, \"saved_slack\": 2, "
			       "\"saved_by_slack\": 2, \"saved_needs_code\": 0}"));
	free(out);
	out = output(&res, 2, -1);
	assert_non_null(strstr(out, ",complete,slack,slack_for,optimal_wakeups_recorded,"
			       "armings_widened,saved_by_slack,saved_needs_code,saved_kernel\n"));
	assert_non_null(strstr(out, ",10%,\"sleeper,fdproc\",6,3,2,1,0\n"));
	free(out);
	out = output(&res, 2, RP_BY_PROCESS);
	assert_non_null(strstr(out, ",saved_always,optimum,optimum_recorded,saved_slack,"
			       "saved_by_slack,saved_needs_code\n"));
	assert_non_null(strstr(out, "t,process,saved,sleeper 100,"));
	free(out);
	replay_result_free(&res);
	slack_free(&sl);
}

/* The picture is drawn from the widened replay and says so. */
static void test_svg_says_slack(void **state)
{
	struct slack sl;
	struct replay_result res;
	char *out = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	replay_with(six(), "1ms", "all", &sl, &res);
	assert_non_null(f = open_memstream(&out, &len));
	assert_int_equal(replay_write_svg(f, "t", &res), 0);
	assert_int_equal(fclose(f), 0);
	assert_non_null(strstr(out, "1 ms of slack on every timer"));
	assert_non_null(strstr(out, "</svg>"));
	free(out);
	replay_result_free(&res);
	slack_free(&sl);
}

/* v1 has no functions or names: user selects nothing and says so; all
 * works. */
static void test_v1_trace_user_selects_nothing_all_works(void **state)
{
	static const char v1[] = "# hrt-trace v1\n"
		"0 0 start a 10000000 10000000\n"
		"0 0 start b 10500000 10500000\n"
		"100000000 0 idle\n";
	struct slack sl;
	struct replay_result res;
	char *out;

	(void)state;
	replay_with(v1, "1ms", "user", &sl, &res);
	assert_true(res.slack_blind);
	assert_int_equal(res.optimal_wakeups, 2);
	assert_int_equal(res.armings_widened, 0);
	out = output(&res, 3, -1);
	assert_non_null(strstr(out, "nothing changes: hrt-trace v1 has no timer functions"));
	free(out);
	replay_result_free(&res);
	slack_free(&sl);
	replay_with(v1, "1ms", "all", &sl, &res);
	assert_false(res.slack_blind);
	assert_int_equal(res.optimal_wakeups_recorded, 2);
	assert_int_equal(res.optimal_wakeups, 1);
	replay_result_free(&res);
	slack_free(&sl);
}

/* Table columns line up whatever a process name's bytes. */
static void test_multibyte_names_keep_columns(void **state)
{
	static char text[1024];
	struct slack sl;
	struct replay_result res;
	char *out, *a, *b;
	size_t n = 0;

	(void)state;
	n += (size_t)snprintf(text + n, sizeof(text) - n,
			      "  \xc3\xa9t\xc3\xa9 100 [000] 1.000000000: timer:hrtimer_start: "
			      "hrtimer=0xa function=hrtimer_wakeup expires=1010000000 "
			      "softexpires=1010000000 mode=0x1\n"
			      "  ete 200 [000] 1.000000000: timer:hrtimer_start: hrtimer=0xb "
			      "function=hrtimer_wakeup expires=1020000000 softexpires=1020000000 "
			      "mode=0x1\n"
			      "  x 1 [000] 1.100000000: timer:hrtimer_start: hrtimer=0xc "
			      "function=hrtimer_wakeup expires=1900000000 softexpires=1900000000 "
			      "mode=0x1\n");
	replay_with(text, NULL, NULL, &sl, &res);
	out = output(&res, 0, RP_BY_PROCESS);
	assert_non_null(a = strstr(out, "\n\xc3\xa9t\xc3\xa9 100 "));
	assert_non_null(b = strstr(out, "\nete 200 "));
	/* the same number of characters to the line's end: one per byte for
	 * "ete", one per two bytes for "é" */
	assert_int_equal(strchr(a + 1, '\n') - a, strchr(b + 1, '\n') - b + 2);
	free(out);
	replay_result_free(&res);
}

/* The saving split by function class (worked out at the top): as recorded
 * the stabs are A, B (hrtimer_wakeup), D (timerfd_tmrproc), C, E, H
 * (kernel).  1 ms user: C, E, H remain - slack 2, code 1, other 0;
 * 1 ms all: A, D remain - 1, 0, 3; 1 ms sleeper: C, D, E, H - 2, 0, 0.
 * The parts sum to the verdict's saving, and the verdict ends with the
 * command that applies the slack. */
static void split_is(const char *who, int64_t sl_, int64_t code, int64_t other,
		     const char *apply)
{
	struct slack sl;
	struct replay_result res;
	char *v;

	replay_with(six(), "1ms", who, &sl, &res);
	assert_int_equal(res.saved_act[RP_ACT_SLACK], sl_);
	assert_int_equal(res.saved_act[RP_ACT_CODE], code);
	assert_int_equal(res.saved_act[RP_ACT_OTHER], other);
	assert_int_equal(sl_ + code + other,
			 (int64_t)res.optimal_wakeups_recorded - (int64_t)res.optimal_wakeups);
	v = output(&res, 3, -1);
	if (!strstr(v, apply))
		fail_msg("verdict lacks '%s':\n%s", apply, v);
	assert_string_equal(strrchr(strstr(v, apply), '\n'), "\n");   /* the last line */
	free(v);
	replay_result_free(&res);
	slack_free(&sl);
}

static void test_saving_split_by_what_can_act_on_it(void **state)
{
	(void)state;
	split_is("user", 2, 1, 0, "apply: hrt run --slack 1ms -- CMD [ARGS...] (new processes), "
		 "or as root hrt slack 1ms PID|NAME...");
	split_is("all", 1, 0, 3, "apply: hrt run --slack 1ms -- CMD");
	split_is("sleeper", 2, 0, 0, "apply: hrt run --slack 1ms -- sleeper [ARGS...] (new "
		 "processes), or as root hrt slack 1ms sleeper (running");
	split_is("fdproc", 0, 1, 0, "apply: nothing for timer slack to apply here");
}

/* Per process, by_slack and by_code split saved_slack. */
static void test_groups_split_by_what_can_act_on_it(void **state)
{
	struct slack sl;
	struct replay_result res;
	int seen = 0;

	(void)state;
	replay_with(six(), "1ms", "user", &sl, &res);
	for (int i = 0; i < res.by[RP_BY_PROCESS].nsaved; i++) {
		const struct replay_group *g = &res.by[RP_BY_PROCESS].saved[i];

		if (!strcmp(g->name, "sleeper 100")) {
			assert_int_equal(g->saved_act[RP_ACT_SLACK], 2);
			assert_int_equal(g->saved_act[RP_ACT_CODE], 0);
			seen++;
		} else if (!strcmp(g->name, "fdproc 300")) {
			assert_int_equal(g->saved_act[RP_ACT_SLACK], 0);
			assert_int_equal(g->saved_act[RP_ACT_CODE], 1);
			seen++;
		}
	}
	assert_int_equal(seen, 2);
	replay_result_free(&res);
	slack_free(&sl);
}

/*
 * Sleep chains: one task sleeping 1 ms at a time with 50 us of slack,
 * relative sleeps (mode REL), each a new timer address (the kernel stack is
 * randomised): armed at t, soft t + 1 ms, hard soft + 50 us, run by the
 * kernel at hard, the next sleep armed 10 us after that run: a cycle of
 * 1.06 ms, 100 sleeps, then an idle switch at 106 ms ends the trace.
 *   as recorded: off runs each at its hard, the last at 105.99 ms: 100.
 *   --slack 1ms, chains followed: off runs the first at 2 ms (its widened
 *     hard) and each next one 10 us + 2 ms later (at 2 + 2.01 k ms), so by
 *     106 ms the task has slept 52 times: 52.
 *   (keeping every arming where recorded would give 99: each widened window
 *   [soft, soft + 1 ms] ends before the next begins.)
 * An absolute sleep (mode ABS) is no chain: 99 as well.
 */
static const char *chain_trace(const char *mode)
{
	static char t[40000];
	size_t n = 0;
	long long at = T0;

	for (int k = 0; k < 100; k++) {
		long long soft = at + MS, hard = soft + 50000;

		n += (size_t)snprintf(t + n, sizeof(t) - n,
				      "  sleeper 100 [000] %lld.%09lld: timer:hrtimer_start: hrtimer=0x%x "
				      "function=hrtimer_wakeup expires=%lld softexpires=%lld mode=%s\n"
				      "  swapper 0 [000] %lld.%09lld: timer:hrtimer_expire_entry: "
				      "hrtimer=0x%x function=hrtimer_wakeup now=%lld\n",
				      at / T0, at % T0, 0x1000 + k, hard, soft, mode, hard / T0, hard % T0,
				      0x1000 + k, hard);
		at = hard + 10000;
	}
	at = T0 + 106 * MS;
	snprintf(t + n, sizeof(t) - n, "  sleeper 100 [000] %lld.%09lld: sched:sched_switch: "
		 "prev_comm=sleeper prev_pid=100 prev_prio=120 prev_state=S ==> next_comm=swapper/0 "
		 "next_pid=0 next_prio=120\n", at / T0, at % T0);
	return t;
}

static void off_wakeups_are(const char *mode, const char *spec, uint64_t want)
{
	struct slack sl;
	struct replay_result res;

	replay_with(chain_trace(mode), spec, spec ? "sleeper" : NULL, &sl, &res);
	assert_int_equal(res.kernel.wakeups, 100);
	assert_int_equal(res.pol[RP_OFF].wakeups, want);
	replay_result_free(&res);
	slack_free(&sl);
}

static void test_slack_follows_relative_sleep_chains(void **state)
{
	(void)state;
	off_wakeups_are("REL", NULL, 100);
	off_wakeups_are("REL", "1ms", 52);
	off_wakeups_are("0x1", "1ms", 52);      /* perf's numeric mode */
	off_wakeups_are("ABS", "1ms", 99);
}

/*
 * The optimum is a bound on every policy with sleep chains too.  The chain
 * of chain_trace() (1 ms relative sleeps, 50 us of slack, 10 us between a
 * run and the next arming: 300 sleeps) beside a poller on the same CPU
 * whose absolute 2.1 ms sleeps do not chain.  With --slack 1ms every
 * policy runs each sleep at its widened end (the poller's runs fall
 * inside none of the chain's windows' ends), so a chained sleep starts
 * 2 ms after the last one's run and the chain has 164 wake-ups with the
 * poller's; the optimum of the recorded armings widened (every chained
 * sleep where the trace has it) was 299, above all three.  Now it is the
 * optimum of the windows the policies ran: 164, and no group of any
 * table is above a policy either.
 */
static const char *chain_and_poller(void)
{
	static char t[120000];
	size_t n = 0;
	long long at = T0, ch[600], pl[600];
	int nc = 0, np = 0, i = 0, j = 0;

	for (int k = 0; k < 300; k++) {         /* the chain: start, run */
		ch[nc++] = at;
		at += MS + 50000;
		ch[nc++] = at;
		at += 10000;
	}
	for (long long p = T0 + 300000; p < at && np < 600; p += 2100000 + 5000) {
		pl[np++] = p;
		pl[np++] = p + 2100000;
	}
	while (i < nc || j < np) {              /* merged in time order */
		int chain = j >= np || (i < nc && ch[i] <= pl[j]);
		long long t0 = chain ? ch[i] : pl[j];
		int k = chain ? i / 2 : j / 2, start = chain ? !(i % 2) : !(j % 2);
		const char *who = chain ? "  loop 100" : "  poll 200";
		unsigned id = chain ? 0x1000u + (unsigned)k : 0x10000u + (unsigned)k;

		if (start)
			n += (size_t)snprintf(t + n, sizeof(t) - n, "%s [000] %lld.%09lld: "
					      "timer:hrtimer_start: hrtimer=0x%x function=hrtimer_wakeup "
					      "expires=%lld softexpires=%lld mode=%s\n", who, t0 / T0,
					      t0 % T0, id, t0 + (chain ? MS + 50000 : 2100000),
					      t0 + (chain ? MS : 2100000), chain ? "REL" : "ABS");
		else
			n += (size_t)snprintf(t + n, sizeof(t) - n, "  swapper 0 [000] %lld.%09lld: "
					      "timer:hrtimer_expire_entry: hrtimer=0x%x "
					      "function=hrtimer_wakeup now=%lld\n", t0 / T0, t0 % T0, id, t0);
		if (chain)
			i++;
		else
			j++;
	}
	return t;
}

static void test_optimum_bounds_every_policy_with_sleep_chains(void **state)
{
	struct slack sl;
	struct replay_result res;

	(void)state;
	replay_with(chain_and_poller(), "1ms", NULL, &sl, &res);
	assert_true(res.optimal_wakeups_recorded > 164);
	for (int p = 0; p < RP_NPOL; p++) {
		assert_int_equal(res.pol[p].wakeups, 164);
		assert_true(res.optimal_by_policy[p] <= res.pol[p].wakeups);
	}
	assert_int_equal(res.optimal_wakeups, 164);
	for (int b = 0; b < RP_NBY; b++)
		for (int i = 0; i < res.by[b].ntop; i++)
			for (int p = 0; p < RP_NPOL; p++)
				if (res.by[b].top[i].opt > res.by[b].top[i].w[p])
					fail_msg("%s %s: optimum %llu above %s's %llu", replay_by_names[b],
						 res.by[b].top[i].name,
						 (unsigned long long)res.by[b].top[i].opt,
						 replay_policy_names[p],
						 (unsigned long long)res.by[b].top[i].w[p]);
	replay_result_free(&res);
	slack_free(&sl);
}

/* The unit a process's cgroup names (/proc/PID/cgroup, v2 and v1 hybrid):
 * what --persist writes a drop-in for, or why it refuses. */
static void unit_is(const char *cg, enum unit_kind want, const char *unit)
{
	enum unit_kind k;
	char u[256];

	assert_int_equal(persist_unit_of_cgroup(cg, &k, u, sizeof(u)), 0);
	if (k != want || strcmp(u, unit))
		fail_msg("'%s': kind %d '%s', want %d '%s'", cg, (int)k, u, (int)want, unit);
}

static void test_persist_finds_the_service_of_a_cgroup(void **state)
{
	enum unit_kind k;
	char u[256];

	(void)state;
	unit_is("0::/system.slice/nginx.service\n", UNIT_SERVICE, "nginx.service");
	unit_is("0::/system.slice/getty@tty1.service\n", UNIT_SERVICE, "getty@tty1.service");
	unit_is("0::/system.slice/docker.service/payload/x\n", UNIT_SERVICE, "docker.service");
	unit_is("0::/user.slice/user-1000.slice/session-3.scope\n", UNIT_SCOPE, "session-3.scope");
	unit_is("0::/user.slice/user-1000.slice/user@1000.service/app.slice/foo.service\n",
		UNIT_USER_SERVICE, "foo.service");
	unit_is("0::/user.slice/user-1000.slice/user@1000.service\n", UNIT_SERVICE,
		"user@1000.service");
	unit_is("0::/\n", UNIT_NONE, "/");
	unit_is("0::/system.slice\n", UNIT_NONE, "/system.slice");
	unit_is("12:pids:/system.slice/a.service\n1:name=systemd:/system.slice/cron.service\n"
		"0::/system.slice/other.service\n", UNIT_SERVICE, "cron.service");
	assert_int_equal(persist_unit_of_cgroup("", &k, u, sizeof(u)), -1);
	assert_int_equal(persist_unit_of_cgroup("12:pids:/x\n", &k, u, sizeof(u)), -1);
	assert_int_equal(persist_unit_name_ok("nginx.service"), 0);
	assert_int_equal(persist_unit_name_ok("getty@tty1.service"), 0);
	assert_int_equal(persist_unit_name_ok(".service"), -EINVAL);
	assert_int_equal(persist_unit_name_ok("../x.service"), -EINVAL);
	assert_int_equal(persist_unit_name_ok("a/b.service"), -EINVAL);
	assert_int_equal(persist_unit_name_ok("nginx.socket"), -EINVAL);
}

/* A cgroup path names a unit of this system only below its slices: a
 * container's cgroup holds the container's units, whatever their names,
 * and a nested ssh.service there is not the host's. */
static void test_persist_names_no_host_unit_for_a_containers_cgroup(void **state)
{
	(void)state;
	unit_is("0::/lxc.payload.c1/system.slice/ssh.service\n", UNIT_FOREIGN,
		"/lxc.payload.c1/system.slice/ssh.service");
	unit_is("0::/machine.slice/libpod-abc.scope/system.slice/ssh.service\n", UNIT_SCOPE,
		"libpod-abc.scope");
	unit_is("0::/docker/0123abcd/system.slice/cron.service\n", UNIT_FOREIGN,
		"/docker/0123abcd/system.slice/cron.service");
	unit_is("0::/mygroup/app.service\n", UNIT_FOREIGN, "/mygroup/app.service");
	unit_is("0::/system.slice/sub.slice/x.service/inner\n", UNIT_SERVICE, "x.service");
	unit_is("0::/init.scope\n", UNIT_SCOPE, "init.scope");
}

/* UNIT.d is a file name: a unit name whose directory would exceed 255
 * bytes is refused as too long, never cut to another name. */
static void test_persist_refuses_a_unit_whose_directory_name_cannot_fit(void **state)
{
	char name[300];

	(void)state;
	for (size_t len = 250; len < sizeof(name); len++) {
		memset(name, 'a', len - 8);
		memcpy(name + len - 8, ".service", 9);
		assert_int_equal(persist_unit_name_ok(name), len <= 253 ? 0 : -ENAMETOOLONG);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rule_user_selects_user_space_functions_only),
		cmocka_unit_test(test_rule_all_selects_every_arming),
		cmocka_unit_test(test_rule_comm_list_selects_those_processes),
		cmocka_unit_test(test_rule_percent_of_timeout),
		cmocka_unit_test(test_rule_no_slack_no_change),
		cmocka_unit_test(test_widen_formula),
		cmocka_unit_test(test_bad_slack_values_are_refused),
		cmocka_unit_test(test_verdict_first_says_what_slack_saves),
		cmocka_unit_test(test_by_table_ranks_who_should_add_slack),
		cmocka_unit_test(test_json_and_csv_carry_the_slack),
		cmocka_unit_test(test_svg_says_slack),
		cmocka_unit_test(test_v1_trace_user_selects_nothing_all_works),
		cmocka_unit_test(test_multibyte_names_keep_columns),
		cmocka_unit_test(test_saving_split_by_what_can_act_on_it),
		cmocka_unit_test(test_groups_split_by_what_can_act_on_it),
		cmocka_unit_test(test_slack_follows_relative_sleep_chains),
		cmocka_unit_test(test_optimum_bounds_every_policy_with_sleep_chains),
		cmocka_unit_test(test_persist_finds_the_service_of_a_cgroup),
		cmocka_unit_test(test_persist_names_no_host_unit_for_a_containers_cgroup),
		cmocka_unit_test(test_persist_refuses_a_unit_whose_directory_name_cannot_fit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
