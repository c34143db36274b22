/* SPDX-License-Identifier: MIT */
/*
 * Keysteps (tool extract_keysteps): the annotated actions of a time window
 * and the keystep-dense windows a chain question can be cut from: a time T
 * with at least one action in the clip [T - clip_s, T] and K more starting
 * in (T, T + horizon_s], T placed lead_s before the first future action
 * (but not before the last observed one).
 */
#ifndef KEYSTEPS_H
#define KEYSTEPS_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

struct tool_ctx;

#define KEYSTEPS_K 3
#define KEYSTEPS_CLIP_S 8.0
#define KEYSTEPS_HORIZON_S 60.0
#define KEYSTEPS_LEAD_S 1.0

struct keysteps_args {
	int64_t t0, t1;   /* actions overlapping [t0, t1]; windows with T in it */
	size_t k;         /* future actions per window (KEYSTEPS_K) */
	double clip_s, horizon_s, lead_s;
};

struct keystep_window {
	int64_t T;             /* the current time */
	int64_t clip_start_ns; /* T - clip */
	int64_t future_end_ns; /* end of the last future action */
	size_t first_obs;      /* first observed action (index); observed: [first_obs, first_future) */
	size_t first_future;   /* future: [first_future, first_future + k) */
	size_t remaining;      /* actions starting in [first_future, T + horizon] */
	const char *goal;      /* goal shared by most future actions, or NULL (the recording's) */
	const char *observed_goal;
};

/* Arrays owned by the result (keysteps_release). */
struct keysteps_result {
	size_t k;
	size_t *actions;       /* indices of the actions overlapping [t0, t1] */
	size_t nactions;
	struct keystep_window *windows;
	size_t nwindows;
};

/* The typed entry: 0, ENG_EINVAL (t1 < t0, through tool__reject), ENG_ENOMEM. */
int keysteps_extract(struct tool_ctx *ctx, const struct keysteps_args *args,
		     struct keysteps_result *out);

/* Frees r's arrays. Can't fail. */
void keysteps_release(struct keysteps_result *r);

/* Writes the tool's JSON (at most `limit` per list) into obj. 0 or ENG_ENOMEM. */
int keysteps_write(struct tool_ctx *ctx, const struct keysteps_result *r, size_t limit,
		   cJSON *obj);

#endif /* KEYSTEPS_H */
