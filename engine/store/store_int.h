/* SPDX-License-Identifier: MIT */
/*
 * Private to engine/store/: the connection handle, the helpers every part of
 * the store uses (statements, binding, transactions, rows to JSON), and the
 * constants of the schema. Nothing outside engine/store/ includes this file.
 */
#ifndef STORE_INT_H
#define STORE_INT_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>
#include <sqlite3.h>

#include "store.h"

/* 'PRXM': marks a file as a proxima store (PRAGMA application_id). */
#define STORE_APP_ID 0x5052584d
#define STORE_BUSY_MS 5000
#define STORE_WAL_PAGES 1000 /* SQLite's default autocheckpoint */
#define STORE_MAX_OPTIONS 26
#define STORE_ID_MIN 16
#define STORE_ID_MAX 64

/* "no value": becomes JSON null (NAN is a float constant). */
#define NO_NUM ((double)NAN)

/* ISO-8601 UTC with milliseconds: every time the store writes itself. */
#define NOW_SQL "strftime('%Y-%m-%dT%H:%M:%fZ','now')"

/* Statements of the hot write paths kept prepared per handle (store__db_cached). */
#define STORE_STMT_CACHE 16

struct store_stmt {
	const char *sql;      /* the caller's static text */
	sqlite3_stmt *s;
	int busy;             /* handed out and not yet released */
};

struct store {
	sqlite3 *db;   /* the connection */
	char *path;    /* as given to store_open() */
	int readonly;  /* opened with STORE_READONLY */
	int in_tx;     /* a store_begin() batch is open */
	int wal_pages; /* the WAL's pages after the last commit (store_defer_checkpoints) */
	struct store_stmt stmts[STORE_STMT_CACHE];
};

/* Every QA status, in the order of the schema's CHECK. */
#define STORE_N_STATUSES 7
extern const char *const store__qa_statuses[STORE_N_STATUSES];

/*
 * Applies the review policy (store.h) to QA qa_id, or to every QA with a
 * verdict or an adjudication when qa_id is NULL, inside the caller's
 * transaction. Adds the number of QAs changed to *changed (may be NULL).
 * Returns 0 or ENG_EDB.
 */
int store__review_derive(struct store *st, const char *qa_id, int64_t *changed);


/* How a column becomes JSON (store__row_to_json). */
enum col_kind { COL_TEXT, COL_INT, COL_JSON };

struct col_spec {
	const char *name;   /* JSON member name */
	enum col_kind kind; /* how the column becomes JSON */
};

/* Formats an SQLite failure as "'path': what: sqlite message". */
int store__db_fail(const struct store *st, const char *what);

/* Runs SQL text with no result rows; on failure store__db_fail(what). */
int store__db_exec(struct store *st, const char *sql, const char *what);

/* Prepares one statement into *out; on failure store__db_fail(what). */
int store__db_prepare(struct store *st, const char *sql, sqlite3_stmt **out,
		      const char *what);

/*
 * As store__db_prepare(), for SQL text that lives as long as the handle
 * (a literal): the statement is prepared once per handle and kept, so a
 * write done per QA does not parse its SQL again. Give it back with
 * store__db_release(), never sqlite3_finalize(). When the cache is full or
 * the statement is already out, a fresh one is prepared (and finalized by
 * store__db_release()).
 */
int store__db_cached(struct store *st, const char *sql, sqlite3_stmt **out, const char *what);

/* Resets and unbinds a store__db_cached() statement, or finalizes an uncached one. NULL is a no-op. */
void store__db_release(struct store *st, sqlite3_stmt *s);

/* Finalizes every kept statement (store_close). */
void store__db_cache_clear(struct store *st);

/* Steps a statement that returns no row. */
int store__db_done(struct store *st, sqlite3_stmt *s, const char *what);

/*
 * Named-parameter binders. A name the statement does not use is skipped,
 * so one binder serves several statements. They return an SQLite code
 * (0 = SQLITE_OK), which lets callers chain them with ||.
 */
int store__bind_text(sqlite3_stmt *s, const char *name, const char *v);
/*
 * As store__bind_text, without SQLite's copy: v must stay unchanged until
 * the statement is reset or released (a large text written once).
 */
int store__bind_text_static(sqlite3_stmt *s, const char *name, const char *v);

int store__bind_i64(sqlite3_stmt *s, const char *name, int64_t v);

/* Binds v, or NULL when v equals none. */
int store__bind_i64_or_null(sqlite3_stmt *s, const char *name, int64_t v,
			    int64_t none);

/* Column i of the current row as text ("" for NULL). Can't fail. */
const char *store__col_text(sqlite3_stmt *s, int i);

/* strdup that accepts NULL (and returns NULL for it). */
char *store__xstrdup(const char *s);

/*
 * Opens a unit of work for a write function: its own transaction outside
 * a batch, a savepoint inside one (so a failure undoes only this call).
 */
int store__tx_enter(struct store *st, int *own);

/* Ends what tx_enter() opened: commits when rc is 0, else undoes it. */
int store__tx_leave(struct store *st, int own, int rc);

/* 1 when s is NULL or parses as JSON (of the given cJSON type mask, if any). */
int store__json_ok(const char *s, int type);

/* 1 when s equals one of set[0..n-1]. Can't fail. */
int store__is_one_of(const char *s, const char *const *set, size_t n);

/* Reads the integer result of a PRAGMA query into *v. */
int store__pragma_int(struct store *st, const char *sql, int *v,
		      const char *what);

/* The current row as an object, columns first..first+n-1 named by specs. */
int store__row_to_json(sqlite3_stmt *s, int first, const struct col_spec *specs,
		       size_t n, cJSON **out);

/* err_set(ENG_ENOMEM) naming the store file; returns ENG_ENOMEM. */
int store__oom(const struct store *st);

#endif /* STORE_INT_H */
