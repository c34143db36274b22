/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for engine/task/answer.h: arbitrary text parsed as an option
 * of every answer kind (and used as an object name), and read as a stored
 * answer by ans_from_json(). A parsed answer must render and its JSON form must
 * read back equal. For the kinds without free-text names (head turns and
 * navigation), the rendered text must also parse back to an equal answer
 * (ans_parse() reads what ans_render() writes); names may hold any words,
 * including the parser's own keywords, so the other kinds are not held to
 * that.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "answer.h"
#include "buf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* True for the kinds whose value holds object names or verbs. */
static int named(enum ans_kind k)
{
	return k == ANS_GAZE_APPROX || k == ANS_GAZE_RELATIVE ||
	       k == ANS_INTERACT_APPROX || k == ANS_INTERACT_RELATIVE;
}

static void round_trip(const struct answer *a)
{
	struct answer b;
	struct buf out;
	cJSON *j;

	buf_init(&out, ANS_TEXT_MAX * 4);
	if (ans_render(a, &out))
		abort(); /* a parsed answer is canonical and valid */
	if (!named(a->kind) &&
	    (ans_parse(a->kind, buf_str(&out), NULL, &b) || !ans_equal(a, &b)))
		abort(); /* the rendered text reads back as the same value */
	buf_release(&out);
	j = ans_to_json(a);
	if (!j)
		abort();
	if (ans_from_json(j, &b) || !ans_equal(a, &b))
		abort(); /* the JSON form reads back as the same value */
	cJSON_Delete(j);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct answer a;
	char *text;
	int k;

	if (size > 4096)
		return 0;
	text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	{
		/* the text as an object instance name, alone and beside itself */
		const char *others[2] = { text, "mug_1" };
		char name[ANS_NAME_MAX];

		(void)ans_display_name(text, NULL, 0, name, sizeof(name));
		(void)ans_display_name(text, others, 2, name, sizeof(name));
		(void)ans_name_equal(text, "the mug");
	}
	for (k = 0; k < ANS_NKIND; k++) {
		if (ans_parse((enum ans_kind)k, text, NULL, &a))
			continue;
		if (a.kind != (enum ans_kind)k)
			abort();
		round_trip(&a);
	}
	/* the text as a stored answer (ans_to_json's form) */
	{
		cJSON *j = cJSON_ParseWithLength(text, size);

		if (j && !ans_from_json(j, &a))
			round_trip(&a);
		cJSON_Delete(j);
	}
	free(text);
	return 0;
}
