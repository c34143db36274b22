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

/* The diagonal made of straight directions a and b (-1 when none). */
static const signed char diag_of[4][4] = {
	/* E    W     N     S */
	{ -1, -1, D_NE, D_SE }, /* E */
	{ -1, -1, D_NW, D_SW }, /* W */
	{ D_NE, D_NW, -1, -1 }, /* N */
	{ D_SE, D_SW, -1, -1 }, /* S */
};

/* The two straight components of diagonal d - 4, x first. */
static const unsigned char diag_comp[4][2] = {
	{ D_E, D_N }, { D_W, D_N }, { D_E, D_S }, { D_W, D_S },
};

/* The two sides (perpendicular straight directions) of straight d. */
static const unsigned char side_of[4][2] = {
	{ D_N, D_S }, { D_N, D_S }, { D_E, D_W }, { D_E, D_W },
};

/* Landmark distance of a cell no landmark reaches (other components). */
#define LM_INF (1 << 30)
/* Fixed-point slack of a landmark bound, in 1/scale units (see lm_bound). */
#define LM_SLACK 3

/*
 * Search state of one padded cell. stamp == ws->seen means reached this
 * query: na, nd, parent, dirs and done are valid.
 */
struct jps__node {
	uint32_t stamp;   /* generation of the last query that reached it */
	int32_t parent;   /* padded index of the node before it, -1 start */
	uint32_t na, nd;  /* orthogonal and diagonal moves of its best g */
	uint8_t dirs;     /* directions to expand (union over best arrivals) */
	uint8_t done;     /* directions already expanded since its best g */
	uint8_t open;     /* it has a live open-list entry */
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
	uint8_t *pass;          /* padded passability, border 0 */
	int16_t (*jump)[8];     /* jump distance per padded cell, see load */
	int32_t *comp;          /* component label per padded cell, -1 blocked */
	int32_t off[8];         /* index offset of each direction */
	int nlm;                /* landmarks per cell (0, 4, 8, 12 or 16) */
	int32_t *lm;            /* cap * nlm fixed-point landmark distances */
	int32_t lm_comp;        /* component the landmarks lie in, -1 none */
	int32_t lm_cell[JPS_MAX_LANDMARKS]; /* padded landmark cells */
	double lm_inv;          /* 1 / the fixed-point scale */
	struct jps__node *nodes;
	struct jps__ent *heap;  /* binary heap, slots 0..hn-1 */
	size_t hn, heap_cap;    /* entries, capacity (cap, or less in tests) */
	size_t compactions;     /* open-list compactions so far */
	double kscale;          /* fixed-point scale of f */
	uint32_t seen;          /* stamp of the current query */
	int32_t start, goal;    /* padded ends of the last path */
	bool found;             /* the last query found a path */
	size_t expanded;        /* nodes closed by the last query */
};

struct jps_ws *jps_ws_new(int max_w, int max_h, int landmarks)
{
	struct jps_ws *ws;
	size_t cap;

	if (!grid_cells_needed(max_w, max_h) || landmarks < 0 ||
	    landmarks > JPS_MAX_LANDMARKS || landmarks % 4)
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
	ws->pass = calloc(cap, 1);
	ws->jump = calloc(cap, sizeof(*ws->jump));
	ws->comp = malloc(cap * sizeof(*ws->comp));
	ws->nodes = calloc(cap, sizeof(*ws->nodes));
	ws->heap = malloc(cap * sizeof(*ws->heap));
	ws->heap_cap = cap;
	if (landmarks)
		ws->lm = aligned_alloc(64, ((cap * (size_t)landmarks *
					     sizeof(*ws->lm)) + 63) & ~(size_t)63);
	if (!ws->pass || !ws->jump || !ws->comp || !ws->nodes || !ws->heap ||
	    (landmarks && !ws->lm)) {
		jps_ws_free(ws);
		return NULL;
	}
	return ws;
}

void jps_ws_free(struct jps_ws *ws)
{
	if (!ws)
		return;
	free(ws->pass);
	free(ws->jump);
	free(ws->comp);
	free(ws->lm);
	free(ws->nodes);
	free(ws->heap);
	free(ws);
}

/* ---------------------------------------------------------------- */
/* Jump tables                                                        */

/*
 * True when cell c, entered from its neighbour c - off[d] by straight
 * move d, has a forced neighbour: a side cell of c is free while the same
 * side of the predecessor is blocked.
 */
static inline bool forced(const struct jps_ws *ws, int32_t c, int d)
{
	int32_t q = c - ws->off[d];
	int32_t s0 = ws->off[side_of[d][0]], s1 = ws->off[side_of[d][1]];

	return (ws->pass[c + s0] && !ws->pass[q + s0]) ||
	       (ws->pass[c + s1] && !ws->pass[q + s1]);
}

/* The jump entry of a cell from that of the next cell along the line. */
static inline int16_t chain(int16_t next, bool stop)
{
	if (stop)
		return 1;
	return (int16_t)(next > 0 ? next + 1 : next - 1);
}

/*
 * jump[c][d] for a free cell c: k > 0 when the k-th cell along d is the
 * first jump point (all cells up to it free and every step legal), or
 * -k <= 0 when k legal steps can be made along d before a wall or an
 * uncuttable corner and none of them reaches a jump point. A straight
 * jump point is a cell with a forced neighbour (forced()); a diagonal one
 * is a cell whose straight jump along either component is positive. Each
 * line is filled from its far end so that every entry follows from the
 * next cell's. GRID_MAX_DIM keeps every distance within int16_t.
 */
static void tables_straight(struct jps_ws *ws)
{
	const int W = ws->W, w = ws->w, h = ws->h;
	const uint8_t *p = ws->pass;
	int x, y;

	for (y = 1; y <= h; y++) {
		int32_t row = y * W;

		for (x = w; x >= 1; x--) {
			int32_t c = row + x;

			if (p[c])
				ws->jump[c][D_E] = p[c + 1] ?
					chain(ws->jump[c + 1][D_E], forced(ws, c + 1, D_E)) : 0;
		}
		for (x = 1; x <= w; x++) {
			int32_t c = row + x;

			if (p[c])
				ws->jump[c][D_W] = p[c - 1] ?
					chain(ws->jump[c - 1][D_W], forced(ws, c - 1, D_W)) : 0;
		}
	}
	for (y = 1; y <= h; y++) {
		for (x = 1; x <= w; x++) {
			int32_t c = y * W + x;

			if (p[c])
				ws->jump[c][D_N] = p[c - W] ?
					chain(ws->jump[c - W][D_N], forced(ws, c - W, D_N)) : 0;
		}
	}
	for (y = h; y >= 1; y--) {
		for (x = 1; x <= w; x++) {
			int32_t c = y * W + x;

			if (p[c])
				ws->jump[c][D_S] = p[c + W] ?
					chain(ws->jump[c + W][D_S], forced(ws, c + W, D_S)) : 0;
		}
	}
}

static inline int16_t diag_entry(const struct jps_ws *ws, int32_t c, int d)
{
	const uint8_t *p = ws->pass;
	int a = diag_comp[d - 4][0], b = diag_comp[d - 4][1];
	int32_t n = c + ws->off[d];

	if (!p[n] || !p[c + ws->off[a]] || !p[c + ws->off[b]])
		return 0;
	return chain(ws->jump[n][d], ws->jump[n][a] > 0 || ws->jump[n][b] > 0);
}

static void tables_diagonal(struct jps_ws *ws)
{
	const int W = ws->W, w = ws->w, h = ws->h;
	const uint8_t *p = ws->pass;
	int x, y;

	/* NE and NW read the row above: go down from the top */
	for (y = 1; y <= h; y++) {
		for (x = w; x >= 1; x--) {
			int32_t c = y * W + x;

			if (p[c])
				ws->jump[c][D_NE] = diag_entry(ws, c, D_NE);
		}
		for (x = 1; x <= w; x++) {
			int32_t c = y * W + x;

			if (p[c])
				ws->jump[c][D_NW] = diag_entry(ws, c, D_NW);
		}
	}
	for (y = h; y >= 1; y--) {
		for (x = w; x >= 1; x--) {
			int32_t c = y * W + x;

			if (p[c])
				ws->jump[c][D_SE] = diag_entry(ws, c, D_SE);
		}
		for (x = 1; x <= w; x++) {
			int32_t c = y * W + x;

			if (p[c])
				ws->jump[c][D_SW] = diag_entry(ws, c, D_SW);
		}
	}
}

/* The legal moves from free padded cell c, as a bit mask over directions. */
static unsigned moves_of(const struct jps_ws *ws, int32_t c)
{
	const uint8_t *p = ws->pass;
	unsigned m = 0;
	int d;

	for (d = 0; d < 4; d++)
		if (p[c + ws->off[d]])
			m |= 1u << d;
	for (d = 4; d < 8; d++)
		if ((m >> diag_comp[d - 4][0] & 1) && (m >> diag_comp[d - 4][1] & 1) &&
		    p[c + ws->off[d]])
			m |= 1u << d;
	return m;
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

	for (i = 0; i < ws->cap; i++)
		ws->comp[i] = -1;
	for (i = 0; i < ws->cap; i++) {
		size_t head = 0, tail = 0;

		if (!ws->pass[i] || ws->comp[i] >= 0)
			continue;
		ws->comp[i] = next;
		queue[tail++] = (int32_t)i;
		while (head < tail) {
			int32_t u = queue[head++];
			unsigned m = moves_of(ws, u);

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
 * Exact single-source distances from src over the move graph into dist
 * (INFINITY where unreachable). Dial's buckets of width 1, the least
 * move cost: a cell taken from bucket k (distance in [k, k + 1)) is final,
 * since anything it relaxes lands in bucket k + 1 or k + 2, so three
 * bucket lists in a ring suffice and no order is needed inside a bucket.
 * A cell is listed at most once per bucket; an entry whose cell has moved
 * to a lower bucket is skipped. bkt holds 3 * cap entries.
 */
static void lm_dijkstra(const struct jps_ws *ws, int32_t src, double *dist,
			int32_t *bkt)
{
	static const double move_cost[8] = { 1, 1, 1, 1, SQRT2, SQRT2, SQRT2, SQRT2 };
	size_t len[3] = { 0, 0, 0 }, i, cap = ws->cap;
	uint64_t k = 0;

	for (i = 0; i < cap; i++)
		dist[i] = INFINITY;
	dist[src] = 0;
	bkt[len[0]++] = src;
	while (len[0] || len[1] || len[2]) {
		int r = (int)(k % 3);
		int32_t *b = bkt + (size_t)r * cap;

		for (i = 0; i < len[r]; i++) {
			int32_t u = b[i];
			double du = dist[u];
			unsigned m;

			if ((uint64_t)du != k)
				continue; /* moved to a lower bucket */
			m = moves_of(ws, u);
			while (m) {
				int d = __builtin_ctz(m);
				int32_t v = u + ws->off[d];
				double nd = du + move_cost[d];

				m &= m - 1;
				if (nd < dist[v]) {
					uint64_t nb = (uint64_t)nd;
					int rn = (int)(nb % 3);

					if (dist[v] == INFINITY || (uint64_t)dist[v] != nb)
						bkt[(size_t)rn * cap + len[rn]++] = v;
					dist[v] = nd;
				}
			}
		}
		len[r] = 0;
		k++;
	}
}

/*
 * Places the landmarks in the largest component: the first at its free
 * cell nearest the grid's (0, 0) corner, each next one at the cell
 * farthest from all earlier ones, and stores every free cell's distance
 * to each in fixed point, floor(distance * scale), LM_INF when
 * unreachable. The scale is a power of two that keeps every distance
 * below LM_INF. Uses the node array for distances and the heap for
 * buckets (both cleared afterwards).
 */
static void place_landmarks(struct jps_ws *ws, size_t passable)
{
	const int K = ws->nlm;
	double *dist = (double *)(void *)ws->nodes;
	int32_t *bkt = (int32_t *)(void *)ws->heap;
	double scale = 1;
	size_t i;
	int k;

	ws->lm_comp = label_components(ws, bkt);
	if (ws->lm_comp < 0)
		return;
	while (scale < 65536 && 2 * scale * ((double)passable * SQRT2 + 2) < LM_INF)
		scale *= 2;
	ws->lm_inv = 1.0 / scale;
	for (i = 0; i < ws->cap; i++)
		if (ws->comp[i] == ws->lm_comp)
			break;
	ws->lm_cell[0] = (int32_t)i;
	for (k = 0; k < K; k++) {
		int32_t best = -1, far = -1;

		lm_dijkstra(ws, ws->lm_cell[k], dist, bkt);
		for (i = 0; i < ws->cap; i++) {
			int32_t *row = ws->lm + i * (size_t)K, v, mn;

			if (!ws->pass[i])
				continue;
			v = isfinite(dist[i]) ? (int32_t)floor(dist[i] * scale) : LM_INF;
			row[k] = v;
			if (k + 1 == K || ws->comp[i] != ws->lm_comp)
				continue;
			/* the lane of the last landmark holds the least distance so far */
			mn = k ? row[K - 1] : v;
			if (v < mn)
				mn = v;
			row[K - 1] = mn;
			if (mn > far) {
				far = mn;
				best = (int32_t)i;
			}
		}
		if (k + 1 < K)
			ws->lm_cell[k + 1] = best;
	}
	memset(ws->nodes, 0, ws->cap * sizeof(*ws->nodes));
	ws->seen = 0;
}

int jps_ws_load(struct jps_ws *ws, const struct grid *g)
{
	size_t n, passable = 0;
	int x, y, d, W, kbits;

	if (g->w < 1 || g->h < 1 || g->w > ws->max_w || g->h > ws->max_h)
		return ENG_EINVAL;
	W = g->w + 2;
	n = (size_t)W * (size_t)(g->h + 2);
	memset(ws->pass, 0, ws->cap);
	memset(ws->jump, 0, n * sizeof(*ws->jump));
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
	tables_straight(ws);
	tables_diagonal(ws);
	ws->lm_comp = -1;
	if (ws->nlm)
		place_landmarks(ws, passable);
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
	for (i = 0; i < ws->cap; i++)
		ws->nodes[i].stamp = 0;
	ws->seen = 1;
}

static inline double octile(int dx, int dy)
{
	int ax = dx < 0 ? -dx : dx, ay = dy < 0 ? -dy : dy;

	return ax > ay ? ax + (SQRT2 - 1) * ay : ay + (SQRT2 - 1) * ax;
}

/*
 * Most successors one expansion can gather: a straight direction gives
 * one, a diagonal one two per diagonal jump point of its run, so this is
 * only a batch size: a full batch is relaxed and the gathering goes on.
 */
#define JPS_SUCC_MAX 64

/* State of one running query. */
struct query {
	struct jps_ws *ws;
	int gx, gy;       /* padded goal */
	int32_t t;        /* padded goal index */
	uint32_t seen;
	bool lm;          /* the landmark bound applies */
	_Alignas(16) int32_t dt[JPS_MAX_LANDMARKS]; /* the goal's landmark distances */
	int nsucc;        /* successors gathered for the node being expanded */
	struct succ {
		int32_t v;         /* padded cell */
		uint16_t x, y;     /* its padded coordinates */
		uint32_t na, nd;   /* g of the arrival */
		int d;             /* direction of the last step */
	} succ[JPS_SUCC_MAX];
};

/*
 * max over landmarks k of |D_k(v) - D_k(t)|, the fixed-point distances
 * (all below LM_INF, so no difference overflows).
 */
static inline int32_t lm_maxdiff(const int32_t *dv, const int32_t *dt, int K)
{
#if JPS_SSE
	__m128i m = _mm_setzero_si128();
	int k;

	for (k = 0; k < K; k += 4) {
		__m128i a = _mm_sub_epi32(_mm_loadu_si128((const __m128i *)(const void *)(dv + k)),
					  _mm_load_si128((const __m128i *)(const void *)(dt + k)));
		__m128i s = _mm_srai_epi32(a, 31), gt;

		a = _mm_sub_epi32(_mm_xor_si128(a, s), s);
		gt = _mm_cmpgt_epi32(a, m);
		m = _mm_or_si128(_mm_and_si128(gt, a), _mm_andnot_si128(gt, m));
	}
	{
		__m128i h = _mm_shuffle_epi32(m, _MM_SHUFFLE(1, 0, 3, 2)), gt;

		gt = _mm_cmpgt_epi32(h, m);
		m = _mm_or_si128(_mm_and_si128(gt, h), _mm_andnot_si128(gt, m));
		h = _mm_shuffle_epi32(m, _MM_SHUFFLE(2, 3, 0, 1));
		gt = _mm_cmpgt_epi32(h, m);
		m = _mm_or_si128(_mm_and_si128(gt, h), _mm_andnot_si128(gt, m));
		return _mm_cvtsi128_si32(m);
	}
#else
	int32_t m = 0;
	int k;

	for (k = 0; k < K; k++) {
		int32_t a = dv[k] - dt[k];

		if (a < 0)
			a = -a;
		if (a > m)
			m = a;
	}
	return m;
#endif
}

/*
 * The heuristic at padded (vx, vy): octile distance, or the landmark bound
 * when larger. Each fixed-point distance D = floor(d * scale) is within 1
 * (plus rounding of the product, under 1 more) below d * scale, so
 * |D(v) - D(t)| - LM_SLACK never exceeds scale * d(v, t): the bound is
 * admissible, and consistent up to a few 1/scale (the search reopens a
 * closed node whose g improves, so it stays optimal).
 */
static inline double heuristic(const struct query *q, int32_t v, int vx, int vy)
{
	double h = octile(vx - q->gx, vy - q->gy);

	if (q->lm) {
		int32_t m = lm_maxdiff(q->ws->lm + (size_t)v * (size_t)q->ws->nlm,
				       q->dt, q->ws->nlm) - LM_SLACK;
		double hl = (double)m * q->ws->lm_inv;

		if (hl > h)
			h = hl;
	}
	return h;
}

/*
 * The directions to expand at cell v reached by a jump along d whose last
 * step came from v - off[d]: along d, plus for a straight d each side
 * with a forced neighbour and the diagonal towards it; for a diagonal d
 * its two components.
 */
static inline unsigned succ_dirs(const struct jps_ws *ws, int32_t v, int d)
{
	unsigned m = 1u << d;
	int k;

	if (d >= 4)
		return m | 1u << diag_comp[d - 4][0] | 1u << diag_comp[d - 4][1];
	for (k = 0; k < 2; k++) {
		int s = side_of[d][k];
		int32_t so = ws->off[s];

		if (ws->pass[v + so] && !ws->pass[v - ws->off[d] + so])
			m |= 1u << s | 1u << diag_of[d][s];
	}
	return m;
}

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
		const struct jps__node *v = &ws->nodes[e.node];
		uint64_t key = (uint64_t)(((double)v->na + SQRT2 * v->nd +
					   heuristic(q, e.node, e.x, e.y)) * ws->kscale);

		if (v->open && key == e.key)
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
	struct jps__node *nv = &ws->nodes[v];
	unsigned dirs = v == q->t ? 0 : succ_dirs(ws, v, d);
	struct jps__ent e;

	if (nv->stamp == q->seen) {
		if (nv->na == na && nv->nd == nd) {
			if (!(dirs & ~nv->dirs))
				return;
			nv->dirs |= (uint8_t)dirs;
			if (nv->open)
				return;
		} else if ((double)na + SQRT2 * nd >=
			   (double)nv->na + SQRT2 * nv->nd) {
			return;
		} else {
			nv->na = na;
			nv->nd = nd;
			nv->parent = u;
			nv->dirs = (uint8_t)dirs;
			nv->done = 0;
		}
	} else {
		nv->stamp = q->seen;
		nv->na = na;
		nv->nd = nd;
		nv->parent = u;
		nv->dirs = (uint8_t)dirs;
		nv->done = 0;
	}
	e.key = (uint64_t)(((double)nv->na + SQRT2 * nv->nd +
			    heuristic(q, v, vx, vy)) * ws->kscale);
	e.node = v;
	e.x = (uint16_t)vx;
	e.y = (uint16_t)vy;
	nv->open = 1;
	if (ws->hn == ws->heap_cap)
		open_compact(q);
	heap_push(ws, e);
}

/*
 * Relaxes the gathered successors of u. Their node, landmark and jump
 * lines were prefetched when gathered, so the cache misses of a batch
 * overlap instead of following one another.
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

/* Adds a successor of the node being expanded (see flush). */
static inline void gather(struct query *q, int32_t u, int32_t v, int vx,
			  int vy, int d, uint32_t na, uint32_t nd)
{
	struct jps_ws *ws = q->ws;
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
	PREFETCH(&ws->nodes[v]);
	PREFETCH(ws->jump[v]);
	if (q->lm)
		PREFETCH(ws->lm + (size_t)v * (size_t)ws->nlm);
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
	struct jps_ws *ws = q->ws;
	int j = ws->jump[u][d], reach = j < 0 ? -j : j;
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
				int jz = ws->jump[z][c];

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
			int ja = ws->jump[y][a], jb = ws->jump[y][b];

			if (ja > 0)
				gather(q, u, y + ja * ws->off[a], yx + ja * sx, yy,
				      a, na + (uint32_t)ja, nd + (uint32_t)k);
			if (jb > 0)
				gather(q, u, y + jb * ws->off[b], yx, yy + jb * sy,
				      b, na + (uint32_t)jb, nd + (uint32_t)k);
		}
		j = ws->jump[y][d];
		reach = j < 0 ? -j : j;
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
	size_t expanded = 0;
	int32_t s;
	int rc, k;

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
	if (!ws->pass[s] || !ws->pass[q.t])
		return ENG_ENOTFOUND;
	if (ws->comp[s] != ws->comp[q.t])
		return ENG_ENOTFOUND;
	q.lm = ws->nlm && ws->comp[q.t] == ws->lm_comp;
	q.nsucc = 0;
	for (k = 0; q.lm && k < ws->nlm; k++)
		q.dt[k] = ws->lm[(size_t)q.t * (size_t)ws->nlm + (size_t)k];
	next_gen(ws);
	q.seen = ws->seen;
	ws->hn = 0;
	ws->nodes[s].stamp = q.seen;
	ws->nodes[s].na = 0;
	ws->nodes[s].nd = 0;
	ws->nodes[s].parent = -1;
	ws->nodes[s].dirs = 0xff;
	ws->nodes[s].done = 0;
	ws->nodes[s].open = 1;
	{
		struct jps__ent e;

		e.key = (uint64_t)(heuristic(&q, s, sx, sy) * ws->kscale);
		e.node = s;
		e.x = (uint16_t)sx;
		e.y = (uint16_t)sy;
		heap_push(ws, e);
	}
	while (ws->hn) {
		struct jps__ent e = heap_pop(ws);
		int32_t u = e.node;
		struct jps__node *nu = &ws->nodes[u];
		unsigned m = nu->dirs & ~nu->done;

		if (u == q.t) {
			expanded++;
			ws->start = s;
			ws->goal = q.t;
			ws->found = true;
			ws->expanded = expanded;
			*cost = (double)nu->na + SQRT2 * nu->nd;
			return 0;
		}
		if (!m)
			continue; /* a stale entry */
		expanded++;
		nu->done |= (uint8_t)m;
		nu->open = 0;
		while (m) {
			int d = __builtin_ctz(m);

			m &= m - 1;
			expand_dir(&q, u, e.x, e.y, d, nu->na, nu->nd);
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

		p = ws->nodes[v].parent;
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

		p = ws->nodes[v].parent;
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
