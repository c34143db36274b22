/* SPDX-License-Identifier: MIT */
/*
 * The SQLite store: migrations and the file header (read back byte by
 * byte), idempotent generation, supersede and replace, reviews, readers,
 * statistics against hand-computed values, the LLM cache, bad files and
 * an interrupted transaction.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "err.h"
#include "store.h"

#define ARRAY_SIZE_T(a) (sizeof(a) / sizeof((a)[0]))
#define NEAR(a, b, eps) assert_true(fabs((double)(a) - (double)(b)) <= (eps))

/* ============================== Fixtures ============================== */

struct fx {
	char dir[64];   /* temporary folder */
	char path[96];  /* the store file in it */
	struct store *st;
};

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	snprintf(f->dir, sizeof(f->dir), "/tmp/test_store.XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	snprintf(f->path, sizeof(f->path), "%s/p.db", f->dir);
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;
	char p[128];
	static const char *const names[] = { "p.db", "p.db-wal", "p.db-shm", "garbage",
					     "other.db", "other.db-wal", "other.db-shm" };
	size_t i;

	store_close(f->st);
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", f->dir, names[i]);
		unlink(p);
	}
	rmdir(f->dir);
	free(f);
	return 0;
}

/* Opens f->path read-write (a fresh store on first use). */
static void fx_open(struct fx *f)
{
	int rc = store_open(f->path, 0, &f->st);

	if (rc)
		fprintf(stderr, "store_open: %s\n", err_msg());
	assert_int_equal(rc, 0);
}

/* A 4-byte big-endian field of the SQLite file header. */
static uint32_t header_u32(const char *path, long offset)
{
	unsigned char b[4] = { 0 };
	FILE *fp = fopen(path, "rb");

	assert_non_null(fp);
	assert_int_equal(fseek(fp, offset, SEEK_SET), 0);
	assert_int_equal(fread(b, 1, 4, fp), 4);
	fclose(fp);
	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

static void header_set_u32(const char *path, long offset, uint32_t v)
{
	unsigned char b[4] = { (unsigned char)(v >> 24), (unsigned char)(v >> 16),
			       (unsigned char)(v >> 8), (unsigned char)v };
	FILE *fp = fopen(path, "r+b");

	assert_non_null(fp);
	assert_int_equal(fseek(fp, offset, SEEK_SET), 0);
	assert_int_equal(fwrite(b, 1, 4, fp), 4);
	fclose(fp);
}

static void put_recording(struct store *st, const char *id)
{
	struct store_recording r = { id, "native", "/data/x", 0, 10000000000LL,
				     "{\"frames\":3}" };

	assert_int_equal(store_recording_put(st, &r), 0);
}

/* A valid QA with 5 options; callers change what they test. */
static struct store_qa qa_make(const char *id, const char *cat, const char *sub,
			       const char *metric, int64_t t, int answer)
{
	struct store_qa q;

	memset(&q, 0, sizeof(q));
	q.id = id;
	q.recording_id = "rec1";
	q.category = cat;
	q.subtask = sub;
	q.metric = metric;
	q.t_ns = t;
	q.clip_start_ns = t - 8000000000LL;
	q.clip_end_ns = t;
	q.frames_json = "[1,2,3]";
	q.target = "mug";
	q.question = "Where is the mug?";
	q.options_json = "[\"A\",\"B\",\"C\",\"D\",\"E\"]";
	q.answer_index = answer;
	q.answer_json = "{\"dir\":\"left\"}";
	q.gt_json = "{\"yaw\":95}";
	q.qc_json = NULL;
	q.trace_json = "{\"messages\":[]}";
	return q;
}

static void put_ok(struct store *st, const struct store_qa *q, int want)
{
	int ins = -1, rc = store_qa_put(st, q, &ins);

	if (rc)
		fprintf(stderr, "store_qa_put: %s\n", err_msg());
	assert_int_equal(rc, 0);
	assert_int_equal(ins, want);
}

static void review(struct store *st, const char *id, const char *who,
		   const char *decision, int blind)
{
	struct store_review r;
	int rc;

	memset(&r, 0, sizeof(r));
	r.qa_id = id;
	r.reviewer = who;
	r.decision = decision;
	r.blind_answer_index = blind;
	if (!strcmp(decision, "edit"))
		r.edit_after = "Where is the red mug?";
	rc = store_review_add(st, &r, NULL);
	if (rc)
		fprintf(stderr, "store_review_add: %s\n", err_msg());
	assert_int_equal(rc, 0);
}

/* A string member of a cJSON object ("" when absent or not a string). */
static const char *jstr(const cJSON *o, const char *name)
{
	const char *s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, name));

	return s ? s : "";
}

static double jnum(const cJSON *o, const char *name)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);

	assert_true(cJSON_IsNumber(v));
	return v->valuedouble;
}

static int64_t list_total(struct store *st, const struct store_filter *flt)
{
	cJSON *out = NULL;
	int64_t n;

	assert_int_equal(store_qa_list(st, flt, &out), 0);
	n = (int64_t)jnum(out, "total");
	cJSON_Delete(out);
	return n;
}

/* ============================== Opening ============================== */

static void test_migrate_from_empty_and_reopen(void **state)
{
	struct fx *f = *state;
	char *check = NULL;
	uint32_t cookie;

	fx_open(f);
	assert_int_equal(store_integrity_check(f->st, &check), 0);
	assert_string_equal(check, "ok");
	free(check);
	put_recording(f->st, "rec1");
	store_close(f->st);
	f->st = NULL;
	/* closing the last connection checkpoints the WAL into the file */
	assert_int_equal(header_u32(f->path, 60), STORE_SCHEMA_VERSION); /* user_version */
	assert_int_equal(header_u32(f->path, 68), 0x5052584d); /* application_id */
	assert_int_equal(header_u32(f->path, 18) >> 24, 2);    /* WAL read version */
	cookie = header_u32(f->path, 40);                       /* schema cookie */
	assert_true(cookie > 0);

	/* reopening changes neither version nor schema and keeps the data */
	fx_open(f);
	store_close(f->st);
	f->st = NULL;
	assert_int_equal(header_u32(f->path, 60), STORE_SCHEMA_VERSION);
	assert_int_equal(header_u32(f->path, 40), cookie);
	assert_int_equal(store_open(f->path, STORE_READONLY, &f->st), 0);
	{
		cJSON *rec = NULL;

		assert_int_equal(store_recording_get(f->st, "rec1", &rec), 0);
		assert_string_equal(jstr(rec, "layout"), "native");
		NEAR(jnum(rec, "t1_ns"), 1e10, 0);
		NEAR(jnum(cJSON_GetObjectItem(rec, "summary"), "frames"), 3, 0);
		cJSON_Delete(rec);
		assert_int_equal(store_recording_get(f->st, "nope", &rec), ENG_ENOTFOUND);
	}
}

static void test_newer_version_refused(void **state)
{
	struct fx *f = *state;
	struct store *st = NULL;

	fx_open(f);
	store_close(f->st);
	f->st = NULL;
	header_set_u32(f->path, 60, 7);
	assert_int_equal(store_open(f->path, 0, &st), ENG_ERANGE);
	assert_null(st);
	assert_non_null(strstr(err_msg(), f->path));
	assert_non_null(strstr(err_msg(), "version 7"));
	assert_non_null(strstr(err_msg(), "version 3"));
	assert_int_equal(store_open(f->path, STORE_READONLY, &st), ENG_ERANGE);
	/* the refusal did not touch the file */
	assert_int_equal(header_u32(f->path, 60), 7);
	/* a negative version (the header's u32 read as signed) is refused, not migrated */
	header_set_u32(f->path, 60, 0xffffffffu);
	assert_int_equal(store_open(f->path, 0, &st), ENG_EDB);
	assert_null(st);
	assert_non_null(strstr(err_msg(), "schema version -1 is negative"));
	assert_int_equal(header_u32(f->path, 60), 0xffffffffu);
}

static void test_bad_files(void **state)
{
	struct fx *f = *state;
	struct store *st = NULL;
	char garbage[128], missing[128];
	struct stat sb;
	FILE *fp;
	int i;

	snprintf(garbage, sizeof(garbage), "%s/garbage", f->dir);
	fp = fopen(garbage, "wb");
	assert_non_null(fp);
	for (i = 0; i < 4096; i++)
		fputc("not a database\n"[i % 15], fp);
	fclose(fp);
	assert_int_equal(store_open(garbage, 0, &st), ENG_EDB);
	assert_null(st);
	assert_non_null(strstr(err_msg(), garbage));
	assert_non_null(strstr(err_msg(), "not a database"));
	assert_int_equal(store_open(garbage, STORE_READONLY, &st), ENG_EDB);
	assert_non_null(strstr(err_msg(), garbage));

	/* read-only never creates a file */
	snprintf(missing, sizeof(missing), "%s/other.db", f->dir);
	assert_int_equal(store_open(missing, STORE_READONLY, &st), ENG_ENOENT);
	assert_non_null(strstr(err_msg(), missing));
	assert_int_equal(stat(missing, &sb), -1);

	/* an empty file is a new store read-write, not a store read-only */
	fp = fopen(missing, "wb");
	assert_non_null(fp);
	fclose(fp);
	assert_int_equal(store_open(missing, STORE_READONLY, &st), ENG_EDB);
	assert_int_equal(store_open(missing, 0, &st), 0);
	store_close(st);
	store_close(NULL);
}

static void test_transactions(void **state)
{
	struct fx *f = *state;
	struct store_qa q = qa_make("00000000000000a1", "intention", "head_turn", "approx",
				    10, 0);

	fx_open(f);
	put_recording(f->st, "rec1");
	assert_int_equal(store_commit(f->st), ENG_EINVAL);
	assert_int_equal(store_rollback(f->st), 0);
	assert_int_equal(store_begin(f->st), 0);
	assert_int_equal(store_begin(f->st), ENG_EINVAL);
	put_ok(f->st, &q, STORE_PUT_NEW);
	/* a failing call inside a batch undoes only itself */
	q.id = "00000000000000a2";
	q.recording_id = "unknown";
	assert_int_equal(store_qa_put(f->st, &q, NULL), ENG_EINVAL);
	assert_non_null(strstr(err_msg(), "unknown"));
	assert_int_equal(store_rollback(f->st), 0);
	assert_int_equal(list_total(f->st, NULL), 0);

	q.recording_id = "rec1";
	assert_int_equal(store_begin(f->st), 0);
	put_ok(f->st, &q, STORE_PUT_NEW);
	assert_int_equal(store_commit(f->st), 0);
	assert_int_equal(list_total(f->st, NULL), 1);
}

/* Runs SQL on the file with the sqlite3 shell (a fault the store cannot cause). */
static void shell_sql(const char *path, const char *sql)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "sqlite3 '%s' \"%s\"", path, sql);
	assert_int_equal(system(cmd), 0);
}

static void test_failure_undoes_call(void **state)
{
	struct fx *f = *state;
	struct store_qa a = qa_make("00000000000000a1", "intention", "head_turn", "approx", 1, 0);
	struct store_qa b = qa_make("00000000000000a2", "intention", "head_turn", "approx", 2, 0);
	struct store_review r = { "00000000000000a1", "alice", "approve", NULL, -1, NULL,
				  NULL, NULL, 0, 0, 0 };
	cJSON *got = NULL;

	fx_open(f);
	put_recording(f->st, "rec1");
	store_close(f->st);
	f->st = NULL;
	/* the trace insert, which comes after the qa row, fails for b */
	shell_sql(f->path, "CREATE TRIGGER fail_trace BEFORE INSERT ON traces"
		  " WHEN NEW.qa_id = '00000000000000a2' BEGIN SELECT RAISE(ABORT, 'injected'); END;"
		  " CREATE TRIGGER fail_status BEFORE UPDATE OF status ON qa"
		  " WHEN NEW.status = 'approved' BEGIN SELECT RAISE(ABORT, 'injected'); END;");
	fx_open(f);

	/* inside a batch: the failed put leaves what came before it */
	assert_int_equal(store_begin(f->st), 0);
	put_ok(f->st, &a, STORE_PUT_NEW);
	assert_int_equal(store_qa_put(f->st, &b, NULL), ENG_EDB);
	assert_non_null(strstr(err_msg(), "injected"));
	assert_non_null(strstr(err_msg(), f->path));
	assert_int_equal(store_commit(f->st), 0);
	assert_int_equal(list_total(f->st, NULL), 1);
	assert_int_equal(store_qa_get(f->st, b.id, 0, &got), ENG_ENOTFOUND);

	/* on its own: the failed put leaves nothing */
	assert_int_equal(store_qa_put(f->st, &b, NULL), ENG_EDB);
	assert_int_equal(list_total(f->st, NULL), 1);

	/* a review whose status update fails is not kept, in or out of a batch */
	assert_int_equal(store_review_add(f->st, &r, NULL), ENG_EDB);
	assert_int_equal(store_begin(f->st), 0);
	assert_int_equal(store_review_add(f->st, &r, NULL), ENG_EDB);
	r.decision = "note";
	assert_int_equal(store_review_add(f->st, &r, NULL), 0);
	assert_int_equal(store_commit(f->st), 0);
	assert_int_equal(store_qa_get(f->st, a.id, STORE_GET_REVIEWS, &got), 0);
	assert_string_equal(jstr(got, "status"), "pending");
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(got, "reviews")), 1);
	cJSON_Delete(got);
}

/* Writes n QAs with big traces in a batch, then exits without commit. */
static void crash_mid_batch(const char *path, int n)
{
	struct store *st = NULL;
	struct store_qa q = qa_make("", "intention", "head_turn", "approx", 0, 1);
	static char trace[4096];
	char id[32];
	int i;

	memset(trace, 'x', sizeof(trace) - 1);
	trace[0] = '"';
	trace[sizeof(trace) - 2] = '"';
	q.trace_json = trace;
	if (store_open(path, 0, &st) || store_begin(st))
		_exit(2);
	for (i = 0; i < n; i++) {
		snprintf(id, sizeof(id), "%016x", 0x100 + i);
		q.id = id;
		q.t_ns = i;
		q.clip_start_ns = i;
		q.clip_end_ns = i;
		if (store_qa_put(st, &q, NULL))
			_exit(3);
	}
	_exit(0); /* no commit, no close: as if the process died */
}

static void test_interrupted_transaction(void **state)
{
	struct fx *f = *state;
	struct stat sb;
	char wal[128], *check = NULL;
	pid_t pid;
	int status = -1;

	fx_open(f);
	put_recording(f->st, "rec1");
	store_close(f->st);
	f->st = NULL;
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		crash_mid_batch(f->path, 3000);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	/* the batch outgrew the page cache, so uncommitted pages reached the WAL */
	snprintf(wal, sizeof(wal), "%s-wal", f->path);
	assert_int_equal(stat(wal, &sb), 0);
	assert_true(sb.st_size > 1000000);

	fx_open(f);
	assert_int_equal(store_integrity_check(f->st, &check), 0);
	assert_string_equal(check, "ok");
	free(check);
	assert_int_equal(list_total(f->st, NULL), 0);
	{
		cJSON *rec = NULL;

		assert_int_equal(store_recording_get(f->st, "rec1", &rec), 0);
		cJSON_Delete(rec);
	}
}

/* ============================== Generation ============================== */

static void test_put_validation(void **state)
{
	struct fx *f = *state;
	struct store_qa q = qa_make("00000000000000b1", "intention", "head_turn", "approx",
				    10, 0);
	struct store_qa bad;

	fx_open(f);
	put_recording(f->st, "rec1");
	bad = q;
	bad.id = "00000000000000B1"; /* upper case */
	assert_int_equal(store_qa_put(f->st, &bad, NULL), ENG_EINVAL);
	assert_non_null(strstr(err_msg(), "id must be"));
	bad = q;
	bad.id = "0000000000000b1"; /* 15 digits */
	assert_int_equal(store_qa_put(f->st, &bad, NULL), ENG_EINVAL);
	bad = q;
	bad.metric = "exact";
	assert_int_equal(store_qa_put(f->st, &bad, NULL), ENG_EINVAL);
	assert_non_null(strstr(err_msg(), "metric"));
	bad = q;
	bad.options_json = "[\"A\", 2]";
	assert_int_equal(store_qa_put(f->st, &bad, NULL), ENG_EINVAL);
	assert_non_null(strstr(err_msg(), "options_json"));
	bad = q;
	bad.answer_index = 5;
	assert_int_equal(store_qa_put(f->st, &bad, NULL), ENG_EINVAL);
	bad = q;
	bad.gt_json = "{\"yaw\":";
	assert_int_equal(store_qa_put(f->st, &bad, NULL), ENG_EINVAL);
	assert_non_null(strstr(err_msg(), "gt_json"));
	bad = q;
	bad.subtask = "intention.head_turn";
	assert_int_equal(store_qa_put(f->st, &bad, NULL), ENG_EINVAL);
	bad = q;
	bad.run_id = 42;
	assert_int_equal(store_qa_put(f->st, &bad, NULL), ENG_EINVAL);
	assert_non_null(strstr(err_msg(), "run 42"));
	bad = q;
	bad.status = "approved"; /* generation cannot approve */
	assert_int_equal(store_qa_put(f->st, &bad, NULL), ENG_EINVAL);
	assert_int_equal(list_total(f->st, NULL), 0);
}

static void test_put_idempotent(void **state)
{
	struct fx *f = *state;
	struct store_qa q = qa_make("00000000000000c1", "intention", "head_turn", "approx",
				    10, 0);
	cJSON *got = NULL;
	int64_t run = 0;

	fx_open(f);
	put_recording(f->st, "rec1");
	assert_int_equal(store_run_begin(f->st, "{\"options\":5}", "local", NULL, 7,
					 "0.1.0", &run), 0);
	assert_int_equal(run, 1);
	q.run_id = run;
	put_ok(f->st, &q, STORE_PUT_NEW);
	q.question = "Another wording";
	put_ok(f->st, &q, STORE_PUT_KEPT);
	assert_int_equal(store_run_finish(f->st, run, "ok", "{\"qa\":1}"), 0);
	assert_int_equal(store_run_finish(f->st, 99, "ok", NULL), ENG_ENOTFOUND);
	assert_int_equal(list_total(f->st, NULL), 1);
	assert_int_equal(store_run_list(f->st, &got), 0);
	assert_int_equal(cJSON_GetArraySize(got), 1);
	NEAR(jnum(cJSON_GetArrayItem(got, 0), "id"), 1, 0);
	NEAR(jnum(cJSON_GetArrayItem(got, 0), "seed"), 7, 0);
	assert_string_equal(jstr(cJSON_GetArrayItem(got, 0), "brain"), "local");
	assert_string_equal(jstr(cJSON_GetArrayItem(got, 0), "engine_version"), "0.1.0");
	assert_string_equal(jstr(cJSON_GetArrayItem(got, 0), "status"), "ok");
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetArrayItem(got, 0), "model")));
	NEAR(jnum(cJSON_GetObjectItem(cJSON_GetArrayItem(got, 0), "config"), "options"), 5, 0);
	cJSON_Delete(got);
	got = NULL;

	assert_int_equal(store_qa_get(f->st, q.id, STORE_GET_TRACE, &got), 0);
	assert_string_equal(jstr(got, "question"), "Where is the mug?");
	assert_string_equal(jstr(got, "status"), "pending");
	NEAR(jnum(got, "run_id"), 1, 0);
	NEAR(jnum(got, "t_ns"), 10, 0);
	NEAR(jnum(got, "answer_index"), 0, 0);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(got, "options")), 5);
	assert_true(cJSON_IsArray(cJSON_GetObjectItem(cJSON_GetObjectItem(got, "trace"),
						      "messages")));
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(got, "question_edited")));
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(got, "qc")));
	assert_null(cJSON_GetObjectItem(got, "reviews"));
	/* ISO-8601 UTC with milliseconds */
	assert_int_equal(strlen(jstr(got, "created_at")), 24);
	assert_int_equal(jstr(got, "created_at")[23], 'Z');
	assert_int_equal(jstr(got, "created_at")[19], '.');
	cJSON_Delete(got);
	assert_int_equal(store_qa_get(f->st, "00000000000000ff", 0, &got), ENG_ENOTFOUND);
}

static void test_reviewed_untouched(void **state)
{
	struct fx *f = *state;
	struct store_qa a = qa_make("00000000000000d1", "intention", "head_turn", "approx", 1, 0);
	struct store_qa r = qa_make("00000000000000d2", "intention", "head_turn", "approx", 2, 0);
	struct store_qa e = qa_make("00000000000000d3", "intention", "head_turn", "approx", 3, 0);
	struct store_qa p = qa_make("00000000000000d4", "intention", "head_turn", "approx", 4, 0);
	struct store_qa x = qa_make("00000000000000d5", "exploration", "navigate", "approx", 5, 0);
	cJSON *got = NULL;
	int64_t n = -1;

	fx_open(f);
	put_recording(f->st, "rec1");
	put_ok(f->st, &a, STORE_PUT_NEW);
	put_ok(f->st, &r, STORE_PUT_NEW);
	put_ok(f->st, &e, STORE_PUT_NEW);
	put_ok(f->st, &p, STORE_PUT_NEW);
	put_ok(f->st, &x, STORE_PUT_NEW);
	review(f->st, a.id, "alice", "approve", -1);
	review(f->st, r.id, "alice", "reject", -1);
	review(f->st, e.id, "alice", "edit", -1);

	assert_int_equal(store_qa_supersede(f->st, "intention", NULL, &n), 0);
	assert_int_equal(n, 1); /* only d4 */
	a.question = r.question = e.question = "changed";
	put_ok(f->st, &a, STORE_PUT_KEPT);
	put_ok(f->st, &r, STORE_PUT_KEPT);
	put_ok(f->st, &e, STORE_PUT_KEPT);

	assert_int_equal(store_qa_get(f->st, a.id, 0, &got), 0);
	assert_string_equal(jstr(got, "status"), "approved");
	assert_string_equal(jstr(got, "question"), "Where is the mug?");
	cJSON_Delete(got);
	assert_int_equal(store_qa_get(f->st, r.id, 0, &got), 0);
	assert_string_equal(jstr(got, "status"), "rejected");
	cJSON_Delete(got);
	assert_int_equal(store_qa_get(f->st, e.id, 0, &got), 0);
	assert_string_equal(jstr(got, "status"), "edited");
	assert_string_equal(jstr(got, "question"), "Where is the mug?");
	assert_string_equal(jstr(got, "question_edited"), "Where is the red mug?");
	cJSON_Delete(got);
	assert_int_equal(store_qa_get(f->st, x.id, 0, &got), 0);
	assert_string_equal(jstr(got, "status"), "pending"); /* other category */
	cJSON_Delete(got);
	/* a stale QA cannot be approved */
	{
		struct store_review rv = { p.id, "bob", "approve", NULL, -1, NULL, NULL,
					   NULL, 0, 0, 0 };

		assert_int_equal(store_review_add(f->st, &rv, NULL), ENG_EINVAL);
		assert_non_null(strstr(err_msg(), "superseded"));
	}
}

static void test_supersede_replace_keeps_reviews(void **state)
{
	struct fx *f = *state;
	struct store_qa q = qa_make("00000000000000e1", "exploration", "navigate", "approx",
				    50, 1);
	struct store_qa other = qa_make("00000000000000e2", "exploration", "navigate",
					"approx", 60, 1);
	struct store_qa dropped = qa_make("00000000000000e3", "exploration", "navigate",
					  "relative", 80, 0);
	struct store_drop d = { 0, "rec1", "exploration", "navigate", "approx",
				"no_path", 70, "sofa", NULL };
	cJSON *got = NULL, *revs;
	int64_t n = -1;

	fx_open(f);
	put_recording(f->st, "rec1");
	put_recording(f->st, "rec2");
	put_ok(f->st, &q, STORE_PUT_NEW);
	other.recording_id = "rec2";
	put_ok(f->st, &other, STORE_PUT_NEW);
	assert_int_equal(store_drop_put(f->st, &d), 0);
	dropped.status = "dropped";
	dropped.drop_reason = "length_z";
	put_ok(f->st, &dropped, STORE_PUT_NEW);
	review(f->st, q.id, "alice", "note", -1);
	review(f->st, q.id, "bob", "answer", 1);

	/* only rec1's unreviewed QAs of the category: the pending one and the dropped one */
	assert_int_equal(store_qa_supersede(f->st, "exploration", "rec1", &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(store_qa_get(f->st, dropped.id, 0, &got), 0);
	assert_string_equal(jstr(got, "status"), "superseded");
	cJSON_Delete(got);
	assert_int_equal(store_qa_get(f->st, other.id, 0, &got), 0);
	assert_string_equal(jstr(got, "status"), "pending");
	cJSON_Delete(got);
	assert_int_equal(store_qa_get(f->st, q.id, 0, &got), 0);
	assert_string_equal(jstr(got, "status"), "superseded");
	cJSON_Delete(got);

	q.question = "Turn left and go forward ~3.2 m?";
	q.answer_index = 3;
	q.trace_json = NULL;
	put_ok(f->st, &q, STORE_PUT_REPLACED);
	put_ok(f->st, &q, STORE_PUT_KEPT);
	assert_int_equal(store_qa_get(f->st, q.id, STORE_GET_REVIEWS | STORE_GET_TRACE,
				      &got), 0);
	assert_string_equal(jstr(got, "status"), "pending");
	assert_string_equal(jstr(got, "question"), "Turn left and go forward ~3.2 m?");
	NEAR(jnum(got, "answer_index"), 3, 0);
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(got, "trace")));
	NEAR(jnum(got, "n_reviews"), 2, 0);
	revs = cJSON_GetObjectItem(got, "reviews");
	assert_int_equal(cJSON_GetArraySize(revs), 2);
	assert_string_equal(jstr(cJSON_GetArrayItem(revs, 0), "decision"), "note");
	assert_string_equal(jstr(cJSON_GetArrayItem(revs, 1), "reviewer"), "bob");
	NEAR(jnum(cJSON_GetArrayItem(revs, 1), "blind_answer_index"), 1, 0);
	cJSON_Delete(got);
	assert_int_equal(list_total(f->st, NULL), 3);

	/* the drops of the superseded generation went with it */
	assert_int_equal(store_stats(f->st, &got), 0);
	NEAR(jnum(cJSON_GetObjectItem(got, "drops"), "total"), 0, 0);
	cJSON_Delete(got);
}

static void test_reviews(void **state)
{
	struct fx *f = *state;
	struct store_qa q = qa_make("00000000000000f1", "intention", "gaze_target",
				    "relative", 5, 2);
	struct store_review r;
	cJSON *got = NULL, *revs, *e;
	int64_t id1 = 0, id2 = 0;

	fx_open(f);
	put_recording(f->st, "rec1");
	put_ok(f->st, &q, STORE_PUT_NEW);

	memset(&r, 0, sizeof(r));
	r.qa_id = q.id;
	r.reviewer = "alice";
	r.decision = "approve";
	r.blind_answer_index = 7; /* only 5 options */
	assert_int_equal(store_review_add(f->st, &r, NULL), ENG_EINVAL);
	r.blind_answer_index = -1;
	r.decision = "bless";
	assert_int_equal(store_review_add(f->st, &r, NULL), ENG_EINVAL);
	r.decision = "edit"; /* no edit_after */
	assert_int_equal(store_review_add(f->st, &r, NULL), ENG_EINVAL);
	r.qa_id = "00000000000000ff";
	r.decision = "approve";
	assert_int_equal(store_review_add(f->st, &r, NULL), ENG_ENOTFOUND);

	r.qa_id = q.id;
	r.decision = "edit";
	r.edit_after = "Which object will the wearer look at next?";
	r.started_ms = 1700000000000LL;
	r.decided_ms = 1700000004250LL;
	assert_int_equal(store_review_add(f->st, &r, &id1), 0);
	r.decision = "reject";
	r.edit_after = NULL;
	r.reason = "ambiguous";
	r.started_ms = 0;
	r.decided_ms = 0;
	assert_int_equal(store_review_add(f->st, &r, &id2), 0);
	assert_true(id2 > id1);

	assert_int_equal(store_qa_get(f->st, q.id, STORE_GET_REVIEWS, &got), 0);
	/* alice's latest verdict (reject) is hers; a rejected QA has no wording */
	assert_string_equal(jstr(got, "status"), "rejected");
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(got, "question_edited")));
	revs = cJSON_GetObjectItem(got, "reviews");
	assert_int_equal(cJSON_GetArraySize(revs), 2);
	e = cJSON_GetArrayItem(revs, 0);
	assert_string_equal(jstr(e, "edit_before"), "Where is the mug?");
	assert_string_equal(jstr(e, "started_at"), "2023-11-14T22:13:20.000Z");
	assert_string_equal(jstr(e, "decided_at"), "2023-11-14T22:13:24.250Z");
	NEAR(jnum(e, "time_ms"), 4250, 0);
	e = cJSON_GetArrayItem(revs, 1);
	assert_string_equal(jstr(e, "reason"), "ambiguous");
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(e, "started_at")));
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(e, "time_ms")));
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(e, "edit_before")));
	cJSON_Delete(got);
}

/* ============================== The review policy ============================== */

/* One verdict, adjudication or other review; the wording for edits. */
static int64_t verdict(struct store *st, const char *id, const char *who, const char *decision,
		       const char *wording, int adjudication)
{
	struct store_review r;
	int64_t rid = 0;
	int rc;

	memset(&r, 0, sizeof(r));
	r.qa_id = id;
	r.reviewer = who;
	r.decision = decision;
	r.blind_answer_index = -1;
	r.edit_after = wording;
	r.reason = !strcmp(decision, "reject") ? "no" : NULL;
	r.note = !strcmp(decision, "note") ? "a note" : NULL;
	r.adjudication = adjudication;
	if (!strcmp(decision, "answer"))
		r.blind_answer_index = 2;
	rc = store_review_add(st, &r, &rid);
	if (rc)
		fprintf(stderr, "store_review_add: %s\n", err_msg());
	assert_int_equal(rc, 0);
	return rid;
}

/* The QA's status and wording ("" for none). */
static void status_is(struct store *st, const char *id, const char *status, const char *wording)
{
	cJSON *q = NULL;

	assert_int_equal(store_qa_get(st, id, 0, &q), 0);
	assert_string_equal(jstr(q, "status"), status);
	assert_string_equal(jstr(q, "question_edited"), wording);
	cJSON_Delete(q);
}

/* One integer from the sqlite3 shell (an independent reader of the file). */
static long long shell_int(const char *path, const char *sql)
{
	char cmd[2048], line[64] = "";
	FILE *p;

	snprintf(cmd, sizeof(cmd), "sqlite3 -readonly '%s' \"%s\"", path, sql);
	p = popen(cmd, "r");
	assert_non_null(p);
	assert_non_null(fgets(line, sizeof(line), p));
	assert_int_equal(pclose(p), 0);
	return strtoll(line, NULL, 10);
}

/* store_review_counts() equals the counts of store_stats() and a GROUP BY of the shell. */
static void counts_agree(struct store *st, const char *path)
{
	cJSON *c = NULL, *stats = NULL, *g, *sg;
	char cmd[512], line[256];
	FILE *p;
	int rows = 0;

	assert_int_equal(store_review_counts(st, &c), 0);
	assert_int_equal(store_stats(st, &stats), 0);
	assert_true(cJSON_Compare(cJSON_GetObjectItem(c, "by_status"),
				  cJSON_GetObjectItem(stats, "by_status"), 1));
	NEAR(jnum(c, "total"), jnum(stats, "total"), 0);
	cJSON_ArrayForEach(g, cJSON_GetObjectItem(c, "groups")) {
		const cJSON *v;

		sg = cJSON_GetObjectItem(cJSON_GetObjectItem(stats, "groups"), g->string);
		assert_non_null(sg);
		cJSON_ArrayForEach(v, g)
			NEAR(v->valuedouble, jnum(sg, v->string), 0);
	}
	/* every (group, status) of a GROUP BY read by the shell is in the counts */
	snprintf(cmd, sizeof(cmd), "sqlite3 -readonly '%s' \"SELECT category || '.' || subtask"
		 " || '/' || metric, status, count(*) FROM qa GROUP BY 1, 2\"", path);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		char *bar1 = strchr(line, '|'), *bar2 = bar1 ? strchr(bar1 + 1, '|') : NULL;

		assert_non_null(bar2);
		*bar1 = *bar2 = '\0';
		NEAR(jnum(cJSON_GetObjectItem(cJSON_GetObjectItem(c, "groups"), line), bar1 + 1),
		     strtod(bar2 + 1, NULL), 0);
		rows++;
	}
	assert_int_equal(pclose(p), 0);
	assert_true(rows > 0);
	/* and qa_counts itself, per recording, equals a GROUP BY of qa */
	assert_int_equal(shell_int(path, "SELECT (SELECT group_concat(x, ',') FROM (SELECT"
				   " recording_id || '|' || category || '|' || subtask || '|' || metric"
				   " || '|' || status || ':' || count(*) AS x FROM qa GROUP BY"
				   " recording_id, category, subtask, metric, status ORDER BY 1)) IS"
				   " (SELECT group_concat(x, ',') FROM (SELECT recording_id || '|' ||"
				   " category || '|' || subtask || '|' || metric || '|' || status || ':'"
				   " || n AS x FROM qa_counts WHERE n > 0 ORDER BY 1))"), 1);
	cJSON_Delete(c);
	cJSON_Delete(stats);
}

/* Each reviewer's verdict counts; disagreement is a conflict an adjudication settles. */
static void test_review_policy(void **state)
{
	struct fx *f = *state;
	struct store_qa p1 = qa_make("d000000000000001", "intention", "head_turn", "approx",
				     10000000000LL, 1);
	struct store_qa p2 = qa_make("d000000000000002", "intention", "head_turn", "approx",
				     20000000000LL, 1);
	struct store_qa p3 = qa_make("d000000000000003", "exploration", "navigate", "relative",
				     30000000000LL, 0);
	cJSON *v = NULL, *adj = NULL, *e;
	int64_t n = -1;

	fx_open(f);
	put_recording(f->st, "rec1");
	put_ok(f->st, &p1, STORE_PUT_NEW);
	put_ok(f->st, &p2, STORE_PUT_NEW);
	put_ok(f->st, &p3, STORE_PUT_NEW);

	/* agreement, then a change of mind by one reviewer: a conflict, not an overwrite */
	verdict(f->st, p1.id, "ana", "approve", NULL, 0);
	status_is(f->st, p1.id, "approved", "");
	verdict(f->st, p1.id, "bob", "approve", NULL, 0);
	status_is(f->st, p1.id, "approved", "");
	verdict(f->st, p1.id, "bob", "reject", NULL, 0);
	status_is(f->st, p1.id, "conflict", "");
	assert_int_equal(store_review_verdicts(f->st, p1.id, &v, &adj), 0);
	assert_int_equal(cJSON_GetArraySize(v), 2);
	e = cJSON_GetArrayItem(v, 0);
	assert_string_equal(jstr(e, "reviewer"), "ana");
	assert_string_equal(jstr(e, "decision"), "approve");
	e = cJSON_GetArrayItem(v, 1);
	assert_string_equal(jstr(e, "reviewer"), "bob");
	assert_string_equal(jstr(e, "decision"), "reject");
	assert_true(cJSON_IsNull(adj));
	cJSON_Delete(v);
	cJSON_Delete(adj);
	/* the adjudication decides, and stands against later verdicts, until another one */
	verdict(f->st, p1.id, "carl", "reject", NULL, 1);
	status_is(f->st, p1.id, "rejected", "");
	verdict(f->st, p1.id, "ana", "approve", NULL, 0);
	status_is(f->st, p1.id, "rejected", "");
	verdict(f->st, p1.id, "dora", "approve", NULL, 1);
	status_is(f->st, p1.id, "approved", "");
	assert_int_equal(store_review_verdicts(f->st, p1.id, &v, &adj), 0);
	assert_int_equal(cJSON_GetArraySize(v), 2); /* adjudicators are not reviewers here */
	assert_string_equal(jstr(adj, "reviewer"), "dora");
	assert_string_equal(jstr(adj, "decision"), "approve");
	cJSON_Delete(v);
	cJSON_Delete(adj);

	/* wording: the latest edit of a reviewer who accepts */
	verdict(f->st, p2.id, "ana", "edit", "Where is the red mug?", 0);
	status_is(f->st, p2.id, "edited", "Where is the red mug?");
	verdict(f->st, p2.id, "bob", "approve", NULL, 0);
	status_is(f->st, p2.id, "edited", "Where is the red mug?");
	verdict(f->st, p2.id, "bob", "edit", "Where is the red mug now?", 0);
	status_is(f->st, p2.id, "edited", "Where is the red mug now?");
	verdict(f->st, p2.id, "bob", "reject", NULL, 0);
	/* bob withdrew his edit: ana's wording, and a conflict */
	status_is(f->st, p2.id, "conflict", "Where is the red mug?");
	verdict(f->st, p2.id, "ana", "reject", NULL, 0);
	status_is(f->st, p2.id, "rejected", "");
	verdict(f->st, p2.id, "eve", "edit", "Which mug?", 1);
	status_is(f->st, p2.id, "edited", "Which mug?");

	/* flags, notes and blind answers are not verdicts; an adjudication must be one */
	verdict(f->st, p3.id, "ana", "flag", NULL, 0);
	verdict(f->st, p3.id, "ana", "note", NULL, 0);
	verdict(f->st, p3.id, "bob", "answer", NULL, 0);
	status_is(f->st, p3.id, "pending", "");
	{
		struct store_review r;

		memset(&r, 0, sizeof(r));
		r.qa_id = p3.id;
		r.reviewer = "carl";
		r.decision = "note";
		r.note = "settled";
		r.blind_answer_index = -1;
		r.adjudication = 1;
		assert_int_equal(store_review_add(f->st, &r, NULL), ENG_EINVAL);
	}
	/* every derived status is already in place: applying the policy again changes nothing */
	assert_int_equal(store_review_derive_all(f->st, &n), 0);
	assert_int_equal(n, 0);
	counts_agree(f->st, f->path);
	/* a conflict is reviewed: generation and supersede leave it alone */
	verdict(f->st, p3.id, "ana", "approve", NULL, 0);
	verdict(f->st, p3.id, "bob", "reject", NULL, 0);
	status_is(f->st, p3.id, "conflict", "");
	assert_int_equal(store_qa_supersede(f->st, "exploration", NULL, &n), 0);
	assert_int_equal(n, 0);
	put_ok(f->st, &p3, STORE_PUT_KEPT);
	counts_agree(f->st, f->path);
}

/* Text that is not UTF-8 is refused, and nothing is stored. */
static void test_review_utf8(void **state)
{
	struct fx *f = *state;
	struct store_qa q = qa_make("d000000000000009", "intention", "head_turn", "approx",
				    10000000000LL, 1);
	static const char *const bad[] = {
		"caf\xe9",              /* Latin-1 */
		"\xc0\xaf",             /* overlong '/' */
		"\xed\xa0\x80",         /* a UTF-16 surrogate */
		"\xf4\x90\x80\x80",     /* past U+10FFFF */
		"ok\xe2\x82",           /* cut short */
		"\x80 alone",           /* a continuation byte first */
	};
	struct store_review r;
	cJSON *got = NULL;
	size_t i;

	fx_open(f);
	put_recording(f->st, "rec1");
	put_ok(f->st, &q, STORE_PUT_NEW);
	memset(&r, 0, sizeof(r));
	r.qa_id = q.id;
	r.reviewer = "ana";
	r.decision = "note";
	r.blind_answer_index = -1;
	for (i = 0; i < ARRAY_SIZE_T(bad); i++) {
		r.note = bad[i];
		assert_int_equal(store_review_add(f->st, &r, NULL), ENG_EINVAL);
		assert_non_null(strstr(err_msg(), "UTF-8"));
	}
	r.note = "note";
	r.reviewer = "\xff";
	assert_int_equal(store_review_add(f->st, &r, NULL), ENG_EINVAL);
	r.reviewer = "ana";
	r.note = "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x99\x82"; /* é, €, an emoji */
	assert_int_equal(store_review_add(f->st, &r, NULL), 0);
	assert_int_equal(store_qa_get(f->st, q.id, STORE_GET_REVIEWS, &got), 0);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(got, "reviews")), 1);
	assert_string_equal(jstr(cJSON_GetArrayItem(cJSON_GetObjectItem(got, "reviews"), 0), "note"),
			    "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x99\x82");
	cJSON_Delete(got);
}

/* The shell's answer to sql, as one string (rows joined by ';'). */
static void shell_text(const char *path, const char *sql, char *out, size_t size)
{
	char cmd[1024], line[512];
	size_t n = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "sqlite3 -readonly '%s' \"%s\"", path, sql);
	p = popen(cmd, "r");
	assert_non_null(p);
	out[0] = '\0';
	while (fgets(line, sizeof(line), p)) {
		line[strcspn(line, "\n")] = '\0';
		n += (size_t)snprintf(out + n, n < size ? size - n : 0, "%s%s", n ? ";" : "", line);
	}
	assert_int_equal(pclose(p), 0);
	assert_true(n < size);
}

/*
 * A store of schema version 1 (tests/data/store/v1.sql, as that program
 * wrote it) opens, upgrades to version 2 once, keeps every row and review,
 * and its statuses follow the review policy: ana's three approvals that
 * bob's later rejections overwrote are conflicts now.
 */
static void test_upgrade_from_v1(void **state)
{
	struct fx *f = *state;
	static const char reviews_sql[] =
		"SELECT id, qa_id, reviewer, decision, coalesce(reason, ''),"
		" coalesce(edit_before, ''), coalesce(edit_after, ''), coalesce(note, ''),"
		" started_at, decided_at FROM reviews ORDER BY id";
	char cmd[512], before[4096], after[4096], text[1024];
	struct store *st = NULL;
	cJSON *page = NULL;
	struct store_filter flt;
	int64_t n = -1;

	snprintf(cmd, sizeof(cmd), "sqlite3 '%s' < tests/data/store/v1.sql", f->path);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(header_u32(f->path, 60), 1);
	shell_text(f->path, reviews_sql, before, sizeof(before));
	/* read-only never migrates: it says to open the file read-write once */
	assert_int_equal(store_open(f->path, STORE_READONLY, &st), ENG_ERANGE);
	assert_non_null(strstr(err_msg(), "read-write"));

	fx_open(f);
	status_is(f->st, "b000000000000001", "conflict", "");
	status_is(f->st, "b000000000000002", "conflict", "");
	status_is(f->st, "b000000000000003", "conflict", "");
	status_is(f->st, "b000000000000004", "approved", "");
	status_is(f->st, "b000000000000005", "edited", "Where will the wearer turn next?");
	status_is(f->st, "b000000000000006", "pending", "");
	store_close(f->st);
	f->st = NULL;
	assert_int_equal(header_u32(f->path, 60), STORE_SCHEMA_VERSION);
	/* every review as it was, none an adjudication; the other tables kept */
	shell_text(f->path, reviews_sql, after, sizeof(after));
	assert_string_equal(after, before);
	shell_text(f->path, "SELECT count(*), sum(adjudication) FROM reviews", text, sizeof(text));
	assert_string_equal(text, "10|0");
	shell_text(f->path, "SELECT (SELECT count(*) FROM qa), (SELECT count(*) FROM traces),"
		   " (SELECT count(*) FROM drops), (SELECT count(*) FROM runs),"
		   " (SELECT root FROM recordings)", text, sizeof(text));
	assert_string_equal(text, "6|1|1|1|/data/rec1");
	shell_text(f->path, "PRAGMA foreign_key_check", text, sizeof(text));
	assert_string_equal(text, "");
	shell_text(f->path, "PRAGMA integrity_check", text, sizeof(text));
	assert_string_equal(text, "ok");

	/* a second open changes nothing; the readers and the counts work */
	fx_open(f);
	assert_int_equal(store_review_derive_all(f->st, &n), 0);
	assert_int_equal(n, 0);
	memset(&flt, 0, sizeof(flt));
	flt.status = "conflict";
	assert_int_equal(list_total(f->st, &flt), 3);
	assert_int_equal(store_qa_list(f->st, &flt, &page), 0);
	assert_string_equal(jstr(cJSON_GetArrayItem(cJSON_GetObjectItem(page, "items"), 0), "id"),
			    "b000000000000001");
	cJSON_Delete(page);
	counts_agree(f->st, f->path);
	/* an adjudication settles one of them */
	verdict(f->st, "b000000000000002", "lead", "approve", NULL, 1);
	status_is(f->st, "b000000000000002", "approved", "");
	assert_int_equal(list_total(f->st, &flt), 2);
	counts_agree(f->st, f->path);
}

/* ============================== Readers ============================== */

struct iter_ctx {
	int n;
	int stop_at;
	char ids[8][24];
};

static int iter_cb(const struct store_qa *qa, void *ctx)
{
	struct iter_ctx *c = ctx;

	if (c->n < 8)
		snprintf(c->ids[c->n], sizeof(c->ids[0]), "%s", qa->id);
	c->n++;
	assert_non_null(qa->status);
	if (c->stop_at && c->n == c->stop_at)
		return 99;
	return 0;
}

static void test_filters_neighbours_iter(void **state)
{
	struct fx *f = *state;
	/* listed order: rec1 t=10 (11), rec1 t=20 (13, 14), rec1 t=30 (12), rec2 t=5 (15) */
	struct store_qa q1 = qa_make("0000000000000011", "intention", "head_turn", "approx", 10, 0);
	struct store_qa q2 = qa_make("0000000000000012", "intention", "head_turn", "relative", 30, 1);
	struct store_qa q3 = qa_make("0000000000000013", "exploration", "navigate", "approx", 20, 2);
	struct store_qa q4 = qa_make("0000000000000014", "intention", "gaze_target", "approx", 20, 3);
	struct store_qa q5 = qa_make("0000000000000015", "intention", "head_turn", "approx", 5, 4);
	struct store_filter flt;
	struct iter_ctx ctx;
	cJSON *out = NULL, *items;
	char *prev = NULL, *next = NULL;

	fx_open(f);
	put_recording(f->st, "rec1");
	put_recording(f->st, "rec2");
	q5.recording_id = "rec2";
	q5.t_ns = 5;
	q5.clip_start_ns = 0;
	q5.clip_end_ns = 5;
	assert_int_equal(store_begin(f->st), 0);
	put_ok(f->st, &q2, STORE_PUT_NEW);
	put_ok(f->st, &q5, STORE_PUT_NEW);
	put_ok(f->st, &q1, STORE_PUT_NEW);
	put_ok(f->st, &q4, STORE_PUT_NEW);
	put_ok(f->st, &q3, STORE_PUT_NEW);
	assert_int_equal(store_commit(f->st), 0);
	review(f->st, q1.id, "alice", "approve", 0);
	review(f->st, q3.id, "bob", "edit", -1);
	review(f->st, q4.id, "alice", "flag", -1);

	assert_int_equal(store_qa_list(f->st, NULL, &out), 0);
	items = cJSON_GetObjectItem(out, "items");
	NEAR(jnum(out, "total"), 5, 0);
	assert_string_equal(jstr(cJSON_GetArrayItem(items, 0), "id"), q1.id);
	assert_string_equal(jstr(cJSON_GetArrayItem(items, 1), "id"), q3.id);
	assert_string_equal(jstr(cJSON_GetArrayItem(items, 2), "id"), q4.id);
	assert_string_equal(jstr(cJSON_GetArrayItem(items, 3), "id"), q2.id);
	assert_string_equal(jstr(cJSON_GetArrayItem(items, 4), "id"), q5.id);
	cJSON_Delete(out);

	memset(&flt, 0, sizeof(flt));
	flt.category = "intention";
	assert_int_equal(list_total(f->st, &flt), 4);
	flt.subtask = "head_turn";
	flt.metric = "approx";
	assert_int_equal(list_total(f->st, &flt), 2);
	memset(&flt, 0, sizeof(flt));
	flt.status = "approved,edited";
	assert_int_equal(list_total(f->st, &flt), 2);
	flt.status = "approve"; /* a list element must match whole */
	assert_int_equal(list_total(f->st, &flt), 0);
	memset(&flt, 0, sizeof(flt));
	flt.recording_id = "rec2";
	assert_int_equal(list_total(f->st, &flt), 1);
	memset(&flt, 0, sizeof(flt));
	flt.reviewer = "alice";
	assert_int_equal(list_total(f->st, &flt), 2);
	flt.reviewer = NULL;
	flt.not_reviewer = "alice";
	assert_int_equal(list_total(f->st, &flt), 3);

	/* a page: total ignores limit and offset */
	memset(&flt, 0, sizeof(flt));
	flt.limit = 2;
	flt.offset = 1;
	assert_int_equal(store_qa_list(f->st, &flt, &out), 0);
	NEAR(jnum(out, "total"), 5, 0);
	items = cJSON_GetObjectItem(out, "items");
	assert_int_equal(cJSON_GetArraySize(items), 2);
	assert_string_equal(jstr(cJSON_GetArrayItem(items, 0), "id"), q3.id);
	assert_string_equal(jstr(cJSON_GetArrayItem(items, 1), "id"), q4.id);
	NEAR(jnum(cJSON_GetArrayItem(items, 0), "n_reviews"), 1, 0);
	cJSON_Delete(out);
	flt.limit = -1;
	assert_int_equal(store_qa_list(f->st, &flt, &out), ENG_EINVAL);

	/* neighbours in the whole list */
	assert_int_equal(store_qa_neighbours(f->st, NULL, q3.id, &prev, &next), 0);
	assert_string_equal(prev, q1.id);
	assert_string_equal(next, q4.id);
	free(prev);
	free(next);
	/* same recording and time: the id decides */
	assert_int_equal(store_qa_neighbours(f->st, NULL, q4.id, &prev, &next), 0);
	assert_string_equal(prev, q3.id);
	assert_string_equal(next, q2.id);
	free(prev);
	free(next);
	assert_int_equal(store_qa_neighbours(f->st, NULL, q1.id, &prev, &next), 0);
	assert_null(prev);
	assert_string_equal(next, q3.id);
	free(next);
	assert_int_equal(store_qa_neighbours(f->st, NULL, q5.id, &prev, &next), 0);
	assert_string_equal(prev, q2.id);
	assert_null(next);
	free(prev);
	/* in a pending queue, from an item that is no longer pending */
	memset(&flt, 0, sizeof(flt));
	flt.status = "pending";
	assert_int_equal(store_qa_neighbours(f->st, &flt, q3.id, &prev, &next), 0);
	assert_null(prev);
	assert_string_equal(next, q4.id);
	free(next);
	assert_int_equal(store_qa_neighbours(f->st, &flt, q1.id, NULL, &next), 0);
	assert_string_equal(next, q4.id);
	free(next);
	assert_int_equal(store_qa_neighbours(f->st, &flt, "00000000000000ff", &prev, &next),
			 ENG_ENOTFOUND);

	/* streaming, in order, with the filter, and stopping early */
	memset(&ctx, 0, sizeof(ctx));
	memset(&flt, 0, sizeof(flt));
	flt.category = "intention";
	assert_int_equal(store_qa_iter(f->st, &flt, 1, iter_cb, &ctx), 0);
	assert_int_equal(ctx.n, 4);
	assert_string_equal(ctx.ids[0], q1.id);
	assert_string_equal(ctx.ids[1], q4.id);
	assert_string_equal(ctx.ids[2], q2.id);
	assert_string_equal(ctx.ids[3], q5.id);
	memset(&ctx, 0, sizeof(ctx));
	ctx.stop_at = 2;
	assert_int_equal(store_qa_iter(f->st, NULL, 0, iter_cb, &ctx), 99);
	assert_int_equal(ctx.n, 2);
}

struct check_ctx {
	int seen;
};

/* store_qa_iter hands exact int64 times and the JSON text back. */
static int exact_cb(const struct store_qa *qa, void *ctx)
{
	struct check_ctx *c = ctx;

	assert_true(qa->t_ns == 9007199254740993LL); /* 2^53 + 1: not a double */
	assert_string_equal(qa->options_json, "[\"A\",\"B\",\"C\",\"D\",\"E\"]");
	assert_string_equal(qa->trace_json, "{\"messages\":[]}");
	assert_int_equal(qa->answer_index, -1);
	assert_null(qa->question_edited);
	c->seen++;
	return 0;
}

static void test_iter_exact(void **state)
{
	struct fx *f = *state;
	struct store_qa q = qa_make("0000000000000021", "chain", "actions", "relative",
				    9007199254740993LL, -1);
	struct check_ctx c = { 0 };

	fx_open(f);
	put_recording(f->st, "rec1");
	put_ok(f->st, &q, STORE_PUT_NEW);
	assert_int_equal(store_qa_iter(f->st, NULL, 1, exact_cb, &c), 0);
	assert_int_equal(c.seen, 1);
}

/* ============================== Statistics ============================== */

static void test_chi2_sf(void **state)
{
	double x;

	(void)state;
	/* the textbook 5% critical values */
	NEAR(store_chi2_sf(3.841458820694124, 1), 0.05, 1e-12);
	NEAR(store_chi2_sf(11.070497693516351, 5), 0.05, 1e-12);
	NEAR(store_chi2_sf(3.84, 1), 0.05, 1e-4);
	NEAR(store_chi2_sf(11.07, 5), 0.05, 1e-4);
	/* closed forms: df 1 erfc(sqrt(x/2)); df 2 e^-x/2; df 3 and 4 */
	for (x = 0.05; x < 60; x *= 1.7) {
		NEAR(store_chi2_sf(x, 1), erfc(sqrt(x / 2)), 1e-13);
		NEAR(store_chi2_sf(x, 2), exp(-x / 2), 1e-13);
		NEAR(store_chi2_sf(x, 3), erfc(sqrt(x / 2)) + sqrt(2 * x / M_PI) * exp(-x / 2),
		     1e-13);
		NEAR(store_chi2_sf(x, 4), exp(-x / 2) * (1 + x / 2), 1e-13);
	}
	NEAR(store_chi2_sf(0, 3), 1, 0);
	NEAR(store_chi2_sf(-1, 3), 1, 0);
	assert_true(isnan(store_chi2_sf(1, 0)));
}

static void test_kappa(void **state)
{
	/* rows: rater a yes/no; columns: rater b yes/no */
	static const int64_t t[4] = { 20, 5, 10, 15 };
	static const int64_t skew[4] = { 10, 20, 5, 15 };
	static const int64_t same[4] = { 7, 0, 0, 0 };
	static const int64_t perfect[9] = { 3, 0, 0, 0, 4, 0, 0, 0, 2 };
	double k = 0;

	(void)state;
	/* po = 35/50 = 0.7; pe = 0.5 * 0.6 + 0.5 * 0.4 = 0.5; (0.7-0.5)/(1-0.5) */
	assert_int_equal(store_kappa(t, 2, &k), 0);
	NEAR(k, 0.4, 1e-15);
	/* unequal marginals: po = 25/50; pe = 0.6 * 0.3 + 0.4 * 0.7 = 0.46; 0.04/0.54 */
	assert_int_equal(store_kappa(skew, 2, &k), 0);
	NEAR(k, 2.0 / 27.0, 1e-15);
	assert_int_equal(store_kappa(perfect, 3, &k), 0);
	NEAR(k, 1, 1e-15);
	assert_int_equal(store_kappa(same, 2, &k), ENG_ERANGE);
	assert_int_equal(store_kappa(t, 0, &k), ENG_EINVAL);
}

/* Removes member name of o after checking it is near want. */
static void take_near(cJSON *o, const char *name, double want, double eps)
{
	NEAR(jnum(o, name), want, eps);
	cJSON_DeleteItemFromObjectCaseSensitive(o, name);
}

static void test_stats_groups_exact(void **state)
{
	struct fx *f = *state;
	struct store_qa q1 = qa_make("0000000000000031", "intention", "head_turn", "approx", 1, 0);
	struct store_qa q2 = qa_make("0000000000000032", "intention", "head_turn", "approx", 2, 1);
	struct store_qa q3 = qa_make("0000000000000033", "intention", "head_turn", "relative", 3, 2);
	struct store_qa q4 = qa_make("0000000000000034", "exploration", "navigate", "approx", 4, 0);
	struct store_qa q5 = qa_make("0000000000000035", "exploration", "navigate", "approx", 5, 0);
	struct store_qa q6 = qa_make("0000000000000036", "exploration", "navigate", "approx", 6, 3);
	struct store_drop d1 = { 0, "rec1", "exploration", "navigate", "approx",
				 "ambiguous_margin", 100, "sofa", NULL };
	struct store_drop d2 = { 0, "rec1", "exploration", "navigate", "approx",
				 "ambiguous_margin", 200, "sofa", NULL };
	struct store_drop d3 = { 0, "rec1", "exploration", "navigate", "relative",
				 "no_path", 300, NULL, NULL };
	static const char want_groups[] =
		"{"
		"\"exploration.navigate/approx\": {\"total\": 3, \"pending\": 0,"
		" \"approved\": 0, \"rejected\": 0, \"edited\": 1, \"superseded\": 1,"
		" \"dropped\": 1, \"conflict\": 0, \"acceptance\": 1, \"mean_z\": null, \"z_n\": 0,"
		" \"letters\": [{\"options\": 5, \"n\": 1, \"counts\": {\"A\": 1, \"B\": 0,"
		" \"C\": 0, \"D\": 0, \"E\": 0}, \"df\": 4}], \"drops\": 2,"
		" \"drop_reasons\": {\"ambiguous_margin\": 2}},"
		"\"exploration.navigate/relative\": {\"total\": 0, \"pending\": 0,"
		" \"approved\": 0, \"rejected\": 0, \"edited\": 0, \"superseded\": 0,"
		" \"dropped\": 0, \"conflict\": 0, \"acceptance\": null, \"mean_z\": null, \"z_n\": 0,"
		" \"letters\": [], \"drops\": 1, \"drop_reasons\": {\"no_path\": 1}},"
		"\"intention.head_turn/approx\": {\"total\": 2, \"pending\": 1,"
		" \"approved\": 1, \"rejected\": 0, \"edited\": 0, \"superseded\": 0,"
		" \"dropped\": 0, \"conflict\": 0, \"acceptance\": 1, \"mean_z\": 1, \"z_n\": 2,"
		" \"letters\": [{\"options\": 5, \"n\": 2, \"counts\": {\"A\": 1, \"B\": 1,"
		" \"C\": 0, \"D\": 0, \"E\": 0}, \"df\": 4}], \"drops\": 0,"
		" \"drop_reasons\": {}},"
		"\"intention.head_turn/relative\": {\"total\": 1, \"pending\": 0,"
		" \"approved\": 0, \"rejected\": 1, \"edited\": 0, \"superseded\": 0,"
		" \"dropped\": 0, \"conflict\": 0, \"acceptance\": 0, \"mean_z\": null, \"z_n\": 0,"
		" \"letters\": [], \"drops\": 0, \"drop_reasons\": {}}"
		"}";
	cJSON *stats = NULL, *groups, *want, *g, *l, *bs;
	int64_t n = 0;

	fx_open(f);
	put_recording(f->st, "rec1");
	put_ok(f->st, &q6, STORE_PUT_NEW);
	assert_int_equal(store_qa_supersede(f->st, "exploration", NULL, &n), 0);
	assert_int_equal(n, 1);
	q1.qc_json = "{\"z\": 0.5}";
	q2.qc_json = "{\"z\": 1.5}";
	q3.qc_json = "{\"z\": 3}";          /* rejected: not live */
	q4.qc_json = "{\"z\": \"high\"}";   /* not a number: not counted */
	q5.status = "dropped";
	q5.drop_reason = "length_z";
	q5.qc_json = "{\"z\": 9}";          /* dropped: not live */
	put_ok(f->st, &q1, STORE_PUT_NEW);
	put_ok(f->st, &q2, STORE_PUT_NEW);
	put_ok(f->st, &q3, STORE_PUT_NEW);
	put_ok(f->st, &q4, STORE_PUT_NEW);
	put_ok(f->st, &q5, STORE_PUT_NEW);
	assert_int_equal(store_drop_put(f->st, &d1), 0);
	assert_int_equal(store_drop_put(f->st, &d2), 0);
	assert_int_equal(store_drop_put(f->st, &d3), 0);
	assert_int_equal(store_drop_put(f->st, &d1), 0); /* the same candidate again */
	review(f->st, q2.id, "alice", "approve", -1);
	review(f->st, q3.id, "alice", "reject", -1);
	review(f->st, q4.id, "bob", "edit", -1);

	assert_int_equal(store_stats(f->st, &stats), 0);
	groups = cJSON_GetObjectItem(stats, "groups");
	/* chi2 and p by hand: counts (1,0,0,0,0), E = 0.2: 0.64/0.2 + 4 * 0.04/0.2 = 4;
	 * sf(4, df 4) = e^-2 (1 + 2). Counts (1,1,0,0,0), E = 0.4: 2 * 0.36/0.4 +
	 * 3 * 0.16/0.4 = 3; sf(3, 4) = e^-1.5 (1 + 1.5). */
	g = cJSON_GetObjectItem(groups, "exploration.navigate/approx");
	l = cJSON_GetArrayItem(cJSON_GetObjectItem(g, "letters"), 0);
	take_near(l, "chi2", 4.0, 1e-12);
	take_near(l, "p", 3 * exp(-2.0), 1e-12);
	g = cJSON_GetObjectItem(groups, "intention.head_turn/approx");
	l = cJSON_GetArrayItem(cJSON_GetObjectItem(g, "letters"), 0);
	take_near(l, "chi2", 3.0, 1e-12);
	take_near(l, "p", 2.5 * exp(-1.5), 1e-12);
	want = cJSON_Parse(want_groups);
	assert_non_null(want);
	if (!cJSON_Compare(groups, want, 1)) {
		char *s = cJSON_Print(groups);

		fprintf(stderr, "groups: %s\n", s);
		cJSON_free(s);
		fail();
	}
	cJSON_Delete(want);

	/* the corpus figures: 3 live QAs answer A, B, A of 5 options */
	NEAR(jnum(stats, "total"), 6, 0);
	bs = cJSON_GetObjectItem(stats, "by_status");
	NEAR(jnum(bs, "pending"), 1, 0);
	NEAR(jnum(bs, "superseded"), 1, 0);
	NEAR(jnum(bs, "dropped"), 1, 0);
	l = cJSON_GetArrayItem(cJSON_GetObjectItem(stats, "letters"), 0);
	NEAR(jnum(l, "n"), 3, 0);
	NEAR(jnum(cJSON_GetObjectItem(l, "counts"), "A"), 2, 0);
	/* E = 0.6: (1.4^2 + 0.4^2 + 3 * 0.6^2) / 0.6 = 3.2 / 0.6 */
	NEAR(jnum(l, "chi2"), 3.2 / 0.6, 1e-12);
	NEAR(jnum(l, "p"), exp(-3.2 / 1.2) * (1 + 3.2 / 1.2), 1e-12);
	NEAR(jnum(stats, "mean_z"), 1.0, 1e-15);
	NEAR(jnum(cJSON_GetObjectItem(stats, "drops"), "total"), 3, 0);
	NEAR(jnum(cJSON_GetObjectItem(cJSON_GetObjectItem(stats, "drops"), "by_reason"),
		  "ambiguous_margin"), 2, 0);
	/* acceptance: approved 1 + edited 1 over those + rejected 1 */
	NEAR(jnum(cJSON_GetObjectItem(stats, "reviews"), "acceptance"), 2.0 / 3.0, 1e-15);
	cJSON_Delete(stats);
}

static void test_stats_reviewers(void **state)
{
	struct fx *f = *state;
	static const char *const ids[4] = {
		"0000000000000041", "0000000000000042", "0000000000000043", "0000000000000044"
	};
	/* alice accepts 1, 2; bob accepts 1 only: table (acc,acc)=1 (acc,rej)=1
	 * (rej,acc)=0 (rej,rej)=2; po 3/4, pe 0.5*0.25 + 0.5*0.75 = 0.5, kappa 0.5 */
	static const char *const alice[4] = { "approve", "edit", "reject", "reject" };
	static const char *const bob[4] = { "approve", "reject", "reject", "reject" };
	static const int64_t times[3] = { 3000, 1000, 8000 }; /* alice's; median 3000 */
	struct store_review r;
	cJSON *stats = NULL, *rv, *k, *who;
	int i;

	fx_open(f);
	put_recording(f->st, "rec1");
	for (i = 0; i < 4; i++) {
		struct store_qa q = qa_make(ids[i], "intention", "head_turn", "approx", i, i);

		put_ok(f->st, &q, STORE_PUT_NEW);
	}
	for (i = 0; i < 4; i++) {
		memset(&r, 0, sizeof(r));
		r.qa_id = ids[i];
		r.reviewer = "alice";
		r.decision = alice[i];
		r.edit_after = "Reworded?";
		/* blind answers: right on items 0 and 1, wrong on item 2, none on 3 */
		r.blind_answer_index = i < 2 ? i : i == 2 ? 4 : -1;
		if (i < 3) {
			r.started_ms = 1700000000000LL + i * 100000;
			r.decided_ms = r.started_ms + times[i];
		}
		assert_int_equal(store_review_add(f->st, &r, NULL), 0);
		review(f->st, ids[i], "bob", i == 0 ? "reject" : bob[i], -1);
	}
	/* bob's last decision on item 0 counts */
	review(f->st, ids[0], "bob", "approve", -1);
	review(f->st, ids[0], "carol", "note", -1); /* no verdict: no pair */

	assert_int_equal(store_stats(f->st, &stats), 0);
	rv = cJSON_GetObjectItem(stats, "reviews");
	NEAR(jnum(rv, "total"), 10, 0);
	NEAR(jnum(rv, "median_time_ms"), 3000, 0);
	who = cJSON_GetObjectItem(rv, "reviewers");
	NEAR(jnum(cJSON_GetObjectItem(who, "alice"), "reviews"), 4, 0);
	NEAR(jnum(cJSON_GetObjectItem(who, "bob"), "reviews"), 5, 0);
	NEAR(jnum(cJSON_GetObjectItem(who, "bob"), "items"), 4, 0);
	NEAR(jnum(cJSON_GetObjectItem(who, "alice"), "median_time_ms"), 3000, 0);
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetObjectItem(who, "bob"),
						     "median_time_ms")));
	NEAR(jnum(cJSON_GetObjectItem(rv, "blind"), "n"), 3, 0);
	NEAR(jnum(cJSON_GetObjectItem(rv, "blind"), "agree"), 2, 0);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(rv, "kappa")), 1);
	k = cJSON_GetArrayItem(cJSON_GetObjectItem(rv, "kappa"), 0);
	assert_string_equal(jstr(k, "a"), "alice");
	assert_string_equal(jstr(k, "b"), "bob");
	NEAR(jnum(k, "n"), 4, 0);
	NEAR(jnum(k, "agree"), 3, 0);
	NEAR(jnum(k, "kappa"), 0.5, 1e-15);
	cJSON_Delete(stats);
}

/* ============================== LLM cache ============================== */

/* The size of f's WAL file, 0 when there is none. */
static long wal_bytes(const struct fx *f)
{
	char p[128];
	struct stat sb;

	snprintf(p, sizeof(p), "%s-wal", f->path);
	return stat(p, &sb) ? 0 : (long)sb.st_size;
}

/*
 * Deferred checkpoints: with store_defer_checkpoints the commits count the
 * WAL's pages and never copy them (past SQLite's 1000-page autocheckpoint
 * the count keeps growing), a passive checkpoint on a second connection
 * copies them (the next commit starts the WAL over), the data reads back
 * whole, and false restores SQLite's own checkpoints.
 */
static void test_deferred_checkpoints(void **state)
{
	struct fx *f = *state;
	struct store *ck = NULL;
	char key[32], *body = malloc(9001), *resp = NULL;
	int i, before;

	assert_non_null(body);
	memset(body, 'x', 9000);
	body[9000] = '\0';
	fx_open(f);
	assert_int_equal(store_defer_checkpoints(f->st, true), 0);
	for (i = 0; i < 700; i++) { /* 700 x 9 kB: about 1700 pages of 4 kB */
		snprintf(key, sizeof(key), "k%d", i);
		assert_int_equal(store_cache_put(f->st, key, NULL, body, 200, 1), 0);
	}
	before = store_wal_pages(f->st);
	assert_true(before > 1500);
	assert_true(wal_bytes(f) > 1500L * 4096);
	assert_int_equal(store_open(f->path, 0, &ck), 0);
	assert_int_equal(store_checkpoint(ck), 0);
	/* copied: the next commit writes from the WAL's start again */
	assert_int_equal(store_cache_put(f->st, "after", NULL, "{}", 200, 1), 0);
	assert_true(store_wal_pages(f->st) < 10);
	assert_int_equal(store_cache_get(ck, "k699", &resp, NULL), 0);
	assert_int_equal((int)strlen(resp), 9000);
	free(resp);
	store_close(ck);
	/*
	 * SQLite's checkpoints again: the WAL is copied inside the commits and
	 * written over from its start, so 1700 more pages leave the file its
	 * size (deferred, it would grow to twice that)
	 */
	assert_int_equal(store_defer_checkpoints(f->st, false), 0);
	before = (int)(wal_bytes(f) / 4096);
	for (i = 0; i < 700; i++) {
		snprintf(key, sizeof(key), "m%d", i);
		assert_int_equal(store_cache_put(f->st, key, NULL, body, 200, 1), 0);
	}
	assert_true(wal_bytes(f) / 4096 <= before + 8);
	free(body);
}

static void test_cache(void **state)
{
	struct fx *f = *state;
	struct store *ro = NULL;
	char *resp = NULL;
	int status = 0;

	fx_open(f);
	assert_int_equal(store_cache_get(f->st, "k1", &resp, &status), ENG_ENOTFOUND);
	assert_null(resp);
	assert_int_equal(store_cache_put(f->st, "k1", "{\"model\":\"m\"}",
					 "{\"choices\":[]}", 200, 123), 0);
	assert_int_equal(store_cache_get(f->st, "k1", &resp, &status), 0);
	assert_string_equal(resp, "{\"choices\":[]}");
	assert_int_equal(status, 200);
	free(resp);
	/* a second put replaces the entry */
	assert_int_equal(store_cache_put(f->st, "k1", NULL, "<html>busy</html>", 503, 9), 0);
	assert_int_equal(store_cache_get(f->st, "k1", &resp, NULL), 0);
	assert_string_equal(resp, "<html>busy</html>");
	free(resp);
	assert_int_equal(store_cache_put(f->st, "k2", NULL, NULL, 200, 0), ENG_EINVAL);

	/* another handle on the same file sees it; a read-only one cannot write */
	assert_int_equal(store_open(f->path, STORE_READONLY, &ro), 0);
	assert_int_equal(store_cache_get(ro, "k1", &resp, &status), 0);
	assert_int_equal(status, 503);
	free(resp);
	assert_int_equal(store_cache_put(ro, "k3", NULL, "{}", 200, 0), ENG_EDB);
	assert_non_null(strstr(err_msg(), f->path));
	store_close(ro);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_migrate_from_empty_and_reopen, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_newer_version_refused, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_bad_files, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_transactions, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_failure_undoes_call, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_interrupted_transaction, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_put_validation, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_put_idempotent, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_reviewed_untouched, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_supersede_replace_keeps_reviews, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_reviews, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_review_policy, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_review_utf8, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_upgrade_from_v1, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_filters_neighbours_iter, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_iter_exact, fx_setup, fx_teardown),
		cmocka_unit_test(test_chi2_sf),
		cmocka_unit_test(test_kappa),
		cmocka_unit_test_setup_teardown(test_stats_groups_exact, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_stats_reviewers, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_cache, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_deferred_checkpoints, fx_setup, fx_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
