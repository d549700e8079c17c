/* SPDX-License-Identifier: MIT */
/*
 * outfile.c - writing an output file without replacing what is at the path
 * unless it is a regular file, and checking stdout at exit (outfile.h).
 *
 * o->f is a stdio stream over o->fd (fopencookie) whose write function
 * keeps the errno of the first failure: stdio itself only keeps an error
 * flag, so "No space left on device" would otherwise come out as EIO.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "outfile.h"

/* stdout's failure has been reported (outfile_report, tool_flush_stdout). */
static int stdout_reported;

static int fail(struct outfile *o, int e, const char *what)
{
	snprintf(o->err, sizeof(o->err), "%s: %s%s%s", o->path, what, *what ? ": " : "",
		 strerror(e));
	return -e;
}

static ssize_t ck_write(void *c, const char *buf, size_t n)
{
	struct outfile *o = c;
	size_t done = 0;

	while (done < n) {
		ssize_t k = write(o->fd, buf + done, n - done);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			if (!o->werr)
				o->werr = k < 0 ? errno : EIO;
			return (ssize_t)done;   /* fopencookie: short or 0, never < 0 */
		}
		done += (size_t)k;
	}
	return (ssize_t)n;
}

static int ck_close(void *c)
{
	struct outfile *o = c;

	if (o->is_stdout || o->fd < 0)
		return 0;       /* stdout stays open for tool_close_stdout */
	if (close(o->fd) && !o->werr)
		o->werr = errno;
	o->fd = -1;
	return 0;
}

/* o->f over fd; -errno (fd is closed unless it is stdout's). */
static int open_stream(struct outfile *o, int fd)
{
	static const cookie_io_functions_t io = { .write = ck_write, .close = ck_close };

	o->fd = fd;
	if (!(o->f = fopencookie(o, "w", io))) {
		int e = errno;

		if (!o->is_stdout)
			close(fd);
		o->fd = -1;
		return -e;
	}
	return 0;
}

/* A temporary next to dst (so rename stays in one file system). */
static int open_temp(struct outfile *o, mode_t mode, const struct stat *old)
{
	const char *slash = strrchr(o->dst, '/');
	int fd, n;

	if (!slash)
		n = snprintf(o->tmp, sizeof(o->tmp), ".%s.hrtXXXXXX", o->dst);
	else
		n = snprintf(o->tmp, sizeof(o->tmp), "%.*s/.%s.hrtXXXXXX",
			     (int)(slash - o->dst), o->dst, slash + 1);
	if (n < 0 || (size_t)n >= sizeof(o->tmp)) {
		o->tmp[0] = 0;
		return fail(o, ENAMETOOLONG, "cannot create");
	}
	fd = mkostemp(o->tmp, O_CLOEXEC);
	if (fd < 0) {
		int e = errno;

		o->tmp[0] = 0;
		return fail(o, e, "cannot create");
	}
	/* mkstemp makes 0600: give the result the mode it would have had */
	if (fchmod(fd, mode) ||
	    (old && fchown(fd, old->st_uid, old->st_gid) && errno != EPERM)) {
		int e = errno;

		close(fd);
		unlink(o->tmp);
		o->tmp[0] = 0;
		return fail(o, e, "cannot create");
	}
	if ((n = open_stream(o, fd))) {
		unlink(o->tmp);
		o->tmp[0] = 0;
		return fail(o, -n, "cannot create");
	}
	return 0;
}

int outfile_open(struct outfile *o, const char *path)
{
	struct stat st;
	mode_t mask;

	memset(o, 0, sizeof(*o));
	o->path = path;
	o->fd = -1;
	if (!strcmp(path, "-")) {
		int e;

		/* what stdout holds already goes first, with its own check */
		o->is_stdout = 1;
		o->path = "stdout";
		if (fflush(stdout))
			return fail(o, errno, "");
		if ((e = open_stream(o, STDOUT_FILENO)))
			return fail(o, -e, "");
		return 0;
	}
	if (strlen(path) >= sizeof(o->dst))
		return fail(o, ENAMETOOLONG, "cannot create");
	strcpy(o->dst, path);
	for (int depth = 0;; depth++) {
		char link[PATH_MAX], *slash;
		ssize_t n;

		if (!stat(o->dst, &st)) {
			if (S_ISREG(st.st_mode)) {
				char *real = realpath(o->dst, NULL);

				if (!real)
					return fail(o, errno, "cannot resolve");
				if (strlen(real) >= sizeof(o->dst)) {
					free(real);
					return fail(o, ENAMETOOLONG, "cannot create");
				}
				strcpy(o->dst, real);
				free(real);
				return open_temp(o, st.st_mode & 07777, &st);
			}
			/* a device or FIFO: write through, never replace it */
			int fd = open(o->dst, O_WRONLY | O_CLOEXEC), e;

			if (fd < 0)
				return fail(o, errno, "cannot open");
			if ((e = open_stream(o, fd)))
				return fail(o, -e, "cannot open");
			return 0;
		}
		if (errno != ENOENT)
			return fail(o, errno, "cannot open");
		/* A dangling symlink: create its target, the link stays. */
		n = readlink(o->dst, link, sizeof(link) - 1);
		if (n < 0)
			break;
		if (depth == 40)
			return fail(o, ELOOP, "cannot open");
		link[n] = 0;
		slash = strrchr(o->dst, '/');
		if (link[0] != '/' && slash) {
			char dir[PATH_MAX];

			snprintf(dir, sizeof(dir), "%.*s", (int)(slash - o->dst), o->dst);
			if ((size_t)snprintf(o->dst, sizeof(o->dst), "%s/%s", dir, link) >=
			    sizeof(o->dst))
				return fail(o, ENAMETOOLONG, "cannot create");
		} else {
			strcpy(o->dst, link);
		}
	}
	mask = umask(0);
	umask(mask);
	return open_temp(o, 0666 & ~mask, NULL);
}

int outfile_open_in(struct outfile *o, const char *dir, const char *name)
{
	char given[PATH_MAX];

	if (!dir)
		return outfile_open(o, name);
	if ((size_t)snprintf(given, sizeof(given), "%s/%s", dir, name) >= sizeof(given)) {
		memset(o, 0, sizeof(*o));
		o->path = name;
		return fail(o, ENAMETOOLONG, "cannot create");
	}
	/* outfile_open clears o (its messages are made by then) */
	{
		int e = outfile_open(o, given);

		memcpy(o->given, given, sizeof(given));
		o->path = o->given;
		return e;
	}
}

const char *outfile_path(const struct outfile *o)
{
	return o->path;
}

void outfile_report(const struct outfile *o, const char *cmd)
{
	fprintf(stderr, "hrt %s: %s\n", cmd, o->err);
	if (o->is_stdout)
		stdout_reported = 1;
}

int outfile_write(struct outfile *o, const void *buf, size_t n)
{
	if (fwrite(buf, 1, n, o->f) == n)
		return 0;
	if (!o->werr)
		o->werr = errno ? errno : EIO;
	return -o->werr;
}

int outfile_fd(const struct outfile *o)
{
	return o->fd;
}

int outfile_commit(struct outfile *o)
{
	int e, bad;

	if (!o->f)
		return fail(o, EBADF, "");
	bad = fflush(o->f) || ferror(o->f);
	if (!bad && o->tmp[0] && fsync(o->fd))
		o->werr = o->werr ? o->werr : errno;
	fclose(o->f);           /* ck_close: any error is in werr */
	o->f = NULL;
	e = o->werr ? o->werr : bad ? EIO : 0;
	if (o->is_stdout) {
		if (e)
			snprintf(o->err, sizeof(o->err), "stdout: %s", strerror(e));
		return -e;
	}
	if (!e && o->tmp[0] && rename(o->tmp, o->dst))
		e = errno;
	if (e) {
		outfile_abort(o);
		return fail(o, e, "");
	}
	o->tmp[0] = 0;
	return 0;
}

void outfile_abort(struct outfile *o)
{
	if (o->f)
		fclose(o->f);   /* for stdout: flushes what was written */
	o->f = NULL;
	if (o->tmp[0])
		unlink(o->tmp);
	o->tmp[0] = 0;
}

int tool_flush_stdout(const char *cmd)
{
	int e;

	if (stdout_reported)
		return 1;
	if (!fflush(stdout) && !ferror(stdout))
		return 0;
	e = ferror(stdout) && !errno ? EIO : errno;
	fprintf(stderr, "hrt %s: stdout: %s\n", cmd, strerror(e ? e : EIO));
	stdout_reported = 1;
	return 1;
}

int tool_close_stdout(const char *cmd)
{
	static int done = -1;   /* the result of the first call: stdout is closed */
	int bad, e = 0;

	if (done >= 0)
		return done;
	if (stdout_reported) {
		/* said once already; close quietly, whatever close says now */
		fclose(stdout);
		return done = 1;
	}
	bad = ferror(stdout);

	if (fflush(stdout))
		e = errno;
	/* EBADF from close alone: stdout was closed and nothing was written */
	if (fclose(stdout) && !e && (errno != EBADF || bad))
		e = errno;
	if (bad && !e)
		e = EIO;
	if (!(done = e != 0))
		return 0;
	fprintf(stderr, "hrt%s%s: stdout: %s\n", cmd ? " " : "", cmd ? cmd : "", strerror(e));
	return 1;
}
