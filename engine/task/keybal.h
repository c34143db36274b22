/* SPDX-License-Identifier: MIT */
/*
 * Key balance: no key field value (ans_strata()) on more than a share of
 * a group's keys. The generator applies it to each recording's stream of
 * QAs, and the negatives' prior to the candidates it is built from, so
 * that distractors keep following the keys they are drawn to look like.
 */
#ifndef KEYBAL_H
#define KEYBAL_H

#include <stdbool.h>
#include <stddef.h>

#include "answer.h"

#define KEYBAL_DEFAULT_CAP 0.3
#define KEYBAL_MIN_VALUES 4 /* a field is balanced when the candidates show this many values */

struct keybal_label;

struct keybal {
	double cap;       /* largest share of one label; >= 1: no balance */
	unsigned fields;  /* the balanced fields, bit per enum ans_field */
	int used;         /* answers counted */
	struct keybal_label *v;
	int n, size;
};

/* An empty balance of the given fields (keybal_fields()) with the given cap. Can't fail. */
void keybal_init(struct keybal *k, double cap, unsigned fields);

void keybal_release(struct keybal *k);

/*
 * The fields a group's balance holds, from the answers of its candidates
 * (all of them, so the choice does not depend on their order): those that
 * take KEYBAL_MIN_VALUES values or more among them. Distance never: it is
 * a continuous value, its bins (reach distances mostly 0.5-2 m) are spread
 * by the sampler's order instead. Returns 0 or ENG_ENOMEM.
 */
int keybal_fields(const struct answer *v, size_t n, unsigned *fields);

/*
 * Whether answer a fits: with it the balance would count N = used + 1
 * answers, and each of its labels in a balanced field may be on at most
 * cap x N + 1 of them (the one answer of slack lets the count grow: with
 * four values and a 30% cap, twelve answers spread 3-3-3-3 could never
 * take a thirteenth). Each later answer only lowers the other labels'
 * shares, so the final shares are within cap + 1/N. When it fits and
 * `commit`, counts it. Returns 0 or ENG_ENOMEM.
 */
int keybal_fits(struct keybal *k, const struct answer *a, bool commit, bool *ok);

/*
 * Chooses, in order, up to `want` of the n answers under the balance of
 * `fields`: an answer that does not fit waits and is taken as soon as the
 * chosen set has grown enough (the generator's rule, see generate.c).
 * keep[i] says whether answer i was chosen; *nkept their count. Returns 0
 * or ENG_ENOMEM.
 */
int keybal_select(const struct answer *v, size_t n, double cap, unsigned fields, size_t want,
		  bool *keep, size_t *nkept);

#endif /* KEYBAL_H */
