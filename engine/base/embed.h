/* SPDX-License-Identifier: MIT */
/*
 * Data files compiled into the binary: the JSON files under schemas/,
 * the text files under prompts/ and the review page under web/, looked up
 * by repository path
 * (e.g. "schemas/tools/plan_path.json"). The table is generated at build
 * time by scripts/embed.c into $(BUILD)/gen/embedded.c.
 */
#ifndef EMBED_H
#define EMBED_H

#include <stddef.h>

struct embed_file {
	const char *path; /* repository-relative path */
	const char *data; /* contents, NUL-terminated */
	size_t len;       /* bytes, not counting the NUL */
};

/* The embedded file at `path`, or NULL. Can't fail. */
const struct embed_file *embed_find(const char *path);

/* Number of embedded files, and the i-th (NULL past the end). */
size_t embed_count(void);
const struct embed_file *embed_at(size_t i);

#endif /* EMBED_H */
