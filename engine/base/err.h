/* SPDX-License-Identifier: MIT */
/*
 * Error codes shared by every layer, and the reporters that only the
 * command layer (engine/main.c, engine/cmd_*.c) may call.
 */
#ifndef ERR_H
#define ERR_H

#include <stdarg.h>

#include "errcode.h"

/* Text for an enum eng_err value. This function can't fail. */
const char *eng_strerror(int code);

/*
 * A detailed message for the most recent failure in this thread: loaders
 * and validators put "file:line: what" here so that the command layer can
 * print it. err_set() formats into a thread-local buffer (truncated at
 * 1023 bytes) and returns `code` so callers can write
 * `return err_set(ENG_EPARSE, "%s:%zu: bad number", path, line);`.
 */
int err_set(int code, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int err_setv(int code, const char *fmt, va_list ap);

/* The current detail message, or "" when none. Valid until the next err_set. */
const char *err_msg(void);

/* Forget the detail message. */
void err_clear(void);

/*
 * Reporters for the command layer only: print "error: ..." (or
 * "warning: ...") to stderr. error() returns -1 so callers can
 * `return error(...)`.
 */
int error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Prints "error: <detail>" using err_msg() when set, else
 * "error: <what>: <eng_strerror(code)>". Returns -1.
 */
int error_code(int code, const char *what);

#ifdef ENG_DEBUG
#include <assert.h>
#define ENG_ASSERT(x) assert(x)
#else
#define ENG_ASSERT(x) ((void)0)
#endif

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#endif /* ERR_H */
