/* SPDX-License-Identifier: MIT */
/* The table of the sub-tasks' behaviour, and the helpers of their local plans. */
#include "task.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "answer.h"
#include "buf.h"
#include "err.h"
#include "template.h"
#include "truth_int.h"

static const struct task_def tasks[SUBTASK_COUNT] = {
	[SUBTASK_HEAD_TURN] = {
		SUBTASK_HEAD_TURN, truth__head_turn, prior__head_turn, plan__head_turn,
		{ "a signed turn in degrees rounded to 5 (\"Turn left ~95 degrees\"), \"Keep facing forward\" below 15 degrees, \"Turn around\" above 165 degrees",
		  "one of the 8 BEV directions (front, front-left, left, back-left, back, back-right, right, front-right)" } },
	[SUBTASK_GAZE_TARGET] = {
		SUBTASK_GAZE_TARGET, truth__gaze_target, prior__gaze_target, plan__gaze_target,
		{ "the yaw to the object and its name (\"Look ~40 degrees to the left, at the kettle\")",
		  "the object relative to a reference object visible at T (\"The kettle, left of the sink\")" } },
	[SUBTASK_NAVIGATE] = {
		SUBTASK_NAVIGATE, truth__navigate, prior__navigate, plan__navigate,
		{ "the first leg's direction and the path length (\"Turn left and go forward ~3.2 m\")",
		  "up to two legs, each relative to the heading after the previous one (\"First turn left and go forward, then go front-right\")" } },
	[SUBTASK_NEXT_INTERACTION] = {
		SUBTASK_NEXT_INTERACTION, truth__next_interaction, prior__next_interaction,
		plan__next_interaction,
		{ "direction, vertical part, distance, hand and verb (\"Front-left, down ~0.6 m, to pick up the cup\")",
		  "direction and verb (\"Turn left to pick up the cup\")" } },
	[SUBTASK_CHAIN] = {
		SUBTASK_CHAIN, truth__chain, NULL, plan__chain,
		{ NULL, "[[node ids],[edge letters]]" } },
};

const struct task_def *task_get(enum subtask st)
{
	return (unsigned)st < SUBTASK_COUNT ? &tasks[st] : NULL;
}

const char *task_answer_form(enum subtask st, enum metric m)
{
	const struct task_def *t = task_get(st);

	if (!t || (unsigned)m >= METRIC_COUNT || !t->answer_form[m])
		return "";
	return t->answer_form[m];
}

void plan_out_release(struct plan_out *o)
{
	cJSON_Delete(o->args);
	cJSON_Delete(o->actions);
	free(o->question);
	memset(o, 0, sizeof(*o));
}

/* ======================= Plan helpers ======================= */

void plan__add_time(cJSON *o, const char *key, int64_t t)
{
	cJSON_AddNumberToObject(o, key, (double)t);
}

cJSON *plan__spatial_args(int64_t t, const char *object, int64_t t2, const char *ref)
{
	cJSON *a = cJSON_CreateObject();

	if (!a)
		return NULL;
	plan__add_time(a, "t", t);
	cJSON_AddNullToObject(a, "point");
	cJSON_AddStringToObject(a, "object", object);
	if (t2)
		plan__add_time(a, "t2", t2);
	else
		cJSON_AddNullToObject(a, "t2");
	if (ref)
		cJSON_AddStringToObject(a, "reference", ref);
	else
		cJSON_AddNullToObject(a, "reference");
	return a;
}

int plan__object_question(const struct plan_in *in, struct plan_out *out)
{
	long i = in->rec ? recording_find_object(in->rec, in->target) : -1;
	char name[ANS_NAME_MAX], task[96];
	const struct tmpl_var vars[] = { { "target", name } };
	struct buf q;
	int rc;

	if (i < 0 || ans_object_name(in->rec, (size_t)i, name, sizeof(name)))
		snprintf(name, sizeof(name), "%s", i < 0 ? in->target : in->rec->objects[i].name);
	snprintf(out->target, sizeof(out->target), "%s", in->target);
	snprintf(task, sizeof(task), "%s.%s", subtask_name(in->subtask), metric_name(in->metric));
	buf_init(&q, 1 << 16);
	rc = tmpl_question(task, in->seed ^ ((uint64_t)in->index * 0x9e3779b97f4a7c15ULL), vars,
			   ARRAY_SIZE(vars), &q);
	if (!rc) {
		out->question = buf_detach(&q);
		rc = out->question ? 0 : ENG_ENOMEM;
	}
	buf_release(&q);
	return rc;
}
