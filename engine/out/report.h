/* SPDX-License-Identifier: MIT */
/*
 * The report of a QA set as pictures: per group (CATEGORY.SUBTASK/METRIC)
 * and over all groups, the counts by status and by recording, the
 * distribution of the keys' values (the eight BEV sectors on a polar plot,
 * turn magnitudes, distance bins, vertical classes, hands, verbs,
 * relations, objects, chain lengths and edge letters, read from each QA's
 * answer_json: docs/answers.md section 1), the answer letters against a
 * uniform answer with the chi-square test, the option-length z-scores of
 * qc_json, the drop reasons, the blind audit's solvers against chance with
 * their 95% intervals, and the reviewers' acceptance, agreement, kappa and
 * time per item. Written as one self-contained HTML page with the charts
 * inline (engine/out/svg.h; no scripts, nothing fetched), each chart as its
 * own SVG file, and report.json with the same figures (docs/report.md).
 *
 * The store-wide figures (statuses, drops, reviewers) come from the JSON
 * of store_stats(); the blind audit from the JSON of audit_report_json(),
 * which the caller computes (this module sits below engine/task/ and does
 * not run the audit itself). Every other figure is counted over the QAs
 * handed to report_add_qa().
 *
 * Conventions: functions return 0 or a negative enum eng_err with
 * err_set() naming the file or field at fault. A report is built in two
 * steps, report_add_qa() for each QA then report_finish(); the outputs
 * read a finished report. Strings passed in are copied; JSON passed in is
 * copied; cJSON trees handed out belong to the caller. Nothing here
 * prints. A report belongs to one thread at a time.
 */
#ifndef REPORT_H
#define REPORT_H

#include <stdbool.h>
#include <stddef.h>

#include "buf.h"

struct cJSON;
struct store;
struct store_qa;

/* The statuses a report counts when none are given: the live QAs. */
#define REPORT_DEFAULT_STATUS "pending,approved,edited,conflict"

/* Categories a free-valued chart shows (recordings, verbs, objects) before "other". */
#define REPORT_TOP 20

/* Most options a QA's letters are counted for. */
#define REPORT_MAX_OPTIONS 26

/* A report being built or finished; opaque. */
struct report;

/* What the page says about the set (any field may be NULL). */
struct report_info {
	const char *title;          /* the page's headline; NULL = "Proxima report" */
	const char *store;          /* the store file */
	const char *status;         /* the statuses the QAs were chosen by */
	const char *tasks;          /* the groups they were chosen from, or NULL (all) */
	const char *engine_version;
};

/* An empty report. Returns 0 or ENG_ENOMEM. */
int report_new(struct report **out);

/* Frees r. NULL is a no-op. */
void report_free(struct report *r);

/*
 * Counts one QA in its group and in the overall figures: its recording,
 * the fields of its answer_json, its answer letter (answer_index among
 * the options of options_json) and its qc_json "z". Values the module does
 * not know (an answer_json that is not JSON, a direction outside the eight
 * sectors) are counted as unreadable, not refused. Returns 0, ENG_EINVAL
 * (a QA without category, sub-task or metric; a finished report) or
 * ENG_ENOMEM.
 */
int report_add_qa(struct report *r, const struct store_qa *qa);

/*
 * Makes the charts of what was added, with the store's figures from stats
 * (store_stats() JSON; NULL: no status, drop and reviewer charts) and the
 * blind audit from audit (audit_report_json() JSON; NULL: no audit
 * charts); both are copied. A group of stats that has QAs or drops gets
 * its charts even when no QA of it was added. Returns 0, ENG_EINVAL
 * (already finished) or ENG_ENOMEM.
 */
int report_finish(struct report *r, const struct report_info *info,
		  const struct cJSON *stats, const struct cJSON *audit);

/*
 * The whole job over a store: a new report, every QA of st whose status
 * is in the comma list status (NULL = REPORT_DEFAULT_STATUS), store_stats(),
 * report_finish() with info and audit (may be NULL). Returns 0 and sets
 * *out, or a store error (ENG_EDB, ENG_EINVAL for a bad status list),
 * ENG_ENOMEM.
 */
int report_build(struct store *st, const char *status, const struct report_info *info,
		 const struct cJSON *audit, struct report **out);

/* QAs added; QAs whose answer_json could not be read. Can't fail. */
size_t report_qas(const struct report *r);
size_t report_unreadable(const struct report *r);

/* One chart of a finished report (pointers valid until report_free()). */
struct report_plot_info {
	const char *name;  /* "<scope file>.<chart>": "all.status", "intention.head_turn.approx.turn" */
	const char *scope; /* "all" or the group, "intention.head_turn/approx" */
	const char *plot;  /* the chart: "status", "recordings", "direction", ... (docs/report.md) */
	const char *title;
	const char *file;  /* "<name>.svg" */
	size_t values;     /* marks drawn */
};

/* Charts of a finished report (0 before report_finish()). Can't fail. */
size_t report_nplots(const struct report *r);

/* Chart i into *out. Returns 0 or ENG_EINVAL (i out of range). */
int report_plot(const struct report *r, size_t i, struct report_plot_info *out);

/* The index of the chart called name, or -1. Can't fail. */
long report_plot_find(const struct report *r, const char *name);

/* Appends chart i as SVG (svg.h). Returns 0, ENG_EINVAL or a buf error. */
int report_plot_svg(const struct report *r, size_t i, struct buf *out);

/*
 * The figures as JSON (docs/report.md, report.json): the info, the
 * scopes, every chart with its values, and the stats and audit JSON given
 * to report_finish(). With with_svg each chart also holds its SVG text
 * ("svg"). Returns 0 and sets *out, ENG_EINVAL (not finished) or
 * ENG_ENOMEM.
 */
int report_json(const struct report *r, bool with_svg, struct cJSON **out);

/*
 * Appends the page: a self-contained HTML document, every text escaped,
 * the charts inline, no script. Returns 0, ENG_EINVAL (not finished) or a
 * buf error.
 */
int report_html(const struct report *r, struct buf *out);

/*
 * Writes each chart as DIR/<name>.svg, creating the folder dir when it is
 * missing (its parent must exist). Returns 0, ENG_EINVAL (not finished),
 * ENG_EIO naming the file or folder, ENG_ENOMEM.
 */
int report_write_svgs(const struct report *r, const char *dir);

/*
 * Writes DIR/index.html, DIR/report.json and every chart as DIR/<name>.svg,
 * creating dir when it is missing (its parent must exist). Each file is
 * written under a ".tmp" name and renamed when complete. Same returns as
 * report_write_svgs().
 */
int report_write(const struct report *r, const char *dir);

#endif /* REPORT_H */
