# SPDX-License-Identifier: MIT
# lib.sh - the helpers every tests/*.sh sources, so that the shell tests
# report in one style (tests/run.sh reads their exit status):
#
#   ok                  counts a check that held (in $n; print it at the end)
#   fail MSG...         prints "FAIL: MSG" and, if fail_log names a file
#                       that exists, its lines as "  NAME: ..." (NAME its
#                       base name: what the failed command wrote), exits 1
#   skip WHAT PACKAGE   prints "SKIP: WHAT (install PACKAGE)", exits 77
#   skip_needs WHAT CONDITION   prints "SKIP: WHAT (needs CONDITION)", exits
#                       77: a check that cannot hold on this machine as it
#                       is (a measurement disturbed by other load); never
#                       for a missing package (tests/run.sh)
#   need CMD WHAT PACKAGE   skip WHAT unless CMD is on the PATH
#   tool_setup NAME     for the tests of the hrt tool: $HRT made absolute
#                       (default build/hrt), a scratch directory $d removed
#                       at exit, and $fail_log=$d/err
#   scratch LOG         a scratch directory $t removed at exit, and
#                       $fail_log=$t/LOG
#   expect STATUS WHAT CMD...   runs CMD, its stderr into $fail_log, and
#                       fails WHAT unless it exits with STATUS
#   chain_trace FILE    writes a synthetic perf trace: a 1 ms relative
#                       sleep chain (300 sleeps) beside a 2.1 ms absolute
#                       poller on one CPU (with --slack 1ms every policy
#                       needs 164 wake-ups; d4ebe1c's optimum said 299)
#
# A script stops at its first failed check, as a unit.h test does.
n=0
fail_log=
ok() { n=$((n + 1)); }
fail() {
	echo "FAIL: $*"
	if [ -n "$fail_log" ] && [ -f "$fail_log" ]; then
		sed "s|^|  ${fail_log##*/}: |" "$fail_log"
	fi
	exit 1
}
skip() { echo "SKIP: $1 (install $2)"; exit 77; }
skip_needs() { echo "SKIP: $1 (needs $2)"; exit 77; }
need() { command -v "$1" >/dev/null 2>&1 || skip "$2" "$3"; }
expect() {
	want=$1 what=$2; shift 2
	"$@" 2>"$fail_log"; st=$?
	[ "$st" -eq "$want" ] || fail "$what: exit $st, want $want"
	ok
}
scratch() {
	t=$(mktemp -d "/tmp/hrt-test-XXXXXX")
	trap 'rm -rf "$t"' EXIT
	fail_log=$t/$1
}
tool_setup() {
	HRT=${HRT:-build/hrt}
	case $HRT in /*) ;; *) HRT=$PWD/$HRT ;; esac
	d=$(mktemp -d "/tmp/hrt-test-$1-XXXXXX")
	trap 'rm -rf "$d"' EXIT
	fail_log=$d/err         # what the last command wrote to stderr
}
chain_trace() {
	awk 'BEGIN { t = 1000000000
		for (i = 0; i < 300; i++) { s = t + 1000000; h = s + 50000
			printf "%d 0  loop 100 [000] %d.%09d: timer:hrtimer_start: hrtimer=0x%x function=hrtimer_wakeup expires=%d softexpires=%d mode=REL\n", t, t / 1e9, t % 1e9, 4096 + i, h, s
			printf "%d 1  swapper 0 [000] %d.%09d: timer:hrtimer_expire_entry: hrtimer=0x%x function=hrtimer_wakeup now=%d\n", h, h / 1e9, h % 1e9, 4096 + i, h
			t = h + 10000 }
		end = t
		for (t = 1000300000; t < end; t = s + 5000) { s = t + 2100000; i++
			printf "%d 0  poll 200 [000] %d.%09d: timer:hrtimer_start: hrtimer=0x%x function=hrtimer_wakeup expires=%d softexpires=%d mode=ABS\n", t, t / 1e9, t % 1e9, 65536 + i, s, s
			printf "%d 1  swapper 0 [000] %d.%09d: timer:hrtimer_expire_entry: hrtimer=0x%x function=hrtimer_wakeup now=%d\n", s, s / 1e9, s % 1e9, 65536 + i, s } }' |
		sort -n -k1,1 -k2,2 | cut -d' ' -f3- >"$1"
}
