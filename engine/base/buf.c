/* SPDX-License-Identifier: MIT */
/* Bounded growable buffer. */
#include "buf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"

void buf_init(struct buf *b, size_t toobig)
{
	b->ptr = NULL;
	b->len = 0;
	b->alloc = 0;
	b->toobig = toobig;
}

void buf_release(struct buf *b)
{
	free(b->ptr);
	b->ptr = NULL;
	b->len = 0;
	b->alloc = 0;
}

void buf_reset(struct buf *b)
{
	b->len = 0;
	if (b->ptr)
		b->ptr[0] = '\0';
}

static int buf_grow(struct buf *b, size_t need)
{
	size_t a;
	char *p;

	if (need < b->alloc)
		return 0;
	a = b->alloc ? b->alloc : 64;
	while (a <= need)
		a *= 2;
	if (a > b->toobig)
		a = b->toobig;
	p = realloc(b->ptr, a);
	if (!p)
		return ENG_ENOMEM;
	b->ptr = p;
	b->alloc = a;
	return 0;
}

int buf_add(struct buf *b, const void *data, size_t len)
{
	int rc;

	if (len >= b->toobig || b->len + len >= b->toobig)
		return ENG_ETOOBIG;
	rc = buf_grow(b, b->len + len);
	if (rc)
		return rc;
	if (len)
		memcpy(b->ptr + b->len, data, len);
	b->len += len;
	b->ptr[b->len] = '\0';
	ENG_ASSERT(b->len < b->toobig && b->len < b->alloc);
	return 0;
}

int buf_adds(struct buf *b, const char *s)
{
	return buf_add(b, s, strlen(s));
}

int buf_vaddf(struct buf *b, const char *fmt, va_list ap)
{
	va_list cp;
	int n;
	int rc;

	va_copy(cp, ap);
	n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	if (n < 0)
		return ENG_EINVAL;
	if (b->len + (size_t)n >= b->toobig)
		return ENG_ETOOBIG;
	rc = buf_grow(b, b->len + (size_t)n);
	if (rc)
		return rc;
	vsnprintf(b->ptr + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
	return 0;
}

int buf_addf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = buf_vaddf(b, fmt, ap);
	va_end(ap);
	return rc;
}

const char *buf_str(const struct buf *b)
{
	return b->ptr ? b->ptr : "";
}

char *buf_detach(struct buf *b)
{
	char *p = b->ptr;

	if (!p)
		p = calloc(1, 1);
	b->ptr = NULL;
	b->len = 0;
	b->alloc = 0;
	return p;
}

int buf_read_file(struct buf *b, const char *path)
{
	size_t keep = b->len, got;
	char chunk[65536];
	FILE *f = fopen(path, "rb");
	int rc = 0, e;

	if (!f) {
		e = errno;
		return err_set(e == ENOENT ? ENG_ENOENT : ENG_EIO, "cannot open '%s': %s", path,
			       strerror(e));
	}
	while ((got = fread(chunk, 1, sizeof(chunk), f)) > 0) {
		rc = buf_add(b, chunk, got);
		if (rc == ENG_ETOOBIG) {
			rc = err_set(ENG_ETOOBIG, "'%s': larger than %zu bytes", path,
				     b->toobig - 1);
			goto out;
		}
		if (rc)
			goto out;
	}
	if (ferror(f))
		rc = err_set(ENG_EIO, "'%s': read error", path);
out:
	fclose(f);
	if (rc) {
		b->len = keep;
		if (b->ptr)
			b->ptr[keep] = '\0';
	}
	return rc;
}
