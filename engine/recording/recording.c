/* SPDX-License-Identifier: MIT */
/* The recording model: layout detection, dispatch, queries, invariants. */
#include "recording.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "buf.h"
#include "err.h"

static bool file_exists(const char *dir, const char *name)
{
	char p[4096];
	struct stat st;

	if (snprintf(p, sizeof(p), "%s/%s", dir, name) >= (int)sizeof(p))
		return false;
	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

bool recording__is_file(const char *dir, const char *name)
{
	return file_exists(dir, name);
}

char *recording__path(const char *dir, const char *name)
{
	struct buf b;

	buf_init(&b, 1 << 16);
	if (buf_addf(&b, "%s/%s", dir, name)) {
		buf_release(&b);
		return NULL;
	}
	return buf_detach(&b);
}

int recording__reserve(void *parr, size_t *cap, size_t n, size_t size)
{
	void *arr, *p;
	size_t ncap;

	if (n <= *cap)
		return 0;
	ncap = *cap ? *cap : 16;
	while (ncap < n) {
		if (ncap > SIZE_MAX / 2 / size)
			return ENG_ENOMEM;
		ncap *= 2;
	}
	memcpy(&arr, parr, sizeof(arr));
	p = realloc(arr, ncap * size);
	if (!p)
		return ENG_ENOMEM;
	memcpy(parr, &p, sizeof(p));
	*cap = ncap;
	return 0;
}

const char *recording_layout_name(enum rec_layout l)
{
	switch (l) {
	case REC_LAYOUT_NATIVE: return "proxima-recording/1";
	case REC_LAYOUT_ADT: return "adt";
	case REC_LAYOUT_MPS: return "aria-mps";
	case REC_LAYOUT_EGOEXO: return "egoexo4d";
	default: return "unknown";
	}
}

enum rec_layout recording_detect(const char *path)
{
	struct stat st;

	if (stat(path, &st) != 0) {
		err_set(ENG_ENOENT, "cannot open '%s': no such file or directory", path);
		return REC_LAYOUT_AUTO;
	}
	if (!S_ISDIR(st.st_mode)) {
		err_set(ENG_EINVAL, "'%s' is not a folder", path);
		return REC_LAYOUT_AUTO;
	}
	if (file_exists(path, "recording.json"))
		return REC_LAYOUT_NATIVE;
	if (file_exists(path, "scene_objects.csv") || file_exists(path, "instances.json") ||
	    file_exists(path, "aria_trajectory.csv"))
		return REC_LAYOUT_ADT;
	if (file_exists(path, "take.json") || file_exists(path, "takes.json") ||
	    file_exists(path, "keystep.json"))
		return REC_LAYOUT_EGOEXO;
	/* an Ego-Exo4D download: <root>/takes/<take_name>/ with <root>/takes.json */
	if (file_exists(path, "trajectory/closed_loop_trajectory.csv") &&
	    (file_exists(path, "../../takes.json") || file_exists(path, "../takes.json")))
		return REC_LAYOUT_EGOEXO;
	if (file_exists(path, "slam/closed_loop_trajectory.csv") ||
	    file_exists(path, "trajectory/closed_loop_trajectory.csv") ||
	    file_exists(path, "closed_loop_trajectory.csv"))
		return REC_LAYOUT_MPS;
	err_set(ENG_EINVAL,
		"'%s': unknown layout (no recording.json, ADT scene_objects.csv, "
		"Ego-Exo4D take.json or MPS closed_loop_trajectory.csv)", path);
	return REC_LAYOUT_AUTO;
}

void recording_free(struct recording *rec)
{
	size_t i;

	if (!rec)
		return;
	free(rec->id);
	free(rec->root);
	free(rec->traj);
	free(rec->gaze);
	for (i = 0; i < rec->nobjects; i++) {
		free(rec->objects[i].id);
		free(rec->objects[i].name);
		free(rec->objects[i].category);
	}
	free(rec->objects);
	free(rec->obj_poses);
	for (i = 0; i < rec->nactions; i++) {
		free(rec->actions[i].verb);
		free(rec->actions[i].description);
		free(rec->actions[i].goal);
	}
	free(rec->actions);
	free(rec->video.path);
	free(rec->warnings);
	for (i = 0; i < ARRAY_SIZE(rec->info_own); i++)
		free(rec->info_own[i]);
	free(rec);
}

int recording_load(const char *path, enum rec_layout layout,
		   struct recording **out)
{
	struct recording *rec = NULL;
	int rc = 0;

	err_clear();
	if (layout == REC_LAYOUT_AUTO) {
		struct stat st;

		layout = recording_detect(path);
		if (layout == REC_LAYOUT_AUTO)
			return stat(path, &st) ? ENG_ENOENT : ENG_EINVAL;
	}
	rec = calloc(1, sizeof(*rec));
	if (!rec)
		return ENG_ENOMEM;
	rec->root = strdup(path);
	if (!rec->root) {
		rc = ENG_ENOMEM;
		goto out;
	}
	rec->layout = recording_layout_name(layout);
	switch (layout) {
	case REC_LAYOUT_NATIVE: rc = recording__load_native(path, rec); break;
	case REC_LAYOUT_ADT: rc = recording__load_adt(path, rec); break;
	case REC_LAYOUT_MPS: rc = recording__load_mps(path, rec); break;
	case REC_LAYOUT_EGOEXO: rc = recording__load_egoexo(path, rec); break;
	default: rc = err_set(ENG_EINVAL, "'%s': unknown layout", path); break;
	}
	if (rc)
		goto out;
	if (!rec->id) {
		/* the last path component, whatever trailing slashes the path has */
		size_t end = strlen(path), start;

		while (end > 1 && path[end - 1] == '/')
			end--;
		start = end;
		while (start > 0 && path[start - 1] != '/')
			start--;
		rec->id = strndup(path + start, end - start);
		if (!rec->id) {
			rc = ENG_ENOMEM;
			goto out;
		}
	}
	rc = recording__finish(rec);
out:
	if (rc) {
		recording_free(rec);
		return rc;
	}
	*out = rec;
	return 0;
}

int64_t recording_t0(const struct recording *rec)
{
	return rec->ntraj ? rec->traj[0].t_ns : 0;
}

int64_t recording_t1(const struct recording *rec)
{
	return rec->ntraj ? rec->traj[rec->ntraj - 1].t_ns : 0;
}

int recording_camera_at(const struct recording *rec, int64_t t,
			struct pose *out)
{
	return pose_sample_at(rec->traj, rec->ntraj, t, 0, out);
}

void recording_object_pose_at(const struct recording *rec, size_t i,
			      int64_t t, struct pose *out)
{
	const struct rec_object *o = &rec->objects[i];

	if (o->motion == REC_STATIC || !o->pose_count ||
	    t < rec->obj_poses[o->pose_first].t_ns) {
		*out = o->static_pose;
		return;
	}
	/* clamped: an object rests where it was first or last seen */
	pose_sample_at(rec->obj_poses + o->pose_first, o->pose_count, t,
		       INT64_MAX / 2, out);
}

void recording_object_box_at(const struct recording *rec, size_t i,
			     int64_t t, struct obb *out)
{
	struct pose p;

	recording_object_pose_at(rec, i, t, &p);
	obb_from_local(&p, rec->objects[i].local_c, rec->objects[i].half, out);
}

long recording_find_object(const struct recording *rec, const char *id)
{
	size_t i;

	for (i = 0; i < rec->nobjects; i++)
		if (!strcmp(rec->objects[i].id, id))
			return (long)i;
	return -1;
}

int recording__warn(struct recording *rec, const char *fmt, ...)
{
	struct buf b;
	va_list ap;
	int rc;

	buf_init(&b, 1 << 20);
	if (rec->warnings)
		rc = buf_adds(&b, rec->warnings);
	else
		rc = 0;
	if (!rc) {
		va_start(ap, fmt);
		rc = buf_vaddf(&b, fmt, ap);
		va_end(ap);
	}
	if (!rc)
		rc = buf_adds(&b, "\n");
	if (rc == ENG_ETOOBIG) { /* keep the first megabyte of warnings */
		buf_release(&b);
		return 0;
	}
	if (rc) {
		buf_release(&b);
		return rc;
	}
	free(rec->warnings);
	rec->warnings = buf_detach(&b);
	return rec->warnings ? 0 : ENG_ENOMEM;
}

static void stream_info(struct rec_stream_info *si, size_t n, int64_t a,
			int64_t b)
{
	si->count = n;
	si->t_first = n ? a : 0;
	si->t_last = n ? b : 0;
	si->rate_hz = (n > 1 && b > a) ? (double)(n - 1) * 1e9 / (double)(b - a) : 0;
}

static int cmp_action(const void *pa, const void *pb)
{
	const struct rec_action *a = pa, *b = pb;

	if (a->start_ns != b->start_ns)
		return a->start_ns < b->start_ns ? -1 : 1;
	return (a->end_ns > b->end_ns) - (a->end_ns < b->end_ns);
}

static bool pose_finite(const struct pose *p)
{
	int i;

	for (i = 0; i < 4; i++)
		if (!isfinite(p->q[i]))
			return false;
	for (i = 0; i < 3; i++)
		if (!isfinite(p->t[i]))
			return false;
	return true;
}

int recording__finish(struct recording *rec)
{
	size_t i;
	float lo = INFINITY;

	if (!rec->ntraj)
		return err_set(ENG_EINVAL, "%s: the trajectory is empty", rec->root);
	for (i = 0; i < rec->ntraj; i++) {
		if (!pose_finite(&rec->traj[i].pose))
			return err_set(ENG_EINVAL, "%s: trajectory sample %zu is not finite",
				       rec->root, i);
		if (i && rec->traj[i].t_ns <= rec->traj[i - 1].t_ns)
			return err_set(ENG_EINVAL,
				       "%s: trajectory timestamps out of order at sample %zu",
				       rec->root, i);
	}
	for (i = 1; i < rec->ngaze; i++)
		if (rec->gaze[i].t_ns < rec->gaze[i - 1].t_ns)
			return err_set(ENG_EINVAL, "%s: gaze timestamps out of order at sample %zu",
				       rec->root, i);
	if (rec->nactions > 1)
		qsort(rec->actions, rec->nactions, sizeof(*rec->actions), cmp_action);

	stream_info(&rec->info_traj, rec->ntraj, rec->traj[0].t_ns,
		    rec->traj[rec->ntraj - 1].t_ns);
	stream_info(&rec->info_gaze, rec->ngaze, rec->ngaze ? rec->gaze[0].t_ns : 0,
		    rec->ngaze ? rec->gaze[rec->ngaze - 1].t_ns : 0);
	{
		int64_t a = INT64_MAX, b = INT64_MIN;

		for (i = 0; i < rec->nobj_poses; i++) {
			if (rec->obj_poses[i].t_ns < a)
				a = rec->obj_poses[i].t_ns;
			if (rec->obj_poses[i].t_ns > b)
				b = rec->obj_poses[i].t_ns;
		}
		stream_info(&rec->info_objects, rec->nobj_poses, a, b);
		/* the mean rate per dynamic object, not over all samples at once */
		{
			double steps = 0, span = 0;

			for (i = 0; i < rec->nobjects; i++) {
				const struct rec_object *o = &rec->objects[i];

				if (o->motion != REC_DYNAMIC || o->pose_count < 2)
					continue;
				steps += (double)(o->pose_count - 1);
				span += (double)(rec->obj_poses[o->pose_first + o->pose_count - 1].t_ns -
						 rec->obj_poses[o->pose_first].t_ns);
			}
			rec->info_objects.rate_hz = span > 0 ? steps * 1e9 / span : 0;
		}
	}
	stream_info(&rec->info_actions, rec->nactions,
		    rec->nactions ? rec->actions[0].start_ns : 0,
		    rec->nactions ? rec->actions[rec->nactions - 1].start_ns : 0);

	for (i = 0; i < rec->nobjects; i++) {
		struct obb b;
		vec3 blo = { 0, 0, 0 }, bhi = { 0, 0, 0 }; /* out parameters */

		recording_object_box_at(rec, i, recording_t0(rec), &b);
		obb_aabb(&b, blo, bhi);
		if (blo[2] < lo)
			lo = blo[2];
	}
	if (!isfinite(lo)) {
		float zsum = 0;

		for (i = 0; i < rec->ntraj; i++)
			zsum += rec->traj[i].pose.t[2];
		lo = zsum / (float)rec->ntraj - 1.6f;
	}
	rec->floor_z = lo;
	return 0;
}
