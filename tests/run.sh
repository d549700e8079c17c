#!/bin/sh
# Runs each test program given, keeps its output in $O/test-logs, and ends
# with one summary line "N passed, N failed".  A program passes when it
# exits 0.  Fuzz replays get their corpus directory as argument.
O=${O:-build}
logs=$O/test-logs
mkdir -p "$logs"
pass=0
fail=0
failed=""
for t in "$@"; do
	name=$(basename "$t")
	case "$name" in
	fuzz_*-replay) set -- "fuzz/corpus/${name%-replay}" ;;
	*) set -- ;;
	esac
	start=$(date +%s)
	if "$t" "$@" >"$logs/$name.log" 2>&1; then
		pass=$((pass + 1))
		echo "PASS $name ($(( $(date +%s) - start )) s)"
	else
		fail=$((fail + 1))
		failed="$failed $name"
		echo "FAIL $name (exit $?) -- last lines of $logs/$name.log:"
		tail -n 25 "$logs/$name.log" | sed 's/^/    /'
	fi
done
[ -z "$failed" ] || echo "failed:$failed"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
