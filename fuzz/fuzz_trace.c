/* SPDX-License-Identifier: MIT */
/*
 * fuzz_trace.c - libFuzzer harness for the hrt-trace v1 reader: parses the
 * input as hrt-trace v1 (strict and lenient) and replays it under every
 * policy (the body and its invariants: fuzz_replay.h).
 */
#include "fuzz_replay.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_replay_one(data, size, 0, TRACE_V1);
	fuzz_replay_one(data, size, 1, TRACE_V1);
	return 0;
}
