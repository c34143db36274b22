/* SPDX-License-Identifier: MIT */
/*
 * Predictions for an EgoProx export: EgoProx's inference requests (frames
 * and prompt), sent by a pool of llm clients, cached in a JSONL file next
 * to the output so that reruns and resumed runs send only what is missing.
 */
#include "predict.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "banned.h"
#include "buf.h"
#include "err.h"
#include "eval.h"
#include "jsonfile.h"
#include "llm.h"

/* Largest frame file sent. */
#define PREDICT_MAX_IMAGE ((size_t)32 << 20)

/* Largest cache file read. */
#define PREDICT_MAX_CACHE ((size_t)1 << 31)

/* ============================== The cache file ============================== */

struct centry {
	char *key;
	char *response;
	int status;
	size_t seq;              /* order of arrival: the first reply of a key is kept */
};

/* OUT.cache: the replies so far, and the file new ones are appended to. */
struct pcache {
	pthread_mutex_t lock;
	FILE *fp;
	char *path;
	struct centry *e;
	size_t n, cap;
	size_t nsorted;          /* e[0..nsorted) are sorted by key (the loaded ones) */
	int write_failed;        /* an append failed: say so once */
};

static int cmp_key(const void *a, const void *b)
{
	return strcmp(((const struct centry *)a)->key, ((const struct centry *)b)->key);
}

static int cmp_entry(const void *a, const void *b)
{
	const struct centry *x = a, *y = b;
	int c = strcmp(x->key, y->key);

	return c ? c : x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int cache_push(struct pcache *c, const char *key, const char *resp, int status)
{
	struct centry *e;

	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 256;

		e = realloc(c->e, cap * sizeof(*e));
		if (!e)
			return ENG_ENOMEM;
		c->e = e;
		c->cap = cap;
	}
	e = &c->e[c->n];
	e->key = strdup(key);
	e->response = strdup(resp);
	e->status = status;
	e->seq = c->n;
	if (!e->key || !e->response) {
		free(e->key);
		free(e->response);
		return ENG_ENOMEM;
	}
	c->n++;
	return 0;
}

/*
 * Reads the entries of an existing cache file. A last line cut short (a
 * killed run) is dropped and cut from the file so appends start clean;
 * a bad line before it is an error.
 */
static int cache_load(struct pcache *c)
{
	struct buf b;
	char *p, *nl, *end;
	size_t line = 0, good = 0, i, k;
	int rc;

	buf_init(&b, PREDICT_MAX_CACHE);
	rc = buf_read_file(&b, c->path);
	if (rc == ENG_ENOENT) {
		buf_release(&b);
		err_clear();
		return 0;
	}
	if (rc)
		goto out;
	end = b.ptr ? b.ptr + b.len : NULL;
	for (p = b.ptr; p && p < end; p = nl + 1) {
		cJSON *o;
		const char *key, *resp;
		const cJSON *st;

		line++;
		nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl) {
			/* no newline: the line the last run was writing when it stopped */
			break;
		}
		*nl = '\0';
		o = cJSON_Parse(p);
		key = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "key"));
		resp = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "response"));
		st = cJSON_GetObjectItemCaseSensitive(o, "status");
		if (!key || !resp || !cJSON_IsNumber(st)) {
			cJSON_Delete(o);
			rc = err_set(ENG_EPARSE, "%s:%zu: not a cache entry (delete the file to "
				     "start over)", c->path, line);
			goto out;
		}
		rc = cache_push(c, key, resp, st->valueint);
		cJSON_Delete(o);
		if (rc)
			goto out;
		good = (size_t)(nl + 1 - b.ptr);
	}
	if (end && good < b.len && truncate(c->path, (off_t)good)) {
		int e = errno;

		rc = err_set(ENG_EIO, "'%s': cannot cut its unfinished last line: %s", c->path,
			     strerror(e));
		goto out;
	}
	/* sorted for bisection; of a repeated key (two identical requests in flight
	 * at once) the first reply stays, the one the first run's answers got */
	qsort(c->e, c->n, sizeof(*c->e), cmp_entry);
	for (i = k = 0; i < c->n; i++) {
		if (k && !strcmp(c->e[k - 1].key, c->e[i].key)) {
			free(c->e[i].key);
			free(c->e[i].response);
			continue;
		}
		c->e[k++] = c->e[i];
	}
	c->n = c->nsorted = k;
out:
	buf_release(&b);
	return rc;
}

static int cache_open(struct pcache *c, const char *out_path)
{
	size_t n = strlen(out_path) + 7;
	int rc, e;

	memset(c, 0, sizeof(*c));
	pthread_mutex_init(&c->lock, NULL);
	c->path = malloc(n);
	if (!c->path)
		return ENG_ENOMEM;
	snprintf(c->path, n, "%s.cache", out_path);
	rc = cache_load(c);
	if (rc)
		return rc;
	c->fp = fopen(c->path, "ae");
	if (!c->fp) {
		e = errno;
		return err_set(ENG_EIO, "'%s': cannot write: %s", c->path, strerror(e));
	}
	return 0;
}

static void cache_close(struct pcache *c)
{
	size_t i;

	if (c->fp)
		fclose(c->fp);
	for (i = 0; i < c->n; i++) {
		free(c->e[i].key);
		free(c->e[i].response);
	}
	free(c->e);
	free(c->path);
	pthread_mutex_destroy(&c->lock);
}

/* llm_cache_ops.get: the loaded entries by bisection, this run's by scan. */
static int cache_get(void *ctx, const char *key, char **response_json, int *status)
{
	struct pcache *c = ctx;
	struct centry probe = { (char *)(uintptr_t)key, NULL, 0, 0 }, *hit;
	size_t i;
	int rc = ENG_ENOTFOUND;

	pthread_mutex_lock(&c->lock);
	hit = c->nsorted ? bsearch(&probe, c->e, c->nsorted, sizeof(*c->e), cmp_key) : NULL;
	for (i = c->nsorted; !hit && i < c->n; i++)
		if (!strcmp(c->e[i].key, key))
			hit = &c->e[i];
	if (hit) {
		*response_json = strdup(hit->response);
		*status = hit->status;
		rc = *response_json ? 0 : ENG_ENOMEM;
	}
	pthread_mutex_unlock(&c->lock);
	return rc;
}

/* llm_cache_ops.put: one line per reply, flushed at once (the request is not kept). */
static int cache_put(void *ctx, const char *key, const char *request_json,
		     const char *response_json, int status, long latency_ms)
{
	struct pcache *c = ctx;
	cJSON *o = cJSON_CreateObject();
	char *line = NULL;
	int rc = ENG_ENOMEM;

	(void)request_json;
	if (o && cJSON_AddStringToObject(o, "key", key) &&
	    cJSON_AddNumberToObject(o, "status", status) &&
	    cJSON_AddNumberToObject(o, "latency_ms", (double)latency_ms) &&
	    cJSON_AddStringToObject(o, "response", response_json))
		line = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	if (!line)
		return rc;
	pthread_mutex_lock(&c->lock);
	rc = cache_push(c, key, response_json, status);
	if (!rc && (fputs(line, c->fp) < 0 || fputc('\n', c->fp) < 0 || fflush(c->fp))) {
		c->write_failed = 1;
		rc = ENG_EIO;
	}
	pthread_mutex_unlock(&c->lock);
	cJSON_free(line);
	return rc;
}

/* ============================== Requests ============================== */

/* One sample and what came back for it. */
struct job {
	const cJSON *sample;
	const char *id;
	const char *source;
	int chain;
	char *response;       /* the reply's text, or NULL */
	char *model;          /* the model the server reported, or NULL */
	char *error;          /* why there is no reply, or NULL */
	int cached;
};

struct run {
	const struct predict_params *p;
	char dir[PATH_MAX];
	struct job *jobs;
	size_t njobs;
	struct pcache cache;
	struct llm_cache_ops ops;
	pthread_mutex_t lock;   /* next, done, the summary */
	size_t next, done;
	struct predict_summary sum;
};

/*
 * A frame path of the export as infer_gpt.py resolves it (file://,
 * absolute, or under DIR). Returns 0, or -1 when it does not fit.
 */
static int frame_file(const struct run *r, const char *path, char *out, size_t size)
{
	int n;

	if (!strncmp(path, "file://", 7))
		n = snprintf(out, size, "%s", path + 7);
	else if (path[0] == '/')
		n = snprintf(out, size, "%s", path);
	else
		n = snprintf(out, size, "%s/%s", r->dir, path);
	return n < 0 || (size_t)n >= size ? -1 : 0;
}

/* The image type of the bytes, or NULL. */
static const char *image_type(const unsigned char *b, size_t n)
{
	if (n >= 3 && b[0] == 0xff && b[1] == 0xd8 && b[2] == 0xff)
		return "image/jpeg";
	if (n >= 8 && !memcmp(b, "\x89PNG\r\n\x1a\n", 8))
		return "image/png";
	if (n >= 12 && !memcmp(b, "RIFF", 4) && !memcmp(b + 8, "WEBP", 4))
		return "image/webp";
	return NULL;
}

/*
 * Reads frame `path` of sample id into b and gives its type. Returns 0,
 * ENG_ENOENT (missing: names it and the way to extract frames) or
 * ENG_EINVAL (not an image).
 */
static int read_frame(const struct run *r, const char *id, const char *path, struct buf *b,
		      const char **type)
{
	char file[PATH_MAX];
	int rc;

	if (frame_file(r, path, file, sizeof(file)))
		return err_set(ENG_EINVAL, "sample '%s': frame path '%s' is too long", id, path);
	buf_reset(b);
	rc = buf_read_file(b, file);
	if (rc == ENG_ENOENT)
		return err_set(rc, "sample '%s': frame '%s' is missing (export with --frames N "
			       "to extract the frames)", id, file);
	if (rc)
		return err_set(rc, "sample '%s': frame '%s': %s", id, file, eng_strerror(rc));
	*type = image_type((const unsigned char *)b->ptr, b->len);
	if (!*type)
		return err_set(ENG_EINVAL, "sample '%s': frame '%s' is not a JPEG, PNG or WebP image",
			       id, file);
	return 0;
}

static int add_frame(const struct run *r, const char *id, const char *path,
		     struct llm_msg *m, struct buf *b)
{
	const char *type;
	int rc = read_frame(r, id, path, b, &type);

	return rc ? rc : llm_msg_add_image(m, type, b->ptr, b->len);
}

/* Calls fn on every frame path of a sample, in the order infer_gpt.py sends them. */
static int each_frame(const cJSON *s, int chain,
		      int (*fn)(const cJSON *part, const char *path, void *ctx), void *ctx)
{
	const cJSON *turn, *part, *v;
	int rc = 0;

	if (chain) {
		cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(s, "image"))
			if (!rc && cJSON_IsString(v))
				rc = fn(NULL, v->valuestring, ctx);
		return rc;
	}
	cJSON_ArrayForEach(turn, cJSON_GetObjectItemCaseSensitive(s, "data")) {
		cJSON_ArrayForEach(part, cJSON_GetObjectItemCaseSensitive(turn, "content")) {
			const char *t = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(part, "type"));
			const cJSON *img = cJSON_GetObjectItemCaseSensitive(part, "image");

			if (rc || !t)
				continue;
			if (!strcmp(t, "text")) {
				rc = fn(part, NULL, ctx);
			} else if (!strcmp(t, "image") && cJSON_IsString(img)) {
				rc = fn(part, img->valuestring, ctx);
			} else if (!strcmp(t, "video")) {
				cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(part, "video"))
					if (!rc && cJSON_IsString(v))
						rc = fn(part, v->valuestring, ctx);
			}
		}
	}
	return rc;
}

struct build_ctx {
	const struct run *r;
	const char *id;
	struct llm_msg *user;
	struct buf *img;
	int check_only;
	size_t parts;
};

static int build_part(const cJSON *part, const char *path, void *ctx)
{
	struct build_ctx *c = ctx;
	const char *type, *text;

	if (c->check_only)
		return path ? read_frame(c->r, c->id, path, c->img, &type) : 0;
	if (path) {
		c->parts++;
		return add_frame(c->r, c->id, path, c->user, c->img);
	}
	/* build_messages_short_term: a text part only when its text is not empty */
	text = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(part, "text"));
	if (!text || !*text)
		return 0;
	c->parts++;
	return llm_msg_add_text(c->user, text);
}

/* True when Python's s.strip() would leave something (ASCII white space only is checked). */
static int has_text(const char *s)
{
	for (; s && *s; s++)
		if (!strchr(" \t\n\r\v\f", *s))
			return 1;
	return 0;
}

/*
 * The request of a sample, as infer_gpt.py builds it: msgs[0] the system
 * message of a chain (then *n = 2), the user message last. With
 * check_only the frames are only read and checked.
 */
static int build(const struct run *r, const struct job *j, struct llm_msg msgs[2], size_t *n,
		 struct buf *img, int check_only)
{
	struct build_ctx c = { r, j->id, NULL, img, check_only, 0 };
	const char *sp = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j->sample,
									       "system_prompt"));
	const char *up = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j->sample,
									       "user_prompt"));
	int rc = 0;

	*n = 0;
	if (!check_only) {
		if (j->chain)
			rc = llm_msg_text(&msgs[(*n)++], LLM_ROLE_SYSTEM, sp ? sp : "");
		llm_msg_init(&msgs[*n], LLM_ROLE_USER);
		c.user = &msgs[(*n)++];
	}
	rc = rc ? rc : each_frame(j->sample, j->chain, build_part, &c);
	if (!rc && !check_only && j->chain && has_text(up)) {
		c.parts++;
		rc = llm_msg_add_text(c.user, up);
	}
	if (!rc && !check_only && !c.parts)
		rc = err_set(ENG_EINVAL, "sample '%s' has nothing to send", j->id);
	return rc;
}

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

/* One sample: the request, the reply (from the cache or the server). */
static void run_job(struct run *r, struct llm_client *client, struct job *j, struct buf *img)
{
	struct llm_msg msgs[2];
	struct llm_reply rep;
	size_t n = 0, i;
	int rc;

	memset(msgs, 0, sizeof(msgs));
	llm_reply_init(&rep);
	err_clear();
	rc = build(r, j, msgs, &n, img, 0);
	rc = rc ? rc : llm_chat(client, msgs, n, NULL, 0, NULL, &rep);
	pthread_mutex_lock(&r->lock);
	r->sum.requests += (size_t)rep.attempts;
	if (rep.usage.present) {
		r->sum.prompt_tokens += rep.usage.prompt_tokens;
		r->sum.completion_tokens += rep.usage.completion_tokens;
	}
	pthread_mutex_unlock(&r->lock);
	if (rc) {
		j->error = strdup(*err_msg() ? err_msg() : eng_strerror(rc));
	} else {
		/* infer_gpt.py: resp.choices[0].message.content or "" */
		j->response = strdup(rep.msg.content ? rep.msg.content : "");
		j->model = dup_or_null(rep.model);
		j->cached = rep.cached;
		if (!j->response)
			j->error = strdup("out of memory");
	}
	for (i = 0; i < n; i++)
		llm_msg_release(&msgs[i]);
	llm_reply_release(&rep);
}

static void *worker(void *arg)
{
	struct run *r = arg;
	struct llm_config cfg = *r->p->llm;
	struct llm_client *client = NULL;
	struct buf img;
	const char *why = NULL;

	cfg.cache = &r->ops;
	cfg.max_tokens = r->p->max_tokens > 0 ? r->p->max_tokens : PREDICT_MAX_TOKENS;
	cfg.salvage = 0;
	buf_init(&img, PREDICT_MAX_IMAGE);
	if (llm_client_new(&cfg, &client))
		why = *err_msg() ? err_msg() : "cannot create the llm client";
	for (;;) {
		struct job *j;

		pthread_mutex_lock(&r->lock);
		j = r->next < r->njobs ? &r->jobs[r->next++] : NULL;
		pthread_mutex_unlock(&r->lock);
		if (!j)
			break;
		if (why)
			j->error = strdup(why);
		else
			run_job(r, client, j, &img);
		pthread_mutex_lock(&r->lock);
		r->done++;
		if (r->p->progress)
			r->p->progress(r->p->progress_ctx, r->done, r->njobs);
		pthread_mutex_unlock(&r->lock);
	}
	llm_client_free(client);
	buf_release(&img);
	return NULL;
}

/* ============================== Input and output ============================== */

static int load_export(struct run *r, cJSON **arr)
{
	char path[PATH_MAX + 32];
	cJSON *man = NULL;
	const char *fmt;
	const cJSON *s;
	size_t i = 0;
	int rc;

	snprintf(path, sizeof(path), "%s/manifest.json", r->dir);
	rc = jsonfile_read(path, &man);
	if (rc)
		return rc;
	fmt = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(man, "format"));
	if (!fmt || strcmp(fmt, "egoprox")) {
		rc = err_set(ENG_EINVAL, "'%s': format '%s': predict reads an egoprox export "
			     "(proxima export --format egoprox --frames N)", path, fmt ? fmt : "?");
		cJSON_Delete(man);
		return rc;
	}
	cJSON_Delete(man);
	snprintf(path, sizeof(path), "%s/egoprox.json", r->dir);
	rc = jsonfile_read(path, arr);
	if (rc)
		return rc;
	if (!cJSON_IsArray(*arr))
		return err_set(ENG_EINVAL, "'%s': expected an array of samples", path);
	r->njobs = (size_t)cJSON_GetArraySize(*arr);
	r->jobs = calloc(r->njobs ? r->njobs : 1, sizeof(*r->jobs));
	if (!r->jobs)
		return ENG_ENOMEM;
	cJSON_ArrayForEach(s, *arr) {
		struct job *j = &r->jobs[i];

		j->sample = s;
		j->id = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(s, "id"));
		j->source = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(s, "source"));
		if (!j->id || !j->source)
			return err_set(ENG_EINVAL, "'%s': sample %zu has no \"id\" or \"source\"", path, i);
		j->chain = !strcmp(j->source, "Chain of Actions");
		i++;
	}
	return 0;
}

/* Every frame exists and is an image, before anything is sent. */
static int check_frames(struct run *r)
{
	struct buf img;
	size_t i, n;
	int rc = 0;

	buf_init(&img, PREDICT_MAX_IMAGE);
	for (i = 0; !rc && i < r->njobs; i++)
		rc = build(r, &r->jobs[i], NULL, &n, &img, 1);
	buf_release(&img);
	return rc;
}

static int write_output(struct run *r)
{
	const char *path = r->p->out_path;
	char tmp[PATH_MAX + 8];
	FILE *fp;
	size_t i;
	int rc = 0, e;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	fp = fopen(tmp, "we");
	if (!fp) {
		e = errno;
		return err_set(ENG_EIO, "'%s': cannot write: %s", path, strerror(e));
	}
	for (i = 0; !rc && i < r->njobs; i++) {
		const struct job *j = &r->jobs[i];
		cJSON *o = cJSON_CreateObject();
		char letter[2] = { 0, 0 }, *line = NULL;
		int ok = o && cJSON_AddStringToObject(o, "id", j->id) &&
			 cJSON_AddStringToObject(o, "source", j->source);

		ok = ok && (j->response ? cJSON_AddStringToObject(o, "response", j->response) != NULL
				       : cJSON_AddNullToObject(o, "response") != NULL);
		/* what EgoProx's inference would have stored for a multiple-choice sample */
		if (ok && !j->chain)
			ok = eval_egoprox_letter(j->response, &letter[0])
			     ? cJSON_AddStringToObject(o, "answer", letter) != NULL
			     : cJSON_AddNullToObject(o, "answer") != NULL;
		ok = ok && (j->model ? cJSON_AddStringToObject(o, "model", j->model) != NULL
				    : cJSON_AddNullToObject(o, "model") != NULL);
		ok = ok && cJSON_AddBoolToObject(o, "cached", j->cached);
		if (ok && j->error)
			ok = cJSON_AddStringToObject(o, "error", j->error) != NULL;
		line = ok ? cJSON_PrintUnformatted(o) : NULL;
		if (!line)
			rc = ENG_ENOMEM;
		else if (fputs(line, fp) < 0 || fputc('\n', fp) < 0)
			rc = ENG_EIO;
		cJSON_free(line);
		cJSON_Delete(o);
	}
	e = fclose(fp) ? errno : 0;
	if (!rc && e)
		rc = ENG_EIO;
	if (!rc && rename(tmp, path)) {
		e = errno;
		rc = ENG_EIO;
	}
	if (rc) {
		unlink(tmp);
		if (rc == ENG_EIO)
			return err_set(rc, "'%s': cannot write: %s", path, strerror(e ? e : EIO));
	}
	return rc;
}

/* ============================== The run ============================== */

int predict_run(const struct predict_params *p, struct predict_summary *out)
{
	struct run *r;
	pthread_t th[PREDICT_MAX_JOBS];
	cJSON *arr = NULL;
	size_t i;
	int rc, nth = 0, jobs;

	if (!p || !p->export_dir || !p->out_path || !p->llm || !p->llm->model ||
	    !p->llm->base_url || p->jobs < 1 || p->jobs > PREDICT_MAX_JOBS || p->max_tokens < 0)
		return err_set(ENG_EINVAL, "predict: missing or bad parameters");
	r = calloc(1, sizeof(*r));
	if (!r)
		return ENG_ENOMEM;
	r->p = p;
	pthread_mutex_init(&r->lock, NULL);
	snprintf(r->dir, sizeof(r->dir), "%s", p->export_dir);
	rc = load_export(r, &arr);
	rc = rc ? rc : check_frames(r);
	rc = rc ? rc : cache_open(&r->cache, p->out_path);
	if (rc)
		goto out;
	r->ops.get = cache_get;
	r->ops.put = cache_put;
	r->ops.ctx = &r->cache;
	jobs = (size_t)p->jobs < r->njobs ? p->jobs : (int)(r->njobs ? r->njobs : 1);
	for (nth = 0; nth < jobs; nth++)
		if (pthread_create(&th[nth], NULL, worker, r))
			break;
	if (nth == 0) {
		rc = err_set(ENG_ENOMEM, "predict: cannot start a thread");
		goto out;
	}
	for (i = 0; i < (size_t)nth; i++)
		pthread_join(th[i], NULL);
	r->sum.samples = r->njobs;
	for (i = 0; i < r->njobs; i++) {
		const struct job *j = &r->jobs[i];

		if (j->response) {
			r->sum.answered++;
			r->sum.from_cache += (size_t)j->cached;
		} else {
			if (!r->sum.failed)
				snprintf(r->sum.first_error, sizeof(r->sum.first_error), "sample '%s': %s",
					 j->id, j->error ? j->error : "no reply");
			r->sum.failed++;
		}
	}
	rc = write_output(r);
	if (!rc && r->cache.write_failed)
		rc = err_set(ENG_EIO, "'%s': some replies could not be cached", r->cache.path);
	if (!rc && r->sum.failed)
		rc = err_set(ENG_EHTTP, "%zu of %zu calls failed; the first: %s", r->sum.failed,
			     r->njobs, r->sum.first_error);
	if (out)
		*out = r->sum;
out:
	for (i = 0; r->jobs && i < r->njobs; i++) {
		free(r->jobs[i].response);
		free(r->jobs[i].model);
		free(r->jobs[i].error);
	}
	free(r->jobs);
	if (r->cache.path)
		cache_close(&r->cache);
	pthread_mutex_destroy(&r->lock);
	cJSON_Delete(arr);
	free(r);
	return rc;
}
