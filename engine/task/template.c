/* SPDX-License-Identifier: MIT */
/* Placeholder templates and the embedded template files. */
#include "template.h"

#include <stdio.h>
#include <string.h>

#include "banned.h"
#include "embed.h"
#include "err.h"
#include "rng.h"

static int name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
}

static const struct tmpl_var *find_var(const struct tmpl_var *vars, size_t nvars,
				       const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < nvars; i++)
		if (vars[i].name && strlen(vars[i].name) == len &&
		    !memcmp(vars[i].name, name, len))
			return &vars[i];
	return NULL;
}

int tmpl_render(const char *src, size_t len, const struct tmpl_var *vars,
		size_t nvars, struct buf *out)
{
	size_t i = 0, run = 0;
	int rc = 0;

	while (i < len) {
		char c = src[i];
		size_t j;
		const struct tmpl_var *v;

		if (c != '{' && c != '}') {
			i++;
			continue;
		}
		/* flush the literal run [run, i) */
		rc = buf_add(out, src + run, i - run);
		if (rc)
			goto out;
		if (i + 1 < len && src[i + 1] == c) {
			rc = buf_add(out, &c, 1);
			if (rc)
				goto out;
			i += 2;
			run = i;
			continue;
		}
		if (c == '}') {
			rc = err_set(ENG_EPARSE, "lone '}' at offset %zu", i);
			goto out;
		}
		for (j = i + 1; j < len && name_char(src[j]); j++)
			;
		if (j >= len || src[j] != '}' || j == i + 1) {
			if (j >= len)
				rc = err_set(ENG_EPARSE, "unterminated '{' at offset %zu", i);
			else
				rc = err_set(ENG_EPARSE, "malformed placeholder at offset %zu", i);
			goto out;
		}
		v = find_var(vars, nvars, src + i + 1, j - i - 1);
		if (!v) {
			rc = err_set(ENG_EINVAL, "unknown placeholder '{%.*s}'",
				     (int)(j - i - 1), src + i + 1);
			goto out;
		}
		if (v->value) {
			rc = buf_adds(out, v->value);
			if (rc)
				goto out;
		}
		i = j + 1;
		run = i;
	}
	rc = buf_add(out, src + run, len - run);
out:
	return rc;
}

/*
 * Walks the entry lines of an embedded file. Calls fn for each line that
 * is not empty and not a comment, with its 1-based line number; stops when
 * fn returns non-zero and returns that value.
 */
static int each_line(const struct embed_file *f,
		     int (*fn)(const char *s, size_t len, int lineno, void *arg),
		     void *arg)
{
	const char *p = f->data, *end = f->data + f->len;
	int lineno = 0;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *e = nl ? nl : end;
		size_t len;
		int rc;

		lineno++;
		while (e > p && (e[-1] == '\r' || e[-1] == ' ' || e[-1] == '\t'))
			e--;
		len = (size_t)(e - p);
		if (len && p[0] != '#') {
			rc = fn(p, len, lineno, arg);
			if (rc)
				return rc;
		}
		p = nl ? nl + 1 : end;
	}
	return 0;
}

struct line_pick {
	int want;        /* index wanted, or -1 to count */
	int seen;
	const char *line;
	size_t len;
	int lineno;
};

static int pick_cb(const char *s, size_t len, int lineno, void *arg)
{
	struct line_pick *lp = arg;

	if (lp->seen == lp->want) {
		lp->line = s;
		lp->len = len;
		lp->lineno = lineno;
		return 1;
	}
	lp->seen++;
	return 0;
}

static const struct embed_file *find_file(const char *path)
{
	const struct embed_file *f = embed_find(path);

	if (!f)
		err_set(ENG_ENOENT, "%s: template file not embedded", path);
	return f;
}

int tmpl_count(const char *path)
{
	const struct embed_file *f = find_file(path);
	struct line_pick lp = { -1, 0, NULL, 0, 0 };

	if (!f)
		return ENG_ENOENT;
	each_line(f, pick_cb, &lp);
	return lp.seen;
}

static int line_at(const char *path, int i, const char **line, size_t *len,
		   int *lineno)
{
	const struct embed_file *f = find_file(path);
	struct line_pick lp = { i, 0, NULL, 0, 0 };

	if (!f)
		return ENG_ENOENT;
	if (i < 0 || !each_line(f, pick_cb, &lp))
		return err_set(ENG_ERANGE, "%s: no phrasing %d", path, i);
	*line = lp.line;
	*len = lp.len;
	if (lineno)
		*lineno = lp.lineno;
	return 0;
}

int tmpl_line(const char *path, int i, const char **line, size_t *len)
{
	return line_at(path, i, line, len, NULL);
}


static int pick_at(const char *path, uint64_t seed, const char **line,
		   size_t *len, int *index, int *lineno)
{
	int n = tmpl_count(path), i;

	if (n < 0)
		return n;
	if (n == 0)
		return err_set(ENG_ENOENT, "%s: no phrasing lines", path);
	i = (int)(rng_mix64(seed ^ 0x7175657374696f6eULL) % (uint64_t)n);
	if (index)
		*index = i;
	return line_at(path, i, line, len, lineno);
}

int tmpl_pick(const char *path, uint64_t seed, const char **line, size_t *len,
	      int *index)
{
	return pick_at(path, seed, line, len, index, NULL);
}

struct key_find {
	const char *key;
	size_t klen;
	const char *text;
	size_t len;
	int lineno;
};

static int key_cb(const char *s, size_t len, int lineno, void *arg)
{
	struct key_find *kf = arg;
	size_t i;

	/* a key may carry a phrasing variant: "turn~2" */
	for (i = 0; i < len && (name_char(s[i]) || s[i] == '~'); i++)
		;
	if (i != kf->klen || i >= len || s[i] != ':' || memcmp(s, kf->key, i))
		return 0;
	i++;
	if (i < len && s[i] == ' ')
		i++;
	kf->text = s + i;
	kf->len = len - i;
	kf->lineno = lineno;
	return 1;
}

static int keyed_at(const char *path, const char *key, const char **text,
		    size_t *len, int *lineno)
{
	const struct embed_file *f = find_file(path);
	struct key_find kf = { key, strlen(key), NULL, 0, 0 };

	if (!f)
		return ENG_ENOENT;
	if (!each_line(f, key_cb, &kf))
		return err_set(ENG_ENOENT, "%s: no key '%s'", path, key);
	*text = kf.text;
	*len = kf.len;
	if (lineno)
		*lineno = kf.lineno;
	return 0;
}

int tmpl_keyed(const char *path, const char *key, const char **text, size_t *len)
{
	return keyed_at(path, key, text, len, NULL);
}

/* Prefixes the current detail message with "path:line: ". */
static int located(int rc, const char *path, int lineno)
{
	char msg[768];

	snprintf(msg, sizeof(msg), "%s", err_msg());
	return err_set(rc, "%s:%d: %s", path, lineno, msg);
}

int tmpl_render_keyed(const char *path, const char *key,
		      const struct tmpl_var *vars, size_t nvars, struct buf *out)
{
	const char *t;
	size_t len;
	int lineno = 0;
	int rc;

	rc = keyed_at(path, key, &t, &len, &lineno);
	if (rc)
		return rc;
	rc = tmpl_render(t, len, vars, nvars, out);
	if (rc)
		return located(rc, path, lineno);
	return 0;
}

int tmpl_question(const char *task, uint64_t seed, const struct tmpl_var *vars,
		  size_t nvars, struct buf *out)
{
	char path[256];
	const char *line;
	size_t len;
	int lineno = 0;
	int rc;

	if (!task || snprintf(path, sizeof(path), "prompts/questions/%s.txt", task) >=
			     (int)sizeof(path))
		return err_set(ENG_EINVAL, "bad task name");
	rc = pick_at(path, seed, &line, &len, NULL, &lineno);
	if (rc)
		return rc;
	rc = tmpl_render(line, len, vars, nvars, out);
	if (rc)
		return located(rc, path, lineno);
	return 0;
}
