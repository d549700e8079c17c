/* SPDX-License-Identifier: MIT */
/*
 * trace.c - the reader that picks a parser: it detects the format from
 * the first event line, hands each line to the perf, tracefs or v1 parser
 * (trace_perf.c, trace_tracefs.c, trace_v1.c) over the input of trace_input.c, checks each
 * timer id's use, and delivers events through the small reorder queue
 * that turns a perf cancel+expire pair into one expiry.  Contract in
 * trace.h; the files share trace_impl.h.
 *
 * Invariants:
 *  (1) events leave the reader in file order, which is time order (a line
 *      whose time goes backwards is bad input);
 *  (2) a cancel is held in the queue until the next line of its CPU is
 *      parsed (or QUEUE_MAX lines later); nothing behind it leaves first;
 *  (3) memory: the line buffer, the queue, one record per distinct id and
 *      one string per distinct function name.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace_impl.h"

struct trace_reader *trace__reader_new(const char *name, int lenient, enum trace_format format)
{
	struct trace_reader *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	snprintf(r->name, sizeof(r->name), "%s", name);
	r->lenient = lenient;
	r->format = format;
	r->fd = -1;
	r->src_fd = -1;
	r->child = -1;
	r->last_t = INT64_MIN;
	r->q = calloc(QUEUE_MAX + 1, sizeof(*r->q));
	r->held = calloc(TRACE_MAX_CPUS, sizeof(*r->held));
	if (!r->q || !r->held) {
		trace_close(r);
		return NULL;
	}
	return r;
}

void trace_close(struct trace_reader *r)
{
	if (!r)
		return;
	trace__reap_child(r, 1);
	if (r->own_fd && r->fd >= 0)
		close(r->fd);
	if (r->src_fd >= 0)
		close(r->src_fd);
	/* tids is a table of chunks of TID_CHUNK: free by chunk, not by id */
	for (size_t i = 0; i < sizeof(r->tids) / sizeof(r->tids[0]); i++)
		free(r->tids[i]);
	idmap_free(&r->ids);
	strtab_free(&r->fns);
	strtab_free(&r->idnames);
	free(r->q);
	free(r->held);
	free(r->buf);
	free(r);
}

const char *trace_error(const struct trace_reader *r) { return r->err; }
int trace_error_is_oom(const struct trace_reader *r) { return r->oom; }
const char *trace_name(const struct trace_reader *r) { return r->name; }
enum trace_format trace_get_format(const struct trace_reader *r) { return r->format; }
const struct trace_counts *trace_get_counts(const struct trace_reader *r) { return &r->cnt; }
uint32_t trace_fn_count(const struct trace_reader *r) { return r->fns.n; }

const char *trace_fn_name(const struct trace_reader *r, uint32_t fn)
{
	return fn < r->fns.n ? r->fns.s[fn] : "?";
}

const char *trace_id_name(struct trace_reader *r, uint64_t id)
{
	if (r->format == TRACE_V1)
		return id < r->idnames.n ? r->idnames.s[id] : "?";
	snprintf(r->idbuf, sizeof(r->idbuf), "0x%llx", (unsigned long long)id);
	return r->idbuf;
}

const char *trace_comm_name(const struct trace_reader *r, uint32_t comm)
{
	return trace_fn_name(r, comm);
}

int trace_clock_suspect(const struct trace_reader *r)
{
	return r->cnt.clock_suspect && r->cnt.clock_suspect * 10 > r->cnt.expire_events;
}

void trace_warn_clock(const struct trace_reader *r, FILE *f, const char *cmd)
{
	if (!trace_clock_suspect(r))
		return;
	fprintf(f, "hrt %s: warning: %s: %llu of %llu expiries are stamped far from their "
		"now=: the trace's clock is not CLOCK_MONOTONIC (tracefs: set trace_clock to "
		"mono; perf: record with -k CLOCK_MONOTONIC); timestamps and expiry times are "
		"not comparable\n", cmd, r->name, (unsigned long long)r->cnt.clock_suspect,
		(unsigned long long)r->cnt.expire_events);
}

/* Format detection from one content line. */
static enum trace_format detect(const char *s)
{
	const char *a, *b, *c;
	hrt_time_t t;
	int cpu;

	if (trace__v1_is_event(s))
		return TRACE_V1;
	/* before perf: trace-cmd's lines without FLAGS fit perf's header too,
	 * but their event names have no subsystem */
	if (!trace__tracefs_header(s, &cpu, &t, &c, &a, &b))
		return TRACE_TRACEFS;
	if (!trace__perf_header(s, &cpu, &t, &a, &b))
		return TRACE_PERF;
	return TRACE_AUTO;
}

/* Id consistency ---------------------------------------------------------- */

static struct tid *tid_get(struct trace_reader *r, uint64_t id, int create, int *fresh)
{
	void **v;

	*fresh = 0;
	if (!create) {
		v = idmap_get(&r->ids, id);
		return v ? *v : NULL;
	}
	if (!(v = idmap_put(&r->ids, id, fresh)))
		return NULL;
	if (*fresh) {
		size_t k = r->ntids / TID_CHUNK, i = r->ntids % TID_CHUNK;

		if (k >= TID_CHUNKS) {
			idmap_del(&r->ids, id);
			*fresh = -1;    /* the cap, not a failed allocation */
			return NULL;
		}
		if (!r->tids[k] && !(r->tids[k] = malloc(TID_CHUNK * sizeof(struct tid)))) {
			idmap_del(&r->ids, id);
			return NULL;
		}
		r->tids[k][i] = (struct tid){ TRACE_NO_FN, 0, 0 };
		*v = &r->tids[k][i];
		r->ntids++;
	}
	return *v;
}

/* Checks ev against what earlier lines said about its id; -1 with why. */
static int check_id(struct trace_reader *r, struct trace_event *ev, char *why)
{
	struct tid *d;
	int fresh;

	switch (ev->kind) {
	case TEV_START:
		if (!(d = tid_get(r, ev->id, 1, &fresh)))
			return fresh < 0 ? WHY("more than %d distinct timer ids (the reader's limit)",
					       TRACE_MAX_IDS)
					 : (r->oom = 1, WHY("out of memory"));
		if (!fresh && (d->flags & TID_PENDING) && ev->t < d->until && d->fn != ev->fn)
			return WHY("timer %s restarted with function %s while still armed "
				   "with %s (id reused inconsistently)", trace_id_name(r, ev->id),
				   trace_fn_name(r, ev->fn), trace_fn_name(r, d->fn));
		d->fn = ev->fn;
		d->flags |= TID_PENDING;
		d->until = ev->hard > ev->t ? ev->hard : ev->t;
		r->cnt.timers += (uint64_t)fresh;
		return 0;
	case TEV_EXPIRE:
		d = tid_get(r, ev->id, 0, &fresh);
		if (d && (d->flags & TID_PENDING) && ev->t < d->until && d->fn != ev->fn)
			return WHY("timer %s expired with function %s while armed with %s "
				   "(id reused inconsistently)", trace_id_name(r, ev->id),
				   trace_fn_name(r, ev->fn), trace_fn_name(r, d->fn));
		ev->known = d != NULL;
		if (d)
			d->flags &= ~TID_PENDING;
		return 0;
	case TEV_CANCEL:
		d = tid_get(r, ev->id, 0, &fresh);
		ev->known = d != NULL;
		if (!d && r->format == TRACE_V1)
			return WHY("cancel of id %s that no earlier start armed "
				   "(id used inconsistently)", trace_id_name(r, ev->id));
		if (d)
			d->flags &= ~TID_PENDING;
		return 0;
	default:
		return 0;
	}
}

/* The queue (2) ----------------------------------------------------------- */

static void queue_push(struct trace_reader *r, const struct trace_event *ev)
{
	uint64_t *h = &r->held[ev->cpu];
	struct qent *e;

	if (*h) {
		struct qent *c = &r->q[(*h - 1) % (QUEUE_MAX + 1)];

		if (ev->kind == TEV_EXPIRE && ev->id == c->ev.id) {
			c->state = Q_DROPPED;
			r->cnt.pairs_merged++;
		} else {
			c->state = Q_READY;
		}
		*h = 0;
	}
	if (r->qtail - r->qhead == QUEUE_MAX) {     /* full: resolve the head */
		struct qent *c = &r->q[r->qhead % (QUEUE_MAX + 1)];

		if (c->state == Q_HELD) {
			c->state = Q_READY;
			r->held[c->ev.cpu] = 0;
		}
	}
	e = &r->q[r->qtail % (QUEUE_MAX + 1)];
	e->ev = *ev;
	e->state = ev->kind == TEV_CANCEL && r->format != TRACE_V1 ? Q_HELD : Q_READY;
	if (e->state == Q_HELD)
		*h = r->qtail + 1;
	r->qtail++;
}

/* 1 if an event was popped, 0 if the head is held or the queue empty. */
static int queue_pop(struct trace_reader *r, struct trace_event *ev)
{
	while (r->qhead != r->qtail) {
		struct qent *e = &r->q[r->qhead % (QUEUE_MAX + 1)];

		if (e->state == Q_HELD)
			return 0;
		r->qhead++;
		if (e->state == Q_DROPPED)
			continue;
		*ev = e->ev;
		return 1;
	}
	return 0;
}

/* Reading ----------------------------------------------------------------- */

static int bad_line(struct trace_reader *r, const char *why)
{
	snprintf(r->err, sizeof(r->err), "%s:%ld: %s", r->name, r->lineno, why);
	if (r->fns.oom || r->idnames.oom)
		r->oom = 1;
	if (!r->lenient || r->oom)
		return -1;
	r->cnt.bad_lines++;
	return 0;
}

static const char *binary_at(const char *s, size_t n, char *why)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if ((c < 0x20 && c != '\t') || c == 0x7f) {
			snprintf(why, 512, "binary data (byte 0x%02x at column %zu); expected a text "
				 "trace line", c, i + 1);
			return why;
		}
	}
	return NULL;
}

/* Parses one line; 1 queued an event, 0 nothing, -1 error. */
static int read_one(struct trace_reader *r)
{
	struct trace_event ev;
	char why[512];
	size_t n;
	int nl, k;
	const char *s;

	k = trace__next_line(r, &n, &nl);
	if (k <= 0)
		return k ? -1 : 2;
	s = r->line;
	if (binary_at(s, n, why))
		return bad_line(r, why);
	if (!nl) {
		snprintf(why, 512, "truncated last line (no newline at end of file)");
		return bad_line(r, why);
	}
	while (*s == ' ' || *s == '\t')
		s++;
	if (!*s)
		return 0;
	if (*s == '#') {
		if (r->format == TRACE_AUTO && !strncmp(s, "# hrt-trace v1", 14) &&
		    (!s[14] || s[14] == ' '))
			r->format = TRACE_V1;
		return 0;
	}
	if (r->format == TRACE_AUTO && trace__tracefs_is_noise(s))
		return 0;
	if (r->format == TRACE_AUTO) {
		r->format = detect(s);
		if (r->format == TRACE_AUTO)
			return bad_line(r, "expected a '# hrt-trace v1' header, an hrt-trace v1 event, "
					"perf script text or tracefs text of timer:hrtimer_* / "
					"sched:sched_switch");
	}
	memset(&ev, 0, sizeof(ev));
	k = r->format == TRACE_V1 ? trace__parse_v1(r, s, &ev, why) :
	    r->format == TRACE_TRACEFS ? trace__parse_tracefs(r, s, &ev, why) :
	    trace__parse_perf(r, s, &ev, why);
	if (k < 0)
		return bad_line(r, why);
	if (k == 0) {
		r->cnt.ignored++;
		return 0;
	}
	ev.line = r->lineno;
	if (ev.t < r->last_t) {
		snprintf(why, 512, "time %lld ns goes backwards (previous event at %lld ns); "
			 "expected events in time order", (long long)ev.t, (long long)r->last_t);
		return bad_line(r, why);
	}
	if (check_id(r, &ev, why))
		return bad_line(r, why);
	r->last_t = ev.t;
	r->cnt.events++;
	if (ev.kind == TEV_IDLE || ev.kind == TEV_BUSY)
		r->cnt.sched_events++;
	if (ev.kind == TEV_EXPIRE) {
		r->cnt.expire_events++;
		/* the interrupt reads now= just before the event is stamped */
		if (ev.t < ev.now - 1000000 || ev.t - 100000000 > ev.now)
			r->cnt.clock_suspect++;
	}
	queue_push(r, &ev);
	return 1;
}

int trace_next(struct trace_reader *r, struct trace_event *ev)
{
	if (r->failed)
		return -1;
	for (;;) {
		int k;

		if (queue_pop(r, ev))
			return 1;
		if (r->finished)
			return 0;
		k = read_one(r);
		if (k < 0) {
			/* At the end of a decompressor's output, its failure (a
			 * truncated or corrupt file) is the better message. */
			if (r->eof && r->child >= 0) {
				char keep[sizeof(r->err)];

				memcpy(keep, r->err, sizeof(keep));
				if (!trace__reap_child(r, 0))
					memcpy(r->err, keep, sizeof(keep));
			}
			r->failed = 1;
			return -1;
		}
		if (k == 2) {           /* end of input: every held cancel is one */
			for (uint64_t i = r->qhead; i != r->qtail; i++) {
				struct qent *e = &r->q[i % (QUEUE_MAX + 1)];

				if (e->state == Q_HELD) {
					e->state = Q_READY;
					r->held[e->ev.cpu] = 0;
				}
			}
			r->finished = 1;
		}
	}
}

int trace_finish(struct trace_reader *r)
{
	if (r->failed)
		return -1;
	if (trace__reap_child(r, 0)) {
		r->failed = 1;
		return -1;
	}
	if (!r->cnt.events) {
		snprintf(r->err, sizeof(r->err), "%s:%ld: no trace events before the end of the "
			 "file; expected hrt-trace v1 or perf script text (empty or truncated file?)",
			 r->name, r->lineno);
		r->failed = 1;
		return -1;
	}
	return 0;
}
