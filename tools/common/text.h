/* SPDX-License-Identifier: MIT */
/*
 * text.h - how the hrt tool writes a name into text (internal to the
 * tool): as a JSON string, as a CSV field, and as a cell of a table a
 * terminal shows (one column per character, whatever its UTF-8 length).
 * Every writer of names goes through these; names from traces are valid
 * UTF-8 once interned (strtab.c), but the writers do not rely on it.
 */
#ifndef HRT_TOOLS_TEXT_H
#define HRT_TOOLS_TEXT_H

#include <stddef.h>
#include <stdio.h>

/* Length of the well-formed UTF-8 sequence at s, of at most n bytes
 * (1-4), 0 if it is not one (overlong forms, surrogates and code points
 * past U+10FFFF included). */
size_t text_utf8_len(const char *s, size_t n);
/* The longest prefix of s of at most max bytes that does not cut a UTF-8
 * character (a byte that is not UTF-8 counts as one). */
size_t text_utf8_prefix(const char *s, size_t max);
/* Characters of s: the columns it takes on a terminal (a byte that is not
 * UTF-8 counts as one; wide characters are not told apart). */
size_t text_cols(const char *s);
/* s in `width` columns: cut after whole characters, padded with spaces. */
void text_cell(FILE *f, const char *s, int width);
/* A JSON string: quotes, backslash and control characters escaped, bytes
 * that are not UTF-8 written as U+FFFD, so the output is always JSON. */
void text_json_str(FILE *f, const char *s);
/* A CSV field (RFC 4180): quoted when it holds a comma, a quote or a line
 * break, its quotes doubled. */
void text_csv_field(FILE *f, const char *s);

#endif
