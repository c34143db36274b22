/* SPDX-License-Identifier: MIT */
/*
 * The generation run: one queue of agent sessions over every stream
 * (recording x group), served by worker threads; results committed in
 * index order per stream (see generate.h for the guarantees).
 */
#include "generate.h"

#include <omp.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "clips.h"
#include "err.h"
#include "fiber.h"
#include "hash.h"
#include "jsonfile.h"
#include "recording.h"
#include "rng.h"
#include "keybal.h"
#include "truth.h"
#include "warm.h"
#include "registry.h"
#include "store.h"

#define ACTIVE_MAX 4 /* recordings loaded at once */

enum rec_state { REC_PENDING = 0, REC_LOADING, REC_ACTIVE, REC_DONE };

/* The sessions of one group of one recording. */
struct stream {
	bool on;                    /* the group is selected */
	int limit;                  /* candidate indices 0..limit-1 may be tried */
	int next;                   /* next index to hand out */
	int inflight;               /* handed out, not yet back */
	int waiting_qa;             /* back with a QA, waiting for an earlier index */
	int consumed;               /* results used or discarded, in index order */
	int produced;               /* QAs used */
	bool closed;                /* quota met or candidates used up */
	struct agent_result *slot;  /* by index: results back early */
	bool *ready;
	char (*seen)[HASH_HEX_LEN + 1]; /* QA ids used: two candidates on one (T, target) are one QA */
	int nseen;
	struct keybal bal;          /* key balance over the used QAs' keys */
	struct agent_result *deferred; /* QAs over the key balance, in index order: used
					  once the stream has grown, dropped at its end */
	int ndeferred, capdeferred;
};

struct grec {
	const char *path;
	char *id;                   /* the recording's id, once loaded (owned) */
	struct recording *rec;      /* while loading or active */
	struct tool_shared *shared; /* what the workers' tool contexts on it share */
	enum rec_state state;
	int users;                  /* workers holding a tool context on it */
	bool ok;                    /* loaded and run */
	struct stream s[SUBTASK_NGROUPS];
};

struct held {
	size_t rec;
	int group;
	struct agent_result r;
};

struct run {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct store *st;
	const struct gen_params *p;
	int64_t run_id;
	struct gen_totals *t;
	struct grec *recs;
	size_t nrecs, next_pending;
	int loading, active;
	int err;                    /* the first store or internal error */
	char errmsg[512];
	struct held *held;          /* regenerate: results written at the end */
	size_t nheld, capheld;
	/*
	 * The open batch of written results (group commit): committed when it
	 * holds GROUP_COMMIT_RESULTS, is GROUP_COMMIT_S old, or the run ends;
	 * its figures join the totals when it commits.
	 */
	bool group_commit;          /* no brain writes the store (no response cache) */
	bool tx_open;
	int tx_results;
	double tx_t0;
	struct gen_totals tx_d;
	size_t tx_rec;              /* the last stream written, for the progress hook */
	int tx_group;
	/*
	 * With group commit, results are written off the lock: consume()
	 * queues them in the order it uses them, and one worker at a time
	 * (`writing`) takes the queue, writes it with the lock released,
	 * and commits; the other keeps running sessions meanwhile. The open
	 * batch (tx_open, tx_results, tx_t0) belongs to that writer.
	 */
	struct held *wq;
	size_t nwq, capwq;
	bool writing;
	/*
	 * The checkpointer (with group commit): a thread on its own connection
	 * copies the WAL into the database when a commit leaves it past
	 * GEN_CHECKPOINT_PAGES, so that no commit under the lock does it.
	 */
	struct store *ck;
	pthread_t ck_th;
	pthread_cond_t ck_cond;
	bool ck_want, ck_stop;
	/*
	 * A remote brain's response cache (see cache_writer): the workers read
	 * it on one connection (cache_st) and queue what they write (cq), which
	 * a thread of its own writes in batches on another (cache_wst); the
	 * batch being written (cw) stays readable until it is committed. All
	 * of it under cache_lock.
	 */
	struct store *cache_st, *cache_wst;
	pthread_mutex_t cache_lock;
	pthread_cond_t cache_cond, cache_room;
	pthread_t cache_th;
	bool cache_th_on, cache_stop;
	struct cache_entry *cq, *cw;
	size_t ncq, capcq, ncw;
	int cache_err;
	char cache_errmsg[480];
};

struct worker {
	struct run *run;
	pthread_t th;
	struct brain *brain;
	struct llm_cache_ops cache;
	struct tool_ctx **ctx;      /* per recording, created on first use */
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void fail(struct run *r, int rc, const char *what)
{
	if (r->err)
		return;
	r->err = rc;
	snprintf(r->errmsg, sizeof(r->errmsg), "%s: %s", what,
		 err_msg()[0] ? err_msg() : eng_strerror(rc));
}

/* ======================= Sharding ======================= */

int gen_shard_of(const char *id, int n, int *shard)
{
	char hex[HASH_HEX_LEN + 1], head[17];
	int rc;

	if (!id || n < 1)
		return ENG_EINVAL;
	rc = hash_hex(id, strlen(id), hex);
	if (rc)
		return rc;
	memcpy(head, hex, 16);
	head[16] = '\0';
	*shard = (int)(strtoull(head, NULL, 16) % (unsigned long long)n);
	return 0;
}

/*
 * The id of the recording at path without loading it when it is native
 * (its recording.json), else by loading it (*loaded then holds it).
 */
static int recording_id(const char *path, char *id, size_t size, struct recording **loaded)
{
	cJSON *doc = NULL;
	const char *v = NULL;
	char file[4096];
	int rc = 0;

	*loaded = NULL;
	if (recording_detect(path) == REC_LAYOUT_NATIVE &&
	    (size_t)snprintf(file, sizeof(file), "%s/recording.json", path) < sizeof(file) &&
	    !jsonfile_read(file, &doc))
		v = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(doc, "id"));
	err_clear();
	if (!v || !*v) {
		rc = recording_load(path, REC_LAYOUT_AUTO, loaded);
		v = rc ? NULL : (*loaded)->id;
	}
	if (v)
		snprintf(id, size, "%s", v);
	cJSON_Delete(doc);
	return rc;
}

/* ======================= Streams ======================= */


static void stream_release(struct stream *s)
{
	int i;

	for (i = 0; s->ready && i < s->limit; i++)
		if (s->ready[i])
			agent_result_release(&s->slot[i]);
	free(s->slot);
	free(s->ready);
	free(s->seen);
	keybal_release(&s->bal);
	for (i = 0; i < s->ndeferred; i++)
		agent_result_release(&s->deferred[i]);
	free(s->deferred);
	memset(s, 0, sizeof(*s));
}

static void count_drop(struct gen_totals *t, const char *code)
{
	int i;

	for (i = 0; i < t->ndrop_codes; i++)
		if (!strcmp(t->drop_codes[i], code)) {
			t->drop_counts[i]++;
			return;
		}
	if (t->ndrop_codes < GEN_MAX_DROP_CODES) {
		snprintf(t->drop_codes[t->ndrop_codes], sizeof(t->drop_codes[0]), "%s", code);
		t->drop_counts[t->ndrop_codes++] = 1;
	}
}

/* Adds the figures of d (one committed batch) to t. */
static void totals_add(struct gen_totals *t, const struct gen_totals *d)
{
	int i, g;

	t->sessions += d->sessions;
	t->qa_new += d->qa_new;
	t->qa_kept += d->qa_kept;
	t->qa_replaced += d->qa_replaced;
	t->drops += d->drops;
	t->failed += d->failed;
	if (!t->first_failure[0] && d->first_failure[0])
		memcpy(t->first_failure, d->first_failure, sizeof(t->first_failure));
	t->t_brain += d->t_brain;
	t->t_tools += d->t_tools;
	t->t_truth += d->t_truth;
	t->t_store += d->t_store;
	t->prompt_tokens += d->prompt_tokens;
	t->completion_tokens += d->completion_tokens;
	for (g = 0; g < SUBTASK_NGROUPS; g++)
		t->by_group[g] += d->by_group[g];
	for (i = 0; i < d->ndrop_codes; i++) {
		long k;

		for (k = 0; k < d->drop_counts[i]; k++)
			count_drop(t, d->drop_codes[i]);
	}
}

/* Writes one used result (or, regenerating, keeps it for the end). */
static int write_result(struct run *r, size_t ri, int group, const struct agent_result *res,
			struct gen_totals *d, bool hook)
{
	const char *rec_id = r->recs[ri].id;
	enum subtask st;
	enum metric m;
	int rc, ins = 0;

	subtask_group(group, &st, &m);
	if (res->status == AGENT_QA) {
		struct store_qa q = { 0 };

		q.id = res->qa.id;
		q.run_id = r->run_id;
		q.recording_id = rec_id;
		q.category = res->qa.category;
		q.subtask = res->qa.subtask;
		q.metric = res->qa.metric;
		q.t_ns = res->qa.t_ns;
		q.clip_start_ns = res->qa.clip_start_ns;
		q.clip_end_ns = res->qa.clip_end_ns;
		q.frames_json = res->qa.frames_json;
		q.target = res->qa.target;
		q.question = res->qa.question;
		q.options_json = res->qa.options_json;
		q.answer_index = res->qa.answer_index;
		q.answer_json = res->qa.answer_json;
		q.gt_json = res->qa.gt_json;
		q.qc_json = res->qa.qc_json;
		q.trace_json = res->trace_json;
		rc = store_qa_put(r->st, &q, &ins);
		if (rc)
			return rc;
		if (ins == STORE_PUT_NEW)
			d->qa_new++;
		else if (ins == STORE_PUT_REPLACED)
			d->qa_replaced++;
		else
			d->qa_kept++;
		d->by_group[group]++;
		return 0;
	} else {
		const struct subtask_info *si = subtask_info(st);
		struct store_drop x = { 0 };
		bool added = false;

		x.run_id = r->run_id;
		x.recording_id = rec_id;
		x.category = si->category;
		x.subtask = si->short_name;
		x.metric = metric_name(m);
		x.reason = res->reason_code[0] ? res->reason_code : "unknown";
		x.t_ns = res->drop_t_ns;
		x.target = res->drop_target[0] ? res->drop_target : NULL;
		x.detail = res->reason[0] ? res->reason : NULL;
		if (hook && r->p->hooks.drop)
			r->p->hooks.drop(r->p->hooks.ctx, rec_id, group, res);
		rc = store_drop_add(r->st, &x, &added);
		if (rc)
			return rc;
		/* the run counts what it stored: a candidate dropped twice is one row */
		if (res->status == AGENT_FAILED) {
			d->failed++;
			if (!d->first_failure[0])
				snprintf(d->first_failure, sizeof(d->first_failure), "%s",
					 x.detail ? x.detail : x.reason);
		} else if (added) {
			d->drops++;
			count_drop(d, x.reason);
		}
		return 0;
	}
}

/* Appends (ri, group, res) to a list of results; takes over res. */
static int held_push(struct held **v, size_t *n, size_t *cap, size_t ri, int group,
		     struct agent_result *res)
{
	if (*n == *cap) {
		size_t c = *cap ? 2 * *cap : 64;
		struct held *m = realloc(*v, c * sizeof(*m));

		if (!m)
			return ENG_ENOMEM;
		*v = m;
		*cap = c;
	}
	(*v)[*n].rec = ri;
	(*v)[*n].group = group;
	(*v)[(*n)++].r = *res;
	memset(res, 0, sizeof(*res));
	return 0;
}

/* Regenerating: keeps a used result for the end. */
static int hold(struct run *r, size_t ri, int group, struct agent_result *res)
{
	return held_push(&r->held, &r->nheld, &r->capheld, ri, group, res);
}

/*
 * The letter of the key of the k-th QA a stream uses: blocks of n QAs
 * take the n letters in a seeded random order, so each group of each
 * recording spreads its keys evenly over the letters, at any --jobs.
 */
static int balanced_letter(const char *rec_id, int group, uint64_t seed, int k, int n)
{
	int perm[16], i, block = k / n;
	uint64_t h = rng_mix64(seed ^ 0x6c657474657273ULL) ^ (uint64_t)group * 0x9e3779b97f4a7c15ULL;
	const char *c;

	if (n < 2 || n > 16)
		return -1;
	for (c = rec_id; *c; c++)
		h = rng_mix64(h ^ (unsigned char)*c);
	h = rng_mix64(h ^ (uint64_t)block);
	for (i = 0; i < n; i++)
		perm[i] = i;
	for (i = n - 1; i > 0; i--) {
		int j = (int)rng_below(&h, (uint64_t)i + 1), t = perm[i];

		perm[i] = perm[j];
		perm[j] = t;
	}
	return perm[k % n];
}

/* Key balance (keybal.h) of the stream: whether the QA fits; counted when it does. */
static int key_balance(struct stream *s, const struct agent_result *res, bool *ok)
{
	struct answer a;
	cJSON *j;
	int rc;

	*ok = true;
	if (!res->qa.answer_json)
		return 0;
	j = cJSON_Parse(res->qa.answer_json);
	if (!j)
		return ENG_ENOMEM;
	rc = ans_from_json(j, &a);
	cJSON_Delete(j);
	if (rc) {
		s->bal.used++;
		return 0; /* not a kind with fields to count */
	}
	return keybal_fits(&s->bal, &a, true, ok);
}

/* Turns a QA the stream cannot use into a drop with its reason. */
static void make_drop(struct agent_result *res, const char *code, const char *why)
{
	res->drop_t_ns = res->qa.t_ns;
	snprintf(res->drop_target, sizeof(res->drop_target), "%s",
		 res->qa.target ? res->qa.target : "");
	truth_release(&res->qa);
	memset(&res->qa, 0, sizeof(res->qa));
	res->status = AGENT_DROP;
	snprintf(res->reason_code, sizeof(res->reason_code), "%s", code);
	snprintf(res->reason, sizeof(res->reason), "%s", why);
}

enum take { TAKE_USE, TAKE_SKIP, TAKE_DEFER };

/*
 * What the stream does with this result: uses it, skips it (a second
 * candidate on one QA id) or defers it (a QA over the key balance). A
 * used QA counts towards the quota, which closes the stream.
 */
static int take(struct stream *s, struct agent_result *res, const struct gen_params *p,
		enum take *what)
{
	bool ok;
	int q, rc;

	*what = TAKE_USE;
	if (res->status != AGENT_QA)
		return 0;
	for (q = 0; q < s->nseen; q++)
		if (!strcmp(s->seen[q], res->qa.id)) {
			*what = TAKE_SKIP;
			return 0;
		}
	snprintf(s->seen[s->nseen++], sizeof(s->seen[0]), "%s", res->qa.id);
	rc = key_balance(s, res, &ok);
	if (rc)
		return rc;
	if (!ok) {
		*what = TAKE_DEFER;
		return 0;
	}
	if (++s->produced >= p->per_task)
		s->closed = true;
	return 0;
}

static int defer(struct stream *s, struct agent_result *res)
{
	if (s->ndeferred == s->capdeferred) {
		int cap = s->capdeferred ? 2 * s->capdeferred : 16;
		struct agent_result *n = realloc(s->deferred, (size_t)cap * sizeof(*n));

		if (!n)
			return ENG_ENOMEM;
		s->deferred = n;
		s->capdeferred = cap;
	}
	s->deferred[s->ndeferred++] = *res;
	memset(res, 0, sizeof(*res));
	return 0;
}

/*
 * Results written per commit, and the longest a batch stays open. A commit
 * is a WAL append and, every thousand pages, a checkpoint; under the run's
 * lock, one per session was a quarter of a local-brain run. A run killed
 * loses at most the open batch, which the same command run again makes.
 */
#define GROUP_COMMIT_RESULTS 64
#define GROUP_COMMIT_S 0.2
#define GEN_CHECKPOINT_PAGES 1000 /* SQLite's own autocheckpoint */

/* One consume() call: the stream and the batch's figures. */
struct batch {
	struct run *r;
	size_t ri;
	int group;
	struct stream *s;
	struct gen_totals d;
};

/* Queues a used result for the writer (group commit); takes over res. */
static int enqueue(struct run *r, size_t ri, int group, struct agent_result *res)
{
	return held_push(&r->wq, &r->nwq, &r->capwq, ri, group, res);
}

/* Uses one result: a QA gets its key letter; written (or held when regenerating). */
static int use_result(struct batch *b, struct agent_result *res)
{
	struct run *r = b->r;
	int rc = 0;

	if (res->status == AGENT_QA && res->qa.answer_index >= 0) {
		int n = r->p->agent.truth.qc.n_options;

		rc = truth_place_key(&res->qa, balanced_letter(r->recs[b->ri].id, b->group,
							       r->p->seed, b->s->produced - 1, n));
		if (rc)
			return rc;
	}
	if (r->p->regenerate) {
		/* counted like a write; written at the end */
		if (res->status == AGENT_QA)
			b->d.by_group[b->group]++;
		else if (res->status == AGENT_FAILED)
			b->d.failed++;
		else
			b->d.drops++;
		if (res->status != AGENT_QA) {
			count_drop(&b->d, res->reason_code[0] ? res->reason_code : "unknown");
			if (r->p->hooks.drop)
				r->p->hooks.drop(r->p->hooks.ctx, r->recs[b->ri].id, b->group, res);
		}
		return hold(r, b->ri, b->group, res);
	}
	if (r->group_commit)
		return enqueue(r, b->ri, b->group, res);
	if (!r->tx_open) {
		rc = store_begin(r->st);
		if (rc)
			return rc;
		r->tx_open = true;
		r->tx_t0 = now_s();
	}
	r->tx_results++;
	return write_result(r, b->ri, b->group, res, &b->d, true);
}

/* Uses the deferred QAs that fit now, in order, as long as the stream is open. */
static int use_deferred(struct batch *b)
{
	struct stream *s = b->s;
	int i = 0, rc;

	while (!s->closed && i < s->ndeferred) {
		struct agent_result res;
		bool ok;

		rc = key_balance(s, &s->deferred[i], &ok);
		if (rc)
			return rc;
		if (!ok) {
			i++;
			continue;
		}
		res = s->deferred[i];
		memmove(&s->deferred[i], &s->deferred[i + 1],
			(size_t)(s->ndeferred - i - 1) * sizeof(res));
		s->ndeferred--;
		if (++s->produced >= b->r->p->per_task)
			s->closed = true;
		rc = use_result(b, &res);
		agent_result_release(&res);
		if (rc)
			return rc;
		i = 0; /* the stream grew: the earlier ones may fit now */
	}
	return 0;
}

/* At the stream's end, the QAs still over the key balance are drops. */
static int drop_deferred(struct batch *b)
{
	struct stream *s = b->s;
	int rc = 0;

	while (!rc && s->ndeferred) {
		struct agent_result res = s->deferred[0];

		memmove(&s->deferred[0], &s->deferred[1], (size_t)(s->ndeferred - 1) * sizeof(res));
		s->ndeferred--;
		make_drop(&res, "key_balance", "a key field value would hold more than the "
			  "--key-cap share of the group's QAs of the recording");
		rc = use_result(b, &res);
		agent_result_release(&res);
	}
	return rc;
}

/* One result back in index order. */
static int consume_one(struct batch *b, struct agent_result *res)
{
	struct stream *s = b->s;
	enum take what;
	int rc;

	b->d.sessions++;
	b->d.t_brain += res->t_brain_s;
	b->d.t_tools += res->t_tools_s;
	b->d.t_truth += res->t_truth_s;
	b->d.prompt_tokens += res->prompt_tokens;
	b->d.completion_tokens += res->completion_tokens;
	rc = take(s, res, b->r->p, &what);
	if (!rc && what == TAKE_DEFER)
		rc = defer(s, res);
	if (!rc && what == TAKE_USE) {
		rc = use_result(b, res);
		if (!rc && res->status == AGENT_QA)
			rc = use_deferred(b);
	}
	return rc;
}

/*
 * Commits the open batch: the store's part, which the lock need not
 * cover (only the writer, or the last thread at the run's end, holds the
 * batch). *ck: whether the WAL asks for a checkpoint.
 */
static int tx_commit(struct run *r, bool *ck)
{
	int rc = 0;

	*ck = false;
	if (r->tx_open) {
		rc = store_commit(r->st);
		r->tx_open = false;
		r->tx_results = 0;
		*ck = !rc && r->ck && store_wal_pages(r->st) >= GEN_CHECKPOINT_PAGES;
	}
	return rc;
}

/*
 * What a commit changes under the lock: the checkpoint request, the
 * batch's figures added to the totals (a failed commit fails the run).
 */
static void tx_committed(struct run *r, int rc, bool ck, double dt)
{
	if (ck) {
		r->ck_want = true;
		pthread_cond_signal(&r->ck_cond);
	}
	r->tx_d.t_store += dt;
	if (rc) {
		memset(&r->tx_d, 0, sizeof(r->tx_d));
		fail(r, rc, "store");
		return;
	}
	totals_add(r->t, &r->tx_d);
	if (r->tx_d.sessions && r->p->hooks.progress)
		r->p->hooks.progress(r->p->hooks.ctx, r->recs[r->tx_rec].id, r->tx_group, r->t);
	memset(&r->tx_d, 0, sizeof(r->tx_d));
}

/* Commits the open batch and adds its figures to the totals. Called with the lock held. */
static void batch_commit(struct run *r)
{
	double t0 = now_s();
	bool ck;
	int rc = tx_commit(r, &ck);

	tx_committed(r, rc, ck, now_s() - t0);
}

/*
 * The writer (group commit). Called with the lock held by a worker whose
 * consume() queued results: unless another worker is writing, takes the
 * queue, writes it in order with the lock released, commits when the
 * batch is full or old, and goes on until the queue stays empty. The
 * drop hook runs after, under the lock, as the hooks promise.
 */
static void write_queue(struct run *r)
{
	if (r->writing)
		return;
	r->writing = true;
	while (r->nwq) {
		struct held *q = r->wq;
		size_t n = r->nwq, i;
		struct gen_totals d;
		double t0, t1, t2;
		bool ck = false, commit;
		int rc = 0, crc = 0;

		r->wq = NULL;
		r->nwq = r->capwq = 0;
		memset(&d, 0, sizeof(d));
		pthread_mutex_unlock(&r->lock);
		t0 = now_s();
		for (i = 0; i < n && !rc; i++) {
			if (!r->tx_open) {
				rc = store_begin(r->st);
				if (rc)
					break;
				r->tx_open = true;
				r->tx_t0 = now_s();
			}
			r->tx_results++;
			rc = write_result(r, q[i].rec, q[i].group, &q[i].r, &d, false);
		}
		if (rc && r->tx_open) {
			/* the whole batch is gone, and its figures with it */
			store_rollback(r->st);
			r->tx_open = false;
			r->tx_results = 0;
		}
		t1 = now_s();
		commit = !rc && r->tx_open &&
			 (r->tx_results >= GROUP_COMMIT_RESULTS || t1 - r->tx_t0 >= GROUP_COMMIT_S);
		if (commit)
			crc = tx_commit(r, &ck);
		t2 = now_s();
		pthread_mutex_lock(&r->lock);
		for (i = 0; i < n; i++) {
			if (!rc && q[i].r.status != AGENT_QA && r->p->hooks.drop)
				r->p->hooks.drop(r->p->hooks.ctx, r->recs[q[i].rec].id, q[i].group,
						 &q[i].r);
			agent_result_release(&q[i].r);
		}
		free(q);
		if (rc) {
			memset(&r->tx_d, 0, sizeof(r->tx_d));
			fail(r, rc, "store");
			break;
		}
		d.t_store = t1 - t0;
		totals_add(&r->tx_d, &d);
		if (commit)
			tx_committed(r, crc, ck, t2 - t1);
	}
	r->writing = false;
	pthread_cond_broadcast(&r->cond);
}

/*
 * Uses the results of stream (ri, group) that are back in index order:
 * writes them in one batch (or holds them when regenerating) and counts
 * them when the batch commits. Called with the lock held.
 */
static void consume(struct run *r, size_t ri, int group)
{
	struct batch b;
	struct stream *s = &r->recs[ri].s[group];
	double t0 = now_s();
	int rc = 0;

	memset(&b, 0, sizeof(b));
	b.r = r;
	b.ri = ri;
	b.group = group;
	b.s = s;
	while (!rc && s->consumed < s->limit && s->ready[s->consumed]) {
		struct agent_result *res = &s->slot[s->consumed];

		s->ready[s->consumed] = false;
		if (res->status == AGENT_QA)
			s->waiting_qa--;
		ENG_ASSERT(s->waiting_qa >= 0);
		s->consumed++;
		if (s->closed) {
			r->t->discarded++;
		} else {
			rc = consume_one(&b, res);
		}
		agent_result_release(res);
		if (s->consumed >= s->limit)
			s->closed = true;
		if (!rc && s->closed)
			rc = drop_deferred(&b);
	}
	b.d.t_store = now_s() - t0;
	totals_add(&r->tx_d, &b.d);
	r->tx_rec = ri;
	r->tx_group = group;
	if (rc) {
		/* the whole batch is gone, and its figures with it (the writer's, its own) */
		if (!r->group_commit && r->tx_open)
			store_rollback(r->st);
		if (!r->group_commit) {
			r->tx_open = false;
			r->tx_results = 0;
		}
		memset(&r->tx_d, 0, sizeof(r->tx_d));
		fail(r, rc, "store");
		return;
	}
	if (r->group_commit)
		write_queue(r);
	else
		batch_commit(r);
}

/* ======================= Recordings ======================= */

static bool rec_finished(const struct grec *g)
{
	int i;

	for (i = 0; i < SUBTASK_NGROUPS; i++)
		if (g->s[i].on && (!g->s[i].closed || g->s[i].inflight))
			return false;
	return true;
}

/* Marks an active recording done once its streams are; frees it when nobody holds it. */
static void rec_check_done(struct run *r, size_t ri)
{
	struct grec *g = &r->recs[ri];
	int i;

	if (g->state != REC_ACTIVE || !rec_finished(g))
		return;
	g->state = REC_DONE;
	g->ok = true;
	r->active--;
	r->t->recordings++;
	for (i = 0; i < SUBTASK_NGROUPS; i++)
		stream_release(&g->s[i]);
	pthread_cond_broadcast(&r->cond);
}

static int stream_init(struct stream *s, int limit, double key_cap, unsigned fields)
{
	keybal_init(&s->bal, key_cap, fields);
	s->on = true;
	s->limit = limit;
	s->closed = limit == 0;
	s->slot = calloc((size_t)limit + 1, sizeof(*s->slot));
	s->ready = calloc((size_t)limit + 1, sizeof(*s->ready));
	s->seen = calloc((size_t)limit + 1, sizeof(*s->seen));
	return s->slot && s->ready && s->seen ? 0 : ENG_ENOMEM;
}

/* The number of candidate clips of a group, with the seed the sessions use. */
static int candidate_total(struct tool_ctx *ctx, int group, const struct gen_params *p)
{
	struct clips_args a;
	struct clips_result res;

	memset(&a, 0, sizeof(a));
	subtask_group(group, &a.subtask, &a.metric);
	a.count = 1;
	a.seed = p->seed & 0xffffffffu;
	a.target = -1;
	a.t0 = INT64_MIN;
	a.t1 = INT64_MAX;
	a.window_s = p->agent.truth.window_s;
	if (clips_sample(ctx, &a, &res))
		return 0;
	return res.total > 1000000000 ? 1000000000 : (int)res.total;
}

/* 0 for navigation, 1 for head turns, 2 for the cheaper lists. */
static int group_rank(int group)
{
	enum subtask st;
	enum metric m;

	subtask_group(group, &st, &m);
	return st == SUBTASK_NAVIGATE ? 0 : st == SUBTASK_HEAD_TURN ? 1 : 2;
}

/*
 * The candidate count and the key fields of every selected group, the
 * groups in parallel (up to --jobs threads, each on its own tool context
 * attached to the recording's shared store, so that the lists and priors
 * they build are the workers' too). Returns 0 or the first error, with
 * err_msg() set on this thread.
 */
static int size_groups(const struct recording *rec, struct tool_ctx *ctx,
		       struct tool_shared *shared, const struct gen_params *p, int *limits,
		       unsigned *fields)
{
	int sel[SUBTASK_NGROUPS], ns = 0, k, rank, rc = 0, nt = p->jobs < 1 ? 1 : p->jobs;
	int first = -1;
	char msg[512] = "";

	/*
	 * The costliest lists first (a path plan per navigation candidate, a
	 * second of views per head turn), so that the threads finish together;
	 * which thread builds a list changes nothing in it. Before them, one
	 * gaze-target list: the first of the two to run detects the
	 * recording's fixations, which the other waits for, so that detection
	 * runs beside the navigation lists instead of holding a thread idle
	 * when the two gaze lists start together.
	 */
	for (k = 0; k < SUBTASK_NGROUPS && first < 0; k++) {
		enum subtask st;
		enum metric m;

		subtask_group(k, &st, &m);
		if (p->groups[k] && st == SUBTASK_GAZE_TARGET)
			sel[ns++] = first = k;
	}
	for (rank = 0; rank < 3; rank++)
		for (k = 0; k < SUBTASK_NGROUPS; k++)
			if (p->groups[k] && group_rank(k) == rank && k != first)
				sel[ns++] = k;
	if (nt > ns)
		nt = ns;
#pragma omp parallel num_threads(nt) if (nt > 1)
	{
		struct tool_ctx *c = ctx;
		int cr = 0;

		/*
		 * The calling thread keeps its own context (its caches stay with
		 * the worker); another thread makes one for all its groups.
		 */
		if (omp_get_thread_num() != 0) {
			cr = tool_ctx_new(rec, &c);
			if (!cr)
				tool_ctx_share(c, shared);
		}
#pragma omp for schedule(dynamic, 1)
		for (k = 0; k < ns; k++) {
			int i = sel[k], r = cr;

			if (!r) {
				limits[i] = candidate_total(c, i, p);
				if (limits[i] > p->max_sessions)
					limits[i] = p->max_sessions;
				/* the key fields to balance, from the group's candidates */
				if (limits[i] && p->agent.truth.key_cap < 1) {
					enum subtask st;
					enum metric m;

					subtask_group(i, &st, &m);
					r = truth_key_fields(c, st, m, &p->agent.truth, &fields[i]);
				}
			}
			if (r) {
#pragma omp critical(size_groups_err)
				if (!rc) {
					rc = r;
					snprintf(msg, sizeof(msg), "%s", err_msg());
				}
			}
		}
		if (c != ctx)
			tool_ctx_free(c);
	}
	if (rc)
		err_set(rc, "%s", msg);
	return rc;
}

/*
 * The candidates a navigation list gathers: LIST_PER_SESSION per session
 * a group may run, so that the stratified order (the sessions take its
 * first positions) picks from several times what it uses, within
 * [LIST_MIN, LIST_MAX]. Enumerating more costs a path plan per candidate
 * that no session reads.
 */
#define LIST_PER_SESSION 4
#define LIST_MIN 256
#define LIST_MAX 2048

static size_t list_size(const struct gen_params *p)
{
	double n = (double)LIST_PER_SESSION * (p->max_sessions > 0 ? p->max_sessions : 0);

	return n < LIST_MIN ? LIST_MIN : n > LIST_MAX ? LIST_MAX : (size_t)n;
}

/*
 * Loads recording ri (outside the lock), decides its shard, stores its
 * row and sizes its streams with the worker's tool context. Called with
 * the lock held; returns with it held.
 */
static void activate(struct worker *w, size_t ri)
{
	struct run *r = w->run;
	const struct gen_params *p = r->p;
	struct grec *g = &r->recs[ri];
	struct recording *rec = NULL;
	struct tool_ctx *ctx = NULL;
	struct tool_shared *shared = NULL;
	int limits[SUBTASK_NGROUPS] = { 0 }, rc = 0, i, mine = 1;
	unsigned fields[SUBTASK_NGROUPS] = { 0 };
	char why[512] = "", id[512] = "";

	pthread_mutex_unlock(&r->lock);
	if (p->shard_n) {
		int shard = 0;

		rc = recording_id(g->path, id, sizeof(id), &rec);
		if (!rc)
			rc = gen_shard_of(id, p->shard_n, &shard);
		mine = !rc && shard == p->shard_i;
	}
	if (!rc && mine && !rec)
		rc = recording_load(g->path, REC_LAYOUT_AUTO, &rec);
	if (!rc && mine)
		rc = tool_shared_new(&shared);
	if (!rc && mine)
		tool_shared_set_list_size(shared, list_size(p));
	if (!rc && mine)
		rc = tool_ctx_new(rec, &ctx);
	if (!rc && mine)
		tool_ctx_share(ctx, shared);
	if (!rc && mine)
		rc = size_groups(rec, ctx, shared, p, limits, fields);
	if (rc)
		snprintf(why, sizeof(why), "%s", err_msg()[0] ? err_msg() : eng_strerror(rc));
	pthread_mutex_lock(&r->lock);
	r->loading--;
	if (rc || !mine) {
		if (rc) {
			r->t->recordings_failed++;
			if (p->hooks.rec_error)
				p->hooks.rec_error(p->hooks.ctx, g->path, why);
		} else {
			r->t->other_shards++;
		}
		tool_ctx_free(ctx);
		tool_shared_free(shared);
		recording_free(rec);
		g->state = REC_DONE;
		pthread_cond_broadcast(&r->cond);
		return;
	}
	{
		/* an absolute root, so the review page finds the video from anywhere */
		char *abs = realpath(rec->root, NULL);
		struct store_recording sr = { rec->id, rec->layout, abs ? abs : rec->root,
					      recording_t0(rec), recording_t1(rec), NULL };

		rc = store_recording_put(r->st, &sr);
		free(abs);
	}
	for (i = 0; !rc && i < SUBTASK_NGROUPS; i++)
		if (p->groups[i]) {
			rc = stream_init(&g->s[i], limits[i], r->p->agent.truth.key_cap, fields[i]);
			if (!rc && !limits[i] && p->hooks.no_candidates) {
				enum subtask st;
				enum metric m;

				subtask_group(i, &st, &m);
				clips_explain(ctx, st, m, p->agent.truth.window_s, why, sizeof(why));
				p->hooks.no_candidates(p->hooks.ctx, rec->id, i, why);
			}
		}
	if (rc) {
		fail(r, rc, "store");
		tool_ctx_free(ctx);
		tool_shared_free(shared);
		recording_free(rec);
		g->state = REC_DONE;
		pthread_cond_broadcast(&r->cond);
		return;
	}
	g->id = strdup(rec->id);
	if (!g->id) {
		fail(r, ENG_ENOMEM, "generate");
		tool_ctx_free(ctx);
		tool_shared_free(shared);
		recording_free(rec);
		g->state = REC_DONE;
		pthread_cond_broadcast(&r->cond);
		return;
	}
	g->rec = rec;
	g->shared = shared;
	g->state = REC_ACTIVE;
	g->users = 1;
	w->ctx[ri] = ctx;
	r->active++;
	rec_check_done(r, ri);
	pthread_cond_broadcast(&r->cond);
}

/* ======================= The queue ======================= */

struct task {
	size_t rec;
	int group, index;
};

/* The next session to run, or false. Called with the lock held. */
static bool pick(struct run *r, struct task *out)
{
	size_t ri;
	int g;

	for (ri = 0; ri < r->nrecs; ri++) {
		struct grec *gr = &r->recs[ri];

		if (gr->state != REC_ACTIVE)
			continue;
		for (g = 0; g < SUBTASK_NGROUPS; g++) {
			struct stream *s = &gr->s[g];

			if (!s->on || s->closed || s->next >= s->limit)
				continue;
			/* not more in flight than the quota can still use */
			if (s->produced + s->waiting_qa + s->inflight >= r->p->per_task)
				continue;
			out->rec = ri;
			out->group = g;
			out->index = s->next++;
			s->inflight++;
			return true;
		}
	}
	return false;
}

/* Frees the worker's contexts on recordings that are done (lock held). */
static void drop_done_contexts(struct worker *w)
{
	struct run *r = w->run;
	size_t ri;

	for (ri = 0; ri < r->nrecs; ri++) {
		struct grec *g = &r->recs[ri];

		if (!w->ctx[ri] || g->state != REC_DONE)
			continue;
		tool_ctx_free(w->ctx[ri]);
		w->ctx[ri] = NULL;
		if (--g->users == 0) {
			tool_shared_free(g->shared);
			g->shared = NULL;
			recording_free(g->rec);
			g->rec = NULL;
		}
	}
}

static void run_task(struct worker *w, const struct task *tk)
{
	struct run *r = w->run;
	struct grec *g = &r->recs[tk->rec];
	struct stream *s = &g->s[tk->group];
	struct agent_result res;
	struct brain_session bs;
	int rc = 0;

	memset(&res, 0, sizeof(res));
	if (!w->ctx[tk->rec]) {
		g->users++;
		pthread_mutex_unlock(&r->lock);
		rc = tool_ctx_new(g->rec, &w->ctx[tk->rec]);
		if (!rc)
			tool_ctx_share(w->ctx[tk->rec], g->shared);
	} else {
		pthread_mutex_unlock(&r->lock);
	}
	if (!rc) {
		memset(&bs, 0, sizeof(bs));
		bs.recording_id = g->rec->id;
		subtask_group(tk->group, &bs.subtask, &bs.metric);
		bs.index = tk->index;
		bs.seed = r->p->seed;
		bs.rec = g->rec;
		rc = agent_run(w->brain, w->ctx[tk->rec], &bs, &r->p->agent, &res);
		if (rc)
			err_set(rc, "%s", res.error);
	}
	pthread_mutex_lock(&r->lock);
	s->inflight--;
	ENG_ASSERT(s->inflight >= 0 && tk->index < s->limit && !s->ready[tk->index]);
	if (rc) {
		fail(r, rc, "session");
		agent_result_release(&res);
	} else {
		s->slot[tk->index] = res;
		s->ready[tk->index] = true;
		if (res.status == AGENT_QA)
			s->waiting_qa++;
		consume(r, tk->rec, tk->group);
	}
	rec_check_done(r, tk->rec);
	pthread_cond_broadcast(&r->cond);
}

static bool work_left(const struct run *r)
{
	size_t ri;

	if (r->next_pending < r->nrecs || r->loading)
		return true;
	for (ri = 0; ri < r->nrecs; ri++)
		if (r->recs[ri].state == REC_ACTIVE)
			return true;
	return false;
}

/*
 * A worker takes its stack's and heap's first page faults (warm_thread)
 * while the first recording loads on one thread and leaves the other cores
 * idle, rather than in its first session: with a remote brain, 64 workers
 * start their first sessions at once on two cores, and each request waited
 * for the faults of those before it.
 */
static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct run *r = w->run;
	struct task tk;
	bool fiber = fiber_self() != NULL;

	/* a fiber's stack comes warm (fiber.h), and its thread's heap is the others' */
	if (!fiber)
		warm_thread();
	pthread_mutex_lock(&r->lock);
	for (;;) {
		drop_done_contexts(w);
		if (r->err)
			break;
		if (pick(r, &tk)) {
			run_task(w, &tk);
			continue;
		}
		if (r->next_pending < r->nrecs && r->active + r->loading < ACTIVE_MAX) {
			size_t ri = r->next_pending++;

			r->recs[ri].state = REC_LOADING;
			r->loading++;
			activate(w, ri);
			continue;
		}
		if (!work_left(r))
			break;
		if (fiber) {
			/* what it waits for may be another fiber's of this thread */
			pthread_mutex_unlock(&r->lock);
			fiber_yield();
			pthread_mutex_lock(&r->lock);
		} else {
			pthread_cond_wait(&r->cond, &r->lock);
		}
	}
	drop_done_contexts(w);
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->lock);
	return NULL;
}

/* ======================= The run ======================= */

/*
 * A thread carrying workers as fibers: with a brain that waits on a server
 * (brain_waits) and more workers than cores, each core's thread runs its
 * share of the workers (llm_fibers_run). 64 worker threads on two cores
 * each took their own heap's and stack's first page faults and woke on
 * every answer; as fibers they share two warm heaps, and a thread's
 * answers come in through one poll.
 */
struct carrier {
	struct run *run;
	pthread_t th;
	void **workers;
	size_t n;
};

static void worker_fiber(void *arg)
{
	worker_main(arg);
}

static void *carrier_main(void *arg)
{
	struct carrier *c = arg;
	struct run *r = c->run;
	int rc;

	rc = llm_fibers_run(c->n, worker_fiber, c->workers);
	if (rc) {
		pthread_mutex_lock(&r->lock);
		fail(r, rc, "generate");
		pthread_cond_broadcast(&r->cond);
		pthread_mutex_unlock(&r->lock);
	}
	return NULL;
}

/* Carriers for the n workers w[] when they should run as fibers; 0 when not. */
static int carriers_of(const struct brain *b, struct worker *w, int n, struct carrier **out)
{
	int nc = omp_get_num_procs(), i;
	struct carrier *c;
	void **slots;

	*out = NULL;
	if (!brain_waits(b) || nc < 1 || n <= nc)
		return 0;
	c = calloc((size_t)nc, sizeof(*c));
	slots = calloc((size_t)n, sizeof(*slots));
	if (!c || !slots) {
		free(c);
		free(slots);
		return 0;
	}
	/* worker i on carrier i % nc, as threads would take the first sessions */
	for (i = 0; i < nc; i++) {
		c[i].run = w[0].run;
		c[i].workers = slots + (size_t)i * (size_t)(n / nc) + (size_t)(i < n % nc ? i : n % nc);
	}
	for (i = 0; i < n; i++)
		c[i % nc].workers[c[i % nc].n++] = &w[i];
	*out = c;
	return nc;
}

/* ======================= The response cache ======================= */

/*
 * A remote brain reads its response cache before each request and writes
 * each answer to it. Written by the worker that got the answer, each write
 * was a transaction of its own, and the next request waited for it: half
 * a millisecond, one worker at a time (SQLite has one writer), and now and
 * then a checkpoint of tens; with 64 workers whose answers come together,
 * the writes alone spread each wave of requests over tens of milliseconds.
 * So a worker only queues the answer, and the cache writer thread writes
 * what is queued in one transaction, then the next batch, at the lowest
 * priority (SCHED_IDLE, else nice 19): its writes waited for and slowed
 * the workers' next requests when 64 answers came at once. A read looks in
 * the queue and the batch being written first, newest first, as the table
 * would answer once they are committed; a batch leaves the queue only
 * after its commit, so no answer is ever out of sight. A run killed loses
 * the answers not yet committed, which the same command asks again.
 */
/*
 * Answers queued at most: the writer runs when the cores are otherwise idle
 * (SCHED_IDLE), so under a load that leaves it none a worker waits here
 * rather than let the queue grow without bound.
 */
#define CACHE_QUEUE_MAX 1024

struct cache_entry {
	char *key, *req, *resp;
	int status;
	long latency_ms;
};

static void cache_entries_free(struct cache_entry *e, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(e[i].key);
		free(e[i].req);
		free(e[i].resp);
	}
	free(e);
}

/* The newest queued or uncommitted answer for key, or NULL. Under cache_lock. */
static const struct cache_entry *cache_pending(const struct run *r, const char *key)
{
	size_t i;

	for (i = r->ncq; i > 0; i--)
		if (!strcmp(r->cq[i - 1].key, key))
			return &r->cq[i - 1];
	for (i = r->ncw; i > 0; i--)
		if (!strcmp(r->cw[i - 1].key, key))
			return &r->cw[i - 1];
	return NULL;
}

static int cache_get(void *ctx, const char *key, char **resp, int *status)
{
	struct run *r = ctx;
	const struct cache_entry *e;
	int rc;

	pthread_mutex_lock(&r->cache_lock);
	e = cache_pending(r, key);
	if (e) {
		*resp = strdup(e->resp);
		if (status)
			*status = e->status;
		rc = *resp ? 0 : ENG_ENOMEM;
	} else {
		rc = store_cache_get(r->cache_st, key, resp, status);
	}
	pthread_mutex_unlock(&r->cache_lock);
	return rc;
}

static int cache_put(void *ctx, const char *key, const char *req, const char *resp,
		     int status, long latency_ms)
{
	struct run *r = ctx;
	struct cache_entry e = { strdup(key), strdup(req ? req : ""), strdup(resp), status,
				 latency_ms };
	int rc = 0;

	if (!e.key || !e.req || !e.resp) {
		rc = ENG_ENOMEM;
		goto fail;
	}
	pthread_mutex_lock(&r->cache_lock);
	while (r->ncq >= CACHE_QUEUE_MAX && r->cache_th_on)
		pthread_cond_wait(&r->cache_room, &r->cache_lock);
	if (r->ncq == r->capcq) {
		size_t cap = r->capcq ? 2 * r->capcq : 64;
		struct cache_entry *q = realloc(r->cq, cap * sizeof(*q));

		if (!q) {
			rc = ENG_ENOMEM;
			goto out;
		}
		r->cq = q;
		r->capcq = cap;
	}
	r->cq[r->ncq++] = e;
	memset(&e, 0, sizeof(e));
	pthread_cond_signal(&r->cache_cond);
out:
	pthread_mutex_unlock(&r->cache_lock);
fail:
	free(e.key);
	free(e.req);
	free(e.resp);
	return rc;
}

/* Writes one batch in one transaction; 0 or the store's error. */
static int cache_write(struct run *r, const struct cache_entry *e, size_t n)
{
	size_t i;
	int rc = store_begin(r->cache_wst);

	for (i = 0; !rc && i < n; i++)
		rc = store_cache_put(r->cache_wst, e[i].key, e[i].req, e[i].resp, e[i].status,
				     e[i].latency_ms);
	if (!rc)
		return store_commit(r->cache_wst);
	store_rollback(r->cache_wst);
	return rc;
}

/* The cache writer thread: each batch queued, until told to stop and the queue is empty. */
static void *cache_writer(void *arg)
{
	struct run *r = arg;
	struct sched_param sp = { 0 };

	/* background work: the workers' next requests come first */
	if (pthread_setschedparam(pthread_self(), SCHED_IDLE, &sp))
		(void)setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 19);
	pthread_mutex_lock(&r->cache_lock);
	for (;;) {
		int rc;

		while (!r->ncq && !r->cache_stop)
			pthread_cond_wait(&r->cache_cond, &r->cache_lock);
		if (!r->ncq)
			break;
		r->cw = r->cq;
		r->ncw = r->ncq;
		r->cq = NULL;
		r->ncq = r->capcq = 0;
		pthread_cond_broadcast(&r->cache_room);
		pthread_mutex_unlock(&r->cache_lock);
		rc = cache_write(r, r->cw, r->ncw);
		pthread_mutex_lock(&r->cache_lock);
		if (rc && !r->cache_err) {
			r->cache_err = rc;
			snprintf(r->cache_errmsg, sizeof(r->cache_errmsg), "%s",
				 err_msg()[0] ? err_msg() : eng_strerror(rc));
		}
		cache_entries_free(r->cw, r->ncw);
		r->cw = NULL;
		r->ncw = 0;
	}
	pthread_mutex_unlock(&r->cache_lock);
	return NULL;
}

/* Opens the cache's two connections and starts its writer. */
static int cache_start(struct run *r)
{
	int rc = store_open(r->p->db, 0, &r->cache_st);

	rc = rc ? rc : store_open(r->p->db, 0, &r->cache_wst);
	if (rc)
		return rc;
	if (pthread_create(&r->cache_th, NULL, cache_writer, r))
		return err_set(ENG_ENOMEM, "cannot start the cache writer thread");
	r->cache_th_on = true;
	return 0;
}

/*
 * Writes what is still queued, stops the writer and closes the
 * connections; a failed write fails the run (the QAs are not affected).
 */
static void cache_stop(struct run *r)
{
	if (r->cache_th_on) {
		pthread_mutex_lock(&r->cache_lock);
		r->cache_stop = true;
		pthread_cond_signal(&r->cache_cond);
		pthread_mutex_unlock(&r->cache_lock);
		pthread_join(r->cache_th, NULL);
		r->cache_th_on = false;
	}
	cache_entries_free(r->cq, r->ncq);
	r->cq = NULL;
	r->ncq = 0;
	store_close(r->cache_st);
	store_close(r->cache_wst);
	r->cache_st = r->cache_wst = NULL;
	/* the workers are gone: no lock needed */
	if (r->cache_err && !r->err) {
		r->err = r->cache_err;
		snprintf(r->errmsg, sizeof(r->errmsg), "llm cache: %s", r->cache_errmsg);
	}
}

static int workers_start(struct run *r, struct brain *b, struct worker *w, int n)
{
	int i, rc = 0;

	if (r->p->cache) {
		rc = cache_start(r);
		if (rc)
			return rc;
	}
	for (i = 0; !rc && i < n; i++) {
		const struct llm_cache_ops *cache = NULL;

		w[i].run = r;
		w[i].ctx = calloc(r->nrecs + 1, sizeof(*w[i].ctx));
		if (!w[i].ctx)
			return ENG_ENOMEM;
		if (r->cache_st) {
			w[i].cache.get = cache_get;
			w[i].cache.put = cache_put;
			w[i].cache.ctx = r;
			cache = &w[i].cache;
		}
		rc = brain_clone(b, cache, &w[i].brain);
	}
	return rc;
}

/* Regenerating: supersede what each processed recording had, write the new, in one batch. */
static int write_held(struct run *r)
{
	struct gen_totals d;
	double t0 = now_s();
	size_t i, ri;
	int rc;

	memset(&d, 0, sizeof(d));
	rc = store_begin(r->st);
	for (ri = 0; !rc && ri < r->nrecs; ri++) {
		int64_t n = 0;

		if (!r->recs[ri].ok)
			continue;
		rc = store_qa_supersede(r->st, r->p->category, r->recs[ri].id, &n);
		r->t->superseded += n;
	}
	for (i = 0; !rc && i < r->nheld; i++)
		rc = write_result(r, r->held[i].rec, r->held[i].group, &r->held[i].r, &d, true);
	if (!rc)
		rc = store_commit(r->st);
	else
		store_rollback(r->st);
	if (rc) {
		r->t->superseded = 0;
		return rc;
	}
	/* the counts were taken when the results were used; only the store's answers are new */
	r->t->qa_new += d.qa_new;
	r->t->qa_kept += d.qa_kept;
	r->t->qa_replaced += d.qa_replaced;
	r->t->t_store += now_s() - t0;
	return 0;
}

/* The checkpointer thread: a passive checkpoint each time a commit asks for one. */
static void *checkpointer(void *arg)
{
	struct run *r = arg;

	pthread_mutex_lock(&r->lock);
	for (;;) {
		while (!r->ck_want && !r->ck_stop)
			pthread_cond_wait(&r->ck_cond, &r->lock);
		if (r->ck_stop)
			break;
		r->ck_want = false;
		pthread_mutex_unlock(&r->lock);
		/* a failed one loses nothing: the pages stay in the WAL for the next */
		(void)store_checkpoint(r->ck);
		pthread_mutex_lock(&r->lock);
	}
	pthread_mutex_unlock(&r->lock);
	return NULL;
}

/*
 * Starts the checkpointer when the run commits in batches; without it (no
 * second connection, no thread) SQLite checkpoints in the commits as usual.
 */
static void checkpointer_start(struct run *r)
{
	if (!r->group_commit || store_open(r->p->db, 0, &r->ck))
		goto none;
	if (store_defer_checkpoints(r->st, true))
		goto none;
	if (pthread_create(&r->ck_th, NULL, checkpointer, r)) {
		store_defer_checkpoints(r->st, false);
		goto none;
	}
	return;
none:
	store_close(r->ck);
	r->ck = NULL;
	err_clear();
}

static void checkpointer_stop(struct run *r)
{
	if (!r->ck)
		return;
	pthread_mutex_lock(&r->lock);
	r->ck_stop = true;
	pthread_cond_signal(&r->ck_cond);
	pthread_mutex_unlock(&r->lock);
	pthread_join(r->ck_th, NULL);
	store_close(r->ck);
	r->ck = NULL;
	/* the store's later writes checkpoint themselves again */
	if (store_defer_checkpoints(r->st, false))
		err_clear();
}

int gen_run(struct store *st, struct brain *b, int64_t run_id, const struct gen_params *p,
	    struct gen_totals *totals)
{
	struct run r;
	struct worker *w = NULL;
	struct carrier *carrier = NULL;
	int i, n = p->jobs < 1 ? 1 : p->jobs, started = 0, rc = 0, nc = 0;
	size_t ri;

	memset(totals, 0, sizeof(*totals));
	memset(&r, 0, sizeof(r));
	r.st = st;
	r.p = p;
	r.run_id = run_id;
	r.t = totals;
	r.nrecs = p->npaths;
	r.recs = calloc(r.nrecs + 1, sizeof(*r.recs));
	w = calloc((size_t)n, sizeof(*w));
	if (!r.recs || !w) {
		free(r.recs);
		free(w);
		return ENG_ENOMEM;
	}
	for (ri = 0; ri < r.nrecs; ri++)
		r.recs[ri].path = p->paths[ri];
	pthread_mutex_init(&r.lock, NULL);
	pthread_cond_init(&r.cond, NULL);
	pthread_mutex_init(&r.cache_lock, NULL);
	pthread_cond_init(&r.cache_cond, NULL);
	pthread_cond_init(&r.cache_room, NULL);
	/* a brain's response cache writes on its own connection: no batch may hold the lock */
	r.group_commit = !p->cache;
	pthread_cond_init(&r.ck_cond, NULL);
	checkpointer_start(&r);
	rc = workers_start(&r, b, w, n);
	nc = rc ? 0 : carriers_of(b, w, n, &carrier);
	for (i = 0; !rc && i < (nc ? nc : n); i++) {
		if (nc ? pthread_create(&carrier[i].th, NULL, carrier_main, &carrier[i])
		       : pthread_create(&w[i].th, NULL, worker_main, &w[i])) {
			rc = err_set(ENG_ENOMEM, "cannot start a worker thread");
			break;
		}
		started++;
	}
	if (rc) {
		pthread_mutex_lock(&r.lock);
		fail(&r, rc, "generate");
		pthread_cond_broadcast(&r.cond);
		pthread_mutex_unlock(&r.lock);
	}
	for (i = 0; i < started; i++)
		pthread_join(nc ? carrier[i].th : w[i].th, NULL);
	if (carrier)
		free(carrier[0].workers);
	free(carrier);
	cache_stop(&r);
	/* what the batch holds was written whole, also when the run failed after */
	batch_commit(&r);
	checkpointer_stop(&r);
	if (!r.err && p->regenerate) {
		rc = write_held(&r);
		if (rc)
			fail(&r, rc, "store");
	}
	for (ri = 0; ri < r.nrecs; ri++) {
		for (i = 0; i < SUBTASK_NGROUPS; i++)
			stream_release(&r.recs[ri].s[i]);
		tool_shared_free(r.recs[ri].shared);
		recording_free(r.recs[ri].rec);
		free(r.recs[ri].id);
	}
	for (ri = 0; ri < r.nheld; ri++)
		agent_result_release(&r.held[ri].r);
	for (ri = 0; ri < r.nwq; ri++)
		agent_result_release(&r.wq[ri].r);
	free(r.wq);
	for (i = 0; i < n; i++) {
		size_t k;

		for (k = 0; w[i].ctx && k < r.nrecs; k++)
			tool_ctx_free(w[i].ctx[k]);
		free(w[i].ctx);
		brain_free(w[i].brain);
	}
	rc = r.err;
	if (rc)
		err_set(rc, "%s", r.errmsg);
	free(r.held);
	free(r.recs);
	free(w);
	pthread_cond_destroy(&r.cond);
	pthread_cond_destroy(&r.ck_cond);
	pthread_cond_destroy(&r.cache_cond);
	pthread_cond_destroy(&r.cache_room);
	pthread_mutex_destroy(&r.cache_lock);
	pthread_mutex_destroy(&r.lock);
	if (rc)
		return rc;
	return totals->recordings_failed ? -1 : 0;
}
