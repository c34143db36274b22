/* SPDX-License-Identifier: MIT */
/* `proxima synth`: write a synthetic recording in the native format. */
#include "commands.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "banned.h"
#include "err.h"
#include "synth.h"

static const char synth_usage[] =
	"usage: proxima synth [--scene kitchen|apartment|office] [--minutes M] [--seed S]\n"
	"                     [--no-video] [--fps F] [--labels] -o DIR [--force]\n"
	"\n"
	"Writes a synthetic recording in the native proxima-recording/1 layout into\n"
	"DIR: a furnished room (walls, furniture, small objects of real sizes, some\n"
	"categories with several instances), a wearer who walks between places along\n"
	"routes around the furniture, turns the head, fixates objects and picks up,\n"
	"carries and puts down small objects while working through goals, with the\n"
	"camera trajectory (30 Hz), gaze rays (60 Hz), objects, object poses and the\n"
	"action list. It also renders what the wearer sees into video.mp4 (H.264,\n"
	"the recording's camera, 640x480) on every core and lists it in\n"
	"recording.json. The same options give byte-identical files.\n"
	"\n"
	"options:\n"
	"  --scene NAME    kitchen (default), apartment or office\n"
	"  --minutes M     length in minutes, a fraction allowed, 0.05..120 (default 10)\n"
	"  --seed S        random seed, an unsigned integer (default 1)\n"
	"  --video         render video.mp4 (default)\n"
	"  --no-video      write the streams only\n"
	"  --fps F         video frames per second, 1..60 (default 10)\n"
	"  --labels        draw each object's name on it in the video\n"
	"  -o, --output DIR  folder to write (created if missing)\n"
	"  --force         write into DIR even if it is not empty\n"
	"  -h, --help      show this help\n"
	"\n"
	"exit status: 0 ok, 1 failed (e.g. DIR not empty), 2 usage error\n";

__attribute__((format(printf, 1, 2)))
static int usage_error(const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	error("%s", msg);
	fputs(synth_usage, stderr);
	return CMD_USAGE;
}

static int parse_minutes(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || *end || errno || !isfinite(v) || v < SYNTH_MINUTES_MIN ||
	    v > SYNTH_MINUTES_MAX)
		return -1;
	*out = v;
	return 0;
}

static int parse_fps(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || *end || errno || !isfinite(v) || v < SYNTH_VIDEO_FPS_MIN ||
	    v > SYNTH_VIDEO_FPS_MAX)
		return -1;
	*out = v;
	return 0;
}

static int parse_seed(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (*end || errno)
		return -1;
	*out = (uint64_t)v;
	return 0;
}

int cmd_synth(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "scene", required_argument, NULL, 's' },
		{ "minutes", required_argument, NULL, 'm' },
		{ "seed", required_argument, NULL, 'S' },
		{ "output", required_argument, NULL, 'o' },
		{ "force", no_argument, NULL, 'f' },
		{ "video", no_argument, NULL, 'v' },
		{ "no-video", no_argument, NULL, 'n' },
		{ "fps", required_argument, NULL, 'r' },
		{ "labels", no_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct synth_params p = { SYNTH_KITCHEN, 10.0, 1 };
	struct synth_recording *s = NULL;
	struct synth_write_opts wo = { 0, true, SYNTH_VIDEO_FPS, false, 0 };
	struct synth_write_stats st;
	const char *dir = NULL;
	size_t i, run, long_fix = 0, long_goals = 0;
	int c, rc;

	if (cmd_wants_help(argc, argv)) {
		fputs(synth_usage, stdout);
		return CMD_OK;
	}
	optind = 1;
	opterr = 0;
	for (;;) {
		c = getopt_long(argc, argv, ":ho:", opts, NULL);
		if (c == -1)
			break;
		switch (c) {
		case 's':
			if (synth_scene_from_name(optarg, &p.scene))
				return usage_error("synth: --scene: '%s' is not kitchen, apartment or office",
						   optarg);
			break;
		case 'm':
			if (parse_minutes(optarg, &p.minutes))
				return usage_error("synth: --minutes: '%s' is not a number in [0.05, 120]",
						   optarg);
			break;
		case 'S':
			if (parse_seed(optarg, &p.seed))
				return usage_error("synth: --seed: '%s' is not an unsigned integer",
						   optarg);
			break;
		case 'o': dir = optarg; break;
		case 'f': wo.flags |= SYNTH_WRITE_FORCE; break;
		case 'v': wo.video = true; break;
		case 'n': wo.video = false; break;
		case 'l': wo.labels = true; break;
		case 'r':
			if (parse_fps(optarg, &wo.fps))
				return usage_error("synth: --fps: '%s' is not a number in [1, 60]", optarg);
			break;
		case 'h': fputs(synth_usage, stdout); return CMD_OK;
		case ':':
			return usage_error("synth: option '%s' needs a value", argv[optind - 1]);
		default:
			return usage_error("synth: unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return usage_error("synth: unexpected argument '%s'", argv[optind]);
	if (!dir || !*dir)
		return usage_error("synth: missing -o DIR");

	rc = synth_generate(&p, &s);
	if (rc) {
		error_code(rc, "synth");
		return CMD_FAILED;
	}
	rc = synth_write_with(s, dir, &wo, &st);
	if (rc) {
		error_code(rc, dir);
		synth_free(s);
		return CMD_FAILED;
	}
	for (i = 0; i < s->nfixations; i++)
		long_fix += s->fixations[i].count >= 19;
	for (i = 0, run = 0; i < s->nactions; i++) {
		run++;
		if (i + 1 == s->nactions || s->actions[i + 1].goal_index != s->actions[i].goal_index) {
			long_goals += run >= 4;
			run = 0;
		}
	}
	printf("wrote '%s' (%s, %g min, seed %llu): %zu poses, %zu gaze samples, %zu objects, "
	       "goal instances %zu (%zu with 4+ actions), %zu actions, %zu carries, %zu fixations (%zu of 300 ms or more)\n",
	       dir, synth_scene_name(p.scene), p.minutes, (unsigned long long)p.seed, s->ntraj,
	       s->ngaze, s->nobjects, s->ngoals, long_goals, s->nactions, s->ncarries, s->nfixations,
	       long_fix);
	if (wo.video)
		printf("video: %zu frames at %g fps, %dx%d, in %.1f s (%.0f frames/s on %d threads)\n",
		       st.frames, st.fps, s->camera.width, s->camera.height, st.seconds,
		       st.seconds > 0 ? (double)st.frames / st.seconds : 0.0, st.threads);
	synth_free(s);
	return CMD_OK;
}
