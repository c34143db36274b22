/* SPDX-License-Identifier: MIT */
/*
 * Brains behind one interface: given the conversation so far and the tools
 * on offer, a brain returns the next assistant message (text and/or tool
 * calls). Three kinds:
 *   local    the embedded default: a deterministic planner that issues,
 *            through the same tool-call JSON path, the calls a remote
 *            brain would, and phrases questions from templates;
 *   openai   OpenAI-compatible Chat Completions (engine/llm.h) with
 *            provider profiles, retries and the response cache;
 *   replay   the openai brain answering from a recorded cassette, so a
 *            remote run is reproduced offline.
 *
 * A brain belongs to one thread at a time; `--jobs N` creates one per
 * worker thread (brain_clone).
 */
#ifndef BRAIN_H
#define BRAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "llm.h"
#include "recording.h"
#include "subtask.h"

/* What a brain may know about the session besides the messages. */
struct brain_session {
	const char *recording_id;
	enum subtask subtask;
	enum metric metric;
	int index;           /* which candidate clip of the sub-task */
	uint64_t seed;       /* run seed */
	const struct recording *rec; /* the recording; the local brain reads object
					names from it to phrase questions, nothing else */
};

enum brain_kind { BRAIN_LOCAL = 0, BRAIN_OPENAI, BRAIN_REPLAY };

struct brain_config {
	enum brain_kind kind;
	struct llm_config llm;        /* openai and replay (base_url, model, ...) */
	const char *record_path;      /* openai: write a cassette here, or NULL */
	const char *replay_path;      /* replay: the cassette to answer from */
};

struct brain;

/*
 * Parses a --brain value: "local", "openai" or "replay:FILE" (FILE is
 * stored as cfg->replay_path, pointing into spec). Returns 0 or ENG_EINVAL.
 */
int brain_parse_spec(const char *spec, struct brain_config *cfg);

/*
 * A new brain. For openai/replay the cassette is opened here (shared by
 * the clones of this brain; access is serialised). Returns 0 and *out, or
 * an error with err_msg() set (missing model, unreadable cassette, ...).
 */
int brain_new(const struct brain_config *cfg, struct brain **out);

/*
 * Another brain of the same kind and settings for another thread, with its
 * own response cache hook (cache may be NULL: none).
 */
int brain_clone(const struct brain *b, const struct llm_cache_ops *cache,
		struct brain **out);

/* Frees b. brain_free(NULL) is a no-op. */
void brain_free(struct brain *b);

/* "local", "openai" or "replay". */
const char *brain_name(const struct brain *b);

/*
 * Whether a turn mostly waits on a server (the openai brain): sessions of
 * such a brain run as fibers, many to a thread (llm_fibers_run).
 */
bool brain_waits(const struct brain *b);

/* The model name ("proxima-local/1" for the local brain). */
const char *brain_model(const struct brain *b);

/*
 * The next assistant message for the conversation msgs[0..n-1], with the
 * tools on offer (an array that, with all it points to, never changes
 * while the process runs, as agent_session_tools() gives: a remote brain
 * builds each array's request text once). `last_turn` is nonzero when the turn limit is reached:
 * the brain must call submit_qa now. On success fills out->msg (and the
 * reply metadata) and returns 0; on failure returns a negative enum
 * eng_err with out->error and err_msg() describing it.
 */
int brain_turn(struct brain *b, const struct brain_session *s,
	       const struct llm_msg *msgs, size_t n,
	       const struct llm_tool *tools, size_t ntools, int last_turn,
	       struct llm_reply *out);

/* Planner for the local brain (brain_local.c). */
int brain__local_turn(const struct brain_session *s, const struct llm_msg *msgs,
		      size_t n, int last_turn, struct llm_reply *out);

#endif /* BRAIN_H */
