/* SPDX-License-Identifier: MIT */
/*
 * `proxima tool`: lists the brain-callable tools, runs one on a recording
 * with JSON arguments (the same registry and the same result objects the
 * brain gets), and hosts `proxima tool astar`.
 */
#include "commands.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "banned.h"
#include "buf.h"
#include "err.h"
#include "recording.h"
#include "registry.h"

#define TOOL_SEE_HELP "see 'proxima tool --help'\n"

/* Largest --args @FILE read (bytes). */
#define TOOL_ARGS_MAX (16u << 20)

static const char tool_usage[] =
	"usage: proxima tool list [--json]\n"
	"       proxima tool NAME RECORDING [--args JSON | --args @FILE] [--compact]\n"
	"                        [--strict] [--layout L]\n"
	"       proxima tool NAME --help\n"
	"       proxima tool astar --map FILE.map --scen FILE.scen [...]\n"
	"\n"
	"Runs one of the native tools the brain calls, on the recording folder\n"
	"RECORDING, and prints its JSON result: {\"ok\":true,...}, or {\"ok\":false,\n"
	"\"error\":...} with the reason (unknown_tool, invalid_json, invalid_arguments\n"
	"with one violation per field, tool_failed). Times are device ns; the world\n"
	"is +Z up, metres.\n"
	"\n"
	"  list            the tools and their arguments; --json prints the OpenAI\n"
	"                  \"tools\" array with every schema\n"
	"  --args JSON     the arguments object (default {}); @FILE reads it from FILE\n"
	"  --compact       print the result on one line\n"
	"  --strict        hold the arguments to the strict schema: by default a\n"
	"                  missing argument that may be null is taken as null\n"
	"  --layout L      force the loader: native, adt, mps, egoexo (default: detect)\n"
	"  -h, --help      show this help; 'proxima tool NAME --help' describes NAME\n"
	"\n"
	"exit status: 0 ok, 1 the tool reported ok=false or the recording did not\n"
	"load, 2 usage error (including an unknown tool name)\n";

/* ======================= Printing ======================= */

/* Prints text wrapped at `width` columns, each line indented by `indent`. */
static void print_wrapped(FILE *f, const char *text, int indent, int width)
{
	const char *p = text;

	while (*p) {
		int room = width - indent, n = 0, last_space = -1;

		while (*p == ' ')
			p++;
		while (n < room && p[n]) {
			if (p[n] == ' ')
				last_space = n;
			n++;
		}
		if (p[n] && last_space > 0)
			n = last_space;
		fprintf(f, "%*s%.*s\n", indent, "", n, p);
		p += n;
	}
}

/* "integer", "array|null", ... for a property schema. */
static void type_text(const cJSON *ps, char *b, size_t n)
{
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(ps, "type"), *x;
	size_t used = 0;

	b[0] = '\0';
	if (cJSON_IsString(t)) {
		snprintf(b, n, "%s", t->valuestring);
		return;
	}
	cJSON_ArrayForEach(x, t) {
		int w = snprintf(b + used, n - used, "%s%s", used ? "|" : "", x->valuestring);

		if (w < 0 || (size_t)w >= n - used)
			return;
		used += (size_t)w;
	}
	if (!used)
		snprintf(b, n, "any");
}

static void print_args(FILE *f, const struct schema *s, bool details)
{
	const cJSON *props = cJSON_GetObjectItemCaseSensitive(schema_doc(s), "properties");
	const cJSON *p;
	char type[64];

	if (!details) {
		fprintf(f, "      args:");
		cJSON_ArrayForEach(p, props) {
			type_text(p, type, sizeof(type));
			fprintf(f, " %s (%s)%s", p->string, type, p->next ? "," : "");
		}
		fprintf(f, "%s\n", props && props->child ? "" : " none");
		return;
	}
	fprintf(f, "\narguments (a JSON object):\n");
	cJSON_ArrayForEach(p, props) {
		const cJSON *d = cJSON_GetObjectItemCaseSensitive(p, "description");

		type_text(p, type, sizeof(type));
		fprintf(f, "  %s (%s)\n", p->string, type);
		if (cJSON_IsString(d))
			print_wrapped(f, d->valuestring, 6, 78);
	}
}

static int tool_list(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, as_json = 0, rc;
	size_t i;

	optind = 1;
	while ((c = getopt_long(argc, argv, "jh", opts, NULL)) != -1) {
		switch (c) {
		case 'j': as_json = 1; break;
		case 'h': fputs(tool_usage, stdout); return CMD_OK;
		default: fputs(TOOL_SEE_HELP, stderr); return CMD_USAGE;
		}
	}
	if (optind < argc) {
		error("'proxima tool list' takes no argument, got '%s'", argv[optind]);
		return CMD_USAGE;
	}
	rc = tool_registry_check();
	if (rc) {
		error_code(rc, "tool registry");
		return CMD_FAILED;
	}
	if (as_json) {
		cJSON *arr = NULL;
		char *text;

		rc = tool_openai_tools(&arr);
		if (rc) {
			error_code(rc, "tool list");
			return CMD_FAILED;
		}
		text = cJSON_Print(arr);
		cJSON_Delete(arr);
		if (!text) {
			error("out of memory");
			return CMD_FAILED;
		}
		printf("%s\n", text);
		cJSON_free(text);
		return CMD_OK;
	}
	for (i = 0; i < tool_count(); i++) {
		const struct tool_def *t = tool_at(i);
		const struct schema *s;

		if (tool_schema(t, &s))
			continue; /* checked above */
		printf("%-20s %s\n", t->name, tool_summary(t));
		print_args(stdout, s, false);
	}
	printf("\n'proxima tool NAME --help' describes a tool and its arguments.\n");
	return CMD_OK;
}

static int tool_help(const struct tool_def *t)
{
	const struct schema *s;
	int rc = tool_schema(t, &s);

	if (rc) {
		error_code(rc, t->name);
		return CMD_FAILED;
	}
	printf("usage: proxima tool %s RECORDING --args JSON\n\n", t->name);
	print_wrapped(stdout, tool_description(t), 0, 78);
	print_args(stdout, s, true);
	printf("\nArguments left out are taken as null unless --strict is given.\n");
	return CMD_OK;
}

/* Explains a failed result on stderr, naming each field at fault. */
static void report_failure(const char *name, const cJSON *res)
{
	const cJSON *kind = cJSON_GetObjectItemCaseSensitive(res, "error");
	const cJSON *detail = cJSON_GetObjectItemCaseSensitive(res, "detail");
	const cJSON *viol = cJSON_GetObjectItemCaseSensitive(res, "violations"), *v;
	const char *k = cJSON_IsString(kind) ? kind->valuestring : "?";

	if (!strcmp(k, "invalid_arguments")) {
		error("invalid arguments for '%s':", name);
		cJSON_ArrayForEach(v, viol) {
			const cJSON *p = cJSON_GetObjectItemCaseSensitive(v, "path");
			const cJSON *m = cJSON_GetObjectItemCaseSensitive(v, "message");

			fprintf(stderr, "  %s: %s\n",
				cJSON_IsString(p) && p->valuestring[0] ? p->valuestring : "(arguments)",
				cJSON_IsString(m) ? m->valuestring : "?");
		}
		return;
	}
	if (!strcmp(k, "invalid_json")) {
		error("--args is not valid JSON: %s",
		      cJSON_IsString(detail) ? detail->valuestring : "?");
		return;
	}
	error("tool '%s' failed: %s", name, cJSON_IsString(detail) ? detail->valuestring : k);
}

/* The --args text: inline, or the contents of @FILE (caller frees *out). */
static int read_args(const char *arg, char **out)
{
	struct buf b;
	int rc = 0;

	if (arg[0] != '@') {
		*out = strdup(arg);
		return *out ? 0 : error("out of memory");
	}
	buf_init(&b, TOOL_ARGS_MAX);
	if (buf_read_file(&b, arg + 1))
		rc = error("%s", err_msg());
	if (!rc) {
		*out = b.ptr ? buf_detach(&b) : strdup("");
		if (!*out)
			rc = error("out of memory");
	}
	buf_release(&b);
	return rc;
}

static int tool_run(const struct tool_def *t, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "args", required_argument, NULL, 'a' },
		{ "compact", no_argument, NULL, 'c' },
		{ "strict", no_argument, NULL, 's' },
		{ "layout", required_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *args_opt = "{}", *path;
	enum rec_layout layout = REC_LAYOUT_AUTO;
	struct recording *rec = NULL;
	struct tool_ctx *ctx = NULL;
	cJSON *res = NULL;
	char *args = NULL, *text = NULL;
	int c, compact = 0, strict = 0, rc, ret = CMD_FAILED;

	optind = 1;
	while ((c = getopt_long(argc, argv, "a:csl:h", opts, NULL)) != -1) {
		switch (c) {
		case 'a': args_opt = optarg; break;
		case 'c': compact = 1; break;
		case 's': strict = 1; break;
		case 'l':
			if (recording_layout_from_name(optarg, &layout)) {
				char names[256];

				recording_layout_names(names, sizeof(names));
				error("unknown layout '%s' (%s)", optarg, names);
				return CMD_USAGE;
			}
			break;
		case 'h': return tool_help(t);
		default: fputs(TOOL_SEE_HELP, stderr); return CMD_USAGE;
		}
	}
	if (optind + 1 != argc) {
		if (optind == argc)
			error("'proxima tool %s' needs a RECORDING folder", t->name);
		else
			error("unexpected argument '%s'", argv[optind + 1]);
		fputs(TOOL_SEE_HELP, stderr);
		return CMD_USAGE;
	}
	path = argv[optind];
	if (read_args(args_opt, &args))
		return CMD_FAILED;
	rc = recording_load(path, layout, &rec);
	if (rc) {
		error_code(rc, path);
		goto out;
	}
	rc = tool_ctx_new(rec, &ctx);
	if (rc) {
		error_code(rc, "tool context");
		goto out;
	}
	tool_ctx_set_flags(ctx, strict ? 0 : TOOL_CTX_FILL_NULLS);
	rc = tool_call(ctx, t->name, args, &res);
	if (!res) {
		error_code(rc, t->name);
		goto out;
	}
	text = compact ? cJSON_PrintUnformatted(res) : cJSON_Print(res);
	if (!text) {
		error("out of memory");
		goto out;
	}
	printf("%s\n", text);
	if (rc) {
		report_failure(t->name, res);
		goto out;
	}
	ret = CMD_OK;
out:
	cJSON_free(text);
	cJSON_Delete(res);
	tool_ctx_free(ctx);
	recording_free(rec);
	free(args);
	return ret;
}

int cmd_tool(int argc, char **argv)
{
	const struct tool_def *t;

	if (argc < 2) {
		fputs(tool_usage, stderr);
		return CMD_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		fputs(tool_usage, stdout);
		return CMD_OK;
	}
	if (!strcmp(argv[1], "astar"))
		return cmd_tool_astar(argc - 1, argv + 1);
	if (!strcmp(argv[1], "list"))
		return tool_list(argc - 1, argv + 1);
	t = tool_find(argv[1]);
	if (!t) {
		error("'%s' is not a tool; see 'proxima tool list'", argv[1]);
		return CMD_USAGE;
	}
	return tool_run(t, argc - 1, argv + 1);
}
