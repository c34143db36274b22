/* SPDX-License-Identifier: MIT */
/*
 * Thread warm-up: the stack and heap pages a new thread would fault in
 * during its first work.
 */
#include "warm.h"

#include <stdlib.h>

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
