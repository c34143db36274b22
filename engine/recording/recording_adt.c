/* SPDX-License-Identifier: MIT */
/*
 * The Aria Digital Twin sequence loader (formats.md section 2):
 * aria_trajectory.csv (us, T_scene_device, Y-up scene), scene_objects.csv
 * (ns, w-first quaternions, static rows at -1), 3d_bounding_box.csv (local
 * AABBs), instances.json (names, categories, motion type), eyegaze.csv or
 * mps/eye_gaze/general_eye_gaze.csv; video.vrs, when present, is the
 * recording's video (its RGB stream). Every world-frame pose is rotated
 * from the Y-up scene to Z-up by R_x(+90 deg) when the trajectory's
 * gravity says Y-up (it does in ADT).
 */
#include "recording.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "banned.h"
#include "csv.h"
#include "err.h"
#include "jsonfile.h"

/* A box of 3d_bounding_box.csv, then its poses from scene_objects.csv. */
struct adt_box {
	uint64_t uid;
	size_t line;    /* line in 3d_bounding_box.csv */
	vec3 c, h;      /* local centre and half-extents */
	int has_static; /* a row at timestamp -1 was seen */
	size_t static_line;
	struct pose static_pose;
	size_t ndyn;     /* dynamic rows */
	size_t dyn_line; /* line of the first dynamic row */
};

/* One dynamic row of scene_objects.csv while sorting. */
struct adt_row {
	size_t box; /* index into the box array */
	size_t line;
	struct pose_sample s;
};

struct uid_index {
	uint64_t uid;
	size_t idx;
};

static int cmp_uid(const void *a, const void *b)
{
	const struct uid_index *x = a, *y = b;

	return (x->uid > y->uid) - (x->uid < y->uid);
}

static int cmp_row(const void *pa, const void *pb)
{
	const struct adt_row *a = pa, *b = pb;

	if (a->box != b->box)
		return a->box < b->box ? -1 : 1;
	if (a->s.t_ns != b->s.t_ns)
		return a->s.t_ns < b->s.t_ns ? -1 : 1;
	return (a->line > b->line) - (a->line < b->line);
}

static long find_uid(const struct uid_index *ix, size_t n, uint64_t uid)
{
	struct uid_index key = { uid, 0 };
	const struct uid_index *hit = n ? bsearch(&key, ix, n, sizeof(*ix), cmp_uid) : NULL;

	return hit ? (long)hit->idx : -1;
}

static const char *const adt_traj_files[] = { "aria_trajectory.csv" };
/* the RGB frames of the sequence (its 214-1 stream) */
static const char *const adt_video_files[] = { "video.vrs" };
static const char *const adt_gaze_files[] = {
	"eyegaze.csv",
	"mps/eye_gaze/general_eye_gaze.csv",
	"MPS/eye_gaze/general_eye_gaze.csv",
	"mps/eye_gaze/generalized_eye_gaze.csv",
};

static int read_boxes(const char *path, struct adt_box **out, size_t *n, struct uid_index **ixo)
{
	static const char *const names[7] = { "object_uid",          "p_local_obj_xmin[m]",
					      "p_local_obj_xmax[m]", "p_local_obj_ymin[m]",
					      "p_local_obj_ymax[m]", "p_local_obj_zmin[m]",
					      "p_local_obj_zmax[m]" };
	struct csv *c = NULL;
	struct adt_box *b = NULL;
	struct uid_index *ix = NULL;
	size_t col[7], cap = 0, cnt = 0, k;
	int rc;

	rc = csv_open(path, &c);
	if (rc)
		return rc;
	for (k = 0; k < 7 && !rc; k++)
		rc = csv_need(c, names[k], &col[k]);
	while (!rc) {
		struct adt_box x;
		double v[6];

		rc = csv_next(c);
		if (rc <= 0)
			break;
		memset(&x, 0, sizeof(x));
		rc = csv_u64(c, col[0], &x.uid);
		for (k = 0; k < 6 && !rc; k++) {
			rc = csv_f64(c, col[1 + k], &v[k]);
			if (!rc && fabs(v[k]) > 1e4)
				rc = csv_err(c, ENG_ERANGE, "column '%s': %g m is out of range",
					     names[1 + k], v[k]);
		}
		if (rc)
			break;
		for (k = 0; k < 3; k++) {
			if (v[2 * k] > v[2 * k + 1]) {
				rc = csv_err(c, ENG_EINVAL, "%s > %s", names[1 + 2 * k],
					     names[2 + 2 * k]);
				break;
			}
			x.c[k] = (float)((v[2 * k] + v[2 * k + 1]) / 2);
			x.h[k] = (float)((v[2 * k + 1] - v[2 * k]) / 2);
		}
		if (rc)
			break;
		x.line = csv_line(c);
		rc = recording__reserve(&b, &cap, cnt + 1, sizeof(*b));
		if (!rc)
			b[cnt++] = x;
	}
	csv_free(c);
	c = NULL;
	if (rc < 0)
		goto out;
	rc = 0;
	ix = malloc((cnt ? cnt : 1) * sizeof(*ix));
	if (!ix) {
		rc = ENG_ENOMEM;
		goto out;
	}
	for (k = 0; k < cnt; k++) {
		ix[k].uid = b[k].uid;
		ix[k].idx = k;
	}
	qsort(ix, cnt, sizeof(*ix), cmp_uid);
	for (k = 1; k < cnt; k++)
		if (ix[k].uid == ix[k - 1].uid) {
			size_t l1 = b[ix[k - 1].idx].line, l2 = b[ix[k].idx].line;

			rc = err_set(ENG_EINVAL, "%s:%zu: object_uid %" PRIu64 " repeats line %zu",
				     path, l1 > l2 ? l1 : l2, ix[k].uid, l1 > l2 ? l2 : l1);
			goto out;
		}
out:
	if (rc) {
		free(b);
		free(ix);
		return rc;
	}
	*out = b;
	*n = cnt;
	*ixo = ix;
	return 0;
}

/* Reads scene_objects.csv into the boxes (static) and *rows (dynamic). */
static int read_poses(const char *path, struct adt_box *b, const struct uid_index *ix, size_t nb,
		      bool rotated, struct adt_row **rows_out, size_t *nrows_out, size_t *no_box)
{
	static const char *const names[9] = { "object_uid", "timestamp[ns]", "t_wo_x[m]",
					      "t_wo_y[m]",  "t_wo_z[m]",     "q_wo_w",
					      "q_wo_x",     "q_wo_y",        "q_wo_z" };
	struct csv *c = NULL;
	struct adt_row *rows = NULL;
	size_t col[9], cap = 0, nrows = 0, k;
	struct pose rz;
	int rc;

	recording__yup_to_zup(&rz);
	*no_box = 0;
	rc = csv_open(path, &c);
	if (rc)
		return rc;
	for (k = 0; k < 9 && !rc; k++)
		rc = csv_need(c, names[k], &col[k]);
	while (!rc) {
		uint64_t uid;
		int64_t ts;
		double v[7];
		struct pose p;
		struct adt_box *x;
		long i;

		rc = csv_next(c);
		if (rc <= 0)
			break;
		rc = csv_u64(c, col[0], &uid);
		rc = rc ? rc : csv_i64(c, col[1], &ts);
		for (k = 0; k < 7 && !rc; k++) {
			rc = csv_f64(c, col[2 + k], &v[k]);
			if (!rc && fabs(v[k]) > 1e6)
				rc = csv_err(c, ENG_ERANGE, "column '%s': %g is out of range",
					     names[2 + k], v[k]);
		}
		if (rc)
			break;
		if (ts < -1) {
			rc = csv_err(c, ENG_EINVAL,
				     "timestamp %lld ns: only -1 (static) may be negative",
				     (long long)ts);
			break;
		}
		i = find_uid(ix, nb, uid);
		if (i < 0) { /* environment object: no 3D box */
			(*no_box)++;
			continue;
		}
		/* w-first in the file; struct pose is x,y,z,w */
		pose_set(&p, (float)v[4], (float)v[5], (float)v[6], (float)v[3], (float)v[0],
			 (float)v[1], (float)v[2]);
		if (pose_normalize(&p)) {
			rc = csv_err(c, ENG_EINVAL, "zero quaternion (q_wo_w..q_wo_z all 0)");
			break;
		}
		if (rotated)
			pose_mul(&rz, &p, &p);
		x = &b[i];
		if (ts == -1) {
			if (x->has_static || x->ndyn) {
				rc = csv_err(c, ENG_EINVAL,
					     "object_uid %" PRIu64
					     " already has a %s row (line %zu)",
					     uid, x->has_static ? "static" : "dynamic",
					     x->has_static ? x->static_line : x->dyn_line);
				break;
			}
			x->has_static = 1;
			x->static_line = csv_line(c);
			x->static_pose = p;
			continue;
		}
		if (x->has_static) {
			rc = csv_err(c, ENG_EINVAL,
				     "object_uid %" PRIu64 " is static (line %zu) and dynamic", uid,
				     x->static_line);
			break;
		}
		if (!x->ndyn)
			x->dyn_line = csv_line(c);
		x->ndyn++;
		rc = recording__reserve(&rows, &cap, nrows + 1, sizeof(*rows));
		if (rc)
			break;
		rows[nrows].box = (size_t)i;
		rows[nrows].line = csv_line(c);
		rows[nrows].s.t_ns = ts;
		rows[nrows].s.pose = p;
		nrows++;
	}
	csv_free(c);
	if (rc < 0) {
		free(rows);
		return rc;
	}
	if (nrows > 1)
		qsort(rows, nrows, sizeof(*rows), cmp_row);
	for (k = 1; k < nrows; k++)
		if (rows[k].box == rows[k - 1].box && rows[k].s.t_ns == rows[k - 1].s.t_ns) {
			rc = err_set(ENG_EINVAL,
				     "%s:%zu: object_uid %" PRIu64
				     " has two rows at %lld ns (line %zu)",
				     path, rows[k].line, b[rows[k].box].uid,
				     (long long)rows[k].s.t_ns, rows[k - 1].line);
			free(rows);
			return rc;
		}
	*rows_out = rows;
	*nrows_out = nrows;
	return 0;
}

/* Name, category and motion type of instance `uid`; *skip for non-objects. */
static int instance_info(const cJSON *inst, const char *file, uint64_t uid, const char **name,
			 const char **cat, const char **motion, bool *found, bool *skip)
{
	char key[32], ctx[1100];
	const cJSON *o;
	const char *type = NULL;
	int rc = 0;

	*found = false;
	*skip = false;
	snprintf(key, sizeof(key), "%" PRIu64, uid);
	o = cJSON_GetObjectItemCaseSensitive(inst, key);
	if (!o)
		return 0;
	snprintf(ctx, sizeof(ctx), "%s: %s", file, key);
	if (!cJSON_IsObject(o))
		return err_set(ENG_EPARSE, "%s: expected an object", ctx);
	rc = rc ? rc : jsonfile_str(o, "instance_name", true, ctx, name);
	rc = rc ? rc : jsonfile_str(o, "category", false, ctx, cat);
	rc = rc ? rc : jsonfile_str(o, "motion_type", false, ctx, motion);
	rc = rc ? rc : jsonfile_str(o, "instance_type", false, ctx, &type);
	if (rc)
		return rc;
	*found = true;
	*skip = type && strcmp(type, "object");
	return 0;
}

static int need_file(const char *dir, const char *name)
{
	if (recording__is_file(dir, name))
		return 0;
	return err_set(ENG_ENOENT, "%s: missing required file '%s'", dir, name);
}

bool recording__detect_adt(const char *path)
{
	return recording__is_file(path, "scene_objects.csv") ||
	       recording__is_file(path, "instances.json") ||
	       recording__is_file(path, "aria_trajectory.csv");
}

/* What recording__load_adt() reads, and what it counts for its warnings. */
struct adt_load {
	cJSON *inst;       /* instances.json */
	struct adt_box *b; /* the boxes of 3d_bounding_box.csv, in its order */
	size_t nb;
	struct uid_index *ix; /* uid -> index into b */
	struct adt_row *rows; /* dynamic rows of scene_objects.csv, grouped by box */
	size_t nrows;
	size_t no_box;   /* rows of objects without a box */
	size_t no_inst;  /* boxed objects without an instance entry */
	size_t no_pose;  /* boxes without a pose */
	size_t skipped;  /* non-object instances */
	size_t mismatch; /* motion types that disagree */
	size_t cap;      /* capacity of rec->objects */
};

/*
 * Reads instances.json, 3d_bounding_box.csv and scene_objects.csv of the
 * sequence at path into ld (rotated: turn the poses from Y-up to Z-up).
 * On failure ld holds what was read, for the caller to free.
 */
static int adt_read_tables(const char *path, bool rotated, struct adt_load *ld)
{
	char *p;
	int rc;

	p = recording__path(path, "instances.json");
	if (!p)
		return ENG_ENOMEM;
	rc = jsonfile_read(p, &ld->inst);
	if (!rc && !cJSON_IsObject(ld->inst))
		rc = err_set(ENG_EPARSE, "%s: expected an object keyed by instance id", p);
	free(p);
	if (rc)
		return rc;
	p = recording__path(path, "3d_bounding_box.csv");
	if (!p)
		return ENG_ENOMEM;
	rc = read_boxes(p, &ld->b, &ld->nb, &ld->ix);
	free(p);
	if (rc)
		return rc;
	p = recording__path(path, "scene_objects.csv");
	if (!p)
		return ENG_ENOMEM;
	rc = read_poses(p, ld->b, ld->ix, ld->nb, rotated, &ld->rows, &ld->nrows, &ld->no_box);
	free(p);
	return rc;
}

/*
 * Adds box k as an object of rec, its dynamic samples rows[first..r) of
 * ld appended to rec->obj_poses; a non-object instance or a box without
 * a pose is only counted.
 */
static int adt_add_object(struct recording *rec, struct adt_load *ld, size_t k, size_t first,
			  size_t r)
{
	struct adt_box *b = &ld->b[k];
	const char *name = NULL, *cat = NULL, *motion = NULL;
	bool found, skip;
	struct rec_object *o;
	char id[32];
	int rc;

	rc = instance_info(ld->inst, "instances.json", b->uid, &name, &cat, &motion, &found, &skip);
	if (rc)
		return rc;
	if (skip) {
		ld->skipped++;
		return 0;
	}
	if (!b->has_static && !b->ndyn) {
		ld->no_pose++;
		return 0;
	}
	if (!found)
		ld->no_inst++;
	snprintf(id, sizeof(id), "%" PRIu64, b->uid);
	rc = recording__reserve(&rec->objects, &ld->cap, rec->nobjects + 1, sizeof(*rec->objects));
	if (rc)
		return rc;
	o = &rec->objects[rec->nobjects];
	memset(o, 0, sizeof(*o));
	rec->nobjects++;
	o->id = strdup(id);
	o->name = strdup(name ? name : id);
	o->category = strdup(cat ? cat : "");
	if (!o->id || !o->name || !o->category)
		return ENG_ENOMEM;
	glm_vec3_copy(b->c, o->local_c);
	glm_vec3_copy(b->h, o->half);
	if (b->has_static) {
		o->motion = REC_STATIC;
		o->static_pose = b->static_pose;
	} else {
		size_t j;

		o->motion = REC_DYNAMIC;
		o->pose_first = rec->nobj_poses;
		o->pose_count = r - first;
		for (j = first; j < r; j++)
			rec->obj_poses[rec->nobj_poses++] = ld->rows[j].s;
		o->static_pose = rec->obj_poses[o->pose_first].pose;
	}
	if (motion && strcmp(motion, o->motion == REC_STATIC ? "static" : "dynamic"))
		ld->mismatch++;
	return 0;
}

/*
 * The objects of rec in 3d_bounding_box.csv order, the dynamic samples
 * grouped per object.
 */
static int adt_add_objects(struct recording *rec, struct adt_load *ld)
{
	size_t k, r = 0;
	int rc;

	rec->obj_poses = malloc((ld->nrows ? ld->nrows : 1) * sizeof(*rec->obj_poses));
	if (!rec->obj_poses)
		return ENG_ENOMEM;
	for (k = 0; k < ld->nb; k++) {
		size_t first;

		while (r < ld->nrows && ld->rows[r].box < k)
			r++;
		first = r;
		while (r < ld->nrows && ld->rows[r].box == k)
			r++;
		rc = adt_add_object(rec, ld, k, first, r);
		if (rc)
			return rc;
	}
	return 0;
}

/* One warning on rec for each kind of row or box that was skipped or disagrees. */
static int adt_warn_counts(struct recording *rec, const struct adt_load *ld)
{
	int rc = 0;

	if (ld->no_box)
		rc = recording__warn(
			rec, "scene_objects.csv: %zu rows of objects without a 3D box skipped",
			ld->no_box);
	if (!rc && ld->skipped)
		rc = recording__warn(rec,
				     "instances.json: %zu non-object instances (humans) skipped",
				     ld->skipped);
	if (!rc && ld->no_pose)
		rc = recording__warn(rec, "3d_bounding_box.csv: %zu boxes without a pose skipped",
				     ld->no_pose);
	if (!rc && ld->no_inst)
		rc = recording__warn(rec,
				     "instances.json: %zu boxed objects have no instance entry",
				     ld->no_inst);
	if (!rc && ld->mismatch)
		rc = recording__warn(
			rec,
			"instances.json: motion_type of %zu objects disagrees with scene_objects.csv",
			ld->mismatch);
	return rc;
}

int recording__load_adt(const char *path, struct recording *rec)
{
	struct adt_load ld;
	bool rotated = false;
	int rc;

	memset(&ld, 0, sizeof(ld));
	rc = need_file(path, "aria_trajectory.csv");
	rc = rc ? rc : need_file(path, "scene_objects.csv");
	rc = rc ? rc : need_file(path, "3d_bounding_box.csv");
	rc = rc ? rc : need_file(path, "instances.json");
	if (rc)
		return rc;
	rc = recording__aria_load_dir(path, rec, true, adt_traj_files, ARRAY_SIZE(adt_traj_files),
				      adt_gaze_files, ARRAY_SIZE(adt_gaze_files), &rotated);
	if (rc)
		return rc;
	rc = adt_read_tables(path, rotated, &ld);
	if (rc)
		goto out;
	rc = adt_add_objects(rec, &ld);
	if (rc)
		goto out;
	rec->info_objects.file = "scene_objects.csv";
	rc = recording__attach_video(path, rec, adt_video_files, ARRAY_SIZE(adt_video_files));
	if (!rc)
		rc = adt_warn_counts(rec, &ld);
out:
	free(ld.b);
	free(ld.ix);
	free(ld.rows);
	cJSON_Delete(ld.inst);
	return rc;
}
