/* SPDX-License-Identifier: MIT */
/*
 * record_tracefs.c - `hrt record --tracefs` (and the fallback when perf is
 * missing): the same four events recorded in a private tracefs instance
 * (live.h) while COMMAND runs or for SECONDS, written as the kernel's
 * trace text that the replay reads back:
 *
 *     COMM-PID (TGID) [CPU] SECS.NSEC: hrtimer_start: hrtimer=0x... function=...
 *
 * with nanosecond timestamps of trace_clock mono, the process column of the
 * kernel's record-tgid option, and only the fields the replay uses
 * (hrtimer_start: mode REL or ABS; sched_switch: next_pid).  The instance is removed on every
 * way out: the end, an error, Ctrl-C (which also ends the recording, as it
 * ends perf's, and the output is still written).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "live.h"
#include "record.h"

struct rec_out {
	FILE *f;
	struct live_trace *lt;
	uint64_t events;
};

/* A task or function name as one field of one line, at most MAX bytes
 * (0: all), padded to WIDTH: a control character (a task may name itself
 * "a\nb") is written as '?'.  A name of at most 15 bytes cannot hold a
 * header the reader would take for the line's own (trace_tracefs.c). */
static void put_name(FILE *f, const char *s, int width, size_t max)
{
	size_t n = strlen(s);

	if (max && n > max)
		n = max;
	for (int pad = width - (int)n; pad > 0; pad--)
		fputc(' ', f);
	for (size_t i = 0; i < n; i++)
		fputc((unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i], f);
}

void record_tracefs_line(FILE *f, const struct trace_event *ev, const char *comm, const char *fn)
{
	const char *name = ev->kind == TEV_START ? "hrtimer_start" :
			   ev->kind == TEV_CANCEL ? "hrtimer_cancel" :
			   ev->kind == TEV_EXPIRE ? "hrtimer_expire_entry" :
			   ev->kind == TEV_FORK ? "sched_process_fork" : "sched_switch";

	put_name(f, comm, 16, 15);
	fprintf(f, "-%-7d ", ev->pid);
	if (ev->tgid > 0)
		fprintf(f, "(%7d)", ev->tgid);
	else
		fputs("(-------)", f);
	fprintf(f, " [%03d] %lld.%09lld: %s: ", ev->cpu, (long long)(ev->t / 1000000000),
		(long long)(ev->t % 1000000000), name);
	switch (ev->kind) {
	case TEV_START:
		fprintf(f, "hrtimer=0x%llx function=", (unsigned long long)ev->id);
		put_name(f, fn, 0, 0);
		fprintf(f, " expires=%lld softexpires=%lld mode=%s\n", (long long)ev->hard,
			(long long)ev->soft, ev->rel ? "REL" : "ABS");
		break;
	case TEV_CANCEL:
		fprintf(f, "hrtimer=0x%llx\n", (unsigned long long)ev->id);
		break;
	case TEV_EXPIRE:
		fprintf(f, "hrtimer=0x%llx function=", (unsigned long long)ev->id);
		put_name(f, fn, 0, 0);
		fprintf(f, " now=%lld\n", (long long)ev->now);
		break;
	case TEV_FORK:          /* the child's name is not kept: the reader reads its PID */
		fprintf(f, "comm=");
		put_name(f, comm, 0, 15);
		fprintf(f, " pid=%d child_comm=? child_pid=%llu\n", ev->pid,
			(unsigned long long)ev->id);
		break;
	default:
		fprintf(f, "next_pid=%d\n", ev->kind == TEV_IDLE ? 0 : 1);
		break;
	}
}

static int write_event(void *ctx, const struct trace_event *ev)
{
	struct rec_out *o = ctx;

	record_tracefs_line(o->f, ev, live_name(o->lt, ev->comm), live_name(o->lt, ev->fn));
	o->events++;
	return ferror(o->f) ? -EIO : 0;
}

static pid_t start(char *const *argv)
{
	pid_t pid = fork();

	if (pid == 0) {
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
		execvp(argv[0], argv);
		fprintf(stderr, "hrt record: cannot run '%s': %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	return pid;
}

static double mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int record_tracefs(char *const *argv, double seconds, FILE *f, int *child_status)
{
	struct rec_out o = { f, NULL, 0 };
	struct timespec tick = { 0, 100000000 };
	char err[512];
	double end = 0;
	pid_t pid = -1;
	int e, ret = -1, st;

	*child_status = 0;
	live_stop = 0;
	live_catch_signals();
	if ((e = live_open(&o.lt, 0, "record", err, sizeof(err)))) {
		fprintf(stderr, "hrt record: %s\n", err);
		return -1;
	}
	/* SECONDS of tracing: setting up (the event formats, kallsyms) takes
	 * seconds under a sanitizer and is not part of them */
	if (seconds > 0)
		end = mono_now() + seconds;
	fprintf(f, "# tracer: nop\n# hrt record --tracefs: instance %s, trace_clock mono\n",
		live_instance(o.lt));
	if (argv && (pid = start(argv)) < 0) {
		fprintf(stderr, "hrt record: fork: %s\n", strerror(errno));
		goto out_close;
	}
	for (;;) {
		if (pid > 0 && waitpid(pid, &st, WNOHANG) == pid) {
			pid = -1;
			if (WIFEXITED(st))
				*child_status = WEXITSTATUS(st);
			if (argv && !end)
				break;
		}
		if (live_stop || (end && mono_now() >= end) || (!argv && !end))
			break;
		if ((e = live_poll(o.lt, 0, write_event, &o)))
			goto out_poll;
		nanosleep(&tick, NULL);
	}
	if (pid > 0) {          /* -d ended it: stop COMMAND as perf would */
		kill(pid, SIGINT);
		waitpid(pid, &st, 0);
		if (WIFEXITED(st))
			*child_status = WEXITSTATUS(st);
	}
	if ((e = live_poll(o.lt, 1, write_event, &o)))
		goto out_poll;
	if (live_lost(o.lt))
		fprintf(stderr, "hrt record: warning: the kernel dropped %llu events (buffer "
			"full); the trace has gaps\n", (unsigned long long)live_lost(o.lt));
	ret = 0;
	goto out_close;
out_poll:
	fprintf(stderr, "hrt record: reading the trace: %s\n", strerror(-e));
	if (pid > 0) {
		kill(pid, SIGINT);
		waitpid(pid, &st, 0);
	}
out_close:
	live_close(o.lt);
	return ret;
}
