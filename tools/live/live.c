/* SPDX-License-Identifier: MIT */
/*
 * live.c - live hrtimer tracing through libtracefs and libtraceevent (the
 * contract is in live.h): a private instance, the per-CPU ring buffers
 * read as binary records (tracefs_iterate_raw_events), each record's
 * fields read by name from its event's format (tep_get_field_val), and a
 * small sorted hold-back buffer that turns the per-CPU streams into one
 * stream in time order.
 *
 * Task names: a record carries only its pid; sched_switch names both
 * tasks it switches, so names are learnt from it (and from the kernel's
 * saved_cmdlines, which libtracefs loads, for tasks not yet switched).
 * Function names come from kallsyms through libtraceevent.  A task's
 * process (its thread-group id) is read from /proc when the task is first
 * seen: records carry only the thread's id.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../common/grow.h"
#include "live.h"
#include "../apply/proc.h"
#include "../trace/strtab.h"

volatile sig_atomic_t live_stop;

static void on_signal(int sig)
{
	(void)sig;
	live_stop = 1;
}

void live_catch_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

#ifndef HAVE_TRACEFS

int live_open(struct live_trace **out, int merge, const char *who, char *err, size_t len)
{
	(void)merge, (void)who;
	*out = NULL;
	snprintf(err, len, "built without libtracefs and libtraceevent; install %s and "
		 "rebuild", LIVE_PACKAGES);
	return -ENOSYS;
}

int live_poll(struct live_trace *lt, int flush,
	      int (*cb)(void *ctx, const struct trace_event *ev), void *ctx)
{
	(void)lt, (void)flush, (void)cb, (void)ctx;
	return -ENOSYS;
}

const char *live_name(const void *lt, uint32_t i)
{
	(void)lt, (void)i;
	return "?";
}

const char *live_instance(const struct live_trace *lt)
{
	(void)lt;
	return "";
}

uint64_t live_lost(const struct live_trace *lt)
{
	(void)lt;
	return 0;
}

double live_started(const struct live_trace *lt)
{
	(void)lt;
	return 0;
}

void live_close(struct live_trace *lt)
{
	(void)lt;
}

#else

#include <event-parse.h>
#include <fcntl.h>
#include <sys/mount.h>
#include <tracefs.h>

#define LIVE_MOUNTS 16

enum { E_START, E_CANCEL, E_EXPIRE, E_SWITCH, E_FORK, E_N };

static const char *const ev_sys[E_N] = { "timer", "timer", "timer", "sched", "sched" };
static const char *const ev_name[E_N] = {
	"hrtimer_start", "hrtimer_cancel", "hrtimer_expire_entry", "sched_switch",
	"sched_process_fork",
};

struct pend {
	struct trace_event ev;
	uint64_t seq;           /* read order: ties keep it (per-CPU order) */
	int drop;
};

struct live_trace {
	struct tracefs_instance *inst;
	struct tep_handle *tep;
	int id[E_N];
	int merge;
	struct strtab names;    /* functions and task names */
	struct idmap comm;      /* pid -> names index + 1 */
	struct idmap fn;        /* function address -> names index + 1 */
	struct idmap tgid;      /* pid -> its thread-group id + 1 (0: gone) */
	struct pend *p;
	size_t n, cap;
	uint64_t seq, lost;
	hrt_time_t newest, last;
	double started;         /* CLOCK_MONOTONIC s, just before the events were enabled */
	const char *who;        /* "top": messages are "hrt top: ..." */
	char mounted[LIVE_MOUNTS][256]; /* what finding tracefs mounted, to unmount */
	int nmounted;
	int oom;
};

/* The index of a string in names, through a cache keyed by KEY. */
static uint32_t cached(struct live_trace *lt, struct idmap *m, uint64_t key, const char *s,
		       int update)
{
	int fresh;
	void **v = idmap_put(m, key, &fresh);
	uint32_t i;

	if (!v)
		return TRACE_NO_FN;
	if (!fresh && !update)
		return (uint32_t)((uintptr_t)*v - 1);
	i = strtab_intern(&lt->names, s, strlen(s), 1);
	if (i == TRACE_NO_FN) {
		if (fresh)
			idmap_del(m, key);
		return i;
	}
	*v = (void *)((uintptr_t)i + 1);
	return i;
}

/* A task name as text the trace reader takes back: no control bytes. */
static void clean_comm(char *d, size_t dl, const char *s, size_t sl)
{
	size_t i;

	for (i = 0; i < sl && i + 1 < dl && s[i]; i++)
		d[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
	d[i] = 0;
	if (!i)
		snprintf(d, dl, "<...>");
}

static void learn_comm(struct live_trace *lt, struct tep_event *e, struct tep_record *rec,
		       const char *cfield, const char *pfield)
{
	unsigned long long pid;
	const char *raw;
	char name[32];
	int len;

	raw = tep_get_field_raw(NULL, e, cfield, rec, &len, 0);
	if (!raw || tep_get_field_val(NULL, e, pfield, rec, &pid, 0))
		return;
	clean_comm(name, sizeof(name), raw, (size_t)len);
	if (cached(lt, &lt->comm, pid, name, 1) == TRACE_NO_FN)
		lt->oom = 1;
}

static uint32_t comm_of(struct live_trace *lt, int pid)
{
	void **v = idmap_get(&lt->comm, (uint64_t)pid);
	const char *s;
	char name[32];

	if (v)
		return (uint32_t)((uintptr_t)*v - 1);
	s = pid == 0 ? "<idle>" : tep_data_comm_from_pid(lt->tep, pid);
	clean_comm(name, sizeof(name), s ? s : "<...>", 16);
	return cached(lt, &lt->comm, (uint64_t)pid, name, 0);
}

static uint32_t fn_of(struct live_trace *lt, unsigned long long addr)
{
	void **v = idmap_get(&lt->fn, addr);
	const char *s;
	char hex[24];

	if (v)
		return (uint32_t)((uintptr_t)*v - 1);
	if (!(s = tep_find_function(lt->tep, addr))) {
		snprintf(hex, sizeof(hex), "0x%llx", addr);
		s = hex;
	}
	return cached(lt, &lt->fn, addr, s, 0);
}

/* The process of task pid, from /proc the first time it is seen (a task
 * gone by then: 0, not recorded). */
static int32_t tgid_of(struct live_trace *lt, int pid)
{
	int fresh;
	void **v;
	pid_t t;

	if (pid <= 0)
		return 0;
	if (!(v = idmap_put(&lt->tgid, (uint64_t)pid, &fresh))) {
		lt->oom = 1;
		return 0;
	}
	if (fresh) {
		t = proc_tgid(pid);
		*v = (void *)(uintptr_t)(t > 0 ? (uint32_t)t + 1 : 1);
	}
	return (int32_t)((uintptr_t)*v - 1);
}

static int val(struct tep_event *e, struct tep_record *rec, const char *f, int64_t *out)
{
	unsigned long long v;

	if (tep_get_field_val(NULL, e, f, rec, &v, 0))
		return -1;
	*out = v > (unsigned long long)INT64_MAX ? INT64_MAX : (int64_t)v;
	return 0;
}

/* One record into the hold-back buffer. */
static int on_record(struct tep_event *e, struct tep_record *rec, int cpu, void *ctx)
{
	struct live_trace *lt = ctx;
	struct trace_event ev;
	unsigned long long id;
	int64_t a, b;
	void *p;
	int k;

	for (k = 0; k < E_N && lt->id[k] != e->id; k++)
		;
	if (k == E_N)
		return 0;
	if (rec->missed_events > 0)
		lt->lost += (uint64_t)rec->missed_events;
	memset(&ev, 0, sizeof(ev));
	ev.cpu = cpu < 0 ? rec->cpu : cpu;
	ev.t = rec->ts > (unsigned long long)INT64_MAX ? INT64_MAX : (int64_t)rec->ts;
	ev.pid = tep_data_pid(lt->tep, rec);
	ev.fn = TRACE_NO_FN;
	if (k == E_SWITCH) {
		if (val(e, rec, "next_pid", &a))
			return 0;
		learn_comm(lt, e, rec, "prev_comm", "prev_pid");
		learn_comm(lt, e, rec, "next_comm", "next_pid");
		ev.kind = a == 0 ? TEV_IDLE : TEV_BUSY;
		ev.id = (uint64_t)a;
	} else if (k == E_FORK) {
		if (val(e, rec, "child_pid", &a) || a <= 0)
			return 0;
		ev.kind = TEV_FORK;
		ev.id = (uint64_t)a;
	} else {
		if (tep_get_field_val(NULL, e, "hrtimer", rec, &id, 0))
			return 0;       /* an address: all 64 bits are the id */
		ev.id = id;
		ev.kind = k == E_START ? TEV_START : k == E_CANCEL ? TEV_CANCEL : TEV_EXPIRE;
		if (k != E_CANCEL) {
			unsigned long long f;

			if (tep_get_field_val(NULL, e, "function", rec, &f, 0))
				return 0;
			ev.fn = fn_of(lt, f);
		}
		if (k == E_EXPIRE && val(e, rec, "now", &ev.now))
			return 0;
		if (k == E_START) {
			if (val(e, rec, "softexpires", &a) || val(e, rec, "expires", &b))
				return 0;
			ev.soft = a < b ? a : b;
			ev.hard = b;
			ev.rel = !val(e, rec, "mode", &a) && (a & 1);  /* HRTIMER_MODE_REL */
		}
	}
	ev.comm = comm_of(lt, ev.pid);
	ev.tgid = tgid_of(lt, ev.pid);
	p = grow_one(lt->p, lt->n, &lt->cap, sizeof(*lt->p), 4096);
	if (!p) {
		lt->oom = 1;
		return 1;
	}
	lt->p = p;
	lt->p[lt->n++] = (struct pend){ ev, lt->seq++, 0 };
	if (ev.t > lt->newest)
		lt->newest = ev.t;
	return lt->oom;
}

static int cmp_pend(const void *x, const void *y)
{
	const struct pend *a = x, *b = y;

	if (a->ev.t != b->ev.t)
		return a->ev.t < b->ev.t ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

int live_poll(struct live_trace *lt, int flush,
	      int (*cb)(void *ctx, const struct trace_event *ev), void *ctx)
{
	hrt_time_t due;
	size_t i, k;
	int r = 0;

	errno = 0;
	if (tracefs_iterate_raw_events(lt->tep, lt->inst, NULL, 0, on_record, lt) < 0 && !lt->oom)
		return errno ? -errno : -EIO;
	if (lt->oom)
		return -ENOMEM;
	qsort(lt->p, lt->n, sizeof(*lt->p), cmp_pend);
	due = flush ? INT64_MAX : lt->newest < INT64_MIN + LIVE_LAG_NS ? INT64_MIN :
	      lt->newest - LIVE_LAG_NS;
	for (i = 0; i < lt->n && lt->p[i].ev.t <= due && !r; i++) {
		struct pend *e = &lt->p[i];

		if (e->drop)
			continue;
		if (lt->merge && e->ev.kind == TEV_CANCEL) {
			/* the kernel's expiry is traced as cancel, then expire_entry */
			for (k = i + 1; k < lt->n && lt->p[k].ev.cpu != e->ev.cpu; k++)
				;
			if (k < lt->n && lt->p[k].ev.kind == TEV_EXPIRE && lt->p[k].ev.id == e->ev.id)
				continue;
		}
		if (e->ev.t < lt->last)
			e->ev.t = lt->last;     /* a straggler beyond the lag */
		lt->last = e->ev.t;
		r = cb(ctx, &e->ev);
	}
	memmove(lt->p, lt->p + i, (lt->n - i) * sizeof(*lt->p));
	lt->n -= i;
	return r;
}

const char *live_name(const void *p, uint32_t i)
{
	const struct live_trace *lt = p;

	return i < lt->names.n ? lt->names.s[i] : "?";
}

const char *live_instance(const struct live_trace *lt)
{
	return tracefs_instance_get_name(lt->inst);
}

uint64_t live_lost(const struct live_trace *lt)
{
	return lt->lost;
}

double live_started(const struct live_trace *lt)
{
	return lt->started;
}

void live_close(struct live_trace *lt)
{
	if (!lt)
		return;
	if (lt->inst) {
		tracefs_instance_destroy(lt->inst);
		tracefs_instance_free(lt->inst);
	}
	/* what this run mounted, the last first (debugfs under tracefs' dir) */
	for (int i = lt->nmounted - 1; i >= 0; i--)
		if (umount2(lt->mounted[i], 0))
			fprintf(stderr, "hrt %s: could not unmount %s, which it mounted: %s; it "
				"stays mounted\n", lt->who, lt->mounted[i], strerror(errno));
	tep_free(lt->tep);
	strtab_free(&lt->names);
	idmap_free(&lt->comm);
	idmap_free(&lt->fn);
	idmap_free(&lt->tgid);
	free(lt->p);
	free(lt);
}

/* A new instance, hrt-PID or hrt-PID-N when that is taken. */
static int make_instance(struct live_trace *lt, char *err, size_t len)
{
	char name[64];

	for (int n = 0; n < 100; n++) {
		if (n)
			snprintf(name, sizeof(name), "hrt-%ld-%d", (long)getpid(), n);
		else
			snprintf(name, sizeof(name), "hrt-%ld", (long)getpid());
		if (tracefs_instance_exists(name))
			continue;
		errno = 0;
		lt->inst = tracefs_instance_create(name);
		if (!lt->inst) {
			int e = errno ? errno : EACCES;

			snprintf(err, len, "cannot trace: creating the tracefs instance %s/instances/%s: "
				 "%s; run as root (or with write access to tracefs)",
				 tracefs_tracing_dir(), name, strerror(e));
			return -e;
		}
		if (tracefs_instance_is_new(lt->inst))
			return 0;
		tracefs_instance_free(lt->inst);        /* raced with another: not ours */
		lt->inst = NULL;
	}
	snprintf(err, len, "cannot trace: no free tracefs instance name hrt-%ld-N",
		 (long)getpid());
	return -EEXIST;
}

/* The tracefs and debugfs mount points now, up to max, into m; their
 * number. */
static int trace_mounts(char m[][256], int max)
{
	FILE *f = fopen("/proc/self/mounts", "re");
	char line[1024], dir[256], type[64];
	int n = 0;

	if (!f)
		return 0;
	while (n < max && fgets(line, sizeof(line), f))
		if (sscanf(line, "%*s %255s %63s", dir, type) == 2 &&
		    (!strcmp(type, "tracefs") || !strcmp(type, "debugfs")))
			snprintf(m[n++], 256, "%s", dir);
	fclose(f);
	return n;
}

/*
 * tracefs_tracing_dir() mounts tracefs (or debugfs) where it is not: the
 * mounts it added are noted, said on stderr and unmounted by live_close(),
 * so the machine is left as it was found.
 */
static const char *find_tracefs(struct live_trace *lt)
{
	char before[LIVE_MOUNTS][256], after[LIVE_MOUNTS][256];
	int nb = trace_mounts(before, LIVE_MOUNTS), na;
	const char *dir = tracefs_tracing_dir();

	na = trace_mounts(after, LIVE_MOUNTS);
	for (int i = 0; i < na && lt->nmounted < LIVE_MOUNTS; i++) {
		int old = 0;

		for (int j = 0; j < nb && !old; j++)
			old = !strcmp(after[i], before[j]);
		if (old)
			continue;
		memcpy(lt->mounted[lt->nmounted++], after[i], 256);
		fprintf(stderr, "hrt %s: tracefs was not mounted: mounted %s for this run (it is "
			"unmounted at the end)\n", lt->who, after[i]);
	}
	return dir;
}

/* A whole file (a tracefs format, /proc/kallsyms) into a NUL-terminated
 * buffer that doubles as it fills: libtracefs's reader grows by 8 KiB a
 * read, which copies kallsyms' megabytes hundreds of times wherever
 * realloc cannot grow in place (every sanitizer: 13 s a start).  NULL on
 * failure (errno). */
static char *read_whole(const char *path, size_t *len)
{
	size_t cap = 65536, n = 0;
	char *buf = malloc(cap), *q;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t r;

	if (fd < 0 || !buf)
		goto fail;
	while ((r = read(fd, buf + n, cap - n - 1)) != 0) {
		if (r < 0) {
			if (errno == EINTR)
				continue;
			goto fail;
		}
		n += (size_t)r;
		if (cap - n - 1 == 0) {
			if (!(q = realloc(buf, cap * 2)))
				goto fail;
			buf = q;
			cap *= 2;
		}
	}
	close(fd);
	buf[n] = 0;
	*len = n;
	return buf;
fail:
	r = errno;
	if (fd >= 0)
		close(fd);
	free(buf);
	errno = (int)r;
	return NULL;
}

/* The parser for our events only, as tracefs_local_events_system makes
 * one (header page, formats, kallsyms, CPUs, long size) but with one read
 * of each file.  NULL on failure. */
static struct tep_handle *load_events(const char *dir)
{
	struct tep_handle *tep = tep_alloc();
	char path[4096], *buf;
	size_t len;

	if (!tep)
		return NULL;
	snprintf(path, sizeof(path), "%s/events/header_page", dir);
	if (!(buf = read_whole(path, &len)))
		goto fail;
	tep_parse_header_page(tep, buf, (unsigned long)len, sizeof(long));
	free(buf);
	for (int k = 0; k < E_N; k++) {
		snprintf(path, sizeof(path), "%s/events/%s/%s/format", dir, ev_sys[k], ev_name[k]);
		if (!(buf = read_whole(path, &len)))
			continue;               /* said by the caller: no format */
		tep_parse_event(tep, buf, len, ev_sys[k]);
		free(buf);
	}
	if ((buf = read_whole("/proc/kallsyms", &len))) {      /* best effort: addresses */
		tep_parse_kallsyms(tep, buf);
		free(buf);
	}
	tep_set_cpus(tep, (int)sysconf(_SC_NPROCESSORS_CONF));
	tep_set_long_size(tep, tep_get_header_page_size(tep));
	return tep;
fail:
	tep_free(tep);
	return NULL;
}

static int setup(struct live_trace *lt, const char *who, char *err, size_t len)
{
	const char *dir = find_tracefs(lt);
	int e;

	if (!dir) {
		snprintf(err, len, "cannot trace: tracefs is not mounted (mount -t tracefs "
			 "nodev /sys/kernel/tracing) or not readable; run as root");
		return -ENOENT;
	}
	if (access(dir, R_OK | X_OK)) {
		snprintf(err, len, "cannot trace: %s: %s; run as root (or with access to tracefs)",
			 dir, strerror(errno));
		return -errno;
	}
	/* the formats and kallsyms first, so that the events do not pile up
	 * in the buffer meanwhile */
	if (!(lt->tep = load_events(dir))) {
		snprintf(err, len, "cannot trace: reading the event formats in %s/events failed", dir);
		return -EIO;
	}
	for (int k = 0; k < E_N; k++) {
		struct tep_event *ev = tep_find_event_by_name(lt->tep, ev_sys[k], ev_name[k]);

		if (!ev) {
			snprintf(err, len, "cannot trace: no format for %s:%s", ev_sys[k], ev_name[k]);
			return -ENOENT;
		}
		lt->id[k] = ev->id;
	}
	tracefs_load_cmdlines(NULL, lt->tep);
	{
		char inst[4096];

		snprintf(inst, sizeof(inst), "%s/instances", dir);
		live_remove_stale(inst, who, stderr);
	}
	if ((e = make_instance(lt, err, len)))
		return e;
	if (tracefs_instance_file_write(lt->inst, "trace_clock", "mono") < 0) {
		snprintf(err, len, "cannot trace: setting trace_clock mono in instance %s: %s",
			 live_instance(lt), strerror(errno));
		return -EIO;
	}
	/* a fresh instance traces nothing: enable only ours */
	{
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		lt->started = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
	}
	for (int k = 0; k < E_N; k++)
		if (tracefs_event_enable(lt->inst, ev_sys[k], ev_name[k])) {
			snprintf(err, len, "cannot trace: enabling %s:%s in instance %s failed (a "
				 "kernel without hrtimer tracepoints?)", ev_sys[k], ev_name[k],
				 live_instance(lt));
			return -ENOENT;
		}
	if (tracefs_trace_on(lt->inst)) {
		snprintf(err, len, "cannot trace: tracing_on in instance %s", live_instance(lt));
		return -EIO;
	}
	return 0;
}

int live_open(struct live_trace **out, int merge, const char *who, char *err, size_t len)
{
	struct live_trace *lt = calloc(1, sizeof(*lt));
	int e;

	*out = NULL;
	if (!lt) {
		snprintf(err, len, "out of memory");
		return -ENOMEM;
	}
	lt->merge = merge;
	lt->who = who;
	lt->newest = lt->last = INT64_MIN;
	if ((e = setup(lt, who, err, len))) {
		live_close(lt);
		return e;
	}
	*out = lt;
	return 0;
}

#endif
