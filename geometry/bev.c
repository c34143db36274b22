/* SPDX-License-Identifier: MIT */
/* BEV heading, signed yaw and the 8 direction sectors. */
#include "bev.h"

#include <math.h>
#include <string.h>

#define RAD2DEG 57.29577951308232
#define DEG2RAD 0.017453292519943295

int bev_heading(const struct pose *T_world_cam, float *out)
{
	static const vec3 fwd = { 0, 0, 1 };
	vec3 f;

	pose_rotate(T_world_cam, fwd, f);
	if (fabsf(f[0]) < 1e-6f && fabsf(f[1]) < 1e-6f)
		return ENG_ERANGE;
	*out = atan2f(f[1], f[0]);
	return 0;
}

float bev_wrap_deg(float deg)
{
	double d = fmod((double)deg, 360.0);

	if (d <= -180.0)
		d += 360.0;
	else if (d > 180.0)
		d -= 360.0;
	return (float)d;
}

int bev_yaw_to(float heading, const vec3 from, const vec3 to, float *yaw_deg)
{
	double dx = (double)to[0] - (double)from[0], dy = (double)to[1] - (double)from[1];

	if (fabs(dx) < 1e-6 && fabs(dy) < 1e-6)
		return ENG_ERANGE;
	*yaw_deg = bev_wrap_deg((float)((atan2(dy, dx) - (double)heading) * RAD2DEG));
	return 0;
}

void bev_local(float heading, const vec3 d, vec3 out)
{
	double c = cos(heading), s = sin(heading);
	float x = d[0], y = d[1], z = d[2];

	out[0] = (float)(c * (double)x + s * (double)y);
	out[1] = (float)(-s * (double)x + c * (double)y);
	out[2] = z;
}

enum bev_dir bev_dir_from_yaw(float yaw_deg)
{
	double y = bev_wrap_deg(yaw_deg);
	int k = (int)floor((y + 22.5) / 45.0);

	return (enum bev_dir)(((k % 8) + 8) % 8);
}

float bev_dir_margin(float yaw_deg)
{
	double y = (double)bev_wrap_deg(yaw_deg) + 22.5;
	double r = fmod(y, 45.0);

	if (r < 0)
		r += 45.0;
	return (float)(r < 45.0 - r ? r : 45.0 - r);
}

float bev_dir_yaw(enum bev_dir d)
{
	return bev_wrap_deg(45.0f * (float)d);
}

static const char *const dir_names[BEV_NDIR] = {
	"front", "front-left", "left", "back-left",
	"back", "back-right", "right", "front-right",
};
static const char dir_letters[BEV_NDIR] = { 'C', 'F', 'B', 'G', 'D', 'H', 'A', 'E' };

const char *bev_dir_name(enum bev_dir d)
{
	return (unsigned)d < BEV_NDIR ? dir_names[d] : "?";
}

char bev_dir_letter(enum bev_dir d)
{
	/* NOLINTNEXTLINE(bugprone-narrowing-conversions): both arms are chars */
	return (unsigned)d < BEV_NDIR ? dir_letters[d] : '?';
}

enum bev_dir bev_dir_from_letter(char c)
{
	int i;

	if (c >= 'a' && c <= 'h')
		c = (char)(c - 'a' + 'A');
	for (i = 0; i < BEV_NDIR; i++)
		if (dir_letters[i] == c)
			return (enum bev_dir)i;
	return BEV_NDIR;
}

enum bev_dir bev_dir_from_name(const char *s)
{
	int i;

	for (i = 0; i < BEV_NDIR; i++)
		if (!strcmp(dir_names[i], s))
			return (enum bev_dir)i;
	return BEV_NDIR;
}

enum bev_dir bev_dir_mirror(enum bev_dir d)
{
	if ((unsigned)d >= BEV_NDIR)
		return d;
	return (enum bev_dir)((8 - (int)d) % 8);
}
