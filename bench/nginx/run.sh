#!/bin/sh
# SPDX-License-Identifier: MIT
# run.sh - `make bench-nginx`: stock nginx against nginx with its timers on
# libhrt (contrib/nginx/build.sh, one source tree, one configure line), in
# alternating rounds (stock, hrt, stock, hrt, ...), the server pinned to
# SERVER_CPU and the client (nginx-client) to CLIENT_CPU, both at nice -20
# where allowed.  nginx runs as one process (master_process off) on
# 127.0.0.1, its access log off, a 64-byte static file.
#
#   idle:   IDLE_CONNS connections opened over IDLE_RAMP s, one request
#           each, then idle until nginx's keepalive_timeout (KEEPALIVE s)
#           closes them; measured from KEEPALIVE - 1 s to the last close
#           (+ 1.5 s): wake-ups/s, timer interrupts/s of its CPU, CPU.
#   loaded: LOADED_CONNS connections, RATE requests/s spread over them
#           from the end of a 1 s ramp, measured LOADED_SECONDS s after a
#           2 s warm-up: CPU, latency p50/p99/p99.9 (each round's own).
#
#   NGINX_SRC=... CLIENT=build/bench/nginx-client OUT=build/perf/nginx sh bench/nginx/run.sh
#
# Without NGINX_SRC it skips, saying so.  Output: the table (medians over
# ROUNDS rounds, and each target's ratio judged met or not) on stdout and
# in $OUT.txt, the same in $OUT.csv, every run's line in $OUT.rounds.
# Exit 0, or 1 if a run failed.
set -u
me=bench/nginx/run.sh
root=$(cd "$(dirname "$0")/../.." && pwd)
if [ -z "${NGINX_SRC:-}" ]; then
	echo "SKIP bench-nginx (nginx source: set NGINX_SRC)"
	exit 0
fi
: "${CLIENT:?the nginx-client program}" "${OUT:?the output path, without .txt}"
ROUNDS=${ROUNDS:-2}
IDLE_CONNS=${IDLE_CONNS:-10000}
IDLE_RAMP=${IDLE_RAMP:-5}
KEEPALIVE=${KEEPALIVE:-75}
LOADED_CONNS=${LOADED_CONNS:-1000}
RATE=${RATE:-5000}
LOADED_SECONDS=${LOADED_SECONDS:-8}
SERVER_CPU=${SERVER_CPU:-1}
CLIENT_CPU=${CLIENT_CPU:-0}
PORT=${PORT:-18481}
KINDS=${KINDS:-"stock hrt"}
BUILD=${BUILD:-$root/build/nginx-bench}
TRAFFIC=${TRAFFIC:-"idle loaded"}

die() {
	echo "$me: $*" >&2
	exit 1
}
[ -x "$CLIENT" ] || die "$CLIENT: no client program"
mkdir -p "$BUILD" "$(dirname "$OUT")" || die "cannot make $BUILD"
BUILD=$(cd "$BUILD" && pwd)

# libhrt from this tree, then both nginx builds (kept: REBUILD=1 redoes them).
if [ ! -x "$BUILD/hrt/src/objs/nginx" ] || [ ! -x "$BUILD/stock/src/objs/nginx" ] || [ -n "${REBUILD:-}" ]; then
	make -C "$root" -j2 install PREFIX="$BUILD/libhrt" > "$BUILD/libhrt.log" 2>&1 ||
		die "installing libhrt failed ($BUILD/libhrt.log)"
	export PKG_CONFIG_PATH="$BUILD/libhrt/lib/pkgconfig"
	for k in stock hrt; do
		"$root/contrib/nginx/build.sh" "$k" "$NGINX_SRC" "$BUILD/$k" \
			--without-http_rewrite_module --without-http_gzip_module > "$BUILD/$k.log" 2>&1 ||
			{ cat "$BUILD/$k.log" >&2; die "building $k nginx failed"; }
	done
fi

pin_s='' pin_c=''
if command -v taskset >/dev/null 2>&1 && taskset -c "$SERVER_CPU" true 2>/dev/null &&
	taskset -c "$CLIENT_CPU" true 2>/dev/null; then
	pin_s="taskset -c $SERVER_CPU" pin_c="taskset -c $CLIENT_CPU"
	pinned="server on CPU $SERVER_CPU, client on CPU $CLIENT_CPU"
else
	pinned="not pinned (taskset or a CPU missing): figures not comparable"
fi
if nice -n -20 true 2>/dev/null && [ "$(nice -n -20 nice)" -lt "$(nice)" ]; then
	pin_s="nice -n -20 $pin_s" pin_c="nice -n -20 $pin_c"
	pinned="$pinned, at nice -20"
fi

tmp=$(mktemp -d /tmp/hrt-bench-nginx-XXXXXX)
spid=
cleanup() {
	[ -z "$spid" ] || kill -KILL "$spid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
head -c 64 /dev/zero | tr '\0' x > "$tmp/f"
rounds=$OUT.rounds
: > "$rounds"
failed=0

conf() {	# the server's configuration
	cat <<EOF
daemon off;
master_process off;
worker_rlimit_nofile 40000;
error_log $tmp/error.log warn;
pid $tmp/nginx.pid;
events { worker_connections 30000; use epoll; }
http {
    access_log off;
    keepalive_timeout ${KEEPALIVE}s;
    keepalive_requests 1000000;
    server {
        listen 127.0.0.1:$PORT backlog=4096;
        location / { root $tmp; }
    }
}
EOF
}

run_one() {	# kind traffic round
	tag="round=$3 kind=$1 traffic=$2"
	conf > "$tmp/nginx.conf"
	rm -f "$tmp/nginx.pid" "$tmp/error.log"
	# shellcheck disable=SC2086 # pin_s: the command words
	$pin_s "$BUILD/$1/src/objs/nginx" -p "$tmp" -c "$tmp/nginx.conf" 2> "$tmp/srv.err" &
	spid=$!
	i=0
	while [ ! -s "$tmp/nginx.pid" ] && [ $i -lt 100 ] && kill -0 "$spid" 2>/dev/null; do
		sleep 0.05
		i=$((i + 1))
	done
	if [ ! -s "$tmp/nginx.pid" ]; then
		echo "$tag status=failed why=nginx_did_not_start" >> "$rounds"
		cat "$tmp/srv.err" "$tmp/error.log" >&2 2>/dev/null
		failed=1
		return
	fi
	if [ "$2" = idle ]; then
		set -- --conns "$IDLE_CONNS" --ramp "$IDLE_RAMP" --measure-at $((KEEPALIVE - 1)) \
			--seconds "$(awk -v r="$IDLE_RAMP" 'BEGIN { print r + 2.5 }')"
	else
		set -- --conns "$LOADED_CONNS" --ramp 1 --rate "$RATE" --measure-at 3 --seconds "$LOADED_SECONDS"
	fi
	# shellcheck disable=SC2086 # pin_c: the command words
	line=$($pin_c "$CLIENT" --port "$PORT" --path /f --pid "$spid" --cpu "$SERVER_CPU" "$@" 2> "$tmp/cli.err")
	crc=$?
	kill -TERM "$spid" 2>/dev/null
	wait "$spid" 2>/dev/null
	spid=
	if [ $crc -ne 0 ] || [ -z "$line" ]; then
		echo "$tag status=failed why=client_exit_$crc" >> "$rounds"
		cat "$tmp/cli.err" >&2
		failed=1
		return
	fi
	alerts=$(grep -c '\[alert\]\|\[emerg\]' "$tmp/error.log" 2>/dev/null)
	echo "$tag status=ok alerts=${alerts:-0} $line" >> "$rounds"
	echo "  $tag $line"
}

echo "$me: $pinned; $ROUNDS rounds of $KINDS"
r=1
while [ $r -le "$ROUNDS" ]; do
	for tr in $TRAFFIC; do
		for k in $KINDS; do
			run_one "$k" "$tr" "$r"
		done
	done
	r=$((r + 1))
done

# Medians over the rounds, the ratios and the targets.
awk -v kinds="$KINDS" -v csv="$OUT.csv" -v when="$(date -u +%Y-%m-%dT%H:%MZ)" \
    -v src="$(cd "$NGINX_SRC" && git describe --tags 2>/dev/null || echo "$NGINX_SRC")" \
    -v hrt="$(cd "$root" && git rev-parse --short HEAD 2>/dev/null)" -v pinned="$pinned" '
function med(key,   n, i, j, t, a) {
	n = split(vals[key], a, " ")
	for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
	return n ? (n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2) : "n/a"
}
/status=ok/ {
	for (i = 1; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
	for (m in f) if (m != "round" && m != "kind" && m != "traffic" && m != "status")
		vals[f["traffic"] "," f["kind"] "," m] = vals[f["traffic"] "," f["kind"] "," m] " " f[m]
	delete f
}
END {
	printf "# nginx %s, stock against hrt %s, %s; %s; medians of the rounds\n", src, hrt, when, pinned
	print "traffic,kind,metric,value" > csv
	nm = split("srv_wakeups_per_s srv_cpu_loc_per_s srv_cpu closed lat_n lat_p50_us lat_p99_us lat_p999_us alerts", ms, " ")
	nk = split(kinds, ks, " ")
	split("idle loaded", trs, " ")
	for (t = 1; t <= 2; t++) {
		printf "%-7s %-20s", trs[t], "metric"
		for (k = 1; k <= nk; k++) printf " %12s", ks[k]
		printf "\n"
		for (m = 1; m <= nm; m++) {
			if (trs[t] == "idle" && ms[m] ~ /^lat_/) continue
			if (!((trs[t] "," ks[1] "," ms[m]) in vals)) continue
			printf "%-7s %-20s", "", ms[m]
			for (k = 1; k <= nk; k++) {
				v = med(trs[t] "," ks[k] "," ms[m]); printf " %12s", v
				print trs[t] "," ks[k] "," ms[m] "," v > csv
			}
			printf "\n"
		}
	}
	ntg = split("idle,srv_wakeups_per_s,0.1 loaded,srv_cpu,1.0 loaded,lat_p99_us,1.0", tg, " ")
	print "targets (hrt / stock of the medians):"
	for (i = 1; i <= ntg; i++) {
		split(tg[i], p, ",")
		a = med(p[1] ",hrt," p[2]); b = med(p[1] ",stock," p[2])
		if (a == "n/a" || b == "n/a" || b + 0 == 0) { printf "  %s %s: n/a\n", p[1], p[2]; continue }
		r = a / b
		printf "  %-7s %-18s %.3f (target <= %s): %s\n", p[1], p[2], r, p[3], r <= p[3] ? "met" : "NOT met"
		print p[1] ",hrt/stock," p[2] "_ratio," sprintf("%.3f", r) > csv
	}
}' "$rounds" | tee "$OUT.txt"
[ "$failed" = 0 ]
