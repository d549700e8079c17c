/* SPDX-License-Identifier: MIT */
/*
 * outfile.c - writing an output file without replacing what is at the path
 * unless it is a regular file, and checking stdout at exit (outfile.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "outfile.h"

static int fail(struct outfile *o, int e, const char *what)
{
	snprintf(o->err, sizeof(o->err), "%s: %s%s%s", o->path, what, *what ? ": " : "",
		 strerror(e));
	return -e;
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
	    (old && fchown(fd, old->st_uid, old->st_gid) && errno != EPERM) ||
	    !(o->f = fdopen(fd, "w"))) {
		int e = errno;

		close(fd);
		unlink(o->tmp);
		o->tmp[0] = 0;
		return fail(o, e, "cannot create");
	}
	return 0;
}

int outfile_open(struct outfile *o, const char *path)
{
	struct stat st;
	mode_t mask;

	memset(o, 0, sizeof(*o));
	o->path = path;
	if (!strcmp(path, "-")) {
		o->f = stdout;
		o->is_stdout = 1;
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
			int fd = open(o->dst, O_WRONLY | O_CLOEXEC);

			if (fd < 0)
				return fail(o, errno, "cannot open");
			if (!(o->f = fdopen(fd, "w"))) {
				int e = errno;

				close(fd);
				return fail(o, e, "cannot open");
			}
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

int outfile_write(struct outfile *o, const void *buf, size_t n)
{
	if (fwrite(buf, 1, n, o->f) == n)
		return 0;
	if (!o->werr)
		o->werr = errno ? errno : EIO;
	return -o->werr;
}

int outfile_commit(struct outfile *o)
{
	int e = o->werr;

	if (o->is_stdout) {
		if (fflush(stdout) && !e)
			e = errno;
		else if (ferror(stdout) && !e)
			e = EIO;
		if (e) {
			snprintf(o->err, sizeof(o->err), "stdout: %s", strerror(e));
			clearerr(stdout);       /* reported once, by the caller */
		}
		return -e;
	}
	if (!o->f)
		return fail(o, EBADF, "");
	if (fflush(o->f) && !e)
		e = errno;
	else if (ferror(o->f) && !e)
		e = EIO;
	else if (!e && o->tmp[0] && fsync(fileno(o->f)))
		e = errno;
	if (fclose(o->f) && !e)
		e = errno;
	o->f = NULL;
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
	if (o->f && !o->is_stdout)
		fclose(o->f);
	o->f = NULL;
	if (o->tmp[0])
		unlink(o->tmp);
	o->tmp[0] = 0;
}

int tool_close_stdout(const char *cmd)
{
	static int done = -1;   /* the result of the first call: stdout is closed */
	int bad, e = 0;

	if (done >= 0)
		return done;
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
