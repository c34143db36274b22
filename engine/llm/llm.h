/* SPDX-License-Identifier: MIT */
/*
 * OpenAI-compatible Chat Completions client over libcurl and cJSON, with
 * provider profiles (OpenAI, Gemini, vLLM, llama.cpp, Ollama), the retry
 * policy of the OpenAI SDK, a response-cache hook and record/replay
 * cassettes. docs/llm.md describes the profiles and the policies.
 *
 * Ownership, stated once: every char * and cJSON * inside a struct llm_msg,
 * struct llm_tool_call and struct llm_reply is owned by that struct (heap,
 * freed by its _release function). struct llm_tool, struct llm_config and
 * struct llm_opts only borrow: their pointers must stay valid during the
 * call that uses them, and nothing is freed through them. llm_chat() never
 * modifies or takes over the messages and tools it is given.
 *
 * Threads: call llm_global_init() once in main() before any thread starts
 * and llm_global_cleanup() at exit. A client owns one curl easy handle and
 * may be used by one thread at a time; create one client per worker thread.
 * A cassette may be shared by several clients (it locks itself).
 *
 * The API key is read from the environment at llm_client_new() and used
 * only in the Authorization header: it is never logged, cached, recorded
 * or returned.
 */
#ifndef LLM_H
#define LLM_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "fiber.h"
#include "hash.h"

struct buf;

/* ===================== Global setup ===================== */

/*
 * curl_global_init(CURL_GLOBAL_DEFAULT). Call once from main() before any
 * thread uses a client. Returns 0 or ENG_EHTTP.
 */
int llm_global_init(void);

/* curl_global_cleanup(). Call once at exit, after every client is freed. */
void llm_global_cleanup(void);

/* ===================== Provider profiles ===================== */

enum llm_profile {
	LLM_PROFILE_AUTO = 0, /* chosen from the base URL (llm_profile_detect) */
	LLM_PROFILE_OPENAI,
	LLM_PROFILE_GEMINI,
	LLM_PROFILE_VLLM,
	LLM_PROFILE_LLAMACPP,
	LLM_PROFILE_OLLAMA
};

/* What a profile sends and how; one row per provider (docs/llm.md). */
enum llm_profile_flags {
	LLM_PF_TOOL_CHOICE = (1 << 0),     /* send tool_choice at all */
	LLM_PF_CHOICE_OBJECT = (1 << 1),   /* named choice as an object, else "required" */
	LLM_PF_PARALLEL = (1 << 2),        /* send parallel_tool_calls when asked */
	LLM_PF_SEED = (1 << 3),            /* send seed */
	LLM_PF_STRICT = (1 << 4),          /* send "strict" on tool definitions */
	LLM_PF_GEMINI_SCHEMA = (1 << 5),   /* strip additionalProperties, $schema, const, type arrays */
	LLM_PF_WHITELIST = (1 << 6),       /* drop top-level fields not on the provider's list */
	LLM_PF_REASONING_RULES = (1 << 7)  /* no temperature for o1/o3/o4/gpt-5 models */
};

struct llm_profile_info {
	enum llm_profile id;
	const char *name;             /* "openai", "gemini", ... (used in cache keys) */
	const char *key_env;          /* default API key variable */
	const char *max_tokens_field; /* "max_completion_tokens" or "max_tokens" */
	unsigned flags;               /* enum llm_profile_flags */
};

/* The row for a profile (AUTO gives the openai row). Can't fail. */
const struct llm_profile_info *llm_profile_get(enum llm_profile p);

/*
 * 1 when the profile sends the top-level request field: every field for
 * profiles without LLM_PF_WHITELIST, the documented list for Gemini.
 * Can't fail.
 */
int llm_profile_allows_field(const struct llm_profile_info *p, const char *field);

/*
 * Rewrites a tool parameter schema in place for Gemini's function
 * declarations: removes additionalProperties, $schema, $id, $comment,
 * propertyNames and const (a string const becomes a one-value enum),
 * replaces a type array by its first non-null type and takes such
 * nullable properties out of the parent's "required". Recurses through
 * properties, items, anyOf/oneOf/allOf and $defs. Returns 0 or ENG_ENOMEM.
 */
int llm_gemini_schema(cJSON *schema);

/*
 * Parses "openai", "gemini", "vllm", "llamacpp" (or "llama.cpp"), "ollama"
 * or "auto". Returns 0 or ENG_EINVAL (err_set names the value).
 */
int llm_profile_parse(const char *name, enum llm_profile *out);

/*
 * The profile a base URL implies: googleapis.com -> gemini, port 11434 or
 * "ollama" -> ollama, port 8080 -> llamacpp, port 8000 -> vllm, anything
 * else -> openai. Can't fail.
 */
enum llm_profile llm_profile_detect(const char *base_url);

/* ===================== Conversation model ===================== */

enum llm_role {
	LLM_ROLE_SYSTEM = 0,
	LLM_ROLE_USER,
	LLM_ROLE_ASSISTANT,
	LLM_ROLE_TOOL
};

/* How a tool call's arguments arrived (llm-protocol.md 4.6). */
enum llm_tc_flags {
	LLM_TC_ID_SYNTH = (1 << 0),      /* the provider sent no id; id is call_<n> */
	LLM_TC_ARGS_OBJECT = (1 << 1),   /* arguments came as a JSON object, not a string */
	LLM_TC_ARGS_DOUBLE = (1 << 2),   /* arguments were JSON encoded twice */
	LLM_TC_ARGS_EMPTY = (1 << 3),    /* arguments were "" or missing; now "{}" */
	LLM_TC_ARGS_INVALID = (1 << 4),  /* not JSON: arguments_json is "{}", see arguments_error */
	LLM_TC_SALVAGED = (1 << 5)       /* recovered from text content, not from tool_calls */
};

struct llm_tool_call {
	char *id;              /* tool_call_id; never NULL once parsed */
	char *name;            /* function name as the model sent it (maybe unknown) */
	char *arguments_json;  /* valid JSON text, re-serialised; "{}" when invalid */
	char *arguments_raw;   /* the provider's text when it differs from arguments_json, else NULL */
	char *arguments_error; /* why arguments were not JSON, else NULL */
	cJSON *raw;            /* the provider's tool-call object, echoed back in history, or NULL */
	unsigned flags;        /* enum llm_tc_flags */
};

struct llm_msg {
	enum llm_role role;
	char *content;                    /* text, or NULL */
	cJSON *parts;                     /* content parts array (text, image_url); sent instead of content */
	struct llm_tool_call *tool_calls; /* assistant only: the calls, in order */
	size_t n_tool_calls;
	char *tool_call_id;               /* tool only: the call this answers */
	char *name;                       /* tool only: the tool's name (always sent) */
};

/* Makes m an empty message of the role. Can't fail. */
void llm_msg_init(struct llm_msg *m, enum llm_role role);

/*
 * Makes m a message of the role holding a copy of text (NULL allowed).
 * Returns 0 or ENG_ENOMEM (m is then empty but valid).
 */
int llm_msg_text(struct llm_msg *m, enum llm_role role, const char *text);

/*
 * Makes m a tool result answering tool_call_id from tool `name`, content
 * copied. Returns 0, ENG_EINVAL (NULL id) or ENG_ENOMEM.
 */
int llm_msg_tool_result(struct llm_msg *m, const char *tool_call_id,
			const char *name, const char *content);

/*
 * Sets user content parts from a JSON array text such as
 * [{"type":"text","text":"..."},{"type":"image_url","image_url":{"url":"data:..."}}].
 * Returns 0, ENG_EPARSE (not an array) or ENG_ENOMEM.
 */
int llm_msg_set_parts(struct llm_msg *m, const char *parts_json);

/*
 * Appends an image to a user message's content parts, as Chat Completions
 * takes it: {"type":"image_url","image_url":{"url":"data:MIME;base64,..."}}.
 * The bytes are base64-encoded (copied; the caller keeps them). A message
 * that held plain text gets it as its first text part, so text and images
 * stay in the order they were added. mime must be an image type
 * ("image/jpeg", "image/png", ...). Returns 0, ENG_EINVAL (not a user
 * message, not an image type, no bytes) or ENG_ENOMEM (m unchanged then).
 */
int llm_msg_add_image(struct llm_msg *m, const char *mime, const void *bytes, size_t len);

/*
 * Appends a text part {"type":"text","text":...} (copied) to a user
 * message's content parts, with the same rules as llm_msg_add_image.
 * Returns 0, ENG_EINVAL (not a user message) or ENG_ENOMEM.
 */
int llm_msg_add_text(struct llm_msg *m, const char *text);

/*
 * Appends a tool call to an assistant message (copies everything; raw may
 * be NULL). arguments_json must be valid JSON. Returns 0, ENG_EINVAL or
 * ENG_ENOMEM.
 */
int llm_msg_add_tool_call(struct llm_msg *m, const char *id, const char *name,
			  const char *arguments_json, const cJSON *raw);

/* Deep copy of src into dst. Returns 0 or ENG_ENOMEM (dst then empty). */
int llm_msg_copy(struct llm_msg *dst, const struct llm_msg *src);

/* Frees the contents; m is left empty with the same role. NULL is a no-op. */
void llm_msg_release(struct llm_msg *m);

/*
 * A tool offered to the model. Every pointer is borrowed. The schema is
 * `parameters` when non-NULL, else `parameters_json` parsed, else none.
 */
struct llm_tool {
	const char *name;            /* must match ^[a-zA-Z0-9_-]{1,64}$ */
	const char *description;     /* or NULL */
	const cJSON *parameters;     /* JSON Schema object, or NULL */
	const char *parameters_json; /* the same as text, used when parameters is NULL */
	int strict;                  /* send strict:true where the profile allows */
};

/* ===================== Responses and errors ===================== */

/* A provider error, from any of the four shapes (llm-protocol.md 3.3). */
struct llm_error {
	int http_status;      /* 0 for a transport error */
	int curl_code;        /* CURLcode of a transport error, else 0 */
	char type[64];        /* error.type, or error.status (Gemini), or "" */
	char code[64];        /* error.code as text (string or integer), or "" */
	char param[128];      /* error.param, or "" */
	char message[512];    /* error message (truncated), or "" */
	long retry_after_ms;  /* server's retry hint (headers or RetryInfo), -1 when none */
	int quota;            /* 1 when this is a quota/billing error (never retried) */
};

struct llm_usage {
	long prompt_tokens;
	long completion_tokens;
	long total_tokens;
	long cached_tokens;    /* prompt_tokens_details.cached_tokens */
	long reasoning_tokens; /* completion_tokens_details.reasoning_tokens */
	int present;           /* 1 when the reply carried usage */
};

struct llm_reply {
	struct llm_msg msg;         /* the assistant message, ready to append to history */
	char *finish_reason;        /* as sent (informational only), or NULL */
	char *id;                   /* response id, or NULL */
	char *model;                /* model the server reports, or NULL */
	char *system_fingerprint;   /* or NULL */
	char *request_id;           /* x-request-id of the last attempt, or NULL */
	char *refusal;              /* message.refusal, or NULL */
	char *reasoning;            /* reasoning_content / reasoning, or NULL */
	char *body;                 /* the raw response body of the last attempt, or NULL */
	struct llm_usage usage;
	struct llm_error error;     /* filled when llm_chat() fails */
	int http_status;            /* status of the last attempt (0: none) */
	int attempts;               /* HTTP attempts made (0 on a cache hit) */
	long retry_wait_ms;         /* total backoff requested between attempts */
	long latency_ms;            /* wall time of the last attempt */
	int cached;                 /* 1: answered by the cache hook */
	int replayed;               /* 1: answered by a replay cassette */
	int salvaged;               /* 1: tool calls were recovered from content */
	char key[HASH_HEX_LEN + 1]; /* the request's cache/cassette key */
};

/* Makes r empty. Can't fail. */
void llm_reply_init(struct llm_reply *r);

/* Frees the contents and re-initialises r. NULL is a no-op. */
void llm_reply_release(struct llm_reply *r);

/*
 * Moves the reply's assistant message into dst (which must not own
 * anything) and leaves r->msg empty. Can't fail.
 */
void llm_reply_take_msg(struct llm_reply *r, struct llm_msg *dst);

/*
 * Parses an error body of any provider shape into err (which is cleared
 * first; retry_after_ms from a Gemini RetryInfo). Never fails: an
 * unparseable body becomes the message text. Sets err->quota.
 */
void llm_error_parse(const char *body, size_t len, int http_status, struct llm_error *err);

/*
 * Parses a 200 response body into r (msg, usage, ids, finish_reason).
 * Tool calls are normalised (llm-protocol.md 4.6); missing ids become
 * call_<n> from *id_counter (incremented; may be NULL for call_1...).
 * With `salvage` and tools offered and no tool_calls, a call leaked into
 * content as <tool_call>{...}</tool_call>, a ```json fence or a bare
 * {"name":..,"arguments":..} object naming an offered tool is recovered.
 * Returns 0 or ENG_EPARSE (err_set says what is missing).
 */
int llm_reply_parse(const char *body, size_t len, const struct llm_tool *tools,
		    size_t ntools, int salvage, unsigned long *id_counter,
		    struct llm_reply *r);

/* ===================== Cache hook ===================== */

/*
 * A response cache (the store module adapts store_cache_get/put to this).
 * get: 0 on a hit with *response_json a malloc'd string that the client
 *      frees with free(), and *status set; ENG_ENOTFOUND on a miss; any
 *      other negative code is logged and treated as a miss.
 * put: called only for status 200 replies that parsed; its return code is
 *      logged and otherwise ignored. request_json is the canonical body.
 * Both may be called from several threads when clients share a cache.
 */
struct llm_cache_ops {
	int (*get)(void *ctx, const char *key, char **response_json, int *status);
	int (*put)(void *ctx, const char *key, const char *request_json,
		   const char *response_json, int status, long latency_ms);
	void *ctx;
};

/* ===================== Cassettes ===================== */

/* Record/replay file, one JSON object per line (docs/llm.md). Opaque. */
struct llm_cassette;

enum llm_cassette_mode {
	LLM_CASSETTE_RECORD = 1,      /* truncate the file, append every HTTP response */
	LLM_CASSETTE_REPLAY,          /* answer from the file only; a miss is an error */
	LLM_CASSETTE_REPLAY_OR_RECORD /* answer from the file, record misses (appends) */
};

/*
 * Opens a cassette. Replay modes load the whole file (a missing file is
 * ENG_ENOENT for REPLAY and an empty cassette for REPLAY_OR_RECORD).
 * Returns 0, ENG_EIO, ENG_ENOENT, ENG_EPARSE (err_set names file:line)
 * or ENG_ENOMEM; *out is set only on success.
 */
int llm_cassette_open(const char *path, enum llm_cassette_mode mode,
		      struct llm_cassette **out);

/* Flushes and closes. llm_cassette_free(NULL) is a no-op. */
void llm_cassette_free(struct llm_cassette *c);

/* The mode the cassette was opened with. Can't fail. */
enum llm_cassette_mode llm_cassette_mode(const struct llm_cassette *c);

/* Number of entries loaded or recorded so far. Can't fail. */
size_t llm_cassette_count(struct llm_cassette *c);

/*
 * Finds the response for key: entries with the same key are served in
 * recorded order, and the last one repeats once all were served. On a hit
 * *status is set, *headers is a new cJSON object (caller deletes) and
 * *body a malloc'd string (caller frees). Returns 0, ENG_ENOTFOUND (err_set:
 * "cassette FILE has no response for request KEY") or ENG_ENOMEM.
 */
int llm_cassette_lookup(struct llm_cassette *c, const char *key, int *status,
			cJSON **headers, char **body);

/*
 * Appends one entry {key, request, status, headers, response, latency_ms}
 * (and keeps it for lookups). headers (may be NULL) is filtered to the
 * retry/rate-limit/request-id names; request_json is stored parsed.
 * Returns 0, ENG_EINVAL (replay-only cassette) or ENG_EIO.
 */
int llm_cassette_append(struct llm_cassette *c, const char *key,
			const char *request_json, int status, const cJSON *headers,
			const char *body, long latency_ms);

/* ===================== Client ===================== */

/*
 * Client settings. Fill with llm_config_init() and override fields; the
 * strings are borrowed and copied by llm_client_new().
 */
struct llm_config {
	const char *base_url;        /* e.g. https://api.openai.com/v1; its path is part of the
	                                cache key (a replay-only client without one uses /v1) */
	const char *model;           /* required */
	enum llm_profile profile;    /* AUTO: from base_url */
	const char *api_key_env;     /* NULL: the profile's (OPENAI_API_KEY, GEMINI_API_KEY) */
	long connect_timeout_ms;     /* default 10000 */
	long timeout_ms;             /* total per attempt; default 600000 */
	int max_retries;             /* retries after the first attempt; default 2 */
	long max_backoff_ms;         /* cap of the exponential backoff; default 8000 */
	long max_retry_after_ms;     /* larger server hints stop retrying; default 60000 */
	long max_retry_wait_ms;      /* cap on the summed waits of one call; default 60000 */
	size_t max_response_bytes;   /* response body cap; default 8 MiB */
	double temperature;          /* < 0: not sent; default -1 */
	long seed;                   /* < 0: not sent; default -1 */
	int max_tokens;              /* <= 0: not sent; default 0 */
	int salvage;                 /* recover tool calls leaked into content; default 1 */
	uint64_t jitter_seed;        /* backoff jitter source seed; 0: from the clock */
	const struct llm_cache_ops *cache; /* or NULL */
	struct llm_cassette *cassette;     /* or NULL; borrowed, must outlive the client */
	/* waits between attempts; NULL: nanosleep. Tests record instead. */
	void (*sleep_ms)(void *ctx, long ms);
	void *sleep_ctx;
	/* one line per attempt and per cache/cassette event; never the key */
	void (*log)(void *ctx, const char *line);
	void *log_ctx;
};

/* Per-call options; NULL means all defaults. */
enum llm_tool_choice {
	LLM_CHOICE_DEFAULT = 0, /* not sent (auto with tools) */
	LLM_CHOICE_AUTO,
	LLM_CHOICE_NONE,
	LLM_CHOICE_REQUIRED,
	LLM_CHOICE_NAMED        /* tool_name; "required" where objects are unsupported */
};

struct llm_opts {
	enum llm_tool_choice tool_choice;
	const char *tool_name;       /* for LLM_CHOICE_NAMED */
	int parallel_tool_calls;     /* -1: not sent; 0/1 where the profile supports it */
	int max_tokens;              /* > 0 overrides the config */
	const char *response_format_json; /* e.g. {"type":"json_schema",...}, or NULL */
	const char *extra_json;      /* extra top-level fields (object text), or NULL */
	int tools_static;            /* 1: the tools array and all it points to never
					change or go away while the process runs (static
					sets): their request text is then built once per
					profile and kept, not built per request */
};

/* Fills cfg with the defaults listed above (base_url and model NULL). */
void llm_config_init(struct llm_config *cfg);

/* Fills opts with defaults (tool_choice DEFAULT, parallel -1). */
void llm_opts_init(struct llm_opts *opts);

struct llm_client;

/*
 * Creates a client: copies the settings, resolves the profile, reads the
 * API key variable (unset: no Authorization header, fine for local
 * servers) and creates the curl handle. Returns 0, ENG_EINVAL (no model or
 * base_url without a replay cassette), ENG_EHTTP or ENG_ENOMEM; *out set
 * only on success.
 */
int llm_client_new(const struct llm_config *cfg, struct llm_client **out);

/* Frees the client and wipes the key. llm_client_free(NULL) is a no-op. */
void llm_client_free(struct llm_client *c);

/* The resolved profile. Can't fail. */
enum llm_profile llm_client_profile(const struct llm_client *c);

/*
 * Builds the request body for the client's profile (llm-protocol.md 1, 4,
 * 8.1) into *out (a new cJSON object the caller deletes). Returns 0,
 * ENG_EINVAL (bad tool name, tool message without id, bad option),
 * ENG_EPARSE (a schema or extra_json that is not JSON) or ENG_ENOMEM;
 * err_set names the field.
 */
int llm_build_request(const struct llm_client *c, const struct llm_msg *msgs, size_t n,
		      const struct llm_tool *tools, size_t ntools,
		      const struct llm_opts *opts, cJSON **out);

/*
 * The conversation in Chat Completions form (the "messages" array the
 * openai profile sends), for traces. *out is a new cJSON array the caller
 * deletes. Returns 0, ENG_EINVAL (a tool message without id or name) or
 * ENG_ENOMEM.
 */
int llm_msgs_to_json(const struct llm_msg *msgs, size_t n, cJSON **out);

/*
 * One Chat Completions call: builds the body, asks the cache, then the
 * cassette or the network with retries, parses the reply. `out` is
 * always initialised (release it in every case). Returns
 *   0            reply parsed (out->msg is the assistant message)
 *   ENG_EHTTP    HTTP error status or transport failure after the retries
 *                (out->error has status, type, code, message)
 *   ENG_ETIMEOUT the last attempt timed out
 *   ENG_EPARSE   the last 2xx body was not a chat completion
 *   ENG_ETOOBIG  the response passed max_response_bytes
 *   ENG_ENOTFOUND a replay cassette had no entry for the request
 *   ENG_EINVAL / ENG_ENOMEM from building the request
 * err_set() holds a one-line summary (never the key).
 */
int llm_chat(struct llm_client *c, const struct llm_msg *msgs, size_t n,
	     const struct llm_tool *tools, size_t ntools,
	     const struct llm_opts *opts, struct llm_reply *out);

/*
 * Runs fn(args[i]) for i < n as fibers on the calling thread (fiber.h),
 * whose requests wait together: an llm_chat() on one of them hands its
 * transfer to the thread's libcurl multi handle and lets the other fibers
 * run until its answer is in, and its retry waits are fiber sleeps. So
 * --jobs sessions of a remote brain run on as many threads as there are
 * cores. A fiber must not block on what another fiber of its thread would
 * release (fiber.h). Returns 0 when every job has run, or ENG_EHTTP
 * (libcurl missing or its multi handle not made) or ENG_ENOMEM before
 * any job ran, with err_msg() set.
 */
int llm_fibers_run(size_t n, fiber_fn *fn, void *const *args);

/* ===================== Helpers (also used by tests) ===================== */

/*
 * Appends the canonical form of j: objects with keys sorted bytewise,
 * recursively, no whitespace, cJSON number formatting. Returns 0,
 * ENG_ENOMEM or ENG_ETOOBIG.
 */
int llm_json_canonical(const cJSON *j, struct buf *out);

/*
 * The cache/cassette key: lowercase hex SHA-256 of
 * profile "\0" path "\0" canonical(body without user, metadata,
 * stream_options). Returns 0 or an error from hashing/allocation.
 */
int llm_cache_key(const char *profile, const char *path, const cJSON *body,
		  char out[HASH_HEX_LEN + 1]);

/*
 * llm_cache_key() of a body whose top-level "tools" is a raw item: the
 * key is computed with tools_canon (llm_json_canonical() of the tools
 * array) in its place, so it equals the key of the body built in full.
 */
int llm_cache_key_tools(const char *profile, const char *path, const cJSON *body,
			const char *tools_canon, char out[HASH_HEX_LEN + 1]);

/*
 * The backoff before retry number `retry` (0 for the first retry):
 * min(500 * 2^retry, max_backoff_ms) * (1 - 0.25 * u), u in [0, 1).
 * Can't fail.
 */
long llm_backoff_ms(int retry, long max_backoff_ms, double u);

/*
 * Parses a Retry-After value: delta seconds (integer or decimal) or an
 * HTTP date relative to now. Returns 0 with *ms >= 0, or ENG_EINVAL.
 */
int llm_parse_retry_after(const char *value, time_t now, long *ms);

/*
 * Parses a Go/protobuf duration such as "2s", "1.5s", "250ms", "1m30s".
 * Returns 0 with *ms, or ENG_EINVAL.
 */
int llm_parse_duration(const char *s, long *ms);

#endif /* LLM_H */
