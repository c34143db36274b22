/* SPDX-License-Identifier: MIT */
/* libcurl and its functions, loaded on first use (curldl.h). */
#define CURL_DISABLE_TYPECHECK
#define CURLDL_IMPL
#include <curl/curl.h>

#include "curldl.h"

#include <pthread.h>

#include "banned.h"
#include "dynlib.h"

static const char *const sonames[] = { "libcurl.so.4" };
static struct curldl_fns fns;
const struct curldl_fns *curldl__fns = &fns;
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* NOLINTNEXTLINE(bugprone-macro-parentheses): fn names the field */
#define CURLDL_SYM(fn) { 0, #fn, (void **)&fns.fn },
static const struct dynlib_sym syms[] = { CURLDL_FUNCS(CURLDL_SYM) };
#undef CURLDL_SYM

static struct dynlib lib = {
	sonames, 1, syms, sizeof(syms) / sizeof(syms[0]), "which remote brains need",
	" (Debian: libcurl4)", "",
};

static void load(void)
{
	dynlib_open(&lib);
}

int curldl_load(void)
{
	pthread_once(&once, load);
	return dynlib_result(&lib);
}
