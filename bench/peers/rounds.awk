# SPDX-License-Identifier: MIT
# rounds.awk - merges the CSV lines of several rounds of the same runs
# (run.sh, before-after.sh): lines whose fields before the last four
# (median,min,max,reps) are equal become one line with the median of the
# rounds' medians (the mean of the middle two for an even count), the
# smallest min, the largest max and the sum of reps.  Keys keep the order
# in which they first appear.
BEGIN { FS = OFS = "," }
{
	k = $1
	for (i = 2; i <= NF - 4; i++) k = k FS $i
	if (!(k in cnt)) { cnt[k] = 0; keys[++nk] = k; lo[k] = $(NF - 2); hi[k] = $(NF - 1) }
	med[k, ++cnt[k]] = $(NF - 3)
	if ($(NF - 2) + 0 < lo[k] + 0) lo[k] = $(NF - 2)
	if ($(NF - 1) + 0 > hi[k] + 0) hi[k] = $(NF - 1)
	reps[k] += $NF
}
END {
	for (j = 1; j <= nk; j++) {
		k = keys[j]
		c = cnt[k]
		for (a = 1; a <= c; a++) v[a] = med[k, a] + 0
		for (a = 2; a <= c; a++)        # insertion sort: a handful of rounds
			for (b = a; b > 1 && v[b - 1] > v[b]; b--) { t = v[b]; v[b] = v[b - 1]; v[b - 1] = t }
		m = c % 2 ? v[(c + 1) / 2] : (v[c / 2] + v[c / 2 + 1]) / 2
		printf "%s,%.2f,%s,%s,%d\n", k, m, lo[k], hi[k], reps[k]
	}
}
