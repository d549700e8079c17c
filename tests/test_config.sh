#!/bin/sh
# SPDX-License-Identifier: MIT
# Installing an optional package rebuilds what it decides.  The Makefile
# records its probes' results in $O/config.mk, rewritten only when one
# changes, and the tool's live.o (hrt top) depends on it.  Here, in a
# scratch build directory, a stand-in pkg-config first hides libtracefs,
# then offers a fake one (a header and an archive made here, enough for the
# Makefile's probe): config.mk must follow, live.o must be out of date only
# after the change, and an unchanged probe must leave config.mk alone.
# Needs only a C compiler: `make -q` asks, it does not build the fake.
set -u
. "$(dirname "$0")/lib.sh"
scratch err
mkdir -p "$t/bin" "$t/fake/include" "$t/fake/lib"
echo 'int tracefs_iterate_raw_events(void);' > "$t/fake/include/tracefs.h"
echo 'int tracefs_iterate_raw_events(void) { return 0; }' > "$t/fake/t.c"
cc -c -o "$t/fake/t.o" "$t/fake/t.c" && ar rcs "$t/fake/lib/libtracefs.a" "$t/fake/t.o" ||
	fail "cannot build the fake libtracefs"
# FAKE_TRACEFS=none: no libtracefs; =fake: the one above.  Other packages:
# the real pkg-config, if there is one.
real=$(command -v pkg-config || true)
cat > "$t/bin/pkg-config" <<EOF
#!/bin/sh
case " \$* " in
*" libtracefs "*)
	[ "\$FAKE_TRACEFS" = fake ] || exit 1
	case " \$* " in
	*" --cflags "*) echo "-I$t/fake/include" ;;
	*) echo "-L$t/fake/lib -ltracefs" ;;
	esac
	exit 0 ;;
esac
[ -n "$real" ] && exec "$real" "\$@"
exit 1
EOF
chmod +x "$t/bin/pkg-config"
o=$t/o
mk() { PATH="$t/bin:$PATH" FAKE_TRACEFS=$1 make -s O="$o" "$o/tools/live/live.o" ${2:-} 2>"$fail_log"; }

mk none || fail "make live.o without libtracefs"
grep -qx 'HAVE_TRACEFS = ' "$o/config.mk" || fail "config.mk does not record libtracefs missing"
ok
touch -d '2000-01-01' "$o/config.mk"
mk none -q || fail "live.o out of date, nothing changed"
[ "$(date -r "$o/config.mk" +%Y)" = 2000 ] || fail "config.mk rewritten though no probe changed"
ok
mk fake -q; [ $? -eq 1 ] || fail "libtracefs appeared: make -q live.o must say out of date (1)"
grep -qx 'HAVE_TRACEFS = y' "$o/config.mk" || fail "config.mk does not record the fake libtracefs"
grep -q "^TRACEFS_CFLAGS = -I$t/fake/include" "$o/config.mk" || fail "config.mk lacks TRACEFS_CFLAGS"
ok
touch "$o/tools/live/live.o"         # as if rebuilt; now take the package away
mk fake -q || fail "live.o out of date, nothing changed since"
mk none -q; [ $? -eq 1 ] || fail "libtracefs went away: make -q live.o must say out of date (1)"
grep -qx 'HAVE_TRACEFS = ' "$o/config.mk" || fail "config.mk does not record libtracefs gone"
ok
echo "test_config: $n checks passed: config.mk follows the libtracefs probe; live.o rebuilds on a change only"
