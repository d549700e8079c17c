/* SPDX-License-Identifier: MIT */
/*
 * fuzz_perf.c - libFuzzer harness for the two kernel text readers: parses
 * the input as perf script text (strict and lenient), as tracefs text and
 * auto-detected, and replays it under every policy (the body and its
 * invariants: fuzz_replay.h).
 */
#include "fuzz_replay.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_replay_one(data, size, 0, TRACE_PERF);
	fuzz_replay_one(data, size, 1, TRACE_PERF);
	fuzz_replay_one(data, size, 0, TRACE_TRACEFS);
	fuzz_replay_one(data, size, 1, TRACE_TRACEFS);
	fuzz_replay_one(data, size, 0, TRACE_AUTO);
	return 0;
}
