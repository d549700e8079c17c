/* SPDX-License-Identifier: MIT */
/*
 * test_verify.c - what `make VERIFY=1` builds in (src/verify.h): a base
 * layer function whose precondition is "lock held", called without the
 * lock, aborts with "base lock not held"; a timer set left broken by
 * whatever corrupted it aborts at the next change of the set, with the
 * rule hrt__tset_check names; a timer freed while queued is found when
 * hrt_base_free refuses its base.  In a release build the same calls run to
 * the end (the checks compile to nothing, so the library never prints or
 * aborts: hrt.h).  Each case runs in a forked child, its stderr captured.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "unit.h"
#include "clock.h"

/* Runs fn in a child: its exit status (wait) and its stderr into buf. */
static int in_child(void (*fn)(void), char *buf, size_t len)
{
	int fds[2], status;
	ssize_t n, got = 0;
	pid_t p;

	assert_int_equal(pipe(fds), 0);
	p = fork();
	assert_true(p >= 0);
	if (p == 0) {
		dup2(fds[1], 2);
		close(fds[0]);
		fn();
		_exit(0);
	}
	close(fds[1]);
	while (got < (ssize_t)len - 1 && (n = read(fds[0], buf + got, len - 1 - (size_t)got)) > 0)
		got += n;
	buf[got] = '\0';
	close(fds[0]);
	assert_int_equal(waitpid(p, &status, 0), p);
	return status;
}

/* Under VERIFY the child aborted with `needle` on stderr; in a release
 * build it ran to the end, silent. */
static void expect_verify_abort(int st, const char *err, const char *needle)
{
#ifdef HRT_VERIFY
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT);
	assert_non_null(strstr(err, needle));
#else
	(void)needle;
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_string_equal(err, "");
#endif
}

static enum hrt_restart nop(struct hrt_timer *t, hrt_time_t now)
{
	(void)t, (void)now;
	return HRT_NORESTART;
}

/* hrt__base_next: "lock held" (wakeup.c), called with no lock. */
static void next_without_lock(void)
{
	struct hrt_base *b;

	if (hrt_base_new(&b, CLOCK_MONOTONIC, 0))
		_exit(3);
	(void)hrt__base_next(b);
}

static void test_verify_catches_a_lock_held_call_without_the_lock(void **s)
{
	char err[512];
	int st = in_child(next_without_lock, err, sizeof(err));

	(void)s;
	expect_verify_abort(st, err, "src/wakeup.c");
	expect_verify_abort(st, err, "base lock not held by this thread");
}

/* Three tree timers; the root's least-soft word is then made a lie, and a
 * start of another timer changes the set. */
static void start_after_corruption(void)
{
	static struct hrt_timer t[4];
	struct hrt_base *b;

	if (hrt_base_new(&b, CLOCK_MONOTONIC, HRT_BASE_VIRTUAL))
		_exit(3);
	for (int i = 0; i < 4; i++)
		hrt_timer_init(&t[i], nop);
	for (int i = 0; i < 3; i++)
		if (hrt_timer_start(&t[i], b, 1000 + i, HRT_MODE_ABS))
			_exit(4);
	for (int i = 0; i < 3; i++)             /* every node: the root among them */
		t[i].hrt__subtree_soft = 5000;
	if (hrt_timer_start(&t[3], b, 2000, HRT_MODE_ABS))
		_exit(5);
}

static void test_verify_catches_a_broken_set_at_its_next_change(void **s)
{
	char err[512];
	int st = in_child(start_after_corruption, err, sizeof(err));

	(void)s;
	expect_verify_abort(st, err, "hrt VERIFY: src/base.c:");
}

/* A connection freed without cancelling its timers (hrt.h: cancel every
 * queued timer before freeing it), then the program ends and frees the
 * base: hrt_base_free refuses (-EBUSY) and, on a61a9b3, nothing ever
 * looked at the freed timers.  Under VERIFY it checks them: free()
 * wrote over a timer's first words (glibc's free list), or ASan
 * (SANITIZE=1) reports the check's read of freed memory. */
struct conn {
	struct hrt_timer idle, heartbeat;
	char buf[64];
};

static void free_base_after_freeing_queued_timers(void)
{
	struct hrt_base *b;
	struct conn *c[4];

	if (hrt_base_new(&b, CLOCK_MONOTONIC, HRT_BASE_VIRTUAL))
		_exit(3);
	for (int i = 0; i < 4; i++) {
		c[i] = malloc(sizeof(*c[i]));
		if (!c[i])
			_exit(4);
		hrt_timer_init(&c[i]->idle, nop);
		hrt_timer_init(&c[i]->heartbeat, nop);
		/* a near one in the tree, a far one in the wheel */
		if (hrt_timer_start(&c[i]->idle, b, 10000000000LL + i, HRT_MODE_ABS) ||
		    hrt_timer_start(&c[i]->heartbeat, b, 1000 + i, HRT_MODE_ABS))
			_exit(5);
	}
	free(c[1]);             /* closed, its timers not cancelled */
	if (hrt_base_free(b) != -EBUSY)
		_exit(6);
}

static void test_verify_finds_a_freed_queued_timer_at_base_free(void **s)
{
	char err[2048];
	int st = in_child(free_base_after_freeing_queued_timers, err, sizeof(err));

	(void)s;
#ifdef HRT_VERIFY
	/* Aborted by the check, or ended by ASan's report (exit 1). */
	assert_false(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_true(strstr(err, "hrt_base_free of a base with queued timers") ||
		    strstr(err, "heap-use-after-free"));
#else
	/* Nothing looks at the timers: -EBUSY, silent. */
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_string_equal(err, "");
#endif
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_verify_catches_a_lock_held_call_without_the_lock),
		cmocka_unit_test(test_verify_catches_a_broken_set_at_its_next_change),
		cmocka_unit_test(test_verify_finds_a_freed_queued_timer_at_base_free),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
