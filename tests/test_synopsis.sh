#!/bin/sh
# SPDX-License-Identifier: MIT
# test_synopsis.sh - hrt(1)'s SYNOPSIS lists, for every command, each
# option that command's --help lists in its option table (the lines that
# start with an option): a reader of the man page sees every way to call
# it (`slack --persist/--unpersist/--list/--root` were missing).  Needs
# only the tool and the page's source.
set -u
. "$(dirname "$0")/lib.sh"
tool_setup synopsis
page=man/hrt.1
# The SYNOPSIS's options per command: its blocks start at ".B hrt CMD".
awk '/^\.SH SYNOPSIS/ { f = 1; next } /^\.SH/ { f = 0 } f' "$page" | sed 's/\\f[BIRP]//g' | tr -d '\\' | awk '
	/^\.B hrt [a-z]/ { cmd = $3 }
	cmd { while (match($0, /--[a-z][a-z-]*/)) { print cmd, substr($0, RSTART, RLENGTH)
		$0 = substr($0, RSTART + RLENGTH) } }' | sort -u >"$d/synopsis"
[ -s "$d/synopsis" ] || fail "$page: no options found in its SYNOPSIS"
cmds=$("$HRT" --help 2>&1 | sed -n "s/^  \([a-z][a-z]*\)  .*/\1/p" | sort -u)
[ -n "$cmds" ] || fail "hrt --help names no command"
for c in $cmds; do
	"$HRT" "$c" --help >"$d/help" 2>&1 || fail "hrt $c --help: exit $?"
	opts=$(grep -oE -- '^ +(-[a-zA-Z], )?--[a-z][a-z-]*' "$d/help" | grep -o -- '--.*' | sort -u)
	[ -n "$opts" ] || fail "hrt $c --help lists no option"
	for o in $opts; do
		[ "$o" = --help ] && continue
		grep -qx "$c $o" "$d/synopsis" || fail "$page: SYNOPSIS lacks 'hrt $c $o' (in hrt $c --help)"
	done
	ok
done
echo "test_synopsis: $n checks passed"
