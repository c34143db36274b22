/* SPDX-License-Identifier: MIT */
/* 8-connected A* on a padded grid copy, flood fill, path legs. */
#include "astar.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "errcode.h"

#define SQRT2 1.4142135623730951
#define RAD2DEG 57.29577951308232

/*
 * The 8 moves: E, W, N, S (rows grow with y), then NE, NW, SE, SW. Bit d
 * of a cell's move mask is set when move d is allowed from it.
 */
static const int move_dx[8] = { 1, -1, 0, 0, 1, -1, 1, -1 };
static const int move_dy[8] = { 0, 0, -1, 1, -1, -1, 1, 1 };
static const double move_cost[8] = { 1, 1, 1, 1, SQRT2, SQRT2, SQRT2, SQRT2 };

/*
 * Search state of one padded cell. stamp says what the current query knows
 * of it: below ws->seen it is untouched (g unset), ws->seen means open
 * (reached, g and pdir valid), ws->seen + 1 closed.
 */
struct astar__node {
	double g;       /* best known cost from the start */
	uint32_t stamp; /* see above */
	int32_t pdir;   /* move that reached it from its parent, -1 at the start */
};

/*
 * An open-list entry: the node and its padded coordinates (so that no
 * division is needed to find them). The open list is lazy: a node whose g
 * improves is pushed again and its older entries are skipped when they
 * surface (the node is closed by then).
 */
struct astar__hent {
	double f;       /* g + h when pushed */
	int32_t node;   /* padded index */
	uint16_t x, y;  /* padded coordinates */
};

struct astar_ws {
	int max_w, max_h;      /* size the workspace was made for */
	int w, h;              /* loaded grid size; 0 before the first load */
	int W;                 /* padded row stride, w + 2 */
	size_t cap;            /* padded node capacity */
	uint8_t *pass;         /* padded passability, border 0 */
	uint8_t *moves;        /* padded move masks */
	int32_t off[8];        /* index offset of each move */
	uint8_t prune[8][256]; /* see prune_init() */
	struct astar__node *nodes;
	struct astar__hent *heap; /* the open list, a 4-ary heap */
	size_t hn, heap_cap;   /* entries in use, capacity */
	struct astar__hent *stack; /* open nodes whose f equals the current f */
	bool oom;              /* the open list ran out of room */
	size_t compactions;    /* open-list compactions so far */
	int32_t *queue;        /* flood-fill queue */
	uint8_t *scratch;      /* w * h reachability cells for the ring search */
	uint32_t seen;         /* open stamp of the current query (even) */
	int32_t start, goal;   /* padded ends of the last path */
	bool found;            /* the last query found a path */
	size_t expanded;       /* nodes closed by the last query */
	int gx, gy;            /* padded goal of the running query */
};

/*
 * prune[d][mp]: the moves from a node u that cannot improve anything when
 * u was reached by move d from its parent p, whose move mask is mp. They
 * are the moves back to p and those to any cell that p reaches itself by
 * a legal move: p was expanded before u with its final g, so such a cell
 * already has g <= g(p) + c(p, n) <= g(u) + c(u, n) (triangle
 * inequality). Skipping them changes no g value, only saves work.
 */
static void prune_init(uint8_t prune[8][256])
{
	int d, mp, k, j;

	for (d = 0; d < 8; d++) {
		for (mp = 0; mp < 256; mp++) {
			unsigned skip = 0;

			for (k = 0; k < 8; k++) {
				int rx = move_dx[k] + move_dx[d];
				int ry = move_dy[k] + move_dy[d];

				if (!rx && !ry) {
					skip |= 1u << k;
					continue;
				}
				for (j = 0; j < 8; j++)
					if (move_dx[j] == rx && move_dy[j] == ry &&
					    (mp >> j & 1))
						skip |= 1u << k;
			}
			prune[d][mp] = (uint8_t)skip;
		}
	}
}

struct astar_ws *astar_ws_new(int max_w, int max_h)
{
	struct astar_ws *ws;
	size_t cap;

	if (!grid_cells_needed(max_w, max_h))
		return NULL;
	ws = calloc(1, sizeof(*ws));
	if (!ws)
		return NULL;
	cap = (size_t)(max_w + 2) * (size_t)(max_h + 2);
	ws->max_w = max_w;
	ws->max_h = max_h;
	ws->cap = cap;
	prune_init(ws->prune);
	ws->pass = calloc(cap, 1);
	ws->moves = calloc(cap, 1);
	ws->nodes = calloc(cap, sizeof(*ws->nodes));
	ws->heap = malloc(cap * sizeof(*ws->heap));
	ws->heap_cap = cap;
	ws->stack = malloc(cap * sizeof(*ws->stack));
	ws->queue = malloc(cap * sizeof(*ws->queue));
	ws->scratch = malloc((size_t)max_w * (size_t)max_h);
	if (!ws->pass || !ws->moves || !ws->nodes || !ws->heap || !ws->stack ||
	    !ws->queue || !ws->scratch) {
		astar_ws_free(ws);
		return NULL;
	}
	return ws;
}

void astar_ws_free(struct astar_ws *ws)
{
	if (!ws)
		return;
	free(ws->pass);
	free(ws->moves);
	free(ws->nodes);
	free(ws->heap);
	free(ws->stack);
	free(ws->queue);
	free(ws->scratch);
	free(ws);
}

int astar_ws_load(struct astar_ws *ws, const struct grid *g)
{
	size_t n;
	int x, y, d, W;

	if (g->w < 1 || g->h < 1 || g->w > ws->max_w || g->h > ws->max_h)
		return ENG_EINVAL;
	W = g->w + 2;
	n = (size_t)W * (size_t)(g->h + 2);
	memset(ws->pass, 0, n);
	memset(ws->moves, 0, n);
	for (y = 0; y < g->h; y++) {
		const uint8_t *src = g->cells + (size_t)y * (size_t)g->w;
		uint8_t *dst = ws->pass + (size_t)(y + 1) * (size_t)W + 1;

		for (x = 0; x < g->w; x++)
			dst[x] = src[x] == GRID_FREE;
	}
	for (d = 0; d < 8; d++)
		ws->off[d] = move_dy[d] * W + move_dx[d];
	/* the no-corner-cutting rule is folded into the masks here */
	for (y = 1; y <= g->h; y++) {
		for (x = 1; x <= g->w; x++) {
			size_t u = (size_t)y * (size_t)W + (size_t)x;
			const uint8_t *p = ws->pass;
			unsigned m = 0;

			if (!p[u])
				continue;
			for (d = 0; d < 8; d++) {
				if (!p[u + ws->off[d]])
					continue;
				if (d >= 4 && (!p[u + move_dx[d]] ||
					       !p[u + move_dy[d] * W]))
					continue;
				m |= 1u << d;
			}
			ws->moves[u] = (uint8_t)m;
		}
	}
	ws->w = g->w;
	ws->h = g->h;
	ws->W = W;
	ws->found = false;
	return 0;
}

/*
 * Starts a new query: two stamp values per query, so no array is cleared
 * except once every 2^31 queries.
 */
static void next_gen(struct astar_ws *ws)
{
	size_t i;

	ws->seen += 2;
	if (ws->seen >= 2)
		return;
	for (i = 0; i < ws->cap; i++)
		ws->nodes[i].stamp = 0;
	ws->seen = 2;
}

/* ---------------------------------------------------------------- */
/* 4-ary heap keyed on f: the children of slot i are 4i + 1 .. 4i + 4.  */

static inline void heap_up(struct astar__hent *hp, size_t i)
{
	struct astar__hent e = hp[i];

	while (i > 0) {
		size_t p = (i - 1) >> 2;

		if (!(e.f < hp[p].f))
			break;
		hp[i] = hp[p];
		i = p;
	}
	hp[i] = e;
}

/* The child of the smallest f among hp[c .. c + k), k in 1..4. */
static inline size_t heap_min_child(const struct astar__hent *hp, size_t c,
				    size_t k)
{
	size_t a, b;

	if (k == 4) {
		a = c + (hp[c + 1].f < hp[c].f);
		b = c + 2 + (hp[c + 3].f < hp[c + 2].f);
		return hp[b].f < hp[a].f ? b : a;
	}
	a = c;
	for (b = c + 1; b < c + k; b++)
		if (hp[b].f < hp[a].f)
			a = b;
	return a;
}

/*
 * Removes the root of a heap of n + 1 entries: the hole walks down to a
 * leaf along the smallest children (selected without branches), then the
 * last entry fills it and sifts up (usually not far).
 */
static inline void heap_pop_root(struct astar__hent *hp, size_t n)
{
	size_t i = 0, c;

	if (!n)
		return;
	for (;;) {
		c = 4 * i + 1;
		if (c >= n)
			break;
		c = heap_min_child(hp, c, n - c < 4 ? n - c : 4);
		hp[i] = hp[c];
		i = c;
	}
	hp[i] = hp[n];
	heap_up(hp, i);
}

static inline double octile(int dx, int dy)
{
	int ax = dx < 0 ? -dx : dx, ay = dy < 0 ? -dy : dy;

	return ax > ay ? ax + (SQRT2 - 1) * ay : ay + (SQRT2 - 1) * ax;
}

/* Restores the heap order of hp[0 .. n) from scratch. */
static void heap_build(struct astar__hent *hp, size_t n)
{
	size_t i;

	for (i = 1; i < n; i++)
		heap_up(hp, i);
}

/* True when entry e still describes an open node's current g. */
static bool entry_live(const struct astar_ws *ws, const struct astar__hent *e)
{
	const struct astar__node *v = &ws->nodes[e->node];

	return v->stamp == ws->seen && v->pdir >= -1 &&
	       e->f == v->g + octile(e->x - ws->gx, e->y - ws->gy);
}

/* Flips a node's pdir to -2 - pdir and back (start's -1 is never open). */
static void mark_flip(struct astar_ws *ws, int32_t node)
{
	ws->nodes[node].pdir = -2 - ws->nodes[node].pdir;
}

/*
 * Drops the entries that can no longer matter (closed nodes, superseded
 * g values, duplicates) and rebuilds the heap, leaving at most one entry
 * per open node. Kept nodes are marked (mark_flip) during the pass to
 * spot duplicates and unmarked after it.
 */
static void open_compact(struct astar_ws *ws)
{
	size_t i, k = 0;

	ws->compactions++;
	for (i = 0; i < ws->hn; i++) {
		if (!entry_live(ws, &ws->heap[i]))
			continue;
		mark_flip(ws, ws->heap[i].node);
		ws->heap[k++] = ws->heap[i];
	}
	for (i = 0; i < k; i++)
		mark_flip(ws, ws->heap[i].node);
	ws->hn = k;
	heap_build(ws->heap, k);
}

/*
 * Adds e to the open list. When the heap is full it is compacted first;
 * if that frees nothing, ws->oom is set (this cannot happen with the
 * full capacity: there are fewer open nodes than padded cells).
 */
static inline void open_push(struct astar_ws *ws, const struct astar__hent *e)
{
	if (ws->hn == ws->heap_cap) {
		open_compact(ws);
		if (ws->hn == ws->heap_cap) {
			ws->oom = true;
			return;
		}
	}
	ws->heap[ws->hn] = *e;
	heap_up(ws->heap, ws->hn++);
}

/* Takes the entry of least f into *e; false when the list is empty. */
static inline bool open_pop(struct astar_ws *ws, struct astar__hent *e)
{
	if (!ws->hn)
		return false;
	*e = ws->heap[0];
	heap_pop_root(ws->heap, --ws->hn);
	return true;
}

void astar__set_open_cap(struct astar_ws *ws, size_t cap)
{
	ws->heap_cap = cap < ws->cap ? cap : ws->cap;
}

size_t astar__compactions(const struct astar_ws *ws)
{
	return ws->compactions;
}

/* ---------------------------------------------------------------- */
/* Search                                                             */

/*
 * Two f values closer than this are the same number a + b sqrt(2): the
 * rounding of a sum of steps stays far below it, and distinct numbers of
 * that form with |a|, |b| up to 4 GRID_MAX_DIM differ by more than 1e-6.
 */
#define ASTAR_FEQ 1e-7

static int check_cell(const struct astar_ws *ws, int x, int y)
{
	if (x < 0 || y < 0 || x >= ws->w || y >= ws->h)
		return ENG_ERANGE;
	return 0;
}

/*
 * The search loop. Nodes come off the stack first, then off the open
 * list. Each expanded node relaxes its allowed moves minus the pruned
 * ones (prune_init). A successor whose f equals the f being expanded goes
 * on the stack rather than the open list: A* would expand it next anyway
 * (a tie), and it saves an open-list push and pop; ties thus go to the
 * newest node. The hot state is kept in locals.
 */
int astar_search(struct astar_ws *ws, int sx, int sy, int gx, int gy,
		 double *cost)
{
	const int W = ws->W;
	const uint8_t *moves = ws->moves;
	struct astar__node *nodes = ws->nodes;
	struct astar__hent *stack = ws->stack;
	const size_t scap = ws->cap;
	struct astar__hent e;
	int32_t s, t, off[8];
	size_t expanded = 0, sn = 0;
	uint32_t seen;
	double fcur;
	int rc, d;

	ws->found = false;
	ws->expanded = 0;
	if (!ws->w)
		return ENG_EINVAL;
	rc = check_cell(ws, sx, sy);
	if (!rc)
		rc = check_cell(ws, gx, gy);
	if (rc)
		return rc;
	/* work in padded coordinates from here on */
	sx++, sy++, gx++, gy++;
	s = sy * W + sx;
	t = gy * W + gx;
	if (!ws->pass[s] || !ws->pass[t])
		return ENG_ENOTFOUND;
	next_gen(ws);
	seen = ws->seen;
	ws->gx = gx;
	ws->gy = gy;
	for (d = 0; d < 8; d++)
		off[d] = ws->off[d];
	nodes[s].stamp = seen;
	nodes[s].g = 0;
	nodes[s].pdir = -1;
	e.f = octile(sx - gx, sy - gy);
	e.node = s;
	e.x = (uint16_t)sx;
	e.y = (uint16_t)sy;
	ws->hn = 0;
	ws->oom = false;
	fcur = e.f;
	stack[sn++] = e;
	for (;;) {
		struct astar__node *nu;
		int32_t u;
		unsigned m;
		double gu;

		if (sn) {
			e = stack[--sn];
		} else if (open_pop(ws, &e)) {
			fcur = e.f;
		} else {
			break;
		}
		u = e.node;
		nu = &nodes[u];
		if (nu->stamp != seen)
			continue; /* an old entry of a closed node */
		nu->stamp = seen + 1;
		gu = nu->g;
		expanded++;
		if (u == t) {
			ws->start = s;
			ws->goal = t;
			ws->found = true;
			ws->expanded = expanded;
			*cost = gu;
			return 0;
		}
		m = moves[u];
		if (nu->pdir >= 0)
			m &= ~(unsigned)ws->prune[nu->pdir][moves[u - off[nu->pdir]]];
		while (m) {
			struct astar__node *nv;
			struct astar__hent c;
			double ng;

			d = __builtin_ctz(m);
			m &= m - 1;
			c.node = u + off[d];
			nv = &nodes[c.node];
			ng = gu + move_cost[d];
			if (nv->stamp >= seen && (nv->stamp != seen || ng >= nv->g))
				continue; /* closed, or no better */
			nv->stamp = seen;
			nv->g = ng;
			nv->pdir = d;
			c.x = (uint16_t)(e.x + move_dx[d]);
			c.y = (uint16_t)(e.y + move_dy[d]);
			c.f = ng + octile(c.x - gx, c.y - gy);
			if (c.f <= fcur + ASTAR_FEQ && sn < scap)
				stack[sn++] = c;
			else
				open_push(ws, &c);
		}
		if (ws->oom)
			return ENG_ENOMEM;
	}
	ws->expanded = expanded;
	return ENG_ENOTFOUND;
}

int astar_path(const struct astar_ws *ws, int32_t *cells, size_t cap,
	       size_t *n)
{
	size_t k = 0, i;
	int32_t v;

	*n = 0;
	if (!ws->found)
		return ENG_EINVAL;
	for (v = ws->goal; v != ws->start; v -= ws->off[ws->nodes[v].pdir])
		k++;
	k++;
	*n = k;
	if (cap < k)
		return ENG_ETOOBIG;
	i = k;
	for (v = ws->goal;; v -= ws->off[ws->nodes[v].pdir]) {
		int x = v % ws->W - 1, y = v / ws->W - 1;

		cells[--i] = (int32_t)(y * ws->w + x);
		if (v == ws->start)
			break;
	}
	return 0;
}

size_t astar_expanded(const struct astar_ws *ws)
{
	return ws->expanded;
}

/* Marks the start's component with the current generation. */
static void flood(struct astar_ws *ws, int32_t s)
{
	size_t head = 0, tail = 0;

	ws->nodes[s].stamp = ws->seen;
	ws->queue[tail++] = s;
	while (head < tail) {
		int32_t u = ws->queue[head++];
		unsigned m = ws->moves[u];

		while (m) {
			int32_t v = u + ws->off[__builtin_ctz(m)];

			m &= m - 1;
			if (ws->nodes[v].stamp == ws->seen)
				continue;
			ws->nodes[v].stamp = ws->seen;
			ws->queue[tail++] = v;
		}
	}
}

int astar_nearest_reachable(struct astar_ws *ws, int sx, int sy, double fx,
			    double fy, double max_dist, int *cx, int *cy)
{
	struct grid reach;
	int32_t s;
	int x, y, rc;

	ws->found = false;
	if (!ws->w || !isfinite(fx) || !isfinite(fy))
		return ENG_EINVAL;
	rc = check_cell(ws, sx, sy);
	if (rc)
		return rc;
	s = (sy + 1) * ws->W + sx + 1;
	if (!ws->pass[s])
		return ENG_ENOTFOUND;
	next_gen(ws);
	flood(ws, s);
	reach.w = ws->w;
	reach.h = ws->h;
	reach.x0 = 0;
	reach.y0 = 0;
	reach.cell = 1;
	reach.cells = ws->scratch;
	for (y = 0; y < ws->h; y++) {
		const struct astar__node *row = ws->nodes + (size_t)(y + 1) * ws->W + 1;
		uint8_t *dst = ws->scratch + (size_t)y * ws->w;

		for (x = 0; x < ws->w; x++)
			dst[x] = row[x].stamp == ws->seen ? GRID_FREE : GRID_OCCUPIED;
	}
	return grid_nearest_free(&reach, fx, fy, max_dist, cx, cy);
}

/* ---------------------------------------------------------------- */
/* Legs                                                               */

/* Move code (dx + 1) * 3 + (dy + 1) between two cells, -1 if not adjacent. */
static int move_code(const struct grid *g, int32_t a, int32_t b)
{
	int ax = a % g->w, ay = a / g->w, bx = b % g->w, by = b / g->w;
	int dx = bx - ax, dy = by - ay;

	if (dx < -1 || dx > 1 || dy < -1 || dy > 1 || (!dx && !dy))
		return -1;
	return (dx + 1) * 3 + (dy + 1);
}

/* The next index after i where the move direction changes, or n - 1. */
static size_t next_corner(const struct grid *g, const int32_t *cells,
			  size_t n, size_t i)
{
	int m = move_code(g, cells[i], cells[i + 1]);

	for (i++; i + 1 < n; i++)
		if (move_code(g, cells[i], cells[i + 1]) != m)
			break;
	return i;
}

int astar_legs(const struct grid *g, const int32_t *cells, size_t n,
	       float cam_heading, struct astar_leg *legs, size_t cap,
	       size_t *nlegs)
{
	size_t total = (size_t)g->w * (size_t)g->h, i, a, k = 0;
	double prev = cam_heading;

	*nlegs = 0;
	for (i = 0; i < n; i++) {
		if (cells[i] < 0 || (size_t)cells[i] >= total)
			return ENG_EINVAL;
		if (i && move_code(g, cells[i - 1], cells[i]) < 0)
			return ENG_EINVAL;
	}
	if (n < 2)
		return 0;
	a = 0;
	while (a + 1 < n) {
		int ax = cells[a] % g->w, ay = cells[a] / g->w;
		size_t b = next_corner(g, cells, n, a);
		int bx, by;
		double yaw, hd;

		while (b + 1 < n) {
			size_t c = next_corner(g, cells, n, b);

			if (!grid_line_free(g, ax, ay, cells[c] % g->w,
					    cells[c] / g->w))
				break;
			b = c;
		}
		bx = cells[b] % g->w;
		by = cells[b] / g->w;
		if (k < cap) {
			struct astar_leg *l = &legs[k];

			grid_cell_to_world(g, ax, ay, &l->x0, &l->y0);
			grid_cell_to_world(g, bx, by, &l->x1, &l->y1);
			hd = atan2((double)(by - ay), (double)(bx - ax));
			l->length_m = (float)(hypot(bx - ax, by - ay) * g->cell);
			l->heading = (float)hd;
			yaw = bev_wrap_deg((float)((hd - prev) * RAD2DEG));
			l->yaw_deg = (float)yaw;
			l->dir = bev_dir_from_yaw((float)yaw);
			l->first = (int32_t)a;
			l->last = (int32_t)b;
			prev = hd;
		} else {
			prev = atan2((double)(by - ay), (double)(bx - ax));
		}
		k++;
		a = b;
	}
	*nlegs = k;
	return k > cap ? ENG_ETOOBIG : 0;
}
