#!/bin/sh
# SPDX-License-Identifier: MIT
# The ABI check (tests/check_abi.sh, make abi-check) passes on the library
# this build made, and on it against a baseline of the release before
# (functions added in a new version node), and fails on planted
# incompatible changes: a function removed (relinked with it left out of
# libhrt.map, or without the newest node), one moved to another node, a
# field inserted at the start of struct hrt_stats (the sources rebuilt
# against a changed hrt.h).
# A field appended to hrt_stats passes (abi/libhrt.abignore: hrt_stats
# travels with its size), and so does the inserted field once the soname is
# bumped and a baseline for the new soname written.  Needs abigail-tools.
set -u
. "$(dirname "$0")/lib.sh"
need abidiff "ABI check" abigail-tools
need abidw "ABI check" abigail-tools
O=${O:-build}
scratch out
check() { sh tests/check_abi.sh "$@" >"$t/out" 2>&1; }
# The build's objects linked into $1/libhrt.so with version script $2.
relink() { # dir map what
	cc ${SAN_FLAGS:-} -shared -Wl,-soname,libhrt.so.1 -Wl,--version-script="$2" \
		-o "$1/libhrt.so" "$O"/src/*.o -pthread -lm || fail "cannot relink $3"
}
show() { sed "s/^/  /" "$t/out"; }

check "$O/libhrt.so" || fail "the ABI check fails on $O/libhrt.so"
ok

# Removed: hrt_version left out of the version script.
mkdir "$t/rm"
grep -v 'hrt_version;' src/libhrt.map >"$t/rm/map"
relink "$t/rm" "$t/rm/map" "without hrt_version"
check "$t/rm/libhrt.so" && fail "a removed function passed the ABI check"
grep -q 'hrt_version' "$t/out" || fail "the check's report does not name the removed hrt_version"
ok

# The last release stood in for by this build without the map's newest
# node (HRT_1.1: 1.1.0's functions) and a baseline written from it: this
# build only adds functions in a new node, which passes.  Against abi/,
# that library lacks the newest node's functions: fails (the baseline is
# the newest release's, written when it added them).
newest=$(awk '/^[A-Za-z][A-Za-z0-9_.]*[ \t]*\{/ { n = $1 } END { print n }' src/libhrt.map)
[ -n "$newest" ] && [ "$newest" != HRT_1.0 ] || fail "src/libhrt.map: no node after HRT_1.0"
mkdir -p "$t/old/abi"
sed "/^$newest[ \t]*{/,/^}/d" src/libhrt.map >"$t/old/map"
relink "$t/old" "$t/old/map" "without node $newest"
abidw --headers-dir include --no-corpus-path --no-comp-dir-path \
	--out-file "$t/old/abi/libhrt.so.1.abi" "$t/old/libhrt.so" || fail "abidw (without $newest)"
check "$O/libhrt.so" "$t/old/abi" || { show; fail "functions added in node $newest failed the ABI check"; }
ok
check "$t/old/libhrt.so" && fail "a library without node $newest's functions passed against abi/"
grep -q "@$newest" "$t/out" || fail "the check's report names no function of node $newest"
ok

# Moved: hrt_version from HRT_1.0 into the newest node (a program linked
# against hrt_version@HRT_1.0 would not start).
mkdir "$t/mv"
sed -e '/^HRT_1\.0[ \t]*{/,/^}/{/[ \t]hrt_version;/d}' \
	-e "/^$newest[ \t]*{/,/^}/s/^[ \t]*global:/&\n\t\thrt_version;/" src/libhrt.map >"$t/mv/map"
relink "$t/mv" "$t/mv/map" "with hrt_version moved"
nm -D "$t/mv/libhrt.so" | grep -q "hrt_version@@$newest\$" || fail "cannot move hrt_version to $newest"
check "$t/mv/libhrt.so" && fail "hrt_version moved from HRT_1.0 to $newest passed the ABI check"
grep -q 'hrt_version@@HRT_1.0' "$t/out" || fail "the check's report does not name hrt_version@@HRT_1.0"
ok

# The library's sources built against hrt.h with a field added to struct
# hrt_stats: at its start (AT=start) or its end; soname libhrt.so.$2.
planted() { # name at soversion
	mkdir -p "$t/$1/include"
	if [ "$2" = start ]; then
		sed 's/^struct hrt_stats {$/&\n\tuint64_t planted;/' include/hrt.h
	else
		sed '/^struct hrt_stats {$/,/^};$/s/^};$/\tuint64_t planted;\n};/' include/hrt.h
	fi >"$t/$1/include/hrt.h"
	grep -q 'planted;' "$t/$1/include/hrt.h" || fail "cannot plant a field into hrt_stats"
	for c in src/*.c; do
		cc -std=c11 -D_GNU_SOURCE -I"$t/$1/include" -Isrc -pthread -fPIC -g -O1 -DHRT_BUILDING \
			-fvisibility=hidden -c "$c" -o "$t/$1/$(basename "$c" .c).o" || fail "cannot build $c ($1)"
	done
	cc -shared -Wl,-soname,libhrt.so.$3 -Wl,--version-script=src/libhrt.map \
		-o "$t/$1/libhrt.so" "$t/$1"/*.o -pthread -lm || fail "cannot link the $1 library"
}
planted inserted start 1
check "$t/inserted/libhrt.so" && fail "a field inserted into hrt_stats passed the ABI check"
grep -q 'hrt_stats' "$t/out" || fail "the check's report does not name hrt_stats"
show
ok
planted appended end 1
check "$t/appended/libhrt.so" || fail "a field appended to hrt_stats failed the ABI check"
ok

# The inserted field with the soname bumped: no baseline for libhrt.so.2
# yet (fails, saying how to write one); with one written, it passes.
planted bumped start 2
mkdir "$t/abi"
check "$t/bumped/libhrt.so" "$t/abi" && fail "a new soname passed without a baseline"
grep -q 'make abi-baseline' "$t/out" || fail "no hint to write the new soname's baseline"
abidw --headers-dir "$t/bumped/include" --no-corpus-path --no-comp-dir-path \
	--out-file "$t/abi/libhrt.so.2.abi" "$t/bumped/libhrt.so" || fail "abidw"
check "$t/bumped/libhrt.so" "$t/abi" || fail "the bumped soname with its baseline failed the check"
ok
echo "test_abi: $n checks passed: the build's ABI as in abi/; functions added in $newest pass;" \
	"a removed or moved function and an inserted field fail"
