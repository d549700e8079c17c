#!/bin/sh
# SPDX-License-Identifier: MIT
# The glue a program copies to put hrt in libuv or libev stays small: each
# examples/*_host.h (uv_host.h, ev_host.h: everything between the library
# and the host loop) has fewer than 40 lines of code - lines that are not
# blank, not comments and not preprocessor lines - and README's libuv
# lines are uv_host.h's three functions.  The examples that use the
# headers run in make test (examples/uv_timers.c, ev_timers.c, ...).
set -u
. "$(dirname "$0")/lib.sh"
scratch err
MAX=40
# The lines of code, trailing comments cut.
code() {
	awk '/^[ \t]*\/\*/ && !/\*\// { c = 1; next } c && /\*\// { c = 0; next } c { next }
	     /^[ \t]*\/\*.*\*\/[ \t]*$/ { next } /^[ \t]*$/ { next } /^#/ { next }
	     { sub(/\/\*.*\*\//, ""); print }' "$1"
}
code_lines() { code "$1" | wc -l | tr -d ' '; }
for h in examples/uv_host.h examples/ev_host.h; do
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
# README's libuv block calls what uv_host.h calls, in the same order.
calls() { code "$1" | grep -o 'uv_[a-z_]*(\|hrt_base_[a-z_]*(' | grep -v '^uv_host_'; }
sed -n '/<!-- uv -->/,/<!-- end -->/p' README.md >"$t/readme"
calls "$t/readme" >"$t/a"
calls examples/uv_host.h >"$t/b"
[ -s "$t/b" ] || fail "examples/uv_host.h: no libuv or hrt call found"
cmp -s "$t/a" "$t/b" || { diff "$t/a" "$t/b" >"$t/err"; fail "README's libuv lines and examples/uv_host.h call different functions"; }
ok
echo "test_host_glue: $n checks passed"
