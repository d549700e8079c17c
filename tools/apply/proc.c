/* SPDX-License-Identifier: MIT */
/*
 * proc.c - processes, threads, policies and timer slack read from and
 * written to /proc, for `hrt slack` (the contract is in proc.h).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/grow.h"
#include "proc.h"

#ifndef SCHED_DEADLINE
#define SCHED_DEADLINE 6
#endif
#define CAP_SYS_NICE_BIT 23

/* The first len-1 bytes of a small /proc file, NUL-terminated.  Bytes read
 * or -errno. */
static ssize_t read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	if (n < 0)
		n = -errno;
	else
		buf[n] = 0;
	close(fd);
	return n;
}

int proc_comm(pid_t tgid, pid_t pid, char *buf, size_t len)
{
	char path[64], c[PROC_COMM_MAX + 2];
	ssize_t n;

	if (tgid)
		snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)tgid, (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	if ((n = read_small(path, c, sizeof(c))) < 0)
		return (int)n;
	if (n && c[n - 1] == '\n')
		c[n - 1] = 0;
	snprintf(buf, len, "%s", c);
	return 0;
}

pid_t proc_tgid(pid_t pid)
{
	char path[64], buf[4096], *p;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if ((n = read_small(path, buf, sizeof(buf))) < 0)
		return (pid_t)n;
	if (!(p = strstr(buf, "\nTgid:")))
		return -EIO;
	return (pid_t)strtol(p + 6, NULL, 10);
}

#define PF_KTHREAD 0x00200000      /* the kernel's task flag (linux/sched.h) */

int proc_is_kthread(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long flags;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((n = read_small(path, buf, sizeof(buf))) < 0)
		return (int)n;
	/* after "PID (COMM) ": state ppid pgrp session tty_nr tpgid flags */
	if (!(p = strrchr(buf, ')')) ||
	    sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %llu", &flags) != 1)
		return -EIO;
	return !!(flags & PF_KTHREAD);
}

/* A /proc directory entry that is a number: it, else 0. */
static pid_t dir_pid(const struct dirent *d)
{
	const char *s = d->d_name;
	long v = 0;

	if (!*s)
		return 0;
	for (; *s; s++) {
		if (!isdigit((unsigned char)*s) || v > 100000000)
			return 0;
		v = v * 10 + (*s - '0');
	}
	return (pid_t)v;
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return x < y ? -1 : x > y;
}

/* readdir's order is not promised: pid order for the messages */
static void sort_pids(pid_t *v, size_t n)
{
	if (n > 1)
		qsort(v, n, sizeof(*v), cmp_pid);
}

long proc_find_name(const char *name, pid_t *out, size_t max)
{
	char want[PROC_COMM_MAX], comm[PROC_COMM_MAX + 2];
	DIR *dir = opendir("/proc");
	struct dirent *d;
	long n = 0;

	if (!dir)
		return -errno;
	snprintf(want, sizeof(want), "%s", name);       /* the kernel's 15 bytes */
	while ((d = readdir(dir))) {
		pid_t pid = dir_pid(d);

		if (!pid || pid == getpid() || proc_comm(0, pid, comm, sizeof(comm)) ||
		    strcmp(comm, want))
			continue;
		if ((size_t)n < max)
			out[n] = pid;
		n++;
	}
	closedir(dir);
	sort_pids(out, (size_t)n < max ? (size_t)n : max);
	return n;
}

int proc_threads(pid_t pid, pid_t **out, size_t *n)
{
	char path[64];
	DIR *dir;
	struct dirent *d;
	pid_t *v = NULL, *p;
	size_t cap = 0;
	int e = 0;

	*out = NULL;
	*n = 0;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if (!(dir = opendir(path)))
		return -errno;
	while ((d = readdir(dir))) {
		pid_t tid = dir_pid(d);

		if (!tid || tid == pid)
			continue;
		if (!(p = grow_one(v, *n, &cap, sizeof(*v), 16))) {
			e = -ENOMEM;
			goto out_close;
		}
		v = p;
		v[(*n)++] = tid;
	}
	sort_pids(v, *n);
out_close:
	closedir(dir);
	if (e) {
		free(v);
		*n = 0;
		return e;
	}
	*out = v;
	return 0;
}

int proc_policy(pid_t pid)
{
	int p = sched_getscheduler(pid);

	return p < 0 ? -errno : p & ~SCHED_RESET_ON_FORK;
}

const char *proc_rt_policy_name(int policy)
{
	return policy == SCHED_FIFO ? "SCHED_FIFO" : policy == SCHED_RR ? "SCHED_RR" :
	       policy == SCHED_DEADLINE ? "SCHED_DEADLINE" : NULL;
}

int proc_get_slack(pid_t pid, uint64_t *ns)
{
	char path[64], buf[32], *end;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/timerslack_ns", (int)pid);
	if ((n = read_small(path, buf, sizeof(buf))) < 0)
		return (int)n;
	errno = 0;
	*ns = strtoull(buf, &end, 10);
	return end == buf || errno ? -EIO : 0;
}

int proc_set_slack(pid_t pid, uint64_t ns)
{
	char path[64], buf[32];
	int fd, e = 0;
	int len = snprintf(buf, sizeof(buf), "%llu\n", (unsigned long long)ns);

	snprintf(path, sizeof(path), "/proc/%d/timerslack_ns", (int)pid);
	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) < 0)
		return -errno;
	if (write(fd, buf, (size_t)len) != len)
		e = errno ? -errno : -EIO;
	if (close(fd) && !e)
		e = -errno;
	return e;
}

int proc_can_set_slack(void)
{
	char buf[4096], *p;
	unsigned long long caps;

	if (read_small("/proc/self/status", buf, sizeof(buf)) < 0 ||
	    !(p = strstr(buf, "\nCapEff:")))
		return geteuid() == 0;
	caps = strtoull(p + 8, NULL, 16);
	return !!(caps & (1ULL << CAP_SYS_NICE_BIT));
}
