/* SPDX-License-Identifier: MIT */
/*
 * text.c - names into text: UTF-8 lengths, table cells, JSON strings and
 * CSV fields (text.h).
 */
#include <stdint.h>
#include <string.h>

#include "text.h"

size_t text_utf8_len(const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t k;
	uint32_t c;

	if (!n)
		return 0;
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

size_t text_utf8_prefix(const char *s, size_t max)
{
	size_t n = strlen(s), i = 0;

	while (i < n) {
		size_t k = text_utf8_len(s + i, n - i);

		if (!k)
			k = 1;          /* not UTF-8: a byte at a time */
		if (i + k > max)
			break;
		i += k;
	}
	return i;
}

size_t text_cols(const char *s)
{
	size_t n = strlen(s), i = 0, cols = 0;

	while (i < n) {
		size_t k = text_utf8_len(s + i, n - i);

		i += k ? k : 1;
		cols++;
	}
	return cols;
}

void text_cell(FILE *f, const char *s, int width)
{
	size_t n = strlen(s), i = 0;
	int cols = 0;

	while (i < n && cols < width) {
		size_t k = text_utf8_len(s + i, n - i);

		k = k ? k : 1;
		fwrite(s + i, 1, k, f);
		i += k;
		cols++;
	}
	for (; cols < width; cols++)
		fputc(' ', f);
}

void text_json_str(FILE *f, const char *str)
{
	size_t n = strlen(str), i = 0;

	fputc('"', f);
	while (i < n) {
		unsigned char c = (unsigned char)str[i];
		size_t k = text_utf8_len(str + i, n - i);

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			fprintf(f, "\\u%04x", c);
		else if (!k)
			fputs("\\ufffd", f);    /* not UTF-8: the replacement character */
		else
			fwrite(str + i, 1, k, f);
		i += k ? k : 1;
	}
	fputc('"', f);
}

void text_csv_field(FILE *f, const char *s)
{
	if (!strpbrk(s, ",\"\r\n")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}
