/* SPDX-License-Identifier: MIT */
/*
 * The review server: libmicrohttpd on one internal thread, the embedded
 * page from web/, a JSON API over the store and the recordings' videos
 * with Range support. The contract and the security model are in
 * review.h; docs/review.md lists the routes.
 */
#include "review.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <microhttpd.h>

#include "banned.h"
#include "buf.h"
#include "embed.h"
#include "err.h"
#include "jsonfile.h"
#include "store.h"

#define TOKEN_HEADER "X-Proxima-Token"

/* The policy of every answer: no inline script or style, nothing foreign. */
static const char review_csp[] =
	"default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
	"media-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; "
	"form-action 'none'; frame-ancestors 'none'";

struct review_server {
	struct MHD_Daemon *d;      /* the daemon (its thread uses st) */
	struct store *st;          /* the store, used by the daemon's thread only */
	char token[33];            /* session token, 32 hex digits */
	char reviewer[REVIEW_MAX_REVIEWER + 1];
	char bind[INET6_ADDRSTRLEN];
	bool v6;                   /* bound to an IPv6 address */
	bool loopback;             /* bound to a loopback address: check Host */
	int port;                  /* bound port */
	size_t max_body;           /* body cap of POSTs */
	cJSON *counts;             /* cached store_stats() counts for the queue, or NULL */
	int64_t counts_ms;         /* when counts was computed */
};

/*
 * How long the queue's counts may be reused. The server's own writes drop
 * the cache at once; this only bounds how stale the counts get when
 * another process (the CLI, a generation run) writes to the store.
 */
#define COUNTS_TTL_MS 2000

/* Per-request state, kept in MHD's connection closure. */
struct req {
	struct buf body;           /* the request body so far */
	bool too_big;              /* the body passed the cap */
	bool answered;             /* a response was queued early */
};

/* ======================= Small helpers ======================= */

static int64_t now_ms(void)
{
	struct timeval tv;

	gettimeofday(&tv, NULL);
	return (int64_t)tv.tv_sec * 1000 + tv.tv_usec / 1000;
}

/* 16 to 64 lowercase hex digits: the only ids the routes accept. */
static bool id_ok(const char *s, size_t len)
{
	size_t i;

	if (len < 16 || len > 64)
		return false;
	for (i = 0; i < len; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

static const char *jstr(const cJSON *o, const char *k)
{
	return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, k));
}

static double jnum(const cJSON *o, const char *k, double dflt)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

	return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

int review_parse_option(const char *s, int *index)
{
	char *end;
	long v;

	if (!s || !*s)
		return ENG_EINVAL;
	if (!s[1] && ((s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= 'a' && s[0] <= 'z'))) {
		*index = (s[0] >= 'a') ? s[0] - 'a' : s[0] - 'A';
		return 0;
	}
	if (s[0] < '0' || s[0] > '9')
		return ENG_EINVAL;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < 1 || v > 26)
		return ENG_EINVAL;
	*index = (int)v - 1;
	return 0;
}

/* ======================= Videos ======================= */

/* True when real (a resolved path) is dir itself or inside it. */
static bool path_inside(const char *real, const char *dir)
{
	size_t n = strlen(dir);

	if (n == 1 && dir[0] == '/')
		return real[0] == '/';
	return !strncmp(real, dir, n) && (real[n] == '/' || real[n] == '\0');
}

int review_video_find(struct store *st, const char *rec_id, char **path, int64_t *t0_ns,
		      char **rel)
{
	cJSON *rec = NULL, *doc = NULL;
	const cJSON *video;
	const char *root, *file;
	char *root_real = NULL, *file_real = NULL, *rel_copy = NULL;
	struct buf joined;
	struct stat sb;
	int rc, e;

	buf_init(&joined, PATH_MAX + 1);
	rc = store_recording_get(st, rec_id, &rec);
	if (rc)
		goto out;
	root = jstr(rec, "root");
	if (!root || !*root) {
		rc = err_set(ENG_ENOENT, "recording '%s' has no folder in the store", rec_id);
		goto out;
	}
	root_real = realpath(root, NULL);
	if (!root_real) {
		e = errno;
		rc = err_set(e == ENOMEM ? ENG_ENOMEM : ENG_ENOENT, "'%s': %s", root, strerror(e));
		goto out;
	}
	rc = buf_addf(&joined, "%s/recording.json", root_real);
	if (rc)
		goto out;
	rc = jsonfile_read(buf_str(&joined), &doc);
	if (rc == ENG_ENOENT) {
		err_set(rc, "'%s': no recording.json, so no video", root);
		goto out;
	}
	if (rc)
		goto out;
	video = cJSON_GetObjectItemCaseSensitive(doc, "video");
	file = jstr(video, "path");
	if (!file || !*file) {
		rc = err_set(ENG_ENOENT, "'%s': recording.json names no video", buf_str(&joined));
		goto out;
	}
	if (file[0] == '/') {
		rc = err_set(ENG_EINVAL, "'%s': video path '%s' is absolute", buf_str(&joined), file);
		goto out;
	}
	buf_reset(&joined);
	rc = buf_addf(&joined, "%s/%s", root_real, file);
	if (rc)
		goto out;
	file_real = realpath(buf_str(&joined), NULL);
	if (!file_real) {
		e = errno;
		rc = err_set(e == ENOMEM ? ENG_ENOMEM : ENG_ENOENT, "'%s': %s", buf_str(&joined),
			     strerror(e));
		goto out;
	}
	if (!path_inside(file_real, root_real)) {
		rc = err_set(ENG_EINVAL, "video '%s' resolves outside the recording folder '%s'",
			     file, root_real);
		goto out;
	}
	if (stat(file_real, &sb) || !S_ISREG(sb.st_mode)) {
		rc = err_set(ENG_EINVAL, "video '%s' is not a regular file", file);
		goto out;
	}
	if (rel) {
		rel_copy = strdup(file);
		if (!rel_copy) {
			rc = ENG_ENOMEM;
			goto out;
		}
	}
	*t0_ns = cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(video, "t0_ns"))
		 ? (int64_t)jnum(video, "t0_ns", 0) : (int64_t)jnum(rec, "t0_ns", 0);
	*path = file_real;
	file_real = NULL;
	if (rel) {
		*rel = rel_copy;
		rel_copy = NULL;
	}
out:
	cJSON_Delete(rec);
	cJSON_Delete(doc);
	free(root_real);
	free(file_real);
	free(rel_copy);
	buf_release(&joined);
	return rc;
}

/* ======================= The item record ======================= */

static int add_video(struct store *st, cJSON *qa)
{
	const char *rec_id = jstr(qa, "recording_id"), *id = jstr(qa, "id");
	char *path = NULL, *rel = NULL, url[96];
	int64_t t0 = 0;
	cJSON *v;
	int rc;

	rc = review_video_find(st, rec_id, &path, &t0, &rel);
	if (rc == ENG_ENOMEM || rc == ENG_EDB)
		return rc;
	if (rc) {
		if (!cJSON_AddNullToObject(qa, "video"))
			return ENG_ENOMEM;
		if (rc != ENG_ENOENT && !cJSON_AddStringToObject(qa, "video_error", err_msg()))
			return ENG_ENOMEM;
		return 0;
	}
	snprintf(url, sizeof(url), "/media/%s", id);
	v = cJSON_AddObjectToObject(qa, "video");
	rc = (!v || !cJSON_AddStringToObject(v, "url", url) ||
	      !cJSON_AddStringToObject(v, "file", rel) ||
	      !cJSON_AddNumberToObject(v, "t0_ns", (double)t0) ||
	      !cJSON_AddNumberToObject(v, "start_s",
				       (jnum(qa, "clip_start_ns", 0) - (double)t0) / 1e9) ||
	      !cJSON_AddNumberToObject(v, "end_s",
				       (jnum(qa, "clip_end_ns", 0) - (double)t0) / 1e9))
	     ? ENG_ENOMEM : 0;
	free(path);
	free(rel);
	return rc;
}

/* "CATEGORY.SUBTASK/METRIC" added as "group". */
static int add_group(cJSON *qa)
{
	char g[256];

	snprintf(g, sizeof(g), "%s.%s/%s", jstr(qa, "category") ? jstr(qa, "category") : "",
		 jstr(qa, "subtask") ? jstr(qa, "subtask") : "",
		 jstr(qa, "metric") ? jstr(qa, "metric") : "");
	return cJSON_AddStringToObject(qa, "group", g) ? 0 : ENG_ENOMEM;
}

static int add_id_or_null(cJSON *o, const char *key, const char *id)
{
	if (id)
		return cJSON_AddStringToObject(o, key, id) ? 0 : ENG_ENOMEM;
	return cJSON_AddNullToObject(o, key) ? 0 : ENG_ENOMEM;
}

int review_item(struct store *st, const struct store_filter *filter, const char *id,
		cJSON **out)
{
	cJSON *qa = NULL;
	char *prev = NULL, *next = NULL;
	int rc;

	rc = store_qa_get(st, id, STORE_GET_REVIEWS | STORE_GET_TRACE, &qa);
	if (rc)
		return rc;
	rc = store_qa_neighbours(st, filter, id, &prev, &next);
	if (!rc)
		rc = add_id_or_null(qa, "prev", prev);
	if (!rc)
		rc = add_id_or_null(qa, "next", next);
	if (!rc)
		rc = add_group(qa);
	if (!rc)
		rc = add_video(st, qa);
	free(prev);
	free(next);
	if (rc) {
		cJSON_Delete(qa);
		return rc;
	}
	*out = qa;
	return 0;
}

/* ======================= Responses ======================= */

static void add_common_headers(struct MHD_Response *r, const char *ctype)
{
	MHD_add_response_header(r, "Content-Type", ctype);
	MHD_add_response_header(r, "Cache-Control", "no-store");
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(r, "Content-Security-Policy", review_csp);
	MHD_add_response_header(r, "X-Frame-Options", "DENY");
	MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
}

static enum MHD_Result send_mem(struct MHD_Connection *con, unsigned status,
				const char *ctype, const char *data, size_t len,
				enum MHD_ResponseMemoryMode mode, const char *allow)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	r = MHD_create_response_from_buffer(len, (void *)(uintptr_t)data, mode);
	if (!r) {
		if (mode == MHD_RESPMEM_MUST_FREE)
			free((void *)(uintptr_t)data);
		return MHD_NO;
	}
	add_common_headers(r, ctype);
	if (allow)
		MHD_add_response_header(r, "Allow", allow);
	ret = MHD_queue_response(con, status, r);
	MHD_destroy_response(r);
	return ret;
}

/* Sends j (consumed) as JSON. */
static enum MHD_Result send_json(struct MHD_Connection *con, unsigned status, cJSON *j)
{
	char *text = j ? cJSON_PrintUnformatted(j) : NULL;
	char *copy;
	size_t len;

	cJSON_Delete(j);
	if (!text)
		return send_mem(con, 500, "application/json", "{\"error\":\"out of memory\"}",
				25, MHD_RESPMEM_PERSISTENT, NULL);
	/* hand MHD a malloc()ed copy: cJSON's allocator need not be malloc */
	len = strlen(text);
	copy = malloc(len + 1);
	if (copy)
		memcpy(copy, text, len + 1);
	cJSON_free(text);
	if (!copy)
		return MHD_NO;
	return send_mem(con, status, "application/json", copy, len, MHD_RESPMEM_MUST_FREE, NULL);
}

static enum MHD_Result send_error_allow(struct MHD_Connection *con, unsigned status,
					const char *msg, const char *allow)
{
	cJSON *j = cJSON_CreateObject();
	char *text;
	struct MHD_Response *r;
	enum MHD_Result ret;

	if (!j || !cJSON_AddStringToObject(j, "error", msg)) {
		cJSON_Delete(j);
		return MHD_NO;
	}
	text = cJSON_PrintUnformatted(j);
	cJSON_Delete(j);
	if (!text)
		return MHD_NO;
	r = MHD_create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_COPY);
	cJSON_free(text);
	if (!r)
		return MHD_NO;
	add_common_headers(r, "application/json");
	if (allow)
		MHD_add_response_header(r, "Allow", allow);
	ret = MHD_queue_response(con, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result send_error(struct MHD_Connection *con, unsigned status, const char *msg)
{
	return send_error_allow(con, status, msg, NULL);
}

/* Maps a library error to an HTTP status and sends err_msg(). */
static enum MHD_Result send_eng_error(struct MHD_Connection *con, int rc)
{
	unsigned status = rc == ENG_ENOTFOUND || rc == ENG_ENOENT ? 404
			  : rc == ENG_EINVAL || rc == ENG_ERANGE ? 400 : 500;
	const char *m = err_msg();

	return send_error(con, status, *m ? m : eng_strerror(rc));
}

/* ======================= Static files ======================= */

static const char *content_type_of(const char *name)
{
	const char *dot = strrchr(name, '.');

	if (!dot)
		return NULL;
	if (!strcmp(dot, ".html"))
		return "text/html; charset=utf-8";
	if (!strcmp(dot, ".css"))
		return "text/css; charset=utf-8";
	if (!strcmp(dot, ".js"))
		return "text/javascript; charset=utf-8";
	return NULL;
}

/*
 * "/" is the page; "/NAME" is web/NAME when NAME is a plain file name of
 * the embedded table (no '/', so nothing outside web/ can be named).
 */
static enum MHD_Result serve_static(struct MHD_Connection *con, const char *url)
{
	const char *name = strcmp(url, "/") ? url + 1 : "review.html";
	const struct embed_file *f;
	const char *ctype;
	char path[128];

	if (strchr(name, '/') || strstr(name, "..") || strlen(name) > 64)
		return send_error(con, 404, "no such page");
	ctype = content_type_of(name);
	snprintf(path, sizeof(path), "web/%s", name);
	f = ctype ? embed_find(path) : NULL;
	if (!f)
		return send_error(con, 404, "no such page");
	return send_mem(con, 200, ctype, f->data, f->len, MHD_RESPMEM_PERSISTENT, NULL);
}

/* ======================= Media ======================= */

static const char *video_type(const char *path)
{
	static const char *const map[][2] = {
		{ ".mp4", "video/mp4" }, { ".m4v", "video/mp4" }, { ".webm", "video/webm" },
		{ ".ogv", "video/ogg" }, { ".ogg", "video/ogg" }, { ".mov", "video/quicktime" },
		{ ".mkv", "video/x-matroska" },
	};
	const char *dot = strrchr(path, '.');
	size_t i;

	for (i = 0; dot && i < ARRAY_SIZE(map); i++)
		if (!strcasecmp(dot, map[i][0]))
			return map[i][1];
	return "application/octet-stream";
}

/*
 * One "bytes=a-b", "bytes=a-" or "bytes=-n" range over a file of size
 * bytes into [*first, *last]. Returns 1 for a range, 0 to send the whole
 * file (no header, or a form this server does not split: several ranges),
 * -1 when the range cannot be satisfied.
 */
static int parse_range(const char *h, uint64_t size, uint64_t *first, uint64_t *last)
{
	unsigned long long a, b;
	char *end;

	if (!h || strncmp(h, "bytes=", 6) || strchr(h, ','))
		return 0;
	h += 6;
	while (*h == ' ')
		h++;
	if (*h == '-') {
		errno = 0;
		b = strtoull(h + 1, &end, 10);
		if (errno || end == h + 1 || *end)
			return 0;
		if (b == 0 || size == 0)
			return -1;
		*first = b >= size ? 0 : size - b;
		*last = size - 1;
		return 1;
	}
	if (*h < '0' || *h > '9')
		return 0;
	errno = 0;
	a = strtoull(h, &end, 10);
	if (errno || *end != '-')
		return 0;
	h = end + 1;
	if (!*h) {
		b = size ? size - 1 : 0;
	} else {
		if (*h < '0' || *h > '9')
			return 0;
		b = strtoull(h, &end, 10);
		if (errno || *end)
			return 0;
	}
	if (a >= size || b < a)
		return -1;
	if (b >= size)
		b = size - 1;
	*first = a;
	*last = b;
	return 1;
}

static enum MHD_Result serve_media(struct review_server *s, struct MHD_Connection *con,
				   const char *id)
{
	cJSON *qa = NULL;
	char *path = NULL, range_hdr[96];
	const char *ctype;
	int64_t t0 = 0;
	uint64_t first = 0, last = 0, len;
	struct MHD_Response *r;
	enum MHD_Result ret;
	struct stat sb;
	int rc, fd = -1, ranged;
	unsigned status = 200;

	if (!id_ok(id, strlen(id)))
		return send_error(con, 404, "no such item");
	err_clear();
	rc = store_qa_get(s->st, id, 0, &qa);
	if (!rc)
		rc = review_video_find(s->st, jstr(qa, "recording_id"), &path, &t0, NULL);
	cJSON_Delete(qa);
	if (rc == ENG_EINVAL)
		return send_error(con, 403, err_msg());
	if (rc)
		return send_eng_error(con, rc == ENG_EPARSE ? ENG_ENOENT : rc);
	/* O_NOFOLLOW: a symbolic link swapped in after realpath() is refused */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	ctype = video_type(path);
	free(path);
	if (fd < 0)
		return send_error(con, 403, "the video cannot be opened");
	if (fstat(fd, &sb) || !S_ISREG(sb.st_mode)) {
		close(fd);
		return send_error(con, 403, "the video is not a regular file");
	}
	ranged = parse_range(MHD_lookup_connection_value(con, MHD_HEADER_KIND, "Range"),
			     (uint64_t)sb.st_size, &first, &last);
	if (ranged < 0) {
		close(fd);
		snprintf(range_hdr, sizeof(range_hdr), "bytes */%llu", (unsigned long long)sb.st_size);
		r = MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
		if (!r)
			return MHD_NO;
		add_common_headers(r, "text/plain");
		MHD_add_response_header(r, "Content-Range", range_hdr);
		ret = MHD_queue_response(con, MHD_HTTP_RANGE_NOT_SATISFIABLE, r);
		MHD_destroy_response(r);
		return ret;
	}
	if (ranged) {
		status = MHD_HTTP_PARTIAL_CONTENT;
		len = last - first + 1;
	} else {
		first = 0;
		len = (uint64_t)sb.st_size;
	}
	/* the response owns fd from here on */
	r = MHD_create_response_from_fd_at_offset64(len, fd, first);
	if (!r) {
		close(fd);
		return MHD_NO;
	}
	add_common_headers(r, ctype);
	MHD_add_response_header(r, "Accept-Ranges", "bytes");
	if (ranged) {
		snprintf(range_hdr, sizeof(range_hdr), "bytes %llu-%llu/%llu",
			 (unsigned long long)first, (unsigned long long)last,
			 (unsigned long long)sb.st_size);
		MHD_add_response_header(r, "Content-Range", range_hdr);
	}
	ret = MHD_queue_response(con, status, r);
	MHD_destroy_response(r);
	return ret;
}

/* ======================= API: reads ======================= */

static const char *arg(struct MHD_Connection *con, const char *name)
{
	const char *v = MHD_lookup_connection_value(con, MHD_GET_ARGUMENT_KIND, name);

	return v && *v ? v : NULL;
}

/* A non-negative integer query argument, dflt when absent. */
static int arg_i64(struct MHD_Connection *con, const char *name, int64_t dflt, int64_t *out)
{
	const char *v = arg(con, name);
	char *end;
	long long x;

	if (!v) {
		*out = dflt;
		return 0;
	}
	errno = 0;
	x = strtoll(v, &end, 10);
	if (errno || *end || x < 0)
		return err_set(ENG_EINVAL, "'%s' must be a non-negative integer", name);
	*out = x;
	return 0;
}

/* The queue filter of the request's query (pointers into MHD's copy). */
static void read_filter(struct MHD_Connection *con, struct store_filter *f)
{
	memset(f, 0, sizeof(*f));
	f->category = arg(con, "category");
	f->subtask = arg(con, "subtask");
	f->metric = arg(con, "metric");
	f->status = arg(con, "status");
	f->recording_id = arg(con, "recording");
	f->reviewer = arg(con, "reviewer");
	f->not_reviewer = arg(con, "not_reviewer");
}

static enum MHD_Result api_session(struct review_server *s, struct MHD_Connection *con)
{
	cJSON *j = cJSON_CreateObject();
	const char *db = store_path(s->st), *slash = strrchr(db, '/');

	if (!j || !cJSON_AddStringToObject(j, "reviewer", s->reviewer) ||
	    !cJSON_AddStringToObject(j, "token", s->token) ||
	    !cJSON_AddStringToObject(j, "token_header", TOKEN_HEADER) ||
	    !cJSON_AddStringToObject(j, "store", slash ? slash + 1 : db) ||
	    !cJSON_AddNumberToObject(j, "max_body", (double)s->max_body)) {
		cJSON_Delete(j);
		return send_error(con, 500, "out of memory");
	}
	return send_json(con, 200, j);
}

/* Keeps only what the queue shows of a listed QA (never the key). */
static int slim_item(cJSON *it)
{
	static const char *const drop[] = {
		"run_id", "clip_start_ns", "clip_end_ns", "frames", "options", "answer_index",
		"answer", "gt", "qc", "drop_reason", "created_at", "updated_at",
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(drop); i++)
		cJSON_DeleteItemFromObjectCaseSensitive(it, drop[i]);
	return add_group(it);
}

/*
 * {"total", "by_status", "groups"} of store_stats(), from the cache when it
 * is fresh (store_stats() reads every row: ~30 ms for 10,000 QAs).
 */
static int queue_counts(struct review_server *s, cJSON **out)
{
	cJSON *stats = NULL, *c;
	int64_t now = now_ms();
	int rc;

	if (!s->counts || now - s->counts_ms > COUNTS_TTL_MS || now < s->counts_ms) {
		rc = store_stats(s->st, &stats);
		if (rc)
			return rc;
		c = cJSON_CreateObject();
		if (!c || !cJSON_AddNumberToObject(c, "total", jnum(stats, "total", 0))) {
			cJSON_Delete(c);
			cJSON_Delete(stats);
			return ENG_ENOMEM;
		}
		cJSON_AddItemToObject(c, "by_status",
				      cJSON_DetachItemFromObjectCaseSensitive(stats, "by_status"));
		cJSON_AddItemToObject(c, "groups",
				      cJSON_DetachItemFromObjectCaseSensitive(stats, "groups"));
		cJSON_Delete(stats);
		cJSON_Delete(s->counts);
		s->counts = c;
		s->counts_ms = now;
	}
	*out = cJSON_Duplicate(s->counts, 1);
	return *out ? 0 : ENG_ENOMEM;
}

static enum MHD_Result api_queue(struct review_server *s, struct MHD_Connection *con)
{
	struct store_filter f;
	cJSON *page = NULL, *counts = NULL, *recs = NULL, *ids, *it;
	int rc;

	read_filter(con, &f);
	err_clear();
	rc = arg_i64(con, "offset", 0, &f.offset);
	if (!rc)
		rc = arg_i64(con, "limit", REVIEW_DEFAULT_LIMIT, &f.limit);
	if (rc)
		return send_error(con, 400, err_msg());
	if (f.limit == 0 || f.limit > REVIEW_MAX_LIMIT)
		f.limit = f.limit ? REVIEW_MAX_LIMIT : REVIEW_DEFAULT_LIMIT;
	rc = store_qa_list(s->st, &f, &page);
	if (!rc)
		rc = queue_counts(s, &counts);
	if (!rc)
		rc = store_recording_list(s->st, &recs);
	if (rc)
		goto fail;
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(page, "items")) {
		rc = slim_item(it);
		if (rc)
			goto fail;
	}
	if (!cJSON_AddItemToObject(page, "counts", counts)) {
		rc = ENG_ENOMEM;
		goto fail;
	}
	counts = NULL;
	ids = cJSON_AddArrayToObject(page, "recordings");
	if (!ids) {
		rc = ENG_ENOMEM;
		goto fail;
	}
	cJSON_ArrayForEach(it, recs)
		if (jstr(it, "id"))
			cJSON_AddItemToArray(ids, cJSON_CreateString(jstr(it, "id")));
	cJSON_Delete(recs);
	return send_json(con, 200, page);
fail:
	cJSON_Delete(page);
	cJSON_Delete(counts);
	cJSON_Delete(recs);
	return send_eng_error(con, rc);
}

/* What blind mode must not show before the reviewer answers. */
static void strip_for_blind(cJSON *qa)
{
	static const char *const drop[] = {
		"answer_index", "answer", "gt", "qc", "trace", "reviews",
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(drop); i++)
		cJSON_DeleteItemFromObjectCaseSensitive(qa, drop[i]);
	cJSON_AddTrueToObject(qa, "blind");
}

static enum MHD_Result api_item(struct review_server *s, struct MHD_Connection *con,
				const char *id)
{
	struct store_filter f;
	const char *blind = arg(con, "blind");
	cJSON *qa = NULL;
	int rc;

	if (!id_ok(id, strlen(id)))
		return send_error(con, 404, "no such item");
	read_filter(con, &f);
	err_clear();
	rc = review_item(s->st, &f, id, &qa);
	if (rc)
		return send_eng_error(con, rc);
	if (blind && strcmp(blind, "0"))
		strip_for_blind(qa);
	return send_json(con, 200, qa);
}

static enum MHD_Result api_stats(struct review_server *s, struct MHD_Connection *con)
{
	cJSON *stats = NULL;
	int rc;

	err_clear();
	rc = store_stats(s->st, &stats);
	if (rc)
		return send_eng_error(con, rc);
	return send_json(con, 200, stats);
}

/* ======================= API: actions ======================= */

static bool token_ok(const struct review_server *s, const char *tok)
{
	unsigned diff = 0;
	size_t i;

	if (!tok || strlen(tok) != 32)
		return false;
	for (i = 0; i < 32; i++) /* constant time */
		diff |= (unsigned)(tok[i] ^ s->token[i]);
	return diff == 0;
}

static bool json_type_ok(const char *ct)
{
	static const char want[] = "application/json";
	size_t n = sizeof(want) - 1;

	if (!ct || strncasecmp(ct, want, n))
		return false;
	return ct[n] == '\0' || ct[n] == ';' || ct[n] == ' ';
}

/* A string member, or NULL; ENG_EINVAL when present with another type. */
static int body_str(const cJSON *body, const char *key, const char **out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(body, key);

	*out = NULL;
	if (!v || cJSON_IsNull(v))
		return 0;
	if (!cJSON_IsString(v))
		return err_set(ENG_EINVAL, "'%s' must be a string", key);
	*out = v->valuestring;
	return 0;
}

/* True when s holds something besides white space. */
static bool has_text(const char *s)
{
	for (; s && *s; s++)
		if (*s != ' ' && *s != '\t' && *s != '\n' && *s != '\r')
			return true;
	return false;
}

/* Fills rev from the action name and the body; the strings point into body. */
static int read_action(const char *action, const cJSON *body, struct store_review *rev)
{
	const cJSON *v;
	const char *reason = NULL, *note = NULL, *question = NULL;
	int rc;

	rc = body_str(body, "reason", &reason);
	if (!rc)
		rc = body_str(body, "note", &note);
	if (!rc)
		rc = body_str(body, "question", &question);
	if (rc)
		return rc;
	v = cJSON_GetObjectItemCaseSensitive(body, "started_at");
	if (v && !cJSON_IsNull(v)) {
		int64_t now = now_ms();

		if (!cJSON_IsNumber(v) || v->valuedouble <= 0 || v->valuedouble > 1e15)
			return err_set(ENG_EINVAL, "'started_at' must be Unix milliseconds");
		rev->started_ms = (int64_t)v->valuedouble;
		if (rev->started_ms > now) /* a clock a little ahead: no negative times */
			rev->started_ms = now;
	}
	rev->reason = reason;
	rev->note = note;
	if (!strcmp(action, "approve")) {
		rev->decision = "approve";
	} else if (!strcmp(action, "reject")) {
		rev->decision = "reject";
		if (!has_text(reason))
			return err_set(ENG_EINVAL, "reject needs a 'reason'");
	} else if (!strcmp(action, "edit")) {
		rev->decision = "edit";
		if (!has_text(question))
			return err_set(ENG_EINVAL, "edit needs the new 'question'");
		rev->edit_after = question;
	} else if (!strcmp(action, "flag")) {
		rev->decision = "flag";
		if (!has_text(reason))
			rev->reason = "ambiguous";
	} else if (!strcmp(action, "note")) {
		rev->decision = "note";
		if (!has_text(note))
			return err_set(ENG_EINVAL, "note needs a 'note'");
	} else if (!strcmp(action, "answer")) {
		rev->decision = "answer";
		v = cJSON_GetObjectItemCaseSensitive(body, "answer_index");
		if (!cJSON_IsNumber(v) || v->valuedouble != (double)(int)v->valuedouble ||
		    v->valuedouble < 0 || v->valuedouble > 25)
			return err_set(ENG_EINVAL, "answer needs 'answer_index', an option index 0..25");
		rev->blind_answer_index = (int)v->valuedouble;
	} else {
		return ENG_ENOTFOUND;
	}
	return 0;
}

static enum MHD_Result api_action(struct review_server *s, struct MHD_Connection *con,
				  const char *id, const char *action, struct req *rq)
{
	struct store_review rev;
	cJSON *body = NULL, *res = NULL, *qa = NULL;
	int64_t review_id = 0;
	int rc;

	if (!token_ok(s, MHD_lookup_connection_value(con, MHD_HEADER_KIND, TOKEN_HEADER)))
		return send_error(con, 403, "missing or wrong " TOKEN_HEADER);
	if (!json_type_ok(MHD_lookup_connection_value(con, MHD_HEADER_KIND, "Content-Type")))
		return send_error(con, 415, "the body must be application/json");
	if (rq->too_big)
		return send_error(con, 413, "the body is too large");
	if (!id_ok(id, strlen(id)))
		return send_error(con, 404, "no such item");
	body = rq->body.len ? cJSON_ParseWithLength(rq->body.ptr, rq->body.len)
			    : cJSON_CreateObject();
	if (!cJSON_IsObject(body)) {
		cJSON_Delete(body);
		return send_error(con, 400, "the body must be a JSON object");
	}
	memset(&rev, 0, sizeof(rev));
	rev.qa_id = id;
	rev.reviewer = s->reviewer;
	rev.blind_answer_index = -1;
	err_clear();
	rc = read_action(action, body, &rev);
	if (rc == ENG_ENOTFOUND) {
		cJSON_Delete(body);
		return send_error(con, 404, "no such action");
	}
	if (!rc)
		rc = store_review_add(s->st, &rev, &review_id);
	cJSON_Delete(body);
	if (!rc) {
		cJSON_Delete(s->counts);
		s->counts = NULL;
	}
	if (!rc)
		rc = store_qa_get(s->st, id, 0, &qa);
	if (rc)
		return send_eng_error(con, rc);
	res = cJSON_CreateObject();
	if (!res || !cJSON_AddNumberToObject(res, "review_id", (double)review_id) ||
	    !cJSON_AddStringToObject(res, "id", id) ||
	    !cJSON_AddStringToObject(res, "decision", rev.decision) ||
	    !cJSON_AddItemToObject(res, "status",
				   cJSON_DetachItemFromObjectCaseSensitive(qa, "status")) ||
	    !cJSON_AddItemToObject(res, "question_edited",
				   cJSON_DetachItemFromObjectCaseSensitive(qa, "question_edited"))) {
		cJSON_Delete(res);
		res = NULL;
	}
	cJSON_Delete(qa);
	return send_json(con, 200, res);
}

/* ======================= Routing ======================= */

/* A loopback server answers only to a loopback Host (no DNS rebinding). */
static bool host_ok(const struct review_server *s, struct MHD_Connection *con)
{
	static const char *const names[] = { "localhost", "127.0.0.1", "::1" };
	const char *h = MHD_lookup_connection_value(con, MHD_HEADER_KIND, "Host");
	const char *end;
	char name[256];
	size_t n, i;

	if (!s->loopback || !h)
		return true;
	if (h[0] == '[') {
		end = strchr(h, ']');
		if (!end)
			return false;
		h++;
	} else {
		end = strchr(h, ':');
		if (!end)
			end = h + strlen(h);
	}
	n = (size_t)(end - h);
	if (n >= sizeof(name))
		return false;
	memcpy(name, h, n);
	name[n] = '\0';
	for (i = 0; i < ARRAY_SIZE(names); i++)
		if (!strcasecmp(name, names[i]))
			return true;
	return !strcmp(name, s->bind);
}

/* "/api/qa/ID" -> id; "/api/qa/ID/ACTION" -> id and action. */
static bool split_qa_path(const char *url, char *id, size_t id_size, const char **action)
{
	const char *p = url + strlen("/api/qa/"), *slash = strchr(p, '/');
	size_t n = slash ? (size_t)(slash - p) : strlen(p);

	if (n == 0 || n >= id_size)
		return false;
	memcpy(id, p, n);
	id[n] = '\0';
	*action = slash ? slash + 1 : NULL;
	return !*action || (**action && !strchr(*action, '/'));
}

static enum MHD_Result route(struct review_server *s, struct MHD_Connection *con,
			     const char *url, const char *method, struct req *rq)
{
	bool get = !strcmp(method, "GET") || !strcmp(method, "HEAD");
	bool post = !strcmp(method, "POST");
	const char *action = NULL;
	char id[80];

	if (!host_ok(s, con))
		return send_error(con, 403, "this server answers only to a loopback Host");
	if (!strncmp(url, "/api/qa/", 8)) {
		if (!split_qa_path(url, id, sizeof(id), &action))
			return send_error(con, 404, "no such route");
		if (action) {
			if (!post)
				return send_error_allow(con, 405, "use POST", "POST");
			return api_action(s, con, id, action, rq);
		}
		if (!get)
			return send_error_allow(con, 405, "use GET", "GET, HEAD");
		return api_item(s, con, id);
	}
	if (!get)
		return send_error_allow(con, 405, "use GET", "GET, HEAD");
	if (!strcmp(url, "/api/session"))
		return api_session(s, con);
	if (!strcmp(url, "/api/queue"))
		return api_queue(s, con);
	if (!strcmp(url, "/api/stats"))
		return api_stats(s, con);
	if (!strncmp(url, "/media/", 7))
		return serve_media(s, con, url + 7);
	if (!strncmp(url, "/api/", 5))
		return send_error(con, 404, "no such route");
	return serve_static(con, url);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *con, const char *url,
				  const char *method, const char *version,
				  const char *upload_data, size_t *upload_data_size,
				  void **con_cls)
{
	struct review_server *s = cls;
	struct req *rq = *con_cls;

	if (!rq) {
		const char *cl = MHD_lookup_connection_value(con, MHD_HEADER_KIND,
							     "Content-Length");

		rq = calloc(1, sizeof(*rq));
		if (!rq)
			return MHD_NO;
		buf_init(&rq->body, s->max_body + 1);
		*con_cls = rq;
		/* a declared length past the cap is refused before it is read */
		if (cl && strtoull(cl, NULL, 10) > s->max_body) {
			rq->answered = true;
			return send_error(con, 413, "the body is too large");
		}
		return MHD_YES;
	}
	if (rq->answered) {
		*upload_data_size = 0;
		return MHD_YES;
	}
	if (*upload_data_size) {
		if (!rq->too_big && buf_add(&rq->body, upload_data, *upload_data_size)) {
			rq->too_big = true;
			buf_release(&rq->body);
		}
		*upload_data_size = 0;
		return MHD_YES;
	}
	return route(s, con, url, method, rq);
}

static void on_done(void *cls, struct MHD_Connection *con, void **con_cls,
		    enum MHD_RequestTerminationCode toe)
{
	struct req *rq = *con_cls;

	if (!rq)
		return;
	buf_release(&rq->body);
	free(rq);
	*con_cls = NULL;
}

/* ======================= Lifecycle ======================= */

static int make_token(char out[33])
{
	static const char hex[] = "0123456789abcdef";
	unsigned char b[16];
	size_t got = 0;
	int i;

	while (got < sizeof(b)) {
		ssize_t n = getrandom(b + got, sizeof(b) - got, 0);

		if (n < 0) {
			int e = errno;

			if (e == EINTR)
				continue;
			return err_set(ENG_EIO, "getrandom: %s", strerror(e));
		}
		got += (size_t)n;
	}
	for (i = 0; i < 16; i++) {
		out[2 * (size_t)i] = hex[b[i] >> 4];
		out[2 * (size_t)i + 1] = hex[b[i] & 15];
	}
	out[32] = '\0';
	return 0;
}

static bool reviewer_ok(const char *r)
{
	size_t n = r ? strlen(r) : 0, i;

	if (!has_text(r) || n > REVIEW_MAX_REVIEWER)
		return false;
	for (i = 0; i < n; i++)
		if ((unsigned char)r[i] < 0x20 || r[i] == 0x7f)
			return false;
	return true;
}

int review_server_start(const struct review_config *cfg, struct review_server **out)
{
	struct review_server *s = NULL;
	struct sockaddr_in sa4;
	struct sockaddr_in6 sa6;
	const struct sockaddr *sa;
	const union MHD_DaemonInfo *info;
	const char *bind_addr = cfg->bind ? cfg->bind : "127.0.0.1";
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO;
	struct stat sb;
	int rc;

	if (!cfg->db_path || !*cfg->db_path)
		return err_set(ENG_EINVAL, "review: no store given");
	if (cfg->port < 0 || cfg->port > 65535)
		return err_set(ENG_EINVAL, "review: port %d is not in 0..65535", cfg->port);
	if (!reviewer_ok(cfg->reviewer))
		return err_set(ENG_EINVAL, "review: the reviewer name must be 1 to %d printable bytes",
			       REVIEW_MAX_REVIEWER);
	s = calloc(1, sizeof(*s));
	if (!s)
		return ENG_ENOMEM;
	memset(&sa4, 0, sizeof(sa4));
	memset(&sa6, 0, sizeof(sa6));
	if (inet_pton(AF_INET, bind_addr, &sa4.sin_addr) == 1) {
		sa4.sin_family = AF_INET;
		sa4.sin_port = htons((uint16_t)cfg->port);
		s->loopback = (ntohl(sa4.sin_addr.s_addr) >> 24) == 127;
		sa = (const struct sockaddr *)&sa4;
	} else if (inet_pton(AF_INET6, bind_addr, &sa6.sin6_addr) == 1) {
		sa6.sin6_family = AF_INET6;
		sa6.sin6_port = htons((uint16_t)cfg->port);
		s->loopback = IN6_IS_ADDR_LOOPBACK(&sa6.sin6_addr);
		s->v6 = true;
		flags |= MHD_USE_IPv6;
		sa = (const struct sockaddr *)&sa6;
	} else {
		rc = err_set(ENG_EINVAL, "review: '%s' is not a numeric IPv4 or IPv6 address",
			     bind_addr);
		goto out;
	}
	snprintf(s->bind, sizeof(s->bind), "%s", bind_addr);
	snprintf(s->reviewer, sizeof(s->reviewer), "%s", cfg->reviewer);
	s->max_body = cfg->max_body ? cfg->max_body : (size_t)REVIEW_MAX_BODY;
	if (stat(cfg->db_path, &sb)) {
		rc = err_set(ENG_ENOENT, "'%s': no such store", cfg->db_path);
		goto out;
	}
	rc = store_open(cfg->db_path, 0, &s->st);
	if (rc)
		goto out;
	rc = make_token(s->token);
	if (rc)
		goto out;
	errno = 0;
	s->d = MHD_start_daemon(flags, (uint16_t)cfg->port, NULL, NULL, on_request, s,
				MHD_OPTION_SOCK_ADDR, sa,
				MHD_OPTION_NOTIFY_COMPLETED, on_done, (void *)NULL,
				MHD_OPTION_CONNECTION_TIMEOUT, 30u,
				MHD_OPTION_CONNECTION_LIMIT, 64u,
				MHD_OPTION_END);
	if (!s->d) {
		int e = errno;

		rc = err_set(ENG_EIO, "review: cannot listen on %s port %d%s%s", bind_addr,
			     cfg->port, e ? ": " : "", e ? strerror(e) : "");
		goto out;
	}
	info = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
	s->port = info && info->port ? info->port : cfg->port;
out:
	if (rc) {
		store_close(s->st);
		free(s);
		return rc;
	}
	*out = s;
	return 0;
}

int review_server_port(const struct review_server *s)
{
	return s->port;
}

const char *review_server_token(const struct review_server *s)
{
	return s->token;
}

void review_server_url(const struct review_server *s, char *buf, size_t size)
{
	const char *host = s->bind;

	if (!strcmp(host, "0.0.0.0"))
		host = "127.0.0.1";
	else if (!strcmp(host, "::"))
		host = "::1";
	if (s->v6)
		snprintf(buf, size, "http://[%s]:%d/", host, s->port);
	else
		snprintf(buf, size, "http://%s:%d/", host, s->port);
}

void review_server_stop(struct review_server *s)
{
	if (!s)
		return;
	if (s->d)
		MHD_stop_daemon(s->d);
	store_close(s->st);
	cJSON_Delete(s->counts);
	free(s);
}
