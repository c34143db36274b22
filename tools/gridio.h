/* SPDX-License-Identifier: MIT */
/*
 * Writing occupancy grids as images, for looking at what the rasteriser
 * and the path finder did (geometry/ has no I/O, so it lives here).
 */
#ifndef GRIDIO_H
#define GRIDIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "grid.h"

/*
 * Writes g as a binary PGM (P5, 8-bit): GRID_FREE 255, GRID_INFLATED 160,
 * other values 0, and the optional path cells (grid indices, as
 * astar_path gives; NULL when npath is 0) 96. With y_up the last grid row
 * is written first, so world +Y points up in the picture (use it for world
 * grids; Moving AI maps read top row first and want y_up false).
 * Returns 0, ENG_EINVAL for a path index outside g, ENG_ENOMEM, or
 * ENG_EIO with err_set naming the path.
 */
int gridio_write_pgm(const char *path, const struct grid *g,
		     const int32_t *cells, size_t npath, bool y_up);

#endif /* GRIDIO_H */
