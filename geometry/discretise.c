/* SPDX-License-Identifier: MIT */
/* Angle and distance discretisation with ambiguity margins. */
#include "discretise.h"

#include <math.h>

void disc_defaults(struct disc_params *p)
{
	p->angle_step_deg = 5.0f;
	p->dist_step_m = 0.1f;
	p->dist_coarse_step_m = 0.5f;
	p->dist_coarse_from_m = 5.0f;
	p->forward_deg = 15.0f;
	p->around_deg = 165.0f;
	p->vertical_m = 0.3f;
	p->near_m = 1.0f;
	p->far_m = 2.0f;
	p->angle_margin_deg = 5.0f;
	p->dist_margin_m = 0.05f;
}

static float round_to(double v, double step)
{
	return (float)(floor(v / step + 0.5) * step);
}

float disc_angle(const struct disc_params *p, float deg)
{
	return round_to(fabs((double)deg), p->angle_step_deg);
}

float disc_distance(const struct disc_params *p, float m)
{
	double v = fabs((double)m);

	if (v > (double)p->dist_coarse_from_m)
		return round_to(v, p->dist_coarse_step_m);
	return round_to(v, p->dist_step_m);
}

enum disc_turn disc_turn_class(const struct disc_params *p, float yaw_deg)
{
	float a = fabsf(yaw_deg);

	if (a < p->forward_deg)
		return DISC_TURN_FORWARD;
	if (a > p->around_deg)
		return DISC_TURN_AROUND;
	return yaw_deg > 0 ? DISC_TURN_LEFT : DISC_TURN_RIGHT;
}

bool disc_turn_ambiguous(const struct disc_params *p, float yaw_deg)
{
	float a = fabsf(yaw_deg);

	return fabsf(a - p->forward_deg) < p->angle_margin_deg ||
	       fabsf(a - p->around_deg) < p->angle_margin_deg;
}

int disc_vertical(const struct disc_params *p, float dz)
{
	if (dz > p->vertical_m)
		return 1;
	if (dz < -p->vertical_m)
		return -1;
	return 0;
}

bool disc_vertical_ambiguous(const struct disc_params *p, float dz)
{
	return fabsf(fabsf(dz) - p->vertical_m) < p->dist_margin_m;
}

enum disc_prox disc_proximity(const struct disc_params *p, float m)
{
	if (m < p->near_m)
		return DISC_NEAR;
	if (m > p->far_m)
		return DISC_FAR;
	return DISC_MID;
}

bool disc_proximity_ambiguous(const struct disc_params *p, float m)
{
	return fabsf(m - p->near_m) < p->dist_margin_m ||
	       fabsf(m - p->far_m) < p->dist_margin_m;
}
