/* SPDX-License-Identifier: MIT */
/* Shared libraries loaded on first use (dynlib.h). */
#include "dynlib.h"

#include <dlfcn.h>
#include <stdio.h>

#include "banned.h"
#include "err.h"

#define DYNLIB_MAX 8 /* libraries per table */

/* The load itself; d->failure says why it failed. */
static void dynlib_open(struct dynlib *d)
{
	void *lib[DYNLIB_MAX];
	const char *e;
	size_t i;
	int k;

	d->failure[0] = '\0';
	if (d->nlibs < 1 || d->nlibs > DYNLIB_MAX) {
		snprintf(d->failure, sizeof(d->failure), "%d libraries to load (1 to %d)",
			 d->nlibs, DYNLIB_MAX);
		return;
	}
	for (k = 0; k < d->nlibs; k++) {
		lib[k] = dlopen(d->sonames[k], RTLD_NOW | RTLD_LOCAL);
		if (!lib[k]) {
			e = dlerror();
			snprintf(d->failure, sizeof(d->failure), "cannot load %s, %s: %s%s",
				 d->sonames[k], d->needed_by, e ? e : "unknown error", d->hint);
			return;
		}
	}
	for (i = 0; i < d->nsyms; i++) {
		const struct dynlib_sym *s = &d->syms[i];

		*s->slot = s->lib >= 0 && s->lib < d->nlibs ? dlsym(lib[s->lib], s->name) : NULL;
		if (!*s->slot) {
			snprintf(d->failure, sizeof(d->failure), "%s has no function %s",
				 s->lib >= 0 && s->lib < d->nlibs ? d->sonames[s->lib] : "?",
				 s->name);
			return;
		}
	}
}

int dynlib_load(struct dynlib *d)
{
	int rc = 0;

	pthread_mutex_lock(&d->lock);
	if (!d->tried) {
		dynlib_open(d);
		d->tried = true;
	}
	if (d->failure[0])
		rc = err_set(ENG_EIO, "%s", d->failure);
	pthread_mutex_unlock(&d->lock);
	return rc;
}
