/* SPDX-License-Identifier: MIT */
/*
 * strtab.c - the string table (strtab.h) and the UTF-8 helpers it needs:
 * names are interned once, so a trace of millions of events holds one copy
 * of each function and task name, and every copy is valid UTF-8 for the
 * JSON, CSV and SVG writers.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strtab.h"
#include "trace.h"

static uint64_t str_hash(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ULL;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
	return h;
}

/* Length of the valid UTF-8 sequence at s (of n bytes), 0 if invalid. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	size_t k;
	uint32_t c;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		k = 2, c = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		k = 3, c = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		k = 4, c = s[0] & 0x07;
	else
		return 0;
	if (n < k)
		return 0;
	for (size_t i = 1; i < k; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	/* overlong forms, surrogates, beyond U+10FFFF */
	if ((k == 3 && c < 0x800) || (k == 4 && (c < 0x10000 || c > 0x10ffff)) ||
	    (c >= 0xd800 && c <= 0xdfff))
		return 0;
	return k;
}

size_t trace_utf8_prefix(const char *s, size_t max)
{
	size_t n = strlen(s), i = 0;

	while (i < n) {
		size_t k = utf8_len((const unsigned char *)s + i, n - i);

		if (!k)
			k = 1;          /* not UTF-8: a byte at a time */
		if (i + k > max)
			break;
		i += k;
	}
	return i;
}

/* A copy of s[0, n) with each byte that is not part of valid UTF-8
 * written as the four characters \xNN, so the result is valid UTF-8. */
static char *utf8_dup(const char *s, size_t n)
{
	char *d = malloc(n * 4 + 1), *p = d;

	if (!d)
		return NULL;
	for (size_t i = 0; i < n;) {
		size_t k = utf8_len((const unsigned char *)s + i, n - i);

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
