/* SPDX-License-Identifier: MIT */
/*
 * cmd_replay.c - `hrt replay`: its options, the files replayed one after
 * another, and the output.  Output is buffered and written only once every
 * file has replayed: bad input leaves nothing half-written on stdout.  The
 * model is in replay_model.c, what is printed in replay_print.c.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "../common/opt.h"
#include "../common/outfile.h"
#include "../trace/progress.h"
#include "../replay/replay.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: hrt replay [--policy off|idle|always|all] [--idle trace|always|never]\n"
		"                  [--by process|thread|function|cpu] [--svg FILE]\n"
		"                  [--slack D|P%%] [--slack-for user|all|COMM[,COMM...]]\n"
		"                  [--json|--csv|--verdict] [--lenient] [--quiet] FILE...\n\n"
		"Replays kernel hrtimer traces through libhrt, one virtual timer base per CPU,\n"
		"and compares each greedy policy's wake-ups with the kernel's recorded ones and\n"
		"with the offline optimum (see docs/REPLAY.md).  FILE is `perf script` text of\n"
		"timer:hrtimer_start/cancel/expire_entry and sched:sched_switch (as written by\n"
		"`hrt record`), the kernel's tracefs text of the same events (trace,\n"
		"trace_pipe, `trace-cmd report`, `hrt record --tracefs`; recorded with\n"
		"trace_clock mono) or hrt-trace v1 (`hrt convert`), detected automatically;\n"
		"'-' is stdin; xz and gzip files are read through xz -dc / gzip -dc.\n\n"
		"  --policy P   off, idle, always, or all (default: all)\n"
		"  --idle M     when the CPU counts as idle for the idle policy and the busy\n"
		"               counts: trace (from sched_switch next_pid=0; the default),\n"
		"               always or never\n"
		"  --by B       who the wake-ups are attributed to: process (the process\n"
		"               whose thread armed the timer, or \"[kernel] FUNCTION\"; the\n"
		"               default), thread, function or cpu; with --csv, one row per\n"
		"               group (traces without processes: process = thread)\n"
		"  --svg FILE   also write a picture: wake-ups over time per policy (the\n"
		"               ones greedy removed marked) and where in [soft, hard] timers\n"
		"               ran; with several trace files, of the first\n"
		"  --slack D|P%% replay as if the selected timers had more slack: hard\n"
		"               expiry max(hard, soft + D) (D with ns, us, ms or s), or\n"
		"               max(hard, soft + P/100 x (soft - arming time)); every\n"
		"               figure is then of the widened windows, and the verdict\n"
		"               starts with what the widening saves on the optimum\n"
		"  --slack-for W  whose timers --slack widens: user (the default: functions\n"
		"               hrtimer_wakeup, timerfd_tmrproc, posix_timer_fn,\n"
		"               it_real_fn - sleeps, poll/epoll/futex timeouts, timerfd,\n"
		"               POSIX timers, itimers), all, or process names COMM,...\n"
		"               (hrt-trace v1 has neither: only all selects there)\n"
		"  --verdict    only the verdict (the sentences before the table)\n"
		"  --json       JSON, one object per file (an array for several files)\n"
		"  --csv        CSV, one row per policy (and one for the kernel)\n"
		"  --lenient    skip bad lines (and say how many) instead of failing\n"
		"  --quiet      no progress line (shown only when stderr is a terminal:\n"
		"               bytes read of the total, rate, time left)\n"
		"  -h, --help   this text\n\n"
		"The output starts with a verdict, then one row per policy:\n"
		"  wakeups    device firings (expiry passes) the policy needed\n"
		"  vs_opt     wakeups / optimum (n/a for an incomplete kernel row)\n"
		"  expired    timer runs; greedy: runs the greedy walk took early\n"
		"  busy       runs while the CPU was busy (sched_switch, or --idle)\n"
		"  late_p50, late_p99, late_max   run time - soft expiry, ns\n"
		"  early_p50  hard expiry - run time, ns\n"
		"  kernel     the recorded expiries; kernel* when armings ended with\n"
		"             neither a traced expiry nor a cancel (lost events), so its\n"
		"             counts are a lower bound\n"
		"  optimum    the fewest wake-ups that run every timer in its window\n\n"
		"Exit status: 0 success, 1 out of memory or a write error, 2 bad input or usage.\n");
}

enum {
	OPT_POLICY = 256, OPT_IDLE, OPT_JSON, OPT_CSV, OPT_LENIENT, OPT_BY, OPT_SVG, OPT_VERDICT,
	OPT_SLACK, OPT_SLACK_FOR, OPT_QUIET,
};

static int parse_by(const char *s)
{
	for (int b = 0; b < RP_NBY; b++)
		if (!strcmp(s, replay_by_names[b]))
			return b;
	return -1;
}

/*
 * Writes the buffered output: the --svg picture of svgres (if any) to
 * its temporary first, then stdout, then the picture is put in place -
 * only if stdout took everything, so a failed replay leaves no picture.
 * 0, or 1 after one line saying why.
 */
static int write_out(const char *out, size_t outlen, const char *svg, const char *name,
		     const struct replay_result *svgres)
{
	struct outfile o;

	if (svgres) {
		if (outfile_open(&o, svg)) {
			outfile_report(&o, "replay");
			return 1;
		}
		replay_write_svg(o.f, name, svgres);
	}
	fwrite(out, 1, outlen, stdout);
	if (tool_flush_stdout("replay")) {
		if (svgres)
			outfile_abort(&o);
		return 1;
	}
	if (svgres && outfile_commit(&o)) {
		outfile_report(&o, "replay");
		return 1;
	}
	return 0;
}

static int parse_policy(const char *s, unsigned *mask)
{
	for (int p = 0; p < RP_NPOL; p++)
		if (!strcmp(s, replay_policy_names[p])) {
			*mask = 1u << p;
			return 0;
		}
	if (!strcmp(s, "all")) {
		*mask = RP_ALL;
		return 0;
	}
	return -1;
}

/* The checks once every option is read: 0, or 2 after one line. */
static int check_args(int argc, int formats, const struct slack *slack)
{
	if (formats > 1) {
		fprintf(stderr, "hrt replay: --json, --csv and --verdict exclude each other\n");
		return 2;
	}
	if (slack->kind == SLACK_NONE && (slack->who != SLACK_USER || slack->ncomms)) {
		fprintf(stderr, "hrt replay: --slack-for needs --slack\n");
		return 2;
	}
	if (optind >= argc) {
		fprintf(stderr, "hrt replay: no trace file given\n");
		usage(stderr);
		return 2;
	}
	return 0;
}

/* Everything the options ask for. */
struct replay_cmd {
	unsigned mask;
	enum replay_idle idle;
	int json, csv, lenient, by, verdict, quiet;
	const char *svg;
	struct slack slack;
};

static int on_opt(void *ctx, int c, const char *arg)
{
	struct replay_cmd *cmd = ctx;
	int k;

	switch (c) {
	case OPT_POLICY:
		if (parse_policy(arg, &cmd->mask)) {
			fprintf(stderr, "hrt replay: unknown policy '%s' (off, idle, always, all)\n",
				arg);
			return 2;
		}
		break;
	case OPT_IDLE:
		if (!strcmp(arg, "trace"))
			cmd->idle = RP_IDLE_TRACE;
		else if (!strcmp(arg, "always"))
			cmd->idle = RP_IDLE_ALWAYS;
		else if (!strcmp(arg, "never"))
			cmd->idle = RP_IDLE_NEVER;
		else {
			fprintf(stderr, "hrt replay: --idle takes trace, always or never\n");
			return 2;
		}
		break;
	case OPT_JSON: cmd->json = 1; break;
	case OPT_CSV: cmd->csv = 1; break;
	case OPT_LENIENT: cmd->lenient = 1; break;
	case OPT_SVG: cmd->svg = arg; break;
	case OPT_VERDICT: cmd->verdict = 1; break;
	case OPT_QUIET: cmd->quiet = 1; break;
	case OPT_SLACK:
	case OPT_SLACK_FOR:
		if ((k = slack_option(&cmd->slack, c == OPT_SLACK_FOR, arg, "hrt replay")))
			return k;
		break;
	case OPT_BY:
		if ((cmd->by = parse_by(arg)) < 0) {
			fprintf(stderr, "hrt replay: --by takes process, thread, function or cpu\n");
			return 2;
		}
		break;
	}
	return -1;
}

/* -1 go on, or the exit status: 0 (--help), 1 out of memory, 2 usage,
 * after one line saying why. */
static int parse_opts(int argc, char **argv, struct replay_cmd *cmd)
{
	static const struct option opts[] = {
		{ "policy", required_argument, NULL, OPT_POLICY },
		{ "idle", required_argument, NULL, OPT_IDLE },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "csv", no_argument, NULL, OPT_CSV },
		{ "lenient", no_argument, NULL, OPT_LENIENT },
		{ "by", required_argument, NULL, OPT_BY },
		{ "svg", required_argument, NULL, OPT_SVG },
		{ "verdict", no_argument, NULL, OPT_VERDICT },
		{ "slack", required_argument, NULL, OPT_SLACK },
		{ "slack-for", required_argument, NULL, OPT_SLACK_FOR },
		{ "quiet", no_argument, NULL, OPT_QUIET },
		{ NULL, 0, NULL, 0 },
	};
	static const struct opt_cmd oc = { "replay", "", opts, usage, on_opt, -1 };
	int k;

	if ((k = opt_parse(&oc, argc, argv, cmd)) >= 0)
		return k;
	k = check_args(argc, cmd->json + cmd->csv + cmd->verdict, &cmd->slack);
	return k ? k : -1;
}

/* What one replayed file prints (to o) and warns (to w). */
static void print_file(FILE *o, FILE *w, const struct replay_cmd *cmd, const char *name,
		       int first, const struct replay_result *res)
{
	if (cmd->json) {
		if (!first)
			fprintf(o, ",\n");
		replay_print_json(o, name, res, cmd->by);
	} else if (cmd->csv) {
		replay_print_csv(o, name, res, cmd->by);
	} else if (cmd->verdict) {
		fprintf(o, "%s: ", name);
		replay_print_verdict(o, res);
	} else {
		if (!first)
			fputc('\n', o);
		replay_print_table(o, name, res, cmd->by < 0 ? RP_BY_PROCESS : cmd->by);
	}
	if (res->bad_lines)
		fprintf(w, "hrt replay: %s: skipped %" PRIu64 " bad lines (--lenient)\n",
			name, res->bad_lines);
	if (res->slack_blind)
		fprintf(w, "hrt replay: %s: hrt-trace v1 has no timer functions or "
			"process names: --slack-for %s widens nothing (use --slack-for "
			"all)\n", name, cmd->slack.who == SLACK_USER ? "user" : "COMM");
	if (res->idle_fallback)
		fprintf(w, "hrt replay: %s: no scheduler events; every CPU counts as "
			"idle (--idle always)\n", name);
}

/* Replays one file into res and prints it; 0 or the exit status after one
 * line saying why. */
static int replay_file(FILE *o, FILE *w, const struct replay_cmd *cmd, const char *name,
		       int first, int keep, struct replay_result *res)
{
	struct progress pr;
	const struct replay_opts ro = { cmd->mask, cmd->idle, keep, &cmd->slack, &pr };
	struct trace_reader *r;
	const char *err;
	int k, st = 0;

	if (trace_open(&r, name, cmd->lenient, TRACE_AUTO, &err)) {
		fprintf(stderr, "hrt replay: %s\n", err);
		return 2;
	}
	progress_start(&pr, "replay", trace_name(r), cmd->quiet);
	k = replay_trace(r, &ro, res);
	progress_end(&pr);
	if (k == -1) {
		fprintf(stderr, "hrt replay: %s\n", trace_error(r));
		st = trace_error_is_oom(r) ? 1 : 2;
	} else if (k) {
		fprintf(stderr, "hrt replay: %s: out of memory\n", name);
		st = 1;
	} else {
		print_file(o, w, cmd, name, first, res);
		/* --verdict says these in its last line already. */
		trace_warn_clock(r, w, "replay");
		if (!cmd->verdict && res->format != TRACE_V1 && res->armings &&
		    res->armings_unresolved * 10 > res->armings)
			fprintf(w, "hrt replay: %s: warning: %" PRIu64 " of %" PRIu64 " armings "
				"(%.0f %%, %" PRIu64 " on CPU %d) ended with neither a traced "
				"expiry nor a cancel; the simulation does not use recorded "
				"expiries, but the kernel row misses them\n", name,
				res->armings_unresolved, res->armings,
				100.0 * (double)res->armings_unresolved / (double)res->armings,
				res->unresolved_on_cpu, res->unresolved_cpu);
	}
	trace_close(r);
	return st;
}

int hrt_cmd_replay(int argc, char **argv)
{
	struct replay_cmd cmd = { RP_ALL, RP_IDLE_TRACE, 0, 0, 0, -1, 0, 0, NULL, { 0 } };
	struct replay_result *res = NULL, *svgres = NULL;
	char *out = NULL, *warn = NULL;
	size_t outlen = 0, warnlen = 0;
	FILE *o = NULL, *w = NULL;
	int ret;

	if ((ret = parse_opts(argc, argv, &cmd)) >= 0)
		goto out;
	ret = 0;
	o = open_memstream(&out, &outlen);
	w = open_memstream(&warn, &warnlen);
	if (!o || !w)
		goto out_oom;
	if (cmd.csv)
		replay_print_csv_header(o, cmd.by, cmd.slack.kind != SLACK_NONE ? &cmd.slack : NULL);
	if (cmd.json && argc - optind > 1)
		fputc('[', o);
	for (int i = optind; i < argc; i++) {
		int keep = cmd.svg && i == optind;

		if (!(res = calloc(1, sizeof(*res))))
			goto out_oom;
		if ((ret = replay_file(o, w, &cmd, argv[i], i == optind, keep, res)))
			goto out;
		if (keep) {
			svgres = res;   /* drawn once every file has replayed */
		} else {
			replay_result_free(res);
			free(res);
		}
		res = NULL;
	}
	if (cmd.json)
		fputs(argc - optind > 1 ? "]\n" : "\n", o);
	ret = fclose(o) | fclose(w);
	o = w = NULL;
	if (ret)
		goto out_oom;
	ret = write_out(out, outlen, cmd.svg, argv[optind], svgres);
	if (!ret)
		fwrite(warn, 1, warnlen, stderr);
	goto out;
out_oom:
	fprintf(stderr, "hrt replay: out of memory\n");
	ret = 1;
out:
	if (o)
		fclose(o);
	if (w)
		fclose(w);
	if (res) {
		replay_result_free(res);
		free(res);
	}
	if (svgres) {
		replay_result_free(svgres);
		free(svgres);
	}
	free(out);
	free(warn);
	slack_free(&cmd.slack);
	return ret;
}
