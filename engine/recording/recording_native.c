/* SPDX-License-Identifier: MIT */
/*
 * The native proxima-recording/1 loader (schemas/proxima-recording.schema.json):
 * recording.json + trajectory.csv + gaze.csv + objects.json +
 * object_poses.csv + actions.json. Also the objects and object-pose
 * readers that the Aria MPS loader reuses.
 */
#include "recording.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "banned.h"
#include "csv.h"
#include "err.h"
#include "jsonfile.h"

#define NATIVE_FORMAT "proxima-recording/1"
/* Coordinates beyond this (m) are rejected as garbage. */
#define NATIVE_MAX_COORD 1e6
/* Largest accepted image side, pixels. */
#define NATIVE_MAX_PIXELS 100000

/* ======================= Small helpers ======================= */

/*
 * Cells cols[0 .. n-1] of the current row read by csv_f64s() into v, the
 * first ncoord of them coordinates that must fit the float range: the
 * first error that reading and checking each cell in turn would meet.
 */
static int get_numbers(const struct csv *c, const size_t *cols, size_t n, size_t ncoord,
		       double *v)
{
	size_t nread, i;
	int rc = csv_f64s(c, cols, n, v, &nread);

	for (i = 0; i < ncoord && i < nread; i++)
		if (fabs(v[i]) > NATIVE_MAX_COORD)
			return csv_err(c, ENG_ERANGE, "column '%s': %g is out of range (|v| > %g)",
				       csv_header(c, cols[i]), v[i], NATIVE_MAX_COORD);
	return rc;
}

/* Columns of a pose CSV, found by name: t_ns, then tx ty tz qx qy qz qw. */
struct pose_cols {
	size_t t, v[7];
};

static int need_pose_cols(const struct csv *c, struct pose_cols *pc)
{
	static const char *const names[7] = { "tx", "ty", "tz", "qx", "qy", "qz", "qw" };
	size_t k;
	int rc = csv_need(c, "t_ns", &pc->t);

	for (k = 0; k < 7 && !rc; k++)
		rc = csv_need(c, names[k], &pc->v[k]);
	return rc;
}

/*
 * The pose of the current row: a zero quaternion is an error, a non-unit
 * one is normalised.
 */
static int row_pose(const struct csv *c, const struct pose_cols *pc, struct pose_sample *s)
{
	double v[7];
	int rc = csv_i64(c, pc->t, &s->t_ns);

	rc = rc ? rc : get_numbers(c, pc->v, 7, 3, v);
	if (rc)
		return rc;
	if (fabs(v[3]) > 1e6 || fabs(v[4]) > 1e6 || fabs(v[5]) > 1e6 || fabs(v[6]) > 1e6)
		return csv_err(c, ENG_ERANGE, "quaternion component out of range");
	pose_set(&s->pose, (float)v[3], (float)v[4], (float)v[5], (float)v[6], (float)v[0],
		 (float)v[1], (float)v[2]);
	if (pose_normalize(&s->pose))
		return csv_err(c, ENG_EINVAL, "zero quaternion (qx,qy,qz,qw all 0)");
	return 0;
}

/* A quaternion from JSON [x,y,z,w]; zero is an error, non-unit normalised. */
static int json_pose(const cJSON *obj, const char *key, bool required, const char *ctx,
		     struct pose *p, bool *present)
{
	const cJSON *po = cJSON_GetObjectItemCaseSensitive(obj, key);
	char sub[1100];
	double t[3], q[4];
	int rc = 0;

	*present = false;
	if (!po || cJSON_IsNull(po)) {
		if (required)
			return err_set(ENG_EPARSE, "%s.%s: missing", ctx, key);
		return 0;
	}
	snprintf(sub, sizeof(sub), "%.1000s.%.64s", ctx, key);
	if (!cJSON_IsObject(po))
		return err_set(ENG_EPARSE,
			       "%s: expected an object {\"t\": [x,y,z], \"q\": [x,y,z,w]}", sub);
	rc = rc ? rc : jsonfile_vec(po, "t", 3, true, sub, t);
	rc = rc ? rc : jsonfile_vec(po, "q", 4, true, sub, q);
	if (rc)
		return rc;
	if (fabs(t[0]) > NATIVE_MAX_COORD || fabs(t[1]) > NATIVE_MAX_COORD ||
	    fabs(t[2]) > NATIVE_MAX_COORD)
		return err_set(ENG_ERANGE, "%s.t: coordinate out of range", sub);
	if (fabs(q[0]) > 1e6 || fabs(q[1]) > 1e6 || fabs(q[2]) > 1e6 || fabs(q[3]) > 1e6)
		return err_set(ENG_ERANGE, "%s.q: component out of range", sub);
	pose_set(p, (float)q[0], (float)q[1], (float)q[2], (float)q[3], (float)t[0], (float)t[1],
		 (float)t[2]);
	if (pose_normalize(p))
		return err_set(ENG_EINVAL, "%s.q: zero quaternion", sub);
	*present = true;
	return 0;
}

/*
 * A stream file name from recording.json: a relative path that stays in
 * the recording folder (no leading '/', no ".." component).
 */
static int check_rel_path(const char *ctx, const char *key, const char *v)
{
	const char *s = v;

	if (!*v)
		return err_set(ENG_EPARSE, "%s.%s: empty file name", ctx, key);
	if (*v == '/')
		goto bad;
	while (*s) {
		size_t n = strcspn(s, "/");

		if (n == 2 && s[0] == '.' && s[1] == '.')
			goto bad;
		s += n;
		if (*s == '/')
			s++;
	}
	return 0;
bad:
	return err_set(ENG_EPARSE,
		       "%s.%s: '%s' must be a relative path inside the recording folder", ctx, key,
		       v);
}

static char *dup_or_empty(const char *s)
{
	return strdup(s ? s : "");
}

/* ======================= Objects ======================= */

struct id_index {
	const char *id;
	size_t idx;
};

static int cmp_id_index(const void *a, const void *b)
{
	const struct id_index *x = a, *y = b;

	return strcmp(x->id, y->id);
}

/* A sorted (id, index) table of rec->objects, for lookups by id. */
static int build_id_index(const struct recording *rec, struct id_index **out)
{
	struct id_index *ix = malloc((rec->nobjects ? rec->nobjects : 1) * sizeof(*ix));
	size_t i;

	if (!ix)
		return ENG_ENOMEM;
	for (i = 0; i < rec->nobjects; i++) {
		ix[i].id = rec->objects[i].id;
		ix[i].idx = i;
	}
	qsort(ix, rec->nobjects, sizeof(*ix), cmp_id_index);
	*out = ix;
	return 0;
}

static long find_id(const struct id_index *ix, size_t n, const char *id)
{
	struct id_index key = { id, 0 };
	const struct id_index *hit = n ? bsearch(&key, ix, n, sizeof(*ix), cmp_id_index) : NULL;

	return hit ? (long)hit->idx : -1;
}

/*
 * Marker for "no resting pose given" while loading: an all-zero
 * quaternion (never a valid rotation). Replaced before the load ends.
 */
static void mark_no_pose(struct pose *p)
{
	memset(p, 0, sizeof(*p));
}

static bool has_no_pose(const struct pose *p)
{
	return p->q[0] == 0 && p->q[1] == 0 && p->q[2] == 0 && p->q[3] == 0;
}

int recording__read_objects(const char *path, struct recording *rec)
{
	cJSON *root = NULL;
	const cJSON *arr, *it;
	struct id_index *ix = NULL;
	size_t cap = rec->nobjects, i = 0, first = rec->nobjects;
	char ctx[1100];
	int rc;

	rc = jsonfile_read(path, &root);
	if (rc)
		return rc;
	arr = cJSON_IsObject(root) ? cJSON_GetObjectItemCaseSensitive(root, "objects") : NULL;
	if (!cJSON_IsArray(arr)) {
		rc = err_set(ENG_EPARSE, "%s: expected {\"objects\": [...]}", path);
		goto out;
	}
	cJSON_ArrayForEach(it, arr) {
		struct rec_object *o;
		const char *id = NULL, *name = NULL, *cat = NULL, *motion = NULL;
		double c[3] = { 0, 0, 0 }, h[3];
		bool have_pose;
		int k;

		snprintf(ctx, sizeof(ctx), "%s: objects[%zu]", path, i);
		if (!cJSON_IsObject(it)) {
			rc = err_set(ENG_EPARSE, "%s: expected an object", ctx);
			goto out;
		}
		rc = rc ? rc : jsonfile_str(it, "id", true, ctx, &id);
		rc = rc ? rc : jsonfile_str(it, "name", true, ctx, &name);
		rc = rc ? rc : jsonfile_str(it, "category", false, ctx, &cat);
		rc = rc ? rc : jsonfile_vec(it, "center", 3, false, ctx, c);
		rc = rc ? rc : jsonfile_vec(it, "half_extents", 3, true, ctx, h);
		rc = rc ? rc : jsonfile_str(it, "motion", true, ctx, &motion);
		if (rc)
			goto out;
		if (!*id) {
			rc = err_set(ENG_EPARSE, "%s.id: empty", ctx);
			goto out;
		}
		for (k = 0; k < 3; k++) {
			if (h[k] < 0 || h[k] > NATIVE_MAX_COORD) {
				rc = err_set(ENG_ERANGE,
					     "%s.half_extents[%d]: %g is not in [0, %g]", ctx, k,
					     h[k], NATIVE_MAX_COORD);
				goto out;
			}
			if (fabs(c[k]) > NATIVE_MAX_COORD) {
				rc = err_set(ENG_ERANGE, "%s.center[%d]: out of range", ctx, k);
				goto out;
			}
		}
		if (strcmp(motion, "static") && strcmp(motion, "dynamic")) {
			rc = err_set(ENG_EPARSE, "%s.motion: expected \"static\" or \"dynamic\"",
				     ctx);
			goto out;
		}
		rc = recording__reserve(&rec->objects, &cap, rec->nobjects + 1,
					sizeof(*rec->objects));
		if (rc)
			goto out;
		o = &rec->objects[rec->nobjects];
		memset(o, 0, sizeof(*o));
		o->id = strdup(id);
		o->name = strdup(name);
		o->category = dup_or_empty(cat);
		rec->nobjects++;
		if (!o->id || !o->name || !o->category) {
			rc = ENG_ENOMEM;
			goto out;
		}
		for (k = 0; k < 3; k++) {
			o->local_c[k] = (float)c[k];
			o->half[k] = (float)h[k];
		}
		o->motion = motion[0] == 's' ? REC_STATIC : REC_DYNAMIC;
		rc = json_pose(it, "pose", o->motion == REC_STATIC, ctx, &o->static_pose,
			       &have_pose);
		if (rc)
			goto out;
		if (!have_pose)
			mark_no_pose(&o->static_pose);
		i++;
	}
	/* ids are unique */
	rc = build_id_index(rec, &ix);
	if (rc)
		goto out;
	for (i = 1; i < rec->nobjects; i++)
		if (!strcmp(ix[i].id, ix[i - 1].id)) {
			size_t a = ix[i - 1].idx < ix[i].idx ? ix[i - 1].idx : ix[i].idx;
			size_t b = ix[i - 1].idx < ix[i].idx ? ix[i].idx : ix[i - 1].idx;

			rc = err_set(ENG_EPARSE,
				     "%s: objects[%zu].id: '%s' repeats objects[%zu].id", path,
				     b - first, ix[i].id, a - first);
			goto out;
		}
out:
	free(ix);
	cJSON_Delete(root);
	return rc;
}

/* One object_poses.csv row while sorting. */
struct obj_row {
	size_t obj;
	size_t line;
	struct pose_sample s;
};

static int cmp_obj_row(const void *pa, const void *pb)
{
	const struct obj_row *a = pa, *b = pb;

	if (a->obj != b->obj)
		return a->obj < b->obj ? -1 : 1;
	if (a->s.t_ns != b->s.t_ns)
		return a->s.t_ns < b->s.t_ns ? -1 : 1;
	return (a->line > b->line) - (a->line < b->line);
}

/*
 * Sorts the rows by object and time and reports the first row out of time
 * order within its object, or the first repeated time; 0 if none.
 */
static int first_disorder(const char *path, const struct recording *rec, struct obj_row *rows,
			  size_t nrows)
{
	size_t i;

	if (nrows > 1)
		qsort(rows, nrows, sizeof(*rows), cmp_obj_row);
	for (i = 1; i < nrows; i++) {
		/*
		 * Objects may interleave, but each object's own rows come in time
		 * order: a stray row would otherwise be sorted in quietly and
		 * stretch the object's span.
		 */
		if (rows[i].obj == rows[i - 1].obj && rows[i].line < rows[i - 1].line &&
		    rows[i].s.t_ns != rows[i - 1].s.t_ns) {
			return err_set(ENG_EINVAL,
				     "%s:%zu: object '%.64s': timestamps out of order "
				     "(t_ns %lld on line %zu comes after t_ns %lld on line %zu)",
				     path, rows[i - 1].line, rec->objects[rows[i].obj].id,
				     (long long)rows[i - 1].s.t_ns, rows[i - 1].line,
				     (long long)rows[i].s.t_ns, rows[i].line);
		}
		if (rows[i].obj == rows[i - 1].obj && rows[i].s.t_ns == rows[i - 1].s.t_ns) {
			return err_set(
				ENG_EINVAL,
				"%s:%zu: object '%.64s' has two samples at t_ns %lld (line %zu)",
				path, rows[i].line, rec->objects[rows[i].obj].id,
				(long long)rows[i].s.t_ns, rows[i - 1].line);
		}
	}
	return 0;
}

/*
 * The rows (in file order, or sorted by object and time) into
 * rec->obj_poses, by object, each object's in the order given: a counting
 * sort on the object, stable, so that file order becomes the order the
 * sort by object and time gives whenever each object's rows come in time
 * order, as they do in any well-formed file. *stored false, with nothing
 * stored, when some object's times do not strictly increase (the caller
 * then sorts, to report the first fault). Returns 0 or ENG_ENOMEM.
 */
static int poses_by_object(struct recording *rec, const struct obj_row *rows, size_t nrows,
			   bool *stored)
{
	size_t *next = calloc(rec->nobjects + 1, sizeof(*next)), i, k;
	int64_t *last = malloc((rec->nobjects + 1) * sizeof(*last));
	struct pose_sample *out = NULL;
	int rc = 0;

	*stored = false;
	if (!next || !last) {
		rc = ENG_ENOMEM;
		goto out;
	}
	for (k = 0; k < rec->nobjects; k++)
		last[k] = INT64_MIN;
	for (i = 0; i < nrows; i++) {
		k = rows[i].obj;
		if (rows[i].s.t_ns <= last[k])
			goto out;
		last[k] = rows[i].s.t_ns;
		next[k + 1]++;
	}
	out = recording__alloc(nrows * sizeof(*out));
	if (!out) {
		rc = ENG_ENOMEM;
		goto out;
	}
	for (k = 0; k < rec->nobjects; k++) {
		rec->objects[k].pose_first = next[k + 1] ? next[k] : 0;
		rec->objects[k].pose_count = next[k + 1];
		next[k + 1] += next[k];
	}
	for (i = 0; i < nrows; i++)
		out[next[rows[i].obj]++] = rows[i].s;
	free(rec->obj_poses);
	rec->obj_poses = out;
	rec->nobj_poses = nrows;
	*stored = true;
out:
	free(next);
	free(last);
	return rc;
}

int recording__read_object_poses(const char *path, struct recording *rec)
{
	struct csv *c = NULL;
	struct id_index *ix = NULL;
	struct obj_row *rows = NULL;
	size_t nrows = 0, cap = 0, i, col_id;
	struct pose_cols pc;
	bool stored;
	int rc = 0;

	if (!path)
		goto settle;
	rc = csv_open(path, &c);
	if (rc)
		goto out;
	rc = csv_need(c, "object_id", &col_id);
	rc = rc ? rc : need_pose_cols(c, &pc);
	rc = rc ? rc : build_id_index(rec, &ix);
	if (rc)
		goto out;
	for (;;) {
		struct obj_row r;
		long k;

		rc = csv_next(c);
		if (rc <= 0)
			break;
		k = find_id(ix, rec->nobjects, csv_cell(c, col_id));
		if (k < 0) {
			rc = csv_err(c, ENG_EINVAL, "unknown object id '%.64s'",
				     csv_cell(c, col_id));
			goto out;
		}
		if (rec->objects[k].motion == REC_STATIC) {
			rc = csv_err(c, ENG_EINVAL,
				     "object '%.64s' is static but has a pose sample",
				     csv_cell(c, col_id));
			goto out;
		}
		r.obj = (size_t)k;
		r.line = csv_line(c);
		rc = row_pose(c, &pc, &r.s);
		if (rc)
			goto out;
		rc = recording__reserve(&rows, &cap, nrows ? nrows + 1 : csv_rows_estimate(c) + 1,
					sizeof(*rows));
		if (rc)
			goto out;
		rows[nrows++] = r;
	}
	if (rc < 0)
		goto out;
	rc = poses_by_object(rec, rows, nrows, &stored);
	if (!rc && !stored) {
		/* some object's rows are not in time order: sorted, to name the first fault */
		rc = first_disorder(path, rec, rows, nrows);
		/* it finds every fault; should one slip by, the sorted rows are stored */
		rc = rc ? rc : poses_by_object(rec, rows, nrows, &stored);
	}
	if (rc)
		goto out;
settle:
	for (i = 0; i < rec->nobjects; i++) {
		struct rec_object *o = &rec->objects[i];

		if (!has_no_pose(&o->static_pose))
			continue;
		if (!o->pose_count) {
			rc = err_set(ENG_EINVAL,
				     "object '%.64s' is dynamic but has no pose and no sample in %s",
				     o->id, path ? path : "object_poses.csv (none given)");
			goto out;
		}
		o->static_pose = rec->obj_poses[o->pose_first].pose;
	}
out:
	csv_free(c);
	free(ix);
	free(rows);
	return rc;
}

/* ======================= recording.json ======================= */

static int read_camera(const cJSON *root, const char *file, struct rec_camera *cam)
{
	const cJSON *co = cJSON_GetObjectItemCaseSensitive(root, "camera");
	char ctx[1100];
	const char *model = NULL;
	int64_t w = 0, h = 0;
	double fx = 0, fy = 0, cx, cy, fov = 0;
	int rc = 0;

	/* default: pinhole 640x480, 90 deg horizontal field of view */
	cam->model = REC_CAM_PINHOLE;
	cam->width = 640;
	cam->height = 480;
	cam->fx = cam->fy = 320.0f;
	cam->cx = 320.0f;
	cam->cy = 240.0f;
	cam->fov_deg = 90.0f;
	if (!co || cJSON_IsNull(co))
		return 0;
	snprintf(ctx, sizeof(ctx), "%s: camera", file);
	if (!cJSON_IsObject(co))
		return err_set(ENG_EPARSE, "%s: expected an object", ctx);
	rc = rc ? rc : jsonfile_str(co, "model", true, ctx, &model);
	rc = rc ? rc : jsonfile_i64(co, "width", true, ctx, &w);
	rc = rc ? rc : jsonfile_i64(co, "height", true, ctx, &h);
	rc = rc ? rc : jsonfile_num(co, "fx", false, ctx, &fx);
	rc = rc ? rc : jsonfile_num(co, "fy", false, ctx, &fy);
	rc = rc ? rc : jsonfile_num(co, "fov_deg", false, ctx, &fov);
	if (rc)
		return rc;
	if (strcmp(model, "pinhole") && strcmp(model, "fisheye"))
		return err_set(ENG_EPARSE, "%s.model: expected \"pinhole\" or \"fisheye\"", ctx);
	if (w < 1 || w > NATIVE_MAX_PIXELS || h < 1 || h > NATIVE_MAX_PIXELS)
		return err_set(ENG_ERANGE, "%s: width and height must be in [1, %d]", ctx,
			       NATIVE_MAX_PIXELS);
	if (fx < 0 || fy < 0 || (fx == 0 && cJSON_GetObjectItemCaseSensitive(co, "fx")) ||
	    (fy == 0 && cJSON_GetObjectItemCaseSensitive(co, "fy")))
		return err_set(ENG_ERANGE, "%s: fx and fy must be > 0", ctx);
	if (fov < 0 || fov > 360 || (fov == 0 && cJSON_GetObjectItemCaseSensitive(co, "fov_deg")))
		return err_set(ENG_ERANGE, "%s.fov_deg: must be in (0, 360]", ctx);
	cx = (double)w / 2;
	cy = (double)h / 2;
	rc = rc ? rc : jsonfile_num(co, "cx", false, ctx, &cx);
	rc = rc ? rc : jsonfile_num(co, "cy", false, ctx, &cy);
	if (rc)
		return rc;
	/* the principal point lies in the image, give or take an image */
	if (!(cx >= -(double)w && cx <= 2.0 * (double)w))
		return err_set(ENG_ERANGE, "%s.cx: %g is not in [-width, 2 x width] = [%lld, %lld]",
			       ctx, cx, -(long long)w, 2 * (long long)w);
	if (!(cy >= -(double)h && cy <= 2.0 * (double)h))
		return err_set(ENG_ERANGE,
			       "%s.cy: %g is not in [-height, 2 x height] = [%lld, %lld]", ctx, cy,
			       -(long long)h, 2 * (long long)h);
	/* a focal length past 100 image widths is a field of view under 0.6 degrees */
	if (fx > 100.0 * (double)w || fy > 100.0 * (double)h)
		return err_set(ENG_ERANGE, "%s: fx %g or fy %g is over 100 times the image size",
			       ctx, fx, fy);
	cam->width = (int)w;
	cam->height = (int)h;
	cam->cx = (float)cx;
	cam->cy = (float)cy;
	if (!strcmp(model, "pinhole")) {
		cam->model = REC_CAM_PINHOLE;
		if (fx == 0) {
			if (fov == 0)
				fov = 90;
			if (fov >= 180)
				return err_set(
					ENG_ERANGE,
					"%s.fov_deg: a pinhole needs a field of view below 180",
					ctx);
			fx = ((double)w / 2) / tan(fov * M_PI / 360.0);
		}
		if (fy == 0)
			fy = fx;
		cam->fov_deg = (float)(2.0 * atan(((double)w / 2) / fx) * POSE_RAD2DEG);
	} else {
		cam->model = REC_CAM_FISHEYE;
		if (fov == 0 && fx == 0)
			return err_set(ENG_EPARSE,
				       "%s.fov_deg: missing (a fisheye needs fov_deg or fx)", ctx);
		/* equidistant model: r = f * theta */
		if (fov == 0)
			fov = 2.0 * ((double)w / 2) / fx * POSE_RAD2DEG;
		if (fx == 0)
			fx = ((double)w / 2) / (fov * M_PI / 360.0);
		if (fy == 0)
			fy = fx;
		cam->fov_deg = (float)fov;
	}
	cam->fx = (float)fx;
	cam->fy = (float)fy;
	return 0;
}

static int read_video(const cJSON *root, const char *file, struct rec_video *v, bool *have_t0)
{
	const cJSON *vo = cJSON_GetObjectItemCaseSensitive(root, "video");
	char ctx[1100];
	const char *p = NULL;
	double fps = 0;
	int rc = 0;

	*have_t0 = false;
	if (!vo || cJSON_IsNull(vo))
		return 0;
	snprintf(ctx, sizeof(ctx), "%s: video", file);
	if (!cJSON_IsObject(vo))
		return err_set(ENG_EPARSE, "%s: expected an object", ctx);
	rc = rc ? rc : jsonfile_str(vo, "path", true, ctx, &p);
	rc = rc ? rc : check_rel_path(ctx, "path", p ? p : "");
	rc = rc ? rc : jsonfile_num(vo, "fps", false, ctx, &fps);
	if (!rc && cJSON_GetObjectItemCaseSensitive(vo, "t0_ns")) {
		rc = jsonfile_i64(vo, "t0_ns", true, ctx, &v->t0_ns);
		*have_t0 = !rc;
	}
	if (rc)
		return rc;
	if (fps < 0 || (fps == 0 && cJSON_GetObjectItemCaseSensitive(vo, "fps")) || fps > 1e4)
		return err_set(ENG_ERANGE, "%s.fps: must be in (0, 10000]", ctx);
	v->fps = fps;
	v->path = strdup(p);
	return v->path ? 0 : ENG_ENOMEM;
}

/* ======================= Streams ======================= */

static int read_trajectory(const char *path, struct recording *rec)
{
	struct csv *c = NULL;
	struct pose_cols pc;
	size_t cap = 0;
	int rc;

	rc = csv_open(path, &c);
	if (rc)
		return rc;
	rc = need_pose_cols(c, &pc);
	while (!rc) {
		struct pose_sample s;

		rc = csv_next(c);
		if (rc <= 0)
			break;
		rc = row_pose(c, &pc, &s);
		if (rc)
			break;
		if (rec->ntraj && s.t_ns <= rec->traj[rec->ntraj - 1].t_ns) {
			rc = csv_err(c, ENG_EINVAL,
				     "timestamps out of order (t_ns %lld after %lld)",
				     (long long)s.t_ns, (long long)rec->traj[rec->ntraj - 1].t_ns);
			break;
		}
		rc = recording__reserve(&rec->traj, &cap,
					rec->ntraj ? rec->ntraj + 1 : csv_rows_estimate(c) + 1,
					sizeof(*rec->traj));
		if (!rc)
			rec->traj[rec->ntraj++] = s;
	}
	if (!rc && !rec->ntraj)
		rc = err_set(ENG_EINVAL, "%s: no trajectory samples", path);
	csv_free(c);
	return rc < 0 ? rc : 0;
}

static int read_gaze(const char *path, struct recording *rec)
{
	struct csv *c = NULL;
	size_t col[8], cap = 0, k;
	static const char *const names[8] = {
		"t_ns", "ox", "oy", "oz", "dx", "dy", "dz", "depth_m"
	};
	int rc;

	rc = csv_open(path, &c);
	if (rc)
		return rc;
	for (k = 0; k < 8 && !rc; k++)
		rc = csv_need(c, names[k], &col[k]);
	while (!rc) {
		struct rec_gaze g;
		double v[7], d[3], depth, n;
		bool empty_depth;

		rc = csv_next(c);
		if (rc <= 0)
			break;
		rc = csv_i64(c, col[0], &g.t_ns);
		/* origin, direction and depth (an empty one is 0); only the origin's range is checked */
		empty_depth = csv_empty(c, col[7]);
		rc = rc ? rc : get_numbers(c, col + 1, empty_depth ? 6 : 7, 3, v);
		if (rc)
			break;
		depth = empty_depth ? 0.0 : v[6];
		for (k = 0; k < 3; k++) {
			g.o[k] = (float)v[k];
			d[k] = v[3 + k];
		}
		n = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
		if (!isfinite(n) || n < 1e-12) {
			rc = csv_err(c, ENG_EINVAL, "zero gaze direction");
			break;
		}
		if (depth < 0 || depth > NATIVE_MAX_COORD) {
			rc = csv_err(c, ENG_ERANGE, "column 'depth_m': %g is not in [0, %g]", depth,
				     NATIVE_MAX_COORD);
			break;
		}
		if (rec->ngaze && g.t_ns < rec->gaze[rec->ngaze - 1].t_ns) {
			rc = csv_err(c, ENG_EINVAL,
				     "timestamps out of order (t_ns %lld after %lld)",
				     (long long)g.t_ns, (long long)rec->gaze[rec->ngaze - 1].t_ns);
			break;
		}
		if (rec->ngaze && g.t_ns == rec->gaze[rec->ngaze - 1].t_ns) {
			rc = csv_err(c, ENG_EINVAL, "a second gaze sample at t_ns %lld",
				     (long long)g.t_ns);
			break;
		}
		for (k = 0; k < 3; k++)
			g.d[k] = (float)(d[k] / n);
		g.depth_m = (float)depth;
		rc = recording__reserve(&rec->gaze, &cap,
					rec->ngaze ? rec->ngaze + 1 : csv_rows_estimate(c) + 1,
					sizeof(*rec->gaze));
		if (!rc)
			rec->gaze[rec->ngaze++] = g;
	}
	rec->gaze_rows = rec->ngaze;
	csv_free(c);
	return rc < 0 ? rc : 0;
}

static int parse_hand(const char *s, enum rec_hand *out)
{
	if (!strcmp(s, "left"))
		*out = REC_HAND_LEFT;
	else if (!strcmp(s, "right"))
		*out = REC_HAND_RIGHT;
	else if (!strcmp(s, "both"))
		*out = REC_HAND_BOTH;
	else if (!strcmp(s, "none"))
		*out = REC_HAND_NONE;
	else
		return -1;
	return 0;
}

static int read_actions(const char *path, struct recording *rec)
{
	cJSON *root = NULL;
	const cJSON *arr, *it;
	size_t cap = 0, i = 0;
	char ctx[1100];
	int rc;

	rc = jsonfile_read(path, &root);
	if (rc)
		return rc;
	arr = cJSON_IsObject(root) ? cJSON_GetObjectItemCaseSensitive(root, "actions") : NULL;
	if (!cJSON_IsArray(arr)) {
		rc = err_set(ENG_EPARSE, "%s: expected {\"actions\": [...]}", path);
		goto out;
	}
	cJSON_ArrayForEach(it, arr) {
		struct rec_action *a;
		const char *verb = NULL, *obj = NULL, *hand = NULL, *desc = NULL, *goal = NULL;
		int64_t start = 0, end = 0, step = -1;

		snprintf(ctx, sizeof(ctx), "%s: actions[%zu]", path, i);
		if (!cJSON_IsObject(it)) {
			rc = err_set(ENG_EPARSE, "%s: expected an object", ctx);
			goto out;
		}
		rc = rc ? rc : jsonfile_i64(it, "start_ns", true, ctx, &start);
		rc = rc ? rc : jsonfile_i64(it, "end_ns", true, ctx, &end);
		rc = rc ? rc : jsonfile_str(it, "description", true, ctx, &desc);
		rc = rc ? rc : jsonfile_str(it, "verb", false, ctx, &verb);
		rc = rc ? rc : jsonfile_str(it, "object", false, ctx, &obj);
		rc = rc ? rc : jsonfile_str(it, "hand", false, ctx, &hand);
		rc = rc ? rc : jsonfile_str(it, "goal", false, ctx, &goal);
		rc = rc ? rc : jsonfile_i64(it, "step_id", false, ctx, &step);
		if (rc)
			goto out;
		if (end < start) {
			rc = err_set(ENG_EINVAL, "%s.end_ns: %lld is before start_ns %lld", ctx,
				     (long long)end, (long long)start);
			goto out;
		}
		if (step < -1 || step > 2147483647) {
			rc = err_set(ENG_ERANGE, "%s.step_id: out of range", ctx);
			goto out;
		}
		rc = recording__reserve(&rec->actions, &cap, rec->nactions + 1,
					sizeof(*rec->actions));
		if (rc)
			goto out;
		a = &rec->actions[rec->nactions];
		memset(a, 0, sizeof(*a));
		rec->nactions++;
		a->start_ns = start;
		a->end_ns = end;
		a->step_id = (int)step;
		a->object = -1;
		if (obj) {
			a->object = recording_find_object(rec, obj);
			if (a->object < 0) {
				rc = err_set(ENG_EINVAL, "%s.object: unknown object id '%.64s'",
					     ctx, obj);
				goto out;
			}
		}
		if (hand && parse_hand(hand, &a->hand)) {
			rc = err_set(ENG_EPARSE,
				     "%s.hand: expected \"left\", \"right\", \"both\" or \"none\"",
				     ctx);
			goto out;
		}
		a->description = strdup(desc);
		a->verb = verb ? strdup(verb) : NULL;
		a->goal = goal ? strdup(goal) : NULL;
		if (!a->description || (verb && !a->verb) || (goal && !a->goal)) {
			rc = ENG_ENOMEM;
			goto out;
		}
		i++;
	}
out:
	cJSON_Delete(root);
	return rc;
}

/* ======================= The loader ======================= */

/* Stream names, in the order of rec->info_own. */
enum { S_TRAJ, S_GAZE, S_OBJECTS, S_POSES, S_ACTIONS, S_COUNT };

bool recording__detect_native(const char *path)
{
	return recording__is_file(path, "recording.json");
}

/* The keys of recording.json's streams object, by stream. */
static const char *const stream_keys[S_COUNT] = { "trajectory", "gaze", "objects", "object_poses",
						  "actions" };

/*
 * Checks the top of recording.json (root, read from file): its format,
 * its id (to *id, pointing into root) and its up axis.
 */
static int read_header(const cJSON *root, const char *file, const char **id)
{
	const char *fmt = NULL;
	char ctx[1100];
	double u[3];
	int rc;

	snprintf(ctx, sizeof(ctx), "%s:", file);
	rc = jsonfile_str(root, "format", true, ctx, &fmt);
	if (!rc && strcmp(fmt, NATIVE_FORMAT))
		rc = err_set(ENG_EPARSE, "%s: format: '%.64s' is not \"%s\"", file, fmt,
			     NATIVE_FORMAT);
	rc = rc ? rc : jsonfile_str(root, "id", true, ctx, id);
	if (rc)
		return rc;
	if (!**id || strlen(*id) > 200)
		return err_set(ENG_EPARSE, "%s: id: must have 1 to 200 characters", file);
	rc = jsonfile_vec(root, "up", 3, true, ctx, u);
	if (rc)
		return rc;
	if (u[0] != 0 || u[1] != 0 || u[2] != 1)
		return err_set(ENG_EINVAL, "%s: up: must be [0,0,1] (the world is +Z up)", file);
	return 0;
}

/*
 * The file of each stream that recording.json (root, read from file)
 * lists, into name[] (pointing into root, NULL for a stream not there):
 * no unknown stream, a trajectory, relative paths, object poses only
 * with objects.
 */
static int read_stream_names(const cJSON *root, const char *file, const char *name[S_COUNT])
{
	const cJSON *streams, *it;
	char ctx[1100];
	int rc, k;

	streams = cJSON_GetObjectItemCaseSensitive(root, "streams");
	if (!cJSON_IsObject(streams))
		return err_set(ENG_EPARSE, "%s: streams: missing or not an object", file);
	snprintf(ctx, sizeof(ctx), "%s: streams", file);
	cJSON_ArrayForEach(it, streams) {
		for (k = 0; k < S_COUNT; k++)
			if (it->string && !strcmp(it->string, stream_keys[k]))
				break;
		if (k == S_COUNT)
			return err_set(ENG_EPARSE, "%s.%.64s: unknown stream", ctx,
				       it->string ? it->string : "");
	}
	for (k = 0; k < S_COUNT; k++) {
		rc = jsonfile_str(streams, stream_keys[k], k == S_TRAJ, ctx, &name[k]);
		if (!rc && name[k])
			rc = check_rel_path(ctx, stream_keys[k], name[k]);
		if (rc)
			return rc;
	}
	if (name[S_POSES] && !name[S_OBJECTS])
		return err_set(ENG_EPARSE, "%s.object_poses: needs an objects stream", ctx);
	return 0;
}

/*
 * Reads each stream of name[] (files under path) into rec, in stream
 * order; objects without an object_poses stream get their rest poses.
 */
/* Reads stream k of the recording, when it has one. */
static int read_one(const char *path, struct recording *rec, const char *const name[S_COUNT], int k)
{
	char *p;
	int rc;

	if (!name[k])
		return 0;
	p = recording__path(path, name[k]);
	if (!p)
		return ENG_ENOMEM;
	switch (k) {
	case S_TRAJ: rc = read_trajectory(p, rec); break;
	case S_GAZE: rc = read_gaze(p, rec); break;
	case S_OBJECTS: rc = recording__read_objects(p, rec); break;
	case S_POSES: rc = recording__read_object_poses(p, rec); break;
	default: rc = read_actions(p, rec); break;
	}
	free(p);
	if (!rc && k == S_OBJECTS && !name[S_POSES])
		rc = recording__read_object_poses(NULL, rec);
	return rc;
}

/*
 * The streams on three threads: the trajectory, the gaze, and the objects
 * with their poses and the actions (which name the objects, in that
 * order). They fill disjoint fields, and only the third warns. The error
 * reported is that of the first stream in file order that failed, as a
 * reading one by one would report.
 */
static int read_streams(const char *path, struct recording *rec, const char *const name[S_COUNT])
{
	static const int first[3] = { S_TRAJ, S_GAZE, S_OBJECTS },
			 last[3] = { S_TRAJ, S_GAZE, S_ACTIONS };
	int rc[3] = { 0, 0, 0 }, g;
	char msg[3][1024];

#pragma omp parallel for num_threads(3) schedule(static, 1)
	for (g = 0; g < 3; g++) {
		int k;

		for (k = first[g]; k <= last[g] && !rc[g]; k++)
			rc[g] = read_one(path, rec, name, k);
		snprintf(msg[g], sizeof(msg[g]), "%s", rc[g] ? err_msg() : "");
	}
	for (g = 0; g < 3; g++)
		if (rc[g])
			return *msg[g] ? err_set(rc[g], "%s", msg[g]) : rc[g];
	return 0;
}

/* Points rec's info_*.file at copies of the stream files, owned by rec. */
static int set_stream_files(struct recording *rec, const char *const name[S_COUNT])
{
	struct rec_stream_info *si[4] = { &rec->info_traj, &rec->info_gaze, &rec->info_objects,
					  &rec->info_actions };
	int src[4] = { S_TRAJ, S_GAZE, name[S_POSES] ? S_POSES : S_OBJECTS, S_ACTIONS };
	int k;

	for (k = 0; k < 4; k++) {
		if (!name[src[k]])
			continue;
		rec->info_own[k] = strdup(name[src[k]]);
		if (!rec->info_own[k])
			return ENG_ENOMEM;
		si[k]->file = rec->info_own[k];
	}
	return 0;
}

int recording__load_native(const char *path, struct recording *rec)
{
	char *file = NULL;
	const char *name[S_COUNT] = { NULL };
	cJSON *root = NULL;
	const char *id = NULL;
	bool have_t0 = false;
	int rc = 0;

	file = recording__path(path, "recording.json");
	if (!file)
		return ENG_ENOMEM;
	rc = jsonfile_read(file, &root);
	if (rc)
		goto out;
	if (!cJSON_IsObject(root)) {
		rc = err_set(ENG_EPARSE, "%s: expected a JSON object", file);
		goto out;
	}
	rc = read_header(root, file, &id);
	rc = rc ? rc : read_camera(root, file, &rec->camera);
	rc = rc ? rc : read_video(root, file, &rec->video, &have_t0);
	rc = rc ? rc : read_stream_names(root, file, name);
	if (rc)
		goto out;
	rec->id = strdup(id);
	if (!rec->id) {
		rc = ENG_ENOMEM;
		goto out;
	}
	rc = read_streams(path, rec, name);
	rc = rc ? rc : set_stream_files(rec, name);
	if (rc)
		goto out;
	if (rec->video.path && !have_t0)
		rec->video.t0_ns = rec->traj[0].t_ns;
out:
	free(file);
	cJSON_Delete(root);
	return rc;
}
