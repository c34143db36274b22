/* SPDX-License-Identifier: MIT */
/*
 * Scoring model answers against an answer key exactly as EgoProx scores
 * them (docs/egoprox-reference.md section 2, docs/export.md "Scoring"):
 * accuracy per group for multiple choice, Act-Acc / Rel-Acc-S / Rel-Acc-L
 * for chains of actions, plus figures EgoProx does not compute, each under
 * its own name: a lenient letter parse, a strict chain score, chance
 * levels, counts of missing and unparsable answers.
 *
 * The key (a struct eval_set) comes from a store, from an export folder
 * (egoprox or jsonl format) or from an EgoProx results file. Answers come
 * in one of two kinds, which are scored differently:
 *   - an ANSWER, as EgoProx's results files hold it (the "answer" field the
 *     inference scripts write: already a letter, or the chain text):
 *     scored as evaluate.py scores it, `answer == correct_option` with
 *     Python's ==, nothing parsed;
 *   - a RESPONSE, the model's raw text (a JSONL "response", or what
 *     `proxima predict` writes): parse_answer_letter first, then the
 *     same, so the figures equal the infer-then-evaluate.py pipeline.
 * Files are read with Python's json rules (pyjson.h), as evaluate.py reads
 * them. Functions return 0 or a negative enum eng_err with err_set()
 * naming the file and line or the field. A set owns everything it holds.
 */
#ifndef EVAL_H
#define EVAL_H

#include <stdbool.h>
#include <stddef.h>

struct cJSON;
struct store;

/* ============================ Answer parsing ============================ */

/*
 * EgoProx's parse_answer_letter (inference/infer_gpt.py and
 * inference/infer_qwen.py, identical in both): the letter of the LAST
 * match of
 *     (?:Therefore,\s*)?The\s+correct\s+answer\s+is\s*<?\s*([A-E])\s*>?\s*[\.\)]?
 * found by re.finditer with re.IGNORECASE, upper-cased. Python's rules
 * are followed: \s is Unicode whitespace (str.isspace()), IGNORECASE
 * also folds U+017F into s and U+0130 / U+0131 into i, and there is no
 * word boundary after the letter ("The correct answer is Because" gives
 * B). NULL, "" and text without a match give none (Python's None).
 * Returns true with *out set when a letter was found. Can't fail.
 */
bool eval_egoprox_letter(const char *text, char *out);

/*
 * proxima's lenient letter parse, reported as a separate figure
 * ("lenient"), never as EgoProx's: the last match of the same pattern
 * with the letter range widened to the last option's letter (A-E when
 * noptions <= 5, A-H for 8 options), else a bare letter (the whole text
 * is \s*<?\s*X\s*>?\s*[.)]?\s* with X an upper-case letter in range).
 * Returns true with *out set when a letter was found. Can't fail.
 */
bool eval_lenient_letter(const char *text, int noptions, char *out);

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
 * Parses a chain answer as evaluate.py's parse_llm_answer: the text,
 * stripped (str.strip()), read with Python's json.loads rules (pyjson.h:
 * a raw TAB or newline inside a string, a leading zero, "1.", trailing
 * text all fail there) as [[nodes],[edges]]: node tokens are integers,
 * floats truncated (NaN and infinities fail), or the first run of digits
 * of a string; the edge letters are every A-H of the upper-cased strings
 * of the edge list (or of an edge string). When that fails, or gives
 * another node count than node_len, the regex fallback: the nodes are the
 * digit runs of the first \[\s*\[\s*([^\]]+?)\s*\]\s*, and the edges every
 * A-H of the whole upper-cased text. Digits are Python's \d and int():
 * every Unicode decimal digit (Unicode 14.0, Python 3.11's database).
 * Edges are cut to edge_len. node_len and edge_len are the first key
 * chain's lengths (1..EVAL_CHAIN_MAX). Can't fail.
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
 * array with "answer" fields), exactly as evaluate.py reads it: every item
 * counts (ids are not needed, repeats are separate items), an item of
 * another source is ignored (counted in predictions.ignored_key_items), a
 * missing "answer" is None. A file json.load would refuse, or on which
 * evaluate.py would stop (an item that is not an object, a source that
 * is a list or an object, a chain candidate that is not an object), is an
 * error. Returns 0, ENG_ENOENT, ENG_EPARSE ("path:line:column: ...") or
 * ENG_ENOMEM.
 */
int eval_set_from_results(const char *path, struct eval_set **out);

/*
 * Reads answers from `path`:
 *   - a JSONL file, one object per line with an "id" and either a
 *     "response" (string, or null for a call that failed) or an "answer"
 *     (any JSON value, scored as a results file's answer would be); a
 *     line with both is scored from its response; a line with neither
 *     is an answer of None;
 *   - or an EgoProx results file (a JSON array whose items carry "id" and
 *     "answer").
 * Ids are strings or integers. An id the key does not have is counted and
 * ignored; a repeated id keeps its last answer (counted). Returns 0,
 * ENG_ENOENT, ENG_EPARSE ("path:line:column: ...") or ENG_ENOMEM.
 */
int eval_set_read_predictions(struct eval_set *set, const char *path);

/*
 * Sets key item `id`'s response (the model's raw text; NULL for a call
 * that failed). Returns 0, ENG_ENOTFOUND when the key has no such id, or
 * ENG_ENOMEM.
 */
int eval_set_response(struct eval_set *set, const char *id, const char *text);

/*
 * Sets key item `id`'s answer (a results file's "answer" value, copied;
 * NULL for None). Returns 0, ENG_ENOTFOUND or ENG_ENOMEM.
 */
int eval_set_answer(struct eval_set *set, const char *id, const struct cJSON *answer);

/* Number of key items. Can't fail. */
size_t eval_set_size(const struct eval_set *set);

/*
 * Scores the answers, as a cJSON object (docs/export.md "Scoring"):
 * {"groups": {GROUP: {...}}, "egoprox": {SOURCE: {...}}, "overall_mc":
 * {...}, "predictions": {...}, "items", "missing"}.
 * A multiple-choice group is {"kind":"mc", "n", "correct", "accuracy"
 * (EgoProx's figure; null when n = 0), "chance", "missing", "unparsed"
 * (answers of None, or responses without a parse_answer_letter match),
 * "lenient_correct", "lenient_accuracy" (eval_lenient_letter on the same
 * text: not an EgoProx figure)}.
 * A chain group is {"kind":"chain", "n", "evaluated", "node_correct",
 * "act_acc", "rel_acc_s", "rel_acc_l" (EgoProx's: unparsable, wrong-length
 * and missing answers leave the denominator), "dropped_unparsable",
 * "dropped_length", "missing", "invalid_key", "scored" (n - invalid_key),
 * "strict_act_acc", "strict_rel_acc_s", "strict_rel_acc_l" (the strict
 * score: over every scored item, a dropped or missing answer counting as
 * wrong; Rel-Acc as the mean over scored items of the edge accuracy of
 * node-correct answers, 0 for the others), "chance": {"act_acc",
 * "rel_acc_s", "rel_acc_l"}}. Missing MC answers are wrong. "predictions"
 * counts {"total", "answers", "responses", "unknown_ids", "repeated_ids",
 * "ignored_key_items"}. Returns 0 or ENG_ENOMEM.
 */
int eval_set_score(const struct eval_set *set, struct cJSON **out);

/* Frees the set. eval_set_free(NULL) is a no-op. */
void eval_set_free(struct eval_set *set);

#endif /* EVAL_H */
