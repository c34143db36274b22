/* SPDX-License-Identifier: MIT */
/* Edit distance of short byte strings. */
#ifndef PROXIMA_STRDIST_H
#define PROXIMA_STRDIST_H

#include <stddef.h>

/* The longest string strdist_lev() reads whole; longer ones are cut there. */
#define STRDIST_MAX 512

/*
 * The Levenshtein distance (insertions, deletions and substitutions, each
 * of cost 1) of a[0..la) and b[0..lb), bytes compared as they are. When
 * the shorter string has at most 64 bytes, Myers' bit-parallel algorithm
 * (in Hyyro's form for edit distance) computes it in one 64-bit word per
 * byte of the longer; otherwise the two-row dynamic programme does. Each
 * string is cut at STRDIST_MAX bytes. Can't fail.
 */
size_t strdist_lev(const char *a, size_t la, const char *b, size_t lb);

#endif
