/* SPDX-License-Identifier: MIT */
/*
 * FFmpeg, loaded when a video is first opened or written instead of at
 * program start: its libraries pull in about 140 shared objects (codecs
 * and their own dependencies) whose loading cost every command about
 * 40 ms, though most commands never touch a video.
 *
 * A file that calls FFmpeg includes its headers, then this one, and calls
 * avdl_load() before the first FFmpeg function; the macros at the end
 * turn each call of a listed function into a call through the table the
 * load filled. A function not in AVDL_FUNCS is a link error, not a crash.
 */
#ifndef PROXIMA_AVDL_H
#define PROXIMA_AVDL_H

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/imgutils.h>
#include <libavutil/log.h>
#include <libavutil/opt.h>
#include <libswscale/swscale.h>

/* Every FFmpeg function the engine calls, with its library. */
#define AVDL_FUNCS(X)                                                                   \
	X(AVDL_UTIL, av_d2q) X(AVDL_UTIL, av_dict_free) X(AVDL_UTIL, av_dict_set)        \
	X(AVDL_UTIL, av_frame_alloc) X(AVDL_UTIL, av_frame_clone)                      \
	X(AVDL_UTIL, av_frame_free) X(AVDL_UTIL, av_frame_get_buffer)                  \
	X(AVDL_UTIL, av_frame_make_writable) X(AVDL_UTIL, av_frame_move_ref)           \
	X(AVDL_UTIL, av_frame_unref) X(AVDL_UTIL, av_get_pix_fmt_name)                 \
	X(AVDL_UTIL, av_log_set_callback) X(AVDL_UTIL, av_log_set_level)               \
	X(AVDL_UTIL, av_opt_set) X(AVDL_UTIL, av_strerror)                             \
	X(AVDL_CODEC, av_packet_alloc) X(AVDL_CODEC, av_packet_free)                   \
	X(AVDL_CODEC, av_packet_rescale_ts) X(AVDL_CODEC, av_packet_unref)             \
	X(AVDL_CODEC, avcodec_alloc_context3)                                          \
	X(AVDL_CODEC, avcodec_find_encoder_by_name) X(AVDL_CODEC, avcodec_flush_buffers) \
	X(AVDL_CODEC, avcodec_free_context) X(AVDL_CODEC, avcodec_get_name)            \
	X(AVDL_CODEC, avcodec_open2) X(AVDL_CODEC, avcodec_parameters_from_context)    \
	X(AVDL_CODEC, avcodec_parameters_to_context) X(AVDL_CODEC, avcodec_receive_frame) \
	X(AVDL_CODEC, avcodec_receive_packet) X(AVDL_CODEC, avcodec_send_frame)        \
	X(AVDL_CODEC, avcodec_send_packet)                                             \
	X(AVDL_FORMAT, av_find_best_stream) X(AVDL_FORMAT, av_index_search_timestamp)  \
	X(AVDL_FORMAT, av_interleaved_write_frame) X(AVDL_FORMAT, av_read_frame)       \
	X(AVDL_FORMAT, av_seek_frame) X(AVDL_FORMAT, av_write_trailer)                 \
	X(AVDL_FORMAT, avformat_alloc_output_context2) X(AVDL_FORMAT, avformat_close_input) \
	X(AVDL_FORMAT, avformat_find_stream_info) X(AVDL_FORMAT, avformat_free_context) \
	X(AVDL_FORMAT, avformat_index_get_entry) X(AVDL_FORMAT, avformat_new_stream)   \
	X(AVDL_FORMAT, avformat_open_input) X(AVDL_FORMAT, avformat_write_header)      \
	X(AVDL_FORMAT, avio_closep) X(AVDL_FORMAT, avio_open)                          \
	X(AVDL_SCALE, sws_freeContext) X(AVDL_SCALE, sws_getCachedContext)             \
	X(AVDL_SCALE, sws_getCoefficients) X(AVDL_SCALE, sws_getContext)               \
	X(AVDL_SCALE, sws_scale) X(AVDL_SCALE, sws_setColorspaceDetails)

struct avdl_fns {
/* NOLINTNEXTLINE(bugprone-macro-parentheses): fn names the field, not an expression */
#define AVDL_FIELD(lib, fn) __typeof__(fn) *fn;
	AVDL_FUNCS(AVDL_FIELD)
#undef AVDL_FIELD
};

/* The table; valid once avdl_load() returned 0. */
extern const struct avdl_fns *avdl__fns;

/*
 * Loads the four libraries (the sonames of the headers built against)
 * and their functions, once per process; later calls return the first
 * outcome. Returns 0, or ENG_EIO with err_msg() naming the library or the
 * function that is missing. Thread-safe.
 */
int avdl_load(void);

#ifndef AVDL_IMPL
#define av_d2q (avdl__fns->av_d2q)
#define av_dict_free (avdl__fns->av_dict_free)
#define av_dict_set (avdl__fns->av_dict_set)
#define av_frame_alloc (avdl__fns->av_frame_alloc)
#define av_frame_clone (avdl__fns->av_frame_clone)
#define av_frame_free (avdl__fns->av_frame_free)
#define av_frame_get_buffer (avdl__fns->av_frame_get_buffer)
#define av_frame_make_writable (avdl__fns->av_frame_make_writable)
#define av_frame_move_ref (avdl__fns->av_frame_move_ref)
#define av_frame_unref (avdl__fns->av_frame_unref)
#define av_get_pix_fmt_name (avdl__fns->av_get_pix_fmt_name)
#define av_log_set_callback (avdl__fns->av_log_set_callback)
#define av_log_set_level (avdl__fns->av_log_set_level)
#define av_opt_set (avdl__fns->av_opt_set)
#define av_strerror (avdl__fns->av_strerror)
#define av_packet_alloc (avdl__fns->av_packet_alloc)
#define av_packet_free (avdl__fns->av_packet_free)
#define av_packet_rescale_ts (avdl__fns->av_packet_rescale_ts)
#define av_packet_unref (avdl__fns->av_packet_unref)
#define avcodec_alloc_context3 (avdl__fns->avcodec_alloc_context3)
#define avcodec_find_encoder_by_name (avdl__fns->avcodec_find_encoder_by_name)
#define avcodec_flush_buffers (avdl__fns->avcodec_flush_buffers)
#define avcodec_free_context (avdl__fns->avcodec_free_context)
#define avcodec_get_name (avdl__fns->avcodec_get_name)
#define avcodec_open2 (avdl__fns->avcodec_open2)
#define avcodec_parameters_from_context (avdl__fns->avcodec_parameters_from_context)
#define avcodec_parameters_to_context (avdl__fns->avcodec_parameters_to_context)
#define avcodec_receive_frame (avdl__fns->avcodec_receive_frame)
#define avcodec_receive_packet (avdl__fns->avcodec_receive_packet)
#define avcodec_send_frame (avdl__fns->avcodec_send_frame)
#define avcodec_send_packet (avdl__fns->avcodec_send_packet)
#define av_find_best_stream (avdl__fns->av_find_best_stream)
#define av_index_search_timestamp (avdl__fns->av_index_search_timestamp)
#define av_interleaved_write_frame (avdl__fns->av_interleaved_write_frame)
#define av_read_frame (avdl__fns->av_read_frame)
#define av_seek_frame (avdl__fns->av_seek_frame)
#define av_write_trailer (avdl__fns->av_write_trailer)
#define avformat_alloc_output_context2 (avdl__fns->avformat_alloc_output_context2)
#define avformat_close_input (avdl__fns->avformat_close_input)
#define avformat_find_stream_info (avdl__fns->avformat_find_stream_info)
#define avformat_free_context (avdl__fns->avformat_free_context)
#define avformat_index_get_entry (avdl__fns->avformat_index_get_entry)
#define avformat_new_stream (avdl__fns->avformat_new_stream)
#define avformat_open_input (avdl__fns->avformat_open_input)
#define avformat_write_header (avdl__fns->avformat_write_header)
#define avio_closep (avdl__fns->avio_closep)
#define avio_open (avdl__fns->avio_open)
#define sws_freeContext (avdl__fns->sws_freeContext)
#define sws_getCachedContext (avdl__fns->sws_getCachedContext)
#define sws_getCoefficients (avdl__fns->sws_getCoefficients)
#define sws_getContext (avdl__fns->sws_getContext)
#define sws_scale (avdl__fns->sws_scale)
#define sws_setColorspaceDetails (avdl__fns->sws_setColorspaceDetails)
#endif

#endif
