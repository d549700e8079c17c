#!/bin/sh
# SPDX-License-Identifier: MIT
# check_layers.sh - the library's layering, checked on what the compiler
# made of it, against the picture docs/DESIGN.md draws.  From nm: an object
# of $O/src needs another when it leaves a symbol undefined that the other
# defines.  From $DESIGN: the lines "Ln  obj obj ..." inside its layers
# block, top to bottom.  Fails if an object of $O/src is in no layer (or
# in two), if a layer names an object that does not exist, if any object
# needs one in its own layer or above (which also rules out every cycle),
# if an object calls a public hrt_ function of the library (one door: the
# guard once per public call), or if a file of $SRC or of $TOOLS/*/ passes
# $MAX lines.  Prints the layers, top to
# bottom, each object with what it needs, so the log shows the picture.
# Headers are edges nm cannot see: the base's insides (base_priv.h,
# guard.h, clock.h: its struct, entry guard and clock) may be included
# only by the files of the base's layers, L5 to L7 of the picture, and
# lifecycle.c, which makes the base; a client above (the loop, the host
# plan) reaches the base through base.h and the public calls.
#   O=build SRC=src TOOLS=tools MAX=700 DESIGN=docs/DESIGN.md sh tests/check_layers.sh
set -u
O=${O:-build}
SRC=${SRC:-src}
MAX=${MAX:-700}
DESIGN=${DESIGN:-docs/DESIGN.md}
fail=0

objs=$(ls "$O"/src/*.o 2>/dev/null)
if [ -z "$objs" ]; then
	echo "no objects in $O/src"
	exit 1
fi
if ! grep -q '^<!-- layers -->' "$DESIGN" 2>/dev/null; then
	echo "$DESIGN: no <!-- layers --> block"
	exit 1
fi

# "layer N OBJ" lines from the picture, then "def OBJ SYM" / "use OBJ SYM"
# lines from nm; awk checks one against the other.
{
	awk '/^<!-- layers -->/ { on = 1; next } /^<!-- \/layers -->/ { on = 0 }
	     on && $1 ~ /^L[0-9]+$/ {
		for (i = 2; i <= NF && $i != "#"; i++)
			print "layer", substr($1, 2), $i ".o", FILENAME ":" FNR
	     }' "$DESIGN"
	for o in $objs; do
		n=$(basename "$o")
		echo "obj $n"
		nm -P --defined-only "$o" | awk -v o="$n" '$2 ~ /^[TDBRVW]$/ { print "def", o, $1 }'
		nm -P -u "$o" | awk -v o="$n" '{ print "use", o, $1 }'
	done
} | awk '
	$1 == "layer" {
		if ($3 in lay) {
			printf "%s: %s is in layers L%d and L%d\n", $4, $3, lay[$3], $2
			bad = 1
		}
		lay[$3] = $2 + 0
		where[$3] = $4
		if ($2 + 0 > top)
			top = $2 + 0
		next
	}
	$1 == "obj" { objs[$2] = 1; next }
	$1 == "def" { def[$3] = $2; next }
	$1 == "use" { use[++nu] = $2 " " $3 }
	END {
		for (o in objs)
			if (!(o in lay)) {
				printf "NO LAYER: %s is not in the layers block of the design\n", o
				bad = 1
			}
		for (o in lay)
			if (!(o in objs)) {
				printf "%s: %s names no object of the library\n", where[o], o
				bad = 1
			}
		for (i = 1; i <= nu; i++) {
			split(use[i], u, " ")
			d = def[u[2]]
			if (d == "" || d == u[1])
				continue
			if (!((u[1], d) in edge))
				edge[u[1], d] = u[2]
			else if (index(" " edge[u[1], d] " ", " " u[2] " ") == 0)
				edge[u[1], d] = edge[u[1], d] " " u[2]
			needs[u[1]] = needs[u[1]] ((u[1], d) in seen ? "" : " " d)
			seen[u[1], d] = 1
			if ((u[1] in lay) && (d in lay) && lay[d] >= lay[u[1]]) {
				if (!((u[1], d) in told))
					printf "UPWARD: %s (L%d) needs %s (L%d) for %s\n",
					       u[1], lay[u[1]], d, lay[d], u[2]
				told[u[1], d] = 1
				bad = 1
			}
		}
		for (l = top; l >= 0; l--)
			for (o in lay)
				if (lay[o] == l)
					printf "L%-2d %-14s needs%s\n", l, o, needs[o] == "" ? " nothing" : needs[o]
		exit bad
	}' || fail=1

# One door: no object of the library calls a public function (hrt_[a-z]).
# A public call runs the entry guard again; the clients above ran theirs
# and call base.h, each call one critical section.
for o in $objs; do
	pub=$(nm -P -u "$o" | awk '$1 ~ /^hrt_[a-z]/ { printf " %s", $1 }')
	if [ -n "$pub" ]; then
		echo "PUBLIC CALL: $(basename "$o") calls$pub: call base.h's internal door instead"
		fail=1
	fi
done
# The include rule: "L<n> <file>" from the picture, then each .c's includes.
{
	awk '/^<!-- layers -->/ { on = 1; next } /^<!-- \/layers -->/ { on = 0 }
	     on && $1 ~ /^L[0-9]+$/ {
		for (i = 2; i <= NF && $i != "#"; i++)
			print "layer", substr($1, 2), $i
	     }' "$DESIGN"
	for f in "$SRC"/*.c; do
		sed -n 's/^#include "\(base_priv\.h\|guard\.h\|clock\.h\)".*/\1/p' "$f" |
			while read -r h; do echo "inc $(basename "$f" .c) $h"; done
	done
} | awk '
	$1 == "layer" { lay[$3] = $2 + 0; next }
	$1 == "inc" && $2 != "lifecycle" && (!($2 in lay) || lay[$2] < 5 || lay[$2] > 7) {
		printf "INCLUDE: %s.c (L%s) includes %s, the base'"'"'s insides: only L5-L7 and lifecycle.c may\n",
		       $2, ($2 in lay) ? lay[$2] : "?", $3
		bad = 1
	}
	END { exit bad }' || fail=1

# The cap holds for the tools' files too, a folder per concept (tools/*/*).
TOOLS=${TOOLS:-tools}
for f in "$SRC"/*.c "$SRC"/*.h "$TOOLS"/*/*.c "$TOOLS"/*/*.h; do
	[ -e "$f" ] || continue
	n=$(wc -l < "$f")
	if [ "$n" -gt "$MAX" ]; then
		echo "TOO LONG: $f has $n lines (at most $MAX)"
		fail=1
	fi
done
[ "$fail" -eq 0 ] && echo "layers: $(echo "$objs" | wc -w) objects, each needing only layers below its own in $DESIGN; every file of $SRC and $TOOLS/*/ has at most $MAX lines"
exit "$fail"
