#!/bin/sh
# SPDX-License-Identifier: MIT
# contrib/nginx's scripts and bench/nginx's, without an nginx source tree:
# their usage, their skips without NGINX_SRC (the one skip CI allows beside
# packages, by name), their errors for a tree that is not nginx or a
# release whose lines differ (named, exit 1, the given tree untouched), and
# build.sh's edits made on a tree of placeholder files that holds the lines
# it edits, with a configure and make of the test's own (no nginx code).
# The suite itself: contrib/nginx/test.sh with NGINX_SRC and NGINX_TESTS.
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
scratch err
O=${O:-build}
b=contrib/nginx/build.sh
expect 2 "build.sh without arguments" sh $b
grep -q '^usage: ' "$fail_log" || fail "build.sh: no usage line"
expect 2 "build.sh with an unknown kind" sh $b patched "$t" "$t/out"
grep -q "unknown kind 'patched'" "$fail_log" || fail "build.sh: the kind not named"
expect 1 "build.sh on a tree that is not nginx" sh $b stock "$t/nowhere" "$t/out"
grep -q "nowhere: not an nginx source tree" "$fail_log" || fail "build.sh: the tree not named"

# test.sh and run.sh skip by name without the sources; test.sh's errors.
env -u NGINX_SRC -u NGINX_TESTS sh contrib/nginx/test.sh >"$t/out" 2>"$fail_log"
st=$?
[ "$st" -eq 77 ] || fail "test.sh without NGINX_SRC: exit $st, want 77"
grep -qx 'SKIP: nginx-tests on hrt (nginx source: set NGINX_SRC)' "$t/out" || fail "test.sh: no SKIP line"
ok
expect 2 "test.sh with three arguments" sh contrib/nginx/test.sh a b c
expect 1 "test.sh on a tree that is not nginx" sh contrib/nginx/test.sh "$t/nowhere" "$t"
grep -q "not an nginx source tree (NGINX_SRC)" "$fail_log" || fail "test.sh: NGINX_SRC not named"
env -u NGINX_SRC sh bench/nginx/run.sh >"$t/out" 2>"$fail_log" || fail "run.sh without NGINX_SRC: exit $?"
grep -qx 'SKIP bench-nginx (nginx source: set NGINX_SRC)' "$t/out" || fail "run.sh: no SKIP line"
ok
make -s bench-nginx O="$O" NGINX_SRC= >"$t/out" 2>"$fail_log" || fail "make bench-nginx without NGINX_SRC: exit $?"
grep -qx 'SKIP bench-nginx (nginx source: set NGINX_SRC)' "$t/out" || fail "make bench-nginx: no SKIP line"
ok

# The client's usage and a refused connection.
[ -x "$O/bench/nginx-client" ] || make -s "$O/bench/nginx-client" O="$O" 2>"$fail_log" || fail "building nginx-client"
expect 2 "nginx-client without --path" "$O/bench/nginx-client" --port 1 --conns 1
expect 2 "nginx-client with a bad number" "$O/bench/nginx-client" --port x --conns 1 --path /f
expect 1 "nginx-client to a closed port" "$O/bench/nginx-client" --port 1 --conns 1 --path /f
grep -q "connecting to 127.0.0.1" "$fail_log" || fail "nginx-client: the failed connect not said"

# build.sh's edits, on placeholder files holding the lines it edits.
command -v pkg-config >/dev/null 2>&1 || skip "build.sh's edits" pkg-config
s=$t/src
mkdir -p "$s/auto" "$s/src/event/modules" "$t/pc"
printf 'Name: hrt\nVersion: 1.2.0\nDescription: test\nCflags: -I/hrt-inc\nLibs: -L/hrt-lib -lhrt\n' > "$t/pc/hrt.pc"
cat > "$s/auto/configure" <<'CONF'
#!/bin/sh
# a stand-in: the build "links" the edited files into objs/nginx
printf '%s\n' "$@" > configure.args
printf 'all:\n\tmkdir -p objs && cat src/event/ngx_event.h src/event/modules/ngx_epoll_module.c > objs/nginx && chmod +x objs/nginx\n' > Makefile
CONF
chmod +x "$s/auto/configure"
echo old > "$s/src/event/ngx_event_timer.c"
printf '#include <ngx_config.h>\n#include <ngx_core.h>\nstruct e {\n    ngx_rbtree_node_t   timer;\n};\n' > "$s/src/event/ngx_event.h"
printf '    events = epoll_wait(ep, event_list, (int) nevents, timer);\n' > "$s/src/event/modules/ngx_epoll_module.c"
sum0=$(cat "$s/src/event/ngx_event.h" "$s/src/event/modules/ngx_epoll_module.c" | cksum)
PKG_CONFIG_PATH=$t/pc expect 0 "build.sh hrt on placeholder files" sh $b hrt "$s" "$t/o" --with-x
bin=$t/o/src/objs/nginx
grep -qx '#include <ngx_event_hrt.h>' "$bin" || fail "ngx_event.h does not include ngx_event_hrt.h"
grep -qx '    ngx_event_timer_node_t  timer;' "$bin" || fail "ngx_event_t's timer not replaced"
grep -qx '    events = ngx_event_timer_epoll_wait(ep, event_list, (int) nevents, timer, flags);' "$bin" ||
	fail "the epoll_wait call not replaced"
cmp -s contrib/nginx/ngx_event_timer.c "$t/o/src/src/event/ngx_event_timer.c" || fail "ngx_event_timer.c not copied"
grep -q 'with-cc-opt=.*-I/hrt-inc' "$t/o/src/configure.args" || fail "configure not given hrt's cflags"
grep -q 'with-ld-opt=.*-lhrt.*-Wl,-rpath,' "$t/o/src/configure.args" || fail "configure not given hrt's libs and rpath"
grep -qx -- '--with-x' "$t/o/src/configure.args" || fail "the configure options not passed on"
[ "$(cat "$s/src/event/ngx_event.h" "$s/src/event/modules/ngx_epoll_module.c" | cksum)" = "$sum0" ] ||
	fail "build.sh changed the source tree it was given"
ok
# A release whose line differs: named, exit 1.
printf 'struct e {\n    void *timer;\n};\n#include <ngx_core.h>\n' > "$s/src/event/ngx_event.h"
PKG_CONFIG_PATH=$t/pc expect 1 "build.sh on a tree whose lines differ" sh $b hrt "$s" "$t/o"
grep -q "src/event/ngx_event.h: expected the line 'ngx_rbtree_node_t   timer;' once, found it 0 times" "$fail_log" ||
	fail "build.sh: the missing line not named"
PKG_CONFIG_PATH=$t/nowhere expect 1 "build.sh hrt without libhrt" sh $b hrt "$s" "$t/o"
grep -q "libhrt not found by pkg-config" "$fail_log" || fail "build.sh: missing libhrt not said"
echo "$n checks"
