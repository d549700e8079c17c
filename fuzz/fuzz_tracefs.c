/* SPDX-License-Identifier: MIT */
/*
 * fuzz_tracefs.c - libFuzzer harness for the kernel's tracefs text reader
 * (trace_tracefs.c) and what `hrt record --tracefs` writes for it.  The
 * input's first line is a task name, the rest tracefs text:
 *
 *   - the text is parsed (strict and lenient) and replayed under every
 *     policy, with fuzz_replay.h's invariants;
 *   - each kind of event, its task given that name, is written as
 *     record_tracefs_line() writes it and read back: exactly one event,
 *     the same kind, task, CPU, time and fields, whatever the name holds
 *     (a task cannot hide its events behind a name like a header).
 */
#include <stdio.h>
#include <string.h>

#include "../tools/live/record.h"
#include "fuzz_replay.h"

/* The name as the reader gives it back: its first 15 bytes, control
 * characters as '?', leading spaces gone (the column is padded). */
static void expected_comm(const char *comm, char *out)
{
	size_t n = 0;

	for (size_t i = 0; comm[i] && i < 15; i++)
		out[n++] = (unsigned char)comm[i] < 0x20 || comm[i] == 0x7f ? '?' : comm[i];
	out[n] = 0;
	n = strspn(out, " ");
	memmove(out, out + n, strlen(out + n) + 1);
}

static void round_trip(const char *comm, const struct trace_event *ev)
{
	char *text = NULL, want[16];
	size_t len = 0;
	struct trace_reader *r;
	struct trace_event got;
	FILE *f = open_memstream(&text, &len);
	int ascii = 1;

	if (!f)
		return;
	record_tracefs_line(f, ev, comm, "hrtimer_wakeup");
	if (fclose(f)) {
		free(text);
		return;
	}
	if (trace_open_mem(&r, text, len, "round trip", 0, TRACE_TRACEFS))
		abort();
	if (trace_next(r, &got) != 1 || got.kind != ev->kind || got.pid != ev->pid ||
	    got.tgid != ev->tgid || got.cpu != ev->cpu || got.t != ev->t)
		abort();
	if (ev->kind == TEV_START && (got.id != ev->id || got.soft != ev->soft ||
				      got.hard != ev->hard || got.rel != ev->rel))
		abort();
	if (ev->kind == TEV_EXPIRE && (got.id != ev->id || got.now != ev->now))
		abort();
	if (ev->kind == TEV_FORK && got.id != ev->id)
		abort();
	expected_comm(comm, want);
	for (const char *p = want; *p; p++)
		ascii &= (unsigned char)*p < 0x80;
	/* names that are not UTF-8 come back escaped (strtab.c): ASCII only */
	if (ascii && *want && strcmp(trace_comm_name(r, got.comm), want))
		abort();
	if (trace_next(r, &got) != 0 || trace_finish(r))
		abort();
	trace_close(r);
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nl = memchr(data, '\n', size);
	size_t n = nl ? (size_t)(nl - data) : size;
	char comm[64];
	static const struct trace_event evs[] = {
		{ .kind = TEV_START, .t = 5000100000, .cpu = 1, .pid = 4242, .tgid = 4240, .id = 0xab,
		  .soft = 5000150000, .hard = 5000200000 },
		{ .kind = TEV_START, .t = 7, .cpu = 0, .pid = 1, .id = 1, .soft = 9, .hard = 9,
		  .rel = 1 },
		{ .kind = TEV_CANCEL, .t = 5000160000, .cpu = 3, .pid = 99999, .tgid = 1, .id = 0xab },
		{ .kind = TEV_EXPIRE, .t = 5000201000, .cpu = 1, .pid = 0, .id = 0xab,
		  .now = 5000200500 },
		{ .kind = TEV_IDLE, .t = 6000000000, .cpu = 2, .pid = 17 },
		{ .kind = TEV_BUSY, .t = 6000000001, .cpu = 2, .pid = 17, .tgid = 17 },
		{ .kind = TEV_FORK, .t = 6000000002, .cpu = 1, .pid = 500, .tgid = 500, .id = 601 },
	};

	fuzz_replay_one(nl ? nl + 1 : data + size, nl ? size - n - 1 : 0, 0, TRACE_TRACEFS);
	fuzz_replay_one(nl ? nl + 1 : data + size, nl ? size - n - 1 : 0, 1, TRACE_TRACEFS);
	/* a name up to the first NUL, as a kernel comm is */
	if (n > sizeof(comm) - 1)
		n = sizeof(comm) - 1;
	memcpy(comm, data, n);
	comm[n] = 0;
	for (size_t i = 0; i < sizeof(evs) / sizeof(evs[0]); i++)
		round_trip(comm, &evs[i]);
	return 0;
}
