/* SPDX-License-Identifier: MIT */
/*
 * grow.h - room for one more element in a growing array (the tools' event
 * buffers, thread lists, wake-up lists): the array doubles when full.
 */
#ifndef HRT_TOOLS_GROW_H
#define HRT_TOOLS_GROW_H

#include <stdint.h>
#include <stdlib.h>

/*
 * p holds *cap elements of `size` bytes, n of them used.  Returns p when
 * there is room for one more, else the array reallocated to twice *cap
 * (`first` elements the first time) with *cap updated, or NULL - p and
 * *cap as they were - when that fails or the size would overflow.
 */
static inline void *grow_one(void *p, size_t n, size_t *cap, size_t size, size_t first)
{
	size_t nc = *cap ? *cap * 2 : first;
	void *q;

	if (n < *cap)
		return p;
	if (nc < *cap || nc > SIZE_MAX / size)
		return NULL;
	q = realloc(p, nc * size);
	if (q)
		*cap = nc;
	return q;
}

#endif /* HRT_TOOLS_GROW_H */
