#!/bin/sh
# SPDX-License-Identifier: MIT
# `make bench-server` (bench/server) works: one very short round at 50
# connections, heartbeats only and loaded, of every version, into a scratch
# directory.  Checks the table's shape and that every figure parses and is
# sane - each connection served, no request lost, no connection closed by
# an idle timeout or as a slow reader, latencies positive and ordered, each
# server exiting cleanly (under ASan: without a leak) - and that each ratio
# line has a verdict.  No figure is compared with a target: the machine is
# shared and noisy, so speed is measured by the benchmark only.  Without
# libuv1-dev, make bench-server says SKIP and exits 0; the test skips.
# Without libsystemd-dev the sd-event rows must say so, and the test
# skips after checking the libuv rows.
set -u
. "$(dirname "$0")/lib.sh"
scratch err
O=${O:-build}
N=50
probe() {	# header function library
	printf '#include <%s>\nint main(void) { return (void (*)(void))%s == 0; }\n' "$1" "$2" |
		cc -x c - -o "$t/probe" "$3" >/dev/null 2>&1
}
# Without libuv (forced): the target says so and succeeds.
make -s bench-server O="$O" HAVE_LIBUV= PERF_DIR="$t/none" >"$t/out" 2>"$t/err" ||
	fail "make bench-server without libuv: exit $?"
grep -qx 'SKIP bench-server (install libuv1-dev)' "$t/out" || fail "no SKIP line without libuv: $(cat "$t/out")"
[ ! -e "$t/none/server.txt" ] || fail "a table written without libuv"
ok
probe uv.h uv_default_loop -luv || skip "bench-server" libuv1-dev
have_sd=y
probe systemd/sd-event.h sd_event_default -lsystemd || have_sd=
make -s bench-server O="$O" PERF_DIR="$t" SERVER_CONNS=$N SERVER_ROUNDS=1 SERVER_SECONDS=1.5 \
	SERVER_WARMUP=1.2 SERVER_RAMP=0.2 >"$t/out" 2>"$t/err"
st=$?
[ "$st" -eq 0 ] || { cat "$t/out" >>"$t/err"; fail "make bench-server: exit $st"; }
ok
for f in server.txt server.csv server.rounds; do
	[ -s "$t/$f" ] || fail "$f not written into PERF_DIR"
done
ok
fail_log=$t/server.txt
grep -q '^connections  *traffic  *version  *wake-ups/s  *CPU s  *run s  *irq/s CPU1  *hb p50  *hb p99  *lat p50  *lat p99  *lat p99.9  *served  *lost$' \
	"$t/server.txt" || fail "no table header"
ok
# Each row: 14 fields, every figure a number (or n/a where none can be).
for tr in heartbeats loaded; do
	for v in libuv hrt hrt-plan sd-event sd-hrt; do
		row=$(grep "^$N  *$tr  *$v " "$t/server.txt")
		if [ -z "$have_sd" ] && [ "${v%%-*}" = sd ]; then
			echo "$row" | grep -q 'skipped (install libsystemd-dev)$' ||
				fail "$tr $v: no skip naming libsystemd-dev"
			continue
		fi
		[ -n "$row" ] || fail "no row for $tr $v"
		echo "$row" | awk -v tr="$tr" -v v="$v" '
		function num(x) { return x ~ /^[0-9]+(\.[0-9]+)?$/ }
		function bad(why) { print "row " tr " " v ": " why; exit 1 }
		NF != 14 { bad(NF " fields, want 14") }
		!num($4) || $4 <= 0 { bad("wake-ups/s " $4) }
		!num($5) { bad("CPU s " $5) }
		!num($6) || $6 <= 0 { bad("run s " $6) }
		!num($7) && $7 != "n/a" { bad("irq/s " $7) }
		!num($8) || !num($9) || $8 > $9 || $9 > 1000 { bad("heartbeat jitter " $8 " " $9) }
		$13 != 50 { bad("served " $13 " of 50") }
		$14 != 0 { bad($14 " requests lost") }
		tr == "heartbeats" && ($10 != "n/a" || $11 != "n/a" || $12 != "n/a") { bad("latency without requests") }
		tr == "loaded" && (!num($10) || !num($11) || !num($12) || $10 <= 0 || $10 > $11 || $11 > $12) {
			bad("latencies " $10 " " $11 " " $12) }
		' >"$t/why" || fail "$(cat "$t/why")"
		ok
	done
done
# Each server stopped cleanly, and closed nothing but for the client's resets.
fail_log=$t/server.rounds
grep -c ' status=ok ' "$t/server.rounds" | grep -qx "$([ -n "$have_sd" ] && echo 10 || echo 6)" ||
	fail "not every run ok"
grep ' status=ok ' "$t/server.rounds" | grep -v " accepted=$N closed_peer=$N closed_idle=0 closed_slow=0 closed_error=0 " |
	grep -q . && fail "a server closed connections itself, or did not accept $N"
ok
# The ratios: a verdict each, and the CSV has them.
fail_log=$t/server.txt
grep -q '^hrt/libuv, medians of the rounds (the targets of issue 42):$' "$t/server.txt" || fail "no ratio section"
k=$(sed -n '/^hrt\/libuv,/,/^$/p' "$t/server.txt" | grep -c 'target <= [0-9.]*  *\(met\|not met\|not judged (a figure is 0 or n\/a)\)$')
[ "$k" -eq 6 ] || fail "$k ratio lines with a verdict, want 6"
grep -q "^$N,loaded,hrt/libuv,lat_p99_ratio,[0-9.n/a]*,1.1,\(met\|not met\|not judged\)" "$t/server.csv" ||
	fail "no p99 latency ratio in server.csv"
grep -q "^$N,heartbeats,libuv,srv_wakeups_per_s,[0-9]" "$t/server.csv" || fail "no wake-ups in server.csv"
ok
[ -n "$have_sd" ] || skip "bench-server's sd-event rows" libsystemd-dev
echo "test_bench_server: $n checks passed"
