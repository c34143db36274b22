/* SPDX-License-Identifier: MIT */
/*
 * 8-wide BVH over oriented boxes: binned-SAH build, refit, and single-ray
 * traversal with SSE2, AVX2 or AVX-512 node and leaf tests chosen at run
 * time (a scalar path off x86).
 */
#include "bvh.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* BVH_NO_SIMD forces the portable scalar path (used to test it on x86). */
#if defined(__SSE2__) && !defined(BVH_NO_SIMD)
#include <emmintrin.h>
#define BVH_SSE 1
#else
#define BVH_SSE 0
#endif

#include "errcode.h"

/* ======================= Layout ======================= */

#ifndef BVH_W
#define BVH_W 8         /* children per node: 2 SSE groups of 4 */
#endif
#ifndef BVH_PK
#define BVH_PK 8        /* boxes per leaf packet: one AVX or two SSE groups */
#endif
#define BVH_LEAF_MAX BVH_PK
#define BVH_BINS 32     /* SAH bins per axis */
/*
 * Copies of boxes spatial splits may make: none in a scene of at most
 * BVH_SPATIAL_MIN boxes (a root and its leaves, where a split only adds
 * nodes), else as many as the boxes, down to half of them past
 * BVH_COPIES_MAX (copies cost memory: the leaves of a large scene outgrow
 * the caches, and the misses cost more than the tests saved).
 */
#ifndef BVH_SPATIAL_MIN
#define BVH_SPATIAL_MIN 64
#endif
#ifndef BVH_COPIES_MAX
#define BVH_COPIES_MAX 4096
#endif
/* a spatial split's SAH cost is weighed by this against an object split's */
#ifndef BVH_SPATIAL_FAVOUR
#define BVH_SPATIAL_FAVOUR 0.85f
#endif
/* spatial splits are tried where an object split's parts overlap by this much of the root's surface */
#define BVH_SPLIT_ALPHA 1e-5f
/*
 * Trees larger than this ask for their children's memory ahead of the
 * tests (prefetch_children); in smaller ones, which the caches hold, the
 * requests only cost instructions.
 */
#ifndef BVH_PREFETCH_BYTES
#define BVH_PREFETCH_BYTES (256u << 10)
#endif
#define BVH_MAX_DEPTH 40 /* deeper ranges are split by index halves */
/* a level pushes at most BVH_W - 1; index halves add at most 31 levels */
#define BVH_STACK ((BVH_W - 1) * (BVH_MAX_DEPTH + 32) + 4)

/* Child references: >= 0 inner node, BVH_EMPTY, or a leaf packet. */
#define BVH_EMPTY (-1)
#define BVH_LEAF(p) (-(int32_t)(p) - 2)
#define BVH_PACKET(ref) (-(ref) - 2)

/*
 * Inner node: the bounds of its BVH_W children, SoA so that one SSE
 * register holds one plane of four of them. An empty slot has lo = +inf
 * and hi = -inf, which every ray misses.
 */
struct bvh_node {
	float b[6][BVH_W];      /* rows 0..2: lo x,y,z; rows 3..5: hi */
	int32_t child[BVH_W];   /* child references */
	int32_t pad[BVH_W];     /* to 128 (W = 4) or 256 (W = 8) bytes */
};

/*
 * The boxes of one leaf (up to BVH_PK, filled from lane 0), SoA, in the
 * box frame form ray_obb uses.
 */
struct bvh_packet {
	float c[3][BVH_PK];     /* centre, component j of lane */
	float ax[3][3][BVH_PK]; /* ax[k][j]: component j of box axis k */
	float h[3][BVH_PK];     /* half-extents */
	int32_t idx[BVH_PK];    /* box index, -1 = unused lane */
};

struct bvh {
	size_t n;                   /* boxes */
	int isa;                    /* kernel used by queries (BVH_ISA_*) */
	int32_t root;               /* root reference */
	struct bvh_node *nodes;     /* preorder: a child after its parent */
	size_t nnodes;
	struct bvh_packet *packets;
	size_t npackets;
	size_t cap;                 /* references, nodes and packets at most */
	float (*plo)[3], (*phi)[3]; /* inflated world AABB of each box (n) */
	float root_area;            /* surface of all the boxes' bounds */
	bool prefetch;              /* the tree outgrows the caches: see prefetch_children */
	/* build scratch, cap entries each: the references and a copy */
	int32_t *rbox, *tbox;       /* box of each reference */
	float (*rlo)[3], (*rhi)[3]; /* its bounds: all or part of the box */
	float (*tlo)[3], (*thi)[3];
};

/* ======================= Bounds ======================= */

static bool obb_finite(const struct obb *o)
{
	int k, j;

	for (k = 0; k < 3; k++) {
		if (!isfinite(o->c[k]) || !isfinite(o->h[k]))
			return false;
		for (j = 0; j < 3; j++)
			if (!isfinite(o->ax[k][j]))
				return false;
	}
	return true;
}

/*
 * The margin by which a box's bounds are grown so that the node tests are
 * conservative: a point ray_obb accepts, after its rounding, still lies
 * strictly inside the node bounds, with room for the rounding of the
 * node test itself. Tiny compared with any real object.
 */
static void box_margin(const float lo[3], const float hi[3], float m[3])
{
	int j;

	for (j = 0; j < 3; j++)
		m[j] = 1e-5f * (1.0f + fabsf(lo[j]) + fabsf(hi[j]) +
				(hi[j] - lo[j]));
}

/* World AABB of a box, grown by its margin. */
static void box_bounds(const struct obb *o, float lo[3], float hi[3])
{
	float m[3];
	int j;

	obb_aabb(o, lo, hi);
	box_margin(lo, hi, m);
	for (j = 0; j < 3; j++) {
		lo[j] -= m[j];
		hi[j] += m[j];
	}
}

static float area(const float lo[3], const float hi[3])
{
	float dx = hi[0] - lo[0], dy = hi[1] - lo[1], dz = hi[2] - lo[2];

	if (dx < 0 || dy < 0 || dz < 0)
		return 0;
	return dx * dy + dy * dz + dz * dx;
}

static void bounds_empty(float lo[3], float hi[3])
{
	lo[0] = lo[1] = lo[2] = INFINITY;
	hi[0] = hi[1] = hi[2] = -INFINITY;
}

static void bounds_grow(float lo[3], float hi[3], const float plo[3],
			const float phi[3])
{
	int j;

	for (j = 0; j < 3; j++) {
		if (plo[j] < lo[j])
			lo[j] = plo[j];
		if (phi[j] > hi[j])
			hi[j] = phi[j];
	}
}

static void range_bounds(const struct bvh *b, size_t begin, size_t end,
			 float lo[3], float hi[3])
{
	size_t i;

	bounds_empty(lo, hi);
	for (i = begin; i < end; i++)
		bounds_grow(lo, hi, b->rlo[i], b->rhi[i]);
}

/* The corners of o in double: corner i has bit k set for +h[k]. */
static void box_corners(const struct obb *o, double p[8][3])
{
	int i, j, k;

	for (i = 0; i < 8; i++) {
		for (j = 0; j < 3; j++) {
			double v = o->c[j];

			for (k = 0; k < 3; k++)
				v += (double)((i >> k & 1) ? o->h[k] : -o->h[k]) *
				     (double)o->ax[k][j];
			p[i][j] = v;
		}
	}
}

/* The margin of box o (see box_margin). */
static void obb_margin(const struct obb *o, float m[3])
{
	float lo[3], hi[3];

	obb_aabb(o, lo, hi);
	box_margin(lo, hi, m);
}

/* A part's bounds [lo, hi] grown by the margin m and clipped to the reference's [rlo, rhi]; false if empty. */
static bool piece_close(const double lo[3], const double hi[3], const float m[3],
			const float rlo[3], const float rhi[3], float olo[3],
			float ohi[3])
{
	int j;

	if (!(lo[0] <= hi[0]))
		return false;
	for (j = 0; j < 3; j++) {
		olo[j] = fmaxf((float)lo[j] - m[j], rlo[j]);
		ohi[j] = fminf((float)hi[j] + m[j], rhi[j]);
		if (!(olo[j] <= ohi[j]))
			return false;
	}
	return true;
}

/* The plane between spatial bins k - 1 and k of [lo, lo + ext]. */
static double plane_at(float lo, float ext, int k)
{
	return (double)lo + (double)ext * k / BVH_BINS;
}

/* min and max of two doubles that are not NaN, inlined (fmin is a call) */
static inline double dmin(double x, double y)
{
	return y < x ? y : x;
}

static inline double dmax(double x, double y)
{
	return y > x ? y : x;
}

/* Grows [lo, hi] by the part of the edge s-t between x[a] = slo and shi. */
static void edge_part(const double *s, const double *t, int a, double slo,
		      double shi, double lo[3], double hi[3])
{
	double sa = s[a], ta = t[a], u0 = 0, u1 = 1;
	int j;

	if (dmax(sa, ta) < slo || dmin(sa, ta) > shi)
		return;
	if (sa != ta) {
		double v0 = (slo - sa) / (ta - sa);
		double v1 = (shi - sa) / (ta - sa);

		u0 = dmax(dmin(v0, v1), 0);
		u1 = dmin(dmax(v0, v1), 1);
	}
	for (j = 0; j < 3; j++) {
		double x0 = s[j] + u0 * (t[j] - s[j]);
		double x1 = s[j] + u1 * (t[j] - s[j]);

		lo[j] = dmin(lo[j], dmin(x0, x1));
		hi[j] = dmax(hi[j], dmax(x0, x1));
	}
}

/*
 * Grows [lo, hi] by the parts of a box's 12 edges (corners p, from
 * box_corners) between the planes x[a] = slo and x[a] = shi. The vertices
 * of a convex box cut by two parallel planes are its corners between
 * them and its edges' crossings of them, all ends of those parts, so
 * this gives the bounds of the cut box exactly.
 */
static void slab_part(double p[8][3], int a, double slo, double shi,
		      double lo[3], double hi[3])
{
	int i, e;

	for (i = 0; i < 8; i++)
		for (e = 0; e < 3; e++)
			if (!(i & (1 << e)))
				edge_part(p[i], p[i | (1 << e)], a, slo, shi, lo, hi);
}

/*
 * The part of box o between the planes x[a] = slo and x[a] = shi (slo may
 * be -inf, shi +inf): the bounds of o cut by that slab, computed in
 * double, grown by the box's margin and clipped to the reference bounds
 * [rlo, rhi] it is cut from. False if nothing is left.
 *
 * Why this stays conservative: every point within the margin of the box
 * lies within the margin of the box's part in some slab, so the pieces a
 * box's bounds are cut into still cover all of it, grown as before.
 */
static bool box_slab(const struct obb *o, int a, double slo, double shi,
		     const float rlo[3], const float rhi[3], float olo[3],
		     float ohi[3])
{
	double p[8][3], lo[3] = { INFINITY, INFINITY, INFINITY };
	double hi[3] = { -INFINITY, -INFINITY, -INFINITY };
	float m[3];

	box_corners(o, p);
	obb_margin(o, m);
	slab_part(p, a, slo, shi, lo, hi);
	return piece_close(lo, hi, m, rlo, rhi, olo, ohi);
}

/*
 * box_slab for each spatial bin b0..b1 of axis a over [nlo, nlo + ext]
 * (bin k between plane_at(k) and plane_at(k + 1), the first open below
 * and the last above). ok[k]: bin k got a part, its bounds in plo[k],
 * phi[k].
 */
static void box_bins(const struct obb *o, int a, float nlo, float ext,
		     int b0, int b1, const float rlo[3], const float rhi[3],
		     float plo[][3], float phi[][3], bool ok[])
{
	double p[8][3];
	float m[3];
	int k;

	box_corners(o, p);
	obb_margin(o, m);
	for (k = b0; k <= b1; k++) {
		double lo[3] = { INFINITY, INFINITY, INFINITY };
		double hi[3] = { -INFINITY, -INFINITY, -INFINITY };

		slab_part(p, a, k == b0 ? -(double)INFINITY : plane_at(nlo, ext, k),
			  k == b1 ? (double)INFINITY : plane_at(nlo, ext, k + 1),
			  lo, hi);
		ok[k] = piece_close(lo, hi, m, rlo, rhi, plo[k], phi[k]);
	}
}

/* ======================= Build ======================= */

/*
 * The build splits runs of references (a box, with bounds that may cover
 * only part of it): [b, e) in use, [e, c) free for the copies that
 * spatial splits make. Each split hands the free room on to its two
 * parts in proportion to their sizes.
 */
struct span {
	size_t b, e, c;
};

static void packet_set_lane(struct bvh_packet *pk, int lane,
			    const struct obb *o, int32_t idx)
{
	int k, j;

	for (j = 0; j < 3; j++) {
		/* NOLINTNEXTLINE(clang-analyzer-core.NullDereference): o is a box; bvh_refit has none only when n = 0 */
		pk->c[j][lane] = o->c[j];
		pk->h[j][lane] = o->h[j];
		for (k = 0; k < 3; k++)
			pk->ax[k][j][lane] = o->ax[k][j];
	}
	pk->idx[lane] = idx;
}

static void packet_clear(struct bvh_packet *pk)
{
	int lane;

	memset(pk, 0, sizeof(*pk));
	for (lane = 0; lane < BVH_PK; lane++)
		pk->idx[lane] = -1;
}

static int bin_of(float c, float lo, float scale)
{
	int k = (int)((c - lo) * scale);

	if (k < 0)
		k = 0;
	if (k > BVH_BINS - 1)
		k = BVH_BINS - 1;
	return k;
}

static void ref_copy(struct bvh *b, size_t to, size_t from)
{
	b->rbox[to] = b->rbox[from];
	memcpy(b->rlo[to], b->rlo[from], sizeof(b->rlo[0]));
	memcpy(b->rhi[to], b->rhi[from], sizeof(b->rhi[0]));
}

static void ref_swap(struct bvh *b, size_t i, size_t j)
{
	int32_t t = b->rbox[i];
	float lo[3], hi[3];

	memcpy(lo, b->rlo[i], sizeof(lo));
	memcpy(hi, b->rhi[i], sizeof(hi));
	ref_copy(b, i, j);
	b->rbox[j] = t;
	memcpy(b->rlo[j], lo, sizeof(lo));
	memcpy(b->rhi[j], hi, sizeof(hi));
}

static float ref_centre(const struct bvh *b, size_t i, int a)
{
	return 0.5f * (b->rlo[i][a] + b->rhi[i][a]);
}

/* A split of a span: by reference centres (object) or by a plane (spatial). */
struct split {
	float cost;
	int axis, bin; /* left: bins below `bin` */
	bool spatial;
	float lo, ext; /* the binned interval of the axis */
};

/*
 * The suffix sweep of a binned SAH: rarea[k] and rcnt[k] describe bins
 * k..BINS-1 (their bounds' surface and cnt's sum), for k >= 1; with rlo_k,
 * rhi_k also their bounds.
 */
static void suffix_sweep(float blo[][3], float bhi[][3], const size_t cnt[],
			 float rarea[], size_t rcnt[], float rlo_k[][3], float rhi_k[][3])
{
	float rlo[3], rhi[3];
	size_t n = 0;
	int k;

	bounds_empty(rlo, rhi);
	for (k = BVH_BINS - 1; k > 0; k--) {
		bounds_grow(rlo, rhi, blo[k], bhi[k]);
		n += cnt[k];
		rarea[k] = area(rlo, rhi);
		rcnt[k] = n;
		if (rlo_k) {
			memcpy(rlo_k[k], rlo, sizeof(rlo));
			memcpy(rhi_k[k], rhi, sizeof(rhi));
		}
	}
}

/*
 * The best binned-SAH split of the span's references by their centres
 * over the three axes. *overlap: the surface of the intersection of the
 * two parts' bounds (0 when they do not meet).
 */
static void object_split(const struct bvh *b, const struct span *sp,
			 struct split *best, float *overlap)
{
	float clo[3], chi[3];
	int axis;
	size_t i;

	best->cost = INFINITY;
	best->axis = -1;
	best->spatial = false;
	*overlap = 0;
	bounds_empty(clo, chi);
	for (i = sp->b; i < sp->e; i++) {
		float c[3] = { ref_centre(b, i, 0), ref_centre(b, i, 1),
			       ref_centre(b, i, 2) };

		bounds_grow(clo, chi, c, c);
	}
	for (axis = 0; axis < 3; axis++) {
		float blo[BVH_BINS][3], bhi[BVH_BINS][3];
		float rarea[BVH_BINS], rlo_k[BVH_BINS][3], rhi_k[BVH_BINS][3];
		size_t cnt[BVH_BINS], rcnt[BVH_BINS], lcnt;
		float ext = chi[axis] - clo[axis], scale, llo[3], lhi[3];
		int k;

		if (!(ext > 0))
			continue;
		scale = (float)BVH_BINS / ext;
		for (k = 0; k < BVH_BINS; k++) {
			cnt[k] = 0;
			bounds_empty(blo[k], bhi[k]);
		}
		for (i = sp->b; i < sp->e; i++) {
			k = bin_of(ref_centre(b, i, axis), clo[axis], scale);
			cnt[k]++;
			bounds_grow(blo[k], bhi[k], b->rlo[i], b->rhi[i]);
		}
		suffix_sweep(blo, bhi, cnt, rarea, rcnt, rlo_k, rhi_k);
		bounds_empty(llo, lhi);
		lcnt = 0;
		for (k = 1; k < BVH_BINS; k++) {
			float cost;

			bounds_grow(llo, lhi, blo[k - 1], bhi[k - 1]);
			lcnt += cnt[k - 1];
			if (lcnt == 0 || rcnt[k] == 0)
				continue;
			cost = area(llo, lhi) * (float)lcnt +
			       rarea[k] * (float)rcnt[k];
			if (cost < best->cost) {
				float olo[3], ohi[3];
				int j;

				for (j = 0; j < 3; j++) {
					olo[j] = fmaxf(llo[j], rlo_k[k][j]);
					ohi[j] = fminf(lhi[j], rhi_k[k][j]);
				}
				best->cost = cost;
				best->axis = axis;
				best->bin = k;
				best->lo = clo[axis];
				best->ext = ext;
				*overlap = area(olo, ohi);
			}
		}
	}
}

/*
 * The first and last spatial bins of axis a that reference i reaches,
 * from its bounds (the bins it may be cut into).
 */
static void ref_bins(const struct bvh *b, size_t i, int a, float lo,
		     float scale, int *b0, int *b1)
{
	*b0 = bin_of(b->rlo[i][a], lo, scale);
	*b1 = bin_of(b->rhi[i][a], lo, scale);
}

/*
 * The best binned-SAH split of the span by an axis-aligned plane, the
 * references it crosses cut in two (Stich, Friedrich and Dietrich,
 * "Spatial splits in bounding volume hierarchies", 2009): each reference
 * is cut into the bins it spans, entering the first bin it has a part in
 * and leaving the last. Only splits that leave both sides smaller than
 * the span and fit the span's free room count. Improves *best if cheaper.
 */
static void spatial_split(const struct bvh *b, const struct obb *boxes,
			  const struct span *sp, const float nlo[3],
			  const float nhi[3], struct split *best)
{
	size_t m = sp->e - sp->b, room = sp->c - sp->b, i;
	int axis;

	for (axis = 0; axis < 3; axis++) {
		float blo[BVH_BINS][3], bhi[BVH_BINS][3];
		float rarea[BVH_BINS], llo[3], lhi[3];
		size_t enter[BVH_BINS], leave[BVH_BINS], rcnt[BVH_BINS], lcnt;
		float ext = nhi[axis] - nlo[axis], scale;
		float plo[BVH_BINS][3], phi[BVH_BINS][3];
		bool ok[BVH_BINS];
		int k;

		if (!(ext > 0))
			continue;
		scale = (float)BVH_BINS / ext;
		for (k = 0; k < BVH_BINS; k++) {
			enter[k] = leave[k] = 0;
			bounds_empty(blo[k], bhi[k]);
		}
		for (i = sp->b; i < sp->e; i++) {
			const struct obb *o = &boxes[b->rbox[i]];
			int b0, b1, first = -1, last = -1;

			ref_bins(b, i, axis, nlo[axis], scale, &b0, &b1);
			if (b0 == b1) {
				bounds_grow(blo[b0], bhi[b0], b->rlo[i], b->rhi[i]);
				enter[b0]++;
				leave[b0]++;
				continue;
			}
			box_bins(o, axis, nlo[axis], ext, b0, b1, b->rlo[i],
				 b->rhi[i], plo, phi, ok);
			for (k = b0; k <= b1; k++) {
				if (!ok[k])
					continue;
				bounds_grow(blo[k], bhi[k], plo[k], phi[k]);
				if (first < 0)
					first = k;
				last = k;
			}
			if (first < 0) {
				/* no part left by the rounding: keep it whole */
				first = last = b0;
				bounds_grow(blo[b0], bhi[b0], b->rlo[i], b->rhi[i]);
			}
			enter[first]++;
			leave[last]++;
		}
		suffix_sweep(blo, bhi, leave, rarea, rcnt, NULL, NULL);
		bounds_empty(llo, lhi);
		lcnt = 0;
		for (k = 1; k < BVH_BINS; k++) {
			float cost;

			bounds_grow(llo, lhi, blo[k - 1], bhi[k - 1]);
			lcnt += enter[k - 1];
			if (lcnt == 0 || rcnt[k] == 0 || lcnt >= m ||
			    rcnt[k] >= m || lcnt + rcnt[k] > room)
				continue;
			cost = area(llo, lhi) * (float)lcnt +
			       rarea[k] * (float)rcnt[k];
			cost *= BVH_SPATIAL_FAVOUR;
			if (cost < best->cost) {
				best->cost = cost;
				best->axis = axis;
				best->bin = k;
				best->spatial = true;
				best->lo = nlo[axis];
				best->ext = ext;
			}
		}
	}
}

/*
 * Lays out a split span: nl references from `left` (rows of the scratch
 * at tl) then the span's free room in proportion, then nr from the
 * scratch at tr, and sets the two parts.
 */
static void place_parts(struct bvh *b, const struct span *sp, size_t tl,
			size_t nl, size_t tr, size_t nr, struct span *l,
			struct span *r)
{
	size_t room = sp->c - sp->b - nl - nr;
	size_t gap = (size_t)((double)room * (double)nl / (double)(nl + nr));
	size_t i;

	l->b = sp->b;
	l->e = sp->b + nl;
	l->c = l->e + gap;
	r->b = l->c;
	r->e = r->b + nr;
	r->c = sp->c;
	for (i = 0; i < nl; i++) {
		b->rbox[l->b + i] = b->tbox[tl + i];
		memcpy(b->rlo[l->b + i], b->tlo[tl + i], sizeof(b->rlo[0]));
		memcpy(b->rhi[l->b + i], b->thi[tl + i], sizeof(b->rhi[0]));
	}
	for (i = 0; i < nr; i++) {
		b->rbox[r->b + i] = b->tbox[tr + i];
		memcpy(b->rlo[r->b + i], b->tlo[tr + i], sizeof(b->rlo[0]));
		memcpy(b->rhi[r->b + i], b->thi[tr + i], sizeof(b->rhi[0]));
	}
}

static void scratch_put(struct bvh *b, size_t at, int32_t box,
			const float lo[3], const float hi[3])
{
	b->tbox[at] = box;
	memcpy(b->tlo[at], lo, sizeof(b->tlo[0]));
	memcpy(b->thi[at], hi, sizeof(b->thi[0]));
}

/*
 * Carries out a spatial split. References wholly on one side go there;
 * one the plane crosses is cut in two while the span has room for the
 * copy, else goes whole to the side of its centre. Returns false, with
 * the span untouched, if a side came out empty.
 */
static bool spatial_apply(struct bvh *b, const struct obb *boxes,
			  const struct span *sp, const struct split *s,
			  struct span *l, struct span *r)
{
	size_t room = sp->c - sp->b, base = sp->b, nl = 0, nr = 0, i;
	float scale = (float)BVH_BINS / s->ext;
	double plane = plane_at(s->lo, s->ext, s->bin);
	int a = s->axis;

	/* left parts fill the scratch from base up, right ones from the top */
	for (i = sp->b; i < sp->e; i++) {
		const struct obb *o = &boxes[b->rbox[i]];
		size_t pending = sp->e - i - 1;
		float llo[3], lhi[3], rlo[3], rhi[3];
		bool lok, rok;
		int b0, b1;

		ref_bins(b, i, a, s->lo, scale, &b0, &b1);
		if (b1 < s->bin) {
			scratch_put(b, base + nl++, b->rbox[i], b->rlo[i], b->rhi[i]);
			continue;
		}
		if (b0 >= s->bin) {
			nr++;
			scratch_put(b, base + room - nr, b->rbox[i], b->rlo[i], b->rhi[i]);
			continue;
		}
		lok = box_slab(o, a, -INFINITY, plane, b->rlo[i], b->rhi[i], llo, lhi);
		rok = box_slab(o, a, plane, INFINITY, b->rlo[i], b->rhi[i], rlo, rhi);
		if (lok && rok && nl + nr + 2 + pending > room)
			lok = rok = false; /* no room for a copy: whole, by its centre */
		if (lok && !rok) {
			scratch_put(b, base + nl++, b->rbox[i], llo, lhi);
		} else if (rok && !lok) {
			nr++;
			scratch_put(b, base + room - nr, b->rbox[i], rlo, rhi);
		} else if (lok && rok) {
			scratch_put(b, base + nl++, b->rbox[i], llo, lhi);
			nr++;
			scratch_put(b, base + room - nr, b->rbox[i], rlo, rhi);
		} else if (ref_centre(b, i, a) < (float)plane) {
			scratch_put(b, base + nl++, b->rbox[i], b->rlo[i], b->rhi[i]);
		} else {
			nr++;
			scratch_put(b, base + room - nr, b->rbox[i], b->rlo[i], b->rhi[i]);
		}
	}
	if (nl == 0 || nr == 0 || nl >= sp->e - sp->b || nr >= sp->e - sp->b)
		return false;
	place_parts(b, sp, base, nl, base + room - nr, nr, l, r);
	return true;
}

/* Carries out an object split (or index halves when s->axis < 0). */
static void object_apply(struct bvh *b, const struct span *sp,
			 const struct split *s, struct span *l, struct span *r)
{
	size_t lo = sp->b, hi = sp->e, mid, nl, nr, i;

	if (s->axis >= 0) {
		float scale = (float)BVH_BINS / s->ext;

		while (lo < hi) {
			if (bin_of(ref_centre(b, lo, s->axis), s->lo, scale) <
			    s->bin) {
				lo++;
			} else {
				hi--;
				ref_swap(b, lo, hi);
			}
		}
		mid = lo;
	} else {
		mid = sp->b;
	}
	if (mid == sp->b || mid == sp->e)
		mid = sp->b + (sp->e - sp->b) / 2;
	nl = mid - sp->b;
	nr = sp->e - mid;
	if (sp->c == sp->e) {
		l->b = sp->b;
		l->e = l->c = mid;
		r->b = mid;
		r->e = r->c = sp->e;
		return;
	}
	/* hand on the free room: the scratch holds both parts in order */
	for (i = 0; i < nl + nr; i++)
		scratch_put(b, sp->b + i, b->rbox[sp->b + i], b->rlo[sp->b + i],
			    b->rhi[sp->b + i]);
	place_parts(b, sp, sp->b, nl, sp->b + nl, nr, l, r);
}

/*
 * Splits a span of more than BVH_LEAF_MAX references in two by the
 * cheaper of the best object split and, where the span has free room and
 * the object split's parts overlap, the best spatial split. Falls back to
 * index halves when nothing separates them or the tree got too deep.
 */
static void split_span(struct bvh *b, const struct obb *boxes,
		       const struct span *sp, int depth, struct span *l,
		       struct span *r)
{
	struct split s;
	float overlap = 0, nlo[3], nhi[3];

	s.axis = -1;
	s.spatial = false;
	if (depth < BVH_MAX_DEPTH) {
		object_split(b, sp, &s, &overlap);
		if (sp->c > sp->e && overlap > BVH_SPLIT_ALPHA * b->root_area) {
			range_bounds(b, sp->b, sp->e, nlo, nhi);
			spatial_split(b, boxes, sp, nlo, nhi, &s);
		}
	}
	if (s.axis >= 0 && s.spatial && spatial_apply(b, boxes, sp, &s, l, r))
		return;
	if (s.spatial) {
		/* a side came out empty: fall back to the centres */
		object_split(b, sp, &s, &overlap);
	}
	object_apply(b, sp, &s, l, r);
}

static int32_t make_leaf(struct bvh *b, const struct span *sp,
			 const struct obb *boxes)
{
	size_t p = b->npackets++;
	struct bvh_packet *pk = &b->packets[p];
	size_t i;

	packet_clear(pk);
	for (i = sp->b; i < sp->e; i++) {
		int32_t bi = b->rbox[i];

		packet_set_lane(pk, (int)(i - sp->b), &boxes[bi], bi);
	}
	return BVH_LEAF(p);
}

/* Builds the subtree over a span; returns its reference. */
static int32_t build_span(struct bvh *b, const struct span *sp, int depth,
			  const struct obb *boxes)
{
	struct span part[BVH_W];
	float lo[BVH_W][3], hi[BVH_W][3];
	int nr = 1, j;
	size_t ni;

	if (sp->e - sp->b <= BVH_LEAF_MAX)
		return make_leaf(b, sp, boxes);
	part[0] = *sp;
	range_bounds(b, sp->b, sp->e, lo[0], hi[0]);
	while (nr < BVH_W) {
		int pick = -1;
		float best = -1;
		struct span whole;

		/* split the child with the largest surface */
		for (j = 0; j < nr; j++) {
			float a = area(lo[j], hi[j]);

			if (part[j].e - part[j].b > BVH_LEAF_MAX && a > best) {
				best = a;
				pick = j;
			}
		}
		if (pick < 0)
			break;
		whole = part[pick];
		split_span(b, boxes, &whole, depth, &part[pick], &part[nr]);
		range_bounds(b, part[pick].b, part[pick].e, lo[pick], hi[pick]);
		range_bounds(b, part[nr].b, part[nr].e, lo[nr], hi[nr]);
		nr++;
	}
	ni = b->nnodes++;
	for (j = 0; j < BVH_W; j++) {
		struct bvh_node *nd = &b->nodes[ni];
		int32_t ref = BVH_EMPTY;
		int a;

		if (j < nr)
			ref = build_span(b, &part[j], depth + 1, boxes);
		else
			bounds_empty(lo[j], hi[j]);
		for (a = 0; a < 3; a++) {
			nd->b[a][j] = lo[j][a];
			nd->b[3 + a][j] = hi[j][a];
		}
		nd->child[j] = ref;
	}
	return (int32_t)ni;
}

static int prepare(struct bvh *b, const struct obb *boxes)
{
	float lo[3], hi[3];
	size_t i;

	for (i = 0; i < b->n; i++) {
		if (!obb_finite(&boxes[i]))
			return ENG_EINVAL;
		box_bounds(&boxes[i], b->plo[i], b->phi[i]);
		b->rbox[i] = (int32_t)i;
		memcpy(b->rlo[i], b->plo[i], sizeof(b->rlo[0]));
		memcpy(b->rhi[i], b->phi[i], sizeof(b->rhi[0]));
	}
	range_bounds(b, 0, b->n, lo, hi);
	b->root_area = area(lo, hi);
	return 0;
}

static int build_into(struct bvh *b, const struct obb *boxes)
{
	struct span all;
	int rc;

	b->nnodes = 0;
	b->npackets = 0;
	b->root = BVH_EMPTY;
	if (b->n == 0)
		return 0;
	rc = prepare(b, boxes);
	if (rc)
		return rc;
	all.b = 0;
	all.e = b->n;
	all.c = b->cap;
	b->root = build_span(b, &all, 0, boxes);
	b->prefetch = b->nnodes * sizeof(struct bvh_node) +
		      b->npackets * sizeof(struct bvh_packet) > BVH_PREFETCH_BYTES;
	return 0;
}

static int best_isa(void);

/* The copies spatial splits may make of n boxes (see BVH_COPIES_MAX). */
static size_t bvh_copies(size_t n)
{
	size_t half = n / 2;

	if (n <= BVH_SPATIAL_MIN)
		return 0;
	if (n <= BVH_COPIES_MAX)
		return n;
	return half > BVH_COPIES_MAX ? half : BVH_COPIES_MAX;
}

static void *alloc_aligned(size_t count, size_t size)
{
	size_t bytes = count * size;

	if (bytes == 0)
		bytes = 64;
	bytes = (bytes + 63) & ~(size_t)63;
	return aligned_alloc(64, bytes);
}

int bvh_build(const struct obb *boxes, size_t n, struct bvh **out)
{
	struct bvh *b = NULL;
	int rc = 0;

	if (!out || (!boxes && n > 0) || n > INT32_MAX / 4)
		return ENG_EINVAL;
	b = calloc(1, sizeof(*b));
	if (!b)
		return ENG_ENOMEM;
	b->n = n;
	b->isa = best_isa();
	/*
	 * references are the boxes and their copies; leaves and inner nodes at
	 * most one per reference (>= 1 reference per leaf)
	 */
	b->cap = n ? n + bvh_copies(n) : 1;
	b->nodes = alloc_aligned(b->cap, sizeof(struct bvh_node));
	b->packets = alloc_aligned(b->cap, sizeof(struct bvh_packet));
	b->plo = malloc((n ? n : 1) * sizeof(*b->plo));
	b->phi = malloc((n ? n : 1) * sizeof(*b->phi));
	b->rbox = malloc(b->cap * sizeof(*b->rbox));
	b->tbox = malloc(b->cap * sizeof(*b->tbox));
	b->rlo = malloc(b->cap * sizeof(*b->rlo));
	b->rhi = malloc(b->cap * sizeof(*b->rhi));
	b->tlo = malloc(b->cap * sizeof(*b->tlo));
	b->thi = malloc(b->cap * sizeof(*b->thi));
	if (!b->nodes || !b->packets || !b->plo || !b->phi || !b->rbox ||
	    !b->tbox || !b->rlo || !b->rhi || !b->tlo || !b->thi) {
		rc = ENG_ENOMEM;
		goto out;
	}
	rc = build_into(b, boxes);
out:
	if (rc) {
		bvh_free(b);
		b = NULL;
	}
	if (!rc)
		*out = b;
	return rc;
}

void bvh_free(struct bvh *b)
{
	if (!b)
		return;
	free(b->nodes);
	free(b->packets);
	free(b->plo);
	free(b->phi);
	free(b->rbox);
	free(b->tbox);
	free(b->rlo);
	free(b->rhi);
	free(b->tlo);
	free(b->thi);
	free(b);
}

size_t bvh_count(const struct bvh *b)
{
	return b ? b->n : 0;
}

int bvh_rebuild(struct bvh *b, const struct obb *boxes)
{
	int rc;

	if (!b || (!boxes && b->n > 0))
		return ENG_EINVAL;
	rc = build_into(b, boxes);
	if (rc)
		b->root = BVH_EMPTY;
	return rc;
}

/* Bounds of everything under a reference, from already refitted data. */
static void ref_bounds(const struct bvh *b, int32_t ref, float lo[3],
		       float hi[3])
{
	int j, a;

	bounds_empty(lo, hi);
	if (ref == BVH_EMPTY)
		return;
	if (ref < 0) {
		const struct bvh_packet *pk = &b->packets[BVH_PACKET(ref)];

		for (j = 0; j < BVH_PK; j++) {
			int32_t bi = pk->idx[j];

			if (bi >= 0)
				bounds_grow(lo, hi, b->plo[bi], b->phi[bi]);
		}
		return;
	}
	for (j = 0; j < BVH_W; j++) {
		const struct bvh_node *nd = &b->nodes[ref];
		float clo[3], chi[3];

		for (a = 0; a < 3; a++) {
			clo[a] = nd->b[a][j];
			chi[a] = nd->b[3 + a][j];
		}
		if (nd->child[j] != BVH_EMPTY)
			bounds_grow(lo, hi, clo, chi);
	}
}

int bvh_refit(struct bvh *b, const struct obb *boxes)
{
	size_t i;
	int j, a;

	if (!b || (!boxes && b->n > 0))
		return ENG_EINVAL;
	if (b->root == BVH_EMPTY)
		return b->n ? ENG_EINVAL : 0;
	for (i = 0; i < b->n; i++) {
		if (!obb_finite(&boxes[i]))
			return ENG_EINVAL;
		box_bounds(&boxes[i], b->plo[i], b->phi[i]);
	}
	for (i = 0; i < b->npackets; i++) {
		struct bvh_packet *pk = &b->packets[i];

		for (j = 0; j < BVH_PK; j++)
			if (pk->idx[j] >= 0)
				packet_set_lane(pk, j, &boxes[pk->idx[j]],
						pk->idx[j]);
	}
	/* children come after their parent, so walk backwards */
	for (i = b->nnodes; i-- > 0;) {
		struct bvh_node *nd = &b->nodes[i];

		for (j = 0; j < BVH_W; j++) {
			float lo[3], hi[3];

			if (nd->child[j] == BVH_EMPTY)
				continue;
			ref_bounds(b, nd->child[j], lo, hi);
			for (a = 0; a < 3; a++) {
				nd->b[a][j] = lo[a];
				nd->b[3 + a][j] = hi[a];
			}
		}
	}
	return 0;
}

#if defined(__GNUC__)
#define BVH_INLINE static inline __attribute__((always_inline))
#else
#define BVH_INLINE static inline
#endif

/* ======================= Queries ======================= */

/* Lowest set bit of a non-zero child mask. */
BVH_INLINE int lowbit(unsigned m)
{
#if defined(__GNUC__)
	return __builtin_ctz(m);
#else
	int j = 0;

	while (!(m & 1u)) {
		m >>= 1;
		j++;
	}
	return j;
#endif
}

/*
 * Per-ray constants for the node test. The inverse direction is clamped
 * to +-1e12 so that a component of 0 never makes 0 * inf; the node
 * bounds' margin keeps the test conservative (see box_bounds).
 */
struct ray_pre {
	float o[3];
	float d[3];
	float inv[3];
	int near_row[3]; /* row of b[][] holding the near plane per axis */
};

BVH_INLINE void ray_prepare(const struct ray *r, struct ray_pre *p)
{
	int a;

	/* once per ray: unrolled, so that the rows stay in registers */
#pragma GCC unroll 3
	for (a = 0; a < 3; a++) {
		float d = r->d[a];

		if (fabsf(d) < 1e-12f)
			d = signbit(d) ? -1e-12f : 1e-12f;
		p->o[a] = r->o[a];
		p->d[a] = r->d[a];
		p->inv[a] = 1.0f / d;
		/* random directions: a branch on the sign mispredicts half the time */
		p->near_row[a] = a + 3 * (p->inv[a] < 0.0f);
	}
}

#if BVH_SSE

struct ray_sse {
	__m128 o[3], d[3], inv[3];
	int nr[3], fr[3];
};

BVH_INLINE void ray_sse_init(const struct ray_pre *p, struct ray_sse *s)
{
	int a;

#pragma GCC unroll 3
	for (a = 0; a < 3; a++) {
		s->o[a] = _mm_set1_ps(p->o[a]);
		s->d[a] = _mm_set1_ps(p->d[a]);
		s->inv[a] = _mm_set1_ps(p->inv[a]);
		s->nr[a] = p->near_row[a];
		s->fr[a] = 3 + 2 * a - p->near_row[a]; /* the other row of the axis */
	}
}

/*
 * Slab test of the ray against the children, four at a time; bit j of
 * the result = child j hit, its entry distance in tn_out[j].
 */
BVH_INLINE int node_test(const struct bvh_node *nd, const struct ray_sse *s,
			 __m128 tmax, float tn_out[BVH_W])
{
	int g, mask = 0;

	for (g = 0; g < BVH_W; g += 4) {
		__m128 tnx = _mm_mul_ps(_mm_sub_ps(
			_mm_load_ps(&nd->b[s->nr[0]][g]), s->o[0]), s->inv[0]);
		__m128 tny = _mm_mul_ps(_mm_sub_ps(
			_mm_load_ps(&nd->b[s->nr[1]][g]), s->o[1]), s->inv[1]);
		__m128 tnz = _mm_mul_ps(_mm_sub_ps(
			_mm_load_ps(&nd->b[s->nr[2]][g]), s->o[2]), s->inv[2]);
		__m128 tfx = _mm_mul_ps(_mm_sub_ps(
			_mm_load_ps(&nd->b[s->fr[0]][g]), s->o[0]), s->inv[0]);
		__m128 tfy = _mm_mul_ps(_mm_sub_ps(
			_mm_load_ps(&nd->b[s->fr[1]][g]), s->o[1]), s->inv[1]);
		__m128 tfz = _mm_mul_ps(_mm_sub_ps(
			_mm_load_ps(&nd->b[s->fr[2]][g]), s->o[2]), s->inv[2]);
		__m128 tn = _mm_max_ps(_mm_max_ps(tnx, tny),
				       _mm_max_ps(tnz, _mm_setzero_ps()));
		__m128 tf = _mm_min_ps(_mm_min_ps(tfx, tfy),
				       _mm_min_ps(tfz, tmax));

		_mm_storeu_ps(&tn_out[g], tn);
		mask |= _mm_movemask_ps(_mm_cmple_ps(tn, tf)) << g;
	}
	return mask;
}

/*
 * ray_obb on the four boxes of a packet with the same floating-point
 * operations in the same order, so that hits and distances are bitwise
 * those of ray_obb. Returns the lane mask of hits, entry distances in t0.
 */
BVH_INLINE int packet_test4(const struct bvh_packet *pk, int g,
			    const struct ray_sse *s, __m128 tmax, float t0_out[4])
{
	const __m128 tiny = _mm_set1_ps(1e-12f);
	const __m128 absmask = _mm_castsi128_ps(_mm_set1_epi32(0x7fffffff));
	const __m128 pinf = _mm_set1_ps(INFINITY);
	__m128 rx = _mm_sub_ps(s->o[0], _mm_load_ps(&pk->c[0][g]));
	__m128 ry = _mm_sub_ps(s->o[1], _mm_load_ps(&pk->c[1][g]));
	__m128 rz = _mm_sub_ps(s->o[2], _mm_load_ps(&pk->c[2][g]));
	__m128 t0 = _mm_setzero_ps(), t1 = tmax;
	__m128 ok = _mm_castsi128_ps(_mm_cmpgt_epi32(
		_mm_load_si128((const __m128i *)(const void *)&pk->idx[g]),
		_mm_set1_epi32(-1)));
	int k;

	for (k = 0; k < 3; k++) {
		__m128 a0 = _mm_load_ps(&pk->ax[k][0][g]);
		__m128 a1 = _mm_load_ps(&pk->ax[k][1][g]);
		__m128 a2 = _mm_load_ps(&pk->ax[k][2][g]);
		__m128 h = _mm_load_ps(&pk->h[k][g]);
		__m128 nh = _mm_sub_ps(_mm_setzero_ps(), h);
		__m128 o = _mm_add_ps(_mm_add_ps(_mm_mul_ps(rx, a0),
						 _mm_mul_ps(ry, a1)),
				      _mm_mul_ps(rz, a2));
		__m128 d = _mm_add_ps(_mm_add_ps(_mm_mul_ps(s->d[0], a0),
						 _mm_mul_ps(s->d[1], a1)),
				      _mm_mul_ps(s->d[2], a2));
		__m128 par = _mm_cmplt_ps(_mm_and_ps(d, absmask), tiny);
		__m128 inside = _mm_and_ps(_mm_cmpge_ps(o, nh),
					   _mm_cmple_ps(o, h));
		__m128 inv = _mm_div_ps(_mm_set1_ps(1.0f), d);
		__m128 ta = _mm_mul_ps(_mm_sub_ps(nh, o), inv);
		__m128 tb = _mm_mul_ps(_mm_sub_ps(h, o), inv);
		/*
		 * ray_obb: if (a > b) swap. minps/maxps return their second
		 * operand unless the first is strictly smaller/greater, so
		 * these give exactly that, for equal values and NaN too.
		 */
		__m128 lo = _mm_min_ps(tb, ta);
		__m128 hi = _mm_max_ps(ta, tb);

		/*
		 * A parallel axis needs the origin inside the slab and must
		 * leave [t0, t1] alone. Its lo needs no fix: inside, both
		 * (-h - o) * inv and (h - o) * inv cannot be > 0, and outside
		 * the lane is rejected. Its hi can be 0 * inf = NaN or 0.
		 */
		hi = _mm_or_ps(_mm_and_ps(par, pinf), _mm_andnot_ps(par, hi));
		ok = _mm_and_ps(ok, _mm_or_ps(_mm_andnot_ps(par, ok), inside));
		/* ray_obb: if (a > t0) t0 = a; if (b < t1) t1 = b; */
		t0 = _mm_max_ps(lo, t0);
		t1 = _mm_min_ps(hi, t1);
	}
	_mm_storeu_ps(t0_out, t0);
	return _mm_movemask_ps(_mm_and_ps(ok, _mm_cmple_ps(t0, t1)));
}

/* Both groups of a packet; the second only when it holds a box. */
BVH_INLINE int packet_test(const struct bvh_packet *pk, const struct ray_sse *s,
			   __m128 tmax, float t0_out[BVH_PK])
{
	int mask = packet_test4(pk, 0, s, tmax, t0_out);

#if BVH_PK == 8
	if (pk->idx[4] >= 0)
		mask |= packet_test4(pk, 4, s, tmax, t0_out + 4) << 4;
#endif
	return mask;
}

#else /* scalar path */

struct ray_sse {
	struct ray r;
	const struct ray_pre *p;
};

BVH_INLINE void ray_sse_init(const struct ray_pre *p, struct ray_sse *s)
{
	int a;

	for (a = 0; a < 3; a++) {
		s->r.o[a] = p->o[a];
		s->r.d[a] = p->d[a];
	}
	s->p = p;
}

BVH_INLINE int node_test(const struct bvh_node *nd, const struct ray_sse *s,
			 float tmax, float tn_out[BVH_W])
{
	int j, a, mask = 0;

	for (j = 0; j < BVH_W; j++) {
		float tn = 0, tf = tmax;

		for (a = 0; a < 3; a++) {
			int nr = s->p->near_row[a], fr = nr >= 3 ? a : 3 + a;
			float n = (nd->b[nr][j] - s->p->o[a]) * s->p->inv[a];
			float f = (nd->b[fr][j] - s->p->o[a]) * s->p->inv[a];

			tn = n > tn ? n : tn;
			tf = f < tf ? f : tf;
		}
		tn_out[j] = tn;
		if (tn <= tf)
			mask |= 1 << j;
	}
	return mask;
}

BVH_INLINE int packet_test(const struct bvh_packet *pk, const struct ray_sse *s,
		       float tmax, float t0_out[BVH_PK])
{
	int j, k, a, mask = 0;

	for (j = 0; j < BVH_PK; j++) {
		struct obb o;

		if (pk->idx[j] < 0)
			continue;
		for (a = 0; a < 3; a++) {
			o.c[a] = pk->c[a][j];
			o.h[a] = pk->h[a][j];
			for (k = 0; k < 3; k++)
				o.ax[k][a] = pk->ax[k][a][j];
		}
		if (ray_obb(&s->r, &o, tmax, &t0_out[j]))
			mask |= 1 << j;
	}
	return mask;
}

#endif /* BVH_SSE */

#if BVH_SSE
#define TMAX_ARG(x) _mm_set1_ps(x)
#else
#define TMAX_ARG(x) (x)
#endif

/* ======================= Wider kernels (chosen at run time) ======================= */

/*
 * The kernels: SSE2 (the x86-64 baseline, always there), AVX2 and
 * AVX-512, compiled for their instruction sets with target attributes
 * only (no -m flag for the file), picked by bvh_build() from what the
 * CPU reports. Each one runs the same traversal (cast_body() and
 * occluded_body(), inlined into a wrapper compiled for that set) with
 * the same floating-point operations in the same order, so all three
 * answer bitwise alike.
 */
enum { ISA_SSE2 = BVH_ISA_SSE2, ISA_AVX2 = BVH_ISA_AVX2, ISA_AVX512 = BVH_ISA_AVX512 };

#if BVH_SSE && defined(__GNUC__)
#define BVH_X86 1
#include <immintrin.h>
#define BVH_TGT_AVX2 __attribute__((target("avx2")))
#define BVH_TGT_AVX512 __attribute__((target("avx2,avx512f,avx512vl,avx512dq,avx512bw")))

struct ray_avx {
	__m256 o[3], inv[3];
};

BVH_TGT_AVX2 static inline void ray_avx_init(const struct ray_pre *p,
					     struct ray_avx *a)
{
	int k;

	for (k = 0; k < 3; k++) {
		a->o[k] = _mm256_set1_ps(p->o[k]);
		a->inv[k] = _mm256_set1_ps(p->inv[k]);
	}
}

/* node_test() on all 8 children in one pass of 256-bit operations. */
BVH_TGT_AVX2 static inline int node_test_avx2(const struct bvh_node *nd,
					      const struct ray_sse *s,
					      const struct ray_avx *a, float tmax,
					      float tn_out[BVH_W])
{
	__m256 tnx = _mm256_mul_ps(_mm256_sub_ps(
		_mm256_load_ps(nd->b[s->nr[0]]), a->o[0]), a->inv[0]);
	__m256 tny = _mm256_mul_ps(_mm256_sub_ps(
		_mm256_load_ps(nd->b[s->nr[1]]), a->o[1]), a->inv[1]);
	__m256 tnz = _mm256_mul_ps(_mm256_sub_ps(
		_mm256_load_ps(nd->b[s->nr[2]]), a->o[2]), a->inv[2]);
	__m256 tfx = _mm256_mul_ps(_mm256_sub_ps(
		_mm256_load_ps(nd->b[s->fr[0]]), a->o[0]), a->inv[0]);
	__m256 tfy = _mm256_mul_ps(_mm256_sub_ps(
		_mm256_load_ps(nd->b[s->fr[1]]), a->o[1]), a->inv[1]);
	__m256 tfz = _mm256_mul_ps(_mm256_sub_ps(
		_mm256_load_ps(nd->b[s->fr[2]]), a->o[2]), a->inv[2]);
	__m256 tn = _mm256_max_ps(_mm256_max_ps(tnx, tny),
				  _mm256_max_ps(tnz, _mm256_setzero_ps()));
	__m256 tf = _mm256_min_ps(_mm256_min_ps(tfx, tfy),
				  _mm256_min_ps(tfz, _mm256_set1_ps(tmax)));

	_mm256_storeu_ps(tn_out, tn);
	return _mm256_movemask_ps(_mm256_cmp_ps(tn, tf, _CMP_LE_OQ));
}

#if BVH_PK == 8
/* packet_test4() on all 8 lanes at once: the same operations, 256 bits wide. */
BVH_TGT_AVX2 static inline int packet_test_avx2(const struct bvh_packet *pk,
						const struct ray_pre *p,
						float tmax_f, float t0_out[BVH_PK])
{
	const __m256 tiny = _mm256_set1_ps(1e-12f);
	const __m256 absmask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
	const __m256 pinf = _mm256_set1_ps(INFINITY);
	__m256 ox = _mm256_set1_ps(p->o[0]), oy = _mm256_set1_ps(p->o[1]);
	__m256 oz = _mm256_set1_ps(p->o[2]);
	__m256 dx = _mm256_set1_ps(p->d[0]), dy = _mm256_set1_ps(p->d[1]);
	__m256 dz = _mm256_set1_ps(p->d[2]);
	__m256 rx = _mm256_sub_ps(ox, _mm256_load_ps(pk->c[0]));
	__m256 ry = _mm256_sub_ps(oy, _mm256_load_ps(pk->c[1]));
	__m256 rz = _mm256_sub_ps(oz, _mm256_load_ps(pk->c[2]));
	__m256 t0 = _mm256_setzero_ps(), t1 = _mm256_set1_ps(tmax_f);
	__m256 ok = _mm256_castsi256_ps(_mm256_cmpgt_epi32(
		_mm256_load_si256((const __m256i *)(const void *)pk->idx),
		_mm256_set1_epi32(-1)));
	int k;

	for (k = 0; k < 3; k++) {
		__m256 a0 = _mm256_load_ps(pk->ax[k][0]);
		__m256 a1 = _mm256_load_ps(pk->ax[k][1]);
		__m256 a2 = _mm256_load_ps(pk->ax[k][2]);
		__m256 h = _mm256_load_ps(pk->h[k]);
		__m256 nh = _mm256_sub_ps(_mm256_setzero_ps(), h);
		__m256 o = _mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(rx, a0),
						       _mm256_mul_ps(ry, a1)),
					 _mm256_mul_ps(rz, a2));
		__m256 d = _mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(dx, a0),
						       _mm256_mul_ps(dy, a1)),
					 _mm256_mul_ps(dz, a2));
		__m256 par = _mm256_cmp_ps(_mm256_and_ps(d, absmask), tiny, _CMP_LT_OQ);
		__m256 inside = _mm256_and_ps(_mm256_cmp_ps(o, nh, _CMP_GE_OQ),
					      _mm256_cmp_ps(o, h, _CMP_LE_OQ));
		__m256 inv = _mm256_div_ps(_mm256_set1_ps(1.0f), d);
		__m256 ta = _mm256_mul_ps(_mm256_sub_ps(nh, o), inv);
		__m256 tb = _mm256_mul_ps(_mm256_sub_ps(h, o), inv);
		__m256 lo = _mm256_min_ps(tb, ta);
		__m256 hi = _mm256_max_ps(ta, tb);

		hi = _mm256_blendv_ps(hi, pinf, par);
		ok = _mm256_and_ps(ok, _mm256_or_ps(_mm256_andnot_ps(par, ok), inside));
		t0 = _mm256_max_ps(lo, t0);
		t1 = _mm256_min_ps(hi, t1);
	}
	_mm256_storeu_ps(t0_out, t0);
	return _mm256_movemask_ps(_mm256_and_ps(ok, _mm256_cmp_ps(t0, t1, _CMP_LE_OQ)));
}

/*
 * The AVX-512 forms: the same 256-bit arithmetic, but comparisons go to
 * mask registers, so the lane logic costs no vector operations.
 */
BVH_TGT_AVX512 static inline int node_test_avx512(const struct bvh_node *nd,
						  const struct ray_sse *s,
						  const struct ray_avx *a, float tmax,
						  float tn_out[BVH_W])
{
	__m256 tnx = _mm256_mul_ps(_mm256_sub_ps(
		_mm256_load_ps(nd->b[s->nr[0]]), a->o[0]), a->inv[0]);
	__m256 tny = _mm256_mul_ps(_mm256_sub_ps(
		_mm256_load_ps(nd->b[s->nr[1]]), a->o[1]), a->inv[1]);
	__m256 tnz = _mm256_mul_ps(_mm256_sub_ps(
		_mm256_load_ps(nd->b[s->nr[2]]), a->o[2]), a->inv[2]);
	__m256 tfx = _mm256_mul_ps(_mm256_sub_ps(
		_mm256_load_ps(nd->b[s->fr[0]]), a->o[0]), a->inv[0]);
	__m256 tfy = _mm256_mul_ps(_mm256_sub_ps(
		_mm256_load_ps(nd->b[s->fr[1]]), a->o[1]), a->inv[1]);
	__m256 tfz = _mm256_mul_ps(_mm256_sub_ps(
		_mm256_load_ps(nd->b[s->fr[2]]), a->o[2]), a->inv[2]);
	__m256 tn = _mm256_max_ps(_mm256_max_ps(tnx, tny),
				  _mm256_max_ps(tnz, _mm256_setzero_ps()));
	__m256 tf = _mm256_min_ps(_mm256_min_ps(tfx, tfy),
				  _mm256_min_ps(tfz, _mm256_set1_ps(tmax)));

	_mm256_storeu_ps(tn_out, tn);
	return (int)_mm256_cmp_ps_mask(tn, tf, _CMP_LE_OQ);
}

BVH_TGT_AVX512 static inline int packet_test_avx512(const struct bvh_packet *pk,
						    const struct ray_pre *p,
						    float tmax_f, float t0_out[BVH_PK])
{
	const __m256 tiny = _mm256_set1_ps(1e-12f);
	const __m256 absmask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
	const __m256 pinf = _mm256_set1_ps(INFINITY);
	__m256 ox = _mm256_set1_ps(p->o[0]), oy = _mm256_set1_ps(p->o[1]);
	__m256 oz = _mm256_set1_ps(p->o[2]);
	__m256 dx = _mm256_set1_ps(p->d[0]), dy = _mm256_set1_ps(p->d[1]);
	__m256 dz = _mm256_set1_ps(p->d[2]);
	__m256 rx = _mm256_sub_ps(ox, _mm256_load_ps(pk->c[0]));
	__m256 ry = _mm256_sub_ps(oy, _mm256_load_ps(pk->c[1]));
	__m256 rz = _mm256_sub_ps(oz, _mm256_load_ps(pk->c[2]));
	__m256 t0 = _mm256_setzero_ps(), t1 = _mm256_set1_ps(tmax_f);
	__mmask8 ok = _mm256_cmpgt_epi32_mask(
		_mm256_load_si256((const __m256i *)(const void *)pk->idx),
		_mm256_set1_epi32(-1));
	int k;

	for (k = 0; k < 3; k++) {
		__m256 a0 = _mm256_load_ps(pk->ax[k][0]);
		__m256 a1 = _mm256_load_ps(pk->ax[k][1]);
		__m256 a2 = _mm256_load_ps(pk->ax[k][2]);
		__m256 h = _mm256_load_ps(pk->h[k]);
		__m256 nh = _mm256_sub_ps(_mm256_setzero_ps(), h);
		__m256 o = _mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(rx, a0),
						       _mm256_mul_ps(ry, a1)),
					 _mm256_mul_ps(rz, a2));
		__m256 d = _mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(dx, a0),
						       _mm256_mul_ps(dy, a1)),
					 _mm256_mul_ps(dz, a2));
		__mmask8 par = _mm256_cmp_ps_mask(_mm256_and_ps(d, absmask), tiny,
						  _CMP_LT_OQ);
		__mmask8 inside = _mm256_cmp_ps_mask(o, nh, _CMP_GE_OQ) &
				  _mm256_cmp_ps_mask(o, h, _CMP_LE_OQ);
		__m256 inv = _mm256_div_ps(_mm256_set1_ps(1.0f), d);
		__m256 ta = _mm256_mul_ps(_mm256_sub_ps(nh, o), inv);
		__m256 tb = _mm256_mul_ps(_mm256_sub_ps(h, o), inv);
		__m256 lo = _mm256_min_ps(tb, ta);
		__m256 hi = _mm256_mask_mov_ps(_mm256_max_ps(ta, tb), par, pinf);

		ok = (__mmask8)(ok & (~par | inside));
		t0 = _mm256_max_ps(lo, t0);
		t1 = _mm256_min_ps(hi, t1);
	}
	_mm256_storeu_ps(t0_out, t0);
	return (int)(ok & _mm256_cmp_ps_mask(t0, t1, _CMP_LE_OQ));
}
#endif
#else
#define BVH_X86 0
#endif

/* The children of nd the ray enters within tmax, entry distances in tn. */
BVH_INLINE int node_hits(const struct bvh_node *nd, const struct ray_sse *s,
			 const void *wide, float tmax, float tn[BVH_W],
			 const int isa)
{
#if BVH_X86
	if (isa == ISA_AVX512)
		return node_test_avx512(nd, s, (const struct ray_avx *)wide, tmax, tn);
	if (isa == ISA_AVX2)
		return node_test_avx2(nd, s, (const struct ray_avx *)wide, tmax, tn);
#endif
	(void)wide;
	(void)isa;
	return node_test(nd, s, TMAX_ARG(tmax), tn);
}

/* The lanes of pk the ray hits within tmax, entry distances in t0. */
BVH_INLINE int packet_hits(const struct bvh_packet *pk, const struct ray_sse *s,
			   const struct ray_pre *p, float tmax, float t0[BVH_PK],
			   const int isa)
{
#if BVH_X86 && BVH_PK == 8
	if (isa == ISA_AVX512)
		return packet_test_avx512(pk, p, tmax, t0);
	if (isa == ISA_AVX2)
		return packet_test_avx2(pk, p, tmax, t0);
#endif
	(void)p;
	(void)isa;
	return packet_test(pk, s, TMAX_ARG(tmax), t0);
}

/*
 * Sort key of a hit child: its entry distance (>= 0, so the bits order
 * like the float) above its slot number.
 */
BVH_INLINE uint64_t child_key(float tn, int j)
{
	uint32_t bits;

	memcpy(&bits, &tn, sizeof(bits));
	return ((uint64_t)bits << 32) | (uint64_t)j;
}

/* Orders two sort keys, without a branch (a cmov each). */
BVH_INLINE void cswap(uint64_t *a, uint64_t *b)
{
	uint64_t x = *a, y = *b, lt = x < y;

	*a = lt ? x : y;
	*b = lt ? y : x;
}

/*
 * Asks for the memory of the children the ray enters, all of them at
 * once: in a scene whose packets outgrow the caches the misses then
 * overlap, where the traversal would meet them one by one (the nearest
 * child is tested next, the others after it).
 */
BVH_INLINE void prefetch_children(const struct bvh *b, const struct bvh_node *nd,
				  unsigned mask)
{
	while (mask) {
		int32_t cr = nd->child[lowbit(mask)];
		const char *q;
		size_t l, size;

		mask &= mask - 1;
		if (cr >= 0) {
			q = (const char *)&b->nodes[cr];
			size = sizeof(struct bvh_node);
		} else {
			q = (const char *)&b->packets[BVH_PACKET(cr)];
			size = sizeof(struct bvh_packet);
		}
#if defined(__GNUC__)
		for (l = 0; l < size; l += 64)
			__builtin_prefetch(q + l);
#else
		(void)q;
		(void)l;
		(void)size;
#endif
	}
}

BVH_INLINE bool cast_body(const struct bvh *b, const struct ray *r, float tmax,
			  struct bvh_hit *hit, const int isa)
{
	struct ray_pre pre;
	struct ray_sse s;
#if BVH_X86
	struct ray_avx wide;
#else
	char wide;
#endif
	int32_t stack[BVH_STACK];
	float stack_t[BVH_STACK];
	int sp = 0;
	int32_t ref, best_box = -1;
	float best_t = tmax;

	if (!b || b->root == BVH_EMPTY || !(tmax >= 0))
		goto out;
	ray_prepare(r, &pre);
	ray_sse_init(&pre, &s);
#if BVH_X86
	if (isa >= ISA_AVX2)
		ray_avx_init(&pre, &wide);
#endif
	ref = b->root;
	for (;;) {
		while (ref >= 0) {
			const struct bvh_node *nd = &b->nodes[ref];
			float tn[BVH_W];
			uint64_t key[BVH_W];
			int mask = node_hits(nd, &s, &wide, best_t, tn, isa);
			unsigned m1, m2, m3;
			int c = 0, i;

			if (!mask)
				goto pop;
			if (b->prefetch)
				prefetch_children(b, nd, (unsigned)mask);
			/* m1, m2, m3: the hit mask without its lowest one, two, three bits */
			m1 = (unsigned)mask & ((unsigned)mask - 1);
			if (!m1) {
				ref = nd->child[lowbit((unsigned)mask)];
				continue;
			}
			m2 = m1 & (m1 - 1);
			if (!m2) {
				/* two: push the farther (or the later on a tie) */
				int j0 = lowbit((unsigned)mask);
				int j1 = lowbit(m1);
				/* which is nearer is a coin toss: select without a branch */
				int swap = -(int)(tn[j1] < tn[j0]);
				int jn = j0 ^ ((j0 ^ j1) & swap), jf = j0 ^ j1 ^ jn;

				stack[sp] = nd->child[jf];
				stack_t[sp++] = tn[jf];
				ref = nd->child[jn];
				continue;
			}
			m3 = m2 & (m2 - 1);
			if (!(m3 & (m3 - 1))) {
				/*
				 * Three or four: a sorting network of compare-and-swaps
				 * (no branch on the order, which is a toss-up), then the
				 * farther ones pushed, a missing fourth not counted.
				 */
				int j0 = lowbit((unsigned)mask), j1 = lowbit(m1), j2 = lowbit(m2);
				int j3 = lowbit(m3 | 0x80u);
				uint64_t k0 = child_key(tn[j0], j0), k1 = child_key(tn[j1], j1);
				uint64_t k2 = child_key(tn[j2], j2);
				uint64_t k3 = child_key(tn[j3], j3) | -(uint64_t)(m3 == 0);

				cswap(&k0, &k1);
				cswap(&k2, &k3);
				cswap(&k0, &k2);
				cswap(&k1, &k3);
				cswap(&k1, &k2);
				stack[sp] = nd->child[k3 & (BVH_W - 1)];
				stack_t[sp] = tn[k3 & (BVH_W - 1)];
				sp += m3 != 0;
				stack[sp] = nd->child[k2 & (BVH_W - 1)];
				stack_t[sp++] = tn[k2 & (BVH_W - 1)];
				stack[sp] = nd->child[k1 & (BVH_W - 1)];
				stack_t[sp++] = tn[k1 & (BVH_W - 1)];
				ref = nd->child[k0 & (BVH_W - 1)];
				continue;
			}
			/* five or more: sort by entry, go to the nearest */
			while (mask) {
				int j = lowbit((unsigned)mask);
				uint64_t k = child_key(tn[j], j);

				mask &= mask - 1;
				for (i = c; i > 0 && key[i - 1] > k; i--)
					key[i] = key[i - 1];
				key[i] = k;
				c++;
			}
			for (i = c - 1; i > 0; i--) {
				int j = (int)(key[i] & (BVH_W - 1));

				stack[sp] = nd->child[j];
				stack_t[sp++] = tn[j];
			}
			ref = nd->child[key[0] & (BVH_W - 1)];
		}
		if (ref != BVH_EMPTY) {
			const struct bvh_packet *pk =
				&b->packets[BVH_PACKET(ref)];
			float t0[BVH_PK];
			int mask = packet_hits(pk, &s, &pre, best_t, t0, isa);

			while (mask) {
				int j = lowbit((unsigned)mask);
				int32_t bi = pk->idx[j];

				mask &= mask - 1;
				if (t0[j] < best_t ||
				    (t0[j] == best_t &&
				     (best_box < 0 || bi < best_box))) {
					best_t = t0[j];
					best_box = bi;
				}
			}
		}
pop:
		do {
			if (sp == 0)
				goto out;
			sp--;
		} while (stack_t[sp] > best_t);
		ref = stack[sp];
	}
out:
	if (hit) {
		hit->box = best_box;
		hit->t = best_box >= 0 ? best_t : 0.0f;
	}
	return best_box >= 0;
}

BVH_INLINE bool occluded_body(const struct bvh *b, const struct ray *r,
			      float tmax, int32_t ignore, const int isa)
{
	struct ray_pre pre;
	struct ray_sse s;
#if BVH_X86
	struct ray_avx wide;
#else
	char wide;
#endif
	int32_t stack[BVH_STACK];
	int sp = 0;
	int32_t ref;

	if (!b || b->root == BVH_EMPTY || !(tmax >= 0))
		return false;
	ray_prepare(r, &pre);
	ray_sse_init(&pre, &s);
#if BVH_X86
	if (isa >= ISA_AVX2)
		ray_avx_init(&pre, &wide);
#endif
	ref = b->root;
	for (;;) {
		if (ref >= 0) {
			const struct bvh_node *nd = &b->nodes[ref];
			float tn[BVH_W];
			int mask = node_hits(nd, &s, &wide, tmax, tn, isa);

			if (b->prefetch)
				prefetch_children(b, nd, (unsigned)mask);
			while (mask) {
				stack[sp++] = nd->child[lowbit((unsigned)mask)];
				mask &= mask - 1;
			}
		} else if (ref != BVH_EMPTY) {
			const struct bvh_packet *pk =
				&b->packets[BVH_PACKET(ref)];
			float t0[BVH_PK];
			int mask = packet_hits(pk, &s, &pre, tmax, t0, isa);
			int j;

			for (j = 0; j < BVH_PK; j++)
				if ((mask & (1 << j)) && pk->idx[j] != ignore)
					return true;
		}
		if (sp == 0)
			return false;
		ref = stack[--sp];
	}
}

/* One wrapper per instruction set; flatten inlines the kernels into it. */
#if defined(__GNUC__)
#define BVH_FLAT __attribute__((flatten))
#else
#define BVH_FLAT
#endif

BVH_FLAT static bool cast_sse2(const struct bvh *b, const struct ray *r,
			       float tmax, struct bvh_hit *hit)
{
	return cast_body(b, r, tmax, hit, ISA_SSE2);
}

BVH_FLAT static bool occluded_sse2(const struct bvh *b, const struct ray *r,
				   float tmax, int32_t ignore)
{
	return occluded_body(b, r, tmax, ignore, ISA_SSE2);
}

BVH_FLAT static size_t batch_sse2(const struct bvh *b, const struct ray *rays,
				  long long lo, long long hi, float tmax,
				  struct bvh_hit *hits)
{
	size_t nhit = 0;
	long long i;

	for (i = lo; i < hi; i++)
		nhit += cast_body(b, &rays[i], tmax, &hits[i], ISA_SSE2);
	return nhit;
}

#if BVH_X86
BVH_TGT_AVX2 BVH_FLAT static bool cast_avx2(const struct bvh *b,
					    const struct ray *r, float tmax,
					    struct bvh_hit *hit)
{
	return cast_body(b, r, tmax, hit, ISA_AVX2);
}

BVH_TGT_AVX2 BVH_FLAT static bool occluded_avx2(const struct bvh *b,
						const struct ray *r, float tmax,
						int32_t ignore)
{
	return occluded_body(b, r, tmax, ignore, ISA_AVX2);
}

BVH_TGT_AVX2 BVH_FLAT static size_t batch_avx2(const struct bvh *b,
					       const struct ray *rays,
					       long long lo, long long hi,
					       float tmax, struct bvh_hit *hits)
{
	size_t nhit = 0;
	long long i;

	for (i = lo; i < hi; i++)
		nhit += cast_body(b, &rays[i], tmax, &hits[i], ISA_AVX2);
	return nhit;
}

BVH_TGT_AVX512 BVH_FLAT static bool cast_avx512(const struct bvh *b,
						const struct ray *r, float tmax,
						struct bvh_hit *hit)
{
	return cast_body(b, r, tmax, hit, ISA_AVX512);
}

BVH_TGT_AVX512 BVH_FLAT static bool occluded_avx512(const struct bvh *b,
						    const struct ray *r, float tmax,
						    int32_t ignore)
{
	return occluded_body(b, r, tmax, ignore, ISA_AVX512);
}

BVH_TGT_AVX512 BVH_FLAT static size_t batch_avx512(const struct bvh *b,
						   const struct ray *rays,
						   long long lo, long long hi,
						   float tmax, struct bvh_hit *hits)
{
	size_t nhit = 0;
	long long i;

	for (i = lo; i < hi; i++)
		nhit += cast_body(b, &rays[i], tmax, &hits[i], ISA_AVX512);
	return nhit;
}
#endif

/* The best kernel this CPU (and the OS) runs. */
static int best_isa(void)
{
#if BVH_X86
	if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
	    __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512bw"))
		return ISA_AVX512;
	if (__builtin_cpu_supports("avx2"))
		return ISA_AVX2;
#endif
	return ISA_SSE2;
}

static bool isa_supported(int isa)
{
	return isa == ISA_SSE2 || (isa <= best_isa() && isa >= ISA_SSE2);
}

int bvh__set_isa(struct bvh *b, int isa)
{
	if (!b || !isa_supported(isa))
		return ENG_EINVAL;
	b->isa = isa;
	return 0;
}

size_t bvh__refs(const struct bvh *b)
{
	size_t i, r = 0;
	int j;

	if (!b || b->root == BVH_EMPTY)
		return 0;
	for (i = 0; i < b->npackets; i++)
		for (j = 0; j < BVH_PK; j++)
			r += b->packets[i].idx[j] >= 0;
	return r;
}

int bvh__isa(const struct bvh *b)
{
	return b ? b->isa : ISA_SSE2;
}

bool bvh_cast(const struct bvh *b, const struct ray *r, float tmax,
	      struct bvh_hit *hit)
{
#if BVH_X86
	if (b && b->isa == ISA_AVX512)
		return cast_avx512(b, r, tmax, hit);
	if (b && b->isa == ISA_AVX2)
		return cast_avx2(b, r, tmax, hit);
#endif
	return cast_sse2(b, r, tmax, hit);
}

bool bvh_occluded(const struct bvh *b, const struct ray *r, float tmax,
		  int32_t ignore)
{
#if BVH_X86
	if (b && b->isa == ISA_AVX512)
		return occluded_avx512(b, r, tmax, ignore);
	if (b && b->isa == ISA_AVX2)
		return occluded_avx2(b, r, tmax, ignore);
#endif
	return occluded_sse2(b, r, tmax, ignore);
}

/* Rays [lo, hi) with the bvh's kernel. */
static size_t batch_range(const struct bvh *b, const struct ray *rays,
			  long long lo, long long hi, float tmax,
			  struct bvh_hit *hits)
{
#if BVH_X86
	if (b && b->isa == ISA_AVX512)
		return batch_avx512(b, rays, lo, hi, tmax, hits);
	if (b && b->isa == ISA_AVX2)
		return batch_avx2(b, rays, lo, hi, tmax, hits);
#endif
	return batch_sse2(b, rays, lo, hi, tmax, hits);
}

#define BVH_CHUNK 256 /* rays per OpenMP work item */

size_t bvh_cast_batch(const struct bvh *b, const struct ray *rays, size_t n,
		      float tmax, struct bvh_hit *hits, int threads)
{
	long long c, nn = (long long)n, nchunk = (nn + BVH_CHUNK - 1) / BVH_CHUNK;
	size_t nhit = 0;

	/*
	 * One thread, or one chunk: on the calling thread, without a team (a
	 * region nested in the caller's would still make one of one thread,
	 * a few microseconds each call)
	 */
	if (threads == 1 || nchunk <= 1)
		return nn ? batch_range(b, rays, 0, nn, tmax, hits) : 0;
	if (threads <= 0) {
#pragma omp parallel for schedule(dynamic, 1) reduction(+ : nhit)
		for (c = 0; c < nchunk; c++)
			nhit += batch_range(b, rays, c * BVH_CHUNK,
					    c * BVH_CHUNK + BVH_CHUNK < nn ?
					    c * BVH_CHUNK + BVH_CHUNK : nn, tmax, hits);
	} else {
#pragma omp parallel for schedule(dynamic, 1) reduction(+ : nhit) \
	num_threads(threads)
		for (c = 0; c < nchunk; c++)
			nhit += batch_range(b, rays, c * BVH_CHUNK,
					    c * BVH_CHUNK + BVH_CHUNK < nn ?
					    c * BVH_CHUNK + BVH_CHUNK : nn, tmax, hits);
	}
	return nhit;
}

