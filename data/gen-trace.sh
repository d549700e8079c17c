#!/bin/sh
# gen-trace.sh N - writes a synthetic hrt-trace v1 trace of about N events
# to stdout (deterministic): 4 CPUs, 256 timer ids, starts with 0-1 ms slack,
# some cancels, idle/busy switches.  For `hrt replay` throughput tests.
awk -v n="${1:-1000000}" 'BEGIN {
	print "# hrt-trace v1"; s = 12345; t = 0
	for (i = 0; i < n; i++) {
		s = (s * 1103515245 + 12345) % 2147483648; r = s % 100
		t += 1 + s % 2000; cpu = s % 4; id = (s / 7) % 256
		if (r < 60) { soft = t + 1000 + (s % 100000); printf "%d %d start %d %d %d\n", t, cpu, id, soft, soft + (s % 1000000); st[id] = 1 }
		else if (r < 70 && (id in st)) printf "%d %d cancel %d\n", t, cpu, id
		else if (r < 85) printf "%d %d idle\n", t, cpu
		else printf "%d %d busy\n", t, cpu
	}
}'
