/* SPDX-License-Identifier: MIT */
/*
 * The store's QAs: writing and superseding them, their readers and
 * filters, and the drop records.
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

/* ================================ QAs ================================ */

/* Category and sub-task names form group keys and filter lists. */
static int name_ok(const char *s)
{
	return s && *s && !strpbrk(s, ".,/");
}

static int id_ok(const char *id)
{
	size_t n;

	if (!id)
		return 0;
	n = strlen(id);
	if (n < STORE_ID_MIN || n > STORE_ID_MAX)
		return 0;
	return strspn(id, "0123456789abcdef") == n;
}

/* Number of options in options_json when it is an array of 2..26 strings, else -1. */
static int options_count(const char *options_json)
{
	cJSON *a = cJSON_Parse(options_json), *o;
	int n = 0;

	if (!cJSON_IsArray(a)) {
		cJSON_Delete(a);
		return -1;
	}
	cJSON_ArrayForEach(o, a) {
		if (!cJSON_IsString(o)) {
			n = -1;
			break;
		}
		n++;
	}
	cJSON_Delete(a);
	if (n < 2 || n > STORE_MAX_OPTIONS)
		return -1;
	return n;
}

static int qa_invalid(const struct store *st, const char *id, const char *what)
{
	return err_set(ENG_EINVAL, "'%s': qa '%s': %s", st->path, id ? id : "(null)", what);
}

/*
 * The JSON columns, checked by SQLite's own parser in one cached
 * statement: json_valid() (RFC 8259, no tree built) is several times
 * cheaper than a cJSON parse of the trace, and this runs once per QA. NULL
 * columns are allowed.
 */
static int qa_json_check(struct store *st, const struct store_qa *qa)
{
	static const char sql[] =
		"SELECT ?1 IS NULL OR (json_valid(?1) AND json_type(?1) = 'array'),"
		" ?2 IS NULL OR json_valid(?2), ?3 IS NULL OR json_valid(?3),"
		" ?4 IS NULL OR json_valid(?4), ?5 IS NULL OR json_valid(?5)";
	static const char *const why[] = { "frames_json is not a JSON array",
					   "answer_json is not JSON", "gt_json is not JSON",
					   "qc_json is not JSON", "trace_json is not JSON" };
	const char *doc[] = { qa->frames_json, qa->answer_json, qa->gt_json, qa->qc_json,
			      qa->trace_json };
	sqlite3_stmt *s;
	int rc, i, bad = -1;

	rc = store__db_cached(st, sql, &s, "checking the QA's JSON");
	if (rc)
		return rc;
	for (i = 0; i < 5 && !rc; i++)
		rc = sqlite3_bind_text(s, i + 1, doc[i], -1, SQLITE_STATIC);
	if (!rc && sqlite3_step(s) == SQLITE_ROW) {
		for (i = 0; i < 5 && bad < 0; i++)
			if (!sqlite3_column_int(s, i))
				bad = i;
		rc = 0;
	} else {
		rc = store__db_fail(st, "checking the QA's JSON");
	}
	store__db_release(st, s);
	if (rc)
		return rc;
	return bad < 0 ? 0 : qa_invalid(st, qa->id, why[bad]);
}

static int qa_check(struct store *st, const struct store_qa *qa)
{
	static const char *const metrics[] = { "approx", "relative" };
	int n;

	if (!id_ok(qa->id))
		return qa_invalid(st, qa->id, "id must be 16 to 64 lowercase hex digits");
	if (!qa->recording_id || !*qa->recording_id)
		return qa_invalid(st, qa->id, "missing recording_id");
	if (!name_ok(qa->category))
		return qa_invalid(st, qa->id, "category missing or holds '.', ',' or '/'");
	if (!name_ok(qa->subtask))
		return qa_invalid(st, qa->id, "subtask missing or holds '.', ',' or '/'");
	if (!store__is_one_of(qa->metric, metrics, ARRAY_SIZE(metrics)))
		return qa_invalid(st, qa->id, "metric must be 'approx' or 'relative'");
	if (qa->status && strcmp(qa->status, "pending") && strcmp(qa->status, "dropped"))
		return qa_invalid(st, qa->id, "status must be 'pending' or 'dropped'");
	if (!qa->question || !*qa->question)
		return qa_invalid(st, qa->id, "missing question");
	if (qa->clip_start_ns > qa->clip_end_ns)
		return qa_invalid(st, qa->id, "clip_start_ns is after clip_end_ns");
	n = options_count(qa->options_json);
	if (n < 0)
		return qa_invalid(st, qa->id, "options_json must be an array of 2 to 26 strings");
	if (qa->answer_index < -1 || qa->answer_index >= n)
		return qa_invalid(st, qa->id, "answer_index is out of the options");
	return qa_json_check(st, qa);
	return 0;
}

static int qa_bind(sqlite3_stmt *s, const struct store_qa *qa)
{
	return store__bind_text(s, ":id", qa->id) ||
	       store__bind_i64_or_null(s, ":run_id", qa->run_id, 0) ||
	       store__bind_text(s, ":recording_id", qa->recording_id) ||
	       store__bind_text(s, ":category", qa->category) ||
	       store__bind_text(s, ":subtask", qa->subtask) ||
	       store__bind_text(s, ":metric", qa->metric) ||
	       store__bind_i64(s, ":t_ns", qa->t_ns) ||
	       store__bind_i64(s, ":clip_start_ns", qa->clip_start_ns) ||
	       store__bind_i64(s, ":clip_end_ns", qa->clip_end_ns) ||
	       store__bind_text(s, ":frames_json", qa->frames_json) ||
	       store__bind_text(s, ":target", qa->target) ||
	       store__bind_text(s, ":question", qa->question) ||
	       store__bind_text(s, ":options_json", qa->options_json) ||
	       store__bind_i64_or_null(s, ":answer_index", qa->answer_index, -1) ||
	       store__bind_text(s, ":answer_json", qa->answer_json) ||
	       store__bind_text(s, ":gt_json", qa->gt_json) ||
	       store__bind_text(s, ":qc_json", qa->qc_json) ||
	       store__bind_text(s, ":status", qa->status ? qa->status : "pending") ||
	       store__bind_text(s, ":drop_reason", qa->drop_reason);
}

/* Runs a one-row lookup "SELECT ... WHERE x = :key"; *found = 0 or 1. */
static int exists(struct store *st, const char *sql, const char *key_text,
		  int64_t key_int, int *found, const char *what)
{
	sqlite3_stmt *s = NULL;
	int rc, step;

	rc = store__db_cached(st, sql, &s, what);
	if (rc)
		goto out;
	if (key_text ? store__bind_text(s, ":key", key_text) : store__bind_i64(s, ":key", key_int)) {
		rc = store__db_fail(st, what);
		goto out;
	}
	step = sqlite3_step(s);
	if (step != SQLITE_ROW && step != SQLITE_DONE) {
		rc = store__db_fail(st, what);
		goto out;
	}
	*found = step == SQLITE_ROW;
out:
	store__db_release(st, s);
	return rc;
}

/* The status of QA id in out (caller's buffer), or "" when there is none. */
static int qa_status(struct store *st, const char *id, char *out, size_t n)
{
	sqlite3_stmt *s = NULL;
	int rc, step;

	out[0] = '\0';
	rc = store__db_cached(st, "SELECT status FROM qa WHERE id = :id", &s, "reading a qa");
	if (rc)
		goto out;
	if (store__bind_text(s, ":id", id)) {
		rc = store__db_fail(st, "reading a qa");
		goto out;
	}
	step = sqlite3_step(s);
	if (step == SQLITE_ROW)
		snprintf(out, n, "%s", store__col_text(s, 0) ? store__col_text(s, 0) : "");
	else if (step != SQLITE_DONE)
		rc = store__db_fail(st, "reading a qa");
out:
	store__db_release(st, s);
	return rc;
}

/* Writes (trace_json set) or removes (NULL) the trace of a QA. */
static int trace_write(struct store *st, const char *qa_id, const char *trace_json)
{
	sqlite3_stmt *s = NULL;
	int rc;

	rc = store__db_cached(st, trace_json
			? "INSERT INTO traces (qa_id, trace_json) VALUES (:id, :trace)"
			  " ON CONFLICT(qa_id) DO UPDATE SET trace_json = excluded.trace_json"
			: "DELETE FROM traces WHERE qa_id = :id", &s, "storing a trace");
	if (rc)
		goto out;
	if (store__bind_text(s, ":id", qa_id) || store__bind_text(s, ":trace", trace_json)) {
		rc = store__db_fail(st, "storing a trace");
		goto out;
	}
	rc = store__db_done(st, s, "storing a trace");
out:
	store__db_release(st, s);
	return rc;
}

int store_qa_put(struct store *st, const struct store_qa *qa, int *inserted)
{
	static const char insert_sql[] =
		"INSERT INTO qa (id, run_id, recording_id, category, subtask, metric,"
		" t_ns, clip_start_ns, clip_end_ns, frames_json, target, question,"
		" options_json, answer_index, answer_json, gt_json, qc_json, status,"
		" drop_reason, created_at, updated_at) VALUES (:id, :run_id,"
		" :recording_id, :category, :subtask, :metric, :t_ns, :clip_start_ns,"
		" :clip_end_ns, :frames_json, :target, :question, :options_json,"
		" :answer_index, :answer_json, :gt_json, :qc_json, :status,"
		" :drop_reason, " NOW_SQL ", " NOW_SQL ")";
	static const char replace_sql[] =
		"UPDATE qa SET run_id = :run_id, recording_id = :recording_id,"
		" category = :category, subtask = :subtask, metric = :metric,"
		" t_ns = :t_ns, clip_start_ns = :clip_start_ns, clip_end_ns = :clip_end_ns,"
		" frames_json = :frames_json, target = :target, question = :question,"
		" question_edited = NULL, options_json = :options_json,"
		" answer_index = :answer_index, answer_json = :answer_json,"
		" gt_json = :gt_json, qc_json = :qc_json, status = :status,"
		" drop_reason = :drop_reason, updated_at = " NOW_SQL
		" WHERE id = :id AND status = 'superseded'";
	sqlite3_stmt *s = NULL;
	char status[16];
	int rc, own = 0, found = 0, result = STORE_PUT_KEPT;

	if (!qa)
		return err_set(ENG_EINVAL, "'%s': store_qa_put: no qa", st->path);
	rc = qa_check(st, qa);
	if (rc)
		return rc;
	rc = store__tx_enter(st, &own);
	if (rc)
		return rc;
	rc = qa_status(st, qa->id, status, sizeof(status));
	if (rc)
		goto out;
	if (status[0] && strcmp(status, "superseded"))
		goto out; /* pending, dropped or reviewed: left as it is */
	rc = exists(st, "SELECT 1 FROM recordings WHERE id = :key", qa->recording_id, 0,
		    &found, "reading a recording");
	if (rc)
		goto out;
	if (!found) {
		rc = err_set(ENG_EINVAL, "'%s': qa '%s': recording '%s' is not in the store",
			     st->path, qa->id, qa->recording_id);
		goto out;
	}
	if (qa->run_id) {
		rc = exists(st, "SELECT 1 FROM runs WHERE id = :key", NULL, qa->run_id,
			    &found, "reading a run");
		if (rc)
			goto out;
		if (!found) {
			rc = err_set(ENG_EINVAL, "'%s': qa '%s': run %lld is not in the store",
				     st->path, qa->id, (long long)qa->run_id);
			goto out;
		}
	}
	rc = store__db_cached(st, status[0] ? replace_sql : insert_sql, &s, "storing a qa");
	if (rc)
		goto out;
	if (qa_bind(s, qa)) {
		rc = store__db_fail(st, "storing a qa");
		goto out;
	}
	rc = store__db_done(st, s, "storing a qa");
	if (rc)
		goto out;
	if (qa->trace_json || status[0])
		rc = trace_write(st, qa->id, qa->trace_json);
	if (rc)
		goto out;
	result = status[0] ? STORE_PUT_REPLACED : STORE_PUT_NEW;
out:
	store__db_release(st, s);
	rc = store__tx_leave(st, own, rc);
	if (!rc && inserted)
		*inserted = result;
	return rc;
}

int store_qa_supersede(struct store *st, const char *category,
		       const char *recording_id, int64_t *n)
{
	static const char mark_sql[] =
		"UPDATE qa SET status = 'superseded', updated_at = " NOW_SQL
		" WHERE category = :category AND status IN ('pending', 'dropped')"
		" AND (:recording IS NULL OR recording_id = :recording)";
	static const char drops_sql[] =
		"DELETE FROM drops WHERE category = :category"
		" AND (:recording IS NULL OR recording_id = :recording)";
	sqlite3_stmt *s = NULL;
	int64_t marked = 0;
	int rc, own = 0;

	if (!category || !*category)
		return err_set(ENG_EINVAL, "'%s': store_qa_supersede: no category", st->path);
	rc = store__tx_enter(st, &own);
	if (rc)
		return rc;
	rc = store__db_prepare(st, mark_sql, &s, "superseding qas");
	if (rc)
		goto out;
	if (store__bind_text(s, ":category", category) || store__bind_text(s, ":recording", recording_id)) {
		rc = store__db_fail(st, "superseding qas");
		goto out;
	}
	rc = store__db_done(st, s, "superseding qas");
	if (rc)
		goto out;
	marked = sqlite3_changes(st->db);
	sqlite3_finalize(s);
	rc = store__db_prepare(st, drops_sql, &s, "clearing drops");
	if (rc)
		goto out;
	if (store__bind_text(s, ":category", category) || store__bind_text(s, ":recording", recording_id)) {
		rc = store__db_fail(st, "clearing drops");
		goto out;
	}
	rc = store__db_done(st, s, "clearing drops");
out:
	sqlite3_finalize(s);
	rc = store__tx_leave(st, own, rc);
	if (!rc && n)
		*n = marked;
	return rc;
}

/* ============================ QA readers ============================ */

/* The columns every QA reader selects, in this order (see qa_specs). */
#define QA_COLS \
	"qa.id, qa.run_id, qa.recording_id, qa.category, qa.subtask, qa.metric," \
	" qa.t_ns, qa.clip_start_ns, qa.clip_end_ns, qa.frames_json, qa.target," \
	" qa.question, qa.question_edited, qa.options_json, qa.answer_index," \
	" qa.answer_json, qa.gt_json, qa.qc_json, qa.status, qa.drop_reason," \
	" qa.created_at, qa.updated_at," \
	" (SELECT count(*) FROM reviews r WHERE r.qa_id = qa.id)"

enum qa_col {
	QC_ID, QC_RUN, QC_REC, QC_CAT, QC_SUB, QC_METRIC, QC_T, QC_CLIP0, QC_CLIP1,
	QC_FRAMES, QC_TARGET, QC_QUESTION, QC_EDITED, QC_OPTIONS, QC_ANSWER_INDEX,
	QC_ANSWER, QC_GT, QC_QC, QC_STATUS, QC_DROP, QC_CREATED, QC_UPDATED,
	QC_NREV, QC_TRACE
};

static const struct col_spec qa_specs[] = {
	{ "id", COL_TEXT }, { "run_id", COL_INT }, { "recording_id", COL_TEXT },
	{ "category", COL_TEXT }, { "subtask", COL_TEXT }, { "metric", COL_TEXT },
	{ "t_ns", COL_INT }, { "clip_start_ns", COL_INT }, { "clip_end_ns", COL_INT },
	{ "frames", COL_JSON }, { "target", COL_TEXT }, { "question", COL_TEXT },
	{ "question_edited", COL_TEXT }, { "options", COL_JSON },
	{ "answer_index", COL_INT }, { "answer", COL_JSON }, { "gt", COL_JSON },
	{ "qc", COL_JSON }, { "status", COL_TEXT }, { "drop_reason", COL_TEXT },
	{ "created_at", COL_TEXT }, { "updated_at", COL_TEXT },
	{ "n_reviews", COL_INT }, { "trace", COL_JSON },
};

/*
 * The filter as SQL over named parameters, with only the conditions the
 * filter sets, so that SQLite can use an index for them (qa_status_order
 * serves a status in review order). A list with one element is an
 * equality; a comma-separated list matches any of its elements.
 */
struct filter_term {
	size_t off;           /* offsetof the field in struct store_filter */
	const char *column;   /* its column */
	const char *param;    /* its parameter */
};

static const struct filter_term filter_lists[] = {
	{ offsetof(struct store_filter, category), "qa.category", ":category" },
	{ offsetof(struct store_filter, subtask), "qa.subtask", ":subtask" },
	{ offsetof(struct store_filter, metric), "qa.metric", ":metric" },
	{ offsetof(struct store_filter, status), "qa.status", ":status" },
};

static const char *filter_field(const struct store_filter *f, size_t off)
{
	return f ? *(const char *const *)(const void *)((const char *)f + off) : NULL;
}

static int filter_where(struct buf *b, const struct store_filter *f)
{
	size_t i;
	int rc = buf_adds(b, " WHERE 1");

	for (i = 0; !rc && i < ARRAY_SIZE(filter_lists); i++) {
		const struct filter_term *t = &filter_lists[i];
		const char *v = filter_field(f, t->off);

		if (!v)
			continue;
		if (strchr(v, ','))
			rc = buf_addf(b, " AND instr(',' || %s || ',', ',' || %s || ',') > 0",
				      t->param, t->column);
		else
			rc = buf_addf(b, " AND %s = %s", t->column, t->param);
	}
	if (!rc && f && f->recording_id)
		rc = buf_adds(b, " AND qa.recording_id = :recording");
	if (!rc && f && f->reviewer)
		rc = buf_adds(b, " AND EXISTS (SELECT 1 FROM reviews r"
			      " WHERE r.qa_id = qa.id AND r.reviewer = :reviewer)");
	if (!rc && f && f->not_reviewer)
		rc = buf_adds(b, " AND NOT EXISTS (SELECT 1 FROM reviews r"
			      " WHERE r.qa_id = qa.id AND r.reviewer = :not_reviewer)");
	return rc;
}

#define QA_ORDER " ORDER BY qa.recording_id, qa.t_ns, qa.id"

static int filter_bind(sqlite3_stmt *s, const struct store_filter *f)
{
	static const struct store_filter none;

	if (!f)
		f = &none;
	return store__bind_text(s, ":category", f->category) ||
	       store__bind_text(s, ":subtask", f->subtask) ||
	       store__bind_text(s, ":metric", f->metric) ||
	       store__bind_text(s, ":status", f->status) ||
	       store__bind_text(s, ":recording", f->recording_id) ||
	       store__bind_text(s, ":reviewer", f->reviewer) ||
	       store__bind_text(s, ":not_reviewer", f->not_reviewer) ||
	       store__bind_i64(s, ":limit", f->limit > 0 ? f->limit : -1) ||
	       store__bind_i64(s, ":offset", f->offset);
}

/* Prepares head + the filter's WHERE + tail, with the filter bound. */
static int filter_prepare(struct store *st, const char *head, const struct store_filter *f,
			  const char *tail, sqlite3_stmt **out, const char *what)
{
	struct buf b;
	int rc;

	*out = NULL;
	buf_init(&b, 1 << 16);
	rc = buf_adds(&b, head);
	if (!rc)
		rc = filter_where(&b, f);
	if (!rc)
		rc = buf_adds(&b, tail);
	if (rc) {
		buf_release(&b);
		return err_set(rc, "'%s': %s: the query is too long", st->path, what);
	}
	rc = store__db_prepare(st, buf_str(&b), out, what);
	buf_release(&b);
	if (!rc && filter_bind(*out, f)) {
		rc = store__db_fail(st, what);
		sqlite3_finalize(*out);
		*out = NULL;
	}
	return rc;
}

static int filter_check(const struct store *st, const struct store_filter *f)
{
	if (f && (f->limit < 0 || f->offset < 0))
		return err_set(ENG_EINVAL, "'%s': filter: negative limit or offset", st->path);
	return 0;
}

/* The reviews of a QA, oldest first, as an array. */
static int reviews_json(struct store *st, const char *id, cJSON **out)
{
	static const struct col_spec cols[] = {
		{ "id", COL_INT }, { "reviewer", COL_TEXT }, { "decision", COL_TEXT },
		{ "reason", COL_TEXT }, { "blind_answer_index", COL_INT },
		{ "edit_before", COL_TEXT }, { "edit_after", COL_TEXT }, { "note", COL_TEXT },
		{ "started_at", COL_TEXT }, { "decided_at", COL_TEXT }, { "time_ms", COL_INT },
		{ "adjudication", COL_INT },
	};
	sqlite3_stmt *s = NULL;
	cJSON *arr = cJSON_CreateArray(), *row = NULL;
	int rc, step;

	if (!arr)
		return store__oom(st);
	rc = store__db_prepare(st, "SELECT id, reviewer, decision, reason, blind_answer_index,"
			" edit_before, edit_after, note, started_at, decided_at,"
			" CAST(round((julianday(decided_at) - julianday(started_at))"
			" * 86400000.0) AS INTEGER), adjudication"
			" FROM reviews WHERE qa_id = :id ORDER BY id", &s, "reading reviews");
	if (rc)
		goto out;
	if (store__bind_text(s, ":id", id)) {
		rc = store__db_fail(st, "reading reviews");
		goto out;
	}
	while ((step = sqlite3_step(s)) == SQLITE_ROW) {
		rc = store__row_to_json(s, 0, cols, ARRAY_SIZE(cols), &row);
		if (rc || !cJSON_AddItemToArray(arr, row)) {
			if (!rc)
				cJSON_Delete(row);
			rc = store__oom(st);
			goto out;
		}
	}
	if (step != SQLITE_DONE)
		rc = store__db_fail(st, "reading reviews");
out:
	sqlite3_finalize(s);
	if (rc) {
		cJSON_Delete(arr);
		return rc;
	}
	*out = arr;
	return 0;
}

int store_qa_get(struct store *st, const char *id, unsigned flags, cJSON **out)
{
	sqlite3_stmt *s = NULL;
	cJSON *obj = NULL, *revs = NULL;
	int rc, step;
	size_t ncols = (flags & STORE_GET_TRACE) ? QC_TRACE + 1 : QC_TRACE;

	if (!id)
		return err_set(ENG_EINVAL, "'%s': store_qa_get: no id", st->path);
	rc = store__db_prepare(st, (flags & STORE_GET_TRACE)
			? "SELECT " QA_COLS ", (SELECT trace_json FROM traces t"
			  " WHERE t.qa_id = qa.id) FROM qa WHERE qa.id = :id"
			: "SELECT " QA_COLS " FROM qa WHERE qa.id = :id", &s, "reading a qa");
	if (rc)
		goto out;
	if (store__bind_text(s, ":id", id)) {
		rc = store__db_fail(st, "reading a qa");
		goto out;
	}
	step = sqlite3_step(s);
	if (step == SQLITE_DONE) {
		rc = err_set(ENG_ENOTFOUND, "'%s': no qa '%s'", st->path, id);
		goto out;
	}
	if (step != SQLITE_ROW) {
		rc = store__db_fail(st, "reading a qa");
		goto out;
	}
	rc = store__row_to_json(s, 0, qa_specs, ncols, &obj);
	if (rc) {
		rc = store__oom(st);
		goto out;
	}
	if (flags & STORE_GET_REVIEWS) {
		rc = reviews_json(st, id, &revs);
		if (rc)
			goto out;
		if (!cJSON_AddItemToObject(obj, "reviews", revs)) {
			cJSON_Delete(revs);
			rc = store__oom(st);
			goto out;
		}
	}
out:
	sqlite3_finalize(s);
	if (rc) {
		cJSON_Delete(obj);
		return rc;
	}
	*out = obj;
	return 0;
}

static int count_matches(struct store *st, const struct store_filter *f, int64_t *n)
{
	sqlite3_stmt *s = NULL;
	int rc;

	/*
	 * A filter on recording, category, sub-task, metric and status only
	 * is summed from qa_counts (kept exact by triggers; the alias lets the
	 * filter's qa.* columns name its columns), so the count costs nothing
	 * at any size; a filter by reviewer counts the matching rows.
	 */
	if (!f || (!f->reviewer && !f->not_reviewer))
		rc = filter_prepare(st, "SELECT coalesce(sum(qa.n), 0) FROM qa_counts AS qa", f, "",
				    &s, "counting qas");
	else
		rc = filter_prepare(st, "SELECT count(*) FROM qa", f, "", &s, "counting qas");
	if (rc)
		goto out;
	if (sqlite3_step(s) != SQLITE_ROW) {
		rc = store__db_fail(st, "counting qas");
		goto out;
	}
	*n = sqlite3_column_int64(s, 0);
out:
	sqlite3_finalize(s);
	return rc;
}

int store_qa_list(struct store *st, const struct store_filter *filter, cJSON **out)
{
	sqlite3_stmt *s = NULL;
	cJSON *res = NULL, *items, *row = NULL;
	int64_t total = 0;
	int rc, step, snapshot = 0;

	rc = filter_check(st, filter);
	if (rc)
		return rc;
	/* one read snapshot for the count and the page, unless a batch is open */
	if (!st->in_tx) {
		rc = store__db_exec(st, "BEGIN", "listing qas");
		if (rc)
			return rc;
		snapshot = 1;
	}
	rc = count_matches(st, filter, &total);
	if (rc)
		goto out;
	res = cJSON_CreateObject();
	if (!res || !cJSON_AddNumberToObject(res, "total", (double)total) ||
	    !cJSON_AddNumberToObject(res, "offset", filter ? (double)filter->offset : 0) ||
	    !cJSON_AddNumberToObject(res, "limit", filter ? (double)filter->limit : 0)) {
		rc = store__oom(st);
		goto out;
	}
	items = cJSON_AddArrayToObject(res, "items");
	if (!items) {
		rc = store__oom(st);
		goto out;
	}
	rc = filter_prepare(st, "SELECT " QA_COLS " FROM qa", filter,
			    QA_ORDER " LIMIT :limit OFFSET :offset", &s, "listing qas");
	if (rc)
		goto out;
	while ((step = sqlite3_step(s)) == SQLITE_ROW) {
		rc = store__row_to_json(s, 0, qa_specs, QC_TRACE, &row);
		if (rc || !cJSON_AddItemToArray(items, row)) {
			if (!rc)
				cJSON_Delete(row);
			rc = store__oom(st);
			goto out;
		}
	}
	if (step != SQLITE_DONE)
		rc = store__db_fail(st, "listing qas");
out:
	sqlite3_finalize(s);
	if (snapshot)
		sqlite3_exec(st->db, "COMMIT", NULL, NULL, NULL);
	if (rc) {
		cJSON_Delete(res);
		return rc;
	}
	*out = res;
	return 0;
}

/* The first matching id before (dir < 0) or after the key (rec, t, id). */
static int neighbour(struct store *st, const struct store_filter *f, int dir,
		     const char *rec, int64_t t, const char *id, char **out)
{
	static const char prev_sql[] =
		" AND (qa.recording_id, qa.t_ns, qa.id) < (:k_rec, :k_t, :k_id)"
		" ORDER BY qa.recording_id DESC, qa.t_ns DESC, qa.id DESC LIMIT 1";
	static const char next_sql[] =
		" AND (qa.recording_id, qa.t_ns, qa.id) > (:k_rec, :k_t, :k_id)"
		QA_ORDER " LIMIT 1";
	/*
	 * Inside one recording (the filter names the QA's own): the same order
	 * without the constant recording_id, which lets SQLite walk
	 * qa_status_order instead of sorting every match for one row.
	 */
	static const char prev_in_rec_sql[] =
		" AND (qa.t_ns, qa.id) < (:k_t, :k_id)"
		" ORDER BY qa.t_ns DESC, qa.id DESC LIMIT 1";
	static const char next_in_rec_sql[] =
		" AND (qa.t_ns, qa.id) > (:k_t, :k_id) ORDER BY qa.t_ns, qa.id LIMIT 1";
	int in_rec = f && f->recording_id && !strcmp(f->recording_id, rec);
	sqlite3_stmt *s = NULL;
	char *found = NULL;
	int rc, step;

	rc = filter_prepare(st, "SELECT qa.id FROM qa", f,
			    in_rec ? (dir < 0 ? prev_in_rec_sql : next_in_rec_sql)
				   : (dir < 0 ? prev_sql : next_sql), &s, "finding neighbours");
	if (rc)
		goto out;
	if (store__bind_text(s, ":k_rec", rec) || store__bind_i64(s, ":k_t", t) ||
	    store__bind_text(s, ":k_id", id)) {
		rc = store__db_fail(st, "finding neighbours");
		goto out;
	}
	step = sqlite3_step(s);
	if (step == SQLITE_ROW) {
		found = store__xstrdup(store__col_text(s, 0));
		if (!found)
			rc = store__oom(st);
	} else if (step != SQLITE_DONE) {
		rc = store__db_fail(st, "finding neighbours");
	}
out:
	sqlite3_finalize(s);
	if (!rc)
		*out = found;
	return rc;
}

int store_qa_neighbours(struct store *st, const struct store_filter *filter,
			const char *id, char **prev, char **next)
{
	sqlite3_stmt *s = NULL;
	char *rec = NULL, *p = NULL, *n = NULL;
	int64_t t = 0;
	int rc, step;

	if (!id)
		return err_set(ENG_EINVAL, "'%s': store_qa_neighbours: no id", st->path);
	rc = store__db_prepare(st, "SELECT recording_id, t_ns FROM qa WHERE id = :id", &s,
			"reading a qa");
	if (rc)
		goto out;
	if (store__bind_text(s, ":id", id)) {
		rc = store__db_fail(st, "reading a qa");
		goto out;
	}
	step = sqlite3_step(s);
	if (step == SQLITE_DONE) {
		rc = err_set(ENG_ENOTFOUND, "'%s': no qa '%s'", st->path, id);
		goto out;
	}
	if (step != SQLITE_ROW) {
		rc = store__db_fail(st, "reading a qa");
		goto out;
	}
	rec = store__xstrdup(store__col_text(s, 0));
	t = sqlite3_column_int64(s, 1);
	if (!rec) {
		rc = store__oom(st);
		goto out;
	}
	if (prev)
		rc = neighbour(st, filter, -1, rec, t, id, &p);
	if (!rc && next)
		rc = neighbour(st, filter, 1, rec, t, id, &n);
out:
	sqlite3_finalize(s);
	free(rec);
	if (rc) {
		free(p);
		free(n);
		return rc;
	}
	if (prev)
		*prev = p;
	if (next)
		*next = n;
	return 0;
}

/* Points a struct store_qa at the columns of the current row. */
static void qa_from_row(sqlite3_stmt *s, int with_trace, struct store_qa *qa)
{
	memset(qa, 0, sizeof(*qa));
	qa->id = store__col_text(s, QC_ID);
	qa->run_id = sqlite3_column_int64(s, QC_RUN);
	qa->recording_id = store__col_text(s, QC_REC);
	qa->category = store__col_text(s, QC_CAT);
	qa->subtask = store__col_text(s, QC_SUB);
	qa->metric = store__col_text(s, QC_METRIC);
	qa->t_ns = sqlite3_column_int64(s, QC_T);
	qa->clip_start_ns = sqlite3_column_int64(s, QC_CLIP0);
	qa->clip_end_ns = sqlite3_column_int64(s, QC_CLIP1);
	qa->frames_json = store__col_text(s, QC_FRAMES);
	qa->target = store__col_text(s, QC_TARGET);
	qa->question = store__col_text(s, QC_QUESTION);
	qa->question_edited = store__col_text(s, QC_EDITED);
	qa->options_json = store__col_text(s, QC_OPTIONS);
	qa->answer_index = sqlite3_column_type(s, QC_ANSWER_INDEX) == SQLITE_NULL
		? -1 : sqlite3_column_int(s, QC_ANSWER_INDEX);
	qa->answer_json = store__col_text(s, QC_ANSWER);
	qa->gt_json = store__col_text(s, QC_GT);
	qa->qc_json = store__col_text(s, QC_QC);
	qa->status = store__col_text(s, QC_STATUS);
	qa->drop_reason = store__col_text(s, QC_DROP);
	qa->created_at = store__col_text(s, QC_CREATED);
	qa->updated_at = store__col_text(s, QC_UPDATED);
	qa->trace_json = with_trace ? store__col_text(s, QC_TRACE) : NULL;
}

int store_qa_iter(struct store *st, const struct store_filter *filter, int with_trace,
		  store_qa_cb cb, void *ctx)
{
	sqlite3_stmt *s = NULL;
	struct store_qa qa;
	int rc, step;

	if (!cb)
		return err_set(ENG_EINVAL, "'%s': store_qa_iter: no callback", st->path);
	rc = filter_check(st, filter);
	if (rc)
		return rc;
	rc = filter_prepare(st, with_trace
			? "SELECT " QA_COLS ", (SELECT trace_json FROM traces t"
			  " WHERE t.qa_id = qa.id) FROM qa"
			: "SELECT " QA_COLS ", NULL FROM qa", filter,
			QA_ORDER " LIMIT :limit OFFSET :offset", &s, "reading qas");
	if (rc)
		goto out;
	while ((step = sqlite3_step(s)) == SQLITE_ROW) {
		qa_from_row(s, with_trace, &qa);
		rc = cb(&qa, ctx);
		if (rc)
			goto out;
	}
	if (step != SQLITE_DONE)
		rc = store__db_fail(st, "reading qas");
out:
	sqlite3_finalize(s);
	return rc;
}

/* ============================== Drops ============================== */

int store_drop_put(struct store *st, const struct store_drop *d)
{
	return store_drop_add(st, d, NULL);
}

int store_drop_add(struct store *st, const struct store_drop *d, bool *added)
{
	static const char *const metrics[] = { "approx", "relative" };
	static const char sql[] =
		"INSERT OR IGNORE INTO drops (run_id, recording_id, category, subtask,"
		" metric, reason, t_ns, target, detail) VALUES (:run_id, :recording_id,"
		" :category, :subtask, :metric, :reason, :t_ns, :target, :detail)";
	sqlite3_stmt *s = NULL;
	int rc;

	if (!d || !d->recording_id || !*d->recording_id || !d->reason || !*d->reason)
		return err_set(ENG_EINVAL, "'%s': drop: missing recording_id or reason", st->path);
	if (!name_ok(d->category) || !name_ok(d->subtask))
		return err_set(ENG_EINVAL, "'%s': drop: category or subtask missing or holds"
			       " '.', ',' or '/'", st->path);
	if (!store__is_one_of(d->metric, metrics, ARRAY_SIZE(metrics)))
		return err_set(ENG_EINVAL, "'%s': drop: metric must be 'approx' or 'relative'",
			       st->path);
	rc = store__db_cached(st, sql, &s, "storing a drop");
	if (rc)
		goto out;
	if (store__bind_i64_or_null(s, ":run_id", d->run_id, 0) ||
	    store__bind_text(s, ":recording_id", d->recording_id) ||
	    store__bind_text(s, ":category", d->category) || store__bind_text(s, ":subtask", d->subtask) ||
	    store__bind_text(s, ":metric", d->metric) || store__bind_text(s, ":reason", d->reason) ||
	    store__bind_i64(s, ":t_ns", d->t_ns) || store__bind_text(s, ":target", d->target) ||
	    store__bind_text(s, ":detail", d->detail)) {
		rc = store__db_fail(st, "storing a drop");
		goto out;
	}
	rc = store__db_done(st, s, "storing a drop");
	if (!rc && added)
		*added = sqlite3_changes(st->db) > 0;
out:
	store__db_release(st, s);
	return rc;
}
