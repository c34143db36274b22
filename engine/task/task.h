/* SPDX-License-Identifier: MIT */
/*
 * The sub-tasks' behaviour, one table row each (engine/task/task.c): how
 * the engine recomputes the ground truth of a submitted QA (truth.h), how
 * the local brain plans a session of it (the tool calls a careful planner
 * makes, then the question it submits), and the answer form the prompts
 * describe to a remote brain. The names and metrics of the sub-tasks are
 * engine/base/subtask.h's; this table adds what they do.
 *
 * Adding a sub-task: its names in engine/base/subtask.c, its clip rule in
 * tools/clip_sampler.c, one file engine/task/st_<name>.c with its truth and
 * plan functions and its row below, and its prompts.
 */
#ifndef TASK_H
#define TASK_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "recording.h"
#include "subtask.h"

struct build;   /* a QA being built (truth_int.h) */
struct truth;
struct clip_cand;
struct answer;

/* What the local planner knows when it chooses its next step. */
struct plan_in {
	enum subtask subtask;
	enum metric metric;
	int index;                   /* the session's candidate index */
	uint64_t seed;               /* the run seed */
	const struct recording *rec; /* for object names in the question */
	const cJSON *cand;           /* the sampled candidate (sample_clips' first) */
	int64_t t;                   /* its T */
	int64_t event;               /* its event time */
	const char *target;          /* its target id, or NULL for chains */
	/* the latest successful result of tool `name` in the session, or NULL */
	const cJSON *(*result)(const struct plan_in *in, const char *name);
	void *session;               /* for result() */
};

/*
 * The planner's next step: a tool call (`tool` and `args`, owned), a give-up
 * (`give_up` set), or the submission (neither: `target`, `reference`,
 * `question` and `actions` are what submit_qa carries besides the
 * session's fields).
 */
struct plan_out {
	const char *tool;
	cJSON *args;
	char give_up[192];
	char target[160];
	char reference[160];
	char *question;              /* owned (free) */
	cJSON *actions;              /* chain: the action indices, owned; NULL otherwise */
};

/* One row of the table. */
struct task_def {
	enum subtask subtask;
	/* the truth of a QA (truth.c calls it after the clip check); 0 or an error */
	int (*truth)(struct build *b, struct truth *out);
	/* the answer a candidate of the group would have, for the negatives' prior (NULL: none) */
	int (*prior)(struct build *b, const struct clip_cand *c, struct answer *out);
	/* the local brain's next step; 0 or an error */
	int (*plan)(const struct plan_in *in, struct plan_out *out);
	/* the answer form of each metric, for the prompts (NULL: no such metric) */
	const char *answer_form[METRIC_COUNT];
};

/* The row of st, or NULL for a value out of range. Can't fail. */
const struct task_def *task_get(enum subtask st);

/* The answer form of (st, m), "" when none. Can't fail. */
const char *task_answer_form(enum subtask st, enum metric m);

/* Frees what a plan_out owns and zeroes it. Can't fail. */
void plan_out_release(struct plan_out *o);

#endif /* TASK_H */
