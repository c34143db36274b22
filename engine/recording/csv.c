/* SPDX-License-Identifier: MIT */
/* A strict CSV reader: header by name, line numbers, strict numbers. */
#include "csv.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "banned.h"
#include "err.h"

struct csv {
	FILE *f;
	char *path;       /* as given to csv_open */
	char *line;       /* current line, split in place into cells */
	size_t line_cap;  /* getline allocation */
	size_t lineno;    /* 1-based line number of `line` */
	char *hdr_buf;    /* copy of the header line, split into names */
	char **hdr;       /* header names, pointing into hdr_buf */
	size_t nhdr;
	char **cell;      /* cells of the current row, pointing into line */
	size_t ncell;
	size_t cell_cap;
	size_t file_bytes;  /* the file's size at open, 0 when unknown */
	size_t hdr_bytes;   /* the header line with its end of line */
	size_t first_bytes; /* the first data row with its end of line, 0 before it */
	size_t raw_bytes;   /* the last line read, with its end of line */
};

/* Reads one raw line into c->line without its end of line. 1, 0 at EOF, <0. */
static int read_line(struct csv *c)
{
	ssize_t n;
	int e;

	errno = 0;
	n = getline(&c->line, &c->line_cap, c->f);
	if (n < 0) {
		e = errno;
		if (ferror(c->f))
			return err_set(ENG_EIO, "%s:%zu: read error: %s", c->path,
				       c->lineno + 1, strerror(e ? e : EIO));
		return 0;
	}
	c->lineno++;
	c->raw_bytes = (size_t)n;
	if (n > 0 && c->line[n - 1] == '\n')
		c->line[--n] = '\0';
	if (n > 0 && c->line[n - 1] == '\r')
		c->line[--n] = '\0';
	if ((size_t)n > CSV_MAX_LINE)
		return err_set(ENG_ETOOBIG, "%s:%zu: line longer than %u bytes", c->path,
			       c->lineno, CSV_MAX_LINE);
	if (memchr(c->line, '\0', (size_t)n))
		return err_set(ENG_EPARSE, "%s:%zu: NUL byte in line", c->path, c->lineno);
	return 1;
}

/* push_cell() when the cell array is full: grows it, then adds s. */
static int grow_cells(struct csv *c, char *s)
{
	size_t cap = c->cell_cap ? c->cell_cap * 2 : 32;
	char **p;

	if (c->ncell >= CSV_MAX_CELLS)
		return err_set(ENG_ETOOBIG, "%s:%zu: more than %d cells", c->path, c->lineno,
			       CSV_MAX_CELLS);
	p = realloc(c->cell, cap * sizeof(*p));
	if (!p)
		return ENG_ENOMEM;
	c->cell = p;
	c->cell_cap = cap;
	c->cell[c->ncell++] = s;
	return 0;
}

static inline int push_cell(struct csv *c, char *s)
{
	if (c->ncell == c->cell_cap)
		return grow_cells(c, s);
	c->cell[c->ncell++] = s;
	return 0;
}

/*
 * Splits `s` in place into cells. A cell that starts with a double quote
 * runs to the matching quote ("" is a literal quote) and must be followed
 * by a comma or the end of the line.
 */
static int split(struct csv *c, char *s)
{
	int rc;

	c->ncell = 0;
	for (;;) {
		if (*s == '"') {
			char *r = s + 1, *w = s;

			for (;;) {
				if (!*r)
					return err_set(ENG_EPARSE, "%s:%zu: unterminated quote in cell %zu",
						       c->path, c->lineno, c->ncell + 1);
				if (*r == '"' && r[1] == '"') {
					*w++ = '"';
					r += 2;
					continue;
				}
				if (*r == '"')
					break;
				*w++ = *r++;
			}
			r++; /* closing quote */
			if (*r && *r != ',')
				return err_set(ENG_EPARSE, "%s:%zu: text after the closing quote of cell %zu",
					       c->path, c->lineno, c->ncell + 1);
			*w = '\0';
			rc = push_cell(c, s);
			if (rc)
				return rc;
			if (!*r)
				return 0;
			s = r + 1;
			continue;
		}
		rc = push_cell(c, s);
		if (rc)
			return rc;
		/* cells are short: a plain scan beats strcspn's setup */
		while (*s && *s != ',')
			s++;
		if (!*s)
			return 0;
		*s++ = '\0';
	}
}

int csv_open(const char *path, struct csv **out)
{
	struct csv *c;
	int rc = 0, e;

	c = calloc(1, sizeof(*c));
	if (!c)
		return ENG_ENOMEM;
	c->path = strdup(path);
	if (!c->path) {
		rc = ENG_ENOMEM;
		goto out;
	}
	c->f = fopen(path, "r");
	if (!c->f) {
		e = errno;
		rc = err_set(e == ENOENT ? ENG_ENOENT : ENG_EIO, "cannot open '%s': %s", path,
			     strerror(e));
		goto out;
	}
	/* one reader per file: getline need not lock the stream at each line */
	__fsetlocking(c->f, FSETLOCKING_BYCALLER);
	{
		struct stat st;

		if (!fstat(fileno(c->f), &st) && S_ISREG(st.st_mode) && st.st_size > 0)
			c->file_bytes = (size_t)st.st_size;
	}
	rc = read_line(c);
	c->hdr_bytes = c->raw_bytes;
	if (rc == 0)
		rc = err_set(ENG_EPARSE, "%s: empty file (no header row)", path);
	if (rc < 0)
		goto out;
	{
		char *h = c->line;
		size_t i, j;

		if (!strncmp(h, "\xEF\xBB\xBF", 3))
			h += 3;
		if (!*h) {
			rc = err_set(ENG_EPARSE, "%s:1: empty header row", path);
			goto out;
		}
		c->hdr_buf = strdup(h);
		if (!c->hdr_buf) {
			rc = ENG_ENOMEM;
			goto out;
		}
		rc = split(c, c->hdr_buf);
		if (rc)
			goto out;
		for (i = 0; i < c->ncell; i++) {
			if (!c->cell[i][0]) {
				rc = err_set(ENG_EPARSE, "%s:1: header column %zu has no name", path,
					     i + 1);
				goto out;
			}
			for (j = 0; j < i; j++)
				if (!strcmp(c->cell[i], c->cell[j])) {
					rc = err_set(ENG_EPARSE, "%s:1: column '%s' appears twice",
						     path, c->cell[i]);
					goto out;
				}
		}
		/* NOLINTNEXTLINE(clang-analyzer-optin.portability.UnixAPI): split() gives a non-empty header at least one cell */
		c->hdr = malloc(c->ncell * sizeof(*c->hdr));
		if (!c->hdr) {
			rc = ENG_ENOMEM;
			goto out;
		}
		memcpy(c->hdr, c->cell, c->ncell * sizeof(*c->hdr));
		c->nhdr = c->ncell;
		c->ncell = 0;
	}
out:
	if (rc) {
		csv_free(c);
		return rc;
	}
	*out = c;
	return 0;
}

void csv_free(struct csv *c)
{
	if (!c)
		return;
	if (c->f)
		fclose(c->f);
	free(c->path);
	free(c->line);
	free(c->hdr_buf);
	free(c->hdr);
	free(c->cell);
	free(c);
}

long csv_col(const struct csv *c, const char *name)
{
	size_t i;

	for (i = 0; i < c->nhdr; i++)
		if (!strcmp(c->hdr[i], name))
			return (long)i;
	return -1;
}

int csv_need(const struct csv *c, const char *name, size_t *idx)
{
	long i = csv_col(c, name);

	if (i < 0)
		return err_set(ENG_EPARSE, "%s:1: missing column '%s'", c->path, name);
	*idx = (size_t)i;
	return 0;
}

int csv_next(struct csv *c)
{
	int rc;

	for (;;) {
		rc = read_line(c);
		if (rc <= 0) {
			c->ncell = 0;
			return rc;
		}
		if (c->line[0])
			break;
	}
	if (!c->first_bytes)
		c->first_bytes = c->raw_bytes;
	rc = split(c, c->line);
	if (rc)
		return rc;
	if (c->ncell != c->nhdr)
		return err_set(ENG_EPARSE, "%s:%zu: %zu cells, the header has %zu%s", c->path,
			       c->lineno, c->ncell, c->nhdr,
			       c->ncell < c->nhdr ? " (truncated row)" : "");
	return 1;
}

/* A tiny first row of a huge file must not reserve gigabytes at once. */
#define CSV_MAX_ESTIMATE ((size_t)1 << 24)

size_t csv_rows_estimate(const struct csv *c)
{
	size_t rest;

	if (!c->first_bytes || c->file_bytes <= c->hdr_bytes)
		return 0;
	rest = (c->file_bytes - c->hdr_bytes) / c->first_bytes;
	/* rows a few bytes shorter than the first: 3% more; no more than 2^24 */
	rest += rest / 32 + 1;
	return rest < CSV_MAX_ESTIMATE ? rest : CSV_MAX_ESTIMATE;
}

size_t csv_ncols(const struct csv *c)
{
	return c->nhdr;
}

const char *csv_cell(const struct csv *c, size_t col)
{
	return col < c->ncell ? c->cell[col] : "";
}

const char *csv_header(const struct csv *c, size_t col)
{
	return col < c->nhdr ? c->hdr[col] : "";
}

size_t csv_line(const struct csv *c)
{
	return c->lineno;
}

const char *csv_path(const struct csv *c)
{
	return c->path;
}

int csv_err(const struct csv *c, int code, const char *fmt, ...)
{
	char msg[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return err_set(code, "%s:%zu: %s", c->path, c->lineno, msg);
}

/* A short printable copy of a cell for messages (control bytes become '?'). */
static void shown(const char *s, char *out, size_t cap)
{
	size_t i;

	for (i = 0; s[i] && i + 4 < cap; i++)
		/* NOLINTNEXTLINE(bugprone-narrowing-conversions): both arms are chars */
		out[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
	if (s[i]) {
		out[i++] = '.';
		out[i++] = '.';
		out[i++] = '.';
	}
	out[i] = '\0';
}

static int bad_cell(const struct csv *c, size_t col, const char *what)
{
	char s[48];

	shown(csv_cell(c, col), s, sizeof(s));
	return csv_err(c, ENG_EPARSE, "column '%s': '%s' %s", csv_header(c, col), s, what);
}

static int empty_cell(const struct csv *c, size_t col)
{
	return csv_err(c, ENG_EPARSE, "column '%s' is empty", csv_header(c, col));
}

/* strtod on the whole cell; no leading space, no trailing junk. */
/*
 * Clinger's fast path for the plain decimals recordings hold,
 * [-+]digits[.digits]: when the digits make an integer m < 2^53 and at
 * most 22 of them follow the point, m / 10^k is one correctly rounded
 * division of two exact doubles, so the value equals strtod's. False
 * (nothing stored) for anything else, which strtod then reads.
 */
static bool fast_f64(const char *s, double *out)
{
	static const double p10[23] = {
		1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
		1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
	};
	const char *p, *q;
	uint64_t m = 0;
	bool neg = *s == '-';
	long nd, k = 0;
	double v;

	if (*s == '-' || *s == '+')
		s++;
	/* at most 19 digits fit in m; the 2^53 bound is checked once at the end */
	for (p = s; (unsigned)(*p - '0') < 10 && p - s < 19; p++)
		m = m * 10 + (uint64_t)(*p - '0');
	nd = p - s;
	if (*p == '.') {
		for (q = ++p; (unsigned)(*p - '0') < 10 && nd + (p - q) < 19; p++)
			m = m * 10 + (uint64_t)(*p - '0');
		k = p - q;
		nd += k;
	}
	if (*p || !nd || k > 22 || m >= (uint64_t)1 << 53)
		return false;
	v = (double)m / p10[k];
	*out = neg ? -v : v;
	return true;
}

static int parse_f64(const struct csv *c, size_t col, double *out)
{
	const char *s = csv_cell(c, col);
	char *end;
	double v;

	if (!*s)
		return empty_cell(c, col);
	if (*s == ' ' || *s == '\t')
		return bad_cell(c, col, "is not a number");
	if (fast_f64(s, out))
		return 0;
	errno = 0;
	v = strtod(s, &end);
	if (end == s || *end)
		return bad_cell(c, col, "is not a number");
	if (isnan(v) || isinf(v))
		return bad_cell(c, col, "is not a finite number (NaN or infinity)");
	if (errno == ERANGE && fabs(v) > 1.0)
		return bad_cell(c, col, "is out of range");
	*out = v;
	return 0;
}

int csv_f64(const struct csv *c, size_t col, double *out)
{
	return parse_f64(c, col, out);
}

int csv_f64_opt(const struct csv *c, size_t col, double def, double *out)
{
	if (!*csv_cell(c, col)) {
		*out = def;
		return 0;
	}
	return parse_f64(c, col, out);
}

int csv_f64_nan(const struct csv *c, size_t col, double *out)
{
	const char *s = csv_cell(c, col);

	if (!*s || !strcmp(s, "nan") || !strcmp(s, "NaN") || !strcmp(s, "NAN")) {
		*out = NAN;
		return 0;
	}
	return parse_f64(c, col, out);
}

int csv_i64(const struct csv *c, size_t col, int64_t *out)
{
	const char *s = csv_cell(c, col);
	char *end;
	long long v;

	if (!*s)
		return empty_cell(c, col);
	if (!(*s == '-' || *s == '+' || (*s >= '0' && *s <= '9')))
		return bad_cell(c, col, "is not an integer");
	{
		/* up to 18 digits cannot overflow: read here, as strtoll would */
		const char *p = s + (*s == '-' || *s == '+');
		int64_t m = 0;
		int nd = 0;

		for (; *p >= '0' && *p <= '9' && nd < 18; p++, nd++)
			m = m * 10 + (*p - '0');
		if (!*p && nd >= 1) {
			*out = *s == '-' ? -m : m;
			return 0;
		}
	}
	errno = 0;
	v = strtoll(s, &end, 10);
	if (end == s || *end)
		return bad_cell(c, col, "is not an integer");
	if (errno == ERANGE)
		return csv_err(c, ENG_ERANGE, "column '%s': integer out of range",
			       csv_header(c, col));
	*out = (int64_t)v;
	return 0;
}

int csv_u64(const struct csv *c, size_t col, uint64_t *out)
{
	const char *s = csv_cell(c, col);
	char *end;
	unsigned long long v;

	if (!*s)
		return empty_cell(c, col);
	/* strtoull accepts "-1" (and wraps it): insist on digits only */
	if (!(*s >= '0' && *s <= '9'))
		return bad_cell(c, col, "is not an unsigned integer");
	errno = 0;
	v = strtoull(s, &end, 10);
	if (*end)
		return bad_cell(c, col, "is not an unsigned integer");
	if (errno == ERANGE)
		return csv_err(c, ENG_ERANGE, "column '%s': integer out of range",
			       csv_header(c, col));
	*out = (uint64_t)v;
	return 0;
}
