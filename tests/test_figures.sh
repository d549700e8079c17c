#!/bin/sh
# SPDX-License-Identifier: MIT
# The README's figures equal their sources (tests/check_figures.sh): it
# passes on README.md, which quotes at least the first screen's table that
# way, and fails when a figure is edited away from its source (a planted
# edit of a copy), when a figure is only part of a number on the source's
# line, when a csv row or a file is missing, or when a titled link's text
# is not a number.
set -u
. "$(dirname "$0")/lib.sh"
scratch out
# The verdict README quotes is what the tool prints now (make docs-replay
# writes it); without xz the shipped trace cannot be read.
if command -v xz >/dev/null 2>&1; then
	HRT=${HRT:-build/hrt}
	for v in trace.hrt.xz:replay-verdict vm-2cpu-busy-2s.tracefs.txt.xz:replay-verdict-vm; do
		"$HRT" replay --slack 1ms --verdict "data/${v%%:*}" >"$t/verdict" 2>&1 ||
			fail "hrt replay --verdict of data/${v%%:*}"
		cmp -s "$t/verdict" "docs/perf/${v##*:}.txt" ||
			fail "docs/perf/${v##*:}.txt is not what the tool prints now: make docs-replay"
		ok
	done
fi
sh tests/check_figures.sh README.md >"$t/out" 2>&1 || fail "README.md: a figure differs from its source"
nfig=$(sed -n 's/^check_figures: \([0-9]*\) figures.*/\1/p' "$t/out")
[ "${nfig:-0}" -ge 4 ] || fail "README.md quotes ${nfig:-no} figures through links (want the first screen's table)"
ok
# docs/PERFORMANCE.md's links too (its targets tables quote docs/perf/*.csv).
sh tests/check_figures.sh docs/PERFORMANCE.md >"$t/perf" 2>&1 ||
	{ cat "$t/perf"; fail "docs/PERFORMANCE.md: a figure differs from its source"; }
pfig=$(sed -n 's/^check_figures: \([0-9]*\) figures.*/\1/p' "$t/perf")
ok
# The copies link to the real docs/ through $t/docs.
ln -s "$PWD/docs" "$t/docs"
fails() { # what doc: the check must fail, naming doc:line
	sh tests/check_figures.sh "$2" >"$t/out" 2>&1 && fail "check passed: $1"
	grep -q "^$2:[0-9]*: " "$t/out" || fail "no $2:LINE in the report: $1"
	ok
}
# Planted: the first figure of README.md one higher in its last digit.
awk '!done && match($0, /\[[0-9][0-9.,]*\]\(/) {
	f = substr($0, RSTART + 1, RLENGTH - 3); d = substr(f, length(f), 1)
	g = substr(f, 1, length(f) - 1) (d == 9 ? 8 : d + 1)
	$0 = substr($0, 1, RSTART) g substr($0, RSTART + RLENGTH - 2); done = 1 } { print }' \
	README.md >"$t/README.md"
cmp -s README.md "$t/README.md" && fail "could not plant an edit"
fails "a README figure edited away from its source" "$t/README.md"

src='docs/REPLAY.md "the optimum drops from"'
echo "x [1665]($src) y" >"$t/good.md"
sh tests/check_figures.sh "$t/good.md" >"$t/out" 2>&1 || fail "a figure on its source's line"
ok
echo "x [166]($src)" >"$t/part.md"
fails "a figure that is only part of a number on the line" "$t/part.md"
echo "x [1666]($src)" >"$t/off.md"
fails "a figure not on the line" "$t/off.md"
echo 'x [1.0](docs/perf/peers.csv "hrt,no_such_workload,1000,ns_per_op")' >"$t/row.md"
fails "a csv row that does not exist" "$t/row.md"
echo 'x [1.0](docs/perf/missing.csv "hrt")' >"$t/file.md"
fails "a source file that does not exist" "$t/file.md"
echo 'x [fast](docs/perf/peers.csv "hrt,start_cancel,1000,ns_per_op")' >"$t/word.md"
fails "a titled link whose text is not a figure" "$t/word.md"
echo "test_figures: $n checks passed: README.md's $nfig and docs/PERFORMANCE.md's $pfig figures equal their sources"
