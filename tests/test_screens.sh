#!/bin/sh
# SPDX-License-Identifier: MIT
# test_screens.sh - what a person sees in an 80x24 terminal, read back from
# tmux (capture-pane): `make demo` fits (its first line still on the
# screen, no line wrapped), and so do hrt top's screens - a recorded trace
# (--input), with and without --slack; live (root and tracefs): the
# default screen, --slack, the help (h) and the threads (H) - and after q
# the shell's next output starts on a line of its own (d4ebe1c: demo 40
# lines, two of 83 and 86 columns; q left the cursor after "h help").
# Needs tmux (skipped by name without it).
set -u
. "$(dirname "$0")/lib.sh"
need tmux "80x24 screens in tmux" tmux
HRT=${HRT:-build/hrt}
case $HRT in /*) ;; *) HRT=$PWD/$HRT ;; esac
O=${O:-build}
scratch err
sock=$t/tmux
session=hrt-screens-$$
trap 'tmux -S "$sock" kill-server 2>/dev/null; rm -rf "$t"' EXIT

# run NAME CMD: CMD in a fresh 80x24 window whose shell then prints __END__
# (no newline: the line a prompt would take) and waits; the window's text
# in $t/NAME (wrapped lines joined).
# The new session is made before the old one is killed: killing a
# server's last session ends the server, and a new-session racing its exit
# on the same socket failed ("server exited unexpectedly") on a loaded
# machine.
k=0
start() { # NAME CMD: the same, without waiting for the end
	printf '%s\n' "$2" 'printf __END__' 'sleep 600' >"$t/$1.sh"
	old=$session k=$((k + 1))
	session=hrt-screens-$$-$k
	tmux -S "$sock" new-session -d -s "$session" -x 80 -y 24 "sh '$t/$1.sh'" ||
		fail "tmux new-session for $1"
	tmux -S "$sock" kill-session -t "=$old" 2>/dev/null    # =: exact, not a prefix
}
run() {
	start "$1" "$2"
	wait_for "$1" __END__
}
wait_for() { # NAME TEXT: until TEXT is on the screen (120 s)
	i=0
	while [ $i -lt 480 ]; do
		tmux -S "$sock" capture-pane -p -J -t "$session" 2>/dev/null | awk '{ l[NR] = $0 }
			END { n = NR; while (n > 0 && l[n] == "") n--; for (i = 1; i <= n; i++) print l[i] }' >"$t/$1"
		grep -q "$2" "$t/$1" && return 0
		sleep 0.25
		i=$((i + 1))
	done
	cat "$t/$1"
	fail "$1: '$2' never came on the screen"
}
# fits NAME FIRST: the screen's first line starts with FIRST (nothing
# scrolled away) and no line is wider than 79 columns (a wrapped line is
# joined back by -J, so it shows as one of more than 80).
fits() {
	head -1 "$t/$1" | grep -q "^$2" || { cat "$t/$1"; fail "$1: the first line is not '$2'"; }
	awk 'length($0) > 79 { print FILENAME ":" FNR ": " length($0) " columns"; bad = 1 } END { exit bad }' \
		"$t/$1" || { cat "$t/$1"; fail "$1: a line wider than 79 columns"; }
	ok
}
export LC_ALL=C.UTF-8

# make demo, from this tree, into a build directory of this run's objects
mkdir "$t/o"
cp -a "$O/src" "$O/tools" "$O/libhrt.a" "$O/libtools.a" "$O/config.mk" "$O/hrt" "$t/o/" ||
	fail "copy $O"
# (as a person types it: not under make test's jobserver, whose warning
# would be the first line)
run demo "cd '$PWD' && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s demo O='$t/o'"
fits demo "1\\. The article's example"

# hrt top on a recorded trace: its last frame stays on the screen
for opts in "" "--slack 1ms" "--by thread --slack 1ms --slack-for all"; do
	name=input$(echo "$opts" | tr -cd 'a-z')
	run "$name" "'$HRT' top --input tests/data/tracefs-real.txt.gz -d 0.5 -n 2 $opts"
	fits "$name" "hrt top: frame 2"
	grep -q '^wake-ups/s over the window' "$t/$name" || { cat "$t/$name"; fail "$name: no legend"; }
	ok
done
grep -q 'hrt top --slack 1ms\( \|$\)' "$t/input" || { cat "$t/input"; fail "top's screen does not point at --slack"; }
ok

[ "$(id -u)" -eq 0 ] && [ -d /sys/kernel/tracing/instances ] ||
	skip "hrt top's live screens (need root and tracefs)" "root access"
"$HRT" top -b -n 1 -d 0.1 >/dev/null 2>"$t/probe" ||
	{ grep -q 'built without' "$t/probe" &&
		skip "hrt top's live screens (built without libtracefs)" "libtracefs-dev libtraceevent-dev"; }

# live: the default screen, then h (help), a key back, H (threads), q
keys() { tmux -S "$sock" send-keys -t "$session" "$1"; }
for opts in "" "--slack 1ms"; do
	name=live$(echo "$opts" | tr -cd 'a-z')
	start "$name" "'$HRT' top -d 0.3 $opts"
	wait_for "$name" 'hrt top: frame 2,'
	fits "$name" "hrt top: frame"
	tail -1 "$t/$name" | grep -q '^q quit  b grouping  H threads  h help' ||
		{ cat "$t/$name"; fail "$name: the keys are not on the last line"; }
	keys h
	wait_for "$name-help" 'hrt top: help'
	fits "$name-help" "hrt top: help"
	keys x
	sleep 0.5
	keys H
	wait_for "$name-threads" 'by thread'
	fits "$name-threads" "hrt top: frame"
	keys q
	wait_for "$name-quit" __END__
	grep -q '^__END__' "$t/$name-quit" ||
		{ cat "$t/$name-quit"; fail "$name: after q the next output is not on a line of its own"; }
	ok
done
echo "test_screens: $n checks passed"
