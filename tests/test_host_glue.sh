#!/bin/sh
# SPDX-License-Identifier: MIT
# The glue a program copies to put hrt in libuv or libev stays small: each
# of examples/uv_host.h and ev_host.h (everything between the library and
# the host loop) has fewer than 40 lines of code - lines that are not
# blank, not comments and not preprocessor lines - and uv_plan.h, the one
# README recommends for libuv, fewer than 55 (four libuv handles to make,
# start and close where libev's watchers need no close); README says each
# one's count, and README's libuv lines are a part of uv_plan.h.  The
# examples that use the headers run in make test (examples/uv_echo.c
# through tests/test_uv_echo.c, uv_timers.c, ev_timers.c, ...).
set -u
. "$(dirname "$0")/lib.sh"
scratch err
max() { case $1 in examples/uv_plan.h) echo 55 ;; *) echo 40 ;; esac; }
# The lines of code, trailing comments cut.
code() {
	awk '/^[ \t]*\/\*/ && !/\*\// { c = 1; next } c && /\*\// { c = 0; next } c { next }
	     /^[ \t]*\/\*.*\*\/[ \t]*$/ { next } /^[ \t]*$/ { next } /^#/ { next }
	     { sub(/\/\*.*\*\//, ""); print }' "$1"
}
code_lines() { code "$1" | wc -l | tr -d ' '; }
for h in examples/uv_plan.h examples/uv_host.h examples/ev_host.h; do
	MAX=$(max "$h")
	[ -f "$h" ] || fail "$h: missing"
	k=$(code_lines "$h")
	[ "$k" -gt 5 ] || fail "$h: $k lines of code: the counter is broken"
	[ "$k" -lt "$MAX" ] || fail "$h: $k lines of glue, the rule is under $MAX"
	echo "$h: $k lines of code"
	ok
	# what README says of its size is that count (it said 17 lines of a
	# 49-line file, and 36 of one with 39 lines of code)
	said=$(grep -o "\`$h\`, [0-9]* lines[a-z ]*" README.md | sort -u)
	[ -n "$said" ] || fail "README.md does not say how long $h is"
	echo "$said" | grep -qvx "\`$h\`, $k lines of code" &&
		fail "README.md says '$(echo "$said" | tr '\n' ';')' of $h: it has $k lines of code"
	ok
done
# README's libuv block is a part of uv_plan.h: its calls are a run of
# uv_plan.h's, in the same order (and make test compiles it).
calls() { code "$1" | grep -o 'uv_[a-z_]*(\|hrt_base_[a-z_]*(' | grep -v '^uv_plan_'; }
sed -n '/<!-- uv -->/,/<!-- end -->/p' README.md >"$t/readme"
calls "$t/readme" >"$t/a"
calls examples/uv_plan.h >"$t/b"
[ -s "$t/b" ] || fail "examples/uv_plan.h: no libuv or hrt call found"
[ -s "$t/a" ] || fail "README's libuv lines call no libuv or hrt function"
case " $(tr '\n' ' ' <"$t/b")" in
*" $(tr '\n' ' ' <"$t/a")"*) ;;
*) { echo "README:"; cat "$t/a"; echo "uv_plan.h:"; cat "$t/b"; } >"$t/err"
   fail "README's libuv lines are not a part of examples/uv_plan.h (other calls, or another order)" ;;
esac
ok
echo "test_host_glue: $n checks passed"
