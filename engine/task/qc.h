/* SPDX-License-Identifier: MIT */
/*
 * Option assembly and quality control (docs/design.md section 4): hard negatives
 * built and checked in the structured answer space, the EgoTools text checks
 * of a multiple-choice item, the deterministic option shuffle, and the
 * candidate action set of chain questions. docs/answers.md gives every rule
 * and threshold with examples.
 *
 * Everything here is deterministic: a 64-bit seed derived from the QA id
 * (qc_seed_from_id) drives every choice, so a rerun gives the same options
 * in the same order. Nothing here prints or does I/O.
 */
#ifndef QC_H
#define QC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "answer.h"
#include "bev.h"
#include "buf.h"
#include "discretise.h"

#define QC_MAX_OPTIONS 8       /* most options an item may have */
#define QC_CHAIN_MAX_CAND 16   /* most candidates of a chain's action set */
#define QC_DESC_MAX 160        /* a chain candidate's description, with the NUL */

/* The settings; qc_defaults() fills the values of docs/design.md section 4. */
struct qc_params {
	int n_options;           /* options per item: 5 (EgoProx), 8 (EgoTools style) */
	float angle_margin_deg;  /* negatives differ in yaw by at least this (30) */
	float dist_margin_rel;   /* ... in distance by this share of the larger (0.25) */
	float dist_margin_m;     /* ... and by at least this many metres (0.3) */
	float z_max;             /* |answer-length z-score| limit (1.5) */
	bool enforce_length;     /* fail items on z_max (false: the z-score is reported only;
				    rendered, exchangeable options carry no length cue: the
				    audit's longest/shortest solvers check that) */
	float overlap_slack;     /* answer overlap may exceed the distractors' mean by (0.15) */
	float dup_similarity;    /* near-duplicate character similarity (0.9) */
	int max_repairs;         /* retries of the chain candidate draw (8) */
	int chain_candidates;    /* size of a chain's candidate action set (8) */
	struct disc_params disc; /* discretisation of the values (disc_defaults) */
};

/* Fills p with the defaults. Can't fail. */
void qc_defaults(struct qc_params *p);

/*
 * What the negatives are drawn from (docs/answers.md, Option design).
 * Every array is optional (NULL with count 0); the strings are the
 * callers' and are not kept after the call.
 */
struct qc_context {
	/*
	 * The answers of the group's other candidates in the recording, of the
	 * truth's kind (canonical): the prior each distractor field is drawn
	 * from, so that distractors look like keys. prior_weights (NULL: equal)
	 * weight them, e.g. to give each stratum of key values equal mass.
	 */
	const struct answer *prior;
	const float *prior_weights;
	size_t nprior;
	const char *const *refs;     /* gaze relative: reference objects visible at T */
	size_t nrefs;
	/*
	 * gaze relative: the target's true relation to each of refs. When set,
	 * a distractor's (relation, reference) is one of these pairs, drawn as
	 * the key's is, so neither the relation nor the reference tells the key.
	 */
	const enum ans_rel *ref_rels;
	const char *const *proposals; /* negatives proposed as text by a remote brain */
	size_t nproposals;
};

/*
 * The reference a gaze relative answer names, index into the n references
 * whose relations are rels: a relation drawn uniformly among those present,
 * then a reference uniformly among those with it, so that keys spread over
 * the relations the scene allows. Keys and distractors are drawn alike.
 * Advances *state. Can't fail (0 when n is 0).
 */
size_t qc_pick_reference(const enum ans_rel *rels, size_t n, uint64_t *state);

/*
 * The phrasing style (ans_render_style()) of every option of the QA with
 * this id: one per item, so no option's wording differs from the others',
 * varied across items. Can't fail.
 */
int qc_style(const char *qa_id);

/* Why an item failed; the store counts drops by reason. */
enum qc_reason {
	QC_OK = 0,
	QC_META,         /* an option is a meta option ("all of the above") */
	QC_DUPLICATE,    /* two options are equal or near-duplicates */
	QC_SUBSTRING,    /* an option is contained in another */
	QC_PERMUTATION,  /* an option is a token permutation of another */
	QC_LENGTH,       /* answer-length z-score outside +-z_max */
	QC_OVERLAP,      /* answer shares more words with the question than the distractors */
	QC_NO_NEGATIVES, /* not enough negatives satisfy the margins and text checks */
	QC_NREASON
};

/* "ok", "meta_option", "duplicate", "substring", "permutation",
 * "length_z", "lexical_overlap", "no_negatives"; "?" when invalid. */
const char *qc_reason_name(enum qc_reason r);

/* The figures of the text checks of one item. */
struct qc_result {
	bool pass;               /* every check passed */
	enum qc_reason reason;   /* the first failing check, QC_OK when pass */
	char detail[192];        /* short text: which options, which figure */
	unsigned failed;         /* bit (1u << reason) for every failing check */
	float z;                 /* answer-length z-score */
	float len_answer;        /* answer length, tokens */
	float len_mean, len_sd;  /* distractor lengths: mean and population sd */
	bool overlap_checked;    /* false when no question text was given */
	float overlap_answer;    /* share of the answer's content tokens in the question */
	float overlap_mean;      /* the same, mean over the distractors */
	float max_similarity;    /* highest character similarity of two options */
	int repairs;             /* option swaps made to repair the item */
	int brain_kept;          /* brain proposals among the final options */
	int brain_rejected;      /* brain proposals refused (parse, margin or text) */
	int engine_added;        /* negatives the engine supplied */
};

/*
 * The QC figures as a new cJSON object (caller frees): {"pass", "reason",
 * "detail", "z", "length":{...}, "overlap":{...}, "max_similarity",
 * "checks":{"meta":bool,...}, "repairs", "brain":{"kept","rejected"},
 * "engine_added"}. NULL when out of memory.
 */
cJSON *qc_result_to_json(const struct qc_result *r);

/* An assembled item: the options in their final order. */
struct qc_options {
	int n;                                     /* number of options */
	int answer;                                /* index of the truth ('A' + answer) */
	struct answer opt[QC_MAX_OPTIONS];         /* structured options */
	char text[QC_MAX_OPTIONS][ANS_TEXT_MAX];   /* rendered options */
	bool from_brain[QC_MAX_OPTIONS];           /* proposed by the brain */
	struct qc_result qc;                       /* text QC of the final set */
};

/*
 * {"options":[text...], "answer_index", "answer_letter", "structured":[...],
 * "qc":{...}} as a new cJSON object (caller frees); NULL when out of memory.
 */
cJSON *qc_options_to_json(const struct qc_options *o);

/*
 * The 64-bit seed of a QA id: its first 16 hex digits when it starts with
 * 16 hex digits (QA ids are SHA-256 hex), else the first 16 hex digits of
 * the SHA-256 of the id. Can't fail (NULL gives the seed of "").
 */
uint64_t qc_seed_from_id(const char *qa_id);

/*
 * A Fisher-Yates shuffle of 0..n-1 into perm, driven by seed (splitmix64).
 * Can't fail.
 */
void qc_shuffle(uint64_t seed, int n, int *perm);

/*
 * True when b is a valid negative of a (and a of b): they differ by a
 * margin of p (NULL = defaults) in at least one field: yaw by >=
 * angle_margin_deg, a different direction label, leg count or leg,
 * distance by >= dist_margin_rel of the larger and >= dist_margin_m,
 * another vertical class, hand, verb or object; for gaze relative, another
 * object, or the same object and reference with an incompatible relation
 * (left/right/in front/behind differ; "near" is compatible with every
 * direction). Different kinds are distinct. Can't fail.
 */
bool qc_distinct(const struct answer *a, const struct answer *b,
		 const struct qc_params *p);

/*
 * Runs the text checks on an item: `question` (may be NULL: the overlap
 * check is then skipped), n options and the answer index. Fills *res
 * (pass, reason, failed mask, every figure; repairs and brain counts 0).
 * Returns 0, or ENG_EINVAL for bad arguments (n outside 2..QC_MAX_OPTIONS,
 * answer out of range, NULL option).
 */
int qc_check_text(const char *question, const char *const *options, int n,
		  int answer, const struct qc_params *p, struct qc_result *res);

/*
 * Assembles the options of an item. `truth` is the canonical ground truth
 * (not a chain); ctx gives the material for negatives and the brain's
 * proposals; `question` is the question text (for the overlap check; may be
 * NULL); `qa_id` seeds every choice and the shuffle; p (NULL = defaults)
 * gives n_options and the margins.
 *
 * Proposals are parsed with ans_parse() and kept, in order, when they pass
 * the margins against the truth and the options kept so far and the
 * pairwise text checks (meta, near-duplicate, substring, permutation); the
 * engine's own negatives (hardest first, families interleaved) fill the
 * rest. A selection that falls short is retried with reshuffled tiers (up
 * to max_repairs times) and then with each chosen negative left out in
 * turn. When the length or overlap check then fails, up to max_repairs
 * swaps of one negative for another candidate are tried. For interactions
 * a proposal's hand is made to match the truth's form (no hand when the
 * truth names none). The options are finally shuffled with
 * qc_shuffle(seed of qa_id).
 *
 * Returns 0 with out->qc.pass true (a usable item), 0 with out->qc.pass
 * false and out->qc.reason / detail saying why the item is dropped, or a
 * negative error (ENG_EINVAL for a bad truth or n, ENG_ENOMEM).
 */
int qc_build_options(const struct answer *truth, const struct qc_context *ctx,
		     const char *question, const char *qa_id,
		     const struct qc_params *p, struct qc_options *out);

/*
 * Character similarity used by the near-duplicate check: 1 - Levenshtein
 * distance / longer length, over the normalised texts (docs/answers.md).
 * 1 for two empty texts. Can't fail.
 */
float qc_similarity(const char *a, const char *b);

/* ======================= Chain candidates ======================= */

/*
 * The candidate action set of a chain question: the K true future actions
 * plus distractor actions, all with distinct descriptions, shuffled.
 */
struct qc_chain {
	int n;                                   /* candidates */
	int k;                                   /* true actions */
	char desc[QC_CHAIN_MAX_CAND][QC_DESC_MAX]; /* candidate i = node id i + ANS_CHAIN_BASE */
	int node_of[ANS_CHAIN_MAX];              /* node id of true action i */
	bool is_true[QC_CHAIN_MAX_CAND];         /* candidate i is a true action */
};

/*
 * Builds the candidate set of `ncand` actions (0 = p's chain_candidates,
 * default 8): the k true actions truth[0..k-1] (in their true order) and
 * ncand - k distractors drawn from pool[] (other actions of the same
 * recording), lower tiers[] first (NULL: one tier) and in a seeded random
 * order within a tier, skipping any whose description equals or nearly
 * duplicates a true one or an earlier pick; the set is shuffled with
 * qc_shuffle(seed of qa_id). Returns 0; ENG_EINVAL (k outside
 * 2..ANS_CHAIN_MAX, ncand outside k+1..QC_CHAIN_MAX_CAND, two true actions
 * with the same description, a description too long); ENG_ENOTFOUND when
 * the pool has too few distinct distractors (err_msg() says how many).
 */
int qc_chain_candidates(const char *const *truth, int k, const char *const *pool,
			const int *tiers, size_t npool, const char *qa_id, int ncand,
			const struct qc_params *p, struct qc_chain *out);

/*
 * The chain answer of one valid order: order[i] is the index (into the
 * true actions of c) of the i-th action done, edges[i] the direction from
 * the location of action order[i] to that of order[i + 1]. Maps the order
 * to node ids of the candidate set. Returns 0, or ENG_EINVAL when order is
 * not a permutation of 0..k-1 or an edge is invalid.
 */
int qc_chain_answer(const struct qc_chain *c, const int *order,
		    const enum bev_dir *edges, struct answer *out);

/* Appends "1. Get dish soap; 2. Wash the board; ..." to out. */
int qc_chain_list(const struct qc_chain *c, struct buf *out);

#endif /* QC_H */
