/* SPDX-License-Identifier: MIT */
/*
 * slack_probe.c - a known process for tests/test_run_slack.sh, named NAME
 * (its comm):
 *   slack_probe NAME report   prints the timer slack of its main thread, of
 *                             a thread it starts and of a child it forks
 *                             ("main N", "thread N", "child N"), then exits;
 *   slack_probe NAME          starts two threads named NAME-w, prints
 *                             "ready", and sleeps until killed.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static void *report(void *arg)
{
	(void)arg;
	printf("thread %d\n", prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0));
	return NULL;
}

static void *idle(void *name)
{
	char n[16];

	snprintf(n, sizeof(n), "%.13s-w", (const char *)name);
	prctl(PR_SET_NAME, n);
	for (;;)
		pause();
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[2];
	pid_t pid;
	int st;

	if (argc < 2)
		return 2;
	prctl(PR_SET_NAME, argv[1]);
	if (argc > 2 && !strcmp(argv[2], "report")) {
		printf("main %d\n", prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0));
		fflush(stdout);
		if (pthread_create(&t[0], NULL, report, NULL) || pthread_join(t[0], NULL))
			return 1;
		fflush(stdout);
		if ((pid = fork()) == 0) {
			printf("child %d\n", prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0));
			fflush(stdout);
			_exit(0);
		}
		return pid < 0 || waitpid(pid, &st, 0) != pid || st;
	}
	for (int i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, idle, argv[1]))
			return 1;
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}
