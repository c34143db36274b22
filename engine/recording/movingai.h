/* SPDX-License-Identifier: MIT */
/*
 * Moving AI grid benchmark files (docs/formats.md section 6): `.map`
 * octile maps and `.scen` scenario lists, read into a struct grid and an
 * array of problems, and written back for generated benchmark maps.
 *
 * A map is read exactly: the header `type T`, `height H`, `width W` (in
 * either order), `map`, then exactly H rows of W characters; '.', 'G' and
 * 'S' are passable, '@', 'O', 'T' and 'W' blocked, anything else is an
 * error. CRLF line ends are accepted and lines after the H rows are
 * ignored. Cell (x, y) of the grid is column x of map row y (row 0 is the
 * first row of the file), with cell = 1 and x0 = y0 = 0.
 *
 * A scenario file starts with a `version X` line; every other non-empty
 * line holds 9 tab-separated fields: bucket, map, map width, map height,
 * start x, start y, goal x, goal y, optimal length.
 *
 * Failures return a negative enum eng_err and set err_set() to
 * "file:line: what".
 */
#ifndef MOVINGAI_H
#define MOVINGAI_H

#include <stddef.h>
#include <stdint.h>

#include "grid.h"

struct movingai_map {
	struct grid grid; /* view over cells; GRID_OCCUPIED for blocked */
	uint8_t *cells;   /* owned, grid.w * grid.h bytes */
};

/* Largest file either reader accepts. */
#define MOVINGAI_MAX_FILE ((size_t)256 << 20)

/*
 * Reads the map file at path into m (which the caller provides; its old
 * contents are ignored). Returns 0, ENG_ENOENT or ENG_EIO when the file
 * cannot be read, ENG_ETOOBIG past MOVINGAI_MAX_FILE, ENG_EPARSE for a bad
 * header, a short or long row, a missing row or an unknown character, or
 * ENG_ENOMEM. On failure m holds nothing to release.
 */
int movingai_map_load(const char *path, struct movingai_map *m);

/*
 * The same from text[0..len) (need not be NUL-terminated); name is used
 * in error messages. Same returns, minus the file errors.
 */
int movingai_map_parse(const char *text, size_t len, const char *name,
		       struct movingai_map *m);

/* Frees m's cells and zeroes m. Can't fail; a zeroed m is fine. */
void movingai_map_release(struct movingai_map *m);

/*
 * Writes g as a Moving AI map ("type octile", '.' for GRID_FREE cells,
 * '@' for any other), grid row y as file row y. Returns 0, or ENG_EIO
 * (with err_set naming the path) when the file cannot be written.
 */
int movingai_map_write(const char *path, const struct grid *g);

/* One scenario (problem) of a .scen file. */
struct movingai_scen {
	int bucket;
	char map[256];      /* map field as written */
	int map_w, map_h;   /* map size the problem was made for */
	int sx, sy;         /* start cell */
	int gx, gy;         /* goal cell */
	double optimal;     /* optimal length, cells */
	size_t line;        /* 1-based line in the file */
};

struct movingai_scenset {
	struct movingai_scen *v; /* owned array */
	size_t n;
};

/*
 * Reads the scenario file at path into s (caller-provided). Returns 0,
 * the file errors of movingai_map_load(), ENG_EPARSE for a missing version
 * line, a line without exactly 9 tab-separated fields or a bad number in
 * one (the message names the line and the field), or ENG_ENOMEM. On
 * failure s holds nothing to release.
 */
int movingai_scen_load(const char *path, struct movingai_scenset *s);

/* The same from text[0..len); name is used in messages. */
int movingai_scen_parse(const char *text, size_t len, const char *name,
			struct movingai_scenset *s);

/* Frees s's array and zeroes s. Can't fail; a zeroed s is fine. */
void movingai_scen_release(struct movingai_scenset *s);

/*
 * Checks every problem of s (read from the file called name) against map
 * m: its map width and height must equal the map's, and its start and
 * goal must lie inside the map. Returns 0 or ENG_EINVAL with
 * "name:line: what".
 */
int movingai_scen_check(const struct movingai_scenset *s, const char *name,
			const struct movingai_map *m);

/*
 * Writes n problems as a scenario file ("version 1" and one tab-separated
 * line each, the optimal length with 8 decimals). Returns 0 or ENG_EIO.
 */
int movingai_scen_write(const char *path, const struct movingai_scen *v,
			size_t n);

#endif /* MOVINGAI_H */
