# SPDX-License-Identifier: MIT
# paired.awk - one function for the scripts that run programs in rounds
# (run.sh, before-after.sh, floor.sh), prepended to their awk programs:
# paired(a, b) is the median over rounds i of rv[a, i] / rv[b, i], where
# cnt[k] counts the rounds of key k (0 if none).  Two programs of one round
# ran seconds apart, so a slow phase of the machine moves this ratio much
# less than the ratio of the two medians.
function paired(a, b,   c, i, j, t, v) {
	c = cnt[a] < cnt[b] ? cnt[a] : cnt[b]
	for (i = 1; i <= c; i++) {
		v[i] = rv[b, i] > 0 ? rv[a, i] / rv[b, i] : 0
		for (j = i; j > 1 && v[j - 1] > v[j]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
	}
	return c == 0 ? 0 : c % 2 ? v[(c + 1) / 2] : (v[c / 2] + v[c / 2 + 1]) / 2
}
