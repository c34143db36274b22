/* SPDX-License-Identifier: MIT */
/*
 * What each object of a synthetic recording looks like: a shape per
 * category built from boxes, frustums and ellipsoids inside the object's
 * box, in the colour its name says ("red mug", "wooden chair") or else the
 * colour of its class; and the room itself (tiled floor, walls with a
 * skirting board, ceiling). Furniture fronts face local -Y, as the scene
 * tables place them; chairs face local +Y (their backs at -Y).
 */
#include "render.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "banned.h"
#include "err.h"

/* ======================= Colours ======================= */

struct named_colour {
	const char *word;
	float rgb[3];
};

/* Colour words of object names, matched as whole words. */
static const struct named_colour COLOUR_WORDS[] = {
	{ "red", { 0.82f, 0.12f, 0.12f } },    { "blue", { 0.16f, 0.32f, 0.82f } },
	{ "green", { 0.20f, 0.62f, 0.30f } },  { "white", { 0.95f, 0.95f, 0.93f } },
	{ "black", { 0.11f, 0.11f, 0.12f } },  { "grey", { 0.52f, 0.53f, 0.55f } },
	{ "gray", { 0.52f, 0.53f, 0.55f } },   { "yellow", { 0.96f, 0.82f, 0.14f } },
	{ "silver", { 0.77f, 0.78f, 0.81f } }, { "wooden", { 0.62f, 0.41f, 0.22f } },
	{ "orange", { 0.95f, 0.55f, 0.10f } }, { "brown", { 0.45f, 0.28f, 0.15f } },
	{ "pink", { 0.94f, 0.55f, 0.70f } },   { "purple", { 0.52f, 0.25f, 0.65f } },
};

static const float STEEL[3] = { 0.74f, 0.76f, 0.80f };
static const float DARK_STEEL[3] = { 0.42f, 0.44f, 0.48f };
static const float BLACK[3] = { 0.09f, 0.09f, 0.10f };
static const float WHITE[3] = { 0.95f, 0.95f, 0.94f };
static const float PAPER[3] = { 0.96f, 0.93f, 0.84f };
static const float WORKTOP[3] = { 0.30f, 0.30f, 0.33f };

/* Whether `word` occurs in name as a whole word. */
static bool has_word(const char *name, const char *word)
{
	size_t n = strlen(word);
	const char *p = name;

	while ((p = strstr(p, word))) {
		bool start = p == name || p[-1] == ' ' || p[-1] == '-';
		bool end = p[n] == 0 || p[n] == ' ' || p[n] == '-';

		if (start && end)
			return true;
		p += n;
	}
	return false;
}

/* The colour a name says, or NULL. */
static const float *name_colour(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(COLOUR_WORDS); i++)
		if (has_word(name, COLOUR_WORDS[i].word))
			return COLOUR_WORDS[i].rgb;
	return NULL;
}

static void scaled(const float *c, float k, float out[3])
{
	int i;

	for (i = 0; i < 3; i++) {
		out[i] = c[i] * k;
		if (out[i] > 1)
			out[i] = 1;
	}
}

/* ======================= Building blocks ======================= */

/* One object being built: the scene, its index and its half-extents. */
struct build {
	struct render_scene *sc;
	size_t obj;
	float hx, hy, hz;
	const float *col;     /* the object's colour */
	const char *name;
	int rc;               /* first failure (ENG_ENOMEM) */
};

/* A box from (x0, y0, z0) to (x1, y1, z1) in the object frame. */
static void box(struct build *b, float x0, float y0, float z0, float x1, float y1, float z1,
		const float rgb[3])
{
	vec3 c = { (x0 + x1) / 2, (y0 + y1) / 2, (z0 + z1) / 2 };
	vec3 h = { fabsf(x1 - x0) / 2, fabsf(y1 - y0) / 2, fabsf(z1 - z0) / 2 };

	if (b->rc || !(h[0] > 0 && h[1] > 0 && h[2] > 0))
		return;
	b->rc = render_scene_add_box(b->sc, b->obj, c, h, rgb);
}

/* A frustum along axis ax centred at (x, y, z): radii r0 (low end) and r1 (high end). */
static void frustum(struct build *b, int ax, float x, float y, float z, float hl, float r0a,
		    float r0b, float r1a, float r1b, int nseg, const float side[3],
		    const float lo[3], const float hi[3])
{
	vec3 c = { x, y, z };

	if (b->rc || !(hl > 0))
		return;
	b->rc = render_scene_add_frustum(b->sc, b->obj, c, ax, hl, r0a, r0b, r1a, r1b, nseg, side,
					 lo, hi);
}

/* A vertical cylinder from z0 to z1 of radius r at (x, y), both ends closed. */
static void cyl_z(struct build *b, float x, float y, float z0, float z1, float r, int nseg,
		  const float side[3], const float top[3])
{
	frustum(b, 2, x, y, (z0 + z1) / 2, (z1 - z0) / 2, r, r, r, r, nseg, side, side, top);
}

static void ellipsoid(struct build *b, float x, float y, float z, float rx, float ry, float rz,
		      int nlat, const float rgb[3])
{
	vec3 c = { x, y, z }, r = { rx, ry, rz };

	if (b->rc)
		return;
	b->rc = render_scene_add_ellipsoid(b->sc, b->obj, c, r, nlat, rgb);
}

static float minf(float a, float b)
{
	return a < b ? a : b;
}

static float maxf(float a, float b)
{
	return a > b ? a : b;
}

/* ======================= Furniture ======================= */

/*
 * A cabinet: recessed plinth, a darker carcass, doors on the front (local
 * -Y) with bar handles, and a top slab.
 */
static void cabinet(struct build *b, const float door[3], const float top[3], float top_t,
		    bool handles)
{
	float hx = b->hx, hy = b->hy, hz = b->hz, z_top = hz - top_t;
	float body[3], plinth[3] = { 0.18f, 0.18f, 0.19f };
	int nd = (int)lroundf(2 * hx / 0.6f), k;

	if (nd < 1)
		nd = 1;
	scaled(door, 0.62f, body);
	box(b, -hx, -hy + 0.07f, -hz, hx, hy, -hz + 0.10f, plinth);
	box(b, -hx, -hy + 0.02f, -hz + 0.10f, hx, hy, z_top, body);
	box(b, -hx, -hy, z_top, hx, hy, hz, top);
	for (k = 0; k < nd; k++) {
		float x0 = -hx + 2 * hx * (float)k / (float)nd, x1 = -hx + 2 * hx * (float)(k + 1) / (float)nd;
		float xm = (x0 + x1) / 2;

		box(b, x0 + 0.005f, -hy + 0.004f, -hz + 0.11f, x1 - 0.005f, -hy + 0.02f, z_top - 0.01f,
		    door);
		if (handles)
			box(b, xm - 0.07f, -hy - 0.012f, z_top - 0.09f, xm + 0.07f, -hy + 0.004f,
			    z_top - 0.07f, STEEL);
	}
}

static void shape_counter(struct build *b)
{
	cabinet(b, b->col, WORKTOP, 0.04f, true);
}

static void shape_sink(struct build *b)
{
	float hx = b->hx, hy = b->hy, hz = b->hz, ty = hy - 0.08f;

	cabinet(b, b->col, WORKTOP, 0.04f, true);
	/* Steel rim, the basin inside it, and the tap at the back. */
	box(b, -hx + 0.08f, -hy + 0.07f, hz, hx - 0.08f, hy - 0.14f, hz + 0.006f, STEEL);
	box(b, -hx + 0.14f, -hy + 0.12f, hz + 0.006f, hx - 0.14f, hy - 0.19f, hz + 0.009f,
	    DARK_STEEL);
	cyl_z(b, 0, ty, hz, hz + 0.30f, 0.022f, 12, STEEL, STEEL);
	frustum(b, 1, 0, ty - 0.09f, hz + 0.28f, 0.09f, 0.015f, 0.015f, 0.015f, 0.015f, 10, STEEL,
		STEEL, STEEL);
	box(b, 0.04f, ty - 0.02f, hz + 0.20f, 0.12f, ty + 0.02f, hz + 0.22f, STEEL);
}

static void shape_stove(struct build *b)
{
	static const float glass[3] = { 0.07f, 0.07f, 0.08f }, ring[3] = { 0.30f, 0.30f, 0.32f },
			   hot[3] = { 0.55f, 0.10f, 0.06f };
	float hx = b->hx, hy = b->hy, hz = b->hz, body[3];
	int i;

	scaled(b->col, 0.7f, body);
	box(b, -hx, -hy + 0.02f, -hz, hx, hy, hz - 0.03f, body);
	box(b, -hx, -hy, hz - 0.03f, hx, hy, hz, glass);
	/* Oven door with a dark window and a handle; knobs above it. */
	box(b, -hx + 0.01f, -hy + 0.005f, -hz + 0.08f, hx - 0.01f, -hy + 0.02f, hz - 0.14f, b->col);
	box(b, -hx + 0.08f, -hy, -hz + 0.22f, hx - 0.08f, -hy + 0.005f, hz - 0.30f, glass);
	box(b, -hx + 0.08f, -hy - 0.03f, hz - 0.21f, hx - 0.08f, -hy, hz - 0.18f, STEEL);
	for (i = 0; i < 4; i++) {
		float x = -hx + 2 * hx * ((float)i + 0.5f) / 4;

		frustum(b, 1, x, -hy + 0.005f, hz - 0.085f, 0.015f, 0.02f, 0.02f, 0.02f, 0.02f, 10,
			BLACK, BLACK, BLACK);
	}
	/* Four hobs on the glass. */
	for (i = 0; i < 4; i++) {
		float x = (i & 1) ? hx / 2 : -hx / 2, y = (i & 2) ? hy / 2 : -hy / 2;
		float r = i == 1 || i == 2 ? 0.09f : 0.07f;

		cyl_z(b, x, y, hz, hz + 0.004f, r, 16, ring, ring);
		cyl_z(b, x, y, hz + 0.004f, hz + 0.006f, r * 0.7f, 16, hot, hot);
	}
}

static void shape_fridge(struct build *b)
{
	float hx = b->hx, hy = b->hy, hz = b->hz, body[3], split = -hz + 1.15f * (2 * hz / 1.8f);

	scaled(b->col, 0.6f, body);
	box(b, -hx, -hy + 0.03f, -hz, hx, hy, hz, body);
	box(b, -hx + 0.005f, -hy, -hz + 0.04f, hx - 0.005f, -hy + 0.03f, split - 0.006f, b->col);
	box(b, -hx + 0.005f, -hy, split + 0.006f, hx - 0.005f, -hy + 0.03f, hz - 0.005f, b->col);
	box(b, hx - 0.09f, -hy - 0.04f, split - 0.55f, hx - 0.06f, -hy, split - 0.10f, DARK_STEEL);
	box(b, hx - 0.09f, -hy - 0.04f, split + 0.08f, hx - 0.06f, -hy, split + 0.40f, DARK_STEEL);
}

static void shape_bin(struct build *b)
{
	float r = minf(b->hx, b->hy), lid[3];

	scaled(b->col, 0.55f, lid);
	cyl_z(b, 0, 0, -b->hz, b->hz - 0.04f, r * 0.95f, 16, b->col, b->col);
	cyl_z(b, 0, 0, b->hz - 0.04f, b->hz, r, 16, lid, lid);
	box(b, -0.05f, -r - 0.03f, -b->hz, 0.05f, -r * 0.9f, -b->hz + 0.03f, BLACK);
}

/* Open shelves: sides, back, boards. The top board is the top of the box. */
static void shape_shelves(struct build *b)
{
	float hx = b->hx, hy = b->hy, hz = b->hz, back[3];
	int k;

	scaled(b->col, 0.65f, back);
	box(b, -hx, -hy, -hz, -hx + 0.02f, hy, hz, b->col);
	box(b, hx - 0.02f, -hy, -hz, hx, hy, hz, b->col);
	box(b, -hx + 0.02f, hy - 0.015f, -hz, hx - 0.02f, hy, hz, back);
	box(b, -hx + 0.02f, -hy, -hz, hx - 0.02f, hy - 0.015f, -hz + 0.07f, b->col);
	box(b, -hx + 0.02f, -hy, hz - 0.025f, hx - 0.02f, hy - 0.015f, hz, b->col);
	for (k = 1; k < 4; k++) {
		float z = -hz + 2 * hz * (float)k / 4;

		box(b, -hx + 0.02f, -hy + 0.01f, z - 0.01f, hx - 0.02f, hy - 0.015f, z + 0.01f, b->col);
	}
}

static void shape_sideboard(struct build *b)
{
	float top[3];

	scaled(b->col, 1.2f, top);
	cabinet(b, b->col, top, 0.03f, true);
}

/* A table: a top slab and four legs (desks, side tables, coffee tables). */
static void shape_table(struct build *b)
{
	float hx = b->hx, hy = b->hy, hz = b->hz, t = minf(0.04f, hz * 0.15f);
	float leg = minf(0.05f, minf(hx, hy) * 0.2f), in = minf(0.04f, minf(hx, hy) * 0.1f), lc[3];
	int k;

	scaled(b->col, 0.72f, lc);
	box(b, -hx, -hy, hz - t, hx, hy, hz, b->col);
	for (k = 0; k < 4; k++) {
		float x = (k & 1) ? hx - in - leg : -hx + in, y = (k & 2) ? hy - in - leg : -hy + in;

		box(b, x, y, -hz, x + leg, y + leg, hz - t, lc);
	}
}

static void shape_desk(struct build *b)
{
	float lc[3];

	shape_table(b);
	/* A modesty panel at the back (local +Y) tells a desk from a table. */
	scaled(b->col, 0.72f, lc);
	box(b, -b->hx + 0.06f, b->hy - 0.06f, -b->hz + 0.25f, b->hx - 0.06f, b->hy - 0.04f,
	    b->hz - 0.04f, lc);
}

/* A chair facing local +Y: seat, four legs, back at -Y. */
static void shape_chair(struct build *b)
{
	float hx = b->hx, hy = b->hy, hz = b->hz, seat = -hz + 0.47f * (2 * hz / 0.9f), lc[3];
	float leg = 0.035f;
	int k;

	scaled(b->col, 0.8f, lc);
	box(b, -hx, -hy, seat - 0.04f, hx, hy, seat, b->col);
	for (k = 0; k < 4; k++) {
		float x = (k & 1) ? hx - leg : -hx, y = (k & 2) ? hy - leg : -hy;

		box(b, x, y, -hz, x + leg, y + leg, seat - 0.04f, lc);
	}
	box(b, -hx, -hy, seat, -hx + leg, -hy + leg, hz, lc);
	box(b, hx - leg, -hy, seat, hx, -hy + leg, hz, lc);
	box(b, -hx + leg, -hy, seat + 0.16f, hx - leg, -hy + 0.03f, hz - 0.02f, b->col);
}

static void shape_office_chair(struct build *b)
{
	float hx = b->hx, hy = b->hy, hz = b->hz, seat = -hz + 0.50f, r = minf(hx, hy) * 0.92f;
	int k;

	/* Star base (four arms) with castors, gas lift, seat, back at -Y. */
	frustum(b, 0, 0, 0, -hz + 0.06f, r, 0.02f, 0.015f, 0.02f, 0.015f, 6, BLACK, BLACK, BLACK);
	frustum(b, 1, 0, 0, -hz + 0.06f, r, 0.02f, 0.015f, 0.02f, 0.015f, 6, BLACK, BLACK, BLACK);
	for (k = 0; k < 4; k++) {
		float x = k == 0 ? r - 0.02f : k == 1 ? -r + 0.02f : 0;
		float y = k == 2 ? r - 0.02f : k == 3 ? -r + 0.02f : 0;

		cyl_z(b, x, y, -hz, -hz + 0.045f, 0.022f, 8, BLACK, BLACK);
	}
	cyl_z(b, 0, 0, -hz + 0.07f, seat - 0.07f, 0.025f, 10, DARK_STEEL, DARK_STEEL);
	box(b, -hx + 0.03f, -hy + 0.04f, seat - 0.07f, hx - 0.03f, hy - 0.02f, seat, b->col);
	box(b, -0.03f, -hy + 0.03f, seat - 0.06f, 0.03f, -hy + 0.07f, seat + 0.12f, BLACK);
	box(b, -hx + 0.06f, -hy + 0.01f, seat + 0.10f, hx - 0.06f, -hy + 0.08f, hz, b->col);
}

/* A sofa or armchair facing local -Y: base, seat cushions, back at +Y, armrests. */
static void shape_sofa(struct build *b)
{
	float hx = b->hx, hy = b->hy, hz = b->hz, seat = -hz + 0.45f, arm = -hz + 0.62f;
	float aw = minf(0.18f, hx * 0.2f), base[3], cush[3];
	int n = hx > 0.7f ? 2 : 1, k;

	scaled(b->col, 0.78f, base);
	scaled(b->col, 1.12f, cush);
	box(b, -hx + aw, -hy, -hz, hx - aw, hy - 0.2f, seat - 0.12f, base);
	for (k = 0; k < n; k++) {
		float x0 = -hx + aw + (2 * hx - 2 * aw) * (float)k / (float)n;
		float x1 = -hx + aw + (2 * hx - 2 * aw) * (float)(k + 1) / (float)n;

		box(b, x0 + 0.01f, -hy + 0.01f, seat - 0.12f, x1 - 0.01f, hy - 0.2f, seat, cush);
	}
	box(b, -hx, hy - 0.2f, -hz, hx, hy, hz, b->col);
	box(b, -hx, -hy, -hz, -hx + aw, hy - 0.2f, arm, b->col);
	box(b, hx - aw, -hy, -hz, hx, hy - 0.2f, arm, b->col);
}

static void shape_tv_stand(struct build *b)
{
	cabinet(b, b->col, b->col, 0.03f, false);
}

/* A TV: a thin panel facing local -Y on a foot. */
static void shape_tv(struct build *b)
{
	static const float screen[3] = { 0.10f, 0.14f, 0.24f };
	float hx = b->hx, hy = b->hy, hz = b->hz;

	box(b, -hx * 0.3f, -hy, -hz, hx * 0.3f, hy, -hz + 0.02f, BLACK);
	box(b, -0.04f, -0.01f, -hz + 0.02f, 0.04f, 0.02f, -hz + 0.12f, BLACK);
	box(b, -hx, -hy + 0.01f, -hz + 0.10f, hx, hy * 0.2f, hz, BLACK);
	box(b, -hx + 0.02f, -hy + 0.005f, -hz + 0.12f, hx - 0.02f, -hy + 0.01f, hz - 0.02f, screen);
}

static void shape_lamp(struct build *b)
{
	static const float shade[3] = { 0.97f, 0.88f, 0.62f };
	float r = minf(b->hx, b->hy), hz = b->hz;

	cyl_z(b, 0, 0, -hz, -hz + 0.03f, r * 0.7f, 16, BLACK, BLACK);
	cyl_z(b, 0, 0, -hz + 0.03f, hz - 0.18f, 0.012f, 8, DARK_STEEL, DARK_STEEL);
	frustum(b, 2, 0, 0, hz - 0.11f, 0.11f, r, r, r * 0.62f, r * 0.62f, 16, shade, shade, shade);
}

static void shape_plant(struct build *b)
{
	static const float pot[3] = { 0.72f, 0.38f, 0.24f }, leaf[3] = { 0.20f, 0.50f, 0.20f },
			   leaf2[3] = { 0.32f, 0.62f, 0.26f };
	float r = minf(b->hx, b->hy), hz = b->hz, ph = 0.35f * 2 * hz;

	frustum(b, 2, 0, 0, -hz + ph / 2, ph / 2, r * 0.55f, r * 0.55f, r * 0.75f, r * 0.75f, 16,
		pot, pot, pot);
	ellipsoid(b, 0, 0, -hz + ph + (2 * hz - ph) * 0.45f, r, r, (2 * hz - ph) * 0.45f, 6, leaf);
	ellipsoid(b, r * 0.25f, -r * 0.2f, hz - (2 * hz - ph) * 0.22f, r * 0.55f, r * 0.55f,
		  (2 * hz - ph) * 0.22f, 5, leaf2);
}

/* A whiteboard on a wall, its face at local -Y, with a frame and a pen tray. */
static void shape_whiteboard(struct build *b)
{
	static const float frame[3] = { 0.66f, 0.67f, 0.71f }, ink[3] = { 0.15f, 0.25f, 0.70f };
	float hx = b->hx, hy = b->hy, hz = b->hz, f = 0.025f;

	box(b, -hx + f, -hy + 0.01f, -hz + f, hx - f, hy, hz - f, WHITE);
	box(b, -hx, -hy, -hz, hx, hy, -hz + f, frame);
	box(b, -hx, -hy, hz - f, hx, hy, hz, frame);
	box(b, -hx, -hy, -hz + f, -hx + f, hy, hz - f, frame);
	box(b, hx - f, -hy, -hz + f, hx, hy, hz - f, frame);
	box(b, -hx * 0.6f, -hy - 0.06f, -hz, hx * 0.6f, -hy, -hz + 0.015f, frame);
	/* Three lines of writing. */
	box(b, -hx * 0.7f, -hy + 0.006f, hz * 0.45f, hx * 0.1f, -hy + 0.01f, hz * 0.45f + 0.02f, ink);
	box(b, -hx * 0.7f, -hy + 0.006f, hz * 0.15f, hx * 0.4f, -hy + 0.01f, hz * 0.15f + 0.02f, ink);
	box(b, -hx * 0.7f, -hy + 0.006f, -hz * 0.15f, -hx * 0.1f, -hy + 0.01f, -hz * 0.15f + 0.02f, ink);
}

static void shape_filing_cabinet(struct build *b)
{
	float hx = b->hx, hy = b->hy, hz = b->hz, body[3];
	int k;

	scaled(b->col, 0.75f, body);
	box(b, -hx, -hy + 0.015f, -hz, hx, hy, hz, body);
	for (k = 0; k < 3; k++) {
		float z0 = -hz + 2 * hz * (float)k / 3, z1 = -hz + 2 * hz * (float)(k + 1) / 3;

		box(b, -hx + 0.01f, -hy, z0 + 0.01f, hx - 0.01f, -hy + 0.015f, z1 - 0.01f, b->col);
		box(b, -0.08f, -hy - 0.02f, z1 - 0.08f, 0.08f, -hy, z1 - 0.06f, DARK_STEEL);
	}
}

static void shape_printer(struct build *b)
{
	static const float top[3] = { 0.25f, 0.25f, 0.28f };
	float hx = b->hx, hy = b->hy, hz = b->hz;

	box(b, -hx, -hy, -hz, hx, hy, hz - 0.03f, b->col);
	box(b, -hx + 0.05f, -hy + 0.05f, hz - 0.03f, hx - 0.05f, hy - 0.08f, hz, top);
	box(b, -hx + 0.08f, -hy - 0.005f, -hz + 0.06f, hx - 0.08f, -hy, -hz + 0.09f, BLACK);
	box(b, hx - 0.07f, -hy - 0.005f, hz - 0.09f, hx - 0.03f, -hy, hz - 0.06f, top);
}

/* A coffee machine facing local -Y: base with a drip tray, back column, head and spout. */
static void shape_coffee_machine(struct build *b)
{
	static const float light[3] = { 0.20f, 0.85f, 0.35f };
	float hx = b->hx, hy = b->hy, hz = b->hz;

	box(b, -hx, -hy, -hz, hx, hy, -hz + 0.03f, BLACK);
	box(b, -hx * 0.6f, -hy + 0.02f, -hz + 0.03f, hx * 0.6f, -hy + 0.14f, -hz + 0.04f, DARK_STEEL);
	box(b, -hx, hy - 0.14f, -hz + 0.03f, hx, hy, hz - 0.09f, b->col);
	box(b, -hx, -hy + 0.03f, hz - 0.09f, hx, hy, hz, b->col);
	cyl_z(b, 0, -hy + 0.09f, hz - 0.13f, hz - 0.09f, 0.02f, 10, STEEL, STEEL);
	box(b, hx - 0.06f, -hy + 0.025f, hz - 0.05f, hx - 0.03f, -hy + 0.03f, hz - 0.03f, light);
}

/* ======================= Small objects ======================= */

static void shape_mug(struct build *b)
{
	float hx = b->hx, hy = b->hy, hz = b->hz, r = minf(hx * 0.78f, hy), xc = -hx + r, inner[3];
	float x0 = xc + r * 0.9f, t = 0.007f;

	scaled(b->col, 0.42f, inner);
	frustum(b, 2, xc, 0, 0, hz, r * 0.94f, r * 0.94f, r, r, 16, b->col, b->col, inner);
	/* The handle: two arms and a grip on +X. */
	box(b, x0, -t, hz - 0.03f, hx, t, hz - 0.015f, b->col);
	box(b, x0, -t, -hz + 0.02f, hx, t, -hz + 0.035f, b->col);
	box(b, hx - 0.009f, -t, -hz + 0.02f, hx, t, hz - 0.015f, b->col);
}

static void shape_glass(struct build *b)
{
	static const float glass[3] = { 0.70f, 0.86f, 0.93f }, water[3] = { 0.45f, 0.65f, 0.85f };
	float r = minf(b->hx, b->hy);

	frustum(b, 2, 0, 0, 0, b->hz, r * 0.82f, r * 0.82f, r, r, 16, glass, glass, water);
}

static void shape_plate(struct build *b)
{
	float r = minf(b->hx, b->hy), side[3];

	scaled(b->col, 0.85f, side);
	frustum(b, 2, 0, 0, 0, b->hz, r * 0.72f, r * 0.72f, r, r, 24, side, side, b->col);
}

static void shape_bowl(struct build *b)
{
	float r = minf(b->hx, b->hy), inner[3];

	scaled(b->col, 0.62f, inner);
	frustum(b, 2, 0, 0, 0, b->hz, r * 0.55f, r * 0.55f, r, r, 20, b->col, b->col, inner);
}

/* A kettle: a tapering body, a lid knob, an arched handle on top and a spout at -X. */
static void shape_kettle(struct build *b)
{
	float hx = b->hx, hy = b->hy, hz = b->hz, rb = minf(hx * 0.72f, hy), xc = hx - rb;
	float top = -hz + 0.72f * 2 * hz, hp = rb * 0.55f;

	frustum(b, 2, xc, 0, (-hz + top) / 2, (top + hz) / 2, rb, rb, rb * 0.72f, rb * 0.72f, 16,
		b->col, BLACK, b->col);
	cyl_z(b, xc, 0, top, top + 0.012f, rb * 0.35f, 10, BLACK, BLACK);
	box(b, xc - hp, -0.009f, top, xc - hp + 0.018f, 0.009f, hz - 0.012f, BLACK);
	box(b, xc + hp - 0.018f, -0.009f, top, xc + hp, 0.009f, hz - 0.012f, BLACK);
	box(b, xc - hp, -0.011f, hz - 0.022f, xc + hp, 0.011f, hz, BLACK);
	frustum(b, 0, (-hx + xc - rb * 0.8f) / 2, 0, -hz + 0.45f * 2 * hz,
		(xc - rb * 0.8f + hx) / 2, 0.009f, 0.009f, 0.015f, 0.015f, 8, b->col, b->col,
		b->col);
}

static void shape_cutting_board(struct build *b)
{
	static const float grain[3] = { 0.70f, 0.52f, 0.31f }, hole[3] = { 0.30f, 0.22f, 0.14f };
	float hx = b->hx, hy = b->hy, hz = b->hz;
	int k;

	box(b, -hx, -hy, -hz, hx, hy, hz, b->col);
	for (k = 0; k < 3; k++) {
		float y = -hy + 2 * hy * ((float)k + 0.7f) / 3.4f;

		box(b, -hx + 0.03f, y, hz, hx - 0.08f, y + 0.008f, hz + 0.0008f, grain);
	}
	box(b, hx - 0.055f, -0.018f, hz, hx - 0.02f, 0.018f, hz + 0.0012f, hole);
}

static void shape_knife(struct build *b)
{
	static const float blade[3] = { 0.84f, 0.86f, 0.90f };
	float hx = b->hx, hy = b->hy, hz = b->hz, xs = hx * 0.3f;

	box(b, -hx, -hy * 0.75f, -hz, xs, hy * 0.75f, -hz + hz * 0.5f, blade);
	box(b, xs, -hy, -hz, hx, hy, hz, BLACK);
}

static void shape_spoon(struct build *b)
{
	float hx = b->hx, hy = b->hy, hz = b->hz, br = minf(0.028f, hx * 0.35f);

	box(b, -hx, -hy * 0.3f, -hz, hx - 2 * br, hy * 0.3f, -hz + 0.004f, STEEL);
	ellipsoid(b, hx - br, 0, -hz + hz * 0.6f, br, hy, hz * 0.6f, 5, STEEL);
}

static void shape_bread(struct build *b)
{
	static const float crumb[3] = { 0.93f, 0.82f, 0.60f };
	float hx = b->hx, hy = b->hy, hz = b->hz, crust[3];

	scaled(b->col, 0.85f, crust);
	box(b, -hx, -hy, -hz, hx, hy, 0, b->col);
	frustum(b, 0, 0, 0, 0, hx, hy, hz, hy, hz, 16, crust, crumb, crumb);
}

static void shape_apple(struct build *b)
{
	static const float stem[3] = { 0.35f, 0.22f, 0.10f };

	ellipsoid(b, 0, 0, -b->hz * 0.06f, b->hx, b->hy, b->hz * 0.94f, 8, b->col);
	box(b, -0.004f, -0.004f, b->hz * 0.8f, 0.004f, 0.004f, b->hz, stem);
}

static void shape_sponge(struct build *b)
{
	static const float scrub[3] = { 0.15f, 0.52f, 0.28f };
	float z = b->hz * 0.3f;

	box(b, -b->hx, -b->hy, -b->hz, b->hx, b->hy, z, b->col);
	box(b, -b->hx, -b->hy, z, b->hx, b->hy, b->hz, scrub);
}

/* A book, notebook or folder: covers and spine in its colour, pages between. */
static void shape_book(struct build *b)
{
	float hx = b->hx, hy = b->hy, hz = b->hz, c = minf(0.004f, hz * 0.3f), spine[3];

	scaled(b->col, 0.8f, spine);
	box(b, -hx, -hy, -hz, hx, hy, -hz + c, b->col);
	box(b, -hx, -hy, hz - c, hx, hy, hz, b->col);
	box(b, -hx, -hy, -hz + c, -hx + 0.006f, hy, hz - c, spine);
	box(b, -hx + 0.006f, -hy + 0.004f, -hz + c, hx - 0.004f, hy - 0.004f, hz - c, PAPER);
}

static void shape_magazine(struct build *b)
{
	float hx = b->hx, hy = b->hy, hz = b->hz;

	box(b, -hx, -hy, -hz, hx, hy, hz, b->col);
	box(b, -hx + 0.01f, hy - 0.06f, hz, hx - 0.01f, hy - 0.02f, hz + 0.0008f, WHITE);
}

static void shape_laptop(struct build *b)
{
	float hx = b->hx, hy = b->hy, hz = b->hz, base[3], logo[3];

	scaled(b->col, 0.75f, base);
	scaled(b->col, 1.25f, logo);
	box(b, -hx, -hy, -hz, hx, hy, 0, base);
	box(b, -hx + 0.003f, -hy + 0.003f, 0, hx - 0.003f, hy, hz, b->col);
	cyl_z(b, 0, hy * 0.1f, hz, hz + 0.0008f, 0.02f, 12, logo, logo);
}

static void shape_phone(struct build *b)
{
	static const float screen[3] = { 0.12f, 0.20f, 0.36f };
	float hx = b->hx, hy = b->hy, hz = b->hz;

	box(b, -hx, -hy, -hz, hx, hy, hz, b->col);
	box(b, -hx + 0.004f, -hy + 0.01f, hz, hx - 0.004f, hy - 0.01f, hz + 0.0008f, screen);
}

/* A pen or marker lying along local x: body, and a cap or tip at -X. */
static void shape_pen(struct build *b, const float body[3], const float cap[3], float cap_frac)
{
	float hx = b->hx, r = minf(b->hy, b->hz), xc = -hx + 2 * hx * cap_frac;

	frustum(b, 0, (xc + hx) / 2, 0, 0, (hx - xc) / 2, r * 0.9f, r * 0.9f, r * 0.9f, r * 0.9f, 8,
		body, body, body);
	frustum(b, 0, (xc - hx) / 2, 0, 0, (xc + hx) / 2, r * 0.4f, r * 0.4f, r, r, 8, cap, cap,
		cap);
}

static void shape_pen_class(struct build *b)
{
	shape_pen(b, b->col, STEEL, 0.15f);
}

static void shape_marker(struct build *b)
{
	shape_pen(b, WHITE, b->col, 0.3f);
}

static void shape_stapler(struct build *b)
{
	static const float arm[3] = { 0.30f, 0.30f, 0.34f };
	float hx = b->hx, hy = b->hy, hz = b->hz;

	box(b, -hx, -hy, -hz, hx, hy, -hz + 0.012f, b->col);
	box(b, hx - 0.025f, -hy * 0.8f, -hz + 0.012f, hx, hy * 0.8f, -hz + 0.025f, b->col);
	box(b, -hx + 0.005f, -hy * 0.8f, -hz + 0.025f, hx, hy * 0.8f, hz, arm);
}

static void shape_remote(struct build *b)
{
	static const float button[3] = { 0.55f, 0.56f, 0.60f }, power[3] = { 0.85f, 0.15f, 0.12f };
	float hx = b->hx, hy = b->hy, hz = b->hz;
	int k;

	box(b, -hx, -hy, -hz, hx, hy, hz, b->col);
	box(b, -0.008f, hy - 0.025f, hz, 0.008f, hy - 0.012f, hz + 0.002f, power);
	for (k = 0; k < 6; k++) {
		int row = k / 2;
		float x = (k & 1) ? 0.004f : -0.016f, y = hy - 0.05f - 0.022f * (float)row;

		box(b, x, y, hz, x + 0.012f, y + 0.012f, hz + 0.002f, button);
	}
}

static void shape_cushion(struct build *b)
{
	float hx = b->hx, hy = b->hy, hz = b->hz, zt = hz * 0.5f;
	bool striped = has_word(b->name, "striped");
	int k, n = 5;

	box(b, -hx, -hy, -hz, hx, hy, zt, b->col);
	if (!striped) {
		box(b, -hx + 0.03f, -hy + 0.03f, zt, hx - 0.03f, hy - 0.03f, hz, b->col);
		return;
	}
	for (k = 0; k < n; k++) {
		float x0 = -hx + 0.03f + (2 * hx - 0.06f) * (float)k / (float)n;
		float x1 = -hx + 0.03f + (2 * hx - 0.06f) * (float)(k + 1) / (float)n;

		box(b, x0, -hy + 0.03f, zt, x1, hy - 0.03f, hz, (k & 1) ? WHITE : b->col);
	}
}

static void shape_watering_can(struct build *b)
{
	float hx = b->hx, hy = b->hy, hz = b->hz, r = minf(hx * 0.45f, hy), xc = hx - r;
	float top = hz * 0.35f, hp = r * 0.6f, xs = xc - r * 0.9f;

	cyl_z(b, xc, 0, -hz, top, r, 16, b->col, b->col);
	box(b, xc - hp, -0.01f, top, xc - hp + 0.02f, 0.01f, hz - 0.02f, b->col);
	box(b, xc + hp - 0.02f, -0.01f, top, xc + hp, 0.01f, hz - 0.02f, b->col);
	box(b, xc - hp, -0.012f, hz - 0.025f, xc + hp, 0.012f, hz, b->col);
	/* The spout rises towards -X in two steps and ends in a rose. */
	frustum(b, 0, (xs + (xs - 0.06f)) / 2, 0, -hz * 0.2f, 0.03f, 0.012f, 0.012f, 0.012f, 0.012f,
		8, b->col, b->col, b->col);
	frustum(b, 0, (xs - 0.06f + (-hx + 0.02f)) / 2, 0, hz * 0.15f, (xs - 0.06f + hx - 0.02f) / 2,
		0.01f, 0.01f, 0.01f, 0.01f, 8, b->col, b->col, b->col);
	frustum(b, 0, -hx + 0.01f, 0, hz * 0.15f, 0.01f, 0.02f, 0.02f, 0.012f, 0.012f, 8, b->col,
		b->col, b->col);
}

static void shape_box(struct build *b)
{
	box(b, -b->hx, -b->hy, -b->hz, b->hx, b->hy, b->hz, b->col);
}

/* ======================= The class table ======================= */

struct shape_class {
	const char *category;
	void (*build)(struct build *b);
	float rgb[3];  /* colour when the name says none */
};

static const struct shape_class CLASSES[] = {
	{ "counter", shape_counter, { 0.88f, 0.86f, 0.80f } },
	{ "sink", shape_sink, { 0.88f, 0.86f, 0.80f } },
	{ "stove", shape_stove, { 0.92f, 0.92f, 0.92f } },
	{ "fridge", shape_fridge, { 0.93f, 0.94f, 0.95f } },
	{ "bin", shape_bin, { 0.45f, 0.47f, 0.50f } },
	{ "shelves", shape_shelves, { 0.70f, 0.52f, 0.32f } },
	{ "bookshelf", shape_shelves, { 0.45f, 0.30f, 0.18f } },
	{ "sideboard", shape_sideboard, { 0.45f, 0.30f, 0.20f } },
	{ "table", shape_table, { 0.62f, 0.45f, 0.28f } },
	{ "coffee table", shape_table, { 0.40f, 0.27f, 0.17f } },
	{ "side table", shape_table, { 0.58f, 0.58f, 0.60f } },
	{ "desk", shape_desk, { 0.82f, 0.76f, 0.64f } },
	{ "chair", shape_chair, { 0.62f, 0.41f, 0.22f } },
	{ "office chair", shape_office_chair, { 0.20f, 0.20f, 0.22f } },
	{ "sofa", shape_sofa, { 0.30f, 0.40f, 0.56f } },
	{ "armchair", shape_sofa, { 0.58f, 0.36f, 0.20f } },
	{ "tv stand", shape_tv_stand, { 0.24f, 0.24f, 0.26f } },
	{ "tv", shape_tv, { 0.06f, 0.06f, 0.07f } },
	{ "lamp", shape_lamp, { 0.97f, 0.88f, 0.62f } },
	{ "plant", shape_plant, { 0.20f, 0.50f, 0.20f } },
	{ "whiteboard", shape_whiteboard, { 0.96f, 0.96f, 0.96f } },
	{ "filing cabinet", shape_filing_cabinet, { 0.62f, 0.64f, 0.67f } },
	{ "printer", shape_printer, { 0.84f, 0.84f, 0.86f } },
	{ "coffee machine", shape_coffee_machine, { 0.14f, 0.14f, 0.15f } },
	{ "mug", shape_mug, { 0.95f, 0.95f, 0.93f } },
	{ "glass", shape_glass, { 0.70f, 0.86f, 0.93f } },
	{ "plate", shape_plate, { 0.95f, 0.95f, 0.93f } },
	{ "bowl", shape_bowl, { 0.88f, 0.62f, 0.36f } },
	{ "kettle", shape_kettle, { 0.72f, 0.74f, 0.78f } },
	{ "cutting board", shape_cutting_board, { 0.82f, 0.63f, 0.40f } },
	{ "knife", shape_knife, { 0.84f, 0.86f, 0.90f } },
	{ "spoon", shape_spoon, { 0.74f, 0.76f, 0.80f } },
	{ "bread", shape_bread, { 0.84f, 0.58f, 0.28f } },
	{ "apple", shape_apple, { 0.55f, 0.76f, 0.20f } },
	{ "sponge", shape_sponge, { 0.97f, 0.85f, 0.25f } },
	{ "book", shape_book, { 0.92f, 0.50f, 0.14f } },
	{ "notebook", shape_book, { 0.30f, 0.30f, 0.32f } },
	{ "folder", shape_book, { 0.20f, 0.45f, 0.75f } },
	{ "magazine", shape_magazine, { 0.86f, 0.34f, 0.56f } },
	{ "laptop", shape_laptop, { 0.77f, 0.78f, 0.81f } },
	{ "phone", shape_phone, { 0.10f, 0.10f, 0.12f } },
	{ "pen", shape_pen_class, { 0.16f, 0.32f, 0.82f } },
	{ "marker", shape_marker, { 0.10f, 0.10f, 0.11f } },
	{ "stapler", shape_stapler, { 0.11f, 0.11f, 0.12f } },
	{ "remote", shape_remote, { 0.11f, 0.11f, 0.12f } },
	{ "cushion", shape_cushion, { 0.76f, 0.52f, 0.34f } },
	{ "watering can", shape_watering_can, { 0.22f, 0.56f, 0.36f } },
};

static const struct shape_class *find_class(const char *category)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(CLASSES); i++)
		if (!strcmp(CLASSES[i].category, category))
			return &CLASSES[i];
	return NULL;
}

/* A colour for a category the table lacks, from a hash of its name. */
static void hashed_colour(const char *s, float out[3])
{
	uint32_t h = 2166136261u;
	int i;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	for (i = 0; i < 3; i++)
		out[i] = 0.25f + 0.65f * (float)((h >> (8 * i)) & 0xff) / 255.0f;
}

/* ======================= The room ======================= */

struct room_style {
	float floor_a[3], floor_b[3]; /* alternating tiles or planks */
	float tile_x, tile_y;         /* tile size, m */
	bool checker;                 /* checkerboard (else rows along x) */
	float wall[3];
};

static const struct room_style STYLES[SYNTH_NSCENES] = {
	/* kitchen: light stone tiles */
	{ { 0.78f, 0.76f, 0.70f }, { 0.62f, 0.60f, 0.56f }, 0.5f, 0.5f, true,
	  { 0.90f, 0.86f, 0.74f } },
	/* apartment: wooden planks along x */
	{ { 0.66f, 0.48f, 0.30f }, { 0.58f, 0.41f, 0.25f }, 1.2f, 0.2f, false,
	  { 0.80f, 0.86f, 0.88f } },
	/* office: grey carpet tiles */
	{ { 0.46f, 0.48f, 0.52f }, { 0.38f, 0.40f, 0.44f }, 0.5f, 0.5f, true,
	  { 0.90f, 0.90f, 0.87f } },
};

static int add_world_quad(struct render_scene *sc, float x0, float y0, float x1, float y1,
			  float z, float inside_dz, const float rgb[3])
{
	vec3 a = { x0, y0, z }, b = { x1, y0, z }, c = { x1, y1, z }, d = { x0, y1, z };
	vec3 in = { (x0 + x1) / 2, (y0 + y1) / 2, z + inside_dz };
	int rc = render_scene_add_tri(sc, RENDER_WORLD, a, b, c, in, rgb, 0);

	if (rc)
		return rc;
	return render_scene_add_tri(sc, RENDER_WORLD, a, c, d, in, rgb, 0);
}

static int add_room(struct render_scene *sc, const struct synth_recording *s, float wall_h)
{
	const struct room_style *st = &STYLES[s->params.scene < SYNTH_NSCENES ? s->params.scene : 0];
	/*
	 * The light comes from above, so a ceiling would get the ambient term
	 * only: its colour is over 1 to show it light grey all the same.
	 */
	static const float ceiling[3] = { 1.55f, 1.55f, 1.52f }, panel[3] = { 2.0f, 2.0f, 1.95f };
	int nx = (int)ceilf(s->room_w / st->tile_x), ny = (int)ceilf(s->room_d / st->tile_y);
	int i, j, rc = 0;

	for (j = 0; j < ny && !rc; j++)
		for (i = 0; i < nx && !rc; i++) {
			/* Planks: every other row shifted by half a plank. */
			float off = st->checker || !(j & 1) ? 0 : st->tile_x / 2;
			/* Edges from the indices alone, so neighbours share them bit for bit. */
			float x0 = (float)i * st->tile_x - off, x1 = (float)(i + 1) * st->tile_x - off;
			float y0 = (float)j * st->tile_y, y1 = minf((float)(j + 1) * st->tile_y, s->room_d);
			bool a = st->checker ? ((i + j) & 1) == 0 : (i & 1) == 0;

			x0 = maxf(x0, 0);
			x1 = minf(x1, s->room_w);
			rc = add_world_quad(sc, x0, y0, x1, y1, 0, -1, a ? st->floor_a : st->floor_b);
			if (!rc && !st->checker && i == nx - 1 && off > 0 && x1 < s->room_w)
				rc = add_world_quad(sc, x1, y0, s->room_w, y1, 0, -1,
						    a ? st->floor_b : st->floor_a);
		}
	if (!rc)
		rc = add_world_quad(sc, -0.1f, -0.1f, s->room_w + 0.1f, s->room_d + 0.1f, wall_h, 1,
				    ceiling);
	/* A light panel in the middle of the ceiling. */
	if (!rc)
		rc = add_world_quad(sc, s->room_w / 2 - 0.6f, s->room_d / 2 - 0.3f,
				    s->room_w / 2 + 0.6f, s->room_d / 2 + 0.3f, wall_h - 0.005f, 1,
				    panel);
	return rc;
}

/* A wall: its box, and a dark skirting board standing out 1 cm on both faces. */
static void shape_wall(struct build *b, const float wall[3])
{
	static const float skirting[3] = { 0.40f, 0.37f, 0.33f };
	float hx = b->hx, hy = b->hy, hz = b->hz;
	bool along_x = hx > hy;

	box(b, -hx, -hy, -hz, hx, hy, hz, wall);
	if (along_x)
		box(b, -hx, -hy - 0.01f, -hz, hx, hy + 0.01f, -hz + 0.09f, skirting);
	else
		box(b, -hx - 0.01f, -hy, -hz, hx + 0.01f, hy, -hz + 0.09f, skirting);
}

/* ======================= Scenes of recordings ======================= */

int render_scene_from_synth(const struct synth_recording *s, struct render_scene **out)
{
	struct render_scene *sc = NULL;
	float wall_h = 0;
	size_t i;
	int rc;

	rc = render_scene_new(&sc);
	if (rc)
		return rc;
	for (i = 0; i < s->nobjects && !rc; i++) {
		const struct synth_object *o = &s->objects[i];
		const struct shape_class *cl = find_class(o->category);
		const float *named = name_colour(o->name);
		float col[3];
		struct build b;
		size_t idx;

		rc = render_scene_add_object(sc, o->kind == SYNTH_WALL ? NULL : o->name, &idx);
		if (rc)
			break;
		if (named)
			memcpy(col, named, sizeof(col));
		else if (cl)
			memcpy(col, cl->rgb, sizeof(col));
		else
			hashed_colour(o->category, col);
		b.sc = sc;
		b.obj = idx;
		b.hx = o->half[0];
		b.hy = o->half[1];
		b.hz = o->half[2];
		b.col = col;
		b.name = o->name;
		b.rc = 0;
		if (o->kind == SYNTH_WALL) {
			shape_wall(&b, STYLES[s->params.scene < SYNTH_NSCENES ? s->params.scene : 0].wall);
			wall_h = maxf(wall_h, o->pose.t[2] + o->half[2]);
		} else if (cl) {
			cl->build(&b);
		} else {
			shape_box(&b);
		}
		rc = b.rc;
	}
	if (!rc)
		rc = add_room(sc, s, wall_h > 0 ? wall_h : 2.5f);
	if (rc) {
		render_scene_free(sc);
		return rc;
	}
	*out = sc;
	return 0;
}

void render_synth_poses(const struct synth_recording *s, int64_t t, struct pose *cam_pose,
			struct pose *obj_poses)
{
	size_t i;

	if (pose_sample_at(s->traj, s->ntraj, t, 0, cam_pose))
		*cam_pose = s->traj[t < s->traj[0].t_ns ? 0 : s->ntraj - 1].pose;
	for (i = 0; i < s->nobjects; i++)
		synth_object_pose_at(s, i, t, &obj_poses[i]);
}
