/* SPDX-License-Identifier: MIT */
/*
 * top_view.c - the figures of `hrt top` and their three forms: the rows of
 * a window (two snapshots of the replay model's counts, top.h), the text
 * of one frame (the screen and -b print the same text), and CSV rows.
 *
 * What a row says, per group, over the window: the wake-ups the kernel ran
 * (the trace's expiries), what libhrt's stock policy (off) and greedy
 * (always) would need, the offline optimum, and the savings: greedy =
 * off - always (replay's saved_always), slack = the optimum on the recorded
 * windows - the optimum on the --slack-widened ones (replay's saved_slack),
 * split as replay splits it: now (timers slack reaches) and code.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../common/text.h"
#include "top.h"

static uint64_t diff(uint64_t b, uint64_t a)
{
	return b > a ? b - a : 0;
}

static int cmp_row(const void *x, const void *y)
{
	const struct top_row *a = x, *b = y;

	if (a->c[RP_NPOL] != b->c[RP_NPOL])
		return a->c[RP_NPOL] > b->c[RP_NPOL] ? -1 : 1;
	if (a->c[RP_OFF] != b->c[RP_OFF])
		return a->c[RP_OFF] > b->c[RP_OFF] ? -1 : 1;
	return strcmp(a->name, b->name);
}

int top_rows(const struct top_view *v, int by, const struct top_snap *a,
	     const struct top_snap *b, struct top_row **rows, size_t *n)
{
	struct top_row *r = calloc(b->n[by] ? b->n[by] : 1, sizeof(*r));
	size_t k = 0;

	if (!r)
		return -ENOMEM;
	for (size_t i = 0; i < b->n[by]; i++) {
		const struct replay_tally *y = &b->g[by][i];
		static const struct replay_tally zero;
		const struct replay_tally *x = a && i < a->n[by] ? &a->g[by][i] : &zero;
		struct top_row *o = &r[k];
		uint64_t any = 0;

		int bp = 0;

		for (int p = 0; p <= RP_NPOL; p++)
			any |= (o->c[p] = diff(y->w[p], x->w[p]));
		/* the lowest policy optimum; over a window, no more than any
		 * policy needed in it: the optimum waits for each window's end,
		 * so a window's start can cut between a policy's early run and
		 * the optimum's later one (over the whole trace it is never
		 * above one) */
		for (int p = 0; p < RP_NPOL; p++)
			if (diff(y->optp[p], x->optp[p]) < diff(y->optp[bp], x->optp[bp]))
				bp = p;
		o->opt = diff(y->optp[bp], x->optp[bp]);
		for (int p = 0; p < RP_NPOL; p++)
			if (o->c[p] < o->opt)
				o->opt = o->c[p];
		o->opt_rec = diff(y->opt_rec, x->opt_rec);
		o->unresolved = diff(y->unresolved, x->unresolved);
		for (int c = 0; c < RP_NACT; c++)
			o->saved_act[c] = (int64_t)diff(y->opt_rec_act[c], x->opt_rec_act[c]) -
					  (int64_t)diff(y->optp_act[bp][c], x->optp_act[bp][c]);
		if (!(any | o->opt_rec))
			continue;
		o->span = b->t - (a ? a->t : b->t);
		replay_model_group_name(v->rp, by, y->key, o->name, sizeof(o->name));
		k++;
	}
	qsort(r, k, sizeof(*r), cmp_row);
	*rows = r;
	*n = k;
	return 0;
}

static double rate(uint64_t c, double span)
{
	return span > 0 ? (double)c / span : 0;
}

static double saved_slack(const struct top_row *r)
{
	return (double)r->opt_rec - (double)r->opt;
}

/*
 * The text fits 79 columns: the name, then figures of 6 characters (7
 * under "optimum" and "greedy-", as wide as their heads; the kernel's with
 * a mark after it: '*' when lost events make it short), each after a
 * space.  Without --slack: kernel off always optimum greedy-; with it,
 * greedy- (off - always, both shown) gives way to slack- now- code-, and
 * names still get 28 columns ("[kernel] tick_nohz_handler" is 26).
 */
#define FIG_W 6
static int name_width(const struct top_view *v)
{
	int figs = (FIG_W + 2) + 2 * (FIG_W + 1) + (FIG_W + 2);        /* kernel* off always optimum */

	return 79 - figs - (v->slack ? 3 * (FIG_W + 1) : FIG_W + 2);
}

/* A rate in W characters: one decimal while it fits. */
static void fig_w(FILE *f, double x, int w)
{
	double lim = w == FIG_W ? 9999.95 : 99999.95;

	fprintf(f, x < lim && x > -lim / 10 ? " %*.1f" : " %*.0f", w, x);
}

static void fig(FILE *f, double x)
{
	fig_w(f, x, FIG_W);
}

static void text_line(FILE *f, const struct top_view *v, const char *name, const struct top_row *r)
{
	double span = r->span > 0 ? r->span : 1;

	text_cell(f, name, name_width(v));
	fig(f, rate(r->c[RP_NPOL], r->span));
	fputc(r->unresolved ? '*' : ' ', f);
	fig(f, rate(r->c[RP_OFF], r->span));
	fig(f, rate(r->c[RP_ALWAYS], r->span));
	fig_w(f, rate(r->opt, r->span), FIG_W + 1);
	if (v->slack) {
		fig(f, saved_slack(r) / span);
		fig(f, (double)r->saved_act[RP_ACT_SLACK] / span);
		fig(f, (double)r->saved_act[RP_ACT_CODE] / span);
	} else {
		fig_w(f, rate(r->c[RP_OFF], r->span) - rate(r->c[RP_ALWAYS], r->span), FIG_W + 1);
	}
	fputc('\n', f);
}

static void text_head(FILE *f, const struct top_view *v, const char *first)
{
	text_cell(f, first, name_width(v));
	fprintf(f, " %*s  %*s %*s %*s", FIG_W, "kernel", FIG_W, "off", FIG_W, "always", FIG_W + 1,
		"optimum");
	if (v->slack)
		fprintf(f, " %*s %*s %*s\n", FIG_W, "slack-", FIG_W, "now-", FIG_W, "code-");
	else
		fprintf(f, " %*s\n", FIG_W + 1, "greedy-");
}

/* The legend under a frame: what the columns are, in 79 columns. */
static const char legend[] =
	"wake-ups/s over the window.  kernel: traced expiries; off: libhrt's stock\n"
	"walk; always: greedy expiry; optimum: no policy needs fewer.  h: more help\n";
static const char legend_greedy[] =
	"greedy-: off - always.  What timer slack would save: hrt top --slack 1ms\n";
/* ... when greedy saves nothing anywhere on the screen: the columns then
 * all say the same, so say so, and what to look at next. */
static const char legend_same[] =
	"greedy-: off - always, 0 here: greedy expiry saves nothing on these timers.\n"
	"Next: hrt top --slack 1ms shows what timer slack would save, and who should\n"
	"add it.\n";
static const char legend_slack[] =
	"slack-: what --slack saves; of it now-: sleeps, poll, futex (apply now with\n"
	"hrt slack D PID, or hrt run --slack D), code-: timerfd, POSIX timers\n";

static int lines_of(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

void top_print_help(FILE *f)
{
	fputs("hrt top: help - any key goes back, q quits\n\n"
	      "Each figure is wake-ups per second over the window (-w): per CPU on top,\n"
	      "then per process (b: per function, CPU or thread; H: threads).\n"
	      "  kernel   the timer expiries the kernel ran, as traced; a * marks a figure\n"
	      "           that is short: armings whose expiry the trace lost (see below it)\n"
	      "  off      what libhrt's stock expiry walk would need for the same timers\n"
	      "  always   what greedy expiry needs (a pass also runs the timers already in\n"
	      "           their windows)\n"
	      "  optimum  for each policy the fewest wake-ups that run the timers it ran\n"
	      "           in their windows; the lowest, so never above off or always\n"
	      "           (a row's and a window's are capped at them: docs/REPLAY.md)\n"
	      "  greedy-  off - always: what greedy expiry saves\n"
	      "  slack-   (--slack D) the optimum as recorded - the optimum widened;\n"
	      "  now-     of it, sleeps, poll, epoll, futex: hrt slack D PID applies it\n"
	      "  code-    of it, timerfd, POSIX timers, setitimer: need range timers\n"
	      "A wake-up counts for who armed the timer the pass ran first, and a child\n"
	      "that lived under a second for its parent: a row's kernel can exceed its\n"
	      "off, and a saving can be negative (merged passes move wake-ups).\n"
	      "Try --slack 1ms: what timer slack would save, and who should add it.\n"
	      "Keys: q quit, b grouping (process, function, cpu, thread), H processes or\n"
	      "threads, h or ? this help.\n", f);
}

void top_print_text(FILE *f, const struct top_view *v, long frame, const struct top_snap *a,
		    const struct top_snap *b, int max_lines)
{
	struct top_row *r, all;
	char title[256], head[96];
	const char *tail;
	size_t n, ncpu, shown;
	int legend_lines = 0, avail = 0;

	snprintf(title, sizeof(title), "hrt top: frame %ld, every %.3g s, window %.3g s, by %s%s",
		 frame, v->interval, b->t - (a ? a->t : b->t), replay_by_names[v->by],
		 v->slack ? ", --slack" : "");
	/* a full ring buffer drops events: the figures then undercount */
	if (v->lost)
		snprintf(title + strlen(title), sizeof(title) - strlen(title),
			 "; %" PRIu64 " event%s lost", v->lost, v->lost == 1 ? "" : "s");
	if (max_lines >= 0)
		text_cell(f, title, 79 < (int)text_cols(title) ? 79 : (int)text_cols(title));
	else
		fputs(title, f);
	fputc('\n', f);
	if (top_rows(v, RP_BY_CPU, a, b, &r, &ncpu)) {
		fprintf(f, "out of memory\n");
		return;
	}
	memset(&all, 0, sizeof(all));
	all.span = b->t - (a ? a->t : b->t);
	for (size_t i = 0; i < ncpu; i++) {
		for (int p = 0; p <= RP_NPOL; p++)
			all.c[p] += r[i].c[p];
		all.opt += r[i].opt;
		all.opt_rec += r[i].opt_rec;
		all.unresolved += r[i].unresolved;
		for (int c = 0; c < RP_NACT; c++)
			all.saved_act[c] += r[i].saved_act[c];
	}
	tail = v->slack ? legend_slack : all.c[RP_OFF] == all.c[RP_ALWAYS] ? legend_same :
		legend_greedy;
	if (max_lines < 0 ? frame == 1 : 1)
		legend_lines = lines_of(legend) + lines_of(tail);
	/* a screen: title, two heads, all CPUs, a blank, the lost note, the
	 * legend; of what is left, a third at most for the CPUs */
	shown = ncpu;
	if (max_lines >= 0) {
		avail = max_lines - 5 - (all.unresolved ? 1 : 0) - legend_lines;
		if ((int)shown > avail / 3)
			shown = avail / 3 > 1 ? (size_t)(avail / 3) : 1;
		avail -= (int)shown;
	}
	text_head(f, v, "CPU");
	for (size_t i = 0; i < shown; i++)
		text_line(f, v, r[i].name, &r[i]);
	if (shown < ncpu)
		snprintf(head, sizeof(head), "all %zu CPUs (%zu shown)", ncpu, shown);
	else
		snprintf(head, sizeof(head), "all CPUs");
	text_line(f, v, head, &all);
	free(r);
	if (all.unresolved)
		fprintf(f, "* kernel undercounted: %" PRIu64 " %s (lost events)\n", all.unresolved,
			all.unresolved == 1 ? "arming lost its expiry" : "armings lost their expiry");
	fputc('\n', f);
	if (top_rows(v, v->by, a, b, &r, &n)) {
		fprintf(f, "out of memory\n");
		return;
	}
	if (max_lines >= 0 && (int)n > avail) {
		shown = avail > 0 ? (size_t)avail : 0;
		snprintf(head, sizeof(head), "%s (%zu of %zu)", replay_by_names[v->by], shown, n);
	} else {
		shown = n;
		snprintf(head, sizeof(head), "%s", replay_by_names[v->by]);
	}
	text_head(f, v, head);
	for (size_t i = 0; i < shown; i++)
		text_line(f, v, r[i].name, &r[i]);
	free(r);
	if (legend_lines) {
		fputs(legend, f);
		fputs(tail, f);
	}
}

void top_csv_header(FILE *f, int by)
{
	fprintf(f, "frame,seconds,%s,wakeups,wakeups_per_s,wakeups_unresolved,off,off_per_s,idle,always,always_per_s,"
		"optimum,optimum_per_s,greedy_saves_per_s,optimum_recorded,slack_saves_per_s,"
		"slack_saved_now,slack_saved_code\n",
		replay_by_names[by]);
}

void top_print_csv(FILE *f, const struct top_view *v, long frame, const struct top_snap *a,
		   const struct top_snap *b)
{
	struct top_row *r;
	size_t n;

	if (top_rows(v, v->by, a, b, &r, &n))
		return;
	for (size_t i = 0; i < n; i++) {
		const struct top_row *o = &r[i];

		fprintf(f, "%ld,%.6f,", frame, o->span);
		text_csv_field(f, o->name);
		fprintf(f, ",%" PRIu64 ",%.1f,%" PRIu64 ",%" PRIu64 ",%.1f,%" PRIu64 ",%" PRIu64
			",%.1f,%" PRIu64 ",%.1f,%.1f,%" PRIu64 ",%.1f,%" PRId64 ",%" PRId64 "\n",
			o->c[RP_NPOL], rate(o->c[RP_NPOL], o->span), o->unresolved,
			o->c[RP_OFF], rate(o->c[RP_OFF], o->span), o->c[RP_IDLE], o->c[RP_ALWAYS],
			rate(o->c[RP_ALWAYS], o->span), o->opt, rate(o->opt, o->span),
			rate(o->c[RP_OFF], o->span) - rate(o->c[RP_ALWAYS], o->span), o->opt_rec,
			saved_slack(o) / (o->span > 0 ? o->span : 1), o->saved_act[RP_ACT_SLACK],
			o->saved_act[RP_ACT_CODE]);
	}
	free(r);
}
