/* SPDX-License-Identifier: MIT */
/*
 * trace_tracefs.c - the parser of the kernel's own trace text: what
 * /sys/kernel/tracing/trace and trace_pipe print, and `trace-cmd report`:
 *
 *     COMM-PID [(TGID)] [CPU] FLAGS SECS.USEC: EVENT: FIELDS
 *
 * COMM may hold spaces and dashes (the PID is the digits after the last
 * dash before " [CPU]" or " (TGID)"; TGID, the process, is there with
 * options/record-tgid), `<idle>-0` is the idle task, FLAGS (d.h1. ...) is
 * absent from trace-cmd's default output, the timestamp has microseconds
 * (trace-cmd -t: nanoseconds), EVENT is the bare name (hrtimer_start, not
 * perf's timer:hrtimer_start) and the fields are the event's print fmt,
 * the same as perf's (trace__event_fields).  Timer ids are the kernel's
 * hashed pointers (%p): stable within a boot, which is all the replay
 * needs.  Lines the kernel adds between events - "CPU:N [LOST M EVENTS]",
 * trace-cmd's "cpus=N", "version = N", "CPU N is empty" - are ignored.
 *
 * The clock: tracefs text does not say which trace_clock stamped it, and
 * timer expiries (expires=, now=) are CLOCK_MONOTONIC.  The rule is the
 * one `hrt record --tracefs` follows: record with trace_clock mono.  The
 * reader cannot check the header, so it checks the events: each expiry's
 * timestamp should be at or just after its now= (trace.c counts those that
 * are not, trace_clock_suspect() turns the count into a warning).
 */
#include <string.h>

#include "trace_impl.h"

/* The "(TGID)" column the kernel prints with options/record-tgid (and
 * `hrt record --tracefs` writes), "(-------)" when unknown, ending just
 * before *end: sets ev->tgid and moves *end before it.  Without the column
 * tgid stays 0 (not recorded). */
static void tracefs_tgid(const char *s, const char **end, struct trace_event *ev)
{
	const char *e = *end, *o;
	int32_t v = 0;

	if (e - s < 3 || e[-1] != ')' || !(o = memrchr(s, '(', (size_t)(e - s))))
		return;
	for (const char *q = o + 1; q < e - 1; q++)
		if (!(*q == ' ' || *q == '-' || is_digit(*q)))
			return;
	for (const char *q = o + 1; q < e - 1; q++)
		if (is_digit(*q) && v < 100000000)
			v = v * 10 + (*q - '0');
	ev->tgid = v;
	while (o > s && o[-1] == ' ')
		o--;
	*end = o;
}

/* "COMM-PID [(TGID)]" ending just before `end`: pid, tgid and interned
 * comm.  -1 on ENOMEM; an unreadable task leaves pid -1. */
static int tracefs_task(struct trace_reader *r, const char *s, const char *end,
			struct trace_event *ev)
{
	const char *p, *c = s;

	ev->pid = -1;
	ev->comm = TRACE_NO_FN;
	tracefs_tgid(s, &end, ev);
	p = end;
	while (p > s && is_digit(p[-1]))
		p--;
	if (p == end || p == s || p[-1] != '-')
		return 0;
	ev->pid = 0;
	for (const char *q = p; q < end && ev->pid < 100000000; q++)
		ev->pid = ev->pid * 10 + (*q - '0');
	while (*c == ' ')
		c++;
	if (p - 1 > c) {
		ev->comm = strtab_intern(&r->fns, c, (size_t)(p - 1 - c), 1);
		if (ev->comm == TRACE_NO_FN)
			return -1;
	}
	return 0;
}

/* The FLAGS column: 4 to 6 characters of the latency format (irqs-off,
 * need-resched, hardirq/softirq, preempt depth, migrate-disable). */
static const char *skip_flags(const char *p)
{
	const char *q = p;

	while (*q && *q != ' ' && strchr(".dDXbnNpPhHsSzZ0123456789abcdef", *q))
		q++;
	if (q - p >= 4 && q - p <= 6 && *q == ' ')
		return q;
	return p;
}

/* The events the replay reads (trace__event_fields). */
static int known_event(const char *ev, const char *eve)
{
	static const char *const names[] = {
		"hrtimer_start", "hrtimer_cancel", "hrtimer_expire_entry", "sched_switch",
		"sched_process_fork",
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if ((size_t)(eve - ev) == strlen(names[i]) && !memcmp(ev, names[i], (size_t)(eve - ev)))
			return 1;
	return 0;
}

/* Whether [s, end) ends as a task does: "-PID", then maybe " (TGID)". */
static int ends_as_task(const char *s, const char *end)
{
	const char *p;

	if (end - s >= 3 && end[-1] == ')' && (p = memrchr(s, '(', (size_t)(end - s)))) {
		for (end = p; end > s && end[-1] == ' '; end--)
			;
	}
	for (p = end; p > s && is_digit(p[-1]); p--)
		;
	return p < end && p > s && p[-1] == '-';
}

/* The header that starts at the '[' b: 0 and its fields, or -1. */
static int header_at(const char *s, const char *b, int *cpu, hrt_time_t *t,
		     const char **task_end, const char **ev, const char **eve)
{
	const char *p = b + 1, *q;
	hrt_time_t ts;
	int64_t c;

	if (b == s || b[-1] != ' ')
		return -1;
	for (q = p; is_digit(*q); q++)
		;
	if (q == p || *q != ']' || q - p > 5 || parse_dec(p, q, &c))
		return -1;
	p = q + 1;
	while (*p == ' ')
		p++;
	p = skip_flags(p);
	while (*p == ' ')
		p++;
	if (!(p = lex_stamp(p, 1, &ts)))
		return -1;
	while (*p == ' ')
		p++;
	for (q = p; *q && *q != ' ' && *q != ':'; q++)
		;
	if (q == p || *q != ':' || (q[1] && q[1] != ' '))
		return -1;      /* perf's "timer:hrtimer_start:" is not ours */
	for (q = b; q > s && q[-1] == ' '; q--)
		;
	*task_end = q;
	*cpu = (int)c;
	*t = ts;
	*ev = p;
	*eve = p + strcspn(p, ":");
	return 0;
}

/*
 * The header up to the event name: 0 with cpu, t (ns) and the task's end
 * (just before " [CPU]") and the bare event name [ev, eve) without its
 * colon, or -1.  A header is " [digits]", an optional FLAGS and
 * "SECS.FRAC: NAME:" with NAME free of colons.  A task name may hold one
 * (prctl(PR_SET_NAME, "x [0] 1.1: y: ")): the first header that names an
 * event the replay reads, after a task ending "-PID", wins; a line with
 * none such is the first header's (an event that is ignored).  A name of
 * at most 15 bytes (TASK_COMM_LEN) cannot hold such a header and the -PID
 * before it, and the fields after the real one come after it.
 */
int trace__tracefs_header(const char *s, int *cpu, hrt_time_t *t, const char **task_end,
			  const char **ev, const char **eve)
{
	int found = 0;

	for (const char *b = strchr(s, '['); b; b = strchr(b + 1, '[')) {
		int c;
		hrt_time_t ts;
		const char *te, *e, *ee;

		if (header_at(s, b, &c, &ts, &te, &e, &ee))
			continue;
		if (!found || (known_event(e, ee) && ends_as_task(s, te))) {
			*cpu = c;
			*t = ts;
			*task_end = te;
			*ev = e;
			*eve = ee;
		}
		if (known_event(e, ee) && ends_as_task(s, te))
			return 0;
		found = 1;
	}
	return found ? 0 : -1;
}

/* s starts with lit, then digits: past them, or NULL. */
static const char *lit_digits(const char *s, const char *lit)
{
	size_t n = strlen(lit);
	const char *p;

	if (strncmp(s, lit, n))
		return NULL;
	for (p = s + n; is_digit(*p); p++)
		;
	return p > s + n ? p : NULL;
}

/* Lines between events that carry no event, whole lines only: a task may
 * be named "cpus=0] 1.1: y:" and its events must not read as these. */
int trace__tracefs_is_noise(const char *s)
{
	const char *p;

	if ((p = lit_digits(s, "CPU:")) && (p = lit_digits(p, " [LOST ")))
		return !strcmp(p, " EVENTS]");
	if ((p = lit_digits(s, "CPU ")))
		return !strcmp(p, " is empty");
	if ((p = lit_digits(s, "cpus=")) || (p = lit_digits(s, "version = ")))
		return !*p;
	return 0;
}

int trace__parse_tracefs(struct trace_reader *r, const char *s, struct trace_event *ev, char *why)
{
	const char *te, *en, *ene;

	if (trace__tracefs_is_noise(s))
		return 0;
	if (trace__tracefs_header(s, &ev->cpu, &ev->t, &te, &en, &ene))
		return WHY("expected a tracefs line 'COMM-PID [CPU] FLAGS SECONDS.US: EVENT: FIELDS'");
	if (ev->cpu >= TRACE_MAX_CPUS)
		return WHY("CPU %d out of range (at most %d CPUs)", ev->cpu, TRACE_MAX_CPUS);
	if (tracefs_task(r, s, te, ev))
		return WHY("out of memory");
	return trace__event_fields(r, en, ene, ene + 1, ev, why);
}
