/*
 * fuzz_perf.c - libFuzzer harness for the perf script text reader: parses the
 * input as perf script text (strict and lenient) and replays it under every
 * policy.  Invariants checked: the optimum never exceeds a policy's
 * wake-ups, and a policy never expires more timers than were armed.
 */
#include <stdint.h>
#include <stdlib.h>

#include "../tools/replay.h"

static void one(const uint8_t *data, size_t size, int lenient, enum trace_format fmt)
{
	struct trace_reader *r;
	struct replay_result res;

	if (trace_open_mem(&r, data, size, "fuzz", lenient, fmt))
		return;
	if (replay_trace(r, RP_ALL, RP_IDLE_TRACE, &res) == 0)
		for (int p = 0; p < RP_NPOL; p++)
			if (res.optimal_wakeups > res.pol[p].wakeups ||
			    res.pol[p].expired > res.armings)
				abort();
	trace_close(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	one(data, size, 0, TRACE_PERF);
	one(data, size, 1, TRACE_PERF);
	one(data, size, 0, TRACE_AUTO);
	return 0;
}
