/* SPDX-License-Identifier: MIT */
/*
 * Answer keys, answers and the scores: EgoProx's figures exactly as
 * evaluate.py computes them (after parse_answer_letter for raw
 * responses), and proxima's own figures beside them under other names.
 */
#include "eval.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "banned.h"
#include "buf.h"
#include "err.h"
#include "eval_int.h"
#include "export.h"
#include "jsonfile.h"
#include "pyjson.h"
#include "store.h"

/* Largest predictions or records file read. */
#define EVAL_MAX_FILE (1u << 30)

/* ============================== Sets ============================== */

enum answer_kind {
	ANSWER_MISSING = 0, /* the id was never answered */
	ANSWER_VALUE,       /* a results file's "answer": compared as it is */
	ANSWER_RESPONSE     /* the model's raw text: parse_answer_letter first */
};

struct eval_item {
	char *id;
	char *group;          /* CATEGORY.SUBTASK/METRIC, or the EgoProx source */
	const char *source;   /* EgoProx source (static), or NULL */
	int chain;
	int noptions;         /* options or candidates; 0 when unknown */
	cJSON *key;           /* MC: correct_option as a value (NULL when absent) */
	cJSON *correct;       /* chain: correct_answer (NULL when absent) */
	enum answer_kind kind;
	cJSON *answer;        /* ANSWER_VALUE: the value; NULL for None */
	char *response;       /* ANSWER_RESPONSE: the text; NULL for a failed call */
};

struct eval_set {
	struct eval_item *items;
	size_t n, cap;
	size_t *byid;         /* item indices sorted by id, built on demand */
	size_t nbyid;
	size_t pred_total, pred_answers, pred_responses, pred_unknown, pred_repeat, ignored;
};

static const char *const sources[] = {
	"Intention_Approx", "Intention_Relative", "Exploration_Approx", "Exploration_Relative",
	"Exploitation_Approx", "Exploitation_Relative", "Chain of Actions"
};

static const char *source_static(const char *s)
{
	size_t i;

	for (i = 0; s && i < ARRAY_SIZE(sources); i++)
		if (!strcmp(s, sources[i]))
			return sources[i];
	return NULL;
}

static void answer_clear(struct eval_item *it)
{
	cJSON_Delete(it->answer);
	free(it->response);
	it->answer = NULL;
	it->response = NULL;
	it->kind = ANSWER_MISSING;
}

static void item_release(struct eval_item *it)
{
	free(it->id);
	free(it->group);
	cJSON_Delete(it->key);
	cJSON_Delete(it->correct);
	answer_clear(it);
}

void eval_set_free(struct eval_set *set)
{
	size_t i;

	if (!set)
		return;
	for (i = 0; i < set->n; i++)
		item_release(&set->items[i]);
	free(set->items);
	free(set->byid);
	free(set);
}

size_t eval_set_size(const struct eval_set *set)
{
	return set ? set->n : 0;
}

/* A new zeroed item at the end of set, or NULL. */
static struct eval_item *item_new(struct eval_set *set)
{
	if (set->n == set->cap) {
		size_t cap = set->cap ? set->cap * 2 : 64;
		struct eval_item *n = realloc(set->items, cap * sizeof(*n));

		if (!n)
			return NULL;
		set->items = n;
		set->cap = cap;
	}
	free(set->byid);
	set->byid = NULL;
	memset(&set->items[set->n], 0, sizeof(set->items[0]));
	return &set->items[set->n++];
}

/* Fills the common fields; on failure the item is dropped again. */
static int item_fill(struct eval_set *set, struct eval_item *it, const char *id,
		     const char *group, const char *source)
{
	it->id = strdup(id);
	it->group = strdup(group);
	it->source = source_static(source);
	if (!it->id || !it->group) {
		item_release(it);
		set->n--;
		return ENG_ENOMEM;
	}
	return 0;
}

/* A copy of v (NULL stays NULL); *rc = ENG_ENOMEM when copying fails. */
static cJSON *dup_or_null(const cJSON *v, int *rc)
{
	cJSON *d;

	if (!v)
		return NULL;
	d = cJSON_Duplicate(v, 1);
	if (!d)
		*rc = ENG_ENOMEM;
	return d;
}

/* ---------- from the store ---------- */

struct store_ctx {
	struct eval_set *set;
	const char *tasks;
};

static int ref_from_qa(const struct store_qa *qa, void *ctx)
{
	struct store_ctx *c = ctx;
	struct eval_item *it;
	cJSON *opts = NULL, *ans = NULL;
	const cJSON *correct = NULL;
	char group[200];
	int rc = 0, nopt;

	if (!export_tasks_match(c->tasks, qa->category, qa->subtask, qa->metric))
		return 0;
	opts = cJSON_Parse(qa->options_json);
	if (!cJSON_IsArray(opts)) {
		rc = err_set(ENG_EINVAL, "qa '%s': options_json is not an array", qa->id);
		goto out;
	}
	nopt = cJSON_GetArraySize(opts);
	if (qa->answer_index < 0) {
		ans = qa->answer_json ? cJSON_Parse(qa->answer_json) : NULL;
		correct = cJSON_GetObjectItemCaseSensitive(ans, "correct_answer");
		if (!cJSON_IsArray(correct))
			goto out; /* no key: not scored (export skips it too) */
	} else if (qa->answer_index >= nopt || nopt > 26) {
		rc = err_set(ENG_EINVAL, "qa '%s': answer_index %d out of %d options", qa->id,
			     qa->answer_index, nopt);
		goto out;
	}
	snprintf(group, sizeof(group), "%s.%s/%s", qa->category, qa->subtask, qa->metric);
	it = item_new(c->set);
	if (!it) {
		rc = ENG_ENOMEM;
		goto out;
	}
	rc = item_fill(c->set, it, qa->id, group, export_egoprox_source(qa->category, qa->metric));
	if (rc)
		goto out;
	it->noptions = nopt;
	if (correct) {
		it->chain = 1;
		it->correct = dup_or_null(correct, &rc);
	} else {
		char l[2] = { (char)('A' + qa->answer_index), 0 };

		it->key = cJSON_CreateString(l);
		rc = it->key ? 0 : ENG_ENOMEM;
	}
out:
	cJSON_Delete(opts);
	cJSON_Delete(ans);
	return rc;
}

int eval_set_from_store(struct store *st, const char *status, const char *tasks,
			struct eval_set **out)
{
	struct eval_set *set;
	struct store_filter flt;
	struct store_ctx c;
	int rc = export_tasks_check(tasks);

	if (rc)
		return rc;
	set = calloc(1, sizeof(*set));
	if (!set)
		return ENG_ENOMEM;
	memset(&flt, 0, sizeof(flt));
	flt.status = status ? status : EXPORT_DEFAULT_STATUS;
	c.set = set;
	c.tasks = tasks;
	rc = store_qa_iter(st, &flt, 0, ref_from_qa, &c);
	if (rc) {
		eval_set_free(set);
		return rc;
	}
	*out = set;
	return 0;
}

/* ---------- files ---------- */

/* Reads a whole file (free()); *len its bytes, which may hold NULs. */
static int slurp(const char *path, char **out, size_t *len)
{
	struct buf b;
	int rc;

	buf_init(&b, (size_t)EVAL_MAX_FILE + 1);
	rc = buf_read_file(&b, path);
	if (rc) {
		buf_release(&b);
		return rc;
	}
	*len = b.len;
	*out = buf_detach(&b);
	return *out ? 0 : ENG_ENOMEM;
}

/* Parses bytes as json.load would, naming where:line:column on errors. */
static int parse_bytes(const char *text, size_t len, const char *where, size_t line0,
		       const char *why, cJSON **out)
{
	struct pyjson_error e;
	int rc = pyjson_parse(text, len, PYJSON_BYTES, out, &e);

	if (rc == ENG_EPARSE)
		return err_set(rc, "%s:%zu:%zu: %s%s", where, line0 + e.line - 1, e.column, e.msg,
			       why);
	if (rc)
		return err_set(rc, "%s: %s", where, eng_strerror(rc));
	return 0;
}

/* A whole JSON file, read as json.load reads it. */
static int read_json_file(const char *path, cJSON **out)
{
	char *text = NULL;
	size_t len;
	int rc = slurp(path, &text, &len);

	if (rc)
		return rc;
	rc = parse_bytes(text, len, path, 1, " (Python's json.load refuses this file too)", out);
	free(text);
	return rc;
}

/* An id: a string, or an integer as its digits. */
static bool id_text(const cJSON *v, char *out, size_t size)
{
	if (cJSON_IsString(v)) {
		snprintf(out, size, "%s", v->valuestring);
		return strlen(v->valuestring) < size;
	}
	if (cJSON_IsNumber(v) && v->valuestring) {
		snprintf(out, size, "%s", v->valuestring);
		return strlen(v->valuestring) < size;
	}
	return false;
}

/* Options "A. ", "B. " ... at line starts of a multiple-choice prompt. */
static int count_lettered(const char *text)
{
	const char *p = text;
	char pat[5] = "\nA. ";
	int n = 0;

	if (!text)
		return 0;
	for (; n < 26; n++) {
		const char *q;

		pat[1] = (char)('A' + n);
		if (n == 0 && !strncmp(text, pat + 1, 3)) {
			q = text;
		} else {
			q = strstr(p, pat);
			if (!q)
				break;
		}
		p = q + 1;
	}
	return n;
}

/* Candidates "1. ", "2. " ... of a chain prompt, each after a space, newline or '('. */
static int count_numbered(const char *text)
{
	const char *p = text;
	char pat[16];
	int n = 0;

	if (!text)
		return 0;
	for (;;) {
		const char *q = p;
		size_t len;

		snprintf(pat, sizeof(pat), "%d. ", n + 1);
		len = strlen(pat);
		for (;;) {
			q = strstr(q, pat);
			if (!q || q == text || strchr(" \n(", q[-1]))
				break;
			q += len;
		}
		if (!q)
			return n;
		p = q + len;
		n++;
	}
}

/* The first text item of an EgoProx MC sample's chat turns. */
static const char *mc_prompt_text(const cJSON *o)
{
	const cJSON *turn, *part;

	cJSON_ArrayForEach(turn, cJSON_GetObjectItemCaseSensitive(o, "data")) {
		cJSON_ArrayForEach(part, cJSON_GetObjectItemCaseSensitive(turn, "content")) {
			const char *t = cJSON_GetStringValue(
				cJSON_GetObjectItemCaseSensitive(part, "type"));

			if (t && !strcmp(t, "text"))
				return cJSON_GetStringValue(
					cJSON_GetObjectItemCaseSensitive(part, "text"));
		}
	}
	return NULL;
}

/*
 * A results-file chain key whose later candidates include a non-object:
 * evaluate.py's find_matching_gt calls .get() on it and stops.
 */
static int check_candidates(const cJSON *ca, const char *where)
{
	const cJSON *c;
	int j = 0;

	if (!cJSON_IsArray(ca) || !cJSON_IsObject(ca->child))
		return 0; /* evaluate.py skips the sample before */
	cJSON_ArrayForEach(c, ca) {
		if (!cJSON_IsObject(c))
			return err_set(ENG_EPARSE, "%s: correct_answer[%d] is not an object "
				       "(evaluate.py stops on it)", where, j);
		j++;
	}
	return 0;
}

/*
 * The answer of a results item, or of a JSONL line (jsonl: a "response"
 * there wins; evaluate.py reads only "answer" from a results file).
 */
static int take_answer(struct eval_set *set, struct eval_item *it, const cJSON *o,
		       const char *where, int jsonl)
{
	const cJSON *r = jsonl ? cJSON_GetObjectItemCaseSensitive(o, "response") : NULL;
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, "answer");
	int rc = 0;

	answer_clear(it);
	if (r) {
		if (!cJSON_IsString(r) && !cJSON_IsNull(r))
			return err_set(ENG_EPARSE, "%s: \"response\" must be a string or null", where);
		it->kind = ANSWER_RESPONSE;
		if (cJSON_IsString(r)) {
			it->response = strdup(r->valuestring);
			rc = it->response ? 0 : ENG_ENOMEM;
		}
		set->pred_responses++;
		return rc;
	}
	it->kind = ANSWER_VALUE;
	if (a && !cJSON_IsNull(a))
		it->answer = dup_or_null(a, &rc);
	set->pred_answers++;
	return rc;
}

/*
 * Key items of an EgoProx array (egoprox.json or a results file), as
 * evaluate.py walks it: every item counts, other sources are ignored.
 */
static int set_from_egoprox(struct eval_set *set, const cJSON *arr, const char *path,
			    int with_answers)
{
	const cJSON *o;
	char where[PATH_MAX + 32];
	int i = 0, rc = 0;

	if (!cJSON_IsArray(arr))
		return err_set(ENG_EPARSE, "'%s': expected a JSON array of samples", path);
	cJSON_ArrayForEach(o, arr) {
		const cJSON *src = cJSON_GetObjectItemCaseSensitive(o, "source");
		const char *s = source_static(cJSON_GetStringValue(src));
		struct eval_item *it;
		char id[256];

		snprintf(where, sizeof(where), "'%s': [%d]", path, i);
		if (!cJSON_IsObject(o))
			return err_set(ENG_EPARSE, "%s: not an object (evaluate.py stops on it)",
				       where);
		if (cJSON_IsArray(src) || cJSON_IsObject(src))
			return err_set(ENG_EPARSE, "%s: \"source\" is a list or an object "
				       "(evaluate.py stops on it)", where);
		if (!id_text(cJSON_GetObjectItemCaseSensitive(o, "id"), id, sizeof(id))) {
			if (!with_answers)
				return err_set(ENG_EPARSE, "%s: expected an \"id\"", where);
			snprintf(id, sizeof(id), "[%d]", i); /* evaluate.py does not need ids */
		}
		i++;
		if (!s) {
			set->ignored++;
			continue;
		}
		it = item_new(set);
		if (!it)
			return ENG_ENOMEM;
		rc = item_fill(set, it, id, s, s);
		if (rc)
			break;
		if (!strcmp(s, "Chain of Actions")) {
			const cJSON *ca = cJSON_GetObjectItemCaseSensitive(o, "correct_answer");

			it->chain = 1;
			rc = with_answers ? check_candidates(ca, where) : 0;
			it->correct = rc ? NULL : dup_or_null(ca, &rc);
			it->noptions = count_numbered(cJSON_GetStringValue(
				cJSON_GetObjectItemCaseSensitive(o, "user_prompt")));
		} else {
			it->key = dup_or_null(cJSON_GetObjectItemCaseSensitive(o, "correct_option"),
					      &rc);
			it->noptions = count_lettered(mc_prompt_text(o));
		}
		if (!rc && with_answers) {
			rc = take_answer(set, it, o, where, 0);
			set->pred_total++;
		}
		if (rc)
			break;
	}
	return rc;
}

/* Calls fn on each non-blank line of a JSONL file, parsed; names path:line. */
static int jsonl_each(const char *path, int (*fn)(const cJSON *o, const char *where, void *ctx),
		      void *ctx)
{
	char *text = NULL, where[PATH_MAX + 32];
	const char *p, *nl, *end;
	size_t len, line = 0;
	int rc = slurp(path, &text, &len);

	if (rc)
		return rc;
	end = text + len;
	for (p = text; !rc && p < end; p = nl + 1) {
		cJSON *o = NULL;
		size_t k, n;

		line++;
		nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			nl = end;
		n = (size_t)(nl - p);
		for (k = 0; k < n && (p[k] == ' ' || p[k] == '\t' || p[k] == '\r'); k++)
			;
		if (k == n)
			continue;
		rc = parse_bytes(p, n, path, line, "", &o);
		if (rc)
			break;
		snprintf(where, sizeof(where), "%s:%zu", path, line);
		if (!cJSON_IsObject(o))
			rc = err_set(ENG_EPARSE, "%s: not a JSON object", where);
		else
			rc = fn(o, where, ctx);
		cJSON_Delete(o);
	}
	free(text);
	return rc;
}

/* One records.jsonl line of a jsonl export. */
static int ref_from_record(const cJSON *o, const char *where, void *ctx)
{
	struct eval_set *set = ctx;
	const cJSON *ca = cJSON_GetObjectItemCaseSensitive(o, "correct_answer");
	const char *group = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "group"));
	const char *letter = cJSON_GetStringValue(
		cJSON_GetObjectItemCaseSensitive(o, "answer_letter"));
	const char *src = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "source"));
	struct eval_item *it;
	char id[256];
	int rc;

	if (!id_text(cJSON_GetObjectItemCaseSensitive(o, "id"), id, sizeof(id)) || !group)
		return err_set(ENG_EPARSE, "%s: a record needs \"id\" and \"group\"", where);
	if (!letter && !cJSON_IsArray(ca))
		return err_set(ENG_EPARSE, "%s: a record needs \"answer_letter\" or "
			       "\"correct_answer\"", where);
	it = item_new(set);
	if (!it)
		return ENG_ENOMEM;
	rc = item_fill(set, it, id, group, src);
	if (rc)
		return rc;
	it->noptions = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(o, "options"));
	if (letter) {
		it->key = cJSON_CreateString(letter);
		return it->key ? 0 : ENG_ENOMEM;
	}
	it->chain = 1;
	it->correct = dup_or_null(ca, &rc);
	return rc;
}

int eval_set_from_export(const char *dir, struct eval_set **out)
{
	char path[PATH_MAX];
	cJSON *man = NULL, *arr = NULL;
	const char *fmt;
	struct eval_set *set = calloc(1, sizeof(*set));
	int rc;

	if (!set)
		return ENG_ENOMEM;
	snprintf(path, sizeof(path), "%s/manifest.json", dir);
	rc = jsonfile_read(path, &man);
	if (rc)
		goto out;
	fmt = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(man, "format"));
	if (fmt && !strcmp(fmt, "egoprox")) {
		snprintf(path, sizeof(path), "%s/%s", dir, export_format_file(EXPORT_EGOPROX));
		rc = read_json_file(path, &arr);
		rc = rc ? rc : set_from_egoprox(set, arr, path, 0);
	} else if (fmt && !strcmp(fmt, "jsonl")) {
		snprintf(path, sizeof(path), "%s/%s", dir, export_format_file(EXPORT_JSONL));
		rc = jsonl_each(path, ref_from_record, set);
	} else {
		rc = err_set(ENG_EINVAL, "'%s': format '%s' holds no answer key eval reads "
			     "(export with --format egoprox or jsonl, or score against --db)",
			     path, fmt ? fmt : "?");
	}
out:
	cJSON_Delete(man);
	cJSON_Delete(arr);
	if (rc) {
		eval_set_free(set);
		return rc;
	}
	*out = set;
	return 0;
}

int eval_set_from_results(const char *path, struct eval_set **out)
{
	struct eval_set *set = calloc(1, sizeof(*set));
	cJSON *arr = NULL;
	int rc;

	if (!set)
		return ENG_ENOMEM;
	rc = read_json_file(path, &arr);
	rc = rc ? rc : set_from_egoprox(set, arr, path, 1);
	cJSON_Delete(arr);
	if (rc) {
		eval_set_free(set);
		return rc;
	}
	*out = set;
	return 0;
}

/* ---------- answers ---------- */

static int cmp_byid(const void *a, const void *b, void *ctx)
{
	const struct eval_set *set = ctx;

	return strcmp(set->items[*(const size_t *)a].id, set->items[*(const size_t *)b].id);
}

/* The item with this id, or NULL (ENG_ENOMEM in *rc when the index fails). */
static struct eval_item *find_item(struct eval_set *set, const char *id, int *rc)
{
	size_t lo = 0, hi, i;

	*rc = 0;
	if (!set->byid || set->nbyid != set->n) {
		free(set->byid);
		set->byid = malloc((set->n ? set->n : 1) * sizeof(*set->byid));
		if (!set->byid) {
			*rc = ENG_ENOMEM;
			return NULL;
		}
		for (i = 0; i < set->n; i++)
			set->byid[i] = i;
		qsort_r(set->byid, set->n, sizeof(*set->byid), cmp_byid, set);
		set->nbyid = set->n;
	}
	hi = set->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(set->items[set->byid[mid]].id, id);

		if (!c)
			return &set->items[set->byid[mid]];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

int eval_set_response(struct eval_set *set, const char *id, const char *text)
{
	int rc;
	struct eval_item *it = find_item(set, id, &rc);

	if (rc)
		return rc;
	if (!it)
		return err_set(ENG_ENOTFOUND, "no key item '%s'", id);
	if (it->kind != ANSWER_MISSING)
		set->pred_repeat++;
	answer_clear(it);
	it->kind = ANSWER_RESPONSE;
	set->pred_responses++;
	if (text) {
		it->response = strdup(text);
		if (!it->response)
			return ENG_ENOMEM;
	}
	return 0;
}

int eval_set_answer(struct eval_set *set, const char *id, const cJSON *answer)
{
	int rc;
	struct eval_item *it = find_item(set, id, &rc);

	if (rc)
		return rc;
	if (!it)
		return err_set(ENG_ENOTFOUND, "no key item '%s'", id);
	if (it->kind != ANSWER_MISSING)
		set->pred_repeat++;
	answer_clear(it);
	it->kind = ANSWER_VALUE;
	set->pred_answers++;
	if (answer && !cJSON_IsNull(answer))
		it->answer = dup_or_null(answer, &rc);
	return rc;
}

/* One prediction object (a JSONL line, or a results item when !jsonl). */
static int pred_put(struct eval_set *set, const cJSON *o, const char *where, int jsonl)
{
	char id[256];
	struct eval_item *it;
	int rc;

	if (!id_text(cJSON_GetObjectItemCaseSensitive(o, "id"), id, sizeof(id)))
		return err_set(ENG_EPARSE, "%s: a prediction needs an \"id\" (string or integer)",
			       where);
	set->pred_total++;
	it = find_item(set, id, &rc);
	if (rc)
		return rc;
	if (!it) {
		set->pred_unknown++;
		return 0;
	}
	if (it->kind != ANSWER_MISSING)
		set->pred_repeat++;
	return take_answer(set, it, o, where, jsonl);
}

static int pred_line(const cJSON *o, const char *where, void *ctx)
{
	return pred_put(ctx, o, where, 1);
}

int eval_set_read_predictions(struct eval_set *set, const char *path)
{
	char *text = NULL, where[PATH_MAX + 32];
	cJSON *arr = NULL;
	const cJSON *o;
	size_t len, k = 0;
	int rc = slurp(path, &text, &len), i = 0;

	if (rc)
		return rc;
	while (k < len && (text[k] == ' ' || text[k] == '\t' || text[k] == '\n' ||
			   text[k] == '\r'))
		k++;
	if (k == len || text[k] != '[') {
		free(text);
		return jsonl_each(path, pred_line, set);
	}
	rc = parse_bytes(text, len, path, 1, " (Python's json.load refuses this file too)", &arr);
	free(text);
	if (rc)
		return rc;
	cJSON_ArrayForEach(o, arr) {
		snprintf(where, sizeof(where), "'%s': [%d]", path, i++);
		if (!cJSON_IsObject(o)) {
			rc = err_set(ENG_EPARSE, "%s: expected an object", where);
			break;
		}
		rc = pred_put(set, o, where, 0);
		if (rc)
			break;
	}
	cJSON_Delete(arr);
	return rc;
}

/* ============================== Scoring ============================== */

struct acc {
	const char *name;
	/* multiple choice */
	size_t n, correct, missing, unparsed, lenient, chance_n;
	double chance;
	/* chains */
	size_t cn, evaluated, node_correct, drop_unparsable, drop_length, cmissing, invalid;
	size_t cchance_n;
	double sum_s, sum_l, cchance;
};

/* n! / (n - k)! as a double. */
static double perms(int n, int k)
{
	double p = 1;
	int i;

	for (i = 0; i < k; i++)
		p *= n - i;
	return p;
}

/* Distinct node lists of length k among the key chains. */
static int distinct_chains(const cJSON *correct, int k)
{
	const cJSON *a, *b;
	int n = 0;

	cJSON_ArrayForEach(a, correct) {
		const cJSON *na = cJSON_GetObjectItemCaseSensitive(a, "node");
		int dup = 0;

		if (cJSON_GetArraySize(na) != k)
			continue;
		for (b = correct->child; b && b != a; b = b->next) {
			const cJSON *nb = cJSON_GetObjectItemCaseSensitive(b, "node");

			if (cJSON_GetArraySize(nb) == k && cJSON_Compare(na, nb, 1)) {
				dup = 1;
				break;
			}
		}
		n += !dup;
	}
	return n;
}

/* The key is the one-letter string l. */
static bool key_is(const cJSON *key, char l)
{
	return cJSON_IsString(key) && key->valuestring[0] == l && key->valuestring[1] == '\0';
}

/*
 * evaluate.py: `answer == correct and answer is not None`, where a raw
 * response's answer is parse_answer_letter(response). The lenient figure
 * parses the same text with eval_lenient_letter.
 */
static void score_mc(const struct eval_item *it, struct acc *a)
{
	const char *text = NULL;
	char l;

	a->n++;
	if (it->noptions > 0) {
		a->chance += 1.0 / it->noptions;
		a->chance_n++;
	}
	switch (it->kind) {
	case ANSWER_MISSING:
		a->missing++;
		return;
	case ANSWER_RESPONSE:
		text = it->response;
		if (!eval_egoprox_letter(text, &l))
			a->unparsed++;
		else if (key_is(it->key, l))
			a->correct++;
		break;
	case ANSWER_VALUE:
		if (!it->answer)
			a->unparsed++;
		else if (pyjson_equal(it->answer, it->key))
			a->correct++;
		text = cJSON_GetStringValue(it->answer);
		break;
	}
	if (text && eval_lenient_letter(text, it->noptions, &l) && key_is(it->key, l))
		a->lenient++;
}

/* evaluate.py eval_chain_of_actions for one sample, plus the strict count. */
static void score_chain(const struct eval_item *it, struct acc *a)
{
	const cJSON *first = cJSON_GetArrayItem(it->correct, 0), *nodes, *edges, *m;
	const char *text;
	struct eval_chain pc;
	enum eval_chain_status st;
	int k, e;

	a->cn++;
	nodes = cJSON_GetObjectItemCaseSensitive(first, "node");
	edges = cJSON_GetObjectItemCaseSensitive(first, "edge");
	k = cJSON_GetArraySize(nodes);
	e = cJSON_GetArraySize(edges);
	if (!cJSON_IsArray(it->correct) || !cJSON_IsObject(first) || !cJSON_IsArray(nodes) ||
	    !cJSON_IsArray(edges) || k == 0 || e == 0 || k > EVAL_CHAIN_MAX || e > EVAL_CHAIN_MAX) {
		a->invalid++;
		return;
	}
	if (it->noptions >= k) {
		a->cchance += distinct_chains(it->correct, k) / perms(it->noptions, k);
		a->cchance_n++;
	}
	if (it->kind == ANSWER_MISSING) {
		a->cmissing++;
		return;
	}
	/* parse_llm_answer returns None for anything but a string */
	text = it->kind == ANSWER_RESPONSE ? it->response : cJSON_GetStringValue(it->answer);
	st = text ? eval_parse_chain(text, k, e, &pc) : EVAL_CHAIN_UNPARSABLE;
	if (st != EVAL_CHAIN_OK) {
		if (st == EVAL_CHAIN_LENGTH)
			a->drop_length++;
		else
			a->drop_unparsable++;
		return;
	}
	a->evaluated++;
	m = eval__match_chain(it->correct, &pc);
	if (!m)
		return;
	a->node_correct++;
	edges = cJSON_GetObjectItemCaseSensitive(m, "edge");
	a->sum_s += eval_edge_accuracy(edges, &pc, false);
	a->sum_l += eval_edge_accuracy(edges, &pc, true);
}

static void j_put(int *oom, cJSON *o, const char *k, cJSON *v)
{
	if (!v || !o || !cJSON_AddItemToObject(o, k, v)) {
		cJSON_Delete(v);
		*oom = 1;
	}
}

static cJSON *ratio(double num, size_t den)
{
	return den ? cJSON_CreateNumber(num / (double)den) : cJSON_CreateNull();
}

static cJSON *acc_mc_json(int *oom, const struct acc *a)
{
	cJSON *o = cJSON_CreateObject();

	j_put(oom, o, "kind", cJSON_CreateString("mc"));
	j_put(oom, o, "n", cJSON_CreateNumber((double)a->n));
	j_put(oom, o, "correct", cJSON_CreateNumber((double)a->correct));
	j_put(oom, o, "accuracy", ratio((double)a->correct, a->n));
	j_put(oom, o, "chance", ratio(a->chance, a->chance_n));
	j_put(oom, o, "missing", cJSON_CreateNumber((double)a->missing));
	j_put(oom, o, "unparsed", cJSON_CreateNumber((double)a->unparsed));
	j_put(oom, o, "lenient_correct", cJSON_CreateNumber((double)a->lenient));
	j_put(oom, o, "lenient_accuracy", ratio((double)a->lenient, a->n));
	if (!o)
		*oom = 1;
	return o;
}

static cJSON *acc_chain_json(int *oom, const struct acc *a)
{
	cJSON *o = cJSON_CreateObject(), *c = cJSON_CreateObject();
	double nc = (double)a->node_correct;
	size_t scored = a->cn - a->invalid;

	j_put(oom, o, "kind", cJSON_CreateString("chain"));
	j_put(oom, o, "n", cJSON_CreateNumber((double)a->cn));
	j_put(oom, o, "evaluated", cJSON_CreateNumber((double)a->evaluated));
	j_put(oom, o, "node_correct", cJSON_CreateNumber(nc));
	/* evaluate.py reports 0 when nothing was evaluated or node-correct */
	j_put(oom, o, "act_acc", cJSON_CreateNumber(a->evaluated ? nc / (double)a->evaluated : 0));
	j_put(oom, o, "rel_acc_s", cJSON_CreateNumber(a->node_correct ? a->sum_s / nc : 0));
	j_put(oom, o, "rel_acc_l", cJSON_CreateNumber(a->node_correct ? a->sum_l / nc : 0));
	j_put(oom, o, "dropped_unparsable", cJSON_CreateNumber((double)a->drop_unparsable));
	j_put(oom, o, "dropped_length", cJSON_CreateNumber((double)a->drop_length));
	j_put(oom, o, "missing", cJSON_CreateNumber((double)a->cmissing));
	j_put(oom, o, "invalid_key", cJSON_CreateNumber((double)a->invalid));
	j_put(oom, o, "scored", cJSON_CreateNumber((double)scored));
	j_put(oom, o, "strict_act_acc", ratio(nc, scored));
	j_put(oom, o, "strict_rel_acc_s", ratio(a->sum_s, scored));
	j_put(oom, o, "strict_rel_acc_l", ratio(a->sum_l, scored));
	j_put(oom, c, "act_acc", ratio(a->cchance, a->cchance_n));
	j_put(oom, c, "rel_acc_s", cJSON_CreateNumber(1.0 / 8));
	j_put(oom, c, "rel_acc_l", cJSON_CreateNumber(3.0 / 8));
	j_put(oom, o, "chance", c);
	if (!o)
		*oom = 1;
	return o;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(((const struct acc *)a)->name, ((const struct acc *)b)->name);
}

/* The accumulator called name in accs[0..*n), added when new. */
static struct acc *acc_get(struct acc *accs, size_t *n, const char *name)
{
	size_t i;

	for (i = 0; i < *n; i++)
		if (!strcmp(accs[i].name, name))
			return &accs[i];
	memset(&accs[*n], 0, sizeof(accs[0]));
	accs[*n].name = name;
	return &accs[(*n)++];
}

int eval_set_score(const struct eval_set *set, cJSON **out)
{
	struct acc *groups = calloc(set->n + 1, sizeof(*groups));
	struct acc src[ARRAY_SIZE(sources)], all;
	cJSON *r = cJSON_CreateObject(), *g, *e, *p;
	size_t ng = 0, i, missing = 0;
	int oom = 0;

	memset(src, 0, sizeof(src));
	memset(&all, 0, sizeof(all));
	if (!groups || !r) {
		free(groups);
		cJSON_Delete(r);
		return ENG_ENOMEM;
	}
	for (i = 0; i < ARRAY_SIZE(sources); i++)
		src[i].name = sources[i];
	for (i = 0; i < set->n; i++) {
		const struct eval_item *it = &set->items[i];
		struct acc *a = acc_get(groups, &ng, it->group);
		size_t s;

		missing += it->kind == ANSWER_MISSING;
		for (s = 0; s < ARRAY_SIZE(sources); s++)
			if (it->source == sources[s])
				break;
		if (it->chain) {
			score_chain(it, a);
			if (s < ARRAY_SIZE(sources))
				score_chain(it, &src[s]);
		} else {
			score_mc(it, a);
			score_mc(it, &all);
			if (s < ARRAY_SIZE(sources))
				score_mc(it, &src[s]);
		}
	}
	qsort(groups, ng, sizeof(*groups), cmp_name);
	g = cJSON_CreateObject();
	for (i = 0; g && i < ng; i++) {
		if (groups[i].n || !groups[i].cn)
			j_put(&oom, g, groups[i].name, acc_mc_json(&oom, &groups[i]));
		if (groups[i].cn) {
			char name[240];

			snprintf(name, sizeof(name), "%s%s", groups[i].name,
				 groups[i].n ? " (chain)" : "");
			j_put(&oom, g, name, acc_chain_json(&oom, &groups[i]));
		}
	}
	j_put(&oom, r, "groups", g);
	e = cJSON_CreateObject();
	for (i = 0; e && i < ARRAY_SIZE(sources); i++) {
		if (i + 1 < ARRAY_SIZE(sources))
			j_put(&oom, e, sources[i], acc_mc_json(&oom, &src[i]));
		else if (src[i].cn)
			j_put(&oom, e, sources[i], acc_chain_json(&oom, &src[i]));
	}
	j_put(&oom, r, "egoprox", e);
	j_put(&oom, r, "overall_mc", acc_mc_json(&oom, &all));
	p = cJSON_CreateObject();
	j_put(&oom, p, "total", cJSON_CreateNumber((double)set->pred_total));
	j_put(&oom, p, "answers", cJSON_CreateNumber((double)set->pred_answers));
	j_put(&oom, p, "responses", cJSON_CreateNumber((double)set->pred_responses));
	j_put(&oom, p, "unknown_ids", cJSON_CreateNumber((double)set->pred_unknown));
	j_put(&oom, p, "repeated_ids", cJSON_CreateNumber((double)set->pred_repeat));
	j_put(&oom, p, "ignored_key_items", cJSON_CreateNumber((double)set->ignored));
	j_put(&oom, r, "predictions", p);
	j_put(&oom, r, "items", cJSON_CreateNumber((double)set->n));
	j_put(&oom, r, "missing", cJSON_CreateNumber((double)missing));
	free(groups);
	if (oom) {
		cJSON_Delete(r);
		return ENG_ENOMEM;
	}
	*out = r;
	return 0;
}
