/*
 * replay.c - `hrt replay`: option parsing and the three output formats
 * (table, --json, --csv).  The model itself is in replay_sim.c.  Output is
 * buffered and written only once every file has replayed: bad input leaves
 * nothing half-written on stdout.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "replay.h"

static const char *fmt_name(enum trace_format f)
{
	return f == TRACE_V1 ? "hrt-trace v1" : "perf script text";
}

static const char *idle_name(const struct replay_result *r)
{
	if (r->idle_mode == RP_IDLE_ALWAYS)
		return "always";
	if (r->idle_mode == RP_IDLE_NEVER)
		return "never";
	return r->idle_fallback ? "always (no scheduler events in the trace)" : "trace";
}

/* Table ------------------------------------------------------------------- */

static void table_row(FILE *f, const char *name, const struct replay_row *w,
		      const struct replay_result *res, int kernel)
{
	fprintf(f, "%-8s %9" PRIu64, name, w->wakeups);
	if (res->optimal_wakeups)
		fprintf(f, " %7.3f", (double)w->wakeups / (double)res->optimal_wakeups);
	else
		fprintf(f, " %7s", "-");
	fprintf(f, " %9" PRIu64, w->expired);
	if (kernel)
		fprintf(f, " %9s", "-");
	else
		fprintf(f, " %9" PRIu64, w->expired_greedy);
	fprintf(f, " %9" PRIu64 " %10" PRId64 " %10" PRId64 " %11" PRId64 " %10" PRId64 "\n",
		w->expired_busy, w->late_p50, w->late_p99, w->late_max, w->early_p50);
}

void replay_print_table(FILE *f, const char *name, const struct replay_result *r)
{
	fprintf(f, "%s: %s, %" PRIu64 " events", name, fmt_name(r->format), r->events);
	if (r->ignored)
		fprintf(f, " (+%" PRIu64 " other events ignored)", r->ignored);
	fprintf(f, ", %" PRIu64 " CPUs, %" PRIu64 " timers, %" PRIu64 " armings, %" PRIu64
		" cancels\n", r->cpus, r->timers, r->armings, r->cancels);
	fprintf(f, "idle: %s", idle_name(r));
	if (r->pairs_merged)
		fprintf(f, "; %" PRIu64 " cancel+expire pairs read as expiries", r->pairs_merged);
	if (r->bad_lines)
		fprintf(f, "; %" PRIu64 " bad lines skipped (--lenient)", r->bad_lines);
	fprintf(f, "\n\n%-8s %9s %7s %9s %9s %9s %10s %10s %11s %10s\n", "policy", "wakeups",
		"vs_opt", "expired", "greedy", "busy", "late_p50", "late_p99", "late_max",
		"early_p50");
	if (r->has_kernel)
		table_row(f, "kernel", &r->kernel, r, 1);
	for (int p = 0; p < RP_NPOL; p++)
		if (r->policies & (1u << p))
			table_row(f, replay_policy_names[p], &r->pol[p], r, 0);
	fprintf(f, "%-8s %9" PRIu64 "   1.000\n", "optimum", r->optimal_wakeups);
	fprintf(f, "(lateness: run time - soft expiry, early: hard expiry - run time, in ns)\n");
	if (r->format == TRACE_PERF)
		fprintf(f, "armings_unresolved: %" PRIu64 " of %" PRIu64 " armings\n",
			r->armings_unresolved, r->armings);
	if (r->ntop) {
		fprintf(f, "\nwake-ups by timer function (top %d):\n%-32s", r->ntop, "function");
		if (r->has_kernel)
			fprintf(f, " %9s", "kernel");
		for (int p = 0; p < RP_NPOL; p++)
			if (r->policies & (1u << p))
				fprintf(f, " %9s", replay_policy_names[p]);
		fputc('\n', f);
		for (int i = 0; i < r->ntop; i++) {
			fprintf(f, "%-32s", r->top[i].name);
			if (r->has_kernel)
				fprintf(f, " %9" PRIu64, r->top[i].kernel);
			for (int p = 0; p < RP_NPOL; p++)
				if (r->policies & (1u << p))
					fprintf(f, " %9" PRIu64, r->top[i].pol[p]);
			fputc('\n', f);
		}
	}
}

/* JSON -------------------------------------------------------------------- */

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void json_row(FILE *f, const struct replay_row *w, int kernel)
{
	fprintf(f, "{\"wakeups\": %" PRIu64 ", \"expired\": %" PRIu64 ", \"expired_greedy\": ",
		w->wakeups, w->expired);
	if (kernel)
		fprintf(f, "null");
	else
		fprintf(f, "%" PRIu64, w->expired_greedy);
	fprintf(f, ", \"expired_busy\": %" PRIu64 ", \"lateness_soft_ns\": {\"p50\": %" PRId64
		", \"p99\": %" PRId64 ", \"max\": %" PRId64 "}, \"early_hard_ns\": {\"p50\": %"
		PRId64 "}}", w->expired_busy, w->late_p50, w->late_p99, w->late_max, w->early_p50);
}

void replay_print_json(FILE *f, const char *name, const struct replay_result *r)
{
	int first = 1;

	fprintf(f, "{\"file\": ");
	json_str(f, name);
	fprintf(f, ", \"format\": \"%s\", \"events\": %" PRIu64 ", \"events_ignored\": %" PRIu64
		", \"lines_skipped\": %" PRIu64 ", \"cpus\": %" PRIu64 ", \"timers\": %" PRIu64
		", \"armings\": %" PRIu64 ", \"cancels\": %" PRIu64 ", \"optimal_wakeups\": %" PRIu64
		", \"armings_unresolved\": ", r->format == TRACE_V1 ? "hrt-trace v1" : "perf",
		r->events, r->ignored, r->bad_lines, r->cpus, r->timers, r->armings, r->cancels,
		r->optimal_wakeups);
	if (r->format == TRACE_PERF)
		fprintf(f, "%" PRIu64, r->armings_unresolved);
	else
		fprintf(f, "null");
	fprintf(f, ", \"idle\": ");
	json_str(f, idle_name(r));
	fprintf(f, ",\n  \"kernel\": ");
	if (r->has_kernel)
		json_row(f, &r->kernel, 1);
	else
		fprintf(f, "null");
	fprintf(f, ",\n  \"policies\": {");
	for (int p = 0; p < RP_NPOL; p++) {
		if (!(r->policies & (1u << p)))
			continue;
		fprintf(f, "%s\n    \"%s\": ", first ? "" : ",", replay_policy_names[p]);
		json_row(f, &r->pol[p], 0);
		first = 0;
	}
	fprintf(f, "},\n  \"wakeups_by_function\": [");
	for (int i = 0; i < r->ntop; i++) {
		fprintf(f, "%s\n    {\"function\": ", i ? "," : "");
		json_str(f, r->top[i].name);
		if (r->has_kernel)
			fprintf(f, ", \"kernel\": %" PRIu64, r->top[i].kernel);
		for (int p = 0; p < RP_NPOL; p++)
			if (r->policies & (1u << p))
				fprintf(f, ", \"%s\": %" PRIu64, replay_policy_names[p], r->top[i].pol[p]);
		fputc('}', f);
	}
	fprintf(f, "]}");
}

/* CSV --------------------------------------------------------------------- */

void replay_print_csv_header(FILE *f)
{
	fprintf(f, "file,policy,events,cpus,timers,armings,cancels,optimal_wakeups,wakeups,"
		"expired,expired_greedy,expired_busy,lateness_soft_ns_p50,lateness_soft_ns_p99,"
		"lateness_soft_ns_max,early_hard_ns_p50\n");
}

static void csv_row(FILE *f, const char *name, const char *pol, const struct replay_result *r,
		    const struct replay_row *w, int kernel)
{
	/* File names with commas or quotes are quoted. */
	if (strpbrk(name, ",\"\n")) {
		fputc('"', f);
		for (const char *s = name; *s; s++)
			fprintf(f, *s == '"' ? "\"\"" : "%c", *s);
		fputc('"', f);
	} else {
		fputs(name, f);
	}
	fprintf(f, ",%s,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
		",%" PRIu64 ",%" PRIu64 ",", pol, r->events, r->cpus, r->timers, r->armings,
		r->cancels, r->optimal_wakeups, w->wakeups, w->expired);
	if (!kernel)
		fprintf(f, "%" PRIu64, w->expired_greedy);
	fprintf(f, ",%" PRIu64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 "\n",
		w->expired_busy, w->late_p50, w->late_p99, w->late_max, w->early_p50);
}

void replay_print_csv(FILE *f, const char *name, const struct replay_result *r)
{
	if (r->has_kernel)
		csv_row(f, name, "kernel", r, &r->kernel, 1);
	for (int p = 0; p < RP_NPOL; p++)
		if (r->policies & (1u << p))
			csv_row(f, name, replay_policy_names[p], r, &r->pol[p], 0);
}

/* The command ------------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: hrt replay [--policy off|idle|always|all] [--idle trace|always|never]\n"
		"                  [--json|--csv] [--lenient] FILE...\n\n"
		"Replays kernel hrtimer traces through libhrt, one virtual timer base per CPU,\n"
		"and compares each greedy policy's wake-ups with the kernel's recorded ones and\n"
		"with the offline optimum (see docs/REPLAY.md).  FILE is `perf script` text of\n"
		"timer:hrtimer_start/cancel/expire_entry and sched:sched_switch (as written by\n"
		"`hrt record`) or hrt-trace v1 (`hrt convert`), detected automatically; '-' is\n"
		"stdin; xz and gzip files are read through xz -dc / gzip -dc.\n\n"
		"  --policy P   off, idle, always, or all (default: all)\n"
		"  --idle M     when the CPU counts as idle for the idle policy and the busy\n"
		"               counts: trace (from sched_switch next_pid=0; the default),\n"
		"               always or never\n"
		"  --json       JSON, one object per file (an array for several files)\n"
		"  --csv        CSV, one row per policy (and one for the kernel)\n"
		"  --lenient    skip bad lines (and say how many) instead of failing\n"
		"  -h, --help   this text\n\n"
		"Exit status: 0 success, 1 out of memory, 2 bad input or usage.\n");
}

enum { OPT_POLICY = 256, OPT_IDLE, OPT_JSON, OPT_CSV, OPT_LENIENT };

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

int hrt_cmd_replay(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "policy", required_argument, NULL, OPT_POLICY },
		{ "idle", required_argument, NULL, OPT_IDLE },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "csv", no_argument, NULL, OPT_CSV },
		{ "lenient", no_argument, NULL, OPT_LENIENT },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned mask = RP_ALL;
	enum replay_idle idle = RP_IDLE_TRACE;
	int json = 0, csv = 0, lenient = 0, c, ret = 0;
	char *out = NULL, *warn = NULL;
	size_t outlen = 0, warnlen = 0;
	FILE *o, *w;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case OPT_POLICY:
			if (parse_policy(optarg, &mask)) {
				fprintf(stderr, "hrt replay: unknown policy '%s' (off, idle, always, all)\n",
					optarg);
				return 2;
			}
			break;
		case OPT_IDLE:
			if (!strcmp(optarg, "trace"))
				idle = RP_IDLE_TRACE;
			else if (!strcmp(optarg, "always"))
				idle = RP_IDLE_ALWAYS;
			else if (!strcmp(optarg, "never"))
				idle = RP_IDLE_NEVER;
			else {
				fprintf(stderr, "hrt replay: --idle takes trace, always or never\n");
				return 2;
			}
			break;
		case OPT_JSON: json = 1; break;
		case OPT_CSV: csv = 1; break;
		case OPT_LENIENT: lenient = 1; break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (json && csv) {
		fprintf(stderr, "hrt replay: --json and --csv exclude each other\n");
		return 2;
	}
	if (optind >= argc) {
		fprintf(stderr, "hrt replay: no trace file given\n");
		usage(stderr);
		return 2;
	}
	o = open_memstream(&out, &outlen);
	w = open_memstream(&warn, &warnlen);
	if (!o || !w) {
		fprintf(stderr, "hrt replay: out of memory\n");
		return 1;
	}
	if (csv)
		replay_print_csv_header(o);
	if (json && argc - optind > 1)
		fputc('[', o);
	for (int i = optind; i < argc && !ret; i++) {
		struct trace_reader *r;
		struct replay_result *res = malloc(sizeof(*res));
		const char *err;
		int k;

		if (!res) {
			fprintf(stderr, "hrt replay: out of memory\n");
			ret = 1;
			break;
		}
		if (trace_open(&r, argv[i], lenient, TRACE_AUTO, &err)) {
			fprintf(stderr, "hrt replay: %s\n", err);
			free(res);
			ret = 2;
			break;
		}
		k = replay_trace(r, mask, idle, res);
		if (k == -1) {
			fprintf(stderr, "hrt replay: %s\n", trace_error(r));
			ret = trace_error_is_oom(r) ? 1 : 2;
		} else if (k) {
			fprintf(stderr, "hrt replay: %s: out of memory\n", argv[i]);
			ret = 1;
		} else {
			if (json) {
				if (i > optind)
					fprintf(o, ",\n");
				replay_print_json(o, argv[i], res);
			} else if (csv) {
				replay_print_csv(o, argv[i], res);
			} else {
				if (i > optind)
					fputc('\n', o);
				replay_print_table(o, argv[i], res);
			}
			if (res->bad_lines)
				fprintf(w, "hrt replay: %s: skipped %" PRIu64 " bad lines (--lenient)\n",
					argv[i], res->bad_lines);
			if (res->idle_fallback)
				fprintf(w, "hrt replay: %s: no scheduler events; every CPU counts as "
					"idle (--idle always)\n", argv[i]);
			if (res->format == TRACE_PERF && res->armings &&
			    res->armings_unresolved * 10 > res->armings)
				fprintf(w, "hrt replay: %s: warning: %" PRIu64 " of %" PRIu64 " armings "
					"(%.0f %%, %" PRIu64 " on CPU %d) ended with neither a traced "
					"expiry nor a cancel; the simulation does not use recorded "
					"expiries, but the kernel row misses them\n", argv[i],
					res->armings_unresolved, res->armings,
					100.0 * (double)res->armings_unresolved / (double)res->armings,
					res->unresolved_on_cpu, res->unresolved_cpu);
		}
		trace_close(r);
		free(res);
	}
	if (json && argc - optind > 1)
		fputc(']', o);
	if (json)
		fputc('\n', o);
	fclose(o);
	fclose(w);
	if (!ret) {
		fwrite(out, 1, outlen, stdout);
		fwrite(warn, 1, warnlen, stderr);
		if (fflush(stdout)) {
			perror("hrt replay: stdout");
			ret = 1;
		}
	}
	free(out);
	free(warn);
	return ret;
}
