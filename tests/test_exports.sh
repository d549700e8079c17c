#!/bin/sh
# SPDX-License-Identifier: MIT
# libhrt.so exports exactly the HRT_EXTERN functions of include/hrt.h, each
# under the version node src/libhrt.map names it in, and nothing else: no
# internal hrt__ function, no unversioned symbol, no data, no function of
# hrt.h left out.  The nodes are the releases' (NODES below: one added by
# the release that adds functions, each inheriting the one before), each
# defined in the library; what a node holds is read from the map, so a
# function the library has in another node than the map's (moved, or the
# library linked with another script) fails.  Read with nm -D (binutils,
# part of build-essential); O (the build) and MAP (the map) may name
# others, as a planted bug does.
set -u
. "$(dirname "$0")/lib.sh"
O=${O:-build}
MAP=${MAP:-src/libhrt.map}
NODES="HRT_1.0 HRT_1.1 HRT_1.2 HRT_1.3"
scratch bad
# Sorted files $1 and $2 equal, or their differences in $t/bad: a line only
# in $1 prefixed with $3, one only in $2 with $4.
differ() {
	comm -3 "$1" "$2" | sed "s|^\t|$4|;t;s|^|$3|" >"$t/bad"
	[ ! -s "$t/bad" ]
}
so=$O/libhrt.so
sed -n 's/^HRT_EXTERN[^(]*[^A-Za-z0-9_(]\([A-Za-z_][A-Za-z0-9_]*\)(.*/\1/p' include/hrt.h |
	sort -u >"$t/declared"
[ -s "$t/declared" ] || fail "include/hrt.h: no HRT_EXTERN function found"
nm -D --defined-only "$so" >"$t/nm" || fail "nm -D $so"

# The map as "node NAME PARENT" and "sym NAME FUNCTION" lines (a node's
# block starts at column 0; the header comment's example does not).
awk '/^[A-Za-z][A-Za-z0-9_.]*[ \t]*\{/ { node = $1; glob = 0; next }
     node != "" && /^}/ { p = $2; sub(/;$/, "", p)
	print "node", node, (p == "" ? "-" : p); node = ""; next }
     node != "" && /global:/ { glob = 1; next }
     node != "" && /local:/ { glob = 0; next }
     node != "" && glob && $1 ~ /^[A-Za-z_][A-Za-z0-9_]*;$/ { s = $1; sub(/;$/, "", s)
	print "sym", node, s }' "$MAP" >"$t/map"
# The nodes, in order, each inheriting the one before.
awk '$1 == "node" { print $2, $3 }' "$t/map" >"$t/nodes"
prev=-
for node in $NODES; do
	echo "$node $prev"
	prev=$node
done >"$t/want"
{ sed 's/^/map:  /' "$t/nodes"; sed 's/^/want: /' "$t/want"; } >"$t/bad"
cmp -s "$t/nodes" "$t/want" || fail "$MAP: its nodes are not $NODES, each inheriting the one before"
ok

# Every exported symbol: a node's own (A NODE) or a function in a node.
awk -v nodes=" $NODES " '{ v = $3; sub(/^[^@]*@@/, "", v) }
	!($2 == "A" && index(nodes, " " $3 " ")) &&
	!($2 == "T" && $3 ~ /^[a-z_0-9]+@@/ && index(nodes, " " v " "))' "$t/nm" >"$t/bad"
[ ! -s "$t/bad" ] || fail "$so exports symbols outside $NODES or not functions"
ok
for node in $NODES; do
	grep -q " A $node\$" "$t/nm" || fail "$so defines no version node $node"
	ok
	# The node holds the functions the map lists in it, no more, no fewer.
	awk -v n="$node" '$1 == "sym" && $2 == n { print $3 }' "$t/map" | sort >"$t/in_map"
	[ -s "$t/in_map" ] || fail "$MAP: node $node lists no function"
	sed -n "s/.* T \\(.*\\)@@$node\$/\\1/p" "$t/nm" | sort >"$t/in_so"
	differ "$t/in_map" "$t/in_so" "in the map's $node, not in $so's: " \
		"in $so's $node, not in the map's: " || fail "$so's node $node differs from $MAP's"
	ok
	echo "$node: $(wc -l <"$t/in_so")" >>"$t/count"
done

sed -n 's/.* T \(.*\)@@.*$/\1/p' "$t/nm" | sort >"$t/exported"
differ "$t/declared" "$t/exported" "in hrt.h, not exported: " "exported, not in hrt.h: " ||
	fail "$so and include/hrt.h differ"
ok
echo "test_exports: $n checks passed: $(wc -l <"$t/exported") functions, all of hrt.h;" \
	"by node $(paste -sd, "$t/count" | sed 's/,/, /g') (as $MAP)"
