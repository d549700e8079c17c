/* SPDX-License-Identifier: MIT */
/*
 * cmd_slack.c - `hrt slack D PID|NAME...` and `hrt slack --reset
 * PID|NAME...`: sets the timer slack of running processes through
 * /proc/PID/timerslack_ns (proc.h).
 *
 * Everything is checked before anything is written - the duration, the
 * caller's CAP_SYS_NICE, every PID and name (a name matching several
 * processes is listed and refused, never guessed), no real-time task - so
 * a refusal changes nothing.  The file reaches the main thread alone: the
 * output names the threads it leaves as they were.  --measure S traces
 * before and after the change and compares (measure.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cmds.h"
#include "../common/opt.h"
#include "../apply/measure.h"
#include "../apply/persist.h"
#include "../apply/proc.h"
#include "../replay/slack.h"

#define MAX_TARGETS 256
#define LIST_MAX 8              /* names and threads listed in a message */

struct target {
	pid_t pid;                      /* 0: a unit given by name */
	char comm[PROC_COMM_MAX];
	char unit[256];                 /* --persist, --unpersist: its service */
};

/* Where --persist, --unpersist, --list and the notes of what was applied
 * live: below --root DIR, else $HRT_SLACK_ROOT (tests), else "/". */
static const char *root_dir = "/";

static void usage(FILE *f)
{
	fprintf(f,
		"usage: hrt slack D [--measure S] PID|NAME...\n"
		"       hrt slack --reset PID|NAME...\n"
		"       hrt slack D --persist PID|NAME|UNIT...   (a systemd service's, kept)\n"
		"       hrt slack --unpersist PID|NAME|UNIT...\n"
		"       hrt slack --list\n\n"
		"Sets the timer slack of running processes to D (1ms, 500us, 0.5s):\n"
		"their sleep, poll, epoll and futex timeouts may then run up to D late\n"
		"and share wake-ups.  --reset gives them back their default (usually\n"
		"50 us).  NAME matches the process name exactly, as pgrep -x does; a\n"
		"name that matches several processes is refused with their PIDs.\n\n"
		"Only the main thread of each process is reached (the kernel offers no\n"
		"more): its other threads keep their slack and are listed; threads and\n"
		"children it starts later inherit the new slack.  To give every thread\n"
		"slack, start the program with hrt run --slack D.  Real-time tasks\n"
		"(SCHED_FIFO, SCHED_RR, SCHED_DEADLINE) get no slack from the kernel\n"
		"and are refused, and so are kernel threads unless --kernel-threads is\n"
		"given.  Needs root (CAP_SYS_NICE).\n\n"
		"  --reset      back to each process's default slack\n"
		"  --kernel-threads  change kernel threads too (kthreadd's slack is every\n"
		"               new kernel thread's)\n"
		"  --measure S  trace S seconds before and S seconds after setting it\n"
		"               (tracefs, as hrt record --tracefs) and print per CPU and per\n"
		"               process the wake-ups per second before, the prediction (the\n"
		"               before window replayed with that slack) and the measurement\n"
		"               after; S in (0, 600]\n"
		"  --persist    also keep it for the process's systemd service (or UNIT,\n"
		"               NAME.service): a drop-in /etc/systemd/system/UNIT.d/\n"
		"               hrt-slack.conf with TimerSlackNSec=, read after systemctl\n"
		"               daemon-reload and applied at the unit's next start; a\n"
		"               process in no service (a login session's) is refused: start\n"
		"               it with hrt run --slack D instead\n"
		"  --unpersist  remove that drop-in (only a file hrt wrote)\n"
		"  --list       the drop-ins hrt wrote and the processes still running with\n"
		"               the slack hrt set\n"
		"  --root DIR   those files below DIR, not / (default: $HRT_SLACK_ROOT)\n"
		"  -h, --help   this text\n\n"
		"Exit status: 0 done, 1 refused (no CAP_SYS_NICE, a real-time task) or\n"
		"failed, 2 usage (bad duration, no such process, ambiguous name).\n");
}

/* PID or NAME into t[*n] (duplicates kept once).  0, or 2 with a message. */
static int resolve(const char *arg, struct target *t, size_t *n)
{
	pid_t found[LIST_MAX + 1];
	long k;
	char *end;

	errno = 0;
	long v = strtol(arg, &end, 10);

	if (*arg >= '0' && *arg <= '9' && !*end) {
		pid_t tg;

		if (errno || v <= 0 || v > 0x3fffffff || (tg = proc_tgid((pid_t)v)) < 0) {
			fprintf(stderr, "hrt slack: no process %s\n", arg);
			return 2;
		}
		if (tg != (pid_t)v) {
			fprintf(stderr, "hrt slack: %s is a thread of process %d, not a process; its "
				"slack cannot be set from outside (give %d to set the main thread's)\n",
				arg, (int)tg, (int)tg);
			return 2;
		}
		found[0] = (pid_t)v;
		k = 1;
	} else if ((k = proc_find_name(arg, found, LIST_MAX + 1)) < 0) {
		fprintf(stderr, "hrt slack: reading /proc: %s\n", strerror((int)-k));
		return 1;
	} else if (k == 0) {
		fprintf(stderr, "hrt slack: no process named '%s' (names match exactly, as "
			"pgrep -x does)\n", arg);
		return 2;
	} else if (k > 1) {
		fprintf(stderr, "hrt slack: '%s' matches %ld processes:", arg, k);
		for (long i = 0; i < k && i < LIST_MAX; i++)
			fprintf(stderr, " %d", (int)found[i]);
		fprintf(stderr, "%s; give the PIDs of those to change\n", k > LIST_MAX ? " ..." : "");
		return 2;
	}
	for (size_t i = 0; i < *n; i++)
		if (t[i].pid == found[0])
			return 0;
	if (*n == MAX_TARGETS) {
		fprintf(stderr, "hrt slack: at most %d processes at a time\n", MAX_TARGETS);
		return 2;
	}
	t[*n].pid = found[0];
	if (proc_comm(0, found[0], t[*n].comm, sizeof(t[*n].comm)))
		snprintf(t[*n].comm, sizeof(t[*n].comm), "?");
	(*n)++;
	return 0;
}

/* Refuses real-time tasks, whom the kernel gives no slack, and kernel
 * threads unless KTHREADS: kthreadd's slack is every new kernel thread's,
 * and a kernel thread's timers are the kernel's business. */
static int check_policy(const struct target *t, int kthreads)
{
	int p = proc_policy(t->pid), k = proc_is_kthread(t->pid);
	const char *rt = p >= 0 ? proc_rt_policy_name(p) : NULL;

	if (k < 0) {
		fprintf(stderr, "hrt slack: %d (%s): reading /proc/%d/stat: %s\n", (int)t->pid,
			t->comm, (int)t->pid, strerror(-k));
		return 1;
	}
	if (k && !kthreads) {
		fprintf(stderr, "hrt slack: %d (%s): refused: a kernel thread%s; give "
			"--kernel-threads to change it anyway\n", (int)t->pid, t->comm,
			t->pid == 2 ? " (kthreadd: every kernel thread started from now on "
			"would inherit it)" : "");
		return 1;
	}

	if (p < 0) {
		fprintf(stderr, "hrt slack: %d (%s): reading its policy: %s\n", (int)t->pid,
			t->comm, strerror(-p));
		return 1;
	}
	if (rt) {
		fprintf(stderr, "hrt slack: %d (%s): refused: a real-time task (%s); the kernel "
			"gives real-time tasks no timer slack\n", (int)t->pid, t->comm, rt);
		return 1;
	}
	return 0;
}

/* Names the threads the write did not reach. */
static void print_threads(const struct target *t)
{
	pid_t *tids;
	size_t n;
	char comm[PROC_COMM_MAX];

	if (proc_threads(t->pid, &tids, &n)) {
		printf("  (its threads could not be listed)\n");
		return;
	}
	if (!n) {
		printf("  one thread: all of it is reached\n");
		free(tids);
		return;
	}
	printf("  only the main thread is reached; %zu other thread%s keep%s %s own slack:",
	       n, n == 1 ? "" : "s", n == 1 ? "s" : "", n == 1 ? "its" : "their");
	for (size_t i = 0; i < n && i < LIST_MAX; i++) {
		if (proc_comm(t->pid, tids[i], comm, sizeof(comm)))
			snprintf(comm, sizeof(comm), "gone");
		printf(" %d (%s)", (int)tids[i], comm);
	}
	if (n > LIST_MAX)
		printf(" and %zu more", n - LIST_MAX);
	printf("\n  (threads started from now on inherit it; hrt run --slack D reaches all)\n");
	free(tids);
}

static int apply(const struct target *t, uint64_t ns);

struct apply_all {
	const struct target *t;
	size_t n;
	uint64_t ns;
};

/* --measure's apply(): every target, as without --measure. */
static int apply_all(void *ctx)
{
	const struct apply_all *a = ctx;
	int st = 0;

	for (size_t i = 0; i < a->n && !st; i++)
		st = apply(&a->t[i], a->ns);
	fflush(stdout);
	return st;
}

/* --measure: the targets to the measurement, which applies the slack. */
static int measure(const struct target *t, size_t n, uint64_t ns, double seconds)
{
	struct measure_target *m = calloc(n, sizeof(*m));
	struct apply_all a = { t, n, ns };
	int st;

	if (!m) {
		fprintf(stderr, "hrt slack: out of memory\n");
		return 1;
	}
	for (size_t i = 0; i < n; i++)
		m[i] = (struct measure_target){ t[i].pid, t[i].comm };
	st = slack_measure(m, n, ns, seconds, apply_all, &a, stdout);
	free(m);
	return st;
}

static int apply(const struct target *t, uint64_t ns)
{
	uint64_t before, after;
	char a[32], b[32];
	int e;

	if ((e = proc_get_slack(t->pid, &before)) || (e = proc_set_slack(t->pid, ns)) ||
	    (e = proc_get_slack(t->pid, &after))) {
		fprintf(stderr, "hrt slack: %d (%s): /proc/%d/timerslack_ns: %s\n", (int)t->pid,
			t->comm, (int)t->pid, strerror(-e));
		return 1;
	}
	opt_fmt_ns(before, a, sizeof(a));
	opt_fmt_ns(after, b, sizeof(b));
	printf("%d (%s): timer slack %s -> %s\n", (int)t->pid, t->comm, a, b);
	/* for hrt slack --list; the slack is set whatever becomes of the note */
	if ((e = applied_note(root_dir, t->pid, t->comm, before, ns)))
		fprintf(stderr, "hrt slack: %d (%s): set, but not noted for --list in %s: %s\n",
			(int)t->pid, t->comm, root_dir, strerror(-e));
	if (ns && after != ns) {
		fprintf(stderr, "hrt slack: %d (%s): the kernel kept %llu ns, not %llu\n",
			(int)t->pid, t->comm, (unsigned long long)after, (unsigned long long)ns);
		return 1;
	}
	print_threads(t);
	return 0;
}

struct slack_opts {
	double seconds;
	int reset, kthreads, persist, unpersist, list;
};

static int on_opt(void *ctx, int c, const char *arg)
{
	struct slack_opts *o = ctx;
	struct stat st;

	switch (c) {
	case 'r': o->reset = 1; break;
	case 'k': o->kthreads = 1; break;
	case 'm': return opt_seconds("slack", "--measure", arg, 0, 1, 600, 0, &o->seconds) ? 2 : -1;
	case 'p': o->persist = 1; break;
	case 'u': o->unpersist = 1; break;
	case 'l': o->list = 1; break;
	case 'R':
		if (stat(arg, &st) || !S_ISDIR(st.st_mode))
			return opt_bad("slack", "--root", arg, "a directory");
		root_dir = arg;
		break;
	}
	return -1;
}

/* The service of target t (a unit named, or a process's from its cgroup)
 * into t->unit; 0, or 1 after saying why there is none to keep it in. */
static int find_unit(struct target *t, uint64_t ns)
{
	enum unit_kind k;
	char cg[4096], d[32] = "D";
	const char *what, *why = "";
	int e;

	if (!t->pid)
		return 0;
	if ((e = persist_unit_of_pid(t->pid, &k, cg, sizeof(cg)))) {
		fprintf(stderr, "hrt slack: %d (%s): /proc/%d/cgroup: %s\n", (int)t->pid, t->comm,
			(int)t->pid, strerror(-e));
		return 1;
	}
	if (k == UNIT_SERVICE && !(e = persist_unit_name_ok(cg))) {
		memcpy(t->unit, cg, strlen(cg) + 1);    /* <= 253: name_ok */
		return 0;
	}
	if (ns)
		opt_fmt_ns(ns, d, sizeof(d));
	for (char *c = d; *c; c++)      /* "1 ms" -> "1ms", as the option takes it */
		if (*c == ' ')
			memmove(c, c + 1, strlen(c));
	switch (k) {
	case UNIT_SERVICE:
		what = "its service is ";
		why = e == -ENAMETOOLONG ? " (a name too long for its drop-in directory UNIT.d)" :
			" (a name hrt does not write for)";
		break;
	case UNIT_SCOPE:
		what = "it runs in the scope ";
		break;
	case UNIT_USER_SERVICE:
		what = "it is the user service ";
		why = " (a user's units are that user's: ~/.config/systemd/user/UNIT.d)";
		break;
	case UNIT_FOREIGN:
		what = "its cgroup is ";
		why = " (not below this system's slices: a container's units are its own)";
		break;
	default:
		what = "its cgroup is ";
		why = " (no systemd unit)";
	}
	fprintf(stderr, "hrt slack: %d (%s): refused: %s%s%s, so there is no system service to "
		"keep its slack in; hrt slack %s %d sets it until it exits, hrt run --slack %s -- "
		"CMD starts a program with it\n", (int)t->pid, t->comm, what, cg, why, d,
		(int)t->pid, d);
	return 1;
}

/* hrt slack --list: what hrt persisted and applied, below the root. */
static int list(void)
{
	int n;

	printf("persisted by hrt slack --persist (drop-ins below %s):\n", root_dir);
	if ((n = persist_list(root_dir, stdout)) < 0)
		return 1;
	if (!n)
		printf("  none\n");
	printf("applied by hrt slack, to processes still running (notes in %s%s" APPLIED_FILE
	       "):\n", root_dir, root_dir[strlen(root_dir) - 1] == '/' ? "" : "/");
	if ((n = applied_list(root_dir, stdout)) < 0) {
		fprintf(stderr, "hrt slack: --list: reading the notes: %s\n", strerror(-n));
		return 1;
	}
	if (!n)
		printf("  none\n");
	return 0;
}

/* --persist (ns) or --unpersist (ns 0) of every target's unit. */
static int persist(const struct target *t, size_t n, uint64_t ns)
{
	char path[4096];
	int st = 0, k;

	for (size_t i = 0; i < n; i++) {
		int dup = 0;

		for (size_t j = 0; j < i && !dup; j++)
			dup = !strcmp(t[j].unit, t[i].unit);
		if (dup)
			continue;
		if (ns) {
			if (persist_write(root_dir, t[i].unit, ns, path, sizeof(path))) {
				st = 1;
				continue;
			}
			printf("%s: persisted in %s; systemd reads it after systemctl daemon-reload "
			       "and applies it at the next start of %s\n", t[i].unit, path, t[i].unit);
		} else if ((k = persist_remove(root_dir, t[i].unit, path, sizeof(path)))) {
			if (k > 0)
				fprintf(stderr, "hrt slack: %s: no drop-in of hrt's to remove (%s)\n",
					t[i].unit, path);
			st = 1;
		} else {
			printf("%s: removed %s; after systemctl daemon-reload its next start has "
			       "the default slack (running processes keep theirs: hrt slack --reset "
			       "PID)\n", t[i].unit, path);
		}
	}
	return st;
}

int hrt_cmd_slack(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "reset", no_argument, NULL, 'r' },
		{ "measure", required_argument, NULL, 'm' },
		{ "kernel-threads", no_argument, NULL, 'k' },
		{ "persist", no_argument, NULL, 'p' },
		{ "unpersist", no_argument, NULL, 'u' },
		{ "list", no_argument, NULL, 'l' },
		{ "root", required_argument, NULL, 'R' },
		{ NULL, 0, NULL, 0 },
	};
	static const struct opt_cmd cmd = { "slack", "", opts, usage, on_opt, -1 };
	struct slack_opts o = { 0, 0, 0, 0, 0, 0 };
	struct target *t = NULL;
	size_t n = 0;
	uint64_t ns = 0;
	char why[256];
	double seconds;
	int reset, st = 0, has_pid = 0;

	if (getenv("HRT_SLACK_ROOT") && *getenv("HRT_SLACK_ROOT"))
		root_dir = getenv("HRT_SLACK_ROOT");
	if ((st = opt_parse(&cmd, argc, argv, &o)) >= 0)
		return st;
	st = 0;
	seconds = o.seconds;
	reset = o.reset || o.unpersist;
	if (o.list + o.persist + o.unpersist + o.reset > 1 || (o.list && (optind < argc ||
							   seconds > 0))) {
		fprintf(stderr, "hrt slack: --list, --persist, --unpersist and --reset exclude "
			"each other (and --list takes no argument)\n");
		return 2;
	}
	if (o.list)
		return list();
	if (!reset) {
		if (optind >= argc) {
			fprintf(stderr, "hrt slack: expected a duration and processes "
				"(hrt slack 1ms PID|NAME...)\n");
			return 2;
		}
		if (opt_duration(argv[optind], 0, &ns, why, sizeof(why))) {
			fprintf(stderr, "hrt slack: %s\n", why);
			return 2;
		}
		if (!ns) {
			fprintf(stderr, "hrt slack: a slack of 0: use --reset for the default\n");
			return 2;
		}
		optind++;
	}
	if (optind >= argc) {
		fprintf(stderr, "hrt slack: no process given (PID or NAME%s)\n",
			o.persist || o.unpersist ? ", or UNIT" : "");
		return 2;
	}
	if (reset && seconds > 0) {
		fprintf(stderr, "hrt slack: --measure predicts what a wider slack saves; it does "
			"not go with --reset\n");
		return 2;
	}
	if (!(t = calloc(MAX_TARGETS, sizeof(*t)))) {
		fprintf(stderr, "hrt slack: out of memory\n");
		return 1;
	}
	/* --persist and --unpersist take units too: NAME.service */
	for (int i = optind; i < argc && !st; i++) {
		size_t l = strlen(argv[i]);

		if ((o.persist || o.unpersist) && l > 8 && !strcmp(argv[i] + l - 8, ".service")) {
			int ok = persist_unit_name_ok(argv[i]);

			if (ok == -ENAMETOOLONG) {
				fprintf(stderr, "hrt slack: '%.20s...': %zu characters: its drop-in "
					"directory UNIT.d would be longer than the %d bytes a file name "
					"may have (%d characters at most)\n", argv[i], l,
					PERSIST_NAME_MAX, PERSIST_NAME_MAX - 2);
				st = 2;
			} else if (ok) {
				fprintf(stderr, "hrt slack: '%s': not a service name (letters, digits "
					"and :_.@- before .service)\n", argv[i]);
				st = 2;
			} else if (n < MAX_TARGETS) {
				snprintf(t[n].unit, sizeof(t[n].unit), "%s", argv[i]);
				t[n++].pid = 0;
			}
		} else {
			st = resolve(argv[i], t, &n);
		}
	}
	for (size_t i = 0; i < n && !st && (o.persist || o.unpersist); i++)
		st = find_unit(&t[i], ns);
	if (o.unpersist) {
		if (!st)
			st = persist(t, n, 0);
		free(t);
		return st;
	}
	for (size_t i = 0; i < n && !st; i++)
		has_pid |= t[i].pid > 0;
	if (!st && has_pid && !proc_can_set_slack()) {
		fprintf(stderr, "hrt slack: not permitted: setting another process's timer slack "
			"needs CAP_SYS_NICE; run as root (or start the program with hrt run "
			"--slack D, which needs no privilege)\n");
		free(t);
		return 1;
	}
	for (size_t i = 0; i < n && !st; i++)
		if (t[i].pid)
			st = check_policy(&t[i], o.kthreads);
	if (st) {
		free(t);
		return st;
	}
	if (!st && seconds > 0)
		st = measure(t, n, ns, seconds);
	else
		for (size_t i = 0; i < n && !st; i++)
			if (t[i].pid)
				st = apply(&t[i], ns);
	if (!st && o.persist)
		st = persist(t, n, ns);
	free(t);
	return st;
}
