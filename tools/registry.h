/* SPDX-License-Identifier: MIT */
/*
 * The tool registry: one table binding each brain-callable tool's name to
 * its JSON Schema (the embedded file schemas/tools/NAME.json, whose
 * top-level "description" is the tool description an LLM reads) and to
 * its C function; tool_call(), which turns JSON argument text into a JSON
 * result object the same way for the brain and for `proxima tool`; and
 * struct tool_ctx, the per-thread context that tools read the recording
 * from and keep their reusable workspaces in.
 *
 * Results (docs/llm-protocol.md section 5.2) are always a JSON object:
 *   {"ok":true, ...tool fields...}
 *   {"ok":false,"error":"unknown_tool","detail":"...","valid_tools":[...]}
 *   {"ok":false,"error":"invalid_json","detail":"...","hint":"..."}
 *   {"ok":false,"error":"invalid_arguments","violations":[{"path","message"}],"hint":"..."}
 *   {"ok":false,"error":"tool_failed","detail":"..."}
 *
 * Adding a tool: write `int tool_NAME(struct tool_ctx *, const cJSON *,
 * cJSON *)` in tools/<file>.c and add schemas/tools/NAME.json (with a
 * "title": its one-line summary, and a "description" for the brain). The
 * build generates the table row and the prototype from the schema
 * (scripts/gen_tools.sh). Give the tool a typed entry too
 * (x_compute(ctx, const struct x_args *, struct x_result *) in its own
 * header) so that the engine calls it without JSON.
 *
 * Threads: the table and the compiled schemas are shared read-only; a
 * struct tool_ctx belongs to one thread at a time.
 */
#ifndef REGISTRY_H
#define REGISTRY_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "discretise.h"
#include "recording.h"
#include "schema.h"

struct tool_ctx;

/*
 * A tool's C function. `args` has already passed the tool's schema. The
 * function adds its fields to `result`, an object that already holds
 * "ok": true, and returns 0. On bad argument values that the schema cannot
 * express (an unknown object id, a time outside the recording) it returns
 * tool__reject(), which the registry reports as invalid_arguments; on any
 * other failure a negative enum eng_err with err_set() describing it
 * (reported as tool_failed). It must not print.
 */
typedef int (*tool_fn)(struct tool_ctx *ctx, const cJSON *args, cJSON *result);

/* One row of the registry (generated from the schemas). */
struct tool_def {
	const char *name;    /* ^[a-z0-9_]{1,64}$; the schema is schemas/tools/NAME.json */
	tool_fn fn;          /* the implementation */
};

/* The generated table (scripts/gen_tools.sh); read it through tool_at(). */
extern const struct tool_def tool__table[];
extern const size_t tool__ntable;

/* ======================= The table ======================= */

/* Number of registered tools, and the i-th (NULL past the end). */
size_t tool_count(void);
const struct tool_def *tool_at(size_t i);

/* The tool called `name`, or NULL. Can't fail. */
const struct tool_def *tool_find(const char *name);

/*
 * The compiled parameter schema of tool t (owned by the registry, valid
 * for the life of the program). The schemas of all tools are loaded and
 * checked on the first call of any registry function that needs them
 * (thread-safe). Returns 0, or the load error (ENG_ENOENT when the file is
 * not embedded, ENG_EPARSE, ENG_ESCHEMA) with err_msg() naming the file.
 */
int tool_schema(const struct tool_def *t, const struct schema **out);

/* The tool description: the schema's top-level "description" ("" if none). */
const char *tool_description(const struct tool_def *t);

/* The one-line summary: the schema's "title" ("" if none). */
const char *tool_summary(const struct tool_def *t);

/*
 * Checks that every registered tool has an embedded schema that loads, a
 * root of type object and a description. Returns 0 or the first error
 * (err_msg() names the tool and the file).
 */
int tool_registry_check(void);

/*
 * Builds the OpenAI "tools" array for every registered tool:
 * [{"type":"function","function":{"name","description","parameters",
 * "strict":true}}, ...]. The caller owns *out (cJSON_Delete). Returns 0,
 * ENG_ENOMEM or a schema load error.
 */
int tool_openai_tools(cJSON **out);

/* ======================= Context ======================= */

/*
 * Slots where tools keep per-thread workspaces and caches across calls.
 * A tool that needs one reads it with tool_ctx_slot() and, when NULL,
 * creates it and hands it over with tool_ctx_set_slot(). Add a value here
 * for a new kind of workspace.
 */
enum tool_slot {
	TOOL_SLOT_MOTION = 0, /* motion segments of dynamic objects (interactions.c) */
	TOOL_SLOT_OCCUPANCY,  /* occupancy grids (occupancy.c) */
	TOOL_SLOT_ASTAR,      /* A* search workspace (path.c) */
	TOOL_SLOT_SCENE,      /* BVH / scene cache of object boxes (visibility.c, gaze.c) */
	TOOL_SLOT_VISIBILITY, /* visibility results (visibility.c) */
	TOOL_SLOT_GAZE,       /* fixations (gaze.c) */
	TOOL_SLOT_CLIPS,      /* clip candidates (clip_sampler.c) */
	TOOL_SLOT_PROMPT,     /* the agent's recording summary for prompts (agent.c) */
	TOOL_SLOT_PRIOR,      /* the negatives' prior of each group (truth.c) */
	TOOL_SLOT_COUNT
};

/* Context options. */
enum tool_ctx_flags {
	/*
	 * Before validation, add null for every missing property whose schema
	 * accepts null (schema_fill_nulls), so a person may leave out the
	 * optional fields. Brains are held to the strict schemas without it.
	 */
	TOOL_CTX_FILL_NULLS = (1 << 0)
};

/*
 * A context over the recording `rec` (borrowed: it must outlive the
 * context; with NULL every tool fails with tool_failed). The
 * discretisation settings start as disc_defaults(). Returns 0 and stores
 * the context in *out, or ENG_ENOMEM.
 */
int tool_ctx_new(const struct recording *rec, struct tool_ctx **out);

/* Frees the context and calls each slot's destructor. NULL is a no-op. */
void tool_ctx_free(struct tool_ctx *ctx);

/* The recording (may be NULL). Can't fail. */
const struct recording *tool_ctx_rec(const struct tool_ctx *ctx);

/* The discretisation settings tools use; set copies *p. Can't fail. */
const struct disc_params *tool_ctx_disc(const struct tool_ctx *ctx);
void tool_ctx_set_disc(struct tool_ctx *ctx, const struct disc_params *p);

/* Sets the enum tool_ctx_flags of the context. Can't fail. */
void tool_ctx_set_flags(struct tool_ctx *ctx, unsigned flags);

/* The data in a slot, or NULL when empty. Can't fail. */
void *tool_ctx_slot(const struct tool_ctx *ctx, enum tool_slot slot);

/*
 * Stores `data` in a slot; the context owns it from now on and calls
 * destroy(data) (when destroy is not NULL) when the slot is replaced or
 * the context freed. A previous occupant is destroyed first (unless it is
 * the same pointer). Returns 0, or ENG_EINVAL for an invalid slot (data is
 * then not taken).
 */
int tool_ctx_set_slot(struct tool_ctx *ctx, enum tool_slot slot, void *data,
		      void (*destroy)(void *data));

/*
 * A store of read-only values shared by the contexts of one recording
 * (one per worker thread): what a tool computes once from the recording
 * alone (the candidate lists) is computed by the first context that asks
 * and then read by every other, instead of once per worker. Thread-safe;
 * it must outlive the contexts attached to it.
 */
struct tool_shared;

/* A new empty store in *out. Returns 0 or ENG_ENOMEM. */
int tool_shared_new(struct tool_shared **out);

/* Frees the store and its values. NULL is a no-op. */
void tool_shared_free(struct tool_shared *s);

/* Attaches s (borrowed, may be NULL) to ctx. Can't fail. */
void tool_ctx_share(struct tool_ctx *ctx, struct tool_shared *s);

/*
 * How many candidates the navigation clip lists of the contexts attached
 * to s gather before they stop visiting spans (each costs a path plan):
 * what the caller's sessions can use, not what the recording holds. 0
 * (the default) leaves the clip sampler's own cap. Set it before the
 * first list is made. Can't fail.
 */
void tool_shared_set_list_size(struct tool_shared *s, size_t n);

/* The list size of ctx's shared store, or 0 without one or when unset. */
size_t tool_ctx_list_size(const struct tool_ctx *ctx);

/*
 * The value under key (at most 95 characters), made once: the first
 * caller runs make(arg, &data, &destroy) while later callers of the same
 * key wait for it; the store then owns data (destroy(data) at
 * tool_shared_free). Without a store attached, make runs every time and
 * the caller owns data. *owned says which. A failed make is not stored
 * (the next caller tries again). Returns 0 or make's error.
 */
int tool_shared_get(struct tool_ctx *ctx, const char *key,
		    int (*make)(void *arg, void **data, void (**destroy)(void *data)),
		    void *arg, void **data, bool *owned);

/*
 * tool_shared_get() into slot of ctx: the value made once per store (the
 * slot borrows it) or, without a store, made here (the slot owns it and
 * frees it with destroy, the destructor make gives). *out is the value.
 * Returns 0 or make's error; the slot is unchanged on failure.
 */
int tool_shared_slot(struct tool_ctx *ctx, enum tool_slot slot, const char *key,
		     int (*make)(void *arg, void **data, void (**destroy)(void *data)),
		     void *arg, void (*destroy)(void *data), void **out);

/* ======================= Calling ======================= */

/*
 * Runs tool `name` on the JSON argument text `args_json` (NUL-terminated;
 * NULL, "" or only whitespace mean {}). The text must be exactly one JSON
 * value: trailing characters are an invalid_json error. The arguments are
 * validated against the tool's schema, then the tool runs.
 *
 * Always stores a new result object in *result (the caller frees it with
 * cJSON_Delete), except when memory runs out while building it (ENG_ENOMEM
 * and *result NULL). Returns 0 when the result has "ok": true; otherwise
 * the result has "ok": false and the return value says why:
 * ENG_ENOTFOUND (unknown_tool), ENG_EPARSE (invalid_json), ENG_ESCHEMA
 * (invalid_arguments) or the tool's own error code (tool_failed).
 */
int tool_call(struct tool_ctx *ctx, const char *name, const char *args_json,
	      cJSON **result);

/*
 * The same for arguments that are already parsed (some servers send an
 * object instead of a string); NULL means {}. `args` is not modified (a
 * copy is taken when TOOL_CTX_FILL_NULLS is set).
 */
int tool_call_value(struct tool_ctx *ctx, const char *name, const cJSON *args,
		    cJSON **result);

/* ======================= Helpers for tool implementations ======================= */

/*
 * Records an argument violation at JSON Pointer `path` (e.g. "/object")
 * and returns ENG_EINVAL; a tool returns that value to have the call
 * reported as invalid_arguments with every recorded violation.
 */
int tool__reject(struct tool_ctx *ctx, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Argument readers: the value of key when present and not null. */
bool tool__has(const cJSON *args, const char *key);
double tool__num(const cJSON *args, const char *key, double dflt);
int64_t tool__time(const cJSON *args, const char *key, int64_t dflt);
const char *tool__str(const cJSON *args, const char *key);

/*
 * Resolves the object id at args[key] into an index of rec->objects, or
 * rejects it ("no object with id 'x'"). Returns 0 or ENG_EINVAL.
 */
int tool__object_arg(struct tool_ctx *ctx, const cJSON *args, const char *key,
		     long *idx);

/*
 * Camera pose and heading (radians) at t. Rejects with path "/<key>" when
 * t is outside the trajectory; fails with ENG_ERANGE when the camera looks
 * straight up or down (no heading).
 */
/*
 * Notes in result's "ignored" array that argument key was given but does
 * not apply here ({"argument", "why"}). A schema-following model fills
 * every property in strict mode, so an argument that does not apply is
 * ignored, not an error. Returns the note or NULL when out of memory.
 */
cJSON *tool__ignored(cJSON *result, const char *key, const char *why);

int tool__camera(struct tool_ctx *ctx, const char *key, int64_t t,
		 struct pose *cam, float *heading);

/*
 * The same with t clamped into the trajectory (for action locations).
 * Returns 0, or ENG_ERANGE when the heading is undefined.
 */
int tool__camera_clamped(const struct recording *rec, int64_t t,
			 struct pose *cam, float *heading);

/* World centre of object i's box at t. Can't fail. */
void tool__object_pos(const struct recording *rec, size_t i, int64_t t,
		      vec3 out);

/*
 * The location of action i (docs/design.md section 3): its object's box centre
 * at the action start when the action names an object, else the camera
 * position at the start (clamped into the trajectory). *source is
 * "object" or "camera". Can't fail.
 */
void tool__action_location(const struct recording *rec, size_t i, vec3 out,
			   const char **source);

/*
 * A new JSON object describing action i: index, start_ns, end_ns, verb,
 * object ({id,name,category} or null), hand, description, goal, location
 * and location_source (tool__action_location). NULL when out of memory.
 */
cJSON *tool__action_json(const struct recording *rec, size_t i);

/* "left", "right", "both", or NULL for REC_HAND_NONE. */
const char *tool__hand_name(enum rec_hand h);

/* Result writers; each returns the added item or NULL when out of memory. */
cJSON *tool__add_time(cJSON *obj, const char *key, int64_t t_ns);
cJSON *tool__add_num(cJSON *obj, const char *key, double v, int decimals);
cJSON *tool__add_vec3(cJSON *obj, const char *key, const vec3 v, int decimals);
cJSON *tool__add_str(cJSON *obj, const char *key, const char *s); /* NULL -> null */
cJSON *tool__add_object_ref(cJSON *obj, const char *key,
			    const struct recording *rec, long i); /* -1 -> null */
cJSON *tool__time_value(int64_t t_ns);

/* Rounds v to `decimals` decimal places (for compact JSON numbers). */
double tool__round(double v, int decimals);

/* ======================= Tool entry points ======================= */

/* tool_NAME() of every schema, generated by the build. */
#include "tools_gen.h"

#endif /* REGISTRY_H */
