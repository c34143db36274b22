/* SPDX-License-Identifier: MIT */
/*
 * The scene tools on the 10-minute synthetic kitchen: the first
 * sample_clips call per sub-task (which builds the caches: scene, 10 Hz
 * visibility timeline, fixations, interactions, keystep windows, paths),
 * then warm calls (the engine's pattern: the same seed, a new index), calls
 * with a new seed each time (a re-shuffle), and one call of each of the
 * other tools. The target is the engine's rate of 200 sampler calls per
 * second per core, 5 ms a call.
 *
 * usage: bench_clips [RECORDING]   (default examples/kitchen-10min, else
 * a kitchen written by synth into $BENCH_WORK)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "err.h"
#include "recording.h"
#include "registry.h"
#include "synth.h"

#define TARGET_US 5000.0

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Runs one call; returns its result's "total" (or 0) and fails the program on an error. */
static double call(struct tool_ctx *ctx, const char *name, const char *args)
{
	cJSON *res = NULL, *t;
	double total = 0;
	int rc = tool_call(ctx, name, args, &res);

	if (rc) {
		char *s = cJSON_PrintUnformatted(res);

		fprintf(stderr, "error: %s %s: %s\n", name, args, s ? s : eng_strerror(rc));
		free(s);
		exit(1);
	}
	t = cJSON_GetObjectItem(res, "total");
	if (cJSON_IsNumber(t))
		total = t->valuedouble;
	cJSON_Delete(res);
	return total;
}

static int load(const char *path, struct recording **rec)
{
	struct synth_params p = { SYNTH_KITCHEN, 10, 1 };
	struct synth_recording *s = NULL;
	const char *work = getenv("BENCH_WORK");
	char dir[4096];
	int rc;

	if (!recording_load(path, REC_LAYOUT_AUTO, rec))
		return 0;
	snprintf(dir, sizeof(dir), "%s/kitchen-10min", work && *work ? work : "/tmp");
	if (!recording_load(dir, REC_LAYOUT_AUTO, rec))
		return 0;
	rc = synth_generate(&p, &s);
	if (!rc)
		rc = synth_write(s, dir, SYNTH_WRITE_FORCE);
	synth_free(s);
	if (!rc)
		rc = recording_load(dir, REC_LAYOUT_AUTO, rec);
	if (rc)
		fprintf(stderr, "error: cannot load or write a recording: %s\n", err_msg());
	return rc;
}

int main(int argc, char **argv)
{
	static const char *const subs[] = {
		"intention.head_turn", "intention.gaze_target", "exploration.navigate",
		"exploitation.next_interaction", "chain.actions"
	};
	const char *path = argc > 1 ? argv[1] : "examples/kitchen-10min";
	struct recording *rec = NULL;
	struct tool_ctx *ctx = NULL;
	double t, cold_total = 0, warm_us = 0, seed_us = 0;
	char args[256];
	size_t s;
	double us;
	int i, n = 2000;

	if (load(path, &rec) || tool_ctx_new(rec, &ctx))
		return 1;
	printf("recording %s: %.0f s, %zu objects, %zu gaze samples, %zu actions\n", rec->id,
	       (double)(recording_t1(rec) - recording_t0(rec)) / 1e9, rec->nobjects, rec->ngaze,
	       rec->nactions);
	printf("head: clips | call | figures (recording %s)\n", rec->id);
	for (s = 0; s < sizeof(subs) / sizeof(subs[0]); s++) {
		double total, cold, warm, reseed;

		snprintf(args, sizeof(args), "{\"subtask\":\"%s\",\"seed\":1}", subs[s]);
		tool_ctx_set_flags(ctx, TOOL_CTX_FILL_NULLS);
		t = now_s();
		total = call(ctx, "sample_clips", args);
		cold = now_s() - t;
		cold_total += cold;
		t = now_s();
		for (i = 0; i < n; i++) {
			snprintf(args, sizeof(args), "{\"subtask\":\"%s\",\"seed\":1,\"index\":%d}",
				 subs[s], i % (int)(total > 0 ? total : 1));
			call(ctx, "sample_clips", args);
		}
		warm = (now_s() - t) / n * 1e6;
		t = now_s();
		for (i = 0; i < n / 10; i++) {
			snprintf(args, sizeof(args), "{\"subtask\":\"%s\",\"seed\":%d}", subs[s], i + 2);
			call(ctx, "sample_clips", args);
		}
		reseed = (now_s() - t) / (n / 10) * 1e6;
		warm_us += warm / 5;
		seed_us += reseed / 5;
		printf("%-30s %5.0f candidates; first call %7.1f ms, warm %6.1f us/call, new seed %6.1f us/call\n",
		       subs[s], total, cold * 1e3, warm, reseed);
		printf("row: clips | sample_clips %s | %.0f candidates; first call %.1f ms, warm "
		       "%.1f us/call, new seed %.1f us/call\n", subs[s], total, cold * 1e3, warm,
		       reseed);
	}
	printf("sample_clips first calls: %.0f ms in all (caches built once per recording)\n",
	       cold_total * 1e3);
	printf("sample_clips warm: ours %.1f us/call, target %.0f us (200 calls/s per core), ratio %.0f\n",
	       warm_us, TARGET_US, TARGET_US / warm_us);
	printf("sample_clips new seed: ours %.1f us/call, target %.0f us, ratio %.0f\n", seed_us,
	       TARGET_US, TARGET_US / seed_us);

	t = now_s();
	for (i = 0; i < 200; i++) {
		snprintf(args, sizeof(args), "{\"t\":%lld}", (long long)(recording_t0(rec) +
			 (int64_t)i * (recording_t1(rec) - recording_t0(rec)) / 200));
		call(ctx, "visible_objects", args);
	}
	us = (now_s() - t) / 200 * 1e6;
	printf("visible_objects: %.1f us/call\n", us);
	printf("row: clips | visible_objects | %.1f us/call\n", us);
	t = now_s();
	for (i = 0; i < 50; i++) {
		snprintf(args, sizeof(args), "{\"t\":%lld,\"target\":\"%s\"}",
			 (long long)(recording_t0(rec) + (int64_t)i * 10000000000LL % (recording_t1(rec) -
				    recording_t0(rec))), rec->objects[(size_t)i % rec->nobjects].id);
		call(ctx, "plan_path", args);
	}
	us = (now_s() - t) / 50 * 1e6;
	printf("plan_path: %.1f us/call (grid + A* + legs)\n", us);
	printf("row: clips | plan_path (grid, A*, legs) | %.1f us/call\n", us);
	t = now_s();
	for (i = 0; i < 50; i++) {
		snprintf(args, sizeof(args), "{\"t\":%lld}", (long long)(recording_t0(rec) +
			 (int64_t)i * 10000000000LL % (recording_t1(rec) - recording_t0(rec))));
		call(ctx, "build_occupancy", args);
	}
	us = (now_s() - t) / 50 * 1e6;
	printf("build_occupancy: %.1f us/call\n", us);
	printf("row: clips | build_occupancy | %.1f us/call\n", us);
	t = now_s();
	for (i = 0; i < 20; i++) {
		snprintf(args, sizeof(args), "{\"t0\":%lld,\"t1\":%lld,\"step\":60}",
			 (long long)(recording_t0(rec) + (int64_t)i * 20000000000LL),
			 (long long)(recording_t0(rec) + (int64_t)i * 20000000000LL + 10000000000LL));
		call(ctx, "cast_gaze", args);
	}
	us = (now_s() - t) / 20 * 1e6;
	printf("cast_gaze over 10 s (600 rays): %.1f us/call\n", us);
	printf("row: clips | cast_gaze over 10 s (600 rays) | %.1f us/call\n", us);
	tool_ctx_free(ctx);
	recording_free(rec);
	return 0;
}
