# SPDX-License-Identifier: MIT
"""networkx anchor for bench_astar (reference only, pure Python).

Reads a Moving AI .map and .scen, builds an undirected networkx Graph over
the passable cells with the 8-connected no-corner-cutting edges (weights 1
and sqrt(2)), and times nx.astar_path_length with the octile heuristic on
the first K scenarios.

usage: python3 astar_networkx.py MAP SCEN [K]
output: "result networkx queries N cost S seconds T" (S = summed path cost);
exit 3 when networkx is not installed.
"""
import math
import sys
import time

try:
    import networkx as nx
except ImportError:
    print("networkx missing", file=sys.stderr)
    sys.exit(3)


def read_map(path):
    with open(path) as f:
        lines = [ln.rstrip("\r\n") for ln in f]
    h = w = None
    i = 0
    while lines[i] != "map":
        key, _, val = lines[i].partition(" ")
        if key == "height":
            h = int(val)
        elif key == "width":
            w = int(val)
        i += 1
    rows = lines[i + 1:i + 1 + h]
    return w, h, [[c in ".GS" for c in row[:w]] for row in rows]


def read_scen(path):
    out = []
    with open(path) as f:
        next(f)
        for ln in f:
            p = ln.rstrip("\r\n").split("\t")
            if len(p) == 9:
                out.append((int(p[4]), int(p[5]), int(p[6]), int(p[7]), float(p[8])))
    return out


def build(w, h, free):
    g = nx.Graph()
    r2 = math.sqrt(2.0)
    for y in range(h):
        for x in range(w):
            if not free[y][x]:
                continue
            g.add_node((x, y))
            for dx, dy in ((1, 0), (0, 1), (1, 1), (-1, 1)):
                vx, vy = x + dx, y + dy
                if not (0 <= vx < w and 0 <= vy < h and free[vy][vx]):
                    continue
                if dx and dy and not (free[y][vx] and free[vy][x]):
                    continue
                g.add_edge((x, y), (vx, vy), weight=r2 if dx and dy else 1.0)
    return g


def octile(a, b):
    ax, ay = abs(a[0] - b[0]), abs(a[1] - b[1])
    return max(ax, ay) + (math.sqrt(2.0) - 1) * min(ax, ay)


def main():
    if len(sys.argv) < 3:
        print("usage: astar_networkx.py MAP SCEN [K]", file=sys.stderr)
        return 2
    w, h, free = read_map(sys.argv[1])
    probs = read_scen(sys.argv[2])
    if len(sys.argv) > 3:
        probs = probs[:int(sys.argv[3])]
    g = build(w, h, free)
    total = 0.0
    t0 = time.perf_counter()
    for sx, sy, gx, gy, _ in probs:
        total += nx.astar_path_length(g, (sx, sy), (gx, gy), heuristic=octile,
                                      weight="weight")
    dt = time.perf_counter() - t0
    print("result networkx queries %d cost %.6f seconds %.6f" % (len(probs), total, dt))
    return 0


if __name__ == "__main__":
    sys.exit(main())
