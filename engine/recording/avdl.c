/* SPDX-License-Identifier: MIT */
/* FFmpeg's libraries and functions, loaded on first use (avdl.h). */
#define AVDL_IMPL
#include "avdl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#include <libavutil/macros.h>

#include "banned.h"
#include "err.h"

enum { AVDL_UTIL, AVDL_CODEC, AVDL_FORMAT, AVDL_SCALE, AVDL_NLIBS };

/* The sonames of the headers built against, e.g. libavformat.so.59. */
static const char *const sonames[AVDL_NLIBS] = {
	"libavutil.so." AV_STRINGIFY(LIBAVUTIL_VERSION_MAJOR),
	"libavcodec.so." AV_STRINGIFY(LIBAVCODEC_VERSION_MAJOR),
	"libavformat.so." AV_STRINGIFY(LIBAVFORMAT_VERSION_MAJOR),
	"libswscale.so." AV_STRINGIFY(LIBSWSCALE_VERSION_MAJOR),
};

static struct avdl_fns fns;
const struct avdl_fns *avdl__fns = &fns;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static char failure[512]; /* empty when the load succeeded */

/*
 * Loads every library, then every function. The handles are never
 * closed: the functions are used until the process ends.
 */
static void load(void)
{
	void *lib[AVDL_NLIBS];
	const char *e;
	int i;

	for (i = 0; i < AVDL_NLIBS; i++) {
		lib[i] = dlopen(sonames[i], RTLD_NOW | RTLD_LOCAL);
		if (!lib[i]) {
			e = dlerror();
			snprintf(failure, sizeof(failure),
				 "cannot load %s, which video decoding and encoding need: %s",
				 sonames[i], e ? e : "unknown error");
			return;
		}
	}
#define AVDL_SYM(l, fn)                                                                      \
	*(void **)&fns.fn = dlsym(lib[l], #fn);                                              \
	if (!fns.fn) {                                                                       \
		snprintf(failure, sizeof(failure), "%s has no function %s", sonames[l], #fn); \
		return;                                                                      \
	}
	AVDL_FUNCS(AVDL_SYM)
#undef AVDL_SYM
}

int avdl_load(void)
{
	pthread_once(&once, load);
	if (failure[0])
		return err_set(ENG_EIO, "%s", failure);
	return 0;
}
