#!/bin/sh
# SPDX-License-Identifier: MIT
# slack_measure.sh HRT SLEEPERS OUT - the README's third step on this
# machine: 8 sleeper processes (clock_nanosleep, periods 1-10 ms, pinned to
# the last CPU), `hrt slack 1ms --measure 4` on them (root, tracefs), its
# report into OUT.  Called by `make bench-slack-docs`.
set -eu
hrt=$1 sleepers=$2 out=$3
cpu=$(($(nproc) - 1))
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
"$sleepers" "hrt-sleeper" "$cpu" 8 7 > "$tmp/pids" &
pid=$!
while [ ! -s "$tmp/pids" ]; do sleep 0.05; done
"$hrt" slack 1ms --measure 4 $(cat "$tmp/pids") > "$tmp/out"
{ echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -r), CPU $cpu: 8 sleepers (1-10 ms), hrt slack 1ms --measure 4"; cat "$tmp/out"; } > "$out"
cat "$out"
