#!/bin/sh
# SPDX-License-Identifier: MIT
# The CMake package make install writes beside hrt.pc: staged (DESTDIR)
# under /usr/local with a multiarch LIBDIR, as a distribution lays it out,
# find_package(hrt 1.0) from that root must give hrt::hrt, with which the
# README example builds and runs; hrt.h's MAJOR.MINOR must be found, a newer
# minor or major version than installed must not, nor a package whose
# library was removed.  Needs cmake.
set -u
. "$(dirname "$0")/lib.sh"
need cmake "CMake package test" cmake
O=${O:-build}
scratch log
dest=$t/root
libdir=/usr/local/lib/$(cc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
make -s install O="$O" PREFIX=/usr/local LIBDIR="$libdir" DESTDIR="$dest" >"$t/log" 2>&1 ||
	fail "make install DESTDIR=$dest"
[ -f "$dest$libdir/cmake/hrt/hrt-config.cmake" ] || fail "no $libdir/cmake/hrt/hrt-config.cmake"
ok
mkdir "$t/src"
sed -n '/<!-- example -->/,/<!-- end -->/p' README.md | sed '/^```/d;/^<!--/d' >"$t/src/example.c"
project() { # version
	cat >"$t/src/CMakeLists.txt" <<CM
cmake_minimum_required(VERSION 3.13)
project(readme_example C)
find_package(hrt $1 REQUIRED)
add_executable(example example.c)
target_link_libraries(example PRIVATE hrt::hrt)
CM
	rm -rf "$t/b"
	cmake -S "$t/src" -B "$t/b" -DCMAKE_PREFIX_PATH="$dest/usr/local" \
		-DCMAKE_C_FLAGS="-Wall -Wextra -Werror ${SAN_FLAGS:-}" >"$t/log" 2>&1
}
project 1.0 || fail "cmake: find_package(hrt 1.0) against $dest"
cmake --build "$t/b" >"$t/log" 2>&1 || fail "cmake --build"
LD_LIBRARY_PATH="$dest$libdir" "$t/b/example" >"$t/out" 2>"$t/log" || fail "the example built with cmake failed"
[ "$(grep -c '^run ' "$t/out")" -eq 3 ] || fail "the example built with cmake did not run 3 timers"
ok
# This release's own version (hrt.h), which a program using its additions
# asks for, is found; the next minor version is not.
major=$(sed -n 's/^#define HRT_VERSION_MAJOR \([0-9]*\)$/\1/p' include/hrt.h)
minor=$(sed -n 's/^#define HRT_VERSION_MINOR \([0-9]*\)$/\1/p' include/hrt.h)
[ -n "$major" ] && [ -n "$minor" ] || fail "include/hrt.h: no HRT_VERSION_MAJOR/MINOR"
project "$major.$minor" || fail "cmake: find_package(hrt $major.$minor) against $dest"
ok
next=$major.$((minor + 1))
project "$next" && fail "find_package(hrt $next) found an older hrt"
grep -q 'hrt-config.cmake, version: ' "$t/log" || fail "find_package(hrt $next) failed for another reason"
ok
project 99 && fail "find_package(hrt 99) found version $(sed -n 's/.*PACKAGE_VERSION "\(.*\)")/\1/p' \
	"$dest$libdir/cmake/hrt/hrt-config-version.cmake")"
grep -q 'hrt-config.cmake, version: ' "$t/log" || fail "find_package(hrt 99) failed for another reason"
ok
rm "$dest$libdir/libhrt.so.1"
project 1.0 && fail "find_package(hrt) succeeded with libhrt.so.1 removed"
# (cmake wraps the message where the path's length puts it)
tr -s ' \n' '  ' <"$t/log" | grep -q 'libhrt\.so\.1 or [^ ]*/include/hrt\.h is missing' ||
	fail "no message naming the missing library"
ok
echo "test_cmake: $n checks passed: find_package(hrt) from a staged root; README example built and ran"
