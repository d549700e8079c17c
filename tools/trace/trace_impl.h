/* SPDX-License-Identifier: MIT */
/*
 * trace_impl.h - what the files of the trace reader share (internal to
 * them): the reader's state, its fixed bounds, the small lexers both line
 * parsers use, and the calls between the files:
 *   trace_input.c  sources (file, stdin, memory, the decompressor child)
 *                  and lines;
 *   trace_perf.c   the perf script line parser, and the event fields
 *                  both perf and tracefs text print;
 *   trace_tracefs.c the kernel's own trace text (tracefs, trace-cmd);
 *   trace_v1.c     the hrt-trace v1 line parser;
 *   trace.c        the reader that picks one, checks ids and orders events.
 */
#ifndef HRT_TOOLS_TRACE_IMPL_H
#define HRT_TOOLS_TRACE_IMPL_H

#include <stdio.h>
#include <sys/types.h>

#include "strtab.h"
#include "trace.h"

/*
 * Fixed bounds of the reader, and what happens at each:
 *  - LINE_MAX_: a longer line is an error ("line longer than"), skipped
 *    and counted under --lenient;
 *  - QUEUE_MAX: a perf cancel whose expire_entry comes more than QUEUE_MAX
 *    events later is read as a real cancel (the pair is not merged);
 *  - TRACE_MAX_CPUS (trace.h): a higher CPU number is a bad line;
 *  - TRACE_MAX_IDS (trace.h): the next new timer id is a bad line naming
 *    the limit (not "out of memory").
 */
#define CHUNK      (256 * 1024)
#define LINE_MAX_  65536
#define QUEUE_MAX  4096         /* lookahead for cancel+expire pairs */
#define TID_CHUNK  4096         /* struct tid per allocation */
#define TID_CHUNKS (TRACE_MAX_IDS / TID_CHUNK)

#define TID_PENDING 1u          /* armed, no expiry or cancel seen yet */

struct tid {
	uint32_t fn;
	uint32_t flags;
	hrt_time_t until;       /* max(hard, start time) of the last arming */
};

enum qstate { Q_READY, Q_HELD, Q_DROPPED };

struct qent {
	struct trace_event ev;
	int state;
};

struct trace_reader {
	char name[256];
	char err[1100];
	int lenient;
	enum trace_format format;
	struct trace_counts cnt;

	/* Source: a memory buffer, or an fd (maybe a decompressor's pipe). */
	const char *mem;
	size_t memlen;
	int fd, own_fd;
	uint64_t bytes_read;    /* from fd: the text, decompressed */
	int src_fd;             /* compressed input: shares the offset the
				 * decompressor reads at, for progress */
	uint64_t src_size;      /* the input file's size, 0: not known */
	pid_t child;
	const char *child_prog;
	char *buf;
	size_t start, end;
	int eof, failed, finished;
	int skipping;           /* lenient: inside an over-long line */
	int oom;                /* failed for lack of memory (never lenient) */

	char line[LINE_MAX_ + 1];
	long lineno;
	hrt_time_t last_t;

	/* Reorder queue (2): a ring of QUEUE_MAX + 1 entries. */
	struct qent *q;
	uint64_t qhead, qtail;
	uint64_t *held;         /* per CPU: queue position + 1 of a held cancel */

	/* ids and function names */
	struct idmap ids;
	struct tid *tids[TID_CHUNKS];   /* TRACE_MAX_IDS ids, TID_CHUNK a chunk */
	size_t ntids;
	struct strtab fns;      /* function names (perf) */
	struct strtab idnames;  /* v1 id tokens: the id is the index */
	char idbuf[24];         /* trace_id_name() of a perf address */
};

/* Lexers ------------------------------------------------------------------ */

static inline int is_digit(char c) { return c >= '0' && c <= '9'; }

/* Decimal in [s, e): 0; -1 not a number; -2 above INT64_MAX, with *out
 * saturated at INT64_MAX (perf's fields saturate, v1's are an error). */
static inline int parse_dec_full(const char *s, const char *e, int64_t *out)
{
	uint64_t v = 0;

	if (s == e)
		return -1;
	for (; s < e; s++) {
		if (!is_digit(*s))
			return -1;
		if (v > ((uint64_t)INT64_MAX - (uint64_t)(*s - '0')) / 10)
			v = (uint64_t)INT64_MAX + 1;    /* keep scanning for non-digits */
		else
			v = v * 10 + (uint64_t)(*s - '0');
	}
	*out = v > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)v;
	return v > (uint64_t)INT64_MAX ? -2 : 0;
}

/* Decimal in [s, e) exactly; saturates at INT64_MAX.  0 or -1. */
static inline int parse_dec(const char *s, const char *e, int64_t *out)
{
	return parse_dec_full(s, e, out) == -1 ? -1 : 0;
}

/* Hex with optional 0x, at most 16 digits, or (allow_dec) decimal. */
static inline int parse_id(const char *s, const char *e, uint64_t *out, int allow_dec)
{
	uint64_t v = 0;
	int hex = e - s > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');

	if (hex)
		s += 2;
	if (s == e || (hex || !allow_dec ? e - s > 16 : e - s > 20))
		return -1;
	for (; s < e; s++) {
		int d;

		if (is_digit(*s))
			d = *s - '0';
		else if ((hex || !allow_dec) && *s >= 'a' && *s <= 'f')
			d = *s - 'a' + 10;
		else if ((hex || !allow_dec) && *s >= 'A' && *s <= 'F')
			d = *s - 'A' + 10;
		else
			return -1;
		if (hex || !allow_dec) {
			v = v << 4 | (uint64_t)d;
		} else {
			if (v > (UINT64_MAX - (uint64_t)d) / 10)
				return -1;
			v = v * 10 + (uint64_t)d;
		}
	}
	*out = v;
	return 0;
}

/* The timestamp "SECS[.FRAC]: " at p (FRAC 1 to 9 digits, required with
 * need_frac) in ns: the character after its colon, or NULL.  Seconds past
 * 2262 (beyond INT64_MAX ns) are not a timestamp. */
static inline const char *lex_stamp(const char *p, int need_frac, hrt_time_t *t)
{
	const char *q;
	int64_t sec, frac = 0;
	int digits = 0;

	for (q = p; is_digit(*q); q++)
		;
	if (q == p || q - p > 11 || parse_dec(p, q, &sec))
		return NULL;
	if (*q == '.') {
		p = ++q;
		for (; is_digit(*q); q++)
			;
		digits = (int)(q - p);
		if (digits < 1 || digits > 9 || parse_dec(p, q, &frac))
			return NULL;
	} else if (need_frac) {
		return NULL;
	}
	if (*q != ':' || q[1] != ' ' || sec > (INT64_MAX - 999999999) / 1000000000)
		return NULL;
	for (; digits < 9; digits++)
		frac *= 10;
	*t = sec * 1000000000 + frac;
	return q + 1;
}

/* The value of token KEY=... among space-separated tokens of s. */
static inline const char *field(const char *s, const char *key, const char **vend)
{
	size_t kl = strlen(key);

	while (*s) {
		const char *t, *te;

		while (*s == ' ')
			s++;
		t = s;
		while (*s && *s != ' ')
			s++;
		te = s;
		if ((size_t)(te - t) > kl && !memcmp(t, key, kl) && t[kl] == '=') {
			*vend = te;
			return t + kl + 1;
		}
	}
	return NULL;
}

/* Line parsers: 1 event, 0 line ignored, -1 bad (why written). */

#define WHY(...) (snprintf(why, 512, __VA_ARGS__), -1)

/* Between the files. */
struct trace_reader *trace__reader_new(const char *name, int lenient, enum trace_format format);
/* Reaps the decompressor (killing it first with kill_it); 0, or -1 with
 * the message set if it failed. */
int trace__reap_child(struct trace_reader *r, int kill_it);
/* Next line into r->line: 1 (*nl: it ended with a newline), 0 end, -1. */
int trace__next_line(struct trace_reader *r, size_t *len, int *nl);
/* "COMM TID [CPU] SECS.FRAC: EVENT:" at s: 0 and the fields, or -1. */
int trace__perf_header(const char *s, int *cpu, hrt_time_t *t, const char **ev,
		       const char **eve);
/* Line parsers: 1 an event, 0 a line to ignore, -1 bad (why[512] says). */
int trace__parse_perf(struct trace_reader *r, const char *s, struct trace_event *ev, char *why);
int trace__parse_v1(struct trace_reader *r, const char *s, struct trace_event *ev, char *why);
int trace__parse_tracefs(struct trace_reader *r, const char *s, struct trace_event *ev,
			 char *why);
/* The fields after "EVENT:" of hrtimer_start/cancel/expire_entry and
 * sched_switch, EVENT the bare name [en, ene): 1, 0 another event, -1. */
int trace__event_fields(struct trace_reader *r, const char *en, const char *ene,
			const char *rest, struct trace_event *ev, char *why);
/* "COMM-PID [CPU] FLAGS SECS.FRAC: EVENT:" at s: 0 and the fields, or -1. */
int trace__tracefs_header(const char *s, int *cpu, hrt_time_t *t, const char **task_end,
			  const char **ev, const char **eve);
/* tracefs / trace-cmd lines between events ("CPU:1 [LOST 3 EVENTS]"). */
int trace__tracefs_is_noise(const char *s);
/* Whether s looks like a v1 event line (format detection). */
int trace__v1_is_event(const char *s);

#endif
