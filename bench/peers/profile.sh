#!/bin/sh
# SPDX-License-Identifier: MIT
# profile.sh - per-operation instruction and cache-miss counts for hrt and
# libev (the fastest peer on start+cancel and re-arm) at N = 10^6 (LIBS, WS
# and N choose programs, op workloads and N).  Called
# by `make profile` with O and DOCS set; writes $DOCS/profile.txt.
#
# perf stat with hardware counters when the CPU exposes them (it subtracts
# a run with K = 0 ops from one with K ops, so set-up cancels out);
# otherwise valgrind's callgrind cache simulation, counting only inside the op loop
# (--toggle-collect), with this machine's L1d and last-level cache sizes.
set -eu
: "${O:?}" "${DOCS:?}"
N=${N:-1000000}
K=${K:-100000}
LIBS=${LIBS:-"hrt libev"}
WS=${WS:-"start_cancel rearm timeout"}
out=$DOCS/profile.txt
mkdir -p "$DOCS"

cache_kb() {	# level type -> KiB of one instance, from sysfs
	for d in /sys/devices/system/cpu/cpu0/cache/index*; do
		if [ "$(cat "$d/level")" = "$1" ] && [ "$(cat "$d/type")" = "$2" ]; then
			sed 's/K$//' "$d/size"; return
		fi
	done
	echo 0
}

{
echo "# per-op counts, N=$N, K=$K ops, $(date -u +%Y-%m-%dT%H:%MZ)"
echo "# cpu: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
if perf stat -x, -e instructions true 2>&1 | grep -q '^[0-9]'; then
	echo "# tool: perf stat (hardware counters), (run with K ops - run with 0 ops) / K"
	echo "library,workload,cycles,instructions,cache-references,cache-misses"
	for lib in $LIBS; do
		for w in $WS; do
			for k in 0 "$K"; do
				perf stat -x, -e cycles,instructions,cache-references,cache-misses \
					"$O/$lib" "$N" ops "$k" "$w" 2> "$O/perf-$lib-$w-$k.txt"
			done
			awk -F, -v l="$lib" -v w="$w" -v k="$K" '
				FNR == NR { a[$3] = $1; next } { b[$3] = $1 }
				END { printf "%s,%s,%.1f,%.1f,%.1f,%.1f\n", l, w,
					(b["cycles"] - a["cycles"]) / k, (b["instructions"] - a["instructions"]) / k,
					(b["cache-references"] - a["cache-references"]) / k,
					(b["cache-misses"] - a["cache-misses"]) / k }' \
				"$O/perf-$lib-$w-0.txt" "$O/perf-$lib-$w-$K.txt"
		done
	done
else
	d1=$(cache_kb 1 Data)
	l2=$(cache_kb 2 Unified)
	l3=$(cache_kb 3 Unified)
	echo "# perf stat: no hardware counters here ('perf stat -e instructions true' says <not supported>)"
	echo "# tool: valgrind --tool=callgrind --cache-sim=yes --branch-sim=yes, counting inside the op loop only (--toggle-collect);"
	echo "#       D1 = ${d1} KiB 8-way; LL = L2 (${l2} KiB 8-way) and LL = L3 (${l3} KiB 16-way), 64 B lines"
	echo "library,workload,instructions,D1_misses,L2_misses,L3_misses,branch_mispredicts"
	for lib in $LIBS; do
		for w in $WS; do
			for ll in "$l2:8" "$l3:16"; do
				valgrind --tool=callgrind --cache-sim=yes --branch-sim=yes \
					--D1=$((d1 * 1024)),8,64 --LL=$((${ll%%:*} * 1024)),${ll#*:},64 \
					--collect-atstart=no --toggle-collect="op_$w*" \
					--callgrind-out-file="$O/cg-$lib-$w-${ll%%:*}.out" \
					"$O/$lib" "$N" ops "$K" "$w" > /dev/null 2>&1
			done
			awk -v l="$lib" -v w="$w" -v k="$K" '
				/^events:/ { for (i = 2; i <= NF; i++) ev[i - 1] = $i; next }
				/^summary:/ { for (i = 2; i <= NF; i++) v[FILENAME, ev[i - 1]] = $i; f[++nf] = FILENAME }
				END { a = f[1]; b = f[2]
					printf "%s,%s,%.1f,%.2f,%.2f,%.2f,%.2f\n", l, w, v[a, "Ir"] / k,
						(v[a, "D1mr"] + v[a, "D1mw"]) / k, (v[a, "DLmr"] + v[a, "DLmw"]) / k,
						(v[b, "DLmr"] + v[b, "DLmw"]) / k, (v[a, "Bcm"] + v[a, "Bim"]) / k }' \
				"$O/cg-$lib-$w-$l2.out" "$O/cg-$lib-$w-$l3.out"
		done
	done
fi
} | tee "$out"
echo "== wrote $out"
