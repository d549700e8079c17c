/* SPDX-License-Identifier: MIT */
/*
 * idmap.c - the timer-ID map: uint64 keys to pointers, open addressing
 * with linear probing and backward-shift deletion (no tombstones, so a
 * long trace of armings and cancels never degrades it).  Declared in
 * idmap.h; the reader, the string table and the replay all use it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "idmap.h"

static size_t slot_of(uint64_t key, size_t cap)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdULL;
	key ^= key >> 33;
	return (size_t)key & (cap - 1);
}

void **idmap_get(const struct idmap *m, uint64_t key)
{
	size_t i;

	if (!m->cap)
		return NULL;
	for (i = slot_of(key, m->cap); m->vals[i]; i = (i + 1) & (m->cap - 1))
		if (m->keys[i] == key)
			return &m->vals[i];
	return NULL;
}

static int idmap_grow(struct idmap *m)
{
	size_t ncap = m->cap ? m->cap * 2 : 1024, i;
	uint64_t *nk = calloc(ncap, sizeof(*nk));
	void **nv = calloc(ncap, sizeof(*nv));

	if (!nk || !nv) {
		free(nk);
		free(nv);
		return -ENOMEM;
	}
	for (i = 0; i < m->cap; i++) {
		size_t j;

		if (!m->vals[i])
			continue;
		for (j = slot_of(m->keys[i], ncap); nv[j]; j = (j + 1) & (ncap - 1))
			;
		nk[j] = m->keys[i];
		nv[j] = m->vals[i];
	}
	free(m->keys);
	free(m->vals);
	m->keys = nk;
	m->vals = nv;
	m->cap = ncap;
	return 0;
}

/* A fresh slot holds a placeholder until the caller stores its value. */
static char idmap_placeholder;

void **idmap_put(struct idmap *m, uint64_t key, int *fresh)
{
	void **v = idmap_get(m, key);
	size_t i;

	*fresh = 0;
	if (v)
		return v;
	if ((m->n + 1) * 4 > m->cap * 3 && idmap_grow(m))
		return NULL;
	for (i = slot_of(key, m->cap); m->vals[i]; i = (i + 1) & (m->cap - 1))
		;
	m->keys[i] = key;
	m->vals[i] = &idmap_placeholder;
	m->n++;
	*fresh = 1;
	return &m->vals[i];
}

void idmap_del(struct idmap *m, uint64_t key)
{
	void **v = idmap_get(m, key);
	size_t i, j, mask = m->cap - 1;

	if (!v)
		return;
	i = (size_t)(v - m->vals);
	m->vals[i] = NULL;
	m->n--;
	/* Backward shift: move later members of the probe run into the hole
	 * when their home slot does not lie strictly between hole and them. */
	for (j = (i + 1) & mask; m->vals[j]; j = (j + 1) & mask) {
		size_t h = slot_of(m->keys[j], m->cap);

		if ((j > i && (h <= i || h > j)) || (j < i && h <= i && h > j)) {
			m->keys[i] = m->keys[j];
			m->vals[i] = m->vals[j];
			m->vals[j] = NULL;
			i = j;
		}
	}
}

void idmap_free(struct idmap *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}
