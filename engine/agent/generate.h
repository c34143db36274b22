/* SPDX-License-Identifier: MIT */
/*
 * A generation run: every (recording, group) pair is a stream of agent
 * sessions over the group's candidate clips, in index order, until the
 * group's quota of QAs is met. All streams of all recordings share one
 * queue served by `jobs` worker threads, so a slow brain never leaves
 * workers idle behind a group barrier.
 *
 * Results are written in index order within each stream (a reorder buffer
 * holds early finishers), and a stream stops at the session that fills its
 * quota: sessions issued beyond it are discarded, not stored. So the QAs,
 * the drops and the run's figures are the same at any --jobs. Figures are
 * counted when their batch commits, never before.
 *
 * Regeneration first supersedes nothing: it runs every session, then in
 * one transaction marks the category's unreviewed QAs superseded and
 * writes the replacements, so a failure or a kill at any moment leaves
 * the old QAs as they were.
 *
 * Nothing here prints; the caller's callbacks see progress, drops and
 * recording errors.
 */
#ifndef GENERATE_H
#define GENERATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent.h"
#include "brain.h"
#include "subtask.h"

struct store;

#define GEN_MAX_DROP_CODES 48

/* What a run has done so far (also what it did, at the end). */
struct gen_totals {
	long sessions;             /* sessions whose outcome was used */
	long discarded;            /* sessions run past a quota and not used */
	long qa_new, qa_kept, qa_replaced; /* stored QAs, by store_qa_put's answer */
	long drops;                /* candidates dropped (no QA) */
	long failed;               /* sessions whose brain failed */
	char first_failure[256];   /* the first failed session's reason ("" when none) */
	long superseded;           /* regenerate: unreviewed QAs replaced */
	long by_group[SUBTASK_NGROUPS];
	long recordings;           /* recordings processed */
	long recordings_failed;    /* recordings that could not be loaded or run */
	long other_shards;         /* recordings left to other shards */
	double t_brain, t_tools, t_truth, t_store; /* seconds, summed over sessions */
	long prompt_tokens, completion_tokens;     /* as the brains reported them */
	int ndrop_codes;
	char drop_codes[GEN_MAX_DROP_CODES][48];
	long drop_counts[GEN_MAX_DROP_CODES];
};

/* Callbacks; each may be NULL. They run with the run's lock held: keep them short. */
struct gen_hooks {
	void *ctx;
	/* after results were committed */
	void (*progress)(void *ctx, const char *rec_id, int group, const struct gen_totals *t);
	/* a stored drop or failure (for --verbose) */
	void (*drop)(void *ctx, const char *rec_id, int group, const struct agent_result *r);
	/* a recording that cannot be used: path and why */
	void (*rec_error)(void *ctx, const char *path, const char *why);
	/* a group of a recording that has no candidate clip: why */
	void (*no_candidates)(void *ctx, const char *rec_id, int group, const char *why);
};

struct gen_params {
	const char *const *paths;   /* recording folders, in order */
	size_t npaths;
	bool regenerate;            /* replace the unreviewed QAs of `category` */
	const char *category;       /* regenerate: the category */
	bool groups[SUBTASK_NGROUPS]; /* the groups to run */
	int per_task;               /* QAs per group and recording */
	int max_sessions;           /* sessions per group and recording, at most */
	int jobs;                   /* worker threads */
	int shard_i, shard_n;       /* only recordings of shard i of n (n = 0: all) */
	uint64_t seed;              /* run seed */
	const char *db;             /* the store's path, for the workers' cache handles */
	bool cache;                 /* give the workers the store's LLM response cache */
	struct agent_params agent;  /* session settings */
	struct gen_hooks hooks;
};

/*
 * Runs generation with clones of brain b (one per worker) into store st,
 * as run `run_id`. Returns 0 when every recording was processed (sessions
 * may have failed: see totals->failed), -1 when some recording could not
 * be (rec_error said why; the others were processed), or a negative enum
 * eng_err for a store or internal error (err_msg() says what), after
 * which nothing more was written. *totals is filled in every case.
 */
int gen_run(struct store *st, struct brain *b, int64_t run_id, const struct gen_params *p,
	    struct gen_totals *totals);

/*
 * The shard of a recording id: the first 8 bytes of SHA-256(id) as a
 * big-endian integer, modulo n. Returns 0 or ENG_EINVAL / a hash error.
 */
int gen_shard_of(const char *id, int n, int *shard);

#endif /* GENERATE_H */
