/* SPDX-License-Identifier: MIT */
/*
 * Merging another store into this one by QA id (shards of one job).
 */
#include "store_int.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "banned.h"
#include "buf.h"
#include "err.h"

/* ============================ Merging stores ============================ */

/*
 * store_merge() attaches the input as MERGE_SRC and runs set-based
 * statements in one transaction. Two temp tables carry the decisions:
 * merge_runs maps each input run id to its id in the output (added = 1
 * for a run copied by this merge), merge_qa says what happens to each of
 * the input's QA ids (0 keep the output's row, 1 add, 2 replace).
 */
#define MERGE_SRC "merge_src"

/* 1 for a reviewed status; the first key of the QA ranking. */
#define MERGE_REVIEWED(t) "(" t ".status IN ('approved', 'rejected', 'edited', 'conflict'))"

/* The same run: what a run row holds from its start. */
#define MERGE_SAME_RUN \
	" m.started_at = s.started_at AND m.config_json IS s.config_json" \
	" AND m.brain IS s.brain AND m.model IS s.model AND m.seed IS s.seed" \
	" AND m.engine_version IS s.engine_version"

#define MERGE_QA_COLS \
	"id, run_id, recording_id, category, subtask, metric, t_ns, clip_start_ns," \
	" clip_end_ns, frames_json, target, question, question_edited, options_json," \
	" answer_index, answer_json, gt_json, qc_json, status, drop_reason," \
	" created_at, updated_at"

/* One step of a merge: an SQL statement and what it does, for messages. */
struct merge_step {
	const char *sql;
	const char *what;
};

static const struct merge_step merge_setup[] = {
	{ "DROP TABLE IF EXISTS temp.merge_runs", "clearing the run map" },
	{ "DROP TABLE IF EXISTS temp.merge_qa", "clearing the qa map" },
	{ "CREATE TEMP TABLE merge_runs (old INTEGER PRIMARY KEY, new INTEGER NOT NULL,"
	  " added INTEGER NOT NULL)", "making the run map" },
	{ "CREATE TEMP TABLE merge_qa (id TEXT PRIMARY KEY, action INTEGER NOT NULL)",
	  "making the qa map" },
};

static const struct merge_step merge_cleanup[] = {
	{ "DROP TABLE temp.merge_runs", "dropping the run map" },
	{ "DROP TABLE temp.merge_qa", "dropping the qa map" },
};

/* Formats a failure of the merge of path into st. */
static int merge_fail(const struct store *st, const char *path, const char *what)
{
	return err_set(ENG_EDB, "'%s': merging into '%s': %s: %s", path, st->path, what,
		       sqlite3_errmsg(st->db));
}

/* Runs one statement without parameters; *changes (may be NULL) gets its row count. */
static int merge_exec(struct store *st, const char *path, const char *sql,
		      const char *what, int64_t *changes)
{
	sqlite3_stmt *s = NULL;
	int rc = 0;

	if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK ||
	    sqlite3_step(s) != SQLITE_DONE) {
		rc = merge_fail(st, path, what);
		goto out;
	}
	if (changes)
		*changes = sqlite3_changes(st->db);
out:
	sqlite3_finalize(s);
	return rc;
}

/* Runs a query that gives one row of n integers into v[0..n-1]. */
static int merge_ints(struct store *st, const char *path, const char *sql,
		      const char *what, int64_t *v, int n)
{
	sqlite3_stmt *s = NULL;
	int rc = 0, i;

	if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK ||
	    sqlite3_step(s) != SQLITE_ROW) {
		rc = merge_fail(st, path, what);
		goto out;
	}
	for (i = 0; i < n; i++)
		v[i] = sqlite3_column_int64(s, i);
out:
	sqlite3_finalize(s);
	return rc;
}

/* Refuses an attached file that is not a store of this schema version. */
static int merge_check_src(struct store *st, const char *path)
{
	int64_t v[2] = { 0, 0 };
	int rc;

	rc = merge_ints(st, path, "PRAGMA " MERGE_SRC ".application_id",
			"reading the database header", &v[0], 1);
	if (!rc)
		rc = merge_ints(st, path, "PRAGMA " MERGE_SRC ".user_version",
				"reading the schema version", &v[1], 1);
	if (rc)
		return rc; /* "file is not a database" and the like */
	if (v[0] != STORE_APP_ID)
		return err_set(ENG_EDB, "'%s': not a proxima store (application_id 0x%08x)",
			       path, (unsigned)v[0]);
	if (v[1] > STORE_SCHEMA_VERSION)
		return err_set(ENG_ERANGE, "'%s': schema version %lld is newer than "
			       "version %d that this proxima knows; use a newer proxima",
			       path, (long long)v[1], STORE_SCHEMA_VERSION);
	if (v[1] < STORE_SCHEMA_VERSION)
		return err_set(ENG_ERANGE, "'%s': schema version %lld is older than version "
			       "%d; open it once read-write to migrate it", path,
			       (long long)v[1], STORE_SCHEMA_VERSION);
	return 0;
}

/* The statements of one merge, in order; see store_merge() in store.h. */
/* The recordings, then the runs: those the output holds, the others under new ids. */
static int merge_runs_and_recordings(struct store *st, const char *path,
				     struct store_merge_stats *m)
{
	int rc;

	rc = merge_exec(st, path,
			"INSERT INTO main.recordings (id, layout, root, t0_ns, t1_ns,"
			" summary_json, added_at) SELECT id, layout, root, t0_ns, t1_ns,"
			" summary_json, added_at FROM " MERGE_SRC ".recordings WHERE true"
			" ORDER BY id ON CONFLICT(id) DO NOTHING", "copying recordings",
			&m->recordings_added);
	/* runs the output already holds, then the others under new ids */
	if (!rc)
		rc = merge_exec(st, path,
				"INSERT INTO temp.merge_runs (old, new, added)"
				" SELECT s.id, min(m.id), 0 FROM " MERGE_SRC ".runs s"
				" JOIN main.runs m ON" MERGE_SAME_RUN " GROUP BY s.id",
				"matching runs", &m->runs_known);
	if (!rc)
		rc = merge_exec(st, path,
				"INSERT INTO temp.merge_runs (old, new, added)"
				" SELECT s.id, (SELECT coalesce(max(id), 0) FROM main.runs)"
				" + row_number() OVER (ORDER BY s.id), 1 FROM " MERGE_SRC ".runs s"
				" WHERE s.id NOT IN (SELECT old FROM temp.merge_runs)",
				"numbering runs", NULL);
	if (!rc)
		rc = merge_exec(st, path,
				"INSERT INTO main.runs (id, started_at, finished_at, config_json,"
				" brain, model, seed, engine_version, status, counts_json)"
				" SELECT r.new, s.started_at, s.finished_at, s.config_json, s.brain,"
				" s.model, s.seed, s.engine_version, s.status, s.counts_json"
				" FROM temp.merge_runs r JOIN " MERGE_SRC ".runs s ON s.id = r.old"
				" WHERE r.added ORDER BY r.new", "copying runs", &m->runs_added);
	if (!rc)
		rc = merge_exec(st, path,
				"UPDATE main.runs SET finished_at = s.finished_at, status = s.status,"
				" counts_json = s.counts_json FROM temp.merge_runs r"
				" JOIN " MERGE_SRC ".runs s ON s.id = r.old"
				" WHERE runs.id = r.new AND NOT r.added AND runs.status = 'running'"
				" AND s.status != 'running'", "finishing runs", NULL);
	return rc;
}

/* Each QA id of the input: added, replaced (reviewed wins, then the later) or kept; edits and traces follow. */
static int merge_qas(struct store *st, const char *path, struct store_merge_stats *m)
{
	int64_t v[3] = { 0, 0, 0 };
	int rc = 0;

	/* what happens to each QA id of the input */
	if (!rc)
		rc = merge_exec(st, path,
				"INSERT INTO temp.merge_qa (id, action) SELECT s.id,"
				" CASE WHEN m.id IS NULL THEN 1"
				" WHEN " MERGE_REVIEWED("s") " > " MERGE_REVIEWED("m") " THEN 2"
				" WHEN " MERGE_REVIEWED("s") " = " MERGE_REVIEWED("m")
				" AND s.updated_at > m.updated_at THEN 2 ELSE 0 END"
				" FROM " MERGE_SRC ".qa s LEFT JOIN main.qa m ON m.id = s.id",
				"ranking qas", NULL);
	if (!rc)
		rc = merge_ints(st, path, "SELECT coalesce(sum(action = 1), 0),"
				" coalesce(sum(action = 2), 0), coalesce(sum(action = 0), 0)"
				" FROM temp.merge_qa", "counting qas", v, 3);
	if (!rc) {
		m->qa_added = v[0];
		m->qa_replaced = v[1];
		m->qa_kept = v[2];
	}
	if (!rc)
		rc = merge_exec(st, path,
				"INSERT INTO main.qa (" MERGE_QA_COLS ") SELECT s.id, r.new,"
				" s.recording_id, s.category, s.subtask, s.metric, s.t_ns,"
				" s.clip_start_ns, s.clip_end_ns, s.frames_json, s.target, s.question,"
				" s.question_edited, s.options_json, s.answer_index, s.answer_json,"
				" s.gt_json, s.qc_json, s.status, s.drop_reason, s.created_at,"
				" s.updated_at FROM " MERGE_SRC ".qa s"
				" JOIN temp.merge_qa a ON a.id = s.id"
				" LEFT JOIN temp.merge_runs r ON r.old = s.run_id"
				" WHERE a.action > 0 ORDER BY s.id"
				" ON CONFLICT(id) DO UPDATE SET run_id = excluded.run_id,"
				" recording_id = excluded.recording_id, category = excluded.category,"
				" subtask = excluded.subtask, metric = excluded.metric,"
				" t_ns = excluded.t_ns, clip_start_ns = excluded.clip_start_ns,"
				" clip_end_ns = excluded.clip_end_ns, frames_json = excluded.frames_json,"
				" target = excluded.target, question = excluded.question,"
				" question_edited = CASE WHEN excluded.question_edited IS NOT NULL"
				"  THEN excluded.question_edited WHEN excluded.question = qa.question"
				"  THEN qa.question_edited END,"
				" options_json = excluded.options_json,"
				" answer_index = excluded.answer_index,"
				" answer_json = excluded.answer_json, gt_json = excluded.gt_json,"
				" qc_json = excluded.qc_json, status = excluded.status,"
				" drop_reason = excluded.drop_reason,"
				" created_at = min(qa.created_at, excluded.created_at),"
				" updated_at = excluded.updated_at", "copying qas", NULL);
	/* a kept row without an edit takes the input's edit of the same question */
	if (!rc)
		rc = merge_exec(st, path,
				"UPDATE main.qa SET question_edited = s.question_edited"
				" FROM temp.merge_qa a JOIN " MERGE_SRC ".qa s ON s.id = a.id"
				" WHERE qa.id = a.id AND a.action = 0 AND qa.question_edited IS NULL"
				" AND s.question_edited IS NOT NULL AND s.question = qa.question",
				"keeping edits", NULL);
	if (!rc)
		rc = merge_exec(st, path,
				"INSERT INTO main.traces (qa_id, trace_json) SELECT t.qa_id,"
				" t.trace_json FROM " MERGE_SRC ".traces t"
				" JOIN temp.merge_qa a ON a.id = t.qa_id WHERE a.action > 0"
				" ON CONFLICT(qa_id) DO UPDATE SET trace_json = excluded.trace_json",
				"copying traces", NULL);
	if (!rc)
		rc = merge_exec(st, path,
				"DELETE FROM main.traces WHERE qa_id IN (SELECT id FROM temp.merge_qa"
				" WHERE action = 2) AND qa_id NOT IN (SELECT qa_id FROM "
				MERGE_SRC ".traces)", "removing replaced traces", NULL);
	return rc;
}

/* Reviews appended once, drops by their key, the LLM cache by key (the later wins). */
static int merge_reviews_drops_cache(struct store *st, const char *path,
				     struct store_merge_stats *m)
{
	int64_t n_reviews = 0;
	int rc = 0;

	if (!rc)
		rc = merge_ints(st, path, "SELECT count(*) FROM " MERGE_SRC ".reviews",
				"counting reviews", &n_reviews, 1);
	if (!rc)
		rc = merge_exec(st, path,
				"INSERT INTO main.reviews (qa_id, reviewer, decision, reason,"
				" blind_answer_index, edit_before, edit_after, note, started_at,"
				" decided_at, adjudication) SELECT r.qa_id, r.reviewer, r.decision,"
				" r.reason, r.blind_answer_index, r.edit_before, r.edit_after, r.note,"
				" r.started_at, r.decided_at, r.adjudication FROM " MERGE_SRC ".reviews r"
				" WHERE NOT EXISTS (SELECT 1 FROM main.reviews m"
				"  WHERE m.qa_id = r.qa_id AND m.reviewer = r.reviewer"
				"  AND m.decision = r.decision AND m.decided_at = r.decided_at)"
				" ORDER BY r.id", "appending reviews", &m->reviews_added);
	if (!rc)
		m->reviews_known = n_reviews - m->reviews_added;
	/* the status follows every reviewer's verdict, from both stores */
	if (!rc)
		rc = store__review_derive(st, NULL, NULL);
	if (!rc)
		rc = merge_exec(st, path,
				"INSERT INTO main.drops (run_id, recording_id, category, subtask,"
				" metric, reason, t_ns, target, detail) SELECT r.new, d.recording_id,"
				" d.category, d.subtask, d.metric, d.reason, d.t_ns, d.target, d.detail"
				" FROM " MERGE_SRC ".drops d"
				" LEFT JOIN temp.merge_runs r ON r.old = d.run_id WHERE true"
				" ORDER BY d.id ON CONFLICT DO NOTHING", "copying drops",
				&m->drops_added);
	if (!rc)
		rc = merge_exec(st, path,
				"INSERT INTO main.llm_cache (key, request_json, response_json, status,"
				" created_at, latency_ms) SELECT key, request_json, response_json,"
				" status, created_at, latency_ms FROM " MERGE_SRC ".llm_cache"
				" WHERE true ORDER BY key ON CONFLICT(key) DO UPDATE SET"
				" request_json = excluded.request_json,"
				" response_json = excluded.response_json, status = excluded.status,"
				" created_at = excluded.created_at, latency_ms = excluded.latency_ms"
				" WHERE excluded.created_at > llm_cache.created_at",
				"copying the llm cache", &m->cache_written);
	return rc;
}

static int merge_body(struct store *st, const char *path, struct store_merge_stats *m)
{
	size_t i;
	int rc = 0;

	for (i = 0; i < ARRAY_SIZE(merge_setup) && !rc; i++)
		rc = merge_exec(st, path, merge_setup[i].sql, merge_setup[i].what, NULL);
	if (!rc)
		rc = merge_runs_and_recordings(st, path, m);
	if (!rc)
		rc = merge_qas(st, path, m);
	if (!rc)
		rc = merge_reviews_drops_cache(st, path, m);
	for (i = 0; i < ARRAY_SIZE(merge_cleanup) && !rc; i++)
		rc = merge_exec(st, path, merge_cleanup[i].sql, merge_cleanup[i].what, NULL);
	return rc;
}

/* 1 when a and b name the same file (both exist). */
static int same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	if (stat(a, &sa) || stat(b, &sb))
		return 0;
	return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

int store_merge(struct store *st, const char *path, struct store_merge_stats *stats)
{
	struct store_merge_stats m;
	sqlite3_stmt *s = NULL;
	struct stat sb;
	int rc = 0, attached = 0, in_tx = 0;

	memset(&m, 0, sizeof(m));
	if (!path || !*path)
		return err_set(ENG_EINVAL, "'%s': store_merge: no input", st->path);
	if (st->readonly || st->in_tx)
		return err_set(ENG_EINVAL, "'%s': store_merge: the store is read-only or has "
			       "a batch open", st->path);
	if (stat(path, &sb) != 0) {
		int e = errno;

		return err_set(e == ENOENT ? ENG_ENOENT : ENG_EIO, "'%s': %s", path,
			       strerror(e));
	}
	if (same_file(path, st->path))
		return err_set(ENG_EINVAL, "'%s': cannot merge a store into itself", path);
	rc = store__db_prepare(st, "ATTACH DATABASE :path AS " MERGE_SRC, &s, "attaching the input");
	if (!rc && store__bind_text(s, ":path", path))
		rc = store__db_fail(st, "attaching the input");
	if (!rc && sqlite3_step(s) != SQLITE_DONE)
		rc = err_set(ENG_EDB, "'%s': cannot attach: %s", path, sqlite3_errmsg(st->db));
	sqlite3_finalize(s);
	if (rc)
		goto out;
	attached = 1;
	rc = merge_check_src(st, path);
	if (rc)
		goto out;
	rc = store__db_exec(st, "BEGIN IMMEDIATE", "beginning a merge");
	if (rc)
		goto out;
	in_tx = 1;
	rc = merge_body(st, path, &m);
	if (rc)
		goto out;
	rc = store__db_exec(st, "COMMIT", "committing a merge");
	if (!rc)
		in_tx = 0;
out:
	if (in_tx && !sqlite3_get_autocommit(st->db))
		sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
	if (attached)
		sqlite3_exec(st->db, "DETACH DATABASE " MERGE_SRC, NULL, NULL, NULL);
	if (!rc && stats)
		*stats = m;
	return rc;
}
