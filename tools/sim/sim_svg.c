/* SPDX-License-Identifier: MIT */
/*
 * sim_svg.c - the picture of 'hrt sim': migrations per point and the
 * idle/off ratios against the target load, with the article's data point;
 * written through outfile.h like every file the tool writes.
 */
#include <stdio.h>

#include "../common/outfile.h"
#include "sim.h"
#include "../common/svg.h"

#define PL_X0 70.0
#define PL_W 600.0
#define PL_H 220.0
#define PL_TICKS 5              /* at most, per y axis */
#define LG_X (PL_X0 + PL_W + 20)        /* legends: right of the plots */
#define LG_W 220.0

static double px(int load)
{
	return PL_X0 + PL_W * load / 100.0;
}

/* A frame, grid and labels for 0..top in steps of step. */
static void axes(FILE *f, double y0, double top, double step, int decimals, const char *ylabel)
{
	char buf[64];
	int nt = (int)(top / step + 0.5);

	svg_rect(f, PL_X0, y0, PL_W, PL_H, "none", "#888");
	for (int l = 0; l <= 100; l += 10) {
		svg_line(f, px(l), y0, px(l), y0 + PL_H, "#eee", 1, NULL);
		snprintf(buf, sizeof(buf), "%d", l);
		svg_text(f, px(l), y0 + PL_H + 14, 11, "middle", "#444", buf);
	}
	for (int k = 0; k <= nt; k++) {
		double y = y0 + PL_H - PL_H * k / nt;

		if (k && k < nt)
			svg_line(f, PL_X0, y, PL_X0 + PL_W, y, "#eee", 1, NULL);
		snprintf(buf, sizeof(buf), "%.*f", decimals, step * k);
		svg_text(f, PL_X0 - 6, y + 4, 11, "end", "#444", buf);
	}
	svg_text(f, PL_X0 + PL_W / 2, y0 + PL_H + 30, 12, "middle", "#111",
		 "target utilisation (busy %)");
	svg_text(f, PL_X0, y0 - 8, 13, "start", "#111", ylabel);
}

static void series(FILE *f, const struct sim_point *p, int n, double y0, double ymax,
		   double (*val)(const struct sim_point *, int), int which,
		   const char *colour, const char *dash)
{
	double xs[16], ys[16];

	for (int i = 0; i < n && i < 16; i++) {
		double v = val(&p[i], which);

		xs[i] = px(p[i].load);
		ys[i] = y0 + PL_H - PL_H * (v > ymax ? ymax : v) / ymax;
		svg_circle(f, xs[i], ys[i], 3, colour);
	}
	svg_polyline(f, xs, ys, n < 16 ? n : 16, colour, 2, dash);
}

static double v_migr(const struct sim_point *p, int k)
{
	return (double)p->r[k].migrations;
}

static double v_ratio(const struct sim_point *p, int k)
{
	return k ? sim_ratio(p->r[1].wakeups, p->r[0].wakeups)
		 : sim_ratio(p->r[1].migrations, p->r[0].migrations);
}

/* Entry i of a legend whose first line is at y. */
static void legend(FILE *f, double y, int i, const char *colour, const char *dash,
		   const char *text)
{
	y += 18 * i;
	svg_line(f, LG_X, y - 4, LG_X + 24, y - 4, colour, 2, dash);
	svg_text(f, LG_X + 30, y, 11, "start", "#111", text);
}

/* The picture: migrations and the wake-up ratio per point. */
static void draw_plot(FILE *f, const struct sim_config *c, const struct sim_point *p, int n)
{
	static const char *const col[3] = { "#d62728", "#1f77b4", "#2ca02c" };
	double mmax = 1, rmax = 1.25, y1 = 70, y2 = 70 + PL_H + 80, mstep, rstep;
	char buf[300], sl[200];
	int mdec, rdec;

	for (int i = 0; i < n; i++)
		for (int k = 0; k < 3; k++) {
			if (v_migr(&p[i], k) > mmax)
				mmax = v_migr(&p[i], k);
			if (v_ratio(&p[i], k > 1 ? 1 : k) > rmax)
				rmax = v_ratio(&p[i], k > 1 ? 1 : k);
		}
	mstep = svg_nice_axis(mmax, PL_TICKS, &mmax, &mdec);
	rstep = svg_nice_axis(rmax, PL_TICKS, &rmax, &rdec);
	if (mstep < 1) {        /* migrations are counts: no 0.5 ticks */
		mstep = 1;
		mdec = 0;
		mmax = mmax < 1 ? 1 : mmax;
	}
	svg_begin(f, LG_X + LG_W, y2 + PL_H + 50, "hrt sim: migrations and wake-ups by policy");
	sim_slack_str(c, sl, sizeof(sl), "\xc2\xb5s");
	snprintf(buf, sizeof(buf), "hrt sim: %d CPUs, %d threads, slack %s, "
		 "period %.0f \xc2\xb5s, %.2f s per point, seed %llu", c->cpus, c->threads, sl, (double)c->period / 1000, (double)c->duration / 1e9,
		 (unsigned long long)c->seed);
	svg_text(f, 10, 22, 14, "start", "#111", buf);
	/* Equal slack orders soft expiries as hard ones: the walk that stops at
	 * the first timer not yet due has left nothing due behind it. */
	if (c->nslack == 1)
		svg_text(f, 10, 42, 12, "start", "#a00",
			 "one slack for every timer: soft order = hard order, so greedy finds "
			 "nothing the stock walk leaves (a no-op); use --slack A,B for mixed slack");
	axes(f, y1, mmax, mstep, mdec, "thread migrations per point");
	for (int k = 0; k < 3; k++)
		series(f, p, n, y1, mmax, v_migr, k, col[k], k == 2 ? "6,3" : NULL);
	svg_group_begin(f, "legend");
	for (int k = 0; k < 3; k++)
		legend(f, y1 + 10, k, col[k], k == 2 ? "6,3" : NULL, sim_policy_name[k]);
	svg_group_end(f);
	axes(f, y2, rmax, rstep, rdec, "ratio idle / off");
	svg_line(f, PL_X0, y2 + PL_H - PL_H / rmax, PL_X0 + PL_W, y2 + PL_H - PL_H / rmax,
		 "#888", 1, "4,4");
	series(f, p, n, y2, rmax, v_ratio, 0, col[1], NULL);
	series(f, p, n, y2, rmax, v_ratio, 1, "#9467bd", "6,3");
	/* The article's data point: migrations "just over half" at 80 % busy. */
	svg_rect(f, px(80) - 4, y2 + PL_H - PL_H * 0.55 / rmax - 4, 8, 8, "#000", NULL);
	svg_group_begin(f, "legend");
	legend(f, y2 + 10, 0, col[1], NULL, "migrations");
	legend(f, y2 + 10, 1, "#9467bd", "6,3", "wake-ups");
	svg_line(f, LG_X, y2 + 42 - 4, LG_X + 24, y2 + 42 - 4, "#888", 1, "4,4");
	svg_text(f, LG_X + 30, y2 + 46, 11, "start", "#111", "ratio 1: no change");
	svg_rect(f, LG_X + 8, y2 + 56, 8, 8, "#000", NULL);
	svg_text(f, LG_X + 30, y2 + 64, 11, "start", "#111", "article: migrations just");
	svg_text(f, LG_X + 30, y2 + 78, 11, "start", "#111", "over half at 80 % busy");
	svg_group_end(f);
	svg_end(f);
}

/* The plot into path (outfile.h: '-' is stdout); 0, or -1 after one line. */
int sim_write_plot(const char *path, const struct sim_config *c,
		      const struct sim_point *p, int n)
{
	struct outfile o;

	if (outfile_open(&o, path)) {
		outfile_report(&o, "sim");
		return -1;
	}
	draw_plot(o.f, c, p, n);
	if (outfile_commit(&o)) {
		outfile_report(&o, "sim");
		return -1;
	}
	return 0;
}
