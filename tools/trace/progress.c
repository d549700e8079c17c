/* SPDX-License-Identifier: MIT */
/*
 * progress.c - the progress line of long reads (progress.h).  A busy
 * server's minute is gigabytes of perf text and tens of seconds of replay:
 * without a line the tool looks hung.  The clock is read only every 4096
 * events, so the line costs nothing measurable per event.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "progress.h"

#define EVERY 0.25              /* s between updates */
#define CALLS 4096              /* events between clock reads */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void progress_start(struct progress *p, const char *cmd, const char *name, int quiet)
{
	size_t n = strlen(name);

	memset(p, 0, sizeof(*p));
	p->on = !quiet && isatty(STDERR_FILENO);
	p->cmd = cmd;
	/* the end of a long path says more than its start */
	snprintf(p->name, sizeof(p->name), "%s%s", n >= sizeof(p->name) ? "..." : "",
		 name + (n >= sizeof(p->name) ? n - (sizeof(p->name) - 4) : 0));
	p->t0 = p->on ? now_s() : 0;
	p->next = p->t0 + EVERY;
}

/* 1234567 -> "1.2 MB"; the unit fits the figure. */
static void fmt_size(char *buf, size_t len, double v, const char *unit)
{
	static const char *const pre[] = { "", "k", "M", "G", "T" };
	int i = 0;

	while (v >= 1000 && i < 4) {
		v /= 1000;
		i++;
	}
	snprintf(buf, len, i ? "%.1f%s%s%s" : "%.0f%s%s%s", v, *pre[i] || *unit ? " " : "",
		 pre[i], unit);
}

void progress_format(char *buf, size_t len, uint64_t done, uint64_t total, uint64_t events,
		     double elapsed)
{
	char d[32], t[32], e[32], r[32];
	double rate = elapsed > 0 ? (double)done / elapsed : 0;

	fmt_size(d, sizeof(d), (double)done, "B");
	fmt_size(e, sizeof(e), (double)events, "");
	fmt_size(r, sizeof(r), rate, "B/s");
	if (total) {
		fmt_size(t, sizeof(t), (double)total, "B");
		if (rate > 0 && done < total)
			snprintf(buf, len, "%.0f %% of %s, %s events, %s, %.0f s left",
				 100.0 * (double)done / (double)total, t, e, r,
				 (double)(total - done) / rate + 0.5);
		else
			snprintf(buf, len, "%.0f %% of %s, %s events, %s",
				 100.0 * (double)done / (double)total, t, e, r);
	} else {
		snprintf(buf, len, "%s, %s events, %s", d, e, r);
	}
}

void progress_tick(struct progress *p, const struct trace_reader *r, uint64_t events)
{
	uint64_t done, total;
	char line[160];
	double t;

	if (!p->on || ++p->calls < CALLS)
		return;
	p->calls = 0;
	if ((t = now_s()) < p->next)
		return;
	p->next = t + EVERY;
	trace_progress(r, &done, &total);
	progress_format(line, sizeof(line), done, total, events, t - p->t0);
	/* \r and erase to the end: the line is rewritten in place */
	fprintf(stderr, "\rhrt %s: %s: %s\033[K", p->cmd, p->name, line);
	fflush(stderr);
	p->shown = 1;
}

void progress_end(struct progress *p)
{
	if (!p->shown)
		return;
	fputs("\r\033[K", stderr);
	fflush(stderr);
	p->shown = 0;
}
