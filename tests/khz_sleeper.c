/* SPDX-License-Identifier: MIT */
/*
 * khz_sleeper.c - a known load for tests/test_top.sh: a task named
 * "hrt-khz-sleeper" that sleeps until the next millisecond on
 * CLOCK_MONOTONIC for ever, so the kernel runs its timer 1,000 times a
 * second (absolute deadlines: a late wake-up does not slow the rate).
 * khz_sleeper NAME names it NAME instead (a name that tries to hide from
 * the trace reader, for record --tracefs).
 */
#include <sys/prctl.h>
#include <time.h>

int main(int argc, char **argv)
{
	struct timespec t;

	prctl(PR_SET_NAME, argc > 1 ? argv[1] : "hrt-khz-sleeper");
	clock_gettime(CLOCK_MONOTONIC, &t);
	for (;;) {
		t.tv_nsec += 1000000;
		if (t.tv_nsec >= 1000000000) {
			t.tv_nsec -= 1000000000;
			t.tv_sec++;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL);
	}
}
