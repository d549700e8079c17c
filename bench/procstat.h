/* SPDX-License-Identifier: MIT */
/*
 * procstat.h - what the benchmark clients read of a server from /proc
 * (bench/server/client.c, bench/nginx/client.c): its threads' voluntary
 * context switches (its wake-ups), their run time, and a CPU's local
 * timer interrupts.  Read from outside, so the server does nothing to be
 * measured.  Header-only: each client is one file.
 */
#ifndef HRT_BENCH_PROCSTAT_H
#define HRT_BENCH_PROCSTAT_H

#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The number after `key` in a "key: value" file, or 0. */
static inline unsigned long long procstat_field(const char *path, const char *key)
{
	char line[256];
	size_t kl = strlen(key);
	unsigned long long v = 0;
	FILE *f = fopen(path, "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, key, kl) == 0 && line[kl] == ':') {
			v = strtoull(line + kl + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

/* CPU `cpu`'s column of the LOC row of /proc/interrupts, or -1. */
static inline long long procstat_loc(int cpu)
{
	char line[4096], name[16], *p, *tok, *save;
	int col = -1, i = 0;
	long long v = -1;
	FILE *f = cpu < 0 ? NULL : fopen("/proc/interrupts", "r");

	if (!f)
		return -1;
	snprintf(name, sizeof(name), "CPU%d", cpu);
	if (fgets(line, sizeof(line), f))       /* "CPU0 CPU1 ...": online CPUs */
		for (tok = strtok_r(line, " \t\n", &save); tok; tok = strtok_r(NULL, " \t\n", &save), i++)
			if (strcmp(tok, name) == 0)
				col = i;
	while (col >= 0 && fgets(line, sizeof(line), f)) {
		for (p = line; isspace((unsigned char)*p); p++)
			;
		if (strncmp(p, "LOC:", 4) != 0)
			continue;
		p += 4;
		for (i = 0; i <= col; i++)
			v = strtoll(p, &p, 10);
		break;
	}
	fclose(f);
	return v;
}

/* Adds process pid's threads' voluntary and involuntary context switches
 * and run time (schedstat, ns) to *vcs, *nvcs (may be NULL) and *run_ns:
 * 0, or -1 when its /proc/PID/task cannot be read. */
static inline int procstat_tasks(int pid, unsigned long long *vcs, unsigned long long *nvcs,
				 unsigned long long *run_ns)
{
	char path[320];         /* d_name: up to 255 bytes */
	struct dirent *d;
	DIR *dir;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	if (!(dir = opendir(path)))
		return -1;
	while ((d = readdir(dir))) {
		unsigned long long run = 0;

		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/status", pid, d->d_name);
		*vcs += procstat_field(path, "voluntary_ctxt_switches");
		if (nvcs)
			*nvcs += procstat_field(path, "nonvoluntary_ctxt_switches");
		snprintf(path, sizeof(path), "/proc/%d/task/%s/schedstat", pid, d->d_name);
		if ((f = fopen(path, "r"))) {
			if (fscanf(f, "%llu", &run) == 1)
				*run_ns += run;
			fclose(f);
		}
	}
	closedir(dir);
	return 0;
}

#endif
