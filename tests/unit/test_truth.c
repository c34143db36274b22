/* SPDX-License-Identifier: MIT */
/*
 * engine/task/truth.c on hand-made recordings (tests/unit/tools2_fixture.h):
 * the submitted clip and target give the truth computed by hand (head turn
 * and navigation yaws and lengths of a camera turning at 11 deg/s, the
 * displacement to a cup picked up at 12 s), every option parses back and
 * keeps the margins of docs/design.md section 4 against the key, and bad
 * submissions are refused with the right reason code.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "answer.h"
#include "qc.h"
#include "registry.h"
#include "tools2_fixture.h"
#include "truth.h"

/* The camera turns left at 11 deg/s from heading 0; a box 3 m along +X is last seen at 4 s. */
static struct recording *turning(void)
{
	struct recording *r = fx_new();
	vec3 p = { 0.03f, 0.02f, 1.6f };

	fx_traj(r, 30 * FX_S, FX_S / 10, p, 0, 11);
	fx_box(r, "box", 3.03f, 0.02f, 1.6f, 0.1f, 0.1f, 0.1f, 0);
	assert_int_equal(fx_finish(r), 0);
	return r;
}

/* A still camera facing +X; a cup on a table is picked up at 12 s (right hand). */
static struct recording *kitchen(void)
{
	static const int starts[10] = { 1, 3, 5, 9, 10, 12, 14, 16, 18, 20 };
	struct recording *r = fx_new();
	vec3 p = { 0, 0, 1.6f }, pos[301];
	int64_t times[301];
	size_t cup, fridge;
	int i;

	fx_traj(r, 30 * FX_S, FX_S / 10, p, 0, 0);
	fx_box(r, "table", 2, 0.5f, 0.4f, 0.5f, 0.5f, 0.4f, 0);
	fridge = fx_box(r, "fridge", 3, -2, 1.0f, 0.4f, 0.4f, 1.0f, 0);
	cup = fx_box(r, "cup", 2, 0.5f, 0.85f, 0.05f, 0.05f, 0.05f, 0);
	for (i = 0; i <= 300; i++) {
		double t = i / 10.0, a = t <= 12 ? 0 : t >= 13 ? 1 : t - 12;

		times[i] = (int64_t)i * FX_S / 10;
		pos[i][0] = 2;
		pos[i][1] = (float)(0.5 - a);
		pos[i][2] = 0.85f;
	}
	fx_dynamic(r, cup, times, pos, 301);
	for (i = 0; i < 10; i++)
		fx_action(r, starts[i] * FX_S, starts[i] * FX_S + FX_S / 2,
			  i == 5 ? "pick up" : i == 7 ? "open" : "step",
			  i == 5 ? (long)cup : i == 7 ? (long)fridge : -1, "breakfast");
	assert_int_equal(fx_finish(r), 0);
	return r;
}

/* A submit_qa argument object. */
static cJSON *submit(const char *subtask, const char *metric, int64_t t, const char *target)
{
	cJSON *a = cJSON_CreateObject();

	cJSON_AddStringToObject(a, "subtask", subtask);
	cJSON_AddStringToObject(a, "metric", metric);
	cJSON_AddNumberToObject(a, "t_ns", (double)t);
	cJSON_AddStringToObject(a, "target", target);
	cJSON_AddNumberToObject(a, "event_ns", 0);
	cJSON_AddStringToObject(a, "question", "Where?");
	return a;
}

/* Builds the QA; returns truth_build's code, the reason in code. */
static int build(const struct recording *r, cJSON *args, struct truth *out, char *code)
{
	struct truth_params p;
	struct tool_ctx *ctx = NULL;
	int rc;

	truth_defaults(&p);
	assert_int_equal(tool_ctx_new(r, &ctx), 0);
	rc = truth_build(ctx, r->id, args, &p, out, code, 48);
	tool_ctx_free(ctx);
	cJSON_Delete(args);
	return rc;
}

static cJSON *field(const char *json, const char *key)
{
	cJSON *d = cJSON_Parse(json), *v;

	assert_non_null(d);
	v = cJSON_DetachItemFromObjectCaseSensitive(d, key);
	cJSON_Delete(d);
	assert_non_null(v);
	return v;
}

/* Every option parses as the key's kind and is a valid negative of the key. */
static void check_options(const struct truth *t, enum ans_kind kind)
{
	cJSON *opts = cJSON_Parse(t->options_json), *it;
	struct answer key, o;
	struct qc_params qp;
	int i = 0;

	qc_defaults(&qp);
	assert_non_null(opts);
	assert_int_equal(cJSON_GetArraySize(opts), qp.n_options);
	assert_true(t->answer_index >= 0 && t->answer_index < qp.n_options);
	assert_int_equal(ans_parse(kind, cJSON_GetArrayItem(opts, t->answer_index)->valuestring,
				   NULL, &key), 0);
	cJSON_ArrayForEach(it, opts) {
		assert_int_equal(ans_parse(kind, it->valuestring, NULL, &o), 0);
		if (i++ != t->answer_index)
			assert_true(qc_distinct(&key, &o, &qp));
	}
	cJSON_Delete(opts);
}

static void test_head_turn(void **state)
{
	struct recording *r = turning();
	struct truth t;
	char code[48];
	cJSON *ans, *gt;

	(void)state;
	/* at T = 8 s the heading is 88 deg: the box at heading 0 is 88 deg to the right */
	assert_int_equal(build(r, submit("intention.head_turn", "approx", 8 * FX_S, "box"), &t,
			       code), 0);
	ans = field(t.answer_json, "yaw_deg");
	assert_float_equal(ans->valuedouble, -90, 1e-9); /* -88 on the 5-degree grid */
	cJSON_Delete(ans);
	gt = field(t.gt_json, "spatial");
	assert_float_equal(cJSON_GetObjectItem(gt, "yaw_deg")->valuedouble, -88.0, 0.01);
	assert_float_equal(cJSON_GetObjectItem(gt, "distance_m")->valuedouble, 3.0, 1e-3);
	cJSON_Delete(gt);
	assert_string_equal(t.category, "intention");
	assert_string_equal(t.subtask, "head_turn");
	assert_int_equal(t.t_ns, 8 * FX_S);
	assert_int_equal(t.clip_start_ns, 0);
	check_options(&t, ANS_HEAD_TURN_APPROX);
	truth_release(&t);

	/* relative at 10.7 s: heading 117.7, the box at -117.7: back-right */
	assert_int_equal(build(r, submit("intention.head_turn", "relative", 107 * FX_S / 10, "box"),
			       &t, code), 0);
	ans = field(t.answer_json, "direction");
	assert_string_equal(ans->valuestring, "back-right");
	cJSON_Delete(ans);
	check_options(&t, ANS_HEAD_TURN_RELATIVE);
	truth_release(&t);

	/* 10 s: -110 is 2.5 deg from the -112.5 boundary, so it is never asked */
	assert_int_equal(build(r, submit("intention.head_turn", "relative", 10 * FX_S, "box"), &t,
			       code), ENG_EINVAL);
	assert_string_equal(code, "clip_rule");
	/* 9 s is not a candidate (thinned to one per 2 s) */
	assert_int_equal(build(r, submit("intention.head_turn", "approx", 9 * FX_S, "box"), &t,
			       code), ENG_EINVAL);
	assert_string_equal(code, "clip_rule");
	assert_int_equal(build(r, submit("intention.head_turn", "approx", 8 * FX_S, "nope"), &t,
			       code), ENG_EINVAL);
	assert_string_equal(code, "bad_target");
	/* the clip [T - 8 s, T] must lie in the recording */
	assert_int_equal(build(r, submit("intention.head_turn", "approx", 7 * FX_S, "box"), &t,
			       code), ENG_EINVAL);
	assert_string_equal(code, "clip_rule");
	assert_int_equal(build(r, submit("chain.actions", "approx", 8 * FX_S, "box"), &t, code),
			 ENG_EINVAL);
	assert_string_equal(code, "bad_submit");
	recording_free(r);
}

static void test_navigate(void **state)
{
	struct recording *r = turning();
	struct truth t;
	char code[48];
	cJSON *v, *gt;

	(void)state;
	/* one straight leg of 3 m along +X, 88 deg to the right of the heading */
	assert_int_equal(build(r, submit("exploration.navigate", "approx", 8 * FX_S, "box"), &t,
			       code), 0);
	v = field(t.answer_json, "direction");
	assert_string_equal(v->valuestring, "right");
	cJSON_Delete(v);
	v = field(t.answer_json, "distance_m");
	assert_float_equal(v->valuedouble, 3.0, 1e-6);
	cJSON_Delete(v);
	gt = field(t.gt_json, "path");
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(gt, "reachable")));
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(gt, "legs")), 1);
	cJSON_Delete(gt);
	gt = field(t.gt_json, "occupancy");
	assert_non_null(cJSON_GetObjectItem(gt, "rle"));
	cJSON_Delete(gt);
	check_options(&t, ANS_NAV_APPROX);
	truth_release(&t);
	recording_free(r);
}

static void test_next_interaction(void **state)
{
	struct recording *r = kitchen();
	struct truth t;
	char code[48];
	cJSON *a;

	(void)state;
	/* T = 11 s; the cup at t_I = 12 s: (2, 0.5, 0.85) - (0, 0, 1.6) */
	assert_int_equal(build(r, submit("exploitation.next_interaction", "approx", 11 * FX_S,
					 "cup"), &t, code), 0);
	a = cJSON_Parse(t.answer_json);
	assert_string_equal(cJSON_GetObjectItem(a, "direction")->valuestring, "front");
	assert_string_equal(cJSON_GetObjectItem(a, "vertical")->valuestring, "down");
	assert_float_equal(cJSON_GetObjectItem(a, "distance_m")->valuedouble,
			   round(sqrt(4 + 0.25 + 0.75 * 0.75) * 10) / 10, 1e-6);
	assert_string_equal(cJSON_GetObjectItem(a, "hand")->valuestring, "right");
	assert_string_equal(cJSON_GetObjectItem(a, "verb")->valuestring, "pick up");
	assert_string_equal(cJSON_GetObjectItem(a, "object")->valuestring, "cup");
	cJSON_Delete(a);
	check_options(&t, ANS_INTERACT_APPROX);
	truth_release(&t);
	recording_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_head_turn),
		cmocka_unit_test(test_navigate),
		cmocka_unit_test(test_next_interaction),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
