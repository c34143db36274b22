/* SPDX-License-Identifier: MIT */
/* Error codes, the thread-local detail message, and the reporters. */
#include "err.h"

#include <stdio.h>
#include <string.h>

static _Thread_local char err_buf[1024];

const char *eng_strerror(int code)
{
	switch (code) {
	case ENG_OK: return "success";
	case ENG_ENOMEM: return "out of memory";
	case ENG_EINVAL: return "invalid argument";
	case ENG_EIO: return "input/output error";
	case ENG_EDB: return "database error";
	case ENG_EHTTP: return "http error";
	case ENG_EPARSE: return "parse error";
	case ENG_ETOOBIG: return "too large";
	case ENG_ENOENT: return "no such file or item";
	case ENG_ERANGE: return "out of range";
	case ENG_ENOTFOUND: return "not found";
	case ENG_ESCHEMA: return "schema violation";
	case ENG_ETIMEOUT: return "timed out";
	case ENG_ECANCELED: return "canceled";
	default: return "unknown error";
	}
}

int err_setv(int code, const char *fmt, va_list ap)
{
	vsnprintf(err_buf, sizeof(err_buf), fmt, ap);
	return code;
}

int err_set(int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	err_setv(code, fmt, ap);
	va_end(ap);
	return code;
}

const char *err_msg(void)
{
	return err_buf;
}

void err_clear(void)
{
	err_buf[0] = '\0';
}

int error(const char *fmt, ...)
{
	va_list ap;

	fputs("error: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return -1;
}

void warning(const char *fmt, ...)
{
	va_list ap;

	fputs("warning: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int error_code(int code, const char *what)
{
	if (err_buf[0])
		return error("%s", err_buf);
	return error("%s: %s", what, eng_strerror(code));
}
