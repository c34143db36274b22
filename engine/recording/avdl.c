/* SPDX-License-Identifier: MIT */
/* FFmpeg's libraries and functions, loaded on first use (avdl.h). */
#define AVDL_IMPL
#include "avdl.h"

#include <libavutil/macros.h>

#include "banned.h"
#include "dynlib.h"

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

/* NOLINTNEXTLINE(bugprone-macro-parentheses): fn names the field */
#define AVDL_SYM(l, fn) { l, #fn, (void **)&fns.fn },
static const struct dynlib_sym syms[] = { AVDL_FUNCS(AVDL_SYM) };
#undef AVDL_SYM

static struct dynlib lib = {
	.sonames = sonames,
	.nlibs = AVDL_NLIBS,
	.syms = syms,
	.nsyms = sizeof(syms) / sizeof(syms[0]),
	.needed_by = "which video decoding and encoding need",
	.hint = "",
	.lock = PTHREAD_MUTEX_INITIALIZER,
};

int avdl_load(void)
{
	return dynlib_load(&lib);
}
