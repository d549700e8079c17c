/* SPDX-License-Identifier: MIT */
/*
 * svg.c - minimal SVG output helpers for the hrt tool (see svg.h).
 * Everything is written with fprintf; no DOM, no allocation.  Files are
 * opened by the caller through outfile.h.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "svg.h"

void svg_escape(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(*s, f);
		}
	}
}

void svg_begin(FILE *f, double w, double h, const char *title)
{
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		   "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
		   "viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\">\n<title>",
		w, h, w, h);
	svg_escape(f, title);
	fprintf(f, "</title>\n<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"white\"/>\n",
		w, h);
}

void svg_end(FILE *f)
{
	fputs("</svg>\n", f);
}

void svg_text(FILE *f, double x, double y, double size, const char *anchor,
	      const char *fill, const char *text)
{
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"%.1f\" text-anchor=\"%s\" fill=\"%s\">",
		x, y, size, anchor, fill);
	svg_escape(f, text);
	fputs("</text>\n", f);
}

void svg_line(FILE *f, double x1, double y1, double x2, double y2,
	      const char *stroke, double width, const char *dash)
{
	fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
		   "stroke-width=\"%.1f\"", x1, y1, x2, y2, stroke, width);
	if (dash)
		fprintf(f, " stroke-dasharray=\"%s\"", dash);
	fputs("/>\n", f);
}

void svg_rect(FILE *f, double x, double y, double w, double h,
	      const char *fill, const char *stroke)
{
	fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"",
		x, y, w, h, fill);
	if (stroke)
		fprintf(f, " stroke=\"%s\"", stroke);
	fputs("/>\n", f);
}

void svg_circle(FILE *f, double x, double y, double r, const char *fill)
{
	fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\" fill=\"%s\"/>\n", x, y, r, fill);
}

void svg_group_begin(FILE *f, const char *cls)
{
	fputs("<g class=\"", f);
	svg_escape(f, cls);
	fputs("\">\n", f);
}

void svg_group_end(FILE *f)
{
	fputs("</g>\n", f);
}

double svg_nice_axis(double max, int maxticks, double *top, int *decimals)
{
	static const double mult[3] = { 1, 2, 5 };
	double mag, step = 1, n = 1;

	if (!(max > 0) || !isfinite(max))
		max = 1;
	if (maxticks < 1)
		maxticks = 1;
	mag = pow(10, floor(log10(max / maxticks)));
	/* The tolerance keeps 1.0000001 from needing one more interval. */
	for (int k = 0;; k = (k + 1) % 3) {
		step = mag * mult[k];
		n = ceil(max / step - 1e-9);
		if (n <= maxticks)
			break;
		if (k == 2)
			mag *= 10;
	}
	*top = n * step;
	*decimals = step >= 1 ? 0 : (int)ceil(-log10(step) - 1e-9);
	return step;
}

void svg_polyline(FILE *f, const double *xs, const double *ys, int n,
		  const char *stroke, double width, const char *dash)
{
	fputs("<polyline fill=\"none\" points=\"", f);
	for (int i = 0; i < n; i++)
		fprintf(f, "%s%.1f,%.1f", i ? " " : "", xs[i], ys[i]);
	fprintf(f, "\" stroke=\"%s\" stroke-width=\"%.1f\"", stroke, width);
	if (dash)
		fprintf(f, " stroke-dasharray=\"%s\"", dash);
	fputs("/>\n", f);
}

/* Well-formedness check ----------------------------------------------------- */

#define XML_DEPTH 64

struct xml_in {
	const char *p, *end;
	int line;
	char *why;
	size_t len;
};

static int xml_fail(struct xml_in *x, const char *what)
{
	snprintf(x->why, x->len, "line %d: %s", x->line, what);
	return -1;
}

static int is_name(char c, int first)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
	       (unsigned char)c >= 0x80 ||
	       (!first && ((c >= '0' && c <= '9') || c == '-' || c == '.'));
}

static void xml_adv(struct xml_in *x, size_t n)
{
	for (; n && x->p < x->end; n--, x->p++)
		x->line += *x->p == '\n';
}

static int xml_skip_to(struct xml_in *x, const char *s)
{
	size_t n = strlen(s);

	while (x->p + n <= x->end && memcmp(x->p, s, n))
		xml_adv(x, 1);
	if (x->p + n > x->end)
		return -1;
	xml_adv(x, n);
	return 0;
}

static void xml_space(struct xml_in *x)
{
	while (x->p < x->end && strchr(" \t\r\n", *x->p))
		xml_adv(x, 1);
}

/* Text or an attribute value up to `stop`: '<' is illegal, '&' must start
 * a known or numeric entity. */
static int xml_chars(struct xml_in *x, char stop)
{
	while (x->p < x->end && *x->p != stop) {
		if (*x->p == '<')
			return xml_fail(x, "'<' in an attribute value");
		if (*x->p == '&') {
			static const char *const ent[] = { "&amp;", "&lt;", "&gt;", "&quot;", "&apos;" };
			size_t i, k = sizeof(ent) / sizeof(ent[0]);

			for (i = 0; i < k; i++)
				if ((size_t)(x->end - x->p) >= strlen(ent[i]) &&
				    !memcmp(x->p, ent[i], strlen(ent[i])))
					break;
			if (i == k && !(x->p + 1 < x->end && x->p[1] == '#'))
				return xml_fail(x, "unknown entity");
		}
		xml_adv(x, 1);
	}
	return 0;
}

static int xml_name(struct xml_in *x, const char **s, size_t *n)
{
	*s = x->p;
	if (x->p >= x->end || !is_name(*x->p, 1))
		return xml_fail(x, "name expected");
	while (x->p < x->end && is_name(*x->p, 0))
		xml_adv(x, 1);
	*n = (size_t)(x->p - *s);
	return 0;
}

/* After '<': a start tag with attributes; *empty for "/>". */
static int xml_start_tag(struct xml_in *x, const char **nm, size_t *nl, int *empty)
{
	if (xml_name(x, nm, nl))
		return -1;
	for (;;) {
		const char *an;
		size_t al;
		char q;

		xml_space(x);
		if (x->p >= x->end)
			return xml_fail(x, "unterminated tag");
		if (*x->p == '>' || (*x->p == '/' && x->p + 1 < x->end && x->p[1] == '>')) {
			*empty = *x->p == '/';
			xml_adv(x, *empty ? 2 : 1);
			return 0;
		}
		if (xml_name(x, &an, &al))
			return -1;
		xml_space(x);
		if (x->p >= x->end || *x->p != '=')
			return xml_fail(x, "'=' expected after an attribute name");
		xml_adv(x, 1);
		xml_space(x);
		if (x->p >= x->end || (*x->p != '"' && *x->p != '\''))
			return xml_fail(x, "quoted attribute value expected");
		q = *x->p;
		xml_adv(x, 1);
		if (xml_chars(x, q))
			return -1;
		if (x->p >= x->end)
			return xml_fail(x, "unterminated attribute value");
		xml_adv(x, 1);
	}
}

static int xml_check(struct xml_in *x)
{
	const char *stack[XML_DEPTH];
	size_t slen[XML_DEPTH];
	int depth = 0, roots = 0;

	while (x->p < x->end) {
		if (*x->p != '<') {
			if (!depth && !strchr(" \t\r\n", *x->p))
				return xml_fail(x, "text outside the root element");
			if (xml_chars(x, '<'))
				return -1;
			continue;
		}
		if (x->end - x->p >= 4 && !memcmp(x->p, "<!--", 4)) {
			if (xml_skip_to(x, "-->"))
				return xml_fail(x, "unterminated comment");
		} else if (x->end - x->p >= 2 && !memcmp(x->p, "<?", 2)) {
			if (xml_skip_to(x, "?>"))
				return xml_fail(x, "unterminated processing instruction");
		} else if (x->end - x->p >= 9 && !memcmp(x->p, "<!DOCTYPE", 9)) {
			if (xml_skip_to(x, ">"))
				return xml_fail(x, "unterminated DOCTYPE");
		} else if (x->end - x->p >= 2 && x->p[1] == '/') {
			const char *nm;
			size_t nl;

			xml_adv(x, 2);
			if (xml_name(x, &nm, &nl))
				return -1;
			xml_space(x);
			if (x->p >= x->end || *x->p != '>')
				return xml_fail(x, "'>' expected in an end tag");
			xml_adv(x, 1);
			if (!depth || slen[depth - 1] != nl || memcmp(stack[depth - 1], nm, nl))
				return xml_fail(x, "end tag does not match the open element");
			depth--;
		} else {
			const char *nm;
			size_t nl;
			int empty;

			xml_adv(x, 1);
			if (xml_start_tag(x, &nm, &nl, &empty))
				return -1;
			if (!depth && roots++)
				return xml_fail(x, "a second root element");
			if (!empty) {
				if (depth == XML_DEPTH)
					return xml_fail(x, "nesting too deep");
				stack[depth] = nm;
				slen[depth++] = nl;
			}
		}
	}
	if (depth)
		return xml_fail(x, "element not closed at the end of the file");
	if (!roots)
		return xml_fail(x, "no root element");
	return 0;
}

int xml_check_file(const char *path, char *why, size_t len)
{
	FILE *f = fopen(path, "rb");
	struct xml_in x = { .line = 1, .why = why, .len = len };
	char *buf = NULL;
	long n;
	int ret = -1;

	if (!f) {
		snprintf(why, len, "cannot open: %s", strerror(errno));
		return -1;
	}
	if (fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) ||
	    !(buf = malloc((size_t)n + 1)) || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		snprintf(why, len, "cannot read");
		goto out;
	}
	x.p = buf;
	x.end = buf + n;
	ret = xml_check(&x);
out:
	free(buf);
	fclose(f);
	return ret;
}
