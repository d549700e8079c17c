/* SPDX-License-Identifier: MIT */
/*
 * strtab.h - the string table: function and task names (and v1 id
 * tokens) interned to dense indices, stored as valid UTF-8 (internal to
 * the hrt tool's trace reader).
 */
#ifndef HRT_TOOLS_STRTAB_H
#define HRT_TOOLS_STRTAB_H

#include <stddef.h>
#include <stdint.h>

#include "idmap.h"

/* Strings to dense indices: name hash (+ probe) -> index + 1 in an idmap. */
struct strtab {
	struct idmap map;
	char **s;
	uint32_t n, cap;
	int oom;                /* an insertion failed for lack of memory */
};

/* The index of raw[0..rn) (stored with bytes that are not UTF-8 written
 * as \xNN); with create, a new string is added.  UINT32_MAX: not found,
 * or out of memory (then t->oom is set). */
uint32_t strtab_intern(struct strtab *t, const char *raw, size_t rn, int create);
void strtab_free(struct strtab *t);

#endif
