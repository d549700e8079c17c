/* SPDX-License-Identifier: MIT */
/*
 * replay_print.c - what `hrt replay` prints of a replay_result: the
 * verdict, the table, --json and --csv.  The model is in replay_model.c, the
 * command (options, files, buffered output) in cmd_replay.c.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"
#include "../common/svg.h"
#include "../common/text.h"

static const char *fmt_name(enum trace_format f)
{
	return f == TRACE_V1 ? "hrt-trace v1" : f == TRACE_TRACEFS ? "tracefs text" :
	       "perf script text";
}

static const char *idle_name(const struct replay_result *r)
{
	if (r->idle_mode == RP_IDLE_ALWAYS)
		return "always";
	if (r->idle_mode == RP_IDLE_NEVER)
		return "never";
	return r->idle_fallback ? "always (no scheduler events in the trace)" : "trace";
}

/* Verdict ----------------------------------------------------------------- */

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static int has(const struct replay_result *r, int p)
{
	return !!(r->policies & (1u << p));
}

/*
 * The verdict: wake-ups per policy and the optimum, what idle and always
 * save against off (count and %), how many runs they move out of busy time,
 * and why nothing is saved when nothing is.  Every figure is one of the
 * table's (tests compare them).
 */
/* With --slack, the verdict's first sentence: what the widening saves
 * against the windows as recorded. */
static void slack_verdict(FILE *f, const struct replay_result *r)
{
	char what[200];
	uint64_t a = r->optimal_wakeups_recorded, b = r->optimal_wakeups;

	slack_describe(r->slack, what, sizeof(what));
	fprintf(f, "verdict: with %s, ", what);
	if (r->slack_blind)
		fprintf(f, "nothing changes: hrt-trace v1 has no timer functions or process "
			"names, so no arming is known to be selected (--slack-for all widens "
			"every one).\n");
	else if (b < a)
		fprintf(f, "the optimum drops from %" PRIu64 " to %" PRIu64 " wake-ups (-%.1f %%); "
			"%" PRIu64 " of %" PRIu64 " armings widened.\n", a, b, pct(a - b, a),
			r->armings_widened, r->armings);
	else
		fprintf(f, "the optimum stays at %" PRIu64 " wake-ups: the %" PRIu64 " widened "
			"armings (of %" PRIu64 ") still need a wake-up of their own.\n", a,
			r->armings_widened, r->armings);
	fprintf(f, "  on the widened windows");
}

/* The process row that saves the most by timer slack, as "NAME PID", and
 * its PID; NULL if none saves (a kernel row, or a thread's in a trace
 * without processes, names none). */
static const char *top_saver(const struct replay_result *r, long *pid)
{
	const struct replay_by *by = &r->by[RP_BY_PROCESS];

	for (int i = 0; i < by->nsaved; i++) {
		const struct replay_group *g = &by->saved[i];

		if (g->saved_act[RP_ACT_SLACK] > 0 && g->pid > 0) {
			*pid = g->pid;
			return g->name;
		}
	}
	return NULL;
}

/* The --slack saving split by what can act on it, then the command that
 * applies the part timer slack reaches: the verdict's last lines. */
static void slack_apply(FILE *f, const struct replay_result *r)
{
	const struct slack *s = r->slack;
	const int64_t *a = r->saved_act;
	char d[64] = "D", who[200] = "CMD [ARGS...]", names[200] = "PID|NAME...";
	long pid = 0;

	fprintf(f, "  by what can act on it: %" PRId64 " saved on sleeps, poll, epoll and futex "
		"timeouts (hrtimer_wakeup) - timer slack reaches those: apply now; %" PRId64
		" on timerfd, POSIX timers and setitimer - needs code: use range timers "
		"(libhrt); %" PRId64 " on kernel timers.\n", a[RP_ACT_SLACK], a[RP_ACT_CODE],
		a[RP_ACT_OTHER]);
	if (s->kind == SLACK_NS)
		snprintf(d, sizeof(d), "%s", s->spec);
	if (s->who == SLACK_COMMS) {
		size_t n = 0;
		const char *c = s->comms;

		for (size_t i = 0; i < s->ncomms && n < sizeof(names) - 1; i++, c += strlen(c) + 1)
			n += (size_t)snprintf(names + n, sizeof(names) - n, "%s%s", i ? " " : "", c);
		snprintf(who, sizeof(who), "%s [ARGS...]", s->comms);
	}
	if (a[RP_ACT_SLACK] <= 0)
		fprintf(f, "  apply: nothing for timer slack to apply here (hrt run --slack and "
			"hrt slack reach only hrtimer_wakeup timers).\n");
	else if (s->kind == SLACK_PCT)
		fprintf(f, "  apply: timer slack is a duration, not a share of the timeout: hrt "
			"run --slack D -- %s, or as root hrt slack D %s, with D about %s of the "
			"typical timeout.\n", who, names, s->spec);
	else {
		const char *saver = s->who == SLACK_COMMS ? NULL : top_saver(r, &pid);

		fprintf(f, "  apply: hrt run --slack %s -- %s (new processes), or as root hrt "
			"slack %s %s (running ones; main threads only)", d, who, d, names);
		/* the process that saves most (a loop's short-lived children count
		 * for it): the slack reaches what it starts from then on */
		if (saver)
			fprintf(f, "; most: hrt slack %s %ld (%s; what it starts from then on "
				"inherits it)", d, pid, saver);
		fprintf(f, ".\n");
	}
}

/* With --slack, what the optimum is: each policy moved the sleeps it ran
 * (sleep chains), so each has its windows and their optimum; the lowest is
 * at most every policy's wake-ups (replay_optimum.c). */
static void optimum_note(FILE *f, const struct replay_result *r)
{
	int first = 1;

	fprintf(f, "  (the optimum: for each policy, the fewest wake-ups that run the timers it "
		"ran inside their widened windows - a sleep armed relative to a wake-up starts "
		"where that policy's run put it - and the lowest of those (");
	for (int p = 0; p < RP_NPOL; p++)
		if (has(r, p)) {
			fprintf(f, "%s%s %" PRIu64, first ? "" : ", ", replay_policy_names[p],
				r->optimal_by_policy[p]);
			first = 0;
		}
	fprintf(f, "): no policy needs fewer.)\n");
}

void replay_print_verdict(FILE *f, const struct replay_result *r)
{
	int first = 1, any = 0;

	if (r->slack)
		slack_verdict(f, r);
	else
		fprintf(f, "verdict:");
	fprintf(f, " this trace needs");
	for (int p = 0; p < RP_NPOL; p++)
		if (has(r, p)) {
			fprintf(f, "%s %" PRIu64 " wake-ups with greedy %s", first ? "" : ",",
				r->pol[p].wakeups, replay_policy_names[p]);
			first = 0;
		}
	fprintf(f, "; the optimum is %" PRIu64 ".\n", r->optimal_wakeups);
	if (r->slack && !r->slack_blind)
		optimum_note(f, r);
	if (!has(r, RP_OFF)) {
		fprintf(f, "  (replay --policy all, or include off, to see what greedy saves)\n");
		return;
	}
	for (int p = RP_IDLE; p < RP_NPOL; p++) {
		const struct replay_row *o = &r->pol[RP_OFF], *w = &r->pol[p];
		uint64_t sv = o->wakeups > w->wakeups ? o->wakeups - w->wakeups : 0;

		if (!has(r, p))
			continue;
		any |= sv > 0;
		if (w->wakeups > o->wakeups)
			fprintf(f, "  %s needs %" PRIu64 " wake-ups more than off (%.1f %%)",
				replay_policy_names[p], w->wakeups - o->wakeups,
				pct(w->wakeups - o->wakeups, o->wakeups));
		else
			fprintf(f, "  %s saves %" PRIu64 " wake-ups (%.1f %%)", replay_policy_names[p],
				sv, pct(sv, o->wakeups));
		fprintf(f, " and runs %" PRIu64 " timers in busy time against off's %" PRIu64,
			w->expired_busy, o->expired_busy);
		/* greedy runs timers early: into a pass while the CPU is busy
		 * as well as out of one */
		if (w->expired_busy <= o->expired_busy)
			fprintf(f, " (%" PRIu64 " moved out of busy time)",
				o->expired_busy - w->expired_busy);
		else
			fprintf(f, " (%" PRIu64 " more: run early, in passes while the CPU was "
				"busy anyway)", w->expired_busy - o->expired_busy);
		fprintf(f, "; %" PRIu64 " of its runs were greedy.\n", w->expired_greedy);
	}
	if (!any && (has(r, RP_IDLE) || has(r, RP_ALWAYS))) {
		if (r->pol[RP_OFF].wakeups == r->optimal_wakeups)
			fprintf(f, "  nothing is saved: the stock walk already needs only the "
				"optimum on this trace - no cancel or re-arm left a wake-up that "
				"running timers early could remove - so greedy only runs timers "
				"earlier.\n");
		else
			fprintf(f, "  nothing is saved: the %" PRIu64 " wake-ups off needs above "
				"the optimum come from windows greedy cannot reach (on another CPU, "
				"or not yet started when the pass ran).\n",
				r->pol[RP_OFF].wakeups - r->optimal_wakeups);
	}
	if (r->kernel_incomplete)
		fprintf(f, "  the kernel's own %" PRIu64 " wake-ups are incomplete (row kernel* "
			"in the table).\n", r->kernel.wakeups);
	if (r->slack && !r->slack_blind)
		slack_apply(f, r);
}

/* Table ------------------------------------------------------------------- */

static void table_row(FILE *f, const char *name, const struct replay_row *w,
		      const struct replay_result *res, int kernel)
{
	fprintf(f, "%-8s %9" PRIu64, name, w->wakeups);
	if (kernel && res->kernel_incomplete)
		fprintf(f, " %7s", "n/a");
	else if (res->optimal_wakeups)
		fprintf(f, " %7.3f", (double)w->wakeups / (double)res->optimal_wakeups);
	else
		fprintf(f, " %7s", "-");
	fprintf(f, " %9" PRIu64, w->expired);
	if (kernel)
		fprintf(f, " %9s", "-");
	else
		fprintf(f, " %9" PRIu64, w->expired_greedy);
	fprintf(f, " %9" PRIu64 " %10" PRId64 " %10" PRId64 " %11" PRId64 " %10" PRId64 "\n",
		w->expired_busy, w->late_p50, w->late_p99, w->late_max, w->early_p50);
}

static const char legend[] =
	"wakeups: device firings (expiry passes); vs_opt: wakeups / optimum; expired: timer\n"
	"runs; greedy: runs the greedy walk took before their hard expiry; busy: runs while\n"
	"the CPU was busy; late_*: run time - soft expiry, early_p50: hard expiry - run\n"
	"time (ns; negative: the run came after its hard expiry, as the kernel's late\n"
	"runs do); optimum: fewest wake-ups that run every timer inside its window (of\n"
	"the windows each policy ran, the lowest: no policy row is below it).\n";

/* Whether a row of the group tables shows a negative saving. */
static int group_has_negative(const struct replay_result *r, const struct replay_group *g)
{
	int neg = 0;

	if (has(r, RP_OFF))
		for (int p = RP_IDLE; p < RP_NPOL; p++)
			neg |= has(r, p) && g->w[p] > g->w[RP_OFF];
	if (r->slack)
		neg |= g->opt > g->opt_rec || g->saved_act[RP_ACT_SLACK] < 0 ||
		       g->saved_act[RP_ACT_CODE] < 0;
	return neg;
}

static void by_table(FILE *f, const struct replay_result *r, int b, int saved_list)
{
	int neg = 0;

	const struct replay_by *by = &r->by[b];
	int n = saved_list ? by->nsaved : by->ntop;
	const struct replay_group *g = saved_list ? by->saved : by->top;

	fprintf(f, "\n%s by %s (top %d of %" PRIu64 ")%s:\n%-32s",
		saved_list ? "wake-ups saved" : "wake-ups", replay_by_names[b], n, by->ngroups,
		saved_list && r->slack ? ", most saved by slack first" : "", replay_by_names[b]);
	if (r->has_kernel)
		fprintf(f, " %9s", r->kernel_incomplete ? "kernel*" : "kernel");
	for (int p = 0; p < RP_NPOL; p++)
		if (has(r, p))
			fprintf(f, " %9s", replay_policy_names[p]);
	if (has(r, RP_OFF))
		for (int p = RP_IDLE; p < RP_NPOL; p++)
			if (has(r, p))
				fprintf(f, " %7s_%s", "saved", replay_policy_names[p]);
	if (r->slack)
		fprintf(f, " %11s %8s %8s", "saved_slack", "by_slack", "by_code");
	fputc('\n', f);
	for (int i = 0; i < n; i++) {
		/* a longer name is written whole: the row shifts, nothing is lost */
		text_cell(f, g[i].name, text_cols(g[i].name) > 32 ? (int)text_cols(g[i].name) : 32);
		if (r->has_kernel)
			fprintf(f, " %9" PRIu64, g[i].w[RP_NPOL]);
		for (int p = 0; p < RP_NPOL; p++)
			if (has(r, p))
				fprintf(f, " %9" PRIu64, g[i].w[p]);
		if (has(r, RP_OFF))
			for (int p = RP_IDLE; p < RP_NPOL; p++)
				if (has(r, p))
					fprintf(f, " %*" PRId64, 8 + (int)strlen(replay_policy_names[p]),
						(int64_t)g[i].w[RP_OFF] - (int64_t)g[i].w[p]);
		if (r->slack)
			fprintf(f, " %11" PRId64 " %8" PRId64 " %8" PRId64,
				(int64_t)g[i].opt_rec - (int64_t)g[i].opt, g[i].saved_act[RP_ACT_SLACK],
				g[i].saved_act[RP_ACT_CODE]);
		fputc('\n', f);
		neg |= group_has_negative(r, &g[i]);
	}
	if (neg)
		fputs("A negative saving: the change made the group's timers run first in more "
		      "passes.  A wake-up counts for the group whose timer its pass ran first, "
		      "and merged passes move wake-ups between groups; the total saved is the "
		      "verdict's.\n", f);
}

void replay_print_table(FILE *f, const char *name, const struct replay_result *r, int by)
{
	fprintf(f, "%s: %s, %" PRIu64 " events", name, fmt_name(r->format), r->events);
	if (r->ignored)
		fprintf(f, " (+%" PRIu64 " other events ignored)", r->ignored);
	fprintf(f, " over %.3f s, %" PRIu64 " CPUs, %" PRIu64 " timers, %" PRIu64 " armings, %"
		PRIu64 " cancels\n", (double)(r->last - r->first) / 1e9, r->cpus, r->timers,
		r->armings, r->cancels);
	fprintf(f, "idle: %s", idle_name(r));
	if (r->pairs_merged)
		fprintf(f, "; %" PRIu64 " cancel+expire pairs read as expiries", r->pairs_merged);
	if (r->bad_lines)
		fprintf(f, "; %" PRIu64 " bad lines skipped (--lenient)", r->bad_lines);
	fprintf(f, "\n\n");
	replay_print_verdict(f, r);
	fprintf(f, "\n%-8s %9s %7s %9s %9s %9s %10s %10s %11s %10s\n", "policy", "wakeups",
		"vs_opt", "expired", "greedy", "busy", "late_p50", "late_p99", "late_max",
		"early_p50");
	if (r->has_kernel)
		table_row(f, r->kernel_incomplete ? "kernel*" : "kernel", &r->kernel, r, 1);
	for (int p = 0; p < RP_NPOL; p++)
		if (has(r, p))
			table_row(f, replay_policy_names[p], &r->pol[p], r, 0);
	fprintf(f, "%-8s %9" PRIu64 "   1.000\n", "optimum", r->optimal_wakeups);
	if (r->slack) {
		char what[200];

		slack_describe(r->slack, what, sizeof(what));
		fprintf(f, "%-8s %9" PRIu64 " %7.3f  (the windows as recorded; every row above "
			"has %s)\n", "recorded", r->optimal_wakeups_recorded,
			r->optimal_wakeups ? (double)r->optimal_wakeups_recorded /
			(double)r->optimal_wakeups : 0.0, what);
	}
	fputs(legend, f);
	if (r->has_kernel && !r->kernel_incomplete && r->kernel.wakeups < r->optimal_wakeups)
		fprintf(f, "kernel below the optimum (vs_opt < 1): the kernel ran timers after "
			"their hard expiry (late_max %" PRId64 " ns), several in one late pass, "
			"which no policy and not the optimum may do.\n", r->kernel.late_max);
	if (r->slack)
		fputs("saved_slack: the optimum's wake-ups for the group's windows as recorded "
		      "minus as widened (a group's optimum: at most each policy's count for it); "
		      "by_slack: of it, on timers timer slack reaches (hrt run --slack, hrt "
		      "slack); by_code: on timers that need range timers in the program.\n", f);
	if (r->kernel_incomplete)
		fprintf(f, "* kernel row incomplete: %" PRIu64 " of %" PRIu64 " armings (%.0f %%) "
			"ended with neither a traced expiry nor a cancel, %" PRIu64 " of them on "
			"CPU %d and %" PRIu64 " with function %s; the recording lost their "
			"expiries, so the kernel's wake-ups are undercounted (no vs_opt).\n",
			r->armings_unresolved, r->armings, pct(r->armings_unresolved, r->armings),
			r->unresolved_on_cpu, r->unresolved_cpu, r->unresolved_on_fn,
			r->unresolved_fn);
	else if (r->format != TRACE_V1)
		fprintf(f, "armings_unresolved: 0 of %" PRIu64 " armings\n", r->armings);
	if (by >= 0 && r->by[by].ntop) {
		by_table(f, r, by, 0);
		if (r->by[by].nsaved)
			by_table(f, r, by, 1);
	}
}

/* JSON -------------------------------------------------------------------- */

static void json_row(FILE *f, const struct replay_row *w, int kernel, int complete)
{
	fprintf(f, "{\"wakeups\": %" PRIu64 ", \"expired\": %" PRIu64 ", \"expired_greedy\": ",
		w->wakeups, w->expired);
	if (kernel)
		fprintf(f, "null");
	else
		fprintf(f, "%" PRIu64, w->expired_greedy);
	fprintf(f, ", \"expired_busy\": %" PRIu64 ", \"lateness_soft_ns\": {\"p50\": %" PRId64
		", \"p99\": %" PRId64 ", \"max\": %" PRId64 "}, \"early_hard_ns\": {\"p50\": %"
		PRId64 "}", w->expired_busy, w->late_p50, w->late_p99, w->late_max, w->early_p50);
	if (kernel)
		fprintf(f, ", \"complete\": %s", complete ? "true" : "false");
	fputc('}', f);
}

static void json_groups(FILE *f, const struct replay_result *r, const struct replay_group *g,
			int n)
{
	fputc('[', f);
	for (int i = 0; i < n; i++) {
		fprintf(f, "%s\n      {\"name\": ", i ? "," : "");
		text_json_str(f, g[i].name);
		if (r->has_kernel)
			fprintf(f, ", \"kernel\": %" PRIu64, g[i].w[RP_NPOL]);
		for (int p = 0; p < RP_NPOL; p++)
			if (has(r, p))
				fprintf(f, ", \"%s\": %" PRIu64, replay_policy_names[p], g[i].w[p]);
		if (has(r, RP_OFF))
			for (int p = RP_IDLE; p < RP_NPOL; p++)
				if (has(r, p))
					fprintf(f, ", \"saved_%s\": %" PRId64, replay_policy_names[p],
						(int64_t)g[i].w[RP_OFF] - (int64_t)g[i].w[p]);
		if (r->slack)
			fprintf(f, ", \"optimum\": %" PRIu64 ", \"optimum_recorded\": %" PRIu64
				", \"saved_slack\": %" PRId64 ", \"saved_by_slack\": %" PRId64
				", \"saved_needs_code\": %" PRId64, g[i].opt, g[i].opt_rec,
				(int64_t)g[i].opt_rec - (int64_t)g[i].opt, g[i].saved_act[RP_ACT_SLACK],
				g[i].saved_act[RP_ACT_CODE]);
		fputc('}', f);
	}
	fputc(']', f);
}

/* "slack": the spec as given and as understood, what it selected, and the
 * optimum of the windows as recorded. */
static void json_slack(FILE *f, const struct replay_result *r)
{
	const struct slack *s = r->slack;

	fprintf(f, ", \"optimal_wakeups_recorded\": %" PRIu64 ", \"slack\": {\"spec\": ",
		r->optimal_wakeups_recorded);
	text_json_str(f, s->spec);
	if (s->kind == SLACK_NS)
		fprintf(f, ", \"ns\": %" PRIu64, s->amount);
	else
		fprintf(f, ", \"percent\": %" PRIu64 ".%06" PRIu64, (uint64_t)(s->amount / SLACK_PCT_ONE),
			(uint64_t)(s->amount % SLACK_PCT_ONE));
	fprintf(f, ", \"for\": ");
	if (s->who == SLACK_COMMS) {
		const char *c = s->comms;

		fputc('[', f);
		for (size_t i = 0; i < s->ncomms; i++, c += strlen(c) + 1) {
			fprintf(f, "%s", i ? ", " : "");
			text_json_str(f, c);
		}
		fputc(']', f);
	} else {
		fprintf(f, "\"%s\"", s->who == SLACK_USER ? "user" : "all");
	}
	if (s->who == SLACK_USER) {
		fprintf(f, ", \"functions\": [");
		for (size_t i = 0; i < sizeof(slack_user_fns) / sizeof(slack_user_fns[0]); i++)
			fprintf(f, "%s\"%s\"", i ? ", " : "", slack_user_fns[i]);
		fputc(']', f);
	}
	fprintf(f, ", \"armings_widened\": %" PRIu64 ", \"selectable\": %s, \"saved\": {",
		r->armings_widened, r->slack_blind ? "false" : "true");
	for (int a = 0; a < RP_NACT; a++)
		fprintf(f, "%s\"%s\": %" PRId64, a ? ", " : "", a == RP_ACT_SLACK ? "by_slack" :
			a == RP_ACT_CODE ? "needs_code" : "kernel", r->saved_act[a]);
	fprintf(f, "}}");
}

void replay_print_json(FILE *f, const char *name, const struct replay_result *r, int by)
{
	int first = 1;
	char *v = NULL;
	size_t vlen = 0;
	FILE *vf;

	fprintf(f, "{\"file\": ");
	text_json_str(f, name);
	fprintf(f, ", \"format\": \"%s\", \"events\": %" PRIu64 ", \"events_ignored\": %" PRIu64
		", \"lines_skipped\": %" PRIu64 ", \"cpus\": %" PRIu64 ", \"timers\": %" PRIu64
		", \"armings\": %" PRIu64 ", \"cancels\": %" PRIu64 ", \"optimal_wakeups\": %" PRIu64,
		r->format == TRACE_V1 ? "hrt-trace v1" : r->format == TRACE_TRACEFS ? "tracefs" : "perf",
		r->events, r->ignored, r->bad_lines, r->cpus, r->timers, r->armings, r->cancels,
		r->optimal_wakeups);
	fprintf(f, ", \"armings_unresolved\": ");
	if (r->format != TRACE_V1) {
		fprintf(f, "%" PRIu64 ", \"unresolved_where\": {\"cpu\": %d, \"on_cpu\": %" PRIu64
			", \"function\": ", r->armings_unresolved, r->unresolved_cpu,
			r->unresolved_on_cpu);
		text_json_str(f, r->unresolved_fn);
		fprintf(f, ", \"with_function\": %" PRIu64 "}", r->unresolved_on_fn);
	} else {
		fprintf(f, "null");
	}
	if (r->slack)
		json_slack(f, r);
	/* each policy's own optimum: optimal_wakeups is the lowest of them */
	fprintf(f, ", \"optimal_wakeups_of_policy\": {");
	for (int p = 0; p < RP_NPOL; p++)
		if (has(r, p)) {
			fprintf(f, "%s\"%s\": %" PRIu64, first ? "" : ", ", replay_policy_names[p],
				r->optimal_by_policy[p]);
			first = 0;
		}
	first = 1;
	fprintf(f, "}, \"idle\": ");
	text_json_str(f, idle_name(r));
	if ((vf = open_memstream(&v, &vlen))) {
		replay_print_verdict(vf, r);
		if (!fclose(vf)) {
			fprintf(f, ",\n  \"verdict\": ");
			text_json_str(f, v);
		}
		free(v);
	}
	fprintf(f, ",\n  \"kernel\": ");
	if (r->has_kernel)
		json_row(f, &r->kernel, 1, !r->kernel_incomplete);
	else
		fprintf(f, "null");
	fprintf(f, ",\n  \"policies\": {");
	for (int p = 0; p < RP_NPOL; p++) {
		if (!has(r, p))
			continue;
		fprintf(f, "%s\n    \"%s\": ", first ? "" : ",", replay_policy_names[p]);
		json_row(f, &r->pol[p], 0, 1);
		first = 0;
	}
	fprintf(f, "},\n  \"wakeups_by\": {");
	for (int b = 0; b < RP_NBY; b++) {
		if (by >= 0 && b != by)
			continue;
		fprintf(f, "%s\n    \"%s\": {\"groups\": %" PRIu64 ", \"top\": ",
			by >= 0 || !b ? "" : ",", replay_by_names[b], r->by[b].ngroups);
		json_groups(f, r, r->by[b].top, r->by[b].ntop);
		fprintf(f, ", \"saved\": ");
		json_groups(f, r, r->by[b].saved, r->by[b].nsaved);
		fputc('}', f);
	}
	fprintf(f, "}}");
}

/* CSV --------------------------------------------------------------------- */

void replay_print_csv_header(FILE *f, int by, const struct slack *slack)
{
	if (by >= 0)
		fprintf(f, "file,by,list,name,kernel,off,idle,always,saved_idle,saved_always%s\n",
			slack ? ",optimum,optimum_recorded,saved_slack,saved_by_slack,"
			"saved_needs_code" : "");
	else
		fprintf(f, "file,policy,events,cpus,timers,armings,cancels,optimal_wakeups,wakeups,"
			"expired,expired_greedy,expired_busy,lateness_soft_ns_p50,"
			"lateness_soft_ns_p99,lateness_soft_ns_max,early_hard_ns_p50,complete%s\n",
			slack ? ",slack,slack_for,optimal_wakeups_recorded,armings_widened,"
			"saved_by_slack,saved_needs_code,saved_kernel" : "");
}

static void csv_row(FILE *f, const char *name, const char *pol, const struct replay_result *r,
		    const struct replay_row *w, int kernel)
{
	text_csv_field(f, name);
	fprintf(f, ",%s,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
		",%" PRIu64 ",%" PRIu64 ",", pol, r->events, r->cpus, r->timers, r->armings,
		r->cancels, r->optimal_wakeups, w->wakeups, w->expired);
	if (!kernel)
		fprintf(f, "%" PRIu64, w->expired_greedy);
	fprintf(f, ",%" PRIu64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%d",
		w->expired_busy, w->late_p50, w->late_p99, w->late_max, w->early_p50,
		!(kernel && r->kernel_incomplete));
	if (r->slack) {
		const struct slack *s = r->slack;
		const char *c = s->comms;

		fputc(',', f);
		text_csv_field(f, s->spec);
		fputc(',', f);
		if (s->who != SLACK_COMMS) {
			fputs(s->who == SLACK_USER ? "user" : "all", f);
		} else {
			/* the names as given: one field, comma-separated */
			size_t n = 0;
			char buf[1024];

			for (size_t i = 0; i < s->ncomms && n < sizeof(buf); i++, c += strlen(c) + 1)
				n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s", i ? "," : "", c);
			text_csv_field(f, buf);
		}
		fprintf(f, ",%" PRIu64 ",%" PRIu64 ",%" PRId64 ",%" PRId64 ",%" PRId64,
			r->optimal_wakeups_recorded, r->armings_widened, r->saved_act[RP_ACT_SLACK],
			r->saved_act[RP_ACT_CODE], r->saved_act[RP_ACT_OTHER]);
	}
	fputc('\n', f);
}

static void csv_groups(FILE *f, const char *name, const struct replay_result *r, int by,
		       const char *list, const struct replay_group *g, int n)
{
	for (int i = 0; i < n; i++) {
		text_csv_field(f, name);
		fprintf(f, ",%s,%s,", replay_by_names[by], list);
		text_csv_field(f, g[i].name);
		fputc(',', f);
		if (r->has_kernel)
			fprintf(f, "%" PRIu64, g[i].w[RP_NPOL]);
		for (int p = 0; p < RP_NPOL; p++) {
			fputc(',', f);
			if (has(r, p))
				fprintf(f, "%" PRIu64, g[i].w[p]);
		}
		for (int p = RP_IDLE; p < RP_NPOL; p++) {
			fputc(',', f);
			if (has(r, p) && has(r, RP_OFF))
				fprintf(f, "%" PRId64, (int64_t)g[i].w[RP_OFF] - (int64_t)g[i].w[p]);
		}
		if (r->slack)
			fprintf(f, ",%" PRIu64 ",%" PRIu64 ",%" PRId64 ",%" PRId64 ",%" PRId64, g[i].opt,
				g[i].opt_rec, (int64_t)g[i].opt_rec - (int64_t)g[i].opt,
				g[i].saved_act[RP_ACT_SLACK], g[i].saved_act[RP_ACT_CODE]);
		fputc('\n', f);
	}
}

void replay_print_csv(FILE *f, const char *name, const struct replay_result *r, int by)
{
	if (by >= 0) {
		csv_groups(f, name, r, by, "top", r->by[by].top, r->by[by].ntop);
		csv_groups(f, name, r, by, "saved", r->by[by].saved, r->by[by].nsaved);
		return;
	}
	if (r->has_kernel)
		csv_row(f, name, "kernel", r, &r->kernel, 1);
	for (int p = 0; p < RP_NPOL; p++)
		if (has(r, p))
			csv_row(f, name, replay_policy_names[p], r, &r->pol[p], 0);
}
