/* SPDX-License-Identifier: MIT */
/*
 * cmd_record.c - `hrt record`: records kernel hrtimer traffic with perf.
 *
 * Runs `perf record -k CLOCK_MONOTONIC -a` with timer:hrtimer_start,
 * timer:hrtimer_cancel, timer:hrtimer_expire_entry, sched:sched_switch and
 * sched:sched_process_fork
 * for COMMAND's lifetime (or -d SECONDS), then `perf script --ns` into the
 * output (xz- or gzip-compressed when its name ends in .xz or .gz), through
 * outfile.h: a regular file appears only when everything succeeded, a
 * device, FIFO or symlink is written through.  Before running perf it
 * checks its arguments (the duration, that COMMAND exists, that the output
 * can be created) and what perf needs - the binary, tracefs, and either
 * kernel.perf_event_paranoid <= -1 or CAP_PERFMON/CAP_SYS_ADMIN - and says
 * exactly which is missing.
 *
 * --tracefs records the same events in a private tracefs instance instead
 * (record_tracefs.c), as tracefs text; it is also what runs when perf is
 * not installed.
 *
 * --workload runs a built-in workload for the recording: threads sleeping
 * with mixed timer slack (prctl(PR_SET_TIMERSLACK) + nanosleep), the input
 * the shipped data/trace.hrt.xz was recorded from.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cmds.h"
#include "hrt.h"
#include "../live/live.h"
#include "../common/opt.h"
#include "../common/outfile.h"
#include "../live/record.h"

#define CAP_SYS_ADMIN_BIT 21
#define CAP_PERFMON_BIT   38

static const char *const events[] = {
	"timer:hrtimer_start", "timer:hrtimer_cancel", "timer:hrtimer_expire_entry",
	"sched:sched_switch", "sched:sched_process_fork",
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: hrt record [-o FILE] [-d SECONDS] [--tracefs] [--workload]\n"
		"                  [-- COMMAND [ARG...]]\n"
		"       hrt record -V | --help\n\n"
		"Records the kernel's hrtimer and scheduler events on all CPUs with\n"
		"  perf record -k CLOCK_MONOTONIC -a -e timer:hrtimer_start\n"
		"    -e timer:hrtimer_cancel -e timer:hrtimer_expire_entry -e sched:sched_switch\n"
		"    -e sched:sched_process_fork\n"
		"while COMMAND runs (or for -d SECONDS), then writes `perf script --ns` text,\n"
		"the input of `hrt replay` and `hrt convert`.\n\n"
		"  -o FILE       output (default hrt-record.txt, '-' stdout); FILE.xz /\n"
		"                FILE.gz are compressed with xz / gzip; a regular file is\n"
		"                replaced only on success, a symlink, device or FIFO is\n"
		"                written through\n"
		"  -d SECONDS    record this long (default 1 without COMMAND; with COMMAND,\n"
		"                stop after SECONDS even if it still runs)\n"
		"  --tracefs     record in a private tracefs instance (instances/hrt-PID,\n"
		"                trace_clock mono, only these four events; removed at the\n"
		"                end, on errors and on Ctrl-C) and write the kernel's trace\n"
		"                text; needs no perf, but libtracefs and libtraceevent at\n"
		"                build time.  Used without the option when perf is missing\n"
		"  --workload    run the built-in workload instead of COMMAND: 8 threads\n"
		"                sleeping 0.2-5 ms with timer slack 0, 50 us, 200 us, 1 ms\n"
		"  -V            print the version\n"
		"  -h, --help    this text\n\n"
		"Exit status: 0 success; 1 runtime failure (perf missing or not allowed,\n"
		"perf failed, output not writable or a write error); 2 bad arguments (a\n"
		"duration that is not a number in (0, 86400], a COMMAND that cannot be\n"
		"run).  COMMAND's own exit status is reported, not returned.\n\n"
		"Needs perf (Debian: linux-perf), read access to tracefs\n"
		"(/sys/kernel/tracing), and system-wide perf access: root, CAP_PERFMON (or\n"
		"CAP_SYS_ADMIN), or sysctl kernel.perf_event_paranoid=-1.  --tracefs needs\n"
		"root (or write access to tracefs) instead of perf.\n");
}

/* The workload ------------------------------------------------------------ */

struct wl_thread {
	unsigned long slack_ns;
	long sleep_ns;
	double seconds;
};

static void *wl_run(void *arg)
{
	const struct wl_thread *w = arg;
	struct timespec start, now, d = { 0, w->sleep_ns };
	volatile unsigned spin = 0;

	prctl(PR_SET_TIMERSLACK, w->slack_ns ? w->slack_ns : 1UL, 0, 0, 0);
	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		for (unsigned i = 0; i < 20000; i++)    /* a short work burst */
			spin += i;
		nanosleep(&d, NULL);
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while ((double)(now.tv_sec - start.tv_sec) +
		 (double)(now.tv_nsec - start.tv_nsec) / 1e9 < w->seconds);
	return NULL;
}

static int run_workload(double seconds)
{
	static const unsigned long slack[] = { 1, 50000, 200000, 1000000 };
	static const long sleep_ns[] = { 200000, 1000000, 2000000, 5000000 };
	struct wl_thread w[8];
	pthread_t th[8];

	for (int i = 0; i < 8; i++) {
		w[i] = (struct wl_thread){ slack[i % 4], sleep_ns[(i / 2) % 4], seconds };
		if (pthread_create(&th[i], NULL, wl_run, &w[i])) {
			fprintf(stderr, "hrt record: cannot start workload threads\n");
			return 1;
		}
	}
	for (int i = 0; i < 8; i++)
		pthread_join(th[i], NULL);
	return 0;
}

/* Checks ------------------------------------------------------------------ */

static int in_path(const char *prog)
{
	const char *path = getenv("PATH");
	char buf[PATH_MAX];

	if (!path)
		path = "/usr/bin:/bin";
	while (*path) {
		size_t n = strcspn(path, ":");

		snprintf(buf, sizeof(buf), "%.*s/%s", (int)n, path, prog);
		if (access(buf, X_OK) == 0)
			return 1;
		path += n + (path[n] == ':');
	}
	return 0;
}

static int has_cap(int bit)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	unsigned long long eff = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &eff) == 1)
			break;
	fclose(f);
	return (int)((eff >> bit) & 1);
}

/* 0, or 1 after saying what is missing. */
static int check_access(void)
{
	static const char *const tracefs[] = {
		"/sys/kernel/tracing/events/timer/hrtimer_start/id",
		"/sys/kernel/debug/tracing/events/timer/hrtimer_start/id",
	};
	int paranoid = 2, tracefs_ok = 0;
	int priv = geteuid() == 0 || has_cap(CAP_PERFMON_BIT) || has_cap(CAP_SYS_ADMIN_BIT);
	FILE *f;

	if (!in_path("perf")) {
		fprintf(stderr, "hrt record: perf not found in PATH; install it (Debian: "
			"apt-get install linux-perf)\n");
		return 1;
	}
	if ((f = fopen("/proc/sys/kernel/perf_event_paranoid", "r"))) {
		if (fscanf(f, "%d", &paranoid) != 1)
			paranoid = 2;
		fclose(f);
	}
	if (!priv && paranoid > -1) {
		fprintf(stderr, "hrt record: system-wide tracepoint recording is not permitted: "
			"kernel.perf_event_paranoid is %d; run as root, give perf CAP_PERFMON "
			"(or CAP_SYS_ADMIN), or set 'sysctl kernel.perf_event_paranoid=-1'\n",
			paranoid);
		return 1;
	}
	for (size_t i = 0; i < sizeof(tracefs) / sizeof(tracefs[0]); i++)
		if (access(tracefs[i], R_OK) == 0)
			tracefs_ok = 1;
	if (!tracefs_ok) {
		fprintf(stderr, "hrt record: cannot read the timer tracepoints in tracefs "
			"(/sys/kernel/tracing/events/timer/): mount tracefs "
			"('mount -t tracefs nodev /sys/kernel/tracing') and make it readable "
			"(root, or 'chmod -R a+rX /sys/kernel/tracing')\n");
		return 1;
	}
	return 0;
}

/* Running ------------------------------------------------------------------ */

static volatile sig_atomic_t alarm_fired;
static void on_alarm(int sig) { (void)sig; alarm_fired = 1; }

/* Runs argv with stdout to out_fd (if >= 0); returns its wait status or -1.
 * With stop_after > 0, sends SIGINT after that many seconds. */
static int run(char *const *argv, int in_fd, int out_fd, double stop_after)
{
	struct sigaction sa, old_int, old_alrm;
	pid_t pid;
	int st;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_IGN;        /* ^C goes to perf, which stops cleanly */
	sigaction(SIGINT, &sa, &old_int);
	pid = fork();
	if (pid < 0) {
		sigaction(SIGINT, &old_int, NULL);
		return -1;
	}
	if (pid == 0) {
		signal(SIGINT, SIG_DFL);
		if (in_fd >= 0)
			dup2(in_fd, 0);
		if (out_fd >= 0)
			dup2(out_fd, 1);
		execvp(argv[0], argv);
		fprintf(stderr, "hrt record: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	if (stop_after > 0) {
		struct itimerval itv;

		memset(&itv, 0, sizeof(itv));
		itv.it_value.tv_sec = (time_t)stop_after;
		itv.it_value.tv_usec = (suseconds_t)((stop_after - (double)(time_t)stop_after) * 1e6);
		sa.sa_handler = on_alarm;
		sigaction(SIGALRM, &sa, &old_alrm);
		alarm_fired = 0;
		setitimer(ITIMER_REAL, &itv, NULL);
	}
	for (;;) {
		if (waitpid(pid, &st, 0) == pid)
			break;
		if (errno != EINTR)
			break;
		if (alarm_fired) {
			kill(pid, SIGINT);
			alarm_fired = 0;
		}
	}
	if (stop_after > 0) {
		struct itimerval zero;

		memset(&zero, 0, sizeof(zero));
		setitimer(ITIMER_REAL, &zero, NULL);
		sigaction(SIGALRM, &old_alrm, NULL);
	}
	sigaction(SIGINT, &old_int, NULL);
	return st;
}

/* 0 if argv0 names an executable (directly or on PATH), else errno. */
static int find_command(const char *argv0)
{
	const char *path = getenv("PATH"), *p;
	char buf[PATH_MAX];
	int e = ENOENT;

	if (strchr(argv0, '/'))
		return access(argv0, X_OK) ? errno : 0;
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (p = path;; p++) {
		const char *q = strchrnul(p, ':');
		int n = q == p ? snprintf(buf, sizeof(buf), "./%s", argv0)
			       : snprintf(buf, sizeof(buf), "%.*s/%s", (int)(q - p), p, argv0);
		struct stat st;

		if (n > 0 && (size_t)n < sizeof(buf) && !stat(buf, &st) && !S_ISDIR(st.st_mode)) {
			if (!access(buf, X_OK))
				return 0;
			e = EACCES;
		}
		if (!*q)
			return e;
		p = q;
	}
}

static int ends_with(const char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);

	return n >= m && !strcmp(s + n - m, suf);
}

/* What the command line asked for. */
struct record_opts {
	const char *out;
	double seconds;         /* 0: as long as COMMAND runs */
	int workload;
	int tracefs;            /* record through tracefs, not perf */
	char **cmd;             /* COMMAND ARGS..., NULL-terminated; NULL: none */
};

static int on_opt(void *ctx, int c, const char *arg)
{
	struct record_opts *o = ctx;
	double s;

	switch (c) {
	case 'o': o->out = arg; break;
	case 'd': return opt_seconds("record", "-d", arg, 0, 1, 86400, 0, &o->seconds) ? 2 : -1;
	case 'w': o->workload = 1; break;
	case 't': o->tracefs = 1; break;
	case 'W':       /* internal: the workload's child, with its seconds */
		return opt_seconds("record", "--run-workload", arg, 0, 1, 86400, 0, &s) ? 2 :
		       run_workload(s);
	case 'V': printf("hrt record %s\n", hrt_version()); return 0;
	}
	return -1;
}

/* 0; 1 when the command is already done (--help, -V, the internal
 * workload: its status in *status); or 2 after saying why. */
static int parse_opts(int argc, char **argv, struct record_opts *o, int *status)
{
	static const struct option opts[] = {
		{ "workload", no_argument, NULL, 'w' },
		{ "tracefs", no_argument, NULL, 't' },
		{ "run-workload", required_argument, NULL, 'W' },    /* internal */
		{ NULL, 0, NULL, 0 },
	};
	static const struct opt_cmd cmd = { "record", "+o:d:V", opts, usage, on_opt, -1 };
	int e;

	memset(o, 0, sizeof(*o));
	o->out = "hrt-record.txt";
	if ((e = opt_parse(&cmd, argc, argv, o)) >= 0) {
		*status = e;
		return e == 2 ? 2 : 1;
	}
	if (o->workload && optind < argc) {
		fprintf(stderr, "hrt record: --workload and COMMAND exclude each other\n");
		return 2;
	}
	if (optind < argc && (e = find_command(argv[optind]))) {
		fprintf(stderr, "hrt record: cannot run '%s': %s\n", argv[optind], strerror(e));
		return 2;
	}
	o->cmd = optind < argc ? argv + optind : NULL;
	if (!o->cmd && o->seconds == 0)
		o->seconds = 1;
	return 0;
}

/* perf record's command line into pargv (room for the command's arguments
 * plus 32): system-wide, the monotonic clock, our events, then what runs
 * while it records.  self[PATH_MAX] and dsec[32] are storage it points
 * into.  0, or -1 after saying why. */
static int perf_argv(const struct record_opts *o, const char *data, char **pargv, char *self,
		     char *dsec)
{
	int n = 0;

	pargv[n++] = "perf";
	pargv[n++] = "record";
	pargv[n++] = "-q";
	pargv[n++] = "-o";
	pargv[n++] = (char *)data;
	pargv[n++] = "-k";
	pargv[n++] = "CLOCK_MONOTONIC";
	pargv[n++] = "-a";
	for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++) {
		pargv[n++] = "-e";
		pargv[n++] = (char *)events[i];
	}
	pargv[n++] = "--";
	snprintf(dsec, 32, "%.9f", o->seconds);
	if (o->workload) {
		ssize_t k = readlink("/proc/self/exe", self, PATH_MAX - 1);

		if (k <= 0) {
			perror("hrt record: /proc/self/exe");
			return -1;
		}
		self[k] = 0;
		pargv[n++] = self;
		pargv[n++] = "record";
		pargv[n++] = "--run-workload";
		pargv[n++] = dsec;
	} else if (o->cmd) {
		for (char **a = o->cmd; *a; a++)
			pargv[n++] = *a;
	} else {
		pargv[n++] = "sleep";
		pargv[n++] = dsec;
	}
	pargv[n] = NULL;
	return 0;
}

/* Records into data, then converts it to perf script text in text.  0, or
 * -1 after saying why. */
static int record_text(const struct record_opts *o, char **pargv, const char *data,
		       const char *text)
{
	char *sargv[] = { "perf", "script", "-i", (char *)data, "--ns", NULL };
	int st = run(pargv, -1, -1, o->cmd && o->seconds > 0 ? o->seconds : 0), tfd;

	if (st < 0 || access(data, R_OK)) {
		fprintf(stderr, "hrt record: perf record failed (exit status %d)%s\n",
			st >= 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1,
			geteuid() ? "; system-wide tracing needs root, CAP_PERFMON or "
				    "kernel.perf_event_paranoid=-1" : "");
		return -1;
	}
	if (st && WIFEXITED(st) && WEXITSTATUS(st) && o->cmd)
		fprintf(stderr, "hrt record: note: %s exited with status %d\n", o->cmd[0],
			WEXITSTATUS(st));
	tfd = open(text, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (tfd < 0) {
		perror("hrt record: temporary file");
		return -1;
	}
	st = run(sargv, -1, tfd, 0);
	close(tfd);
	if (st != 0) {
		fprintf(stderr, "hrt record: perf script failed\n");
		return -1;
	}
	return 0;
}

/* --tracefs: what perf would have run (pargv after "--") runs while the
 * events are recorded as tracefs text into text.  0, or -1 after saying
 * why. */
static int tracefs_text(const struct record_opts *o, char **pargv, const char *text)
{
	char **argv = pargv;
	FILE *f;
	int st, k;

	while (strcmp(*argv, "--"))
		argv++;
	argv++;
	if (!(f = fopen(text, "we"))) {
		perror("hrt record: temporary file");
		return -1;
	}
	/* without COMMAND perf runs `sleep SECONDS`: -d alone does it here */
	k = record_tracefs(o->cmd || o->workload ? argv : NULL, o->seconds, f, &st);
	if (fclose(f) && !k) {
		perror("hrt record: temporary file");
		k = -1;
	}
	if (!k && st && o->cmd)
		fprintf(stderr, "hrt record: note: %s exited with status %d\n", o->cmd[0], st);
	return k;
}

/* The text into the output, compressed for .xz and .gz (outfile.h keeps
 * it whole until the commit).  0, or -1 after saying why. */
static int write_output(struct outfile *of, const char *out, const char *text)
{
	int in = open(text, O_RDONLY | O_CLOEXEC), st = 0;

	if (in < 0) {
		fprintf(stderr, "hrt record: %s: %s\n", text, strerror(errno));
		return -1;
	}
	fflush(of->f);
	if (ends_with(out, ".xz") || ends_with(out, ".gz")) {
		char *zargv[] = { ends_with(out, ".xz") ? "xz" : "gzip", "-c", "-9", NULL };

		st = run(zargv, in, outfile_fd(of), 0);
	} else {
		/* copied here, so a write error is reported with its errno */
		char buf[65536];
		ssize_t k;

		while ((k = read(in, buf, sizeof(buf))) > 0 || (k < 0 && errno == EINTR))
			if (k > 0 && outfile_write(of, buf, (size_t)k))
				break;  /* commit reports it */
		if (k < 0) {
			fprintf(stderr, "hrt record: %s: %s\n", text, strerror(errno));
			close(in);
			return -1;
		}
	}
	close(in);
	if (st != 0) {
		fprintf(stderr, "hrt record: writing %s failed\n", out);
		return -1;
	}
	if (outfile_commit(of)) {
		outfile_report(of, "record");
		return -1;
	}
	return 0;
}

int hrt_cmd_record(int argc, char **argv)
{
	struct record_opts o;
	char dir[] = "/tmp/hrt-record-XXXXXX", data[64], text[64], old[80], self[PATH_MAX];
	char dsec[32], **pargv;
	struct outfile of;
	int ret = 1, st = 0, k;

	if ((k = parse_opts(argc, argv, &o, &st)))
		return k == 1 ? st : k;
	/* all of COMMAND's arguments, whatever their number */
	if (!(pargv = malloc(((size_t)argc + 32) * sizeof(*pargv)))) {
		fprintf(stderr, "hrt record: out of memory\n");
		return 1;
	}
	/* Opened (as a temporary for a regular file) before recording, so an
	 * unwritable output fails now, not after the recording. */
	if (outfile_open(&of, o.out)) {
		outfile_report(&of, "record");
		free(pargv);
		return 1;
	}
	if (!o.tracefs && !in_path("perf")) {
		fprintf(stderr, "hrt record: perf not found in PATH; recording through tracefs "
			"(--tracefs)\n");
		o.tracefs = 1;
	}
	if (!o.tracefs && check_access())
		goto out_abort;
	if (!mkdtemp(dir)) {
		perror("hrt record: mkdtemp");
		goto out_abort;
	}
	snprintf(data, sizeof(data), "%s/perf.data", dir);
	snprintf(text, sizeof(text), "%s/trace.txt", dir);
	snprintf(old, sizeof(old), "%s.old", data);
	if (!perf_argv(&o, data, pargv, self, dsec) &&
	    !(o.tracefs ? tracefs_text(&o, pargv, text) : record_text(&o, pargv, data, text)) &&
	    !write_output(&of, o.out, text)) {
		fprintf(stderr, "hrt record: wrote %s\n", o.out);
		ret = 0;
	}
	unlink(data);
	unlink(text);
	unlink(old);
	rmdir(dir);
	if (!ret) {
		free(pargv);
		return 0;
	}
out_abort:
	outfile_abort(&of);
	free(pargv);
	return 1;
}
