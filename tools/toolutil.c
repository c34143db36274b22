/* SPDX-License-Identifier: MIT */
/* Helpers shared by the tool implementations: argument readers, recording lookups, result writers. */
#include "registry.h"

#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "banned.h"
#include "bev.h"
#include "err.h"
#include "strdist.h"

bool tool__has(const cJSON *args, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(args, key);

	return v && !cJSON_IsNull(v);
}

double tool__num(const cJSON *args, const char *key, double dflt)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(args, key);

	return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

int64_t tool__time(const cJSON *args, const char *key, int64_t dflt)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(args, key);
	double d;

	if (!cJSON_IsNumber(v))
		return dflt;
	d = v->valuedouble;
	if (!(d > -9.2e18))
		return INT64_MIN / 2;
	if (!(d < 9.2e18))
		return INT64_MAX / 2;
	return (int64_t)llround(d);
}

const char *tool__str(const cJSON *args, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(args, key);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Levenshtein distance of a and b, each cut at 64 bytes (ids are short). */
static int id_distance(const char *a, const char *b)
{
	return (int)strdist_lev(a, strnlen(a, 64), b, strnlen(b, 64));
}

/* The (up to) three object ids nearest to id by edit distance, "a, b, c". */
static void nearest_ids(const struct recording *rec, const char *id, char *out, size_t size)
{
	long best[3] = { -1, -1, -1 };
	int bd[3] = { INT_MAX, INT_MAX, INT_MAX }, k;
	size_t i, len = 0;

	out[0] = '\0';
	for (i = 0; i < rec->nobjects; i++) {
		int d = id_distance(id, rec->objects[i].id);

		for (k = 0; k < 3; k++) {
			if (d < bd[k]) {
				memmove(&bd[k + 1], &bd[k], (size_t)(2 - k) * sizeof(*bd));
				memmove(&best[k + 1], &best[k], (size_t)(2 - k) * sizeof(*best));
				bd[k] = d;
				best[k] = (long)i;
				break;
			}
		}
	}
	for (k = 0; k < 3 && best[k] >= 0 && len < size; k++)
		len += (size_t)snprintf(out + len, size - len, "%s'%.60s'", k ? ", " : "",
					rec->objects[best[k]].id);
}

int tool__object_arg(struct tool_ctx *ctx, const cJSON *args, const char *key,
		     long *idx)
{
	const struct recording *rec = tool_ctx_rec(ctx);
	const char *id = tool__str(args, key);
	char path[80];
	long i;

	snprintf(path, sizeof(path), "/%s", key);
	if (!id)
		return tool__reject(ctx, path, "must be an object id");
	i = recording_find_object(rec, id);
	if (i < 0) {
		char near[256];

		nearest_ids(rec, id, near, sizeof(near));
		return tool__reject(ctx, path,
				    "no object with id '%.100s'; the nearest ids are %s "
				    "(describe_recording lists them all)", id, near);
	}
	*idx = i;
	return 0;
}

cJSON *tool__ignored(cJSON *result, const char *key, const char *why)
{
	cJSON *arr = cJSON_GetObjectItemCaseSensitive(result, "ignored"), *o;

	if (!arr)
		arr = cJSON_AddArrayToObject(result, "ignored");
	o = cJSON_CreateObject();
	if (!arr || !o || !cJSON_AddItemToArray(arr, o)) {
		cJSON_Delete(o);
		return NULL;
	}
	if (!cJSON_AddStringToObject(o, "argument", key) || !cJSON_AddStringToObject(o, "why", why))
		return NULL;
	return o;
}

int tool__camera(struct tool_ctx *ctx, const char *key, int64_t t,
		 struct pose *cam, float *heading)
{
	const struct recording *rec = tool_ctx_rec(ctx);
	char path[80];

	snprintf(path, sizeof(path), "/%s", key);
	if (recording_camera_at(rec, t, cam))
		return tool__reject(ctx, path,
				    "must be within the recording [%" PRId64 ", %" PRId64
				    "] ns, got %" PRId64, recording_t0(rec), recording_t1(rec), t);
	if (bev_heading(cam, heading))
		return err_set(ENG_ERANGE,
			       "the camera looks straight up or down at %" PRId64
			       " ns, so it has no heading", t);
	return 0;
}

int tool__camera_clamped(const struct recording *rec, int64_t t,
			 struct pose *cam, float *heading)
{
	if (t < recording_t0(rec))
		t = recording_t0(rec);
	if (t > recording_t1(rec))
		t = recording_t1(rec);
	if (recording_camera_at(rec, t, cam))
		return err_set(ENG_ERANGE, "no camera pose at %" PRId64 " ns", t);
	if (bev_heading(cam, heading))
		return err_set(ENG_ERANGE,
			       "the camera looks straight up or down at %" PRId64
			       " ns, so it has no heading", t);
	return 0;
}

void tool__object_pos(const struct recording *rec, size_t i, int64_t t,
		      vec3 out)
{
	struct obb b;

	recording_object_box_at(rec, i, t, &b);
	glm_vec3_copy(b.c, out);
}

void tool__action_location(const struct recording *rec, size_t i, vec3 out,
			   const char **source)
{
	const struct rec_action *a = &rec->actions[i];
	struct pose cam;
	int64_t t = a->start_ns;

	if (a->object >= 0 && (size_t)a->object < rec->nobjects) {
		tool__object_pos(rec, (size_t)a->object, t, out);
		*source = "object";
		return;
	}
	if (t < recording_t0(rec))
		t = recording_t0(rec);
	if (t > recording_t1(rec))
		t = recording_t1(rec);
	if (recording_camera_at(rec, t, &cam))
		pose_identity(&cam); /* unreachable: t is inside the trajectory */
	glm_vec3_copy(cam.t, out);
	*source = "camera";
}

const char *tool__hand_name(enum rec_hand h)
{
	switch (h) {
	case REC_HAND_LEFT: return "left";
	case REC_HAND_RIGHT: return "right";
	case REC_HAND_BOTH: return "both";
	default: return NULL;
	}
}

double tool__round(double v, int decimals)
{
	double p = pow(10.0, decimals), r;

	if (!isfinite(v))
		return v;
	r = round(v * p) / p;
	return r == 0 ? 0.0 : r; /* no "-0" */
}

cJSON *tool__time_value(int64_t t_ns)
{
	char b[32];

	snprintf(b, sizeof(b), "%" PRId64, t_ns);
	return cJSON_CreateRaw(b);
}

cJSON *tool__add_time(cJSON *obj, const char *key, int64_t t_ns)
{
	cJSON *v = tool__time_value(t_ns);

	if (!v)
		return NULL;
	if (!cJSON_AddItemToObject(obj, key, v)) {
		cJSON_Delete(v);
		return NULL;
	}
	return v;
}

cJSON *tool__add_num(cJSON *obj, const char *key, double v, int decimals)
{
	if (!isfinite(v))
		return cJSON_AddNullToObject(obj, key);
	return cJSON_AddNumberToObject(obj, key, tool__round(v, decimals));
}

cJSON *tool__add_vec3(cJSON *obj, const char *key, const vec3 v, int decimals)
{
	cJSON *a = cJSON_AddArrayToObject(obj, key);
	int i;

	if (!a)
		return NULL;
	for (i = 0; i < 3; i++) {
		cJSON *n = cJSON_CreateNumber(tool__round(v[i], decimals));

		if (!n)
			return NULL;
		cJSON_AddItemToArray(a, n);
	}
	return a;
}

cJSON *tool__add_str(cJSON *obj, const char *key, const char *s)
{
	if (!s)
		return cJSON_AddNullToObject(obj, key);
	return cJSON_AddStringToObject(obj, key, s);
}

cJSON *tool__add_object_ref(cJSON *obj, const char *key,
			    const struct recording *rec, long i)
{
	const struct rec_object *o;
	cJSON *r;

	if (i < 0 || (size_t)i >= rec->nobjects)
		return cJSON_AddNullToObject(obj, key);
	o = &rec->objects[i];
	r = cJSON_AddObjectToObject(obj, key);
	if (!r || !tool__add_str(r, "id", o->id) || !tool__add_str(r, "name", o->name) ||
	    !tool__add_str(r, "category", o->category))
		return NULL;
	return r;
}

cJSON *tool__action_json(const struct recording *rec, size_t i)
{
	const struct rec_action *a = &rec->actions[i];
	cJSON *o = cJSON_CreateObject();
	const char *src;
	vec3 loc = { 0 };

	if (!o)
		return NULL;
	tool__action_location(rec, i, loc, &src);
	if (!cJSON_AddNumberToObject(o, "index", (double)i) ||
	    !tool__add_time(o, "start_ns", a->start_ns) ||
	    !tool__add_time(o, "end_ns", a->end_ns) ||
	    !tool__add_str(o, "verb", a->verb) ||
	    !tool__add_object_ref(o, "object", rec, a->object) ||
	    !tool__add_str(o, "hand", tool__hand_name(a->hand)) ||
	    !tool__add_str(o, "description", a->description) ||
	    !tool__add_str(o, "goal", a->goal) ||
	    !tool__add_vec3(o, "location", loc, 3) ||
	    !cJSON_AddStringToObject(o, "location_source", src)) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}
