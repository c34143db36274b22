/* SPDX-License-Identifier: MIT */
/* Moving AI .map and .scen readers and writers. */
#include "movingai.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "banned.h"
#include "buf.h"
#include "err.h"

/* ---------------------------------------------------------------- */
/* Files and lines                                                    */

/* Reads a whole file into a malloc'd buffer (NUL-terminated). */
static int read_file(const char *path, char **out, size_t *len)
{
	struct buf b;
	int rc;

	buf_init(&b, MOVINGAI_MAX_FILE + 1);
	rc = buf_read_file(&b, path);
	if (rc) {
		buf_release(&b);
		return rc;
	}
	*len = b.len;
	*out = b.ptr ? buf_detach(&b) : strdup("");
	return *out ? 0 : ENG_ENOMEM;
}

struct lines {
	const char *p, *end;
	size_t no; /* number of the line last returned */
};

/* The next line without its "\n" or "\r\n"; false at the end. */
static bool next_line(struct lines *it, const char **s, size_t *len)
{
	const char *e;

	if (it->p >= it->end)
		return false;
	e = memchr(it->p, '\n', (size_t)(it->end - it->p));
	if (!e)
		e = it->end;
	*s = it->p;
	*len = (size_t)(e - it->p);
	if (*len && (*s)[*len - 1] == '\r')
		(*len)--;
	it->p = e < it->end ? e + 1 : e;
	it->no++;
	return true;
}

/* Copies s[0..len) into buf (size cap) as a string; false if too long. */
static bool copy_field(char *buf, size_t cap, const char *s, size_t len)
{
	if (len >= cap)
		return false;
	memcpy(buf, s, len);
	buf[len] = '\0';
	return true;
}

/* A whole-field decimal integer in [lo, hi]. */
static bool parse_int(const char *s, size_t len, long lo, long hi, int *out)
{
	char buf[32], *end;
	long v;

	if (!len || !copy_field(buf, sizeof(buf), s, len))
		return false;
	if (buf[0] == ' ' || buf[0] == '\t' || buf[0] == '+')
		return false;
	errno = 0;
	v = strtol(buf, &end, 10);
	if (errno || *end || v < lo || v > hi)
		return false;
	*out = (int)v;
	return true;
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t';
}

/*
 * A header line "KEY VALUE" (blanks between, trailing blanks allowed):
 * true when it starts with key, and stores the value's span.
 */
static bool header_kv(const char *s, size_t len, const char *key,
		      const char **val, size_t *vlen)
{
	size_t k = strlen(key), i;

	if (len < k || memcmp(s, key, k))
		return false;
	if (len > k && !is_space(s[k]))
		return false;
	for (i = k; i < len && is_space(s[i]); i++)
		;
	while (len > i && is_space(s[len - 1]))
		len--;
	*val = s + i;
	*vlen = len - i;
	return true;
}

/* ---------------------------------------------------------------- */
/* Maps                                                               */

static int map_char(char c)
{
	switch (c) {
	case '.': case 'G': case 'S':
		return GRID_FREE;
	case '@': case 'O': case 'T': case 'W':
		return GRID_OCCUPIED;
	default:
		return -1;
	}
}

int movingai_map_parse(const char *text, size_t len, const char *name,
		       struct movingai_map *m)
{
	struct lines it = { text, text + len, 0 };
	const char *s, *v;
	size_t n, vn;
	int w = -1, h = -1, x, y, rc = 0;
	uint8_t *cells = NULL;

	memset(m, 0, sizeof(*m));
	if (!next_line(&it, &s, &n) || !header_kv(s, n, "type", &v, &vn) || !vn)
		return err_set(ENG_EPARSE, "%s:1: expected 'type octile'", name);
	for (;;) {
		if (!next_line(&it, &s, &n))
			return err_set(ENG_EPARSE, "%s:%zu: missing 'map' line",
				       name, it.no);
		if (header_kv(s, n, "height", &v, &vn)) {
			if (!parse_int(v, vn, 1, GRID_MAX_DIM, &h))
				return err_set(ENG_EPARSE, "%s:%zu: bad height '%.*s'",
					       name, it.no, (int)vn, v);
		} else if (header_kv(s, n, "width", &v, &vn)) {
			if (!parse_int(v, vn, 1, GRID_MAX_DIM, &w))
				return err_set(ENG_EPARSE, "%s:%zu: bad width '%.*s'",
					       name, it.no, (int)vn, v);
		} else if (header_kv(s, n, "map", &v, &vn) && !vn) {
			break;
		} else {
			return err_set(ENG_EPARSE, "%s:%zu: unexpected header line '%.*s'",
				       name, it.no, (int)(n > 40 ? 40 : n), s);
		}
	}
	if (h < 0 || w < 0)
		return err_set(ENG_EPARSE, "%s:%zu: 'map' before %s", name, it.no,
			       h < 0 ? "'height'" : "'width'");
	cells = malloc(grid_cells_needed(w, h));
	if (!cells)
		return err_set(ENG_ENOMEM, "%s: out of memory", name);
	for (y = 0; y < h; y++) {
		uint8_t *row = cells + (size_t)y * (size_t)w;

		if (!next_line(&it, &s, &n)) {
			rc = err_set(ENG_EPARSE, "%s:%zu: expected %d map rows, found %d",
				     name, it.no + 1, h, y);
			goto out;
		}
		if (n != (size_t)w) {
			rc = err_set(ENG_EPARSE, "%s:%zu: row %d has %zu characters, expected %d",
				     name, it.no, y, n, w);
			goto out;
		}
		for (x = 0; x < w; x++) {
			int c = map_char(s[x]);

			if (c < 0) {
				rc = err_set(ENG_EPARSE,
					     "%s:%zu: bad map character 0x%02x at column %d",
					     name, it.no, (unsigned char)s[x], x + 1);
				goto out;
			}
			row[x] = (uint8_t)c;
		}
	}
	m->cells = cells;
	m->grid.w = w;
	m->grid.h = h;
	m->grid.x0 = 0;
	m->grid.y0 = 0;
	m->grid.cell = 1;
	m->grid.cells = cells;
	cells = NULL;
out:
	free(cells);
	return rc;
}

int movingai_map_load(const char *path, struct movingai_map *m)
{
	char *text = NULL;
	size_t len = 0;
	int rc;

	memset(m, 0, sizeof(*m));
	rc = read_file(path, &text, &len);
	if (!rc)
		rc = movingai_map_parse(text, len, path, m);
	free(text);
	return rc;
}

void movingai_map_release(struct movingai_map *m)
{
	free(m->cells);
	memset(m, 0, sizeof(*m));
}

int movingai_map_write(const char *path, const struct grid *g)
{
	FILE *f;
	char *row = NULL;
	int x, y, rc = 0;

	f = fopen(path, "wb");
	if (!f)
		return err_set(ENG_EIO, "%s: cannot create: %s", path, strerror(errno));
	row = malloc((size_t)g->w + 1);
	if (!row) {
		rc = err_set(ENG_ENOMEM, "%s: out of memory", path);
		goto out;
	}
	fprintf(f, "type octile\nheight %d\nwidth %d\nmap\n", g->h, g->w);
	for (y = 0; y < g->h; y++) {
		const uint8_t *src = g->cells + (size_t)y * (size_t)g->w;

		for (x = 0; x < g->w; x++)
			row[x] = src[x] == GRID_FREE ? '.' : '@';
		row[g->w] = '\n';
		fwrite(row, 1, (size_t)g->w + 1, f);
	}
out:
	free(row);
	if (!rc && ferror(f))
		rc = err_set(ENG_EIO, "%s: write error", path);
	if (fclose(f) && !rc)
		rc = err_set(ENG_EIO, "%s: write error", path);
	return rc;
}

/* ---------------------------------------------------------------- */
/* Scenarios                                                          */

static const char *const scen_fields[9] = {
	"bucket", "map", "map width", "map height", "start x", "start y",
	"goal x", "goal y", "optimal length",
};

static int scen_line(const char *s, size_t n, const char *name, size_t no,
		     struct movingai_scen *out)
{
	const char *f[9];
	size_t fl[9], i, k = 0, start = 0;
	int *ints[8];
	char buf[64], *end;
	double d;

	for (i = 0; i <= n; i++) {
		if (i < n && s[i] != '\t')
			continue;
		if (k < 9) {
			f[k] = s + start;
			fl[k] = i - start;
		}
		k++;
		start = i + 1;
	}
	if (k != 9)
		return err_set(ENG_EPARSE, "%s:%zu: expected 9 tab-separated fields, found %zu",
			       name, no, k);
	memset(out, 0, sizeof(*out));
	ints[0] = &out->bucket;
	ints[1] = NULL;
	ints[2] = &out->map_w;
	ints[3] = &out->map_h;
	ints[4] = &out->sx;
	ints[5] = &out->sy;
	ints[6] = &out->gx;
	ints[7] = &out->gy;
	for (i = 0; i < 8; i++) {
		long lo = (i == 2 || i == 3) ? 1 : 0;
		long hi = i == 0 ? 1000000000L : GRID_MAX_DIM;

		if (!ints[i])
			continue;
		if (!parse_int(f[i], fl[i], lo, hi, ints[i]))
			return err_set(ENG_EPARSE, "%s:%zu: bad %s '%.*s'", name, no,
				       scen_fields[i], (int)(fl[i] > 32 ? 32 : fl[i]), f[i]);
	}
	if (!fl[1] || !copy_field(out->map, sizeof(out->map), f[1], fl[1]))
		return err_set(ENG_EPARSE, "%s:%zu: bad map name", name, no);
	if (!fl[8] || !copy_field(buf, sizeof(buf), f[8], fl[8]) ||
	    is_space(buf[0]))
		return err_set(ENG_EPARSE, "%s:%zu: bad optimal length", name, no);
	errno = 0;
	d = strtod(buf, &end);
	if (errno || *end || !isfinite(d) || d < 0)
		return err_set(ENG_EPARSE, "%s:%zu: bad optimal length '%s'", name,
			       no, buf);
	out->optimal = d;
	out->line = no;
	return 0;
}

int movingai_scen_parse(const char *text, size_t len, const char *name,
			struct movingai_scenset *s)
{
	struct lines it = { text, text + len, 0 };
	struct movingai_scen *v = NULL, *grown;
	const char *l, *val;
	size_t n, vn, cnt = 0, cap = 0;
	int rc = 0;

	memset(s, 0, sizeof(*s));
	if (!next_line(&it, &l, &n) || !header_kv(l, n, "version", &val, &vn) ||
	    !vn)
		return err_set(ENG_EPARSE, "%s:1: expected 'version 1'", name);
	while (next_line(&it, &l, &n)) {
		size_t i;

		for (i = 0; i < n && is_space(l[i]); i++)
			;
		if (i == n)
			continue;
		if (cnt == cap) {
			cap = cap ? cap * 2 : 256;
			grown = realloc(v, cap * sizeof(*v));
			if (!grown) {
				rc = err_set(ENG_ENOMEM, "%s: out of memory", name);
				goto out;
			}
			v = grown;
		}
		rc = scen_line(l, n, name, it.no, &v[cnt]);
		if (rc)
			goto out;
		cnt++;
	}
	s->v = v;
	s->n = cnt;
	v = NULL;
out:
	free(v);
	return rc;
}

int movingai_scen_load(const char *path, struct movingai_scenset *s)
{
	char *text = NULL;
	size_t len = 0;
	int rc;

	memset(s, 0, sizeof(*s));
	rc = read_file(path, &text, &len);
	if (!rc)
		rc = movingai_scen_parse(text, len, path, s);
	free(text);
	return rc;
}

void movingai_scen_release(struct movingai_scenset *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
}

int movingai_scen_check(const struct movingai_scenset *s, const char *name,
			const struct movingai_map *m)
{
	const struct grid *g = &m->grid;
	size_t i;

	for (i = 0; i < s->n; i++) {
		const struct movingai_scen *p = &s->v[i];

		if (p->map_w != g->w || p->map_h != g->h)
			return err_set(ENG_EINVAL,
				       "%s:%zu: scenario map is %dx%d but the map is %dx%d",
				       name, p->line, p->map_w, p->map_h, g->w, g->h);
		if (!grid_in(g, p->sx, p->sy))
			return err_set(ENG_EINVAL, "%s:%zu: start (%d, %d) outside the map",
				       name, p->line, p->sx, p->sy);
		if (!grid_in(g, p->gx, p->gy))
			return err_set(ENG_EINVAL, "%s:%zu: goal (%d, %d) outside the map",
				       name, p->line, p->gx, p->gy);
	}
	return 0;
}

int movingai_scen_write(const char *path, const struct movingai_scen *v,
			size_t n)
{
	FILE *f;
	size_t i;
	int rc = 0;

	f = fopen(path, "wb");
	if (!f)
		return err_set(ENG_EIO, "%s: cannot create: %s", path, strerror(errno));
	fprintf(f, "version 1\n");
	for (i = 0; i < n; i++)
		fprintf(f, "%d\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%.8f\n", v[i].bucket,
			v[i].map, v[i].map_w, v[i].map_h, v[i].sx, v[i].sy,
			v[i].gx, v[i].gy, v[i].optimal);
	if (ferror(f))
		rc = err_set(ENG_EIO, "%s: write error", path);
	if (fclose(f) && !rc)
		rc = err_set(ENG_EIO, "%s: write error", path);
	return rc;
}
