/* SPDX-License-Identifier: MIT */
/*
 * persist.c - the slack of a systemd service kept in a drop-in, and the
 * note of each slack hrt applied (the contract is in persist.h).  Every
 * path below the root is walked a component at a time with O_NOFOLLOW, so
 * a symbolic link planted on the way is refused, not followed.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "hrt.h"
#include "../common/opt.h"
#include "persist.h"
#include "proc.h"

/* cgroups ------------------------------------------------------------------ */

static int ends_with(const char *s, size_t n, const char *suf)
{
	size_t m = strlen(suf);

	return n >= m && !memcmp(s + n - m, suf, m);
}

/* The unit of one cgroup path ("/system.slice/foo.service/sub").  systemd
 * lays its units out as slices down from the root, then the unit: only a
 * path of that shape names a unit of this system's manager.  A path that
 * starts anywhere else (a container's "/lxc.payload.c1/system.slice/
 * ssh.service", a cgroup made by hand) is not this system's: its
 * ssh.service is the container's, and the host's must not be named. */
static void unit_of_path(const char *p, enum unit_kind *kind, char *unit, size_t len)
{
	int user = 0;

	*kind = UNIT_NONE;
	snprintf(unit, len, "%s", p);
	while (*p) {
		const char *c = p + strspn(p, "/"), *e = c + strcspn(c, "/");
		size_t n = (size_t)(e - c);

		p = e;
		if (!n || ends_with(c, n, ".slice"))
			continue;
		if (ends_with(c, n, ".scope")) {
			*kind = user ? UNIT_USER_SERVICE : UNIT_SCOPE;
		} else if (ends_with(c, n, ".service")) {
			/* a user's manager (user@UID.service) holds that user's
			 * units below its own slices: the next one down is one */
			if (!user && n > 5 && !memcmp(c, "user@", 5) && *e) {
				user = 1;
				*kind = UNIT_SERVICE;
				snprintf(unit, len, "%.*s", (int)n, c);
				continue;
			}
			*kind = user ? UNIT_USER_SERVICE : UNIT_SERVICE;
		} else if (!user) {
			*kind = UNIT_FOREIGN;   /* not below systemd's slices */
			return;
		} else {
			return;                 /* the user's manager's own cgroup */
		}
		snprintf(unit, len, "%.*s", (int)n, c);
		return;
	}
}

int persist_unit_of_cgroup(const char *text, enum unit_kind *kind, char *unit, size_t len)
{
	const char *v1 = NULL, *v2 = NULL;
	char path[4096];

	for (const char *l = text; *l; l += strcspn(l, "\n"), l += *l == '\n') {
		if (!strncmp(l, "0::", 3))
			v2 = l + 3;
		else if (strstr(l, ":name=systemd:") && strstr(l, ":name=systemd:") < l + strcspn(l, "\n"))
			v1 = strstr(l, ":name=systemd:") + 14;
	}
	if (!v2 && !v1)
		return -1;
	/* systemd's own hierarchy first (v1 hybrid), else the unified one */
	snprintf(path, sizeof(path), "%.*s", (int)strcspn(v1 ? v1 : v2, "\n"), v1 ? v1 : v2);
	unit_of_path(path, kind, unit, len);
	return 0;
}

int persist_unit_of_pid(pid_t pid, enum unit_kind *kind, char *unit, size_t len)
{
	char path[64], buf[8192];
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = 0;
	return persist_unit_of_cgroup(buf, kind, unit, len) ? -EIO : 0;
}

int persist_unit_name_ok(const char *name)
{
	size_t n = strlen(name);

	if (n <= 8 || name[0] == '.' || !ends_with(name, n, ".service"))
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789:_.@-",
			    name[i]))
			return -EINVAL;
	/* UNIT.d must be a file name too: cut, it would be another name */
	return n + 2 > PERSIST_NAME_MAX ? -ENAMETOOLONG : 0;
}

/* Paths below the root ------------------------------------------------------ */

/* Opens ROOT, then each '/'-separated component of SUB below it without
 * following a link, creating missing ones when CREATE.  The directory's fd
 * (and its parent's in *parent, if asked); -2 when a component is missing
 * (not CREATE; no message); or -1 after a message naming the path so far. */
static int walk(const char *root, const char *sub, int create, int *parent)
{
	char comp[256], done[4096];
	int fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC), up = -1, missing = 0;
	const char *p = sub;

	snprintf(done, sizeof(done), "%s", root);
	if (fd < 0) {
		fprintf(stderr, "hrt slack: %s: %s%s\n", root, strerror(errno),
			errno == ENOTDIR ? " (--root takes a directory)" : "");
		return -1;
	}
	while (*p) {
		size_t n = strcspn(p, "/");
		int nfd;

		/* a component is never cut: cut, it names another file */
		if (n > PERSIST_NAME_MAX || strlen(done) + 1 + n >= sizeof(done)) {
			fprintf(stderr, "hrt slack: %s/%.*s: %s; nothing written\n", done, (int)n, p,
				strerror(ENAMETOOLONG));
			goto fail;
		}
		snprintf(comp, sizeof(comp), "%.*s", (int)n, p);
		p += n + (p[n] == '/');
		snprintf(done + strlen(done), sizeof(done) - strlen(done), "%s%s",
			 done[strlen(done) - 1] == '/' ? "" : "/", comp);
		if (create && mkdirat(fd, comp, 0755) && errno != EEXIST) {
			fprintf(stderr, "hrt slack: %s: cannot create: %s\n", done, strerror(errno));
			goto fail;
		}
		if ((nfd = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
			int e = errno;
			struct stat st;

			if (!fstatat(fd, comp, &st, AT_SYMLINK_NOFOLLOW) && S_ISLNK(st.st_mode))
				fprintf(stderr, "hrt slack: %s: a symbolic link: not followed (it would "
					"lead the write somewhere else); nothing written\n", done);
			else if (e != ENOENT || create)
				fprintf(stderr, "hrt slack: %s: %s\n", done, strerror(e));
			else
				missing = 1;    /* not there, and not asked to make it */
			goto fail;
		}
		if (up >= 0)
			close(up);
		up = fd;
		fd = nfd;
	}
	if (parent)
		*parent = up;
	else if (up >= 0)
		close(up);
	return fd;
fail:
	if (up >= 0)
		close(up);
	close(fd);
	return missing ? -2 : -1;
}

/* Whether the file NAME in DIR is hrt's: 1 yes, 0 absent, -1 after a
 * message (not hrt's, a link, not a regular file, unreadable). */
static int is_ours(int dir, const char *name, const char *path)
{
	int fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	char line[sizeof(PERSIST_MARK) + 1];
	struct stat st;
	ssize_t n;

	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		if (errno == ELOOP)
			fprintf(stderr, "hrt slack: %s: a symbolic link, which hrt does not write: "
				"left as it is\n", path);
		else
			fprintf(stderr, "hrt slack: %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		fprintf(stderr, "hrt slack: %s: not a regular file: left as it is\n", path);
		close(fd);
		return -1;
	}
	n = read(fd, line, sizeof(line) - 1);
	close(fd);
	line[n > 0 ? n : 0] = 0;
	if (n < (ssize_t)strlen(PERSIST_MARK) || memcmp(line, PERSIST_MARK, strlen(PERSIST_MARK)) ||
	    line[strlen(PERSIST_MARK)] != '\n') {
		fprintf(stderr, "hrt slack: %s: hrt did not write it (its first line is not \"%s\"): "
			"left as it is\n", path, PERSIST_MARK);
		return -1;
	}
	return 1;
}

static void path_of(const char *root, const char *unit, const char *file, char *path, size_t len)
{
	snprintf(path, len, "%s%s" PERSIST_DIR "/%s.d%s%s", root,
		 root[strlen(root) - 1] == '/' ? "" : "/", unit, file ? "/" : "", file ? file : "");
}

/* The drop-in ------------------------------------------------------------- */

int persist_write(const char *root, const char *unit, uint64_t ns, char *path, size_t len)
{
	char sub[512], tmp[64], text[512], d[32];
	int dir, fd = -1, k, e = 0;
	size_t n;

	path_of(root, unit, PERSIST_FILE, path, len);
	snprintf(sub, sizeof(sub), PERSIST_DIR "/%s.d", unit);
	if ((dir = walk(root, sub, 1, NULL)) < 0)
		return -1;
	if ((k = is_ours(dir, PERSIST_FILE, path)) < 0)
		goto out;
	opt_fmt_ns(ns, d, sizeof(d));
	n = (size_t)snprintf(text, sizeof(text), PERSIST_MARK "\n# Timer slack %s for every "
			     "process of %s from its next start (hrt %s).\n[Service]\n"
			     "TimerSlackNSec=%" PRIu64 "\n", d, unit, hrt_version(), ns);
	for (int i = 0; i < 100 && fd < 0; i++) {
		snprintf(tmp, sizeof(tmp), ".%s.%ld.%d", PERSIST_FILE, (long)getpid(), i);
		fd = openat(dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0) {
		fprintf(stderr, "hrt slack: %s: cannot create a temporary beside it: %s; nothing "
			"written\n", path, strerror(errno));
		goto out;
	}
	if (write(fd, text, n) != (ssize_t)n || fsync(fd))
		e = errno ? errno : EIO;
	if (close(fd) && !e)
		e = errno;
	if (!e && renameat(dir, tmp, dir, PERSIST_FILE))
		e = errno;
	if (e) {
		unlinkat(dir, tmp, 0);
		fprintf(stderr, "hrt slack: %s: %s; nothing written\n", path, strerror(e));
		goto out;
	}
	fsync(dir);
	close(dir);
	return 0;
out:
	close(dir);
	return -1;
}

int persist_remove(const char *root, const char *unit, char *path, size_t len)
{
	char sub[512], name[300];
	int dir, up = -1, k;

	path_of(root, unit, PERSIST_FILE, path, len);
	snprintf(sub, sizeof(sub), PERSIST_DIR "/%s.d", unit);
	if ((dir = walk(root, sub, 0, &up)) < 0)
		return dir == -2 ? 1 : -1;
	if ((k = is_ours(dir, PERSIST_FILE, path)) <= 0) {
		close(dir);
		if (up >= 0)
			close(up);
		return k == 0 ? 1 : -1;
	}
	if (unlinkat(dir, PERSIST_FILE, 0)) {
		fprintf(stderr, "hrt slack: %s: %s; not removed\n", path, strerror(errno));
		close(dir);
		if (up >= 0)
			close(up);
		return -1;
	}
	fsync(dir);
	close(dir);
	/* its directory, if nothing else is in it (hrt may have made it) */
	snprintf(name, sizeof(name), "%s.d", unit);
	if (up >= 0) {
		unlinkat(up, name, AT_REMOVEDIR);
		close(up);
	}
	return 0;
}

/* TimerSlackNSec= of a drop-in's text, or -1. */
static int64_t slack_of_text(const char *s)
{
	const char *p = strstr(s, "\nTimerSlackNSec=");

	return p ? strtoll(p + 16, NULL, 10) : -1;
}

int persist_list(const char *root, FILE *f)
{
	int sys = walk(root, PERSIST_DIR, 0, NULL), n = 0;
	struct dirent *de;
	DIR *d;

	if (sys < 0)
		return sys == -2 ? 0 : -1;
	if (!(d = fdopendir(sys))) {
		close(sys);
		return -1;
	}
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);
		char path[4096], buf[1024], unit[256], dd[32];
		int dir, fd;
		ssize_t k;

		if (!ends_with(de->d_name, l, ".service.d") || l - 2 >= sizeof(unit))
			continue;
		snprintf(unit, sizeof(unit), "%.*s", (int)(l - 2), de->d_name);
		if ((dir = openat(sys, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
			continue;
		fd = openat(dir, PERSIST_FILE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
		close(dir);
		if (fd < 0)
			continue;
		k = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		buf[k > 0 ? k : 0] = 0;
		if (strncmp(buf, PERSIST_MARK "\n", strlen(PERSIST_MARK) + 1) || slack_of_text(buf) < 0)
			continue;
		path_of(root, unit, PERSIST_FILE, path, sizeof(path));
		opt_fmt_ns((uint64_t)slack_of_text(buf), dd, sizeof(dd));
		fprintf(f, "  %-32s %-10s %s\n", unit, dd, path);
		n++;
	}
	closedir(d);
	return n;
}

/* Applied ----------------------------------------------------------------- */

/* Process PID's start time in clock ticks since boot (/proc/PID/stat field
 * 22), or 0. */
static unsigned long long start_of(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long t = 0;
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	if (!(p = strrchr(buf, ')')) ||
	    sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d "
		   "%*d %*d %llu", &t) != 1)
		return 0;
	return t;
}

int applied_note(const char *root, pid_t pid, const char *comm, uint64_t old, uint64_t new_ns)
{
	char line[128];
	int dir = walk(root, "run/hrt", 1, NULL), fd, n, e = 0;

	if (dir < 0)
		return -EIO;
	fd = openat(dir, "slack-applied", O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0644);
	close(dir);
	if (fd < 0)
		return -errno;
	/* a comm holds no newline or space worth keeping: '?' for them */
	n = snprintf(line, sizeof(line), "%d %llu %" PRIu64 " %" PRIu64 " ", (int)pid,
		     start_of(pid), old, new_ns);
	for (const char *c = comm; *c && n < (int)sizeof(line) - 2; c++)
		line[n++] = (unsigned char)*c <= ' ' ? '?' : *c;
	line[n++] = '\n';
	if (write(fd, line, (size_t)n) != n)
		e = errno ? -errno : -EIO;
	if (close(fd) && !e)
		e = -errno;
	return e;
}

int applied_list(const char *root, FILE *f)
{
	struct note {
		int pid;
		unsigned long long start;
		uint64_t old, ns;
		char comm[64];
	} *v = NULL;
	size_t nv = 0, cap = 0;
	int dir = walk(root, "run/hrt", 0, NULL), fd, n = 0;
	char line[256];
	FILE *in;

	if (dir < 0)
		return dir == -2 ? 0 : -EIO;
	fd = openat(dir, "slack-applied", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	close(dir);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!(in = fdopen(fd, "r"))) {
		close(fd);
		return -errno;
	}
	while (fgets(line, sizeof(line), in)) {
		struct note x;
		size_t i;

		if (sscanf(line, "%d %llu %" SCNu64 " %" SCNu64 " %63s", &x.pid, &x.start, &x.old,
			   &x.ns, x.comm) != 5)
			continue;
		for (i = 0; i < nv && v[i].pid != x.pid; i++)
			;
		if (i == nv) {
			if (nv == cap) {
				void *p = realloc(v, (cap = cap ? cap * 2 : 16) * sizeof(*v));

				if (!p) {
					fclose(in);
					free(v);
					return -ENOMEM;
				}
				v = p;
			}
			nv++;
		}
		v[i] = x;       /* the last note of a PID counts */
	}
	fclose(in);
	for (size_t i = 0; i < nv; i++) {
		uint64_t now;
		char a[32], b[32];

		if (!v[i].ns || start_of(v[i].pid) != v[i].start || proc_get_slack(v[i].pid, &now))
			continue;       /* reset, or gone (a reused PID is another) */
		opt_fmt_ns(v[i].ns, a, sizeof(a));
		opt_fmt_ns(now, b, sizeof(b));
		fprintf(f, "  %d (%s): set to %s", v[i].pid, v[i].comm, a);
		if (now != v[i].ns)
			fprintf(f, ", %s now (changed since)", b);
		fputc('\n', f);
		n++;
	}
	free(v);
	return n;
}
