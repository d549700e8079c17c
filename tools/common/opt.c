/* SPDX-License-Identifier: MIT */
/*
 * opt.c - the options of every command (opt.h): numbers, durations and
 * seconds parsed by hand, and one getopt_long loop.
 */
#include <stdio.h>
#include <string.h>

#include "hrt.h"
#include "opt.h"

static const struct {
	const char *suffix;
	uint64_t ns;
} units[] = {
	{ "ns", 1 }, { "us", 1000 }, { "ms", 1000000 }, { "s", 1000000000 },
};

int opt_decimal(const char *s, const char **end, int frac_max, unsigned __int128 *val,
		int *frac_digits)
{
	unsigned __int128 v = 0;
	int n = 0, f = 0;

	for (; *s >= '0' && *s <= '9'; s++, n++)
		if ((v = v * 10 + (unsigned)(*s - '0')) > UINT64_MAX)
			return -1;
	if (*s == '.') {
		for (s++; *s >= '0' && *s <= '9'; s++, f++)
			if (f < frac_max)
				v = v * 10 + (unsigned)(*s - '0');
		if (!f)
			return -1;
	}
	if (!n)
		return -1;
	*frac_digits = f;
	for (int k = f < frac_max ? f : frac_max; k < frac_max; k++)
		v *= 10;
	*end = s;
	*val = v;
	return 0;
}

int opt_duration(const char *arg, uint64_t bare, uint64_t *ns, char *why, size_t len)
{
	const size_t nunits = sizeof(units) / sizeof(units[0]);
	unsigned __int128 v;
	const char *end;
	uint64_t unit = 0;
	int fd;

	if (opt_decimal(arg, &end, 9, &v, &fd)) {
		snprintf(why, len, "'%s': expected a duration (1ms, 500us, 0.5s)", arg);
		return -1;
	}
	for (size_t i = 0; i < nunits && !unit; i++)
		if (!strcmp(end, units[i].suffix))
			unit = units[i].ns;
	if (!unit && !*end)
		unit = bare;
	if (!unit && !(*end == 0 && v == 0)) {
		snprintf(why, len, "'%s': expected a unit after the number (ns, us, ms, s)", arg);
		return -1;
	}
	/* v holds 9 fraction digits: unit / 10^9 of it is the value */
	v = v * unit / 1000000000;
	if (v > (unsigned __int128)HRT_TIME_MAX) {
		snprintf(why, len, "'%s': past the end of time (at most %lld ns, about 292 years)",
			 arg, (long long)HRT_TIME_MAX);
		return -1;
	}
	*ns = (uint64_t)v;
	return 0;
}

void opt_fmt_ns(uint64_t ns, char *buf, size_t len)
{
	for (int i = (int)(sizeof(units) / sizeof(units[0])) - 1; i >= 0; i--)
		if (ns % units[i].ns == 0 || i == 0) {
			snprintf(buf, len, "%llu %s", (unsigned long long)(ns / units[i].ns),
				 units[i].suffix);
			return;
		}
}

int opt_bad(const char *cmd, const char *opt, const char *arg, const char *what)
{
	fprintf(stderr, "hrt %s: %s '%s': expected %s\n", cmd, opt, arg, what);
	return 2;
}

int opt_seconds(const char *cmd, const char *opt, const char *arg, double lo, int lo_open,
		double hi, int zero_ok, double *s)
{
	char why[160], what[96];
	uint64_t ns;

	if (!opt_duration(arg, 1000000000, &ns, why, sizeof(why))) {
		*s = (double)ns / 1e9;
		if ((zero_ok && ns == 0) || ((lo_open ? *s > lo : *s >= lo) && *s <= hi))
			return 0;
	}
	snprintf(what, sizeof(what), "seconds in %c%g, %g]%s", lo_open ? '(' : '[', lo, hi,
		 zero_ok ? ", or 0" : "");
	return opt_bad(cmd, opt, arg, what);
}

int opt_count(const char *cmd, const char *opt, const char *arg, uint64_t lo, uint64_t hi,
	      const char *what, uint64_t *v)
{
	unsigned __int128 x;
	const char *end;
	char buf[96];
	int fd;

	if (!opt_decimal(arg, &end, 0, &x, &fd) && !fd && !*end && x >= lo && x <= hi) {
		*v = (uint64_t)x;
		return 0;
	}
	if (!what) {
		snprintf(buf, sizeof(buf), "a number in [%llu, %llu]", (unsigned long long)lo,
			 (unsigned long long)hi);
		what = buf;
	}
	return opt_bad(cmd, opt, arg, what);
}

#define OPT_MAX 40

int opt_parse(const struct opt_cmd *cmd, int argc, char **argv, void *ctx)
{
	struct option longs[OPT_MAX];
	char shorts[64];
	size_t n = 0;
	int c, st;

	while (cmd->longs && cmd->longs[n].name && n < OPT_MAX - 2) {
		longs[n] = cmd->longs[n];
		n++;
	}
	longs[n++] = (struct option){ "help", no_argument, NULL, 'h' };
	longs[n] = (struct option){ NULL, 0, NULL, 0 };
	snprintf(shorts, sizeof(shorts), "%sh", cmd->shorts ? cmd->shorts : "");
	optind = 1;
	while ((c = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
		if (c == 'h') {
			cmd->usage(stdout);
			return 0;
		}
		if (c == '?' || c == ':') {
			cmd->usage(stderr);
			return 2;
		}
		if ((st = cmd->on_opt(ctx, c, optarg)) >= 0)
			return st;
	}
	if (cmd->max_args >= 0 && argc - optind > cmd->max_args) {
		fprintf(stderr, "hrt %s: unexpected argument '%s'\n", cmd->name,
			argv[optind + cmd->max_args]);
		cmd->usage(stderr);
		return 2;
	}
	return -1;
}
