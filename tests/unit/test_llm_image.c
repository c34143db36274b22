/* SPDX-License-Identifier: MIT */
/*
 * Image parts in user messages (llm_msg_add_image / llm_msg_add_text):
 * the request body holds them in the order they were added, as Chat
 * Completions image_url data URLs whose base64 is checked against values
 * worked out by hand (RFC 4648's examples: "Man" -> TWFu, "Ma" -> TWE=,
 * "M" -> TQ==); plain text becomes the first part; copies and errors.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "err.h"
#include "llm.h"

static struct llm_client *client(void)
{
	struct llm_config cfg;
	struct llm_client *c = NULL;

	llm_config_init(&cfg);
	cfg.base_url = "http://127.0.0.1:9/v1";
	cfg.model = "vision-model";
	assert_int_equal(llm_client_new(&cfg, &c), 0);
	return c;
}

/* The body's messages[i].content. */
static const cJSON *content_of(const cJSON *body, int i)
{
	return cJSON_GetObjectItemCaseSensitive(
		cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(body, "messages"), i), "content");
}

static const char *part_url(const cJSON *part)
{
	return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(part, "image_url"), "url"));
}

static void test_images_in_order(void **state)
{
	static const unsigned char jpeg[] = { 0xff, 0xd8, 0xff, 0xe0 };
	struct llm_client *c = client();
	struct llm_msg m[2];
	cJSON *body = NULL;
	const cJSON *parts;

	(void)state;
	assert_int_equal(llm_msg_text(&m[0], LLM_ROLE_SYSTEM, "You see frames."), 0);
	llm_msg_init(&m[1], LLM_ROLE_USER);
	/* EgoProx's order: the frames, then the prompt text */
	assert_int_equal(llm_msg_add_image(&m[1], "image/jpeg", jpeg, sizeof(jpeg)), 0);
	assert_int_equal(llm_msg_add_image(&m[1], "image/png", "Man", 3), 0);
	assert_int_equal(llm_msg_add_image(&m[1], "image/jpeg", "Ma", 2), 0);
	assert_int_equal(llm_msg_add_image(&m[1], "image/jpeg", "M", 1), 0);
	assert_int_equal(llm_msg_add_text(&m[1], "Which way? The correct answer is <X>."), 0);
	assert_int_equal(llm_build_request(c, m, 2, NULL, 0, NULL, &body), 0);
	assert_string_equal(cJSON_GetStringValue(content_of(body, 0)), "You see frames.");
	parts = content_of(body, 1);
	assert_int_equal(cJSON_GetArraySize(parts), 5);
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
		cJSON_GetArrayItem(parts, 0), "type")), "image_url");
	/* FF D8 FF E0: 111111 111101 100011 111111 | 111000 00(0000) -> /9j/ 4A== */
	assert_string_equal(part_url(cJSON_GetArrayItem(parts, 0)), "data:image/jpeg;base64,/9j/4A==");
	assert_string_equal(part_url(cJSON_GetArrayItem(parts, 1)), "data:image/png;base64,TWFu");
	assert_string_equal(part_url(cJSON_GetArrayItem(parts, 2)), "data:image/jpeg;base64,TWE=");
	assert_string_equal(part_url(cJSON_GetArrayItem(parts, 3)), "data:image/jpeg;base64,TQ==");
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
		cJSON_GetArrayItem(parts, 4), "text")), "Which way? The correct answer is <X>.");
	cJSON_Delete(body);
	llm_msg_release(&m[0]);
	llm_msg_release(&m[1]);
	llm_client_free(c);
}

static void test_text_first_and_copy(void **state)
{
	struct llm_client *c = client();
	struct llm_msg m, copy;
	cJSON *body = NULL;
	const cJSON *parts;

	(void)state;
	/* text set as plain content becomes the first part; content is then unset */
	assert_int_equal(llm_msg_text(&m, LLM_ROLE_USER, "Look:"), 0);
	assert_int_equal(llm_msg_add_image(&m, "image/jpeg", "Man", 3), 0);
	assert_null(m.content);
	assert_int_equal(llm_msg_copy(&copy, &m), 0);
	llm_msg_release(&m);
	assert_int_equal(llm_build_request(c, &copy, 1, NULL, 0, NULL, &body), 0);
	parts = content_of(body, 0);
	assert_int_equal(cJSON_GetArraySize(parts), 2);
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
		cJSON_GetArrayItem(parts, 0), "text")), "Look:");
	assert_string_equal(part_url(cJSON_GetArrayItem(parts, 1)), "data:image/jpeg;base64,TWFu");
	cJSON_Delete(body);
	llm_msg_release(&copy);
	llm_client_free(c);
}

static void test_errors(void **state)
{
	struct llm_msg m;

	(void)state;
	llm_msg_init(&m, LLM_ROLE_SYSTEM);
	assert_int_equal(llm_msg_add_image(&m, "image/jpeg", "M", 1), ENG_EINVAL);
	assert_int_equal(llm_msg_add_text(&m, "x"), ENG_EINVAL);
	llm_msg_init(&m, LLM_ROLE_USER);
	assert_int_equal(llm_msg_add_image(&m, "text/plain", "M", 1), ENG_EINVAL);
	assert_int_equal(llm_msg_add_image(&m, "image/", "M", 1), ENG_EINVAL);
	assert_int_equal(llm_msg_add_image(&m, "image/jpeg;x", "M", 1), ENG_EINVAL);
	assert_int_equal(llm_msg_add_image(&m, "image/jpeg", "M", 0), ENG_EINVAL);
	assert_int_equal(llm_msg_add_image(&m, "image/jpeg", NULL, 1), ENG_EINVAL);
	assert_null(m.parts);
	llm_msg_release(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_images_in_order),
		cmocka_unit_test(test_text_first_and_copy),
		cmocka_unit_test(test_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
