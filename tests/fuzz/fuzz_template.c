/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for engine/task/template.h: arbitrary bytes rendered as a
 * template with a few variables, into a bounded buffer.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "template.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct tmpl_var vars[] = {
	{ "target", "the kettle" },
	{ "goal", "wash the board" },
	{ "candidates", "1. A\n2. B" },
	{ "dir.left", "left" },
	{ "empty", "" },
	{ "null", NULL },
	{ "a-b_c", "{not a placeholder}" },
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct buf out;
	int rc;

	buf_init(&out, 4096);
	rc = tmpl_render((const char *)data, size, vars, sizeof(vars) / sizeof(vars[0]),
			 &out);
	if (!rc)
		(void)strlen(buf_str(&out));
	buf_release(&out);

	/* no variables at all: only escapes and plain text can render */
	buf_init(&out, 64);
	(void)tmpl_render((const char *)data, size, NULL, 0, &out);
	buf_release(&out);
	return 0;
}
