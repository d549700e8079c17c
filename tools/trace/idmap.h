/* SPDX-License-Identifier: MIT */
/*
 * idmap.h - a uint64 -> pointer hash map (internal to the hrt tool): timer
 * ids to their records, strings' hashes to their index.
 */
#ifndef HRT_TOOLS_IDMAP_H
#define HRT_TOOLS_IDMAP_H

#include <stddef.h>
#include <stdint.h>

/* A uint64 -> pointer hash map (linear probing, backward-shift delete). */
struct idmap {
	uint64_t *keys;
	void **vals;            /* NULL: empty slot */
	size_t cap, n;
};
void **idmap_get(const struct idmap *m, uint64_t key);
/* Inserts key (value NULL until the caller sets it); returns its slot, or
 * NULL on ENOMEM.  *fresh says whether it was new. */
void **idmap_put(struct idmap *m, uint64_t key, int *fresh);
void idmap_del(struct idmap *m, uint64_t key);
void idmap_free(struct idmap *m);

#endif
