/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for engine/recording/movingai.h: arbitrary bytes parsed as a
 * Moving AI .map and as a .scen file; an input holding both (the map, a
 * line "----", the scenarios) is also checked scenario against map.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "grid.h"
#include "movingai.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_map(const struct movingai_map *m)
{
	size_t i, n = (size_t)m->grid.w * (size_t)m->grid.h;

	if (m->grid.w < 1 || m->grid.h < 1 || m->grid.cells != m->cells)
		abort();
	for (i = 0; i < n; i++)
		if (m->cells[i] != GRID_FREE && m->cells[i] != GRID_OCCUPIED)
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data, *sep = NULL, *p;
	struct movingai_map m;
	struct movingai_scenset s;
	size_t i;

	if (!movingai_map_parse(text, size, "fuzz.map", &m)) {
		check_map(&m);
		movingai_map_release(&m);
	}
	if (!movingai_scen_parse(text, size, "fuzz.scen", &s)) {
		for (i = 0; i < s.n; i++)
			if (!memchr(s.v[i].map, '\0', sizeof(s.v[i].map)))
				abort();
		movingai_scen_release(&s);
	}
	for (p = text; p + 5 <= text + size; p++)
		if (!memcmp(p, "\n----", 5)) {
			sep = p;
			break;
		}
	if (!sep)
		return 0;
	if (movingai_map_parse(text, (size_t)(sep - text) + 1, "fuzz.map", &m))
		return 0;
	p = memchr(sep + 1, '\n', (size_t)(text + size - sep - 1));
	if (p && !movingai_scen_parse(p + 1, (size_t)(text + size - p - 1),
				      "fuzz.scen", &s)) {
		if (!movingai_scen_check(&s, "fuzz.scen", &m))
			for (i = 0; i < s.n; i++)
				if (!grid_in(&m.grid, s.v[i].sx, s.v[i].sy) ||
				    !grid_in(&m.grid, s.v[i].gx, s.v[i].gy))
					abort();
		movingai_scen_release(&s);
	}
	movingai_map_release(&m);
	return 0;
}
