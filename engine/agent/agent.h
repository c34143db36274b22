/* SPDX-License-Identifier: MIT */
/*
 * The orchestrator: one session per candidate question. It sends the
 * system prompt, the task prompt and a recording summary to a brain,
 * executes every tool call through the registry, returns errors (bad
 * arguments, unknown tools) to the brain as tool results, and ends at
 * submit_qa or at the turn limit. At submit_qa the engine recomputes the
 * ground truth with the tools for the clip and target the brain chose
 * (engine/truth.h) and never takes a number from the brain.
 */
#ifndef AGENT_H
#define AGENT_H

#include <stddef.h>
#include <stdint.h>

#include "brain.h"
#include "qc.h"
#include "registry.h"
#include "truth.h"

struct agent_params {
	int max_turns;            /* brain turns per session (16) */
	int max_calls_per_turn;   /* tool calls executed per turn (8) */
	size_t max_result_bytes;  /* a tool result sent back is cut here (16 KiB) */
	int max_submit_attempts;  /* rejected submit_qa calls before giving up (3) */
	int brain_frames;         /* frames of the clip shown to the brain (0: none) */
	int brain_frame_width;    /* their width in pixels (0: VIDEO_DEFAULT_WIDTH) */
	struct truth_params truth; /* clip and QC settings */
};

/* Fills p with the defaults above. Can't fail. */
void agent_defaults(struct agent_params *p);

enum agent_status {
	AGENT_QA = 0,   /* a QA was produced (out->qa) */
	AGENT_DROP,     /* no QA: out->reason says why (counted as a drop) */
	AGENT_FAILED    /* the brain failed (transport, parse): out->reason */
};

struct agent_result {
	enum agent_status status;
	char reason[256];       /* drop or failure reason, "" for a QA */
	char error[256];        /* when agent_run fails: what failed (err_msg() of its thread) */
	char reason_code[48];   /* short code for counting, e.g. "no_clip", "qc_length" */
	struct truth qa;        /* AGENT_QA: the question, options, truth */
	int64_t drop_t_ns;      /* AGENT_DROP after a rejected submit_qa: its T, else 0 */
	char drop_target[128];  /* ... and its target, else "" */
	char *trace_json;       /* the whole session (messages, calls, results), owned */
	int index;              /* the session's candidate index */
	int turns;              /* brain turns used */
	int tool_calls;         /* tool calls executed */
	int tool_errors;        /* of which came back "ok": false */
	char last_tool_error[160]; /* the last of them: "tool: path: detail" */
	int disagreements;      /* brain statements the tools contradicted */
	double t_brain_s;       /* time spent in the brain */
	double t_tools_s;       /* time spent in tools */
	double t_truth_s;       /* time spent recomputing the truth and QC */
	long prompt_tokens;     /* summed over the brain's replies (0 for the local brain) */
	long completion_tokens;
};

/* Releases the result's allocations. Can't fail. */
void agent_result_release(struct agent_result *r);

/*
 * The tools array offered to brains: every registered tool plus submit_qa.
 * Built once (thread-safe) and shared read-only. Returns 0 or an error.
 */
int agent_tools(const struct llm_tool **tools, size_t *ntools);

/*
 * The tools a session of sub-task st is offered: those of its row in the
 * sub-task table (engine/base/subtask.c) and submit_qa, in the order of
 * agent_tools(). Shared read-only. Returns 0 or an error.
 */
int agent_session_tools(enum subtask st, const struct llm_tool **tools, size_t *ntools);

/*
 * Runs one session on recording ctx's recording with brain b for the
 * sub-task and candidate in s. Fills *out (status, QA or reason, trace).
 * Returns 0 whenever *out is filled (including drops and brain failures);
 * a negative enum eng_err only on an internal error (out of memory, a
 * missing embedded prompt), with out->error saying what failed (so that a
 * caller on another thread need not read this thread's err_msg()).
 */
int agent_run(struct brain *b, struct tool_ctx *ctx, const struct brain_session *s,
	      const struct agent_params *p, struct agent_result *out);

#endif /* AGENT_H */
