/* SPDX-License-Identifier: MIT */
/*
 * trace_v1.c - the hrt-trace v1 line parser: "T CPU start ID SOFT HARD",
 * "T CPU cancel ID", "T CPU idle", "T CPU busy"; ids are interned tokens.
 * Every error names the field, its text and what was expected.
 */
#include <string.h>

#include "trace_impl.h"

/* Splits s on blanks into at most max tokens; returns the count (max + 1
 * if there are more). */
static int tokens(const char *s, const char **tb, const char **te, int max)
{
	int n = 0;

	for (;;) {
		while (*s == ' ' || *s == '\t')
			s++;
		if (!*s)
			return n;
		if (n == max)
			return max + 1;
		tb[n] = s;
		while (*s && *s != ' ' && *s != '\t')
			s++;
		te[n++] = s;
	}
}

static int tok_is(const char *b, const char *e, const char *w)
{
	return (size_t)(e - b) == strlen(w) && !memcmp(b, w, (size_t)(e - b));
}

#define V1_FORMS "lines are 'T CPU start ID SOFT HARD', 'T CPU cancel ID', 'T CPU idle' " \
		 "or 'T CPU busy' (T in ns)"

/* Field k (1-based) of a v1 line as a number; -1 with why on failure. */
static int v1_num(const char **tb, const char **te, int k, const char *name,
		  const char *what, int64_t *out, char *why)
{
	int len = (int)(te[k - 1] - tb[k - 1]), q = parse_dec_full(tb[k - 1], te[k - 1], out);

	if (!q)
		return 0;
	return WHY("field %d (%s) '%.*s': %s%s", k, name, len > 32 ? 32 : len, tb[k - 1],
		   q == -2 ? "above INT64_MAX (9223372036854775807); expected " : "expected ",
		   what);
}

int trace__parse_v1(struct trace_reader *r, const char *s, struct trace_event *ev, char *why)
{
	const char *tb[7], *te[7];
	int n = tokens(s, tb, te, 6);
	int64_t c;
	uint32_t id;

	if (n < 3)
		return WHY("expected 'T CPU start ID SOFT HARD', 'T CPU cancel ID', "
			   "'T CPU idle' or 'T CPU busy' (T in ns)");
	if (v1_num(tb, te, 1, "T", "a time in ns; " V1_FORMS, &ev->t, why) ||
	    v1_num(tb, te, 2, "CPU", "a CPU number; " V1_FORMS, &c, why))
		return -1;
	if (c >= TRACE_MAX_CPUS)
		return WHY("CPU %lld out of range (at most %d CPUs)", (long long)c, TRACE_MAX_CPUS);
	ev->cpu = (int)c;
	ev->fn = TRACE_NO_FN;
	if (tok_is(tb[2], te[2], "start")) {
		if (n != 6)
			return WHY("expected 'T CPU start ID SOFT HARD' (%d fields, not %s)", 6,
				   n > 6 ? "more" : "fewer");
		if (v1_num(tb, te, 5, "SOFT", "a soft expiry in ns", &ev->soft, why) ||
		    v1_num(tb, te, 6, "HARD", "a hard expiry in ns", &ev->hard, why))
			return -1;
		if (ev->soft > ev->hard)
			return WHY("soft expiry %lld after hard expiry %lld",
				   (long long)ev->soft, (long long)ev->hard);
		id = strtab_intern(&r->idnames, tb[3], (size_t)(te[3] - tb[3]), 1);
		if (id == UINT32_MAX)
			return WHY("out of memory");
		ev->id = id;
		ev->kind = TEV_START;
	} else if (tok_is(tb[2], te[2], "cancel")) {
		if (n != 4)
			return WHY("expected 'T CPU cancel ID' (4 fields, not %s)",
				   n > 4 ? "more" : "fewer");
		id = strtab_intern(&r->idnames, tb[3], (size_t)(te[3] - tb[3]), 0);
		if (id == UINT32_MAX)
			return WHY("field 4 (ID) '%.*s': cancel of an id that no earlier start "
				   "armed (id used inconsistently)",
				   (int)(te[3] - tb[3] > 64 ? 64 : te[3] - tb[3]), tb[3]);
		ev->id = id;
		ev->kind = TEV_CANCEL;
	} else if (tok_is(tb[2], te[2], "idle") || tok_is(tb[2], te[2], "busy")) {
		if (n != 3)
			return WHY("expected 'T CPU %.4s' and nothing more", tb[2]);
		ev->kind = tb[2][0] == 'i' ? TEV_IDLE : TEV_BUSY;
	} else {
		return WHY("field 3 (event) '%.*s': unknown event; expected start, cancel, idle "
			   "or busy", (int)(te[2] - tb[2] > 32 ? 32 : te[2] - tb[2]), tb[2]);
	}
	return 1;
}

int trace__v1_is_event(const char *s)
{
	const char *tb[4], *te[4];
	int64_t x;
	int n = tokens(s, tb, te, 3);

	return n >= 3 && !parse_dec(tb[0], te[0], &x) && !parse_dec(tb[1], te[1], &x) &&
	       (tok_is(tb[2], te[2], "start") || tok_is(tb[2], te[2], "cancel") ||
		tok_is(tb[2], te[2], "idle") || tok_is(tb[2], te[2], "busy"));
}
