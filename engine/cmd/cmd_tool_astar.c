/* SPDX-License-Identifier: MIT */
/*
 * `proxima tool astar --map FILE.map --scen FILE.scen`: runs A* on every
 * problem of a Moving AI scenario file and compares the path lengths with
 * the file's optimal lengths (later `proxima tool astar`).
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "astar.h"
#include "banned.h"
#include "commands.h"
#include "err.h"
#include "gridio.h"
#include "movingai.h"

/* Largest |computed - expected| that still counts as a match. */
#define ASTAR_TOL 1e-3

static void astar_usage(FILE *f)
{
	fprintf(f,
		"usage: proxima tool astar --map FILE.map --scen FILE.scen [--pgm FILE] [--quiet]\n"
		"\n"
		"Runs 8-connected A* (no corner cutting) on every scenario of a\n"
		"Moving AI benchmark and prints 'id expected computed' per scenario\n"
		"(computed is -1 when no path exists), then 'N scenarios, M mismatches'\n"
		"(a mismatch differs by more than 0.001). Exits 0 when all match.\n"
		"\n"
		"  -m, --map FILE   the .map file\n"
		"  -s, --scen FILE  the .scen file (its map size must match the map)\n"
		"      --pgm FILE   also write the map as a PGM image\n"
		"  -q, --quiet      print only the summary line\n");
}

int cmd_tool_astar(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "map", required_argument, NULL, 'm' },
		{ "scen", required_argument, NULL, 's' },
		{ "pgm", required_argument, NULL, 'p' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct movingai_map map = { 0 };
	struct movingai_scenset scen = { 0 };
	struct astar_ws *ws = NULL;
	const char *map_path = NULL, *scen_path = NULL, *pgm_path = NULL;
	size_t i, mismatches = 0;
	int c, quiet = 0, rc = CMD_FAILED, err;

	if (cmd_wants_help(argc, argv)) {
		astar_usage(stdout);
		return CMD_OK;
	}
	optind = 1;
	while ((c = getopt_long(argc, argv, "m:s:qh", opts, NULL)) != -1) {
		switch (c) {
		case 'm': map_path = optarg; break;
		case 's': scen_path = optarg; break;
		case 'p': pgm_path = optarg; break;
		case 'q': quiet = 1; break;
		default:
			astar_usage(stderr);
			return CMD_USAGE;
		}
	}
	if (optind < argc || !map_path || !scen_path) {
		if (optind < argc)
			error("unexpected argument '%s'", argv[optind]);
		else
			error("both --map and --scen are required");
		astar_usage(stderr);
		return CMD_USAGE;
	}
	err = movingai_map_load(map_path, &map);
	if (!err)
		err = movingai_scen_load(scen_path, &scen);
	if (!err)
		err = movingai_scen_check(&scen, scen_path, &map);
	if (!err && pgm_path)
		err = gridio_write_pgm(pgm_path, &map.grid, NULL, 0, false);
	if (err) {
		error_code(err, map_path);
		goto out;
	}
	ws = astar_ws_new(map.grid.w, map.grid.h);
	if (!ws || astar_ws_load(ws, &map.grid)) {
		error("out of memory for a %dx%d search", map.grid.w, map.grid.h);
		goto out;
	}
	for (i = 0; i < scen.n; i++) {
		const struct movingai_scen *p = &scen.v[i];
		double cost = -1;

		err = astar_search(ws, p->sx, p->sy, p->gx, p->gy, &cost);
		if (err)
			cost = -1;
		if (fabs(cost - p->optimal) > ASTAR_TOL)
			mismatches++;
		if (!quiet)
			printf("%zu %.8f %.8f\n", i, p->optimal, cost);
	}
	printf("%zu scenarios, %zu mismatches\n", scen.n, mismatches);
	rc = mismatches ? CMD_FAILED : CMD_OK;
out:
	astar_ws_free(ws);
	movingai_scen_release(&scen);
	movingai_map_release(&map);
	return rc;
}
