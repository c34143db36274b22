/* SPDX-License-Identifier: MIT */
/*
 * Human review over HTTP: a local web server (libmicrohttpd) that serves
 * the review page embedded from web/ and a JSON API over the store (the
 * queue, one item with its reviews, trace and neighbours, the review
 * actions, the statistics) plus the recordings' videos with Range
 * support. docs/review.md describes the API and the page.
 *
 * Security model: the server binds 127.0.0.1 unless told otherwise; a
 * loopback server answers only requests whose Host is a loopback name
 * (no DNS rebinding); state-changing requests need the header
 * X-Proxima-Token equal to the per-session random token that GET
 * /api/session hands to same-origin pages, and Content-Type
 * application/json (so a cross-site form cannot post); bodies are capped;
 * every answer carries Cache-Control: no-store, X-Content-Type-Options:
 * nosniff and a Content-Security-Policy without inline scripts; media
 * paths must resolve inside the recording folder.
 *
 * Threads: libmicrohttpd runs every request on its one internal polling
 * thread (MHD_USE_INTERNAL_POLLING_THREAD, no thread per connection), so
 * the server's one store handle is used by that thread only: it is opened
 * by review_server_start() and not touched by the caller until
 * review_server_stop() has joined the thread (engine/store.h: a handle
 * belongs to one thread at a time).
 */
#ifndef REVIEW_H
#define REVIEW_H

#include <stddef.h>
#include <stdint.h>

struct cJSON;
struct store;
struct store_filter;

/* Default body cap of state-changing requests (413 beyond), bytes. */
#define REVIEW_MAX_BODY (64u * 1024u)
/* Largest page of /api/queue. */
#define REVIEW_MAX_LIMIT 1000
/* Page size of /api/queue when the request gives none. */
#define REVIEW_DEFAULT_LIMIT 100
/* Longest reviewer name, bytes. */
#define REVIEW_MAX_REVIEWER 64

/* How to run a server. Zero-initialise and set what you need. */
struct review_config {
	const char *db_path;   /* the store (required; must exist) */
	const char *bind;      /* numeric IPv4/IPv6 address; NULL = "127.0.0.1" */
	int port;              /* TCP port, 0 = any free port */
	const char *reviewer;  /* name stored with each review (required) */
	size_t max_body;       /* body cap, bytes; 0 = REVIEW_MAX_BODY */
};

/* A running server; opaque. */
struct review_server;

/*
 * Opens the store (read-write; it must already exist), draws the session
 * token from getrandom(2) and starts listening. The server answers on
 * its own thread until review_server_stop(). Returns 0 and sets *out;
 * ENG_EINVAL (no db, bad bind address, bad port, reviewer empty or longer
 * than REVIEW_MAX_REVIEWER bytes or with control characters), ENG_ENOENT
 * (no such store), a store_open() error, ENG_EIO (no random bytes, or the
 * address cannot be bound: err_msg() names it), ENG_ENOMEM. On failure
 * nothing is left running and *out is untouched.
 */
int review_server_start(const struct review_config *cfg, struct review_server **out);

/* The TCP port the server listens on (the chosen one for port 0). Can't fail. */
int review_server_port(const struct review_server *s);

/* The session token: 32 lowercase hex digits. Valid until stop. Can't fail. */
const char *review_server_token(const struct review_server *s);

/*
 * The page's address, "http://127.0.0.1:PORT/" (IPv6 in brackets), in
 * buf (truncated to size). Can't fail.
 */
void review_server_url(const struct review_server *s, char *buf, size_t size);

/*
 * Stops listening, waits for the request in progress, closes the store
 * and frees s. review_server_stop(NULL) is a no-op. This function can't
 * fail.
 */
void review_server_stop(struct review_server *s);

/* =============== Helpers shared with `proxima review` =============== */

/*
 * The full record of QA id for review, as a cJSON object (caller owns):
 * store_qa_get() with reviews and trace, plus "group"
 * ("CATEGORY.SUBTASK/METRIC"), "prev" and "next" (ids in the order of
 * store_qa_list() among the QAs matching filter, or null; filter may be
 * NULL for all) and "video": {"url": "/media/ID", "file": the path as
 * recording.json gives it, "t0_ns", "start_s", "end_s"} with the clip's
 * bounds in video seconds, or null when the recording has none (or it is
 * unusable: "video_error" then says why). Returns 0, ENG_ENOTFOUND (no
 * such QA; err_msg() names it), ENG_ENOMEM or ENG_EDB.
 */
int review_item(struct store *st, const struct store_filter *filter, const char *id,
		struct cJSON **out);

/*
 * Finds the video of recording rec_id: the store's root folder of the
 * recording and the "video" entry of its native recording.json. On
 * success gives the resolved real path of the file in *path (free()),
 * the device time of its first frame in *t0_ns (the entry's t0_ns, else
 * the recording's t0_ns) and the path as written in *rel (free(); may be
 * NULL when not wanted). Returns 0; ENG_ENOENT (no root, no
 * recording.json, no video entry, no such file: the recording has no
 * usable video); ENG_EINVAL when the file resolves (through "..", an
 * absolute path or a symbolic link) outside the recording folder, or is
 * not a regular file; ENG_ENOTFOUND (no such recording); ENG_EPARSE (bad
 * recording.json); ENG_ENOMEM; ENG_EDB. err_msg() says which.
 */
int review_video_find(struct store *st, const char *rec_id, char **path, int64_t *t0_ns,
		      char **rel);

/*
 * Parses a blind answer given as a letter ("A".."Z", either case) or a
 * 1-based number ("1".."26") into a 0-based index in *index. Returns 0 or
 * ENG_EINVAL. Can't fail otherwise.
 */
int review_parse_option(const char *s, int *index);

#endif /* REVIEW_H */
