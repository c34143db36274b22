/* SPDX-License-Identifier: MIT */
/*
 * Internals shared by the files of the eval module (eval.c, eval_parse.c);
 * not part of its interface.
 */
#ifndef EVAL_INT_H
#define EVAL_INT_H

#include <stdbool.h>

struct cJSON;
struct eval_chain;

/*
 * int(x) of a key chain's node as Python computes it (find_matching_gt):
 * bools are 0 and 1, floats truncated, strings read by int() (Unicode
 * whitespace, a sign, any decimal digits, single underscores between
 * digits); values saturate at the long long range. False where Python
 * raises. Can't fail.
 */
bool eval__key_int(const struct cJSON *x, long long *v);

/*
 * evaluate.py's find_matching_gt: the first candidate of `correct` whose
 * "node" list has pred's length and equal values (eval__key_int), or NULL.
 * Candidates that are not objects are skipped (keys holding them are
 * refused when read). Can't fail.
 */
const struct cJSON *eval__match_chain(const struct cJSON *correct, const struct eval_chain *pred);

#endif /* EVAL_INT_H */
