/* SPDX-License-Identifier: MIT */
/*
 * slack_sleepers.c - a known load for the measurement test of hrt slack
 * (tests/test_slack_measure.sh): `slack_sleepers NAME CPU N SEED` forks N
 * processes named NAME, pinned to CPU, each sleeping a period drawn from
 * 1-10 ms (relative clock_nanosleep, so a late wake-up delays every later
 * one: the kernel traces mode=REL) after a random phase; prints their PIDs
 * on one line and waits.  The children die with the parent.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

static void sleep_ns(long ns)
{
	struct timespec t = { ns / 1000000000, ns % 1000000000 };

	while (clock_nanosleep(CLOCK_MONOTONIC, 0, &t, &t))
		;
}

static void sleeper(const char *name, int cpu, long period, long phase)
{
	cpu_set_t set;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	prctl(PR_SET_NAME, name);
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		_exit(1);
	sleep_ns(phase);
	for (;;)
		sleep_ns(period);
}

int main(int argc, char **argv)
{
	int n, cpu;

	if (argc != 5 || (n = atoi(argv[3])) < 1 || n > 64) {
		fprintf(stderr, "usage: slack_sleepers NAME CPU N SEED\n");
		return 2;
	}
	cpu = atoi(argv[2]);
	srand((unsigned)atoi(argv[4]));
	for (int i = 0; i < n; i++) {
		long period = 1000000 + (long)(rand() % 9001) * 1000;  /* 1-10 ms */
		long phase = (long)(rand() % 10000) * 1000;
		pid_t pid = fork();

		if (pid < 0)
			return 1;
		if (pid == 0)
			sleeper(argv[1], cpu, period, phase);
		printf("%s%d", i ? " " : "", (int)pid);
	}
	printf("\n");
	fflush(stdout);
	for (;;)
		pause();
}
