/* SPDX-License-Identifier: MIT */
/*
 * UTF-8 checks for text that comes from outside (review notes, request
 * bodies): the well-formed sequences of RFC 3629, no overlong forms, no
 * UTF-16 surrogates, nothing past U+10FFFF.
 */
#ifndef UTF8_H
#define UTF8_H

#include <stddef.h>

/*
 * The length of the well-formed UTF-8 prefix of s[0..len): len when all of
 * it is valid, else the offset of the first byte that starts a bad or cut
 * sequence. A NUL byte counts as valid here (callers that refuse it check
 * for it). This function can't fail.
 */
size_t utf8_valid_prefix(const char *s, size_t len);

/* 1 when the NUL-terminated s is valid UTF-8 (NULL counts as valid). Can't fail. */
int utf8_valid(const char *s);

#endif /* UTF8_H */
