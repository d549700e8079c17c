#!/bin/sh
# SPDX-License-Identifier: MIT
# docs.sh - puts a bench-server run into the documents (make
# bench-server-docs runs it after the run):
#   - docs/PERFORMANCE.md: what lies between the markers
#       <!-- bench-server-docs: begin -->  and  <!-- bench-server-docs: end -->
#     is written again from the run: its conditions, one row per version
#     (wake-ups, CPU, iterations, loop calls per iteration, latency pooled
#     and the rounds' spread), the system calls by name, every ratio with
#     its target and verdict; each figure a link into server.csv, which
#     tests/check_figures.sh checks;
#   - every other link to perf/server.csv in the documents (README.md's
#     rows, PERFORMANCE.md's prose) gets the run's value, rounded to the
#     decimals it had.  A link whose row the run does not have is left as
#     it was and named (check_figures then fails on it): the words around
#     the figures are the writer's, to read again after a run.
#
#   sh bench/server/docs.sh docs/perf/server README.md docs/PERFORMANCE.md
# (the first argument: the run's output, without .csv/.txt).  Exit 0, 1 if
# a link was left as it was, 2 on bad arguments.
set -u
[ $# -ge 2 ] || { echo "usage: docs.sh RUN DOC..." >&2; exit 2; }
run=$1
shift
csv=$run.csv txt=$run.txt
for f in "$csv" "$txt" "$@"; do
	[ -f "$f" ] || { echo "docs.sh: $f: no such file" >&2; exit 2; }
done
tmp=$(mktemp -d /tmp/hrt-server-docs-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
stale=0

# The block, with links relative to docs/ (PERFORMANCE.md's directory).
block() {	# link path of server.csv
	head=$(sed -n 's/^== bench-server: //p' "$txt")
	loads=$(sed -n 's/^kernel: [^;]*; //p' "$txt")
	during=$(sed -n 's/^load average (1 min) at the runs starts: //p' "$txt")
	per=$(sed -n 's/^per run: //p' "$txt")
	calls=$(sed -n 's/^system calls: //p' "$txt")
	echo "<!-- bench-server-docs: begin (bench/server/docs.sh writes this part from $csv) -->"
	echo "The run: $head; $loads${during:+ (1-minute load at the runs' starts $during)}; per run: $per."
	echo "System calls: $calls."
	echo
	awk -F, -v p="$1" '
	function L(key, d,    v) { v = val[key]; if (v == "" || v == "n/a") return "-"
		return sprintf("[%." d "f](%s \"%s\")", v, p, key) }
	NR > 1 && NF == 5 { val[$1 "," $2 "," $3 "," $4] = $5; if ($3 !~ /\// && !(($1, $2, $3) in seen)) { seen[$1, $2, $3] = 1; G[++ng] = $1 "," $2 "," $3 } }
	NR > 1 && NF == 7 { val[$1 "," $2 "," $3 "," $4] = $5; tgt[$1 "," $2 "," $3 "," $4] = $6; ver[$1 "," $2 "," $3 "," $4] = $7
		if (!(($1, $2, $3) in pseen)) { pseen[$1, $2, $3] = 1; PG[++np] = $1 "," $2 "," $3 } }
	NR > 1 && NF == 5 && $4 ~ /^sys_.*_per_iter$/ && $4 != "sys_per_iter" && $5 >= 0.005 {
		c = $4; sub(/^sys_/, "", c); sub(/_per_iter$/, "", c)
		bycall[$1 "," $2 "," $3] = bycall[$1 "," $2 "," $3] (bycall[$1 "," $2 "," $3] == "" ? "" : ", ") c " " sprintf("%.2f", $5) }
	END {
		print "| connections | traffic | version | wake-ups/s | CPU % | iterations/s | loop calls/iteration | latency p50, us | p99, us | p99.9, us | p99 of the rounds, us | samples |"
		print "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
		for (i = 1; i <= ng; i++) {
			g = G[i]; split(g, a, ",")
			lat = val[g ",lat_n"] + 0 > 0
			printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", a[1], a[2], a[3],
				L(g ",srv_wakeups_per_s", 1), L(g ",cpu_pct", 1), L(g ",srv_iters_per_s", 1),
				L(g ",loop_sys_per_iter", 2), lat ? L(g ",lat_p50_us", 1) : "-",
				lat ? L(g ",lat_p99_us", 1) : "-", lat ? L(g ",lat_p999_us", 1) : "-",
				lat ? L(g ",lat_p99_round_min_us", 1) "-" L(g ",lat_p99_round_max_us", 1) : "-",
				lat ? L(g ",lat_n", 0) : "-"
		}
		print ""
		print "System calls per loop iteration, by call (the counting round; loop calls leave out the"
		print "sockets'"'"' own I/O; read_8b_or_fail: the reads of 8 bytes or that failed, part of read):"
		print ""
		print "| connections | traffic | version | calls/iteration | by call, per iteration |"
		print "| --- | --- | --- | --- | --- |"
		for (i = 1; i <= ng; i++) {
			g = G[i]; split(g, a, ",")
			if (!((g ",sys_per_iter") in val)) continue
			printf "| %s | %s | %s | %s | %s |\n", a[1], a[2], a[3], L(g ",sys_per_iter", 2), bycall[g]
		}
		print ""
		print "| pair | connections | traffic | what | ratio | lowest-highest of the rounds | target | verdict |"
		print "| --- | --- | --- | --- | --- | --- | --- | --- |"
		for (i = 1; i <= np; i++) {
			g = PG[i]; split(g, a, ",")
			for (k = 1; k <= 6; k++) {
				m = k == 1 ? "wakeups_ratio" : k == 2 ? "cpu_ratio" : k == 3 ? "run_ratio" : k == 4 ? "lat_p99_ratio" : k == 5 ? "lat_p999_ratio" : "loop_sys_per_iter_diff"
				w = k == 1 ? "wake-ups" : k == 2 ? "CPU" : k == 3 ? "CPU (schedstat run time)" : k == 4 ? "p99 latency" : k == 5 ? "p99.9 latency" : "loop calls/iteration, more than libuv"
				key = g "," m
				if (!(key in ver)) continue
				sp = ((key "_round_min") in val) ? L(key "_round_min", 2) "-" L(key "_round_max", 2) : "-"
				printf "| %s | %s | %s | %s | %s | %s | <= %s | %s |\n", a[3], a[1], a[2], w, L(key, k == 6 ? 2 : 3), sp, tgt[key], ver[key]
				if (ver[key] != "met")
					miss[++nm] = a[3] " at " a[1] " connections, " a[2] ": " w " " L(key, k == 6 ? 2 : 3) \
						(k == 6 ? "" : "x") ", target <= " tgt[key] (ver[key] == "not met" ? "" : " (" ver[key] ")")
			}
		}
		print ""
		if (nm == 0) print "Every target above is met in this run."
		else {
			print "What this run misses (" nm " of the targets above):"
			print ""
			for (i = 1; i <= nm; i++) print "- " miss[i]
		}
	}' "$csv"
	echo "<!-- bench-server-docs: end -->"
}

for doc in "$@"; do
	dir=$(dirname "$doc")
	case $dir in
	docs) rel=perf/server.csv ;;
	.) rel=docs/perf/server.csv ;;
	*) rel=$(realpath --relative-to="$dir" "$csv") ;;
	esac
	block "$rel" > "$tmp/block"
	# The block between its markers (if the document has them), then each
	# link to server.csv refreshed.
	awk -v blk="$tmp/block" '
	/^<!-- bench-server-docs: begin/ { while ((getline l < blk) > 0) print l; skip = 1; next }
	/^<!-- bench-server-docs: end -->/ { skip = 0; next }
	!skip' "$doc" > "$tmp/doc"
	awk -v csvf="$csv" -v rel="$rel" -v doc="$doc" '
	BEGIN { FS = ","; while ((getline l < csvf) > 0) { n = split(l, f, ","); if (n >= 5) val[f[1] "," f[2] "," f[3] "," f[4]] = f[5] }; FS = " " }
	/^```/ { code = !code }
	code { print; next }
	{
		out = ""; rest = $0
		while (match(rest, /\[[^]]*\]\([^ )]+ "[^"]*"\)/)) {
			l = substr(rest, RSTART, RLENGTH)
			out = out substr(rest, 1, RSTART - 1); rest = substr(rest, RSTART + RLENGTH)
			i = index(l, "](")
			text = substr(l, 2, i - 2); tgt = substr(l, i + 2); sub(/\)$/, "", tgt)
			j = index(tgt, " \""); path = substr(tgt, 1, j - 1); title = substr(tgt, j + 2, length(tgt) - j - 2)
			if (path != rel) { out = out l; continue }
			if (!(title in val) || val[title] == "n/a" || val[title] == "") {
				print doc ":" NR ": no figure " title " in the run: left as " text > "/dev/stderr"
				stale = 1; out = out l; continue
			}
			d = text ~ /\./ ? length(text) - index(text, ".") : 0
			out = out "[" sprintf("%." d "f", val[title]) "](" tgt ")"
		}
		print out rest
	}
	END { exit stale }' "$tmp/doc" > "$tmp/new" || stale=1
	cmp -s "$tmp/new" "$doc" || cat "$tmp/new" > "$doc"
done
exit "$stale"
