#!/bin/sh
# SPDX-License-Identifier: MIT
# `make bench-server` (bench/server) works: one very short round at 50
# connections, heartbeats only and loaded, of every version, and one
# counting round (loaded), into a scratch directory.  Checks the report's shape and
# that every figure parses and is sane - each connection served, no request
# lost, no connection closed by an idle timeout or as a slow reader,
# latencies positive and ordered, loop iterations counted, each server
# exiting cleanly (under ASan: without a leak) - and that the figures are
# computed from the data, not written: the pooled percentiles are those of
# the kept samples (nearest rank), their count the rounds' sum, the spread
# of p99 the rounds' own; system calls per iteration are the counting
# round's calls over its iterations, libuv's loop calls include its one
# epoll_wait an iteration; each ratio line has a verdict.  No figure is
# compared with a target: the machine is shared and noisy, so speed is
# measured by the benchmark only.  Without libuv1-dev, make bench-server
# says SKIP and exits 0; the test skips.  Without libsystemd-dev the
# sd-event rows must say so; without perf (linux-perf) or the right to
# trace system calls the counting table must say why; the test skips
# (naming which) after checking the rest.
set -u
. "$(dirname "$0")/lib.sh"
scratch err
O=${O:-build}
N=50
V="libuv hrt hrt-plan sd-event sd-hrt"
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
LAT_KEEP=$t/lat COUNT_TRAFFIC=loaded make -s bench-server O="$O" PERF_DIR="$t" SERVER_CONNS=$N \
	SERVER_ROUNDS=1 SERVER_SECONDS=1.1 SERVER_WARMUP=0.2 SERVER_RAMP=0.05 SERVER_COUNT=1.1 SERVER_SAMPLES=0 \
	SERVER_VERSIONS="$V" >"$t/out" 2>"$t/err"
st=$?
[ "$st" -eq 0 ] || { cat "$t/out" >>"$t/err"; fail "make bench-server: exit $st"; }
ok
for f in server.txt server.csv server.rounds; do
	[ -s "$t/$f" ] || fail "$f not written into PERF_DIR"
done
ok
fail_log=$t/server.txt
grep -q '^connections  *traffic  *version  *wake-ups/s  *iter/s  *CPU %  *run %  *irq/s CPU1  *hb p50  *hb p99  *lat n  *lat p50  *lat p99  *lat p99.9  *p99 of the rounds  *served  *lost$' \
	"$t/server.txt" || fail "no table header"
ok
# Each row: 17 fields, every figure a number (or n/a where none can be).
for tr in heartbeats loaded; do
	for v in $V; do
		row=$(grep "^$N  *$tr  *$v " "$t/server.txt" | head -n 1)
		if [ -z "$have_sd" ] && [ "${v%%-*}" = sd ]; then
			echo "$row" | grep -q 'skipped (install libsystemd-dev)$' ||
				fail "$tr $v: no skip naming libsystemd-dev"
			continue
		fi
		[ -n "$row" ] || fail "no row for $tr $v"
		echo "$row" | awk -v tr="$tr" -v v="$v" '
		function num(x) { return x ~ /^[0-9]+(\.[0-9]+)?$/ }
		function bad(why) { print "row " tr " " v ": " why; exit 1 }
		NF != 17 { bad(NF " fields, want 17") }
		!num($4) || $4 <= 0 { bad("wake-ups/s " $4) }
		!num($5) || $5 <= 0 { bad("iterations/s " $5) }
		!num($6) { bad("CPU % " $6) }
		!num($7) || $7 > 100 { bad("run % " $7) }
		!num($8) && $8 != "n/a" { bad("irq/s " $8) }
		$16 != 50 { bad("served " $16 " of 50") }
		$17 != 0 { bad($17 " requests lost") }
		tr == "heartbeats" && ($11 != 0 || $12 != "n/a" || $13 != "n/a" || $14 != "n/a" || $15 != "n/a") {
			bad("latency without requests") }
		tr == "loaded" && (!num($11) || $11 < 20 || !num($12) || !num($13) || !num($14) ||
			$12 <= 0 || $12 > $13 || $13 > $14) { bad("latencies " $11 " " $12 " " $13 " " $14) }
		tr == "loaded" && $15 !~ /^[0-9.]+-[0-9.]+$/ { bad("p99 of the rounds " $15) }
		' >"$t/why" || fail "$(cat "$t/why")"
		# the run time, exact (schedstat): the table's 0.1 % hides an idle one's
		grep -q "^$N,$tr,$v,srv_run_s,0*\.0*[1-9]" "$t/server.csv" ||
			grep -q "^$N,$tr,$v,srv_run_s,[1-9]" "$t/server.csv" || fail "$tr $v: no run time in server.csv"
		ok
	done
done
# Computed from the data: the pooled samples (LAT_KEEP) give the table's
# percentiles and count; the count is the rounds' lat_n summed; the p99
# spread is the lowest and highest round's own p99.
for v in $V; do
	[ -n "$have_sd" ] || [ "${v%%-*}" != sd ] || continue
	f=$t/lat/$N.loaded.$v
	[ -s "$f" ] || fail "no pooled samples of $v kept"
	row=$(grep "^$N  *loaded  *$v " "$t/server.txt" | head -n 1)
	want=$(sort -n "$f" | awk '{ a[NR] = $1 }
		function rank(p) { r = int(p / 100 * NR); if (r < p / 100 * NR) r++; return r < 1 ? 1 : r }
		END { printf "%d %.1f %.1f %.1f", NR, a[rank(50)] / 1e3, a[rank(99)] / 1e3, a[rank(99.9)] / 1e3 }')
	got=$(echo "$row" | awk '{ print $11, $12, $13, $14 }')
	[ "$got" = "$want" ] || fail "$v: lat n p50 p99 p99.9 in the table $got, from the samples $want"
	sum=$(grep "^round=[0-9]* version=$v conns=$N traffic=loaded .*status=ok" "$t/server.rounds" |
		sed 's/.* lat_n=\([0-9]*\).*/\1/' | awk '{ s += $1 } END { print s + 0 }')
	[ "$sum" = "${want%% *}" ] || fail "$v: $sum samples in the rounds, ${want%% *} pooled"
	spread=$(grep "^round=[0-9]* version=$v conns=$N traffic=loaded .*status=ok" "$t/server.rounds" |
		sed 's/.* lat_p99_us=\([0-9.]*\).*/\1/' | sort -n | awk 'NR == 1 { lo = $1 } { hi = $1 }
		END { printf "%.1f-%.1f", lo, hi }')
	[ "$(echo "$row" | awk '{ print $15 }')" = "$spread" ] || fail "$v: p99 of the rounds is not $spread"
	ok
done
# The counting round: calls per iteration are its calls over its
# iterations; libuv polls once an iteration (epoll_wait 1.00).
sed -n '/^System calls per loop iteration/,/^loop\/it:/p' "$t/server.txt" >"$t/calls"
fail_log=$t/calls
grep -q '^connections  *traffic  *version  *iter/s  *calls/s  *calls/it  *loop/it  *per iteration, by call$' \
	"$t/calls" || fail "no system-call table"
counted=y
if grep -q '^system calls: not counted' "$t/server.txt"; then
	counted=
	why=$(sed -n 's/^system calls: not counted: //p' "$t/server.txt")
	[ -n "$why" ] || fail "not counted, and no reason given"
	grep -q "^$N  *loaded  *libuv  *not counted$" "$t/calls" || fail "no 'not counted' row"
	ok
fi
for tr in loaded; do
	for v in $V; do
		[ -n "$counted" ] || break
		[ -n "$have_sd" ] || [ "${v%%-*}" != sd ] || continue
		row=$(grep "^$N  *$tr  *$v " "$t/calls")
		raw=$(grep "^round=count version=$v conns=$N traffic=$tr .*status=ok" "$t/server.rounds")
		[ -n "$row" ] && [ -n "$raw" ] || fail "$tr $v: no counting row or raw line"
		echo "$raw" | tr ' ' '\n' | grep -E '^(srv_iters|srv_s|sys_total|sys_calls)=' >"$t/kv"
		echo "$row" | awk -v v="$v" -v tr="$tr" -v kvf="$t/kv" '
		function bad(why) { print "calls " tr " " v ": " why; exit 1 }
		BEGIN { while ((getline l < kvf) > 0) { split(l, a, "="); kv[a[1]] = a[2] } }
		{
			it = kv["srv_iters"]; if (it <= 0) bad("no iterations counted")
			if (sprintf("%.1f", it / kv["srv_s"]) != $4) bad("iter/s " $4)
			if (sprintf("%.1f", kv["sys_total"] / kv["srv_s"]) != $5) bad("calls/s " $5)
			if (sprintf("%.2f", kv["sys_total"] / it) != $6) bad("calls/it " $6 ", want " kv["sys_total"] / it)
			n = split(kv["sys_calls"], c, ",")
			for (i = 1; i <= n; i++) { split(c[i], p, ":")
				if (p[1] !~ /^(read|write|readv|writev|recvfrom|sendto|recvmsg|sendmsg|recvmmsg|sendmmsg|accept|accept4|close|shutdown|setsockopt|getsockopt|getsockname|getpeername|socket)$/)
					loop += p[2]
				cnt[p[1]] = p[2] }
			if (sprintf("%.2f", loop / it) != $7) bad("loop/it " $7 ", want " loop / it)
			if (v == "libuv" && tr == "loaded" && (cnt["epoll_wait"] < it || cnt["epoll_wait"] > it + 2))
				bad("libuv: " cnt["epoll_wait"] " epoll_wait in " it " iterations")
			if (v == "libuv" && tr == "loaded" && $0 !~ /epoll_wait 1\.00/) bad("no epoll_wait 1.00 listed")
		}' >"$t/why" || fail "$(cat "$t/why")"
		ok
	done
done
# The ratios: a verdict each, and the CSV has them.
fail_log=$t/server.txt
grep -q '^hrt/libuv, the targets of issue 47 (loaded) and 42 (heartbeats)' "$t/server.txt" || fail "no ratio section"
k=$(sed -n '/^hrt\/libuv,/,/^$/p' "$t/server.txt" |
	grep -c 'target <= +\{0,1\}[0-9.]*  *\(met\|not met\|not judged (a figure is 0 or n\/a)\|not judged (not counted)\)\( .*\)\{0,1\}$')
[ "$k" -eq 9 ] || fail "$k ratio lines with a verdict, want 9"
grep -q "^$N,loaded,hrt/libuv,lat_p99_ratio,[0-9.n/a]*,1.0,\(met\|not met\|not judged\)" "$t/server.csv" ||
	fail "no p99 latency ratio in server.csv"
grep -q "^$N,loaded,hrt/libuv,lat_p999_ratio,[0-9.n/a]*,1.1,\(met\|not met\|not judged\)" "$t/server.csv" ||
	fail "no p99.9 latency ratio in server.csv"
grep -q "^$N,heartbeats,libuv,srv_wakeups_per_s,[0-9]" "$t/server.csv" || fail "no wake-ups in server.csv"
grep -q "^$N,loaded,hrt,lat_n,[0-9]" "$t/server.csv" || fail "no sample count in server.csv"
[ -z "$counted" ] || grep -q "^$N,loaded,hrt/libuv,loop_sys_per_iter_diff,-\{0,1\}[0-9.]*,+1,\(met\|not met\)$" \
	"$t/server.csv" || fail "no loop calls per iteration in server.csv"
grep -q "^  $N loaded  *libuv  *[0-9][0-9]*  enough$" "$t/server.txt" || fail "no sample count line"
ok
# Each server stopped cleanly, and closed nothing but for the client's resets.
fail_log=$t/server.rounds
nv=$([ -n "$have_sd" ] && echo 5 || echo 3)
grep -c '^round=[0-9]* .* status=ok ' "$t/server.rounds" | grep -qx "$((nv * 2))" || fail "not every run ok"
[ -z "$counted" ] || grep -c '^round=count .* status=ok ' "$t/server.rounds" | grep -qx "$nv" ||
	fail "not every counting run ok"
grep '^round=.* status=ok ' "$t/server.rounds" |
	grep -v " accepted=$N closed_peer=$N closed_idle=0 closed_slow=0 closed_error=0 closed_shutdown=0 heartbeats=[0-9]* requests=[0-9]* loop_iterations=[1-9]" |
	grep -q . && fail "a server closed connections itself, did not accept $N, or counted no iteration"
ok
# bench/server/docs.sh puts this run into a document: the block between
# its markers written from the run, each link to server.csv given the run's
# value (check_figures.sh agrees), a link the run has no row for left as
# it was and named, exit 1.
mkdir -p "$t/docs/perf"
cp "$t/server.csv" "$t/server.txt" "$t/docs/perf/"
fail_log=$t/docs.err
{
	echo "Before [9.99](perf/server.csv \"$N,loaded,hrt/libuv,run_ratio\") after."
	echo '<!-- bench-server-docs: begin -->'
	echo 'an old table'
	echo '<!-- bench-server-docs: end -->'
	echo 'A figure of another file: [7](perf/other.csv "x").'
} >"$t/docs/doc.md"
sh bench/server/docs.sh "$t/docs/perf/server" "$t/docs/doc.md" 2>"$t/docs.err" || fail "docs.sh: exit $?"
grep -q 'an old table' "$t/docs/doc.md" && fail "docs.sh left the old block"
want=$(awk -F, -v k="$N,loaded,hrt/libuv,run_ratio" '$1 "," $2 "," $3 "," $4 == k { printf "%.2f", $5 }' "$t/server.csv")
grep -q "^Before \[$want\](perf/server.csv \"$N,loaded,hrt/libuv,run_ratio\") after\.$" "$t/docs/doc.md" ||
	fail "docs.sh did not refresh a link to $want"
grep -q "^| $N | loaded | libuv | \[" "$t/docs/doc.md" || fail "docs.sh wrote no row of libuv"
grep -q '^A figure of another file: \[7\](perf/other.csv "x")\.$' "$t/docs/doc.md" || fail "docs.sh changed another file's link"
sh tests/check_figures.sh "$t/docs/doc.md" 2>&1 | grep -v 'perf/other.csv' | grep ':[0-9]*: ' >"$t/docs.err" &&
	fail "check_figures.sh disagrees with docs.sh"
echo "Stale [1.5](perf/server.csv \"$N,loaded,nosuch,cpu_ratio\")." >>"$t/docs/doc.md"
sh bench/server/docs.sh "$t/docs/perf/server" "$t/docs/doc.md" 2>"$t/docs.err" && fail "docs.sh: exit 0 with a stale link"
grep -q "no figure $N,loaded,nosuch,cpu_ratio in the run: left as 1.5" "$t/docs.err" || fail "the stale link not named"
grep -q '^Stale \[1.5\]' "$t/docs/doc.md" || fail "docs.sh changed a link it has no figure for"
ok
[ -n "$counted" ] || {
	case $why in
	*"perf is missing"*) skip "bench-server's system-call counts" linux-perf ;;
	*) skip_needs "bench-server's system-call counts" "perf allowed to trace system calls: $why" ;;
	esac
}
[ -n "$have_sd" ] || skip "bench-server's sd-event rows" libsystemd-dev
echo "test_bench_server: $n checks passed"
