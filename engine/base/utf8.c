/* SPDX-License-Identifier: MIT */
/* UTF-8 checks (RFC 3629); the contract is in utf8.h. */
#include "utf8.h"

#include <string.h>

#include "banned.h"

size_t utf8_valid_prefix(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;

	while (i < len) {
		unsigned c = p[i], cp;
		size_t n, k;

		if (c < 0x80) {
			i++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf) {
			n = 1;
			cp = c & 0x1f;
		} else if (c >= 0xe0 && c <= 0xef) {
			n = 2;
			cp = c & 0x0f;
		} else if (c >= 0xf0 && c <= 0xf4) {
			n = 3;
			cp = c & 0x07;
		} else {
			return i; /* a continuation byte first, overlong 0xc0/0xc1, or past 0xf4 */
		}
		if (len - i <= n)
			return i; /* cut short */
		for (k = 1; k <= n; k++) {
			if ((p[i + k] & 0xc0) != 0x80)
				return i;
			cp = (cp << 6) | (p[i + k] & 0x3f);
		}
		if ((n == 2 && cp < 0x800) || (n == 3 && (cp < 0x10000 || cp > 0x10ffff)) ||
		    (cp >= 0xd800 && cp <= 0xdfff))
			return i;
		i += n + 1;
	}
	return len;
}

int utf8_valid(const char *s)
{
	size_t n;

	if (!s)
		return 1;
	n = strlen(s);
	return utf8_valid_prefix(s, n) == n;
}
