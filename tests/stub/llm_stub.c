/* SPDX-License-Identifier: MIT */
/*
 * llm_stub: a loopback OpenAI-compatible Chat Completions server for tests
 * and benchmarks. It speaks HTTP/1.1 on raw sockets (so it can hang, reset
 * and truncate), answers from a JSON script in the flavour of OpenAI,
 * Gemini, vLLM, llama.cpp or Ollama, validates requests the way strict
 * providers do, and logs every request as one JSON line.
 *
 *   llm_stub --script FILE [--log FILE] [--log-brief] [--latency-ms N]
 *            [--max-requests N] [--timeout-s N] [--strict] [--flavor F] [--loop]
 *            [--threads N]
 *
 * In --strict mode it also checks content parts as vision servers do:
 * text parts hold text, image_url parts (in user messages only) hold an
 * http(s) URL or a base64 data URL of a JPEG, PNG, GIF or WebP whose
 * bytes decode and start with that format's signature. A script's
 * "match" list answers by request text: the first entry whose "contains"
 * occurs in a message's text is the reply, as often as it matches.
 *
 * It binds 127.0.0.1 on a free port and prints "port N" on stdout. It
 * exits after --max-requests requests or --timeout-s seconds (default 60).
 * docs/llm.md describes the script format.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "buf.h"
#include "err.h"
#include "rng.h"
#include "warm.h"

#define MAX_HEAD ((size_t)64 << 10)
#define MAX_BODY ((size_t)64 << 20)

/* ===================== State ===================== */

static struct {
	cJSON *script;          /* the script file */
	const cJSON *replies;   /* the queue, served once each */
	const cJSON *loop;      /* served by turn forever after the queue, or NULL */
	const cJSON *match;     /* replies chosen by a text of the request, or NULL */
	int next;               /* next queue index */
	const char *flavor;     /* server identity: validation and default shape */
	int strict;             /* validate requests */
	int reasoning;          /* reasoning-model rules (max_tokens, temperature) */
	long latency_ms;        /* added before every reply */
	int log_brief;          /* log lines without the request body */
	FILE *log;
	long received;
	long max_requests;      /* 0: unlimited */
	unsigned long ids;      /* for generated ids */
	cJSON *sigs;            /* tool_call_id -> thought signature issued */
	pthread_mutex_t lock;
	volatile sig_atomic_t stop;
} S = { .lock = PTHREAD_MUTEX_INITIALIZER };

struct request {
	char method[16];
	char path[1024];
	cJSON *headers;  /* lowercase names */
	char *body;
	size_t len;
	int close;       /* client asked for Connection: close */
};

/* What to send back. */
struct response {
	int status;
	cJSON *headers;      /* extra headers (name -> string) */
	char *body;
	const char *body_error; /* NULL, "reset", "hang", "truncate", "truncate_close" */
	long delay_ms;
	int close;           /* close the connection after this response */
};

static void msleep(long ms)
{
	struct timespec ts;

	if (ms <= 0)
		return;
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000L;
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static const cJSON *get(const cJSON *o, const char *k)
{
	return cJSON_GetObjectItemCaseSensitive(o, k);
}

static const char *get_str(const cJSON *o, const char *k)
{
	const cJSON *v = get(o, k);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static int get_bool(const cJSON *o, const char *k)
{
	return cJSON_IsTrue(get(o, k));
}

static char *dup_print(const cJSON *j)
{
	char *p = cJSON_PrintUnformatted(j);
	char *s = p ? strdup(p) : NULL;

	cJSON_free(p);
	return s;
}

/* ===================== Ids ===================== */

static uint64_t mix(uint64_t z)
{
	return rng_mix64(z);
}

/* n characters from alphabet, determined by seq. */
static void id_chars(char *out, size_t n, const char *alphabet, unsigned long seq)
{
	size_t k = strlen(alphabet), i;
	uint64_t z = mix(seq);

	for (i = 0; i < n; i++) {
		if (i % 8 == 0)
			z = mix(z + i);
		out[i] = alphabet[z % k];
		z /= k;
	}
	out[n] = '\0';
}

static void make_call_id(const char *flavor, unsigned long seq, char *out, size_t cap)
{
	static const char alnum[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
	static const char lower[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	char tmp[40];

	if (!strcmp(flavor, "gemini")) {
		id_chars(tmp, 8, lower, seq);
		snprintf(out, cap, "%s", tmp);
	} else if (!strncmp(flavor, "vllm", 4)) {
		id_chars(tmp, 32, "0123456789abcdef", seq);
		snprintf(out, cap, "chatcmpl-tool-%s", tmp);
	} else if (!strcmp(flavor, "llamacpp")) {
		id_chars(tmp, 32, alnum, seq);
		snprintf(out, cap, "%s", tmp);
	} else if (!strncmp(flavor, "ollama", 6)) {
		id_chars(tmp, 8, lower, seq);
		snprintf(out, cap, "call_%s", tmp);
	} else {
		id_chars(tmp, 24, alnum, seq);
		snprintf(out, cap, "call_%s", tmp);
	}
}

/* ===================== Error bodies ===================== */

static const char *reason(int status)
{
	switch (status) {
	case 100: return "Continue";
	case 200: return "OK";
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 408: return "Request Timeout";
	case 409: return "Conflict";
	case 413: return "Payload Too Large";
	case 422: return "Unprocessable Entity";
	case 429: return "Too Many Requests";
	case 500: return "Internal Server Error";
	case 501: return "Not Implemented";
	case 502: return "Bad Gateway";
	case 503: return "Service Unavailable";
	case 504: return "Gateway Timeout";
	default: return "Status";
	}
}

static const char *google_status(int status)
{
	switch (status) {
	case 400: return "INVALID_ARGUMENT";
	case 401: return "UNAUTHENTICATED";
	case 403: return "PERMISSION_DENIED";
	case 404: return "NOT_FOUND";
	case 409: return "ABORTED";
	case 429: return "RESOURCE_EXHAUSTED";
	case 501: return "UNIMPLEMENTED";
	case 503: return "UNAVAILABLE";
	case 504: return "DEADLINE_EXCEEDED";
	default: return status >= 500 ? "INTERNAL" : "FAILED_PRECONDITION";
	}
}

static const char *default_type(const char *flavor, int status)
{
	if (!strncmp(flavor, "vllm", 4))
		return status >= 500 ? "InternalServerError" : "BadRequestError";
	if (!strcmp(flavor, "llamacpp")) {
		switch (status) {
		case 401: return "authentication_error";
		case 403: return "permission_error";
		case 404: return "not_found_error";
		case 501: return "not_supported_error";
		case 503: return "unavailable_error";
		default: return status >= 500 ? "server_error" : "invalid_request_error";
		}
	}
	if (!strncmp(flavor, "ollama", 6))
		return status == 400 ? "invalid_request_error"
				     : status == 404 ? "not_found_error" : "api_error";
	if (status == 429)
		return "rate_limit_error";
	return status >= 500 ? "server_error" : "invalid_request_error";
}

/*
 * An error body in the flavour's shape (llm-protocol.md 3.3) from
 * spec {message, type, code, param, status, retry_delay}.
 */
static char *error_body(const char *flavor, int status, const cJSON *spec)
{
	const char *msg = get_str(spec, "message");
	const char *type = get_str(spec, "type");
	const cJSON *code = get(spec, "code");
	const char *param = get_str(spec, "param");
	const char *delay = get_str(spec, "retry_delay");
	cJSON *root = NULL, *e, *w;
	char *out;

	if (!msg)
		msg = "The server had an error while processing your request. Sorry about that!";
	if (!type)
		type = default_type(flavor, status);
	e = cJSON_CreateObject();
	if (!strcmp(flavor, "gemini")) {
		const char *gs = get_str(spec, "status");

		cJSON_AddNumberToObject(e, "code", status);
		cJSON_AddStringToObject(e, "message", msg);
		cJSON_AddStringToObject(e, "status", gs ? gs : google_status(status));
		if (delay) {
			cJSON *details = cJSON_AddArrayToObject(e, "details");
			cJSON *d = cJSON_CreateObject();

			cJSON_AddStringToObject(d, "@type", "type.googleapis.com/google.rpc.RetryInfo");
			cJSON_AddStringToObject(d, "retryDelay", delay);
			cJSON_AddItemToArray(details, d);
		}
		root = cJSON_CreateArray();
		w = cJSON_CreateObject();
		cJSON_AddItemToObject(w, "error", e);
		cJSON_AddItemToArray(root, w);
	} else if (!strcmp(flavor, "ollama-native")) {
		cJSON_Delete(e);
		root = cJSON_CreateObject();
		cJSON_AddStringToObject(root, "error", msg);
	} else if (!strcmp(flavor, "vllm-legacy")) {
		cJSON_Delete(e);
		root = cJSON_CreateObject();
		cJSON_AddStringToObject(root, "object", "error");
		cJSON_AddStringToObject(root, "message", msg);
		cJSON_AddStringToObject(root, "type", type);
		cJSON_AddNullToObject(root, "param");
		cJSON_AddNumberToObject(root, "code", status);
	} else if (!strcmp(flavor, "vllm")) {
		cJSON_AddStringToObject(e, "message", msg);
		cJSON_AddStringToObject(e, "type", type);
		cJSON_AddNullToObject(e, "param");
		cJSON_AddNumberToObject(e, "code", status);
	} else if (!strcmp(flavor, "llamacpp")) {
		cJSON_AddNumberToObject(e, "code", status);
		cJSON_AddStringToObject(e, "message", msg);
		cJSON_AddStringToObject(e, "type", type);
	} else {
		/* openai and ollama /v1 */
		cJSON_AddStringToObject(e, "message", msg);
		cJSON_AddStringToObject(e, "type", type);
		if (param)
			cJSON_AddStringToObject(e, "param", param);
		else
			cJSON_AddNullToObject(e, "param");
		if (cJSON_IsString(code) && strncmp(flavor, "ollama", 6))
			cJSON_AddStringToObject(e, "code", code->valuestring);
		else
			cJSON_AddNullToObject(e, "code");
	}
	if (!root) {
		root = cJSON_CreateObject();
		cJSON_AddItemToObject(root, "error", e);
	}
	out = dup_print(root);
	cJSON_Delete(root);
	return out;
}

/* ===================== Request validation ===================== */

/* A failed check: the status and error spec to render. */
struct reject {
	int status;
	char message[1024];
	char param[128];
	char code[64];
};

static int reject(struct reject *r, int status, const char *param, const char *code,
		  const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static int reject(struct reject *r, int status, const char *param, const char *code,
		  const char *fmt, ...)
{
	va_list ap;

	r->status = status;
	snprintf(r->param, sizeof(r->param), "%s", param ? param : "");
	snprintf(r->code, sizeof(r->code), "%s", code ? code : "");
	va_start(ap, fmt);
	vsnprintf(r->message, sizeof(r->message), fmt, ap);
	va_end(ap);
	return 1;
}

static int name_ok(const char *s)
{
	size_t n = 0;

	if (!s)
		return 0;
	for (; s[n]; n++)
		if (!isalnum((unsigned char)s[n]) && s[n] != '_' && s[n] != '-')
			return 0;
	return n >= 1 && n <= 64;
}

/* Keywords Gemini's function-declaration proto does not know. */
static const char *gemini_bad_keyword(const cJSON *s)
{
	static const char *const bad[] = { "additionalProperties", "$schema", "const",
					   "propertyNames", "$ref" };
	const cJSON *it;
	const char *r;
	size_t i;

	if (cJSON_IsArray(s)) {
		cJSON_ArrayForEach(it, s) {
			r = gemini_bad_keyword(it);
			if (r)
				return r;
		}
		return NULL;
	}
	if (!cJSON_IsObject(s))
		return NULL;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (get(s, bad[i]))
			return bad[i];
	if (cJSON_IsArray(get(s, "type")))
		return "type[]";
	cJSON_ArrayForEach(it, s) {
		if (!strcmp(it->string, "enum") || !strcmp(it->string, "required"))
			continue;
		r = gemini_bad_keyword(it);
		if (r)
			return r;
	}
	return NULL;
}

static int check_tools(const cJSON *tools, const char *flavor, struct reject *r)
{
	const cJSON *t;
	int i = 0;
	char param[96];

	cJSON_ArrayForEach(t, tools) {
		const cJSON *fn = get(t, "function");
		const char *name = get_str(fn, "name");
		const char *bad;

		snprintf(param, sizeof(param), "tools[%d].function.name", i);
		if (!name_ok(name))
			return reject(r, 400, param, "invalid_value",
				      "Invalid '%s': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.",
				      param);
		if (!strcmp(flavor, "gemini")) {
			bad = gemini_bad_keyword(get(fn, "parameters"));
			if (bad && !strcmp(bad, "type[]"))
				return reject(r, 400, NULL, NULL,
					      "Invalid JSON payload received. Unknown name \"type\" at 'tools[%d].function_declarations[0].parameters': Proto field is not repeating, cannot start list.",
					      i);
			if (bad)
				return reject(r, 400, NULL, NULL,
					      "Invalid JSON payload received. Unknown name \"%s\" at 'tools[%d].function_declarations[0].parameters': Cannot find field.",
					      bad, i);
			if (get(fn, "strict"))
				return reject(r, 400, NULL, NULL,
					      "Invalid JSON payload received. Unknown name \"strict\" at 'tools[%d].function': Cannot find field.",
					      i);
		}
		i++;
	}
	return 0;
}

static int check_assistant_calls(const cJSON *m, int mi, const char *flavor, cJSON *pending,
				 struct reject *r)
{
	const cJSON *tc;
	int k = 0;
	char param[96];

	cJSON_ArrayForEach(tc, get(m, "tool_calls")) {
		const char *id = get_str(tc, "id");
		const cJSON *fn = get(tc, "function");
		const cJSON *args = get(fn, "arguments");
		const cJSON *sig;
		cJSON *p;

		if (!id || !*id)
			return reject(r, 400, NULL, NULL,
				      "Missing required parameter: 'messages[%d].tool_calls[%d].id'.", mi, k);
		if (!name_ok(get_str(fn, "name")))
			return reject(r, 400, NULL, NULL,
				      "Invalid 'messages[%d].tool_calls[%d].function.name': string does not match pattern.",
				      mi, k);
		if (!cJSON_IsString(args)) {
			snprintf(param, sizeof(param), "messages.[%d].tool_calls.[%d].function.arguments",
				 mi, k);
			return reject(r, 400, param, NULL,
				      "Invalid type for 'messages[%d].tool_calls[%d].function.arguments': expected a string, but got %s instead.",
				      mi, k, cJSON_IsObject(args) ? "an object" : "another type");
		}
		p = cJSON_Parse(args->valuestring);
		if (!p)
			return reject(r, 400, NULL, NULL,
				      "Failed to parse tool call arguments as JSON in messages[%d].tool_calls[%d]",
				      mi, k);
		cJSON_Delete(p);
		sig = get(S.sigs, id);
		if (!strcmp(flavor, "gemini") && cJSON_IsString(sig)) {
			const char *got = get_str(get(get(tc, "extra_content"), "google"),
						  "thought_signature");

			if (!got || strcmp(got, sig->valuestring))
				return reject(r, 400, NULL, NULL,
					      "Unable to submit request because function call `%s` in the %d. content block is missing a thought_signature. Learn more: https://ai.google.dev/gemini-api/docs/thought-signatures",
					      get_str(fn, "name"), mi + 1);
		}
		cJSON_AddStringToObject(pending, id, "");
		k++;
	}
	return 0;
}

static int unanswered(cJSON *pending, struct reject *r)
{
	struct buf b;
	const cJSON *it;

	if (!pending->child)
		return 0;
	buf_init(&b, 768);
	cJSON_ArrayForEach(it, pending) {
		if (buf_addf(&b, "%s%s", b.len ? ", " : "", it->string))
			break;
	}
	reject(r, 400, "messages", NULL,
	       "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: %s",
	       buf_str(&b));
	buf_release(&b);
	return 1;
}

/* ---------- content parts: text and images ---------- */

/* Value of base64 character c, or -1. */
static int b64_value(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	return c == '+' ? 62 : c == '/' ? 63 : -1;
}

/*
 * Decodes standard base64 (RFC 4648, padded) into out (at least 3/4 of
 * the text's length); returns the byte count, or -1 when the text is not
 * valid base64.
 */
static long b64_decode(const char *s, size_t n, unsigned char *out)
{
	size_t i, k = 0;

	if (n == 0 || n % 4)
		return -1;
	for (i = 0; i < n; i += 4) {
		int v[4], j, pad = 0;

		for (j = 0; j < 4; j++) {
			if (s[i + j] == '=' && i + 4 == n && j >= 2) {
				v[j] = 0;
				pad++;
				continue;
			}
			if (pad)
				return -1;
			v[j] = b64_value((unsigned char)s[i + j]);
			if (v[j] < 0)
				return -1;
		}
		out[k++] = (unsigned char)(v[0] << 2 | v[1] >> 4);
		if (pad < 2)
			out[k++] = (unsigned char)(v[1] << 4 | v[2] >> 2);
		if (pad < 1)
			out[k++] = (unsigned char)(v[2] << 6 | v[3]);
	}
	return (long)k;
}

/*
 * An image_url part as a strict vision server takes it: an http(s) URL, or
 * data:image/(jpeg|png|gif|webp);base64,... whose bytes decode and begin
 * with that format's signature. 0 when fine, else a reject.
 */
static int check_image(const cJSON *part, int mi, int pi, struct reject *r)
{
	static const struct {
		const char *mime;
		const char *magic;
		size_t n;
	} kinds[] = {
		{ "image/jpeg", "\xff\xd8\xff", 3 },
		{ "image/png", "\x89PNG\r\n\x1a\n", 8 },
		{ "image/gif", "GIF8", 4 },
		{ "image/webp", "RIFF", 4 },
	};
	const char *url = get_str(get(part, "image_url"), "url"), *comma;
	char param[96];
	unsigned char *bytes;
	size_t i, mlen;
	long n;

	snprintf(param, sizeof(param), "messages.[%d].content.[%d].image_url.url", mi, pi);
	if (!url)
		return reject(r, 400, param, NULL, "Missing required parameter: '%s'.", param);
	if (!strncmp(url, "https://", 8) || !strncmp(url, "http://", 7))
		return 0;
	comma = strchr(url, ',');
	if (strncmp(url, "data:", 5) || !comma || (size_t)(comma - url) < 12 ||
	    strncmp(comma - 7, ";base64", 7))
		return reject(r, 400, param, "invalid_image_url",
			      "Invalid image URL: expected an http(s) URL or a base64 data URL.");
	mlen = (size_t)(comma - 7 - (url + 5));
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (strlen(kinds[i].mime) == mlen && !strncmp(url + 5, kinds[i].mime, mlen))
			break;
	if (i == sizeof(kinds) / sizeof(kinds[0]))
		return reject(r, 400, param, "invalid_image_format",
			      "Invalid image format '%.*s': use image/jpeg, image/png, image/gif or "
			      "image/webp.", (int)mlen, url + 5);
	bytes = malloc(strlen(comma + 1) / 4 * 3 + 4);
	n = bytes ? b64_decode(comma + 1, strlen(comma + 1), bytes) : -1;
	if (n < 0 || (size_t)n < kinds[i].n || memcmp(bytes, kinds[i].magic, kinds[i].n)) {
		free(bytes);
		return reject(r, 400, param, "invalid_image",
			      n < 0 ? "Invalid image: the base64 data does not decode."
				    : "Invalid image: the data is not a %s image.", kinds[i].mime);
	}
	free(bytes);
	return 0;
}

/* A message's content array: text parts with text, image parts that check. */
static int check_parts(const cJSON *content, const char *role, int mi, struct reject *r)
{
	const cJSON *part;
	char param[96];
	int pi = 0;

	cJSON_ArrayForEach(part, content) {
		const char *type = get_str(part, "type");

		snprintf(param, sizeof(param), "messages.[%d].content.[%d].type", mi, pi);
		if (!type || (strcmp(type, "text") && strcmp(type, "image_url")))
			return reject(r, 400, param, "invalid_value",
				      "Invalid value: '%s'. Supported values are: 'text' and 'image_url'.",
				      type ? type : "null");
		if (!strcmp(type, "text") && !cJSON_IsString(get(part, "text")))
			return reject(r, 400, param, NULL,
				      "Missing required parameter: 'messages[%d].content[%d].text'.",
				      mi, pi);
		if (!strcmp(type, "image_url")) {
			if (strcmp(role, "user"))
				return reject(r, 400, param, NULL,
					      "Image URLs are only allowed for messages with role 'user', "
					      "but this message with role '%s' contains an image URL.", role);
			if (check_image(part, mi, pi, r))
				return 1;
		}
		pi++;
	}
	return 0;
}

static int check_messages(const cJSON *msgs, const char *flavor, struct reject *r)
{
	cJSON *pending = cJSON_CreateObject();
	const cJSON *m;
	int i = 0, in_block = 0, bad = 0;
	char param[64];

	cJSON_ArrayForEach(m, msgs) {
		const char *role = get_str(m, "role");
		const cJSON *content = get(m, "content");

		snprintf(param, sizeof(param), "messages.[%d].role", i);
		if (!role || (strcmp(role, "system") && strcmp(role, "user") &&
			      strcmp(role, "assistant") && strcmp(role, "tool") &&
			      strcmp(role, "developer"))) {
			bad = reject(r, 400, param, NULL, "Invalid value: '%s'. Supported values are: 'system', 'assistant', 'user', 'tool', 'developer'.",
				     role ? role : "null");
			break;
		}
		if (!strcmp(role, "tool")) {
			const char *id = get_str(m, "tool_call_id");
			const char *name = get_str(m, "name");

			if (!in_block || !id || !get(pending, id)) {
				bad = reject(r, 400, param, NULL,
					     "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.");
				break;
			}
			if (!strcmp(flavor, "gemini") && (!name || !*name)) {
				bad = reject(r, 400, NULL, NULL,
					     "* GenerateContentRequest.contents[%d].parts[0].function_response.name: Name cannot be empty.\n",
					     i);
				break;
			}
			cJSON_DeleteItemFromObjectCaseSensitive(pending, id);
			i++;
			continue;
		}
		bad = unanswered(pending, r);
		if (bad)
			break;
		in_block = 0;
		if (cJSON_IsArray(content)) {
			bad = check_parts(content, role, i, r);
			if (bad)
				break;
		}
		if (!strcmp(role, "assistant")) {
			int has_calls = cJSON_GetArraySize(get(m, "tool_calls")) > 0;

			if (!has_calls && (!content || cJSON_IsNull(content))) {
				snprintf(param, sizeof(param), "messages.[%d].content", i);
				bad = reject(r, 400, param, NULL,
					     "Invalid value for 'content': expected a string, got null.");
				break;
			}
			if (has_calls && !content) {
				/* strict servers reject a missing key (llm-protocol.md 0.5) */
				snprintf(param, sizeof(param), "messages.[%d].content", i);
				bad = reject(r, 400, param, NULL,
					     "Missing required parameter: 'messages[%d].content'.", i);
				break;
			}
			bad = check_assistant_calls(m, i, flavor, pending, r);
			if (bad)
				break;
			in_block = has_calls;
		}
		i++;
	}
	if (!bad)
		bad = unanswered(pending, r);
	cJSON_Delete(pending);
	return bad;
}

static int check_request(const struct request *q, const cJSON *body, struct reject *r)
{
	static const char *const gemini_fields[] = {
		"model", "messages", "tools", "tool_choice", "temperature", "top_p", "n",
		"stop", "max_tokens", "max_completion_tokens", "stream", "stream_options",
		"response_format", "reasoning_effort", "presence_penalty",
		"frequency_penalty", "seed",
	};
	const cJSON *it, *temp;
	size_t i;

	if (!cJSON_IsObject(body))
		return reject(r, 400, NULL, NULL,
			      "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly.)");
	if (!cJSON_IsString(get(body, "model")))
		return reject(r, 400, "model", NULL, "you must provide a model parameter");
	if (cJSON_GetArraySize(get(body, "messages")) < 1)
		return reject(r, 400, "messages", NULL,
			      "[] is too short - 'messages'");
	if (!strcmp(S.flavor, "gemini")) {
		cJSON_ArrayForEach(it, body) {
			for (i = 0; i < sizeof(gemini_fields) / sizeof(gemini_fields[0]); i++)
				if (!strcmp(it->string, gemini_fields[i]))
					break;
			if (i == sizeof(gemini_fields) / sizeof(gemini_fields[0]))
				return reject(r, 400, NULL, NULL,
					      "Invalid JSON payload received. Unknown name \"%s\": Cannot find field.",
					      it->string);
		}
	}
	if (S.reasoning) {
		if (get(body, "max_tokens"))
			return reject(r, 400, "max_tokens", "unsupported_parameter",
				      "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.");
		temp = get(body, "temperature");
		if (cJSON_IsNumber(temp) && temp->valuedouble != 1.0)
			return reject(r, 400, "temperature", "unsupported_value",
				      "Unsupported value: 'temperature' does not support %g with this model. Only the default (1) value is supported.",
				      temp->valuedouble);
	}
	if (check_tools(get(body, "tools"), S.flavor, r))
		return 1;
	(void)q;
	return check_messages(get(body, "messages"), S.flavor, r);
}

/* ===================== Completions ===================== */

static cJSON *gen_tool_call(const cJSON *spec, const cJSON *reply, const char *flavor, int index,
			    unsigned long seq)
{
	const char *name = get_str(spec, "name");
	const cJSON *args = get(spec, "arguments");
	const char *args_text = get_str(spec, "arguments_text");
	const char *id = get_str(spec, "id");
	cJSON *tc = cJSON_CreateObject();
	cJSON *fn;
	char idbuf[64];
	char *a;

	if (!id) {
		make_call_id(flavor, seq, idbuf, sizeof(idbuf));
		id = idbuf;
	}
	if (get_bool(reply, "empty_tool_call_id") || get_bool(spec, "empty_id"))
		cJSON_AddStringToObject(tc, "id", "");
	else if (!get_bool(reply, "missing_tool_call_id"))
		cJSON_AddStringToObject(tc, "id", id);
	if (!strncmp(flavor, "ollama", 6))
		cJSON_AddNumberToObject(tc, "index", index);
	cJSON_AddStringToObject(tc, "type", "function");
	fn = cJSON_AddObjectToObject(tc, "function");
	cJSON_AddStringToObject(fn, "name", name ? name : "get_time");
	if (args_text) {
		cJSON_AddStringToObject(fn, "arguments", args_text);
	} else if (get_bool(reply, "args_as_object")) {
		cJSON_AddItemToObject(fn, "arguments",
				      args ? cJSON_Duplicate(args, 1) : cJSON_CreateObject());
	} else {
		a = args ? dup_print(args) : strdup("{}");
		if (a && get_bool(reply, "args_invalid_json") && strlen(a) > 1)
			a[strlen(a) - 1] = '\0';   /* drop the closing brace */
		cJSON_AddStringToObject(fn, "arguments", a ? a : "{}");
		free(a);
	}
	if (!strcmp(flavor, "gemini") && !cJSON_IsFalse(get(reply, "thought_signature")) &&
	    !get_bool(reply, "empty_tool_call_id") && !get_bool(reply, "missing_tool_call_id")) {
		char sig[80];
		cJSON *g;

		snprintf(sig, sizeof(sig), "EjQKMgEMOdbH-stub-%lu", seq);
		g = cJSON_AddObjectToObject(cJSON_AddObjectToObject(tc, "extra_content"), "google");
		cJSON_AddStringToObject(g, "thought_signature", sig);
		cJSON_AddStringToObject(S.sigs, id, sig);
	}
	return tc;
}

/* The text form of calls leaked into content (vLLM hermes style). */
static char *calls_as_text(const cJSON *calls)
{
	struct buf b;
	const cJSON *c;

	buf_init(&b, MAX_BODY);
	cJSON_ArrayForEach(c, calls) {
		cJSON *o = cJSON_CreateObject();
		const cJSON *args = get(c, "arguments");
		char *t;

		cJSON_AddStringToObject(o, "name", get_str(c, "name") ? get_str(c, "name") : "get_time");
		cJSON_AddItemToObject(o, "arguments",
				      args ? cJSON_Duplicate(args, 1) : cJSON_CreateObject());
		t = dup_print(o);
		cJSON_Delete(o);
		buf_addf(&b, "%s<tool_call>\n%s\n</tool_call>", b.len ? "\n" : "", t ? t : "{}");
		free(t);
	}
	return buf_detach(&b);
}

static char *completion_body(const cJSON *reply, const char *flavor, const cJSON *req,
			     unsigned long seq)
{
	const cJSON *calls = get(reply, "tool_calls");
	const char *text = get_str(reply, "content");
	const char *cmode = get_str(reply, "content_null_vs_empty");
	const char *finish = get_str(reply, "finish_reason_override");
	const char *model = get_str(reply, "model");
	int ncalls = cJSON_GetArraySize(calls);
	int leak = get_bool(reply, "tool_call_in_content");
	cJSON *root = cJSON_CreateObject();
	cJSON *choices, *choice, *msg, *tcs;
	char id[64];
	char *out, *leaked = NULL;
	const cJSON *c;
	int i = 0;

	if (!model)
		model = get_str(req, "model");
	snprintf(id, sizeof(id), "chatcmpl-stub-%04lu", seq);
	cJSON_AddStringToObject(root, "id", id);
	cJSON_AddStringToObject(root, "object", "chat.completion");
	cJSON_AddNumberToObject(root, "created", 1767225600 + (double)seq);
	cJSON_AddStringToObject(root, "model", model ? model : "stub-model");
	if (!strcmp(flavor, "openai"))
		cJSON_AddStringToObject(root, "system_fingerprint", "fp_stub01");
	else if (!strncmp(flavor, "ollama", 6))
		cJSON_AddStringToObject(root, "system_fingerprint", "fp_ollama");
	choices = cJSON_AddArrayToObject(root, "choices");
	choice = cJSON_CreateObject();
	cJSON_AddItemToArray(choices, choice);
	cJSON_AddNumberToObject(choice, "index", 0);
	msg = cJSON_AddObjectToObject(choice, "message");
	cJSON_AddStringToObject(msg, "role", "assistant");
	if (leak && ncalls) {
		leaked = calls_as_text(calls);
		text = leaked;
		ncalls = 0;
	}
	if (!cmode) {
		if (text)
			cmode = "text";
		else if (ncalls)
			cmode = (!strncmp(flavor, "vllm", 4) || !strncmp(flavor, "ollama", 6)) ? "empty"
											      : "null";
		else
			cmode = "text";
	}
	if (!strcmp(cmode, "null"))
		cJSON_AddNullToObject(msg, "content");
	else if (!strcmp(cmode, "empty"))
		cJSON_AddStringToObject(msg, "content", "");
	else if (strcmp(cmode, "absent"))
		cJSON_AddStringToObject(msg, "content", text ? text : "OK");
	if (!strcmp(flavor, "openai"))
		cJSON_AddNullToObject(msg, "refusal");
	if (get_str(reply, "reasoning_content"))
		cJSON_AddStringToObject(msg, "reasoning_content", get_str(reply, "reasoning_content"));
	if (ncalls) {
		tcs = cJSON_AddArrayToObject(msg, "tool_calls");
		cJSON_ArrayForEach(c, calls) {
			unsigned long n;

			pthread_mutex_lock(&S.lock);
			n = ++S.ids;
			cJSON_AddItemToArray(tcs, gen_tool_call(c, reply, flavor, i, n));
			pthread_mutex_unlock(&S.lock);
			i++;
		}
	}
	if (!strcmp(flavor, "openai"))
		cJSON_AddNullToObject(choice, "logprobs");
	cJSON_AddStringToObject(choice, "finish_reason",
				finish ? finish : ncalls ? "tool_calls" : "stop");
	if (!get_bool(reply, "drop_usage")) {
		cJSON *u = cJSON_AddObjectToObject(root, "usage");

		cJSON_AddNumberToObject(u, "prompt_tokens", 412);
		cJSON_AddNumberToObject(u, "completion_tokens", 58);
		cJSON_AddNumberToObject(u, "total_tokens", 470);
		if (!strcmp(flavor, "openai")) {
			cJSON *d = cJSON_AddObjectToObject(u, "prompt_tokens_details");

			cJSON_AddNumberToObject(d, "cached_tokens", 128);
			d = cJSON_AddObjectToObject(u, "completion_tokens_details");
			cJSON_AddNumberToObject(d, "reasoning_tokens", 16);
		}
	}
	if (!strcmp(flavor, "llamacpp")) {
		cJSON *t = cJSON_AddObjectToObject(root, "timings");

		cJSON_AddNumberToObject(t, "prompt_ms", 12.5);
		cJSON_AddNumberToObject(t, "predicted_ms", 40.25);
	}
	out = dup_print(root);
	cJSON_Delete(root);
	free(leaked);
	return out;
}

/* ===================== Choosing a reply ===================== */

static int count_assistant(const cJSON *req)
{
	const cJSON *m;
	int n = 0;

	cJSON_ArrayForEach(m, get(req, "messages")) {
		const char *role = get_str(m, "role");

		if (role && !strcmp(role, "assistant"))
			n++;
	}
	return n;
}

/* Every text of the request's messages (string contents and text parts). */
static void request_text(const cJSON *req, struct buf *b)
{
	const cJSON *m, *part;

	cJSON_ArrayForEach(m, get(req, "messages")) {
		const cJSON *c = get(m, "content"), *parts = cJSON_IsArray(c) ? c : NULL;

		if (cJSON_IsString(c))
			buf_addf(b, "%s\n", c->valuestring);
		cJSON_ArrayForEach(part, parts)
			if (get_str(part, "text"))
				buf_addf(b, "%s\n", get_str(part, "text"));
	}
}

/* The first "match" reply whose "contains" occurs in the request's texts, or NULL. */
static const cJSON *pick_match(const cJSON *req)
{
	const cJSON *m, *r = NULL;
	struct buf b;

	if (!S.match)
		return NULL;
	buf_init(&b, MAX_BODY);
	request_text(req, &b);
	cJSON_ArrayForEach(m, S.match) {
		const char *needle = get_str(m, "contains");

		if (needle && strstr(buf_str(&b), needle)) {
			r = m;
			break;
		}
	}
	buf_release(&b);
	return r;
}

/* The next scripted reply: a matching one, the queue, then the loop by turn. */
static const cJSON *pick(const cJSON *req)
{
	const cJSON *r = pick_match(req);
	int n;

	if (r)
		return r;

	pthread_mutex_lock(&S.lock);
	if (S.next < cJSON_GetArraySize(S.replies))
		r = cJSON_GetArrayItem(S.replies, S.next++);
	pthread_mutex_unlock(&S.lock);
	if (r)
		return r;
	n = cJSON_GetArraySize(S.loop);
	if (n)
		return cJSON_GetArrayItem(S.loop, count_assistant(req) % n);
	return NULL;
}

static void build_response(const struct request *q, const cJSON *req, struct response *out,
			   struct reject *rej, long seq)
{
	const cJSON *reply, *h, *body;
	const char *flavor;

	out->headers = cJSON_CreateObject();
	out->delay_ms = S.latency_ms;
	if (rej->status) {
		cJSON *spec = cJSON_CreateObject();

		cJSON_AddStringToObject(spec, "message", rej->message);
		if (rej->param[0])
			cJSON_AddStringToObject(spec, "param", rej->param);
		if (rej->code[0])
			cJSON_AddStringToObject(spec, "code", rej->code);
		out->status = rej->status;
		out->body = error_body(S.flavor, rej->status, spec);
		cJSON_Delete(spec);
		return;
	}
	if (!strcmp(q->method, "GET")) {
		out->status = 200;
		out->body = strdup(strstr(q->path, "models")
					   ? "{\"object\":\"list\",\"data\":[{\"id\":\"stub-model\",\"object\":\"model\"}]}"
					   : "{\"status\":\"ok\"}");
		return;
	}
	reply = pick(req);
	if (!reply) {
		cJSON *spec = cJSON_CreateObject();

		cJSON_AddStringToObject(spec, "message", "stub: script exhausted");
		cJSON_AddStringToObject(spec, "type", "stub_error");
		out->status = 400;
		out->body = error_body("openai", 400, spec);
		cJSON_Delete(spec);
		return;
	}
	flavor = get_str(reply, "flavor") ? get_str(reply, "flavor") : S.flavor;
	if (cJSON_IsNumber(get(reply, "delay_ms")) && get(reply, "delay_ms")->valuedouble > 0)
		out->delay_ms += (long)get(reply, "delay_ms")->valuedouble;
	out->body_error = get_str(reply, "body_error");
	out->close = get_bool(reply, "close");
	cJSON_ArrayForEach(h, get(reply, "headers")) {
		if (cJSON_IsString(h))
			cJSON_AddStringToObject(out->headers, h->string, h->valuestring);
		else if (cJSON_IsNumber(h)) {
			char v[32];

			snprintf(v, sizeof(v), "%g", h->valuedouble);
			cJSON_AddStringToObject(out->headers, h->string, v);
		}
	}
	body = get(reply, "body");
	out->status = cJSON_IsNumber(get(reply, "status")) ? get(reply, "status")->valueint
			: get(reply, "error") ? 500 : 200;
	if (cJSON_IsString(body))
		out->body = strdup(body->valuestring);
	else if (body)
		out->body = dup_print(body);
	else if (get(reply, "error"))
		out->body = error_body(flavor, out->status, get(reply, "error"));
	else
		out->body = completion_body(reply, flavor, req, (unsigned long)seq);
}

/* ===================== HTTP ===================== */

static int send_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Reads more bytes into in; returns bytes read, 0 at EOF, -1 on error. */
static ssize_t fill(int fd, struct buf *in)
{
	char tmp[16384];
	ssize_t r;

	do
		r = recv(fd, tmp, sizeof(tmp), 0);
	while (r < 0 && errno == EINTR);
	if (r > 0 && buf_add(in, tmp, (size_t)r))
		return -1;
	return r;
}

static void consume(struct buf *in, size_t n)
{
	memmove(in->ptr, in->ptr + n, in->len - n);
	in->len -= n;
	in->ptr[in->len] = '\0';
}

static void request_release(struct request *q)
{
	cJSON_Delete(q->headers);
	free(q->body);
	memset(q, 0, sizeof(*q));
}

/* Returns 1 with a request, 0 at EOF, -1 on a protocol error. */
static int read_request(int fd, struct buf *in, struct request *q)
{
	char *end, *line, *next;
	size_t head, need = 0;
	const char *v;
	ssize_t r;

	memset(q, 0, sizeof(*q));
	for (;;) {
		end = in->ptr ? strstr(in->ptr, "\r\n\r\n") : NULL;
		if (end)
			break;
		if (in->len > MAX_HEAD)
			return -1;
		r = fill(fd, in);
		if (r <= 0)
			return r < 0 ? -1 : 0;
	}
	head = (size_t)(end - in->ptr) + 4;
	*end = '\0';
	if (sscanf(in->ptr, "%15s %1023s", q->method, q->path) != 2)
		return -1;
	q->headers = cJSON_CreateObject();
	line = strstr(in->ptr, "\r\n");
	while (line) {
		char *colon, *p;

		line += 2;
		next = strstr(line, "\r\n");
		if (next)
			*next = '\0';
		colon = strchr(line, ':');
		if (colon) {
			*colon = '\0';
			for (p = line; *p; p++)
				*p = (char)tolower((unsigned char)*p);
			p = colon + 1;
			while (*p == ' ' || *p == '\t')
				p++;
			if (!get(q->headers, line))
				cJSON_AddStringToObject(q->headers, line, p);
		}
		line = next;
	}
	v = get_str(q->headers, "content-length");
	if (v)
		need = strtoul(v, NULL, 10);
	if (need > MAX_BODY)
		return -1;
	v = get_str(q->headers, "connection");
	q->close = v && !strcasecmp(v, "close");
	v = get_str(q->headers, "expect");
	consume(in, head);
	if (v && !strcasecmp(v, "100-continue") && in->len < need)
		send_all(fd, "HTTP/1.1 100 Continue\r\n\r\n", 25);
	while (in->len < need) {
		r = fill(fd, in);
		if (r <= 0)
			return -1;
	}
	q->body = malloc(need + 1);
	if (!q->body)
		return -1;
	if (need)
		memcpy(q->body, in->ptr, need);
	q->body[need] = '\0';
	q->len = need;
	consume(in, need);
	return 1;
}

static void log_request(long seq, const struct request *q, const cJSON *body, int status,
			const struct reject *rej)
{
	cJSON *o, *h;
	const cJSON *it;
	char *line;

	if (!S.log)
		return;
	o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "seq", (double)seq);
	{
		/* when the request was logged (CLOCK_MONOTONIC ms), for the benchmarks */
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		cJSON_AddNumberToObject(o, "t_ms", (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6);
	}
	cJSON_AddStringToObject(o, "method", q->method);
	cJSON_AddStringToObject(o, "path", q->path);
	h = cJSON_AddObjectToObject(o, "headers");
	cJSON_ArrayForEach(it, q->headers) {
		if (!strcmp(it->string, "authorization"))
			cJSON_AddStringToObject(h, it->string,
						!strncmp(it->valuestring, "Bearer ", 7) ? "Bearer [redacted]"
											 : "[redacted]");
		else
			cJSON_AddStringToObject(h, it->string, it->valuestring);
	}
	if (body) {
		const cJSON *m, *part;
		int images = 0;

		cJSON_ArrayForEach(m, get(body, "messages")) {
			const cJSON *c = get(m, "content"), *parts = cJSON_IsArray(c) ? c : NULL;

			cJSON_ArrayForEach(part, parts)
				images += get_str(part, "type") && !strcmp(get_str(part, "type"), "image_url");
		}
		cJSON_AddNumberToObject(o, "images", images);
		if (!S.log_brief)
			cJSON_AddItemToObject(o, "body", cJSON_Duplicate(body, 1));
	}
	else if (!S.log_brief)
		cJSON_AddStringToObject(o, "body", q->body ? q->body : "");
	cJSON_AddNumberToObject(o, "status", status);
	if (rej->status)
		cJSON_AddStringToObject(o, "rejected", rej->message);
	line = cJSON_PrintUnformatted(o);
	pthread_mutex_lock(&S.lock);
	if (line) {
		fputs(line, S.log);
		fputc('\n', S.log);
		fflush(S.log);
	}
	pthread_mutex_unlock(&S.lock);
	cJSON_free(line);
	cJSON_Delete(o);
}

/* Waits until the client gives up (closes) or the stub stops. */
static void hang(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char tmp[256];

	while (!S.stop) {
		int n = poll(&p, 1, 100);

		if (n < 0 && errno != EINTR)
			return;
		if (n > 0 && recv(fd, tmp, sizeof(tmp), 0) <= 0)
			return;
	}
}

static void reset(int fd)
{
	struct linger l = { 1, 0 };

	setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
}

/* Sends the response; returns 1 to keep the connection open. */
static int send_response(int fd, const struct request *q, const struct response *r)
{
	const char *be = r->body_error;
	const char *body = r->body ? r->body : "";
	size_t blen = strlen(body);
	int close_after = q->close || r->close || (be && strcmp(be, "none"));
	const cJSON *h;
	struct buf head;
	int rc;

	msleep(r->delay_ms);
	if (be && !strcmp(be, "reset")) {
		reset(fd);
		return 0;
	}
	if (be && (!strcmp(be, "hang") || !strcmp(be, "timeout"))) {
		hang(fd);
		return 0;
	}
	buf_init(&head, MAX_HEAD);
	buf_addf(&head, "HTTP/1.1 %d %s\r\n", r->status, reason(r->status));
	if (!get(r->headers, "Content-Type") && !get(r->headers, "content-type"))
		buf_adds(&head, "Content-Type: application/json\r\n");
	if (!(be && !strcmp(be, "truncate_close")))
		buf_addf(&head, "Content-Length: %zu\r\n", blen);
	cJSON_ArrayForEach(h, r->headers) {
		buf_addf(&head, "%s: %s\r\n", h->string, h->valuestring);
	}
	buf_addf(&head, "Connection: %s\r\n\r\n", close_after ? "close" : "keep-alive");
	if (be && (!strcmp(be, "truncate") || !strcmp(be, "truncate_close"))) {
		rc = send_all(fd, buf_str(&head), head.len);
		if (!rc)
			send_all(fd, body, blen / 2);
		buf_release(&head);
		shutdown(fd, SHUT_WR);
		return 0;
	}
	/* one write: a separate small body segment would wait on the peer's delayed ACK */
	head.toobig = MAX_HEAD + MAX_BODY;
	rc = buf_add(&head, body, blen);
	if (!rc)
		rc = send_all(fd, buf_str(&head), head.len);
	buf_release(&head);
	return rc ? 0 : !close_after;
}

static void *conn_main(void *arg)
{
	int fd = (int)(intptr_t)arg;
	struct buf in;
	struct request q;
	int keep = 1;

	buf_init(&in, MAX_HEAD + MAX_BODY);
	while (keep && !S.stop) {
		struct response resp = { 0 };
		struct reject rej = { 0 };
		cJSON *body = NULL;
		long seq;
		int rc = read_request(fd, &in, &q);

		if (rc <= 0) {
			request_release(&q);
			break;
		}
		pthread_mutex_lock(&S.lock);
		seq = ++S.received;
		pthread_mutex_unlock(&S.lock);
		if (q.len)
			body = cJSON_ParseWithLength(q.body, q.len);
		if (!strcmp(q.method, "POST")) {
			size_t pl = strcspn(q.path, "?#");

			if (pl < 17 || strncmp(q.path + pl - 17, "/chat/completions", 17))
				reject(&rej, 404, NULL, NULL, "Invalid URL (POST %s)", q.path);
			else if (S.strict)
				check_request(&q, body, &rej);
			else if (!cJSON_IsObject(body))
				reject(&rej, 400, NULL, NULL, "We could not parse the JSON body of your request.");
		} else if (strcmp(q.method, "GET")) {
			reject(&rej, 405, NULL, NULL, "method %s not allowed", q.method);
		}
		build_response(&q, body, &resp, &rej, seq);
		log_request(seq, &q, body, resp.status, &rej);
		keep = send_response(fd, &q, &resp);
		cJSON_Delete(resp.headers);
		free(resp.body);
		cJSON_Delete(body);
		request_release(&q);
		if (S.max_requests && seq >= S.max_requests)
			S.stop = 1;
	}
	buf_release(&in);
	close(fd);
	return NULL;
}

/* ===================== Connection threads ===================== */

/*
 * --threads N: N connection threads started before the port is printed,
 * each having touched its stack and taken its heap, wait for accepted
 * connections; a connection that finds none idle gets a thread of its own,
 * as every connection does without the option. The stub stands in for a
 * remote server but shares the cores with the client it serves: starting a
 * thread (clone, the stack's guard page, its first page faults) for each of
 * 64 connections that arrive at once took as much CPU as the client's own
 * first requests (bench_generate, --jobs 64), and a real server's threads
 * are not on the client's machine.
 */
static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;    /* a connection was queued, or a thread became idle */
	int *fds;               /* accepted, not yet taken (at most the threads) */
	int nfds;
	int idle;               /* threads waiting for a connection */
} P = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL, 0, 0 };

static void *pool_main(void *arg)
{
	(void)arg;
	warm_thread();
	pthread_mutex_lock(&P.lock);
	for (;;) {
		int fd;

		P.idle++;
		pthread_cond_broadcast(&P.cond);
		while (!P.nfds)
			pthread_cond_wait(&P.cond, &P.lock);
		P.idle--;
		fd = P.fds[--P.nfds];
		pthread_mutex_unlock(&P.lock);
		conn_main((void *)(intptr_t)fd);
		pthread_mutex_lock(&P.lock);
	}
	return NULL;
}

/* Starts n pool threads and waits until each is idle; 0, or -1 when one cannot start. */
static int pool_start(int n)
{
	pthread_t th;
	int i;

	P.fds = calloc((size_t)n, sizeof(*P.fds));
	if (!P.fds)
		return -1;
	for (i = 0; i < n; i++) {
		if (pthread_create(&th, NULL, pool_main, NULL))
			return -1;
		pthread_detach(th);
	}
	pthread_mutex_lock(&P.lock);
	while (P.idle < n)
		pthread_cond_wait(&P.cond, &P.lock);
	pthread_mutex_unlock(&P.lock);
	return 0;
}

/* Hands fd to an idle pool thread; false when none is idle. */
static bool pool_take(int fd)
{
	bool taken;

	pthread_mutex_lock(&P.lock);
	taken = P.idle > P.nfds;
	if (taken) {
		P.fds[P.nfds++] = fd;
		pthread_cond_broadcast(&P.cond);
	}
	pthread_mutex_unlock(&P.lock);
	return taken;
}

/* ===================== Main ===================== */

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	struct buf b;
	char tmp[8192];
	size_t n;

	if (!f)
		return NULL;
	buf_init(&b, MAX_BODY);
	for (;;) {
		n = fread(tmp, 1, sizeof(tmp), f);
		if (!n)
			break;
		if (buf_add(&b, tmp, n)) {
			fclose(f);
			buf_release(&b);
			return NULL;
		}
	}
	fclose(f);
	return buf_detach(&b);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: llm_stub --script FILE [--log FILE] [--log-brief] [--latency-ms N]\n"
		   "                [--max-requests N] [--timeout-s N] [--strict] [--flavor F] [--loop]\n"
		   "                [--threads N]\n");
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "script", required_argument, NULL, 's' },
		{ "log", required_argument, NULL, 'l' },
		{ "log-brief", no_argument, NULL, 'b' },
		{ "latency-ms", required_argument, NULL, 'd' },
		{ "max-requests", required_argument, NULL, 'n' },
		{ "timeout-s", required_argument, NULL, 't' },
		{ "strict", no_argument, NULL, 'S' },
		{ "flavor", required_argument, NULL, 'f' },
		{ "loop", no_argument, NULL, 'L' },
		{ "threads", required_argument, NULL, 'T' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *script = NULL, *logpath = NULL, *flavor = NULL;
	long timeout_s = 60, threads = 0;
	int strict = 0, loop = 0, opt, lfd, one = 1;
	struct sockaddr_in addr;
	socklen_t alen = sizeof(addr);
	char *text;
	long t0;

	for (;;) {
		opt = getopt_long(argc, argv, "", longopts, NULL);
		if (opt == -1)
			break;
		switch (opt) {
		case 's': script = optarg; break;
		case 'l': logpath = optarg; break;
		case 'b': S.log_brief = 1; break;
		case 'd': S.latency_ms = strtol(optarg, NULL, 10); break;
		case 'n': S.max_requests = strtol(optarg, NULL, 10); break;
		case 't': timeout_s = strtol(optarg, NULL, 10); break;
		case 'S': strict = 1; break;
		case 'f': flavor = optarg; break;
		case 'L': loop = 1; break;
		case 'T': threads = strtol(optarg, NULL, 10); break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (!script) {
		usage(stderr);
		return 2;
	}
	if (threads < 0 || threads > 4096) {
		fprintf(stderr, "llm_stub: --threads %ld is not in [0, 4096]\n", threads);
		return 2;
	}
	text = slurp(script);
	S.script = text ? cJSON_Parse(text) : NULL;
	free(text);
	if (!S.script) {
		fprintf(stderr, "llm_stub: cannot read script '%s'\n", script);
		return 1;
	}
	if (cJSON_IsArray(S.script)) {
		S.replies = S.script;
	} else {
		S.replies = get(S.script, "replies");
		S.loop = get(S.script, "loop");
		S.match = get(S.script, "match");
		S.strict = get_bool(S.script, "strict");
		S.reasoning = get_bool(S.script, "reasoning");
		S.flavor = get_str(S.script, "flavor");
		if (cJSON_IsNumber(get(S.script, "latency_ms")) && !S.latency_ms)
			S.latency_ms = (long)get(S.script, "latency_ms")->valuedouble;
	}
	if (loop && !S.loop) {
		S.loop = S.replies;
		S.replies = NULL;
	}
	if (strict)
		S.strict = 1;
	if (flavor)
		S.flavor = flavor;
	if (!S.flavor)
		S.flavor = "openai";
	S.sigs = cJSON_CreateObject();
	if (logpath) {
		/*
		 * Emptied now, and every line appended at the end: a reader that
		 * truncates the log between runs (the bench) gets its new lines
		 * from offset 0, not after a hole of NULs as large as the old log.
		 */
		int lfd0 = open(logpath, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);

		S.log = lfd0 >= 0 ? fdopen(lfd0, "a") : NULL;
		if (lfd0 >= 0 && !S.log)
			close(lfd0);
		if (!S.log) {
			int e = errno;

			fprintf(stderr, "llm_stub: cannot write '%s': %s\n", logpath, strerror(e));
			return 1;
		}
	}
	signal(SIGPIPE, SIG_IGN);
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (lfd < 0)
		return 1;
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	memset(&addr, 0, sizeof(addr));
	addr.sin_family = AF_INET;
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	addr.sin_port = 0;
	if (bind(lfd, (struct sockaddr *)&addr, sizeof(addr)) || listen(lfd, 128) ||
	    getsockname(lfd, (struct sockaddr *)&addr, &alen)) {
		int e = errno;

		fprintf(stderr, "llm_stub: cannot listen: %s\n", strerror(e));
		return 1;
	}
	if (threads && pool_start((int)threads)) {
		fprintf(stderr, "llm_stub: cannot start %ld connection threads\n", threads);
		return 1;
	}
	printf("port %d\n", ntohs(addr.sin_port));
	fflush(stdout);
	t0 = now_ms();
	while (!S.stop) {
		struct pollfd p = { .fd = lfd, .events = POLLIN };
		pthread_t th;
		int fd;

		if (now_ms() - t0 > timeout_s * 1000) {
			fprintf(stderr, "llm_stub: timeout after %ld s\n", timeout_s);
			break;
		}
		if (poll(&p, 1, 50) <= 0)
			continue;
		fd = accept(lfd, NULL, NULL);
		if (fd < 0)
			continue;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		if (threads && pool_take(fd))
			continue;
		if (pthread_create(&th, NULL, conn_main, (void *)(intptr_t)fd)) {
			close(fd);
			continue;
		}
		pthread_detach(th);
	}
	/* let the last response leave before the process goes */
	msleep(50);
	pthread_mutex_lock(&S.lock);
	if (S.log)
		fflush(S.log);
	pthread_mutex_unlock(&S.lock);
	_exit(0);
}
