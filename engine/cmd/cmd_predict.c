/* SPDX-License-Identifier: MIT */
/*
 * `proxima predict`: asks an OpenAI-compatible multimodal model for the
 * answers to an EgoProx export, as EgoProx's inference script asks, and
 * writes the predictions `proxima eval` scores.
 */
#include "commands.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "banned.h"
#include "err.h"
#include "llm.h"
#include "predict.h"

static const char predict_usage[] =
	"usage: proxima predict --export DIR --base-url URL --model M -o FILE\n"
	"                       [--jobs J] [--max-tokens N] [--profile P]\n"
	"                       [--api-key-env VAR] [--quiet]\n"
	"\n"
	"Sends every sample of an EgoProx export (proxima export --format egoprox\n"
	"--frames N) to an OpenAI-compatible multimodal model the way EgoProx's\n"
	"inference/infer_gpt.py does: the frames as base64 image_url parts and the\n"
	"prompt, which asks to end with \"The correct answer is <X>\" (chains: the\n"
	"system prompt with the [[nodes],[edges]] format), max_tokens 500. Writes\n"
	"FILE, one {\"id\", \"response\", ...} line per sample, for\n"
	"  proxima eval --export DIR --predictions FILE\n"
	"Replies are cached in FILE.cache as they arrive: a rerun sends no request,\n"
	"and a run that was stopped sends only what it had not finished.\n"
	"\n"
	"  --export DIR       the egoprox export, with its frames\n"
	"  --base-url URL     the server, e.g. https://api.openai.com/v1 or\n"
	"                     http://127.0.0.1:8000/v1 (vLLM)\n"
	"  --model M          the model name\n"
	"  -o, --out FILE     the predictions (JSONL)\n"
	"  --jobs J           requests at once (default 4, at most 64)\n"
	"  --max-tokens N     completion budget (default 500, EgoProx's)\n"
	"  --profile P        openai, gemini, vllm, llamacpp, ollama (default: from URL)\n"
	"  --api-key-env VAR  the variable holding the API key (default per profile)\n"
	"  --quiet            no progress line\n"
	"  -h, --help         show this help\n";

static int usage_error(const char *msg, const char *arg)
{
	if (arg)
		error("predict: %s '%s'", msg, arg);
	else
		error("predict: %s", msg);
	fputs(predict_usage, stderr);
	return CMD_USAGE;
}

static void on_progress(void *ctx, size_t done, size_t total)
{
	(void)ctx;
	fprintf(stderr, "\rpredict: %zu/%zu samples   ", done, total);
	if (done == total)
		fputc('\n', stderr);
}

static int parse_int(const char *s, long lo, long hi, long *out)
{
	char *end;

	errno = 0;
	*out = strtol(s, &end, 10);
	return errno || end == s || *end || *out < lo || *out > hi ? -1 : 0;
}

int cmd_predict(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "export", required_argument, NULL, 'e' },
		{ "base-url", required_argument, NULL, 'u' },
		{ "model", required_argument, NULL, 'm' },
		{ "out", required_argument, NULL, 'o' },
		{ "jobs", required_argument, NULL, 'j' },
		{ "max-tokens", required_argument, NULL, 't' },
		{ "profile", required_argument, NULL, 'p' },
		{ "api-key-env", required_argument, NULL, 'k' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct llm_config cfg;
	struct predict_params p;
	struct predict_summary sum;
	int c, rc, quiet = 0;
	long v;

	if (cmd_wants_help(argc, argv)) {
		fputs(predict_usage, stdout);
		return CMD_OK;
	}
	llm_config_init(&cfg);
	memset(&p, 0, sizeof(p));
	memset(&sum, 0, sizeof(sum));
	p.jobs = 4;
	p.llm = &cfg;
	optind = 1;
	while ((c = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
		switch (c) {
		case 'e':
			p.export_dir = optarg;
			break;
		case 'u':
			cfg.base_url = optarg;
			break;
		case 'm':
			cfg.model = optarg;
			break;
		case 'o':
			p.out_path = optarg;
			break;
		case 'j':
			if (parse_int(optarg, 1, PREDICT_MAX_JOBS, &v))
				return usage_error("--jobs must be an integer in 1..64, not", optarg);
			p.jobs = (int)v;
			break;
		case 't':
			if (parse_int(optarg, 1, 1000000, &v))
				return usage_error("--max-tokens must be a positive integer, not", optarg);
			p.max_tokens = (int)v;
			break;
		case 'p':
			err_clear();
			if (llm_profile_parse(optarg, &cfg.profile))
				return usage_error("unknown profile", optarg);
			break;
		case 'k':
			cfg.api_key_env = optarg;
			break;
		case 'q':
			quiet = 1;
			break;
		default:
			fputs(predict_usage, stderr);
			return CMD_USAGE;
		}
	}
	if (optind != argc)
		return usage_error("unexpected argument", argv[optind]);
	if (!p.export_dir)
		return usage_error("no export given (--export DIR)", NULL);
	if (!cfg.base_url || !*cfg.base_url)
		return usage_error("no server given (--base-url URL)", NULL);
	if (!cfg.model || !*cfg.model)
		return usage_error("no model given (--model M)", NULL);
	if (!p.out_path)
		return usage_error("no output file given (-o FILE)", NULL);
	if (!quiet && isatty(2))
		p.progress = on_progress;
	if (llm_global_init()) {
		error("predict: cannot initialise libcurl: %s", err_msg());
		return CMD_FAILED;
	}
	err_clear();
	rc = predict_run(&p, &sum);
	llm_global_cleanup();
	if (rc && rc != ENG_EHTTP) {
		error_code(rc, "predict");
		return CMD_FAILED;
	}
	printf("predicted %zu samples: %zu answered (%zu from the cache), %zu failed; "
	       "%zu requests sent; tokens %ld in, %ld out\n", sum.samples, sum.answered,
	       sum.from_cache, sum.failed, sum.requests, sum.prompt_tokens, sum.completion_tokens);
	printf("wrote '%s'; score it with: proxima eval --export %s --predictions %s\n",
	       p.out_path, p.export_dir, p.out_path);
	if (rc) {
		error("predict: %s (a rerun sends them again)", err_msg());
		return CMD_FAILED;
	}
	return CMD_OK;
}
