#!/bin/sh
# SPDX-License-Identifier: MIT
# demo.sh - `make demo`: what range timers save, on one 80x24 screen (at
# most 23 lines of at most 79 columns, so the shell's prompt fits under
# it; tests/test_output.sh and test_top.sh check it), a few lines per
# section: the LWN article's example, the shipped synthetic trace (who
# wakes the CPU, what greedy expiry saves there, what 1 ms of slack would
# save, and the same on the shipped recording of a real busy VM), a
# 1-second count of timer interrupts of the coalesced loop against the
# timerfd loop, and the slack applied: 8 sleepers (SLEEPERS, built from
# tests/slack_sleepers.c) traced 2 s as they are and 2 s under hrt run
# --slack 1ms, the replay's prediction beside the measured drop.  Each
# section says why when it cannot run (no xz, no tracepoint, not root)
# instead of failing, so a bare machine gets the story too.  Paths are
# printed relative to the tree (or as a bare name when outside it), so the
# screen is the same wherever the tree is cloned.
#
#   sh tools/demo/demo.sh HRT COALESCE_BENCH TRACE [SLEEPERS]
set -u
hrt=$1 coalesce=$2 trace=$3 sleepers=${4:-}
# a real machine's trace beside the synthetic one, shipped in the same place
real=${trace%/*}/vm-2cpu-busy-2s.tracefs.txt.xz
case $0 in */*) tree=${0%/*}/../.. ;; *) tree=../.. ;; esac
tree=$(cd "$tree" && pwd)
# A path as the screen shows it: relative to the tree, else its name.
rel() {
	case $1 in
	"$tree"/*) printf '%s' "${1#"$tree"/}" ;;
	/*) printf '%s' "${1##*/}" ;;
	*) printf '%s' "$1" ;;
	esac
}
# Wraps sentences to the screen, indented under their section.
say() { fold -s -w 76 | sed 's/ *$//; s/^/   /'; }

echo "1. The article's example: seven range timers, C cancelled after the first pass:"
"$hrt" demo --brief | grep -v '^  C cancelled' || exit 1
"$hrt" demo --out . > demo-files.log 2>&1 || { cat demo-files.log; exit 1; }

echo
if ! command -v xz > /dev/null 2>&1; then
	echo "2. SKIP: reading $(rel "$trace") needs xz (install xz-utils).  With it this"
	echo "   section shows who wakes the CPUs of a recorded machine, that greedy expiry"
	echo "   saves nothing there, and what 1 ms of slack on user-space timers would save."
else
	# off and always, the optimum (replay --csv: policy rows), the top
	# processes by the stock walk's wake-ups, and by what 1 ms saves
	pol=$("$hrt" replay --csv "$trace" 2>/dev/null) || exit 1
	top=$("$hrt" replay --by process --csv "$trace" 2>/dev/null) || exit 1
	sl=$("$hrt" replay --slack 1ms --csv "$trace" 2>/dev/null) || exit 1
	slp=$("$hrt" replay --slack 1ms --by process --csv "$trace" 2>/dev/null) || exit 1
	{
		printf '2. A synthetic trace, %s (8 threads sleeping 0.2-5 ms, 1 s): ' "$(rel "$trace")"
		printf '%s\n' "$top" | awk -F, '$3 == "top" && n < 1 {
			printf "%s%s (%d)", n ? ", " : "most wake-ups from ", $4, $6; n++ } END { if (n) printf "; " }'
		printf '%s\n' "$pol" | awk -F, '$2 == "off" { off = $9; opt = $8 } $2 == "always" { al = $9 }
			END { if (off - al > 0) printf "greedy expiry saves %d of %d.  ", off - al, off
				else if (off == opt) printf "greedy expiry saves nothing (the stock walk is optimal there).  "
				else printf "greedy expiry saves nothing (what it could merge is on other CPUs).  " }'
		printf '%s\n' "$sl" | awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "optimal_wakeups_recorded") c = i }
			$2 == "off" && c { printf "1 ms of slack on user-space timers: the optimum %d -> %d (%+.1f %%)", \
				$c, $8, $c ? 100 * ($8 - $c) / $c : 0 }'
		printf '%s\n' "$slp" | awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "saved_by_slack") c = i }
			$3 == "saved" && c && $c > 0 && n < 1 { printf ", most in %s (%d)", $4, $c; n++ }
			END { printf ".  " }'
		# the same question on a real machine: the tick dominates there
		if [ -f "$real" ]; then
			v=$("$hrt" replay --slack 1ms --csv "$real" 2>/dev/null | awk -F, '
				NR == 1 { for (i = 1; i <= NF; i++) if ($i == "optimal_wakeups_recorded") c = i }
				$2 == "off" && c { print $c, $8 }')
			"$hrt" replay --by function --csv "$real" 2>/dev/null | awk -F, -v f="${real##*/}" -v v="$v" '
				$3 == "top" { all += $5; if ($4 == "tick_nohz_handler") tick = $5 }
				END { split(v, a, " "); if (!all || a[1] == "") exit
					printf "A busy 2-CPU VM (%s): %d -> %d (%+.1f %%): its tick, " \
					"%.0f %% of its %d wake-ups, takes no slack.", f, a[1], a[2],
					a[1] ? 100 * (a[2] - a[1]) / a[1] : 0, 100 * tick / all, all }'
		fi
		echo
	} | say | sed '1s/^   //'
	"$hrt" replay --slack 1ms --svg demo-replay.svg "$trace" > /dev/null 2>&1
fi

echo
# bench/coalesce prints SKIP and exits 0 without the tracepoint.
out=$("$coalesce" --seconds 1 2>&1) || out="SKIP: $out"
case $out in
*SKIP*)
	echo "3. Timer interrupts: not counted here (needs root and the tracepoint"
	echo "   irq_vectors:local_timer_entry).  Measured elsewhere: against a 1 kHz"
	echo "   background, a timerfd loop's wake-up costs 0.95 extra interrupts, a"
	echo "   coalesced one 0.01 (docs/PERFORMANCE.md).  Run: sudo $(rel "$coalesce")"
	;;
*)
	printf '%s\n' "$out" | awk -v bench="$(rel "$coalesce")" '
		$1 == 1 && $2 == 1000 { bg = $5; w[$3] = $4; i[$3] = $6; x[$3] = $7; l[$3] = $9 }
		END {
			print "3. Timer interrupts in 1 s on one CPU beside a 1 kHz background (" bg " alone),"
			print "   one hrt timer re-arming 2-8 ms after each run, with 2 ms of slack:"
			# The background is counted in a run of its own: other load in
			# between shows as a loop that seems to remove interrupts.
			bad = i["off"] < 0.95 * bg || i["on"] < 0.95 * bg
			xo = x["on"] < 0 ? "0" : x["on"]
			printf "     timerfd loop    %4d wake-ups, %5d interrupts%s\n", w["off"], i["off"],
				bad ? "" : ", " x["off"] " extra per wake-up"
			printf "     coalesced loop  %4d wake-ups, %5d interrupts%s\n", w["on"], i["on"],
				bad ? "" : ", " xo " extra per wake-up"
			if (bad)
				s = "Other load disturbed this count: rerun " bench " --seconds 4."
			else if (x["on"] <= 0.25 && x["on"] < x["off"] / 2)
				s = "The coalesced sleep ends on an interrupt that happens anyway."
			else
				s = "Not the gap expected (1 against 0.01): rerun " bench " --repeat 5."
			print s
		}' | fold -s -w 79 | sed 's/ *$//; 5,$s/^\([^ ]\)/   \1/'
	;;
esac
echo
# 4: the kernel's wake-ups on CPU $1 in replay --csv --by cpu output: kernel, off.
cpu_row() { awk -F, -v c="CPU $1" '$3 == "top" && $4 == c { print $5, $6; f = 1 }
	END { if (!f) print 0, 0 }'; }
# 4: the kernel's wake-ups of the sleepers named $1 (replay --csv --by process).
sleepers_sum() { awk -F, -v n="$1 " '$3 == "top" && index($4, n) == 1 { s += $5 } END { print s + 0 }'; }
applied() {
	name=hrt-demo-$$ cpu=$(($(nproc) - 1))
	"$sleepers" "$name" "$cpu" 8 3 > /dev/null & pid=$!
	"$hrt" record --tracefs -d 2 -o demo-before.txt > /dev/null 2>&1; st=$?
	kill $pid; wait $pid 2> /dev/null
	[ $st -eq 0 ] || return 1
	"$hrt" run --slack 1ms -- "$sleepers" "$name" "$cpu" 8 3 > /dev/null & pid=$!
	"$hrt" record --tracefs -d 2 -o demo-after.txt > /dev/null 2>&1; st=$?
	kill $pid; wait $pid 2> /dev/null
	[ $st -eq 0 ] || return 1
	set -- $("$hrt" replay --by cpu --csv demo-before.txt 2>/dev/null | cpu_row "$cpu") \
	    $("$hrt" replay --by cpu --csv --slack 1ms --slack-for "$name" demo-before.txt \
	      2>/dev/null | cpu_row "$cpu") \
	    $("$hrt" replay --by cpu --csv demo-after.txt 2>/dev/null | cpu_row "$cpu") \
	    $("$hrt" replay --by process --csv demo-before.txt 2>/dev/null | sleepers_sum "$name") \
	    $("$hrt" replay --by process --csv demo-after.txt 2>/dev/null | sleepers_sum "$name")
	rm -f demo-before.txt demo-after.txt
	# before: kernel $1, off $2; with the slack: off $4; after: kernel $5
	[ "$1" -gt 0 ] && [ "$2" -gt 0 ] || return 1
	awk -v k0="$1" -v o0="$2" -v o1="$4" -v k1="$5" -v s0="$7" -v s1="$8" -v cpu="$cpu" 'BEGIN {
		p = (o1 - o0) / o0; m = (k1 - k0) / k0
		printf "4. Apply it: 8 sleepers on CPU %d, 2 s as they are, 2 s under hrt run " \
		       "--slack 1ms: before %.0f/s, predicted %.0f/s (%+.0f %%), measured %.0f/s " \
		       "(%+.0f %%)", cpu, k0 / 2, k0 / 2 * (1 + p), 100 * p, k1 / 2, 100 * m
		# the prediction holds the CPU'"'"'s other tasks fixed: say when they moved
		if (m - p > 0.2 * (p < 0 ? -p : p) || p - m > 0.2 * (p < 0 ? -p : p))
			printf "; they differ: the other tasks there, held fixed in the prediction, " \
			       "went from %.0f/s to %.0f/s", (k0 - s0) / 2, (k1 - s1) / 2
		print "." }' | say | sed '1s/^   //'
}
if [ -z "$sleepers" ] || [ "$(id -u)" -ne 0 ] || [ ! -d /sys/kernel/tracing/instances ] ||
	! applied; then
	rm -f demo-before.txt demo-after.txt
	echo "4. Apply it: hrt run --slack 1ms -- CMD.  Not measured here (needs root and"
	echo "   tracefs); as root, hrt slack 1ms --measure 4 NAME shows the drop beside"
	echo "   the prediction."
fi
files="demo-timeline.svg demo-tree.dot"
[ -f demo-tree.svg ] && files="$files demo-tree.svg"
[ -f demo-replay.svg ] && files="$files demo-replay.svg"
rm_missing=
grep -q 'not found' demo-files.log && rm_missing=1
rm -f demo-files.log
echo "pictures: $files"
# on its own line: with it, the line above would pass 79 columns
[ -z "$rm_missing" ] || echo "  (no demo-tree.svg: install graphviz to draw it)"
