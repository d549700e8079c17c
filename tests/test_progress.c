/* SPDX-License-Identifier: MIT */
/*
 * test_progress.c - the progress line of `hrt replay` and `hrt convert`:
 * its text, how far a reader says it has read (memory, a plain file, a
 * compressed file through the decompressor), and that it stays silent
 * when stderr is not a terminal.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "unit.h"

#include "../tools/trace/progress.h"
#include "../tools/trace/trace.h"

static void test_line_with_total_says_percent_rate_and_time_left(void **state)
{
	char buf[160];

	(void)state;
	progress_format(buf, sizeof(buf), 450000000, 1000000000, 3400000, 18.0);
	assert_string_equal(buf, "45 % of 1.0 GB, 3.4 M events, 25.0 MB/s, 22 s left");
	progress_format(buf, sizeof(buf), 1000, 1000, 10, 1.0);
	assert_string_equal(buf, "100 % of 1.0 kB, 10 events, 1.0 kB/s");
}

static void test_line_without_total_says_bytes_and_rate(void **state)
{
	char buf[160];

	(void)state;
	progress_format(buf, sizeof(buf), 120000000, 0, 999, 4.0);
	assert_string_equal(buf, "120.0 MB, 999 events, 30.0 MB/s");
}

static void read_all(struct trace_reader *r)
{
	struct trace_event ev;
	int k;

	while ((k = trace_next(r, &ev)) > 0)
		;
	assert_int_equal(k, 0);
}

static const char v1[] = "# hrt-trace v1\n0 0 start 1 5 10\n20 0 idle\n";

static void test_reader_counts_bytes_of_memory_and_files(void **state)
{
	struct trace_reader *r;
	uint64_t done, total;
	char path[] = "/tmp/hrt-test-progress-XXXXXX";
	const char *err;
	int fd;

	(void)state;
	assert_int_equal(trace_open_mem(&r, v1, strlen(v1), "m", 0, TRACE_AUTO), 0);
	trace_progress(r, &done, &total);
	assert_int_equal(done, 0);
	assert_int_equal(total, strlen(v1));
	read_all(r);
	trace_progress(r, &done, &total);
	assert_int_equal(done, strlen(v1));
	trace_close(r);
	assert_true((fd = mkstemp(path)) >= 0);
	assert_int_equal(write(fd, v1, strlen(v1)), (ssize_t)strlen(v1));
	close(fd);
	assert_int_equal(trace_open(&r, path, 0, TRACE_AUTO, &err), 0);
	read_all(r);
	trace_progress(r, &done, &total);
	assert_int_equal(done, strlen(v1));
	assert_int_equal(total, strlen(v1));
	trace_close(r);
	unlink(path);
}

/* A compressed file: both figures count compressed bytes, and at the end
 * the decompressor has read all of them. */
static void test_reader_counts_compressed_bytes(void **state)
{
	struct trace_reader *r;
	uint64_t done, total;
	const char *err;
	char cmd[256], path[] = "/tmp/hrt-test-progress-XXXXXX";
	FILE *f;
	int fd;

	(void)state;
	assert_true((fd = mkstemp(path)) >= 0);
	close(fd);
	snprintf(cmd, sizeof(cmd), "gzip -c > %s", path);
	assert_non_null(f = popen(cmd, "w"));
	for (int i = 0; i < 2000; i++)
		fprintf(f, "%d 0 start %d %d %d\n", i * 10, i, i * 10 + 5, i * 10 + 9);
	assert_int_equal(pclose(f), 0);
	assert_int_equal(trace_open(&r, path, 0, TRACE_AUTO, &err), 0);
	read_all(r);
	trace_progress(r, &done, &total);
	assert_true(total > 0 && total < 2000 * 10);        /* compressed */
	assert_int_equal(done, total);
	trace_close(r);
	unlink(path);
}

/* Not a terminal (the test's stderr is a log file): nothing is shown. */
static void test_silent_when_stderr_is_not_a_terminal(void **state)
{
	struct progress p;
	struct trace_reader *r;

	(void)state;
	if (isatty(STDERR_FILENO)) {
		print_message("SKIP: stderr is a terminal here (install nothing: run under make)\n");
		return;
	}
	progress_start(&p, "replay", "x", 0);
	assert_false(p.on);
	assert_int_equal(trace_open_mem(&r, v1, strlen(v1), "m", 0, TRACE_AUTO), 0);
	for (int i = 0; i < 100000; i++)
		progress_tick(&p, r, (uint64_t)i);
	assert_false(p.shown);
	trace_close(r);
	progress_start(&p, "replay", "x", 1);
	assert_false(p.on);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_line_with_total_says_percent_rate_and_time_left),
		cmocka_unit_test(test_line_without_total_says_bytes_and_rate),
		cmocka_unit_test(test_reader_counts_bytes_of_memory_and_files),
		cmocka_unit_test(test_reader_counts_compressed_bytes),
		cmocka_unit_test(test_silent_when_stderr_is_not_a_terminal),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
