/* SPDX-License-Identifier: MIT */
/*
 * Record/replay cassettes for the Chat Completions client: one JSON object
 * per line {key, request, status, headers, response, latency_ms}, matched
 * by the request key (llm_cache_key), so replays need no network.
 */
#include "llm.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "err.h"
#include "banned.h"

#define CASSETTE_MAX_LINE ((size_t)256 << 20)

struct cas_entry {
	char *key;
	int status;
	cJSON *headers;   /* filtered response headers (object) */
	char *body;       /* response body text */
	int served;       /* handed out by a lookup already */
};

struct llm_cassette {
	char *path;
	enum llm_cassette_mode mode;
	FILE *f;                 /* open for appending in record modes, else NULL */
	pthread_mutex_t lock;
	struct cas_entry *e;     /* loaded or recorded entries (replay modes) */
	size_t n, cap;
	size_t count;            /* entries loaded plus recorded */
};

/* Response headers worth keeping: retry hints, rate limits, request ids. */
static int header_kept(const char *name)
{
	static const char *const keep[] = {
		"content-type", "retry-after", "retry-after-ms", "x-should-retry",
		"x-request-id", "openai-processing-ms", "openai-model",
	};
	size_t i;

	if (!strncmp(name, "x-ratelimit-", 12))
		return 1;
	for (i = 0; i < ARRAY_SIZE(keep); i++)
		if (!strcmp(name, keep[i]))
			return 1;
	return 0;
}

static cJSON *headers_filtered(const cJSON *h)
{
	cJSON *o = cJSON_CreateObject();
	const cJSON *it;

	if (!o)
		return NULL;
	cJSON_ArrayForEach(it, h) {
		if (!it->string || !cJSON_IsString(it) || !header_kept(it->string))
			continue;
		if (!cJSON_AddStringToObject(o, it->string, it->valuestring)) {
			cJSON_Delete(o);
			return NULL;
		}
	}
	return o;
}

static void entry_release(struct cas_entry *e)
{
	free(e->key);
	cJSON_Delete(e->headers);
	free(e->body);
}

/* Takes over key, headers and body (freed on failure). */
static int entry_push(struct llm_cassette *c, char *key, int status, cJSON *headers,
		      char *body, int served)
{
	struct cas_entry *e;

	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 16;

		e = realloc(c->e, cap * sizeof(*e));
		if (!e) {
			free(key);
			cJSON_Delete(headers);
			free(body);
			return ENG_ENOMEM;
		}
		c->e = e;
		c->cap = cap;
	}
	e = &c->e[c->n++];
	e->key = key;
	e->status = status;
	e->headers = headers;
	e->body = body;
	e->served = served;
	return 0;
}

static int load_line(struct llm_cassette *c, const char *line, size_t len, size_t lineno)
{
	cJSON *j = cJSON_ParseWithLength(line, len);
	const cJSON *key, *status, *resp, *text, *h;
	char *k = NULL, *body = NULL;
	cJSON *headers = NULL;
	char *p;
	int rc = 0;

	key = cJSON_GetObjectItemCaseSensitive(j, "key");
	status = cJSON_GetObjectItemCaseSensitive(j, "status");
	resp = cJSON_GetObjectItemCaseSensitive(j, "response");
	text = cJSON_GetObjectItemCaseSensitive(j, "response_text");
	h = cJSON_GetObjectItemCaseSensitive(j, "headers");
	if (!cJSON_IsObject(j) || !cJSON_IsString(key) || !cJSON_IsNumber(status) || !resp) {
		rc = err_set(ENG_EPARSE, "%s:%zu: not a cassette entry (key, status, response)",
			     c->path, lineno);
		goto out;
	}
	k = strdup(key->valuestring);
	if (cJSON_IsTrue(text) && cJSON_IsString(resp)) {
		body = strdup(resp->valuestring);
	} else {
		p = cJSON_PrintUnformatted(resp);
		body = p ? strdup(p) : NULL;
		cJSON_free(p);
	}
	headers = cJSON_IsObject(h) ? cJSON_Duplicate(h, 1) : cJSON_CreateObject();
	if (!k || !body || !headers) {
		free(k);
		free(body);
		cJSON_Delete(headers);
		rc = ENG_ENOMEM;
		goto out;
	}
	rc = entry_push(c, k, status->valueint, headers, body, 0);
	if (!rc)
		c->count++;
out:
	cJSON_Delete(j);
	return rc;
}

static int load(struct llm_cassette *c)
{
	FILE *f = fopen(c->path, "r");
	struct buf line;
	size_t lineno = 0;
	int ch;
	int rc = 0;

	if (!f) {
		int e = errno;

		if (e == ENOENT && c->mode == LLM_CASSETTE_REPLAY_OR_RECORD)
			return 0;
		return err_set(e == ENOENT ? ENG_ENOENT : ENG_EIO, "cannot open cassette '%s': %s",
			       c->path, strerror(e));
	}
	buf_init(&line, CASSETTE_MAX_LINE);
	for (;;) {
		ch = getc(f);
		if (ch != EOF && ch != '\n') {
			char cc = (char)ch;

			rc = buf_add(&line, &cc, 1);
			if (rc) {
				rc = err_set(rc, "%s:%zu: line too long", c->path, lineno + 1);
				break;
			}
			continue;
		}
		lineno++;
		if (line.len)
			rc = load_line(c, buf_str(&line), line.len, lineno);
		buf_reset(&line);
		if (rc || ch == EOF)
			break;
	}
	if (!rc && ferror(f))
		rc = err_set(ENG_EIO, "cannot read cassette '%s'", c->path);
	buf_release(&line);
	fclose(f);
	return rc;
}

int llm_cassette_open(const char *path, enum llm_cassette_mode mode,
		      struct llm_cassette **out)
{
	struct llm_cassette *c;
	int rc = 0;

	if (!path || mode < LLM_CASSETTE_RECORD || mode > LLM_CASSETTE_REPLAY_OR_RECORD)
		return err_set(ENG_EINVAL, "bad cassette path or mode");
	c = calloc(1, sizeof(*c));
	if (!c)
		return ENG_ENOMEM;
	pthread_mutex_init(&c->lock, NULL);
	c->mode = mode;
	c->path = strdup(path);
	if (!c->path) {
		rc = ENG_ENOMEM;
		goto out;
	}
	if (mode != LLM_CASSETTE_RECORD) {
		rc = load(c);
		if (rc)
			goto out;
	}
	if (mode != LLM_CASSETTE_REPLAY) {
		c->f = fopen(path, mode == LLM_CASSETTE_RECORD ? "w" : "a");
		if (!c->f) {
			int e = errno;

			rc = err_set(ENG_EIO, "cannot write cassette '%s': %s", path, strerror(e));
			goto out;
		}
	}
out:
	if (rc) {
		llm_cassette_free(c);
		return rc;
	}
	*out = c;
	return 0;
}

void llm_cassette_free(struct llm_cassette *c)
{
	size_t i;

	if (!c)
		return;
	if (c->f)
		fclose(c->f);
	for (i = 0; i < c->n; i++)
		entry_release(&c->e[i]);
	free(c->e);
	free(c->path);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

enum llm_cassette_mode llm_cassette_mode(const struct llm_cassette *c)
{
	return c->mode;
}

size_t llm_cassette_count(struct llm_cassette *c)
{
	size_t n;

	pthread_mutex_lock(&c->lock);
	n = c->count;
	pthread_mutex_unlock(&c->lock);
	return n;
}

int llm_cassette_lookup(struct llm_cassette *c, const char *key, int *status,
			cJSON **headers, char **body)
{
	struct cas_entry *hit = NULL, *last = NULL;
	size_t i;
	int rc = 0;

	pthread_mutex_lock(&c->lock);
	for (i = 0; i < c->n; i++) {
		if (strcmp(c->e[i].key, key))
			continue;
		last = &c->e[i];
		if (!c->e[i].served) {
			hit = &c->e[i];
			break;
		}
	}
	if (!hit)
		hit = last;
	if (!hit) {
		rc = err_set(ENG_ENOTFOUND, "cassette %s has no response for request %s", c->path,
			     key);
		goto out;
	}
	hit->served = 1;
	*headers = cJSON_Duplicate(hit->headers, 1);
	*body = strdup(hit->body);
	if (!*headers || !*body) {
		cJSON_Delete(*headers);
		free(*body);
		*headers = NULL;
		*body = NULL;
		rc = ENG_ENOMEM;
		goto out;
	}
	*status = hit->status;
out:
	pthread_mutex_unlock(&c->lock);
	return rc;
}

int llm_cassette_append(struct llm_cassette *c, const char *key,
			const char *request_json, int status, const cJSON *headers,
			const char *body, long latency_ms)
{
	cJSON *line = cJSON_CreateObject();
	cJSON *req, *resp, *h;
	char *text = NULL;
	int rc = 0;

	if (!c->f) {
		cJSON_Delete(line);
		return err_set(ENG_EINVAL, "cassette %s is open for replay only", c->path);
	}
	if (!line)
		return ENG_ENOMEM;
	body = body ? body : "";
	req = request_json ? cJSON_Parse(request_json) : NULL;
	if (!req)
		req = cJSON_CreateString(request_json ? request_json : "");
	resp = cJSON_Parse(body);
	h = headers_filtered(headers);
	cJSON_AddStringToObject(line, "key", key);
	cJSON_AddItemToObject(line, "request", req);
	cJSON_AddNumberToObject(line, "status", status);
	cJSON_AddItemToObject(line, "headers", h);
	if (resp) {
		cJSON_AddItemToObject(line, "response", resp);
	} else {
		cJSON_AddStringToObject(line, "response", body);
		cJSON_AddTrueToObject(line, "response_text");
	}
	cJSON_AddNumberToObject(line, "latency_ms", (double)latency_ms);
	text = cJSON_PrintUnformatted(line);
	if (!text || !req || !h) {
		rc = ENG_ENOMEM;
		goto out;
	}
	pthread_mutex_lock(&c->lock);
	if (fputs(text, c->f) == EOF || fputc('\n', c->f) == EOF || fflush(c->f))
		rc = err_set(ENG_EIO, "cannot write cassette '%s'", c->path);
	if (!rc)
		c->count++;
	if (!rc && c->mode == LLM_CASSETTE_REPLAY_OR_RECORD) {
		char *k = strdup(key);
		char *b = strdup(body);
		cJSON *hh = cJSON_Duplicate(h, 1);

		if (k && b && hh)
			rc = entry_push(c, k, status, hh, b, 1);
		else {
			free(k);
			free(b);
			cJSON_Delete(hh);
		}
	}
	pthread_mutex_unlock(&c->lock);
out:
	cJSON_free(text);
	cJSON_Delete(line);
	return rc;
}
