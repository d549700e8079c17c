#!/bin/sh
# SPDX-License-Identifier: MIT
# windows.sh - range timers against libev: the op workloads (start+cancel,
# re-arm, timeout) and the expiry with every timer carrying a window
# (WINDOW: 0, 50 us, 1 %, 10 %, 100 % of its delay; libev, which has none,
# gets the soft expiry), for expiries spread over 10 ms-1 s, 1-10 s and
# 10-70 s (DIST), and the tail of one re-arm (p99.9, max).  Each cell is
# the median over ROUNDS rounds of the round's hrt / libev ratio (the two
# ran seconds apart, pinned to one CPU), against the targets of issue
# "Range timers first".  Called by `make windows` (bench/peers/Makefile)
# with O and DOCS; writes $DOCS/windows.csv and $DOCS/windows.txt.
# Knobs: NS (default 10^4 10^5 10^6), ROUNDS (3), WINDOWS, DISTS, TAIL_NS.
set -eu
: "${O:?}" "${DOCS:?}"
NS=${NS:-"10000 100000 1000000"}
ROUNDS=${ROUNDS:-3}
WINDOWS=${WINDOWS:-"0 50us 1% 10% 100%"}
DISTS=${DISTS:-"10ms-1s 1s-10s 10s-70s"}
TAIL_NS=${TAIL_NS:-"1000000"}
BENCH_CPU=${BENCH_CPU:-0}
PIN=
command -v taskset > /dev/null 2>&1 && PIN="taskset -c $BENCH_CPU"
[ -z "$PIN" ] || $PIN true || { echo "${0##*/}: cannot pin to CPU $BENCH_CPU (BENCH_CPU)" >&2; exit 1; }
mkdir -p "$DOCS"
raw=$O/windows-raw.csv
: > "$raw"

# One program's CSV lines, tagged: round,dist,window,lib,workload,n,metric,median,...
tag() {	# round dist window prog n workloads
	w=$3
	[ "$w" != - ] || w=0    # libev: no windows
	DIST=$2 WINDOW=$w $PIN "$O/$4" "$5" "$6" | sed "s/^/$1,$2,$3,/" >> "$raw"
}

t0=$(date +%s)
r=1
while [ "$r" -le "$ROUNDS" ]; do
	for d in $DISTS; do
		for n in $NS; do
			tag "$r" "$d" - libev "$n" start_cancel,rearm,timeout,expiry
			for w in $WINDOWS; do
				for p in hrt-st hrt; do
					tag "$r" "$d" "$w" "$p" "$n" start_cancel,rearm,timeout,expiry
				done
			done
		done
	done
	r=$((r + 1))
done
for d in $DISTS; do
	for n in $TAIL_NS; do
		tag 1 "$d" - libev "$n" tail
		for w in $WINDOWS; do
			for p in hrt-st hrt; do
				tag 1 "$d" "$w" "$p" "$n" tail
			done
		done
	done
done
secs=$(($(date +%s) - t0))

{
echo "== range timers against libev: ratio hrt / libev, median of $ROUNDS paired rounds ($secs s)"
echo "hrt: $(git -C ../.. rev-parse --short HEAD 2>/dev/null || echo '?'), pinned: ${PIN:-no}," \
	"$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
echo "cells: st = single-thread base (HRT_BASE_UNLOCKED), def = default base; '!' marks a"
echo "miss of the target: st re-arm and timeout <= 0.5, st start+cancel <= 0.7, def <= 1.0,"
echo "expiry (ns per timer fired) <= 1.0.  libev gets the soft expiry (it has no windows)."
echo "Expiries: DIST (the op workloads; timeout: a constant 1 s, 5 s, 30 s); expiry: 1-51 ms."
awk -F, -v windows="$WINDOWS" '
$7 != "ns_per_op" && $7 != "ns_per_timer" { next }
{
	# round,dist,window,lib,workload,n,metric,median
	if ($4 == "libev") peer[$1, $2, $5, $6] = $8
	else val[$1, $2, $3, $4, $5, $6] = $8
	if (!(($2, $6) in seen_dn)) { seen_dn[$2, $6] = 1; dn[++ndn] = $2 "," $6 }
	rounds[$1] = 1
}
function med(a, c,   i, j, t) {
	for (i = 2; i <= c; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
	return c % 2 ? a[(c + 1) / 2] : (a[c / 2] + a[c / 2 + 1]) / 2
}
function cell(d, w, p, wl, n,   r, c, a, target) {
	c = 0
	for (r in rounds)
		if (((r, d, w, p, wl, n) in val) && peer[r, d, wl, n] > 0)
			a[++c] = val[r, d, w, p, wl, n] / peer[r, d, wl, n]
	if (!c) return "    -"
	target = p == "hrt" ? 1.0 : wl == "start_cancel" ? 0.7 : wl == "expiry" ? 1.0 : 0.5
	m = med(a, c)
	return sprintf("%5.2f%s", m, m > target ? "!" : " ")
}
END {
	nw = split(windows, W, " ")
	split("start_cancel rearm timeout expiry", WL, " ")
	printf "\n%-8s %-8s %-13s", "dist", "N", "op"
	for (i = 1; i <= nw; i++) printf " | %-13s", "win " W[i]
	printf "\n%-8s %-8s %-13s", "", "", ""
	for (i = 1; i <= nw; i++) printf " | %-6s %-6s", "st", "def"
	printf "\n"
	for (k = 1; k <= ndn; k++) {
		split(dn[k], x, ",")
		for (o = 1; o <= 4; o++) {
			printf "%-8s %-8s %-13s", x[1], x[2], WL[o]
			for (i = 1; i <= nw; i++)
				printf " | %s %s", cell(x[1], W[i], "hrt-st", WL[o], x[2]), cell(x[1], W[i], "hrt", WL[o], x[2])
			printf "\n"
		}
	}
}' "$raw"
echo
echo "== tail of one re-arm (each timed alone, with its two clock reads; ns).  >50us: ops over"
echo "50 us; alone: of those, with no involuntary switch around them (not preempted); invol:"
echo "involuntary switches in the whole run (700,000 ops)"
awk -F, '
$5 != "tail" { next }
{ k = $2 "," $3 "," $4 "," $6; if (!(k in seen)) { seen[k] = 1; keys[++nk] = k } v[k, $7] = $8 }
END {
	printf "%-8s %-6s %-7s %-8s %8s %8s %9s %9s %6s %6s %6s\n", "dist", "window", "lib", "N", "p50", "p99", "p99.9", "max", ">50us", "alone", "invol"
	for (i = 1; i <= nk; i++) {
		split(keys[i], x, ",")
		printf "%-8s %-6s %-7s %-8s %8d %8d %9d %9d %6d %6d %6d\n", x[1], x[2], x[3], x[4],
			v[keys[i], "p50_ns"], v[keys[i], "p99_ns"], v[keys[i], "p999_ns"], v[keys[i], "max_ns"],
			v[keys[i], "over_50us"], v[keys[i], "over_50us_alone"], v[keys[i], "invol_switches"]
	}
}' "$raw"
} > "$O/windows.txt"
cp "$raw" "$DOCS/windows.csv"
cp "$O/windows.txt" "$DOCS/windows.txt"
cat "$O/windows.txt"
[ ! -f "$DOCS/../PERFORMANCE.md" ] || sh splice.sh "$DOCS/../PERFORMANCE.md" "$O/windows.txt" perf/windows.txt
