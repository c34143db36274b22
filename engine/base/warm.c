/* SPDX-License-Identifier: MIT */
/*
 * Thread warm-up: the stack and heap pages a new thread would fault in
 * during its first work; and the process's heap on 2 MB pages.
 */
#include "warm.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

void warm_thread(void)
{
	volatile char stack[WARM_STACK_BYTES];
	/* volatile: the compiler drops a malloc whose block nothing reads */
	void *volatile heap = malloc(64);
	size_t i;

	for (i = 0; i < sizeof(stack); i += 4096)
		stack[i] = 0;
	free(heap);
}

/* mimalloc's, when it is the process's malloc; NULL under another (a weak reference) */
extern bool mi_manage_os_memory(void *start, size_t size, bool is_committed, bool is_large,
				bool is_zero, int numa_node) __attribute__((weak));

/* mimalloc's segments are 32 MB, aligned to their size: the arena starts on such a boundary */
#define WARM_ALIGN ((size_t)32 << 20)

void warm_heap(size_t bytes)
{
	char *map, *p;
	size_t len;

	if (!mi_manage_os_memory || !bytes)
		return;
	bytes = (bytes + WARM_ALIGN - 1) & ~(WARM_ALIGN - 1);
	len = bytes + WARM_ALIGN;
	map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		   -1, 0);
	if (map == MAP_FAILED)
		return;
	p = (char *)(((uintptr_t)map + WARM_ALIGN - 1) & ~(uintptr_t)(WARM_ALIGN - 1));
	(void)madvise(p, bytes, MADV_HUGEPAGE);
	/*
	 * committed (mapped: the kernel backs what is touched), not "large"
	 * (mimalloc takes a large arena only under its large-pages option),
	 * zero (fresh)
	 */
	if (!mi_manage_os_memory(p, bytes, true, false, true, -1))
		munmap(map, len);
}
