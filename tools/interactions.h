/* SPDX-License-Identifier: MIT */
/*
 * Interactions (tool find_interactions): a dynamic object that starts to
 * move (more than min_move_m within window_s), or an action that names an
 * object; a motion and an action on the same object close in time are one
 * event. The motion segments are computed once per context and setting.
 */
#ifndef INTERACTIONS_H
#define INTERACTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "pose.h"

struct tool_ctx;

/* Defaults of docs/design.md section 3. */
#define INTERACTIONS_MOVE_M 0.05
#define INTERACTIONS_WINDOW_S 0.5

struct interactions_args {
	int64_t t0, t1;    /* events whose time is in [t0, t1] */
	long object;       /* only this object, or -1 for all */
	double min_move_m; /* INTERACTIONS_MOVE_M */
	double window_s;   /* INTERACTIONS_WINDOW_S */
};

enum interaction_kind {
	INTERACTION_MOTION = 0, /* the object moved, no action names it */
	INTERACTION_ACTION,     /* an action names the object, no motion */
	INTERACTION_BOTH        /* a motion and its action */
};

struct interaction {
	int64_t t_ns;              /* motion start, else action start */
	long obj;                  /* object index */
	enum interaction_kind kind;
	long action;               /* action index, -1 */
	bool has_motion;
	int64_t motion_start_ns, motion_end_ns;
	bool onset_seen;           /* false when already moving at its first sample */
	vec3 displacement;         /* motion end - start, m */
	vec3 location;             /* the object's box centre at t_ns */
};

/* The events in time order; v owned (interactions_release). */
struct interactions_result {
	int64_t t0, t1;
	struct interaction *v;
	size_t n;
};

/*
 * The typed entry of find_interactions. Returns 0 (release *out), ENG_EINVAL
 * (t1 < t0, through tool__reject), ENG_ENOMEM.
 */
int interactions_find(struct tool_ctx *ctx, const struct interactions_args *args,
		      struct interactions_result *out);

/* Frees r's events. Can't fail. */
void interactions_release(struct interactions_result *r);

/* Writes the tool's JSON (at most `limit` events) into obj. 0 or ENG_ENOMEM. */
int interactions_write(struct tool_ctx *ctx, const struct interactions_result *r,
		       size_t limit, cJSON *obj);

/* "motion", "action", "motion+action". Can't fail. */
const char *interaction_kind_name(enum interaction_kind k);

#endif /* INTERACTIONS_H */
