/* SPDX-License-Identifier: MIT */
/*
 * libcurl, loaded when a remote brain first needs it instead of at
 * program start: libcurl and what it links (TLS, HTTP/2, SSH, LDAP,
 * Kerberos) cost every command about 6 ms of loading, though the local
 * brain, the review, the exports and the tools never make a request.
 *
 * llm.c includes <curl/curl.h>, then this header, and calls curldl_load()
 * (from llm_global_init()) before the first libcurl function; the macros
 * at the end turn each call of a listed function into a call through the
 * table the load filled (as engine/recording/avdl.h does for FFmpeg).
 */
#ifndef PROXIMA_CURLDL_H
#define PROXIMA_CURLDL_H

#ifndef CURL_DISABLE_TYPECHECK
#error "define CURL_DISABLE_TYPECHECK before including <curl/curl.h>"
#endif

/* Every libcurl function the engine calls. */
#define CURLDL_FUNCS(X)                                                             \
	X(curl_global_init) X(curl_global_cleanup) X(curl_easy_init) X(curl_easy_cleanup) \
	X(curl_easy_setopt) X(curl_easy_perform) X(curl_easy_getinfo)                \
	X(curl_easy_strerror) X(curl_slist_append) X(curl_slist_free_all) X(curl_getdate) \
	X(curl_multi_init) X(curl_multi_cleanup) X(curl_multi_add_handle)                \
	X(curl_multi_remove_handle) X(curl_multi_perform) X(curl_multi_poll)             \
	X(curl_multi_info_read)

struct curldl_fns {
/* NOLINTNEXTLINE(bugprone-macro-parentheses): fn names the field, not an expression */
#define CURLDL_FIELD(fn) __typeof__(fn) *fn;
	CURLDL_FUNCS(CURLDL_FIELD)
#undef CURLDL_FIELD
};

/* The table; valid once curldl_load() returned 0. */
extern const struct curldl_fns *curldl__fns;

/*
 * Loads libcurl (the soname libcurl.so.4) and its functions, once per
 * process; later calls return the first outcome. Returns 0, or ENG_EIO
 * with err_msg() naming the library or the function that is missing.
 * Thread-safe.
 */
int curldl_load(void);

#ifndef CURLDL_IMPL
/* curl.h's own three-argument macros for these two go first */
#undef curl_easy_setopt
#undef curl_easy_getinfo
#define curl_global_init (curldl__fns->curl_global_init)
#define curl_global_cleanup (curldl__fns->curl_global_cleanup)
#define curl_easy_init (curldl__fns->curl_easy_init)
#define curl_easy_cleanup (curldl__fns->curl_easy_cleanup)
#define curl_easy_setopt (curldl__fns->curl_easy_setopt)
#define curl_easy_perform (curldl__fns->curl_easy_perform)
#define curl_easy_getinfo (curldl__fns->curl_easy_getinfo)
#define curl_easy_strerror (curldl__fns->curl_easy_strerror)
#define curl_slist_append (curldl__fns->curl_slist_append)
#define curl_slist_free_all (curldl__fns->curl_slist_free_all)
#define curl_getdate (curldl__fns->curl_getdate)
#define curl_multi_init (curldl__fns->curl_multi_init)
#define curl_multi_cleanup (curldl__fns->curl_multi_cleanup)
#define curl_multi_add_handle (curldl__fns->curl_multi_add_handle)
#define curl_multi_remove_handle (curldl__fns->curl_multi_remove_handle)
#define curl_multi_perform (curldl__fns->curl_multi_perform)
#define curl_multi_poll (curldl__fns->curl_multi_poll)
#define curl_multi_info_read (curldl__fns->curl_multi_info_read)
#endif

#endif
