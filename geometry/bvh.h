/* SPDX-License-Identifier: MIT */
/*
 * Ray caster over a set of oriented boxes: an 8-wide bounding volume
 * hierarchy (binned SAH with spatial splits, which cut a box's bounds
 * where a plane crosses it, so that one box may sit in several leaves)
 * whose leaves hold up to eight boxes stored SoA and tested exactly with
 * the ray_obb slab test.
 * Answers are identical to a brute-force loop over ray_obb: the nearest
 * entry distance, bit for bit, ties broken by the lowest box index. The
 * query kernels (SSE2, AVX2, AVX-512) are chosen at run time from what
 * the CPU reports and all give the same answers; the build needs no
 * -march flag.
 */
#ifndef BVH_H
#define BVH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "obb.h"

/*
 * A built hierarchy. Opaque: created by bvh_build(), released by
 * bvh_free(). A built bvh is read-only during queries, so any number of
 * threads may query it at once; bvh_refit() and bvh_rebuild() need
 * exclusive access.
 */
struct bvh;

/* One query answer. */
struct bvh_hit {
	int32_t box; /* index into the boxes given to bvh_build, -1 = no hit */
	float t;     /* entry distance along the ray, m (0 when box == -1) */
};

/*
 * Builds a hierarchy over boxes[0..n-1] (n may be 0). The boxes are
 * copied; the caller keeps ownership of `boxes`. All memory the bvh will
 * ever use (nodes, leaf packets, build scratch) is allocated here, once,
 * sized for the worst case of n boxes, so queries, bvh_refit() and
 * bvh_rebuild() allocate nothing.
 *
 * Returns 0 and sets *out, or ENG_EINVAL (NULL out, boxes NULL with n > 0,
 * n above INT32_MAX / 4, or a box with a non-finite centre, axis or
 * half-extent), or ENG_ENOMEM. *out is set only on success.
 */
int bvh_build(const struct obb *boxes, size_t n, struct bvh **out);

/* Releases b and everything it owns. bvh_free(NULL) is a no-op. */
void bvh_free(struct bvh *b);

/* The number of boxes b was built over. This function can't fail. */
size_t bvh_count(const struct bvh *b);

/*
 * The boxes moved (same count, same indices): copies the new boxes and
 * recomputes every node's bounds bottom-up, keeping the tree topology.
 * Cheap (linear, no allocation); a box that spatial splits cut counts
 * whole in the bounds of each leaf holding it from then on, and query
 * speed degrades if boxes move far from where they were at build time,
 * in which case bvh_rebuild() is better. Returns 0, or ENG_EINVAL on a non-finite box (b is then left
 * in an unspecified but safe state: rebuild or refit with valid boxes).
 */
int bvh_refit(struct bvh *b, const struct obb *boxes);

/*
 * Rebuilds the whole hierarchy for new positions of the same number of
 * boxes, into the memory allocated at build. Returns 0, or ENG_EINVAL on
 * a non-finite box (b then answers every query with no hit until a
 * successful refit or rebuild).
 */
int bvh_rebuild(struct bvh *b, const struct obb *boxes);

/*
 * First hit of r against the boxes with entry distance in [0, tmax]
 * (ray_obb semantics: a ray starting inside a box hits at t = 0, touching
 * a face or an edge counts, a ray parallel to a face hits only within the
 * slab). r->d must be a unit vector for t to be metres. Among boxes hit
 * at the same distance the lowest index wins, so the answer equals that
 * of a loop over ray_obb. Stores the answer in *hit and returns true on a
 * hit; on a miss sets hit->box = -1, hit->t = 0 and returns false. hit
 * may be NULL. Allocates nothing; safe to call from many threads.
 */
bool bvh_cast(const struct bvh *b, const struct ray *r, float tmax,
	      struct bvh_hit *hit);

/*
 * Occlusion query: true if some box other than `ignore` is hit by r at a
 * distance in [0, tmax] (pass ignore = -1 to consider every box). The
 * visibility test casts from the camera towards the target's centre with
 * tmax = that distance and ignore = the target. Stops at the first such
 * box found. Allocates nothing; safe to call from many threads.
 */
bool bvh_occluded(const struct bvh *b, const struct ray *r, float tmax,
		  int32_t ignore);

/*
 * bvh_cast() for rays[0..n-1] into hits[0..n-1] with one tmax for all,
 * spread over `threads` OpenMP threads (threads <= 0: the OpenMP
 * default). Results do not depend on the thread count. Returns the
 * number of rays that hit something. Can't fail.
 */
size_t bvh_cast_batch(const struct bvh *b, const struct ray *rays, size_t n,
		      float tmax, struct bvh_hit *hits, int threads);

/*
 * Internal, for tests and benchmarks: the query kernels. bvh_build()
 * picks the widest one the CPU runs; bvh__set_isa() forces another
 * (returns 0, or ENG_EINVAL when the CPU cannot run it) and bvh__isa()
 * tells which one is in use. All give bitwise the same answers.
 */
enum bvh_isa { BVH_ISA_SSE2 = 0, BVH_ISA_AVX2 = 1, BVH_ISA_AVX512 = 2 };
int bvh__set_isa(struct bvh *b, int isa);
int bvh__isa(const struct bvh *b);

/*
 * Internal, for tests and benchmarks: the box references in b's leaves,
 * which spatial splits make more than the boxes (at most two per box).
 */
size_t bvh__refs(const struct bvh *b);

#endif /* BVH_H */
