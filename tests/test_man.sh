#!/bin/sh
# SPDX-License-Identifier: MIT
# Every page in man/ renders with no warning under `man --warnings -l`
# (groff's warnings on stderr count as failures); .so links must point at a
# page that exists.  Skips when man-db or groff is missing.
set -u
command -v man >/dev/null 2>&1 || { echo "SKIP: man page check (install man-db)"; exit 77; }
command -v groff >/dev/null 2>&1 || { echo "SKIP: man page check (install groff-base)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bad=0
n=0
for p in man/*.[0-9]; do
	n=$((n + 1))
	target=$(sed -n 's/^\.so //p' "$p")
	if [ -n "$target" ]; then
		[ -f "man/${target#*/}" ] || { echo "$p: .so $target: no such page"; bad=1; }
		continue
	fi
	# -l: this file; MANWIDTH fixes line breaking; LC_ALL=C.UTF-8 as a user has
	MANWIDTH=80 LC_ALL=C.UTF-8 man --warnings -l "$p" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" -ne 0 ] || [ -s "$tmp/err" ]; then
		echo "$p: man exit $rc"; cat "$tmp/err"; bad=1
	elif [ "$(wc -l < "$tmp/out")" -lt 10 ]; then
		echo "$p: rendered to fewer than 10 lines"; bad=1
	fi
done
[ "$n" -gt 0 ] || { echo "no pages in man/"; exit 1; }
[ "$bad" -eq 0 ] && echo "$n pages render without warnings"
exit "$bad"
