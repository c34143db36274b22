/* SPDX-License-Identifier: MIT */
/*
 * Frames of a recording's video: container files through libavformat and
 * libavcodec, VRS files through vrs.h; scaling through libswscale, JPEG
 * writing and lossless rotation through libturbojpeg.
 */
#include "video.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/imgutils.h>
#include <libswscale/swscale.h>
#include <turbojpeg.h>

#include "avdl.h"
#include "banned.h"
#include "err.h"
#include "recording.h"
#include "vrs.h"

/* Seek again when the next time asked for is this far past the frame decoded. */
#define VIDEO_SEEK_GAP_S 2.0

/* Scaling and JPEG state with its buffers, one per thread. */
struct enc {
	struct SwsContext *sws;
	tjhandle tjc, tjd, tjt;
	uint8_t *yuv, *rgb, *rot;
	size_t yuv_cap, rgb_cap, rot_cap;
};

struct video {
	char *file;
	const char *kind;
	struct vrs_file *vrs;          /* a VRS source, or NULL */
	/* container sources */
	AVFormatContext *fmt;
	AVCodecContext *dec;
	int si;                        /* the video stream's index */
	AVRational tb;                 /* its time base */
	int64_t start_pts;             /* pts of its first frame */
	int64_t t0_ns;                 /* device time of the first frame */
	int64_t *table;                /* device time per frame, or NULL */
	size_t ntable;
	bool draining;                 /* the decoder was sent the end of stream */
	int nal_len;                   /* H.264 in MP4 (avcC): bytes of a NAL length, else 0 */
	struct video *twin;            /* a second decoder of the same file, or NULL */
	int64_t drop_before;           /* pts: disposable frames before it are not decoded */
	/* what it holds */
	size_t nframes;
	int64_t t_first, t_last;
	int width, height;             /* upright, full size */
	double fps;
	bool rotated;
	struct enc enc;                /* encoding state of the decoding thread */
};

/* One time asked for, in sorted order. */
struct req {
	int64_t t;
	size_t idx;   /* position in the caller's arrays */
};

static int cmp_req(const void *pa, const void *pb)
{
	const struct req *a = pa, *b = pb;

	if (a->t != b->t)
		return a->t < b->t ? -1 : 1;
	return (a->idx > b->idx) - (a->idx < b->idx);
}

static int av_fail(const struct video *v, int ret, const char *what)
{
	char b[128];

	av_strerror(ret, b, sizeof(b));
	return err_set(ret == AVERROR(ENOMEM) ? ENG_ENOMEM : ENG_EPARSE, "%s: %s: %s", v->file, what, b);
}

static int grow(uint8_t **p, size_t *cap, size_t n)
{
	uint8_t *q;

	if (n <= *cap)
		return 0;
	q = realloc(*p, n);
	if (!q)
		return ENG_ENOMEM;
	*p = q;
	*cap = n;
	return 0;
}

static void enc_release(struct enc *es)
{
	sws_freeContext(es->sws);
	if (es->tjc)
		tjDestroy(es->tjc);
	if (es->tjd)
		tjDestroy(es->tjd);
	if (es->tjt)
		tjDestroy(es->tjt);
	free(es->yuv);
	free(es->rgb);
	free(es->rot);
	memset(es, 0, sizeof(*es));
}

/* The size written for a w x h frame at most `want` wide: aspect kept, height even. */
static void out_size(int w, int h, int want, int *ow, int *oh)
{
	if (want <= 0)
		want = VIDEO_DEFAULT_WIDTH;
	if (want >= w) {
		*ow = w;
		*oh = h;
		return;
	}
	*ow = want;
	*oh = (int)lround((double)h * want / w / 2.0) * 2;
	if (*oh < 2)
		*oh = 2;
}

static int write_file(const char *path, const uint8_t *b, size_t n)
{
	FILE *fp = fopen(path, "wbe");
	int e;

	if (!fp) {
		e = errno;
		return err_set(ENG_EIO, "cannot write '%s': %s", path, strerror(e));
	}
	if (fwrite(b, 1, n, fp) != n) {
		e = errno;
		fclose(fp);
		return err_set(ENG_EIO, "cannot write '%s': %s", path, strerror(e));
	}
	if (fclose(fp)) {
		e = errno;
		return err_set(ENG_EIO, "cannot write '%s': %s", path, strerror(e));
	}
	return 0;
}

/*
 * Scales the picture data/linesize (fmt, w x h, full_range says its YUV
 * range) to ow x oh and compresses it as a 4:2:0 JPEG into *jpg (a
 * tjAlloc buffer, reused) of *jlen bytes.
 */
static int encode(const struct video *v, struct enc *es, const uint8_t *const data[4],
		  const int linesize[4],
		  enum AVPixelFormat fmt, bool full_range, int w, int h, int ow, int oh,
		  unsigned char **jpg, unsigned long *jlen)
{
	int cw = (ow + 1) / 2, ch = (oh + 1) / 2, strides[3] = { ow, cw, cw };
	uint8_t *dst[4];
	int dls[4] = { ow, cw, cw, 0 };
	const unsigned char *planes[3];
	int rc;

	rc = grow(&es->yuv, &es->yuv_cap, (size_t)ow * (size_t)oh + 2 * (size_t)cw * (size_t)ch);
	if (rc)
		return rc;
	es->sws = sws_getCachedContext(es->sws, w, h, fmt, ow, oh, AV_PIX_FMT_YUVJ420P, SWS_BILINEAR,
				      NULL, NULL, NULL);
	if (!es->sws)
		return err_set(ENG_EINVAL, "%s: cannot convert %dx%d %s frames", v->file, w, h,
			       av_get_pix_fmt_name(fmt) ? av_get_pix_fmt_name(fmt) : "?");
	sws_setColorspaceDetails(es->sws, sws_getCoefficients(SWS_CS_DEFAULT), full_range ? 1 : 0,
				 sws_getCoefficients(SWS_CS_DEFAULT), 1, 0, 1 << 16, 1 << 16);
	dst[0] = es->yuv;
	dst[1] = es->yuv + (size_t)ow * (size_t)oh;
	dst[2] = dst[1] + (size_t)cw * (size_t)ch;
	dst[3] = NULL;
	sws_scale(es->sws, data, linesize, 0, h, dst, dls);
	planes[0] = dst[0];
	planes[1] = dst[1];
	planes[2] = dst[2];
	if (!es->tjc)
		es->tjc = tjInitCompress();
	if (!es->tjc ||
	    tjCompressFromYUVPlanes(es->tjc, planes, ow, strides, oh, TJSAMP_420, jpg, jlen,
				    VIDEO_JPEG_QUALITY, 0))
		return err_set(ENG_EIO, "%s: JPEG compression failed: %s", v->file,
			       es->tjc ? tjGetErrorStr2(es->tjc) : "no memory");
	return 0;
}

/* ======================= Container sources ======================= */

/* Device time of the frame at pts. */
static int64_t dev_time(const struct video *v, int64_t pts)
{
	double rel = (double)(pts - v->start_pts) * av_q2d(v->tb);

	if (v->ntable && v->fps > 0) {
		long i = lround(rel * v->fps), last = (long)v->ntable - 1;

		if (i < 0)
			return v->table[0] + llround((double)i * 1e9 / v->fps);
		if (i <= last)
			return v->table[i];
		return v->table[last] + llround((double)(i - last) * 1e9 / v->fps);
	}
	return v->t0_ns + llround(rel * 1e9);
}

static long frame_index(const struct video *v, int64_t pts)
{
	double rel = (double)(pts - v->start_pts) * av_q2d(v->tb);

	return v->fps > 0 ? lround(rel * v->fps) : -1;
}

/* The pts where device time t lies (for seeking). */
static int64_t pts_of(const struct video *v, int64_t t)
{
	double rel;

	if (v->ntable && v->fps > 0) {
		size_t lo = 0, hi = v->ntable;

		while (lo < hi) { /* the first entry at or after t */
			size_t mid = lo + (hi - lo) / 2;

			if (v->table[mid] < t)
				lo = mid + 1;
			else
				hi = mid;
		}
		rel = (double)lo / v->fps;
		if (lo == v->ntable)
			rel += (double)(t - v->table[v->ntable - 1]) / 1e9;
	} else {
		rel = (double)(t - v->t0_ns) / 1e9;
	}
	if (rel < 0)
		rel = 0;
	return v->start_pts + (int64_t)llround(rel / av_q2d(v->tb));
}

/* Counts the stream's packets when the container does not say (WebM). */
static int count_packets(struct video *v, int64_t *max_pts)
{
	AVPacket *pkt = av_packet_alloc();
	int ret;

	if (!pkt)
		return ENG_ENOMEM;
	*max_pts = AV_NOPTS_VALUE;
	v->nframes = 0;
	while ((ret = av_read_frame(v->fmt, pkt)) >= 0) {
		if (pkt->stream_index == v->si) {
			v->nframes++;
			if (pkt->pts != AV_NOPTS_VALUE && (*max_pts == AV_NOPTS_VALUE || pkt->pts > *max_pts))
				*max_pts = pkt->pts;
		}
		av_packet_unref(pkt);
	}
	av_packet_free(&pkt);
	if (ret != AVERROR_EOF)
		return av_fail(v, ret, "cannot read");
	ret = av_seek_frame(v->fmt, v->si, v->start_pts, AVSEEK_FLAG_BACKWARD);
	return ret < 0 ? av_fail(v, ret, "cannot seek back to the start") : 0;
}

static int open_container(struct video *v, const struct rec_video *rv)
{
	const AVCodec *codec = NULL;
	AVStream *st;
	int64_t max_pts = AV_NOPTS_VALUE;
	int ret, rc;
	AVRational r;

	ret = avformat_open_input(&v->fmt, v->file, NULL, NULL);
	if (ret < 0)
		return av_fail(v, ret, "cannot open the video");
	ret = avformat_find_stream_info(v->fmt, NULL);
	if (ret < 0)
		return av_fail(v, ret, "cannot read the video's streams");
	ret = av_find_best_stream(v->fmt, AVMEDIA_TYPE_VIDEO, -1, -1, &codec, 0);
	if (ret < 0)
		return err_set(ENG_EPARSE, "%s: no video stream", v->file);
	v->si = ret;
	st = v->fmt->streams[v->si];
	v->tb = st->time_base;
	if (v->tb.num <= 0 || v->tb.den <= 0)
		return err_set(ENG_EPARSE, "%s: the video stream has no time base", v->file);
	v->start_pts = st->start_time != AV_NOPTS_VALUE ? st->start_time : 0;
	v->kind = avcodec_get_name(st->codecpar->codec_id);
	v->width = st->codecpar->width;
	v->height = st->codecpar->height;
	if (v->width <= 0 || v->height <= 0)
		return err_set(ENG_EPARSE, "%s: the video stream has no frame size", v->file);
	r = st->avg_frame_rate.num > 0 ? st->avg_frame_rate : st->r_frame_rate;
	/* the stream's own rate numbers its frames; the recording's only when it has none */
	v->fps = r.num > 0 && r.den > 0 ? av_q2d(r) : rv->fps > 0 ? rv->fps : 0;
	v->t0_ns = rv->t0_ns;
	if (rv->frame_ns && rv->nframe_ns) {
		v->table = malloc(rv->nframe_ns * sizeof(*v->table));
		if (!v->table)
			return ENG_ENOMEM;
		memcpy(v->table, rv->frame_ns, rv->nframe_ns * sizeof(*v->table));
		v->ntable = rv->nframe_ns;
	}
	v->dec = avcodec_alloc_context3(codec);
	if (!v->dec)
		return ENG_ENOMEM;
	ret = avcodec_parameters_to_context(v->dec, st->codecpar);
	if (ret < 0)
		return av_fail(v, ret, "cannot set up the decoder");
	v->dec->thread_count = 2;
	ret = avcodec_open2(v->dec, codec, NULL);
	if (ret < 0)
		return av_fail(v, ret, "cannot open the decoder");
	/* avcC: version 1, then the NAL length size - 1 in the low bits of byte 4 */
	if (st->codecpar->codec_id == AV_CODEC_ID_H264 && st->codecpar->extradata_size >= 7 &&
	    st->codecpar->extradata[0] == 1)
		v->nal_len = (st->codecpar->extradata[4] & 3) + 1;
	v->drop_before = AV_NOPTS_VALUE;
	if (st->nb_frames > 0) {
		v->nframes = (size_t)st->nb_frames;
	} else {
		rc = count_packets(v, &max_pts);
		if (rc)
			return rc;
	}
	v->t_first = dev_time(v, v->start_pts);
	if (max_pts != AV_NOPTS_VALUE)
		v->t_last = dev_time(v, max_pts);
	else if (v->fps > 0 && v->nframes)
		v->t_last = dev_time(v, v->start_pts + (int64_t)llround((double)(v->nframes - 1) / v->fps /
									 av_q2d(v->tb)));
	else
		v->t_last = v->t_first;
	if (!v->nframes)
		return err_set(ENG_EPARSE, "%s: the video stream has no frame", v->file);
	return 0;
}

/* The next decoded frame into fr; *eof when there is none. */
/*
 * Whether an H.264 packet (NAL units behind length fields) holds only
 * slices with nal_ref_idc 0: no other frame is predicted from it, so not
 * decoding it changes no other frame.
 */
static bool h264_disposable(const struct video *v, const AVPacket *pkt)
{
	const uint8_t *p = pkt->data, *end = pkt->data + pkt->size;
	bool slice = false;

	if (!v->nal_len || !p || (pkt->flags & AV_PKT_FLAG_KEY))
		return false;
	while (end - p > v->nal_len) {
		size_t len = 0;
		int i, type;

		for (i = 0; i < v->nal_len; i++)
			len = len << 8 | p[i];
		p += v->nal_len;
		if (len == 0 || len > (size_t)(end - p))
			return false;
		type = p[0] & 0x1f;
		if (type == 1 || type == 5) {
			if (type == 5 || (p[0] & 0x60))
				return false;
			slice = true;
		}
		p += len;
	}
	return slice;
}

static int next_frame(struct video *v, AVPacket *pkt, AVFrame *fr, bool *eof)
{
	int ret;

	*eof = false;
	for (;;) {
		ret = avcodec_receive_frame(v->dec, fr);
		if (ret == 0)
			return 0;
		if (ret == AVERROR_EOF) {
			*eof = true;
			return 0;
		}
		if (ret != AVERROR(EAGAIN))
			return av_fail(v, ret, "cannot decode a frame");
		ret = av_read_frame(v->fmt, pkt);
		if (ret == AVERROR_EOF) {
			if (v->draining) {
				*eof = true;
				return 0;
			}
			v->draining = true;
			ret = avcodec_send_packet(v->dec, NULL);
			if (ret < 0 && ret != AVERROR_EOF)
				return av_fail(v, ret, "cannot finish decoding");
			continue;
		}
		if (ret < 0)
			return av_fail(v, ret, "cannot read a packet");
		if (pkt->stream_index != v->si ||
		    (v->drop_before != AV_NOPTS_VALUE && pkt->pts != AV_NOPTS_VALUE &&
		     pkt->pts < v->drop_before && h264_disposable(v, pkt))) {
			av_packet_unref(pkt);
			continue;
		}
		ret = avcodec_send_packet(v->dec, pkt);
		av_packet_unref(pkt);
		if (ret < 0 && ret != AVERROR(EAGAIN))
			return av_fail(v, ret, "cannot decode a packet");
	}
}

static int seek_to(struct video *v, int64_t pts)
{
	int ret = av_seek_frame(v->fmt, v->si, pts, AVSEEK_FLAG_BACKWARD);

	if (ret < 0)
		ret = av_seek_frame(v->fmt, v->si, pts, AVSEEK_FLAG_BACKWARD | AVSEEK_FLAG_ANY);
	if (ret < 0)
		return av_fail(v, ret, "cannot seek");
	avcodec_flush_buffers(v->dec);
	v->draining = false;
	return 0;
}

/* True when a keyframe lies between the frame at cur_pts and target_pts (the index says). */
static bool keyframe_ahead(const struct video *v, int64_t cur_pts, int64_t target_pts)
{
	AVStream *st = v->fmt->streams[v->si];
	int i = av_index_search_timestamp(st, target_pts, AVSEEK_FLAG_BACKWARD);
	const AVIndexEntry *e = i >= 0 ? avformat_index_get_entry(st, i) : NULL;

	return e && e->timestamp > cur_pts;
}

/*
 * The frames chosen so far and not yet written: decoding is sequential,
 * but the chosen frames are encoded in parallel, a batch at a time, each
 * thread with its own scaler and JPEG handle.
 */
enum { VIDEO_BATCH = 32 };

struct batch {
	AVFrame *fr[VIDEO_BATCH];      /* references to the chosen frames */
	int64_t pts[VIDEO_BATCH];
	unsigned char *jpg[VIDEO_BATCH]; /* tjAlloc'ed */
	unsigned long len[VIDEO_BATCH];
	int w[VIDEO_BATCH], h[VIDEO_BATCH], rc[VIDEO_BATCH];
	char msg[VIDEO_BATCH][256];     /* err_msg() of a failed worker */
	size_t n;                       /* frames held */
	size_t first;                   /* the first request (sorted order) they serve */
	size_t *slot;                   /* per request: its frame in the batch */
};

static void batch_encode(const struct video *v, struct batch *b, int width)
{
#pragma omp parallel
	{
		struct enc es;
		long i;

		memset(&es, 0, sizeof(es));
#pragma omp for schedule(dynamic)
		for (i = 0; i < (long)b->n; i++) {
			const AVFrame *fr = b->fr[i];
			enum AVPixelFormat f = (enum AVPixelFormat)fr->format;
			bool full = fr->color_range == AVCOL_RANGE_JPEG || f == AV_PIX_FMT_YUVJ420P ||
				    f == AV_PIX_FMT_YUVJ422P || f == AV_PIX_FMT_YUVJ444P;

			out_size(fr->width, fr->height, width, &b->w[i], &b->h[i]);
			b->rc[i] = encode(v, &es, (const uint8_t *const *)fr->data, fr->linesize, f, full,
					  fr->width, fr->height, b->w[i], b->h[i], &b->jpg[i], &b->len[i]);
			if (b->rc[i])
				snprintf(b->msg[i], sizeof(b->msg[i]), "%s", err_msg());
		}
		enc_release(&es);
	}
}

/* Encodes the batch and writes the files of requests b->first .. end - 1. */
static int batch_flush(struct video *v, struct batch *b, const struct req *q, size_t end,
		       int width, const char *const *paths, struct video_shot *shots)
{
	size_t r, i;
	int rc = 0;

	batch_encode(v, b, width);
	for (r = b->first; !rc && r < end; r++) {
		struct video_shot *s = &shots[q[r].idx];

		i = b->slot[r];
		if (b->rc[i]) {
			rc = err_set(b->rc[i], "%s", b->msg[i]);
			break;
		}
		rc = write_file(paths[q[r].idx], b->jpg[i], b->len[i]);
		s->t_ns = q[r].t;
		s->frame_ns = dev_time(v, b->pts[i]);
		s->frame = frame_index(v, b->pts[i]);
		s->width = b->w[i];
		s->height = b->h[i];
	}
	for (i = 0; i < b->n; i++) {
		av_frame_free(&b->fr[i]);
		tjFree(b->jpg[i]);
		b->jpg[i] = NULL;
		b->rc[i] = 0;
	}
	b->n = 0;
	b->first = end;
	return rc;
}

/* Request r (sorted order) gets frame fr: a new batch entry unless it is the last one's. */
static int serve_frame(struct video *v, struct batch *b, const AVFrame *fr, size_t r,
		       const struct req *q, int width, const char *const *paths,
		       struct video_shot *shots)
{
	int64_t pts = fr->best_effort_timestamp != AV_NOPTS_VALUE ? fr->best_effort_timestamp : fr->pts;
	int rc;

	if (b->n && b->pts[b->n - 1] == pts) {
		b->slot[r] = b->n - 1;
		return 0;
	}
	if (b->n == VIDEO_BATCH) {
		rc = batch_flush(v, b, q, r, width, paths, shots);
		if (rc)
			return rc;
	}
	b->fr[b->n] = av_frame_clone(fr);
	if (!b->fr[b->n])
		return ENG_ENOMEM;
	b->pts[b->n] = pts;
	b->slot[r] = b->n++;
	return 0;
}

static int extract_container(struct video *v, const struct req *q, size_t n, int width,
			     const char *const *paths, struct video_shot *shots)
{
	AVPacket *pkt = av_packet_alloc();
	AVFrame *cur = av_frame_alloc(), *prev = av_frame_alloc();
	struct batch *b = calloc(1, sizeof(*b));
	int64_t prev_t = 0, target, sought = INT64_MIN;
	bool have_prev = false, eof = false, seeked = false, checked = false;
	size_t r = 0, i;
	int rc = 0;

	if (!pkt || !cur || !prev || !b) {
		rc = ENG_ENOMEM;
		goto out;
	}
	b->slot = malloc(n * sizeof(*b->slot));
	if (!b->slot) {
		rc = ENG_ENOMEM;
		goto out;
	}
	/* one seek to the first time asked for (or back to the start) */
	target = pts_of(v, q[0].t);
	rc = seek_to(v, target > v->start_pts ? target : v->start_pts);
	seeked = target > v->start_pts;
	while (!rc && r < n) {
		int64_t pts, t;

		/*
		 * A frame two frame times or more before the next time asked for
		 * is never the one served (a frame lies between), so it is
		 * decoded only when others are predicted from it.
		 */
		v->drop_before = v->fps > 0 ? pts_of(v, q[r].t - (int64_t)(2e9 / v->fps))
					    : AV_NOPTS_VALUE;
		rc = next_frame(v, pkt, cur, &eof);
		if (rc || eof)
			break;
		pts = cur->best_effort_timestamp != AV_NOPTS_VALUE ? cur->best_effort_timestamp : cur->pts;
		if (pts == AV_NOPTS_VALUE) { /* a frame without a time cannot be placed */
			av_frame_unref(cur);
			continue;
		}
		t = dev_time(v, pts);
		if (!checked) {
			checked = true;
			if (seeked && t > q[0].t) { /* the seek overshot: decode from the start */
				av_frame_unref(cur);
				rc = seek_to(v, v->start_pts);
				continue;
			}
		}
		while (!rc && r < n && t >= q[r].t) {
			bool use_prev = have_prev && q[r].t - prev_t < t - q[r].t;

			rc = serve_frame(v, b, use_prev ? prev : cur, r, q, width, paths, shots);
			r++;
		}
		av_frame_unref(prev);
		av_frame_move_ref(prev, cur);
		have_prev = true;
		prev_t = t;
		if (!rc && r < n && (double)(q[r].t - t) / 1e9 > VIDEO_SEEK_GAP_S) {
			target = pts_of(v, q[r].t);
			/*
			 * Once per target: where the demuxer lands can lie before the
			 * keyframe the index names (edit lists, B-frame delays), and
			 * seeking again from there would land there again for ever.
			 */
			if (target != sought && keyframe_ahead(v, pts, target)) {
				sought = target;
				rc = seek_to(v, target);
			}
		}
	}
	/* times after the last frame get the last frame */
	for (; !rc && r < n; r++) {
		if (!have_prev) {
			rc = err_set(ENG_EPARSE, "%s: no frame could be decoded", v->file);
			break;
		}
		rc = serve_frame(v, b, prev, r, q, width, paths, shots);
	}
	if (!rc)
		rc = batch_flush(v, b, q, n, width, paths, shots);
out:
	if (b) {
		for (i = 0; i < b->n; i++) {
			av_frame_free(&b->fr[i]);
			tjFree(b->jpg[i]);
		}
		free(b->slot);
		free(b);
	}
	av_packet_free(&pkt);
	av_frame_free(&cur);
	av_frame_free(&prev);
	return rc;
}

/* ======================= VRS sources ======================= */

/* The frame nearest to t (a tie: the later one). */
static size_t vrs_nearest(const struct vrs_file *f, int64_t t)
{
	size_t lo = 0, hi = vrs_frame_count(f);

	while (lo < hi) { /* the first frame at or after t */
		size_t mid = lo + (hi - lo) / 2;

		if (vrs_frame(f, mid)->t_ns < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == vrs_frame_count(f))
		return lo - 1;
	if (lo > 0 && t - vrs_frame(f, lo - 1)->t_ns < vrs_frame(f, lo)->t_ns - t)
		return lo - 1;
	return lo;
}

/* Plane p of w x h turned 90 degrees clockwise into dst (h wide), in tiles. */
static void rotate_plane(const uint8_t *src, int w, int h, uint8_t *dst)
{
	enum { TILE = 32 };
	int tx, ty, x, y;

	/* upright (x, y) = stored (y, h - 1 - x); upright is h wide and w high */
	for (ty = 0; ty < w; ty += TILE)
		for (tx = 0; tx < h; tx += TILE)
			for (y = ty; y < w && y < ty + TILE; y++) {
				uint8_t *row = dst + (size_t)y * (size_t)h;

				for (x = tx; x < h && x < tx + TILE; x++)
					row[x] = src[(size_t)(h - 1 - x) * (size_t)w + (size_t)y];
			}
}

/*
 * A VRS frame decoded at dw x dh (stored orientation) straight into its
 * YCbCr planes, each plane turned upright, scaled and encoded: no trip
 * through RGB and back. For 4:2:0, 4:4:4 and grey JPEGs, whose planes
 * stay a valid layout when turned.
 */
static int vrs_upright_yuv(const struct video *v, struct enc *es, size_t k, const uint8_t *src,
			   size_t n, int sub, int dw, int dh, int ow, int oh, unsigned char **jpg,
			   unsigned long *jlen)
{
	int np = sub == TJSAMP_GRAY ? 1 : 3, pw[3], ph[3], strides[3], ls[4] = { 0, 0, 0, 0 }, p;
	unsigned char *planes[3];
	const uint8_t *rot[4] = { NULL, NULL, NULL, NULL };
	size_t off = 0, roff = 0;
	enum AVPixelFormat fmt = sub == TJSAMP_420 ? AV_PIX_FMT_YUVJ420P
				 : sub == TJSAMP_444 ? AV_PIX_FMT_YUVJ444P : AV_PIX_FMT_GRAY8;

	for (p = 0; p < np; p++) {
		pw[p] = tjPlaneWidth(p, dw, sub);
		ph[p] = tjPlaneHeight(p, dh, sub);
		if (pw[p] <= 0 || ph[p] <= 0)
			return err_set(ENG_EPARSE, "%s: frame %zu has an empty plane", v->file, k);
		strides[p] = pw[p];
		planes[p] = es->rgb + off;
		off += (size_t)pw[p] * (size_t)ph[p];
	}
	/* es->rgb and es->rot hold dw x dh x 3 bytes: more than the planes */
	if (tjDecompressToYUVPlanes(es->tjd, src, (unsigned long)n, planes, dw, strides, dh, 0))
		return err_set(ENG_EPARSE, "%s: frame %zu (record at byte offset %" PRId64 "): %s",
			       v->file, k, vrs_frame(v->vrs, k)->offset, tjGetErrorStr2(es->tjd));
	for (p = 0; p < np; p++) {
		rotate_plane(planes[p], pw[p], ph[p], es->rot + roff);
		rot[p] = es->rot + roff;
		ls[p] = ph[p];
		roff += (size_t)pw[p] * (size_t)ph[p];
	}
	return encode(v, es, rot, ls, fmt, true, dh, dw, ow, oh, jpg, jlen);
}

/*
 * Frame k turned upright (rotated 90 degrees clockwise) as JPEG at most
 * `width` wide into *jpg (tjAlloc'ed): lossless at full width, else a
 * reduced decode, rotation and scaling.
 */
static int vrs_upright(const struct video *v, struct enc *es, size_t k, int width,
		       unsigned char **jpg, unsigned long *jlen, int *ow, int *oh)
{
	uint8_t *src = NULL;
	size_t n = 0;
	int sw = 0, sh = 0, sub = 0, cs = 0, rc;

	rc = vrs_read_jpeg(v->vrs, k, &src, &n);
	if (rc)
		return rc;
	if (!es->tjd)
		es->tjd = tjInitDecompress();
	if (!es->tjd || tjDecompressHeader3(es->tjd, src, (unsigned long)n, &sw, &sh, &sub, &cs)) {
		rc = err_set(ENG_EPARSE, "%s: frame %zu (record at byte offset %" PRId64 "): bad JPEG: %s",
			     v->file, k, vrs_frame(v->vrs, k)->offset,
			     es->tjd ? tjGetErrorStr2(es->tjd) : "no memory");
		goto out;
	}
	out_size(sh, sw, width, ow, oh); /* upright: the stored height is the width */
	if (*ow == sh) {
		tjtransform xf;

		memset(&xf, 0, sizeof(xf));
		xf.op = TJXOP_ROT90;
		xf.options = TJXOPT_TRIM;
		if (!es->tjt)
			es->tjt = tjInitTransform();
		if (!es->tjt || tjTransform(es->tjt, src, (unsigned long)n, 1, jpg, jlen, &xf, 0)) {
			rc = err_set(ENG_EPARSE, "%s: frame %zu: cannot rotate: %s", v->file, k,
				     es->tjt ? tjGetErrorStr2(es->tjt) : "no memory");
			goto out;
		}
		/* a trimmed edge (sizes not a multiple of the MCU) is what the header says now */
		rc = tjDecompressHeader3(es->tjd, *jpg, *jlen, ow, oh, &sub, &cs) ? ENG_EPARSE : 0;
		if (rc)
			err_set(rc, "%s: frame %zu: the rotated JPEG is unreadable", v->file, k);
		goto out;
	}
	{
		int nsf = 0, i, dw = sw, dh = sh, x, y;
		tjscalingfactor *sf = tjGetScalingFactors(&nsf);
		const uint8_t *data[4];
		int ls[4];

		/* the smallest reduced decode still as wide as the output once upright */
		for (i = 0; sf && i < nsf; i++) {
			int w2 = TJSCALED(sw, sf[i]), h2 = TJSCALED(sh, sf[i]);

			if (h2 >= *ow && w2 >= *oh && (size_t)w2 * (size_t)h2 < (size_t)dw * (size_t)dh) {
				dw = w2;
				dh = h2;
			}
		}
		rc = grow(&es->rgb, &es->rgb_cap, (size_t)dw * (size_t)dh * 3);
		rc = rc ? rc : grow(&es->rot, &es->rot_cap, (size_t)dw * (size_t)dh * 3);
		if (rc)
			goto out;
		if (!es->rgb || !es->rot || dw <= 0 || dh <= 0) {
			rc = err_set(ENG_EPARSE, "%s: frame %zu has an empty image", v->file, k);
			goto out;
		}
		if (sub == TJSAMP_420 || sub == TJSAMP_444 || sub == TJSAMP_GRAY) {
			rc = vrs_upright_yuv(v, es, k, src, n, sub, dw, dh, *ow, *oh, jpg, jlen);
			goto out;
		}
		if (tjDecompress2(es->tjd, src, (unsigned long)n, es->rgb, dw, dw * 3, dh, TJPF_RGB, 0)) {
			rc = err_set(ENG_EPARSE, "%s: frame %zu (record at byte offset %" PRId64 "): %s",
				     v->file, k, vrs_frame(v->vrs, k)->offset, tjGetErrorStr2(es->tjd));
			goto out;
		}
		/* 90 degrees clockwise: upright (x, y) = stored (y, dh - 1 - x) */
		for (y = 0; y < dw; y++) {
			uint8_t *row = es->rot + (size_t)y * (size_t)dh * 3;

			for (x = 0; x < dh; x++)
				memcpy(row + (size_t)x * 3,
				       es->rgb + ((size_t)(dh - 1 - x) * (size_t)dw + (size_t)y) * 3, 3);
		}
		data[0] = es->rot;
		data[1] = data[2] = data[3] = NULL;
		ls[0] = dh * 3;
		ls[1] = ls[2] = ls[3] = 0;
		rc = encode(v, es, data, ls, AV_PIX_FMT_RGB24, true, dh, dw, *ow, *oh, jpg, jlen);
	}
out:
	free(src);
	return rc;
}

/* One distinct VRS frame to write, converted by a worker thread. */
struct vrs_job {
	size_t frame;
	unsigned char *jpg;      /* tjAlloc'ed */
	unsigned long len;
	int w, h, rc;
	char msg[512];           /* err_msg() of the worker, when rc */
};

/* Converts the jobs in parallel (each frame is independent: one JPEG each). */
static void convert_vrs(const struct video *v, struct vrs_job *jobs, size_t n, int width)
{
#pragma omp parallel
	{
		struct enc es;
		long i;

		memset(&es, 0, sizeof(es));
#pragma omp for schedule(dynamic)
		for (i = 0; i < (long)n; i++) {
			struct vrs_job *j = &jobs[i];

			j->rc = vrs_upright(v, &es, j->frame, width, &j->jpg, &j->len, &j->w, &j->h);
			if (j->rc)
				snprintf(j->msg, sizeof(j->msg), "%s", err_msg());
		}
		enc_release(&es);
	}
}

/*
 * VRS frames: the nearest frame of each time, the distinct ones converted
 * in parallel chunks, written in the order of the times.
 */
static int extract_vrs(struct video *v, const struct req *q, size_t n, int width,
		       const char *const *paths, struct video_shot *shots)
{
	enum { CHUNK = 64 };
	struct vrs_job jobs[CHUNK];
	size_t r = 0, i;
	int rc = 0;

	while (!rc && r < n) {
		size_t nj = 0, r0 = r, u;

		/* the requests of this chunk: at most CHUNK distinct frames, in time order */
		for (; r < n; r++) {
			size_t k = vrs_nearest(v->vrs, q[r].t);

			if (!nj || jobs[nj - 1].frame != k) {
				if (nj == CHUNK)
					break;
				memset(&jobs[nj], 0, sizeof(jobs[nj]));
				jobs[nj++].frame = k;
			}
		}
		convert_vrs(v, jobs, nj, width);
		for (i = r0, u = 0; i < r; i++) {
			size_t k = vrs_nearest(v->vrs, q[i].t);
			struct video_shot *s = &shots[q[i].idx];

			while (jobs[u].frame != k)
				u++;
			if (jobs[u].rc) {
				rc = err_set(jobs[u].rc, "%s", jobs[u].msg);
				break;
			}
			rc = write_file(paths[q[i].idx], jobs[u].jpg, jobs[u].len);
			if (rc)
				break;
			s->t_ns = q[i].t;
			s->frame_ns = vrs_frame(v->vrs, k)->t_ns;
			s->frame = (long)k;
			s->width = jobs[u].w;
			s->height = jobs[u].h;
		}
		for (u = 0; u < nj; u++)
			tjFree(jobs[u].jpg);
	}
	return rc;
}

static int open_vrs(struct video *v)
{
	int w, h, rc = vrs_open(v->file, VRS_TYPE_RGB_CAMERA, VRS_INSTANCE_RGB, &v->vrs);
	double rate;

	if (rc)
		return rc;
	v->kind = "vrs";
	v->nframes = vrs_frame_count(v->vrs);
	v->t_first = vrs_frame(v->vrs, 0)->t_ns;
	v->t_last = vrs_frame(v->vrs, v->nframes - 1)->t_ns;
	vrs_image_size(v->vrs, &w, &h, &rate);
	if (w <= 0 || h <= 0) { /* the configuration does not say: ask the first JPEG */
		uint8_t *jpg = NULL;
		size_t n = 0;
		int sub, cs;
		tjhandle tj;

		rc = vrs_read_jpeg(v->vrs, 0, &jpg, &n);
		if (rc)
			return rc;
		tj = tjInitDecompress();
		if (!tj || tjDecompressHeader3(tj, jpg, (unsigned long)n, &w, &h, &sub, &cs))
			rc = err_set(ENG_EPARSE, "%s: the first frame is not a readable JPEG", v->file);
		if (tj)
			tjDestroy(tj);
		free(jpg);
		if (rc)
			return rc;
	}
	v->width = h; /* upright */
	v->height = w;
	v->fps = rate;
	v->rotated = true;
	return 0;
}

/* ======================= The handle ======================= */

static bool is_vrs_file(const char *path)
{
	FILE *fp = fopen(path, "rbe");
	char b[8];
	bool yes;

	if (!fp)
		return false;
	yes = fread(b, 1, 8, fp) == 8 && !memcmp(b, "VisionRe", 8);
	fclose(fp);
	return yes;
}

int video_open(const struct recording *rec, struct video **out)
{
	struct video *v;
	size_t n;
	int rc;

	if (!rec->video.path)
		return err_set(ENG_ENOENT, "'%s' has no video", rec->id ? rec->id : rec->root);
	rc = avdl_load();
	if (rc)
		return rc;
	v = calloc(1, sizeof(*v));
	if (!v)
		return ENG_ENOMEM;
	av_log_set_level(AV_LOG_QUIET); /* errors come back as codes; only commands print */
	n = strlen(rec->root) + strlen(rec->video.path) + 2;
	v->file = malloc(n);
	if (!v->file) {
		rc = ENG_ENOMEM;
		goto out;
	}
	if (rec->video.path[0] == '/')
		snprintf(v->file, n, "%s", rec->video.path);
	else
		snprintf(v->file, n, "%s/%s", rec->root, rec->video.path);
	if (access(v->file, R_OK)) {
		int e = errno;

		rc = err_set(ENG_ENOENT, "cannot open the video '%s': %s", v->file, strerror(e));
		goto out;
	}
	rc = is_vrs_file(v->file) ? open_vrs(v) : open_container(v, &rec->video);
out:
	if (rc) {
		video_close(v);
		return rc;
	}
	*out = v;
	return 0;
}

void video_close(struct video *v)
{
	if (!v)
		return;
	video_close(v->twin);
	vrs_close(v->vrs);
	avcodec_free_context(&v->dec);
	avformat_close_input(&v->fmt);
	enc_release(&v->enc);
	free(v->table);
	free(v->file);
	free(v);
}

void video_get_info(const struct video *v, struct video_info *out)
{
	out->file = v->file;
	out->kind = v->kind;
	out->nframes = v->nframes;
	out->t_first_ns = v->t_first;
	out->t_last_ns = v->t_last;
	out->width = v->width;
	out->height = v->height;
	out->fps = v->fps;
	out->rotated = v->rotated;
}

/* A second handle on v's container file, for extract_split(). */
static int open_twin(struct video *v)
{
	struct rec_video rv;
	struct video *t = calloc(1, sizeof(*t));
	int rc;

	if (!t)
		return ENG_ENOMEM;
	t->file = strdup(v->file);
	if (!t->file) {
		free(t);
		return ENG_ENOMEM;
	}
	memset(&rv, 0, sizeof(rv));
	rv.t0_ns = v->t0_ns;
	rv.fps = v->fps;
	rv.frame_ns = v->table;
	rv.nframe_ns = v->ntable;
	rc = open_container(t, &rv);
	if (rc) {
		video_close(t);
		return rc;
	}
	v->twin = t;
	return 0;
}

/*
 * The requests in groups a seek apart (gaps over VIDEO_SEEK_GAP_S) go to
 * two decoders by turns, each a pass of its own on its own thread: one
 * decoder runs a frame at a time, however many threads it has, and a
 * frame depends only on its own time, so the frames are those of one
 * pass. A single group is one pass.
 */
static int extract_split(struct video *v, const struct req *q, size_t n, int width,
			 const char *const *paths, struct video_shot *shots)
{
	struct req *half[2] = { NULL, NULL };
	size_t nh[2] = { 0, 0 }, i, g = 0;
	int rch[2] = { 0, 0 }, rc = 0;
	char msg[2][1024];

	half[0] = malloc(n * sizeof(*half[0]));
	half[1] = malloc(n * sizeof(*half[1]));
	if (!half[0] || !half[1]) {
		rc = ENG_ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++) {
		if (i && (double)(q[i].t - q[i - 1].t) / 1e9 > VIDEO_SEEK_GAP_S)
			g++;
		half[g % 2][nh[g % 2]++] = q[i];
	}
	if (!nh[1] || (!v->twin && open_twin(v))) {
		err_clear(); /* without a second decoder: one pass, as ever */
		rc = extract_container(v, q, n, width, paths, shots);
		goto out;
	}
#pragma omp parallel for num_threads(2) schedule(static, 1)
	for (i = 0; i < 2; i++) {
		rch[i] = extract_container(i ? v->twin : v, half[i], nh[i], width, paths, shots);
		snprintf(msg[i], sizeof(msg[i]), "%s", rch[i] ? err_msg() : "");
	}
	for (i = 0; i < 2 && !rc; i++)
		if (rch[i])
			rc = err_set(rch[i], "%s", msg[i]);
out:
	free(half[0]);
	free(half[1]);
	return rc;
}

int video_extract(struct video *v, const int64_t *t_ns, size_t n, int width,
		  const char *const *paths, struct video_shot *shots)
{
	struct req *q;
	size_t i;
	int rc;

	if (!n)
		return 0;
	q = malloc(n * sizeof(*q));
	if (!q)
		return ENG_ENOMEM;
	for (i = 0; i < n; i++) {
		q[i].t = t_ns[i];
		q[i].idx = i;
	}
	qsort(q, n, sizeof(*q), cmp_req);
	rc = v->vrs ? extract_vrs(v, q, n, width, paths, shots)
		    : extract_split(v, q, n, width, paths, shots);
	free(q);
	return rc;
}
