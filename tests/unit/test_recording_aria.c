/* SPDX-License-Identifier: MIT */
/*
 * The Aria loaders on the real samples in tests/data (ADT sequence, MPS
 * folder, the four eye-gaze schemas) against numbers computed
 * independently from the raw CSV values (python3, double precision, the
 * formats.md recipes; each literal's computation is in the comment above
 * it). Run from the repository root.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"
#include "recording.h"

#define DATA "tests/data/"
#define NEAR(a, b, eps) assert_true(fabs((double)(a) - (double)(b)) <= (eps))

static char tmpdir[64];

static void msg_has(const char *want)
{
	if (!strstr(err_msg(), want)) {
		print_error("message '%s' lacks '%s'\n", err_msg(), want);
		fail();
	}
}

static struct recording *load(const char *dir)
{
	struct recording *rec = NULL;
	int rc = recording_load(dir, REC_LAYOUT_AUTO, &rec);

	if (rc)
		print_error("%s: %s\n", dir, err_msg());
	assert_int_equal(rc, 0);
	return rec;
}

/*
 * A fresh folder tmpdir/<name> holding symlinks to repository files:
 * links[] = { "link path inside the folder", "target relative to the repo", ... }.
 */
static const char *make_dir(const char *name, const char *const *links, size_t n)
{
	static char dir[256];
	char cwd[1024], a[1400], b[1400];
	size_t i;

	if (!tmpdir[0]) {
		snprintf(tmpdir, sizeof(tmpdir), "/tmp/proxima-test-aria-XXXXXX");
		assert_non_null(mkdtemp(tmpdir));
	}
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	snprintf(dir, sizeof(dir), "%s/%s", tmpdir, name);
	assert_int_equal(mkdir(dir, 0755), 0);
	for (i = 0; i + 1 < n; i += 2) {
		char *slash;

		snprintf(a, sizeof(a), "%s/%s", dir, links[i]);
		slash = strrchr(a, '/');
		*slash = '\0';
		mkdir(a, 0755);
		*slash = '/';
		snprintf(b, sizeof(b), "%s/%s", cwd, links[i + 1]);
		assert_int_equal(symlink(b, a), 0);
	}
	return dir;
}

static void write_file(const char *dir, const char *name, const char *text)
{
	char p[512];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* ======================= ADT ======================= */

static void test_adt_counts(void **state)
{
	struct recording *rec;
	size_t i, nst = 0;

	(void)state;
	assert_int_equal(recording_detect(DATA "adt"), REC_LAYOUT_ADT);
	rec = load(DATA "adt");
	assert_string_equal(rec->layout, "adt");
	/* aria_trajectory.csv: 6 rows; eyegaze.csv: 6 rows, each 3 us before a pose */
	assert_int_equal(rec->ntraj, 6);
	assert_int_equal(rec->gaze_rows, 6);
	assert_int_equal(rec->ngaze, 6);
	assert_string_equal(rec->gaze_schema, "v1");
	assert_string_equal(rec->info_gaze.file, "eyegaze.csv");
	/* 350 instances (1 human without a box), 349 AABBs, 304 static + 45 dynamic */
	assert_int_equal(rec->nobjects, 349);
	for (i = 0; i < rec->nobjects; i++)
		nst += rec->objects[i].motion == REC_STATIC;
	assert_int_equal(nst, 304);
	/* 6 timestamps x 45 dynamic objects */
	assert_int_equal(rec->nobj_poses, 270);
	NEAR(rec->info_traj.rate_hz, 5 / 0.16664, 1e-6);
	/* the first trajectory row is at 87551170910 us */
	assert_true(rec->traj[0].t_ns == 87551170910000LL);
	assert_int_equal(rec->camera.model, REC_CAM_FISHEYE);
	assert_int_equal(rec->camera.width, 1408);
	NEAR(rec->camera.fov_deg, 110, 1e-5);
	/* floor: the lowest corner z of all world boxes (scene y), python: -0.0926220 */
	NEAR(rec->floor_z, -0.0926220, 1e-5);
	assert_null(rec->warnings);
	recording_free(rec);
}

/*
 * World box centres. For each object: local_c = ((min + max) / 2) of its
 * 3d_bounding_box.csv row; c_scene = t_wo + R(q_wo) local_c with q read
 * w-first from scene_objects.csv; c_world = (x, -z, y) of c_scene.
 */
/* A source without an id of its own is named after its folder, however the path is typed. */
static void test_id_from_folder(void **state)
{
	static const char *const paths[] = { DATA "adt", DATA "adt/", DATA "adt//", "./" DATA "adt/" };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		struct recording *rec = load(paths[i]);

		assert_string_equal(rec->id, "adt");
		recording_free(rec);
	}
}

static void test_adt_object_boxes(void **state)
{
	struct recording *rec;
	struct obb b;
	long i;

	(void)state;
	rec = load(DATA "adt");

	/*
	 * Hook_4 (static), uid 5691266090916432: t_wo (2.0189145, 1.5131054,
	 * -0.0012973), q_wo w,x,y,z (0.7233251, 0.0010983, -0.0006019,
	 * -0.6905065), local_c (-0.0002159, -0.0000871, 0.0330018) ->
	 * c_scene (2.0187387, 1.5132921, 0.0317043) -> c_world (2.0187387,
	 * -0.0317043, 1.5132921); half (0.0303017, 0.0276426, 0.0326630).
	 */
	i = recording_find_object(rec, "5691266090916432");
	assert_true(i >= 0);
	assert_string_equal(rec->objects[i].name, "Hook_4");
	assert_string_equal(rec->objects[i].category, "hook");
	assert_int_equal(rec->objects[i].motion, REC_STATIC);
	recording_object_box_at(rec, (size_t)i, recording_t0(rec), &b);
	NEAR(b.c[0], 2.0187387, 2e-6);
	NEAR(b.c[1], -0.0317043, 2e-6);
	NEAR(b.c[2], 1.5132921, 2e-6);
	NEAR(b.h[0], 0.0303017, 1e-6);
	NEAR(b.h[1], 0.0276426, 1e-6);
	NEAR(b.h[2], 0.0326630, 1e-6);

	/*
	 * BookFiction7_00 (static), uid 5699505410169755: t_wo (2.8550050,
	 * 1.5489365, -1.9055821), q_wo w,x,y,z (0.5000130, 0.4976719,
	 * 0.5000652, 0.5022395), local_c (0.0002521, 0.0083019, 0.0000019) ->
	 * c_world (2.8549683, 1.8972803, 1.5491898).
	 */
	i = recording_find_object(rec, "5699505410169755");
	assert_true(i >= 0);
	assert_string_equal(rec->objects[i].name, "BookFiction7_00");
	assert_string_equal(rec->objects[i].category, "book");
	recording_object_box_at(rec, (size_t)i, recording_t1(rec), &b);
	NEAR(b.c[0], 2.8549683, 2e-6);
	NEAR(b.c[1], 1.8972803, 2e-6);
	NEAR(b.c[2], 1.5491898, 2e-6);
	NEAR(b.h[0], 0.1040547, 1e-6);

	/*
	 * WoodenFork (dynamic, moves 12.6 cm), uid 3758151980953788, local_c
	 * (-0.0001705, 0.0112949, 0.0004859). c_world at its samples:
	 * 87551170910700 ns (0.4124276, -2.4325590, 1.1208358),
	 * 87551270894700 ns (0.3983481, -2.3876504, 1.1825933); halfway
	 * between samples 2 and 3 (87551254230700 ns: lerp of t_wo, slerp of
	 * q_wo at 0.5) (0.4027730, -2.3967239, 1.1715644).
	 */
	i = recording_find_object(rec, "3758151980953788");
	assert_true(i >= 0);
	assert_string_equal(rec->objects[i].name, "WoodenFork");
	assert_int_equal(rec->objects[i].motion, REC_DYNAMIC);
	assert_int_equal(rec->objects[i].pose_count, 6);
	assert_true(rec->obj_poses[rec->objects[i].pose_first].t_ns == 87551170910700LL);
	assert_true(rec->obj_poses[rec->objects[i].pose_first + 5].t_ns == 87551337550700LL);
	/* t0 of the recording (87551170910000) is 700 ns before the first sample */
	recording_object_box_at(rec, (size_t)i, recording_t0(rec), &b);
	NEAR(b.c[0], 0.4124276, 2e-6);
	NEAR(b.c[1], -2.4325590, 2e-6);
	NEAR(b.c[2], 1.1208358, 2e-6);
	recording_object_box_at(rec, (size_t)i, 87551270894700LL, &b);
	NEAR(b.c[0], 0.3983481, 2e-6);
	NEAR(b.c[1], -2.3876504, 2e-6);
	NEAR(b.c[2], 1.1825933, 2e-6);
	recording_object_box_at(rec, (size_t)i, 87551254230700LL, &b);
	NEAR(b.c[0], 0.4027730, 2e-6);
	NEAR(b.c[1], -2.3967239, 2e-6);
	NEAR(b.c[2], 1.1715644, 2e-6);

	/* the one human instance (6810803442292599) has no box: not an object */
	assert_int_equal(recording_find_object(rec, "6810803442292599"), -1);
	recording_free(rec);
}

/*
 * ADT camera and gaze. T_world_device = R_x(90) * T_scene_device;
 * T_world_camera = T_world_device * T_device_CPF (DVT-S CAD) * R_z(180).
 */
static void test_adt_camera_and_gaze(void **state)
{
	struct recording *rec;
	vec3 z = { 0, 0, 1 }, y = { 0, 1, 0 }, w;

	(void)state;
	rec = load(DATA "adt");
	/*
	 * traj[0]: t (0.0881513, -2.4792675, 1.5567854); forward (camera +Z)
	 * (0.9406549, 0.0654282, -0.3329978), about 19.5 deg down; image down
	 * (camera +Y) (-0.3324671, -0.0191597, -0.9429202): an upright head.
	 */
	NEAR(rec->traj[0].pose.t[0], 0.0881513, 2e-6);
	NEAR(rec->traj[0].pose.t[1], -2.4792675, 2e-6);
	NEAR(rec->traj[0].pose.t[2], 1.5567854, 2e-6);
	pose_rotate(&rec->traj[0].pose, z, w);
	NEAR(w[0], 0.9406549, 2e-6);
	NEAR(w[1], 0.0654282, 2e-6);
	NEAR(w[2], -0.3329978, 2e-6);
	pose_rotate(&rec->traj[0].pose, y, w);
	NEAR(w[0], -0.3324671, 2e-6);
	NEAR(w[2], -0.9429202, 2e-6);
	/*
	 * gaze row 2: t 87551204235 us, yaw 0.124681, pitch -0.559561, depth
	 * 0.511755; the pose 3 us earlier than pose 1 is interpolated (alpha
	 * 0.99991); origin = T_wd t_dc = (0.0904053, -2.4786941, 1.5561694),
	 * dir = R_wd R_dc normalize(tan yaw, tan pitch, 1) = (0.6054647,
	 * 0.1540628, -0.7808182).
	 */
	assert_true(rec->gaze[1].t_ns == 87551204235000LL);
	NEAR(rec->gaze[1].o[0], 0.0904053, 2e-6);
	NEAR(rec->gaze[1].o[1], -2.4786941, 2e-6);
	NEAR(rec->gaze[1].o[2], 1.5561694, 2e-6);
	NEAR(rec->gaze[1].d[0], 0.6054647, 2e-6);
	NEAR(rec->gaze[1].d[1], 0.1540628, 2e-6);
	NEAR(rec->gaze[1].d[2], -0.7808182, 2e-6);
	NEAR(rec->gaze[1].depth_m, 0.511755, 1e-6);
	/* row 1 has depth 0 (unknown in the ADT ground truth) */
	NEAR(rec->gaze[0].depth_m, 0, 0);
	recording_free(rec);
}

/* ======================= MPS ======================= */

static void test_mps_sample(void **state)
{
	struct recording *rec;
	vec3 z = { 0, 0, 1 }, y = { 0, 1, 0 }, w;

	(void)state;
	assert_int_equal(recording_detect(DATA "mps"), REC_LAYOUT_MPS);
	rec = load(DATA "mps");
	assert_string_equal(rec->layout, "aria-mps");
	/* every 10th row of the 11517-row original: 1152 rows */
	assert_int_equal(rec->ntraj, 1152);
	assert_true(rec->traj[0].t_ns == 149202610000LL);
	assert_true(rec->traj[1151].t_ns == 160592048000LL);
	assert_string_equal(rec->info_traj.file, "trajectory/closed_loop_trajectory.csv");
	/* eye_gaze/generalized_eye_gaze.csv is the first gaze file found: v2 */
	assert_string_equal(rec->info_gaze.file, "eye_gaze/generalized_eye_gaze.csv");
	assert_string_equal(rec->gaze_schema, "v2");
	/*
	 * 123 rows: the first 7 (148502622..149102622 us) precede the
	 * trajectory (149202610 us) by >= 100 ms; the last 2 (160602622,
	 * 160702622 us) follow its last row (160592048 us) by > 5 ms.
	 */
	assert_int_equal(rec->gaze_rows, 123);
	assert_int_equal(rec->ngaze, 114);
	assert_true(rec->gaze[0].t_ns == 149202622000LL); /* source row 8 */
	assert_non_null(rec->warnings);
	assert_non_null(strstr(rec->warnings, "9 of 123 gaze rows"));
	/*
	 * source row 8 (index 7): yaw 0.641295, pitch -0.141548, pose
	 * interpolated 12 us after row 1 of the trajectory; origin T_wd t_dc =
	 * (-0.0506051, 0.0406103, -0.0071783), dir R_wd R_dc normalize(tan
	 * yaw, tan pitch, 1) = (0.0326214, -0.9978357, -0.0570942).
	 */
	NEAR(rec->gaze[0].o[0], -0.0506051, 2e-6);
	NEAR(rec->gaze[0].o[1], 0.0406103, 2e-6);
	NEAR(rec->gaze[0].o[2], -0.0071783, 2e-6);
	NEAR(rec->gaze[0].d[0], 0.0326214, 2e-6);
	NEAR(rec->gaze[0].d[1], -0.9978357, 2e-6);
	NEAR(rec->gaze[0].d[2], -0.0570942, 2e-6);
	NEAR(rec->gaze[0].depth_m, 0, 0); /* empty depth_m cell: unknown */
	/*
	 * source row 41 (index 40, gaze[33]): t 152502622 us, yaw 0.087979,
	 * pitch -0.429348; origin (-2.0081651, -1.8990189, 0.0324753), dir
	 * (0.1167410, -0.8902335, -0.4402906).
	 */
	assert_true(rec->gaze[33].t_ns == 152502622000LL);
	NEAR(rec->gaze[33].o[0], -2.0081651, 3e-6);
	NEAR(rec->gaze[33].o[1], -1.8990189, 3e-6);
	NEAR(rec->gaze[33].o[2], 0.0324753, 3e-6);
	NEAR(rec->gaze[33].d[0], 0.1167410, 2e-6);
	NEAR(rec->gaze[33].d[1], -0.8902335, 2e-6);
	NEAR(rec->gaze[33].d[2], -0.4402906, 2e-6);
	/*
	 * gravity is -Z: no rotation. traj[0] = T_wd T_dc R_z(180): t
	 * (-0.0506013, 0.0406134, -0.0071777), forward (-0.5756823,
	 * -0.8175400, 0.0147741), image down (0.0524207, -0.0549320,
	 * -0.9971131).
	 */
	NEAR(rec->traj[0].pose.t[0], -0.0506013, 2e-6);
	NEAR(rec->traj[0].pose.t[1], 0.0406134, 2e-6);
	pose_rotate(&rec->traj[0].pose, z, w);
	NEAR(w[0], -0.5756823, 2e-6);
	NEAR(w[1], -0.8175400, 2e-6);
	NEAR(w[2], 0.0147741, 2e-6);
	pose_rotate(&rec->traj[0].pose, y, w);
	NEAR(w[2], -0.9971131, 2e-6);
	/* no boxes: floor = mean camera height - 1.6 */
	assert_int_equal(rec->nobjects, 0);
	assert_true(rec->floor_z < -1.5f && rec->floor_z > -1.8f);
	recording_free(rec);
}

/* All four eye-gaze schemas, read directly. */
static void test_gaze_schemas(void **state)
{
	struct rec_cpf_gaze *g = NULL;
	const char *schema = NULL;
	size_t n = 0;

	(void)state;
	/* (a) legacy v1: row 1 yaw 0.894797, pitch 0.039713, empty depth */
	assert_int_equal(recording__aria_read_gaze(DATA "mps/eye_gaze/eyegaze.csv", &g, &n, &schema), 0);
	assert_string_equal(schema, "v1");
	assert_int_equal(n, 123);
	assert_true(g[0].t_ns == 148502622000LL);
	NEAR(g[0].yaw, 0.894797, 1e-12);
	NEAR(g[0].pitch, 0.039713, 1e-12);
	NEAR(g[0].depth_m, 0, 0);
	free(g);
	/* (b) legacy v2 (depth_m after the bounds, + session_uid): the same samples */
	assert_int_equal(recording__aria_read_gaze(DATA "mps/eye_gaze/generalized_eye_gaze.csv",
						   &g, &n, &schema), 0);
	assert_string_equal(schema, "v2");
	assert_int_equal(n, 123);
	NEAR(g[0].yaw, 0.894797, 1e-12);
	NEAR(g[1].yaw, 0.89174, 1e-12);
	NEAR(g[1].pitch, 0.051264, 1e-12);
	free(g);
	/*
	 * (c) Gen1 vergence: row 1 left/right yaw 0.801510214805603 /
	 * 0.7736955881118774; den = tan r - tan l, X = 0.0315 (tan l + tan
	 * r) / den, Z = 0.063 / den, yaw = atan(X / Z) = 0.787797195; pitch
	 * and depth from the file.
	 */
	assert_int_equal(recording__aria_read_gaze(DATA "mps/eye_gaze_vergence/generalized_gaze.csv",
						   &g, &n, &schema), 0);
	assert_string_equal(schema, "gen1-vergence");
	assert_int_equal(n, 123);
	NEAR(g[0].yaw, 0.787797195, 1e-9);
	NEAR(g[0].pitch, -0.020560525357723236, 1e-15);
	NEAR(g[0].depth_m, 1.598123690675182, 1e-12);
	NEAR(g[1].yaw, 0.785301469, 1e-9);
	free(g);
	/*
	 * (d) Gen2 (official test row 0: t 1130889351 us, yaw 0.07778381,
	 * pitch -0.36552525). Depth: closest approach of the per-eye rays
	 * (polar convention, eyes at +-0.0325 m), its midpoint's distance
	 * from the middle of the eyes: 0.587162044 m (vergence 6.32 deg, miss
	 * 1.8 mm: accepted).
	 */
	assert_int_equal(recording__aria_read_gaze(DATA "mps/gen2_eye_gaze/general_eye_gaze.csv",
						   &g, &n, &schema), 0);
	assert_string_equal(schema, "gen2");
	assert_int_equal(n, 5);
	assert_true(g[0].t_ns == 1130889351000LL);
	NEAR(g[0].yaw, 0.07778381, 1e-7);
	NEAR(g[0].pitch, -0.36552525, 1e-7);
	NEAR(g[0].depth_m, 0.587162044, 1e-8);
	NEAR(g[2].depth_m, 0.573724931, 1e-8);
	free(g);
	assert_int_equal(recording__aria_read_gaze(DATA "mps/gen2_eye_gaze/personalized_eye_gaze.csv",
						   &g, &n, &schema), 0);
	assert_string_equal(schema, "gen2");
	free(g);
	/* not a gaze file */
	assert_int_equal(recording__aria_read_gaze(DATA "mps/trajectory/closed_loop_trajectory.csv",
						   &g, &n, &schema), ENG_EPARSE);
	msg_has("closed_loop_trajectory.csv:1: not an Aria eye-gaze file");
}

/* Each schema through the MPS folder loader (a folder of symlinks). */
static void test_gaze_schemas_through_loader(void **state)
{
	static const struct {
		const char *name, *link, *target, *schema;
		size_t rows, rays;
	} cases[] = {
		{ "v1", "eye_gaze/eyegaze.csv", DATA "mps/eye_gaze/eyegaze.csv", "v1", 123, 114 },
		{ "v2", "eye_gaze/general_eye_gaze.csv", DATA "mps/eye_gaze/generalized_eye_gaze.csv",
		  "v2", 123, 114 },
		{ "verg", "eye_gaze_vergence/generalized_gaze.csv",
		  DATA "mps/eye_gaze_vergence/generalized_gaze.csv", "gen1-vergence", 123, 114 },
		/* the Gen2 sample is another recording: no row has a pose */
		{ "gen2", "eye_gaze/personalized_eye_gaze.csv",
		  DATA "mps/gen2_eye_gaze/personalized_eye_gaze.csv", "gen2", 5, 0 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		const char *links[4] = { "slam/closed_loop_trajectory.csv",
					 DATA "mps/trajectory/closed_loop_trajectory.csv",
					 cases[i].link, cases[i].target };
		struct recording *rec = load(make_dir(cases[i].name, links, 4));

		assert_string_equal(rec->gaze_schema, cases[i].schema);
		assert_string_equal(rec->info_traj.file, "slam/closed_loop_trajectory.csv");
		assert_string_equal(rec->info_gaze.file, cases[i].link);
		assert_int_equal(rec->gaze_rows, cases[i].rows);
		assert_int_equal(rec->ngaze, cases[i].rays);
		recording_free(rec);
	}
}

/* The same rows read from two differently shaped files give the same poses. */
static void test_trajectory_columns_by_name(void **state)
{
	struct pose_sample *a = NULL, *b = NULL;
	size_t na = 0, nb = 0, k, j;
	bool rot = true;

	(void)state;
	/* geo_missing: the first 199 rows of the original, without the geo columns */
	assert_int_equal(recording__aria_read_trajectory(DATA "mps/extra/closed_loop_trajectory_geo_missing.csv",
							 false, &a, &na, &rot), 0);
	assert_false(rot);
	assert_int_equal(recording__aria_read_trajectory(DATA "mps/trajectory/closed_loop_trajectory.csv",
							 false, &b, &nb, &rot), 0);
	assert_int_equal(na, 199);
	/* every-10th row k is original row 10 k */
	for (k = 0; k < 20; k++) {
		assert_true(a[10 * k].t_ns == b[k].t_ns);
		for (j = 0; j < 3; j++)
			NEAR(a[10 * k].pose.t[j], b[k].pose.t[j], 0);
		for (j = 0; j < 4; j++)
			NEAR(a[10 * k].pose.q[j], b[k].pose.q[j], 0);
	}
	/* row 1 as written: t (0.000292, -0.006405, 0.000467), q x,y,z,w in that order */
	NEAR(b[0].pose.t[0], 0.000292, 1e-9);
	NEAR(b[0].pose.t[1], -0.006405, 1e-9);
	NEAR(b[0].pose.q[0], 0.500638545, 1e-7);
	NEAR(b[0].pose.q[3], 0.523916109, 1e-7);
	free(a);
	free(b);
	/* ADT's file says gravity -Y: rotated */
	assert_int_equal(recording__aria_read_trajectory(DATA "adt/aria_trajectory.csv", false, &a,
							 &na, &rot), 0);
	assert_true(rot);
	/* (x, y, z) scene -> (x, -z, y): row 1 t (0.0929441, 1.5561980, 2.4097262) */
	NEAR(a[0].pose.t[0], 0.09294414336388498, 1e-7);
	NEAR(a[0].pose.t[1], -2.409726213023464, 1e-6);
	NEAR(a[0].pose.t[2], 1.556198016142618, 1e-6);
	free(a);
}

/* Nearest-timestamp joins with tolerance on real timestamps. */
static void test_nearest_joins(void **state)
{
	struct recording *adt = load(DATA "adt"), *mps = load(DATA "mps");
	const struct rec_object *fork;
	long f;

	(void)state;
	/* ADT gaze 87551204235 us is 3 us before pose 1 (87551204238 us) */
	assert_int_equal(time_nearest_index(adt->traj, adt->ntraj, sizeof(*adt->traj),
					    adt->gaze[1].t_ns, 5000), 1);
	assert_true(time_nearest_index(adt->traj, adt->ntraj, sizeof(*adt->traj),
				       adt->gaze[1].t_ns, 2999) == SIZE_MAX);
	/* and 3.7 us before the object sample 87551204238700 ns */
	f = recording_find_object(adt, "3758151980953788");
	fork = &adt->objects[f];
	assert_int_equal(time_nearest_index(adt->obj_poses + fork->pose_first, fork->pose_count,
					    sizeof(struct pose_sample), adt->gaze[1].t_ns, 4000), 1);
	assert_true(time_nearest_index(adt->obj_poses + fork->pose_first, fork->pose_count,
				       sizeof(struct pose_sample), adt->gaze[1].t_ns, 3000) == SIZE_MAX);
	/*
	 * MPS: the gaze row at 149102622 us is 99.988 ms before the first pose;
	 * the ray at 149202622 us is 12 us after it and 9.831 ms before the
	 * next (149212453 us).
	 */
	assert_true(time_nearest_index(mps->traj, mps->ntraj, sizeof(*mps->traj),
				       149102622000LL, 99987000) == SIZE_MAX);
	assert_int_equal(time_nearest_index(mps->traj, mps->ntraj, sizeof(*mps->traj),
					    149102622000LL, 99988000), 0);
	assert_int_equal(time_nearest_index(mps->gaze, mps->ngaze, sizeof(*mps->gaze),
					    149202610000LL, 12000), 0);
	assert_int_equal(time_nearest_index(mps->traj, mps->ntraj, sizeof(*mps->traj),
					    mps->gaze[0].t_ns, 12000), 0);
	assert_int_equal(time_nearest_index(mps->traj, mps->ntraj, sizeof(*mps->traj),
					    149212450000LL, 1000000), 1);
	recording_free(adt);
	recording_free(mps);
}

/* proxima.json picks another T_device_CPF; objects.json adds boxes. */
static void test_mps_options(void **state)
{
	const char *links[2] = { "trajectory/closed_loop_trajectory.csv",
				 DATA "mps/trajectory/closed_loop_trajectory.csv" };
	struct recording *s, *l, *id;
	const char *dir;
	double dx, dy, dz;

	(void)state;
	s = load(DATA "mps");
	dir = make_dir("dvtl", links, 2);
	write_file(dir, "proxima.json", "{\"device_subtype\": \"DVT-L\"}\n");
	l = load(dir);
	/*
	 * camera origin = T_wd t_dc: the DVT-L/DVT-S difference is R_wd (t_L -
	 * t_S), whose length is |t_L - t_S| = |(0.0000401, -0.0023117,
	 * -0.0007644)| = 2.4352 mm.
	 */
	dx = l->traj[0].pose.t[0] - s->traj[0].pose.t[0];
	dy = l->traj[0].pose.t[1] - s->traj[0].pose.t[1];
	dz = l->traj[0].pose.t[2] - s->traj[0].pose.t[2];
	NEAR(sqrt(dx * dx + dy * dy + dz * dz), 0.0024352, 2e-6);
	recording_free(l);

	dir = make_dir("ident", links, 2);
	write_file(dir, "proxima.json",
		   "{\"T_device_CPF\": {\"t\": [0, 0, 0], \"q\": [0, 0, 0, 2]}}\n");
	id = load(dir);
	/* identity (after normalising q): the camera sits at the device, row 1 t */
	NEAR(id->traj[0].pose.t[0], 0.000292, 1e-7);
	NEAR(id->traj[0].pose.t[1], -0.006405, 1e-7);
	NEAR(id->traj[0].pose.t[2], 0.000467, 1e-7);
	recording_free(id);

	dir = make_dir("badsub", links, 2);
	write_file(dir, "proxima.json", "{\"device_subtype\": \"DVT-XL\"}\n");
	assert_int_equal(recording_load(dir, REC_LAYOUT_AUTO, &id), ENG_EINVAL);
	msg_has("proxima.json: device_subtype: 'DVT-XL' is not");

	dir = make_dir("objs", links, 2);
	write_file(dir, "objects.json",
		   "{\"objects\": [{\"id\": \"chair\", \"name\": \"chair\", \"half_extents\": [0.3, 0.3, 0.5], "
		   "\"motion\": \"static\", \"pose\": {\"t\": [1, 2, -1.2], \"q\": [0, 0, 0, 1]}}]}\n");
	id = load(dir);
	assert_int_equal(id->nobjects, 1);
	assert_string_equal(id->info_objects.file, "objects.json");
	NEAR(id->floor_z, -1.7, 1e-6); /* the chair's bottom */
	assert_non_null(strstr(id->warnings, "no eye-gaze file"));
	recording_free(id);
	recording_free(s);
}

static void test_aria_bad_rows(void **state)
{
	static const char hdr[] =
		"graph_uid,tracking_timestamp_us,utc_timestamp_ns,tx_world_device,ty_world_device,"
		"tz_world_device,qx_world_device,qy_world_device,qz_world_device,qw_world_device,"
		"gravity_x_world,gravity_y_world,gravity_z_world\n";
	char text[2048];
	const char *dir;
	struct recording *rec;

	(void)state;
	dir = make_dir("badtraj", NULL, 0);
	{
		char sub[300];

		snprintf(sub, sizeof(sub), "%s/slam", dir);
		assert_int_equal(mkdir(sub, 0755), 0);
	}
	snprintf(text, sizeof(text), "%sg,10,-1,0,0,0,0,0,0,1,0,0,-9.81\ng,5,-1,0,0,0,0,0,0,1,0,0,-9.81\n", hdr);
	write_file(dir, "slam/closed_loop_trajectory.csv", text);
	assert_int_equal(recording_load(dir, REC_LAYOUT_AUTO, &rec), ENG_EINVAL);
	msg_has("slam/closed_loop_trajectory.csv:3: timestamps out of order (5 us after 10 us)");
	snprintf(text, sizeof(text), "%sg,10,-1,0,0,0,0,0,0,1,-9.81,0,0\n", hdr);
	write_file(dir, "slam/closed_loop_trajectory.csv", text);
	assert_int_equal(recording_load(dir, REC_LAYOUT_AUTO, &rec), ENG_EINVAL);
	msg_has("closed_loop_trajectory.csv:2: gravity (-9.81, 0, 0) is neither");
	snprintf(text, sizeof(text), "%sg,10,-1,0,0,0,0,0,0,1,0,0,-9.81\n", hdr);
	write_file(dir, "slam/closed_loop_trajectory.csv", text);
	write_file(dir, "proxima.json", "{\"device_subtype\": \"DVT-S\"}\n");
	{
		char sub[300];

		snprintf(sub, sizeof(sub), "%s/eye_gaze", dir);
		assert_int_equal(mkdir(sub, 0755), 0);
	}
	write_file(dir, "eye_gaze/general_eye_gaze.csv",
		   "tracking_timestamp_us,yaw_rads_cpf,pitch_rads_cpf,depth_m\n10,0.1,1.6,\n");
	assert_int_equal(recording_load(dir, REC_LAYOUT_AUTO, &rec), ENG_ERANGE);
	msg_has("general_eye_gaze.csv:2: column 'pitch_rads_cpf': 1.6 rad is not within");
	write_file(dir, "eye_gaze/general_eye_gaze.csv",
		   "tracking_timestamp_us,yaw_rads_cpf,pitch_rads_cpf,depth_m\n10,0.1,0.2,-1\n");
	assert_int_equal(recording_load(dir, REC_LAYOUT_AUTO, &rec), ENG_ERANGE);
	msg_has("general_eye_gaze.csv:2: column 'depth_m'");
	write_file(dir, "eye_gaze/general_eye_gaze.csv",
		   "tracking_timestamp_us,yaw_rads_cpf,pitch_rads_cpf,depth_m\n10,0.1,0.2,0.5\n");
	rec = load(dir);
	assert_int_equal(rec->ntraj, 1);
	assert_int_equal(rec->ngaze, 1);
	recording_free(rec);
}

/* ADT rows the real sample does not exercise. */
static void test_adt_edge_rows(void **state)
{
	static const char so_hdr[] =
		"object_uid,timestamp[ns],t_wo_x[m],t_wo_y[m],t_wo_z[m],q_wo_w,q_wo_x,q_wo_y,q_wo_z\n";
	const char *links[6] = { "aria_trajectory.csv", DATA "adt/aria_trajectory.csv",
				 "instances.json", DATA "adt/instances.json",
				 "3d_bounding_box.csv", DATA "adt/3d_bounding_box.csv" };
	char text[1024];
	struct recording *rec;
	const char *dir;

	(void)state;
	dir = make_dir("adt-edge", links, 6);
	/* 123 has no box: an environment object, skipped (and counted in a warning) */
	snprintf(text, sizeof(text), "%s123,-1,0,0,0,1,0,0,0\n"
		 "5691266090916432,-1,1,2,3,2,0,0,0\n", so_hdr);
	write_file(dir, "scene_objects.csv", text);
	rec = load(dir);
	/* only Hook_4 has a pose now: the other 348 boxes are skipped */
	assert_int_equal(rec->nobjects, 1);
	assert_non_null(strstr(rec->warnings, "1 rows of objects without a 3D box skipped"));
	assert_non_null(strstr(rec->warnings, "348 boxes without a pose skipped"));
	/* q (w=2) normalised to identity; t (1, 2, 3) -> (1, -3, 2) */
	NEAR(rec->objects[0].static_pose.t[1], -3, 1e-6);
	NEAR(rec->objects[0].static_pose.q[3], M_SQRT1_2, 1e-6);
	recording_free(rec);

	snprintf(text, sizeof(text), "%s5691266090916432,-1,0,0,0,1,0,0,0\n"
		 "5691266090916432,87551170910700,0,0,0,1,0,0,0\n", so_hdr);
	write_file(dir, "scene_objects.csv", text);
	assert_int_equal(recording_load(dir, REC_LAYOUT_AUTO, &rec), ENG_EINVAL);
	msg_has("scene_objects.csv:3: object_uid 5691266090916432 is static (line 2) and dynamic");
	snprintf(text, sizeof(text), "%s5691266090916432,-5,0,0,0,1,0,0,0\n", so_hdr);
	write_file(dir, "scene_objects.csv", text);
	assert_int_equal(recording_load(dir, REC_LAYOUT_AUTO, &rec), ENG_EINVAL);
	msg_has("scene_objects.csv:2: timestamp -5 ns: only -1 (static) may be negative");
	snprintf(text, sizeof(text), "%s-5691266090916432,-1,0,0,0,1,0,0,0\n", so_hdr);
	write_file(dir, "scene_objects.csv", text);
	assert_int_equal(recording_load(dir, REC_LAYOUT_AUTO, &rec), ENG_EPARSE);
	msg_has("scene_objects.csv:2: column 'object_uid': '-5691266090916432' is not an unsigned integer");
	snprintf(text, sizeof(text), "%s3758151980953788,87551170910700,0,0,0,1,0,0,0\n"
		 "3758151980953788,87551170910700,0,0,1,1,0,0,0\n", so_hdr);
	write_file(dir, "scene_objects.csv", text);
	assert_int_equal(recording_load(dir, REC_LAYOUT_AUTO, &rec), ENG_EINVAL);
	msg_has("scene_objects.csv:3: object_uid 3758151980953788 has two rows at 87551170910700 ns (line 2)");

	dir = make_dir("adt-dupbox", links, 4);
	write_file(dir, "scene_objects.csv", so_hdr);
	write_file(dir, "3d_bounding_box.csv",
		   "object_uid,timestamp[ns],p_local_obj_xmin[m],p_local_obj_xmax[m],p_local_obj_ymin[m],"
		   "p_local_obj_ymax[m],p_local_obj_zmin[m],p_local_obj_zmax[m]\n"
		   "7,-1,0,1,0,1,0,1\n8,-1,0,1,0,1,0,1\n7,-1,0,1,0,1,0,1\n");
	assert_int_equal(recording_load(dir, REC_LAYOUT_AUTO, &rec), ENG_EINVAL);
	msg_has("3d_bounding_box.csv:4: object_uid 7 repeats line 2");
	write_file(dir, "3d_bounding_box.csv",
		   "object_uid,timestamp[ns],p_local_obj_xmin[m],p_local_obj_xmax[m],p_local_obj_ymin[m],"
		   "p_local_obj_ymax[m],p_local_obj_zmin[m],p_local_obj_zmax[m]\n"
		   "7,-1,0,1,2,1,0,1\n");
	assert_int_equal(recording_load(dir, REC_LAYOUT_AUTO, &rec), ENG_EINVAL);
	msg_has("3d_bounding_box.csv:2: p_local_obj_ymin[m] > p_local_obj_ymax[m]");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_adt_counts),
		cmocka_unit_test(test_id_from_folder),
		cmocka_unit_test(test_adt_object_boxes),
		cmocka_unit_test(test_adt_camera_and_gaze),
		cmocka_unit_test(test_mps_sample),
		cmocka_unit_test(test_gaze_schemas),
		cmocka_unit_test(test_gaze_schemas_through_loader),
		cmocka_unit_test(test_trajectory_columns_by_name),
		cmocka_unit_test(test_nearest_joins),
		cmocka_unit_test(test_mps_options),
		cmocka_unit_test(test_aria_bad_rows),
		cmocka_unit_test(test_adt_edge_rows),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	char cmd[160];

	if (tmpdir[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", tmpdir);
	}
	return rc;
}
