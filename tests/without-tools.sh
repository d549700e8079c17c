#!/bin/sh
# SPDX-License-Identifier: MIT
# without-tools.sh - runs a command as on a machine without the optional
# programs that `make demo` and `make test` must do without (Graphviz,
# gnuplot, tmux, cmake, Chromium): a PATH of links to every program of the
# current PATH but theirs.  .ci/run runs the plain `make demo` and
# `make test` so, and checks that each skip names one of those packages;
# the other builds run with them (bare-machine.sh hides the libraries
# too, by hand).
#
#   sh tests/without-tools.sh make test
set -eu
HIDDEN_PACKAGES="graphviz gnuplot-nox tmux cmake chromium"
# Their programs: from the packages' file lists, and by name where a
# package is absent (nothing to hide then, but a copy from elsewhere).
progs=" dot neato twopi circo fdp sfdp gnuplot tmux cmake ctest cpack chromium "
for p in $HIDDEN_PACKAGES; do
	for f in $(dpkg -L "$p" 2>/dev/null | grep -E '/s?bin/[^/]+$' || true); do
		progs="$progs${f##*/} "
	done
done
bin=$(mktemp -d /tmp/hrt-without-tools-XXXXXX)
trap 'rm -rf "$bin"' EXIT
IFS=:
for dir in $PATH; do
	[ -d "$dir" ] || continue
	for f in "$dir"/*; do
		n=${f##*/}
		case $progs in *" $n "*) continue ;; esac
		[ -e "$bin/$n" ] || [ ! -x "$f" ] || ln -s "$f" "$bin/$n"
	done
done
unset IFS
for p in dot gnuplot tmux cmake chromium; do
	if PATH=$bin command -v "$p" >/dev/null 2>&1; then
		echo "without-tools.sh: $p is still on the PATH" >&2
		exit 2
	fi
done
echo "without-tools.sh: running without $HIDDEN_PACKAGES: $*"
st=0
PATH=$bin "$@" || st=$?
exit "$st"
