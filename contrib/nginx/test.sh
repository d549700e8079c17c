#!/bin/sh
# SPDX-License-Identifier: MIT
# test.sh - nginx's own test suite (nginx-tests) on stock nginx and on
# nginx with its timers on libhrt, both built from one source tree with one
# configure line (build.sh), and the two results compared file by file.
#
#   contrib/nginx/test.sh NGINX_SRC NGINX_TESTS      (or both in the environment)
#
# Passes when hrt's nginx has the same result as stock's in every file of
# the suite - the same files pass, the same are skipped, the same tests of
# the same files fail - and the same number of tests ran.  Prints each
# difference, the timer-heavy files' results side by side, and one summary
# line per build.  libhrt comes from this tree: `make install` into
# OUT/hrt (found through pkg-config, as build.sh wants it).
#
# Environment: OUT (default build/nginx, or build/nginx-asan), SANITIZE=1
# (nginx and libhrt under ASan+UBSan for both builds; leaks not reported:
# nginx frees its pools by exiting), PROVE_JOBS (default 2), JOBS (make),
# CONFIGURE (the configure options; default build.sh's), FILES (the .t
# files to run, default all; FILES=timers: the timer-heavy ones, below),
# KEEP_STOCK=1 (reuse OUT's stock build and its suite result, when both are
# there: a second run for a changed hrt side).  As root the
# workers run as root (TEST_NGINX_GLOBALS="user root;"), so that they can
# read the suite's temporary files; proxy_bind_transparent.t, which sets
# its own user, then fails to start on both sides alike (a duplicate).
# The servers listen on 127.0.0.1 only.
# Without NGINX_SRC it skips (exit 77), naming what to set; exit 2 for bad
# usage, 1 if the results differ or a step failed.
set -u
me=contrib/nginx/test.sh
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

if [ $# -gt 2 ] || [ "${1:-}" = -h ] || [ "${1:-}" = --help ]; then
	echo "usage: $me [NGINX_SRC [NGINX_TESTS]]   (or NGINX_SRC=... NGINX_TESTS=... $me)" >&2
	exit 2
fi
src=${1:-${NGINX_SRC:-}}
tests=${2:-${NGINX_TESTS:-}}
if [ -z "$src" ]; then
	echo "SKIP: nginx-tests on hrt (nginx source: set NGINX_SRC)"
	exit 77
fi
if [ -z "$tests" ]; then
	echo "SKIP: nginx-tests on hrt (nginx-tests: set NGINX_TESTS)"
	exit 77
fi
die() {
	echo "$me: $*" >&2
	exit 1
}
[ -f "$src/src/event/ngx_event_timer.c" ] || die "$src: not an nginx source tree (NGINX_SRC)"
[ -f "$tests/lib/Test/Nginx.pm" ] || die "$tests: not an nginx-tests checkout (no lib/Test/Nginx.pm) (NGINX_TESTS)"
command -v prove >/dev/null 2>&1 || die "prove not found (install perl)"

san=${SANITIZE:-}
if [ -n "$san" ]; then
	out=${OUT:-$root/build/nginx-asan}
	export CC_OPT="-fsanitize=address,undefined -fno-omit-frame-pointer -O1 -g"
	export LD_OPT="-fsanitize=address,undefined"
	export ASAN_OPTIONS=detect_leaks=0
	hrt_make="SANITIZE=1"
else
	out=${OUT:-$root/build/nginx}
	hrt_make=
fi
mkdir -p "$out" || die "$out: cannot make the directory"
out=$(cd "$out" && pwd)

echo "$me: libhrt from $root into $out/hrt"
# shellcheck disable=SC2086 # hrt_make: empty or one word
make -C "$root" -j"${JOBS:-2}" $hrt_make install PREFIX="$out/hrt" > "$out/hrt-install.log" 2>&1 ||
	{ tail -n 20 "$out/hrt-install.log" >&2; die "installing libhrt failed ($out/hrt-install.log)"; }
export PKG_CONFIG_PATH="$out/hrt/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"

kinds="stock hrt"
if [ -n "${KEEP_STOCK:-}" ] && [ -x "$out/stock/src/objs/nginx" ] && [ -s "$out/suite-stock.txt" ]; then
	kinds=hrt
	echo "$me: stock nginx and its result kept from $out (KEEP_STOCK)"
fi
for kind in $kinds; do
	# shellcheck disable=SC2086 # CONFIGURE: options, split as given
	"$here/build.sh" "$kind" "$src" "$out/$kind" ${CONFIGURE:-} || die "building $kind nginx failed"
done

# The files whose work is mostly timers (the issue names them).
heavy='keepalive|limit_req|limit_rate|timeout|resolver|send_timeout|worker_shutdown|lingering|limit_conn'
[ "${FILES:-}" != timers ] || FILES=$(cd "$tests" && printf '%s\n' ./*.t | grep -E "$heavy")

globals=${TEST_NGINX_GLOBALS:-}
[ "$(id -u)" = 0 ] && globals="user root; $globals"

# One run of the suite: prove's output in $out/suite-KIND.log, then one
# line per file in $out/suite-KIND.txt: "FILE ok|skipped|failed TESTS".
run_suite() {	# kind
	log=$out/suite-$1.log
	echo "$me: nginx-tests on $1 nginx (prove -j${PROVE_JOBS:-2}; $log)"
	start=$(date +%s)
	# shellcheck disable=SC2086 # FILES: names, split as given
	(cd "$tests" && TEST_NGINX_BINARY="$out/$1/src/objs/nginx" TEST_NGINX_GLOBALS="$globals" \
		prove -j"${PROVE_JOBS:-2}" ${FILES:-./*.t}) > "$log" 2>&1
	echo "  $(grep '^Files=' "$log" | sed 's/,  *[0-9]* wallclock.*//'), $(( $(date +%s) - start )) s"
	awk '
	# per-file lines: "name.t ..... ok", "name.t .. skipped: why"
	match($0, /^(\.\/)?[A-Za-z0-9_.-]+\.t \.+ /) {
		f = $1; sub(/^\.\//, "", f); rest = substr($0, RLENGTH + 1)
		if (rest ~ /^ok/) st[f] = "ok"
		else if (rest ~ /^skipped/) st[f] = "skipped"
		else if (!(f in st)) st[f] = "failed"
	}
	# the summary report: "name.t (Wstat: ... Failed: 1)", "  Failed tests:  2, 5";
	# "(Wstat: 0 Tests: 10 Failed: 0)" is a file whose TODO tests passed
	/^(\.\/)?[A-Za-z0-9_.-]+\.t +\(Wstat/ {
		f = $1; sub(/^\.\//, "", f); cur = f
		if ($0 !~ /Wstat: 0 .*Failed: 0\)/) st[f] = "failed"
		next
	}
	cur != "" && /^  Failed tests?:/ { sub(/^  Failed tests?: */, ""); gsub(/ /, ""); which[cur] = which[cur] $0; next }
	cur != "" && /^  / { next }
	{ cur = "" }
	END { for (f in st) print f, st[f], (f in which ? which[f] : "-") }' "$log" | sort > "$out/suite-$1.txt"
}

for kind in $kinds; do
	run_suite "$kind"
done

echo "$me: timer-heavy files (stock | hrt):"
join "$out/suite-stock.txt" "$out/suite-hrt.txt" | grep -E "^[^ ]*($heavy)[^ ]* " |
	awk '{ printf "  %-40s %-8s %-6s| %-8s %s\n", $1, $2, ($3 == "-" ? "" : $3), $4, ($5 == "-" ? "" : $5) }'

diffs=$(join -a 1 -a 2 -e missing -o 0,1.2,1.3,2.2,2.3 "$out/suite-stock.txt" "$out/suite-hrt.txt" |
	awk '$2 != $4 || $3 != $5')
ts=$(sed -n 's/^Files=[0-9]*, Tests=\([0-9]*\).*/\1/p' "$out/suite-stock.log")
th=$(sed -n 's/^Files=[0-9]*, Tests=\([0-9]*\).*/\1/p' "$out/suite-hrt.log")
for k in stock hrt; do
	awk -v k="$k" '{ n[$2]++ } END { printf "%s: %d files: %d ok, %d skipped, %d failed\n",
		k, NR, n["ok"], n["skipped"], n["failed"] }' "$out/suite-$k.txt"
done
if [ -z "$ts" ] || [ "$ts" -eq 0 ]; then
	die "no test ran on stock nginx ($out/suite-stock.log)"
fi
if [ -n "$diffs" ] || [ "$ts" != "$th" ]; then
	echo "$me: DIFFERENT results (file: stock result, failed tests | hrt result, failed tests):"
	printf '%s\n' "$diffs" | awk 'NF { printf "  %s: %s %s | %s %s\n", $1, $2, $3, $4, $5 }'
	[ "$ts" = "$th" ] || echo "  tests run: $ts on stock, $th on hrt"
	exit 1
fi
echo "$me: same results${san:+ (ASan+UBSan)}: $ts tests on each, every file as on stock nginx"
