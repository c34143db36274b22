/* SPDX-License-Identifier: MIT */
/*
 * The project store: one SQLite file (WAL mode) holding recordings, runs,
 * generated QAs with their traces, reviews, dropped candidates and the LLM
 * response cache (docs/design.md section 6; the schema is in docs/store.md).
 * This is the only module that talks to SQLite; no sqlite3 type leaves it.
 *
 * Conventions for every function below:
 * - Return 0 on success or a negative enum eng_err. SQLite failures return
 *   ENG_EDB with err_set("'<path>': <what>: <sqlite message>"); bad
 *   arguments return ENG_EINVAL naming the field. Out-parameters are set
 *   only on success.
 * - Strings passed in are copied (bound to statements); the store never
 *   keeps a caller's pointer after the call returns.
 * - Objects handed out (cJSON trees, char * strings) belong to the caller:
 *   cJSON_Delete() for cJSON, free() for strings.
 * - Writes are atomic. Outside store_begin()/store_commit() each write
 *   function runs in its own transaction; inside one, it joins the batch
 *   (as a savepoint, so a failed call leaves the batch as it was before
 *   that call).
 * - Times written by the store (created_at, updated_at, added_at,
 *   started_at, finished_at, decided_at) are ISO-8601 UTC text with
 *   milliseconds, "2025-01-31T12:00:00.123Z". Times given to the store
 *   through this API are int64 milliseconds since the Unix epoch.
 * - Recording times (t_ns, clip bounds, frames) are int64 ns on the device
 *   clock. In cJSON output they are numbers (doubles), exact up to 2^53 ns
 *   (about 104 days of device time); store_qa_iter() gives exact int64s.
 *
 * Thread safety: a struct store belongs to one thread at a time. The
 * intended use is one writer thread (the orchestrator collects the results
 * of its --jobs sessions and writes them in batches). A thread that needs
 * the store on its own (e.g. LLM cache look-ups from worker threads) opens
 * its own handle on the same file: WAL lets readers run next to the
 * writer, and the 5 s busy timeout makes a second writer wait for the
 * first. Handles are opened with SQLITE_OPEN_FULLMUTEX, so a shared handle
 * cannot corrupt SQLite's state, but its transactions and error messages
 * would mix between threads.
 */
#ifndef STORE_H
#define STORE_H

#include <stdbool.h>
#include <stdint.h>

struct cJSON;

/* The schema version this program writes (PRAGMA user_version). */
#define STORE_SCHEMA_VERSION 3
/*
 * The oldest version a read-only open accepts as it is: the steps after it
 * only add what readers do not need (3: drops.detail). Older ones must be
 * opened read-write once, which migrates them.
 */
#define STORE_READ_MIN_VERSION 2

/* A store handle; opaque. */
struct store;

enum store_flags {
	STORE_READONLY = (1 << 0) /* open an existing store read-only: never
	                           * creates the file, never migrates */
};

/* ===================== Opening, closing, transactions ===================== */

/*
 * Opens (creating it unless STORE_READONLY) the store at path and brings
 * its schema up to STORE_SCHEMA_VERSION by running the missing migrations,
 * each in its own transaction. Sets WAL mode, foreign keys on,
 * synchronous=NORMAL and a 5 s busy timeout. Reopening a current store
 * changes nothing.
 *
 * Fails with ENG_ENOENT when STORE_READONLY is given and path does not
 * exist; ENG_ERANGE when the file's schema version is newer than this
 * program's (the message names the file and both versions), or, read-only,
 * older than it; ENG_EDB when the file is not a SQLite database, is a
 * SQLite database of another program, or cannot be opened or migrated;
 * ENG_ENOMEM. On failure nothing is left open and *out is untouched.
 */
int store_open(const char *path, unsigned flags, struct store **out);

/*
 * Closes the store, discarding an uncommitted batch. store_close(NULL) is
 * a no-op. This function can't fail.
 */
void store_close(struct store *st);

/*
 * Checkpoints on another thread. SQLite checkpoints the WAL into the
 * database inside the commit that passes 1000 pages, so a writer that
 * commits under a lock of its own holds it through the copy and the sync.
 * store_defer_checkpoints(st, true) stops that on st (st's commits then
 * only count the WAL's pages; store_wal_pages() reads the count after the
 * last one; false restores SQLite's own checkpoints), and
 * store_checkpoint() on a second connection to the same file copies what
 * it can without blocking st's writes (a passive checkpoint). Closing the
 * last connection checkpoints the rest, as always. Each returns 0, or
 * ENG_EINVAL for a read-only store, ENG_EDB when SQLite fails.
 */
int store_defer_checkpoints(struct store *st, bool defer);
int store_wal_pages(const struct store *st);
int store_checkpoint(struct store *st);

/* The path the store was opened with. Valid until store_close(). */
const char *store_path(const struct store *st);

/*
 * Batched transactions. store_begin() opens a write transaction (a read
 * snapshot on a read-only handle); every write until store_commit() is
 * part of it. A second store_begin() before commit or rollback is an error
 * (ENG_EINVAL). store_commit() without a batch is ENG_EINVAL; if SQLite
 * had to roll the batch back on its own (disk full, I/O error) commit
 * returns ENG_EDB and nothing of the batch is kept. store_rollback()
 * discards the batch; without one it does nothing and returns 0.
 * All three return ENG_EDB when SQLite fails (e.g. busy past the timeout).
 */
int store_begin(struct store *st);
int store_commit(struct store *st);
int store_rollback(struct store *st);

/*
 * Runs PRAGMA integrity_check and hands its report to *result (free()):
 * "ok" for a sound file, else one problem per line. Returns 0 whether or
 * not the file is sound; ENG_EDB when the check cannot run; ENG_ENOMEM.
 */
int store_integrity_check(struct store *st, char **result);

/* ========================= Recordings and runs ========================= */

/* A recording as stored in the recordings table. */
struct store_recording {
	const char *id;           /* recording id (required) */
	const char *layout;       /* "proxima-recording/1", "adt", "aria-mps", "egoexo4d" (required) */
	const char *root;         /* folder it was loaded from, or NULL */
	int64_t t0_ns, t1_ns;     /* time span, device ns */
	const char *summary_json; /* JSON object (recording summary), or NULL */
};

/*
 * Inserts the recording, or updates layout, root, span and summary of an
 * existing one with the same id (added_at is kept). Returns 0, ENG_EINVAL
 * (missing id/layout, summary_json not JSON) or ENG_EDB.
 */
int store_recording_put(struct store *st, const struct store_recording *rec);

/*
 * The recording as a cJSON object {id, layout, root, t0_ns, t1_ns,
 * summary (parsed), added_at}. Returns ENG_ENOTFOUND when there is none.
 */
int store_recording_get(struct store *st, const char *id, struct cJSON **out);

/*
 * Every stored recording as a cJSON array of {id, layout, root, t0_ns,
 * t1_ns}, ordered by id. The caller owns *out. Returns 0, ENG_ENOMEM or
 * ENG_EDB.
 */
int store_recording_list(struct store *st, struct cJSON **out);

/*
 * Records the start of a generation run (status "running", started_at
 * now) and gives its id (>= 1) in *run_id. Any string may be NULL;
 * config_json, when given, must be JSON. Returns 0, ENG_EINVAL or ENG_EDB.
 */
int store_run_begin(struct store *st, const char *config_json,
		    const char *brain, const char *model, int64_t seed,
		    const char *engine_version, int64_t *run_id);

/*
 * Records the end of a run: finished_at now, status (e.g. "ok", "failed",
 * "interrupted"; required) and counts_json (JSON or NULL). Returns 0,
 * ENG_EINVAL, ENG_ENOTFOUND (no such run) or ENG_EDB.
 */
int store_run_finish(struct store *st, int64_t run_id, const char *status,
		     const char *counts_json);

/*
 * The runs whose status is still "running" (finished, killed or crashed
 * processes alike) as a cJSON array of {id, config (parsed), started_at},
 * oldest first. generate marks those of dead processes "interrupted".
 * The caller owns *out. Returns 0, ENG_ENOMEM or ENG_EDB.
 */
int store_run_list_running(struct store *st, struct cJSON **out);

/*
 * Every run, oldest first, as a cJSON array of {id, started_at,
 * finished_at, config (parsed, or null), brain, model, seed,
 * engine_version, status} (SQL NULL is JSON null). The caller owns *out.
 * Returns 0, ENG_ENOMEM or ENG_EDB.
 */
int store_run_list(struct store *st, struct cJSON **out);

/*
 * The config_json (caller frees it) and seed of the latest run that was a
 * generate (config "regenerate" false or absent), for regenerate to reuse
 * its settings. Returns 0, ENG_ENOTFOUND when there is none, ENG_ENOMEM or
 * ENG_EDB.
 */
int store_run_last_generate(struct store *st, char **config_json, int64_t *seed);

/* ================================ QAs ================================ */

/*
 * One QA, mirroring the qa table (plus its trace). Fields marked "in" are
 * read by store_qa_put(); fields marked "out" are ignored by it and filled
 * by store_qa_iter(). JSON fields hold JSON text.
 */
struct store_qa {
	const char *id;            /* in: 16 or more lowercase hex digits, stable */
	int64_t run_id;            /* in: runs.id, or 0 for none */
	const char *recording_id;  /* in: recordings.id (must exist) */
	const char *category;      /* in: "intention", "exploration", ... */
	const char *subtask;       /* in: "head_turn", "navigate", ... (no category) */
	const char *metric;        /* in: "approx" or "relative" */
	int64_t t_ns;              /* in: the current frame x_T, device ns */
	int64_t clip_start_ns;     /* in: clip start, device ns */
	int64_t clip_end_ns;       /* in: clip end, device ns */
	const char *frames_json;   /* in: array of frame times (ns), or NULL */
	const char *target;        /* in: target object id/name, or NULL */
	const char *question;      /* in: question text (required) */
	const char *options_json;  /* in: array of option strings (required) */
	int answer_index;          /* in: 0-based key into options, -1 for none */
	const char *answer_json;   /* in: structured answer, or NULL */
	const char *gt_json;       /* in: tool-computed ground truth, or NULL */
	const char *qc_json;       /* in: QC results ("z": answer-length z), or NULL */
	const char *trace_json;    /* in: agent session, or NULL for no trace */
	const char *status;        /* in: NULL/"pending", or "dropped"; out: status */
	const char *drop_reason;   /* in: why it was dropped, or NULL */
	const char *question_edited; /* out: reviewer's wording, or NULL */
	const char *created_at;    /* out */
	const char *updated_at;    /* out */
};

/* What store_qa_put() did, in *inserted. */
enum store_put_result {
	STORE_PUT_KEPT = 0,     /* the id existed and was left as it was */
	STORE_PUT_NEW = 1,      /* a new row was inserted */
	STORE_PUT_REPLACED = 2  /* a superseded row was replaced */
};

/*
 * Stores a generated QA (and its trace when trace_json is set).
 * - New id: the row is inserted with qa->status (pending unless "dropped")
 *   and *inserted = STORE_PUT_NEW.
 * - Existing id with status "superseded": the row is REPLACED in place:
 *   every generated field (run, recording, category ... qc, status,
 *   drop_reason) takes the new value, question_edited is cleared,
 *   created_at is kept, updated_at is now, and the trace is replaced (or
 *   removed when trace_json is NULL). Its reviews are kept.
 *   *inserted = STORE_PUT_REPLACED.
 * - Existing id with any other status (pending, dropped, approved,
 *   rejected, edited, conflict): nothing changes; *inserted = STORE_PUT_KEPT. So the
 *   same generation run twice adds nothing, and generation never modifies
 *   a reviewed QA.
 * inserted may be NULL. Returns 0; ENG_EINVAL naming the field (bad id,
 * missing field, metric or status not allowed, category or subtask with
 * '.', ',' or '/', JSON field not JSON, options_json not an array of 2 to
 * 26 strings, answer_index out of range, clip start after clip end,
 * recording_id or run_id not in the store); ENG_EDB.
 */
int store_qa_put(struct store *st, const struct store_qa *qa, int *inserted);

/*
 * Marks the unreviewed QAs (status pending or dropped) of a category, and
 * of one recording when recording_id is not NULL, as "superseded", and
 * deletes the drops rows of the same category (and recording): regenerate
 * calls this before it stores the replacements, ideally in the same batch.
 * Reviewed QAs (approved, rejected, edited, conflict) and all reviews are
 * untouched.
 * Gives the number of QAs marked in *n (may be NULL). Returns 0, ENG_EINVAL
 * (category NULL) or ENG_EDB.
 */
int store_qa_supersede(struct store *st, const char *category,
		       const char *recording_id, int64_t *n);

/* Flags of store_qa_get(). */
enum store_get_flags {
	STORE_GET_REVIEWS = (1 << 0), /* add "reviews": [...] oldest first */
	STORE_GET_TRACE = (1 << 1)    /* add "trace": the parsed trace or null */
};

/*
 * The QA as a cJSON object: id, run_id, recording_id, category, subtask,
 * metric, t_ns, clip_start_ns, clip_end_ns, frames, target, question,
 * question_edited, options, answer_index, answer, gt, qc, status,
 * drop_reason, created_at, updated_at, n_reviews (SQL NULL is JSON null;
 * the *_json columns appear parsed under their names without "_json").
 * With STORE_GET_REVIEWS, "reviews" is an array of {id, reviewer,
 * decision, reason, blind_answer_index, edit_before, edit_after, note,
 * started_at, decided_at, time_ms}; with STORE_GET_TRACE, "trace".
 * Returns ENG_ENOTFOUND when there is no such QA.
 */
int store_qa_get(struct store *st, const char *id, unsigned flags,
		 struct cJSON **out);

/*
 * Which QAs a reader sees. Zero-initialise and set what you need; NULL
 * means "any". category, subtask, metric and status may be
 * comma-separated lists ("approved,edited") that match any of their
 * elements.
 */
struct store_filter {
	const char *category;
	const char *subtask;
	const char *metric;
	const char *status;
	const char *recording_id;
	const char *reviewer;     /* only QAs with a review by this reviewer */
	const char *not_reviewer; /* only QAs with no review by this reviewer */
	int64_t limit;            /* at most this many rows; 0 = no limit */
	int64_t offset;           /* skip this many rows first */
};

/*
 * One page of QAs matching filter (NULL = all), ordered by recording_id,
 * t_ns, id: {"total": matches ignoring limit/offset, "offset", "limit",
 * "items": [QA objects as store_qa_get() without reviews or trace]}.
 * Returns 0, ENG_EINVAL (negative limit/offset) or ENG_EDB.
 */
int store_qa_list(struct store *st, const struct store_filter *filter,
		  struct cJSON **out);

/*
 * The ids just before and after QA id in the order of store_qa_list()
 * among the QAs matching filter (limit and offset ignored), in *prev and
 * *next (free()), NULL at either end. The QA itself need not match the
 * filter (a queue of pending items still moves on after the item was
 * approved). Either pointer may be NULL when not wanted. Returns 0,
 * ENG_ENOTFOUND (no QA id) or ENG_EDB.
 */
int store_qa_neighbours(struct store *st, const struct store_filter *filter,
			const char *id, char **prev, char **next);

/*
 * Called by store_qa_iter() for each QA. The struct and its strings are
 * valid only during the call. Return 0 to go on; anything else stops the
 * iteration and store_qa_iter() returns that value. The callback may call
 * store readers, but not writers.
 */
typedef int (*store_qa_cb)(const struct store_qa *qa, void *ctx);

/*
 * Streams the QAs matching filter in store_qa_list() order (honouring
 * limit/offset) to cb, one row at a time without loading the set; the
 * trace is included only when with_trace is nonzero. Exporters use
 * question_edited when it is set. Returns 0, the callback's nonzero
 * value, ENG_EINVAL or ENG_EDB.
 */
int store_qa_iter(struct store *st, const struct store_filter *filter,
		  int with_trace, store_qa_cb cb, void *ctx);

/* ============================== Drops ============================== */

/* A candidate that failed QC or a check, counted by reason in stats. */
struct store_drop {
	int64_t run_id;           /* runs.id, or 0 */
	const char *recording_id; /* required */
	const char *category;     /* required */
	const char *subtask;      /* required */
	const char *metric;       /* required: "approx" or "relative" */
	const char *reason;       /* required: short stable code, "ambiguous_margin" */
	int64_t t_ns;             /* candidate's x_T, or 0 when none */
	const char *target;       /* or NULL */
	const char *detail;       /* what was said: the rejection, the failed tool calls; or NULL */
};

/*
 * Counts a dropped candidate. The same candidate (recording, category,
 * subtask, metric, reason, t_ns, target) is counted once however often it
 * is put, so a rerun adds nothing; *added (may be NULL) says whether this
 * put was the first. Returns 0, ENG_EINVAL or ENG_EDB.
 */
int store_drop_add(struct store *st, const struct store_drop *drop, bool *added);

/* store_drop_add() without *added. */
int store_drop_put(struct store *st, const struct store_drop *drop);

/* ============================== Reviews ============================== */

/* One reviewer action. */
struct store_review {
	const char *qa_id;        /* required */
	const char *reviewer;     /* required, non-empty */
	const char *decision;     /* "approve" | "reject" | "edit" | "flag" |
	                           * "note" | "answer" */
	const char *reason;       /* why (reject, flag), or NULL */
	int blind_answer_index;   /* the reviewer's own answer given before
	                           * seeing the key, 0-based; -1 when not blind */
	const char *edit_before;  /* edit: wording replaced; NULL = current */
	const char *edit_after;   /* edit: the new question wording (required) */
	const char *note;         /* free text, or NULL */
	int64_t started_ms;       /* Unix ms the item was shown, 0 = unknown */
	int64_t decided_ms;       /* Unix ms of the decision, 0 = now */
	int adjudication;         /* nonzero: an approve, reject or edit that
	                           * settles the item (`review adjudicate`) */
};

/*
 * The review policy: how a QA's status follows from its reviews
 * (docs/review.md, Decisions). A reviewer's verdict on a QA is their
 * latest approve, reject or edit that is not an adjudication (latest by
 * decided_at, then by review id); flags, notes and blind answers are not
 * verdicts, and an edit accepts the QA with new wording. Then, unless the
 * QA is superseded:
 * - with an adjudication, the latest one decides: reject -> "rejected";
 *   approve or edit -> accepted;
 * - else no verdict leaves the status as it was (pending or dropped);
 * - else verdicts that all reject -> "rejected";
 * - else verdicts that all accept -> accepted;
 * - else (accept and reject both present) -> "conflict", which waits for
 *   an adjudication.
 * An accepted QA is "edited" when it has a wording and "approved" when
 * not. Its wording (question_edited) is the adjudication's own when that
 * is an edit, else the latest edit by a reviewer whose verdict accepts
 * (an approval accepts the wording the page showed); a conflict keeps
 * that wording too, and a rejected QA has none.
 */

/*
 * Appends a review and, in the same transaction, sets the QA's status
 * and question_edited by the review policy above (over every reviewer's
 * verdict, so one reviewer's decision never overwrites another's).
 * Reviews are never deleted or changed. Approve, reject and edit are
 * refused on a superseded QA (its content is stale). The text fields
 * must be valid UTF-8.
 * Gives the review's id in *review_id (may be NULL). Returns 0;
 * ENG_ENOTFOUND (no such QA); ENG_EINVAL (unknown decision, no reviewer,
 * edit without edit_after, answer without blind_answer_index, blind index
 * out of the QA's options, superseded QA, an adjudication that is not
 * approve, reject or edit, text that is not UTF-8); ENG_EDB.
 */
int store_review_add(struct store *st, const struct store_review *rev,
		     int64_t *review_id);

/*
 * Applies the review policy to every QA that has a verdict or an
 * adjudication (after a merge appended reviews, or a migration), in one
 * transaction (or the open batch). Gives the number of QAs whose status
 * or wording changed in *changed (may be NULL). Returns 0 or ENG_EDB.
 */
int store_review_derive_all(struct store *st, int64_t *changed);

/*
 * Each reviewer's current verdict on QA id, as a cJSON array ordered by
 * reviewer of {reviewer, decision, edit_after, decided_at, review_id},
 * and the latest adjudication (or null) in *adjudication, both for the
 * caller. Either out-pointer may be NULL. Returns 0, ENG_ENOTFOUND (no
 * such QA), ENG_ENOMEM or ENG_EDB.
 */
int store_review_verdicts(struct store *st, const char *id, struct cJSON **verdicts,
			  struct cJSON **adjudication);

/*
 * The queue's counts, cheap at any size (a table the schema keeps up to
 * date with triggers, not a scan): {"total": n, "by_status": {STATUS: n,
 * ...}, "groups": {"CATEGORY.SUBTASK/METRIC": {"total": n, STATUS: n,
 * ...}}} with every status present. They equal store_stats()'s counts.
 * Returns 0, ENG_ENOMEM or ENG_EDB.
 */
int store_review_counts(struct store *st, struct cJSON **out);

/* ============================== Statistics ============================== */

/*
 * Counts and QC figures of the whole store, as a cJSON object:
 * {
 *   "schema_version": 2, "total": QAs, "by_status": {STATUS: n, ...},
 *   "groups": {"CATEGORY.SUBTASK/METRIC": {"total": n, "pending": n,
 *       "approved": n, "rejected": n, "edited": n, "superseded": n,
 *       "dropped": n, "conflict": n, "acceptance": x|null,
 *       "mean_z": x|null, "z_n": n, "letters": [...], "drops": n,
 *       "drop_reasons": {REASON: n, ...}}, ...},
 *   "drops": {"total": n, "by_reason": {REASON: n, ...}},
 *   "letters": [{"options": k, "n": n, "counts": {"A": n, ...},
 *       "chi2": x, "df": k-1, "p": x}, ...],
 *   "mean_z": x|null, "z_n": n,
 *   "reviews": {"total": n, "acceptance": x|null,
 *       "reviewers": {NAME: {"reviews": n, "items": n,
 *           "median_time_ms": x|null}, ...},
 *       "blind": {"n": n, "agree": n, "rate": x|null},
 *       "kappa": [{"a": NAME, "b": NAME, "n": items, "agree": n,
 *           "kappa": x|null}, ...],
 *       "median_time_ms": x|null}
 * }
 * Every status appears in by_status and in each group, with 0 when none.
 * "Live" QAs (pending, approved, edited, conflict) feed the letter
 * balance and z:
 * letters has one entry per option count k present, counting answer_index
 * as letters A.., with the chi-square statistic against a uniform answer
 * over k options and its p-value (store_chi2_sf). acceptance =
 * (approved + edited) / (approved + edited + rejected); a conflict is not
 * decided yet. mean_z averages
 * qc_json's numeric "z" where present. Kappa compares, for each pair of
 * reviewers a < b, their last approve/reject/edit decision on each QA both
 * decided, as accept (approve, edit) or reject. Review times are
 * decided - started over reviews that have both.
 * Returns 0, ENG_ENOMEM or ENG_EDB.
 */
int store_stats(struct store *st, struct cJSON **out);

/*
 * Chi-square survival function P(X >= x) for df degrees of freedom, via
 * the regularized upper incomplete gamma function Q(df/2, x/2). Returns 1
 * for x <= 0 and NAN for df <= 0 or a NAN argument. This function can't
 * fail otherwise.
 */
double store_chi2_sf(double x, double df);

/*
 * Cohen's kappa of a k x k table of counts (row: rater a's category,
 * column: rater b's; row-major), in *kappa. Returns 0; ENG_EINVAL when
 * k < 1, a count is negative or the table is empty; ENG_ERANGE when kappa
 * is undefined (chance agreement 1: both raters used one same category).
 */
int store_kappa(const int64_t *table, int k, double *kappa);

/* ============================ LLM cache ============================ */

/*
 * The cached response for key (a request hash) in *response_json (free())
 * and its HTTP status in *status (may be NULL). Returns 0, ENG_ENOTFOUND
 * on a miss (without setting an error message), ENG_EDB or ENG_ENOMEM.
 */
int store_cache_get(struct store *st, const char *key, char **response_json,
		    int *status);

/*
 * Stores (or replaces) the response for key, with the request it answers
 * (JSON text or NULL), its HTTP status and how long it took. key and
 * response_json are required. Returns 0, ENG_EINVAL or ENG_EDB.
 */
int store_cache_put(struct store *st, const char *key, const char *request_json,
		    const char *response_json, int status, int64_t latency_ms);

/* ============================ Merging stores ============================ */

/* What store_merge() did with one input store. */
struct store_merge_stats {
	int64_t recordings_added; /* recordings new to the output */
	int64_t runs_added;       /* runs copied under new ids */
	int64_t runs_known;       /* runs the output already held (a repeated merge) */
	int64_t qa_added;         /* QA ids new to the output */
	int64_t qa_replaced;      /* ids whose row from the input won */
	int64_t qa_kept;          /* ids whose output row stayed as it was */
	int64_t reviews_added;    /* reviews appended to the output */
	int64_t reviews_known;    /* reviews the output already held */
	int64_t drops_added;      /* drops new to the output */
	int64_t cache_written;    /* llm_cache keys new to the output, or newer */
};

/*
 * Merges the store in file path into st, in one transaction (a failure
 * leaves st as it was), for sharded generation (docs/store.md, Sharding).
 * The input's content is not changed (SQLite may checkpoint its WAL).
 * - recordings: the union; a recording st already holds is kept as it is.
 * - runs: each input run is copied under a new id, and the QAs and drops
 *   that name it name the new id. A run that st already holds (same
 *   started_at, config, brain, model, seed and engine version) is not
 *   copied again; its status is taken from the input if st still has it
 *   "running" and the input does not.
 * - qa, by id: a new id is copied with its trace. For an id in both, the
 *   row that ranks higher is kept: a reviewed status (approved, rejected,
 *   edited) over any other, then the later updated_at, then st's row. The
 *   trace goes with the row. A reviewer's edited wording is kept when the
 *   other row has none and both ask the same generated question.
 * - reviews: appended in the input's order, except those st already holds
 *   (same qa_id, reviewer, decision and decided_at). None is dropped.
 * - drops: the union, counted once as store_drop_put() counts them.
 * - llm_cache: by key; of two entries for a key, the later created_at.
 * So merging the same input twice adds nothing. stats (may be NULL) gets
 * the counts of this input. Returns 0; ENG_ENOENT (no file path); ENG_EINVAL
 * (a batch is open, st is read-only, or path is st's own file);
 * ENG_ERANGE (the input's schema version is not this program's, newer or
 * older; the message names the file and both versions); ENG_EDB (path is
 * not a proxima store, or SQLite fails; the message names path).
 */
int store_merge(struct store *st, const char *path, struct store_merge_stats *stats);


/* ============================== Check ============================== */

/* Called once per problem found (kind: "integrity", "superseded_without_replacement", ...). */
typedef int (*store_check_fn)(void *ctx, const char *kind, const char *detail);

struct store_check_result {
	long checks;              /* checks run */
	long problems;            /* problems found, over every check */
	int64_t qas, reviews, runs; /* rows (when the file is sound enough to count) */
};

/*
 * Checks the store without changing it: SQLite's integrity check, foreign
 * keys, then (on a sound file) superseded QAs with no live QA in their
 * place, JSON columns that do not parse, answer indices outside the
 * options, qa_counts against the qa table, reviews and traces of QAs that
 * are not stored, QAs of recordings and runs that are not stored. Calls cb
 * for each problem (the first 20 of a check, then "... and N more").
 * Returns 0 (whatever was found: see res->problems), cb's non-zero value,
 * or ENG_EDB when a check cannot run.
 */
int store_check(struct store *st, store_check_fn cb, void *ctx, struct store_check_result *res);


/*
 * Checks a comma list of QA statuses (as --status takes it). Returns 0, or
 * ENG_EINVAL with err_msg() naming the first unknown item and the known
 * statuses. NULL and "" are valid (no filter).
 */
int store_status_list_check(const char *list);

#endif /* STORE_H */
