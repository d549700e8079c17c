#!/bin/sh
# SPDX-License-Identifier: MIT
# test_run_slack.sh - hrt run --slack and hrt slack, the commands that apply
# timer slack: run's slack reaches CMD, its threads and children, and CMD's
# exit status is run's; slack changes a process's main thread only, names
# the threads it leaves, and refuses - one line on stderr, exit 2 (usage)
# or 1 (refused), nothing changed - a bad duration, a missing PID, a thread
# id, an unknown or ambiguous name, a caller without CAP_SYS_NICE and a
# real-time task.  As root, the caller without privilege is this script's
# child under uid 65534 (setpriv); the rest of hrt slack needs root and is
# skipped by name without it.  Processes started here are named
# hrt-sp-PID-... and killed at exit.
set -u
. "$(dirname "$0")/lib.sh"
tool_setup run-slack
# hrt slack notes what it applied (for --list) below this root, not in /run
mkdir "$d/root"
export HRT_SLACK_ROOT="$d/root"
${CC:-cc} -O2 -pthread -o "$d/probe" tests/slack_probe.c || fail "building tests/slack_probe.c"
tag=sp$$
pids=""
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	rm -rf "$d"
}
trap cleanup EXIT
one_line() { # WHAT SAYS: stderr is one line holding SAYS
	[ "$(wc -l < "$d/err")" -eq 1 ] || fail "$1: stderr is not one line"
	grep -q -- "$2" "$d/err" || fail "$1: stderr lacks '$2'"
	ok
}
started=0
start() { # [chrt...] PROBE NAME: starts a probe in the background, sets $pid
	started=$((started + 1))
	"$@" > "$d/ready.$started" &
	pid=$!
	pids="$pids $pid"
	i=0
	while ! grep -q ready "$d/ready.$started" 2>/dev/null; do
		i=$((i + 1))
		[ $i -lt 100 ] || fail "probe $* did not start"
		sleep 0.05
	done
}
slack_of() { cat "/proc/$1/timerslack_ns"; }

# hrt run: the slack reaches CMD, a thread of it and a child of it.
out=$("$HRT" run --slack 1ms -- sh -c 'cat /proc/self/timerslack_ns') || fail "run cat"
[ "$out" = 1000000 ] || fail "run --slack 1ms: CMD's slack is '$out', want 1000000"; ok
"$HRT" run --slack 2500us -- "$d/probe" "$tag" report > "$d/out" || fail "run probe report"
for who in main thread child; do
	grep -qx "$who 2500000" "$d/out" || { cat "$d/out"; fail "run --slack 2500us: $who lacks it"; }
	ok
done
expect 7 "run passes CMD's exit status" "$HRT" run --slack 1ms -- sh -c 'exit 7'
expect 127 "run: CMD not found" "$HRT" run --slack 1ms -- "$d/no-such-cmd"
one_line "run: CMD not found" "no-such-cmd: No such file or directory"
printf 'x\n' > "$d/notexec"
expect 126 "run: CMD not executable" "$HRT" run --slack 1ms -- "$d/notexec"
one_line "run: CMD not executable" "Permission denied"
expect 2 "run: bad duration" "$HRT" run --slack 1x -- true
one_line "run: bad duration" "'1x': expected a unit"
expect 2 "run: no --slack" "$HRT" run -- true
one_line "run: no --slack" "--slack D is required"
expect 2 "run: no command" "$HRT" run --slack 1ms
one_line "run: no command" "no command"
expect 1 "run --help > /dev/full" sh -c "'$HRT' run --help > /dev/full"

# hrt slack: input refused before anything else.
start "$d/probe" "$tag-a"
a=$pid
before=$(slack_of "$a")
expect 2 "slack: bad duration" "$HRT" slack 5x "$a"
one_line "slack: bad duration" "'5x': expected a unit"
expect 2 "slack: no process" "$HRT" slack 1ms
one_line "slack: no process" "no process given"
expect 1 "slack --help > /dev/full" sh -c "'$HRT' slack --help > /dev/full"

# A caller without CAP_SYS_NICE: refused, nothing changed.
if [ "$(id -u)" -eq 0 ]; then
	need setpriv "hrt slack refused without root (setpriv)" util-linux
	expect 1 "slack as uid 65534" setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$HRT" slack 1ms "$a"
else
	expect 1 "slack without root" "$HRT" slack 1ms "$a"
fi
one_line "slack without privilege" "needs CAP_SYS_NICE"
[ "$(id -u)" -ne 0 ] || [ "$(slack_of "$a")" = "$before" ] || fail "non-root changed the slack"
ok

[ "$(id -u)" -eq 0 ] || skip "hrt slack as root (run make test as root)" "root access"
need chrt "hrt slack on a real-time task (chrt)" util-linux

# It changes the main thread, says old -> new and names the other threads.
expect 0 "slack 2ms NAME" sh -c "'$HRT' slack 2ms '$tag-a' > /dev/null"
[ "$(slack_of "$a")" = 2000000 ] || fail "slack 2ms: /proc/$a/timerslack_ns is $(slack_of "$a")"
ok
"$HRT" slack 3ms "$a" > "$d/out" || fail "slack 3ms PID"
grep -q "^$a ($tag-a): timer slack 2 ms -> 3 ms$" "$d/out" || { cat "$d/out"; fail "old -> new"; }
ok
for t in $(ls "/proc/$a/task"); do
	[ "$t" = "$a" ] && continue
	grep -q "only the main thread is reached; 2 other threads.* $t ($tag-a-w)" "$d/out" ||
		{ cat "$d/out"; fail "thread $t not named as not reached"; }
	ok
	tid=$t
done
# A report that cannot be written is an error (the slack is set by then).
expect 1 "slack > /dev/full" sh -c "'$HRT' slack 4ms '$a' > /dev/full"
one_line "slack > /dev/full" "^hrt slack: stdout: No space left on device$"
expect 0 "slack --reset" sh -c "'$HRT' slack --reset '$a' > /dev/null"
[ "$(slack_of "$a")" = "$before" ] || fail "--reset: $(slack_of "$a"), want $before"; ok

# Refusals as root: each one line, and nothing changed, other targets
# given with it included.
expect 2 "slack: thread id" "$HRT" slack 1ms "$a" "$tid"
one_line "slack: thread id" "is a thread of process $a"
expect 2 "slack: missing PID" "$HRT" slack 1ms "$a" 999999999
one_line "slack: missing PID" "no process 999999999"
expect 2 "slack: unknown name" "$HRT" slack 1ms "$a" "$tag-none"
one_line "slack: unknown name" "no process named '$tag-none'"
start "$d/probe" "$tag-b"
b1=$pid
start "$d/probe" "$tag-b"
b2=$pid
expect 2 "slack: ambiguous name" "$HRT" slack 1ms "$a" "$tag-b"
one_line "slack: ambiguous name" "'$tag-b' matches 2 processes: $b1 $b2"
start chrt -f 1 "$d/probe" "$tag-rt"
expect 1 "slack: real-time task" "$HRT" slack 1ms "$a" "$tag-rt"
one_line "slack: real-time task" "real-time task (SCHED_FIFO)"
for p in $a $b1 $b2; do
	[ "$(slack_of "$p")" = "$before" ] || fail "a refused command changed $p's slack"
	ok
done
# A kernel thread is refused (kthreadd, PID 2: every kernel thread started
# later inherits its slack) unless --kernel-threads is given; that path is
# run here with the slack kthreadd has, so nothing changes.  d4ebe1c set it.
k2=$(slack_of 2)
expect 1 "slack: a kernel thread" "$HRT" slack 1ms "$a" 2
one_line "slack: a kernel thread" "2 (kthreadd): refused: a kernel thread"
[ "$(slack_of 2)" = "$k2" ] && [ "$(slack_of "$a")" = "$before" ] ||
	fail "a refused kernel thread changed a slack"
ok
expect 0 "slack --kernel-threads" sh -c "'$HRT' slack --kernel-threads ${k2}ns 2 > /dev/null"
[ "$(slack_of 2)" = "$k2" ] || fail "slack --kernel-threads ${k2}ns 2 changed kthreadd's slack"
ok
# hrt run under a real-time policy: the kernel keeps slack 0, said at any
# size - d4ebe1c read it back through PR_GET_TIMERSLACK, an int, and
# skipped the check from 2^31 ns: 3 s passed with exit 0.
for s in 1ms 2147483647ns 2147483648ns 3s; do
	expect 1 "chrt -f 5 run --slack $s" chrt -f 5 "$HRT" run --slack "$s" -- true
	one_line "run --slack $s, real-time" "kept timer slack 0 ns instead of .*: a real-time task (SCHED_FIFO) gets no slack"
done
# ... and without it a slack past 2^31 ns is taken and read back right
out=$("$HRT" run --slack 3s -- cat /proc/self/timerslack_ns) || fail "run --slack 3s"
[ "$out" = 3000000000 ] || fail "run --slack 3s: CMD's slack is '$out'"
ok
echo "ok $n checks"
