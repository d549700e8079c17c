#!/bin/sh
# SPDX-License-Identifier: MIT
# make install into staging DESTDIRs for two different prefixes (the second
# with its own LIBDIR), after the build `make test` made; for each, the
# installed hrt.pc must name that prefix, and the README example must build
# against the installed header, library and hrt.pc through pkg-config (or,
# without pkg-config, through the .pc file's own lines read here) and run.
# Also: the shared library exports hrt_ symbols only, with the right soname;
# the man pages and the host-loop glue are installed (the glue compiles
# against the installed hrt.h where libuv or libev is there); make uninstall leaves
# no file behind, nor hrt's own directories.
# Last, an install into a private prefix with no DESTDIR, as a user does:
# make does not run ldconfig (a stand-in LDCONFIG records it here) for a
# directory the linker does not search, says to link with an rpath and how
# CMake finds the package, and runs it as root for one it searches;
# the README example built that way runs with no LD_LIBRARY_PATH.
set -eu
. "$(dirname "$0")/lib.sh"
O=${O:-build}
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
sed -n '/<!-- example -->/,/<!-- end -->/p' README.md | sed '/^```/d;/^<!--/d' > "$stage/ex.c"

# Reads variable or field $2 of .pc file $1, expanding ${var} references.
pc_get() {
	awk -v want="$2" '
	function expand(s,   m, v) {
		while (match(s, /\$\{[A-Za-z_]+\}/)) {
			v = substr(s, RSTART + 2, RLENGTH - 3)
			s = substr(s, 1, RSTART - 1) var[v] substr(s, RSTART + RLENGTH)
		}
		return s
	}
	/^[A-Za-z_]+=/ { i = index($0, "="); var[substr($0, 1, i - 1)] = expand(substr($0, i + 1)) }
	/^[A-Za-z.]+:/ { i = index($0, ":"); f = substr($0, 1, i - 1); v = substr($0, i + 1)
		sub(/^ +/, "", v); field[f] = expand(v) }
	END { print (want in var) ? var[want] : field[want] }' "$1"
}

check_prefix() { # prefix libdir
	prefix=$1 libdir=$2 dest="$stage/d$3"
	make -s install O="$O" PREFIX="$prefix" LIBDIR="$libdir" DESTDIR="$dest" >/dev/null
	for f in "$prefix/include/hrt.h" "$libdir/libhrt.a" "$libdir/libhrt.so" \
		"$libdir/pkgconfig/hrt.pc" "$prefix/bin/hrt" "$prefix/share/man/man1/hrt.1" \
		"$prefix/share/man/man3/libhrt.3" "$prefix/share/doc/hrt/examples/uv_plan.h" \
		"$prefix/share/doc/hrt/examples/uv_host.h" "$prefix/share/doc/hrt/examples/ev_host.h"; do
		test -e "$dest$f" || fail "missing after install: $f"
		ok
	done
	# a page's other names: links to it (as in man/), not copies
	l="$dest$prefix/share/man/man3/hrt_base_loop.3"
	[ -L "$l" ] && [ "$(readlink "$l")" = hrt_base_dispatch.3 ] && [ -f "$l" ] ||
		fail "hrt_base_loop.3 not installed as a link to hrt_base_dispatch.3"
	ok
	pc="$dest$libdir/pkgconfig/hrt.pc"
	fail_log=$pc
	test "$(pc_get "$pc" prefix)" = "$prefix" || fail "hrt.pc for $prefix names another prefix"
	test "$(pc_get "$pc" libdir)" = "$libdir" || fail "hrt.pc libdir, want $libdir"
	grep -q '^includedir=${prefix}/include$' "$pc" || fail "includedir not \${prefix}-relative"
	fail_log=
	ok
	if command -v pkg-config >/dev/null 2>&1; then
		cflags=$(PKG_CONFIG_SYSROOT_DIR="$dest" PKG_CONFIG_PATH="$dest$libdir/pkgconfig" pkg-config --cflags hrt)
		libs=$(PKG_CONFIG_SYSROOT_DIR="$dest" PKG_CONFIG_PATH="$dest$libdir/pkgconfig" pkg-config --libs hrt)
		how=pkg-config
	else # the same lines, read from the file (pkg-config is optional)
		cflags="-I$dest$(pc_get "$pc" includedir)"
		libs="-L$dest$(pc_get "$pc" libdir) -lhrt"
		how="hrt.pc read without pkg-config"
	fi
	echo "$prefix ($how): $cflags $libs"
	cc -std=c11 -Wall -Wextra -Werror ${SAN_FLAGS:-} $cflags -o "$stage/ex$3" "$stage/ex.c" $libs -pthread
	LD_LIBRARY_PATH="$dest$libdir" "$stage/ex$3" > "$stage/out"
	fail_log=$stage/out
	test "$(grep -c '^run ' "$stage/out")" -eq 3 || fail "the README example did not run 3 timers"
	fail_log=
	ok
	# the installed glue compiles against the installed hrt.h (where its
	# loop's header is: libuv1-dev, libev-dev)
	for h in uv_plan.h uv_host.h ev_host.h; do
		case $h in uv_*) loop=uv.h ;; *) loop=ev.h ;; esac
		printf '#include <%s>\n' "$loop" | cc -E -x c - >/dev/null 2>&1 || continue
		printf '#include "%s"\n' "$dest$prefix/share/doc/hrt/examples/$h" |
			cc -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror $cflags -fsyntax-only -x c - ||
			fail "the installed $h does not compile against the installed hrt.h"
		ok
	done
	so="$dest$libdir/libhrt.so"
	soname=$(objdump -p "$so" | awk '/SONAME/ { print $2 }')
	test "$soname" = libhrt.so.1 || fail "soname $soname"
	ok
	bad=$(nm -D --defined-only "$so" | awk '$2 ~ /[TDBR]/ { print $3 }' | grep -v '^hrt_' || true)
	test -z "$bad" || fail "exported without the hrt_ prefix:" $bad
	ok
	nfun=$(nm -D --defined-only "$so" | grep -c ' T hrt_')
	make -s uninstall PREFIX="$prefix" LIBDIR="$libdir" DESTDIR="$dest" >/dev/null
	left=$(find "$dest" -type f -o -type l)
	test -z "$left" || fail "left after make uninstall:" $left
	ok
	# hrt's own directories go too (the shared ones, lib or share/man, stay)
	for dir in "$libdir/cmake/hrt" "$prefix/share/doc/hrt/examples" "$prefix/share/doc/hrt"; do
		[ ! -d "$dest$dir" ] || fail "make uninstall left hrt's empty $dir"
	done
	[ -d "$dest$libdir" ] || fail "make uninstall removed $libdir, not hrt's"
	ok
	echo "$prefix: installed, linked, ran, uninstalled; $nfun functions exported"
}

# A private prefix, no DESTDIR: LDCONFIG is a stand-in that logs its calls
# and lists, for -v, the directories the linker searches: not $stage/p/lib
# (so it must not run: the system's cache has no use for a private prefix),
# then, for a second install, that one (as root it must run then).
check_private() {
	prefix=$stage/p
	printf '#!/bin/sh\necho "$*" >> %s/ldconfig.log\n[ "$1" != -v ] || printf "%%s\\n" /lib: $SEARCHED\n' \
		"$stage" > "$stage/ldconfig"
	chmod +x "$stage/ldconfig"
	SEARCHED= make -s install O="$O" PREFIX="$prefix" LDCONFIG="$stage/ldconfig" > "$stage/install.out"
	fail_log=$stage/install.out
	! grep -qx '' "$stage/ldconfig.log" || fail "make install to a private prefix ran ldconfig"
	grep -q "is not a directory the dynamic linker searches" "$stage/install.out" ||
		fail "make install to a private prefix did not say why ldconfig did not run"
	ok
	grep -qF -- "-Wl,-rpath,$prefix/lib" "$stage/install.out" ||
		fail "make install to a private prefix did not say to link with an rpath"
	grep -qF -- "-DCMAKE_PREFIX_PATH=$prefix" "$stage/install.out" ||
		fail "make install to a private prefix did not say how CMake finds it"
	: > "$stage/ldconfig.log"
	SEARCHED="$prefix/lib:" make -s install O="$O" PREFIX="$prefix" LDCONFIG="$stage/ldconfig" \
		> "$stage/install2.out"
	fail_log=$stage/install2.out
	if [ "$(id -u)" -eq 0 ]; then
		grep -qx '' "$stage/ldconfig.log" || fail "make install as root into a searched directory did not run ldconfig"
	else
		! grep -qx '' "$stage/ldconfig.log" || fail "make install ran ldconfig, not root"
		grep -q "not root, so ldconfig did not run" "$stage/install2.out" || fail "not root: not said"
	fi
	! grep -q "rpath" "$stage/install2.out" || fail "a searched directory still got the private-prefix note"
	ok
	fail_log=
	if command -v pkg-config >/dev/null 2>&1; then
		export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
		cflags=$(pkg-config --cflags hrt) libs=$(pkg-config --libs hrt)
		libdir=$(pkg-config --variable=libdir hrt)
	else
		pc=$prefix/lib/pkgconfig/hrt.pc
		cflags="-I$(pc_get "$pc" includedir)" libs="-L$(pc_get "$pc" libdir) -lhrt"
		libdir=$(pc_get "$pc" libdir)
	fi
	cc -std=c11 -Wall -Wextra -Werror ${SAN_FLAGS:-} $cflags -o "$stage/exp" "$stage/ex.c" \
		$libs -Wl,-rpath,"$libdir" -pthread
	(unset LD_LIBRARY_PATH; "$stage/exp") > "$stage/out" || fail "the rpath-linked example failed"
	test "$(grep -c '^run ' "$stage/out")" -eq 3 || fail "the rpath-linked example did not run 3 timers"
	ok
	make -s uninstall PREFIX="$prefix" >/dev/null
	echo "$prefix (no DESTDIR): ldconfig step and rpath note checked; linked with an rpath, ran"
}

check_prefix /opt/hrt /opt/hrt/lib 1
check_prefix /usr/local /usr/local/lib/x86_64-linux-gnu 2
check_private
echo "test_install: $n checks passed"
