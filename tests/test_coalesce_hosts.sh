#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/coalesce's three hosts count interrupts and run their timers:
# hrt_base_loop, a libuv loop inside hrt_base_loop_host (examples/uv_host.h,
# --uv) and a libev loop with examples/ev_host.h (--ev), each with coalescing off
# and on, against a 1 kHz neighbour and alone, for a short run.  Checks
# that every run woke for its timers (a host whose sleep never ends, or
# whose pass never runs, hangs into the timeout or shows 0) and that the
# interrupt counter counted; what the figures say about coalescing is the
# benchmark's business (docs/PERFORMANCE.md), not this test's.  Needs root
# and the irq_vectors:local_timer_entry tracepoint, and libuv1-dev and
# libev-dev for the two hosts.
set -u
. "$(dirname "$0")/lib.sh"
B=${O:-build}/bench/coalesce
scratch err
[ -x "$B" ] || fail "$B not built"
[ "$(id -u)" -eq 0 ] || skip "bench/coalesce interrupt counts (need root and tracefs)" "root access"
"$B" --help >/dev/null 2>"$t/usage"
grep -q -- '--uv' "$t/usage" || skip "bench/coalesce --uv (built without libuv)" libuv1-dev
grep -q -- '--ev' "$t/usage" || skip "bench/coalesce --ev (built without libev)" libev-dev
for host in "" --uv --ev; do
	timeout 20 "$B" $host --seconds 0.3 >"$t/out" 2>"$t/err" ||
		fail "bench/coalesce $host: exit $?"
	if grep -q '^SKIP:' "$t/out"; then
		cat "$t/out"
		skip "bench/coalesce interrupt counts (need root and tracefs)" "root access"
	fi
	case $host in
	--uv) name=libuv ;; --ev) name=libev ;; *) name=hrt_base_loop ;;
	esac
	grep -q "host $name" "$t/out" || fail "bench/coalesce $host: not the $name host"
	# timers bg_hz co wakeups bg_irqs irqs extra late late% passes
	# (a wake-up of the lazily re-armed fd before anything was due runs
	# no pass: passes may fall a little short of wake-ups)
	rows=$(awk '$1 == 1 && ($3 == "on" || $3 == "off") && $4 > 0 && $6 > 0 && $10 > 0' \
		"$t/out" | wc -l)
	[ "$rows" -eq 4 ] || { cat "$t/out"; fail "bench/coalesce $host: $rows of 4 runs woke and counted"; }
	ok
done
echo "$n checks"
