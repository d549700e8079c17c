#!/bin/sh
# SPDX-License-Identifier: MIT
# check_abi.sh - the ABI of a built libhrt.so against the baseline stored for
# its soname, abi/<soname>.abi (abidw's XML, written by make abi-baseline).
# Fails on any change but added functions and those abi/libhrt.abignore
# lists: a removed or changed function, a changed type of include/hrt.h.  Such a change needs a new SOVERSION
# (Makefile) and then a baseline for the new soname; an added function
# passes (libhrt.map puts it in a new version node).  Run by make abi-check
# and tests/test_abi.sh; needs abidiff (abigail-tools).
#   sh tests/check_abi.sh build/libhrt.so [ABI_DIR, default abi]
set -u
lib=${1:?usage: check_abi.sh LIBHRT.so [ABI_DIR]}
dir=${2:-abi}
command -v abidiff >/dev/null 2>&1 || { echo "check_abi: abidiff not found (install abigail-tools)"; exit 2; }
soname=$(objdump -p "$lib" | awk '$1 == "SONAME" { print $2 }')
[ -n "$soname" ] || { echo "check_abi: $lib: no soname"; exit 1; }
base=$dir/$soname.abi
if [ ! -f "$base" ]; then
	echo "check_abi: no baseline $base for soname $soname: after a soname bump, write it: make abi-baseline"
	exit 1
fi
# --no-added-syms: additions are compatible; --headers-dir2: only the
# types include/hrt.h declares are the public ABI; $dir/libhrt.abignore:
# the other changes hrt.h's rules make compatible.
sup=
[ -f "$dir/libhrt.abignore" ] && sup="--suppressions $dir/libhrt.abignore"
abidiff --no-added-syms --headers-dir2 include $sup "$base" "$lib"
rc=$?
case $rc in
0) echo "check_abi: $lib: ABI of $soname as in $base" ;;
*) if [ $((rc & 3)) -ne 0 ]; then
	echo "check_abi: abidiff failed (exit $rc)"
   else
	echo "check_abi: $lib changes the ABI of $soname (abidiff exit $rc, above):" \
		"keep it, or bump SOVERSION in the Makefile and run make abi-baseline"
   fi
   exit 1 ;;
esac
