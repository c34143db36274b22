# SPDX-License-Identifier: MIT
"""A second implementation of EgoProx's scoring, for the tests.

Written from the rules of EgoProx's evaluate.py (lijinzhao30/Egoprox:
evaluate.py main(), eval_chain_of_actions(), parse_llm_answer(),
_parse_node_token(), _extract_edges_from_any(), find_matching_gt(),
strict_edge_accuracy(), relaxed_edge_accuracy()) and of parse_answer_letter()
in its inference/infer_gpt.py and inference/infer_qwen.py, in Python, so that
every Python behaviour (json.loads, str.strip, str.upper, re with Unicode
classes) is Python's own. It is the independent check of proxima eval.

    egoprox_ref.py results RESULTS.json
        the figures evaluate.py prints for a results file, as JSON
    egoprox_ref.py pipeline EGOPROX.json PREDICTIONS.jsonl
        parse_answer_letter (MC) or strip (chains) on each line's "response",
        as the inference scripts store answers, then the same figures

Output: {"SOURCE": {"total": n, "correct": c} ... , "Chain of Actions":
{"evaluated", "node_correct", "act_acc", "rel_acc_s", "rel_acc_l"}}.
"""
import json
import re
import sys

MC_SOURCES = ("Intention_Approx", "Intention_Relative", "Exploration_Approx",
              "Exploration_Relative", "Exploitation_Approx", "Exploitation_Relative")
CHAIN = "Chain of Actions"

# the rule of parse_answer_letter: last match, IGNORECASE, letter upper-cased
LETTER = re.compile(r"(?:Therefore,\s*)?The\s+correct\s+answer\s+is\s*<?\s*([A-E])\s*>?\s*[\.\)]?",
                    re.IGNORECASE)

NEIGHBOURS = {"A": "AEH", "B": "BFG", "C": "CEF", "D": "DGH",
              "E": "EAC", "F": "FBC", "G": "GBD", "H": "HAD"}


def letter_of(text):
    if not text:
        return None
    found = [m.group(1) for m in LETTER.finditer(text)]
    return found[-1].upper() if found else None


def node_value(tok):
    """A node token's int, or None where evaluate.py gives up on it."""
    if isinstance(tok, bool):
        return None
    if isinstance(tok, (int, float)):
        return int(tok)  # raises for nan and inf, like evaluate.py
    if isinstance(tok, str):
        t = tok.strip()
        if t == "":
            return None
        run = re.search(r"\d+", t)
        return int(run.group(0)) if run else None
    return None


def letters_in(obj):
    if isinstance(obj, str):
        return re.findall("[A-H]", obj.upper())
    if isinstance(obj, list):
        got = []
        for x in obj:
            if isinstance(x, str):
                got.extend(re.findall("[A-H]", x.upper()))
        return got
    return []


def parse_chain(raw, n_nodes, n_edges):
    if not isinstance(raw, str):
        return None
    text = raw.strip()
    if text == "":
        return None
    try:
        value = json.loads(text)
        if not (isinstance(value, list) and len(value) == 2 and isinstance(value[0], list)):
            raise ValueError("shape")
        nodes = []
        for tok in value[0]:
            v = node_value(tok)
            if v is None:
                raise ValueError("token")
            nodes.append(v)
        if len(nodes) != n_nodes:
            raise ValueError("length")
        return nodes, letters_in(value[1])[:n_edges]
    except Exception:
        pass
    m = re.search(r"\[\s*\[\s*([^\]]+?)\s*\]\s*,", text)
    if not m:
        return None
    nodes = [int(x) for x in re.findall(r"\d+", m.group(1))]
    if len(nodes) != n_nodes:
        return None
    return nodes, re.findall("[A-H]", text.upper())[:n_edges]


def first_match(cands, nodes):
    for c in cands:
        want = c.get("node", [])
        if not isinstance(want, list) or len(want) != len(nodes):
            continue
        try:
            if all(int(a) == int(b) for a, b in zip(want, nodes)):
                return c
        except Exception:
            continue
    return None


def edge_score(key, pred, lenient):
    if not key:
        return 1.0
    hits = 0
    for i in range(min(len(key), len(pred))):
        k, p = str(key[i]).upper(), str(pred[i]).upper()
        allowed = set(NEIGHBOURS[k]) if k in NEIGHBOURS else {k}
        if p == k or (lenient and p in allowed):
            hits += 1
    return hits / float(len(key))


def chain_figures(samples):
    evaluated = node_ok = 0
    s_sum = l_sum = 0.0
    for smp in samples:
        cands = smp.get("correct_answer", [])
        if not isinstance(cands, list) or not cands or not isinstance(cands[0], dict):
            continue
        n0, e0 = cands[0].get("node", []), cands[0].get("edge", [])
        if not isinstance(n0, list) or not isinstance(e0, list) or not n0 or not e0:
            continue
        got = parse_chain(smp.get("answer"), len(n0), len(e0))
        if got is None:
            continue
        evaluated += 1
        hit = first_match(cands, got[0])
        if hit is None:
            continue
        node_ok += 1
        key = hit.get("edge", [])
        key = [str(x).upper() for x in key] if isinstance(key, list) else []
        pred = [str(x).upper() for x in got[1]]
        s_sum += edge_score(key, pred, False)
        l_sum += edge_score(key, pred, True)
    return {"evaluated": evaluated, "node_correct": node_ok,
            "act_acc": node_ok / evaluated if evaluated else 0.0,
            "rel_acc_s": s_sum / node_ok if node_ok else 0.0,
            "rel_acc_l": l_sum / node_ok if node_ok else 0.0}


def figures(items):
    out = {s: {"total": 0, "correct": 0} for s in MC_SOURCES}
    chains = []
    for it in items:
        src = it.get("source")
        if src == CHAIN:
            chains.append(it)
        elif src in out:
            out[src]["total"] += 1
            ans = it.get("answer")
            if ans is not None and ans == it.get("correct_option"):
                out[src]["correct"] += 1
    if chains:
        out[CHAIN] = chain_figures(chains)
    return out


def main(argv):
    if len(argv) == 3 and argv[1] == "results":
        with open(argv[2], "r", encoding="utf-8") as f:
            items = json.load(f)
    elif len(argv) == 4 and argv[1] == "pipeline":
        with open(argv[2], "r", encoding="utf-8") as f:
            items = json.load(f)
        said = {}
        with open(argv[3], "r", encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    o = json.loads(line)
                    said[o["id"]] = o.get("response")
        for it in items:
            r = said.get(it["id"])
            if it.get("source") == CHAIN:
                it["answer"] = r.strip() if r else (None if r is None else "")
            else:
                it["answer"] = letter_of(r)
    else:
        sys.stderr.write(__doc__)
        return 2
    json.dump(figures(items), sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
