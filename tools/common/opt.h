/* SPDX-License-Identifier: MIT */
/*
 * opt.h - one parser for every command's options (internal to the hrt
 * tool): the getopt_long loop with its --help and usage lines, and the
 * numbers, durations and seconds the options take.
 *
 * Numbers are parsed by hand rather than with strtod or strtol: a double
 * cannot hold every nanosecond below INT64_MAX, and " 5", "1e3ms", "0x10"
 * or "inf" should be errors, not guesses.  A duration is DIGITS[.DIGITS]
 * and a unit (ns, us, ms, s), exact to the nanosecond; where a bare number
 * is allowed the option says in which unit (a --seconds option: seconds;
 * hrt sim's NS values: nanoseconds).
 *
 * Every message is one line on stderr, "hrt CMD: OPTION 'VALUE': expected
 * WHAT", and a usage error is exit status 2.
 */
#ifndef HRT_TOOLS_OPT_H
#define HRT_TOOLS_OPT_H

#include <getopt.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* "DIGITS[.DIGITS]" at s, times 10^frac_max (fraction digits past frac_max
 * dropped), the end in *end and the fraction's digits in *frac_digits.
 * 0, or -1: no digits before or after a '.', or past UINT64_MAX. */
int opt_decimal(const char *s, const char **end, int frac_max, unsigned __int128 *val,
		int *frac_digits);
/* A duration into *ns: with a unit, or bare in units of BARE ns (0: a unit
 * is required, except for 0 itself).  0, or -1 with why[len] saying
 * "'ARG': expected ..." (a duration, a unit, or at most HRT_TIME_MAX). */
int opt_duration(const char *arg, uint64_t bare, uint64_t *ns, char *why, size_t len);

/* A duration in the largest unit that shows it exactly: "1 ms", "1500 us",
 * "3 ns" (hrt slack's messages, --slack's description). */
void opt_fmt_ns(uint64_t ns, char *buf, size_t len);

/* Prints "hrt CMD: OPT 'ARG': expected WHAT" and returns 2 (usage). */
int opt_bad(const char *cmd, const char *opt, const char *arg, const char *what);
/* Seconds (a duration, bare in seconds) into *s, in [lo, hi] - (lo, hi]
 * when LO_OPEN, and 0 too when ZERO_OK.  0, or 2 after opt_bad's line
 * ("expected seconds in [lo, hi]"). */
int opt_seconds(const char *cmd, const char *opt, const char *arg, double lo, int lo_open,
		double hi, int zero_ok, double *s);
/* A whole number in [lo, hi] into *v.  0, or 2 after opt_bad's line
 * (WHAT, or "a number in [lo, hi]"). */
int opt_count(const char *cmd, const char *opt, const char *arg, uint64_t lo, uint64_t hi,
	      const char *what, uint64_t *v);

/*
 * A command's options: getopt_long over argv with SHORTS and LONGS (its
 * long options, NULL-terminated; -h and --help are added), calling
 * ON_OPT(ctx, c, optarg) for each one: -1 to go on, or the exit status
 * (0 too: done, as after --version).  -h/--help prints USAGE to stdout;
 * an unknown option prints USAGE to stderr; more than MAX_ARGS arguments
 * after the options (-1: any number) is "hrt CMD: unexpected argument".
 * Returns -1 when the caller goes on (its arguments from optind), else
 * the exit status: 0 after --help, 2 after a usage error, or ON_OPT's
 * status (it has said why).
 */
struct opt_cmd {
	const char *name;                       /* "replay": "hrt replay: ..." */
	const char *shorts;                     /* getopt's, 'h' added; "+" first:
						 * stop at the first argument */
	const struct option *longs;
	void (*usage)(FILE *f);
	int (*on_opt)(void *ctx, int c, const char *arg);       /* -1, or the status */
	int max_args;
};
int opt_parse(const struct opt_cmd *cmd, int argc, char **argv, void *ctx);

#endif
