/* SPDX-License-Identifier: MIT */
/*
 * proxima audit: the blind audit of a store (engine/task/audit.h): the
 * accuracy that solvers seeing only the question and option texts reach
 * per group, against chance, with their 95% intervals.
 */
#include "commands.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "audit.h"
#include "err.h"
#include "store.h"
#include "subtask.h"

static const char audit_usage[] =
	"usage: proxima audit --db F [--tasks LIST] [--status LIST] [--folds N]\n"
	"                     [--repeats N] [--json]\n"
	"\n"
	"Scores solvers that never see the video, only the question and the option\n"
	"texts, on the store's QAs, per group: letter prior, key-value prior,\n"
	"longest and shortest option, question-option overlap, the middle number,\n"
	"the options most and least similar to the others (characters, tokens), the\n"
	"shared-token vote, the direction ring, and a learned classifier over words,\n"
	"bigrams and shared-token features, cross-validated in folds grouped by\n"
	"recording, the solvers that train scored as the mean over --repeats fold\n"
	"splits. Chains: a goal-overlap rule and a learned candidate scorer,\n"
	"scored on picking the true action set. A group is flagged when a rule's\n"
	"one-sided 95% lower bound is more than 5 points over chance, or the learned\n"
	"solver's more than 10.\n"
	"\n"
	"  --db F          the store\n"
	"  --tasks LIST    groups: category, category.subtask or category.subtask/metric\n"
	"  --status LIST   statuses to audit (default: pending,approved,edited,conflict)\n"
	"  --folds N       cross-validation folds (default 5)\n"
	"  --repeats N     cross-validations on fresh fold splits, averaged (default 5)\n"
	"  --json          the report as JSON\n"
	"\n"
	"exit status: 0 ok (flags are reported, not failures), 1 failed, 2 usage error\n";

struct loader {
	struct audit_set *set;
	const char *tasks;
	int rc;
};

/* Does LIST select group g? (category, category.subtask, category.subtask/metric) */
static int selected(const char *list, int g)
{
	enum subtask st;
	enum metric m;
	char full[96], item[96];
	const char *p = list, *name;

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

static int on_qa(const struct store_qa *qa, void *ctx)
{
	struct loader *l = ctx;
	char full[128];
	cJSON *opts;
	const char *texts[AUDIT_MAX_OPTIONS];
	struct audit_item it;
	int n = 0, g;
	const cJSON *o;

	snprintf(full, sizeof(full), "%s.%s/%s", qa->category, qa->subtask, qa->metric);
	g = subtask_group_from_name(full);
	if (g < 0 || !selected(l->tasks, g))
		return 0;
	opts = cJSON_Parse(qa->options_json);
	cJSON_ArrayForEach(o, opts)
		if (cJSON_IsString(o) && n < AUDIT_MAX_OPTIONS)
			texts[n++] = o->valuestring;
	memset(&it, 0, sizeof(it));
	it.group = g;
	it.recording = qa->recording_id;
	it.question = qa->question_edited ? qa->question_edited : qa->question;
	it.options = texts;
	it.n = n;
	it.key = qa->answer_index;
	it.answer_json = qa->answer_json;
	l->rc = audit_set_add(l->set, &it);
	cJSON_Delete(opts);
	return l->rc;
}

int audit_store(struct store *st, const char *status, const char *tasks,
		const struct audit_params *p, struct audit_report *out)
{
	struct loader l = { NULL, tasks, 0 };
	struct store_filter flt;
	int rc;

	rc = audit_set_new(&l.set);
	if (rc)
		return err_set(rc, "out of memory");
	memset(&flt, 0, sizeof(flt));
	flt.status = status;
	rc = store_qa_iter(st, &flt, 0, on_qa, &l);
	if (!rc)
		rc = l.rc;
	if (!rc && audit_run(l.set, p, out))
		rc = err_set(ENG_ENOMEM, "out of memory");
	audit_set_free(l.set);
	return rc;
}

int audit_store_json(struct store *st, const char *status, const char *tasks, cJSON **out)
{
	struct audit_params p = { .folds = 5, .seed = 1 };
	struct audit_report *rep = calloc(1, sizeof(*rep));
	int rc;

	if (!rep)
		return err_set(ENG_ENOMEM, "out of memory");
	rc = audit_store(st, status, tasks, &p, rep);
	if (!rc) {
		*out = audit_report_json(rep);
		if (!*out)
			rc = err_set(ENG_ENOMEM, "out of memory");
	}
	free(rep);
	return rc;
}

static void print_report(const struct audit_report *r)
{
	int g, i;

	for (g = 0; g < r->ngroups; g++) {
		const struct audit_group *x = &r->groups[g];
		char name[96];

		subtask_group_name(x->group, name, sizeof(name));
		printf("%s: %ld QAs, %.1f options, chance %.1f%%%s\n", name, x->n, x->options,
		       100 * x->chance, x->flagged ? "  FLAGGED" : "");
		for (i = 0; i < x->nsolvers; i++) {
			const struct audit_solver *s = &x->solvers[i];
			double over = s->lo - x->chance;
			double margin = s->learned ? AUDIT_LEARNED_MARGIN : AUDIT_RULE_MARGIN;

			printf("  %-22s %5.1f%%  [%5.1f%%, %5.1f%%]%s\n", s->name, 100 * s->acc,
			       100 * s->lo, 100 * s->hi, over > margin ? "  over the gate" : "");
		}
	}
}

int cmd_audit(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "db", required_argument, NULL, 'd' },
		{ "tasks", required_argument, NULL, 't' },
		{ "status", required_argument, NULL, 's' },
		{ "folds", required_argument, NULL, 'f' },
		{ "repeats", required_argument, NULL, 'r' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *db = NULL, *status = "pending,approved,edited,conflict";
	struct audit_params p = { .folds = 5, .seed = 1 };
	struct audit_report rep;
	const char *tasks = NULL;
	struct store *st = NULL;
	int c, json = 0, rc = CMD_FAILED;
	char *end;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'd': db = optarg; break;
		case 't': tasks = optarg; break;
		case 's':
			if (store_status_list_check(optarg)) {
				error("--status: %s", err_msg());
				return CMD_USAGE;
			}
			status = optarg;
			break;
		case 'j': json = 1; break;
		case 'f':
			p.folds = (int)strtol(optarg, &end, 10);
			if (*end || p.folds < 2 || p.folds > 50) {
				error("--folds: '%s' is not a number from 2 to 50", optarg);
				return CMD_USAGE;
			}
			break;
		case 'r':
			p.repeats = (int)strtol(optarg, &end, 10);
			if (*end || p.repeats < 1 || p.repeats > 100) {
				error("--repeats: '%s' is not a number from 1 to 100", optarg);
				return CMD_USAGE;
			}
			break;
		case 'h':
			fputs(audit_usage, stdout);
			return CMD_OK;
		default:
			fputs(audit_usage, stderr);
			return CMD_USAGE;
		}
	}
	if (optind < argc) {
		error("unexpected argument '%s'", argv[optind]);
		return CMD_USAGE;
	}
	if (!db || !*db) {
		error("--db is required");
		fputs(audit_usage, stderr);
		return CMD_USAGE;
	}
	if (store_open(db, STORE_READONLY, &st)) {
		error_code(ENG_EIO, db);
		return CMD_FAILED;
	}
	if (audit_store(st, status, tasks, &p, &rep)) {
		error("%s", err_msg());
		goto out;
	}
	if (json) {
		cJSON *j = audit_report_json(&rep);
		char *s = j ? cJSON_Print(j) : NULL;

		if (!s) {
			cJSON_Delete(j);
			error("out of memory");
			goto out;
		}
		printf("%s\n", s);
		cJSON_free(s);
		cJSON_Delete(j);
	} else {
		print_report(&rep);
	}
	rc = CMD_OK;
out:
	store_close(st);
	return rc;
}
