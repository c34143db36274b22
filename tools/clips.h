/* SPDX-License-Identifier: MIT */
/*
 * The salient clip sampler (tool sample_clips; docs/design.md section 3):
 * for a sub-task, every current time T whose clip satisfies the sub-task's
 * rule, with the facts that qualified it, thinned (at most one per target
 * per 2 s of T) and handed out in an order shuffled by a seed. The rules
 * are written out at the top of clip_sampler.c.
 *
 * The candidate list of a (sub-task, metric, window, k) is computed once
 * per context and kept with the last shuffled order, so that later calls
 * cost a lookup; a result points into that list and stays valid until the
 * next clips_sample() on the same context.
 */
#ifndef CLIPS_H
#define CLIPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "pose.h"
#include "subtask.h"

struct tool_ctx;
struct clip_list;

#define CLIPS_FRAMES 8      /* frames of a clip */
#define CLIPS_WINDOW_S 8.0  /* clip length W, s */
#define CLIPS_K_MIN 3       /* chain lengths */
#define CLIPS_K_MAX 5

/* One candidate and the facts that qualified it. */
struct clip_cand {
	int64_t T;
	long target;       /* object, -1 for chains */
	int key;           /* thinning key: the target, or K for chains */
	int64_t event_t;   /* last seen / fixation start / interaction / first future action */
	/* camera at T -> target (at T, or at t_I for interactions) */
	float distance_m;
	float bev_m;
	float yaw_deg;     /* NAN when the target is straight above or below */
	float margin_deg;
	float dz_m;
	vec3 local;        /* [forward, left, up] in the BEV frame of T */
	/* head turn / navigate */
	int reason;        /* enum visibility_reason at T */
	/* navigate */
	float path_m;
	int nlegs;
	float leg_yaw[2];
	float leg_margin[2];
	bool start_moved;
	/* gaze target */
	int64_t fix_end;
	long gaze_obj;     /* object under the gaze at T, -1 */
	int nrefs;         /* other objects visible at T */
	/* interaction */
	int kind;          /* enum interaction_kind */
	long action;       /* action index, -1 */
	float move_m;      /* motion distance, NAN without a motion */
	bool place;        /* the action puts a held object down */
	int64_t loc_t;     /* when the object is where the question asks: the
			      interaction's start, or a placing action's end */
	/* chain */
	int k;
	size_t first_obs, nobs, first_future;
};

struct clips_args {
	enum subtask subtask;
	enum metric metric;     /* METRIC_COUNT: no metric (no ambiguity filter) */
	size_t index, count;    /* candidates index .. index + count - 1 of the order */
	uint64_t seed;          /* the shuffle */
	long target;            /* only this object, or -1 */
	int64_t t0, t1;         /* only T in [t0, t1] */
	double window_s;        /* CLIPS_WINDOW_S */
	int k;                  /* chains: only this K (3..5), or 0 for all */
};

struct clips_result {
	enum subtask subtask;
	enum metric metric;
	uint64_t seed;
	int64_t window_ns;
	size_t total;           /* candidates passing the filters */
	size_t index;           /* first handed out */
	size_t n;               /* handed out: min(count, total - index) */
	const struct clip_list *list; /* private: where clips_get() reads */
	const size_t *order;    /* private: the order handed out */
};

/*
 * The typed entry of sample_clips. Returns 0; ENG_EINVAL (through
 * tool__reject: an approx chain, k or target for the wrong sub-task,
 * t1 < t0, index past the candidates); ENG_ENOMEM; or a tool error from
 * the facts it derives (scene, visibility, path).
 */
int clips_sample(struct tool_ctx *ctx, const struct clips_args *args,
		 struct clips_result *out);

/* Candidate i (0..n-1) of a result. Can't fail for i < n. */
const struct clip_cand *clips_get(const struct clips_result *r, size_t i);

/*
 * Writes the tool's JSON into obj, each candidate with `frames` frame times
 * spread over its window. Returns 0 or ENG_ENOMEM.
 */
int clips_write(struct tool_ctx *ctx, const struct clips_result *r, int frames, cJSON *obj);

/*
 * Writes one candidate as the tool does, into the new object *out (rank is
 * its index in the order). Returns 0 or ENG_ENOMEM.
 */
int clips_cand_json(struct tool_ctx *ctx, const struct clips_result *r,
		    const struct clip_cand *c, size_t rank, int frames, cJSON **out);

/*
 * Why (subtask, metric) has no candidate in the context's recording, as a
 * sentence in out ("recording spans 0.17 s; clips need 8 s", "no gaze
 * stream", ...), for a run to report instead of storing nothing silently.
 * Can't fail (out is always terminated).
 */
void clips_explain(struct tool_ctx *ctx, enum subtask st, enum metric m, double window_s,
		   char *out, size_t size);

/* The name of the event of candidate c ("last_seen", "fixation", ...). */
const char *clips_event_name(enum subtask st, const struct clip_cand *c);

#endif /* CLIPS_H */
