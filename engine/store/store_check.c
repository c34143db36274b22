/* SPDX-License-Identifier: MIT */
/*
 * store_check(): what `proxima check` reports. Each check is one SQL
 * query whose rows are problems; the first rows of each are named, the
 * rest counted. Nothing is changed.
 */
#include "store_int.h"

#include <stdio.h>
#include <string.h>

#include "err.h"
#include "banned.h"

/* Problems named per check; the rest are counted. */
#define CHECK_SHOWN 20

struct check {
	const char *kind;  /* short name of the problem */
	const char *sql;   /* one row per problem, its first column the detail */
};

/*
 * Every check but integrity and foreign keys (pragmas, below). Each query
 * gives the detail text of one problem per row.
 */
static const struct check checks[] = {
	{ "superseded_without_replacement",
	  "SELECT 'recording ' || s.recording_id || ', ' || s.category || ': ' || count(*) ||"
	  " ' superseded QAs and no live one in their place' FROM qa s"
	  " WHERE s.status = 'superseded' AND NOT EXISTS (SELECT 1 FROM qa l"
	  " WHERE l.recording_id = s.recording_id AND l.category = s.category"
	  " AND l.status <> 'superseded')"
	  " GROUP BY s.recording_id, s.category ORDER BY s.recording_id, s.category" },
	{ "bad_json",
	  "SELECT 'qa ' || id || ': ' || CASE"
	  " WHEN NOT json_valid(options_json) THEN 'options_json'"
	  " WHEN answer_json IS NOT NULL AND NOT json_valid(answer_json) THEN 'answer_json'"
	  " WHEN gt_json IS NOT NULL AND NOT json_valid(gt_json) THEN 'gt_json'"
	  " WHEN qc_json IS NOT NULL AND NOT json_valid(qc_json) THEN 'qc_json'"
	  " ELSE 'frames_json' END || ' is not valid JSON' FROM qa"
	  " WHERE NOT json_valid(options_json)"
	  " OR (answer_json IS NOT NULL AND NOT json_valid(answer_json))"
	  " OR (gt_json IS NOT NULL AND NOT json_valid(gt_json))"
	  " OR (qc_json IS NOT NULL AND NOT json_valid(qc_json))"
	  " OR (frames_json IS NOT NULL AND NOT json_valid(frames_json)) ORDER BY id" },
	{ "bad_trace",
	  "SELECT 'trace of qa ' || qa_id || ' is not valid JSON' FROM traces"
	  " WHERE NOT json_valid(trace_json) ORDER BY qa_id" },
	{ "answer_out_of_range",
	  "SELECT 'qa ' || id || ': answer_index ' || coalesce(answer_index, 'null') ||"
	  " ' with ' || json_array_length(options_json) || ' options' FROM qa"
	  " WHERE json_valid(options_json) AND category <> 'chain'"
	  " AND (answer_index IS NULL OR answer_index < 0"
	  " OR answer_index >= json_array_length(options_json)) ORDER BY id" },
	{ "counts_differ",
	  "SELECT 'qa_counts says ' || coalesce(c.n, 0) || ', the qa table ' ||"
	  " coalesce(q.n, 0) || ' for ' || k.recording_id || ' ' || k.category || '.' ||"
	  " k.subtask || '/' || k.metric || ' ' || k.status"
	  " FROM (SELECT recording_id, category, subtask, metric, status FROM qa"
	  "       UNION SELECT recording_id, category, subtask, metric, status FROM qa_counts) k"
	  " LEFT JOIN (SELECT recording_id, category, subtask, metric, status, count(*) n"
	  "            FROM qa GROUP BY 1, 2, 3, 4, 5) q USING (recording_id, category,"
	  "            subtask, metric, status)"
	  " LEFT JOIN qa_counts c USING (recording_id, category, subtask, metric, status)"
	  " WHERE coalesce(c.n, 0) <> coalesce(q.n, 0)"
	  " ORDER BY k.recording_id, k.category, k.subtask, k.metric, k.status" },
	{ "review_of_no_qa",
	  "SELECT 'review ' || r.id || ' names qa ' || r.qa_id || ', which is not stored'"
	  " FROM reviews r LEFT JOIN qa q ON q.id = r.qa_id WHERE q.id IS NULL ORDER BY r.id" },
	{ "trace_of_no_qa",
	  "SELECT 'a trace names qa ' || t.qa_id || ', which is not stored'"
	  " FROM traces t LEFT JOIN qa q ON q.id = t.qa_id WHERE q.id IS NULL ORDER BY t.qa_id" },
	{ "qa_of_no_recording",
	  "SELECT 'qa ' || q.id || ' names recording ' || q.recording_id || ', which is not stored'"
	  " FROM qa q LEFT JOIN recordings r ON r.id = q.recording_id WHERE r.id IS NULL"
	  " ORDER BY q.id" },
	{ "qa_of_no_run",
	  "SELECT 'qa ' || q.id || ' names run ' || q.run_id || ', which is not stored'"
	  " FROM qa q LEFT JOIN runs r ON r.id = q.run_id"
	  " WHERE q.run_id IS NOT NULL AND r.id IS NULL ORDER BY q.id" },
};

/* Runs one query whose rows are problems. */
static int run_check(struct store *st, const char *kind, const char *sql,
		     store_check_fn cb, void *ctx, struct store_check_result *res)
{
	sqlite3_stmt *s = NULL;
	long n = 0;
	int rc, step;

	rc = store__db_prepare(st, sql, &s, kind);
	if (rc)
		return rc;
	while ((step = sqlite3_step(s)) == SQLITE_ROW) {
		const char *detail = (const char *)sqlite3_column_text(s, 0);

		/* integrity_check says "ok" on its only row when all is well */
		if (!strcmp(kind, "integrity") && detail && !strcmp(detail, "ok"))
			continue;
		if (n < CHECK_SHOWN) {
			rc = cb(ctx, kind, detail ? detail : "?");
			if (rc)
				goto out;
		}
		n++;
	}
	if (step != SQLITE_DONE) {
		rc = store__db_fail(st, kind);
		goto out;
	}
	if (n > CHECK_SHOWN) {
		char more[64];

		snprintf(more, sizeof(more), "... and %ld more", n - CHECK_SHOWN);
		rc = cb(ctx, kind, more);
	}
	res->problems += n;
	res->checks++;
out:
	sqlite3_finalize(s);
	return rc;
}

int store_check(struct store *st, store_check_fn cb, void *ctx, struct store_check_result *res)
{
	size_t i;
	int rc;

	memset(res, 0, sizeof(*res));
	rc = run_check(st, "integrity", "PRAGMA integrity_check(200)", cb, ctx, res);
	if (!rc)
		rc = run_check(st, "foreign_key",
			       "SELECT \"table\" || ' row ' || coalesce(rowid, '?') || ' refers to a"
			       " missing row of ' || parent FROM pragma_foreign_key_check", cb, ctx,
			       res);
	/* the other checks read the tables: only on a sound file */
	if (!rc && res->problems)
		return 0;
	for (i = 0; !rc && i < ARRAY_SIZE(checks); i++)
		rc = run_check(st, checks[i].kind, checks[i].sql, cb, ctx, res);
	if (!rc) {
		sqlite3_stmt *s = NULL;

		rc = store__db_prepare(st, "SELECT (SELECT count(*) FROM qa),"
				       " (SELECT count(*) FROM reviews), (SELECT count(*) FROM runs)",
				       &s, "counting rows");
		if (!rc && sqlite3_step(s) == SQLITE_ROW) {
			res->qas = sqlite3_column_int64(s, 0);
			res->reviews = sqlite3_column_int64(s, 1);
			res->runs = sqlite3_column_int64(s, 2);
		} else if (!rc) {
			rc = store__db_fail(st, "counting rows");
		}
		sqlite3_finalize(s);
	}
	return rc;
}
