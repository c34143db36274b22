/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for engine/llm/llm.h: arbitrary bodies through
 * llm_reply_parse() (with and without tool-call salvage) and
 * llm_error_parse(), and short texts through llm_parse_retry_after() and
 * llm_parse_duration(). Every string the parsers fill is then read to its end,
 * and a parsed message is deep-copied and moved as history does.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "llm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct llm_tool tools[] = {
	{ "plan_path", "plan a path", NULL,
	  "{\"type\":\"object\",\"properties\":{\"t\":{\"type\":\"number\"}}}", 0 },
	{ "submit_qa", NULL, NULL, "{\"type\":\"object\"}", 1 },
};

static void touch(const char *s)
{
	if (s)
		(void)strlen(s);
}

static void check_reply(const struct llm_reply *r)
{
	size_t i;

	touch(r->msg.content);
	touch(r->finish_reason);
	touch(r->id);
	touch(r->model);
	touch(r->system_fingerprint);
	touch(r->refusal);
	touch(r->reasoning);
	for (i = 0; i < r->msg.n_tool_calls; i++) {
		const struct llm_tool_call *tc = &r->msg.tool_calls[i];
		cJSON *args;

		if (!tc->id || !tc->arguments_json)
			abort(); /* promised by llm.h once parsed */
		touch(tc->name);
		touch(tc->arguments_raw);
		touch(tc->arguments_error);
		args = cJSON_Parse(tc->arguments_json);
		if (!args)
			abort(); /* arguments_json is always valid JSON */
		cJSON_Delete(args);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *body = (const char *)data;
	struct llm_reply r;
	struct llm_error e;
	unsigned long counter = 0;
	int salvage;

	for (salvage = 0; salvage <= 1; salvage++) {
		llm_reply_init(&r);
		if (!llm_reply_parse(body, size, tools, sizeof(tools) / sizeof(tools[0]),
				     salvage, &counter, &r)) {
			struct llm_msg m, copy;

			check_reply(&r);
			/* the parsed message goes into history: copied and moved */
			llm_reply_take_msg(&r, &m);
			if (!llm_msg_copy(&copy, &m))
				llm_msg_release(&copy);
			llm_msg_release(&m);
		}
		llm_reply_release(&r);
	}
	llm_reply_init(&r);
	(void)llm_reply_parse(body, size, NULL, 0, 1, NULL, &r);
	llm_reply_release(&r);

	/* the text as a Retry-After header and as a protobuf duration */
	if (size < 256) {
		char text[256];
		long ms;

		memcpy(text, data, size);
		text[size] = '\0';
		if (!llm_parse_retry_after(text, 1445412450, &ms) && ms < 0)
			abort(); /* promised: *ms >= 0 */
		(void)llm_parse_duration(text, &ms);
	}

	llm_error_parse(body, size, 429, &e);
	if (memchr(e.type, '\0', sizeof(e.type)) == NULL ||
	    memchr(e.code, '\0', sizeof(e.code)) == NULL ||
	    memchr(e.param, '\0', sizeof(e.param)) == NULL ||
	    memchr(e.message, '\0', sizeof(e.message)) == NULL)
		abort(); /* every field is a terminated string */
	return 0;
}
