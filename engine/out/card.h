/* SPDX-License-Identifier: MIT */
/*
 * The dataset card an export writes beside its data (README.md): a YAML
 * header in the Hugging Face dataset-card conventions (license left for
 * the user to set, task_categories, size_categories, configs whose
 * data_files name the exported records) and a Markdown body with the task
 * definitions and answer forms, how the QAs were generated and reviewed,
 * the counts table, the blind-audit table and the charts (docs/export.md,
 * The dataset card).
 *
 * Every number the card states is read from the export's manifest (its
 * JSON is the only input besides the charts' names), so the card cannot
 * disagree with manifest.json. Text from the store (group, model, solver
 * and recording names) is escaped for Markdown tables and inline HTML.
 * Nothing here prints or touches files.
 */
#ifndef CARD_H
#define CARD_H

#include "buf.h"

struct cJSON;
struct report;

/*
 * Appends the card for the export described by manifest (the object
 * export_run() writes as manifest.json, with "counts", "filters", "runs",
 * "audit" and "files") to out. charts, when not NULL, is the finished
 * report of the exported QAs whose SVG files the export wrote under
 * plots_dir (a folder name relative to the card, e.g. "plots"): the card
 * shows the charts of all groups and links those of each group. Returns
 * 0, ENG_EINVAL (a manifest without counts or files) or a buf error.
 */
int card_render(const struct cJSON *manifest, const struct report *charts,
		const char *plots_dir, struct buf *out);

/*
 * The Hugging Face size category of n examples: "n<1K", "1K<n<10K", ...
 * "n>1T". Can't fail.
 */
const char *card_size_category(double n);

#endif /* CARD_H */
