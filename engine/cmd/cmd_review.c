/* SPDX-License-Identifier: MIT */
/*
 * `proxima review`: the review web server (serve) and the same review
 * actions for scripts (list, show, approve, reject, edit, flag, note,
 * answer), all on the store functions of engine/store.h.
 */
#include "commands.h"

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "banned.h"
#include "err.h"
#include "review.h"
#include "store.h"

static const char review_usage[] =
	"usage: proxima review <subcommand> --db FILE [options]\n"
	"\n"
	"  serve [--port N] [--bind ADDR] [--allow-host NAME]... [--reviewer NAME]\n"
	"        [--frames N] [--frame-width W]\n"
	"        serve the review page and its JSON API (default 127.0.0.1:8080;\n"
	"        --port 0 picks a free port); SIGINT or SIGTERM stops it. ADDR is\n"
	"        numeric; off loopback the server prints an access link (a secret)\n"
	"        and answers only to its Host names and those of --allow-host.\n"
	"        Items show their stored frames, else N over the clip (default 8),\n"
	"        W pixels wide (default 640), decoded from the recording's video\n"
	"  list [--category C] [--subtask S] [--metric M] [--status S]\n"
	"       [--recording R] [--limit N] [--offset N] [--json]\n"
	"        list QAs in review order (filters take comma-separated lists)\n"
	"  show ID [--json]                 one QA with its options, key and reviews\n"
	"  approve ID [--note TEXT]         approve the QA\n"
	"  reject ID --reason TEXT          reject it, saying why\n"
	"  edit ID --question TEXT          reword the question (the answer stays)\n"
	"  flag ID [--reason TEXT]          flag it (default reason \"ambiguous\")\n"
	"  note ID --note TEXT              add a note\n"
	"  answer ID --option LETTER        store a blind answer (A.. or 1..)\n"
	"  adjudicate ID --decision approve|reject|edit [--reason TEXT]\n"
	"             [--question TEXT]     settle the item (e.g. a conflict)\n"
	"\n"
	"Each reviewer's latest approve/reject/edit is their verdict; agreeing\n"
	"verdicts decide the status, disagreeing ones make it \"conflict\" until\n"
	"an adjudication (docs/review.md, Decisions).\n"
	"Every action takes --reviewer NAME (default: $USER, else \"reviewer\").\n"
	"Exit status: 0 ok, 1 failed (e.g. no such QA), 2 usage.\n";

/* Everything the subcommands read from the command line. */
#define MAX_ALLOW_HOSTS 16

struct review_args {
	const char *db, *reviewer, *bind;
	const char *reason, *note, *question, *option, *decision;
	const char *allow_hosts[MAX_ALLOW_HOSTS + 1]; /* NULL-terminated */
	int n_allow_hosts;
	struct store_filter filter;
	int port;
	int frames, frame_width;
	int json;
	const char *id;     /* the positional QA id */
};

enum {
	OPT_DB = 256, OPT_REVIEWER, OPT_BIND, OPT_PORT, OPT_REASON, OPT_NOTE, OPT_QUESTION,
	OPT_OPTION, OPT_CATEGORY, OPT_SUBTASK, OPT_METRIC, OPT_STATUS, OPT_RECORDING,
	OPT_LIMIT, OPT_OFFSET, OPT_JSON, OPT_DECISION, OPT_ALLOW_HOST,
	OPT_FRAMES, OPT_FRAME_WIDTH
};

static int parse_i64(const char *what, const char *s, long long lo, long long hi, long long *out)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return error("review: %s '%s' must be an integer in %lld..%lld", what, s, lo, hi);
	*out = v;
	return 0;
}

/* Parses argv (argv[0] is the subcommand). Returns 0 or CMD_USAGE. */
static int parse_args(int argc, char **argv, struct review_args *a)
{
	static const struct option opts[] = {
		{ "db", required_argument, NULL, OPT_DB },
		{ "reviewer", required_argument, NULL, OPT_REVIEWER },
		{ "bind", required_argument, NULL, OPT_BIND },
		{ "port", required_argument, NULL, OPT_PORT },
		{ "reason", required_argument, NULL, OPT_REASON },
		{ "note", required_argument, NULL, OPT_NOTE },
		{ "question", required_argument, NULL, OPT_QUESTION },
		{ "option", required_argument, NULL, OPT_OPTION },
		{ "category", required_argument, NULL, OPT_CATEGORY },
		{ "subtask", required_argument, NULL, OPT_SUBTASK },
		{ "metric", required_argument, NULL, OPT_METRIC },
		{ "status", required_argument, NULL, OPT_STATUS },
		{ "recording", required_argument, NULL, OPT_RECORDING },
		{ "limit", required_argument, NULL, OPT_LIMIT },
		{ "offset", required_argument, NULL, OPT_OFFSET },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "decision", required_argument, NULL, OPT_DECISION },
		{ "allow-host", required_argument, NULL, OPT_ALLOW_HOST },
		{ "frames", required_argument, NULL, OPT_FRAMES },
		{ "frame-width", required_argument, NULL, OPT_FRAME_WIDTH },
		{ NULL, 0, NULL, 0 }
	};
	long long v;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case OPT_DB: a->db = optarg; break;
		case OPT_REVIEWER: a->reviewer = optarg; break;
		case OPT_BIND: a->bind = optarg; break;
		case OPT_PORT:
			if (parse_i64("--port", optarg, 0, 65535, &v))
				return CMD_USAGE;
			a->port = (int)v;
			break;
		case OPT_FRAMES:
			if (parse_i64("--frames", optarg, 1, 256, &v))
				return CMD_USAGE;
			a->frames = (int)v;
			break;
		case OPT_FRAME_WIDTH:
			if (parse_i64("--frame-width", optarg, 16, 8192, &v))
				return CMD_USAGE;
			a->frame_width = (int)v;
			break;
		case OPT_REASON: a->reason = optarg; break;
		case OPT_NOTE: a->note = optarg; break;
		case OPT_QUESTION: a->question = optarg; break;
		case OPT_OPTION: a->option = optarg; break;
		case OPT_CATEGORY: a->filter.category = optarg; break;
		case OPT_SUBTASK: a->filter.subtask = optarg; break;
		case OPT_METRIC: a->filter.metric = optarg; break;
		case OPT_STATUS:
			if (store_status_list_check(optarg)) {
				error("--status: %s", err_msg());
				return CMD_USAGE;
			}
			a->filter.status = optarg;
			break;
		case OPT_RECORDING: a->filter.recording_id = optarg; break;
		case OPT_LIMIT:
			if (parse_i64("--limit", optarg, 0, 1LL << 40, &v))
				return CMD_USAGE;
			a->filter.limit = v;
			break;
		case OPT_OFFSET:
			if (parse_i64("--offset", optarg, 0, 1LL << 40, &v))
				return CMD_USAGE;
			a->filter.offset = v;
			break;
		case OPT_JSON: a->json = 1; break;
		case OPT_DECISION: a->decision = optarg; break;
		case OPT_ALLOW_HOST:
			if (a->n_allow_hosts == MAX_ALLOW_HOSTS) {
				error("review: at most %d --allow-host", MAX_ALLOW_HOSTS);
				return CMD_USAGE;
			}
			a->allow_hosts[a->n_allow_hosts++] = optarg;
			break;
		default:
			return CMD_USAGE;
		}
	}
	if (optind < argc)
		a->id = argv[optind++];
	if (optind < argc) {
		error("review %s: unexpected argument '%s'", argv[0], argv[optind]);
		return CMD_USAGE;
	}
	if (!a->db) {
		error("review %s: no store given (--db FILE)", argv[0]);
		return CMD_USAGE;
	}
	if (!a->reviewer) {
		const char *u = getenv("USER");

		a->reviewer = u && *u ? u : "reviewer";
	}
	return 0;
}

static int open_store(const char *db, unsigned flags, struct store **st)
{
	int rc;

	err_clear();
	if (access(db, F_OK))
		return error("cannot open store '%s': %s", db, strerror(errno));
	rc = store_open(db, flags, st);
	if (rc)
		return error_code(rc, db);
	return 0;
}

static void print_json(const cJSON *j)
{
	char *text = cJSON_Print(j);

	if (text) {
		printf("%s\n", text);
		cJSON_free(text);
	}
}

static const char *str_of(const cJSON *o, const char *k)
{
	const char *s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, k));

	return s ? s : "";
}

static double num_of(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

	return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

/* ======================= serve ======================= */

static int bind_numeric(const char *addr)
{
	unsigned char b[sizeof(struct in6_addr)];

	return inet_pton(AF_INET, addr, b) == 1 || inet_pton(AF_INET6, addr, b) == 1;
}

/* Off loopback: say who can reach the page, and how it is guarded. */
static void warn_off_loopback(const struct review_server *srv, const char *bind)
{
	const char *const *hosts = NULL;
	size_t n = review_server_hosts(srv, &hosts), i;

	warning("review serve: bound to %s, not loopback: anyone who can reach this "
		"machine on port %d can connect", bind, review_server_port(srv));
	fprintf(stderr, "  a browser gets in only through the access link below (it holds a "
		"secret: share it like a password); the server answers to the Host names "
		"localhost, 127.0.0.1, ::1");
	if (strcmp(bind, "0.0.0.0") && strcmp(bind, "::"))
		fprintf(stderr, ", %s", bind);
	for (i = 0; i < n; i++)
		fprintf(stderr, ", %s", hosts[i]);
	fprintf(stderr, " (add more with --allow-host NAME); the traffic is plain HTTP, "
		"not encrypted\n");
}

/* The blind audit of the page's report view (review_config.audit). */
static int serve_audit(struct store *st, const char *status, void *ctx, cJSON **out)
{
	(void)ctx;
	return audit_store_json(st, status, NULL, out);
}

static int review_serve(struct review_args *a)
{
	struct review_config cfg;
	struct review_server *srv = NULL;
	sigset_t set;
	char url[128];
	int sig = 0, rc;

	if (a->bind && !bind_numeric(a->bind)) {
		error("review serve: --bind takes a numeric IPv4 or IPv6 address, not '%s' "
		      "(127.0.0.1 or ::1 serve this machine only; 0.0.0.0 every interface)",
		      a->bind);
		return CMD_USAGE;
	}
	memset(&cfg, 0, sizeof(cfg));
	cfg.db_path = a->db;
	cfg.bind = a->bind;
	cfg.port = a->port;
	cfg.reviewer = a->reviewer;
	cfg.allow_hosts = a->allow_hosts;
	cfg.audit = serve_audit;
	cfg.frames = a->frames;
	cfg.frame_width = a->frame_width;
	/* block the stop signals before the server thread starts, so it inherits the mask */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	signal(SIGPIPE, SIG_IGN);
	if (pthread_sigmask(SIG_BLOCK, &set, NULL))
		return error("review serve: cannot block signals");
	err_clear();
	rc = review_server_start(&cfg, &srv);
	if (rc) {
		error_code(rc, a->db);
		return CMD_FAILED;
	}
	review_server_url(srv, url, sizeof(url));
	if (!review_server_loopback(srv))
		warn_off_loopback(srv, a->bind);
	printf("proxima review: serving '%s' for reviewer '%s' at %s\n", a->db, a->reviewer, url);
	printf("press Ctrl-C to stop\n");
	fflush(stdout);
	while (sigwait(&set, &sig))
		;
	review_server_stop(srv);
	printf("proxima review: stopped (%s)\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
	return CMD_OK;
}

/* ======================= list / show ======================= */

/* The first n bytes of s on one line, cut at a UTF-8 boundary. */
static void print_cut(const char *s, size_t n)
{
	size_t len = strlen(s), i;

	if (len > n) {
		while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
			n--;
	}
	for (i = 0; i < len && i < n; i++)
		putchar(s[i] == '\n' || s[i] == '\t' ? ' ' : s[i]);
	if (len > n)
		fputs("...", stdout);
}

static int review_list(struct review_args *a)
{
	struct store *st = NULL;
	cJSON *page = NULL;
	const cJSON *it;
	int rc;

	if (open_store(a->db, STORE_READONLY, &st))
		return CMD_FAILED;
	rc = store_qa_list(st, &a->filter, &page);
	if (rc) {
		error_code(rc, a->db);
		store_close(st);
		return CMD_FAILED;
	}
	if (a->json) {
		print_json(page);
	} else {
		printf("%-32s %-9s %-40s %9s  %s\n", "id", "status", "group", "t_s", "question");
		cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(page, "items")) {
			char group[160];
			const char *q = *str_of(it, "question_edited") ? str_of(it, "question_edited")
								       : str_of(it, "question");

			snprintf(group, sizeof(group), "%s.%s/%s", str_of(it, "category"),
				 str_of(it, "subtask"), str_of(it, "metric"));
			printf("%-32s %-9s %-40s %9.3f  ", str_of(it, "id"), str_of(it, "status"),
			       group, num_of(it, "t_ns") / 1e9);
			print_cut(q, 60);
			putchar('\n');
		}
		printf("%d of %.0f QAs\n", cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(page, "items")),
		       num_of(page, "total"));
	}
	cJSON_Delete(page);
	store_close(st);
	return CMD_OK;
}

static void show_text(const cJSON *qa)
{
	const cJSON *opts = cJSON_GetObjectItemCaseSensitive(qa, "options"), *o, *r;
	const cJSON *video = cJSON_GetObjectItemCaseSensitive(qa, "video");
	const cJSON *qc = cJSON_GetObjectItemCaseSensitive(qa, "qc");
	int key = (int)(cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(qa, "answer_index"))
			? num_of(qa, "answer_index") : -1);
	int i = 0;

	printf("id:        %s\n", str_of(qa, "id"));
	printf("group:     %s\n", str_of(qa, "group"));
	printf("status:    %s\n", str_of(qa, "status"));
	if (cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(qa, "verdicts"))) {
		const char *sep = "";

		printf("verdicts: ");
		cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(qa, "verdicts")) {
			printf("%s %s %s", sep, str_of(r, "reviewer"), str_of(r, "decision"));
			sep = ",";
		}
		putchar('\n');
	}
	if (cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(qa, "adjudication")))
		printf("adjudged:  %s by %s\n",
		       str_of(cJSON_GetObjectItemCaseSensitive(qa, "adjudication"), "decision"),
		       str_of(cJSON_GetObjectItemCaseSensitive(qa, "adjudication"), "reviewer"));
	printf("recording: %s\n", str_of(qa, "recording_id"));
	printf("T:         %.3f s (clip %.3f .. %.3f s)\n", num_of(qa, "t_ns") / 1e9,
	       num_of(qa, "clip_start_ns") / 1e9, num_of(qa, "clip_end_ns") / 1e9);
	printf("target:    %s\n", str_of(qa, "target"));
	if (cJSON_IsObject(video))
		printf("video:     %s [%.3f, %.3f] s\n", str_of(video, "file"),
		       num_of(video, "start_s"), num_of(video, "end_s"));
	if (*str_of(qa, "question_edited")) {
		printf("question:  %s\n", str_of(qa, "question_edited"));
		printf("generated: %s\n", str_of(qa, "question"));
	} else {
		printf("question:  %s\n", str_of(qa, "question"));
	}
	cJSON_ArrayForEach(o, opts) {
		printf("  %c %c. %s\n", i == key ? '*' : ' ', i < 26 ? 'A' + i : '?',
		       cJSON_GetStringValue(o) ? cJSON_GetStringValue(o) : "");
		i++;
	}
	if (key < 0)
		printf("  (no single key: %s)\n", "the answer is a chain; see --json");
	if (cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(qc, "qc")))
		qc = cJSON_GetObjectItemCaseSensitive(qc, "qc");
	if (cJSON_IsObject(qc)) {
		const cJSON *v;

		printf("qc:       ");
		cJSON_ArrayForEach(v, qc) {
			if (cJSON_IsNumber(v))
				printf(" %s=%g", v->string, v->valuedouble);
			else if (cJSON_IsBool(v))
				printf(" %s=%s", v->string, cJSON_IsTrue(v) ? "true" : "false");
			else if (cJSON_IsString(v) && strlen(v->valuestring) < 40)
				printf(" %s=%s", v->string, v->valuestring);
		}
		putchar('\n');
	}
	printf("reviews:   %d\n", cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(qa, "reviews")));
	cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(qa, "reviews")) {
		const cJSON *b = cJSON_GetObjectItemCaseSensitive(r, "blind_answer_index");

		printf("  %s %-8s %s", str_of(r, "decided_at"), str_of(r, "decision"),
		       str_of(r, "reviewer"));
		if (cJSON_IsNumber(b))
			printf(" answered %c", 'A' + (int)b->valuedouble);
		if (*str_of(r, "reason"))
			printf(" reason: %s", str_of(r, "reason"));
		if (*str_of(r, "note"))
			printf(" note: %s", str_of(r, "note"));
		if (*str_of(r, "edit_after"))
			printf(" wording: %s", str_of(r, "edit_after"));
		if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "adjudication")) ||
		    num_of(r, "adjudication") == 1)
			printf(" (adjudication)");
		putchar('\n');
	}
}

static int review_show(struct review_args *a)
{
	struct store *st = NULL;
	cJSON *qa = NULL;
	int rc;

	if (!a->id) {
		error("review show: no QA id given");
		return CMD_USAGE;
	}
	if (open_store(a->db, STORE_READONLY, &st))
		return CMD_FAILED;
	err_clear();
	rc = review_item(st, NULL, a->id, &qa);
	if (rc == ENG_ENOTFOUND)
		error("no QA '%s' in '%s'", a->id, a->db);
	else if (rc)
		error_code(rc, a->db);
	if (!rc) {
		if (a->json)
			print_json(qa);
		else
			show_text(qa);
	}
	cJSON_Delete(qa);
	store_close(st);
	return rc ? CMD_FAILED : CMD_OK;
}

/* ======================= actions ======================= */

/* "approve 'ID' by NAME (review N); status S" */
static void print_outcome(struct store *st, const char *sub, const struct review_args *a,
			  int adjudication, int64_t review_id)
{
	cJSON *qa = NULL;

	err_clear();
	if (store_qa_get(st, a->id, 0, &qa))
		qa = NULL;
	printf("%s%s '%s' by %s (review %lld); status %s\n", adjudication ? "adjudicate: " : "",
	       sub, a->id, a->reviewer, (long long)review_id, qa ? str_of(qa, "status") : "?");
	cJSON_Delete(qa);
}

static int review_act(const char *sub, struct review_args *a, int adjudication);

static int review_adjudicate(struct review_args *a)
{
	static const char *const verdicts[] = { "approve", "reject", "edit" };
	size_t i;

	if (!a->decision) {
		error("review adjudicate: give --decision approve, reject or edit");
		return CMD_USAGE;
	}
	for (i = 0; i < ARRAY_SIZE(verdicts); i++)
		if (!strcmp(a->decision, verdicts[i]))
			return review_act(a->decision, a, 1);
	error("review adjudicate: --decision must be approve, reject or edit, not '%s'",
	      a->decision);
	return CMD_USAGE;
}

static int review_act(const char *sub, struct review_args *a, int adjudication)
{
	struct store_review rev;
	struct store *st = NULL;
	int64_t review_id = 0;
	int rc, idx;

	if (!a->id) {
		error("review %s: no QA id given", sub);
		return CMD_USAGE;
	}
	memset(&rev, 0, sizeof(rev));
	rev.qa_id = a->id;
	rev.reviewer = a->reviewer;
	rev.blind_answer_index = -1;
	rev.reason = a->reason;
	rev.note = a->note;
	rev.decision = sub;
	rev.adjudication = adjudication;
	if (!strcmp(sub, "reject") && (!a->reason || !*a->reason)) {
		error("review %s: say why with --reason TEXT", adjudication ? "adjudicate" : "reject");
		return CMD_USAGE;
	}
	if (!strcmp(sub, "edit")) {
		if (!a->question || !*a->question) {
			error("review edit: give the new wording with --question TEXT");
			return CMD_USAGE;
		}
		rev.edit_after = a->question;
	}
	if (!strcmp(sub, "flag") && (!a->reason || !*a->reason))
		rev.reason = "ambiguous";
	if (!strcmp(sub, "note") && (!a->note || !*a->note)) {
		error("review note: give the text with --note TEXT");
		return CMD_USAGE;
	}
	if (!strcmp(sub, "answer")) {
		if (!a->option || review_parse_option(a->option, &idx)) {
			error("review answer: --option takes a letter A..Z or a number 1..26");
			return CMD_USAGE;
		}
		rev.blind_answer_index = idx;
	}
	if (open_store(a->db, 0, &st))
		return CMD_FAILED;
	err_clear();
	rc = store_review_add(st, &rev, &review_id);
	if (rc == ENG_ENOTFOUND)
		error("no QA '%s' in '%s'", a->id, a->db);
	else if (rc)
		error_code(rc, a->db);
	else
		print_outcome(st, sub, a, adjudication, review_id);
	store_close(st);
	return rc ? CMD_FAILED : CMD_OK;
}

int cmd_review(int argc, char **argv)
{
	static const char *const actions[] = {
		"approve", "reject", "edit", "flag", "note", "answer"
	};
	struct review_args a;
	const char *sub;
	size_t i;
	int rc;

	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "help")) {
		fputs(review_usage, argc < 2 ? stderr : stdout);
		return argc < 2 ? CMD_USAGE : CMD_OK;
	}
	sub = argv[1];
	if (cmd_wants_help(argc - 1, argv + 1)) {
		fputs(review_usage, stdout);
		return CMD_OK;
	}
	memset(&a, 0, sizeof(a));
	a.port = 8080;
	rc = parse_args(argc - 1, argv + 1, &a);
	if (rc) {
		fputs(review_usage, stderr);
		return CMD_USAGE;
	}
	if (!strcmp(sub, "serve")) {
		if (a.id) {
			error("review serve: unexpected argument '%s'", a.id);
			return CMD_USAGE;
		}
		return review_serve(&a);
	}
	if (!strcmp(sub, "list")) {
		if (a.id) {
			error("review list: unexpected argument '%s'", a.id);
			return CMD_USAGE;
		}
		return review_list(&a);
	}
	if (!strcmp(sub, "show"))
		return review_show(&a);
	if (!strcmp(sub, "adjudicate"))
		return review_adjudicate(&a);
	for (i = 0; i < ARRAY_SIZE(actions); i++)
		if (!strcmp(sub, actions[i]))
			return review_act(sub, &a, 0);
	error("review: unknown subcommand '%s'", sub);
	fputs(review_usage, stderr);
	return CMD_USAGE;
}
