#!/bin/sh
# SPDX-License-Identifier: MIT
# Simulates a machine with only Debian's build-essential and checks that a
# fresh clone's `make demo` and `make test` pass there and name what they
# skip.  Run by hand, as root, on a machine that has the optional packages
# (not by make test): in a private mount namespace (unshare -m) it
# bind-mounts /dev/null over every header, library, .pc file and program of
# the optional packages, so they exist but are empty and not executable.
# Shared libraries are hidden through the files their .so links point at.
#
#   sh tests/bare-machine.sh [BRANCH]     (default: the current branch;
#                                          commits only, not the work tree)
#   KEEP='xz-utils ...' sh tests/bare-machine.sh   leaves those packages
set -eu
repo=$(git rev-parse --show-toplevel)
branch=${1:-$(git -C "$repo" rev-parse --abbrev-ref HEAD)}
[ "$(id -u)" -eq 0 ] || { echo "bare-machine.sh: needs root (unshare -m, mount --bind)" >&2; exit 2; }

# Development packages: headers, libraries and .pc files are hidden.
DEV="libcmocka-dev libuv1-dev libev-dev libevent-dev libsystemd-dev libtracefs-dev libtraceevent-dev"
# Tool packages: their programs are hidden.  Not xz-utils, make, binutils,
# patch, perl...: build-essential brings them (dpkg-dev depends on xz-utils).
TOOLS="graphviz linux-perf chromium man-db groff-base gnuplot-nox shellcheck pkgconf pkgconf-bin pkg-config
	abigail-tools cmake cmake-data lintian debhelper"

for k in ${KEEP:-}; do
	DEV=$(echo " $DEV " | sed "s/ $k / /"); TOOLS=$(echo " $TOOLS " | sed "s/ $k / /")
done

work=$(mktemp -d /tmp/hrt-bare-XXXXXX)
trap 'rm -rf "$work"' EXIT
list="$work/hide"
: > "$list"
for p in $DEV; do
	dpkg -L "$p" 2>/dev/null | grep -E '^/usr/(include|lib|share/pkgconfig)/' >> "$list" || true
done
for p in $TOOLS; do
	dpkg -L "$p" 2>/dev/null | grep -E '^(/usr)?/s?bin/' >> "$list" || true
done
git clone -q --branch "$branch" "$repo" "$work/hrt"
echo "bare-machine: $(git -C "$work/hrt" log --oneline -1)"

# Inside the namespace: hide, then build and test as a new user would.
cat > "$work/inner.sh" <<'EOF'
set -eu
n=0
sort -u "$1" | while read -r f; do
	[ -f "$f" ] || continue          # also true for links to files
	t=$(readlink -f "$f")
	mount --bind /dev/null "$t" 2>/dev/null && n=$((n + 1)) || true
	echo "$n" > "$2/hidden"
done
echo "bare-machine: hid $(cat "$2/hidden" 2>/dev/null || echo 0) files of: $3"
for c in cc make pkg-config xz dot perf chromium man groff gnuplot abidiff cmake; do
	if command -v "$c" >/dev/null 2>&1; then printf ' %s:yes' "$c"; else printf ' %s:no' "$c"; fi
done
echo
cd "$2/hrt"
echo '#include <uv.h>
int main(void) { uv_loop_t *l = uv_default_loop(); return !l; }' > "$2/probe.c"
if cc -o "$2/probe" "$2/probe.c" -luv >/dev/null 2>&1; then
	echo "bare-machine: libuv still links: not hidden"; exit 1
fi
echo "== make demo"
make -j2 demo > "$2/demo.log" 2>&1 || { tail -30 "$2/demo.log"; echo "bare-machine: make demo FAILED"; exit 1; }
grep -E 'SKIP|not found|dot' "$2/demo.log" || true
echo "== make test"
make -j2 test > "$2/test.log" 2>&1 || { tail -40 "$2/test.log"; echo "bare-machine: make test FAILED"; exit 1; }
grep -E '^(FAIL|SKIP|skipped|failed|[0-9]+ passed)' "$2/test.log"
# Every skip names the package to install.
if grep -E '^SKIP' "$2/test.log" | grep -v ' (install [^)]*)$'; then
	echo "bare-machine: a skip above names no package"; exit 1
fi
echo "bare-machine: make demo and make test passed"
EOF
unshare -m --propagation private sh "$work/inner.sh" "$list" "$work" "$DEV $TOOLS"
