/* SPDX-License-Identifier: MIT */
/*
 * The local brain: a deterministic planner that works offline. It reads
 * the tool results in the conversation and issues, through the same
 * tool-call JSON as a remote model, the calls a careful planner would make
 * for the session's sub-task (the sub-task's plan in engine/task/task.h),
 * then phrases the question from the templates in prompts/questions/ and
 * calls submit_qa. It states no answer and proposes no distractors: the
 * engine computes both. A tool call that fails ends the session with the
 * tool's error: the planner never submits on a failed step.
 */
#include "brain.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "jsonfile.h"
#include "registry.h"
#include "schema.h"
#include "task.h"

#define NRESULTS 16

/* The session as the planner reads it: parsed tool results, latest last. */
struct local_session {
	const struct llm_msg *msgs;
	size_t n;
	struct {
		const char *name;
		cJSON *res;
	} parsed[NRESULTS];
	size_t nparsed;
};

/* The parsed result of the latest call of tool `name`, or NULL. */
static const cJSON *latest(struct local_session *ls, const char *name)
{
	size_t i = ls->n, k;

	for (k = 0; k < ls->nparsed; k++)
		if (!strcmp(ls->parsed[k].name, name))
			return ls->parsed[k].res;
	while (i-- > 0) {
		const struct llm_msg *m = &ls->msgs[i];
		cJSON *r;

		if (m->role != LLM_ROLE_TOOL || !m->name || strcmp(m->name, name) || !m->content)
			continue;
		r = cJSON_Parse(m->content);
		if (!r || ls->nparsed == NRESULTS) {
			cJSON_Delete(r);
			return NULL;
		}
		ls->parsed[ls->nparsed].name = m->name;
		ls->parsed[ls->nparsed++].res = r;
		return r;
	}
	return NULL;
}

static const cJSON *plan_result(const struct plan_in *in, const char *name)
{
	return latest(in->session, name);
}

static void session_release(struct local_session *ls)
{
	size_t k;

	for (k = 0; k < ls->nparsed; k++)
		cJSON_Delete(ls->parsed[k].res);
}

/*
 * The last message when it is a failed tool result: its tool and error.
 * The result is parsed through latest(), so the plan that reads it next
 * does not parse it again.
 */
static bool last_failed(struct local_session *ls, char *why, size_t size)
{
	const struct llm_msg *m = ls->n ? &ls->msgs[ls->n - 1] : NULL;
	cJSON *own = NULL;
	const cJSON *r;
	bool failed;

	if (!m || m->role != LLM_ROLE_TOOL || !m->content)
		return false;
	/* a result without a tool name is not one latest() can find */
	r = m->name ? latest(ls, m->name) : (own = cJSON_Parse(m->content));
	failed = r && cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(r, "ok"));
	if (failed) {
		const char *e = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "error"));
		const char *d = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "detail"));

		snprintf(why, size, "%s: %s%s%s", m->name ? m->name : "tool", e ? e : "failed",
			 d ? ": " : "", d ? d : "");
	}
	cJSON_Delete(own);
	return failed;
}

/* Emits one tool call with arguments `args` (consumed) as the reply. */
static int call(struct llm_reply *out, int step, const char *name, cJSON *args)
{
	const struct tool_def *t = tool_find(name);
	const struct schema *sc;
	char id[32], *txt;
	int rc;

	if (!args)
		return ENG_ENOMEM;
	/* a careful planner sends every property the strict schema lists */
	if (t && !tool_schema(t, &sc))
		schema_fill_nulls(sc, args);
	txt = jsonfile_print(args);
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
	char text[320];

	snprintf(text, sizeof(text), "GIVE UP: %s", why);
	return llm_msg_text(&out->msg, LLM_ROLE_ASSISTANT, text);
}

static cJSON *sample_args(const struct brain_session *s)
{
	cJSON *a = cJSON_CreateObject();

	if (!a)
		return NULL;
	cJSON_AddStringToObject(a, "subtask", subtask_name(s->subtask));
	cJSON_AddStringToObject(a, "metric", metric_name(s->metric));
	cJSON_AddNumberToObject(a, "index", s->index);
	cJSON_AddNumberToObject(a, "seed", (double)(s->seed & 0xffffffffu));
	cJSON_AddNumberToObject(a, "count", 1);
	return a;
}

/* The submit_qa arguments of a finished plan. */
static cJSON *submit_args(const struct plan_in *in, struct plan_out *p)
{
	cJSON *sub = cJSON_CreateObject();

	if (!sub)
		return NULL;
	cJSON_AddStringToObject(sub, "subtask", subtask_name(in->subtask));
	cJSON_AddStringToObject(sub, "metric", metric_name(in->metric));
	cJSON_AddNumberToObject(sub, "t_ns", (double)in->t);
	if (p->actions) {
		cJSON_AddItemToObject(sub, "actions", p->actions);
		p->actions = NULL;
	} else {
		cJSON_AddArrayToObject(sub, "actions");
	}
	cJSON_AddStringToObject(sub, "target", p->target);
	cJSON_AddNumberToObject(sub, "event_ns", (double)in->event);
	cJSON_AddStringToObject(sub, "reference", p->reference);
	cJSON_AddStringToObject(sub, "question", p->question ? p->question : "");
	cJSON_AddStringToObject(sub, "answer", "");
	cJSON_AddArrayToObject(sub, "distractors");
	return sub;
}

int brain__local_turn(const struct brain_session *s, const struct llm_msg *msgs,
		      size_t n, int last_turn, struct llm_reply *out)
{
	struct local_session ls = { msgs, n, { { NULL, NULL } }, 0 };
	const struct task_def *task = task_get(s->subtask);
	struct plan_out po;
	struct plan_in in;
	const cJSON *clip, *cand, *c;
	char why[256];
	int step = 0, rc = 0;
	size_t i;

	(void)last_turn;
	memset(&po, 0, sizeof(po));
	llm_msg_init(&out->msg, LLM_ROLE_ASSISTANT);
	for (i = 0; i < n; i++)
		if (msgs[i].role == LLM_ROLE_ASSISTANT)
			step++;
	if (!task)
		return err_set(ENG_EINVAL, "unknown sub-task %d", (int)s->subtask);
	clip = latest(&ls, "sample_clips");
	if (!clip) {
		rc = call(out, step, "sample_clips", sample_args(s));
		goto out;
	}
	cand = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(clip, "candidates"), 0);
	if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(clip, "ok")) || !cand) {
		rc = give_up(out, "no clip qualifies for this candidate index");
		goto out;
	}
	if (last_failed(&ls, why, sizeof(why))) {
		rc = give_up(out, why);
		goto out;
	}
	memset(&in, 0, sizeof(in));
	in.subtask = s->subtask;
	in.metric = s->metric;
	in.index = s->index;
	in.seed = s->seed;
	in.rec = s->rec;
	in.cand = cand;
	in.t = jsonfile_get_time(cand, "t_ns", 0);
	in.event = jsonfile_get_time(cand, "event_t_ns", 0);
	c = cJSON_GetObjectItemCaseSensitive(cand, "target");
	in.target = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "id"));
	in.result = plan_result;
	in.session = &ls;
	if (s->subtask != SUBTASK_CHAIN && !in.target) {
		rc = give_up(out, "the clip has no target");
		goto out;
	}
	rc = task->plan(&in, &po);
	if (rc)
		goto out;
	if (po.tool) {
		rc = call(out, step, po.tool, po.args);
		po.args = NULL;
	} else if (po.give_up[0]) {
		rc = give_up(out, po.give_up);
	} else {
		rc = call(out, step, "submit_qa", submit_args(&in, &po));
	}
out:
	plan_out_release(&po);
	session_release(&ls);
	return rc;
}
