/* SPDX-License-Identifier: MIT */
/*
 * proxima generate: recordings -> agent sessions -> QAs in the store.
 * proxima regenerate: replace the unreviewed QAs of one category.
 * The run itself is engine/agent/generate.h's; this file reads the
 * options, prints progress and the summary, and sets the exit status.
 */
#include "commands.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <omp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "agent.h"
#include "audit.h"
#include "brain.h"
#include "err.h"
#include "warm.h"
#include "generate.h"
#include "store.h"
#include "subtask.h"
#include "version.h"

struct opts {
	const char *db;
	const char *tasks;
	int per_task;
	int options;
	uint64_t seed;
	int jobs;
	int max_turns;
	int max_sessions;   /* 0: 4 x per-task + 8 */
	double key_cap;     /* --key-cap */
	long allow_failures; /* failed sessions tolerated before exit 1 */
	int quiet;
	int verbose;        /* print why each candidate was dropped */
	int no_audit;       /* --no-audit: skip the blind audit at the end */
	int brain_frames;   /* --brain-frames N: the clip's frames shown to the brain */
	int brain_frame_width; /* --brain-frame-width W */
	const char *brain_spec;
	struct brain_config brain;
	const char *regen_category;  /* regenerate: the category */
	const char *regen_recording; /* regenerate: one recording, or NULL */
	int shard_i, shard_n;        /* --shard i/n; shard_n 0 when not sharded */
	unsigned given;     /* bit per option given: per-task 1, options 2, seed 4, max-turns 8,
			       key-cap 16 */
};

/* Does the --tasks list select group g? Items: category, category.subtask, .../metric. */
static int task_selected(const char *list, int g)
{
	enum subtask st;
	enum metric m;
	const char *p = list, *name;
	char item[128], full[128];

	if (!list || !*list)
		return 1;
	subtask_group(g, &st, &m);
	name = subtask_name(st);
	subtask_group_name(g, full, sizeof(full));
	while (*p) {
		size_t n = strcspn(p, ","), cl = strcspn(name, ".");

		snprintf(item, sizeof(item), "%.*s", (int)n, p);
		if (!strcmp(item, full) || !strcmp(item, name) ||
		    (strlen(item) == cl && !strncmp(item, name, cl)))
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
		size_t n = strcspn(p, ",");
		int any = 0, g;
		char item[128];

		snprintf(item, sizeof(item), "%.*s", (int)n, p);
		for (g = 0; g < SUBTASK_NGROUPS; g++)
			if (task_selected(item, g))
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

/* ======================= Output ======================= */

struct printer {
	const struct opts *o;
	double t0, last;
};

static void on_progress(void *ctx, const char *rec_id, int group, const struct gen_totals *t)
{
	struct printer *pr = ctx;
	long total = t->qa_new + t->qa_kept + t->qa_replaced;
	double now = now_s(), dt = now - pr->t0;
	char name[96];

	if (pr->o->quiet || !isatty(2) || now - pr->last < 0.2)
		return;
	pr->last = now;
	if (pr->o->regen_category) {
		int g;

		for (g = 0, total = 0; g < SUBTASK_NGROUPS; g++)
			total += t->by_group[g];
	}
	subtask_group_name(group, name, sizeof(name));
	fprintf(stderr, "\rgenerate: %s %s: %ld QAs, %ld drops, %.0f QA/s   ", rec_id, name,
		total, t->drops, dt > 0 ? (double)total / dt : 0.0);
}

static void on_drop(void *ctx, const char *rec_id, int group, const struct agent_result *r)
{
	struct printer *pr = ctx;
	char name[96];

	if (!pr->o->verbose)
		return;
	subtask_group_name(group, name, sizeof(name));
	fprintf(stderr, "%s %s #%d: %s: %s\n", rec_id, name, r->index,
		r->reason_code[0] ? r->reason_code : "unknown", r->reason);
}

static void on_rec_error(void *ctx, const char *path, const char *why)
{
	(void)ctx;
	error("%s: %s", path, why);
}

static void on_no_candidates(void *ctx, const char *rec_id, int group, const char *why)
{
	struct printer *pr = ctx;
	char name[96];

	if (pr->o->quiet && !pr->o->verbose)
		return;
	subtask_group_name(group, name, sizeof(name));
	fprintf(stderr, "%s%s %s: no candidate clip: %s\n", !pr->o->quiet && isatty(2) ? "\r" : "",
		rec_id, name, why);
}

static void print_summary(const struct opts *o, const struct gen_totals *t, double dt,
			  int64_t run_id, const struct gen_params *gp)
{
	long total = t->qa_new + t->qa_kept + t->qa_replaced;
	double stages = t->t_brain + t->t_tools + t->t_truth + t->t_store;
	int g, i;

	if (!o->quiet && isatty(2))
		fputc('\n', stderr);
	printf("run %lld: %ld sessions, %ld QAs (%ld new, %ld already stored, %ld replaced), "
	       "%ld dropped, %ld failed, %.1f s, %.0f QA/s\n",
	       (long long)run_id, t->sessions, total, t->qa_new, t->qa_kept, t->qa_replaced,
	       t->drops, t->failed, dt, dt > 0 ? (double)total / dt : 0.0);
	for (g = 0; g < SUBTASK_NGROUPS; g++) {
		char key[96];

		if (!gp->groups[g])
			continue;
		subtask_group_name(g, key, sizeof(key));
		printf("  %-42s %ld\n", key, t->by_group[g]);
	}
	for (i = 0; i < t->ndrop_codes; i++)
		printf("  dropped: %-33s %ld\n", t->drop_codes[i], t->drop_counts[i]);
	if (t->discarded)
		printf("  sessions run past a quota, not used: %ld\n", t->discarded);
	if (t->prompt_tokens || t->completion_tokens)
		printf("  tokens: %ld prompt, %ld completion, %.0f per QA\n", t->prompt_tokens,
		       t->completion_tokens,
		       total ? (double)(t->prompt_tokens + t->completion_tokens) / (double)total : 0.0);
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
 * regenerate takes --per-task, --options, --seed, --max-turns and --key-cap from the
 * latest generate run of the store unless they are given, so that the
 * replacements are made as the originals were.
 */
static void reuse_settings(struct store *st, struct opts *o, unsigned given)
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
	v = cJSON_GetObjectItemCaseSensitive(cfg, "key_cap");
	if (!(given & 16u) && cJSON_IsNumber(v) && v->valuedouble > 0 && v->valuedouble <= 1)
		o->key_cap = v->valuedouble;
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
	"  --key-cap F       key balance: no key field value (direction, turn, distance\n"
	"                    bin, relation, reference, object, verb, legs) on more than\n"
	"                    this share of a group's QAs of a recording; QAs over it are\n"
	"                    dropped as key_balance (default 0.3; 1: no cap)\n"
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
	"                    (--per-task, --options, --seed, --max-turns and --key-cap\n"
	"                    default to those of the store's latest generate run)\n"
	"  --recording ID    regenerate: only this recording\n"
	"  --shard I/N       generate: only the recordings of shard I of N (0 <= I < N):\n"
	"                    those whose id's SHA-256 (first 8 bytes, big-endian)\n"
	"                    is I modulo N, so every shard takes the same list and\n"
	"                    each recording lands in one; native recordings of other\n"
	"                    shards are skipped after reading recording.json, other\n"
	"                    layouts after loading them (the id is the loader's);\n"
	"                    'proxima merge' joins the shard stores\n"
	"  --allow-failures N  exit 0 although up to N sessions failed in the brain\n"
	"                    (default 0: any failed session makes the run exit 1)\n"
	"  --brain-frames N  openai: show the brain the N frames of the first candidate\n"
	"                    clip it samples, as images (so its question can refer to\n"
	"                    what is visible); the truth still comes from the tools;\n"
	"                    a recording without video gets a line saying so\n"
	"  --brain-frame-width W  their width in pixels (default 640)\n"
	"  --no-audit        skip the blind audit of the run's groups at the end\n"
	"                    (text-only solvers; a group over the gate is a warning)\n"
	"  --quiet           no progress line\n"
	"  --verbose         print why each dropped candidate was dropped\n";

/* ======================= Options ======================= */

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
	{ "allow-failures", required_argument, NULL, 'F' },
	{ "key-cap", required_argument, NULL, 'K' },
	{ "shard", required_argument, NULL, 'H' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "no-audit", no_argument, NULL, 'A' },
	{ "brain-frames", required_argument, NULL, 'G' },
	{ "brain-frame-width", required_argument, NULL, 'W' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 }
};

static const char *number_option(int c)
{
	switch (c) {
	case 'n': return "per-task";
	case 'S': return "max-sessions";
	case 'o': return "timeout-ms";
	case 'O': return "options";
	case 's': return "seed";
	case 'j': return "jobs";
	case 'F': return "allow-failures";
	case 'G': return "brain-frames";
	case 'W': return "brain-frame-width";
	default: return "max-turns";
	}
}

/* A numeric option's value into its field. Returns 0 or CMD_USAGE. */
static int set_number(struct opts *o, int c, const char *arg)
{
	char *end;
	long v = strtol(arg, &end, 10);

	if (*end || end == arg || v < 0 || v > 100000000) {
		error("option --%s: '%s' is not a valid number", number_option(c), arg);
		return CMD_USAGE;
	}
	o->given |= c == 'n' ? 1u : c == 'O' ? 2u : c == 's' ? 4u : c == 'M' ? 8u : 0u;
	switch (c) {
	case 'n': o->per_task = (int)v; break;
	case 'S': o->max_sessions = (int)v; break;
	case 'o': o->brain.llm.timeout_ms = v; break;
	case 'O': o->options = (int)v; break;
	case 's': o->seed = (uint64_t)v; break;
	case 'j': o->jobs = (int)v; break;
	case 'F': o->allow_failures = v; break;
	case 'G': o->brain_frames = (int)v; break;
	case 'W': o->brain_frame_width = (int)v; break;
	default: o->max_turns = (int)v; break;
	}
	return 0;
}

/* Reads the options; returns 0, CMD_OK after --help, or CMD_USAGE. */
static int parse_options(int argc, char **argv, struct opts *o, int *done)
{
	int c;

	*done = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'd': o->db = optarg; break;
		case 't': o->tasks = optarg; break;
		case 'T': o->regen_category = optarg; break;
		case 'r': o->regen_recording = optarg; break;
		case 'b': o->brain_spec = optarg; break;
		case 'u': o->brain.llm.base_url = optarg; break;
		case 'm': o->brain.llm.model = optarg; break;
		case 'k': o->brain.llm.api_key_env = optarg; break;
		case 'R': o->brain.record_path = optarg; break;
		case 'K': {
			char *end;

			o->key_cap = strtod(optarg, &end);
			if (*end || end == optarg || !(o->key_cap > 0 && o->key_cap <= 1)) {
				error("option --key-cap: '%s' is not a share in (0, 1]", optarg);
				return CMD_USAGE;
			}
			o->given |= 16u;
			break;
		}
		case 'q': o->quiet = 1; break;
		case 'A': o->no_audit = 1; break;
		case 'v': o->verbose = 1; break;
		case 'H':
			if (shard_parse(optarg, &o->shard_i, &o->shard_n)) {
				error("--shard: '%s' is not I/N with 0 <= I < N (e.g. 0/4)", optarg);
				return CMD_USAGE;
			}
			break;
		case 'p':
			if (llm_profile_parse(optarg, &o->brain.llm.profile)) {
				error("--profile: unknown provider '%s'", optarg);
				return CMD_USAGE;
			}
			break;
		case 'n': case 'S': case 'o': case 'O': case 's': case 'j': case 'M': case 'F':
		case 'G': case 'W':
			if (set_number(o, c, optarg))
				return CMD_USAGE;
			break;
		case 'h':
			fputs(generate_usage, stdout);
			*done = 1;
			return CMD_OK;
		default:
			fputs(generate_usage, stderr);
			return CMD_USAGE;
		}
	}
	return 0;
}

/* The checks that make a usage error (exit 2) before anything is opened. */
static int check_options(struct opts *o, int argc, int regen)
{
	static const char *const cats[] = { "intention", "exploration", "exploitation", "chain" };
	size_t i;

	if (!o->db || !*o->db) {
		error("--db is required");
		fputs(generate_usage, stderr);
		return CMD_USAGE;
	}
	if (o->options < 2 || o->options > 8)
		return error("--options must be between 2 and 8"), CMD_USAGE;
	if (o->jobs < 1 || o->jobs > 256)
		return error("--jobs must be between 1 and 256"), CMD_USAGE;
	if (o->max_turns < 2)
		return error("--max-turns must be at least 2"), CMD_USAGE;
	if (o->brain_frames > 64 || o->brain_frames == 1)
		return error("--brain-frames must be 0 (none) or from 2 to 64"), CMD_USAGE;
	if (o->brain_frame_width && (o->brain_frame_width < 64 || o->brain_frame_width > 4096))
		return error("--brain-frame-width must be from 64 to 4096"), CMD_USAGE;
	if (o->tasks && check_tasks(o->tasks))
		return CMD_USAGE;
	if (regen && o->shard_n)
		return error("--shard applies to generate; regenerate works on the store's recordings"),
		       CMD_USAGE;
	if (regen) {
		if (!o->regen_category || strchr(o->regen_category, '.'))
			return error("--task CATEGORY is required (intention, exploration, exploitation or chain)"),
			       CMD_USAGE;
		for (i = 0; i < ARRAY_SIZE(cats) && strcmp(o->regen_category, cats[i]); i++)
			;
		if (i == ARRAY_SIZE(cats))
			return error("--task: unknown category '%s'", o->regen_category), CMD_USAGE;
	} else if (optind >= argc) {
		error("no recording given");
		fputs(generate_usage, stderr);
		return CMD_USAGE;
	}
	if (brain_parse_spec(o->brain_spec, &o->brain))
		return error("%s", err_msg()), CMD_USAGE;
	if (o->brain.kind != BRAIN_LOCAL && (!o->brain.llm.model || !*o->brain.llm.model))
		return error("--model is required with --brain %s", o->brain_spec), CMD_USAGE;
	if (o->brain.kind == BRAIN_OPENAI && (!o->brain.llm.base_url || !*o->brain.llm.base_url))
		return error("--base-url is required with --brain openai"), CMD_USAGE;
	return 0;
}

/* The run's configuration as stored in runs.config. */
static void run_config(const struct opts *o, int regen, char *out, size_t size)
{
	char host[128] = "", shard[32] = "null";

	gethostname(host, sizeof(host) - 1);
	if (o->shard_n)
		snprintf(shard, sizeof(shard), "\"%d/%d\"", o->shard_i, o->shard_n);
	snprintf(out, size,
		 "{\"tasks\":\"%s\",\"per_task\":%d,\"options\":%d,\"jobs\":%d,"
		 "\"max_turns\":%d,\"key_cap\":%g,\"regenerate\":%s,\"shard\":%s,\"pid\":%ld,"
		 "\"host\":\"%s\"}",
		 o->tasks ? o->tasks : "all", o->per_task, o->options, o->jobs, o->max_turns,
		 o->key_cap,
		 regen ? "true" : "false", shard, (long)getpid(), host);
}

/*
 * regenerate: the folders of the store's recordings (of --recording only,
 * when given), in *paths (strings owned by *doc). Returns 0 or -1 after
 * printing the error.
 */
static int regen_paths(struct store *st, const struct opts *o, cJSON **doc,
		       const char ***paths, size_t *n)
{
	const cJSON *it;
	int rc;

	*n = 0;
	if (o->regen_recording) {
		cJSON *r = NULL;

		rc = store_recording_get(st, o->regen_recording, &r);
		cJSON_Delete(r);
		if (rc == ENG_ENOTFOUND)
			return error("--recording: no recording '%s' in '%s'", o->regen_recording, o->db);
		if (rc)
			return error_code(rc, o->db);
	}
	rc = store_recording_list(st, doc);
	if (rc)
		return error_code(rc, o->db);
	*paths = calloc((size_t)cJSON_GetArraySize(*doc) + 1, sizeof(**paths));
	if (!*paths)
		return error("out of memory");
	cJSON_ArrayForEach(it, *doc) {
		const char *id = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(it, "id"));
		const char *root = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(it, "root"));

		if (o->regen_recording && (!id || strcmp(id, o->regen_recording)))
			continue;
		if (!root)
			return error("recording '%s' has no stored folder", id ? id : "?");
		(*paths)[(*n)++] = root;
	}
	return 0;
}

static void gen_params_of(const struct opts *o, int regen, struct printer *pr,
			  struct gen_params *gp)
{
	int g;

	memset(gp, 0, sizeof(*gp));
	gp->regenerate = regen;
	gp->category = o->regen_category;
	for (g = 0; g < SUBTASK_NGROUPS; g++) {
		enum subtask st;
		enum metric m;

		subtask_group(g, &st, &m);
		gp->groups[g] = task_selected(o->tasks, g) &&
				(!regen || !strcmp(subtask_info(st)->category, o->regen_category));
	}
	gp->per_task = o->per_task;
	gp->max_sessions = o->max_sessions ? o->max_sessions : 4 * o->per_task + 8;
	gp->jobs = o->jobs;
	gp->shard_i = o->shard_i;
	gp->shard_n = o->shard_n;
	gp->seed = o->seed;
	gp->db = o->db;
	gp->cache = o->brain.kind == BRAIN_OPENAI;
	agent_defaults(&gp->agent);
	gp->agent.max_turns = o->max_turns;
	gp->agent.brain_frames = o->brain_frames;
	gp->agent.brain_frame_width = o->brain_frame_width;
	gp->agent.truth.qc.n_options = o->options;
	gp->agent.truth.key_cap = o->key_cap;
	/* the prior holds as many answers as a group's keys, at least 8 per option */
	gp->agent.truth.prior_keys = o->per_task > 8 * o->options ? o->per_task : 8 * o->options;
	gp->hooks.ctx = pr;
	gp->hooks.progress = on_progress;
	gp->hooks.drop = on_drop;
	gp->hooks.rec_error = on_rec_error;
	gp->hooks.no_candidates = on_no_candidates;
}

/* Opens the store: regenerate never starts an empty one. Returns 0 or CMD_FAILED. */
static int open_store(const struct opts *o, int regen, struct store **st)
{
	int rc;

	if (regen && access(o->db, F_OK)) {
		int e = errno;

		error("cannot open '%s': %s", o->db, strerror(e));
		return CMD_FAILED;
	}
	rc = store_open(o->db, 0, st);
	if (rc) {
		error_code(rc, o->db);
		return CMD_FAILED;
	}
	return 0;
}

/*
 * The blind audit of the store's live QAs in the groups this run filled
 * (engine/task/audit.h): one line per group, and a warning for each group
 * whose best text-only solver passes the gate. It never changes the exit
 * status: the set is stored and the numbers say what it is worth.
 */
static void report_audit(struct store *st, const struct gen_totals *t,
			 const struct gen_params *gp)
{
	struct audit_params ap = { .folds = 5, .seed = 1 };
	struct audit_report rep;
	char tasks[SUBTASK_NGROUPS * 64] = "", name[96];
	size_t len = 0;
	int g, i;

	for (g = 0; g < SUBTASK_NGROUPS; g++) {
		if (!gp->groups[g] || !t->by_group[g])
			continue;
		subtask_group_name(g, name, sizeof(name));
		len += (size_t)snprintf(tasks + len, sizeof(tasks) - len, "%s%s", len ? "," : "",
					name);
	}
	if (!len)
		return;
	if (audit_store(st, "pending,approved,edited,conflict", tasks, &ap, &rep)) {
		warning("blind audit: %s", err_msg());
		return;
	}
	printf("  blind audit (best text-only solver, 95%% lower bound, against chance):\n");
	for (g = 0; g < rep.ngroups; g++) {
		const struct audit_group *x = &rep.groups[g];
		const struct audit_solver *b = x->best >= 0 ? &x->solvers[x->best] : NULL;

		subtask_group_name(x->group, name, sizeof(name));
		if (!b)
			continue;
		printf("  %-42s %s %.1f%% (>= %.1f%%), chance %.1f%%, %ld QAs%s\n", name, b->name,
		       100 * b->acc, 100 * b->lo, 100 * x->chance, x->n,
		       x->flagged ? "  FLAGGED" : "");
		if (!x->flagged)
			continue;
		for (i = 0; i < x->nsolvers; i++) {
			const struct audit_solver *s = &x->solvers[i];
			double margin = s->learned ? AUDIT_LEARNED_MARGIN : AUDIT_RULE_MARGIN;

			if (s->lo - x->chance > margin)
				warning("%s: the text-only solver '%s' picks the key in %.1f%% "
					"(>= %.1f%%) against chance %.1f%%: the options give the key "
					"away ('proxima audit --db F' for all solvers)",
					name, s->name, 100 * s->acc, 100 * s->lo, 100 * x->chance);
		}
	}
}

/* The run: begin, generate, finish, summary. Returns the exit status. */
static int run(struct opts *o, struct store *st, struct brain *b0, int regen,
	       const char *const *paths, size_t npaths)
{
	struct gen_totals t;
	struct gen_params gp;
	struct printer pr = { o, 0, 0 };
	int64_t run_id = 0;
	char config[2048], counts[512];
	int rc, failed;

	run_config(o, regen, config, sizeof(config));
	mark_interrupted(st);
	rc = store_run_begin(st, config, brain_name(b0), brain_model(b0), (int64_t)o->seed,
			     version_string(), &run_id);
	if (rc)
		return error_code(rc, o->db), CMD_FAILED;
	gen_params_of(o, regen, &pr, &gp);
	gp.paths = paths;
	gp.npaths = npaths;
	pr.t0 = now_s();
	rc = gen_run(st, b0, run_id, &gp, &t);
	if (rc && rc != -1)
		error("%s", err_msg());
	failed = rc != 0 || t.failed > o->allow_failures;
	snprintf(counts, sizeof(counts),
		 "{\"qa_new\":%ld,\"qa_kept\":%ld,\"qa_replaced\":%ld,\"dropped\":%ld,\"failed\":%ld,"
		 "\"superseded\":%ld,\"other_shards\":%ld}",
		 t.qa_new, t.qa_kept, t.qa_replaced, t.drops, t.failed, t.superseded, t.other_shards);
	store_run_finish(st, run_id, failed ? "failed" : "ok", counts);
	if (regen && !rc && !o->quiet)
		fprintf(stderr, "regenerate: %ld unreviewed %s QAs superseded\n", t.superseded,
			o->regen_category);
	print_summary(o, &t, now_s() - pr.t0, run_id, &gp);
	if (!o->no_audit && !rc)
		report_audit(st, &t, &gp);
	if (o->shard_n)
		printf("  shard %d/%d: %ld of %zu recordings, %ld left to other shards\n", o->shard_i,
		       o->shard_n, (long)npaths - t.other_shards, npaths, t.other_shards);
	if (t.failed > o->allow_failures)
		error("%ld sessions failed (--allow-failures %ld)%s%s", t.failed, o->allow_failures,
		      t.first_failure[0] ? "; the first: " : "", t.first_failure);
	if (regen && rc)
		error("regenerate: nothing was replaced; the old QAs are as they were");
	return failed ? CMD_FAILED : CMD_OK;
}

static int generate_main(int argc, char **argv, int regen)
{
	struct opts o = { 0 };
	struct store *st = NULL;
	struct brain *b0 = NULL;
	cJSON *recs = NULL;
	const char **paths = NULL;
	size_t npaths = 0;
	int rc, done;

	{
		struct agent_params ap;

		/* the engine's defaults, set once in agent_defaults() and qc_defaults() */
		agent_defaults(&ap);
		o.options = ap.truth.qc.n_options;
		o.key_cap = ap.truth.key_cap;
		o.max_turns = ap.max_turns;
	}
	o.per_task = 60;
	o.seed = 1;
	o.jobs = omp_get_num_procs();
	o.brain_spec = "local";
	llm_config_init(&o.brain.llm);
	o.brain.llm.timeout_ms = 120000;
	rc = parse_options(argc, argv, &o, &done);
	if (rc || done)
		return rc;
	rc = check_options(&o, argc, regen);
	if (rc)
		return rc;
	o.brain.llm.temperature = 0;
	rc = open_store(&o, regen, &st);
	if (rc)
		return rc;
	if (regen)
		reuse_settings(st, &o, o.given);
	o.brain.llm.seed = (long)(o.seed & 0x7fffffff);
	if (regen && regen_paths(st, &o, &recs, &paths, &npaths)) {
		rc = CMD_FAILED;
		goto out;
	}
	/* the local brain makes no request: only the others load libcurl */
	if (o.brain.kind != BRAIN_LOCAL && llm_global_init()) {
		error("cannot initialise libcurl: %s", err_msg());
		rc = CMD_FAILED;
		goto out;
	}
	rc = brain_new(&o.brain, &b0);
	if (rc) {
		error_code(rc, "brain");
		rc = CMD_FAILED;
		goto out;
	}
	if (regen)
		rc = run(&o, st, b0, regen, paths, npaths);
	else
		rc = run(&o, st, b0, regen, (const char *const *)argv + optind,
			 (size_t)(argc - optind));
out:
	free(paths);
	cJSON_Delete(recs);
	brain_free(b0);
	store_close(st);
	llm_global_cleanup();
	return rc;
}

/*
 * The arena of warm_heap: address space only, backed 2 MB at a time as
 * the run touches it (a kitchen's run touches about 50 MB).
 */
#define GEN_HEAP_ARENA ((size_t)1 << 30)

int cmd_generate(int argc, char **argv)
{
	warm_heap(GEN_HEAP_ARENA);
	return generate_main(argc, argv, 0);
}

int cmd_regenerate(int argc, char **argv)
{
	warm_heap(GEN_HEAP_ARENA);
	return generate_main(argc, argv, 1);
}
