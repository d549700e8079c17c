#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs each test program given, keeps its output in $O/test-logs, and ends
# with one summary line "N passed, N failed, N skipped".  A program passes
# when it exits 0 and is skipped when it exits 77 after printing a line
# "SKIP: <what> (install <package>)" - or, for a test that cannot hold on
# this machine as it is (one that measures and needs a quiet machine),
# "SKIP: <what> (needs <condition>)".  SKIPPED='name:package ...' (from the
# Makefile) names what could not even be built; those count as skipped too.
# The packages to install are listed on the line before the summary, the
# conditions after "needs:".  HRT_TEST_NO_SKIP=1 (CI) counts every skip for
# a package as a failure (a missing package cannot hide behind a skip); a
# skip for a condition stays a skip, named with its condition.
# Fuzz replays get their corpus directory as argument.
O=${O:-build}
logs=$O/test-logs
mkdir -p "$logs"
pass=0
fail=0
skip=0
failed=""
skipped=""   # " name (package)" for each skip
packages=""  # each package once
needs=""     # " name (condition)" for each skip for a condition

note_skip() { # name package
	skipped="$skipped $1${2:+ ($2)}"
	case " $packages " in
	*" $2 "*) ;;
	*) packages="${packages:+$packages }$2" ;;
	esac
	if [ "${HRT_TEST_NO_SKIP:-0}" = 1 ]; then
		fail=$((fail + 1))
		failed="$failed $1"
		echo "FAIL $1 (skipped, and HRT_TEST_NO_SKIP=1): install $2"
	else
		skip=$((skip + 1))
		echo "SKIP $1 (install $2)"
	fi
}

for s in ${SKIPPED:-}; do
	note_skip "${s%%:*}" "${s#*:}"
done

for t in "$@"; do
	name=$(basename "$t")
	case "$name" in
	fuzz_*-replay) set -- "fuzz/corpus/${name%-replay}" ;;
	*) set -- ;;
	esac
	start=$(date +%s)
	if "$t" "$@" >"$logs/$name.log" 2>&1; then
		rc=0
	else
		rc=$?
	fi
	if [ "$rc" -eq 0 ]; then
		pass=$((pass + 1))
		echo "PASS $name ($(( $(date +%s) - start )) s)"
	elif [ "$rc" -eq 77 ] && line=$(grep -m1 '^SKIP: .*(install [^)]*)$' "$logs/$name.log"); then
		pkg=$(printf '%s\n' "$line" | sed 's/.*(install \([^)]*\))$/\1/')
		note_skip "$name" "$pkg"
	elif [ "$rc" -eq 77 ] && line=$(grep -m1 '^SKIP: .*(needs [^)]*)$' "$logs/$name.log"); then
		cond=$(printf '%s\n' "$line" | sed 's/.*(needs \([^)]*\))$/\1/')
		skip=$((skip + 1))
		needs="$needs $name ($cond)"
		echo "SKIP $name (needs $cond): ${line#SKIP: }"
	else
		fail=$((fail + 1))
		failed="$failed $name"
		echo "FAIL $name (exit $rc) -- last lines of $logs/$name.log:"
		tail -n 25 "$logs/$name.log" | sed 's/^/    /'
	fi
done
[ -z "$failed" ] || echo "failed:$failed"
[ -z "$skipped" ] || echo "skipped:$skipped; install: $packages"
[ -z "$needs" ] || echo "skipped on this machine as it is:$needs"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
