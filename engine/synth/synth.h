/* SPDX-License-Identifier: MIT */
/*
 * Synthetic recordings: a furnished room (kitchen, apartment or office), a
 * wearer who walks between places, looks around, fixates objects and moves
 * small objects while working through goals, written in the native
 * proxima-recording/1 layout. The same parameters give byte-identical
 * files (own seeded PRNG, fixed number formats).
 *
 * Actions come in goal instances: consecutive actions with the same
 * goal_index; two instances of one goal never follow each other, so in the
 * written actions.json a change of goal starts a new instance.
 *
 * Memory: synth_generate() returns a struct synth_recording that owns every
 * array it points to; synth_free() releases it. Object ids, names,
 * categories, verbs and goals point at static tables and are never freed;
 * action descriptions are owned by the recording.
 */
#ifndef SYNTH_H
#define SYNTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "obb.h"
#include "pose.h"
#include "recording.h"

enum synth_scene { SYNTH_KITCHEN = 0, SYNTH_APARTMENT, SYNTH_OFFICE, SYNTH_NSCENES };

/* Bounds of --minutes. */
#define SYNTH_MINUTES_MIN 0.05
#define SYNTH_MINUTES_MAX 120.0

/* Stream rates (Hz) and the wearer's limits the generator keeps to. */
#define SYNTH_TRAJ_HZ 30
#define SYNTH_GAZE_HZ 60
#define SYNTH_MAX_SPEED_MPS 1.35 /* camera speed never exceeds this (walk 1.25 + bob) */
#define SYNTH_MAX_YAW_DPS 110.0  /* camera heading rate never exceeds this (head 100) */
#define SYNTH_EYE_HEIGHT 1.6     /* standing camera height, m */

struct synth_params {
	enum synth_scene scene;
	double minutes;  /* length, SYNTH_MINUTES_MIN..SYNTH_MINUTES_MAX */
	uint64_t seed;
};

enum synth_kind {
	SYNTH_WALL = 0,  /* a thin box bounding the room */
	SYNTH_FURNITURE, /* large static furniture standing on the floor or on a wall */
	SYNTH_ITEM       /* a small object resting on a furniture top */
};

/* One object. Its box is centred on the object frame (local centre 0). */
struct synth_object {
	const char *id;        /* unique id, e.g. "mug_2" */
	const char *name;      /* instance name, e.g. "blue mug" */
	const char *category;  /* category, e.g. "mug" */
	enum synth_kind kind;
	vec3 half;             /* box half-extents in the object frame, m */
	struct pose pose;      /* T_world_object at the start (rotation about Z only) */
	enum rec_motion motion; /* REC_DYNAMIC when it is carried at least once */
	long support;          /* item: index of the furniture it starts on; else -1 */
	size_t pose_first;     /* dynamic: first sample in obj_poses */
	size_t pose_count;     /* dynamic: number of samples (0 when static) */
};

/* One annotated action. */
struct synth_action {
	int64_t start_ns, end_ns;
	const char *verb;      /* "pick up", "put down", "pour", ... */
	long object;           /* index into objects */
	enum rec_hand hand;
	char *description;     /* e.g. "Take the blue mug from the shelves" (owned) */
	const char *goal;      /* e.g. "make coffee" */
	size_t goal_index;     /* which goal instance (0, 1, ...) the action serves */
};

/* One gaze sample: a world ray from the camera centre. */
struct synth_gaze {
	int64_t t_ns;
	vec3 o;           /* origin = camera position at t_ns */
	vec3 d;           /* unit direction, world */
	float depth_m;    /* fixation: entry distance into the fixated box; else
			   * into the first box the ray meets; 0 = none */
	long fixation;    /* index into fixations, or -1 (saccade or free gaze) */
};

/*
 * A fixation: consecutive gaze samples whose rays all meet one object
 * first (no other box in front), each within 30 deg/s of the previous.
 */
struct synth_fixation {
	long object;      /* index into objects */
	size_t first;     /* first gaze sample */
	size_t count;     /* number of samples (duration (count - 1) / 60 s) */
};

/* One carry: an item picked up, carried and (unless the recording ends first) put down. */
struct synth_carry {
	long object;      /* index into objects */
	enum rec_hand hand;
	int64_t t_start;  /* start of the pick-up action (first pose sample) */
	int64_t t_end;    /* end of the put-down action (last pose sample) */
	long pick_action; /* index into actions */
	long place_action; /* index into actions, or -1 when cut by the end */
};

struct synth_recording {
	char id[96];                    /* e.g. "synth-kitchen-s1-10min" */
	struct synth_params params;
	struct rec_camera camera;       /* pinhole 640x480, fx = fy = 320 */
	float room_w, room_d;           /* room spans [0, room_w] x [0, room_d]; floor z = 0 */

	struct pose_sample *traj;       /* T_world_camera at 30 Hz */
	size_t ntraj;
	struct synth_gaze *gaze;        /* 60 Hz */
	size_t ngaze;
	struct synth_fixation *fixations;
	size_t nfixations;
	struct synth_object *objects;   /* walls, then furniture, then items */
	size_t nobjects;
	struct pose_sample *obj_poses;  /* dynamic samples, grouped per object, 30 Hz */
	size_t nobj_poses;
	struct synth_action *actions;   /* sorted by start */
	size_t nactions;
	struct synth_carry *carries;    /* sorted by start */
	size_t ncarries;
	size_t ngoals;                  /* goal instances begun */
};

/*
 * The scene for a name ("kitchen", "apartment", "office"). Returns 0, or
 * ENG_EINVAL (with err_msg() naming the bad value) when there is none.
 */
int synth_scene_from_name(const char *name, enum synth_scene *out);

/* The name of a scene ("?" for a bad value). Can't fail. */
const char *synth_scene_name(enum synth_scene s);

/*
 * Generates a recording. On success stores a new recording in *out and
 * returns 0. Returns ENG_ERANGE when minutes is outside its bounds or
 * not finite, ENG_EINVAL for an unknown scene, ENG_ENOMEM; *out is then
 * untouched and err_msg() says what failed.
 */
int synth_generate(const struct synth_params *p, struct synth_recording **out);

/* Frees everything. synth_free(NULL) is a no-op. */
void synth_free(struct synth_recording *s);

/*
 * T_world_object of object i at t: the start pose before the object's
 * first sample, interpolated between samples, the last sample after them
 * (the semantics of recording_object_pose_at). Can't fail.
 */
void synth_object_pose_at(const struct synth_recording *s, size_t i, int64_t t,
			  struct pose *out);

/* The world box of object i at t. Can't fail. */
void synth_object_box_at(const struct synth_recording *s, size_t i, int64_t t,
			 struct obb *out);

enum synth_write_flags {
	SYNTH_WRITE_FORCE = (1 << 0) /* write into a folder that is not empty */
};

/* Default and bounds of the video frame rate (frames per second). */
#define SYNTH_VIDEO_FPS 10.0
#define SYNTH_VIDEO_FPS_MIN 1.0
#define SYNTH_VIDEO_FPS_MAX 60.0

/* How synth_write_with() writes a recording. Zeroed: as synth_write(s, dir, 0). */
struct synth_write_opts {
	unsigned flags;  /* enum synth_write_flags */
	bool video;      /* also render what the camera sees into video.mp4 */
	double fps;      /* its frame rate, SYNTH_VIDEO_FPS_MIN..MAX (0: SYNTH_VIDEO_FPS) */
	bool labels;     /* draw each object's name on it in the video */
	int threads;     /* render threads (0: every core OpenMP offers) */
};

/* What the video of a write took. */
struct synth_write_stats {
	size_t frames;   /* video frames written (0 without video) */
	double fps;      /* their rate */
	double seconds;  /* wall time of rendering and encoding them */
	int threads;     /* render threads used */
};

/*
 * Writes s as a native recording into folder dir (created with its
 * parents when missing): recording.json, trajectory.csv, gaze.csv,
 * objects.json, object_poses.csv, actions.json. Each file is written to
 * a temporary name and renamed into place. Refuses a folder that holds
 * any entry unless SYNTH_WRITE_FORCE is set (other files in it are left
 * alone). Returns 0, or ENG_EINVAL (dir not empty, or not a folder) or
 * ENG_EIO, with err_msg() naming the path.
 */
int synth_write(const struct synth_recording *s, const char *dir, unsigned flags);

/*
 * synth_write() with options: with o->video it also renders the camera's
 * view of every frame (engine/synth/render.h: the recording's pinhole
 * camera, one frame every 1/fps s from the first pose) into video.mp4
 * (H.264, moov first) and lists it in recording.json as "video":
 * {"path", "t0_ns", "fps"}; the other files are the bytes synth_write()
 * gives. The same s and options give the same frames and the same file
 * whatever the thread count. stats (may be NULL) is filled on success.
 * Returns as synth_write(), or ENG_EINVAL for bad options; when the
 * video fails, video.mp4 and recording.json are left as they were.
 */
int synth_write_with(const struct synth_recording *s, const char *dir,
		     const struct synth_write_opts *o, struct synth_write_stats *stats);

/*
 * ======================= Module internals =======================
 * Shared by engine/synth*.c and tests/unit/test_synth.c only.
 */

/* xoshiro256** seeded through splitmix64: the only randomness used. */
struct synth__rng {
	uint64_t s[4];
};

/* Seeds r from seed. Can't fail. */
void synth__rng_seed(struct synth__rng *r, uint64_t seed);
/* Next 64 random bits. */
uint64_t synth__rng_next(struct synth__rng *r);
/* Uniform in [lo, hi). */
double synth__rng_range(struct synth__rng *r, double lo, double hi);
/* Uniform integer in [0, n), 0 when n is 0. */
size_t synth__rng_below(struct synth__rng *r, size_t n);

/* Furniture flags. */
enum synth__furn_flags {
	SYNTH__SUPPORT = (1 << 0) /* small items may rest on its top */
};

/* A piece of furniture (or a wall-mounted board) of a scene. */
struct synth__furn_tpl {
	const char *id, *name, *category;
	float x, y;         /* footprint centre, m */
	float yaw_deg;      /* rotation about +Z; the front faces local -Y */
	float sx, sy, sz;   /* full size along local x, y, z, m */
	float z0;           /* bottom height (0: stands on the floor) */
	unsigned flags;     /* enum synth__furn_flags */
};

/* A small object; `fixed` ones (a coffee machine, a TV) never move. */
struct synth__item_tpl {
	const char *id, *name, *category;
	float sx, sy, sz;   /* full size, m */
	const char *start;  /* id of the furniture it starts on */
	enum rec_hand hand; /* hand that picks it up */
	bool fixed;         /* static: used in place, never carried */
};

enum synth__op {
	SYNTH__PICK = 0, /* walk to the slot's object, pick it up */
	SYNTH__PLACE,    /* walk to a support, put the carried slot object down */
	SYNTH__USE       /* walk to a place and do `verb` with an object */
};

/*
 * One step of a goal. Descriptions expand {0} {1} {2} (slot instance
 * names), {s} (the furniture the slot object rests on) and {f} (the
 * furniture the step happens at).
 */
struct synth__step_tpl {
	enum synth__op op;
	const char *verb;
	int slot;           /* object slot named by the action; -1: `where` names it */
	const char *where;  /* PLACE: support id or category; USE: the furniture or
			     * fixed item (id or category) the action names when slot
			     * is -1, else where a carried slot object is used
			     * (NULL: in place) */
	int at;             /* USE: slot whose object marks the place, or -1 */
	enum rec_hand hand; /* REC_HAND_NONE: the item's or the carry's hand */
	float dur_s;        /* mean duration, s */
	const char *desc;
};

#define SYNTH__SLOTS 3
#define SYNTH__STEPS 10

struct synth__goal_tpl {
	const char *goal;
	const char *slot_cat[SYNTH__SLOTS]; /* item category per slot, NULL = unused */
	struct synth__step_tpl steps[SYNTH__STEPS]; /* ended by verb NULL */
};

struct synth__scene_tpl {
	const char *name;
	float room_w, room_d, wall_h;
	const struct synth__furn_tpl *furn;
	size_t nfurn;
	const struct synth__item_tpl *items;
	size_t nitems;
	const struct synth__goal_tpl *goals;
	size_t ngoals;
};

/* The tables of a scene. Can't fail for a valid scene (NULL otherwise). */
const struct synth__scene_tpl *synth__scene(enum synth_scene sc);

/*
 * Builds s->objects from the tables: four walls, the furniture, then the
 * items at random free spots of their start furniture. Returns 0,
 * ENG_ENOMEM, or ENG_EINVAL when an item finds no room (a table bug).
 */
int synth__build_objects(struct synth_recording *s, const struct synth__scene_tpl *sc,
			 struct synth__rng *rng);

/*
 * A random free spot for item `item` on the top of furniture `support`:
 * inside the top with a 3 cm border, 3 cm clear of every object j with
 * on[j] == support at pose rest[j]; the item keeps the support's heading
 * and its box bottom lies on the top. Stores the pose in *out and returns
 * 0, or ENG_ENOTFOUND when 200 tries find no spot.
 */
int synth__find_spot(const struct synth_recording *s, const struct pose *rest, const long *on,
		     size_t item, size_t support, struct synth__rng *rng, struct pose *out);

/* A span of time during which the wearer attends to one object. */
struct synth__attn {
	int64_t t0, t1;
	long object;
};

/*
 * Runs the wearer through goals until the recording ends: fills s->traj,
 * s->actions, s->carries, s->obj_poses (and each object's motion,
 * pose_first and pose_count) and s->ngoals, and stores the attention spans
 * in *attn (caller frees) and their number in *nattn. Returns 0,
 * ENG_ENOMEM or ENG_ENOTFOUND (no route: a table bug) with err_msg() set.
 */
int synth__simulate(struct synth_recording *s, const struct synth__scene_tpl *sc,
		    struct synth__rng *rng, struct synth__attn **attn, size_t *nattn);

/*
 * Fills s->gaze and s->fixations from the trajectory and objects: fixations
 * on visible objects (the attended one first), saccades between them, free
 * gaze along the head when nothing fits. Returns 0 or ENG_ENOMEM.
 */
int synth__gaze(struct synth_recording *s, const struct synth__attn *attn, size_t nattn,
		struct synth__rng *rng);

/* The first box (index) a ray meets within tmax at time t, or -1; *tout = entry distance. */
long synth__first_hit(const struct synth_recording *s, const struct ray *r, int64_t t,
		      float tmax, float *tout);

/* T_world_camera of an OpenCV camera at yaw (from +X, CCW) and pitch (up +), rad. */
void synth__camera_pose(double x, double y, double z, double yaw, double pitch,
			struct pose *out);

#endif /* SYNTH_H */
