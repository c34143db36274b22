/* SPDX-License-Identifier: MIT */
/*
 * The Ego-Exo4D take loader (formats.md section 5). A take folder holds
 * trajectory/closed_loop_trajectory.csv and eye_gaze/general_eye_gaze.csv
 * (the MPS formats); the take itself is described by take.json (one take
 * object) in the folder or by an entry of takes.json beside it or up the
 * tree. Keystep annotations (section 5.3) come from keystep.json in the
 * folder or annotations/keystep_train.json / keystep_val.json up the tree,
 * and their seconds become device ns through timesync.csv (in the folder
 * or captures/<capture_name>/timesync.csv up the tree): row
 * timesync_start_idx + 1 + round(t * 30) of column
 * aria0N_214-1_capture_timestamp_ns. The take's Aria RGB video
 * (frame_aligned_videos/ *214-1*.mp4) is attached with the same rows as
 * the device time of each of its frames.
 */
#include "recording.h"

#include <dirent.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "banned.h"
#include "buf.h"
#include "csv.h"
#include "err.h"
#include "jsonfile.h"

/* Frame rate of the frame-aligned take videos. */
#define EGOEXO_FPS 30
/* How many folders above the take folder are searched. */
#define EGOEXO_UP_LEVELS 3

static const char *const egoexo_traj_files[] = {
	"trajectory/closed_loop_trajectory.csv",
	"slam/closed_loop_trajectory.csv",
};

static const char *const egoexo_gaze_files[] = {
	"eye_gaze/general_eye_gaze.csv",
	"eye_gaze/personalized_eye_gaze.csv",
	"eye_gaze/generalized_eye_gaze.csv",
};

/* What the loader needs from the take object. */
struct take {
	const char *name;       /* take_name */
	const char *uid;        /* take_uid, or NULL */
	const char *capture;    /* capture name */
	char *capture_own;      /* capture name derived from take_name */
	int64_t start_idx;      /* timesync_start_idx, -1 when absent */
	int64_t end_idx;        /* timesync_end_idx, -1 when absent */
	char cam[32];           /* ego Aria camera id, e.g. "aria01" */
};

/* The folder's own name (the last non-empty component of path). */
static char *base_name(const char *path)
{
	size_t n = strlen(path), e;

	while (n > 1 && path[n - 1] == '/')
		n--;
	e = n;
	while (n > 0 && path[n - 1] != '/')
		n--;
	return strndup(path + n, e - n);
}

/* path, path/.., path/../.., ... as strings: the i-th folder up (0 = path). */
static char *up_dir(const char *path, int i)
{
	struct buf b;
	int k;

	buf_init(&b, 1 << 16);
	if (buf_adds(&b, path)) {
		buf_release(&b);
		return NULL;
	}
	for (k = 0; k < i; k++)
		if (buf_adds(&b, "/..")) {
			buf_release(&b);
			return NULL;
		}
	return buf_detach(&b);
}

/*
 * The first existing dir_i/name for i = 0..EGOEXO_UP_LEVELS (from i0):
 * a new string, or NULL in *out when none exists. Returns 0 or ENG_ENOMEM.
 */
static int find_up(const char *path, int i0, const char *name, char **out)
{
	int i;

	*out = NULL;
	for (i = i0; i <= EGOEXO_UP_LEVELS; i++) {
		char *d = up_dir(path, i);
		bool yes;

		if (!d)
			return ENG_ENOMEM;
		yes = recording__is_file(d, name);
		if (yes)
			*out = recording__path(d, name);
		free(d);
		if (yes)
			return *out ? 0 : ENG_ENOMEM;
	}
	return 0;
}

/* Reads the fields of a take object; ctx names it in messages. */
static int parse_take(const cJSON *t, const char *ctx, struct take *tk)
{
	const cJSON *cap, *cams, *cam;
	const char *cam_id = NULL;
	int rc = 0;

	if (!cJSON_IsObject(t))
		return err_set(ENG_EPARSE, "%s: expected a take object", ctx);
	rc = rc ? rc : jsonfile_str(t, "take_name", true, ctx, &tk->name);
	rc = rc ? rc : jsonfile_str(t, "take_uid", false, ctx, &tk->uid);
	tk->start_idx = -1;
	rc = rc ? rc : jsonfile_i64(t, "timesync_start_idx", false, ctx, &tk->start_idx);
	tk->end_idx = -1;
	rc = rc ? rc : jsonfile_i64(t, "timesync_end_idx", false, ctx, &tk->end_idx);
	if (rc)
		return rc;
	if (!*tk->name)
		return err_set(ENG_EPARSE, "%s.take_name: empty", ctx);
	if (cJSON_GetObjectItemCaseSensitive(t, "timesync_start_idx") && tk->start_idx < 0)
		return err_set(ENG_ERANGE, "%s.timesync_start_idx: negative", ctx);
	cap = cJSON_GetObjectItemCaseSensitive(t, "capture");
	if (cJSON_IsObject(cap)) {
		char sub[1200];
		size_t i = 0;

		snprintf(sub, sizeof(sub), "%.1000s.capture", ctx);
		rc = jsonfile_str(cap, "capture_name", false, sub, &tk->capture);
		if (rc)
			return rc;
		cams = cJSON_GetObjectItemCaseSensitive(cap, "cameras");
		if (!cJSON_IsArray(cams))
			cams = NULL;
		cJSON_ArrayForEach(cam, cams) {
			const char *id = NULL, *type = NULL;
			bool ego = false;
			char c2[1300];

			snprintf(c2, sizeof(c2), "%s.cameras[%zu]", sub, i++);
			rc = jsonfile_str(cam, "cam_id", false, c2, &id);
			rc = rc ? rc : jsonfile_str(cam, "device_type", false, c2, &type);
			rc = rc ? rc : jsonfile_bool(cam, "is_ego", false, c2, &ego);
			if (rc)
				return rc;
			if (ego && id && (!type || !strcmp(type, "aria"))) {
				cam_id = id;
				break;
			}
		}
	}
	if (cam_id) {
		size_t n = strlen(cam_id);

		/* only "aria" + digits: it becomes part of a column name */
		if (n >= sizeof(tk->cam) || strncmp(cam_id, "aria", 4) || n < 5 ||
		    strspn(cam_id + 4, "0123456789") != n - 4)
			return err_set(ENG_EPARSE, "%s.capture.cameras: ego camera id '%.32s' is not aria<N>",
				       ctx, cam_id);
		memcpy(tk->cam, cam_id, n + 1);
	}
	if (!tk->capture) {
		/* capture_name = take_name without a trailing _<k> */
		size_t n = strlen(tk->name), e = n;

		while (e > 0 && tk->name[e - 1] >= '0' && tk->name[e - 1] <= '9')
			e--;
		if (e > 0 && e < n && tk->name[e - 1] == '_')
			n = e - 1;
		tk->capture_own = strndup(tk->name, n);
		if (!tk->capture_own)
			return ENG_ENOMEM;
		tk->capture = tk->capture_own;
	}
	return 0;
}

/*
 * Finds the take object: take.json in the folder, else the entry of the
 * nearest takes.json (folder or up the tree) whose take_name is the
 * folder's name (or its only entry). *doc owns the JSON tree.
 */
static int find_take(const char *path, struct recording *rec, cJSON **doc,
		     struct take *tk)
{
	char *file = NULL, *base = NULL, ctx[1100];
	const cJSON *it, *hit = NULL;
	size_t i = 0;
	int rc;

	if (recording__is_file(path, "take.json")) {
		file = recording__path(path, "take.json");
		if (!file)
			return ENG_ENOMEM;
		rc = jsonfile_read(file, doc);
		if (!rc) {
			snprintf(ctx, sizeof(ctx), "%s: take", file);
			rc = parse_take(*doc, ctx, tk);
		}
		goto out;
	}
	rc = find_up(path, 0, "takes.json", &file);
	if (rc)
		return rc;
	if (!file)
		return err_set(ENG_ENOENT, "%s: missing required file 'take.json' (or a takes.json beside the take)",
			       path);
	rc = jsonfile_read(file, doc);
	if (rc)
		goto out;
	if (!cJSON_IsArray(*doc)) {
		rc = err_set(ENG_EPARSE, "%s: expected an array of take objects", file);
		goto out;
	}
	base = base_name(path);
	if (!base) {
		rc = ENG_ENOMEM;
		goto out;
	}
	cJSON_ArrayForEach(it, *doc) {
		const cJSON *n = cJSON_GetObjectItemCaseSensitive(it, "take_name");

		if (cJSON_IsString(n) && n->valuestring && !strcmp(n->valuestring, base)) {
			hit = it;
			break;
		}
		i++;
	}
	if (!hit && cJSON_GetArraySize(*doc) == 1) {
		hit = cJSON_GetArrayItem(*doc, 0);
		i = 0;
		rc = recording__warn(rec, "%s: its only take is used for folder '%s'", file, base);
		if (rc)
			goto out;
	}
	if (!hit) {
		rc = err_set(ENG_ENOENT, "%s: no take named '%.64s'", file, base);
		goto out;
	}
	snprintf(ctx, sizeof(ctx), "%s: [%zu]", file, i);
	rc = parse_take(hit, ctx, tk);
out:
	free(base);
	free(file);
	return rc;
}

/* ======================= Timesync ======================= */

struct timesync {
	double *ns;   /* device ns per row, NAN when missing */
	size_t n;
	char *file;
};

static int read_timesync(const char *file, const char *cam, struct timesync *ts)
{
	struct csv *c = NULL;
	char colname[64];
	size_t col, cap = 0;
	int rc;

	snprintf(colname, sizeof(colname), "%s_214-1_capture_timestamp_ns", cam);
	rc = csv_open(file, &c);
	if (rc)
		return rc;
	rc = csv_need(c, colname, &col);
	while (!rc) {
		double v;

		rc = csv_next(c);
		if (rc <= 0)
			break;
		rc = csv_f64_nan(c, col, &v);
		if (!rc && !isnan(v) && (v < 0 || v > 9.2e18))
			rc = csv_err(c, ENG_ERANGE, "column '%s': %g ns is out of range", colname, v);
		if (rc)
			break;
		rc = recording__reserve(&ts->ns, &cap, ts->n + 1, sizeof(*ts->ns));
		if (!rc)
			ts->ns[ts->n++] = v;
	}
	csv_free(c);
	return rc < 0 ? rc : 0;
}

/*
 * Device ns of take time t (s): row start + 1 + round(t * 30); when that
 * row is NaN or past the end, the first valid row r of the take
 * (>= start + 1) extrapolated: ts[r] - (r - start - 1) / 30 s + t.
 * *fallback is set when the second rule was used. Returns 0, or ENG_ERANGE
 * when the take has no valid row at all.
 */
static int take_time_ns(const struct timesync *ts, int64_t start, double t,
			int64_t *out, bool *fallback)
{
	double fr = floor(t * EGOEXO_FPS + 0.5);
	size_t first = (size_t)start + 1, r;

	*fallback = false;
	if (fr >= 0 && fr < 1e12) {
		size_t idx = first + (size_t)fr;

		if (idx < ts->n && isfinite(ts->ns[idx])) {
			*out = (int64_t)llround(ts->ns[idx]);
			return 0;
		}
	}
	for (r = first; r < ts->n; r++)
		if (isfinite(ts->ns[r]))
			break;
	if (r >= ts->n)
		return ENG_ERANGE;
	*fallback = true;
	*out = (int64_t)llround(ts->ns[r] - (double)(r - first) * 1e9 / EGOEXO_FPS + t * 1e9);
	return 0;
}

/* ======================= Keysteps ======================= */

/* The annotation of this take in a keystep file, or NULL. */
static const cJSON *find_annotation(const cJSON *doc, const struct take *tk)
{
	const cJSON *ann = cJSON_GetObjectItemCaseSensitive(doc, "annotations"), *it;

	if (!cJSON_IsObject(ann))
		return NULL;
	if (tk->uid) {
		it = cJSON_GetObjectItemCaseSensitive(ann, tk->uid);
		if (it)
			return it;
	}
	cJSON_ArrayForEach(it, ann) {
		const cJSON *n = cJSON_GetObjectItemCaseSensitive(it, "take_name");

		if (cJSON_IsString(n) && n->valuestring && !strcmp(n->valuestring, tk->name))
			return it;
	}
	return NULL;
}

/* The parent step name of step_id in the scenario's taxonomy, or NULL. */
static const char *parent_name(const cJSON *doc, const char *scenario, int64_t step_id)
{
	const cJSON *tax = cJSON_GetObjectItemCaseSensitive(doc, "taxonomy"), *sc, *node, *pn;
	char key[32];

	if (!scenario || step_id < 0)
		return NULL;
	sc = cJSON_IsObject(tax) ? cJSON_GetObjectItemCaseSensitive(tax, scenario) : NULL;
	if (!cJSON_IsObject(sc))
		return NULL;
	snprintf(key, sizeof(key), "%lld", (long long)step_id);
	node = cJSON_GetObjectItemCaseSensitive(sc, key);
	pn = cJSON_IsObject(node) ? cJSON_GetObjectItemCaseSensitive(node, "parent_name") : NULL;
	return cJSON_IsString(pn) && pn->valuestring && *pn->valuestring ? pn->valuestring : NULL;
}

static int add_keysteps(struct recording *rec, const char *file, const cJSON *doc,
			const cJSON *ann, const struct take *tk, const struct timesync *ts)
{
	const cJSON *segs, *s;
	const char *scenario = NULL;
	char ctx[1100];
	size_t cap = rec->nactions, i = 0, fallbacks = 0;
	int rc;

	snprintf(ctx, sizeof(ctx), "%s: annotations.%.64s", file, tk->uid ? tk->uid : tk->name);
	rc = jsonfile_str(ann, "scenario", false, ctx, &scenario);
	if (rc)
		return rc;
	segs = cJSON_GetObjectItemCaseSensitive(ann, "segments");
	if (!cJSON_IsArray(segs))
		return err_set(ENG_EPARSE, "%s.segments: expected an array", ctx);
	cJSON_ArrayForEach(s, segs) {
		struct rec_action *a;
		const char *name = NULL, *desc = NULL, *goal;
		double t0 = 0, t1 = 0;
		int64_t step = -1, uid = -1, ns0, ns1;
		char c2[1200];
		bool fb0 = false, fb1 = false;

		snprintf(c2, sizeof(c2), "%.1000s.segments[%zu]", ctx, i++);
		if (!cJSON_IsObject(s))
			return err_set(ENG_EPARSE, "%s: expected an object", c2);
		rc = jsonfile_num(s, "start_time", true, c2, &t0);
		rc = rc ? rc : jsonfile_num(s, "end_time", true, c2, &t1);
		rc = rc ? rc : jsonfile_str(s, "step_name", false, c2, &name);
		rc = rc ? rc : jsonfile_str(s, "step_description", false, c2, &desc);
		rc = rc ? rc : jsonfile_i64(s, "step_id", false, c2, &step);
		rc = rc ? rc : jsonfile_i64(s, "step_unique_id", false, c2, &uid);
		if (rc)
			return rc;
		if (t0 < 0 || t0 > 1e6 || t1 > 1e6)
			return err_set(ENG_ERANGE, "%s.start_time: %g s is not in [0, 1e6]", c2, t0);
		if (t1 < t0)
			return err_set(ENG_EINVAL, "%s.end_time: %g s is before start_time %g s", c2, t1,
				       t0);
		if (uid < -1 || uid > 2147483647)
			return err_set(ENG_ERANGE, "%s.step_unique_id: out of range", c2);
		if ((!desc || !*desc) && (!name || !*name))
			return err_set(ENG_EPARSE, "%s: needs step_description or step_name", c2);
		if (ts->n && tk->start_idx >= 0) {
			if (take_time_ns(ts, tk->start_idx, t0, &ns0, &fb0) ||
			    take_time_ns(ts, tk->start_idx, t1, &ns1, &fb1))
				return err_set(ENG_ERANGE, "%s: no valid row for this take (timesync_start_idx %lld)",
					       ts->file, (long long)tk->start_idx);
			fallbacks += fb0 || fb1;
		} else {
			/* no timesync: offsets from the start of the take's trajectory */
			ns0 = rec->traj[0].t_ns + (int64_t)llround(t0 * 1e9);
			ns1 = rec->traj[0].t_ns + (int64_t)llround(t1 * 1e9);
		}
		if (ns1 < ns0)
			ns1 = ns0;
		goal = parent_name(doc, scenario, step);
		if (!goal)
			goal = scenario;
		rc = recording__reserve(&rec->actions, &cap, rec->nactions + 1, sizeof(*rec->actions));
		if (rc)
			return rc;
		a = &rec->actions[rec->nactions];
		memset(a, 0, sizeof(*a));
		rec->nactions++;
		a->start_ns = ns0;
		a->end_ns = ns1;
		a->object = -1;
		a->hand = REC_HAND_NONE;
		a->step_id = (int)uid;
		a->description = strdup(desc && *desc ? desc : name);
		a->goal = goal ? strdup(goal) : NULL;
		if (!a->description || (goal && !a->goal))
			return ENG_ENOMEM;
	}
	if (fallbacks)
		return recording__warn(rec,
				       "%s: %zu keysteps fell on a NaN or missing row; mapped from the first valid row + t",
				       ts->file, fallbacks);
	return 0;
}

/* Looks for the take's keysteps and adds them as actions. */
static int load_keysteps(const char *path, struct recording *rec, const struct take *tk,
			 const struct timesync *ts)
{
	static const char *const split_files[] = { "annotations/keystep_train.json",
						   "annotations/keystep_val.json" };
	char *file = NULL;
	cJSON *doc = NULL;
	const cJSON *ann = NULL;
	size_t k;
	int rc = 0, tried = 0;

	for (k = 0; k < 1 + ARRAY_SIZE(split_files) && !ann; k++) {
		free(file);
		file = NULL;
		cJSON_Delete(doc);
		doc = NULL;
		if (k == 0) {
			if (!recording__is_file(path, "keystep.json"))
				continue;
			file = recording__path(path, "keystep.json");
			if (!file) {
				rc = ENG_ENOMEM;
				goto out;
			}
		} else {
			rc = find_up(path, 0, split_files[k - 1], &file);
			if (rc)
				goto out;
			if (!file)
				continue;
		}
		tried++;
		rc = jsonfile_read(file, &doc);
		if (rc)
			goto out;
		ann = find_annotation(doc, tk);
	}
	if (!ann) {
		rc = recording__warn(rec, tried ? "no keystep annotation for take '%s'"
					   : "no keystep file for take '%s'", tk->name);
		goto out;
	}
	if (!ts->n)
		rc = recording__warn(rec, "no timesync.csv: keystep times are offsets from the trajectory start");
	else if (tk->start_idx < 0)
		rc = recording__warn(rec, "the take has no timesync_start_idx: keystep times are offsets from the trajectory start");
	if (rc)
		goto out;
	rc = add_keysteps(rec, file, doc, ann, tk, ts);
	if (rc)
		goto out;
	/* the info file name is relative to the take folder when possible */
	rec->info_own[3] = strdup(file + (strncmp(file, path, strlen(path)) ? 0 : strlen(path) + 1));
	if (!rec->info_own[3]) {
		rc = ENG_ENOMEM;
		goto out;
	}
	rec->info_actions.file = rec->info_own[3];
out:
	free(file);
	cJSON_Delete(doc);
	return rc;
}

/* ======================= The ego RGB video ======================= */

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The take's Aria RGB video: frame_aligned_videos/<cam>_214-1.mp4, else
 * the first (by name) frame_aligned_videos/ *214-1*.mp4. *out is a new
 * path relative to the take folder, or NULL.
 */
static int find_rgb_video(const char *path, const char *cam, char **out)
{
	char want[64], *dir, **names = NULL;
	size_t n = 0, cap = 0, i;
	struct dirent *de;
	DIR *d;
	int rc = 0;

	*out = NULL;
	snprintf(want, sizeof(want), "frame_aligned_videos/%s_214-1.mp4", cam);
	if (recording__is_file(path, want)) {
		*out = strdup(want);
		return *out ? 0 : ENG_ENOMEM;
	}
	dir = recording__path(path, "frame_aligned_videos");
	if (!dir)
		return ENG_ENOMEM;
	d = opendir(dir);
	/* cppcheck-suppress readdirCalled ; readdir_r is deprecated, and this DIR is this call's own */
	while (d && (de = readdir(d))) {
		size_t len = strlen(de->d_name);
		char rel[300];

		if (len < 4 || strcmp(de->d_name + len - 4, ".mp4") || !strstr(de->d_name, "214-1") ||
		    len > 255)
			continue;
		snprintf(rel, sizeof(rel), "frame_aligned_videos/%s", de->d_name);
		if (!recording__is_file(path, rel))
			continue;
		rc = recording__reserve(&names, &cap, n + 1, sizeof(*names));
		if (rc)
			break;
		names[n] = strdup(rel);
		if (!names[n]) {
			rc = ENG_ENOMEM;
			break;
		}
		n++;
	}
	if (d)
		closedir(d);
	free(dir);
	if (!rc && n) {
		qsort(names, n, sizeof(*names), cmp_name);
		*out = names[0];
		names[0] = NULL;
	}
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return rc;
}

/*
 * Device time of each frame of the take video: frame i is timesync row
 * timesync_start_idx + 1 + i (formats.md 5.4), for i below
 * timesync_end_idx - timesync_start_idx - 1. A NaN row is interpolated
 * between its valid neighbours, or extrapolated at EGOEXO_FPS past the
 * first or last valid one. Sets nothing when no row is valid.
 */
static int frame_table(struct rec_video *v, const struct take *tk, const struct timesync *ts)
{
	size_t first = (size_t)tk->start_idx + 1, n, i, lo = SIZE_MAX, hi = 0;
	int64_t *t;

	if (tk->start_idx < 0 || first >= ts->n)
		return 0;
	n = ts->n - first;
	if (tk->end_idx > tk->start_idx + 1 && (size_t)(tk->end_idx - tk->start_idx - 1) < n)
		n = (size_t)(tk->end_idx - tk->start_idx - 1);
	for (i = 0; i < n; i++)
		if (isfinite(ts->ns[first + i])) {
			if (lo == SIZE_MAX)
				lo = i;
			hi = i;
		}
	if (lo == SIZE_MAX)
		return 0;
	t = malloc(n * sizeof(*t));
	if (!t)
		return ENG_ENOMEM;
	for (i = 0; i < n; i++) {
		double a = ts->ns[first + i];

		if (isfinite(a)) {
			t[i] = (int64_t)llround(a);
		} else if (i < lo) {
			t[i] = (int64_t)llround(ts->ns[first + lo] - (double)(lo - i) * 1e9 / EGOEXO_FPS);
		} else if (i > hi) {
			t[i] = (int64_t)llround(ts->ns[first + hi] + (double)(i - hi) * 1e9 / EGOEXO_FPS);
		} else {
			size_t p = i, q = i;

			while (!isfinite(ts->ns[first + p]))
				p--;
			while (!isfinite(ts->ns[first + q]))
				q++;
			t[i] = (int64_t)llround(ts->ns[first + p] + (ts->ns[first + q] - ts->ns[first + p]) *
						(double)(i - p) / (double)(q - p));
		}
	}
	v->frame_ns = t;
	v->nframe_ns = n;
	return 0;
}

/* Attaches the take's Aria RGB video, its frames mapped to device time. */
static int attach_video(const char *path, struct recording *rec, const struct take *tk,
			const struct timesync *ts)
{
	int rc = find_rgb_video(path, tk->cam, &rec->video.path);

	if (rc || !rec->video.path)
		return rc;
	rec->video.fps = EGOEXO_FPS;
	rec->video.t0_ns = rec->traj[0].t_ns;
	rc = frame_table(&rec->video, tk, ts);
	if (rc)
		return rc;
	if (rec->video.nframe_ns)
		rec->video.t0_ns = rec->video.frame_ns[0];
	else
		rc = recording__warn(rec, "%s: no timesync row for this take: its frames are taken as %d fps"
				     " from the trajectory start", rec->video.path, EGOEXO_FPS);
	return rc;
}

bool recording__detect_egoexo(const char *path)
{
	if (recording__is_file(path, "take.json") || recording__is_file(path, "takes.json") ||
	    recording__is_file(path, "keystep.json"))
		return true;
	/* an Ego-Exo4D download: <root>/takes/<take_name>/ with <root>/takes.json */
	return recording__is_file(path, "trajectory/closed_loop_trajectory.csv") &&
	       (recording__is_file(path, "../../takes.json") ||
		recording__is_file(path, "../takes.json"));
}

int recording__load_egoexo(const char *path, struct recording *rec)
{
	struct take tk;
	struct timesync ts = { NULL, 0, NULL };
	cJSON *doc = NULL;
	char *p = NULL;
	bool rotated = false;
	int rc;

	memset(&tk, 0, sizeof(tk));
	rc = find_take(path, rec, &doc, &tk);
	if (rc)
		goto out;
	if (!tk.cam[0]) {
		memcpy(tk.cam, "aria01", sizeof("aria01"));
		rc = recording__warn(rec, "no ego Aria camera in the take's capture.cameras; using aria01");
		if (rc)
			goto out;
	}
	rec->id = strdup(tk.name);
	if (!rec->id) {
		rc = ENG_ENOMEM;
		goto out;
	}
	rc = recording__aria_load_dir(path, rec, false, egoexo_traj_files,
				      ARRAY_SIZE(egoexo_traj_files), egoexo_gaze_files,
				      ARRAY_SIZE(egoexo_gaze_files), &rotated);
	if (rc)
		goto out;

	/* timesync.csv: in the take folder, or captures/<capture>/ up the tree */
	if (recording__is_file(path, "timesync.csv")) {
		ts.file = recording__path(path, "timesync.csv");
		if (!ts.file) {
			rc = ENG_ENOMEM;
			goto out;
		}
	} else {
		struct buf b;

		buf_init(&b, 1 << 16);
		rc = buf_addf(&b, "captures/%s/timesync.csv", tk.capture);
		if (!rc && !strstr(tk.capture, "..") && !strchr(tk.capture, '/'))
			rc = find_up(path, 1, buf_str(&b), &ts.file);
		buf_release(&b);
		if (rc)
			goto out;
	}
	if (ts.file) {
		rc = read_timesync(ts.file, tk.cam, &ts);
		if (rc)
			goto out;
	}
	rc = load_keysteps(path, rec, &tk, &ts);
	if (rc)
		goto out;

	rc = attach_video(path, rec, &tk, &ts);
	if (rc)
		goto out;
	if (recording__is_file(path, "objects.json")) {
		p = recording__path(path, "objects.json");
		if (!p) {
			rc = ENG_ENOMEM;
			goto out;
		}
		rc = recording__read_objects(p, rec);
		rc = rc ? rc : recording__read_object_poses(NULL, rec);
		if (rc)
			goto out;
		rec->info_objects.file = "objects.json";
	}
out:
	free(p);
	free(ts.ns);
	free(ts.file);
	free(tk.capture_own);
	cJSON_Delete(doc);
	return rc;
}
