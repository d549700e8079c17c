/* SPDX-License-Identifier: MIT */
/*
 * trace.c - the streaming trace readers: input sources (file, stdin,
 * memory, xz/gzip child), line splitting, the perf script and hrt-trace v1
 * line parsers, per-id consistency checks, and the small reorder queue that
 * turns a perf cancel+expire pair into one expiry.  Contract in trace.h.
 *
 * Invariants:
 *  (1) events leave the reader in file order, which is time order (a line
 *      whose time goes backwards is bad input);
 *  (2) a cancel is held in the queue until the next line of its CPU is
 *      parsed (or QUEUE_MAX lines later); nothing behind it leaves first;
 *  (3) memory: the line buffer, the queue, one record per distinct id and
 *      one string per distinct function name.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "trace.h"

/*
 * Fixed bounds of the reader, and what happens at each:
 *  - LINE_MAX_: a longer line is an error ("line longer than"), skipped
 *    and counted under --lenient;
 *  - QUEUE_MAX: a perf cancel whose expire_entry comes more than QUEUE_MAX
 *    events later is read as a real cancel (the pair is not merged);
 *  - TRACE_MAX_CPUS (trace.h): a higher CPU number is a bad line;
 *  - TRACE_MAX_IDS (trace.h): the next new timer id is a bad line naming
 *    the limit (not "out of memory").
 */
#define CHUNK      (256 * 1024)
#define LINE_MAX_  65536
#define QUEUE_MAX  4096         /* lookahead for cancel+expire pairs */
#define TID_CHUNK  4096         /* struct tid per allocation */
#define TID_CHUNKS (TRACE_MAX_IDS / TID_CHUNK)

/* ids --------------------------------------------------------------------- */

#define TID_PENDING 1u          /* armed, no expiry or cancel seen yet */

struct tid {
	uint32_t fn;
	uint32_t flags;
	hrt_time_t until;       /* max(hard, start time) of the last arming */
};

static size_t slot_of(uint64_t key, size_t cap)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdULL;
	key ^= key >> 33;
	return (size_t)key & (cap - 1);
}

void **idmap_get(const struct idmap *m, uint64_t key)
{
	size_t i;

	if (!m->cap)
		return NULL;
	for (i = slot_of(key, m->cap); m->vals[i]; i = (i + 1) & (m->cap - 1))
		if (m->keys[i] == key)
			return &m->vals[i];
	return NULL;
}

static int idmap_grow(struct idmap *m)
{
	size_t ncap = m->cap ? m->cap * 2 : 1024, i;
	uint64_t *nk = calloc(ncap, sizeof(*nk));
	void **nv = calloc(ncap, sizeof(*nv));

	if (!nk || !nv) {
		free(nk);
		free(nv);
		return -ENOMEM;
	}
	for (i = 0; i < m->cap; i++) {
		size_t j;

		if (!m->vals[i])
			continue;
		for (j = slot_of(m->keys[i], ncap); nv[j]; j = (j + 1) & (ncap - 1))
			;
		nk[j] = m->keys[i];
		nv[j] = m->vals[i];
	}
	free(m->keys);
	free(m->vals);
	m->keys = nk;
	m->vals = nv;
	m->cap = ncap;
	return 0;
}

/* A fresh slot holds a placeholder until the caller stores its value. */
static char idmap_placeholder;

void **idmap_put(struct idmap *m, uint64_t key, int *fresh)
{
	void **v = idmap_get(m, key);
	size_t i;

	*fresh = 0;
	if (v)
		return v;
	if ((m->n + 1) * 4 > m->cap * 3 && idmap_grow(m))
		return NULL;
	for (i = slot_of(key, m->cap); m->vals[i]; i = (i + 1) & (m->cap - 1))
		;
	m->keys[i] = key;
	m->vals[i] = &idmap_placeholder;
	m->n++;
	*fresh = 1;
	return &m->vals[i];
}

void idmap_del(struct idmap *m, uint64_t key)
{
	void **v = idmap_get(m, key);
	size_t i, j, mask = m->cap - 1;

	if (!v)
		return;
	i = (size_t)(v - m->vals);
	m->vals[i] = NULL;
	m->n--;
	/* Backward shift: move later members of the probe run into the hole
	 * when their home slot does not lie strictly between hole and them. */
	for (j = (i + 1) & mask; m->vals[j]; j = (j + 1) & mask) {
		size_t h = slot_of(m->keys[j], m->cap);

		if ((j > i && (h <= i || h > j)) || (j < i && h <= i && h > j)) {
			m->keys[i] = m->keys[j];
			m->vals[i] = m->vals[j];
			m->vals[j] = NULL;
			i = j;
		}
	}
}

void idmap_free(struct idmap *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

/* Interned strings ---------------------------------------------------------- */

/* Strings to dense indices: name hash (+ probe) -> index + 1 in an idmap. */
struct strtab {
	struct idmap map;
	char **s;
	uint32_t n, cap;
	int oom;                /* an insertion failed for lack of memory */
};

static uint64_t str_hash(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ULL;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
	return h;
}

/* Length of the valid UTF-8 sequence at s (of n bytes), 0 if invalid. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	size_t k;
	uint32_t c;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		k = 2, c = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		k = 3, c = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		k = 4, c = s[0] & 0x07;
	else
		return 0;
	if (n < k)
		return 0;
	for (size_t i = 1; i < k; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	/* overlong forms, surrogates, beyond U+10FFFF */
	if ((k == 3 && c < 0x800) || (k == 4 && (c < 0x10000 || c > 0x10ffff)) ||
	    (c >= 0xd800 && c <= 0xdfff))
		return 0;
	return k;
}

size_t trace_utf8_prefix(const char *s, size_t max)
{
	size_t n = strlen(s), i = 0;

	while (i < n) {
		size_t k = utf8_len((const unsigned char *)s + i, n - i);

		if (!k)
			k = 1;          /* not UTF-8: a byte at a time */
		if (i + k > max)
			break;
		i += k;
	}
	return i;
}

/* A copy of s[0, n) with each byte that is not part of valid UTF-8
 * written as the four characters \xNN, so the result is valid UTF-8. */
static char *utf8_dup(const char *s, size_t n)
{
	char *d = malloc(n * 4 + 1), *p = d;

	if (!d)
		return NULL;
	for (size_t i = 0; i < n;) {
		size_t k = utf8_len((const unsigned char *)s + i, n - i);

		if (k) {
			memcpy(p, s + i, k);
			p += k;
			i += k;
		} else {
			p += sprintf(p, "\\x%02x", (unsigned char)s[i++]);
		}
	}
	*p = 0;
	return d;
}

/* Index of s[0, n) (made valid UTF-8 first), inserted if create;
 * UINT32_MAX if absent or out of memory. */
static uint32_t strtab_intern(struct strtab *t, const char *raw, size_t rn, int create)
{
	char *s = utf8_dup(raw, rn);
	size_t n;
	uint64_t h;
	void **v;
	int fresh;

	if (!s) {
		t->oom = 1;
		return UINT32_MAX;
	}
	n = strlen(s);
	for (h = str_hash(s, n);; h++) {
		v = idmap_get(&t->map, h);
		if (!v)
			break;
		uint32_t i = (uint32_t)((uintptr_t)*v - 1);

		if (!strcmp(t->s[i], s)) {
			free(s);
			return i;
		}
	}
	if (!create || t->n == UINT32_MAX - 1)
		goto fail;
	if (t->n == t->cap) {
		uint32_t nc = t->cap ? t->cap * 2 : 64;
		char **ns = realloc(t->s, nc * sizeof(*ns));

		if (!ns)
			goto nomem;
		t->s = ns;
		t->cap = nc;
	}
	if (!(v = idmap_put(&t->map, h, &fresh)))
		goto nomem;
	t->s[t->n] = s;
	*v = (void *)(uintptr_t)(t->n + 1);
	return t->n++;
nomem:
	t->oom = 1;
fail:
	free(s);
	return UINT32_MAX;
}

static void strtab_free(struct strtab *t)
{
	idmap_free(&t->map);
	for (uint32_t i = 0; i < t->n; i++)
		free(t->s[i]);
	free(t->s);
}

/* The reader -------------------------------------------------------------- */

enum qstate { Q_READY, Q_HELD, Q_DROPPED };

struct qent {
	struct trace_event ev;
	int state;
};

struct trace_reader {
	char name[256];
	char err[1100];
	int lenient;
	enum trace_format format;
	struct trace_counts cnt;

	/* Source: a memory buffer, or an fd (maybe a decompressor's pipe). */
	const char *mem;
	size_t memlen, mempos;
	int fd, own_fd;
	uint64_t bytes_read;    /* from fd: the text, decompressed */
	int src_fd;             /* compressed input: shares the offset the
				 * decompressor reads at, for progress */
	uint64_t src_size;      /* the input file's size, 0: not known */
	pid_t child;
	const char *child_prog;
	char *buf;
	size_t start, end;
	int eof, failed, finished;
	int skipping;           /* lenient: inside an over-long line */
	int oom;                /* failed for lack of memory (never lenient) */

	char line[LINE_MAX_ + 1];
	long lineno;
	hrt_time_t last_t;

	/* Reorder queue (2): a ring of QUEUE_MAX + 1 entries. */
	struct qent *q;
	uint64_t qhead, qtail;
	uint64_t *held;         /* per CPU: queue position + 1 of a held cancel */

	/* ids and function names */
	struct idmap ids;
	struct tid *tids[TID_CHUNKS];   /* TRACE_MAX_IDS ids, TID_CHUNK a chunk */
	size_t ntids;
	struct strtab fns;      /* function names (perf) */
	struct strtab idnames;  /* v1 id tokens: the id is the index */
	char idbuf[24];         /* trace_id_name() of a perf address */
};

static char open_err[768];

static struct trace_reader *reader_new(const char *name, int lenient, enum trace_format format)
{
	struct trace_reader *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	snprintf(r->name, sizeof(r->name), "%s", name);
	r->lenient = lenient;
	r->format = format;
	r->fd = -1;
	r->src_fd = -1;
	r->child = -1;
	r->last_t = INT64_MIN;
	r->q = calloc(QUEUE_MAX + 1, sizeof(*r->q));
	r->held = calloc(TRACE_MAX_CPUS, sizeof(*r->held));
	if (!r->q || !r->held) {
		trace_close(r);
		return NULL;
	}
	return r;
}

int trace_open_mem(struct trace_reader **out, const void *buf, size_t len,
		   const char *name, int lenient, enum trace_format format)
{
	struct trace_reader *r = reader_new(name, lenient, format);

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

		if (!(r = reader_new(TRACE_STDIN, lenient, format)) ||
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
			e = spawn_decompressor(r, 0, prog, magic, got);
			if (e) {
				snprintf(open_err, sizeof(open_err), "%s: cannot start %s: %s",
					 TRACE_STDIN, prog, strerror(-e));
				trace_close(r);
				return e;
			}
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
	if (!(r = reader_new(path, lenient, format))) {
		close(fd);
		goto out_nomem;
	}
	prog = pread(fd, magic, 6, 0) == 6 ? decompressor(magic, 6) : NULL;
	note_source(r, fd, prog != NULL);
	if (prog) {
		e = spawn_decompressor(r, fd, prog, NULL, 0);
		if (e) {
			snprintf(open_err, sizeof(open_err), "%s: cannot start %s: %s",
				 path, prog, strerror(-e));
			trace_close(r);
			return e;
		}
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

static int reap_child(struct trace_reader *r, int kill_it)
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

void trace_close(struct trace_reader *r)
{
	if (!r)
		return;
	reap_child(r, 1);
	if (r->own_fd && r->fd >= 0)
		close(r->fd);
	if (r->src_fd >= 0)
		close(r->src_fd);
	/* tids is a table of chunks of TID_CHUNK: free by chunk, not by id */
	for (size_t i = 0; i < sizeof(r->tids) / sizeof(r->tids[0]); i++)
		free(r->tids[i]);
	idmap_free(&r->ids);
	strtab_free(&r->fns);
	strtab_free(&r->idnames);
	free(r->q);
	free(r->held);
	free(r->buf);
	free(r);
}

const char *trace_error(const struct trace_reader *r) { return r->err; }
int trace_error_is_oom(const struct trace_reader *r) { return r->oom; }
const char *trace_name(const struct trace_reader *r) { return r->name; }
enum trace_format trace_get_format(const struct trace_reader *r) { return r->format; }
const struct trace_counts *trace_get_counts(const struct trace_reader *r) { return &r->cnt; }
uint32_t trace_fn_count(const struct trace_reader *r) { return r->fns.n; }

const char *trace_fn_name(const struct trace_reader *r, uint32_t fn)
{
	return fn < r->fns.n ? r->fns.s[fn] : "?";
}

const char *trace_id_name(struct trace_reader *r, uint64_t id)
{
	if (r->format == TRACE_V1)
		return id < r->idnames.n ? r->idnames.s[id] : "?";
	snprintf(r->idbuf, sizeof(r->idbuf), "0x%llx", (unsigned long long)id);
	return r->idbuf;
}

const char *trace_comm_name(const struct trace_reader *r, uint32_t comm)
{
	return trace_fn_name(r, comm);
}

/* Lines ------------------------------------------------------------------- */

/*
 * Next line into r->line (NUL-terminated, no newline).  1: a line (*nl says
 * whether it ended with a newline), 0: end of input, -1: error (message
 * set).  Over-long lines are an error; in lenient mode they are skipped.
 */
static int next_line(struct trace_reader *r, size_t *len, int *nl)
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

/* Little parsers ---------------------------------------------------------- */

static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* Decimal in [s, e): 0; -1 not a number; -2 above INT64_MAX, with *out
 * saturated at INT64_MAX (perf's fields saturate, v1's are an error). */
static int parse_dec_full(const char *s, const char *e, int64_t *out)
{
	uint64_t v = 0;

	if (s == e)
		return -1;
	for (; s < e; s++) {
		if (!is_digit(*s))
			return -1;
		if (v > ((uint64_t)INT64_MAX - (uint64_t)(*s - '0')) / 10)
			v = (uint64_t)INT64_MAX + 1;    /* keep scanning for non-digits */
		else
			v = v * 10 + (uint64_t)(*s - '0');
	}
	*out = v > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)v;
	return v > (uint64_t)INT64_MAX ? -2 : 0;
}

/* Decimal in [s, e) exactly; saturates at INT64_MAX.  0 or -1. */
static int parse_dec(const char *s, const char *e, int64_t *out)
{
	return parse_dec_full(s, e, out) == -1 ? -1 : 0;
}

/* Hex with optional 0x, at most 16 digits, or (allow_dec) decimal. */
static int parse_id(const char *s, const char *e, uint64_t *out, int allow_dec)
{
	uint64_t v = 0;
	int hex = e - s > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');

	if (hex)
		s += 2;
	if (s == e || (hex || !allow_dec ? e - s > 16 : e - s > 20))
		return -1;
	for (; s < e; s++) {
		int d;

		if (is_digit(*s))
			d = *s - '0';
		else if ((hex || !allow_dec) && *s >= 'a' && *s <= 'f')
			d = *s - 'a' + 10;
		else if ((hex || !allow_dec) && *s >= 'A' && *s <= 'F')
			d = *s - 'A' + 10;
		else
			return -1;
		if (hex || !allow_dec) {
			v = v << 4 | (uint64_t)d;
		} else {
			if (v > (UINT64_MAX - (uint64_t)d) / 10)
				return -1;
			v = v * 10 + (uint64_t)d;
		}
	}
	*out = v;
	return 0;
}

/* The value of token KEY=... among space-separated tokens of s. */
static const char *field(const char *s, const char *key, const char **vend)
{
	size_t kl = strlen(key);

	while (*s) {
		const char *t, *te;

		while (*s == ' ')
			s++;
		t = s;
		while (*s && *s != ' ')
			s++;
		te = s;
		if ((size_t)(te - t) > kl && !memcmp(t, key, kl) && t[kl] == '=') {
			*vend = te;
			return t + kl + 1;
		}
	}
	return NULL;
}

static uint32_t intern_fn(struct trace_reader *r, const char *s, size_t n)
{
	return strtab_intern(&r->fns, s, n, 1);
}

/* Line parsers: 1 event, 0 line ignored, -1 bad (why written). */

#define WHY(...) (snprintf(why, 512, __VA_ARGS__), -1)

/*
 * The perf script header "COMM TID [CPU] SECS.FRAC: EVENT:": COMM may hold
 * spaces, so search for " [digits] digits.digits: " from the left.
 */
static int perf_header(const char *s, int *cpu, hrt_time_t *t, const char **ev,
		       const char **eve)
{
	for (const char *b = strchr(s, '['); b; b = strchr(b + 1, '[')) {
		const char *p = b + 1, *q;
		int64_t c, sec, frac;
		int digits;

		if (b != s && b[-1] != ' ')
			continue;
		for (q = p; is_digit(*q); q++)
			;
		if (q == p || *q != ']' || q - p > 5 || parse_dec(p, q, &c))
			continue;
		p = q + 1;
		if (*p != ' ')
			continue;
		while (*p == ' ')
			p++;
		for (q = p; is_digit(*q); q++)
			;
		if (q == p || q - p > 11 || parse_dec(p, q, &sec))
			continue;
		frac = 0;
		digits = 0;
		if (*q == '.') {
			p = ++q;
			for (; is_digit(*q); q++)
				;
			digits = (int)(q - p);
			if (digits < 1 || digits > 9 || parse_dec(p, q, &frac))
				continue;
		}
		if (*q != ':' || q[1] != ' ')
			continue;
		if (sec > (INT64_MAX - 999999999) / 1000000000)
			continue;       /* past 2262 in ns: not a timestamp we can hold */
		for (; digits < 9; digits++)
			frac *= 10;
		p = q + 1;
		while (*p == ' ')
			p++;
		for (q = p; *q && *q != ' '; q++)
			;
		if (q - p < 2 || q[-1] != ':')
			continue;
		*cpu = (int)c;
		*t = sec * 1000000000 + frac;
		*ev = p;
		*eve = q - 1;
		return 0;
	}
	return -1;
}

static int ev_is(const char *ev, const char *eve, const char *name)
{
	size_t n = strlen(name);

	return (size_t)(eve - ev) == n && !memcmp(ev, name, n);
}

static int perf_num(const char *rest, const char *key, int64_t *v)
{
	const char *e, *s = field(rest, key, &e);

	return s ? parse_dec(s, e, v) : -1;
}

/*
 * The task in the header "COMM TID [CPU] ...": the last '[' before the
 * event name is the CPU's (COMM may hold spaces and brackets); TID may be
 * written PID/TID.  Unparsable: pid -1, comm TRACE_NO_FN.  -1 only on ENOMEM.
 */
static int perf_task(struct trace_reader *r, const char *s, const char *en,
		     struct trace_event *ev)
{
	const char *b = en, *q, *p, *c;

	ev->pid = -1;
	ev->comm = TRACE_NO_FN;
	while (b > s && *b != '[')
		b--;
	for (q = b; q > s && q[-1] == ' '; q--)
		;
	for (p = q; p > s && (is_digit(p[-1]) || p[-1] == '/'); p--)
		;
	if (p == q || (p > s && p[-1] != ' '))
		return 0;
	for (c = s; *c == ' '; c++)
		;
	for (q = p; q > c && q[-1] == ' '; q--)
		;
	ev->pid = 0;
	for (; is_digit(*p) && ev->pid < 100000000; p++)
		ev->pid = ev->pid * 10 + (*p - '0');
	if (q > c && (ev->comm = intern_fn(r, c, (size_t)(q - c))) == TRACE_NO_FN)
		return -1;
	return 0;
}

static int parse_perf(struct trace_reader *r, const char *s, struct trace_event *ev, char *why)
{
	const char *en, *ene, *rest, *v, *ve;
	int64_t a, b;

	if (perf_header(s, &ev->cpu, &ev->t, &en, &ene))
		return WHY("expected a perf script line 'COMM PID [CPU] SECONDS.NS: EVENT: FIELDS'");
	if (ev->cpu >= TRACE_MAX_CPUS)
		return WHY("CPU %d out of range (at most %d CPUs)", ev->cpu, TRACE_MAX_CPUS);
	rest = ene + 1;
	ev->fn = TRACE_NO_FN;
	if (perf_task(r, s, en, ev))
		return WHY("out of memory");
	if (ev_is(en, ene, "sched:sched_switch")) {
		const char *p = NULL;

		for (const char *q = strstr(rest, " next_pid="); q; q = strstr(q + 1, " next_pid="))
			p = q;
		if (!p)
			return WHY("sched_switch: expected next_pid=PID");
		p += 10;
		for (ve = p; is_digit(*ve); ve++)
			;
		if (parse_dec(p, ve, &a) || (*ve && *ve != ' '))
			return WHY("sched_switch: expected next_pid=PID");
		ev->kind = a == 0 ? TEV_IDLE : TEV_BUSY;
		return 1;
	}
	if (!ev_is(en, ene, "timer:hrtimer_start") && !ev_is(en, ene, "timer:hrtimer_cancel") &&
	    !ev_is(en, ene, "timer:hrtimer_expire_entry"))
		return 0;
	if (!(v = field(rest, "hrtimer", &ve)) || parse_id(v, ve, &ev->id, 0))
		return WHY("%.*s: expected hrtimer=ADDRESS", (int)(ene - en), en);
	if (ev_is(en, ene, "timer:hrtimer_cancel")) {
		ev->kind = TEV_CANCEL;
		return 1;
	}
	if (!(v = field(rest, "function", &ve)))
		return WHY("%.*s: expected function=NAME", (int)(ene - en), en);
	ev->fn = intern_fn(r, v, (size_t)(ve - v));
	if (ev->fn == TRACE_NO_FN)
		return WHY("out of memory");
	if (ev_is(en, ene, "timer:hrtimer_expire_entry")) {
		if (perf_num(rest, "now", &ev->now))
			return WHY("hrtimer_expire_entry: expected now=NS");
		ev->kind = TEV_EXPIRE;
		return 1;
	}
	if (perf_num(rest, "expires", &b))
		return WHY("hrtimer_start: expected expires=NS");
	if (perf_num(rest, "softexpires", &a))
		return WHY("hrtimer_start: expected softexpires=NS");
	if (a > b)
		return WHY("hrtimer_start: soft expiry %lld after hard expiry %lld",
			   (long long)a, (long long)b);
	ev->kind = TEV_START;
	ev->soft = a;
	ev->hard = b;
	return 1;
}

/* Splits s on blanks into at most max tokens; returns the count (max + 1
 * if there are more). */
static int tokens(const char *s, const char **tb, const char **te, int max)
{
	int n = 0;

	for (;;) {
		while (*s == ' ' || *s == '\t')
			s++;
		if (!*s)
			return n;
		if (n == max)
			return max + 1;
		tb[n] = s;
		while (*s && *s != ' ' && *s != '\t')
			s++;
		te[n++] = s;
	}
}

static int tok_is(const char *b, const char *e, const char *w)
{
	return (size_t)(e - b) == strlen(w) && !memcmp(b, w, (size_t)(e - b));
}

#define V1_FORMS "lines are 'T CPU start ID SOFT HARD', 'T CPU cancel ID', 'T CPU idle' " \
		 "or 'T CPU busy' (T in ns)"

/* Field k (1-based) of a v1 line as a number; -1 with why on failure. */
static int v1_num(const char **tb, const char **te, int k, const char *name,
		  const char *what, int64_t *out, char *why)
{
	int len = (int)(te[k - 1] - tb[k - 1]), q = parse_dec_full(tb[k - 1], te[k - 1], out);

	if (!q)
		return 0;
	return WHY("field %d (%s) '%.*s': %s%s", k, name, len > 32 ? 32 : len, tb[k - 1],
		   q == -2 ? "above INT64_MAX (9223372036854775807); expected " : "expected ",
		   what);
}

static int parse_v1(struct trace_reader *r, const char *s, struct trace_event *ev, char *why)
{
	const char *tb[7], *te[7];
	int n = tokens(s, tb, te, 6);
	int64_t c;
	uint32_t id;

	if (n < 3)
		return WHY("expected 'T CPU start ID SOFT HARD', 'T CPU cancel ID', "
			   "'T CPU idle' or 'T CPU busy' (T in ns)");
	if (v1_num(tb, te, 1, "T", "a time in ns; " V1_FORMS, &ev->t, why) ||
	    v1_num(tb, te, 2, "CPU", "a CPU number; " V1_FORMS, &c, why))
		return -1;
	if (c >= TRACE_MAX_CPUS)
		return WHY("CPU %lld out of range (at most %d CPUs)", (long long)c, TRACE_MAX_CPUS);
	ev->cpu = (int)c;
	ev->fn = TRACE_NO_FN;
	if (tok_is(tb[2], te[2], "start")) {
		if (n != 6)
			return WHY("expected 'T CPU start ID SOFT HARD' (%d fields, not %s)", 6,
				   n > 6 ? "more" : "fewer");
		if (v1_num(tb, te, 5, "SOFT", "a soft expiry in ns", &ev->soft, why) ||
		    v1_num(tb, te, 6, "HARD", "a hard expiry in ns", &ev->hard, why))
			return -1;
		if (ev->soft > ev->hard)
			return WHY("soft expiry %lld after hard expiry %lld",
				   (long long)ev->soft, (long long)ev->hard);
		id = strtab_intern(&r->idnames, tb[3], (size_t)(te[3] - tb[3]), 1);
		if (id == UINT32_MAX)
			return WHY("out of memory");
		ev->id = id;
		ev->kind = TEV_START;
	} else if (tok_is(tb[2], te[2], "cancel")) {
		if (n != 4)
			return WHY("expected 'T CPU cancel ID' (4 fields, not %s)",
				   n > 4 ? "more" : "fewer");
		id = strtab_intern(&r->idnames, tb[3], (size_t)(te[3] - tb[3]), 0);
		if (id == UINT32_MAX)
			return WHY("field 4 (ID) '%.*s': cancel of an id that no earlier start "
				   "armed (id used inconsistently)",
				   (int)(te[3] - tb[3] > 64 ? 64 : te[3] - tb[3]), tb[3]);
		ev->id = id;
		ev->kind = TEV_CANCEL;
	} else if (tok_is(tb[2], te[2], "idle") || tok_is(tb[2], te[2], "busy")) {
		if (n != 3)
			return WHY("expected 'T CPU %.4s' and nothing more", tb[2]);
		ev->kind = tb[2][0] == 'i' ? TEV_IDLE : TEV_BUSY;
	} else {
		return WHY("field 3 (event) '%.*s': unknown event; expected start, cancel, idle "
			   "or busy", (int)(te[2] - tb[2] > 32 ? 32 : te[2] - tb[2]), tb[2]);
	}
	return 1;
}

/* Format detection from one content line. */
static enum trace_format detect(const char *s)
{
	const char *tb[4], *te[4];
	int64_t x;
	int cpu;
	hrt_time_t t;
	const char *a, *b;
	int n = tokens(s, tb, te, 3);

	if (n >= 3 && !parse_dec(tb[0], te[0], &x) && !parse_dec(tb[1], te[1], &x) &&
	    (tok_is(tb[2], te[2], "start") || tok_is(tb[2], te[2], "cancel") ||
	     tok_is(tb[2], te[2], "idle") || tok_is(tb[2], te[2], "busy")))
		return TRACE_V1;
	if (!perf_header(s, &cpu, &t, &a, &b))
		return TRACE_PERF;
	return TRACE_AUTO;
}

/* Id consistency ---------------------------------------------------------- */

static struct tid *tid_get(struct trace_reader *r, uint64_t id, int create, int *fresh)
{
	void **v;

	*fresh = 0;
	if (!create) {
		v = idmap_get(&r->ids, id);
		return v ? *v : NULL;
	}
	if (!(v = idmap_put(&r->ids, id, fresh)))
		return NULL;
	if (*fresh) {
		size_t k = r->ntids / TID_CHUNK, i = r->ntids % TID_CHUNK;

		if (k >= TID_CHUNKS) {
			idmap_del(&r->ids, id);
			*fresh = -1;    /* the cap, not a failed allocation */
			return NULL;
		}
		if (!r->tids[k] && !(r->tids[k] = malloc(TID_CHUNK * sizeof(struct tid)))) {
			idmap_del(&r->ids, id);
			return NULL;
		}
		r->tids[k][i] = (struct tid){ TRACE_NO_FN, 0, 0 };
		*v = &r->tids[k][i];
		r->ntids++;
	}
	return *v;
}

/* Checks ev against what earlier lines said about its id; -1 with why. */
static int check_id(struct trace_reader *r, struct trace_event *ev, char *why)
{
	struct tid *d;
	int fresh;

	switch (ev->kind) {
	case TEV_START:
		if (!(d = tid_get(r, ev->id, 1, &fresh)))
			return fresh < 0 ? WHY("more than %d distinct timer ids (the reader's limit)",
					       TRACE_MAX_IDS)
					 : (r->oom = 1, WHY("out of memory"));
		if (!fresh && (d->flags & TID_PENDING) && ev->t < d->until && d->fn != ev->fn)
			return WHY("timer %s restarted with function %s while still armed "
				   "with %s (id reused inconsistently)", trace_id_name(r, ev->id),
				   trace_fn_name(r, ev->fn), trace_fn_name(r, d->fn));
		d->fn = ev->fn;
		d->flags |= TID_PENDING;
		d->until = ev->hard > ev->t ? ev->hard : ev->t;
		r->cnt.timers += (uint64_t)fresh;
		return 0;
	case TEV_EXPIRE:
		d = tid_get(r, ev->id, 0, &fresh);
		if (d && (d->flags & TID_PENDING) && ev->t < d->until && d->fn != ev->fn)
			return WHY("timer %s expired with function %s while armed with %s "
				   "(id reused inconsistently)", trace_id_name(r, ev->id),
				   trace_fn_name(r, ev->fn), trace_fn_name(r, d->fn));
		ev->known = d != NULL;
		if (d)
			d->flags &= ~TID_PENDING;
		return 0;
	case TEV_CANCEL:
		d = tid_get(r, ev->id, 0, &fresh);
		ev->known = d != NULL;
		if (!d && r->format == TRACE_V1)
			return WHY("cancel of id %s that no earlier start armed "
				   "(id used inconsistently)", trace_id_name(r, ev->id));
		if (d)
			d->flags &= ~TID_PENDING;
		return 0;
	default:
		return 0;
	}
}

/* The queue (2) ----------------------------------------------------------- */

static void queue_push(struct trace_reader *r, const struct trace_event *ev)
{
	uint64_t *h = &r->held[ev->cpu];
	struct qent *e;

	if (*h) {
		struct qent *c = &r->q[(*h - 1) % (QUEUE_MAX + 1)];

		if (ev->kind == TEV_EXPIRE && ev->id == c->ev.id) {
			c->state = Q_DROPPED;
			r->cnt.pairs_merged++;
		} else {
			c->state = Q_READY;
		}
		*h = 0;
	}
	if (r->qtail - r->qhead == QUEUE_MAX) {     /* full: resolve the head */
		struct qent *c = &r->q[r->qhead % (QUEUE_MAX + 1)];

		if (c->state == Q_HELD) {
			c->state = Q_READY;
			r->held[c->ev.cpu] = 0;
		}
	}
	e = &r->q[r->qtail % (QUEUE_MAX + 1)];
	e->ev = *ev;
	e->state = ev->kind == TEV_CANCEL && r->format == TRACE_PERF ? Q_HELD : Q_READY;
	if (e->state == Q_HELD)
		*h = r->qtail + 1;
	r->qtail++;
}

/* 1 if an event was popped, 0 if the head is held or the queue empty. */
static int queue_pop(struct trace_reader *r, struct trace_event *ev)
{
	while (r->qhead != r->qtail) {
		struct qent *e = &r->q[r->qhead % (QUEUE_MAX + 1)];

		if (e->state == Q_HELD)
			return 0;
		r->qhead++;
		if (e->state == Q_DROPPED)
			continue;
		*ev = e->ev;
		return 1;
	}
	return 0;
}

/* Reading ----------------------------------------------------------------- */

static int bad_line(struct trace_reader *r, const char *why)
{
	snprintf(r->err, sizeof(r->err), "%s:%ld: %s", r->name, r->lineno, why);
	if (r->fns.oom || r->idnames.oom)
		r->oom = 1;
	if (!r->lenient || r->oom)
		return -1;
	r->cnt.bad_lines++;
	return 0;
}

static const char *binary_at(const char *s, size_t n, char *why)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if ((c < 0x20 && c != '\t') || c == 0x7f) {
			snprintf(why, 512, "binary data (byte 0x%02x at column %zu); expected a text "
				 "trace line", c, i + 1);
			return why;
		}
	}
	return NULL;
}

/* Parses one line; 1 queued an event, 0 nothing, -1 error. */
static int read_one(struct trace_reader *r)
{
	struct trace_event ev;
	char why[512];
	size_t n;
	int nl, k;
	const char *s;

	k = next_line(r, &n, &nl);
	if (k <= 0)
		return k ? -1 : 2;
	s = r->line;
	if (binary_at(s, n, why))
		return bad_line(r, why);
	if (!nl) {
		snprintf(why, 512, "truncated last line (no newline at end of file)");
		return bad_line(r, why);
	}
	while (*s == ' ' || *s == '\t')
		s++;
	if (!*s)
		return 0;
	if (*s == '#') {
		if (r->format == TRACE_AUTO && !strncmp(s, "# hrt-trace v1", 14) &&
		    (!s[14] || s[14] == ' '))
			r->format = TRACE_V1;
		return 0;
	}
	if (r->format == TRACE_AUTO) {
		r->format = detect(s);
		if (r->format == TRACE_AUTO)
			return bad_line(r, "expected a '# hrt-trace v1' header, an hrt-trace v1 event "
					"or perf script text of timer:hrtimer_* / sched:sched_switch");
	}
	memset(&ev, 0, sizeof(ev));
	k = r->format == TRACE_V1 ? parse_v1(r, s, &ev, why) : parse_perf(r, s, &ev, why);
	if (k < 0)
		return bad_line(r, why);
	if (k == 0) {
		r->cnt.ignored++;
		return 0;
	}
	ev.line = r->lineno;
	if (ev.t < r->last_t) {
		snprintf(why, 512, "time %lld ns goes backwards (previous event at %lld ns); "
			 "expected events in time order", (long long)ev.t, (long long)r->last_t);
		return bad_line(r, why);
	}
	if (check_id(r, &ev, why))
		return bad_line(r, why);
	r->last_t = ev.t;
	r->cnt.events++;
	if (ev.kind == TEV_IDLE || ev.kind == TEV_BUSY)
		r->cnt.sched_events++;
	if (ev.kind == TEV_EXPIRE)
		r->cnt.expire_events++;
	queue_push(r, &ev);
	return 1;
}

int trace_next(struct trace_reader *r, struct trace_event *ev)
{
	if (r->failed)
		return -1;
	for (;;) {
		int k;

		if (queue_pop(r, ev))
			return 1;
		if (r->finished)
			return 0;
		k = read_one(r);
		if (k < 0) {
			/* At the end of a decompressor's output, its failure (a
			 * truncated or corrupt file) is the better message. */
			if (r->eof && r->child >= 0) {
				char keep[sizeof(r->err)];

				memcpy(keep, r->err, sizeof(keep));
				if (!reap_child(r, 0))
					memcpy(r->err, keep, sizeof(keep));
			}
			r->failed = 1;
			return -1;
		}
		if (k == 2) {           /* end of input: every held cancel is one */
			for (uint64_t i = r->qhead; i != r->qtail; i++) {
				struct qent *e = &r->q[i % (QUEUE_MAX + 1)];

				if (e->state == Q_HELD) {
					e->state = Q_READY;
					r->held[e->ev.cpu] = 0;
				}
			}
			r->finished = 1;
		}
	}
}

int trace_finish(struct trace_reader *r)
{
	if (r->failed)
		return -1;
	if (reap_child(r, 0)) {
		r->failed = 1;
		return -1;
	}
	if (!r->cnt.events) {
		snprintf(r->err, sizeof(r->err), "%s:%ld: no trace events before the end of the "
			 "file; expected hrt-trace v1 or perf script text (empty or truncated file?)",
			 r->name, r->lineno);
		r->failed = 1;
		return -1;
	}
	return 0;
}
