/* SPDX-License-Identifier: MIT */
/*
 * The SQLite store: schema migrations, batched writes, QA/review/drop
 * records, readers that hand out cJSON, corpus statistics and the LLM
 * response cache. The only file that includes sqlite3.h.
 */
#include "store.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>
#include <sqlite3.h>

#include "banned.h"
#include "buf.h"
#include "err.h"

/* 'PRXM': marks a file as a proxima store (PRAGMA application_id). */
#define STORE_APP_ID 0x5052584d
#define STORE_BUSY_MS 5000
#define STORE_MAX_OPTIONS 26
#define STORE_ID_MIN 16
#define STORE_ID_MAX 64

/* "no value": becomes JSON null (NAN is a float constant). */
#define NO_NUM ((double)NAN)

/* ISO-8601 UTC with milliseconds: every time the store writes itself. */
#define NOW_SQL "strftime('%Y-%m-%dT%H:%M:%fZ','now')"

struct store {
	sqlite3 *db;   /* the connection */
	char *path;    /* as given to store_open() */
	int readonly;  /* opened with STORE_READONLY */
	int in_tx;     /* a store_begin() batch is open */
};

static const char *const qa_statuses[] = {
	"pending", "approved", "rejected", "edited", "superseded", "dropped"
};

/* ============================== Schema ============================== */

/*
 * One entry per schema version: store_migrations[v] takes a store from
 * version v to v + 1. Append new versions; never edit a released one.
 */
static const char *const store_migrations[] = {
	/* 0 -> 1: every table */
	"CREATE TABLE recordings ("
	" id TEXT PRIMARY KEY,"
	" layout TEXT NOT NULL,"
	" root TEXT,"
	" t0_ns INTEGER,"
	" t1_ns INTEGER,"
	" summary_json TEXT,"
	" added_at TEXT NOT NULL);"
	"CREATE TABLE runs ("
	" id INTEGER PRIMARY KEY,"
	" started_at TEXT NOT NULL,"
	" finished_at TEXT,"
	" config_json TEXT,"
	" brain TEXT,"
	" model TEXT,"
	" seed INTEGER,"
	" engine_version TEXT,"
	" status TEXT NOT NULL,"
	" counts_json TEXT);"
	"CREATE TABLE qa ("
	" id TEXT PRIMARY KEY,"
	" run_id INTEGER REFERENCES runs(id),"
	" recording_id TEXT NOT NULL REFERENCES recordings(id),"
	" category TEXT NOT NULL,"
	" subtask TEXT NOT NULL,"
	" metric TEXT NOT NULL CHECK (metric IN ('approx','relative')),"
	" t_ns INTEGER NOT NULL,"
	" clip_start_ns INTEGER,"
	" clip_end_ns INTEGER,"
	" frames_json TEXT,"
	" target TEXT,"
	" question TEXT NOT NULL,"
	" question_edited TEXT,"
	" options_json TEXT NOT NULL,"
	" answer_index INTEGER,"
	" answer_json TEXT,"
	" gt_json TEXT,"
	" qc_json TEXT,"
	" status TEXT NOT NULL CHECK (status IN ('pending','approved','rejected',"
	" 'edited','superseded','dropped')),"
	" drop_reason TEXT,"
	" created_at TEXT NOT NULL,"
	" updated_at TEXT NOT NULL);"
	"CREATE INDEX qa_task ON qa(category, subtask, metric, status);"
	"CREATE INDEX qa_recording ON qa(recording_id, t_ns, id);"
	"CREATE TABLE reviews ("
	" id INTEGER PRIMARY KEY,"
	" qa_id TEXT NOT NULL REFERENCES qa(id),"
	" reviewer TEXT NOT NULL,"
	" decision TEXT NOT NULL CHECK (decision IN ('approve','reject','edit',"
	" 'flag','note','answer')),"
	" reason TEXT,"
	" blind_answer_index INTEGER,"
	" edit_before TEXT,"
	" edit_after TEXT,"
	" note TEXT,"
	" started_at TEXT,"
	" decided_at TEXT NOT NULL);"
	"CREATE INDEX reviews_qa ON reviews(qa_id, reviewer);"
	"CREATE INDEX reviews_reviewer ON reviews(reviewer);"
	"CREATE TABLE traces ("
	" qa_id TEXT PRIMARY KEY REFERENCES qa(id),"
	" trace_json TEXT NOT NULL);"
	"CREATE TABLE llm_cache ("
	" key TEXT PRIMARY KEY,"
	" request_json TEXT,"
	" response_json TEXT NOT NULL,"
	" status INTEGER NOT NULL,"
	" created_at TEXT NOT NULL,"
	" latency_ms INTEGER);"
	"CREATE TABLE drops ("
	" id INTEGER PRIMARY KEY,"
	" run_id INTEGER,"
	" recording_id TEXT NOT NULL,"
	" category TEXT NOT NULL,"
	" subtask TEXT NOT NULL,"
	" metric TEXT NOT NULL,"
	" reason TEXT NOT NULL,"
	" t_ns INTEGER,"
	" target TEXT);"
	"CREATE UNIQUE INDEX drops_candidate ON drops(recording_id, category,"
	" subtask, metric, reason, coalesce(t_ns, 0), coalesce(target, ''));",
};

_Static_assert(ARRAY_SIZE(store_migrations) == STORE_SCHEMA_VERSION,
	       "one migration per schema version");

/* ============================ Low-level helpers ============================ */

/* Formats an SQLite failure as "'path': what: sqlite message". */
static int db_fail(const struct store *st, const char *what)
{
	return err_set(ENG_EDB, "'%s': %s: %s", st->path, what,
		       st->db ? sqlite3_errmsg(st->db) : "out of memory");
}

static int db_exec(struct store *st, const char *sql, const char *what)
{
	if (sqlite3_exec(st->db, sql, NULL, NULL, NULL) != SQLITE_OK)
		return db_fail(st, what);
	return 0;
}

static int db_prepare(struct store *st, const char *sql, sqlite3_stmt **out,
		      const char *what)
{
	*out = NULL;
	if (sqlite3_prepare_v2(st->db, sql, -1, out, NULL) != SQLITE_OK) {
		sqlite3_finalize(*out);
		*out = NULL;
		return db_fail(st, what);
	}
	return 0;
}

/* Steps a statement that returns no row. */
static int db_done(struct store *st, sqlite3_stmt *s, const char *what)
{
	if (sqlite3_step(s) != SQLITE_DONE)
		return db_fail(st, what);
	return 0;
}

/*
 * Named-parameter binders. A name the statement does not use is skipped,
 * so one binder serves several statements. They return an SQLite code
 * (0 = SQLITE_OK), which lets callers chain them with ||.
 */
static int bind_text(sqlite3_stmt *s, const char *name, const char *v)
{
	int i = sqlite3_bind_parameter_index(s, name);

	if (!i)
		return SQLITE_OK;
	if (!v)
		return sqlite3_bind_null(s, i);
	return sqlite3_bind_text(s, i, v, -1, SQLITE_TRANSIENT);
}

static int bind_i64(sqlite3_stmt *s, const char *name, int64_t v)
{
	int i = sqlite3_bind_parameter_index(s, name);

	if (!i)
		return SQLITE_OK;
	return sqlite3_bind_int64(s, i, v);
}

/* Binds v, or NULL when v equals none. */
static int bind_i64_or_null(sqlite3_stmt *s, const char *name, int64_t v,
			    int64_t none)
{
	int i = sqlite3_bind_parameter_index(s, name);

	if (!i)
		return SQLITE_OK;
	if (v == none)
		return sqlite3_bind_null(s, i);
	return sqlite3_bind_int64(s, i, v);
}

static const char *col_text(sqlite3_stmt *s, int i)
{
	return (const char *)sqlite3_column_text(s, i);
}

static char *xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = malloc(n);

	if (p)
		memcpy(p, s, n);
	return p;
}

/*
 * Opens a unit of work for a write function: its own transaction outside
 * a batch, a savepoint inside one (so a failure undoes only this call).
 */
static int tx_enter(struct store *st, int *own)
{
	if (st->in_tx) {
		*own = 0;
		return db_exec(st, "SAVEPOINT store_op", "opening a savepoint");
	}
	*own = 1;
	return db_exec(st, "BEGIN IMMEDIATE", "beginning a transaction");
}

/* Ends what tx_enter() opened: commits when rc is 0, else undoes it. */
static int tx_leave(struct store *st, int own, int rc)
{
	if (!rc) {
		rc = db_exec(st, own ? "COMMIT" : "RELEASE store_op", "committing");
		if (!rc)
			return 0;
	}
	if (own) {
		if (!sqlite3_get_autocommit(st->db))
			sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
	} else {
		sqlite3_exec(st->db, "ROLLBACK TO store_op; RELEASE store_op",
			     NULL, NULL, NULL);
	}
	return rc;
}

/* 1 when s is NULL or parses as JSON (of the given cJSON type mask, if any). */
static int json_ok(const char *s, int type)
{
	cJSON *j;
	int ok;

	if (!s)
		return 1;
	j = cJSON_Parse(s);
	ok = j && (!type || (j->type & 0xff) == type);
	cJSON_Delete(j);
	return ok;
}

static int is_one_of(const char *s, const char *const *set, size_t n)
{
	size_t i;

	for (i = 0; s && i < n; i++)
		if (!strcmp(s, set[i]))
			return 1;
	return 0;
}

/* ========================= Opening and migrating ========================= */

static int pragma_int(struct store *st, const char *sql, int *v,
		      const char *what)
{
	sqlite3_stmt *s = NULL;
	int rc;

	rc = db_prepare(st, sql, &s, what);
	if (rc)
		goto out;
	if (sqlite3_step(s) != SQLITE_ROW) {
		rc = db_fail(st, what);
		goto out;
	}
	*v = sqlite3_column_int(s, 0);
out:
	sqlite3_finalize(s);
	return rc;
}

/* Runs the missing migrations, each in its own immediate transaction. */
static int store_migrate(struct store *st)
{
	char sql[96];
	int rc = 0, v = 0;

	for (;;) {
		rc = db_exec(st, "BEGIN IMMEDIATE", "beginning a migration");
		if (rc)
			return rc;
		/* read again inside the lock: another process may have migrated */
		rc = pragma_int(st, "PRAGMA user_version", &v, "reading the schema version");
		if (rc)
			goto fail;
		if (v >= STORE_SCHEMA_VERSION)
			break;
		if (sqlite3_exec(st->db, store_migrations[v], NULL, NULL, NULL) != SQLITE_OK) {
			rc = err_set(ENG_EDB, "'%s': migrating to schema version %d: %s",
				     st->path, v + 1, sqlite3_errmsg(st->db));
			goto fail;
		}
		snprintf(sql, sizeof(sql), "PRAGMA user_version = %d; PRAGMA application_id = %d",
			 v + 1, STORE_APP_ID);
		rc = db_exec(st, sql, "setting the schema version");
		if (rc)
			goto fail;
		rc = db_exec(st, "COMMIT", "committing a migration");
		if (rc)
			goto fail;
	}
	return db_exec(st, "COMMIT", "committing");
fail:
	if (!sqlite3_get_autocommit(st->db))
		sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}

/* Refuses files that are not (or not yet, or no longer) our stores. */
static int store_check_file(struct store *st)
{
	int rc, app = 0, v = 0, tables = 0;

	/* the first read of the header: a garbage file fails here */
	rc = pragma_int(st, "PRAGMA application_id", &app, "reading the database header");
	if (rc)
		return rc;
	if (app != 0 && app != STORE_APP_ID)
		return err_set(ENG_EDB, "'%s': a SQLite database of another program "
			       "(application_id 0x%08x)", st->path, (unsigned)app);
	rc = pragma_int(st, "PRAGMA user_version", &v, "reading the schema version");
	if (rc)
		return rc;
	if (v > STORE_SCHEMA_VERSION)
		return err_set(ENG_ERANGE, "'%s': schema version %d is newer than "
			       "version %d that this proxima knows; use a newer proxima",
			       st->path, v, STORE_SCHEMA_VERSION);
	rc = pragma_int(st, "SELECT count(*) FROM sqlite_master", &tables,
			"reading the schema");
	if (rc)
		return rc;
	if (app == 0 && tables > 0)
		return err_set(ENG_EDB, "'%s': a SQLite database that is not a proxima store",
			       st->path);
	if (st->readonly && v == 0)
		return err_set(ENG_EDB, "'%s': an empty database, not a proxima store",
			       st->path);
	if (st->readonly && v < STORE_SCHEMA_VERSION)
		return err_set(ENG_ERANGE, "'%s': schema version %d is older than version "
			       "%d; open it once read-write to migrate it",
			       st->path, v, STORE_SCHEMA_VERSION);
	return 0;
}

int store_open(const char *path, unsigned flags, struct store **out)
{
	struct store *st = NULL;
	struct stat sb;
	int rc = 0, oflags;

	if (!path || !*path || !out)
		return err_set(ENG_EINVAL, "store_open: no path");
	if ((flags & STORE_READONLY) && stat(path, &sb) != 0) {
		int e = errno;

		return err_set(e == ENOENT ? ENG_ENOENT : ENG_EIO, "'%s': %s", path,
			       strerror(e));
	}
	st = calloc(1, sizeof(*st));
	if (!st)
		return err_set(ENG_ENOMEM, "'%s': out of memory", path);
	st->path = xstrdup(path);
	if (!st->path) {
		rc = err_set(ENG_ENOMEM, "'%s': out of memory", path);
		goto out;
	}
	st->readonly = !!(flags & STORE_READONLY);
	oflags = SQLITE_OPEN_FULLMUTEX | (st->readonly ? SQLITE_OPEN_READONLY
				 : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
	if (sqlite3_open_v2(path, &st->db, oflags, NULL) != SQLITE_OK) {
		rc = db_fail(st, "cannot open");
		goto out;
	}
	sqlite3_extended_result_codes(st->db, 1);
	sqlite3_busy_timeout(st->db, STORE_BUSY_MS);
	rc = store_check_file(st);
	if (rc)
		goto out;
	if (!st->readonly) {
		/* journal_mode answers a row ("wal", or "memory" for :memory:) */
		rc = db_exec(st, "PRAGMA journal_mode = WAL", "switching to WAL mode");
		if (!rc)
			rc = db_exec(st, "PRAGMA synchronous = NORMAL", "setting synchronous");
	}
	if (!rc)
		rc = db_exec(st, "PRAGMA foreign_keys = ON", "enabling foreign keys");
	if (!rc && !st->readonly)
		rc = store_migrate(st);
out:
	if (rc) {
		store_close(st);
		return rc;
	}
	*out = st;
	return 0;
}

void store_close(struct store *st)
{
	if (!st)
		return;
	sqlite3_close_v2(st->db);
	free(st->path);
	free(st);
}

const char *store_path(const struct store *st)
{
	return st->path;
}

/* ============================== Transactions ============================== */

int store_begin(struct store *st)
{
	int rc;

	if (st->in_tx)
		return err_set(ENG_EINVAL, "'%s': store_begin: a batch is already open",
			       st->path);
	rc = db_exec(st, st->readonly ? "BEGIN" : "BEGIN IMMEDIATE",
		     "beginning a batch");
	if (!rc)
		st->in_tx = 1;
	return rc;
}

int store_commit(struct store *st)
{
	int rc;

	if (!st->in_tx)
		return err_set(ENG_EINVAL, "'%s': store_commit: no batch is open", st->path);
	if (sqlite3_get_autocommit(st->db)) {
		/* SQLite rolled the whole transaction back after an error */
		st->in_tx = 0;
		return err_set(ENG_EDB, "'%s': the batch was rolled back by an earlier error",
			       st->path);
	}
	rc = db_exec(st, "COMMIT", "committing a batch");
	if (rc) {
		if (!sqlite3_get_autocommit(st->db))
			sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
	}
	st->in_tx = 0;
	return rc;
}

int store_rollback(struct store *st)
{
	int rc = 0;

	if (!st->in_tx)
		return 0;
	st->in_tx = 0;
	if (!sqlite3_get_autocommit(st->db))
		rc = db_exec(st, "ROLLBACK", "rolling back a batch");
	return rc;
}

int store_integrity_check(struct store *st, char **result)
{
	sqlite3_stmt *s = NULL;
	struct buf b;
	int rc, step;

	buf_init(&b, 1 << 20);
	rc = db_prepare(st, "PRAGMA integrity_check", &s, "checking integrity");
	if (rc)
		goto out;
	while ((step = sqlite3_step(s)) == SQLITE_ROW) {
		const char *line = col_text(s, 0);

		if (b.len)
			rc = buf_adds(&b, "\n");
		if (!rc)
			rc = buf_adds(&b, line ? line : "");
		if (rc == ENG_ETOOBIG) {
			rc = 0; /* a long report is cut, not an error */
			break;
		}
		if (rc)
			goto out;
	}
	if (step != SQLITE_ROW && step != SQLITE_DONE) {
		rc = db_fail(st, "checking integrity");
		goto out;
	}
	*result = buf_detach(&b);
	if (!*result)
		rc = err_set(ENG_ENOMEM, "'%s': out of memory", st->path);
out:
	sqlite3_finalize(s);
	buf_release(&b);
	return rc;
}

/* ======================= Rows to cJSON ======================= */

enum col_kind { COL_TEXT, COL_INT, COL_JSON };

struct col_spec {
	const char *name;   /* JSON member name */
	enum col_kind kind; /* how the column becomes JSON */
};

/* Adds column i of the current row to obj under spec->name. */
static int col_to_json(sqlite3_stmt *s, int i, const struct col_spec *spec,
		       cJSON *obj)
{
	cJSON *v = NULL;

	if (sqlite3_column_type(s, i) == SQLITE_NULL) {
		v = cJSON_CreateNull();
	} else if (spec->kind == COL_INT) {
		v = cJSON_CreateNumber((double)sqlite3_column_int64(s, i));
	} else if (spec->kind == COL_JSON) {
		v = cJSON_Parse(col_text(s, i));
		if (!v) /* written by another program: hand it over as text */
			v = cJSON_CreateString(col_text(s, i));
	} else {
		v = cJSON_CreateString(col_text(s, i));
	}
	if (!v || !cJSON_AddItemToObject(obj, spec->name, v)) {
		cJSON_Delete(v);
		return ENG_ENOMEM;
	}
	return 0;
}

/* The current row as an object, columns first..first+n-1 named by specs. */
static int row_to_json(sqlite3_stmt *s, int first, const struct col_spec *specs,
		       size_t n, cJSON **out)
{
	cJSON *obj = cJSON_CreateObject();
	size_t i;
	int rc = 0;

	if (!obj)
		return ENG_ENOMEM;
	for (i = 0; i < n && !rc; i++)
		rc = col_to_json(s, first + (int)i, &specs[i], obj);
	if (rc) {
		cJSON_Delete(obj);
		return rc;
	}
	*out = obj;
	return 0;
}

static int oom(const struct store *st)
{
	return err_set(ENG_ENOMEM, "'%s': out of memory", st->path);
}

/* ========================= Recordings and runs ========================= */

int store_recording_put(struct store *st, const struct store_recording *rec)
{
	static const char sql[] =
		"INSERT INTO recordings (id, layout, root, t0_ns, t1_ns, summary_json, added_at)"
		" VALUES (:id, :layout, :root, :t0, :t1, :summary, " NOW_SQL ")"
		" ON CONFLICT(id) DO UPDATE SET layout = excluded.layout,"
		" root = excluded.root, t0_ns = excluded.t0_ns, t1_ns = excluded.t1_ns,"
		" summary_json = excluded.summary_json";
	sqlite3_stmt *s = NULL;
	int rc;

	if (!rec || !rec->id || !*rec->id)
		return err_set(ENG_EINVAL, "'%s': recording: missing id", st->path);
	if (!rec->layout || !*rec->layout)
		return err_set(ENG_EINVAL, "'%s': recording '%s': missing layout",
			       st->path, rec->id);
	if (!json_ok(rec->summary_json, 0))
		return err_set(ENG_EINVAL, "'%s': recording '%s': summary_json is not JSON",
			       st->path, rec->id);
	rc = db_prepare(st, sql, &s, "storing a recording");
	if (rc)
		goto out;
	if (bind_text(s, ":id", rec->id) || bind_text(s, ":layout", rec->layout) ||
	    bind_text(s, ":root", rec->root) || bind_i64(s, ":t0", rec->t0_ns) ||
	    bind_i64(s, ":t1", rec->t1_ns) || bind_text(s, ":summary", rec->summary_json)) {
		rc = db_fail(st, "storing a recording");
		goto out;
	}
	rc = db_done(st, s, "storing a recording");
out:
	sqlite3_finalize(s);
	return rc;
}

int store_recording_get(struct store *st, const char *id, cJSON **out)
{
	static const struct col_spec cols[] = {
		{ "id", COL_TEXT }, { "layout", COL_TEXT }, { "root", COL_TEXT },
		{ "t0_ns", COL_INT }, { "t1_ns", COL_INT }, { "summary", COL_JSON },
		{ "added_at", COL_TEXT },
	};
	sqlite3_stmt *s = NULL;
	int rc, step;

	if (!id)
		return err_set(ENG_EINVAL, "'%s': recording: missing id", st->path);
	rc = db_prepare(st, "SELECT id, layout, root, t0_ns, t1_ns, summary_json, added_at"
			" FROM recordings WHERE id = :id", &s, "reading a recording");
	if (rc)
		goto out;
	if (bind_text(s, ":id", id)) {
		rc = db_fail(st, "reading a recording");
		goto out;
	}
	step = sqlite3_step(s);
	if (step == SQLITE_DONE) {
		rc = err_set(ENG_ENOTFOUND, "'%s': no recording '%s'", st->path, id);
		goto out;
	}
	if (step != SQLITE_ROW) {
		rc = db_fail(st, "reading a recording");
		goto out;
	}
	rc = row_to_json(s, 0, cols, ARRAY_SIZE(cols), out);
	if (rc)
		rc = oom(st);
out:
	sqlite3_finalize(s);
	return rc;
}

/*
 * Every row of a parameterless query as a cJSON array of objects built
 * with row_to_json(cols). `what` names the work in error messages.
 */
static int list_rows(struct store *st, const char *sql, const struct col_spec *cols,
		     size_t ncols, const char *what, cJSON **out)
{
	sqlite3_stmt *s = NULL;
	cJSON *arr = cJSON_CreateArray(), *row = NULL;
	int rc, step;

	if (!arr)
		return oom(st);
	rc = db_prepare(st, sql, &s, what);
	if (rc)
		goto out;
	while ((step = sqlite3_step(s)) == SQLITE_ROW) {
		rc = row_to_json(s, 0, cols, ncols, &row);
		if (rc) {
			rc = oom(st);
			goto out;
		}
		cJSON_AddItemToArray(arr, row);
	}
	if (step != SQLITE_DONE)
		rc = db_fail(st, what);
out:
	sqlite3_finalize(s);
	if (rc) {
		cJSON_Delete(arr);
		return rc;
	}
	*out = arr;
	return 0;
}

int store_recording_list(struct store *st, cJSON **out)
{
	static const struct col_spec cols[] = {
		{ "id", COL_TEXT }, { "layout", COL_TEXT }, { "root", COL_TEXT },
		{ "t0_ns", COL_INT }, { "t1_ns", COL_INT },
	};

	return list_rows(st, "SELECT id, layout, root, t0_ns, t1_ns FROM recordings ORDER BY id",
			 cols, ARRAY_SIZE(cols), "listing recordings", out);
}

int store_run_begin(struct store *st, const char *config_json, const char *brain,
		    const char *model, int64_t seed, const char *engine_version,
		    int64_t *run_id)
{
	static const char sql[] =
		"INSERT INTO runs (started_at, config_json, brain, model, seed,"
		" engine_version, status) VALUES (" NOW_SQL ", :config, :brain, :model,"
		" :seed, :version, 'running')";
	sqlite3_stmt *s = NULL;
	int rc;

	if (!json_ok(config_json, 0))
		return err_set(ENG_EINVAL, "'%s': run: config_json is not JSON", st->path);
	rc = db_prepare(st, sql, &s, "starting a run");
	if (rc)
		goto out;
	if (bind_text(s, ":config", config_json) || bind_text(s, ":brain", brain) ||
	    bind_text(s, ":model", model) || bind_i64(s, ":seed", seed) ||
	    bind_text(s, ":version", engine_version)) {
		rc = db_fail(st, "starting a run");
		goto out;
	}
	rc = db_done(st, s, "starting a run");
	if (!rc && run_id)
		*run_id = sqlite3_last_insert_rowid(st->db);
out:
	sqlite3_finalize(s);
	return rc;
}

int store_run_finish(struct store *st, int64_t run_id, const char *status,
		     const char *counts_json)
{
	static const char sql[] =
		"UPDATE runs SET finished_at = " NOW_SQL ", status = :status,"
		" counts_json = :counts WHERE id = :id";
	sqlite3_stmt *s = NULL;
	int rc;

	if (!status || !*status)
		return err_set(ENG_EINVAL, "'%s': run %lld: missing status", st->path,
			       (long long)run_id);
	if (!json_ok(counts_json, 0))
		return err_set(ENG_EINVAL, "'%s': run %lld: counts_json is not JSON",
			       st->path, (long long)run_id);
	rc = db_prepare(st, sql, &s, "finishing a run");
	if (rc)
		goto out;
	if (bind_text(s, ":status", status) || bind_text(s, ":counts", counts_json) ||
	    bind_i64(s, ":id", run_id)) {
		rc = db_fail(st, "finishing a run");
		goto out;
	}
	rc = db_done(st, s, "finishing a run");
	if (!rc && sqlite3_changes(st->db) == 0)
		rc = err_set(ENG_ENOTFOUND, "'%s': no run %lld", st->path, (long long)run_id);
out:
	sqlite3_finalize(s);
	return rc;
}

int store_run_list_running(struct store *st, cJSON **out)
{
	static const struct col_spec cols[] = {
		{ "id", COL_INT }, { "config", COL_JSON }, { "started_at", COL_TEXT },
	};

	return list_rows(st, "SELECT id, config_json, started_at FROM runs WHERE status = 'running'"
			 " ORDER BY id", cols, ARRAY_SIZE(cols), "listing running runs", out);
}

int store_run_last_generate(struct store *st, char **config_json, int64_t *seed)
{
	sqlite3_stmt *s = NULL;
	int rc, step;

	rc = db_prepare(st, "SELECT config_json, seed FROM runs WHERE config_json IS NOT NULL"
			" AND json_valid(config_json)"
			" AND coalesce(json_extract(config_json, '$.regenerate'), 0) = 0"
			" ORDER BY id DESC LIMIT 1", &s, "reading the last run");
	if (rc)
		goto out;
	step = sqlite3_step(s);
	if (step == SQLITE_DONE) {
		rc = err_set(ENG_ENOTFOUND, "'%s': no generate run recorded", st->path);
		goto out;
	}
	if (step != SQLITE_ROW) {
		rc = db_fail(st, "reading the last run");
		goto out;
	}
	*config_json = strdup((const char *)sqlite3_column_text(s, 0));
	if (!*config_json) {
		rc = oom(st);
		goto out;
	}
	*seed = sqlite3_column_int64(s, 1);
out:
	sqlite3_finalize(s);
	return rc;
}

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

static int qa_check(const struct store *st, const struct store_qa *qa)
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
	if (!is_one_of(qa->metric, metrics, ARRAY_SIZE(metrics)))
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
	if (!json_ok(qa->frames_json, cJSON_Array))
		return qa_invalid(st, qa->id, "frames_json is not a JSON array");
	if (!json_ok(qa->answer_json, 0))
		return qa_invalid(st, qa->id, "answer_json is not JSON");
	if (!json_ok(qa->gt_json, 0))
		return qa_invalid(st, qa->id, "gt_json is not JSON");
	if (!json_ok(qa->qc_json, 0))
		return qa_invalid(st, qa->id, "qc_json is not JSON");
	if (!json_ok(qa->trace_json, 0))
		return qa_invalid(st, qa->id, "trace_json is not JSON");
	return 0;
}

static int qa_bind(sqlite3_stmt *s, const struct store_qa *qa)
{
	return bind_text(s, ":id", qa->id) ||
	       bind_i64_or_null(s, ":run_id", qa->run_id, 0) ||
	       bind_text(s, ":recording_id", qa->recording_id) ||
	       bind_text(s, ":category", qa->category) ||
	       bind_text(s, ":subtask", qa->subtask) ||
	       bind_text(s, ":metric", qa->metric) ||
	       bind_i64(s, ":t_ns", qa->t_ns) ||
	       bind_i64(s, ":clip_start_ns", qa->clip_start_ns) ||
	       bind_i64(s, ":clip_end_ns", qa->clip_end_ns) ||
	       bind_text(s, ":frames_json", qa->frames_json) ||
	       bind_text(s, ":target", qa->target) ||
	       bind_text(s, ":question", qa->question) ||
	       bind_text(s, ":options_json", qa->options_json) ||
	       bind_i64_or_null(s, ":answer_index", qa->answer_index, -1) ||
	       bind_text(s, ":answer_json", qa->answer_json) ||
	       bind_text(s, ":gt_json", qa->gt_json) ||
	       bind_text(s, ":qc_json", qa->qc_json) ||
	       bind_text(s, ":status", qa->status ? qa->status : "pending") ||
	       bind_text(s, ":drop_reason", qa->drop_reason);
}

/* Runs a one-row lookup "SELECT ... WHERE x = :key"; *found = 0 or 1. */
static int exists(struct store *st, const char *sql, const char *key_text,
		  int64_t key_int, int *found, const char *what)
{
	sqlite3_stmt *s = NULL;
	int rc, step;

	rc = db_prepare(st, sql, &s, what);
	if (rc)
		goto out;
	if (key_text ? bind_text(s, ":key", key_text) : bind_i64(s, ":key", key_int)) {
		rc = db_fail(st, what);
		goto out;
	}
	step = sqlite3_step(s);
	if (step != SQLITE_ROW && step != SQLITE_DONE) {
		rc = db_fail(st, what);
		goto out;
	}
	*found = step == SQLITE_ROW;
out:
	sqlite3_finalize(s);
	return rc;
}

/* The status of QA id in out (caller's buffer), or "" when there is none. */
static int qa_status(struct store *st, const char *id, char *out, size_t n)
{
	sqlite3_stmt *s = NULL;
	int rc, step;

	out[0] = '\0';
	rc = db_prepare(st, "SELECT status FROM qa WHERE id = :id", &s, "reading a qa");
	if (rc)
		goto out;
	if (bind_text(s, ":id", id)) {
		rc = db_fail(st, "reading a qa");
		goto out;
	}
	step = sqlite3_step(s);
	if (step == SQLITE_ROW)
		snprintf(out, n, "%s", col_text(s, 0) ? col_text(s, 0) : "");
	else if (step != SQLITE_DONE)
		rc = db_fail(st, "reading a qa");
out:
	sqlite3_finalize(s);
	return rc;
}

/* Writes (trace_json set) or removes (NULL) the trace of a QA. */
static int trace_write(struct store *st, const char *qa_id, const char *trace_json)
{
	sqlite3_stmt *s = NULL;
	int rc;

	rc = db_prepare(st, trace_json
			? "INSERT INTO traces (qa_id, trace_json) VALUES (:id, :trace)"
			  " ON CONFLICT(qa_id) DO UPDATE SET trace_json = excluded.trace_json"
			: "DELETE FROM traces WHERE qa_id = :id", &s, "storing a trace");
	if (rc)
		goto out;
	if (bind_text(s, ":id", qa_id) || bind_text(s, ":trace", trace_json)) {
		rc = db_fail(st, "storing a trace");
		goto out;
	}
	rc = db_done(st, s, "storing a trace");
out:
	sqlite3_finalize(s);
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
	rc = tx_enter(st, &own);
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
	rc = db_prepare(st, status[0] ? replace_sql : insert_sql, &s, "storing a qa");
	if (rc)
		goto out;
	if (qa_bind(s, qa)) {
		rc = db_fail(st, "storing a qa");
		goto out;
	}
	rc = db_done(st, s, "storing a qa");
	if (rc)
		goto out;
	if (qa->trace_json || status[0])
		rc = trace_write(st, qa->id, qa->trace_json);
	if (rc)
		goto out;
	result = status[0] ? STORE_PUT_REPLACED : STORE_PUT_NEW;
out:
	sqlite3_finalize(s);
	rc = tx_leave(st, own, rc);
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
	rc = tx_enter(st, &own);
	if (rc)
		return rc;
	rc = db_prepare(st, mark_sql, &s, "superseding qas");
	if (rc)
		goto out;
	if (bind_text(s, ":category", category) || bind_text(s, ":recording", recording_id)) {
		rc = db_fail(st, "superseding qas");
		goto out;
	}
	rc = db_done(st, s, "superseding qas");
	if (rc)
		goto out;
	marked = sqlite3_changes(st->db);
	sqlite3_finalize(s);
	rc = db_prepare(st, drops_sql, &s, "clearing drops");
	if (rc)
		goto out;
	if (bind_text(s, ":category", category) || bind_text(s, ":recording", recording_id)) {
		rc = db_fail(st, "clearing drops");
		goto out;
	}
	rc = db_done(st, s, "clearing drops");
out:
	sqlite3_finalize(s);
	rc = tx_leave(st, own, rc);
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
 * The filter as SQL over named parameters; a NULL parameter matches all,
 * and the list parameters match any of their comma-separated elements.
 */
#define QA_FILTER \
	" (:category IS NULL OR instr(',' || :category || ',', ',' || qa.category || ',') > 0)" \
	" AND (:subtask IS NULL OR instr(',' || :subtask || ',', ',' || qa.subtask || ',') > 0)" \
	" AND (:metric IS NULL OR instr(',' || :metric || ',', ',' || qa.metric || ',') > 0)" \
	" AND (:status IS NULL OR instr(',' || :status || ',', ',' || qa.status || ',') > 0)" \
	" AND (:recording IS NULL OR qa.recording_id = :recording)" \
	" AND (:reviewer IS NULL OR EXISTS (SELECT 1 FROM reviews r" \
	"  WHERE r.qa_id = qa.id AND r.reviewer = :reviewer))" \
	" AND (:not_reviewer IS NULL OR NOT EXISTS (SELECT 1 FROM reviews r" \
	"  WHERE r.qa_id = qa.id AND r.reviewer = :not_reviewer))"

#define QA_ORDER " ORDER BY qa.recording_id, qa.t_ns, qa.id"

static int filter_bind(sqlite3_stmt *s, const struct store_filter *f)
{
	static const struct store_filter none;

	if (!f)
		f = &none;
	return bind_text(s, ":category", f->category) ||
	       bind_text(s, ":subtask", f->subtask) ||
	       bind_text(s, ":metric", f->metric) ||
	       bind_text(s, ":status", f->status) ||
	       bind_text(s, ":recording", f->recording_id) ||
	       bind_text(s, ":reviewer", f->reviewer) ||
	       bind_text(s, ":not_reviewer", f->not_reviewer) ||
	       bind_i64(s, ":limit", f->limit > 0 ? f->limit : -1) ||
	       bind_i64(s, ":offset", f->offset);
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
	};
	sqlite3_stmt *s = NULL;
	cJSON *arr = cJSON_CreateArray(), *row = NULL;
	int rc, step;

	if (!arr)
		return oom(st);
	rc = db_prepare(st, "SELECT id, reviewer, decision, reason, blind_answer_index,"
			" edit_before, edit_after, note, started_at, decided_at,"
			" CAST(round((julianday(decided_at) - julianday(started_at))"
			" * 86400000.0) AS INTEGER)"
			" FROM reviews WHERE qa_id = :id ORDER BY id", &s, "reading reviews");
	if (rc)
		goto out;
	if (bind_text(s, ":id", id)) {
		rc = db_fail(st, "reading reviews");
		goto out;
	}
	while ((step = sqlite3_step(s)) == SQLITE_ROW) {
		rc = row_to_json(s, 0, cols, ARRAY_SIZE(cols), &row);
		if (rc || !cJSON_AddItemToArray(arr, row)) {
			if (!rc)
				cJSON_Delete(row);
			rc = oom(st);
			goto out;
		}
	}
	if (step != SQLITE_DONE)
		rc = db_fail(st, "reading reviews");
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
	rc = db_prepare(st, (flags & STORE_GET_TRACE)
			? "SELECT " QA_COLS ", (SELECT trace_json FROM traces t"
			  " WHERE t.qa_id = qa.id) FROM qa WHERE qa.id = :id"
			: "SELECT " QA_COLS " FROM qa WHERE qa.id = :id", &s, "reading a qa");
	if (rc)
		goto out;
	if (bind_text(s, ":id", id)) {
		rc = db_fail(st, "reading a qa");
		goto out;
	}
	step = sqlite3_step(s);
	if (step == SQLITE_DONE) {
		rc = err_set(ENG_ENOTFOUND, "'%s': no qa '%s'", st->path, id);
		goto out;
	}
	if (step != SQLITE_ROW) {
		rc = db_fail(st, "reading a qa");
		goto out;
	}
	rc = row_to_json(s, 0, qa_specs, ncols, &obj);
	if (rc) {
		rc = oom(st);
		goto out;
	}
	if (flags & STORE_GET_REVIEWS) {
		rc = reviews_json(st, id, &revs);
		if (rc)
			goto out;
		if (!cJSON_AddItemToObject(obj, "reviews", revs)) {
			cJSON_Delete(revs);
			rc = oom(st);
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

	rc = db_prepare(st, "SELECT count(*) FROM qa WHERE" QA_FILTER, &s, "counting qas");
	if (rc)
		goto out;
	if (filter_bind(s, f)) {
		rc = db_fail(st, "counting qas");
		goto out;
	}
	if (sqlite3_step(s) != SQLITE_ROW) {
		rc = db_fail(st, "counting qas");
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
		rc = db_exec(st, "BEGIN", "listing qas");
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
		rc = oom(st);
		goto out;
	}
	items = cJSON_AddArrayToObject(res, "items");
	if (!items) {
		rc = oom(st);
		goto out;
	}
	rc = db_prepare(st, "SELECT " QA_COLS " FROM qa WHERE" QA_FILTER QA_ORDER
			" LIMIT :limit OFFSET :offset", &s, "listing qas");
	if (rc)
		goto out;
	if (filter_bind(s, filter)) {
		rc = db_fail(st, "listing qas");
		goto out;
	}
	while ((step = sqlite3_step(s)) == SQLITE_ROW) {
		rc = row_to_json(s, 0, qa_specs, QC_TRACE, &row);
		if (rc || !cJSON_AddItemToArray(items, row)) {
			if (!rc)
				cJSON_Delete(row);
			rc = oom(st);
			goto out;
		}
	}
	if (step != SQLITE_DONE)
		rc = db_fail(st, "listing qas");
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
		"SELECT qa.id FROM qa WHERE" QA_FILTER
		" AND (qa.recording_id, qa.t_ns, qa.id) < (:k_rec, :k_t, :k_id)"
		" ORDER BY qa.recording_id DESC, qa.t_ns DESC, qa.id DESC LIMIT 1";
	static const char next_sql[] =
		"SELECT qa.id FROM qa WHERE" QA_FILTER
		" AND (qa.recording_id, qa.t_ns, qa.id) > (:k_rec, :k_t, :k_id)"
		QA_ORDER " LIMIT 1";
	sqlite3_stmt *s = NULL;
	char *found = NULL;
	int rc, step;

	rc = db_prepare(st, dir < 0 ? prev_sql : next_sql, &s, "finding neighbours");
	if (rc)
		goto out;
	if (filter_bind(s, f) || bind_text(s, ":k_rec", rec) || bind_i64(s, ":k_t", t) ||
	    bind_text(s, ":k_id", id)) {
		rc = db_fail(st, "finding neighbours");
		goto out;
	}
	step = sqlite3_step(s);
	if (step == SQLITE_ROW) {
		found = xstrdup(col_text(s, 0));
		if (!found)
			rc = oom(st);
	} else if (step != SQLITE_DONE) {
		rc = db_fail(st, "finding neighbours");
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
	rc = db_prepare(st, "SELECT recording_id, t_ns FROM qa WHERE id = :id", &s,
			"reading a qa");
	if (rc)
		goto out;
	if (bind_text(s, ":id", id)) {
		rc = db_fail(st, "reading a qa");
		goto out;
	}
	step = sqlite3_step(s);
	if (step == SQLITE_DONE) {
		rc = err_set(ENG_ENOTFOUND, "'%s': no qa '%s'", st->path, id);
		goto out;
	}
	if (step != SQLITE_ROW) {
		rc = db_fail(st, "reading a qa");
		goto out;
	}
	rec = xstrdup(col_text(s, 0));
	t = sqlite3_column_int64(s, 1);
	if (!rec) {
		rc = oom(st);
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
	qa->id = col_text(s, QC_ID);
	qa->run_id = sqlite3_column_int64(s, QC_RUN);
	qa->recording_id = col_text(s, QC_REC);
	qa->category = col_text(s, QC_CAT);
	qa->subtask = col_text(s, QC_SUB);
	qa->metric = col_text(s, QC_METRIC);
	qa->t_ns = sqlite3_column_int64(s, QC_T);
	qa->clip_start_ns = sqlite3_column_int64(s, QC_CLIP0);
	qa->clip_end_ns = sqlite3_column_int64(s, QC_CLIP1);
	qa->frames_json = col_text(s, QC_FRAMES);
	qa->target = col_text(s, QC_TARGET);
	qa->question = col_text(s, QC_QUESTION);
	qa->question_edited = col_text(s, QC_EDITED);
	qa->options_json = col_text(s, QC_OPTIONS);
	qa->answer_index = sqlite3_column_type(s, QC_ANSWER_INDEX) == SQLITE_NULL
		? -1 : sqlite3_column_int(s, QC_ANSWER_INDEX);
	qa->answer_json = col_text(s, QC_ANSWER);
	qa->gt_json = col_text(s, QC_GT);
	qa->qc_json = col_text(s, QC_QC);
	qa->status = col_text(s, QC_STATUS);
	qa->drop_reason = col_text(s, QC_DROP);
	qa->created_at = col_text(s, QC_CREATED);
	qa->updated_at = col_text(s, QC_UPDATED);
	qa->trace_json = with_trace ? col_text(s, QC_TRACE) : NULL;
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
	rc = db_prepare(st, with_trace
			? "SELECT " QA_COLS ", (SELECT trace_json FROM traces t"
			  " WHERE t.qa_id = qa.id) FROM qa WHERE" QA_FILTER QA_ORDER
			  " LIMIT :limit OFFSET :offset"
			: "SELECT " QA_COLS ", NULL FROM qa WHERE" QA_FILTER QA_ORDER
			  " LIMIT :limit OFFSET :offset", &s, "reading qas");
	if (rc)
		goto out;
	if (filter_bind(s, filter)) {
		rc = db_fail(st, "reading qas");
		goto out;
	}
	while ((step = sqlite3_step(s)) == SQLITE_ROW) {
		qa_from_row(s, with_trace, &qa);
		rc = cb(&qa, ctx);
		if (rc)
			goto out;
	}
	if (step != SQLITE_DONE)
		rc = db_fail(st, "reading qas");
out:
	sqlite3_finalize(s);
	return rc;
}

/* ============================== Drops ============================== */

int store_drop_put(struct store *st, const struct store_drop *d)
{
	static const char *const metrics[] = { "approx", "relative" };
	static const char sql[] =
		"INSERT OR IGNORE INTO drops (run_id, recording_id, category, subtask,"
		" metric, reason, t_ns, target) VALUES (:run_id, :recording_id,"
		" :category, :subtask, :metric, :reason, :t_ns, :target)";
	sqlite3_stmt *s = NULL;
	int rc;

	if (!d || !d->recording_id || !*d->recording_id || !d->reason || !*d->reason)
		return err_set(ENG_EINVAL, "'%s': drop: missing recording_id or reason", st->path);
	if (!name_ok(d->category) || !name_ok(d->subtask))
		return err_set(ENG_EINVAL, "'%s': drop: category or subtask missing or holds"
			       " '.', ',' or '/'", st->path);
	if (!is_one_of(d->metric, metrics, ARRAY_SIZE(metrics)))
		return err_set(ENG_EINVAL, "'%s': drop: metric must be 'approx' or 'relative'",
			       st->path);
	rc = db_prepare(st, sql, &s, "storing a drop");
	if (rc)
		goto out;
	if (bind_i64_or_null(s, ":run_id", d->run_id, 0) ||
	    bind_text(s, ":recording_id", d->recording_id) ||
	    bind_text(s, ":category", d->category) || bind_text(s, ":subtask", d->subtask) ||
	    bind_text(s, ":metric", d->metric) || bind_text(s, ":reason", d->reason) ||
	    bind_i64(s, ":t_ns", d->t_ns) || bind_text(s, ":target", d->target)) {
		rc = db_fail(st, "storing a drop");
		goto out;
	}
	rc = db_done(st, s, "storing a drop");
out:
	sqlite3_finalize(s);
	return rc;
}

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
	if (!is_one_of(r->decision, decisions, ARRAY_SIZE(decisions)))
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
	rc = tx_enter(st, &own);
	if (rc)
		return rc;
	rc = db_prepare(st, "SELECT status, coalesce(question_edited, question),"
			" json_array_length(options_json) FROM qa WHERE id = :qa", &s,
			"reading a qa");
	if (rc)
		goto out;
	if (bind_text(s, ":qa", r->qa_id)) {
		rc = db_fail(st, "reading a qa");
		goto out;
	}
	step = sqlite3_step(s);
	if (step == SQLITE_DONE) {
		rc = err_set(ENG_ENOTFOUND, "'%s': no qa '%s'", st->path, r->qa_id);
		goto out;
	}
	if (step != SQLITE_ROW) {
		rc = db_fail(st, "reading a qa");
		goto out;
	}
	snprintf(status, sizeof(status), "%s", col_text(s, 0));
	current = xstrdup(col_text(s, 1));
	noptions = sqlite3_column_int(s, 2);
	sqlite3_finalize(s);
	s = NULL;
	if (!current) {
		rc = oom(st);
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
	rc = db_prepare(st, insert_sql, &s, "storing a review");
	if (rc)
		goto out;
	if (bind_text(s, ":qa", r->qa_id) || bind_text(s, ":reviewer", r->reviewer) ||
	    bind_text(s, ":decision", r->decision) || bind_text(s, ":reason", r->reason) ||
	    bind_i64_or_null(s, ":blind", r->blind_answer_index, -1) ||
	    bind_text(s, ":before", !strcmp(r->decision, "edit") ? r->edit_before : NULL) ||
	    bind_text(s, ":current", !strcmp(r->decision, "edit") ? current : NULL) ||
	    bind_text(s, ":after", r->edit_after) || bind_text(s, ":note", r->note) ||
	    bind_i64_or_null(s, ":started", r->started_ms, 0) ||
	    bind_i64_or_null(s, ":decided", r->decided_ms, 0)) {
		rc = db_fail(st, "storing a review");
		goto out;
	}
	rc = db_done(st, s, "storing a review");
	if (rc)
		goto out;
	rid = sqlite3_last_insert_rowid(st->db);
	sqlite3_finalize(s);
	s = NULL;
	if (!new_status)
		goto out;
	rc = db_prepare(st, status_sql, &s, "updating a qa status");
	if (rc)
		goto out;
	if (bind_text(s, ":status", new_status) || bind_text(s, ":qa", r->qa_id) ||
	    bind_text(s, ":edited", !strcmp(r->decision, "edit") ? r->edit_after : NULL)) {
		rc = db_fail(st, "updating a qa status");
		goto out;
	}
	rc = db_done(st, s, "updating a qa status");
out:
	sqlite3_finalize(s);
	free(current);
	rc = tx_leave(st, own, rc);
	if (!rc && review_id)
		*review_id = rid;
	return rc;
}

/* ======================== Statistics: the maths ======================== */

/*
 * Regularized lower incomplete gamma P(a, x) by its power series
 * x^a e^-x / Gamma(a+1) * sum x^n / ((a+1)...(a+n)); converges fast for
 * x < a + 1.
 */
static double gamma_p_series(double a, double x)
{
	double sum = 1.0 / a, term = sum, ap = a;
	int sign, n;

	for (n = 1; n < 10000; n++) {
		ap += 1.0;
		term *= x / ap;
		sum += term;
		if (fabs(term) < fabs(sum) * 1e-16)
			break;
	}
	return sum * exp(-x + a * log(x) - lgamma_r(a, &sign));
}

/*
 * Regularized upper incomplete gamma Q(a, x) by its continued fraction
 * (modified Lentz); converges fast for x >= a + 1.
 */
static double gamma_q_cf(double a, double x)
{
	const double tiny = 1e-300;
	double b = x + 1.0 - a, c = 1.0 / tiny, d = 1.0 / b, h = d, an, del;
	int sign, i;

	for (i = 1; i < 10000; i++) {
		an = -i * (i - a);
		b += 2.0;
		d = an * d + b;
		if (fabs(d) < tiny)
			d = tiny;
		c = b + an / c;
		if (fabs(c) < tiny)
			c = tiny;
		d = 1.0 / d;
		del = d * c;
		h *= del;
		if (fabs(del - 1.0) < 1e-16)
			break;
	}
	return exp(-x + a * log(x) - lgamma_r(a, &sign)) * h;
}

double store_chi2_sf(double x, double df)
{
	double a = df / 2.0, hx = x / 2.0, q;

	if (isnan(x) || isnan(df) || df <= 0)
		return NO_NUM;
	if (x <= 0)
		return 1.0;
	if (isinf(x))
		return 0.0;
	q = hx < a + 1.0 ? 1.0 - gamma_p_series(a, hx) : gamma_q_cf(a, hx);
	if (q < 0)
		q = 0;
	if (q > 1)
		q = 1;
	return q;
}

int store_kappa(const int64_t *table, int k, double *kappa)
{
	double n = 0, agree = 0, pe = 0, po, row, col;
	int i, j;

	if (!table || k < 1)
		return err_set(ENG_EINVAL, "store_kappa: no table");
	for (i = 0; i < k * k; i++) {
		if (table[i] < 0)
			return err_set(ENG_EINVAL, "store_kappa: negative count");
		n += (double)table[i];
	}
	if (n == 0)
		return err_set(ENG_EINVAL, "store_kappa: empty table");
	for (i = 0; i < k; i++) {
		agree += (double)table[i * k + i];
		row = col = 0;
		for (j = 0; j < k; j++) {
			row += (double)table[i * k + j];
			col += (double)table[j * k + i];
		}
		pe += (row / n) * (col / n);
	}
	po = agree / n;
	if (pe >= 1.0)
		return err_set(ENG_ERANGE, "store_kappa: undefined (chance agreement is 1)");
	*kappa = (po - pe) / (1.0 - pe);
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Median of v[0..n-1] (sorted in place); NAN when n is 0. */
static double median(double *v, size_t n)
{
	if (!n)
		return NO_NUM;
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

/* ======================== Statistics: the report ======================== */

/* Adds a number, or null when v is NAN. Returns 0 or ENG_ENOMEM. */
static int add_num(cJSON *obj, const char *name, double v)
{
	cJSON *item = isnan(v) ? cJSON_CreateNull() : cJSON_CreateNumber(v);

	if (!item || !cJSON_AddItemToObject(obj, name, item)) {
		cJSON_Delete(item);
		return ENG_ENOMEM;
	}
	return 0;
}

/* Adds n to the number member name of obj (which must exist). */
static void add_to(cJSON *obj, const char *name, double n)
{
	cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, name);

	if (item)
		cJSON_SetNumberHelper(item, item->valuedouble + n);
}

/* The group object for (cat, sub, metric) in groups, made with zeros if new. */
static cJSON *group_get(cJSON *groups, const char *cat, const char *sub,
			const char *metric)
{
	char key[256];
	cJSON *g;
	size_t i;
	int rc = 0;

	snprintf(key, sizeof(key), "%s.%s/%s", cat ? cat : "", sub ? sub : "",
		 metric ? metric : "");
	g = cJSON_GetObjectItemCaseSensitive(groups, key);
	if (g)
		return g;
	g = cJSON_CreateObject();
	if (!g)
		return NULL;
	rc |= add_num(g, "total", 0);
	for (i = 0; i < ARRAY_SIZE(qa_statuses); i++)
		rc |= add_num(g, qa_statuses[i], 0);
	rc |= add_num(g, "acceptance", NO_NUM);
	rc |= add_num(g, "mean_z", NO_NUM);
	rc |= add_num(g, "z_n", 0);
	if (!rc && !cJSON_AddArrayToObject(g, "letters"))
		rc = ENG_ENOMEM;
	rc |= add_num(g, "drops", 0);
	if (rc || !cJSON_AddItemToObject(groups, key, g)) {
		cJSON_Delete(g);
		return NULL;
	}
	return g;
}

static void set_num(cJSON *obj, const char *name, double v)
{
	cJSON *item = isnan(v) ? cJSON_CreateNull() : cJSON_CreateNumber(v);

	if (item && !cJSON_ReplaceItemInObjectCaseSensitive(obj, name, item))
		cJSON_Delete(item);
}

/* {"options": k, "n", "counts": {"A": ..}, "chi2", "df", "p"} appended to arr. */
static int letters_add(cJSON *arr, int k, const int64_t *counts)
{
	cJSON *e = cJSON_CreateObject(), *c;
	double n = 0, chi2 = 0, expect;
	char letter[2] = "A";
	int i, rc = 0;

	if (!e)
		return ENG_ENOMEM;
	for (i = 0; i < k; i++)
		n += (double)counts[i];
	expect = n / k;
	for (i = 0; i < k; i++)
		chi2 += ((double)counts[i] - expect) * ((double)counts[i] - expect) / expect;
	rc |= add_num(e, "options", k);
	rc |= add_num(e, "n", n);
	c = cJSON_AddObjectToObject(e, "counts");
	for (i = 0; c && i < k; i++) {
		letter[0] = (char)('A' + i);
		rc |= add_num(c, letter, (double)counts[i]);
	}
	rc |= add_num(e, "chi2", chi2);
	rc |= add_num(e, "df", k - 1);
	rc |= add_num(e, "p", store_chi2_sf(chi2, k - 1));
	if (!c || rc || !cJSON_AddItemToArray(arr, e)) {
		cJSON_Delete(e);
		return ENG_ENOMEM;
	}
	return 0;
}

/* Statuses whose QAs make up the candidate dataset (letters, z). */
#define LIVE_SQL "status IN ('pending', 'approved', 'edited')"

/* groups + by_status + total from one GROUP BY. */
static int stats_counts(struct store *st, cJSON *res, cJSON *groups)
{
	sqlite3_stmt *s = NULL;
	cJSON *by_status, *g;
	double total = 0;
	size_t i;
	int rc, step;

	by_status = cJSON_AddObjectToObject(res, "by_status");
	if (!by_status)
		return oom(st);
	for (i = 0; i < ARRAY_SIZE(qa_statuses); i++)
		if (add_num(by_status, qa_statuses[i], 0))
			return oom(st);
	rc = db_prepare(st, "SELECT category, subtask, metric, status, count(*) FROM qa"
			" GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4", &s, "counting qas");
	if (rc)
		goto out;
	while ((step = sqlite3_step(s)) == SQLITE_ROW) {
		double n = (double)sqlite3_column_int64(s, 4);
		const char *status = col_text(s, 3);

		g = group_get(groups, col_text(s, 0), col_text(s, 1), col_text(s, 2));
		if (!g) {
			rc = oom(st);
			goto out;
		}
		add_to(g, "total", n);
		add_to(g, status, n);
		add_to(by_status, status, n);
		total += n;
	}
	if (step != SQLITE_DONE) {
		rc = db_fail(st, "counting qas");
		goto out;
	}
	cJSON_ArrayForEach(g, groups) {
		double acc = cJSON_GetObjectItem(g, "approved")->valuedouble +
			     cJSON_GetObjectItem(g, "edited")->valuedouble;
		double rej = cJSON_GetObjectItem(g, "rejected")->valuedouble;

		set_num(g, "acceptance", acc + rej > 0 ? acc / (acc + rej) : NO_NUM);
	}
	if (add_num(res, "total", total))
		rc = oom(st);
out:
	sqlite3_finalize(s);
	return rc;
}

/* Answer-letter balance per group and per option count. */
static int stats_letters(struct store *st, cJSON *res, cJSON *groups)
{
	sqlite3_stmt *s = NULL;
	int64_t all[STORE_MAX_OPTIONS + 1][STORE_MAX_OPTIONS];
	int64_t cur[STORE_MAX_OPTIONS];
	char cur_key[256] = "", key[256];
	cJSON *letters, *g = NULL;
	int rc, step, k, cur_k = 0, i;

	memset(all, 0, sizeof(all));
	memset(cur, 0, sizeof(cur));
	letters = cJSON_AddArrayToObject(res, "letters");
	if (!letters)
		return oom(st);
	rc = db_prepare(st, "SELECT category, subtask, metric, json_array_length(options_json),"
			" answer_index, count(*) FROM qa WHERE " LIVE_SQL
			" AND answer_index IS NOT NULL AND json_valid(options_json)"
			" GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5", &s, "counting letters");
	if (rc)
		goto out;
	for (;;) {
		step = sqlite3_step(s);
		if (step != SQLITE_ROW && step != SQLITE_DONE) {
			rc = db_fail(st, "counting letters");
			goto out;
		}
		k = 0;
		key[0] = '\0';
		if (step == SQLITE_ROW) {
			snprintf(key, sizeof(key), "%s.%s/%s", col_text(s, 0), col_text(s, 1),
				 col_text(s, 2));
			k = sqlite3_column_int(s, 3);
		}
		/* a new (group, k) run: flush the previous one */
		if (cur_k && (step != SQLITE_ROW || k != cur_k || strcmp(key, cur_key))) {
			if (!g || letters_add(cJSON_GetObjectItem(g, "letters"), cur_k, cur)) {
				rc = oom(st);
				goto out;
			}
			memset(cur, 0, sizeof(cur));
			cur_k = 0;
		}
		if (step != SQLITE_ROW)
			break;
		if (k < 2 || k > STORE_MAX_OPTIONS)
			continue; /* not written by store_qa_put(); not counted */
		i = sqlite3_column_int(s, 4);
		if (i < 0 || i >= k)
			continue;
		if (!cur_k) {
			g = group_get(groups, col_text(s, 0), col_text(s, 1), col_text(s, 2));
			snprintf(cur_key, sizeof(cur_key), "%s", key);
			cur_k = k;
		}
		cur[i] += sqlite3_column_int64(s, 5);
		all[k][i] += sqlite3_column_int64(s, 5);
	}
	for (k = 2; k <= STORE_MAX_OPTIONS; k++) {
		int64_t n = 0;

		for (i = 0; i < k; i++)
			n += all[k][i];
		if (n && letters_add(letters, k, all[k])) {
			rc = oom(st);
			goto out;
		}
	}
out:
	sqlite3_finalize(s);
	return rc;
}

/* Mean answer-length z per group and overall, from qc_json "z". */
static int stats_z(struct store *st, cJSON *res, cJSON *groups)
{
	sqlite3_stmt *s = NULL;
	double sum_all = 0, n_all = 0;
	cJSON *g;
	int rc, step;

	rc = db_prepare(st, "SELECT category, subtask, metric, sum(z), count(z) FROM"
			" (SELECT category, subtask, metric, CASE WHEN json_valid(qc_json) THEN"
			"  CASE WHEN json_type(qc_json, '$.z') IN ('integer', 'real')"
			"  THEN json_extract(qc_json, '$.z') END END AS z"
			"  FROM qa WHERE " LIVE_SQL ")"
			" GROUP BY 1, 2, 3 ORDER BY 1, 2, 3", &s, "averaging z");
	if (rc)
		goto out;
	while ((step = sqlite3_step(s)) == SQLITE_ROW) {
		double sum = sqlite3_column_double(s, 3);
		double n = (double)sqlite3_column_int64(s, 4);

		g = group_get(groups, col_text(s, 0), col_text(s, 1), col_text(s, 2));
		if (!g) {
			rc = oom(st);
			goto out;
		}
		set_num(g, "mean_z", n > 0 ? sum / n : NO_NUM);
		set_num(g, "z_n", n);
		sum_all += sum;
		n_all += n;
	}
	if (step != SQLITE_DONE) {
		rc = db_fail(st, "averaging z");
		goto out;
	}
	if (add_num(res, "mean_z", n_all > 0 ? sum_all / n_all : NO_NUM) ||
	    add_num(res, "z_n", n_all))
		rc = oom(st);
out:
	sqlite3_finalize(s);
	return rc;
}

static int stats_drops(struct store *st, cJSON *res, cJSON *groups)
{
	sqlite3_stmt *s = NULL;
	cJSON *drops, *by_reason, *g;
	double total = 0;
	int rc, step;

	drops = cJSON_AddObjectToObject(res, "drops");
	by_reason = drops ? cJSON_AddObjectToObject(drops, "by_reason") : NULL;
	if (!by_reason)
		return oom(st);
	rc = db_prepare(st, "SELECT reason, count(*) FROM drops GROUP BY 1 ORDER BY 1", &s,
			"counting drops");
	if (rc)
		goto out;
	while ((step = sqlite3_step(s)) == SQLITE_ROW) {
		double n = (double)sqlite3_column_int64(s, 1);

		if (add_num(by_reason, col_text(s, 0), n)) {
			rc = oom(st);
			goto out;
		}
		total += n;
	}
	if (step != SQLITE_DONE) {
		rc = db_fail(st, "counting drops");
		goto out;
	}
	sqlite3_finalize(s);
	s = NULL;
	rc = db_prepare(st, "SELECT category, subtask, metric, count(*) FROM drops"
			" GROUP BY 1, 2, 3 ORDER BY 1, 2, 3", &s, "counting drops");
	if (rc)
		goto out;
	while ((step = sqlite3_step(s)) == SQLITE_ROW) {
		g = group_get(groups, col_text(s, 0), col_text(s, 1), col_text(s, 2));
		if (!g) {
			rc = oom(st);
			goto out;
		}
		add_to(g, "drops", (double)sqlite3_column_int64(s, 3));
	}
	if (step != SQLITE_DONE) {
		rc = db_fail(st, "counting drops");
		goto out;
	}
	if (add_num(drops, "total", total))
		rc = oom(st);
out:
	sqlite3_finalize(s);
	return rc;
}

/* Reviewers: counts and median decision times. */
static int stats_reviewers(struct store *st, cJSON *rv)
{
	sqlite3_stmt *s = NULL;
	cJSON *who, *r;
	double *all = NULL, *tmp;
	size_t n = 0, cap = 0, first = 0;
	char cur[256] = "";
	int rc, step;

	who = cJSON_AddObjectToObject(rv, "reviewers");
	if (!who)
		return oom(st);
	rc = db_prepare(st, "SELECT reviewer, count(*), count(DISTINCT qa_id) FROM reviews"
			" GROUP BY 1 ORDER BY 1", &s, "counting reviews");
	if (rc)
		goto out;
	while ((step = sqlite3_step(s)) == SQLITE_ROW) {
		r = cJSON_AddObjectToObject(who, col_text(s, 0));
		if (!r || add_num(r, "reviews", (double)sqlite3_column_int64(s, 1)) ||
		    add_num(r, "items", (double)sqlite3_column_int64(s, 2)) ||
		    add_num(r, "median_time_ms", NO_NUM)) {
			rc = oom(st);
			goto out;
		}
	}
	if (step != SQLITE_DONE) {
		rc = db_fail(st, "counting reviews");
		goto out;
	}
	sqlite3_finalize(s);
	s = NULL;
	rc = db_prepare(st, "SELECT reviewer, round((julianday(decided_at) -"
			" julianday(started_at)) * 86400000.0) FROM reviews"
			" WHERE started_at IS NOT NULL AND decided_at IS NOT NULL"
			" ORDER BY 1", &s, "reading review times");
	if (rc)
		goto out;
	for (;;) {
		step = sqlite3_step(s);
		if (step != SQLITE_ROW && step != SQLITE_DONE) {
			rc = db_fail(st, "reading review times");
			goto out;
		}
		/* a new reviewer: the median of the previous one's times */
		if (n > first && (step != SQLITE_ROW || strcmp(cur, col_text(s, 0)))) {
			r = cJSON_GetObjectItemCaseSensitive(who, cur);
			if (r) {
				double *part = malloc((n - first) * sizeof(*part));

				if (!part) {
					rc = oom(st);
					goto out;
				}
				memcpy(part, all + first, (n - first) * sizeof(*part));
				set_num(r, "median_time_ms", median(part, n - first));
				free(part);
			}
			first = n;
		}
		if (step != SQLITE_ROW)
			break;
		snprintf(cur, sizeof(cur), "%s", col_text(s, 0));
		if (n == cap) {
			cap = cap ? cap * 2 : 256;
			tmp = realloc(all, cap * sizeof(*all));
			if (!tmp) {
				rc = oom(st);
				goto out;
			}
			all = tmp;
		}
		all[n++] = sqlite3_column_double(s, 1);
	}
	if (add_num(rv, "median_time_ms", median(all, n)))
		rc = oom(st);
out:
	sqlite3_finalize(s);
	free(all);
	return rc;
}

/* Blind answers against the key. */
static int stats_blind(struct store *st, cJSON *rv)
{
	sqlite3_stmt *s = NULL;
	cJSON *b;
	double n, agree;
	int rc;

	rc = db_prepare(st, "SELECT count(*), coalesce(sum(r.blind_answer_index ="
			" q.answer_index), 0) FROM reviews r JOIN qa q ON q.id = r.qa_id"
			" WHERE r.blind_answer_index IS NOT NULL AND q.answer_index IS NOT NULL",
			&s, "counting blind answers");
	if (rc)
		goto out;
	if (sqlite3_step(s) != SQLITE_ROW) {
		rc = db_fail(st, "counting blind answers");
		goto out;
	}
	n = (double)sqlite3_column_int64(s, 0);
	agree = (double)sqlite3_column_int64(s, 1);
	b = cJSON_AddObjectToObject(rv, "blind");
	if (!b || add_num(b, "n", n) || add_num(b, "agree", agree) ||
	    add_num(b, "rate", n > 0 ? agree / n : NO_NUM))
		rc = oom(st);
out:
	sqlite3_finalize(s);
	return rc;
}

static int kappa_add(cJSON *arr, const char *a, const char *b, const int64_t t[4])
{
	cJSON *e = cJSON_CreateObject();
	double kappa = NO_NUM;
	int rc = 0;

	if (!e)
		return ENG_ENOMEM;
	if (store_kappa(t, 2, &kappa))
		kappa = NO_NUM;
	err_clear();
	if (!cJSON_AddStringToObject(e, "a", a) || !cJSON_AddStringToObject(e, "b", b))
		rc = ENG_ENOMEM;
	rc |= add_num(e, "n", (double)(t[0] + t[1] + t[2] + t[3]));
	rc |= add_num(e, "agree", (double)(t[0] + t[3]));
	rc |= add_num(e, "kappa", kappa);
	if (rc || !cJSON_AddItemToArray(arr, e)) {
		cJSON_Delete(e);
		return ENG_ENOMEM;
	}
	return 0;
}

/*
 * Cohen's kappa for each pair of reviewers over the QAs both decided:
 * each one's last approve/reject/edit, as accept (approve, edit) / reject.
 */
static int stats_kappa(struct store *st, cJSON *rv)
{
	static const char sql[] =
		"WITH v AS (SELECT qa_id, reviewer, decision IN ('approve', 'edit') AS acc,"
		" row_number() OVER (PARTITION BY qa_id, reviewer"
		"  ORDER BY decided_at DESC, id DESC) AS rn"
		" FROM reviews WHERE decision IN ('approve', 'reject', 'edit'))"
		" SELECT a.reviewer, b.reviewer, a.acc, b.acc, count(*)"
		" FROM v a JOIN v b ON a.qa_id = b.qa_id AND a.reviewer < b.reviewer"
		" WHERE a.rn = 1 AND b.rn = 1 GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4";
	sqlite3_stmt *s = NULL;
	cJSON *arr;
	int64_t t[4] = { 0, 0, 0, 0 };
	char ca[256] = "", cb[256] = "";
	int rc, step, have = 0;

	arr = cJSON_AddArrayToObject(rv, "kappa");
	if (!arr)
		return oom(st);
	rc = db_prepare(st, sql, &s, "comparing reviewers");
	if (rc)
		goto out;
	for (;;) {
		step = sqlite3_step(s);
		if (step != SQLITE_ROW && step != SQLITE_DONE) {
			rc = db_fail(st, "comparing reviewers");
			goto out;
		}
		if (have && (step != SQLITE_ROW || strcmp(ca, col_text(s, 0)) ||
			     strcmp(cb, col_text(s, 1)))) {
			if (kappa_add(arr, ca, cb, t)) {
				rc = oom(st);
				goto out;
			}
			memset(t, 0, sizeof(t));
		}
		if (step != SQLITE_ROW)
			break;
		snprintf(ca, sizeof(ca), "%s", col_text(s, 0));
		snprintf(cb, sizeof(cb), "%s", col_text(s, 1));
		/* rows: a accepts / rejects; columns: b accepts / rejects */
		t[(sqlite3_column_int(s, 2) ? 0 : 2) + (sqlite3_column_int(s, 3) ? 0 : 1)] +=
			sqlite3_column_int64(s, 4);
		have = 1;
	}
out:
	sqlite3_finalize(s);
	return rc;
}

static int stats_reviews(struct store *st, cJSON *res)
{
	cJSON *rv, *bs;
	double acc, rej;
	int rc, n = 0;

	rv = cJSON_AddObjectToObject(res, "reviews");
	if (!rv)
		return oom(st);
	rc = pragma_int(st, "SELECT count(*) FROM reviews", &n, "counting reviews");
	if (rc)
		return rc;
	bs = cJSON_GetObjectItemCaseSensitive(res, "by_status");
	acc = cJSON_GetObjectItemCaseSensitive(bs, "approved")->valuedouble +
	      cJSON_GetObjectItemCaseSensitive(bs, "edited")->valuedouble;
	rej = cJSON_GetObjectItemCaseSensitive(bs, "rejected")->valuedouble;
	if (add_num(rv, "total", n) ||
	    add_num(rv, "acceptance", acc + rej > 0 ? acc / (acc + rej) : NO_NUM))
		return oom(st);
	rc = stats_reviewers(st, rv);
	if (!rc)
		rc = stats_blind(st, rv);
	if (!rc)
		rc = stats_kappa(st, rv);
	return rc;
}

int store_stats(struct store *st, cJSON **out)
{
	cJSON *res = cJSON_CreateObject(), *groups;
	int rc = 0;

	if (!res)
		return oom(st);
	if (add_num(res, "schema_version", STORE_SCHEMA_VERSION)) {
		rc = oom(st);
		goto out;
	}
	groups = cJSON_AddObjectToObject(res, "groups");
	if (!groups) {
		rc = oom(st);
		goto out;
	}
	/* one read snapshot for all the queries, unless a batch is open */
	if (!st->in_tx) {
		rc = db_exec(st, "BEGIN", "reading statistics");
		if (rc)
			goto out;
	}
	rc = stats_counts(st, res, groups);
	if (!rc)
		rc = stats_letters(st, res, groups);
	if (!rc)
		rc = stats_z(st, res, groups);
	if (!rc)
		rc = stats_drops(st, res, groups);
	if (!rc)
		rc = stats_reviews(st, res);
	if (!st->in_tx)
		sqlite3_exec(st->db, "COMMIT", NULL, NULL, NULL);
out:
	if (rc) {
		cJSON_Delete(res);
		return rc;
	}
	*out = res;
	return 0;
}

/* ============================ LLM cache ============================ */

int store_cache_get(struct store *st, const char *key, char **response_json, int *status)
{
	sqlite3_stmt *s = NULL;
	char *resp;
	int rc, step;

	if (!key || !response_json)
		return err_set(ENG_EINVAL, "'%s': store_cache_get: no key", st->path);
	rc = db_prepare(st, "SELECT response_json, status FROM llm_cache WHERE key = :key",
			&s, "reading the llm cache");
	if (rc)
		goto out;
	if (bind_text(s, ":key", key)) {
		rc = db_fail(st, "reading the llm cache");
		goto out;
	}
	step = sqlite3_step(s);
	if (step == SQLITE_DONE) {
		rc = ENG_ENOTFOUND;
		goto out;
	}
	if (step != SQLITE_ROW) {
		rc = db_fail(st, "reading the llm cache");
		goto out;
	}
	resp = xstrdup(col_text(s, 0) ? col_text(s, 0) : "");
	if (!resp) {
		rc = oom(st);
		goto out;
	}
	*response_json = resp;
	if (status)
		*status = sqlite3_column_int(s, 1);
out:
	sqlite3_finalize(s);
	return rc;
}

int store_cache_put(struct store *st, const char *key, const char *request_json,
		    const char *response_json, int status, int64_t latency_ms)
{
	static const char sql[] =
		"INSERT INTO llm_cache (key, request_json, response_json, status,"
		" created_at, latency_ms) VALUES (:key, :request, :response, :status, "
		NOW_SQL ", :latency) ON CONFLICT(key) DO UPDATE SET"
		" request_json = excluded.request_json,"
		" response_json = excluded.response_json, status = excluded.status,"
		" created_at = excluded.created_at, latency_ms = excluded.latency_ms";
	sqlite3_stmt *s = NULL;
	int rc;

	if (!key || !*key || !response_json)
		return err_set(ENG_EINVAL, "'%s': store_cache_put: missing key or response",
			       st->path);
	rc = db_prepare(st, sql, &s, "writing the llm cache");
	if (rc)
		goto out;
	if (bind_text(s, ":key", key) || bind_text(s, ":request", request_json) ||
	    bind_text(s, ":response", response_json) || bind_i64(s, ":status", status) ||
	    bind_i64(s, ":latency", latency_ms)) {
		rc = db_fail(st, "writing the llm cache");
		goto out;
	}
	rc = db_done(st, s, "writing the llm cache");
out:
	sqlite3_finalize(s);
	return rc;
}

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
#define MERGE_REVIEWED(t) "(" t ".status IN ('approved', 'rejected', 'edited'))"

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
static int merge_body(struct store *st, const char *path, struct store_merge_stats *m)
{
	int64_t v[3] = { 0, 0, 0 }, n_reviews = 0;
	size_t i;
	int rc = 0;

	for (i = 0; i < ARRAY_SIZE(merge_setup) && !rc; i++)
		rc = merge_exec(st, path, merge_setup[i].sql, merge_setup[i].what, NULL);
	if (rc)
		return rc;
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
	if (!rc)
		rc = merge_ints(st, path, "SELECT count(*) FROM " MERGE_SRC ".reviews",
				"counting reviews", &n_reviews, 1);
	if (!rc)
		rc = merge_exec(st, path,
				"INSERT INTO main.reviews (qa_id, reviewer, decision, reason,"
				" blind_answer_index, edit_before, edit_after, note, started_at,"
				" decided_at) SELECT r.qa_id, r.reviewer, r.decision, r.reason,"
				" r.blind_answer_index, r.edit_before, r.edit_after, r.note,"
				" r.started_at, r.decided_at FROM " MERGE_SRC ".reviews r"
				" WHERE NOT EXISTS (SELECT 1 FROM main.reviews m"
				"  WHERE m.qa_id = r.qa_id AND m.reviewer = r.reviewer"
				"  AND m.decision = r.decision AND m.decided_at = r.decided_at)"
				" ORDER BY r.id", "appending reviews", &m->reviews_added);
	if (!rc)
		m->reviews_known = n_reviews - m->reviews_added;
	if (!rc)
		rc = merge_exec(st, path,
				"INSERT INTO main.drops (run_id, recording_id, category, subtask,"
				" metric, reason, t_ns, target) SELECT r.new, d.recording_id,"
				" d.category, d.subtask, d.metric, d.reason, d.t_ns, d.target"
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
	rc = db_prepare(st, "ATTACH DATABASE :path AS " MERGE_SRC, &s, "attaching the input");
	if (!rc && bind_text(s, ":path", path))
		rc = db_fail(st, "attaching the input");
	if (!rc && sqlite3_step(s) != SQLITE_DONE)
		rc = err_set(ENG_EDB, "'%s': cannot attach: %s", path, sqlite3_errmsg(st->db));
	sqlite3_finalize(s);
	if (rc)
		goto out;
	attached = 1;
	rc = merge_check_src(st, path);
	if (rc)
		goto out;
	rc = db_exec(st, "BEGIN IMMEDIATE", "beginning a merge");
	if (rc)
		goto out;
	in_tx = 1;
	rc = merge_body(st, path, &m);
	if (rc)
		goto out;
	rc = db_exec(st, "COMMIT", "committing a merge");
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
