#!/bin/sh
# SPDX-License-Identifier: MIT
# check_layers.sh - the library's layering, checked on what the compiler
# made of it.  Fails if two objects of $O/src (or any cycle of them) need
# each other's symbols, as nm reports them (a symbol one object leaves
# undefined and another defines), or if a file of $SRC passes $MAX lines.
# Prints every dependency found, so the log shows the layers.
#   O=build SRC=src MAX=700 sh tests/check_layers.sh
set -u
O=${O:-build}
SRC=${SRC:-src}
MAX=${MAX:-700}
fail=0

objs=$(ls "$O"/src/*.o 2>/dev/null)
if [ -z "$objs" ]; then
	echo "no objects in $O/src"
	exit 1
fi

# "def OBJ SYM" and "use OBJ SYM" lines, then the edges and the cycles.
for o in $objs; do
	n=$(basename "$o")
	nm -P --defined-only "$o" | awk -v o="$n" '$2 ~ /^[TDBRVW]$/ { print "def", o, $1 }'
	nm -P -u "$o" | awk -v o="$n" '{ print "use", o, $1 }'
done | awk '
	$1 == "def" { def[$3] = $2; objs[$2] = 1; next }
	$1 == "use" { use[++nu] = $2 " " $3; objs[$2] = 1 }
	END {
		for (i = 1; i <= nu; i++) {
			split(use[i], u, " ")
			d = def[u[2]]
			if (d == "" || d == u[1])
				continue
			if (!((u[1], d) in edge)) {
				edge[u[1], d] = u[2]
				reach[u[1], d] = 1
			} else if (index(" " edge[u[1], d] " ", " " u[2] " ") == 0) {
				edge[u[1], d] = edge[u[1], d] " " u[2]
			}
		}
		n = 0
		for (o in objs)
			name[++n] = o
		# sort names for a stable report
		for (i = 2; i <= n; i++)
			for (j = i; j > 1 && name[j - 1] > name[j]; j--) {
				t = name[j]; name[j] = name[j - 1]; name[j - 1] = t
			}
		for (i = 1; i <= n; i++) {
			line = ""
			for (j = 1; j <= n; j++)
				if ((name[i], name[j]) in edge)
					line = line " " name[j]
			printf "%-14s needs%s\n", name[i], line == "" ? " nothing" : line
		}
		# transitive closure (Warshall): a cycle is a pair that reach each other
		for (k = 1; k <= n; k++)
			for (i = 1; i <= n; i++)
				if ((name[i], name[k]) in reach)
					for (j = 1; j <= n; j++)
						if ((name[k], name[j]) in reach)
							reach[name[i], name[j]] = 1
		bad = 0
		for (i = 1; i <= n; i++)
			for (j = i + 1; j <= n; j++)
				if ((name[i], name[j]) in reach && (name[j], name[i]) in reach) {
					a = name[i]; b = name[j]
					printf "CYCLE: %s <-> %s", a, b
					if ((a, b) in edge && (b, a) in edge)
						printf " (%s needs %s; %s needs %s)", a, edge[a, b], b, edge[b, a]
					else
						printf " (through other objects)"
					printf "\n"
					bad = 1
				}
		exit bad
	}' || fail=1

for f in "$SRC"/*.c "$SRC"/*.h; do
	[ -e "$f" ] || continue
	n=$(wc -l < "$f")
	if [ "$n" -gt "$MAX" ]; then
		echo "TOO LONG: $f has $n lines (at most $MAX)"
		fail=1
	fi
done
[ "$fail" -eq 0 ] && echo "layers: no cycle among $(echo "$objs" | wc -w) objects; every file of $SRC has at most $MAX lines"
exit "$fail"
