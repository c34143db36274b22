/* SPDX-License-Identifier: MIT */
/*
 * `proxima export`: writes the reviewed QAs of a store in an evaluation or
 * training format (EgoProx, JSONL, lmms-eval, VLMEvalKit, Label Studio,
 * LLaVA) with a manifest, optionally extracting the clip frames.
 */
#include "commands.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "banned.h"
#include "err.h"
#include "version.h"
#include "export.h"
#include "store.h"

static const char export_usage[] =
	"usage: proxima export --db FILE --format FMT -o DIR [--status LIST]\n"
	"                      [--tasks LIST] [--frames N] [--ffmpeg PROG]\n"
	"                      [--media-url URL | --local-files-root DIR] [--no-audit]\n"
	"\n"
	"Writes the QAs of a store to DIR in FMT, with DIR/manifest.json (counts by\n"
	"group and status, filters, generation runs, engine version, options, the\n"
	"blind audit, SHA-256 of the sorted ids) and a dataset card DIR/README.md\n"
	"(Hugging Face conventions; its numbers are the manifest's) with its charts\n"
	"in DIR/plots/. The store is opened read-only. docs/export.md describes\n"
	"every format and the card.\n"
	"\n"
	"  --db FILE       the store\n"
	"  --format FMT    egoprox (egoprox.json), jsonl (records.jsonl),\n"
	"                  lmms-eval (proxima.jsonl, proxima.yaml, utils.py),\n"
	"                  vlmevalkit (Proxima.tsv), labelstudio (tasks.json,\n"
	"                  config.xml), llava (llava.json)\n"
	"  -o, --out DIR   output folder (created when missing)\n"
	"  --status LIST   statuses to export (default approved,edited)\n"
	"  --tasks LIST    categories, CATEGORY.SUBTASK or CATEGORY.SUBTASK/METRIC,\n"
	"                  comma-separated (default: all)\n"
	"  --frames N      extract N frames per QA from the recording's video into\n"
	"                  DIR/Frames/<id>/001.jpg ..., at most 640 px wide, in one\n"
	"                  pass per recording (default: list the intended names and\n"
	"                  the stored frame times only)\n"
	"  --ffmpeg PROG   ignored: frames are decoded in-process (kept for scripts)\n"
	"  --media-url URL labelstudio: the videos from `proxima review serve` at URL\n"
	"                  (tasks get URL/media/<id>#t=START,END)\n"
	"  --local-files-root DIR\n"
	"                  labelstudio: Label Studio's LOCAL_FILES_DOCUMENT_ROOT; tasks\n"
	"                  get /data/local-files/?d=<video path under DIR>#t=START,END\n"
	"                  (the default, with DIR = /)\n"
	"  --no-audit      leave the blind audit out of the manifest and the card\n"
	"  -h, --help      show this help\n";

static int usage_error(const char *msg, const char *arg)
{
	if (arg)
		error("export: %s '%s'", msg, arg);
	else
		error("export: %s", msg);
	fputs(export_usage, stderr);
	return CMD_USAGE;
}

static const struct option export_opts[] = {
	{ "db", required_argument, NULL, 'd' },
	{ "format", required_argument, NULL, 'f' },
	{ "out", required_argument, NULL, 'o' },
	{ "status", required_argument, NULL, 's' },
	{ "tasks", required_argument, NULL, 't' },
	{ "frames", required_argument, NULL, 'n' },
	{ "ffmpeg", required_argument, NULL, 'F' },
	{ "media-url", required_argument, NULL, 'M' },
	{ "local-files-root", required_argument, NULL, 'L' },
	{ "no-audit", no_argument, NULL, 'A' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 }
};

/* The options into p, *db, *fmt and *no_audit. Returns 0 or CMD_USAGE. */
static int export_parse(int argc, char **argv, struct export_params *p, const char **db,
			const char **fmt, int *no_audit)
{
	char *end;
	long n;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "ho:", export_opts, NULL)) != -1) {
		switch (c) {
		case 'd': *db = optarg; break;
		case 'f': *fmt = optarg; break;
		case 'o': p->dir = optarg; break;
		case 's':
			if (store_status_list_check(optarg)) {
				error("--status: %s", err_msg());
				return CMD_USAGE;
			}
			p->status = optarg;
			break;
		case 't': p->tasks = optarg; break;
		case 'n':
			errno = 0;
			n = strtol(optarg, &end, 10);
			if (errno || *end || end == optarg || n < 1 || n > EXPORT_MAX_FRAMES)
				return usage_error("--frames must be an integer in 1..256, not",
						   optarg);
			p->frames = (int)n;
			break;
		case 'F':
			warning("--ffmpeg is no longer used: frames are decoded in-process");
			break;
		case 'M': p->media_url = optarg; break;
		case 'L': p->local_files_root = optarg; break;
		case 'A': *no_audit = 1; break;
		default:
			fputs(export_usage, stderr);
			return CMD_USAGE;
		}
	}
	if (optind != argc)
		return usage_error("unexpected argument", argv[optind]);
	return 0;
}

/* What the options must hold together, and the format. Returns 0 or CMD_USAGE. */
static int export_check(struct export_params *p, const char *db, const char *fmt)
{
	if (!db)
		return usage_error("no store given (--db FILE)", NULL);
	if (!fmt)
		return usage_error("no format given (--format FMT)", NULL);
	if (!p->dir)
		return usage_error("no output folder given (-o DIR)", NULL);
	p->format = export_format_from_name(fmt);
	if (p->format == EXPORT_NFORMAT)
		return usage_error("unknown format", fmt);
	if (p->status && !*p->status)
		return usage_error("--status is empty", NULL);
	if (p->media_url && p->local_files_root)
		return usage_error("give --media-url or --local-files-root, not both", NULL);
	if ((p->media_url || p->local_files_root) && p->format != EXPORT_LABELSTUDIO)
		return usage_error("--media-url and --local-files-root go with --format labelstudio",
				   NULL);
	if (p->media_url && strncmp(p->media_url, "http://", 7) &&
	    strncmp(p->media_url, "https://", 8))
		return usage_error("--media-url must start with http:// or https://, not",
				   p->media_url);
	err_clear();
	if (export_tasks_check(p->tasks)) {
		error("export: %s", err_msg());
		return CMD_USAGE;
	}
	return 0;
}

/* The summary lines of a finished export. */
static void export_report(const struct export_params *p, const struct export_summary *sum)
{
	printf("exported %zu QAs as %s to '%s' (ids sha256 %.16s...)\n", sum->exported,
	       export_format_name(p->format), p->dir, sum->ids_sha256);
	if (sum->skipped)
		printf("skipped %zu matching QAs the format cannot hold (see manifest.json)\n",
		       sum->skipped);
	if (p->frames > 0)
		printf("frames: %zu written\n", sum->frames_written);
	if (sum->no_video)
		warning("%zu QAs have no usable video: their frames are listed, not extracted "
			"(see manifest.json)", sum->no_video);
	if (!sum->exported)
		warning("no QA matched (status '%s'%s%s)", p->status ? p->status :
			EXPORT_DEFAULT_STATUS, p->tasks ? ", tasks " : "", p->tasks ? p->tasks : "");
}

int cmd_export(int argc, char **argv)
{
	struct export_params p;
	struct export_summary sum;
	struct store *st = NULL;
	const char *db = NULL, *fmt = NULL;
	cJSON *audit = NULL;
	int rc, no_audit = 0;

	if (cmd_wants_help(argc, argv)) {
		fputs(export_usage, stdout);
		return CMD_OK;
	}
	memset(&p, 0, sizeof(p));
	p.engine_version = version_string();
	rc = export_parse(argc, argv, &p, &db, &fmt, &no_audit);
	if (!rc)
		rc = export_check(&p, db, fmt);
	if (rc)
		return rc;
	rc = store_open(db, STORE_READONLY, &st);
	if (rc) {
		error_code(rc, db);
		return CMD_FAILED;
	}
	/* the blind audit runs here: the export module sits below engine/task/ */
	if (!no_audit) {
		rc = audit_store_json(st, p.status ? p.status : EXPORT_DEFAULT_STATUS, NULL, &audit);
		if (rc) {
			error("export: blind audit: %s", err_msg());
			store_close(st);
			return CMD_FAILED;
		}
		p.audit = audit;
	}
	rc = export_run(st, &p, &sum);
	store_close(st);
	cJSON_Delete(audit);
	if (rc) {
		error_code(rc, "export");
		return CMD_FAILED;
	}
	export_report(&p, &sum);
	return CMD_OK;
}
