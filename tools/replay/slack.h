/* SPDX-License-Identifier: MIT */
/*
 * slack.h - `hrt replay --slack D|P% --slack-for WHO`: what the windows of
 * a trace would be if the programs gave their timers more slack (internal
 * to the hrt tool; the rule is in docs/REPLAY.md, "Slack").
 *
 * For each selected arming (start event at T with soft and hard expiry):
 *   D:  hard' = max(hard, soft + D)
 *   P%: hard' = max(hard, soft + floor(P/100 * max(0, soft - T)))
 * saturating at HRT_TIME_MAX.  Unselected armings keep their window.
 *
 * WHO is `user` (the default: the functions user space arms, below), `all`,
 * or a comma-separated list of process names (the perf comm).  A v1 trace
 * has neither functions nor processes: `user` and a name list select no
 * arming there (the verdict and stderr say so), `all` works as everywhere.
 */
#ifndef HRT_TOOLS_SLACK_H
#define HRT_TOOLS_SLACK_H

#include <stddef.h>
#include <stdint.h>

#include "hrt.h"

enum slack_kind { SLACK_NONE = 0, SLACK_NS, SLACK_PCT };
enum slack_who { SLACK_USER = 0, SLACK_ALL, SLACK_COMMS };

/* P% is kept in millionths of a percent, so 12.5% is exact. */
#define SLACK_PCT_ONE 1000000ULL
/* The largest P accepted: 10^6 %, ten thousand times the timeout. */
#define SLACK_PCT_MAX (1000000ULL * SLACK_PCT_ONE)

struct slack {
	enum slack_kind kind;
	uint64_t amount;        /* SLACK_NS: ns; SLACK_PCT: millionths of a % */
	enum slack_who who;
	char *comms;            /* SLACK_COMMS: the names, each NUL-terminated */
	size_t ncomms;
	char spec[64];          /* --slack as given (JSON) */
	const int32_t *tgids;   /* also only these processes (thread-group ids; a
				 * task whose process is not recorded by its own
				 * id), and only their hrtimer_wakeup timers - what
				 * timer slack reaches (hrt slack --measure); NULL:
				 * no such filter.  Not owned. */
	size_t ntgids;
};

/* The functions of the timers user space arms (`user`): nanosleep, poll,
 * select, epoll and futex timeouts (hrtimer_wakeup), timerfd, POSIX timers
 * and setitimer/alarm. */
extern const char *const slack_user_fns[4];

/* Parses --slack's value into s (kind, amount, spec).  0, or -1 with a
 * message for "hrt replay: --slack ..." in why[len]. */
int slack_parse(struct slack *s, const char *arg, char *why, size_t len);
/* Parses --slack-for's value.  0, -1 with why (bad), -2 (out of memory). */
int slack_parse_for(struct slack *s, const char *arg, char *why, size_t len);
/* The --slack (for = 0) or --slack-for (1) option of command `cmd` ("hrt
 * replay"): parsed into s, or one line on stderr; the exit status then
 * (2: a bad value, 1: out of memory), else 0. */
int slack_option(struct slack *s, int for_, const char *arg, const char *cmd);
void slack_free(struct slack *s);

/* The widened hard expiry of an arming at t with [soft, hard]. */
hrt_time_t slack_widen(const struct slack *s, hrt_time_t t, hrt_time_t soft, hrt_time_t hard);
/* Whether --slack-for selects an arming of function fn and process comm
 * (either NULL when the trace has none). */
int slack_selects(const struct slack *s, const char *fn, const char *comm);
/* Whether the process filter (tgids) lets an arming of task pid of process
 * tgid (0: not recorded) through. */
int slack_selects_task(const struct slack *s, int32_t pid, int32_t tgid);
/* "1 ms of slack on user-space timers", "10 % of their timeout as slack on
 * every timer", ... for the verdict. */
void slack_describe(const struct slack *s, char *buf, size_t len);

#endif
