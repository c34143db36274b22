/* SPDX-License-Identifier: MIT */
/* libmicrohttpd and its functions, loaded on first use (mhddl.h). */
#define MHDDL_IMPL
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <microhttpd.h>

#include "mhddl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#include "banned.h"
#include "err.h"

#define MHDDL_SONAME "libmicrohttpd.so.12"

static struct mhddl_fns fns;
const struct mhddl_fns *mhddl__fns = &fns;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static char failure[512]; /* empty when the load succeeded */

/* Loads the library, then every function. The handle is never closed. */
static void load(void)
{
	void *lib = dlopen(MHDDL_SONAME, RTLD_NOW | RTLD_LOCAL);
	const char *e;

	if (!lib) {
		e = dlerror();
		snprintf(failure, sizeof(failure),
			 "cannot load %s, which the review server needs: %s (Debian: libmicrohttpd12)",
			 MHDDL_SONAME, e ? e : "unknown error");
		return;
	}
#define MHDDL_SYM(fn)                                                                    \
	*(void **)&fns.fn = dlsym(lib, #fn);                                             \
	if (!fns.fn) {                                                                   \
		snprintf(failure, sizeof(failure), "%s has no function %s", MHDDL_SONAME, #fn); \
		return;                                                                  \
	}
	MHDDL_FUNCS(MHDDL_SYM)
#undef MHDDL_SYM
}

int mhddl_load(void)
{
	pthread_once(&once, load);
	if (failure[0])
		return err_set(ENG_EIO, "%s", failure);
	return 0;
}
