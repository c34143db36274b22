/* SPDX-License-Identifier: MIT */
/*
 * `proxima merge`: merges the stores of sharded generate runs into one, by
 * QA id, one transaction per input (store_merge() in store.h).
 */
#include "commands.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "banned.h"
#include "err.h"
#include "store.h"

static const char merge_usage[] =
	"usage: proxima merge --db OUT IN.db...\n"
	"\n"
	"Merges stores into OUT (created when missing), typically those of the\n"
	"shards of one generate (generate --shard i/n), each input in its own\n"
	"transaction:\n"
	"  - recordings: the union\n"
	"  - runs: copied under new ids; the QAs and drops of a run follow it\n"
	"  - QAs by id: of two rows with one id, a reviewed one (approved, rejected,\n"
	"    edited) wins over an unreviewed one, else the one updated last, else\n"
	"    OUT's; the trace goes with its QA\n"
	"  - reviews: all of them; one OUT already holds (same QA, reviewer, decision\n"
	"    and time) is not added again, so no review is lost or doubled\n"
	"  - drops: the union; the LLM cache: by key, the newer entry\n"
	"Merging the same input again adds nothing. Inputs are checked before OUT is\n"
	"touched (a missing file, not a proxima store, another schema version);\n"
	"merging stops at the first input that fails, which leaves nothing in OUT\n"
	"(the inputs before it stay merged).\n"
	"OUT is checked with PRAGMA integrity_check at the end.\n"
	"\n"
	"  --db OUT    the merged store\n"
	"  --quiet     print only the closing line\n"
	"  -h, --help  show this help\n"
	"\n"
	"exit status: 0 ok, 1 failed, 2 usage error\n";

static const char *plural(int64_t n)
{
	return n == 1 ? "" : "s";
}

static void print_input(const char *path, const struct store_merge_stats *m)
{
	printf("%s: %lld QAs (%lld added, %lld replaced, %lld kept), %lld review%s added"
	       " (%lld already there), %lld run%s added (%lld already there),"
	       " %lld recording%s added, %lld drop%s added, %lld cache entr%s written\n",
	/* NOLINTNEXTLINE(bugprone-misplaced-widening-cast): int64_t and long long have the same width */
	       path, (long long)(m->qa_added + m->qa_replaced + m->qa_kept),
	       (long long)m->qa_added, (long long)m->qa_replaced, (long long)m->qa_kept,
	       (long long)m->reviews_added, plural(m->reviews_added),
	       (long long)m->reviews_known, (long long)m->runs_added, plural(m->runs_added),
	       (long long)m->runs_known, (long long)m->recordings_added,
	       plural(m->recordings_added), (long long)m->drops_added,
	       plural(m->drops_added), (long long)m->cache_written,
	       m->cache_written == 1 ? "y" : "ies");
}

static void add_stats(struct store_merge_stats *sum, const struct store_merge_stats *m)
{
	sum->recordings_added += m->recordings_added;
	sum->runs_added += m->runs_added;
	sum->runs_known += m->runs_known;
	sum->qa_added += m->qa_added;
	sum->qa_replaced += m->qa_replaced;
	sum->qa_kept += m->qa_kept;
	sum->reviews_added += m->reviews_added;
	sum->reviews_known += m->reviews_known;
	sum->drops_added += m->drops_added;
	sum->cache_written += m->cache_written;
}

/* 1 when a and b name the same existing file. */
static int same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	if (stat(a, &sa) || stat(b, &sb))
		return 0;
	return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* Checks every input before the output is opened: exists, a current store. */
static int check_inputs(const char *out, char **in, int n)
{
	struct store *st = NULL;
	int i, rc;

	for (i = 0; i < n; i++) {
		if (access(in[i], F_OK)) {
			int e = errno;

			return error("cannot open '%s': %s", in[i], strerror(e));
		}
		if (same_file(out, in[i]))
			return error("'%s' is the output store; it cannot also be an input", in[i]);
		rc = store_open(in[i], STORE_READONLY, &st);
		if (rc)
			return error_code(rc, in[i]);
		store_close(st);
	}
	return 0;
}

int cmd_merge(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "db", required_argument, NULL, 'd' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct store_merge_stats sum, m;
	struct store *st = NULL;
	const char *db = NULL;
	cJSON *stats = NULL;
	char *report = NULL;
	int c, i, quiet = 0, rc = 0;

	memset(&sum, 0, sizeof(sum));
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'd': db = optarg; break;
		case 'q': quiet = 1; break;
		case 'h':
			fputs(merge_usage, stdout);
			return CMD_OK;
		default:
			fputs(merge_usage, stderr);
			return CMD_USAGE;
		}
	}
	if (!db) {
		error("--db is required");
		fputs(merge_usage, stderr);
		return CMD_USAGE;
	}
	if (optind >= argc) {
		error("no input store given");
		fputs(merge_usage, stderr);
		return CMD_USAGE;
	}
	if (check_inputs(db, argv + optind, argc - optind))
		return CMD_FAILED;
	rc = store_open(db, 0, &st);
	if (rc) {
		error_code(rc, db);
		return CMD_FAILED;
	}
	for (i = optind; i < argc; i++) {
		rc = store_merge(st, argv[i], &m);
		if (rc) {
			error_code(rc, argv[i]);
			if (i > optind)
				fprintf(stderr, "the %d input%s before '%s' stay merged\n",
					i - optind, i - optind == 1 ? "" : "s", argv[i]);
			goto out;
		}
		add_stats(&sum, &m);
		if (!quiet)
			print_input(argv[i], &m);
	}
	rc = store_integrity_check(st, &report);
	if (rc) {
		error_code(rc, db);
		goto out;
	}
	if (strcmp(report, "ok")) {
		rc = error("'%s': integrity_check: %s", db, report);
		goto out;
	}
	rc = store_stats(st, &stats);
	if (rc) {
		error_code(rc, db);
		goto out;
	}
	printf("merged %d store%s into %s: %lld QAs added, %lld replaced, %lld kept,"
	       " %lld reviews added, %lld runs added; it holds %.0f QAs and %.0f reviews;"
	       " integrity_check ok\n", argc - optind, argc - optind == 1 ? "" : "s", db,
	       (long long)sum.qa_added, (long long)sum.qa_replaced, (long long)sum.qa_kept,
	       (long long)sum.reviews_added, (long long)sum.runs_added,
	       cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(stats, "total")),
	       cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(
		       cJSON_GetObjectItemCaseSensitive(stats, "reviews"), "total")));
out:
	cJSON_Delete(stats);
	free(report);
	store_close(st);
	return rc ? CMD_FAILED : CMD_OK;
}
