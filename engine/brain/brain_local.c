/* SPDX-License-Identifier: MIT */
/*
 * The local brain: a deterministic planner that works offline. It reads
 * the tool results in the conversation and issues, through the same
 * tool-call JSON as a remote model, the calls a careful planner would make
 * for the session's sub-task, then phrases the question from the
 * templates in prompts/questions/ and calls submit_qa. It states no answer
 * and proposes no distractors: the engine computes both.
 */
#include "brain.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "answer.h"
#include "buf.h"
#include "err.h"
#include "registry.h"
#include "schema.h"
#include "template.h"

#define NS_PER_S 1000000000LL

/* The parsed result of the latest call of tool `name`, or NULL. */
static cJSON *last_result(const struct llm_msg *msgs, size_t n, const char *name)
{
	size_t i = n;

	while (i-- > 0) {
		const struct llm_msg *m = &msgs[i];

		if (m->role == LLM_ROLE_TOOL && m->name && !strcmp(m->name, name) && m->content)
			return cJSON_Parse(m->content);
	}
	return NULL;
}

static const cJSON *jget(const cJSON *o, const char *k)
{
	return cJSON_GetObjectItemCaseSensitive(o, k);
}

static int64_t jtime(const cJSON *o, const char *k)
{
	const cJSON *v = jget(o, k);

	return cJSON_IsNumber(v) ? (int64_t)llround(v->valuedouble) : 0;
}

static const char *jstr(const cJSON *o, const char *k)
{
	return cJSON_GetStringValue(jget(o, k));
}

/* Emits one tool call with arguments `args` (consumed) as the reply. */
static int call(struct llm_reply *out, int step, const char *name, cJSON *args)
{
	char id[32], *txt;
	int rc;

	if (!args)
		return ENG_ENOMEM;
	/* a careful planner sends every property the strict schema lists */
	{
		const struct tool_def *t = tool_find(name);
		const struct schema *sc;

		if (t && !tool_schema(t, &sc))
			schema_fill_nulls(sc, args);
	}
	txt = cJSON_PrintUnformatted(args);
	cJSON_Delete(args);
	if (!txt)
		return ENG_ENOMEM;
	snprintf(id, sizeof(id), "call_local_%d", step);
	llm_msg_init(&out->msg, LLM_ROLE_ASSISTANT);
	rc = llm_msg_add_tool_call(&out->msg, id, name, txt, NULL);
	free(txt);
	return rc;
}

static int give_up(struct llm_reply *out, const char *why)
{
	char text[256];

	snprintf(text, sizeof(text), "GIVE UP: %s", why);
	return llm_msg_text(&out->msg, LLM_ROLE_ASSISTANT, text);
}

static void add_t(cJSON *o, const char *k, int64_t t)
{
	cJSON_AddNumberToObject(o, k, (double)t);
}

/* The object's question name, disambiguated against the recording. */
static void object_name(const struct recording *rec, const char *id, char *out, size_t size)
{
	long i = rec ? recording_find_object(rec, id) : -1;

	if (i < 0 || ans_object_name(rec, (size_t)i, out, size))
		snprintf(out, size, "%s", i < 0 ? id : rec->objects[i].name);
}

static cJSON *spatial_args(int64_t t, const char *object, int64_t t2, const char *ref)
{
	cJSON *a = cJSON_CreateObject();

	add_t(a, "t", t);
	cJSON_AddNullToObject(a, "point");
	cJSON_AddStringToObject(a, "object", object);
	if (t2)
		add_t(a, "t2", t2);
	else
		cJSON_AddNullToObject(a, "t2");
	if (ref)
		cJSON_AddStringToObject(a, "reference", ref);
	else
		cJSON_AddNullToObject(a, "reference");
	return a;
}

/* The first visible object at T other than the target, as reference. */
static const char *pick_reference(const cJSON *vis, const char *target)
{
	const cJSON *it;

	cJSON_ArrayForEach(it, jget(vis, "objects")) {
		const char *id = jstr(it, "id");

		if (id && strcmp(id, target))
			return id;
	}
	return NULL;
}

int brain__local_turn(const struct brain_session *s, const struct llm_msg *msgs,
		      size_t n, int last_turn, struct llm_reply *out)
{
	cJSON *clip = NULL, *cand, *r1 = NULL, *r2 = NULL, *sub = NULL;
	const cJSON *c;
	const char *target = NULL, *st = s->subtask;
	int64_t t, event;
	char task[96], name[ANS_NAME_MAX];
	int step = 0, rc = 0;
	size_t i;
	struct buf q;

	buf_init(&q, 1 << 16);
	llm_msg_init(&out->msg, LLM_ROLE_ASSISTANT);
	for (i = 0; i < n; i++)
		if (msgs[i].role == LLM_ROLE_ASSISTANT)
			step++;
	clip = last_result(msgs, n, "sample_clips");
	if (!clip) {
		cJSON *a = cJSON_CreateObject();

		cJSON_AddStringToObject(a, "subtask", st);
		cJSON_AddStringToObject(a, "metric", s->metric);
		cJSON_AddNumberToObject(a, "index", s->index);
		cJSON_AddNumberToObject(a, "seed", (double)(s->seed & 0xffffffffu));
		cJSON_AddNumberToObject(a, "count", 1);
		cJSON_AddNullToObject(a, "target");
		cJSON_AddNullToObject(a, "t0");
		cJSON_AddNullToObject(a, "t1");
		cJSON_AddNullToObject(a, "frames");
		cJSON_AddNullToObject(a, "window_s");
		cJSON_AddNullToObject(a, "k");
		rc = call(out, step, "sample_clips", a);
		goto out;
	}
	cand = cJSON_GetArrayItem(jget(clip, "candidates"), 0);
	if (!cJSON_IsTrue(jget(clip, "ok")) || !cand) {
		rc = give_up(out, "no clip qualifies for this candidate index");
		goto out;
	}
	t = jtime(cand, "t_ns");
	event = jtime(cand, "event_t_ns");
	c = jget(cand, "target");
	target = cJSON_IsObject(c) ? jstr(c, "id") : jstr(cand, "target");

	if (!strcmp(st, "chain.actions")) {
		r1 = last_result(msgs, n, "extract_keysteps");
		if (!r1) {
			cJSON *a = cJSON_CreateObject();

			add_t(a, "t0", jtime(jget(cand, "window"), "start_ns"));
			add_t(a, "t1", t + 120 * NS_PER_S);
			cJSON_AddNullToObject(a, "k");
			cJSON_AddNullToObject(a, "clip_s");
			cJSON_AddNullToObject(a, "horizon_s");
			cJSON_AddNullToObject(a, "lead_s");
			cJSON_AddNullToObject(a, "limit");
			rc = call(out, step, "extract_keysteps", a);
			goto out;
		}
		r2 = last_result(msgs, n, "build_chain");
		if (!r2) {
			cJSON *a = cJSON_CreateObject();

			cJSON_AddNullToObject(a, "actions");
			add_t(a, "t", t);
			cJSON_AddNumberToObject(a, "k", jget(jget(cand, "why"), "k")
							 ? jget(jget(cand, "why"), "k")->valuedouble : 4);
			cJSON_AddNullToObject(a, "before");
			cJSON_AddBoolToObject(a, "keep_goal_order", 1);
			cJSON_AddNullToObject(a, "limit");
			rc = call(out, step, "build_chain", a);
			goto out;
		}
	} else if (!target) {
		rc = give_up(out, "the clip has no target");
		goto out;
	} else if (!strcmp(st, "intention.head_turn") ||
		   (!strcmp(st, "intention.gaze_target") && !strcmp(s->metric, "approx"))) {
		if (!strcmp(st, "intention.gaze_target")) {
			r2 = last_result(msgs, n, "cast_gaze");
			if (!r2) {
				cJSON *a = cJSON_CreateObject();

				add_t(a, "t0", t);
				add_t(a, "t1", event + NS_PER_S / 2);
				cJSON_AddNullToObject(a, "step");
				cJSON_AddNullToObject(a, "max_range_m");
				cJSON_AddNullToObject(a, "limit");
				rc = call(out, step, "cast_gaze", a);
				goto out;
			}
		}
		r1 = last_result(msgs, n, "spatial_relation");
		if (!r1) {
			rc = call(out, step, "spatial_relation", spatial_args(t, target, 0, NULL));
			goto out;
		}
	} else if (!strcmp(st, "intention.gaze_target")) {
		r2 = last_result(msgs, n, "visible_objects");
		if (!r2) {
			cJSON *a = cJSON_CreateObject();

			add_t(a, "t", t);
			rc = call(out, step, "visible_objects", a);
			goto out;
		}
		r1 = last_result(msgs, n, "spatial_relation");
		if (!r1) {
			const char *ref = pick_reference(r2, target);

			if (!ref) {
				rc = give_up(out, "no reference object is visible at T");
				goto out;
			}
			rc = call(out, step, "spatial_relation", spatial_args(t, target, 0, ref));
			goto out;
		}
	} else if (!strcmp(st, "exploration.navigate")) {
		r1 = last_result(msgs, n, "plan_path");
		if (!r1) {
			cJSON *a = cJSON_CreateObject();

			add_t(a, "t", t);
			cJSON_AddStringToObject(a, "target", target);
			rc = call(out, step, "plan_path", a);
			goto out;
		}
	} else if (!strcmp(st, "exploitation.next_interaction")) {
		r2 = last_result(msgs, n, "find_interactions");
		if (!r2) {
			cJSON *a = cJSON_CreateObject();

			add_t(a, "t0", event - NS_PER_S / 2);
			add_t(a, "t1", event + NS_PER_S / 2);
			cJSON_AddStringToObject(a, "object", target);
			cJSON_AddNullToObject(a, "min_move_m");
			cJSON_AddNullToObject(a, "window_s");
			cJSON_AddNullToObject(a, "limit");
			rc = call(out, step, "find_interactions", a);
			goto out;
		}
		r1 = last_result(msgs, n, "spatial_relation");
		if (!r1) {
			rc = call(out, step, "spatial_relation", spatial_args(t, target, event, NULL));
			goto out;
		}
	}

	/* everything needed is known: phrase the question and submit */
	sub = cJSON_CreateObject();
	cJSON_AddStringToObject(sub, "subtask", st);
	cJSON_AddStringToObject(sub, "metric", s->metric);
	add_t(sub, "t_ns", t);
	{
		const char *ref = "";
		cJSON *acts = cJSON_AddArrayToObject(sub, "actions");
		const struct tmpl_var vars[] = { { "target", name } };

		if (!strcmp(st, "chain.actions")) {
			const cJSON *it;
			const char *goal = jstr(jget(cand, "why"), "goal");

			cJSON_AddStringToObject(sub, "target", goal ? goal : "chain");
			cJSON_ArrayForEach(it, jget(r2, "actions")) {
				const cJSON *ix = cJSON_IsNumber(it) ? it : jget(it, "index");

				if (cJSON_IsNumber(ix))
					cJSON_AddItemToArray(acts, cJSON_CreateNumber(ix->valuedouble));
			}
			/* the engine adds the candidate set and the answer format */
			rc = buf_addf(&q, "What sequence of actions should the person take next to finish \"%s\"?",
				      goal ? goal : "the task");
		} else {
			cJSON_AddStringToObject(sub, "target", target);
			object_name(s->rec, target, name, sizeof(name));
			snprintf(task, sizeof(task), "%s.%s", st, s->metric);
			rc = tmpl_question(task, s->seed ^ ((uint64_t)s->index * 0x9e3779b97f4a7c15ULL),
					   vars, ARRAY_SIZE(vars), &q);
			if (!strcmp(st, "intention.gaze_target") && !strcmp(s->metric, "relative")) {
				const cJSON *rel = jget(r1, "relation");
				const cJSON *ro = jget(rel, "reference");

				ref = jstr(ro, "id") ? jstr(ro, "id") : "";
			}
		}
		if (rc)
			goto out;
		add_t(sub, "event_ns", event);
		cJSON_AddStringToObject(sub, "reference", ref);
		cJSON_AddStringToObject(sub, "question", buf_str(&q));
		cJSON_AddStringToObject(sub, "answer", "");
		cJSON_AddArrayToObject(sub, "distractors");
	}
	rc = call(out, step, "submit_qa", sub);
	sub = NULL;
	(void)last_turn;
out:
	cJSON_Delete(sub);
	cJSON_Delete(clip);
	cJSON_Delete(r1);
	cJSON_Delete(r2);
	buf_release(&q);
	return rc;
}
