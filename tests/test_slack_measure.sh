#!/bin/sh
# SPDX-License-Identifier: MIT
# test_slack_measure.sh - hrt slack --measure keeps its promise on a known
# load: 8 sleeper processes (tests/slack_sleepers.c: relative
# clock_nanosleep, periods of 1-10 ms, random phases) pinned to one CPU,
# measured 4 s, then given 1 ms of slack and measured 4 s more.  On that
# CPU the measured drop in wake-ups must be at least 30 % and agree with
# the predicted drop within 20 % of the prediction; the tool's own verdict
# must say they agree; the slack must be set (1000000 in timerslack_ns);
# the tracefs instance must be gone.  Needs root, tracefs and a build with
# libtracefs: skipped by name without them.  The comparison needs a quiet
# machine: when it fails and the tool itself says the other processes'
# wake-ups changed between the two windows (other load came or went), the
# test skips by name ("needs a quiet machine") instead of failing.
set -u
. "$(dirname "$0")/lib.sh"
tool_setup slack-measure
# hrt slack notes what it applied (for --list) below this root, not in /run
mkdir "$d/root"
export HRT_SLACK_ROOT="$d/root"
"$HRT" slack --help | grep -q -- '--measure S' || fail "hrt slack --help lacks --measure"
ok
expect 2 "slack --measure 0" "$HRT" slack 1ms --measure 0 1
grep -q "^hrt slack: --measure '0': expected seconds" "$d/err" || fail "--measure 0: message"
ok
expect 2 "slack --reset --measure" "$HRT" slack --reset --measure 1 1
[ "$(id -u)" -eq 0 ] && [ -d /sys/kernel/tracing/instances ] ||
	skip "hrt slack --measure on 8 sleepers (needs root and tracefs)" "root access"
sleepers=
trap '[ -n "$sleepers" ] && kill "$sleepers" 2>/dev/null; rm -rf "$d"' EXIT
${CC:-cc} -O2 -o "$d/sleepers" tests/slack_sleepers.c || fail "building tests/slack_sleepers.c"
cpu=$(($(nproc) - 1))
"$d/sleepers" "hrt-ms$$" "$cpu" 8 7 > "$d/pids" &
sleepers=$!
i=0
while [ ! -s "$d/pids" ]; do
	i=$((i + 1)); [ $i -lt 100 ] || fail "sleepers did not start"; sleep 0.05
done
pids=$(cat "$d/pids")
"$HRT" slack 1ms --measure 4 $pids > "$d/out" 2>"$d/err" &
hrt=$!
wait $hrt
st=$?
if [ $st -ne 0 ] && grep -q "built without libtracefs" "$d/err"; then
	skip "hrt slack --measure (built without libtracefs)" "libtracefs-dev libtraceevent-dev"
fi
[ $st -eq 0 ] || { cat "$d/err"; fail "hrt slack --measure: exit $st"; }
ok
[ ! -e "/sys/kernel/tracing/instances/hrt-$hrt" ] || fail "instance hrt-$hrt left behind"
ok
for p in $pids; do
	[ "$(cat "/proc/$p/timerslack_ns")" = 1000000 ] || fail "sleeper $p: slack not set"
done
ok
cat "$d/out"
row=$(grep "^CPU $cpu " "$d/out") || fail "no row for CPU $cpu"
# CPU N  before/s predicted/s measured/s  P %  M %
if ! echo "$row" | awk '{ p = $6; m = $8; if (p > 0 || m > -30) exit 1
	d = m - p; if (d < 0) d = -d; if (d > 0.2 * -p) exit 1 }'; then
	why="CPU $cpu: predicted $(echo "$row" | awk '{print $6}') %, measured $(echo "$row" | awk '{print $8}') %"
	grep -q "the other processes' wake-ups changed meanwhile" "$d/out" &&
		skip_needs "hrt slack --measure's comparison ($why; other load changed meanwhile)" \
			"a quiet machine"
	fail "$why: not within 20 % of the prediction, or less than a 30 % drop"
fi
ok
if ! grep -q "^verdict: predicted and measured drops agree" "$d/out"; then
	grep -q "the other processes' wake-ups changed meanwhile" "$d/out" &&
		skip_needs "hrt slack --measure's verdict (other load changed meanwhile)" "a quiet machine"
	fail "the verdict does not say they agree"
fi
ok
echo "test_slack_measure: $n checks passed"
