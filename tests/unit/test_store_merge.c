/* SPDX-License-Identifier: MIT */
/*
 * store_merge(): runs renumbered with their QAs and drops, the ranking of
 * two rows with one QA id in both orders of the inputs, reviews appended
 * once, edits kept, traces with their rows, the LLM cache by key, a
 * repeated merge that adds nothing, and the inputs it refuses.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "err.h"
#include "store.h"

/* ============================== Fixtures ============================== */

static const char *const fx_files[] = { "a.db", "b.db", "o.db", "p.db", "c.db", "junk" };

struct fx {
	char dir[64];      /* temporary folder */
	char a[96], b[96]; /* two input stores */
	char o[96], p[96]; /* two outputs, for the two orders */
	char c[96];        /* a byte copy of a */
};

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	snprintf(f->dir, sizeof(f->dir), "/tmp/test_merge.XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	snprintf(f->a, sizeof(f->a), "%s/a.db", f->dir);
	snprintf(f->b, sizeof(f->b), "%s/b.db", f->dir);
	snprintf(f->o, sizeof(f->o), "%s/o.db", f->dir);
	snprintf(f->p, sizeof(f->p), "%s/p.db", f->dir);
	snprintf(f->c, sizeof(f->c), "%s/c.db", f->dir);
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	static const char *const sfx[] = { "", "-wal", "-shm" };
	struct fx *f = *state;
	char p[160];
	size_t i, j;

	for (i = 0; i < sizeof(fx_files) / sizeof(fx_files[0]); i++)
		for (j = 0; j < 3; j++) {
			snprintf(p, sizeof(p), "%s/%s%s", f->dir, fx_files[i], sfx[j]);
			unlink(p);
		}
	rmdir(f->dir);
	free(f);
	return 0;
}

static struct store *open_rw(const char *path)
{
	struct store *st = NULL;
	int rc = store_open(path, 0, &st);

	if (rc)
		fprintf(stderr, "store_open: %s\n", err_msg());
	assert_int_equal(rc, 0);
	return st;
}

/* Sleeps a few ms, so that the next write has a later store timestamp. */
static void tick(void)
{
	struct timespec ts = { 0, 3000000 };

	nanosleep(&ts, NULL);
}

static void put_recording(struct store *st, const char *id)
{
	struct store_recording r = { id, "proxima-recording/1", "/data/x", 0, 10000000000LL,
				     NULL };

	assert_int_equal(store_recording_put(st, &r), 0);
}

static int64_t run(struct store *st, const char *config)
{
	int64_t id = 0;

	assert_int_equal(store_run_begin(st, config, "local", NULL, 1, "0.1.0", &id), 0);
	assert_int_equal(store_run_finish(st, id, "ok", NULL), 0);
	return id;
}

static void put_qa(struct store *st, const char *id, const char *rec, int64_t run_id,
		   const char *question, const char *trace)
{
	struct store_qa q;
	int ins = -1;

	memset(&q, 0, sizeof(q));
	q.id = id;
	q.run_id = run_id;
	q.recording_id = rec;
	q.category = "intention";
	q.subtask = "head_turn";
	q.metric = "approx";
	q.t_ns = 5000000000LL;
	q.clip_start_ns = 0;
	q.clip_end_ns = 5000000000LL;
	q.question = question;
	q.options_json = "[\"left\",\"right\",\"back\"]";
	q.answer_index = 1;
	q.trace_json = trace;
	assert_int_equal(store_qa_put(st, &q, &ins), 0);
	assert_int_equal(ins, STORE_PUT_NEW);
}

static void put_drop(struct store *st, const char *rec, int64_t run_id, int64_t t)
{
	struct store_drop d = { run_id, rec, "intention", "head_turn", "approx", "ambiguous",
				t, "mug", NULL };

	assert_int_equal(store_drop_put(st, &d), 0);
}

static void review(struct store *st, const char *id, const char *who, const char *decision,
		   const char *edit_after)
{
	struct store_review r;

	memset(&r, 0, sizeof(r));
	r.qa_id = id;
	r.reviewer = who;
	r.decision = decision;
	r.blind_answer_index = -1;
	r.edit_after = edit_after;
	assert_int_equal(store_review_add(st, &r, NULL), 0);
}

static struct store_merge_stats merge_ok(struct store *st, const char *path)
{
	struct store_merge_stats m;
	int rc;

	memset(&m, 0xff, sizeof(m));
	rc = store_merge(st, path, &m);
	if (rc)
		fprintf(stderr, "store_merge: %s\n", err_msg());
	assert_int_equal(rc, 0);
	return m;
}

/* One integer from the sqlite3 shell (an independent reader of the file). */
static long long shell_int(const char *path, const char *sql)
{
	char cmd[1024], line[64] = "";
	long long v;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "sqlite3 -readonly '%s' \"%s\"", path, sql);
	p = popen(cmd, "r");
	assert_non_null(p);
	assert_non_null(fgets(line, sizeof(line), p));
	assert_int_equal(pclose(p), 0);
	v = strtoll(line, NULL, 10);
	return v;
}

/* The QA as store_qa_get() gives it, with its reviews and trace. */
static cJSON *qa_get(struct store *st, const char *id)
{
	cJSON *q = NULL;

	assert_int_equal(store_qa_get(st, id, STORE_GET_REVIEWS | STORE_GET_TRACE, &q), 0);
	return q;
}

static const char *jstr(const cJSON *o, const char *name)
{
	const char *s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, name));

	return s ? s : "";
}

static double jnum(const cJSON *o, const char *name)
{
	return cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o, name));
}

static void integrity_ok(struct store *st)
{
	char *report = NULL;

	assert_int_equal(store_integrity_check(st, &report), 0);
	assert_string_equal(report, "ok");
	free(report);
}

#define QA1 "00000000000000a1"
#define QA2 "00000000000000a2"
#define QB1 "00000000000000b1"
#define QX "00000000000000ff"

/* ================================ Tests ================================ */

/*
 * a: recording r1, runs 1 and 2, QAs of both runs, drops of both runs;
 * b: recording r2, run 1, one QA and one drop. Merged a then b, the runs
 * are 1, 2 (a's) and 3 (b's), and each QA and drop names its new run.
 */
static void test_runs_renumbered(void **state)
{
	struct fx *f = *state;
	struct store *a = open_rw(f->a), *b = open_rw(f->b), *o;
	struct store_merge_stats m;
	int64_t a1, a2, b1;
	cJSON *q;

	put_recording(a, "r1");
	a1 = run(a, "{\"shard\":\"0/2\",\"n\":1}");
	a2 = run(a, "{\"shard\":\"0/2\",\"n\":2}");
	put_qa(a, QA1, "r1", a2, "Turn where?", "{\"t\":1}");
	put_qa(a, QA2, "r1", a1, "Turn which way?", "{\"t\":2}");
	put_drop(a, "r1", a2, 7);
	put_drop(a, "r1", a1, 8);
	put_recording(b, "r2");
	b1 = run(b, "{\"shard\":\"1/2\"}");
	put_qa(b, QB1, "r2", b1, "Look where?", "{\"t\":3}");
	put_drop(b, "r2", b1, 9);
	assert_int_equal(a1, 1);
	assert_int_equal(b1, 1);
	store_close(a);
	store_close(b);

	o = open_rw(f->o);
	m = merge_ok(o, f->a);
	assert_int_equal(m.recordings_added, 1);
	assert_int_equal(m.runs_added, 2);
	assert_int_equal(m.runs_known, 0);
	assert_int_equal(m.qa_added, 2);
	assert_int_equal(m.qa_replaced, 0);
	assert_int_equal(m.qa_kept, 0);
	assert_int_equal(m.drops_added, 2);
	m = merge_ok(o, f->b);
	assert_int_equal(m.recordings_added, 1);
	assert_int_equal(m.runs_added, 1);
	assert_int_equal(m.qa_added, 1);
	assert_int_equal(m.drops_added, 1);

	q = qa_get(o, QA1);
	assert_int_equal((int)jnum(q, "run_id"), 2);
	assert_int_equal((int)jnum(cJSON_GetObjectItemCaseSensitive(q, "trace"), "t"), 1);
	cJSON_Delete(q);
	q = qa_get(o, QA2);
	assert_int_equal((int)jnum(q, "run_id"), 1);
	cJSON_Delete(q);
	q = qa_get(o, QB1);
	assert_int_equal((int)jnum(q, "run_id"), 3);
	assert_string_equal(jstr(q, "question"), "Look where?");
	assert_int_equal((int)jnum(cJSON_GetObjectItemCaseSensitive(q, "trace"), "t"), 3);
	cJSON_Delete(q);

	/* the same inputs again: nothing added, everything known or kept */
	m = merge_ok(o, f->a);
	assert_int_equal(m.recordings_added + m.runs_added + m.qa_added + m.qa_replaced +
			 m.reviews_added + m.drops_added + m.cache_written, 0);
	assert_int_equal(m.runs_known, 2);
	assert_int_equal(m.qa_kept, 2);
	m = merge_ok(o, f->b);
	assert_int_equal(m.runs_known, 1);
	assert_int_equal(m.qa_kept, 1);
	integrity_ok(o);
	store_close(o);

	/* read back by the sqlite3 shell: three runs, drops under the new ids */
	assert_int_equal(shell_int(f->o, "select count(*) from runs"), 3);
	assert_int_equal(shell_int(f->o, "select run_id from drops where t_ns = 7"), 2);
	assert_int_equal(shell_int(f->o, "select run_id from drops where t_ns = 8"), 1);
	assert_int_equal(shell_int(f->o, "select run_id from drops where t_ns = 9"), 3);
	assert_int_equal(shell_int(f->o, "select count(*) from runs where id = 3 and"
				   " json_extract(config_json, '$.shard') = '1/2'"), 1);
	assert_int_equal(shell_int(f->o, "select count(*) from traces"), 3);
}

/* Both inputs in both orders into o and p; returns nothing, checks the id QX. */
static void merge_both_orders(struct fx *f)
{
	struct store *o = open_rw(f->o), *p = open_rw(f->p);

	merge_ok(o, f->a);
	merge_ok(o, f->b);
	merge_ok(p, f->b);
	merge_ok(p, f->a);
	integrity_ok(o);
	integrity_ok(p);
	store_close(o);
	store_close(p);
}

/* The QA QX of o and of p agree on status, question, edit and trace. */
static void orders_agree(struct fx *f, const char *status, const char *question,
			 const char *edited, int n_reviews)
{
	const char *paths[2] = { f->o, f->p };
	int i;

	for (i = 0; i < 2; i++) {
		struct store *st = open_rw(paths[i]);
		cJSON *q = qa_get(st, QX);

		assert_string_equal(jstr(q, "status"), status);
		assert_string_equal(jstr(q, "question"), question);
		assert_string_equal(jstr(q, "question_edited"), edited);
		assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(q, "reviews")),
				 n_reviews);
		cJSON_Delete(q);
		store_close(st);
	}
}

static void two_stores_with_qx(struct fx *f, struct store **a, struct store **b,
			       const char *qa, const char *qb)
{
	*a = open_rw(f->a);
	*b = open_rw(f->b);
	put_recording(*a, "r1");
	put_recording(*b, "r1");
	put_qa(*a, QX, "r1", run(*a, "{\"n\":1}"), qa, "{\"from\":\"a\"}");
	tick();
	put_qa(*b, QX, "r1", run(*b, "{\"n\":2}"), qb, "{\"from\":\"b\"}");
}

/* Unreviewed in both: the one updated last wins, with its trace. */
static void test_later_pending_wins(void **state)
{
	struct fx *f = *state;
	struct store *a, *b, *o;
	cJSON *q;

	two_stores_with_qx(f, &a, &b, "Old wording?", "New wording?");
	store_close(a);
	store_close(b);
	merge_both_orders(f);
	orders_agree(f, "pending", "New wording?", "", 0);
	o = open_rw(f->p);
	q = qa_get(o, QX);
	assert_string_equal(jstr(cJSON_GetObjectItemCaseSensitive(q, "trace"), "from"), "b");
	cJSON_Delete(q);
	store_close(o);
}

/* A reviewed row wins over a later unreviewed one, in either order. */
static void test_reviewed_wins(void **state)
{
	struct fx *f = *state;
	struct store *a, *b, *o;
	struct store_merge_stats m;
	cJSON *q;

	two_stores_with_qx(f, &a, &b, "Reviewed wording?", "Later wording?");
	review(a, QX, "ana", "approve", NULL);
	store_close(a);
	tick();
	/* b's row is updated after the approval and still loses */
	assert_int_equal(store_qa_supersede(b, "intention", NULL, NULL), 0);
	store_close(b);
	merge_both_orders(f);
	orders_agree(f, "approved", "Reviewed wording?", "", 1);
	o = open_rw(f->p);
	q = qa_get(o, QX);
	assert_string_equal(jstr(cJSON_GetObjectItemCaseSensitive(q, "trace"), "from"), "a");
	cJSON_Delete(q);
	/* p got b first, then a replaced b's row */
	m = merge_ok(o, f->a);
	assert_int_equal(m.qa_kept, 1);
	assert_int_equal(m.reviews_known, 1);
	store_close(o);
}

/*
 * Reviewed in both by two reviewers who disagree: both reviews are kept,
 * and the status follows both verdicts (a conflict), in either order.
 */
static void test_later_review_wins(void **state)
{
	struct fx *f = *state;
	struct store *a, *b;

	two_stores_with_qx(f, &a, &b, "Same wording?", "Same wording?");
	review(b, QX, "ben", "reject", NULL);
	tick();
	review(a, QX, "ana", "approve", NULL);
	store_close(a);
	store_close(b);
	merge_both_orders(f);
	orders_agree(f, "conflict", "Same wording?", "", 2);
}

/* An edit is kept when the later decision's row has none. */
static void test_edit_kept(void **state)
{
	struct fx *f = *state;
	struct store *a, *b;

	two_stores_with_qx(f, &a, &b, "Same wording?", "Same wording?");
	review(a, QX, "ana", "edit", "Better wording?");
	tick();
	review(b, QX, "ben", "approve", NULL);
	store_close(a);
	store_close(b);
	merge_both_orders(f);
	/* ana's edit and ben's approval both accept it: edited, with ana's wording */
	orders_agree(f, "edited", "Same wording?", "Better wording?", 2);
}

/* A byte copy merged after its original adds no review, QA or run. */
static void test_copy_adds_nothing(void **state)
{
	struct fx *f = *state;
	struct store *a = open_rw(f->a), *o;
	struct store_merge_stats m;
	char cmd[256];

	put_recording(a, "r1");
	put_qa(a, QX, "r1", run(a, NULL), "Where?", NULL);
	review(a, QX, "ana", "note", NULL);
	review(a, QX, "ana", "approve", NULL);
	assert_int_equal(store_cache_put(a, "k1", "{}", "{\"a\":1}", 200, 5), 0);
	store_close(a);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", f->a, f->c);
	assert_int_equal(system(cmd), 0);

	o = open_rw(f->o);
	m = merge_ok(o, f->a);
	assert_int_equal(m.reviews_added, 2);
	assert_int_equal(m.cache_written, 1);
	m = merge_ok(o, f->c);
	assert_int_equal(m.qa_added + m.qa_replaced + m.runs_added + m.reviews_added +
			 m.cache_written + m.recordings_added, 0);
	assert_int_equal(m.qa_kept, 1);
	assert_int_equal(m.runs_known, 1);
	assert_int_equal(m.reviews_known, 2);
	integrity_ok(o);
	store_close(o);
	assert_int_equal(shell_int(f->o, "select count(*) from reviews"), 2);
}

/* The LLM cache: the union of keys; of one key, the later entry. */
static void test_cache_by_key(void **state)
{
	struct fx *f = *state;
	struct store *a = open_rw(f->a), *b = open_rw(f->b), *o;
	char *resp = NULL;
	int i, status = 0;

	assert_int_equal(store_cache_put(a, "k1", NULL, "{\"v\":\"a1\"}", 200, 1), 0);
	assert_int_equal(store_cache_put(a, "k2", NULL, "{\"v\":\"a2\"}", 200, 1), 0);
	tick();
	assert_int_equal(store_cache_put(b, "k1", NULL, "{\"v\":\"b1\"}", 429, 1), 0);
	store_close(a);
	store_close(b);
	merge_both_orders(f);
	for (i = 0; i < 2; i++) {
		o = open_rw(i ? f->p : f->o);
		assert_int_equal(store_cache_get(o, "k1", &resp, &status), 0);
		assert_string_equal(resp, "{\"v\":\"b1\"}");
		assert_int_equal(status, 429);
		free(resp);
		assert_int_equal(store_cache_get(o, "k2", &resp, &status), 0);
		assert_string_equal(resp, "{\"v\":\"a2\"}");
		free(resp);
		store_close(o);
	}
}

/* Inputs that are refused, each named, and the output left as it was. */
static void test_refused_inputs(void **state)
{
	struct fx *f = *state;
	struct store *a = open_rw(f->a), *o;
	struct store_merge_stats m;
	char junk[160];
	FILE *fp;

	put_recording(a, "r1");
	put_qa(a, QX, "r1", 0, "Where?", NULL);
	store_close(a);
	o = open_rw(f->o);
	memset(&m, 0x5a, sizeof(m));

	assert_int_equal(store_merge(o, f->b, &m), ENG_ENOENT);
	assert_non_null(strstr(err_msg(), f->b));
	assert_int_equal(store_merge(o, f->o, &m), ENG_EINVAL);
	assert_non_null(strstr(err_msg(), "into itself"));

	snprintf(junk, sizeof(junk), "%s/junk", f->dir);
	fp = fopen(junk, "w");
	assert_non_null(fp);
	fputs("this is not a database, only some text that is long enough\n", fp);
	fclose(fp);
	assert_int_equal(store_merge(o, junk, &m), ENG_EDB);
	assert_non_null(strstr(err_msg(), junk));

	/* user_version is the big-endian u32 at byte 60 of the file header */
	fp = fopen(f->a, "r+b");
	assert_non_null(fp);
	assert_int_equal(fseek(fp, 60, SEEK_SET), 0);
	assert_int_equal(fwrite("\0\0\0\x07", 1, 4, fp), 4);
	fclose(fp);
	assert_int_equal(store_merge(o, f->a, &m), ENG_ERANGE);
	assert_non_null(strstr(err_msg(), f->a));
	assert_non_null(strstr(err_msg(), "schema version 7 is newer"));

	/* a batch open on the output */
	assert_int_equal(store_begin(o), 0);
	assert_int_equal(store_merge(o, f->a, &m), ENG_EINVAL);
	assert_int_equal(store_rollback(o), 0);

	/* stats untouched on failure, nothing merged, the file sound */
	assert_int_equal(m.qa_added, 0x5a5a5a5a5a5a5a5aLL);
	integrity_ok(o);
	store_close(o);
	assert_int_equal(shell_int(f->o, "select count(*) from qa"), 0);
	assert_int_equal(shell_int(f->o, "select count(*) from recordings"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_runs_renumbered, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_later_pending_wins, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_reviewed_wins, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_later_review_wins, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_edit_kept, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_copy_adds_nothing, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_cache_by_key, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_refused_inputs, fx_setup, fx_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
