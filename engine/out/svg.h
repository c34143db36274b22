/* SPDX-License-Identifier: MIT */
/*
 * Small SVG charts drawn as text, for the report page and the export's
 * dataset card: horizontal bars (categories, with optional intervals and
 * reference ticks), columns (ordered bins) and a polar plot of the eight
 * BEV sectors. No scripts, no style sheets, no external references: each
 * chart is one self-contained <svg> element that parses as XML and can be
 * inlined in HTML or loaded as an image.
 *
 * Every plotted value is one mark, an element with class "mark" (a <rect>
 * for bars and columns, a <path> for polar sectors) carrying data-key (the
 * category) and data-value (the number, "%.6g"); intervals add data-lo
 * and data-hi, reference ticks data-ref. Values of zero are marks too
 * (zero-sized), so a chart of k categories always has k marks. Tests and
 * other programs read the numbers back from these attributes.
 *
 * Text (titles, keys) is escaped for XML and HTML alike: & < > " ' become
 * entities, bytes that are not UTF-8 and characters XML 1.0 forbids become
 * U+FFFD. Keys shown as labels are cut to SVG_LABEL_MAX characters (the
 * data-key attribute and the tooltip keep them whole).
 *
 * Functions append to a caller's struct buf and return 0 or its error
 * (ENG_ENOMEM, ENG_ETOOBIG); on failure the buffer may hold part of the
 * chart. Nothing here prints or touches files.
 */
#ifndef SVG_H
#define SVG_H

#include <stdbool.h>
#include <stddef.h>

#include "buf.h"

/* Characters of a key shown as a label before it is cut with "…". */
#define SVG_LABEL_MAX 34

/* The kinds of chart. */
enum svg_kind {
	SVG_BARS = 0, /* horizontal bars, one row per value, in the given order */
	SVG_COLUMNS,  /* vertical columns over ordered bins, in the given order */
	SVG_POLAR     /* exactly 8 values: front, front-left, left, back-left, back,
		       * back-right, right, front-right (front up, left to the left) */
};

/* How values are written on the chart. */
enum svg_format {
	SVG_COUNT = 0, /* integers: "12" */
	SVG_SHARE,     /* a share in 0..1 written as a percentage: "42%" */
	SVG_NUMBER     /* a plain number with two decimals: "0.37" */
};

/* One plotted value (borrowed strings). */
struct svg_value {
	const char *key;   /* the category or bin (any text) */
	double value;      /* the number (NAN is drawn as 0 and written "null") */
	double lo, hi;     /* an interval around value, when has_interval */
	double ref;        /* a reference tick for this value (its chance), when has_ref */
	const char *note;  /* more for the tooltip (a solver's name), or NULL */
	bool has_interval;
	bool has_ref;
};

/* A chart. Zero-initialise and set what you need. */
struct svg_plot {
	enum svg_kind kind;
	const char *name;       /* data-plot attribute of the <svg> (required) */
	const char *title;      /* headline (required) */
	const char *subtitle;   /* a second line (totals, a test statistic), or NULL */
	const struct svg_value *values;
	size_t n;
	enum svg_format format;
	bool has_ref;           /* a reference line across every value (e.g. uniform) */
	double ref;
	const char *ref_label;  /* its legend, e.g. "uniform" (NULL: none) */
	double max;             /* axis maximum; 0 = the largest value, interval or reference */
};

/*
 * Appends the chart as one <svg> element (no XML declaration). A polar
 * chart needs exactly 8 values; with n == 0 the chart says "no values".
 * Returns 0; ENG_EINVAL (no name or title, a polar chart without 8
 * values); or a buf error.
 */
int svg_render(const struct svg_plot *p, struct buf *out);

/*
 * Appends s escaped for XML text and attribute values (and HTML), cut
 * after max_chars characters with "…" when max_chars > 0. NULL appends
 * nothing. Returns 0 or a buf error.
 */
int svg_escape(struct buf *out, const char *s, size_t max_chars);

/*
 * Appends v in format f ("12", "42%", "0.37"); NAN appends "—". Returns 0
 * or a buf error.
 */
int svg_format_value(struct buf *out, double v, enum svg_format f);

#endif /* SVG_H */
