/* SPDX-License-Identifier: MIT */
/*
 * replay_svg.c - the `hrt replay --svg` picture of one trace: wake-ups over
 * time, one row per policy (a bar per time bin as tall as its wake-ups;
 * under idle and always, the off wake-ups that policy did not need, in
 * black), and a histogram of where in its window [soft, hard] each timer
 * ran, per policy and for the kernel, with what the kernel's bars mean.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "replay.h"
#include "../common/svg.h"

#define W_LEFT 90
#define W_PLOT 800
#define W_ALL (W_LEFT + W_PLOT + 150)
#define ROW_H 26

static const char *const pcol[RP_NPOL + 1] = { "#d62728", "#1f77b4", "#2ca02c", "#7f7f7f" };

/* The raster's time bins: NBIN columns of BIN_W pixels. */
#define BIN_W 4
#define NBIN (W_PLOT / BIN_W)

static int col_of(const struct replay_result *r, hrt_time_t t)
{
	double span = (double)(r->last - r->first);
	int c = span > 0 ? (int)((double)(t - r->first) / span * (NBIN - 1)) : 0;

	return c < 0 ? 0 : c >= NBIN ? NBIN - 1 : c;
}

/* Per time bin: wake-ups of a, and those of off that a lacks (a multiset
 * difference of the sorted instants). */
static void bin_row(const struct replay_result *r, int p, unsigned *cnt, unsigned *gone)
{
	const struct replay_wakes *a = &r->wakes[p], *o = &r->wakes[RP_OFF];
	size_t i = 0, j = 0;

	memset(cnt, 0, NBIN * sizeof(*cnt));
	memset(gone, 0, NBIN * sizeof(*gone));
	for (size_t k = 0; k < a->n; k++)
		cnt[col_of(r, a->t[k])]++;
	if (p == RP_OFF || !(r->policies & 1u << RP_OFF))
		return;
	while (j < o->n) {
		if (i < a->n && a->t[i] < o->t[j]) {
			i++;
		} else if (i < a->n && a->t[i] == o->t[j]) {
			i++;
			j++;
		} else {
			gone[col_of(r, o->t[j++])]++;
		}
	}
}

/* The tallest bin of every row, wake-ups and saved alike: one scale for
 * the whole picture, so rows compare. */
static unsigned raster_max(const struct replay_result *r, unsigned *cnt, unsigned *gone)
{
	unsigned mx = 1;

	for (int p = 0; p < RP_NPOL; p++) {
		if (!(r->policies & 1u << p))
			continue;
		bin_row(r, p, cnt, gone);
		for (int c = 0; c < NBIN; c++)
			mx = cnt[c] > mx ? cnt[c] : mx;
	}
	return mx;
}

/* Round steps: 1, 2 or 5 times a power of ten, at most 5 ticks. */
static double tick_step(double span)
{
	double step = 1e-9;

	while (span / step > 5) {
		if (span / (step * 2) <= 5)
			step *= 2;
		else if (span / (step * 5) <= 5)
			step *= 5;
		else
			step *= 10;
	}
	return step;
}

/*
 * Wake-ups over time, a row per policy: a bar per time bin, as tall as its
 * wake-ups (one scale for every row), and under it in black the wake-ups
 * of off that this policy did not need, on the same scale.  At a second or
 * more a line per wake-up would fill the row; bars show the rate.
 */
static void raster(FILE *f, const struct replay_result *r, double y0)
{
	unsigned cnt[NBIN], gone[NBIN], mx;
	char buf[200];
	int row = 0;
	double span = (double)(r->last - r->first) / 1e9, step;

	mx = raster_max(r, cnt, gone);
	snprintf(buf, sizeof(buf), "wake-ups over time, one row per policy: a bar per %.3g ms, "
		 "as tall as its wake-ups (the tallest: %u)", span * 1e3 / NBIN, mx);
	svg_text(f, 10, y0, 14, "start", "#111", buf);
	for (int p = 0; p < RP_NPOL; p++) {
		double y = y0 + 14 + row++ * (ROW_H + 14);

		if (!(r->policies & 1u << p))
			continue;
		bin_row(r, p, cnt, gone);
		svg_text(f, W_LEFT - 8, y + ROW_H / 2 + 4, 12, "end", "#111", replay_policy_names[p]);
		svg_rect(f, W_LEFT, y, W_PLOT, ROW_H, "#fafafa", "#ccc");
		for (int c = 0; c < NBIN; c++) {
			double h = (ROW_H - 2) * (double)cnt[c] / mx, g = 12.0 * gone[c] / mx;

			if (cnt[c])
				svg_rect(f, W_LEFT + c * BIN_W, y + ROW_H - 1 - h, BIN_W - 1, h, pcol[p],
					 NULL);
			if (gone[c])
				svg_rect(f, W_LEFT + c * BIN_W, y + ROW_H + 1, BIN_W - 1, g > 1 ? g : 1,
					 "#000", NULL);
		}
		snprintf(buf, sizeof(buf), "%" PRIu64 " wake-ups", r->pol[p].wakeups);
		svg_text(f, W_LEFT + W_PLOT + 8, y + ROW_H / 2 + 4, 11, "start", "#111", buf);
	}
	/* Time axis: round ticks in seconds from the first event. */
	{
		double y = y0 + 14 + row * (ROW_H + 14);

		step = tick_step(span);
		for (double t = 0; t <= span + 1e-12; t += step) {
			double x = W_LEFT + (span > 0 ? t / span * (W_PLOT - 1) : 0);

			svg_line(f, x, y - 6, x, y, "#444", 1, NULL);
			snprintf(buf, sizeof(buf), "%g", t);
			svg_text(f, x, y + 12, 11, "middle", "#444", buf);
		}
		svg_text(f, W_LEFT + W_PLOT / 2, y + 28, 12, "middle", "#111",
			 "seconds from the first event; black bars under a row: off's wake-ups "
			 "that policy did not need");
	}
}

static const char *bin_label(int b, char *buf, size_t len)
{
	if (b == RP_POS_ZERO)
		snprintf(buf, len, "soft=hard");
	else if (b == RP_POS_LATE)
		snprintf(buf, len, "after hard");
	else
		snprintf(buf, len, "%d-%d%%", b * 100 / RP_POSB, (b + 1) * 100 / RP_POSB);
	return buf;
}

static void histogram(FILE *f, const struct replay_result *r, double y0)
{
	const double H = 160, bw = (double)W_PLOT / (RP_POSB + 2);
	int rows[RP_NPOL + 1], n = 0;
	char buf[160];

	for (int p = 0; p < RP_NPOL; p++)
		if (r->policies & 1u << p)
			rows[n++] = p;
	if (r->has_kernel)
		rows[n++] = RP_NPOL;
	svg_text(f, 10, y0, 14, "start", "#111",
		 "where in its window [soft, hard] each timer ran (share of the runs)");
	y0 += 14;
	svg_rect(f, W_LEFT, y0, W_PLOT, H, "none", "#888");
	for (int k = 0; k <= 4; k++) {
		double y = y0 + H - H * k / 4;

		svg_line(f, W_LEFT, y, W_LEFT + W_PLOT, y, "#eee", 1, NULL);
		snprintf(buf, sizeof(buf), "%d %%", k * 25);
		svg_text(f, W_LEFT - 6, y + 4, 11, "end", "#444", buf);
	}
	for (int b = 0; b < RP_POSB + 2; b++) {
		for (int i = 0; i < n; i++) {
			int p = rows[i];
			uint64_t tot = 0;
			double h;

			for (int k = 0; k < RP_POSB + 2; k++)
				tot += r->pos[p][k];
			h = tot ? H * (double)r->pos[p][b] / (double)tot : 0;
			svg_rect(f, W_LEFT + b * bw + 4 + i * (bw - 8) / n, y0 + H - h,
				 (bw - 8) / n, h, pcol[p], NULL);
		}
		svg_text(f, W_LEFT + b * bw + bw / 2, y0 + H + 14, 10, "middle", "#444",
			 bin_label(b, buf, sizeof(buf)));
	}
	/* Legend outside the data, right of the plot. */
	for (int i = 0; i < n; i++) {
		int p = rows[i];
		double y = y0 + 10 + i * 18;

		svg_rect(f, W_LEFT + W_PLOT + 10, y, 10, 10, pcol[p], NULL);
		svg_text(f, W_LEFT + W_PLOT + 26, y + 9, 11, "start", "#111",
			 p == RP_NPOL ? (r->kernel_incomplete ? "kernel*" : "kernel")
				      : replay_policy_names[p]);
	}
	/* What the kernel's bars mean, under the plot: its runs after hard
	 * alarm without it */
	if (r->has_kernel) {
		svg_text(f, 10, y0 + H + 34, 11, "start", "#444",
			 "kernel: the traced expiries.  after hard: the kernel ran the timer after its "
			 "hard expiry, by its interrupt latency - every timer");
		svg_text(f, 10, y0 + H + 48, 11, "start", "#444",
			 "with no slack (soft = hard: the tick, RT sleeps) lands there; the "
			 "policies and the optimum never run a timer late.");
		if (r->kernel_incomplete)
			svg_text(f, 10, y0 + H + 62, 11, "start", "#444",
				 "kernel*: incomplete - the recording lost some expiries (replay's "
				 "table says how many), so its bars are of the runs it kept.");
	}
}

int replay_write_svg(FILE *f, const char *name, const struct replay_result *r)
{
	int nrow = 0;
	double h;
	char buf[400], what[200] = "";

	for (int p = 0; p < RP_NPOL; p++)
		nrow += !!(r->policies & 1u << p);
	h = 62 + 14 + nrow * (ROW_H + 14) + 50 + 20 + 14 + 160 + 80;
	svg_begin(f, W_ALL, h, "hrt replay: wake-ups and lateness in the window");
	snprintf(buf, sizeof(buf), "hrt replay %s: %" PRIu64 " CPUs, %" PRIu64 " armings, "
		 "optimum %" PRIu64 " wake-ups (no policy below it)", name, r->cpus, r->armings,
		 r->optimal_wakeups);
	if (r->slack)
		slack_describe(r->slack, what, sizeof(what));
	svg_text(f, 10, 20, 14, "start", "#111", buf);
	if (*what) {
		/* the title says which windows every figure below is of */
		snprintf(buf, sizeof(buf), "with %s (%" PRIu64 " wake-ups as recorded)", what,
			 r->optimal_wakeups_recorded);
		svg_text(f, 10, 38, 13, "start", "#111", buf);
	}
	raster(f, r, 62);
	histogram(f, r, 62 + 14 + nrow * (ROW_H + 14) + 50 + 20);
	svg_end(f);
	if (ferror(f)) {
		errno = EIO;
		return -1;
	}
	return 0;
}
