/* SPDX-License-Identifier: MIT */
/*
 * Fixation detector throughput: synthetic 1 kHz gaze (fixations of
 * 150-600 ms with small jitter, saccades of 20-60 ms between them) laid
 * out like the recording model's gaze samples (time, origin, direction,
 * depth: 40 bytes), single-threaded, with constant and with jittered
 * (+-20 us) timestamps. Targets (issue 13): 200 M samples/s at a constant
 * rate, 150 M jittered, on the default 4,000,000 samples (160 MB, out of
 * cache). Each figure is the best of REPS runs; an in-cache figure
 * (50,000 samples) is printed for reference.
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

#define REPS 15
#define TARGET_CONST 200.0
#define TARGET_JITTER 150.0

/*
 * The memory ceiling: a plain read of every sample's time and direction
 * (what the detector must read at the least), best of REPS, in M
 * samples/s. On a shared machine this moves with the others' load, so
 * the bench prints it beside the detector's figure.
 */
static double stream_rate(const struct sample *g, size_t n)
{
	double best = 1e30;
	volatile double sink;
	int k;

	for (k = 0; k < REPS; k++) {
		double t0 = now_s(), acc = 0;
		int64_t at = 0;
		size_t i;

		for (i = 0; i < n; i++) {
#if defined(__GNUC__)
			__builtin_prefetch(&g[i + 64 < n ? i + 64 : i]);
#endif
			at += g[i].t_ns;
			acc += (double)(g[i].d[0] + g[i].d[1] + g[i].d[2]);
		}
		sink = acc + (double)at;
		(void)sink;
		t0 = now_s() - t0;
		if (t0 < best)
			best = t0;
	}
	return 1e-6 * (double)n / best;
}

/* Best of REPS runs over the first n samples of g, in M samples/s. */
static double best_rate(const struct sample *g, size_t n, struct fixation *out,
			size_t cap, size_t *nout)
{
	struct fixation_input in;
	double best = 1e30;
	int k;

	in.t_ns = &g[0].t_ns;
	in.t_stride = sizeof(*g);
	in.d = g[0].d;
	in.d_stride = sizeof(*g);
	in.o = g[0].o;
	in.o_stride = sizeof(*g);
	in.n = n;
	for (k = 0; k < REPS; k++) {
		double t0 = now_s();
		int rc = fixation_detect(&in, NULL, out, cap, nout);

		t0 = now_s() - t0;
		if (rc) {
			fprintf(stderr, "error: fixation_detect: %d\n", rc);
			exit(1);
		}
		if (t0 < best)
			best = t0;
	}
	return 1e-6 * (double)n / best;
}

int main(int argc, char **argv)
{
	size_t n = 4000000, cap, nout = 0, nfix;
	struct sample *g;
	struct fixation *out;
	double ceiling;
	int jitter;

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
	nfix = make_gaze(g, n, 0);
	ceiling = stream_rate(g, n);
	printf("fixation memory ceiling: %.1f Msamples/s (a plain read of each sample's "
	       "time and direction, %.0f MB, best of %d)\n", ceiling,
	       1e-6 * (double)(n * sizeof(*g)), REPS);
	printf("head: fixation | timestamps | samples | ours M samples/s | target | ratio | "
	       "in cache (50,000 samples) | memory ceiling (plain read of time and direction)\n");
	for (jitter = 0; jitter <= 1; jitter++) {
		double rate, small, target = jitter ? TARGET_JITTER : TARGET_CONST;

		nfix = make_gaze(g, n, jitter);
		small = best_rate(g, n < 50000 ? n : 50000, out, cap, &nout);
		rate = best_rate(g, n, out, cap, &nout);
		if (!jitter)
			printf("fixation: ours %.1f Msamples/s, target %.0f, ratio %.2f\n",
			       rate, target, rate / target);
		else
			printf("fixation jittered: ours %.1f Msamples/s, target %.0f, "
			       "ratio %.2f\n", rate, target, rate / target);
		printf("fixation%s: %zu samples at 1 kHz (%.0f MB), %zu generated, %zu "
		       "found; in cache (50,000 samples) %.1f Msamples/s; best of %d\n",
		       jitter ? " jittered" : "", n, 1e-6 * (double)(n * sizeof(*g)),
		       nfix, nout, small, REPS);
		printf("row: fixation | %s | %zu (%.0f MB) | %.1f | %.0f | %.2f | %.1f | %.1f\n",
		       jitter ? "jittered +-20 us" : "constant 1 kHz", n,
		       1e-6 * (double)(n * sizeof(*g)), rate, target, rate / target, small,
		       ceiling);
		printf("target: I-VT | %s timestamps, %zu samples | %.1f M samples/s | %.0f M "
		       "samples/s | %.3f | >= 1 | %s\n", jitter ? "jittered" : "constant rate",
		       n, rate, target, rate / target, rate >= target ? "PASS" : "FAIL");
	}
	free(g);
	free(out);
	return 0;
}
