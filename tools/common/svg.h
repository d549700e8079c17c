/* SPDX-License-Identifier: MIT */
/*
 * svg.h - a few helpers for the hand-written SVG and Graphviz files of
 * 'hrt demo' and 'hrt sim'.  They only format text into a FILE; the caller
 * owns the layout.  Coordinates are in user units (pixels at 100 %).
 */
#ifndef HRT_TOOLS_SVG_H
#define HRT_TOOLS_SVG_H

#include <stddef.h>
#include <stdio.h>

void svg_begin(FILE *f, double w, double h, const char *title);
void svg_end(FILE *f);
/* Text with XML special characters escaped.  anchor: start|middle|end. */
void svg_text(FILE *f, double x, double y, double size, const char *anchor,
	      const char *fill, const char *text);
void svg_line(FILE *f, double x1, double y1, double x2, double y2,
	      const char *stroke, double width, const char *dash);
void svg_rect(FILE *f, double x, double y, double w, double h,
	      const char *fill, const char *stroke);
void svg_circle(FILE *f, double x, double y, double r, const char *fill);
/* A polyline through n points (xs[i], ys[i]). */
void svg_polyline(FILE *f, const double *xs, const double *ys, int n,
		  const char *stroke, double width, const char *dash);
/* <g class="cls"> ... </g>: groups parts (a legend) tests can find. */
void svg_group_begin(FILE *f, const char *cls);
void svg_group_end(FILE *f);
/* A round axis from 0: the step (1, 2 or 5 times a power of ten) that
 * covers max (> 0) in at most maxticks intervals; *top = the last tick
 * (>= max), *decimals = digits its labels need. */
double svg_nice_axis(double max, int maxticks, double *top, int *decimals);
/* Writes s with the characters special to XML (and to DOT strings, for
 * quotes and backslashes) escaped. */
void svg_escape(FILE *f, const char *s);

/* A small well-formedness check of an XML file (tags balanced and properly
 * nested, attributes quoted, entities known, one root element): 0, or -1
 * with why (and the line) in why[len].  For tests of the SVG output. */
int xml_check_file(const char *path, char *why, size_t len);

#endif
