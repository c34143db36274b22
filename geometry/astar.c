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

/* Search state of one padded cell; valid only when stamp == ws->gen. */
struct astar__node {
	double g;       /* best known cost from the start */
	uint32_t stamp; /* generation that last touched this node */
	int32_t parent; /* padded index of the predecessor, -1 at the start */
	int32_t hpos;   /* heap slot while open, -1 once closed */
	float h;        /* heuristic to the goal */
};

/* Heap entry: the key is copied in so that comparisons stay in the heap. */
struct astar__hent {
	double f;     /* g + h */
	float h;      /* tie-break: smaller h first */
	int32_t node; /* padded index */
};

struct astar_ws {
	int max_w, max_h;      /* size the workspace was made for */
	int w, h;              /* loaded grid size; 0 before the first load */
	int W;                 /* padded row stride, w + 2 */
	size_t cap;            /* padded node capacity */
	uint8_t *pass;         /* padded passability, border 0 */
	struct astar__node *nodes;
	struct astar__hent *heap;
	size_t hn;             /* heap entries in use */
	int32_t *queue;        /* flood-fill queue */
	uint8_t *scratch;      /* w * h reachability cells for the ring search */
	uint32_t gen;          /* current generation */
	int32_t start, goal;   /* padded ends of the last path */
	bool found;            /* the last query found a path */
	size_t expanded;       /* nodes closed by the last query */
};

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
	ws->pass = calloc(cap, 1);
	ws->nodes = calloc(cap, sizeof(*ws->nodes));
	ws->heap = malloc(cap * sizeof(*ws->heap));
	ws->queue = malloc(cap * sizeof(*ws->queue));
	ws->scratch = malloc((size_t)max_w * (size_t)max_h);
	if (!ws->pass || !ws->nodes || !ws->heap || !ws->queue || !ws->scratch) {
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
	free(ws->nodes);
	free(ws->heap);
	free(ws->queue);
	free(ws->scratch);
	free(ws);
}

int astar_ws_load(struct astar_ws *ws, const struct grid *g)
{
	int x, y, W;

	if (g->w < 1 || g->h < 1 || g->w > ws->max_w || g->h > ws->max_h)
		return ENG_EINVAL;
	W = g->w + 2;
	memset(ws->pass, 0, (size_t)W * (size_t)(g->h + 2));
	for (y = 0; y < g->h; y++) {
		const uint8_t *src = g->cells + (size_t)y * (size_t)g->w;
		uint8_t *dst = ws->pass + (size_t)(y + 1) * (size_t)W + 1;

		for (x = 0; x < g->w; x++)
			dst[x] = src[x] == GRID_FREE;
	}
	ws->w = g->w;
	ws->h = g->h;
	ws->W = W;
	ws->found = false;
	return 0;
}

/* Starts a new generation; clears the stamps once every 2^32 queries. */
static void next_gen(struct astar_ws *ws)
{
	size_t i;

	ws->gen++;
	if (ws->gen)
		return;
	for (i = 0; i < ws->cap; i++)
		ws->nodes[i].stamp = 0;
	ws->gen = 1;
}

/* ---------------------------------------------------------------- */
/* Binary heap                                                        */

static inline bool hent_less(const struct astar__hent *a,
			     const struct astar__hent *b)
{
	if (a->f != b->f)
		return a->f < b->f;
	if (a->h != b->h)
		return a->h < b->h;
	return a->node < b->node;
}

static inline void heap_up(struct astar_ws *ws, size_t i)
{
	struct astar__hent *hp = ws->heap, e = hp[i];

	while (i > 0) {
		size_t p = (i - 1) >> 1;

		if (!hent_less(&e, &hp[p]))
			break;
		hp[i] = hp[p];
		ws->nodes[hp[i].node].hpos = (int32_t)i;
		i = p;
	}
	hp[i] = e;
	ws->nodes[e.node].hpos = (int32_t)i;
}

static inline void heap_down(struct astar_ws *ws, size_t i)
{
	struct astar__hent *hp = ws->heap, e = hp[i];
	size_t n = ws->hn;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= n)
			break;
		if (c + 1 < n && hent_less(&hp[c + 1], &hp[c]))
			c++;
		if (!hent_less(&hp[c], &e))
			break;
		hp[i] = hp[c];
		ws->nodes[hp[i].node].hpos = (int32_t)i;
		i = c;
	}
	hp[i] = e;
	ws->nodes[e.node].hpos = (int32_t)i;
}

static inline void heap_push(struct astar_ws *ws, int32_t v, double f, float h)
{
	size_t i = ws->hn++;

	ws->heap[i].f = f;
	ws->heap[i].h = h;
	ws->heap[i].node = v;
	heap_up(ws, i);
}

static inline int32_t heap_pop(struct astar_ws *ws)
{
	int32_t v = ws->heap[0].node;

	ws->hn--;
	if (ws->hn) {
		ws->heap[0] = ws->heap[ws->hn];
		heap_down(ws, 0);
	}
	ws->nodes[v].hpos = -1;
	return v;
}

/* ---------------------------------------------------------------- */
/* Search                                                             */

static inline double octile(int dx, int dy)
{
	int ax = dx < 0 ? -dx : dx, ay = dy < 0 ? -dy : dy;

	return ax > ay ? ax + (SQRT2 - 1) * ay : ay + (SQRT2 - 1) * ax;
}

/* Relaxes the move u -> v (cost c) where v is at (vx, vy). */
static inline void relax(struct astar_ws *ws, int32_t u, int32_t v, double gu,
			 double c, int vx, int vy, int gx, int gy)
{
	struct astar__node *nv = &ws->nodes[v];
	double ng = gu + c;

	if (nv->stamp != ws->gen) {
		float hv = (float)octile(vx - gx, vy - gy);

		nv->stamp = ws->gen;
		nv->g = ng;
		nv->parent = u;
		nv->h = hv;
		heap_push(ws, v, ng + (double)hv, hv);
		return;
	}
	if (nv->hpos < 0 || ng >= nv->g)
		return;
	nv->g = ng;
	nv->parent = u;
	ws->heap[nv->hpos].f = ng + (double)nv->h;
	heap_up(ws, (size_t)nv->hpos);
}

static int check_cell(const struct astar_ws *ws, int x, int y)
{
	if (x < 0 || y < 0 || x >= ws->w || y >= ws->h)
		return ENG_ERANGE;
	return 0;
}

int astar_search(struct astar_ws *ws, int sx, int sy, int gx, int gy,
		 double *cost)
{
	const int W = ws->W;
	const uint8_t *pass = ws->pass;
	int32_t s, t;
	size_t expanded = 0;
	int rc;

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
	if (!pass[s] || !pass[t])
		return ENG_ENOTFOUND;
	next_gen(ws);
	ws->hn = 0;
	ws->nodes[s].stamp = ws->gen;
	ws->nodes[s].g = 0;
	ws->nodes[s].parent = -1;
	ws->nodes[s].h = (float)octile(sx - gx, sy - gy);
	heap_push(ws, s, ws->nodes[s].h, ws->nodes[s].h);
	while (ws->hn) {
		int32_t u = heap_pop(ws);
		double gu = ws->nodes[u].g;
		int ux, uy;
		bool e, wv, n, sv;

		expanded++;
		if (u == t) {
			ws->start = s;
			ws->goal = t;
			ws->found = true;
			ws->expanded = expanded;
			*cost = gu;
			return 0;
		}
		ux = u % W;
		uy = u / W;
		e = pass[u + 1];
		wv = pass[u - 1];
		n = pass[u - W];
		sv = pass[u + W];
		if (e)
			relax(ws, u, u + 1, gu, 1.0, ux + 1, uy, gx, gy);
		if (wv)
			relax(ws, u, u - 1, gu, 1.0, ux - 1, uy, gx, gy);
		if (n)
			relax(ws, u, u - W, gu, 1.0, ux, uy - 1, gx, gy);
		if (sv)
			relax(ws, u, u + W, gu, 1.0, ux, uy + 1, gx, gy);
		if (e && n && pass[u + 1 - W])
			relax(ws, u, u + 1 - W, gu, SQRT2, ux + 1, uy - 1, gx, gy);
		if (wv && n && pass[u - 1 - W])
			relax(ws, u, u - 1 - W, gu, SQRT2, ux - 1, uy - 1, gx, gy);
		if (e && sv && pass[u + 1 + W])
			relax(ws, u, u + 1 + W, gu, SQRT2, ux + 1, uy + 1, gx, gy);
		if (wv && sv && pass[u - 1 + W])
			relax(ws, u, u - 1 + W, gu, SQRT2, ux - 1, uy + 1, gx, gy);
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
	for (v = ws->goal; v >= 0; v = ws->nodes[v].parent)
		k++;
	*n = k;
	if (cap < k)
		return ENG_ETOOBIG;
	i = k;
	for (v = ws->goal; v >= 0; v = ws->nodes[v].parent) {
		int x = v % ws->W - 1, y = v / ws->W - 1;

		cells[--i] = (int32_t)(y * ws->w + x);
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
	static const int dx[8] = { 1, -1, 0, 0, 1, -1, 1, -1 };
	static const int dy[8] = { 0, 0, -1, 1, -1, -1, 1, 1 };
	const int W = ws->W;
	const uint8_t *pass = ws->pass;
	size_t head = 0, tail = 0;
	int d;

	ws->nodes[s].stamp = ws->gen;
	ws->queue[tail++] = s;
	while (head < tail) {
		int32_t u = ws->queue[head++];

		for (d = 0; d < 8; d++) {
			int32_t v = u + dy[d] * W + dx[d];

			if (!pass[v] || ws->nodes[v].stamp == ws->gen)
				continue;
			if (dx[d] && dy[d] &&
			    (!pass[u + dx[d]] || !pass[u + dy[d] * W]))
				continue;
			ws->nodes[v].stamp = ws->gen;
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
			dst[x] = row[x].stamp == ws->gen ? GRID_FREE : GRID_OCCUPIED;
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
