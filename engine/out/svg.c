/* SPDX-License-Identifier: MIT */
/*
 * SVG charts as text: horizontal bars, columns and the eight-sector polar
 * plot, each value one mark with its number in data attributes (svg.h).
 */
#include "svg.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "banned.h"
#include "err.h"
#include "utf8.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* Layout, in px. */
#define W 600          /* chart width */
#define TOP 46         /* title and subtitle */
#define ROW 18         /* one bar */
#define LABEL_W 210    /* the label column of bars */
#define BAR_W 310      /* the longest bar */
#define COL_H 150      /* the tallest column */
#define COL_LABELS 78  /* rotated bin labels under the columns */
#define POLAR_R 110    /* the largest sector */

#define FILL "#4878a8"
#define REF "#c0392b"
#define INK "#222"
#define GRID "#ccc"

/* ============================== Text ============================== */

/* The code point of the valid UTF-8 sequence s[0..n). */
static unsigned long decode(const unsigned char *s, size_t n)
{
	if (n == 1)
		return s[0];
	if (n == 2)
		return ((unsigned long)(s[0] & 0x1f) << 6) | (s[1] & 0x3f);
	if (n == 3)
		return ((unsigned long)(s[0] & 0x0f) << 12) | ((unsigned long)(s[1] & 0x3f) << 6) |
		       (s[2] & 0x3f);
	return ((unsigned long)(s[0] & 0x07) << 18) | ((unsigned long)(s[1] & 0x3f) << 12) |
	       ((unsigned long)(s[2] & 0x3f) << 6) | (s[3] & 0x3f);
}

/* Bytes of the sequence a lead byte starts (1 for a bad lead). */
static size_t seq_len(unsigned char c)
{
	return c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 :
	       (c & 0xf8) == 0xf0 ? 4 : 1;
}

/* Characters XML 1.0 allows (C1 controls and DEL left out as well). */
static int char_ok(unsigned long cp)
{
	if (cp == 0x9 || cp == 0xa || cp == 0xd)
		return 1;
	if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f))
		return 0;
	return cp != 0xfffe && cp != 0xffff;
}

int svg_escape(struct buf *out, const char *s, size_t max_chars)
{
	static const char bad[] = "\xef\xbf\xbd"; /* U+FFFD */
	const unsigned char *p = (const unsigned char *)s;
	size_t len, i = 0, chars = 0;
	int rc = 0;

	if (!s)
		return 0;
	len = strlen(s);
	while (!rc && i < len) {
		size_t good = utf8_valid_prefix(s + i, len - i), n;

		if (max_chars && chars == max_chars) {
			rc = buf_adds(out, "\xe2\x80\xa6"); /* … */
			break;
		}
		chars++;
		if (!good) { /* a byte that starts no valid sequence */
			rc = buf_adds(out, bad);
			i++;
			continue;
		}
		n = seq_len(p[i]);
		if (n > good)
			n = good;
		if (!char_ok(decode(p + i, n)))
			rc = buf_adds(out, bad);
		else if (p[i] == '&')
			rc = buf_adds(out, "&amp;");
		else if (p[i] == '<')
			rc = buf_adds(out, "&lt;");
		else if (p[i] == '>')
			rc = buf_adds(out, "&gt;");
		else if (p[i] == '"')
			rc = buf_adds(out, "&quot;");
		else if (p[i] == '\'')
			rc = buf_adds(out, "&#39;");
		else
			rc = buf_add(out, s + i, n);
		i += n;
	}
	return rc;
}

int svg_format_value(struct buf *out, double v, enum svg_format f)
{
	if (!isfinite(v))
		return buf_adds(out, "\xe2\x80\x94");
	switch (f) {
	case SVG_SHARE:
		return buf_addf(out, "%.0f%%", 100.0 * v);
	case SVG_NUMBER:
		return buf_addf(out, "%.2f", v);
	default:
		return buf_addf(out, "%.0f", v);
	}
}

/* data-NAME="%.6g" (null when not finite). */
static int data_num(struct buf *out, const char *name, double v)
{
	if (!isfinite(v))
		return buf_addf(out, " data-%s=\"null\"", name);
	return buf_addf(out, " data-%s=\"%.6g\"", name, v);
}

/* The data attributes and tooltip of a mark; closes its element. */
static int mark_tail(struct buf *out, const struct svg_value *v, enum svg_format f,
		     const char *tag)
{
	int rc = buf_adds(out, " data-key=\"");

	rc = rc ? rc : svg_escape(out, v->key ? v->key : "", 0);
	rc = rc ? rc : buf_adds(out, "\"");
	rc = rc ? rc : data_num(out, "value", v->value);
	if (!rc && v->has_interval) {
		rc = data_num(out, "lo", v->lo);
		rc = rc ? rc : data_num(out, "hi", v->hi);
	}
	if (!rc && v->has_ref)
		rc = data_num(out, "ref", v->ref);
	rc = rc ? rc : buf_adds(out, "><title>");
	rc = rc ? rc : svg_escape(out, v->key ? v->key : "", 0);
	rc = rc ? rc : buf_adds(out, ": ");
	rc = rc ? rc : svg_format_value(out, v->value, f);
	if (!rc && v->has_interval) {
		rc = buf_adds(out, " [");
		rc = rc ? rc : svg_format_value(out, v->lo, f);
		rc = rc ? rc : buf_adds(out, ", ");
		rc = rc ? rc : svg_format_value(out, v->hi, f);
		rc = rc ? rc : buf_adds(out, "]");
	}
	if (!rc && v->has_ref) {
		rc = buf_adds(out, ", chance ");
		rc = rc ? rc : svg_format_value(out, v->ref, f);
	}
	if (!rc && v->note) {
		rc = buf_adds(out, " (");
		rc = rc ? rc : svg_escape(out, v->note, 0);
		rc = rc ? rc : buf_adds(out, ")");
	}
	rc = rc ? rc : buf_addf(out, "</title></%s>\n", tag);
	return rc;
}

/* A <text> element at (x, y) holding s escaped and cut; attrs added as given. */
static int text_at(struct buf *out, double x, double y, const char *attrs, const char *s,
		   size_t max_chars)
{
	int rc = buf_addf(out, "<text x=\"%.1f\" y=\"%.1f\"%s%s>", x, y, attrs ? " " : "",
			  attrs ? attrs : "");

	rc = rc ? rc : svg_escape(out, s, max_chars);
	return rc ? rc : buf_adds(out, "</text>\n");
}

/* A <text> element holding a formatted value. */
static int value_at(struct buf *out, double x, double y, const char *attrs, double v,
		    enum svg_format f)
{
	int rc = buf_addf(out, "<text x=\"%.1f\" y=\"%.1f\" class=\"value\"%s%s>", x, y,
			  attrs ? " " : "", attrs ? attrs : "");

	rc = rc ? rc : svg_format_value(out, v, f);
	return rc ? rc : buf_adds(out, "</text>\n");
}

/* ============================== Frame ============================== */

static int head(struct buf *out, const struct svg_plot *p, int h)
{
	int rc = buf_addf(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"proxima-plot\" "
			  "width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" "
			  "font-size=\"11\" fill=\"" INK "\" role=\"img\" data-plot=\"", W, h, W, h);

	rc = rc ? rc : svg_escape(out, p->name, 0);
	rc = rc ? rc : buf_adds(out, "\" aria-label=\"");
	rc = rc ? rc : svg_escape(out, p->title, 0);
	rc = rc ? rc : buf_adds(out, "\">\n<title>");
	rc = rc ? rc : svg_escape(out, p->title, 0);
	rc = rc ? rc : buf_addf(out, "</title>\n<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" "
				"fill=\"#fff\"/>\n", W, h);
	rc = rc ? rc : text_at(out, 8, 18, "font-size=\"12\" font-weight=\"bold\" class=\"title\"",
			       p->title, 92);
	if (!rc && p->subtitle)
		rc = text_at(out, 8, 34, "fill=\"#555\" class=\"subtitle\"", p->subtitle, 104);
	return rc;
}

/* The axis maximum: p->max, else the largest value, bound or reference. */
static double axis_max(const struct svg_plot *p)
{
	double m = 0;
	size_t i;

	if (p->max > 0)
		return p->max;
	for (i = 0; i < p->n; i++) {
		const struct svg_value *v = &p->values[i];

		if (isfinite(v->value) && v->value > m)
			m = v->value;
		if (v->has_interval && isfinite(v->hi) && v->hi > m)
			m = v->hi;
		if (v->has_ref && isfinite(v->ref) && v->ref > m)
			m = v->ref;
	}
	if (p->has_ref && isfinite(p->ref) && p->ref > m)
		m = p->ref;
	return m > 0 ? m : 1;
}

/* A value's length on an axis of `len` px, clamped to [0, len]. */
static double scale(double v, double max, double len)
{
	double x = isfinite(v) && v > 0 ? v / max * len : 0;

	return x > len ? len : x;
}

/* ============================== Bars ============================== */

static int bars(const struct svg_plot *p, struct buf *out)
{
	int h = TOP + (int)p->n * ROW + 30, rc;
	double max = axis_max(p), x0 = LABEL_W, y;
	size_t i;

	rc = head(out, p, h);
	rc = rc ? rc : buf_addf(out, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\""
				GRID "\"/>\n", x0, TOP - 4, x0, TOP + (int)p->n * ROW);
	for (i = 0; !rc && i < p->n; i++) {
		const struct svg_value *v = &p->values[i];
		double len = scale(v->value, max, BAR_W);

		y = TOP + (double)i * ROW;
		rc = text_at(out, x0 - 6, y + 12.5, "text-anchor=\"end\" class=\"label\"",
			     v->key ? v->key : "", SVG_LABEL_MAX);
		rc = rc ? rc : buf_addf(out, "<rect class=\"mark\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
					"height=\"%d\" fill=\"" FILL "\"", x0, y + 2, len, ROW - 4);
		rc = rc ? rc : mark_tail(out, v, p->format, "rect");
		if (!rc && v->has_interval) {
			double a = x0 + scale(v->lo, max, BAR_W), b = x0 + scale(v->hi, max, BAR_W);

			rc = buf_addf(out, "<path class=\"interval\" d=\"M%.1f %.1fV%.1fM%.1f %.1fH%.1fM%.1f "
				      "%.1fV%.1f\" stroke=\"" INK "\" fill=\"none\"/>\n", a, y + 5,
				      y + ROW - 5, a, y + ROW / 2.0, b, b, y + 5, y + ROW - 5);
			len = b - x0 > len ? b - x0 : len;
		}
		if (!rc && v->has_ref) {
			double r = x0 + scale(v->ref, max, BAR_W);

			rc = buf_addf(out, "<line class=\"ref\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
				      "y2=\"%.1f\" stroke=\"" REF "\" stroke-width=\"2\"/>\n", r, y,
				      r, y + ROW);
		}
		rc = rc ? rc : value_at(out, x0 + len + 4, y + 12.5, NULL, v->value, p->format);
	}
	if (!rc && p->has_ref) {
		double r = x0 + scale(p->ref, max, BAR_W);

		rc = buf_addf(out, "<line class=\"ref\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" "
			      "stroke=\"" REF "\" stroke-dasharray=\"4 3\"/>\n", r, TOP - 4, r,
			      TOP + (int)p->n * ROW);
		if (!rc && p->ref_label) {
			struct buf t;

			buf_init(&t, 256);
			rc = buf_adds(&t, p->ref_label);
			rc = rc ? rc : buf_adds(&t, " ");
			rc = rc ? rc : svg_format_value(&t, p->ref, p->format);
			rc = rc ? rc : text_at(out, r, TOP + (double)p->n * ROW + 14,
					       "text-anchor=\"middle\" fill=\"" REF "\"", buf_str(&t), 40);
			buf_release(&t);
		}
	}
	if (!rc && !p->n)
		rc = text_at(out, 8, TOP + 14, "fill=\"#555\"", "no values", 0);
	return rc ? rc : buf_adds(out, "</svg>\n");
}

/* ============================== Columns ============================== */

static int columns(const struct svg_plot *p, struct buf *out)
{
	int h = TOP + 16 + COL_H + COL_LABELS, rc;
	double max = axis_max(p), base = TOP + 16 + COL_H, x0 = 40, span = W - x0 - 16;
	double cw = p->n ? span / (double)p->n : span;
	size_t i;

	rc = head(out, p, h);
	rc = rc ? rc : buf_addf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
				"stroke=\"" GRID "\"/>\n", x0, base, x0 + span, base);
	for (i = 0; !rc && i < p->n; i++) {
		const struct svg_value *v = &p->values[i];
		double ch = scale(v->value, max, COL_H), x = x0 + (double)i * cw;
		char attrs[96];

		rc = buf_addf(out, "<rect class=\"mark\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
			      "height=\"%.1f\" fill=\"" FILL "\"", x + cw * 0.1, base - ch, cw * 0.8, ch);
		rc = rc ? rc : mark_tail(out, v, p->format, "rect");
		rc = rc ? rc : value_at(out, x + cw / 2, base - ch - 3, "text-anchor=\"middle\"",
					v->value, p->format);
		snprintf(attrs, sizeof(attrs), "text-anchor=\"end\" class=\"label\" "
			 "transform=\"rotate(-40 %.1f %.1f)\"", x + cw / 2, base + 12);
		rc = rc ? rc : text_at(out, x + cw / 2, base + 12, attrs, v->key ? v->key : "",
				       SVG_LABEL_MAX);
	}
	if (!rc && p->has_ref) {
		double r = base - scale(p->ref, max, COL_H);

		rc = buf_addf(out, "<line class=\"ref\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
			      "stroke=\"" REF "\" stroke-dasharray=\"4 3\"/>\n", x0, r, x0 + span, r);
		if (!rc && p->ref_label)
			rc = text_at(out, x0 + span, r - 3, "text-anchor=\"end\" fill=\"" REF "\"",
				     p->ref_label, 40);
	}
	if (!rc && !p->n)
		rc = text_at(out, 8, TOP + 30, "fill=\"#555\"", "no values", 0);
	return rc ? rc : buf_adds(out, "</svg>\n");
}

/* ============================== Polar ============================== */

/*
 * The point at radius r and angle a (degrees counter-clockwise from
 * straight up: 0 front, 90 left) around (cx, cy), y pointing down.
 */
static void polar_pt(double cx, double cy, double r, double a, double *x, double *y)
{
	double t = a * M_PI / 180.0;

	*x = cx - r * sin(t);
	*y = cy - r * cos(t);
}

static int polar(const struct svg_plot *p, struct buf *out)
{
	int h = TOP + 2 * POLAR_R + 50, rc;
	double cx = W / 2.0, cy = TOP + 20 + POLAR_R, max = axis_max(p), x, y, x2, y2;
	size_t i;
	int k;

	rc = head(out, p, h);
	for (k = 1; !rc && k <= 4; k++) /* rings at a quarter of the largest area each */
		rc = buf_addf(out, "<circle class=\"grid\" cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\" "
			      "fill=\"none\" stroke=\"" GRID "\"/>\n", cx, cy,
			      POLAR_R * sqrt(k / 4.0));
	for (i = 0; !rc && i < 8; i++) {
		polar_pt(cx, cy, POLAR_R, 22.5 + 45.0 * (double)i, &x, &y);
		rc = buf_addf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\""
			      GRID "\"/>\n", cx, cy, x, y);
	}
	for (i = 0; !rc && i < 8; i++) {
		const struct svg_value *v = &p->values[i];
		/* the area of a sector, not its radius, follows the value */
		double r = isfinite(v->value) && v->value > 0 ? POLAR_R * sqrt(v->value / max) : 0;
		double a = 45.0 * (double)i;

		if (r > POLAR_R)
			r = POLAR_R;
		polar_pt(cx, cy, r, a - 22.5, &x, &y);
		polar_pt(cx, cy, r, a + 22.5, &x2, &y2);
		if (r > 0)
			rc = buf_addf(out, "<path class=\"mark\" d=\"M%.1f %.1fL%.2f %.2fA%.2f %.2f 0 0 0 "
				      "%.2f %.2fZ\" fill=\"" FILL "\" fill-opacity=\"0.85\" stroke=\"#fff\"",
				      cx, cy, x, y, r, r, x2, y2);
		else
			rc = buf_addf(out, "<path class=\"mark\" d=\"M%.1f %.1fZ\" fill=\"" FILL "\"",
				      cx, cy);
		rc = rc ? rc : mark_tail(out, v, p->format, "path");
		polar_pt(cx, cy, POLAR_R + 16, a, &x, &y);
		{
			struct buf t;

			buf_init(&t, 256);
			rc = rc ? rc : svg_escape(&t, v->key ? v->key : "", 16);
			rc = rc ? rc : buf_adds(&t, " ");
			rc = rc ? rc : svg_format_value(&t, v->value, p->format);
			rc = rc ? rc : buf_addf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" "
						"class=\"label\">%s</text>\n", x, y + 4, buf_str(&t));
			buf_release(&t);
		}
	}
	return rc ? rc : buf_adds(out, "</svg>\n");
}

int svg_render(const struct svg_plot *p, struct buf *out)
{
	if (!p || !p->name || !p->title || (p->n && !p->values))
		return err_set(ENG_EINVAL, "svg: a chart needs a name, a title and its values");
	switch (p->kind) {
	case SVG_POLAR:
		if (p->n != 8)
			return err_set(ENG_EINVAL, "svg: chart '%s': a polar chart takes 8 values, not %zu",
				       p->name, p->n);
		return polar(p, out);
	case SVG_COLUMNS:
		return columns(p, out);
	default:
		return bars(p, out);
	}
}
