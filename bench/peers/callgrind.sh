#!/bin/sh
# SPDX-License-Identifier: MIT
# callgrind.sh - instructions and data-cache misses per op for hrt, hrt-st
# and libev on each op workload, counted by callgrind inside the op loop
# only (--toggle-collect on workload.h's op_<workload>, which includes its
# lib_pass every 64 ops) and divided by the ops.  Counts, not times: the
# same on a busy machine as on a quiet one, and the same between runs.
# Called by `make callgrind` (top level: `make bench-callgrind`) with O
# (the programs) and DOCS set; LIBS, WS, NS and K choose programs,
# workloads, N values and ops.  Writes $DOCS/callgrind.txt (the table) and
# $DOCS/callgrind.csv (floor.sh reads it); the table goes into
# ../PERFORMANCE.md where that quotes it.
set -eu
: "${O:?}" "${DOCS:?}"
LIBS=${LIBS:-"hrt hrt-st libev"}
WS=${WS:-"start_cancel rearm timeout"}
NS=${NS:-"1000 100000 1000000"}
K=${K:-200000}
mkdir -p "$DOCS" "$O/cg"

# The simulated caches: this machine's L1d, and its L3 as the last level
# (a miss there goes to memory).  callgrind wants power-of-two set counts.
d1=$(getconf LEVEL1_DCACHE_SIZE 2>/dev/null || echo 32768)
d1w=$(getconf LEVEL1_DCACHE_ASSOC 2>/dev/null || echo 8)
ll=$(getconf LEVEL3_CACHE_SIZE 2>/dev/null || echo 33554432)
case $d1w in '' | 0) d1w=8 ;; esac
case $ll in '' | 0) ll=33554432 ;; esac
# Round each cache down to a power-of-two set count (a 320 MB L3 has 327680
# sets of 16 x 64 bytes: valgrind refuses it).
pow2_sets() {   # size assoc -> size with sets rounded down to a power of two
	s=$(( $1 / ($2 * 64) )) p=1
	while [ $(( p * 2 )) -le "$s" ]; do p=$(( p * 2 )); done
	echo $(( p * $2 * 64 ))
}
d1=$(pow2_sets "$d1" "$d1w")
ll=$(pow2_sets "$ll" 16)

# The op functions must exist under these names, or the toggle counts
# nothing and the table would print zeros.
for lib in $LIBS; do
	for w in $WS; do
		nm "$O/$lib" | grep -q " op_$w" ||
			{ echo "callgrind.sh: no op_$w in $O/$lib" >&2; exit 1; }
	done
done

start=$(date +%s)
csv=$DOCS/callgrind.csv
echo "program,workload,n,ops,Ir_per_op,D1_misses_per_op,D1_read_misses_per_op,LL_misses_per_op" > "$csv"
for n in $NS; do
	for w in $WS; do
		for lib in $LIBS; do
			out=$O/cg/$lib-$w-$n.out
			valgrind --tool=callgrind --cache-sim=yes --D1="$d1,$d1w,64" --LL="$ll,16,64" \
				--collect-atstart=no --toggle-collect="op_$w*" \
				--callgrind-out-file="$out" "$O/$lib" "$n" ops "$K" "$w" > /dev/null 2>&1
			awk -v l="$lib" -v w="$w" -v n="$n" -v k="$K" '
				/^events:/ { for (i = 2; i <= NF; i++) ev[i - 1] = $i }
				/^summary:/ { for (i = 2; i <= NF; i++) v[ev[i - 1]] = $i }
				END {
					if (v["Ir"] + 0 == 0) { print "callgrind.sh: nothing counted for " l " " w > "/dev/stderr"; exit 1 }
					printf "%s,%s,%s,%s,%.1f,%.2f,%.2f,%.2f\n", l, w, n, k, v["Ir"] / k,
						(v["D1mr"] + v["D1mw"]) / k, v["D1mr"] / k, (v["DLmr"] + v["DLmw"]) / k
				}' "$out" >> "$csv"
			echo "   counted $lib $w N=$n" >&2
		done
	done
done

{
	echo "# callgrind, per op inside op_<workload> (its lib_pass every 64 ops included), K=$K ops,"
	echo "# $(date -u +%Y-%m-%dT%H:%MZ), hrt $(git -C ../.. log -1 --format=%h -- src include 2>/dev/null || echo '?');" \
		"D1 $((d1 / 1024)) KiB ${d1w}-way, LL $((ll / 1048576)) MiB 16-way, 64 B lines"
	echo "# start_cancel counts a start+cancel pair as one op; D1 = D1mr + D1mw"
	awk -F, 'NR == 1 { $0 = "program,workload,N,,Ir/op,D1 miss,D1 rd miss,LL miss" }
		{ printf "%-8s %-13s %8s %8s %9s %10s %9s\n", $1, $2, $3, $5, $6, $7, $8 }' "$csv"
} | tee "$DOCS/callgrind.txt"
sh splice.sh "$DOCS/../PERFORMANCE.md" "$DOCS/callgrind.txt" perf/callgrind.txt
echo "== total run time: $(( $(date +%s) - start )) s; wrote $DOCS/callgrind.txt and $csv" >&2
