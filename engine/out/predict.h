/* SPDX-License-Identifier: MIT */
/*
 * Model predictions for an EgoProx export: each sample of DIR/egoprox.json
 * is sent to an OpenAI-compatible multimodal model as EgoProx's
 * inference/infer_gpt.py sends it (build_messages_short_term for multiple
 * choice: one user message holding the sample's content in order, frames
 * as image_url data URLs and the prompt text; build_messages_long_term for
 * chains: the system prompt, then a user message with the frames and the
 * user prompt; max_tokens 500, nothing else set), and the raw replies are
 * written as the JSONL that `proxima eval` scores as responses.
 *
 * Frames are sent as the files hold them (EgoProx re-encodes each as JPEG
 * at quality 90 first; the exported frames are JPEGs already), typed by
 * their bytes. Every request goes through the llm client's cache hook,
 * backed by OUT.cache (one JSON line per reply, appended and flushed as
 * each arrives): a rerun sends no request, and a killed run resumes with
 * the requests it had not finished.
 *
 * Functions return 0 or a negative enum eng_err with err_set() naming the
 * file, sample or field; they never print (progress goes to a callback).
 */
#ifndef PREDICT_H
#define PREDICT_H

#include <stddef.h>

struct llm_config;

/* infer_gpt.py's MAX_TOKENS: the default completion budget. */
#define PREDICT_MAX_TOKENS 500

/* Most concurrent requests. */
#define PREDICT_MAX_JOBS 64

struct predict_params {
	const char *export_dir;        /* an egoprox export with its frames (required) */
	const char *out_path;          /* the predictions file (required); cache: OUT.cache */
	const struct llm_config *llm;  /* base_url, model, profile, timeouts (borrowed; its
					* cache and max_tokens are set by predict) */
	int jobs;                      /* requests at once, 1..PREDICT_MAX_JOBS */
	int max_tokens;                /* > 0; 0 = PREDICT_MAX_TOKENS */
	/* called after each sample (from the worker threads, one at a time), or NULL */
	void (*progress)(void *ctx, size_t done, size_t total);
	void *progress_ctx;
};

/* What a run did. */
struct predict_summary {
	size_t samples;           /* samples in the export */
	size_t answered;          /* samples with a reply */
	size_t from_cache;        /* of them, answered by OUT.cache */
	size_t failed;            /* calls that failed after the retries (response null) */
	size_t requests;          /* HTTP requests sent, retries included */
	long prompt_tokens, completion_tokens; /* as the server reported them */
	char first_error[256];    /* the first failure's message, or "" */
};

/*
 * Runs the predictions and writes out_path: one line per sample, in the
 * export's order, {"id", "source", "response" (the reply's text; null when
 * the call failed), "answer" (what EgoProx's inference would store: the
 * parse_answer_letter letter or null for multiple choice, the stripped
 * text for chains), "model", "cached", "error" (only on failure)}, through
 * a ".tmp" file renamed at the end. Every frame is checked to exist and to
 * be a JPEG, PNG or WebP before any request. Fills *out (may be NULL).
 * Returns 0 when every sample was answered; ENG_EHTTP (some calls failed:
 * the file is still written, *out says how many, a rerun retries them);
 * ENG_EINVAL (bad parameters, an export that is not egoprox, a malformed
 * sample); ENG_ENOENT (a missing export or frame, naming it and how to
 * extract frames); ENG_EPARSE (a bad cache line before the last);
 * ENG_EIO; ENG_ENOMEM.
 */
int predict_run(const struct predict_params *p, struct predict_summary *out);

#endif /* PREDICT_H */
