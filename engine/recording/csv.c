/* SPDX-License-Identifier: MIT */
/* A strict CSV reader: header by name, line numbers, strict numbers. */
#include "csv.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "banned.h"
#include "err.h"

/*
 * The reader keeps its own buffer: the file is read in large blocks and
 * each line is split where it lies, instead of getline() copying it out.
 * CSV_PAD bytes before the data and after its end are always readable
 * (zeroed), so that the cell scanner and the number readers may load 16
 * bytes past a line's end or 16 before a cell's start; what they load
 * outside the cell is masked off.
 */
#define CSV_PAD 64
#define CSV_BLOCK ((size_t)256 << 10) /* first buffer size and read size */

struct csv {
	int fd;
	char *path;       /* as given to csv_open */
	char *mem;        /* the allocation: CSV_PAD, cap bytes of data, CSV_PAD */
	char *buf;        /* mem + CSV_PAD */
	size_t cap;       /* data bytes the buffer holds */
	size_t beg, end;  /* unread data: buf[beg, end) */
	size_t scanned;   /* bytes from beg already known to hold no newline */
	bool eof;
	char *line;       /* current line, in buf, split in place into cells */
	size_t line_len;  /* its length without the end of line */
	size_t lineno;    /* 1-based line number of `line` */
	char *hdr_buf;    /* copy of the header line, split into names */
	char **hdr;       /* header names, pointing into hdr_buf */
	size_t nhdr;
	char **cell;      /* cells of the current row, pointing into line */
	uint32_t *clen;   /* their lengths */
	size_t ncell;
	size_t cell_cap;
	size_t file_bytes;  /* the file's size at open, 0 when unknown */
	size_t hdr_bytes;   /* the header line with its end of line */
	size_t first_bytes; /* the first data row with its end of line, 0 before it */
	size_t raw_bytes;   /* the last line read, with its end of line */
};

/* Makes room after buf[end] and reads the next block. 0 or <0. */
static int fill(struct csv *c)
{
	ssize_t n;
	int e;

	if (c->beg) {
		memmove(c->buf, c->buf + c->beg, c->end - c->beg);
		c->end -= c->beg;
		c->beg = 0;
	}
	if (c->end >= (size_t)CSV_MAX_LINE + 2)
		return err_set(ENG_ETOOBIG, "%s:%zu: line longer than %u bytes", c->path,
			       c->lineno + 1, CSV_MAX_LINE);
	if (c->end == c->cap) {
		size_t cap = c->cap * 2;
		char *m = realloc(c->mem, cap + 2 * CSV_PAD);

		if (!m)
			return ENG_ENOMEM;
		c->mem = m;
		c->buf = m + CSV_PAD;
		c->cap = cap;
	}
	do {
		n = read(c->fd, c->buf + c->end, c->cap - c->end);
	} while (n < 0 && errno == EINTR);
	if (n < 0) {
		e = errno;
		return err_set(ENG_EIO, "%s:%zu: read error: %s", c->path, c->lineno + 1,
			       strerror(e ? e : EIO));
	}
	if (n == 0)
		c->eof = true;
	c->end += (size_t)n;
	memset(c->buf + c->end, 0, CSV_PAD);
	return 0;
}

/* Reads one raw line into c->line without its end of line. 1, 0 at EOF, <0. */
static int read_line(struct csv *c)
{
	char *s, *nl;
	size_t n;
	int rc;

	for (;;) {
		s = c->buf + c->beg;
		nl = memchr(s + c->scanned, '\n', c->end - c->beg - c->scanned);
		if (nl)
			break;
		c->scanned = c->end - c->beg;
		if (c->eof) {
			if (c->beg == c->end)
				return 0;
			nl = c->buf + c->end; /* a last line without a newline */
			break;
		}
		rc = fill(c);
		if (rc)
			return rc;
	}
	n = (size_t)(nl - s);
	c->lineno++;
	c->raw_bytes = n + (nl < c->buf + c->end);
	c->beg += c->raw_bytes;
	c->scanned = 0;
	/*
	 * The line is not terminated here: a byte stored now would stall the
	 * wide loads of the cell scanner and the number readers that follow
	 * (a load cannot take its bytes from a smaller store still in flight).
	 * Whoever needs a C string writes its terminator (line_cstr).
	 */
	if (n > 0 && s[n - 1] == '\r')
		n--;
	c->line = s;
	c->line_len = n;
	if (n > CSV_MAX_LINE)
		return err_set(ENG_ETOOBIG, "%s:%zu: line longer than %u bytes", c->path,
			       c->lineno, CSV_MAX_LINE);
	if (memchr(s, '\0', n))
		return err_set(ENG_EPARSE, "%s:%zu: NUL byte in line", c->path, c->lineno);
	return 1;
}

/* The current line as a C string. */
static char *line_cstr(struct csv *c)
{
	c->line[c->line_len] = '\0';
	return c->line;
}

/* push_cell() when the cell array is full: grows it, then adds s. */
static int grow_cells(struct csv *c, char *s)
{
	size_t cap = c->cell_cap ? c->cell_cap * 2 : 32;
	char **p;
	uint32_t *l;

	if (c->ncell >= CSV_MAX_CELLS)
		return err_set(ENG_ETOOBIG, "%s:%zu: more than %d cells", c->path, c->lineno,
			       CSV_MAX_CELLS);
	p = realloc(c->cell, cap * sizeof(*p));
	if (!p)
		return ENG_ENOMEM;
	c->cell = p;
	l = realloc(c->clen, cap * sizeof(*l));
	if (!l)
		return ENG_ENOMEM;
	c->clen = l;
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
		char *at = s;

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
			c->clen[c->ncell - 1] = (uint32_t)(w - s);
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
		c->clen[c->ncell - 1] = (uint32_t)(s - at);
		if (!*s)
			return 0;
		*s++ = '\0';
	}
}

#if defined(__SSE2__)
/*
 * split() for a line of the buffer (n bytes, 16 past its end readable):
 * the commas found 16 bytes at a time. A line with a double quote goes
 * to split(), which knows the quoting rules. The cells are recorded by
 * start and length and not terminated (see read_line); csv_cell() writes
 * a cell's terminator over the comma after it when asked for the text.
 */
static int split_line(struct csv *c, char *s, size_t n)
{
	const __m128i comma = _mm_set1_epi8(','), quote = _mm_set1_epi8('"');
	size_t i, k;
	int rc;

	c->ncell = 0;
	rc = push_cell(c, s);
	if (rc)
		return rc;
	for (i = 0; i < n; i += 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
		unsigned lim = n - i < 16 ? (1u << (n - i)) - 1 : 0xffffu;
		unsigned m = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, comma)) & lim;

		if ((unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, quote)) & lim) {
			s[n] = '\0';
			return split(c, s);
		}
		while (m) {
			rc = push_cell(c, s + i + (size_t)__builtin_ctz(m) + 1);
			if (rc)
				return rc;
			m &= m - 1;
		}
	}
	for (k = 0; k + 1 < c->ncell; k++)
		c->clen[k] = (uint32_t)(c->cell[k + 1] - c->cell[k] - 1);
	c->clen[k] = (uint32_t)(s + n - c->cell[k]);
	return 0;
}
#else
static int split_line(struct csv *c, char *s, size_t n)
{
	s[n] = '\0';
	return split(c, s);
}
#endif

int csv_open(const char *path, struct csv **out)
{
	struct csv *c;
	int rc = 0, e;

	c = calloc(1, sizeof(*c));
	if (!c)
		return ENG_ENOMEM;
	c->fd = -1;
	c->path = strdup(path);
	if (!c->path) {
		rc = ENG_ENOMEM;
		goto out;
	}
	c->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (c->fd < 0) {
		e = errno;
		rc = err_set(e == ENOENT ? ENG_ENOENT : ENG_EIO, "cannot open '%s': %s", path,
			     strerror(e));
		goto out;
	}
	{
		struct stat st;

		if (!fstat(c->fd, &st) && S_ISREG(st.st_mode) && st.st_size > 0)
			c->file_bytes = (size_t)st.st_size;
	}
	c->cap = CSV_BLOCK;
	c->mem = calloc(1, c->cap + 2 * CSV_PAD);
	if (!c->mem) {
		rc = ENG_ENOMEM;
		goto out;
	}
	c->buf = c->mem + CSV_PAD;
	rc = read_line(c);
	c->hdr_bytes = c->raw_bytes;
	if (rc == 0)
		rc = err_set(ENG_EPARSE, "%s: empty file (no header row)", path);
	if (rc < 0)
		goto out;
	{
		char *h = line_cstr(c);
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
	if (c->fd >= 0)
		close(c->fd);
	free(c->path);
	free(c->mem);
	free(c->hdr_buf);
	free(c->hdr);
	free(c->cell);
	free(c->clen);
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
		if (c->line_len)
			break;
	}
	if (!c->first_bytes)
		c->first_bytes = c->raw_bytes;
	rc = split_line(c, c->line, c->line_len);
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
	if (col >= c->ncell)
		return "";
	c->cell[col][c->clen[col]] = '\0';
	return c->cell[col];
}

bool csv_empty(const struct csv *c, size_t col)
{
	return col >= c->ncell || !c->clen[col];
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

/* The length of cell `col` of the current row (0 past the end). */
static inline size_t cell_len(const struct csv *c, size_t col)
{
	return col < c->ncell ? c->clen[col] : 0;
}

static const double csv_p10[23] = {
	1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

/*
 * Clinger's fast path for the plain decimals recordings hold,
 * [-+]digits[.digits]: when the digits make an integer m < 2^53 and at
 * most 22 of them follow the point, m / 10^k is one correctly rounded
 * division of two exact doubles, so the value equals strtod's. False
 * (nothing stored) for anything else, which strtod then reads.
 */
static bool scan_f64(const char *s, double *out)
{
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
	v = (double)m / csv_p10[k];
	*out = neg ? -v : v;
	return true;
}

#if defined(__SSE2__) && defined(__x86_64__)
#define CSV_SIMD 1
/*
 * The n (1..16) characters that end at `e` (16 bytes before it readable,
 * which the reader's CSV_PAD makes true of every cell): when they are all
 * digits but at most one '.', stores the digits as one integer in *m
 * (m < 10^16) and the count after the point in *k, and returns true. One
 * pass of SSE2 over the last 16 bytes, no branch on each character: the
 * digits before the point are taken from a load one byte earlier, which
 * closes the gap of the point, the bytes before the cell are masked to 0,
 * and the 16 digits become a number by pairs, quads and octets.
 */
static inline bool digits16(const char *e, size_t n, uint64_t *m, unsigned *k)
{
	const __m128i idx = _mm_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
	__m128i v1 = _mm_loadu_si128((const __m128i *)(const void *)(e - 16));
	__m128i v0 = _mm_loadu_si128((const __m128i *)(const void *)(e - 17));
	__m128i d = _mm_sub_epi8(v1, _mm_set1_epi8('0'));
	unsigned lim = 0xffffu & ~((1u << (16 - n)) - 1);
	unsigned dig = (unsigned)_mm_movemask_epi8(
		_mm_cmpeq_epi8(_mm_min_epu8(d, _mm_set1_epi8(9)), d)) & lim;
	unsigned dot = (unsigned)_mm_movemask_epi8(
		_mm_cmpeq_epi8(v1, _mm_set1_epi8('.'))) & lim;
	int dp = dot ? __builtin_ctz(dot) : -1, nd = (int)n - (dot != 0);
	__m128i sel, r, t;

	if ((dig | dot) != lim || (dot & (dot - 1)) || nd == 0)
		return false;
	/* byte j: the cell's byte j when after the point, the one before it else */
	sel = _mm_cmpgt_epi8(idx, _mm_set1_epi8((char)dp));
	r = _mm_or_si128(_mm_and_si128(sel, v1), _mm_andnot_si128(sel, v0));
	/* digit values, the first at byte 16 - nd, zeros before */
	r = _mm_and_si128(_mm_sub_epi8(r, _mm_set1_epi8('0')),
			  _mm_cmpgt_epi8(idx, _mm_set1_epi8((char)(15 - nd))));
	/* 16-bit lanes: 10 a + b; 32-bit: 100 ab + cd; 64-bit: 10^4 abcd + efgh */
	t = _mm_add_epi16(_mm_mullo_epi16(_mm_and_si128(r, _mm_set1_epi16(0xff)),
					  _mm_set1_epi16(10)),
			  _mm_srli_epi16(r, 8));
	t = _mm_madd_epi16(t, _mm_setr_epi16(100, 1, 100, 1, 100, 1, 100, 1));
	t = _mm_add_epi64(_mm_mul_epu32(t, _mm_set1_epi32(10000)), _mm_srli_epi64(t, 32));
	*m = (uint64_t)_mm_cvtsi128_si64(t) * 100000000u +
	     (uint64_t)_mm_cvtsi128_si64(_mm_unpackhi_epi64(t, t));
	*k = dot ? 15u - (unsigned)dp : 0;
	return true;
}

/*
 * scan_f64() for a cell of the buffer whose length is known, terminated
 * or not, of up to 16 characters after the sign (digits16). False for
 * anything else (scan_f64 and strtod then read the cell).
 */
static inline bool fast_f64(const char *s, size_t len, double *out)
{
	size_t n = len - (*s == '-' || *s == '+');
	unsigned k;
	uint64_t m, bits;
	double v;

	if (n == 0 || n > 16 || !digits16(s + len, n, &m, &k) || m >= (uint64_t)1 << 53)
		return false;
	v = (double)m / csv_p10[k];
	/* the sign without a branch: signs of measured values are random */
	memcpy(&bits, &v, sizeof(bits));
	bits |= (uint64_t)(*s == '-') << 63;
	memcpy(out, &bits, sizeof(bits));
	return true;
}
#else
#define CSV_SIMD 0
#endif

static int parse_f64(const struct csv *c, size_t col, double *out)
{
	size_t len = cell_len(c, col);
	const char *s;
	char *end;
	double v;

	if (!len)
		return empty_cell(c, col);
#if CSV_SIMD
	s = c->cell[col];
	if (*s != ' ' && *s != '\t' && fast_f64(s, len, out))
		return 0;
#endif
	s = csv_cell(c, col);
	if (*s == ' ' || *s == '\t')
		return bad_cell(c, col, "is not a number");
	if (scan_f64(s, out))
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

int csv_f64s(const struct csv *c, const size_t *cols, size_t n, double *out, size_t *nread)
{
	uint32_t slow = 0;
	size_t i;
	int rc;

	ENG_ASSERT(n <= 32);
#if CSV_SIMD
	/*
	 * Every cell first, with no call and no early exit between them, so
	 * that the divisions of one row overlap; what the fast path leaves is
	 * read in order below, as csv_f64() reads it.
	 */
	for (i = 0; i < n; i++) {
		size_t len = cell_len(c, cols[i]);
		const char *s = len ? c->cell[cols[i]] : NULL;

		if (!s || *s == ' ' || *s == '\t' || !fast_f64(s, len, &out[i]))
			slow |= (uint32_t)1 << i;
	}
#else
	slow = n == 32 ? UINT32_MAX : ((uint32_t)1 << n) - 1;
#endif
	for (i = 0; slow; i++, slow >>= 1) {
		if (!(slow & 1))
			continue;
		rc = parse_f64(c, cols[i], &out[i]);
		if (rc) {
			*nread = i;
			return rc;
		}
	}
	*nread = n;
	return 0;
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
	const char *s;
	char *end;
	long long v;

	if (!cell_len(c, col))
		return empty_cell(c, col);
#if CSV_SIMD
	{
		/* up to 16 digits: checked and read without a loop, unterminated */
		const char *q = c->cell[col];
		size_t n = c->clen[col] - (*q == '-' || *q == '+');
		uint64_t m;
		unsigned k;

		if (n >= 1 && n <= 16 && digits16(q + c->clen[col], n, &m, &k) &&
		    !k && q[c->clen[col] - 1] != '.') {
			int64_t neg = -(int64_t)(*q == '-');

			*out = ((int64_t)m ^ neg) - neg;
			return 0;
		}
	}
#endif
	s = csv_cell(c, col);
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
