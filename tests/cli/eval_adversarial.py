# SPDX-License-Identifier: MIT
"""Adversarial answers for proxima eval, compared with egoprox_ref.py.

    eval_adversarial.py make DIR SEED N
        writes DIR/key/egoprox.json + DIR/key/manifest.json (an EgoProx key
        of N multiple-choice and N/4 chain samples), DIR/responses.jsonl (raw
        model texts for it) and DIR/results.json (an EgoProx results file:
        the key with "answer" values of every JSON type)
    eval_adversarial.py respond EGOPROX.json SEED OUT.jsonl
        adversarial raw responses for the samples of an existing EgoProx key
    eval_adversarial.py compare PROXIMA_JSON REF_JSON
        exits 0 when proxima's "egoprox" figures equal the reference's,
        printing the differences otherwise

The texts mix the forms on which a lenient parser and EgoProx's rules part
ways: case, Unicode white space, U+017F and U+0130 folding, letters past E,
several matches, bare letters, NUL and lone surrogates; chain answers with
raw control characters inside JSON strings, leading zeros, NaN, 1e400,
trailing text, non-ASCII digits, booleans and wrong lengths.
"""
import json
import os
import random
import sys

MC_SOURCES = ("Intention_Approx", "Intention_Relative", "Exploration_Approx",
              "Exploration_Relative", "Exploitation_Approx", "Exploitation_Relative")
SPACES = [" ", "  ", "\t", "\n", "\u00a0", "\u2003", "\u3000", "\u0085", "\u001c", "\u200b", ""]
PHRASES = ["The correct answer is", "the correct answer is", "THE CORRECT ANSWER IS",
           "The correct answer iſ", "The correct answer \u0130s", "The correct answer \u0131s",
           "Therefore, The correct answer is", "The  correct\nanswer\tis", "Thecorrect answer is",
           "The correct answers is", "Correct answer is", "The correct answer:"]
WRAP = ["{}", "<{}>", "< {} >", "{}.", "{})", "({})", "**{}**", "{} ", "'{}'", "\u00ab{}\u00bb"]


def mc_text(rnd, letters):
    """One free-text response."""
    kind = rnd.random()
    if kind < 0.12:
        return rnd.choice(["A", "B", " C ", "d", "<E>", "B.", "F", "H", "", " ", "Answer: B",
                           "\uff22", "B\u0000", "E)", "None of them"])
    parts = []
    for _ in range(rnd.choice([1, 1, 2, 3])):
        letter = rnd.choice(letters + ["F", "G", "H", "a", "e", "Z", "Because", "\uff23"])
        parts.append(rnd.choice(["I think ", "So ", "", "Wait. ", "At first: ", "\u0000 "]) +
                     rnd.choice(PHRASES) + rnd.choice(SPACES) +
                     rnd.choice(WRAP).format(letter) + rnd.choice(["", ".", "\n", " and more"]))
    text = rnd.choice(["", "Let me look. ", "\ud800 "]) + " ".join(parts)
    if rnd.random() < 0.1:
        text = text.replace(" ", rnd.choice(SPACES))
    return text


def chain_text(rnd, cand):
    """One chain response for a key whose first chain is cand."""
    nodes, edges = list(cand["node"]), list(cand["edge"])
    if rnd.random() < 0.4:
        rnd.shuffle(nodes)
    if rnd.random() < 0.15:
        nodes = nodes[:-1]
    if rnd.random() < 0.1:
        nodes = nodes + [7]
    if rnd.random() < 0.5:
        edges = [rnd.choice("ABCDEFGH") for _ in edges]
    style = rnd.randrange(20)
    n = ",".join(str(x) for x in nodes)
    e = ",".join('"%s"' % x for x in edges)
    if style == 0:
        return "[[%s],[%s]]" % (n, e)
    if style == 1:   # a raw TAB inside an edge string: json.loads fails, the fallback reads it
        return '[[%s],["%s\t"%s]]' % (n, edges[0], "".join("," + '"%s"' % x for x in edges[1:]))
    if style == 2:   # a raw newline between tokens is fine, inside a string is not
        return "[[%s],\n[%s]]" % (n, e)
    if style == 3:
        return '[[%s],["%s\nX"]]' % (n, "".join(edges))
    if style == 4:   # leading zero
        return "[[0%s],[%s]]" % (n, e)
    if style == 5:   # floats, NaN, overflow
        return "[[%s],[%s]]" % (",".join(rnd.choice(["%d.7" % x, "NaN", "1e400", "%de0" % x])
                                         for x in nodes), e)
    if style == 6:   # trailing text after valid JSON
        return "[[%s],[%s]] The plan above." % (n, e)
    if style == 7:   # Arabic-Indic digits
        return "[[%s],[%s]]" % (",".join(chr(0x660 + x % 10) for x in nodes), e)
    if style == 8:   # strings as nodes
        return "[[%s],[%s]]" % (",".join('"%d (step)"' % x for x in nodes), e)
    if style == 9:   # booleans
        return "[[true,%s],[%s]]" % (n, e)
    if style == 10:  # edge words with letters in them
        return '[[%s],["left (B)", "front-right (E)", "ﬀ", "\u1e96"]]' % n
    if style == 11:  # NBSP between tokens: not JSON white space
        return "[[%s],\u00a0[%s]]" % (n, e)
    if style == 12:
        return "Plan: [[ %s ] , [%s]]" % (n, e)
    if style == 13:
        return rnd.choice(["", "   ", "I am not sure.", "[[]]", "[[ ],[]]", "null", "[1,2]"])
    if style == 14:  # escapes, a valid \t inside an edge string
        return '[[%s],["%s\\t", %s]]' % (n, edges[0], e)
    # node strings that carry letters: the fallback takes those letters first,
    # so these tell Python's json.loads from a lenient parser
    sn = ",".join('"%d %s"' % (x, rnd.choice("abcdefgh")) for x in nodes)
    if style == 16:  # a raw TAB inside an edge string
        return '[[%s],["%s\t"%s]]' % (sn, edges[0], "".join(',"%s"' % x for x in edges[1:]))
    if style == 17:  # trailing text
        return "[[%s],[%s]] ok" % (sn, e)
    if style == 18:  # a leading zero in a number node
        return "[[0%d,%s],[%s]]" % (nodes[0], ",".join('"%d %s"' % (x, rnd.choice("abcdefgh")) for x in nodes[1:]), e)
    if style == 19:  # a trailing comma
        return "[[%s],[%s,]]" % (sn, e)
    return "  \u3000[[%s], [%s]]\n" % (n, e)


def make(out, seed, count):
    rnd = random.Random(seed)
    key, responses = [], []
    for i in range(count):
        nopt = rnd.choice([5, 5, 5, 8])
        letters = [chr(65 + k) for k in range(nopt)]
        opts = "".join("\n%s. option %d" % (x, k) for k, x in enumerate(letters))
        sid = "mc%04d" % i
        key.append({"id": sid, "source": rnd.choice(MC_SOURCES),
                    "data": [{"role": "user", "content": [
                        {"type": "text", "text": "Question %d?%s\nEnd with the letter." % (i, opts)}]}],
                    "correct_option": rnd.choice(letters)})
        responses.append({"id": sid, "response": mc_text(rnd, letters[:5])})
    for i in range(max(count // 4, 1)):
        k = rnd.choice([3, 4, 5])
        first = rnd.sample(range(1, 9), k)
        other = list(first)
        other[0], other[1] = other[1], other[0]
        cands = [{"node": first, "edge": [rnd.choice("ABCDEFGH") for _ in range(k - 1)]},
                 {"node": other, "edge": [rnd.choice("ABCDEFGH") for _ in range(k - 1)]}]
        sid = "ch%04d" % i
        key.append({"id": sid, "source": "Chain of Actions", "system_prompt": "Plan.",
                    "user_prompt": "Goal? " + "; ".join("%d. act %d" % (j, j) for j in range(1, 9)),
                    "image": [], "correct_answer": cands})
        pick = cands[rnd.randrange(2)]
        responses.append({"id": sid, "response": None if rnd.random() < 0.03 else chain_text(rnd, pick)})
    os.makedirs(os.path.join(out, "key"), exist_ok=True)
    with open(os.path.join(out, "key", "egoprox.json"), "w", encoding="utf-8") as f:
        json.dump(key, f, ensure_ascii=False)
    with open(os.path.join(out, "key", "manifest.json"), "w", encoding="utf-8") as f:
        json.dump({"format": "egoprox"}, f)
    with open(os.path.join(out, "responses.jsonl"), "w", encoding="utf-8") as f:
        for r in responses:
            lone = any(0xd800 <= ord(c) < 0xe000 for c in r["response"] or "")
            f.write(json.dumps(r, ensure_ascii=lone or rnd.random() < 0.5) + "\n")
    # a results file: answers of every type, some keys that are not letters
    values = ["A", "B", "C", "D", "E", "b", " B", "B.", "<C>", None, 1, 1.0, True, False, 0,
              ["B"], {"B": 1}, "B\u0000", "\uff22", "", "The correct answer is B"]
    results = []
    for smp in key:
        r = dict(smp)
        if smp["source"] == "Chain of Actions":
            pick = smp["correct_answer"][rnd.randrange(2)]
            r["answer"] = rnd.choice([chain_text(rnd, pick), None, [[1, 2, 3], ["A", "B"]], 5])
        else:
            roll = rnd.random()
            if roll < 0.05:
                r["correct_option"] = rnd.choice([1, True, None, "b"])
            elif roll < 0.08:
                del r["correct_option"]
            if rnd.random() < 0.4:
                r["answer"] = r.get("correct_option")
            elif rnd.random() < 0.9:
                r["answer"] = rnd.choice(values)
        results.append(r)
    with open(os.path.join(out, "results.json"), "w", encoding="utf-8") as f:
        json.dump(results, f, ensure_ascii=False, indent=1)


def respond(key_path, seed, out):
    rnd = random.Random(seed)
    key = json.load(open(key_path, encoding="utf-8"))
    with open(out, "w", encoding="utf-8") as f:
        for smp in key:
            if smp["source"] == "Chain of Actions":
                text = chain_text(rnd, smp["correct_answer"][rnd.randrange(len(smp["correct_answer"]))])
            else:
                right = smp["correct_option"]
                text = mc_text(rnd, [right, right, "A", "B", "C", "D", "E"])
            f.write(json.dumps({"id": smp["id"], "response": text}) + "\n")


def compare(proxima_path, ref_path):
    with open(proxima_path, encoding="utf-8") as f:
        got = json.load(f)["egoprox"]
    with open(ref_path, encoding="utf-8") as f:
        want = json.load(f)
    bad = []
    for src, w in sorted(want.items()):
        g = got.get(src)
        if g is None:
            bad.append("%s: missing in proxima's output" % src)
            continue
        if "total" in w:
            pair = ((g["n"], g["correct"]), (w["total"], w["correct"]))
        else:
            pair = ((g["evaluated"], g["node_correct"], g["act_acc"], g["rel_acc_s"], g["rel_acc_l"]),
                    (w["evaluated"], w["node_correct"], w["act_acc"], w["rel_acc_s"], w["rel_acc_l"]))
        if any(abs(a - b) > 1e-12 for a, b in zip(*pair)):
            bad.append("%s: proxima %s, reference %s" % (src, pair[0], pair[1]))
    for line in bad:
        print(line)
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "make":
        make(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
        sys.exit(0)
    if len(sys.argv) == 5 and sys.argv[1] == "respond":
        respond(sys.argv[2], int(sys.argv[3]), sys.argv[4])
        sys.exit(0)
    if len(sys.argv) == 4 and sys.argv[1] == "compare":
        sys.exit(compare(sys.argv[2], sys.argv[3]))
    sys.stderr.write(__doc__)
    sys.exit(2)
