/* SPDX-License-Identifier: MIT */
/*
 * Ground truth and QA assembly: from the clip and target a brain chose in
 * submit_qa, recompute the truth with the tools (the clip rule, the angle,
 * the path, the displacement, the chain), discretise it into a structured
 * answer, reject ambiguous cases, build the options with hard negatives
 * (engine/qc.h), run the text checks, and fill the record the store
 * keeps. Nothing numeric is taken from the brain; where its stated answer
 * disagrees with the tools, the disagreement is reported.
 */
#ifndef TRUTH_H
#define TRUTH_H

#include <stdint.h>

#include <cjson/cJSON.h>

#include "answer.h"
#include "hash.h"
#include "qc.h"
#include "registry.h"
#include "subtask.h"

struct truth_params {
	int frames;            /* frames per clip (8) */
	double window_s;       /* clip length W (8 s) */
	double gaze_lead_s;    /* T = fixation start - this (0.3 s) */
	double interaction_lead_s; /* T = interaction start - this (1 s) */
	double min_nav_m;      /* navigate: target at least this far (1.5 m) */
	double key_cap;        /* key balance (keybal.h) of each recording's group and of
				  the negatives' prior (0.3; >= 1: none) */
	int prior_keys;        /* answers in the negatives' prior: the first this many of
				  the group's candidates as the keys are chosen (256; the
				  generator: its quota, at least 8 per option) */
	struct qc_params qc;   /* options, margins, text checks */
};

/* Fills p with the defaults of docs/design.md. Can't fail. */
void truth_defaults(struct truth_params *p);

/*
 * The frame times of the clip ending at t: n = max(p->frames, 2) times
 * evenly spaced over [t - W, t] (W = p->window_s in whole ns), the i-th
 * t - W + W * i / (n - 1) in integer ns, written to out[0..n) (out holds
 * at least n). Returns n. Can't fail. A QA's frames_json holds these.
 */
int truth_frame_times(int64_t t, const struct truth_params *p, int64_t *out);

/* One assembled QA (strings owned, freed by truth_release). */
struct truth {
	char id[HASH_HEX_LEN + 1]; /* stable id: hash of recording, sub-task, metric, T, target */
	char category[32];     /* "intention" */
	char subtask[40];      /* "head_turn" */
	char metric[16];       /* "approx" | "relative" */
	int64_t t_ns, clip_start_ns, clip_end_ns;
	char *frames_json;     /* array of the clip's frame times */
	char *target;          /* target id (chain: the goal) */
	char *question;
	char *options_json;    /* array of option texts (chain: the candidate set) */
	int answer_index;      /* index of the key in options; -1 for chains */
	char *answer_json;     /* the structured answer (chain: the true chain + all valid orders) */
	char *gt_json;         /* the tool-computed ground truth (numbers, legs, grid, ...) */
	char *qc_json;         /* QC figures */
	char *note;            /* disagreement with the brain's statement, or NULL */
};

/* Releases t's strings. Can't fail. */
void truth_release(struct truth *t);

/*
 * Builds the QA for the submit_qa arguments `args` (already schema-valid)
 * of recording `rec_id` with the tools of ctx. On success returns 0 and
 * fills *out. When the clip or target does not qualify, the answer is
 * ambiguous or QC cannot be satisfied, returns ENG_EINVAL with `code` set
 * to a short reason ("clip_rule", "ambiguous", "qc_length", ...) and
 * err_msg() explaining; other errors are internal.
 */
int truth_build(struct tool_ctx *ctx, const char *rec_id, const cJSON *args,
		const struct truth_params *p, struct truth *out, char *code,
		size_t code_size);

/*
 * Moves the key of a multiple-choice QA to option `pos` by swapping it with
 * the option there (in options_json, qc_json's copies, answer_index and
 * answer_letter), so that a run can spread keys evenly over the letters of
 * each group. Chains and positions out of range are left as they are.
 * Returns 0, ENG_EPARSE (the stored JSON is not the engine's) or ENG_ENOMEM.
 */
int truth_place_key(struct truth *t, int pos);

/*
 * The key fields the balance of a group holds in ctx's recording (bit per
 * enum ans_field; keybal_fields() over the group's candidates), building
 * and caching the group's prior. 0 for chains. Returns 0 or an error.
 */
int truth_key_fields(struct tool_ctx *ctx, enum subtask st, enum metric m,
		     const struct truth_params *p, unsigned *fields);

#endif /* TRUTH_H */
