/* SPDX-License-Identifier: MIT */
/*
 * test_trace.c - the trace readers on bad input: every case must fail with
 * "NAME:LINE: what was expected", and --lenient must skip and count it.
 * Also the command line: exit status 2 and nothing on stdout, compressed
 * input, a failing decompressor, stdin.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include "unit.h"

#include "../tools/replay/replay.h"
#include "../tools/common/text.h"

#define PS(t, ev, rest) "  a 1 [000] " t ": " ev ": " rest "\n"
/* A tracefs text line (the kernel's trace file). */
#define TF(t, ev, rest) "  a-1 [000] d..1. " t ": " ev ": " rest "\n"
#define START1 PS("1.000000000", "timer:hrtimer_start", \
		  "hrtimer=0xa function=f expires=1000010000 softexpires=1000005000 mode=0x0")

static const struct bad {
	const char *text;
	size_t len;             /* 0: strlen */
	long line;
	const char *what;
} bad[] = {
	{ "# hrt-trace v1\n0 0 start 1 5 10\n5 0 sart 1\n", 0, 3, "unknown event" },
	{ "# hrt-trace v1\n0 0 start 1 5\n", 0, 2, "expected 'T CPU start ID SOFT HARD'" },
	{ "# hrt-trace v1\n0 0 start 1 5 10 11\n", 0, 2, "expected 'T CPU start" },
	{ "# hrt-trace v1\nx 0 idle\n", 0, 2, "field 1 (T) 'x': expected a time in ns" },
	{ "# hrt-trace v1\n10 0 idle\n5 0 busy\n", 0, 3, "goes backwards" },
	{ "# hrt-trace v1\n0 0 start 1 20 10\n", 0, 2, "soft expiry 20 after hard expiry 10" },
	{ "# hrt-trace v1\n0 0 start 1 5 10\n3 0 cancel 2\n", 0, 3, "no earlier start" },
	{ "# hrt-trace v1\n0 0 start 1 5 10\n3 0 cancel", 0, 3, "truncated last line" },
	{ "# hrt-trace v1\n0 0 idle\n\x01\x02\xff\x00zz\n", 31, 3, "binary data" },
	{ "# hrt-trace v1\n0 9999 idle\n", 0, 2, "out of range" },
	/* Errors name the field, so a user finds it in a long line. */
	{ "# hrt-trace v1\n0 0 start A x9 10\n", 0, 2,
	  "field 5 (SOFT) 'x9': expected a soft expiry in ns" },
	{ "# hrt-trace v1\n0 0 start A 1 -3\n", 0, 2, "field 6 (HARD) '-3': expected a hard expiry" },
	{ "# hrt-trace v1\n0 x1 idle\n", 0, 2, "field 2 (CPU) 'x1': expected a CPU number" },
	{ "# hrt-trace v1\n0 0 start A 1 2\n1 0 cancel B\n", 0, 3,
	  "field 4 (ID) 'B': cancel of an id that no earlier start armed" },
	/* Above INT64_MAX is an error, not silently INT64_MAX. */
	{ "# hrt-trace v1\n0 0 start A 5 9223372036854775808\n", 0, 2,
	  "field 6 (HARD) '9223372036854775808': above INT64_MAX" },
	{ "# hrt-trace v1\n99999999999999999999999 0 idle\n", 0, 2, "field 1 (T) '9999" },
	{ "", 0, 0, "no trace events" },
	{ "# hrt-trace v1\n# only comments\n", 0, 2, "no trace events" },
	{ "\x7f" "ELF\x02\x01\x01", 7, 1, "binary data" },
	{ "hello world\n", 0, 1, "expected a '# hrt-trace v1' header" },
	{ START1 PS("0.5", "sched:sched_switch", "prev_pid=1 ==> next_pid=0"), 0, 2, "goes backwards" },
	{ PS("1.0", "timer:hrtimer_start", "hrtimer=0xa function=f expires=10 softexpires=20 mode=0"),
	  0, 1, "soft expiry 20 after hard expiry 10" },
	{ PS("1.0", "timer:hrtimer_start", "hrtimer=0xa function=f softexpires=20"), 0, 1,
	  "expected expires=NS" },
	{ PS("1.0", "timer:hrtimer_cancel", "hrtimer=zz"), 0, 1, "expected hrtimer=ADDRESS" },
	{ PS("1.0", "timer:hrtimer_expire_entry", "hrtimer=0xa function=f"), 0, 1, "expected now=NS" },
	{ PS("1.0", "sched:sched_switch", "prev_pid=1 ==> next_comm=x"), 0, 1, "expected next_pid=PID" },
	{ START1 "  a 1 [000] 1.000" "\n", 0, 2, "expected a perf script line" },
	{ START1 PS("1.000000002", "timer:hrtimer_start",
		    "hrtimer=0xa function=other expires=1000010000 softexpires=1000005000 mode=0x0"),
	  0, 2, "id reused inconsistently" },
	{ START1 PS("1.000000002", "timer:hrtimer_expire_entry", "hrtimer=0xa function=g now=1"),
	  0, 2, "id reused inconsistently" },
	{ START1 "  a 1 [000] 1.000000003: timer:hrtimer_cancel: hrtim", 0, 2, "truncated last line" },
	/* tracefs text: the same events without the subsystem */
	{ TF("1.000001", "hrtimer_start", "hrtimer=0000000012345678 function=f softexpires=20"), 0, 1,
	  "expected expires=NS" },
	{ TF("1.000001", "hrtimer_cancel", "hrtimer=zz"), 0, 1, "expected hrtimer=ADDRESS" },
	{ TF("1.000001", "hrtimer_cancel", "hrtimer=1") "  a-1 [000] d..1. 1.00000x: hrtimer_cancel: "
	  "hrtimer=1\n", 0, 2, "expected a tracefs line" },
	{ TF("2.000001", "hrtimer_cancel", "hrtimer=1") TF("1.000001", "hrtimer_cancel", "hrtimer=1"),
	  0, 2, "goes backwards" },
	{ TF("1.000001", "hrtimer_cancel", "hrtimer=1") "  a-1 [9999] d..1. 1.000002: hrtimer_cancel: "
	  "hrtimer=1\n", 0, 2, "out of range" },
};

static void test_bad_input(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const struct bad *b = &bad[i];
		size_t len = b->len ? b->len : strlen(b->text);
		struct trace_reader *r;
		struct replay_result res;
		char want[64];

		for (int lenient = 0; lenient < 2; lenient++) {
			int k;

			assert_int_equal(trace_open_mem(&r, b->text, len, "in", lenient, TRACE_AUTO), 0);
			k = replay_trace(r, REPLAY_ALL, &res);
			snprintf(want, sizeof(want), "in:%ld: ", b->line);
			if (!lenient || !strcmp(b->what, "no trace events")) {
				if (k != -1 || strncmp(trace_error(r), want, strlen(want)) ||
				    !strstr(trace_error(r), b->what)) {
					fprintf(stderr, "case %zu (lenient %d): k=%d err='%s', want '%s...%s'\n",
						i, lenient, k, trace_error(r), want, b->what);
					fail();
				}
			} else if (k == 0) {
				/* skipped: the bad line is counted */
				assert_int_equal(res.bad_lines, 1);
			} else {
				/* only the bad line had events: no events left */
				assert_non_null(strstr(trace_error(r), "no trace events"));
			}
			trace_close(r);
		}
	}
}

/* Detection: v1 with and without header, perf with and without --ns. */
static void test_detection(void **state)
{
	struct trace_reader *r;
	struct replay_result res;
	const char *v1 = "0 0 start 1 5 10\n20 0 idle\n";
	const char *us = PS("1.000000", "timer:hrtimer_start",
			    "hrtimer=0xa function=f expires=1000010000 softexpires=1000005000 mode=0x0")
			 PS("1.000020", "sched:sched_switch", "prev_comm=x prev_pid=3 ==> next_comm=y next_pid=4");

	(void)state;
	assert_int_equal(trace_open_mem(&r, v1, strlen(v1), "v1", 0, TRACE_AUTO), 0);
	assert_int_equal(replay_trace(r, REPLAY_ALL, &res), 0);
	assert_int_equal(res.format, TRACE_V1);
	assert_int_equal(res.pol[RP_OFF].wakeups, 1);
	trace_close(r);
	assert_int_equal(trace_open_mem(&r, us, strlen(us), "us", 0, TRACE_AUTO), 0);
	assert_int_equal(replay_trace(r, REPLAY_ALL, &res), 0);
	assert_int_equal(res.format, TRACE_PERF);
	/* µs timestamps: the switch at 1.000020 s is after the hard expiry */
	assert_int_equal(res.pol[RP_OFF].wakeups, 1);
	assert_int_equal(res.pol[RP_OFF].expired_busy, 0);
	trace_close(r);
}

/* More than 1,024 distinct ids: trace_close frees the ids by chunk (it
 * once freed them by id count and crashed).  10^5 ids, each started once. */
static void test_many_ids(void **state)
{
	const int n = 100000;
	size_t cap = (size_t)n * 48 + 64, len = 0;
	char *buf = malloc(cap);
	struct trace_reader *r;
	struct replay_result res;

	(void)state;
	assert_non_null(buf);
	len += (size_t)snprintf(buf + len, cap - len, "# hrt-trace v1\n");
	for (int i = 0; i < n; i++)
		len += (size_t)snprintf(buf + len, cap - len, "%d 0 start %d %d %d\n",
					i, i + 1, i + 1000, i + 2000);
	assert_int_equal(trace_open_mem(&r, buf, len, "many", 0, TRACE_AUTO), 0);
	assert_int_equal(replay_trace(r, REPLAY_ALL, &res), 0);
	assert_int_equal(trace_get_counts(r)->timers, n);
	trace_close(r);
	free(buf);
}

/* v1 ids are opaque: any run of non-blanks, interned; the token comes back
 * from trace_id_name().  `1` and `0x1` are two timers. */
static void test_opaque_ids(void **state)
{
	const char *v1 = "# hrt-trace v1\n"
			 "0 0 start A 5 10\n"
			 "1 0 start conn42 5 20\n"
			 "2 1 start 0xffff8880abcd0000 30 40\n"
			 "3 0 start 1 30 40\n"
			 "4 0 start 0x1 30 40\n"
			 "5 0 cancel conn42\n"
			 "6 0 start A 50 60\n"
			 "7 0 start h\xc3\xa9\xff 70 80\n";
	const char *want[] = { "A", "conn42", "0xffff8880abcd0000", "1", "0x1", "conn42", "A",
			       "h\xc3\xa9\\xff" };
	struct trace_reader *r;
	struct trace_event ev;
	struct replay_result res;
	size_t i = 0;
	int k;

	(void)state;
	assert_int_equal(trace_open_mem(&r, v1, strlen(v1), "ids", 0, TRACE_AUTO), 0);
	while ((k = trace_next(r, &ev)) > 0) {
		assert_true(i < sizeof(want) / sizeof(want[0]));
		if (strcmp(trace_id_name(r, ev.id), want[i])) {
			fprintf(stderr, "event %zu: id '%s', want '%s'\n", i,
				trace_id_name(r, ev.id), want[i]);
			fail();
		}
		i++;
	}
	assert_int_equal(k, 0);
	assert_int_equal(i, sizeof(want) / sizeof(want[0]));
	assert_int_equal(trace_get_counts(r)->timers, 6);
	trace_close(r);
	assert_int_equal(trace_open_mem(&r, v1, strlen(v1), "ids", 0, TRACE_AUTO), 0);
	assert_int_equal(replay_trace(r, REPLAY_ALL, &res), 0);
	assert_int_equal(res.timers, 6);
	assert_int_equal(res.cancels, 1);
	trace_close(r);
}

/* Function names are valid UTF-8 and are cut without splitting a
 * character, so every output format stays valid. */
static void test_utf8_names(void **state)
{
	const char *p = PS("1.0", "timer:hrtimer_start",
			   "hrtimer=0xa function=f\xff\xc3(\xe2\x82 expires=10 softexpires=5 mode=0")
			PS("1.1", "timer:hrtimer_start",
			   "hrtimer=0xb function=caf\xc3\xa9\xed\xa0\x80 expires=10 softexpires=5 mode=0");
	struct trace_reader *r;
	struct trace_event ev;

	(void)state;
	assert_int_equal(trace_open_mem(&r, p, strlen(p), "utf8", 0, TRACE_AUTO), 0);
	assert_int_equal(trace_next(r, &ev), 1);
	assert_string_equal(trace_fn_name(r, ev.fn), "f\\xff\\xc3(\\xe2\\x82");
	assert_string_equal(trace_id_name(r, ev.id), "0xa");
	assert_int_equal(trace_next(r, &ev), 1);
	/* a UTF-16 surrogate encoded in UTF-8 is not valid UTF-8 */
	assert_string_equal(trace_fn_name(r, ev.fn), "caf\xc3\xa9\\xed\\xa0\\x80");
	trace_close(r);
	assert_int_equal(text_utf8_prefix("caf\xc3\xa9", 4), 3);
	assert_int_equal(text_utf8_prefix("caf\xc3\xa9", 5), 5);
	assert_int_equal(text_utf8_prefix("\xe2\x82\xac\xe2\x82\xac", 5), 3);
	assert_int_equal(text_utf8_prefix("abc", 63), 3);
}

/* --lenient skips an over-long line wherever it falls in the buffer
 * (memory here; files, pipes and .xz in test_cli.sh). */
static void test_long_line(void **state)
{
	const size_t sizes[] = { 65537, 100000, 300000 };

	(void)state;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		const char *head = "# hrt-trace v1\n0 0 start 1 5 10\n", *tail = "\n20 0 idle\n";
		size_t len = strlen(head) + sizes[i] + strlen(tail);
		char *buf = malloc(len + 1);
		struct trace_reader *r;
		struct replay_result res;

		assert_non_null(buf);
		strcpy(buf, head);
		memset(buf + strlen(head), 'x', sizes[i]);
		strcpy(buf + strlen(head) + sizes[i], tail);
		assert_int_equal(trace_open_mem(&r, buf, len, "long", 0, TRACE_AUTO), 0);
		assert_int_equal(replay_trace(r, REPLAY_ALL, &res), -1);
		assert_non_null(strstr(trace_error(r), "long:3: line longer than"));
		trace_close(r);
		assert_int_equal(trace_open_mem(&r, buf, len, "long", 1, TRACE_AUTO), 0);
		assert_int_equal(replay_trace(r, REPLAY_ALL, &res), 0);
		assert_int_equal(res.bad_lines, 1);
		assert_int_equal(res.events, 2);
		trace_close(r);
		free(buf);
	}
}

static int sh(const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The command line: exit 2, FILE:LINE on stderr, nothing on stdout. */
static void test_cli(void **state)
{
	const char *hrt = getenv("HRT");
	char dir[] = "/tmp/hrt-test-trace-XXXXXX";

	(void)state;
	if (!hrt)
		hrt = "build/hrt";
	assert_non_null(mkdtemp(dir));
	assert_int_equal(sh("printf '# hrt-trace v1\\n0 0 start 1 5 10\\n2 0 bogus\\n' > %s/bad", dir), 0);
	assert_int_equal(sh("%s replay %s/bad > %s/out 2> %s/err", hrt, dir, dir, dir), 2);
	assert_int_equal(sh("test ! -s %s/out", dir), 0);
	assert_int_equal(sh("grep -q '^hrt replay: %s/bad:3: field 3 (event) .bogus.: unknown event' %s/err", dir, dir), 0);
	/* a good file before the bad one: still nothing on stdout */
	assert_int_equal(sh("printf '0 0 start 1 5 10\\n20 0 idle\\n' > %s/good", dir), 0);
	assert_int_equal(sh("%s replay --json %s/good %s/bad > %s/out 2>/dev/null", hrt, dir, dir, dir), 2);
	assert_int_equal(sh("test ! -s %s/out", dir), 0);
	/* --lenient: skips and says how many */
	assert_int_equal(sh("%s replay --lenient --json %s/bad > %s/out 2> %s/err", hrt, dir, dir, dir), 0);
	assert_int_equal(sh("grep -q '\"lines_skipped\": 1' %s/out", dir), 0);
	assert_int_equal(sh("grep -q 'skipped 1 bad lines' %s/err", dir), 0);
	/* convert: no half-written output file */
	assert_int_equal(sh("%s convert -o %s/conv %s/bad 2>/dev/null", hrt, dir, dir), 2);
	assert_int_equal(sh("test ! -e %s/conv", dir), 0);
	/* gzip and xz input, stdin, and a truncated xz file */
	assert_int_equal(sh("gzip -c %s/good > %s/good.gz && %s replay --csv %s/good.gz | grep -q ',off,2,1,1,1,0,1,1,1,'",
			    dir, dir, hrt, dir), 0);
	assert_int_equal(sh("%s replay --csv - < %s/good | grep -q '^-,off,'", hrt, dir), 0);
	assert_int_equal(sh("head -c 60 data/trace.hrt.xz > %s/cut.xz", dir), 0);
	assert_int_equal(sh("%s replay %s/cut.xz > %s/out 2> %s/err", hrt, dir, dir, dir), 2);
	assert_int_equal(sh("test ! -s %s/out && grep -q 'xz -dc' %s/err", dir, dir), 0);
	assert_int_equal(sh("%s replay /nonexistent 2>/dev/null", hrt), 2);
	sh("rm -rf %s", dir);
}

/* tracefs text: the hand-written sample and the real one (recorded with
 * `hrt record --tracefs`), and trace-cmd's lines without FLAGS. */
static void test_tracefs(void **state)
{
	struct trace_reader *r;
	struct replay_result res;
	struct trace_event ev;
	const char *err;
	const char *tc = "cpus=2\n"
			 "     my app-12    [001]  5.000100: hrtimer_start:  hrtimer=0xffff8880aa function="
			 "hrtimer_wakeup expires=5000200000 softexpires=5000150000 mode=ABS\n"
			 "     <idle>-0     [001]  5.000201: hrtimer_expire_entry: hrtimer=0xffff8880aa "
			 "function=hrtimer_wakeup now=5000200100\n";
	int pids[16], n = 0;

	(void)state;
	assert_int_equal(trace_open(&r, "tests/data/tracefs-small.txt", 0, TRACE_AUTO, &err), 0);
	while (trace_next(r, &ev) > 0 && n < 16)
		pids[n++] = ev.pid;
	assert_int_equal(trace_finish(r), 0);
	assert_int_equal(trace_get_format(r), TRACE_TRACEFS);
	assert_int_equal(n, 10);        /* 11 events, one cancel+expire pair */
	assert_int_equal(pids[0], 100);
	assert_int_equal(pids[1], 7);
	assert_int_equal(pids[4], 0);   /* <idle>-0 */
	assert_int_equal(trace_get_counts(r)->pairs_merged, 1);
	assert_int_equal(trace_clock_suspect(r), 0);
	trace_close(r);

	assert_int_equal(trace_open_mem(&r, tc, strlen(tc), "tc", 0, TRACE_AUTO), 0);
	assert_int_equal(trace_next(r, &ev), 1);
	assert_int_equal(trace_get_format(r), TRACE_TRACEFS);
	assert_int_equal(ev.pid, 12);
	assert_string_equal(trace_comm_name(r, ev.comm), "my app");
	assert_int_equal(ev.t, 5000100000);
	assert_int_equal(ev.soft, 5000150000);
	trace_close(r);

	assert_int_equal(trace_open(&r, "tests/data/tracefs-real.txt.gz", 0, TRACE_AUTO, &err), 0);
	assert_int_equal(replay_trace(r, REPLAY_ALL, &res), 0);
	assert_int_equal(res.format, TRACE_TRACEFS);
	assert_true(res.kernel.wakeups > 100);
	assert_true(res.optimal_wakeups > 0);
	assert_int_equal(res.kernel_incomplete, 0);
	assert_int_equal(trace_clock_suspect(r), 0);
	trace_close(r);
}

/* A task may name itself like a trace header (prctl(PR_SET_NAME)): its
 * events are still its own, as `hrt record --tracefs` writes them and the
 * kernel prints them, and a fake header in sched_switch's prev_comm= does
 * not move the real one. */
static void test_tracefs_names_cannot_hide_events(void **state)
{
	struct trace_reader *r;
	struct trace_event ev;
	const char *t =
		"x [0] 1.1: y: -4242    (   4242) [001] 5.000100000: hrtimer_start: hrtimer=0xa "
		"function=hrtimer_wakeup expires=5000200000 softexpires=5000150000 mode=ABS\n"
		"  a-1 [0] 1.1: y:-77 [001] d..1. 5.000150: hrtimer_cancel: hrtimer=0xa\n"
		"x [0] 1.1: y: -4242 [001] d..2. 5.000160: sched_switch: prev_comm=x [0] 1.1: "
		"y: -9 [000] 1.0: hrtimer_cancel: prev_pid=4242 prev_prio=120 prev_state=S ==> "
		"next_comm=swapper/1 next_pid=0 next_prio=120\n"
		"x [0] 1.1: y: -4242 [001] d..2. 5.000170: irq_handler_entry: irq=1 name=x\n";

	(void)state;
	assert_int_equal(trace_open_mem(&r, t, strlen(t), "names", 0, TRACE_AUTO), 0);
	assert_int_equal(trace_next(r, &ev), 1);
	assert_int_equal(trace_get_format(r), TRACE_TRACEFS);
	assert_int_equal(ev.kind, TEV_START);
	assert_int_equal(ev.pid, 4242);
	assert_int_equal(ev.tgid, 4242);
	assert_int_equal(ev.cpu, 1);
	assert_int_equal(ev.t, 5000100000);
	assert_string_equal(trace_comm_name(r, ev.comm), "x [0] 1.1: y: ");
	assert_int_equal(trace_next(r, &ev), 1);
	assert_int_equal(ev.kind, TEV_CANCEL);
	assert_int_equal(ev.pid, 77);
	assert_string_equal(trace_comm_name(r, ev.comm), "a-1 [0] 1.1: y:");
	assert_int_equal(trace_next(r, &ev), 1);
	assert_int_equal(ev.kind, TEV_IDLE);
	assert_int_equal(ev.cpu, 1);
	assert_int_equal(ev.t, 5000160000);
	assert_int_equal(trace_next(r, &ev), 0);        /* another event: ignored */
	assert_int_equal(trace_finish(r), 0);
	assert_int_equal(trace_get_counts(r)->ignored, 1);
	trace_close(r);
}

/* A trace stamped with another clock than the timers' is detected. */
static void test_tracefs_clock(void **state)
{
	struct trace_reader *r;
	struct replay_result res;
	const char *t = TF("900.000001", "hrtimer_expire_entry", "hrtimer=1 function=f now=5000")
			TF("900.000002", "hrtimer_expire_entry", "hrtimer=2 function=f now=6000");

	(void)state;
	assert_int_equal(trace_open_mem(&r, t, strlen(t), "clk", 0, TRACE_AUTO), 0);
	assert_int_equal(replay_trace(r, REPLAY_ALL, &res), 0);
	assert_int_equal(trace_clock_suspect(r), 1);
	trace_close(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_detection),
		cmocka_unit_test(test_cli),
		cmocka_unit_test(test_many_ids),
		cmocka_unit_test(test_opaque_ids),
		cmocka_unit_test(test_utf8_names),
		cmocka_unit_test(test_long_line),
		cmocka_unit_test(test_tracefs),
		cmocka_unit_test(test_tracefs_clock),
		cmocka_unit_test(test_tracefs_names_cannot_hide_events),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
