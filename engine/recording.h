/* SPDX-License-Identifier: MIT */
/*
 * The recording model every tool reads, and the loaders that build it from
 * a folder on disk (native proxima-recording/1, Aria Digital Twin, Aria
 * MPS, Ego-Exo4D take).
 *
 * Conventions (DESIGN.md section 2): world frame right-handed, +Z up,
 * metres; time int64 ns on the device clock; camera frame OpenCV (+X right,
 * +Y down, +Z forward). `traj` holds T_world_camera. For Aria sources the
 * camera is the CPF-aligned head camera: T_world_device * T_device_CPF *
 * R_z(180 deg) (CPF is X left, Y up, Z forward).
 *
 * Memory: a struct recording owns every array and string it points to;
 * recording_free() releases them all. Tools read it and never modify it.
 */
#ifndef RECORDING_H
#define RECORDING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "obb.h"
#include "pose.h"

/* One gaze sample as a world ray. */
struct rec_gaze {
	int64_t t_ns;   /* device time, ns */
	vec3 o;         /* ray origin (CPF origin), world */
	vec3 d;         /* unit direction, world */
	float depth_m;  /* distance to the gaze point along d; 0 = unknown */
};

enum rec_motion { REC_STATIC = 0, REC_DYNAMIC = 1 };

/* One object: a local box and its pose (static, or sampled over time). */
struct rec_object {
	char *id;        /* stable id (ADT: the decimal uint64 object_uid) */
	char *name;      /* instance name, e.g. "Mug_2" or "mug" */
	char *category;  /* category, e.g. "mug" */
	vec3 local_c;    /* box centre in the object frame, m */
	vec3 half;       /* box half-extents in the object frame, m */
	enum rec_motion motion;
	struct pose static_pose; /* T_world_object when static (or first pose) */
	size_t pose_first; /* dynamic: index of the first sample in rec->obj_poses */
	size_t pose_count; /* dynamic: number of samples (0 for static) */
};

enum rec_hand { REC_HAND_NONE = 0, REC_HAND_LEFT, REC_HAND_RIGHT, REC_HAND_BOTH };

/* One annotated action (keystep, or a synthetic action). */
struct rec_action {
	int64_t start_ns;   /* start, device time */
	int64_t end_ns;     /* end, device time, >= start */
	char *verb;         /* "pick up", "put down", "pour", ... (may be NULL) */
	long object;        /* index into rec->objects, or -1 */
	enum rec_hand hand;
	char *description;  /* free text, e.g. "Take the mug" */
	char *goal;         /* the goal this action serves, or NULL */
	int step_id;        /* source step id (Ego-Exo4D step_unique_id), or -1 */
};

enum rec_cam_model { REC_CAM_PINHOLE = 0, REC_CAM_FISHEYE = 1 };

/* Camera intrinsics used by the visibility test. */
struct rec_camera {
	enum rec_cam_model model;
	int width, height;   /* image size, pixels */
	float fx, fy, cx, cy; /* pinhole intrinsics, pixels */
	float fov_deg;       /* fisheye: full field of view across the circle */
};

/* Optional video of the recording. */
struct rec_video {
	char *path;       /* relative to the recording folder (NULL when none) */
	int64_t t0_ns;    /* device time of the first frame */
	double fps;
};

/* Per-stream statistics computed at load time, for `proxima inspect`. */
struct rec_stream_info {
	size_t count;
	int64_t t_first, t_last;
	double rate_hz;   /* (count - 1) / span, 0 when count < 2 */
	const char *file; /* source file name (static or owned by rec) */
};

struct recording {
	char *id;           /* recording id (folder name unless the source has one) */
	char *root;         /* folder it was loaded from */
	const char *layout; /* "proxima-recording/1", "adt", "aria-mps", "egoexo4d" */

	struct pose_sample *traj; /* T_world_camera, sorted by time, >= 1 */
	size_t ntraj;
	struct rec_gaze *gaze;    /* sorted by time; may be empty */
	size_t ngaze;
	size_t gaze_rows;         /* gaze rows in the source, before pose join */
	struct rec_object *objects;
	size_t nobjects;
	struct pose_sample *obj_poses; /* all dynamic samples, grouped per object */
	size_t nobj_poses;
	struct rec_action *actions;    /* sorted by start */
	size_t nactions;
	struct rec_camera camera;
	struct rec_video video;

	float floor_z;        /* floor height: lowest box bottom, else camera - 1.6 */
	struct rec_stream_info info_traj, info_gaze, info_objects, info_actions;
	char *warnings;       /* newline-separated load warnings, or NULL */
};

/* Loader selection. */
enum rec_layout {
	REC_LAYOUT_AUTO = 0,
	REC_LAYOUT_NATIVE,
	REC_LAYOUT_ADT,
	REC_LAYOUT_MPS,
	REC_LAYOUT_EGOEXO
};

/*
 * Detects the layout of folder `path` from the files it holds. Returns the
 * layout, or REC_LAYOUT_AUTO (with err_msg() explaining) when none fits.
 */
enum rec_layout recording_detect(const char *path);

/* The name printed for a layout ("adt", ...). */
const char *recording_layout_name(enum rec_layout l);

/*
 * Loads the recording in folder `path` (layout REC_LAYOUT_AUTO detects it).
 * On success stores a new recording in *out and returns 0. On failure
 * returns a negative enum eng_err, leaves *out untouched, and err_msg()
 * names the file and line (or field) at fault.
 */
int recording_load(const char *path, enum rec_layout layout,
		   struct recording **out);

/* Frees everything. recording_free(NULL) is a no-op. */
void recording_free(struct recording *rec);

/* Start and end time of the recording (the trajectory's span). */
int64_t recording_t0(const struct recording *rec);
int64_t recording_t1(const struct recording *rec);

/*
 * T_world_camera at t, interpolated. Returns 0, or ENG_ERANGE when t is
 * outside the trajectory.
 */
int recording_camera_at(const struct recording *rec, int64_t t,
			struct pose *out);

/* T_world_object of object i at t (clamped to its sampled span). Can't fail. */
void recording_object_pose_at(const struct recording *rec, size_t i,
			      int64_t t, struct pose *out);

/* The world box of object i at t. Can't fail. */
void recording_object_box_at(const struct recording *rec, size_t i,
			     int64_t t, struct obb *out);

/* Index of the object with id `id`, or -1. */
long recording_find_object(const struct recording *rec, const char *id);

/*
 * Finishes a recording built by a loader: sorts actions, computes the
 * stream statistics and the floor height, and checks the invariants
 * (trajectory non-empty and strictly increasing, finite values). Loaders
 * call it last. Returns 0 or ENG_EINVAL with err_msg() set.
 */
int recording__finish(struct recording *rec);

/* Appends a load warning (kept in rec->warnings). Returns 0 or ENG_ENOMEM. */
int recording__warn(struct recording *rec, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Loaders, one per layout (recording_native.c, recording_adt.c, ...). */
int recording__load_native(const char *path, struct recording *rec);
int recording__load_adt(const char *path, struct recording *rec);
int recording__load_mps(const char *path, struct recording *rec);
int recording__load_egoexo(const char *path, struct recording *rec);

#endif /* RECORDING_H */
