/* SPDX-License-Identifier: MIT */
/*
 * hist.h - histograms of signed nanoseconds (internal to the hrt tool):
 * exact below 512, then 8 bits below the leading one (relative error
 * < 1/256); a reported percentile is its bucket's value nearest zero, the
 * max is exact.  The replay's late_* and early_p50 columns (hist.c).
 */
#ifndef HRT_TOOLS_HIST_H
#define HRT_TOOLS_HIST_H

#include <stdint.h>

#define HIST_BUCKETS 14592

struct hist {
	uint64_t *pos, *neg;    /* HIST_BUCKETS each: values >= 0, values < 0 */
	uint64_t n;
	int64_t max;
};

/* 0 or -ENOMEM. */
int hist_init(struct hist *h);
void hist_free(struct hist *h);
void hist_add(struct hist *h, int64_t v);
/* The value at rank ceil(q * n / 100), 1-based (0 when empty). */
int64_t hist_pct(const struct hist *h, unsigned q);

#endif
