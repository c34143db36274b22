/* SPDX-License-Identifier: MIT */
/* Structured answers and templates against hand-written expectations. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "answer.h"
#include "embed.h"
#include "err.h"
#include "template.h"

/* ---------- helpers ---------- */

static void render_is(struct answer *a, const char *want)
{
	struct buf b;

	buf_init(&b, ANS_TEXT_MAX);
	assert_int_equal(ans_normalise(a, NULL), 0);
	assert_int_equal(ans_render(a, &b), 0);
	assert_string_equal(buf_str(&b), want);
	buf_release(&b);
}

static struct answer yaw_answer(enum ans_kind k, float yaw, const char *obj)
{
	struct answer a;

	ans_init(&a, k);
	a.yaw_deg = yaw;
	if (obj)
		assert_int_equal(ans_set_text(a.object, sizeof(a.object), obj), 0);
	return a;
}

static struct answer interact(enum ans_kind k, enum bev_dir d, int vert, float dist,
			      enum rec_hand h, const char *verb, const char *obj)
{
	struct answer a;

	ans_init(&a, k);
	a.dir = d;
	a.vertical = vert;
	a.dist_m = dist;
	a.hand = h;
	assert_int_equal(ans_set_text(a.verb, sizeof(a.verb), verb), 0);
	assert_int_equal(ans_set_text(a.object, sizeof(a.object), obj), 0);
	return a;
}

/* ---------- rendering ---------- */

static void test_render_each_kind(void **state)
{
	struct answer a;

	(void)state;
	a = yaw_answer(ANS_HEAD_TURN_APPROX, 93.0f, NULL);
	render_is(&a, "Turn left ~95°");
	a = yaw_answer(ANS_HEAD_TURN_APPROX, -141.0f, NULL);
	render_is(&a, "Turn right ~140°");

	ans_init(&a, ANS_HEAD_TURN_RELATIVE);
	a.dir = BEV_FRONT_RIGHT;
	render_is(&a, "Turn the head front-right");
	a.dir = BEV_FRONT;
	render_is(&a, "Turn the head forward");
	a.dir = BEV_BACK;
	render_is(&a, "Turn the head around");

	a = yaw_answer(ANS_GAZE_APPROX, 38.0f, "kettle");
	render_is(&a, "Look ~40° to the left, at the kettle");

	ans_init(&a, ANS_GAZE_RELATIVE);
	ans_set_text(a.object, sizeof(a.object), "kettle");
	ans_set_text(a.ref, sizeof(a.ref), "sink");
	a.rel = ANS_REL_LEFT_OF;
	render_is(&a, "The kettle, left of the sink");
	a.rel = ANS_REL_IN_FRONT_OF;
	render_is(&a, "The kettle, in front of the sink");

	ans_init(&a, ANS_NAV_APPROX);
	a.dir = BEV_LEFT;
	a.dist_m = 3.17f;
	render_is(&a, "Turn left and go forward first, ~3.2 m walked in all");
	a.dir = BEV_BACK;
	render_is(&a, "Turn around and go forward first, ~3.2 m walked in all");
	a.dir = BEV_FRONT;
	render_is(&a, "Go forward first, ~3.2 m walked in all");
	a.dir = BEV_BACK_LEFT;
	a.dist_m = 6.8f; /* 0.5 m steps above 5 m */
	render_is(&a, "Go back-left first, ~7.0 m walked in all");

	ans_init(&a, ANS_NAV_RELATIVE);
	a.nlegs = 2;
	a.legs[0] = BEV_LEFT;
	a.legs[1] = BEV_FRONT_RIGHT;
	render_is(&a, "First turn left and go forward, then go front-right");
	a.nlegs = 1;
	a.legs[0] = BEV_BACK_LEFT;
	render_is(&a, "Go back-left, one straight leg");

	a = interact(ANS_INTERACT_APPROX, BEV_FRONT_LEFT, -1, 0.62f, REC_HAND_NONE,
		     "pick up", "cup");
	render_is(&a, "Front-left, down ~0.6 m, to pick up the cup");
	a.hand = REC_HAND_RIGHT;
	render_is(&a, "Front-left, down ~0.6 m, to pick up the cup with the right hand");
	a.vertical = 0;
	a.hand = REC_HAND_BOTH;
	render_is(&a, "Front-left ~0.6 m, to pick up the cup with both hands");
	a.vertical = 1;
	a.hand = REC_HAND_NONE;
	render_is(&a, "Front-left, up ~0.6 m, to pick up the cup");

	a = interact(ANS_INTERACT_RELATIVE, BEV_LEFT, 0, 0, REC_HAND_NONE, "pick up", "cup");
	render_is(&a, "Turn left to pick up the cup");
	a.dir = BEV_FRONT;
	render_is(&a, "Step forward to pick up the cup");
	a.dir = BEV_BACK_RIGHT;
	render_is(&a, "Move back-right to pick up the cup");

	ans_init(&a, ANS_CHAIN);
	a.k = 4;
	a.nodes[0] = 3;
	a.nodes[1] = 1;
	a.nodes[2] = 7;
	a.nodes[3] = 5;
	a.edges[0] = BEV_LEFT;
	a.edges[1] = BEV_FRONT_RIGHT;
	a.edges[2] = BEV_BACK_LEFT;
	render_is(&a, "[[3,1,7,5],[\"B\",\"E\",\"G\"]]");
}

static void test_render_chain_readable(void **state)
{
	const char *cands[] = { "Wash the cutting board", "Dry the hands", "Get dish soap",
				"Open the tap", "Shake water off the cutting board",
				"Cut the onion", "Turn off the faucet", "Pour oil" };
	struct answer a;
	struct buf b;

	(void)state;
	ans_init(&a, ANS_CHAIN);
	a.k = 4;
	a.nodes[0] = 3;
	a.nodes[1] = 1;
	a.nodes[2] = 7;
	a.nodes[3] = 5;
	a.edges[0] = BEV_LEFT;
	a.edges[1] = BEV_FRONT_RIGHT;
	a.edges[2] = BEV_BACK_LEFT;
	buf_init(&b, 512);
	assert_int_equal(ans_render_chain_readable(&a, cands, 8, &b), 0);
	assert_string_equal(buf_str(&b),
			    "Get dish soap ->left-> Wash the cutting board ->front-right-> "
			    "Turn off the faucet ->back-left-> Shake water off the cutting board");
	buf_release(&b);
	buf_init(&b, 512);
	a.nodes[3] = 9; /* not a candidate */
	assert_int_equal(ans_render_chain_readable(&a, cands, 8, &b), ENG_EINVAL);
	buf_release(&b);
}

/* |yaw| < 15 keeps facing forward, |yaw| > 165 turns around (docs/design.md 3). */
static void test_turn_thresholds(void **state)
{
	static const struct {
		float yaw;
		const char *head;
		const char *gaze;
	} cases[] = {
		{ 0.0f, "Keep facing forward", "Look straight to the front, at the mug" },
		{ 14.9f, "Keep facing forward", "Look straight to the front, at the mug" },
		{ -14.9f, "Keep facing forward", "Look straight to the front, at the mug" },
		{ 15.0f, "Turn left ~15°", "Look ~15° to the left, at the mug" },
		{ -15.0f, "Turn right ~15°", "Look ~15° to the right, at the mug" },
		{ 17.4f, "Turn left ~15°", "Look ~15° to the left, at the mug" },
		{ 92.4f, "Turn left ~90°", "Look ~90° to the left, at the mug" },
		{ 92.6f, "Turn left ~95°", "Look ~95° to the left, at the mug" },
		{ 165.0f, "Turn left ~165°", "Look ~165° to the left, at the mug" },
		{ 163.0f, "Turn left ~165°", "Look ~165° to the left, at the mug" },
		{ 165.1f, "Turn around", "Look around to the back, at the mug" },
		{ -170.0f, "Turn around", "Look around to the back, at the mug" },
		{ 180.0f, "Turn around", "Look around to the back, at the mug" },
		{ -165.0f, "Turn right ~165°", "Look ~165° to the right, at the mug" },
		{ 200.0f, "Turn right ~160°", "Look ~160° to the right, at the mug" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct answer h = yaw_answer(ANS_HEAD_TURN_APPROX, cases[i].yaw, NULL);
		struct answer g = yaw_answer(ANS_GAZE_APPROX, cases[i].yaw, "mug");

		render_is(&h, cases[i].head);
		render_is(&g, cases[i].gaze);
	}
	/* canonical values: forward folds to 0, around to 180 */
	{
		struct answer h = yaw_answer(ANS_HEAD_TURN_APPROX, -172.0f, NULL);

		assert_int_equal(ans_normalise(&h, NULL), 0);
		assert_true(h.yaw_deg == 180.0f);
		h = yaw_answer(ANS_HEAD_TURN_APPROX, -9.0f, NULL);
		assert_int_equal(ans_normalise(&h, NULL), 0);
		assert_true(h.yaw_deg == 0.0f);
	}
}

/* ---------- parsing ---------- */

/*
 * Every phrasing variant (styles 0..5 cover the one, two and three
 * variants a key has) renders to a text that parses back to the value,
 * and the variants of one kind differ in words.
 */
static void roundtrip(const struct answer *in)
{
	struct answer a = *in, back;
	char first[ANS_TEXT_MAX] = "";
	bool varied = false;
	struct buf b;
	int rc, style;

	assert_int_equal(ans_normalise(&a, NULL), 0);
	buf_init(&b, ANS_TEXT_MAX);
	for (style = 0; style < 6; style++) {
		buf_reset(&b);
		assert_int_equal(ans_render_style(&a, style, &b), 0);
		rc = ans_parse(a.kind, buf_str(&b), NULL, &back);
		if (rc || !ans_equal(&a, &back))
			fail_msg("round trip failed for '%s' (%s, style %d): %s", buf_str(&b),
				 ans_kind_name(a.kind), style, rc ? err_msg() : "values differ");
		if (!style)
			snprintf(first, sizeof(first), "%s", buf_str(&b));
		else
			varied |= strcmp(first, buf_str(&b)) != 0;
	}
	if (!varied && a.kind != ANS_CHAIN)
		fail_msg("'%s' (%s) has one phrasing only", first, ans_kind_name(a.kind));
	buf_release(&b);
}

static void test_parse_render_roundtrip(void **state)
{
	static const char *const objs[] = { "cup", "blue mug", "TV remote", "candle (2)",
					    "black square picture frame" };
	static const char *const verbs[] = { "pick up", "place", "open", "put down" };
	struct answer a;
	int y, d, e, v, h, o;

	(void)state;
	for (y = -180; y <= 180; y += 5) {
		a = yaw_answer(ANS_HEAD_TURN_APPROX, (float)y, NULL);
		roundtrip(&a);
		for (o = 0; o < (int)ARRAY_SIZE(objs); o++) {
			a = yaw_answer(ANS_GAZE_APPROX, (float)y, objs[o]);
			roundtrip(&a);
		}
	}
	for (d = 0; d < BEV_NDIR; d++) {
		ans_init(&a, ANS_HEAD_TURN_RELATIVE);
		a.dir = (enum bev_dir)d;
		roundtrip(&a);
		ans_init(&a, ANS_NAV_APPROX);
		a.dir = (enum bev_dir)d;
		a.dist_m = 0.3f + 0.7f * (float)d;
		roundtrip(&a);
		ans_init(&a, ANS_NAV_RELATIVE);
		a.nlegs = 1;
		a.legs[0] = (enum bev_dir)d;
		roundtrip(&a);
		for (e = 0; e < BEV_NDIR; e++) {
			a.nlegs = 2;
			a.legs[1] = (enum bev_dir)e;
			roundtrip(&a);
		}
		for (v = -1; v <= 1; v++)
			for (h = REC_HAND_NONE; h <= REC_HAND_BOTH; h++)
				for (o = 0; o < (int)ARRAY_SIZE(objs); o++) {
					a = interact(ANS_INTERACT_APPROX, (enum bev_dir)d, v,
						     0.1f + 0.4f * (float)o, (enum rec_hand)h,
						     verbs[o % 4], objs[o]);
					roundtrip(&a);
					a = interact(ANS_INTERACT_RELATIVE, (enum bev_dir)d, 0, 0,
						     REC_HAND_NONE, verbs[(o + 1) % 4], objs[o]);
					roundtrip(&a);
				}
	}
	for (o = 0; o < (int)ARRAY_SIZE(objs); o++)
		for (d = 0; d < ANS_NREL; d++) {
			ans_init(&a, ANS_GAZE_RELATIVE);
			ans_set_text(a.object, sizeof(a.object), objs[o]);
			ans_set_text(a.ref, sizeof(a.ref), objs[(o + 1) % 5]);
			a.rel = (enum ans_rel)d;
			roundtrip(&a);
		}
	ans_init(&a, ANS_CHAIN);
	for (d = 2; d <= ANS_CHAIN_MAX; d++) {
		a.k = d;
		for (e = 0; e < d; e++)
			a.nodes[e] = 8 - e;
		for (e = 0; e < d - 1; e++)
			a.edges[e] = (enum bev_dir)((e * 3) % 8);
		roundtrip(&a);
	}
}

/* Free-text options in the EgoProx style and their structured values. */
static void test_parse_free_text(void **state)
{
	static const struct {
		enum ans_kind kind;
		const char *text;
		const char *json; /* ans_to_json of the expected value */
	} cases[] = {
		{ ANS_HEAD_TURN_APPROX, "Pivot head 45° to the left",
		  "{\"kind\":\"intention.head_turn.approx\",\"yaw_deg\":45,\"turn\":\"left\"}" },
		{ ANS_HEAD_TURN_APPROX, "Rotate head to the back",
		  "{\"kind\":\"intention.head_turn.approx\",\"yaw_deg\":180,\"turn\":\"around\"}" },
		{ ANS_HEAD_TURN_APPROX, "Turn head 90° to the right",
		  "{\"kind\":\"intention.head_turn.approx\",\"yaw_deg\":-90,\"turn\":\"right\"}" },
		{ ANS_HEAD_TURN_APPROX, "Keep head facing forward",
		  "{\"kind\":\"intention.head_turn.approx\",\"yaw_deg\":0,\"turn\":\"forward\"}" },
		{ ANS_HEAD_TURN_APPROX, "Face forward",
		  "{\"kind\":\"intention.head_turn.approx\",\"yaw_deg\":0,\"turn\":\"forward\"}" },
		{ ANS_HEAD_TURN_APPROX, "Angle head 45° to the right",
		  "{\"kind\":\"intention.head_turn.approx\",\"yaw_deg\":-45,\"turn\":\"right\"}" },
		{ ANS_HEAD_TURN_APPROX, "Look head 120° to the left",
		  "{\"kind\":\"intention.head_turn.approx\",\"yaw_deg\":120,\"turn\":\"left\"}" },
		{ ANS_HEAD_TURN_APPROX, "turn RIGHT about 138 degrees.",
		  "{\"kind\":\"intention.head_turn.approx\",\"yaw_deg\":-140,\"turn\":\"right\"}" },
		{ ANS_HEAD_TURN_APPROX, "Turn around",
		  "{\"kind\":\"intention.head_turn.approx\",\"yaw_deg\":180,\"turn\":\"around\"}" },
		{ ANS_HEAD_TURN_APPROX, "Align head 90 deg to the left",
		  "{\"kind\":\"intention.head_turn.approx\",\"yaw_deg\":90,\"turn\":\"left\"}" },
		{ ANS_HEAD_TURN_RELATIVE, "Turn head back",
		  "{\"kind\":\"intention.head_turn.relative\",\"direction\":\"back\"}" },
		{ ANS_HEAD_TURN_RELATIVE, "Turn head front-right",
		  "{\"kind\":\"intention.head_turn.relative\",\"direction\":\"front-right\"}" },
		{ ANS_HEAD_TURN_RELATIVE, "rotate the head to the right",
		  "{\"kind\":\"intention.head_turn.relative\",\"direction\":\"right\"}" },
		{ ANS_HEAD_TURN_RELATIVE, "Turn head forward",
		  "{\"kind\":\"intention.head_turn.relative\",\"direction\":\"front\"}" },
		{ ANS_GAZE_APPROX, "Look about 40 degrees left, towards the Blue Mug.",
		  "{\"kind\":\"intention.gaze_target.approx\",\"yaw_deg\":40,\"turn\":\"left\","
		  "\"object\":\"Blue Mug\"}" },
		{ ANS_GAZE_RELATIVE, "The kettle, to the left of the sink",
		  "{\"kind\":\"intention.gaze_target.relative\",\"object\":\"kettle\","
		  "\"relation\":\"left_of\",\"reference\":\"sink\"}" },
		{ ANS_GAZE_RELATIVE, "kettle next to the faucet",
		  "{\"kind\":\"intention.gaze_target.relative\",\"object\":\"kettle\","
		  "\"relation\":\"near\",\"reference\":\"faucet\"}" },
		{ ANS_GAZE_RELATIVE, "The red cup behind the counter",
		  "{\"kind\":\"intention.gaze_target.relative\",\"object\":\"red cup\","
		  "\"relation\":\"behind\",\"reference\":\"counter\"}" },
		{ ANS_NAV_APPROX, "Go back-left 3.8 m",
		  "{\"kind\":\"exploration.navigate.approx\",\"direction\":\"back-left\","
		  "\"distance_m\":3.8}" },
		{ ANS_NAV_APPROX, "Turn around and advance ~3.2m",
		  "{\"kind\":\"exploration.navigate.approx\",\"direction\":\"back\","
		  "\"distance_m\":3.2}" },
		{ ANS_NAV_APPROX, "Turn left and go front ~3.2m",
		  "{\"kind\":\"exploration.navigate.approx\",\"direction\":\"left\","
		  "\"distance_m\":3.2}" },
		{ ANS_NAV_APPROX, "Move forward ~2.3m",
		  "{\"kind\":\"exploration.navigate.approx\",\"direction\":\"front\","
		  "\"distance_m\":2.3}" },
		{ ANS_NAV_APPROX, "Proceed to the front-right 4.5 m",
		  "{\"kind\":\"exploration.navigate.approx\",\"direction\":\"front-right\","
		  "\"distance_m\":4.5}" },
		{ ANS_NAV_APPROX,
		  "Head to the back-right 4.1 m, in order to retrieve the black square picture frame",
		  "{\"kind\":\"exploration.navigate.approx\",\"direction\":\"back-right\","
		  "\"distance_m\":4.1}" },
		{ ANS_NAV_APPROX, "Advance forward 4.1 metres",
		  "{\"kind\":\"exploration.navigate.approx\",\"direction\":\"front\","
		  "\"distance_m\":4.1}" },
		{ ANS_NAV_APPROX, "go front left 250 cm",
		  "{\"kind\":\"exploration.navigate.approx\",\"direction\":\"front-left\","
		  "\"distance_m\":2.5}" },
		{ ANS_NAV_RELATIVE, "Go back-left",
		  "{\"kind\":\"exploration.navigate.relative\",\"legs\":[\"back-left\"]}" },
		{ ANS_NAV_RELATIVE, "Turn back, go front",
		  "{\"kind\":\"exploration.navigate.relative\",\"legs\":[\"back\"]}" },
		{ ANS_NAV_RELATIVE, "Turn left, go front",
		  "{\"kind\":\"exploration.navigate.relative\",\"legs\":[\"left\"]}" },
		{ ANS_NAV_RELATIVE,
		  "First, turn left and go front. Then, go front-right, to retrieve the black tablet.",
		  "{\"kind\":\"exploration.navigate.relative\",\"legs\":[\"left\",\"front-right\"]}" },
		{ ANS_NAV_RELATIVE, "Turn left and go front. Then, go front-right",
		  "{\"kind\":\"exploration.navigate.relative\",\"legs\":[\"left\",\"front-right\"]}" },
		{ ANS_NAV_RELATIVE, "Turn left and go front. Go front-right.",
		  "{\"kind\":\"exploration.navigate.relative\",\"legs\":[\"left\",\"front-right\"]}" },
		{ ANS_INTERACT_APPROX, "With the left hand, move forward ~0.1 m to place the bowl",
		  "{\"kind\":\"exploitation.next_interaction.approx\",\"direction\":\"front\","
		  "\"vertical\":\"level\",\"distance_m\":0.1,\"hand\":\"left\",\"verb\":\"place\","
		  "\"object\":\"bowl\"}" },
		{ ANS_INTERACT_APPROX, "front-left down ~0.6m to pick up the cup using both hands",
		  "{\"kind\":\"exploitation.next_interaction.approx\",\"direction\":\"front-left\","
		  "\"vertical\":\"down\",\"distance_m\":0.6,\"hand\":\"both\",\"verb\":\"pick up\","
		  "\"object\":\"cup\"}" },
		{ ANS_INTERACT_APPROX, "Stretch forward 0.5 m to grasp the blue toy house",
		  "{\"kind\":\"exploitation.next_interaction.approx\",\"direction\":\"front\","
		  "\"vertical\":\"level\",\"distance_m\":0.5,\"verb\":\"grasp\","
		  "\"object\":\"blue toy house\"}" },
		{ ANS_INTERACT_APPROX, "Reach up and to the right 80 cm to open the cabinet",
		  "{\"kind\":\"exploitation.next_interaction.approx\",\"direction\":\"right\","
		  "\"vertical\":\"up\",\"distance_m\":0.8,\"verb\":\"open\","
		  "\"object\":\"cabinet\"}" },
		{ ANS_INTERACT_RELATIVE, "Turn left to place the cup",
		  "{\"kind\":\"exploitation.next_interaction.relative\",\"direction\":\"left\","
		  "\"verb\":\"place\",\"object\":\"cup\"}" },
		{ ANS_INTERACT_RELATIVE, "Turn left to get a wrench",
		  "{\"kind\":\"exploitation.next_interaction.relative\",\"direction\":\"left\","
		  "\"verb\":\"get\",\"object\":\"wrench\"}" },
		{ ANS_INTERACT_RELATIVE, "Move back to close the cabinet",
		  "{\"kind\":\"exploitation.next_interaction.relative\",\"direction\":\"back\","
		  "\"verb\":\"close\",\"object\":\"cabinet\"}" },
		{ ANS_INTERACT_RELATIVE, "Step forward to pick up spatula",
		  "{\"kind\":\"exploitation.next_interaction.relative\",\"direction\":\"front\","
		  "\"verb\":\"pick up\",\"object\":\"spatula\"}" },
		{ ANS_INTERACT_RELATIVE, "Turn left to pick up the right hand glove",
		  "{\"kind\":\"exploitation.next_interaction.relative\",\"direction\":\"left\","
		  "\"verb\":\"pick up\",\"object\":\"right hand glove\"}" },
		{ ANS_CHAIN, "[[3, 1, 7], [\"B\", \"E\"]]",
		  "{\"kind\":\"chain.actions.relative\",\"nodes\":[3,1,7],\"edges\":[\"B\",\"E\"]}" },
		{ ANS_CHAIN, "The answer is [[3,1,7],[left, front right]].",
		  "{\"kind\":\"chain.actions.relative\",\"nodes\":[3,1,7],\"edges\":[\"B\",\"E\"]}" },
		{ ANS_CHAIN, "[ [2,4], ['g'] ]",
		  "{\"kind\":\"chain.actions.relative\",\"nodes\":[2,4],\"edges\":[\"G\"]}" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct answer a;
		cJSON *j;
		char *s;
		int rc = ans_parse(cases[i].kind, cases[i].text, NULL, &a);

		if (rc)
			fail_msg("'%s': %s", cases[i].text, err_msg());
		j = ans_to_json(&a);
		assert_non_null(j);
		s = cJSON_PrintUnformatted(j);
		if (strcmp(s, cases[i].json))
			fail_msg("'%s' -> %s, want %s", cases[i].text, s, cases[i].json);
		free(s);
		cJSON_Delete(j);
	}
}

static void test_parse_errors(void **state)
{
	static const struct {
		enum ans_kind kind;
		const char *text;
	} cases[] = {
		{ ANS_HEAD_TURN_APPROX, "banana" },
		{ ANS_HEAD_TURN_APPROX, "Turn left" },       /* no angle */
		{ ANS_HEAD_TURN_APPROX, "Turn 95 degrees" }, /* no side */
		{ ANS_HEAD_TURN_RELATIVE, "Look at the cup" },
		{ ANS_GAZE_APPROX, "Look ~40° to the left" }, /* no object */
		{ ANS_GAZE_RELATIVE, "Left of sink" },        /* no object */
		{ ANS_GAZE_RELATIVE, "The kettle on the counter" }, /* no relation */
		{ ANS_GAZE_RELATIVE, "The sink, left of the sink" }, /* object = reference */
		{ ANS_NAV_APPROX, "Go front-left" },          /* no distance */
		{ ANS_NAV_APPROX, "Walk 3 m" },               /* no direction */
		{ ANS_NAV_RELATIVE, "Go left, then go right, then go back" },
		{ ANS_INTERACT_APPROX, "front-left down ~0.6m" }, /* no action */
		{ ANS_INTERACT_APPROX, "Front-left to pick up the cup" }, /* no distance */
		{ ANS_INTERACT_RELATIVE, "to pick up the cup" }, /* no direction */
		{ ANS_CHAIN, "[[1,2,3],[\"A\"]]" },            /* 3 nodes need 2 edges */
		{ ANS_CHAIN, "[[1,1],[\"A\"]]" },              /* repeated node */
		{ ANS_CHAIN, "[[1,2],[\"Z\"]]" },
		{ ANS_CHAIN, "no chain here" },
		{ ANS_NAV_APPROX, "Go forward 0.02 m" },      /* rounds to 0 */
		{ ANS_NAV_APPROX, "Go forward 5000 m" },      /* past ANS_DIST_MAX_M */
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct answer a;

		if (ans_parse(cases[i].kind, cases[i].text, NULL, &a) != ENG_EPARSE)
			fail_msg("'%s' parsed as %s", cases[i].text, ans_kind_name(cases[i].kind));
	}
}

/* ---------- JSON ---------- */

static void test_json_roundtrip(void **state)
{
	struct answer in[6], out;
	cJSON *j;
	char *s;
	size_t i;

	(void)state;
	in[0] = yaw_answer(ANS_GAZE_APPROX, -62.0f, "kettle");
	in[1] = interact(ANS_INTERACT_APPROX, BEV_BACK_RIGHT, 1, 1.26f, REC_HAND_LEFT, "open",
			 "fridge door");
	in[2] = interact(ANS_INTERACT_RELATIVE, BEV_RIGHT, 0, 0, REC_HAND_NONE, "place", "cup");
	ans_init(&in[3], ANS_NAV_RELATIVE);
	in[3].nlegs = 2;
	in[3].legs[0] = BEV_RIGHT;
	in[3].legs[1] = BEV_FRONT_LEFT;
	ans_init(&in[4], ANS_GAZE_RELATIVE);
	ans_set_text(in[4].object, sizeof(in[4].object), "plate");
	ans_set_text(in[4].ref, sizeof(in[4].ref), "stove");
	in[4].rel = ANS_REL_BEHIND;
	ans_init(&in[5], ANS_CHAIN);
	in[5].k = 3;
	in[5].nodes[0] = 2;
	in[5].nodes[1] = 8;
	in[5].nodes[2] = 5;
	in[5].edges[0] = BEV_BACK;
	in[5].edges[1] = BEV_FRONT;
	for (i = 0; i < ARRAY_SIZE(in); i++) {
		assert_int_equal(ans_normalise(&in[i], NULL), 0);
		j = ans_to_json(&in[i]);
		assert_non_null(j);
		assert_int_equal(ans_from_json(j, &out), 0);
		assert_true(ans_equal(&in[i], &out));
		cJSON_Delete(j);
	}
	j = ans_to_json(&in[1]);
	s = cJSON_PrintUnformatted(j);
	assert_string_equal(s, "{\"kind\":\"exploitation.next_interaction.approx\","
			    "\"direction\":\"back-right\",\"vertical\":\"up\",\"distance_m\":1.3,"
			    "\"hand\":\"left\",\"verb\":\"open\",\"object\":\"fridge door\"}");
	free(s);
	cJSON_Delete(j);

	/* errors name the field */
	j = cJSON_Parse("{\"kind\":\"exploration.navigate.approx\",\"direction\":\"left\"}");
	assert_int_equal(ans_from_json(j, &out), ENG_EPARSE);
	assert_non_null(strstr(err_msg(), "'distance_m'"));
	cJSON_Delete(j);
	j = cJSON_Parse("{\"kind\":\"exploration.navigate.approx\",\"direction\":\"up\","
			"\"distance_m\":2}");
	assert_int_equal(ans_from_json(j, &out), ENG_EINVAL);
	assert_non_null(strstr(err_msg(), "'direction'"));
	cJSON_Delete(j);
	j = cJSON_Parse("{\"kind\":\"intention.nothing\"}");
	assert_int_equal(ans_from_json(j, &out), ENG_EINVAL);
	assert_non_null(strstr(err_msg(), "'kind'"));
	cJSON_Delete(j);
	j = cJSON_Parse("{\"kind\":\"chain.actions.relative\",\"nodes\":[1,2,3],\"edges\":[\"A\"]}");
	assert_int_equal(ans_from_json(j, &out), ENG_EINVAL);
	cJSON_Delete(j);
}

static void test_normalise_errors(void **state)
{
	struct answer a;

	(void)state;
	ans_init(&a, ANS_GAZE_RELATIVE);
	ans_set_text(a.object, sizeof(a.object), "The Sink");
	ans_set_text(a.ref, sizeof(a.ref), "sink");
	assert_int_equal(ans_normalise(&a, NULL), ENG_EINVAL);
	ans_init(&a, ANS_NAV_RELATIVE);
	a.nlegs = 3;
	assert_int_equal(ans_normalise(&a, NULL), ENG_EINVAL);
	ans_init(&a, ANS_INTERACT_RELATIVE);
	a.dir = BEV_LEFT;
	ans_set_text(a.verb, sizeof(a.verb), "open");
	assert_int_equal(ans_normalise(&a, NULL), ENG_EINVAL); /* no object */
	ans_init(&a, ANS_HEAD_TURN_APPROX);
	a.yaw_deg = NAN;
	assert_int_equal(ans_normalise(&a, NULL), ENG_EINVAL);
	ans_init(&a, ANS_INTERACT_APPROX);
	a.dir = BEV_NDIR;
	assert_int_equal(ans_normalise(&a, NULL), ENG_EINVAL);
	{
		char big[200];

		memset(big, 'x', sizeof(big) - 1);
		big[sizeof(big) - 1] = '\0';
		assert_int_equal(ans_set_text(a.object, sizeof(a.object), big), ENG_ETOOBIG);
		assert_string_equal(a.object, "");
	}
}

static void test_kind_names(void **state)
{
	int k;

	(void)state;
	for (k = 0; k < ANS_NKIND; k++)
		assert_int_equal(ans_kind_from_name(ans_kind_name((enum ans_kind)k)), k);
	assert_int_equal(ans_kind_from_name("nope"), ANS_NKIND);
	assert_int_equal(ans_kind_from_task("head_turn", "approx"), ANS_HEAD_TURN_APPROX);
	assert_int_equal(ans_kind_from_task("next_interaction", "relative"),
			 ANS_INTERACT_RELATIVE);
	assert_int_equal(ans_kind_from_task("actions", "relative"), ANS_CHAIN);
	assert_int_equal(ans_kind_from_task("actions", "approx"), ANS_NKIND);
	assert_int_equal(ans_rel_from_name("in_front_of"), ANS_REL_IN_FRONT_OF);
}

/* ---------- names ---------- */

static void test_names(void **state)
{
	const char *scene[] = { "CandlePattern04_1", "Spoon_1", "Mug" };
	char out[ANS_NAME_MAX];

	(void)state;
	assert_int_equal(ans_display_name("BlackCeramicMug", NULL, 0, out, sizeof(out)), 0);
	assert_string_equal(out, "black ceramic mug");
	assert_int_equal(ans_display_name("WoodenFork_1", scene, 3, out, sizeof(out)), 0);
	assert_string_equal(out, "wooden fork");
	assert_int_equal(ans_display_name("TVRemote", NULL, 0, out, sizeof(out)), 0);
	assert_string_equal(out, "tv remote");
	assert_int_equal(ans_display_name("CandlePattern04_2", scene, 3, out, sizeof(out)), 0);
	assert_string_equal(out, "candle pattern 04 (2)");
	assert_int_equal(ans_display_name("blue mug", NULL, 0, out, sizeof(out)), 0);
	assert_string_equal(out, "blue mug");
	/* another object with the same name: the instance cannot be named */
	assert_int_equal(ans_display_name("Mug", scene, 3, out, sizeof(out)), ENG_EINVAL);
	assert_int_equal(ans_display_name("CandlePattern04_1", scene, 1, out, sizeof(out)),
			 ENG_EINVAL);
	assert_int_equal(ans_display_name("BlackCeramicMug", NULL, 0, out, 8), ENG_ETOOBIG);

	assert_true(ans_name_equal("The Blue-Mug", "blue mug"));
	assert_true(ans_name_equal("a cup", "Cup"));
	assert_false(ans_name_equal("cup", "cups"));
	assert_false(ans_name_equal("theatre", "atre"));
}

/* ---------- templates ---------- */

static void render_tmpl_is(const char *src, const struct tmpl_var *v, size_t nv,
			   int want_rc, const char *want)
{
	struct buf b;

	buf_init(&b, 64);
	assert_int_equal(tmpl_render(src, strlen(src), v, nv, &b), want_rc);
	if (!want_rc)
		assert_string_equal(buf_str(&b), want);
	buf_release(&b);
}

static void test_template_render(void **state)
{
	const struct tmpl_var v[] = { { "target", "kettle" }, { "n", "3" }, { "empty", NULL } };

	(void)state;
	render_tmpl_is("locate the {target}?", v, 3, 0, "locate the kettle?");
	render_tmpl_is("{{target}} is {target}", v, 3, 0, "{target} is kettle");
	render_tmpl_is("[[{n}],[}}]]", v, 3, 0, "[[3],[}]]");
	render_tmpl_is("a{empty}b", v, 3, 0, "ab");
	render_tmpl_is("", v, 3, 0, "");
	render_tmpl_is("the {goal}", v, 3, ENG_EINVAL, NULL);
	assert_non_null(strstr(err_msg(), "'{goal}'"));
	render_tmpl_is("the {target", v, 3, ENG_EPARSE, NULL);
	render_tmpl_is("the {tar get}", v, 3, ENG_EPARSE, NULL);
	render_tmpl_is("the {}", v, 3, ENG_EPARSE, NULL);
	render_tmpl_is("lone } brace", v, 3, ENG_EPARSE, NULL);
	/* bounded output: the buffer holds at most 63 bytes (10 x 6 fit, 11 do not) */
	render_tmpl_is("{target}{target}{target}{target}{target}{target}{target}{target}"
		       "{target}{target}", v, 3, 0,
		       "kettlekettlekettlekettlekettlekettlekettlekettlekettlekettle");
	render_tmpl_is("{target}{target}{target}{target}{target}{target}{target}{target}"
		       "{target}{target}{target}", v, 3, ENG_ETOOBIG, NULL);
}

static const char *const tasks[] = {
	"intention.head_turn.approx", "intention.head_turn.relative",
	"intention.gaze_target.approx", "intention.gaze_target.relative",
	"exploration.navigate.approx", "exploration.navigate.relative",
	"exploitation.next_interaction.approx", "exploitation.next_interaction.relative",
	"chain.actions.relative",
};

/* At least eight phrasings per sub-task and metric, each renders cleanly. */
static void test_question_templates(void **state)
{
	const struct tmpl_var v[] = {
		{ "target", "blue mug" },
		{ "goal", "Thoroughly clean the cutting board" },
		{ "candidates", "1. Get dish soap; 2. Wash the board" },
		{ "k", "3" },
	};
	size_t t;

	(void)state;
	for (t = 0; t < ARRAY_SIZE(tasks); t++) {
		char path[128];
		int n, i;

		snprintf(path, sizeof(path), "prompts/questions/%s.txt", tasks[t]);
		n = tmpl_count(path);
		if (n < 8)
			fail_msg("%s: %d phrasings (docs/answers.md asks for 8 or more)", path, n);
		for (i = 0; i < n; i++) {
			const char *line;
			size_t len;
			struct buf b;

			assert_int_equal(tmpl_line(path, i, &line, &len), 0);
			buf_init(&b, 2048);
			if (tmpl_render(line, len, v, ARRAY_SIZE(v), &b))
				fail_msg("%s line %d: %s", path, i, err_msg());
			assert_null(strchr(buf_str(&b), '{'));
			assert_true(b.len > 20 && strchr(buf_str(&b), '?'));
			buf_release(&b);
		}
		assert_int_equal(tmpl_line(path, n, &(const char *){ NULL }, &(size_t){ 0 }),
				 ENG_ERANGE);
		/* every answer kind has its answer template */
		snprintf(path, sizeof(path), "prompts/answers/%s.txt", tasks[t]);
		assert_non_null(embed_find(path));
	}
	assert_int_equal(tmpl_count("prompts/questions/none.txt"), ENG_ENOENT);
}

static void test_question_pick(void **state)
{
	const struct tmpl_var v[] = { { "target", "textbook" } };
	const char *path = "prompts/questions/intention.head_turn.approx.txt";
	int seen[16] = { 0 }, i, n = tmpl_count(path), idx = -1, idx2 = -2;
	const char *l1, *l2;
	size_t n1, n2;
	struct buf b;

	(void)state;
	assert_true(n >= 3 && n < 16);
	for (i = 0; i < 400; i++) {
		assert_int_equal(tmpl_pick(path, (uint64_t)i, &l1, &n1, &idx), 0);
		assert_true(idx >= 0 && idx < n);
		seen[idx]++;
	}
	for (i = 0; i < n; i++) /* consecutive seeds reach every phrasing */
		assert_true(seen[i] > 400 / n / 2);
	assert_int_equal(tmpl_pick(path, 12345, &l1, &n1, &idx), 0);
	assert_int_equal(tmpl_pick(path, 12345, &l2, &n2, &idx2), 0);
	assert_int_equal(idx, idx2);
	assert_ptr_equal(l1, l2);

	buf_init(&b, 512);
	assert_int_equal(tmpl_question("intention.head_turn.approx", 7, v, 1, &b), 0);
	assert_non_null(strstr(buf_str(&b), "the textbook"));
	buf_release(&b);
	buf_init(&b, 512);
	assert_int_equal(tmpl_question("intention.head_turn.approx", 7, NULL, 0, &b),
			 ENG_EINVAL);
	assert_non_null(strstr(err_msg(), "prompts/questions/intention.head_turn.approx.txt:"));
	assert_non_null(strstr(err_msg(), "'{target}'"));
	buf_release(&b);
}

static void test_keyed(void **state)
{
	const char *t;
	size_t len;

	(void)state;
	assert_int_equal(tmpl_keyed("prompts/answers/exploration.navigate.approx.txt",
				    "leg.left", &t, &len), 0);
	assert_int_equal((int)len, (int)strlen("turn left and go forward"));
	assert_memory_equal(t, "turn left and go forward", len);
	assert_int_equal(tmpl_keyed("prompts/answers/exploration.navigate.approx.txt",
				    "leg.up", &t, &len), ENG_ENOENT);
	assert_non_null(strstr(err_msg(), "'leg.up'"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_render_each_kind),
		cmocka_unit_test(test_render_chain_readable),
		cmocka_unit_test(test_turn_thresholds),
		cmocka_unit_test(test_parse_render_roundtrip),
		cmocka_unit_test(test_parse_free_text),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_json_roundtrip),
		cmocka_unit_test(test_normalise_errors),
		cmocka_unit_test(test_kind_names),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_template_render),
		cmocka_unit_test(test_question_templates),
		cmocka_unit_test(test_question_pick),
		cmocka_unit_test(test_keyed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
