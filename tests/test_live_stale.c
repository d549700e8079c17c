/* SPDX-License-Identifier: MIT */
/*
 * test_live_stale.c - live_remove_stale() (tools/live/live_stale.c) on a
 * directory laid out as tracefs's instances/: an hrt-PID whose PID is gone
 * or is not an hrt is removed and reported, an instance of a running hrt
 * and every other name are kept.  Needs no root: the rule is the names and
 * /proc, rmdir does the rest (tests/test_top.sh checks it on tracefs).
 */
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "unit.h"
#include "../tools/live/live.h"

static char dir[64];

static void mk(const char *fmt, long pid)
{
	char path[256], name[64];

	snprintf(name, sizeof(name), fmt, pid);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	assert_int_equal(mkdir(path, 0700), 0);
}

static int there(const char *fmt, long pid)
{
	char path[256], name[64];
	struct stat st;

	snprintf(name, sizeof(name), fmt, pid);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return stat(path, &st) == 0;
}

/* A child named "hrt" (as an hrt top is), or one that has exited. */
static pid_t child(int as_hrt)
{
	pid_t p = fork();

	if (p == 0) {
		if (as_hrt) {
			prctl(PR_SET_NAME, "hrt");
			pause();
		}
		_exit(0);
	}
	assert_true(p > 0);
	if (!as_hrt)
		assert_int_equal(waitpid(p, NULL, 0), p);
	return p;
}

static void test_stale_instances_go_live_ones_stay(void **state)
{
	pid_t gone = child(0), alive = child(1);
	char *out = NULL, path[256];
	size_t len = 0;
	FILE *f;
	int removed;

	(void)state;
	/* the alive child names itself "hrt" just after fork: wait for it */
	for (int i = 0; i < 1000; i++) {
		char buf[32] = "";
		FILE *c;

		snprintf(path, sizeof(path), "/proc/%ld/comm", (long)alive);
		if ((c = fopen(path, "r"))) {
			if (!fgets(buf, sizeof(buf), c))
				buf[0] = 0;
			fclose(c);
		}
		if (!strcmp(buf, "hrt\n"))
			break;
		usleep(1000);
	}
	snprintf(dir, sizeof(dir), "/tmp/hrt-test-stale-XXXXXX");
	assert_non_null(mkdtemp(dir));
	mk("hrt-%ld", gone);                    /* stale: the PID is gone */
	mk("hrt-%ld-3", gone);
	mk("hrt-%ld", 1);                       /* stale: PID 1 is not an hrt */
	mk("hrt-%ld", alive);                   /* kept: a running hrt */
	mk("hrt-%ld-1", alive);
	mk("hrt-x%ld", gone);                   /* kept: not hrt-PID[-N] */
	mk("hrt-%ld-", gone);
	mk("hrt-%ld-1x", gone);
	mk("hrt-0%ld", gone);
	mk("other-%ld", gone);
	mk("hrt-%ld-9", 1);                     /* stale, but cannot be removed */
	snprintf(path, sizeof(path), "%s/hrt-1-9/busy", dir);
	assert_int_equal(mkdir(path, 0700), 0);

	assert_non_null(f = open_memstream(&out, &len));
	removed = live_remove_stale(dir, "top", f);
	assert_int_equal(fclose(f), 0);
	kill(alive, SIGKILL);
	waitpid(alive, NULL, 0);

	assert_int_equal(removed, 3);
	assert_false(there("hrt-%ld", gone));
	assert_false(there("hrt-%ld-3", gone));
	assert_false(there("hrt-%ld", 1));
	assert_true(there("hrt-%ld", alive));
	assert_true(there("hrt-%ld-1", alive));
	assert_true(there("hrt-x%ld", gone));
	assert_true(there("hrt-%ld-", gone));
	assert_true(there("hrt-%ld-1x", gone));
	assert_true(there("hrt-0%ld", gone));
	assert_true(there("other-%ld", gone));
	assert_true(there("hrt-%ld-9", 1));
	/* one line per instance, naming it and why */
	snprintf(path, sizeof(path), "hrt top: removed the stale tracefs instance %s/hrt-%ld "
		 "(process %ld is gone)\n", dir, (long)gone, (long)gone);
	assert_non_null(strstr(out, path));
	snprintf(path, sizeof(path), "hrt top: removed the stale tracefs instance %s/hrt-1 "
		 "(process 1 is not an hrt)\n", dir);
	assert_non_null(strstr(out, path));
	snprintf(path, sizeof(path), "hrt top: cannot remove the stale tracefs instance "
		 "%s/hrt-1-9 (process 1 is not an hrt): ", dir);
	assert_non_null(strstr(out, path));
	free(out);
	/* a missing directory is nothing to do */
	assert_int_equal(live_remove_stale("/nonexistent/instances", "top", stderr), 0);
	{
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		assert_int_equal(system(cmd), 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stale_instances_go_live_ones_stay),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
