/* SPDX-License-Identifier: MIT */
/*
 * chain.actions: the K next actions in order and the direction of each
 * step between their locations, chosen from a candidate set of K true and
 * distractor actions; every valid order (same-goal actions keep theirs)
 * is a correct answer.
 */
#include "truth_int.h"

#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "chain.h"
#include "err.h"
#include "hash.h"
#include "jsonfile.h"
#include "registry.h"
#include "template.h"

/* The brain's action list disagrees with the recording: the tools win. */
static void note_actions(struct build *b, struct truth *out, size_t first, int k)
{
	const cJSON *ba = cJSON_GetObjectItemCaseSensitive(b->args, "actions");
	int same = cJSON_GetArraySize(ba) == k, j;

	for (j = 0; same && j < k; j++)
		same = (size_t)cJSON_GetArrayItem(ba, j)->valuedouble == first + (size_t)j;
	if (!same && cJSON_GetArraySize(ba) > 0)
		out->note = strdup("brain's action list differs from the actions that follow T");
}

/*
 * The recording's action words, for the distractor tiers: each action's
 * content words (4 letters or more, lowercased, not a stop word, cut at 31
 * letters) as ids into one vocabulary, and how many actions after each
 * serve the same goal without a break. Made once per recording (the
 * shared store): a chain QA then reads ids, not descriptions.
 */
struct chain_words {
	char **vocab;   /* distinct words */
	size_t nvocab;
	size_t *off;    /* per action: its first id; off[nactions] = ids */
	uint32_t *ids;
	int *after;     /* per action: goal-run steps after it (0: it ends one, or no goal) */
};

static void chain_words_free(void *p)
{
	struct chain_words *w = p;
	size_t i;

	if (!w)
		return;
	for (i = 0; i < w->nvocab; i++)
		free(w->vocab[i]);
	free(w->vocab);
	free(w->off);
	free(w->ids);
	free(w->after);
	free(w);
}

/* The content words of a, in order, each at most 31 letters, into cb(w). */
static int each_word(const char *a, int (*cb)(void *arg, const char *w), void *arg)
{
	static const char *const stop[] = { "from", "with", "into", "onto", "back", "the",
					    "take", "put", NULL };
	char w[32];
	const char *p = a;
	int rc;

	while (p && *p) {
		size_t n = 0;
		int s;
		bool is_stop = false;

		while (*p && !isalpha((unsigned char)*p))
			p++;
		while (isalpha((unsigned char)*p) && n + 1 < sizeof(w))
			w[n++] = (char)tolower((unsigned char)*p++);
		while (isalpha((unsigned char)*p))
			p++;
		w[n] = '\0';
		for (s = 0; stop[s]; s++)
			is_stop = is_stop || !strcmp(w, stop[s]);
		if (n < 4 || is_stop)
			continue;
		rc = cb(arg, w);
		if (rc)
			return rc;
	}
	return 0;
}

struct words_build {
	struct chain_words *w;
	size_t vcap;    /* vocab capacity */
	size_t nids, icap;
	size_t *hash;   /* open addressing: vocab id + 1, 0 empty */
	size_t hcap;
};

/* Doubles the hash table of b, rehashing the vocabulary. */
static int grow_hash(struct words_build *b)
{
	size_t ncap = b->hcap ? b->hcap * 2 : 256, i, at;
	size_t *nh = calloc(ncap, sizeof(*nh));

	if (!nh)
		return ENG_ENOMEM;
	for (i = 0; i < b->w->nvocab; i++) {
		at = hash_fnv1a_str(HASH_FNV_BASIS, b->w->vocab[i]) & (ncap - 1);
		while (nh[at])
			at = (at + 1) & (ncap - 1);
		nh[at] = i + 1;
	}
	free(b->hash);
	b->hash = nh;
	b->hcap = ncap;
	return 0;
}

/* Interns w and appends its id to the ids of the action being read. */
static int add_word(void *arg, const char *w)
{
	struct words_build *b = arg;
	struct chain_words *cw = b->w;
	size_t at, id;
	int rc;

	if (cw->nvocab * 2 >= b->hcap) {
		rc = grow_hash(b);
		if (rc)
			return rc;
	}
	at = hash_fnv1a_str(HASH_FNV_BASIS, w) & (b->hcap - 1);
	while (b->hash[at] && strcmp(cw->vocab[b->hash[at] - 1], w))
		at = (at + 1) & (b->hcap - 1);
	if (b->hash[at]) {
		id = b->hash[at] - 1;
	} else {
		if (cw->nvocab == b->vcap) {
			size_t ncap = b->vcap ? b->vcap * 2 : 64;
			char **nv = realloc(cw->vocab, ncap * sizeof(*nv));

			if (!nv)
				return ENG_ENOMEM;
			cw->vocab = nv;
			b->vcap = ncap;
		}
		cw->vocab[cw->nvocab] = strdup(w);
		if (!cw->vocab[cw->nvocab])
			return ENG_ENOMEM;
		id = cw->nvocab++;
		b->hash[at] = id + 1;
	}
	if (b->nids == b->icap) {
		size_t ncap = b->icap ? b->icap * 2 : 256;
		uint32_t *ni = realloc(cw->ids, ncap * sizeof(*ni));

		if (!ni)
			return ENG_ENOMEM;
		cw->ids = ni;
		b->icap = ncap;
	}
	cw->ids[b->nids++] = (uint32_t)id;
	return 0;
}

/* tool_shared_get's maker: the recording's chain_words. */
static int words_make(void *arg, void **data, void (**destroy)(void *data))
{
	const struct recording *rec = arg;
	struct chain_words *cw = calloc(1, sizeof(*cw));
	struct words_build b;
	size_t i;
	int rc = 0;

	if (!cw)
		return ENG_ENOMEM;
	memset(&b, 0, sizeof(b));
	b.w = cw;
	cw->off = calloc(rec->nactions + 1, sizeof(*cw->off));
	cw->after = calloc(rec->nactions + 1, sizeof(*cw->after));
	if (!cw->off || !cw->after)
		rc = ENG_ENOMEM;
	for (i = 0; !rc && i < rec->nactions; i++) {
		cw->off[i] = b.nids;
		rc = each_word(rec->actions[i].description, add_word, &b);
	}
	if (!rc) {
		cw->off[rec->nactions] = b.nids;
		for (i = rec->nactions; i-- > 0;) {
			const char *g = rec->actions[i].goal;
			const char *h = i + 1 < rec->nactions ? rec->actions[i + 1].goal : NULL;

			cw->after[i] = g && h && !strcmp(g, h) ? cw->after[i + 1] + 1 : 0;
		}
	}
	free(b.hash);
	if (rc) {
		chain_words_free(cw);
		return rc;
	}
	*data = cw;
	*destroy = chain_words_free;
	return 0;
}

/*
 * Whether action i's content words occur in one of the k lowercased true
 * texts (NULL skipped), as strcasestr finds them: each word is looked up
 * once per QA, its answer kept in memo (0 unknown, 1 no, 2 yes).
 */
static bool shares_word(const struct chain_words *cw, size_t i, char *const *lower, int k,
			unsigned char *memo)
{
	size_t x;
	int j;

	for (x = cw->off[i]; x < cw->off[i + 1]; x++) {
		uint32_t id = cw->ids[x];

		if (!memo[id]) {
			memo[id] = 1;
			for (j = 0; j < k; j++)
				if (lower[j] && strstr(lower[j], cw->vocab[id]))
					memo[id] = 2;
		}
		if (memo[id] == 2)
			return true;
	}
	return false;
}

/*
 * Which distractors come first (docs/answers.md, Chains). The true steps
 * are the last K of a run of the goal; a candidate among the last K of
 * any run ("late") reads like a step that finishes something, one from
 * earlier in a run like a step that starts it, and a solver reading only
 * the text would learn that. So: tier 0, late steps of the stated goal at
 * other times (the goal names no subset of the candidates); tier 1, late
 * steps of other goals that share a content word with a true step; tier
 * 2, other late steps; tier 3, early steps of the goal (those already done
 * in the clip among them); tier 4, the rest.
 */
static int distractor_tier(const struct recording *rec, const struct chain_words *cw, size_t i,
			   int k, const char *goal, char *const *lower, unsigned char *memo)
{
	const struct rec_action *a = &rec->actions[i];
	bool same = goal && a->goal && !strcmp(goal, a->goal), late = cw->after[i] < k;

	if (same)
		return late ? 0 : 3;
	if (!late)
		return 4;
	return shares_word(cw, i, lower, k, memo) ? 1 : 2;
}

/* The chain over the future actions, into the ground truth. */
static int build(struct build *b, size_t first, int k, struct chain_result *c)
{
	cJSON *j;
	int rc;

	rc = chain_build_actions(b->ctx, first, (size_t)k, c);
	if (rc)
		return rc == ENG_EINVAL || rc == ENG_ERANGE
			       ? err_set(ENG_EINVAL, "build_chain: %s", err_msg()) : rc;
	j = cJSON_CreateObject();
	if (!j)
		return ENG_ENOMEM;
	rc = chain_write(b->ctx, c, j);
	if (rc || !cJSON_AddItemToObject(b->gt, "chain", j)) {
		cJSON_Delete(j);
		return rc ? rc : ENG_ENOMEM;
	}
	return 0;
}

/* Every valid order with its own edges, the observed one first, into valid[]. */
static int valid_orders(struct build *b, const struct chain_result *c, size_t first,
			const struct qc_chain *ch, cJSON *valid)
{
	size_t i;
	int j, k = (int)c->k;

	for (i = 0; i < c->norders; i++) {
		const struct chain_order *o = &c->orders[i];
		int order[ANS_CHAIN_MAX];
		enum bev_dir edges[ANS_CHAIN_MAX];
		struct answer an;
		cJSON *one, *nodes, *eds;
		bool defined = true;

		for (j = 0; j < k; j++)
			order[j] = (int)(c->act[o->member[j]] - first);
		for (j = 0; j < k - 1; j++) {
			const struct chain_edge *e = &c->e[o->member[j]][o->member[j + 1]];

			defined = defined && e->defined;
			edges[j] = e->dir;
		}
		if (!defined || qc_chain_answer(ch, order, edges, &an))
			continue;
		one = cJSON_CreateObject();
		nodes = cJSON_AddArrayToObject(one, "node");
		eds = cJSON_AddArrayToObject(one, "edge");
		if (!one || !nodes || !eds) {
			cJSON_Delete(one);
			return ENG_ENOMEM;
		}
		for (j = 0; j < k; j++)
			cJSON_AddItemToArray(nodes, cJSON_CreateNumber(an.nodes[j]));
		for (j = 0; j < k - 1; j++) {
			char e[2] = { bev_dir_letter(an.edges[j]), 0 };

			cJSON_AddItemToArray(eds, cJSON_CreateString(e));
		}
		cJSON_AddItemToArray(valid, one);
		if (cJSON_GetArraySize(valid) == 1)
			b->ans = an;
	}
	return 0;
}

/* The question: the brain's when it carries the candidate list, else the template's. */
static int question(struct build *b, struct truth *out, const char *goal, const struct qc_chain *ch)
{
	const char *bq = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(b->args, "question"));
	struct buf q, cands;
	char gb[256], kb[8];
	size_t gl;
	int rc;

	buf_init(&q, 1 << 16);
	buf_init(&cands, 1 << 16);
	rc = qc_chain_list(ch, &cands);
	if (rc)
		goto out;
	snprintf(gb, sizeof(gb), "%s", goal ? goal : "the task");
	gl = strlen(gb);
	if (gl && gb[gl - 1] == '.')
		gb[gl - 1] = '\0';
	if (bq && strlen(bq) > 20 && strstr(bq, "[[")) {
		rc = buf_adds(&q, bq);
	} else {
		const struct tmpl_var vars[] = { { "goal", gb }, { "candidates", buf_str(&cands) },
						 { "k", kb } };

		snprintf(kb, sizeof(kb), "%d", ch->k);

		rc = tmpl_question("chain.actions.relative", qc_seed_from_id(out->id), vars,
				   ARRAY_SIZE(vars), &q);
	}
	if (rc)
		goto out;
	free(out->question);
	out->question = buf_detach(&q);
	if (!out->question)
		rc = ENG_ENOMEM;
out:
	buf_release(&q);
	buf_release(&cands);
	return rc;
}

/* The options (the candidate set) and the answer document. */
static int pack(struct build *b, struct truth *out, const struct qc_chain *ch, cJSON *ans,
		int k, const char *goal)
{
	cJSON *opts = cJSON_CreateArray(), *aj = ans_to_json(&b->ans);
	int j;

	for (j = 0; opts && j < ch->n; j++)
		cJSON_AddItemToArray(opts, cJSON_CreateString(ch->desc[j]));
	out->options_json = opts ? jsonfile_print(opts) : NULL;
	cJSON_Delete(opts);
	cJSON_AddItemToObject(ans, "chain", aj);
	cJSON_AddNumberToObject(ans, "k", k);
	cJSON_AddStringToObject(ans, "goal", goal ? goal : "");
	out->answer_json = jsonfile_print(ans);
	out->qc_json = strdup("{\"pass\":true,\"kind\":\"chain\"}");
	out->answer_index = -1;
	return out->options_json && out->answer_json && out->qc_json ? 0 : ENG_ENOMEM;
}

int truth__chain(struct build *b, struct truth *out)
{
	const struct recording *rec = b->rec;
	const char *truth[ANS_CHAIN_MAX], **pool = NULL, *goal;
	char *lower[ANS_CHAIN_MAX] = { NULL };
	int *tiers = NULL;
	struct chain_words *cw = NULL;
	unsigned char *memo = NULL;
	bool cw_owned = false;
	struct chain_result *c = NULL;
	struct qc_chain *ch = NULL;
	size_t first = b->clip.first_future, i, npool = 0;
	int k = b->clip.k, rc, j;
	cJSON *ans = NULL, *valid;

	/* the K future actions and the goal are the sampler's, never the brain's */
	if (k < 2 || first + (size_t)k > rec->nactions)
		return truth__reject(b, "clip_rule", "the clip has no run of future actions");
	c = malloc(sizeof(*c));
	ch = calloc(1, sizeof(*ch));
	pool = calloc(rec->nactions + 1, sizeof(*pool));
	tiers = calloc(rec->nactions + 1, sizeof(*tiers));
	if (!c || !ch || !pool || !tiers) {
		rc = ENG_ENOMEM;
		goto out;
	}
	rc = tool_shared_get(b->ctx, "chain-words", words_make, (void *)(uintptr_t)rec,
			     (void **)&cw, &cw_owned);
	if (rc)
		goto out;
	memo = calloc(cw->nvocab + 1, 1);
	if (!memo) {
		rc = ENG_ENOMEM;
		goto out;
	}
	rc = build(b, first, k, c);
	if (rc)
		goto out;
	note_actions(b, out, first, k);
	for (j = 0; j < k; j++)
		truth[j] = rec->actions[first + (size_t)j].description
			 ? rec->actions[first + (size_t)j].description : "";
	goal = rec->actions[first].goal;
	/* the true steps' texts lowercased once, as strcasestr compares them */
	for (j = 0; j < k; j++) {
		const char *d = rec->actions[first + (size_t)j].description;
		char *q;

		if (!d)
			continue;
		lower[j] = strdup(d);
		if (!lower[j]) {
			rc = ENG_ENOMEM;
			goto out;
		}
		for (q = lower[j]; *q; q++)
			*q = (char)tolower((unsigned char)*q);
	}
	for (i = 0; i < rec->nactions; i++)
		if ((i < first || i >= first + (size_t)k) && rec->actions[i].description) {
			tiers[npool] = distractor_tier(rec, cw, i, k, goal, lower, memo);
			pool[npool++] = rec->actions[i].description;
		}
	rc = qc_chain_candidates(truth, k, pool, tiers, npool, out->id, 0, &b->p->qc, ch);
	if (rc) {
		rc = truth__reject(b, "no_distractors", "%s", err_msg());
		goto out;
	}
	ans = cJSON_CreateObject();
	valid = cJSON_AddArrayToObject(ans, "correct_answer");
	if (!ans || !valid) {
		rc = ENG_ENOMEM;
		goto out;
	}
	rc = valid_orders(b, c, first, ch, valid);
	if (rc)
		goto out;
	if (cJSON_GetArraySize(valid) == 0) {
		rc = truth__reject(b, "ambiguous", "no valid order has unambiguous edges");
		goto out;
	}
	if (chain_ambiguous(c)) {
		rc = truth__reject(b, "ambiguous",
				   "an edge of the observed chain is within a sector margin");
		goto out;
	}
	rc = question(b, out, goal, ch);
	if (!rc)
		rc = pack(b, out, ch, ans, k, goal);
out:
	for (j = 0; j < k && j < ANS_CHAIN_MAX; j++)
		free(lower[j]);
	cJSON_Delete(ans);
	free(pool);
	free(tiers);
	free(memo);
	if (cw_owned)
		chain_words_free(cw);
	free(ch);
	free(c);
	return rc;
}

int plan__chain(const struct plan_in *in, struct plan_out *out)
{
	const cJSON *ks = in->result(in, "extract_keysteps"), *chain, *it;
	const cJSON *why = cJSON_GetObjectItemCaseSensitive(in->cand, "why");
	const char *goal = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(why, "goal"));
	struct buf q;
	int rc;

	if (!ks) {
		const cJSON *w = cJSON_GetObjectItemCaseSensitive(in->cand, "window");
		const cJSON *ws = cJSON_GetObjectItemCaseSensitive(w, "start_ns");
		cJSON *a = cJSON_CreateObject();

		plan__add_time(a, "t0", cJSON_IsNumber(ws) ? (int64_t)llround(ws->valuedouble) : in->t);
		plan__add_time(a, "t1", in->t + 120 * 1000000000LL);
		out->tool = "extract_keysteps";
		out->args = a;
		return a ? 0 : ENG_ENOMEM;
	}
	chain = in->result(in, "build_chain");
	if (!chain) {
		const cJSON *kk = cJSON_GetObjectItemCaseSensitive(why, "k");
		cJSON *a = cJSON_CreateObject();

		plan__add_time(a, "t", in->t);
		cJSON_AddNumberToObject(a, "k", cJSON_IsNumber(kk) ? kk->valuedouble : 4);
		cJSON_AddBoolToObject(a, "keep_goal_order", 1);
		out->tool = "build_chain";
		out->args = a;
		return a ? 0 : ENG_ENOMEM;
	}
	snprintf(out->target, sizeof(out->target), "%s", goal ? goal : "chain");
	out->actions = cJSON_CreateArray();
	if (!out->actions)
		return ENG_ENOMEM;
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(chain, "actions")) {
		const cJSON *ix = cJSON_IsNumber(it) ? it : cJSON_GetObjectItemCaseSensitive(it, "index");

		if (cJSON_IsNumber(ix))
			cJSON_AddItemToArray(out->actions, cJSON_CreateNumber(ix->valuedouble));
	}
	/* the engine adds the candidate set and the answer format */
	buf_init(&q, 1 << 16);
	rc = buf_addf(&q, "Which %d actions should the person take next to finish \"%s\"?",
		      cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(why, "k"))
			      ? cJSON_GetObjectItemCaseSensitive(why, "k")->valueint : 4,
		      goal ? goal : "the task");
	if (!rc) {
		out->question = buf_detach(&q);
		rc = out->question ? 0 : ENG_ENOMEM;
	}
	buf_release(&q);
	return rc;
}
