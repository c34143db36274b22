/* SPDX-License-Identifier: MIT */
/*
 * Jump point search with precomputed jump distances (JPS+), no corner
 * cutting, with an optional landmark (ALT) lower bound beside the octile
 * heuristic.
 */
#include "jps.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#define JPS_SSE 1
#else
#define JPS_SSE 0
#endif

#include "errcode.h"

#define SQRT2 1.4142135623730951

#if defined(__GNUC__)
#define PREFETCH(p) __builtin_prefetch(p)
#else
#define PREFETCH(p) ((void)(p))
#endif

/*
 * The 8 directions, as in astar.c: E, W, N, S (rows grow with y), then
 * NE, NW, SE, SW.
 */
enum { D_E, D_W, D_N, D_S, D_NE, D_NW, D_SE, D_SW };
static const int dir_dx[8] = { 1, -1, 0, 0, 1, -1, 1, -1 };
static const int dir_dy[8] = { 0, 0, -1, 1, -1, -1, 1, 1 };

/* The two straight components of diagonal d - 4, x first. */
static const unsigned char diag_comp[4][2] = {
	{ D_E, D_N }, { D_W, D_N }, { D_E, D_S }, { D_W, D_S },
};

/* The two sides (perpendicular straight directions) of straight d. */
static const unsigned char side_of[4][2] = {
	{ D_N, D_S }, { D_N, D_S }, { D_E, D_W }, { D_E, D_W },
};

/* A jump table entry too far for int8_t: see line_info(). */
#define FAR INT8_MIN
/* Largest fixed-point landmark distance; farther ones saturate to it. */
#define LM_MAX 65535
/* Slack of a landmark bound, in stored units (see heuristic). */
#define LM_SLACK 1

/*
 * Everything the search reads about one padded cell, in 32 bytes (64 with
 * landmarks: the distances follow in the same cache line), so that a
 * generated node costs one cache line.
 */
struct jps__cell {
	int8_t jump[8];     /* jump table entry per direction, see tables */
	union {
		struct {
			uint32_t stamp;  /* generation of the last query that reached it */
			int32_t parent;  /* padded index of the node before it, -1 start */
			uint32_t na, nd; /* orthogonal and diagonal moves of its best g */
		} s;
		double dist;     /* landmark distance, during jps_ws_load only */
	} u;
	uint8_t dirs;       /* directions to expand (union over best arrivals) */
	uint8_t done;       /* directions already expanded since its best g */
	uint8_t open;       /* it has a live open-list entry */
	uint8_t forced;     /* bit 2 d + k: side k of straight d is forced */
	uint8_t moves;      /* legal moves from it, bit d */
	uint8_t hj;         /* bit d: the straight run along d meets a jump point */
};

/* An open-list entry. */
struct jps__ent {
	uint64_t key;     /* f in fixed point */
	int32_t node;     /* padded index */
	uint16_t x, y;    /* padded coordinates */
};

struct jps_ws {
	int max_w, max_h;       /* size the workspace was made for */
	int w, h;               /* loaded grid size; 0 before the first load */
	int W;                  /* padded row stride, w + 2 */
	size_t cap;             /* padded cell capacity */
	size_t n;               /* padded cells of the loaded grid */
	uint8_t *pass;          /* padded passability, border 0 */
	uint8_t *moves;         /* padded legal-move masks, bit d */
	unsigned char *rec;     /* cap cell records of 1 << shift bytes */
	int shift;              /* 5; 6 with up to 16 landmarks, 7 with more */
	int32_t *comp;          /* component label per padded cell, -1 blocked */
	uint8_t *scratch;       /* max_w * max_h cells for jps_nearest_reachable */
	int32_t off[8];         /* index offset of each direction */
	int nlm;                /* landmarks per cell (a multiple of 8) */
	int32_t lm_comp;        /* component the landmarks lie in, -1 none */
	int32_t lm_cell[JPS_MAX_LANDMARKS]; /* padded landmark cells */
	double lm_inv;          /* cells per stored landmark unit */
	uint16_t (*lm_tmp)[8];  /* load scratch: a batch of 8 landmarks per cell */
	uint16_t *lm_min;       /* load scratch: least distance to a landmark */
	struct jps__ent *heap;  /* binary heap, slots 0..hn-1 */
	size_t hn, heap_cap;    /* entries, capacity (cap, or less in tests) */
	size_t compactions;     /* open-list compactions so far */
	double kscale;          /* fixed-point scale of f */
	uint32_t seen;          /* stamp of the current query */
	int32_t start, goal;    /* padded ends of the last path */
	bool found;             /* the last query found a path */
	size_t expanded;        /* nodes closed by the last query */
};

static inline struct jps__cell *cell_at(const struct jps_ws *ws, int32_t v)
{
	return (struct jps__cell *)(void *)(ws->rec + ((size_t)v << ws->shift));
}

/* The landmark distances of v, after its record (nlm > 0 only). */
static inline uint16_t *lm_at(const struct jps_ws *ws, int32_t v)
{
	return (uint16_t *)(void *)(ws->rec + ((size_t)v << ws->shift) +
				    sizeof(struct jps__cell));
}

struct jps_ws *jps_ws_new(int max_w, int max_h, int landmarks)
{
	struct jps_ws *ws;
	size_t cap, bytes;

	if (!grid_cells_needed(max_w, max_h) ||
	    landmarks < 0 || landmarks > JPS_MAX_LANDMARKS || landmarks % 8)
		return NULL;
	ws = calloc(1, sizeof(*ws));
	if (!ws)
		return NULL;
	cap = (size_t)(max_w + 2) * (size_t)(max_h + 2);
	ws->max_w = max_w;
	ws->max_h = max_h;
	ws->cap = cap;
	ws->nlm = landmarks;
	ws->lm_comp = -1;
	ws->shift = landmarks > 16 ? 7 : landmarks ? 6 : 5;
	bytes = cap << ws->shift;
	ws->pass = calloc(cap, 1);
	ws->moves = calloc(cap, 1);
	ws->rec = aligned_alloc(64, (bytes + 63) & ~(size_t)63);
	ws->comp = malloc(cap * sizeof(*ws->comp));
	ws->scratch = malloc((size_t)max_w * (size_t)max_h);
	ws->heap = malloc(cap * sizeof(*ws->heap));
	ws->heap_cap = cap;
	if (landmarks) {
		ws->lm_tmp = malloc(cap * sizeof(*ws->lm_tmp));
		ws->lm_min = malloc(cap * sizeof(*ws->lm_min));
	}
	if (!ws->pass || !ws->moves || !ws->rec || !ws->comp || !ws->scratch || !ws->heap ||
	    (landmarks && (!ws->lm_tmp || !ws->lm_min))) {
		jps_ws_free(ws);
		return NULL;
	}
	memset(ws->rec, 0, bytes);
	return ws;
}

void jps_ws_free(struct jps_ws *ws)
{
	if (!ws)
		return;
	free(ws->pass);
	free(ws->moves);
	free(ws->rec);
	free(ws->comp);
	free(ws->scratch);
	free(ws->heap);
	free(ws->lm_tmp);
	free(ws->lm_min);
	free(ws);
}

/* ---------------------------------------------------------------- */
/* Jump tables                                                        */

/*
 * True when cell c, entered from its neighbour c - off[d] by straight
 * move d, has a forced neighbour on side k: that side of c is free while
 * the same side of the predecessor is blocked.
 */
static inline bool forced_side(const struct jps_ws *ws, int32_t c, int d, int k)
{
	int32_t so = ws->off[side_of[d][k]];

	return ws->pass[c + so] && !ws->pass[c - ws->off[d] + so];
}

/*
 * The entry of a cell from that of the next cell n along the line: 1 when
 * n is a jump point (stop), else one step more than n's, FAR past 127.
 */
static inline int8_t chain(int8_t next, bool stop)
{
	int k;

	if (stop)
		return 1;
	if (next == FAR)
		return FAR;
	k = next > 0 ? next + 1 : next - 1;
	return k > 127 || k < -127 ? FAR : (int8_t)k;
}

/* Fills jump[d] and hj bit d of free cell c, straight d, from c + off[d]. */
static inline void straight_entry(struct jps_ws *ws, int32_t c, int d)
{
	int32_t n = c + ws->off[d];
	struct jps__cell *cc = cell_at(ws, c), *cn;
	bool stop;

	if (!ws->pass[n]) {
		cc->jump[d] = 0;
		return;
	}
	cn = cell_at(ws, n);
	/* n's forced sides on arrival by d (cell_masks; its predecessor c is free) */
	stop = cn->forced >> (2 * d) & 3;
	cc->jump[d] = chain(cn->jump[d], stop);
	if (stop || (cn->hj >> d & 1))
		cc->hj |= (uint8_t)(1u << d);
}

/*
 * jump[d] of a free cell c: k in 1..127 when the k-th cell along d is
 * the first jump point (every cell up to it free and every step legal),
 * -k in -127..0 when k legal steps can be made along d before a wall or
 * an uncuttable corner and none of them reaches a jump point, FAR when
 * the first 127 steps are legal and reach no jump point (line_info()
 * then reads on from the 127th cell). A straight jump point is a cell with
 * a forced neighbour (forced_side()); a diagonal one is a cell whose
 * straight run along either component meets a jump point (hj). Each line
 * is filled from its far end so that every entry follows from the next
 * cell's.
 */
static void tables_straight(struct jps_ws *ws)
{
	const int W = ws->W, w = ws->w, h = ws->h;
	const uint8_t *p = ws->pass;
	int x, y;

	for (y = 1; y <= h; y++) {
		int32_t row = y * W;

		for (x = w; x >= 1; x--)
			if (p[row + x])
				straight_entry(ws, row + x, D_E);
		for (x = 1; x <= w; x++)
			if (p[row + x])
				straight_entry(ws, row + x, D_W);
	}
	for (y = 1; y <= h; y++)
		for (x = 1; x <= w; x++)
			if (p[y * W + x])
				straight_entry(ws, y * W + x, D_N);
	for (y = h; y >= 1; y--)
		for (x = 1; x <= w; x++)
			if (p[y * W + x])
				straight_entry(ws, y * W + x, D_S);
}

static inline void diag_entry(struct jps_ws *ws, int32_t c, int d)
{
	struct jps__cell *cc = cell_at(ws, c), *cn;
	int a = diag_comp[d - 4][0], b = diag_comp[d - 4][1];

	if (!(cc->moves >> d & 1)) {
		cc->jump[d] = 0;
		return;
	}
	cn = cell_at(ws, c + ws->off[d]);
	cc->jump[d] = chain(cn->jump[d], (cn->hj >> a & 1) || (cn->hj >> b & 1));
}

static void tables_diagonal(struct jps_ws *ws)
{
	const int W = ws->W, w = ws->w, h = ws->h;
	const uint8_t *p = ws->pass;
	int x, y;

	/* NE and NW read the row above: go down from the top */
	for (y = 1; y <= h; y++) {
		for (x = w; x >= 1; x--)
			if (p[y * W + x])
				diag_entry(ws, y * W + x, D_NE);
		for (x = 1; x <= w; x++)
			if (p[y * W + x])
				diag_entry(ws, y * W + x, D_NW);
	}
	for (y = h; y >= 1; y--) {
		for (x = w; x >= 1; x--)
			if (p[y * W + x])
				diag_entry(ws, y * W + x, D_SE);
		for (x = 1; x <= w; x++)
			if (p[y * W + x])
				diag_entry(ws, y * W + x, D_SW);
	}
}

/* Legal moves and forced sides of free padded cell c. */
static void cell_masks(struct jps_ws *ws, int32_t c)
{
	struct jps__cell *cc = cell_at(ws, c);
	const uint8_t *p = ws->pass;
	unsigned m = 0, f = 0;
	int d, k;

	for (d = 0; d < 4; d++)
		if (p[c + ws->off[d]])
			m |= 1u << d;
	for (d = 4; d < 8; d++)
		if ((m >> diag_comp[d - 4][0] & 1) && (m >> diag_comp[d - 4][1] & 1) &&
		    p[c + ws->off[d]])
			m |= 1u << d;
	for (d = 0; d < 4; d++)
		for (k = 0; k < 2; k++)
			if (p[c - ws->off[d]] && forced_side(ws, c, d, k))
				f |= 1u << (2 * d + k);
	cc->moves = (uint8_t)m;
	cc->forced = (uint8_t)f;
	ws->moves[c] = (uint8_t)m;
}

/*
 * Labels the components of the move graph (symmetric: the corner rule
 * reads the same two cells both ways) into ws->comp, using queue (cap
 * entries) for the flood. Returns the label of the largest, -1 when no
 * cell is free.
 */
static int32_t label_components(struct jps_ws *ws, int32_t *queue)
{
	size_t i, best_n = 0;
	int32_t next = 0, best = -1;

	for (i = 0; i < ws->n; i++)
		ws->comp[i] = -1;
	for (i = 0; i < ws->n; i++) {
		size_t head = 0, tail = 0;

		if (!ws->pass[i] || ws->comp[i] >= 0)
			continue;
		ws->comp[i] = next;
		queue[tail++] = (int32_t)i;
		while (head < tail) {
			int32_t u = queue[head++];
			unsigned m = ws->moves[u];

			while (m) {
				int32_t v = u + ws->off[__builtin_ctz(m)];

				m &= m - 1;
				if (ws->comp[v] < 0) {
					ws->comp[v] = next;
					queue[tail++] = v;
				}
			}
		}
		if (tail > best_n) {
			best_n = tail;
			best = next;
		}
		next++;
	}
	return best;
}

/*
 * Landmark distances are exact shortest-path distances in integers, over
 * the move graph with weights `unit` (orthogonal) and floor(sqrt 2 unit)
 * (diagonal): no rounding happens in the search, and since both weights
 * are at most the true costs times unit, every such distance is at most
 * unit times the true one (so the landmark bound stays admissible; the
 * diagonal weight loses under 1 / unit of a cell per step).
 *
 * Dial's buckets of width unit, the least weight: a cell taken from bucket
 * k (distance in [k unit, (k + 1) unit)) is final, since whatever it
 * relaxes lands in bucket k + 1 or k + 2, so three bucket lists in a ring
 * suffice and no order is needed inside a bucket. A cell enters a bucket
 * at most once (its bucket only goes down); an entry whose cell has moved
 * to a lower bucket is skipped. dist has cap entries (UINT32_MAX where
 * unreachable), bkt 3 * cap. Returns the largest finite distance.
 */
static uint32_t lm_dijkstra(const struct jps_ws *ws, int32_t src, int ushift,
			    uint32_t *dist, int32_t *bkt)
{
	const uint32_t unit = 1u << ushift;
	const uint32_t diag = (uint32_t)floor(SQRT2 * unit);
	uint32_t wt[8];
	size_t len[3] = { 0, 0, 0 }, i, cap = ws->n;
	uint32_t k = 0, far = 0;
	int d;

	for (d = 0; d < 8; d++)
		wt[d] = d < 4 ? unit : diag;
	for (i = 0; i < cap; i++)
		dist[i] = UINT32_MAX;
	dist[src] = 0;
	bkt[len[0]++] = src;
	while (len[0] || len[1] || len[2]) {
		int r = (int)(k % 3);
		const int32_t *b = bkt + (size_t)r * cap;

		for (i = 0; i < len[r]; i++) {
			int32_t u = b[i];
			uint32_t du = dist[u];
			unsigned m = ws->moves[u];

			if (du >> ushift != k)
				continue; /* moved to a lower bucket */
			far = du;
			while (m) {
				int e = __builtin_ctz(m);
				int32_t v = u + ws->off[e];
				uint32_t nd = du + wt[e];

				m &= m - 1;
				if (nd < dist[v]) {
					uint32_t nb = nd >> ushift;

					if (dist[v] == UINT32_MAX || dist[v] >> ushift != nb) {
						int rn = (int)(nb % 3);

						bkt[(size_t)rn * cap + len[rn]++] = v;
					}
					dist[v] = nd;
				}
			}
		}
		len[r] = 0;
		k++;
	}
	return far;
}

/*
 * Places the landmarks in the largest component: the first at its first
 * free cell in row order, each next one at the cell farthest from all
 * earlier ones, and stores every free cell's distance to each (see
 * lm_dijkstra) shifted right so that the first landmark's farthest one
 * fits in 16 bits, saturated at LM_MAX (cells of other components, which
 * a query using landmarks never meets, get LM_MAX too). Saturating keeps
 * the bound admissible and consistent: |min(a, M) - min(b, M)| <= |a - b|.
 * The heap holds the distances and the buckets meanwhile; the distances
 * go into the records 8 landmarks at a time (through lm_tmp), one pass
 * over the records per batch.
 */
static void place_landmarks(struct jps_ws *ws, size_t passable)
{
	const int K = ws->nlm;
	uint32_t *dist = (uint32_t *)(void *)ws->heap;
	int32_t *bkt = (int32_t *)(void *)(dist + ws->cap);
	int ushift = 10, rshift = 0;
	size_t i;
	int k;

	ws->lm_comp = label_components(ws, bkt);
	if (ws->lm_comp < 0)
		return;
	/* every distance below 2^32: at most 1.5 unit per passable cell */
	while (ushift > 0 && 1.5 * (double)passable * ldexp(1.0, ushift) >= 4294967295.0)
		ushift--;
	for (i = 0; i < ws->n; i++)
		if (ws->comp[i] == ws->lm_comp)
			break;
	ws->lm_cell[0] = (int32_t)i;
	for (k = 0; k < K; k++) {
		int32_t best = -1, far = -1;
		uint32_t maxd = lm_dijkstra(ws, ws->lm_cell[k], ushift, dist, bkt);

		if (k == 0) {
			while ((maxd >> rshift) > LM_MAX)
				rshift++;
			ws->lm_inv = ldexp(1.0, rshift - ushift);
		}
		for (i = 0; i < ws->n; i++) {
			uint32_t v = dist[i] >> rshift;

			if (v > LM_MAX)
				v = LM_MAX;
			ws->lm_tmp[i][k % 8] = (uint16_t)v;
			if (ws->comp[i] != ws->lm_comp)
				continue;
			if (k == 0 || v < ws->lm_min[i])
				ws->lm_min[i] = (uint16_t)v;
			if (ws->lm_min[i] > far) {
				far = ws->lm_min[i];
				best = (int32_t)i;
			}
		}
		if (k + 1 < K)
			ws->lm_cell[k + 1] = best;
		/* a full batch of 8 goes into the records in one pass */
		if (k % 8 == 7)
			for (i = 0; i < ws->n; i++)
				if (ws->pass[i])
					memcpy(lm_at(ws, (int32_t)i) + (k - 7), ws->lm_tmp[i],
					       sizeof(ws->lm_tmp[i]));
	}
}

int jps_ws_load(struct jps_ws *ws, const struct grid *g)
{
	size_t n, passable = 0, i;
	int x, y, d, W, kbits;

	if (g->w < 1 || g->h < 1 || g->w > ws->max_w || g->h > ws->max_h)
		return ENG_EINVAL;
	W = g->w + 2;
	n = (size_t)W * (size_t)(g->h + 2);
	memset(ws->pass, 0, n);
	memset(ws->moves, 0, n);
	memset(ws->rec, 0, n << ws->shift);
	ws->n = n;
	for (y = 0; y < g->h; y++) {
		const uint8_t *src = g->cells + (size_t)y * (size_t)g->w;
		uint8_t *dst = ws->pass + (size_t)(y + 1) * (size_t)W + 1;

		for (x = 0; x < g->w; x++) {
			dst[x] = src[x] == GRID_FREE;
			passable += dst[x];
		}
	}
	ws->w = g->w;
	ws->h = g->h;
	ws->W = W;
	for (d = 0; d < 8; d++)
		ws->off[d] = dir_dy[d] * W + dir_dx[d];
	for (i = 0; i < n; i++)
		if (ws->pass[i])
			cell_masks(ws, (int32_t)i);
	tables_straight(ws);
	tables_diagonal(ws);
	ws->lm_comp = -1;
	if (ws->nlm) {
		place_landmarks(ws, passable);
	} else {
		label_components(ws, (int32_t *)(void *)ws->heap);
	}
	ws->seen = 0;
	kbits = 16;
	while (kbits < 32 && ldexp(1.0, kbits) < 10.0 * (double)passable)
		kbits++;
	ws->kscale = ldexp(1.0, kbits);
	ws->found = false;
	return 0;
}

/* ---------------------------------------------------------------- */
/* Open list: lazy binary heap                                        */

/*
 * The open list holds one live entry per open node and any number of
 * stale ones: a node whose g improves is pushed again. Its live entry has
 * the least key of its entries (a better g gives a smaller f, and h is
 * fixed for the query), so it surfaces first and closes the node; the
 * stale ones surface later and find no direction left to expand. Nothing
 * in the nodes is written while entries move.
 */
static inline bool ent_less(const struct jps__ent *a, const struct jps__ent *b)
{
	if (a->key != b->key)
		return a->key < b->key;
	return a->node < b->node;
}

static void heap_push(struct jps_ws *ws, struct jps__ent e)
{
	size_t i = ws->hn++;

	while (i > 0) {
		size_t pi = (i - 1) / 2;

		if (!ent_less(&e, &ws->heap[pi]))
			break;
		ws->heap[i] = ws->heap[pi];
		i = pi;
	}
	ws->heap[i] = e;
}

static struct jps__ent heap_pop(struct jps_ws *ws)
{
	struct jps__ent top = ws->heap[0], last;
	size_t i = 0, n;

	n = --ws->hn;
	if (!n)
		return top;
	last = ws->heap[n];
	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= n)
			break;
		if (c + 1 < n && ent_less(&ws->heap[c + 1], &ws->heap[c]))
			c++;
		if (!ent_less(&ws->heap[c], &last))
			break;
		ws->heap[i] = ws->heap[c];
		i = c;
	}
	ws->heap[i] = last;
	return top;
}

/* ---------------------------------------------------------------- */
/* Search                                                             */

static void next_gen(struct jps_ws *ws)
{
	size_t i;

	ws->seen++;
	if (ws->seen)
		return;
	for (i = 0; i < ws->n; i++)
		cell_at(ws, (int32_t)i)->u.s.stamp = 0;
	ws->seen = 1;
}

static inline double octile(int dx, int dy)
{
	int ax = dx < 0 ? -dx : dx, ay = dy < 0 ? -dy : dy;

	return ax > ay ? ax + (SQRT2 - 1) * ay : ay + (SQRT2 - 1) * ax;
}

/*
 * The exact jump value of c along d (the table entry with FAR resolved):
 * a positive distance to the next jump point or minus the legal steps
 * before a wall. An entry is FAR only past 127 cells, so on most grids
 * this reads one entry.
 */
static inline int32_t line_info(const struct jps_ws *ws, int32_t c, int d)
{
	int32_t total = 0;

	for (;;) {
		int v = cell_at(ws, c)->jump[d];

		if (v != FAR)
			return v > 0 ? total + v : v - total;
		total += 127;
		c += 127 * ws->off[d];
	}
}

/*
 * Most successors one expansion gathers before relaxing them: a straight
 * direction gives one, a diagonal one up to two per diagonal jump point
 * of its run, so this is only a batch size (a full batch is relaxed and
 * the gathering goes on).
 */
#define JPS_SUCC_MAX 64

/* State of one running query. */
struct query {
	struct jps_ws *ws;
	int gx, gy;       /* padded goal */
	int32_t t;        /* padded goal index */
	uint32_t seen;
	bool lm;          /* the landmark bound applies */
	_Alignas(16) uint16_t dt[JPS_MAX_LANDMARKS]; /* the goal's landmark distances */
	int nsucc;        /* successors gathered for the node being expanded */
	struct succ {
		int32_t v;         /* padded cell */
		uint16_t x, y;     /* its padded coordinates */
		uint32_t na, nd;   /* g of the arrival */
		int d;             /* direction of the last step */
	} succ[JPS_SUCC_MAX];
};

/*
 * max over landmarks k of |D_k(v) - D_k(t)| for the fixed-point
 * distances. The unsigned 16-bit maximum is the signed one on values
 * with their top bit flipped (SSE2 has only the signed one).
 */
static inline int lm_maxdiff(const uint16_t *dv, const uint16_t *dt, int K)
{
#if JPS_SSE
	const __m128i bias = _mm_set1_epi16((short)0x8000);
	__m128i a = _mm_load_si128((const __m128i *)(const void *)dv);
	__m128i b = _mm_load_si128((const __m128i *)(const void *)dt);
	__m128i m = _mm_xor_si128(_mm_or_si128(_mm_subs_epu16(a, b),
					       _mm_subs_epu16(b, a)), bias);
	int k;

	for (k = 8; k < K; k += 8) {
		a = _mm_load_si128((const __m128i *)(const void *)(dv + k));
		b = _mm_load_si128((const __m128i *)(const void *)(dt + k));
		m = _mm_max_epi16(m, _mm_xor_si128(_mm_or_si128(_mm_subs_epu16(a, b),
								_mm_subs_epu16(b, a)), bias));
	}
	m = _mm_max_epi16(m, _mm_shuffle_epi32(m, _MM_SHUFFLE(1, 0, 3, 2)));
	m = _mm_max_epi16(m, _mm_shuffle_epi32(m, _MM_SHUFFLE(2, 3, 0, 1)));
	m = _mm_max_epi16(m, _mm_shufflelo_epi16(m, _MM_SHUFFLE(2, 3, 0, 1)));
	return _mm_extract_epi16(m, 0) ^ 0x8000;
#else
	int m = 0, k;

	for (k = 0; k < K; k++) {
		int a = (int)dv[k] - (int)dt[k];

		if (a < 0)
			a = -a;
		if (a > m)
			m = a;
	}
	return m;
#endif
}

/*
 * The heuristic at v, padded (vx, vy): the octile distance, or the
 * landmark bound when larger. A stored distance is D = floor(I / 2^r) of
 * an integer distance I (lm_dijkstra) with |I_k(v) - I_k(t)| <= unit *
 * d(v, t), so |D_k(v) - D_k(t)| - LM_SLACK never exceeds d(v, t) in
 * stored units (2^r / unit cells): the bound is admissible, and
 * consistent up to one stored unit (a closed node whose g improves is
 * reopened, so the search stays optimal).
 */
static inline double heuristic(const struct query *q, int32_t v, int vx, int vy)
{
	double h = octile(vx - q->gx, vy - q->gy);

	if (q->lm) {
		int m = lm_maxdiff(lm_at(q->ws, v), q->dt, q->ws->nlm) - LM_SLACK;
		double hl = (double)m * q->ws->lm_inv;

		if (hl > h)
			h = hl;
	}
	return h;
}

/*
 * succ_straight[d][f]: the directions to expand at a cell reached by
 * straight move d whose forced sides are f (bit k = side k): d, and for
 * each forced side that side and the diagonal towards it.
 */
static const uint8_t succ_straight[4][4] = {
	{ 1 << D_E, 1 << D_E | 1 << D_N | 1 << D_NE, 1 << D_E | 1 << D_S | 1 << D_SE,
	  1 << D_E | 1 << D_N | 1 << D_NE | 1 << D_S | 1 << D_SE },
	{ 1 << D_W, 1 << D_W | 1 << D_N | 1 << D_NW, 1 << D_W | 1 << D_S | 1 << D_SW,
	  1 << D_W | 1 << D_N | 1 << D_NW | 1 << D_S | 1 << D_SW },
	{ 1 << D_N, 1 << D_N | 1 << D_E | 1 << D_NE, 1 << D_N | 1 << D_W | 1 << D_NW,
	  1 << D_N | 1 << D_E | 1 << D_NE | 1 << D_W | 1 << D_NW },
	{ 1 << D_S, 1 << D_S | 1 << D_E | 1 << D_SE, 1 << D_S | 1 << D_W | 1 << D_SW,
	  1 << D_S | 1 << D_E | 1 << D_SE | 1 << D_W | 1 << D_SW },
};

/* succ_diag[d - 4]: a diagonal d and its two components. */
static const uint8_t succ_diag[4] = {
	1 << D_NE | 1 << D_E | 1 << D_N, 1 << D_NW | 1 << D_W | 1 << D_N,
	1 << D_SE | 1 << D_E | 1 << D_S, 1 << D_SW | 1 << D_W | 1 << D_S,
};

static void heap_sift_down(struct jps_ws *ws, size_t i)
{
	struct jps__ent e = ws->heap[i];

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= ws->hn)
			break;
		if (c + 1 < ws->hn && ent_less(&ws->heap[c + 1], &ws->heap[c]))
			c++;
		if (!ent_less(&ws->heap[c], &e))
			break;
		ws->heap[i] = ws->heap[c];
		i = c;
	}
	ws->heap[i] = e;
}

static inline uint64_t key_of(const struct query *q, const struct jps__cell *c,
			      int32_t v, int vx, int vy)
{
	return (uint64_t)(((double)c->u.s.na + SQRT2 * c->u.s.nd +
			   heuristic(q, v, vx, vy)) * q->ws->kscale);
}

/*
 * Drops the stale entries (of closed nodes, or keyed by a g that has
 * improved since) and rebuilds the heap. One live entry per open node
 * remains, fewer than the padded cell count, so a full open list always
 * gets room back.
 */
static void open_compact(const struct query *q)
{
	struct jps_ws *ws = q->ws;
	size_t i, k = 0;

	ws->compactions++;
	for (i = 0; i < ws->hn; i++) {
		struct jps__ent e = ws->heap[i];
		const struct jps__cell *c = cell_at(ws, e.node);

		if (c->open && key_of(q, c, e.node, e.x, e.y) == e.key)
			ws->heap[k++] = e;
	}
	ws->hn = k;
	for (i = k / 2; i-- > 0;)
		heap_sift_down(ws, i);
}

/*
 * Records an arrival at v (padded (vx, vy)) from u with its last step
 * along d and g = na + nd sqrt 2: a better g replaces the node's state
 * and (re)opens it; an equal g adds this arrival's directions, reopening
 * the node for them if it was closed.
 */
static inline void relax(struct query *q, int32_t u, int32_t v, int vx,
			 int vy, int d, uint32_t na, uint32_t nd)
{
	struct jps_ws *ws = q->ws;
	struct jps__cell *c = cell_at(ws, v);
	unsigned dirs = 0;
	struct jps__ent e;

	if (v != q->t)
		dirs = d >= 4 ? succ_diag[d - 4] :
			succ_straight[d][c->forced >> (2 * d) & 3];
	if (c->u.s.stamp == q->seen) {
		if (c->u.s.na == na && c->u.s.nd == nd) {
			if (!(dirs & ~c->dirs))
				return;
			c->dirs |= (uint8_t)dirs;
			if (c->open)
				return;
		} else if ((double)na + SQRT2 * nd >=
			   (double)c->u.s.na + SQRT2 * c->u.s.nd) {
			return;
		} else {
			c->u.s.na = na;
			c->u.s.nd = nd;
			c->u.s.parent = u;
			c->dirs = (uint8_t)dirs;
			c->done = 0;
		}
	} else {
		c->u.s.stamp = q->seen;
		c->u.s.na = na;
		c->u.s.nd = nd;
		c->u.s.parent = u;
		c->dirs = (uint8_t)dirs;
		c->done = 0;
	}
	e.key = key_of(q, c, v, vx, vy);
	e.node = v;
	e.x = (uint16_t)vx;
	e.y = (uint16_t)vy;
	c->open = 1;
	if (ws->hn == ws->heap_cap)
		open_compact(q);
	heap_push(ws, e);
}

/*
 * Relaxes the gathered successors of u. Their records were prefetched
 * when gathered, so the cache misses of a batch overlap instead of
 * following one another.
 */
static void flush(struct query *q, int32_t u)
{
	int i;

	for (i = 0; i < q->nsucc; i++) {
		const struct succ *c = &q->succ[i];

		relax(q, u, c->v, c->x, c->y, c->d, c->na, c->nd);
	}
	q->nsucc = 0;
}

/* Adds a successor of u, the node being expanded (see flush). */
static inline void gather(struct query *q, int32_t u, int32_t v, int vx,
			  int vy, int d, uint32_t na, uint32_t nd)
{
	struct succ *c;

	if (q->nsucc == JPS_SUCC_MAX)
		flush(q, u);
	c = &q->succ[q->nsucc++];
	c->v = v;
	c->x = (uint16_t)vx;
	c->y = (uint16_t)vy;
	c->d = d;
	c->na = na;
	c->nd = nd;
	PREFETCH(cell_at(q->ws, v));
}

/*
 * Expands direction d of node u at padded (ux, uy) with g = (na, nd).
 * A straight direction jumps to the next jump point (or the goal on the
 * line). A diagonal one scans its diagonal run, jumping from one diagonal
 * jump point to the next with the table, and generates at each the
 * straight jump points its components reach (their parent is u: the path
 * there is diagonal first, then straight), and the goal when it lies on
 * the row or column of a cell of the run within that cell's straight
 * reach. Diagonal jump points themselves never enter the open list.
 */
static inline void expand_dir(struct query *q, int32_t u, int ux, int uy,
			      int d, uint32_t na, uint32_t nd)
{
	const struct jps_ws *ws = q->ws;
	int32_t j = line_info(ws, u, d), reach = j < 0 ? -j : j;
	int sx = dir_dx[d], sy = dir_dy[d];
	int ddx = (q->gx - ux) * sx, ddy = (q->gy - uy) * sy;
	int a, b, k, yx, yy;
	int32_t y;

	if (d < 4) {
		/* the goal on this line within reach */
		k = sx ? ddx : ddy;
		if ((sx ? q->gy == uy : q->gx == ux) && k > 0 && k <= reach) {
			gather(q, u, q->t, q->gx, q->gy, d, na + (uint32_t)k, nd);
			return;
		}
		if (j > 0)
			gather(q, u, u + j * ws->off[d], ux + j * sx, uy + j * sy,
			       d, na + (uint32_t)j, nd);
		return;
	}
	a = diag_comp[d - 4][0];
	b = diag_comp[d - 4][1];
	y = u;
	yx = ux;
	yy = uy;
	k = 0;
	for (;;) {
		/* the goal on the row or column of a cell within reach */
		if (ddx >= 0 && ddy >= 0) {
			int m = ddx < ddy ? ddx : ddy;

			if (m <= reach) {
				int32_t z = y + m * ws->off[d];
				int c = ddx > ddy ? a : b;
				int rest = (ddx > ddy ? ddx : ddy) - m;
				int32_t jz = rest ? line_info(ws, z, c) : 0;

				if (rest <= (jz < 0 ? -jz : jz)) {
					gather(q, u, q->t, q->gx, q->gy, rest ? c : d,
					       na + (uint32_t)rest,
					       nd + (uint32_t)(k + m));
					return;
				}
			}
		}
		if (j <= 0)
			return;
		y += j * ws->off[d];
		yx += j * sx;
		yy += j * sy;
		k += j;
		ddx -= j;
		ddy -= j;
		{
			int32_t ja = line_info(ws, y, a), jb = line_info(ws, y, b);

			if (ja > 0)
				gather(q, u, y + ja * ws->off[a], yx + ja * sx, yy,
				       a, na + (uint32_t)ja, nd + (uint32_t)k);
			if (jb > 0)
				gather(q, u, y + jb * ws->off[b], yx, yy + jb * sy,
				       b, na + (uint32_t)jb, nd + (uint32_t)k);
		}
		j = line_info(ws, y, d);
		reach = j < 0 ? -j : j;
	}
}

/*
 * Starts loading the first cell each direction in m leads to from u (a
 * jump point, or the first diagonal jump point of a run), so that these
 * cache misses overlap before expand_dir() walks them in turn.
 */
static inline void prefetch_targets(const struct jps_ws *ws, int32_t u,
				    const struct jps__cell *cu, unsigned m)
{
	while (m) {
		int d = __builtin_ctz(m), j = cu->jump[d];

		m &= m - 1;
		if (j > 0)
			PREFETCH(cell_at(ws, u + j * ws->off[d]));
	}
}

static int check_cell(const struct jps_ws *ws, int x, int y)
{
	if (x < 0 || y < 0 || x >= ws->w || y >= ws->h)
		return ENG_ERANGE;
	return 0;
}

int jps_search(struct jps_ws *ws, int sx, int sy, int gx, int gy,
	       double *cost)
{
	struct query q;
	struct jps__cell *cs;
	size_t expanded = 0;
	int32_t s;
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
	sx++, sy++, gx++, gy++;
	s = sy * ws->W + sx;
	q.ws = ws;
	q.gx = gx;
	q.gy = gy;
	q.t = gy * ws->W + gx;
	if (!ws->pass[s] || !ws->pass[q.t] || ws->comp[s] != ws->comp[q.t])
		return ENG_ENOTFOUND;
	q.lm = ws->nlm && ws->comp[q.t] == ws->lm_comp;
	if (q.lm)
		memcpy(q.dt, lm_at(ws, q.t), (size_t)ws->nlm * sizeof(q.dt[0]));
	q.nsucc = 0;
	next_gen(ws);
	q.seen = ws->seen;
	ws->hn = 0;
	cs = cell_at(ws, s);
	cs->u.s.stamp = q.seen;
	cs->u.s.na = 0;
	cs->u.s.nd = 0;
	cs->u.s.parent = -1;
	cs->dirs = 0xff;
	cs->done = 0;
	cs->open = 1;
	{
		struct jps__ent e;

		e.key = key_of(&q, cs, s, sx, sy);
		e.node = s;
		e.x = (uint16_t)sx;
		e.y = (uint16_t)sy;
		heap_push(ws, e);
	}
	while (ws->hn) {
		struct jps__ent e = heap_pop(ws);
		int32_t u = e.node;
		struct jps__cell *cu = cell_at(ws, u);
		unsigned m = cu->dirs & ~cu->done;

		if (u == q.t) {
			ws->start = s;
			ws->goal = q.t;
			ws->found = true;
			ws->expanded = expanded + 1;
			*cost = (double)cu->u.s.na + SQRT2 * cu->u.s.nd;
			return 0;
		}
		if (!m)
			continue; /* a stale entry */
		expanded++;
		cu->done |= (uint8_t)m;
		cu->open = 0;
		prefetch_targets(ws, u, cu, m);
		while (m) {
			int d = __builtin_ctz(m);

			m &= m - 1;
			expand_dir(&q, u, e.x, e.y, d, cu->u.s.na, cu->u.s.nd);
		}
		flush(&q, u);
	}
	ws->expanded = expanded;
	return ENG_ENOTFOUND;
}

int jps_path(const struct jps_ws *ws, int32_t *cells, size_t cap, size_t *n)
{
	size_t k = 1, i;
	int32_t v, p;
	int W = ws->W;

	*n = 0;
	if (!ws->found)
		return ENG_EINVAL;
	/* count: each jump adds max(|dx|, |dy|) cells */
	for (v = ws->goal; v != ws->start; v = p) {
		int dx, dy;

		p = cell_at(ws, v)->u.s.parent;
		dx = abs(v % W - p % W);
		dy = abs(v / W - p / W);
		k += (size_t)(dx > dy ? dx : dy);
	}
	*n = k;
	if (cap < k)
		return ENG_ETOOBIG;
	/*
	 * Each jump from parent p to v is diagonal first, then straight:
	 * walk it backwards from v, straight first.
	 */
	i = k;
	v = ws->goal;
	cells[--i] = (int32_t)((v / W - 1) * ws->w + v % W - 1);
	while (v != ws->start) {
		int vx = v % W, vy = v / W, px, py, sx, sy, ax, ay;

		p = cell_at(ws, v)->u.s.parent;
		px = p % W;
		py = p / W;
		sx = (px > vx) - (px < vx);
		sy = (py > vy) - (py < vy);
		ax = abs(px - vx);
		ay = abs(py - vy);
		while (ax != ay) {
			if (ax > ay) {
				vx += sx;
				ax--;
			} else {
				vy += sy;
				ay--;
			}
			cells[--i] = (int32_t)((vy - 1) * ws->w + vx - 1);
		}
		while (ax--) {
			vx += sx;
			vy += sy;
			cells[--i] = (int32_t)((vy - 1) * ws->w + vx - 1);
		}
		v = p;
	}
	return 0;
}

int jps_nearest_reachable(struct jps_ws *ws, int sx, int sy, double fx,
			  double fy, double max_dist, int *cx, int *cy)
{
	struct grid reach;
	int32_t s, c;
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
	/* the start's component, from the labels of the load */
	c = ws->comp[s];
	for (y = 0; y < ws->h; y++) {
		const int32_t *row = ws->comp + (size_t)(y + 1) * (size_t)ws->W + 1;
		uint8_t *dst = ws->scratch + (size_t)y * (size_t)ws->w;

		for (x = 0; x < ws->w; x++)
			dst[x] = row[x] == c ? GRID_FREE : GRID_OCCUPIED;
	}
	reach.w = ws->w;
	reach.h = ws->h;
	reach.x0 = 0;
	reach.y0 = 0;
	reach.cell = 1;
	reach.cells = ws->scratch;
	return grid_nearest_free_toward(&reach, fx, fy, max_dist, sx, sy, cx, cy);
}

size_t jps_expanded(const struct jps_ws *ws)
{
	return ws->expanded;
}

void jps__set_open_cap(struct jps_ws *ws, size_t cap)
{
	ws->heap_cap = cap < ws->cap ? cap : ws->cap;
}

size_t jps__compactions(const struct jps_ws *ws)
{
	return ws->compactions;
}
