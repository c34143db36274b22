/* SPDX-License-Identifier: MIT */
/*
 * The review server: libmicrohttpd on a pool of threads with a watchdog
 * for slow clients, the embedded page from web/, a JSON API over the
 * store and the recordings' videos with Range support. The contract and the security model are in
 * review.h; docs/review.md lists the routes.
 */
#include "review.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <limits.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <microhttpd.h>

#include "banned.h"
#include "buf.h"
#include "embed.h"
#include "err.h"
#include "export.h"
#include "framecache.h"
#include "mhddl.h"
#include "jsonfile.h"
#include "report.h"
#include "store.h"
#include "utf8.h"
#include "video.h"

#define TOKEN_HEADER "X-Proxima-Token"
#define ACCESS_COOKIE "proxima_access"
#define ACCESS_PATH "/access/"

/* The policy of every answer: no inline script or style, nothing foreign. */
static const char review_csp[] =
	"default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
	"media-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; "
	"form-action 'none'; frame-ancestors 'none'";

/*
 * One open connection, from MHD's connection notifications: the watchdog
 * closes those that take longer than the request limit to deliver a
 * whole request (slow or idle clients), whatever bytes they trickle in.
 */
struct conn {
	struct conn *prev, *next; /* the server's list, under conns_lock */
	int fd;                   /* its socket */
	int64_t since_ms;         /* when the request being received began */
	bool receiving;           /* a request is not complete yet */
	bool cut;                 /* the watchdog shut it down */
};

/* How many store handles the server keeps open for its threads. */
#define STORE_POOL 16

struct review_server {
	struct MHD_Daemon *d;      /* the daemon (its pool threads take handles) */
	char *db_path;             /* the store file */
	pthread_mutex_t pool_lock; /* guards pool[] */
	struct store *pool[STORE_POOL]; /* idle handles, one per thread at a time */
	int n_pool;
	char token[33];            /* session token, 32 hex digits */
	char access[33];           /* access secret off loopback, else "" */
	char reviewer[REVIEW_MAX_REVIEWER + 1];
	char bind[INET6_ADDRSTRLEN];
	char link_host[INET6_ADDRSTRLEN]; /* the address the printed link names */
	bool v6;                   /* bound to an IPv6 address */
	bool loopback;             /* bound to a loopback address */
	int port;                  /* bound port */
	size_t max_body;           /* body cap of POSTs */
	int64_t request_ms;        /* longest time to receive one request */
	char **hosts;              /* Host names answered off loopback */
	size_t n_hosts;
	pthread_mutex_t conns_lock; /* guards conns and the struct conn fields */
	struct conn *conns;        /* open connections */
	pthread_t watchdog;        /* closes slow connections */
	pthread_cond_t wake;       /* wakes the watchdog to stop */
	bool stopping;             /* under conns_lock */
	bool watchdog_running;
	int (*audit)(struct store *st, const char *status, void *ctx, cJSON **out);
	void *audit_ctx;           /* the config's blind audit for /api/report */
	struct framecache *frames; /* the frames of /media/ID/frame/K */
	int nframes;               /* frames of a QA that stores none */
	int frame_width;           /* their width, pixels */
};

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

/* Milliseconds on the monotonic clock, for the request limit. */
static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Constant-time equality of two 32-digit secrets. */
static bool secret_eq(const char *a, const char *secret)
{
	unsigned diff = 0;
	size_t i;

	if (!a || strlen(a) != 32 || strlen(secret) != 32)
		return false;
	for (i = 0; i < 32; i++)
		diff |= (unsigned)(a[i] ^ secret[i]);
	return diff == 0;
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

/*
 * msg with every "DIR/" (and a bare DIR) removed, into out: paths inside
 * a folder shown relative to it. Can't fail (cuts at size).
 */
static void relative_msg(const char *msg, const char *dir, char *out, size_t size)
{
	size_t n = strlen(dir), k = 0;

	while (*msg && k + 1 < size) {
		if (n && !strncmp(msg, dir, n) && (msg[n] == '/' || msg[n] == '\0' ||
						     msg[n] == '\'')) {
			msg += n + (msg[n] == '/');
			continue;
		}
		out[k++] = *msg++;
	}
	out[k] = '\0';
}

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
		rc = err_set(e == ENOMEM ? ENG_ENOMEM : ENG_ENOENT,
			     "recording '%s': its folder cannot be opened: %s", rec_id, strerror(e));
		goto out;
	}
	rc = buf_addf(&joined, "%s/recording.json", root_real);
	if (rc)
		goto out;
	rc = jsonfile_read(buf_str(&joined), &doc);
	if (rc == ENG_ENOENT) {
		err_set(rc, "recording '%s': no recording.json, so no video", rec_id);
		goto out;
	}
	if (rc) {
		/* jsonfile names the file by its full path: name it in the recording */
		char msg[512];

		relative_msg(err_msg(), root_real, msg, sizeof(msg));
		err_set(rc, "recording '%s': %s", rec_id, msg);
		goto out;
	}
	video = cJSON_GetObjectItemCaseSensitive(doc, "video");
	file = jstr(video, "path");
	if (!file || !*file) {
		rc = err_set(ENG_ENOENT, "recording '%s': recording.json names no video", rec_id);
		goto out;
	}
	if (file[0] == '/') {
		rc = err_set(ENG_EINVAL, "recording '%s': video path '%s' is absolute", rec_id, file);
		goto out;
	}
	buf_reset(&joined);
	rc = buf_addf(&joined, "%s/%s", root_real, file);
	if (rc)
		goto out;
	file_real = realpath(buf_str(&joined), NULL);
	if (!file_real) {
		e = errno;
		rc = err_set(e == ENOMEM ? ENG_ENOMEM : ENG_ENOENT, "recording '%s': video '%s': %s",
			     rec_id, file, strerror(e));
		goto out;
	}
	if (!path_inside(file_real, root_real)) {
		rc = err_set(ENG_EINVAL, "recording '%s': video '%s' resolves outside the "
			     "recording folder", rec_id, file);
		goto out;
	}
	if (stat(file_real, &sb) || !S_ISREG(sb.st_mode)) {
		rc = err_set(ENG_EINVAL, "recording '%s': video '%s' is not a regular file",
			     rec_id, file);
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

/* "verdicts" (each reviewer's current one) and "adjudication" (or null). */
static int add_verdicts(struct store *st, cJSON *qa, const char *id)
{
	cJSON *v = NULL, *adj = NULL;
	int rc = store_review_verdicts(st, id, &v, &adj);

	if (rc)
		return rc;
	if (!cJSON_AddItemToObject(qa, "verdicts", v)) {
		cJSON_Delete(v);
		cJSON_Delete(adj);
		return ENG_ENOMEM;
	}
	if (!cJSON_AddItemToObject(qa, "adjudication", adj)) {
		cJSON_Delete(adj);
		return ENG_ENOMEM;
	}
	return 0;
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
		rc = add_verdicts(st, qa, id);
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

/* A malloc()ed copy of s[0..len) with each bad UTF-8 byte as U+FFFD. */
static char *utf8_repaired(const char *s, size_t len, size_t *out_len)
{
	char *out = malloc(3 * len + 1);
	size_t i = 0, k = 0;

	if (!out)
		return NULL;
	while (i < len) {
		size_t good = utf8_valid_prefix(s + i, len - i);

		memcpy(out + k, s + i, good);
		k += good;
		i += good;
		if (i < len) {
			memcpy(out + k, "\xef\xbf\xbd", 3);
			k += 3;
			i++;
		}
	}
	out[k] = '\0';
	*out_len = k;
	return out;
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
	/* hand MHD a malloc()ed copy (cJSON's allocator need not be malloc),
	 * with any byte that is not UTF-8 (text stored before the store
	 * checked it) as U+FFFD, so that the answer is always valid JSON */
	copy = utf8_repaired(text, strlen(text), &len);
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

/*
 * Maps a library error to an HTTP status and sends err_msg(), with the
 * store's path (which store messages start with) cut to its file name:
 * the answer names no file of the server by its full path.
 */
static enum MHD_Result send_eng_error(const struct review_server *s, struct MHD_Connection *con,
				      int rc)
{
	unsigned status = rc == ENG_ENOTFOUND || rc == ENG_ENOENT ? 404
			  : rc == ENG_EINVAL || rc == ENG_ERANGE ? 400 : 500;
	const char *m = err_msg(), *slash = strrchr(s->db_path, '/');
	char msg[1024];
	size_t n;

	if (!*m)
		return send_error(con, status, eng_strerror(rc));
	if (!slash)
		return send_error(con, status, m);
	n = (size_t)(slash - s->db_path);
	{
		char dir[PATH_MAX];

		snprintf(dir, sizeof(dir), "%.*s", (int)n, s->db_path);
		relative_msg(m, dir, msg, sizeof(msg));
	}
	return send_error(con, status, msg);
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

static enum MHD_Result serve_media(struct review_server *s, struct store *st,
				 struct MHD_Connection *con,
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
	rc = store_qa_get(st, id, 0, &qa);
	if (!rc)
		rc = review_video_find(st, jstr(qa, "recording_id"), &path, &t0, NULL);
	cJSON_Delete(qa);
	if (rc == ENG_EINVAL)
		return send_error(con, 403, err_msg());
	if (rc)
		return send_eng_error(s, con, rc == ENG_EPARSE ? ENG_ENOENT : rc);
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
	/*
	 * Label Studio (`export --format labelstudio --media-url`) plays the
	 * video from its own origin; the bytes are the recording's video, and
	 * the Host check and (off loopback) the access cookie still apply.
	 */
	MHD_add_response_header(r, "Access-Control-Allow-Origin", "*");
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

/* ======================= Frames ======================= */

/*
 * The frame times of a QA (the object store_qa_get() gives): its stored
 * frames, else n over its clip by the export's rule. t holds
 * EXPORT_MAX_FRAMES.
 */
static int qa_frame_times(const cJSON *qa, int n, int64_t *t, int *count)
{
	const cJSON *fr = cJSON_GetObjectItemCaseSensitive(qa, "frames"), *e;
	int k = 0;

	if (!cJSON_IsArray(fr))
		fr = NULL;
	cJSON_ArrayForEach(e, fr) {
		if (k == EXPORT_MAX_FRAMES)
			break;
		if (!cJSON_IsNumber(e) || !isfinite(e->valuedouble) || fabs(e->valuedouble) > 9e18)
			return err_set(ENG_EINVAL, "qa '%s': frames[%d] is not a time",
				       jstr(qa, "id") ? jstr(qa, "id") : "?", k);
		t[k++] = (int64_t)llround(e->valuedouble);
	}
	if (!k) {
		k = n;
		export_frame_times((int64_t)jnum(qa, "clip_start_ns", 0),
				   (int64_t)jnum(qa, "clip_end_ns", 0), k, t);
	}
	*count = k;
	return 0;
}

/* The folder of the QA's recording, from the store, in *root (owned by *rec). */
static int qa_root(struct store *st, const cJSON *qa, cJSON **rec, const char **root)
{
	const char *rec_id = jstr(qa, "recording_id");
	int rc;

	*rec = NULL;
	if (!rec_id)
		return err_set(ENG_ENOENT, "the QA names no recording");
	rc = store_recording_get(st, rec_id, rec);
	if (rc == ENG_ENOTFOUND)
		return err_set(ENG_ENOENT, "recording '%s' is not in the store", rec_id);
	if (rc)
		return rc;
	*root = jstr(*rec, "root");
	if (!*root || !**root)
		return err_set(ENG_ENOENT, "recording '%s' has no folder in the store", rec_id);
	return 0;
}

/*
 * Adds "frame_images" [{url, t_ns}] (the frames the model sees, served
 * by /media/ID/frame/K) and "frame_source" {file, kind, frames, width,
 * height, fps}, or "frames_error" when the recording's video cannot be
 * read. Kept in blind mode: the frames do not give the key away.
 */
static int add_frames(struct review_server *s, struct store *st, cJSON *qa)
{
	struct framecache_video fv;
	int64_t t[EXPORT_MAX_FRAMES];
	const char *root = NULL, *id = jstr(qa, "id");
	cJSON *rec = NULL, *arr, *o;
	char url[128], msg[1024];
	int i, n = 0, rc;

	rc = qa_root(st, qa, &rec, &root);
	if (!rc)
		rc = framecache_probe(s->frames, jstr(qa, "recording_id"), root, &fv);
	if (rc == ENG_ENOMEM || rc == ENG_EDB)
		goto out;
	if (rc) {
		relative_msg(err_msg(), root ? root : "", msg, sizeof(msg));
		rc = cJSON_AddStringToObject(qa, "frames_error", msg) ? 0 : ENG_ENOMEM;
		goto out;
	}
	rc = qa_frame_times(qa, s->nframes, t, &n);
	if (rc)
		goto out;
	arr = cJSON_AddArrayToObject(qa, "frame_images");
	for (i = 0; arr && i < n; i++) {
		snprintf(url, sizeof(url), "/media/%s/frame/%d", id, i);
		o = cJSON_CreateObject();
		if (!o || !cJSON_AddItemToArray(arr, o)) {
			cJSON_Delete(o);
			arr = NULL;
		} else if (!cJSON_AddStringToObject(o, "url", url) ||
			   !cJSON_AddNumberToObject(o, "t_ns", (double)t[i])) {
			arr = NULL;
		}
	}
	o = arr ? cJSON_AddObjectToObject(qa, "frame_source") : NULL;
	if (!o || !cJSON_AddStringToObject(o, "file", fv.file) ||
	    !cJSON_AddStringToObject(o, "kind", fv.kind) ||
	    !cJSON_AddNumberToObject(o, "frames", (double)fv.nframes) ||
	    !cJSON_AddNumberToObject(o, "width", fv.width) ||
	    !cJSON_AddNumberToObject(o, "height", fv.height) ||
	    !cJSON_AddNumberToObject(o, "fps", fv.fps) ||
	    !cJSON_AddNumberToObject(o, "frame_width", s->frame_width))
		rc = ENG_ENOMEM;
out:
	cJSON_Delete(rec);
	return rc;
}

/* GET /media/ID/frame/K: the JPEG of the QA's frame K. */
static enum MHD_Result serve_frame(struct review_server *s, struct store *st,
				   struct MHD_Connection *con, const char *id, const char *ks)
{
	int64_t t[EXPORT_MAX_FRAMES], frame_ns = 0;
	const char *root = NULL;
	cJSON *qa = NULL, *rec = NULL;
	struct MHD_Response *r;
	enum MHD_Result ret;
	struct stat sb;
	char hdr[32];
	int n = 0, k = 0, fd = -1, rc;

	if (!id_ok(id, strlen(id)) || !*ks || strlen(ks) > 3 || strspn(ks, "0123456789") != strlen(ks))
		return send_error(con, 404, "no such frame");
	k = (int)strtol(ks, NULL, 10);
	err_clear();
	rc = store_qa_get(st, id, 0, &qa);
	if (!rc)
		rc = qa_frame_times(qa, s->nframes, t, &n);
	if (!rc && k >= n)
		rc = err_set(ENG_ENOENT, "qa '%s' has %d frames", id, n);
	if (!rc)
		rc = qa_root(st, qa, &rec, &root);
	if (!rc)
		rc = framecache_open(s->frames, jstr(qa, "recording_id"), root, t, (size_t)n,
				     (size_t)k, s->frame_width, &fd, &frame_ns);
	if (rc && root) {
		char msg[1024];

		relative_msg(err_msg(), root, msg, sizeof(msg));
		err_set(rc, "%s", msg);
	}
	cJSON_Delete(qa);
	cJSON_Delete(rec);
	if (rc)
		return send_eng_error(s, con, rc == ENG_EPARSE ? ENG_ENOENT : rc);
	if (fstat(fd, &sb)) {
		close(fd);
		return send_error(con, 500, "the frame cannot be read");
	}
	r = MHD_create_response_from_fd64((uint64_t)sb.st_size, fd);
	if (!r) {
		close(fd);
		return MHD_NO;
	}
	add_common_headers(r, "image/jpeg");
	snprintf(hdr, sizeof(hdr), "%lld", (long long)frame_ns);
	MHD_add_response_header(r, "X-Proxima-Frame-Ns", hdr);
	ret = MHD_queue_response(con, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

/* /media/ID, or /media/ID/frame/K. */
static enum MHD_Result route_media(struct review_server *s, struct store *st,
				   struct MHD_Connection *con, const char *rest)
{
	const char *slash = strchr(rest, '/');
	char id[80];
	size_t n;

	if (!slash)
		return serve_media(s, st, con, rest);
	n = (size_t)(slash - rest);
	if (n == 0 || n >= sizeof(id) || strncmp(slash, "/frame/", 7))
		return send_error(con, 404, "no such media");
	memcpy(id, rest, n);
	id[n] = '\0';
	return serve_frame(s, st, con, id, slash + 7);
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

static enum MHD_Result api_session(struct review_server *s, struct store *st,
				 struct MHD_Connection *con)
{
	cJSON *j = cJSON_CreateObject();
	const char *db = store_path(st), *slash = strrchr(db, '/');

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

static enum MHD_Result api_queue(struct review_server *s, struct store *st,
				 struct MHD_Connection *con)
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
	rc = store_qa_list(st, &f, &page);
	if (!rc)
		rc = store_review_counts(st, &counts);
	if (!rc)
		rc = store_recording_list(st, &recs);
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
	return send_eng_error(s, con, rc);
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

static enum MHD_Result api_item(struct review_server *s, struct store *st,
				 struct MHD_Connection *con,
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
	rc = review_item(st, &f, id, &qa);
	if (!rc)
		rc = add_frames(s, st, qa);
	if (rc) {
		cJSON_Delete(qa);
		return send_eng_error(s, con, rc);
	}
	if (blind && strcmp(blind, "0"))
		strip_for_blind(qa);
	return send_json(con, 200, qa);
}

static enum MHD_Result api_stats(struct review_server *s, struct store *st,
				 struct MHD_Connection *con)
{
	cJSON *stats = NULL;
	int rc;

	err_clear();
	rc = store_stats(st, &stats);
	if (rc)
		return send_eng_error(s, con, rc);
	return send_json(con, 200, stats);
}

/*
 * The report's charts with their SVG text (report.h): the QAs of the
 * statuses asked for (default the live ones), the blind audit with
 * audit=1 when the server was given one.
 */
static enum MHD_Result api_report(struct review_server *s, struct store *st,
				  struct MHD_Connection *con)
{
	const char *status = arg(con, "status"), *a = arg(con, "audit");
	const char *db = store_path(st), *slash = strrchr(db, '/');
	struct report_info info;
	struct report *r = NULL;
	cJSON *audit = NULL, *j = NULL;
	int rc;

	if (!status)
		status = REPORT_DEFAULT_STATUS;
	if (store_status_list_check(status))
		return send_error(con, 400, err_msg());
	if (a && strcmp(a, "0") && strcmp(a, "1"))
		return send_error(con, 400, "'audit' must be 0 or 1");
	if (a && !strcmp(a, "1")) {
		if (!s->audit)
			return send_error(con, 501, "this server runs no blind audit");
		rc = s->audit(st, status, s->audit_ctx, &audit);
		if (rc)
			return send_eng_error(s, con, rc);
	}
	memset(&info, 0, sizeof(info));
	info.store = slash ? slash + 1 : db; /* the store by its file name only */
	info.status = status;
	rc = report_build(st, status, &info, audit, &r);
	rc = rc ? rc : report_json(r, true, &j);
	report_free(r);
	cJSON_Delete(audit);
	if (rc)
		return send_eng_error(s, con, rc);
	return send_json(con, 200, j);
}

/* ======================= API: actions ======================= */

static bool token_ok(const struct review_server *s, const char *tok)
{
	return secret_eq(tok, s->token);
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

/*
 * What cJSON would let through silently: a NUL (raw, or the escape
 * \u0000 that cut a note short), or bytes that are not UTF-8 (stored and
 * served as they came). Writes why into msg and returns true for those.
 */
static bool body_bad(const struct buf *b, char *msg, size_t size)
{
	const char *p = b->ptr;
	size_t n = b->len, i, good;

	if (!n)
		return false;
	if (memchr(p, '\0', n)) {
		snprintf(msg, size, "the body holds a NUL byte (offset %zu)",
			 (size_t)((const char *)memchr(p, '\0', n) - p));
		return true;
	}
	good = utf8_valid_prefix(p, n);
	if (good < n) {
		snprintf(msg, size, "the body is not valid UTF-8 (byte %zu)", good);
		return true;
	}
	for (i = 0; i + 1 < n; i++) {
		if (p[i] != '\\')
			continue;
		if (p[i + 1] == 'u' && i + 5 < n && !strncmp(p + i + 2, "0000", 4)) {
			snprintf(msg, size, "a string holds \\u0000 (offset %zu); text may not "
				 "contain NUL", i);
			return true;
		}
		i++; /* the escaped character, so "\\\\u0000" is a backslash and text */
	}
	return false;
}

static enum MHD_Result api_action(struct review_server *s, struct store *st,
				 struct MHD_Connection *con,
				  const char *id, const char *action, struct req *rq)
{
	struct store_review rev;
	cJSON *body = NULL, *res = NULL, *qa = NULL;
	int64_t review_id = 0;
	char msg[128];
	int rc;

	if (!token_ok(s, MHD_lookup_connection_value(con, MHD_HEADER_KIND, TOKEN_HEADER)))
		return send_error(con, 403, "missing or wrong " TOKEN_HEADER);
	if (!json_type_ok(MHD_lookup_connection_value(con, MHD_HEADER_KIND, "Content-Type")))
		return send_error(con, 415, "the body must be application/json");
	if (rq->too_big)
		return send_error(con, 413, "the body is too large");
	if (!id_ok(id, strlen(id)))
		return send_error(con, 404, "no such item");
	if (body_bad(&rq->body, msg, sizeof(msg)))
		return send_error(con, 400, msg);
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
		rc = store_review_add(st, &rev, &review_id);
	cJSON_Delete(body);
	if (!rc)
		rc = store_qa_get(st, id, 0, &qa);
	if (rc)
		return send_eng_error(s, con, rc);
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

/* The host name of a Host header, without port or brackets, in name. */
static bool host_name(const char *h, char *name, size_t size)
{
	const char *end;
	size_t n;

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
	if (n >= size)
		return false;
	memcpy(name, h, n);
	name[n] = '\0';
	return true;
}

/*
 * The Host allow-list (no DNS rebinding): the loopback names, the bound
 * address, and off loopback the names of s->hosts (the machine's
 * addresses and name for a wildcard bind, and --allow-host).
 */
static bool host_ok(const struct review_server *s, struct MHD_Connection *con)
{
	static const char *const names[] = { "localhost", "127.0.0.1", "::1" };
	const char *h = MHD_lookup_connection_value(con, MHD_HEADER_KIND, "Host");
	char name[256];
	size_t i;

	if (!h)
		return s->loopback; /* no browser sends a request without Host */
	if (!host_name(h, name, sizeof(name)))
		return false;
	for (i = 0; i < ARRAY_SIZE(names); i++)
		if (!strcasecmp(name, names[i]))
			return true;
	if (!strcasecmp(name, s->bind))
		return true;
	for (i = 0; i < s->n_hosts; i++)
		if (!strcasecmp(name, s->hosts[i]))
			return true;
	return false;
}

/*
 * Off loopback every request needs the access cookie, which only the
 * printed link sets: GET /access/SECRET answers 303 to "/" with the
 * cookie (HttpOnly, SameSite=Lax, so that a link opened from elsewhere
 * still works and no other site's script can read it).
 */
static enum MHD_Result access_link(const struct review_server *s, struct MHD_Connection *con,
				   const char *secret)
{
	struct MHD_Response *r;
	enum MHD_Result ret;
	char cookie[128];

	if (!secret_eq(secret, s->access))
		return send_error(con, 403, "this access link is not the one the server printed");
	r = MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
	if (!r)
		return MHD_NO;
	snprintf(cookie, sizeof(cookie), ACCESS_COOKIE "=%s; Path=/; HttpOnly; SameSite=Lax",
		 s->access);
	add_common_headers(r, "text/plain");
	MHD_add_response_header(r, "Set-Cookie", cookie);
	MHD_add_response_header(r, "Location", "/");
	ret = MHD_queue_response(con, MHD_HTTP_SEE_OTHER, r);
	MHD_destroy_response(r);
	return ret;
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

/* A store handle for this request: an idle one, or a new one. */
static int pool_take(struct review_server *s, struct store **out)
{
	int rc;

	pthread_mutex_lock(&s->pool_lock);
	if (s->n_pool) {
		*out = s->pool[--s->n_pool];
		pthread_mutex_unlock(&s->pool_lock);
		return 0;
	}
	pthread_mutex_unlock(&s->pool_lock);
	rc = store_open(s->db_path, 0, out);
	return rc;
}

static void pool_give(struct review_server *s, struct store *st)
{
	pthread_mutex_lock(&s->pool_lock);
	if (s->n_pool < STORE_POOL) {
		s->pool[s->n_pool++] = st;
		st = NULL;
	}
	pthread_mutex_unlock(&s->pool_lock);
	store_close(st);
}

/* The routes that read or write the store, with a handle of this thread's. */
static enum MHD_Result route_store(struct review_server *s, struct MHD_Connection *con,
				   const char *url, bool get, bool post, struct req *rq)
{
	const char *action = NULL;
	struct store *st = NULL;
	enum MHD_Result ret;
	char id[80];
	int rc;

	err_clear();
	rc = pool_take(s, &st);
	if (rc)
		return send_eng_error(s, con, rc);
	if (!strncmp(url, "/api/qa/", 8)) {
		if (!split_qa_path(url, id, sizeof(id), &action))
			ret = send_error(con, 404, "no such route");
		else if (action)
			ret = post ? api_action(s, st, con, id, action, rq)
				   : send_error_allow(con, 405, "use POST", "POST");
		else
			ret = get ? api_item(s, st, con, id)
				  : send_error_allow(con, 405, "use GET", "GET, HEAD");
	} else if (!get) {
		ret = send_error_allow(con, 405, "use GET", "GET, HEAD");
	} else if (!strcmp(url, "/api/session")) {
		ret = api_session(s, st, con);
	} else if (!strcmp(url, "/api/queue")) {
		ret = api_queue(s, st, con);
	} else if (!strcmp(url, "/api/stats")) {
		ret = api_stats(s, st, con);
	} else if (!strcmp(url, "/api/report")) {
		ret = api_report(s, st, con);
	} else if (!strncmp(url, "/media/", 7)) {
		ret = route_media(s, st, con, url + 7);
	} else {
		ret = send_error(con, 404, "no such route");
	}
	pool_give(s, st);
	return ret;
}

static enum MHD_Result route(struct review_server *s, struct MHD_Connection *con,
			     const char *url, const char *method, struct req *rq)
{
	bool get = !strcmp(method, "GET") || !strcmp(method, "HEAD");
	bool post = !strcmp(method, "POST");

	if (!host_ok(s, con))
		return send_error(con, 403, s->loopback
				  ? "this server answers only to a loopback Host"
				  : "this server does not answer to that Host (see --allow-host)");
	if (!s->loopback) {
		if (get && !strncmp(url, ACCESS_PATH, strlen(ACCESS_PATH)))
			return access_link(s, con, url + strlen(ACCESS_PATH));
		if (!secret_eq(MHD_lookup_connection_value(con, MHD_COOKIE_KIND, ACCESS_COOKIE),
			       s->access))
			return send_error(con, 403, "open the access link that `proxima review "
					  "serve` printed; this browser has not used it");
	}
	if (!strncmp(url, "/api/", 5) || !strncmp(url, "/media/", 7))
		return route_store(s, con, url, get, post, rq);
	if (!get)
		return send_error_allow(con, 405, "use GET", "GET, HEAD");
	return serve_static(con, url);
}

/* ======================= Connections and the request limit ======================= */

static struct conn *conn_of(struct MHD_Connection *con)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(con, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return ci ? ci->socket_context : NULL;
}

/* A request was received whole (receiving = false) or answered (a new one may come). */
static void conn_mark(struct review_server *s, struct MHD_Connection *con, bool receiving)
{
	struct conn *c = conn_of(con);

	if (!c)
		return;
	pthread_mutex_lock(&s->conns_lock);
	c->receiving = receiving;
	if (receiving)
		c->since_ms = mono_ms();
	pthread_mutex_unlock(&s->conns_lock);
}

/*
 * MHD's connection notifications keep s->conns: MHD calls CLOSED before
 * it closes the socket, and the watchdog shuts a socket down only under
 * conns_lock while its connection is listed, so it never touches a
 * descriptor that was closed and reused.
 */
static void on_connection(void *cls, struct MHD_Connection *con, void **socket_context,
			  enum MHD_ConnectionNotificationCode code)
{
	struct review_server *s = cls;
	struct conn *c = *socket_context;

	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *ci =
			MHD_get_connection_info(con, MHD_CONNECTION_INFO_CONNECTION_FD);

		c = ci ? calloc(1, sizeof(*c)) : NULL;
		if (!c)
			return; /* untracked: MHD's idle timeout still applies */
		c->fd = ci->connect_fd;
		c->since_ms = mono_ms();
		c->receiving = true;
		pthread_mutex_lock(&s->conns_lock);
		c->next = s->conns;
		if (s->conns)
			s->conns->prev = c;
		s->conns = c;
		pthread_mutex_unlock(&s->conns_lock);
		*socket_context = c;
	} else if (code == MHD_CONNECTION_NOTIFY_CLOSED && c) {
		pthread_mutex_lock(&s->conns_lock);
		if (c->prev)
			c->prev->next = c->next;
		else
			s->conns = c->next;
		if (c->next)
			c->next->prev = c->prev;
		pthread_mutex_unlock(&s->conns_lock);
		free(c);
		*socket_context = NULL;
	}
}

/*
 * Every WATCH_MS, shuts down the connections that have been receiving
 * one request for longer than the limit: MHD's own timeout restarts at
 * every byte, so a client that sends one byte now and then would hold
 * its connection forever.
 */
#define WATCH_MS 100

static void *watchdog_main(void *arg)
{
	struct review_server *s = arg;
	struct timespec until;
	struct conn *c;
	int64_t now;

	pthread_mutex_lock(&s->conns_lock);
	while (!s->stopping) {
		now = mono_ms();
		for (c = s->conns; c; c = c->next) {
			if (c->receiving && !c->cut && now - c->since_ms >= s->request_ms) {
				shutdown(c->fd, SHUT_RDWR);
				c->cut = true;
			}
		}
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_nsec += WATCH_MS * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&s->wake, &s->conns_lock, &until);
	}
	pthread_mutex_unlock(&s->conns_lock);
	return NULL;
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
			conn_mark(s, con, false);
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
	conn_mark(s, con, false);
	return route(s, con, url, method, rq);
}

static void on_done(void *cls, struct MHD_Connection *con, void **con_cls,
		    enum MHD_RequestTerminationCode toe)
{
	struct req *rq = *con_cls;

	conn_mark(cls, con, true);
	if (!rq)
		return;
	buf_release(&rq->body);
	free(rq);
	*con_cls = NULL;
}

/* ======================= Lifecycle ======================= */

static int make_secret(char out[33])
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

	if (!has_text(r) || n > REVIEW_MAX_REVIEWER || !utf8_valid(r))
		return false;
	for (i = 0; i < n; i++)
		if ((unsigned char)r[i] < 0x20 || r[i] == 0x7f)
			return false;
	return true;
}

static int host_add(struct review_server *s, const char *name)
{
	char **h;
	size_t i;

	/* the loopback names and the bound address are answered anyway */
	if (!name || !*name || !strcasecmp(name, "localhost") || !strcmp(name, "127.0.0.1") ||
	    !strcmp(name, "::1") || !strcasecmp(name, s->bind))
		return 0;
	for (i = 0; i < s->n_hosts; i++)
		if (!strcasecmp(s->hosts[i], name))
			return 0;
	h = realloc(s->hosts, (s->n_hosts + 1) * sizeof(*h));
	if (!h)
		return ENG_ENOMEM;
	s->hosts = h;
	s->hosts[s->n_hosts] = strdup(name);
	if (!s->hosts[s->n_hosts])
		return ENG_ENOMEM;
	s->n_hosts++;
	return 0;
}

/*
 * The Host names of a wildcard bind: every address of the machine's
 * interfaces and its host name (and that name without its domain). The
 * first address that is not loopback becomes the printed link's host.
 */
static int hosts_of_machine(struct review_server *s, int family)
{
	struct ifaddrs *ifs = NULL, *i;
	char name[256];
	int rc = 0;

	if (getifaddrs(&ifs) == 0) {
		for (i = ifs; i && !rc; i = i->ifa_next) {
			const void *a;

			if (!i->ifa_addr)
				continue;
			if (i->ifa_addr->sa_family == AF_INET)
				a = &((const struct sockaddr_in *)(const void *)i->ifa_addr)->sin_addr;
			else if (i->ifa_addr->sa_family == AF_INET6)
				a = &((const struct sockaddr_in6 *)(const void *)i->ifa_addr)->sin6_addr;
			else
				continue;
			if (!inet_ntop(i->ifa_addr->sa_family, a, name, sizeof(name)))
				continue;
			rc = host_add(s, name);
			if (!rc && !s->link_host[0] && i->ifa_addr->sa_family == family &&
			    !(i->ifa_flags & IFF_LOOPBACK) && !strchr(name, '%') &&
			    strlen(name) < sizeof(s->link_host))
				memcpy(s->link_host, name, strlen(name) + 1);
		}
		freeifaddrs(ifs);
	}
	if (!rc && gethostname(name, sizeof(name)) == 0) {
		name[sizeof(name) - 1] = '\0';
		rc = host_add(s, name);
		if (!rc && strchr(name, '.')) {
			*strchr(name, '.') = '\0';
			rc = host_add(s, name);
		}
	}
	return rc;
}

/* How many connections the process may hold: below the descriptor limit. */
static unsigned connection_limit(void)
{
	struct rlimit rl;
	rlim_t n = 1024;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		n = rl.rlim_cur;
	else if (getrlimit(RLIMIT_NOFILE, &rl) == 0)
		n = 1 << 16;
	n = n > 128 ? n - 64 : 64;
	return n > REVIEW_MAX_CONNECTIONS ? REVIEW_MAX_CONNECTIONS : (unsigned)n;
}

static void server_free(struct review_server *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < (size_t)s->n_pool; i++)
		store_close(s->pool[i]);
	for (i = 0; i < s->n_hosts; i++)
		free(s->hosts[i]);
	free(s->hosts);
	free(s->db_path);
	framecache_free(s->frames);
	pthread_mutex_destroy(&s->pool_lock);
	pthread_mutex_destroy(&s->conns_lock);
	pthread_cond_destroy(&s->wake);
	free(s);
}

/* Reads the bind address into sa4/sa6 and the flags of s. */
static int parse_bind(struct review_server *s, const char *bind_addr, struct sockaddr_in *sa4,
		      struct sockaddr_in6 *sa6, int port, const struct sockaddr **sa)
{
	memset(sa4, 0, sizeof(*sa4));
	memset(sa6, 0, sizeof(*sa6));
	if (inet_pton(AF_INET, bind_addr, &sa4->sin_addr) == 1) {
		sa4->sin_family = AF_INET;
		sa4->sin_port = htons((uint16_t)port);
		s->loopback = (ntohl(sa4->sin_addr.s_addr) >> 24) == 127;
		*sa = (const struct sockaddr *)sa4;
	} else if (inet_pton(AF_INET6, bind_addr, &sa6->sin6_addr) == 1) {
		sa6->sin6_family = AF_INET6;
		sa6->sin6_port = htons((uint16_t)port);
		s->loopback = IN6_IS_ADDR_LOOPBACK(&sa6->sin6_addr);
		s->v6 = true;
		*sa = (const struct sockaddr *)sa6;
	} else {
		return err_set(ENG_EINVAL, "review: '%s' is not a numeric IPv4 or IPv6 address",
			       bind_addr);
	}
	snprintf(s->bind, sizeof(s->bind), "%s", bind_addr);
	return 0;
}

int review_server_start(const struct review_config *cfg, struct review_server **out)
{
	struct review_server *s = NULL;
	struct sockaddr_in sa4;
	struct sockaddr_in6 sa6;
	const struct sockaddr *sa = NULL;
	const union MHD_DaemonInfo *info;
	const char *bind_addr = cfg->bind ? cfg->bind : "127.0.0.1";
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO;
	pthread_condattr_t ca;
	struct store *st = NULL;
	struct stat sb;
	size_t i;
	int rc;

	if (!cfg->db_path || !*cfg->db_path)
		return err_set(ENG_EINVAL, "review: no store given");
	if (cfg->port < 0 || cfg->port > 65535)
		return err_set(ENG_EINVAL, "review: port %d is not in 0..65535", cfg->port);
	if (!reviewer_ok(cfg->reviewer))
		return err_set(ENG_EINVAL, "review: the reviewer name must be 1 to %d printable "
			       "UTF-8 bytes", REVIEW_MAX_REVIEWER);
	if (cfg->threads < 0 || cfg->threads > 64 || cfg->per_ip_limit < 0 ||
	    cfg->request_timeout_ms < 0)
		return err_set(ENG_EINVAL, "review: threads must be 0..64 and the limits not negative");
	rc = mhddl_load();
	if (rc)
		return rc;
	s = calloc(1, sizeof(*s));
	if (!s)
		return ENG_ENOMEM;
	pthread_mutex_init(&s->pool_lock, NULL);
	pthread_mutex_init(&s->conns_lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->wake, &ca);
	pthread_condattr_destroy(&ca);
	rc = parse_bind(s, bind_addr, &sa4, &sa6, cfg->port, &sa);
	if (rc)
		goto out;
	if (s->v6)
		flags |= MHD_USE_IPv6;
	snprintf(s->reviewer, sizeof(s->reviewer), "%s", cfg->reviewer);
	s->audit = cfg->audit;
	s->audit_ctx = cfg->audit_ctx;
	if (cfg->frames < 0 || cfg->frames > EXPORT_MAX_FRAMES || cfg->frame_width < 0 ||
	    cfg->frame_width > 8192) {
		rc = err_set(ENG_EINVAL, "review: frames %d (0..%d) or frame width %d (0..8192) "
			     "out of range", cfg->frames, EXPORT_MAX_FRAMES, cfg->frame_width);
		goto out;
	}
	s->nframes = cfg->frames ? cfg->frames : EXPORT_DEFAULT_FRAMES;
	s->frame_width = cfg->frame_width ? cfg->frame_width : VIDEO_DEFAULT_WIDTH;
	rc = framecache_new(0, &s->frames);
	if (rc)
		goto out;
	s->max_body = cfg->max_body ? cfg->max_body : (size_t)REVIEW_MAX_BODY;
	s->request_ms = cfg->request_timeout_ms ? cfg->request_timeout_ms : REVIEW_REQUEST_MS;
	s->db_path = strdup(cfg->db_path);
	if (!s->db_path) {
		rc = ENG_ENOMEM;
		goto out;
	}
	if (stat(cfg->db_path, &sb)) {
		rc = err_set(ENG_ENOENT, "'%s': no such store", cfg->db_path);
		goto out;
	}
	/* the first handle migrates an old store and proves the file is one */
	rc = store_open(cfg->db_path, 0, &st);
	if (rc)
		goto out;
	s->pool[s->n_pool++] = st;
	rc = make_secret(s->token);
	if (!rc && !s->loopback)
		rc = make_secret(s->access);
	if (rc)
		goto out;
	if (!s->loopback) {
		bool wildcard = !strcmp(bind_addr, "0.0.0.0") || !strcmp(bind_addr, "::");

		if (wildcard)
			rc = hosts_of_machine(s, s->v6 ? AF_INET6 : AF_INET);
		else
			snprintf(s->link_host, sizeof(s->link_host), "%s", bind_addr);
		for (i = 0; !rc && cfg->allow_hosts && cfg->allow_hosts[i]; i++)
			rc = host_add(s, cfg->allow_hosts[i]);
		if (rc)
			goto out;
		if (!s->link_host[0])
			snprintf(s->link_host, sizeof(s->link_host), "%s", s->v6 ? "::1" : "127.0.0.1");
	} else {
		snprintf(s->link_host, sizeof(s->link_host), "%s", bind_addr);
	}
	errno = 0;
	s->d = MHD_start_daemon(flags, (uint16_t)cfg->port, NULL, NULL, on_request, s,
				MHD_OPTION_SOCK_ADDR, sa,
				MHD_OPTION_THREAD_POOL_SIZE,
				(unsigned)(cfg->threads ? cfg->threads : REVIEW_THREADS),
				MHD_OPTION_CONNECTION_LIMIT, connection_limit(),
				MHD_OPTION_PER_IP_CONNECTION_LIMIT,
				(unsigned)(cfg->per_ip_limit ? cfg->per_ip_limit : REVIEW_PER_IP),
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)REVIEW_IDLE_S,
				MHD_OPTION_NOTIFY_CONNECTION, on_connection, (void *)s,
				MHD_OPTION_NOTIFY_COMPLETED, on_done, (void *)s,
				MHD_OPTION_END);
	if (!s->d) {
		int e = errno;

		rc = err_set(ENG_EIO, "review: cannot listen on %s port %d%s%s", bind_addr,
			     cfg->port, e ? ": " : "", e ? strerror(e) : "");
		goto out;
	}
	if (pthread_create(&s->watchdog, NULL, watchdog_main, s)) {
		rc = err_set(ENG_EIO, "review: cannot start the connection watchdog");
		goto out;
	}
	s->watchdog_running = true;
	info = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
	s->port = info && info->port ? info->port : cfg->port;
out:
	if (rc) {
		if (s->d)
			MHD_stop_daemon(s->d);
		server_free(s);
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

const char *review_server_access(const struct review_server *s)
{
	return s->loopback ? NULL : s->access;
}

int review_server_loopback(const struct review_server *s)
{
	return s->loopback;
}

size_t review_server_hosts(const struct review_server *s, const char *const **names)
{
	*names = (const char *const *)s->hosts;
	return s->n_hosts;
}

void review_server_url(const struct review_server *s, char *buf, size_t size)
{
	const char *path = s->loopback ? "" : ACCESS_PATH + 1, *secret = s->loopback ? "" : s->access;

	if (s->v6)
		snprintf(buf, size, "http://[%s]:%d/%s%s", s->link_host, s->port, path, secret);
	else
		snprintf(buf, size, "http://%s:%d/%s%s", s->link_host, s->port, path, secret);
}

void review_server_stop(struct review_server *s)
{
	if (!s)
		return;
	if (s->watchdog_running) {
		pthread_mutex_lock(&s->conns_lock);
		s->stopping = true;
		pthread_cond_signal(&s->wake);
		pthread_mutex_unlock(&s->conns_lock);
		pthread_join(s->watchdog, NULL);
	}
	if (s->d)
		MHD_stop_daemon(s->d);
	server_free(s);
}
