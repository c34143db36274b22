/* SPDX-License-Identifier: MIT */
/*
 * Private to engine/task/: the QA under construction that truth.c hands to
 * each sub-task's truth function (st_*.c), and the helpers they share. The
 * tools are called through their typed entries; JSON is written only into
 * the ground-truth document the store keeps.
 */
#ifndef TRUTH_INT_H
#define TRUTH_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "answer.h"
#include "clips.h"
#include "qc.h"
#include "registry.h"
#include "spatial.h"
#include "subtask.h"
#include "task.h"
#include "truth.h"
#include "visibility.h"

#define TRUTH_NS_PER_S 1000000000.0
#define TRUTH_MAX_OBJECTS 64  /* reference objects offered to gaze/relative negatives */
#define TRUTH_PRIOR_MAX 256   /* candidates of the group whose answers are the prior */

struct build {
	struct tool_ctx *ctx;
	const struct recording *rec;
	const struct truth_params *p;
	const cJSON *args;        /* the submit_qa arguments */
	enum subtask subtask;
	enum metric metric;
	int64_t t;                /* T */
	int64_t event;            /* the sampler's event time */
	long target;              /* object index, -1 for chains */
	char target_name[ANS_NAME_MAX];
	struct answer ans;        /* the truth */
	cJSON *gt;                /* ground truth document (owned) */
	struct qc_context qctx;   /* material for negatives */
	const char *refs[TRUTH_MAX_OBJECTS]; /* visible objects at T, named */
	char refbuf[TRUTH_MAX_OBJECTS][ANS_NAME_MAX];
	enum ans_rel ref_rels[TRUTH_MAX_OBJECTS]; /* gaze relative: the target's relation to each */
	struct answer prior[TRUTH_PRIOR_MAX]; /* the group's candidates' answers */
	struct visible_result vis; /* what visible_context saw (owned) */
	bool have_vis;
	char *code;               /* the reason code of a rejection */
	size_t code_size;
	struct clip_cand clip;    /* the sampler's candidate for (T, target) */
	bool event_note;          /* the brain's event time differed from the sampler's */
};

/*
 * Sets the reason code and err_msg() of a rejected QA and returns
 * ENG_EINVAL. Can't fail.
 */
int truth__reject(struct build *b, const char *code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Runs spatial_relation from the camera at T to object obj (placed at t2
 * when has_t2), relative to ref when ref >= 0; with key, writes the tool's
 * JSON into the ground truth under key. Returns 0 or the tool's error.
 */
int truth__spatial(struct build *b, long obj, bool has_t2, int64_t t2, long ref,
		   const char *key, struct spatial_result *out);

/*
 * Fills the negatives context with the objects visible at T (only what a
 * hand can pick up when `grasp` is set), never walls, never except or
 * except2; writes the view into the ground truth as "visible_at_t".
 */
int truth__visible_context(struct build *b, long except, long except2, bool grasp);

/*
 * The first trajectory sample in [from, to] at which object obj is visible
 * (the visibility predicate of docs/design.md at the camera's own rate),
 * or 0 when it is visible at none. Errors of the scene count as visible.
 */
int64_t truth__seen_between(struct build *b, long obj, int64_t from, int64_t to);

/* Walls, floors and ceilings: longer than 2.5 m and thinner than 0.15 m. */
bool truth__structural(const struct recording *rec, long i);

/* An object a hand picks up (moving ones when the recording has a few). */
bool truth__graspable(const struct recording *rec, long i);

/* The question name of object idx; 0 or ENG_EINVAL when it cannot be named. */
int truth__name(const struct recording *rec, long idx, char *out, size_t size);

/* A value as the tools' JSON shows it: rounded to `decimals` places. */
double truth__rounded(double v, int decimals);

/* The sub-tasks' truth functions (st_*.c). */
int truth__head_turn(struct build *b, struct truth *out);
int truth__gaze_target(struct build *b, struct truth *out);
int truth__navigate(struct build *b, struct truth *out);
int truth__next_interaction(struct build *b, struct truth *out);
int truth__chain(struct build *b, struct truth *out);

/*
 * The sub-tasks' prior functions (st_*.c): the answer a candidate of the
 * group would have, from the sampler's facts alone (no truth check), for
 * the prior the distractors are drawn from. Return 0, or nonzero to skip
 * the candidate.
 */
int prior__head_turn(struct build *b, const struct clip_cand *c, struct answer *out);
int prior__gaze_target(struct build *b, const struct clip_cand *c, struct answer *out);
int prior__navigate(struct build *b, const struct clip_cand *c, struct answer *out);
int prior__next_interaction(struct build *b, const struct clip_cand *c, struct answer *out);

/* The sub-tasks' local plans (st_*.c). */
int plan__head_turn(const struct plan_in *in, struct plan_out *out);
int plan__gaze_target(const struct plan_in *in, struct plan_out *out);
int plan__navigate(const struct plan_in *in, struct plan_out *out);
int plan__next_interaction(const struct plan_in *in, struct plan_out *out);
int plan__chain(const struct plan_in *in, struct plan_out *out);

/*
 * Plan helpers: a new argument object for spatial_relation from the camera
 * at t to object `object` (placed at t2 when nonzero), relative to ref when
 * not NULL; and the question of an object sub-task phrased from its
 * template with the object's name, into out->question.
 */
cJSON *plan__spatial_args(int64_t t, const char *object, int64_t t2, const char *ref);
int plan__object_question(const struct plan_in *in, struct plan_out *out);

/* Adds a time as a JSON number. */
void plan__add_time(cJSON *o, const char *key, int64_t t);

#endif /* TRUTH_INT_H */
