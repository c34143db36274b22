/* SPDX-License-Identifier: MIT */
/*
 * Hand-made recordings for the scene, visibility, occupancy, path, gaze
 * and clip sampler tests: a level camera turning at a constant rate (or
 * standing still), axis-aligned or yawed boxes, dynamic boxes with pose
 * samples, gaze rays and actions. Built in memory as a struct recording
 * and finished with recording__finish(), like a loader does.
 */
#ifndef TOOLS2_FIXTURE_H
#define TOOLS2_FIXTURE_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cglm/cglm.h>

#include "recording.h"

#define FX_S 1000000000LL /* one second in ns */
#define FX_DEG 0.017453292519943295

/* An empty recording with the native default camera (pinhole 640x480, f = 320). */
static inline struct recording *fx_new(void)
{
	struct recording *r = calloc(1, sizeof(*r));

	r->id = strdup("fixture");
	r->root = strdup("fixture");
	r->layout = "proxima-recording/1";
	r->camera.model = REC_CAM_PINHOLE;
	r->camera.width = 640;
	r->camera.height = 480;
	r->camera.fx = r->camera.fy = 320;
	r->camera.cx = 320;
	r->camera.cy = 240;
	r->camera.fov_deg = 90;
	return r;
}

/* T_world_camera of a level OpenCV camera at p with heading yaw (deg, CCW from +X). */
static inline void fx_cam_pose(const vec3 p, double yaw_deg, struct pose *out)
{
	double a = yaw_deg * FX_DEG;
	mat3 m;

	/* columns: camera x (right), y (down), z (forward) in the world */
	m[0][0] = (float)sin(a);
	m[0][1] = (float)-cos(a);
	m[0][2] = 0;
	m[1][0] = 0;
	m[1][1] = 0;
	m[1][2] = -1;
	m[2][0] = (float)cos(a);
	m[2][1] = (float)sin(a);
	m[2][2] = 0;
	glm_mat3_quat(m, out->q);
	glm_quat_normalize(out->q);
	out->t[0] = p[0];
	out->t[1] = p[1];
	out->t[2] = p[2];
}

/*
 * Trajectory samples every step ns over [0, t1]: camera at p, heading
 * yaw0 + rate * t (degrees, degrees per second).
 */
static inline void fx_traj(struct recording *r, int64_t t1, int64_t step, const vec3 p,
			   double yaw0, double rate_dps)
{
	size_t n = (size_t)(t1 / step) + 1, i;

	r->traj = calloc(n, sizeof(*r->traj));
	r->ntraj = n;
	for (i = 0; i < n; i++) {
		int64_t t = (int64_t)i * step;

		r->traj[i].t_ns = t;
		fx_cam_pose(p, yaw0 + rate_dps * (double)t / 1e9, &r->traj[i].pose);
	}
}

/* Adds a box with centre c, half-extents h, yawed by yaw_deg about +Z. Returns its index. */
static inline size_t fx_box(struct recording *r, const char *id, float cx, float cy, float cz,
			    float hx, float hy, float hz, double yaw_deg)
{
	struct rec_object *o;
	size_t i = r->nobjects++;
	double a = yaw_deg * FX_DEG / 2;

	r->objects = realloc(r->objects, r->nobjects * sizeof(*r->objects));
	o = &r->objects[i];
	memset(o, 0, sizeof(*o));
	o->id = strdup(id);
	o->name = strdup(id);
	o->category = strdup(id);
	o->half[0] = hx;
	o->half[1] = hy;
	o->half[2] = hz;
	o->motion = REC_STATIC;
	pose_set(&o->static_pose, 0, 0, (float)sin(a), (float)cos(a), cx, cy, cz);
	return i;
}

/*
 * Makes object i dynamic with n pose samples: sample j at times[j] with
 * centre pos[j] (no rotation). Objects must be made dynamic in index order.
 */
static inline void fx_dynamic(struct recording *r, size_t i, const int64_t *times,
			      vec3 *pos, size_t n)
{
	struct rec_object *o = &r->objects[i];
	size_t j, first = r->nobj_poses;

	r->nobj_poses += n;
	r->obj_poses = realloc(r->obj_poses, r->nobj_poses * sizeof(*r->obj_poses));
	for (j = 0; j < n; j++) {
		r->obj_poses[first + j].t_ns = times[j];
		pose_set(&r->obj_poses[first + j].pose, 0, 0, 0, 1, pos[j][0], pos[j][1],
			 pos[j][2]);
	}
	o->motion = REC_DYNAMIC;
	o->pose_first = first;
	o->pose_count = n;
	o->static_pose = r->obj_poses[first].pose;
}

/* Appends a gaze sample from o along direction d (normalised here). */
static inline void fx_gaze(struct recording *r, int64_t t, const vec3 o, const vec3 d)
{
	float len = sqrtf(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
	struct rec_gaze *g;
	int k;

	r->gaze = realloc(r->gaze, (r->ngaze + 1) * sizeof(*r->gaze));
	g = &r->gaze[r->ngaze++];
	memset(g, 0, sizeof(*g));
	g->t_ns = t;
	for (k = 0; k < 3; k++) {
		g->o[k] = o[k];
		g->d[k] = d[k] / len;
	}
	r->gaze_rows = r->ngaze;
}

/* Appends an action; obj -1 for none. */
static inline void fx_action(struct recording *r, int64_t start, int64_t end,
			     const char *verb, long obj, const char *goal)
{
	struct rec_action *a;

	r->actions = realloc(r->actions, (r->nactions + 1) * sizeof(*r->actions));
	a = &r->actions[r->nactions++];
	memset(a, 0, sizeof(*a));
	a->start_ns = start;
	a->end_ns = end;
	a->verb = verb ? strdup(verb) : NULL;
	a->object = obj;
	a->hand = REC_HAND_RIGHT;
	a->description = strdup(verb ? verb : "step");
	a->goal = goal ? strdup(goal) : NULL;
	a->step_id = -1;
}

/* Finishes the recording like a loader; returns recording__finish()'s result. */
static inline int fx_finish(struct recording *r)
{
	return recording__finish(r);
}

#endif /* TOOLS2_FIXTURE_H */
