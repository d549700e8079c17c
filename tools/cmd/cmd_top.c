/* SPDX-License-Identifier: MIT */
/*
 * cmd_top.c - `hrt top`: who wakes the CPUs right now, and what range timers
 * would save.  Events come from a private tracefs instance (live.h) - or,
 * with --input, from a recorded trace read as if live, a frame per -d
 * seconds of trace time - and feed the replay's model one by one
 * (replay_model_*, replay.h): the policies and the optimum are the
 * replay's, never a second implementation.  Every -d seconds a snapshot of
 * the model's per-group counts is taken; a frame shows the rates between
 * the newest snapshot and the one -w seconds older (top.h, top_view.c).
 *
 * On a terminal the screen is redrawn in place, cut to the terminal's size
 * (q quits, b switches the grouping process -> function -> cpu -> thread,
 * H between processes and threads as procps top's H does, h or ? shows
 * what each column means); -b (or an output that is not a
 * terminal) prints frames one after the other, --csv as CSV rows.  The
 * instance is removed on every way out: q, -n, Ctrl-C, errors.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "cmds.h"
#include "../common/opt.h"
#include "../live/live.h"
#include "../common/outfile.h"
#include "../common/text.h"
#include "../live/top.h"

struct top_opts {
	double interval, window;
	long frames;            /* 0: until q or a signal */
	int batch, csv, by;
	const char *input;      /* a recorded trace instead of the live one */
	struct slack slack;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: hrt top [-b] [-n FRAMES] [-d SECONDS] [-w SECONDS] [--csv]\n"
		"               [--by process|thread|function|cpu] [--slack D|P%%]\n"
		"               [--slack-for user|all|COMM[,COMM...]] [--input FILE]\n\n"
		"Shows, live, who wakes the CPUs: per process (or timer function, or CPU)\n"
		"the wake-ups per second the kernel ran, what libhrt's stock policy (off) and\n"
		"greedy expiry (always) would need, the offline optimum, and what greedy and\n"
		"--slack would save (as `hrt replay` computes them; the same model, fed event\n"
		"by event), over a sliding window; totals per CPU on top.  Traces in a\n"
		"private tracefs instance (instances/hrt-PID, trace_clock mono, the hrtimer\n"
		"and sched_switch events), removed on exit.\n\n"
		"  -d SECONDS    refresh every SECONDS (default 1; 0.01 to 3600)\n"
		"  -w SECONDS    the window the rates are over (default 5; at least -d, at\n"
		"                most 1000 times -d; 0: since the start)\n"
		"  -n FRAMES     stop after FRAMES frames (default: until q or Ctrl-C)\n"
		"  -b            batch mode: no terminal control, frames one after another\n"
		"                (also when stdout is not a terminal)\n"
		"  --csv         batch mode as CSV: one row per group per frame\n"
		"  --by B        group by process (default), thread, function or cpu\n"
		"  --slack D|P%%  --slack-for W   as in `hrt replay`\n"
		"  --input FILE  replay a recorded trace (any format `hrt replay` reads) as\n"
		"                if live, a frame per -d seconds of its time, without waiting\n"
		"  -h, --help    this text\n\n"
		"Keys: q quits, b switches the grouping (process, function, cpu, thread),\n"
		"H between processes and threads, h or ? shows what each column means.\n"
		"Exit status: 0 success; 1 cannot trace (needs root or tracefs write access;\n"
		"built without libtracefs-dev and libtraceevent-dev) or an output error; 2 bad\n"
		"arguments or a bad --input trace.\n");
}

/*
 * Bounds of -d and -w.  Below 10 ms a frame shows less than the live
 * reader's own hold-back (LIVE_LAG_NS) and --input prints frames by the
 * million; a window keeps one snapshot of every group per frame, so -w / -d
 * is bounded too (at 1000, a few MB for a busy machine).
 */
#define TOP_D_MIN 0.01
#define TOP_D_MAX 3600.0
#define TOP_FRAMES_PER_WINDOW 1000

enum { O_CSV = 256, O_BY, O_SLACK, O_SLACK_FOR, O_INPUT };

static int on_opt(void *ctx, int c, const char *arg)
{
	struct top_opts *o = ctx;
	uint64_t v;
	int k;

	switch (c) {
	case 'b': o->batch = 1; break;
	case 'd':
		return opt_seconds("top", "-d", arg, TOP_D_MIN, 0, TOP_D_MAX, 0, &o->interval) ? 2 : -1;
	case 'w':
		return opt_seconds("top", "-w", arg, TOP_D_MIN, 0, TOP_D_MAX, 1, &o->window) ? 2 : -1;
	case 'n':
		if (opt_count("top", "-n", arg, 1, 100000000, "a number of frames in [1, 100000000]",
			      &v))
			return 2;
		o->frames = (long)v;
		break;
	case O_CSV: o->csv = o->batch = 1; break;
	case O_BY:
		for (k = 0; k < RP_NBY && strcmp(arg, replay_by_names[k]); k++)
			;
		if (k == RP_NBY)
			return opt_bad("top", "--by", arg, "process, thread, function or cpu");
		o->by = k;
		break;
	case O_SLACK:
	case O_SLACK_FOR:
		if ((k = slack_option(&o->slack, c == O_SLACK_FOR, arg, "hrt top")))
			return k;
		break;
	case O_INPUT: o->input = arg; break;
	}
	return -1;
}

/* -1 go on, or the exit status: 0 after --help, 1 out of memory, 2 a
 * usage error, after saying why. */
static int parse_opts(int argc, char **argv, struct top_opts *o)
{
	static const struct option opts[] = {
		{ "csv", no_argument, NULL, O_CSV },
		{ "by", required_argument, NULL, O_BY },
		{ "slack", required_argument, NULL, O_SLACK },
		{ "slack-for", required_argument, NULL, O_SLACK_FOR },
		{ "input", required_argument, NULL, O_INPUT },
		{ NULL, 0, NULL, 0 },
	};
	static const struct opt_cmd cmd = { "top", "bd:n:w:", opts, usage, on_opt, 0 };
	int st;

	o->interval = 1;
	o->window = 5;
	if ((st = opt_parse(&cmd, argc, argv, o)) >= 0)
		return st;
	if (o->window > 0 && o->window < o->interval)
		o->window = o->interval;
	if (o->window / o->interval > TOP_FRAMES_PER_WINDOW) {
		fprintf(stderr, "hrt top: -w %g with -d %g: a window of more than %d frames "
			"(raise -d or lower -w)\n", o->window, o->interval, TOP_FRAMES_PER_WINDOW);
		return 2;
	}
	if (!isatty(STDOUT_FILENO))
		o->batch = 1;
	return -1;
}

/* The running state -------------------------------------------------------- */

struct top {
	struct top_opts *o;
	struct live_trace *lt;
	struct trace_reader *r;
	struct replay *rp;
	struct replay_result res;
	struct top_view v;
	struct top_snap base;   /* at the start: -w 0 counts from it */
	struct top_snap *ring;  /* snapshots, ring of nring (frame f at f % nring) */
	long nring, frame;
	int tty, help;          /* help: the help screen is shown (h, ?) */
	struct termios saved;
	hrt_time_t frame_end;   /* --input: the end of the current frame (ns) */
	struct trace_event held;/* --input: the first event of the next frame */
	int has_held, eof;
};

static double mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void snap_free(struct top_snap *s)
{
	for (int b = 0; b < RP_NBY; b++) {
		free(s->g[b]);
		s->g[b] = NULL;
		s->n[b] = 0;
	}
}

static int snap_take(struct top *tp, struct top_snap *s, double t)
{
	snap_free(s);
	s->t = t;
	for (int b = 0; b < RP_NBY; b++)
		if (replay_model_groups(tp->rp, b, &s->g[b], &s->n[b]))
			return -ENOMEM;
	return 0;
}

static int feed(void *ctx, const struct trace_event *ev)
{
	struct top *tp = ctx;

	return replay_model_feed(tp->rp, ev);
}

/* --input: feeds the events of one frame; 1 at the end of the trace. */
static int feed_file(struct top *tp, char *err, size_t len)
{
	struct trace_event ev;
	int k;

	if (tp->has_held) {
		if (tp->held.t >= tp->frame_end)
			return 0;
		tp->has_held = 0;
		if (replay_model_feed(tp->rp, &tp->held))
			return snprintf(err, len, "out of memory"), -ENOMEM;
	}
	while ((k = trace_next(tp->r, &ev)) > 0) {
		if (tp->frame_end == INT64_MIN)
			tp->frame_end = ev.t + (hrt_time_t)(tp->o->interval * 1e9);
		if (ev.t >= tp->frame_end) {
			tp->held = ev;
			tp->has_held = 1;
			return 0;
		}
		if (replay_model_feed(tp->rp, &ev))
			return snprintf(err, len, "out of memory"), -ENOMEM;
	}
	if (k < 0 || trace_finish(tp->r)) {
		snprintf(err, len, "%s", trace_error(tp->r));
		return trace_error_is_oom(tp->r) ? -ENOMEM : -EINVAL;
	}
	return 1;
}

static const char *top_name(const void *src, uint32_t i)
{
	return trace_fn_name(src, i);
}

/* Opens the source and the model; exit status on failure, 0. */
static int top_open(struct top *tp, struct top_opts *o)
{
	struct replay_opts ro = { RP_ALL, RP_IDLE_TRACE, 0, &o->slack, NULL };
	char err[512];
	const char *e2;
	int e;

	tp->o = o;
	tp->frame_end = INT64_MIN;
	if (o->input) {
		if (trace_open(&tp->r, o->input, 0, TRACE_AUTO, &e2)) {
			fprintf(stderr, "hrt top: %s\n", e2);
			return 2;
		}
		e = replay_model_new(&tp->rp, &ro, top_name, tp->r, 1, &tp->res);
	} else {
		if ((e = live_open(&tp->lt, 1, "top", err, sizeof(err)))) {
			fprintf(stderr, "hrt top: %s\n", err);
			return 1;
		}
		e = replay_model_new(&tp->rp, &ro, live_name, tp->lt, 1, &tp->res);
	}
	if (e) {
		fprintf(stderr, "hrt top: out of memory\n");
		return 1;
	}
	tp->v = (struct top_view){ tp->rp, o->by, o->slack.kind != SLACK_NONE, o->interval,
				   o->window, 0 };
	/* -w 0: since the start, the first snapshot always */
	tp->nring = o->window > 0 ? (long)(o->window / o->interval + 0.5) + 1 : 1;
	if (!(tp->ring = calloc((size_t)tp->nring, sizeof(*tp->ring)))) {
		fprintf(stderr, "hrt top: out of memory\n");
		return 1;
	}
	return 0;
}

static void top_close(struct top *tp)
{
	if (tp->tty)
		tcsetattr(STDIN_FILENO, TCSANOW, &tp->saved);
	for (long i = 0; tp->ring && i < tp->nring; i++)
		snap_free(&tp->ring[i]);
	snap_free(&tp->base);
	free(tp->ring);
	replay_model_free(tp->rp);
	live_close(tp->lt);
	trace_close(tp->r);
}

/* The snapshot a window before frame f, and frame f's. */
static void window_of(const struct top *tp, long f, const struct top_snap **a,
		      const struct top_snap **b)
{
	long from = f - (tp->nring - 1);

	*b = &tp->ring[f % tp->nring];
	if (tp->o->window <= 0 || from <= 0)
		*a = &tp->base;
	else
		*a = &tp->ring[from % tp->nring];
}

/* The terminal's size, 80x24 when it does not say. */
static void screen_size(int *rows, int *cols)
{
	struct winsize ws;

	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) || !ws.ws_row || !ws.ws_col) {
		*rows = 24;
		*cols = 80;
		return;
	}
	*rows = ws.ws_row;
	*cols = ws.ws_col;
}

/* Text for a screen of rows x cols: each line cut to cols - 1 columns (a
 * full-width line wraps on some terminals), at most rows - 1 lines, then
 * the keys on the last one when they are read (not with --input). */
static void put_screen(const char *text, int rows, int cols, int keys)
{
	const char *p = text;

	fputs("\033[H\033[2J", stdout);
	for (int line = 0; *p && line < rows - 1; line++) {
		size_t n = strcspn(p, "\n");
		char buf[512];

		snprintf(buf, sizeof(buf), "%.*s", (int)(n < sizeof(buf) ? n : sizeof(buf) - 1), p);
		text_cell(stdout, buf, (int)text_cols(buf) < cols - 1 ? (int)text_cols(buf) : cols - 1);
		fputc('\n', stdout);
		p += n + (p[n] == '\n');
	}
	if (keys)
		text_cell(stdout, "q quit  b grouping  H threads  h help", cols - 1 < 37 ? cols - 1 : 37);
}

static void draw(struct top *tp, long f)
{
	const struct top_snap *a, *b;
	char *text = NULL;
	size_t len = 0;
	int rows, cols;
	FILE *m;

	if (tp->lt)
		tp->v.lost = live_lost(tp->lt);
	window_of(tp, f, &a, &b);
	if (tp->o->csv) {
		top_print_csv(stdout, &tp->v, f, a, b);
	} else if (!tp->o->batch) {
		screen_size(&rows, &cols);
		if (!(m = open_memstream(&text, &len)))
			return;
		if (tp->help)
			top_print_help(m);
		else
			top_print_text(m, &tp->v, f, a, b, rows - 1);
		if (!fclose(m))
			put_screen(text, rows, cols, tp->tty);
		free(text);
	} else {
		if (f > 1)
			fputc('\n', stdout);
		top_print_text(stdout, &tp->v, f, a, b, -1);
	}
}

/* Waits up to `until` (monotonic seconds) feeding the model; 1 quit. */
static int wait_frame(struct top *tp, double until, long f, int *err)
{
	for (;;) {
		double left = until - mono_now();
		struct pollfd p = { STDIN_FILENO, POLLIN, 0 };
		int ms = left > 0.1 ? 100 : left > 0 ? (int)(left * 1000) : 0;

		if (live_stop)
			return 1;
		if ((*err = live_poll(tp->lt, 0, feed, tp)))
			return 1;
		if (left <= 0)
			return 0;
		if (!tp->tty) {
			struct timespec ts = { 0, (long)ms * 1000000L };

			nanosleep(&ts, NULL);
			continue;
		}
		if (poll(&p, 1, ms) == 1) {
			char ch;

			if (read(STDIN_FILENO, &ch, 1) != 1 || ch == 'q' || ch == 'Q')
				return 1;
			if (tp->help || ch == 'h' || ch == '?') {
				/* the help, or back from it: any key */
				tp->help = !tp->help;
				if (f > 1 || tp->help)
					draw(tp, f > 1 ? f - 1 : 1);
				fflush(stdout);
			} else if (ch == 'b' || ch == 'H') {   /* redraws the last frame */
				/* H: processes <-> threads, as procps top's H */
				tp->v.by = ch == 'b' ? (tp->v.by + 1) % RP_NBY :
					   tp->v.by == RP_BY_THREAD ? RP_BY_PROCESS : RP_BY_THREAD;
				if (f > 1)
					draw(tp, f - 1);
				fflush(stdout);
			}
		}
	}
}

static int run(struct top *tp)
{
	struct top_opts *o = tp->o;
	double next = mono_now();
	char err[1200];
	int e = 0, k;

	if (snap_take(tp, &tp->base, o->input ? 0 : live_started(tp->lt))) {
		fprintf(stderr, "hrt top: out of memory\n");
		return 1;
	}
	if (o->csv)
		top_csv_header(stdout, o->by);
	for (long f = 1; !o->frames || f <= o->frames; f++) {
		double t;

		if (o->input) {
			tp->frame_end = tp->frame_end == INT64_MIN ? INT64_MIN :
					tp->frame_end + (f > 1 ? (hrt_time_t)(o->interval * 1e9) : 0);
			if ((k = feed_file(tp, err, sizeof(err))) < 0) {
				fprintf(stderr, "hrt top: %s\n", err);
				return k == -ENOMEM ? 1 : 2;
			}
			t = (double)f * o->interval;
			if (k == 1 && tp->res.events)      /* the last, partial frame */
				t = (double)(f - 1) * o->interval +
				    (double)(tp->res.last - (tp->frame_end -
				     (hrt_time_t)(o->interval * 1e9))) / 1e9;
		} else {
			next += o->interval;
			k = wait_frame(tp, next, f, &e);
			if (e) {
				fprintf(stderr, "hrt top: reading the trace: %s\n", strerror(-e));
				return 1;
			}
			if (k)
				break;
			/* the model has the events up to LIVE_LAG_NS ago */
			t = mono_now() - (double)LIVE_LAG_NS / 1e9;
		}
		if (snap_take(tp, &tp->ring[f % tp->nring], t)) {
			fprintf(stderr, "hrt top: out of memory\n");
			return 1;
		}
		draw(tp, f);
		if (tool_flush_stdout("top"))
			return 1;
		if (o->input && k == 1)
			break;
	}
	/* the screen ends on the key line, without a newline: the shell's
	 * prompt goes under it, not after "h help" */
	if (!o->batch && (tp->tty || live_stop))
		fputc('\n', stdout);
	return 0;
}

int hrt_cmd_top(int argc, char **argv)
{
	struct top_opts o;
	struct top tp;
	int st;

	memset(&o, 0, sizeof(o));
	memset(&tp, 0, sizeof(tp));
	if ((st = parse_opts(argc, argv, &o)) >= 0) {
		slack_free(&o.slack);
		return st;
	}
	live_stop = 0;
	/* only a live trace has an instance to remove; --input's decompressor
	 * child must not inherit an ignored SIGPIPE */
	if (!o.input)
		live_catch_signals();
	if (!(st = top_open(&tp, &o))) {
		if (!o.batch && !o.input && isatty(STDIN_FILENO) && !tcgetattr(STDIN_FILENO, &tp.saved)) {
			struct termios raw = tp.saved;

			raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
			raw.c_cc[VMIN] = 0;
			raw.c_cc[VTIME] = 0;
			tp.tty = !tcsetattr(STDIN_FILENO, TCSANOW, &raw);
		}
		st = run(&tp);
	}
	top_close(&tp);
	slack_free(&o.slack);
	return st;
}
