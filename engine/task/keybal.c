/* SPDX-License-Identifier: MIT */
/* Key balance over the labels of ans_strata(). */
#include "keybal.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "banned.h"
#include "err.h"
#include "hash.h"

struct keybal_label {
	uint64_t h;
	char label[ANS_STRATUM_MAX];
	int count;
};

static uint64_t label_hash(const char *s)
{
	return hash_fnv1a_str(HASH_FNV_BASIS, s);
}

void keybal_init(struct keybal *k, double cap, unsigned fields)
{
	memset(k, 0, sizeof(*k));
	k->cap = cap;
	k->fields = fields;
}

void keybal_release(struct keybal *k)
{
	free(k->v);
	memset(k, 0, sizeof(*k));
}

static struct keybal_label *find(struct keybal *k, const char *label, uint64_t h, bool add)
{
	int i;

	for (i = 0; i < k->n; i++)
		if (k->v[i].h == h && !strcmp(k->v[i].label, label))
			return &k->v[i];
	if (!add)
		return NULL;
	if (k->n == k->size) {
		int size = k->size ? 2 * k->size : 32;
		struct keybal_label *n = realloc(k->v, (size_t)size * sizeof(*n));

		if (!n)
			return NULL;
		k->v = n;
		k->size = size;
	}
	memset(&k->v[k->n], 0, sizeof(k->v[0]));
	k->v[k->n].h = h;
	snprintf(k->v[k->n].label, sizeof(k->v[0].label), "%s", label);
	return &k->v[k->n++];
}

int keybal_fields(const struct answer *v, size_t n, unsigned *fields)
{
	struct keybal k;
	int count[ANS_NFIELDS] = { 0 }, i, f;
	size_t j;

	*fields = 0;
	keybal_init(&k, 1, 0);
	for (j = 0; j < n; j++) {
		char labels[ANS_STRATA_MAX][ANS_STRATUM_MAX];
		enum ans_field fl[ANS_STRATA_MAX];
		int m = ans_strata(&v[j], labels, fl);

		for (i = 0; i < m; i++) {
			uint64_t h = label_hash(labels[i]);

			if (!find(&k, labels[i], h, false)) {
				if (!find(&k, labels[i], h, true)) {
					keybal_release(&k);
					return ENG_ENOMEM;
				}
				count[fl[i]]++;
			}
		}
	}
	keybal_release(&k);
	for (f = 0; f < ANS_NFIELDS; f++)
		if (f != ANS_F_DISTANCE && count[f] >= KEYBAL_MIN_VALUES)
			*fields |= 1u << f;
	return 0;
}

int keybal_fits(struct keybal *k, const struct answer *a, bool commit, bool *ok)
{
	char labels[ANS_STRATA_MAX][ANS_STRATUM_MAX];
	enum ans_field fl[ANS_STRATA_MAX];
	uint64_t h[ANS_STRATA_MAX];
	double limit = k->cap * (k->used + 1) + 1;
	int n, i;

	*ok = true;
	if (k->cap >= 1 || !k->fields) {
		k->used += commit;
		return 0;
	}
	n = ans_strata(a, labels, fl);
	for (i = 0; i < n; i++)
		h[i] = label_hash(labels[i]);
	for (i = 0; i < n && *ok; i++) {
		const struct keybal_label *t;

		if (!(k->fields & (1u << fl[i])))
			continue;
		t = find(k, labels[i], h[i], false);
		if (t && t->count + 1 > limit + 1e-9)
			*ok = false;
	}
	if (!*ok || !commit)
		return 0;
	for (i = 0; i < n; i++) {
		struct keybal_label *t;

		if (!(k->fields & (1u << fl[i])))
			continue;
		t = find(k, labels[i], h[i], true);
		if (!t)
			return ENG_ENOMEM;
		t->count++;
	}
	k->used++;
	return 0;
}

int keybal_select(const struct answer *v, size_t n, double cap, unsigned fields, size_t want,
		  bool *keep, size_t *nkept)
{
	struct keybal k;
	size_t *wait = NULL, nwait = 0, i, j;
	bool ok;
	int rc = 0;

	*nkept = 0;
	keybal_init(&k, cap, fields);
	wait = malloc((n ? n : 1) * sizeof(*wait));
	if (!wait)
		return ENG_ENOMEM;
	for (i = 0; i < n; i++)
		keep[i] = false;
	for (i = 0; i < n && *nkept < want; i++) {
		rc = keybal_fits(&k, &v[i], true, &ok);
		if (rc)
			goto out;
		if (!ok) {
			wait[nwait++] = i;
			continue;
		}
		keep[i] = true;
		(*nkept)++;
		/* the set grew: the waiting ones, in order, as far as they fit */
		for (j = 0; j < nwait && *nkept < want;) {
			rc = keybal_fits(&k, &v[wait[j]], true, &ok);
			if (rc)
				goto out;
			if (!ok) {
				j++;
				continue;
			}
			keep[wait[j]] = true;
			(*nkept)++;
			memmove(&wait[j], &wait[j + 1], (nwait - j - 1) * sizeof(*wait));
			nwait--;
			j = 0;
		}
	}
out:
	free(wait);
	keybal_release(&k);
	return rc;
}
