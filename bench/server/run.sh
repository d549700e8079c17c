#!/bin/sh
# SPDX-License-Identifier: MIT
# run.sh - the server benchmark's driver (make bench-server): runs each
# server against the client in alternating rounds and writes one report.
#
# For each connection count (CONNS) and traffic (TRAFFIC: heartbeats,
# loaded), ROUNDS rounds, each running every version once in VERSIONS
# order (libuv, hrt, hrt-plan, libuv, hrt, ...), so a noisy moment of a
# shared machine hits every version rather than one; then, if COUNT > 0,
# one counting round of each version (below).  A run: the server pinned to
# SERVER_CPU (taskset), the client to CLIENT_CPU, both at nice NICE (-20
# where allowed: below); the client connects over RAMP s, lets the load
# run WARMUP s, then measures - the server's wake-ups, CPU, loop
# iterations and its CPU's timer interrupts, and what the client sees:
# heartbeat jitter, request latency (client.c says how each is taken) -
# and the server is stopped (SIGTERM) and prints its own counts.  Loaded:
# RATE_PER_CONN requests per second per connection (0.5: 500/s at 1,000
# connections, 5,000/s at 10,000).
#
# How long a round measures: loaded, MEASURE s or more, so that the
# rounds together collect SAMPLES latency samples per version (30,000 by
# default: 12.3 s a round at 500 requests/s and 5 rounds); heartbeats
# only, no requests, so each connection's idle timeout ends it 10 s after
# its accept: at most 10 - RAMP - WARMUP - 1 s (6 s with the defaults).
# Latency percentiles are pooled: every sample of every round of a version
# in one set (the nearest rank); each round's own p99 and p99.9 show the
# spread.  The other figures are medians of the rounds.
#
# System calls per loop iteration: the counting round runs each version
# once more, COUNT s (traffic COUNT_TRAFFIC: default all), with `perf stat -e 'syscalls:sys_enter_*'` attached
# to the server, enabled and disabled by the client at the edges of the
# window in which it reads the server's iteration counter (a page the
# server adds one to per loop iteration: proto.h); apart from the
# latency rounds, which perf would slow down.  An iteration is one of the
# polling loop's: libuv's (a prepare handle; hrt_base_loop_host runs one
# libuv iteration per iteration of its own), sd-event's (a prepare
# callback).  "loop calls" leave out the sockets' own I/O (read, write,
# the recv and send calls, accept, close, setsockopt...): what the loop
# adds.  Without perf, or without the right to trace system calls (root,
# or perf_event_paranoid <= -1), the round is skipped and the report says
# why.
#
# A version is a name, its program $BIN/server-NAME, or NAME=PROGRAM (a
# server built elsewhere, e.g. from another branch: hrt.loop=../b/server-hrt).
# Each version is compared with libuv (one whose name starts with sd-:
# with sd-event) when that one ran too.
#
# Output: the report on stdout and in $OUT.txt; the same figures in
# $OUT.csv (connections,traffic,version,metric,value; the ratios' rows add
# target,verdict); every run's raw line, the counting rounds' and the
# pooled percentiles in RAW (default $OUT.rounds).  LAT_KEEP=DIR keeps each
# version's pooled samples there (ns, one a line: CONNS.TRAFFIC.VERSION).
# Each ratio the issue targets, judged met or not met - nothing is tuned
# to pass.  Exit 0, or 1 if a run failed (its lines are shown).
#
#   BIN=build/server OUT=build/perf/server sh bench/server/run.sh
set -u
: "${BIN:?the directory of the server-* and client programs}" "${OUT:?the output path, without .txt}"
ROUNDS=${ROUNDS:-5}
CONNS=${CONNS:-"1000 10000"}
TRAFFIC=${TRAFFIC:-"heartbeats loaded"}
VERSIONS=${VERSIONS:-"libuv hrt hrt-plan"}
MEASURE=${MEASURE:-6}
SAMPLES=${SAMPLES:-30000}
COUNT=${COUNT:-3}
COUNT_TRAFFIC=${COUNT_TRAFFIC:-$TRAFFIC}
WARMUP=${WARMUP:-2}
RAMP=${RAMP:-1}
RATE_PER_CONN=${RATE_PER_CONN:-0.5}
SERVER_CPU=${SERVER_CPU:-1}
CLIENT_CPU=${CLIENT_CPU:-0}
LAT_KEEP=${LAT_KEEP:-}
me=${0##*/}

tmp=$(mktemp -d /tmp/hrt-bench-server-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$(dirname "$OUT")"
rounds=${RAW:-$OUT.rounds}
mkdir -p "$(dirname "$rounds")"
: > "$rounds"
[ -z "$LAT_KEEP" ] || mkdir -p "$LAT_KEEP"
failed=0

# Pinning: both CPUs must exist, and taskset must work.
pin_s= pin_c=
if command -v taskset >/dev/null 2>&1 && taskset -c "$SERVER_CPU" true 2>/dev/null &&
	taskset -c "$CLIENT_CPU" true 2>/dev/null; then
	pin_s="taskset -c $SERVER_CPU" pin_c="taskset -c $CLIENT_CPU"
	pinned="server on CPU $SERVER_CPU, client on CPU $CLIENT_CPU (taskset)"
else
	pinned="no (taskset missing, or CPU $SERVER_CPU or $CLIENT_CPU absent): figures are not comparable"
fi
# Priority: on a machine shared with other work, the other processes'
# time slices would end up in the latencies and jitter; NICE (default -20
# where allowed, as root) puts the server and the client ahead of them.
# Only a negative nice: the kernel widens a sleep's slack at nice > 0.
NICE=${NICE:--20}
if [ "$NICE" != 0 ] && nice -n "$NICE" true 2>/dev/null &&
	[ "$(nice -n "$NICE" nice 2>/dev/null)" -lt "$(nice)" ]; then
	pin_s="nice -n $NICE $pin_s" pin_c="nice -n $NICE $pin_c"
	pinned="$pinned, both at nice $(nice -n "$NICE" nice 2>/dev/null)"
else
	pinned="$pinned, at the caller's nice ($(nice))"
fi

# Counting system calls: perf, allowed to trace them.  Every call in the
# total (raw_syscalls:sys_enter), the calls an event loop makes by name
# (CALLS: a tracepoint each, and closing one costs perf some 35 ms, so not
# all ~360); the rest shows as "other".  read_8b_or_fail: the reads that returned 8
# bytes or failed (EAGAIN), which no socket read of this benchmark does
# (its messages are 16 bytes): a timerfd's or eventfd's, or a read that
# found nothing - the loop's own, among the reads.
CALLS=${CALLS:-"epoll_wait epoll_pwait epoll_pwait2 epoll_ctl ppoll prctl getpriority
newfstatat read write recvfrom sendto accept4 close timerfd_settime timerfd_gettime futex
membarrier ioctl rt_sigprocmask"}
events=raw_syscalls:sys_enter
for c in $CALLS; do
	for d in /sys/kernel/tracing /sys/kernel/debug/tracing; do
		if [ -d "$d/events/syscalls/sys_enter_$c" ]; then
			events="$events,syscalls:sys_enter_$c"
			break
		fi
	done
done
pev="-e $events"
for d in /sys/kernel/tracing /sys/kernel/debug/tracing; do
	if [ -d "$d/events/syscalls/sys_exit_read" ]; then
		pev="$pev -e syscalls:sys_exit_read --filter ret==8||ret<0"
		break
	fi
done
counting="perf stat (every call: raw_syscalls:sys_enter; $(echo "$events" | tr , "\n" | grep -c "^syscalls:") calls by name), $COUNT s a version"
if [ "$COUNT" = 0 ]; then
	counting="not counted (COUNT=0)"
elif ! command -v perf >/dev/null 2>&1; then
	counting="not counted: perf is missing (install linux-perf)"
elif ! perf stat -x, $pev -- true >/dev/null 2>"$tmp/perf.err"; then
	counting="not counted: perf may not trace system calls here ($(tail -n 1 "$tmp/perf.err");" \
		"needs root or kernel.perf_event_paranoid <= -1)"
fi

label() { echo "${1%%=*}"; }
program() {	# version: its server
	case $1 in *=*) echo "${1#*=}" ;; *) echo "$BIN/server-$1" ;; esac
}
package() {	# the package a version's program needs
	case $1 in sd-*) echo libsystemd-dev ;; *) echo libuv1-dev ;; esac
}
rate_for() {	# conns traffic: requests per second
	if [ "$2" = loaded ]; then awk -v n="$1" -v p="$RATE_PER_CONN" 'BEGIN { print n * p }'
	else echo 0; fi
}
# The measured seconds of a latency round: heartbeats-only rounds end
# before the idle timeouts do; loaded ones long enough for SAMPLES.
measure_for() {	# conns traffic
	awk -v m="$MEASURE" -v r="$RAMP" -v w="$WARMUP" -v t="$2" -v rate="$(rate_for "$1" "$2")" \
		-v want="$SAMPLES" -v k="$ROUNDS" 'BEGIN {
		cap = 10 - r - w - 1
		if (t == "heartbeats" && m > cap) m = cap
		if (t == "loaded" && rate > 0) {
			need = want * 1.02 / (k * rate)         # 2 %: a round starts late
			need = int(need * 10 + 0.999) / 10
			if (need > m) m = need
		}
		if (m <= 0) { print "0"; exit }
		print m }'
}
count_for() {	# traffic: the counting round's seconds
	awk -v m="$COUNT" -v r="$RAMP" -v w="$WARMUP" -v t="$1" 'BEGIN {
		cap = 10 - r - w - 1
		if (t == "heartbeats" && m > cap) m = cap
		print (m > 0 ? m : 0) }'
}

# perf's -x, output: "count,,EVENT,..." -> the total and NAME:count,...
# (largest first; other: the calls not named), counted calls only.
perf_calls() {	# file
	awk -F, '$1 !~ /^[0-9]+$/ { next }
	$3 == "raw_syscalls:sys_enter" { total = $1; next }
	$3 == "syscalls:sys_exit_read" { if ($1 > 0) print $1, "read_8b_or_fail"; next }
	$3 ~ /^syscalls:sys_enter_/ && $1 > 0 { sub(/^syscalls:sys_enter_/, "", $3); named += $1; print $1, $3 }
	END { if (total == "") exit 1; if (total > named) print total - named, "other"; print total, "total" }' "$1" |
		sort -k1,1nr | awk '$2 == "total" { t = $1; next } { l = l (l == "" ? "" : ",") $2 ":" $1 }
		END { printf "sys_total=%d sys_calls=%s\n", t, l == "" ? "none" : l }'
}

run_one() {	# version conns traffic round(number, or "count")
	v=$(label "$1") srv=$(program "$1") n=$2 tr=$3 r=$4
	tag="round=$r version=$v conns=$n traffic=$tr"
	load=$(cut -d' ' -f1 /proc/loadavg)
	if [ ! -x "$srv" ]; then
		case $1 in
		*=*)	echo "$tag status=failed why=no_program_$srv" >> "$rounds"
			echo "$me: $tag: no program $srv" >&2
			failed=1 ;;
		*)	echo "$tag status=skipped package=$(package "$v")" >> "$rounds" ;;
		esac
		return 0
	fi
	rate=$(rate_for "$n" "$tr")
	if [ "$r" = count ]; then m=$(count_for "$tr"); else m=$(measure_for "$n" "$tr"); fi
	rm -f "$tmp/iters" "$tmp/lat"
	$pin_s "$srv" --conns "$n" --iters "$tmp/iters" > "$tmp/srv.out" 2> "$tmp/srv.err" &
	spid=$!
	port= i=0
	while [ -z "$port" ] && [ $i -lt 100 ] && kill -0 "$spid" 2>/dev/null; do
		sleep 0.05
		port=$(sed -n 's/^port \([0-9]*\)$/\1/p' "$tmp/srv.out")
		i=$((i + 1))
	done
	if [ -z "$port" ]; then
		kill -KILL "$spid" 2>/dev/null
		wait "$spid" 2>/dev/null
		echo "$tag status=failed why=server_did_not_listen" >> "$rounds"
		echo "$me: $tag: server-$v did not listen:" >&2
		sed 's/^/  /' "$tmp/srv.err" >&2
		failed=1
		return 0
	fi
	# The counting round: perf counts the server's calls while the
	# client runs (perf's workload: perf ends with it, and exits with its
	# status), between the client's enable and disable.
	extra="--lat-out $tmp/lat" perf= pline=
	if [ "$r" = count ]; then
		rm -f "$tmp/ctl" "$tmp/ack" "$tmp/perf.out"
		mkfifo "$tmp/ctl" "$tmp/ack"
		perf="perf stat -x, -D -1 --control fifo:$tmp/ctl,$tmp/ack $pev -p $spid -o $tmp/perf.out --"
		extra="--perf-ctl $tmp/ctl --perf-ack $tmp/ack"
	fi
	# shellcheck disable=SC2086 # $perf, $extra: words
	$perf $pin_c "$BIN/client" --port "$port" --conns "$n" --rate "$rate" --ramp "$RAMP" \
		--warmup "$WARMUP" --seconds "$m" --pid "$spid" --cpu "$SERVER_CPU" \
		--iters "$tmp/iters" $extra > "$tmp/cli.out" 2> "$tmp/cli.err"
	crc=$?
	if [ -n "$perf" ] && [ "$crc" -eq 0 ] && ! pline=$(perf_calls "$tmp/perf.out"); then
		echo "$me: $tag: perf counted nothing:" >&2
		sed 's/^/  perf: /' "$tmp/perf.out" >&2
		crc=1
	fi
	# The client reset its connections as it ended: a moment for the
	# server to see them (closed_peer) before the stop closes the rest.
	sleep 0.2
	kill -TERM "$spid" 2>/dev/null
	# A server that has not stopped 30 s later is killed: one so far
	# behind that it could not reach the signal (its figures are kept and
	# the row says so), or a hung one (the smoke test would fail).
	( sleep 30; kill -KILL "$spid" 2>/dev/null ) &
	dog=$!
	wait "$spid"
	src=$?
	kill "$dog" 2>/dev/null
	wait "$dog" 2>/dev/null
	line=$(grep '^conns=' "$tmp/cli.out")
	sline=$(grep '^server=' "$tmp/srv.out")
	tag="$tag load=$load"
	if [ "$crc" -eq 3 ] && { [ "$src" -eq 0 ] || [ "$src" -eq 137 ]; }; then
		echo "$tag status=behind" >> "$rounds"
		echo "   $tag: the client fell behind past the whole measurement: not measured" >&2
		return 0
	fi
	if [ "$crc" -eq 0 ] && [ "$src" -eq 137 ] && [ -n "$line" ]; then
		echo "$tag status=overloaded $line $pline" >> "$rounds"
		echo "   $tag: the server did not stop within 30 s of SIGTERM: killed" >&2
		return 0
	fi
	if [ "$crc" -ne 0 ] || [ "$src" -ne 0 ] || [ -z "$line" ] || [ -z "$sline" ]; then
		echo "$tag status=failed why=client_exit_${crc}_server_exit_$src" >> "$rounds"
		echo "$me: $tag: client exit $crc, server exit $src:" >&2
		cat "$tmp/cli.err" "$tmp/srv.err" | sed 's/^/  /' >&2
		failed=1
		return 0
	fi
	echo "$tag status=ok $line $sline $pline" >> "$rounds"
	[ "$r" = count ] || cat "$tmp/lat" >> "$tmp/pool.$n.$tr.$v"
	echo "   $tag: $(echo "$line" | sed 's/.*\(srv_wakeups_per_s=[^ ]*\).*\(srv_cpu_s=[^ ]*\).*\(srv_iters_per_s=[^ ]*\).*/\1 \2 \3/')" \
		"$(echo "$pline" | sed 's/ sys_calls=.*//')" >&2
}

# The pooled percentiles of a version's samples (nearest rank), a line of
# the raw file.
pool() {	# version conns traffic
	f=$tmp/pool.$2.$3.$1
	tag="round=pooled version=$1 conns=$2 traffic=$3 status=pooled"
	if [ ! -s "$f" ]; then
		echo "$tag lat_n=0" >> "$rounds"
		return 0
	fi
	sort -n "$f" -o "$f"
	k=$(wc -l < "$f")
	awk -v n="$k" -v tag="$tag" '
	function rank(p) { r = int(p / 100 * n); if (r < p / 100 * n) r++; return r < 1 ? 1 : r }
	BEGIN { a = rank(50); b = rank(99); c = rank(99.9) }
	NR == a { x = $1 } NR == b { y = $1 } NR == c { z = $1 }
	END { printf "%s lat_n=%d lat_p50_us=%.1f lat_p99_us=%.1f lat_p999_us=%.1f\n", tag, n,
		x / 1e3, y / 1e3, z / 1e3 }' "$f" >> "$rounds"
	[ -z "$LAT_KEEP" ] || cp "$f" "$LAT_KEEP/$2.$3.$1"
	rm -f "$f"
}

start=$(date +%s)
load0=$(cut -d' ' -f1-3 /proc/loadavg)
for n in $CONNS; do
	for tr in $TRAFFIC; do
		r=1
		while [ "$r" -le "$ROUNDS" ]; do
			for v in $VERSIONS; do run_one "$v" "$n" "$tr" "$r"; done
			r=$((r + 1))
		done
		for v in $VERSIONS; do pool "$(label "$v")" "$n" "$tr"; done
		case $counting:" $COUNT_TRAFFIC " in
		perf*" $tr "*)	for v in $VERSIONS; do run_one "$v" "$n" "$tr" count; done ;;
		esac
	done
done
load1=$(cut -d' ' -f1-3 /proc/loadavg)

labels=
for v in $VERSIONS; do labels="$labels $(label "$v")"; done
labels=${labels# }
{
	echo "== bench-server: $(date -u +%Y-%m-%d) $(git rev-parse --short HEAD 2>/dev/null || echo '?')," \
		"$ROUNDS rounds, alternating $labels"
	for v in $VERSIONS; do
		case $v in *=*) echo "version $(label "$v"): $(program "$v")" ;; esac
	done
	sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | sort | uniq -c | sed 's/^ */cpus: /'
	echo "kernel: $(uname -sr); load average before $load0, after $load1"
	dpkg-query -W -f '${Package} ${Version}\n' libuv1-dev libsystemd-dev 2>/dev/null |
		sed 's/^/package: /'
	echo "pinned: $pinned"
	echo "per run: connect over $RAMP s, $WARMUP s warm-up, then measured (heartbeats only:" \
		"$(measure_for 1 heartbeats) s, before the 10 s idle timeouts; loaded: $MEASURE s or" \
		"more, for $SAMPLES latency samples over the $ROUNDS rounds:" \
		"$(for n in $CONNS; do printf '%s s at %s, ' "$(measure_for "$n" loaded)" "$n"; done |
			sed 's/, $//') connections); loaded: $RATE_PER_CONN requests/s per connection"
	echo "system calls: $counting (one counting round apart from the latency rounds)"
	echo "timers: idle 10 s re-armed on every request, heartbeat 1 s; hrt windows and" \
		"sd-event accuracies idle 1 s, heartbeat 100 ms; libuv exact (ms)"
	echo "wake-ups: the server's voluntary context switches per second; iter/s: its loop's" \
		"iterations per second; CPU %: its utime+stime over the measured interval (run %: the" \
		"same from schedstat, ns), of one CPU; timer irq/s: LOC interrupts of CPU $SERVER_CPU," \
		"every process's; jitter: |heartbeat interval - 1 s| at the client; latency: request" \
		"sent to echo received at the client, pooled over the rounds (n samples), and the" \
		"lowest and highest round's own p99; the rest: medians of the rounds"
	echo "total run time: $(( $(date +%s) - start )) s"
	echo
} > "$OUT.txt"

awk -v conns="$CONNS" -v traffic="$TRAFFIC" -v versions="$labels" -v csv="$OUT.csv" \
	-v cpu="$SERVER_CPU" -v want="$SAMPLES" '
function med(key,    n, i, j, t, a) {
	n = cnt[key]
	if (n == 0) return "n/a"
	for (i = 1; i <= n; i++) a[i] = val[key, i]
	for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
function fmt(x, d) { return x == "n/a" || x == "" ? "n/a" : sprintf("%." d "f", x) }
function ratio(a, b) { return (a == "n/a" || b == "n/a" || a == "" || b == "" || b + 0 == 0) ? "n/a" : a / b }
function base_of(v) { return v ~ /^sd-/ ? "sd-event" : "libuv" }
# The sockets own I/O, which the loop does not add.
function io_call(c) {
	return c ~ /^(read|write|readv|writev|recvfrom|sendto|recvmsg|sendmsg|recvmmsg|sendmmsg|accept|accept4|close|shutdown|setsockopt|getsockopt|getsockname|getpeername|socket)$/
}
# One ratio against its target, the spread of the rounds own ratios
# after it (lo, hi: "" for none); a line and a CSV row.
function judge(g, what, metric, q, target, lo, hi,    verdict, spread) {
	verdict = q == "n/a" ? "not judged (a figure is 0 or n/a)" : (q <= target ? "met" : "not met")
	spread = lo == "" ? "" : "  (rounds " fmt(lo, 2) "-" fmt(hi, 2) ")"
	printf "  %-24s %-26s %6s   target <= %-5s %s%s\n", g, what, fmt(q, 2), target, verdict, spread
	print g0n "," g0t "," pair "," metric "," (q == "n/a" ? q : sprintf("%.3f", q)) "," target "," verdict >> csv
	if (lo != "") {
		print g0n "," g0t "," pair "," metric "_round_min," sprintf("%.3f", lo) >> csv
		print g0n "," g0t "," pair "," metric "_round_max," sprintf("%.3f", hi) >> csv
	}
}
# A difference (loop calls per iteration) against its target.
function judge_diff(g, what, metric, a, b, target,    d, verdict) {
	if (a == "" || b == "") {
		printf "  %-24s %-26s %6s   target <= +%-4s %s\n", g, what, "n/a", target, "not judged (not counted)"
		return
	}
	d = a - b
	verdict = d <= target ? "met" : "not met"
	printf "  %-24s %-26s %+6.2f   target <= +%-4s %s\n", g, what, d, target, verdict
	print g0n "," g0t "," pair "," metric "," sprintf("%.3f", d) ",+" target "," verdict >> csv
}
# The lowest and highest of the rounds own ratios x/y of metric m.
function round_ratios(x, y, m,    r, q) {
	rlo = ""; rhi = ""
	for (r = 1; r <= maxround; r++) {
		if (!((x, m, r) in rv) || !((y, m, r) in rv) || rv[y, m, r] + 0 == 0) continue
		q = rv[x, m, r] / rv[y, m, r]
		if (rlo == "" || q < rlo) rlo = q
		if (rhi == "" || q > rhi) rhi = q
	}
}
{
	for (i = 1; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
	g = f["conns"] SUBSEP f["traffic"] SUBSEP f["version"]
	if (f["status"] == "pooled") {
		pooled[g] = 1
		split("lat_n lat_p50_us lat_p99_us lat_p999_us", m, " ")
		for (i in m) P[g, m[i]] = f[m[i]]
		delete f; next
	}
	if (f["round"] == "count") {
		if (f["status"] == "ok" || f["status"] == "overloaded") {
			counted[g] = 1
			C[g, "iters"] = f["srv_iters"]; C[g, "s"] = f["srv_s"]; C[g, "total"] = f["sys_total"]
			C[g, "calls"] = f["sys_calls"]
		} else if (f["status"] != "skipped")
			countbad[g] = f["status"]
		delete f; next
	}
	runs[g]++
	if (f["status"] == "skipped") { skipped[g] = f["package"]; delete f; next }
	if (f["status"] == "behind") { behind[g]++; delete f; next }
	if (f["status"] == "overloaded") over[g]++
	else if (f["status"] != "ok") { bad[g]++; delete f; next }
	ok[g]++
	if (f["load"] != "") {
		if (loadlo == "" || f["load"] + 0 < loadlo) loadlo = f["load"] + 0
		if (f["load"] + 0 > loadhi) loadhi = f["load"] + 0
	}
	served = f["connected"] - f["closed_by_server"]
	if (!(g in minserved) || served < minserved[g]) minserved[g] = served
	if (f["req_lost"] > maxlost[g]) maxlost[g] = f["req_lost"]
	if (f["srv_s"] > 0) {
		f["cpu_pct"] = f["srv_cpu_s"] / f["srv_s"] * 100
		f["run_pct"] = f["srv_run_s"] / f["srv_s"] * 100
	}
	r = f["round"] + 0
	if (r > maxround) maxround = r
	split("srv_wakeups_per_s srv_cpu_s srv_run_s cpu_pct run_pct srv_iters_per_s srv_cpu_loc_per_s hb_jit_p50_ms hb_jit_p99_ms lat_p99_us lat_p999_us srv_s", m, " ")
	for (i in m) if (m[i] in f && f[m[i]] != "n/a") {
		val[g, m[i], ++cnt[g, m[i]]] = f[m[i]]
		rv[g, m[i], r] = f[m[i]]
		if (!((g, m[i]) in lo) || f[m[i]] + 0 < lo[g, m[i]]) lo[g, m[i]] = f[m[i]] + 0
		if (!((g, m[i]) in hi) || f[m[i]] + 0 > hi[g, m[i]]) hi[g, m[i]] = f[m[i]] + 0
	}
	delete f
}
END {
	nc = split(conns, Cn, " "); nt = split(traffic, T, " "); nv = split(versions, V, " ")
	print "connections,traffic,version,metric,value,target,verdict" > csv
	if (loadlo != "") printf "load average (1 min) at the runs starts: %.2f-%.2f\n\n", loadlo, loadhi
	hdr = "%-11s %-10s %-13s %10s %8s %6s %6s %9s %7s %7s %7s %9s %9s %9s %17s %6s %s\n"
	printf hdr, "connections", "traffic", "version", "wake-ups/s", "iter/s", "CPU %", "run %",
		"irq/s CPU" cpu, "hb p50", "hb p99", "lat n", "lat p50", "lat p99", "lat p99.9",
		"p99 of the rounds", "served", "lost"
	printf hdr, "", "", "", "", "", "", "", "", "ms", "ms", "", "us", "us", "us", "us", "", ""
	split("srv_wakeups_per_s srv_cpu_s srv_run_s cpu_pct run_pct srv_iters_per_s srv_cpu_loc_per_s hb_jit_p50_ms hb_jit_p99_ms srv_s", m, " ")
	for (a = 1; a <= nc; a++) for (b = 1; b <= nt; b++) for (c = 1; c <= nv; c++) {
		g = Cn[a] SUBSEP T[b] SUBSEP V[c]
		if (g in skipped) {
			printf "%-11s %-10s %-13s skipped (install %s)\n", Cn[a], T[b], V[c], skipped[g]
			continue
		}
		if (!(g in ok) && (g in behind) && !(g in bad)) {
			printf "%-11s %-10s %-13s not measured (the client fell behind in every round: a busy machine)\n", Cn[a], T[b], V[c]
			continue
		}
		if (!(g in ok)) {
			printf "%-11s %-10s %-13s failed (every round; the log above says why)\n", Cn[a], T[b], V[c]
			continue
		}
		for (i = 1; i <= 10; i++) M[g, m[i]] = med(g SUBSEP m[i])
		n = P[g, "lat_n"] + 0
		spread = n && ((g, "lat_p99_us") in lo) ? fmt(lo[g, "lat_p99_us"], 1) "-" fmt(hi[g, "lat_p99_us"], 1) : "n/a"
		printf "%-11s %-10s %-13s %10s %8s %6s %6s %9s %7s %7s %7d %9s %9s %9s %17s %6s %s%s\n", Cn[a], T[b], V[c],
			fmt(M[g, "srv_wakeups_per_s"], 1), fmt(M[g, "srv_iters_per_s"], 1),
			fmt(M[g, "cpu_pct"], 1), fmt(M[g, "run_pct"], 1),
			fmt(M[g, "srv_cpu_loc_per_s"], 0), fmt(M[g, "hb_jit_p50_ms"], 2),
			fmt(M[g, "hb_jit_p99_ms"], 2), n, n ? fmt(P[g, "lat_p50_us"], 1) : "n/a",
			n ? fmt(P[g, "lat_p99_us"], 1) : "n/a", n ? fmt(P[g, "lat_p999_us"], 1) : "n/a",
			spread, minserved[g], maxlost[g] + 0,
			((g in bad) ? "  (" bad[g] " of " runs[g] " rounds failed)" : "") \
			((g in over) ? "  (" over[g] " of " runs[g] " rounds overloaded)" : "") \
			((g in behind) ? "  (" behind[g] " of " runs[g] " rounds not measured: client behind)" : "")
		for (i = 1; i <= 10; i++)
			print Cn[a] "," T[b] "," V[c] "," m[i] "," M[g, m[i]] >> csv
		print Cn[a] "," T[b] "," V[c] ",lat_n," n >> csv
		if (n) {
			print Cn[a] "," T[b] "," V[c] ",lat_p50_us," P[g, "lat_p50_us"] >> csv
			print Cn[a] "," T[b] "," V[c] ",lat_p99_us," P[g, "lat_p99_us"] >> csv
			print Cn[a] "," T[b] "," V[c] ",lat_p999_us," P[g, "lat_p999_us"] >> csv
			print Cn[a] "," T[b] "," V[c] ",lat_p99_round_min_us," lo[g, "lat_p99_us"] >> csv
			print Cn[a] "," T[b] "," V[c] ",lat_p99_round_max_us," hi[g, "lat_p99_us"] >> csv
			print Cn[a] "," T[b] "," V[c] ",lat_p999_round_min_us," lo[g, "lat_p999_us"] >> csv
			print Cn[a] "," T[b] "," V[c] ",lat_p999_round_max_us," hi[g, "lat_p999_us"] >> csv
		}
		print Cn[a] "," T[b] "," V[c] ",served_min," minserved[g] >> csv
		print Cn[a] "," T[b] "," V[c] ",req_lost_max," maxlost[g] + 0 >> csv
		print Cn[a] "," T[b] "," V[c] ",rounds_ok," ok[g] >> csv
	}
	print ""
	print "served: connections connected and never closed by the server (fewest of the rounds);"
	print "lost: requests without an echo (most of the rounds); overloaded: the server had not"
	print "stopped 30 s after SIGTERM (still behind on its work) and was killed; its round counts;"
	print "client behind: the client was late past the whole measurement, which measured nothing"
	print "(that round is left out)"

	# The counting rounds.
	print ""
	print "System calls per loop iteration (the counting round):"
	hdr = "%-11s %-10s %-13s %8s %9s %9s %10s  %s\n"
	printf hdr, "connections", "traffic", "version", "iter/s", "calls/s", "calls/it", "loop/it", "per iteration, by call"
	for (a = 1; a <= nc; a++) for (b = 1; b <= nt; b++) for (c = 1; c <= nv; c++) {
		g = Cn[a] SUBSEP T[b] SUBSEP V[c]
		if (!(g in counted)) {
			if (g in countbad)
				printf "%-11s %-10s %-13s counting round %s (the log above says why)\n", Cn[a], T[b], V[c], countbad[g]
			else if (!(g in skipped))
				printf "%-11s %-10s %-13s not counted\n", Cn[a], T[b], V[c]
			continue
		}
		it = C[g, "iters"] + 0
		if (it == 0 || C[g, "s"] + 0 == 0) {
			printf "%-11s %-10s %-13s no iteration counted\n", Cn[a], T[b], V[c]
			continue
		}
		k = split(C[g, "calls"], L, ",")
		loopc = 0; list = ""
		for (i = 1; i <= k; i++) {
			split(L[i], nc2, ":")
			if (nc2[2] == "") continue
			if (!io_call(nc2[1])) loopc += nc2[2]   # read_8b_or_fail counts as the loop
			x = nc2[2] / it
			print Cn[a] "," T[b] "," V[c] ",sys_" nc2[1] "_per_iter," sprintf("%.4f", x) >> csv
			if (x >= 0.005) list = list (list == "" ? "" : ", ") nc2[1] " " sprintf("%.2f", x)
		}
		SI[g] = C[g, "total"] / it; LI[g] = loopc / it
		printf "%-11s %-10s %-13s %8.1f %9.1f %9.2f %10.2f  %s\n", Cn[a], T[b], V[c], it / C[g, "s"],
			C[g, "total"] / C[g, "s"], SI[g], LI[g], list
		print Cn[a] "," T[b] "," V[c] ",count_iters_per_s," sprintf("%.1f", it / C[g, "s"]) >> csv
		print Cn[a] "," T[b] "," V[c] ",sys_per_s," sprintf("%.1f", C[g, "total"] / C[g, "s"]) >> csv
		print Cn[a] "," T[b] "," V[c] ",sys_per_iter," sprintf("%.3f", SI[g]) >> csv
		print Cn[a] "," T[b] "," V[c] ",loop_sys_per_iter," sprintf("%.3f", LI[g]) >> csv
	}
	print "loop/it: the calls other than the sockets own I/O (read, write, the recv and send"
	print "calls, accept, close, setsockopt...), and the reads that returned 8 bytes or failed"
	print "(read_8b_or_fail, part of read: a timerfd or eventfd read, or one that found nothing,"
	print "never a socket read of this benchmark); other: calls not counted by name; calls of"
	print "fewer than 0.005 an iteration not listed"

	# Samples: enough for a p99.9?
	print ""
	print "Latency samples per version (pooled over the rounds; want >= " want " loaded):"
	for (a = 1; a <= nc; a++) for (c = 1; c <= nv; c++) {
		g = Cn[a] SUBSEP "loaded" SUBSEP V[c]
		if (!(g in pooled)) continue
		n = P[g, "lat_n"] + 0
		printf "  %-24s %-13s %7d  %s\n", Cn[a] " loaded", V[c], n, (n >= want ? "enough" : "too few")
	}

	# The ratios.
	for (c = 1; c <= nv; c++) {
		pv = V[c]; bv = base_of(pv)
		if (pv == bv) continue
		pair = pv "/" bv
		print ""
		print pair ", the targets of issue 47 (loaded) and 42 (heartbeats); latency pooled, the rest medians:"
		for (a = 1; a <= nc; a++) for (b = 1; b <= nt; b++) {
			x = Cn[a] SUBSEP T[b] SUBSEP pv; y = Cn[a] SUBSEP T[b] SUBSEP bv
			if (!(x in ok) || !(y in ok)) {
				printf "  %-24s not judged (%s or %s did not run)\n", Cn[a] " " T[b], pv, bv
				continue
			}
			g0n = Cn[a]; g0t = T[b]; gl = Cn[a] " " T[b]
			# metric|figure|what|target each: the targets of issue 42 (heartbeats), 47 (loaded)
			nj = split(T[b] == "heartbeats" ? \
				"wakeups_ratio|srv_wakeups_per_s|wake-ups|0.05;cpu_ratio|srv_cpu_s|CPU|0.3;run_ratio|srv_run_s|(run time)|0.3" : \
				"cpu_ratio|srv_cpu_s|CPU|0.8;run_ratio|srv_run_s|(run time)|0.8;lat_p99_ratio|lat_p99_us|p99 latency|1.0;lat_p999_ratio|lat_p999_us|p99.9 latency|1.1", J, ";")
			for (j = 1; j <= nj; j++) {
				split(J[j], w, "|")
				round_ratios(x, y, w[2])
				# latency: the pooled percentiles; the rest: medians of the rounds
				q = w[2] ~ /^lat_/ ? ratio(P[x, w[2]], P[y, w[2]]) : ratio(M[x, w[2]], M[y, w[2]])
				judge(j == 1 ? gl : "", w[3], w[1], q, w[4], rlo, rhi)
			}
			judge_diff("", "loop calls per iteration", "loop_sys_per_iter_diff",
				(x in LI) ? LI[x] : "", (y in LI) ? LI[y] : "", 1)
		}
	}
	print ""
	print "CPU is judged on utime+stime, as the issues state it; (run time) is the same time from"
	print "schedstat, exact where utime+stime counts 10 ms ticks; (rounds a-b): the lowest and"
	print "highest of the rounds own ratios (round k of one version against round k of the other);"
	print "loop calls per iteration: the difference, one more call than libuv allowed"
}' "$rounds" >> "$OUT.txt"
cat "$OUT.txt"
[ "$failed" -eq 0 ] || { echo "$me: some runs failed (above; raw lines in $rounds)" >&2; exit 1; }
