/* SPDX-License-Identifier: MIT */
/*
 * Grid search benchmark: our fast search (geometry/jps, jump point search
 * with jump tables and 48 landmarks) and plain A* (geometry/astar, the
 * reference) against Boost.Graph astar_search, and networkx on a few
 * scenarios for reference, on random Moving AI maps.
 *
 * It writes two maps with a fixed seed, 512 x 512 and 1024 x 1024, 25% of
 * the cells blocked at random, each with 128 scenarios whose start and
 * goal are connected (optimal lengths from plain A*), into the work
 * folder ($BENCH_WORK, default build/bench/work). Every query of the fast
 * search is checked against plain A* (equal cost, legal path whose steps
 * add up to it). Then it times the queries of both (workspace made and
 * grid loaded before the clock starts; each query's best time over all
 * runs, summed) and runs the anchors on the same files:
 * $BENCH_ANCHORS/astar_boost (bench/run.sh compiles it when Boost is
 * installed; it times each query the same way, after building its graphs)
 * and python3 $BENCH_SCRIPTS/astar_networkx.py (default bench/anchors) on
 * the first 5 scenarios of the 512 map. All print their summed path cost,
 * which must agree.
 *
 * usage: bench_astar           run everything
 *        bench_astar --gen DIR only write the maps and scenarios into DIR
 * output: "astar 512: ours X q/s, boost Y q/s, ratio Z, target 20" per map
 * (ours = the fast search; boost = adjacency_list graph), the same for
 * Boost's CSR graph ("astar 512 csr: ... boost-csr ..., target 12"), the
 * plain A* lines ("astar 512 plain: ..."), "astar 512 networkx subset:
 * ours X q/s, networkx Y q/s, ratio Z", the cost sums and the preparation
 * times (loads and graph builds, not timed).
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "astar.h"
#include "jps.h"
#include "err.h"
#include "grid.h"
#include "movingai.h"
#include "rng.h"

#define DENSITY 0.25
#define NSCEN 128
#define REPS 3
#define ROUNDS 2     /* alternating rounds of ours and Boost */
#define LANDMARKS 48 /* of the fast search */
#define NX_SUBSET 5

struct bench_map {
	int size;
	uint64_t seed;
};

static const struct bench_map maps[] = {
	{ 512, 20240512u },
	{ 1024, 20241024u },
};


/* buf = a + b; -1 when it does not fit. */
static int cat2(char *buf, size_t cap, const char *a, const char *b)
{
	int n = snprintf(buf, cap, "%s%s", a, b);

	return n < 0 || (size_t)n >= cap ? -1 : 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Component labels under the 8-connected no-corner-cutting moves. */
static void label(const struct grid *g, int32_t *lab, int32_t *queue)
{
	static const int dx[8] = { 1, -1, 0, 0, 1, 1, -1, -1 };
	static const int dy[8] = { 0, 0, 1, -1, 1, -1, 1, -1 };
	int32_t n = g->w * g->h, i, next = 0;

	for (i = 0; i < n; i++)
		lab[i] = -1;
	for (i = 0; i < n; i++) {
		int32_t head = 0, tail = 0;

		if (lab[i] >= 0 || g->cells[i] != GRID_FREE)
			continue;
		lab[i] = next;
		queue[tail++] = i;
		while (head < tail) {
			int32_t u = queue[head++];
			int ux = u % g->w, uy = u / g->w, d;

			for (d = 0; d < 8; d++) {
				int vx = ux + dx[d], vy = uy + dy[d];
				int32_t v = vy * g->w + vx;

				if (!grid_is_free(g, vx, vy) || lab[v] >= 0)
					continue;
				if (dx[d] && dy[d] &&
				    (!grid_is_free(g, vx, uy) || !grid_is_free(g, ux, vy)))
					continue;
				lab[v] = next;
				queue[tail++] = v;
			}
		}
		next++;
	}
}

/* Writes DIR/randomN.map and DIR/randomN.map.scen for one map. */
static int gen_map(const char *dir, const struct bench_map *bm)
{
	char map_path[512], scen_path[512], name[64];
	struct movingai_scen *sc = NULL;
	struct astar_ws *ws = NULL;
	int32_t *lab = NULL, *queue = NULL;
	uint8_t *cells = NULL;
	uint64_t s = bm->seed;
	struct grid g;
	size_t n = (size_t)bm->size * (size_t)bm->size, i, k = 0;
	int rc = -1;

	snprintf(name, sizeof(name), "/random%d.map", bm->size);
	if (cat2(map_path, sizeof(map_path), dir, name) ||
	    cat2(scen_path, sizeof(scen_path), map_path, ".scen")) {
		fprintf(stderr, "bench_astar: path too long\n");
		return -1;
	}
	cells = malloc(n);
	lab = malloc(n * sizeof(*lab));
	queue = malloc(n * sizeof(*queue));
	sc = calloc(NSCEN, sizeof(*sc));
	ws = astar_ws_new(bm->size, bm->size);
	if (!cells || !lab || !queue || !sc || !ws) {
		fprintf(stderr, "bench_astar: out of memory\n");
		goto out;
	}
	grid_init(&g, cells, bm->size, bm->size, 0, 0, 1);
	for (i = 0; i < n; i++)
		cells[i] = rng_unit(&s) < DENSITY ? GRID_OCCUPIED : GRID_FREE;
	label(&g, lab, queue);
	astar_ws_load(ws, &g);
	while (k < NSCEN) {
		int32_t a = (int32_t)(rng_next64(&s) % n), b = (int32_t)(rng_next64(&s) % n);
		double cost;

		if (lab[a] < 0 || lab[a] != lab[b] || a == b)
			continue;
		if (astar_search(ws, a % bm->size, a / bm->size, b % bm->size,
				 b / bm->size, &cost)) {
			fprintf(stderr, "bench_astar: connected cells without a path\n");
			goto out;
		}
		sc[k].bucket = (int)(cost / 4);
		snprintf(sc[k].map, sizeof(sc[k].map), "%s", name + 1);
		sc[k].map_w = sc[k].map_h = bm->size;
		sc[k].sx = a % bm->size;
		sc[k].sy = a / bm->size;
		sc[k].gx = b % bm->size;
		sc[k].gy = b / bm->size;
		sc[k].optimal = cost;
		k++;
	}
	if (movingai_map_write(map_path, &g) || movingai_scen_write(scen_path, sc, k)) {
		fprintf(stderr, "bench_astar: %s\n", err_msg());
		goto out;
	}
	rc = 0;
out:
	astar_ws_free(ws);
	free(sc);
	free(queue);
	free(lab);
	free(cells);
	return rc;
}

/* A map and its scenarios with both our workspaces loaded. */
struct bench_set {
	struct movingai_map m;
	struct movingai_scenset sc;
	struct astar_ws *astar;
	struct jps_ws *jps;
	double load_astar_ms, load_jps_ms;
};

static void set_release(struct bench_set *b)
{
	astar_ws_free(b->astar);
	jps_ws_free(b->jps);
	movingai_scen_release(&b->sc);
	movingai_map_release(&b->m);
}

static int set_load(struct bench_set *b, const char *map_path, const char *scen_path)
{
	double t0;

	memset(b, 0, sizeof(*b));
	if (movingai_map_load(map_path, &b->m)) {
		fprintf(stderr, "bench_astar: %s\n", err_msg());
		return -1;
	}
	if (movingai_scen_load(scen_path, &b->sc)) {
		fprintf(stderr, "bench_astar: %s\n", err_msg());
		movingai_map_release(&b->m);
		return -1;
	}
	b->astar = astar_ws_new(b->m.grid.w, b->m.grid.h);
	b->jps = jps_ws_new(b->m.grid.w, b->m.grid.h, LANDMARKS);
	if (!b->astar || !b->jps) {
		fprintf(stderr, "bench_astar: out of memory\n");
		set_release(b);
		return -1;
	}
	t0 = now_s();
	astar_ws_load(b->astar, &b->m.grid);
	b->load_astar_ms = 1e3 * (now_s() - t0);
	t0 = now_s();
	jps_ws_load(b->jps, &b->m.grid);
	b->load_jps_ms = 1e3 * (now_s() - t0);
	return 0;
}

/*
 * Timings of one of our searches over the first n scenarios: each
 * query's best time over all runs so far (a run preempted on a shared
 * machine then costs nothing), summed.
 */
struct timing {
	double *best;     /* per query, seconds */
	double qps;       /* n / the sum of best */
	double cost_sum;  /* summed path cost (-1 per failed query) */
	double expanded;  /* nodes expanded per query */
	size_t n;         /* queries */
};

static int timing_init(struct timing *t, size_t n)
{
	size_t i;

	memset(t, 0, sizeof(*t));
	t->best = malloc((n ? n : 1) * sizeof(*t->best));
	if (!t->best)
		return -1;
	for (i = 0; i < n; i++)
		t->best[i] = HUGE_VAL;
	return 0;
}

/* One run of the first `limit` queries; keeps each query's best in *t. */
static void time_run(struct bench_set *b, int use_jps, size_t limit, struct timing *t)
{
	size_t i, n = b->sc.n < limit ? b->sc.n : limit, exp_sum = 0;
	double sum = 0, total = 0;

	for (i = 0; i < n; i++) {
		const struct movingai_scen *p = &b->sc.v[i];
		double c = -1, t0 = now_s(), secs;

		if (use_jps) {
			if (jps_search(b->jps, p->sx, p->sy, p->gx, p->gy, &c))
				c = -1;
		} else {
			if (astar_search(b->astar, p->sx, p->sy, p->gx, p->gy, &c))
				c = -1;
		}
		secs = now_s() - t0;
		exp_sum += use_jps ? jps_expanded(b->jps) : astar_expanded(b->astar);
		if (secs < t->best[i])
			t->best[i] = secs;
		total += t->best[i];
		sum += c;
	}
	t->qps = total > 0 ? (double)n / total : 0;
	t->cost_sum = sum;
	t->n = n;
	t->expanded = n ? (double)exp_sum / (double)n : 0;
}

/*
 * Checks every query: the fast search's cost equals plain A*'s (1e-9) and
 * its path is a legal 8-connected path (free cells, neighbours, no corner
 * cut) whose steps add up to that cost. Returns the failures.
 */
static size_t check_jps(struct bench_set *b)
{
	const struct grid *g = &b->m.grid;
	size_t i, bad = 0, cap = (size_t)g->w * (size_t)g->h, n, k;
	int32_t *path = malloc(cap * sizeof(*path));

	if (!path)
		return b->sc.n;
	for (i = 0; i < b->sc.n; i++) {
		const struct movingai_scen *p = &b->sc.v[i];
		double ca = -1, cj = -1, sum = 0;
		int ok = 1;

		if (astar_search(b->astar, p->sx, p->sy, p->gx, p->gy, &ca) ||
		    jps_search(b->jps, p->sx, p->sy, p->gx, p->gy, &cj) ||
		    jps_path(b->jps, path, cap, &n) || fabs(ca - cj) > 1e-9) {
			bad++;
			continue;
		}
		for (k = 1; k < n && ok; k++) {
			int ax = path[k - 1] % g->w, ay = path[k - 1] / g->w;
			int bx = path[k] % g->w, by = path[k] / g->w;
			int dx = bx - ax, dy = by - ay;

			ok = abs(dx) <= 1 && abs(dy) <= 1 && (dx || dy) &&
			     grid_is_free(g, bx, by) &&
			     (!dx || !dy || (grid_is_free(g, bx, ay) && grid_is_free(g, ax, by)));
			sum += dx && dy ? sqrt(2.0) : 1.0;
		}
		if (!ok || fabs(sum - cj) > 1e-6)
			bad++;
	}
	free(path);
	return bad;
}

/* One "result NAME queries N cost S seconds T" line of an anchor. */
struct anchor_result {
	char name[32];
	size_t n;
	double cost, secs;
};

/* Graph construction times the Boost anchor reports (seconds, -1 unknown). */
static double build_adj = -1, build_csr = -1;

/*
 * Runs an anchor command, echoes its other lines with a prefix and parses
 * up to cap result lines into res. Returns the count, 0 when the anchor or
 * its interpreter is missing (exit 3 or 127), -1 on failure.
 */
static int run_anchor(const char *cmd, const char *tag,
		      struct anchor_result *res, int cap)
{
	char line[512], name[32];
	double secs;
	FILE *p;
	int k = 0, st;

	p = popen(cmd, "r");
	if (!p)
		return -1;
	while (fgets(line, sizeof(line), p)) {
		if (k < cap && sscanf(line, "result %31s queries %zu cost %lf seconds %lf",
				      res[k].name, &res[k].n, &res[k].cost,
				      &res[k].secs) == 4) {
			k++;
		} else if (sscanf(line, "build %31s seconds %lf", name, &secs) == 2) {
			if (!strcmp(name, "adjacency_list"))
				build_adj = secs;
			else if (!strcmp(name, "csr"))
				build_csr = secs;
		} else {
			printf("  %s: %s", tag, line);
		}
	}
	st = pclose(p);
	if (WIFEXITED(st) && (WEXITSTATUS(st) == 3 || WEXITSTATUS(st) == 127))
		return 0;
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 || !k)
		return -1;
	return k;
}

static const char *env_or(const char *name, const char *def)
{
	const char *v = getenv(name);

	return v && *v ? v : def;
}

static int mkdir_p(const char *dir)
{
	char buf[512];
	size_t i, n = strlen(dir);

	if (n >= sizeof(buf))
		return -1;
	memcpy(buf, dir, n + 1);
	for (i = 1; i <= n; i++) {
		if (buf[i] != '/' && buf[i] != '\0')
			continue;
		buf[i] = '\0';
		if (mkdir(buf, 0755) && errno != EEXIST)
			return -1;
		buf[i] = i < n ? '/' : '\0';
	}
	return 0;
}

static int same_cost(double a, double b)
{
	return fabs(a - b) <= 1e-6 * (fabs(a) > 1 ? fabs(a) : 1);
}

/* Prints the cost check and the speed line of one comparison. */
static void report(const char *what, const char *anchor, double qps,
		   double sum, size_t nq, const struct anchor_result *r)
{
	if (r->n != nq || r->secs <= 0) {
		printf("%s: ours %.1f q/s, %s failed\n", what, qps, anchor);
		return;
	}
	printf("%s: cost sum ours %.6f, %s %.6f (%s)\n", what, sum, anchor,
	       r->cost, same_cost(sum, r->cost) ? "equal" : "DIFFERENT");
	printf("%s: ours %.1f q/s, %s %.2f q/s, ratio %.2f\n", what, qps, anchor,
	       (double)r->n / r->secs, qps * r->secs / (double)r->n);
}

static void print_line(const char *what, const char *anchor, double qps,
		       double aqps, const char *target)
{
	printf("%s: ours %.1f q/s, %s %.2f q/s, ratio %.2f%s\n", what, qps, anchor,
	       aqps, qps / aqps, target);
}

static int bench_one(const char *dir, const struct bench_map *bm,
		     const char *anchors, const char *scripts)
{
	char map_path[512], scen_path[512], cmd[2048], boost[600], name[64];
	char what[96];
	struct anchor_result res[2];
	struct bench_set b;
	struct timing ta, tj, tx;
	double best_adj = 0, best_csr = 0, sum_adj = 0, sum_csr = 0;
	size_t bad;
	int k = -1, i, round, have_boost, rc = -1;

	snprintf(name, sizeof(name), "/random%d.map", bm->size);
	if (cat2(map_path, sizeof(map_path), dir, name) ||
	    cat2(scen_path, sizeof(scen_path), map_path, ".scen") ||
	    cat2(boost, sizeof(boost), anchors, "/astar_boost"))
		return -1;
	if (set_load(&b, map_path, scen_path))
		return -1;
	if (timing_init(&ta, b.sc.n) || timing_init(&tj, b.sc.n) ||
	    timing_init(&tx, b.sc.n)) {
		fprintf(stderr, "bench_astar: out of memory\n");
		goto out;
	}
	bad = check_jps(&b);
	have_boost = !access(boost, X_OK);
	snprintf(cmd, sizeof(cmd), "'%s' '%s' '%s' %d", boost, map_path, scen_path, REPS);
	/* the machine may be shared: alternate ours and Boost, keep each best */
	for (round = 0; round < ROUNDS; round++) {
		for (i = 0; i < REPS; i++) {
			time_run(&b, 0, (size_t)-1, &ta);
			time_run(&b, 1, (size_t)-1, &tj);
		}
		if (!have_boost)
			continue;
		k = run_anchor(cmd, "boost", res, 2);
		if (k <= 0)
			break;
		for (i = 0; i < k; i++) {
			double q = res[i].secs > 0 ? (double)res[i].n / res[i].secs : 0;

			if (res[i].n != ta.n)
				continue;
			if (!strcmp(res[i].name, "adjacency_list") && q > best_adj) {
				best_adj = q;
				sum_adj = res[i].cost;
			} else if (!strcmp(res[i].name, "csr") && q > best_csr) {
				best_csr = q;
				sum_csr = res[i].cost;
			}
		}
	}
	printf("astar %d: %zu queries; plain A* expands %.0f nodes per query, jps %.0f "
	       "jump points (%d landmarks)\n", bm->size, ta.n, ta.expanded, tj.expanded,
	       LANDMARKS);
	printf("astar %d: preparation (not timed): A* load %.1f ms, jps load with "
	       "landmarks %.1f ms, Boost graph build adjacency_list %.1f ms, csr %.1f ms\n",
	       bm->size, b.load_astar_ms, b.load_jps_ms, 1e3 * build_adj, 1e3 * build_csr);
	printf("astar %d: jps against plain A*: %zu of %zu queries differ in cost or "
	       "give an illegal path\n", bm->size, bad, b.sc.n);
	printf("astar %d: cost sum A* %.6f, jps %.6f (%s)\n", bm->size, ta.cost_sum,
	       tj.cost_sum, same_cost(ta.cost_sum, tj.cost_sum) ? "equal" : "DIFFERENT");
	snprintf(what, sizeof(what), "astar %d", bm->size);
	if (!have_boost) {
		printf("%s: ours %.1f q/s, boost missing (no %s; install libboost-graph-dev)\n",
		       what, tj.qps, boost);
	} else if (k <= 0 || best_adj <= 0 || best_csr <= 0) {
		printf("%s: ours %.1f q/s, boost failed\n", what, tj.qps);
	} else {
		printf("%s: cost sum ours %.6f, boost %.6f (%s), boost-csr %.6f (%s)\n", what,
		       tj.cost_sum, sum_adj, same_cost(tj.cost_sum, sum_adj) ? "equal" : "DIFFERENT",
		       sum_csr, same_cost(tj.cost_sum, sum_csr) ? "equal" : "DIFFERENT");
		print_line(what, "boost", tj.qps, best_adj, ", target 20");
		snprintf(what, sizeof(what), "astar %d csr", bm->size);
		print_line(what, "boost-csr", tj.qps, best_csr, ", target 12");
		snprintf(what, sizeof(what), "astar %d plain", bm->size);
		print_line(what, "boost", ta.qps, best_adj, "");
		snprintf(what, sizeof(what), "astar %d plain csr", bm->size);
		print_line(what, "boost-csr", ta.qps, best_csr, "");
	}
	/* the tables of docs/performance.md (bench/report.sh) */
	if (have_boost && best_adj > 0 && best_csr > 0) {
		printf("row: astar | %d x %d | fast search (jps, %d landmarks) | %.0f | %.1f | "
		       "%.1f | %.2f | %.1f | %.2f\n", bm->size, bm->size, LANDMARKS, tj.expanded,
		       tj.qps, best_adj, tj.qps / best_adj, best_csr, tj.qps / best_csr);
		printf("row: astar | %d x %d | plain A* (reference) | %.0f | %.1f | %.1f | %.2f | "
		       "%.1f | %.2f\n", bm->size, bm->size, ta.expanded, ta.qps, best_adj,
		       ta.qps / best_adj, best_csr, ta.qps / best_csr);
		printf("target: A* | %d x %d, fast search vs Boost adjacency_list | %.1f q/s | "
		       "%.1f q/s | %.3f | >= 20 | %s\n", bm->size, bm->size, tj.qps, best_adj,
		       tj.qps / best_adj, tj.qps / best_adj >= 20 ? "PASS" : "FAIL");
		printf("target: A* | %d x %d, fast search vs Boost CSR | %.1f q/s | %.1f q/s | "
		       "%.3f | >= 12 | %s\n", bm->size, bm->size, tj.qps, best_csr,
		       tj.qps / best_csr, tj.qps / best_csr >= 12 ? "PASS" : "FAIL");
	} else {
		printf("row: astar | %d x %d | fast search (jps, %d landmarks) | %.0f | %.1f | "
		       "n/a | - | n/a | -\n", bm->size, bm->size, LANDMARKS, tj.expanded, tj.qps);
		printf("row: astar | %d x %d | plain A* (reference) | %.0f | %.1f | n/a | - | n/a | "
		       "-\n", bm->size, bm->size, ta.expanded, ta.qps);
	}
	printf("row: astar-prep | %d x %d | %.1f ms | %.1f ms | %.1f ms | %.1f ms\n", bm->size,
	       bm->size, b.load_astar_ms, b.load_jps_ms, 1e3 * build_adj, 1e3 * build_csr);
	printf("row: astar-check | %d x %d | %zu | %.6f | %.6f | %.6f | %zu\n", bm->size,
	       bm->size, b.sc.n, ta.cost_sum, tj.cost_sum, sum_adj, bad);
	if (bm->size != 512) {
		rc = bad ? -1 : 0;
		goto out;
	}
	/* networkx: pure Python, so only a few scenarios */
	for (i = 0; i < REPS; i++)
		time_run(&b, 1, NX_SUBSET, &tx);
	snprintf(cmd, sizeof(cmd), "python3 '%s/astar_networkx.py' '%s' '%s' %d 2>&1",
		 scripts, map_path, scen_path, NX_SUBSET);
	k = run_anchor(cmd, "networkx", res, 1);
	snprintf(what, sizeof(what), "astar 512 networkx subset");
	if (k == 0)
		printf("%s: ours %.1f q/s, networkx missing (install python3-networkx)\n",
		       what, tx.qps);
	else if (k < 0)
		printf("%s: ours %.1f q/s, networkx failed\n", what, tx.qps);
	else
		report(what, "networkx", tx.qps, tx.cost_sum, tx.n, &res[0]);
	if (k > 0 && res[0].secs > 0)
		printf("row: astar-networkx | 512 x 512, first %d scenarios | %.1f | %.2f | %.0f\n",
		       NX_SUBSET, tx.qps, (double)res[0].n / res[0].secs,
		       tx.qps * res[0].secs / (double)res[0].n);
	rc = bad ? -1 : 0;
out:
	free(ta.best);
	free(tj.best);
	free(tx.best);
	set_release(&b);
	return rc;
}

int main(int argc, char **argv)
{
	const char *dir = env_or("BENCH_WORK", "build/bench/work");
	const char *anchors = env_or("BENCH_ANCHORS", "build/bench/anchors");
	const char *scripts = env_or("BENCH_SCRIPTS", "bench/anchors");
	int gen_only = 0, rc = 0;
	size_t i;

	if (argc == 3 && !strcmp(argv[1], "--gen")) {
		dir = argv[2];
		gen_only = 1;
	} else if (argc != 1) {
		fprintf(stderr, "usage: bench_astar [--gen DIR]\n");
		return 2;
	}
	if (mkdir_p(dir)) {
		fprintf(stderr, "bench_astar: cannot create '%s'\n", dir);
		return 1;
	}
	for (i = 0; i < sizeof(maps) / sizeof(maps[0]); i++) {
		if (gen_map(dir, &maps[i]))
			return 1;
	}
	if (gen_only)
		return 0;
	printf("astar: random maps %.0f%% blocked, %d scenarios each; each query's best "
	       "time over %d alternating rounds of %d runs, summed (Boost the same)\n",
	       DENSITY * 100, NSCEN, ROUNDS, REPS);
	printf("head: astar | map | search | nodes expanded per query | ours q/s | "
	       "Boost adjacency_list q/s | ratio | Boost CSR q/s | ratio\n");
	printf("head: astar-prep | map | plain A* load | fast search load (jump tables, "
	       "%d landmarks) | Boost adjacency_list build | Boost CSR build\n", LANDMARKS);
	printf("head: astar-check | map | queries | cost sum, plain A* | cost sum, fast search | "
	       "cost sum, Boost | fast search vs plain A*: queries that differ in cost or give "
	       "an illegal path\n");
	printf("head: astar-networkx | map | ours q/s | networkx q/s | ratio\n");
	for (i = 0; i < sizeof(maps) / sizeof(maps[0]); i++)
		if (bench_one(dir, &maps[i], anchors, scripts))
			rc = 1;
	return rc;
}
