/* SPDX-License-Identifier: MIT */
/*
 * Boost.Graph anchor for bench_astar: reads a Moving AI .map and .scen,
 * builds the 8-connected grid graph with the no-corner-cutting rule
 * (edge weights 1 and sqrt(2)) once, then times boost::astar_search with
 * the octile heuristic on every scenario. Two graph types are timed: an
 * adjacency_list<vecS, vecS, directedS> with an edge weight property and a
 * compressed_sparse_row_graph built from the same edges (usually the
 * faster). The property maps (distance, predecessor, rank, colour)
 * are vectors allocated once and reused, so queries do no allocation
 * beyond Boost's own heap.
 *
 * usage: astar_boost MAP SCEN [REPS]
 * output: "build GRAPH seconds B" and "result GRAPH queries N cost S
 * seconds T" for GRAPH = adjacency_list and csr: T is the sum over the
 * queries of each one's best time in REPS runs (default 3; the runs
 * alternate between the two graphs), so that a run preempted on a shared
 * machine does not count; S is the summed path cost.
 * Build: g++ -O2 -std=c++17 astar_boost.cpp
 */
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/astar_search.hpp>
#include <boost/graph/compressed_sparse_row_graph.hpp>
#include <boost/property_map/property_map.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace {

struct grid_map {
	int w = 0, h = 0;
	std::vector<char> pass; /* 1 = passable */
};

struct problem {
	int sx, sy, gx, gy;
	double optimal;
};

bool read_map(const char *path, grid_map &m)
{
	std::ifstream f(path);
	std::string line, key;

	if (!f)
		return false;
	while (std::getline(f, line)) {
		if (!line.empty() && line.back() == '\r')
			line.pop_back();
		std::istringstream ls(line);
		ls >> key;
		if (key == "height")
			ls >> m.h;
		else if (key == "width")
			ls >> m.w;
		else if (key == "map")
			break;
	}
	if (m.w <= 0 || m.h <= 0)
		return false;
	m.pass.assign((size_t)m.w * m.h, 0);
	for (int y = 0; y < m.h; y++) {
		if (!std::getline(f, line) || (int)line.size() < m.w)
			return false;
		for (int x = 0; x < m.w; x++) {
			char c = line[x];
			m.pass[(size_t)y * m.w + x] = c == '.' || c == 'G' || c == 'S';
		}
	}
	return true;
}

bool read_scen(const char *path, std::vector<problem> &out)
{
	std::ifstream f(path);
	std::string line;

	if (!f || !std::getline(f, line))
		return false;
	while (std::getline(f, line)) {
		std::istringstream ls(line);
		std::string map;
		int bucket, mw, mh;
		problem p;

		if (ls >> bucket >> map >> mw >> mh >> p.sx >> p.sy >> p.gx >> p.gy >> p.optimal)
			out.push_back(p);
	}
	return true;
}

/* Every directed edge of the grid graph, with its weight. */
void grid_edges(const grid_map &m, std::vector<std::pair<int, int>> &edges,
		std::vector<double> &weights)
{
	static const int dx[8] = { 1, -1, 0, 0, 1, 1, -1, -1 };
	static const int dy[8] = { 0, 0, 1, -1, 1, -1, 1, -1 };

	for (int y = 0; y < m.h; y++)
		for (int x = 0; x < m.w; x++) {
			if (!m.pass[(size_t)y * m.w + x])
				continue;
			for (int d = 0; d < 8; d++) {
				int vx = x + dx[d], vy = y + dy[d];
				auto ok = [&](int cx, int cy) {
					return cx >= 0 && cy >= 0 && cx < m.w && cy < m.h &&
					       m.pass[(size_t)cy * m.w + cx];
				};
				if (!ok(vx, vy))
					continue;
				if (dx[d] && dy[d] && (!ok(vx, y) || !ok(x, vy)))
					continue;
				edges.emplace_back(y * m.w + x, vy * m.w + vx);
				weights.push_back(dx[d] && dy[d] ? std::sqrt(2.0) : 1.0);
			}
		}
}

template <class Graph>
class octile_heuristic : public boost::astar_heuristic<Graph, double> {
public:
	typedef typename boost::graph_traits<Graph>::vertex_descriptor vertex;
	octile_heuristic(int w, int gx, int gy) : w_(w), gx_(gx), gy_(gy) {}
	double operator()(vertex v) const
	{
		int x = (int)(v % w_), y = (int)(v / w_);
		double ax = std::abs(x - gx_), ay = std::abs(y - gy_);
		return ax > ay ? ax + (std::sqrt(2.0) - 1) * ay
			       : ay + (std::sqrt(2.0) - 1) * ax;
	}

private:
	int w_, gx_, gy_;
};

struct found_goal {};

template <class Vertex>
class goal_visitor : public boost::default_astar_visitor {
public:
	explicit goal_visitor(Vertex goal) : goal_(goal) {}
	template <class Graph> void examine_vertex(Vertex u, const Graph &)
	{
		if (u == goal_)
			throw found_goal();
	}

private:
	Vertex goal_;
};

/*
 * One run over all queries: each query's time goes into best[q] when
 * lower. Returns the summed path cost.
 */
template <class Graph, class WeightMap>
double run_all(const Graph &g, WeightMap weight, const grid_map &m,
	       const std::vector<problem> &probs, std::vector<double> &best)
{
	typedef typename boost::graph_traits<Graph>::vertex_descriptor vertex;
	size_t n = boost::num_vertices(g);
	std::vector<vertex> pred(n);
	std::vector<double> dist(n), rank(n);
	std::vector<boost::default_color_type> color(n);
	auto index = boost::get(boost::vertex_index, g);
	double cost_sum = 0;

	for (size_t q = 0; q < probs.size(); q++) {
		const problem &p = probs[q];
		vertex s = (vertex)(p.sy * m.w + p.sx), t = (vertex)(p.gy * m.w + p.gx);
		double c = -1;
		auto t0 = std::chrono::steady_clock::now();

		try {
			boost::astar_search(
				g, s, octile_heuristic<Graph>(m.w, p.gx, p.gy),
				boost::weight_map(weight)
					.vertex_index_map(index)
					.predecessor_map(boost::make_iterator_property_map(pred.begin(), index))
					.distance_map(boost::make_iterator_property_map(dist.begin(), index))
					.rank_map(boost::make_iterator_property_map(rank.begin(), index))
					.color_map(boost::make_iterator_property_map(color.begin(), index))
					.visitor(goal_visitor<vertex>(t)));
		} catch (found_goal &) {
			c = dist[t];
		}
		double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
		if (secs < best[q])
			best[q] = secs;
		cost_sum += c;
	}
	return cost_sum;
}

} /* namespace */

int main(int argc, char **argv)
{
	typedef boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS,
				      boost::no_property,
				      boost::property<boost::edge_weight_t, double>>
		adj_graph;
	struct edge_w {
		double weight;
	};
	typedef boost::compressed_sparse_row_graph<boost::directedS, boost::no_property, edge_w>
		csr_graph;
	grid_map m;
	std::vector<problem> probs;
	std::vector<std::pair<int, int>> edges;
	std::vector<double> weights;
	int reps = argc > 3 ? std::atoi(argv[3]) : 3;
	double best[2] = { 1e300, 1e300 }, sums[2] = { 0, 0 };
	const char *names[2] = { "adjacency_list", "csr" };

	if (argc < 3) {
		std::fprintf(stderr, "usage: astar_boost MAP SCEN [REPS]\n");
		return 2;
	}
	if (!read_map(argv[1], m) || !read_scen(argv[2], probs)) {
		std::fprintf(stderr, "astar_boost: cannot read %s or %s\n", argv[1], argv[2]);
		return 1;
	}
	/* graph construction, for the record (not part of the query times) */
	auto e0 = std::chrono::steady_clock::now();
	grid_edges(m, edges, weights);
	auto e1 = std::chrono::steady_clock::now();
	size_t nv = (size_t)m.w * m.h;
	adj_graph ga(nv);
	for (size_t i = 0; i < edges.size(); i++)
		boost::add_edge(edges[i].first, edges[i].second, weights[i], ga);
	auto e2 = std::chrono::steady_clock::now();
	std::vector<edge_w> props(weights.size());
	for (size_t i = 0; i < weights.size(); i++)
		props[i].weight = weights[i];
	csr_graph gc(boost::edges_are_unsorted_multi_pass, edges.begin(), edges.end(),
		     props.begin(), nv);
	auto e3 = std::chrono::steady_clock::now();
	std::printf("build %s seconds %.6f\n", names[0],
		    std::chrono::duration<double>(e2 - e0).count());
	std::printf("build %s seconds %.6f\n", names[1],
		    std::chrono::duration<double>((e1 - e0) + (e3 - e2)).count());
	std::vector<double> qa(probs.size(), 1e300), qc(probs.size(), 1e300);
	for (int r = 0; r < (reps < 1 ? 1 : reps); r++) {
		sums[0] = run_all(ga, boost::get(boost::edge_weight, ga), m, probs, qa);
		sums[1] = run_all(gc, boost::get(&edge_w::weight, gc), m, probs, qc);
	}
	best[0] = best[1] = 0;
	for (size_t q = 0; q < probs.size(); q++) {
		best[0] += qa[q];
		best[1] += qc[q];
	}
	for (int k = 0; k < 2; k++)
		std::printf("result %s queries %zu cost %.6f seconds %.6f\n", names[k],
			    probs.size(), sums[k], best[k]);
	return 0;
}
