/* SPDX-License-Identifier: MIT */
/* The recording model: the loader table, detection, queries, invariants. */
#include "recording.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "buf.h"
#include "err.h"

bool recording__is_file(const char *dir, const char *name)
{
	char p[4096];
	struct stat st;

	if (snprintf(p, sizeof(p), "%s/%s", dir, name) >= (int)sizeof(p))
		return false;
	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
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

int recording__attach_video(const char *path, struct recording *rec,
			    const char *const *names, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (!recording__is_file(path, names[i]))
			continue;
		rec->video.path = strdup(names[i]);
		if (!rec->video.path)
			return ENG_ENOMEM;
		rec->video.t0_ns = rec->ntraj ? rec->traj[0].t_ns : 0;
		rec->video.fps = 0;
		return 0;
	}
	return 0;
}

/* Arrays from this size on are laid on huge pages (recording__alloc). */
#define REC_HUGE_FROM ((size_t)4 << 20)
#define REC_HUGE_PAGE ((size_t)2 << 20)

void *recording__alloc(size_t bytes)
{
	void *p;

	if (bytes < REC_HUGE_FROM)
		return malloc(bytes ? bytes : 1);
	bytes = (bytes + REC_HUGE_PAGE - 1) & ~(REC_HUGE_PAGE - 1);
	p = aligned_alloc(REC_HUGE_PAGE, bytes);
	/* only a hint: where the kernel has no huge pages, small ones serve */
	if (p)
		(void)madvise(p, bytes, MADV_HUGEPAGE);
	return p;
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
	if (ncap * size < REC_HUGE_FROM) {
		p = realloc(arr, ncap * size);
	} else {
		p = recording__alloc(ncap * size);
		if (p && arr)
			memcpy(p, arr, *cap * size);
		if (p)
			free(arr);
	}
	if (!p)
		return ENG_ENOMEM;
	memcpy(parr, &p, sizeof(p));
	*cap = ncap;
	return 0;
}

/* ======================= The loader table ======================= */

/*
 * One row per layout, in detection order (the first row whose detect()
 * says yes wins: an Ego-Exo4D take also holds an MPS trajectory, so it is
 * asked before MPS). `what` names the file that detect() looks for, for
 * the message when no row fits. Adding a layout is one enum value, one
 * loader file with its detect and load functions, and one row here.
 */
struct rec_loader {
	enum rec_layout layout;
	const char *name;          /* printed, and stored in rec->layout */
	const char *aliases[3];    /* also accepted by recording_layout_from_name() */
	const char *what;          /* what detect() looks for */
	bool (*detect)(const char *path);
	int (*load)(const char *path, struct recording *rec);
};

static const struct rec_loader loaders[] = {
	{ REC_LAYOUT_NATIVE, "proxima-recording/1", { "native" }, "recording.json",
	  recording__detect_native, recording__load_native },
	{ REC_LAYOUT_ADT, "adt", { "adt" }, "ADT scene_objects.csv",
	  recording__detect_adt, recording__load_adt },
	{ REC_LAYOUT_EGOEXO, "egoexo4d", { "egoexo" }, "Ego-Exo4D take.json",
	  recording__detect_egoexo, recording__load_egoexo },
	{ REC_LAYOUT_MPS, "aria-mps", { "mps" }, "MPS closed_loop_trajectory.csv",
	  recording__detect_mps, recording__load_mps },
};

static const struct rec_loader *loader_of(enum rec_layout l)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(loaders); i++)
		if (loaders[i].layout == l)
			return &loaders[i];
	return NULL;
}

const char *recording_layout_name(enum rec_layout l)
{
	const struct rec_loader *ld = loader_of(l);

	return ld ? ld->name : "unknown";
}

int recording_layout_from_name(const char *s, enum rec_layout *out)
{
	size_t i, k;

	for (i = 0; s && i < ARRAY_SIZE(loaders); i++) {
		const struct rec_loader *ld = &loaders[i];
		bool hit = !strcmp(s, ld->name);

		for (k = 0; !hit && k < ARRAY_SIZE(ld->aliases) && ld->aliases[k]; k++)
			hit = !strcmp(s, ld->aliases[k]);
		if (hit) {
			*out = ld->layout;
			return 0;
		}
	}
	return ENG_EINVAL;
}

void recording_layout_names(char *out, size_t size)
{
	size_t i, used = 0;

	if (!size)
		return;
	out[0] = '\0';
	/* in enum order, not detection order */
	for (i = 0; i < ARRAY_SIZE(loaders); i++) {
		const struct rec_loader *ld = loader_of((enum rec_layout)(REC_LAYOUT_AUTO + 1 + i));
		const char *n = ld && ld->aliases[0] ? ld->aliases[0] : ld ? ld->name : "?";
		int w = snprintf(out + used, size - used, "%s%s", i ? ", " : "", n);

		if (w < 0 || (size_t)w >= size - used)
			break;
		used += (size_t)w;
	}
}

enum rec_layout recording_detect(const char *path)
{
	struct stat st;
	char what[512];
	size_t i, used = 0;

	if (stat(path, &st) != 0) {
		err_set(ENG_ENOENT, "cannot open '%s': no such file or directory", path);
		return REC_LAYOUT_AUTO;
	}
	if (!S_ISDIR(st.st_mode)) {
		err_set(ENG_EINVAL, "'%s' is not a folder", path);
		return REC_LAYOUT_AUTO;
	}
	for (i = 0; i < ARRAY_SIZE(loaders); i++)
		if (loaders[i].detect(path))
			return loaders[i].layout;
	what[0] = '\0';
	for (i = 0; i < ARRAY_SIZE(loaders); i++) {
		const char *sep = !i ? "" : i + 1 == ARRAY_SIZE(loaders) ? " or " : ", ";
		int w = snprintf(what + used, sizeof(what) - used, "%s%s", sep, loaders[i].what);

		if (w < 0 || (size_t)w >= sizeof(what) - used)
			break;
		used += (size_t)w;
	}
	err_set(ENG_EINVAL, "'%s': unknown layout (no %s)", path, what);
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
	free(rec->video.frame_ns);
	free(rec->warnings);
	for (i = 0; i < ARRAY_SIZE(rec->info_own); i++)
		free(rec->info_own[i]);
	free(rec);
}

int recording_load(const char *path, enum rec_layout layout,
		   struct recording **out)
{
	const struct rec_loader *ld;
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
	ld = loader_of(layout);
	if (!ld) {
		rc = err_set(ENG_EINVAL, "'%s': unknown layout", path);
		goto out;
	}
	rec->layout = ld->name;
	rc = ld->load(path, rec);
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

/*
 * Time bounds, so that no later loop over a span can run for ever or
 * overflow: every timestamp within +-REC_T_LIMIT_NS, a trajectory of at
 * most REC_MAX_SPAN_NS, and a warning for each stream with samples more
 * than REC_OUTSIDE_NS outside the trajectory's span (a stray row).
 */
static int check_times(struct recording *rec)
{
	int64_t t0 = rec->traj[0].t_ns, t1 = rec->traj[rec->ntraj - 1].t_ns;
	size_t i, out_g = 0, out_o = 0, out_a = 0;
	int rc = 0;

	if (t0 < -REC_T_LIMIT_NS || t1 > REC_T_LIMIT_NS)
		return err_set(ENG_ERANGE, "%s: trajectory time %lld ns is beyond +-2^62 ns",
			       rec->root, (long long)(t0 < -REC_T_LIMIT_NS ? t0 : t1));
	if (t1 - t0 > REC_MAX_SPAN_NS)
		return err_set(ENG_ERANGE, "%s: the trajectory spans %.0f s (from t_ns %lld to %lld), "
			       "more than the %.0f s a recording may span", rec->root,
			       (double)(t1 - t0) / 1e9, (long long)t0, (long long)t1,
			       (double)REC_MAX_SPAN_NS / 1e9);
	for (i = 0; i < rec->ngaze; i++) {
		int64_t t = rec->gaze[i].t_ns;

		if (t < -REC_T_LIMIT_NS || t > REC_T_LIMIT_NS)
			return err_set(ENG_ERANGE, "%s: gaze sample %zu at %lld ns is beyond +-2^62 ns",
				       rec->root, i, (long long)t);
		out_g += t < t0 - REC_OUTSIDE_NS || t > t1 + REC_OUTSIDE_NS;
	}
	for (i = 0; i < rec->nobj_poses; i++) {
		int64_t t = rec->obj_poses[i].t_ns;

		if (t < -REC_T_LIMIT_NS || t > REC_T_LIMIT_NS)
			return err_set(ENG_ERANGE, "%s: object pose sample %zu at %lld ns is beyond "
				       "+-2^62 ns", rec->root, i, (long long)t);
		out_o += t < t0 - REC_OUTSIDE_NS || t > t1 + REC_OUTSIDE_NS;
	}
	for (i = 0; i < rec->nactions; i++) {
		const struct rec_action *a = &rec->actions[i];

		if (a->start_ns < -REC_T_LIMIT_NS || a->end_ns > REC_T_LIMIT_NS)
			return err_set(ENG_ERANGE, "%s: action %zu (%lld .. %lld ns) is beyond +-2^62 ns",
				       rec->root, i, (long long)a->start_ns, (long long)a->end_ns);
		out_a += a->end_ns < t0 - REC_OUTSIDE_NS || a->start_ns > t1 + REC_OUTSIDE_NS;
	}
	if (out_g)
		rc = recording__warn(rec, "%zu gaze samples lie more than %.0f s outside the "
				     "trajectory [%lld, %lld] ns", out_g, REC_OUTSIDE_NS / 1e9,
				     (long long)t0, (long long)t1);
	if (!rc && out_o)
		rc = recording__warn(rec, "%zu object pose samples lie more than %.0f s outside the "
				     "trajectory [%lld, %lld] ns", out_o, REC_OUTSIDE_NS / 1e9,
				     (long long)t0, (long long)t1);
	if (!rc && out_a)
		rc = recording__warn(rec, "%zu actions lie more than %.0f s outside the trajectory "
				     "[%lld, %lld] ns", out_a, REC_OUTSIDE_NS / 1e9, (long long)t0,
				     (long long)t1);
	return rc;
}

int recording__finish(struct recording *rec)
{
	size_t i;
	float lo = INFINITY;
	int rc;

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
	rc = check_times(rec);
	if (rc)
		return rc;
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
