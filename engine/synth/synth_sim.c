/* SPDX-License-Identifier: MIT */
/*
 * The wearer of a synthetic recording: a frame-by-frame simulation at 30 Hz
 * of someone who works through goals (synth_scene.c), walking between
 * places along A* routes around the furniture, turning the head with
 * limited rate and acceleration, and picking up, carrying and putting down
 * small objects. Writes the trajectory, the actions, the carries and the
 * carried objects' poses, and the spans of attention the gaze follows.
 */
#include "synth.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "astar.h"
#include "banned.h"
#include "err.h"
#include "grid.h"

#define DT (1.0 / SYNTH_TRAJ_HZ)
#define DEG POSE_DEG2RAD

/* Walking: top speed, acceleration, speed through a corner of the route (m/s, m/s^2). */
#define WALK_VMAX 1.25
#define WALK_ACC 1.2
#define WALK_VCORNER 0.6
#define WALK_PITCH (-10 * DEG)
/* Head: yaw and pitch rate and acceleration limits. */
#define YAW_RATE (100 * DEG)
#define YAW_ACC (400 * DEG)
#define PITCH_RATE (60 * DEG)
#define PITCH_ACC (300 * DEG)
/* Routes keep this far from furniture and walls (more than the 0.25 m of the occupancy tool). */
#define PLAN_INFLATE 0.32f
/* Standing distance from the face of the furniture worked at (m). */
#define STAND_OFF 0.45
/* A carried object is held at camera + HAND_FWD along the heading, HAND_DOWN below. */
#define HAND_FWD 0.3
#define HAND_DOWN 0.4
/* Head bob while walking: amplitude (m) and step length (m). */
#define BOB_AMP 0.012
#define BOB_STEP 0.65

enum carry_phase { CARRY_NONE = 0, CARRY_PICK, CARRY_HOLD, CARRY_PLACE };

struct carry_state {
	enum carry_phase phase;
	long obj;         /* carried object */
	size_t carry;     /* index into s->carries */
	struct pose from; /* rest pose before the pick */
	struct pose to;   /* rest pose after the place */
	double alpha;     /* progress of the pick or place, set per frame */
	enum rec_hand hand;
};

/* One carried-object sample before grouping per object. */
struct sample {
	long obj;
	struct pose_sample ps;
};

struct sim {
	struct synth_recording *s;
	const struct synth__scene_tpl *sc;
	struct synth__rng *rng;
	size_t nfurn_end; /* objects [4, nfurn_end) are furniture, then items */

	struct grid g; /* route planning grid over walls and furniture */
	uint8_t *cells;
	struct astar_ws *ws;
	int32_t *path;
	size_t path_cap;
	double *wp; /* route waypoints x0, y0, x1, y1, ... */

	size_t frame;        /* frames written to s->traj */
	bool done;           /* the recording is full */
	bool ending;         /* not enough time left for another action: idle */
	double x, y, z;      /* camera position */
	double yaw, pitch;   /* heading from +X (CCW) and pitch (up +), rad */
	double wyaw, wpitch; /* their rates, rad/s */
	double v;            /* walking speed, m/s */
	double bob;          /* bob phase, rad */

	struct pose *rest; /* per object: rest pose (items) */
	long *on;          /* per object: furniture it rests on, -1 if carried or none */
	struct carry_state carry;

	struct sample *smp;
	size_t nsmp, smp_cap;
	size_t act_cap, carry_cap;
	struct synth__attn *attn;
	size_t nattn, attn_cap;

	const char *goal; /* goal being worked on */
	size_t goal_index;
	int rc; /* first error (ENG_ENOMEM), sticky */
};

/* ======================= Small helpers ======================= */

static double wrap(double a)
{
	while (a > M_PI)
		a -= 2 * M_PI;
	while (a <= -M_PI)
		a += 2 * M_PI;
	return a;
}

static double clampd(double v, double lo, double hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

static int64_t frame_ns(size_t k)
{
	return (int64_t)k * 1000000000LL / SYNTH_TRAJ_HZ;
}

static double ease(double a)
{
	return a * a * (3 - 2 * a);
}

static bool is_furniture(const struct sim *m, long i)
{
	return i >= 4 && (size_t)i < m->nfurn_end;
}

static const struct synth__item_tpl *item_tpl(const struct sim *m, long i)
{
	if (i < 0 || (size_t)i < m->nfurn_end)
		return NULL;
	return &m->sc->items[(size_t)i - m->nfurn_end];
}

static bool is_support(const struct sim *m, long i)
{
	return is_furniture(m, i) && (m->sc->furn[i - 4].flags & SYNTH__SUPPORT);
}

static bool is_fixed(const struct sim *m, long i)
{
	const struct synth__item_tpl *t = item_tpl(m, i);

	return t && t->fixed;
}

static int grow(struct sim *m, void *parr, size_t *cap, size_t n, size_t size)
{
	void **pp = parr;
	size_t nc;
	void *p;

	if (n <= *cap)
		return 0;
	nc = *cap ? *cap * 2 : 64;
	while (nc < n)
		nc *= 2;
	p = realloc(*pp, nc * size);
	if (!p) {
		if (!m->rc)
			m->rc = err_set(ENG_ENOMEM, "synth: out of memory");
		m->done = true;
		return ENG_ENOMEM;
	}
	*pp = p;
	*cap = nc;
	return 0;
}

static void push_attn(struct sim *m, int64_t t0, int64_t t1, long obj)
{
	if (obj < 0 || t1 < t0 || grow(m, &m->attn, &m->attn_cap, m->nattn + 1, sizeof(*m->attn)))
		return;
	m->attn[m->nattn].t0 = t0;
	m->attn[m->nattn].t1 = t1;
	m->attn[m->nattn].object = obj;
	m->nattn++;
}

/* The point the wearer looks at to work with object i (not carried). */
static void work_point(const struct sim *m, long i, double p[3])
{
	const struct synth_object *o = &m->s->objects[i];

	p[0] = (double)m->rest[i].t[0];
	p[1] = (double)m->rest[i].t[1];
	p[2] = (double)m->rest[i].t[2];
	if (o->kind == SYNTH_FURNITURE)
		p[2] = fmin((double)(o->pose.t[2] + o->half[2]), 1.1);
}

static void hand_point(const struct sim *m, double p[3])
{
	p[0] = m->x + HAND_FWD * cos(m->yaw);
	p[1] = m->y + HAND_FWD * sin(m->yaw);
	p[2] = m->z - HAND_DOWN;
}

/* ======================= One frame ======================= */

/* Moves one angle toward its target under rate and acceleration limits. */
static void axis_step(double *ang, double *rate, double err, double rmax, double amax)
{
	double a = fabs(err);
	double want = fmin(rmax, fmin(0.85 * sqrt(2 * amax * a), 6.0 * a));
	double dv;

	if (err < 0)
		want = -want;
	dv = clampd(want - *rate, -amax * DT, amax * DT);
	*rate += dv;
	*ang += *rate * DT;
}

static void carry_sample(struct sim *m, int64_t t)
{
	struct carry_state *c = &m->carry;
	double h[3], e;
	struct sample *sp;
	int k;

	if (c->phase == CARRY_NONE)
		return;
	if (grow(m, &m->smp, &m->smp_cap, m->nsmp + 1, sizeof(*m->smp)))
		return;
	sp = &m->smp[m->nsmp++];
	memset(sp, 0, sizeof(*sp));
	sp->obj = c->obj;
	sp->ps.t_ns = t;
	sp->ps.pose = c->from;
	hand_point(m, h);
	e = ease(clampd(c->alpha, 0, 1));
	for (k = 0; k < 3; k++) {
		double v = h[k];

		if (c->phase == CARRY_PICK)
			v = e <= 0 ? (double)c->from.t[k]
				   : (double)c->from.t[k] + (h[k] - (double)c->from.t[k]) * e;
		else if (c->phase == CARRY_PLACE)
			v = e >= 1 ? (double)c->to.t[k] : h[k] + ((double)c->to.t[k] - h[k]) * e;
		sp->ps.pose.t[k] = (float)v;
	}
	if (c->phase == CARRY_PLACE && e >= 1)
		sp->ps.pose = c->to;
	m->s->carries[c->carry].t_end = t;
}

/* Advances one frame: head toward (want_yaw, want_pitch), body at (x, y). */
static void tick(struct sim *m, double want_yaw, double want_pitch)
{
	struct pose_sample *ps;

	if (m->done)
		return;
	axis_step(&m->yaw, &m->wyaw, wrap(want_yaw - m->yaw), YAW_RATE, YAW_ACC);
	m->yaw = wrap(m->yaw);
	axis_step(&m->pitch, &m->wpitch, want_pitch - m->pitch, PITCH_RATE, PITCH_ACC);
	m->bob += m->v * DT * 2 * M_PI / BOB_STEP;
	m->z = SYNTH_EYE_HEIGHT + BOB_AMP * sin(m->bob) * fmin(1.0, m->v / 0.6);
	ps = &m->s->traj[m->frame];
	ps->t_ns = frame_ns(m->frame);
	synth__camera_pose(m->x, m->y, m->z, m->yaw, m->pitch, &ps->pose);
	carry_sample(m, ps->t_ns);
	m->frame++;
	if (m->frame >= m->s->ntraj)
		m->done = true;
}

/* Head angles that look at p (the eyes take a quarter of the pitch). */
static void look_at(const struct sim *m, const double p[3], double *yaw, double *pitch)
{
	double dx = p[0] - m->x, dy = p[1] - m->y, hd = hypot(dx, dy);

	*yaw = hd > 0.05 ? atan2(dy, dx) : m->yaw;
	*pitch = clampd(0.75 * atan2(p[2] - m->z, fmax(hd, 0.2)), -50 * DEG, 20 * DEG);
}

/* ======================= Routes ======================= */

static int cell_of(const struct sim *m, double x, double y, int *cx, int *cy)
{
	return grid_world_to_cell(&m->g, (float)x, (float)y, cx, cy);
}

static void cell_xy(const struct sim *m, int cx, int cy, double *x, double *y)
{
	float fx, fy;

	grid_cell_to_world(&m->g, cx, cy, &fx, &fy);
	*x = (double)fx;
	*y = (double)fy;
}

/*
 * A cell to stand at to work at point p of furniture `host` (-1: anywhere
 * near p): in front of one of its four faces, reachable from the current
 * cell, as close to p as possible.
 */
static int stand_for(struct sim *m, const double p[3], long host, int *gx, int *gy)
{
	double best = 1e9;
	int sx, sy, f, cx, cy;
	double fx, fy;

	if (cell_of(m, m->x, m->y, &sx, &sy))
		return err_set(ENG_ENOTFOUND, "synth: wearer outside the room");
	if (host >= 0) {
		const struct synth_object *h = &m->s->objects[host];
		struct pose inv;
		vec3 pl, pw;

		pw[0] = (float)p[0];
		pw[1] = (float)p[1];
		pw[2] = (float)p[2];
		pose_inv(&h->pose, &inv);
		pose_apply(&inv, pw, pl);
		for (f = 0; f < 4; f++) {
			int a = f / 2, b = 1 - a;
			double sign = (f % 2) ? -1.0 : 1.0, hb = (double)h->half[b];
			vec3 cl, cw;
			double wx, wy, d;

			cl[a] = (float)(sign * ((double)h->half[a] + STAND_OFF));
			cl[b] = (float)(hb > 0.1 ? clampd((double)pl[b], -hb + 0.1, hb - 0.1) : 0);
			cl[2] = 0;
			pose_apply(&h->pose, cl, cw);
			grid_world_to_cellf(&m->g, cw[0], cw[1], &fx, &fy);
			if (astar_nearest_reachable(m->ws, sx, sy, fx, fy, 6, &cx, &cy))
				continue;
			cell_xy(m, cx, cy, &wx, &wy);
			d = hypot(wx - p[0], wy - p[1]);
			if (d > 1.4)
				continue;
			d += 0.5 * hypot(wx - (double)cw[0], wy - (double)cw[1]);
			if (d < best) {
				best = d;
				*gx = cx;
				*gy = cy;
			}
		}
	}
	if (best < 1e9)
		return 0;
	grid_world_to_cellf(&m->g, (float)p[0], (float)p[1], &fx, &fy);
	if (astar_nearest_reachable(m->ws, sx, sy, fx, fy, 25, gx, gy))
		return err_set(ENG_ENOTFOUND, "synth: %s: no reachable place near (%.2f, %.2f)",
			       m->sc->name, p[0], p[1]);
	return 0;
}

/* Objects in view range at a yaw offset in [lo, hi] degrees (either side), random pick. */
static long pick_look_target(struct sim *m, double lo, double hi, double ref_yaw)
{
	long cand[256];
	size_t n = 0, i;

	for (i = 4; i < m->s->nobjects && n < ARRAY_SIZE(cand); i++) {
		double p[3], off, d;

		if (m->on[i] < 0 && !is_furniture(m, (long)i))
			continue;
		work_point(m, (long)i, p);
		d = hypot(p[0] - m->x, p[1] - m->y);
		if (d < 0.6 || d > 6.0)
			continue;
		off = fabs(wrap(atan2(p[1] - m->y, p[0] - m->x) - ref_yaw)) / DEG;
		if (off >= lo && off <= hi)
			cand[n++] = (long)i;
	}
	if (!n)
		return -1;
	return cand[synth__rng_below(m->rng, n)];
}

/* A walk along the route in m->wp, while walk_to() steps it frame by frame. */
struct walk {
	size_t nwp;           /* waypoints in m->wp */
	double len;           /* length of the route, m */
	double sd;            /* distance walked so far, m */
	double want_yaw;      /* heading the head turns toward */
	double glance_at;     /* distance at which to glance aside, -1: no glance */
	double glance_end;    /* distance at which the glance ends, -1: none (left) */
	long glance;          /* object glanced at now, -1: none */
	int64_t t_glance;     /* when that glance began */
	long attn;            /* object attended to over the last 1.5 m, -1: none */
	int64_t t_attn;       /* when that began, -1: not yet */
	const double *face_p; /* point to face over the last 0.8 m, or NULL */
};

/* Length of leg k (from waypoint k - 1 to k) of the route in m->wp. */
static double leg_len(const struct sim *m, size_t k)
{
	return hypot(m->wp[2 * k] - m->wp[2 * k - 2], m->wp[2 * k + 1] - m->wp[2 * k - 1]);
}

/*
 * Plans the route from cell (sx, sy) to (gx, gy): A* over the grid, then
 * the cell path string-pulled into straight legs through free cells,
 * as waypoints in m->wp from the wearer's position; their number and the
 * route's length go to w.
 */
static int plan_route(struct sim *m, int sx, int sy, int gx, int gy, struct walk *w)
{
	size_t n = 0, nwp, i;
	double cost;
	int rc;

	rc = astar_search(m->ws, sx, sy, gx, gy, &cost);
	if (!rc)
		rc = astar_path(m->ws, m->path, m->path_cap, &n);
	if (rc)
		return err_set(ENG_ENOTFOUND, "synth: %s: no route from cell (%d, %d) to (%d, %d)",
			       m->sc->name, sx, sy, gx, gy);
	m->wp[0] = m->x;
	m->wp[1] = m->y;
	nwp = 1;
	i = 0;
	while (i + 1 < n) {
		size_t j = n - 1;
		int ax = m->path[i] % m->g.w, ay = m->path[i] / m->g.w;

		while (j > i + 1 &&
		       !grid_line_free(&m->g, ax, ay, m->path[j] % m->g.w, m->path[j] / m->g.w))
			j--;
		cell_xy(m, m->path[j] % m->g.w, m->path[j] / m->g.w, &m->wp[2 * nwp],
			&m->wp[2 * nwp + 1]);
		nwp++;
		i = j;
	}
	w->nwp = nwp;
	w->len = 0;
	for (i = 1; i < nwp; i++)
		w->len += leg_len(m, i);
	return 0;
}

/* Turns toward the first leg before setting off (at most 4 s). */
static void turn_to_route(struct sim *m, struct walk *w)
{
	int turn;

	for (turn = 0; turn < 4 * SYNTH_TRAJ_HZ && !m->done; turn++) {
		w->want_yaw = atan2(m->wp[3] - m->y, m->wp[2] - m->x);
		if (fabs(wrap(w->want_yaw - m->yaw)) < 75 * DEG)
			break;
		tick(m, w->want_yaw, WALK_PITCH);
	}
}

/* On a route over 2 m, 40% of the time: where a glance aside begins and ends. */
static void plan_glance(struct sim *m, struct walk *w)
{
	if (w->len > 2.0 && synth__rng_range(m->rng, 0, 1) < 0.4) {
		w->glance_at = synth__rng_range(m->rng, 0.2, 0.5) * w->len;
		w->glance_end = w->glance_at + synth__rng_range(m->rng, 0.6, 1.0) * WALK_VMAX;
	}
}

/*
 * The speed for this frame, slowing for the next corner, the end of the
 * route and a sharp turn of the head, and the distance walked with it.
 */
static void walk_speed(struct sim *m, struct walk *w)
{
	double acc = 0, d_corner = 1e9, vlim;
	size_t k;

	/* Distance to the next corner and the end. */
	for (k = 1; k < w->nwp; k++) {
		double l = leg_len(m, k);

		if (acc + l > w->sd) {
			if (k + 1 < w->nwp)
				d_corner = acc + l - w->sd;
			break;
		}
		acc += l;
	}
	vlim = fmin(WALK_VMAX, sqrt(WALK_VCORNER * WALK_VCORNER + 2 * WALK_ACC * d_corner));
	vlim = fmin(vlim, sqrt(2 * WALK_ACC * (w->len - w->sd)) + 0.08);
	if (fabs(wrap(w->want_yaw - m->yaw)) > 60 * DEG)
		vlim = fmin(vlim, 0.35);
	m->v = fmin(m->v + WALK_ACC * DT, vlim);
	w->sd = fmin(w->len, w->sd + m->v * DT);
}

/* The point `target` metres along the route (its end past the end). */
static void route_point(const struct sim *m, const struct walk *w, double target, double *x,
			double *y)
{
	double ox = m->wp[2 * (w->nwp - 1)], oy = m->wp[2 * (w->nwp - 1) + 1], a2 = 0;
	size_t q;

	for (q = 1; q < w->nwp; q++) {
		double x0 = m->wp[2 * q - 2], y0 = m->wp[2 * q - 1];
		double l = leg_len(m, q);

		if (a2 + l >= target && l > 0) {
			double u = (target - a2) / l;

			ox = x0 + (m->wp[2 * q] - x0) * u;
			oy = y0 + (m->wp[2 * q + 1] - y0) * u;
			break;
		}
		a2 += l;
	}
	*x = ox;
	*y = oy;
}

/*
 * Moves the wearer to the distance walked, the head's heading toward the
 * point 0.9 m further on (when that is over 0.2 m away).
 */
static void walk_move(struct sim *m, struct walk *w)
{
	double px, py, lx, ly;

	route_point(m, w, w->sd, &px, &py);
	route_point(m, w, fmin(w->len, w->sd + 0.9), &lx, &ly);
	if (w->sd >= w->len) {
		px = m->wp[2 * (w->nwp - 1)];
		py = m->wp[2 * (w->nwp - 1) + 1];
	}
	m->x = px;
	m->y = py;
	if (hypot(lx - px, ly - py) > 0.2)
		w->want_yaw = atan2(ly - py, lx - px);
}

/*
 * Where the head looks this frame, over the heading ahead: a glance at
 * something aside while one lasts (attended to when it ends), face_p near
 * the end; and when attention to w->attn begins.
 */
static void walk_head(struct sim *m, struct walk *w, double *want_pitch)
{
	if (w->glance_at >= 0 && w->sd >= w->glance_at && w->glance < 0 && w->glance_end > 0) {
		w->glance = pick_look_target(m, 25, 70, w->want_yaw);
		w->t_glance = frame_ns(m->frame);
		if (w->glance < 0)
			w->glance_end = -1;
	}
	if (w->glance >= 0 && w->sd < w->glance_end) {
		double p[3];

		work_point(m, w->glance, p);
		look_at(m, p, &w->want_yaw, want_pitch);
	} else if (w->glance >= 0) {
		push_attn(m, w->t_glance, frame_ns(m->frame), w->glance);
		w->glance = -1;
		w->glance_end = -1;
	}
	if (w->face_p && w->len - w->sd < 0.8 && w->glance < 0 &&
	    hypot(w->face_p[0] - m->x, w->face_p[1] - m->y) > 0.3)
		look_at(m, w->face_p, &w->want_yaw, want_pitch);
	if (w->attn >= 0 && w->t_attn < 0 && w->len - w->sd < 1.5)
		w->t_attn = frame_ns(m->frame);
}

/*
 * Walks to cell (gx, gy): turns toward the route, then follows it with a
 * speed profile that slows at corners and stops at the end, the head
 * looking ahead along the route (sometimes glancing at something aside).
 * During the last 1.5 m the wearer attends to object `attn`; over the last
 * 0.8 m the head turns toward face_p (when not NULL).
 */
static int walk_to(struct sim *m, int gx, int gy, long attn, const double *face_p)
{
	struct walk w;
	int sx, sy, rc;

	if (cell_of(m, m->x, m->y, &sx, &sy))
		return err_set(ENG_ENOTFOUND, "synth: wearer outside the room");
	if (sx == gx && sy == gy)
		return 0;
	memset(&w, 0, sizeof(w));
	w.want_yaw = m->yaw;
	w.glance_at = -1;
	w.glance_end = -1;
	w.glance = -1;
	w.attn = attn;
	w.t_attn = -1;
	w.face_p = face_p;
	rc = plan_route(m, sx, sy, gx, gy, &w);
	if (rc)
		return rc;
	turn_to_route(m, &w);
	plan_glance(m, &w);
	while (w.sd < w.len && !m->done) {
		double want_pitch = WALK_PITCH;

		walk_speed(m, &w);
		walk_move(m, &w);
		walk_head(m, &w, &want_pitch);
		tick(m, w.want_yaw, want_pitch);
	}
	if (w.glance >= 0)
		push_attn(m, w.t_glance, frame_ns(m->frame), w.glance);
	if (w.t_attn >= 0)
		push_attn(m, w.t_attn, frame_ns(m->frame), attn);
	m->v = 0;
	return 0;
}

/* ======================= Looking ======================= */

/*
 * Turns the head to p (within 5 deg, at most timeout_s), then keeps
 * looking for dwell_s; attends to `obj` (-1: none) meanwhile.
 */
static void face(struct sim *m, const double p[3], double dwell_s, double timeout_s, long obj)
{
	int64_t t0 = frame_ns(m->frame);
	int k, nd = (int)lround(dwell_s * SYNTH_TRAJ_HZ);
	double wy, wp;

	for (k = 0; k < (int)(timeout_s * SYNTH_TRAJ_HZ) && !m->done; k++) {
		look_at(m, p, &wy, &wp);
		if (fabs(wrap(wy - m->yaw)) < 5 * DEG && fabs(wp - m->pitch) < 5 * DEG &&
		    fabs(m->wyaw) < 20 * DEG)
			break;
		tick(m, wy, wp);
	}
	for (k = 0; k < nd && !m->done; k++) {
		look_at(m, p, &wy, &wp);
		tick(m, wy, wp);
	}
	push_attn(m, t0, frame_ns(m->frame), obj);
}

/* Head turns of 30..150 deg toward things around, each held for a moment. */
static void look_around(struct sim *m, int n)
{
	int i;

	for (i = 0; i < n && !m->done; i++) {
		long obj = pick_look_target(m, 30, 150, m->yaw);
		double p[3];

		if (obj >= 0) {
			work_point(m, obj, p);
		} else {
			double a = m->yaw + (synth__rng_range(m->rng, 0, 1) < 0.5 ? -1 : 1) *
						    synth__rng_range(m->rng, 30, 150) * DEG;

			p[0] = m->x + 3 * cos(a);
			p[1] = m->y + 3 * sin(a);
			p[2] = m->z - synth__rng_range(m->rng, 0, 1.2);
		}
		face(m, p, synth__rng_range(m->rng, 0.5, 1.4), 3.0, obj);
	}
}

/* ======================= Actions ======================= */

/* Expands {0} {1} {2} {s} {f} in a step description into a new string. */
static char *describe(const struct sim *m, const char *tpl, const long *slots, long sup, long furn)
{
	char buf[512];
	size_t n = 0;
	const char *p;

	for (p = tpl; *p && n + 1 < sizeof(buf); p++) {
		const char *rep = NULL;

		if (p[0] == '{' && p[1] && p[2] == '}') {
			long i = -1;

			if (p[1] >= '0' && p[1] < '0' + SYNTH__SLOTS)
				i = slots[p[1] - '0'];
			else if (p[1] == 's')
				i = sup;
			else if (p[1] == 'f')
				i = furn;
			if (i >= 0) {
				rep = m->s->objects[i].name;
				p += 2;
			}
		}
		if (rep) {
			size_t l = strlen(rep);

			if (n + l + 1 > sizeof(buf))
				break;
			memcpy(buf + n, rep, l);
			n += l;
		} else {
			buf[n++] = *p;
		}
	}
	buf[n] = 0;
	return strdup(buf);
}

enum act_kind { ACT_USE = 0, ACT_PICK, ACT_PLACE };

/*
 * Does one action at point p: faces it, then spends dur_s on it (the head
 * following p), driving the carried object for a pick or place. Returns 0
 * without doing anything (and sets m->ending) when the recording would end
 * before the action does.
 */
static int act(struct sim *m, enum act_kind kind, const char *verb, long obj, enum rec_hand hand,
	       char *desc, const double p[3], double dur_s, const struct pose *place_to,
	       long place_on)
{
	struct synth_recording *s = m->s;
	struct synth_action *a;
	int64_t t_face = frame_ns(m->frame), t0;
	int k, nk = (int)lround(dur_s * SYNTH_TRAJ_HZ);
	double wy, wp;

	if (nk < 12)
		nk = 12;
	face(m, p, 0, 2.0, -1);
	if (m->done || m->frame + (size_t)nk + 2 > s->ntraj) {
		m->ending = true;
		free(desc);
		return 0;
	}
	if (grow(m, &s->actions, &m->act_cap, s->nactions + 1, sizeof(*s->actions))) {
		free(desc);
		return m->rc;
	}
	t0 = frame_ns(m->frame);
	if (kind == ACT_PICK) {
		struct synth_carry *c;

		if (grow(m, &s->carries, &m->carry_cap, s->ncarries + 1, sizeof(*s->carries))) {
			free(desc);
			return m->rc;
		}
		c = &s->carries[s->ncarries];
		c->object = obj;
		c->hand = hand;
		c->t_start = t0;
		c->t_end = t0;
		c->pick_action = (long)s->nactions;
		c->place_action = -1;
		m->carry.phase = CARRY_PICK;
		m->carry.obj = obj;
		m->carry.carry = s->ncarries++;
		m->carry.from = m->rest[obj];
		m->carry.to = m->rest[obj];
		m->carry.hand = hand;
		m->on[obj] = -1;
	} else if (kind == ACT_PLACE) {
		m->carry.phase = CARRY_PLACE;
		m->carry.to = *place_to;
	}
	for (k = 0; k < nk && !m->done; k++) {
		double u = (double)k / (nk - 1);

		m->carry.alpha = kind == ACT_PICK ? (u - 0.25) / 0.75 : u / 0.75;
		look_at(m, p, &wy, &wp);
		tick(m, wy, wp);
	}
	a = &s->actions[s->nactions];
	a->start_ns = t0;
	a->end_ns = frame_ns(m->frame - 1);
	a->verb = verb;
	a->object = obj;
	a->hand = hand;
	a->description = desc;
	a->goal = m->goal;
	a->goal_index = m->goal_index;
	if (kind == ACT_PICK) {
		m->carry.phase = CARRY_HOLD;
	} else if (kind == ACT_PLACE) {
		s->carries[m->carry.carry].place_action = (long)s->nactions;
		m->carry.phase = CARRY_NONE;
		m->rest[obj] = *place_to;
		m->on[obj] = place_on;
	}
	s->nactions++;
	if (!desc && !m->rc)
		m->rc = err_set(ENG_ENOMEM, "synth: out of memory");
	push_attn(m, t_face, a->end_ns, obj);
	return m->rc;
}

/* Walks to a place from which point p of furniture `host` can be worked at. */
static int go_work(struct sim *m, const double p[3], long host, long attn)
{
	int gx, gy, rc;

	rc = stand_for(m, p, host, &gx, &gy);
	if (rc)
		return rc;
	/* NOLINTNEXTLINE(clang-analyzer-core.CallAndMessage): stand_for() sets gx, gy when it returns 0 */
	rc = walk_to(m, gx, gy, attn, p);
	if (!rc && !m->done && synth__rng_range(m->rng, 0, 1) < 0.1)
		look_around(m, 1);
	return rc;
}

/* Does `where` (an id, else a category) name object i? */
static bool names(const struct sim *m, const char *where, long i)
{
	const struct synth_object *o = &m->s->objects[i];

	return !strcmp(o->id, where) || !strcmp(o->category, where);
}

/* The furniture or fixed item `where` names that is nearest the wearer, or -1. */
static long resolve(const struct sim *m, const char *where)
{
	long best = -1;
	double bd = 1e9;
	size_t i;

	for (i = 4; i < m->s->nobjects; i++) {
		double p[3], d;

		if (!is_furniture(m, (long)i) && !is_fixed(m, (long)i))
			continue;
		if (!names(m, where, (long)i))
			continue;
		work_point(m, (long)i, p);
		d = hypot(p[0] - m->x, p[1] - m->y);
		if (strcmp(m->s->objects[i].id, where) == 0)
			d = -1;
		if (d < bd) {
			bd = d;
			best = (long)i;
		}
	}
	return best;
}

/*
 * A support for carried object obj and a spot on it: a random support that
 * `where` names (not the one it came from when there is a choice), else
 * any support with room. Returns the support, or -1 when all are full.
 */
static long choose_place(struct sim *m, long obj, const char *where, long from, struct pose *spot)
{
	long cand[64];
	size_t n = 0, i, k;
	int pass;

	for (pass = 0; pass < 3; pass++) {
		n = 0;
		for (i = 4; i < m->nfurn_end && n < ARRAY_SIZE(cand); i++) {
			if (!is_support(m, (long)i))
				continue;
			if (pass < 2 && (!where || !names(m, where, (long)i)))
				continue;
			if (pass == 0 && (long)i == from)
				continue;
			cand[n++] = (long)i;
		}
		for (k = 0; k < n; k++) {
			size_t j = k + synth__rng_below(m->rng, n - k);
			long t = cand[j];

			cand[j] = cand[k];
			cand[k] = t;
			if (!synth__find_spot(m->s, m->rest, m->on, (size_t)obj, (size_t)t, m->rng,
					      spot))
				return t;
		}
	}
	return -1;
}

/*
 * True when slot k of goal g is only moved: never named by a use step,
 * never marking its place, never held while one happens. Such a slot must
 * bind to an instance that is not already where the goal puts it.
 */
static bool slot_moved_only(const struct synth__goal_tpl *g, int k)
{
	bool held = false;
	int q;

	for (q = 0; q < SYNTH__STEPS && g->steps[q].verb; q++) {
		const struct synth__step_tpl *st = &g->steps[q];

		if (st->op == SYNTH__PICK && st->slot == k)
			held = true;
		else if (st->op == SYNTH__PLACE && st->slot == k)
			held = false;
		else if (st->op == SYNTH__USE && (held || st->slot == k || st->at == k))
			return false;
	}
	return true;
}

/*
 * Binds the goal's slots to item instances, preferring for each slot one
 * that is not on the furniture the goal first puts it on. With `strict`,
 * a moved-only slot without such an instance fails the binding. Returns
 * false when a slot cannot be bound.
 */
static bool bind_slots(struct sim *m, const struct synth__goal_tpl *g, long *slots, bool strict)
{
	int k, q;

	for (k = 0; k < SYNTH__SLOTS; k++)
		slots[k] = -1;
	for (k = 0; k < SYNTH__SLOTS && g->slot_cat[k]; k++) {
		const char *target = NULL;
		long cand[32], pref[32];
		size_t nc = 0, np = 0, i;

		for (q = 0; q < SYNTH__STEPS && g->steps[q].verb; q++) {
			if (g->steps[q].op == SYNTH__PLACE && g->steps[q].slot == k) {
				target = g->steps[q].where;
				break;
			}
		}
		for (i = m->nfurn_end; i < m->s->nobjects && nc < ARRAY_SIZE(cand); i++) {
			int j;
			bool used = false;

			if (is_fixed(m, (long)i) ||
			    strcmp(m->s->objects[i].category, g->slot_cat[k]))
				continue;
			for (j = 0; j < k; j++)
				used = used || slots[j] == (long)i;
			if (used || m->on[i] < 0)
				continue;
			cand[nc++] = (long)i;
			if (!target || !names(m, target, m->on[i]))
				pref[np++] = (long)i;
		}
		if (!nc || (strict && !np && slot_moved_only(g, k)))
			return false;
		slots[k] = np ? pref[synth__rng_below(m->rng, np)]
			      : cand[synth__rng_below(m->rng, nc)];
	}
	return true;
}

static double jitter_dur(struct sim *m, double mean)
{
	return mean * synth__rng_range(m->rng, 0.8, 1.25);
}

/* Puts down whatever is carried on the nearest support with room (a safety net). */
static int put_down_held(struct sim *m)
{
	struct pose spot;
	long obj = m->carry.obj, sup;
	double p[3];
	int rc;

	if (m->carry.phase != CARRY_HOLD)
		return 0;
	sup = choose_place(m, obj, NULL, -1, &spot);
	if (sup < 0)
		return err_set(ENG_ENOTFOUND, "synth: %s: every top is full", m->sc->name);
	p[0] = (double)spot.t[0];
	p[1] = (double)spot.t[1];
	p[2] = (double)spot.t[2];
	rc = go_work(m, p, sup, -1);
	if (rc || m->done || m->ending)
		return rc;
	{
		long none[SYNTH__SLOTS] = { obj, -1, -1 };

		return act(m, ACT_PLACE, "put down", obj, m->carry.hand,
			   describe(m, "Put the {0} down on the {f}", none, sup, sup), p,
			   jitter_dur(m, 1.0), &spot, sup);
	}
}

static int run_step(struct sim *m, const struct synth__step_tpl *st, const long *slots)
{
	long obj = st->slot >= 0 ? slots[st->slot] : -1, host = -1, sup = -1;
	double p[3];
	int rc = 0;

	if (st->op == SYNTH__PICK) {
		const struct synth__item_tpl *t = item_tpl(m, obj);
		enum rec_hand hand = st->hand != REC_HAND_NONE ? st->hand : t->hand;

		if (m->on[obj] < 0)
			return 0;
		rc = put_down_held(m);
		if (rc || m->done || m->ending)
			return rc;
		host = m->on[obj];
		work_point(m, obj, p);
		rc = go_work(m, p, host, obj);
		if (rc || m->done)
			return rc;
		return act(m, ACT_PICK, st->verb, obj, hand,
			   describe(m, st->desc, slots, host, host), p, jitter_dur(m, st->dur_s),
			   NULL, -1);
	}
	if (st->op == SYNTH__PLACE) {
		struct pose spot;
		char *desc;

		if (m->carry.phase != CARRY_HOLD || m->carry.obj != obj)
			return 0;
		sup = choose_place(m, obj, st->where, (long)m->s->objects[obj].support, &spot);
		if (sup < 0)
			return err_set(ENG_ENOTFOUND, "synth: %s: every top is full", m->sc->name);
		p[0] = (double)spot.t[0];
		p[1] = (double)spot.t[1];
		p[2] = (double)spot.t[2];
		rc = go_work(m, p, sup, sup);
		if (rc || m->done)
			return rc;
		/* A full top sends the object elsewhere: then the template text would lie. */
		if (st->where && names(m, st->where, sup)) {
			desc = describe(m, st->desc, slots, sup, sup);
		} else {
			long one[SYNTH__SLOTS] = { obj, -1, -1 };

			desc = describe(m, "Put the {0} down on the {f}", one, sup, sup);
		}
		return act(m, ACT_PLACE, st->verb, obj, m->carry.hand, desc, p,
			   jitter_dur(m, st->dur_s), &spot, sup);
	}
	/* USE: which object the action names, and where it happens. */
	if (obj < 0) {
		obj = resolve(m, st->where);
		if (obj < 0)
			return err_set(ENG_EINVAL, "synth: %s: no object '%s'", m->sc->name,
				       st->where);
	}
	if (st->at >= 0 && m->on[slots[st->at]] >= 0) {
		work_point(m, slots[st->at], p);
		host = m->on[slots[st->at]];
	} else if (st->slot < 0) {
		work_point(m, obj, p);
		host = is_furniture(m, obj) ? obj : m->on[obj];
	} else if (m->on[obj] >= 0) {
		work_point(m, obj, p);
		host = m->on[obj];
	} else if (st->where) {
		host = resolve(m, st->where);
		if (host < 0)
			return err_set(ENG_EINVAL, "synth: %s: no object '%s'", m->sc->name,
				       st->where);
		work_point(m, host, p);
	}
	if (host >= 0) {
		rc = go_work(m, p, host, obj);
		if (rc || m->done)
			return rc;
	} else {
		hand_point(m, p);
	}
	{
		enum rec_hand hand = st->hand;

		if (hand == REC_HAND_NONE)
			hand = m->carry.phase == CARRY_HOLD ? m->carry.hand : REC_HAND_RIGHT;
		return act(m, ACT_USE, st->verb, obj, hand,
			   describe(m, st->desc, slots, host, host), p, jitter_dur(m, st->dur_s),
			   NULL, -1);
	}
}

static int run_goal(struct sim *m, const struct synth__goal_tpl *g, const long *slots)
{
	int q, rc = 0;

	m->goal = g->goal;
	m->goal_index = m->s->ngoals++;
	if (synth__rng_range(m->rng, 0, 1) < 0.4)
		look_around(m, 1);
	for (q = 0; q < SYNTH__STEPS && g->steps[q].verb && !rc; q++) {
		if (m->done || m->ending)
			break;
		rc = run_step(m, &g->steps[q], slots);
	}
	if (!rc && !m->done && !m->ending)
		rc = put_down_held(m);
	return rc;
}

/*
 * The next goal: a random one (never the last again) whose slots all bind
 * strictly, else one that binds at all. Returns its index, or -1.
 */
static long next_goal(struct sim *m, long last, long *slots)
{
	size_t n = m->sc->ngoals, order[64], i;
	int pass;

	if (n > ARRAY_SIZE(order))
		n = ARRAY_SIZE(order);
	for (i = 0; i < n; i++)
		order[i] = i;
	for (i = 0; i + 1 < n; i++) {
		size_t j = i + synth__rng_below(m->rng, n - i), t = order[i];

		order[i] = order[j];
		order[j] = t;
	}
	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < n; i++)
			if ((long)order[i] != last &&
			    bind_slots(m, &m->sc->goals[order[i]], slots, pass == 0))
				return (long)order[i];
	return -1;
}

/* ======================= Set-up and results ======================= */

static int make_grid(struct sim *m)
{
	struct grid_params gp;
	struct obb *boxes;
	float lo[2], hi[2];
	size_t i, nb = m->nfurn_end;
	int w, h, rc;
	static const vec3 zero = { 0, 0, 0 };

	boxes = malloc(nb * sizeof(*boxes));
	if (!boxes)
		return err_set(ENG_ENOMEM, "synth: out of memory");
	for (i = 0; i < nb; i++)
		obb_from_local(&m->s->objects[i].pose, zero, m->s->objects[i].half, &boxes[i]);
	grid_defaults(&gp);
	gp.inflate_m = PLAN_INFLATE;
	rc = grid_scene_bounds(boxes, nb, NULL, &gp, lo, hi);
	if (!rc)
		rc = grid_shape(lo, hi, gp.cell_m, &w, &h);
	if (rc) {
		free(boxes);
		return err_set(rc, "synth: %s: bad room bounds", m->sc->name);
	}
	m->cells = malloc(grid_cells_needed(w, h));
	m->path_cap = (size_t)w * (size_t)h;
	m->path = malloc(m->path_cap * sizeof(*m->path));
	m->wp = malloc(2 * (m->path_cap + 1) * sizeof(*m->wp));
	m->ws = astar_ws_new(w, h);
	if (!m->cells || !m->path || !m->wp || !m->ws) {
		free(boxes);
		return err_set(ENG_ENOMEM, "synth: out of memory");
	}
	rc = grid_init(&m->g, m->cells, w, h, lo[0], lo[1], gp.cell_m);
	if (!rc)
		rc = grid_rasterize(&m->g, boxes, nb, &gp, 0.0f, GRID_SKIP_NONE, NULL);
	if (!rc)
		rc = astar_ws_load(m->ws, &m->g);
	free(boxes);
	if (rc)
		return err_set(rc, "synth: %s: cannot build the route grid", m->sc->name);
	return 0;
}

/* Start near the room centre, on a free cell connected to it, facing a random way. */
static int place_wearer(struct sim *m)
{
	double fx, fy, cost;
	int cx, cy, sx, sy, rc;

	grid_world_to_cellf(&m->g, m->s->room_w / 2, m->s->room_d / 2, &fx, &fy);
	rc = grid_nearest_free(&m->g, fx, fy, 30, &cx, &cy);
	if (rc)
		return err_set(ENG_ENOTFOUND, "synth: %s: no free floor", m->sc->name);
	grid_world_to_cellf(&m->g,
			    (float)((double)m->s->room_w / 2 + synth__rng_range(m->rng, -1, 1)),
			    (float)((double)m->s->room_d / 2 + synth__rng_range(m->rng, -1, 1)),
			    &fx, &fy);
	if (grid_nearest_free(&m->g, fx, fy, 30, &sx, &sy) ||
	    astar_search(m->ws, sx, sy, cx, cy, &cost)) {
		sx = cx;
		sy = cy;
	}
	cell_xy(m, sx, sy, &m->x, &m->y);
	m->z = SYNTH_EYE_HEIGHT;
	m->yaw = synth__rng_range(m->rng, -M_PI, M_PI);
	m->pitch = WALK_PITCH;
	return 0;
}

/* Groups the carried-object samples per object (time order kept) into s->obj_poses. */
static int group_samples(struct sim *m)
{
	struct synth_recording *s = m->s;
	size_t *count, i, at = 0;

	count = calloc(s->nobjects, sizeof(*count));
	s->obj_poses = malloc((m->nsmp ? m->nsmp : 1) * sizeof(*s->obj_poses));
	if (!count || !s->obj_poses) {
		free(count);
		return err_set(ENG_ENOMEM, "synth: out of memory");
	}
	for (i = 0; i < m->nsmp; i++)
		count[m->smp[i].obj]++;
	for (i = 0; i < s->nobjects; i++) {
		s->objects[i].pose_first = at;
		s->objects[i].pose_count = count[i];
		s->objects[i].motion = count[i] ? REC_DYNAMIC : REC_STATIC;
		at += count[i];
		count[i] = 0;
	}
	for (i = 0; i < m->nsmp; i++) {
		struct synth_object *o = &s->objects[m->smp[i].obj];

		s->obj_poses[o->pose_first + count[m->smp[i].obj]++] = m->smp[i].ps;
	}
	s->nobj_poses = m->nsmp;
	free(count);
	return 0;
}

int synth__simulate(struct synth_recording *s, const struct synth__scene_tpl *sc,
		    struct synth__rng *rng, struct synth__attn **attn, size_t *nattn)
{
	struct sim m;
	size_t i;
	long last = -1;
	int rc = 0;

	memset(&m, 0, sizeof(m));
	m.s = s;
	m.sc = sc;
	m.rng = rng;
	m.nfurn_end = 4 + sc->nfurn;
	m.carry.phase = CARRY_NONE;
	s->traj = calloc(s->ntraj, sizeof(*s->traj));
	m.rest = calloc(s->nobjects, sizeof(*m.rest));
	m.on = malloc(s->nobjects * sizeof(*m.on));
	if (!s->traj || !m.rest || !m.on) {
		rc = err_set(ENG_ENOMEM, "synth: out of memory");
		goto out;
	}
	for (i = 0; i < s->nobjects; i++) {
		m.rest[i] = s->objects[i].pose;
		m.on[i] = s->objects[i].support;
	}
	rc = make_grid(&m);
	if (!rc)
		rc = place_wearer(&m);
	while (!rc && !m.done) {
		long slots[SYNTH__SLOTS], g = -1;

		if (!m.ending)
			g = next_goal(&m, last, slots);
		if (g < 0) {
			look_around(&m, 1);
			continue;
		}
		last = g;
		rc = run_goal(&m, &sc->goals[g], slots);
		if (!rc)
			rc = m.rc;
	}
	if (!rc)
		rc = m.rc;
	if (!rc)
		rc = group_samples(&m);
	if (rc)
		goto out;
	*attn = m.attn;
	*nattn = m.nattn;
	m.attn = NULL;
out:
	free(m.attn);
	free(m.smp);
	free(m.rest);
	free(m.on);
	free(m.cells);
	free(m.path);
	free(m.wp);
	astar_ws_free(m.ws);
	return rc;
}
