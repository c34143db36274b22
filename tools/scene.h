/* SPDX-License-Identifier: MIT */
/*
 * The scene cache of a tool context: every object's world box at one
 * time, with ray casters over them that the visibility, gaze and clip
 * tools share. Made once per context (its TOOL_SLOT_SCENE slot) and moved
 * in time with scene_at().
 *
 * The boxes are kept in three groups:
 * - solids: static boxes in a BVH built once;
 * - enclosures: static boxes that hold the camera at some time or the
 *   centre of another object (a room, a shelf around its books), tested
 *   one by one because the rules below skip them often;
 * - dynamic boxes, in a second BVH rebuilt (no allocation) at each new
 *   time.
 *
 * Casting rules (the same for every query): a box that contains the
 * ray's origin never stops the ray (the camera may stand inside a
 * room-sized box; it cannot look at the room it is in), and for an
 * occlusion test a box that contains the target point does not hide it
 * (a shelf does not hide the book it holds). These rules are exact at any
 * time: when a solid or dynamic box holds the origin or the target point
 * the query falls back to a loop over that group.
 *
 * Threads: a scene belongs to its tool context, so to one thread at a
 * time; queries between two scene_at() calls do not modify it.
 */
#ifndef SCENE_H
#define SCENE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "obb.h"
#include "recording.h"

struct tool_ctx;

/* Opaque scene cache. */
struct scene;

/* The timeline step the scene samples camera positions at (10 Hz). */
#define SCENE_STEP_NS 100000000LL

/*
 * The scene of the context's recording, made on first use and kept in
 * the TOOL_SLOT_SCENE slot (the context owns it). Its time starts at the
 * recording start. Returns 0 and sets *out, or ENG_ENOMEM / ENG_EINVAL (a
 * box with non-finite values, err_msg() names the object).
 */
int scene_get(struct tool_ctx *ctx, struct scene **out);

/*
 * Makes a scene over rec directly (for tests and benchmarks); the caller
 * frees it with scene_free(). Same failures as scene_get().
 */
int scene_new(const struct recording *rec, struct scene **out);

/* Frees s. scene_free(NULL) is a no-op. */
void scene_free(struct scene *s);

/*
 * Places every dynamic box at time t (static boxes never move). Cheap
 * when t is the current time. Returns 0, or ENG_EINVAL when a box is not
 * finite (the scene then keeps the previous positions). Any t is
 * accepted: objects rest at their first or last pose outside their
 * samples.
 */
int scene_at(struct scene *s, int64_t t);

/* The current time of s. Can't fail. */
int64_t scene_time(const struct scene *s);

/* Number of objects (rec->nobjects). Can't fail. */
size_t scene_count(const struct scene *s);

/* The world box of object i at the current time. Can't fail. */
const struct obb *scene_box(const struct scene *s, size_t i);

/*
 * The world box object i has at time t, bitwise the one scene_at(s, t)
 * would give it, without moving the scene (one object's pose, not a
 * refit). Can't fail.
 */
void scene_box_at(const struct scene *s, size_t i, int64_t t, struct obb *out);

/* Every box at the current time, indexed like rec->objects. Can't fail. */
const struct obb *scene_boxes(const struct scene *s);

/* True when object i is an enclosure (see the header comment). */
bool scene_is_enclosure(const struct scene *s, size_t i);

/*
 * First box hit by r (unit direction) at an entry distance in [0, tmax],
 * skipping boxes that contain r->o. Ties go to the lowest object index.
 * Stores the object index (-1 on a miss) and the distance (0 on a miss)
 * and returns true on a hit. obj and t may be NULL. Can't fail.
 */
bool scene_cast(const struct scene *s, const struct ray *r, float tmax,
		long *obj, float *t);

/*
 * Occlusion of the point `p` (normally object `target`'s box centre) seen
 * from r->o along r (r->d points at p, tmax = |p - r->o|): true when some
 * box other than `target` (-1 for none), not containing r->o and not
 * containing p, is entered at a distance in [0, tmax]. When `by` is not
 * NULL it receives the nearest such box (this costs a full cast; -1 when
 * not occluded). Can't fail.
 */
bool scene_occluded(const struct scene *s, const struct ray *r, float tmax,
		    long target, const vec3 p, long *by);

#endif /* SCENE_H */
