/* SPDX-License-Identifier: MIT */
/* A new thread's first page faults, taken before its work starts. */
#ifndef PROXIMA_WARM_H
#define PROXIMA_WARM_H

#include <stddef.h>

/* The stack a thread touches in warm_thread(): more than a session uses (about 40 KB). */
#define WARM_STACK_BYTES (64u << 10)

/*
 * Touches the calling thread's first WARM_STACK_BYTES of stack below the
 * caller and takes its allocator heap (one allocation, freed): the page
 * faults a new thread's first work would otherwise take, 10 us each in a
 * virtual machine. For threads that start together and would wait for
 * each other's faults, called while the cores are otherwise idle.
 * Can't fail.
 */
void warm_thread(void);

/*
 * Gives the allocator, when it is mimalloc, an arena of `bytes` (reserved,
 * backed as touched) on 2 MB pages, which it takes its memory from before
 * asking the system: one fault per 2 MB instead of one per 4 KB page. No
 * effect under another malloc, or when the system refuses. Can't fail.
 */
void warm_heap(size_t bytes);

#endif
