/* SPDX-License-Identifier: MIT */
/*
 * Reading a whole JSON file with cJSON, and typed field getters whose
 * errors name the file and the field ("objects.json: objects[3].name:
 * expected a string").
 *
 * Errors go through err_set() and return a negative enum eng_err. Trees
 * returned by jsonfile_read() belong to the caller (cJSON_Delete); strings
 * returned by the getters point into the tree.
 */
#ifndef JSONFILE_H
#define JSONFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

/* Largest JSON file read (bytes). */
#define JSONFILE_MAX_BYTES (256u << 20)

/*
 * Reads and parses `path`. On success stores the tree in *out and returns
 * 0. Returns ENG_ENOENT (no such file), ENG_EIO, ENG_ETOOBIG (larger than
 * JSONFILE_MAX_BYTES), ENG_ENOMEM, or ENG_EPARSE with
 * "path: parse error near line N"; *out is then untouched.
 */
int jsonfile_read(const char *path, cJSON **out);

/*
 * Field getters. `ctx` names the enclosing object in messages, e.g.
 * "dir/objects.json: objects[3]"; the message then reads
 * "<ctx>.<key>: ...". A ctx that ends with ':' (a bare file name, for
 * top-level fields) gives "<ctx> <key>: ..." instead. A missing field (or JSON null) is an error with
 * ENG_EPARSE when `required`, else leaves *out unchanged and returns 0.
 * A present field of the wrong type is always ENG_EPARSE.
 */
int jsonfile_str(const cJSON *obj, const char *key, bool required,
		 const char *ctx, const char **out);
int jsonfile_num(const cJSON *obj, const char *key, bool required,
		 const char *ctx, double *out);
/* An integer that a double holds exactly (|v| < 2^53; ENG_ERANGE beyond). */
int jsonfile_i64(const cJSON *obj, const char *key, bool required,
		 const char *ctx, int64_t *out);
int jsonfile_bool(const cJSON *obj, const char *key, bool required,
		  const char *ctx, bool *out);
/* An array of exactly n finite numbers. */
int jsonfile_vec(const cJSON *obj, const char *key, size_t n, bool required,
		 const char *ctx, double *out);

/*
 * Lenient readers of a member of obj, for documents the program wrote
 * itself (tool results, stored ground truth): the string (NULL when
 * missing or not a string), the number (dflt when missing or not a
 * number), and a time in ns (a number, or the digits of a raw or string
 * value as tools write exact int64 times; dflt otherwise). Can't fail.
 */
const char *jsonfile_get_str(const cJSON *obj, const char *key);
double jsonfile_get_num(const cJSON *obj, const char *key, double dflt);
int64_t jsonfile_get_time(const cJSON *obj, const char *key, int64_t dflt);

/*
 * cJSON_PrintUnformatted(root), byte for byte, faster: one pass into one
 * growing buffer, strings copied a run at a time between the bytes that
 * need an escape (cJSON counts them first, then writes byte by byte).
 * cJSON writes every number with "%1.15g" and reads it back with sscanf
 * to check the round trip; here an integer below 1e15 in magnitude, and a
 * decimal of at most 6 places below 1e9 (and at least 1e-4: what %g
 * writes without an exponent) that the value is the double nearest to, as
 * the tools' rounding gives, are written from their digits, which is the
 * text cJSON writes for them; other numbers are printed by cJSON. NULL
 * without memory, or for a tree cJSON cannot print (an invalid node, a
 * raw node without text). The tree is not changed. Free with free().
 */
char *jsonfile_print(cJSON *root);

#endif /* JSONFILE_H */
