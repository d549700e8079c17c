/* SPDX-License-Identifier: MIT */
/*
 * cmd_convert.c - `hrt convert`: a trace to hrt-trace v1 (convert.c).
 * Streams into a temporary file that is copied to the output (outfile.h:
 * -o PATH or stdout) only once the whole input has parsed, so bad input
 * never leaves half an output behind.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmds.h"
#include "../trace/convert.h"
#include "../common/opt.h"
#include "../common/outfile.h"

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

struct convert_opts {
	const char *dst, *in;
	int lenient, quiet;
};

static int on_opt(void *ctx, int c, const char *arg)
{
	struct convert_opts *o = ctx;

	switch (c) {
	case 'o': o->dst = arg; break;
	case 'l': o->lenient = 1; break;
	case 'q': o->quiet = 1; break;
	}
	return -1;
}

/* Options into *dst, *in, *lenient, *quiet: -1 go on, or the exit status
 * (0 --help, 2 usage) after saying why. */
static int parse_opts(int argc, char **argv, const char **dst, const char **in, int *lenient,
		      int *quiet)
{
	static const struct option opts[] = {
		{ "lenient", no_argument, NULL, 'l' },
		{ "quiet", no_argument, NULL, 'q' },
		{ NULL, 0, NULL, 0 },
	};
	static const struct opt_cmd cmd = { "convert", "o:", opts, usage, on_opt, -1 };
	struct convert_opts o = { *dst, *in, *lenient, *quiet };
	int st = opt_parse(&cmd, argc, argv, &o);

	if (st >= 0)
		return st;
	if (argc - optind > 1) {
		fprintf(stderr, "hrt convert: one input at a time\n");
		return 2;
	}
	if (optind < argc)
		o.in = argv[optind];
	*dst = o.dst;
	*in = o.in;
	*lenient = o.lenient;
	*quiet = o.quiet;
	return -1;
}

/* A temporary file on a descriptor above 2: with stdout closed, the
 * lowest free one is 1, and "-o -" would write into the temporary. */
static FILE *open_tmp(void)
{
	FILE *f = tmpfile(), *g;
	int fd;

	if (!f || fileno(f) > 2)
		return f;
	fd = fcntl(fileno(f), F_DUPFD_CLOEXEC, 3);
	g = fd >= 0 ? fdopen(fd, "w+") : NULL;
	if (!g && fd >= 0)
		close(fd);
	fclose(f);
	return g;
}

/* The converted trace in tmp to the output; 0 or 1 after saying why. */
static int copy_out(FILE *tmp, const char *dst)
{
	struct outfile out;
	char buf[65536];
	size_t n;

	if (outfile_open(&out, dst)) {
		outfile_report(&out, "convert");
		return 1;
	}
	rewind(tmp);
	while ((n = fread(buf, 1, sizeof(buf), tmp)) > 0)
		if (outfile_write(&out, buf, n))
			break;
	if (ferror(tmp)) {
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

int hrt_cmd_convert(int argc, char **argv)
{
	const char *dst = "-", *in = "-", *err;
	struct trace_reader *r = NULL;
	int lenient = 0, quiet = 0, k, st;
	struct progress pr;
	FILE *tmp = NULL;

	if ((st = parse_opts(argc, argv, &dst, &in, &lenient, &quiet)) >= 0)
		goto out;
	if (trace_open(&r, in, lenient, TRACE_AUTO, &err)) {
		fprintf(stderr, "hrt convert: %s\n", err);
		r = NULL;
		st = 2;
		goto out;
	}
	/* the whole input parses before the output is opened */
	if (!(tmp = open_tmp())) {
		fprintf(stderr, "hrt convert: temporary file: %s\n", strerror(errno));
		st = 1;
		goto out;
	}
	progress_start(&pr, "convert", trace_name(r), quiet);
	k = trace_convert_progress(r, tmp, &pr);
	progress_end(&pr);
	if (k) {
		fprintf(stderr, "hrt convert: %s\n", k == -1 ? trace_error(r) : "write error");
		st = k == -1 && !trace_error_is_oom(r) ? 2 : 1;
		goto out;
	}
	trace_warn_clock(r, stderr, "convert");
	if (trace_get_counts(r)->bad_lines)
		fprintf(stderr, "hrt convert: %s: skipped %" PRIu64 " bad lines (--lenient)\n",
			trace_name(r), trace_get_counts(r)->bad_lines);
	/* closed first: with stdout closed, the reader's pipe from xz may hold
	 * descriptor 1 */
	trace_close(r);
	r = NULL;
	st = copy_out(tmp, dst);
out:
	if (tmp)
		fclose(tmp);
	trace_close(r);
	return st;
}
