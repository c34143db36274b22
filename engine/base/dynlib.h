/* SPDX-License-Identifier: MIT */
/*
 * Shared libraries loaded on first use: the part that engine/llm/curldl.c
 * (libcurl), engine/out/mhddl.c (libmicrohttpd) and
 * engine/recording/avdl.c (FFmpeg) have in common. Each of them lists its
 * sonames and functions; dynlib_open() opens the libraries in order and
 * fills the function table, or records why it could not.
 */
#ifndef PROXIMA_DYNLIB_H
#define PROXIMA_DYNLIB_H

#include <stddef.h>

/* One function to find: in library `lib` (an index into the sonames). */
struct dynlib_sym {
	int lib;
	const char *name;
	void **slot; /* where its address goes */
};

struct dynlib {
	const char *const *sonames; /* the libraries, opened in this order */
	int nlibs;
	const struct dynlib_sym *syms;
	size_t nsyms;
	const char *needed_by; /* "which remote brains need", for the message */
	const char *hint;      /* appended to it, e.g. " (Debian: libcurl4)", or "" */
	char failure[512];     /* empty after a successful dynlib_open() */
};

/*
 * Opens every library of d (RTLD_NOW | RTLD_LOCAL; the handles are never
 * closed) and stores each function's address in its slot. On failure
 * d->failure names the library that did not load, with dlerror()'s
 * reason, or the function it lacks. Not thread-safe on its own: call it
 * from pthread_once.
 */
void dynlib_open(struct dynlib *d);

/* 0 after a successful dynlib_open(), else ENG_EIO with err_msg() set to d->failure. */
int dynlib_result(const struct dynlib *d);

#endif
