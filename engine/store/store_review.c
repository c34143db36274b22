/* SPDX-License-Identifier: MIT */
/*
 * The store's reviews: each decision, edit, note and blind answer.
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

/* ============================== Reviews ============================== */

/* What a decision does to qa.status (NULL: leaves it). */
static const char *decision_status(const char *decision)
{
	if (!strcmp(decision, "approve"))
		return "approved";
	if (!strcmp(decision, "reject"))
		return "rejected";
	if (!strcmp(decision, "edit"))
		return "edited";
	return NULL;
}

static int review_check(const struct store *st, const struct store_review *r)
{
	static const char *const decisions[] = {
		"approve", "reject", "edit", "flag", "note", "answer"
	};

	if (!r->qa_id)
		return err_set(ENG_EINVAL, "'%s': review: missing qa_id", st->path);
	if (!r->reviewer || !*r->reviewer)
		return err_set(ENG_EINVAL, "'%s': review of '%s': missing reviewer",
			       st->path, r->qa_id);
	if (!store__is_one_of(r->decision, decisions, ARRAY_SIZE(decisions)))
		return err_set(ENG_EINVAL, "'%s': review of '%s': unknown decision '%s'",
			       st->path, r->qa_id, r->decision ? r->decision : "(null)");
	if (!strcmp(r->decision, "edit") && (!r->edit_after || !*r->edit_after))
		return err_set(ENG_EINVAL, "'%s': review of '%s': edit without edit_after",
			       st->path, r->qa_id);
	if (!strcmp(r->decision, "answer") && r->blind_answer_index < 0)
		return err_set(ENG_EINVAL, "'%s': review of '%s': answer without "
			       "blind_answer_index", st->path, r->qa_id);
	if (r->blind_answer_index < -1 || r->started_ms < 0 || r->decided_ms < 0)
		return err_set(ENG_EINVAL, "'%s': review of '%s': negative index or time",
			       st->path, r->qa_id);
	return 0;
}

int store_review_add(struct store *st, const struct store_review *r, int64_t *review_id)
{
	static const char insert_sql[] =
		"INSERT INTO reviews (qa_id, reviewer, decision, reason, blind_answer_index,"
		" edit_before, edit_after, note, started_at, decided_at) VALUES (:qa,"
		" :reviewer, :decision, :reason, :blind, coalesce(:before, :current),"
		" :after, :note,"
		" strftime('%Y-%m-%dT%H:%M:%fZ', :started / 1000.0, 'unixepoch'),"
		" coalesce(strftime('%Y-%m-%dT%H:%M:%fZ', :decided / 1000.0, 'unixepoch'), "
		NOW_SQL "))";
	static const char status_sql[] =
		"UPDATE qa SET status = :status, question_edited = coalesce(:edited,"
		" question_edited), updated_at = " NOW_SQL " WHERE id = :qa";
	sqlite3_stmt *s = NULL;
	const char *new_status;
	char *current = NULL, status[16] = "";
	int rc, own = 0, step, noptions = 0;
	int64_t rid = 0;

	if (!r)
		return err_set(ENG_EINVAL, "'%s': store_review_add: no review", st->path);
	rc = review_check(st, r);
	if (rc)
		return rc;
	new_status = decision_status(r->decision);
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
	if (new_status && !strcmp(status, "superseded")) {
		rc = err_set(ENG_EINVAL, "'%s': qa '%s' is superseded; it cannot be %s",
			     st->path, r->qa_id, new_status);
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
	    store__bind_i64_or_null(s, ":decided", r->decided_ms, 0)) {
		rc = store__db_fail(st, "storing a review");
		goto out;
	}
	rc = store__db_done(st, s, "storing a review");
	if (rc)
		goto out;
	rid = sqlite3_last_insert_rowid(st->db);
	sqlite3_finalize(s);
	s = NULL;
	if (!new_status)
		goto out;
	rc = store__db_prepare(st, status_sql, &s, "updating a qa status");
	if (rc)
		goto out;
	if (store__bind_text(s, ":status", new_status) || store__bind_text(s, ":qa", r->qa_id) ||
	    store__bind_text(s, ":edited", !strcmp(r->decision, "edit") ? r->edit_after : NULL)) {
		rc = store__db_fail(st, "updating a qa status");
		goto out;
	}
	rc = store__db_done(st, s, "updating a qa status");
out:
	sqlite3_finalize(s);
	free(current);
	rc = store__tx_leave(st, own, rc);
	if (!rc && review_id)
		*review_id = rid;
	return rc;
}
