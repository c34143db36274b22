/* SPDX-License-Identifier: MIT */
/*
 * Gaze against the scene: the object each gaze ray hits, and the
 * fixations of the whole gaze stream (I-VT with the docs/design.md settings:
 * 30 deg/s, merge gaps < 75 ms and < 1 deg, drop < 100 ms), each with the
 * object its mean ray hits. Shared by cast_gaze and the gaze-target clip
 * check. A gaze ray hits the first box it enters within GAZE_RANGE_M,
 * boxes holding its origin skipped (scene_cast); the boxes are placed at
 * the sample's time, and for a fixation at its start.
 */
#ifndef GAZE_H
#define GAZE_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "fixation.h"
#include "recording.h"
#include "scene.h"

struct tool_ctx;

/* Range of gaze rays, m. */
#define GAZE_RANGE_M 10.0f

/* One fixation. */
struct gaze_fixation {
	struct fixation fx; /* detector output; i_start/i_end index rec->gaze */
};

/* The object a fixation's mean ray hits: -1 for none, hit_m 0 then. */
struct gaze_fixation_hit {
	long object;
	float hit_m;
};

/* The states of a fixation's memo: not cast, being stored, stored. */
enum { GAZE_HIT_UNKNOWN, GAZE_HIT_STORING, GAZE_HIT_KNOWN };

/* A fixation's hit once cast, and whether it is (gaze_fixation_object). */
struct gaze_fixation_memo {
	struct gaze_fixation_hit hit;
	_Atomic unsigned char state;
};

/*
 * The fixations of a recording, in time order. Each one's object is cast
 * when first asked for (gaze_fixation_object): a lazy list reads the
 * fixations of the spans it visits, a few of a long recording's.
 */
struct gaze_fixations {
	struct gaze_fixation *v;
	size_t n;
	struct gaze_fixation_memo *memo; /* by fixation */
};

/*
 * The fixations of the context's recording, detected on the first call:
 * once per recording for the contexts that share a store (tool_shared,
 * which owns them), else owned by the context (TOOL_SLOT_GAZE). Samples
 * that repeat the previous timestamp are skipped. Returns 0 or ENG_ENOMEM.
 */
int gaze_fixations_get(struct tool_ctx *ctx, const struct gaze_fixations **out);

/*
 * The object that fixation i's mean ray hits, with the boxes placed at the
 * fixation's start, cast on the first call and remembered (any thread may
 * ask; two that ask at once both cast, and one stores). Scene s is moved
 * to that time only when this call casts: the caller must not rely on
 * where s is left. Returns 0 or a scene error.
 */
int gaze_fixation_object(struct scene *s, const struct gaze_fixations *f, size_t i,
			 struct gaze_fixation_hit *out);

/*
 * The object hit by gaze sample g, with the scene moved to g->t_ns.
 * Stores the distance in *t (0 on a miss; t may be NULL). Returns the
 * object index or -1.
 */
long gaze_hit(struct scene *s, const struct rec_gaze *g, float *t);

/*
 * Index of the gaze sample nearest to t within tol_ns, or SIZE_MAX when
 * none is that close. Can't fail.
 */
size_t gaze_sample_near(const struct recording *rec, int64_t t, int64_t tol_ns);

/* ======================= cast_gaze ======================= */

struct gaze_cast_args {
	int64_t t0, t1;  /* the gaze samples with time in [t0, t1] */
	size_t step;     /* keep every step-th sample in `samples` (>= 1) */
};

struct gaze_cast_sample {
	int64_t t_ns;
	long object;      /* hit, -1 for none */
	float distance_m; /* to the hit (0 without one) */
};

struct gaze_cast_count {
	long object;
	size_t samples;   /* samples of [t0, t1] that hit it */
};

/* Arrays owned (gaze_cast_release); fixations owned by the context. */
struct gaze_cast_result {
	int64_t t0, t1;
	struct gaze_cast_sample *samples; /* every step-th sample */
	size_t nsamples;
	size_t ntotal, nhits;             /* samples in the range, and those that hit */
	struct gaze_cast_count *objects;  /* objects hit, most samples first */
	size_t nobjects;
	const struct gaze_fixations *fixations; /* of the whole recording */
};

/* The typed entry of cast_gaze: 0, ENG_EINVAL (t1 < t0), ENG_ENOMEM, a scene error. */
int gaze_cast(struct tool_ctx *ctx, const struct gaze_cast_args *args,
	      struct gaze_cast_result *out);

/* Frees r's arrays. Can't fail. */
void gaze_cast_release(struct gaze_cast_result *r);

/*
 * Writes the tool's JSON (at most `limit` samples, objects and fixations
 * overlapping [t0, t1]) into obj. 0 or ENG_ENOMEM.
 */
int gaze_cast_write(struct tool_ctx *ctx, const struct gaze_cast_result *r, size_t limit,
		    cJSON *obj);

#endif /* GAZE_H */
