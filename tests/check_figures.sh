#!/bin/sh
# SPDX-License-Identifier: MIT
# check_figures.sh - every figure a document quotes equals its source.  A
# figure is a Markdown link with a title, its text a number, its target the
# file a make target wrote, its title where in that file:
#   [6.9](docs/perf/peers.csv "hrt,start_cancel,1000000,ns_per_op") ns
#       a .csv: the row whose first fields are the title; the figure is the
#       next field rounded to the figure's decimals (6.89 -> 6.9; 2,065 ->
#       2064.92 rounded to units)
#   [1665](docs/REPLAY.md "the optimum drops from")
#       any other file: a line containing the title (spaces squeezed) holds
#       the figure as written, as a number of its own
# Prints each mismatch as FILE:LINE and exits 1; code blocks are skipped.
#   sh tests/check_figures.sh [DOC...]          (default README.md)
set -u
[ $# -gt 0 ] || set -- README.md
tab=$(printf '\t')
bad=0
count=0
links=$(mktemp)
trap 'rm -f "$links"' EXIT
for doc in "$@"; do
	[ -f "$doc" ] || { echo "check_figures: $doc: no such file"; exit 2; }
	dir=$(dirname "$doc")
	# LINE<tab>TEXT<tab>PATH<tab>TITLE for each link with a title
	awk -v OFS="$tab" '
	/^```/ { code = !code; next }
	code { next }
	{
		rest = $0
		while (match(rest, /\[[^]]*\]\([^ )]+ "[^"]*"\)/)) {
			l = substr(rest, RSTART, RLENGTH); rest = substr(rest, RSTART + RLENGTH)
			i = index(l, "](")
			text = substr(l, 2, i - 2)
			tgt = substr(l, i + 2); sub(/\)$/, "", tgt)
			j = index(tgt, " \"")
			print NR, text, substr(tgt, 1, j - 1), substr(tgt, j + 2, length(tgt) - j - 2)
		}
	}' "$doc" > "$links"
	while IFS="$tab" read -r line text path title; do
		count=$((count + 1))
		where="$doc:$line: [$text]($path \"$title\")"
		fig=$(printf '%s\n' "$text" | sed -n 's/^\(-\{0,1\}[0-9][0-9,]*\(\.[0-9][0-9]*\)\{0,1\}\).*/\1/p')
		src=$dir/$path
		if [ -z "$fig" ]; then
			echo "$where: the link text is not a figure"; bad=1; continue
		fi
		if [ ! -f "$src" ]; then
			echo "$where: $src: no such file"; bad=1; continue
		fi
		case $path in
		*.csv)
			val=$(awk -F, -v key="$title" '
				BEGIN { nk = split(key, k, ",") }
				{ for (i = 1; i <= nk; i++) if ($i != k[i]) next; print $(nk + 1); exit }' "$src")
			if [ -z "$val" ]; then
				echo "$where: no row $title in $src"; bad=1; continue
			fi
			plain=$(printf '%s' "$fig" | tr -d ,)
			dec=$(printf '%s' "$plain" | sed -n 's/.*\.\([0-9]*\)$/\1/p')
			want=$(awk -v v="$val" -v d="${#dec}" 'BEGIN { printf "%.*f", d, v }')
			[ "$want" = "$plain" ] || { echo "$where: $src says $val ($want)"; bad=1; }
			;;
		*)
			awk -v title="$title" -v fig="$fig" '
				function squeeze(s) { gsub(/[ \t]+/, " ", s); return s }
				BEGIN { title = squeeze(title) }
				index(squeeze($0), title) {
					s = $0
					while ((i = index(s, fig)) > 0) {
						b = i > 1 ? substr(s, i - 1, 1) : ""
						a = substr(s, i + length(fig), 2)
						if (b !~ /[0-9.,]/ && a !~ /^[0-9]/ && a !~ /^[.,][0-9]/) { found = 1; exit }
						s = substr(s, i + 1)
					}
				}
				END { exit !found }' "$src" ||
				{ echo "$where: no line of $src with \"$title\" holds $fig"; bad=1; }
			;;
		esac
	done < "$links"
done
[ "$bad" -eq 0 ] || exit 1
echo "check_figures: $count figures of $* equal their sources"
