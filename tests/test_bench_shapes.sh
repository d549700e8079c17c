#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/shapes (make bench-shapes) at its smallest (--quick: N = 2,000, the
# first section at 1, 10 and 1,000, one round): it runs every shape on both
# bases, prints its three tables with a verdict in every target cell and
# writes a CSV whose rows README and docs/PERFORMANCE.md can quote.  The
# shape of the output only: no figure is judged (timing is the machine's).
# With the build's sanitizers and VERIFY checks when make test has them.
set -u
. "$(dirname "$0")/lib.sh"
B=${O:-build}/bench/shapes
[ -x "$B" ] || fail "$B not built (make $B)"
scratch err
"$B" --quick --csv "$t/s.csv" >"$t/out" 2>"$t/err" || fail "bench/shapes --quick: exit $?"
ok
for s in '== 1. the timer due first' '== 2. one op per shape' '== 3. one pass over'; do
	grep -q "^$s" "$t/out" || fail "no section \"$s\""
done
ok
v='\(met\|not met\)'
# 1: a row per N, two verdicts at its end.
for k in 1 10 1000; do
	grep -q "^$k  .*  $v  *$v *\$" "$t/out" || fail "section 1: no row for N = $k with two verdicts"
done
ok
# 2: none, touch, then 3 shapes x 3 distributions x 2 bases, three verdicts each.
rows=$(grep -c "^\(random\|fifo\|lru\) .* 2000 \(virtual\|fd\) .*$v  *$v  *$v *\$" "$t/out")
[ "$rows" -eq 18 ] || fail "section 2: $rows shape rows with three verdicts, want 18"
grep -q "^none  *-  *0 virtual " "$t/out" || fail "section 2: no row for the clock reads alone"
grep -q "^touch  *-  *2000 virtual " "$t/out" || fail "section 2: no row for the memory touch"
ok
# 3: 3 distributions x 2 bases.
rows=$(grep -c "^\(10ms-1s\|1s-10s\|10s-70s\) *2000 \(virtual\|fd\) .*$v  *$v  *$v *\$" "$t/out")
[ "$rows" -eq 6 ] || fail "section 3: $rows rows with three verdicts, want 6"
ok
# The CSV: a header, six fields a line, a number last, and the rows the
# documents quote.
[ "$(head -n 1 "$t/s.csv")" = "shape,dist,n,base,metric,value" ] || fail "CSV header"
awk -F, 'NR > 1 && (NF != 6 || $6 !~ /^-?[0-9]+(\.[0-9]+)?$/) { print FILENAME ":" NR ": " $0; bad = 1 }
	END { exit bad }' "$t/s.csv" >"$t/err" || fail "CSV lines not shape,dist,n,base,metric,NUMBER"
for k in first,-,1000,fd,ns_per_op first,-,1000,fd,settime_per_op first,-,1,virtual,ns_per_op \
	lru,10s-70s,2000,fd,p999_ns fifo,1s-10s,2000,virtual,max_np_ns random,10ms-1s,2000,fd,iter_max_np_ns \
	periodic,10s-70s,2000,fd,ratio periodic,1s-10s,2000,virtual,step_p999_ns touch,-,2000,virtual,p999_ns; do
	grep -q "^$k," "$t/s.csv" || fail "CSV: no row $k"
done
ok
expect 2 "an unknown option" "$B" --no-such-option
"$B" --sections first --first-ns 5 --rounds 1 --secs 0.01 >"$t/out" 2>"$t/err" || fail "--sections first: exit $?"
grep -q '^5  ' "$t/out" && ! grep -q '^== 2' "$t/out" || fail "--sections first --first-ns 5: not one section of N = 5"
ok
echo "test_bench_shapes: $n checks passed: three tables, every target cell judged, the CSV's rows"
