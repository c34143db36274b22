/* SPDX-License-Identifier: MIT */
/* libcurl and its functions, loaded on first use (curldl.h). */
#define CURL_DISABLE_TYPECHECK
#define CURLDL_IMPL
#include <curl/curl.h>

#include "curldl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#include "banned.h"
#include "err.h"

#define CURLDL_SONAME "libcurl.so.4"

static struct curldl_fns fns;
const struct curldl_fns *curldl__fns = &fns;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static char failure[512]; /* empty when the load succeeded */

/* Loads the library, then every function. The handle is never closed. */
static void load(void)
{
	void *lib = dlopen(CURLDL_SONAME, RTLD_NOW | RTLD_LOCAL);
	const char *e;

	if (!lib) {
		e = dlerror();
		snprintf(failure, sizeof(failure),
			 "cannot load %s, which remote brains need: %s (Debian: libcurl4)",
			 CURLDL_SONAME, e ? e : "unknown error");
		return;
	}
#define CURLDL_SYM(fn)                                                                   \
	*(void **)&fns.fn = dlsym(lib, #fn);                                             \
	if (!fns.fn) {                                                                   \
		snprintf(failure, sizeof(failure), "%s has no function %s", CURLDL_SONAME, #fn); \
		return;                                                                  \
	}
	CURLDL_FUNCS(CURLDL_SYM)
#undef CURLDL_SYM
}

int curldl_load(void)
{
	pthread_once(&once, load);
	if (failure[0])
		return err_set(ENG_EIO, "%s", failure);
	return 0;
}
