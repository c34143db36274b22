/* SPDX-License-Identifier: MIT */
/*
 * A growable byte buffer with a hard cap (curl's dynbuf): appends that would
 * pass `toobig` fail with ENG_ETOOBIG and leave the buffer unchanged.
 *
 * A buf is caller-allocated: `struct buf b; buf_init(&b, cap);` ... then
 * `buf_release(&b)`. After init, `b.ptr` is either NULL (nothing appended
 * yet) or a NUL-terminated string of `b.len` bytes.
 */
#ifndef BUF_H
#define BUF_H

#include <stdarg.h>
#include <stddef.h>

struct buf {
	char *ptr;     /* contents, NUL-terminated; NULL while empty */
	size_t len;    /* bytes used, not counting the NUL */
	size_t alloc;  /* bytes allocated */
	size_t toobig; /* appends may not make len reach this */
};

/* Prepares an empty buffer that may hold up to toobig - 1 bytes. Can't fail. */
void buf_init(struct buf *b, size_t toobig);

/* Frees the contents; the buffer is empty and reusable. Can't fail. */
void buf_release(struct buf *b);

/* Empties the buffer but keeps its allocation. Can't fail. */
void buf_reset(struct buf *b);

/* Appends len bytes. Returns 0, ENG_ENOMEM or ENG_ETOOBIG. */
int buf_add(struct buf *b, const void *data, size_t len);

/* Appends a NUL-terminated string. Same returns as buf_add(). */
int buf_adds(struct buf *b, const char *s);

/* Appends formatted text. Same returns as buf_add(). */
int buf_addf(struct buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int buf_vaddf(struct buf *b, const char *fmt, va_list ap);

/*
 * Appends the whole file at `path` (the project's one whole-file reader).
 * Returns 0; ENG_ENOENT or ENG_EIO ("cannot open 'PATH': ..."), ENG_EIO on
 * a read error, ENG_ETOOBIG when the file would pass the cap ("'PATH':
 * larger than N bytes"), or ENG_ENOMEM, with err_msg() naming the file.
 * On failure the buffer holds what it held before.
 */
int buf_read_file(struct buf *b, const char *path);

/* The contents as a string ("" when empty). Can't fail. */
const char *buf_str(const struct buf *b);

/*
 * Hands the contents to the caller (who frees them with free()) and
 * leaves the buffer empty. Returns NULL only on allocation failure.
 */
char *buf_detach(struct buf *b);

#endif /* BUF_H */
