/* SPDX-License-Identifier: MIT */
/*
 * The store's LLM response cache, keyed by request hash.
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

/* ============================ LLM cache ============================ */

int store_cache_get(struct store *st, const char *key, char **response_json, int *status)
{
	sqlite3_stmt *s = NULL;
	char *resp;
	int rc, step;

	if (!key || !response_json)
		return err_set(ENG_EINVAL, "'%s': store_cache_get: no key", st->path);
	rc = store__db_cached(st, "SELECT response_json, status FROM llm_cache WHERE key = :key",
			      &s, "reading the llm cache");
	if (rc)
		goto out;
	if (store__bind_text(s, ":key", key)) {
		rc = store__db_fail(st, "reading the llm cache");
		goto out;
	}
	step = sqlite3_step(s);
	if (step == SQLITE_DONE) {
		rc = ENG_ENOTFOUND;
		goto out;
	}
	if (step != SQLITE_ROW) {
		rc = store__db_fail(st, "reading the llm cache");
		goto out;
	}
	resp = store__xstrdup(store__col_text(s, 0) ? store__col_text(s, 0) : "");
	if (!resp) {
		rc = store__oom(st);
		goto out;
	}
	*response_json = resp;
	if (status)
		*status = sqlite3_column_int(s, 1);
out:
	store__db_release(st, s);
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
	rc = store__db_cached(st, sql, &s, "writing the llm cache");
	if (rc)
		goto out;
	/* the texts outlive the step, and the release unbinds them: not copied */
	if (store__bind_text(s, ":key", key) || store__bind_text_static(s, ":request", request_json) ||
	    store__bind_text_static(s, ":response", response_json) ||
	    store__bind_i64(s, ":status", status) ||
	    store__bind_i64(s, ":latency", latency_ms)) {
		rc = store__db_fail(st, "writing the llm cache");
		goto out;
	}
	rc = store__db_done(st, s, "writing the llm cache");
out:
	store__db_release(st, s);
	return rc;
}
