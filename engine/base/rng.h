/* SPDX-License-Identifier: MIT */
/*
 * splitmix64, the one small seedable generator of the project (Vigna's
 * public-domain constants): every seeded shuffle, jitter and choice draws
 * from it, so a seed means the same sequence everywhere. Header-only and
 * stateless apart from the caller's 64-bit state; reentrant.
 */
#ifndef RNG_H
#define RNG_H

#include <stdint.h>

/* splitmix64's finaliser: a well-mixed 64-bit function of x. Can't fail. */
static inline uint64_t rng_mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* The next value of the generator whose state is *s (advanced). Can't fail. */
static inline uint64_t rng_next64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Uniform in [0, 1) with 53 bits. Can't fail. */
static inline double rng_unit(uint64_t *s)
{
	return (double)(rng_next64(s) >> 11) * (1.0 / 9007199254740992.0);
}

/* Uniform in [0, n) without modulo bias; 0 when n is 0. Can't fail. */
static inline uint64_t rng_below(uint64_t *s, uint64_t n)
{
	uint64_t lim, x;

	if (n == 0)
		return 0;
	lim = UINT64_MAX - UINT64_MAX % n;
	do
		x = rng_next64(s);
	while (x >= lim);
	return x % n;
}

#endif /* RNG_H */
