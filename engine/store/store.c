/* SPDX-License-Identifier: MIT */
/*
 * The SQLite store: opening, schema migrations, transactions, the shared
 * helpers of engine/store/, and the recordings and runs tables.
 */
#include "store.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "banned.h"
#include "buf.h"
#include "err.h"
#include "store_int.h"

const char *const store__qa_statuses[STORE_N_STATUSES] = {
	"pending", "approved", "rejected", "edited", "superseded", "dropped", "conflict"
};

int store_status_list_check(const char *list)
{
	const char *p = list;

	while (p && *p) {
		size_t n = strcspn(p, ","), i;

		for (i = 0; i < STORE_N_STATUSES; i++)
			if (strlen(store__qa_statuses[i]) == n && !strncmp(p, store__qa_statuses[i], n))
				break;
		if (i == STORE_N_STATUSES)
			return err_set(ENG_EINVAL, "unknown status '%.*s' (pending, approved, rejected, "
				       "edited, conflict, superseded, dropped)", (int)(n > 64 ? 64 : n), p);
		p += n + (p[n] == ',');
	}
	return 0;
}

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

	/*
	 * 1 -> 2: each reviewer's verdict counts (docs/review.md, Decisions).
	 * qa is rebuilt (the documented create-copy-drop-rename; foreign keys
	 * are off while migrations run) so that its status may be 'conflict';
	 * reviews get the adjudication flag; qa_counts holds the counts per
	 * recording, group and status, kept exact by triggers, so the review
	 * queue does not scan the table; qa_status_order serves a status filter in review
	 * order. The step then applies the review policy to the reviews
	 * already stored (store_migrate), so a store whose later reviewer
	 * overwrote an earlier one's status now shows the conflict.
	 */
	"CREATE TABLE qa_v2 ("
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
	" 'edited','superseded','dropped','conflict')),"
	" drop_reason TEXT,"
	" created_at TEXT NOT NULL,"
	" updated_at TEXT NOT NULL);"
	"INSERT INTO qa_v2 SELECT id, run_id, recording_id, category, subtask, metric,"
	" t_ns, clip_start_ns, clip_end_ns, frames_json, target, question,"
	" question_edited, options_json, answer_index, answer_json, gt_json, qc_json,"
	" status, drop_reason, created_at, updated_at FROM qa;"
	"DROP TABLE qa;"
	"ALTER TABLE qa_v2 RENAME TO qa;"
	"CREATE INDEX qa_task ON qa(category, subtask, metric, status);"
	"CREATE INDEX qa_recording ON qa(recording_id, t_ns, id);"
	"CREATE INDEX qa_status_order ON qa(status, recording_id, t_ns, id);"
	"ALTER TABLE reviews ADD COLUMN adjudication INTEGER NOT NULL DEFAULT 0"
	" CHECK (adjudication IN (0, 1));"
	"CREATE TABLE qa_counts ("
	" recording_id TEXT NOT NULL,"
	" category TEXT NOT NULL,"
	" subtask TEXT NOT NULL,"
	" metric TEXT NOT NULL,"
	" status TEXT NOT NULL,"
	" n INTEGER NOT NULL,"
	" PRIMARY KEY (recording_id, category, subtask, metric, status)) WITHOUT ROWID;"
	"INSERT INTO qa_counts SELECT recording_id, category, subtask, metric, status, count(*)"
	" FROM qa GROUP BY 1, 2, 3, 4, 5;"
	"CREATE TRIGGER qa_counts_insert AFTER INSERT ON qa BEGIN"
	" INSERT INTO qa_counts VALUES (new.recording_id, new.category, new.subtask,"
	" new.metric, new.status, 1) ON CONFLICT DO UPDATE SET n = n + 1; END;"
	"CREATE TRIGGER qa_counts_delete AFTER DELETE ON qa BEGIN"
	" UPDATE qa_counts SET n = n - 1 WHERE recording_id = old.recording_id"
	" AND category = old.category AND subtask = old.subtask AND metric = old.metric"
	" AND status = old.status; END;"
	"CREATE TRIGGER qa_counts_update AFTER UPDATE OF recording_id, category, subtask,"
	" metric, status ON qa WHEN old.recording_id IS NOT new.recording_id"
	" OR old.category IS NOT new.category OR old.subtask IS NOT new.subtask"
	" OR old.metric IS NOT new.metric OR old.status IS NOT new.status BEGIN"
	" UPDATE qa_counts SET n = n - 1 WHERE recording_id = old.recording_id"
	" AND category = old.category AND subtask = old.subtask AND metric = old.metric"
	" AND status = old.status;"
	" INSERT INTO qa_counts VALUES (new.recording_id, new.category, new.subtask,"
	" new.metric, new.status, 1) ON CONFLICT DO UPDATE SET n = n + 1; END;",

	/* 2 -> 3: what a drop said (the rejection, the failed tool calls behind it) */
	"ALTER TABLE drops ADD COLUMN detail TEXT;",
};

_Static_assert(ARRAY_SIZE(store_migrations) == STORE_SCHEMA_VERSION,
	       "one migration per schema version");

/* ============================ Low-level helpers ============================ */

/* Formats an SQLite failure as "'path': what: sqlite message". */
int store__db_fail(const struct store *st, const char *what)
{
	return err_set(ENG_EDB, "'%s': %s: %s", st->path, what,
		       st->db ? sqlite3_errmsg(st->db) : "out of memory");
}

int store__db_exec(struct store *st, const char *sql, const char *what)
{
	if (sqlite3_exec(st->db, sql, NULL, NULL, NULL) != SQLITE_OK)
		return store__db_fail(st, what);
	return 0;
}

int store__db_prepare(struct store *st, const char *sql, sqlite3_stmt **out,
		      const char *what)
{
	*out = NULL;
	if (sqlite3_prepare_v2(st->db, sql, -1, out, NULL) != SQLITE_OK) {
		sqlite3_finalize(*out);
		*out = NULL;
		return store__db_fail(st, what);
	}
	return 0;
}

int store__db_cached(struct store *st, const char *sql, sqlite3_stmt **out, const char *what)
{
	struct store_stmt *slot = NULL;
	size_t i;

	*out = NULL;
	for (i = 0; i < STORE_STMT_CACHE; i++) {
		struct store_stmt *c = &st->stmts[i];

		if (c->s && !c->busy && (c->sql == sql || !strcmp(c->sql, sql))) {
			c->busy = 1;
			*out = c->s;
			return 0;
		}
		if (!c->s && !slot)
			slot = c;
	}
	if (sqlite3_prepare_v3(st->db, sql, -1, slot ? SQLITE_PREPARE_PERSISTENT : 0, out, NULL) !=
	    SQLITE_OK) {
		sqlite3_finalize(*out);
		*out = NULL;
		return store__db_fail(st, what);
	}
	if (slot) {
		slot->sql = sql;
		slot->s = *out;
		slot->busy = 1;
	}
	return 0;
}

void store__db_release(struct store *st, sqlite3_stmt *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < STORE_STMT_CACHE; i++)
		if (st->stmts[i].s == s) {
			sqlite3_reset(s);
			sqlite3_clear_bindings(s);
			st->stmts[i].busy = 0;
			return;
		}
	sqlite3_finalize(s);
}

void store__db_cache_clear(struct store *st)
{
	size_t i;

	for (i = 0; i < STORE_STMT_CACHE; i++) {
		sqlite3_finalize(st->stmts[i].s);
		memset(&st->stmts[i], 0, sizeof(st->stmts[i]));
	}
}

/* Steps a statement that returns no row. */
int store__db_done(struct store *st, sqlite3_stmt *s, const char *what)
{
	if (sqlite3_step(s) != SQLITE_DONE)
		return store__db_fail(st, what);
	return 0;
}

/*
 * Named-parameter binders. A name the statement does not use is skipped,
 * so one binder serves several statements. They return an SQLite code
 * (0 = SQLITE_OK), which lets callers chain them with ||.
 */
static int bind_text_as(sqlite3_stmt *s, const char *name, const char *v,
			void (*keep)(void *))
{
	int i = sqlite3_bind_parameter_index(s, name);

	if (!i)
		return SQLITE_OK;
	if (!v)
		return sqlite3_bind_null(s, i);
	return sqlite3_bind_text(s, i, v, -1, keep);
}

int store__bind_text(sqlite3_stmt *s, const char *name, const char *v)
{
	return bind_text_as(s, name, v, SQLITE_TRANSIENT);
}

int store__bind_text_static(sqlite3_stmt *s, const char *name, const char *v)
{
	return bind_text_as(s, name, v, SQLITE_STATIC);
}

int store__bind_i64(sqlite3_stmt *s, const char *name, int64_t v)
{
	int i = sqlite3_bind_parameter_index(s, name);

	if (!i)
		return SQLITE_OK;
	return sqlite3_bind_int64(s, i, v);
}

/* Binds v, or NULL when v equals none. */
int store__bind_i64_or_null(sqlite3_stmt *s, const char *name, int64_t v,
			    int64_t none)
{
	int i = sqlite3_bind_parameter_index(s, name);

	if (!i)
		return SQLITE_OK;
	if (v == none)
		return sqlite3_bind_null(s, i);
	return sqlite3_bind_int64(s, i, v);
}

const char *store__col_text(sqlite3_stmt *s, int i)
{
	return (const char *)sqlite3_column_text(s, i);
}

char *store__xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = malloc(n);

	if (p)
		memcpy(p, s, n);
	return p;
}

/* Runs a cached statement with no result rows. */
static int store__db_step_cached(struct store *st, const char *sql, const char *what)
{
	sqlite3_stmt *s = NULL;
	int rc = store__db_cached(st, sql, &s, what);

	if (!rc)
		rc = store__db_done(st, s, what);
	store__db_release(st, s);
	return rc;
}

/*
 * Opens a unit of work for a write function: its own transaction outside
 * a batch, a savepoint inside one (so a failure undoes only this call).
 */
int store__tx_enter(struct store *st, int *own)
{
	if (st->in_tx) {
		*own = 0;
		return store__db_step_cached(st, "SAVEPOINT store_op", "opening a savepoint");
	}
	*own = 1;
	return store__db_exec(st, "BEGIN IMMEDIATE", "beginning a transaction");
}

/* Ends what store__tx_enter() opened: commits when rc is 0, else undoes it. */
int store__tx_leave(struct store *st, int own, int rc)
{
	if (!rc) {
		rc = own ? store__db_exec(st, "COMMIT", "committing")
			 : store__db_step_cached(st, "RELEASE store_op", "committing");
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
int store__json_ok(const char *s, int type)
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

int store__is_one_of(const char *s, const char *const *set, size_t n)
{
	size_t i;

	for (i = 0; s && i < n; i++)
		if (!strcmp(s, set[i]))
			return 1;
	return 0;
}

/* ========================= Opening and migrating ========================= */

int store__pragma_int(struct store *st, const char *sql, int *v,
		      const char *what)
{
	sqlite3_stmt *s = NULL;
	int rc;

	rc = store__db_prepare(st, sql, &s, what);
	if (rc)
		goto out;
	if (sqlite3_step(s) != SQLITE_ROW) {
		rc = store__db_fail(st, what);
		goto out;
	}
	*v = sqlite3_column_int(s, 0);
out:
	sqlite3_finalize(s);
	return rc;
}

/*
 * Runs the missing migrations, each in its own immediate transaction.
 * Foreign keys must be off (a migration may rebuild a table that others
 * refer to); store_open() turns them on afterwards. The step to version 2
 * also applies the review policy to the reviews already stored.
 */
static int store_migrate(struct store *st)
{
	char sql[96];
	int rc = 0, v = 0;

	for (;;) {
		rc = store__db_exec(st, "BEGIN IMMEDIATE", "beginning a migration");
		if (rc)
			return rc;
		/* read again inside the lock: another process may have migrated */
		rc = store__pragma_int(st, "PRAGMA user_version", &v, "reading the schema version");
		if (rc)
			goto fail;
		if (v >= STORE_SCHEMA_VERSION)
			break;
		if (sqlite3_exec(st->db, store_migrations[v], NULL, NULL, NULL) != SQLITE_OK) {
			rc = err_set(ENG_EDB, "'%s': migrating to schema version %d: %s",
				     st->path, v + 1, sqlite3_errmsg(st->db));
			goto fail;
		}
		/* 1 -> 2: the old reviews under the per-reviewer policy, in this step */
		if (v == 1) {
			rc = store__review_derive(st, NULL, NULL);
			if (rc)
				goto fail;
		}
		snprintf(sql, sizeof(sql), "PRAGMA user_version = %d; PRAGMA application_id = %d",
			 v + 1, STORE_APP_ID);
		rc = store__db_exec(st, sql, "setting the schema version");
		if (rc)
			goto fail;
		rc = store__db_exec(st, "COMMIT", "committing a migration");
		if (rc)
			goto fail;
	}
	return store__db_exec(st, "COMMIT", "committing");
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
	rc = store__pragma_int(st, "PRAGMA application_id", &app, "reading the database header");
	if (rc)
		return rc;
	if (app != 0 && app != STORE_APP_ID)
		return err_set(ENG_EDB, "'%s': a SQLite database of another program "
			       "(application_id 0x%08x)", st->path, (unsigned)app);
	rc = store__pragma_int(st, "PRAGMA user_version", &v, "reading the schema version");
	if (rc)
		return rc;
	if (v < 0)
		return err_set(ENG_EDB, "'%s': schema version %d is negative: not a proxima store, "
			       "or a damaged one", st->path, v);
	if (v > STORE_SCHEMA_VERSION)
		return err_set(ENG_ERANGE, "'%s': schema version %d is newer than "
			       "version %d that this proxima knows; use a newer proxima",
			       st->path, v, STORE_SCHEMA_VERSION);
	rc = store__pragma_int(st, "SELECT count(*) FROM sqlite_master", &tables,
			"reading the schema");
	if (rc)
		return rc;
	if (app == 0 && tables > 0)
		return err_set(ENG_EDB, "'%s': a SQLite database that is not a proxima store",
			       st->path);
	if (st->readonly && v == 0)
		return err_set(ENG_EDB, "'%s': an empty database, not a proxima store",
			       st->path);
	/* a read-only open reads what the steps since STORE_READ_MIN_VERSION only added */
	if (st->readonly && v < STORE_READ_MIN_VERSION)
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
	st->path = store__xstrdup(path);
	if (!st->path) {
		rc = err_set(ENG_ENOMEM, "'%s': out of memory", path);
		goto out;
	}
	st->readonly = !!(flags & STORE_READONLY);
	oflags = SQLITE_OPEN_FULLMUTEX | (st->readonly ? SQLITE_OPEN_READONLY
				 : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
	if (sqlite3_open_v2(path, &st->db, oflags, NULL) != SQLITE_OK) {
		rc = store__db_fail(st, "cannot open");
		goto out;
	}
	sqlite3_extended_result_codes(st->db, 1);
	sqlite3_busy_timeout(st->db, STORE_BUSY_MS);
	rc = store_check_file(st);
	if (rc)
		goto out;
	if (!st->readonly) {
		/* journal_mode answers a row ("wal", or "memory" for :memory:) */
		rc = store__db_exec(st, "PRAGMA journal_mode = WAL", "switching to WAL mode");
		if (!rc)
			rc = store__db_exec(st, "PRAGMA synchronous = NORMAL", "setting synchronous");
	}
	/* migrations run with foreign keys off (a table may be rebuilt) */
	if (!rc && !st->readonly)
		rc = store_migrate(st);
	if (!rc)
		rc = store__db_exec(st, "PRAGMA foreign_keys = ON", "enabling foreign keys");
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
	store__db_cache_clear(st);
	sqlite3_close_v2(st->db);
	free(st->path);
	free(st);
}

/* The WAL hook of store_defer_checkpoints(): counts, never checkpoints. */
static int count_wal(void *arg, sqlite3 *db, const char *name, int pages)
{
	struct store *st = arg;

	(void)db;
	(void)name;
	st->wal_pages = pages;
	return SQLITE_OK;
}

int store_defer_checkpoints(struct store *st, bool defer)
{
	if (st->readonly)
		return err_set(ENG_EINVAL, "'%s': a read-only store writes no WAL", st->path);
	/* each replaces the other's hook: autocheckpoint is a WAL hook of SQLite's */
	if (defer)
		sqlite3_wal_hook(st->db, count_wal, st);
	else if (sqlite3_wal_autocheckpoint(st->db, STORE_WAL_PAGES) != SQLITE_OK)
		return store__db_fail(st, "restoring checkpoints");
	st->wal_pages = 0;
	return 0;
}

int store_wal_pages(const struct store *st)
{
	return st->wal_pages;
}

int store_checkpoint(struct store *st)
{
	int rc = sqlite3_wal_checkpoint_v2(st->db, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);

	/* busy: a reader or another checkpointer holds what it needs; the next one copies it */
	if (rc != SQLITE_OK && rc != SQLITE_BUSY)
		return store__db_fail(st, "checkpointing");
	return 0;
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
	rc = store__db_exec(st, st->readonly ? "BEGIN" : "BEGIN IMMEDIATE",
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
	rc = store__db_exec(st, "COMMIT", "committing a batch");
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
		rc = store__db_exec(st, "ROLLBACK", "rolling back a batch");
	return rc;
}

int store_integrity_check(struct store *st, char **result)
{
	sqlite3_stmt *s = NULL;
	struct buf b;
	int rc, step;

	buf_init(&b, 1 << 20);
	rc = store__db_prepare(st, "PRAGMA integrity_check", &s, "checking integrity");
	if (rc)
		goto out;
	while ((step = sqlite3_step(s)) == SQLITE_ROW) {
		const char *line = store__col_text(s, 0);

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
		rc = store__db_fail(st, "checking integrity");
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
		v = cJSON_Parse(store__col_text(s, i));
		if (!v) /* written by another program: hand it over as text */
			v = cJSON_CreateString(store__col_text(s, i));
	} else {
		v = cJSON_CreateString(store__col_text(s, i));
	}
	if (!v || !cJSON_AddItemToObject(obj, spec->name, v)) {
		cJSON_Delete(v);
		return ENG_ENOMEM;
	}
	return 0;
}

/* The current row as an object, columns first..first+n-1 named by specs. */
int store__row_to_json(sqlite3_stmt *s, int first, const struct col_spec *specs,
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

int store__oom(const struct store *st)
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
	if (!store__json_ok(rec->summary_json, 0))
		return err_set(ENG_EINVAL, "'%s': recording '%s': summary_json is not JSON",
			       st->path, rec->id);
	rc = store__db_prepare(st, sql, &s, "storing a recording");
	if (rc)
		goto out;
	if (store__bind_text(s, ":id", rec->id) || store__bind_text(s, ":layout", rec->layout) ||
	    store__bind_text(s, ":root", rec->root) || store__bind_i64(s, ":t0", rec->t0_ns) ||
	    store__bind_i64(s, ":t1", rec->t1_ns) || store__bind_text(s, ":summary", rec->summary_json)) {
		rc = store__db_fail(st, "storing a recording");
		goto out;
	}
	rc = store__db_done(st, s, "storing a recording");
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
	rc = store__db_prepare(st, "SELECT id, layout, root, t0_ns, t1_ns, summary_json, added_at"
			" FROM recordings WHERE id = :id", &s, "reading a recording");
	if (rc)
		goto out;
	if (store__bind_text(s, ":id", id)) {
		rc = store__db_fail(st, "reading a recording");
		goto out;
	}
	step = sqlite3_step(s);
	if (step == SQLITE_DONE) {
		rc = err_set(ENG_ENOTFOUND, "'%s': no recording '%s'", st->path, id);
		goto out;
	}
	if (step != SQLITE_ROW) {
		rc = store__db_fail(st, "reading a recording");
		goto out;
	}
	rc = store__row_to_json(s, 0, cols, ARRAY_SIZE(cols), out);
	if (rc)
		rc = store__oom(st);
out:
	sqlite3_finalize(s);
	return rc;
}

/*
 * Every row of a parameterless query as a cJSON array of objects built
 * with store__row_to_json(cols). `what` names the work in error messages.
 */
static int list_rows(struct store *st, const char *sql, const struct col_spec *cols,
		     size_t ncols, const char *what, cJSON **out)
{
	sqlite3_stmt *s = NULL;
	cJSON *arr = cJSON_CreateArray(), *row = NULL;
	int rc, step;

	if (!arr)
		return store__oom(st);
	rc = store__db_prepare(st, sql, &s, what);
	if (rc)
		goto out;
	while ((step = sqlite3_step(s)) == SQLITE_ROW) {
		rc = store__row_to_json(s, 0, cols, ncols, &row);
		if (rc) {
			rc = store__oom(st);
			goto out;
		}
		cJSON_AddItemToArray(arr, row);
	}
	if (step != SQLITE_DONE)
		rc = store__db_fail(st, what);
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

	if (!store__json_ok(config_json, 0))
		return err_set(ENG_EINVAL, "'%s': run: config_json is not JSON", st->path);
	rc = store__db_prepare(st, sql, &s, "starting a run");
	if (rc)
		goto out;
	if (store__bind_text(s, ":config", config_json) || store__bind_text(s, ":brain", brain) ||
	    store__bind_text(s, ":model", model) || store__bind_i64(s, ":seed", seed) ||
	    store__bind_text(s, ":version", engine_version)) {
		rc = store__db_fail(st, "starting a run");
		goto out;
	}
	rc = store__db_done(st, s, "starting a run");
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
	if (!store__json_ok(counts_json, 0))
		return err_set(ENG_EINVAL, "'%s': run %lld: counts_json is not JSON",
			       st->path, (long long)run_id);
	rc = store__db_prepare(st, sql, &s, "finishing a run");
	if (rc)
		goto out;
	if (store__bind_text(s, ":status", status) || store__bind_text(s, ":counts", counts_json) ||
	    store__bind_i64(s, ":id", run_id)) {
		rc = store__db_fail(st, "finishing a run");
		goto out;
	}
	rc = store__db_done(st, s, "finishing a run");
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

int store_run_list(struct store *st, cJSON **out)
{
	static const struct col_spec cols[] = {
		{ "id", COL_INT }, { "started_at", COL_TEXT }, { "finished_at", COL_TEXT },
		{ "config", COL_JSON }, { "brain", COL_TEXT }, { "model", COL_TEXT },
		{ "seed", COL_INT }, { "engine_version", COL_TEXT }, { "status", COL_TEXT },
	};

	return list_rows(st, "SELECT id, started_at, finished_at, config_json, brain, model, seed,"
			 " engine_version, status FROM runs ORDER BY id", cols, ARRAY_SIZE(cols),
			 "listing runs", out);
}

int store_run_last_generate(struct store *st, char **config_json, int64_t *seed)
{
	sqlite3_stmt *s = NULL;
	int rc, step;

	rc = store__db_prepare(st, "SELECT config_json, seed FROM runs WHERE config_json IS NOT NULL"
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
		rc = store__db_fail(st, "reading the last run");
		goto out;
	}
	*config_json = strdup((const char *)sqlite3_column_text(s, 0));
	if (!*config_json) {
		rc = store__oom(st);
		goto out;
	}
	*seed = sqlite3_column_int64(s, 1);
out:
	sqlite3_finalize(s);
	return rc;
}
