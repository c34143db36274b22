/* SPDX-License-Identifier: MIT */
/*
 * SHA-256 digests as lowercase hex, over OpenSSL's EVP interface (the
 * library libcurl already pulls in). Used for QA ids, request-cache keys
 * and export manifests. And FNV-1a, a fast non-cryptographic hash for hash
 * tables and the names of cached values.
 */
#ifndef HASH_H
#define HASH_H

#include <stddef.h>
#include <stdint.h>

#define HASH_HEX_LEN 64

/* Incremental digest state; opaque. */
struct hash;

/* Starts a digest. Returns 0 or ENG_ENOMEM. */
int hash_new(struct hash **out);

/* Adds len bytes. Returns 0 or ENG_EINVAL. */
int hash_add(struct hash *h, const void *data, size_t len);

/* Adds a string and its terminating NUL (so fields cannot run together). */
int hash_add_field(struct hash *h, const char *s);

/*
 * Writes the 64 hex digits and a NUL into out (65 bytes) and frees h.
 * Returns 0 or ENG_EINVAL.
 */
int hash_finish(struct hash *h, char out[HASH_HEX_LEN + 1]);

/* Frees an unfinished digest. hash_free(NULL) is a no-op. */
void hash_free(struct hash *h);

/* One-shot SHA-256 of a buffer into out (65 bytes). Returns 0 or an error. */
int hash_hex(const void *data, size_t len, char out[HASH_HEX_LEN + 1]);

/* FNV-1a's offset basis: the h to start a hash_fnv1a() chain with. */
#define HASH_FNV_BASIS 1469598103934665603ull

/* FNV-1a of len bytes, continuing from h. Can't fail. */
uint64_t hash_fnv1a(uint64_t h, const void *data, size_t len);

/* FNV-1a of the bytes of s (without the NUL), continuing from h. Can't fail. */
uint64_t hash_fnv1a_str(uint64_t h, const char *s);

#endif /* HASH_H */
