/* SPDX-License-Identifier: MIT */
/*
 * trace_perf.c - the `perf script` line parser: the header "COMM TID
 * [CPU] SECS.FRAC: EVENT:" (COMM may hold spaces), then the fields of
 * timer:hrtimer_start/cancel/expire_entry and sched:sched_switch
 * (trace__event_fields, shared with the tracefs text parser).  Other
 * events are counted and ignored; perf's numbers saturate at INT64_MAX.
 */
#include <string.h>

#include "trace_impl.h"

static uint32_t intern_fn(struct trace_reader *r, const char *s, size_t n)
{
	return strtab_intern(&r->fns, s, n, 1);
}

/*
 * The perf script header "COMM TID [CPU] SECS.FRAC: EVENT:": COMM may hold
 * spaces, so search for " [digits] digits.digits: " from the left.
 */
int trace__perf_header(const char *s, int *cpu, hrt_time_t *t, const char **ev,
		       const char **eve)
{
	for (const char *b = strchr(s, '['); b; b = strchr(b + 1, '[')) {
		const char *p = b + 1, *q;
		hrt_time_t ts;
		int64_t c;

		if (b != s && b[-1] != ' ')
			continue;
		for (q = p; is_digit(*q); q++)
			;
		if (q == p || *q != ']' || q - p > 5 || parse_dec(p, q, &c))
			continue;
		p = q + 1;
		if (*p != ' ')
			continue;
		while (*p == ' ')
			p++;
		if (!(p = lex_stamp(p, 0, &ts)))
			continue;
		while (*p == ' ')
			p++;
		for (q = p; *q && *q != ' '; q++)
			;
		if (q - p < 2 || q[-1] != ':')
			continue;
		*cpu = (int)c;
		*t = ts;
		*ev = p;
		*eve = q - 1;
		return 0;
	}
	return -1;
}

static int ev_is(const char *ev, const char *eve, const char *name)
{
	size_t n = strlen(name);

	return (size_t)(eve - ev) == n && !memcmp(ev, name, n);
}

static int perf_num(const char *rest, const char *key, int64_t *v)
{
	const char *e, *s = field(rest, key, &e);

	return s ? parse_dec(s, e, v) : -1;
}

/*
 * The task in the header "COMM TID [CPU] ...": the last '[' before the
 * event name is the CPU's (COMM may hold spaces and brackets); TID may be
 * written PID/TID (perf script -F pid,tid): then PID is the process
 * (ev->tgid).  Unparsable: pid -1, comm TRACE_NO_FN.  -1 only on ENOMEM.
 */
static int perf_task(struct trace_reader *r, const char *s, const char *en,
		     struct trace_event *ev)
{
	const char *b = en, *q, *p, *c;

	ev->pid = -1;
	ev->comm = TRACE_NO_FN;
	while (b > s && *b != '[')
		b--;
	for (q = b; q > s && q[-1] == ' '; q--)
		;
	for (p = q; p > s && (is_digit(p[-1]) || p[-1] == '/'); p--)
		;
	if (p == q || (p > s && p[-1] != ' '))
		return 0;
	for (c = s; *c == ' '; c++)
		;
	for (q = p; q > c && q[-1] == ' '; q--)
		;
	ev->pid = 0;
	for (; is_digit(*p) && ev->pid < 100000000; p++)
		ev->pid = ev->pid * 10 + (*p - '0');
	if (*p == '/' && is_digit(p[1])) {      /* PID/TID: the process, then the thread */
		ev->tgid = ev->pid;
		ev->pid = 0;
		for (p++; is_digit(*p) && ev->pid < 100000000; p++)
			ev->pid = ev->pid * 10 + (*p - '0');
	}
	if (q > c && (ev->comm = intern_fn(r, c, (size_t)(q - c))) == TRACE_NO_FN)
		return -1;
	return 0;
}

/* hrtimer_start's mode=: "REL", "REL|PINNED", ... (the print fmt's
 * symbols) or a number (older perf, hand-written traces) whose bit 0 is
 * HRTIMER_MODE_REL.  Absent or unreadable: absolute. */
static int start_is_rel(const char *rest)
{
	const char *v, *ve;
	uint64_t m;

	if (!(v = field(rest, "mode", &ve)))
		return 0;
	if (ve - v >= 3 && !memcmp(v, "REL", 3))
		return 1;
	return !parse_id(v, ve, &m, 1) && (m & 1);
}

/* The PID after the last KEY (" next_pid=") in rest, a field of its own:
 * the task names before it may hold KEY.  0, or -1. */
static int last_pid(const char *rest, const char *key, int64_t *v)
{
	const char *p = NULL, *e;

	for (const char *q = strstr(rest, key); q; q = strstr(q + 1, key))
		p = q;
	if (!p)
		return -1;
	p += strlen(key);
	for (e = p; is_digit(*e); e++)
		;
	return parse_dec(p, e, v) || (*e && *e != ' ') ? -1 : 0;
}

/*
 * The fields of one event, EVENT being the bare name (hrtimer_start,
 * sched_switch, ...): perf script and the kernel's own trace text print
 * the same `print fmt` of each event, so both parsers end here.
 */
int trace__event_fields(struct trace_reader *r, const char *en, const char *ene,
			const char *rest, struct trace_event *ev, char *why)
{
	const char *v, *ve;
	int64_t a, b;

	ev->fn = TRACE_NO_FN;
	if (ev_is(en, ene, "sched_switch")) {
		if (last_pid(rest, " next_pid=", &a))
			return WHY("sched_switch: expected next_pid=PID");
		ev->kind = a == 0 ? TEV_IDLE : TEV_BUSY;
		return 1;
	}
	if (ev_is(en, ene, "sched_process_fork")) {
		if (last_pid(rest, " child_pid=", &a) || a <= 0 || a > INT32_MAX)
			return WHY("sched_process_fork: expected child_pid=PID");
		ev->kind = TEV_FORK;
		ev->id = (uint64_t)a;
		return 1;
	}
	if (!ev_is(en, ene, "hrtimer_start") && !ev_is(en, ene, "hrtimer_cancel") &&
	    !ev_is(en, ene, "hrtimer_expire_entry"))
		return 0;
	if (!(v = field(rest, "hrtimer", &ve)) || parse_id(v, ve, &ev->id, 0))
		return WHY("%.*s: expected hrtimer=ADDRESS", (int)(ene - en), en);
	if (ev_is(en, ene, "hrtimer_cancel")) {
		ev->kind = TEV_CANCEL;
		return 1;
	}
	if (!(v = field(rest, "function", &ve)))
		return WHY("%.*s: expected function=NAME", (int)(ene - en), en);
	ev->fn = intern_fn(r, v, (size_t)(ve - v));
	if (ev->fn == TRACE_NO_FN)
		return WHY("out of memory");
	if (ev_is(en, ene, "hrtimer_expire_entry")) {
		if (perf_num(rest, "now", &ev->now))
			return WHY("hrtimer_expire_entry: expected now=NS");
		ev->kind = TEV_EXPIRE;
		return 1;
	}
	if (perf_num(rest, "expires", &b))
		return WHY("hrtimer_start: expected expires=NS");
	if (perf_num(rest, "softexpires", &a))
		return WHY("hrtimer_start: expected softexpires=NS");
	if (a > b)
		return WHY("hrtimer_start: soft expiry %lld after hard expiry %lld",
			   (long long)a, (long long)b);
	ev->kind = TEV_START;
	ev->soft = a;
	ev->hard = b;
	ev->rel = start_is_rel(rest);
	return 1;
}

int trace__parse_perf(struct trace_reader *r, const char *s, struct trace_event *ev, char *why)
{
	const char *en, *ene;

	if (trace__perf_header(s, &ev->cpu, &ev->t, &en, &ene))
		return WHY("expected a perf script line 'COMM PID [CPU] SECONDS.NS: EVENT: FIELDS'");
	if (ev->cpu >= TRACE_MAX_CPUS)
		return WHY("CPU %d out of range (at most %d CPUs)", ev->cpu, TRACE_MAX_CPUS);
	if (perf_task(r, s, en, ev))
		return WHY("out of memory");
	/* perf names the subsystem; only timer:hrtimer_* and sched:sched_switch
	 * are ours (a bare name from another subsystem must not match) */
	if (!strncmp(en, "timer:", 6) || !strncmp(en, "sched:", 6))
		return trace__event_fields(r, en + 6, ene, ene + 1, ev, why);
	ev->fn = TRACE_NO_FN;
	return 0;
}
