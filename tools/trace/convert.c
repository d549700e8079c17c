/* SPDX-License-Identifier: MIT */
/*
 * convert.c - a trace (perf script text, the kernel's tracefs text or
 * hrt-trace v1) written as hrt-trace v1 (convert.h; the command is
 * cmd_convert.c).  Kernel expiries (hrtimer_expire_entry) have no v1 form:
 * they are counted in a comment and dropped, so a converted trace has no
 * `kernel` row in `hrt replay`.
 */
#include <inttypes.h>

#include "convert.h"

int trace_convert(struct trace_reader *r, FILE *out)
{
	return trace_convert_progress(r, out, NULL);
}

int trace_convert_progress(struct trace_reader *r, FILE *out, struct progress *p)
{
	struct trace_event ev;
	uint64_t expiries = 0, unknown = 0, events = 0;
	int k;

	fprintf(out, "# hrt-trace v1\n# T CPU start ID SOFT HARD | T CPU cancel ID | "
		"T CPU idle | T CPU busy (ns)\n");
	while ((k = trace_next(r, &ev)) > 0) {
		if (p)
			progress_tick(p, r, ++events);
		switch (ev.kind) {
		case TEV_START:
			fprintf(out, "%" PRId64 " %d start %s %" PRId64 " %" PRId64 "\n",
				ev.t, ev.cpu, trace_id_name(r, ev.id), ev.soft, ev.hard);
			break;
		case TEV_CANCEL:
			if (!ev.known) {        /* armed before the trace: a no-op */
				unknown++;
				break;
			}
			fprintf(out, "%" PRId64 " %d cancel %s\n", ev.t, ev.cpu,
				trace_id_name(r, ev.id));
			break;
		case TEV_IDLE:
		case TEV_BUSY:
			fprintf(out, "%" PRId64 " %d %s\n", ev.t, ev.cpu,
				ev.kind == TEV_IDLE ? "idle" : "busy");
			break;
		case TEV_EXPIRE:
			expiries++;
			break;
		case TEV_FORK:          /* v1 has no processes */
			break;
		}
	}
	if (k < 0 || trace_finish(r))
		return -1;
	fprintf(out, "# end: %" PRIu64 " kernel expiries and %" PRIu64 " cancels of timers "
		"armed before the trace dropped, %" PRIu64 " other events ignored, %" PRIu64
		" cancel+expire pairs read as expiries\n", expiries, unknown,
		trace_get_counts(r)->ignored, trace_get_counts(r)->pairs_merged);
	return ferror(out) ? -2 : 0;
}
