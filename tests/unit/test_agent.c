/* SPDX-License-Identifier: MIT */
/*
 * The agent end to end with the openai brain against the loopback stub
 * (build/tests/llm_stub, scripted by the files in tests/data/agent, whose
 * "@NAME@" placeholders are filled in with real clips the sampler gives on
 * a synthetic kitchen): planner turns, several calls in one turn,
 * arguments as an object, invalid JSON arguments, an unknown tool, 429 and
 * 500 then success, a hung connection, truncated bodies, every provider's
 * error shape, a wrong stated answer, a clip the sampler does not produce
 * and a brain that never submits. Every QA is checked against the tools
 * and against the local brain. Then proxima generate records a cassette,
 * replays it offline into a fresh store, and a rerun hits the response
 * cache.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <ftw.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "agent.h"
#include "answer.h"
#include "brain.h"
#include "buf.h"
#include "commands.h"
#include "err.h"
#include "llm.h"
#include "recording.h"
#include "registry.h"
#include "store.h"
#include "subtask.h"
#include "stub_proc.h"
#include "synth.h"
#include "truth.h"

#define DATA "tests/data/agent/"
#define SEED 1
#define NS_PER_S 1000000000LL

/* ===================== Fixture ===================== */

/* One synthetic recording shared by every test (sessions run one at a time). */
static struct {
	char dir[256];           /* temporary folder, removed at the end */
	char rec_dir[320];       /* the recording inside it */
	struct recording *rec;
	struct tool_ctx *ctx;
	struct brain *local;
	struct agent_params ap;
} F;

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static int group_setup(void **state)
{
	struct synth_params sp = { SYNTH_KITCHEN, 2.0, 3 };
	struct synth_recording *s = NULL;
	struct brain_config bc;
	const char *t = getenv("TMPDIR");

	(void)state;
	memset(&bc, 0, sizeof(bc));
	snprintf(F.dir, sizeof(F.dir), "%s/test_agent.XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(F.dir))
		return -1;
	snprintf(F.rec_dir, sizeof(F.rec_dir), "%s/rec", F.dir);
	if (synth_generate(&sp, &s) || synth_write(s, F.rec_dir, 0)) {
		fprintf(stderr, "synth: %s\n", err_msg());
		synth_free(s);
		return -1;
	}
	synth_free(s);
	if (recording_load(F.rec_dir, REC_LAYOUT_AUTO, &F.rec) || tool_ctx_new(F.rec, &F.ctx))
		return -1;
	bc.kind = BRAIN_LOCAL;
	llm_config_init(&bc.llm);
	if (brain_new(&bc, &F.local))
		return -1;
	agent_defaults(&F.ap);
	return llm_global_init() ? -1 : 0;
}

static int group_teardown(void **state)
{
	(void)state;
	brain_free(F.local);
	tool_ctx_free(F.ctx);
	recording_free(F.rec);
	llm_global_cleanup();
	nftw(F.dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	return 0;
}

/* ===================== Stub process ===================== */

struct stub {
	pid_t pid;
	int port;
	char log[320];
	char url[64];
};

/* Starts the stub on script (writing its request log to log_name in F.dir). */
static void stub_start(struct stub *s, const char *script, const char *log_name)
{
	const char *args[] = { "--script", script, "--log", NULL, "--timeout-s", "60", NULL };

	memset(s, 0, sizeof(*s));
	snprintf(s->log, sizeof(s->log), "%s/%s", F.dir, log_name);
	args[3] = s->log;
	s->pid = stub_proc_start(args, &s->port);
	snprintf(s->url, sizeof(s->url), "http://127.0.0.1:%d/v1", s->port);
}

static void stub_stop(struct stub *s)
{
	stub_proc_stop(&s->pid);
}

/* The stub's request log, one element per request (an empty array for no file). */
static cJSON *stub_log(const struct stub *s)
{
	return stub_proc_log(s->log, 0);
}

static int stub_count(const struct stub *s)
{
	cJSON *l = stub_log(s);
	int n = cJSON_GetArraySize(l);

	cJSON_Delete(l);
	return n;
}

static const cJSON *jget(const cJSON *o, const char *k)
{
	return cJSON_GetObjectItemCaseSensitive(o, k);
}

/* ===================== Clips and scripts ===================== */

/* A clip the sampler gives, with the local brain's session on it. */
struct cand {
	const char *subtask, *metric;
	int index;                 /* candidate index of the sampler (and the session) */
	int64_t t, event;          /* T and the sampler's event time */
	int64_t event_said;        /* the event time the scripted brain submits */
	char distractors[1024];    /* the distractors it proposes (a JSON array) */
	char target[128];
	struct agent_result local; /* the local brain's QA for this index */
	char key[256];             /* the local QA's correct option */
};

static void cand_release(struct cand *c)
{
	agent_result_release(&c->local);
}

/* A time from a tool result (tools write exact int64 times as raw numbers). */
static int64_t num64(const cJSON *v)
{
	if (cJSON_IsRaw(v))
		return strtoll(v->valuestring, NULL, 10);
	assert_true(cJSON_IsNumber(v));
	return (int64_t)llround(v->valuedouble);
}

/* Runs the tool and returns its result (asserting ok). */
static cJSON *tool(const char *name, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static cJSON *tool(const char *name, const char *fmt, ...)
{
	char args[1024];
	cJSON *res = NULL;
	va_list ap;
	int rc;

	va_start(ap, fmt);
	vsnprintf(args, sizeof(args), fmt, ap);
	va_end(ap);
	rc = tool_call(F.ctx, name, args, &res);
	assert_non_null(res);
	if (rc) {
		char *t = cJSON_Print(res);

		fprintf(stderr, "%s %s: %s\n", name, args, t);
		free(t);
	}
	assert_int_equal(rc, 0);
	return res;
}

static void session_of(const struct cand *c, int index, struct brain_session *s)
{
	s->recording_id = F.rec->id;
	s->subtask = subtask_from_name(c->subtask);
	s->metric = metric_from_name(c->metric);
	s->index = index;
	s->seed = SEED;
	s->rec = F.rec;
}

/*
 * The first candidate index >= from of (subtask, metric) whose local
 * session gives a QA: its clip as sample_clips returns it through the
 * registry, and the local brain's QA.
 */
static void find_cand(const char *subtask, const char *metric, int from, struct cand *c)
{
	int i;

	memset(c, 0, sizeof(*c));
	c->subtask = subtask;
	c->metric = metric;
	for (i = from; i < from + 60; i++) {
		struct brain_session s;
		cJSON *res, *cd, *opts;
		const cJSON *tg;

		session_of(c, i, &s);
		assert_int_equal(agent_run(F.local, F.ctx, &s, &F.ap, &c->local), 0);
		if (c->local.status != AGENT_QA) {
			agent_result_release(&c->local);
			continue;
		}
		res = tool("sample_clips",
			   "{\"subtask\":\"%s\",\"metric\":\"%s\",\"index\":%d,\"count\":1,\"seed\":%d,"
			   "\"target\":null,\"t0\":null,\"t1\":null,\"frames\":null,\"window_s\":null,"
			   "\"k\":null}", subtask, metric, i, SEED);
		cd = cJSON_GetArrayItem(jget(res, "candidates"), 0);
		assert_non_null(cd);
		c->index = i;
		c->t = num64(jget(cd, "t_ns"));
		c->event = num64(jget(cd, "event_t_ns"));
		c->event_said = c->event;
		snprintf(c->distractors, sizeof(c->distractors), "[]");
		tg = jget(jget(cd, "target"), "id");
		assert_true(cJSON_IsString(tg));
		snprintf(c->target, sizeof(c->target), "%s", tg->valuestring);
		/* the local brain asked about the same clip */
		assert_true(c->local.qa.t_ns == c->t);
		assert_string_equal(c->local.qa.target, c->target);
		opts = cJSON_Parse(c->local.qa.options_json);
		assert_non_null(opts);
		snprintf(c->key, sizeof(c->key), "%s",
			 cJSON_GetArrayItem(opts, c->local.qa.answer_index)->valuestring);
		cJSON_Delete(opts);
		cJSON_Delete(res);
		return;
	}
	fail_msg("no %s/%s candidate gives a local QA", subtask, metric);
}

static void json_string(const char *s, char *out, size_t size)
{
	cJSON *j = cJSON_CreateString(s);
	char *t = cJSON_PrintUnformatted(j);

	assert_non_null(t);
	assert_true(strlen(t) < size);
	snprintf(out, size, "%s", t);
	free(t);
	cJSON_Delete(j);
}

/* Replaces every "\"@NAME@\"" of text by value (JSON text). */
static char *substitute(const char *text, const char *name, const char *value)
{
	char pat[64];
	struct buf b;
	const char *p = text, *hit;

	snprintf(pat, sizeof(pat), "\"@%s@\"", name);
	buf_init(&b, (size_t)16 << 20);
	for (;;) {
		hit = strstr(p, pat);
		if (!hit)
			break;
		assert_int_equal(buf_add(&b, p, (size_t)(hit - p)), 0);
		assert_int_equal(buf_adds(&b, value), 0);
		p = hit + strlen(pat);
	}
	assert_int_equal(buf_adds(&b, p), 0);
	return buf_detach(&b);
}

/*
 * The script template DATA/name filled in with clip c (the question is
 * the local brain's, the stated answer `answer`), parsed.
 */
static cJSON *script_for(const char *name, const struct cand *c, const char *answer)
{
	char path[256], v[14][1024];
	const char *names[14] = { "SUBTASK", "METRIC", "INDEX", "SEED", "T", "TARGET", "EVENT",
				  "EV_LO", "EV_HI", "QUESTION", "ANSWER", "T_BAD", "EVENT_SAID",
				  "DISTRACTORS" };
	char *text, *next;
	cJSON *j;
	int i;

	snprintf(path, sizeof(path), DATA "%s", name);
	text = slurp(path);
	assert_non_null(text);
	json_string(c->subtask, v[0], sizeof(v[0]));
	json_string(c->metric, v[1], sizeof(v[1]));
	snprintf(v[2], sizeof(v[2]), "%d", c->index);
	snprintf(v[3], sizeof(v[3]), "%d", SEED);
	snprintf(v[4], sizeof(v[4]), "%lld", (long long)c->t);
	json_string(c->target, v[5], sizeof(v[5]));
	snprintf(v[6], sizeof(v[6]), "%lld", (long long)c->event);
	snprintf(v[7], sizeof(v[7]), "%lld", (long long)(c->event - NS_PER_S / 2));
	snprintf(v[8], sizeof(v[8]), "%lld", (long long)(c->event + NS_PER_S / 2));
	json_string(c->local.qa.question, v[9], sizeof(v[9]));
	json_string(answer, v[10], sizeof(v[10]));
	/* 50 ms after T: off the sampler's 10 Hz grid */
	snprintf(v[11], sizeof(v[11]), "%lld", (long long)(c->t + NS_PER_S / 20));
	snprintf(v[12], sizeof(v[12]), "%lld", (long long)c->event_said);
	snprintf(v[13], sizeof(v[13]), "%s", c->distractors);
	for (i = 0; i < 14; i++) {
		next = substitute(text, names[i], v[i]);
		free(text);
		text = next;
	}
	assert_null(strstr(text, "\"@"));
	j = cJSON_Parse(text);
	free(text);
	assert_non_null(j);
	return j;
}

static void write_json(const cJSON *j, const char *path)
{
	char *t = cJSON_Print(j);
	FILE *f = fopen(path, "w");

	assert_non_null(t);
	assert_non_null(f);
	assert_true(fputs(t, f) >= 0);
	assert_int_equal(fclose(f), 0);
	free(t);
}

/* Writes the filled-in template to F.dir/name and starts a stub on it. */
static void stub_on(struct stub *s, const char *name, const struct cand *c, const char *answer)
{
	char path[400], log[80];
	cJSON *j = script_for(name, c, answer);

	snprintf(path, sizeof(path), "%s/%s", F.dir, name);
	snprintf(log, sizeof(log), "%s.log", name);
	write_json(j, path);
	cJSON_Delete(j);
	stub_start(s, path, log);
}

/* ===================== The openai brain ===================== */

static long sleeps[32];
static int nsleeps;

/* Backoff waits are recorded, not slept. */
static void record_sleep(void *ctx, long ms)
{
	(void)ctx;
	if (nsleeps < (int)(sizeof(sleeps) / sizeof(sleeps[0])))
		sleeps[nsleeps++] = ms;
}

static struct brain *openai_brain(const struct stub *s, long timeout_ms)
{
	struct brain_config bc;
	struct brain *b = NULL;

	memset(&bc, 0, sizeof(bc));
	bc.kind = BRAIN_OPENAI;
	llm_config_init(&bc.llm);
	bc.llm.base_url = s->url;
	bc.llm.model = "stub-model";
	bc.llm.profile = LLM_PROFILE_OPENAI;
	bc.llm.temperature = 0;
	bc.llm.seed = SEED;
	bc.llm.jitter_seed = 7;
	bc.llm.sleep_ms = record_sleep;
	if (timeout_ms)
		bc.llm.timeout_ms = timeout_ms;
	nsleeps = 0;
	assert_int_equal(brain_new(&bc, &b), 0);
	return b;
}

static void run(struct brain *b, const struct cand *c, const struct agent_params *p,
		struct agent_result *r)
{
	struct brain_session s;

	session_of(c, c->index, &s);
	assert_int_equal(agent_run(b, F.ctx, &s, p ? p : &F.ap, r), 0);
	assert_non_null(r->trace_json);
}

/* ===================== Checks ===================== */

/*
 * A session's result never contradicts the tools: a QA is rebuilt from
 * its (sub-task, T, target) alone and must have the same id, answer and
 * key; for head turns the yaw is also taken from spatial_relation
 * directly. Any other outcome carries nothing that could be stored.
 */
static void assert_agrees_with_tools(const struct agent_result *r)
{
	struct truth t2;
	cJSON *args, *a1, *a2, *o1, *o2;
	char full[96], code[48];

	if (r->status != AGENT_QA) {
		assert_int_equal(r->qa.id[0], '\0');
		assert_null(r->qa.options_json);
		assert_null(r->qa.answer_json);
		assert_null(r->qa.question);
		return;
	}
	snprintf(full, sizeof(full), "%s.%s", r->qa.category, r->qa.subtask);
	args = cJSON_CreateObject();
	cJSON_AddStringToObject(args, "subtask", full);
	cJSON_AddStringToObject(args, "metric", r->qa.metric);
	cJSON_AddNumberToObject(args, "t_ns", (double)r->qa.t_ns);
	cJSON_AddStringToObject(args, "target", r->qa.target);
	cJSON_AddNumberToObject(args, "event_ns", 0);
	cJSON_AddStringToObject(args, "reference", "");
	{
		/* a chain is keyed by its K as well: ask for as many actions */
		cJSON *acts = cJSON_AddArrayToObject(args, "actions");
		cJSON *aj = cJSON_Parse(r->qa.answer_json);
		const cJSON *k = jget(aj, "k");
		int j;

		for (j = 0; cJSON_IsNumber(k) && j < k->valueint; j++)
			cJSON_AddItemToArray(acts, cJSON_CreateNumber(j));
		cJSON_Delete(aj);
	}
	cJSON_AddStringToObject(args, "question", r->qa.question);
	cJSON_AddStringToObject(args, "answer", "");
	cJSON_AddArrayToObject(args, "distractors");
	assert_int_equal(truth_build(F.ctx, F.rec->id, args, &F.ap.truth, &t2, code, sizeof(code)), 0);
	assert_string_equal(t2.id, r->qa.id);
	a1 = cJSON_Parse(r->qa.answer_json);
	a2 = cJSON_Parse(t2.answer_json);
	assert_true(cJSON_Compare(a1, a2, 1));
	o1 = cJSON_Parse(r->qa.options_json);
	o2 = cJSON_Parse(t2.options_json);
	if (r->qa.answer_index < 0) /* a chain: the same candidate set */
		assert_true(cJSON_Compare(o1, o2, 1));
	else
		assert_string_equal(cJSON_GetArrayItem(o1, r->qa.answer_index)->valuestring,
				    cJSON_GetArrayItem(o2, t2.answer_index)->valuestring);
	if (!strcmp(full, "intention.head_turn") && !strcmp(r->qa.metric, "approx")) {
		cJSON *sr = tool("spatial_relation",
				 "{\"t\":%lld,\"point\":null,\"object\":\"%s\",\"t2\":null,\"reference\":null}",
				 (long long)r->qa.t_ns, r->qa.target);
		double yaw = jget(sr, "yaw_deg")->valuedouble;
		double said = jget(a1, "yaw_deg")->valuedouble;
		const char *turn = jget(a1, "turn")->valuestring;

		/* rounded to 5 degrees; negative yaw is to the right */
		assert_true(fabs(said - yaw) <= 2.5 || fabs(fabs(said) - 180) < 1e-9);
		if (fabs(yaw) >= 15 && fabs(yaw) <= 165)
			assert_string_equal(turn, yaw < 0 ? "right" : "left");
		cJSON_Delete(sr);
	}
	cJSON_Delete(a1);
	cJSON_Delete(a2);
	cJSON_Delete(o1);
	cJSON_Delete(o2);
	cJSON_Delete(args);
	truth_release(&t2);
}

/* r is a QA identical to the local brain's on the same clip. */
static void assert_same_as_local(const struct agent_result *r, const struct cand *c)
{
	cJSON *a1, *a2;

	assert_int_equal(r->status, AGENT_QA);
	assert_agrees_with_tools(r);
	assert_string_equal(r->qa.id, c->local.qa.id);
	assert_string_equal(r->qa.question, c->local.qa.question);
	assert_string_equal(r->qa.options_json, c->local.qa.options_json);
	assert_int_equal(r->qa.answer_index, c->local.qa.answer_index);
	a1 = cJSON_Parse(r->qa.answer_json);
	a2 = cJSON_Parse(c->local.qa.answer_json);
	assert_true(cJSON_Compare(a1, a2, 1));
	cJSON_Delete(a1);
	cJSON_Delete(a2);
	assert_true(r->qa.t_ns == c->t);
	assert_string_equal(r->qa.target, c->target);
}

/* Number of tool results in r's trace whose "error" is `error`. */
static int trace_tool_errors(const struct agent_result *r, const char *error)
{
	cJSON *doc = cJSON_Parse(r->trace_json);
	const cJSON *m;
	int n = 0;

	assert_non_null(doc);
	cJSON_ArrayForEach(m, jget(doc, "messages")) {
		const char *role = cJSON_GetStringValue(jget(m, "role"));
		const char *content = cJSON_GetStringValue(jget(m, "content"));
		cJSON *res;

		if (!role || strcmp(role, "tool") || !content)
			continue;
		res = cJSON_Parse(content);
		assert_non_null(res);
		if (cJSON_GetStringValue(jget(res, "error")) &&
		    !strcmp(cJSON_GetStringValue(jget(res, "error")), error))
			n++;
		cJSON_Delete(res);
	}
	cJSON_Delete(doc);
	return n;
}

static void assert_failed_cleanly(const struct agent_result *r)
{
	assert_int_equal(r->status, AGENT_FAILED);
	assert_string_equal(r->reason_code, "brain_error");
	assert_non_null(strstr(r->trace_json, "\"status\":\"failed\""));
	assert_agrees_with_tools(r);
}

/* ===================== Tool-call turns ===================== */

/* sample_clips -> spatial_relation -> submit_qa, as the local planner does */
/*
 * The local brain never sends a call its tool refuses: over every group,
 * the traces of the first sessions hold no tool result with "ok": false
 * (an invalid_arguments cast_gaze once went unnoticed in every gaze/approx
 * session because the planner took the error as done).
 */
static void test_local_traces_have_no_failed_calls(void **state)
{
	int g, checked = 0;

	(void)state;
	for (g = 0; g < SUBTASK_NGROUPS; g++) {
		enum subtask st;
		enum metric m;
		int i, qas = 0;

		assert_true(subtask_group(g, &st, &m));
		for (i = 0; i < 40 && qas < 3; i++) {
			struct brain_session s = { F.rec->id, st, m, i, SEED, F.rec };
			struct agent_result r;
			cJSON *doc;
			const cJSON *msg;

			assert_int_equal(agent_run(F.local, F.ctx, &s, &F.ap, &r), 0);
			qas += r.status == AGENT_QA;
			doc = cJSON_Parse(r.trace_json);
			assert_non_null(doc);
			cJSON_ArrayForEach(msg, cJSON_GetObjectItemCaseSensitive(doc, "messages")) {
				const char *role = cJSON_GetStringValue(
					cJSON_GetObjectItemCaseSensitive(msg, "role"));
				const char *content = cJSON_GetStringValue(
					cJSON_GetObjectItemCaseSensitive(msg, "content"));
				cJSON *res;

				if (!role || strcmp(role, "tool") || !content)
					continue;
				res = cJSON_Parse(content);
				assert_non_null(res);
				if (cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(res, "ok")) &&
				    !strstr(content, "\"accepted\"") &&
				    !strstr(content, "\"rejected\""))
					fail_msg("%s/%s #%d: a tool call failed: %s", subtask_name(st),
						 metric_name(m), i, content);
				cJSON_Delete(res);
				checked++;
			}
			cJSON_Delete(doc);
			agent_result_release(&r);
		}
		if (!qas)
			fail_msg("%s/%s: no QA in 40 local sessions", subtask_name(st), metric_name(m));
	}
	assert_true(checked > 50);
}

static void test_planner_matches_local(void **state)
{
	struct cand c;
	struct stub s;
	struct brain *b;
	struct agent_result r;
	cJSON *log;

	(void)state;
	find_cand("intention.head_turn", "approx", 0, &c);
	/* the brain states the right answer: no disagreement */
	stub_on(&s, "planner.json", &c, c.key);
	b = openai_brain(&s, 0);
	run(b, &c, NULL, &r);
	assert_same_as_local(&r, &c);
	assert_null(r.qa.note);
	assert_int_equal(r.disagreements, 0);
	assert_int_equal(r.turns, 3);
	assert_int_equal(r.tool_calls, 2);
	log = stub_log(&s);
	assert_int_equal(cJSON_GetArraySize(log), 3);
	/* every request was accepted by the strict stub, tool_choice auto */
	{
		const cJSON *it;

		cJSON_ArrayForEach(it, log) {
			assert_int_equal(jget(it, "status")->valueint, 200);
			assert_string_equal(jget(jget(it, "body"), "tool_choice")->valuestring, "auto");
		}
	}
	cJSON_Delete(log);
	agent_result_release(&r);
	brain_free(b);
	stub_stop(&s);
	cand_release(&c);
}

/* sample_clips, find_interactions and spatial_relation in one turn */
static void test_several_calls_in_one_turn(void **state)
{
	struct cand c;
	struct stub s;
	struct brain *b;
	struct agent_result r;
	cJSON *log;
	const cJSON *m;
	int tools = 0;

	(void)state;
	find_cand("exploitation.next_interaction", "approx", 0, &c);
	stub_on(&s, "several_calls.json", &c, "");
	b = openai_brain(&s, 0);
	run(b, &c, NULL, &r);
	assert_same_as_local(&r, &c);
	assert_null(r.qa.note);
	assert_int_equal(r.turns, 2);
	assert_int_equal(r.tool_calls, 3);
	/* the second request answers the three calls, in order */
	log = stub_log(&s);
	assert_int_equal(cJSON_GetArraySize(log), 2);
	cJSON_ArrayForEach(m, jget(jget(cJSON_GetArrayItem(log, 1), "body"), "messages")) {
		const char *role = jget(m, "role")->valuestring;

		if (!strcmp(role, "tool")) {
			static const char *const order[] = { "sample_clips", "find_interactions",
							     "spatial_relation" };

			assert_true(tools < 3);
			assert_string_equal(jget(m, "name")->valuestring, order[tools]);
			assert_null(strstr(jget(m, "content")->valuestring, "\"ok\":false"));
			tools++;
		}
	}
	assert_int_equal(tools, 3);
	cJSON_Delete(log);
	agent_result_release(&r);
	brain_free(b);
	stub_stop(&s);
	cand_release(&c);
}

/* an event time the sampler does not give: the sampler's is used, and noted */
static void test_stated_event_time_is_not_used(void **state)
{
	struct cand c;
	struct stub s;
	struct brain *b;
	struct agent_result r;

	(void)state;
	find_cand("exploitation.next_interaction", "approx", 0, &c);
	c.event_said = c.event + 2 * NS_PER_S;
	stub_on(&s, "several_calls.json", &c, "");
	b = openai_brain(&s, 0);
	run(b, &c, NULL, &r);
	assert_same_as_local(&r, &c);
	assert_non_null(r.qa.note);
	assert_non_null(strstr(r.qa.note, "event time differs from the sampler's"));
	assert_int_equal(r.disagreements, 1);
	agent_result_release(&r);
	brain_free(b);
	stub_stop(&s);
	cand_release(&c);
}

/* arguments sent as JSON objects instead of strings */
static void test_arguments_as_object(void **state)
{
	struct cand c;
	struct stub s;
	struct brain *b;
	struct agent_result r;

	(void)state;
	find_cand("exploration.navigate", "approx", 0, &c);
	stub_on(&s, "args_object.json", &c, "");
	b = openai_brain(&s, 0);
	run(b, &c, NULL, &r);
	assert_same_as_local(&r, &c);
	assert_int_equal(r.turns, 3);
	assert_int_equal(stub_count(&s), 3);
	agent_result_release(&r);
	brain_free(b);
	stub_stop(&s);
	cand_release(&c);
}

/* cut arguments: invalid_json goes back, the brain sends them again */
static void test_invalid_json_arguments(void **state)
{
	struct cand c;
	struct stub s;
	struct brain *b;
	struct agent_result r;

	(void)state;
	find_cand("intention.head_turn", "approx", 0, &c);
	stub_on(&s, "invalid_json.json", &c, "");
	b = openai_brain(&s, 0);
	run(b, &c, NULL, &r);
	assert_same_as_local(&r, &c);
	assert_int_equal(r.turns, 4);
	assert_int_equal(trace_tool_errors(&r, "invalid_json"), 1);
	assert_int_equal(stub_count(&s), 4);
	agent_result_release(&r);
	brain_free(b);
	stub_stop(&s);
	cand_release(&c);
}

/* a tool that was never offered: unknown_tool goes back, the brain recovers */
static void test_unknown_tool(void **state)
{
	struct cand c;
	struct stub s;
	struct brain *b;
	struct agent_result r;

	(void)state;
	find_cand("intention.head_turn", "approx", 0, &c);
	stub_on(&s, "unknown_tool.json", &c, "");
	b = openai_brain(&s, 0);
	run(b, &c, NULL, &r);
	assert_same_as_local(&r, &c);
	assert_int_equal(trace_tool_errors(&r, "unknown_tool"), 1);
	assert_non_null(strstr(r.trace_json, "get_room_layout"));
	agent_result_release(&r);
	brain_free(b);
	stub_stop(&s);
	cand_release(&c);
}

/* ===================== Transport ===================== */

static void test_retry_429_then_success(void **state)
{
	struct cand c;
	struct stub s;
	struct brain *b;
	struct agent_result r;

	(void)state;
	find_cand("intention.head_turn", "approx", 0, &c);
	stub_on(&s, "retry_429.json", &c, "");
	b = openai_brain(&s, 0);
	run(b, &c, NULL, &r);
	assert_same_as_local(&r, &c);
	assert_int_equal(r.turns, 3);
	/* the client waited what Retry-After asked, once */
	assert_int_equal(nsleeps, 1);
	assert_int_equal(sleeps[0], 1000);
	assert_int_equal(stub_count(&s), 4);
	agent_result_release(&r);
	brain_free(b);
	stub_stop(&s);
	cand_release(&c);
}

static void test_retry_500_then_success(void **state)
{
	struct cand c;
	struct stub s;
	struct brain *b;
	struct agent_result r;
	cJSON *log;

	(void)state;
	find_cand("intention.head_turn", "approx", 0, &c);
	stub_on(&s, "retry_500.json", &c, "");
	b = openai_brain(&s, 0);
	run(b, &c, NULL, &r);
	assert_same_as_local(&r, &c);
	assert_int_equal(r.turns, 3);
	/* one backoff without a hint: 0.5 s less up to a quarter of jitter */
	assert_int_equal(nsleeps, 1);
	assert_true(sleeps[0] >= 375 && sleeps[0] <= 500);
	log = stub_log(&s);
	assert_int_equal(cJSON_GetArraySize(log), 4);
	assert_int_equal(jget(cJSON_GetArrayItem(log, 1), "status")->valueint, 500);
	/* the retry sent the same body */
	assert_true(cJSON_Compare(jget(cJSON_GetArrayItem(log, 1), "body"),
				  jget(cJSON_GetArrayItem(log, 2), "body"), 1));
	cJSON_Delete(log);
	agent_result_release(&r);
	brain_free(b);
	stub_stop(&s);
	cand_release(&c);
}

/* a server that never answers: the session fails, the next one succeeds */
static void test_hung_connection(void **state)
{
	struct cand c;
	struct stub s;
	struct brain *b;
	struct agent_result r1, r2;

	(void)state;
	find_cand("intention.head_turn", "approx", 0, &c);
	stub_on(&s, "hang.json", &c, "");
	b = openai_brain(&s, 500);
	run(b, &c, NULL, &r1);
	assert_failed_cleanly(&r1);
	assert_int_equal(r1.turns, 2);
	assert_non_null(strstr(r1.reason, "3 attempts"));
	/* the same brain (and client) goes on with the next session */
	run(b, &c, NULL, &r2);
	assert_same_as_local(&r2, &c);
	assert_int_equal(stub_count(&s), 1 + 3 + 3);
	agent_result_release(&r1);
	agent_result_release(&r2);
	brain_free(b);
	stub_stop(&s);
	cand_release(&c);
}

/* a cut body is retried; three in a row fail the session cleanly */
static void test_truncated_body(void **state)
{
	struct cand c;
	struct stub s;
	struct brain *b;
	struct agent_result r1, r2, r3;

	(void)state;
	find_cand("intention.head_turn", "approx", 0, &c);
	stub_on(&s, "truncate.json", &c, "");
	b = openai_brain(&s, 0);
	run(b, &c, NULL, &r1);
	assert_same_as_local(&r1, &c);
	run(b, &c, NULL, &r2);
	assert_failed_cleanly(&r2);
	assert_int_equal(r2.turns, 1);
	run(b, &c, NULL, &r3);
	assert_same_as_local(&r3, &c);
	assert_int_equal(stub_count(&s), 4 + 3 + 3);
	agent_result_release(&r1);
	agent_result_release(&r2);
	agent_result_release(&r3);
	brain_free(b);
	stub_stop(&s);
	cand_release(&c);
}

/* an error in each provider's shape fails that session with its message */
static void test_provider_error_shapes(void **state)
{
	static const char *const flavors[] = { "openai", "gemini", "vllm", "vllm-legacy",
					       "llamacpp", "ollama", "ollama-native" };
	struct cand c;
	struct stub s;
	struct brain *b;
	struct agent_result r;
	size_t i;

	(void)state;
	find_cand("intention.head_turn", "approx", 0, &c);
	stub_on(&s, "error_shapes.json", &c, "");
	b = openai_brain(&s, 0);
	for (i = 0; i < sizeof(flavors) / sizeof(flavors[0]); i++) {
		char want[64];

		run(b, &c, NULL, &r);
		assert_failed_cleanly(&r);
		assert_int_equal(r.turns, 1);
		/* the provider's message reached the reason, whatever its shape */
		snprintf(want, sizeof(want), "stub %s: ", flavors[i]);
		if (!strstr(r.reason, want))
			fail_msg("reason '%s' lacks '%s'", r.reason, want);
		assert_non_null(strstr(r.reason, i < 5 ? "HTTP 400" : "HTTP 404"));
		agent_result_release(&r);
	}
	/* a 4xx is not retried: one request each, then a session that works */
	assert_int_equal(nsleeps, 0);
	run(b, &c, NULL, &r);
	assert_same_as_local(&r, &c);
	assert_int_equal(stub_count(&s), 7 + 3);
	agent_result_release(&r);
	brain_free(b);
	stub_stop(&s);
	cand_release(&c);
}

/* ===================== Statements the tools contradict ===================== */

/* A head-turn statement the tools contradict: 90 degrees to the other side. */
static const char *wrong_statement(const struct cand *c)
{
	cJSON *ans = cJSON_Parse(c->local.qa.answer_json);
	const char *w;

	assert_non_null(ans);
	w = !strcmp(jget(ans, "turn")->valuestring, "right") ? "Turn left ~90°" : "Turn right ~90°";
	cJSON_Delete(ans);
	return w;
}

/* "Turn left ~90°" when the tools say right: the tools' answer is kept */
static void test_wrong_stated_answer(void **state)
{
	struct cand c;
	struct stub s;
	struct brain *b;
	struct agent_result r;
	cJSON *trace;
	const char *wrong;
	char want[128];

	(void)state;
	find_cand("intention.head_turn", "approx", 0, &c);
	wrong = wrong_statement(&c);
	stub_on(&s, "planner.json", &c, wrong);
	b = openai_brain(&s, 0);
	run(b, &c, NULL, &r);
	assert_same_as_local(&r, &c);
	assert_int_equal(r.disagreements, 1);
	assert_non_null(r.qa.note);
	snprintf(want, sizeof(want), "brain stated \"%s\"; the tools give \"", wrong);
	assert_non_null(strstr(r.qa.note, want));
	trace = cJSON_Parse(r.trace_json);
	assert_non_null(trace);
	assert_string_equal(jget(trace, "disagreement")->valuestring, r.qa.note);
	assert_string_equal(jget(trace, "status")->valuestring, "qa");
	cJSON_Delete(trace);
	/* the stated wrong option is not the key */
	assert_null(strstr(c.key, wrong));
	agent_result_release(&r);
	brain_free(b);
	stub_stop(&s);
	cand_release(&c);
}

/* Degrees between two head-turn answers' yaws (on the circle). */
static double yaw_apart(double a, double b)
{
	double d = fmod(fabs(a - b), 360.0);

	return d > 180 ? 360 - d : d;
}

/*
 * Distractors that restate the answer or sit too close to it are not
 * used: one option holds the tools' answer, the others keep the margin.
 */
static void test_proposed_distractors(void **state)
{
	struct cand c;
	struct stub s;
	struct brain *b;
	struct agent_result r;
	struct answer truth, opt;
	cJSON *tj, *opts, *d;
	const cJSON *it;
	struct disc_params dp;
	char text[64];
	int n = 0, equal = 0, mirrored = 0, side;
	double yaw;

	(void)state;
	/* a clear turn to one side, so that +10 degrees and the mirror are turns too */
	for (n = 0;; n = c.index + 1) {
		find_cand("intention.head_turn", "approx", n, &c);
		tj = cJSON_Parse(c.local.qa.answer_json);
		assert_int_equal(ans_from_json(tj, &truth), 0);
		cJSON_Delete(tj);
		yaw = truth.yaw_deg;
		if (fabs(yaw) >= 45 && fabs(yaw) <= 150)
			break;
		cand_release(&c);
	}
	n = 0;
	side = yaw < 0 ? -1 : 1;
	d = cJSON_CreateArray();
	cJSON_AddItemToArray(d, cJSON_CreateString(c.key));
	snprintf(text, sizeof(text), "turn the head %s about %d degrees", side < 0 ? "right" : "left",
		 (int)fabs(yaw));
	cJSON_AddItemToArray(d, cJSON_CreateString(text));
	snprintf(text, sizeof(text), "Turn %s ~%d°", side < 0 ? "right" : "left", (int)fabs(yaw) + 10);
	cJSON_AddItemToArray(d, cJSON_CreateString(text));
	snprintf(text, sizeof(text), "Turn %s ~%d°", side < 0 ? "left" : "right", (int)fabs(yaw));
	cJSON_AddItemToArray(d, cJSON_CreateString(text));
	{
		char *t = cJSON_PrintUnformatted(d);

		snprintf(c.distractors, sizeof(c.distractors), "%s", t);
		free(t);
	}
	cJSON_Delete(d);
	stub_on(&s, "distractors.json", &c, "");
	b = openai_brain(&s, 0);
	run(b, &c, NULL, &r);
	assert_int_equal(r.status, AGENT_QA);
	assert_agrees_with_tools(&r);
	assert_string_equal(r.qa.id, c.local.qa.id);
	disc_defaults(&dp);
	opts = cJSON_Parse(r.qa.options_json);
	cJSON_ArrayForEach(it, opts) {
		assert_int_equal(ans_parse(truth.kind, it->valuestring, &dp, &opt), 0);
		if (ans_equal(&opt, &truth)) {
			equal++;
			assert_int_equal(n, r.qa.answer_index);
		} else {
			/* the negative angle margin of docs/defaults.md */
			assert_true(yaw_apart(opt.yaw_deg, truth.yaw_deg) >= 30 - 1e-3);
		}
		if (fabs(opt.yaw_deg + truth.yaw_deg) < 1e-3)
			mirrored++;
		n++;
	}
	assert_int_equal(n, F.ap.truth.qc.n_options);
	assert_int_equal(equal, 1);
	/*
	 * The proposal that keeps the margin (the mirrored side) may stand in
	 * for a draw of the design, never twice; those that break it never do.
	 */
	assert_true(mirrored <= 1);
	cJSON_Delete(opts);
	agent_result_release(&r);
	brain_free(b);
	stub_stop(&s);
	cand_release(&c);
}

/* a T the sampler does not produce is refused: a clip_rule drop, nothing kept */
static void test_clip_the_sampler_does_not_produce(void **state)
{
	struct cand c;
	struct stub s;
	struct brain *b;
	struct agent_result r;
	cJSON *res;
	int64_t bad;

	(void)state;
	find_cand("intention.head_turn", "approx", 0, &c);
	bad = c.t + NS_PER_S / 20;
	/* independently: the sampler gives T for the target, and nothing at T + 50 ms */
	res = tool("sample_clips",
		   "{\"subtask\":\"%s\",\"metric\":\"%s\",\"index\":0,\"count\":1,\"seed\":0,"
		   "\"target\":\"%s\",\"t0\":%lld,\"t1\":%lld,\"frames\":null,\"window_s\":null,"
		   "\"k\":null}", c.subtask, c.metric, c.target, (long long)c.t, (long long)c.t);
	assert_int_equal(jget(res, "total")->valueint, 1);
	cJSON_Delete(res);
	res = tool("sample_clips",
		   "{\"subtask\":\"%s\",\"metric\":null,\"index\":0,\"count\":1,\"seed\":0,"
		   "\"target\":\"%s\",\"t0\":%lld,\"t1\":%lld,\"frames\":null,\"window_s\":null,"
		   "\"k\":null}", c.subtask, c.target, (long long)bad, (long long)bad);
	assert_int_equal(jget(res, "total")->valueint, 0);
	cJSON_Delete(res);

	stub_on(&s, "bad_t.json", &c, "");
	b = openai_brain(&s, 0);
	run(b, &c, NULL, &r);
	assert_int_equal(r.status, AGENT_DROP);
	/* the brain's GIVE UP after the refusal keeps the refusal's reason */
	assert_string_equal(r.reason_code, "clip_rule");
	assert_true(r.drop_t_ns == bad);
	assert_string_equal(r.drop_target, c.target);
	assert_int_equal(trace_tool_errors(&r, "rejected"), 1);
	assert_int_equal(r.turns, 3);
	assert_agrees_with_tools(&r);
	agent_result_release(&r);
	brain_free(b);
	stub_stop(&s);
	cand_release(&c);
}

/* a brain that never calls submit_qa: dropped at the turn limit */
static void test_never_submits(void **state)
{
	struct cand c;
	struct stub s;
	struct brain *b;
	struct agent_result r;
	struct agent_params p = F.ap;
	cJSON *log;
	const cJSON *tc;
	int i;

	(void)state;
	find_cand("intention.head_turn", "approx", 0, &c);
	stub_on(&s, "no_submit.json", &c, "");
	b = openai_brain(&s, 0);
	p.max_turns = 4;
	run(b, &c, &p, &r);
	assert_int_equal(r.status, AGENT_DROP);
	assert_string_equal(r.reason_code, "turn_limit");
	assert_int_equal(r.turns, 4);
	assert_agrees_with_tools(&r);
	log = stub_log(&s);
	assert_int_equal(cJSON_GetArraySize(log), 4);
	/* the last turn names submit_qa */
	for (i = 0; i < 3; i++)
		assert_string_equal(jget(jget(cJSON_GetArrayItem(log, i), "body"), "tool_choice")->valuestring,
				    "auto");
	tc = jget(jget(cJSON_GetArrayItem(log, 3), "body"), "tool_choice");
	assert_true(cJSON_IsObject(tc));
	assert_string_equal(jget(jget(tc, "function"), "name")->valuestring, "submit_qa");
	cJSON_Delete(log);
	agent_result_release(&r);
	brain_free(b);
	stub_stop(&s);
	cand_release(&c);
}

/* ===================== All nine groups through the wire ===================== */

/*
 * A stub script that replays, turn by turn, the tool calls the local brain
 * made in its session (read back from its trace), so that the openai brain
 * makes exactly those calls over HTTP.
 */
static cJSON *script_from_trace(const char *trace_json)
{
	cJSON *doc = cJSON_Parse(trace_json), *script = cJSON_CreateObject(), *replies;
	const cJSON *m, *tc;

	assert_non_null(doc);
	cJSON_AddBoolToObject(script, "strict", 1);
	replies = cJSON_AddArrayToObject(script, "replies");
	cJSON_ArrayForEach(m, jget(doc, "messages")) {
		cJSON *reply, *calls;

		if (strcmp(cJSON_GetStringValue(jget(m, "role")), "assistant") ||
		    !jget(m, "tool_calls"))
			continue;
		reply = cJSON_CreateObject();
		calls = cJSON_AddArrayToObject(reply, "tool_calls");
		cJSON_ArrayForEach(tc, jget(m, "tool_calls")) {
			cJSON *c = cJSON_CreateObject();
			cJSON *args = cJSON_Parse(cJSON_GetStringValue(jget(tc, "arguments")));

			assert_non_null(args);
			cJSON_AddStringToObject(c, "name", cJSON_GetStringValue(jget(tc, "name")));
			cJSON_AddItemToObject(c, "arguments", args);
			cJSON_AddItemToArray(calls, c);
		}
		cJSON_AddItemToArray(replies, reply);
	}
	cJSON_Delete(doc);
	return script;
}

/*
 * For every sub-task and metric, the first session the local brain turns
 * into a QA is played by the openai brain over the wire protocol (its
 * calls scripted in the stub): the same QA comes out, and it agrees with
 * the tools.
 */
static void test_nine_groups_through_the_wire(void **state)
{
	static const char *const groups[][2] = {
		{ "intention.head_turn", "approx" }, { "intention.head_turn", "relative" },
		{ "intention.gaze_target", "approx" }, { "intention.gaze_target", "relative" },
		{ "exploration.navigate", "approx" }, { "exploration.navigate", "relative" },
		{ "exploitation.next_interaction", "approx" },
		{ "exploitation.next_interaction", "relative" }, { "chain.actions", "relative" },
	};
	size_t g;

	(void)state;
	for (g = 0; g < sizeof(groups) / sizeof(groups[0]); g++) {
		struct cand c;
		struct agent_result r;
		struct stub s;
		struct brain *b;
		char path[400], log[64];
		cJSON *script;
		int i, found = 0;

		memset(&c, 0, sizeof(c));
		c.subtask = groups[g][0];
		c.metric = groups[g][1];
		for (i = 0; i < 80 && !found; i++) {
			struct brain_session ss;

			session_of(&c, i, &ss);
			assert_int_equal(agent_run(F.local, F.ctx, &ss, &F.ap, &c.local), 0);
			if (c.local.status == AGENT_QA) {
				found = 1;
				c.index = i;
			} else {
				agent_result_release(&c.local);
			}
		}
		if (!found)
			fail_msg("no %s/%s session of the local brain gives a QA", c.subtask, c.metric);
		c.t = c.local.qa.t_ns;
		snprintf(c.target, sizeof(c.target), "%s", c.local.qa.target);
		script = script_from_trace(c.local.trace_json);
		assert_true(cJSON_GetArraySize(jget(script, "replies")) >= 2);
		snprintf(path, sizeof(path), "%s/wire_%zu.json", F.dir, g);
		snprintf(log, sizeof(log), "wire_%zu.log", g);
		write_json(script, path);
		stub_start(&s, path, log);
		b = openai_brain(&s, 0);
		run(b, &c, NULL, &r);
		if (r.status != AGENT_QA)
			fail_msg("%s/%s over the wire: %s", c.subtask, c.metric, r.reason);
		/* the same QA as the local brain's, and it agrees with the tools */
		assert_string_equal(r.qa.id, c.local.qa.id);
		assert_string_equal(r.qa.question, c.local.qa.question);
		assert_string_equal(r.qa.options_json, c.local.qa.options_json);
		assert_string_equal(r.qa.answer_json, c.local.qa.answer_json);
		assert_int_equal(r.qa.answer_index, c.local.qa.answer_index);
		assert_agrees_with_tools(&r);
		/* one request per scripted turn, each accepted by the strict stub */
		assert_int_equal(stub_count(&s), cJSON_GetArraySize(jget(script, "replies")));
		cJSON_Delete(script);
		agent_result_release(&r);
		brain_free(b);
		stub_stop(&s);
		cand_release(&c);
	}
}

/* ===================== Record, replay, cache ===================== */

static int generate(const char *db, const char *brain, const char *url, const char *record)
{
	char *argv[32];
	int n = 0;

	argv[n++] = (char *)(uintptr_t)"generate";
	argv[n++] = F.rec_dir;
	argv[n++] = (char *)(uintptr_t)"--db";
	argv[n++] = (char *)(uintptr_t)db;
	argv[n++] = (char *)(uintptr_t)"--tasks";
	argv[n++] = (char *)(uintptr_t)"intention.head_turn/approx";
	argv[n++] = (char *)(uintptr_t)"--per-task";
	argv[n++] = (char *)(uintptr_t)"4";
	argv[n++] = (char *)(uintptr_t)"--max-sessions";
	argv[n++] = (char *)(uintptr_t)"4";
	argv[n++] = (char *)(uintptr_t)"--jobs";
	argv[n++] = (char *)(uintptr_t)"1";
	argv[n++] = (char *)(uintptr_t)"--quiet";
	argv[n++] = (char *)(uintptr_t)"--brain";
	argv[n++] = (char *)(uintptr_t)brain;
	argv[n++] = (char *)(uintptr_t)"--model";
	argv[n++] = (char *)(uintptr_t)"stub-model";
	argv[n++] = (char *)(uintptr_t)"--profile";
	argv[n++] = (char *)(uintptr_t)"openai";
	if (url) {
		argv[n++] = (char *)(uintptr_t)"--base-url";
		argv[n++] = (char *)(uintptr_t)url;
	}
	if (record) {
		argv[n++] = (char *)(uintptr_t)"--record";
		argv[n++] = (char *)(uintptr_t)record;
	}
	argv[n] = NULL;
	fflush(stdout);
	return cmd_generate(n, argv);
}

static cJSON *stored_qas(const char *db)
{
	struct store *st = NULL;
	cJSON *out = NULL;

	assert_int_equal(store_open(db, STORE_READONLY, &st), 0);
	assert_int_equal(store_qa_list(st, NULL, &out), 0);
	store_close(st);
	return out;
}

static const char *const qa_fields[] = { "id", "recording_id", "category", "subtask", "metric",
					 "t_ns", "clip_start_ns", "clip_end_ns", "frames", "target",
					 "question", "options", "answer_index", "answer", "gt", "qc",
					 "status" };

static void test_record_replay_and_cache(void **state)
{
	struct cand c[4];
	struct stub s;
	cJSON *script, *replies, *q1, *q2;
	char path[512], db1[400], db2[400], cas[400];
	const cJSON *it;
	int i, k;

	(void)state;
	/* four head-turn clips; the second session states a wrong answer */
	script = cJSON_CreateObject();
	cJSON_AddBoolToObject(script, "strict", 1);
	replies = cJSON_AddArrayToObject(script, "replies");
	for (i = 0; i < 4; i++) {
		cJSON *one;

		find_cand("intention.head_turn", "approx", i ? c[i - 1].index + 1 : 0, &c[i]);
		one = script_for("planner.json", &c[i], i == 1 ? wrong_statement(&c[i]) : "");
		cJSON_ArrayForEach(it, jget(one, "replies"))
			cJSON_AddItemToArray(replies, cJSON_Duplicate(it, 1));
		cJSON_Delete(one);
	}
	snprintf(path, sizeof(path), "%s/replay_script.json", F.dir);
	snprintf(db1, sizeof(db1), "%s/openai.db", F.dir);
	snprintf(db2, sizeof(db2), "%s/replay.db", F.dir);
	snprintf(cas, sizeof(cas), "%s/cassette.jsonl", F.dir);
	write_json(script, path);
	cJSON_Delete(script);

	stub_start(&s, path, "replay.log");
	assert_int_equal(generate(db1, "openai", s.url, cas), 0);
	stub_stop(&s);
	assert_int_equal(stub_count(&s), 12);

	/* offline: the stub is gone, the cassette answers */
	assert_int_equal(generate(db2, "replay:", NULL, NULL), 2);
	snprintf(path, sizeof(path), "replay:%s", cas);
	assert_int_equal(generate(db2, path, NULL, NULL), 0);
	q1 = stored_qas(db1);
	q2 = stored_qas(db2);
	assert_int_equal(jget(q1, "total")->valueint, 4);
	assert_int_equal(jget(q2, "total")->valueint, 4);
	for (i = 0; i < 4; i++) {
		const cJSON *a = cJSON_GetArrayItem(jget(q1, "items"), i);
		const cJSON *b = cJSON_GetArrayItem(jget(q2, "items"), i);
		int found = 0;

		for (k = 0; k < (int)(sizeof(qa_fields) / sizeof(qa_fields[0])); k++)
			if (!cJSON_Compare(jget(a, qa_fields[k]), jget(b, qa_fields[k]), 1))
				fail_msg("QA %d: '%s' differs after replay", i, qa_fields[k]);
		/* each stored QA is the local brain's (the tools'), the wrong statement included */
		for (k = 0; k < 4; k++) {
			cJSON *la;

			if (strcmp(jget(a, "id")->valuestring, c[k].local.qa.id))
				continue;
			found = 1;
			la = cJSON_Parse(c[k].local.qa.answer_json);
			assert_true(cJSON_Compare(jget(a, "answer"), la, 1));
			{
				/* the run spreads keys over the letters: the key's text is the same */
				cJSON *lo = cJSON_Parse(c[k].local.qa.options_json);

				assert_string_equal(cJSON_GetArrayItem(jget(a, "options"),
						    jget(a, "answer_index")->valueint)->valuestring,
						    cJSON_GetArrayItem(lo, c[k].local.qa.answer_index)->valuestring);
				cJSON_Delete(lo);
			}
			cJSON_Delete(la);
		}
		assert_true(found);
	}
	{
		struct store *st = NULL;
		cJSON *qa = NULL;
		const char *note;

		assert_int_equal(store_open(db2, STORE_READONLY, &st), 0);
		assert_int_equal(store_qa_get(st, c[1].local.qa.id, STORE_GET_TRACE, &qa), 0);
		note = cJSON_GetStringValue(jget(jget(qa, "trace"), "disagreement"));
		assert_non_null(note);
		assert_non_null(strstr(note, wrong_statement(&c[1])));
		assert_string_equal(cJSON_GetStringValue(jget(jget(qa, "trace"), "brain")), "replay");
		cJSON_Delete(qa);
		store_close(st);
	}

	/* the same openai run again: every answer comes from the store's cache */
	snprintf(path, sizeof(path), "%s/empty_script.json", F.dir);
	script = cJSON_CreateArray();
	write_json(script, path);
	cJSON_Delete(script);
	stub_start(&s, path, "cache.log");
	assert_int_equal(generate(db1, "openai", s.url, NULL), 0);
	stub_stop(&s);
	assert_int_equal(stub_count(&s), 0);
	cJSON_Delete(q2);
	q2 = stored_qas(db1);
	assert_true(cJSON_Compare(q1, q2, 1));

	/* recording a run the cache answers still gives a complete cassette */
	snprintf(cas, sizeof(cas), "%s/cassette2.jsonl", F.dir);
	stub_start(&s, path, "cache2.log");
	assert_int_equal(generate(db1, "openai", s.url, cas), 0);
	stub_stop(&s);
	assert_int_equal(stub_count(&s), 0);
	snprintf(db2, sizeof(db2), "%s/replay2.db", F.dir);
	snprintf(path, sizeof(path), "replay:%s", cas);
	assert_int_equal(generate(db2, path, NULL, NULL), 0);
	cJSON_Delete(q2);
	q2 = stored_qas(db2);
	assert_int_equal(jget(q2, "total")->valueint, 4);
	for (i = 0; i < 4; i++) {
		const cJSON *a = cJSON_GetArrayItem(jget(q1, "items"), i);
		const cJSON *b = cJSON_GetArrayItem(jget(q2, "items"), i);

		for (k = 0; k < (int)(sizeof(qa_fields) / sizeof(qa_fields[0])); k++)
			if (!cJSON_Compare(jget(a, qa_fields[k]), jget(b, qa_fields[k]), 1))
				fail_msg("QA %d: '%s' differs after replaying the cached run", i,
					 qa_fields[k]);
	}
	cJSON_Delete(q1);
	cJSON_Delete(q2);
	for (i = 0; i < 4; i++)
		cand_release(&c[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_local_traces_have_no_failed_calls),
		cmocka_unit_test(test_planner_matches_local),
		cmocka_unit_test(test_several_calls_in_one_turn),
		cmocka_unit_test(test_stated_event_time_is_not_used),
		cmocka_unit_test(test_arguments_as_object),
		cmocka_unit_test(test_invalid_json_arguments),
		cmocka_unit_test(test_unknown_tool),
		cmocka_unit_test(test_retry_429_then_success),
		cmocka_unit_test(test_retry_500_then_success),
		cmocka_unit_test(test_hung_connection),
		cmocka_unit_test(test_truncated_body),
		cmocka_unit_test(test_provider_error_shapes),
		cmocka_unit_test(test_wrong_stated_answer),
		cmocka_unit_test(test_proposed_distractors),
		cmocka_unit_test(test_clip_the_sampler_does_not_produce),
		cmocka_unit_test(test_never_submits),
		cmocka_unit_test(test_nine_groups_through_the_wire),
		cmocka_unit_test(test_record_replay_and_cache),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
