/* SPDX-License-Identifier: MIT */
/*
 * proxima check: is a store sound? SQLite's integrity check, foreign
 * keys, and the store's own invariants (engine/store/store_check.c); a
 * line per problem, a count, exit 1 on any problem.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "err.h"
#include "store.h"
#include "banned.h"

static const char check_usage[] =
	"usage: proxima check --db F [--quiet]\n"
	"\n"
	"Checks a store without changing it: SQLite's integrity check and foreign\n"
	"keys, then superseded QAs with no live QA in their place (a regenerate\n"
	"that lost its replacements), JSON that does not parse, answer indices\n"
	"outside the options, the per-group counts against the QA table, and\n"
	"reviews, traces and QAs that name rows that are not stored. Prints one\n"
	"line per problem (the first 20 of each kind) and what it checked.\n"
	"\n"
	"  --db F     the store\n"
	"  --quiet    only the problems and the last line\n"
	"\n"
	"exit status: 0 sound, 1 a problem found (or the store cannot be read),\n"
	"2 usage error\n";

static int on_problem(void *ctx, const char *kind, const char *detail)
{
	(void)ctx;
	printf("problem: %s: %s\n", kind, detail);
	return 0;
}

int cmd_check(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "db", required_argument, NULL, 'd' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct store_check_result res;
	struct store *st = NULL;
	const char *db = NULL;
	int c, quiet = 0, rc;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'd': db = optarg; break;
		case 'q': quiet = 1; break;
		case 'h': fputs(check_usage, stdout); return CMD_OK;
		default: fputs(check_usage, stderr); return CMD_USAGE;
		}
	}
	if (optind < argc) {
		error("unexpected argument '%s'", argv[optind]);
		return CMD_USAGE;
	}
	if (!db || !*db) {
		error("--db is required");
		fputs(check_usage, stderr);
		return CMD_USAGE;
	}
	rc = store_open(db, STORE_READONLY, &st);
	if (rc) {
		error("%s", err_msg());
		return CMD_FAILED;
	}
	rc = store_check(st, on_problem, NULL, &res);
	store_close(st);
	if (rc) {
		error("%s", err_msg());
		return CMD_FAILED;
	}
	if (!quiet && !res.problems)
		printf("%s: %" PRId64 " QAs, %" PRId64 " reviews, %" PRId64 " runs\n", db, res.qas,
		       res.reviews, res.runs);
	printf("%ld problem%s found (%ld checks)\n", res.problems, res.problems == 1 ? "" : "s",
	       res.checks);
	return res.problems ? CMD_FAILED : CMD_OK;
}
