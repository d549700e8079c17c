#!/bin/sh
# SPDX-License-Identifier: MIT
# test_persist.sh - hrt slack --persist, --unpersist and --list, against a
# private root (--root DIR, and $HRT_SLACK_ROOT for the notes of what was
# applied): the drop-in systemd reads for a service
# (ROOT/etc/systemd/system/UNIT.d/hrt-slack.conf, [Service]
# TimerSlackNSec=), checked by systemd-analyze verify where it is
# installed; replaced when hrt wrote it, refused when it did not or when a
# symbolic link is on the way; removed exactly (the unit, the rest of the
# root and the real /etc untouched); a process in no service refused with
# why; --list shows the drop-ins and the processes hrt set still running;
# bad input is one line, a non-zero exit and nothing written.  Nothing
# outside the scratch root is written, but the slack of this test's own
# sleeper (applying it needs root: skipped by name without).
set -u
. "$(dirname "$0")/lib.sh"
tool_setup persist
r=$d/root
mkdir -p "$r/etc/systemd/system" "$r/bin"
export HRT_SLACK_ROOT=$r
dropin=$r/etc/systemd/system/hrt-t.service.d/hrt-slack.conf
snap() { (cd "$r" && find . | sort) >"$d/$1"; }
etc_before=$(ls -la /etc/systemd/system 2>/dev/null | md5sum)
# a unit of its own, as a distribution installs one, with a shell in the
# root for its ExecStart (systemd-analyze verify checks it is there)
cp /bin/true "$r/bin/true"
printf '[Unit]\nDescription=hrt test\nDefaultDependencies=no\n[Service]\nExecStart=/bin/true\n' \
	>"$r/etc/systemd/system/hrt-t.service"

# --- persist a unit ---------------------------------------------------------
expect 0 "--persist UNIT" sh -c "'$HRT' slack 1ms --persist hrt-t.service >'$d/out'"
[ "$(head -1 "$dropin")" = "# Written by hrt slack --persist; hrt slack --unpersist UNIT removes it." ] ||
	fail "the drop-in's first line is not hrt's mark"
grep -qx '\[Service\]' "$dropin" && grep -qx 'TimerSlackNSec=1000000' "$dropin" ||
	{ cat "$dropin"; fail "the drop-in lacks [Service] TimerSlackNSec=1000000"; }
grep -q "hrt-t.service: persisted in $dropin; systemd reads it after systemctl daemon-reload" "$d/out" ||
	{ cat "$d/out"; fail "--persist does not say where and what to run"; }
[ -z "$(find "$r" -name '.hrt-slack*')" ] || fail "a temporary was left beside the drop-in"
ok
if command -v systemd-analyze >/dev/null 2>&1; then
	systemd-analyze verify --root="$r" --recursive-errors=no --man=no hrt-t.service \
		>"$d/verify" 2>&1 || { cat "$d/verify"; fail "systemd-analyze verify of the drop-in"; }
	! grep -q 'hrt-slack.conf' "$d/verify" || { cat "$d/verify"; fail "systemd-analyze names the drop-in"; }
	# the check can fail: a value systemd cannot read is named
	sed 's/^TimerSlackNSec=.*/TimerSlackNSec=bogus/' "$dropin" >"$d/bogus"
	cp "$dropin" "$d/good" && cp "$d/bogus" "$dropin"
	systemd-analyze verify --root="$r" --recursive-errors=no --man=no hrt-t.service >"$d/verify" 2>&1
	grep -q 'hrt-slack.conf:.*bogus' "$d/verify" || { cat "$d/verify"; fail "verify did not see a planted bad value"; }
	cp "$d/good" "$dropin"
	ok
else
	noverify=1      # skipped by name below, once the rest has run
fi
# persisted again: replaced, as hrt wrote it
expect 0 "--persist again" sh -c "'$HRT' slack 2ms --persist hrt-t.service >/dev/null"
grep -qx 'TimerSlackNSec=2000000' "$dropin" || fail "--persist 2ms did not replace hrt's drop-in"
ok
expect 0 "--list" sh -c "'$HRT' slack --list >'$d/list'"
grep -q "^  hrt-t.service  *2 ms  *$dropin\$" "$d/list" || { cat "$d/list"; fail "--list lacks the drop-in"; }
ok

# --- refusals: nothing written, nothing removed -------------------------------
snap before
other=$r/etc/systemd/system/other.service.d
mkdir -p "$other" && printf '[Service]\nTimerSlackNSec=5\n' >"$other/hrt-slack.conf"
snap before
expect 1 "--persist over a file hrt did not write" "$HRT" slack 1ms --persist other.service
grep -q "other.service.d/hrt-slack.conf: hrt did not write it" "$fail_log" || fail "no reason given"
expect 1 "--unpersist of a file hrt did not write" "$HRT" slack --unpersist other.service
grep -qx 'TimerSlackNSec=5' "$other/hrt-slack.conf" || fail "a file hrt did not write was changed"
ok
mkdir "$d/elsewhere"
ln -s "$d/elsewhere" "$r/etc/systemd/system/link.service.d"
expect 1 "--persist through a linked directory" "$HRT" slack 1ms --persist link.service
grep -q 'link.service.d: a symbolic link: not followed' "$fail_log" || fail "linked directory: no reason"
[ -z "$(ls -A "$d/elsewhere")" ] || fail "--persist wrote through a symbolic link"
ok
mkdir "$r/etc/systemd/system/file.service.d"
echo x >"$d/target"
ln -s "$d/target" "$r/etc/systemd/system/file.service.d/hrt-slack.conf"
expect 1 "--persist onto a linked file" "$HRT" slack 1ms --persist file.service
expect 1 "--unpersist of a linked file" "$HRT" slack --unpersist file.service
[ "$(cat "$d/target")" = x ] && [ -L "$r/etc/systemd/system/file.service.d/hrt-slack.conf" ] ||
	fail "a symbolic link or its target was touched"
ok
echo x >"$r/etc/systemd/system/flat.service.d"    # a file where the directory goes
expect 1 "--persist where a file stands for the directory" "$HRT" slack 1ms --persist flat.service
[ "$(cat "$r/etc/systemd/system/flat.service.d")" = x ] || fail "the file was changed"
ok
snap after
for bad in "1x --persist hrt-t.service" "1ms --persist ../x.service" "1ms --persist .service" \
	"1ms --persist a/b.service" "--list extra" "1ms --persist --unpersist hrt-t.service"; do
	# shellcheck disable=SC2086
	expect 2 "slack $bad" "$HRT" slack $bad
	[ "$(wc -l <"$fail_log")" -eq 1 ] || fail "slack $bad: not one line"
done
# unit names as long as a file name may be: UNIT.d must fit uncut (255
# bytes), so 253 characters is the longest; never a cut directory name
long253=$(printf '%0245d' 0 | tr 0 u).service
expect 0 "--persist a 253-character unit" sh -c "'$HRT' slack 1ms --persist $long253 >/dev/null"
[ -f "$r/etc/systemd/system/$long253.d/hrt-slack.conf" ] || fail "the 253-character unit's drop-in"
"$HRT" slack --list | grep -q "^  $long253 " || fail "--list lacks the 253-character unit"
expect 0 "--unpersist a 253-character unit" sh -c "'$HRT' slack --unpersist $long253 >/dev/null"
[ ! -e "$r/etc/systemd/system/$long253.d" ] || fail "--unpersist left the long unit's directory"
ok
for len in 254 255 300; do
	u=$(printf "%0$((len - 8))d" 0 | tr 0 v).service
	expect 2 "--persist a $len-character unit" "$HRT" slack 1ms --persist "$u"
	grep -q "$len characters: its drop-in directory UNIT.d would be longer than the 255 bytes" \
		"$fail_log" || fail "$len characters: no reason"
	[ "$(wc -l <"$fail_log")" -eq 1 ] || fail "$len characters: not one line"
	expect 2 "--unpersist a $len-character unit" "$HRT" slack --unpersist "$u"
done
snap after3
cmp -s "$d/after" "$d/after3" || fail "a long unit name changed the root: $(diff "$d/after" "$d/after3")"
ok
expect 2 "--root that is no directory" "$HRT" slack --list --root /dev/null
grep -q "^hrt slack: --root '/dev/null': expected a directory" "$fail_log" || fail "--root: message"
snap after2
cmp -s "$d/after" "$d/after2" || fail "a refused command changed the root: $(diff "$d/after" "$d/after2")"
ok

# --- unpersist: exactly the drop-in, and its directory once empty ---------------
expect 0 "--unpersist" sh -c "'$HRT' slack --unpersist hrt-t.service >'$d/out'"
[ ! -e "$dropin" ] && [ ! -e "${dropin%/*}" ] || fail "--unpersist left the drop-in or its directory"
[ -f "$r/etc/systemd/system/hrt-t.service" ] || fail "--unpersist touched the unit"
grep -q "removed $dropin; after systemctl daemon-reload" "$d/out" || fail "--unpersist does not say so"
ok
expect 1 "--unpersist of nothing" "$HRT" slack --unpersist hrt-t.service
grep -q "no drop-in of hrt's to remove" "$fail_log" || fail "--unpersist of nothing: no reason"
[ "$(ls -la /etc/systemd/system 2>/dev/null | md5sum)" = "$etc_before" ] || fail "the real /etc/systemd/system changed"
ok

# --- processes: applied and listed; refused for --persist outside a service ---
[ -z "${noverify:-}" ] || skip "systemd-analyze verify of hrt's drop-in ($n other checks passed)" systemd
[ "$(id -u)" -eq 0 ] || skip "hrt slack --persist PID and --list of applied slack (need root)" "root access"
sleep 600 &
sp=$!
trap 'kill "$sp" 2>/dev/null; rm -rf "$d"' EXIT
snap before
expect 1 "--persist a process in no service" "$HRT" slack 1ms --persist "$sp"
grep -q "refused: .*, so there is no system service to keep its slack in; hrt slack 1ms $sp" \
	"$fail_log" || fail "--persist PID outside a service: no reason"
[ "$(cat "/proc/$sp/timerslack_ns")" != 1000000 ] || fail "a refused --persist set the slack"
snap after
cmp -s "$d/before" "$d/after" || fail "a refused --persist PID wrote something"
ok
expect 0 "slack 3ms PID" sh -c "'$HRT' slack 3ms '$sp' >/dev/null"
"$HRT" slack --list >"$d/list" || fail "--list"
grep -q "^  $sp (sleep): set to 3 ms$" "$d/list" || { cat "$d/list"; fail "--list lacks the process set"; }
echo 4000000 >"/proc/$sp/timerslack_ns"
"$HRT" slack --list | grep -q "^  $sp (sleep): set to 3 ms, 4 ms now (changed since)$" ||
	fail "--list does not say the slack changed since"
expect 0 "slack --reset PID" sh -c "'$HRT' slack --reset '$sp' >/dev/null"
! "$HRT" slack --list | grep -q "^  $sp " || fail "--list shows a process reset"
ok
echo "test_persist: $n checks passed"
