/* SPDX-License-Identifier: MIT */
/*
 * The blind audit: solvers that see only a QA's question and option texts,
 * never the video, and the accuracy each reaches per group. A benchmark is
 * worth its negatives: when a text-only rule picks the key far above
 * chance, the set measures the rule, not the model.
 *
 * Multiple-choice groups get fixed rules (letter prior, key-value prior,
 * longest and shortest option, question-option overlap, the middle
 * number, the option most and least similar to the others by characters
 * and by tokens, the shared-token vote, the direction ring) and a learned
 * classifier (a conditional logit over words, bigrams and "how many other
 * options share this token" features), cross-validated in folds grouped by
 * recording where there are several, repeated on fresh splits (struct
 * audit_params) and averaged. Chain groups get a learned candidate
 * scorer given the goal and a goal-overlap rule, scored as the share of
 * questions whose true action set they pick.
 *
 * Accuracy counts a tie among k options as 1/k of a hit. Intervals are
 * Wilson score intervals; `lo` is the one-sided 95% lower bound, on which
 * the gate judges (docs/answers.md, The blind audit).
 *
 * Nothing here prints or does I/O; audit_run() is deterministic.
 */
#ifndef AUDIT_H
#define AUDIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "subtask.h"

#define AUDIT_MAX_SOLVERS 20
#define AUDIT_MAX_OPTIONS 16

/* Points over chance above which a group fails the gate (rules, learned). */
#define AUDIT_RULE_MARGIN 0.05
#define AUDIT_LEARNED_MARGIN 0.10

/* One QA as the audit reads it (borrowed strings). */
struct audit_item {
	int group;                 /* subtask_group index */
	const char *recording;     /* for grouped folds */
	const char *question;
	const char *const *options; /* chains: the candidate descriptions */
	int n;                     /* options */
	int key;                   /* index of the key; chains: -1 */
	const char *answer_json;   /* chains: the structured answer (true nodes) */
};

struct audit_set;

/* An empty set. Returns 0 or ENG_ENOMEM. */
int audit_set_new(struct audit_set **out);

/* Adds a copy of it (bad items are skipped: n < 2, key out of range). 0 or ENG_ENOMEM. */
int audit_set_add(struct audit_set *s, const struct audit_item *it);

/* Frees s. NULL is a no-op. */
void audit_set_free(struct audit_set *s);

struct audit_solver {
	char name[32];
	bool learned;      /* judged on AUDIT_LEARNED_MARGIN */
	long n;            /* items scored */
	double hits;       /* ties count as fractions */
	double acc, lo, hi; /* accuracy and its 95% Wilson bounds (lo one-sided) */
};

struct audit_group {
	int group;
	long n;                 /* items */
	double options;         /* mean options per item */
	double chance;          /* mean 1/options (chains: 1/C(candidates, K)) */
	int nsolvers;
	struct audit_solver solvers[AUDIT_MAX_SOLVERS];
	int best;               /* index of the solver with the highest lower bound */
	bool flagged;           /* a rule or the learned solver fails the gate */
};

struct audit_report {
	int folds, repeats;     /* the cross-validation run */
	int ngroups;
	struct audit_group groups[SUBTASK_NGROUPS];
};

/*
 * Settings; folds 0 means 5, min_items 0 means 20 (fewer: no learned
 * solver), repeats 0 means AUDIT_REPEATS. The solvers that train (the
 * letter and key-value priors, the learned ones) are cross-validated
 * `repeats` times, on fold splits drawn from seed, seed + 1, ...; their
 * hits are the mean over the repeats, so that one lucky or unlucky split
 * of a small group does not decide its gate.
 */
#define AUDIT_REPEATS 5

struct audit_params {
	int folds;
	uint64_t seed;
	int min_items;
	int repeats;
};

/*
 * Runs every solver over the items of each group of s into *out (s keeps
 * the fold of each item as scratch). Returns 0 or ENG_ENOMEM. Groups
 * without items are left out.
 */
int audit_run(struct audit_set *s, const struct audit_params *p,
	      struct audit_report *out);

/* The report as JSON (caller frees); NULL when out of memory. */
cJSON *audit_report_json(const struct audit_report *r);

/* The Wilson interval of k hits in n trials at z (1.645 one-sided 95%). */
void audit_wilson(double k, double n, double z, double *lo, double *hi);

#endif /* AUDIT_H */
