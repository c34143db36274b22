/* SPDX-License-Identifier: MIT */
/* SHA-256 over OpenSSL EVP. */
#include "hash.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "err.h"

struct hash {
	EVP_MD_CTX *ctx;
};

/*
 * SHA-256 fetched once for the process: EVP_sha256() makes OpenSSL 3
 * fetch the implementation again in every EVP_DigestInit_ex(), under a
 * global lock, which 64 workers starting their sessions at once queued
 * on. Kept to the end (OpenSSL frees it at exit).
 */
static EVP_MD *sha256_md;
static pthread_once_t sha256_once = PTHREAD_ONCE_INIT;

static void sha256_fetch(void)
{
	sha256_md = EVP_MD_fetch(NULL, "SHA256", NULL);
}

static const EVP_MD *sha256(void)
{
	pthread_once(&sha256_once, sha256_fetch);
	return sha256_md ? sha256_md : EVP_sha256();
}

int hash_new(struct hash **out)
{
	struct hash *h = calloc(1, sizeof(*h));

	if (!h)
		return ENG_ENOMEM;
	h->ctx = EVP_MD_CTX_new();
	if (!h->ctx || EVP_DigestInit_ex(h->ctx, sha256(), NULL) != 1) {
		hash_free(h);
		return ENG_ENOMEM;
	}
	*out = h;
	return 0;
}

int hash_add(struct hash *h, const void *data, size_t len)
{
	return EVP_DigestUpdate(h->ctx, data, len) == 1 ? 0 : ENG_EINVAL;
}

int hash_add_field(struct hash *h, const char *s)
{
	return hash_add(h, s, strlen(s) + 1);
}

int hash_finish(struct hash *h, char out[HASH_HEX_LEN + 1])
{
	static const char hex[] = "0123456789abcdef";
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0, i;
	int rc = 0;

	if (EVP_DigestFinal_ex(h->ctx, md, &n) != 1 || n != 32) {
		rc = ENG_EINVAL;
		goto out;
	}
	for (i = 0; i < n; i++) {
		out[2 * (size_t)i] = hex[md[i] >> 4];
		out[2 * (size_t)i + 1] = hex[md[i] & 15];
	}
	out[2 * (size_t)n] = '\0';
out:
	hash_free(h);
	return rc;
}

void hash_free(struct hash *h)
{
	if (!h)
		return;
	EVP_MD_CTX_free(h->ctx);
	free(h);
}

int hash_hex(const void *data, size_t len, char out[HASH_HEX_LEN + 1])
{
	struct hash *h = NULL;
	int rc = hash_new(&h);

	if (rc)
		return rc;
	rc = hash_add(h, data, len);
	if (rc) {
		hash_free(h);
		return rc;
	}
	return hash_finish(h, out);
}

uint64_t hash_fnv1a(uint64_t h, const void *data, size_t len)
{
	const unsigned char *p = data;
	size_t i;

	for (i = 0; i < len; i++)
		h = (h ^ p[i]) * 1099511628211ull;
	return h;
}

uint64_t hash_fnv1a_str(uint64_t h, const char *s)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}
