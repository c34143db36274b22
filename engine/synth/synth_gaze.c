/* SPDX-License-Identifier: MIT */
/*
 * The gaze of a synthetic recording at 60 Hz: fixations of 200-1200 ms on
 * visible objects (the attended one first), aimed at the box centre with a
 * small offset and a slow drift, joined by saccades of 2-3 intervals above
 * 100 deg/s; free gaze along the head when nothing fits. Every sample of a
 * fixation meets its object first, lies in the image and moves less than
 * 25 deg/s, checked while it is planned.
 */
#include "synth.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "banned.h"
#include "err.h"

#define DEG POSE_DEG2RAD
#define GZ_DT (1.0 / SYNTH_GAZE_HZ)
/* The eye stays within this angle of the camera axis (deg). */
#define EYE_MAX_DEG 38.0
/* Fixation drift limit (deg/s), below the 30 deg/s of the I-VT detector. */
#define FIX_MAX_DPS 25.0
/* Saccade speed floor (deg/s) kept with a margin above the 100 deg/s asked. */
#define SACC_MIN_DPS 115.0
/* Shortest fixation, samples (200 ms). */
#define FIX_MIN_SAMPLES 13
/* Objects farther than this are not fixated (m). */
#define GAZE_RANGE 6.0
/* Kept margin from the image border (pixels). */
#define IMG_MARGIN 16.0

struct gz {
	struct synth_recording *s;
	struct synth__rng *rng;
	struct synth__attn *attn; /* sorted by t0 */
	size_t nattn;
	struct pose *cam; /* camera pose per gaze sample */
	size_t n;
	size_t fix_cap;
	long recent[3];            /* last fixated objects, newest first */
	double (*dirs)[3];         /* the fixation being planned: directions, */
	float *depths;             /* depths, */
	size_t maxfix;             /* and their capacity (1.2 s of samples) */
	double gprev[3];           /* the last gaze direction written */
	bool have_prev;            /* gprev was written (not its initial value) */
	long prev_obj;             /* object of the last fixation, -1 after free gaze */
	double eye_yaw, eye_pitch; /* eye-in-head angles of free gaze, rad */
};

static int64_t gaze_ns(size_t k)
{
	return (int64_t)k * 1000000000LL / SYNTH_GAZE_HZ;
}

static double vangle(const double a[3], const double b[3])
{
	double c = a[0] * b[0] + a[1] * b[1] + a[2] * b[2];

	return acos(c > 1 ? 1 : c < -1 ? -1 : c);
}

static void vnorm(double v[3])
{
	double l = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);

	v[0] /= l;
	v[1] /= l;
	v[2] /= l;
}

/* Spherical interpolation between unit vectors a and b. */
static void vslerp(const double a[3], const double b[3], double u, double out[3])
{
	double w = vangle(a, b), s = sin(w);
	int k;

	if (s < 1e-9) {
		memcpy(out, b, 3 * sizeof(double));
		return;
	}
	for (k = 0; k < 3; k++)
		out[k] = (sin((1 - u) * w) * a[k] + sin(u * w) * b[k]) / s;
	vnorm(out);
}

static int cmp_attn(const void *a, const void *b)
{
	const struct synth__attn *x = a, *y = b;

	if (x->t0 != y->t0)
		return x->t0 < y->t0 ? -1 : 1;
	if (x->t1 != y->t1)
		return x->t1 < y->t1 ? -1 : 1;
	return (x->object > y->object) - (x->object < y->object);
}

/* The object attended at t (the latest span that holds t), or -1. */
static long attended(const struct gz *g, int64_t t)
{
	long best = -1;
	size_t i;

	for (i = 0; i < g->nattn && g->attn[i].t0 <= t; i++)
		if (g->attn[i].t1 >= t)
			best = g->attn[i].object;
	return best;
}

/* The camera forward axis at sample k. */
static void cam_forward(const struct gz *g, size_t k, double f[3])
{
	static const vec3 z = { 0, 0, 1 };
	vec3 w;

	pose_rotate(&g->cam[k], z, w);
	f[0] = (double)w[0];
	f[1] = (double)w[1];
	f[2] = (double)w[2];
}

/*
 * Can sample k look at world point a on object obj? Stores the unit
 * direction and the entry distance into obj's box. True when a lies within
 * range, in the image, within EYE_MAX_DEG of the camera axis, and the ray
 * meets obj first.
 */
static bool aim_ok(const struct gz *g, size_t k, long obj, const double a[3], double d[3],
		   float *depth)
{
	const struct pose *c = &g->cam[k];
	double dist, fwd[3];
	struct ray r;
	struct pose inv;
	vec3 dw, dc;
	float th;
	int j;

	for (j = 0; j < 3; j++)
		d[j] = a[j] - (double)c->t[j];
	dist = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
	if (dist > GAZE_RANGE || dist < 0.25)
		return false;
	vnorm(d);
	cam_forward(g, k, fwd);
	if (vangle(fwd, d) > EYE_MAX_DEG * DEG)
		return false;
	for (j = 0; j < 3; j++)
		dw[j] = (float)d[j];
	pose_inv(c, &inv);
	pose_rotate(&inv, dw, dc);
	if (dc[2] <= 0)
		return false;
	{
		const struct rec_camera *cm = &g->s->camera;
		double u = (double)cm->fx * (double)(dc[0] / dc[2]) + (double)cm->cx;
		double v = (double)cm->fy * (double)(dc[1] / dc[2]) + (double)cm->cy;

		if (u < IMG_MARGIN || u > cm->width - IMG_MARGIN || v < IMG_MARGIN ||
		    v > cm->height - IMG_MARGIN)
			return false;
	}
	memcpy(r.o, c->t, sizeof(r.o));
	glm_vec3_copy(dw, r.d);
	if (synth__first_hit(g->s, &r, gaze_ns(k), (float)(dist + 0.5), &th) != obj)
		return false;
	*depth = th;
	return true;
}

/* Where a fixation aims: box centre + a fixed offset + a slow drift (object frame). */
struct aim {
	double off[3];  /* fixed offset, m */
	double amp[3];  /* drift amplitude, m */
	double freq[3]; /* drift frequency, Hz */
	double phase[3];
};

static void aim_point(const struct gz *g, long obj, const struct aim *am, size_t k, double a[3])
{
	double t = (double)gaze_ns(k) * 1e-9;
	struct pose p;
	vec3 l, w;
	int j;

	synth_object_pose_at(g->s, (size_t)obj, gaze_ns(k), &p);
	for (j = 0; j < 3; j++)
		l[j] = (float)(am->off[j] +
			       am->amp[j] * sin(2 * M_PI * am->freq[j] * t + am->phase[j]));
	pose_apply(&p, l, w);
	for (j = 0; j < 3; j++)
		a[j] = (double)w[j];
}

static void new_aim(struct gz *g, long obj, struct aim *am)
{
	const struct synth_object *o = &g->s->objects[obj];
	int j;

	for (j = 0; j < 3; j++) {
		double h = (double)o->half[j];

		am->off[j] = synth__rng_range(g->rng, -0.3, 0.3) * fmin(h, 0.15);
		am->amp[j] = fmin(0.2 * h, 0.015);
		am->freq[j] = synth__rng_range(g->rng, 0.2, 0.6);
		am->phase[j] = synth__rng_range(g->rng, 0, 2 * M_PI);
	}
}

static void put(struct gz *g, size_t k, const double d[3], float depth, long fix)
{
	struct synth_gaze *s = &g->s->gaze[k];

	s->t_ns = gaze_ns(k);
	glm_vec3_copy(g->cam[k].t, s->o);
	s->d[0] = (float)d[0];
	s->d[1] = (float)d[1];
	s->d[2] = (float)d[2];
	glm_vec3_normalize(s->d);
	s->depth_m = depth;
	s->fixation = fix;
}

/* Depth of the first box a ray meets (0 = none). */
static float free_depth(const struct gz *g, size_t k, const double d[3])
{
	struct ray r;
	float th;

	glm_vec3_copy(g->cam[k].t, r.o);
	r.d[0] = (float)d[0];
	r.d[1] = (float)d[1];
	r.d[2] = (float)d[2];
	glm_vec3_normalize(r.d);
	if (synth__first_hit(g->s, &r, gaze_ns(k), 20.0f, &th) < 0)
		return 0;
	return th;
}

/*
 * Plans a fixation on obj reached by a saccade of ks intervals from gprev
 * after sample k - 1: checks each sample and stops at the first one that
 * fails (or at want samples). Returns the usable sample count; fills d and
 * depth for them (caller arrays of want entries).
 */
static size_t plan_fix(struct gz *g, size_t k, long obj, const struct aim *am,
		       const double gprev[3], bool have_prev, size_t want, double (*d)[3],
		       float *depth, int *ks_out)
{
	size_t f0, j, n = 0;
	double a[3], amp;
	int ks;

	/* Saccade length from its amplitude (about 21 ms + 2.2 ms/deg, 2 or 3 intervals). */
	aim_point(g, obj, am, k + 1, a);
	if (!aim_ok(g, k + 1, obj, a, d[0], &depth[0]))
		return 0;
	amp = have_prev ? vangle(gprev, d[0]) / DEG : 90;
	ks = amp < 15 ? 2 : 3;
	f0 = k + (size_t)ks - 1;
	for (j = 0; j < want && f0 + j < g->n; j++) {
		aim_point(g, obj, am, f0 + j, a);
		if (!aim_ok(g, f0 + j, obj, a, d[j], &depth[j]))
			break;
		if (j > 0 && vangle(d[j], d[j - 1]) > FIX_MAX_DPS * DEG * GZ_DT)
			break;
		n++;
	}
	if (n && have_prev && vangle(gprev, d[0]) / DEG < SACC_MIN_DPS * ks * GZ_DT)
		return 0;
	*ks_out = ks;
	return n;
}

/* Candidate targets at sample k with their weights; returns their number. */
static size_t candidates(struct gz *g, size_t k, const double gprev[3], bool have_prev,
			 long prev_obj, long att, long *cand, double *w, size_t cap)
{
	size_t i, n = 0;

	for (i = 4; i < g->s->nobjects && n < cap; i++) {
		const struct synth_object *o = &g->s->objects[i];
		double c[3], d[3], wt;
		struct obb b;
		float depth;
		int j;

		if ((long)i == prev_obj)
			continue;
		synth_object_box_at(g->s, i, gaze_ns(k), &b);
		for (j = 0; j < 3; j++)
			c[j] = (double)b.c[j];
		if (!aim_ok(g, k, (long)i, c, d, &depth))
			continue;
		if (have_prev && vangle(gprev, d) < 4.5 * DEG)
			continue;
		wt = o->kind == SYNTH_ITEM ? 3.0 : 1.0;
		for (j = 0; j < 3; j++)
			if (g->recent[j] == (long)i)
				wt *= 0.15;
		if ((long)i == att)
			wt = 40.0;
		cand[n] = (long)i;
		w[n] = wt;
		n++;
	}
	return n;
}

static int add_fixation(struct gz *g, long obj, size_t first, size_t count)
{
	struct synth_recording *s = g->s;
	struct synth_fixation *f;

	if (s->nfixations == g->fix_cap) {
		size_t nc = g->fix_cap ? 2 * g->fix_cap : 256;
		void *p = realloc(s->fixations, nc * sizeof(*s->fixations));

		if (!p)
			return err_set(ENG_ENOMEM, "synth: out of memory");
		s->fixations = p;
		g->fix_cap = nc;
	}
	f = &s->fixations[s->nfixations++];
	f->object = obj;
	f->first = first;
	f->count = count;
	return 0;
}

/*
 * Sets up g for the gaze of s: the attention spans sorted by start, the
 * camera pose of each gaze sample (every other one halfway between two
 * trajectory frames), s->gaze allocated for them, and the arrays of a
 * fixation plan.
 */
static int gz_init(struct gz *g, struct synth_recording *s, const struct synth__attn *attn,
		   size_t nattn, struct synth__rng *rng)
{
	size_t i;

	memset(g, 0, sizeof(*g));
	g->s = s;
	g->rng = rng;
	g->n = 2 * (s->ntraj - 1) + 1;
	g->recent[0] = g->recent[1] = g->recent[2] = -1;
	g->maxfix = (size_t)(1.2 * SYNTH_GAZE_HZ) + 2;
	g->gprev[0] = 1;
	g->prev_obj = -1;
	g->eye_pitch = -6 * DEG;
	s->gaze = calloc(g->n, sizeof(*s->gaze));
	g->cam = malloc(g->n * sizeof(*g->cam));
	g->attn = malloc((nattn ? nattn : 1) * sizeof(*g->attn));
	g->dirs = malloc(g->maxfix * sizeof(*g->dirs));
	g->depths = malloc(g->maxfix * sizeof(*g->depths));
	if (!s->gaze || !g->cam || !g->attn || !g->dirs || !g->depths)
		return err_set(ENG_ENOMEM, "synth: out of memory");
	if (nattn)
		memcpy(g->attn, attn, nattn * sizeof(*attn));
	g->nattn = nattn;
	qsort(g->attn, nattn, sizeof(*g->attn), cmp_attn);
	for (i = 0; i < g->n; i++) {
		if (i % 2 == 0)
			g->cam[i] = s->traj[i / 2].pose;
		else
			pose_interp(&s->traj[i / 2].pose, &s->traj[i / 2 + 1].pose, 0.5f,
				    &g->cam[i]);
	}
	return 0;
}

/* Frees what gz_init() allocated in g, except s->gaze (s owns it). */
static void gz_release(struct gz *g)
{
	free(g->dirs);
	free(g->depths);
	free(g->cam);
	free(g->attn);
}

/*
 * Picks a target for a fixation from sample k: up to 4 tries, each
 * drawing a candidate by weight and a length, and planning the fixation
 * into g->dirs and g->depths; a candidate whose plan is too short is
 * dropped. Returns the fixation's sample count (0: none), with its object
 * and the saccade's intervals to *obj and *ks.
 */
static size_t pick_fixation(struct gz *g, size_t k, long *obj, int *ks)
{
	long cand[256], att = attended(g, gaze_ns(k));
	double w[256];
	size_t nc = 0, got = 0;
	int tries;

	if (k > 0)
		nc = candidates(g, k, g->gprev, g->have_prev, g->prev_obj, att, cand, w,
				ARRAY_SIZE(cand));
	for (tries = 0; tries < 4 && nc > 0 && k + 3 < g->n; tries++) {
		double sum = 0, r;
		size_t c, want;
		struct aim am;

		for (c = 0; c < nc; c++)
			sum += w[c];
		r = synth__rng_range(g->rng, 0, sum);
		for (c = 0; c + 1 < nc && r >= w[c]; c++)
			r -= w[c];
		*obj = cand[c];
		want = (size_t)lround(synth__rng_range(g->rng, *obj == att ? 0.35 : 0.2, 1.2) *
				      SYNTH_GAZE_HZ) +
		       1;
		if (want > g->maxfix)
			want = g->maxfix;
		new_aim(g, *obj, &am);
		got = plan_fix(g, k, *obj, &am, g->gprev, g->have_prev, want, g->dirs, g->depths,
			       ks);
		if (got >= FIX_MIN_SAMPLES)
			break;
		got = 0;
		cand[c] = cand[nc - 1];
		w[c] = w[nc - 1];
		nc--;
	}
	return got;
}

/*
 * Writes the planned fixation on obj from sample *k: the saccade's ks - 1
 * samples from g->gprev, then its got samples, recorded as a fixation;
 * *k moves past it.
 */
static int write_fixation(struct gz *g, size_t *k, long obj, int ks, size_t got)
{
	size_t f0 = *k + (size_t)ks - 1, j;
	int rc;

	/* Saccade samples between the last sample and the fixation. */
	for (j = 1; j < (size_t)ks; j++) {
		double d[3];

		vslerp(g->gprev, g->dirs[0], (double)j / ks, d);
		put(g, *k + j - 1, d, free_depth(g, *k + j - 1, d), -1);
	}
	for (j = 0; j < got; j++)
		put(g, f0 + j, g->dirs[j], g->depths[j], (long)g->s->nfixations);
	rc = add_fixation(g, obj, f0, got);
	if (rc)
		return rc;
	memcpy(g->gprev, g->dirs[got - 1], sizeof(g->gprev));
	g->have_prev = true;
	g->prev_obj = obj;
	g->recent[2] = g->recent[1];
	g->recent[1] = g->recent[0];
	g->recent[0] = obj;
	*k = f0 + got;
	return 0;
}

/* Free gaze along the head for 100 ms from sample *k: the eyes wander slowly. */
static void free_gaze(struct gz *g, size_t *k)
{
	size_t i;

	for (i = 0; i < 6 && *k < g->n; i++, (*k)++) {
		double d[3];
		struct pose *c = &g->cam[*k];
		vec3 lc, wd;

		g->eye_yaw = fmax(-10 * DEG,
				  fmin(10 * DEG,
				       g->eye_yaw + synth__rng_range(g->rng, -0.2, 0.2) * DEG));
		g->eye_pitch = fmax(-14 * DEG,
				    fmin(2 * DEG,
					 g->eye_pitch + synth__rng_range(g->rng, -0.2, 0.2) * DEG));
		lc[0] = (float)(sin(-g->eye_yaw) * cos(g->eye_pitch));
		lc[1] = (float)(-sin(g->eye_pitch));
		lc[2] = (float)(cos(g->eye_yaw) * cos(g->eye_pitch));
		pose_rotate(c, lc, wd);
		d[0] = (double)wd[0];
		d[1] = (double)wd[1];
		d[2] = (double)wd[2];
		vnorm(d);
		put(g, *k, d, free_depth(g, *k, d), -1);
		memcpy(g->gprev, d, sizeof(g->gprev));
	}
	g->have_prev = true;
	g->prev_obj = -1;
}

int synth__gaze(struct synth_recording *s, const struct synth__attn *attn, size_t nattn,
		struct synth__rng *rng)
{
	struct gz g;
	size_t k = 0;
	int rc;

	rc = gz_init(&g, s, attn, nattn, rng);
	if (rc)
		goto out;
	s->ngaze = g.n;
	while (k < g.n) {
		long obj = -1;
		int ks = 2;
		size_t got = pick_fixation(&g, k, &obj, &ks);

		if (got) {
			rc = write_fixation(&g, &k, obj, ks, got);
			if (rc)
				goto out;
			continue;
		}
		free_gaze(&g, &k);
	}
out:
	gz_release(&g);
	return rc;
}
