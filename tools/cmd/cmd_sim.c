/* SPDX-License-Identifier: MIT */
/*
 * cmd_sim.c - the 'hrt sim' command: options (opt.h, as every
 * subcommand), then the model (sim.c) for each target load and policy, the
 * text (sim_text.c) and the picture (sim_svg.c).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "../common/opt.h"
#include "../sim/sim.h"

static const int sweep_loads[] = { 10, 20, 30, 40, 50, 60, 70, 80, 90, 95 };
static const int short_loads[] = { 20, 50, 80, 95 };

static void usage(FILE *f)
{
	fprintf(f,
		"usage: hrt sim [--cpus C] [--threads T] [--slack NS[,NS...]] [--period NS]\n"
		"               [--busy PCT | --sweep] [--seed S] [--duration NS] [--short]\n"
		"               [--csv] [--svg FILE | --no-svg]\n\n"
		"The greedy-expiry patch's benchmark as a deterministic model: C CPUs with\n"
		"one virtual libhrt base each, T threads alternating a work burst and a\n"
		"sleep on a range timer.  Reports, per policy off/idle/always, timer\n"
		"wake-ups (device firings) and thread migrations, and the ratio idle/off.\n\n"
		"  --cpus C        CPUs (default 4)\n"
		"  --threads T     threads (default 8; must exceed busy x cpus)\n"
		"  --slack NS[,NS...]  timer slack: hard = soft + NS (default 50us, the\n"
		"                  kernel's); several values are dealt to the threads in turn\n"
		"  --period NS     mean cycle of a thread: work + sleep + slack (default 200us)\n"
		"  --background NS  a per-CPU periodic kernel timer (no slack) that wakes\n"
		"                  no thread: the tick and housekeeping timers (default 0: none)\n"
		"  --busy PCT      one target utilisation, 0 < PCT < 100\n"
		"  --sweep         targets 10,20,...,90,95 %% (the default)\n"
		"  --short         targets 20,50,80,95 %% and --duration 1s\n"
		"  --seed S        PRNG seed (default 1); same seed, same output\n"
		"  --duration NS   simulated time per point (default 5s)\n"
		"  --csv           CSV, one row per target and policy, instead of the table\n"
		"  --svg FILE      plot file (default demo-sim.svg; '-' for stdout)\n"
		"  --no-svg        write no plot\n"
		"  -h, --help      this text\n"
		"NS values take an optional suffix ns, us, ms or s.\n");
}

/* "NS[,NS...]" into c->slack; 0 or -1. */
static int parse_slack(const char *v, struct sim_config *c)
{
	char buf[256], *save = NULL, *tok;
	int n = 0;

	if (strlen(v) >= sizeof(buf))
		return -1;
	strcpy(buf, v);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		uint64_t x;
		char why[160];

		if (opt_duration(tok, 1, &x, why, sizeof(why)) || n == SIM_MAXSLACK)
			return -1;
		c->slack[n++] = (hrt_time_t)x;
	}
	if (!n)
		return -1;
	c->nslack = n;
	return 0;
}

struct sim_opts {
	struct sim_config cfg;
	int busy_pct, sweep, shortrun, csv, duration_set;
	const char *svg;
};

enum {
	OPT_CPUS = 256, OPT_THREADS, OPT_SLACK, OPT_PERIOD, OPT_BUSY, OPT_SEED, OPT_DURATION,
	OPT_SVG, OPT_BACKGROUND, OPT_SWEEP, OPT_SHORT, OPT_CSV, OPT_NO_SVG,
};

/* A number option's value into *x: a count, or (TIME) nanoseconds with an
 * optional unit.  0, or 2 after saying why. */
static int num_arg(const char *v, int time, const char *name, long long *x)
{
	char opt[32], why[160];
	uint64_t u;

	snprintf(opt, sizeof(opt), "--%s", name);
	if (time) {
		if (opt_duration(v, 1, &u, why, sizeof(why)))
			return opt_bad("sim", opt, v, "nanoseconds, or a duration (500us, 2ms)");
	} else if (opt_count("sim", opt, v, 0, INT64_MAX, NULL, &u)) {
		return 2;
	}
	*x = (long long)u;
	return 0;
}

static int on_opt(void *ctx, int c, const char *arg)
{
	static const char *const names[] = {
		"cpus", "threads", "slack", "period", "busy", "seed", "duration", "svg",
		"background",
	};
	struct sim_opts *o = ctx;
	const char *name = c >= OPT_CPUS && c <= OPT_BACKGROUND ? names[c - OPT_CPUS] : "";
	long long x;

	switch (c) {
	case OPT_CPUS:
		if (num_arg(arg, 0, name, &x))
			return 2;
		o->cfg.cpus = x > 1024 ? 1025 : (int)x;
		break;
	case OPT_THREADS:
		if (num_arg(arg, 0, name, &x))
			return 2;
		o->cfg.threads = x > 100000 ? 100001 : (int)x;
		break;
	case OPT_SLACK:
		if (parse_slack(arg, &o->cfg))
			return opt_bad("sim", "--slack", arg, "1 to 8 comma-separated times");
		break;
	case OPT_PERIOD:
		if (num_arg(arg, 1, name, &x))
			return 2;
		o->cfg.period = x;
		break;
	case OPT_BUSY:
		if (num_arg(arg, 0, name, &x))
			return 2;
		if (x <= 0 || x >= 100)
			return opt_bad("sim", "--busy", arg, "a percentage between 0 and 100");
		o->busy_pct = (int)x;
		break;
	case OPT_SEED:
		if (num_arg(arg, 0, name, &x))
			return 2;
		o->cfg.seed = (uint64_t)x;
		break;
	case OPT_DURATION:
		if (num_arg(arg, 1, name, &x))
			return 2;
		o->cfg.duration = x;
		o->duration_set = 1;
		break;
	case OPT_SVG: o->svg = *arg ? arg : NULL; break;
	case OPT_BACKGROUND:
		if (num_arg(arg, 1, name, &x))
			return 2;
		o->cfg.background = x;
		break;
	case OPT_SWEEP: o->sweep = 1; break;
	case OPT_SHORT: o->shortrun = 1; break;
	case OPT_CSV: o->csv = 1; break;
	case OPT_NO_SVG: o->svg = NULL; break;
	}
	return -1;
}

/* -1 go on, or the exit status: 0 after --help, 2 after saying why. */
static int parse_args(int argc, char **argv, struct sim_opts *o)
{
	static const struct option opts[] = {
		{ "cpus", required_argument, NULL, OPT_CPUS },
		{ "threads", required_argument, NULL, OPT_THREADS },
		{ "slack", required_argument, NULL, OPT_SLACK },
		{ "period", required_argument, NULL, OPT_PERIOD },
		{ "busy", required_argument, NULL, OPT_BUSY },
		{ "seed", required_argument, NULL, OPT_SEED },
		{ "duration", required_argument, NULL, OPT_DURATION },
		{ "svg", required_argument, NULL, OPT_SVG },
		{ "background", required_argument, NULL, OPT_BACKGROUND },
		{ "sweep", no_argument, NULL, OPT_SWEEP },
		{ "short", no_argument, NULL, OPT_SHORT },
		{ "csv", no_argument, NULL, OPT_CSV },
		{ "no-svg", no_argument, NULL, OPT_NO_SVG },
		{ NULL, 0, NULL, 0 },
	};
	static const struct opt_cmd cmd = { "sim", "", opts, usage, on_opt, 0 };
	int st = opt_parse(&cmd, argc, argv, o);

	if (st >= 0)
		return st;
	if (o->busy_pct && (o->sweep || o->shortrun)) {
		fprintf(stderr, "hrt sim: --busy excludes --sweep and --short\n");
		return 2;
	}
	return -1;
}

int hrt_cmd_sim(int argc, char **argv)
{
	struct sim_opts o = { .svg = "demo-sim.svg" };
	struct sim_point pts[16];
	const int *loads = sweep_loads;
	int n = (int)(sizeof(sweep_loads) / sizeof(sweep_loads[0])), single = 0, err;
	const char *why;

	sim_defaults(&o.cfg);
	if ((err = parse_args(argc, argv, &o)) >= 0)
		return err;
	if (o.shortrun) {
		loads = short_loads;
		n = (int)(sizeof(short_loads) / sizeof(short_loads[0]));
		if (!o.duration_set)
			o.cfg.duration = 1000000000;
	}
	if (o.busy_pct) {
		single = o.busy_pct;
		loads = &single;
		n = 1;
	}
	for (int i = 0; i < n; i++) {
		o.cfg.busy = loads[i] / 100.0;
		if ((why = sim_config_error(&o.cfg))) {
			fprintf(stderr, "hrt sim: at %d %% busy: %s\n", loads[i], why);
			return 2;
		}
	}
	for (int i = 0; i < n; i++) {
		pts[i].load = loads[i];
		o.cfg.busy = loads[i] / 100.0;
		for (int k = 0; k < 3; k++) {
			o.cfg.policy = (enum hrt_greedy)k;
			if ((err = sim_run(&o.cfg, &pts[i].r[k]))) {
				fprintf(stderr, "hrt sim: simulation failed: %s\n", strerror(-err));
				return 1;
			}
		}
	}
	if (o.csv)
		sim_print_csv(pts, n);
	else
		sim_print_table(&o.cfg, pts, n);
	if (o.svg && (!o.csv || strcmp(o.svg, "-"))) {
		if (sim_write_plot(o.svg, &o.cfg, pts, n))
			return 1;
		if (!o.csv && strcmp(o.svg, "-"))
			printf("\nwrote %s\n", o.svg);
	}
	return 0;
}
