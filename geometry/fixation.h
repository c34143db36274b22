/* SPDX-License-Identifier: MIT */
/*
 * Fixations in a gaze stream by I-VT (velocity threshold): consecutive
 * samples whose angular velocity stays below a threshold form candidate
 * fixations; close candidates with nearly the same direction are merged
 * and short ones dropped. One streaming pass, no allocation.
 */
#ifndef FIXATION_H
#define FIXATION_H

#include <stddef.h>
#include <stdint.h>

#include "bvh.h"

/* Detector settings. fixation_params_init() sets the defaults. */
struct fixation_params {
	double max_velocity_dps; /* I-VT threshold, degrees/second (30) */
	int64_t merge_gap_ns;    /* merge when the gap is below this (75 ms) */
	double merge_angle_deg;  /* ... and mean directions differ less (1) */
	int64_t min_duration_ns; /* drop fixations shorter than this (100 ms) */
	const struct bvh *bvh;   /* if not NULL: object hit by the mean ray */
	float hit_range_m;       /* range of that ray (6 m) */
};

/*
 * The gaze samples, read in place through byte strides so that an array
 * of any struct holding a time, an origin and a direction can be passed
 * without copying: sample i has time *(t_ns + i * t_stride bytes),
 * direction d + i * d_stride bytes (3 floats, unit length), origin
 * o + i * o_stride bytes (3 floats), or the world origin when o is NULL.
 * Times must be strictly increasing.
 */
struct fixation_input {
	const int64_t *t_ns;
	size_t t_stride;
	const float *d;
	size_t d_stride;
	const float *o;
	size_t o_stride;
	size_t n;
};

/* One fixation. Sample indices are inclusive. */
struct fixation {
	int64_t t_start_ns;  /* time of the first sample */
	int64_t t_end_ns;    /* time of the last sample */
	int64_t duration_ns; /* t_end_ns - t_start_ns */
	size_t i_start;      /* index of the first sample */
	size_t i_end;        /* index of the last sample */
	size_t nsamples;     /* samples averaged (merge gaps excluded) */
	float dir[3];        /* mean direction of those samples, unit */
	float origin[3];     /* mean origin of those samples */
	int32_t box;         /* box hit by the mean ray, -1 = none/no bvh */
	float hit_t;         /* distance to that hit, m (0 without hit) */
};

/* Sets the defaults: 30 deg/s, 75 ms, 1 deg, 100 ms, no bvh, 6 m. */
void fixation_params_init(struct fixation_params *p);

/*
 * Finds the fixations of in (I-VT):
 * - the angular velocity of the pair (i-1, i) is the angle between their
 *   directions over t_i - t_{i-1}; a pair is slow when it is below
 *   max_velocity_dps (tested as cos(angle) > cos(threshold * dt), no
 *   acos per sample);
 * - a maximal run of consecutive slow pairs, samples a..b, is a
 *   candidate from t_a to t_b;
 * - a candidate starting less than merge_gap_ns after the previous one
 *   ended, whose mean direction is within merge_angle_deg of the
 *   previous one's, is merged into it (repeatedly); the samples of the
 *   gap between them are not averaged;
 * - fixations shorter than min_duration_ns are then dropped.
 * The mean direction is the normalised sum of the directions. With
 * p->bvh set, the mean ray (mean origin, mean direction) is cast with
 * bvh_cast() up to p->hit_range_m.
 *
 * Writes up to cap fixations to out (caller memory; n / 2 + 1 entries
 * always suffice) and their number to *nout. p may be NULL for the
 * defaults. Allocates nothing.
 *
 * Returns 0; ENG_EINVAL for NULL arguments, bad parameters (negative or
 * non-finite) or times that do not strictly increase (*nout then holds
 * the fixations found before the offending sample); ENG_ETOOBIG when
 * more than cap fixations exist (the first cap are written, *nout = cap).
 */
int fixation_detect(const struct fixation_input *in,
		    const struct fixation_params *p, struct fixation *out,
		    size_t cap, size_t *nout);

#endif /* FIXATION_H */
