#!/bin/sh
# SPDX-License-Identifier: MIT
# test_output.sh - one output path for every file the tools write, and one
# line for a failed stdout: replay, sim and demo against /dev/full, a closed
# stdout, FIFOs, symlinks and regular files; and `replay --slack` from the
# command line (bad values are usage errors that write nothing, every
# output format accepts it).  Each check names itself on failure; the
# script exits 1 at the first one.
set -u
. "$(dirname "$0")/lib.sh"
tool_setup output
# WHAT FILE: FILE fits an 80x24 terminal with the shell's prompt under it:
# at most 23 lines of at most 79 columns.
fits_screen() {
	[ "$(wc -l < "$2")" -le 23 ] || fail "$1: $(wc -l < "$2") lines, more than a screen"
	awk 'length($0) > 79 { print FILENAME ":" FNR ": " length($0) " columns"; bad = 1 } END { exit bad }' "$2" ||
		fail "$1: a line wider than 79 columns"
	ok
}
one_line() { # WHAT REGEX: stderr is exactly one line, matching REGEX
	[ "$(wc -l < "$d/err")" -eq 1 ] || fail "$1: stderr is not one line"
	grep -q -- "$2" "$d/err" || fail "$1: stderr lacks '$2'"
	ok
}

# A perf trace: two sleepers close together and a kernel tick.
t=$d/trace.txt
cat > "$t" <<'EOF'
  sleeper 100 [000] 1.000000000: timer:hrtimer_start: hrtimer=0xa function=hrtimer_wakeup expires=1010000000 softexpires=1010000000 mode=0x1
  sleeper 100 [000] 1.000000000: timer:hrtimer_start: hrtimer=0xb function=hrtimer_wakeup expires=1010500000 softexpires=1010500000 mode=0x1
  swapper 0 [000] 1.000000000: timer:hrtimer_start: hrtimer=0xc function=tick_nohz_handler expires=1012000000 softexpires=1012000000 mode=0x0
  swapper 0 [000] 1.100000000: timer:hrtimer_start: hrtimer=0xd function=tick_nohz_handler expires=1900000000 softexpires=1900000000 mode=0x0
EOF

# --- failed stdout: exactly one line naming the subcommand ---------------
expect 1 "replay > /dev/full" sh -c "'$HRT' replay '$t' > /dev/full"
one_line "replay > /dev/full" '^hrt replay: stdout: No space left on device$'
expect 1 "replay >&-" sh -c "'$HRT' replay '$t' >&-"
one_line "replay >&-" '^hrt replay: stdout: Bad file descriptor$'
expect 1 "sim --svg - > /dev/full" sh -c "'$HRT' sim --busy 50 --duration 10ms --svg - > /dev/full"
one_line "sim --svg - > /dev/full" '^hrt sim: stdout: No space left on device$'
expect 1 "replay --svg /dev/full" sh -c "'$HRT' replay --svg /dev/full '$t' > /dev/null"
one_line "replay --svg /dev/full" '^hrt replay: /dev/full: No space left on device$'
expect 1 "sim --svg /dev/full" sh -c "'$HRT' sim --busy 50 --duration 10ms --svg /dev/full > /dev/null"
one_line "sim --svg /dev/full" '^hrt sim: /dev/full: No space left on device$'
# A replay whose stdout fails leaves no picture, and an old one as it was.
expect 1 "replay --svg F > /dev/full" sh -c "'$HRT' replay --svg '$d/r.svg' '$t' > /dev/full"
[ ! -e "$d/r.svg" ] || fail "replay --svg F > /dev/full left F"; ok
echo old > "$d/r.svg"
expect 1 "replay --svg OLD > /dev/full" sh -c "'$HRT' replay --svg '$d/r.svg' '$t' > /dev/full"
[ "$(cat "$d/r.svg")" = old ] || fail "replay --svg OLD > /dev/full changed OLD"; ok
[ -z "$(ls -A "$d" | grep '^\.r\.svg')" ] || fail "a temporary was left beside r.svg"; ok

# --- --svg and the demo's files: write through FIFOs and symlinks -------
expect 0 "replay --svg F" sh -c "'$HRT' replay --svg '$d/r.svg' '$t' > /dev/null"
grep -q '</svg>' "$d/r.svg" || fail "replay --svg F wrote no SVG"; ok
mkfifo "$d/fifo"
cat "$d/fifo" > "$d/from-fifo" &
expect 0 "replay --svg FIFO" sh -c "'$HRT' replay --svg '$d/fifo' '$t' > /dev/null"
wait
[ -p "$d/fifo" ] || fail "replay --svg FIFO replaced the FIFO"; ok
grep -q '</svg>' "$d/from-fifo" || fail "replay --svg FIFO: nothing came through"; ok
echo x > "$d/target.svg"
ln -s target.svg "$d/link.svg"
expect 0 "sim --svg SYMLINK" sh -c "'$HRT' sim --busy 50 --duration 10ms --svg '$d/link.svg' > /dev/null"
[ -L "$d/link.svg" ] || fail "sim --svg SYMLINK replaced the link"; ok
grep -q '</svg>' "$d/target.svg" || fail "sim --svg SYMLINK: target not written"; ok
mkdir "$d/demo"
ln -s ../target.svg "$d/demo/demo-timeline.svg"
expect 0 "demo --out DIR (timeline a symlink)" sh -c "'$HRT' demo --out '$d/demo' > /dev/null"
[ -L "$d/demo/demo-timeline.svg" ] || fail "demo replaced a symlinked demo-timeline.svg"; ok
grep -q 'Timers A' "$d/target.svg" || fail "demo: symlink target not written"; ok
expect 1 "demo --out DIR/ > /dev/full" sh -c "'$HRT' demo --out '$d/demo' > /dev/full"
one_line "demo > /dev/full" '^hrt demo: stdout: No space left on device$'

# --- replay --slack from the command line --------------------------------
for v in -1ms 5x 5 '' 1.ms 1e3ms 9223372036854775808ns 292471208678y 10000000000s 1000001%; do
	expect 2 "replay --slack '$v'" sh -c "'$HRT' replay --slack '$v' --svg '$d/bad.svg' '$t' > '$d/out'"
	one_line "replay --slack '$v'" "^hrt replay: --slack '"
	[ ! -s "$d/out" ] || fail "replay --slack '$v' wrote stdout"; ok
	[ ! -e "$d/bad.svg" ] || fail "replay --slack '$v' wrote --svg"; ok
done
expect 2 "replay --slack-for a,,b" sh -c "'$HRT' replay --slack 1ms --slack-for a,,b '$t' > '$d/out'"
one_line "--slack-for a,,b" "^hrt replay: --slack-for 'a,,b'"
expect 2 "replay --slack-for without --slack" sh -c "'$HRT' replay --slack-for all '$t' > '$d/out'"
one_line "--slack-for alone" '^hrt replay: --slack-for needs --slack$'
# A usage error after --slack-for (which allocates) is still exit 2, one
# line, nothing leaked: under ASan+UBSan a leak turns the exit status into
# LeakSanitizer's and fails this check.
for bad in "--policy bogus" "--idle bogus" "--by bogus" "--json --csv" "--no-such-option"; do
	# shellcheck disable=SC2086
	expect 2 "replay --slack-for firefox $bad" sh -c \
		"'$HRT' replay --slack 1ms --slack-for firefox,chromium $bad '$t' > '$d/out' 2>/dev/null"
	[ ! -s "$d/out" ] || fail "replay --slack-for firefox $bad wrote stdout"; ok
done
# Two sleepers 0.5 ms apart: 1 ms of slack merges them (3 -> 2 wake-ups).
expect 0 "replay --slack 1ms --verdict" sh -c "'$HRT' replay --slack 1ms --verdict '$t' > '$d/out'"
grep -q 'with 1 ms of slack on user-space timers, the optimum drops from 3 to 2 wake-ups (-33.3 %)' \
	"$d/out" || fail "replay --slack 1ms --verdict: $(cat "$d/out")"; ok
expect 0 "replay --slack 1ms --json" sh -c "'$HRT' replay --slack 1ms --json '$t' > '$d/out'"
grep -q '"optimal_wakeups": 2, .*"optimal_wakeups_recorded": 3, "slack": {"spec": "1ms", "ns": 1000000, "for": "user"' \
	"$d/out" || fail "replay --slack --json"; ok
if command -v python3 > /dev/null; then
	python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$d/out" || fail "--slack --json is not JSON"
	ok
fi
expect 0 "replay --slack 1ms --csv" sh -c "'$HRT' replay --slack 1ms --csv '$t' > '$d/out'"
grep -q ',1ms,user,3,2,1,0,0$' "$d/out" || fail "replay --slack --csv: $(cat "$d/out")"; ok
expect 0 "replay --slack 1ms --by process --csv" \
	sh -c "'$HRT' replay --slack 1ms --by process --csv '$t' > '$d/out'"
grep -q '^.*,process,saved,sleeper 100,.*,1,2,1,1,0$' "$d/out" || fail "--by --csv saved_slack: $(cat "$d/out")"; ok
expect 0 "replay --slack 100% --svg" sh -c "'$HRT' replay --slack 100% --svg '$d/s.svg' '$t' > '$d/out'"
grep -q 'with a slack of 100 % of the timeout on user-space timers' "$d/s.svg" || fail "--svg title"; ok
grep -q 'saved_slack' "$d/out" || fail "table without saved_slack"; ok
# --- make demo (tools/demo/demo.sh) on a bare and on a full machine ----------
# Bare: a PATH without xz and dot, and an interrupt counter that is not
# there (bench/coalesce prints SKIP).  Every section still has its line.
repo=$(pwd)
mkdir "$d/bin" "$d/bare" "$d/full"
for c in sh fold sed awk grep cut head rm cat; do
	p=$(command -v "$c") && ln -s "$p" "$d/bin/$c"
done
printf '#!/bin/sh\necho "SKIP: no tracepoint"\n' > "$d/nocount"
chmod +x "$d/nocount"
(cd "$d/bare" && PATH=$d/bin sh "$repo/tools/demo/demo.sh" "$HRT" "$d/nocount" \
	"$repo/data/trace.hrt.xz" > out 2>err)
[ $? -eq 0 ] || fail "demo.sh on a bare machine failed: $(cat "$d/bare/err")"; ok
o=$d/bare/out
grep -q '^1\. The article' "$o" || fail "bare demo: no section 1"; ok
grep -q 'always          2 wake-ups' "$o" || fail "bare demo: no article wake-ups"; ok
grep -q '^2\. SKIP: reading .*needs xz (install xz-utils)' "$o" || fail "bare demo: no xz line"; ok
grep -q '^3\. Timer interrupts: not counted here' "$o" || fail "bare demo: no counter line"; ok
grep -q '^4\. Apply it: hrt run --slack 1ms -- CMD.  Not measured here' "$o" ||
	fail "bare demo: no apply line"; ok
grep -q 'no demo-tree.svg: install graphviz to draw it' "$o" || fail "bare demo: no Graphviz note"; ok
fits_screen "bare demo" "$o"
[ ! -s "$d/bare/err" ] || fail "bare demo wrote to stderr: $(cat "$d/bare/err")"; ok
# build-essential's machine: xz (dpkg-dev brings it), no Graphviz - the
# replay's picture is drawn, the tree's is not, and the screen still fits
if command -v xz > /dev/null 2>&1; then
	mkdir "$d/mid" "$d/midbin"
	for c in "$d"/bin/*; do ln -s "$(readlink "$c")" "$d/midbin/${c##*/}"; done
	ln -s "$(command -v xz)" "$d/midbin/xz"
	(cd "$d/mid" && PATH=$d/midbin sh "$repo/tools/demo/demo.sh" "$HRT" "$d/nocount" \
		"$repo/data/trace.hrt.xz" > out 2>err)
	[ $? -eq 0 ] || fail "demo.sh without Graphviz failed: $(cat "$d/mid/err")"; ok
	grep -q '^pictures: demo-timeline.svg demo-tree.dot demo-replay.svg$' "$d/mid/out" ||
		fail "demo without Graphviz: no replay picture"; ok
	grep -q 'no demo-tree.svg: install graphviz to draw it' "$d/mid/out" ||
		fail "demo without Graphviz: no Graphviz note"; ok
	fits_screen "demo without Graphviz" "$d/mid/out"
	[ ! -s "$d/mid/err" ] || fail "demo without Graphviz wrote to stderr: $(cat "$d/mid/err")"; ok
fi
# Full: xz and Graphviz as installed, a canned interrupt count.
if command -v xz > /dev/null 2>&1; then
	cat > "$d/count" <<'EOF2'
#!/bin/sh
echo "CPU 1, 1 s per run"
echo "timers bg_hz co     wakeups   bg_irqs      irqs    extra     late     late%"
echo "     1  1000 off        145      1251      1389     0.95      144    100.0%"
echo "     1  1000 on         169      1251      1253     0.01        3      1.8%"
EOF2
	chmod +x "$d/count"
	(cd "$d/full" && sh "$repo/tools/demo/demo.sh" "$HRT" "$d/count" "$repo/data/trace.hrt.xz" \
		> out 2>err)
	[ $? -eq 0 ] || fail "demo.sh on a full machine failed: $(cat "$d/full/err")"; ok
	o=$d/full/out
	tr -s '\n ' '  ' < "$o" > "$d/full/joined"	# sentences are folded
	grep -q 'most wake-ups from hrt 12290 (3838)' "$d/full/joined" || fail "full demo: who wakes the CPU"; ok
	grep -q 'greedy expiry saves nothing (the stock walk is optimal there)' "$d/full/joined" ||
		fail "full demo: greedy's nothing, and why"; ok
	grep -q '1 ms of slack on user-space timers: the optimum 8035 -> [0-9]* (-[0-9.]* %), most in hrt 12290' \
		"$d/full/joined" ||
		fail "full demo: what slack saves"; ok
	# the timerfd loop runs at its hard expiry by construction: no "100.0%
	# past hard" that reads as a failure
	grep -q 'timerfd loop     145 wake-ups,  1389 interrupts, 0.95 extra per wake-up$' "$o" &&
		grep -q 'coalesced loop   169 wake-ups,  1253 interrupts, 0.01 extra per wake-up$' "$o" ||
		fail "full demo: the interrupt count"; ok
	! grep -q '100.0%' "$o" || fail "full demo: 100 % past hard, unexplained"; ok
	grep -q 'ends on an interrupt that happens anyway' "$o" ||
		fail "full demo: why the coalesced loop adds no interrupt"; ok
	# what the trace is: synthetic, and the real machine's beside it
	grep -q "^2\. A synthetic trace, data/trace.hrt.xz (8 threads" "$o" ||
		fail "full demo: the synthetic trace is not called so"; ok
	grep -q 'A busy 2-CPU VM (vm-2cpu-busy-2s.tracefs.txt.xz): 1008 -> [0-9]* (-[0-9.]* %): its tick, [0-9]* % of its 1016 wake-ups, takes no slack' "$d/full/joined" ||
		fail "full demo: no real machine beside the synthetic trace"; ok
	# the claim only where the figures support it
	sed 's/1253     0.01/1350     0.59/' "$d/count" > "$d/count3"
	chmod +x "$d/count3"
	(cd "$d/full" && sh "$repo/tools/demo/demo.sh" "$HRT" "$d/count3" "$repo/data/trace.hrt.xz" \
		> out3 2>&1)
	grep -q 'coalesced loop   169 wake-ups,  1350 interrupts, 0.59 extra per wake-up' "$d/full/out3" &&
		! grep -q 'happens anyway' "$d/full/out3" && grep -q 'Not the gap expected' "$d/full/out3" ||
		fail "full demo: the interrupt claim printed against its figures"; ok
	fits_screen "full demo, the gap not as expected" "$d/full/out3"
	# A count disturbed by other load says so instead of a negative cost.
	sed 's/1251/1500/' "$d/count" > "$d/count2"
	chmod +x "$d/count2"
	(cd "$d/full" && sh "$repo/tools/demo/demo.sh" "$HRT" "$d/count2" "$repo/data/trace.hrt.xz" \
		> out2 2>&1)
	grep -q 'Other load disturbed this count' "$d/full/out2" ||
		fail "full demo: a disturbed count is not called so"; ok
	fits_screen "full demo, a disturbed count" "$d/full/out2"
	[ -s "$d/full/demo-replay.svg" ] && [ -s "$d/full/demo-timeline.svg" ] ||
		fail "full demo: pictures missing"; ok
	grep -q '^4\. Apply it: hrt run --slack 1ms -- CMD' "$o" || fail "full demo: no apply line"; ok
	fits_screen "full demo" "$o"
	# The same screen wherever the tree is: through a long symlinked path
	# (the demo names files relative to the tree), and from a directory
	# with a long name.
	long=$d/a/very/long/path/to/where/someone/keeps/their/projects/timers
	mkdir -p "$long/cwd"
	ln -s "$repo" "$long/hrt"
	(cd "$long/cwd" && sh "$long/hrt/tools/demo/demo.sh" "$HRT" "$d/count" "$long/hrt/data/trace.hrt.xz" \
		> out 2>err)
	[ $? -eq 0 ] || fail "demo.sh through a long symlinked path failed: $(cat "$long/cwd/err")"; ok
	grep -v '^4\. ' "$o" > "$d/full/short"
	grep -v '^4\. ' "$long/cwd/out" > "$d/full/long"
	cmp -s "$d/full/short" "$d/full/long" ||
		fail "demo.sh through a long symlinked path: another screen: $(diff "$d/full/short" "$d/full/long")"; ok
fi
# --- progress on a terminal ---------------------------------------------
# A trace that arrives slowly through a pipe (no size known: bytes, events,
# rate), under script(1) for a terminal on stderr.  The line is rewritten
# in place (\r ... ESC[K) and erased at the end; --quiet and a stderr that
# is not a terminal show nothing.
if command -v script > /dev/null 2>&1 && command -v xz > /dev/null 2>&1; then
	xz -dc data/trace.hrt.xz > "$d/big.txt"
	drip="(head -c 3000000 '$d/big.txt'; sleep 1; tail -c +3000001 '$d/big.txt')"
	for c in "replay --verdict" "convert"; do
		name=${c%% *}
		script -qec "sh -c \"$drip | '$HRT' $c - > '$d/p.out'\"" "$d/tty" > /dev/null 2>&1
		tr '\r\033' 'RE' < "$d/tty" > "$d/tty.txt"
		grep -q "Rhrt $name: <stdin>: [0-9.]* [kM]*B, [0-9.]* [k]* *events, [0-9.]* [kM]*B/s" \
			"$d/tty.txt" || fail "$c on a terminal: no progress line: $(cat "$d/tty.txt")"; ok
		grep -q 'RE\[K' "$d/tty.txt" || fail "$c: progress line not erased"; ok
		script -qec "sh -c \"$drip | '$HRT' $c --quiet - > '$d/p.out'\"" "$d/tty" > /dev/null 2>&1
		! grep -q "hrt $name: <stdin>" "$d/tty" || fail "$c --quiet showed progress"; ok
		sh -c "$drip | '$HRT' $c - > '$d/p.out' 2> '$d/p.err'"
		! grep -q "events" "$d/p.err" || fail "$c: progress on a stderr that is no terminal"; ok
	done
fi
# The pictures carry their keys: the replay's bars (a rate, not a solid
# band), the kernel's "after hard" and kernel*; the demo tree's red/black.
"$HRT" replay --svg "$d/key.svg" tests/data/tracefs-real.txt.gz >/dev/null 2>&1 || fail "replay --svg"
grep -q 'a bar per [0-9.]* ms, as tall as its wake-ups (the tallest: [0-9]*)' "$d/key.svg" &&
	grep -q 'after hard: the kernel ran the timer after its hard expiry' "$d/key.svg" ||
	fail "replay --svg: no key for the bars or the kernel's after hard"; ok
# the rows' bars are of more than one height at 1 s (a line per pixel was a band)
awk -F'"' '/<rect/ && /fill="#d62728"/ { for (i = 1; i < NF; i++) if ($i ~ / height=$/) h[$(i + 1)] = 1 }
	END { n = 0; for (k in h) n++; exit n < 3 }' "$d/key.svg" || fail "replay --svg: off's row is a solid band"; ok
{ printf ' a-1 [000] d..1. 5.000000: hrtimer_start: hrtimer=0x1 function=f expires=5000100000 softexpires=5000050000 mode=ABS\n'
  printf ' a-1 [000] d..1. 5.000200: hrtimer_start: hrtimer=0x2 function=f expires=5000300000 softexpires=5000300000 mode=ABS\n'
  printf ' <idle>-0 [000] d.h1. 5.000301: hrtimer_expire_entry: hrtimer=0x2 function=f now=5000300500\n'; } >"$d/lost.txt"
"$HRT" replay --svg "$d/lost.svg" "$d/lost.txt" >/dev/null 2>&1
grep -q 'kernel\*: incomplete - the recording lost some expiries' "$d/lost.svg" || fail "replay --svg: kernel* unexplained"; ok
"$HRT" demo --out "$d" >/dev/null || fail "demo --out"
grep -q 'Black and red fill: each node.s colour in the red-black tree (timers by hard expiry)' "$d/demo-tree.dot" ||
	fail "demo-tree.dot: no key for red and black"; ok

# A negative saving in a group table is explained under it (the shipped
# trace with 1 ms of slack on everything has some).
if command -v xz >/dev/null 2>&1; then
	"$HRT" replay --slack 1ms --slack-for all --by process data/trace.hrt.xz >"$d/neg" 2>/dev/null ||
		fail "replay --slack of the shipped trace"
	awk '/^process / { t = 1; next } /^$/ { t = 0 } t && / -[0-9]/ { neg = 1 } END { exit !neg }' "$d/neg" ||
		fail "the shipped trace shows no negative saving any more: pick another"
	grep -q '^A negative saving: ' "$d/neg" || fail "negative savings printed without their sentence"
	ok
fi
# The optimum is a bound on every policy: in the verdict, the table, the
# JSON (total and every group) and the CSV (policy rows and group rows),
# with and without --slack, on the shipped trace (its sleep chains put
# d4ebe1c's optimum at 1752 above off's 1676) and on a synthetic one: a
# 1 ms relative sleep chain beside a 2.1 ms absolute poller on one CPU
# (d4ebe1c: optimum 299 above 164 for every policy).
chain_trace "$d/chain.txt"
bounded() { # TRACE SLACK-OPTIONS...
	tr=$1; shift
	"$HRT" replay "$@" --verdict "$tr" >"$d/b.v" 2>/dev/null || fail "replay $* --verdict $tr"
	awk '/this trace needs/ { for (i = 1; i <= NF; i++) { if ($i == "wake-ups") w[++n] = $(i - 1) + 0
		if ($i == "is") o = $(i + 1) + 0 } }
		END { for (k in w) if (w[k] < o) bad = 1; exit bad || !n }' "$d/b.v" ||
		fail "replay $* $tr: the verdict's optimum is above a policy: $(grep 'this trace needs' "$d/b.v")"
	"$HRT" replay "$@" "$tr" >"$d/b.t" 2>/dev/null || fail "replay $* $tr"
	awk '$1 == "optimum" && NF >= 3 { o = $2 } $1 ~ /^(off|idle|always)$/ { w[$1] = $2 }
		END { for (k in w) if (w[k] < o) bad = 1; exit bad || o == "" }' "$d/b.t" ||
		fail "replay $* $tr: the table's optimum row is above a policy row"
	"$HRT" replay "$@" --json "$tr" >"$d/b.j" 2>/dev/null || fail "replay $* --json $tr"
	if command -v python3 >/dev/null; then
		python3 - "$d/b.j" <<'PY' || fail "replay $* --json $tr: an optimum above a policy"
import json, sys
d = json.load(open(sys.argv[1]))
bad = [p for p, r in d["policies"].items() if r["wakeups"] < d["optimal_wakeups"]]
for by in d["wakeups_by"].values():
    for g in by["top"] + by["saved"]:
        if "optimum" in g:
            bad += [g["name"] + " " + p for p in d["policies"] if g[p] < g["optimum"]]
if bad:
    print(bad)
    sys.exit(1)
PY
	fi
	"$HRT" replay "$@" --csv "$tr" >"$d/b.c" 2>/dev/null || fail "replay $* --csv $tr"
	awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
		$2 != "kernel" && $(c["wakeups"]) < $(c["optimal_wakeups"]) { bad = 1 }
		END { exit bad }' "$d/b.c" || fail "replay $* --csv $tr: optimal_wakeups above a policy row"
	for by in process cpu; do
		"$HRT" replay "$@" --by $by --csv "$tr" >"$d/b.g" 2>/dev/null || fail "replay --by $by --csv"
		awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
			c["optimum"] { for (k = 6; k <= 8; k++) if ($k < $(c["optimum"])) bad = bad " " $4 }
			END { if (bad) print bad; exit bad != "" }' "$d/b.g" ||
			fail "replay $* --by $by --csv $tr: a group's optimum above its policies"
	done
	ok
}
bounded "$d/chain.txt"
bounded "$d/chain.txt" --slack 1ms
bounded "$d/chain.txt" --slack 1ms --slack-for all
bounded "$d/chain.txt" --slack 50%
if command -v xz >/dev/null 2>&1; then
	bounded data/trace.hrt.xz
	bounded data/trace.hrt.xz --slack 1ms
	bounded data/trace.hrt.xz --slack 1ms --slack-for all
	bounded data/vm-2cpu-busy-2s.tracefs.txt.xz --slack 1ms
fi
echo "test_output.sh: $n checks passed"
