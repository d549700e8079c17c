/* SPDX-License-Identifier: MIT */
/*
 * strtab.c - the string table (strtab.h), UTF-8 checked by text.h:
 * names are interned once, so a trace of millions of events holds one copy
 * of each function and task name, and every copy is valid UTF-8 for the
 * JSON, CSV and SVG writers.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strtab.h"
#include "../common/text.h"
#include "trace.h"

static uint64_t str_hash(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ULL;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
	return h;
}

/* A copy of s[0, n) with each byte that is not part of valid UTF-8
 * written as the four characters \xNN, so the result is valid UTF-8. */
static char *utf8_dup(const char *s, size_t n)
{
	char *d = malloc(n * 4 + 1), *p = d;

	if (!d)
		return NULL;
	for (size_t i = 0; i < n;) {
		size_t k = text_utf8_len(s + i, n - i);

		if (k) {
			memcpy(p, s + i, k);
			p += k;
			i += k;
		} else {
			p += sprintf(p, "\\x%02x", (unsigned char)s[i++]);
		}
	}
	*p = 0;
	return d;
}

/* Index of s[0, n) (made valid UTF-8 first), inserted if create;
 * UINT32_MAX if absent or out of memory. */
uint32_t strtab_intern(struct strtab *t, const char *raw, size_t rn, int create)
{
	char *s = utf8_dup(raw, rn);
	size_t n;
	uint64_t h;
	void **v;
	int fresh;

	if (!s) {
		t->oom = 1;
		return UINT32_MAX;
	}
	n = strlen(s);
	for (h = str_hash(s, n);; h++) {
		v = idmap_get(&t->map, h);
		if (!v)
			break;
		uint32_t i = (uint32_t)((uintptr_t)*v - 1);

		if (!strcmp(t->s[i], s)) {
			free(s);
			return i;
		}
	}
	if (!create || t->n == UINT32_MAX - 1)
		goto fail;
	if (t->n == t->cap) {
		uint32_t nc = t->cap ? t->cap * 2 : 64;
		char **ns = realloc(t->s, nc * sizeof(*ns));

		if (!ns)
			goto nomem;
		t->s = ns;
		t->cap = nc;
	}
	if (!(v = idmap_put(&t->map, h, &fresh)))
		goto nomem;
	t->s[t->n] = s;
	*v = (void *)(uintptr_t)(t->n + 1);
	return t->n++;
nomem:
	t->oom = 1;
fail:
	free(s);
	return UINT32_MAX;
}

void strtab_free(struct strtab *t)
{
	idmap_free(&t->map);
	for (uint32_t i = 0; i < t->n; i++)
		free(t->s[i]);
	free(t->s);
}
