#!/bin/sh
# make install into a staging DESTDIR, then build the README example against
# the installed header, library and hrt.pc with pkg-config, and run it; check
# the shared library exports hrt_ symbols only, with the right soname.
set -eu
O=${O:-build}
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
make -s install O="$O" PREFIX=/opt/hrt DESTDIR="$stage" >/dev/null
for f in include/hrt.h lib/libhrt.a lib/libhrt.so lib/pkgconfig/hrt.pc bin/hrt; do
	test -e "$stage/opt/hrt/$f" || { echo "missing after install: $f"; exit 1; }
done
export PKG_CONFIG_SYSROOT_DIR="$stage" PKG_CONFIG_PATH="$stage/opt/hrt/lib/pkgconfig"
cflags=$(pkg-config --cflags hrt)
libs=$(pkg-config --libs hrt)
echo "pkg-config: $cflags $libs"
sed -n '/<!-- example -->/,/<!-- end -->/p' README.md | sed '/^```/d;/^<!--/d' > "$stage/ex.c"
cc -std=c11 -Wall -Wextra -Werror ${SAN_FLAGS:-} $cflags -o "$stage/ex" "$stage/ex.c" $libs -pthread
LD_LIBRARY_PATH="$stage/opt/hrt/lib" "$stage/ex" > "$stage/out"
test "$(grep -c '^run ' "$stage/out")" -eq 3 || { cat "$stage/out"; exit 1; }
soname=$(objdump -p "$stage/opt/hrt/lib/libhrt.so" | awk '/SONAME/ { print $2 }')
test "$soname" = libhrt.so.0 || { echo "soname $soname"; exit 1; }
bad=$(nm -D --defined-only "$stage/opt/hrt/lib/libhrt.so" | awk '$2 ~ /[TDBR]/ { print $3 }' | grep -v '^hrt_' || true)
test -z "$bad" || { echo "exported without the hrt_ prefix:"; echo "$bad"; exit 1; }
echo "installed, linked through pkg-config, ran; $(nm -D --defined-only "$stage/opt/hrt/lib/libhrt.so" | grep -c ' T hrt_') functions exported"
