/* SPDX-License-Identifier: MIT */
/*
 * A tiny text template renderer and the accessors for the embedded
 * template files under prompts/ (answer phrasings and question phrasings).
 *
 * Syntax: `{name}` is replaced by the value of variable `name` (names are
 * letters, digits, '_', '.' and '-'); `{{` writes `{` and `}}` writes `}`.
 * Anything else in braces, an unterminated `{`, a lone `}` or an unknown
 * name is an error. Output goes to a caller's bounded buffer (engine/buf.h),
 * so a template can never produce more than the buffer's cap.
 *
 * Template files are plain text, one entry per line; empty lines and lines
 * starting with '#' are ignored. Two layouts are used:
 *   - phrasing lists (prompts/questions/<category>.<subtask>.<metric>.txt):
 *     every line is one phrasing; tmpl_pick() chooses one from a seed;
 *   - keyed files (prompts/answers/<kind>.txt): every line is `key: text`
 *     (key = letters, digits, '_', '.', '-'; one space after the colon is
 *     dropped); tmpl_keyed() returns the text of a key.
 * The files are compiled into the binary (engine/embed.h); nothing is read
 * from disk at run time.
 */
#ifndef TEMPLATE_H
#define TEMPLATE_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

/* One template variable. The renderer never keeps the pointers. */
struct tmpl_var {
	const char *name;  /* placeholder name, without braces */
	const char *value; /* replacement text (NULL renders as "") */
};

/*
 * Renders the template `src` (len bytes, need not be NUL-terminated) into
 * `out`, appending. Returns 0; ENG_EINVAL for an unknown placeholder
 * (err_msg() names it: "unknown placeholder '{foo}'"); ENG_EPARSE for a
 * malformed one (unterminated `{`, lone `}`, bad name); ENG_ETOOBIG or
 * ENG_ENOMEM from the buffer. On error `out` may hold a partial result.
 */
int tmpl_render(const char *src, size_t len, const struct tmpl_var *vars,
		size_t nvars, struct buf *out);

/*
 * Number of phrasing lines (non-empty, not comments) of the embedded file
 * `path` (e.g. "prompts/questions/intention.head_turn.approx.txt").
 * Returns the count (>= 0), or ENG_ENOENT when the file is not embedded.
 */
int tmpl_count(const char *path);

/*
 * The i-th phrasing line of `path` (0-based): *line points into the
 * embedded data (not NUL-terminated at the line end; use *len) and stays
 * valid for the life of the program. Returns 0, ENG_ENOENT (no file) or
 * ENG_ERANGE (i past the end).
 */
int tmpl_line(const char *path, int i, const char **line, size_t *len);

/*
 * Deterministic choice of a phrasing: line (mix(seed) mod count), where mix
 * is a 64-bit finaliser, so nearby seeds pick unrelated lines. Same
 * returns as tmpl_line(); ENG_ENOENT also when the file has no line.
 * *index (when not NULL) receives the chosen line number.
 */
int tmpl_pick(const char *path, uint64_t seed, const char **line, size_t *len,
	      int *index);

/*
 * The text of `key` in the keyed file `path`, e.g. tmpl_keyed(
 * "prompts/answers/exploration.navigate.approx.txt", "leg.left", ...).
 * Returns 0, ENG_ENOENT (no file, or no such key; err_msg() names both).
 */
int tmpl_keyed(const char *path, const char *key, const char **text, size_t *len);

/*
 * Renders the text of `key` of the keyed file `path` with vars, appending
 * to out. Errors as tmpl_keyed() and tmpl_render(); err_msg() then starts
 * with "path:line: ".
 */
int tmpl_render_keyed(const char *path, const char *key,
		      const struct tmpl_var *vars, size_t nvars, struct buf *out);

/*
 * A question for a task ("intention.head_turn.approx", ...): picks a
 * phrasing of prompts/questions/<task>.txt with tmpl_pick(seed) and renders
 * it with vars into out (appending). Typical variables: {target} (the
 * disambiguated object name, see ans_display_name()), {goal} and
 * {candidates} for chains. Errors as tmpl_pick() and tmpl_render(), with
 * "path:line: " in err_msg().
 */
int tmpl_question(const char *task, uint64_t seed, const struct tmpl_var *vars,
		  size_t nvars, struct buf *out);

#endif /* TEMPLATE_H */
