/* SPDX-License-Identifier: MIT */
/*
 * Exports of reviewed QA sets for evaluation harnesses and training: the
 * EgoProx benchmark layout, full JSONL records, lmms-eval, VLMEvalKit,
 * Label Studio and LLaVA (docs/export.md gives every field), each with a
 * manifest, and the frames of each clip extracted on request (one pass
 * over each recording's video, engine/recording/video.h).
 *
 * Conventions: functions return 0 or a negative enum eng_err with
 * err_set() naming the file, QA or field at fault. The exporter reads the
 * store and never writes to it. Output files are written under a ".tmp"
 * name and renamed when complete, so a failed export leaves no half
 * written records file (extracted frames already written stay).
 */
#ifndef EXPORT_H
#define EXPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "hash.h"

struct cJSON;
struct store;

/* The output formats. */
enum export_format {
	EXPORT_EGOPROX = 0, /* egoprox.json: EgoProx's evaluate.py / inference layout */
	EXPORT_JSONL,       /* records.jsonl: one full record per line */
	EXPORT_LMMS_EVAL,   /* proxima.jsonl + proxima.yaml + utils.py (lmms-eval task) */
	EXPORT_VLMEVALKIT,  /* Proxima.tsv: VLMEvalKit MCQ TSV */
	EXPORT_LABELSTUDIO, /* tasks.json + config.xml */
	EXPORT_LLAVA,       /* llava.json: conversation records */
	EXPORT_NFORMAT
};

/* The statuses exported when none is given. */
#define EXPORT_DEFAULT_STATUS "approved,edited"

/* Frames listed per QA when neither --frames nor the QA's frame times say. */
#define EXPORT_DEFAULT_FRAMES 8

/* Largest --frames value. */
#define EXPORT_MAX_FRAMES 256

/* "egoprox", "jsonl", "lmms-eval", "vlmevalkit", "labelstudio", "llava"; "?" if invalid. */
const char *export_format_name(enum export_format f);

/* The format called `name`, or EXPORT_NFORMAT when none. Can't fail. */
enum export_format export_format_from_name(const char *name);

/* The main records file a format writes in the output folder ("egoprox.json"). */
const char *export_format_file(enum export_format f);

struct export_params {
	enum export_format format;
	const char *dir;            /* output folder, created when missing (required) */
	const char *status;         /* comma list of statuses; NULL = EXPORT_DEFAULT_STATUS */
	const char *tasks;          /* comma list of CATEGORY, CATEGORY.SUBTASK,
				     * CATEGORY.SUBTASK/METRIC; NULL = every task */
	int frames;                 /* > 0: extract this many frames per QA; 0: list only */
	const char *media_url;      /* labelstudio: videos from `proxima review serve` at this
				     * address (URL/media/<id>); NULL: Label Studio's local files */
	const char *local_files_root; /* labelstudio: Label Studio's LOCAL_FILES_DOCUMENT_ROOT;
				       * NULL = "/" (its default) */
	const char *engine_version; /* written to the manifest (required) */
	const struct cJSON *audit;  /* the blind audit of the QAs of `status`
				     * (audit_report_json(), engine/task/audit.h), for
				     * the manifest and the dataset card; NULL: none. The
				     * caller runs it: this module sits below engine/task/ */
};

/* What an export did. */
struct export_summary {
	size_t exported;            /* records written */
	size_t skipped;             /* matching QAs the format cannot hold (see manifest) */
	size_t frames_written;      /* JPEG files extracted */
	size_t no_video;            /* exported QAs whose recording has no usable video */
	char ids_sha256[HASH_HEX_LEN + 1]; /* SHA-256 of the sorted exported ids */
};

/*
 * Exports the QAs of st that match p's status and task filters, in the
 * store's listing order (recording, T, id), into p->dir: the format's
 * files, manifest.json, and the dataset card README.md (engine/out/card.h)
 * with its charts as SVG files in DIR/plots/ (engine/out/report.h), whose
 * numbers are the manifest's. With p->frames > 0, N frames per QA are taken
 * uniformly over the clip (both ends included) from the recording's video
 * into DIR/Frames/<id>/001.jpg ... (at most 640 px wide; the frames of
 * one recording in one pass over its video); a recording without a
 * video (or that cannot be loaded) is named in the manifest and its QAs
 * list the intended frame names and times. Fills *out when it is not NULL.
 * Returns 0; ENG_EINVAL (bad parameters, bad task list, a QA whose stored
 * JSON does not have the expected shape, naming its id); ENG_ENOENT when
 * a video cannot be read; ENG_EIO (a file cannot be written); ENG_EPARSE
 * (a video breaks while its frames are decoded: the message names the
 * recording and the file); ENG_EDB; ENG_ENOMEM.
 */
int export_run(struct store *st, const struct export_params *p,
	       struct export_summary *out);

/*
 * Checks a task list (see export_params.tasks): every element must be
 * CATEGORY, CATEGORY.SUBTASK, CATEGORY/METRIC or CATEGORY.SUBTASK/METRIC
 * with non-empty names and METRIC "approx" or "relative". Returns 0 or
 * ENG_EINVAL naming the element. NULL is a valid (empty) list.
 */
int export_tasks_check(const char *tasks);

/*
 * True when a QA of this category, sub-task and metric is selected by the
 * task list (NULL or "" selects everything). Can't fail.
 */
bool export_tasks_match(const char *tasks, const char *category,
			const char *subtask, const char *metric);

/*
 * EgoProx's group name ("source") of a task: "Intention_Approx" ...
 * "Exploitation_Relative" for the three multiple-choice categories,
 * "Chain of Actions" for category "chain", NULL for any other category.
 * Can't fail.
 */
const char *export_egoprox_source(const char *category, const char *metric);

/*
 * n frame times spread uniformly over [start, end] with both ends (n == 1
 * gives end, the current frame x_T), into out[0..n-1]. Can't fail.
 */
void export_frame_times(int64_t start, int64_t end, int n, int64_t *out);

/*
 * Appends s to out as one VLMEvalKit TSV field (pandas' tab-separated
 * reader and writer, QUOTE_MINIMAL): a field holding a tab, CR, LF or '"'
 * is written between double quotes with each '"' doubled; others as they
 * are. Returns 0 or a buf error.
 */
int export_tsv_field(struct buf *out, const char *s);

/*
 * The multiple-choice prompt text: question, "\n", one "A. option\n" line
 * per option, then the instruction to end the reply with "The correct
 * answer is <X>" (EXPORT_MC_INSTRUCTION). options is a cJSON array of
 * strings. Returns 0, ENG_EINVAL (not an array of strings, more than 26
 * options) or a buf error.
 */
#define EXPORT_MC_INSTRUCTION \
	"Think step by step, then end your reply with \"The correct answer is <X>\", " \
	"where X is the letter of the correct option."
int export_mc_text(const char *question, const struct cJSON *options, struct buf *out);

#endif /* EXPORT_H */
