/* SPDX-License-Identifier: MIT */
/*
 * The store's reviews: each decision, edit, note and blind answer, the
 * review policy that turns every reviewer's verdict into a QA's status,
 * and the queue's counts.
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
#include "utf8.h"

/* ============================== The policy ============================== */

/*
 * Each reviewer's latest verdict and the latest adjudication per QA
 * (rn = 1), over the QAs of :qa (NULL = all). Verdicts are approve, reject
 * and edit; an adjudication is a verdict with adjudication = 1, and all
 * of a QA's adjudications form one partition whatever their reviewer.
 */
#define VERDICTS_SQL \
	"SELECT id, qa_id, reviewer, decision, edit_after, decided_at, adjudication," \
	" row_number() OVER (PARTITION BY qa_id, adjudication," \
	"  CASE WHEN adjudication = 1 THEN '' ELSE reviewer END" \
	"  ORDER BY decided_at DESC, id DESC) AS rn" \
	" FROM reviews WHERE decision IN ('approve', 'reject', 'edit')" \
	" AND (:qa IS NULL OR qa_id = :qa)"

/*
 * The review policy of store.h as one statement over the QAs of :qa.
 * cur holds each reviewer's current verdict; d sums them per QA (adj is
 * the latest adjudication, rej and acc count rejecting and accepting
 * verdicts); w ranks the edits of the reviewers whose verdict accepts,
 * latest first. s maps that to the status and the wording, and the
 * UPDATE writes only what changed.
 */
static const char derive_sql[] =
	"WITH v AS (" VERDICTS_SQL "),"
	" cur AS (SELECT qa_id, reviewer, decision FROM v WHERE rn = 1 AND adjudication = 0),"
	" d AS (SELECT qa_id,"
	"  max(CASE WHEN adjudication = 1 AND rn = 1 THEN decision END) AS adj,"
	"  max(CASE WHEN adjudication = 1 AND rn = 1 THEN edit_after END) AS adj_wording,"
	"  sum(adjudication = 0 AND rn = 1 AND decision = 'reject') AS rej,"
	"  sum(adjudication = 0 AND rn = 1 AND decision <> 'reject') AS acc"
	"  FROM v GROUP BY qa_id),"
	" w AS (SELECT r.qa_id, r.edit_after, row_number() OVER (PARTITION BY r.qa_id"
	"  ORDER BY r.decided_at DESC, r.id DESC) AS rn"
	"  FROM reviews r JOIN cur c ON c.qa_id = r.qa_id AND c.reviewer = r.reviewer"
	"  WHERE c.decision <> 'reject' AND r.decision = 'edit' AND r.adjudication = 0),"
	" s AS (SELECT d.qa_id,"
	"  CASE WHEN d.adj = 'reject' THEN NULL WHEN d.adj = 'edit' THEN d.adj_wording"
	"   WHEN d.adj IS NULL AND d.acc = 0 THEN NULL ELSE w.edit_after END AS wording,"
	"  CASE WHEN d.adj = 'reject' THEN 'rejected'"
	"   WHEN d.adj IS NULL AND d.rej > 0 AND d.acc > 0 THEN 'conflict'"
	"   WHEN d.adj IS NULL AND d.rej > 0 THEN 'rejected' END AS verdict"
	"  FROM d LEFT JOIN w ON w.qa_id = d.qa_id AND w.rn = 1),"
	" t AS (SELECT qa_id, wording, coalesce(verdict,"
	"  CASE WHEN wording IS NULL THEN 'approved' ELSE 'edited' END) AS status FROM s)"
	" UPDATE qa SET status = t.status, question_edited = t.wording,"
	" updated_at = " NOW_SQL
	" FROM t WHERE qa.id = t.qa_id AND qa.status <> 'superseded'"
	" AND (qa.status IS NOT t.status OR qa.question_edited IS NOT t.wording)";

int store__review_derive(struct store *st, const char *qa_id, int64_t *changed)
{
	sqlite3_stmt *s = NULL;
	int rc;

	rc = store__db_prepare(st, derive_sql, &s, "applying the review policy");
	if (rc)
		return rc;
	if (store__bind_text(s, ":qa", qa_id)) {
		rc = store__db_fail(st, "applying the review policy");
		goto out;
	}
	rc = store__db_done(st, s, "applying the review policy");
	if (!rc && changed)
		*changed += sqlite3_changes(st->db);
out:
	sqlite3_finalize(s);
	return rc;
}

int store_review_derive_all(struct store *st, int64_t *changed)
{
	int64_t n = 0;
	int rc, own = 0;

	rc = store__tx_enter(st, &own);
	if (rc)
		return rc;
	rc = store__review_derive(st, NULL, &n);
	rc = store__tx_leave(st, own, rc);
	if (!rc && changed)
		*changed = n;
	return rc;
}

/* ============================== Reviews ============================== */

static int review_check(const struct store *st, const struct store_review *r)
{
	static const char *const decisions[] = {
		"approve", "reject", "edit", "flag", "note", "answer"
	};
	static const char *const verdicts[] = { "approve", "reject", "edit" };

	if (!r->qa_id)
		return err_set(ENG_EINVAL, "'%s': review: missing qa_id", st->path);
	if (!r->reviewer || !*r->reviewer)
		return err_set(ENG_EINVAL, "'%s': review of '%s': missing reviewer",
			       st->path, r->qa_id);
	if (!store__is_one_of(r->decision, decisions, ARRAY_SIZE(decisions)))
		return err_set(ENG_EINVAL, "'%s': review of '%s': unknown decision '%s'",
			       st->path, r->qa_id, r->decision ? r->decision : "(null)");
	if (r->adjudication && !store__is_one_of(r->decision, verdicts, ARRAY_SIZE(verdicts)))
		return err_set(ENG_EINVAL, "'%s': review of '%s': an adjudication must "
			       "approve, reject or edit, not '%s'", st->path, r->qa_id, r->decision);
	if (!strcmp(r->decision, "edit") && (!r->edit_after || !*r->edit_after))
		return err_set(ENG_EINVAL, "'%s': review of '%s': edit without edit_after",
			       st->path, r->qa_id);
	if (!strcmp(r->decision, "answer") && r->blind_answer_index < 0)
		return err_set(ENG_EINVAL, "'%s': review of '%s': answer without "
			       "blind_answer_index", st->path, r->qa_id);
	if (r->blind_answer_index < -1 || r->started_ms < 0 || r->decided_ms < 0)
		return err_set(ENG_EINVAL, "'%s': review of '%s': negative index or time",
			       st->path, r->qa_id);
	if (!utf8_valid(r->reviewer) || !utf8_valid(r->reason) ||
	    !utf8_valid(r->edit_before) || !utf8_valid(r->edit_after) ||
	    !utf8_valid(r->note))
		return err_set(ENG_EINVAL, "'%s': review of '%s': the reviewer, reason, note "
			       "or wording is not valid UTF-8", st->path, r->qa_id);
	return 0;
}

int store_review_add(struct store *st, const struct store_review *r, int64_t *review_id)
{
	static const char insert_sql[] =
		"INSERT INTO reviews (qa_id, reviewer, decision, reason, blind_answer_index,"
		" edit_before, edit_after, note, started_at, decided_at, adjudication)"
		" VALUES (:qa, :reviewer, :decision, :reason, :blind,"
		" coalesce(:before, :current), :after, :note,"
		" strftime('%Y-%m-%dT%H:%M:%fZ', :started / 1000.0, 'unixepoch'),"
		" coalesce(strftime('%Y-%m-%dT%H:%M:%fZ', :decided / 1000.0, 'unixepoch'), "
		NOW_SQL "), :adjudication)";
	static const char *const verdicts[] = { "approve", "reject", "edit" };
	sqlite3_stmt *s = NULL;
	char *current = NULL, status[16] = "";
	int rc, own = 0, step, noptions = 0, verdict;
	int64_t rid = 0;

	if (!r)
		return err_set(ENG_EINVAL, "'%s': store_review_add: no review", st->path);
	rc = review_check(st, r);
	if (rc)
		return rc;
	verdict = store__is_one_of(r->decision, verdicts, ARRAY_SIZE(verdicts));
	rc = store__tx_enter(st, &own);
	if (rc)
		return rc;
	rc = store__db_prepare(st, "SELECT status, coalesce(question_edited, question),"
			" json_array_length(options_json) FROM qa WHERE id = :qa", &s,
			"reading a qa");
	if (rc)
		goto out;
	if (store__bind_text(s, ":qa", r->qa_id)) {
		rc = store__db_fail(st, "reading a qa");
		goto out;
	}
	step = sqlite3_step(s);
	if (step == SQLITE_DONE) {
		rc = err_set(ENG_ENOTFOUND, "'%s': no qa '%s'", st->path, r->qa_id);
		goto out;
	}
	if (step != SQLITE_ROW) {
		rc = store__db_fail(st, "reading a qa");
		goto out;
	}
	snprintf(status, sizeof(status), "%s", store__col_text(s, 0));
	current = store__xstrdup(store__col_text(s, 1));
	noptions = sqlite3_column_int(s, 2);
	sqlite3_finalize(s);
	s = NULL;
	if (!current) {
		rc = store__oom(st);
		goto out;
	}
	if (verdict && !strcmp(status, "superseded")) {
		rc = err_set(ENG_EINVAL, "'%s': qa '%s' is superseded; it cannot be %s",
			     st->path, r->qa_id, r->decision);
		goto out;
	}
	if (r->blind_answer_index >= noptions) {
		rc = err_set(ENG_EINVAL, "'%s': review of '%s': blind answer %d is not one "
			     "of its %d options", st->path, r->qa_id, r->blind_answer_index,
			     noptions);
		goto out;
	}
	rc = store__db_prepare(st, insert_sql, &s, "storing a review");
	if (rc)
		goto out;
	if (store__bind_text(s, ":qa", r->qa_id) || store__bind_text(s, ":reviewer", r->reviewer) ||
	    store__bind_text(s, ":decision", r->decision) || store__bind_text(s, ":reason", r->reason) ||
	    store__bind_i64_or_null(s, ":blind", r->blind_answer_index, -1) ||
	    store__bind_text(s, ":before", !strcmp(r->decision, "edit") ? r->edit_before : NULL) ||
	    store__bind_text(s, ":current", !strcmp(r->decision, "edit") ? current : NULL) ||
	    store__bind_text(s, ":after", r->edit_after) || store__bind_text(s, ":note", r->note) ||
	    store__bind_i64_or_null(s, ":started", r->started_ms, 0) ||
	    store__bind_i64_or_null(s, ":decided", r->decided_ms, 0) ||
	    store__bind_i64(s, ":adjudication", r->adjudication ? 1 : 0)) {
		rc = store__db_fail(st, "storing a review");
		goto out;
	}
	rc = store__db_done(st, s, "storing a review");
	if (rc)
		goto out;
	rid = sqlite3_last_insert_rowid(st->db);
	if (verdict)
		rc = store__review_derive(st, r->qa_id, NULL);
out:
	sqlite3_finalize(s);
	free(current);
	rc = store__tx_leave(st, own, rc);
	if (!rc && review_id)
		*review_id = rid;
	return rc;
}

/* ============================== Readers ============================== */

int store_review_verdicts(struct store *st, const char *id, cJSON **verdicts,
			  cJSON **adjudication)
{
	static const struct col_spec cols[] = {
		{ "review_id", COL_INT }, { "reviewer", COL_TEXT }, { "decision", COL_TEXT },
		{ "edit_after", COL_TEXT }, { "decided_at", COL_TEXT },
	};
	sqlite3_stmt *s = NULL;
	cJSON *arr = NULL, *adj = NULL, *row = NULL;
	int rc, step, found = 0;

	if (!id)
		return err_set(ENG_EINVAL, "'%s': store_review_verdicts: no id", st->path);
	rc = store__db_prepare(st, "SELECT 1 FROM qa WHERE id = :qa", &s, "reading a qa");
	if (rc)
		return rc;
	if (store__bind_text(s, ":qa", id)) {
		rc = store__db_fail(st, "reading a qa");
		goto out;
	}
	step = sqlite3_step(s);
	if (step == SQLITE_ROW)
		found = 1;
	else if (step != SQLITE_DONE)
		rc = store__db_fail(st, "reading a qa");
	sqlite3_finalize(s);
	s = NULL;
	if (rc)
		goto out;
	if (!found) {
		rc = err_set(ENG_ENOTFOUND, "'%s': no qa '%s'", st->path, id);
		goto out;
	}
	arr = cJSON_CreateArray();
	if (!arr) {
		rc = store__oom(st);
		goto out;
	}
	rc = store__db_prepare(st, "SELECT id, reviewer, decision, edit_after, decided_at,"
			" adjudication FROM (" VERDICTS_SQL ") WHERE rn = 1"
			" ORDER BY adjudication, reviewer", &s, "reading verdicts");
	if (rc)
		goto out;
	if (store__bind_text(s, ":qa", id)) {
		rc = store__db_fail(st, "reading verdicts");
		goto out;
	}
	while ((step = sqlite3_step(s)) == SQLITE_ROW) {
		rc = store__row_to_json(s, 0, cols, ARRAY_SIZE(cols), &row);
		if (rc) {
			rc = store__oom(st);
			goto out;
		}
		if (sqlite3_column_int(s, 5)) {
			cJSON_Delete(adj);
			adj = row;
		} else if (!cJSON_AddItemToArray(arr, row)) {
			cJSON_Delete(row);
			rc = store__oom(st);
			goto out;
		}
		row = NULL;
	}
	if (step != SQLITE_DONE)
		rc = store__db_fail(st, "reading verdicts");
out:
	sqlite3_finalize(s);
	if (!rc && !adj) {
		adj = cJSON_CreateNull();
		if (!adj)
			rc = store__oom(st);
	}
	if (rc) {
		cJSON_Delete(arr);
		cJSON_Delete(adj);
		return rc;
	}
	if (verdicts)
		*verdicts = arr;
	else
		cJSON_Delete(arr);
	if (adjudication)
		*adjudication = adj;
	else
		cJSON_Delete(adj);
	return 0;
}

/* A zeroed counts object: {"total": 0, STATUS: 0, ...} (with_total) or {STATUS: 0}. */
static cJSON *zero_counts(int with_total)
{
	cJSON *o = cJSON_CreateObject();
	size_t i;

	if (!o || (with_total && !cJSON_AddNumberToObject(o, "total", 0))) {
		cJSON_Delete(o);
		return NULL;
	}
	for (i = 0; i < ARRAY_SIZE(store__qa_statuses); i++) {
		if (!cJSON_AddNumberToObject(o, store__qa_statuses[i], 0)) {
			cJSON_Delete(o);
			return NULL;
		}
	}
	return o;
}

static void bump(cJSON *o, const char *name, double n)
{
	cJSON *item = cJSON_GetObjectItemCaseSensitive(o, name);

	if (item)
		cJSON_SetNumberHelper(item, item->valuedouble + n);
}

int store_review_counts(struct store *st, cJSON **out)
{
	sqlite3_stmt *s = NULL;
	cJSON *res = cJSON_CreateObject(), *by_status, *groups, *g;
	double total = 0;
	char key[256];
	int rc, step;

	by_status = res ? zero_counts(0) : NULL;
	if (!by_status || !cJSON_AddItemToObject(res, "by_status", by_status)) {
		cJSON_Delete(by_status);
		rc = store__oom(st);
		goto out;
	}
	groups = cJSON_AddObjectToObject(res, "groups");
	if (!groups) {
		rc = store__oom(st);
		goto out;
	}
	rc = store__db_prepare(st, "SELECT category, subtask, metric, status, sum(n) FROM qa_counts"
			" GROUP BY 1, 2, 3, 4 HAVING sum(n) > 0 ORDER BY 1, 2, 3, 4", &s,
			"reading the counts");
	if (rc)
		goto out;
	while ((step = sqlite3_step(s)) == SQLITE_ROW) {
		double n = (double)sqlite3_column_int64(s, 4);
		const char *status = store__col_text(s, 3);

		snprintf(key, sizeof(key), "%s.%s/%s", store__col_text(s, 0), store__col_text(s, 1),
			 store__col_text(s, 2));
		g = cJSON_GetObjectItemCaseSensitive(groups, key);
		if (!g) {
			g = zero_counts(1);
			if (!g || !cJSON_AddItemToObject(groups, key, g)) {
				cJSON_Delete(g);
				rc = store__oom(st);
				goto out;
			}
		}
		bump(g, "total", n);
		bump(g, status, n);
		bump(by_status, status, n);
		total += n;
	}
	if (step != SQLITE_DONE) {
		rc = store__db_fail(st, "reading the counts");
		goto out;
	}
	if (!cJSON_AddNumberToObject(res, "total", total))
		rc = store__oom(st);
out:
	sqlite3_finalize(s);
	if (rc) {
		cJSON_Delete(res);
		return rc;
	}
	*out = res;
	return 0;
}
