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

#include "banned.h"
#include "dynlib.h"

static const char *const sonames[] = { "libmicrohttpd.so.12" };
static struct mhddl_fns fns;
const struct mhddl_fns *mhddl__fns = &fns;

/* NOLINTNEXTLINE(bugprone-macro-parentheses): fn names the field */
#define MHDDL_SYM(fn) { 0, #fn, (void **)&fns.fn },
static const struct dynlib_sym syms[] = { MHDDL_FUNCS(MHDDL_SYM) };
#undef MHDDL_SYM

static struct dynlib lib = {
	.sonames = sonames,
	.nlibs = 1,
	.syms = syms,
	.nsyms = sizeof(syms) / sizeof(syms[0]),
	.needed_by = "which the review server needs",
	.hint = " (Debian: libmicrohttpd12)",
	.lock = PTHREAD_MUTEX_INITIALIZER,
};

int mhddl_load(void)
{
	return dynlib_load(&lib);
}
