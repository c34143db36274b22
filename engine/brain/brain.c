/* SPDX-License-Identifier: MIT */
/* The brain interface and its openai / replay brains (the local one is in brain_local.c). */
#include "brain.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"

/* A cassette shared by a brain and its clones. */
struct shared_cassette {
	struct llm_cassette *c;
	int refs;
	pthread_mutex_t lock;
};

struct brain {
	enum brain_kind kind;
	struct brain_config cfg;     /* strings point into `strings` or the caller's */
	char *base_url, *model, *key_env, *record_path, *replay_path;
	struct llm_client *client;
	struct shared_cassette *cas;
	struct llm_cache_ops cache;  /* recording: the caller's cache ... */
	struct llm_cache_ops rec_cache; /* ... behind a hook that records its hits */
};

int brain_parse_spec(const char *spec, struct brain_config *cfg)
{
	if (!strcmp(spec, "local")) {
		cfg->kind = BRAIN_LOCAL;
		return 0;
	}
	if (!strcmp(spec, "openai")) {
		cfg->kind = BRAIN_OPENAI;
		return 0;
	}
	if (!strncmp(spec, "replay:", 7) && spec[7]) {
		cfg->kind = BRAIN_REPLAY;
		cfg->replay_path = spec + 7;
		return 0;
	}
	return err_set(ENG_EINVAL, "unknown brain '%s' (local, openai or replay:FILE)", spec);
}

static void cassette_unref(struct shared_cassette *s)
{
	int last;

	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	last = --s->refs == 0;
	pthread_mutex_unlock(&s->lock);
	if (!last)
		return;
	llm_cassette_free(s->c);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

void brain_free(struct brain *b)
{
	if (!b)
		return;
	llm_client_free(b->client);
	cassette_unref(b->cas);
	free(b->base_url);
	free(b->model);
	free(b->key_env);
	free(b->record_path);
	free(b->replay_path);
	free(b);
}

static int dup_opt(const char *s, char **out)
{
	*out = NULL;
	if (!s)
		return 0;
	*out = strdup(s);
	return *out ? 0 : ENG_ENOMEM;
}

/*
 * The cache hook of a recording brain. A cached answer never reaches the
 * transport, which is where responses are recorded, so without this a
 * cassette recorded on a store that already holds the answers would miss
 * them and could not replay the run.
 */
static int recording_cache_get(void *ctx, const char *key, char **resp, int *status)
{
	struct brain *b = ctx;
	struct llm_reply probe;
	int rc = b->cache.get(b->cache.ctx, key, resp, status);

	if (rc || *status != 200 || !*resp)
		return rc;
	/* only what the client will use (it asks the server about the rest) */
	llm_reply_init(&probe);
	if (!llm_reply_parse(*resp, strlen(*resp), NULL, 0, 0, NULL, &probe) &&
	    llm_cassette_append(b->cas->c, key, NULL, *status, NULL, *resp, 0))
		rc = ENG_EIO;
	llm_reply_release(&probe);
	if (rc) {
		/* a miss: the server's answer is recorded instead */
		free(*resp);
		*resp = NULL;
	}
	return rc;
}

static int recording_cache_put(void *ctx, const char *key, const char *req, const char *resp,
			       int status, long latency_ms)
{
	struct brain *b = ctx;

	return b->cache.put ? b->cache.put(b->cache.ctx, key, req, resp, status, latency_ms) : 0;
}

static int brain_make(const struct brain_config *cfg, struct shared_cassette *cas,
		      struct brain **out)
{
	struct brain *b = calloc(1, sizeof(*b));
	int rc = 0;

	if (!b)
		return ENG_ENOMEM;
	b->kind = cfg->kind;
	b->cfg = *cfg;
	if (dup_opt(cfg->llm.base_url, &b->base_url) || dup_opt(cfg->llm.model, &b->model) ||
	    dup_opt(cfg->llm.api_key_env, &b->key_env) ||
	    dup_opt(cfg->record_path, &b->record_path) ||
	    dup_opt(cfg->replay_path, &b->replay_path)) {
		rc = ENG_ENOMEM;
		goto out;
	}
	b->cfg.llm.base_url = b->base_url;
	b->cfg.llm.model = b->model;
	b->cfg.llm.api_key_env = b->key_env;
	b->cfg.record_path = b->record_path;
	b->cfg.replay_path = b->replay_path;
	if (b->kind == BRAIN_LOCAL)
		goto out;
	if (!b->model || !*b->model) {
		rc = err_set(ENG_EINVAL, "the %s brain needs --model",
			     b->kind == BRAIN_OPENAI ? "openai" : "replay");
		goto out;
	}
	if (cas) {
		pthread_mutex_lock(&cas->lock);
		cas->refs++;
		pthread_mutex_unlock(&cas->lock);
		b->cas = cas;
	} else if (b->kind == BRAIN_REPLAY || b->record_path) {
		b->cas = calloc(1, sizeof(*b->cas));
		if (!b->cas) {
			rc = ENG_ENOMEM;
			goto out;
		}
		pthread_mutex_init(&b->cas->lock, NULL);
		b->cas->refs = 1;
		rc = llm_cassette_open(b->kind == BRAIN_REPLAY ? b->replay_path : b->record_path,
				       b->kind == BRAIN_REPLAY ? LLM_CASSETTE_REPLAY
							      : LLM_CASSETTE_RECORD,
				       &b->cas->c);
		if (rc)
			goto out;
	}
	b->cfg.llm.cassette = b->cas ? b->cas->c : NULL;
	if (b->kind == BRAIN_OPENAI && b->cas && cfg->llm.cache && cfg->llm.cache->get) {
		b->cache = *cfg->llm.cache;
		b->rec_cache.get = recording_cache_get;
		b->rec_cache.put = recording_cache_put;
		b->rec_cache.ctx = b;
		b->cfg.llm.cache = &b->rec_cache;
	}
	if (b->kind == BRAIN_REPLAY && !b->cfg.llm.base_url)
		b->cfg.llm.base_url = "http://replay.invalid/v1";
	rc = llm_client_new(&b->cfg.llm, &b->client);
out:
	if (rc) {
		brain_free(b);
		return rc;
	}
	*out = b;
	return 0;
}

int brain_new(const struct brain_config *cfg, struct brain **out)
{
	return brain_make(cfg, NULL, out);
}

int brain_clone(const struct brain *b, const struct llm_cache_ops *cache,
		struct brain **out)
{
	struct brain_config cfg = b->cfg;

	cfg.llm.cache = cache;
	return brain_make(&cfg, b->cas, out);
}

bool brain_waits(const struct brain *b)
{
	return b->kind == BRAIN_OPENAI;
}

const char *brain_name(const struct brain *b)
{
	switch (b->kind) {
	case BRAIN_LOCAL: return "local";
	case BRAIN_OPENAI: return "openai";
	default: return "replay";
	}
}

const char *brain_model(const struct brain *b)
{
	if (b->kind == BRAIN_LOCAL)
		return "proxima-local/1";
	return b->model ? b->model : "";
}

int brain_turn(struct brain *b, const struct brain_session *s,
	       const struct llm_msg *msgs, size_t n,
	       const struct llm_tool *tools, size_t ntools, int last_turn,
	       struct llm_reply *out)
{
	struct llm_opts opts;

	if (b->kind == BRAIN_LOCAL)
		return brain__local_turn(s, msgs, n, last_turn, out);
	llm_opts_init(&opts);
	opts.tools_static = 1; /* the agent's tool sets live as long as the process */
	if (last_turn) {
		opts.tool_choice = LLM_CHOICE_NAMED;
		opts.tool_name = "submit_qa";
	} else {
		opts.tool_choice = LLM_CHOICE_AUTO;
	}
	return llm_chat(b->client, msgs, n, tools, ntools, &opts, out);
}
