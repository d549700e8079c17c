/* SPDX-License-Identifier: MIT */
/*
 * fuzz_replay.h - the shared body of the parser harnesses: parse one input in
 * the given format and replay it under every policy.  Invariants: the
 * optimum never exceeds a policy's wake-ups, and no policy expires more
 * timers than were armed.
 */
#ifndef HRT_FUZZ_REPLAY_H
#define HRT_FUZZ_REPLAY_H

#include <stdint.h>
#include <stdlib.h>

#include "../tools/replay/replay.h"

static void fuzz_replay_one(const uint8_t *data, size_t size, int lenient, enum trace_format fmt)
{
	struct trace_reader *r;
	struct replay_result res;

	if (trace_open_mem(&r, data, size, "fuzz", lenient, fmt))
		return;
	if (replay_trace(r, REPLAY_ALL, &res) == 0)
		for (int p = 0; p < RP_NPOL; p++)
			if (res.optimal_wakeups > res.pol[p].wakeups ||
			    res.pol[p].expired > res.armings)
				abort();
	trace_close(r);
}

#endif
