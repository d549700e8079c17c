/* SPDX-License-Identifier: MIT */
/*
 * cmd_run.c - `hrt run --slack D -- CMD [ARGS...]`: runs CMD with timer
 * slack D.  The slack is set on this process (PR_SET_TIMERSLACK), which
 * then becomes CMD (execvp): the kernel keeps a task's slack across execve
 * and gives it to every thread and child the task makes, so no root is
 * needed and nothing outlives CMD.  The exit status is CMD's (it is CMD);
 * 127 when CMD is not found and 126 when it cannot be run, as the shell
 * does.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "cmds.h"
#include "../common/opt.h"
#include "../apply/proc.h"
#include "../replay/slack.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: hrt run --slack D [--] CMD [ARGS...]\n\n"
		"Runs CMD with timer slack D: the kernel may run its sleep, poll, epoll\n"
		"and futex timeouts up to D late, so that they share wake-ups.  Threads\n"
		"and children of CMD inherit it; timerfd, POSIX timers and setitimer do\n"
		"not take slack (those need range timers in the program).  No root needed.\n\n"
		"  --slack D    the slack: 1ms, 500us, 0.5s (0: the kernel's default,\n"
		"               usually 50 us); the same D as `hrt replay --slack D`\n"
		"  -h, --help   this text\n\n"
		"Exit status: CMD's; 127 CMD not found, 126 CMD not runnable, 2 usage,\n"
		"1 the slack could not be set (a real-time task gets none).\n");
}

/* Sets this task's slack and checks that the kernel took it (it keeps 0 for
 * a real-time task).  The slack is read back from /proc/self/timerslack_ns:
 * PR_GET_TIMERSLACK returns an int, wrong from 2^31 ns (about 2.1 s) on;
 * it serves only where /proc is not mounted.  0, or 1 with a message. */
static int set_slack(uint64_t ns)
{
	const char *rt = proc_rt_policy_name(sched_getscheduler(0));
	uint64_t got;
	int r;

	if (prctl(PR_SET_TIMERSLACK, (unsigned long)ns, 0, 0, 0)) {
		fprintf(stderr, "hrt run: PR_SET_TIMERSLACK: %s\n", strerror(errno));
		return 1;
	}
	if (proc_get_slack(getpid(), &got)) {
		if (ns >= (1ULL << 31) || (r = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0)) < 0)
			return 0;       /* nothing to read it back with */
		got = (uint64_t)r;
	}
	if (ns && got != ns) {
		fprintf(stderr, "hrt run: the kernel kept timer slack %llu ns instead of %llu: %s%s%s\n",
			(unsigned long long)got, (unsigned long long)ns,
			rt ? "a real-time task (" : "", rt ? rt : "it refused it",
			rt ? ") gets no slack" : "");
		return 1;
	}
	return 0;
}

struct run_opts {
	uint64_t ns;
	int have;
};

static int on_opt(void *ctx, int c, const char *arg)
{
	struct run_opts *o = ctx;
	char why[256];

	if (c == 's') {
		if (opt_duration(arg, 0, &o->ns, why, sizeof(why))) {
			fprintf(stderr, "hrt run: --slack %s\n", why);
			return 2;
		}
		o->have = 1;
	}
	return -1;
}

int hrt_cmd_run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "slack", required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	static const struct opt_cmd cmd = { "run", "+", opts, usage, on_opt, -1 };
	struct run_opts o = { 0, 0 };
	uint64_t ns;
	int have, c;

	if ((c = opt_parse(&cmd, argc, argv, &o)) >= 0)
		return c;
	ns = o.ns;
	have = o.have;
	if (!have) {
		fprintf(stderr, "hrt run: --slack D is required (for example --slack 1ms)\n");
		return 2;
	}
	if (optind >= argc) {
		fprintf(stderr, "hrt run: no command to run (hrt run --slack D -- CMD [ARGS...])\n");
		return 2;
	}
	if (set_slack(ns))
		return 1;
	fflush(stdout);
	execvp(argv[optind], argv + optind);
	c = errno;
	fprintf(stderr, "hrt run: %s: %s\n", argv[optind], strerror(c));
	return c == ENOENT || c == ENOTDIR ? 127 : 126;
}
