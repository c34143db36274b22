/* SPDX-License-Identifier: MIT */
/*
 * Human review over HTTP: a local web server (libmicrohttpd) that serves
 * the review page embedded from web/ and a JSON API over the store (the
 * queue, one item with its reviews, trace and neighbours, the review
 * actions, the statistics) plus the recordings' videos with Range
 * support. docs/review.md describes the API and the page.
 *
 * Security model: the server binds 127.0.0.1 unless told otherwise and
 * answers only requests whose Host is on its allow-list (the loopback
 * names and the bound address; off loopback also the machine's addresses
 * and name for a wildcard bind, and the names of allow_hosts), so DNS
 * rebinding cannot reach it. Off loopback every request also needs the
 * access cookie that only the printed link (GET /access/SECRET, a fresh
 * 128-bit secret) sets. State-changing requests need the header
 * X-Proxima-Token equal to the per-session random token that GET
 * /api/session hands to same-origin pages, and Content-Type
 * application/json (so a cross-site form cannot post); bodies are capped
 * and must be UTF-8 without NUL; every answer carries Cache-Control:
 * no-store, X-Content-Type-Options: nosniff and a Content-Security-Policy
 * without inline scripts; media paths must resolve inside the recording
 * folder; error messages name the server's files relative to the
 * recording (and the store by its file name only).
 *
 * Load: libmicrohttpd runs a pool of threads (epoll), holds at most
 * REVIEW_MAX_CONNECTIONS connections (fewer when the descriptor limit is
 * lower) and per_ip_limit per client address, and a watchdog thread
 * closes every connection that has not delivered a whole request within
 * request_timeout_ms of opening or of its previous answer, however slowly
 * it trickles bytes. So slow or idle clients cannot stop the others.
 *
 * Threads: each request takes a store handle from the server's pool (a
 * handle belongs to one thread at a time, engine/store/store.h) and
 * gives it back when answered; the pool opens one more when all are
 * busy. The caller must not use the store file's handles of the server.
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
/* Threads answering requests, when the config gives none. */
#define REVIEW_THREADS 4
/* Connections from one client address, when the config gives none. */
#define REVIEW_PER_IP 32
/* Most connections at once (fewer when RLIMIT_NOFILE is lower). */
#define REVIEW_MAX_CONNECTIONS 4096
/* Longest time to receive one whole request, ms, when the config gives none. */
#define REVIEW_REQUEST_MS 10000
/* Longest silence while a response is sent, s (libmicrohttpd's timeout). */
#define REVIEW_IDLE_S 30

/* How to run a server. Zero-initialise and set what you need. */
struct review_config {
	const char *db_path;   /* the store (required; must exist) */
	const char *bind;      /* numeric IPv4/IPv6 address; NULL = "127.0.0.1" */
	int port;              /* TCP port, 0 = any free port */
	const char *reviewer;  /* name stored with each review (required) */
	size_t max_body;       /* body cap, bytes; 0 = REVIEW_MAX_BODY */
	int threads;           /* 0 = REVIEW_THREADS; at most 64 */
	int per_ip_limit;      /* connections per client address; 0 = REVIEW_PER_IP */
	int request_timeout_ms; /* to receive one request; 0 = REVIEW_REQUEST_MS */
	const char *const *allow_hosts; /* more Host names answered off loopback,
	                                 * NULL-terminated; may be NULL */
	/*
	 * The blind audit for GET /api/report?audit=1, or NULL (that request
	 * is then refused with 501): called on a request thread with that
	 * thread's store handle and the statuses asked for; gives the audit
	 * JSON (audit_report_json(), engine/task/audit.h) in *out, which the
	 * server frees, and returns 0 or an ENG_* code with err_msg() set.
	 * `proxima review serve` passes one; this module sits below
	 * engine/task/ and cannot run the audit itself.
	 */
	int (*audit)(struct store *st, const char *status, void *ctx, struct cJSON **out);
	void *audit_ctx;       /* handed to audit */
	/*
	 * The frames an item shows (GET /media/ID/frame/K, decoded from the
	 * recording's video once and kept in a private folder: framecache.h):
	 * a QA's stored frame times, else `frames` over its clip (0 =
	 * EXPORT_DEFAULT_FRAMES), `frame_width` pixels wide (0 =
	 * VIDEO_DEFAULT_WIDTH).
	 */
	int frames;
	int frame_width;
};

/* A running server; opaque. */
struct review_server;

/*
 * Opens the store (read-write; it must already exist; an older schema is
 * migrated), draws the session token (and off loopback the access
 * secret) from getrandom(2) and starts listening. The server answers on
 * its own threads until review_server_stop(). Returns 0 and sets *out;
 * ENG_EINVAL (no db, bad bind address, bad port, reviewer empty or longer
 * than REVIEW_MAX_REVIEWER bytes or with control characters or not UTF-8,
 * threads or limits out of range), ENG_ENOENT
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
 * The page's address in buf (truncated to size): "http://ADDR:PORT/" on
 * loopback; off loopback the access link "http://HOST:PORT/access/SECRET"
 * whose HOST is the bound address, or for a wildcard bind the machine's
 * first address that is not loopback. IPv6 in brackets. Can't fail.
 */
void review_server_url(const struct review_server *s, char *buf, size_t size);

/* The access secret off loopback (32 hex digits), NULL on loopback. Can't fail. */
const char *review_server_access(const struct review_server *s);

/* Nonzero when the server is bound to a loopback address. Can't fail. */
int review_server_loopback(const struct review_server *s);

/*
 * The Host names answered besides the loopback names and the bound
 * address (empty on loopback), in *names; returns their number. Valid
 * until stop. Can't fail.
 */
size_t review_server_hosts(const struct review_server *s, const char *const **names);

/*
 * Stops listening, waits for the requests in progress, closes the store
 * handles and frees s. review_server_stop(NULL) is a no-op. This function
 * can't fail.
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
