# SPDX-License-Identifier: MIT
"""Loads proxima exports the way the real harnesses load them.

The harnesses themselves cannot be installed here, so each check follows
their loading code rule by rule, citing the file and function each rule comes
from, with python3's standard library only (no PIL, no pandas: a stub PIL
reads JPEG headers, and the csv module reproduces pandas' read_csv).

    harness_check.py lmms DIR RESPONSES.jsonl   lmms-eval task folder; prints
                                                its aggregated metrics as JSON
    harness_check.py llava DIR                  llava.json
    harness_check.py vlmevalkit DIR EGOPROX.json
                                                Proxima.tsv with DIR as LMUData,
                                                read back against an egoprox export
    harness_check.py labelstudio DIR ROOT|URL   tasks.json + config.xml
Each exits non-zero with a message when a rule fails.
"""
import ast
import base64
import csv
import importlib.util
import json
import os
import re
import sys
import types
import urllib.parse
import urllib.request
import xml.etree.ElementTree as ET


def fail(msg):
    sys.stderr.write("harness_check: %s\n" % msg)
    sys.exit(1)


def jpeg_size(path):
    """Width and height from a JPEG's SOFn marker (what PIL's open reads first)."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:3] != b"\xff\xd8\xff":
        raise OSError("cannot identify image file %r" % path)
    i = 2
    while i + 9 < len(data):
        if data[i] != 0xFF:
            i += 1
            continue
        marker, seg = data[i + 1], int.from_bytes(data[i + 2:i + 4], "big")
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            return int.from_bytes(data[i + 7:i + 9], "big"), int.from_bytes(data[i + 5:i + 7], "big")
        i += 2 + seg
    raise OSError("no frame header in %r" % path)


def stub_pil():
    """A stand-in for PIL.Image: open() checks the file is a JPEG and knows its size."""
    class Img:
        def __init__(self, path):
            self.path = path
            self.size = jpeg_size(path)
            self.mode = "RGB"

        def convert(self, mode):
            self.mode = mode
            return self

        def __enter__(self):
            return self

        def __exit__(self, *a):
            return False

    image = types.ModuleType("PIL.Image")
    image.open = lambda p: Img(p)
    pil = types.ModuleType("PIL")
    pil.Image = image
    sys.modules["PIL"] = pil
    sys.modules["PIL.Image"] = image


# ------------------------------------------------------------ lmms-eval

def yaml_subset(path):
    """The keys this check needs from proxima.yaml: data_files.test, the
    !function hooks and the metric list (the yaml is written by proxima in
    a fixed, simple shape; PyYAML is not in the standard library)."""
    text = open(path, encoding="utf-8").read()
    m = re.search(r"^dataset_path: (\S+)$", text, re.M)
    files = re.search(r"^  data_files:\n    test: (.+)$", text, re.M)
    hooks = dict(re.findall(r"^(\w+): !function utils\.(\w+)$", text, re.M))
    metrics = re.findall(r"^  - metric: (\w+)\n    aggregation: !function utils\.(\w+)$", text, re.M)
    return m.group(1), files.group(1).strip().strip('"'), hooks, metrics


def lmms(d, responses_path):
    yaml_path = os.path.join(d, "proxima.yaml")
    builder, data_file, hooks, metrics = yaml_subset(yaml_path)
    # lmms_eval/utils.py _maybe_resolve_yaml_local_data_files: json builder, a relative
    # path that exists next to the yaml is made absolute against the yaml's folder
    if builder != "json":
        fail("dataset_path is %r, not the json builder" % builder)
    if os.path.isabs(data_file):
        fail("data_files is an absolute path: %s" % data_file)
    resolved = os.path.join(os.path.dirname(yaml_path), data_file)
    if not os.path.isfile(resolved):
        fail("data_files %r does not resolve next to the yaml" % data_file)
    # lmms_eval/utils.py import_function: utils.py next to the yaml, imported by path
    spec = importlib.util.spec_from_file_location("utils", os.path.join(d, "utils.py"))
    utils = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(utils)
    fns = {k: getattr(utils, v) for k, v in hooks.items()}
    aggs = {name: getattr(utils, fn) for name, fn in metrics}
    if sorted(aggs) != sorted(utils.METRICS):
        fail("the yaml's metrics %s are not utils.METRICS %s" % (sorted(aggs), utils.METRICS))
    # datasets' json builder: one document per line
    docs = [json.loads(l) for l in open(resolved, encoding="utf-8") if l.strip()]
    keys = set(docs[0])
    if any(set(x) != keys for x in docs):
        fail("documents do not all have the same fields (one schema for the json builder)")
    said = {}
    for line in open(responses_path, encoding="utf-8"):
        if line.strip():
            o = json.loads(line)
            said[o["id"]] = o["response"]
    kwargs = {"pre_prompt": "", "post_prompt": "Think step by step, then end your reply with "
              "\"The correct answer is <X>\", where X is the letter of the correct option."}
    per_metric = {name: [] for name in aggs}
    for doc in docs:
        frames = fns["doc_to_visual"](doc)
        if len(frames) != len(doc["frames"]) or any(f.mode != "RGB" for f in frames):
            fail("%s: doc_to_visual gave %d images for %d frames" % (doc["id"], len(frames), len(doc["frames"])))
        text = fns["doc_to_text"](doc, kwargs)
        if doc["question"] not in text:
            fail("%s: the prompt lacks the question" % doc["id"])
        if doc.get("correct_answer"):
            if "[[node_id_1" not in text:
                fail("%s: the chain prompt lacks the answer format" % doc["id"])
        elif not all(o in text for o in doc["options"]) or "The correct answer is <X>" not in text:
            fail("%s: the MC prompt lacks its options or instruction" % doc["id"])
        # lmms_eval: process_results(doc, [generated text]) -> {metric: value}
        out = fns["process_results"](doc, [said.get(doc["id"], "")])
        if sorted(out) != sorted(aggs):
            fail("%s: process_results gives %s, the yaml lists %s" % (doc["id"], sorted(out), sorted(aggs)))
        for name, v in out.items():
            per_metric[name].append(v)
    # a missing frame must stop the run, as VSI-Bench's doc_to_visual raises
    victim = docs[0]
    path = os.path.join(d, victim["frames"][0])
    os.rename(path, path + ".gone")
    try:
        fns["doc_to_visual"](victim)
        fail("doc_to_visual went on with a missing frame")
    except FileNotFoundError as e:
        if victim["id"] not in str(e):
            fail("the missing-frame error does not name the QA: %s" % e)
    finally:
        os.rename(path + ".gone", path)
    json.dump({name: aggs[name](vals) for name, vals in per_metric.items()}, sys.stdout, sort_keys=True)
    sys.stdout.write("\n")


# ------------------------------------------------------------ LLaVA-NeXT

def llava(d):
    # llava/train/train.py LazySupervisedDataset.__init__: json.load of data_path
    data = json.load(open(os.path.join(d, "llava.json"), encoding="utf-8"))
    for s in data:
        conv = s["conversations"]
        # modality_lengths: every sample must have words; "image" in sample marks it multimodal
        if sum(len(c["value"].split()) for c in conv) <= 0:
            fail("%s: empty conversation" % s.get("id"))
        if "video" in s:
            fail("%s: a video entry is read with decord as one video file" % s["id"])
        files = s["image"]
        if not isinstance(files, list) or not files:
            fail("%s: image is not a list of frames" % s["id"])
        # _get_item -> process_image: Image.open(os.path.join(image_folder, image_file))
        for f in files:
            jpeg_size(os.path.join(d, f))
        # preprocess_multimodal leaves several <image> tokens where they are; the model
        # (llava_arch.py prepare_inputs_labels_for_multimodal) takes one image per token
        n = len(re.findall("<image>", conv[0]["value"]))
        if n != len(files) or any("<image>" in c["value"] for c in conv[1:]):
            fail("%s: %d <image> tokens for %d images" % (s["id"], n, len(files)))
        if conv[0]["from"] != "human" or conv[1]["from"] != "gpt":
            fail("%s: turns are not human then gpt" % s["id"])
    print("llava: %d samples, %d images" % (len(data), sum(len(s["image"]) for s in data)))


# ------------------------------------------------------------ VLMEvalKit

# pandas' default na_values (pandas/_libs/parsers.pyx STR_NA_VALUES), which
# vlmeval/smp/file.py load() keeps: it reads a TSV with pd.read_csv(f, sep='\t')
PANDAS_NA = {"", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND",
             "1.#QNAN", "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null"}


def read_tsv(path, keep_default_na):
    """pandas.read_csv(path, sep='\\t') with the csv module: QUOTE_MINIMAL with
    doubled quotes, the first row as the header; keep_default_na=False keeps
    every cell as its text, True turns PANDAS_NA cells into None."""
    with open(path, encoding="utf-8", newline="") as f:
        rows = list(csv.reader(f, delimiter="\t", quotechar='"', doublequote=True, strict=True))
    head, body = rows[0], rows[1:]
    out = []
    for r in body:
        if len(r) != len(head):
            fail("%s: a row has %d fields for %d columns" % (path, len(r), len(head)))
        out.append({h: (None if keep_default_na and v in PANDAS_NA else v) for h, v in zip(head, r)})
    return head, out


def toliststr(s):
    # vlmeval/smp/misc.py toliststr: a "[...]" string is evaluated as a Python list
    if isinstance(s, str) and len(s) > 1 and s[0] == "[" and s[-1] == "]":
        return [str(x) for x in ast.literal_eval(s)]
    return [s]


def vlmevalkit(d, key_path):
    lmu = d  # LMUDataRoot(): $LMUData, here the export folder
    name = "Proxima"
    tsv = os.path.join(lmu, name + ".tsv")
    img_root = os.path.join(lmu, "images", name)  # ImageBaseDataset.__init__: ROOT/images/NAME
    head, exact = read_tsv(tsv, False)
    _, rows = read_tsv(tsv, True)
    key = {x["id"]: x for x in json.load(open(key_path, encoding="utf-8"))}
    for col in ("index", "image", "image_path", "question", "A", "B", "answer", "category"):
        if col not in head:
            fail("no %s column" % col)
    # build_dataset: 'A' and 'B' and an image column make it a CustomMCQDataset
    for raw, row in zip(exact, rows):
        qid = raw["qa_id"]
        # ImageBaseDataset.__init__: a NaN image drops the row; <= 64 characters is an index
        if row["image"] is None or len(row["image"]) <= 64:
            fail("%s: no image, or one VLMEvalKit would take for a row index" % qid)
        images, paths = toliststr(row["image"]), toliststr(row["image_path"])
        if len(images) != len(paths):
            fail("%s: %d images for %d paths" % (qid, len(images), len(paths)))
        # dump_image: decode into img_root/image_path unless read_ok() already
        for b64, p in zip(images, paths):
            target = os.path.join(img_root, p)
            jpeg_size(target)
            if base64.b64decode(b64, validate=True) != open(target, "rb").read():
                fail("%s: the base64 image differs from %s" % (qid, target))
        # ImageMCQDataset.build_prompt: options A.. that are not NaN, in order
        options = [row[c] for c in head if len(c) == 1 and c.isupper() and row[c] is not None]
        sample = key[qid]
        text = sample["data"][0]["content"][-1]["text"]
        want = re.findall(r"^[A-Z]\. (.*)$", text, re.M)
        if options != want:
            fail("%s: options read back %s, exported %s" % (qid, options, want))
        if raw["question"] not in text or row["answer"] != sample["correct_option"]:
            fail("%s: question or answer does not read back" % qid)
        if any(v is None for h, v in row.items() if h in ("question", "answer", "category")):
            fail("%s: a text cell reads as NaN" % qid)
    print("vlmevalkit: %d rows, images under %s" % (len(rows), img_root))


# ------------------------------------------------------------ Label Studio

def labelstudio(d, where):
    cfg = ET.parse(os.path.join(d, "config.xml")).getroot()
    tasks = json.load(open(os.path.join(d, "tasks.json"), encoding="utf-8"))
    # every $field the config uses must be in every task's data
    fields = set()
    for el in cfg.iter():
        for v in el.attrib.values():
            fields.update(re.findall(r"\$(\w+)", v))
    video = [el for el in cfg.iter("Video")]
    choices = [el for el in cfg.iter("Choices")]
    if len(video) != 1 or video[0].get("value") != "$video" or video[0].get("frameRate") != "$fps":
        fail("config: one <Video value=\"$video\" frameRate=\"$fps\"> expected")
    if len(choices) != 1 or choices[0].get("toName") != video[0].get("name") or \
            choices[0].get("value") != "$options":
        fail("config: <Choices> must name the video and load $options")
    for t in tasks:
        data = t["data"]
        missing = fields - set(data)
        if missing:
            fail("%s: task data lacks %s" % (data["qa_id"], sorted(missing)))
        if not all(isinstance(o, dict) and set(o) == {"value"} for o in data["options"]):
            fail("%s: dynamic choices must be a list of {\"value\"}" % data["qa_id"])
        url, _, frag = data["video"].partition("#")
        m = re.fullmatch(r"t=([0-9.]+),([0-9.]+)", frag)
        if not m or abs(float(m.group(1)) - data["clip_start_s"]) > 1e-3 or \
                abs(float(m.group(2)) - data["clip_end_s"]) > 1e-3:
            fail("%s: the URL does not open at the clip (%s)" % (data["qa_id"], data["video"]))
        if where.startswith("http"):
            # proxima review serve's /media/<id> route, fetched as the browser would
            want = where.rstrip("/") + "/media/" + data["qa_id"]
            if url != want:
                fail("%s: %s is not %s" % (data["qa_id"], url, want))
            req = urllib.request.Request(url, headers={"Range": "bytes=0-99"})
            with urllib.request.urlopen(req, timeout=10) as r:
                if r.status != 206 or len(r.read()) != 100:
                    fail("%s: the media route did not serve the range" % data["qa_id"])
        else:
            # label_studio/core/views.py localfiles_data: d = request.GET['d'] (query
            # decoding), normpath, lstrip('/'), joined to LOCAL_FILES_DOCUMENT_ROOT
            parts = urllib.parse.urlsplit(url)
            if parts.path != "/data/local-files/":
                fail("%s: %s is not the local-files route" % (data["qa_id"], url))
            rel = urllib.parse.parse_qs(parts.query)["d"][0]
            full = os.path.join(where, os.path.normpath(rel).lstrip("/"))
            if os.path.isabs(rel) or not os.path.isfile(full):
                fail("%s: d=%r does not name a file under %s" % (data["qa_id"], rel, where))
    print("labelstudio: %d tasks, fields %s" % (len(tasks), sorted(fields)))


if __name__ == "__main__":
    a = sys.argv
    if len(a) == 4 and a[1] == "lmms":
        stub_pil()
        lmms(a[2], a[3])
    elif len(a) == 3 and a[1] == "llava":
        llava(a[2])
    elif len(a) == 4 and a[1] == "vlmevalkit":
        vlmevalkit(a[2], a[3])
    elif len(a) == 4 and a[1] == "labelstudio":
        labelstudio(a[2], a[3])
    else:
        sys.stderr.write(__doc__)
        sys.exit(2)
