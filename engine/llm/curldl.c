/* SPDX-License-Identifier: MIT */
/* libcurl and its functions, loaded on first use (curldl.h). */
#define CURL_DISABLE_TYPECHECK
#define CURLDL_IMPL
#include <curl/curl.h>

#include "curldl.h"

#include "banned.h"
#include "dynlib.h"

static const char *const sonames[] = { "libcurl.so.4" };
static struct curldl_fns fns;
const struct curldl_fns *curldl__fns = &fns;

/* NOLINTNEXTLINE(bugprone-macro-parentheses): fn names the field */
#define CURLDL_SYM(fn) { 0, #fn, (void **)&fns.fn },
static const struct dynlib_sym syms[] = { CURLDL_FUNCS(CURLDL_SYM) };
#undef CURLDL_SYM

static struct dynlib lib = {
	.sonames = sonames,
	.nlibs = 1,
	.syms = syms,
	.nsyms = sizeof(syms) / sizeof(syms[0]),
	.needed_by = "which remote brains need",
	.hint = " (Debian: libcurl4)",
	.lock = PTHREAD_MUTEX_INITIALIZER,
};

int curldl_load(void)
{
	return dynlib_load(&lib);
}
