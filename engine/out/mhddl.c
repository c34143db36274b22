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

#include <pthread.h>

#include "banned.h"
#include "dynlib.h"

static const char *const sonames[] = { "libmicrohttpd.so.12" };
static struct mhddl_fns fns;
const struct mhddl_fns *mhddl__fns = &fns;
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* NOLINTNEXTLINE(bugprone-macro-parentheses): fn names the field */
#define MHDDL_SYM(fn) { 0, #fn, (void **)&fns.fn },
static const struct dynlib_sym syms[] = { MHDDL_FUNCS(MHDDL_SYM) };
#undef MHDDL_SYM

static struct dynlib lib = {
	sonames, 1, syms, sizeof(syms) / sizeof(syms[0]), "which the review server needs",
	" (Debian: libmicrohttpd12)", "",
};

static void load(void)
{
	dynlib_open(&lib);
}

int mhddl_load(void)
{
	pthread_once(&once, load);
	return dynlib_result(&lib);
}
