/* SPDX-License-Identifier: MIT */
/*
 * Exports: every format is written from a store built here, read back
 * (JSON, JSONL, a quote-aware TSV reader) and compared field by field
 * with the store; the manifest's counts and id digest; the task and
 * status filters; frames listed without a video, a broken video, and
 * frames extracted from a tiny video made by ffmpeg (skipped when ffmpeg
 * is not installed).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <inttypes.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "buf.h"
#include "err.h"
#include "export.h"
#include "hash.h"
#include "store.h"

extern char **environ;

/* ============================== Fixture ============================== */

struct fx {
	char dir[64];     /* temporary folder */
	char db[96];      /* the store */
	char out[96];     /* export folder */
	struct store *st;
};

/* rm -r of the temporary folder through a child process (argument vector). */
static void remove_tree(const char *dir)
{
	char *argv[] = { (char *)(uintptr_t)"rm", (char *)(uintptr_t)"-rf", NULL, NULL };
	pid_t pid;
	int st;

	argv[2] = (char *)(uintptr_t)dir;
	if (strncmp(dir, "/tmp/test_export.", 17))
		return;
	if (!posix_spawnp(&pid, "rm", NULL, NULL, argv, environ))
		waitpid(pid, &st, 0);
}

static void put_rec(struct store *st, const char *id, const char *root)
{
	struct store_recording r = { id, "native", root, 0, 60000000000LL, NULL };

	assert_int_equal(store_recording_put(st, &r), 0);
}

static const char *const opts8[] = {
	"Turn left ~95\xc2\xb0", "Turn right ~40\xc2\xb0", "Keep facing forward", "Turn around",
	"Turn right ~140\xc2\xb0", "Turn left ~40\xc2\xb0", "Turn left ~140\xc2\xb0",
	"Turn right ~95\xc2\xb0"
};

static const char *const cands[] = {
	"Get dish soap", "Wash the cutting board", "Turn off the faucet", "Shake the board",
	"Open the fridge", "Cut an onion", "Dry the hands", "Close the drawer"
};

static const char chain_answer[] =
	"{\"correct_answer\":[{\"node\":[1,2,3,4],\"edge\":[\"B\",\"E\",\"G\"]},"
	"{\"node\":[2,1,3,4],\"edge\":[\"A\",\"F\",\"G\"]}],"
	"\"chain\":{\"kind\":\"chain.actions.relative\",\"nodes\":[1,2,3,4],"
	"\"edges\":[\"left\",\"front-right\",\"back-left\"]},\"k\":4,\"goal\":\"Clean the board.\"}";

static void put(struct fx *f, const char *id, const char *rec, const char *cat,
		const char *sub, const char *metric, int64_t t, int nopt, int key,
		const char *frames, const char *question)
{
	struct store_qa q;
	cJSON *a = cJSON_CreateArray();
	char *o;
	int i;

	for (i = 0; i < nopt; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(key < 0 ? cands[i] : opts8[i]));
	o = cJSON_PrintUnformatted(a);
	memset(&q, 0, sizeof(q));
	q.id = id;
	q.run_id = 0;
	q.recording_id = rec;
	q.category = cat;
	q.subtask = sub;
	q.metric = metric;
	q.t_ns = t;
	q.clip_start_ns = t - 8000000000LL;
	q.clip_end_ns = t;
	q.frames_json = frames;
	q.target = "mug";
	q.question = question;
	q.options_json = o;
	q.answer_index = key;
	q.answer_json = key < 0 ? chain_answer : "{\"kind\":\"intention.head_turn.approx\",\"yaw_deg\":95}";
	q.gt_json = "{\"yaw_deg\":96.2}";
	q.qc_json = "{\"z\":0.25,\"pass\":true}";
	assert_int_equal(store_qa_put(f->st, &q, NULL), 0);
	free(o);
	cJSON_Delete(a);
}

static void decide(struct fx *f, const char *id, const char *decision, const char *note,
		   const char *edit)
{
	struct store_review r;

	memset(&r, 0, sizeof(r));
	r.qa_id = id;
	r.reviewer = !strcmp(decision, "reject") ? "bob" : "ann";
	r.decision = decision;
	r.blind_answer_index = -1;
	r.note = note;
	r.edit_after = edit;
	assert_int_equal(store_review_add(f->st, &r, NULL), 0);
}

/* A big device time (> 2^53 ns) checks that times are written exactly. */
#define T_BIG 1712345678901234567LL

static const char q1_edited[] = "Which way,\tnow, to see the \"red\" mug?\nAnswer briefly.";

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	snprintf(f->dir, sizeof(f->dir), "/tmp/test_export.XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	snprintf(f->db, sizeof(f->db), "%s/p.db", f->dir);
	snprintf(f->out, sizeof(f->out), "%s/out", f->dir);
	if (store_open(f->db, 0, &f->st))
		return -1;
	*state = f;
	put_rec(f->st, "rec1", "/nonexistent/rec1");
	put(f, "00000000000000a0", "rec1", "intention", "head_turn", "approx", 10000000000LL, 5, 2,
	    "[2000000000,3000000000,4000000000,5000000000,6000000000,7000000000,8000000000,"
	    "10000000000]", "At the current time, how should the person turn the head to see the mug?");
	decide(f, "00000000000000a0", "note", "clear", NULL);
	decide(f, "00000000000000a0", "approve", NULL, NULL);
	put(f, "00000000000000a1", "rec1", "intention", "head_turn", "relative", 11000000000LL, 5, 0,
	    NULL, "Where is the mug?");
	decide(f, "00000000000000a1", "edit", NULL, q1_edited);
	put(f, "00000000000000a2", "rec1", "exploration", "navigate", "approx", T_BIG, 8, 7,
	    NULL, "Which navigation plan reaches the kettle?");
	decide(f, "00000000000000a2", "approve", NULL, NULL);
	put(f, "00000000000000a3", "rec1", "chain", "actions", "relative", 13000000000LL, 8, -1,
	    NULL, "Based on the given input video, what sequence of actions should the person take "
	    "to finish the goal \"Clean the board\"?");
	decide(f, "00000000000000a3", "approve", NULL, NULL);
	put(f, "00000000000000a4", "rec1", "exploitation", "next_interaction", "relative",
	    14000000000LL, 5, 1, NULL, "What will the person do next?");
	decide(f, "00000000000000a4", "reject", "wrong object", NULL);
	put(f, "00000000000000a5", "rec1", "intention", "gaze_target", "approx", 15000000000LL, 5, 3,
	    NULL, "Where will the person look next?");
	put(f, "00000000000000a6", "rec1", "other", "misc", "approx", 16000000000LL, 5, 4,
	    NULL, "Which one?");
	decide(f, "00000000000000a6", "approve", NULL, NULL);
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;

	store_close(f->st);
	remove_tree(f->dir);
	free(f);
	return 0;
}

/* ============================== Reading back ============================== */

static char *read_all(const char *path)
{
	FILE *fp = fopen(path, "rb");
	long n;
	char *b;

	assert_non_null(fp);
	assert_int_equal(fseek(fp, 0, SEEK_END), 0);
	n = ftell(fp);
	rewind(fp);
	b = malloc((size_t)n + 1);
	assert_non_null(b);
	assert_int_equal(fread(b, 1, (size_t)n, fp), (size_t)n);
	b[n] = '\0';
	fclose(fp);
	return b;
}

static cJSON *read_json(const struct fx *f, const char *name)
{
	char p[160], *t;
	cJSON *j;

	snprintf(p, sizeof(p), "%s/%s", f->out, name);
	t = read_all(p);
	j = cJSON_Parse(t);
	free(t);
	assert_non_null(j);
	return j;
}

/* The lines of a JSONL file as a cJSON array. */
static cJSON *read_jsonl(const struct fx *f, const char *name)
{
	char p[160], *t, *s, *nl;
	cJSON *a = cJSON_CreateArray();

	snprintf(p, sizeof(p), "%s/%s", f->out, name);
	t = read_all(p);
	for (s = t; *s; s = nl + 1) {
		cJSON *o;

		nl = strchr(s, '\n');
		assert_non_null(nl); /* every record ends with a newline */
		*nl = '\0';
		o = cJSON_Parse(s);
		assert_non_null(o);
		cJSON_AddItemToArray(a, o);
	}
	free(t);
	return a;
}

static const char *js(const cJSON *o, const char *k)
{
	const char *s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, k));

	return s ? s : "(none)";
}

static double jn(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

	assert_true(cJSON_IsNumber(v));
	return v->valuedouble;
}

static const cJSON *jo(const cJSON *o, const char *k)
{
	return cJSON_GetObjectItemCaseSensitive(o, k);
}

static cJSON *stored(struct fx *f, const char *id)
{
	cJSON *q = NULL;

	assert_int_equal(store_qa_get(f->st, id, STORE_GET_REVIEWS, &q), 0);
	return q;
}

/* The stored key index; -1 for chains (stored as null). */
static int key_index(const cJSON *q)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(q, "answer_index");

	return cJSON_IsNumber(v) ? (int)v->valuedouble : -1;
}

static void run(struct fx *f, enum export_format fmt, const char *status, const char *tasks,
		int frames, struct export_summary *sum)
{
	struct export_params p;
	int rc;

	memset(&p, 0, sizeof(p));
	p.format = fmt;
	p.dir = f->out;
	p.status = status;
	p.tasks = tasks;
	p.frames = frames;
	p.engine_version = "9.9.9-test";
	err_clear();
	rc = export_run(f->st, &p, sum);
	if (rc)
		fprintf(stderr, "export_run: %s\n", err_msg());
	assert_int_equal(rc, 0);
}

/* The expected MC prompt text of a stored QA, built here independently. */
static char *expect_mc_text(const cJSON *q)
{
	struct buf b;
	const cJSON *o;
	const char *qe = cJSON_GetStringValue(jo(q, "question_edited"));
	int i = 0;

	buf_init(&b, 1 << 20);
	buf_adds(&b, qe ? qe : js(q, "question"));
	buf_adds(&b, "\n");
	cJSON_ArrayForEach(o, jo(q, "options"))
		buf_addf(&b, "%c. %s\n", 'A' + i++, o->valuestring);
	buf_adds(&b, "Think step by step, then end your reply with \"The correct answer is <X>\", "
		 "where X is the letter of the correct option.");
	return buf_detach(&b);
}

/* SHA-256 of the sorted ids, each followed by '\n' (ids given sorted). */
static void expect_digest(const cJSON *man, const char *const *ids, size_t n)
{
	struct buf b;
	char hex[HASH_HEX_LEN + 1];
	size_t i;

	buf_init(&b, 1 << 16);
	for (i = 0; i < n; i++)
		buf_addf(&b, "%s\n", ids[i]);
	assert_int_equal(hash_hex(buf_str(&b), b.len, hex), 0);
	assert_string_equal(js(man, "ids_sha256"), hex);
	buf_release(&b);
}

/* ============================== Formats ============================== */

static void test_egoprox(void **state)
{
	struct fx *f = *state;
	/* store order: recording, T, id (a2 has the largest T) */
	static const char *const want_ids[] = { "00000000000000a0", "00000000000000a1",
						"00000000000000a3", "00000000000000a2" };
	static const char *const want_src[] = { "Intention_Approx", "Intention_Relative",
						"Chain of Actions", "Exploration_Approx" };
	static const char *const sorted_ids[] = { "00000000000000a0", "00000000000000a1",
						  "00000000000000a2", "00000000000000a3" };
	struct export_summary sum;
	cJSON *arr, *man;
	const cJSON *it;
	int i = 0;

	run(f, EXPORT_EGOPROX, NULL, NULL, 0, &sum);
	assert_int_equal(sum.exported, 4);
	assert_int_equal(sum.skipped, 1); /* "other" has no EgoProx source */
	arr = read_json(f, "egoprox.json");
	assert_int_equal(cJSON_GetArraySize(arr), 4);
	cJSON_ArrayForEach(it, arr) {
		cJSON *q = stored(f, want_ids[i]);
		char name[64];
		int k;

		assert_string_equal(js(it, "id"), want_ids[i]);
		assert_string_equal(js(it, "source"), want_src[i]);
		if (i != 2) {
			const cJSON *turns = jo(it, "data"), *content;
			char *text = expect_mc_text(q), l[2] = { 0, 0 };

			/* exactly the fields evaluate.py and the inference scripts read */
			assert_int_equal(cJSON_GetArraySize(it), 4);
			assert_int_equal(cJSON_GetArraySize(turns), 1);
			assert_string_equal(js(cJSON_GetArrayItem(turns, 0), "role"), "user");
			content = jo(cJSON_GetArrayItem(turns, 0), "content");
			assert_int_equal(cJSON_GetArraySize(content), 9); /* 8 frames + text */
			for (k = 0; k < 8; k++) {
				const cJSON *c = cJSON_GetArrayItem(content, k);

				snprintf(name, sizeof(name), "Frames/%s/%03d.jpg", want_ids[i], k + 1);
				assert_string_equal(js(c, "type"), "image");
				assert_string_equal(js(c, "image"), name);
			}
			assert_string_equal(js(cJSON_GetArrayItem(content, 8), "type"), "text");
			assert_string_equal(js(cJSON_GetArrayItem(content, 8), "text"), text);
			l[0] = (char)('A' + key_index(q));
			assert_string_equal(js(it, "correct_option"), l);
			free(text);
		} else {
			const cJSON *img = jo(it, "image");
			const char *up = js(it, "user_prompt");

			assert_int_equal(cJSON_GetArraySize(it), 6);
			assert_true(strlen(js(it, "system_prompt")) > 100);
			assert_non_null(strstr(js(it, "system_prompt"), "A right, B left, C front"));
			/* the question did not list the candidates, so they follow it */
			assert_int_equal(strncmp(up, js(q, "question"), strlen(js(q, "question"))), 0);
			assert_non_null(strstr(up, "\nCandidate actions:\n1. Get dish soap\n2. Wash"));
			assert_non_null(strstr(up, "\n8. Close the drawer"));
			assert_int_equal(cJSON_GetArraySize(img), 8);
			assert_string_equal(cJSON_GetArrayItem(img, 7)->valuestring,
					    "Frames/00000000000000a3/008.jpg");
			assert_true(cJSON_Compare(jo(it, "correct_answer"),
						  jo(jo(q, "answer"), "correct_answer"), 1));
		}
		cJSON_Delete(q);
		i++;
	}
	cJSON_Delete(arr);

	man = read_json(f, "manifest.json");
	assert_string_equal(js(man, "format"), "egoprox");
	assert_string_equal(js(man, "engine_version"), "9.9.9-test");
	assert_int_equal(strlen(js(man, "created_at")), 24);
	assert_string_equal(js(jo(man, "filters"), "status"), "approved,edited");
	assert_true(cJSON_IsNull(jo(jo(man, "filters"), "tasks")));
	assert_int_equal((int)jn(jo(man, "counts"), "total"), 4);
	assert_int_equal((int)jn(jo(jo(man, "counts"), "groups"), "intention.head_turn/approx"), 1);
	assert_int_equal((int)jn(jo(jo(man, "counts"), "groups"), "chain.actions/relative"), 1);
	assert_int_equal((int)jn(jo(jo(man, "counts"), "skipped"), "no_egoprox_source"), 1);
	assert_int_equal((int)jn(jo(jo(man, "config"), "options"), "5"), 2);
	assert_int_equal((int)jn(jo(jo(man, "config"), "options"), "8"), 1);
	assert_int_equal((int)jn(jo(jo(man, "config"), "chain_candidates"), "8"), 1);
	assert_true(cJSON_IsFalse(jo(jo(man, "frames"), "extracted")));
	assert_non_null(strstr(js(jo(man, "frames"), "note"), "not extracted"));
	expect_digest(man, sorted_ids, 4);
	assert_string_equal(js(man, "ids_sha256"), sum.ids_sha256);
	cJSON_Delete(man);
}

static void test_jsonl(void **state)
{
	struct fx *f = *state;
	struct export_summary sum;
	cJSON *arr;
	const cJSON *r;
	char p[160], *text;
	int n = 0;

	run(f, EXPORT_JSONL, NULL, NULL, 0, &sum);
	assert_int_equal(sum.exported, 5);
	arr = read_jsonl(f, "records.jsonl");
	assert_int_equal(cJSON_GetArraySize(arr), 5);
	cJSON_ArrayForEach(r, arr) {
		cJSON *q = stored(f, js(r, "id"));
		const char *qe = cJSON_GetStringValue(jo(q, "question_edited"));
		char group[128];

		snprintf(group, sizeof(group), "%s.%s/%s", js(q, "category"), js(q, "subtask"),
			 js(q, "metric"));
		assert_string_equal(js(r, "group"), group);
		assert_string_equal(js(r, "recording_id"), js(q, "recording_id"));
		assert_string_equal(js(r, "category"), js(q, "category"));
		assert_string_equal(js(r, "subtask"), js(q, "subtask"));
		assert_string_equal(js(r, "metric"), js(q, "metric"));
		assert_true(jn(r, "t_ns") == jn(q, "t_ns"));
		assert_true(jn(r, "clip_start_ns") == jn(q, "clip_start_ns"));
		assert_true(jn(r, "clip_end_ns") == jn(q, "clip_end_ns"));
		assert_string_equal(js(r, "target"), js(q, "target"));
		assert_string_equal(js(r, "question"), qe ? qe : js(q, "question"));
		assert_string_equal(js(r, "question_original"), js(q, "question"));
		assert_int_equal(cJSON_IsTrue(jo(r, "edited")), qe != NULL);
		assert_true(cJSON_Compare(jo(r, "options"), jo(q, "options"), 1));
		assert_true(cJSON_Compare(jo(r, "answer"), jo(q, "answer"), 1));
		assert_true(cJSON_Compare(jo(r, "gt"), jo(q, "gt"), 1));
		assert_true(cJSON_Compare(jo(r, "qc"), jo(q, "qc"), 1));
		assert_int_equal((int)jn(r, "answer_index"), key_index(q));
		if (key_index(q) >= 0) {
			char l[2] = { (char)('A' + key_index(q)), 0 };

			assert_string_equal(js(r, "answer_letter"), l);
		} else {
			assert_true(cJSON_IsNull(jo(r, "answer_letter")));
			assert_true(cJSON_Compare(jo(r, "correct_answer"),
						  jo(jo(q, "answer"), "correct_answer"), 1));
		}
		assert_string_equal(js(jo(r, "review"), "status"), js(q, "status"));
		assert_int_equal(cJSON_GetArraySize(jo(jo(r, "review"), "decisions")),
				 cJSON_GetArraySize(jo(q, "reviews")));
		if (!strcmp(js(r, "id"), "00000000000000a0")) {
			/* stored frame times; two reviews by ann: a note and the approval */
			assert_int_equal(cJSON_GetArraySize(jo(r, "frame_times_ns")), 8);
			assert_true(cJSON_GetArrayItem(jo(r, "frame_times_ns"), 0)->valuedouble ==
				    2000000000.0);
			assert_true(cJSON_GetArrayItem(jo(r, "frame_times_ns"), 7)->valuedouble ==
				    10000000000.0);
			assert_int_equal(cJSON_GetArraySize(jo(jo(r, "review"), "reviewers")), 1);
			assert_string_equal(cJSON_GetArrayItem(jo(jo(r, "review"), "notes"), 0)
					    ->valuestring, "clear");
			assert_string_equal(js(cJSON_GetArrayItem(jo(jo(r, "review"), "decisions"), 1),
					       "decision"), "approve");
		}
		if (!strcmp(js(r, "id"), "00000000000000a1"))
			assert_string_equal(js(jo(r, "review"), "status"), "edited");
		cJSON_Delete(q);
		n++;
	}
	assert_int_equal(n, 5);
	cJSON_Delete(arr);
	/* times past 2^53 ns are written as exact integers */
	snprintf(p, sizeof(p), "%s/records.jsonl", f->out);
	text = read_all(p);
	assert_non_null(strstr(text, "\"t_ns\":1712345678901234567,"));
	assert_non_null(strstr(text, "\"frame_times_ns\":[1712345670901234567,"));
	free(text);
}

static void test_lmms_eval(void **state)
{
	struct fx *f = *state;
	struct export_summary sum;
	cJSON *arr;
	const cJSON *r;
	char p[160], *yaml;

	run(f, EXPORT_LMMS_EVAL, NULL, "intention,chain", 0, &sum);
	assert_int_equal(sum.exported, 3);
	arr = read_jsonl(f, "proxima.jsonl");
	cJSON_ArrayForEach(r, arr) {
		cJSON *q = stored(f, js(r, "id"));
		const char *qe = cJSON_GetStringValue(jo(q, "question_edited"));
		char v[64];

		assert_string_equal(js(r, "dataset"), "proxima");
		assert_string_equal(js(r, "scene_name"), "rec1");
		snprintf(v, sizeof(v), "Frames/%s", js(r, "id"));
		assert_string_equal(js(r, "video"), v);
		if (key_index(q) >= 0) {
			char l[2] = { (char)('A' + key_index(q)), 0 };
			const cJSON *o = jo(r, "options");

			assert_string_equal(js(r, "question"), qe ? qe : js(q, "question"));
			assert_int_equal(cJSON_GetArraySize(o), 5);
			assert_string_equal(cJSON_GetArrayItem(o, 1)->valuestring,
					    "B. Turn right ~40\xc2\xb0");
			assert_string_equal(js(r, "ground_truth"), l);
		} else {
			assert_string_equal(js(r, "question_type"), "chain_actions_relative");
			assert_string_equal(js(r, "ground_truth"), "[[1,2,3,4],[\"B\",\"E\",\"G\"]]");
			assert_string_equal(cJSON_GetArrayItem(jo(r, "options"), 0)->valuestring,
					    "1. Get dish soap");
		}
		cJSON_Delete(q);
	}
	assert_string_equal(js(cJSON_GetArrayItem(arr, 0), "question_type"),
			    "intention_head_turn_approx");
	cJSON_Delete(arr);
	snprintf(p, sizeof(p), "%s/proxima.yaml", f->out);
	yaml = read_all(p);
	assert_non_null(strstr(yaml, "dataset_path: json\n"));
	assert_non_null(strstr(yaml, "/out/proxima.jsonl\"\n"));
	assert_non_null(strstr(yaml, "doc_to_visual: !function utils.proxima_doc_to_visual\n"));
	free(yaml);
	snprintf(p, sizeof(p), "%s/utils.py", f->out);
	assert_int_equal(access(p, R_OK), 0);
}

/* A pandas-style TSV reader: tab-separated, '"'-quoted fields with "" escapes. */
static int tsv_read(const char *t, char ***cells, int *ncols)
{
	int rows = 0, cols = 0, n = 0, cap = 64;
	char **c = malloc(sizeof(*c) * (size_t)cap);
	struct buf b;

	buf_init(&b, 1 << 20);
	*ncols = 0;
	while (*t) {
		buf_reset(&b);
		if (*t == '"') {
			for (t++; *t && !(t[0] == '"' && t[1] != '"'); t++) {
				if (t[0] == '"')
					t++;
				buf_add(&b, t, 1);
			}
			assert_int_equal(*t, '"');
			t++;
		} else {
			for (; *t && *t != '\t' && *t != '\n'; t++)
				buf_add(&b, t, 1);
		}
		if (n == cap) {
			cap *= 2;
			c = realloc(c, sizeof(*c) * (size_t)cap);
		}
		c[n++] = strdup(buf_str(&b));
		cols++;
		if (*t == '\t') {
			t++;
		} else {
			assert_int_equal(*t, '\n');
			t++;
			if (*ncols == 0)
				*ncols = cols;
			assert_int_equal(cols, *ncols);
			cols = 0;
			rows++;
		}
	}
	buf_release(&b);
	*cells = c;
	return rows;
}

static void test_vlmevalkit(void **state)
{
	struct fx *f = *state;
	static const char *const head[] = { "index", "video", "image_path", "question", "A", "B",
					    "C", "D", "E", "F", "G", "H", "answer", "category",
					    "l2-category", "qa_id" };
	struct export_summary sum;
	char p[160], *t, **c;
	int rows, cols, r, i;

	run(f, EXPORT_VLMEVALKIT, NULL, NULL, 0, &sum);
	assert_int_equal(sum.exported, 4);
	assert_int_equal(sum.skipped, 1); /* the chain */
	snprintf(p, sizeof(p), "%s/Proxima.tsv", f->out);
	t = read_all(p);
	rows = tsv_read(t, &c, &cols);
	assert_int_equal(rows, 5);
	assert_int_equal(cols, 16);
	for (i = 0; i < cols; i++)
		assert_string_equal(c[i], head[i]);
	for (r = 1; r < rows; r++) {
		char **row = c + r * cols, idx[16];
		cJSON *q = stored(f, row[15]);
		const char *qe = cJSON_GetStringValue(jo(q, "question_edited"));
		const cJSON *o = jo(q, "options");
		char l[2] = { (char)('A' + key_index(q)), 0 }, group[128];

		snprintf(idx, sizeof(idx), "%d", r - 1);
		assert_string_equal(row[0], idx);
		assert_string_equal(row[3], qe ? qe : js(q, "question"));
		for (i = 0; i < 8; i++)
			assert_string_equal(row[4 + i], i < cJSON_GetArraySize(o) ?
					    cJSON_GetArrayItem(o, i)->valuestring : "");
		assert_string_equal(row[12], l);
		snprintf(group, sizeof(group), "%s.%s/%s", js(q, "category"), js(q, "subtask"),
			 js(q, "metric"));
		assert_string_equal(row[14], group);
		assert_non_null(strstr(row[2], "['Frames/"));
		cJSON_Delete(q);
	}
	/* the edited question with a tab, a newline and quotes survives */
	assert_string_equal(c[2 * cols + 3], q1_edited);
	assert_string_equal(c[2 * cols + 13], "Intention_Relative");
	assert_non_null(strstr(t, "\"Which way,\tnow, to see the \"\"red\"\" mug?\nAnswer briefly.\""));
	for (i = 0; i < rows * cols; i++)
		free(c[i]);
	free(c);
	free(t);
}

static void test_labelstudio(void **state)
{
	struct fx *f = *state;
	struct export_summary sum;
	cJSON *arr;
	const cJSON *t;
	char p[160], *xml;

	run(f, EXPORT_LABELSTUDIO, NULL, NULL, 0, &sum);
	assert_int_equal(sum.exported, 4);
	arr = read_json(f, "tasks.json");
	assert_int_equal(cJSON_GetArraySize(arr), 4);
	cJSON_ArrayForEach(t, arr) {
		const cJSON *d = jo(t, "data");
		cJSON *q = stored(f, js(d, "qa_id"));
		const cJSON *o = jo(d, "options");
		int k = key_index(q);
		char want[128];

		assert_int_equal(cJSON_GetArraySize(o), cJSON_GetArraySize(jo(q, "options")));
		snprintf(want, sizeof(want), "%c. %s", 'A' + k,
			 cJSON_GetArrayItem(jo(q, "options"), k)->valuestring);
		assert_string_equal(js(cJSON_GetArrayItem(o, k), "value"), want);
		assert_string_equal(js(d, "answer"), want);
		assert_string_equal(js(d, "video"), ""); /* the recording cannot be loaded */
		cJSON_Delete(q);
	}
	cJSON_Delete(arr);
	snprintf(p, sizeof(p), "%s/config.xml", f->out);
	xml = read_all(p);
	assert_non_null(strstr(xml, "<Video name=\"video\" value=\"$video\"/>"));
	assert_non_null(strstr(xml, "<Choices name=\"answer\" toName=\"video\" choice=\"single\""));
	assert_non_null(strstr(xml, "value=\"$options\""));
	free(xml);
}

static void test_llava(void **state)
{
	struct fx *f = *state;
	struct export_summary sum;
	cJSON *arr;
	const cJSON *r;

	run(f, EXPORT_LLAVA, NULL, NULL, 0, &sum);
	assert_int_equal(sum.exported, 5);
	arr = read_json(f, "llava.json");
	cJSON_ArrayForEach(r, arr) {
		cJSON *q = stored(f, js(r, "id"));
		const cJSON *conv = jo(r, "conversations");
		const char *human = js(cJSON_GetArrayItem(conv, 0), "value");
		const char *gpt = js(cJSON_GetArrayItem(conv, 1), "value");

		assert_int_equal(cJSON_GetArraySize(conv), 2);
		assert_string_equal(js(cJSON_GetArrayItem(conv, 0), "from"), "human");
		assert_string_equal(js(cJSON_GetArrayItem(conv, 1), "from"), "gpt");
		assert_int_equal(strncmp(human, "<video>\n", 8), 0);
		if (key_index(q) >= 0) {
			char l[2] = { (char)('A' + key_index(q)), 0 };

			assert_string_equal(gpt, l);
			assert_non_null(strstr(human, "\nA. Turn left ~95\xc2\xb0\nB. "));
		} else {
			assert_string_equal(gpt, "[[1,2,3,4],[\"B\",\"E\",\"G\"]]");
		}
		cJSON_Delete(q);
	}
	cJSON_Delete(arr);
}

/* ============================== Filters ============================== */

static void test_filters(void **state)
{
	struct fx *f = *state;
	struct export_summary sum;
	struct export_params p;
	cJSON *arr;

	run(f, EXPORT_JSONL, NULL, "intention.head_turn", 0, &sum);
	assert_int_equal(sum.exported, 2);
	run(f, EXPORT_JSONL, NULL, "intention.head_turn/relative", 0, &sum);
	assert_int_equal(sum.exported, 1);
	run(f, EXPORT_JSONL, NULL, " chain , exploration/approx", 0, &sum);
	assert_int_equal(sum.exported, 2);
	run(f, EXPORT_JSONL, "rejected", NULL, 0, &sum);
	assert_int_equal(sum.exported, 1);
	arr = read_jsonl(f, "records.jsonl");
	assert_string_equal(js(cJSON_GetArrayItem(arr, 0), "id"), "00000000000000a4");
	assert_string_equal(js(jo(cJSON_GetArrayItem(arr, 0), "review"), "status"), "rejected");
	assert_string_equal(cJSON_GetArrayItem(jo(jo(cJSON_GetArrayItem(arr, 0), "review"),
						  "reviewers"), 0)->valuestring, "bob");
	cJSON_Delete(arr);
	run(f, EXPORT_JSONL, "approved,edited,pending", "intention", 0, &sum);
	assert_int_equal(sum.exported, 3);

	memset(&p, 0, sizeof(p));
	p.format = EXPORT_JSONL;
	p.dir = f->out;
	p.engine_version = "x";
	p.tasks = "intention.head_turn/fuzzy";
	assert_int_equal(export_run(f->st, &p, NULL), ENG_EINVAL);
	assert_non_null(strstr(err_msg(), "intention.head_turn/fuzzy"));
	p.tasks = "a.b.c";
	assert_int_equal(export_run(f->st, &p, NULL), ENG_EINVAL);
	p.tasks = NULL;
	p.frames = EXPORT_MAX_FRAMES + 1;
	assert_int_equal(export_run(f->st, &p, NULL), ENG_EINVAL);
	assert_true(export_tasks_match(NULL, "x", "y", "approx"));
	assert_true(export_tasks_match("x/approx", "x", "y", "approx"));
	assert_false(export_tasks_match("x/relative,y", "x", "y", "approx"));
}

static void test_helpers(void **state)
{
	int64_t t[5];
	struct buf b;

	(void)state;
	export_frame_times(0, 8000, 5, t);
	assert_int_equal(t[0], 0);
	assert_int_equal(t[1], 2000);
	assert_int_equal(t[4], 8000);
	export_frame_times(100, 900, 1, t);
	assert_int_equal(t[0], 900);
	buf_init(&b, 1024);
	assert_int_equal(export_tsv_field(&b, "plain text"), 0);
	assert_string_equal(buf_str(&b), "plain text");
	buf_reset(&b);
	assert_int_equal(export_tsv_field(&b, "a\tb \"c\"\nd"), 0);
	assert_string_equal(buf_str(&b), "\"a\tb \"\"c\"\"\nd\"");
	buf_release(&b);
	assert_string_equal(export_egoprox_source("exploitation", "relative"),
			    "Exploitation_Relative");
	assert_string_equal(export_egoprox_source("chain", "relative"), "Chain of Actions");
	assert_null(export_egoprox_source("other", "approx"));
	assert_int_equal(export_format_from_name("lmms-eval"), EXPORT_LMMS_EVAL);
	assert_int_equal(export_format_from_name("csv"), EXPORT_NFORMAT);
}

/* ============================== Frames ============================== */

static void test_frames_without_video(void **state)
{
	struct fx *f = *state;
	struct export_summary sum;
	cJSON *arr, *man;
	const cJSON *r, *rec;

	run(f, EXPORT_JSONL, NULL, "intention.head_turn/approx", 3, &sum);
	assert_int_equal(sum.exported, 1);
	assert_int_equal(sum.frames_written, 0);
	assert_int_equal(sum.no_video, 1);
	arr = read_jsonl(f, "records.jsonl");
	r = cJSON_GetArrayItem(arr, 0);
	/* three times uniform over the clip [2 s, 10 s], both ends included */
	assert_true(cJSON_GetArrayItem(jo(r, "frame_times_ns"), 0)->valuedouble == 2e9);
	assert_true(cJSON_GetArrayItem(jo(r, "frame_times_ns"), 1)->valuedouble == 6e9);
	assert_true(cJSON_GetArrayItem(jo(r, "frame_times_ns"), 2)->valuedouble == 10e9);
	assert_string_equal(cJSON_GetArrayItem(jo(r, "frames"), 2)->valuestring,
			    "Frames/00000000000000a0/003.jpg");
	assert_true(cJSON_IsFalse(jo(r, "frames_extracted")));
	cJSON_Delete(arr);
	man = read_json(f, "manifest.json");
	rec = jo(jo(jo(man, "frames"), "recordings"), "rec1");
	assert_non_null(strstr(js(rec, "no_video"), "cannot load '/nonexistent/rec1'"));
	assert_int_equal((int)jn(jo(man, "frames"), "per_qa"), 3);
	assert_non_null(strstr(js(jo(man, "frames"), "note"), "no usable video"));
	cJSON_Delete(man);
}

/* Copies tests/data/native into dir (a loadable recording with a video entry). */
static void copy_native(const char *dir)
{
	static const char *const files[] = { "recording.json", "trajectory.csv", "gaze.csv",
					     "objects.json", "object_poses.csv", "actions.json" };
	char src[256], dst[256], *t;
	size_t i;
	FILE *fp;

	assert_int_equal(mkdir(dir, 0777), 0);
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(src, sizeof(src), "tests/data/native/%s", files[i]);
		snprintf(dst, sizeof(dst), "%s/%s", dir, files[i]);
		t = read_all(src);
		fp = fopen(dst, "w");
		assert_non_null(fp);
		fputs(t, fp);
		fclose(fp);
		free(t);
	}
}

/* A video QA on the copied recording: clip 1.0 s to 1.5 s (the trajectory's span). */
static void put_video_qa(struct fx *f, const char *root)
{
	struct store_qa q;

	put_rec(f->st, "rec2", root);
	memset(&q, 0, sizeof(q));
	q.id = "00000000000000b0";
	q.recording_id = "rec2";
	q.category = "exploitation";
	q.subtask = "next_interaction";
	q.metric = "approx";
	q.t_ns = 1500000000LL;
	q.clip_start_ns = 1000000000LL;
	q.clip_end_ns = 1500000000LL;
	q.question = "What will the person grasp next?";
	q.options_json = "[\"The cup\",\"The plate\",\"The knife\",\"The pan\",\"The bowl\"]";
	q.answer_index = 1;
	assert_int_equal(store_qa_put(f->st, &q, NULL), 0);
	decide(f, "00000000000000b0", "approve", NULL, NULL);
}

/* A video file that is not a video: its QAs list their frames, the manifest says why. */
static void test_broken_video(void **state)
{
	struct fx *f = *state;
	struct export_summary sum;
	char root[128], video[160];
	const char *why;
	cJSON *man;
	FILE *fp;

	snprintf(root, sizeof(root), "%s/rec2", f->dir);
	copy_native(root);
	snprintf(video, sizeof(video), "%s/video.mp4", root);
	fp = fopen(video, "w");
	assert_non_null(fp);
	fputs("not really a video", fp);
	fclose(fp);
	put_video_qa(f, root);
	run(f, EXPORT_EGOPROX, NULL, "exploitation", 2, &sum);
	assert_int_equal(sum.exported, 1);
	assert_int_equal(sum.frames_written, 0);
	assert_int_equal(sum.no_video, 1);
	man = read_json(f, "manifest.json");
	why = js(jo(jo(jo(man, "frames"), "recordings"), "rec2"), "no_video");
	assert_non_null(strstr(why, "rec2/video.mp4"));
	assert_non_null(strstr(why, "cannot open the video"));
	cJSON_Delete(man);
	snprintf(video, sizeof(video), "%s/Frames/00000000000000b0/001.jpg", f->out);
	assert_int_not_equal(access(video, F_OK), 0);
}

/* True when `prog -version` runs. */
static int have(const char *prog)
{
	char *argv[] = { (char *)(uintptr_t)prog, (char *)(uintptr_t)"-version", NULL };
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int st = -1, ok;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", 1, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", 1, 0);
	ok = !posix_spawnp(&pid, prog, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (ok)
		waitpid(pid, &st, 0);
	return ok && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

static void test_ffmpeg_frames(void **state)
{
	struct fx *f = *state;
	struct export_summary sum;
	char root[128], video[160], jpg[200], *argv[16];
	static const char *const args[] = { "ffmpeg", "-nostdin", "-loglevel", "error", "-y",
					    "-f", "lavfi", "-i", "testsrc=size=96x64:rate=10:d=2",
					    "-pix_fmt", "yuv420p", NULL };
	unsigned char magic[3];
	cJSON *arr;
	pid_t pid;
	FILE *fp;
	int st = -1, i;

	if (!have("ffmpeg")) {
		fprintf(stderr, "test_ffmpeg_frames: skipped: ffmpeg is not installed\n");
		skip();
	}
	snprintf(root, sizeof(root), "%s/rec2", f->dir);
	copy_native(root);
	snprintf(video, sizeof(video), "%s/video.mp4", root);
	for (i = 0; args[i]; i++)
		argv[i] = (char *)(uintptr_t)args[i];
	argv[i++] = video;
	argv[i] = NULL;
	assert_int_equal(posix_spawnp(&pid, "ffmpeg", NULL, NULL, argv, environ), 0);
	waitpid(pid, &st, 0);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	put_video_qa(f, root);
	run(f, EXPORT_EGOPROX, NULL, "exploitation", 3, &sum);
	assert_int_equal(sum.exported, 1);
	assert_int_equal(sum.frames_written, 3);
	assert_int_equal(sum.no_video, 0);
	for (i = 1; i <= 3; i++) {
		snprintf(jpg, sizeof(jpg), "%s/Frames/00000000000000b0/%03d.jpg", f->out, i);
		fp = fopen(jpg, "rb");
		assert_non_null(fp);
		assert_int_equal(fread(magic, 1, 3, fp), 3);
		fclose(fp);
		assert_int_equal(magic[0], 0xff); /* JPEG SOI + marker */
		assert_int_equal(magic[1], 0xd8);
		assert_int_equal(magic[2], 0xff);
	}
	snprintf(jpg, sizeof(jpg), "%s/Frames/00000000000000b0/004.jpg", f->out);
	assert_int_not_equal(access(jpg, F_OK), 0);
	arr = read_json(f, "egoprox.json");
	{
		const cJSON *turn = cJSON_GetArrayItem(jo(cJSON_GetArrayItem(arr, 0), "data"), 0);
		const cJSON *third = cJSON_GetArrayItem(jo(turn, "content"), 2);

		assert_string_equal(js(third, "image"), "Frames/00000000000000b0/003.jpg");
	}
	cJSON_Delete(arr);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_helpers),
		cmocka_unit_test_setup_teardown(test_egoprox, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_jsonl, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_lmms_eval, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_vlmevalkit, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_labelstudio, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_llava, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_filters, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_frames_without_video, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_broken_video, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_ffmpeg_frames, fx_setup, fx_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
