/* SPDX-License-Identifier: MIT */
/*
 * Shared libraries loaded on first use: the part that engine/llm/curldl.c
 * (libcurl), engine/out/mhddl.c (libmicrohttpd) and
 * engine/recording/avdl.c (FFmpeg) have in common. Each of them lists its
 * sonames and functions in a static struct dynlib; dynlib_load() opens the
 * libraries in order and fills the function table once, or records why it
 * could not.
 */
#ifndef PROXIMA_DYNLIB_H
#define PROXIMA_DYNLIB_H

#include <pthread.h>
#include <stdbool.h>
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
	pthread_mutex_t lock;  /* PTHREAD_MUTEX_INITIALIZER */
	bool tried;            /* the load ran (under lock) */
	char failure[512];     /* empty after a successful load */
};

/*
 * Opens every library of d (RTLD_NOW | RTLD_LOCAL; the handles are never
 * closed) and stores each function's address in its slot, the first time
 * it is called for d; later calls return the first outcome. Returns 0, or
 * ENG_EIO with err_msg() naming the library that did not load (with
 * dlerror()'s reason) or the function it lacks. Thread-safe.
 */
int dynlib_load(struct dynlib *d);

#endif
