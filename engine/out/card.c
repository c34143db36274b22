/* SPDX-License-Identifier: MIT */
/*
 * The dataset card (README.md) of an export: a Hugging Face YAML header
 * and a Markdown body whose every number comes from the manifest (card.h).
 */
#include "card.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "banned.h"
#include "err.h"
#include "report.h"

/* What each group asks and how its answers read (docs/design.md section 3). */
static const struct task_text {
	const char *group;
	const char *asks;
	const char *answer;
} tasks[] = {
	{ "intention.head_turn/approx",
	  "How will the wearer turn the head to see the target, which is out of view at the current "
	  "frame? The signed BEV yaw from the heading at the current frame to the target, on a 5-degree "
	  "grid (forward below 15 degrees, around above 165).",
	  "Turn left ~95°; Keep facing forward; Turn around" },
	{ "intention.head_turn/relative",
	  "The same turn as one of the 8 BEV sectors of 45 degrees centred on the heading.",
	  "Turn the head front-right" },
	{ "intention.gaze_target/approx",
	  "Where and at what will the wearer look next (the next fixation of 300 ms or more on an "
	  "object): the yaw to it and the object.",
	  "Look ~40° to the left, at the kettle" },
	{ "intention.gaze_target/relative",
	  "The next gaze target relative to a reference object visible at the current frame.",
	  "The kettle, left of the sink" },
	{ "exploration.navigate/approx",
	  "How will the wearer walk to the target (8-connected A* on the occupancy grid): the first "
	  "leg's direction and the length of the whole path.",
	  "Turn left and go forward first, ~3.2 m walked in all" },
	{ "exploration.navigate/relative",
	  "The route as up to two legs, each relative to the heading after the previous one.",
	  "First turn left and go forward, then go front-right" },
	{ "exploitation.next_interaction/approx",
	  "What will the wearer touch next and where: the displacement from the camera to the object "
	  "in the BEV frame (direction, vertical class, distance), the hand when asked, the verb and "
	  "the object.",
	  "Front-left, down ~0.6 m, to pick up the cup" },
	{ "exploitation.next_interaction/relative",
	  "The next interaction as a direction, a verb and an object.",
	  "Turn left to pick up the cup" },
	{ "chain.actions/relative",
	  "Which of the candidate actions come next, in order, and in which direction each one lies "
	  "from the previous one (edge letters A right, B left, C front, D back, E front-right, "
	  "F front-left, G back-left, H back-right). Every valid order counts.",
	  "[[3,1,7],[\"B\",\"E\"]]" },
};

/* What each format's records file is, for the files table. */
static const char *const formats[][2] = {
	{ "egoprox", "EgoProx's evaluate.py and inference layout (one JSON array)" },
	{ "jsonl", "one full record per line" },
	{ "lmms-eval", "the lmms-eval task's documents (with proxima.yaml and utils.py)" },
	{ "vlmevalkit", "VLMEvalKit's multiple-choice TSV" },
	{ "labelstudio", "Label Studio tasks (with config.xml)" },
	{ "llava", "LLaVA conversation records" },
};

static const cJSON *get(const cJSON *o, const char *k)
{
	return cJSON_GetObjectItemCaseSensitive(o, k);
}

static const char *str(const cJSON *o, const char *k)
{
	return cJSON_GetStringValue(get(o, k));
}

static double num(const cJSON *o, const char *k)
{
	const cJSON *v = get(o, k);

	return cJSON_IsNumber(v) ? v->valuedouble : (double)NAN;
}

const char *card_size_category(double n)
{
	static const char *const cats[] = {
		"n<1K", "1K<n<10K", "10K<n<100K", "100K<n<1M", "1M<n<10M", "10M<n<100M",
		"100M<n<1B", "1B<n<10B", "10B<n<100B", "100B<n<1T"
	};
	double lim = 1000;
	size_t i;

	for (i = 0; i < sizeof(cats) / sizeof(cats[0]); i++, lim *= 10)
		if (n < lim)
			return cats[i];
	return "n>1T";
}

/* Appends s for a Markdown table cell: HTML escaped, '|' escaped, lines joined. */
static int md(struct buf *b, const char *s)
{
	int rc = 0;

	for (; !rc && s && *s; s++) {
		switch (*s) {
		case '&': rc = buf_adds(b, "&amp;"); break;
		case '<': rc = buf_adds(b, "&lt;"); break;
		case '>': rc = buf_adds(b, "&gt;"); break;
		case '|': rc = buf_adds(b, "\\|"); break;
		case '\\': rc = buf_adds(b, "\\\\"); break;
		case '`': rc = buf_adds(b, "\\`"); break;
		case '*': rc = buf_adds(b, "\\*"); break;
		case '_': rc = buf_adds(b, "\\_"); break;
		case '[': rc = buf_adds(b, "\\["); break;
		case ']': rc = buf_adds(b, "\\]"); break;
		case '\r':
		case '\n':
		case '\t': rc = buf_adds(b, " "); break;
		default:
			rc = (unsigned char)*s < 0x20 ? 0 : buf_add(b, s, 1);
		}
	}
	return rc;
}

/* Appends s as a Markdown code span (file names): backquotes, '|' and lines made safe. */
static int code(struct buf *b, const char *s)
{
	int rc = buf_adds(b, "`");

	for (; !rc && s && *s; s++) {
		if (*s == '`' || *s == '|' || (unsigned char)*s < 0x20)
			rc = buf_adds(b, "_");
		else
			rc = buf_add(b, s, 1);
	}
	return rc ? rc : buf_adds(b, "`");
}

/* A number cell: an integer, or a dash when missing. */
static int md_int(struct buf *b, double v)
{
	return isfinite(v) ? buf_addf(b, "%.0f", v) : buf_adds(b, "—");
}

static int md_pct(struct buf *b, double v)
{
	return isfinite(v) ? buf_addf(b, "%.1f%%", 100 * v) : buf_adds(b, "—");
}

static const struct task_text *task_of(const char *group)
{
	size_t i;

	for (i = 0; group && i < sizeof(tasks) / sizeof(tasks[0]); i++)
		if (!strcmp(tasks[i].group, group))
			return &tasks[i];
	return NULL;
}

static const char *format_text(const char *fmt)
{
	size_t i;

	for (i = 0; fmt && i < sizeof(formats) / sizeof(formats[0]); i++)
		if (!strcmp(formats[i][0], fmt))
			return formats[i][1];
	return "the records";
}

/* ============================== The YAML header ============================== */

static int header(const cJSON *m, const char *records, struct buf *b)
{
	const cJSON *counts = get(m, "counts");
	const char *fmt = str(m, "format");
	bool chains = false;
	const cJSON *g;
	int rc;

	cJSON_ArrayForEach(g, get(counts, "groups"))
		if (g->string && !strncmp(g->string, "chain.", 6))
			chains = true;
	rc = buf_adds(b, "---\n"
		      "# The card of a proxima export, in the Hugging Face dataset-card format.\n"
		      "license: other  # set this: the license of the source recordings and of these QAs\n"
		      "pretty_name: Proxima 3D proximity QA\n"
		      "language:\n- en\n"
		      "task_categories:\n- visual-question-answering\n- multiple-choice\n");
	rc = rc ? rc : buf_adds(b, "tags:\n- egocentric\n- spatial-reasoning\n- 3d\n- proxima\n");
	if (!rc && chains)
		rc = buf_adds(b, "- action-anticipation\n");
	if (!rc && fmt)
		rc = buf_addf(b, "- %s\n", fmt);
	rc = rc ? rc : buf_addf(b, "size_categories:\n- %s\n", card_size_category(num(counts, "total")));
	/* every group's records are in the one file: a single test split */
	rc = rc ? rc : buf_addf(b, "configs:\n- config_name: default\n  data_files:\n"
				"  - split: test\n    path: \"%s\"\n---\n\n", records);
	return rc;
}

/* ============================== The body ============================== */

static int files_table(const cJSON *m, const char *plots_dir, struct buf *b)
{
	const cJSON *f, *frames = get(m, "frames");
	bool first = true;
	int rc;

	rc = buf_adds(b, "## Files\n\n| file | what |\n|---|---|\n");
	cJSON_ArrayForEach(f, get(m, "files")) {
		if (rc || !cJSON_IsString(f))
			continue;
		rc = buf_adds(b, "| ");
		rc = rc ? rc : code(b, f->valuestring);
		rc = rc ? rc : buf_adds(b, " | ");
		if (first)
			rc = rc ? rc : md(b, format_text(str(m, "format")));
		else if (!strcmp(f->valuestring, "README.md"))
			rc = rc ? rc : buf_adds(b, "this card");
		else if (plots_dir && !strncmp(f->valuestring, plots_dir, strlen(plots_dir)))
			rc = rc ? rc : buf_adds(b, "the charts of this card, one SVG file each");
		else
			rc = rc ? rc : buf_adds(b, "part of the format (docs/export.md in proxima)");
		rc = rc ? rc : buf_adds(b, " |\n");
		first = false;
	}
	rc = rc ? rc : buf_adds(b, "| `manifest.json` | counts, selection, generation runs, blind "
				"audit and the SHA-256 of the sorted ids; every number of this card is "
				"taken from it |\n");
	if (!rc && cJSON_IsTrue(get(frames, "extracted")))
		rc = buf_addf(b, "| `Frames/<id>/001.jpg` ... | %.0f frames extracted from the "
			      "recordings' videos |\n", num(frames, "written"));
	else if (!rc)
		rc = buf_adds(b, "| `Frames/<id>/...` | not extracted: the records name the frame "
			      "files and their times (export with --frames N to write them) |\n");
	return rc ? rc : buf_adds(b, "\n");
}

static int tasks_table(const cJSON *m, struct buf *b)
{
	const cJSON *g;
	int rc;

	rc = buf_adds(b, "## Tasks\n\nEach QA is about one moment x_T of an egocentric recording "
		      "with 3D metadata (camera poses, gaze, 3D object boxes, actions): the question "
		      "is asked at x_T over a clip of the frames before it, and every answer is "
		      "computed by native tools from the 3D data, never by a language model. "
		      "Directions are the 8 BEV sectors of 45 degrees centred on the wearer's "
		      "heading (front, front-left, left, back-left, back, back-right, right, "
		      "front-right); approx answers give metric angles and distances, relative ones "
		      "discrete relations.\n\n| group | what it asks | answer form | QAs |\n"
		      "|---|---|---|---|\n");
	cJSON_ArrayForEach(g, get(get(m, "counts"), "groups")) {
		const struct task_text *t = task_of(g->string);

		if (rc)
			break;
		rc = buf_adds(b, "| ");
		rc = rc ? rc : md(b, g->string);
		rc = rc ? rc : buf_adds(b, " | ");
		rc = rc ? rc : md(b, t ? t->asks : "not a proxima group");
		rc = rc ? rc : buf_adds(b, " | ");
		rc = rc ? rc : md(b, t ? t->answer : "");
		rc = rc ? rc : buf_adds(b, " | ");
		rc = rc ? rc : md_int(b, cJSON_IsNumber(g) ? g->valuedouble : (double)NAN);
		rc = rc ? rc : buf_adds(b, " |\n");
	}
	return rc ? rc : buf_adds(b, "\n");
}

static int made_section(const cJSON *m, struct buf *b)
{
	const cJSON *counts = get(m, "counts"), *filters = get(m, "filters"), *r, *s;
	int rc;

	rc = buf_adds(b, "## How the QAs were made\n\n");
	rc = rc ? rc : buf_adds(b, "An agent session per candidate: a brain (the local planner or "
				"an LLM) plans through tool calls (clip sampler, occupancy grid, A-star, BEV "
				"angles and distances, gaze rays, chain constructor); the engine recomputes "
				"the answer from the tools, adds hard negatives, checks the options (no "
				"duplicates or meta options, the answer's length z-score within 1.5 of the "
				"distractors', a shuffle seeded by the QA id) and stores the QA for human "
				"review.\n\n");
	rc = rc ? rc : buf_adds(b, "- exported by proxima ");
	rc = rc ? rc : md(b, str(m, "engine_version") ? str(m, "engine_version") : "?");
	rc = rc ? rc : buf_adds(b, " in the format `");
	rc = rc ? rc : md(b, str(m, "format"));
	rc = rc ? rc : buf_adds(b, "`\n- statuses exported: ");
	rc = rc ? rc : md(b, str(filters, "status") ? str(filters, "status") : "?");
	rc = rc ? rc : buf_adds(b, "\n- groups exported: ");
	rc = rc ? rc : md(b, str(filters, "tasks") ? str(filters, "tasks") : "all");
	rc = rc ? rc : buf_addf(b, "\n- %.0f QAs from %.0f recording%s", num(counts, "total"),
				num(counts, "recordings"), num(counts, "recordings") == 1 ? "" : "s");
	if (!rc && num(counts, "skipped_total") > 0)
		rc = buf_addf(b, "; %.0f more matched but the format cannot hold them",
			      num(counts, "skipped_total"));
	rc = rc ? rc : buf_adds(b, "\n\n| generation run | brain | model | seed | engine | per task | "
				"options | started |\n|---|---|---|---|---|---|---|---|\n");
	cJSON_ArrayForEach(r, get(m, "runs")) {
		const cJSON *set = get(r, "settings");

		if (rc)
			break;
		rc = buf_addf(b, "| %.0f | ", num(r, "id"));
		rc = rc ? rc : md(b, str(r, "brain") ? str(r, "brain") : "—");
		rc = rc ? rc : buf_adds(b, " | ");
		rc = rc ? rc : md(b, str(r, "model") ? str(r, "model") : "—");
		rc = rc ? rc : buf_adds(b, " | ");
		rc = rc ? rc : md_int(b, num(r, "seed"));
		rc = rc ? rc : buf_adds(b, " | ");
		rc = rc ? rc : md(b, str(r, "engine_version") ? str(r, "engine_version") : "—");
		rc = rc ? rc : buf_adds(b, " | ");
		rc = rc ? rc : md_int(b, num(set, "per_task"));
		rc = rc ? rc : buf_adds(b, " | ");
		rc = rc ? rc : md_int(b, num(set, "options"));
		rc = rc ? rc : buf_adds(b, " | ");
		rc = rc ? rc : md(b, str(r, "started_at") ? str(r, "started_at") : "—");
		rc = rc ? rc : buf_adds(b, " |\n");
	}
	rc = rc ? rc : buf_adds(b, "\n**Review.** Every QA was shown to human reviewers in proxima's "
				"review page; a reviewer approves, rejects, or rewords the question (the "
				"answer stays tool-computed). The exported QAs by status:\n\n"
				"| status | QAs |\n|---|---|\n");
	cJSON_ArrayForEach(s, get(counts, "by_status")) {
		if (rc)
			break;
		rc = buf_adds(b, "| ");
		rc = rc ? rc : md(b, s->string);
		rc = rc ? rc : buf_adds(b, " | ");
		rc = rc ? rc : md_int(b, cJSON_IsNumber(s) ? s->valuedouble : (double)NAN);
		rc = rc ? rc : buf_adds(b, " |\n");
	}
	return rc ? rc : buf_adds(b, "\n");
}

static int counts_table(const cJSON *m, struct buf *b)
{
	const cJSON *counts = get(m, "counts"), *g;
	int rc;

	rc = buf_adds(b, "## Counts\n\n| group | QAs |\n|---|---|\n");
	cJSON_ArrayForEach(g, get(counts, "groups")) {
		if (rc)
			break;
		rc = buf_adds(b, "| ");
		rc = rc ? rc : md(b, g->string);
		rc = rc ? rc : buf_adds(b, " | ");
		rc = rc ? rc : md_int(b, cJSON_IsNumber(g) ? g->valuedouble : (double)NAN);
		rc = rc ? rc : buf_adds(b, " |\n");
	}
	rc = rc ? rc : buf_adds(b, "| **total** | ");
	rc = rc ? rc : md_int(b, num(counts, "total"));
	return rc ? rc : buf_adds(b, " |\n\n");
}

static int audit_table(const cJSON *m, struct buf *b)
{
	const cJSON *a = get(m, "audit"), *g;
	int rc;

	rc = buf_adds(b, "## Blind audit\n\n");
	if (!cJSON_IsObject(a))
		return rc ? rc : buf_adds(b, "The export was written without the blind audit "
					  "(`proxima audit --db STORE` runs it).\n\n");
	rc = rc ? rc : buf_adds(b, "Solvers that see only the question and the option texts, never "
				"the video (letter and key-value priors, longest and shortest option, "
				"overlaps, similarity rules, a learned classifier cross-validated by "
				"recording, five times over on fresh fold splits), over the QAs of the exported statuses (");
	rc = rc ? rc : md(b, str(a, "status"));
	rc = rc ? rc : buf_addf(b, "). The best solver of each group against chance, with its 95%% "
				"Wilson interval; a group is flagged when a rule's one-sided lower bound is "
				"more than %.0f points over chance, or the learned solver's more than %.0f.\n\n"
				"| group | QAs | options | chance | best text-only solver | accuracy | "
				"95%% interval | flagged |\n|---|---|---|---|---|---|---|---|\n",
				100 * num(a, "rule_margin"), 100 * num(a, "learned_margin"));
	cJSON_ArrayForEach(g, get(a, "groups")) {
		if (rc)
			break;
		rc = buf_adds(b, "| ");
		rc = rc ? rc : md(b, g->string);
		rc = rc ? rc : buf_adds(b, " | ");
		rc = rc ? rc : md_int(b, num(g, "n"));
		rc = rc ? rc : buf_addf(b, " | %.1f | ", num(g, "options"));
		rc = rc ? rc : md_pct(b, num(g, "chance"));
		rc = rc ? rc : buf_adds(b, " | ");
		rc = rc ? rc : md(b, str(g, "best") ? str(g, "best") : "—");
		rc = rc ? rc : buf_adds(b, " | ");
		rc = rc ? rc : md_pct(b, num(g, "accuracy"));
		rc = rc ? rc : buf_adds(b, " | ");
		rc = rc ? rc : md_pct(b, num(g, "lower_95"));
		rc = rc ? rc : buf_adds(b, " – ");
		rc = rc ? rc : md_pct(b, num(g, "upper_95"));
		rc = rc ? rc : buf_addf(b, " | %s |\n", cJSON_IsTrue(get(g, "flagged")) ? "**yes**" : "no");
	}
	return rc ? rc : buf_adds(b, "\n");
}

static int charts_section(const struct report *r, const char *dir, struct buf *b)
{
	struct report_plot_info pi;
	const char *scope = NULL;
	size_t i, n = report_nplots(r);
	int rc;

	if (!n)
		return 0;
	rc = buf_addf(b, "## Charts\n\nDrawn by proxima from the exported QAs (the same figures as "
		      "`proxima report`); each is an SVG file in `%s/`.\n\n", dir);
	for (i = 0; !rc && i < n; i++) {
		rc = report_plot(r, i, &pi);
		if (rc)
			break;
		if (!strcmp(pi.scope, "all")) {
			rc = buf_adds(b, "![");
			rc = rc ? rc : md(b, pi.title);
			rc = rc ? rc : buf_addf(b, "](%s/%s)\n\n", dir, pi.file);
			continue;
		}
		if (!scope || strcmp(scope, pi.scope)) {
			rc = buf_adds(b, scope ? "\n- " : "Each group's charts:\n\n- ");
			rc = rc ? rc : md(b, pi.scope);
			rc = rc ? rc : buf_adds(b, ":");
			scope = pi.scope;
		}
		rc = rc ? rc : buf_adds(b, " [");
		rc = rc ? rc : md(b, pi.plot);
		rc = rc ? rc : buf_addf(b, "](%s/%s)", dir, pi.file);
	}
	return rc ? rc : buf_adds(b, scope ? "\n\n" : "");
}

int card_render(const cJSON *manifest, const struct report *charts, const char *plots_dir,
		struct buf *out)
{
	const cJSON *files = get(manifest, "files");
	const char *records = cJSON_GetStringValue(cJSON_GetArrayItem(files, 0));
	int rc;

	if (!cJSON_IsObject(get(manifest, "counts")) || !records)
		return err_set(ENG_EINVAL, "card: the manifest has no counts or files");
	rc = header(manifest, records, out);
	rc = rc ? rc : buf_adds(out, "# Proxima 3D proximity QA\n\nMultiple-choice questions about "
				"what an egocentric (first-person) camera wearer will do next in 3D: where "
				"they will look, how they will turn or walk to reach something, what they "
				"will touch next and where, and in what order and directions their next "
				"actions happen. Written by `proxima export`; the license above is left for "
				"you to set.\n\n");
	rc = rc ? rc : files_table(manifest, plots_dir, out);
	rc = rc ? rc : tasks_table(manifest, out);
	rc = rc ? rc : made_section(manifest, out);
	rc = rc ? rc : counts_table(manifest, out);
	rc = rc ? rc : audit_table(manifest, out);
	if (!rc && charts && plots_dir)
		rc = charts_section(charts, plots_dir, out);
	rc = rc ? rc : buf_addf(out, "## Integrity\n\nThe SHA-256 of the exported ids, sorted "
				"bytewise and each followed by a newline: `%s`.\n",
				str(manifest, "ids_sha256") ? str(manifest, "ids_sha256") : "?");
	return rc;
}
