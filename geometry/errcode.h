/* SPDX-License-Identifier: MIT */
/*
 * The error codes every layer returns. This header holds only the enum so
 * that geometry/ can use the codes without depending on engine/.
 */
#ifndef ERRCODE_H
#define ERRCODE_H

/*
 * Library functions return 0 on success or one of these negative codes.
 * eng_strerror() gives a short lowercase text for each.
 */
enum eng_err {
	ENG_OK = 0,
	ENG_ENOMEM = -1,    /* allocation failed */
	ENG_EINVAL = -2,    /* bad argument or bad value in input */
	ENG_EIO = -3,       /* a file could not be read or written */
	ENG_EDB = -4,       /* SQLite reported an error */
	ENG_EHTTP = -5,     /* HTTP transport or status error */
	ENG_EPARSE = -6,    /* malformed input (CSV, JSON, map file) */
	ENG_ETOOBIG = -7,   /* a bounded buffer hit its cap */
	ENG_ENOENT = -8,    /* a required file or item does not exist */
	ENG_ERANGE = -9,    /* a value or time is out of the valid range */
	ENG_ENOTFOUND = -10, /* a lookup found nothing (no path, no hit) */
	ENG_ESCHEMA = -11,  /* JSON failed schema validation */
	ENG_ETIMEOUT = -12, /* an operation ran past its deadline */
	ENG_ECANCELED = -13 /* stopped on request */
};

#endif /* ERRCODE_H */
