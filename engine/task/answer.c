/* SPDX-License-Identifier: MIT */
/* Structured answers: canonical values, rendering, JSON and parsing. */
#include "answer.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "banned.h"
#include "err.h"
#include "template.h"

/* ======================= Names ======================= */

static const char *const kind_names[ANS_NKIND] = {
	"intention.head_turn.approx",
	"intention.head_turn.relative",
	"intention.gaze_target.approx",
	"intention.gaze_target.relative",
	"exploration.navigate.approx",
	"exploration.navigate.relative",
	"exploitation.next_interaction.approx",
	"exploitation.next_interaction.relative",
	"chain.actions.relative",
};

static const char *const rel_names[ANS_NREL] = {
	"left_of", "right_of", "in_front_of", "behind", "near",
};

const char *ans_kind_name(enum ans_kind kind)
{
	return (unsigned)kind < ANS_NKIND ? kind_names[kind] : "?";
}

enum ans_kind ans_kind_from_name(const char *name)
{
	int i;

	if (!name)
		return ANS_NKIND;
	for (i = 0; i < ANS_NKIND; i++)
		if (!strcmp(kind_names[i], name))
			return (enum ans_kind)i;
	return ANS_NKIND;
}

enum ans_kind ans_kind_from_task(const char *subtask, const char *metric)
{
	char want[96];
	int i;

	if (!subtask || !metric)
		return ANS_NKIND;
	if (snprintf(want, sizeof(want), ".%s.%s", subtask, metric) >= (int)sizeof(want))
		return ANS_NKIND;
	for (i = 0; i < ANS_NKIND; i++) {
		const char *dot = strchr(kind_names[i], '.');

		if (dot && !strcmp(dot, want))
			return (enum ans_kind)i;
	}
	return ANS_NKIND;
}

const char *ans_rel_name(enum ans_rel rel)
{
	return (unsigned)rel < ANS_NREL ? rel_names[rel] : "?";
}

enum ans_rel ans_rel_from_name(const char *name)
{
	int i;

	if (!name)
		return ANS_NREL;
	for (i = 0; i < ANS_NREL; i++)
		if (!strcmp(rel_names[i], name))
			return (enum ans_rel)i;
	return ANS_NREL;
}

static const char *hand_name(enum rec_hand h)
{
	switch (h) {
	case REC_HAND_LEFT: return "left";
	case REC_HAND_RIGHT: return "right";
	case REC_HAND_BOTH: return "both";
	case REC_HAND_NONE: return "none";
	}
	return "?";
}

/* ======================= Values ======================= */

void ans_init(struct answer *a, enum ans_kind kind)
{
	memset(a, 0, sizeof(*a));
	a->kind = kind;
	a->dir = BEV_FRONT;
	a->hand = REC_HAND_NONE;
	a->rel = ANS_REL_LEFT_OF;
}

int ans_set_text(char *field, size_t size, const char *s)
{
	size_t b, e;

	if (!field || !size)
		return ENG_EINVAL;
	field[0] = '\0';
	if (!s)
		return ENG_EINVAL;
	b = 0;
	e = strlen(s);
	while (b < e && isspace((unsigned char)s[b]))
		b++;
	while (e > b && isspace((unsigned char)s[e - 1]))
		e--;
	if (e - b >= size)
		return ENG_ETOOBIG;
	memcpy(field, s + b, e - b);
	field[e - b] = '\0';
	return 0;
}

static bool dir_ok(enum bev_dir d)
{
	return (unsigned)d < BEV_NDIR;
}

static int norm_yaw(float *yaw, const struct disc_params *p, const char *field)
{
	float y = *yaw;

	if (!isfinite(y))
		return err_set(ENG_EINVAL, "answer: %s is not finite", field);
	y = bev_wrap_deg(y);
	switch (disc_turn_class(p, y)) {
	case DISC_TURN_FORWARD:
		*yaw = 0.0f;
		break;
	case DISC_TURN_AROUND:
		*yaw = 180.0f;
		break;
	case DISC_TURN_LEFT:
		*yaw = disc_angle(p, y);
		break;
	case DISC_TURN_RIGHT:
		*yaw = -disc_angle(p, y);
		break;
	}
	return 0;
}

static int norm_dist(float *d, const struct disc_params *p)
{
	if (!isfinite(*d) || *d < 0 || *d > ANS_DIST_MAX_M)
		return err_set(ENG_EINVAL, "answer: distance_m must be in 0..%g",
			       (double)ANS_DIST_MAX_M);
	*d = disc_distance(p, *d);
	if (*d <= 0.0f)
		return err_set(ENG_EINVAL, "answer: distance_m rounds to 0");
	return 0;
}

static int norm_name(char *field, size_t size, const char *what)
{
	char tmp[ANS_NAME_MAX];
	int rc;

	if (size > sizeof(tmp))
		size = sizeof(tmp);
	memcpy(tmp, field, size);
	tmp[size - 1] = '\0';
	rc = ans_set_text(field, size, tmp);
	if (rc)
		return err_set(ENG_EINVAL, "answer: %s too long", what);
	if (!field[0])
		return err_set(ENG_EINVAL, "answer: %s is empty", what);
	return 0;
}

int ans_normalise(struct answer *a, const struct disc_params *p)
{
	struct disc_params def;
	int rc = 0;
	int i, j;

	if (!p) {
		disc_defaults(&def);
		p = &def;
	}
	switch (a->kind) {
	case ANS_HEAD_TURN_APPROX:
		rc = norm_yaw(&a->yaw_deg, p, "yaw_deg");
		break;
	case ANS_HEAD_TURN_RELATIVE:
		if (!dir_ok(a->dir))
			rc = err_set(ENG_EINVAL, "answer: bad direction");
		break;
	case ANS_GAZE_APPROX:
		rc = norm_yaw(&a->yaw_deg, p, "yaw_deg");
		if (!rc)
			rc = norm_name(a->object, sizeof(a->object), "object");
		break;
	case ANS_GAZE_RELATIVE:
		if ((unsigned)a->rel >= ANS_NREL)
			return err_set(ENG_EINVAL, "answer: bad relation");
		rc = norm_name(a->object, sizeof(a->object), "object");
		if (!rc)
			rc = norm_name(a->ref, sizeof(a->ref), "reference");
		if (!rc && ans_name_equal(a->object, a->ref))
			rc = err_set(ENG_EINVAL, "answer: object equals the reference '%s'",
				     a->ref);
		break;
	case ANS_NAV_APPROX:
		if (!dir_ok(a->dir))
			return err_set(ENG_EINVAL, "answer: bad direction");
		rc = norm_dist(&a->dist_m, p);
		break;
	case ANS_NAV_RELATIVE:
		if (a->nlegs < 1 || a->nlegs > 2)
			return err_set(ENG_EINVAL, "answer: legs must hold 1 or 2 directions");
		for (i = 0; i < a->nlegs; i++)
			if (!dir_ok(a->legs[i]))
				return err_set(ENG_EINVAL, "answer: bad direction in legs[%d]", i);
		if (a->nlegs == 1)
			a->legs[1] = BEV_FRONT;
		break;
	case ANS_INTERACT_APPROX:
		if (!dir_ok(a->dir))
			return err_set(ENG_EINVAL, "answer: bad direction");
		if (a->vertical < -1 || a->vertical > 1)
			return err_set(ENG_EINVAL, "answer: vertical must be -1, 0 or 1");
		if ((unsigned)a->hand > REC_HAND_BOTH)
			return err_set(ENG_EINVAL, "answer: bad hand");
		rc = norm_dist(&a->dist_m, p);
		if (!rc)
			rc = norm_name(a->verb, sizeof(a->verb), "verb");
		if (!rc)
			rc = norm_name(a->object, sizeof(a->object), "object");
		break;
	case ANS_INTERACT_RELATIVE:
		if (!dir_ok(a->dir))
			return err_set(ENG_EINVAL, "answer: bad direction");
		rc = norm_name(a->verb, sizeof(a->verb), "verb");
		if (!rc)
			rc = norm_name(a->object, sizeof(a->object), "object");
		break;
	case ANS_CHAIN:
		if (a->k < 2 || a->k > ANS_CHAIN_MAX)
			return err_set(ENG_EINVAL, "answer: a chain holds 2..%d nodes",
				       ANS_CHAIN_MAX);
		for (i = 0; i < a->k; i++) {
			if (a->nodes[i] < ANS_CHAIN_BASE || a->nodes[i] > 999)
				return err_set(ENG_EINVAL, "answer: bad node id %d", a->nodes[i]);
			for (j = 0; j < i; j++)
				if (a->nodes[j] == a->nodes[i])
					return err_set(ENG_EINVAL,
						       "answer: node %d appears twice",
						       a->nodes[i]);
		}
		for (i = 0; i < a->k - 1; i++)
			if (!dir_ok(a->edges[i]))
				return err_set(ENG_EINVAL, "answer: bad edge %d", i);
		break;
	default:
		return err_set(ENG_EINVAL, "answer: bad kind %d", (int)a->kind);
	}
	return rc;
}

/* ======================= Rendering ======================= */

static void answers_path(enum ans_kind kind, char *path, size_t size)
{
	snprintf(path, size, "prompts/answers/%s.txt", ans_kind_name(kind));
}

/* The text of key `prefix` + `name` in the kind's template, as a string. */
/*
 * The key to use for phrasing variant `style` of key: key itself or one of
 * "key~2" .. "key~9" that the template defines, style modulo their number.
 */
static void style_key(const char *path, const char *key, int style, char *out, size_t size)
{
	char k[80];
	const char *t;
	size_t len;
	int n = 1, i;

	for (i = 2; i <= 9; i++) {
		snprintf(k, sizeof(k), "%s~%d", key, i);
		if (tmpl_keyed(path, k, &t, &len))
			break;
		n++;
	}
	i = n > 1 ? (style < 0 ? -style : style) % n : 0;
	if (i == 0)
		snprintf(out, size, "%s", key);
	else
		snprintf(out, size, "%s~%d", key, i + 1);
}

/* tmpl_render_keyed() of the style's variant of key. */
static int styled(const char *path, int style, const char *key, const struct tmpl_var *vars,
		  size_t nvars, struct buf *out)
{
	char k[80];

	style_key(path, key, style, k, sizeof(k));
	return tmpl_render_keyed(path, k, vars, nvars, out);
}

static int vocab(const char *path, int style, const char *prefix, const char *name, char *out,
		 size_t size)
{
	char key[64], k[80];
	const char *t;
	size_t len;
	int rc;

	snprintf(key, sizeof(key), "%s%s", prefix, name);
	style_key(path, key, style, k, sizeof(k));
	rc = tmpl_keyed(path, k, &t, &len);
	if (rc)
		return rc;
	if (len >= size)
		return ENG_ETOOBIG;
	memcpy(out, t, len);
	out[len] = '\0';
	return 0;
}

static void capitalise(struct buf *out, size_t start)
{
	if (out->ptr && start < out->len && out->ptr[start] >= 'a' && out->ptr[start] <= 'z')
		out->ptr[start] = (char)(out->ptr[start] - 'a' + 'A');
}

static int render_yaw(const char *path, int style, const struct answer *a,
		      const char *fwd_key, const char *around_key, const char *turn_key,
		      struct buf *out)
{
	char angle[16];
	struct tmpl_var v[3] = {
		{ "side", a->yaw_deg > 0 ? "left" : "right" },
		{ "angle", angle },
		{ "object", a->object },
	};

	snprintf(angle, sizeof(angle), "%d", (int)lroundf(fabsf(a->yaw_deg)));
	if (a->yaw_deg == 0.0f)
		return styled(path, style, fwd_key, v, 3, out);
	if (a->yaw_deg == 180.0f)
		return styled(path, style, around_key, v, 3, out);
	return styled(path, style, turn_key, v, 3, out);
}

static int render_chain_json(const char *path, const struct answer *a, struct buf *out)
{
	char nodes[ANS_CHAIN_MAX * 5 + 1], edges[ANS_CHAIN_MAX * 5 + 1];
	size_t n = 0, m = 0;
	int i;
	struct tmpl_var v[2] = { { "nodes", nodes }, { "edges", edges } };

	nodes[0] = edges[0] = '\0';
	for (i = 0; i < a->k; i++)
		n += (size_t)snprintf(nodes + n, sizeof(nodes) - n, "%s%d", i ? "," : "",
				      a->nodes[i]);
	for (i = 0; i < a->k - 1; i++)
		m += (size_t)snprintf(edges + m, sizeof(edges) - m, "%s\"%c\"", i ? "," : "",
				      bev_dir_letter(a->edges[i]));
	return tmpl_render_keyed(path, "json", v, 2, out);
}

/* distance bins a factor 2 apart from 0.25 m */
static int dist_bin(float m)
{
	if (!(m > 0.25f))
		return 0;
	return 1 + (int)floor(log2((double)m / 0.25));
}

int ans_strata(const struct answer *a, char (*out)[ANS_STRATUM_MAX], enum ans_field *field)
{
	enum ans_field scratch[ANS_STRATA_MAX];
	int n = 0, b;

	if (!field)
		field = scratch;
#define LABEL(f, ...) (field[n] = (f), snprintf(out[n++], ANS_STRATUM_MAX, __VA_ARGS__))
	switch (a->kind) {
	case ANS_GAZE_APPROX:
	case ANS_HEAD_TURN_APPROX:
		b = (int)floor(fabs((double)a->yaw_deg) / 30.0);
		LABEL(ANS_F_TURN, "turn=%s%d", a->yaw_deg < 0 ? "-" : "+", b > 5 ? 5 : b);
		break;
	case ANS_HEAD_TURN_RELATIVE:
		LABEL(ANS_F_DIRECTION, "direction=%s", bev_dir_name(a->dir));
		break;
	case ANS_GAZE_RELATIVE: LABEL(ANS_F_RELATION, "relation=%s", ans_rel_name(a->rel)); break;
	case ANS_NAV_APPROX:
		LABEL(ANS_F_DIRECTION, "direction=%s", bev_dir_name(a->dir));
		LABEL(ANS_F_DISTANCE, "distance=%d", dist_bin(a->dist_m));
		break;
	case ANS_NAV_RELATIVE:
		LABEL(ANS_F_FIRST_LEG, "first_leg=%s", bev_dir_name(a->legs[0]));
		LABEL(ANS_F_LEGS, "legs=%s,%s", bev_dir_name(a->legs[0]),
		      a->nlegs > 1 ? bev_dir_name(a->legs[1]) : "-");
		break;
	case ANS_INTERACT_APPROX:
		LABEL(ANS_F_DISTANCE, "distance=%d", dist_bin(a->dist_m));
		LABEL(ANS_F_VERTICAL, "vertical=%d", a->vertical);
		LABEL(ANS_F_HAND, "hand=%d", (int)a->hand);
		/* fall through */
	case ANS_INTERACT_RELATIVE:
		LABEL(ANS_F_DIRECTION, "direction=%s", bev_dir_name(a->dir));
		LABEL(ANS_F_VERB, "verb=%s", a->verb);
		break;
	default:
		break;
	}
#undef LABEL
	return n;
}

/* Validation: the value must normalise without error. */
static int check_valid(const struct answer *a)
{
	struct answer c = *a;

	return ans_normalise(&c, NULL);
}

int ans_render_style(const struct answer *a, int style, struct buf *out)
{
	char path[96], w1[64], w2[64], dist[16];
	size_t start = out->len;
	int rc;

	rc = check_valid(a);
	if (rc)
		return rc;
	answers_path(a->kind, path, sizeof(path));
	snprintf(dist, sizeof(dist), "%.1f", (double)a->dist_m);
	switch (a->kind) {
	case ANS_HEAD_TURN_APPROX:
		rc = render_yaw(path, style, a, "forward", "around", "turn", out);
		break;
	case ANS_GAZE_APPROX:
		rc = render_yaw(path, style, a, "forward", "around", "look", out);
		break;
	case ANS_HEAD_TURN_RELATIVE: {
		struct tmpl_var v[1] = { { "direction", w1 } };

		rc = vocab(path, style, "dir.", bev_dir_name(a->dir), w1, sizeof(w1));
		if (!rc)
			rc = styled(path, style, "turn", v, 1, out);
		break;
	}
	case ANS_GAZE_RELATIVE: {
		struct tmpl_var v[3] = {
			{ "object", a->object }, { "relation", w1 }, { "ref", a->ref },
		};

		rc = vocab(path, style, "rel.", ans_rel_name(a->rel), w1, sizeof(w1));
		if (!rc)
			rc = styled(path, style, "where", v, 3, out);
		break;
	}
	case ANS_NAV_APPROX: {
		struct tmpl_var v[2] = { { "leg", w1 }, { "distance", dist } };

		rc = vocab(path, style, "leg.", bev_dir_name(a->dir), w1, sizeof(w1));
		if (!rc)
			rc = styled(path, style, "go", v, 2, out);
		break;
	}
	case ANS_NAV_RELATIVE: {
		struct tmpl_var v[3] = { { "leg", w1 }, { "leg1", w1 }, { "leg2", w2 } };

		rc = vocab(path, style, "leg.", bev_dir_name(a->legs[0]), w1, sizeof(w1));
		if (!rc && a->nlegs == 2)
			rc = vocab(path, style, "leg.", bev_dir_name(a->legs[1]), w2, sizeof(w2));
		if (!rc)
			rc = styled(path, style, a->nlegs == 2 ? "two" : "one", v, 3, out);
		break;
	}
	case ANS_INTERACT_APPROX: {
		struct tmpl_var v[6] = {
			{ "direction", bev_dir_name(a->dir) },
			{ "vertical", a->vertical > 0 ? "up" : "down" },
			{ "distance", dist },
			{ "verb", a->verb },
			{ "object", a->object },
			{ "hand", w1 },
		};
		const char *key;

		w1[0] = '\0';
		if (a->hand != REC_HAND_NONE) {
			rc = vocab(path, style, "hand.", hand_name(a->hand), w1, sizeof(w1));
			key = a->vertical ? "vertical_hand" : "level_hand";
		} else {
			key = a->vertical ? "vertical" : "level";
		}
		if (!rc)
			rc = styled(path, style, key, v, 6, out);
		break;
	}
	case ANS_INTERACT_RELATIVE: {
		struct tmpl_var v[3] = {
			{ "move", w1 }, { "verb", a->verb }, { "object", a->object },
		};

		rc = vocab(path, style, "move.", bev_dir_name(a->dir), w1, sizeof(w1));
		if (!rc)
			rc = styled(path, style, "act", v, 3, out);
		break;
	}
	case ANS_CHAIN:
		rc = render_chain_json(path, a, out);
		break;
	default:
		rc = ENG_EINVAL;
	}
	if (!rc)
		capitalise(out, start);
	return rc;
}

int ans_render(const struct answer *a, struct buf *out)
{
	return ans_render_style(a, 0, out);
}

int ans_render_chain_readable(const struct answer *a, const char *const *cands,
			      int ncands, struct buf *out)
{
	char path[96];
	int i, rc = 0;

	if (a->kind != ANS_CHAIN || a->k < 1 || a->k > ANS_CHAIN_MAX)
		return err_set(ENG_EINVAL, "answer: not a chain");
	for (i = 0; i < a->k; i++) {
		int id = a->nodes[i] - ANS_CHAIN_BASE;

		if (id < 0 || id >= ncands || !cands[id])
			return err_set(ENG_EINVAL, "answer: node %d is not a candidate",
				       a->nodes[i]);
	}
	answers_path(ANS_CHAIN, path, sizeof(path));
	for (i = 0; i < a->k && !rc; i++) {
		if (i) {
			struct tmpl_var v[1] = { { "direction", bev_dir_name(a->edges[i - 1]) } };

			rc = buf_adds(out, " ");
			if (!rc)
				rc = tmpl_render_keyed(path, "arrow", v, 1, out);
			if (!rc)
				rc = buf_adds(out, " ");
		}
		if (!rc)
			rc = buf_adds(out, cands[a->nodes[i] - ANS_CHAIN_BASE]);
	}
	return rc;
}

/* ======================= JSON ======================= */

static double json_round(float v)
{
	return round((double)v * 1000.0) / 1000.0;
}

static bool add_str(cJSON *o, const char *k, const char *v)
{
	return cJSON_AddStringToObject(o, k, v) != NULL;
}

static bool add_num(cJSON *o, const char *k, double v)
{
	return cJSON_AddNumberToObject(o, k, v) != NULL;
}

cJSON *ans_to_json(const struct answer *a)
{
	cJSON *o, *arr;
	bool ok = true;
	int i;

	if ((unsigned)a->kind >= ANS_NKIND)
		return NULL;
	o = cJSON_CreateObject();
	if (!o)
		return NULL;
	ok = add_str(o, "kind", ans_kind_name(a->kind));
	switch (a->kind) {
	case ANS_HEAD_TURN_APPROX:
	case ANS_GAZE_APPROX:
		ok = ok && add_num(o, "yaw_deg", json_round(a->yaw_deg));
		ok = ok && add_str(o, "turn", a->yaw_deg == 0.0f ? "forward" :
				   a->yaw_deg == 180.0f ? "around" :
				   a->yaw_deg > 0 ? "left" : "right");
		if (a->kind == ANS_GAZE_APPROX)
			ok = ok && add_str(o, "object", a->object);
		break;
	case ANS_HEAD_TURN_RELATIVE:
		ok = ok && add_str(o, "direction", bev_dir_name(a->dir));
		break;
	case ANS_GAZE_RELATIVE:
		ok = ok && add_str(o, "object", a->object);
		ok = ok && add_str(o, "relation", ans_rel_name(a->rel));
		ok = ok && add_str(o, "reference", a->ref);
		break;
	case ANS_NAV_APPROX:
		ok = ok && add_str(o, "direction", bev_dir_name(a->dir));
		ok = ok && add_num(o, "distance_m", json_round(a->dist_m));
		break;
	case ANS_NAV_RELATIVE:
		arr = cJSON_AddArrayToObject(o, "legs");
		ok = ok && arr;
		for (i = 0; ok && i < a->nlegs; i++) {
			cJSON *s = cJSON_CreateString(bev_dir_name(a->legs[i]));

			ok = s && cJSON_AddItemToArray(arr, s);
		}
		break;
	case ANS_INTERACT_APPROX:
		ok = ok && add_str(o, "direction", bev_dir_name(a->dir));
		ok = ok && add_str(o, "vertical", a->vertical > 0 ? "up" :
				   a->vertical < 0 ? "down" : "level");
		ok = ok && add_num(o, "distance_m", json_round(a->dist_m));
		if (a->hand != REC_HAND_NONE)
			ok = ok && add_str(o, "hand", hand_name(a->hand));
		ok = ok && add_str(o, "verb", a->verb);
		ok = ok && add_str(o, "object", a->object);
		break;
	case ANS_INTERACT_RELATIVE:
		ok = ok && add_str(o, "direction", bev_dir_name(a->dir));
		ok = ok && add_str(o, "verb", a->verb);
		ok = ok && add_str(o, "object", a->object);
		break;
	case ANS_CHAIN:
		arr = cJSON_AddArrayToObject(o, "nodes");
		ok = ok && arr;
		for (i = 0; ok && i < a->k; i++) {
			cJSON *n = cJSON_CreateNumber(a->nodes[i]);

			ok = n && cJSON_AddItemToArray(arr, n);
		}
		arr = ok ? cJSON_AddArrayToObject(o, "edges") : NULL;
		ok = ok && arr;
		for (i = 0; ok && i < a->k - 1; i++) {
			char l[2] = { bev_dir_letter(a->edges[i]), '\0' };
			cJSON *s = cJSON_CreateString(l);

			ok = s && cJSON_AddItemToArray(arr, s);
		}
		break;
	default:
		ok = false;
	}
	if (!ok) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

static int get_str(const cJSON *j, const char *k, const char **out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, k);

	if (!cJSON_IsString(v) || !v->valuestring)
		return err_set(ENG_EPARSE, "answer: field '%s' missing or not a string", k);
	*out = v->valuestring;
	return 0;
}

static int get_num(const cJSON *j, const char *k, float *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, k);

	if (!cJSON_IsNumber(v))
		return err_set(ENG_EPARSE, "answer: field '%s' missing or not a number", k);
	*out = (float)v->valuedouble;
	return 0;
}

static int get_dir(const cJSON *j, const char *k, enum bev_dir *out)
{
	const char *s = NULL;
	int rc = get_str(j, k, &s);

	if (rc)
		return rc;
	*out = bev_dir_from_name(s);
	if (*out == BEV_NDIR)
		return err_set(ENG_EINVAL, "answer: field '%s': unknown direction '%s'", k, s);
	return 0;
}

static int get_name(const cJSON *j, const char *k, char *field, size_t size)
{
	const char *s = NULL;
	int rc = get_str(j, k, &s);

	if (rc)
		return rc;
	if (ans_set_text(field, size, s))
		return err_set(ENG_EINVAL, "answer: field '%s' too long", k);
	return 0;
}

/* A direction from an edge string: a letter A..H or a direction name. */
static enum bev_dir edge_dir(const char *s)
{
	if (s[0] && !s[1])
		return bev_dir_from_letter(s[0]);
	return bev_dir_from_name(s);
}

static int legs_from_json(const cJSON *j, struct answer *out)
{
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(j, "legs"), *it;

	if (!cJSON_IsArray(arr))
		return err_set(ENG_EPARSE, "answer: field 'legs' missing or not an array");
	out->nlegs = 0;
	cJSON_ArrayForEach(it, arr) {
		if (out->nlegs >= 2)
			return err_set(ENG_EINVAL, "answer: field 'legs': more than 2 legs");
		if (!cJSON_IsString(it) || bev_dir_from_name(it->valuestring) == BEV_NDIR)
			return err_set(ENG_EINVAL, "answer: field 'legs': bad direction");
		out->legs[out->nlegs++] = bev_dir_from_name(it->valuestring);
	}
	return 0;
}

static int interact_from_json(const cJSON *j, struct answer *out)
{
	const char *s = NULL;
	const cJSON *it;
	int rc;

	rc = get_dir(j, "direction", &out->dir);
	if (!rc)
		rc = get_num(j, "distance_m", &out->dist_m);
	if (!rc)
		rc = get_str(j, "vertical", &s);
	if (!rc) {
		if (!strcmp(s, "up"))
			out->vertical = 1;
		else if (!strcmp(s, "down"))
			out->vertical = -1;
		else if (!strcmp(s, "level"))
			out->vertical = 0;
		else
			rc = err_set(ENG_EINVAL, "answer: field 'vertical': unknown '%s'", s);
	}
	it = cJSON_GetObjectItemCaseSensitive(j, "hand");
	if (!rc && it && !cJSON_IsNull(it)) {
		if (!cJSON_IsString(it))
			rc = err_set(ENG_EPARSE, "answer: field 'hand' not a string");
		else if (!strcmp(it->valuestring, "left"))
			out->hand = REC_HAND_LEFT;
		else if (!strcmp(it->valuestring, "right"))
			out->hand = REC_HAND_RIGHT;
		else if (!strcmp(it->valuestring, "both"))
			out->hand = REC_HAND_BOTH;
		else if (strcmp(it->valuestring, "none"))
			rc = err_set(ENG_EINVAL, "answer: field 'hand': unknown '%s'", it->valuestring);
	}
	if (!rc)
		rc = get_name(j, "verb", out->verb, sizeof(out->verb));
	if (!rc)
		rc = get_name(j, "object", out->object, sizeof(out->object));
	return rc;
}

static int chain_from_json(const cJSON *j, struct answer *out)
{
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(j, "nodes"), *it;
	int i = 0;

	if (!cJSON_IsArray(arr))
		return err_set(ENG_EPARSE, "answer: field 'nodes' missing or not an array");
	out->k = 0;
	cJSON_ArrayForEach(it, arr) {
		if (out->k >= ANS_CHAIN_MAX || !cJSON_IsNumber(it))
			return err_set(ENG_EINVAL, "answer: field 'nodes': bad node");
		out->nodes[out->k++] = it->valueint;
	}
	arr = cJSON_GetObjectItemCaseSensitive(j, "edges");
	if (!cJSON_IsArray(arr))
		return err_set(ENG_EPARSE, "answer: field 'edges' missing or not an array");
	cJSON_ArrayForEach(it, arr) {
		if (i >= ANS_CHAIN_MAX - 1 || !cJSON_IsString(it) || edge_dir(it->valuestring) == BEV_NDIR)
			return err_set(ENG_EINVAL, "answer: field 'edges': bad edge");
		out->edges[i++] = edge_dir(it->valuestring);
	}
	if (i != out->k - 1)
		return err_set(ENG_EINVAL, "answer: %d nodes need %d edges, got %d", out->k,
			       out->k - 1, i);
	return 0;
}

int ans_from_json(const cJSON *j, struct answer *out)
{
	const char *s = NULL;
	enum ans_kind kind;
	int rc;

	if (!cJSON_IsObject(j))
		return err_set(ENG_EPARSE, "answer: not a JSON object");
	rc = get_str(j, "kind", &s);
	if (rc)
		return rc;
	kind = ans_kind_from_name(s);
	if (kind == ANS_NKIND)
		return err_set(ENG_EINVAL, "answer: field 'kind': unknown kind '%s'", s);
	ans_init(out, kind);
	switch (kind) {
	case ANS_HEAD_TURN_APPROX:
		rc = get_num(j, "yaw_deg", &out->yaw_deg);
		break;
	case ANS_GAZE_APPROX:
		rc = get_num(j, "yaw_deg", &out->yaw_deg);
		if (!rc)
			rc = get_name(j, "object", out->object, sizeof(out->object));
		break;
	case ANS_HEAD_TURN_RELATIVE:
		rc = get_dir(j, "direction", &out->dir);
		break;
	case ANS_GAZE_RELATIVE:
		rc = get_name(j, "object", out->object, sizeof(out->object));
		if (!rc)
			rc = get_name(j, "reference", out->ref, sizeof(out->ref));
		if (!rc)
			rc = get_str(j, "relation", &s);
		if (!rc) {
			out->rel = ans_rel_from_name(s);
			if (out->rel == ANS_NREL)
				rc = err_set(ENG_EINVAL, "answer: field 'relation': unknown '%s'", s);
		}
		break;
	case ANS_NAV_APPROX:
		rc = get_dir(j, "direction", &out->dir);
		if (!rc)
			rc = get_num(j, "distance_m", &out->dist_m);
		break;
	case ANS_NAV_RELATIVE:
		rc = legs_from_json(j, out);
		break;
	case ANS_INTERACT_APPROX:
		rc = interact_from_json(j, out);
		break;
	case ANS_INTERACT_RELATIVE:
		rc = get_dir(j, "direction", &out->dir);
		if (!rc)
			rc = get_name(j, "verb", out->verb, sizeof(out->verb));
		if (!rc)
			rc = get_name(j, "object", out->object, sizeof(out->object));
		break;
	case ANS_CHAIN:
		rc = chain_from_json(j, out);
		break;
	default:
		break;
	}
	if (rc)
		return rc;
	return ans_normalise(out, NULL);
}

/* ======================= Parsing ======================= */

#define TOK_MAX 160
#define TOK_WORD_MAX 24

enum tok_type { TOK_WORD = 0, TOK_NUM, TOK_PUNCT };

struct tok {
	enum tok_type type;
	char w[TOK_WORD_MAX]; /* lowercased word, or the punctuation character */
	double num;           /* TOK_NUM value */
	size_t b, e;          /* byte span in the source */
};

struct toks {
	const char *src;
	struct tok t[TOK_MAX];
	int n;
};

static void push(struct toks *ts, enum tok_type type, const char *w, size_t wl,
		 double num, size_t b, size_t e)
{
	struct tok *t;

	if (ts->n >= TOK_MAX)
		return;
	t = &ts->t[ts->n++];
	t->type = type;
	if (wl >= TOK_WORD_MAX)
		wl = TOK_WORD_MAX - 1;
	memcpy(t->w, w, wl);
	t->w[wl] = '\0';
	t->num = num;
	t->b = b;
	t->e = e;
}

/*
 * Splits text into lowercase words, numbers and punctuation. "°" and "º"
 * become the word "deg"; "~" and "≈" are dropped; hyphens, underscores,
 * slashes and other bytes separate words.
 */
static void tokenise(const char *s, struct toks *ts)
{
	size_t i = 0, n = strlen(s);

	ts->src = s;
	ts->n = 0;
	while (i < n) {
		unsigned char c = (unsigned char)s[i];

		if (isalpha(c)) {
			char w[TOK_WORD_MAX];
			size_t b = i, wl = 0;

			while (i < n && (isalpha((unsigned char)s[i]) || s[i] == '\'')) {
				if (wl < sizeof(w) - 1)
					w[wl++] = (char)tolower((unsigned char)s[i]);
				i++;
			}
			push(ts, TOK_WORD, w, wl, 0, b, i);
		} else if (isdigit(c) || (c == '.' && i + 1 < n && isdigit((unsigned char)s[i + 1]))) {
			char num[32];
			size_t b = i, nl = 0;

			while (i < n && (isdigit((unsigned char)s[i]) ||
					 (s[i] == '.' && i + 1 < n && isdigit((unsigned char)s[i + 1])))) {
				if (nl < sizeof(num) - 1)
					num[nl++] = s[i];
				i++;
			}
			num[nl] = '\0';
			push(ts, TOK_NUM, "#", 1, strtod(num, NULL), b, i);
		} else if (c == 0xC2 && i + 1 < n &&
			   ((unsigned char)s[i + 1] == 0xB0 || (unsigned char)s[i + 1] == 0xBA)) {
			push(ts, TOK_WORD, "deg", 3, 0, i, i + 2);
			i += 2;
		} else if (c == ',' || c == ';' || c == '.' || c == ':' || c == '!' ||
			   c == '?' || c == '(' || c == ')') {
			push(ts, TOK_PUNCT, s + i, 1, 0, i, i + 1);
			i++;
		} else {
			i++;
		}
	}
}

static bool is_word(const struct tok *t, const char *w)
{
	/* NOLINTNEXTLINE(clang-analyzer-core.UndefinedBinaryOperatorResult): push() writes every token below n */
	return t->type == TOK_WORD && !strcmp(t->w, w);
}

static bool word_in(const struct tok *t, const char *const *list)
{
	int i;

	if (t->type != TOK_WORD)
		return false;
	for (i = 0; list[i]; i++)
		if (!strcmp(t->w, list[i]))
			return true;
	return false;
}

static const char *const w_front[] = { "front", "forward", "forwards", "ahead",
				       "straight", NULL };
static const char *const w_back[] = { "back", "behind", "backward", "backwards",
				      "rear", "around", NULL };
static const char *const w_article[] = { "the", "a", "an", NULL };
static const char *const w_handword[] = { "hand", "hands", "arm", "arms", NULL };
static const char *const w_dirword[] = { "front", "forward", "forwards", "ahead",
	"straight", "back", "behind", "backward", "backwards", "rear", "around",
	"left", "right", "side", "other", NULL };

/* A left/right token that names a hand ("right hand"), not a direction. */
static bool hand_side(const struct toks *ts, int i)
{
	return i + 1 < ts->n && word_in(&ts->t[i + 1], w_handword);
}

/*
 * The first direction expression in tokens [b, e): front/back words
 * optionally followed by left/right ("front-left", "back right"), or a lone
 * left/right/front/back word. Returns true and the direction in *out.
 */
static bool find_dir(const struct toks *ts, int b, int e, enum bev_dir *out)
{
	int i;

	for (i = b; i < e; i++) {
		const struct tok *t = &ts->t[i];
		bool f = word_in(t, w_front), k = word_in(t, w_back);
		bool approx = is_word(t, "around") && i + 1 < e && ts->t[i + 1].type == TOK_NUM;
		bool l = is_word(t, "left") && !hand_side(ts, i);
		bool r = is_word(t, "right") && !hand_side(ts, i);

		if (!approx && (f || (k && !is_word(t, "around"))) && i + 1 < e &&
		    (is_word(&ts->t[i + 1], "left") || is_word(&ts->t[i + 1], "right")) &&
		    !hand_side(ts, i + 1)) {
			bool left = is_word(&ts->t[i + 1], "left");

			if (f)
				*out = left ? BEV_FRONT_LEFT : BEV_FRONT_RIGHT;
			else
				*out = left ? BEV_BACK_LEFT : BEV_BACK_RIGHT;
			return true;
		}
		if (approx)
			continue;
		if (f || k || l || r) {
			*out = f ? BEV_FRONT : k ? BEV_BACK : l ? BEV_LEFT : BEV_RIGHT;
			return true;
		}
	}
	return false;
}

/* find_dir(), else FRONT when a forward-moving verb is there ("advance"). */
static bool find_move_dir(const struct toks *ts, int b, int e, enum bev_dir *out)
{
	static const char *const fwd_verbs[] = { "advance", "proceed", "continue", NULL };
	int i;

	if (find_dir(ts, b, e, out))
		return true;
	for (i = b; i < e; i++)
		if (word_in(&ts->t[i], fwd_verbs)) {
			*out = BEV_FRONT;
			return true;
		}
	return false;
}

enum unit { UNIT_NONE = 0, UNIT_DEG, UNIT_M, UNIT_CM };

static enum unit unit_at(const struct toks *ts, int i)
{
	static const char *const deg[] = { "deg", "degree", "degrees", "degs", NULL };
	static const char *const m[] = { "m", "metre", "metres", "meter", "meters", NULL };
	static const char *const cm[] = { "cm", "centimetre", "centimetres", "centimeter",
					  "centimeters", NULL };

	if (i >= ts->n)
		return UNIT_NONE;
	if (word_in(&ts->t[i], deg))
		return UNIT_DEG;
	if (word_in(&ts->t[i], m))
		return UNIT_M;
	if (word_in(&ts->t[i], cm))
		return UNIT_CM;
	return UNIT_NONE;
}

/*
 * A number in [b, e) with the wanted unit (UNIT_DEG or UNIT_M, which also
 * takes cm): the first number carrying that unit, else the first number
 * with no unit. Returns true and the value (cm converted to m).
 */
static bool find_num(const struct toks *ts, int b, int e, enum unit want, double *v)
{
	int i, bare = -1;

	for (i = b; i < e; i++) {
		enum unit u;

		/* NOLINTNEXTLINE(clang-analyzer-core.UndefinedBinaryOperatorResult): push() writes every token below n */
		if (ts->t[i].type != TOK_NUM)
			continue;
		u = unit_at(ts, i + 1);
		if (u == want || (want == UNIT_M && u == UNIT_CM)) {
			*v = u == UNIT_CM ? ts->t[i].num / 100.0 : ts->t[i].num;
			return true;
		}
		if (u == UNIT_NONE && bare < 0)
			bare = i;
	}
	if (bare >= 0) {
		*v = ts->t[bare].num;
		return true;
	}
	return false;
}

/* Copies source text of word tokens [b, e) (leading articles skipped). */
static int span_text(const struct toks *ts, int b, int e, char *out, size_t size,
		     const char *what)
{
	size_t len;

	/* NOLINTNEXTLINE(clang-analyzer-core.UndefinedBinaryOperatorResult): push() writes every token below n */
	while (b < e && (ts->t[b].type == TOK_PUNCT || word_in(&ts->t[b], w_article)))
		b++;
	while (e > b && ts->t[e - 1].type == TOK_PUNCT && ts->t[e - 1].w[0] != ')')
		e--;
	if (b >= e)
		return err_set(ENG_EPARSE, "answer text: no %s", what);
	len = ts->t[e - 1].e - ts->t[b].b;
	if (len >= size)
		return err_set(ENG_EPARSE, "answer text: %s too long", what);
	memcpy(out, ts->src + ts->t[b].b, len);
	out[len] = '\0';
	return 0;
}

/* Lowercase words of tokens [b, e) joined by single spaces. */
static int span_words(const struct toks *ts, int b, int e, char *out, size_t size,
		      const char *what)
{
	size_t n = 0;
	int i;

	out[0] = '\0';
	for (i = b; i < e; i++) {
		size_t wl;

		if (ts->t[i].type != TOK_WORD)
			continue;
		wl = strlen(ts->t[i].w);
		if (n + wl + 2 > size)
			return err_set(ENG_EPARSE, "answer text: %s too long", what);
		if (n)
			out[n++] = ' ';
		memcpy(out + n, ts->t[i].w, wl + 1);
		n += wl;
	}
	if (!n)
		return err_set(ENG_EPARSE, "answer text: no %s", what);
	return 0;
}

/*
 * Index of the "to" that opens a purpose clause ("to pick up", "to
 * retrieve"): the first "to" followed by a word that is not an article or a
 * direction word. Also "in order to", "so that". Returns e when none.
 */
static int purpose_clause(const struct toks *ts, int b, int e)
{
	int i;

	for (i = b; i < e; i++) {
		if (is_word(&ts->t[i], "in") && i + 1 < e && is_word(&ts->t[i + 1], "order"))
			return i;
		if (is_word(&ts->t[i], "so") && i + 1 < e && is_word(&ts->t[i + 1], "that"))
			return i;
		if (is_word(&ts->t[i], "to") && i + 1 < e && ts->t[i + 1].type == TOK_WORD &&
		    !word_in(&ts->t[i + 1], w_article) && !word_in(&ts->t[i + 1], w_dirword) &&
		    !is_word(&ts->t[i + 1], "your") && !is_word(&ts->t[i + 1], "their"))
			return i;
	}
	return e;
}

/* The yaw of an approx turn text in [b, e). */
static int parse_yaw(const struct toks *ts, int b, int e, const struct disc_params *p,
		     float *yaw)
{
	enum bev_dir d = BEV_NDIR;
	bool has_dir = find_dir(ts, b, e, &d);
	double v;

	if (find_num(ts, b, e, UNIT_DEG, &v)) {
		int side = 0;

		if (!isfinite(v) || v < 0 || v > 360)
			return err_set(ENG_EPARSE, "answer text: bad angle");
		if (has_dir && (d == BEV_LEFT || d == BEV_FRONT_LEFT || d == BEV_BACK_LEFT))
			side = 1;
		else if (has_dir && (d == BEV_RIGHT || d == BEV_FRONT_RIGHT || d == BEV_BACK_RIGHT))
			side = -1;
		if (side) {
			*yaw = (float)(side * v);
			return 0;
		}
		if (v > (double)p->around_deg || v < (double)p->forward_deg) {
			*yaw = (float)v;
			return 0;
		}
		return err_set(ENG_EPARSE, "answer text: angle without a side");
	}
	if (has_dir && d == BEV_FRONT) {
		*yaw = 0.0f;
		return 0;
	}
	if (has_dir && d == BEV_BACK) {
		*yaw = 180.0f;
		return 0;
	}
	return err_set(ENG_EPARSE, "answer text: no angle");
}

/* Index of the last word of `list` in [b, e), or -1. */
static int last_word(const struct toks *ts, int b, int e, const char *const *list)
{
	int i;

	for (i = e - 1; i >= b; i--)
		if (word_in(&ts->t[i], list))
			return i;
	return -1;
}

static int parse_gaze_approx(const struct toks *ts, const struct disc_params *p,
			     struct answer *a)
{
	static const char *const at[] = { "at", "toward", "towards", "onto", NULL };
	int m = last_word(ts, 0, ts->n, at);
	int rc;

	if (m < 0)
		return err_set(ENG_EPARSE, "answer text: no object (\"at the ...\")");
	rc = parse_yaw(ts, 0, m, p, &a->yaw_deg);
	if (!rc)
		rc = span_text(ts, m + 1, ts->n, a->object, sizeof(a->object), "object");
	return rc;
}

/*
 * Finds a relation phrase: "left of", "to the right of", "in front of",
 * "behind", "in back of", "near", "next to", "close to", "beside". Sets the
 * token range [*rs, *re) of the phrase.
 */
static bool find_rel(const struct toks *ts, enum ans_rel *rel, int *rs, int *re)
{
	static const char *const lead[] = { "the", "to", "in", "on", "just", "directly",
					    "is", NULL };
	int i;

	for (i = 0; i < ts->n; i++) {
		const struct tok *t = &ts->t[i];
		bool of = i + 1 < ts->n && is_word(&ts->t[i + 1], "of");
		bool to = i + 1 < ts->n && is_word(&ts->t[i + 1], "to");
		int end = -1;

		if (is_word(t, "left") && of) {
			*rel = ANS_REL_LEFT_OF;
			end = i + 2;
		} else if (is_word(t, "right") && of) {
			*rel = ANS_REL_RIGHT_OF;
			end = i + 2;
		} else if (is_word(t, "front") && of) {
			*rel = ANS_REL_IN_FRONT_OF;
			end = i + 2;
		} else if (is_word(t, "back") && of) {
			*rel = ANS_REL_BEHIND;
			end = i + 2;
		} else if (is_word(t, "behind")) {
			*rel = ANS_REL_BEHIND;
			end = i + 1;
		} else if (is_word(t, "near") || is_word(t, "beside") ||
			   is_word(t, "nearby")) {
			*rel = ANS_REL_NEAR;
			end = i + 1;
			if (i + 1 < ts->n && is_word(&ts->t[i + 1], "to"))
				end++;
		} else if ((is_word(t, "next") || is_word(t, "close")) && to) {
			*rel = ANS_REL_NEAR;
			end = i + 2;
		}
		if (end >= 0) {
			int s = i;

			while (s > 0 && word_in(&ts->t[s - 1], lead))
				s--;
			*rs = s;
			*re = end;
			return true;
		}
	}
	return false;
}

static int parse_gaze_relative(const struct toks *ts, struct answer *a)
{
	int rs, re, rc;

	if (!find_rel(ts, &a->rel, &rs, &re))
		return err_set(ENG_EPARSE, "answer text: no relation (left of, near, ...)");
	rc = span_text(ts, 0, rs, a->object, sizeof(a->object), "object");
	if (!rc)
		rc = span_text(ts, re, ts->n, a->ref, sizeof(a->ref), "reference object");
	return rc;
}

static int parse_nav_approx(const struct toks *ts, struct answer *a)
{
	int e = purpose_clause(ts, 0, ts->n);
	double v;

	if (!find_move_dir(ts, 0, e, &a->dir))
		return err_set(ENG_EPARSE, "answer text: no direction");
	if (!find_num(ts, 0, e, UNIT_M, &v))
		return err_set(ENG_EPARSE, "answer text: no distance");
	a->dist_m = (float)v;
	return 0;
}

static int parse_nav_relative(const struct toks *ts, struct answer *a)
{
	int e = purpose_clause(ts, 0, ts->n);
	int cut[4], ncut = 0, i, b;

	for (i = 0; i < e; i++)
		if (is_word(&ts->t[i], "then")) {
			if (ncut < 4)
				cut[ncut] = i;
			ncut++;
		}
	if (!ncut) {
		/* "Turn left and go front. Go front-right": split at a full stop */
		for (i = 0; i < e; i++) {
			enum bev_dir d1, d2;

			if (ts->t[i].type == TOK_PUNCT &&
			    (ts->t[i].w[0] == '.' || ts->t[i].w[0] == ';') &&
			    find_dir(ts, 0, i, &d1) && find_dir(ts, i + 1, e, &d2)) {
				cut[ncut++] = i;
				break;
			}
		}
	}
	if (ncut > 1)
		return err_set(ENG_EPARSE, "answer text: more than 2 legs");
	a->nlegs = 0;
	b = 0;
	for (i = 0; i <= ncut; i++) {
		int end = i < ncut ? cut[i] : e;

		if (!find_move_dir(ts, b, end, &a->legs[a->nlegs]))
			return err_set(ENG_EPARSE, "answer text: leg %d has no direction", i + 1);
		a->nlegs++;
		b = end + 1;
	}
	return 0;
}

/*
 * A hand phrase anywhere: "with the right hand", "using both hands", "with
 * two hands", "with your left hand". *start is the index of with/using.
 */
static enum rec_hand find_hand(const struct toks *ts, int *start)
{
	int i;

	for (i = 0; i + 1 < ts->n; i++) {
		enum rec_hand h = REC_HAND_NONE;

		if (!word_in(&ts->t[i + 1], w_handword))
			continue;
		if (is_word(&ts->t[i], "left"))
			h = REC_HAND_LEFT;
		else if (is_word(&ts->t[i], "right"))
			h = REC_HAND_RIGHT;
		else if (is_word(&ts->t[i], "both") || is_word(&ts->t[i], "two"))
			h = REC_HAND_BOTH;
		if (h != REC_HAND_NONE) {
			int s = i;

			while (s > 0 && (word_in(&ts->t[s - 1], w_article) ||
					 is_word(&ts->t[s - 1], "your") ||
					 is_word(&ts->t[s - 1], "their")))
				s--;
			/* only "with/using ... hand": "the right hand glove" is an object */
			if (s > 0 && (is_word(&ts->t[s - 1], "with") ||
				      is_word(&ts->t[s - 1], "using"))) {
				*start = s - 1;
				return h;
			}
		}
	}
	*start = -1;
	return REC_HAND_NONE;
}

/* The verb and object of a purpose clause in tokens [b, e). */
static int parse_verb_object(const struct toks *ts, int b, int e, struct answer *a)
{
	static const char *const two_word[] = { "pick up", "put down", "put away",
		"put back", "take out", "turn on", "turn off", "switch on",
		"switch off", "set down", NULL };
	int i, rc;

	for (i = b; i < e; i++)
		if (word_in(&ts->t[i], w_article) || is_word(&ts->t[i], "your") ||
		    is_word(&ts->t[i], "their"))
			break;
	if (i == b)
		return err_set(ENG_EPARSE, "answer text: no verb");
	if (i >= e) {
		/* no article: a known two-word verb, else the first word */
		char two[2 * TOK_WORD_MAX + 2];

		i = b + 1;
		if (b + 1 < e && ts->t[b + 1].type == TOK_WORD) {
			int k;

			snprintf(two, sizeof(two), "%s %s", ts->t[b].w, ts->t[b + 1].w);
			for (k = 0; two_word[k]; k++)
				if (!strcmp(two, two_word[k]))
					i = b + 2;
		}
		rc = span_words(ts, b, i, a->verb, sizeof(a->verb), "verb");
		if (!rc)
			rc = span_text(ts, i, e, a->object, sizeof(a->object), "object");
		return rc;
	}
	rc = span_words(ts, b, i, a->verb, sizeof(a->verb), "verb");
	if (!rc)
		rc = span_text(ts, i, e, a->object, sizeof(a->object), "object");
	return rc;
}

static int parse_interact(const struct toks *ts, bool approx, struct answer *a)
{
	static const char *const w_down[] = { "down", "downward", "downwards", "below",
					      "lower", "under", NULL };
	static const char *const w_up[] = { "up", "upward", "upwards", "above", "higher",
					    "raise", "over", NULL };
	int hs, vt, ve, i;
	enum rec_hand h = find_hand(ts, &hs);

	vt = purpose_clause(ts, 0, ts->n);
	if (vt >= ts->n)
		return err_set(ENG_EPARSE, "answer text: no action (\"to <verb> the ...\")");
	ve = (hs > vt) ? hs : ts->n;
	if (!find_move_dir(ts, 0, vt, &a->dir))
		return err_set(ENG_EPARSE, "answer text: no direction");
	if (approx) {
		double v;

		if (!find_num(ts, 0, vt, UNIT_M, &v))
			return err_set(ENG_EPARSE, "answer text: no distance");
		a->dist_m = (float)v;
		a->vertical = 0;
		for (i = 0; i < vt; i++) {
			if (word_in(&ts->t[i], w_down))
				a->vertical = -1;
			else if (word_in(&ts->t[i], w_up))
				a->vertical = 1;
			else
				continue;
			break;
		}
		a->hand = h;
	}
	return parse_verb_object(ts, vt + 1, ve, a);
}

/* Finds "[[" (spaces allowed between the brackets); returns the index after it. */
static const char *find_open2(const char *s)
{
	for (; *s; s++) {
		const char *q;

		if (*s != '[')
			continue;
		q = s + 1;
		while (*q == ' ' || *q == '\t' || *q == '\n')
			q++;
		if (*q == '[')
			return q + 1;
	}
	return NULL;
}

static int parse_chain(const char *s, struct answer *a)
{
	const char *p = find_open2(s);
	int ne = 0;

	if (!p)
		return err_set(ENG_EPARSE, "answer text: no [[nodes],[edges]]");
	a->k = 0;
	for (;;) {
		char *end;
		long v;

		while (*p == ' ' || *p == ',' || *p == '"' || *p == '\'')
			p++;
		if (*p == ']')
			break;
		v = strtol(p, &end, 10);
		if (end == p)
			return err_set(ENG_EPARSE, "answer text: bad node id");
		if (a->k >= ANS_CHAIN_MAX)
			return err_set(ENG_EPARSE, "answer text: more than %d nodes", ANS_CHAIN_MAX);
		a->nodes[a->k++] = (int)(v > 100000 ? 100000 : v < -1 ? -1 : v);
		p = end;
		while (*p == '"' || *p == '\'')
			p++;
	}
	p++;
	while (*p == ' ' || *p == ',')
		p++;
	if (*p != '[')
		return err_set(ENG_EPARSE, "answer text: no edge list");
	p++;
	for (;;) {
		char tok[32];
		size_t n = 0;
		enum bev_dir d;

		while (*p == ' ' || *p == ',')
			p++;
		if (*p == ']')
			break;
		if (!*p)
			return err_set(ENG_EPARSE, "answer text: unterminated edge list");
		while (*p && *p != ',' && *p != ']') {
			char c = *p++;

			if (c == '"' || c == '\'')
				continue;
			if (n < sizeof(tok) - 1)
				tok[n++] = (char)tolower((unsigned char)(c == ' ' ? '-' : c));
		}
		while (n && tok[n - 1] == '-')
			n--;
		tok[n] = '\0';
		d = n == 1 ? bev_dir_from_letter(tok[0]) : bev_dir_from_name(tok);
		if (d == BEV_NDIR)
			return err_set(ENG_EPARSE, "answer text: bad edge '%s'", tok);
		if (ne >= ANS_CHAIN_MAX - 1)
			return err_set(ENG_EPARSE, "answer text: too many edges");
		a->edges[ne++] = d;
	}
	if (ne != a->k - 1)
		return err_set(ENG_EPARSE, "answer text: %d nodes need %d edges, got %d",
			       a->k, a->k - 1, ne);
	return 0;
}

int ans_parse(enum ans_kind kind, const char *text, const struct disc_params *p,
	      struct answer *out)
{
	struct disc_params def;
	struct toks *ts;
	int rc;

	if (!text || (unsigned)kind >= ANS_NKIND)
		return err_set(ENG_EINVAL, "answer text: bad arguments");
	if (!p) {
		disc_defaults(&def);
		p = &def;
	}
	ans_init(out, kind);
	if (kind == ANS_CHAIN) {
		rc = parse_chain(text, out);
		goto norm;
	}
	ts = malloc(sizeof(*ts));
	if (!ts)
		return ENG_ENOMEM;
	tokenise(text, ts);
	switch (kind) {
	case ANS_HEAD_TURN_APPROX:
		rc = parse_yaw(ts, 0, ts->n, p, &out->yaw_deg);
		break;
	case ANS_HEAD_TURN_RELATIVE:
		rc = find_dir(ts, 0, ts->n, &out->dir) ? 0 :
		     err_set(ENG_EPARSE, "answer text: no direction");
		break;
	case ANS_GAZE_APPROX:
		rc = parse_gaze_approx(ts, p, out);
		break;
	case ANS_GAZE_RELATIVE:
		rc = parse_gaze_relative(ts, out);
		break;
	case ANS_NAV_APPROX:
		rc = parse_nav_approx(ts, out);
		break;
	case ANS_NAV_RELATIVE:
		rc = parse_nav_relative(ts, out);
		break;
	case ANS_INTERACT_APPROX:
		rc = parse_interact(ts, true, out);
		break;
	case ANS_INTERACT_RELATIVE:
		rc = parse_interact(ts, false, out);
		break;
	default:
		rc = ENG_EINVAL;
	}
	free(ts);
norm:
	if (rc)
		return rc;
	rc = ans_normalise(out, p);
	if (rc)
		return err_set(ENG_EPARSE, "answer text: %s", err_msg());
	return 0;
}

/* ======================= Comparison and names ======================= */

static bool near_f(float a, float b)
{
	return fabsf(a - b) <= 1e-3f;
}

bool ans_equal(const struct answer *a, const struct answer *b)
{
	int i;

	if (a->kind != b->kind)
		return false;
	switch (a->kind) {
	case ANS_HEAD_TURN_APPROX:
		return near_f(a->yaw_deg, b->yaw_deg);
	case ANS_HEAD_TURN_RELATIVE:
		return a->dir == b->dir;
	case ANS_GAZE_APPROX:
		return near_f(a->yaw_deg, b->yaw_deg) && ans_name_equal(a->object, b->object);
	case ANS_GAZE_RELATIVE:
		return a->rel == b->rel && ans_name_equal(a->object, b->object) &&
		       ans_name_equal(a->ref, b->ref);
	case ANS_NAV_APPROX:
		return a->dir == b->dir && near_f(a->dist_m, b->dist_m);
	case ANS_NAV_RELATIVE:
		if (a->nlegs != b->nlegs)
			return false;
		for (i = 0; i < a->nlegs && i < 2; i++)
			if (a->legs[i] != b->legs[i])
				return false;
		return true;
	case ANS_INTERACT_APPROX:
		return a->dir == b->dir && a->vertical == b->vertical &&
		       near_f(a->dist_m, b->dist_m) && a->hand == b->hand &&
		       ans_name_equal(a->verb, b->verb) && ans_name_equal(a->object, b->object);
	case ANS_INTERACT_RELATIVE:
		return a->dir == b->dir && ans_name_equal(a->verb, b->verb) &&
		       ans_name_equal(a->object, b->object);
	case ANS_CHAIN:
		if (a->k != b->k)
			return false;
		for (i = 0; i < a->k && i < ANS_CHAIN_MAX; i++)
			if (a->nodes[i] != b->nodes[i])
				return false;
		for (i = 0; i < a->k - 1 && i < ANS_CHAIN_MAX - 1; i++)
			if (a->edges[i] != b->edges[i])
				return false;
		return true;
	default:
		return false;
	}
}

/* Lowercase alphanumeric words separated by one space, leading article dropped. */
static void name_key(const char *s, char *out, size_t size)
{
	size_t n = 0;
	bool space = false;

	for (; *s && n + 2 < size; s++) {
		unsigned char c = (unsigned char)*s;

		if (isalnum(c)) {
			if (space && n)
				out[n++] = ' ';
			out[n++] = (char)tolower(c);
			space = false;
		} else {
			space = true;
		}
	}
	out[n] = '\0';
	if (!strncmp(out, "the ", 4))
		memmove(out, out + 4, strlen(out + 4) + 1);
	else if (!strncmp(out, "a ", 2))
		memmove(out, out + 2, strlen(out + 2) + 1);
	else if (!strncmp(out, "an ", 3))
		memmove(out, out + 3, strlen(out + 3) + 1);
}

bool ans_name_equal(const char *a, const char *b)
{
	char ka[ANS_NAME_MAX * 2], kb[ANS_NAME_MAX * 2];

	name_key(a, ka, sizeof(ka));
	name_key(b, kb, sizeof(kb));
	return !strcmp(ka, kb);
}

/*
 * Words of an instance name without its "_<digits>" index: "BlackCeramicMug"
 * -> "black ceramic mug", "TVRemote" -> "tv remote". *index gets the index
 * digits ("" when none).
 */
static int name_words(const char *name, char *out, size_t size, char *index,
		      size_t isize)
{
	size_t len = strlen(name), i, n = 0, cut = len;

	index[0] = '\0';
	i = len;
	while (i > 0 && isdigit((unsigned char)name[i - 1]))
		i--;
	if (i > 1 && i < len && name[i - 1] == '_') {
		if (len - i >= isize)
			return ENG_ETOOBIG;
		memcpy(index, name + i, len - i);
		index[len - i] = '\0';
		cut = i - 1;
	}
	for (i = 0; i < cut; i++) {
		unsigned char c = (unsigned char)name[i];
		unsigned char prev = i ? (unsigned char)name[i - 1] : ' ';
		unsigned char next = i + 1 < cut ? (unsigned char)name[i + 1] : ' ';
		bool brk = false;

		if (c == '_' || c == ' ' || c == '-') {
			if (n && out[n - 1] != ' ') {
				if (n + 1 >= size)
					return ENG_ETOOBIG;
				out[n++] = ' ';
			}
			continue;
		}
		if (isupper(c) && (islower(prev) || isdigit(prev) ||
				   (isupper(prev) && islower(next))))
			brk = true;
		if (isdigit(c) && isalpha(prev))
			brk = true;
		if (brk && n && out[n - 1] != ' ') {
			if (n + 1 >= size)
				return ENG_ETOOBIG;
			out[n++] = ' ';
		}
		if (n + 1 >= size)
			return ENG_ETOOBIG;
		out[n++] = (char)tolower(c);
	}
	while (n && out[n - 1] == ' ')
		n--;
	out[n] = '\0';
	return 0;
}

int ans_display_name(const char *name, const char *const *others, size_t nothers,
		     char *out, size_t size)
{
	char base[ANS_NAME_MAX], idx[16], obase[ANS_NAME_MAX], oidx[16];
	bool clash = false;
	size_t i;
	int rc;

	if (!name || !out || !size)
		return ENG_EINVAL;
	rc = name_words(name, base, sizeof(base), idx, sizeof(idx));
	if (rc)
		return rc;
	for (i = 0; i < nothers; i++) {
		if (!others[i])
			continue;
		if (name_words(others[i], obase, sizeof(obase), oidx, sizeof(oidx)))
			continue;
		if (strcmp(base, obase))
			continue;
		clash = true;
		if (!idx[0] || !strcmp(idx, oidx))
			return err_set(ENG_EINVAL, "object name '%s' is ambiguous: '%s' has "
				       "the same display name", name, others[i]);
	}
	if (clash)
		rc = snprintf(out, size, "%s (%s)", base, idx);
	else
		rc = snprintf(out, size, "%s", base);
	if (rc < 0 || (size_t)rc >= size)
		return ENG_ETOOBIG;
	return 0;
}

int ans_object_name(const struct recording *rec, size_t i, char *out, size_t size)
{
	const char **others;
	size_t k, n = 0;
	int rc;

	if (!rec || i >= rec->nobjects)
		return ENG_EINVAL;
	others = malloc((rec->nobjects ? rec->nobjects : 1) * sizeof(*others));
	if (!others)
		return ENG_ENOMEM;
	for (k = 0; k < rec->nobjects; k++)
		if (k != i)
			others[n++] = rec->objects[k].name;
	rc = ans_display_name(rec->objects[i].name, others, n, out, size);
	free(others);
	return rc;
}
