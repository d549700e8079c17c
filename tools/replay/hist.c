/* SPDX-License-Identifier: MIT */
/*
 * hist.c - histograms of signed nanoseconds with percentiles (hist.h): the
 * replay's lateness and earliness columns.
 */
#include <errno.h>
#include <stdlib.h>

#include "hist.h"

#define HB HIST_BUCKETS

static int hidx(uint64_t v)
{
	int e;

	if (v < 512)
		return (int)v;
	e = 63 - __builtin_clzll(v);
	return 512 + (e - 9) * 256 + (int)((v >> (e - 8)) & 255);
}

static uint64_t hval(int i)
{
	if (i < 512)
		return (uint64_t)i;
	return (uint64_t)(256 + (i - 512) % 256) << ((i - 512) / 256 + 1);
}

int hist_init(struct hist *h)
{
	h->pos = calloc(HB, sizeof(*h->pos));
	h->neg = calloc(HB, sizeof(*h->neg));
	h->n = 0;
	h->max = INT64_MIN;
	return h->pos && h->neg ? 0 : -ENOMEM;
}

void hist_free(struct hist *h)
{
	free(h->pos);
	free(h->neg);
}

void hist_add(struct hist *h, int64_t v)
{
	if (v >= 0)
		h->pos[hidx((uint64_t)v)]++;
	else
		h->neg[hidx(v == INT64_MIN ? (uint64_t)INT64_MAX : (uint64_t)-v)]++;
	h->n++;
	if (v > h->max)
		h->max = v;
}

int64_t hist_pct(const struct hist *h, unsigned q)
{
	uint64_t rank = (h->n * q + 99) / 100, seen = 0;

	if (!h->n)
		return 0;
	if (!rank)
		rank = 1;
	for (int i = HB - 1; i >= 0; i--)
		if ((seen += h->neg[i]) >= rank)
			return -(int64_t)hval(i);
	for (int i = 0; i < HB; i++)
		if ((seen += h->pos[i]) >= rank) {
			int64_t v = (int64_t)hval(i);

			return v > h->max ? h->max : v;
		}
	return h->max;
}
