#!/bin/sh
# SPDX-License-Identifier: MIT
# Every page in man/ renders with no warning under `man --warnings -l`
# (groff's warnings on stderr count as failures), read from the tree as a
# user does, the names that are symbolic links to a page included; no page is
# a .so stub (man -l cannot follow those from the tree).  The pages match
# include/hrt.h: every HRT_EXTERN function has a page in man/ (its own or a
# link) whose target lists it on its
# NAME line, and every name a NAME line lists is an HRT_EXTERN function or a
# function-like macro of hrt.h (libhrt.3 names the library).  Each page's
# .TH names the release, "hrt VERSION" (hrt.h's HRT_VERSION_STRING).
# Skips when man-db or groff is missing.
set -u
. "$(dirname "$0")/lib.sh"
need man "man page check" man-db
need groff "man page check" groff-base
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
version=$(sed -n 's/^#define HRT_VERSION_STRING "\(.*\)"/\1/p' include/hrt.h)
[ -n "$version" ] || fail "include/hrt.h: no HRT_VERSION_STRING"
pages=0
for p in man/*.[0-9]; do
	pages=$((pages + 1))
	grep -q '^\.so ' "$p" && fail "$p: a .so stub: make it a symbolic link to its page"
	grep '^\.TH ' "$p" | grep -qF "\"hrt $version\"" ||
		fail "$p: its .TH does not name \"hrt $version\" (include/hrt.h's version)"
	if [ -L "$p" ]; then
		case $(readlink "$p") in
		*/*) fail "$p: links to $(readlink "$p"), outside man/" ;;
		esac
		[ -f "$p" ] && [ ! -L "$(dirname "$p")/$(readlink "$p")" ] ||
			fail "$p: links to $(readlink "$p"), not a page"
		ok
	fi
	# -l: this file; MANWIDTH fixes line breaking; LC_ALL=C.UTF-8 as a user has
	MANWIDTH=80 LC_ALL=C.UTF-8 man --warnings -l "$p" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" -ne 0 ] || [ -s "$tmp/err" ]; then
		fail_log=$tmp/err
		fail "$p: man exit $rc"
	fi
	[ "$(wc -l < "$tmp/out")" -ge 10 ] || fail "$p: rendered to fewer than 10 lines"
	ok
done
[ "$pages" -gt 0 ] || fail "no pages in man/"

# The names hrt.h declares: HRT_EXTERN functions (the identifier before the
# first parenthesis of the declaration's first line) and function-like macros.
sed -n 's/^HRT_EXTERN[^(]*[^A-Za-z0-9_(]\([A-Za-z_][A-Za-z0-9_]*\)(.*/\1/p' \
	include/hrt.h | sort -u >"$tmp/funcs"
sed -n 's/^#define[[:space:]]\{1,\}\([A-Za-z_][A-Za-z0-9_]*\)(.*/\1/p' \
	include/hrt.h | sort -u >"$tmp/macros"
[ -s "$tmp/funcs" ] || fail "include/hrt.h: no HRT_EXTERN function found"
sort -u "$tmp/funcs" "$tmp/macros" >"$tmp/declared"

# The names on a page's NAME line(s): from .SH NAME up to the "\-" that
# starts the description.
names() {
	sed -n '/^\.SH NAME/,/^\.SH/p' "$1" | sed '1d;/^\.SH/d' |
		sed 's/\\-.*//' | tr ', ' '\n\n' | sed '/^$/d'
}
# The page a man/ file resolves to (itself unless it is a link).
resolve() {
	if [ -L "$1" ]; then echo "man/$(readlink "$1")"; else echo "$1"; fi
}

: >"$tmp/listed"
for p in man/*.3; do
	[ -L "$p" ] && continue
	names "$p" >"$tmp/names"
	[ -s "$tmp/names" ] || fail "$p: empty NAME line"
	[ "$p" = man/libhrt.3 ] && continue
	while read -r f; do
		grep -qx "$f" "$tmp/declared" ||
			fail "$p: NAME lists $f, which include/hrt.h does not declare"
		ok
	done <"$tmp/names"
	cat "$tmp/names" >>"$tmp/listed"
done
while read -r f; do
	p="man/$f.3"
	[ -f "$p" ] || fail "include/hrt.h: $f has no page (add $p, a symbolic link at most)"
	r=$(resolve "$p")
	[ -f "$r" ] && names "$r" | grep -qx "$f" ||
		fail "$p: its page $r does not list $f on its NAME line"
	ok
done <"$tmp/funcs"
# A link whose name no page lists is stale (a function that was removed).
for p in man/*.3; do
	[ -L "$p" ] || continue
	f=$(basename "$p" .3)
	grep -qx "$f" "$tmp/listed" || fail "$p: no page lists $f"
	ok
done

# Sentences the page, README and hrt.h must say alike (each squeezed to one
# line).  hrt_timer_forward's return: the expiry it compares with now (hrt.h
# "0 if soft > now already"; the page said hard).  The periodic gap: hrt.h's
# exception to "at least interval - slack apart" is on the page and in
# README's short form.
flat() { tr '\n' ' ' | sed 's/\\-/-/g; s/\\f[BIRP]//g; s/  */ /g'; }
MANWIDTH=80 LC_ALL=C.UTF-8 man -l man/hrt_timer_forward.3 2>/dev/null | flat >"$tmp/fwd"
sed 's/^ *\*\{1,2\}\/\{0,1\} \{0,1\}//' include/hrt.h | flat >"$tmp/h"
flat <README.md >"$tmp/readme"
h_exp=$(sed -n 's/.*returns that number: 0 if \([a-z]*\) > now already.*/\1/p' "$tmp/h")
m_exp=$(sed -n 's/.*hrt_timer_forward() returns the number of intervals added: 0 if the \([a-z]*\) expiry is already after now.*/\1/p' "$tmp/fwd")
[ -n "$h_exp" ] || fail "include/hrt.h: hrt_timer_forward's return sentence not found"
[ -n "$m_exp" ] || fail "man hrt_timer_forward: RETURN VALUE's forward sentence not found"
[ "$h_exp" = "$m_exp" ] ||
	fail "man hrt_timer_forward: forward returns 0 if the $m_exp expiry is after now; hrt.h says $h_exp"
ok
gap='less only after a run that came later than that past its soft expiry'
grep -qF "($gap)" "$tmp/h" || fail "include/hrt.h: the periodic gap's exception ('$gap') not found"
grep -qF "($gap)" "$tmp/fwd" || fail "man hrt_timer_forward: lacks hrt.h's gap exception ('$gap')"
grep -qF "period - window apart ($gap" "$tmp/readme" ||
	fail "README: its periodic gap lacks hrt.h's exception ('$gap')"
ok

echo "test_man: $n checks passed; $pages pages render without warnings;" \
	"$(wc -l < "$tmp/funcs") functions of hrt.h each have a page"
