/* SPDX-License-Identifier: MIT */
/*
 * The store's statistics: counts, letter balance and chi-square, z-scores,
 * drops, reviewer figures and Cohen's kappa.
 */
#include "store_int.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "banned.h"
#include "buf.h"
#include "err.h"

/* ======================== Statistics: the maths ======================== */

/*
 * Regularized lower incomplete gamma P(a, x) by its power series
 * x^a e^-x / Gamma(a+1) * sum x^n / ((a+1)...(a+n)); converges fast for
 * x < a + 1.
 */
static double gamma_p_series(double a, double x)
{
	double sum = 1.0 / a, term = sum, ap = a;
	int sign, n;

	for (n = 1; n < 10000; n++) {
		ap += 1.0;
		term *= x / ap;
		sum += term;
		if (fabs(term) < fabs(sum) * 1e-16)
			break;
	}
	return sum * exp(-x + a * log(x) - lgamma_r(a, &sign));
}

/*
 * Regularized upper incomplete gamma Q(a, x) by its continued fraction
 * (modified Lentz); converges fast for x >= a + 1.
 */
static double gamma_q_cf(double a, double x)
{
	const double tiny = 1e-300;
	double b = x + 1.0 - a, c = 1.0 / tiny, d = 1.0 / b, h = d, an, del;
	int sign, i;

	for (i = 1; i < 10000; i++) {
		an = -i * (i - a);
		b += 2.0;
		d = an * d + b;
		if (fabs(d) < tiny)
			d = tiny;
		c = b + an / c;
		if (fabs(c) < tiny)
			c = tiny;
		d = 1.0 / d;
		del = d * c;
		h *= del;
		if (fabs(del - 1.0) < 1e-16)
			break;
	}
	return exp(-x + a * log(x) - lgamma_r(a, &sign)) * h;
}

double store_chi2_sf(double x, double df)
{
	double a = df / 2.0, hx = x / 2.0, q;

	if (isnan(x) || isnan(df) || df <= 0)
		return NO_NUM;
	if (x <= 0)
		return 1.0;
	if (isinf(x))
		return 0.0;
	q = hx < a + 1.0 ? 1.0 - gamma_p_series(a, hx) : gamma_q_cf(a, hx);
	if (q < 0)
		q = 0;
	if (q > 1)
		q = 1;
	return q;
}

int store_kappa(const int64_t *table, int k, double *kappa)
{
	double n = 0, agree = 0, pe = 0, po, row, col;
	int i, j;

	if (!table || k < 1)
		return err_set(ENG_EINVAL, "store_kappa: no table");
	for (i = 0; i < k * k; i++) {
		if (table[i] < 0)
			return err_set(ENG_EINVAL, "store_kappa: negative count");
		n += (double)table[i];
	}
	if (n == 0)
		return err_set(ENG_EINVAL, "store_kappa: empty table");
	for (i = 0; i < k; i++) {
		agree += (double)table[i * k + i];
		row = col = 0;
		for (j = 0; j < k; j++) {
			row += (double)table[i * k + j];
			col += (double)table[j * k + i];
		}
		pe += (row / n) * (col / n);
	}
	po = agree / n;
	if (pe >= 1.0)
		return err_set(ENG_ERANGE, "store_kappa: undefined (chance agreement is 1)");
	*kappa = (po - pe) / (1.0 - pe);
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Median of v[0..n-1] (sorted in place); NAN when n is 0. */
static double median(double *v, size_t n)
{
	if (!n)
		return NO_NUM;
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

/* ======================== Statistics: the report ======================== */

/* Adds a number, or null when v is NAN. Returns 0 or ENG_ENOMEM. */
static int add_num(cJSON *obj, const char *name, double v)
{
	cJSON *item = isnan(v) ? cJSON_CreateNull() : cJSON_CreateNumber(v);

	if (!item || !cJSON_AddItemToObject(obj, name, item)) {
		cJSON_Delete(item);
		return ENG_ENOMEM;
	}
	return 0;
}

/* Adds n to the number member name of obj (which must exist). */
static void add_to(cJSON *obj, const char *name, double n)
{
	cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, name);

	if (item)
		cJSON_SetNumberHelper(item, item->valuedouble + n);
}

/* The group object for (cat, sub, metric) in groups, made with zeros if new. */
static cJSON *group_get(cJSON *groups, const char *cat, const char *sub,
			const char *metric)
{
	char key[256];
	cJSON *g;
	size_t i;
	int rc = 0;

	snprintf(key, sizeof(key), "%s.%s/%s", cat ? cat : "", sub ? sub : "",
		 metric ? metric : "");
	g = cJSON_GetObjectItemCaseSensitive(groups, key);
	if (g)
		return g;
	g = cJSON_CreateObject();
	if (!g)
		return NULL;
	rc |= add_num(g, "total", 0);
	for (i = 0; i < ARRAY_SIZE(store__qa_statuses); i++)
		rc |= add_num(g, store__qa_statuses[i], 0);
	rc |= add_num(g, "acceptance", NO_NUM);
	rc |= add_num(g, "mean_z", NO_NUM);
	rc |= add_num(g, "z_n", 0);
	if (!rc && !cJSON_AddArrayToObject(g, "letters"))
		rc = ENG_ENOMEM;
	rc |= add_num(g, "drops", 0);
	if (!rc && !cJSON_AddObjectToObject(g, "drop_reasons"))
		rc = ENG_ENOMEM;
	if (rc || !cJSON_AddItemToObject(groups, key, g)) {
		cJSON_Delete(g);
		return NULL;
	}
	return g;
}

static void set_num(cJSON *obj, const char *name, double v)
{
	cJSON *item = isnan(v) ? cJSON_CreateNull() : cJSON_CreateNumber(v);

	if (item && !cJSON_ReplaceItemInObjectCaseSensitive(obj, name, item))
		cJSON_Delete(item);
}

/* {"options": k, "n", "counts": {"A": ..}, "chi2", "df", "p"} appended to arr. */
static int letters_add(cJSON *arr, int k, const int64_t *counts)
{
	cJSON *e = cJSON_CreateObject(), *c;
	double n = 0, chi2 = 0, expect;
	char letter[2] = "A";
	int i, rc = 0;

	if (!e)
		return ENG_ENOMEM;
	for (i = 0; i < k; i++)
		n += (double)counts[i];
	expect = n / k;
	for (i = 0; i < k; i++)
		chi2 += ((double)counts[i] - expect) * ((double)counts[i] - expect) / expect;
	rc |= add_num(e, "options", k);
	rc |= add_num(e, "n", n);
	c = cJSON_AddObjectToObject(e, "counts");
	for (i = 0; c && i < k; i++) {
		letter[0] = (char)('A' + i);
		rc |= add_num(c, letter, (double)counts[i]);
	}
	rc |= add_num(e, "chi2", chi2);
	rc |= add_num(e, "df", k - 1);
	rc |= add_num(e, "p", store_chi2_sf(chi2, k - 1));
	if (!c || rc || !cJSON_AddItemToArray(arr, e)) {
		cJSON_Delete(e);
		return ENG_ENOMEM;
	}
	return 0;
}

/* Statuses whose QAs make up the candidate dataset (letters, z). */
#define LIVE_SQL "status IN ('pending', 'approved', 'edited', 'conflict')"

/* groups + by_status + total from one GROUP BY. */
static int stats_counts(struct store *st, cJSON *res, cJSON *groups)
{
	sqlite3_stmt *s = NULL;
	cJSON *by_status, *g;
	double total = 0;
	size_t i;
	int rc, step;

	by_status = cJSON_AddObjectToObject(res, "by_status");
	if (!by_status)
		return store__oom(st);
	for (i = 0; i < ARRAY_SIZE(store__qa_statuses); i++)
		if (add_num(by_status, store__qa_statuses[i], 0))
			return store__oom(st);
	rc = store__db_prepare(st, "SELECT category, subtask, metric, status, count(*) FROM qa"
			" GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4", &s, "counting qas");
	if (rc)
		goto out;
	while ((step = sqlite3_step(s)) == SQLITE_ROW) {
		double n = (double)sqlite3_column_int64(s, 4);
		const char *status = store__col_text(s, 3);

		g = group_get(groups, store__col_text(s, 0), store__col_text(s, 1), store__col_text(s, 2));
		if (!g) {
			rc = store__oom(st);
			goto out;
		}
		add_to(g, "total", n);
		add_to(g, status, n);
		add_to(by_status, status, n);
		total += n;
	}
	if (step != SQLITE_DONE) {
		rc = store__db_fail(st, "counting qas");
		goto out;
	}
	cJSON_ArrayForEach(g, groups) {
		double acc = cJSON_GetObjectItem(g, "approved")->valuedouble +
			     cJSON_GetObjectItem(g, "edited")->valuedouble;
		double rej = cJSON_GetObjectItem(g, "rejected")->valuedouble;

		set_num(g, "acceptance", acc + rej > 0 ? acc / (acc + rej) : NO_NUM);
	}
	if (add_num(res, "total", total))
		rc = store__oom(st);
out:
	sqlite3_finalize(s);
	return rc;
}

/* Answer-letter balance per group and per option count. */
static int stats_letters(struct store *st, cJSON *res, cJSON *groups)
{
	sqlite3_stmt *s = NULL;
	int64_t all[STORE_MAX_OPTIONS + 1][STORE_MAX_OPTIONS];
	int64_t cur[STORE_MAX_OPTIONS];
	char cur_key[256] = "", key[256];
	cJSON *letters, *g = NULL;
	int rc, step, k, cur_k = 0, i;

	memset(all, 0, sizeof(all));
	memset(cur, 0, sizeof(cur));
	letters = cJSON_AddArrayToObject(res, "letters");
	if (!letters)
		return store__oom(st);
	rc = store__db_prepare(st, "SELECT category, subtask, metric, json_array_length(options_json),"
			" answer_index, count(*) FROM qa WHERE " LIVE_SQL
			" AND answer_index IS NOT NULL AND json_valid(options_json)"
			" GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5", &s, "counting letters");
	if (rc)
		goto out;
	for (;;) {
		step = sqlite3_step(s);
		if (step != SQLITE_ROW && step != SQLITE_DONE) {
			rc = store__db_fail(st, "counting letters");
			goto out;
		}
		k = 0;
		key[0] = '\0';
		if (step == SQLITE_ROW) {
			snprintf(key, sizeof(key), "%s.%s/%s", store__col_text(s, 0), store__col_text(s, 1),
				 store__col_text(s, 2));
			k = sqlite3_column_int(s, 3);
		}
		/* a new (group, k) run: flush the previous one */
		if (cur_k && (step != SQLITE_ROW || k != cur_k || strcmp(key, cur_key))) {
			if (!g || letters_add(cJSON_GetObjectItem(g, "letters"), cur_k, cur)) {
				rc = store__oom(st);
				goto out;
			}
			memset(cur, 0, sizeof(cur));
			cur_k = 0;
		}
		if (step != SQLITE_ROW)
			break;
		if (k < 2 || k > STORE_MAX_OPTIONS)
			continue; /* not written by store_qa_put(); not counted */
		i = sqlite3_column_int(s, 4);
		if (i < 0 || i >= k)
			continue;
		if (!cur_k) {
			g = group_get(groups, store__col_text(s, 0), store__col_text(s, 1), store__col_text(s, 2));
			snprintf(cur_key, sizeof(cur_key), "%s", key);
			cur_k = k;
		}
		cur[i] += sqlite3_column_int64(s, 5);
		all[k][i] += sqlite3_column_int64(s, 5);
	}
	for (k = 2; k <= STORE_MAX_OPTIONS; k++) {
		int64_t n = 0;

		for (i = 0; i < k; i++)
			n += all[k][i];
		if (n && letters_add(letters, k, all[k])) {
			rc = store__oom(st);
			goto out;
		}
	}
out:
	sqlite3_finalize(s);
	return rc;
}

/* Mean answer-length z per group and overall, from qc_json "z". */
static int stats_z(struct store *st, cJSON *res, cJSON *groups)
{
	sqlite3_stmt *s = NULL;
	double sum_all = 0, n_all = 0;
	cJSON *g;
	int rc, step;

	rc = store__db_prepare(st, "SELECT category, subtask, metric, sum(z), count(z) FROM"
			" (SELECT category, subtask, metric, CASE WHEN json_valid(qc_json) THEN"
			"  CASE WHEN json_type(qc_json, '$.z') IN ('integer', 'real')"
			"  THEN json_extract(qc_json, '$.z') END END AS z"
			"  FROM qa WHERE " LIVE_SQL ")"
			" GROUP BY 1, 2, 3 ORDER BY 1, 2, 3", &s, "averaging z");
	if (rc)
		goto out;
	while ((step = sqlite3_step(s)) == SQLITE_ROW) {
		double sum = sqlite3_column_double(s, 3);
		double n = (double)sqlite3_column_int64(s, 4);

		g = group_get(groups, store__col_text(s, 0), store__col_text(s, 1), store__col_text(s, 2));
		if (!g) {
			rc = store__oom(st);
			goto out;
		}
		set_num(g, "mean_z", n > 0 ? sum / n : NO_NUM);
		set_num(g, "z_n", n);
		sum_all += sum;
		n_all += n;
	}
	if (step != SQLITE_DONE) {
		rc = store__db_fail(st, "averaging z");
		goto out;
	}
	if (add_num(res, "mean_z", n_all > 0 ? sum_all / n_all : NO_NUM) ||
	    add_num(res, "z_n", n_all))
		rc = store__oom(st);
out:
	sqlite3_finalize(s);
	return rc;
}

static int stats_drops(struct store *st, cJSON *res, cJSON *groups)
{
	sqlite3_stmt *s = NULL;
	cJSON *drops, *by_reason, *g;
	double total = 0;
	int rc, step;

	drops = cJSON_AddObjectToObject(res, "drops");
	by_reason = drops ? cJSON_AddObjectToObject(drops, "by_reason") : NULL;
	if (!by_reason)
		return store__oom(st);
	rc = store__db_prepare(st, "SELECT reason, count(*) FROM drops GROUP BY 1 ORDER BY 1", &s,
			"counting drops");
	if (rc)
		goto out;
	while ((step = sqlite3_step(s)) == SQLITE_ROW) {
		double n = (double)sqlite3_column_int64(s, 1);

		if (add_num(by_reason, store__col_text(s, 0), n)) {
			rc = store__oom(st);
			goto out;
		}
		total += n;
	}
	if (step != SQLITE_DONE) {
		rc = store__db_fail(st, "counting drops");
		goto out;
	}
	sqlite3_finalize(s);
	s = NULL;
	rc = store__db_prepare(st, "SELECT category, subtask, metric, reason, count(*) FROM drops"
			" GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4", &s, "counting drops");
	if (rc)
		goto out;
	while ((step = sqlite3_step(s)) == SQLITE_ROW) {
		double n = (double)sqlite3_column_int64(s, 4);
		cJSON *reasons;

		g = group_get(groups, store__col_text(s, 0), store__col_text(s, 1), store__col_text(s, 2));
		reasons = g ? cJSON_GetObjectItemCaseSensitive(g, "drop_reasons") : NULL;
		if (!reasons || add_num(reasons, store__col_text(s, 3), n)) {
			rc = store__oom(st);
			goto out;
		}
		add_to(g, "drops", n);
	}
	if (step != SQLITE_DONE) {
		rc = store__db_fail(st, "counting drops");
		goto out;
	}
	if (add_num(drops, "total", total))
		rc = store__oom(st);
out:
	sqlite3_finalize(s);
	return rc;
}

/* Reviewers: counts and median decision times. */
static int stats_reviewers(struct store *st, cJSON *rv)
{
	sqlite3_stmt *s = NULL;
	cJSON *who, *r;
	double *all = NULL, *tmp;
	size_t n = 0, cap = 0, first = 0;
	char cur[256] = "";
	int rc, step;

	who = cJSON_AddObjectToObject(rv, "reviewers");
	if (!who)
		return store__oom(st);
	rc = store__db_prepare(st, "SELECT reviewer, count(*), count(DISTINCT qa_id) FROM reviews"
			" GROUP BY 1 ORDER BY 1", &s, "counting reviews");
	if (rc)
		goto out;
	while ((step = sqlite3_step(s)) == SQLITE_ROW) {
		r = cJSON_AddObjectToObject(who, store__col_text(s, 0));
		if (!r || add_num(r, "reviews", (double)sqlite3_column_int64(s, 1)) ||
		    add_num(r, "items", (double)sqlite3_column_int64(s, 2)) ||
		    add_num(r, "median_time_ms", NO_NUM)) {
			rc = store__oom(st);
			goto out;
		}
	}
	if (step != SQLITE_DONE) {
		rc = store__db_fail(st, "counting reviews");
		goto out;
	}
	sqlite3_finalize(s);
	s = NULL;
	rc = store__db_prepare(st, "SELECT reviewer, round((julianday(decided_at) -"
			" julianday(started_at)) * 86400000.0) FROM reviews"
			" WHERE started_at IS NOT NULL AND decided_at IS NOT NULL"
			" ORDER BY 1", &s, "reading review times");
	if (rc)
		goto out;
	for (;;) {
		step = sqlite3_step(s);
		if (step != SQLITE_ROW && step != SQLITE_DONE) {
			rc = store__db_fail(st, "reading review times");
			goto out;
		}
		/* a new reviewer: the median of the previous one's times */
		if (n > first && (step != SQLITE_ROW || strcmp(cur, store__col_text(s, 0)))) {
			r = cJSON_GetObjectItemCaseSensitive(who, cur);
			if (r) {
				double *part = malloc((n - first) * sizeof(*part));

				if (!part) {
					rc = store__oom(st);
					goto out;
				}
				memcpy(part, all + first, (n - first) * sizeof(*part));
				set_num(r, "median_time_ms", median(part, n - first));
				free(part);
			}
			first = n;
		}
		if (step != SQLITE_ROW)
			break;
		snprintf(cur, sizeof(cur), "%s", store__col_text(s, 0));
		if (n == cap) {
			cap = cap ? cap * 2 : 256;
			tmp = realloc(all, cap * sizeof(*all));
			if (!tmp) {
				rc = store__oom(st);
				goto out;
			}
			all = tmp;
		}
		all[n++] = sqlite3_column_double(s, 1);
	}
	if (add_num(rv, "median_time_ms", median(all, n)))
		rc = store__oom(st);
out:
	sqlite3_finalize(s);
	free(all);
	return rc;
}

/* Blind answers against the key. */
static int stats_blind(struct store *st, cJSON *rv)
{
	sqlite3_stmt *s = NULL;
	cJSON *b;
	double n, agree;
	int rc;

	rc = store__db_prepare(st, "SELECT count(*), coalesce(sum(r.blind_answer_index ="
			" q.answer_index), 0) FROM reviews r JOIN qa q ON q.id = r.qa_id"
			" WHERE r.blind_answer_index IS NOT NULL AND q.answer_index IS NOT NULL",
			&s, "counting blind answers");
	if (rc)
		goto out;
	if (sqlite3_step(s) != SQLITE_ROW) {
		rc = store__db_fail(st, "counting blind answers");
		goto out;
	}
	n = (double)sqlite3_column_int64(s, 0);
	agree = (double)sqlite3_column_int64(s, 1);
	b = cJSON_AddObjectToObject(rv, "blind");
	if (!b || add_num(b, "n", n) || add_num(b, "agree", agree) ||
	    add_num(b, "rate", n > 0 ? agree / n : NO_NUM))
		rc = store__oom(st);
out:
	sqlite3_finalize(s);
	return rc;
}

static int kappa_add(cJSON *arr, const char *a, const char *b, const int64_t t[4])
{
	cJSON *e = cJSON_CreateObject();
	double kappa = NO_NUM;
	int rc = 0;

	if (!e)
		return ENG_ENOMEM;
	if (store_kappa(t, 2, &kappa))
		kappa = NO_NUM;
	err_clear();
	if (!cJSON_AddStringToObject(e, "a", a) || !cJSON_AddStringToObject(e, "b", b))
		rc = ENG_ENOMEM;
	rc |= add_num(e, "n", (double)(t[0] + t[1] + t[2] + t[3]));
	rc |= add_num(e, "agree", (double)(t[0] + t[3]));
	rc |= add_num(e, "kappa", kappa);
	if (rc || !cJSON_AddItemToArray(arr, e)) {
		cJSON_Delete(e);
		return ENG_ENOMEM;
	}
	return 0;
}

/*
 * Cohen's kappa for each pair of reviewers over the QAs both decided:
 * each one's verdict (last approve/reject/edit that is not an
 * adjudication), as accept (approve, edit) / reject.
 */
static int stats_kappa(struct store *st, cJSON *rv)
{
	static const char sql[] =
		"WITH v AS (SELECT qa_id, reviewer, decision IN ('approve', 'edit') AS acc,"
		" row_number() OVER (PARTITION BY qa_id, reviewer"
		"  ORDER BY decided_at DESC, id DESC) AS rn"
		" FROM reviews WHERE decision IN ('approve', 'reject', 'edit') AND adjudication = 0)"
		" SELECT a.reviewer, b.reviewer, a.acc, b.acc, count(*)"
		" FROM v a JOIN v b ON a.qa_id = b.qa_id AND a.reviewer < b.reviewer"
		" WHERE a.rn = 1 AND b.rn = 1 GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4";
	sqlite3_stmt *s = NULL;
	cJSON *arr;
	int64_t t[4] = { 0, 0, 0, 0 };
	char ca[256] = "", cb[256] = "";
	int rc, step, have = 0;

	arr = cJSON_AddArrayToObject(rv, "kappa");
	if (!arr)
		return store__oom(st);
	rc = store__db_prepare(st, sql, &s, "comparing reviewers");
	if (rc)
		goto out;
	for (;;) {
		step = sqlite3_step(s);
		if (step != SQLITE_ROW && step != SQLITE_DONE) {
			rc = store__db_fail(st, "comparing reviewers");
			goto out;
		}
		if (have && (step != SQLITE_ROW || strcmp(ca, store__col_text(s, 0)) ||
			     strcmp(cb, store__col_text(s, 1)))) {
			if (kappa_add(arr, ca, cb, t)) {
				rc = store__oom(st);
				goto out;
			}
			memset(t, 0, sizeof(t));
		}
		if (step != SQLITE_ROW)
			break;
		snprintf(ca, sizeof(ca), "%s", store__col_text(s, 0));
		snprintf(cb, sizeof(cb), "%s", store__col_text(s, 1));
		/* rows: a accepts / rejects; columns: b accepts / rejects */
		t[(sqlite3_column_int(s, 2) ? 0 : 2) + (sqlite3_column_int(s, 3) ? 0 : 1)] +=
			sqlite3_column_int64(s, 4);
		have = 1;
	}
out:
	sqlite3_finalize(s);
	return rc;
}

static int stats_reviews(struct store *st, cJSON *res)
{
	cJSON *rv, *bs;
	double acc, rej;
	int rc, n = 0;

	rv = cJSON_AddObjectToObject(res, "reviews");
	if (!rv)
		return store__oom(st);
	rc = store__pragma_int(st, "SELECT count(*) FROM reviews", &n, "counting reviews");
	if (rc)
		return rc;
	bs = cJSON_GetObjectItemCaseSensitive(res, "by_status");
	acc = cJSON_GetObjectItemCaseSensitive(bs, "approved")->valuedouble +
	      cJSON_GetObjectItemCaseSensitive(bs, "edited")->valuedouble;
	rej = cJSON_GetObjectItemCaseSensitive(bs, "rejected")->valuedouble;
	if (add_num(rv, "total", n) ||
	    add_num(rv, "acceptance", acc + rej > 0 ? acc / (acc + rej) : NO_NUM))
		return store__oom(st);
	rc = stats_reviewers(st, rv);
	if (!rc)
		rc = stats_blind(st, rv);
	if (!rc)
		rc = stats_kappa(st, rv);
	return rc;
}

int store_stats(struct store *st, cJSON **out)
{
	cJSON *res = cJSON_CreateObject(), *groups;
	int rc = 0;

	if (!res)
		return store__oom(st);
	if (add_num(res, "schema_version", STORE_SCHEMA_VERSION)) {
		rc = store__oom(st);
		goto out;
	}
	groups = cJSON_AddObjectToObject(res, "groups");
	if (!groups) {
		rc = store__oom(st);
		goto out;
	}
	/* one read snapshot for all the queries, unless a batch is open */
	if (!st->in_tx) {
		rc = store__db_exec(st, "BEGIN", "reading statistics");
		if (rc)
			goto out;
	}
	rc = stats_counts(st, res, groups);
	if (!rc)
		rc = stats_letters(st, res, groups);
	if (!rc)
		rc = stats_z(st, res, groups);
	if (!rc)
		rc = stats_drops(st, res, groups);
	if (!rc)
		rc = stats_reviews(st, res);
	if (!st->in_tx)
		sqlite3_exec(st->db, "COMMIT", NULL, NULL, NULL);
out:
	if (rc) {
		cJSON_Delete(res);
		return rc;
	}
	*out = res;
	return 0;
}
