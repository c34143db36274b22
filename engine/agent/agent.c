/* SPDX-License-Identifier: MIT */
/* The orchestrator loop: brain <-> tool calls, bounded turns, submit_qa. */
#include "agent.h"

#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "embed.h"
#include "err.h"
#include "jsonfile.h"
#include "schema.h"
#include "task.h"
#include "template.h"
#include "video.h"

#define SUBMIT_TOOL "submit_qa"

void agent_defaults(struct agent_params *p)
{
	p->max_turns = 16;
	p->max_calls_per_turn = 8;
	p->max_result_bytes = (size_t)16 * 1024;
	p->max_submit_attempts = 3;
	p->brain_frames = 0;
	p->brain_frame_width = 0;
	truth_defaults(&p->truth);
}

void agent_result_release(struct agent_result *r)
{
	truth_release(&r->qa);
	free(r->trace_json);
	r->trace_json = NULL;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ======================= The tools on offer ======================= */

static pthread_once_t tools_once = PTHREAD_ONCE_INIT;
static cJSON *tools_doc;          /* the OpenAI tools array, owned */
static struct llm_tool *tools_arr;
static size_t tools_n;
static struct llm_tool *sub_arr[SUBTASK_COUNT]; /* per sub-task: a subset of tools_arr */
static size_t sub_n[SUBTASK_COUNT];
static struct schema *submit_schema;
static int tools_rc;
static char tools_err[512];

/* Is name an item of the comma-separated list? */
static bool listed(const char *list, const char *name)
{
	size_t n = strlen(name);

	while (list && *list) {
		size_t len = strcspn(list, ",");

		if (len == n && !strncmp(list, name, n))
			return true;
		list += len + (list[len] == ',');
	}
	return false;
}

/* Each sub-task's tools, in the order of tools_arr, submit_qa last. */
static int subtask_tools(void)
{
	int st;
	size_t i;

	for (st = 0; st < SUBTASK_COUNT; st++) {
		const char *list = subtask_info((enum subtask)st)->tools;

		sub_arr[st] = calloc(tools_n, sizeof(**sub_arr));
		if (!sub_arr[st])
			return ENG_ENOMEM;
		for (i = 0; i < tools_n; i++)
			if (!strcmp(tools_arr[i].name, SUBMIT_TOOL) || listed(list, tools_arr[i].name))
				sub_arr[st][sub_n[st]++] = tools_arr[i];
	}
	return 0;
}

static void tools_init(void)
{
	const struct embed_file *f = embed_find("schemas/tools/" SUBMIT_TOOL ".json");
	cJSON *sub = NULL, *fn, *it;
	size_t i = 0;
	int rc;

	rc = tool_openai_tools(&tools_doc);
	if (rc)
		goto out;
	if (!f) {
		rc = err_set(ENG_ENOENT, "schemas/tools/" SUBMIT_TOOL ".json is not embedded");
		goto out;
	}
	rc = schema_parse(SUBMIT_TOOL, f->data, f->len, &submit_schema);
	if (rc)
		goto out;
	sub = cJSON_CreateObject();
	fn = cJSON_AddObjectToObject(sub, "function");
	if (!sub || !fn) {
		rc = ENG_ENOMEM;
		goto out;
	}
	cJSON_AddStringToObject(sub, "type", "function");
	cJSON_AddStringToObject(fn, "name", SUBMIT_TOOL);
	cJSON_AddStringToObject(fn, "description",
				cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
					schema_doc(submit_schema), "description")));
	cJSON_AddItemToObject(fn, "parameters", cJSON_Duplicate(schema_doc(submit_schema), 1));
	cJSON_AddItemToArray(tools_doc, sub);
	sub = NULL;
	tools_n = (size_t)cJSON_GetArraySize(tools_doc);
	tools_arr = calloc(tools_n, sizeof(*tools_arr));
	if (!tools_arr) {
		rc = ENG_ENOMEM;
		goto out;
	}
	cJSON_ArrayForEach(it, tools_doc) {
		const cJSON *f2 = cJSON_GetObjectItemCaseSensitive(it, "function");

		tools_arr[i].name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(f2, "name"));
		tools_arr[i].description =
			cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(f2, "description"));
		tools_arr[i].parameters = cJSON_GetObjectItemCaseSensitive(f2, "parameters");
		tools_arr[i].strict = 1;
		i++;
	}
	rc = subtask_tools();
out:
	cJSON_Delete(sub);
	if (rc)
		snprintf(tools_err, sizeof(tools_err), "%s", err_msg());
	tools_rc = rc;
}

int agent_tools(const struct llm_tool **tools, size_t *ntools)
{
	pthread_once(&tools_once, tools_init);
	if (tools_rc)
		return err_set(tools_rc, "%s", tools_err);
	*tools = tools_arr;
	*ntools = tools_n;
	return 0;
}

int agent_session_tools(enum subtask st, const struct llm_tool **tools, size_t *ntools)
{
	pthread_once(&tools_once, tools_init);
	if (tools_rc)
		return err_set(tools_rc, "%s", tools_err);
	if ((unsigned)st >= SUBTASK_COUNT)
		return err_set(ENG_EINVAL, "no sub-task %d", (int)st);
	*tools = sub_arr[st];
	*ntools = sub_n[st];
	return 0;
}

/* ======================= Prompts ======================= */

/* tool_shared_slot's maker: the summary, from describe_recording on the asking context. */
static int summary_make(void *arg, void **data, void (**destroy)(void *data))
{
	cJSON *res = NULL;
	char *text = NULL;
	int rc;

	rc = tool_call(arg, "describe_recording", "{\"object_offset\":0,\"object_limit\":60}", &res);
	if (!rc) {
		text = jsonfile_print(res);
		rc = text ? 0 : ENG_ENOMEM;
	}
	cJSON_Delete(res);
	if (rc)
		return rc;
	*data = text;
	*destroy = free;
	return 0;
}

/*
 * A compact recording summary for the task prompt, computed once per
 * recording when the contexts share a store (else once per context) and
 * kept in the context (the same context serves many sessions, and a
 * context belongs to one recording, so the summary can never be another
 * recording's). 64 workers made it 64 times, as they began their first
 * sessions together.
 */
static int recording_summary(struct tool_ctx *ctx, const char **out)
{
	void *text = tool_ctx_slot(ctx, TOOL_SLOT_PROMPT);
	int rc = 0;

	if (!text)
		rc = tool_shared_slot(ctx, TOOL_SLOT_PROMPT, "prompt-summary", summary_make, ctx,
				      free, &text);
	if (!rc)
		*out = text;
	return rc;
}

static int render_embedded(const char *path, const struct tmpl_var *vars,
			   size_t nvars, char **out)
{
	const struct embed_file *f = embed_find(path);
	struct buf b;
	int rc;

	if (!f)
		return err_set(ENG_ENOENT, "'%s' is not embedded", path);
	buf_init(&b, 1 << 20);
	rc = tmpl_render(f->data, f->len, vars, nvars, &b);
	if (rc) {
		buf_release(&b);
		return rc;
	}
	*out = buf_detach(&b);
	return *out ? 0 : ENG_ENOMEM;
}

/* ======================= The trace ======================= */

static cJSON *trace_msg(const struct llm_msg *m)
{
	static const char *const roles[] = { "system", "user", "assistant", "tool" };
	cJSON *o = cJSON_CreateObject();
	size_t i;

	if (!o)
		return NULL;
	cJSON_AddStringToObject(o, "role", roles[m->role]);
	if (m->content)
		cJSON_AddStringToObject(o, "content", m->content);
	if (m->n_tool_calls) {
		cJSON *a = cJSON_AddArrayToObject(o, "tool_calls");

		for (i = 0; i < m->n_tool_calls; i++) {
			cJSON *c = cJSON_CreateObject();

			cJSON_AddStringToObject(c, "id", m->tool_calls[i].id);
			cJSON_AddStringToObject(c, "name", m->tool_calls[i].name);
			cJSON_AddStringToObject(c, "arguments", m->tool_calls[i].arguments_json);
			if (m->tool_calls[i].arguments_error)
				cJSON_AddStringToObject(c, "arguments_error",
							m->tool_calls[i].arguments_error);
			cJSON_AddItemToArray(a, c);
		}
	}
	if (m->tool_call_id)
		cJSON_AddStringToObject(o, "tool_call_id", m->tool_call_id);
	if (m->name)
		cJSON_AddStringToObject(o, "name", m->name);
	return o;
}

/* ======================= The session ======================= */

struct history {
	struct llm_msg *m;
	size_t n, alloc;
};

static struct llm_msg *history_push(struct history *h)
{
	if (h->n == h->alloc) {
		size_t a = h->alloc ? 2 * h->alloc : 16;
		struct llm_msg *p = realloc(h->m, a * sizeof(*p));

		if (!p)
			return NULL;
		h->m = p;
		h->alloc = a;
	}
	llm_msg_init(&h->m[h->n], LLM_ROLE_USER);
	return &h->m[h->n++];
}

static void history_release(struct history *h)
{
	size_t i;

	for (i = 0; i < h->n; i++)
		llm_msg_release(&h->m[i]);
	free(h->m);
}

static void set_reason(struct agent_result *out, enum agent_status st,
		       const char *code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void set_reason(struct agent_result *out, enum agent_status st,
		       const char *code, const char *fmt, ...)
{
	va_list ap;

	out->status = st;
	snprintf(out->reason_code, sizeof(out->reason_code), "%s", code);
	va_start(ap, fmt);
	vsnprintf(out->reason, sizeof(out->reason), fmt, ap);
	va_end(ap);
}

static int push_tool_result(struct history *h, cJSON *trace, const char *id,
			    const char *name, const char *content,
			    size_t max_bytes)
{
	struct llm_msg *m = history_push(h);
	char *cut = NULL;
	int rc;

	if (!m)
		return ENG_ENOMEM;
	if (strlen(content) > max_bytes) {
		cut = malloc(max_bytes + 64);
		if (!cut)
			return ENG_ENOMEM;
		memcpy(cut, content, max_bytes);
		snprintf(cut + max_bytes, 64, "...[truncated: %zu bytes]", strlen(content));
		content = cut;
	}
	rc = llm_msg_tool_result(m, id, name, content);
	free(cut);
	if (!rc)
		cJSON_AddItemToArray(trace, trace_msg(m));
	return rc;
}

/* One session in progress. */
struct session {
	struct brain *b;
	struct tool_ctx *ctx;
	const struct brain_session *s;
	const struct agent_params *p;
	struct agent_result *out;
	const struct recording *rec;
	const struct llm_tool *tools;
	size_t ntools;
	struct history h;
	cJSON *doc, *trace;        /* the trace document and its messages */
	int submits, rejected;
	bool done;                 /* a QA was accepted */
	int64_t clip_t;            /* --brain-frames: T of the first candidate shown, or 0 */
	bool frames_sent;          /* ... its frames were sent (or could not be) */
};

/* The system and task prompts, as the first two messages. */
static int session_begin(struct session *x)
{
	const struct brain_session *s = x->s;
	const struct agent_params *p = x->p;
	const char *summary = NULL;
	char *sys = NULL, *task = NULL, path[128], num[4][32];
	struct llm_msg *m;
	int rc;

	rc = agent_session_tools(s->subtask, &x->tools, &x->ntools);
	if (!rc)
		rc = recording_summary(x->ctx, &summary);
	if (rc)
		return rc;
	snprintf(num[0], sizeof(num[0]), "%g", p->truth.window_s);
	snprintf(num[1], sizeof(num[1]), "%d", s->index);
	snprintf(num[2], sizeof(num[2]), "%g", p->truth.gaze_lead_s);
	snprintf(num[3], sizeof(num[3]), "%g", p->truth.interaction_lead_s);
	{
		const struct tmpl_var vars[] = {
			{ "metric", metric_name(s->metric) }, { "window_s", num[0] },
			{ "index", num[1] }, { "gaze_lead_s", num[2] },
			{ "interaction_lead_s", num[3] }, { "summary", summary },
			{ "answer_form", task_answer_form(s->subtask, s->metric) },
			{ "k", "3 to 5" },
		};

		rc = render_embedded("prompts/system.txt", NULL, 0, &sys);
		snprintf(path, sizeof(path), "prompts/tasks/%s.txt", subtask_name(s->subtask));
		if (!rc)
			rc = render_embedded(path, vars, ARRAY_SIZE(vars), &task);
	}
	x->doc = cJSON_CreateObject();
	x->trace = cJSON_AddArrayToObject(x->doc, "messages");
	if (!rc && (!x->doc || !x->trace))
		rc = ENG_ENOMEM;
	if (rc)
		goto out;
	cJSON_AddStringToObject(x->doc, "brain", brain_name(x->b));
	cJSON_AddStringToObject(x->doc, "model", brain_model(x->b));
	cJSON_AddStringToObject(x->doc, "recording", x->rec ? x->rec->id : "");
	cJSON_AddStringToObject(x->doc, "subtask", subtask_name(s->subtask));
	cJSON_AddStringToObject(x->doc, "metric", metric_name(s->metric));
	cJSON_AddNumberToObject(x->doc, "index", s->index);
	m = history_push(&x->h);
	if (!m || llm_msg_text(m, LLM_ROLE_SYSTEM, sys)) {
		rc = ENG_ENOMEM;
		goto out;
	}
	cJSON_AddItemToArray(x->trace, trace_msg(m));
	m = history_push(&x->h);
	if (!m || llm_msg_text(m, LLM_ROLE_USER, task)) {
		rc = ENG_ENOMEM;
		goto out;
	}
	cJSON_AddItemToArray(x->trace, trace_msg(m));
out:
	free(sys);
	free(task);
	return rc;
}

/* {"ok":false,"error":"invalid_json",...} for arguments that are not JSON; NULL when out of memory. */
static char *invalid_json_result(const struct llm_tool_call *tc)
{
	cJSON *e = cJSON_CreateObject();
	char *text;

	if (!e)
		return NULL;
	cJSON_AddBoolToObject(e, "ok", 0);
	cJSON_AddStringToObject(e, "error", "invalid_json");
	cJSON_AddStringToObject(e, "detail", tc->arguments_error ? tc->arguments_error
				: "the arguments are not JSON");
	cJSON_AddStringToObject(e, "hint", "arguments must be a JSON object matching the schema");
	text = cJSON_PrintUnformatted(e);
	cJSON_Delete(e);
	return text;
}

/* The T and target of a rejected submit, for the drop record. */
static void note_drop_target(struct agent_result *out, const cJSON *a)
{
	const cJSON *tv = cJSON_GetObjectItemCaseSensitive(a, "t_ns");
	const char *tg = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(a, "target"));

	out->drop_t_ns = cJSON_IsNumber(tv) ? (int64_t)tv->valuedouble : 0;
	snprintf(out->drop_target, sizeof(out->drop_target), "%s", tg ? tg : "");
}

/*
 * Is the submit for this session's sub-task and metric? If not, *e is the
 * error for the brain (a tool error it can fix by submitting again) and
 * the attempt counts: a QA of another group would be stored under a group
 * whose quota the orchestrator does not track.
 */
static bool session_group(struct session *x, const cJSON *a, cJSON **e)
{
	const char *st = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(a, "subtask"));
	const char *m = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(a, "metric"));
	const char *want_st = subtask_name(x->s->subtask), *want_m = metric_name(x->s->metric);
	char detail[256];

	if (st && m && !strcmp(st, want_st) && !strcmp(m, want_m))
		return true;
	snprintf(detail, sizeof(detail),
		 "this session is %s/%s; the submit was for %s/%s: submit again with "
		 "\"subtask\":\"%s\",\"metric\":\"%s\"",
		 want_st, want_m, st ? st : "?", m ? m : "?", want_st, want_m);
	x->rejected = 1;
	set_reason(x->out, AGENT_DROP, "wrong_group", "%s", detail);
	*e = cJSON_CreateObject();
	cJSON_AddBoolToObject(*e, "ok", 0);
	cJSON_AddStringToObject(*e, "error", "rejected");
	cJSON_AddStringToObject(*e, "reason", "wrong_group");
	cJSON_AddStringToObject(*e, "detail", detail);
	return false;
}

/*
 * submit_qa: the schema, then the truth. Stores the result text for the
 * brain in *text. Returns 0 or an internal error.
 */
static int handle_submit(struct session *x, const char *args, char **text)
{
	struct agent_result *out = x->out;
	cJSON *a = cJSON_Parse(args), *viol = cJSON_CreateArray(), *e = NULL;
	char code[48] = "";
	double t;
	int rc = 0;

	x->submits++;
	if (!a || !cJSON_IsObject(a) || schema_validate(submit_schema, a, viol)) {
		e = cJSON_CreateObject();
		cJSON_AddBoolToObject(e, "ok", 0);
		cJSON_AddStringToObject(e, "error", a ? "invalid_arguments" : "invalid_json");
		cJSON_AddItemToObject(e, "violations", viol);
		viol = NULL;
		goto out;
	}
	if (!session_group(x, a, &e))
		goto out;
	t = now_s();
	truth_release(&out->qa);
	rc = truth_build(x->ctx, x->rec ? x->rec->id : "", a, &x->p->truth, &out->qa, code,
			 sizeof(code));
	out->t_truth_s += now_s() - t;
	if (!rc) {
		x->done = true;
		out->status = AGENT_QA;
		out->reason[0] = '\0';
		out->reason_code[0] = '\0';
		if (out->qa.note) {
			out->disagreements++;
			cJSON_AddStringToObject(x->doc, "disagreement", out->qa.note);
		}
		*text = strdup("{\"ok\":true,\"accepted\":true}");
		goto out;
	}
	if (rc != ENG_EINVAL)
		goto out;
	rc = 0;
	x->rejected = 1;
	set_reason(out, AGENT_DROP, code[0] ? code : "rejected", "%s", err_msg());
	note_drop_target(out, a);
	e = cJSON_CreateObject();
	cJSON_AddBoolToObject(e, "ok", 0);
	cJSON_AddStringToObject(e, "error", "rejected");
	cJSON_AddStringToObject(e, "reason", code);
	cJSON_AddStringToObject(e, "detail", err_msg());
out:
	if (e)
		*text = cJSON_PrintUnformatted(e);
	cJSON_Delete(e);
	cJSON_Delete(viol);
	cJSON_Delete(a);
	if (!rc && !*text)
		rc = ENG_ENOMEM;
	return rc;
}

/* ======================= The clip's frames for the brain ======================= */

/* T of the first candidate of a sample_clips result, or 0. */
static int64_t first_clip_t(const cJSON *res)
{
	const cJSON *c = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(res, "candidates"), 0);
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(c, "t_ns");

	if (cJSON_IsRaw(t) && t->valuestring)
		return strtoll(t->valuestring, NULL, 10);
	return cJSON_IsNumber(t) ? (int64_t)t->valuedouble : 0;
}

/*
 * Adds the frames of the clip ending at T to user message m as images,
 * oldest first: the engine's frame times (truth_frame_times) with
 * p->brain_frames frames, extracted to a private temporary folder and
 * read back. Returns 0 or an error naming what failed (no video, a frame).
 */
static int add_clip_frames(struct session *x, int64_t T, struct llm_msg *m, cJSON *times)
{
	struct truth_params tp = x->p->truth;
	int64_t t[64];
	struct video *v = NULL;
	struct video_shot shot;
	struct buf b;
	char dir[PATH_MAX], file[PATH_MAX + 32];
	const char *tmp = getenv("TMPDIR"), *paths[1];
	int i, n, rc;

	buf_init(&b, (size_t)64 << 20);
	tp.frames = x->p->brain_frames > 64 ? 64 : x->p->brain_frames;
	n = truth_frame_times(T, &tp, t);
	snprintf(dir, sizeof(dir), "%s/proxima-frames-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir))
		return err_set(ENG_EIO, "cannot make a folder for the clip's frames in %s",
			       tmp && *tmp ? tmp : "/tmp");
	rc = video_open(x->rec, &v);
	for (i = 0; !rc && i < n; i++) {
		snprintf(file, sizeof(file), "%s/%02d.jpg", dir, i);
		paths[0] = file;
		rc = video_extract(v, &t[i], 1, x->p->brain_frame_width, paths, &shot);
		if (!rc)
			rc = buf_read_file(&b, file);
		if (!rc)
			rc = llm_msg_add_image(m, "image/jpeg", b.ptr, b.len);
		if (!rc)
			cJSON_AddItemToArray(times, cJSON_CreateNumber((double)shot.frame_ns));
		buf_reset(&b);
		unlink(file);
	}
	rmdir(dir);
	video_close(v);
	buf_release(&b);
	return rc;
}

/*
 * With --brain-frames, once a turn's calls have shown the brain a
 * candidate clip, the next message shows it the clip's frames, so that its
 * question may refer to what is visible; the truth still comes from the
 * tools. A recording without video gets a line saying so, once.
 */
static int send_clip_frames(struct session *x)
{
	struct llm_msg *um;
	cJSON *tr, *times;
	char text[256];
	int rc;

	if (!x->clip_t || x->frames_sent)
		return 0;
	x->frames_sent = true;
	um = history_push(&x->h);
	tr = cJSON_CreateObject();
	times = cJSON_CreateArray();
	if (!um || !tr || !times) {
		cJSON_Delete(tr);
		cJSON_Delete(times);
		return ENG_ENOMEM;
	}
	snprintf(text, sizeof(text),
		 "The %d frames of the clip ending at T = %lld ns, oldest first, the last at T. "
		 "Word the question for what they show; the answer comes from the tools.",
		 x->p->brain_frames, (long long)x->clip_t);
	rc = llm_msg_text(um, LLM_ROLE_USER, text);
	if (!rc)
		rc = add_clip_frames(x, x->clip_t, um, times);
	if (rc && rc != ENG_ENOMEM) {
		/* no frames to show: the session goes on with the text alone */
		snprintf(text, sizeof(text), "No frames of the clip can be shown: %s", err_msg());
		llm_msg_release(um);
		rc = llm_msg_text(um, LLM_ROLE_USER, text);
		cJSON_Delete(times);
		times = NULL;
	}
	cJSON_AddStringToObject(tr, "role", "user");
	cJSON_AddStringToObject(tr, "content", text);
	if (times)
		cJSON_AddItemToObject(tr, "frames_ns", times);
	cJSON_AddItemToArray(x->trace, tr);
	return rc;
}

/* Counts a tool call that failed and keeps what it said, for the drop record. */
static void note_tool_error(struct agent_result *out, const char *name, const cJSON *res)
{
	const cJSON *v = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(res, "violations"), 0);
	const char *path = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(v, "path"));
	const char *msg = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(v, "message"));

	if (!msg)
		msg = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(res, "detail"));
	if (!msg)
		msg = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(res, "error"));
	out->tool_errors++;
	snprintf(out->last_tool_error, sizeof(out->last_tool_error), "%s: %s%s%s", name,
		 path ? path : "", path ? ": " : "", msg ? msg : "failed");
}

/* One tool call of the assistant message at am: its result into the history. */
static int handle_call(struct session *x, size_t am, size_t i)
{
	/* copies: history_push may move the array that holds the call */
	const struct llm_tool_call *tc = &x->h.m[am].tool_calls[i];
	char *id = strdup(tc->id), *name = strdup(tc->name), *args = strdup(tc->arguments_json);
	char *text = NULL;
	cJSON *res = NULL;
	double t;
	int rc = 0;

	if (!id || !name || !args) {
		rc = ENG_ENOMEM;
		goto out;
	}
	if (tc->flags & LLM_TC_ARGS_INVALID) {
		text = invalid_json_result(tc);
	} else if ((int)i >= x->p->max_calls_per_turn) {
		text = strdup("{\"ok\":false,\"error\":\"tool_failed\",\"detail\":\"too many tool calls in one turn; call again\"}");
	} else if (!strcmp(name, SUBMIT_TOOL) && !x->done) {
		rc = handle_submit(x, args, &text);
	} else {
		t = now_s();
		/* a failed call still gives a result ("ok": false) for the brain */
		if (tool_call(x->ctx, name, args, &res))
			note_tool_error(x->out, name, res);
		else if (x->p->brain_frames > 0 && !x->clip_t && !strcmp(name, "sample_clips"))
			x->clip_t = first_clip_t(res);
		x->out->t_tools_s += now_s() - t;
		x->out->tool_calls++;
		text = res ? jsonfile_print(res) : NULL;
	}
	if (!rc && !text)
		rc = ENG_ENOMEM;
	if (!rc)
		rc = push_tool_result(&x->h, x->trace, id, name, text, x->p->max_result_bytes);
out:
	cJSON_Delete(res);
	free(text);
	free(id);
	free(name);
	free(args);
	return rc;
}

/*
 * One turn: the brain's reply and the results of its calls. Sets *stop
 * when the session is over. Returns 0 or an internal error.
 */
static int run_turn(struct session *x, int turn, bool *stop)
{
	struct agent_result *out = x->out;
	struct llm_reply reply;
	struct llm_msg *am;
	size_t i, am_idx, ncalls;
	double t;
	int rc;

	llm_reply_init(&reply);
	t = now_s();
	rc = brain_turn(x->b, x->s, x->h.m, x->h.n, x->tools, x->ntools,
			turn == x->p->max_turns - 1, &reply);
	out->t_brain_s += now_s() - t;
	out->turns++;
	out->prompt_tokens += reply.usage.prompt_tokens > 0 ? reply.usage.prompt_tokens : 0;
	out->completion_tokens += reply.usage.completion_tokens > 0
					  ? reply.usage.completion_tokens : 0;
	if (rc) {
		set_reason(out, AGENT_FAILED, "brain_error", "brain: %s", err_msg());
		llm_reply_release(&reply);
		*stop = true;
		return 0;
	}
	am = history_push(&x->h);
	if (!am) {
		llm_reply_release(&reply);
		return ENG_ENOMEM;
	}
	llm_reply_take_msg(&reply, am);
	llm_reply_release(&reply);
	cJSON_AddItemToArray(x->trace, trace_msg(am));
	if (!am->n_tool_calls && am->content && strstr(am->content, "GIVE UP")) {
		/*
		 * After a rejected submit_qa the rejection says why the
		 * candidate is dropped: "no_clip" would tell the orchestrator
		 * that the sampler ran out of candidates.
		 */
		if (!x->rejected)
			set_reason(out, AGENT_DROP, "no_clip", "%s", am->content);
		*stop = true;
		return 0;
	}
	if (!am->n_tool_calls) {
		struct llm_msg *um = history_push(&x->h);

		if (!um || llm_msg_text(um, LLM_ROLE_USER,
					"Use the tools; when the ground truth is established, call submit_qa."))
			return ENG_ENOMEM;
		cJSON_AddItemToArray(x->trace, trace_msg(um));
		return 0;
	}
	am_idx = x->h.n - 1;
	ncalls = am->n_tool_calls;
	for (i = 0; i < ncalls; i++) {
		rc = handle_call(x, am_idx, i);
		if (rc)
			return rc;
	}
	/* the reason of the last rejection stands after the last attempt */
	*stop = x->done || x->submits >= x->p->max_submit_attempts;
	if (!*stop)
		return send_clip_frames(x);
	return 0;
}

int agent_run(struct brain *b, struct tool_ctx *ctx, const struct brain_session *s,
	      const struct agent_params *p, struct agent_result *out)
{
	struct session x;
	bool stop = false;
	int rc, turn;

	memset(out, 0, sizeof(*out));
	memset(&x, 0, sizeof(x));
	out->qa.answer_index = -1;
	out->index = s->index;
	x.b = b;
	x.ctx = ctx;
	x.s = s;
	x.p = p;
	x.out = out;
	x.rec = tool_ctx_rec(ctx);
	rc = session_begin(&x);
	if (rc)
		goto out;
	set_reason(out, AGENT_DROP, "turn_limit", "no valid submit_qa within %d turns",
		   p->max_turns);
	for (turn = 0; !stop && turn < p->max_turns; turn++) {
		rc = run_turn(&x, turn, &stop);
		if (rc)
			goto out;
	}
	if (out->status != AGENT_QA && out->tool_errors) {
		/* the tool errors behind a drop: "clip_rule" alone hides them */
		size_t len = strlen(out->reason);

		snprintf(out->reason + len, sizeof(out->reason) - len,
			 " (after %d failed tool call%s; the last: %s)", out->tool_errors,
			 out->tool_errors == 1 ? "" : "s", out->last_tool_error);
		cJSON_AddNumberToObject(x.doc, "tool_errors", out->tool_errors);
	}
	cJSON_AddNumberToObject(x.doc, "turns", out->turns);
	cJSON_AddStringToObject(x.doc, "status", out->status == AGENT_QA ? "qa"
				: out->status == AGENT_DROP ? "drop" : "failed");
	if (out->status != AGENT_QA)
		cJSON_AddStringToObject(x.doc, "reason", out->reason);
	out->trace_json = jsonfile_print(x.doc);
	if (!out->trace_json)
		rc = ENG_ENOMEM;
out:
	/* err_msg() is this thread's: the caller may read the result on another */
	if (rc)
		snprintf(out->error, sizeof(out->error), "%s",
			 err_msg()[0] ? err_msg() : eng_strerror(rc));
	cJSON_Delete(x.doc);
	history_release(&x.h);
	return rc;
}
