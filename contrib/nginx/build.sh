#!/bin/sh
# SPDX-License-Identifier: MIT
# build.sh - builds nginx from a given source tree, stock or with its
# event timers on libhrt (this directory's ngx_event_timer.c), into a
# directory of its own: the source tree is copied there first and never
# changed.  Tested with nginx release-1.31.4.
#
#   contrib/nginx/build.sh stock|hrt NGINX_SRC OUT [configure options...]
#
# OUT/src: the copy; OUT/src/objs/nginx: the binary (printed last).  The
# same configure options for both kinds (default: those of NGX_CONFIGURE
# below, the modules Debian's libssl-dev, libpcre2-dev and zlib1g-dev make
# possible).  CC_OPT and LD_OPT (environment) go to --with-cc-opt and
# --with-ld-opt of both (e.g. CC_OPT=-fsanitize=address); for hrt the
# flags of pkg-config's hrt are added (PKG_CONFIG_PATH finds a private
# prefix; its libdir becomes the binary's rpath).
#
# The hrt kind makes these edits in the copy, each checked to apply once
# (a release that differs stops the build and names the line):
#   1. src/event/ngx_event_timer.c, .h: replaced by this directory's;
#      src/event/ngx_event_hrt.h added (the timer an event embeds);
#   2. src/event/ngx_event.h: includes ngx_event_hrt.h, and ngx_event_t's
#      `timer` becomes an ngx_event_timer_node_t (was the tree's node);
#   3. src/event/modules/ngx_epoll_module.c: its epoll_wait call in
#      ngx_epoll_process_events becomes ngx_event_timer_epoll_wait (the
#      same arguments and the flags), the sleep hrt plans.
# Exit 0; 2 for bad usage; 1 with what failed for anything else.
set -eu
me=contrib/nginx/build.sh
here=$(cd "$(dirname "$0")" && pwd)

NGX_CONFIGURE="--with-threads --with-file-aio --with-http_ssl_module --with-http_v2_module
--with-http_realip_module --with-http_addition_module --with-http_sub_module --with-http_dav_module
--with-http_flv_module --with-http_mp4_module --with-http_gunzip_module --with-http_gzip_static_module
--with-http_auth_request_module --with-http_random_index_module --with-http_secure_link_module
--with-http_degradation_module --with-http_slice_module --with-http_stub_status_module
--with-mail --with-mail_ssl_module --with-stream --with-stream_ssl_module --with-stream_realip_module
--with-stream_ssl_preread_module"

usage() {
	echo "usage: $me stock|hrt NGINX_SRC OUT [configure options...]" >&2
	exit 2
}
die() {
	echo "$me: $*" >&2
	exit 1
}

[ $# -ge 3 ] || usage
kind=$1 src=$2 out=$3
shift 3
case $kind in stock|hrt) ;; *) echo "$me: unknown kind '$kind' (stock or hrt)" >&2; usage ;; esac
if [ ! -f "$src/auto/configure" ] || [ ! -f "$src/src/event/ngx_event_timer.c" ]; then
	die "$src: not an nginx source tree (no auto/configure, src/event/ngx_event_timer.c)"
fi
command -v make >/dev/null 2>&1 || die "make not found (install build-essential)"

cc_opt=${CC_OPT:-} ld_opt=${LD_OPT:-}
if [ "$kind" = hrt ]; then
	command -v pkg-config >/dev/null 2>&1 || die "pkg-config not found (install pkg-config)"
	pkg-config --exists hrt ||
		die "libhrt not found by pkg-config: make install PREFIX=DIR, then PKG_CONFIG_PATH=DIR/lib/pkgconfig"
	cc_opt="$cc_opt $(pkg-config --cflags hrt)"
	ld_opt="$ld_opt $(pkg-config --libs hrt) -Wl,-rpath,$(pkg-config --variable=libdir hrt)"
fi

mkdir -p "$out" || die "$out: cannot make the directory"
rm -rf "$out/src"
mkdir "$out/src"
(cd "$src" && tar --exclude=.git -cf - .) | (cd "$out/src" && tar -xf -) ||
	die "copying $src to $out/src failed"
t=$out/src

# edit FILE OLD NEW: OLD (a fixed string) must be in FILE exactly once.
edit() {
	n=$(grep -cF -- "$2" "$1" || true)
	[ "$n" = 1 ] || die "${1#"$t"/}: expected the line '$2' once, found it $n times (not nginx 1.31.4?)"
	OLD=$2 NEW=$3 awk '{ i = index($0, ENVIRON["OLD"]);
		if (i) $0 = substr($0, 1, i - 1) ENVIRON["NEW"] substr($0, i + length(ENVIRON["OLD"]));
		print }' "$1" > "$1.new" && mv "$1.new" "$1"
	echo "  ${1#"$t"/}: '$2' -> '$3'"
}

if [ "$kind" = hrt ]; then
	echo "$me: the edits, in $t:"
	for f in ngx_event_timer.c ngx_event_timer.h ngx_event_hrt.h; do
		cp "$here/$f" "$t/src/event/$f"
		echo "  src/event/$f: from contrib/nginx/$f"
	done
	edit "$t/src/event/ngx_event.h" "#include <ngx_core.h>" \
		"#include <ngx_core.h>
#include <ngx_event_hrt.h>"
	edit "$t/src/event/ngx_event.h" "ngx_rbtree_node_t   timer;" "ngx_event_timer_node_t  timer;"
	edit "$t/src/event/modules/ngx_epoll_module.c" \
		"epoll_wait(ep, event_list, (int) nevents, timer)" \
		"ngx_event_timer_epoll_wait(ep, event_list, (int) nevents, timer, flags)"
fi

# shellcheck disable=SC2086 # the default options, one a word
[ $# -gt 0 ] || set -- $NGX_CONFIGURE
echo "$me: configuring $kind nginx in $t"
(cd "$t" && ./auto/configure --prefix="$out/prefix" --with-cc-opt="$cc_opt" --with-ld-opt="$ld_opt" "$@") \
	> "$out/configure.log" 2>&1 || { tail -n 20 "$out/configure.log" >&2; die "configure failed ($out/configure.log)"; }
echo "$me: building ($out/build.log)"
make -C "$t" -j"${JOBS:-2}" > "$out/build.log" 2>&1 || { tail -n 30 "$out/build.log" >&2; die "make failed ($out/build.log)"; }
[ -x "$t/objs/nginx" ] || die "no binary at $t/objs/nginx"
echo "$t/objs/nginx"
