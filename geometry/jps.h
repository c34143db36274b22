/* SPDX-License-Identifier: MIT */
/*
 * Fast optimal shortest paths on an occupancy grid (struct grid,
 * GRID_FREE passable), over the same graph as astar.h: 8-connected, costs
 * 1 (orthogonal) and sqrt(2) (diagonal), no corner cutting (a diagonal
 * move needs both orthogonal neighbours free, the Moving AI rule). Costs
 * are in cells. Every query returns the optimum, the same cost as
 * astar_search() (plain A*, the reference implementation); the cell path
 * can differ from astar's among paths of equal cost (see jps_path).
 *
 * Method: jump point search with precomputed jump distances (JPS+).
 * Moving straight, a cell is a jump point when a cell beside it is free
 * while the same side of the cell before it is blocked (a forced
 * neighbour); moving diagonally, when a straight run from it along either
 * component meets one. jps_ws_load() stores, for every free cell and each
 * of the 8 directions, the distance to the next jump point or to the last
 * free cell before a wall or an uncuttable corner, so a query reads one
 * entry per direction instead of scanning cells. The search is A* over
 * straight jump points (diagonal runs are walked inside an expansion);
 * the goal is caught on a straight run, or on the row or column of a cell
 * of a diagonal run, within that cell's reach. The heuristic is the
 * octile distance or, when the workspace has landmarks, the larger of it
 * and the landmark (ALT) bound max_L |d(L, v) - d(L, goal)| over exact
 * distances from each landmark computed at load, kept admissible under
 * their rounding (see jps.c); a closed node whose g still improves is
 * reopened, so the search stays optimal.
 *
 * Workspace: made once per grid size (jps_ws_new), loaded per grid
 * (jps_ws_load: a padded copy of the grid with a blocked 1-cell border,
 * the jump tables, the components, and the landmark distances: one full
 * Dijkstra per landmark), then queried any number of times with no
 * allocation. Landmarks pay off when many queries run on one loaded grid;
 * without them a load is O(cells) and cheap. Node state carries
 * generation stamps, so nothing is cleared between queries. A workspace
 * is not shared between threads; make one per thread.
 *
 * Exactness and ties: g values are kept as counts of orthogonal and
 * diagonal moves, so equal costs compare equal exactly. A node reached
 * again at its best g by another direction gets that direction's
 * successors too (expanded later if it was already closed), which keeps
 * the pruning optimal whatever order ties come in. The open list is a
 * binary heap on f in fixed point, ties to the smaller cell index; every
 * query is deterministic. A query whose ends lie in different components
 * returns at once.
 */
#ifndef JPS_H
#define JPS_H

#include <stddef.h>
#include <stdint.h>

#include "grid.h"

/* Opaque search workspace. */
struct jps_ws;

/* Most landmarks a workspace can hold. */
#define JPS_MAX_LANDMARKS 48

/*
 * Makes a workspace for grids of up to max_w x max_h cells with
 * `landmarks` landmarks (a multiple of 8 up to JPS_MAX_LANDMARKS): about
 * 55 bytes per cell without landmarks, 105 with 8 or 16, 169 with 24 to
 * 48. Returns NULL
 * for a size below 1 or above GRID_MAX_DIM, a landmark count not in that
 * list, or when memory runs out. Free it with jps_ws_free().
 */
struct jps_ws *jps_ws_new(int max_w, int max_h, int landmarks);

/* Frees ws; jps_ws_free(NULL) is a no-op. Can't fail. */
void jps_ws_free(struct jps_ws *ws);

/*
 * Copies the passability of g (GRID_FREE cells are passable) into ws and
 * computes the jump tables, the components and, with landmarks, their
 * placement (in the largest component) and distances; later queries run
 * on this copy until the next load. Does not allocate. Returns 0, or
 * ENG_EINVAL when g does not fit the size ws was made for.
 */
int jps_ws_load(struct jps_ws *ws, const struct grid *g);

/*
 * Shortest path from cell (sx, sy) to cell (gx, gy) on the loaded grid.
 * On success stores the optimal cost in *cost (0 when start == goal) and
 * returns 0; the path can then be read with jps_path() until the next
 * query. Returns ENG_ENOTFOUND when the goal cannot be reached or when
 * start or goal is blocked, ENG_ERANGE when a cell is outside the grid,
 * ENG_EINVAL when no grid is loaded. Does not allocate.
 */
int jps_search(struct jps_ws *ws, int sx, int sy, int gx, int gy,
	       double *cost);

/*
 * The cells of the last successful path, start first, goal last, as grid
 * indices (cy * w + cx) into caller memory `cells`, every step to an
 * 8-neighbour (no corner cut). Between two jump points the path runs
 * diagonally first, then straight, so among paths of equal cost it takes
 * its diagonal steps early; astar_path() may return another path of the
 * same cost. Its summed step cost is the optimum jps_search() returned. Always stores the cell
 * count in *n (1 when start == goal); writes the cells when cap >= *n.
 * Returns 0, ENG_ETOOBIG when cap < *n (cells then untouched), ENG_EINVAL
 * when the last query found no path.
 */
int jps_path(const struct jps_ws *ws, int32_t *cells, size_t cap,
	     size_t *n);

/*
 * The free cell nearest (Euclidean, in cell units) to the point (fx, fy)
 * (cell units, as grid_world_to_cellf gives) among the cells reachable
 * from (sx, sy), within max_dist cells of the point: the same answer as
 * astar_nearest_reachable() on the same grid, with the same tie rule
 * (grid_nearest_free_toward: ties to the cell nearest the start), but
 * the start's component comes from the labels
 * jps_ws_load() made, so no flood runs (O(cells) for the copy, then the
 * ring search). Returns 0 and stores the cell, ENG_ENOTFOUND when none
 * qualifies or the start is blocked, ENG_ERANGE for a start outside the
 * grid, ENG_EINVAL when no grid is loaded or the point is not finite. It
 * overwrites the last path.
 */
int jps_nearest_reachable(struct jps_ws *ws, int sx, int sy, double fx,
			  double fy, double max_dist, int *cx, int *cy);

/* Jump points expanded (closed) by the last query. Can't fail. */
size_t jps_expanded(const struct jps_ws *ws);

/*
 * Internal, for tests: caps the open list at cap entries (at most the
 * padded cell count) to exercise its compaction, and counts compactions
 * so far.
 */
void jps__set_open_cap(struct jps_ws *ws, size_t cap);
size_t jps__compactions(const struct jps_ws *ws);

#endif /* JPS_H */
