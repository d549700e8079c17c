/* SPDX-License-Identifier: MIT */
/*
 * outfile.h - one way for the hrt tool to write an output file (-o PATH)
 * and to check stdout at exit (internal to the hrt tool).
 *
 * outfile_open(&o, PATH) then write to o.f (or to fileno(o.f) from a
 * child), then outfile_commit() on success or outfile_abort() on failure:
 *  - "-": stdout (commit flushes it; tool_close_stdout() closes it);
 *  - a regular file (or a symlink to one): written to a temporary in the
 *    target's directory and renamed over the target on commit, keeping the
 *    target's mode (a symlink survives: its target gets the content);
 *  - a new path: the same temporary-and-rename, mode 0666 & ~umask;
 *  - anything else (a device such as /dev/null, a FIFO, a symlink to one
 *    or a dangling symlink): opened and written through, never replaced;
 *    a dangling symlink's new target is removed again by outfile_abort().
 * So on failure a regular file is left as it was and a new one is not
 * created.  Errors are -errno with "PATH: what: strerror" in o.err, for
 * the caller to print after "hrt CMD: " (outfile_report does).
 *
 * Every file the tool writes goes this way: -o, --svg, the demo's
 * pictures.  stdout's failures are reported once: after outfile_report()
 * or tool_flush_stdout() has said "hrt CMD: stdout: ...", the exit check
 * in main() stays silent.
 */
#ifndef HRT_TOOLS_OUTFILE_H
#define HRT_TOOLS_OUTFILE_H

#include <limits.h>
#include <stdio.h>

struct outfile {
	FILE *f;                /* write here */
	char err[PATH_MAX + 160];
	/* private */
	const char *path;       /* as given, for messages */
	char tmp[PATH_MAX];     /* temporary, "" if written through */
	char dst[PATH_MAX];     /* rename target */
	char given[PATH_MAX];   /* DIR/NAME of outfile_open_in */
	int is_stdout;
	int fd;                 /* under f */
	int werr;               /* first errno of a write */
};

int outfile_open(struct outfile *o, const char *path);
/* The same for DIR/NAME (dir NULL: NAME). */
int outfile_open_in(struct outfile *o, const char *dir, const char *name);
/* The path as given (DIR/NAME for outfile_open_in), for messages. */
const char *outfile_path(const struct outfile *o);
/* Prints "hrt CMD: o->err" (the failure of open or commit). */
void outfile_report(const struct outfile *o, const char *cmd);
/* fwrite to o->f: 0 or -errno.  fprintf(o->f) is as good: o->f keeps
 * the errno of a failed write for commit. */
int outfile_write(struct outfile *o, const void *buf, size_t n);
/* The descriptor under o->f, for a child to write to (fflush o->f first). */
int outfile_fd(const struct outfile *o);
/* Flushes, closes and (regular files) renames into place.  0 or -errno
 * (o->err), after which the output is discarded as by outfile_abort(). */
int outfile_commit(struct outfile *o);
/* Closes and discards: the temporary (or a file created through a
 * dangling symlink) is removed.  Safe after a failed open or a commit. */
void outfile_abort(struct outfile *o);

/* At exit of a subcommand (CMD, NULL for `hrt` itself): flushes and
 * closes stdout.  0, or 1 after printing "hrt CMD: stdout: strerror".
 * main() calls it after every subcommand; a later call returns the first
 * result again without touching stdout. */
int tool_close_stdout(const char *cmd);
/* Flushes stdout now (before a step that must not happen if stdout
 * failed).  0, or 1 after printing "hrt CMD: stdout: strerror" - the only
 * report of it: tool_close_stdout() then returns 1 without a word. */
int tool_flush_stdout(const char *cmd);

#endif
