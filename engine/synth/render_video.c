/* SPDX-License-Identifier: MIT */
/*
 * The frames of a synthetic recording, rendered on every core (OpenMP
 * tasks, a batch at a time, while the previous batch is encoded), and the
 * MP4/H.264 writer they go to (libavformat, libavcodec with libx264,
 * libswscale). Encoding runs in one thread with bit-exact flags, so the
 * same frames give the same file.
 */
#include "render.h"

#include <math.h>
#include <omp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/imgutils.h>
#include <libavutil/log.h>
#include <libavutil/opt.h>
#include <libswscale/swscale.h>

#include "avdl.h"
#include "banned.h"
#include "err.h"

/* Frames rendered at once; two batches are in flight (one drawn, one encoded). */
#define BATCH 8
#define NSLOTS ((size_t)2 * BATCH)

/* ======================= Frame times ======================= */

size_t render_frame_count(const struct synth_recording *s, double fps)
{
	double span;

	if (!s->ntraj || !(fps > 0))
		return 0;
	span = (double)(s->traj[s->ntraj - 1].t_ns - s->traj[0].t_ns) / 1e9;
	return (size_t)floor(span * fps + 1e-9) + 1;
}

int64_t render_frame_time(const struct synth_recording *s, double fps, size_t i)
{
	return s->traj[0].t_ns + (int64_t)llround((double)i * 1e9 / fps);
}

/* ======================= The frame loop ======================= */

static int check_opts(const struct synth_recording *s, const struct render_video_opts *o)
{
	const struct rec_camera *c = &s->camera;

	if (!(o->fps >= SYNTH_VIDEO_FPS_MIN && o->fps <= SYNTH_VIDEO_FPS_MAX))
		return err_set(ENG_EINVAL, "video: fps %g is not in [%g, %g]", o->fps, SYNTH_VIDEO_FPS_MIN,
			       SYNTH_VIDEO_FPS_MAX);
	if (c->model != REC_CAM_PINHOLE)
		return err_set(ENG_EINVAL, "video: only a pinhole camera can be rendered");
	if (c->width < 2 || c->height < 2 || c->width > RENDER_MAX_DIM ||
	    c->height > RENDER_MAX_DIM || !(c->fx > 0) || !(c->fy > 0))
		return err_set(ENG_EINVAL, "video: camera %dx%d fx %g fy %g cannot be rendered",
			       c->width, c->height, (double)c->fx, (double)c->fy);
	if (!s->ntraj)
		return err_set(ENG_EINVAL, "video: the recording has no poses");
	return 0;
}

/* One frame slot: its image and the poses it was drawn with. */
struct slot {
	struct render_image im;
	struct pose *poses;
};

static void draw_frame(const struct synth_recording *s, const struct render_scene *sc,
		       const struct render_camera *cam, const struct render_video_opts *o,
		       size_t i, struct slot *sl)
{
	struct pose cp;

	render_synth_poses(s, render_frame_time(s, o->fps, i), &cp, sl->poses);
	render_draw(sc, cam, &cp, sl->poses, &sl->im);
	render_smooth(&sl->im);
	if (o->labels)
		render_draw_labels(sc, &sl->im);
}

int render_frames(const struct synth_recording *s, const struct render_video_opts *o,
		  render_sink_fn sink, void *ctx, struct render_video_stats *stats)
{
	struct render_scene *sc = NULL;
	struct slot slots[NSLOTS];
	struct render_camera cam;
	size_t n, nb, b, k;
	double t0 = omp_get_wtime();
	int threads, rc;

	memset(slots, 0, sizeof(slots));
	rc = check_opts(s, o);
	if (rc)
		return rc;
	cam.width = s->camera.width;
	cam.height = s->camera.height;
	cam.fx = s->camera.fx;
	cam.fy = s->camera.fy;
	cam.cx = s->camera.cx;
	cam.cy = s->camera.cy;
	rc = render_scene_from_synth(s, &sc);
	for (k = 0; k < NSLOTS && !rc; k++) {
		rc = render_image_init(&slots[k].im, cam.width, cam.height);
		if (!rc) {
			slots[k].poses = calloc(s->nobjects ? s->nobjects : 1, sizeof(struct pose));
			if (!slots[k].poses)
				rc = err_set(ENG_ENOMEM, "video: out of memory");
		}
	}
	if (rc)
		goto out;
	threads = o->threads > 0 ? o->threads : omp_get_max_threads();
	n = render_frame_count(s, o->fps);
	nb = (n + BATCH - 1) / BATCH;
	/*
	 * One thread hands out the frames of batch b as tasks, then encodes
	 * batch b - 1 while the others draw; the taskwait closes both. Each
	 * frame is drawn by one task into its own slot, so the pixels do not
	 * depend on the thread count.
	 */
#pragma omp parallel num_threads(threads) default(none) \
	shared(s, sc, cam, o, slots, n, nb, rc, sink, ctx) private(b, k)
#pragma omp single
	for (b = 0; b <= nb && !rc; b++) {
		for (k = b * BATCH; b < nb && k < n && k < (b + 1) * BATCH; k++) {
			struct slot *sl = &slots[(b & 1) * BATCH + k % BATCH];
			size_t i = k;

#pragma omp task default(none) firstprivate(sl, i) shared(s, sc, cam, o)
			draw_frame(s, sc, &cam, o, i, sl);
		}
		if (b > 0)
			for (k = (b - 1) * BATCH; k < n && k < b * BATCH && !rc; k++)
				rc = sink(ctx, k, &slots[((b - 1) & 1) * BATCH + k % BATCH].im);
#pragma omp taskwait
	}
	if (stats) {
		stats->frames = rc ? 0 : n;
		stats->t0_ns = s->traj[0].t_ns;
		stats->seconds = omp_get_wtime() - t0;
		stats->threads = threads;
	}
out:
	for (k = 0; k < NSLOTS; k++) {
		render_image_release(&slots[k].im);
		free(slots[k].poses);
	}
	render_scene_free(sc);
	return rc;
}

/* ======================= The encoder ======================= */

/* FFmpeg's last error-level message in this thread, for the error text (FFmpeg never prints). */
static _Thread_local char av_last[256];

static void av_log_quiet(void *avcl, int level, const char *fmt, va_list ap)
{
	size_t n;

	(void)avcl;
	if (level > AV_LOG_ERROR)
		return;
	vsnprintf(av_last, sizeof(av_last), fmt, ap);
	n = strlen(av_last);
	while (n && (av_last[n - 1] == '\n' || av_last[n - 1] == '.'))
		av_last[--n] = 0;
}

struct enc {
	const char *path;
	AVFormatContext *oc;
	AVCodecContext *cc;
	AVStream *st;
	struct SwsContext *sws;
	AVFrame *frame;
	AVPacket *pkt;
	bool header;          /* header written: a trailer is due */
};

/* ENG_EIO naming the path, the step and FFmpeg's reason. */
static int av_fail(const struct enc *e, const char *what, int averr)
{
	char buf[AV_ERROR_MAX_STRING_SIZE];

	av_strerror(averr, buf, sizeof(buf));
	if (av_last[0])
		return err_set(ENG_EIO, "'%s': %s: %s (%s)", e->path, what, buf, av_last);
	return err_set(ENG_EIO, "'%s': %s: %s", e->path, what, buf);
}

/* Sends frame (NULL: flush) and writes every packet the encoder has ready. */
static int enc_send(struct enc *e, const AVFrame *frame)
{
	int r = avcodec_send_frame(e->cc, frame);

	if (r < 0)
		return av_fail(e, "cannot encode a frame", r);
	for (;;) {
		r = avcodec_receive_packet(e->cc, e->pkt);
		if (r == AVERROR(EAGAIN) || r == AVERROR_EOF)
			return 0;
		if (r < 0)
			return av_fail(e, "cannot encode a frame", r);
		av_packet_rescale_ts(e->pkt, e->cc->time_base, e->st->time_base);
		e->pkt->stream_index = e->st->index;
		r = av_interleaved_write_frame(e->oc, e->pkt);
		if (r < 0)
			return av_fail(e, "cannot write", r);
	}
}

static int enc_frame(void *ctx, size_t i, const struct render_image *im)
{
	struct enc *e = ctx;
	const uint8_t *src[1] = { im->rgb };
	const int stride[1] = { 3 * im->width };
	int r = av_frame_make_writable(e->frame);

	if (r < 0)
		return av_fail(e, "cannot encode a frame", r);
	sws_scale(e->sws, src, stride, 0, im->height, e->frame->data, e->frame->linesize);
	e->frame->pts = (int64_t)i;
	return enc_send(e, e->frame);
}

static int enc_open(struct enc *e, const char *path, int w, int h,
		    const struct render_video_opts *o)
{
	const AVCodec *codec;
	AVRational fr = av_d2q(o->fps, 100000);
	AVDictionary *mux = NULL;
	char crf[16];
	int r;

	memset(e, 0, sizeof(*e));
	e->path = path;
	av_last[0] = 0;
	av_log_set_callback(av_log_quiet);
	codec = avcodec_find_encoder_by_name("libx264");
	if (!codec)
		return err_set(ENG_EIO, "'%s': this libavcodec has no libx264 encoder", path);
	r = avformat_alloc_output_context2(&e->oc, NULL, "mp4", path);
	if (r < 0)
		return av_fail(e, "cannot make an MP4 muxer", r);
	e->oc->flags |= AVFMT_FLAG_BITEXACT;
	e->cc = avcodec_alloc_context3(codec);
	e->frame = av_frame_alloc();
	e->pkt = av_packet_alloc();
	if (!e->cc || !e->frame || !e->pkt)
		return err_set(ENG_ENOMEM, "'%s': out of memory", path);
	e->cc->width = w;
	e->cc->height = h;
	e->cc->pix_fmt = AV_PIX_FMT_YUV420P;
	e->cc->time_base = av_inv_q(fr);
	e->cc->framerate = fr;
	/* A key frame every 5 s: a reader seeks to any time decoding 50 frames at most. */
	e->cc->gop_size = (int)lround(5 * o->fps);
	/* One encoder thread: x264's output depends on its thread count. */
	e->cc->thread_count = 1;
	e->cc->flags |= AV_CODEC_FLAG_BITEXACT;
	if (e->oc->oformat->flags & AVFMT_GLOBALHEADER)
		e->cc->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
	/* swscale's default RGB -> YUV is BT.601 limited range: say so. */
	e->cc->colorspace = AVCOL_SPC_SMPTE170M;
	e->cc->color_primaries = AVCOL_PRI_SMPTE170M;
	e->cc->color_trc = AVCOL_TRC_SMPTE170M;
	e->cc->color_range = AVCOL_RANGE_MPEG;
	snprintf(crf, sizeof(crf), "%d", o->crf);
	/* veryfast: on these flat-shaded frames as small as medium at a third of the time. */
	av_opt_set(e->cc->priv_data, "preset", "veryfast", 0);
	av_opt_set(e->cc->priv_data, "crf", crf, 0);
	r = avcodec_open2(e->cc, codec, NULL);
	if (r < 0)
		return av_fail(e, "cannot open the H.264 encoder", r);
	e->st = avformat_new_stream(e->oc, NULL);
	if (!e->st)
		return err_set(ENG_ENOMEM, "'%s': out of memory", path);
	r = avcodec_parameters_from_context(e->st->codecpar, e->cc);
	if (r < 0)
		return av_fail(e, "cannot set up the video stream", r);
	e->st->time_base = e->cc->time_base;
	e->st->avg_frame_rate = fr;
	e->st->r_frame_rate = fr;
	e->frame->format = AV_PIX_FMT_YUV420P;
	e->frame->width = w;
	e->frame->height = h;
	r = av_frame_get_buffer(e->frame, 0);
	if (r < 0)
		return av_fail(e, "cannot allocate a frame", r);
	e->sws = sws_getContext(w, h, AV_PIX_FMT_RGB24, w, h, AV_PIX_FMT_YUV420P,
				SWS_BILINEAR | SWS_ACCURATE_RND | SWS_BITEXACT, NULL, NULL, NULL);
	if (!e->sws)
		return err_set(ENG_ENOMEM, "'%s': cannot set up the colour conversion", path);
	r = avio_open(&e->oc->pb, path, AVIO_FLAG_WRITE);
	if (r < 0)
		return av_fail(e, "cannot create the file", r);
	/* The index (moov) before the frames, so a browser plays while loading. */
	av_dict_set(&mux, "movflags", "+faststart", 0);
	r = avformat_write_header(e->oc, &mux);
	av_dict_free(&mux);
	if (r < 0)
		return av_fail(e, "cannot write the MP4 header", r);
	e->header = true;
	return 0;
}

/* Flushes (when ok), writes the trailer and frees everything. */
static int enc_close(struct enc *e, bool ok)
{
	int rc = 0, r;

	if (ok && e->header) {
		rc = enc_send(e, NULL);
		if (!rc) {
			r = av_write_trailer(e->oc);
			if (r < 0)
				rc = av_fail(e, "cannot finish the file", r);
		}
	}
	if (e->oc && e->oc->pb) {
		r = avio_closep(&e->oc->pb);
		if (r < 0 && !rc && ok)
			rc = av_fail(e, "cannot close the file", r);
	}
	sws_freeContext(e->sws);
	av_frame_free(&e->frame);
	av_packet_free(&e->pkt);
	avcodec_free_context(&e->cc);
	avformat_free_context(e->oc);
	memset(e, 0, sizeof(*e));
	return rc;
}

int render_write_video(const struct synth_recording *s, const char *path,
		       const struct render_video_opts *o, struct render_video_stats *stats)
{
	struct enc e;
	int rc, rc2;

	rc = check_opts(s, o);
	if (rc)
		return rc;
	if ((s->camera.width & 1) || (s->camera.height & 1))
		return err_set(ENG_EINVAL, "video: H.264 needs an even width and height, not %dx%d",
			       s->camera.width, s->camera.height);
	if (o->crf < 0 || o->crf > 51)
		return err_set(ENG_EINVAL, "video: crf %d is not in [0, 51]", o->crf);
	rc = avdl_load();
	if (rc)
		return rc;
	rc = enc_open(&e, path, s->camera.width, s->camera.height, o);
	if (!rc)
		rc = render_frames(s, o, enc_frame, &e, stats);
	rc2 = enc_close(&e, !rc);
	return rc ? rc : rc2;
}
