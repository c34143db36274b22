/* SPDX-License-Identifier: MIT */
/*
 * The rasteriser of the synthetic-recording renderer: scenes of triangles
 * per object, near-plane clipping, projection with pinhole intrinsics,
 * per-pixel depth test, flat wrapped-Lambert shading, and the name tags
 * in a built-in 5x7 font. The shapes per object class are in
 * render_shapes.c, the frame loop and the encoder in render_video.c.
 */
#include "render.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "banned.h"
#include "err.h"

/* The fixed light: from above, from +X and -Y (unit vector towards the light). */
static const float LIGHT_DIR[3] = { 0.35f, -0.55f, 0.7582875f };
#define AMBIENT 0.50f
#define DIFFUSE 0.50f
/* Colour of pixels no surface covers. */
static const uint8_t BACKGROUND[3] = { 40, 44, 52 };

struct tri {
	vec3 v[3];      /* vertices, object frame */
	vec3 n;         /* outward unit normal, object frame */
	float rgb[3];   /* colour, 0..1 */
	unsigned flags; /* enum render_tri_flags */
};

struct tri_list {
	struct tri *t;
	size_t n, cap;
};

struct object {
	char *label;          /* owned, or NULL */
	struct tri_list tris;
};

struct render_scene {
	struct object *obj;
	size_t nobj, cap;
	struct tri_list world; /* triangles of the world frame */
};

/* ======================= Small vector math ======================= */

/* Row-major 3x3 matrices: m[3 * r + c]. Const-correct, unlike cglm's. */
static void v3_copy(const float *a, float *o)
{
	o[0] = a[0];
	o[1] = a[1];
	o[2] = a[2];
}

static void v3_sub(const float *a, const float *b, float *o)
{
	o[0] = a[0] - b[0];
	o[1] = a[1] - b[1];
	o[2] = a[2] - b[2];
}

static float v3_dot(const float *a, const float *b)
{
	return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

static void m3_mulv(const float *m, const float *v, float *o)
{
	size_t r;

	for (r = 0; r < 3; r++)
		o[r] = m[3 * r] * v[0] + m[3 * r + 1] * v[1] + m[3 * r + 2] * v[2];
}

/* R(q) of a unit quaternion x, y, z, w. */
static void m3_from_quat(const float *q, float *m)
{
	float x = q[0], y = q[1], z = q[2], w = q[3];

	m[0] = 1 - 2 * (y * y + z * z);
	m[1] = 2 * (x * y - z * w);
	m[2] = 2 * (x * z + y * w);
	m[3] = 2 * (x * y + z * w);
	m[4] = 1 - 2 * (x * x + z * z);
	m[5] = 2 * (y * z - x * w);
	m[6] = 2 * (x * z - y * w);
	m[7] = 2 * (y * z + x * w);
	m[8] = 1 - 2 * (x * x + y * y);
}

/* ======================= Images ======================= */

int render_image_init(struct render_image *im, int width, int height)
{
	size_t n;

	memset(im, 0, sizeof(*im));
	if (width < 1 || height < 1 || width > RENDER_MAX_DIM || height > RENDER_MAX_DIM)
		return err_set(ENG_EINVAL, "render: image size %dx%d is not in 1..%d", width, height,
			       RENDER_MAX_DIM);
	n = (size_t)width * (size_t)height;
	im->rgb = malloc(n * 3);
	im->inv_depth = malloc(n * sizeof(*im->inv_depth));
	im->ids = malloc(n * sizeof(*im->ids));
	if (!im->rgb || !im->inv_depth || !im->ids) {
		render_image_release(im);
		return err_set(ENG_ENOMEM, "render: out of memory for a %dx%d image", width, height);
	}
	im->width = width;
	im->height = height;
	return 0;
}

void render_image_release(struct render_image *im)
{
	free(im->rgb);
	free(im->inv_depth);
	free(im->ids);
	memset(im, 0, sizeof(*im));
}

/* ======================= Scenes ======================= */

int render_scene_new(struct render_scene **out)
{
	struct render_scene *sc = calloc(1, sizeof(*sc));

	if (!sc)
		return err_set(ENG_ENOMEM, "render: out of memory");
	*out = sc;
	return 0;
}

void render_scene_free(struct render_scene *sc)
{
	size_t i;

	if (!sc)
		return;
	for (i = 0; i < sc->nobj; i++) {
		free(sc->obj[i].label);
		free(sc->obj[i].tris.t);
	}
	free(sc->obj);
	free(sc->world.t);
	free(sc);
}

int render_scene_add_object(struct render_scene *sc, const char *label, size_t *idx)
{
	struct object *o;

	if (sc->nobj >= RENDER_MAX_OBJECTS)
		return err_set(ENG_EINVAL, "render: more than %d objects", RENDER_MAX_OBJECTS);
	if (sc->nobj == sc->cap) {
		size_t cap = sc->cap ? 2 * sc->cap : 32;
		struct object *p = realloc(sc->obj, cap * sizeof(*p));

		if (!p)
			return err_set(ENG_ENOMEM, "render: out of memory");
		sc->obj = p;
		sc->cap = cap;
	}
	o = &sc->obj[sc->nobj];
	memset(o, 0, sizeof(*o));
	if (label) {
		o->label = strdup(label);
		if (!o->label)
			return err_set(ENG_ENOMEM, "render: out of memory");
	}
	*idx = sc->nobj++;
	return 0;
}

size_t render_scene_objects(const struct render_scene *sc)
{
	return sc->nobj;
}

int render_scene_add_tri(struct render_scene *sc, size_t obj, const vec3 a, const vec3 b,
			 const vec3 c, const vec3 inside, const float rgb[3], unsigned flags)
{
	struct tri_list *l;
	struct tri *t;
	vec3 e1, e2, n, m;
	float len;

	if (obj == RENDER_WORLD)
		l = &sc->world;
	else if (obj < sc->nobj)
		l = &sc->obj[obj].tris;
	else
		return err_set(ENG_EINVAL, "render: no object %zu", obj);
	v3_sub(b, a, e1);
	v3_sub(c, a, e2);
	n[0] = e1[1] * e2[2] - e1[2] * e2[1];
	n[1] = e1[2] * e2[0] - e1[0] * e2[2];
	n[2] = e1[0] * e2[1] - e1[1] * e2[0];
	len = sqrtf(v3_dot(n, n));
	if (!(len > 1e-12f))
		return ENG_EINVAL;
	n[0] /= len;
	n[1] /= len;
	n[2] /= len;
	/* Outward: away from the inside point. */
	m[0] = (a[0] + b[0] + c[0]) / 3 - inside[0];
	m[1] = (a[1] + b[1] + c[1]) / 3 - inside[1];
	m[2] = (a[2] + b[2] + c[2]) / 3 - inside[2];
	if (v3_dot(n, m) < 0) {
		n[0] = -n[0];
		n[1] = -n[1];
		n[2] = -n[2];
	}
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		struct tri *p = realloc(l->t, cap * sizeof(*p));

		if (!p)
			return err_set(ENG_ENOMEM, "render: out of memory");
		l->t = p;
		l->cap = cap;
	}
	t = &l->t[l->n++];
	v3_copy(a, t->v[0]);
	v3_copy(b, t->v[1]);
	v3_copy(c, t->v[2]);
	v3_copy(n, t->n);
	memcpy(t->rgb, rgb, sizeof(t->rgb));
	t->flags = flags;
	return 0;
}

/* A quad a b c d (in order around it) as two triangles. */
static int add_quad(struct render_scene *sc, size_t obj, const vec3 a, const vec3 b,
		    const vec3 c, const vec3 d, const vec3 inside, const float rgb[3])
{
	int rc = render_scene_add_tri(sc, obj, a, b, c, inside, rgb, 0);

	if (rc == ENG_ENOMEM)
		return rc;
	rc = render_scene_add_tri(sc, obj, a, c, d, inside, rgb, 0);
	return rc == ENG_ENOMEM ? rc : 0;
}

int render_scene_add_box(struct render_scene *sc, size_t obj, const vec3 c, const vec3 h,
			 const float rgb[3])
{
	/* Corner k has x = +h when bit 0 is set, y when bit 1, z when bit 2. */
	static const int faces[6][4] = {
		{ 0, 2, 6, 4 }, { 1, 3, 7, 5 }, { 0, 1, 5, 4 },
		{ 2, 3, 7, 6 }, { 0, 1, 3, 2 }, { 4, 5, 7, 6 },
	};
	vec3 p[8];
	int k, rc = 0;

	if (obj != RENDER_WORLD && obj >= sc->nobj)
		return err_set(ENG_EINVAL, "render: no object %zu", obj);
	for (k = 0; k < 8; k++) {
		p[k][0] = c[0] + ((k & 1) ? h[0] : -h[0]);
		p[k][1] = c[1] + ((k & 2) ? h[1] : -h[1]);
		p[k][2] = c[2] + ((k & 4) ? h[2] : -h[2]);
	}
	for (k = 0; k < 6 && !rc; k++)
		rc = add_quad(sc, obj, p[faces[k][0]], p[faces[k][1]], p[faces[k][2]],
			      p[faces[k][3]], c, rgb);
	return rc;
}

/* Point of an elliptic ring: centre c, along axis ax at offset z, angle th, radii ra rb. */
static void ring_point(const vec3 c, int ax, float z, float th, float ra, float rb, vec3 out)
{
	int a = (ax + 1) % 3, b = (ax + 2) % 3;

	out[ax] = c[ax] + z;
	out[a] = c[a] + ra * cosf(th);
	out[b] = c[b] + rb * sinf(th);
}

int render_scene_add_frustum(struct render_scene *sc, size_t obj, const vec3 c, int axis,
			     float hl, float r0a, float r0b, float r1a, float r1b, int nseg,
			     const float side[3], const float cap_lo[3], const float cap_hi[3])
{
	int k, rc = 0;

	if (obj != RENDER_WORLD && obj >= sc->nobj)
		return err_set(ENG_EINVAL, "render: no object %zu", obj);
	if (axis < 0 || axis > 2 || nseg < 3 || nseg > 64 || !(hl > 0))
		return err_set(ENG_EINVAL, "render: bad frustum");
	for (k = 0; k < nseg && !rc; k++) {
		float t0 = (float)(2 * M_PI * k / nseg), t1 = (float)(2 * M_PI * (k + 1) / nseg);
		vec3 a0, a1, b0, b1, lo, hi;

		ring_point(c, axis, -hl, t0, r0a, r0b, a0);
		ring_point(c, axis, -hl, t1, r0a, r0b, a1);
		ring_point(c, axis, hl, t0, r1a, r1b, b0);
		ring_point(c, axis, hl, t1, r1a, r1b, b1);
		rc = add_quad(sc, obj, a0, a1, b1, b0, c, side);
		v3_copy(c, lo);
		v3_copy(c, hi);
		lo[axis] -= hl;
		hi[axis] += hl;
		/* Caps: fans around their centres, outward along the axis. */
		if (!rc && cap_lo) {
			vec3 in;

			v3_copy(c, in);
			in[axis] += hl;
			rc = render_scene_add_tri(sc, obj, lo, a0, a1, in, cap_lo, 0);
			rc = rc == ENG_ENOMEM ? rc : 0;
		}
		if (!rc && cap_hi) {
			vec3 in;

			v3_copy(c, in);
			in[axis] -= hl;
			rc = render_scene_add_tri(sc, obj, hi, b0, b1, in, cap_hi, 0);
			rc = rc == ENG_ENOMEM ? rc : 0;
		}
	}
	return rc;
}

int render_scene_add_ellipsoid(struct render_scene *sc, size_t obj, const vec3 c, const vec3 r,
			       int nlat, const float rgb[3])
{
	int i, j, nlon = 2 * nlat, rc = 0;

	if (obj != RENDER_WORLD && obj >= sc->nobj)
		return err_set(ENG_EINVAL, "render: no object %zu", obj);
	if (nlat < 2 || nlat > 32)
		return err_set(ENG_EINVAL, "render: bad ellipsoid");
	for (i = 0; i < nlat && !rc; i++) {
		float p0 = (float)(M_PI * i / nlat - M_PI / 2);
		float p1 = (float)(M_PI * (i + 1) / nlat - M_PI / 2);

		for (j = 0; j < nlon && !rc; j++) {
			float l0 = (float)(2 * M_PI * j / nlon), l1 = (float)(2 * M_PI * (j + 1) / nlon);
			vec3 q[4];
			const float la[4] = { p0, p0, p1, p1 }, lo[4] = { l0, l1, l1, l0 };
			int k;

			for (k = 0; k < 4; k++) {
				q[k][0] = c[0] + r[0] * cosf(la[k]) * cosf(lo[k]);
				q[k][1] = c[1] + r[1] * cosf(la[k]) * sinf(lo[k]);
				q[k][2] = c[2] + r[2] * sinf(la[k]);
			}
			/* Poles collapse one side of the quad: add_quad skips the empty triangle. */
			rc = add_quad(sc, obj, q[0], q[1], q[2], q[3], c, rgb);
		}
	}
	return rc;
}

/* ======================= Rasterising ======================= */

/* A clipped, projected vertex. */
struct svert {
	int64_t x, y; /* pixel coordinates in 1/SUBPIXEL steps */
	float iz;     /* 1 / z */
};

/*
 * Vertices are snapped to 1/256 pixel so that the edge functions are
 * exact integers: two triangles sharing an edge then split its pixels
 * between them without a gap or a double hit (the top-left rule). A
 * vertex further than MAX_COORD pixels from the image is not drawn (that
 * needs a point 2^21 / fx times further to the side than in front).
 */
#define SUBPIXEL 256
#define MAX_COORD 2097152.0

/* The transform of one object into the camera frame. */
struct xform {
	float a[9];     /* R_camera_object, row-major */
	float t[3];     /* object origin in the camera frame */
	float rw[9];    /* R_world_object (for lighting) */
};

static void xform_make(const struct pose *cam, const struct pose *obj, struct xform *x)
{
	static const float zero[3] = { 0, 0, 0 }, unit[4] = { 0, 0, 0, 1 };
	float rwc[9], rcw[9], d[3];
	size_t r, c;

	m3_from_quat(cam->q, rwc);
	for (r = 0; r < 3; r++)
		for (c = 0; c < 3; c++)
			rcw[3 * r + c] = rwc[3 * c + r];
	m3_from_quat(obj ? obj->q : unit, x->rw);
	v3_sub(obj ? obj->t : zero, cam->t, d);
	for (r = 0; r < 3; r++)
		for (c = 0; c < 3; c++)
			x->a[3 * r + c] = rcw[3 * r] * x->rw[c] + rcw[3 * r + 1] * x->rw[3 + c] +
					  rcw[3 * r + 2] * x->rw[6 + c];
	m3_mulv(rcw, d, x->t);
}

/* Whether (a -> b) is a top or left edge of a triangle of positive area (y down). */
static bool top_left(const struct svert *a, const struct svert *b)
{
	int64_t dx = b->x - a->x, dy = b->y - a->y;

	return (dy == 0 && dx < 0) || dy > 0;
}

/* Edge function: positive on the inside of a triangle of positive area; exact. */
static int64_t edge(const struct svert *a, const struct svert *b, int64_t px, int64_t py)
{
	return (b->x - a->x) * (py - a->y) - (b->y - a->y) * (px - a->x);
}

static int64_t ceil_px(int64_t v)
{
	return v >= 0 ? (v + SUBPIXEL - 1) / SUBPIXEL : -((-v) / SUBPIXEL);
}

static int64_t floor_px(int64_t v)
{
	return v >= 0 ? v / SUBPIXEL : -((-v + SUBPIXEL - 1) / SUBPIXEL);
}

/*
 * Narrows [*lo, *hi] to the steps k where w + s k >= 0. Returns false when
 * none is left. Exact (integer division rounded the safe way).
 */
static bool span(int64_t w, int64_t s, int64_t *lo, int64_t *hi)
{
	if (s > 0) {
		/* k >= ceil(-w / s) */
		int64_t k = w >= 0 ? -(w / s) : (-w + s - 1) / s;

		if (k > *lo)
			*lo = k;
	} else if (s < 0) {
		/* k <= floor(w / -s) */
		int64_t k = w >= 0 ? w / -s : -((-w + -s - 1) / -s);

		if (k < *hi)
			*hi = k;
	} else if (w < 0) {
		return false;
	}
	return *lo <= *hi;
}

static void raster_tri(struct render_image *im, const struct svert *v0, const struct svert *v1,
		       const struct svert *v2, const uint8_t rgb[3], uint16_t id)
{
	const struct svert *a = v0, *b = v1, *c = v2;
	int64_t area = edge(a, b, c->x, c->y), minx, maxx, miny, maxy, x0, x1, y0, y1, x, y;
	int64_t s0, s1, s2;
	double inv_area;
	bool tl0, tl1, tl2;

	if (area < 0) {
		b = v2;
		c = v1;
		area = -area;
	}
	if (area == 0)
		return;
	inv_area = 1.0 / (double)area;
	minx = a->x < b->x ? a->x : b->x;
	minx = c->x < minx ? c->x : minx;
	maxx = a->x > b->x ? a->x : b->x;
	maxx = c->x > maxx ? c->x : maxx;
	miny = a->y < b->y ? a->y : b->y;
	miny = c->y < miny ? c->y : miny;
	maxy = a->y > b->y ? a->y : b->y;
	maxy = c->y > maxy ? c->y : maxy;
	x0 = ceil_px(minx);
	y0 = ceil_px(miny);
	x1 = floor_px(maxx);
	y1 = floor_px(maxy);
	x0 = x0 < 0 ? 0 : x0;
	y0 = y0 < 0 ? 0 : y0;
	x1 = x1 > im->width - 1 ? im->width - 1 : x1;
	y1 = y1 > im->height - 1 ? im->height - 1 : y1;
	if (x0 > x1 || y0 > y1)
		return;
	tl0 = top_left(b, c);
	tl1 = top_left(c, a);
	tl2 = top_left(a, b);
	/* Steps of the edge values per pixel along x. */
	s0 = -(c->y - b->y) * SUBPIXEL;
	s1 = -(a->y - c->y) * SUBPIXEL;
	s2 = -(b->y - a->y) * SUBPIXEL;
	for (y = y0; y <= y1; y++) {
		int64_t py = y * SUBPIXEL, px = x0 * SUBPIXEL;
		int64_t w0 = edge(b, c, px, py), w1 = edge(c, a, px, py), w2 = edge(a, b, px, py);
		int64_t lo = 0, hi = x1 - x0;
		size_t row = (size_t)y * (size_t)im->width;

		/* The span of this row where no edge value is negative, then the exact tests. */
		if (!span(w0, s0, &lo, &hi) || !span(w1, s1, &lo, &hi) || !span(w2, s2, &lo, &hi))
			continue;
		w0 += s0 * lo;
		w1 += s1 * lo;
		w2 += s2 * lo;
		for (x = x0 + lo; x <= x0 + hi; x++, w0 += s0, w1 += s1, w2 += s2) {
			float iz;
			size_t p;

			if ((w0 | w1 | w2) < 0)
				continue;
			if ((w0 == 0 && !tl0) || (w1 == 0 && !tl1) || (w2 == 0 && !tl2))
				continue;
			iz = (float)(((double)w0 * (double)a->iz + (double)w1 * (double)b->iz +
				      (double)w2 * (double)c->iz) *
				     inv_area);
			p = row + (size_t)x;
			if (!(iz > im->inv_depth[p]))
				continue;
			im->inv_depth[p] = iz;
			im->ids[p] = id;
			im->rgb[3 * p] = rgb[0];
			im->rgb[3 * p + 1] = rgb[1];
			im->rgb[3 * p + 2] = rgb[2];
		}
	}
}

/* Clips the camera-frame polygon in[0..n) against z >= RENDER_ZNEAR into out; returns its size. */
static int clip_near(vec3 *in, int n, vec3 *out)
{
	int i, m = 0;

	for (i = 0; i < n; i++) {
		const float *p = in[i], *q = in[(i + 1) % n];
		bool pin = p[2] >= RENDER_ZNEAR, qin = q[2] >= RENDER_ZNEAR;

		if (pin)
			v3_copy(p, out[m++]);
		if (pin != qin) {
			float s = (RENDER_ZNEAR - p[2]) / (q[2] - p[2]);

			out[m][0] = p[0] + s * (q[0] - p[0]);
			out[m][1] = p[1] + s * (q[1] - p[1]);
			out[m][2] = RENDER_ZNEAR;
			m++;
		}
	}
	return m;
}

static uint8_t to_byte(float v)
{
	float x = v * 255.0f + 0.5f;

	return x <= 0 ? 0 : x >= 255 ? 255 : (uint8_t)x;
}

static void draw_list(const struct tri_list *l, const struct xform *x,
		      const struct render_camera *cam, uint16_t id, struct render_image *im)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		const struct tri *t = &l->t[i];
		vec3 cv[3], poly[4], nw, nc;
		struct svert sv[4];
		uint8_t rgb[3];
		float d, shade;
		int k, m;

		for (k = 0; k < 3; k++) {
			m3_mulv(x->a, t->v[k], cv[k]);
			cv[k][0] += x->t[0];
			cv[k][1] += x->t[1];
			cv[k][2] += x->t[2];
		}
		if (cv[0][2] < RENDER_ZNEAR && cv[1][2] < RENDER_ZNEAR && cv[2][2] < RENDER_ZNEAR)
			continue;
		m3_mulv(x->a, t->n, nc);
		if (!(t->flags & RENDER_TWO_SIDED) && v3_dot(nc, cv[0]) >= 0)
			continue;
		m = clip_near(cv, 3, poly);
		if (m < 3)
			continue;
		for (k = 0; k < m; k++) {
			double u = (double)cam->fx * (double)poly[k][0] / (double)poly[k][2] +
				   (double)cam->cx;
			double v = (double)cam->fy * (double)poly[k][1] / (double)poly[k][2] +
				   (double)cam->cy;

			if (!(fabs(u) < MAX_COORD && fabs(v) < MAX_COORD))
				break;
			sv[k].iz = 1.0f / poly[k][2];
			sv[k].x = (int64_t)llround(u * SUBPIXEL);
			sv[k].y = (int64_t)llround(v * SUBPIXEL);
		}
		if (k < m)
			continue;
		m3_mulv(x->rw, t->n, nw);
		d = v3_dot(nw, LIGHT_DIR);
		if ((t->flags & RENDER_TWO_SIDED) && v3_dot(nc, cv[0]) > 0)
			d = -d;
		shade = 0.5f + 0.5f * d;
		shade = AMBIENT + DIFFUSE * shade * shade;
		for (k = 0; k < 3; k++)
			rgb[k] = to_byte(t->rgb[k] * shade);
		for (k = 1; k + 1 < m; k++)
			raster_tri(im, &sv[0], &sv[k], &sv[k + 1], rgb, id);
	}
}

void render_draw(const struct render_scene *sc, const struct render_camera *cam,
		 const struct pose *cam_pose, const struct pose *obj_poses,
		 struct render_image *im)
{
	size_t i, n;
	struct xform x;

	if (im->width != cam->width || im->height != cam->height)
		return;
	n = (size_t)im->width * (size_t)im->height;
	for (i = 0; i < n; i++) {
		im->rgb[3 * i] = BACKGROUND[0];
		im->rgb[3 * i + 1] = BACKGROUND[1];
		im->rgb[3 * i + 2] = BACKGROUND[2];
		im->inv_depth[i] = 0;
		im->ids[i] = RENDER_NO_OBJECT;
	}
	xform_make(cam_pose, NULL, &x);
	draw_list(&sc->world, &x, cam, RENDER_NO_OBJECT, im);
	for (i = 0; i < sc->nobj; i++) {
		xform_make(cam_pose, &obj_poses[i], &x);
		draw_list(&sc->obj[i].tris, &x, cam, (uint16_t)i, im);
	}
}

/* ======================= Smoothing ======================= */

/* [1 2 1] / 4 along the n pixels of a row (3 bytes each), the ends repeated. */
static void smooth_row(uint8_t *p, size_t n)
{
	unsigned prev[3] = { p[0], p[1], p[2] };
	size_t i;
	int k;

	for (i = 0; i < n; i++) {
		size_t nx = i + 1 < n ? i + 1 : i;

		for (k = 0; k < 3; k++) {
			unsigned cur = p[3 * i + (size_t)k];

			p[3 * i + (size_t)k] =
				(uint8_t)((prev[k] + 2 * cur + p[3 * nx + (size_t)k] + 2) >> 2);
			prev[k] = cur;
		}
	}
}

void render_smooth(struct render_image *im)
{
	uint8_t prev[3 * RENDER_MAX_DIM], cur[3 * RENDER_MAX_DIM];
	size_t w = (size_t)im->width, h = (size_t)im->height, rb = 3 * w, x, y;

	for (y = 0; y < h; y++)
		smooth_row(im->rgb + rb * y, w);
	/* Down the columns, a row at a time: prev holds the row above as it was. */
	memcpy(prev, im->rgb, rb);
	for (y = 0; y < h; y++) {
		uint8_t *row = im->rgb + rb * y;
		const uint8_t *next = y + 1 < h ? row + rb : row;

		memcpy(cur, row, rb);
		for (x = 0; x < rb; x++)
			row[x] = (uint8_t)((prev[x] + 2u * cur[x] + next[x] + 2) >> 2);
		memcpy(prev, cur, rb);
	}
}

/* ======================= Text ======================= */

/*
 * 5x7 glyphs for ' ' to 'Z' (lower case is drawn in capitals): seven rows
 * of five bits each, the high bit on the left.
 */
static const uint8_t FONT[59][7] = {
	{ 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00 }, /* space */
	{ 0x04, 0x04, 0x04, 0x04, 0x04, 0x00, 0x04 }, /* ! */
	{ 0x0a, 0x0a, 0x00, 0x00, 0x00, 0x00, 0x00 }, /* " */
	{ 0x0a, 0x1f, 0x0a, 0x0a, 0x0a, 0x1f, 0x0a }, /* # */
	{ 0x04, 0x0f, 0x14, 0x0e, 0x05, 0x1e, 0x04 }, /* $ */
	{ 0x18, 0x19, 0x02, 0x04, 0x08, 0x13, 0x03 }, /* % */
	{ 0x0c, 0x12, 0x14, 0x08, 0x15, 0x12, 0x0d }, /* & */
	{ 0x04, 0x04, 0x08, 0x00, 0x00, 0x00, 0x00 }, /* ' */
	{ 0x02, 0x04, 0x08, 0x08, 0x08, 0x04, 0x02 }, /* ( */
	{ 0x08, 0x04, 0x02, 0x02, 0x02, 0x04, 0x08 }, /* ) */
	{ 0x00, 0x04, 0x15, 0x0e, 0x15, 0x04, 0x00 }, /* * */
	{ 0x00, 0x04, 0x04, 0x1f, 0x04, 0x04, 0x00 }, /* + */
	{ 0x00, 0x00, 0x00, 0x00, 0x0c, 0x04, 0x08 }, /* , */
	{ 0x00, 0x00, 0x00, 0x1f, 0x00, 0x00, 0x00 }, /* - */
	{ 0x00, 0x00, 0x00, 0x00, 0x00, 0x0c, 0x0c }, /* . */
	{ 0x00, 0x01, 0x02, 0x04, 0x08, 0x10, 0x00 }, /* / */
	{ 0x0e, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0e }, /* 0 */
	{ 0x04, 0x0c, 0x04, 0x04, 0x04, 0x04, 0x0e }, /* 1 */
	{ 0x0e, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1f }, /* 2 */
	{ 0x1f, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0e }, /* 3 */
	{ 0x02, 0x06, 0x0a, 0x12, 0x1f, 0x02, 0x02 }, /* 4 */
	{ 0x1f, 0x10, 0x1e, 0x01, 0x01, 0x11, 0x0e }, /* 5 */
	{ 0x06, 0x08, 0x10, 0x1e, 0x11, 0x11, 0x0e }, /* 6 */
	{ 0x1f, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08 }, /* 7 */
	{ 0x0e, 0x11, 0x11, 0x0e, 0x11, 0x11, 0x0e }, /* 8 */
	{ 0x0e, 0x11, 0x11, 0x0f, 0x01, 0x02, 0x0c }, /* 9 */
	{ 0x00, 0x0c, 0x0c, 0x00, 0x0c, 0x0c, 0x00 }, /* : */
	{ 0x00, 0x0c, 0x0c, 0x00, 0x0c, 0x04, 0x08 }, /* ; */
	{ 0x02, 0x04, 0x08, 0x10, 0x08, 0x04, 0x02 }, /* < */
	{ 0x00, 0x00, 0x1f, 0x00, 0x1f, 0x00, 0x00 }, /* = */
	{ 0x08, 0x04, 0x02, 0x01, 0x02, 0x04, 0x08 }, /* > */
	{ 0x0e, 0x11, 0x01, 0x02, 0x04, 0x00, 0x04 }, /* ? */
	{ 0x0e, 0x11, 0x01, 0x0d, 0x15, 0x15, 0x0e }, /* @ */
	{ 0x0e, 0x11, 0x11, 0x1f, 0x11, 0x11, 0x11 }, /* A */
	{ 0x1e, 0x11, 0x11, 0x1e, 0x11, 0x11, 0x1e }, /* B */
	{ 0x0e, 0x11, 0x10, 0x10, 0x10, 0x11, 0x0e }, /* C */
	{ 0x1c, 0x12, 0x11, 0x11, 0x11, 0x12, 0x1c }, /* D */
	{ 0x1f, 0x10, 0x10, 0x1e, 0x10, 0x10, 0x1f }, /* E */
	{ 0x1f, 0x10, 0x10, 0x1e, 0x10, 0x10, 0x10 }, /* F */
	{ 0x0e, 0x11, 0x10, 0x17, 0x11, 0x11, 0x0f }, /* G */
	{ 0x11, 0x11, 0x11, 0x1f, 0x11, 0x11, 0x11 }, /* H */
	{ 0x0e, 0x04, 0x04, 0x04, 0x04, 0x04, 0x0e }, /* I */
	{ 0x07, 0x02, 0x02, 0x02, 0x02, 0x12, 0x0c }, /* J */
	{ 0x11, 0x12, 0x14, 0x18, 0x14, 0x12, 0x11 }, /* K */
	{ 0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x1f }, /* L */
	{ 0x11, 0x1b, 0x15, 0x15, 0x11, 0x11, 0x11 }, /* M */
	{ 0x11, 0x11, 0x19, 0x15, 0x13, 0x11, 0x11 }, /* N */
	{ 0x0e, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0e }, /* O */
	{ 0x1e, 0x11, 0x11, 0x1e, 0x10, 0x10, 0x10 }, /* P */
	{ 0x0e, 0x11, 0x11, 0x11, 0x15, 0x12, 0x0d }, /* Q */
	{ 0x1e, 0x11, 0x11, 0x1e, 0x14, 0x12, 0x11 }, /* R */
	{ 0x0f, 0x10, 0x10, 0x0e, 0x01, 0x01, 0x1e }, /* S */
	{ 0x1f, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04 }, /* T */
	{ 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0e }, /* U */
	{ 0x11, 0x11, 0x11, 0x11, 0x11, 0x0a, 0x04 }, /* V */
	{ 0x11, 0x11, 0x11, 0x15, 0x15, 0x15, 0x0a }, /* W */
	{ 0x11, 0x11, 0x0a, 0x04, 0x0a, 0x11, 0x11 }, /* X */
	{ 0x11, 0x11, 0x11, 0x0a, 0x04, 0x04, 0x04 }, /* Y */
	{ 0x1f, 0x01, 0x02, 0x04, 0x08, 0x10, 0x1f }, /* Z */
};
static const uint8_t NO_GLYPH[7] = { 0x1f, 0x11, 0x11, 0x11, 0x11, 0x11, 0x1f };

#define GLYPH_W 5
#define GLYPH_H 7
#define GLYPH_ADVANCE 6

static const uint8_t *glyph(unsigned char ch)
{
	if (ch >= 'a' && ch <= 'z')
		ch = (unsigned char)(ch - 'a' + 'A');
	if (ch >= ' ' && ch <= 'Z')
		return FONT[ch - ' '];
	return NO_GLYPH;
}

static void fill_rect(struct render_image *im, int x0, int y0, int x1, int y1,
		      const uint8_t rgb[3], int alpha256)
{
	int x, y, k;

	if (x0 < 0)
		x0 = 0;
	if (y0 < 0)
		y0 = 0;
	if (x1 > im->width)
		x1 = im->width;
	if (y1 > im->height)
		y1 = im->height;
	for (y = y0; y < y1; y++)
		for (x = x0; x < x1; x++) {
			uint8_t *p = &im->rgb[3 * ((size_t)y * (size_t)im->width + (size_t)x)];

			for (k = 0; k < 3; k++)
				p[k] = (uint8_t)((p[k] * (256 - alpha256) + rgb[k] * alpha256) >> 8);
		}
}

int render_text(struct render_image *im, int x, int y, int scale, const char *text,
		const uint8_t rgb[3])
{
	int n = 0, r, c;

	if (scale < 1)
		scale = 1;
	for (; *text; text++, n++) {
		const uint8_t *g = glyph((unsigned char)*text);
		int gx = x + n * GLYPH_ADVANCE * scale;

		for (r = 0; r < GLYPH_H; r++)
			for (c = 0; c < GLYPH_W; c++)
				if (g[r] & (0x10 >> c))
					fill_rect(im, gx + c * scale, y + r * scale,
						  gx + (c + 1) * scale, y + (r + 1) * scale, rgb, 256);
	}
	return n ? (n * GLYPH_ADVANCE - 1) * scale : 0;
}

/* ======================= Labels ======================= */

/* What one object shows in a frame. */
struct seen {
	uint32_t n;      /* pixels */
	int64_t sum_x;   /* sum of their x */
	int64_t sum_y;   /* sum of their y */
	float near;      /* largest 1/z */
};

struct rect {
	int x0, y0, x1, y1;
};

static bool overlaps(const struct rect *a, const struct rect *b)
{
	return a->x0 < b->x1 && b->x0 < a->x1 && a->y0 < b->y1 && b->y0 < a->y1;
}

#define MAX_LABELS 64

void render_draw_labels(const struct render_scene *sc, struct render_image *im)
{
	static const uint8_t ink[3] = { 255, 255, 240 }, box[3] = { 10, 10, 16 };
	struct seen seen[RENDER_MAX_OBJECTS];
	struct rect placed[MAX_LABELS];
	size_t order[RENDER_MAX_OBJECTS];
	size_t i, j, n = (size_t)im->width * (size_t)im->height, nord = 0, nplaced = 0;
	int scale = im->width >= 480 ? 2 : 1, pad = scale + 1;

	memset(seen, 0, sc->nobj * sizeof(seen[0]));
	for (i = 0; i < n; i++) {
		uint16_t id = im->ids[i];
		struct seen *s;
		int y = (int)(i / (size_t)im->width);

		if (id == RENDER_NO_OBJECT || id >= sc->nobj)
			continue;
		s = &seen[id];
		s->n++;
		s->sum_x += (int64_t)(i % (size_t)im->width);
		s->sum_y += y;
		if (im->inv_depth[i] > s->near)
			s->near = im->inv_depth[i];
	}
	for (i = 0; i < sc->nobj; i++)
		if (sc->obj[i].label && seen[i].n >= RENDER_LABEL_MIN_PX)
			order[nord++] = i;
	/* Nearest first (insertion sort: a handful of objects; ties keep the index order). */
	for (i = 1; i < nord; i++) {
		size_t k = order[i];

		for (j = i; j > 0 && seen[order[j - 1]].near < seen[k].near; j--)
			order[j] = order[j - 1];
		order[j] = k;
	}
	for (i = 0; i < nord && nplaced < MAX_LABELS; i++) {
		const struct seen *s = &seen[order[i]];
		const char *label = sc->obj[order[i]].label;
		int w = (int)strlen(label) * GLYPH_ADVANCE * scale - scale + 2 * pad;
		int h = GLYPH_H * scale + 2 * pad, cx = (int)(s->sum_x / (int64_t)s->n);
		int cy = (int)(s->sum_y / (int64_t)s->n), tries;
		/* On the object's visible middle; when taken, above, below, further up, further down. */
		static const int shift[5] = { 0, -1, 1, -2, 2 };
		struct rect r;
		bool ok = false;

		if ((int)strlen(label) > 60)
			continue;
		r.x0 = cx - w / 2;
		if (r.x0 + w > im->width)
			r.x0 = im->width - w;
		if (r.x0 < 0)
			r.x0 = 0;
		r.x1 = r.x0 + w;
		for (tries = 0; tries < 5 && !ok; tries++) {
			r.y0 = cy - h / 2 + shift[tries] * (h + 1);
			r.y1 = r.y0 + h;
			ok = r.y0 >= 0 && r.y1 <= im->height;
			for (j = 0; j < nplaced && ok; j++)
				ok = !overlaps(&r, &placed[j]);
		}
		if (!ok)
			continue;
		placed[nplaced++] = r;
		fill_rect(im, r.x0, r.y0, r.x1, r.y1, box, 180);
		render_text(im, r.x0 + pad, r.y0 + pad, scale, label, ink);
	}
}
