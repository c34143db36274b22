/* SPDX-License-Identifier: MIT */
/*
 * Scoring: the MC letter parser and the chain parser against the cases
 * EgoProx's Python regexes decide (worked out by hand from the patterns),
 * the edge accuracies, and whole scores whose values are known by
 * construction (3 of 7 right, all right, all wrong, one wrong edge of L,
 * lenient neighbours, dropped chains, missing answers, chance levels).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "err.h"
#include "eval.h"
#include "store.h"

#define NEAR(a, b) assert_true(fabs((double)(a) - (double)(b)) <= 1e-9)

/* ============================== MC letters ============================== */

/* EgoProx's parse_answer_letter. */
static char ego(const char *text)
{
	char l = 0;

	return eval_egoprox_letter(text, &l) ? l : 0;
}

/* proxima's lenient parse (its own figure). */
static char lenient(const char *text, int nopt)
{
	char l = 0;

	return eval_lenient_letter(text, nopt, &l) ? l : 0;
}

static void test_letter_basic(void **state)
{
	(void)state;
	assert_int_equal(ego("The correct answer is B"), 'B');
	assert_int_equal(ego("The correct answer is <C>."), 'C');
	assert_int_equal(ego("Therefore, The correct answer is D)"), 'D');
	/* re.IGNORECASE, letter upper-cased as the inference scripts do */
	assert_int_equal(ego("the CORRECT answer IS e"), 'E');
	/* \s* after "is" may be empty; \s+ between words may not */
	assert_int_equal(ego("The correct answer isA"), 'A');
	assert_int_equal(ego("The correctanswer is A"), 0);
	assert_int_equal(ego("The correct\n\tanswer   is\nB"), 'B');
	/* Python's \s includes NO-BREAK SPACE and U+001C; not ZERO WIDTH SPACE */
	assert_int_equal(ego("The\xc2\xa0" "correct answer is C"), 'C');
	assert_int_equal(ego("The\x1c" "correct answer is C"), 'C');
	assert_int_equal(ego("The\xe2\x80\x8b" "correct answer is C"), 0);
	/* IGNORECASE folds U+017F into s and U+0130 / U+0131 into i */
	assert_int_equal(ego("The correct an\xc5\xbfwer is C"), 'C');
	assert_int_equal(ego("The correct answer \xc4\xb0s D"), 'D');
	assert_int_equal(ego("The correct answer \xc4\xb1s D"), 'D');
	/* no word boundary after the letter: "Because" gives B, like the regex */
	assert_int_equal(ego("The correct answer is Because ..."), 'B');
	/* the full-width B is not in [A-E] */
	assert_int_equal(ego("The correct answer is \xef\xbc\xa2"), 0);
	assert_int_equal(ego(""), 0);
	assert_int_equal(ego(NULL), 0);
	assert_int_equal(ego("I am not sure."), 0);
}

static void test_letter_last_match_wins(void **state)
{
	(void)state;
	/* an earlier decoy in the chain of thought; the last match counts */
	assert_int_equal(ego("Step 1: the mug was on the left, so at first I thought "
			     "The correct answer is A. But the head turned right, which "
			     "rules A out.\nTherefore, The correct answer is B."), 'B');
	assert_int_equal(ego("The correct answer is C. The correct answer is A"), 'A');
	/* a later match past E is no match: the one before stays the last */
	assert_int_equal(ego("The correct answer is C. The correct answer is F"), 'C');
}

static void test_letter_egoprox_vs_lenient(void **state)
{
	(void)state;
	/* EgoProx: A-E only, whatever the option count, and no bare letters */
	assert_int_equal(ego("The correct answer is F"), 0);
	assert_int_equal(ego("B"), 0);
	assert_int_equal(ego("B."), 0);
	assert_int_equal(ego("<B>"), 0);
	/* the lenient parse: the range runs to the last option, bare letters count */
	assert_int_equal(lenient("The correct answer is F", 5), 0);
	assert_int_equal(lenient("The correct answer is F", 8), 'F');
	assert_int_equal(lenient("The correct answer is H.", 8), 'H');
	assert_int_equal(lenient("The correct answer is I", 8), 0);
	assert_int_equal(lenient("B", 5), 'B');
	assert_int_equal(lenient("  B.\n", 5), 'B');
	assert_int_equal(lenient("<E>", 5), 'E');
	assert_int_equal(lenient("b", 5), 0);
	assert_int_equal(lenient("G", 5), 0);
	assert_int_equal(lenient("G", 8), 'G');
	assert_int_equal(lenient("B because", 5), 0);
	assert_int_equal(lenient("The correct answer is C", 5), 'C');
}

/* ============================== Chains ============================== */

static enum eval_chain_status chain(const char *text, int k, int e, struct eval_chain *c)
{
	return eval_parse_chain(text, k, e, c);
}

static void assert_nodes(const struct eval_chain *c, const long long *want, int n)
{
	int i;

	assert_int_equal(c->nnodes, n);
	for (i = 0; i < n; i++)
		assert_int_equal(c->nodes[i], want[i]);
}

static void test_chain_json(void **state)
{
	static const long long want[] = { 3, 1, 7, 2 };
	struct eval_chain c;

	(void)state;
	assert_int_equal(chain("[[3,1,7,2],[\"B\",\"E\",\"A\"]]", 4, 3, &c), EVAL_CHAIN_OK);
	assert_nodes(&c, want, 4);
	assert_int_equal(c.nedges, 3);
	assert_memory_equal(c.edges, "BEA", 3);
	/* surrounding whitespace is stripped; more edges than the key are cut */
	assert_int_equal(chain("  [[3, 1, 7, 2], [\"b\", \"e\", \"a\", \"d\", \"c\"]]\n", 4, 3, &c),
			 EVAL_CHAIN_OK);
	assert_int_equal(c.nedges, 3);
	assert_memory_equal(c.edges, "BEA", 3);
	/* node tokens: strings give their first digit run, floats truncate */
	assert_int_equal(chain("[[\"3\", \"node 1\", 7.9, \" 2 \"], [\"B\", \"E\", \"A\"]]", 4, 3, &c),
			 EVAL_CHAIN_OK);
	assert_nodes(&c, want, 4);
	/* edge tokens embedded in strings: every A-H of the upper-cased text */
	assert_int_equal(chain("[[3,1,7,2],[\"left (B)\",\"c\"]]", 4, 3, &c), EVAL_CHAIN_OK);
	assert_int_equal(c.nedges, 3);
	assert_memory_equal(c.edges, "EFB", 3); /* L E F T ( B ) -> E F B */
	/* fewer edges than the key: kept as they are (missing ones score wrong) */
	assert_int_equal(chain("[[3,1,7,2],[\"B\"]]", 4, 3, &c), EVAL_CHAIN_OK);
	assert_int_equal(c.nedges, 1);
	/* non-string edge items are ignored; an edge string instead of a list */
	assert_int_equal(chain("[[3,1,7,2],[1,\"A\",null]]", 4, 3, &c), EVAL_CHAIN_OK);
	assert_int_equal(c.nedges, 1);
	assert_int_equal(chain("[[3,1,7,2],\"B, E, A\"]", 4, 3, &c), EVAL_CHAIN_OK);
	assert_memory_equal(c.edges, "BEA", 3);
	/* the ligature U+FB00 "ff" upper-cases to FF */
	assert_int_equal(chain("[[3,1,7,2],[\"\xef\xac\x80\",\"A\"]]", 4, 3, &c), EVAL_CHAIN_OK);
	assert_memory_equal(c.edges, "FFA", 3);
}

static void test_chain_fallback(void **state)
{
	static const long long want[] = { 3, 1, 7, 2 };
	struct eval_chain c;

	(void)state;
	/* not JSON: nodes from the first "[[ ... ],", edges = every A-H of the whole
	 * upper-cased text, so "Answer" contributes A and E before the list */
	assert_int_equal(chain("Answer: [[3, 1, 7, 2], [B, E, A]]", 4, 3, &c), EVAL_CHAIN_OK);
	assert_nodes(&c, want, 4);
	assert_memory_equal(c.edges, "AEB", 3);
	/* valid JSON followed by text is not JSON for Python either */
	assert_int_equal(chain("[[3,1,7,2],[\"B\",\"E\",\"A\"]] Done.", 4, 3, &c), EVAL_CHAIN_OK);
	assert_memory_equal(c.edges, "BEA", 3);
	/* JSON with a bool node falls back to the regex: digits 1, 7, 2 only */
	assert_int_equal(chain("[[true,1,7,2],[\"B\",\"E\",\"A\"]]", 4, 3, &c), EVAL_CHAIN_LENGTH);
	/* a JSON node count mismatch also falls back; the regex sees "1,2" as two */
	assert_int_equal(chain("[[\"3\",\"1,7\",2],[\"B\",\"E\",\"A\"]]", 4, 3, &c), EVAL_CHAIN_OK);
	assert_nodes(&c, want, 4);
	/* a "[[" without "]," after its first "]" is skipped for the next one */
	assert_int_equal(chain("[[x] no, [[3,1,7,2], [C]", 4, 3, &c), EVAL_CHAIN_OK);
	assert_nodes(&c, want, 4);
	assert_int_equal(c.nedges, 1);
	assert_int_equal(c.edges[0], 'C');
	/* prose before the list feeds the fallback's edges: THE -> H E, PLAN -> A */
	assert_int_equal(chain("The plan is [[3,1,7,2],[\"E\",\"C\",\"D\"]]", 4, 3, &c),
			 EVAL_CHAIN_OK);
	assert_memory_equal(c.edges, "HEA", 3);
	assert_int_equal(chain("see [[]] then [[3,1,7,2], C D", 4, 3, &c), EVAL_CHAIN_OK);
	assert_nodes(&c, want, 4);
}

static void test_chain_dropped(void **state)
{
	struct eval_chain c;

	(void)state;
	assert_int_equal(chain("[[3,1,7],[\"B\",\"E\"]]", 4, 3, &c), EVAL_CHAIN_LENGTH);
	assert_int_equal(chain("[[3,1,7,2,5],[\"B\",\"E\",\"A\"]]", 4, 3, &c), EVAL_CHAIN_LENGTH);
	assert_int_equal(chain("first take the soap, then wash", 4, 3, &c), EVAL_CHAIN_UNPARSABLE);
	assert_int_equal(chain("", 4, 3, &c), EVAL_CHAIN_UNPARSABLE);
	assert_int_equal(chain(" \n ", 4, 3, &c), EVAL_CHAIN_UNPARSABLE);
	assert_int_equal(chain(NULL, 4, 3, &c), EVAL_CHAIN_UNPARSABLE);
	assert_int_equal(chain("[[3,1,7,2]]", 4, 3, &c), EVAL_CHAIN_UNPARSABLE);
}

/*
 * Python's json.loads decides which path a chain answer takes. Each case
 * was checked with python3 (json.loads raises or not) and worked out by
 * hand through evaluate.py's fallback.
 */
static void test_chain_python_json(void **state)
{
	static const long long want[] = { 3, 1, 7, 2 };
	struct eval_chain c;

	(void)state;
	/* a raw TAB inside an edge string: json.loads raises (strict), so the
	 * fallback takes every A-H of the whole text, the node string's "a"
	 * first: A B E; escaped as \t it is JSON, and the edges are B E C */
	assert_int_equal(chain("[[\"3 a\",1,7,2],[\"B\t\",\"E\",\"C\"]]", 4, 3, &c), EVAL_CHAIN_OK);
	assert_nodes(&c, want, 4);
	assert_memory_equal(c.edges, "ABE", 3);
	assert_int_equal(chain("[[\"3 a\",1,7,2],[\"B\\t\",\"E\",\"C\"]]", 4, 3, &c),
			 EVAL_CHAIN_OK);
	assert_memory_equal(c.edges, "BEC", 3);
	/* a raw newline inside a string: the same; the escaped \t is plain JSON */
	assert_int_equal(chain("[[3,1,7,2],[\"dB\nE\"]]", 4, 3, &c), EVAL_CHAIN_OK);
	assert_memory_equal(c.edges, "DBE", 3);
	assert_int_equal(chain("[[3,1,7,2],[\"\\tB\",\"E\"]] ", 4, 2, &c), EVAL_CHAIN_OK);
	assert_memory_equal(c.edges, "BE", 2);
	/* raw newlines between tokens are JSON white space: edges from the list only */
	assert_int_equal(chain("[[3,1,7,2],\n[\"C\",\"D\"]]", 4, 2, &c), EVAL_CHAIN_OK);
	assert_memory_equal(c.edges, "CD", 2);
	/* NO-BREAK SPACE between tokens is not: fallback, and "ẖ" does not occur */
	assert_int_equal(chain("[[3,1,7,2],\xc2\xa0[\"C\",\"D\"]]", 4, 2, &c), EVAL_CHAIN_OK);
	assert_memory_equal(c.edges, "CD", 2);
	/* a leading zero: json.loads raises, the fallback reads 03 as 3 */
	assert_int_equal(chain("[[03,1,7,2],[\"G\"]]", 4, 1, &c), EVAL_CHAIN_OK);
	assert_nodes(&c, want, 4);
	/* "7." is not a JSON number; the fallback digit runs are 3 1 7 2 */
	assert_int_equal(chain("[[3,1,7.,2],[\"G\"]]", 4, 1, &c), EVAL_CHAIN_OK);
	assert_nodes(&c, want, 4);
	/* NaN parses but int(nan) raises: fallback, whose digits miss a node */
	assert_int_equal(chain("[[3,1,NaN,2],[\"G\"]]", 4, 1, &c), EVAL_CHAIN_LENGTH);
	/* 1e400 is inf: int(inf) raises; the fallback's runs are 3 1 1 400 2 */
	assert_int_equal(chain("[[3,1,1e400,2],[\"G\"]]", 4, 1, &c), EVAL_CHAIN_LENGTH);
	/* a big integer literal is exact in Python: node 99999999999999999999 */
	assert_int_equal(chain("[[3,1,99999999999999999999,2],[\"G\"]]", 4, 1, &c), EVAL_CHAIN_OK);
	assert_int_equal(c.nodes[2], LLONG_MAX);
	/* Arabic-Indic digits are no JSON, but \d and int() read them */
	assert_int_equal(chain("[[\xd9\xa3,\xd9\xa1,\xd9\xa7,\xd9\xa2],[\"G\"]]", 4, 1, &c),
			 EVAL_CHAIN_OK);
	assert_nodes(&c, want, 4);
	/* and in a node string the JSON path takes their first run */
	assert_int_equal(chain("[[\"\xd9\xa3\",1,7,2],[\"G\"]]", 4, 1, &c), EVAL_CHAIN_OK);
	assert_nodes(&c, want, 4);
	/* a \u0000 escape is a character like any other: JSON path, 4 nodes */
	assert_int_equal(chain("[[3,1,7,2],[\"\\u0000B\"]]", 4, 1, &c), EVAL_CHAIN_OK);
	assert_memory_equal(c.edges, "B", 1);
	/* a byte order mark makes json.loads raise; its fallback still finds [[ */
	assert_int_equal(chain("\xef\xbb\xbf[[3,1,7,2],[\"G\"]]", 4, 1, &c), EVAL_CHAIN_OK);
	assert_memory_equal(c.edges, "G", 1);
	/* a single quote string is no JSON: fallback */
	assert_int_equal(chain("[[3,1,7,2],['B']]", 4, 1, &c), EVAL_CHAIN_OK);
	assert_memory_equal(c.edges, "B", 1);
}

static void test_edge_accuracy(void **state)
{
	cJSON *key = cJSON_Parse("[\"B\",\"E\",\"G\"]"), *empty = cJSON_Parse("[]");
	struct eval_chain p;

	(void)state;
	memset(&p, 0, sizeof(p));
	p.nedges = 3;
	memcpy(p.edges, "BEG", 3);
	NEAR(eval_edge_accuracy(key, &p, false), 1.0);
	/* one wrong of three, not a neighbour of G (back-left): B left, D back are */
	memcpy(p.edges, "BEA", 3);
	NEAR(eval_edge_accuracy(key, &p, false), 2.0 / 3);
	NEAR(eval_edge_accuracy(key, &p, true), 2.0 / 3);
	/* neighbours: F front-left for B left, A right for E front-right, D for G */
	memcpy(p.edges, "FAD", 3);
	NEAR(eval_edge_accuracy(key, &p, false), 0.0);
	NEAR(eval_edge_accuracy(key, &p, true), 1.0);
	/* opposite directions are wrong even when lenient */
	memcpy(p.edges, "AHE", 3);
	NEAR(eval_edge_accuracy(key, &p, true), 0.0);
	/* missing predicted edges count as wrong */
	p.nedges = 1;
	memcpy(p.edges, "B", 1);
	NEAR(eval_edge_accuracy(key, &p, false), 1.0 / 3);
	NEAR(eval_edge_accuracy(empty, &p, false), 1.0);
	cJSON_Delete(key);
	cJSON_Delete(empty);
}

/* ============================== Whole scores ============================== */

struct fx {
	char dir[64];
	char path[96];
	struct store *st;
	struct eval_set *set;
	cJSON *r;
};

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct store_recording rec = { "rec1", "native", "/nonexistent/rec1", 0, 60000000000LL,
				       NULL };

	if (!f)
		return -1;
	snprintf(f->dir, sizeof(f->dir), "/tmp/test_eval.XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	snprintf(f->path, sizeof(f->path), "%s/e.db", f->dir);
	if (store_open(f->path, 0, &f->st) || store_recording_put(f->st, &rec))
		return -1;
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;
	static const char *const names[] = { "e.db", "e.db-wal", "e.db-shm", "p.jsonl", "r.json" };
	char p[160];
	size_t i;

	cJSON_Delete(f->r);
	eval_set_free(f->set);
	store_close(f->st);
	for (i = 0; i < ARRAY_SIZE(names); i++) {
		snprintf(p, sizeof(p), "%s/%s", f->dir, names[i]);
		unlink(p);
	}
	rmdir(f->dir);
	free(f);
	return 0;
}

/* Puts an approved MC QA with nopt options and key index `key`. */
static void put_mc(struct fx *f, const char *id, const char *cat, const char *sub,
		   const char *metric, int nopt, int key, int64_t t)
{
	static const char *const opt[] = { "Turn left ~95\xc2\xb0", "Turn right ~40\xc2\xb0",
					   "Keep facing forward", "Turn around",
					   "Turn right ~140\xc2\xb0", "Turn left ~40\xc2\xb0",
					   "Turn left ~140\xc2\xb0", "Turn right ~95\xc2\xb0" };
	struct store_qa q;
	struct store_review r;
	cJSON *a = cJSON_CreateArray();
	char *opts;
	int i;

	for (i = 0; i < nopt; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(opt[i]));
	opts = cJSON_PrintUnformatted(a);
	memset(&q, 0, sizeof(q));
	q.id = id;
	q.recording_id = "rec1";
	q.category = cat;
	q.subtask = sub;
	q.metric = metric;
	q.t_ns = t;
	q.clip_start_ns = t - 8000000000LL;
	q.clip_end_ns = t;
	q.question = "At the current time, how should the person turn the head to see the mug?";
	q.options_json = opts;
	q.answer_index = key;
	assert_int_equal(store_qa_put(f->st, &q, NULL), 0);
	memset(&r, 0, sizeof(r));
	r.qa_id = id;
	r.reviewer = "ann";
	r.decision = "approve";
	r.blind_answer_index = -1;
	assert_int_equal(store_review_add(f->st, &r, NULL), 0);
	free(opts);
	cJSON_Delete(a);
}

/* Puts an approved chain QA: 8 candidates, key chains given as JSON. */
static void put_chain(struct fx *f, const char *id, const char *correct, int64_t t)
{
	struct store_qa q;
	struct store_review r;
	char ans[1024];

	snprintf(ans, sizeof(ans), "{\"correct_answer\":%s,\"k\":4,\"goal\":\"Clean the board.\"}",
		 correct);
	memset(&q, 0, sizeof(q));
	q.id = id;
	q.recording_id = "rec1";
	q.category = "chain";
	q.subtask = "actions";
	q.metric = "relative";
	q.t_ns = t;
	q.clip_start_ns = t - 8000000000LL;
	q.clip_end_ns = t;
	q.question = "Based on the given input video, what sequence of actions should the "
		     "person take to finish the goal \"Clean the board\"?";
	q.options_json = "[\"Get dish soap\",\"Wash the board\",\"Turn off the faucet\","
			 "\"Shake the board\",\"Open the fridge\",\"Cut an onion\","
			 "\"Dry the hands\",\"Close the drawer\"]";
	q.answer_index = -1;
	q.answer_json = ans;
	assert_int_equal(store_qa_put(f->st, &q, NULL), 0);
	memset(&r, 0, sizeof(r));
	r.qa_id = id;
	r.reviewer = "ann";
	r.decision = "approve";
	r.blind_answer_index = -1;
	assert_int_equal(store_review_add(f->st, &r, NULL), 0);
}

static const cJSON *group(const cJSON *r, const char *name)
{
	const cJSON *g = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(r, "groups"), name);

	assert_non_null(g);
	return g;
}

static double gnum(const cJSON *g, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(g, k);

	assert_true(cJSON_IsNumber(v));
	return v->valuedouble;
}

static void load(struct fx *f)
{
	eval_set_free(f->set);
	f->set = NULL;
	assert_int_equal(eval_set_from_store(f->st, NULL, NULL, &f->set), 0);
}

static void score(struct fx *f)
{
	cJSON_Delete(f->r);
	f->r = NULL;
	assert_int_equal(eval_set_score(f->set, &f->r), 0);
}

/* A raw response: parse_answer_letter first. */
static void resp(struct fx *f, const char *id, const char *text)
{
	assert_int_equal(eval_set_response(f->set, id, text), 0);
}

/* A results file's answer, given as JSON text ("null" for None). */
static void ans(struct fx *f, const char *id, const char *json)
{
	cJSON *v = cJSON_Parse(json);

	assert_non_null(v);
	assert_int_equal(eval_set_answer(f->set, id, v), 0);
	cJSON_Delete(v);
}

/* Seven head-turn QAs, keys A B C D E A B. */
static void put_seven(struct fx *f)
{
	static const int keys[] = { 0, 1, 2, 3, 4, 0, 1 };
	char id[32];
	int i;

	for (i = 0; i < 7; i++) {
		snprintf(id, sizeof(id), "00000000000000a%d", i);
		put_mc(f, id, "intention", "head_turn", "approx", 5, keys[i], 10000000000LL + i);
	}
}

static void test_mc_mix(void **state)
{
	struct fx *f = *state;
	const cJSON *g;

	put_seven(f);
	load(f);
	assert_int_equal(eval_set_size(f->set), 7);
	resp(f, "00000000000000a0", "A");                                  /* bare: no match */
	resp(f, "00000000000000a1", "The correct answer is B");            /* right */
	resp(f, "00000000000000a2", "At first The correct answer is A seemed likely, but the "
	     "mug is behind. Therefore, The correct answer is C.");          /* right, decoy */
	resp(f, "00000000000000a3", "The correct answer is B");            /* wrong */
	resp(f, "00000000000000a4", "I cannot tell.");                     /* no match */
	resp(f, "00000000000000a5", NULL);                                 /* failed call */
	/* a6 has no answer: missing, wrong, still in the denominator */
	score(f);
	g = group(f->r, "intention.head_turn/approx");
	NEAR(gnum(g, "n"), 7);
	NEAR(gnum(g, "correct"), 2);
	NEAR(gnum(g, "accuracy"), 2.0 / 7); /* 28.57 % */
	NEAR(gnum(g, "chance"), 0.2);
	NEAR(gnum(g, "missing"), 1);
	NEAR(gnum(g, "unparsed"), 3);
	/* the lenient parse also takes the bare A: 3 of 7, under its own name */
	NEAR(gnum(g, "lenient_correct"), 3);
	NEAR(gnum(g, "lenient_accuracy"), 3.0 / 7);
	g = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(f->r, "egoprox"),
					     "Intention_Approx");
	NEAR(gnum(g, "accuracy"), 2.0 / 7);
	NEAR(gnum(f->r, "missing"), 1);
	NEAR(gnum(cJSON_GetObjectItemCaseSensitive(f->r, "predictions"), "responses"), 6);
}

/*
 * Results-file answers are compared as evaluate.py compares them:
 * answer == correct_option, nothing parsed (keys A B C D E A B).
 */
static void test_mc_answers_exact(void **state)
{
	struct fx *f = *state;
	const cJSON *g;

	put_seven(f);
	load(f);
	ans(f, "00000000000000a0", "\"A\"");                        /* right */
	ans(f, "00000000000000a1", "\"b\"");                        /* case matters */
	ans(f, "00000000000000a2", "\" C\"");                       /* so does white space */
	ans(f, "00000000000000a3", "\"The correct answer is D\"");  /* no parsing */
	ans(f, "00000000000000a4", "\"E\"");                        /* right */
	ans(f, "00000000000000a5", "null");                         /* None */
	ans(f, "00000000000000a6", "[\"B\"]");                      /* a list is no string */
	score(f);
	g = group(f->r, "intention.head_turn/approx");
	NEAR(gnum(g, "correct"), 2);
	NEAR(gnum(g, "unparsed"), 1);
	/* the lenient figure parses the strings: b is not a letter it takes, " C" and
	 * "The correct answer is D" are: 4 of 7 */
	NEAR(gnum(g, "lenient_correct"), 4);
	NEAR(gnum(cJSON_GetObjectItemCaseSensitive(f->r, "predictions"), "answers"), 7);
}

static void test_mc_all_right_all_wrong(void **state)
{
	struct fx *f = *state;
	static const char *const right[] = { "A", "B", "C", "D", "E", "A", "B" };
	static const char *const wrong[] = { "B", "C", "D", "E", "A", "B", "C" };
	char id[32];
	int i;

	put_seven(f);
	put_mc(f, "00000000000000b0", "exploration", "navigate", "relative", 8, 7, 20000000000LL);
	load(f);
	for (i = 0; i < 7; i++) {
		snprintf(id, sizeof(id), "00000000000000a%d", i);
		resp(f, id, right[i]);
	}
	/* EgoProx's pattern stops at E: an 8-option key H is never matched by it */
	resp(f, "00000000000000b0", "Looking at the layout, the correct answer is H.");
	score(f);
	/* bare letters are no match for parse_answer_letter */
	NEAR(gnum(group(f->r, "intention.head_turn/approx"), "accuracy"), 0.0);
	NEAR(gnum(group(f->r, "intention.head_turn/approx"), "lenient_accuracy"), 1.0);
	NEAR(gnum(group(f->r, "exploration.navigate/relative"), "accuracy"), 0.0);
	NEAR(gnum(group(f->r, "exploration.navigate/relative"), "lenient_accuracy"), 1.0);
	NEAR(gnum(group(f->r, "exploration.navigate/relative"), "chance"), 1.0 / 8);
	NEAR(gnum(cJSON_GetObjectItemCaseSensitive(f->r, "overall_mc"), "lenient_accuracy"), 1.0);
	for (i = 0; i < 7; i++) {
		char t[64];

		snprintf(id, sizeof(id), "00000000000000a%d", i);
		snprintf(t, sizeof(t), "The correct answer is %s", right[i]);
		resp(f, id, t);
	}
	score(f);
	NEAR(gnum(group(f->r, "intention.head_turn/approx"), "accuracy"), 1.0);
	for (i = 0; i < 7; i++) {
		char t[64];

		snprintf(id, sizeof(id), "00000000000000a%d", i);
		snprintf(t, sizeof(t), "\"%s\"", wrong[i]);
		ans(f, id, t);
	}
	score(f);
	NEAR(gnum(group(f->r, "intention.head_turn/approx"), "accuracy"), 0.0);
	NEAR(gnum(group(f->r, "intention.head_turn/approx"), "unparsed"), 0);
	NEAR(gnum(cJSON_GetObjectItemCaseSensitive(f->r, "predictions"), "repeated_ids"), 14);
}

static const char two_orders[] =
	"[{\"node\":[1,2,3,4],\"edge\":[\"B\",\"E\",\"G\"]},"
	"{\"node\":[2,1,3,4],\"edge\":[\"A\",\"F\",\"G\"]}]";

static void test_chain_scores(void **state)
{
	struct fx *f = *state;
	const cJSON *g, *c;

	put_chain(f, "00000000000000c0", two_orders, 30000000000LL);
	put_chain(f, "00000000000000c1", two_orders, 30000000001LL);
	put_chain(f, "00000000000000c2", two_orders, 30000000002LL);
	put_chain(f, "00000000000000c3", two_orders, 30000000003LL);
	put_chain(f, "00000000000000c4", two_orders, 30000000004LL);
	put_chain(f, "00000000000000c5", two_orders, 30000000005LL);
	load(f);
	/* right order, one wrong edge of L = 3: S = L-1 / L = 2/3 */
	resp(f, "00000000000000c0", "[[1,2,3,4],[\"B\",\"E\",\"A\"]]");
	/* the other valid order, scored against its own edges, lenient neighbours:
	 * key A F G, answer E C D: strict 0, lenient 3 of 3 */
	resp(f, "00000000000000c1", "[[2,1,3,4],[\"E\",\"C\",\"D\"]]");
	/* a wrong action set: parsed, not node-correct */
	resp(f, "00000000000000c2", "[[1,2,3,5],[\"B\",\"E\",\"G\"]]");
	/* unparsable and wrong length: dropped from every denominator */
	resp(f, "00000000000000c3", "Get the soap first, then wash the board.");
	resp(f, "00000000000000c4", "[[1,2,3],[\"B\",\"E\"]]");
	/* c5 missing: dropped, reported */
	score(f);
	g = group(f->r, "chain.actions/relative");
	NEAR(gnum(g, "n"), 6);
	NEAR(gnum(g, "evaluated"), 3);
	NEAR(gnum(g, "node_correct"), 2);
	NEAR(gnum(g, "act_acc"), 2.0 / 3);
	NEAR(gnum(g, "rel_acc_s"), (2.0 / 3 + 0) / 2);
	NEAR(gnum(g, "rel_acc_l"), (2.0 / 3 + 1) / 2);
	NEAR(gnum(g, "dropped_unparsable"), 1);
	NEAR(gnum(g, "dropped_length"), 1);
	NEAR(gnum(g, "missing"), 1);
	/* the strict score keeps all 6 in the denominator */
	NEAR(gnum(g, "scored"), 6);
	NEAR(gnum(g, "strict_act_acc"), 2.0 / 6);
	NEAR(gnum(g, "strict_rel_acc_s"), (2.0 / 3 + 0) / 6);
	NEAR(gnum(g, "strict_rel_acc_l"), (2.0 / 3 + 1) / 6);
	/* chance: 2 valid orders among 8 * 7 * 6 * 5 = 1680 ordered picks */
	c = cJSON_GetObjectItemCaseSensitive(g, "chance");
	NEAR(gnum(c, "act_acc"), 2.0 / 1680);
	NEAR(gnum(c, "rel_acc_s"), 1.0 / 8);
	NEAR(gnum(c, "rel_acc_l"), 3.0 / 8);
	g = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(f->r, "egoprox"),
					     "Chain of Actions");
	NEAR(gnum(g, "act_acc"), 2.0 / 3);
}

static void test_chain_none_node_correct(void **state)
{
	struct fx *f = *state;
	const cJSON *g;

	put_chain(f, "00000000000000d0", two_orders, 40000000000LL);
	put_chain(f, "00000000000000d1", "[]", 40000000001LL);
	load(f);
	resp(f, "00000000000000d0", "[[4,3,2,1],[\"B\",\"E\",\"G\"]]");
	resp(f, "00000000000000d1", "[[1,2,3,4],[\"B\",\"E\",\"G\"]]");
	score(f);
	g = group(f->r, "chain.actions/relative");
	NEAR(gnum(g, "evaluated"), 1);
	NEAR(gnum(g, "act_acc"), 0);
	NEAR(gnum(g, "rel_acc_s"), 0);
	NEAR(gnum(g, "rel_acc_l"), 0);
	/* an empty key list is skipped, as evaluate.py skips it */
	NEAR(gnum(g, "invalid_key"), 1);
}

/*
 * A blind answer of constant length: EgoProx drops the chains of other
 * lengths, so answering [[1,2,3],...] everywhere scores on the K = 3
 * chains only. Ten chains: three of K = 3 (one keyed 1 2 3), four of
 * K = 4, three of K = 5. EgoProx: 1 of 3 = 33.33 %; strict: 1 of 10.
 */
static void test_chain_blind_constant_length(void **state)
{
	struct fx *f = *state;
	static const char *const keys[] = {
		"[{\"node\":[1,2,3],\"edge\":[\"A\",\"B\"]}]",
		"[{\"node\":[2,1,3],\"edge\":[\"A\",\"B\"]}]",
		"[{\"node\":[3,1,2],\"edge\":[\"A\",\"B\"]}]",
		"[{\"node\":[1,2,3,4],\"edge\":[\"A\",\"B\",\"C\"]}]",
		"[{\"node\":[1,2,4,3],\"edge\":[\"A\",\"B\",\"C\"]}]",
		"[{\"node\":[4,2,3,1],\"edge\":[\"A\",\"B\",\"C\"]}]",
		"[{\"node\":[1,3,2,4],\"edge\":[\"A\",\"B\",\"C\"]}]",
		"[{\"node\":[1,2,3,4,5],\"edge\":[\"A\",\"B\",\"C\",\"D\"]}]",
		"[{\"node\":[5,4,3,2,1],\"edge\":[\"A\",\"B\",\"C\",\"D\"]}]",
		"[{\"node\":[1,2,3,5,4],\"edge\":[\"A\",\"B\",\"C\",\"D\"]}]",
	};
	const cJSON *g;
	char id[32];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(keys); i++) {
		snprintf(id, sizeof(id), "00000000000000e%zu", i);
		put_chain(f, id, keys[i], 50000000000LL + (int64_t)i);
	}
	load(f);
	for (i = 0; i < ARRAY_SIZE(keys); i++) {
		snprintf(id, sizeof(id), "00000000000000e%zu", i);
		resp(f, id, "[[1,2,3],[\"A\",\"B\"]]");
	}
	score(f);
	g = group(f->r, "chain.actions/relative");
	NEAR(gnum(g, "evaluated"), 3);
	NEAR(gnum(g, "dropped_length"), 7);
	NEAR(gnum(g, "act_acc"), 1.0 / 3);
	NEAR(gnum(g, "rel_acc_s"), 1.0);
	NEAR(gnum(g, "strict_act_acc"), 1.0 / 10);
	NEAR(gnum(g, "strict_rel_acc_s"), 1.0 / 10);
}

static void write_text(const char *path, const char *text)
{
	FILE *fp = fopen(path, "w");

	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
}

static void test_predictions_files(void **state)
{
	struct fx *f = *state;
	char p[160];
	int rc;

	put_seven(f);
	put_chain(f, "00000000000000c0", two_orders, 30000000000LL);
	load(f);
	snprintf(p, sizeof(p), "%s/p.jsonl", f->dir);
	write_text(p, "{\"id\":\"00000000000000a0\",\"answer\":\"A\"}\n\n"
		   "{\"id\":\"00000000000000a1\",\"response\":\"The correct answer is B\"}\n"
		   "{\"id\":\"00000000000000a2\",\"answer\":\"The correct answer is C\"}\n"
		   "{\"id\":\"00000000000000a3\",\"answer\":\"D\",\"response\":\"No idea\"}\n"
		   "{\"id\":\"ffffffffffffffff\",\"answer\":\"A\"}\n"
		   "{\"id\":\"00000000000000c0\",\"response\":\"[[1,2,3,4],[\\\"B\\\",\\\"E\\\",\\\"G\\\"]]\"}\n");
	assert_int_equal(eval_set_read_predictions(f->set, p), 0);
	score(f);
	/* a0 right; a1 right through parse_answer_letter; a2's answer is compared as
	 * it is (wrong); a3 is scored from its response (no letter) */
	NEAR(gnum(group(f->r, "intention.head_turn/approx"), "correct"), 2);
	NEAR(gnum(group(f->r, "intention.head_turn/approx"), "missing"), 3);
	NEAR(gnum(group(f->r, "intention.head_turn/approx"), "unparsed"), 1);
	NEAR(gnum(group(f->r, "chain.actions/relative"), "rel_acc_s"), 1);
	NEAR(gnum(cJSON_GetObjectItemCaseSensitive(f->r, "predictions"), "unknown_ids"), 1);
	NEAR(gnum(cJSON_GetObjectItemCaseSensitive(f->r, "predictions"), "total"), 6);
	NEAR(gnum(cJSON_GetObjectItemCaseSensitive(f->r, "predictions"), "responses"), 3);

	/* a JSON array as a JSONL answer is no string: parse_llm_answer gives None */
	write_text(p, "{\"id\":\"00000000000000c0\",\"answer\":[[1,2,3,4],[\"B\",\"E\",\"G\"]]}\n");
	assert_int_equal(eval_set_read_predictions(f->set, p), 0);
	score(f);
	NEAR(gnum(group(f->r, "chain.actions/relative"), "dropped_unparsable"), 1);
	/* a response must be text or null */
	write_text(p, "{\"id\":\"00000000000000c0\",\"response\":5}\n");
	err_clear();
	assert_int_equal(eval_set_read_predictions(f->set, p), ENG_EPARSE);
	assert_non_null(strstr(err_msg(), "p.jsonl:1: \"response\" must be a string or null"));
	/* Python's json.loads rules apply to each line: a raw TAB in a string */
	write_text(p, "{\"id\":\"00000000000000a0\",\"answer\":\"A\t\"}\n");
	err_clear();
	assert_int_equal(eval_set_read_predictions(f->set, p), ENG_EPARSE);
	assert_non_null(strstr(err_msg(), "p.jsonl:1:37: Invalid control character at"));

	/* a results array: a non-string chain answer is unparsable, as in evaluate.py */
	snprintf(p, sizeof(p), "%s/r.json", f->dir);
	write_text(p, "[{\"id\":\"00000000000000c0\",\"answer\":[[1,2,3,4],[\"B\",\"E\",\"G\"]]}]");
	assert_int_equal(eval_set_read_predictions(f->set, p), 0);
	score(f);
	NEAR(gnum(group(f->r, "chain.actions/relative"), "dropped_unparsable"), 1);
	/* a results file takes "answer" only, as evaluate.py does */
	write_text(p, "[{\"id\":\"00000000000000a0\",\"answer\":\"B\",\"response\":\"The correct "
		   "answer is A\"}]");
	assert_int_equal(eval_set_read_predictions(f->set, p), 0);
	score(f);
	NEAR(gnum(group(f->r, "intention.head_turn/approx"), "correct"), 1); /* a1 from before */
	/* a file json.load refuses is named with line and column */
	write_text(p, "[{\"id\":\"00000000000000a0\",\n \"answer\":01}]");
	err_clear();
	assert_int_equal(eval_set_read_predictions(f->set, p), ENG_EPARSE);
	assert_non_null(strstr(err_msg(), "r.json:2:12: Expecting ',' delimiter"));

	/* bad lines are named */
	snprintf(p, sizeof(p), "%s/p.jsonl", f->dir);
	write_text(p, "{\"id\":\"00000000000000a0\",\"answer\":\"A\"}\n{\"id\": oops}\n");
	err_clear();
	rc = eval_set_read_predictions(f->set, p);
	assert_int_equal(rc, ENG_EPARSE);
	assert_non_null(strstr(err_msg(), "p.jsonl:2"));
	write_text(p, "{\"answer\":\"A\"}\n");
	assert_int_equal(eval_set_read_predictions(f->set, p), ENG_EPARSE);
	snprintf(p, sizeof(p), "%s/none.jsonl", f->dir);
	assert_int_equal(eval_set_read_predictions(f->set, p), ENG_ENOENT);
}

static void test_results_file_is_its_own_key(void **state)
{
	struct fx *f = *state;
	char p[160];
	const cJSON *g;

	snprintf(p, sizeof(p), "%s/r.json", f->dir);
	/* evaluate.py: MC answers are compared with correct_option as they are,
	 * an unknown source is ignored, None is wrong */
	write_text(p, "[{\"id\":1,\"source\":\"Intention_Approx\",\"correct_option\":\"C\","
		   "\"data\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":"
		   "\"Q?\\nA. a\\nB. b\\nC. c\\nD. d\\nE. e\\nThe end\"}]}],\"answer\":\"C\"},"
		   "{\"id\":2,\"source\":\"Intention_Approx\",\"correct_option\":\"A\",\"answer\":null},"
		   "{\"id\":3,\"source\":\"Other\",\"correct_option\":\"A\",\"answer\":\"A\"},"
		   "{\"id\":4,\"source\":\"Chain of Actions\",\"user_prompt\":\"Candidates: "
		   "1. a; 2. b; 3. c; 4. d; 5. e\",\"correct_answer\":"
		   "[{\"node\":[1,2],\"edge\":[\"C\"]}],\"answer\":\"[[1,2],[\\\"F\\\"]]\"}]");
	assert_int_equal(eval_set_from_results(p, &f->set), 0);
	assert_int_equal(eval_set_size(f->set), 3);
	score(f);
	g = group(f->r, "Intention_Approx");
	NEAR(gnum(g, "n"), 2);
	NEAR(gnum(g, "accuracy"), 0.5);
	NEAR(gnum(g, "chance"), 0.2); /* 5 options read from the prompt */
	g = group(f->r, "Chain of Actions");
	NEAR(gnum(g, "act_acc"), 1);
	NEAR(gnum(g, "rel_acc_s"), 0);
	NEAR(gnum(g, "rel_acc_l"), 1);
	NEAR(gnum(cJSON_GetObjectItemCaseSensitive(g, "chance"), "act_acc"), 1.0 / 20);
	NEAR(gnum(cJSON_GetObjectItemCaseSensitive(f->r, "predictions"), "ignored_key_items"), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_letter_basic),
		cmocka_unit_test(test_letter_last_match_wins),
		cmocka_unit_test(test_letter_egoprox_vs_lenient),
		cmocka_unit_test(test_chain_json),
		cmocka_unit_test(test_chain_fallback),
		cmocka_unit_test(test_chain_dropped),
		cmocka_unit_test(test_chain_python_json),
		cmocka_unit_test(test_edge_accuracy),
		cmocka_unit_test_setup_teardown(test_mc_mix, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_mc_all_right_all_wrong, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_chain_scores, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_chain_none_node_correct, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_chain_blind_constant_length, fx_setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_mc_answers_exact, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_predictions_files, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_results_file_is_its_own_key, fx_setup,
						fx_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
