/* SPDX-License-Identifier: MIT */
/*
 * A JSON Schema subset validator over cJSON, for tool arguments and for
 * the brain's final answer (docs/llm-protocol.md section 7).
 *
 * Supported keywords: type (a name or an array of names; "integer" is a
 * number with no fractional part), enum, const (deep equality), required,
 * properties, additionalProperties (boolean or schema), items (one schema),
 * minItems, maxItems, minimum, maximum, exclusiveMinimum, exclusiveMaximum
 * (numbers, draft 6 and later), minLength, maxLength (in UTF-8 code
 * points) and anyOf. The boolean schemas true and false are accepted. The
 * annotations description, title, default, examples, $schema and $comment
 * are ignored. Any other keyword (pattern, $ref, oneOf, items as an
 * array...) makes schema_new() fail, so that a schema author learns at
 * load time that a constraint would not be enforced.
 *
 * Like JSON Schema, a keyword constrains only the values of its own type:
 * "minimum" ignores a string, "properties" ignores an array.
 *
 * Memory: a struct schema owns a private copy of the schema document;
 * the caller keeps ownership of everything it passes in.
 */
#ifndef SCHEMA_H
#define SCHEMA_H

#include <stddef.h>

#include <cjson/cJSON.h>

/* A checked schema (opaque). Read-only after creation: thread-safe to share. */
struct schema;

/* At most this many violations are reported by one schema_validate(). */
#define SCHEMA_MAX_VIOLATIONS 64

/*
 * Checks the schema document `doc` (an object or a boolean) and stores a
 * compiled copy in *out. `name` (may be NULL) prefixes error messages,
 * e.g. the file it came from. Returns 0, ENG_ENOMEM, or ENG_ESCHEMA with
 * err_msg() naming the schema location and the problem, e.g.
 * "schemas/tools/x.json: /properties/name: unsupported keyword 'pattern'".
 * *out is set only on success.
 */
int schema_new(const char *name, const cJSON *doc, struct schema **out);

/*
 * Parses JSON text of `len` bytes (need not be NUL-terminated) and calls
 * schema_new(). Also returns ENG_EPARSE for text that is not JSON.
 */
int schema_parse(const char *name, const char *text, size_t len,
		 struct schema **out);

/* Frees a schema. schema_free(NULL) is a no-op. */
void schema_free(struct schema *s);

/* The schema document (owned by s; valid until schema_free). */
const cJSON *schema_doc(const struct schema *s);

/*
 * Validates `inst` against s and appends one object
 * {"path": JSON Pointer, "message": text} per violation to the cJSON array
 * `violations` (which may be NULL to only count them). Paths follow RFC
 * 6901 ("" is the whole value, "/legs/3/dir" a nested one); messages say
 * what is wrong and what was found, e.g. "must be <= 100, got 500",
 * "is required", "is not allowed (allowed: a, b)". Every violation is
 * collected, up to SCHEMA_MAX_VIOLATIONS; past that one last entry says
 * how many were left out. Returns the number of violations (0 = valid),
 * or ENG_ENOMEM (the array then holds what was added so far).
 */
int schema_validate(const struct schema *s, const cJSON *inst,
		    cJSON *violations);

/*
 * Adds `null` for each property that an object schema lists, that the
 * instance lacks and whose own schema accepts null (type "null" or a type
 * array holding it), recursing into present objects and array items.
 * This lets a person omit the nullable fields that strict-mode schemas
 * list as required. Returns 0 or ENG_ENOMEM.
 */
int schema_fill_nulls(const struct schema *s, cJSON *inst);

#endif /* SCHEMA_H */
