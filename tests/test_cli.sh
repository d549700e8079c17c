#!/bin/sh
# SPDX-License-Identifier: MIT
# test_cli.sh - the hrt command from outside, as an attacker would use it:
# output to /dev/full or a closed stdout, -o on symlinks, devices, FIFOs,
# modes and the umask, and bad tool input.  Each check names itself on
# failure; the script exits 1 at the first one (tests/lib.sh).
set -u
. "$(dirname "$0")/lib.sh"
tool_setup cli
grep_err() { grep -q -- "$1" "$d/err" || fail "stderr lacks '$1'"; ok; }

printf '# hrt-trace v1\n0 0 start 1 5 10\n20 0 idle\n' > "$d/good"

# stdout checked at exit, by every subcommand: a full disk is an error.
for a in --help --version -V; do
	expect 1 "hrt $a > /dev/full" sh -c "'$HRT' $a > /dev/full"
	grep_err '^hrt: stdout: No space left on device$'
	expect 1 "hrt $a >&-" sh -c "'$HRT' $a >&-"
	grep_err '^hrt: stdout: '
done
"$HRT" -V | grep -q '^hrt [0-9]' || fail "-V prints the version"; ok
# --help's first line says what hrt is, then the usage.
"$HRT" --help | head -1 | grep -q '^hrt: .*wake' || fail "--help does not start by saying what hrt is"; ok
"$HRT" --help | grep -q '^usage: hrt COMMAND' || fail "--help lacks the usage line"; ok
# (sim --help calls exit(0) inside sim.c: its owner fixes that at merge)
for c in demo replay convert record; do
	expect 1 "hrt $c --help > /dev/full" sh -c "'$HRT' $c --help > /dev/full"
	grep_err "^hrt $c: stdout: No space left on device$"
done
expect 1 "replay > /dev/full" sh -c "'$HRT' replay '$d/good' > /dev/full"
grep_err '^hrt replay: stdout: No space left on device$'
expect 0 "replay, nothing written, stdout closed is fine on error only" \
	sh -c "'$HRT' replay '$d/good' > /dev/null"

# -o writes through symlinks, devices and FIFOs, and keeps the mode.
"$HRT" convert "$d/good" > "$d/want" || fail "convert to stdout"; ok
echo old > "$d/target"
ln -s target "$d/link"
expect 0 "convert -o symlink" "$HRT" convert -o "$d/link" "$d/good"
[ -L "$d/link" ] || fail "the symlink was replaced"; ok
cmp -s "$d/target" "$d/want" || fail "the symlink's target lacks the output"; ok
ln -s newtarget "$d/dangling"
expect 0 "convert -o dangling symlink" "$HRT" convert -o "$d/dangling" "$d/good"
[ -L "$d/dangling" ] && cmp -s "$d/newtarget" "$d/want" || fail "dangling link: target created"; ok
expect 0 "convert -o /dev/null" "$HRT" convert -o /dev/null "$d/good"
[ -c /dev/null ] || fail "/dev/null is no longer a device"; ok
mkfifo "$d/fifo"
cat "$d/fifo" > "$d/fromfifo" &
expect 0 "convert -o FIFO" "$HRT" convert -o "$d/fifo" "$d/good"
wait
[ -p "$d/fifo" ] || fail "the FIFO was replaced"; ok
cmp -s "$d/fromfifo" "$d/want" || fail "the FIFO's reader got the output"; ok
echo old > "$d/m640"; chmod 0640 "$d/m640"
expect 0 "convert -o mode 0640 file" "$HRT" convert -o "$d/m640" "$d/good"
[ "$(stat -c %a "$d/m640")" = 640 ] || fail "mode 0640 kept: $(stat -c %a "$d/m640")"; ok
cmp -s "$d/m640" "$d/want" || fail "0640 file has the output"; ok
(umask 027 && "$HRT" convert -o "$d/new027" "$d/good") || fail "convert -o new file"
[ "$(stat -c %a "$d/new027")" = 640 ] || fail "umask 027: mode $(stat -c %a "$d/new027")"; ok
(umask 022 && "$HRT" convert -o "$d/new022" "$d/good") || fail "convert -o new file"
[ "$(stat -c %a "$d/new022")" = 644 ] || fail "umask 022: mode $(stat -c %a "$d/new022")"; ok
expect 1 "convert -o /dev/full" "$HRT" convert -o /dev/full "$d/good"
grep_err '^hrt convert: /dev/full: No space left on device$'
expect 1 "convert -o - > /dev/full" sh -c "'$HRT' convert -o - '$d/good' > /dev/full"
grep_err 'stdout: No space left on device'
expect 1 "convert -o in a missing directory" "$HRT" convert -o "$d/no/such" "$d/good"
grep_err "^hrt convert: $d/no/such: cannot create: No such file or directory$"
printf '# hrt-trace v1\n0 0 start 1 5 10\n2 0 bogus\n' > "$d/bad"
echo keep > "$d/kept"
expect 2 "convert bad input -o existing" "$HRT" convert -o "$d/kept" "$d/bad"
[ "$(cat "$d/kept")" = keep ] || fail "bad input left the old file alone"; ok
ls -a "$d" | grep -q '\.hrt' && fail "a temporary was left behind"; ok

# Compressed input with stdin or stdout closed (the decompressing child's
# dup2/close order must not take the closed descriptor).
xz -c "$d/good" > "$d/good.xz"
expect 0 "replay .xz with stdin closed" sh -c "'$HRT' replay --csv '$d/good.xz' <&- > '$d/out'"
grep -q '^.*good.xz,off,' "$d/out" || fail "replay .xz with stdin closed: output"; ok
expect 1 "convert .xz with stdout closed" sh -c "'$HRT' convert '$d/good.xz' >&-"
grep_err '^hrt convert: stdout: Bad file descriptor$'
grep -q 'corrupt' "$d/err" && fail "stdout closed: not a corrupt file"; ok
expect 0 "convert .xz -o with stdout closed" sh -c "'$HRT' convert -o '$d/c' '$d/good.xz' >&-"
cmp -s "$d/c" "$d/want" || fail "convert .xz with stdout closed: output"; ok

# --lenient skips a 100 KB and a 10 MB line, plain, .xz and
# piped, with one result; without --lenient each fails on line 3.
for size in 100000 10000000; do
	{ printf '# hrt-trace v1\n0 0 start 1 5 10\n'; head -c "$size" /dev/zero | tr '\0' x
	  printf '\n20 0 idle\n'; } > "$d/long"
	xz -c -0 "$d/long" > "$d/long.xz"
	for f in long long.xz; do
		expect 0 "--lenient $f ($size)" sh -c "'$HRT' replay --lenient --csv '$d/$f' > '$d/out.$f'"
		grep_err 'skipped 1 bad lines'
		expect 0 "--lenient - < $f ($size)" sh -c "cat '$d/$f' | '$HRT' replay --lenient --csv - > '$d/pipe.$f'"
		expect 2 "$f ($size) without --lenient" "$HRT" replay "$d/$f"
		grep_err "$f:3: line longer than 65536 bytes"
	done
	sed 1d "$d/out.long" > "$d/a"
	for f in out.long.xz pipe.long pipe.long.xz; do
		sed 1d "$d/$f" | sed 's/^[^,]*,//' > "$d/b"
		sed 's/^[^,]*,//' "$d/a" | cmp -s - "$d/b" || fail "$f ($size): another result"; ok
	done
done

# Opaque ids, compressed stdin, <stdin> in messages.
printf '# hrt-trace v1\n0 0 start conn42 5 10\n1 0 start A 5 20\n2 0 cancel A\n30 0 idle\n' > "$d/tok"
expect 0 "convert opaque ids" sh -c "'$HRT' convert '$d/tok' > '$d/tok.out'"
grep -q '^0 0 start conn42 5 10$' "$d/tok.out" && grep -q '^2 0 cancel A$' "$d/tok.out" ||
	fail "convert keeps the id tokens"; ok
"$HRT" replay --csv "$d/tok" | sed 1d | sed 's/^[^,]*,//' > "$d/a"
"$HRT" replay --csv "$d/tok.out" | sed 1d | sed 's/^[^,]*,//' | cmp -s - "$d/a" ||
	fail "replay of converted opaque ids differs"; ok
"$HRT" replay --csv "$d/good" | sed 1d | sed 's/^[^,]*,//' > "$d/a"
for z in xz gzip; do
	$z -c "$d/good" | "$HRT" replay --csv - 2>"$d/err" | sed 1d | sed 's/^[^,]*,//' > "$d/b"
	cmp -s "$d/a" "$d/b" || fail "$z on stdin: another result"; ok
done
expect 2 "bad stdin" sh -c "printf '# hrt-trace v1\n0 0 start A x9 10\n' | '$HRT' replay -"
grep_err "^hrt replay: <stdin>:2: field 5 (SOFT) 'x9': expected a soft expiry in ns$"
expect 2 "truncated xz on stdin" sh -c "head -c 60 '$d/long.xz' | '$HRT' replay -"
grep_err "^hrt replay: <stdin>: 'xz -dc' failed"

# record checks its arguments before recording (no output left behind).
expect 0 "record -V" sh -c "'$HRT' record -V > '$d/out'"
grep -q '^hrt record [0-9]' "$d/out" || fail "record -V prints the version"; ok
"$HRT" record --help | grep -q '^Exit status: 0 success' || fail "record --help: exit codes"; ok
expect 2 "record -d abc" "$HRT" record -d abc -o "$d/r"
grep_err "^hrt record: -d 'abc': expected seconds"
expect 2 "record -d 1x" "$HRT" record -d 1x -o "$d/r"
expect 2 "record -- missing command" "$HRT" record -o "$d/r" -- "$d/no-such-command" a b
grep_err "^hrt record: cannot run '$d/no-such-command': No such file or directory$"
expect 2 "record -- missing command on PATH" "$HRT" record -o "$d/r" -- hrt-no-such-command
grep_err "^hrt record: cannot run 'hrt-no-such-command': No such file or directory$"
expect 1 "record -o in a missing directory" "$HRT" record -o "$d/no/r" -- true
grep_err "^hrt record: $d/no/r: cannot create: No such file or directory$"
[ ! -e "$d/r" ] || fail "record left an output after a bad argument"; ok

# With perf allowed here: every COMMAND argument reaches COMMAND (it was
# cut at 44), and -o /dev/full fails with the message.  The command
# sleeps so that it arms a timer of its own: an echo alone may end before
# perf traces any hrtimer event.
if "$HRT" record -d 0.05 -o "$d/probe" 2>"$d/err"; then
	expect 0 "record -- sh with 60 arguments" "$HRT" record -o "$d/r60" -- \
		sh -c 'echo $# > "$0"; sleep 0.05' "$d/nargs" $(seq 60)
	[ "$(cat "$d/nargs")" = 60 ] || fail "record passed $(cat "$d/nargs") of 60 arguments"; ok
	grep -q hrtimer "$d/r60" || fail "record -o r60 has the trace"; ok
	expect 1 "record -o /dev/full" "$HRT" record -d 0.05 -o /dev/full
	grep_err '^hrt record: /dev/full: No space left on device$'
else
	echo "note: perf may not record here ($(tail -n 1 "$d/err")): recording checks not run"
fi

echo "test_cli: $n checks passed"
