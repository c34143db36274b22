/* SPDX-License-Identifier: MIT */
/*
 * I-VT fixations: constructed 1 kHz gaze with known fixations, the
 * velocity threshold itself, errors, the real Aria MPS gaze sample, and
 * bitwise agreement with the reference implementation (the detector as
 * it was before it was sped up) on synthetic streams of every kind.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bvh.h"
#include "errcode.h"
#include "fixation.h"
#include "pose.h"
#include "rng.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define DEG (M_PI / 180.0)
#define MS 1000000LL
#define T0 5000000000LL /* time of sample 0, ns */

/* Laid out like the recording model's gaze sample. */
struct gaze {
	int64_t t_ns;
	float o[3];
	float d[3];
	float depth_m;
};

static void set_dir(struct gaze *g, double yaw, double pitch)
{
	double x = tan(yaw), y = tan(pitch), n = sqrt(x * x + y * y + 1);

	g->d[0] = (float)(x / n);
	g->d[1] = (float)(y / n);
	g->d[2] = (float)(1 / n);
}

static struct fixation_input view(const struct gaze *g, size_t n)
{
	struct fixation_input in;

	in.t_ns = &g[0].t_ns;
	in.t_stride = sizeof(*g);
	in.d = g[0].d;
	in.d_stride = sizeof(*g);
	in.o = g[0].o;
	in.o_stride = sizeof(*g);
	in.n = n;
	return in;
}

/* Angle in degrees between a and the direction (yaw, pitch), by chord. */
static double angle_deg(const float *a, double yaw, double pitch)
{
	double x = tan(yaw), y = tan(pitch), n = sqrt(x * x + y * y + 1);
	double a0 = (double)a[0], a1 = (double)a[1], a2 = (double)a[2];
	double na = sqrt(a0 * a0 + a1 * a1 + a2 * a2);
	double ex = a0 / na - x / n, ey = a1 / na - y / n;
	double ez = a2 / na - 1 / n;

	return 2 * asin(0.5 * sqrt(ex * ex + ey * ey + ez * ez)) / DEG;
}

/* ======================= Constructed gaze ======================= */

/*
 * Sample i at T0 + i ms. Fixations hold a direction with a wobble of
 * +-0.004 deg (0.008 deg between samples, under the 0.03 deg that
 * 30 deg/s allows in 1 ms); saccade and spike samples jump 5 degrees or
 * more from their neighbours, so no pair inside them is slow.
 */
#define NS 2200

struct seg {
	int first, last; /* samples */
	double yaw, pitch; /* degrees; yaw NAN = saccade */
};

static const struct seg script[] = {
	{ 0, 199, 0, 0 },        /* A */
	{ 200, 229, NAN, 0 },    /* saccade */
	{ 230, 529, 10, 5 },     /* B */
	{ 530, 531, NAN, 0 },    /* 2 ms spike: gap < 75 ms */
	{ 532, 800, 10.5, 5 },   /* B', 0.5 deg from B: merged into B */
	{ 801, 820, NAN, 0 },
	{ 821, 880, -10, 0 },    /* C, 59 ms: dropped */
	{ 881, 900, NAN, 0 },
	{ 901, 1200, 20, -5 },   /* D */
	{ 1201, 1202, NAN, 0 },  /* spike, but E is 2 deg away: kept apart */
	{ 1203, 1500, 22, -5 },  /* E */
	{ 1501, 1580, NAN, 0 },  /* 80 ms away and back: gap >= 75 ms */
	{ 1581, 1800, 22, -5 },  /* F, same direction as E */
	{ 1801, 1820, NAN, 0 },
	{ 1821, 1921, 0, 15 },   /* G, exactly 100 ms: kept */
	{ 1922, 1940, NAN, 0 },
	{ 1941, 2040, 0, -15 },  /* H, 99 ms: dropped */
	{ 2041, 2060, NAN, 0 },
	{ 2061, 2199, -20, 10 }, /* I, runs to the end of the stream */
};

static void build_script(struct gaze *g)
{
	size_t s;
	int i;

	for (s = 0; s < ARRAY_SIZE(script); s++) {
		for (i = script[s].first; i <= script[s].last; i++) {
			g[i].t_ns = T0 + (int64_t)i * MS;
			g[i].o[0] = 1;
			g[i].o[1] = 2;
			g[i].o[2] = 3;
			g[i].depth_m = 0;
			if (isnan(script[s].yaw))
				set_dir(&g[i], (40.0 + 5.0 * (i % 2)) * DEG,
					(30.0 + 7.0 * (i % 3)) * DEG);
			else
				set_dir(&g[i], (script[s].yaw +
						0.004 * (i % 2 ? 1 : -1)) * DEG,
					script[s].pitch * DEG);
		}
	}
}

struct expect {
	size_t a, b, nsamples;
	double yaw, pitch; /* mean direction, degrees */
};

static void test_constructed(void **state)
{
	static const struct expect want[] = {
		{ 0, 199, 200, 0, 0 },
		{ 230, 800, 300 + 269, 10.0 + 0.5 * 269 / 569, 5 },
		{ 901, 1200, 300, 20, -5 },
		{ 1203, 1500, 298, 22, -5 },
		{ 1581, 1800, 220, 22, -5 },
		{ 1821, 1921, 101, 0, 15 },
		{ 2061, 2199, 139, -20, 10 },
	};
	struct gaze *g = calloc(NS, sizeof(*g));
	struct fixation out[64];
	struct fixation_input in;
	size_t n = 0, k;

	(void)state;
	assert_non_null(g);
	build_script(g);
	in = view(g, NS);
	assert_int_equal(fixation_detect(&in, NULL, out, 64, &n), 0);
	assert_int_equal(n, ARRAY_SIZE(want));
	for (k = 0; k < n; k++) {
		assert_int_equal(out[k].i_start, want[k].a);
		assert_int_equal(out[k].i_end, want[k].b);
		assert_int_equal(out[k].t_start_ns, T0 + (int64_t)want[k].a * MS);
		assert_int_equal(out[k].t_end_ns, T0 + (int64_t)want[k].b * MS);
		assert_int_equal(out[k].duration_ns,
				 (int64_t)(want[k].b - want[k].a) * MS);
		assert_int_equal(out[k].nsamples, want[k].nsamples);
		/*
		 * B's mean mixes 10 and 10.5 deg of yaw, weighted by count;
		 * an odd count leaves 0.004 / count deg of wobble
		 */
		assert_true(angle_deg(out[k].dir, want[k].yaw * DEG,
				      want[k].pitch * DEG) < 1e-4);
		assert_true(fabsf(out[k].origin[0] - 1) < 1e-6f);
		assert_true(fabsf(out[k].origin[2] - 3) < 1e-6f);
		assert_int_equal(out[k].box, -1);
	}

	/* with the merge gap at 1 ms, B and B' stay apart */
	{
		struct fixation_params p;

		fixation_params_init(&p);
		p.merge_gap_ns = 1 * MS;
		assert_int_equal(fixation_detect(&in, &p, out, 64, &n), 0);
		assert_int_equal(n, ARRAY_SIZE(want) + 1);
		assert_int_equal(out[1].i_end, 529);
		assert_int_equal(out[2].i_start, 532);
		/* and with min duration 0, C and H come back too */
		p.min_duration_ns = 0;
		assert_int_equal(fixation_detect(&in, &p, out, 64, &n), 0);
		assert_int_equal(n, ARRAY_SIZE(want) + 3);
	}
	free(g);
}

/* The mean ray of a fixation is cast into a BVH. */
static void test_hit_object(void **state)
{
	struct gaze *g = calloc(NS, sizeof(*g));
	struct fixation out[64];
	struct fixation_input in;
	struct fixation_params p;
	struct obb box[2];
	struct bvh *bv = NULL;
	size_t n = 0, k;

	(void)state;
	assert_non_null(g);
	build_script(g);
	/* box 1 straight ahead of the origin (1, 2, 3), 2 m away: A looks at it */
	memset(box, 0, sizeof(box));
	for (k = 0; k < 2; k++) {
		box[k].ax[0][0] = box[k].ax[1][1] = box[k].ax[2][2] = 1;
		box[k].h[0] = box[k].h[1] = box[k].h[2] = 0.1f;
	}
	box[0].c[0] = -5;
	box[1].c[0] = 1;
	box[1].c[1] = 2;
	box[1].c[2] = 5;
	assert_int_equal(bvh_build(box, 2, &bv), 0);
	fixation_params_init(&p);
	p.bvh = bv;
	in = view(g, NS);
	assert_int_equal(fixation_detect(&in, &p, out, 64, &n), 0);
	assert_int_equal(n, 7);
	assert_int_equal(out[0].box, 1);
	assert_true(fabsf(out[0].hit_t - 1.9f) < 1e-4f);
	for (k = 1; k < n; k++)
		assert_int_equal(out[k].box, -1);
	/* out of range */
	p.hit_range_m = 1.8f;
	assert_int_equal(fixation_detect(&in, &p, out, 64, &n), 0);
	assert_int_equal(out[0].box, -1);
	bvh_free(bv);
	free(g);
}

/*
 * The threshold itself at 1 kHz: a steady drift of 29 deg/s is one
 * fixation, 31 deg/s is none. Between samples that is 0.029 vs 0.031
 * degrees, where cos(angle) is within 2e-7 of 1: a float cos compare
 * could not tell them apart.
 */
static void test_velocity_threshold(void **state)
{
	struct gaze g[500];
	struct fixation out[8];
	struct fixation_input in = view(g, 500);
	size_t n = 0, i;
	int k;

	(void)state;
	for (k = 0; k < 2; k++) {
		double rate = k ? 31.0 : 29.0;

		memset(g, 0, sizeof(g));
		for (i = 0; i < 500; i++) {
			double a = rate * DEG * 1e-3 * (double)i;

			g[i].t_ns = (int64_t)i * MS;
			g[i].d[0] = (float)sin(a);
			g[i].d[2] = (float)cos(a);
		}
		assert_int_equal(fixation_detect(&in, NULL, out, 8, &n), 0);
		if (k == 0) {
			assert_int_equal(n, 1);
			assert_int_equal(out[0].i_start, 0);
			assert_int_equal(out[0].i_end, 499);
		} else {
			assert_int_equal(n, 0);
		}
	}
	/* 10 Hz: 2.9 deg a step (29 deg/s) is slow, 3.1 deg (31 deg/s) is not */
	for (i = 0; i < 10; i++) {
		double a = (i < 5 ? 2.9 : 3.1) * DEG * (double)i;

		g[i].t_ns = (int64_t)i * 100 * MS;
		g[i].d[0] = (float)sin(a);
		g[i].d[1] = 0;
		g[i].d[2] = (float)cos(a);
	}
	in.n = 10;
	assert_int_equal(fixation_detect(&in, NULL, out, 8, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(out[0].i_start, 0);
	assert_int_equal(out[0].i_end, 4);
}

static void test_errors(void **state)
{
	struct gaze *g = calloc(NS, sizeof(*g));
	struct fixation out[64];
	struct fixation_input in;
	struct fixation_params p;
	size_t n = 99;

	(void)state;
	assert_non_null(g);
	build_script(g);
	in = view(g, NS);
	/* too small an output: the first ones are written */
	assert_int_equal(fixation_detect(&in, NULL, out, 3, &n), ENG_ETOOBIG);
	assert_int_equal(n, 3);
	assert_int_equal(out[2].i_start, 901);
	assert_int_equal(fixation_detect(&in, NULL, NULL, 0, &n), ENG_ETOOBIG);
	assert_int_equal(n, 0);
	assert_int_equal(fixation_detect(NULL, NULL, out, 64, &n), ENG_EINVAL);
	assert_int_equal(fixation_detect(&in, NULL, out, 64, NULL), ENG_EINVAL);
	fixation_params_init(&p);
	p.max_velocity_dps = 0;
	assert_int_equal(fixation_detect(&in, &p, out, 64, &n), ENG_EINVAL);
	fixation_params_init(&p);
	p.merge_angle_deg = NAN;
	assert_int_equal(fixation_detect(&in, &p, out, 64, &n), ENG_EINVAL);
	fixation_params_init(&p);
	p.min_duration_ns = -1;
	assert_int_equal(fixation_detect(&in, &p, out, 64, &n), ENG_EINVAL);
	/* a time going backwards inside D: A and B are still reported */
	g[1000].t_ns = g[999].t_ns;
	assert_int_equal(fixation_detect(&in, NULL, out, 64, &n), ENG_EINVAL);
	assert_int_equal(n, 2);
	/* empty and single-sample streams have no fixation */
	in.n = 1;
	assert_int_equal(fixation_detect(&in, NULL, out, 64, &n), 0);
	assert_int_equal(n, 0);
	in.n = 0;
	in.t_ns = NULL;
	in.d = NULL;
	assert_int_equal(fixation_detect(&in, NULL, out, 64, &n), 0);
	assert_int_equal(n, 0);
	/*
	 * A NaN direction is a saccade sample, not a crash: it splits A in
	 * two, which merge again (2 ms gap) without averaging that sample.
	 */
	in = view(g, NS);
	g[1000].t_ns = g[999].t_ns + MS;
	g[100].d[1] = NAN;
	assert_int_equal(fixation_detect(&in, NULL, out, 64, &n), 0);
	assert_int_equal(n, 7);
	assert_int_equal(out[0].i_start, 0);
	assert_int_equal(out[0].i_end, 199);
	assert_int_equal(out[0].nsamples, 199);
	assert_false(isnan(out[0].dir[1]));
	free(g);
}

/* ======================= Real MPS gaze ======================= */

#define MPS_GAZE "tests/data/mps/eye_gaze/generalized_eye_gaze.csv"
#define MPS_MAX 256

/* Index of the comma-separated field `name` in the header, or -1. */
static int column(const char *header, const char *name)
{
	const char *p = header;
	size_t len = strlen(name);
	int k = 0;

	for (;;) {
		const char *e = p + strcspn(p, ",\r\n");

		if ((size_t)(e - p) == len && !strncmp(p, name, len))
			return k;
		if (*e != ',')
			return -1;
		p = e + 1;
		k++;
	}
}

/* Start of field k of a row. */
static const char *field(const char *row, int k)
{
	while (k-- > 0) {
		row = strchr(row, ',');
		if (!row)
			return NULL;
		row++;
	}
	return row;
}

/* Reads time and CPF direction normalize(tan yaw, tan pitch, 1). */
static size_t load_mps(struct gaze *g, size_t cap)
{
	char line[1024];
	FILE *f = fopen(MPS_GAZE, "r");
	int ct, cy, cp;
	size_t n = 0;

	assert_non_null(f);
	assert_non_null(fgets(line, sizeof(line), f));
	ct = column(line, "tracking_timestamp_us");
	cy = column(line, "yaw_rads_cpf");
	cp = column(line, "pitch_rads_cpf");
	assert_true(ct >= 0 && cy >= 0 && cp >= 0);
	while (fgets(line, sizeof(line), f) && n < cap) {
		const char *ft = field(line, ct), *fy = field(line, cy);
		const char *fp = field(line, cp);
		char *end;
		long long us;

		assert_true(ft && fy && fp);
		us = strtoll(ft, &end, 10);
		assert_true(end != ft && *end == ',');
		memset(&g[n], 0, sizeof(g[n]));
		g[n].t_ns = us * 1000;
		set_dir(&g[n], strtod(fy, NULL), strtod(fp, NULL));
		n++;
	}
	fclose(f);
	return n;
}

/*
 * The expected values below come from this independent computation
 * (double precision, acos of each pair, explicit lists), run once by
 * hand from the repository root; it printed "123 samples; 19 runs; 19
 * fixations" and the smallest |velocity - 30| over all pairs, 0.377
 * deg/s, so no pair sits on the threshold:
 *
 * python3 - <<'EOF'
 * import csv, math
 * R = list(csv.DictReader(open('tests/data/mps/eye_gaze/generalized_eye_gaze.csv')))
 * t = [int(r['tracking_timestamp_us']) * 1000 for r in R]
 * def unit(v):
 *     n = math.sqrt(sum(c * c for c in v)); return [c / n for c in v]
 * d = [unit([math.tan(float(r['yaw_rads_cpf'])),
 *            math.tan(float(r['pitch_rads_cpf'])), 1.0]) for r in R]
 * ang = lambda a, b: math.degrees(math.acos(max(-1.0, min(1.0,
 *     sum(p * q for p, q in zip(a, b))))))
 * vel = [ang(d[i - 1], d[i]) / ((t[i] - t[i - 1]) * 1e-9)
 *        for i in range(1, len(d))]
 * slow = [v < 30.0 for v in vel]
 * runs, i = [], 0
 * while i < len(slow):
 *     if slow[i]:
 *         j = i
 *         while j + 1 < len(slow) and slow[j + 1]:
 *             j += 1
 *         runs.append(list(range(i, j + 2))); i = j + 1
 *     else:
 *         i += 1
 * mean = lambda idx: unit([sum(d[k][c] for k in idx) for c in range(3)])
 * fix = []
 * for r in runs:
 *     if fix and t[r[0]] - t[fix[-1][-1]] < 75_000_000 and \
 *             ang(mean(fix[-1]), mean(r)) < 1.0:
 *         fix[-1] = fix[-1] + r
 *     else:
 *         fix.append(r)
 * fix = [f for f in fix if t[f[-1]] - t[f[0]] >= 100_000_000]
 * print(len(R), 'samples;', len(runs), 'runs;', len(fix), 'fixations')
 * print('min |v-30| deg/s:', min(abs(v - 30) for v in vel))
 * for f in fix:
 *     print(f[0], f[-1], (t[f[-1]] - t[f[0]]) // 1_000_000, 'ms',
 *           ['%.6f' % c for c in mean(f)])
 * EOF
 */
static void test_mps_real(void **state)
{
	static const struct {
		size_t a, b;
		int64_t ms;
	} want[] = {
		{ 0, 2, 200 },    { 6, 7, 100 },    { 9, 10, 100 },
		{ 11, 17, 600 },  { 18, 21, 300 },  { 22, 25, 300 },
		{ 26, 32, 600 },  { 33, 37, 400 },  { 38, 56, 1800 },
		{ 57, 61, 400 },  { 62, 85, 2300 }, { 87, 88, 100 },
		{ 89, 90, 100 },  { 92, 95, 300 },  { 96, 97, 100 },
		{ 98, 102, 400 }, { 103, 104, 100 }, { 105, 106, 100 },
		{ 109, 122, 1300 },
	};
	/* mean directions printed by the script, for fixations 0, 8, 18 */
	static const float dir0[3] = { 0.778038f, 0.027958f, 0.627595f };
	static const float dir8[3] = { 0.150839f, -0.437091f, 0.886679f };
	static const float dir18[3] = { 0.021253f, -0.272662f, 0.961875f };
	struct gaze *g = calloc(MPS_MAX, sizeof(*g));
	struct fixation out[MPS_MAX / 2 + 1];
	struct fixation_input in;
	size_t n, nf = 0, k;
	int a;

	(void)state;
	assert_non_null(g);
	n = load_mps(g, MPS_MAX);
	assert_int_equal(n, 123);
	in = view(g, n);
	in.o = NULL; /* CPF origin */
	assert_int_equal(fixation_detect(&in, NULL, out, ARRAY_SIZE(out), &nf),
			 0);
	assert_int_equal(nf, 19);
	for (k = 0; k < nf; k++) {
		assert_int_equal(out[k].i_start, want[k].a);
		assert_int_equal(out[k].i_end, want[k].b);
		assert_int_equal(out[k].duration_ns, want[k].ms * MS);
		assert_int_equal(out[k].nsamples, want[k].b - want[k].a + 1);
		assert_true(out[k].origin[0] == 0 && out[k].origin[2] == 0);
	}
	assert_int_equal(out[0].t_start_ns, 148502622LL * 1000);
	for (a = 0; a < 3; a++) {
		assert_true(fabsf(out[0].dir[a] - dir0[a]) < 2e-6f);
		assert_true(fabsf(out[8].dir[a] - dir8[a]) < 2e-6f);
		assert_true(fabsf(out[18].dir[a] - dir18[a]) < 2e-6f);
	}
	free(g);
}

/* ======================= The reference implementation ======================= */

/*
 * The detector as it was before its loop was restructured for speed
 * (one state machine over all samples, the origins summed in a second
 * pass per run), kept verbatim as the reference: the current one must
 * give bitwise the same fixations, counts and return codes.
 */
#define FIX_PREFETCH 64

/*
 * The squared chord |a - b|^2 = 2 - 2 cos(angle) of two unit vectors an
 * angle `rad` apart: the cos comparison written so that it keeps its
 * precision for the tiny angles between samples at 1 kHz (where cos is
 * within a few float steps of 1). Angles of pi or more give 4, which no
 * pair of unit vectors exceeds.
 */
static inline double ref_chord2(double rad)
{
	double x, x2, s;

	if (rad >= M_PI)
		return 4.0;
	x = 0.5 * rad;
	if (x < 0.25) {
		/* sin x, Taylor to x^9: relative error below 1e-13 */
		x2 = x * x;
		s = x * (1 - x2 * (1.0 / 6) * (1 - x2 * (1.0 / 20) *
			(1 - x2 * (1.0 / 42) * (1 - x2 * (1.0 / 72)))));
	} else {
		s = sin(x);
	}
	return 4.0 * s * s;
}

/* A candidate or pending fixation while streaming. */
struct ref_cand {
	size_t a, b;     /* first and last sample */
	size_t count;    /* samples summed */
	double sd[3];    /* sum of directions */
	double so[3];    /* sum of origins */
};

/* Writer state for the output array. */
struct ref_sink {
	const struct fixation_params *p;
	const struct fixation_input *in;
	struct fixation *out;
	size_t cap, n;
	bool full;
};

static int64_t ref_time_at(const struct fixation_input *in, size_t i)
{
	return *(const int64_t *)(const void *)((const char *)in->t_ns +
						 i * in->t_stride);
}

/* b - a for b >= a, without signed overflow. */
static uint64_t ref_span(int64_t a, int64_t b)
{
	return (uint64_t)b - (uint64_t)a;
}

/* Sums the origins of samples c->a..c->b into c->so (zero without o). */
static void ref_sum_origins(const struct fixation_input *in, struct ref_cand *c)
{
	size_t j;
	int k;

	for (k = 0; k < 3; k++)
		c->so[k] = 0;
	if (!in->o)
		return;
	for (j = c->a; j <= c->b; j++) {
		const float *o = (const float *)(const void *)
			((const char *)in->o + j * in->o_stride);

		for (k = 0; k < 3; k++)
			c->so[k] += (double)o[k];
	}
}

static void ref_mean_dir(const struct ref_cand *c, double m[3])
{
	double len = sqrt(c->sd[0] * c->sd[0] + c->sd[1] * c->sd[1] +
			  c->sd[2] * c->sd[2]);
	int k;

	for (k = 0; k < 3; k++)
		m[k] = len > 0 ? c->sd[k] / len : 0;
}

/* Emits c if long enough. */
static void ref_emit(struct ref_sink *s, const struct ref_cand *c)
{
	const struct fixation_params *p = s->p;
	int64_t t0 = ref_time_at(s->in, c->a), t1 = ref_time_at(s->in, c->b);
	struct fixation *f;
	double m[3];
	int k;

	if (ref_span(t0, t1) < (uint64_t)p->min_duration_ns)
		return;
	if (s->n >= s->cap) {
		s->full = true;
		return;
	}
	f = &s->out[s->n++];
	memset(f, 0, sizeof(*f));
	f->t_start_ns = t0;
	f->t_end_ns = t1;
	f->duration_ns = (int64_t)ref_span(t0, t1);
	f->i_start = c->a;
	f->i_end = c->b;
	f->nsamples = c->count;
	ref_mean_dir(c, m);
	for (k = 0; k < 3; k++) {
		f->dir[k] = (float)m[k];
		f->origin[k] = (float)(c->so[k] / (double)c->count);
	}
	f->box = -1;
	if (p->bvh) {
		struct ray r;
		struct bvh_hit h;

		for (k = 0; k < 3; k++) {
			r.o[k] = f->origin[k];
			r.d[k] = f->dir[k];
		}
		bvh_cast(p->bvh, &r, p->hit_range_m, &h);
		f->box = h.box;
		f->hit_t = h.t;
	}
}

/* Merges the new candidate c into *pend or flushes *pend and keeps c. */
static void ref_take(struct ref_sink *s, struct ref_cand *pend, bool *have,
		 const struct ref_cand *c, double merge_c2)
{
	if (*have) {
		uint64_t gap = ref_span(ref_time_at(s->in, pend->b), ref_time_at(s->in, c->a));
		double m0[3], m1[3], e = 0;
		int k;

		ref_mean_dir(pend, m0);
		ref_mean_dir(c, m1);
		for (k = 0; k < 3; k++)
			e += (m0[k] - m1[k]) * (m0[k] - m1[k]);
		if (gap < (uint64_t)s->p->merge_gap_ns && e < merge_c2) {
			pend->b = c->b;
			pend->count += c->count;
			for (k = 0; k < 3; k++) {
				pend->sd[k] += c->sd[k];
				pend->so[k] += c->so[k];
			}
			return;
		}
		ref_emit(s, pend);
	}
	*pend = *c;
	*have = true;
}

static bool ref_params_ok(const struct fixation_params *p)
{
	return isfinite(p->max_velocity_dps) && p->max_velocity_dps > 0 &&
	       p->merge_gap_ns >= 0 && isfinite(p->merge_angle_deg) &&
	       p->merge_angle_deg >= 0 && p->min_duration_ns >= 0 &&
	       (!p->bvh || p->hit_range_m >= 0);
}

static int ref_detect(const struct fixation_input *in,
		      const struct fixation_params *p, struct fixation *out,
		      size_t cap, size_t *nout)
{
	struct fixation_params defaults;
	struct ref_sink s;
	struct ref_cand run, pend;
	bool in_run = false, have = false;
	const char *tp, *dp;
	double w, merge_c2;
	int64_t prev_t;
	uint64_t last_dt = 0;
	float px, py, pz, lim = 0;
	size_t i;
	int rc = 0;

	if (!in || !nout || (!out && cap > 0) || (in->n > 0 && (!in->t_ns ||
						       !in->d)))
		return ENG_EINVAL;
	*nout = 0;
	if (!p) {
		fixation_params_init(&defaults);
		p = &defaults;
	}
	if (!ref_params_ok(p))
		return ENG_EINVAL;
	s.p = p;
	s.in = in;
	s.out = out;
	s.cap = cap;
	s.n = 0;
	s.full = false;
	if (in->n < 2)
		goto out;
	w = p->max_velocity_dps * POSE_DEG2RAD * 1e-9; /* rad per ns */
	merge_c2 = ref_chord2(p->merge_angle_deg * (M_PI / 180.0));
	memset(&run, 0, sizeof(run));
	tp = (const char *)in->t_ns;
	dp = (const char *)in->d;
	memcpy(&prev_t, tp, sizeof(prev_t));
	px = ((const float *)(const void *)dp)[0];
	py = ((const float *)(const void *)dp)[1];
	pz = ((const float *)(const void *)dp)[2];
	for (i = 1; i < in->n; i++) {
		const float *d = (const float *)(const void *)(dp +
							      i * in->d_stride);
		int64_t t;
		uint64_t dt;
		float x = d[0], y = d[1], z = d[2], ex, ey, ez;

#if defined(__GNUC__)
		/* ~2.5 KB ahead: +20-100% once the samples are out of cache */
		__builtin_prefetch(dp + (i + FIX_PREFETCH < in->n ?
					 i + FIX_PREFETCH : i) * in->d_stride);
#endif
		memcpy(&t, tp + i * in->t_stride, sizeof(t));
		if (t <= prev_t) {
			rc = ENG_EINVAL;
			break;
		}
		dt = ref_span(prev_t, t);
		if (dt != last_dt) {
			lim = (float)ref_chord2(w * (double)dt);
			last_dt = dt;
		}
		ex = x - px;
		ey = y - py;
		ez = z - pz;
		if (ex * ex + ey * ey + ez * ez < lim) {
			/* a slow pair (i-1, i) */
			if (!in_run) {
				run.a = i - 1;
				run.count = 1;
				run.sd[0] = px;
				run.sd[1] = py;
				run.sd[2] = pz;
				in_run = true;
			}
			run.count++;
			run.sd[0] += (double)x;
			run.sd[1] += (double)y;
			run.sd[2] += (double)z;
		} else if (in_run) {
			run.b = i - 1;
			in_run = false;
			ref_sum_origins(in, &run);
			ref_take(&s, &pend, &have, &run, merge_c2);
		}
		prev_t = t;
		px = x;
		py = y;
		pz = z;
	}
	if (in_run) {
		run.b = i - 1;
		ref_sum_origins(in, &run);
		ref_take(&s, &pend, &have, &run, merge_c2);
	}
	if (have)
		ref_emit(&s, &pend);
out:
	*nout = s.n;
	if (!rc && s.full)
		rc = ENG_ETOOBIG;
	return rc;
}

/* ======================= Against the reference ======================= */

/* Both detectors on in with p and cap: the same code, count and bytes. */
static void same_as_reference(const struct fixation_input *in,
			      const struct fixation_params *p, size_t cap,
			      size_t *found)
{
	struct fixation *a = calloc(cap ? cap : 1, sizeof(*a));
	struct fixation *b = calloc(cap ? cap : 1, sizeof(*b));
	size_t na = 77, nb = 88;
	int ra, rb;

	assert_non_null(a);
	assert_non_null(b);
	ra = ref_detect(in, p, a, cap, &na);
	rb = fixation_detect(in, p, b, cap, &nb);
	assert_int_equal(rb, ra);
	assert_int_equal(nb, na);
	if (na)
		assert_memory_equal(b, a, na * sizeof(*a));
	if (found)
		*found += na;
	free(a);
	free(b);
}

/*
 * Synthetic gaze like the benchmark's: fixations of 150-600 samples with
 * small jitter, saccades of 20-60; jitter_ns > 0 jitters the timestamps;
 * every gap_every-th sample (when > 0) is preceded by a gap of gap_ns
 * (so that some limits come from the sine branch, or are 4).
 */
static void synth(struct gaze *g, size_t n, uint64_t seed, int64_t jitter_ns,
		  size_t gap_every, int64_t gap_ns)
{
	uint64_t s = seed;
	double yaw = 0, pitch = 0;
	int64_t t = T0;
	size_t i = 0;

	while (i < n) {
		size_t len = 150 + (size_t)(rng_next64(&s) % 450), k;
		size_t sac = 20 + (size_t)(rng_next64(&s) % 40);
		double ty = (rng_unit(&s) - 0.5), tpi = 0.8 * (rng_unit(&s) - 0.5);

		for (k = 0; k < len + sac && i < n; k++, i++) {
			double a = k < len ? 0 : (double)(k - len + 1) / (double)(sac + 1);
			double j = k < len ? 1e-4 : 0;

			g[i].t_ns = t;
			t += MS + (jitter_ns ? (int64_t)(rng_next64(&s) % (uint64_t)(2 * jitter_ns + 1)) -
						jitter_ns : 0);
			if (gap_every && i % gap_every == gap_every - 1)
				t += gap_ns;
			set_dir(&g[i], yaw + a * (ty - yaw) + j * (rng_unit(&s) - 0.5),
				pitch + a * (tpi - pitch) + j * (rng_unit(&s) - 0.5));
			g[i].o[0] = (float)(1 + 0.01 * (rng_unit(&s) - 0.5));
			g[i].o[1] = (float)(2 + 0.01 * (rng_unit(&s) - 0.5));
			g[i].o[2] = 1.5f;
			g[i].depth_m = 0;
		}
		yaw = ty;
		pitch = tpi;
	}
}

static void test_reference_streams(void **state)
{
	static const size_t sizes[] = { 0, 1, 2, 3, 15, 16, 17, 33, 1000, 20011 };
	const size_t nmax = 20011;
	struct gaze *g = calloc(nmax, sizeof(*g));
	struct fixation_input in;
	struct fixation_params p;
	size_t si, found = 0;
	int kind;

	(void)state;
	assert_non_null(g);
	for (kind = 0; kind < 5; kind++) {
		for (si = 0; si < ARRAY_SIZE(sizes); si++) {
			size_t n = sizes[si];

			/* constant, jittered, gaps into the sine branch, gaps past pi */
			if (kind == 0)
				synth(g, nmax, 1, 0, 0, 0);
			else if (kind == 1)
				synth(g, nmax, 2, 20000, 0, 0);
			else if (kind == 2)
				synth(g, nmax, 3, 20000, 97, 1200 * MS);
			else if (kind == 3)
				synth(g, nmax, 4, 0, 31, 200000 * MS);
			else
				synth(g, nmax, 5, 300, 7, 3 * MS);
			in = view(g, n);
			same_as_reference(&in, NULL, n / 2 + 1, &found);
			/* no origins; a tight output; other thresholds */
			in.o = NULL;
			same_as_reference(&in, NULL, n / 2 + 1, &found);
			in = view(g, n);
			same_as_reference(&in, NULL, 3, NULL);
			fixation_params_init(&p);
			p.max_velocity_dps = 5 + 10.0 * kind;
			p.merge_gap_ns = 10 * MS * kind;
			p.merge_angle_deg = 0.5 * kind;
			p.min_duration_ns = 20 * MS * kind;
			same_as_reference(&in, &p, n / 2 + 1, &found);
		}
	}
	assert_true(found > 1000);
	free(g);
}

/* Times that stop increasing, anywhere: the same partial answers. */
static void test_reference_errors(void **state)
{
	const size_t n = 3000;
	struct gaze *g = calloc(n, sizeof(*g));
	struct fixation_input in;
	size_t k;

	(void)state;
	assert_non_null(g);
	for (k = 1; k < n; k += 37) {
		synth(g, n, 9 + k, 5000, 0, 0);
		g[k].t_ns = g[k - 1].t_ns - (int64_t)(k % 3); /* equal or backwards */
		in = view(g, n);
		same_as_reference(&in, NULL, n / 2 + 1, NULL);
	}
	/* origins of -0: the sums start from +0 as the reference's do */
	synth(g, n, 78, 0, 0, 0);
	for (k = 0; k < n; k++)
		g[k].o[0] = g[k].o[1] = g[k].o[2] = -0.0f;
	in = view(g, n);
	same_as_reference(&in, NULL, n / 2 + 1, NULL);
	/* a NaN direction and an infinite one inside a fixation */
	synth(g, n, 77, 0, 0, 0);
	g[500].d[0] = NAN;
	g[700].d[2] = INFINITY;
	in = view(g, n);
	same_as_reference(&in, NULL, n / 2 + 1, NULL);
	free(g);
}

/* With a hierarchy the mean rays are cast the same way. */
static void test_reference_hits(void **state)
{
	const size_t n = 5000;
	struct gaze *g = calloc(n, sizeof(*g));
	struct fixation_params p;
	struct fixation_input in;
	struct obb boxes[3];
	struct bvh *bv = NULL;
	size_t k, found = 0;

	(void)state;
	assert_non_null(g);
	memset(boxes, 0, sizeof(boxes));
	for (k = 0; k < 3; k++) {
		boxes[k].c[0] = (float)k - 1.0f;
		boxes[k].c[1] = 2;
		boxes[k].c[2] = 4;
		boxes[k].ax[0][0] = boxes[k].ax[1][1] = boxes[k].ax[2][2] = 1;
		boxes[k].h[0] = boxes[k].h[1] = boxes[k].h[2] = 0.4f;
	}
	assert_int_equal(bvh_build(boxes, 3, &bv), 0);
	synth(g, n, 11, 1000, 0, 0);
	fixation_params_init(&p);
	p.bvh = bv;
	in = view(g, n);
	same_as_reference(&in, &p, n / 2 + 1, &found);
	assert_true(found > 5);
	bvh_free(bv);
	free(g);
}


/*
 * Directions at the exact limit. For the squared-chord limit lim of a
 * dt, finds a, b with fl(fl(a * a) + fl(b * b)) == lim + `step` float
 * steps (step -1: the next float below), so that a pair (0, 0, 1) ->
 * (a, b, 1) sits exactly on (step 0) or just inside (step -1) the
 * velocity threshold. Returns false when the search fails.
 */
static bool boundary_pair(float lim, int step, float *pa, float *pb)
{
	float want = step < 0 ? nextafterf(lim, 0.0f) : lim;
	float a = sqrtf(want);
	int i, j;

	for (i = 0; i < 64; i++, a = nextafterf(a, 0.0f)) {
		float a2 = a * a, rest = want - a2, b;

		if (rest < 0)
			continue;
		b = sqrtf(rest);
		for (j = 0; j < 64; j++, b = nextafterf(b, 1.0f)) {
			float e2 = a * a + b * b + 0.0f * 0.0f;

			if (e2 == want) {
				*pa = a;
				*pb = b;
				return true;
			}
			if (e2 > want)
				break;
		}
	}
	return false;
}

/*
 * Pairs exactly at the limit are fast, one float step inside are slow:
 * a stream of 300 samples alternating (0, 0, 1) with an exact-limit
 * direction, then 300 with a just-inside one, at a constant rate and with
 * two alternating dts (a bracket two dts wide). Any limit one step
 * off changes the answer; both detectors must agree with each other and
 * with the expectation (one fixation, the second half).
 */
static void test_reference_boundary(void **state)
{
	static const int64_t dts[][2] = { { MS, MS }, { MS, MS - 7919 } };
	const double w = 30.0 * POSE_DEG2RAD * 1e-9;
	struct gaze *g = calloc(600, sizeof(*g));
	struct fixation out[4];
	struct fixation_input in;
	size_t n = 0, k, i;

	(void)state;
	assert_non_null(g);
	for (k = 0; k < ARRAY_SIZE(dts); k++) {
		float a[2][2], b[2][2];
		int64_t t = T0;
		int half, m;

		/* for each dt: the exact-limit (half 0) and just-inside (half 1) pair */
		for (m = 0; m < 2; m++)
			for (half = 0; half < 2; half++)
				assert_true(boundary_pair((float)ref_chord2(w * (double)dts[k][m]),
							  half ? -1 : 0, &a[half][m], &b[half][m]));
		for (i = 0; i < 600; i++) {
			int hh = i >= 300, mm = (int)((i / 2) % 2);

			memset(&g[i], 0, sizeof(g[i]));
			g[i].t_ns = t;
			/* pairs (2j, 2j+1) and (2j+1, 2j+2) share dt index mm */
			t += dts[k][(i / 2 + (i % 2)) % 2 ? 1 : 0];
			g[i].d[2] = 1;
			if (i % 2) {
				g[i].d[0] = a[hh][mm];
				g[i].d[1] = b[hh][mm];
			}
		}
		/* fix the times so that both pairs around an odd sample share its dt */
		for (i = 1; i < 600; i++) {
			int mm = (int)(((i - 1) / 2) % 2);

			g[i].t_ns = g[i - 1].t_ns + dts[k][mm];
		}
		in = view(g, 600);
		in.o = NULL;
		same_as_reference(&in, NULL, 4, NULL);
		assert_int_equal(fixation_detect(&in, NULL, out, 4, &n), 0);
		assert_int_equal(n, 1);
		assert_int_equal(out[0].i_start, 300);
		assert_int_equal(out[0].i_end, 599);
	}
	free(g);
}

/*
 * Jittered times with every pair on its own limit: 2,000 samples whose
 * dts are drawn from MS +- 20 us (and now and then a jump to 3 MS or
 * back, so that the bracket of dts the detector keeps has to widen and
 * start again), alternating (0, 0, 1) with a direction exactly at the
 * limit of that pair's dt (first half: fast) or one float step inside
 * it (second half: slow). The limit of one dt differs from its
 * neighbours' by a few float steps only, so a pair decided from a limit
 * of another dt, or one step off, changes the answer: one fixation,
 * exactly the second half, and the reference's bytes.
 */
static void test_reference_boundary_jitter(void **state)
{
	const double w = 30.0 * POSE_DEG2RAD * 1e-9;
	const size_t n = 2000;
	struct gaze *g = calloc(n, sizeof(*g));
	struct fixation out[4];
	struct fixation_input in;
	uint64_t s = 2026;
	size_t nf = 0, i;
	int64_t dt = MS;

	(void)state;
	assert_non_null(g);
	memset(g, 0, n * sizeof(*g));
	g[0].t_ns = T0;
	g[0].d[2] = 1;
	for (i = 1; i < n; i += 2) {
		float a, b;
		int half = i >= n / 2;

		/* samples i and i + 1 share the dt of pair (i - 1, i) */
		if (i % 97 == 1)
			dt = dt == MS ? 3 * MS : MS;
		else
			dt = (dt >= 2 * MS ? 3 * MS : MS) +
			     (int64_t)(rng_next64(&s) % 40001) - 20000;
		assert_true(boundary_pair((float)ref_chord2(w * (double)dt), half ? -1 : 0,
					  &a, &b));
		g[i].t_ns = g[i - 1].t_ns + dt;
		g[i].d[0] = a;
		g[i].d[1] = b;
		g[i].d[2] = 1;
		if (i + 1 < n) {
			g[i + 1].t_ns = g[i].t_ns + dt;
			g[i + 1].d[2] = 1;
		}
	}
	in = view(g, n);
	in.o = NULL;
	same_as_reference(&in, NULL, 4, NULL);
	assert_int_equal(fixation_detect(&in, NULL, out, 4, &nf), 0);
	assert_int_equal(nf, 1);
	assert_int_equal(out[0].i_start, n / 2);
	assert_int_equal(out[0].i_end, n - 1);
	free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_constructed),
		cmocka_unit_test(test_hit_object),
		cmocka_unit_test(test_velocity_threshold),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_mps_real),
		cmocka_unit_test(test_reference_streams),
		cmocka_unit_test(test_reference_errors),
		cmocka_unit_test(test_reference_hits),
		cmocka_unit_test(test_reference_boundary),
		cmocka_unit_test(test_reference_boundary_jitter),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
