/* SPDX-License-Identifier: MIT */
/*
 * The Aria MPS folder loader, and the Aria pieces the ADT and Ego-Exo4D
 * loaders share: closed-loop trajectory and eye-gaze CSVs (all four gaze
 * schemas of formats.md section 1.4), T_device_CPF, and the conversion to
 * T_world_camera and world gaze rays.
 */
#include "recording.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "banned.h"
#include "csv.h"
#include "err.h"
#include "jsonfile.h"

/* Largest |tracking_timestamp_us| that still fits int64 ns. */
#define US_MAX (INT64_MAX / 1000)

/* The default camera of Aria sources: RGB, fisheye 110 deg over 1408 px. */
#define ARIA_RGB_SIDE 1408
#define ARIA_RGB_FOV_DEG 110.0

/* Gen2 vergence triangulation guards (formats.md section 1.4 d). */
#define GEN2_MIN_VERGENCE_DEG 0.75
#define GEN2_MAX_MISS_M 0.03
#define GEN2_MAX_DEPTH_M 6.0

/* ======================= T_device_CPF ======================= */

/*
 * T_device_CPF = (T_CPF_slam-left)^-1 from the CAD rows of formats.md
 * section 1.5 (translation in CPF, sensor Y and Z axes in CPF): computed
 * with R_device_CPF = [X Y Z]^T, t = -R_device_CPF * t_CPF_sensor.
 */
struct cad_row {
	const char *subtype;
	float q[4]; /* x, y, z, w */
	float t[3];
};

static const struct cad_row cad_rows[] = {
	{ "DVT-S", { 0.209686499f, -0.244741714f, 0.675301106f, 0.663401458f },
	  { 0.004952958f, -0.049148370f, -0.049185463f } },
	{ "EVT-S", { 0.209686499f, -0.244741714f, 0.675301106f, 0.663401458f },
	  { 0.004952958f, -0.049148370f, -0.049185463f } },
	{ "DVT-L", { 0.209686499f, -0.244741714f, 0.675301106f, 0.663401458f },
	  { 0.004993020f, -0.051460092f, -0.049949882f } },
	{ "EVT-L", { 0.209686499f, -0.244741714f, 0.675301106f, 0.663401458f },
	  { 0.004993020f, -0.051460092f, -0.049949882f } },
	{ "DVT-MARIA", { 0.454599767f, -0.061708962f, 0.541641998f, 0.704382710f },
	  { -0.011844282f, -0.002130230f, -0.048677809f } },
};

static void cad_pose(const struct cad_row *r, struct pose *out)
{
	pose_set(out, r->q[0], r->q[1], r->q[2], r->q[3], r->t[0], r->t[1], r->t[2]);
	pose_normalize(out);
}

int recording__aria_device_cpf(const char *dir, struct pose *out)
{
	cJSON *root = NULL;
	char *file = NULL, ctx[1100];
	const cJSON *tdc;
	const char *sub = NULL;
	int rc = 0;
	size_t i;

	cad_pose(&cad_rows[0], out);
	if (!recording__is_file(dir, "proxima.json"))
		return 0;
	file = recording__path(dir, "proxima.json");
	if (!file)
		return ENG_ENOMEM;
	rc = jsonfile_read(file, &root);
	if (rc)
		goto out;
	if (!cJSON_IsObject(root)) {
		rc = err_set(ENG_EPARSE, "%s: expected a JSON object", file);
		goto out;
	}
	snprintf(ctx, sizeof(ctx), "%s:", file);
	rc = jsonfile_str(root, "device_subtype", false, ctx, &sub);
	if (rc)
		goto out;
	tdc = cJSON_GetObjectItemCaseSensitive(root, "T_device_CPF");
	if (tdc && sub) {
		rc = err_set(ENG_EPARSE, "%s: give T_device_CPF or device_subtype, not both", file);
		goto out;
	}
	if (sub) {
		for (i = 0; i < ARRAY_SIZE(cad_rows); i++)
			if (!strcmp(sub, cad_rows[i].subtype))
				break;
		if (i == ARRAY_SIZE(cad_rows)) {
			rc = err_set(ENG_EINVAL,
				     "%s: device_subtype: '%.32s' is not DVT-S, EVT-S, DVT-L, EVT-L or DVT-MARIA",
				     file, sub);
			goto out;
		}
		cad_pose(&cad_rows[i], out);
	}
	if (tdc) {
		double t[3], q[4];
		struct pose p;

		snprintf(ctx, sizeof(ctx), "%s: T_device_CPF", file);
		if (!cJSON_IsObject(tdc)) {
			rc = err_set(ENG_EPARSE, "%s: expected {\"t\": [x,y,z], \"q\": [x,y,z,w]}", ctx);
			goto out;
		}
		rc = jsonfile_vec(tdc, "t", 3, true, ctx, t);
		rc = rc ? rc : jsonfile_vec(tdc, "q", 4, true, ctx, q);
		if (rc)
			goto out;
		if (fabs(t[0]) > 10 || fabs(t[1]) > 10 || fabs(t[2]) > 10) {
			rc = err_set(ENG_ERANGE, "%s.t: more than 10 m from the device", ctx);
			goto out;
		}
		pose_set(&p, (float)q[0], (float)q[1], (float)q[2], (float)q[3], (float)t[0],
			 (float)t[1], (float)t[2]);
		if (fabs(q[0]) > 1e6 || fabs(q[1]) > 1e6 || fabs(q[2]) > 1e6 || fabs(q[3]) > 1e6 ||
		    pose_normalize(&p)) {
			rc = err_set(ENG_EINVAL, "%s.q: zero or out-of-range quaternion", ctx);
			goto out;
		}
		*out = p;
	}
out:
	cJSON_Delete(root);
	free(file);
	return rc;
}

/* ======================= Trajectory ======================= */

void recording__yup_to_zup(struct pose *out)
{
	/* R_x(+90 deg): (x, y, z) -> (x, -z, y) */
	pose_set(out, (float)M_SQRT1_2, 0, 0, (float)M_SQRT1_2, 0, 0, 0);
}

/* tracking_timestamp_us of the current row, as ns. */
static int row_us_to_ns(const struct csv *c, size_t col, int64_t *ns)
{
	int64_t us;
	int rc = csv_i64(c, col, &us);

	if (rc)
		return rc;
	if (us > US_MAX || us < -US_MAX)
		return csv_err(c, ENG_ERANGE, "column '%s': %lld us does not fit in ns",
			       csv_header(c, col), (long long)us);
	*ns = us * 1000;
	return 0;
}

static int row_f(const struct csv *c, size_t col, double lim, float *out)
{
	double v;
	int rc = csv_f64(c, col, &v);

	if (rc)
		return rc;
	if (fabs(v) > lim)
		return csv_err(c, ENG_ERANGE, "column '%s': %g is out of range",
			       csv_header(c, col), v);
	*out = (float)v;
	return 0;
}

int recording__aria_read_trajectory(const char *path, bool default_yup,
				    struct pose_sample **out, size_t *n,
				    bool *rotated)
{
	static const char *const names[8] = {
		"tracking_timestamp_us", "tx_world_device", "ty_world_device", "tz_world_device",
		"qx_world_device", "qy_world_device", "qz_world_device", "qw_world_device"
	};
	struct csv *c = NULL;
	struct pose_sample *s = NULL;
	size_t col[8], cap = 0, cnt = 0, k;
	long gcol[3];
	bool yup = default_yup, first = true;
	int rc = 0;

	rc = csv_open(path, &c);
	if (rc)
		return rc;
	for (k = 0; k < 8 && !rc; k++)
		rc = csv_need(c, names[k], &col[k]);
	gcol[0] = csv_col(c, "gravity_x_world");
	gcol[1] = csv_col(c, "gravity_y_world");
	gcol[2] = csv_col(c, "gravity_z_world");
	while (!rc) {
		struct pose_sample p;
		float q[4];

		rc = csv_next(c);
		if (rc <= 0)
			break;
		rc = row_us_to_ns(c, col[0], &p.t_ns);
		for (k = 0; k < 3 && !rc; k++)
			rc = row_f(c, col[1 + k], 1e6, &p.pose.t[k]);
		for (k = 0; k < 4 && !rc; k++)
			rc = row_f(c, col[4 + k], 1e6, &q[k]);
		if (rc)
			break;
		pose_set(&p.pose, q[0], q[1], q[2], q[3], p.pose.t[0], p.pose.t[1], p.pose.t[2]);
		if (pose_normalize(&p.pose)) {
			rc = csv_err(c, ENG_EINVAL, "zero quaternion (qx..qw_world_device all 0)");
			break;
		}
		if (first && gcol[0] >= 0 && gcol[1] >= 0 && gcol[2] >= 0) {
			double g[3], gn;

			for (k = 0; k < 3 && !rc; k++)
				rc = csv_f64(c, (size_t)gcol[k], &g[k]);
			if (rc)
				break;
			gn = sqrt(g[0] * g[0] + g[1] * g[1] + g[2] * g[2]);
			if (gn > 1e-6 && g[1] / gn < -0.99) {
				yup = true;
			} else if (gn > 1e-6 && g[2] / gn < -0.99) {
				yup = false;
			} else {
				rc = csv_err(c, ENG_EINVAL,
					     "gravity (%g, %g, %g) is neither along -Y (a Y-up world) nor -Z (Z-up)",
					     g[0], g[1], g[2]);
				break;
			}
		}
		first = false;
		if (cnt && p.t_ns <= s[cnt - 1].t_ns) {
			rc = csv_err(c, ENG_EINVAL, "timestamps out of order (%lld us after %lld us)",
				     (long long)(p.t_ns / 1000), (long long)(s[cnt - 1].t_ns / 1000));
			break;
		}
		rc = recording__reserve(&s, &cap, cnt + 1, sizeof(*s));
		if (!rc)
			s[cnt++] = p;
	}
	if (!rc && !cnt)
		rc = err_set(ENG_EINVAL, "%s: no trajectory rows", path);
	csv_free(c);
	if (rc < 0) {
		free(s);
		return rc;
	}
	if (yup) {
		struct pose r;

		recording__yup_to_zup(&r);
		for (k = 0; k < cnt; k++)
			pose_mul(&r, &s[k].pose, &s[k].pose);
	}
	*out = s;
	*n = cnt;
	*rotated = yup;
	return 0;
}

/* ======================= Eye gaze ======================= */

enum gaze_kind { G_LEGACY, G_VERGENCE, G_GEN2 };

/* Per-eye ray direction in the polar convention of the Gen2 per-eye angles. */
static void polar_dir(double yaw, double pitch, double d[3])
{
	double cp = cos(pitch);

	d[0] = sin(yaw) * cp;
	d[1] = sin(pitch);
	d[2] = cos(yaw) * cp;
}

static double dot3(const double a[3], const double b[3])
{
	return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

/*
 * Depth of a Gen2 sample: the midpoint of closest approach of the two
 * per-eye rays, its distance from the middle of the eyes; 0 when the rays
 * barely converge (< 0.75 deg), meet behind the eyes, miss each other by
 * more than 3 cm, or meet more than 6 m ahead.
 */
static double gen2_depth(const double ol[3], double ly, double lp,
			 const double orr[3], double ry, double rp)
{
	double d1[3], d2[3], p12[3], pl[3], pr[3], m[3], o[3], f[3], miss[3];
	double c, den, a, b, t, s, fn;
	int k;

	polar_dir(ly, lp, d1);
	polar_dir(ry, rp, d2);
	c = dot3(d1, d2);
	c = c > 1 ? 1 : c < -1 ? -1 : c;
	den = 1 - c * c;
	if (c > cos(GEN2_MIN_VERGENCE_DEG * POSE_DEG2RAD) || den < 1e-12)
		return 0;
	for (k = 0; k < 3; k++)
		p12[k] = ol[k] - orr[k];
	a = dot3(d1, p12);
	b = dot3(d2, p12);
	t = (c * b - a) / den;
	s = (b - c * a) / den;
	if (t < 0 || s < 0)
		return 0;
	for (k = 0; k < 3; k++) {
		pl[k] = ol[k] + t * d1[k];
		pr[k] = orr[k] + s * d2[k];
		m[k] = 0.5 * (pl[k] + pr[k]);
		o[k] = 0.5 * (ol[k] + orr[k]);
		miss[k] = pl[k] - pr[k];
		f[k] = d1[k] + d2[k];
	}
	if (sqrt(dot3(miss, miss)) > GEN2_MAX_MISS_M)
		return 0;
	fn = sqrt(dot3(f, f));
	for (k = 0; k < 3; k++) {
		f[k] = fn < 1e-6 ? (k == 2) : f[k] / fn;
		m[k] -= o[k];
	}
	if (dot3(f, m) > GEN2_MAX_DEPTH_M)
		return 0;
	return sqrt(dot3(m, m));
}

static int row_angle(const struct csv *c, size_t col, double *out)
{
	int rc = csv_f64(c, col, out);

	if (rc)
		return rc;
	if (fabs(*out) >= M_PI / 2)
		return csv_err(c, ENG_ERANGE, "column '%s': %g rad is not within (-pi/2, pi/2)",
			       csv_header(c, col), *out);
	return 0;
}

int recording__aria_read_gaze(const char *path, struct rec_cpf_gaze **out,
			      size_t *n, const char **schema)
{
	static const char *const eye_cols[6] = { "tx_left_eye_cpf", "ty_left_eye_cpf",
						 "tz_left_eye_cpf", "tx_right_eye_cpf",
						 "ty_right_eye_cpf", "tz_right_eye_cpf" };
	struct csv *c = NULL;
	struct rec_cpf_gaze *g = NULL;
	size_t cap = 0, cnt = 0, k, ct, cyaw = 0, cpitch = 0, cly = 0, cry = 0, clp = 0, crp = 0;
	size_t ceye[6];
	long cdepth;
	enum gaze_kind kind;
	const char *name = NULL;
	int rc;

	rc = csv_open(path, &c);
	if (rc)
		return rc;
	cdepth = csv_col(c, "depth_m");
	if (csv_col(c, "yaw_rads_cpf") >= 0 && csv_col(c, "left_pitch_rads_cpf") >= 0 &&
	    csv_col(c, "right_pitch_rads_cpf") >= 0) {
		kind = G_GEN2;
		name = "gen2";
	} else if (csv_col(c, "yaw_rads_cpf") < 0 && csv_col(c, "left_yaw_rads_cpf") >= 0 &&
		   csv_col(c, "right_yaw_rads_cpf") >= 0) {
		kind = G_VERGENCE;
		name = "gen1-vergence";
	} else if (csv_col(c, "yaw_rads_cpf") >= 0) {
		kind = G_LEGACY;
		name = csv_col(c, "session_uid") >= 0 ? "v2" : "v1";
	} else {
		rc = err_set(ENG_EPARSE,
			     "%s:1: not an Aria eye-gaze file (no yaw_rads_cpf, nor left_yaw_rads_cpf and right_yaw_rads_cpf)",
			     path);
		goto out;
	}
	rc = csv_need(c, "tracking_timestamp_us", &ct);
	if (!rc && kind != G_VERGENCE)
		rc = csv_need(c, "yaw_rads_cpf", &cyaw);
	if (!rc && kind != G_GEN2)
		rc = csv_need(c, "pitch_rads_cpf", &cpitch);
	if (!rc && kind != G_LEGACY) {
		rc = csv_need(c, "left_yaw_rads_cpf", &cly);
		rc = rc ? rc : csv_need(c, "right_yaw_rads_cpf", &cry);
	}
	if (!rc && kind == G_GEN2) {
		rc = csv_need(c, "pitch_rads_cpf", &cpitch);
		rc = rc ? rc : csv_need(c, "left_pitch_rads_cpf", &clp);
		rc = rc ? rc : csv_need(c, "right_pitch_rads_cpf", &crp);
		for (k = 0; k < 6 && !rc; k++)
			rc = csv_need(c, eye_cols[k], &ceye[k]);
	}
	while (!rc) {
		struct rec_cpf_gaze s = { 0, 0, 0, 0 };

		rc = csv_next(c);
		if (rc <= 0)
			break;
		rc = row_us_to_ns(c, ct, &s.t_ns);
		rc = rc ? rc : row_angle(c, cpitch, &s.pitch);
		if (!rc && cdepth >= 0 && kind != G_GEN2)
			rc = csv_f64_opt(c, (size_t)cdepth, 0.0, &s.depth_m);
		if (rc)
			break;
		if (s.depth_m < 0 || s.depth_m > 1e6) {
			rc = csv_err(c, ENG_ERANGE, "column 'depth_m': %g is not in [0, 1e6]", s.depth_m);
			break;
		}
		if (kind == G_LEGACY) {
			rc = row_angle(c, cyaw, &s.yaw);
		} else if (kind == G_VERGENCE) {
			double l, r;

			rc = row_angle(c, cly, &l);
			rc = rc ? rc : row_angle(c, cry, &r);
			/*
			 * IPD formula (IPD 0.063 m, eyes at x = +-0.0315): den =
			 * tan r - tan l, X = 0.0315 (tan l + tan r) / den, Z = 0.063 /
			 * den, yaw = atan(X / Z) = atan((tan l + tan r) / 2), which
			 * also stays defined when den = 0.
			 */
			if (!rc)
				s.yaw = atan((tan(l) + tan(r)) / 2.0);
		} else {
			double ly, ry, lp, rp, e[6];

			rc = row_angle(c, cyaw, &s.yaw);
			rc = rc ? rc : row_angle(c, cly, &ly);
			rc = rc ? rc : row_angle(c, cry, &ry);
			rc = rc ? rc : row_angle(c, clp, &lp);
			rc = rc ? rc : row_angle(c, crp, &rp);
			for (k = 0; k < 6 && !rc; k++) {
				rc = csv_f64(c, ceye[k], &e[k]);
				if (!rc && fabs(e[k]) > 1.0)
					rc = csv_err(c, ENG_ERANGE, "column '%s': eye more than 1 m from CPF",
						     eye_cols[k]);
			}
			if (!rc)
				s.depth_m = gen2_depth(e, ly, lp, e + 3, ry, rp);
		}
		if (rc)
			break;
		if (cnt && s.t_ns < g[cnt - 1].t_ns) {
			rc = csv_err(c, ENG_EINVAL, "timestamps out of order (%lld us after %lld us)",
				     (long long)(s.t_ns / 1000), (long long)(g[cnt - 1].t_ns / 1000));
			break;
		}
		rc = recording__reserve(&g, &cap, cnt + 1, sizeof(*g));
		if (!rc)
			g[cnt++] = s;
	}
out:
	csv_free(c);
	if (rc < 0) {
		free(g);
		return rc;
	}
	*out = g;
	*n = cnt;
	*schema = name;
	return 0;
}

/* ======================= World streams ======================= */

static void aria_camera(struct rec_camera *cam)
{
	cam->model = REC_CAM_FISHEYE;
	cam->width = cam->height = ARIA_RGB_SIDE;
	cam->fov_deg = (float)ARIA_RGB_FOV_DEG;
	/* equidistant model: r = f * theta at the edge of the field of view */
	cam->fx = cam->fy = (float)((ARIA_RGB_SIDE / 2.0) / (ARIA_RGB_FOV_DEG * M_PI / 360.0));
	cam->cx = cam->cy = ARIA_RGB_SIDE / 2.0f;
}

int recording__aria_build(struct recording *rec, const struct pose_sample *dev,
			  size_t ndev, const struct rec_cpf_gaze *g, size_t ng,
			  const struct pose *T_device_cpf)
{
	struct pose rz, dc_cam;
	size_t i, skipped = 0;

	/* R_z(180 deg) turns CPF (X left, Y up) into an OpenCV camera (X right, Y down) */
	pose_set(&rz, 0, 0, 1, 0, 0, 0, 0);
	pose_mul(T_device_cpf, &rz, &dc_cam);
	rec->traj = malloc((ndev ? ndev : 1) * sizeof(*rec->traj));
	if (!rec->traj)
		return ENG_ENOMEM;
	for (i = 0; i < ndev; i++) {
		rec->traj[i].t_ns = dev[i].t_ns;
		pose_mul(&dev[i].pose, &dc_cam, &rec->traj[i].pose);
	}
	rec->ntraj = ndev;
	rec->gaze_rows = ng;
	if (ng) {
		rec->gaze = malloc(ng * sizeof(*rec->gaze));
		if (!rec->gaze)
			return ENG_ENOMEM;
	}
	for (i = 0; i < ng; i++) {
		struct rec_gaze *o = &rec->gaze[rec->ngaze];
		struct pose wd, wc;
		vec3 d;
		float n;

		if (pose_sample_at(dev, ndev, g[i].t_ns, RECORDING_JOIN_TOL_NS, &wd)) {
			skipped++;
			continue;
		}
		pose_mul(&wd, T_device_cpf, &wc);
		d[0] = (float)tan(g[i].yaw);
		d[1] = (float)tan(g[i].pitch);
		d[2] = 1.0f;
		n = sqrtf(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
		d[0] /= n;
		d[1] /= n;
		d[2] /= n;
		o->t_ns = g[i].t_ns;
		glm_vec3_copy(wc.t, o->o);
		pose_rotate(&wc, d, o->d);
		o->depth_m = (float)g[i].depth_m;
		rec->ngaze++;
	}
	if (skipped) {
		int rc = recording__warn(rec, "%zu of %zu gaze rows lie outside the trajectory and were skipped",
					 skipped, ng);

		if (rc)
			return rc;
	}
	aria_camera(&rec->camera);
	return 0;
}

/* ======================= The MPS loader ======================= */

static const char *const mps_traj_files[] = {
	"slam/closed_loop_trajectory.csv",
	"trajectory/closed_loop_trajectory.csv",
	"closed_loop_trajectory.csv",
};

static const char *const mps_gaze_files[] = {
	"eye_gaze/general_eye_gaze.csv",
	"eye_gaze/generalized_eye_gaze.csv",
	"eye_gaze/personalized_eye_gaze.csv",
	"eye_gaze/calibrated_eye_gaze.csv",
	"eye_gaze/eyegaze.csv",
	"eye_gaze_vergence/generalized_gaze.csv",
	"eye_gaze_vergence/general_eye_gaze.csv",
};

/* The first of names[] that is a file in dir, or NULL. */
static const char *first_file(const char *dir, const char *const *names, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (recording__is_file(dir, names[i]))
			return names[i];
	return NULL;
}

int recording__aria_load_dir(const char *path, struct recording *rec, bool default_yup,
			     const char *const *traj_files, size_t ntraj_files,
			     const char *const *gaze_files, size_t ngaze_files,
			     bool *rotated)
{
	struct pose_sample *dev = NULL;
	struct rec_cpf_gaze *g = NULL;
	size_t ndev = 0, ng = 0;
	const char *tf, *gf;
	char *p = NULL;
	struct pose dc;
	int rc;

	tf = first_file(path, traj_files, ntraj_files);
	if (!tf)
		return err_set(ENG_ENOENT, "%s: missing required file '%s'%s", path, traj_files[0],
			       ntraj_files > 1 ? " (or one of its other locations)" : "");
	p = recording__path(path, tf);
	if (!p)
		return ENG_ENOMEM;
	rc = recording__aria_read_trajectory(p, default_yup, &dev, &ndev, rotated);
	free(p);
	p = NULL;
	if (rc)
		goto out;
	rec->info_traj.file = tf;
	gf = first_file(path, gaze_files, ngaze_files);
	if (gf) {
		p = recording__path(path, gf);
		if (!p) {
			rc = ENG_ENOMEM;
			goto out;
		}
		rc = recording__aria_read_gaze(p, &g, &ng, &rec->gaze_schema);
		if (rc)
			goto out;
		rec->info_gaze.file = gf;
	} else {
		rc = recording__warn(rec, "no eye-gaze file (looked for %s and %zu other names)",
				     gaze_files[0], ngaze_files - 1);
		if (rc)
			goto out;
	}
	rc = recording__aria_device_cpf(path, &dc);
	rc = rc ? rc : recording__aria_build(rec, dev, ndev, g, ng, &dc);
out:
	free(p);
	free(dev);
	free(g);
	return rc;
}

/*
 * The Aria recording beside the MPS outputs: in the folder, or the one
 * above it when the folder is an mps/ subfolder (Aria Everyday Activities).
 */
static const char *const mps_video_files[] = { "recording.vrs", "video.vrs", "../recording.vrs" };

bool recording__detect_mps(const char *path)
{
	return recording__is_file(path, "slam/closed_loop_trajectory.csv") ||
	       recording__is_file(path, "trajectory/closed_loop_trajectory.csv") ||
	       recording__is_file(path, "closed_loop_trajectory.csv");
}

int recording__load_mps(const char *path, struct recording *rec)
{
	bool rotated = false;
	char *p = NULL;
	int rc;

	rc = recording__aria_load_dir(path, rec, false, mps_traj_files,
				      ARRAY_SIZE(mps_traj_files), mps_gaze_files,
				      ARRAY_SIZE(mps_gaze_files), &rotated);
	rc = rc ? rc : recording__attach_video(path, rec, mps_video_files, ARRAY_SIZE(mps_video_files));
	if (rc)
		return rc;
	if (recording__is_file(path, "objects.json")) {
		p = recording__path(path, "objects.json");
		if (!p)
			return ENG_ENOMEM;
		rc = recording__read_objects(p, rec);
		free(p);
		p = NULL;
		if (rc)
			return rc;
		rec->info_objects.file = "objects.json";
		if (recording__is_file(path, "object_poses.csv")) {
			p = recording__path(path, "object_poses.csv");
			if (!p)
				return ENG_ENOMEM;
			rec->info_objects.file = "object_poses.csv";
		}
		rc = recording__read_object_poses(p, rec);
		free(p);
		if (rc)
			return rc;
	}
	return 0;
}
