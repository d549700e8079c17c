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

#include "text.h"
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

		for (int p = 0; p <= RP_NPOL; p++)
			any |= (o->c[p] = diff(y->w[p], x->w[p]));
		o->opt = diff(y->opt_rec, x->opt_rec);
		o->opt_slack = diff(y->opt, x->opt);
		o->unresolved = diff(y->unresolved, x->unresolved);
		for (int c = 0; c < RP_NACT; c++)
			o->saved_act[c] = (int64_t)diff(y->opt_rec_act[c], x->opt_rec_act[c]) -
					  (int64_t)diff(y->opt_act[c], x->opt_act[c]);
		if (!(any | o->opt))
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
	return (double)r->opt - (double)r->opt_slack;
}

/* The optimum the policies are held against: with --slack they run on the
 * widened windows, so the optimum is the widened windows' too. */
static uint64_t optimum(const struct top_view *v, const struct top_row *r)
{
	return v->slack ? r->opt_slack : r->opt;
}

static void text_line(FILE *f, const struct top_view *v, const char *name, const struct top_row *r)
{
	double span = r->span > 0 ? r->span : 1;

	fprintf(f, "%-34.34s %8.1f%c %9.1f %9.1f %9.1f %9.1f", name, rate(r->c[RP_NPOL], r->span),
		r->unresolved ? '*' : ' ',
		rate(r->c[RP_OFF], r->span), rate(r->c[RP_ALWAYS], r->span),
		rate(optimum(v, r), r->span),
		rate(r->c[RP_OFF], r->span) - rate(r->c[RP_ALWAYS], r->span));
	if (v->slack)
		fprintf(f, " %9.1f %9.1f %9.1f", saved_slack(r) / span,
			(double)r->saved_act[RP_ACT_SLACK] / span,
			(double)r->saved_act[RP_ACT_CODE] / span);
	fputc('\n', f);
}

static void text_head(FILE *f, const struct top_view *v, const char *first)
{
	fprintf(f, "%-34s %9s %9s %9s %9s %9s%s\n", first, "kernel/s", "off/s", "always/s",
		"optimum/s", "greedy-/s", v->slack ? "  slack-/s     now-/s    code-/s" : "");
}

void top_print_text(FILE *f, const struct top_view *v, long frame, const struct top_snap *a,
		    const struct top_snap *b, int rows_max)
{
	struct top_row *r, all;
	size_t n;

	fprintf(f, "hrt top: frame %ld, every %.3g s, window %.3g s, by %s%s", frame, v->interval,
		b->t - (a ? a->t : b->t), replay_by_names[v->by],
		v->slack ? ", with --slack" : "");
	/* a full ring buffer drops events: the figures then undercount */
	if (v->lost)
		fprintf(f, "; %" PRIu64 " events lost (buffer full)", v->lost);
	fputc('\n', f);
	if (top_rows(v, RP_BY_CPU, a, b, &r, &n)) {
		fprintf(f, "out of memory\n");
		return;
	}
	memset(&all, 0, sizeof(all));
	all.span = b->t - (a ? a->t : b->t);
	text_head(f, v, "CPU");
	for (size_t i = 0; i < n; i++) {
		text_line(f, v, r[i].name, &r[i]);
		for (int p = 0; p <= RP_NPOL; p++)
			all.c[p] += r[i].c[p];
		all.opt += r[i].opt;
		all.opt_slack += r[i].opt_slack;
		all.unresolved += r[i].unresolved;
		for (int c = 0; c < RP_NACT; c++)
			all.saved_act[c] += r[i].saved_act[c];
	}
	text_line(f, v, "all CPUs", &all);
	free(r);
	if (all.unresolved)
		fprintf(f, "* kernel/s undercounted: %" PRIu64 " armings in the window ended with "
			"neither a traced expiry nor a cancel (lost events)\n", all.unresolved);
	fputc('\n', f);
	if (top_rows(v, v->by, a, b, &r, &n)) {
		fprintf(f, "out of memory\n");
		return;
	}
	text_head(f, v, replay_by_names[v->by]);
	for (size_t i = 0; i < n && (rows_max < 0 || (int)i < rows_max); i++)
		text_line(f, v, r[i].name, &r[i]);
	free(r);
	if (v->slack)
		fprintf(f, "\nslack-/s: what --slack saves; now-/s: of it, on sleeps, poll, epoll "
			"and futex timeouts (apply now: hrt run --slack, hrt slack); code-/s: on "
			"timerfd, POSIX timers, setitimer (needs range timers in the program)\n");
}

void top_csv_header(FILE *f, int by)
{
	fprintf(f, "frame,seconds,%s,wakeups,wakeups_per_s,wakeups_unresolved,off,off_per_s,idle,always,always_per_s,"
		"optimum,optimum_per_s,greedy_saves_per_s,optimum_slack,slack_saves_per_s,"
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
			rate(o->c[RP_OFF], o->span) - rate(o->c[RP_ALWAYS], o->span), o->opt_slack,
			saved_slack(o) / (o->span > 0 ? o->span : 1), o->saved_act[RP_ACT_SLACK],
			o->saved_act[RP_ACT_CODE]);
	}
	free(r);
}
