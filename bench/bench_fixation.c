/* SPDX-License-Identifier: MIT */
/*
 * Fixation detector throughput: synthetic 1 kHz gaze (fixations of
 * 150-600 ms with small jitter, saccades of 20-60 ms between them) laid
 * out like the recording model's gaze samples (time, origin, direction,
 * depth: 40 bytes), single-threaded. Target: 100 M samples/s.
 *
 * usage: bench_fixation [SAMPLES]   (default 4000000)
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "fixation.h"
#include "rng.h"

/* The layout of struct rec_gaze (engine/recording/recording.h). */
struct sample {
	int64_t t_ns;
	float o[3];
	float d[3];
	float depth_m;
};

static double rng_range(uint64_t *s, double lo, double hi)
{
	return lo + (hi - lo) * (double)(rng_next64(s) >> 11) *
		(1.0 / 9007199254740992.0);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void set_dir(struct sample *g, double yaw, double pitch)
{
	double x = tan(yaw), y = tan(pitch), n = sqrt(x * x + y * y + 1);

	g->d[0] = (float)(x / n);
	g->d[1] = (float)(y / n);
	g->d[2] = (float)(1 / n);
}

/* Returns the number of fixations generated. */
static size_t make_gaze(struct sample *g, size_t n, int jitter)
{
	uint64_t s = 42;
	double yaw = 0, pitch = 0;
	size_t i = 0, nfix = 0;
	int64_t t = 1000000000;

	while (i < n) {
		size_t len = (size_t)rng_range(&s, 150, 600), k;
		double ty = rng_range(&s, -0.5, 0.5), tpi = rng_range(&s, -0.4, 0.4);
		size_t sac = (size_t)rng_range(&s, 20, 60);

		/* fixation: jitter of ~0.005 deg per sample */
		for (k = 0; k < len && i < n; k++, i++) {
			g[i].t_ns = t;
			t += 1000000 + (jitter ? (int64_t)rng_range(&s, -2e4, 2e4) : 0);
			set_dir(&g[i], yaw + rng_range(&s, -1e-4, 1e-4),
				pitch + rng_range(&s, -1e-4, 1e-4));
			g[i].o[0] = 1.0f;
			g[i].o[1] = 2.0f;
			g[i].o[2] = 1.5f;
			g[i].depth_m = 0;
		}
		nfix++;
		/* saccade to the next target */
		for (k = 0; k < sac && i < n; k++, i++) {
			double a = (double)(k + 1) / (double)(sac + 1);

			g[i].t_ns = t;
			t += 1000000 + (jitter ? (int64_t)rng_range(&s, -2e4, 2e4) : 0);
			set_dir(&g[i], yaw + a * (ty - yaw), pitch + a * (tpi - pitch));
			g[i].o[0] = 1.0f;
			g[i].o[1] = 2.0f;
			g[i].o[2] = 1.5f;
			g[i].depth_m = 0;
		}
		yaw = ty;
		pitch = tpi;
	}
	return nfix;
}

int main(int argc, char **argv)
{
	size_t n = 4000000, cap, nout = 0, nfix;
	struct sample *g;
	struct fixation *out;
	struct fixation_input in;
	int jitter, rc = 0;

	if (argc > 1) {
		char *end;
		unsigned long long v = strtoull(argv[1], &end, 10);

		if (*end || v < 2 || v > 200000000ull) {
			fprintf(stderr, "usage: bench_fixation [SAMPLES]\n");
			return 2;
		}
		n = (size_t)v;
	}
	cap = n / 2 + 1;
	g = malloc(n * sizeof(*g));
	out = malloc(cap * sizeof(*out));
	if (!g || !out) {
		fprintf(stderr, "error: out of memory\n");
		return 1;
	}
	for (jitter = 0; jitter <= 1; jitter++) {
		double best = 1e30, rate;
		int k;

		nfix = make_gaze(g, n, jitter);
		in.t_ns = &g[0].t_ns;
		in.t_stride = sizeof(*g);
		in.d = g[0].d;
		in.d_stride = sizeof(*g);
		in.o = g[0].o;
		in.o_stride = sizeof(*g);
		in.n = n;
		for (k = 0; k < 5; k++) {
			double t0 = now_s();

			rc = fixation_detect(&in, NULL, out, cap, &nout);
			t0 = now_s() - t0;
			if (rc) {
				fprintf(stderr, "error: fixation_detect: %d\n", rc);
				return 1;
			}
			if (t0 < best)
				best = t0;
		}
		rate = 1e-6 * (double)n / best;
		if (!jitter)
			printf("fixation: ours %.1f Msamples/s, target 100, "
			       "ratio %.2f\n", rate, rate / 100.0);
		else
			printf("fixation (timestamps jittered +-20 us): ours %.1f "
			       "Msamples/s, target 100, ratio %.2f\n", rate,
			       rate / 100.0);
		printf("fixation: %zu samples at 1 kHz, %zu generated, %zu "
		       "found\n", n, nfix, nout);
	}
	free(g);
	free(out);
	return 0;
}
