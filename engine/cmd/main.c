/* SPDX-License-Identifier: MIT */
/* proxima: argv -> command table -> cmd_*(), exit codes 0/1/2. */
#include "commands.h"

#include <stdio.h>
#include <string.h>

#include "err.h"
#include "version.h"

static const struct command commands[] = {
	{ "synth", cmd_synth, "write a synthetic recording" },
	{ "inspect", cmd_inspect, "describe a recording folder" },
	{ "frames", cmd_frames, "write the frames of a recording at device times (JPEG)" },
	{ "generate", cmd_generate, "generate QAs from recordings into a store" },
	{ "regenerate", cmd_regenerate, "replace the unreviewed QAs of one category" },
	{ "stats", cmd_stats, "counts and QC figures of a store" },
	{ "review", cmd_review, "review generated QAs (web page and CLI)" },
	{ "export", cmd_export, "export reviewed QAs (EgoProx, JSONL, lmms-eval, ...)" },
	{ "predict", cmd_predict, "ask a multimodal model for an export's answers" },
	{ "eval", cmd_eval, "score model answers (EgoProx metrics)" },
	{ "audit", cmd_audit, "how well solvers that never see the video answer the QAs" },
	{ "report", cmd_report, "the figures of a store as pictures (HTML page, SVG, JSON)" },
	{ "merge", cmd_merge, "merge shard stores into one by QA id" },
	{ "check", cmd_check, "check a store: integrity, orphans, lost replacements" },
	{ "tool", cmd_tool, "run a native 3D tool" },
};

int cmd_wants_help(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
			return 1;
	}
	return 0;
}

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: proxima <command> [options]\n\ncommands:\n");
	for (i = 0; i < ARRAY_SIZE(commands); i++)
		fprintf(f, "  %-12s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\n'proxima <command> --help' describes each one.\n");
}

int main(int argc, char **argv)
{
	size_t i;

	if (argc < 2) {
		usage(stderr);
		return CMD_USAGE;
	}
	if (!strcmp(argv[1], "help") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(stdout);
		return CMD_OK;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		printf("proxima %s\n", version_string());
		return CMD_OK;
	}
	for (i = 0; i < ARRAY_SIZE(commands); i++) {
		const struct command *c = &commands[i];

		if (strcmp(argv[1], c->name))
			continue;
		return c->fn(argc - 1, argv + 1);
	}
	error("'%s' is not a proxima command; see 'proxima help'", argv[1]);
	return CMD_USAGE;
}
