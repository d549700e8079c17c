#!/bin/sh
# SPDX-License-Identifier: MIT
# `make bench-peers` without gnuplot: ends 0 with the table and a note
# naming the package, writes its results into the build directory, and
# leaves the tracked docs/perf and docs/PERFORMANCE.md as they were (only
# `make bench-peers-docs` rewrites those).  A short run in a scratch build
# directory: N = 1000, one round, the range workload left out (it sleeps),
# bench-windows at its smallest.
# Needs the peer libraries.
set -u
. "$(dirname "$0")/lib.sh"
peers="libev-dev libuv1-dev libevent-dev libsystemd-dev"
scratch out
# Each peer library links (an empty or missing header or library does not).
for p in ev.h:ev_run:-lev uv.h:uv_default_loop:-luv event2/event.h:event_base_new:-levent_core \
	systemd/sd-event.h:sd_event_default:-lsystemd; do
	h=${p%%:*} f=${p#*:} l=${f#*:} f=${f%%:*}
	printf '#include <%s>\nint main(void) { return (void (*)(void))%s == 0; }\n' "$h" "$f" |
		cc -x c - -o "$t/probe" "$l" >/dev/null 2>&1 || skip "bench-peers (no $h, $l)" "$peers"
done
docs() { cat docs/PERFORMANCE.md docs/perf/* | cksum; }
before=$(docs)
skip_range=
for l in hrt hrt-st hrt-fd hrt-loop libev libuv libevent sd-event; do skip_range="$skip_range $l:range:1000"; done
# SANITIZE= SAN_FLAGS= : make test's SANITIZE reaches here through MAKEFLAGS
# and its SAN_FLAGS through the environment, and the peer programs link
# libhrt.a without the sanitizers' run time.
# bench-windows (part of bench-peers) at its smallest: one round, one
# window, one distribution.
make -s bench-peers O="$t/o" SANITIZE= SAN_FLAGS= NS=1000 OPS_ROUNDS=1 SKIP="$skip_range" \
	ROUNDS=1 WINDOWS=0 DISTS=10ms-1s TAIL_NS=1000 \
	GNUPLOT=hrt-test-no-gnuplot >"$t/out" 2>&1 || fail "make bench-peers without gnuplot: exit $?"
ok
grep -q '^workload  *metric  *N  *hrt ' "$t/out" || fail "no table in the output"
grep -q '^start_cancel  *ns_per_op  *1000 ' "$t/out" || fail "no start_cancel row at N=1000"
# The real bases' rows from inside each running loop: hrt-fd (an epoll
# loop), hrt-loop (hrt_base_loop), libev and libuv, a figure in each.
grep -q '^workload  *metric  *N  *hrt  *hrt-st  *hrt-fd  *hrt-loop  *libev ' "$t/out" ||
	fail "no hrt-loop column between hrt-fd and libev"
for w in loop_rearm loop_lru; do
	grep -q "^$w  *ns_per_op  *1000  *-  *-  *[0-9][0-9.]* \[[^]]*\]  *[0-9][0-9.]* \[[^]]*\]  *[0-9][0-9.]* \[[^]]*\]  *[0-9][0-9.]* \[" \
		"$t/out" || fail "no $w row with hrt-fd, hrt-loop, libev and libuv figures"
	grep -q "^hrt-loop,$w,1000,rearms_per_1m_ops," "$t/o/perf/peers.csv" ||
		fail "peers.csv: no timerfd re-arms of hrt-loop in $w"
done
ok
grep -qF 'note: no plots: hrt-test-no-gnuplot not found (install gnuplot-nox)' "$t/out" ||
	fail "no note naming gnuplot-nox"
ok
for f in peers.csv peers.txt windows.csv windows.txt; do
	[ -s "$t/o/perf/$f" ] || fail "$f not written into the build directory (\$O/perf)"
done
ls "$t/o/perf/"*.svg >/dev/null 2>&1 && fail "plots written without gnuplot"
ok
[ "$(docs)" = "$before" ] || fail "make bench-peers changed docs/perf or docs/PERFORMANCE.md"
ok
echo "test_bench_peers: $n checks passed: no gnuplot, exit 0, table, loop rows and note, docs/perf untouched"
