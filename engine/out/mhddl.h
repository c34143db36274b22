/* SPDX-License-Identifier: MIT */
/*
 * libmicrohttpd, loaded when a review server first starts instead of at
 * program start: it links its own TLS stack, about 2 ms of loading for
 * every command, though only `proxima review` serves HTTP.
 *
 * review.c includes <microhttpd.h>, then this header, and calls
 * mhddl_load() before starting a daemon; the macros at the end turn each
 * call of a listed function into a call through the table the load
 * filled (as engine/recording/avdl.h does for FFmpeg).
 */
#ifndef PROXIMA_MHDDL_H
#define PROXIMA_MHDDL_H

/* Every libmicrohttpd function the engine calls. */
#define MHDDL_FUNCS(X)                                                                \
	X(MHD_start_daemon) X(MHD_stop_daemon) X(MHD_get_daemon_info)                  \
	X(MHD_get_connection_info) X(MHD_lookup_connection_value)                      \
	X(MHD_create_response_from_buffer) X(MHD_create_response_from_fd64)            \
	X(MHD_create_response_from_fd_at_offset64) X(MHD_add_response_header)          \
	X(MHD_queue_response) X(MHD_destroy_response)

struct mhddl_fns {
/* NOLINTNEXTLINE(bugprone-macro-parentheses): fn names the field, not an expression */
#define MHDDL_FIELD(fn) __typeof__(fn) *fn;
	MHDDL_FUNCS(MHDDL_FIELD)
#undef MHDDL_FIELD
};

/* The table; valid once mhddl_load() returned 0. */
extern const struct mhddl_fns *mhddl__fns;

/*
 * Loads libmicrohttpd (the soname libmicrohttpd.so.12) and its functions,
 * once per process; later calls return the first outcome. Returns 0, or
 * ENG_EIO with err_msg() naming the library or the function that is
 * missing. Thread-safe.
 */
int mhddl_load(void);

#ifndef MHDDL_IMPL
#define MHD_start_daemon (mhddl__fns->MHD_start_daemon)
#define MHD_stop_daemon (mhddl__fns->MHD_stop_daemon)
#define MHD_get_daemon_info (mhddl__fns->MHD_get_daemon_info)
#define MHD_get_connection_info (mhddl__fns->MHD_get_connection_info)
#define MHD_lookup_connection_value (mhddl__fns->MHD_lookup_connection_value)
#define MHD_create_response_from_buffer (mhddl__fns->MHD_create_response_from_buffer)
#define MHD_create_response_from_fd64 (mhddl__fns->MHD_create_response_from_fd64)
#define MHD_create_response_from_fd_at_offset64 \
	(mhddl__fns->MHD_create_response_from_fd_at_offset64)
#define MHD_add_response_header (mhddl__fns->MHD_add_response_header)
#define MHD_queue_response (mhddl__fns->MHD_queue_response)
#define MHD_destroy_response (mhddl__fns->MHD_destroy_response)
#endif

#endif
