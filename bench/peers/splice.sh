#!/bin/sh
# SPDX-License-Identifier: MIT
# splice.sh DOC FILE NAME - put FILE's text into DOC where DOC quotes it:
# the lines between "<!-- begin NAME -->" and "<!-- end NAME -->" (NAME as
# the document names the file, e.g. perf/peers.txt) are replaced, so the
# document always quotes what the last run wrote.  FILE goes in a ```
# block unless its name ends in .md.  A DOC without the markers is left
# alone.
set -eu
doc=$1
file=$2
name=$3
[ -f "$doc" ] && grep -q "^<!-- begin $name -->\$" "$doc" || exit 0
tmp=$doc.splice.$$
awk -v name="$name" -v file="$file" '
$0 == "<!-- begin " name " -->" {
	print
	fence = file !~ /\.md$/
	if (fence) print "```"
	while ((getline l < file) > 0) print l
	if (fence) print "```"
	skip = 1
	next
}
$0 == "<!-- end " name " -->" { skip = 0 }
!skip' "$doc" > "$tmp"
mv "$tmp" "$doc"
