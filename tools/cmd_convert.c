/* SPDX-License-Identifier: MIT */
/*
 * cmd_convert.c - `hrt convert`: a trace to hrt-trace v1 (convert.c).
 * Streams into a temporary file that is copied to the output (outfile.h:
 * -o PATH or stdout) only once the whole input has parsed, so bad input
 * never leaves half an output behind.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmds.h"
#include "convert.h"
#include "outfile.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: hrt convert [-o FILE] [--lenient] [--quiet] [INPUT]\n\n"
		"Converts `perf script` text or the kernel's tracefs text\n"
		"(/sys/kernel/tracing/trace, trace_pipe, `trace-cmd report`) of the hrtimer\n"
		"and sched_switch events (as written by `hrt record [--tracefs]`) to\n"
		"hrt-trace v1, one event per line:\n"
		"  T CPU start ID SOFT HARD | T CPU cancel ID | T CPU idle | T CPU busy\n"
		"(times in ns; idle/busy from sched_switch next_pid).  Kernel expiries are\n"
		"dropped: the simulation never uses them.  INPUT defaults to '-' (stdin);\n"
		"xz and gzip input is decompressed.\n\n"
		"  -o FILE     write FILE (default: stdout, also '-'); written only on\n"
		"              success; a symlink, device or FIFO is written through\n"
		"  --lenient   skip bad lines (and say how many) instead of failing\n"
		"  --quiet     no progress line (shown only when stderr is a terminal)\n"
		"  -h, --help  this text\n\n"
		"Exit status: 0 success, 1 I/O error or out of memory, 2 bad input or usage.\n");
}

int hrt_cmd_convert(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "lenient", no_argument, NULL, 'l' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *dst = "-", *in = "-", *err;
	struct trace_reader *r;
	struct outfile out;
	int lenient = 0, quiet = 0, c, k;
	struct progress pr;
	char buf[65536];
	size_t n;
	FILE *tmp;

	optind = 1;
	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o': dst = optarg; break;
		case 'l': lenient = 1; break;
		case 'q': quiet = 1; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (argc - optind > 1) {
		fprintf(stderr, "hrt convert: one input at a time\n");
		return 2;
	}
	if (optind < argc)
		in = argv[optind];
	if (trace_open(&r, in, lenient, TRACE_AUTO, &err)) {
		fprintf(stderr, "hrt convert: %s\n", err);
		return 2;
	}
	/* the whole input parses before the output is opened */
	if (!(tmp = tmpfile())) {
		fprintf(stderr, "hrt convert: temporary file: %s\n", strerror(errno));
		trace_close(r);
		return 1;
	}
	progress_start(&pr, "convert", trace_name(r), quiet);
	k = trace_convert_progress(r, tmp, &pr);
	progress_end(&pr);
	if (k) {
		fprintf(stderr, "hrt convert: %s\n", k == -1 ? trace_error(r) : "write error");
		k = k == -1 && !trace_error_is_oom(r) ? 2 : 1;
		fclose(tmp);
		trace_close(r);
		return k;
	}
	trace_warn_clock(r, stderr, "convert");
	if (trace_get_counts(r)->bad_lines)
		fprintf(stderr, "hrt convert: %s: skipped %" PRIu64 " bad lines (--lenient)\n",
			trace_name(r), trace_get_counts(r)->bad_lines);
	trace_close(r);
	if (outfile_open(&out, dst)) {
		outfile_report(&out, "convert");
		fclose(tmp);
		return 1;
	}
	rewind(tmp);
	while ((n = fread(buf, 1, sizeof(buf), tmp)) > 0)
		if (outfile_write(&out, buf, n))
			break;
	k = ferror(tmp);
	fclose(tmp);
	if (k) {
		fprintf(stderr, "hrt convert: temporary file: read error\n");
		outfile_abort(&out);
		return 1;
	}
	if (outfile_commit(&out)) {
		outfile_report(&out, "convert");
		return 1;
	}
	return 0;
}
