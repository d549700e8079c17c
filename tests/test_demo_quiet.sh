#!/bin/sh
# SPDX-License-Identifier: MIT
# `make demo` builds what it needs quietly: on a tree where the tool and
# bench/coalesce are still to be built, its output has no compiler line
# (they are in $O/demo-build.log), and when the build fails it shows the
# compiler's error and says so.  Works on a copy of this build's objects in
# a scratch build directory, so only the two programs are made.
set -u
. "$(dirname "$0")/lib.sh"
O=${O:-build}
scratch out
mkdir "$t/o"
cp -a "$O/src" "$O/tools" "$O/libhrt.a" "$O/libtools.a" "$O/config.mk" "$t/o/" || fail "copy $O"
make demo O="$t/o" >"$t/out" 2>&1 || fail "make demo: exit $?"
[ -x "$t/o/hrt" ] && [ -x "$t/o/bench/coalesce" ] || fail "make demo did not build hrt and bench/coalesce"
grep -q -- '-o [^ ]*/bench/coalesce ' "$t/o/demo-build.log" || fail "no compiler line in demo-build.log"
ok
grep -E -- ' -o [^ ]+' "$t/out" >"$t/lines" && { fail_log=$t/lines; fail "make demo printed compiler lines"; }
grep -q '^1\. ' "$t/out" || fail "no demo screen"
ok
# A compiler that fails: its message and the failure are shown.
printf '#!/bin/sh\necho "planted: compiler error" >&2\nexit 1\n' >"$t/cc"
chmod +x "$t/cc"
rm -f "$t/o/hrt"
make demo O="$t/o" CC="$t/cc" >"$t/out" 2>&1 && fail "make demo passed with a failing compiler"
grep -q '^planted: compiler error$' "$t/out" || fail "the compiler's error is not shown"
grep -q '^make demo: the build failed' "$t/out" || fail "make demo does not say the build failed"
ok
echo "test_demo_quiet: $n checks passed"
