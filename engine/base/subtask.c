/* SPDX-License-Identifier: MIT */
/* The table of sub-tasks and metrics, and their names. */
#include "subtask.h"

#include <stdio.h>
#include <string.h>

#include "banned.h"

#define BOTH (SUBTASK_METRIC_BIT(METRIC_APPROX) | SUBTASK_METRIC_BIT(METRIC_RELATIVE))

/*
 * The tools of a sub-task are those its task prompt (prompts/tasks/) names
 * and the ones that check them; sending only these keeps each request
 * small (the whole tools array was 25 KB) and the prompt prefix stable.
 */
#define COMMON "sample_clips,spatial_relation,visible_objects,describe_recording"

static const struct subtask_info table[SUBTASK_COUNT] = {
	[SUBTASK_HEAD_TURN] = { "intention.head_turn", "intention", "head_turn", BOTH, true,
				COMMON },
	[SUBTASK_GAZE_TARGET] = { "intention.gaze_target", "intention", "gaze_target", BOTH,
				  false, COMMON ",cast_gaze" },
	[SUBTASK_NAVIGATE] = { "exploration.navigate", "exploration", "navigate", BOTH, true,
			       COMMON ",plan_path,build_occupancy" },
	[SUBTASK_NEXT_INTERACTION] = { "exploitation.next_interaction", "exploitation",
				       "next_interaction", BOTH, false,
				       COMMON ",find_interactions" },
	[SUBTASK_CHAIN] = { "chain.actions", "chain", "actions",
			    SUBTASK_METRIC_BIT(METRIC_RELATIVE), true,
			    COMMON ",extract_keysteps,build_chain" },
};

static const char *const metric_names[METRIC_COUNT] = { "approx", "relative" };

const struct subtask_info *subtask_info(enum subtask st)
{
	return (unsigned)st < SUBTASK_COUNT ? &table[st] : NULL;
}

const char *subtask_name(enum subtask st)
{
	return (unsigned)st < SUBTASK_COUNT ? table[st].name : "?";
}

enum subtask subtask_from_name(const char *name)
{
	int i;

	for (i = 0; name && i < SUBTASK_COUNT; i++)
		if (!strcmp(name, table[i].name) || !strcmp(name, table[i].short_name))
			return (enum subtask)i;
	return SUBTASK_COUNT;
}

const char *metric_name(enum metric m)
{
	return (unsigned)m < METRIC_COUNT ? metric_names[m] : "?";
}

enum metric metric_from_name(const char *name)
{
	int i;

	for (i = 0; name && i < METRIC_COUNT; i++)
		if (!strcmp(name, metric_names[i]))
			return (enum metric)i;
	return METRIC_COUNT;
}

bool subtask_has_metric(enum subtask st, enum metric m)
{
	return (unsigned)st < SUBTASK_COUNT && (unsigned)m < METRIC_COUNT &&
	       (table[st].metrics & SUBTASK_METRIC_BIT(m));
}

bool subtask_group(int i, enum subtask *st, enum metric *m)
{
	int s, k, n = 0;

	for (s = 0; s < SUBTASK_COUNT; s++)
		for (k = 0; k < METRIC_COUNT; k++) {
			if (!subtask_has_metric((enum subtask)s, (enum metric)k))
				continue;
			if (n++ == i) {
				*st = (enum subtask)s;
				*m = (enum metric)k;
				return true;
			}
		}
	return false;
}

int subtask_group_index(enum subtask st, enum metric m)
{
	int s, k, n = 0;

	if (!subtask_has_metric(st, m))
		return -1;
	for (s = 0; s < SUBTASK_COUNT; s++)
		for (k = 0; k < METRIC_COUNT; k++) {
			if (!subtask_has_metric((enum subtask)s, (enum metric)k))
				continue;
			if ((enum subtask)s == st && (enum metric)k == m)
				return n;
			n++;
		}
	return -1;
}

int subtask_group_from_name(const char *name)
{
	char st[64];
	const char *sep;
	size_t n;

	if (!name)
		return -1;
	sep = strrchr(name, '/');
	if (!sep) {
		sep = strrchr(name, '.');
		/* "chain.actions" alone has a dot too: the metric must follow it */
		if (sep && metric_from_name(sep + 1) == METRIC_COUNT)
			sep = NULL;
	}
	if (!sep)
		return -1;
	n = (size_t)(sep - name);
	if (n >= sizeof(st))
		return -1;
	memcpy(st, name, n);
	st[n] = '\0';
	return subtask_group_index(subtask_from_name(st), metric_from_name(sep + 1));
}

void subtask_group_name(int i, char *out, size_t size)
{
	enum subtask st;
	enum metric m;

	if (!size)
		return;
	if (!subtask_group(i, &st, &m)) {
		snprintf(out, size, "?");
		return;
	}
	snprintf(out, size, "%s/%s", subtask_name(st), metric_name(m));
}
