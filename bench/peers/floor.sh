#!/bin/sh
# SPDX-License-Identifier: MIT
# floor.sh - how close each op is to the memory floor.  Runs bench/floor
# (the floor: ../floor.c) and hrt, hrt-st and libev on the op workloads at
# each N, alternating within ROUNDS rounds (rounds.awk: median of the
# rounds' medians), and pairs each op with the floor it cannot beat:
#   start_cancel  hot  - one timer linked at a list's tail and unlinked:
#                 nothing an extra timer's start+cancel touches misses
#   rearm,        move - a random timer unlinked (its random neighbours
#   timeout              written) and linked at another list's tail
# both on the peers' layout (a16: the timer array from malloc starts 16
# bytes past a line); the a64 column is the same floor with one line per
# timer.  Ir/op and D1 misses/op come from $DOCS/callgrind.csv
# (callgrind.sh) when it has the row.  Called by `make floor` with O and
# DOCS set; writes $DOCS/floor.md and puts it into ../PERFORMANCE.md.
set -eu
: "${O:?}" "${DOCS:?}"
NS=${NS:-"100000 1000000"}
ROUNDS=${ROUNDS:-7}
LIBS="hrt hrt-st libev"
WS=start_cancel,rearm,timeout
mkdir -p "$DOCS"

start=$(date +%s)
: > "$O/floor-rounds.csv"
r=0
while [ "$r" -lt "$ROUNDS" ]; do
	r=$((r + 1))
	for n in $NS; do
		"$O/floor" -c "$n" >> "$O/floor-rounds.csv"
		for lib in $LIBS; do "$O/$lib" "$n" "$WS" >> "$O/floor-rounds.csv"; done
		echo "   round $r N=$n done at $(( $(date +%s) - start )) s" >&2
	done
done
awk -f rounds.awk "$O/floor-rounds.csv" > "$O/floor-raw.csv"
secs=$(( $(date +%s) - start ))

cg=$DOCS/callgrind.csv
[ -s "$cg" ] || cg=/dev/null
awk -F, -v cgf="$cg" -v rf="$O/floor-rounds.csv" -v libs="$LIBS" -v ns="$NS" -v rounds="$ROUNDS" -v secs="$secs" \
    -v date="$(date -u +%Y-%m-%dT%H:%MZ)" \
    -v rev="$(git -C ../.. log -1 --format=%h -- src include 2>/dev/null || echo '?')" "$(cat paired.awk)"'
function f(x) { return x + 0 >= 100 ? sprintf("%.0f", x) : sprintf("%.1f", x) }
FILENAME == cgf { if (FNR > 1) { ir[$1, $2, $3] = $5; d1[$1, $2, $3] = $6 }; next }
FILENAME == rf { k = $1 SUBSEP $2 SUBSEP $3; rv[k, ++cnt[k]] = $5; next }
{ med[$1, $2, $3] = $5 }
END {
	nl = split(libs, L, " "); nn = split(ns, N, " ")
	split("store touch chase move hot heap4", OP, " ")
	printf "Measured %s (hrt at %s), median of %d rounds, %d s. The floor, ns per op", date, rev, rounds, secs
	printf " (`floor -c N`: a64 one line per record, a16 the peers'\'' layout):\n\n"
	printf "| floor op |"; for (j = 1; j <= nn; j++) printf " a64 %s | a16 %s |", N[j], N[j]
	printf "\n| --- |"; for (j = 1; j <= nn; j++) printf " --- | --- |"
	printf "\n"
	for (i = 1; i <= 6; i++) {
		printf "| %s |", OP[i]
		for (j = 1; j <= nn; j++)
			printf " %s | %s |", f(med["floor", OP[i] "-a64", N[j]]), f(med["floor", OP[i] "-a16", N[j]])
		printf "\n"
	}
	printf "\nEach op against its floor: ns per op in the same rounds; x floor and x libev are paired (the\n"
	printf "median over rounds of the ratio within a round); Ir and D1 misses per op from callgrind:\n\n"
	printf "| op | N | program | ns/op | floor | floor ns (a16) | x floor | x libev | floor ns (a64) | Ir/op | D1 misses/op |\n"
	printf "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n"
	split("start_cancel rearm timeout", W, " ")
	for (w = 1; w <= 3; w++) for (j = 1; j <= nn; j++) for (i = 1; i <= nl; i++) {
		fl = W[w] == "start_cancel" ? "hot" : "move"
		x = med[L[i], W[w], N[j]]; a16 = med["floor", fl "-a16", N[j]]
		k = L[i] SUBSEP W[w] SUBSEP N[j]
		printf "| %s | %s | %s | %s | %s | %s | %.1f | %.2f | %s | %s | %s |\n", W[w], N[j], L[i], f(x), fl,
			f(a16), paired(k, "floor" SUBSEP fl "-a16" SUBSEP N[j]),
			paired(k, "libev" SUBSEP W[w] SUBSEP N[j]), f(med["floor", fl "-a64", N[j]]),
			(k in ir) ? f(ir[k]) : "-", (k in d1) ? sprintf("%.2f", d1[k]) : "-"
	}
}' "$cg" "$O/floor-rounds.csv" "$O/floor-raw.csv" > "$DOCS/floor.md"
cat "$DOCS/floor.md"
sh splice.sh "$DOCS/../PERFORMANCE.md" "$DOCS/floor.md" perf/floor.md
echo "== total run time: $secs s; wrote $DOCS/floor.md (and into PERFORMANCE.md)" >&2
