#!/bin/sh
# SPDX-License-Identifier: MIT
# before-after.sh - hrt at an earlier commit against now.  Builds libhrt.a
# of BASE (default 64f2832, where the work on the op fast paths starts;
# BASE=ed5a506 compares with the staging list before the O(1) wheel) from
# `git archive` in a temporary directory, links the current bench_hrt.c
# (programs hrt, hrt-st and hrt-fd; hrt-st only if BASE's hrt.h has
# HRT_BASE_UNLOCKED) against it and against
# HRT_LIB, runs the two builds alternating at every N (who goes first
# alternates with N and round), ROUNDS times (rounds.awk keeps the median
# of the rounds' medians), and writes $DOCS/before-after.csv and
# $DOCS/before-after.txt: before, after and after/before of the medians per
# (program, workload, N).  Called by `make before-after` (or the top-level
# `make bench-before-after`) with O, HRT_LIB and DOCS set (ROUNDS, NS, WS,
# PROGS, BASE, TABLE_ONLY optional); run from bench/peers.  The temporary checkout is removed on exit.
set -eu
: "${O:?}" "${HRT_LIB:?}" "${DOCS:?}"
BASE=${BASE:-64f2832952fe380a64abca582ae33910bffc766b}
NS=${NS:-"1000 10000 100000 1000000"}
WS=${WS:-start_cancel,rearm,timeout,expiry}
ROUNDS=${ROUNDS:-3}
# One CPU for both sides (BENCH_CPU, default 0), as run.sh: the CPUs differ.
BENCH_CPU=${BENCH_CPU:-0}
PIN=
command -v taskset > /dev/null 2>&1 && PIN="taskset -c $BENCH_CPU"
[ -z "$PIN" ] || $PIN true || { echo "${0##*/}: cannot pin to CPU $BENCH_CPU (BENCH_CPU)" >&2; exit 1; }
repo=$(cd ../.. && pwd)
raw=$O/raw.csv
mkdir -p "$O" "$DOCS"

# TABLE_ONLY=1: the table again from the last run's rounds.csv.
if [ "${TABLE_ONLY:-0}" != 1 ]; then
	old=$(mktemp -d "${TMPDIR:-/tmp}/hrt-before.XXXXXX")
	trap 'rm -rf "$old"' EXIT
	trap 'exit 130' INT TERM
	git -C "$repo" archive --format=tar "$BASE" | tar -x -C "$old"
	echo "== building libhrt.a of $(git -C "$repo" rev-parse --short "$BASE") in $old" >&2
	# Its own make: none of our O, HRT_LIB or make flags leak into it.
	env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS -u O -u HRT_LIB make -C "$old" -j2 O="$old/build" lib \
		> "$O/build-before.log" 2>&1 ||
		{ tail -20 "$O/build-before.log" >&2; exit 1; }
	# The single-thread base came after ed5a506: no hrt-st "before" there.
	if grep -q 'define HRT_BASE_UNLOCKED' "$old/include/hrt.h"; then
		PROGS=${PROGS:-"hrt hrt-st hrt-fd"}
	else
		PROGS=${PROGS:-"hrt hrt-fd"}
	fi
	for p in $PROGS; do
		rm -f "$O/before/$p" "$O/after/$p"
		make -s O="$O/before" HRT_LIB="$old/build/libhrt.a" HRT_INC="$old/include" "$O/before/$p"
		make -s O="$O/after" HRT_LIB="$HRT_LIB" "$O/after/$p"
	done

	start=$(date +%s)
	: > "$O/rounds.csv"
	k=0
	r=0
	while [ "$r" -lt "$ROUNDS" ]; do
		r=$((r + 1))
		for n in $NS; do
			if [ $((k % 2)) -eq 0 ]; then sides="before after"; else sides="after before"; fi
			k=$((k + 1))
			for p in $PROGS; do
				for side in $sides; do
					t0=$(date +%s)
					$PIN "$O/$side/$p" "$n" "$WS" | sed "s/^/$side,/" >> "$O/rounds.csv"
					echo "   ran $side/$p N=$n (round $r) in $(( $(date +%s) - t0 )) s" >&2
				done
			done
		done
	done
	awk -f rounds.awk "$O/rounds.csv" > "$raw"
	echo "== total run time: $(( $(date +%s) - start )) s" >&2
elif [ ! -s "$O/rounds.csv" ]; then
	echo "before-after.sh: TABLE_ONLY=1 needs $O/rounds.csv" >&2
	exit 1
fi

# Rows: (program, workload, N) for the time metrics, in that order; the
# medians' ratio.
# A second ratio, paired (paired.awk): in each round the two sides of a
# (program, N) ran back to back.
# "after" names the last commit of the library's sources (+dirty if the
# work tree changed them): HRT_LIB is built from the work tree.
after=$(git -C "$repo" log -1 --format=%h -- src include 2>/dev/null || echo "?")
[ -z "$(git -C "$repo" status --porcelain -- src include 2>/dev/null)" ] || after="$after+dirty"
awk -F, -v base="$(git -C "$repo" rev-parse --short "$BASE")" -v after="$after" \
    -v csv="$DOCS/before-after.csv" -v raw="$raw" -v date="$(date -u +%Y-%m-%dT%H:%MZ)" "$(cat paired.awk)"'
function fmt(x) { return x + 0 >= 100 ? sprintf("%.0f", x) : sprintf("%.1f", x) }
FILENAME != raw {
	k = $2 SUBSEP $3 SUBSEP $4 SUBSEP $5
	rv[$1, k, ++cnt[$1, k]] = $6
	if (cnt[$1, k] > rounds) rounds = cnt[$1, k]
	next
}
$5 == "ns_per_op" || $5 == "ns_per_timer" {
	k = $2 SUBSEP $3 SUBSEP $4 SUBSEP $5
	if (!(($2) in seenp)) { seenp[$2] = 1; P[++np] = $2 }
	if (!(($3 SUBSEP $5) in seenw)) { seenw[$3 SUBSEP $5] = 1; W[++nw] = $3 SUBSEP $5 }
	if (!(($4) in seenn)) { seenn[$4] = 1; N[++nn] = $4 }
	med[$1, k] = $6; lo[$1, k] = $7; hi[$1, k] = $8
}
END {
	print "program,workload,n,metric,before,before_min,before_max,after,after_min,after_max,after_over_before,paired" > csv
	printf "# hrt before (%s) and after (%s), %s\n", base, after, date
	printf "# ns, median of %d rounds of medians [min-max over all rounds]; the same\n", rounds
	printf "# bench_hrt.c and workload.h for both; paired: median over rounds of that\n"
	printf "# round'\''s after/before (the two ran back to back)\n"
	printf "%-8s %-14s %-13s %8s %-22s %-22s %12s %7s\n", "program", "workload", "metric", "N",
		"before", "after", "after/before", "paired"
	for (i = 1; i <= np; i++) for (j = 1; j <= nw; j++) for (m = 1; m <= nn; m++) {
		split(W[j], wm, SUBSEP)
		k = P[i] SUBSEP wm[1] SUBSEP N[m] SUBSEP wm[2]
		split(k, a, SUBSEP)
		if (!(("before", k) in med) || !(("after", k) in med)) continue
		b = med["before", k]; f = med["after", k]
		r = b > 0 ? sprintf("%.2f", f / b) : "-"
		pr = cnt["before", k] ? sprintf("%.2f", paired("after" SUBSEP k, "before" SUBSEP k)) : "-"
		printf "%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n", a[1], a[2], a[3], a[4], b,
			lo["before", k], hi["before", k], f, lo["after", k], hi["after", k], r, pr > csv
		printf "%-8s %-14s %-13s %8s %-22s %-22s %12s %7s\n", a[1], a[2], a[4], a[3],
			sprintf("%s [%s-%s]", fmt(b), fmt(lo["before", k]), fmt(hi["before", k])),
			sprintf("%s [%s-%s]", fmt(f), fmt(lo["after", k]), fmt(hi["after", k])), r, pr
	}
}' "$O/rounds.csv" "$raw" | tee "$DOCS/before-after.txt"
sh splice.sh "$DOCS/../PERFORMANCE.md" "$DOCS/before-after.txt" perf/before-after.txt
echo "== wrote $DOCS/before-after.csv and $DOCS/before-after.txt (and into PERFORMANCE.md)" >&2
