/* SPDX-License-Identifier: MIT */
/* 8-connected A* on a padded grid copy, flood fill, path legs. */
#include "astar.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "errcode.h"

#define SQRT2 1.4142135623730951

/*
 * The 8 moves: E, W, N, S (rows grow with y), then NE, NW, SE, SW. Bit d
 * of a cell's move mask is set when move d is allowed from it.
 */
static const int move_dx[8] = { 1, -1, 0, 0, 1, -1, 1, -1 };
static const int move_dy[8] = { 0, 0, -1, 1, -1, -1, 1, 1 };
#define STRAIGHT_MOVES 0x0fu /* moves 0..3: along a row or a column */
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
 * An open-list entry: its key, the node and its padded coordinates (so
 * that no division is needed to find them). The open list is lazy: a node
 * whose g improves is pushed again and its older entries are skipped when
 * they surface (the node is closed by then).
 */
struct astar__ent {
	uint64_t key;   /* f when pushed, fixed point */
	int32_t node;   /* padded index */
	uint16_t x, y;  /* padded coordinates */
};

/*
 * The open list is a radix heap (Ahuja, Mehlhorn, Orlin and Tarjan 1990):
 * A* with a consistent heuristic takes keys in non-decreasing order, so an
 * entry can live in bucket b = the highest bit in which its key differs
 * from the last key taken (bucket 0: equal keys). Taking the minimum
 * empties bucket 0 first (newest entry first, so ties go to the newest
 * node), else finds the least entry of the lowest non-empty bucket, makes
 * it the last key and spreads that bucket over the lower ones. Buckets are
 * singly linked lists of slots in a pool, so entries never move.
 */
#define ASTAR_NBUCKET 65

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
	struct astar__ent *pool; /* open-list entries */
	int32_t *pnext;        /* next slot in a bucket or in the free list */
	size_t ptop, pool_cap; /* slots handed out this query, capacity */
	int32_t pfree;         /* free slots, -1 when none */
	int32_t head[ASTAR_NBUCKET]; /* first slot of each bucket, -1 empty */
	uint64_t nonempty;     /* bit b - 1 set when bucket b (1..64) holds any */
	uint64_t last;         /* last key taken */
	double kscale;         /* 2^kbits, see above */
	bool oom;              /* the open list ran out of room */
	size_t compactions;    /* open-list compactions so far */
	int32_t *queue;        /* flood-fill queue (padded cells) */
	int32_t *uqueue;       /* the same cells unpadded, cy * w + cx */
	uint8_t *scratch;      /* w * h reachability cells for the ring search */
	bool reach_valid;      /* scratch holds a component of the loaded grid */
	size_t passable;       /* passable cells of the loaded grid */
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
	ws->pool = malloc(cap * sizeof(*ws->pool));
	ws->pnext = malloc(cap * sizeof(*ws->pnext));
	ws->pool_cap = cap;
	ws->queue = malloc(cap * sizeof(*ws->queue));
	ws->uqueue = malloc((size_t)max_w * (size_t)max_h * sizeof(*ws->uqueue));
	ws->scratch = malloc((size_t)max_w * (size_t)max_h);
	if (!ws->pass || !ws->moves || !ws->nodes || !ws->pool || !ws->pnext ||
	    !ws->queue || !ws->uqueue || !ws->scratch) {
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
	free(ws->pool);
	free(ws->pnext);
	free(ws->queue);
	free(ws->uqueue);
	free(ws->scratch);
	free(ws);
}

/* The move mask of padded cell u under the no-corner-cutting rule. */
static uint8_t cell_moves(const struct astar_ws *ws, size_t u)
{
	const uint8_t *p = ws->pass;
	unsigned m = 0;
	int d;

	if (!p[u])
		return 0;
	for (d = 0; d < 8; d++) {
		if (!p[u + ws->off[d]])
			continue;
		if (d >= 4 && (!p[u + move_dx[d]] || !p[u + (ptrdiff_t)move_dy[d] * ws->W]))
			continue;
		m |= 1u << d;
	}
	return (uint8_t)m;
}

static void set_kscale(struct astar_ws *ws)
{
	int kbits = 16;

	while (kbits < 32 && ldexp(1.0, kbits) < 10.0 * (double)ws->passable)
		kbits++;
	ws->kscale = ldexp(1.0, kbits);
}

/* Whether unpadded cell (x, y) or one of its 8 neighbours is in the flooded component. */
static bool near_component(const struct astar_ws *ws, int x, int y)
{
	int dx, dy;

	for (dy = -1; dy <= 1; dy++)
		for (dx = -1; dx <= 1; dx++) {
			int nx = x + dx, ny = y + dy;

			if (nx >= 0 && ny >= 0 && nx < ws->w && ny < ws->h &&
			    ws->scratch[(size_t)ny * (size_t)ws->w + (size_t)nx] == GRID_FREE)
				return true;
		}
	return false;
}

/*
 * A load over a grid of the loaded size: the cells whose passability
 * changed are found a row at a time, and only their move masks and their
 * neighbours' are recomputed (a mask reads the 8 neighbours only). The
 * flooded component stays valid when no changed cell is in it or next to
 * it: a cell freed there has no move into the component, and a cell
 * blocked there is on no move between component cells (a diagonal move's
 * orthogonal cells are next to its ends). Returns false, having changed
 * nothing, when more than an eighth of the cells changed; the caller then
 * loads in full.
 */
static bool load_changes(struct astar_ws *ws, const struct grid *g)
{
	size_t n = (size_t)g->w * (size_t)g->h, limit = n / 8, nch = 0, i;
	/* the flood queue is free between floods: the changes, then one row */
	int32_t *ch = ws->queue;
	uint8_t *row = (uint8_t *)(ch + limit);
	bool reach = ws->reach_valid;
	int x, y;

	for (y = 0; y < g->h; y++) {
		const uint8_t *src = g->cells + (size_t)y * (size_t)g->w;
		const uint8_t *dst = ws->pass + (size_t)(y + 1) * (size_t)ws->W + 1;

		for (x = 0; x < g->w; x++)
			row[x] = src[x] == GRID_FREE;
		if (!memcmp(row, dst, (size_t)g->w))
			continue;
		for (x = 0; x < g->w; x++) {
			if (row[x] == dst[x])
				continue;
			if (nch == limit)
				return false;
			ch[nch++] = (int32_t)((y + 1) * ws->W + x + 1);
		}
	}
	for (i = 0; i < nch; i++) {
		size_t u = (size_t)ch[i];
		int cx = (int)(u % (size_t)ws->W) - 1, cy = (int)(u / (size_t)ws->W) - 1;

		if (reach && near_component(ws, cx, cy))
			reach = false;
		ws->pass[u] = !ws->pass[u];
		if (ws->pass[u])
			ws->passable++;
		else
			ws->passable--;
	}
	for (i = 0; i < nch; i++) {
		size_t u = (size_t)ch[i];
		int d;

		ws->moves[u] = cell_moves(ws, u);
		for (d = 0; d < 8; d++)
			ws->moves[u + ws->off[d]] = cell_moves(ws, u + ws->off[d]);
	}
	set_kscale(ws);
	ws->reach_valid = reach;
	ws->found = false;
	return true;
}

int astar_ws_load(struct astar_ws *ws, const struct grid *g)
{
	size_t n, u;
	int x, y, d, W;

	if (g->w < 1 || g->h < 1 || g->w > ws->max_w || g->h > ws->max_h)
		return ENG_EINVAL;
	if (ws->w == g->w && ws->h == g->h && load_changes(ws, g))
		return 0;
	ws->reach_valid = false;
	W = g->w + 2;
	n = (size_t)W * (size_t)(g->h + 2);
	memset(ws->pass, 0, n);
	memset(ws->moves, 0, n);
	ws->passable = 0;
	for (y = 0; y < g->h; y++) {
		const uint8_t *src = g->cells + (size_t)y * (size_t)g->w;
		uint8_t *dst = ws->pass + (size_t)(y + 1) * (size_t)W + 1;

		for (x = 0; x < g->w; x++) {
			dst[x] = src[x] == GRID_FREE;
			ws->passable += dst[x];
		}
	}
	ws->W = W;
	for (d = 0; d < 8; d++)
		ws->off[d] = move_dy[d] * W + move_dx[d];
	set_kscale(ws);
	/* the no-corner-cutting rule is folded into the masks here */
	for (y = 1; y <= g->h; y++)
		for (x = 1; x <= g->w; x++) {
			u = (size_t)y * (size_t)W + (size_t)x;
			if (ws->pass[u])
				ws->moves[u] = cell_moves(ws, u);
		}
	ws->w = g->w;
	ws->h = g->h;
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

static inline double octile(int dx, int dy)
{
	int ax = dx < 0 ? -dx : dx, ay = dy < 0 ? -dy : dy;

	return ax > ay ? ax + (SQRT2 - 1) * ay : ay + (SQRT2 - 1) * ax;
}

/*
 * Open-list keys are f in fixed point, f * 2^kbits. A path cost is a +
 * b sqrt(2) with a + b at most P, the passable cell count (search-tree
 * paths are simple), and two different such costs differ by at least
 * 1 / ((1 + sqrt 2) P) = 0.41 / P. astar_ws_load() picks 2^kbits >= 10 P,
 * so such costs get keys at least 3 apart: ordering by key is ordering by
 * f, and only true ties (up to rounding) share a key.
 */
static inline uint64_t key_of(const struct astar_ws *ws, double f)
{
	return (uint64_t)(f * ws->kscale);
}

/* ---------------------------------------------------------------- */
/* Open list: radix heap                                              */

static void open_reset(struct astar_ws *ws, uint64_t first)
{
	int b;

	for (b = 0; b < ASTAR_NBUCKET; b++)
		ws->head[b] = -1;
	ws->nonempty = 0;
	ws->last = first;
	ws->ptop = 0;
	ws->pfree = -1;
	ws->oom = false;
}

static inline int bucket_of(uint64_t last, uint64_t key)
{
	return key == last ? 0 : 64 - __builtin_clzll(key ^ last);
}

static inline void link_slot(struct astar_ws *ws, int32_t slot, int b)
{
	ws->pnext[slot] = ws->head[b];
	ws->head[b] = slot;
	if (b)
		ws->nonempty |= (uint64_t)1 << (b - 1);
}

/* True when entry e still describes an open node's current g. */
static bool entry_live(const struct astar_ws *ws, const struct astar__ent *e)
{
	const struct astar__node *v = &ws->nodes[e->node];

	return v->stamp == ws->seen && v->pdir >= -1 &&
	       e->key == key_of(ws, v->g + octile(e->x - ws->gx, e->y - ws->gy));
}

/* Flips a node's pdir to -2 - pdir and back (start's -1 is never open). */
static void mark_flip(struct astar_ws *ws, int32_t node)
{
	ws->nodes[node].pdir = -2 - ws->nodes[node].pdir;
}

/*
 * Drops the entries that can no longer matter (closed nodes, superseded
 * g values, duplicates), leaving at most one entry per open node, fewer
 * than the padded cell count. Kept nodes are marked (mark_flip) during
 * the pass to spot duplicates and unmarked after it.
 */
static void open_compact(struct astar_ws *ws)
{
	int b;

	ws->compactions++;
	for (b = 0; b < ASTAR_NBUCKET; b++) {
		int32_t prev = -1, slot = ws->head[b];

		while (slot >= 0) {
			int32_t nxt = ws->pnext[slot];

			if (entry_live(ws, &ws->pool[slot])) {
				mark_flip(ws, ws->pool[slot].node);
				prev = slot;
			} else {
				if (prev < 0)
					ws->head[b] = nxt;
				else
					ws->pnext[prev] = nxt;
				ws->pnext[slot] = ws->pfree;
				ws->pfree = slot;
			}
			slot = nxt;
		}
		if (b && ws->head[b] < 0)
			ws->nonempty &= ~((uint64_t)1 << (b - 1));
	}
	for (b = 0; b < ASTAR_NBUCKET; b++) {
		int32_t slot;

		for (slot = ws->head[b]; slot >= 0; slot = ws->pnext[slot])
			mark_flip(ws, ws->pool[slot].node);
	}
}

/*
 * Adds e to the open list. A key below the last one taken (rounding can
 * put a tie a hair below) goes to bucket 0 with the ties; the key itself
 * is kept so that open_compact() still recognises the entry. When the
 * pool is full it is compacted first; if that frees nothing, ws->oom is
 * set, which cannot happen at full capacity (fewer open nodes than padded
 * cells).
 */
static inline void open_push(struct astar_ws *ws, struct astar__ent e)
{
	int32_t slot;

	if (ws->pfree < 0 && ws->ptop == ws->pool_cap)
		open_compact(ws);
	if (ws->pfree >= 0) {
		slot = ws->pfree;
		ws->pfree = ws->pnext[slot];
	} else if (ws->ptop < ws->pool_cap) {
		slot = (int32_t)ws->ptop++;
	} else {
		ws->oom = true;
		return;
	}
	ws->pool[slot] = e;
	link_slot(ws, slot, e.key <= ws->last ? 0 : bucket_of(ws->last, e.key));
}

/* Takes an entry of least key into *e; false when the list is empty. */
static inline bool open_pop(struct astar_ws *ws, struct astar__ent *e)
{
	int32_t slot;

	if (ws->head[0] < 0) {
		uint64_t min = UINT64_MAX;
		int b;

		if (!ws->nonempty)
			return false;
		b = __builtin_ctzll(ws->nonempty) + 1;
		for (slot = ws->head[b]; slot >= 0; slot = ws->pnext[slot])
			if (ws->pool[slot].key < min)
				min = ws->pool[slot].key;
		ws->last = min;
		slot = ws->head[b];
		ws->head[b] = -1;
		ws->nonempty &= ~((uint64_t)1 << (b - 1));
		while (slot >= 0) {
			int32_t nxt = ws->pnext[slot];

			link_slot(ws, slot, bucket_of(min, ws->pool[slot].key));
			slot = nxt;
		}
	}
	slot = ws->head[0];
	*e = ws->pool[slot];
	ws->head[0] = ws->pnext[slot];
	ws->pnext[slot] = ws->pfree;
	ws->pfree = slot;
	return true;
}

void astar__set_open_cap(struct astar_ws *ws, size_t cap)
{
	ws->pool_cap = cap < ws->cap ? cap : ws->cap;
}

size_t astar__compactions(const struct astar_ws *ws)
{
	return ws->compactions;
}

/* ---------------------------------------------------------------- */
/* Search                                                             */

static int check_cell(const struct astar_ws *ws, int x, int y)
{
	if (x < 0 || y < 0 || x >= ws->w || y >= ws->h)
		return ENG_ERANGE;
	return 0;
}

/*
 * The search loop: take a least-f entry, skip it if its node is already
 * closed, close the node, and relax its allowed moves minus the pruned
 * ones (prune_init). The hot state is kept in locals.
 */
int astar_search(struct astar_ws *ws, int sx, int sy, int gx, int gy,
		 double *cost)
{
	const int W = ws->W;
	const uint8_t *moves = ws->moves;
	struct astar__node *nodes = ws->nodes;
	struct astar__ent e;
	int32_t s, t, off[8];
	size_t expanded = 0;
	uint32_t seen;
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
	e.key = key_of(ws, octile(sx - gx, sy - gy));
	e.node = s;
	e.x = (uint16_t)sx;
	e.y = (uint16_t)sy;
	open_reset(ws, e.key);
	open_push(ws, e);
	while (open_pop(ws, &e)) {
		struct astar__node *nu;
		int32_t u = e.node;
		unsigned m;
		double gu;

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
			struct astar__ent c;
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
			c.key = key_of(ws, ng + octile(c.x - gx, c.y - gy));
			open_push(ws, c);
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
/*
 * Marks the component of padded cell s (unpadded s2) GRID_FREE in scratch,
 * every other cell GRID_OCCUPIED: a breadth-first walk that keeps each
 * cell's unpadded index beside its padded one, so the visited marks are
 * the reachability grid the ring search reads. It takes the four straight
 * moves only: a diagonal move is legal only when both cells beside it are
 * free (no corner cutting), so its end is two straight moves away and the
 * component is the same.
 */
static void flood(struct astar_ws *ws, int32_t s, int32_t s2)
{
	uint8_t *reach = ws->scratch;
	int32_t uoff[4];
	size_t head = 0, tail = 0;
	int d;

	for (d = 0; d < 4; d++)
		uoff[d] = move_dy[d] * ws->w + move_dx[d];
	memset(reach, GRID_OCCUPIED, (size_t)ws->w * (size_t)ws->h);
	reach[s2] = GRID_FREE;
	ws->queue[tail] = s;
	ws->uqueue[tail++] = s2;
	while (head < tail) {
		int32_t u = ws->queue[head], u2 = ws->uqueue[head++];
		unsigned m = ws->moves[u] & STRAIGHT_MOVES;

		while (m) {
			int k = __builtin_ctz(m);
			int32_t v2 = u2 + uoff[k];

			m &= m - 1;
			if (reach[v2] == GRID_FREE)
				continue;
			reach[v2] = GRID_FREE;
			ws->queue[tail] = u + ws->off[k];
			ws->uqueue[tail++] = v2;
		}
	}
}

int astar_nearest_reachable(struct astar_ws *ws, int sx, int sy, double fx,
			    double fy, double max_dist, int *cx, int *cy)
{
	struct grid reach;
	int32_t s;
	int rc;

	ws->found = false;
	if (!ws->w || !isfinite(fx) || !isfinite(fy))
		return ENG_EINVAL;
	rc = check_cell(ws, sx, sy);
	if (rc)
		return rc;
	s = (sy + 1) * ws->W + sx + 1;
	if (!ws->pass[s])
		return ENG_ENOTFOUND;
	reach.w = ws->w;
	reach.h = ws->h;
	reach.x0 = 0;
	reach.y0 = 0;
	reach.cell = 1;
	reach.cells = ws->scratch;
	/*
	 * A start inside the component flooded last time, on the same load,
	 * has that component: the flood is not repeated.
	 */
	if (ws->reach_valid && ws->scratch[(size_t)sy * (size_t)ws->w + (size_t)sx] == GRID_FREE)
		return grid_nearest_free_toward(&reach, fx, fy, max_dist, sx, sy, cx, cy);
	flood(ws, s, (int32_t)((size_t)sy * (size_t)ws->w + (size_t)sx));
	ws->reach_valid = true;
	return grid_nearest_free_toward(&reach, fx, fy, max_dist, sx, sy, cx, cy);
}

int astar_search_nearest(struct astar_ws *ws, const struct grid *g, int sx, int sy, double fx,
			 double fy, double max_dist, int *cx, int *cy, double *cost)
{
	int rc;

	*cx = *cy = -1;
	if (!ws->w || !isfinite(fx) || !isfinite(fy))
		return ENG_EINVAL;
	rc = check_cell(ws, sx, sy);
	if (rc)
		return rc;
	if (!ws->pass[(sy + 1) * ws->W + sx + 1])
		return ENG_ENOTFOUND;
	/* a flooded component that holds the start answers at once */
	if (!(ws->reach_valid &&
	      ws->scratch[(size_t)sy * (size_t)ws->w + (size_t)sx] == GRID_FREE)) {
		rc = grid_nearest_free_toward(g, fx, fy, max_dist, sx, sy, cx, cy);
		if (rc) {
			/* no free cell qualifies, so no reachable one does */
			*cx = *cy = -1;
			return rc;
		}
		rc = astar_search(ws, sx, sy, *cx, *cy, cost);
		if (rc != ENG_ENOTFOUND)
			return rc;
	}
	rc = astar_nearest_reachable(ws, sx, sy, fx, fy, max_dist, cx, cy);
	if (rc) {
		*cx = *cy = -1;
		return rc;
	}
	return astar_search(ws, sx, sy, *cx, *cy, cost);
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
			l->length_m = (float)(hypot(bx - ax, by - ay) * (double)g->cell);
			l->heading = (float)hd;
			yaw = bev_wrap_deg((float)((hd - prev) * POSE_RAD2DEG));
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
