/* SPDX-License-Identifier: MIT */
/*
 * The subcommand table (git builtin.h style). To add a command: write
 * `int cmd_foo(int argc, char **argv)` in engine/cmd_foo.c, declare it
 * here, and add a row to commands[] in engine/main.c. Each command parses
 * its own options with getopt_long, prints its own --help, and returns
 * 0 (ok), 1 (failed) or 2 (usage).
 */
#ifndef COMMANDS_H
#define COMMANDS_H

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;    /* one line for `proxima help` */
};

/* Exit codes shared by every command. */
enum { CMD_OK = 0, CMD_FAILED = 1, CMD_USAGE = 2 };

int cmd_synth(int argc, char **argv);
int cmd_inspect(int argc, char **argv);
int cmd_frames(int argc, char **argv);
int cmd_stats(int argc, char **argv);
/* Moving AI benchmark runner, reached as `proxima tool astar`. */
int cmd_tool_astar(int argc, char **argv);
/* `proxima tool`: list and run the brain-callable tools; dispatches `tool astar`. */
int cmd_tool(int argc, char **argv);
int cmd_generate(int argc, char **argv);
int cmd_regenerate(int argc, char **argv);
int cmd_review(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_eval(int argc, char **argv);
int cmd_predict(int argc, char **argv);
int cmd_audit(int argc, char **argv);
/* `proxima report`: runs the blind audit and writes the report (engine/out/report.h). */
int cmd_report(int argc, char **argv);

struct store;
struct audit_params;
struct audit_report;
/*
 * The blind audit of the QAs of st with one of the statuses in the comma
 * list status, in the groups tasks selects (NULL: all), into *out; shared
 * by `audit` and the report `generate` ends with. Returns 0 or an ENG_*
 * code with err_msg() set.
 */
int audit_store(struct store *st, const char *status, const char *tasks,
		const struct audit_params *p, struct audit_report *out);
struct cJSON;
/*
 * audit_store() with the default settings (5 folds, seed 1), as the JSON
 * of audit_report_json() in *out (caller frees): what `report`, `export`
 * (the dataset card) and the review page's report view show. Returns 0
 * or an ENG_* code with err_msg() set.
 */
int audit_store_json(struct store *st, const char *status, const char *tasks,
		     struct cJSON **out);
int cmd_merge(int argc, char **argv);
int cmd_check(int argc, char **argv);

/*
 * Returns 1 when argv holds -h or --help (before any "--"), so that
 * commands can print usage before validating anything else.
 */
int cmd_wants_help(int argc, char **argv);

#endif /* COMMANDS_H */
