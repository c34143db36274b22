# SPDX-License-Identifier: MIT
# lmms-eval hooks for a proxima export (proxima export --format lmms-eval).
# proxima.yaml names them with !function utils.NAME, which lmms-eval imports
# from this file next to the yaml. Frames are read relative to this folder,
# so the folder can be moved or copied as it is. Scoring follows EgoProx:
# multiple choice takes the last "The correct answer is X" (X in A-E, the
# rule of parse_answer_letter in EgoProx's inference scripts) and compares it
# with the key; chains of actions get Act-Acc, Rel-Acc-S and Rel-Acc-L as
# EgoProx's evaluate.py computes them (answers that do not parse with the
# key's node count leave the denominator). The lenient and strict figures
# are proxima's own, under their own names. docs/export.md in proxima.
import json
import os
import re

BASE = os.path.dirname(os.path.abspath(__file__))

_LETTER = re.compile(
    r"(?:Therefore,\s*)?The\s+correct\s+answer\s+is\s*<?\s*([A-E])\s*>?\s*[\.\)]?", re.IGNORECASE)
_BARE = re.compile(r"\s*<?\s*([A-Z])\s*>?\s*[\.\)]?\s*")
_NEAR = {"A": "AEH", "B": "BFG", "C": "CEF", "D": "DGH",
         "E": "EAC", "F": "FBC", "G": "GBD", "H": "HAD"}

# the metrics proxima.yaml lists (proxima export appends the list of this export)
METRICS = []


def proxima_doc_to_visual(doc):
    """The frames as RGB images; a missing frame is an error, never skipped."""
    from PIL import Image

    paths = [os.path.join(BASE, p) for p in doc["frames"]]
    missing = [p for p in paths if not os.path.isfile(p)]
    if missing:
        raise FileNotFoundError(
            "proxima: %d of %d frames of %s are missing, e.g. %s (export with --frames N)"
            % (len(missing), len(paths), doc["id"], missing[0]))
    return [Image.open(p).convert("RGB") for p in paths]


def proxima_doc_to_text(doc, lmms_eval_specific_kwargs=None):
    kw = lmms_eval_specific_kwargs or {}
    pre = kw.get("pre_prompt", "")
    if doc.get("correct_answer"):
        parts = [pre, doc.get("instruction", ""), doc["question"]]
    else:
        parts = [pre, doc["question"], "\n".join(doc["options"]), kw.get("post_prompt", "")]
    return "\n".join(p for p in parts if p)


def egoprox_letter(text):
    """EgoProx's parse_answer_letter: the last match's letter, upper-cased, or None."""
    if not text:
        return None
    found = list(_LETTER.finditer(text))
    return found[-1].group(1).upper() if found else None


def lenient_letter(text, noptions):
    """proxima's lenient parse (its own figure): range to the last option, bare letters."""
    last = chr(ord("A") + max(5, min(noptions, 26)) - 1)
    pattern = re.compile(_LETTER.pattern.replace("[A-E]", "[A-%s]" % last), re.IGNORECASE)
    found = list(pattern.finditer(text or ""))
    if found:
        return found[-1].group(1).upper()
    m = _BARE.fullmatch(text or "")
    return m.group(1) if m and m.group(1) <= last else None


def _node(tok):
    if isinstance(tok, bool):
        return None
    if isinstance(tok, (int, float)):
        return int(tok)
    if isinstance(tok, str) and tok.strip():
        m = re.search(r"(\d+)", tok.strip())
        return int(m.group(1)) if m else None
    return None


def _letters(obj):
    items = [obj] if isinstance(obj, str) else obj if isinstance(obj, list) else []
    out = []
    for x in items:
        if isinstance(x, str):
            out += re.findall(r"[A-H]", x.upper())
    return out


def parse_chain(text, n_nodes, n_edges):
    """evaluate.py's parse_llm_answer: (nodes, edges) or None."""
    if not isinstance(text, str) or not text.strip():
        return None
    s = text.strip()
    try:
        v = json.loads(s)
        if not (isinstance(v, list) and len(v) == 2 and isinstance(v[0], list)):
            raise ValueError("not [[nodes], [edges]]")
        nodes = [_node(x) for x in v[0]]
        if None in nodes or len(nodes) != n_nodes:
            raise ValueError("nodes")
        return nodes, _letters(v[1])[:n_edges]
    except Exception:
        m = re.search(r"\[\s*\[\s*([^\]]+?)\s*\]\s*,", s)
        if not m:
            return None
        nodes = [int(x) for x in re.findall(r"\d+", m.group(1))]
        if len(nodes) != n_nodes:
            return None
        return nodes, re.findall(r"[A-H]", s.upper())[:n_edges]


def _matching(cands, nodes):
    for c in cands:
        want = c.get("node", [])
        if isinstance(want, list) and len(want) == len(nodes):
            try:
                if all(int(a) == int(b) for a, b in zip(want, nodes)):
                    return c
            except Exception:
                continue
    return None


def _edges(key, pred, near):
    if not key:
        return 1.0
    hits = 0
    for k, p in zip(key, pred):
        k, p = str(k).upper(), str(p).upper()
        allowed = set(_NEAR[k]) if k in _NEAR else {k}
        if p == k or (near and p in allowed):
            hits += 1
    return hits / float(len(key))


def proxima_process_results(doc, results):
    pred = results[0] if results else ""
    rec = {"source": doc.get("source"), "question_type": doc["question_type"]}
    cands = doc.get("correct_answer")
    if cands:
        first = cands[0]
        got = parse_chain(pred, len(first["node"]), len(first["edge"]))
        hit = _matching(cands, got[0]) if got else None
        rec.update(kind="chain", parsed=got is not None, node_correct=hit is not None,
                   rel_s=_edges(hit["edge"], got[1], False) if hit else 0.0,
                   rel_l=_edges(hit["edge"], got[1], True) if hit else 0.0)
    else:
        rec.update(kind="mc", correct=egoprox_letter(pred) == doc["ground_truth"],
                   lenient=lenient_letter(pred, len(doc["options"])) == doc["ground_truth"])
    return {m: rec for m in METRICS}


def _mc(results, source=None):
    rs = [r for r in results if r["kind"] == "mc" and source in (None, r["source"])]
    return round(sum(r["correct"] for r in rs) / len(rs), 6) if rs else 0.0


def _chains(results):
    return [r for r in results if r["kind"] == "chain"]


def proxima_mc_accuracy(results):
    return _mc(results)


def proxima_mc_lenient_accuracy(results):
    rs = [r for r in results if r["kind"] == "mc"]
    return round(sum(r["lenient"] for r in rs) / len(rs), 6) if rs else 0.0


def _source_metric(source):
    return lambda results: _mc(results, source)


proxima_intention_approx = _source_metric("Intention_Approx")
proxima_intention_relative = _source_metric("Intention_Relative")
proxima_exploration_approx = _source_metric("Exploration_Approx")
proxima_exploration_relative = _source_metric("Exploration_Relative")
proxima_exploitation_approx = _source_metric("Exploitation_Approx")
proxima_exploitation_relative = _source_metric("Exploitation_Relative")


def proxima_act_acc(results):
    parsed = [r for r in _chains(results) if r["parsed"]]
    return round(sum(r["node_correct"] for r in parsed) / len(parsed), 6) if parsed else 0.0


def _rel(results, key):
    ok = [r for r in _chains(results) if r["node_correct"]]
    return round(sum(r[key] for r in ok) / len(ok), 6) if ok else 0.0


def proxima_rel_acc_s(results):
    return _rel(results, "rel_s")


def proxima_rel_acc_l(results):
    return _rel(results, "rel_l")


def proxima_strict_act_acc(results):
    rs = _chains(results)
    return round(sum(r["node_correct"] for r in rs) / len(rs), 6) if rs else 0.0
