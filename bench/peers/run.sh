#!/bin/sh
# SPDX-License-Identifier: MIT
# run.sh - run every peer program at every N, print one table, write
# $DOCS/peers.csv, $DOCS/peers.txt (into ../PERFORMANCE.md) and $DOCS/*.svg.  Called by `make run` with O (where the
# programs are), DOCS and NS set (OPS_ROUNDS, SKIP optional; PLOT_ONLY=1
# writes the table and plots again from the last run's raw.csv).  N is the
# outer loop and the libraries alternate within it, so a noisy moment on a
# shared machine hits all of them rather than one.
set -eu
: "${O:?}" "${DOCS:?}"
NS=${NS:-"1000 10000 100000 1000000"}
LIBS="hrt hrt-st hrt-fd hrt-loop libev libuv libevent sd-event"
# Left out, with the reason: sd-event dispatches one source per iteration
# (three system calls each, ~35 us here), so the range workload at 10^6
# would take ~40 s per repetition and only repeat its expiry cost.
SKIP=${SKIP-"sd-event:range:1000000"}
PEERS="libev libuv libevent sd-event"
HRTS="hrt hrt-st hrt-fd hrt-loop"	# each gets a column "over the best peer"
# The op workloads take seconds per program and swing most with the
# machine's phases (2x between two runs here), so they run OPS_ROUNDS
# times, the libraries alternating within each round, and rounds.awk keeps
# the median of the rounds' medians (min and max over all rounds); memory,
# expiry and range run once.
OPS_ROUNDS=${OPS_ROUNDS:-5}
# Every program on one CPU (BENCH_CPU, default 0): the two CPUs of this
# machine ran the same program 1.5-1.9x apart (a busy sibling thread), so
# unpinned runs were bimodal and a paired ratio could pair two CPUs.
BENCH_CPU=${BENCH_CPU:-0}
PIN=
command -v taskset > /dev/null 2>&1 && PIN="taskset -c $BENCH_CPU"
[ -z "$PIN" ] || $PIN true || { echo "${0##*/}: cannot pin to CPU $BENCH_CPU (BENCH_CPU)" >&2; exit 1; }
OPS_W=start_cancel,rearm,timeout
REST_W=memory,expiry,range
# The op workloads from inside each library's running loop (workload.h,
# run_loop): real bases only - hrt-fd (its fd in an epoll loop), hrt-loop
# (hrt_base_loop, which runs only these), libev (ev_run) and libuv (uv_run).
LOOP_W=loop_rearm,loop_lru,loop_iter
ops_for() {	# lib: its op workloads, run in rounds
	case $1 in
	hrt-loop) echo "$LOOP_W" ;;
	hrt-fd|libev|libuv) echo "$OPS_W,$LOOP_W" ;;
	*) echo "$OPS_W" ;;
	esac
}
rest_for() {	# lib: its workloads run once
	case $1 in hrt-loop) ;; *) echo "$REST_W" ;; esac
}
raw=$O/raw.csv
mkdir -p "$DOCS" "$O/plot"

echo "== machine"
sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | sort | uniq -c | sed 's/^ */cpus: /'
echo "kernel: $(uname -sr)"
echo "pinned: ${PIN:-no (taskset missing)}"
dpkg-query -W -f '${Package} ${Version}\n' libev-dev libuv1-dev libevent-dev libsystemd-dev \
	2>/dev/null | sed 's/^/package: /' || echo "package: (dpkg-query unavailable)"
echo "hrt: $(sed -n 's/^#define HRT_VERSION_STRING "\(.*\)"/\1/p' ../../include/hrt.h)" \
	"$(git -C ../.. rev-parse --short HEAD 2>/dev/null || true)"
echo "workload: bench/peers/workload.h (seed, distributions, repetitions)"

# list minus the workloads SKIP names for this library and N
wanted() {	# lib n list
	l=$3
	for s in $SKIP; do
		case $s in "$1":*:"$2") l=$(echo "$l" |
			sed "s/$(echo "$s" | cut -d: -f2)//;s/,,/,/;s/^,//;s/,\$//") ;; esac
	done
	echo "$l"
}
run() {		# lib n list
	w=$(wanted "$1" "$2" "$3")
	[ -n "$w" ] || return 0
	t0=$(date +%s)
	$PIN "$O/$1" "$2" "$w"
	echo "   ran $1 N=$2 $w in $(( $(date +%s) - t0 )) s" >&2
}

start=$(date +%s)
if [ "${PLOT_ONLY:-0}" = 1 ]; then	# table and plots again from the last run's $raw
	[ -s "$raw" ] || { echo "run.sh: PLOT_ONLY=1 needs $raw" >&2; exit 1; }
else
	: > "$O/rounds.csv"
	for n in $NS; do
		r=0
		while [ "$r" -lt "$OPS_ROUNDS" ]; do
			r=$((r + 1))
			for lib in $LIBS; do run "$lib" "$n" "$(ops_for "$lib")" >> "$O/rounds.csv"; done
		done
		for lib in $LIBS; do run "$lib" "$n" "$(rest_for "$lib")" >> "$O/rounds.csv"; done
	done
	awk -f rounds.awk "$O/rounds.csv" > "$raw"
fi
echo "== total run time: $(( $(date +%s) - start )) s"

{
	echo "library,workload,n,metric,median,min,max,reps"
	cat "$raw"
} > "$DOCS/peers.csv"

# One table: a row per (workload, metric, N), a column per library with
# "median [min-max]", then hrt, hrt-st and hrt-fd over the best peer's median.
# "p-": paired.awk's ratio of hrt to the best peer; "-" where there was
# one round.
awk -F, -v libs="$LIBS" -v peers="$PEERS" -v hrts="$HRTS" -v skiplist="$SKIP" -v raw="$raw" "$(cat paired.awk)"'
function cell(k) { return (k in med) ? sprintf("%s [%s-%s]", fmt(med[k]), fmt(lo[k]), fmt(hi[k])) : "-" }
function fmt(x) { return x + 0 >= 100 ? sprintf("%.0f", x) : sprintf("%.1f", x) }
FILENAME != raw { k = $1 SUBSEP $2 SUBSEP $4 SUBSEP $3; rv[k, ++cnt[k]] = $5; next }
BEGIN { nl = split(libs, L, " "); np = split(peers, P, " "); nh = split(hrts, H, " ")
	nsk = split(skiplist, SK, " ") }
{
	k = $1 SUBSEP $2 SUBSEP $4 SUBSEP $3
	med[k] = $5; lo[k] = $6; hi[k] = $7
	row = $2 SUBSEP $4
	if (!(row in seenrow)) { seenrow[row] = 1; rows[++nr] = row }
	if (!(($3) in seenn)) { seenn[$3] = 1; ns[++nn] = $3 }
}
END {
	printf "%-14s %-16s %8s", "workload", "metric", "N"
	for (i = 1; i <= nl; i++) printf " %-21s", L[i]
	printf " %-9s", "best peer"
	for (i = 1; i <= nh; i++) printf " %8s", (H[i] == "hrt" ? "hrt" : substr(H[i], 5)) "/best"
	for (i = 1; i <= nh; i++) printf " %7s", "p-" (H[i] == "hrt" ? "hrt" : substr(H[i], 5))
	printf "\n"
	for (r = 1; r <= nr; r++) {
		split(rows[r], rw, SUBSEP)
		if (rw[2] == "dispatch_calls" || rw[2] == "struct_bytes" || rw[2] == "timers_timed") continue
		for (j = 1; j <= nn; j++) {
			n = ns[j]
			printf "%-14s %-16s %8s", rw[1], rw[2], n
			for (i = 1; i <= nl; i++) printf " %-21s", cell(L[i] SUBSEP rows[r] SUBSEP n)
			best = ""; bv = 0
			for (i = 1; i <= np; i++) {
				k = P[i] SUBSEP rows[r] SUBSEP n
				# A library that never caught up (busy >= 90 %) never slept:
				# its wake-up count is no result.
				bz = P[i] SUBSEP "range" SUBSEP "busy_pct" SUBSEP n
				if (rw[2] == "wakeups" && (bz in med) && med[bz] + 0 >= 90) continue
				if ((k in med) && (best == "" || med[k] + 0 < bv)) { best = P[i]; bv = med[k] + 0 }
			}
			if (rw[2] == "busy_pct") bv = 0
			printf " %-9s", best
			for (i = 1; i <= nh; i++) {
				h = H[i] SUBSEP rows[r] SUBSEP n
				printf " %8s", (bv > 0 && (h in med)) ? sprintf("%.2f", med[h] / bv) : "-"
			}
			for (i = 1; i <= nh; i++) {
				h = H[i] SUBSEP rows[r] SUBSEP n
				b = best SUBSEP rows[r] SUBSEP n
				printf " %7s", (bv > 0 && cnt[h] > 1) ? sprintf("%.2f", paired(h, b)) : "-"
			}
			printf "\n"
		}
	}
	for (k in med) {
		split(k, a, SUBSEP)
		if (a[2] == "expiry" && a[3] == "timers_timed" && med[k] + 0 < a[4] + 0)
			printf "note: %s expiry at N=%s timed on its first %d dispatches (one timer each)\n", a[1], a[4], med[k]
	}
	for (i = 1; i <= nsk; i++) printf "note: not run (library:workload:N): %s\n", SK[i]
}' "$O/rounds.csv" "$raw" | tee "$DOCS/peers.txt"

# Plots: one SVG per workload metric, median with min-max bars against N
# (gnuplot optional: the tables above are the results).
GNUPLOT=${GNUPLOT:-gnuplot}
plots=yes
command -v "$GNUPLOT" > /dev/null 2>&1 ||
	{ echo "note: no plots: $GNUPLOT not found (install gnuplot-nox)"; plots=no; }
[ "$plots" = no ] ||
for wm in start_cancel:ns_per_op rearm:ns_per_op timeout:ns_per_op expiry:ns_per_timer range:ns_per_timer \
	  range:wakeups memory:bytes_per_timer loop_rearm:ns_per_op loop_lru:ns_per_op; do
	w=${wm%%:*}
	m=${wm#*:}
	plot=""
	for lib in $LIBS; do
		awk -F, -v l="$lib" -v w="$w" -v m="$m" \
			'$1 == l && $2 == w && $4 == m { print $3, $5, $6, $7 }' "$raw" > "$O/plot/$w-$m-$lib.dat"
		[ -s "$O/plot/$w-$m-$lib.dat" ] || continue
		plot="$plot${plot:+, }'$O/plot/$w-$m-$lib.dat' using 1:2:3:4 with yerrorlines title '$lib'"
	done
	[ -n "$plot" ] || continue
	"$GNUPLOT" <<EOF
set terminal svg size 720,440 dynamic font 'sans,12'
set output '$DOCS/$w-$m.svg'
set title '$w: $m (median, bars min-max)' noenhanced
set xlabel 'armed timers N'
set ylabel '$m' noenhanced
set logscale x
set logscale y
set format x '10^{%L}'
set key outside right
set grid
plot $plot
EOF
done
sh splice.sh "$DOCS/../PERFORMANCE.md" "$DOCS/peers.txt" perf/peers.txt
echo "== wrote $DOCS/peers.csv, $DOCS/peers.txt (and into PERFORMANCE.md if $DOCS/.. has it)$([ "$plots" = no ] || echo " and $DOCS/*.svg")"
