/* SPDX-License-Identifier: MIT */
/*
 * live_stale.c - removes the tracefs instances an hrt left behind.  An
 * hrt that traces (top, record --tracefs, slack --measure) names its
 * instance hrt-PID (or hrt-PID-N) and removes it on every way out it
 * controls; SIGKILL, a crash or the OOM killer leave it tracing for ever.
 * Such an instance is provably stale when its PID is gone or is not an hrt
 * (its /proc/PID/comm is not "hrt": the PID was reused), and the next
 * tracer removes it and says so.  An instance of a running hrt is left
 * alone, and so is every name not of that form.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "live.h"

/* The PID of an hrt-PID or hrt-PID-N name, or 0. */
static long instance_pid(const char *name)
{
	const char *p = name + 4;
	char *end;
	long pid;

	if (strncmp(name, "hrt-", 4) || *p < '1' || *p > '9')
		return 0;
	errno = 0;
	pid = strtol(p, &end, 10);
	if (errno || pid <= 0 || pid > 0x3fffffff)
		return 0;
	if (*end == '-') {
		p = end + 1;
		if (*p < '0' || *p > '9')
			return 0;
		while (*p >= '0' && *p <= '9')
			p++;
		end = (char *)p;
	}
	return *end ? 0 : pid;
}

/* NULL when PID is a running hrt, else why its instance is stale. */
static const char *stale_why(long pid)
{
	char path[64], comm[32];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%ld/comm", pid);
	if (!(f = fopen(path, "re")))
		return errno == ENOENT ? "is gone" : NULL;     /* unsure: keep it */
	n = fread(comm, 1, sizeof(comm) - 1, f);
	fclose(f);
	comm[n] = 0;
	comm[strcspn(comm, "\n")] = 0;
	return strcmp(comm, "hrt") ? "is not an hrt" : NULL;
}

int live_remove_stale(const char *instances, const char *who, FILE *report)
{
	DIR *d = opendir(instances);
	struct dirent *e;
	int removed = 0;

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		char path[4096];
		const char *why;
		long pid = instance_pid(e->d_name);

		if (!pid || !(why = stale_why(pid)))
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", instances, e->d_name) >= (int)sizeof(path))
			continue;
		if (rmdir(path)) {
			fprintf(report, "hrt %s: cannot remove the stale tracefs instance %s (process "
				"%ld %s): %s\n", who, path, pid, why, strerror(errno));
			continue;
		}
		fprintf(report, "hrt %s: removed the stale tracefs instance %s (process %ld %s)\n",
			who, path, pid, why);
		removed++;
	}
	closedir(d);
	return removed;
}
