/* SPDX-License-Identifier: MIT */
/*
 * JSON read with the rules of Python's json module, as EgoProx's scripts
 * read it (json.load / json.loads with their defaults: strict=True, the C
 * scanner of CPython 3.11), into cJSON trees. eval uses it for results
 * and predictions files and for the chain answers that evaluate.py passes
 * to json.loads, where cJSON's leniency would change the figures: cJSON
 * takes a raw TAB or newline inside a string, a leading zero ("01") and
 * "1." where Python raises, and has no NaN or Infinity.
 *
 * The grammar, exactly as Python applies it:
 *   - whitespace between tokens is ' ', '\t', '\n', '\r' only;
 *   - numbers are -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?, ASCII
 *     digits; "01" and "1." end the number early (the rest is an error);
 *     NaN, Infinity and -Infinity are numbers;
 *   - strings may not hold a raw control character (U+0000-U+001F);
 *     escapes are \" \\ \/ \b \f \n \r \t \uXXXX; a \u surrogate pair is
 *     joined, a lone surrogate is kept;
 *   - a repeated object key keeps its last value, in the first one's place;
 *   - text starting with U+FEFF (a byte order mark) is refused;
 *   - nesting deeper than PYJSON_MAX_DEPTH fails (Python's recursion
 *     limit, about that deep at evaluate.py's call depth).
 *
 * How values come out: strings are UTF-8, except U+0000, which is the two
 * bytes C0 80 (so that it does not end the C string), and lone surrogates,
 * which are their 3-byte encodings (ED A0 80 ...). Numbers are cJSON
 * numbers; an integer literal (no fraction or exponent, which Python reads
 * as an int of any size) also keeps its decimal text in valuestring ("-0"
 * is "0"); floats that overflow are +-inf, as in Python.
 *
 * Functions return 0 or a negative enum eng_err; they never print.
 */
#ifndef PYJSON_H
#define PYJSON_H

#include <stdbool.h>
#include <stddef.h>

struct cJSON;

/* Deepest nesting of arrays and objects accepted. */
#define PYJSON_MAX_DEPTH 990

enum pyjson_flags {
	/*
	 * The input is a file's bytes, which Python decodes as UTF-8 first
	 * (open(..., encoding="utf-8")): bytes that are not strict UTF-8
	 * (overlong forms, surrogates, past U+10FFFF, truncated) are an error,
	 * and so is a NUL byte outside a string. Without the flag the input
	 * is text this module produced (a decoded string), where C0 80 is
	 * U+0000 and lone surrogates are allowed.
	 */
	PYJSON_BYTES = (1 << 0)
};

/* Where and why a parse failed. */
struct pyjson_error {
	size_t offset;  /* byte offset of the error in the input */
	size_t line;    /* 1-based line */
	size_t column;  /* 1-based column, in characters as Python counts them */
	char msg[96];   /* Python's message: "Expecting value", "Extra data", ... */
};

/*
 * Parses text[0..len) as json.loads would (PYJSON_BYTES: as json.load of
 * a file would). On success *out is a new tree (caller cJSON_Delete()s).
 * Returns 0; ENG_EPARSE with *err filled (err may be NULL) when Python
 * would raise; ENG_ENOMEM. *out is set only on success.
 */
int pyjson_parse(const char *text, size_t len, unsigned flags, struct cJSON **out,
		 struct pyjson_error *err);

/*
 * Python's == between two values parsed by pyjson_parse: numbers compare
 * by value, true and false equal 1 and 0, integer literals compare by
 * their digits (exact beyond 2^53; an integer against a float compares
 * as doubles), NaN equals nothing, strings byte by byte, arrays item by
 * item, objects by their key sets and values. NULL (a missing value) is
 * equal only to NULL. Can't fail.
 */
bool pyjson_equal(const struct cJSON *a, const struct cJSON *b);

/*
 * Length of the UTF-8 (or C0 80, or surrogate) sequence at s, which has
 * n >= 1 bytes left: 1 to 4, or 0 when it is not one character. Can't
 * fail.
 */
size_t pyjson_char_len(const unsigned char *s, size_t n, bool strict_utf8);

#endif /* PYJSON_H */
