/* SPDX-License-Identifier: MIT */
/*
 * Shortest paths on an occupancy grid (struct grid, GRID_FREE passable):
 * 8-connected A* with costs 1 (orthogonal) and sqrt(2) (diagonal), no
 * corner cutting (a diagonal move needs both orthogonal neighbours free,
 * the Moving AI rule) and the octile heuristic. Costs are in cells:
 * multiply by the grid's cell edge for metres.
 *
 * All search state lives in a workspace made once per grid size
 * (astar_ws_new): a padded copy of the grid with a blocked 1-cell border
 * and one precomputed move mask per cell (the no-corner-cutting rule
 * folded in), g-values and parent moves with generation stamps so no
 * array is cleared between queries, and the open list. The open list is a
 * radix heap over f in fixed point (exact for path costs, see astar.c; A*
 * with a consistent heuristic takes keys in non-decreasing order, which is
 * what a radix heap needs) kept in a flat pool of int32-linked slots; it
 * is lazy: an improved node is pushed again and its stale entry skipped
 * when it surfaces. It measured faster than binary and 4-ary heaps here
 * (docs/performance.md). A workspace is not shared between threads; make
 * one per thread.
 *
 * Ties: among entries of equal f the newest is expanded first, so every
 * query is deterministic. Moves that cannot lower any g (back to the
 * parent, or to a cell the parent reaches by a legal move itself) are not
 * relaxed; this changes no cost, only saves work.
 *
 * A path is simplified into legs (astar_legs): runs of moves in the same
 * direction are merged first; then the corners of those runs are string-
 * pulled: from the current leg start the leg is extended to each next
 * corner while the straight segment stays in free cells by
 * grid_line_free(), and ends at the last corner that could be reached
 * that way. Each leg has a world start and end, a length, a heading, and
 * the 8-way BEV direction of that heading relative to the heading after
 * the previous leg (the first leg relative to the camera heading).
 */
#ifndef ASTAR_H
#define ASTAR_H

#include <stddef.h>
#include <stdint.h>

#include "bev.h"
#include "grid.h"

/* Opaque search workspace. */
struct astar_ws;

/*
 * Makes a workspace for grids of up to max_w x max_h cells. Returns NULL
 * for a size below 1 or above GRID_MAX_DIM, or when memory runs out.
 * Free it with astar_ws_free().
 */
struct astar_ws *astar_ws_new(int max_w, int max_h);

/* Frees ws; astar_ws_free(NULL) is a no-op. Can't fail. */
void astar_ws_free(struct astar_ws *ws);

/*
 * Copies the passability of g (GRID_FREE cells are passable) into ws;
 * later queries run on this copy until the next load. Returns 0, or
 * ENG_EINVAL when g does not fit the size ws was made for.
 */
int astar_ws_load(struct astar_ws *ws, const struct grid *g);

/*
 * Shortest path from cell (sx, sy) to cell (gx, gy) on the loaded grid.
 * On success stores the cost in *cost (0 when start == goal) and returns
 * 0; the path can then be read with astar_path() until the next query.
 * Returns ENG_ENOTFOUND when the goal cannot be reached or when start or
 * goal is blocked, ENG_ERANGE when a cell is outside the grid, ENG_EINVAL
 * when no grid is loaded. Does not allocate.
 */
int astar_search(struct astar_ws *ws, int sx, int sy, int gx, int gy,
		 double *cost);

/*
 * The cells of the last successful path, start first, goal last, as grid
 * indices (cy * w + cx). Always stores the cell count in *n (1 when start
 * == goal); writes the cells when cap >= *n. Returns 0, ENG_ETOOBIG when
 * cap < *n (cells then untouched), ENG_EINVAL when the last query found
 * no path.
 */
int astar_path(const struct astar_ws *ws, int32_t *cells, size_t cap,
	       size_t *n);

/* Nodes expanded (closed) by the last query. Can't fail. */
size_t astar_expanded(const struct astar_ws *ws);

/*
 * The free cell nearest (Euclidean, in cell units) to the point (fx, fy)
 * (cell units, as grid_world_to_cellf gives) among the cells reachable
 * from (sx, sy) under the same move rules, within max_dist cells of the
 * point. Floods the start's component first (O(component size)), then
 * searches rings around the point like grid_nearest_free_toward(): ties
 * go to the cell nearest the start, then the smaller row and column.
 * This is "the nearest free cell by the target" that a path
 * can actually reach. The component is kept until the next load, so a
 * second call whose start lies in it skips the flood. Returns 0 and stores the cell, ENG_ENOTFOUND when
 * none qualifies or the start is blocked, ENG_ERANGE for a start outside
 * the grid, ENG_EINVAL when no grid is loaded or the point is not finite.
 * It overwrites the last path.
 */
int astar_nearest_reachable(struct astar_ws *ws, int sx, int sy, double fx,
			    double fy, double max_dist, int *cx, int *cy);

/*
 * astar_nearest_reachable(), then astar_search() from the start to the
 * cell found, in one call: the same cell (*cx, *cy), the same path and
 * cost, the same return codes. g is the grid loaded into ws. Without a
 * component flooded already for the start, the nearest free cell of g is
 * tried first: when A* reaches it, it is also the nearest reachable one
 * (the reachable cells are among the free ones, and the search order is
 * the same), and the flood is not needed. Only a cell walled off from the
 * start costs the flood, after a search that failed. Returns 0 with the
 * path readable by astar_path(); ENG_ENOTFOUND when no reachable free cell
 * qualifies (then *cx = *cy = -1); else astar_nearest_reachable()'s errors.
 */
int astar_search_nearest(struct astar_ws *ws, const struct grid *g, int sx, int sy, double fx,
			 double fy, double max_dist, int *cx, int *cy, double *cost);

/* One straight leg of a simplified path. */
struct astar_leg {
	float x0, y0;      /* world start, m */
	float x1, y1;      /* world end, m */
	float length_m;    /* straight length, m */
	float heading;     /* direction of travel, rad, counter-clockwise from +X */
	float yaw_deg;     /* signed turn from the previous heading, (-180, 180] */
	enum bev_dir dir;  /* bev_dir_from_yaw(yaw_deg) */
	int32_t first, last; /* indices into the cell path of its ends */
};

/*
 * Simplifies a cell path (as astar_path gives, over grid g) into legs by
 * the rule in the header comment. The first leg's turn is measured from
 * cam_heading (radians, as bev_heading gives), each later one from the
 * previous leg's heading. Always stores the leg count in *nlegs (0 for a
 * path of one cell) and writes the first min(cap, *nlegs) legs. Returns 0,
 * ENG_ETOOBIG when cap < *nlegs, ENG_EINVAL for a cell index outside g or
 * two consecutive cells that are not 8-neighbours.
 */
int astar_legs(const struct grid *g, const int32_t *cells, size_t n,
	       float cam_heading, struct astar_leg *legs, size_t cap,
	       size_t *nlegs);

/*
 * Internal, for tests: caps the open list at cap entries (at most the
 * padded cell count) to exercise its compaction, and counts compactions
 * so far. A query that cannot fit returns ENG_ENOMEM.
 */
void astar__set_open_cap(struct astar_ws *ws, size_t cap);
size_t astar__compactions(const struct astar_ws *ws);

#endif /* ASTAR_H */
