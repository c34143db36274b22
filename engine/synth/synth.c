/* SPDX-License-Identifier: MIT */
/*
 * Synthetic recordings: the entry points, the random number generator and
 * the shared queries. The scene tables are in synth_scene.c, the wearer's
 * walk and actions in synth_sim.c, the gaze in synth_gaze.c and the file
 * output in synth_write.c.
 */
#include "synth.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "banned.h"
#include "err.h"
#include "rng.h"

static const char *const scene_names[SYNTH_NSCENES] = { "kitchen", "apartment", "office" };

/* ======================= Random numbers ======================= */


void synth__rng_seed(struct synth__rng *r, uint64_t seed)
{
	uint64_t x = seed;
	int i;

	for (i = 0; i < 4; i++)
		r->s[i] = rng_next64(&x);
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t synth__rng_next(struct synth__rng *r)
{
	uint64_t *s = r->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

double synth__rng_range(struct synth__rng *r, double lo, double hi)
{
	double u = (double)(synth__rng_next(r) >> 11) * (1.0 / 9007199254740992.0);

	return lo + (hi - lo) * u;
}

size_t synth__rng_below(struct synth__rng *r, size_t n)
{
	if (!n)
		return 0;
	return (size_t)(synth__rng_next(r) % (uint64_t)n);
}

/* ======================= Names ======================= */

int synth_scene_from_name(const char *name, enum synth_scene *out)
{
	int i;

	for (i = 0; i < SYNTH_NSCENES; i++) {
		if (!strcmp(name, scene_names[i])) {
			*out = (enum synth_scene)i;
			return 0;
		}
	}
	return err_set(ENG_EINVAL, "unknown scene '%s' (expected kitchen, apartment or office)",
		       name);
}

const char *synth_scene_name(enum synth_scene s)
{
	if ((int)s < 0 || s >= SYNTH_NSCENES)
		return "?";
	return scene_names[s];
}

/* ======================= Queries ======================= */

void synth_object_pose_at(const struct synth_recording *s, size_t i, int64_t t,
			  struct pose *out)
{
	const struct synth_object *o = &s->objects[i];
	const struct pose_sample *ps;

	if (o->motion != REC_DYNAMIC || !o->pose_count) {
		*out = o->pose;
		return;
	}
	ps = s->obj_poses + o->pose_first;
	if (t < ps[0].t_ns) {
		*out = o->pose;
		return;
	}
	if (pose_sample_at(ps, o->pose_count, t, 0, out))
		*out = ps[o->pose_count - 1].pose;
}

void synth_object_box_at(const struct synth_recording *s, size_t i, int64_t t,
			 struct obb *out)
{
	static const vec3 zero = { 0, 0, 0 };
	struct pose p;

	synth_object_pose_at(s, i, t, &p);
	obb_from_local(&p, zero, s->objects[i].half, out);
}

long synth__first_hit(const struct synth_recording *s, const struct ray *r, int64_t t,
		      float tmax, float *tout)
{
	long best = -1;
	float bt = tmax;
	size_t i;

	for (i = 0; i < s->nobjects; i++) {
		struct obb b;
		float hit;

		synth_object_box_at(s, i, t, &b);
		if (ray_obb(r, &b, bt, &hit) && (best < 0 || hit < bt)) {
			best = (long)i;
			bt = hit;
		}
	}
	*tout = best >= 0 ? bt : 0.0f;
	return best;
}

void synth__camera_pose(double x, double y, double z, double yaw, double pitch,
			struct pose *out)
{
	/* Columns of R_world_camera: right, down, forward (OpenCV axes). */
	double cy = cos(yaw), sy = sin(yaw), cp = cos(pitch), sp = sin(pitch);
	double f[3] = { cp * cy, cp * sy, sp };
	double rt[3] = { sy, -cy, 0 };
	double dn[3] = { f[1] * rt[2] - f[2] * rt[1], f[2] * rt[0] - f[0] * rt[2],
			 f[0] * rt[1] - f[1] * rt[0] };
	mat3 m;
	int k;

	for (k = 0; k < 3; k++) {
		m[0][k] = (float)rt[k];
		m[1][k] = (float)dn[k];
		m[2][k] = (float)f[k];
	}
	glm_mat3_quat(m, out->q);
	/* A fixed sign (w >= 0) keeps the written quaternions stable. */
	if (out->q[3] < 0)
		glm_vec4_negate(out->q);
	glm_quat_normalize(out->q);
	out->t[0] = (float)x;
	out->t[1] = (float)y;
	out->t[2] = (float)z;
}

/* ======================= Generation ======================= */

void synth_free(struct synth_recording *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->nactions; i++)
		free(s->actions[i].description);
	free(s->traj);
	free(s->gaze);
	free(s->fixations);
	free(s->objects);
	free(s->obj_poses);
	free(s->actions);
	free(s->carries);
	free(s);
}

/* Scene-specific constants mixed into the seed so scenes differ for one seed. */
static uint64_t scene_salt(enum synth_scene sc)
{
	return 0x5eed0000ULL + (uint64_t)sc * 0x1000193ULL;
}

int synth_generate(const struct synth_params *p, struct synth_recording **out)
{
	const struct synth__scene_tpl *sc;
	struct synth_recording *s = NULL;
	struct synth__attn *attn = NULL;
	struct synth__rng rng_scene, rng_sim, rng_gaze;
	size_t nattn = 0;
	double frames;
	int rc = 0;

	if (!isfinite(p->minutes) || p->minutes < SYNTH_MINUTES_MIN ||
	    p->minutes > SYNTH_MINUTES_MAX)
		return err_set(ENG_ERANGE, "minutes: %g is not in [%g, %g]", p->minutes,
			       SYNTH_MINUTES_MIN, SYNTH_MINUTES_MAX);
	sc = synth__scene(p->scene);
	if (!sc)
		return err_set(ENG_EINVAL, "scene: %d is not a scene", (int)p->scene);
	s = calloc(1, sizeof(*s));
	if (!s)
		return err_set(ENG_ENOMEM, "synth: out of memory");
	s->params = *p;
	{
		/* "10min", "0.5min": the shortest form that round-trips %g. */
		char mins[32];

		snprintf(mins, sizeof(mins), "%g", p->minutes);
		snprintf(s->id, sizeof(s->id), "synth-%s-s%llu-%smin", sc->name,
			 (unsigned long long)p->seed, mins);
	}
	s->camera.model = REC_CAM_PINHOLE;
	s->camera.width = 640;
	s->camera.height = 480;
	s->camera.fx = 320;
	s->camera.fy = 320;
	s->camera.cx = 320;
	s->camera.cy = 240;
	s->camera.fov_deg = 90;
	s->room_w = sc->room_w;
	s->room_d = sc->room_d;
	frames = floor(p->minutes * 60.0 * SYNTH_TRAJ_HZ + 1e-9);
	s->ntraj = (size_t)frames + 1;

	/* Three independent streams: changing the gaze never moves the wearer. */
	synth__rng_seed(&rng_scene, p->seed ^ scene_salt(p->scene));
	synth__rng_seed(&rng_sim, synth__rng_next(&rng_scene) ^ 0x51a1ULL);
	synth__rng_seed(&rng_gaze, synth__rng_next(&rng_scene) ^ 0x6a2eULL);

	rc = synth__build_objects(s, sc, &rng_scene);
	if (rc)
		goto out;
	rc = synth__simulate(s, sc, &rng_sim, &attn, &nattn);
	if (rc)
		goto out;
	rc = synth__gaze(s, attn, nattn, &rng_gaze);
out:
	free(attn);
	if (rc) {
		synth_free(s);
		return rc;
	}
	*out = s;
	return 0;
}
