/* SPDX-License-Identifier: MIT */
/*
 * Structured answers: the discretised value of a QA's ground truth (and of
 * every negative option), one tagged struct for every sub-task and metric of
 * docs/design.md section 3, and its conversions: to option text through the
 * templates in prompts/answers/ (one phrasing per kind), to and from JSON for
 * storage, and back from the free text an LLM wrote.
 *
 * A struct answer is a plain value (no pointers): copy it with `=`. The
 * fields a kind uses are listed next to each field; the others stay zero.
 * Values are canonical after ans_normalise(): yaws on the 5-degree grid with
 * the "keep facing forward" and "turn around" classes folded to 0 and 180,
 * distances on the docs/design.md distance grid, names trimmed. ans_equal(),
 * ans_render() and the negative margins in engine/qc.h expect canonical
 * values; ans_parse() and ans_from_json() return canonical values.
 */
#ifndef ANSWER_H
#define ANSWER_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "bev.h"
#include "buf.h"
#include "discretise.h"
#include "recording.h"

#define ANS_NAME_MAX 96   /* object and reference names, with the NUL */
#define ANS_VERB_MAX 48   /* interaction verbs, with the NUL */
#define ANS_CHAIN_MAX 8   /* nodes of a chain */
#define ANS_CHAIN_BASE 1  /* node ids are 1-based indices into the candidate set */
#define ANS_TEXT_MAX 512  /* cap of one rendered option, with the NUL */
#define ANS_DIST_MAX_M 1000.0f /* largest distance an answer may hold */

/*
 * The kinds, one per sub-task and metric. ans_kind_name() gives the
 * "<category>.<subtask>.<metric>" name, which is also the base name of the
 * answer template (prompts/answers/) and question template
 * (prompts/questions/) files.
 */
enum ans_kind {
	ANS_HEAD_TURN_APPROX = 0, /* intention.head_turn.approx */
	ANS_HEAD_TURN_RELATIVE,   /* intention.head_turn.relative */
	ANS_GAZE_APPROX,          /* intention.gaze_target.approx */
	ANS_GAZE_RELATIVE,        /* intention.gaze_target.relative */
	ANS_NAV_APPROX,           /* exploration.navigate.approx */
	ANS_NAV_RELATIVE,         /* exploration.navigate.relative */
	ANS_INTERACT_APPROX,      /* exploitation.next_interaction.approx */
	ANS_INTERACT_RELATIVE,    /* exploitation.next_interaction.relative */
	ANS_CHAIN,                /* chain.actions.relative */
	ANS_NKIND
};

/* Relations of a gaze target to a reference object (gaze relative). */
enum ans_rel {
	ANS_REL_LEFT_OF = 0,
	ANS_REL_RIGHT_OF,
	ANS_REL_IN_FRONT_OF,
	ANS_REL_BEHIND,
	ANS_REL_NEAR,
	ANS_NREL
};

struct answer {
	enum ans_kind kind;
	float yaw_deg;        /* HEAD_TURN_APPROX, GAZE_APPROX: signed BEV yaw, + = left;
				 canonical: 0 (forward), 180 (around) or +-15..165 step 5 */
	enum bev_dir dir;     /* HEAD_TURN_RELATIVE; NAV_APPROX (first leg); INTERACT_* */
	int nlegs;            /* NAV_RELATIVE: 1 or 2 */
	enum bev_dir legs[2]; /* NAV_RELATIVE: each relative to the heading after the
				 previous leg */
	float dist_m;         /* NAV_APPROX: path length; INTERACT_APPROX: displacement */
	int vertical;         /* INTERACT_APPROX: -1 down, 0 level, +1 up */
	enum rec_hand hand;   /* INTERACT_APPROX: REC_HAND_NONE when the hand is not asked */
	enum ans_rel rel;     /* GAZE_RELATIVE */
	char object[ANS_NAME_MAX]; /* GAZE_*, INTERACT_*: display name of the object */
	char ref[ANS_NAME_MAX];    /* GAZE_RELATIVE: display name of the reference */
	char verb[ANS_VERB_MAX];   /* INTERACT_*: "pick up", "place", ... */
	int k;                /* CHAIN: number of nodes (2..ANS_CHAIN_MAX) */
	int nodes[ANS_CHAIN_MAX];             /* CHAIN: node ids (ANS_CHAIN_BASE-based) */
	enum bev_dir edges[ANS_CHAIN_MAX - 1]; /* CHAIN: k - 1 edge directions */
};

#define ANS_STRATA_MAX 5    /* key fields per kind that key balance counts */
#define ANS_STRATUM_MAX 112 /* one "field=value" label, with the NUL */

/* The key fields ans_strata() labels. */
enum ans_field {
	ANS_F_DIRECTION = 0,
	ANS_F_TURN,
	ANS_F_DISTANCE,
	ANS_F_VERTICAL,
	ANS_F_HAND,
	ANS_F_RELATION,
	ANS_F_VERB,
	ANS_F_FIRST_LEG,
	ANS_F_LEGS,
	ANS_NFIELDS
};

/*
 * The key fields of answer a, as labels "field=value" with their fields:
 * sector (direction, first leg, legs), turn (in 30-degree bins per side),
 * distance (bins a factor 2 apart from 0.25 m), vertical class, hand,
 * relation and verb. Object and reference names are left to the
 * sampler's stratified order. Chains have none. Into out and field (when
 * not NULL); returns the count. Can't fail.
 */
int ans_strata(const struct answer *a, char (*out)[ANS_STRATUM_MAX], enum ans_field *field);

/* "intention.head_turn.approx", ...; "?" for an invalid kind. Can't fail. */
const char *ans_kind_name(enum ans_kind kind);

/* The kind named `name`, or ANS_NKIND when none. Can't fail. */
enum ans_kind ans_kind_from_name(const char *name);

/* The kind of a sub-task ("head_turn", ...) and metric; ANS_NKIND if none. */
enum ans_kind ans_kind_from_task(const char *subtask, const char *metric);

/* "left_of", "right_of", "in_front_of", "behind", "near"; "?" if invalid. */
const char *ans_rel_name(enum ans_rel rel);
enum ans_rel ans_rel_from_name(const char *name);

/* Zeroes *a and sets its kind (dir, legs and edges to BEV_FRONT). */
void ans_init(struct answer *a, enum ans_kind kind);

/*
 * Copies a name or verb into a field of `size` bytes (e.g. a->object,
 * sizeof(a->object)), trimming spaces. Returns 0, ENG_EINVAL for NULL, or
 * ENG_ETOOBIG when it does not fit (the field is then left empty).
 */
int ans_set_text(char *field, size_t size, const char *s);

/*
 * Makes *a canonical with the discretisation settings p (NULL = docs/design.md
 * defaults): the yaw class from the raw yaw (|yaw| < forward_deg -> 0,
 * |yaw| > around_deg -> 180) and the magnitude rounded to the angle step;
 * distances rounded with disc_distance(); names trimmed. Returns 0, or
 * ENG_EINVAL with err_msg() naming the field when a value is out of range
 * (bad direction, hand, relation, leg count, chain length or node id,
 * non-finite number, distance that rounds to 0 or exceeds ANS_DIST_MAX_M,
 * empty required name, object equal to the reference).
 */
int ans_normalise(struct answer *a, const struct disc_params *p);

/*
 * Renders the option text of a canonical answer through its template
 * (prompts/answers/<kind>.txt), first letter capitalised, appending to out.
 * Examples: "Turn left ~95°", "Keep facing forward", "Turn the head
 * front-right", "Look ~40° to the left, at the kettle", "The kettle, left of
 * the sink", "Turn left and go forward ~3.2 m", "First turn left and go
 * forward, then go front-right", "Front-left, down ~0.6 m, to pick up the
 * cup", "Turn left to pick up the cup", "[[3,1,7],[\"B\",\"E\"]]". The
 * value should be canonical (forward and around are recognised as exactly 0
 * and 180). Returns 0, ENG_EINVAL for an invalid value (one ans_normalise()
 * refuses), or a template/buffer error.
 */
int ans_render(const struct answer *a, struct buf *out);

/*
 * ans_render() in phrasing variant `style` (any integer): a template key
 * "k" may have variants "k~2" .. "k~9", and style picks one (modulo their
 * number) for the phrase and for each word list, so that one item renders
 * all its options alike while items vary. ans_parse() reads every variant.
 * Same returns as ans_render().
 */
int ans_render_style(const struct answer *a, int style, struct buf *out);

/*
 * The readable form of a chain: the descriptions of its nodes joined by
 * the template's arrow, e.g. "Get dish soap ->left-> Wash the board".
 * cands[i] is the description of node id i + ANS_CHAIN_BASE. Returns 0,
 * ENG_EINVAL (not a chain, node out of range) or a template/buffer error.
 */
int ans_render_chain_readable(const struct answer *a, const char *const *cands,
			      int ncands, struct buf *out);

/*
 * The answer as a new cJSON object (caller frees with cJSON_Delete), e.g.
 * {"kind":"exploration.navigate.approx","direction":"left","distance_m":3.2}.
 * Returns NULL when out of memory or for an invalid kind.
 */
cJSON *ans_to_json(const struct answer *a);

/*
 * Reads an object written by ans_to_json() and normalises it with the
 * defaults. Returns 0, or ENG_EPARSE / ENG_EINVAL with err_msg() naming the
 * missing or bad field; *out is then unspecified.
 */
int ans_from_json(const cJSON *j, struct answer *out);

/*
 * Parses the free text of one option (written by an LLM, or rendered by
 * ans_render()) as a value of `kind`, then normalises it with p (NULL =
 * defaults). Tolerant of case, punctuation, "~", "about", "approximately",
 * "°", "deg", "degrees", "m", "metres", "meters", "cm", synonyms of the
 * verbs ("rotate/pivot/angle/align/look the head", "advance", "proceed",
 * "head to", "move", "step"), direction words (forward, ahead, straight,
 * behind, around, back, front-left / front left ...), hands ("with the
 * right hand", "using both hands"), and of trailing clauses such as ", in
 * order to retrieve ...". Returns 0, or ENG_EPARSE (err_msg() says what
 * was missing) when the text does not give every field the kind needs.
 */
int ans_parse(enum ans_kind kind, const char *text, const struct disc_params *p,
	      struct answer *out);

/*
 * True when a and b are the same structured value: same kind and equal
 * fields (numbers within 1e-3, names equal under ans_name_equal()). Fields
 * the kind does not use are ignored. Can't fail.
 */
bool ans_equal(const struct answer *a, const struct answer *b);

/*
 * True when two names denote the same thing once lowercased, punctuation
 * turned into spaces and a leading article ("the", "a", "an") dropped:
 * "The Blue-Mug" equals "blue mug". Can't fail.
 */
bool ans_name_equal(const char *a, const char *b);

/*
 * The display name of an object instance for questions and options:
 * CamelCase and '_' split into lowercase words ("BlackCeramicMug" -> "black
 * ceramic mug", "WoodenFork_1" -> "wooden fork"). A trailing instance index
 * ("_1", "_2") is dropped when no name in `others` (the other objects of
 * the scene, without this one) has the same base; otherwise it is kept as
 * "(2)" so that the question names the instance ("candle (2)").
 * Returns 0, ENG_ETOOBIG when out is too small, or ENG_EINVAL when another
 * object has the same display name even with its index (the instance
 * cannot be named; the caller should not ask about it).
 */
int ans_display_name(const char *name, const char *const *others, size_t nothers,
		     char *out, size_t size);

/*
 * ans_display_name() of object i of a recording, against all its other
 * objects. Same returns; ENG_EINVAL also for an index out of range.
 */
int ans_object_name(const struct recording *rec, size_t i, char *out, size_t size);

#endif /* ANSWER_H */
