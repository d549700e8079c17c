/* SPDX-License-Identifier: MIT */
/*
 * slack.c - parsing, describing and applying `hrt replay --slack` and
 * `--slack-for` (slack.h).  Values are parsed by hand, as every option's
 * (opt.h): a float cannot hold every ns below INT64_MAX, and "1e3ms" or
 * " 5ms" should be errors, not guesses.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/opt.h"
#include "slack.h"

const char *const slack_user_fns[4] = {
	"hrtimer_wakeup", "timerfd_tmrproc", "posix_timer_fn", "it_real_fn",
};

int slack_parse(struct slack *s, const char *arg, char *why, size_t len)
{
	unsigned __int128 v;
	const char *end;
	char sub[200];
	int fd;

	s->kind = SLACK_NONE;
	if (opt_decimal(arg, &end, 9, &v, &fd)) {
		snprintf(why, len, "--slack '%s': expected a duration (1ms, 500us, 0.5s) or a "
			 "percentage of the timeout (10%%)", arg);
		return -1;
	}
	if (!strcmp(end, "%")) {
		/* millionths of a percent: 6 of the 9 parsed fraction digits */
		unsigned __int128 p = v / 1000;

		if (fd > 6) {
			snprintf(why, len, "--slack '%s': at most 6 decimals in a percentage", arg);
			return -1;
		}
		if (p > SLACK_PCT_MAX) {
			snprintf(why, len, "--slack '%s': at most 1000000%%", arg);
			return -1;
		}
		s->kind = SLACK_PCT;
		s->amount = (uint64_t)p;
	} else {
		if (opt_duration(arg, 0, &s->amount, sub, sizeof(sub))) {
			snprintf(why, len, "--slack %s%s", sub, strstr(sub, "unit") ? " or %" : "");
			return -1;
		}
		s->kind = SLACK_NS;
	}
	snprintf(s->spec, sizeof(s->spec), "%s", arg);
	if (strlen(arg) >= sizeof(s->spec)) {
		snprintf(why, len, "--slack '%.40s...': too long", arg);
		s->kind = SLACK_NONE;
		return -1;
	}
	return 0;
}

int slack_parse_for(struct slack *s, const char *arg, char *why, size_t len)
{
	size_t n = strlen(arg);

	free(s->comms);
	s->comms = NULL;
	s->ncomms = 0;
	if (!strcmp(arg, "user")) {
		s->who = SLACK_USER;
		return 0;
	}
	if (!strcmp(arg, "all")) {
		s->who = SLACK_ALL;
		return 0;
	}
	if (!n || arg[0] == ',' || arg[n - 1] == ',' || strstr(arg, ",,")) {
		snprintf(why, len, "--slack-for '%s': expected user, all or process names "
			 "separated by commas", arg);
		return -1;
	}
	if (!(s->comms = malloc(n + 1)))
		return -2;
	memcpy(s->comms, arg, n + 1);
	s->ncomms = 1;
	for (char *c = s->comms; *c; c++)
		if (*c == ',') {
			*c = 0;
			s->ncomms++;
		}
	s->who = SLACK_COMMS;
	return 0;
}

int slack_option(struct slack *s, int for_, const char *arg, const char *cmd)
{
	char why[256];
	int k = for_ ? slack_parse_for(s, arg, why, sizeof(why)) : slack_parse(s, arg, why, sizeof(why));

	if (!k)
		return 0;
	fprintf(stderr, "%s: %s\n", cmd, k == -2 ? "out of memory" : why);
	return k == -2 ? 1 : 2;
}

void slack_free(struct slack *s)
{
	free(s->comms);
	s->comms = NULL;
	s->ncomms = 0;
}

hrt_time_t slack_widen(const struct slack *s, hrt_time_t t, hrt_time_t soft, hrt_time_t hard)
{
	__int128 w;

	if (s->kind == SLACK_NS)
		w = (__int128)soft + (__int128)s->amount;
	else if (s->kind == SLACK_PCT)
		/* floor of a non-negative quotient: integer division */
		w = (__int128)soft + (soft > t ? (__int128)(soft - t) * s->amount /
				      (__int128)(100 * SLACK_PCT_ONE) : 0);
	else
		return hard;
	if (w > HRT_TIME_MAX)
		w = HRT_TIME_MAX;
	return w > hard ? (hrt_time_t)w : hard;
}

int slack_selects(const struct slack *s, const char *fn, const char *comm)
{
	if (s->kind == SLACK_NONE)
		return 0;
	if (s->who == SLACK_ALL)
		return 1;
	if (s->who == SLACK_USER) {
		for (size_t i = 0; fn && i < sizeof(slack_user_fns) / sizeof(slack_user_fns[0]); i++)
			if (!strcmp(fn, slack_user_fns[i]))
				return 1;
		return 0;
	}
	if (!comm)
		return 0;
	for (size_t k = 0, off = 0; k < s->ncomms; k++) {
		if (!strcmp(s->comms + off, comm))
			return 1;
		off += strlen(s->comms + off) + 1;
	}
	return 0;
}

int slack_selects_task(const struct slack *s, int32_t pid, int32_t tgid)
{
	int32_t who = tgid > 0 ? tgid : pid;

	if (!s->tgids)
		return 1;
	for (size_t i = 0; i < s->ntgids; i++)
		if (s->tgids[i] == who)
			return 1;
	return 0;
}

/* P in millionths of a percent, without trailing zeros: 10, 12.5. */
static void fmt_pct(uint64_t p, char *buf, size_t len)
{
	uint64_t frac = p % SLACK_PCT_ONE;
	int digits = 6;

	if (!frac) {
		snprintf(buf, len, "%llu", (unsigned long long)(p / SLACK_PCT_ONE));
		return;
	}
	while (frac % 10 == 0) {
		frac /= 10;
		digits--;
	}
	snprintf(buf, len, "%llu.%0*llu", (unsigned long long)(p / SLACK_PCT_ONE), digits,
		 (unsigned long long)frac);
}

void slack_describe(const struct slack *s, char *buf, size_t len)
{
	char amount[96], who[96];

	if (s->kind == SLACK_PCT) {
		char p[32];

		fmt_pct(s->amount, p, sizeof(p));
		snprintf(amount, sizeof(amount), "a slack of %s %% of the timeout", p);
	} else {
		opt_fmt_ns(s->amount, amount, sizeof(amount));
	}
	if (s->who == SLACK_USER)
		snprintf(who, sizeof(who), "user-space timers");
	else if (s->who == SLACK_ALL)
		snprintf(who, sizeof(who), "every timer");
	else if (s->ncomms == 1)
		snprintf(who, sizeof(who), "the timers of %.60s", s->comms);
	else
		snprintf(who, sizeof(who), "the timers of %.40s and %zu more", s->comms,
			 s->ncomms - 1);
	snprintf(buf, len, "%s%s on %s", amount, s->kind == SLACK_PCT ? "" : " of slack", who);
}
