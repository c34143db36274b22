/* SPDX-License-Identifier: MIT */
/*
 * `proxima eval`: scores model answers against an export, a store or an
 * EgoProx results file with EgoProx's evaluate.py semantics.
 */
#include "commands.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "banned.h"
#include "err.h"
#include "eval.h"
#include "store.h"

static const char eval_usage[] =
	"usage: proxima eval (--export DIR | --db FILE [--status LIST] [--tasks LIST])\n"
	"                    --predictions FILE [--json]\n"
	"       proxima eval --predictions RESULTS.json [--json]\n"
	"\n"
	"Scores answers exactly as EgoProx does. An \"answer\" (the field of EgoProx's\n"
	"results files) is compared as evaluate.py compares it: answer == correct_option.\n"
	"A \"response\" (the model's raw text, as proxima predict writes it) first goes\n"
	"through parse_answer_letter of EgoProx's inference scripts (the last \"The\n"
	"correct answer is X\", X in A-E), as in the infer-then-evaluate pipeline.\n"
	"Chains of actions get Act-Acc, Rel-Acc-S and Rel-Acc-L as evaluate.py computes\n"
	"them (unparsable and wrong-length answers leave the denominator). Beside them,\n"
	"under other names: a lenient letter parse, a strict chain score (those answers\n"
	"count as wrong), chance levels, missing answers. docs/export.md gives the rules.\n"
	"\n"
	"  --export DIR       the key: an export folder (format egoprox or jsonl)\n"
	"  --db FILE          the key: the QAs of a store (read-only)\n"
	"  --status LIST      with --db: statuses (default approved,edited)\n"
	"  --tasks LIST       with --db: tasks, as for export\n"
	"  --predictions FILE JSONL of {\"id\", \"response\"} or {\"id\", \"answer\"}, or an\n"
	"                     EgoProx results file (the EgoProx array with \"answer\"\n"
	"                     fields); a results file alone is its own key\n"
	"  --json             print the scores as JSON\n"
	"  -h, --help         show this help\n";

static double num(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

	return cJSON_IsNumber(v) ? v->valuedouble : (double)NAN;
}

/* evaluate.py's pct(): "42.86%"; none as its em dash for an empty group. */
static void pct(char *out, size_t size, double v)
{
	if (isnan(v))
		snprintf(out, size, "\xe2\x80\x94");
	else
		snprintf(out, size, "%.2f%%", v * 100);
}

static int is_chain(const cJSON *g)
{
	const char *kind = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(g, "kind"));

	return kind && !strcmp(kind, "chain");
}

static void print_mc(const cJSON *groups, int w)
{
	const cJSON *g;
	char a[32], b[32], c[32];

	printf("%-*s %6s %8s %9s %8s %8s %9s %9s\n", w, "group", "n", "correct", "accuracy",
	       "chance", "missing", "unparsed", "lenient");
	cJSON_ArrayForEach(g, groups) {
		if (is_chain(g))
			continue;
		pct(a, sizeof(a), num(g, "accuracy"));
		pct(b, sizeof(b), num(g, "chance"));
		pct(c, sizeof(c), num(g, "lenient_accuracy"));
		printf("%-*s %6.0f %8.0f %9s %8s %8.0f %9.0f %9s\n", w, g->string, num(g, "n"),
		       num(g, "correct"), a, b, num(g, "missing"), num(g, "unparsed"), c);
	}
	printf("(accuracy: EgoProx's rule; lenient: proxima's wider letter parse, not an "
	       "EgoProx figure)\n\n");
}

static void print_chains(const cJSON *groups, int w)
{
	const cJSON *g;
	char a[32], b[32], c[32];

	printf("%-*s %6s %9s %8s %9s %9s %10s %6s %7s\n", w, "chain group", "n", "evaluated",
	       "Act-Acc", "Rel-Acc-S", "Rel-Acc-L", "unparsable", "length", "missing");
	cJSON_ArrayForEach(g, groups) {
		const cJSON *cc = cJSON_GetObjectItemCaseSensitive(g, "chance");

		if (!is_chain(g))
			continue;
		pct(a, sizeof(a), num(g, "act_acc"));
		pct(b, sizeof(b), num(g, "rel_acc_s"));
		pct(c, sizeof(c), num(g, "rel_acc_l"));
		printf("%-*s %6.0f %9.0f %8s %9s %9s %10.0f %6.0f %7.0f\n", w, g->string,
		       num(g, "n"), num(g, "evaluated"), a, b, c, num(g, "dropped_unparsable"),
		       num(g, "dropped_length"), num(g, "missing"));
		pct(a, sizeof(a), num(g, "strict_act_acc"));
		pct(b, sizeof(b), num(g, "strict_rel_acc_s"));
		pct(c, sizeof(c), num(g, "strict_rel_acc_l"));
		printf("%-*s strict over %.0f: Act-Acc %s, Rel-Acc-S %s, Rel-Acc-L %s\n", w, "",
		       num(g, "scored"), a, b, c);
		pct(a, sizeof(a), num(cc, "act_acc"));
		pct(b, sizeof(b), num(cc, "rel_acc_s"));
		pct(c, sizeof(c), num(cc, "rel_acc_l"));
		printf("%-*s chance: Act-Acc %s, Rel-Acc-S %s, Rel-Acc-L %s\n", w, "", a, b, c);
	}
	printf("(Act-Acc, Rel-Acc: EgoProx's, over the answers that parse with the key's node "
	       "count; strict: over every item, those answers counting as wrong)\n\n");
}

static void print_scores(const cJSON *r)
{
	const cJSON *g, *groups = cJSON_GetObjectItemCaseSensitive(r, "groups");
	const cJSON *ego = cJSON_GetObjectItemCaseSensitive(r, "egoprox");
	const cJSON *pr = cJSON_GetObjectItemCaseSensitive(r, "predictions");
	char a[32], b[32], c[32];
	int w = 24, mc = 0, ch = 0;

	cJSON_ArrayForEach(g, groups) {
		if ((int)strlen(g->string) > w)
			w = (int)strlen(g->string);
		if (is_chain(g))
			ch = 1;
		else
			mc = 1;
	}
	printf("key items: %.0f; predictions read: %.0f (%.0f answers, %.0f responses; %.0f with "
	       "ids not in the key, %.0f repeated); missing answers: %.0f\n\n", num(r, "items"),
	       num(pr, "total"), num(pr, "answers"), num(pr, "responses"), num(pr, "unknown_ids"),
	       num(pr, "repeated_ids"), num(r, "missing"));
	if (mc)
		print_mc(groups, w);
	if (ch)
		print_chains(groups, w);
	printf("EgoProx groups (evaluate.py%s):\n", num(pr, "responses") > 0
	       ? "; responses through parse_answer_letter first" : "");
	cJSON_ArrayForEach(g, ego) {
		if (is_chain(g)) {
			pct(a, sizeof(a), num(g, "act_acc"));
			pct(b, sizeof(b), num(g, "rel_acc_s"));
			pct(c, sizeof(c), num(g, "rel_acc_l"));
			printf("%-24s Act-Acc: %s, Rel-Acc-S: %s, Rel-Acc-L: %s\n", g->string, a, b, c);
		} else {
			pct(a, sizeof(a), num(g, "accuracy"));
			printf("%-24s ACC: %s\n", g->string, a);
		}
	}
}

static int usage_error(const char *msg)
{
	error("eval: %s", msg);
	fputs(eval_usage, stderr);
	return CMD_USAGE;
}

int cmd_eval(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "export", required_argument, NULL, 'e' },
		{ "db", required_argument, NULL, 'd' },
		{ "status", required_argument, NULL, 's' },
		{ "tasks", required_argument, NULL, 't' },
		{ "predictions", required_argument, NULL, 'p' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *dir = NULL, *db = NULL, *status = NULL, *tasks = NULL, *pred = NULL;
	struct eval_set *set = NULL;
	struct store *st = NULL;
	cJSON *r = NULL;
	int as_json = 0, c, rc = 0;

	if (cmd_wants_help(argc, argv)) {
		fputs(eval_usage, stdout);
		return CMD_OK;
	}
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'e':
			dir = optarg;
			break;
		case 'd':
			db = optarg;
			break;
		case 's':
			if (store_status_list_check(optarg)) {
				error("--status: %s", err_msg());
				return CMD_USAGE;
			}
			status = optarg;
			break;
		case 't':
			tasks = optarg;
			break;
		case 'p':
			pred = optarg;
			break;
		case 'j':
			as_json = 1;
			break;
		default:
			fputs(eval_usage, stderr);
			return CMD_USAGE;
		}
	}
	if (optind != argc)
		return usage_error("unexpected argument");
	if (!pred)
		return usage_error("no predictions given (--predictions FILE)");
	if (dir && db)
		return usage_error("give the key once: --export DIR or --db FILE");
	if ((status || tasks) && !db)
		return usage_error("--status and --tasks go with --db");
	err_clear();
	if (dir) {
		rc = eval_set_from_export(dir, &set);
	} else if (db) {
		rc = store_open(db, STORE_READONLY, &st);
		rc = rc ? rc : eval_set_from_store(st, status, tasks, &set);
		store_close(st);
	} else {
		rc = eval_set_from_results(pred, &set);
	}
	if (rc) {
		error_code(rc, dir ? dir : db ? db : pred);
		return CMD_FAILED;
	}
	if (dir || db)
		rc = eval_set_read_predictions(set, pred);
	rc = rc ? rc : eval_set_score(set, &r);
	if (rc) {
		error_code(rc, pred);
		eval_set_free(set);
		return CMD_FAILED;
	}
	if (as_json) {
		char *text = cJSON_Print(r);

		if (!text) {
			rc = error("eval: out of memory");
		} else {
			printf("%s\n", text);
			cJSON_free(text);
		}
	} else {
		print_scores(r);
	}
	if (!eval_set_size(set))
		warning("the key is empty: nothing was scored");
	cJSON_Delete(r);
	eval_set_free(set);
	return rc ? CMD_FAILED : CMD_OK;
}
