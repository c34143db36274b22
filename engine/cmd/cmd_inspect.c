/* SPDX-License-Identifier: MIT */
/* `proxima inspect PATH`: which layout a recording folder has and what it holds. */
#include "commands.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "banned.h"
#include "err.h"
#include "obb.h"
#include "recording.h"
#include "video.h"

/* A gaze ray "hits" a box within this range (m): the visibility range. */
#define INSPECT_GAZE_RANGE_M 6.0f

static const char inspect_usage[] =
	"usage: proxima inspect PATH [--json] [--objects]\n"
	"\n"
	"Loads the recording folder PATH (native proxima-recording/1, Aria Digital\n"
	"Twin sequence, Aria MPS folder or Ego-Exo4D take), and prints the detected\n"
	"layout, the id, the time span and rate of each stream, object counts, gaze\n"
	"coverage (source rows, rays with a pose, share of rays that hit an object\n"
	"box within 6 m), actions and their goals, the camera model, the video stream\n"
	"(source file, frame count, first and last frame time, frame size), the floor\n"
	"height and the load warnings.\n"
	"\n"
	"options:\n"
	"  --json       print one JSON object instead of text\n"
	"  --objects    also list every object (id, name, category, motion, world box\n"
	"               centre and half-extents at the start of the recording)\n"
	"  -h, --help   show this help\n"
	"\n"
	"JSON keys (stable): path, layout, id, t0_ns, t1_ns, duration_s;\n"
	"  trajectory, gaze, object_poses, actions: {file, count, t_first_ns,\n"
	"    t_last_ns, span_s, rate_hz} (file is null when absent; object_poses\n"
	"    rate_hz is the mean rate per dynamic object);\n"
	"  gaze also: schema, rows (in the source), rays (with a pose),\n"
	"    rays_on_object, share_on_object (0..1);\n"
	"  actions also: goals (distinct, in order of first use);\n"
	"  object_counts: {total, static, dynamic};\n"
	"  camera: {model (\"pinhole\"|\"fisheye\"), width, height, fx, fy, cx, cy, fov_deg};\n"
	"  video: {path, t0_ns, fps, stream} or null, stream: {file, kind (\"vrs\" or\n"
	"    the codec), frames, t_first_ns, t_last_ns, width, height (as written,\n"
	"    upright), rotated} or {error} when the video cannot be opened;\n"
	"  floor_z (m); warnings: [strings];\n"
	"  with --objects, objects: [{id, name, category, motion (\"static\"|\"dynamic\"),\n"
	"    center: [x,y,z], half_extents: [x,y,z]}] (world frame, m).\n"
	"Times are device ns; the world is +Z up, metres.\n"
	"\n"
	"exit status: 0 ok, 1 the recording could not be loaded, 2 usage error\n";

/* ======================= Gaze coverage ======================= */

/* Rays whose first box hit lies within INSPECT_GAZE_RANGE_M. */
static size_t gaze_on_objects(const struct recording *rec)
{
	size_t i, j, hits = 0;

	for (i = 0; i < rec->ngaze; i++) {
		struct ray r;

		glm_vec3_copy(rec->gaze[i].o, r.o);
		glm_vec3_copy(rec->gaze[i].d, r.d);
		for (j = 0; j < rec->nobjects; j++) {
			struct obb b;
			float t;

			recording_object_box_at(rec, j, rec->gaze[i].t_ns, &b);
			if (ray_obb(&r, &b, INSPECT_GAZE_RANGE_M, &t)) {
				hits++;
				break;
			}
		}
	}
	return hits;
}

/* Distinct action goals in order of first use (pointers into rec). */
static size_t action_goals(const struct recording *rec, const char **goals)
{
	size_t i, j, n = 0;

	for (i = 0; i < rec->nactions; i++) {
		const char *g = rec->actions[i].goal;

		if (!g)
			continue;
		for (j = 0; j < n; j++)
			if (!strcmp(goals[j], g))
				break;
		if (j == n)
			goals[n++] = g;
	}
	return n;
}

static double span_s(const struct rec_stream_info *si)
{
	return si->count ? (double)(si->t_last - si->t_first) / 1e9 : 0;
}

/* ======================= Text output ======================= */

/* Prints s in double quotes with control bytes, quotes and backslashes escaped. */
static void put_quoted(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch == '\n')
			fputs("\\n", f);
		else if (ch == '\t')
			fputs("\\t", f);
		else if (ch < 0x20 || ch == 0x7f)
			fprintf(f, "\\x%02x", ch);
		else
			fputc(ch, f);
	}
	fputc('"', f);
}

static void put_stream(const char *label, const struct rec_stream_info *si, const char *unit)
{
	printf("%-13s %zu %s", label, si->count, unit);
	if (si->count)
		printf(", %.3f s, %.2f Hz", span_s(si), si->rate_hz);
	if (si->file)
		printf(" (%s)", si->file);
	putchar('\n');
}

static void print_text(const struct recording *rec, const char *path, bool with_objects)
{
	const char **goals = NULL;
	size_t i, nst = 0, ndyn = 0, hits = gaze_on_objects(rec), ngoals = 0;
	const char *w;

	for (i = 0; i < rec->nobjects; i++)
		if (rec->objects[i].motion == REC_STATIC)
			nst++;
		else
			ndyn++;
	printf("%-13s %s\n", "recording", path);
	printf("%-13s %s\n", "layout", rec->layout);
	printf("%-13s ", "id");
	put_quoted(stdout, rec->id);
	putchar('\n');
	printf("%-13s %.3f s (%" PRId64 " .. %" PRId64 " ns)\n", "span",
	       (double)(recording_t1(rec) - recording_t0(rec)) / 1e9, recording_t0(rec),
	       recording_t1(rec));
	put_stream("trajectory", &rec->info_traj, "poses");
	put_stream("gaze", &rec->info_gaze, "rays");
	printf("%-13s %zu rows in the source, %zu rays with a pose", "", rec->gaze_rows,
	       rec->ngaze);
	if (rec->gaze_schema)
		printf(", schema %s", rec->gaze_schema);
	putchar('\n');
	if (rec->ngaze)
		printf("%-13s %zu of %zu rays hit an object box within %.0f m (%.1f%%)\n", "", hits,
		       rec->ngaze, (double)INSPECT_GAZE_RANGE_M,
		       100.0 * (double)hits / (double)rec->ngaze);
	put_stream("object poses", &rec->info_objects, "samples");
	printf("%-13s %zu (%zu static, %zu dynamic)\n", "objects", rec->nobjects, nst, ndyn);
	put_stream("actions", &rec->info_actions, "actions");
	if (rec->nactions) {
		goals = malloc(rec->nactions * sizeof(*goals));
		if (goals)
			ngoals = action_goals(rec, goals);
	}
	printf("%-13s %zu", "goals", ngoals);
	for (i = 0; i < ngoals; i++) {
		fputs(i ? ", " : ": ", stdout);
		put_quoted(stdout, goals[i]);
	}
	putchar('\n');
	free(goals);
	printf("%-13s %s %dx%d, fov %.1f deg, fx %.2f fy %.2f cx %.2f cy %.2f\n", "camera",
	       rec->camera.model == REC_CAM_FISHEYE ? "fisheye" : "pinhole", rec->camera.width,
	       rec->camera.height, (double)rec->camera.fov_deg, (double)rec->camera.fx,
	       (double)rec->camera.fy, (double)rec->camera.cx, (double)rec->camera.cy);
	if (rec->video.path) {
		struct video *v = NULL;
		struct video_info vi;

		printf("%-13s ", "video");
		put_quoted(stdout, rec->video.path);
		if (video_open(rec, &v)) {
			printf(", cannot be opened: %s\n", err_msg());
		} else {
			video_get_info(v, &vi);
			printf(" (%s), %zu frames, %.3f s (%" PRId64 " .. %" PRId64 " ns), %dx%d%s",
			       vi.kind, vi.nframes, (double)(vi.t_last_ns - vi.t_first_ns) / 1e9,
			       vi.t_first_ns, vi.t_last_ns, vi.width, vi.height,
			       vi.rotated ? " upright" : "");
			if (vi.fps > 0)
				printf(", %.2f fps", vi.fps);
			putchar('\n');
			video_close(v);
		}
	}
	printf("%-13s z = %.3f m\n", "floor", (double)rec->floor_z);
	if (!rec->warnings) {
		printf("%-13s none\n", "warnings");
	} else {
		printf("warnings\n");
		for (w = rec->warnings; *w;) {
			size_t n = strcspn(w, "\n");

			printf("  %.*s\n", (int)n, w);
			w += n + (w[n] == '\n');
		}
	}
	if (!with_objects)
		return;
	printf("objects (id, name, category, motion, world centre, half-extents at t0):\n");
	for (i = 0; i < rec->nobjects; i++) {
		const struct rec_object *o = &rec->objects[i];
		struct obb b;

		recording_object_box_at(rec, i, recording_t0(rec), &b);
		fputs("  ", stdout);
		put_quoted(stdout, o->id);
		putchar(' ');
		put_quoted(stdout, o->name);
		putchar(' ');
		put_quoted(stdout, o->category);
		printf(" %s (%.3f, %.3f, %.3f) (%.3f, %.3f, %.3f)\n",
		       o->motion == REC_STATIC ? "static" : "dynamic", (double)b.c[0],
		       (double)b.c[1], (double)b.c[2], (double)b.h[0], (double)b.h[1],
		       (double)b.h[2]);
	}
}

/* ======================= JSON output ======================= */

/* An exact int64 number (cJSON numbers are doubles). */
static cJSON *json_i64(int64_t v)
{
	char s[32];

	snprintf(s, sizeof(s), "%" PRId64, v);
	return cJSON_CreateRaw(s);
}

static cJSON *json_stream(const struct rec_stream_info *si)
{
	cJSON *o = cJSON_CreateObject();

	if (!o)
		return NULL;
	cJSON_AddItemToObject(o, "file",
			      si->file ? cJSON_CreateString(si->file) : cJSON_CreateNull());
	cJSON_AddNumberToObject(o, "count", (double)si->count);
	cJSON_AddItemToObject(o, "t_first_ns", json_i64(si->t_first));
	cJSON_AddItemToObject(o, "t_last_ns", json_i64(si->t_last));
	cJSON_AddNumberToObject(o, "span_s", span_s(si));
	cJSON_AddNumberToObject(o, "rate_hz", si->rate_hz);
	return o;
}

static cJSON *json_vec3(const vec3 v)
{
	double d[3] = { v[0], v[1], v[2] };

	return cJSON_CreateDoubleArray(d, 3);
}

/* The video stream as the decoder sees it, or {error}. */
static cJSON *json_video(const struct recording *rec)
{
	cJSON *o = cJSON_CreateObject();
	struct video *v = NULL;
	struct video_info vi;

	if (!o)
		return NULL;
	if (video_open(rec, &v)) {
		cJSON_AddStringToObject(o, "error", err_msg());
		return o;
	}
	video_get_info(v, &vi);
	cJSON_AddStringToObject(o, "file", vi.file);
	cJSON_AddStringToObject(o, "kind", vi.kind);
	cJSON_AddNumberToObject(o, "frames", (double)vi.nframes);
	cJSON_AddItemToObject(o, "t_first_ns", json_i64(vi.t_first_ns));
	cJSON_AddItemToObject(o, "t_last_ns", json_i64(vi.t_last_ns));
	cJSON_AddNumberToObject(o, "width", vi.width);
	cJSON_AddNumberToObject(o, "height", vi.height);
	cJSON_AddNumberToObject(o, "fps", vi.fps);
	cJSON_AddBoolToObject(o, "rotated", vi.rotated);
	video_close(v);
	return o;
}

/* The gaze stream with its schema, rows, rays and the share of them on an object. */
static cJSON *json_gaze(const struct recording *rec)
{
	size_t hits = gaze_on_objects(rec);
	cJSON *o = json_stream(&rec->info_gaze);

	if (o) {
		cJSON_AddItemToObject(o, "schema",
				      rec->gaze_schema ? cJSON_CreateString(rec->gaze_schema)
						       : cJSON_CreateNull());
		cJSON_AddNumberToObject(o, "rows", (double)rec->gaze_rows);
		cJSON_AddNumberToObject(o, "rays", (double)rec->ngaze);
		cJSON_AddNumberToObject(o, "rays_on_object", (double)hits);
		cJSON_AddNumberToObject(o, "share_on_object",
					rec->ngaze ? (double)hits / (double)rec->ngaze : 0.0);
	}
	return o;
}

/* {total, static, dynamic}: the objects by motion. */
static cJSON *json_object_counts(const struct recording *rec)
{
	cJSON *o = cJSON_CreateObject();
	size_t i, nst = 0, ndyn = 0;

	for (i = 0; i < rec->nobjects; i++)
		if (rec->objects[i].motion == REC_STATIC)
			nst++;
		else
			ndyn++;
	if (o) {
		cJSON_AddNumberToObject(o, "total", (double)rec->nobjects);
		cJSON_AddNumberToObject(o, "static", (double)nst);
		cJSON_AddNumberToObject(o, "dynamic", (double)ndyn);
	}
	return o;
}

/* The actions stream with its goals, to *out. Returns -1 when out of memory. */
static int json_actions(const struct recording *rec, cJSON **out)
{
	cJSON *o = json_stream(&rec->info_actions), *arr;
	const char **goals = NULL;
	size_t i, ngoals = 0;

	if (rec->nactions) {
		goals = malloc(rec->nactions * sizeof(*goals));
		if (!goals) {
			cJSON_Delete(o);
			return -1;
		}
		ngoals = action_goals(rec, goals);
	}
	arr = cJSON_CreateArray();
	for (i = 0; arr && i < ngoals; i++)
		cJSON_AddItemToArray(arr, cJSON_CreateString(goals[i]));
	cJSON_AddItemToObject(o, "goals", arr);
	free(goals);
	*out = o;
	return 0;
}

/* The camera model and intrinsics. */
static cJSON *json_camera(const struct recording *rec)
{
	cJSON *o = cJSON_CreateObject();

	if (o) {
		cJSON_AddStringToObject(o, "model",
					rec->camera.model == REC_CAM_FISHEYE ? "fisheye"
									     : "pinhole");
		cJSON_AddNumberToObject(o, "width", rec->camera.width);
		cJSON_AddNumberToObject(o, "height", rec->camera.height);
		cJSON_AddNumberToObject(o, "fx", rec->camera.fx);
		cJSON_AddNumberToObject(o, "fy", rec->camera.fy);
		cJSON_AddNumberToObject(o, "cx", rec->camera.cx);
		cJSON_AddNumberToObject(o, "cy", rec->camera.cy);
		cJSON_AddNumberToObject(o, "fov_deg", rec->camera.fov_deg);
	}
	return o;
}

/* The recording's video {path, t0_ns, fps, stream}, or null without one. */
static cJSON *json_video_entry(const struct recording *rec)
{
	cJSON *o;

	if (!rec->video.path)
		return cJSON_CreateNull();
	o = cJSON_CreateObject();
	if (o) {
		cJSON_AddStringToObject(o, "path", rec->video.path);
		cJSON_AddItemToObject(o, "t0_ns", json_i64(rec->video.t0_ns));
		cJSON_AddNumberToObject(o, "fps", rec->video.fps);
		cJSON_AddItemToObject(o, "stream", json_video(rec));
	}
	return o;
}

/* The warnings, one string per line, to *out. Returns -1 when out of memory. */
static int json_warnings(const struct recording *rec, cJSON **out)
{
	cJSON *arr = cJSON_CreateArray();
	const char *w;

	for (w = rec->warnings; arr && w && *w;) {
		size_t n = strcspn(w, "\n");
		char *line = strndup(w, n);

		if (!line) {
			cJSON_Delete(arr);
			return -1;
		}
		cJSON_AddItemToArray(arr, cJSON_CreateString(line));
		free(line);
		w += n + (w[n] == '\n');
	}
	*out = arr;
	return 0;
}

/*
 * The objects with their boxes at the recording's start, to *out. Returns
 * -1 when out of memory.
 */
static int json_objects(const struct recording *rec, cJSON **out)
{
	cJSON *arr = cJSON_CreateArray(), *o;
	size_t i;

	for (i = 0; arr && i < rec->nobjects; i++) {
		const struct rec_object *ob = &rec->objects[i];
		struct obb b;

		recording_object_box_at(rec, i, recording_t0(rec), &b);
		o = cJSON_CreateObject();
		if (!o) {
			cJSON_Delete(arr);
			return -1;
		}
		cJSON_AddStringToObject(o, "id", ob->id);
		cJSON_AddStringToObject(o, "name", ob->name);
		cJSON_AddStringToObject(o, "category", ob->category);
		cJSON_AddStringToObject(o, "motion",
					ob->motion == REC_STATIC ? "static" : "dynamic");
		cJSON_AddItemToObject(o, "center", json_vec3(b.c));
		cJSON_AddItemToObject(o, "half_extents", json_vec3(b.h));
		cJSON_AddItemToArray(arr, o);
	}
	*out = arr;
	return 0;
}

static int print_json(const struct recording *rec, const char *path, bool with_objects)
{
	cJSON *root = cJSON_CreateObject(), *o;
	char *text = NULL;
	int rc = CMD_FAILED;

	if (!root)
		goto out;
	cJSON_AddStringToObject(root, "path", path);
	cJSON_AddStringToObject(root, "layout", rec->layout);
	cJSON_AddStringToObject(root, "id", rec->id);
	cJSON_AddItemToObject(root, "t0_ns", json_i64(recording_t0(rec)));
	cJSON_AddItemToObject(root, "t1_ns", json_i64(recording_t1(rec)));
	cJSON_AddNumberToObject(root, "duration_s",
				(double)(recording_t1(rec) - recording_t0(rec)) / 1e9);
	cJSON_AddItemToObject(root, "trajectory", json_stream(&rec->info_traj));
	cJSON_AddItemToObject(root, "gaze", json_gaze(rec));
	cJSON_AddItemToObject(root, "object_poses", json_stream(&rec->info_objects));
	cJSON_AddItemToObject(root, "object_counts", json_object_counts(rec));
	if (json_actions(rec, &o))
		goto out;
	cJSON_AddItemToObject(root, "actions", o);
	cJSON_AddItemToObject(root, "camera", json_camera(rec));
	cJSON_AddItemToObject(root, "video", json_video_entry(rec));
	cJSON_AddNumberToObject(root, "floor_z", rec->floor_z);
	if (json_warnings(rec, &o))
		goto out;
	cJSON_AddItemToObject(root, "warnings", o);
	if (with_objects) {
		if (json_objects(rec, &o))
			goto out;
		cJSON_AddItemToObject(root, "objects", o);
	}
	text = cJSON_Print(root);
	if (!text)
		goto out;
	puts(text);
	rc = CMD_OK;
out:
	if (rc)
		error("out of memory while printing JSON");
	cJSON_free(text);
	cJSON_Delete(root);
	return rc;
}

/* ======================= The command ======================= */

int cmd_inspect(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "objects", no_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct recording *rec = NULL;
	bool json = false, objects = false;
	int c, rc;

	if (cmd_wants_help(argc, argv)) {
		fputs(inspect_usage, stdout);
		return CMD_OK;
	}
	optind = 1;
	opterr = 0;
	for (;;) {
		c = getopt_long(argc, argv, "h", opts, NULL);
		if (c == -1)
			break;
		switch (c) {
		case 'j': json = true; break;
		case 'o': objects = true; break;
		case 'h': fputs(inspect_usage, stdout); return CMD_OK;
		default:
			error("inspect: unknown option '%s'", argv[optind - 1]);
			fputs(inspect_usage, stderr);
			return CMD_USAGE;
		}
	}
	if (argc - optind != 1) {
		error(argc - optind ? "inspect: give exactly one PATH" : "inspect: missing PATH");
		fputs(inspect_usage, stderr);
		return CMD_USAGE;
	}
	rc = recording_load(argv[optind], REC_LAYOUT_AUTO, &rec);
	if (rc) {
		error_code(rc, argv[optind]);
		return CMD_FAILED;
	}
	if (json) {
		rc = print_json(rec, argv[optind], objects);
	} else {
		print_text(rec, argv[optind], objects);
		rc = CMD_OK;
	}
	recording_free(rec);
	return rc;
}
