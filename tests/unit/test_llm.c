/* SPDX-License-Identifier: MIT */
/*
 * The Chat Completions client against the loopback stub (build/tests/llm_stub,
 * scripted by the JSON files in tests/data/llm): tool-call turns, argument shapes,
 * retries, error shapes, per-profile request bodies, the cache hook,
 * cassettes and concurrent clients.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "err.h"
#include "hash.h"
#include "llm.h"
#include "stub_proc.h"

#define DATA "tests/data/llm/"

/* ===================== Stub process ===================== */

struct stub {
	pid_t pid;
	int port;
	char dir[256];
	char log[320];
	char url[64];
};

static void make_tmpdir(char *dir, size_t n)
{
	const char *t = getenv("TMPDIR");

	snprintf(dir, n, "%s/test_llm.XXXXXX", t && *t ? t : "/tmp");
	assert_non_null(mkdtemp(dir));
}

/* Starts the stub with a script and up to four extra arguments. */
static void stub_start(struct stub *s, const char *script, const char *a1, const char *a2,
		       const char *a3, const char *a4)
{
	const char *args[12] = { "--script", script, "--log", s->log, "--timeout-s", "30" };
	int n = 6;

	memset(s, 0, sizeof(*s));
	make_tmpdir(s->dir, sizeof(s->dir));
	snprintf(s->log, sizeof(s->log), "%s/requests.jsonl", s->dir);
	args[3] = s->log;
	if (a1)
		args[n++] = a1;
	if (a2)
		args[n++] = a2;
	if (a3)
		args[n++] = a3;
	if (a4)
		args[n++] = a4;
	args[n] = NULL;
	s->pid = stub_proc_start(args, &s->port);
	snprintf(s->url, sizeof(s->url), "http://127.0.0.1:%d/v1", s->port);
}

static void stub_stop(struct stub *s)
{
	stub_proc_stop(&s->pid);
}

static void rm_tree(const char *dir)
{
	char p[512];
	const char *names[] = { "requests.jsonl", "cassette.jsonl" };
	size_t i;

	for (i = 0; i < 2; i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, names[i]);
		unlink(p);
	}
	rmdir(dir);
}

/* The stub's request log as a JSON array (one element per request). */
static cJSON *stub_log(const struct stub *s)
{
	return stub_proc_log(s->log, 1);
}

static int stub_count(const struct stub *s)
{
	cJSON *l = stub_log(s);
	int n = cJSON_GetArraySize(l);

	cJSON_Delete(l);
	return n;
}

/* The body of request i (0-based) the stub received; owned by log. */
static const cJSON *logged_body(const cJSON *log, int i)
{
	const cJSON *b = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(log, i), "body");

	assert_true(cJSON_IsObject(b));
	return b;
}

static const cJSON *jget(const cJSON *o, const char *k)
{
	return cJSON_GetObjectItemCaseSensitive(o, k);
}

static int has_key_anywhere(const cJSON *j, const char *k)
{
	const cJSON *it;

	if (!j)
		return 0;
	cJSON_ArrayForEach(it, j) {
		if (it->string && !strcmp(it->string, k))
			return 1;
		if (has_key_anywhere(it, k))
			return 1;
	}
	return 0;
}

/* ===================== Client fixtures ===================== */

struct sleeps {
	long ms[16];
	int n;
};

static void rec_sleep(void *ctx, long ms)
{
	struct sleeps *s = ctx;

	if (s->n < 16)
		s->ms[s->n++] = ms;
}

static const char query_schema[] =
	"{\"type\":\"object\",\"properties\":{"
	"\"status\":{\"type\":\"string\",\"enum\":[\"open\",\"closed\"]},"
	"\"older_than_days\":{\"type\":\"integer\",\"minimum\":0},"
	"\"limit\":{\"type\":[\"integer\",\"null\"],\"maximum\":100}},"
	"\"required\":[\"status\",\"older_than_days\",\"limit\"],"
	"\"additionalProperties\":false,\"$schema\":\"http://json-schema.org/draft-07/schema#\"}";
static const char time_schema[] =
	"{\"type\":\"object\",\"properties\":{},\"required\":[],\"additionalProperties\":false}";
static const char final_schema[] =
	"{\"type\":\"object\",\"properties\":{\"answer\":{\"type\":\"integer\"},"
	"\"confidence\":{\"type\":\"number\",\"minimum\":0,\"maximum\":1},"
	"\"evidence\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},"
	"\"kind\":{\"const\":\"final\"}},"
	"\"required\":[\"answer\",\"confidence\",\"evidence\"],\"additionalProperties\":false}";

static const struct llm_tool tools[] = {
	{ "query_incidents", "List incidents matching a filter.", NULL, query_schema, 1 },
	{ "get_time", "Current UTC time.", NULL, time_schema, 1 },
	{ "submit_final_answer", "Submit the final structured answer. Ends the task.", NULL,
	  final_schema, 1 },
};
#define NTOOLS ARRAY_SIZE(tools)

struct fixture {
	struct llm_config cfg;
	struct sleeps sl;
	struct llm_client *c;
};

static void fx_config(struct fixture *fx, const struct stub *s, enum llm_profile p)
{
	memset(fx, 0, sizeof(*fx));
	llm_config_init(&fx->cfg);
	fx->cfg.base_url = s ? s->url : NULL;
	fx->cfg.model = "gpt-4.1-mini";
	fx->cfg.profile = p;
	fx->cfg.api_key_env = "PROXIMA_TEST_LLM_KEY";
	fx->cfg.temperature = 0;
	fx->cfg.seed = 42;
	fx->cfg.max_tokens = 1024;
	fx->cfg.timeout_ms = 10000;
	fx->cfg.jitter_seed = 7;
	fx->cfg.sleep_ms = rec_sleep;
	fx->cfg.sleep_ctx = &fx->sl;
}

static void fx_open(struct fixture *fx)
{
	assert_int_equal(llm_client_new(&fx->cfg, &fx->c), 0);
}

static void fx_close(struct fixture *fx)
{
	llm_client_free(fx->c);
	fx->c = NULL;
}

/* system + user(text, image) as in llm-protocol.md 8.1 */
static void first_turn(struct llm_msg m[2])
{
	assert_int_equal(llm_msg_text(&m[0], LLM_ROLE_SYSTEM,
				      "You are the planner. Use tools to inspect the data. When done, call submit_final_answer exactly once."),
			 0);
	llm_msg_init(&m[1], LLM_ROLE_USER);
	assert_int_equal(llm_msg_set_parts(&m[1],
					   "[{\"type\":\"text\",\"text\":\"How many open incidents are older than 7 days?\"},"
					   "{\"type\":\"image_url\",\"image_url\":{\"url\":\"data:image/png;base64,iVBORw0KGgo=\",\"detail\":\"low\"}}]"),
			 0);
}

static void release_all(struct llm_msg *m, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		llm_msg_release(&m[i]);
}

/* Appends the reply's message and one tool result per call (name left to the client). */
static size_t answer_calls(struct llm_msg *h, size_t n, struct llm_reply *r, const char *content)
{
	size_t k, a = n;

	llm_reply_take_msg(r, &h[n++]);
	for (k = 0; k < h[a].n_tool_calls; k++) {
		assert_int_equal(llm_msg_tool_result(&h[n], h[a].tool_calls[k].id, NULL, content), 0);
		n++;
	}
	return n;
}

/* ===================== Tests: tool-call turns ===================== */

static void test_tool_call_turn(void **state)
{
	struct stub s;
	struct fixture fx;
	struct llm_msg h[8];
	struct llm_reply r;
	cJSON *log;
	const cJSON *b, *msgs, *tc;
	char *raw;
	size_t n = 2;

	(void)state;
	setenv("PROXIMA_TEST_LLM_KEY", "sk-test-not-a-real-key-0451", 1);
	stub_start(&s, DATA "tool_turn.json", NULL, NULL, NULL, NULL);
	fx_config(&fx, &s, LLM_PROFILE_OPENAI);
	fx_open(&fx);
	first_turn(h);
	assert_int_equal(llm_chat(fx.c, h, n, tools, NTOOLS, NULL, &r), 0);
	assert_int_equal(r.http_status, 200);
	assert_int_equal(r.attempts, 1);
	assert_null(r.msg.content);
	assert_int_equal(r.msg.n_tool_calls, 2);
	assert_string_equal(r.msg.tool_calls[0].name, "query_incidents");
	assert_string_equal(r.msg.tool_calls[0].arguments_json,
			    "{\"status\":\"open\",\"older_than_days\":7,\"limit\":100}");
	assert_int_equal(r.msg.tool_calls[0].flags, 0);
	assert_string_equal(r.msg.tool_calls[1].name, "get_time");
	assert_string_equal(r.msg.tool_calls[1].arguments_json, "{}");
	/* OpenAI-style ids: call_ + 24 */
	assert_int_equal(strlen(r.msg.tool_calls[0].id), 29);
	assert_memory_equal(r.msg.tool_calls[0].id, "call_", 5);
	assert_string_not_equal(r.msg.tool_calls[0].id, r.msg.tool_calls[1].id);
	assert_string_equal(r.finish_reason, "tool_calls");
	assert_string_equal(r.system_fingerprint, "fp_stub01");
	assert_int_equal(r.usage.prompt_tokens, 412);
	assert_int_equal(r.usage.completion_tokens, 58);
	assert_int_equal(r.usage.total_tokens, 470);
	assert_int_equal(r.usage.cached_tokens, 128);
	assert_int_equal(r.usage.reasoning_tokens, 16);
	n = answer_calls(h, n, &r, "{\"ok\":true,\"count\":3}");
	llm_reply_release(&r);
	assert_int_equal(n, 5);
	/* the strict stub rejects orphans, missing names and non-string arguments */
	assert_int_equal(llm_chat(fx.c, h, n, tools, NTOOLS, NULL, &r), 0);
	assert_int_equal(r.msg.n_tool_calls, 1);
	assert_string_equal(r.msg.tool_calls[0].name, "submit_final_answer");
	assert_string_equal(r.msg.tool_calls[0].arguments_json,
			    "{\"answer\":3,\"confidence\":0.9,\"evidence\":[\"INC-17\",\"INC-21\",\"INC-30\"]}");
	llm_reply_release(&r);

	log = stub_log(&s);
	assert_int_equal(cJSON_GetArraySize(log), 2);
	b = logged_body(log, 0);
	assert_string_equal(jget(b, "model")->valuestring, "gpt-4.1-mini");
	assert_int_equal(jget(b, "max_completion_tokens")->valueint, 1024);
	assert_null(jget(b, "max_tokens"));
	assert_int_equal(jget(b, "seed")->valueint, 42);
	assert_true(cJSON_IsNumber(jget(b, "temperature")));
	assert_null(jget(b, "tool_choice"));
	tc = cJSON_GetArrayItem(jget(b, "tools"), 0);
	assert_true(cJSON_IsTrue(jget(jget(tc, "function"), "strict")));
	assert_true(has_key_anywhere(jget(b, "tools"), "additionalProperties"));
	msgs = jget(b, "messages");
	assert_string_equal(jget(cJSON_GetArrayItem(jget(cJSON_GetArrayItem(msgs, 1), "content"), 1),
				 "type")->valuestring,
			    "image_url");
	b = logged_body(log, 1);
	msgs = jget(b, "messages");
	assert_int_equal(cJSON_GetArraySize(msgs), 5);
	assert_true(cJSON_IsNull(jget(cJSON_GetArrayItem(msgs, 2), "content")));
	tc = cJSON_GetArrayItem(jget(cJSON_GetArrayItem(msgs, 2), "tool_calls"), 0);
	assert_true(cJSON_IsString(jget(jget(tc, "function"), "arguments")));
	assert_string_equal(jget(cJSON_GetArrayItem(msgs, 3), "name")->valuestring, "query_incidents");
	assert_string_equal(jget(cJSON_GetArrayItem(msgs, 4), "name")->valuestring, "get_time");
	assert_string_equal(jget(jget(cJSON_GetArrayItem(log, 0), "headers"), "authorization")->valuestring,
			    "Bearer [redacted]");
	cJSON_Delete(log);
	raw = slurp(s.log);
	assert_null(strstr(raw, "sk-test-not-a-real-key-0451"));
	free(raw);
	release_all(h, n);
	fx_close(&fx);
	stub_stop(&s);
	rm_tree(s.dir);
	unsetenv("PROXIMA_TEST_LLM_KEY");
}

static void test_several_calls_one_turn(void **state)
{
	struct stub s;
	struct fixture fx;
	struct llm_msg h[8];
	struct llm_reply r;
	size_t n = 2;

	(void)state;
	stub_start(&s, DATA "several_calls.json", NULL, NULL, NULL, NULL);
	fx_config(&fx, &s, LLM_PROFILE_OPENAI);
	fx_open(&fx);
	first_turn(h);
	assert_int_equal(llm_chat(fx.c, h, n, tools, NTOOLS, NULL, &r), 0);
	assert_string_equal(r.msg.content, "Checking the clock twice and the incidents once.");
	assert_int_equal(r.msg.n_tool_calls, 3);
	assert_string_equal(r.msg.tool_calls[0].name, "get_time");
	assert_string_equal(r.msg.tool_calls[1].name, "query_incidents");
	assert_string_equal(r.msg.tool_calls[2].name, "get_time");
	assert_string_equal(r.msg.tool_calls[1].arguments_json,
			    "{\"status\":\"closed\",\"older_than_days\":30,\"limit\":5}");
	assert_string_not_equal(r.msg.tool_calls[0].id, r.msg.tool_calls[2].id);
	n = answer_calls(h, n, &r, "{\"ok\":true}");
	llm_reply_release(&r);
	assert_int_equal(llm_chat(fx.c, h, n, tools, NTOOLS, NULL, &r), 0);
	assert_string_equal(r.msg.content, "done");
	assert_int_equal(r.msg.n_tool_calls, 0);
	assert_string_equal(r.finish_reason, "stop");
	llm_reply_release(&r);
	release_all(h, n);
	fx_close(&fx);
	stub_stop(&s);
	rm_tree(s.dir);
}

static void test_argument_shapes(void **state)
{
	struct stub s;
	struct fixture fx;
	struct llm_msg h[8], one[2];
	struct llm_reply r;
	cJSON *log;
	const cJSON *tc;
	size_t n;

	(void)state;
	stub_start(&s, DATA "args_shapes.json", NULL, NULL, NULL, NULL);
	fx_config(&fx, &s, LLM_PROFILE_OPENAI);
	fx_open(&fx);
	first_turn(one);
	/* object */
	assert_int_equal(llm_chat(fx.c, one, 2, tools, NTOOLS, NULL, &r), 0);
	assert_int_equal(r.msg.tool_calls[0].flags, LLM_TC_ARGS_OBJECT);
	assert_string_equal(r.msg.tool_calls[0].arguments_json,
			    "{\"status\":\"open\",\"older_than_days\":7,\"limit\":100}");
	llm_reply_release(&r);
	/* invalid JSON: reported, replaced by {} */
	assert_int_equal(llm_chat(fx.c, one, 2, tools, NTOOLS, NULL, &r), 0);
	assert_int_equal(r.msg.tool_calls[0].flags, LLM_TC_ARGS_INVALID);
	assert_string_equal(r.msg.tool_calls[0].arguments_json, "{}");
	assert_string_equal(r.msg.tool_calls[0].arguments_raw,
			    "{\"status\":\"open\",\"older_than_days\":7,\"limit\":100");
	assert_non_null(r.msg.tool_calls[0].arguments_error);
	h[0] = one[0];
	h[1] = one[1];
	n = answer_calls(h, 2, &r, "{\"ok\":false,\"error\":\"invalid_json\"}");
	llm_reply_release(&r);
	/* double-encoded */
	assert_int_equal(llm_chat(fx.c, one, 2, tools, NTOOLS, NULL, &r), 0);
	assert_int_equal(r.msg.tool_calls[0].flags, LLM_TC_ARGS_DOUBLE);
	assert_string_equal(r.msg.tool_calls[0].arguments_json, "{\"status\":\"open\"}");
	llm_reply_release(&r);
	/* empty string */
	assert_int_equal(llm_chat(fx.c, one, 2, tools, NTOOLS, NULL, &r), 0);
	assert_int_equal(r.msg.tool_calls[0].flags, LLM_TC_ARGS_EMPTY);
	assert_string_equal(r.msg.tool_calls[0].arguments_json, "{}");
	llm_reply_release(&r);
	/* the invalid call goes back as valid JSON text, which the strict stub accepts */
	assert_int_equal(llm_chat(fx.c, h, n, tools, NTOOLS, NULL, &r), 0);
	assert_string_equal(r.msg.content, "history accepted");
	llm_reply_release(&r);
	log = stub_log(&s);
	tc = cJSON_GetArrayItem(jget(cJSON_GetArrayItem(jget(logged_body(log, 4), "messages"), 2),
				     "tool_calls"),
				0);
	assert_string_equal(jget(jget(tc, "function"), "arguments")->valuestring, "{}");
	cJSON_Delete(log);
	release_all(h, n);
	fx_close(&fx);
	stub_stop(&s);
	rm_tree(s.dir);
}

static void test_unknown_tool_passed_up(void **state)
{
	struct stub s;
	struct fixture fx;
	struct llm_msg h[2];
	struct llm_reply r;

	(void)state;
	stub_start(&s, DATA "unknown_tool.json", NULL, NULL, NULL, NULL);
	fx_config(&fx, &s, LLM_PROFILE_OPENAI);
	fx_open(&fx);
	first_turn(h);
	assert_int_equal(llm_chat(fx.c, h, 2, tools, NTOOLS, NULL, &r), 0);
	assert_int_equal(r.msg.n_tool_calls, 1);
	assert_string_equal(r.msg.tool_calls[0].name, "teleport");
	assert_string_equal(r.msg.tool_calls[0].arguments_json, "{\"to\":\"kitchen\"}");
	assert_int_equal(r.salvaged, 0);
	llm_reply_release(&r);
	release_all(h, 2);
	fx_close(&fx);
	stub_stop(&s);
	rm_tree(s.dir);
}

static void test_base_url_forms(void **state)
{
	struct stub s;
	struct fixture fx;
	struct llm_msg h[2];
	struct llm_reply r;
	char url[128];
	cJSON *log;

	(void)state;
	stub_start(&s, DATA "loop.json", "--loop", NULL, NULL, NULL);
	fx_config(&fx, &s, LLM_PROFILE_OPENAI);
	snprintf(url, sizeof(url), "%s//?api-version=2024-10-21", s.url);
	fx.cfg.base_url = url;
	fx_open(&fx);
	first_turn(h);
	assert_int_equal(llm_chat(fx.c, h, 2, tools, NTOOLS, NULL, &r), 0);
	llm_reply_release(&r);
	fx_close(&fx);
	snprintf(url, sizeof(url), "%s/chat/completions", s.url);
	fx.cfg.base_url = url;
	fx_open(&fx);
	assert_int_equal(llm_chat(fx.c, h, 2, tools, NTOOLS, NULL, &r), 0);
	llm_reply_release(&r);
	log = stub_log(&s);
	assert_string_equal(jget(cJSON_GetArrayItem(log, 0), "path")->valuestring,
			    "/v1/chat/completions?api-version=2024-10-21");
	assert_string_equal(jget(cJSON_GetArrayItem(log, 1), "path")->valuestring,
			    "/v1/chat/completions");
	cJSON_Delete(log);
	release_all(h, 2);
	fx_close(&fx);
	stub_stop(&s);
	rm_tree(s.dir);
}

static void test_missing_ids_synthesised(void **state)
{
	struct stub s;
	struct fixture fx;
	struct llm_msg h[8];
	struct llm_reply r;
	size_t n;

	(void)state;
	stub_start(&s, DATA "missing_ids.json", NULL, NULL, NULL, NULL);
	fx_config(&fx, &s, LLM_PROFILE_GEMINI);
	fx_open(&fx);
	first_turn(h);
	assert_int_equal(llm_chat(fx.c, h, 2, tools, NTOOLS, NULL, &r), 0);
	assert_int_equal(r.msg.n_tool_calls, 2);
	assert_string_equal(r.msg.tool_calls[0].id, "call_1");
	assert_string_equal(r.msg.tool_calls[1].id, "call_2");
	assert_true(r.msg.tool_calls[0].flags & LLM_TC_ID_SYNTH);
	n = answer_calls(h, 2, &r, "{\"ok\":true}");
	llm_reply_release(&r);
	/* the same ids go out on the assistant turn and the tool messages */
	assert_int_equal(llm_chat(fx.c, h, n, tools, NTOOLS, NULL, &r), 0);
	assert_string_equal(r.msg.content, "ids matched");
	llm_reply_release(&r);
	release_all(h, n);
	fx_close(&fx);
	stub_stop(&s);
	rm_tree(s.dir);
}

static void test_salvage_from_content(void **state)
{
	struct stub s;
	struct fixture fx;
	struct llm_msg h[2];
	struct llm_reply r;

	(void)state;
	stub_start(&s, DATA "salvage.json", NULL, NULL, NULL, NULL);
	fx_config(&fx, &s, LLM_PROFILE_VLLM);
	fx_open(&fx);
	first_turn(h);
	assert_int_equal(llm_chat(fx.c, h, 2, tools, NTOOLS, NULL, &r), 0);
	assert_int_equal(r.salvaged, 1);
	assert_int_equal(r.msg.n_tool_calls, 1);
	assert_string_equal(r.msg.tool_calls[0].name, "get_time");
	assert_true(r.msg.tool_calls[0].flags & LLM_TC_SALVAGED);
	assert_null(r.msg.content);
	assert_string_equal(r.finish_reason, "stop");
	llm_reply_release(&r);
	fx_close(&fx);
	fx.cfg.salvage = 0;
	fx_open(&fx);
	assert_int_equal(llm_chat(fx.c, h, 2, tools, NTOOLS, NULL, &r), 0);
	assert_int_equal(r.msg.n_tool_calls, 0);
	assert_non_null(strstr(r.msg.content, "<tool_call>"));
	llm_reply_release(&r);
	release_all(h, 2);
	fx_close(&fx);
	stub_stop(&s);
	rm_tree(s.dir);
}

/* ===================== Tests: retries ===================== */

static void test_retry_429_retry_after(void **state)
{
	struct stub s;
	struct fixture fx;
	struct llm_msg h[2];
	struct llm_reply r;

	(void)state;
	stub_start(&s, DATA "retry_429.json", NULL, NULL, NULL, NULL);
	fx_config(&fx, &s, LLM_PROFILE_OPENAI);
	fx_open(&fx);
	first_turn(h);
	assert_int_equal(llm_chat(fx.c, h, 2, NULL, 0, NULL, &r), 0);
	assert_string_equal(r.msg.content, "after 429");
	assert_int_equal(r.attempts, 2);
	assert_int_equal(fx.sl.n, 1);
	assert_int_equal(fx.sl.ms[0], 1000);
	assert_int_equal(r.retry_wait_ms, 1000);
	assert_int_equal(stub_count(&s), 2);
	llm_reply_release(&r);
	release_all(h, 2);
	fx_close(&fx);
	stub_stop(&s);
	rm_tree(s.dir);
}

static void test_retry_500_backoff(void **state)
{
	struct stub s;
	struct fixture fx;
	struct llm_msg h[2];
	struct llm_reply r;

	(void)state;
	stub_start(&s, DATA "retry_500.json", NULL, NULL, NULL, NULL);
	fx_config(&fx, &s, LLM_PROFILE_OPENAI);
	fx_open(&fx);
	first_turn(h);
	assert_int_equal(llm_chat(fx.c, h, 2, NULL, 0, NULL, &r), 0);
	assert_string_equal(r.msg.content, "after 500");
	assert_int_equal(r.attempts, 2);
	assert_int_equal(fx.sl.n, 1);
	/* first retry: 0.5 s * (1 - 0.25 u) */
	assert_in_range(fx.sl.ms[0], 375, 500);
	llm_reply_release(&r);
	release_all(h, 2);
	fx_close(&fx);
	stub_stop(&s);
	rm_tree(s.dir);
}

static void test_hang_times_out_and_retries(void **state)
{
	struct stub s;
	struct fixture fx;
	struct llm_msg h[2];
	struct llm_reply r;

	(void)state;
	stub_start(&s, DATA "hang.json", NULL, NULL, NULL, NULL);
	fx_config(&fx, &s, LLM_PROFILE_OPENAI);
	fx.cfg.timeout_ms = 500;
	fx.cfg.max_retries = 1;
	fx_open(&fx);
	first_turn(h);
	assert_int_equal(llm_chat(fx.c, h, 2, NULL, 0, NULL, &r), ENG_ETIMEOUT);
	assert_int_equal(r.attempts, 2);
	assert_int_equal(r.error.http_status, 0);
	assert_int_equal(r.error.curl_code, 28);
	assert_int_equal(fx.sl.n, 1);
	assert_non_null(strstr(err_msg(), "2 attempts"));
	assert_int_equal(stub_count(&s), 2);
	llm_reply_release(&r);
	release_all(h, 2);
	fx_close(&fx);
	stub_stop(&s);
	rm_tree(s.dir);
}

static void test_truncated_body_retried(void **state)
{
	struct stub s;
	struct fixture fx;
	struct llm_msg h[2];
	struct llm_reply r;

	(void)state;
	stub_start(&s, DATA "truncate.json", NULL, NULL, NULL, NULL);
	fx_config(&fx, &s, LLM_PROFILE_OPENAI);
	fx.cfg.max_retries = 1;
	fx_open(&fx);
	first_turn(h);
	/* Content-Length promised, connection closed early: CURLE_PARTIAL_FILE */
	assert_int_equal(llm_chat(fx.c, h, 2, NULL, 0, NULL, &r), 0);
	assert_string_equal(r.msg.content, "after truncate");
	assert_int_equal(r.attempts, 2);
	llm_reply_release(&r);
	/* no length, half a JSON body: a parse error, retried */
	assert_int_equal(llm_chat(fx.c, h, 2, NULL, 0, NULL, &r), 0);
	assert_string_equal(r.msg.content, "after truncate_close");
	assert_int_equal(r.attempts, 2);
	llm_reply_release(&r);
	/* twice: the parse error is the result */
	assert_int_equal(llm_chat(fx.c, h, 2, NULL, 0, NULL, &r), ENG_EPARSE);
	assert_int_equal(r.attempts, 2);
	assert_int_equal(r.http_status, 200);
	llm_reply_release(&r);
	assert_int_equal(fx.sl.n, 3);
	release_all(h, 2);
	fx_close(&fx);
	stub_stop(&s);
	rm_tree(s.dir);
}

static void test_reset_retried(void **state)
{
	struct stub s;
	struct fixture fx;
	struct llm_msg h[2];
	struct llm_reply r;

	(void)state;
	stub_start(&s, DATA "reset.json", NULL, NULL, NULL, NULL);
	fx_config(&fx, &s, LLM_PROFILE_OPENAI);
	fx.cfg.max_retries = 1;
	fx_open(&fx);
	first_turn(h);
	assert_int_equal(llm_chat(fx.c, h, 2, NULL, 0, NULL, &r), 0);
	assert_string_equal(r.msg.content, "after reset");
	assert_int_equal(r.attempts, 2);
	llm_reply_release(&r);
	/* reset twice: a transport error, no HTTP status */
	assert_int_equal(llm_chat(fx.c, h, 2, NULL, 0, NULL, &r), ENG_EHTTP);
	assert_int_equal(r.attempts, 2);
	assert_int_equal(r.http_status, 0);
	assert_true(r.error.curl_code == 52 || r.error.curl_code == 56);
	llm_reply_release(&r);
	assert_int_equal(stub_count(&s), 4);
	release_all(h, 2);
	fx_close(&fx);
	stub_stop(&s);
	rm_tree(s.dir);
}

static void test_quota_not_retried(void **state)
{
	struct stub s;
	struct fixture fx;
	struct llm_msg h[2];
	struct llm_reply r;

	(void)state;
	stub_start(&s, DATA "quota.json", NULL, NULL, NULL, NULL);
	fx_config(&fx, &s, LLM_PROFILE_OPENAI);
	fx_open(&fx);
	first_turn(h);
	assert_int_equal(llm_chat(fx.c, h, 2, NULL, 0, NULL, &r), ENG_EHTTP);
	assert_int_equal(r.attempts, 1);
	assert_int_equal(r.error.http_status, 429);
	assert_string_equal(r.error.code, "insufficient_quota");
	assert_int_equal(r.error.quota, 1);
	llm_reply_release(&r);
	/* Gemini's daily quota message, in its array shape */
	assert_int_equal(llm_chat(fx.c, h, 2, NULL, 0, NULL, &r), ENG_EHTTP);
	assert_int_equal(r.attempts, 1);
	assert_string_equal(r.error.type, "RESOURCE_EXHAUSTED");
	assert_int_equal(r.error.quota, 1);
	llm_reply_release(&r);
	assert_int_equal(fx.sl.n, 0);
	assert_int_equal(stub_count(&s), 2);
	release_all(h, 2);
	fx_close(&fx);
	stub_stop(&s);
	rm_tree(s.dir);
}

static void test_retry_hints(void **state)
{
	struct stub s;
	struct fixture fx;
	struct llm_msg h[2];
	struct llm_reply r;

	(void)state;
	stub_start(&s, DATA "retry_hints.json", NULL, NULL, NULL, NULL);
	fx_config(&fx, &s, LLM_PROFILE_OPENAI);
	fx_open(&fx);
	first_turn(h);
	/* retry-after-ms 250, then 503 with x-should-retry: false stops */
	assert_int_equal(llm_chat(fx.c, h, 2, NULL, 0, NULL, &r), ENG_EHTTP);
	assert_int_equal(r.attempts, 2);
	assert_int_equal(r.error.http_status, 503);
	assert_string_equal(r.error.code, "server_is_overloaded");
	assert_int_equal(fx.sl.n, 1);
	assert_int_equal(fx.sl.ms[0], 250);
	llm_reply_release(&r);
	/* Retry-After: 120 is above the 60 s cap: no retry */
	assert_int_equal(llm_chat(fx.c, h, 2, NULL, 0, NULL, &r), ENG_EHTTP);
	assert_int_equal(r.attempts, 1);
	assert_int_equal(r.error.retry_after_ms, 120000);
	llm_reply_release(&r);
	/* Gemini RetryInfo.retryDelay "2s" in the body */
	assert_int_equal(llm_chat(fx.c, h, 2, NULL, 0, NULL, &r), 0);
	assert_string_equal(r.msg.content, "after RetryInfo");
	assert_int_equal(r.attempts, 2);
	assert_int_equal(fx.sl.n, 2);
	assert_int_equal(fx.sl.ms[1], 2000);
	llm_reply_release(&r);
	/* x-should-retry: true makes a 400 retryable */
	assert_int_equal(llm_chat(fx.c, h, 2, NULL, 0, NULL, &r), 0);
	assert_string_equal(r.msg.content, "after x-should-retry");
	assert_int_equal(r.attempts, 2);
	llm_reply_release(&r);
	/* the summed wait cap: 1 s + 1 s > 1.5 s stops after the second attempt */
	fx_close(&fx);
	fx.cfg.max_retry_wait_ms = 1500;
	fx.cfg.max_retries = 5;
	fx_open(&fx);
	fx.sl.n = 0;
	assert_int_equal(llm_chat(fx.c, h, 2, NULL, 0, NULL, &r), ENG_EHTTP);
	assert_int_equal(r.attempts, 2);
	assert_string_equal(r.error.message, "two");
	assert_int_equal(fx.sl.n, 1);
	assert_int_equal(r.retry_wait_ms, 1000);
	llm_reply_release(&r);
	release_all(h, 2);
	fx_close(&fx);
	stub_stop(&s);
	rm_tree(s.dir);
}

static void test_connection_refused_retried(void **state)
{
	struct stub s;
	struct fixture fx;
	struct llm_msg h[2];
	struct llm_reply r;

	(void)state;
	stub_start(&s, DATA "unknown_tool.json", NULL, NULL, NULL, NULL);
	stub_stop(&s);
	fx_config(&fx, &s, LLM_PROFILE_OPENAI);
	fx.cfg.max_retries = 1;
	fx_open(&fx);
	first_turn(h);
	assert_int_equal(llm_chat(fx.c, h, 2, NULL, 0, NULL, &r), ENG_EHTTP);
	assert_int_equal(r.attempts, 2);
	assert_int_equal(r.error.curl_code, 7);
	llm_reply_release(&r);
	release_all(h, 2);
	fx_close(&fx);
	rm_tree(s.dir);
}

static void test_response_too_big(void **state)
{
	struct stub s;
	struct fixture fx;
	struct llm_msg h[2];
	struct llm_reply r;

	(void)state;
	stub_start(&s, DATA "unknown_tool.json", NULL, NULL, NULL, NULL);
	fx_config(&fx, &s, LLM_PROFILE_OPENAI);
	fx.cfg.max_response_bytes = 100;
	fx_open(&fx);
	first_turn(h);
	assert_int_equal(llm_chat(fx.c, h, 2, NULL, 0, NULL, &r), ENG_ETOOBIG);
	assert_int_equal(r.attempts, 1);
	llm_reply_release(&r);
	release_all(h, 2);
	fx_close(&fx);
	stub_stop(&s);
	rm_tree(s.dir);
}

/* ===================== Tests: error shapes ===================== */

static void test_error_shapes_literal(void **state)
{
	static const char gemini[] =
		"[{\"error\":{\"code\":400,\"message\":\"Invalid JSON payload received. Unknown name \\\"web_search_options\\\": Cannot find field.\",\"status\":\"INVALID_ARGUMENT\",\"details\":[{\"@type\":\"type.googleapis.com/google.rpc.BadRequest\",\"fieldViolations\":[{\"description\":\"x\"}]}]}}]";
	static const char vllm[] =
		"{\"error\":{\"message\":\"\\\"auto\\\" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set\",\"type\":\"BadRequestError\",\"param\":null,\"code\":400}}";
	static const char vllm_flat[] =
		"{\"object\":\"error\",\"message\":\"flat one\",\"type\":\"BadRequestError\",\"param\":null,\"code\":400}";
	static const char llamacpp[] =
		"{\"error\":{\"code\":400,\"message\":\"Either \\\"json_schema\\\" or \\\"grammar\\\" can be specified, but not both\",\"type\":\"invalid_request_error\"}}";
	static const char ollama[] =
		"{\"error\":{\"message\":\"model \\\"llama3\\\" not found, try pulling it first\",\"type\":\"not_found_error\",\"param\":null,\"code\":null}}";
	static const char ollama_native[] =
		"{\"error\":\"model \\\"llama3\\\" not found, try pulling it first\"}";
	static const char openai[] =
		"{\"error\":{\"message\":\"Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.\",\"type\":\"invalid_request_error\",\"param\":\"max_tokens\",\"code\":\"unsupported_parameter\"}}";
	static const char gemini_429[] =
		"[{\"error\":{\"code\":429,\"message\":\"Resource has been exhausted (e.g. check quota).\",\"status\":\"RESOURCE_EXHAUSTED\",\"details\":[{\"@type\":\"type.googleapis.com/google.rpc.RetryInfo\",\"retryDelay\":\"36s\"}]}}]";
	static const char html[] = "<html><body>502 Bad Gateway</body></html>";
	struct llm_error e;

	(void)state;
	llm_error_parse(gemini, strlen(gemini), 400, &e);
	assert_int_equal(e.http_status, 400);
	assert_string_equal(e.type, "INVALID_ARGUMENT");
	assert_string_equal(e.code, "400");
	assert_non_null(strstr(e.message, "web_search_options"));
	assert_int_equal(e.retry_after_ms, -1);
	llm_error_parse(vllm, strlen(vllm), 400, &e);
	assert_string_equal(e.type, "BadRequestError");
	assert_string_equal(e.code, "400");
	assert_memory_equal(e.message, "\"auto\" tool choice", 18);
	llm_error_parse(vllm_flat, strlen(vllm_flat), 400, &e);
	assert_string_equal(e.message, "flat one");
	assert_string_equal(e.type, "BadRequestError");
	assert_string_equal(e.code, "400");
	llm_error_parse(llamacpp, strlen(llamacpp), 400, &e);
	assert_string_equal(e.type, "invalid_request_error");
	assert_string_equal(e.code, "400");
	llm_error_parse(ollama, strlen(ollama), 404, &e);
	assert_string_equal(e.type, "not_found_error");
	assert_string_equal(e.code, "");
	assert_string_equal(e.message, "model \"llama3\" not found, try pulling it first");
	llm_error_parse(ollama_native, strlen(ollama_native), 404, &e);
	assert_string_equal(e.message, "model \"llama3\" not found, try pulling it first");
	assert_string_equal(e.type, "");
	llm_error_parse(openai, strlen(openai), 400, &e);
	assert_string_equal(e.code, "unsupported_parameter");
	assert_string_equal(e.param, "max_tokens");
	assert_int_equal(e.quota, 0);
	llm_error_parse(gemini_429, strlen(gemini_429), 429, &e);
	assert_int_equal(e.retry_after_ms, 36000);
	assert_int_equal(e.quota, 0);
	llm_error_parse(html, strlen(html), 502, &e);
	assert_string_equal(e.message, html);
	llm_error_parse(NULL, 0, 503, &e);
	assert_string_equal(e.message, "HTTP 503");
}

static void test_error_shapes_from_stub(void **state)
{
	static const struct {
		int status;
		const char *type, *code;
	} want[] = {
		{ 400, "invalid_request_error", "invalid_value" },
		{ 400, "INVALID_ARGUMENT", "400" },
		{ 400, "BadRequestError", "400" },
		{ 400, "BadRequestError", "400" },
		{ 400, "invalid_request_error", "400" },
		{ 404, "not_found_error", "" },
		{ 404, "", "" },
	};
	struct stub s;
	struct fixture fx;
	struct llm_msg h[2];
	struct llm_reply r;
	size_t i;

	(void)state;
	stub_start(&s, DATA "error_shapes.json", NULL, NULL, NULL, NULL);
	fx_config(&fx, &s, LLM_PROFILE_OPENAI);
	fx_open(&fx);
	first_turn(h);
	for (i = 0; i < ARRAY_SIZE(want); i++) {
		assert_int_equal(llm_chat(fx.c, h, 2, NULL, 0, NULL, &r), ENG_EHTTP);
		assert_int_equal(r.attempts, 1);
		assert_int_equal(r.error.http_status, want[i].status);
		assert_string_equal(r.error.message, "stub: bad request");
		assert_string_equal(r.error.type, want[i].type);
		assert_string_equal(r.error.code, want[i].code);
		llm_reply_release(&r);
	}
	assert_int_equal(fx.sl.n, 0);
	release_all(h, 2);
	fx_close(&fx);
	stub_stop(&s);
	rm_tree(s.dir);
}

/* ===================== Tests: per-profile bodies ===================== */

/* Two turns against a strict stub of the flavour; returns the stub's log. */
static cJSON *profile_run(enum llm_profile p, const char *flavor, const char *model)
{
	struct stub s;
	struct fixture fx;
	struct llm_msg h[6];
	struct llm_reply r;
	struct llm_opts o;
	cJSON *log;
	size_t n;

	stub_start(&s, DATA "profile.json", "--flavor", flavor, NULL, NULL);
	fx_config(&fx, &s, p);
	fx.cfg.model = model;
	fx_open(&fx);
	llm_opts_init(&o);
	o.tool_choice = LLM_CHOICE_NAMED;
	o.tool_name = "query_incidents";
	o.parallel_tool_calls = 1;
	o.extra_json = "{\"top_k\":5}";
	first_turn(h);
	assert_int_equal(llm_chat(fx.c, h, 2, tools, NTOOLS, &o, &r), 0);
	assert_int_equal(r.msg.n_tool_calls, 1);
	n = answer_calls(h, 2, &r, "{\"ok\":true,\"count\":3}");
	llm_reply_release(&r);
	o.tool_choice = LLM_CHOICE_AUTO;
	assert_int_equal(llm_chat(fx.c, h, n, tools, NTOOLS, &o, &r), 0);
	assert_string_equal(r.msg.content, "3 incidents");
	llm_reply_release(&r);
	release_all(h, n);
	fx_close(&fx);
	log = stub_log(&s);
	stub_stop(&s);
	rm_tree(s.dir);
	assert_int_equal(cJSON_GetArraySize(log), 2);
	return log;
}

/* Checks shared by every profile on the second (history) request. */
static void check_history(const cJSON *b)
{
	const cJSON *msgs = jget(b, "messages");
	const cJSON *a = cJSON_GetArrayItem(msgs, 2);
	const cJSON *t = cJSON_GetArrayItem(msgs, 3);

	assert_string_equal(jget(a, "role")->valuestring, "assistant");
	assert_true(cJSON_IsNull(jget(a, "content")));
	assert_string_equal(jget(t, "role")->valuestring, "tool");
	assert_string_equal(jget(t, "name")->valuestring, "query_incidents");
	assert_string_equal(jget(t, "tool_call_id")->valuestring,
			    jget(cJSON_GetArrayItem(jget(a, "tool_calls"), 0), "id")->valuestring);
	assert_null(jget(cJSON_GetArrayItem(jget(a, "tool_calls"), 0), "index"));
}

static void test_profile_openai(void **state)
{
	cJSON *log = profile_run(LLM_PROFILE_OPENAI, "openai", "gpt-4.1-mini");
	const cJSON *b = logged_body(log, 0);
	const cJSON *tc = jget(b, "tool_choice");

	(void)state;
	assert_int_equal(jget(b, "max_completion_tokens")->valueint, 1024);
	assert_null(jget(b, "max_tokens"));
	assert_string_equal(jget(tc, "type")->valuestring, "function");
	assert_string_equal(jget(jget(tc, "function"), "name")->valuestring, "query_incidents");
	assert_true(cJSON_IsTrue(jget(b, "parallel_tool_calls")));
	assert_int_equal(jget(b, "seed")->valueint, 42);
	assert_int_equal(jget(b, "top_k")->valueint, 5);
	assert_true(has_key_anywhere(jget(b, "tools"), "strict"));
	check_history(logged_body(log, 1));
	assert_string_equal(jget(logged_body(log, 1), "tool_choice")->valuestring, "auto");
	cJSON_Delete(log);
}

static void test_profile_ollama(void **state)
{
	cJSON *log = profile_run(LLM_PROFILE_OLLAMA, "ollama", "qwen3:8b");
	const cJSON *b = logged_body(log, 0);

	(void)state;
	assert_int_equal(jget(b, "max_tokens")->valueint, 1024);
	assert_null(jget(b, "max_completion_tokens"));
	assert_null(jget(b, "tool_choice"));
	assert_null(jget(b, "parallel_tool_calls"));
	assert_int_equal(jget(b, "seed")->valueint, 42);
	assert_false(has_key_anywhere(jget(b, "tools"), "strict"));
	check_history(logged_body(log, 1));
	cJSON_Delete(log);
}

static void test_profile_gemini(void **state)
{
	cJSON *log = profile_run(LLM_PROFILE_GEMINI, "gemini", "gemini-3-flash-preview");
	const cJSON *b = logged_body(log, 0);
	const cJSON *q = jget(jget(cJSON_GetArrayItem(jget(b, "tools"), 0), "function"), "parameters");
	const cJSON *fin = jget(jget(cJSON_GetArrayItem(jget(b, "tools"), 2), "function"), "parameters");
	const cJSON *req = jget(q, "required");
	const cJSON *a, *it;
	int has_limit = 0, has_status = 0;

	(void)state;
	assert_int_equal(jget(b, "max_tokens")->valueint, 1024);
	assert_non_null(jget(b, "tool_choice"));
	assert_null(jget(b, "parallel_tool_calls"));
	assert_null(jget(b, "seed"));
	assert_null(jget(b, "top_k"));
	assert_false(has_key_anywhere(jget(b, "tools"), "strict"));
	assert_false(has_key_anywhere(jget(b, "tools"), "additionalProperties"));
	assert_false(has_key_anywhere(jget(b, "tools"), "$schema"));
	assert_false(has_key_anywhere(jget(b, "tools"), "const"));
	assert_string_equal(jget(jget(jget(q, "properties"), "limit"), "type")->valuestring, "integer");
	cJSON_ArrayForEach(it, req) {
		has_limit |= !strcmp(it->valuestring, "limit");
		has_status |= !strcmp(it->valuestring, "status");
	}
	assert_false(has_limit);
	assert_true(has_status);
	assert_string_equal(
		cJSON_GetArrayItem(jget(jget(jget(fin, "properties"), "kind"), "enum"), 0)->valuestring,
		"final");
	b = logged_body(log, 1);
	check_history(b);
	a = cJSON_GetArrayItem(jget(cJSON_GetArrayItem(jget(b, "messages"), 2), "tool_calls"), 0);
	assert_non_null(strstr(jget(jget(jget(a, "extra_content"), "google"), "thought_signature")->valuestring,
			       "-stub-"));
	cJSON_Delete(log);
}

static void test_profile_llamacpp(void **state)
{
	cJSON *log = profile_run(LLM_PROFILE_LLAMACPP, "llamacpp", "qwen2.5-7b-instruct");
	const cJSON *b = logged_body(log, 0);

	(void)state;
	assert_int_equal(jget(b, "max_tokens")->valueint, 1024);
	assert_string_equal(jget(b, "tool_choice")->valuestring, "required");
	assert_true(cJSON_IsTrue(jget(b, "parallel_tool_calls")));
	assert_false(has_key_anywhere(jget(b, "tools"), "strict"));
	check_history(logged_body(log, 1));
	cJSON_Delete(log);
}

static void test_profile_vllm(void **state)
{
	cJSON *log = profile_run(LLM_PROFILE_VLLM, "vllm", "Qwen/Qwen3-8B");
	const cJSON *b = logged_body(log, 0);

	(void)state;
	assert_int_equal(jget(b, "max_tokens")->valueint, 1024);
	assert_string_equal(jget(jget(b, "tool_choice"), "type")->valuestring, "function");
	assert_true(cJSON_IsTrue(jget(b, "parallel_tool_calls")));
	assert_true(has_key_anywhere(jget(b, "tools"), "strict"));
	check_history(logged_body(log, 1));
	cJSON_Delete(log);
}

/* The Gemini stub rejects what the openai profile sends: the transform matters. */
static void test_gemini_rejects_openai_body(void **state)
{
	struct stub s;
	struct fixture fx;
	struct llm_msg h[2];
	struct llm_reply r;

	(void)state;
	stub_start(&s, DATA "profile.json", "--flavor", "gemini", NULL, NULL);
	fx_config(&fx, &s, LLM_PROFILE_OPENAI);
	fx_open(&fx);
	first_turn(h);
	assert_int_equal(llm_chat(fx.c, h, 2, tools, NTOOLS, NULL, &r), ENG_EHTTP);
	assert_int_equal(r.error.http_status, 400);
	assert_string_equal(r.error.type, "INVALID_ARGUMENT");
	assert_non_null(strstr(r.error.message, "Unknown name"));
	assert_int_equal(r.attempts, 1);
	llm_reply_release(&r);
	release_all(h, 2);
	fx_close(&fx);
	stub_stop(&s);
	rm_tree(s.dir);
}

static void test_reasoning_model_rules(void **state)
{
	struct stub s;
	struct fixture fx;
	struct llm_msg h[2];
	struct llm_reply r;
	cJSON *log;

	(void)state;
	stub_start(&s, DATA "reasoning.json", NULL, NULL, NULL, NULL);
	/* max_tokens (vLLM profile) is refused by a reasoning model */
	fx_config(&fx, &s, LLM_PROFILE_VLLM);
	fx.cfg.model = "o3-mini";
	fx_open(&fx);
	first_turn(h);
	assert_int_equal(llm_chat(fx.c, h, 2, NULL, 0, NULL, &r), ENG_EHTTP);
	assert_string_equal(r.error.code, "unsupported_parameter");
	assert_string_equal(r.error.param, "max_tokens");
	assert_int_equal(r.attempts, 1);
	llm_reply_release(&r);
	fx_close(&fx);
	/* the openai profile drops temperature and uses max_completion_tokens */
	fx_config(&fx, &s, LLM_PROFILE_OPENAI);
	fx.cfg.model = "o3-mini";
	fx_open(&fx);
	assert_int_equal(llm_chat(fx.c, h, 2, NULL, 0, NULL, &r), 0);
	assert_string_equal(r.msg.content, "reasoning model answer");
	llm_reply_release(&r);
	log = stub_log(&s);
	assert_null(jget(logged_body(log, 1), "temperature"));
	assert_int_equal(jget(logged_body(log, 1), "max_completion_tokens")->valueint, 1024);
	cJSON_Delete(log);
	release_all(h, 2);
	fx_close(&fx);
	stub_stop(&s);
	rm_tree(s.dir);
}

/* ===================== Tests: cache and cassettes ===================== */

struct mem_cache {
	char key[HASH_HEX_LEN + 1];
	char *response;
	char *request;
	int puts, gets;
};

static int mem_get(void *ctx, const char *key, char **response_json, int *status)
{
	struct mem_cache *m = ctx;

	m->gets++;
	if (!m->response || strcmp(m->key, key))
		return ENG_ENOTFOUND;
	*response_json = strdup(m->response);
	*status = 200;
	return *response_json ? 0 : ENG_ENOMEM;
}

static int mem_put(void *ctx, const char *key, const char *request_json,
		   const char *response_json, int status, long latency_ms)
{
	struct mem_cache *m = ctx;

	(void)latency_ms;
	assert_int_equal(status, 200);
	m->puts++;
	snprintf(m->key, sizeof(m->key), "%s", key);
	free(m->response);
	free(m->request);
	m->response = strdup(response_json);
	m->request = strdup(request_json);
	return 0;
}

static void test_cache_hit_makes_no_request(void **state)
{
	struct stub s;
	struct fixture fx;
	struct mem_cache mc = { 0 };
	struct llm_cache_ops ops = { mem_get, mem_put, &mc };
	struct llm_msg h[2];
	struct llm_reply r1, r2;

	(void)state;
	stub_start(&s, DATA "tool_turn.json", NULL, NULL, NULL, NULL);
	fx_config(&fx, &s, LLM_PROFILE_OPENAI);
	fx.cfg.cache = &ops;
	fx_open(&fx);
	first_turn(h);
	assert_int_equal(llm_chat(fx.c, h, 2, tools, NTOOLS, NULL, &r1), 0);
	assert_int_equal(r1.cached, 0);
	assert_int_equal(mc.puts, 1);
	assert_string_equal(mc.key, r1.key);
	assert_non_null(strstr(mc.request, "\"model\":\"gpt-4.1-mini\""));
	assert_int_equal(stub_count(&s), 1);
	assert_int_equal(llm_chat(fx.c, h, 2, tools, NTOOLS, NULL, &r2), 0);
	assert_int_equal(r2.cached, 1);
	assert_int_equal(r2.attempts, 0);
	assert_int_equal(stub_count(&s), 1);
	assert_int_equal(mc.puts, 1);
	assert_string_equal(r1.key, r2.key);
	assert_int_equal(r2.msg.n_tool_calls, 2);
	assert_string_equal(r1.msg.tool_calls[0].id, r2.msg.tool_calls[0].id);
	llm_reply_release(&r1);
	llm_reply_release(&r2);
	free(mc.response);
	free(mc.request);
	release_all(h, 2);
	fx_close(&fx);
	stub_stop(&s);
	rm_tree(s.dir);
}

/*
 * A client told its tools are static builds their text once: each turn
 * sends the bytes and computes the key that building the whole body
 * gives (llm_build_request, llm_cache_key; a client without the flag).
 */
static void test_static_tools_send_the_same(void **state)
{
	struct stub s[2];
	struct fixture fx[2];
	struct mem_cache mc[2];
	struct llm_cache_ops ops[2] = { { mem_get, mem_put, &mc[0] }, { mem_get, mem_put, &mc[1] } };
	struct llm_msg h[2][8];
	struct llm_reply r[2];
	struct llm_opts o;
	size_t n[2] = { 2, 2 };
	cJSON *req;
	char *wire;
	int k, turn;

	(void)state;
	memset(mc, 0, sizeof(mc));
	for (k = 0; k < 2; k++) {
		stub_start(&s[k], DATA "tool_turn.json", NULL, NULL, NULL, NULL);
		fx_config(&fx[k], &s[k], LLM_PROFILE_OPENAI);
		fx[k].cfg.cache = &ops[k];
		fx_open(&fx[k]);
		first_turn(h[k]);
	}
	llm_opts_init(&o);
	for (turn = 0; turn < 2; turn++) {
		for (k = 0; k < 2; k++) {
			o.tools_static = k;
			assert_int_equal(llm_chat(fx[k].c, h[k], n[k], tools, NTOOLS, &o, &r[k]), 0);
			assert_int_equal(mc[k].puts, turn + 1);
		}
		assert_string_equal(mc[1].request, mc[0].request);
		assert_string_equal(r[1].key, r[0].key);
		o.tools_static = 0;
		assert_int_equal(llm_build_request(fx[1].c, h[1], n[1], tools, NTOOLS, &o, &req), 0);
		wire = cJSON_PrintUnformatted(req);
		assert_non_null(wire);
		assert_string_equal(mc[1].request, wire);
		assert_non_null(strstr(wire, "\"name\":\"submit_final_answer\""));
		cJSON_free(wire);
		cJSON_Delete(req);
		for (k = 0; k < 2; k++) {
			n[k] = answer_calls(h[k], n[k], &r[k], "{\"ok\":true}");
			llm_reply_release(&r[k]);
		}
	}
	for (k = 0; k < 2; k++) {
		free(mc[k].response);
		free(mc[k].request);
		release_all(h[k], n[k]);
		fx_close(&fx[k]);
		stub_stop(&s[k]);
		rm_tree(s[k].dir);
	}
}

static void test_cassette_record_replay(void **state)
{
	struct stub s;
	struct fixture fx;
	struct llm_cassette *cas;
	struct llm_msg h[6];
	struct llm_reply r, rec1, rec2;
	char path[400], want[600];
	char *text;
	size_t n;

	(void)state;
	setenv("PROXIMA_TEST_LLM_KEY", "sk-cassette-secret-9931", 1);
	stub_start(&s, DATA "cassette.json", NULL, NULL, NULL, NULL);
	snprintf(path, sizeof(path), "%s/cassette.jsonl", s.dir);
	assert_int_equal(llm_cassette_open(path, LLM_CASSETTE_RECORD, &cas), 0);
	fx_config(&fx, &s, LLM_PROFILE_OPENAI);
	fx.cfg.cassette = cas;
	fx_open(&fx);
	first_turn(h);
	assert_int_equal(llm_chat(fx.c, h, 2, tools, NTOOLS, NULL, &rec1), 0);
	assert_int_equal(rec1.msg.n_tool_calls, 1);
	n = answer_calls(h, 2, &rec1, "{\"utc\":\"12:00\"}");
	assert_int_equal(llm_chat(fx.c, h, n, tools, NTOOLS, NULL, &rec2), 0);
	assert_string_equal(rec2.msg.content, "It is noon.");
	/* a 429 then a 200 for one request: both are recorded */
	assert_int_equal(llm_chat(fx.c, h, 1, NULL, 0, NULL, &r), 0);
	assert_string_equal(r.msg.content, "recorded after a 429");
	assert_int_equal(r.attempts, 2);
	llm_reply_release(&r);
	assert_int_equal(llm_cassette_count(cas), 4);
	fx_close(&fx);
	llm_cassette_free(cas);
	stub_stop(&s);

	text = slurp(path);
	assert_null(strstr(text, "sk-cassette-secret-9931"));
	assert_null(strstr(text, "uthorization"));
	assert_non_null(strstr(text, "\"x-request-id\":\"req_stub_429_0001\""));
	free(text);

	/* replay with the server gone */
	assert_int_equal(llm_cassette_open(path, LLM_CASSETTE_REPLAY, &cas), 0);
	assert_int_equal(llm_cassette_count(cas), 4);
	fx_config(&fx, &s, LLM_PROFILE_OPENAI);
	fx.cfg.cassette = cas;
	fx_open(&fx);
	assert_int_equal(llm_chat(fx.c, h, 2, tools, NTOOLS, NULL, &r), 0);
	assert_int_equal(r.replayed, 1);
	assert_string_equal(r.msg.tool_calls[0].id, h[2].tool_calls[0].id);
	assert_string_equal(r.key, rec1.key);
	llm_reply_release(&r);
	assert_int_equal(llm_chat(fx.c, h, n, tools, NTOOLS, NULL, &r), 0);
	assert_string_equal(r.msg.content, "It is noon.");
	llm_reply_release(&r);
	assert_int_equal(llm_chat(fx.c, h, 1, NULL, 0, NULL, &r), 0);
	assert_string_equal(r.msg.content, "recorded after a 429");
	assert_int_equal(r.attempts, 2);
	assert_int_equal(fx.sl.n, 0);  /* replays do not wait */
	llm_reply_release(&r);
	/* a request the cassette never saw */
	assert_int_equal(llm_chat(fx.c, h, 2, NULL, 0, NULL, &r), ENG_ENOTFOUND);
	snprintf(want, sizeof(want), "cassette %s has no response for request %s", path, r.key);
	assert_string_equal(err_msg(), want);
	llm_reply_release(&r);
	llm_reply_release(&rec1);
	llm_reply_release(&rec2);
	fx_close(&fx);
	llm_cassette_free(cas);
	release_all(h, n);
	rm_tree(s.dir);
	unsetenv("PROXIMA_TEST_LLM_KEY");
}

/* ===================== Tests: concurrency ===================== */

#define THREADS 4
#define PER_THREAD 3

struct worker {
	const char *url;
	int ok;
};

/*
 * `turns` requests asking the time on a client of its own against url:
 * how many came back as want says (its content; NULL: a get_time call).
 */
static int time_chats(const char *url, int turns, const char *want)
{
	struct llm_config cfg;
	struct llm_client *c = NULL;
	struct llm_msg m;
	struct llm_reply r;
	int i, ok = 0;

	llm_config_init(&cfg);
	cfg.base_url = url;
	cfg.model = "stub-model";
	cfg.api_key_env = "PROXIMA_TEST_LLM_KEY";
	if (llm_client_new(&cfg, &c))
		return 0;
	if (llm_msg_text(&m, LLM_ROLE_USER, "what time is it?"))
		goto out;
	for (i = 0; i < turns; i++) {
		if (!llm_chat(c, &m, 1, tools, NTOOLS, NULL, &r) &&
		    (want ? r.msg.content && !strcmp(r.msg.content, want)
			  : r.msg.n_tool_calls == 1 && !strcmp(r.msg.tool_calls[0].name, "get_time")))
			ok++;
		llm_reply_release(&r);
	}
	llm_msg_release(&m);
out:
	llm_client_free(c);
	return ok;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	w->ok = time_chats(w->url, PER_THREAD, NULL);
	return NULL;
}

static void test_concurrent_clients(void **state)
{
	struct stub s;
	struct worker w[THREADS];
	pthread_t th[THREADS];
	int i;

	(void)state;
	stub_start(&s, DATA "loop.json", "--latency-ms", "200", NULL, NULL);
	for (i = 0; i < THREADS; i++) {
		w[i].url = s.url;
		w[i].ok = 0;
		assert_int_equal(pthread_create(&th[i], NULL, worker_main, &w[i]), 0);
	}
	for (i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	for (i = 0; i < THREADS; i++)
		assert_int_equal(w[i].ok, PER_THREAD);
	assert_int_equal(stub_count(&s), THREADS * PER_THREAD);
	stub_stop(&s);
	rm_tree(s.dir);
}

/*
 * Requests from fibers (llm_fibers_run): FIBERS fibers on this one thread,
 * each its own client, two turns each against a stub that answers after
 * FIBER_LATENCY_MS. Each fiber's first request goes out while the others'
 * wait, so all of them reach the stub within one latency of the first
 * (one at a time, each would come a latency after the one before). A
 * fiber that waits a second for a 429's Retry-After lets another finish
 * two turns meanwhile, and then gets its answer.
 */
#define FIBERS 8
#define FIBER_LATENCY_MS 400

struct fiber_job {
	const char *url;
	int turns, ok;
	int *order, *norder, id;
	const char *want;  /* the content the last reply has; NULL: a get_time call */
};

static void fiber_chats(void *arg)
{
	struct fiber_job *j = arg;

	j->ok = time_chats(j->url, j->turns, j->want);
	j->order[(*j->norder)++] = j->id;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void test_fibers_share_thread(void **state)
{
	char latency[16];
	struct stub s;
	struct fiber_job j[FIBERS];
	void *args[FIBERS];
	double t[2 * FIBERS];
	int order[FIBERS], norder = 0, i, n;
	cJSON *log;

	(void)state;
	snprintf(latency, sizeof(latency), "%d", FIBER_LATENCY_MS);
	stub_start(&s, DATA "loop.json", "--latency-ms", latency, NULL, NULL);
	for (i = 0; i < FIBERS; i++) {
		j[i] = (struct fiber_job){ s.url, 2, 0, order, &norder, i, NULL };
		args[i] = &j[i];
	}
	assert_int_equal(llm_fibers_run(FIBERS, fiber_chats, args), 0);
	for (i = 0; i < FIBERS; i++)
		assert_int_equal(j[i].ok, 2);
	log = stub_log(&s);
	n = cJSON_GetArraySize(log);
	assert_int_equal(n, 2 * FIBERS);
	for (i = 0; i < n; i++)
		t[i] = jget(cJSON_GetArrayItem(log, i), "t_ms")->valuedouble;
	qsort(t, (size_t)n, sizeof(t[0]), cmp_double);
	/* the first turns all arrived before the first answer went out */
	assert_true(t[FIBERS - 1] - t[0] < FIBER_LATENCY_MS);
	assert_true(t[FIBERS] - t[0] >= FIBER_LATENCY_MS - 1);
	cJSON_Delete(log);
	stub_stop(&s);
	rm_tree(s.dir);
}

static void test_fiber_retry_sleeps_alone(void **state)
{
	struct stub slow, fast;
	struct fiber_job j[2];
	void *args[2] = { &j[0], &j[1] };
	int order[2], norder = 0;

	(void)state;
	stub_start(&slow, DATA "retry_429.json", NULL, NULL, NULL, NULL);
	stub_start(&fast, DATA "loop.json", "--latency-ms", "100", NULL, NULL);
	/* the 429 asks for a second's wait; the other's two turns take 0.2 s */
	j[0] = (struct fiber_job){ slow.url, 1, 0, order, &norder, 0, "after 429" };
	j[1] = (struct fiber_job){ fast.url, 2, 0, order, &norder, 1, NULL };
	assert_int_equal(llm_fibers_run(2, fiber_chats, args), 0);
	assert_int_equal(j[0].ok, 1);
	assert_int_equal(j[1].ok, 2);
	assert_int_equal(norder, 2);
	assert_int_equal(order[0], 1);
	assert_int_equal(order[1], 0);
	assert_int_equal(stub_count(&slow), 2);
	stub_stop(&slow);
	stub_stop(&fast);
	rm_tree(slow.dir);
	rm_tree(fast.dir);
}

/* ===================== Tests: helpers ===================== */

/* SHA-256 against the FIPS 180-2 examples, from threads at once (the digest is fetched once). */
static void *sha_worker(void *arg)
{
	static const char abc_want[] =
		"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
	static const char two_want[] =
		"248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1";
	static const char two[] = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	char hex[HASH_HEX_LEN + 1];
	int *bad = arg, i;

	for (i = 0; i < 200; i++) {
		*bad += hash_hex("abc", 3, hex) || strcmp(hex, abc_want);
		*bad += hash_hex(two, strlen(two), hex) || strcmp(hex, two_want);
	}
	return NULL;
}

static void test_sha256_known_answers(void **state)
{
	pthread_t th[4];
	int bad[4] = { 0 }, k;
	char hex[HASH_HEX_LEN + 1];

	(void)state;
	for (k = 0; k < 4; k++)
		assert_int_equal(pthread_create(&th[k], NULL, sha_worker, &bad[k]), 0);
	for (k = 0; k < 4; k++) {
		pthread_join(th[k], NULL);
		assert_int_equal(bad[k], 0);
	}
	assert_int_equal(hash_hex("", 0, hex), 0);
	assert_string_equal(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

static void test_cache_key_canonical(void **state)
{
	static const char canon[] = "{\"a\":{\"x\":\"q\\n\",\"y\":[1,2.5]},\"b\":1}";
	cJSON *b1 = cJSON_Parse("{\"b\":1,\"a\":{\"y\":[1,2.5],\"x\":\"q\\n\"},\"user\":\"u1\"}");
	cJSON *b2 = cJSON_Parse(" { \"a\" : {\"x\":\"q\\n\", \"y\":[1, 2.5]}, \"b\":1,"
				" \"metadata\":{\"run\":3}, \"user\":\"u2\"}");
	cJSON *b3 = cJSON_Parse("{\"b\":2,\"a\":{\"y\":[1,2.5],\"x\":\"q\\n\"}}");
	char k1[HASH_HEX_LEN + 1], k2[HASH_HEX_LEN + 1], k3[HASH_HEX_LEN + 1];
	char want[HASH_HEX_LEN + 1];
	char input[128];
	size_t len;
	struct buf b;

	(void)state;
	assert_int_equal(llm_cache_key("openai", "/v1/chat/completions", b1, k1), 0);
	assert_int_equal(llm_cache_key("openai", "/v1/chat/completions", b2, k2), 0);
	assert_int_equal(llm_cache_key("openai", "/v1/chat/completions", b3, k3), 0);
	assert_string_equal(k1, k2);
	assert_string_not_equal(k1, k3);
	/* independent: SHA-256 of the hand-written canonical input */
	len = (size_t)snprintf(input, sizeof(input), "openai%c/v1/chat/completions%c%s", 0, 0, canon);
	assert_int_equal(hash_hex(input, len, want), 0);
	assert_string_equal(k1, want);
	assert_int_equal(llm_cache_key("gemini", "/v1/chat/completions", b1, k3), 0);
	assert_string_not_equal(k1, k3);
	buf_init(&b, 4096);
	assert_int_equal(llm_json_canonical(b3, &b), 0);
	assert_string_equal(buf_str(&b), "{\"a\":{\"x\":\"q\\n\",\"y\":[1,2.5]},\"b\":2}");
	buf_release(&b);
	cJSON_Delete(b1);
	cJSON_Delete(b2);
	cJSON_Delete(b3);
}

static void test_backoff_and_retry_after(void **state)
{
	long ms = -1;
	time_t now = 1445412450; /* Wed, 21 Oct 2015 07:27:30 GMT */

	(void)state;
	assert_int_equal(llm_backoff_ms(0, 8000, 0), 500);
	assert_int_equal(llm_backoff_ms(1, 8000, 0), 1000);
	assert_int_equal(llm_backoff_ms(3, 8000, 0), 4000);
	assert_int_equal(llm_backoff_ms(4, 8000, 0), 8000);
	assert_int_equal(llm_backoff_ms(30, 8000, 0), 8000);
	assert_int_equal(llm_backoff_ms(0, 8000, 0.5), 437);
	assert_int_equal(llm_backoff_ms(2, 8000, 0.999999), 1500);
	assert_int_equal(llm_backoff_ms(2, 1000, 0), 1000);
	assert_int_equal(llm_parse_retry_after("1", now, &ms), 0);
	assert_int_equal(ms, 1000);
	assert_int_equal(llm_parse_retry_after(" 1.5 ", now, &ms), 0);
	assert_int_equal(ms, 1500);
	assert_int_equal(llm_parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now, &ms), 0);
	assert_int_equal(ms, 30000);
	assert_int_equal(llm_parse_retry_after("Wed, 21 Oct 2015 07:00:00 GMT", now, &ms), 0);
	assert_int_equal(ms, 0);
	assert_int_equal(llm_parse_retry_after("soon", now, &ms), ENG_EINVAL);
	assert_int_equal(llm_parse_retry_after("-3", now, &ms), ENG_EINVAL);
	assert_int_equal(llm_parse_duration("2s", &ms), 0);
	assert_int_equal(ms, 2000);
	assert_int_equal(llm_parse_duration("1.5s", &ms), 0);
	assert_int_equal(ms, 1500);
	assert_int_equal(llm_parse_duration("250ms", &ms), 0);
	assert_int_equal(ms, 250);
	assert_int_equal(llm_parse_duration("1m30s", &ms), 0);
	assert_int_equal(ms, 90000);
	assert_int_equal(llm_parse_duration("2 s", &ms), ENG_EINVAL);
}

/*
 * Numbers from a server past the range of long saturate instead of going
 * through an undefined cast (found by tests/fuzz/fuzz_llm_reply.c under
 * clang's UBSan; on x86-64 the old cast gave LONG_MIN for all of them).
 */
static void test_huge_numbers_saturate(void **state)
{
	static const char body[] =
		"{\"choices\":[{\"message\":{\"role\":\"assistant\",\"content\":\"ok\"}}],"
		"\"usage\":{\"prompt_tokens\":-1e300,\"completion_tokens\":12,"
		"\"total_tokens\":3.4e126}}";
	static const char gemini[] =
		"[{\"error\":{\"code\":429,\"message\":\"slow down\",\"status\":"
		"\"RESOURCE_EXHAUSTED\",\"details\":[{\"@type\":"
		"\"type.googleapis.com/google.rpc.RetryInfo\",\"retryDelay\":\"1e300s\"}]}}]";
	struct llm_reply r;
	struct llm_error e;
	long ms = -1;

	(void)state;
	llm_reply_init(&r);
	assert_int_equal(llm_reply_parse(body, sizeof(body) - 1, NULL, 0, 0, NULL, &r), 0);
	assert_true(r.usage.present);
	assert_true(r.usage.total_tokens == LONG_MAX);
	assert_true(r.usage.prompt_tokens == LONG_MIN);
	assert_int_equal(r.usage.completion_tokens, 12);
	llm_reply_release(&r);

	llm_error_parse(gemini, sizeof(gemini) - 1, 429, &e);
	assert_true(e.retry_after_ms == LONG_MAX);
	assert_string_equal(e.message, "slow down");

	assert_int_equal(llm_parse_duration("1e300s", &ms), 0);
	assert_true(ms == LONG_MAX);
	assert_int_equal(llm_parse_duration("infs", &ms), 0);
	assert_true(ms == LONG_MAX);
	assert_int_equal(llm_parse_duration("nans", &ms), ENG_EINVAL);
	assert_int_equal(llm_parse_retry_after("1e300", 0, &ms), 0);
	assert_true(ms == LONG_MAX);
	assert_int_equal(llm_parse_retry_after("nan", 0, &ms), ENG_EINVAL);
}

static void test_gemini_schema_transform(void **state)
{
	cJSON *s = cJSON_Parse(
		"{\"$schema\":\"x\",\"type\":\"object\",\"additionalProperties\":false,"
		"\"properties\":{\"a\":{\"type\":[\"null\",\"string\"]},"
		"\"b\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"additionalProperties\":false,"
		"\"properties\":{\"c\":{\"const\":\"k\"},\"d\":{\"const\":3}},\"required\":[\"c\",\"d\"]}},"
		"\"e\":{\"anyOf\":[{\"type\":\"string\",\"propertyNames\":{}},{\"type\":\"integer\"}]}},"
		"\"required\":[\"a\",\"b\"]}");
	struct buf b;

	(void)state;
	assert_non_null(s);
	assert_int_equal(llm_gemini_schema(s), 0);
	buf_init(&b, 4096);
	assert_int_equal(llm_json_canonical(s, &b), 0);
	assert_string_equal(buf_str(&b),
			    "{\"properties\":{\"a\":{\"type\":\"string\"},"
			    "\"b\":{\"items\":{\"properties\":{\"c\":{\"enum\":[\"k\"]},\"d\":{}},"
			    "\"required\":[\"c\",\"d\"],\"type\":\"object\"},\"type\":\"array\"},"
			    "\"e\":{\"anyOf\":[{\"type\":\"string\"},{\"type\":\"integer\"}]}},"
			    "\"required\":[\"b\"],\"type\":\"object\"}");
	buf_release(&b);
	cJSON_Delete(s);
}

static void test_build_request_rules(void **state)
{
	struct fixture fx;
	struct llm_msg m[3];
	struct llm_tool bad = { "bad name!", NULL, NULL, NULL, 0 };
	cJSON *body, *raw;
	char *text;

	(void)state;
	fx_config(&fx, NULL, LLM_PROFILE_OPENAI);
	fx.cfg.base_url = "https://api.openai.com/v1/";
	fx_open(&fx);
	assert_int_equal(llm_client_profile(fx.c), LLM_PROFILE_OPENAI);
	assert_int_equal(llm_msg_text(&m[0], LLM_ROLE_USER, "hi"), 0);
	llm_msg_init(&m[1], LLM_ROLE_ASSISTANT);         /* no text, no calls */
	assert_int_equal(llm_build_request(fx.c, m, 2, NULL, 0, NULL, &body), 0);
	text = cJSON_PrintUnformatted(body);
	assert_string_equal(text,
			    "{\"model\":\"gpt-4.1-mini\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"},"
			    "{\"role\":\"assistant\",\"content\":\"\"}],\"temperature\":0,\"seed\":42,"
			    "\"max_completion_tokens\":1024}");
	cJSON_free(text);
	cJSON_Delete(body);
	assert_int_equal(llm_build_request(fx.c, m, 1, &bad, 1, NULL, &body), ENG_EINVAL);
	assert_non_null(strstr(err_msg(), "bad name!"));
	llm_msg_init(&m[2], LLM_ROLE_TOOL);
	assert_int_equal(llm_build_request(fx.c, m, 3, NULL, 0, NULL, &body), ENG_EINVAL);
	assert_int_equal(llm_msg_tool_result(&m[2], "call_9", NULL, "{}"), 0);
	assert_int_equal(llm_build_request(fx.c, m, 3, NULL, 0, NULL, &body), ENG_EINVAL);
	assert_non_null(strstr(err_msg(), "call_9"));
	release_all(m, 3);
	fx_close(&fx);

	/* history form: raw extras echoed, index dropped, arguments re-serialised */
	raw = cJSON_Parse("{\"id\":\"old\",\"index\":0,\"type\":\"function\","
			  "\"function\":{\"name\":\"get_time\",\"arguments\":\"{ }\"},"
			  "\"extra_content\":{\"google\":{\"thought_signature\":\"sig1\"}}}");
	assert_int_equal(llm_msg_text(&m[0], LLM_ROLE_USER, "time?"), 0);
	llm_msg_init(&m[1], LLM_ROLE_ASSISTANT);
	assert_int_equal(llm_msg_add_tool_call(&m[1], "c1", "get_time", "{ \"tz\" : \"UTC\" }", raw), 0);
	assert_int_equal(llm_msg_add_tool_call(&m[1], "c2", "get_time", "not json", NULL), ENG_EINVAL);
	assert_int_equal(llm_msg_tool_result(&m[2], "c1", NULL, "{\"utc\":\"12:00\"}"), 0);
	assert_int_equal(llm_msgs_to_json(m, 3, &body), 0);
	text = cJSON_PrintUnformatted(body);
	assert_string_equal(text,
			    "[{\"role\":\"user\",\"content\":\"time?\"},"
			    "{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"c1\","
			    "\"type\":\"function\",\"function\":{\"name\":\"get_time\",\"arguments\":\"{\\\"tz\\\":\\\"UTC\\\"}\"},"
			    "\"extra_content\":{\"google\":{\"thought_signature\":\"sig1\"}}}]},"
			    "{\"role\":\"tool\",\"tool_call_id\":\"c1\",\"name\":\"get_time\","
			    "\"content\":\"{\\\"utc\\\":\\\"12:00\\\"}\"}]");
	cJSON_free(text);
	cJSON_Delete(body);
	cJSON_Delete(raw);
	release_all(m, 3);
	assert_int_equal(llm_profile_detect("https://generativelanguage.googleapis.com/v1beta/openai/"),
			 LLM_PROFILE_GEMINI);
	assert_int_equal(llm_profile_detect("http://localhost:11434/v1/"), LLM_PROFILE_OLLAMA);
	assert_int_equal(llm_profile_detect("http://gpu3:8080/v1"), LLM_PROFILE_LLAMACPP);
	assert_int_equal(llm_profile_detect("http://gpu3:8000/v1"), LLM_PROFILE_VLLM);
	assert_int_equal(llm_profile_detect("https://api.openai.com/v1"), LLM_PROFILE_OPENAI);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tool_call_turn),
		cmocka_unit_test(test_several_calls_one_turn),
		cmocka_unit_test(test_argument_shapes),
		cmocka_unit_test(test_unknown_tool_passed_up),
		cmocka_unit_test(test_base_url_forms),
		cmocka_unit_test(test_missing_ids_synthesised),
		cmocka_unit_test(test_salvage_from_content),
		cmocka_unit_test(test_retry_429_retry_after),
		cmocka_unit_test(test_retry_500_backoff),
		cmocka_unit_test(test_hang_times_out_and_retries),
		cmocka_unit_test(test_truncated_body_retried),
		cmocka_unit_test(test_reset_retried),
		cmocka_unit_test(test_quota_not_retried),
		cmocka_unit_test(test_retry_hints),
		cmocka_unit_test(test_connection_refused_retried),
		cmocka_unit_test(test_response_too_big),
		cmocka_unit_test(test_error_shapes_literal),
		cmocka_unit_test(test_error_shapes_from_stub),
		cmocka_unit_test(test_profile_openai),
		cmocka_unit_test(test_profile_ollama),
		cmocka_unit_test(test_profile_gemini),
		cmocka_unit_test(test_profile_llamacpp),
		cmocka_unit_test(test_profile_vllm),
		cmocka_unit_test(test_gemini_rejects_openai_body),
		cmocka_unit_test(test_reasoning_model_rules),
		cmocka_unit_test(test_cache_hit_makes_no_request),
		cmocka_unit_test(test_static_tools_send_the_same),
		cmocka_unit_test(test_cassette_record_replay),
		cmocka_unit_test(test_concurrent_clients),
		cmocka_unit_test(test_fibers_share_thread),
		cmocka_unit_test(test_fiber_retry_sleeps_alone),
		cmocka_unit_test(test_cache_key_canonical),
		cmocka_unit_test(test_sha256_known_answers),
		cmocka_unit_test(test_backoff_and_retry_after),
		cmocka_unit_test(test_huge_numbers_saturate),
		cmocka_unit_test(test_gemini_schema_transform),
		cmocka_unit_test(test_build_request_rules),
	};
	int rc;

	if (llm_global_init())
		return 1;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	llm_global_cleanup();
	return rc;
}
