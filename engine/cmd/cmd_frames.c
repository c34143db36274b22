/* SPDX-License-Identifier: MIT */
/* `proxima frames REC`: the frames of a recording at device times, or the frames a QA at T shows. */
#include "commands.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "banned.h"
#include "err.h"
#include "recording.h"
#include "truth.h"
#include "video.h"

/* Most times one call takes. */
#define FRAMES_MAX 4096

static const char frames_usage[] =
	"usage: proxima frames REC (--at T[,T...] | --clip T [--n N] [--window S])\n"
	"                      -o DIR [--width W] [--json]\n"
	"\n"
	"Writes the frames of the recording folder REC at device times (ns) as JPEG\n"
	"files into DIR, from its video: a native recording's video file, the Aria\n"
	"RGB stream of an ADT or Aria VRS file (turned upright), or an Ego-Exo4D\n"
	"take's RGB MP4 (its frames mapped to device time through timesync.csv).\n"
	"Each time gets the nearest frame (a tie: the later one); a time before\n"
	"the first frame gets the first frame, one after the last the last frame,\n"
	"with a warning when it lies more than half a frame outside the video.\n"
	"\n"
	"options:\n"
	"  --at T[,T...]   the frames at these device times (ns)\n"
	"  --clip T        the frames a QA at T shows: N times evenly spaced over\n"
	"                  [T - W, T], the engine's rule (frames_json of a QA)\n"
	"  --n N           frames of --clip, 2..256 (default 8)\n"
	"  --window S      clip length W in seconds (default 8)\n"
	"  -o, --out DIR   output folder (created when missing)\n"
	"  --width W       at most W pixels wide, aspect kept, never upscaled\n"
	"                  (default 640)\n"
	"  --json          print one JSON object instead of text\n"
	"  -h, --help      show this help\n"
	"\n"
	"Files are DIR/NNN_T.jpg: NNN the position in the list of times (001, ...),\n"
	"T the device time asked for, in ns. One line per file tells the frame\n"
	"written (its index in the stream and its device time).\n"
	"JSON keys: recording, video: {file, kind, frames, t_first_ns, t_last_ns,\n"
	"  width, height, fps, rotated}, frames: [{file, t_ns, frame, frame_ns,\n"
	"  offset_ms, width, height, outside}].\n"
	"\n"
	"exit status: 0 ok, 1 failed (no video, a broken file), 2 usage error\n";

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int usage_error(const char *fmt, ...)
{
	char b[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(b, sizeof(b), fmt, ap);
	va_end(ap);
	error("%s", b);
	fputs("see 'proxima frames --help'\n", stderr);
	return CMD_USAGE;
}

/* One device time in ns: a whole number. */
static int parse_time(const char *s, const char *end, int64_t *out)
{
	char b[32], *e;
	size_t n = (size_t)(end - s);
	long long v;

	if (!n || n >= sizeof(b))
		return -1;
	memcpy(b, s, n);
	b[n] = '\0';
	errno = 0;
	v = strtoll(b, &e, 10);
	if (errno || *e || e == b)
		return -1;
	*out = (int64_t)v;
	return 0;
}

static int parse_list(const char *s, int64_t *out, size_t *n)
{
	const char *p = s;

	*n = 0;
	for (;;) {
		const char *c = strchr(p, ',');
		const char *e = c ? c : p + strlen(p);

		if (*n == FRAMES_MAX || parse_time(p, e, &out[*n]))
			return -1;
		(*n)++;
		if (!c)
			return 0;
		p = c + 1;
	}
}

static int mkdir_p(const char *dir)
{
	char b[PATH_MAX];
	size_t i, n = strlen(dir);

	if (n >= sizeof(b))
		return error("'%s': path too long", dir);
	memcpy(b, dir, n + 1);
	for (i = 1; i <= n; i++) {
		if (b[i] != '/' && b[i] != '\0')
			continue;
		b[i] = '\0';
		if (mkdir(b, 0777) && errno != EEXIST) {
			int e = errno;

			return error("cannot create '%s': %s", b, strerror(e));
		}
		b[i] = i < n ? '/' : '\0';
	}
	return 0;
}

/* True when t lies more than half a frame before the first or after the last frame. */
static bool outside(const struct video_info *vi, int64_t t)
{
	double half = vi->fps > 0 ? 0.5e9 / vi->fps : 0;

	return (double)(vi->t_first_ns - t) > half || (double)(t - vi->t_last_ns) > half;
}

static cJSON *json_i64(int64_t v)
{
	char s[32];

	snprintf(s, sizeof(s), "%" PRId64, v);
	return cJSON_CreateRaw(s);
}

static int print_json(const char *rec_path, const struct video_info *vi, char **paths,
		      const struct video_shot *shots, size_t n)
{
	cJSON *root = cJSON_CreateObject(), *v = cJSON_CreateObject(), *arr = cJSON_CreateArray();
	char *text = NULL;
	size_t i;
	int rc = CMD_FAILED;

	if (!root || !v || !arr) {
		cJSON_Delete(v);
		cJSON_Delete(arr);
		goto out;
	}
	cJSON_AddStringToObject(root, "recording", rec_path);
	cJSON_AddStringToObject(v, "file", vi->file);
	cJSON_AddStringToObject(v, "kind", vi->kind);
	cJSON_AddNumberToObject(v, "frames", (double)vi->nframes);
	cJSON_AddItemToObject(v, "t_first_ns", json_i64(vi->t_first_ns));
	cJSON_AddItemToObject(v, "t_last_ns", json_i64(vi->t_last_ns));
	cJSON_AddNumberToObject(v, "width", vi->width);
	cJSON_AddNumberToObject(v, "height", vi->height);
	cJSON_AddNumberToObject(v, "fps", vi->fps);
	cJSON_AddBoolToObject(v, "rotated", vi->rotated);
	cJSON_AddItemToObject(root, "video", v);
	for (i = 0; i < n; i++) {
		cJSON *o = cJSON_CreateObject();

		if (!o)
			goto out;
		cJSON_AddStringToObject(o, "file", paths[i]);
		cJSON_AddItemToObject(o, "t_ns", json_i64(shots[i].t_ns));
		cJSON_AddNumberToObject(o, "frame", (double)shots[i].frame);
		cJSON_AddItemToObject(o, "frame_ns", json_i64(shots[i].frame_ns));
		cJSON_AddNumberToObject(o, "offset_ms",
					(double)(shots[i].frame_ns - shots[i].t_ns) / 1e6);
		cJSON_AddNumberToObject(o, "width", shots[i].width);
		cJSON_AddNumberToObject(o, "height", shots[i].height);
		cJSON_AddBoolToObject(o, "outside", outside(vi, shots[i].t_ns));
		cJSON_AddItemToArray(arr, o);
	}
	cJSON_AddItemToObject(root, "frames", arr);
	arr = NULL;
	text = cJSON_Print(root);
	if (!text)
		goto out;
	puts(text);
	rc = CMD_OK;
out:
	if (rc)
		error("out of memory while printing JSON");
	cJSON_Delete(arr);
	cJSON_free(text);
	cJSON_Delete(root);
	return rc;
}

static void print_text(const struct video_info *vi, char **paths, const struct video_shot *shots,
		       size_t n)
{
	size_t i, before = 0, after = 0;

	printf("video: %s (%s), %zu frames, %" PRId64 " .. %" PRId64 " ns, %dx%d%s\n", vi->file,
	       vi->kind, vi->nframes, vi->t_first_ns, vi->t_last_ns, vi->width, vi->height,
	       vi->rotated ? " upright" : "");
	for (i = 0; i < n; i++) {
		printf("%s  t %" PRId64 "  frame %ld at %" PRId64 " (%+.1f ms)  %dx%d\n", paths[i],
		       shots[i].t_ns, shots[i].frame, shots[i].frame_ns,
		       (double)(shots[i].frame_ns - shots[i].t_ns) / 1e6, shots[i].width,
		       shots[i].height);
		if (outside(vi, shots[i].t_ns))
			*(shots[i].t_ns < vi->t_first_ns ? &before : &after) += 1;
	}
	if (before)
		warning("%zu of %zu times lie before the first frame (%" PRId64
			" ns): they show it",
			before, n, vi->t_first_ns);
	if (after)
		warning("%zu of %zu times lie after the last frame (%" PRId64 " ns): they show it",
			after, n, vi->t_last_ns);
}

/* The options of one frames run. */
struct frames_opts {
	struct truth_params tp; /* --n and --window over the defaults */
	const char *at;         /* --at LIST, or NULL */
	const char *clip;       /* --clip T, or NULL */
	const char *dir;        /* -o DIR */
	long width;             /* --width */
	long nclip;             /* --n, 0 when not given */
	bool json;              /* --json */
};

/* frames_parse() found nothing to stop for: go on with the run. */
#define FRAMES_RUN (-1)

/*
 * Parses the options into o, checking that they go together; on return
 * optind is the index of the recording. Returns FRAMES_RUN, or the exit
 * code to stop with (--help, a usage error).
 */
static int frames_parse(int argc, char **argv, struct frames_opts *o)
{
	static const struct option opts[] = {
		{ "at", required_argument, NULL, 'a' },
		{ "clip", required_argument, NULL, 'c' },
		{ "n", required_argument, NULL, 'n' },
		{ "window", required_argument, NULL, 'w' },
		{ "out", required_argument, NULL, 'o' },
		{ "width", required_argument, NULL, 'W' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	int c;

	memset(o, 0, sizeof(*o));
	truth_defaults(&o->tp);
	o->width = VIDEO_DEFAULT_WIDTH;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'a': o->at = optarg; break;
		case 'c': o->clip = optarg; break;
		case 'n':
			errno = 0;
			o->nclip = strtol(optarg, &end, 10);
			if (errno || *end || o->nclip < 2 || o->nclip > 256)
				return usage_error("--n must be an integer in 2..256, not '%s'",
						   optarg);
			o->tp.frames = (int)o->nclip;
			break;
		case 'w':
			errno = 0;
			o->tp.window_s = strtod(optarg, &end);
			if (errno || *end || end == optarg ||
			    !(o->tp.window_s > 0 && o->tp.window_s <= 3600))
				return usage_error(
					"--window must be seconds in (0, 3600], not '%s'", optarg);
			break;
		case 'o': o->dir = optarg; break;
		case 'W':
			errno = 0;
			o->width = strtol(optarg, &end, 10);
			if (errno || *end || o->width < 16 || o->width > 16384)
				return usage_error(
					"--width must be an integer in 16..16384, not '%s'",
					optarg);
			break;
		case 'j': o->json = true; break;
		case 'h': fputs(frames_usage, stdout); return CMD_OK;
		default:
			return usage_error("frames: unknown option or missing value '%s'",
					   argv[optind - 1]);
		}
	}
	if (argc - optind != 1) {
		if (argc - optind > 1)
			return usage_error("frames: give exactly one recording, not also '%s'",
					   argv[optind + 1]);
		return usage_error("frames: missing the recording");
	}
	if (!o->at == !o->clip)
		return usage_error("frames: give either --at or --clip");
	if (o->nclip && !o->clip)
		return usage_error("frames: --n goes with --clip");
	if (!o->dir)
		return usage_error("frames: missing -o DIR");
	return FRAMES_RUN;
}

/*
 * The device times to extract, into t (FRAMES_MAX entries) and *n: the
 * list of --at, or else the frames of the clip at --clip (frames_parse()
 * let exactly one through). Returns 0, or CMD_USAGE after a usage error;
 * the code is written out because clang's analyser does not follow a
 * variadic function such as usage_error() to its return value.
 */
static int frames_times(const struct frames_opts *o, int64_t *t, size_t *n)
{
	int64_t clip_t = 0;

	*n = 0;
	if (o->at) {
		if (!parse_list(o->at, t, n))
			return 0;
		usage_error("--at takes device times in ns separated by commas, not '%s'", o->at);
		return CMD_USAGE;
	}
	if (parse_time(o->clip, o->clip + strlen(o->clip), &clip_t)) {
		usage_error("--clip takes a device time in ns, not '%s'", o->clip);
		return CMD_USAGE;
	}
	*n = (size_t)truth_frame_times(clip_t, &o->tp, t);
	return 0;
}

/*
 * The file of each frame, DIR/NNN_T.jpg, into paths[0..n) (zeroed by the
 * caller, which frees what is there whatever this returns).
 */
static int frame_paths(const char *dir, const int64_t *t, size_t n, char **paths)
{
	size_t i;

	for (i = 0; i < n; i++) {
		size_t len = strlen(dir) + 48;

		paths[i] = malloc(len);
		if (!paths[i])
			return error("out of memory");
		snprintf(paths[i], len, "%s/%03zu_%" PRId64 ".jpg", dir, i + 1, t[i]);
	}
	return 0;
}

int cmd_frames(int argc, char **argv)
{
	struct frames_opts o;
	struct recording *rec = NULL;
	struct video *v = NULL;
	struct video_info vi;
	struct video_shot *shots = NULL;
	char **paths = NULL;
	int64_t *t = NULL;
	size_t n = 0, i;
	int rc, ret = CMD_FAILED;

	if (cmd_wants_help(argc, argv)) {
		fputs(frames_usage, stdout);
		return CMD_OK;
	}
	rc = frames_parse(argc, argv, &o);
	if (rc != FRAMES_RUN)
		return rc;
	t = malloc(FRAMES_MAX * sizeof(*t));
	if (!t)
		return error("out of memory");
	rc = frames_times(&o, t, &n);
	if (rc) {
		free(t);
		return rc;
	}
	rc = recording_load(argv[optind], REC_LAYOUT_AUTO, &rec);
	if (rc) {
		error_code(rc, argv[optind]);
		goto out;
	}
	rc = video_open(rec, &v);
	if (rc) {
		error_code(rc, argv[optind]);
		goto out;
	}
	video_get_info(v, &vi);
	if (mkdir_p(o.dir))
		goto out;
	paths = calloc(n, sizeof(*paths));
	shots = calloc(n, sizeof(*shots));
	if (!paths || !shots) {
		error("out of memory");
		goto out;
	}
	if (frame_paths(o.dir, t, n, paths))
		goto out;
	rc = video_extract(v, t, n, (int)o.width, (const char *const *)paths, shots);
	if (rc) {
		error_code(rc, vi.file);
		goto out;
	}
	if (o.json) {
		ret = print_json(argv[optind], &vi, paths, shots, n);
	} else {
		print_text(&vi, paths, shots, n);
		ret = CMD_OK;
	}
out:
	for (i = 0; paths && i < n; i++)
		free(paths[i]);
	free(paths);
	free(shots);
	free(t);
	video_close(v);
	recording_free(rec);
	return ret;
}
