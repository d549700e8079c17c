/*
 * svg.c - minimal SVG output helpers for the hrt tool (see svg.h).
 * Everything is written with fprintf; no DOM, no allocation except the
 * joined output path.
 */
#include <errno.h>
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

FILE *out_open(const char *dir, const char *name, char **full)
{
	size_t n = (dir ? strlen(dir) + 1 : 0) + strlen(name) + 1;
	char *p = malloc(n);
	FILE *f;

	if (!p) {
		fprintf(stderr, "hrt: out of memory\n");
		return NULL;
	}
	if (dir)
		snprintf(p, n, "%s/%s", dir, name);
	else
		snprintf(p, n, "%s", name);
	f = fopen(p, "w");
	if (!f) {
		fprintf(stderr, "hrt: cannot write %s: %s\n", p, strerror(errno));
		free(p);
		return NULL;
	}
	*full = p;
	return f;
}

int out_close(FILE *f, const char *path)
{
	int err = ferror(f);

	if (fclose(f) || err) {
		fprintf(stderr, "hrt: error writing %s\n", path);
		return -1;
	}
	return 0;
}
