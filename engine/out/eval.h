/* SPDX-License-Identifier: MIT */
/*
 * Scoring model answers against an answer key with the semantics of
 * EgoProx's evaluate.py and inference scripts (docs/egoprox-reference.md
 * section 2, docs/export.md "Scoring"): accuracy per group for multiple
 * choice, Act-Acc / Rel-Acc-S / Rel-Acc-L for chains of actions, chance
 * levels and counts of missing and unparsable answers.
 *
 * The key (a struct eval_set) comes from a store, from an export folder
 * (egoprox or jsonl format) or from an EgoProx results file; answers come
 * from a predictions file (JSONL of {"id", "answer"}, or a results file).
 * Functions return 0 or a negative enum eng_err with err_set() naming the
 * file and line or the field. A set owns everything it holds.
 */
#ifndef EVAL_H
#define EVAL_H

#include <stdbool.h>
#include <stddef.h>

struct cJSON;
struct store;

/* ============================ Answer parsing ============================ */

/*
 * The option letter of a multiple-choice answer, in *out. `noptions` sets
 * the letter range A..max(E, the last option's letter) (A-E when 0).
 * 1. The LAST match of EgoProx's pattern
 *    (?:Therefore,\s*)?The\s+correct\s+answer\s+is\s*<?\s*([A-E])\s*>?\s*[\.\)]?
 *    matched case-insensitively as the inference scripts do (re.IGNORECASE,
 *    Python's Unicode whitespace and case folding), letter upper-cased;
 * 2. else a bare letter: the whole text is \s*<?\s*X\s*>?\s*[.)]?\s* with X
 *    an upper-case letter in range (evaluate.py compares letters case-
 *    sensitively).
 * Returns true when a letter was found. Can't fail.
 */
bool eval_parse_letter(const char *text, int noptions, char *out);

/* Longest chain (nodes) the parser keeps; longer keys are not scored. */
#define EVAL_CHAIN_MAX 64

/* A parsed chain answer. */
struct eval_chain {
	int nnodes;                        /* == the key's node count when OK */
	long long nodes[EVAL_CHAIN_MAX];   /* node ids as written */
	int nedges;                        /* <= the key's edge count */
	char edges[EVAL_CHAIN_MAX];        /* 'A'..'H' */
};

enum eval_chain_status {
	EVAL_CHAIN_OK = 0,      /* parsed with node_len nodes */
	EVAL_CHAIN_UNPARSABLE,  /* neither JSON nor the "[[ ... ]," fallback gave nodes */
	EVAL_CHAIN_LENGTH       /* nodes found, but not node_len of them */
};

/*
 * Parses a chain answer as evaluate.py's parse_llm_answer: the stripped
 * text as JSON [[nodes],[edges]] (node tokens: integers, floats truncated,
 * the first digit run of a string; edge letters A-H found in the upper-
 * cased strings of the edge list), else the regex fallback: the nodes are
 * the digit runs of the first "[[ ... ]," and the edges every A-H of the
 * whole upper-cased text. Edges are cut to edge_len. node_len and edge_len
 * are the first key chain's lengths (1..EVAL_CHAIN_MAX). Can't fail.
 */
enum eval_chain_status eval_parse_chain(const char *text, int node_len, int edge_len,
					struct eval_chain *out);

/*
 * Edge accuracy of pred against one key chain's "edge" array (evaluate.py
 * strict_edge_accuracy / relaxed_edge_accuracy): the share of the key's L
 * positions where the predicted letter equals the key's (relaxed: or is
 * one of its two 45-degree neighbours, RELAXED_NEIGHBORS); missing
 * predicted edges are wrong; an empty key gives 1. Can't fail.
 */
double eval_edge_accuracy(const struct cJSON *key_edges, const struct eval_chain *pred,
			  bool relaxed);

/* ============================== Answer keys ============================== */

/* A key and the answers given to it; opaque. */
struct eval_set;

/*
 * The key of the store's QAs with these statuses (NULL = "approved,edited")
 * and tasks (export_params.tasks syntax; NULL = all), grouped by
 * CATEGORY.SUBTASK/METRIC. Returns 0, ENG_EINVAL (bad task list, a QA
 * whose stored JSON has the wrong shape), ENG_EDB or ENG_ENOMEM.
 */
int eval_set_from_store(struct store *st, const char *status, const char *tasks,
			struct eval_set **out);

/*
 * The key of an export folder, read through its manifest.json: the
 * records of a "jsonl" export (grouped by CATEGORY.SUBTASK/METRIC) or of
 * an "egoprox" export (grouped by source). Returns 0, ENG_ENOENT,
 * ENG_EPARSE (naming the file and line or field), ENG_EINVAL (a format
 * that holds no key eval can read) or ENG_ENOMEM.
 */
int eval_set_from_export(const char *dir, struct eval_set **out);

/*
 * Both the key and the answers of an EgoProx results file (the EgoProx
 * array with "answer" fields), exactly as evaluate.py reads it: items of
 * an unknown source are ignored. Returns 0, ENG_ENOENT, ENG_EPARSE or
 * ENG_ENOMEM.
 */
int eval_set_from_results(const char *path, struct eval_set **out);

/*
 * Reads answers from `path`: a JSONL file of {"id", "answer"} objects
 * (answer: text, or a JSON array that is scored as its text; null is an
 * unparsable answer), or an EgoProx results file (a JSON array whose
 * items carry "id" and "answer"; a non-string answer is unparsable, as in
 * evaluate.py). Ids are strings or integers. An id the key does not have
 * is counted and ignored; a repeated id keeps its last answer. Returns 0,
 * ENG_ENOENT, ENG_EPARSE ("path:line: ...") or ENG_ENOMEM.
 */
int eval_set_read_predictions(struct eval_set *set, const char *path);

/*
 * Sets the answer to key item `id` (text NULL: an unparsable answer, as a
 * JSON null). Returns 0, ENG_ENOTFOUND when the key has no such id, or
 * ENG_ENOMEM.
 */
int eval_set_answer(struct eval_set *set, const char *id, const char *text);

/* Number of key items. Can't fail. */
size_t eval_set_size(const struct eval_set *set);

/*
 * Scores the answers, as a cJSON object (docs/export.md "Scoring"):
 * {"groups": {GROUP: {...}}, "egoprox": {SOURCE: {...}}, "overall_mc":
 * {...}, "predictions": {...}, "missing": n}. A multiple-choice group is
 * {"kind":"mc", "n", "correct", "accuracy" (null when n = 0), "chance",
 * "missing", "unparsed"}; a chain group {"kind":"chain", "n", "evaluated",
 * "node_correct", "act_acc", "rel_acc_s", "rel_acc_l", "dropped_unparsable",
 * "dropped_length", "missing", "invalid_key", "chance": {"act_acc",
 * "rel_acc_s", "rel_acc_l"}}. Missing answers are wrong (MC) or dropped
 * (chains). Returns 0 or ENG_ENOMEM.
 */
int eval_set_score(const struct eval_set *set, struct cJSON **out);

/* Frees the set. eval_set_free(NULL) is a no-op. */
void eval_set_free(struct eval_set *set);

#endif /* EVAL_H */
