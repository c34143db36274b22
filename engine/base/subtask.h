/* SPDX-License-Identifier: MIT */
/*
 * The sub-tasks and metrics of docs/design.md section 3, as enums, and the
 * one table that names them: "intention.head_turn" and its category and
 * short name, the metrics it has, and its groups (a group is a sub-task
 * with one of its metrics: "intention.head_turn/approx"; there are
 * SUBTASK_NGROUPS, in the order of the table, and enum ans_kind of
 * engine/task/answer.h follows the same order). Strings exist only at the
 * edges (JSON, the command line, the store); everything inside the engine
 * passes these enums.
 *
 * Adding a sub-task: a value here and a row in subtask.c (its names and
 * metrics), its clip rule in tools/clip_sampler.c, its truth and local
 * plan in a file of engine/task/ with a row in engine/task/task.c, and its
 * prompts (prompts/tasks/, prompts/questions/, prompts/answers/).
 *
 * Everything here is constant data: thread-safe, can't fail.
 */
#ifndef SUBTASK_H
#define SUBTASK_H

#include <stdbool.h>
#include <stddef.h>

enum subtask {
	SUBTASK_HEAD_TURN = 0,     /* intention.head_turn */
	SUBTASK_GAZE_TARGET,       /* intention.gaze_target */
	SUBTASK_NAVIGATE,          /* exploration.navigate */
	SUBTASK_NEXT_INTERACTION,  /* exploitation.next_interaction */
	SUBTASK_CHAIN,             /* chain.actions */
	SUBTASK_COUNT
};

enum metric {
	METRIC_APPROX = 0, /* metric rotation / translation */
	METRIC_RELATIVE,   /* discrete spatial relation */
	METRIC_COUNT
};

/* Metrics as bits of subtask_info.metrics. */
#define SUBTASK_METRIC_BIT(m) (1u << (m))

#define SUBTASK_NGROUPS 9

struct subtask_info {
	const char *name;     /* "intention.head_turn" */
	const char *category; /* "intention" */
	const char *short_name; /* "head_turn" */
	unsigned metrics;     /* SUBTASK_METRIC_BIT of each metric it has */
	bool planning;        /* planning (true) or predictive (false) */
	const char *tools;    /* the brain tools its sessions are offered, comma-separated
				 (submit_qa is always offered) */
};

/* The row of st; NULL for a value out of range. */
const struct subtask_info *subtask_info(enum subtask st);

/* "intention.head_turn", ...; "?" for a value out of range. */
const char *subtask_name(enum subtask st);

/*
 * The sub-task named `name` (the full "category.subtask" or the short
 * "head_turn"); SUBTASK_COUNT when none (NULL included).
 */
enum subtask subtask_from_name(const char *name);

/* "approx", "relative"; "?" for a value out of range. */
const char *metric_name(enum metric m);

/* The metric named `name`; METRIC_COUNT when none (NULL included). */
enum metric metric_from_name(const char *name);

/* True when sub-task st has metric m. */
bool subtask_has_metric(enum subtask st, enum metric m);

/*
 * Group i (0..SUBTASK_NGROUPS-1): its sub-task and metric. Returns false
 * for i out of range.
 */
bool subtask_group(int i, enum subtask *st, enum metric *m);

/* The index of (st, m), or -1 when the sub-task has no such metric. */
int subtask_group_index(enum subtask st, enum metric m);

/*
 * Parses "category.subtask/metric" (also "category.subtask.metric", the
 * answer-kind form); returns the group index or -1.
 */
int subtask_group_from_name(const char *name);

/* "intention.head_turn/approx" into out (NUL-terminated, cut to size). */
void subtask_group_name(int i, char *out, size_t size);

#endif /* SUBTASK_H */
