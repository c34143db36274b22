/* SPDX-License-Identifier: MIT */
/*
 * A small, strict CSV reader for the recording loaders: a header row,
 * columns found by header name, comma-separated cells (a cell may be
 * double-quoted, with "" for a quote, on one line), line numbers in every
 * error message. Numbers are parsed strictly: no empty cell, no leading
 * space, no trailing junk, no NaN or infinity unless the caller asks.
 *
 * Every error goes through err_set() as "path:line: what" (err_msg() gives
 * it) and returns a negative enum eng_err.
 *
 * Memory: a struct csv owns its file handle and line buffer; cell strings
 * returned by csv_cell() point into that buffer and stay valid until the
 * next csv_next() or csv_free().
 */
#ifndef CSV_H
#define CSV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct csv;

/* Longest line accepted (bytes, without the newline). */
#define CSV_MAX_LINE (1u << 20)
/* Most cells accepted on one line. */
#define CSV_MAX_CELLS 4096

/*
 * Opens `path` and reads its header row (a UTF-8 byte-order mark is
 * skipped; blank lines before the header are not allowed). On success
 * stores the reader in *out and returns 0. Returns ENG_ENOENT when the file
 * does not exist, ENG_EIO when it cannot be read, ENG_EPARSE when it is
 * empty or the header is malformed, ENG_ENOMEM; *out is then untouched.
 */
int csv_open(const char *path, struct csv **out);

/* Closes the file and frees everything. csv_free(NULL) is a no-op. */
void csv_free(struct csv *c);

/* The index of the header column named `name` (exact match), or -1. */
long csv_col(const struct csv *c, const char *name);

/*
 * Like csv_col() for a column the caller cannot do without: stores the
 * index in *idx and returns 0, or returns ENG_EPARSE with
 * "path:1: missing column 'name'".
 */
int csv_need(const struct csv *c, const char *name, size_t *idx);

/*
 * Reads the next data row. Returns 1 when a row was read, 0 at the end of
 * the file, or a negative code: ENG_EPARSE when the row has a different
 * number of cells than the header (a truncated row) or an unterminated
 * quote, ENG_ETOOBIG for an overlong line, ENG_EIO on a read error. Blank
 * lines are skipped.
 */
int csv_next(struct csv *c);

/* Number of header columns. Can't fail. */
size_t csv_ncols(const struct csv *c);

/* The text of cell `col` of the current row ("" past the end). Can't fail. */
const char *csv_cell(const struct csv *c, size_t col);

/*
 * Whether cell `col` of the current row is empty (or past the end), without
 * writing its terminator as csv_cell() does. Can't fail.
 */
bool csv_empty(const struct csv *c, size_t col);

/* The header name of column `col`. Can't fail. */
const char *csv_header(const struct csv *c, size_t col);

/* Line number (1 = header) of the current row. Can't fail. */
size_t csv_line(const struct csv *c);

/*
 * About how many data rows the file holds, from its size and the length
 * of the first data row (0 before csv_next() has read one, or for a file
 * whose size is unknown): a reader sizes its array once instead of
 * growing it row by row. An estimate, a little above for rows of even
 * length; at most 2^24; never a limit. Can't fail.
 */
size_t csv_rows_estimate(const struct csv *c);

/* The path given to csv_open(). Can't fail. */
const char *csv_path(const struct csv *c);

/*
 * Number parsers for cell `col` of the current row. Each returns 0 and
 * stores the value, or ENG_EPARSE ("path:line: column 'x': ...") for an
 * empty cell, a cell that is not entirely a number, or (for csv_f64) NaN
 * or infinity; ENG_ERANGE when the value does not fit.
 */
int csv_f64(const struct csv *c, size_t col, double *out);
int csv_i64(const struct csv *c, size_t col, int64_t *out);
int csv_u64(const struct csv *c, size_t col, uint64_t *out);

/*
 * csv_f64() of cells cols[0 .. n-1] (n <= 32) into out[0 .. n-1], in one
 * pass for the plain decimals that recordings hold. Returns 0, or the
 * error csv_f64() gives for the first cell in cols order that it refuses;
 * *nread is then that cell's position (the cells before it are stored),
 * else n.
 */
int csv_f64s(const struct csv *c, const size_t *cols, size_t n, double *out, size_t *nread);

/* Like csv_f64() but an empty cell gives `def`. */
int csv_f64_opt(const struct csv *c, size_t col, double def, double *out);

/*
 * Like csv_f64() for columns where a missing value is written as an empty
 * cell, "nan" or "NaN" (pandas): those give NAN. Other text is still an
 * error; infinity is still an error.
 */
int csv_f64_nan(const struct csv *c, size_t col, double *out);

/*
 * Reports an error about the current row: formats "path:line: " followed
 * by the message into err_set() and returns `code`.
 */
int csv_err(const struct csv *c, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif /* CSV_H */
