/* SPDX-License-Identifier: MIT */
/*
 * Writes a synthetic recording as a native proxima-recording/1 folder
 * (schemas/proxima-recording.schema.json) with fixed number formats, so
 * the same recording always gives the same bytes.
 */
#include "synth.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "banned.h"
#include "err.h"
#include "render.h"

#define PATH_CAP 4096

/* ======================= Folder ======================= */

/* mkdir -p: creates dir and its missing parents. */
static int make_dirs(const char *dir)
{
	char p[PATH_CAP];
	size_t n = strlen(dir), i;

	if (n == 0 || n >= sizeof(p))
		return err_set(ENG_EINVAL, "'%s': bad folder name", dir);
	memcpy(p, dir, n + 1);
	for (i = 1; i <= n; i++) {
		if (p[i] != '/' && p[i] != 0)
			continue;
		p[i] = 0;
		if (mkdir(p, 0777) && errno != EEXIST) {
			int e = errno;

			return err_set(ENG_EIO, "cannot create '%s': %s", p, strerror(e));
		}
		p[i] = i < n ? '/' : 0;
	}
	return 0;
}

/* Fails unless dir is missing, empty, or force is set; creates it. */
static int prepare_dir(const char *dir, bool force)
{
	struct stat st;
	DIR *d;
	struct dirent *e;
	bool empty = true;

	if (stat(dir, &st)) {
		int er = errno;

		if (er != ENOENT)
			return err_set(ENG_EIO, "cannot access '%s': %s", dir, strerror(er));
		return make_dirs(dir);
	}
	if (!S_ISDIR(st.st_mode))
		return err_set(ENG_EINVAL, "'%s' exists and is not a folder", dir);
	d = opendir(dir);
	if (!d) {
		int er = errno;

		return err_set(ENG_EIO, "cannot read folder '%s': %s", dir, strerror(er));
	}
	while (empty) {
		/* cppcheck-suppress readdirCalled ; readdir_r is deprecated, d is ours alone */
		e = readdir(d);
		if (!e)
			break;
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			empty = false;
	}
	closedir(d);
	if (!empty && !force)
		return err_set(ENG_EINVAL, "'%s' is not empty (use --force to write into it)", dir);
	return 0;
}

/* ======================= Files ======================= */

struct out {
	FILE *f;
	char path[PATH_CAP];  /* final name */
	char tmp[PATH_CAP];   /* name while writing */
	char buf[1 << 16];
};

static int out_open(struct out *o, const char *dir, const char *name)
{
	int n1 = snprintf(o->path, sizeof(o->path), "%s/%s", dir, name);
	int n2 = snprintf(o->tmp, sizeof(o->tmp), "%s/.%s.tmp", dir, name);

	if (n1 < 0 || n2 < 0 || (size_t)n2 >= sizeof(o->tmp))
		return err_set(ENG_EINVAL, "'%s': path too long", dir);
	o->f = fopen(o->tmp, "w");
	if (!o->f) {
		int e = errno;

		return err_set(ENG_EIO, "cannot write '%s': %s", o->tmp, strerror(e));
	}
	setvbuf(o->f, o->buf, _IOFBF, sizeof(o->buf));
	return 0;
}

__attribute__((format(printf, 2, 3)))
static void outf(struct out *o, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(o->f, fmt, ap);
	va_end(ap);
}

/* Closes, checks for write errors and renames into place. */
static int out_close(struct out *o)
{
	int bad = ferror(o->f), e = errno;

	if (fclose(o->f))
		bad = 1, e = errno;
	o->f = NULL;
	if (bad) {
		remove(o->tmp);
		return err_set(ENG_EIO, "cannot write '%s': %s", o->tmp, strerror(e));
	}
	if (rename(o->tmp, o->path)) {
		e = errno;
		remove(o->tmp);
		return err_set(ENG_EIO, "cannot rename '%s' to '%s': %s", o->tmp, o->path,
			       strerror(e));
	}
	return 0;
}

static void out_abort(struct out *o)
{
	if (o->f) {
		fclose(o->f);
		o->f = NULL;
		remove(o->tmp);
	}
}

/* A JSON string (our names are plain, but quote and control bytes are escaped). */
static void put_str(struct out *o, const char *s)
{
	fputc('"', o->f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			outf(o, "\\%c", c);
		else if (c < 0x20)
			outf(o, "\\u%04x", c);
		else
			fputc(c, o->f);
	}
	fputc('"', o->f);
}

static const char *hand_name(enum rec_hand h)
{
	switch (h) {
	case REC_HAND_LEFT: return "left";
	case REC_HAND_RIGHT: return "right";
	case REC_HAND_BOTH: return "both";
	default: return "none";
	}
}

static void put_pose_csv(struct out *o, const struct pose *p)
{
	outf(o, "%.6f,%.6f,%.6f,%.9f,%.9f,%.9f,%.9f\n", (double)p->t[0], (double)p->t[1],
	     (double)p->t[2], (double)p->q[0], (double)p->q[1], (double)p->q[2], (double)p->q[3]);
}

/* The video entry of recording.json, or none when v is NULL. */
struct video_entry {
	int64_t t0_ns;
	double fps;
};

static void write_recording_json(struct out *o, const struct synth_recording *s,
				 const struct video_entry *v)
{
	const struct rec_camera *c = &s->camera;

	outf(o, "{\n  \"format\": \"proxima-recording/1\",\n  \"id\": ");
	put_str(o, s->id);
	outf(o, ",\n  \"up\": [0, 0, 1],\n  \"scene\": \"%s\",\n", synth_scene_name(s->params.scene));
	outf(o, "  \"camera\": { \"model\": \"pinhole\", \"width\": %d, \"height\": %d, "
	     "\"fx\": %.1f, \"fy\": %.1f, \"cx\": %.1f, \"cy\": %.1f },\n", c->width, c->height,
	     (double)c->fx, (double)c->fy, (double)c->cx, (double)c->cy);
	if (v)
		outf(o, "  \"video\": { \"path\": \"video.mp4\", \"t0_ns\": %" PRId64
		     ", \"fps\": %.6g },\n", v->t0_ns, v->fps);
	outf(o, "  \"streams\": {\n"
	     "    \"trajectory\": \"trajectory.csv\",\n"
	     "    \"gaze\": \"gaze.csv\",\n"
	     "    \"objects\": \"objects.json\",\n"
	     "    \"object_poses\": \"object_poses.csv\",\n"
	     "    \"actions\": \"actions.json\"\n"
	     "  }\n}\n");
}

static void write_trajectory(struct out *o, const struct synth_recording *s)
{
	size_t i;

	outf(o, "t_ns,tx,ty,tz,qx,qy,qz,qw\n");
	for (i = 0; i < s->ntraj; i++) {
		outf(o, "%" PRId64 ",", s->traj[i].t_ns);
		put_pose_csv(o, &s->traj[i].pose);
	}
}

static void write_gaze(struct out *o, const struct synth_recording *s)
{
	size_t i;

	outf(o, "t_ns,ox,oy,oz,dx,dy,dz,depth_m\n");
	for (i = 0; i < s->ngaze; i++) {
		const struct synth_gaze *g = &s->gaze[i];

		outf(o, "%" PRId64 ",%.6f,%.6f,%.6f,%.7f,%.7f,%.7f,%.4f\n", g->t_ns, (double)g->o[0],
		     (double)g->o[1], (double)g->o[2], (double)g->d[0], (double)g->d[1],
		     (double)g->d[2], (double)g->depth_m);
	}
}

static void write_objects(struct out *o, const struct synth_recording *s)
{
	size_t i;

	outf(o, "{\n  \"objects\": [\n");
	for (i = 0; i < s->nobjects; i++) {
		const struct synth_object *b = &s->objects[i];

		outf(o, "    { \"id\": ");
		put_str(o, b->id);
		outf(o, ", \"name\": ");
		put_str(o, b->name);
		outf(o, ", \"category\": ");
		put_str(o, b->category);
		outf(o, ", \"half_extents\": [%.6f, %.6f, %.6f], \"motion\": \"%s\",\n"
		     "      \"pose\": { \"t\": [%.6f, %.6f, %.6f], \"q\": [%.9f, %.9f, %.9f, %.9f] } }%s\n",
		     (double)b->half[0], (double)b->half[1], (double)b->half[2],
		     b->motion == REC_DYNAMIC ? "dynamic" : "static", (double)b->pose.t[0],
		     (double)b->pose.t[1], (double)b->pose.t[2], (double)b->pose.q[0],
		     (double)b->pose.q[1], (double)b->pose.q[2], (double)b->pose.q[3],
		     i + 1 < s->nobjects ? "," : "");
	}
	outf(o, "  ]\n}\n");
}

static void write_object_poses(struct out *o, const struct synth_recording *s)
{
	size_t i, j;

	outf(o, "object_id,t_ns,tx,ty,tz,qx,qy,qz,qw\n");
	for (i = 0; i < s->nobjects; i++) {
		const struct synth_object *b = &s->objects[i];

		for (j = 0; j < b->pose_count; j++) {
			const struct pose_sample *ps = &s->obj_poses[b->pose_first + j];

			outf(o, "%s,%" PRId64 ",", b->id, ps->t_ns);
			put_pose_csv(o, &ps->pose);
		}
	}
}

static void write_actions(struct out *o, const struct synth_recording *s)
{
	size_t i;

	outf(o, "{\n  \"actions\": [\n");
	for (i = 0; i < s->nactions; i++) {
		const struct synth_action *a = &s->actions[i];

		outf(o, "    { \"start_ns\": %" PRId64 ", \"end_ns\": %" PRId64 ", \"verb\": ",
		     a->start_ns, a->end_ns);
		put_str(o, a->verb);
		outf(o, ", \"object\": ");
		put_str(o, s->objects[a->object].id);
		outf(o, ", \"hand\": \"%s\",\n      \"description\": ", hand_name(a->hand));
		put_str(o, a->description);
		outf(o, ", \"goal\": ");
		put_str(o, a->goal);
		outf(o, " }%s\n", i + 1 < s->nactions ? "," : "");
	}
	outf(o, "  ]\n}\n");
}

/* Renders the video into a temporary file of dir and renames it to video.mp4. */
static int write_video(const struct synth_recording *s, const char *dir,
		       const struct synth_write_opts *o, struct synth_write_stats *stats)
{
	struct render_video_opts vo = { o->fps > 0 ? o->fps : SYNTH_VIDEO_FPS, o->labels,
					o->threads, RENDER_DEFAULT_CRF };
	struct render_video_stats vs;
	char path[PATH_CAP], tmp[PATH_CAP];
	int n1 = snprintf(path, sizeof(path), "%s/video.mp4", dir);
	int n2 = snprintf(tmp, sizeof(tmp), "%s/.video.mp4.tmp", dir);
	int rc;

	if (n1 < 0 || n2 < 0 || (size_t)n2 >= sizeof(tmp))
		return err_set(ENG_EINVAL, "'%s': path too long", dir);
	rc = render_write_video(s, tmp, &vo, &vs);
	if (rc) {
		remove(tmp);
		return rc;
	}
	if (rename(tmp, path)) {
		int e = errno;

		remove(tmp);
		return err_set(ENG_EIO, "cannot rename '%s' to '%s': %s", tmp, path, strerror(e));
	}
	stats->frames = vs.frames;
	stats->fps = vo.fps;
	stats->seconds = vs.seconds;
	stats->threads = vs.threads;
	return 0;
}

int synth_write(const struct synth_recording *s, const char *dir, unsigned flags)
{
	struct synth_write_opts o = { flags, false, 0, false, 0 };

	return synth_write_with(s, dir, &o, NULL);
}

int synth_write_with(const struct synth_recording *s, const char *dir,
		     const struct synth_write_opts *opt, struct synth_write_stats *stats)
{
	static const char *const names[] = { "recording.json", "trajectory.csv", "gaze.csv",
					     "objects.json", "object_poses.csv", "actions.json" };
	struct synth_write_stats st = { 0, 0, 0, 0 };
	struct video_entry v;
	struct out *o;
	size_t i;
	int rc;

	if (opt->video && opt->fps != 0 &&
	    !(opt->fps >= SYNTH_VIDEO_FPS_MIN && opt->fps <= SYNTH_VIDEO_FPS_MAX))
		return err_set(ENG_EINVAL, "video: fps %g is not in [%g, %g]", opt->fps,
			       SYNTH_VIDEO_FPS_MIN, SYNTH_VIDEO_FPS_MAX);
	rc = prepare_dir(dir, opt->flags & SYNTH_WRITE_FORCE);
	if (rc)
		return rc;
	o = calloc(1, sizeof(*o));
	if (!o)
		return err_set(ENG_ENOMEM, "synth: out of memory");
	/*
	 * The stream files first, then the video, and recording.json last: a
	 * folder with it is complete.
	 */
	for (i = ARRAY_SIZE(names); i-- > 0;) {
		if (i == 0 && opt->video) {
			rc = write_video(s, dir, opt, &st);
			if (rc)
				break;
			v.t0_ns = s->traj[0].t_ns;
			v.fps = st.fps;
		}
		rc = out_open(o, dir, names[i]);
		if (rc)
			break;
		switch (i) {
		case 0: write_recording_json(o, s, opt->video ? &v : NULL); break;
		case 1: write_trajectory(o, s); break;
		case 2: write_gaze(o, s); break;
		case 3: write_objects(o, s); break;
		case 4: write_object_poses(o, s); break;
		default: write_actions(o, s); break;
		}
		rc = out_close(o);
		if (rc)
			break;
	}
	out_abort(o);
	free(o);
	if (!rc && stats)
		*stats = st;
	return rc;
}
