/* SPDX-License-Identifier: MIT */
/* Occupancy grids as PGM images (used by build_occupancy and proxima tool astar). */
#include "gridio.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "banned.h"
#include "err.h"

int gridio_write_pgm(const char *path, const struct grid *g,
		     const int32_t *cells, size_t npath, bool y_up)
{
	size_t total = (size_t)g->w * (size_t)g->h, i;
	uint8_t *img = NULL;
	FILE *f = NULL;
	int y, rc = 0;

	img = malloc(total);
	if (!img)
		return err_set(ENG_ENOMEM, "%s: out of memory", path);
	for (i = 0; i < total; i++) {
		switch (g->cells[i]) {
		case GRID_FREE: img[i] = 255; break;
		case GRID_INFLATED: img[i] = 160; break;
		default: img[i] = 0; break;
		}
	}
	for (i = 0; i < npath; i++) {
		if (cells[i] < 0 || (size_t)cells[i] >= total) {
			rc = err_set(ENG_EINVAL, "%s: path cell %zu outside the grid",
				     path, i);
			goto out;
		}
		img[cells[i]] = 96;
	}
	f = fopen(path, "wb");
	if (!f) {
		rc = err_set(ENG_EIO, "%s: cannot create: %s", path, strerror(errno));
		goto out;
	}
	fprintf(f, "P5\n%d %d\n255\n", g->w, g->h);
	for (y = 0; y < g->h; y++) {
		int row = y_up ? g->h - 1 - y : y;

		fwrite(img + (size_t)row * (size_t)g->w, 1, (size_t)g->w, f);
	}
	if (ferror(f))
		rc = err_set(ENG_EIO, "%s: write error", path);
out:
	if (f && fclose(f) && !rc)
		rc = err_set(ENG_EIO, "%s: write error", path);
	free(img);
	return rc;
}
