/* SPDX-License-Identifier: MIT */
/*
 * The blind audit's repeated cross-validation: a run of R repeats scores
 * each solver that trains as the mean of R single-split runs on seeds
 * seed .. seed + R - 1, over the group's items (not R times as many), and
 * its Wilson bounds are those of that mean; the rules that do not train
 * are the same in every run.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "audit.h"
#include "rng.h"
#include "subtask.h"

#define ITEMS 60
#define OPTS 5
#define REPEATS 5

/*
 * One recording's 60 items of head_turn/approx with a weak cue: the key
 * holds the word "left" half of the time, a distractor a fifth, so that
 * the trained solvers find something and their splits differ.
 */
static struct audit_set *make_set(char text[ITEMS][OPTS][48])
{
	static const char *const words[] = { "turn", "look", "glance", "head", "around",
					      "slightly", "far", "back" };
	const char *opt[OPTS];
	struct audit_set *set = NULL;
	uint64_t s = 42;
	int it, i, group = subtask_group_index(SUBTASK_HEAD_TURN, METRIC_APPROX);

	assert_true(group >= 0);
	assert_int_equal(audit_set_new(&set), 0);
	for (it = 0; it < ITEMS; it++) {
		struct audit_item ai;
		int key = (int)rng_below(&s, OPTS);

		for (i = 0; i < OPTS; i++) {
			double p = i == key ? 0.5 : 0.2;

			snprintf(text[it][i], sizeof(text[it][i]), "%s %s ~%d%s",
				 words[rng_below(&s, 8)], words[rng_below(&s, 8)],
				 (int)(10 * (1 + rng_below(&s, 17))),
				 rng_unit(&s) < p ? " left" : " right");
			opt[i] = text[it][i];
		}
		memset(&ai, 0, sizeof(ai));
		ai.group = group;
		ai.recording = "rec";
		ai.question = "Which way will the head turn?";
		ai.options = opt;
		ai.n = OPTS;
		ai.key = key;
		assert_int_equal(audit_set_add(set, &ai), 0);
	}
	return set;
}

static const struct audit_solver *solver(const struct audit_report *r, const char *name)
{
	int i;

	assert_int_equal(r->ngroups, 1);
	for (i = 0; i < r->groups[0].nsolvers; i++)
		if (!strcmp(r->groups[0].solvers[i].name, name))
			return &r->groups[0].solvers[i];
	fail_msg("no solver %s", name);
	return NULL;
}

static void test_repeats_are_the_mean_of_single_splits(void **state)
{
	static char text[ITEMS][OPTS][48];
	static const char *const trained[] = { "letter_prior", "key_value_prior", "learned" };
	static const char *const fixed[] = { "longest", "shortest", "most_similar_tokens",
					     "direction_ring" };
	struct audit_report one[REPEATS], all;
	struct audit_set *set = make_set(text);
	double lo, hi, lmin = 1, lmax = 0;
	int r, k;

	(void)state;
	for (r = 0; r < REPEATS; r++) {
		struct audit_params p = { .folds = 5, .seed = 1 + (uint64_t)r, .repeats = 1 };

		assert_int_equal(audit_run(set, &p, &one[r]), 0);
		assert_int_equal(one[r].repeats, 1);
	}
	{
		struct audit_params p = { .folds = 5, .seed = 1, .repeats = REPEATS };

		assert_int_equal(audit_run(set, &p, &all), 0);
		assert_int_equal(all.repeats, REPEATS);
		assert_int_equal(all.folds, 5);
	}
	for (k = 0; k < 3; k++) {
		const struct audit_solver *x = solver(&all, trained[k]);
		double mean = 0;

		for (r = 0; r < REPEATS; r++) {
			const struct audit_solver *y = solver(&one[r], trained[k]);

			assert_int_equal(y->n, ITEMS);
			mean += y->hits / REPEATS;
			if (k == 2) {
				lmin = fmin(lmin, y->acc);
				lmax = fmax(lmax, y->acc);
			}
		}
		/* scored on the 60 items, with the mean hits */
		assert_int_equal(x->n, ITEMS);
		assert_true(fabs(x->hits - mean) < 1e-9);
		assert_true(fabs(x->acc - mean / ITEMS) < 1e-12);
		audit_wilson(mean, ITEMS, 1.645, &lo, &hi);
		assert_true(fabs(x->lo - lo) < 1e-12 && fabs(x->hi - hi) < 1e-12);
	}
	/* the splits disagree, which is why they are averaged */
	assert_true(lmax - lmin >= 2.0 / ITEMS);
	for (k = 0; k < 4; k++) {
		const struct audit_solver *x = solver(&all, fixed[k]);

		for (r = 0; r < REPEATS; r++) {
			const struct audit_solver *y = solver(&one[r], fixed[k]);

			assert_int_equal(y->n, x->n);
			assert_true(y->hits == x->hits);
		}
	}
	audit_set_free(set);
}

/* The same set and settings give the same report, bit for bit: no split is drawn from the clock. */
static void test_repeats_deterministic(void **state)
{
	static char text[ITEMS][OPTS][48];
	struct audit_params p = { .folds = 5, .seed = 3 };
	struct audit_report a, b;
	struct audit_set *set = make_set(text);
	int i;

	(void)state;
	assert_int_equal(audit_run(set, &p, &a), 0);
	assert_int_equal(audit_run(set, &p, &b), 0);
	assert_int_equal(a.repeats, AUDIT_REPEATS);
	assert_int_equal(a.groups[0].nsolvers, b.groups[0].nsolvers);
	for (i = 0; i < a.groups[0].nsolvers; i++)
		assert_true(a.groups[0].solvers[i].hits == b.groups[0].solvers[i].hits);
	audit_set_free(set);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_repeats_are_the_mean_of_single_splits),
		cmocka_unit_test(test_repeats_deterministic),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
