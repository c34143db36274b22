/* SPDX-License-Identifier: MIT */
/*
 * extract_keysteps: the keysteps extractor. Lists the annotated actions of
 * a time window with their locations, and the keystep-dense windows a
 * chain-of-actions question can be cut from: a time T with at least one
 * action in the clip [T - clip_s, T] and K more starting in
 * (T, T + horizon_s].
 */
#include "registry.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "banned.h"
#include "err.h"

#define DEFAULT_LIMIT 50
#define DEFAULT_K 3
#define DEFAULT_CLIP_S 8.0
#define DEFAULT_HORIZON_S 60.0
#define DEFAULT_LEAD_S 1.0

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

static int add_window(cJSON *arr, const struct recording *rec, size_t j,
		      size_t k, int64_t T, size_t first_obs, int64_t clip,
		      int64_t horizon)
{
	cJSON *w = cJSON_CreateObject(), *obs, *fut;
	size_t i, remaining = 0;

	if (!w)
		return ENG_ENOMEM;
	cJSON_AddItemToArray(arr, w);
	for (i = j; i < rec->nactions && rec->actions[i].start_ns <= T + horizon; i++)
		remaining++;
	if (!tool__add_time(w, "t_ns", T) || !tool__add_time(w, "clip_start_ns", T - clip) ||
	    !tool__add_time(w, "future_end_ns", rec->actions[j + k - 1].end_ns))
		return ENG_ENOMEM;
	obs = cJSON_AddArrayToObject(w, "observed");
	fut = cJSON_AddArrayToObject(w, "future");
	if (!obs || !fut)
		return ENG_ENOMEM;
	for (i = first_obs; i < j; i++)
		if (add_index(obs, i))
			return ENG_ENOMEM;
	for (i = j; i < j + k; i++)
		if (add_index(fut, i))
			return ENG_ENOMEM;
	if (!cJSON_AddNumberToObject(w, "remaining_in_horizon", (double)remaining) ||
	    !tool__add_str(w, "goal", common_goal(rec, j, j + k)) ||
	    !tool__add_str(w, "observed_goal", common_goal(rec, first_obs, j)))
		return ENG_ENOMEM;
	return 0;
}

int tool_extract_keysteps(struct tool_ctx *ctx, const cJSON *args, cJSON *result)
{
	const struct recording *rec = tool_ctx_rec(ctx);
	int64_t t0 = tool__time(args, "t0", 0), t1 = tool__time(args, "t1", 0);
	size_t limit = (size_t)tool__num(args, "limit", DEFAULT_LIMIT);
	size_t k = (size_t)tool__num(args, "k", DEFAULT_K);
	int64_t clip = secs_ns(tool__num(args, "clip_s", DEFAULT_CLIP_S));
	int64_t horizon = secs_ns(tool__num(args, "horizon_s", DEFAULT_HORIZON_S));
	int64_t lead = secs_ns(tool__num(args, "lead_s", DEFAULT_LEAD_S));
	size_t i, n = 0, nw = 0, first;
	cJSON *acts, *wins;
	int64_t T;

	if (t1 < t0)
		return tool__reject(ctx, "/t1", "must be >= t0 (%" PRId64 "), got %" PRId64, t0, t1);
	acts = cJSON_AddArrayToObject(result, "actions");
	if (!acts)
		return ENG_ENOMEM;
	for (i = 0; i < rec->nactions; i++) {
		const struct rec_action *a = &rec->actions[i];
		cJSON *o;

		if (a->start_ns > t1 || a->end_ns < t0)
			continue;
		if (n++ >= limit)
			continue;
		o = tool__action_json(rec, i);
		if (!o)
			return ENG_ENOMEM;
		cJSON_AddItemToArray(acts, o);
	}
	if (!cJSON_AddNumberToObject(result, "actions_total", (double)n) ||
	    !cJSON_AddBoolToObject(result, "actions_truncated", n > limit))
		return ENG_ENOMEM;

	wins = cJSON_AddArrayToObject(result, "dense_windows");
	if (!wins)
		return ENG_ENOMEM;
	for (i = 1; i < rec->nactions; i++) {
		if (!dense_at(rec, i, k, clip, horizon, lead, &T, &first))
			continue;
		if (T < t0 || T > t1 || T < recording_t0(rec) || T > recording_t1(rec))
			continue;
		if (nw++ >= limit)
			continue;
		if (add_window(wins, rec, i, k, T, first, clip, horizon))
			return ENG_ENOMEM;
	}
	if (!cJSON_AddNumberToObject(result, "dense_windows_total", (double)nw) ||
	    !cJSON_AddBoolToObject(result, "dense_windows_truncated", nw > limit) ||
	    !cJSON_AddNumberToObject(result, "k", (double)k))
		return ENG_ENOMEM;
	return 0;
}
