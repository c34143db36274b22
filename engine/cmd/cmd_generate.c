/* SPDX-License-Identifier: MIT */
/*
 * proxima generate: recordings -> agent sessions -> QAs in the store.
 * proxima regenerate: replace the unreviewed QAs of one category.
 */
#include "commands.h"

#include <errno.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <limits.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "agent.h"
#include "brain.h"
#include "err.h"
#include "version.h"
#include "hash.h"
#include "jsonfile.h"
#include "recording.h"
#include "registry.h"
#include "store.h"
#include "subtask.h"

/* A group of docs/design.md section 3 (engine/base/subtask.h), with its names. */
struct group {
	enum subtask st;
	enum metric m;
	const char *subtask; /* full: category.subtask */
	const char *metric;
};
#define NGROUPS SUBTASK_NGROUPS

static struct group groups[NGROUPS];

static void groups_init(void)
{
	size_t i;

	for (i = 0; i < NGROUPS; i++) {
		subtask_group((int)i, &groups[i].st, &groups[i].m);
		groups[i].subtask = subtask_name(groups[i].st);
		groups[i].metric = metric_name(groups[i].m);
	}
}

struct gen_opts {
	const char *db;
	const char *tasks;
	int per_task;
	int options;
	uint64_t seed;
	int jobs;
	int max_turns;
	int max_sessions;   /* sessions tried per group and recording, at most */
	int quiet;
	int verbose;        /* print why each candidate was dropped */
	struct brain_config brain;
	const char *regen_category;  /* regenerate: the category */
	const char *regen_recording; /* regenerate: one recording, or NULL */
	int shard_i, shard_n;        /* --shard i/n; shard_n 0 when not sharded */
};

/* Does the --tasks list select group g? Items: category, category.subtask, .../metric. */
static int task_selected(const char *list, const struct group *g)
{
	char item[128];
	const char *p = list;

	if (!list || !*list)
		return 1;
	while (*p) {
		size_t n = strcspn(p, ",");
		char full[128];
		size_t cl = strcspn(g->subtask, ".");

		snprintf(item, sizeof(item), "%.*s", (int)n, p);
		snprintf(full, sizeof(full), "%s/%s", g->subtask, g->metric);
		if (!strcmp(item, full) || !strcmp(item, g->subtask) ||
		    (strlen(item) == cl && !strncmp(item, g->subtask, cl)))
			return 1;
		p += n;
		if (*p == ',')
			p++;
	}
	return 0;
}

static int check_tasks(const char *list)
{
	const char *p = list;

	while (p && *p) {
		size_t n = strcspn(p, ","), i;
		int any = 0;
		char item[128];

		snprintf(item, sizeof(item), "%.*s", (int)n, p);
		for (i = 0; i < NGROUPS; i++)
			if (task_selected(item, &groups[i]))
				any = 1;
		if (!any)
			return error("--tasks: '%s' is not a category, sub-task or sub-task/metric "
				     "(e.g. exploration, intention.head_turn, "
				     "exploration.navigate/approx)", item);
		p += n;
		if (*p == ',')
			p++;
	}
	return 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ======================= Sharding (--shard i/n) ======================= */

/* Parses "i/n" (decimal, 0 <= i < n <= 1000000). Returns 0 or -1. */
static int shard_parse(const char *arg, int *i, int *n)
{
	char *end;
	long a, b;

	if (!arg[0] || !strchr("0123456789", arg[0]))
		return -1;
	a = strtol(arg, &end, 10);
	if (*end != '/' || !end[1] || !strchr("0123456789", end[1]))
		return -1;
	b = strtol(end + 1, &end, 10);
	if (*end || b < 1 || b > 1000000 || a < 0 || a >= b)
		return -1;
	*i = (int)a;
	*n = (int)b;
	return 0;
}

/*
 * The shard of a recording id: the first 8 bytes of SHA-256(id) as a
 * big-endian integer, modulo n. So a recording lands in one shard whatever
 * the order or the grouping of the arguments.
 */
static int shard_of(const char *id, int n, int *shard)
{
	char hex[HASH_HEX_LEN + 1], head[17];
	int rc;

	if (!id)
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
 * Whether the recording in folder path belongs to shard o->shard_i, in
 * *mine. A native recording's id is read from its recording.json alone;
 * any other layout (or a recording.json that does not give an id) is
 * loaded, and when it is ours the loaded recording is handed over in
 * *loaded for run_recording(). Returns 0, or -1 after printing the error.
 */
static int shard_pick(const struct gen_opts *o, const char *path, int *mine,
		      struct recording **loaded)
{
	struct recording *rec = NULL;
	const char *id = NULL;
	cJSON *doc = NULL;
	char file[4096];
	int rc = 0, shard = 0;

	*loaded = NULL;
	if (recording_detect(path) == REC_LAYOUT_NATIVE &&
	    (size_t)snprintf(file, sizeof(file), "%s/recording.json", path) < sizeof(file) &&
	    !jsonfile_read(file, &doc))
		id = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(doc, "id"));
	err_clear();
	if (!id || !*id) {
		rc = recording_load(path, REC_LAYOUT_AUTO, &rec);
		if (rc) {
			rc = error_code(rc, path);
			goto out;
		}
		id = rec->id;
	}
	rc = shard_of(id, o->shard_n, &shard);
	if (rc) {
		rc = error_code(rc, "hashing a recording id");
		goto out;
	}
	*mine = shard == o->shard_i;
	if (*mine) {
		*loaded = rec;
		rec = NULL;
	}
out:
	cJSON_Delete(doc);
	recording_free(rec);
	return rc ? -1 : 0;
}

/* ======================= Cache hook for the openai brain ======================= */

static int cache_get(void *ctx, const char *key, char **resp, int *status)
{
	return store_cache_get(ctx, key, resp, status);
}

static int cache_put(void *ctx, const char *key, const char *req, const char *resp,
		     int status, long latency_ms)
{
	return store_cache_put(ctx, key, req, resp, status, latency_ms);
}

/* ======================= Per-thread workers ======================= */

struct worker {
	struct brain *brain;
	struct tool_ctx *ctx;
	struct store *cache_store;   /* own handle for the response cache */
	struct llm_cache_ops cache;
};

struct totals {
	int verbose;
	long qa_new, qa_kept, qa_replaced, drops, failed, sessions;
	long by_group[NGROUPS];
	double t_brain, t_tools, t_truth, t_store;
	long drop_codes_n;
	char drop_codes[32][48];
	long drop_counts[32];
};

static void count_drop(struct totals *t, const char *code)
{
	long i;

	for (i = 0; i < t->drop_codes_n; i++)
		if (!strcmp(t->drop_codes[i], code)) {
			t->drop_counts[i]++;
			return;
		}
	if (t->drop_codes_n < 32) {
		snprintf(t->drop_codes[t->drop_codes_n], sizeof(t->drop_codes[0]), "%s", code);
		t->drop_counts[t->drop_codes_n++] = 1;
	}
}

static void progress(const struct gen_opts *o, const char *rec, const struct group *g,
		     const struct totals *t, double t0)
{
	double dt = now_s() - t0;

	if (o->quiet || !isatty(2))
		return;
	fprintf(stderr, "\rgenerate: %s %s/%s: %ld QAs (%ld new), %ld drops, %.0f QA/s   ",
		rec, g->subtask, g->metric, t->qa_new + t->qa_kept + t->qa_replaced, t->qa_new,
		t->drops, dt > 0 ? (double)(t->qa_new + t->qa_kept + t->qa_replaced) / dt : 0.0);
}

/* Writes one session's outcome. Returns 0 or a store error. */
static int write_result(struct store *st, int64_t run_id, const struct recording *rec,
			const struct group *g, size_t gi, const struct agent_result *r,
			struct totals *t)
{
	char cat[32], sub[48];
	const char *dot = strchr(g->subtask, '.');
	int rc, ins = 0;

	snprintf(cat, sizeof(cat), "%.*s", (int)(dot - g->subtask), g->subtask);
	snprintf(sub, sizeof(sub), "%s", dot + 1);
	if (r->status == AGENT_QA) {
		struct store_qa q = { 0 };

		q.id = r->qa.id;
		q.run_id = run_id;
		q.recording_id = rec->id;
		q.category = r->qa.category;
		q.subtask = r->qa.subtask;
		q.metric = r->qa.metric;
		q.t_ns = r->qa.t_ns;
		q.clip_start_ns = r->qa.clip_start_ns;
		q.clip_end_ns = r->qa.clip_end_ns;
		q.frames_json = r->qa.frames_json;
		q.target = r->qa.target;
		q.question = r->qa.question;
		q.options_json = r->qa.options_json;
		q.answer_index = r->qa.answer_index;
		q.answer_json = r->qa.answer_json;
		q.gt_json = r->qa.gt_json;
		q.qc_json = r->qa.qc_json;
		q.trace_json = r->trace_json;
		rc = store_qa_put(st, &q, &ins);
		if (rc)
			return rc;
		if (ins == STORE_PUT_NEW)
			t->qa_new++;
		else if (ins == STORE_PUT_REPLACED)
			t->qa_replaced++;
		else
			t->qa_kept++;
		t->by_group[gi]++;
		return 0;
	}
	{
		struct store_drop d = { 0 };

		d.run_id = run_id;
		d.recording_id = rec->id;
		d.category = cat;
		d.subtask = sub;
		d.metric = g->metric;
		d.reason = r->reason_code[0] ? r->reason_code : "unknown";
		d.t_ns = r->drop_t_ns;
		d.target = r->drop_target[0] ? r->drop_target : NULL;
		if (t->verbose)
			fprintf(stderr, "%s %s/%s #%d: %s: %s\n", rec->id, g->subtask, g->metric,
				r->index, d.reason, r->reason);
		if (r->status == AGENT_FAILED)
			t->failed++;
		else
			t->drops++;
		count_drop(t, d.reason);
		return store_drop_put(st, &d);
	}
}

/*
 * The number of candidate clips sample_clips offers for a group (0 when it
 * offers none or fails), with the seed the sessions use.
 */
static int candidate_total(struct tool_ctx *ctx, const struct group *g, uint64_t seed)
{
	cJSON *res = NULL;
	char args[256];
	int total = 0;

	snprintf(args, sizeof(args),
		 "{\"subtask\":\"%s\",\"metric\":\"%s\",\"index\":0,\"count\":1,\"seed\":%llu,"
		 "\"target\":null,\"t0\":null,\"t1\":null,\"frames\":null,\"window_s\":null,"
		 "\"k\":null}", g->subtask, g->metric, (unsigned long long)(seed & 0xffffffffu));
	if (!tool_call(ctx, "sample_clips", args, &res)) {
		const cJSON *t = cJSON_GetObjectItemCaseSensitive(res, "total");

		if (cJSON_IsNumber(t) && t->valuedouble > 0)
			total = t->valuedouble > 1e9 ? 1000000000 : (int)t->valuedouble;
	}
	cJSON_Delete(res);
	return total;
}

/*
 * Generates the QAs of the recording in folder path. rec, when not NULL,
 * is that recording already loaded; it is consumed either way.
 */
static int run_recording(const struct gen_opts *o, struct store *st, int64_t run_id,
			 struct worker *w, int nw, const char *path, struct recording *rec,
			 struct totals *t, double t0)
{
	struct agent_params ap;
	struct agent_result *res = NULL;
	char (*seen)[HASH_HEX_LEN + 1] = NULL;
	size_t gi;
	int rc = 0, i, chunk = nw * 4;

	if (!rec)
		rc = recording_load(path, REC_LAYOUT_AUTO, &rec);
	if (rc)
		return error_code(rc, path);
	{
		/* an absolute root, so the review page finds the video from anywhere */
		char *abs = realpath(rec->root, NULL);
		struct store_recording sr = { rec->id, rec->layout, abs ? abs : rec->root,
					      recording_t0(rec), recording_t1(rec), NULL };

		rc = store_recording_put(st, &sr);
		free(abs);
		if (rc) {
			error_code(rc, "store");
			goto out;
		}
	}
	agent_defaults(&ap);
	ap.max_turns = o->max_turns;
	ap.truth.qc.n_options = o->options;
	for (i = 0; i < nw; i++) {
		tool_ctx_free(w[i].ctx);
		w[i].ctx = NULL;
		rc = tool_ctx_new(rec, &w[i].ctx);
		if (rc) {
			error_code(rc, "tool context");
			goto out;
		}
	}
	res = calloc((size_t)chunk, sizeof(*res));
	if (!res) {
		rc = error("out of memory");
		goto out;
	}
	seen = calloc((size_t)o->max_sessions + 1, sizeof(*seen));
	if (!seen) {
		rc = error("out of memory");
		goto out;
	}
	for (gi = 0; gi < NGROUPS; gi++) {
		const struct group *g = &groups[gi];
		long produced = 0;
		int base = 0, nseen = 0, limit;

		if (o->regen_category && strncmp(g->subtask, o->regen_category, strlen(o->regen_category)))
			continue;
		if (!task_selected(o->tasks, g))
			continue;
		/* one session per candidate clip, so never more sessions than clips */
		limit = candidate_total(w[0].ctx, g, o->seed);
		if (limit > o->max_sessions)
			limit = o->max_sessions;
		while (produced < o->per_task && base < limit) {
			int n = chunk, k, err = 0;
			double ts;

			if (base + n > limit)
				n = limit - base;
#pragma omp parallel for num_threads(nw) schedule(dynamic, 1) reduction(|| : err)
			for (k = 0; k < n; k++) {
				struct worker *me = &w[omp_get_thread_num()];
				struct brain_session s = { rec->id, g->st, g->m, base + k,
							   o->seed, rec };

				if (agent_run(me->brain, me->ctx, &s, &ap, &res[k]))
					err = 1;
			}
			if (err) {
				const char *why = "";

				for (k = 0; k < n && !why[0]; k++)
					why = res[k].error;
				rc = error("session failed: %s", why);
				for (k = 0; k < n; k++)
					agent_result_release(&res[k]);
				goto out;
			}
			ts = now_s();
			rc = store_begin(st);
			for (k = 0; !rc && k < n; k++) {
				t->sessions++;
				t->t_brain += res[k].t_brain_s;
				t->t_tools += res[k].t_tools_s;
				t->t_truth += res[k].t_truth_s;
				if (res[k].status == AGENT_QA && produced >= o->per_task)
					continue;
				if (res[k].status == AGENT_QA) {
					/* two candidates that land on the same (T, target) are one QA */
					int q, dup = 0;

					for (q = 0; q < nseen && !dup; q++)
						dup = !strcmp(seen[q], res[k].qa.id);
					if (dup)
						continue;
					snprintf(seen[nseen++], sizeof(seen[0]), "%s", res[k].qa.id);
				}
				rc = write_result(st, run_id, rec, g, gi, &res[k], t);
				if (!rc && res[k].status == AGENT_QA)
					produced++;
			}
			if (!rc)
				rc = store_commit(st);
			else
				store_rollback(st);
			t->t_store += now_s() - ts;
			for (k = 0; k < n; k++)
				agent_result_release(&res[k]);
			if (rc) {
				error_code(rc, "store");
				goto out;
			}
			base += n;
			progress(o, rec->id, g, t, t0);
		}
	}
out:
	free(res);
	free(seen);
	for (i = 0; i < nw; i++) {
		tool_ctx_free(w[i].ctx);
		w[i].ctx = NULL;
	}
	recording_free(rec);
	return rc ? -1 : 0;
}

static void print_summary(const struct gen_opts *o, const struct totals *t, double dt,
			  int64_t run_id)
{
	size_t gi;
	long total = t->qa_new + t->qa_kept + t->qa_replaced;
	double stages = t->t_brain + t->t_tools + t->t_truth + t->t_store;
	long i;

	if (!o->quiet && isatty(2))
		fputc('\n', stderr);
	printf("run %lld: %ld sessions, %ld QAs (%ld new, %ld already stored, %ld replaced), "
	       "%ld dropped, %ld failed, %.1f s, %.0f QA/s\n",
	       (long long)run_id, t->sessions, total, t->qa_new, t->qa_kept, t->qa_replaced,
	       t->drops, t->failed, dt, dt > 0 ? (double)total / dt : 0.0);
	for (gi = 0; gi < NGROUPS; gi++) {
		char key[96];

		if (!task_selected(o->tasks, &groups[gi]))
			continue;
		if (o->regen_category &&
		    strncmp(groups[gi].subtask, o->regen_category, strlen(o->regen_category)))
			continue;
		snprintf(key, sizeof(key), "%s/%s", groups[gi].subtask, groups[gi].metric);
		printf("  %-42s %ld\n", key, t->by_group[gi]);
	}
	for (i = 0; i < t->drop_codes_n; i++)
		printf("  dropped: %-33s %ld\n", t->drop_codes[i], t->drop_counts[i]);
	if (stages > 0)
		printf("  time: brain %.0f%%, tools %.0f%%, truth+qc %.0f%%, store %.0f%%\n",
		       100 * t->t_brain / stages, 100 * t->t_tools / stages,
		       100 * t->t_truth / stages, 100 * t->t_store / stages);
}

/*
 * Runs left "running" by a process of this host that no longer exists
 * (killed, crashed) are marked "interrupted", so the runs table tells the
 * truth after a kill -9. Runs of live processes or other hosts are left.
 */
static void mark_interrupted(struct store *st)
{
	cJSON *runs = NULL;
	const cJSON *it;
	char host[128] = "";

	gethostname(host, sizeof(host) - 1);
	if (store_run_list_running(st, &runs))
		return;
	cJSON_ArrayForEach(it, runs) {
		const cJSON *cfg = cJSON_GetObjectItemCaseSensitive(it, "config");
		const cJSON *pid = cJSON_GetObjectItemCaseSensitive(cfg, "pid");
		const char *h = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(cfg, "host"));
		const cJSON *id = cJSON_GetObjectItemCaseSensitive(it, "id");

		if (!cJSON_IsNumber(pid) || !cJSON_IsNumber(id) || !h || strcmp(h, host))
			continue;
		if (kill((pid_t)pid->valuedouble, 0) == 0 || errno != ESRCH)
			continue;
		store_run_finish(st, (int64_t)id->valuedouble, "interrupted", NULL);
	}
	cJSON_Delete(runs);
}

/*
 * regenerate takes --per-task, --options, --seed and --max-turns from the
 * latest generate run of the store unless they are given, so that the
 * replacements are made as the originals were.
 */
static void reuse_settings(struct store *st, struct gen_opts *o, unsigned given)
{
	char *cfg_text = NULL;
	cJSON *cfg;
	int64_t seed = 0;
	const cJSON *v;

	if (store_run_last_generate(st, &cfg_text, &seed))
		return;
	cfg = cJSON_Parse(cfg_text);
	free(cfg_text);
	v = cJSON_GetObjectItemCaseSensitive(cfg, "per_task");
	if (!(given & 1u) && cJSON_IsNumber(v) && v->valuedouble >= 1)
		o->per_task = (int)v->valuedouble;
	v = cJSON_GetObjectItemCaseSensitive(cfg, "options");
	if (!(given & 2u) && cJSON_IsNumber(v) && v->valuedouble >= 2 && v->valuedouble <= 8)
		o->options = (int)v->valuedouble;
	if (!(given & 4u) && seed >= 0)
		o->seed = (uint64_t)seed;
	v = cJSON_GetObjectItemCaseSensitive(cfg, "max_turns");
	if (!(given & 8u) && cJSON_IsNumber(v) && v->valuedouble >= 2)
		o->max_turns = (int)v->valuedouble;
	cJSON_Delete(cfg);
}

static const char generate_usage[] =
	"usage: proxima generate REC... --db F [options]\n"
	"       proxima regenerate --db F --task CATEGORY [--recording ID] [options]\n"
	"\n"
	"Turns recordings into QAs: one agent session per candidate question, the\n"
	"ground truth recomputed with the tools, options with hard negatives and QC,\n"
	"everything stored with its trace. The same command run twice adds nothing.\n"
	"\n"
	"  --db F            the store (created when missing)\n"
	"  --tasks LIST      categories, CATEGORY.SUBTASK or CATEGORY.SUBTASK/METRIC,\n"
	"                    comma separated (default: all nine groups)\n"
	"  --per-task N      QAs per group and recording (default 60)\n"
	"  --max-sessions N  sessions tried per group and recording (default 4 x per-task)\n"
	"  --brain B         local (default), openai, or replay:CASSETTE\n"
	"  --base-url URL    openai: the server, e.g. https://api.openai.com/v1\n"
	"  --model M         openai/replay: the model name\n"
	"  --profile P       openai|gemini|vllm|llamacpp|ollama (default: from the URL)\n"
	"  --api-key-env V   the variable holding the API key (default per profile)\n"
	"  --record FILE     openai: also write every response to a cassette, the\n"
	"                    answers from the store's cache included\n"
	"  --timeout-ms N    openai: total time per request (default 120000)\n"
	"  --options N       options per question, 2..8 (default 5; 8 for EgoTools style)\n"
	"  --seed S          run seed (default 1)\n"
	"  --jobs J          sessions at once (default: number of cores)\n"
	"  --max-turns N     brain turns per session (default 16)\n"
	"  --task CATEGORY   regenerate: the category whose unreviewed QAs are replaced\n"
	"                    (--per-task, --options, --seed and --max-turns default to\n"
	"                    those of the store's latest generate run)\n"
	"  --recording ID    regenerate: only this recording\n"
	"  --shard I/N       generate: only the recordings of shard I of N (0 <= I < N):\n"
	"                    those whose id's SHA-256 (first 8 bytes, big-endian)\n"
	"                    is I modulo N, so every shard takes the same list and\n"
	"                    each recording lands in one; native recordings of other\n"
	"                    shards are skipped after reading recording.json, other\n"
	"                    layouts after loading them (the id is the loader's);\n"
	"                    'proxima merge' joins the shard stores\n"
	"  --quiet           no progress line\n"
	"  --verbose         print why each dropped candidate was dropped\n";

static int generate_main(int argc, char **argv, int regen)
{
	static const struct option longopts[] = {
		{ "db", required_argument, NULL, 'd' },
		{ "tasks", required_argument, NULL, 't' },
		{ "task", required_argument, NULL, 'T' },
		{ "recording", required_argument, NULL, 'r' },
		{ "per-task", required_argument, NULL, 'n' },
		{ "max-sessions", required_argument, NULL, 'S' },
		{ "brain", required_argument, NULL, 'b' },
		{ "base-url", required_argument, NULL, 'u' },
		{ "model", required_argument, NULL, 'm' },
		{ "profile", required_argument, NULL, 'p' },
		{ "api-key-env", required_argument, NULL, 'k' },
		{ "record", required_argument, NULL, 'R' },
		{ "timeout-ms", required_argument, NULL, 'o' },
		{ "options", required_argument, NULL, 'O' },
		{ "seed", required_argument, NULL, 's' },
		{ "jobs", required_argument, NULL, 'j' },
		{ "max-turns", required_argument, NULL, 'M' },
		{ "shard", required_argument, NULL, 'H' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct gen_opts o = { 0 };
	struct store *st = NULL;
	struct worker *w = NULL;
	struct brain *b0 = NULL;
	struct totals t = { 0 };
	int64_t run_id = 0;
	const char *brain_spec = "local";
	char *end, config[2048];
	int c, i, nw, rc = 0, failed = 0, max_sessions = 0, n_other = 0;
	unsigned given = 0; /* bit per option given on the command line: n, O, s, M */
	double t0;

	o.per_task = 60;
	o.options = 5;
	o.seed = 1;
	o.jobs = omp_get_num_procs();
	o.max_turns = 16;
	llm_config_init(&o.brain.llm);
	o.brain.llm.timeout_ms = 120000;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		long v;

		switch (c) {
		case 'd': o.db = optarg; break;
		case 't': o.tasks = optarg; break;
		case 'T': o.regen_category = optarg; break;
		case 'r': o.regen_recording = optarg; break;
		case 'b': brain_spec = optarg; break;
		case 'u': o.brain.llm.base_url = optarg; break;
		case 'm': o.brain.llm.model = optarg; break;
		case 'k': o.brain.llm.api_key_env = optarg; break;
		case 'R': o.brain.record_path = optarg; break;
		case 'q': o.quiet = 1; break;
		case 'v': o.verbose = 1; break;
		case 'H':
			if (shard_parse(optarg, &o.shard_i, &o.shard_n)) {
				error("--shard: '%s' is not I/N with 0 <= I < N (e.g. 0/4)", optarg);
				return CMD_USAGE;
			}
			break;
		case 'p':
			if (llm_profile_parse(optarg, &o.brain.llm.profile)) {
				error("--profile: unknown provider '%s'", optarg);
				return CMD_USAGE;
			}
			break;
		case 'n': case 'S': case 'o': case 'O': case 's': case 'j': case 'M':
			v = strtol(optarg, &end, 10);
			if (*end || end == optarg || v < 0 || v > 100000000) {
				error("option --%s: '%s' is not a valid number",
				      c == 'n' ? "per-task" : c == 'S' ? "max-sessions"
				      : c == 'o' ? "timeout-ms" : c == 'O' ? "options"
				      : c == 's' ? "seed" : c == 'j' ? "jobs" : "max-turns", optarg);
				return CMD_USAGE;
			}
			given |= c == 'n' ? 1u : c == 'O' ? 2u : c == 's' ? 4u : c == 'M' ? 8u : 0u;
			if (c == 'n') o.per_task = (int)v;
			else if (c == 'S') max_sessions = (int)v;
			else if (c == 'o') o.brain.llm.timeout_ms = v;
			else if (c == 'O') o.options = (int)v;
			else if (c == 's') o.seed = (uint64_t)v;
			else if (c == 'j') o.jobs = (int)v;
			else o.max_turns = (int)v;
			break;
		case 'h':
			fputs(generate_usage, stdout);
			return CMD_OK;
		default:
			fputs(generate_usage, stderr);
			return CMD_USAGE;
		}
	}
	if (!o.db) {
		error("--db is required");
		fputs(generate_usage, stderr);
		return CMD_USAGE;
	}
	if (o.options < 2 || o.options > 8) {
		error("--options must be between 2 and 8");
		return CMD_USAGE;
	}
	if (o.jobs < 1 || o.jobs > 256) {
		error("--jobs must be between 1 and 256");
		return CMD_USAGE;
	}
	if (o.max_turns < 2) {
		error("--max-turns must be at least 2");
		return CMD_USAGE;
	}
	if (o.tasks && check_tasks(o.tasks))
		return CMD_USAGE;
	if (regen && o.shard_n) {
		error("--shard applies to generate; regenerate works on the store's recordings");
		return CMD_USAGE;
	}
	if (regen) {
		if (!o.regen_category || strchr(o.regen_category, '.')) {
			error("--task CATEGORY is required (intention, exploration, exploitation or chain)");
			return CMD_USAGE;
		}
		if (strcmp(o.regen_category, "intention") && strcmp(o.regen_category, "exploration") &&
		    strcmp(o.regen_category, "exploitation") && strcmp(o.regen_category, "chain")) {
			error("--task: unknown category '%s'", o.regen_category);
			return CMD_USAGE;
		}
	} else if (optind >= argc) {
		error("no recording given");
		fputs(generate_usage, stderr);
		return CMD_USAGE;
	}
	if (brain_parse_spec(brain_spec, &o.brain)) {
		error("%s", err_msg());
		return CMD_USAGE;
	}
	o.brain.llm.temperature = 0;
	nw = o.jobs;

	/* regenerate replaces what a generate stored: never start an empty store */
	if (regen && access(o.db, F_OK)) {
		int e = errno;

		error("cannot open '%s': %s", o.db, strerror(e));
		return CMD_FAILED;
	}
	rc = store_open(o.db, 0, &st);
	if (rc) {
		error_code(rc, o.db);
		return CMD_FAILED;
	}
	if (regen)
		reuse_settings(st, &o, given);
	o.max_sessions = max_sessions ? max_sessions : 4 * o.per_task + 8;
	o.brain.llm.seed = (long)(o.seed & 0x7fffffff);
	if (regen && o.regen_recording) {
		struct cJSON *r = NULL;

		rc = store_recording_get(st, o.regen_recording, &r);
		cJSON_Delete(r);
		if (rc) {
			if (rc == ENG_ENOTFOUND)
				error("--recording: no recording '%s' in '%s'", o.regen_recording, o.db);
			else
				error_code(rc, o.db);
			goto out;
		}
	}
	if (llm_global_init()) {
		error("cannot initialise libcurl");
		rc = -1;
		goto out;
	}
	rc = brain_new(&o.brain, &b0);
	if (rc) {
		error_code(rc, "brain");
		goto out;
	}
	w = calloc((size_t)nw, sizeof(*w));
	if (!w) {
		rc = error("out of memory");
		goto out;
	}
	for (i = 0; i < nw; i++) {
		const struct llm_cache_ops *cache = NULL;

		if (o.brain.kind == BRAIN_OPENAI) {
			rc = store_open(o.db, 0, &w[i].cache_store);
			if (rc) {
				error_code(rc, o.db);
				goto out;
			}
			w[i].cache.get = cache_get;
			w[i].cache.put = cache_put;
			w[i].cache.ctx = w[i].cache_store;
			cache = &w[i].cache;
		}
		rc = brain_clone(b0, cache, &w[i].brain);
		if (rc) {
			error_code(rc, "brain");
			goto out;
		}
	}
	{
		char host[128] = "", shard[32] = "null";

		gethostname(host, sizeof(host) - 1);
		if (o.shard_n)
			snprintf(shard, sizeof(shard), "\"%d/%d\"", o.shard_i, o.shard_n);
		snprintf(config, sizeof(config),
			 "{\"tasks\":\"%s\",\"per_task\":%d,\"options\":%d,\"jobs\":%d,"
			 "\"max_turns\":%d,\"regenerate\":%s,\"shard\":%s,\"pid\":%ld,"
			 "\"host\":\"%s\"}",
			 o.tasks ? o.tasks : "all", o.per_task, o.options, o.jobs, o.max_turns,
			 regen ? "true" : "false", shard, (long)getpid(), host);
	}
	mark_interrupted(st);
	rc = store_run_begin(st, config, brain_name(b0), brain_model(b0), (int64_t)o.seed,
			     version_string(), &run_id);
	if (rc) {
		error_code(rc, o.db);
		goto out;
	}
	t.verbose = o.verbose;
	t0 = now_s();
	if (regen) {
		struct cJSON *recs = NULL;
		int64_t n = 0;

		rc = store_begin(st);
		if (!rc)
			rc = store_qa_supersede(st, o.regen_category, o.regen_recording, &n);
		rc = rc ? rc : store_commit(st);
		if (rc) {
			store_rollback(st);
			error_code(rc, o.db);
			goto out;
		}
		if (!o.quiet)
			fprintf(stderr, "regenerate: %lld unreviewed %s QAs superseded\n",
				(long long)n, o.regen_category);
		rc = store_recording_list(st, &recs);
		if (rc) {
			error_code(rc, o.db);
			goto out;
		}
		{
			const struct cJSON *it;

			cJSON_ArrayForEach(it, recs) {
				const char *id = cJSON_GetStringValue(
					cJSON_GetObjectItemCaseSensitive(it, "id"));
				const char *root = cJSON_GetStringValue(
					cJSON_GetObjectItemCaseSensitive(it, "root"));

				if (o.regen_recording && (!id || strcmp(id, o.regen_recording)))
					continue;
				if (!root) {
					error("recording '%s' has no stored folder", id ? id : "?");
					failed = 1;
					continue;
				}
				if (run_recording(&o, st, run_id, w, nw, root, NULL, &t, t0))
					failed = 1;
			}
		}
		cJSON_Delete(recs);
	} else {
		for (i = optind; i < argc; i++) {
			struct recording *rec = NULL;
			int mine = 1;

			if (o.shard_n && shard_pick(&o, argv[i], &mine, &rec)) {
				failed = 1;
				continue;
			}
			if (!mine) {
				n_other++;
				continue;
			}
			if (run_recording(&o, st, run_id, w, nw, argv[i], rec, &t, t0))
				failed = 1;
		}
	}
	{
		char counts[256];

		snprintf(counts, sizeof(counts),
			 "{\"qa_new\":%ld,\"qa_kept\":%ld,\"qa_replaced\":%ld,\"dropped\":%ld,\"failed\":%ld,"
			 "\"other_shards\":%d}",
			 t.qa_new, t.qa_kept, t.qa_replaced, t.drops, t.failed, n_other);
		store_run_finish(st, run_id, failed ? "failed" : "ok", counts);
	}
	print_summary(&o, &t, now_s() - t0, run_id);
	if (o.shard_n)
		printf("  shard %d/%d: %d of %d recordings, %d left to other shards\n", o.shard_i,
		       o.shard_n, argc - optind - n_other, argc - optind, n_other);
	rc = failed ? -1 : 0;
out:
	if (w)
		for (i = 0; i < nw; i++) {
			brain_free(w[i].brain);
			tool_ctx_free(w[i].ctx);
			store_close(w[i].cache_store);
		}
	free(w);
	brain_free(b0);
	store_close(st);
	llm_global_cleanup();
	return rc ? CMD_FAILED : CMD_OK;
}

int cmd_generate(int argc, char **argv)
{
	groups_init();
	return generate_main(argc, argv, 0);
}

int cmd_regenerate(int argc, char **argv)
{
	groups_init();
	return generate_main(argc, argv, 1);
}
