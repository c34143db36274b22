/* SPDX-License-Identifier: MIT */
/* Edit distance of short byte strings (strdist.h). */
#include "strdist.h"

#include <stdint.h>

#include "banned.h"

/*
 * Myers' bit-parallel edit distance, pattern p (1..64 bytes) against text
 * t: bit i of the vertical deltas Pv/Mv says whether D[i+1][j] - D[i][j]
 * is +1/-1; the score follows the last row. H. Hyyro, "A bit-vector
 * algorithm for computing Levenshtein and Damerau edit distances" (2003).
 */
static size_t lev_bits(const unsigned char *p, size_t m, const unsigned char *t, size_t n)
{
	uint64_t peq[256] = { 0 }, pv = ~UINT64_C(0), mv = 0, last = UINT64_C(1) << (m - 1);
	size_t i, score = m;

	for (i = 0; i < m; i++)
		peq[p[i]] |= UINT64_C(1) << i;
	for (i = 0; i < n; i++) {
		uint64_t eq = peq[t[i]], xv = eq | mv;
		uint64_t xh = (((eq & pv) + pv) ^ pv) | eq;
		uint64_t ph = mv | ~(xh | pv), mh = pv & xh;

		if (ph & last)
			score++;
		else if (mh & last)
			score--;
		ph = (ph << 1) | 1;
		mh <<= 1;
		pv = mh | ~(xv | ph);
		mv = ph & xv;
	}
	return score;
}

/* The two-row dynamic programme, b the shorter (at most STRDIST_MAX bytes). */
static size_t lev_rows(const unsigned char *a, size_t la, const unsigned char *b, size_t lb)
{
	size_t row0[STRDIST_MAX + 1], row1[STRDIST_MAX + 1], *prev = row0, *cur = row1, *tmp;
	size_t i, j;

	for (j = 0; j <= lb; j++)
		prev[j] = j;
	for (i = 1; i <= la; i++) {
		cur[0] = i;
		for (j = 1; j <= lb; j++) {
			size_t sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
			size_t del = prev[j] + 1, ins = cur[j - 1] + 1;
			size_t m = sub < del ? sub : del;

			cur[j] = m < ins ? m : ins;
		}
		tmp = prev;
		prev = cur;
		cur = tmp;
	}
	return prev[lb];
}

size_t strdist_lev(const char *a, size_t la, const char *b, size_t lb)
{
	const unsigned char *ua = (const unsigned char *)a, *ub = (const unsigned char *)b;

	if (la > STRDIST_MAX)
		la = STRDIST_MAX;
	if (lb > STRDIST_MAX)
		lb = STRDIST_MAX;
	if (la < lb) {
		const unsigned char *t = ua;
		size_t n = la;

		ua = ub;
		la = lb;
		ub = t;
		lb = n;
	}
	/* now lb <= la: b is the pattern */
	if (!lb)
		return la;
	if (lb <= 64)
		return lev_bits(ub, lb, ua, la);
	return lev_rows(ua, la, ub, lb);
}
