/* SPDX-License-Identifier: MIT */
/*
 * I-VT fixations: constructed 1 kHz gaze with known fixations, the
 * velocity threshold itself, errors, and the real Aria MPS gaze sample.
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
#include "fixation.h"

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
	double a0 = a[0], a1 = a[1], a2 = a[2];
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_constructed),
		cmocka_unit_test(test_hit_object),
		cmocka_unit_test(test_velocity_threshold),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_mps_real),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
