/* SPDX-License-Identifier: MIT */
/*
 * Occupancy grid over the world XY plane (docs/design.md section 3). A grid is
 * a transparent view over caller memory: w * h bytes, row-major, cell
 * (cx, cy) at index cy * w + cx. Cell (0, 0) has its minimum corner at
 * world (x0, y0); column cx grows with world +X and row cy with world +Y.
 * The centre of cell (cx, cy) is (x0 + (cx + 0.5) cell, y0 + (cy + 0.5) cell).
 *
 * Obstacles come from world boxes: a box whose vertical span overlaps the
 * band [floor + band_lo, floor + band_hi] blocks every cell whose centre
 * lies inside its exact XY footprint (the convex outline of the box seen
 * from above, a rotated rectangle for an upright box) and, as inflation,
 * every cell whose centre lies within inflate_m of that footprint.
 *
 * The same struct holds Moving AI benchmark maps (cell = 1, x0 = y0 = 0,
 * row cy = map line cy). Pure functions: no I/O, no allocation.
 */
#ifndef GRID_H
#define GRID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "obb.h"

/* Cell values. Anything but GRID_FREE blocks movement. */
enum grid_cell {
	GRID_FREE = 0,
	GRID_OCCUPIED = 1, /* centre inside a box footprint (or a map wall) */
	GRID_INFLATED = 2  /* centre within the inflation radius only */
};

/* Largest accepted width or height, in cells. */
#define GRID_MAX_DIM 16384

struct grid {
	int w, h;        /* columns (along +X) and rows (along +Y), >= 1 */
	float x0, y0;    /* world XY of the minimum corner of cell (0, 0), m */
	float cell;      /* cell edge, m, > 0 */
	uint8_t *cells;  /* w * h enum grid_cell values, caller memory */
};

/* Rasterisation settings; grid_defaults() gives the docs/design.md values. */
struct grid_params {
	float cell_m;    /* cell edge (0.10) */
	float inflate_m; /* obstacle inflation radius (0.25) */
	float band_lo_m; /* obstacle band bottom above the floor (0.05) */
	float band_hi_m; /* obstacle band top above the floor (1.8) */
	float margin_m;  /* margin added around the bounds (0.5) */
	float cam_floor_m; /* floor = camera z - this when there are no boxes (1.6) */
};

/* Counts by cell value. */
struct grid_summary {
	size_t free;     /* GRID_FREE cells */
	size_t occupied; /* GRID_OCCUPIED cells */
	size_t inflated; /* GRID_INFLATED cells */
};

/* No box skipped by grid_rasterize(). */
#define GRID_SKIP_NONE ((size_t)-1)

/* Fills p with the defaults above. Can't fail. */
void grid_defaults(struct grid_params *p);

/*
 * Bytes of cell memory a w x h grid needs (w * h), or 0 when w or h is
 * below 1 or above GRID_MAX_DIM.
 */
size_t grid_cells_needed(int w, int h);

/*
 * Makes g a w x h view over `cells` (at least grid_cells_needed(w, h)
 * bytes, owned by the caller, kept by g) and marks every cell free.
 * Returns 0, or ENG_EINVAL for a bad size, a cell edge that is not a
 * positive finite number, or a NULL cells pointer (g is then unchanged).
 */
int grid_init(struct grid *g, uint8_t *cells, int w, int h, float x0,
	      float y0, float cell);

/*
 * The floor height: the lowest bottom of the n boxes, or cam_z -
 * p->cam_floor_m when n is 0. Can't fail.
 */
float grid_floor(const struct obb *boxes, size_t n, float cam_z,
		 const struct grid_params *p);

/*
 * The XY bounds of a scene: the XY extent of the n boxes (all of them,
 * including any that grid_rasterize() will skip), widened to hold the
 * camera position cam (or not when cam is NULL), plus p->margin_m on every
 * side. Stores the minimum corner in lo and the maximum in hi. Returns 0,
 * or ENG_EINVAL when there is neither a box nor a camera or a coordinate
 * is not finite.
 */
int grid_scene_bounds(const struct obb *boxes, size_t n, const float *cam,
		      const struct grid_params *p, float lo[2], float hi[2]);

/*
 * The grid shape covering [lo, hi] with cells of `cell` metres: x0, y0 =
 * lo and w = ceil((hi - lo) / cell) (at least 1), same for h. Returns 0,
 * or ENG_EINVAL for empty or non-finite bounds, ENG_ETOOBIG when a side
 * would pass GRID_MAX_DIM cells.
 */
int grid_shape(const float lo[2], const float hi[2], float cell, int *w,
	       int *h);

/*
 * Marks the obstacles of n world boxes in g (cells already blocked stay
 * blocked; GRID_OCCUPIED wins over GRID_INFLATED). A box is skipped when
 * its index equals `skip` (GRID_SKIP_NONE for none), when skip_mask is
 * not NULL and skip_mask[i] is nonzero, or when its vertical span does not
 * overlap [floor_z + p->band_lo_m, floor_z + p->band_hi_m] (a box whose
 * top is at or below the band bottom, or whose bottom is at or above the
 * band top, is skipped). p->cell_m is not used: g's own cell is.
 * Returns 0, or ENG_EINVAL for a NULL argument with n > 0 or a box with a
 * non-finite value (cells marked before it stay marked).
 */
int grid_rasterize(struct grid *g, const struct obb *boxes, size_t n,
		   const struct grid_params *p, float floor_z, size_t skip,
		   const uint8_t *skip_mask);

/*
 * The cells grid_rasterize() may mark for box b with inflation radius
 * infl_m (p->inflate_m): columns [*x_lo, *x_hi] and rows [*y_lo, *y_hi],
 * clamped to g (empty when *x_hi < *x_lo or *y_hi < *y_lo). Returns 0, or
 * ENG_EINVAL for a box with a non-finite corner.
 */
int grid_box_range(const struct grid *g, const struct obb *b, float infl_m, int *x_lo,
		   int *x_hi, int *y_lo, int *y_hi);

/* Counts the cells by value. Can't fail. */
void grid_summarize(const struct grid *g, struct grid_summary *out);

/* True when (cx, cy) is inside g. Can't fail. */
bool grid_in(const struct grid *g, int cx, int cy);

/* True when (cx, cy) is inside g and GRID_FREE. Can't fail. */
bool grid_is_free(const struct grid *g, int cx, int cy);

/*
 * The cell containing world point (x, y) (a point on a cell edge belongs
 * to the cell above it). Returns 0, or ENG_ERANGE when the point is
 * outside the grid or not finite (the outputs are then unchanged).
 */
int grid_world_to_cell(const struct grid *g, float x, float y, int *cx,
		       int *cy);

/*
 * World point (x, y) in continuous cell units: cell centres fall on
 * integers, so (0, 0) is the centre of cell (0, 0). Can't fail.
 */
void grid_world_to_cellf(const struct grid *g, float x, float y,
			 double *fx, double *fy);

/* World XY of the centre of cell (cx, cy). Can't fail. */
void grid_cell_to_world(const struct grid *g, int cx, int cy, float *x,
			float *y);

/*
 * The free cell whose centre is nearest (Euclidean) to the point (fx, fy)
 * given in cell units (see grid_world_to_cellf), among cells within
 * max_dist cells of it. Searches square rings of growing radius around
 * the point's cell and stops once no farther ring can hold a nearer cell.
 * Ties (equal within 1e-9 cells^2) go to the smaller row, then the
 * smaller column, so the answer is deterministic. Returns 0 and stores the cell, or ENG_ENOTFOUND when no
 * free cell is that close (ENG_EINVAL for a non-finite point).
 */
int grid_nearest_free(const struct grid *g, double fx, double fy,
		      double max_dist, int *cx, int *cy);

/*
 * grid_nearest_free() with ties (centres equally near the point, within
 * 1e-9 cells^2) going to the cell nearest (tx, ty), in cell units, before
 * the row and column order: the goal cell of a path on the side the
 * walker comes from, not the side a scan reaches first.
 */
int grid_nearest_free_toward(const struct grid *g, double fx, double fy, double max_dist,
			     double tx, double ty, int *cx, int *cy);

/*
 * True when the segment between the centres of cells a and b crosses
 * only free cells: every cell whose closed square the segment touches
 * must be free, so passing exactly through a cell corner needs both
 * cells beside the corner free (like the no-corner-cutting move rule).
 * Cells outside the grid count as blocked. Can't fail.
 */
bool grid_line_free(const struct grid *g, int ax, int ay, int bx, int by);

#endif /* GRID_H */
