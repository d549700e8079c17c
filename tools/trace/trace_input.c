/* SPDX-License-Identifier: MIT */
/*
 * trace_input.c - where the reader's bytes come from: a file, stdin, a
 * memory buffer, or an xz/gzip child decompressing either (detected by
 * magic bytes, on a pipe too); how far it has read (for progress); and
 * the line splitter over the buffer.  Lines longer than LINE_MAX_ are an
 * error, or skipped whole under --lenient however the reads are chunked.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "trace_impl.h"

static char open_err[768];

int trace_open_mem(struct trace_reader **out, const void *buf, size_t len,
		   const char *name, int lenient, enum trace_format format)
{
	struct trace_reader *r = trace__reader_new(name, lenient, format);

	if (!r)
		return -ENOMEM;
	r->mem = buf;
	r->memlen = len;
	*out = r;
	return 0;
}

/* Starts PROG -dc reading fd (whose first plen bytes, already read, are
 * in pre: those are fed first by a helper process).  The parent keeps
 * only the pipe's read end; fd is closed unless it is stdin. */
static int spawn_decompressor(struct trace_reader *r, int fd, const char *prog,
			      const unsigned char *pre, size_t plen)
{
	int p[2];
	pid_t pid;

	if (pipe(p) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		int e = errno;

		close(p[0]);
		close(p[1]);
		return -e;
	}
	if (pid == 0) {
		/* With stdin or stdout closed, fd or a pipe end may be 0 or 1:
		 * move both above 2 first so no dup2 clobbers the other. */
		int in = fcntl(fd, F_DUPFD, 3), out = fcntl(p[1], F_DUPFD, 3);

		if (in >= 0 && plen) {
			/* a pipe: bytes already read go first, then the rest */
			int q[2];

			if (pipe(q) < 0)
				_exit(126);
			if (fork() == 0) {
				unsigned char b[65536];
				ssize_t k;

				close(q[0]);
				if (write(q[1], pre, plen) != (ssize_t)plen)
					_exit(1);
				while ((k = read(in, b, sizeof(b))) > 0 || (k < 0 && errno == EINTR))
					if (k > 0 && write(q[1], b, (size_t)k) != k)
						_exit(1);
				_exit(k < 0);
			}
			close(q[1]);
			close(in);
			in = fcntl(q[0], F_DUPFD, 3);
			if (q[0] > 2)
				close(q[0]);
		}
		if (in < 0 || out < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0)
			_exit(126);
		close(in);
		close(out);
		if (p[0] > 2)
			close(p[0]);
		if (p[1] > 2)
			close(p[1]);
		if (fd > 2)
			close(fd);
		execlp(prog, prog, "-dc", (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	if (fd != 0)
		close(fd);
	r->fd = p[0];
	r->own_fd = 1;
	r->child = pid;
	r->child_prog = prog;
	return 0;
}

/* For progress: the size of a regular input file and, when a child will
 * decompress it, a descriptor sharing the offset the child reads at.
 * Anything else (a pipe) has no known size; that is no error. */
static void note_source(struct trace_reader *r, int fd, int compressed)
{
	struct stat st;

	if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		return;
	r->src_size = (uint64_t)st.st_size;
	if (compressed)
		r->src_fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
}

void trace_progress(const struct trace_reader *r, uint64_t *done, uint64_t *total)
{
	off_t pos;

	if (r->mem) {
		*done = r->start;
		*total = r->memlen;
		return;
	}
	*total = r->src_size;
	*done = r->bytes_read;
	if (r->src_fd >= 0) {
		pos = lseek(r->src_fd, 0, SEEK_CUR);
		*done = pos >= 0 ? (uint64_t)pos : 0;
	}
	if (*total && *done > *total)
		*total = *done;
}

/* spawn_decompressor for trace_open: on failure the message is in
 * open_err and r is closed.  0 or -errno. */
static int start_decompressor(struct trace_reader *r, int fd, const char *prog,
			      const unsigned char *pre, size_t plen)
{
	int e = spawn_decompressor(r, fd, prog, pre, plen);

	if (e) {
		snprintf(open_err, sizeof(open_err), "%s: cannot start %s: %s", r->name, prog,
			 strerror(-e));
		trace_close(r);
	}
	return e;
}

/* The decompressor for a file starting with these n bytes, or NULL. */
static const char *decompressor(const unsigned char *magic, size_t n)
{
	if (n >= 6 && !memcmp(magic, "\xfd" "7zXZ\0", 6))
		return "xz";
	if (n >= 2 && magic[0] == 0x1f && magic[1] == 0x8b)
		return "gzip";
	return NULL;
}

int trace_open(struct trace_reader **out, const char *path, int lenient,
	       enum trace_format format, const char **err)
{
	struct trace_reader *r;
	unsigned char magic[6];
	const char *prog;
	int fd, e;

	*err = open_err;
	if (!strcmp(path, "-")) {
		size_t got = 0;

		if (!(r = trace__reader_new(TRACE_STDIN, lenient, format)) ||
		    !(r->buf = malloc(CHUNK + LINE_MAX_))) {
			trace_close(r);
			path = TRACE_STDIN;
			goto out_nomem;
		}
		/* Sniff the magic bytes of a pipe too (no pread on a pipe):
		 * read them, and keep them as the start of the input. */
		while (got < 6) {
			ssize_t k = read(0, magic + got, 6 - got);

			if (k < 0 && errno == EINTR)
				continue;
			if (k < 0) {
				e = errno;
				snprintf(open_err, sizeof(open_err), "%s: read error: %s",
					 TRACE_STDIN, strerror(e));
				trace_close(r);
				return -e;
			}
			if (k == 0)
				break;
			got += (size_t)k;
		}
		prog = got == 6 ? decompressor(magic, got) : NULL;
		note_source(r, 0, prog != NULL);
		if (prog) {
			if ((e = start_decompressor(r, 0, prog, magic, got)))
				return e;
		} else {
			r->fd = 0;
			memcpy(r->buf, magic, got);
			r->end = got;
			r->eof = got < 6;
		}
		*out = r;
		return 0;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		e = errno;
		snprintf(open_err, sizeof(open_err), "%s: cannot open: %s", path, strerror(e));
		return -e;
	}
	if (!(r = trace__reader_new(path, lenient, format))) {
		close(fd);
		goto out_nomem;
	}
	prog = pread(fd, magic, 6, 0) == 6 ? decompressor(magic, 6) : NULL;
	note_source(r, fd, prog != NULL);
	if (prog) {
		if ((e = start_decompressor(r, fd, prog, NULL, 0)))
			return e;
	} else {
		r->fd = fd;
		r->own_fd = 1;
	}
	if (!(r->buf = malloc(CHUNK + LINE_MAX_))) {
		trace_close(r);
		goto out_nomem;
	}
	*out = r;
	return 0;
out_nomem:
	snprintf(open_err, sizeof(open_err), "%s: out of memory", path);
	return -ENOMEM;
}

int trace__reap_child(struct trace_reader *r, int kill_it)
{
	int st, ret = 0;

	if (r->child < 0)
		return 0;
	if (r->own_fd && r->fd >= 0) {
		close(r->fd);
		r->fd = -1;
	}
	if (kill_it)
		kill(r->child, SIGTERM);
	while (waitpid(r->child, &st, 0) < 0)
		if (errno != EINTR)
			return 0;
	r->child = -1;
	if (kill_it)
		return 0;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 127) {
		snprintf(r->err, sizeof(r->err), "%s: cannot run '%s -dc' (is %s installed?)",
			 r->name, r->child_prog, r->child_prog);
		ret = -1;
	} else if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		snprintf(r->err, sizeof(r->err), "%s: '%s -dc' failed (%s %d): corrupt or truncated file",
			 r->name, r->child_prog, WIFEXITED(st) ? "exit status" : "signal",
			 WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
		ret = -1;
	}
	return ret;
}

/* Lines ------------------------------------------------------------------- */

/*
 * Next line into r->line (NUL-terminated, no newline).  1: a line (*nl says
 * whether it ended with a newline), 0: end of input, -1: error (message
 * set).  Over-long lines are an error; in lenient mode they are skipped.
 */
int trace__next_line(struct trace_reader *r, size_t *len, int *nl)
{
	for (;;) {
		const char *base = r->mem ? r->mem : r->buf;
		size_t avail = (r->mem ? r->memlen : r->end) - r->start;
		const char *s = base + r->start;
		int at_end = r->mem ? 1 : r->eof;
		const char *e;

		if (!avail && at_end)
			return 0;
		e = avail ? memchr(s, '\n', avail) : NULL;

		if (r->skipping && avail) {     /* the rest of an over-long line */
			if (e) {
				r->start = (size_t)(e - base) + 1;
				r->skipping = 0;
			} else {
				r->start += avail;
			}
			continue;
		}
		if (e || (at_end && avail) || avail > LINE_MAX_) {
			size_t n = e ? (size_t)(e - s) : avail;

			r->lineno++;
			r->cnt.lines++;
			if (n > LINE_MAX_) {
				snprintf(r->err, sizeof(r->err), "%s:%ld: line longer than %d bytes; "
					 "expected a trace event", r->name, r->lineno, LINE_MAX_);
				if (!r->lenient)
					return -1;
				/* skipped whether or not its end has been read yet, so
				 * the result does not depend on how reads are chunked */
				r->cnt.bad_lines++;
				if (e) {
					r->start += n + 1;
				} else {
					r->start += n;
					r->skipping = !at_end;
				}
				continue;
			}
			memcpy(r->line, s, n);
			if (n && r->line[n - 1] == '\r')
				n--;
			r->line[n] = 0;
			*len = n;
			*nl = e != NULL;
			if (e)
				r->start = (size_t)(e - base) + 1;
			else
				r->start = (size_t)(s - base) + avail;
			return 1;
		}
		if (at_end)
			return 0;
		/* Need more bytes: compact, then read. */
		memmove(r->buf, s, avail);
		r->start = 0;
		r->end = avail;
		for (;;) {
			ssize_t got = read(r->fd, r->buf + r->end, CHUNK + LINE_MAX_ - r->end);

			if (got < 0 && errno == EINTR)
				continue;
			if (got < 0) {
				snprintf(r->err, sizeof(r->err), "%s:%ld: read error: %s",
					 r->name, r->lineno + 1, strerror(errno));
				return -1;
			}
			if (got == 0)
				r->eof = 1;
			r->end += (size_t)got;
			r->bytes_read += (uint64_t)got;
			break;
		}
	}
}
