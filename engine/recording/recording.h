/* SPDX-License-Identifier: MIT */
/*
 * The recording model every tool reads, and the loaders that build it from
 * a folder on disk (native proxima-recording/1, Aria Digital Twin, Aria
 * MPS, Ego-Exo4D take).
 *
 * Conventions (docs/design.md section 2): world frame right-handed, +Z up,
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
	char *category;  /* category, e.g. "mug" ("" when the source has none) */
	vec3 local_c;    /* box centre in the object frame, m */
	vec3 half;       /* box half-extents in the object frame, m */
	enum rec_motion motion;
	struct pose static_pose; /* T_world_object when static; dynamic: the
				  * resting pose before the first sample (the
				  * first sample when the source gives none) */
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

/*
 * Camera intrinsics used by the visibility test. Defaults when the source
 * has none: native recordings get a pinhole 640x480 with a 90 deg
 * horizontal field of view (fx = fy = 320, cx = 320, cy = 240); Aria
 * sources (ADT, MPS, Ego-Exo4D) get the Aria RGB camera as a fisheye of
 * 110 deg over 1408x1408, with equidistant-model focal fx = fy =
 * (width / 2) / (fov / 2 in rad) and the centre at (704, 704).
 */
struct rec_camera {
	enum rec_cam_model model;
	int width, height;   /* image size, pixels */
	float fx, fy, cx, cy; /* pinhole intrinsics, pixels */
	float fov_deg;       /* fisheye: full field of view across the circle */
};

/*
 * Optional video of the recording (engine/recording/video.h reads it): a
 * container file (MP4, WebM, ...) or a VRS file whose RGB stream 214-1
 * carries its own frame times.
 */
struct rec_video {
	char *path;       /* relative to the recording folder (NULL when none) */
	int64_t t0_ns;    /* device time of the first frame (default: recording start) */
	double fps;       /* 0 when the source does not say */
	int64_t *frame_ns; /* device time of frame i, or NULL: then t0_ns + pts */
	size_t nframe_ns;  /* entries in frame_ns */
};

/*
 * Per-stream statistics computed at load time, for `proxima inspect`.
 * For object poses, count is the number of dynamic samples of all objects
 * and rate_hz the mean rate per dynamic object (samples - 1 over the
 * sampled span, summed over objects).
 */
struct rec_stream_info {
	size_t count;
	int64_t t_first, t_last;
	double rate_hz;   /* (count - 1) / span, 0 when count < 2 */
	const char *file; /* source file name (static, or owned by rec) */
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
	const char *gaze_schema; /* Aria eye-gaze schema read ("v1", "v2",
				  * "gen1-vergence", "gen2"), or NULL */
	char *info_own[4];    /* loader-allocated names behind info_*.file */
};

/*
 * The layouts, one row each in the loader table of recording.c (name,
 * aliases, detect, load). Names are strings only at the edges: through
 * recording_layout_name() and recording_layout_from_name().
 */
enum rec_layout {
	REC_LAYOUT_AUTO = 0,  /* detect from the folder's files */
	REC_LAYOUT_NATIVE,
	REC_LAYOUT_ADT,
	REC_LAYOUT_MPS,
	REC_LAYOUT_EGOEXO
};

/*
 * Detects the layout of folder `path` from the files it holds (the rows
 * of the loader table in order). Returns the layout, or REC_LAYOUT_AUTO
 * (with err_msg() explaining) when none fits.
 */
enum rec_layout recording_detect(const char *path);

/* The name printed for a layout ("adt", ...); "unknown" for others. Can't fail. */
const char *recording_layout_name(enum rec_layout l);

/*
 * The layout called `s`: its printed name or one of its aliases
 * ("native", "adt", "mps", "aria-mps", "egoexo", "egoexo4d", ...).
 * Returns 0 with *out set, or ENG_EINVAL (*out untouched).
 */
int recording_layout_from_name(const char *s, enum rec_layout *out);

/*
 * Writes the short names of every layout, "native, adt, ...", into out
 * (size bytes, always terminated when size > 0; cut when too small).
 * Can't fail.
 */
void recording_layout_names(char *out, size_t size);

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

/*
 * Time bounds every loader's result is held to (recording__finish): every
 * timestamp within +-REC_T_LIMIT_NS (2^62 ns, so that differences never
 * overflow), a trajectory spanning at most REC_MAX_SPAN_NS (7 days), and a
 * warning for gaze, object poses or actions more than REC_OUTSIDE_NS (60 s)
 * outside the trajectory.
 */
#define REC_T_LIMIT_NS ((int64_t)1 << 62)
#define REC_MAX_SPAN_NS ((int64_t)7 * 24 * 3600 * 1000000000)
#define REC_OUTSIDE_NS 60000000000.0

/* Start and end time of the recording (the trajectory's span). */
int64_t recording_t0(const struct recording *rec);
int64_t recording_t1(const struct recording *rec);

/*
 * T_world_camera at t, interpolated. Returns 0, or ENG_ERANGE when t is
 * outside the trajectory.
 */
int recording_camera_at(const struct recording *rec, int64_t t,
			struct pose *out);

/*
 * T_world_object of object i at t. A dynamic object is interpolated
 * between its samples, rests at static_pose before the first one and at
 * the last one after it. Can't fail.
 */
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

/*
 * ======================= Loader internals =======================
 * The rest of this header is shared by the loader files of this module
 * (recording_*.c) and by its tests; tools do not call it.
 */

/*
 * Loaders, one per layout (recording_native.c, recording_adt.c,
 * recording_mps.c, recording_egoexo.c), each a row of the loader table.
 * detect() says whether folder `path` holds that layout (it can't fail).
 * load() fills rec (already holding root and layout) and returns 0, or a
 * negative enum eng_err with err_msg() naming the file and line or field;
 * recording_load() then frees rec.
 */
bool recording__detect_native(const char *path);
bool recording__detect_adt(const char *path);
bool recording__detect_mps(const char *path);
bool recording__detect_egoexo(const char *path);
int recording__load_native(const char *path, struct recording *rec);
int recording__load_adt(const char *path, struct recording *rec);
int recording__load_mps(const char *path, struct recording *rec);
int recording__load_egoexo(const char *path, struct recording *rec);

/*
 * An array of `bytes` for a stream's samples, freed with free(). From 4 MB
 * on it is laid on 2 MB pages where the kernel has them (transparent huge
 * pages, on request): a long recording's streams are tens of megabytes
 * written once in order, and a page fault for each 4 KB of them is a
 * good part of the loading time (docs/performance.md).
 */
void *recording__alloc(size_t bytes);

/*
 * Makes room for n elements of `size` bytes in the array *(T **)parr of
 * capacity *cap (grows geometrically; from 4 MB on with recording__alloc).
 * Returns 0 or ENG_ENOMEM (the array is then unchanged).
 */
int recording__reserve(void *parr, size_t *cap, size_t n, size_t size);

/*
 * Attaches the first existing file of names[] (relative to path) as the
 * recording's video (an Aria VRS file: video.h reads its RGB stream and
 * its frame times). Nothing happens when none exists. Returns 0 or
 * ENG_ENOMEM.
 */
int recording__attach_video(const char *path, struct recording *rec,
			    const char *const *names, size_t n);

/* "dir/name" into a new string, or NULL when out of memory. */
char *recording__path(const char *dir, const char *name);

/* True when dir/name is a regular file. */
bool recording__is_file(const char *dir, const char *name);

/*
 * Reads a native objects file (schema $defs/objects_file) into
 * rec->objects; `path` names it in messages. Returns 0 or an error.
 */
int recording__read_objects(const char *path, struct recording *rec);

/*
 * Reads a native object_poses.csv into rec->obj_poses, grouped per object
 * and sorted by time, and sets each dynamic object's pose_first and
 * pose_count. Objects must already be loaded. Returns 0 or an error
 * (unknown object id, static object with samples, duplicate time, ...).
 */
int recording__read_object_poses(const char *path, struct recording *rec);

/*
 * Largest time difference (ns) over which a gaze sample is joined to the
 * nearest end of the trajectory when it lies just outside it (ADT writes
 * gaze 3 us before the matching pose). Farther samples are skipped.
 */
#define RECORDING_JOIN_TOL_NS 5000000

/* One Aria eye-gaze sample in CPF (formats.md section 1.4). */
struct rec_cpf_gaze {
	int64_t t_ns;   /* tracking_timestamp_us * 1000 */
	double yaw;     /* combined yaw, rad (+ = wearer's left) */
	double pitch;   /* pitch, rad (+ = up) */
	double depth_m; /* 0 = unknown */
};

/*
 * Reads an Aria eye-gaze CSV of any of the four schemas (legacy v1,
 * legacy v2, Gen1 vergence, Gen2), detected by header. Vergence files get
 * the combined yaw atan((tan left + tan right) / 2), which is the IPD
 * formula's atan(X / Z); Gen2 files get the depth triangulated from the
 * two per-eye rays (0 when rejected). Stores a new array in *out (caller
 * frees), its length in *n and the schema name in *schema. Rows must be
 * in time order. Returns 0 or an error naming file and line.
 */
int recording__aria_read_gaze(const char *path, struct rec_cpf_gaze **out,
			      size_t *n, const char **schema);

/*
 * Reads an Aria closed-loop trajectory CSV (MPS closed_loop_trajectory.csv
 * or ADT aria_trajectory.csv; columns by name, quaternion qx..qw) into a
 * new array of T_world_device samples in a +Z-up world: when the gravity
 * columns say the world is Y-up (gravity_y ~ -9.81) every pose is
 * left-multiplied by R_x(+90 deg), p_zup = (x, -z, y), and *rotated is set.
 * Without gravity columns the world is taken as Y-up when `default_yup`.
 * Returns 0 or an error naming file and line.
 */
int recording__aria_read_trajectory(const char *path, bool default_yup,
				    struct pose_sample **out, size_t *n,
				    bool *rotated);

/* R_x(+90 deg): the Y-up to Z-up rotation as a pose. */
void recording__yup_to_zup(struct pose *out);

/*
 * T_device_CPF for an Aria folder: the Gen1 DVT-S CAD value (formats.md
 * section 1.5) unless dir/proxima.json gives {"T_device_CPF": {"t": [x,y,z],
 * "q": [x,y,z,w]}} or {"device_subtype": "DVT-S" | "EVT-S" | "DVT-L" |
 * "EVT-L" | "DVT-MARIA"}. Returns 0 or an error naming the field.
 */
int recording__aria_device_cpf(const char *dir, struct pose *out);

/*
 * Builds rec->traj (T_world_camera = T_world_device * T_device_CPF *
 * R_z(180 deg)) from `dev`, and rec->gaze from the CPF samples `g`: origin
 * T_world_device * t_device_CPF, direction R_world_CPF * normalize(tan
 * yaw, tan pitch, 1), the device pose interpolated at the sample time.
 * Samples outside the trajectory (beyond RECORDING_JOIN_TOL_NS) are
 * skipped, counted in a warning; rec->gaze_rows is set to ng. Also sets
 * the default Aria camera. Does not take ownership of dev or g.
 */
int recording__aria_build(struct recording *rec, const struct pose_sample *dev,
			  size_t ndev, const struct rec_cpf_gaze *g, size_t ng,
			  const struct pose *T_device_cpf);

/*
 * The Aria part of the ADT, MPS and Ego-Exo4D loaders: reads the first
 * existing trajectory file of traj_files[] (relative to path; none is an
 * ENG_ENOENT error naming the first) and the first existing gaze file of
 * gaze_files[] (none: a warning), T_device_CPF from proxima.json, then
 * calls recording__aria_build(). Sets info_traj.file, info_gaze.file,
 * gaze_schema, and *rotated as recording__aria_read_trajectory() does.
 */
int recording__aria_load_dir(const char *path, struct recording *rec, bool default_yup,
			     const char *const *traj_files, size_t ntraj_files,
			     const char *const *gaze_files, size_t ngaze_files,
			     bool *rotated);

#endif /* RECORDING_H */
