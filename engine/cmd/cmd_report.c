/* SPDX-License-Identifier: MIT */
/*
 * `proxima report`: the figures of a store as pictures. Runs the blind
 * audit (cmd_audit.c) here, at the command level, and hands its JSON to
 * the report writer (engine/out/report.h), which sits below engine/task/.
 */
#include "commands.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "banned.h"
#include "err.h"
#include "report.h"
#include "store.h"
#include "version.h"

static const char report_usage[] =
	"usage: proxima report --db F -o DIR [--status LIST] [--title TEXT] [--no-audit]\n"
	"\n"
	"Writes the figures of a store as pictures: DIR/index.html (one self-contained\n"
	"page, the charts inline as SVG, no script), DIR/report.json (the same figures)\n"
	"and each chart as DIR/<name>.svg. Per group and over all groups: QAs by status\n"
	"and by recording, the key values (directions on a polar plot of the 8 BEV\n"
	"sectors, turn magnitudes, distances, vertical classes, hands, verbs,\n"
	"relations, objects, chain lengths and edge letters), the answer letters\n"
	"against uniform (chi-square), the option-length z-scores, the drop reasons,\n"
	"the blind audit's solvers against chance with their 95% intervals, and the\n"
	"reviewers' acceptance, agreement, kappa and time per item. docs/report.md\n"
	"names every chart. The store is opened read-only.\n"
	"\n"
	"  --db F          the store\n"
	"  -o, --out DIR   output folder (created when missing; its parent must exist)\n"
	"  --status LIST   statuses of the QAs counted and audited\n"
	"                  (default: pending,approved,edited,conflict)\n"
	"  --title TEXT    the page's headline (default: Proxima report)\n"
	"  --no-audit      leave the blind audit out\n"
	"  -h, --help      show this help\n"
	"\n"
	"exit status: 0 ok, 1 failed, 2 usage error\n";

static int usage_error(const char *msg, const char *arg)
{
	if (arg)
		error("report: %s '%s'", msg, arg);
	else
		error("report: %s", msg);
	fputs(report_usage, stderr);
	return CMD_USAGE;
}

int cmd_report(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "db", required_argument, NULL, 'd' },
		{ "out", required_argument, NULL, 'o' },
		{ "status", required_argument, NULL, 's' },
		{ "title", required_argument, NULL, 'T' },
		{ "no-audit", no_argument, NULL, 'A' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *db = NULL, *dir = NULL, *status = REPORT_DEFAULT_STATUS;
	struct report_info info;
	struct report *r = NULL;
	struct store *st = NULL;
	cJSON *audit = NULL;
	int c, no_audit = 0, rc = CMD_FAILED;

	if (cmd_wants_help(argc, argv)) {
		fputs(report_usage, stdout);
		return CMD_OK;
	}
	memset(&info, 0, sizeof(info));
	optind = 1;
	while ((c = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
		switch (c) {
		case 'd': db = optarg; break;
		case 'o': dir = optarg; break;
		case 'T': info.title = optarg; break;
		case 'A': no_audit = 1; break;
		case 's':
			if (!*optarg)
				return usage_error("--status is empty", NULL);
			if (store_status_list_check(optarg)) {
				error("--status: %s", err_msg());
				return CMD_USAGE;
			}
			status = optarg;
			break;
		default:
			fputs(report_usage, stderr);
			return CMD_USAGE;
		}
	}
	if (optind < argc)
		return usage_error("unexpected argument", argv[optind]);
	if (!db || !*db)
		return usage_error("no store given (--db F)", NULL);
	if (!dir || !*dir)
		return usage_error("no output folder given (-o DIR)", NULL);
	err_clear();
	if (store_open(db, STORE_READONLY, &st)) {
		error_code(ENG_EIO, db);
		return CMD_FAILED;
	}
	if (!no_audit && audit_store_json(st, status, NULL, &audit)) {
		error("report: blind audit: %s", err_msg());
		goto out;
	}
	info.store = db;
	info.status = status;
	info.engine_version = version_string();
	if (report_build(st, status, &info, audit, &r)) {
		error("report: %s", err_msg());
		goto out;
	}
	if (report_write(r, dir)) {
		error("report: %s", err_msg());
		goto out;
	}
	printf("wrote '%s/index.html', report.json and %zu charts for %zu QAs (status %s)%s\n", dir,
	       report_nplots(r), report_qas(r), status, no_audit ? ", without the blind audit" : "");
	if (report_unreadable(r))
		warning("%zu QAs have an answer_json the report cannot read in full (counted, "
			"not plotted)", report_unreadable(r));
	rc = CMD_OK;
out:
	report_free(r);
	cJSON_Delete(audit);
	store_close(st);
	return rc;
}
