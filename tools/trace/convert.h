/* SPDX-License-Identifier: MIT */
/*
 * convert.h - perf script text to hrt-trace v1 (internal to the hrt tool).
 */
#ifndef HRT_TOOLS_CONVERT_H
#define HRT_TOOLS_CONVERT_H

#include <stdio.h>

#include "progress.h"
#include "trace.h"

/* Writes the whole trace of r to out as hrt-trace v1.  0; -1 bad input
 * (trace_error(r)); -2 write error.  out may hold a partial result on
 * failure: callers write to a temporary. */
int trace_convert(struct trace_reader *r, FILE *out);
/* The same with a progress line (progress.h). */
int trace_convert_progress(struct trace_reader *r, FILE *out, struct progress *p);

#endif
