/* SPDX-License-Identifier: MIT */
/*
 * `proxima stats`: counts and QC figures of a store (groups, statuses,
 * drops, answer-letter balance, reviewer agreement), as a table or as the
 * JSON of store_stats().
 */
#include "commands.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "banned.h"
#include "err.h"
#include "store.h"

static const char stats_usage[] =
	"usage: proxima stats --db FILE [--json]\n"
	"\n"
	"Prints the counts and QC figures of a store: QAs by group\n"
	"(category.subtask/metric) and status, dropped candidates by reason, the\n"
	"answer-letter balance with its chi-square test, and reviewer figures.\n"
	"The store is opened read-only and never created.\n"
	"\n"
	"  --db FILE   the store (also accepted as the only argument)\n"
	"  --json      print the JSON of the statistics instead of a table\n"
	"  -h, --help  show this help\n";

static double num(const cJSON *obj, const char *name)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, name);

	return cJSON_IsNumber(v) ? v->valuedouble : (double)NAN;
}

/* A number with `prec` decimals, or "-" for null, right-aligned in width. */
static void print_num(double v, int width, int prec)
{
	if (isnan(v))
		printf(" %*s", width, "-");
	else
		printf(" %*.*f", width, prec, v);
}

static void print_groups(const cJSON *stats)
{
	static const char *const cols[] = {
		"pending", "approved", "rejected", "edited", "conflict", "superseded", "dropped"
	};
	const cJSON *groups = cJSON_GetObjectItemCaseSensitive(stats, "groups"), *g;
	const cJSON *by_status = cJSON_GetObjectItemCaseSensitive(stats, "by_status");
	int w = 5;
	size_t i;

	printf("QAs: %.0f (", num(stats, "total"));
	for (i = 0; i < ARRAY_SIZE(cols); i++)
		printf("%s%s %.0f", i ? ", " : "", cols[i], num(by_status, cols[i]));
	printf(")\n\n");
	if (!cJSON_GetArraySize(groups))
		return;
	cJSON_ArrayForEach(g, groups)
		if ((int)strlen(g->string) > w)
			w = (int)strlen(g->string);
	printf("%-*s %6s", w, "group", "total");
	for (i = 0; i < ARRAY_SIZE(cols); i++)
		printf(" %10s", cols[i]);
	printf(" %6s %7s %6s\n", "accept", "mean_z", "drops");
	cJSON_ArrayForEach(g, groups) {
		printf("%-*s %6.0f", w, g->string, num(g, "total"));
		for (i = 0; i < ARRAY_SIZE(cols); i++)
			printf(" %10.0f", num(g, cols[i]));
		print_num(num(g, "acceptance"), 6, 2);
		print_num(num(g, "mean_z"), 7, 2);
		printf(" %6.0f\n", num(g, "drops"));
	}
	printf("\n");
}

static void print_drops(const cJSON *stats)
{
	const cJSON *drops = cJSON_GetObjectItemCaseSensitive(stats, "drops");
	const cJSON *r;

	printf("dropped candidates: %.0f\n", num(drops, "total"));
	cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(drops, "by_reason"))
		printf("  %-32s %6.0f\n", r->string, r->valuedouble);
	printf("\n");
}

/* One line per option count: "NAME k options, n=N: A 3 B 1 ... chi2 x df d p x". */
static void print_letter_lines(const char *name, int width, const cJSON *letters)
{
	const cJSON *e, *c;

	cJSON_ArrayForEach(e, letters) {
		printf("  %-*s %2.0f options, n=%-5.0f", width, name, num(e, "options"),
		       num(e, "n"));
		cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(e, "counts"))
			printf(" %s %-4.0f", c->string, c->valuedouble);
		printf("  chi2 %.2f df %.0f p %.4f\n", num(e, "chi2"), num(e, "df"),
		       num(e, "p"));
	}
}

static void print_letters(const cJSON *stats)
{
	const cJSON *letters = cJSON_GetObjectItemCaseSensitive(stats, "letters");
	const cJSON *groups = cJSON_GetObjectItemCaseSensitive(stats, "groups"), *g;
	int w = 3;

	printf("answer letters (pending, approved, edited and conflict QAs):\n");
	if (!cJSON_GetArraySize(letters))
		printf("  none\n");
	cJSON_ArrayForEach(g, groups)
		if ((int)strlen(g->string) > w)
			w = (int)strlen(g->string);
	print_letter_lines("all", w, letters);
	cJSON_ArrayForEach(g, groups)
		print_letter_lines(g->string, w, cJSON_GetObjectItemCaseSensitive(g, "letters"));
	printf("mean answer-length z: ");
	if (isnan(num(stats, "mean_z")))
		printf("-\n\n");
	else
		printf("%.3f over %.0f QAs\n\n", num(stats, "mean_z"), num(stats, "z_n"));
}

static void print_reviews(const cJSON *stats)
{
	const cJSON *rv = cJSON_GetObjectItemCaseSensitive(stats, "reviews");
	const cJSON *blind = cJSON_GetObjectItemCaseSensitive(rv, "blind"), *r;

	printf("reviews: %.0f, acceptance", num(rv, "total"));
	print_num(num(rv, "acceptance"), 0, 2);
	printf(", median time per item");
	if (isnan(num(rv, "median_time_ms")))
		printf(" -\n");
	else
		printf(" %.1f s\n", num(rv, "median_time_ms") / 1000.0);
	cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(rv, "reviewers")) {
		printf("  %-24s %6.0f reviews of %.0f items, median", r->string,
		       num(r, "reviews"), num(r, "items"));
		if (isnan(num(r, "median_time_ms")))
			printf(" -\n");
		else
			printf(" %.1f s\n", num(r, "median_time_ms") / 1000.0);
	}
	if (num(blind, "n") > 0)
		printf("  blind answers: %.0f of %.0f agree with the key (%.2f)\n",
		       num(blind, "agree"), num(blind, "n"), num(blind, "rate"));
	cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(rv, "kappa")) {
		const cJSON *a = cJSON_GetObjectItemCaseSensitive(r, "a");
		const cJSON *b = cJSON_GetObjectItemCaseSensitive(r, "b");

		printf("  kappa %s / %s:", cJSON_GetStringValue(a), cJSON_GetStringValue(b));
		print_num(num(r, "kappa"), 0, 3);
		printf(" over %.0f items (%.0f agree)\n", num(r, "n"), num(r, "agree"));
	}
}

int cmd_stats(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "db", required_argument, NULL, 'd' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct store *st = NULL;
	cJSON *stats = NULL;
	const char *db = NULL;
	char *text;
	int as_json = 0, c, rc;

	if (cmd_wants_help(argc, argv)) {
		fputs(stats_usage, stdout);
		return CMD_OK;
	}
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			db = optarg;
			break;
		case 'j':
			as_json = 1;
			break;
		default:
			fputs(stats_usage, stderr);
			return CMD_USAGE;
		}
	}
	if (!db && optind < argc)
		db = argv[optind++];
	if (!db || optind != argc) {
		if (!db)
			error("stats: no store given (--db FILE)");
		else
			error("stats: unexpected argument '%s'", argv[optind]);
		fputs(stats_usage, stderr);
		return CMD_USAGE;
	}
	err_clear();
	rc = store_open(db, STORE_READONLY, &st);
	if (rc) {
		error_code(rc, db);
		return CMD_FAILED;
	}
	rc = store_stats(st, &stats);
	if (rc) {
		error_code(rc, db);
		store_close(st);
		return CMD_FAILED;
	}
	if (as_json) {
		text = cJSON_Print(stats);
		if (!text) {
			rc = error("stats: out of memory");
		} else {
			printf("%s\n", text);
			cJSON_free(text);
		}
	} else {
		printf("store '%s' (schema version %.0f)\n", db, num(stats, "schema_version"));
		print_groups(stats);
		print_drops(stats);
		print_letters(stats);
		print_reviews(stats);
	}
	cJSON_Delete(stats);
	store_close(st);
	return rc ? CMD_FAILED : CMD_OK;
}
