/* SPDX-License-Identifier: MIT */
/*
 * The chain constructor (tool build_chain). For K actions, the edge between
 * consecutive action locations is the 8-way direction of location(a_i+1)
 * relative to location(a_i) in the BEV frame of the camera heading at
 * a_i's start (docs/design.md section 3), with EgoProx's letters; and every
 * order of the K actions that respects the ordering constraints, each with
 * its own edges.
 */
#ifndef CHAIN_H
#define CHAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "bev.h"

struct tool_ctx;

#define CHAIN_MAX 6          /* most actions of a chain */
#define CHAIN_MAX_BEFORE 30  /* most ordering constraints */
#define CHAIN_ORDER_LIMIT 720 /* 6! */
#define CHAIN_DEFAULT_LIMIT 50 /* orders build_chain lists by default */

struct chain_args {
	size_t nactions;             /* > 0: these action indices; 0: the k after t */
	size_t actions[CHAIN_MAX];
	int64_t t;
	size_t k;
	size_t nbefore;              /* constraints: before[i][0] comes before before[i][1] */
	size_t before[CHAIN_MAX_BEFORE][2]; /* (action indices) */
	bool keep_goal_order;        /* actions of one goal keep their observed order */
	size_t limit;                /* most orders to keep (<= CHAIN_ORDER_LIMIT) */
};

/* The directed edge between two members p -> q. */
struct chain_edge {
	bool defined;     /* false when the two locations coincide in XY */
	float yaw_deg;    /* of location(q) from location(p), heading at p's start */
	float margin_deg; /* to the nearest sector boundary */
	enum bev_dir dir;
	double bev_m;     /* horizontal distance, m */
	bool ambiguous;   /* undefined, within the sector margin or shorter than 0.1 m */
};

/* One order: members by position (indices into chain_result.act). */
struct chain_order {
	size_t member[CHAIN_MAX];
	bool ambiguous;   /* one of its edges is */
	bool observed;    /* the observed (start-time) order */
};

struct chain_result {
	size_t k;
	size_t act[CHAIN_MAX];        /* action indices in observed (start-time) order */
	float heading[CHAIN_MAX];     /* camera heading at each start, rad */
	struct chain_edge e[CHAIN_MAX][CHAIN_MAX]; /* e[p][q]: member p -> member q */
	struct chain_order observed;  /* the observed order */
	bool observed_valid;          /* it respects the constraints */
	struct chain_order orders[CHAIN_ORDER_LIMIT]; /* the first `norders` valid orders */
	size_t norders;
	size_t count;                 /* every valid order */
};

/*
 * The typed entry. Returns 0; ENG_EINVAL (through tool__reject) for a bad
 * action index, a repeated one, too few actions after t, a constraint on a
 * non-member; ENG_ERANGE when a camera has no heading. out is large
 * (allocate it on the heap).
 */
int chain_build(struct tool_ctx *ctx, const struct chain_args *args,
		struct chain_result *out);

/* True when an edge of r's observed order or of one of its listed orders is ambiguous. */
bool chain_ambiguous(const struct chain_result *r);

/*
 * The chain of actions first .. first + k - 1 as a chain question builds
 * it (each goal's actions keep their observed order, CHAIN_DEFAULT_LIMIT
 * orders listed), into out (large: on the heap): the truth's chain, and the
 * one the clip sampler tests with chain_ambiguous(). chain_build()'s
 * failures: ENG_EINVAL for a bad index, ENG_ERANGE for a camera without a
 * heading.
 */
int chain_build_actions(struct tool_ctx *ctx, size_t first, size_t k,
			struct chain_result *out);

/* Writes the tool's JSON into obj. Returns 0 or ENG_ENOMEM. */
int chain_write(struct tool_ctx *ctx, const struct chain_result *r, cJSON *obj);

#endif /* CHAIN_H */
