/* SPDX-License-Identifier: MIT */
/*
 * extract_keysteps: the keysteps extractor. Lists the annotated actions of
 * a time window with their locations, and the keystep-dense windows a
 * chain-of-actions question can be cut from: a time T with at least one
 * action in the clip [T - clip_s, T] and K more starting in
 * (T, T + horizon_s].
 */
#include "keysteps.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "banned.h"
#include "err.h"
#include "registry.h"

#define DEFAULT_LIMIT 50

static int64_t secs_ns(double s)
{
	return (int64_t)llround(s * 1e9);
}

static int add_index(cJSON *arr, size_t i)
{
	cJSON *v = cJSON_CreateNumber((double)i);

	if (!v)
		return ENG_ENOMEM;
	cJSON_AddItemToArray(arr, v);
	return 0;
}

/* The goal shared by most of the actions [a, b), or NULL when none has one. */
static const char *common_goal(const struct recording *rec, size_t a, size_t b)
{
	const char *best = NULL;
	size_t best_n = 0, i, j;

	for (i = a; i < b; i++) {
		const char *g = rec->actions[i].goal;
		size_t n = 0;

		if (!g)
			continue;
		for (j = a; j < b; j++)
			if (rec->actions[j].goal && !strcmp(rec->actions[j].goal, g))
				n++;
		if (n > best_n) {
			best_n = n;
			best = g;
		}
	}
	return best;
}

/*
 * Whether action j is the first future action of a dense window; if so
 * stores the window's current time in *T and its first observed action.
 */
static bool dense_at(const struct recording *rec, size_t j, size_t k,
		     int64_t clip, int64_t horizon, int64_t lead, int64_t *T,
		     size_t *first_obs)
{
	const struct rec_action *a = rec->actions;
	int64_t t;
	size_t i;

	if (j == 0 || j + k > rec->nactions)
		return false;
	t = a[j].start_ns - lead;
	if (t < a[j - 1].start_ns)
		t = a[j - 1].start_ns;
	if (t >= a[j].start_ns) /* started together: no T between them */
		return false;
	if (a[j + k - 1].start_ns > t + horizon)
		return false;
	if (a[j - 1].start_ns < t - clip) /* nothing observed in the clip */
		return false;
	i = j - 1;
	while (i > 0 && a[i - 1].start_ns >= t - clip)
		i--;
	*T = t;
	*first_obs = i;
	return true;
}

void keysteps_release(struct keysteps_result *r)
{
	free(r->actions);
	free(r->windows);
	memset(r, 0, sizeof(*r));
}

int keysteps_extract(struct tool_ctx *ctx, const struct keysteps_args *a,
		     struct keysteps_result *out)
{
	const struct recording *rec = tool_ctx_rec(ctx);
	int64_t clip = secs_ns(a->clip_s), horizon = secs_ns(a->horizon_s);
	int64_t lead = secs_ns(a->lead_s), T;
	size_t i, first;

	memset(out, 0, sizeof(*out));
	out->k = a->k;
	if (a->t1 < a->t0)
		return tool__reject(ctx, "/t1", "must be >= t0 (%" PRId64 "), got %" PRId64, a->t0,
				    a->t1);
	out->actions = malloc((rec->nactions + 1) * sizeof(*out->actions));
	out->windows = malloc((rec->nactions + 1) * sizeof(*out->windows));
	if (!out->actions || !out->windows) {
		keysteps_release(out);
		return ENG_ENOMEM;
	}
	for (i = 0; i < rec->nactions; i++)
		if (rec->actions[i].start_ns <= a->t1 && rec->actions[i].end_ns >= a->t0)
			out->actions[out->nactions++] = i;
	for (i = 1; i < rec->nactions; i++) {
		struct keystep_window *w;
		size_t j;

		if (!dense_at(rec, i, a->k, clip, horizon, lead, &T, &first))
			continue;
		if (T < a->t0 || T > a->t1 || T < recording_t0(rec) || T > recording_t1(rec))
			continue;
		w = &out->windows[out->nwindows++];
		w->T = T;
		w->clip_start_ns = T - clip;
		w->future_end_ns = rec->actions[i + a->k - 1].end_ns;
		w->first_obs = first;
		w->first_future = i;
		w->remaining = 0;
		for (j = i; j < rec->nactions && rec->actions[j].start_ns <= T + horizon; j++)
			w->remaining++;
		w->goal = common_goal(rec, i, i + a->k);
		w->observed_goal = common_goal(rec, first, i);
	}
	return 0;
}

static int add_window(cJSON *arr, const struct keysteps_result *r, const struct keystep_window *x)
{
	cJSON *w = cJSON_CreateObject(), *obs, *fut;
	size_t i;

	if (!w)
		return ENG_ENOMEM;
	cJSON_AddItemToArray(arr, w);
	if (!tool__add_time(w, "t_ns", x->T) || !tool__add_time(w, "clip_start_ns", x->clip_start_ns) ||
	    !tool__add_time(w, "future_end_ns", x->future_end_ns))
		return ENG_ENOMEM;
	obs = cJSON_AddArrayToObject(w, "observed");
	fut = cJSON_AddArrayToObject(w, "future");
	if (!obs || !fut)
		return ENG_ENOMEM;
	for (i = x->first_obs; i < x->first_future; i++)
		if (add_index(obs, i))
			return ENG_ENOMEM;
	for (i = x->first_future; i < x->first_future + r->k; i++)
		if (add_index(fut, i))
			return ENG_ENOMEM;
	if (!cJSON_AddNumberToObject(w, "remaining_in_horizon", (double)x->remaining) ||
	    !tool__add_str(w, "goal", x->goal) || !tool__add_str(w, "observed_goal", x->observed_goal))
		return ENG_ENOMEM;
	return 0;
}

int keysteps_write(struct tool_ctx *ctx, const struct keysteps_result *r, size_t limit,
		   cJSON *result)
{
	const struct recording *rec = tool_ctx_rec(ctx);
	cJSON *acts, *wins;
	size_t i;

	acts = cJSON_AddArrayToObject(result, "actions");
	if (!acts)
		return ENG_ENOMEM;
	for (i = 0; i < r->nactions && i < limit; i++) {
		cJSON *o = tool__action_json(rec, r->actions[i]);

		if (!o)
			return ENG_ENOMEM;
		cJSON_AddItemToArray(acts, o);
	}
	if (!cJSON_AddNumberToObject(result, "actions_total", (double)r->nactions) ||
	    !cJSON_AddBoolToObject(result, "actions_truncated", r->nactions > limit))
		return ENG_ENOMEM;
	wins = cJSON_AddArrayToObject(result, "dense_windows");
	if (!wins)
		return ENG_ENOMEM;
	for (i = 0; i < r->nwindows && i < limit; i++)
		if (add_window(wins, r, &r->windows[i]))
			return ENG_ENOMEM;
	if (!cJSON_AddNumberToObject(result, "dense_windows_total", (double)r->nwindows) ||
	    !cJSON_AddBoolToObject(result, "dense_windows_truncated", r->nwindows > limit) ||
	    !cJSON_AddNumberToObject(result, "k", (double)r->k))
		return ENG_ENOMEM;
	return 0;
}

int tool_extract_keysteps(struct tool_ctx *ctx, const cJSON *args, cJSON *result)
{
	struct keysteps_args a;
	struct keysteps_result r;
	size_t limit = (size_t)tool__num(args, "limit", DEFAULT_LIMIT);
	int rc;

	a.t0 = tool__time(args, "t0", 0);
	a.t1 = tool__time(args, "t1", 0);
	a.k = (size_t)tool__num(args, "k", KEYSTEPS_K);
	a.clip_s = tool__num(args, "clip_s", KEYSTEPS_CLIP_S);
	a.horizon_s = tool__num(args, "horizon_s", KEYSTEPS_HORIZON_S);
	a.lead_s = tool__num(args, "lead_s", KEYSTEPS_LEAD_S);
	rc = keysteps_extract(ctx, &a, &r);
	if (rc)
		return rc;
	rc = keysteps_write(ctx, &r, limit, result);
	keysteps_release(&r);
	return rc;
}
